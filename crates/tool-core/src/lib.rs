//! The tool contract of toolgate: the wire types of the Messages API (and, in [`messages`],
//! assistant messages parsed and assembled from a stream), the [`Tool`] trait, the
//! [`ToolRegistry`], the schema layer that checks inputs and renders failures exactly as
//! Claude Code does, the decision types every crate shares, the per-call [`ToolContext`], the
//! [`FileStateCache`], the result-size policy, and [`stage`]: a pipeline stage written once as
//! a tower service and layer.
//!
//! It is for every crate and host of toolgate: a tool implements [`Tool`], a policy
//! implements [`PermissionPolicy`], a host builds a [`ToolRegistry`] and a [`ToolContext`].
//! It walks no directories, parses no shell and decides no permissions: those belong to the
//! crates that build on it. Without features it spawns no processes either; the `process`
//! feature (off by default, `std`/`tokio`/`libc` only) adds the `process` module, the
//! process-group helper the crates that run commands share (Bash, command hooks), so a host
//! that only decides permissions builds no process code. The default `jsonschema` feature
//! validates inputs with the `jsonschema` crate; without it, the [`schema`] module's structural
//! validator checks the keywords tool schemas use, with the same failures, and refuses a
//! schema with any other keyword.
//!
//! ```
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use serde_json::{json, Value};
//! use tool_core::{Tool, ToolContext, ToolOutput, ToolCallError, ToolRegistry, Lookup};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct EchoInput { text: String }
//!
//! struct Echo;
//!
//! #[async_trait]
//! impl Tool for Echo {
//!     fn name(&self) -> &str { "Echo" }
//!     fn description(&self) -> String { "Repeats its input.".into() }
//!     fn input_schema(&self) -> Value { tool_core::input_schema_for::<EchoInput>() }
//!     fn is_concurrency_safe(&self, _: &Value) -> bool { true }
//!     async fn call(&self, input: Value, _: &ToolContext) -> Result<ToolOutput, ToolCallError> {
//!         let input: EchoInput = tool_core::parse_input(input)?;
//!         Ok(ToolOutput::new(json!({"text": input.text}), input.text))
//!     }
//! }
//!
//! let mut registry = ToolRegistry::new();
//! registry.register(Arc::new(Echo)).unwrap();
//! let Lookup::Found(echo) = registry.lookup("Echo", &|_| true) else { panic!() };
//! let err = echo.schema.check(&json!({"text": 5})).unwrap_err();
//! assert_eq!(err.render("Echo"),
//!     "Echo failed due to the following issue:\nThe parameter `text` type is expected as `string` but provided as `number`");
//! ```

mod cancel;
mod context;
mod decision;
mod error;
mod file_state;
mod invocation;
pub mod messages;
#[cfg(feature = "process")]
pub mod process;
mod registry;
pub mod result;
pub mod sandbox;
pub mod schema;
pub mod stage;
pub mod texts;
mod tool;
mod wire;

pub use context::{
    MAX_PATH_BYTES, ToolContext, follow_links, is_drive_form, is_unc, normalize, resolve_physical,
    resolve_target, windows_to_posix,
};
pub use decision::{
    Approval, ApprovalRequest, Approver, Decision, DecisionReason, HookDecision, HookOutcome,
    NoPathRules, PathPolicy, PermissionMode, PermissionPolicy, PermissionRequest, RuleList,
    Verdict,
};
pub use error::Error;
pub use file_state::{DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, FileState, FileStateCache};
pub use invocation::{Stage, ToolInvocation, ToolOutcome};
pub use messages::{
    AssistantBlock, AssistantMessage, MessageAssembler, SseDecoder, StreamProgress,
    assistant_messages, parse_sse,
};
pub use registry::{Lookup, RegisteredTool, ToolRegistry};
pub use schema::{CompiledSchema, InputError};
pub use tool::{
    ContextModifier, InterruptBehavior, PermissionSubject, Tool, ToolCallError, ToolOutput,
    ValidationFailure, input_schema_for, parse_input,
};
pub use wire::{
    ContentBlock, ImageSource, MAX_INPUT_DEPTH, Role, ToolDefinition, ToolResult,
    ToolResultContent, ToolUse, UserContent, UserMessage, dismantle, exceeds_depth, too_deep_text,
    utf16_len,
};

// Re-exported so hosts implementing tools need not add these dependencies themselves.
pub use async_trait::async_trait;
pub use cancel::{CancellationToken, Cancelled};
