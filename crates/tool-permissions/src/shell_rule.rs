//! Bash rule contents (`Bash(git push:*)`, `Bash(rm *)`, `Bash(npm test)`) and how they match
//! the words of a unit. The units themselves come from `tool_shell::analyze`.

use regex::Regex;

/// What a rule says of the words after its literal ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Any words (`git log:*`, `git log *`).
    Anything,
    /// None: the rule is the whole command.
    Nothing,
    /// Words that match its wildcards (`python3 *.py`).
    Constrained,
}

/// A compiled Bash rule content.
#[derive(Debug, Clone)]
pub enum ShellPattern {
    /// `prefix:*`: the command is `prefix` or starts with `prefix ` (a word boundary).
    Prefix(String),
    /// Contains `*`: the whole command must match; a trailing ` *` that is the only wildcard is
    /// optional (`git *` matches `git`). Keeps the literal words before the first word with a
    /// wildcard (`git`, `log` for `git log *`; none for `git*`), and whether those words
    /// followed by anything is all it says (`git log *`, not `python3 *.py`).
    Wildcard(Regex, Vec<String>, bool),
    /// Anything else: the command exactly.
    Exact(String),
}

impl ShellPattern {
    /// Compile a rule content.
    pub fn parse(content: &str) -> Result<Self, String> {
        let c = content.trim();
        if c.is_empty() {
            return Err("the command pattern is empty".into());
        }
        if let Some(prefix) = c.strip_suffix(":*") {
            if prefix.contains('*') {
                return Err("`:*` must be the only wildcard of a prefix rule".into());
            }
            return Ok(ShellPattern::Prefix(prefix.trim_end().to_owned()));
        }
        let stars = unescaped_stars(c);
        if stars.is_empty() {
            return Ok(ShellPattern::Exact(c.replace("\\*", "*")));
        }
        let optional_tail = stars.len() == 1 && c.ends_with(" *") && stars[0] == c.len() - 1;
        let body = if optional_tail { &c[..c.len() - 2] } else { c };
        let mut re = String::from("(?s)^");
        let mut chars = body.chars().peekable();
        while let Some(ch) = chars.next() {
            match ch {
                '\\' if matches!(chars.peek(), Some('*') | Some('\\')) => {
                    let next = chars.next().unwrap_or('\\');
                    re.push_str(&regex::escape(&next.to_string()));
                }
                '*' => re.push_str(".*"),
                other => re.push_str(&regex::escape(&other.to_string())),
            }
        }
        if optional_tail {
            re.push_str("(?: .*)?");
        }
        re.push('$');
        let literal: Vec<String> = c
            .split(' ')
            .take_while(|w| !w.is_empty() && !w.contains(['*', '\\']))
            .map(str::to_owned)
            .collect();
        let open = optional_tail && body.split(' ').count() == literal.len();
        Regex::new(&re)
            .map(|re| ShellPattern::Wildcard(re, literal, open))
            .map_err(|e| format!("invalid command pattern: {e}"))
    }

    /// The literal first word every command this pattern matches starts with, when there is
    /// one (`git` for `git push:*` and `git *`; none for `*` or `cu*rl`).
    pub fn first_word(&self) -> Option<&str> {
        let text = match self {
            ShellPattern::Prefix(p) => p.as_str(),
            ShellPattern::Exact(e) => e.as_str(),
            ShellPattern::Wildcard(_, literal, _) => {
                return literal.first().map(String::as_str);
            }
        };
        text.split(' ').next().filter(|w| !w.is_empty())
    }

    /// The literal words every command this pattern matches starts with (`git`, `log` for
    /// `git log:*` and `git log *`), and what follows them: anything (a prefix rule, `git log
    /// *`), nothing (an exact rule), or words it constrains (`python3 *.py`).
    pub fn literal_words(&self) -> (Vec<&str>, Rest) {
        match self {
            ShellPattern::Prefix(p) => (
                p.split(' ').filter(|w| !w.is_empty()).collect(),
                Rest::Anything,
            ),
            ShellPattern::Wildcard(_, literal, open) => (
                literal.iter().map(String::as_str).collect(),
                if *open {
                    Rest::Anything
                } else {
                    Rest::Constrained
                },
            ),
            ShellPattern::Exact(e) => (e.split(' ').collect(), Rest::Nothing),
        }
    }

    /// Does the pattern match this unit (its words joined by spaces)?
    pub fn matches(&self, unit: &str) -> bool {
        match self {
            ShellPattern::Prefix(p) => unit == p || unit.starts_with(&format!("{p} ")),
            ShellPattern::Wildcard(re, ..) => re.is_match(unit),
            ShellPattern::Exact(e) => unit == e,
        }
    }
}

fn unescaped_stars(s: &str) -> Vec<usize> {
    let b = s.as_bytes();
    (0..b.len())
        .filter(|&i| {
            b[i] == b'*' && {
                let mut n = 0;
                let mut j = i;
                while j > 0 && b[j - 1] == b'\\' {
                    n += 1;
                    j -= 1;
                }
                n % 2 == 0
            }
        })
        .collect()
}

/// The words of every unit of a command line, as rules match them (`argv[0]`'s basename, git's
/// global options dropped, carried commands and substitutions included), for matching without
/// a call's context (hook `if` conditions). `None` when the line does not parse.
pub fn units(command: &str) -> Option<Vec<String>> {
    let a = tool_shell::analyze::analyze(command, &tool_shell::analyze::ShellEnv::detached());
    a.parsed.then(|| crate::shell_policy::match_forms(&a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_forms() {
        let cases: &[(&str, &str, bool)] = &[
            ("ls:*", "ls", true),
            ("ls:*", "ls -la", true),
            ("ls:*", "lsof", false),
            ("git push:*", "git push origin main", true),
            ("git *", "git", true),
            ("git *", "git status", true),
            ("git *", "gitk", false),
            ("rm *", "rm -rf /", true),
            ("npm run *:test", "npm run unit:test", true),
            ("npm test", "npm test", true),
            ("npm test", "npm test --watch", false),
            ("echo \\*", "echo *", true),
            ("echo \\*", "echo x", false),
        ];
        for (pat, unit, want) in cases {
            assert_eq!(
                ShellPattern::parse(pat).unwrap().matches(unit),
                *want,
                "{pat} vs {unit}"
            );
        }
        assert!(ShellPattern::parse("a*:*").is_err());
    }
}
