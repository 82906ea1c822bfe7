//! The permission engine of toolgate: the allow / ask / deny decision for a tool call, made
//! from permission rules (`Tool`, `Tool(content)`) the way Claude Code makes it.
//!
//! What it is for: a host that runs tools for a model builds a [`Policy`] (rules added with
//! [`PolicyBuilder`], or read from the five layers of TOML policy files and Claude Code
//! settings files that [`PolicySources`] names) and asks it about each call, through
//! [`tool_core::PermissionPolicy`] or in one call with [`decide`]. Rules are merged so that
//! deny beats ask beats allow across every layer. Path rules follow gitignore semantics on
//! canonical, symlink-aware paths; Bash rules are matched on every command a line runs (an
//! allow needs every unit allowed, a denied path read or written by any unit denies the line);
//! protected paths always ask; the permission modes, project trust (bound to content, see
//! [`TrustStore`]) and the managed layer's settings are applied; every decision says which
//! rule, file and line, or which built-in check, made it (the order is written down on
//! [`Policy`]). A rule that could never match is a load error with its line and column, never
//! a no-op. Deny rules also follow a file's identity (hard links, the targets of symlinks in a
//! denied tree), fold case on Windows volumes, and UNC paths and 8.3 short names are never
//! allowed silently.
//!
//! What it is not for: it runs no tool, asks no user and runs no hook. An ask is a verdict the
//! host settles (tool-orchestrator's approver); hooks are tool-hooks', which reads its
//! `hooks` tables from the same files, read once ([`PolicyFiles`]). It parses shell only through
//! tool-shell's analysis, and never executes it.
//!
//! A decision in one call: a tool (here a tiny one that reads a file), a policy with one deny
//! rule, and the verdict with the rule that made it.
//!
//! ```
//! use std::path::PathBuf;
//! use std::sync::Arc;
//! use serde_json::{json, Value};
//! use tool_core::{
//!     async_trait, PermissionSubject, RuleList, Tool, ToolCallError, ToolContext, ToolOutput,
//!     ToolRegistry, Verdict,
//! };
//! use tool_permissions::{Layer, PolicyBuilder, decide};
//!
//! /// Reads the file at `path`.
//! struct Cat;
//!
//! #[async_trait]
//! impl Tool for Cat {
//!     fn name(&self) -> &str { "Cat" }
//!     fn description(&self) -> String { "Prints a file.".into() }
//!     fn input_schema(&self) -> Value {
//!         json!({"type": "object", "properties": {"path": {"type": "string"}},
//!                "required": ["path"], "additionalProperties": false})
//!     }
//!     fn is_read_only(&self, _: &Value) -> bool { true }
//!     fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
//!         let path = input["path"].as_str().unwrap_or_default();
//!         PermissionSubject::ReadPaths(vec![ctx.resolve_path(path)])
//!     }
//!     async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolCallError> {
//!         unreachable!("deciding never runs the tool")
//!     }
//! }
//!
//! let mut registry = ToolRegistry::new();
//! registry.register(Arc::new(Cat)).unwrap();
//! let ctx = ToolContext::new("/work/project", "/home/me", "/tmp/tool-results");
//!
//! // `/secrets/**` in a rule is anchored at the project root.
//! let mut b = PolicyBuilder::new();
//! b.rule(RuleList::Deny, "Read(/secrets/**)", Layer::User, None).unwrap();
//! let policy = b.build();
//!
//! let d = decide(&policy, &registry, "Cat", &json!({"path": "secrets/key.pem"}), &ctx).unwrap();
//! assert_eq!(d.verdict, Verdict::Deny);
//! assert_eq!(d.reason.to_string(), "deny rule `Read(/secrets/**)` from user settings");
//!
//! // Reads inside the working directory that no rule denies are allowed.
//! let d = decide(&policy, &registry, "Cat", &json!({"path": "src/main.rs"}), &ctx).unwrap();
//! assert_eq!(d.verdict, Verdict::Allow);
//!
//! // A bad input is an error with the text the model would be shown.
//! let err = decide(&policy, &registry, "Cat", &json!({}), &ctx).unwrap_err();
//! assert!(err.to_string().starts_with("Cat failed due to the following issue:"), "{err}");
//! ```
//!
//! Rules from a TOML policy file keep their position, so a rule that could never match is an
//! error naming its line and column:
//!
//! ```
//! use std::path::Path;
//! use tool_permissions::{Layer, PolicyBuilder};
//!
//! let toml = "[permissions]\ndeny = [\"Bash(curl:*)\", \"Read(~/.ssh/**)\"]\nallow = [\"Bash(git log\"]\n";
//! let err = PolicyBuilder::new()
//!     .toml_str(toml, Layer::Project, Path::new("policy.toml"), Path::new("/p"))
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("policy.toml:3:"), "{err}");
//! ```

mod calls;
mod check;
mod deny_text;
mod domain;
mod file;
mod gitignore;
mod identity;
mod lint;
mod path_policy;
mod path_rule;
mod policy;
mod protected;
mod rule;
mod sandbox;
pub use sandbox::kept_read_only;
mod saved;
mod shell_policy;
mod shell_rule;
mod sources;
mod trust;

use std::path::PathBuf;

pub use calls::{
    CallModel, call_model, call_subject, decide_call, path_arguments, split_absolute_glob,
    tool_path_arguments,
};
pub use check::{TestReport, decide, run_call_tests, run_tests};
pub use file::{PolicyTest, line_column};
pub use lint::{LintWarning, Severity};
pub use policy::{IgnoredRule, Layer, Policy, PolicyBuilder, RuleEntry};
pub use protected::{Protection, protected};
pub use rule::PermissionRule;
pub use saved::{
    SAVED_APPROVAL_MARK, is_saved_approval, narrowest_rule, revoke_approval, save_approval,
};
pub use shell_rule::{ShellPattern, units};
pub use sources::{PolicyFile, PolicyFiles, PolicySources, Trust};
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
    /// [`decide`] was asked about a tool the registry does not have; the text is what the
    /// model is told (`No such tool available: ...`).
    #[error("{0}")]
    UnknownTool(String),
    /// [`decide`] was given an input that does not pass the tool's schema; the text is what
    /// the model is told (`X failed due to the following issue: ...`).
    #[error("{0}")]
    InvalidInput(String),
}
