//! The rule grammar: `Tool` or `Tool(content)`, with `\(`, `\)` and `\\` escapes in the
//! content. `Tool()` and `Tool(*)` mean the whole tool.

use std::fmt;

use crate::Error;

/// A parsed permission rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermissionRule {
    /// The tool name (legacy names normalised).
    pub tool: String,
    /// The content inside the parentheses, unescaped; `None` for a whole-tool rule.
    pub content: Option<String>,
}

/// Legacy tool names Claude Code still accepts in rules.
const LEGACY_NAMES: &[(&str, &str)] = &[("Task", "Agent"), ("KillShell", "TaskStop")];

impl PermissionRule {
    /// Parse a rule. Fails on an empty tool name or characters no tool name has.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let t = text.trim();
        let (tool, content) = match split_content(t) {
            Some((tool, content)) => (tool, Some(content)),
            None => (t, None),
        };
        if tool.is_empty() {
            return Err(Error::InvalidRule {
                rule: text.to_owned(),
                message: "the tool name is empty".into(),
            });
        }
        if let Some(c) = tool
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*')))
        {
            return Err(Error::InvalidRule {
                rule: text.to_owned(),
                message: format!(
                    "`{c}` cannot appear in a tool name (write `Tool(content)` for a rule with content)"
                ),
            });
        }
        let tool = LEGACY_NAMES
            .iter()
            .find(|(old, _)| *old == tool)
            .map_or(tool, |(_, new)| new)
            .to_owned();
        let content = content
            .map(|c| unescape(&c))
            .filter(|c| !c.is_empty() && c != "*");
        Ok(Self { tool, content })
    }

    /// True for a rule that covers the whole tool.
    pub fn is_whole_tool(&self) -> bool {
        self.content.is_none()
    }

    /// Does this whole-tool rule name `tool_name`? MCP rules cover a server's tools:
    /// `mcp__srv` and `mcp__srv__*` match `mcp__srv__anything`.
    pub fn names_tool(&self, tool_name: &str) -> bool {
        if self.tool == tool_name {
            return true;
        }
        if let Some(server) = self.tool.strip_prefix("mcp__") {
            let server = server.strip_suffix("__*").unwrap_or(server);
            if !server.contains("__") {
                return tool_name
                    .strip_prefix("mcp__")
                    .and_then(|rest| rest.strip_prefix(server))
                    .is_some_and(|r| r.starts_with("__"));
            }
        }
        false
    }

    /// A rule naming some of a server's tools by a wildcard (`mcp__github__delete_*`): the
    /// server's name and the pattern for its tools' names. Claude Code matches only a whole
    /// server (`mcp__srv`, `mcp__srv__*`) or one tool; toolgate lets such a pattern deny or ask
    /// (the stricter reading) but never allow, and `policy lint` says so.
    pub fn tool_pattern(&self) -> Option<(&str, &str)> {
        let rest = self.tool.strip_prefix("mcp__")?;
        let (server, tool) = rest.split_once("__")?;
        (tool.contains(['*', '?']) && tool != "*").then_some((server, tool))
    }

    /// [`names_tool`](Self::names_tool), with a wildcard pattern for a server's tools
    /// ([`tool_pattern`](Self::tool_pattern)) matching too.
    pub fn names_tool_by_pattern(&self, tool_name: &str) -> bool {
        if self.names_tool(tool_name) {
            return true;
        }
        let Some((server, pattern)) = self.tool_pattern() else {
            return false;
        };
        tool_name
            .strip_prefix("mcp__")
            .and_then(|r| r.strip_prefix(server))
            .and_then(|r| r.strip_prefix("__"))
            .is_some_and(|t| glob_name(pattern, t))
    }
}

/// `*` (any run) and `?` (one character) over a name.
fn glob_name(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.content {
            None => f.write_str(&self.tool),
            Some(c) => write!(
                f,
                "{}({})",
                self.tool,
                c.replace('\\', "\\\\")
                    .replace('(', "\\(")
                    .replace(')', "\\)")
            ),
        }
    }
}

/// Split `Tool(content)` at the first unescaped `(`; the rule must end with an unescaped `)`.
fn split_content(t: &str) -> Option<(&str, String)> {
    let bytes = t.as_bytes();
    let open = (0..bytes.len()).find(|&i| bytes[i] == b'(' && !escaped(bytes, i))?;
    let close = bytes.len().checked_sub(1)?;
    if close <= open || bytes[close] != b')' || escaped(bytes, close) {
        return None;
    }
    Some((&t[..open], t[open + 1..close].to_owned()))
}

fn escaped(bytes: &[u8], i: usize) -> bool {
    let mut n = 0;
    let mut j = i;
    while j > 0 && bytes[j - 1] == b'\\' {
        n += 1;
        j -= 1;
    }
    n % 2 == 1
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '(' | ')' | '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> (String, Option<String>) {
        let r = PermissionRule::parse(s).unwrap();
        (r.tool, r.content)
    }

    #[test]
    fn parses_the_grammar() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("Edit", "Edit", None),
            ("Edit()", "Edit", None),
            ("Edit(*)", "Edit", None),
            ("Bash(npm run test:*)", "Bash", Some("npm run test:*")),
            ("Bash(echo \\(hi\\))", "Bash", Some("echo (hi)")),
            ("Bash(a\\\\b)", "Bash", Some("a\\b")),
            ("Read(./.env)", "Read", Some("./.env")),
            ("Task", "Agent", None),
            ("mcp__srv__tool", "mcp__srv__tool", None),
        ];
        for (input, tool, content) in cases {
            assert_eq!(
                p(input),
                ((*tool).to_owned(), content.map(str::to_owned)),
                "{input}"
            );
        }
    }

    #[test]
    fn rejects_malformed_names() {
        for bad in ["", "Bash(echo", "Bash echo", "Bash(x)y"] {
            assert!(PermissionRule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mcp_server_rules_cover_its_tools() {
        let srv = PermissionRule::parse("mcp__srv").unwrap();
        let star = PermissionRule::parse("mcp__srv__*").unwrap();
        let one = PermissionRule::parse("mcp__srv__a").unwrap();
        assert!(srv.names_tool("mcp__srv__a") && star.names_tool("mcp__srv__b"));
        assert!(!srv.names_tool("mcp__srv2__a"));
        assert!(one.names_tool("mcp__srv__a") && !one.names_tool("mcp__srv__b"));
        let some = PermissionRule::parse("mcp__srv__delete_*").unwrap();
        assert_eq!(some.tool_pattern(), Some(("srv", "delete_*")));
        assert!(some.names_tool_by_pattern("mcp__srv__delete_repo"));
        assert!(!some.names_tool_by_pattern("mcp__srv__get_repo"));
        assert!(!some.names_tool_by_pattern("mcp__srv2__delete_repo"));
        assert!(!some.names_tool("mcp__srv__delete_repo"));
        assert_eq!(star.tool_pattern(), None);
    }

    #[test]
    fn display_round_trips() {
        for s in ["Edit", "Bash(echo \\(hi\\))", "Read(./x)"] {
            assert_eq!(PermissionRule::parse(s).unwrap().to_string(), s);
        }
    }
}
