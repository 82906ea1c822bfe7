//! A hook's `if` condition: a permission rule the call must match for the hook to run.
//!
//! The rule's tool must be the call's tool; a rule without content matches every call of it.
//! Bash matches when any command the line runs matches the pattern (a line that cannot be
//! analysed runs the hook anyway: a hook is a check, so doubt means running it); Read, Edit
//! and Write match the absolute `file_path`, Grep and Glob their `pattern`, with `*` matching
//! any characters, `/` included. Other tools' contents never match.

use regex::Regex;
use serde_json::Value;
use tool_permissions::{PermissionRule, ShellPattern, units};

use crate::Error;

/// A compiled `if` condition.
#[derive(Debug, Clone)]
pub(crate) struct IfCondition {
    tool: String,
    content: Content,
}

#[derive(Debug, Clone)]
enum Content {
    Any,
    Shell(ShellPattern),
    Wildcard(Regex),
}

impl IfCondition {
    /// Parse a condition; a rule that does not parse is an error naming it.
    pub(crate) fn parse(text: &str) -> Result<Self, Error> {
        let invalid = |message: String| Error::InvalidCondition {
            condition: text.to_owned(),
            message,
        };
        let rule = PermissionRule::parse(text).map_err(|e| invalid(e.to_string()))?;
        let content = match rule.content.as_deref() {
            None => Content::Any,
            Some(c) if rule.tool == "Bash" => {
                Content::Shell(ShellPattern::parse(c).map_err(invalid)?)
            }
            Some(c) => {
                let mut re = String::from("(?s)^");
                for part in c.split('*') {
                    re.push_str(&regex::escape(part));
                    re.push_str(".*");
                }
                re.truncate(re.len() - 2);
                re.push('$');
                Content::Wildcard(Regex::new(&re).map_err(|e| invalid(e.to_string()))?)
            }
        };
        Ok(Self {
            tool: rule.tool,
            content,
        })
    }

    /// Does the call match?
    pub(crate) fn matches(&self, tool_name: &str, input: &Value) -> bool {
        if self.tool != tool_name {
            return false;
        }
        match &self.content {
            Content::Any => true,
            Content::Shell(p) => {
                let Some(command) = input.get("command").and_then(Value::as_str) else {
                    return false;
                };
                match units(command) {
                    Some(forms) => forms.iter().any(|f| p.matches(f)) || p.matches(command.trim()),
                    None => true,
                }
            }
            Content::Wildcard(re) => {
                let field = match tool_name {
                    "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => "file_path",
                    "Grep" | "Glob" => "pattern",
                    _ => return false,
                };
                input
                    .get(field)
                    .and_then(Value::as_str)
                    .is_some_and(|v| re.is_match(v))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions() {
        let git = IfCondition::parse("Bash(git *)").unwrap();
        assert!(git.matches("Bash", &json!({"command": "git status"})));
        assert!(git.matches("Bash", &json!({"command": "ls && FOO=1 git push"})));
        assert!(!git.matches("Bash", &json!({"command": "echo not git"})));
        assert!(!git.matches("Read", &json!({"file_path": "/x"})));
        // A line that cannot be analysed runs the hook.
        assert!(git.matches("Bash", &json!({"command": "echo $((("})));
        let md = IfCondition::parse("Edit(*.md)").unwrap();
        assert!(md.matches("Edit", &json!({"file_path": "/w/docs/a.md"})));
        assert!(!md.matches("Edit", &json!({"file_path": "/w/a.rs"})));
        assert!(
            IfCondition::parse("Write")
                .unwrap()
                .matches("Write", &json!({}))
        );
        assert!(IfCondition::parse("Bash(").is_err());
    }
}
