//! The request and response of the call pipeline's tower services, shared by every stage
//! (`tool-hooks` and `tool-orchestrator` build layers over them).
//!
//! A refusal is a successful response carrying an error `tool_result`; the services' `Error`
//! type is for failures of the machinery itself.

use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolContext;
use crate::decision::{Decision, HookOutcome};
use crate::registry::RegisteredTool;
use crate::tool::{ContextModifier, ToolCallError};
use crate::wire::{ContentBlock, ToolResult, ToolResultContent};

/// One call on its way through the pipeline.
#[derive(Clone)]
pub struct ToolInvocation {
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The resolved tool.
    pub tool: Arc<RegisteredTool>,
    /// The input as the stages have left it (schema-checked once the schema stage has run).
    pub input: Value,
    /// The call's context.
    pub ctx: ToolContext,
    /// What the PreToolUse hooks answered, once they ran.
    pub hook_outcome: Option<HookOutcome>,
}

impl std::fmt::Debug for ToolInvocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("tool_use_id", &self.tool_use_id)
            .field("tool", &self.tool.name())
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

impl ToolInvocation {
    /// A call of `tool` with `input` in `ctx`.
    pub fn new(
        tool_use_id: impl Into<String>,
        tool: Arc<RegisteredTool>,
        input: Value,
        ctx: ToolContext,
    ) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            tool,
            input,
            ctx,
            hook_outcome: None,
        }
    }

    /// The tool's canonical name.
    pub fn tool_name(&self) -> &str {
        self.tool.name()
    }
}

/// Where a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The tool was not found.
    Lookup,
    /// Cancelled before it started.
    Cancelled,
    /// The input failed the schema.
    Schema,
    /// `validate_input` refused it.
    Validation,
    /// A PreToolUse hook stopped it.
    PreToolUse,
    /// The permission decision refused it.
    Permission,
    /// The tool ran (successfully or not).
    Ran,
    /// Something in the pipeline itself failed.
    Internal,
}

/// What the pipeline produced for one call.
#[derive(Debug)]
pub struct ToolOutcome {
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// What the model sees.
    pub content: ToolResultContent,
    /// True when it is an error result.
    pub is_error: bool,
    /// Where the call ended.
    pub stage: Stage,
    /// The tool's raw output, when it ran and succeeded (what PostToolUse hooks see).
    pub raw_output: Option<Value>,
    /// The tool's error, when it ran and failed (what PostToolUseFailure hooks see).
    pub call_error: Option<ToolCallError>,
    /// Messages from PreToolUse hooks (their additional context), sent after the result.
    pub hook_messages: Vec<ContentBlock>,
    /// Extra messages from the tool, sent after the hook messages.
    pub extra_messages: Vec<ContentBlock>,
    /// Context changes, in the order the tool emitted them.
    pub context_modifiers: Vec<ContextModifier>,
    /// The permission decision, when one was made: what allowed or refused the call, and why.
    pub decision: Option<Decision>,
    /// Set when a hook asked to stop the turn after this call.
    pub stop_reason: Option<String>,
    /// Notes for the user (not the model).
    pub user_notes: Vec<String>,
}

impl ToolOutcome {
    /// An outcome that ended at `stage` with an error text.
    pub fn refused(tool_use_id: impl Into<String>, stage: Stage, text: impl Into<String>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(text.into()),
            is_error: true,
            stage,
            raw_output: None,
            call_error: None,
            hook_messages: Vec::new(),
            extra_messages: Vec::new(),
            context_modifiers: Vec::new(),
            decision: None,
            stop_reason: None,
            user_notes: Vec::new(),
        }
    }

    /// An outcome for a call that ran, successfully or not.
    pub fn ran(tool_use_id: impl Into<String>, content: ToolResultContent, is_error: bool) -> Self {
        Self {
            content,
            is_error,
            stage: Stage::Ran,
            ..Self::refused(tool_use_id, Stage::Ran, String::new())
        }
    }

    /// The `tool_result` block.
    pub fn tool_result(&self) -> ToolResult {
        if self.is_error {
            ToolResult::error(self.tool_use_id.clone(), self.content.clone())
        } else {
            ToolResult::success(self.tool_use_id.clone(), self.content.clone())
        }
    }
}
