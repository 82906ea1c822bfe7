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

mod hooks;
mod matcher;
mod post_tool_use;
mod pre_tool_use;

pub use hooks::{
    Hooks, PostHookOutcome, PostToolUseHook, PostToolUseInput, PreToolUseHook, PreToolUseInput,
};
pub use matcher::Matcher;
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
}
