//! The permission engine of toolgate.
//!
//! Rules (`Tool`, `Tool(content)`) come from five layers of TOML policy files and from Claude
//! Code settings files ([`PolicySources`]), merged so that deny beats ask beats allow across
//! every layer. Path rules follow gitignore semantics on canonical, symlink-aware paths; Bash
//! rules are matched on every command a line runs (an allow needs every unit allowed, a
//! denied path read or written by any unit denies the line); protected paths always ask; the
//! permission modes, project trust (bound to content) and the managed layer's settings are
//! applied; every decision says which rule, file and line, or which built-in check, made it.
//! A rule that could never match is a load error with its line and column, never a no-op.
//! Deny rules also follow a file's identity (hard links, the targets of symlinks in a denied
//! tree: see `identity`), fold case on Windows volumes, and UNC paths and 8.3 short names are
//! never allowed silently.
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
//!
//! let toml = "[permissions]\ndeny = [\"Bash(curl:*)\", \"Read(~/.ssh/**)\"]\nallow = [\"Bash(git log\"]\n";
//! let err = PolicyBuilder::new()
//!     .toml_str(toml, Layer::Project, Path::new("policy.toml"), Path::new("/p"))
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("policy.toml:3:"), "{err}");
//! ```

mod domain;
mod file;
mod identity;
mod lint;
mod path_rule;
mod policy;
mod rule;
mod shell_policy;
mod shell_rule;
mod sources;
mod trust;

use std::path::PathBuf;

pub use domain::{DomainPattern, url_host};
pub use file::{PolicyTest, line_column};
pub use identity::MAX_WALK;
pub use lint::LintWarning;
pub use path_rule::{
    Anchor, PathPattern, candidates, case_folding_volume, has_short_name, inside_working_dirs,
};
pub use policy::{
    IgnoredRule, Layer, PathFamily, Policy, PolicyBuilder, Protection, RuleEntry, RuleMatcher,
    protected,
};
pub use rule::PermissionRule;
pub use shell_rule::{ShellPattern, units};
pub use sources::{PolicySources, Trust};
pub use trust::{TRUSTED_FILES, TrustEntry, TrustStore, project_hash};

/// The text of `path`, or `None` when it does not exist (a missing policy file adds nothing).
pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            file: path.to_path_buf(),
            source: e,
        }),
    }
}

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
    /// A content rule for a tool whose content this engine does not match (anything but the
    /// path-rule families, Bash and WebFetch): it could never match, so it is refused.
    #[error("permission rule `{rule}`{} has content this engine cannot match: only Read(...)/Edit(...) paths (and their aliases), Bash(...) commands and WebFetch(domain:...) take content; write the tool name alone to cover the whole tool", .file.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default())]
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
    /// An error at a position in a policy file.
    #[error("{}:{line}:{column}: {message}", .file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A rule that does not load, at its position in a policy file.
    #[error("{}:{line}:{column}: {error}", .file.display())]
    At {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong with the rule.
        error: Box<Error>,
    },
    /// Bypass mode was asked for where a managed policy disabled it.
    #[error("bypassPermissions mode is disabled by the managed policy ({source_setting})")]
    BypassDisabled {
        /// Where it was disabled.
        source_setting: String,
    },
    /// The trust store could not be read or written.
    #[error("trust store {}: {message}", .file.display())]
    Trust {
        /// The store's file.
        file: PathBuf,
        /// What went wrong.
        message: String,
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
