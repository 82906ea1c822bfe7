//! Hook matchers, with Claude Code's semantics: empty or `*` matches every tool; a plain name
//! or an `a|b` list matches exactly; anything else is an unanchored regular expression.

use regex::Regex;

use crate::Error;

/// Which tools a hook applies to.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// Every tool.
    All,
    /// These names exactly.
    Names(Vec<String>),
    /// Tools whose name the expression finds a match in.
    Regex(Regex),
}

impl Matcher {
    /// Parse a matcher. An invalid regular expression is an error naming it.
    pub(crate) fn parse(pattern: &str) -> Result<Self, Error> {
        let p = pattern.trim();
        if p.is_empty() || p == "*" {
            return Ok(Matcher::All);
        }
        if p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | '-' | ' ' | ','))
        {
            return Ok(Matcher::Names(
                p.split(['|', ','])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        LEGACY
                            .iter()
                            .find(|(old, _)| *old == s)
                            .map_or(s, |(_, new)| new)
                            .to_owned()
                    })
                    .collect(),
            ));
        }
        Regex::new(p)
            .map(Matcher::Regex)
            .map_err(|e| Error::InvalidMatcher {
                matcher: pattern.to_owned(),
                message: e.to_string(),
            })
    }

    /// Does it apply to `tool_name`?
    pub(crate) fn matches(&self, tool_name: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == tool_name),
            Matcher::Regex(re) => {
                re.is_match(tool_name)
                    || LEGACY
                        .iter()
                        .any(|(old, new)| *new == tool_name && re.is_match(old))
            }
        }
    }
}

/// Tool names Claude Code renamed, as (old, new): matchers naming the old one still apply.
const LEGACY: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("AgentOutputTool", "TaskOutput"),
    ("BashOutputTool", "TaskOutput"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_semantics() {
        let cases = [
            ("", "Edit", true),
            ("*", "Bash", true),
            ("Edit", "Edit", true),
            ("Edit", "EditX", false),
            ("Edit|Write", "Write", true),
            ("Edit|Write", "Read", false),
            ("mcp__.*", "mcp__srv__tool", true),
            ("^Ed", "Edit", true),
            ("dit$", "Edit", true),
            ("Edit.*", "NotebookEdit", true),
            ("mcp__memory", "mcp__memory__read", false),
            ("Task", "Agent", true),
            ("^Task$", "Agent", true),
            ("Task", "Task", false),
        ];
        for (m, tool, want) in cases {
            assert_eq!(
                Matcher::parse(m).unwrap().matches(tool),
                want,
                "{m} vs {tool}"
            );
        }
        assert!(Matcher::parse("(").is_err());
    }
}
