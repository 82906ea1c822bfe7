//! Claude Code's tool hooks for toolgate: PreToolUse, PostToolUse and PostToolUseFailure
//! chains as tower layers.
//!
//! What it is for: running the hooks a user configured (command hooks: scripts that read the
//! event's JSON on stdin and answer with an exit code or JSON, exactly as Claude Code runs them;
//! or in-process hooks: closures) around any tower service that takes a
//! [`ToolInvocation`](tool_core::ToolInvocation), and loading them from policy and settings
//! files ([`HookLoader`]). Used alone, it is safe: the [`PreToolUse`] stage stops a call its
//! hooks deny (a JSON deny or block, exit code 2, a `fail_closed` hook that gave no answer),
//! and an ask nobody below it can answer, answering with Claude Code's text; the
//! [`PostToolUse`] stage joins its hooks' texts to the result.
//!
//! What it is not for: deciding with rules (that is `tool-permissions`, combined with the
//! hooks' answers by `tool-orchestrator`'s permission stage, where a hook's allow only waives
//! a prompt and never lifts a deny or ask rule), or running tools.
//!
//! A hooks-only stack around a host's own service:
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use serde_json::json;
//! use tool_core::{HookOutcome, Stage, ToolContext, ToolInvocation, ToolOutcome};
//! use tool_hooks::{Hooks, PostToolUse, PreToolUse, PreToolUseInput};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! let mut hooks = Hooks::new();
//! hooks.pre_tool_use("Bash", |input: PreToolUseInput| async move {
//!     let rm = input.tool_input["command"].as_str().is_some_and(|c| c.contains("rm -rf"));
//!     if rm { HookOutcome::deny("no rm -rf") } else { HookOutcome::default() }
//! }).unwrap();
//! let hooks = Arc::new(hooks);
//!
//! // The host's own service; here it only answers "ran".
//! let host = tower::service_fn(|inv: ToolInvocation| async move {
//!     Ok::<_, tool_core::Error>(ToolOutcome::ran(inv.tool_use_id, "ran".into(), false))
//! });
//! let stack = ServiceBuilder::new()
//!     .layer(PreToolUse::new(hooks.clone()).layer())
//!     .layer(PostToolUse::new(hooks).layer())
//!     .service(host);
//!
//! let registry = builtin_tools::registry().unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
//! let bash = registry.get("Bash").unwrap().clone();
//! let call = ToolInvocation::new("toolu_1", bash, json!({"command": "rm -rf /"}), ctx);
//! let out = stack.oneshot(call).await.unwrap();
//! assert_eq!(out.stage, Stage::PreToolUse);
//! assert_eq!(out.content.to_text(), "PreToolUse:Bash hook error: no rm -rf");
//! # });
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
    CommandSpec, DEFAULT_TIMEOUT, Exit, MAX_OUTPUT_BYTES, RawRun, read_post_run, read_pre_run,
    run_command,
};
pub use config::{HookListing, HookLoader, list_hooks, load_hooks};
pub use hooks::{
    HookEvent, HookSession, Hooks, PostHookOutcome, PostToolUseHook, PostToolUseInput,
    PreToolUseHook, PreToolUseInput,
};
pub use input::{post_input_json, pre_input_json};
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
