//! The permission engine of toolgate.
//!
//! This version holds the rule grammar, Claude Code settings files as policy sources (with
//! project trust), whole-tool rules, `Read(...)`/`Edit(...)` path rules with gitignore
//! semantics and symlink-aware matching, Bash rules matched on every command a line runs (an
//! allow needs every unit allowed; denied paths read or written by a unit deny the line),
//! protected paths, the permission modes' baseline and explained decisions. TOML policy layers
//! and the rest of the shell analysis arrive with the rest of the permissions issue; a rule this version cannot honour is a load error
//! ([`Error::UnsupportedRule`]), never a silent no-op.
//!
//! ```
//! use std::path::Path;
//! use tool_core::{PermissionPolicy, RuleList};
//! use tool_permissions::{Layer, PolicyBuilder};
//!
//! let mut b = PolicyBuilder::new();
//! b.rule(RuleList::Deny, "WebFetch", Layer::User, None).unwrap();
//! let policy = b.build();
//! assert!(policy.removes_tool("WebFetch"));
//! b.rule(RuleList::Deny, "Bash(curl:*)", Layer::User, None).unwrap();
//! assert!(b.rule(RuleList::Allow, "WebFetch(domain:example.com)", Layer::User, None).is_err());
//! ```

mod path_rule;
mod policy;
mod rule;
mod shell_policy;
mod shell_rule;

use std::path::PathBuf;

pub use path_rule::{Anchor, PathPattern, candidates, inside_working_dirs};
pub use policy::{
    Layer, PathFamily, Policy, PolicyBuilder, Protection, RuleEntry, RuleMatcher, protected,
};
pub use rule::PermissionRule;
pub use shell_rule::{ShellPattern, units};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule does not parse.
    #[error("invalid permission rule `{rule}`: {message}")]
    InvalidRule {
        /// The rule as written.
        rule: String,
        /// What is wrong.
        message: String,
    },
    /// A rule with content this version does not evaluate yet (a Bash allow rule with content,
    /// or a content rule for a tool other than Read, Edit and Bash).
    #[error("permission rule `{rule}`{} is not supported yet: only whole-tool rules, Read(...)/Edit(...) path rules and Bash deny/ask rules are", .file.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default())]
    UnsupportedRule {
        /// The rule as written.
        rule: String,
        /// The file it came from.
        file: Option<PathBuf>,
    },
    /// A settings file is not valid JSON.
    #[error("{}:{line}:{column}: {message}", .file.display())]
    Json {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A settings file has the wrong shape.
    #[error("{}{message}", .file.as_ref().map(|f| format!("{}: ", f.display())).unwrap_or_default())]
    Shape {
        /// The file.
        file: Option<PathBuf>,
        /// What is wrong.
        message: String,
    },
    /// A settings file could not be read.
    #[error("cannot read {}: {source}", .file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An error inside a file.
    #[error("{}: {source}", .file.display())]
    InFile {
        /// The file.
        file: PathBuf,
        /// The error.
        source: Box<Error>,
    },
}
