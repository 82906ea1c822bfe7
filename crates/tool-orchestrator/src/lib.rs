//! The call pipeline and sessions of toolgate: what turns a model's `tool_use` blocks into the
//! `tool_result` blocks it reads next.
//!
//! What it is for: an agent loop. A [`Session`] runs a turn's `tool_use` blocks through the
//! [`Pipeline`]: lookup, input, then a tower stack of schema, validation, PreToolUse hooks, the
//! permission decision, PostToolUse hooks, the result policy and the call itself
//! ([`standard_stack`] lists the stages in order). Every call ends in a `tool_result` with its
//! id, on every path. Within a turn, consecutive concurrency-safe calls run together (at most
//! `TOOLGATE_MAX_TOOL_USE_CONCURRENCY` at once) and every other call alone; context changes
//! apply in block order ([`turn`]). [`Session::start_turn`] reports each call as it starts and
//! finishes; [`Session::streaming`] takes blocks one at a time while the model streams. The
//! host's own middleware goes around the whole stack ([`SessionBuilder::layer`]) or around the
//! tool call ([`SessionBuilder::layer_around_call`]); its own tools are registered in the
//! [`ToolRegistry`](tool_core::ToolRegistry) and, when they need no prompt, named in
//! [`SessionBuilder::allow_tools`]. [`prelude`] has what such a host uses, from this one
//! dependency.
//!
//! What it is not for: a host that only decides (use `tool-permissions`' `decide`), or only
//! runs hooks around its own executor (use `tool-hooks`' layers alone); neither needs this
//! crate, nor its `jsonschema` dependency.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use serde_json::json;
//! use tool_core::{ToolContext, ToolUse};
//! use tool_orchestrator::Session;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
//! let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
//! let mut session = Session::builder(builtin_tools::registry().unwrap(), ctx).build();
//! let path = dir.path().join("a.txt").display().to_string();
//! let turn = session.run_turn(&[ToolUse::new("t1", "Read", json!({"file_path": path}))]).await;
//! assert_eq!(turn.outcomes[0].content.to_text(), "1\thello\n2\t");
//! # });
//! ```

mod allow_tools;
pub mod audit;
mod call;
mod permission;
mod pipeline;
mod result_policy;
mod schema;
mod session;
pub mod turn;
mod validate;

pub use allow_tools::{ALLOW_TOOLS_SOURCE, AllowTools};
pub use call::CallTool;
pub use permission::Permission;
pub use pipeline::{HostLayer, Pipeline, ToolService, decision_stack, standard_stack};
pub use result_policy::ResultPolicy;
pub use schema::SchemaCheck;
pub use session::{Session, SessionBuilder, TurnOutcome};
pub use turn::{InterruptHandle, TurnRun, TurnUpdate, max_concurrency};
pub use validate::Validate;

// The crates this one builds on, for hosts that need more than the prelude.
#[cfg(feature = "builtin-tools")]
pub use builtin_tools;
pub use tool_core;
pub use tool_hooks;
pub use tool_permissions;

pub mod prelude {
    //! What an agent-loop host needs, in one `use tool_orchestrator::prelude::*;`: the session
    //! and its builder, the tool contract, hooks, policies, and the Messages API types.
    //!
    //! ```
    //! use tool_orchestrator::prelude::*;
    //!
    //! let dir = tempfile::tempdir().unwrap();
    //! let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
    //! let session = Session::builder(builtin_tools::registry().unwrap(), ctx)
    //!     .hooks(Hooks::new())
    //!     .build();
    //! assert!(session.is_offered("Read"));
    //! ```

    #[cfg(feature = "builtin-tools")]
    pub use crate::builtin_tools;
    pub use crate::{Session, SessionBuilder, ToolService, TurnOutcome, TurnRun, TurnUpdate};
    pub use tool_core::messages::{
        AssistantBlock, AssistantMessage, MessageAssembler, StreamProgress, assistant_messages,
        parse_sse,
    };
    pub use tool_core::schema::object_schema;
    pub use tool_core::{
        Approval, ApprovalRequest, Approver, ContentBlock, Decision, DecisionReason, HookOutcome,
        PermissionMode, PermissionSubject, RuleList, Stage, Tool, ToolCallError, ToolContext,
        ToolDefinition, ToolInvocation, ToolOutcome, ToolOutput, ToolRegistry, ToolResult,
        ToolResultContent, ToolUse, UserMessage, Verdict, async_trait,
    };
    pub use tool_hooks::{
        CommandSpec, HookEvent, Hooks, PostHookOutcome, PostToolUseInput, PreToolUseInput,
    };
    pub use tool_permissions::{Policy, PolicyBuilder, PolicyFiles, PolicySources, Trust};
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tool-core error (registry, schema).
    #[error(transparent)]
    Core(#[from] tool_core::Error),
    /// A policy file does not load.
    #[error(transparent)]
    Policy(#[from] tool_permissions::Error),
    /// The hooks of a policy file do not load.
    #[error(transparent)]
    Hooks(#[from] tool_hooks::Error),
}

/// The README's examples, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
