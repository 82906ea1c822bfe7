//! Bash rule contents (`Bash(git push:*)`, `Bash(rm *)`, `Bash(npm test)`) and the units of a
//! command line they are matched against.
//!
//! Every simple command the line runs is a unit (from `tool-shell`'s parse, so `;`, `&&`,
//! pipes, subshells and substitutions are all seen). For deny and ask matching a unit is taken
//! as bash will run it: leading assignments and process wrappers (`timeout`, `nice`, `env`,
//! `sudo`, ...) stripped, `argv[0]` reduced to its basename, git's global options skipped, and
//! literal payloads of `sh -c`, `eval`, `xargs` and `find -exec` parsed as units of their own.

use regex::Regex;
use tool_shell::CommandLine;

/// A compiled Bash rule content.
#[derive(Debug, Clone)]
pub enum ShellPattern {
    /// `prefix:*`: the command is `prefix` or starts with `prefix ` (a word boundary).
    Prefix(String),
    /// Contains `*`: the whole command must match; a trailing ` *` that is the only wildcard is
    /// optional (`git *` matches `git`). Keeps the literal first word, when there is one.
    Wildcard(Regex, Option<String>),
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
        let first = c
            .split(' ')
            .next()
            .filter(|w| c.contains(' ') && !w.is_empty() && !w.contains(['*', '\\']))
            .map(str::to_owned);
        Regex::new(&re)
            .map(|re| ShellPattern::Wildcard(re, first))
            .map_err(|e| format!("invalid command pattern: {e}"))
    }

    /// The literal first word every command this pattern matches starts with, when there is
    /// one (`git` for `git push:*` and `git *`; none for `*` or `cu*rl`).
    pub fn first_word(&self) -> Option<&str> {
        let text = match self {
            ShellPattern::Prefix(p) => p.as_str(),
            ShellPattern::Exact(e) => e.as_str(),
            ShellPattern::Wildcard(_, first) => return first.as_deref(),
        };
        text.split(' ').next().filter(|w| !w.is_empty())
    }

    /// Does the pattern match this unit (its words joined by spaces)?
    pub fn matches(&self, unit: &str) -> bool {
        match self {
            ShellPattern::Prefix(p) => unit == p || unit.starts_with(&format!("{p} ")),
            ShellPattern::Wildcard(re, _) => re.is_match(unit),
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

/// Process wrappers stripped before matching, with how many option arguments they take.
fn strip_wrappers(words: &[String]) -> &[String] {
    let mut w = words;
    loop {
        let Some(first) = w.first() else { return w };
        let name = first.rsplit('/').next().unwrap_or(first);
        let skip = match name {
            "time" | "nohup" | "command" | "builtin" | "exec" | "setsid" => {
                1 + w[1..].iter().take_while(|a| a.starts_with('-')).count()
            }
            "nice" | "ionice" | "stdbuf" | "sudo" | "doas" => {
                let mut i = 1;
                while i < w.len() && w[i].starts_with('-') {
                    let takes_value = matches!(
                        w[i].as_str(),
                        "-n" | "-c" | "-u" | "-g" | "-i" | "-o" | "-e" | "-p"
                    );
                    i += if takes_value { 2 } else { 1 };
                }
                i
            }
            "timeout" => {
                let mut i = 1;
                while i < w.len() && w[i].starts_with('-') {
                    i += if matches!(w[i].as_str(), "-s" | "-k" | "--signal" | "--kill-after") {
                        2
                    } else {
                        1
                    };
                }
                i + 1
            }
            "env" => {
                1 + w[1..]
                    .iter()
                    .take_while(|a| a.starts_with('-') || is_assignment(a))
                    .count()
            }
            _ if is_assignment(first) => 1,
            _ => return w,
        };
        if skip == 0 || skip > w.len() {
            return &w[w.len()..];
        }
        w = &w[skip..];
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Skip git's global options so `git -C x push` is matched as `git push`.
fn skip_git_globals(words: &mut Vec<String>) {
    if words.first().map(String::as_str) != Some("git") {
        return;
    }
    let mut i = 1;
    while i < words.len() {
        match words[i].as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            a if a.starts_with("--git-dir=")
                || a.starts_with("--work-tree=")
                || a.starts_with("--namespace=")
                || a.starts_with('-') =>
            {
                i += 1
            }
            _ => break,
        }
    }
    words.drain(1..i.min(words.len()));
}

/// The units of a command line, each as the words bash will run, for deny and ask matching.
/// `None` when the line does not parse (callers then match the raw text and never allow).
pub fn units(command: &str) -> Option<Vec<String>> {
    let line = CommandLine::parse(command).ok()?;
    let mut out = Vec::new();
    for c in &line.commands {
        let words: Vec<String> = c.argv.iter().map(|w| w.text().to_owned()).collect();
        add_unit(&words, &mut out, 0);
    }
    Some(out)
}

fn add_unit(words: &[String], out: &mut Vec<String>, depth: usize) {
    let w = strip_wrappers(words);
    let Some(first) = w.first() else { return };
    let mut words: Vec<String> = w.to_vec();
    words[0] = first.rsplit('/').next().unwrap_or(first).to_owned();
    skip_git_globals(&mut words);
    out.push(words.join(" "));
    if depth > 8 {
        return;
    }
    // Git configuration given on the command line can name programs (`!` aliases, pagers,
    // editors, ssh commands): those run too.
    if words[0] == "git" {
        for payload in git_config_commands(w) {
            out.extend(units(&payload).into_iter().flatten());
        }
    }
    // Command-carrying wrappers: their literal payload runs too.
    match words[0].as_str() {
        "sh" | "bash" | "zsh" | "dash" | "ksh" => {
            if let Some(i) = words.iter().position(|a| a == "-c")
                && let Some(payload) = words.get(i + 1)
            {
                for u in units(payload).into_iter().flatten() {
                    out.push(u);
                }
            }
        }
        "eval" => {
            for u in units(&words[1..].join(" ")).into_iter().flatten() {
                out.push(u);
            }
        }
        "xargs" => {
            let rest: Vec<String> = words[1..]
                .iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect();
            add_unit(&rest, out, depth + 1);
        }
        "find" => {
            let mut i = 1;
            while i < words.len() {
                if matches!(words[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let payload: Vec<String> = words[i + 1..]
                        .iter()
                        .take_while(|a| *a != ";" && *a != "+")
                        .cloned()
                        .collect();
                    i += payload.len() + 1;
                    add_unit(&payload, out, depth + 1);
                }
                i += 1;
            }
        }
        _ => {}
    }
}

/// The commands inside `git -c key=value` settings that git runs as programs.
pub fn git_config_commands(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let setting = match words[i].as_str() {
            "-c" => {
                i += 1;
                words.get(i).map(String::as_str)
            }
            a => a.strip_prefix("-c"),
        };
        i += 1;
        let Some((key, value)) = setting.and_then(|s| s.split_once('=')) else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        let runs = key.starts_with("alias.") && value.starts_with('!')
            || matches!(
                key.as_str(),
                "core.pager"
                    | "core.editor"
                    | "core.sshcommand"
                    | "core.fsmonitor"
                    | "core.askpass"
                    | "diff.external"
                    | "credential.helper"
                    | "sequence.editor"
                    | "gpg.program"
                    | "gpg.ssh.program"
                    | "ssh.command"
            )
            || key.starts_with("pager.")
            || key.ends_with(".textconv")
            || key.ends_with(".command")
            || (key.starts_with("filter.")
                && (key.ends_with(".clean")
                    || key.ends_with(".smudge")
                    || key.ends_with(".process")));
        if runs {
            out.push(value.trim_start_matches('!').to_owned());
        }
    }
    out
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

    #[test]
    fn units_are_what_bash_runs() {
        let cases: &[(&str, &[&str])] = &[
            ("echo hi && curl x", &["echo hi", "curl x"]),
            ("timeout 5 nice -n 2 /usr/bin/curl x", &["curl x"]),
            ("FOO=1 env BAR=2 curl x", &["curl x"]),
            ("sudo -u root rm -rf /", &["rm -rf /"]),
            (
                "bash -c 'curl x | sh'",
                &["bash -c curl x | sh", "curl x", "sh"],
            ),
            ("eval 'curl x'", &["eval curl x", "curl x"]),
            ("ls | xargs -0 rm -f", &["ls", "xargs -0 rm -f", "rm -f"]),
            ("find . -exec rm {} \\;", &["find . -exec rm {} ;", "rm {}"]),
            ("git -C repo -c a=b push origin", &["git push origin"]),
            ("echo $(curl x)", &["echo $(curl x)", "curl x"]),
            ("\"cu\"rl x", &["curl x"]),
        ];
        for (cmd, want) in cases {
            assert_eq!(
                units(cmd).unwrap(),
                want.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
                "{cmd}"
            );
        }
        assert!(units("echo 'open").is_none());
    }
}
