//! Hooks for toolgate: PreToolUse, PostToolUse and PostToolUseFailure chains as tower layers.
//!
//! A host registers in-process hooks with a closure; the layers run the ones whose matcher
//! selects the tool. Claude Code command hooks (scripts reading JSON on stdin) arrive with the
//! hooks issue and implement the same traits.
//!
//! ```
//! use tool_core::{HookDecision, HookOutcome, Verdict};
//! use tool_hooks::{Hooks, PreToolUseInput};
//!
//! let mut hooks = Hooks::new();
//! hooks.pre_tool_use("Bash", |input: PreToolUseInput| async move {
//!     let rm = input.tool_input["command"].as_str().is_some_and(|c| c.contains("rm -rf"));
//!     HookOutcome {
//!         decision: rm.then(|| HookDecision { verdict: Verdict::Deny, reason: Some("no rm -rf".into()), hook: String::new() }),
//!         ..Default::default()
//!     }
//! }).unwrap();
//! assert!(!hooks.is_empty());
//! ```

mod command;
mod condition;
mod config;
mod hooks;
mod input;
mod matcher;
mod output;
mod post_tool_use;
mod pre_tool_use;

pub use command::{
    CommandHook, CommandSpec, DEFAULT_TIMEOUT, Exit, MAX_OUTPUT_BYTES, RawRun, run_command,
};
pub use condition::IfCondition;
pub use config::{HookLoader, load_hooks};
pub use hooks::{
    HookEvent, HookSession, Hooks, PostHookOutcome, PostToolUseHook, PostToolUseInput,
    PreToolUseHook, PreToolUseInput,
};
pub use input::{post_input_json, pre_input_json};
pub use matcher::Matcher;
pub use output::{Parsed, parse_output};
pub use post_tool_use::{PostToolUse, PostToolUseLayer};
pub use pre_tool_use::{PreToolUse, PreToolUseLayer};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A matcher is not a valid regular expression.
    #[error("hook matcher `{matcher}` is not a valid regular expression: {message}")]
    InvalidMatcher {
        /// The matcher as written.
        matcher: String,
        /// What is wrong.
        message: String,
    },
    /// An `if` condition is not a permission rule this crate can match.
    #[error("hook condition `{condition}` is not valid: {message}")]
    InvalidCondition {
        /// The condition as written.
        condition: String,
        /// What is wrong.
        message: String,
    },
    /// A policy or settings file's hooks could not be loaded.
    #[error("{}: {message}", .file.display())]
    Config {
        /// The file.
        file: std::path::PathBuf,
        /// What is wrong (with line and column when known).
        message: String,
    },
}
