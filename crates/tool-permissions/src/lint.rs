//! What [`Policy::lint`] reports besides load errors: rules that can never decide anything
//! because a broader rule decides first, allow rules that do not apply, and rules read as
//! another family than the one written.

use std::fmt;
use std::path::PathBuf;

use tool_core::RuleList;

use crate::policy::{Policy, RuleEntry, RuleMatcher};
use crate::shell_rule::ShellPattern;

/// One finding about a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintWarning {
    /// The file, when known.
    pub file: Option<PathBuf>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// The rule concerned, when there is one.
    pub rule: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How bad: an error makes `toolgate policy lint` fail; loading goes on either way.
    pub severity: Severity,
}

/// How bad a lint finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Severity {
    /// Worth knowing; the policy means what it says.
    #[default]
    Warning,
    /// The policy does not mean what its author wrote (a misspelt key): loaded, ignoring
    /// that part, but `policy lint` fails.
    Error,
}

impl fmt::Display for LintWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(l), Some(c)) => write!(f, "{}:{l}:{c}: ", file.display())?,
            (Some(file), Some(l), None) => write!(f, "{}:{l}: ", file.display())?,
            (Some(file), None, _) => write!(f, "{}: ", file.display())?,
            _ => {}
        }
        if let Some(r) = &self.rule {
            write!(f, "`{r}`: ")?;
        }
        f.write_str(&self.message)
    }
}

fn warning(e: &RuleEntry, message: String) -> LintWarning {
    LintWarning {
        file: e.file.clone(),
        line: e.line,
        column: e.column,
        rule: Some(e.text.clone()),
        message,
        severity: Severity::Warning,
    }
}

fn list_name(l: RuleList) -> &'static str {
    match l {
        RuleList::Allow => "allow",
        RuleList::Ask => "ask",
        RuleList::Deny => "deny",
    }
}

/// Rank of a list in the decision: a rule of a higher or equal rank that covers another
/// makes it dead.
fn rank(l: RuleList) -> u8 {
    match l {
        RuleList::Allow => 0,
        RuleList::Ask => 1,
        RuleList::Deny => 2,
    }
}

/// Does `broad` cover every call `narrow` covers? Conservative: `false` when unsure.
fn covers(broad: &RuleEntry, narrow: &RuleEntry) -> bool {
    match (&broad.matcher, &narrow.matcher) {
        (RuleMatcher::WholeTool, _) => broad.rule.names_tool(&narrow.rule.tool),
        (RuleMatcher::Shell(b), RuleMatcher::Shell(n)) => shell_covers(b, n),
        (
            RuleMatcher::Path {
                family: fb,
                pattern: b,
            },
            RuleMatcher::Path {
                family: fnarrow,
                pattern: n,
            },
        ) => fb == fnarrow && b.anchor == n.anchor && b.covers_pattern(n),
        (RuleMatcher::Domain(b), RuleMatcher::Domain(n)) => b == n,
        _ => false,
    }
}

fn shell_covers(broad: &ShellPattern, narrow: &ShellPattern) -> bool {
    // A word no real command contains, to stand for "anything after".
    const ANY: &str = "\u{1}toolgate-lint-probe";
    match narrow {
        ShellPattern::Exact(e) => broad.matches(e),
        ShellPattern::Prefix(p) => broad.matches(p) && broad.matches(&format!("{p} {ANY}")),
        ShellPattern::Wildcard(..) => {
            matches!(broad, ShellPattern::Wildcard(re, ..) if re.as_str() == "(?s)^.*$")
        }
    }
}

impl Policy {
    /// Everything lint reports: load warnings, ignored allow rules, and rules shadowed by a
    /// broader rule of the same or a stronger list (which always decides first).
    pub fn lint(&self) -> Vec<LintWarning> {
        let mut out: Vec<LintWarning> = self.load_warnings().to_vec();
        for i in self.ignored_rules() {
            out.push(warning(
                &i.entry,
                format!("allow rule not applied: {}", i.why),
            ));
        }
        let rules = self.rules();
        for r in rules.iter() {
            if r.list == RuleList::Allow && r.rule.tool_pattern().is_some() {
                out.push(warning(
                    r,
                    "never allows anything: an MCP rule names a whole server (`mcp__srv`, `mcp__srv__*`) or one tool; a wildcard in a tool's name only ever denies or asks".into(),
                ));
            }
        }
        for (n, narrow) in rules.iter().enumerate() {
            let shadow = rules.iter().enumerate().find(|(b, broad)| {
                *b != n
                    && rank(broad.list) >= rank(narrow.list)
                    && covers(broad, narrow)
                    // A deny rule is never called redundant because another file repeats
                    // it: that file may change or go, and the deny with it.
                    && !(narrow.list == RuleList::Deny
                        && (broad.layer != narrow.layer || broad.file != narrow.file))
                    // Two identical rules: report only the later one.
                    && !(rank(broad.list) == rank(narrow.list) && covers(narrow, broad) && *b > n)
            });
            if let Some((_, broad)) = shadow {
                out.push(warning(
                    narrow,
                    format!(
                        "never decides anything: the {} rule `{}` ({}) covers every call it covers",
                        list_name(broad.list),
                        broad.text,
                        broad.source()
                    ),
                ));
            }
        }
        out
    }
}
