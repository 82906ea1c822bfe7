//! The hook set: in-process hooks registered by matcher. Command hooks (Claude Code's
//! `type: "command"`) arrive with the hooks issue and plug into the same traits.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tool_core::{ContentBlock, HookOutcome, PermissionMode};

use crate::Error;
use crate::matcher::Matcher;

/// What a PreToolUse hook is given.
#[derive(Debug, Clone)]
pub struct PreToolUseInput {
    /// The session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The permission mode.
    pub permission_mode: PermissionMode,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
}

/// What a PostToolUse or PostToolUseFailure hook is given.
#[derive(Debug, Clone)]
pub struct PostToolUseInput {
    /// The session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The permission mode.
    pub permission_mode: PermissionMode,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The tool's raw output (PostToolUse).
    pub tool_response: Option<Value>,
    /// The error text (PostToolUseFailure).
    pub error: Option<String>,
    /// The failure was an interrupt.
    pub is_interrupt: bool,
}

/// What a PostToolUse hook answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostHookOutcome {
    /// Text for the model, sent after the result.
    pub additional_context: Vec<String>,
    /// A blocking error (`decision: "block"` or exit code 2), sent after the result.
    pub blocking_error: Option<String>,
    /// Replacement output for external tools.
    pub updated_output: Option<Value>,
    /// Stop the turn after this call.
    pub prevent_continuation: bool,
    /// Why.
    pub stop_reason: Option<String>,
    /// Notes for the user.
    pub user_notes: Vec<String>,
}

/// A PreToolUse hook.
#[async_trait]
pub trait PreToolUseHook: Send + Sync {
    /// Run the hook.
    async fn pre_tool_use(&self, input: PreToolUseInput) -> HookOutcome;
}

#[async_trait]
impl<F, Fut> PreToolUseHook for F
where
    F: Fn(PreToolUseInput) -> Fut + Send + Sync,
    Fut: Future<Output = HookOutcome> + Send,
{
    async fn pre_tool_use(&self, input: PreToolUseInput) -> HookOutcome {
        (self)(input).await
    }
}

/// A PostToolUse (or PostToolUseFailure) hook.
#[async_trait]
pub trait PostToolUseHook: Send + Sync {
    /// Run the hook.
    async fn post_tool_use(&self, input: PostToolUseInput) -> PostHookOutcome;
}

#[async_trait]
impl<F, Fut> PostToolUseHook for F
where
    F: Fn(PostToolUseInput) -> Fut + Send + Sync,
    Fut: Future<Output = PostHookOutcome> + Send,
{
    async fn post_tool_use(&self, input: PostToolUseInput) -> PostHookOutcome {
        (self)(input).await
    }
}

/// A registered hook with its matcher and name.
pub(crate) struct Registered<H: ?Sized> {
    pub name: String,
    pub matcher: Matcher,
    pub hook: Arc<H>,
}

/// The hooks of a session, by event.
#[derive(Default, Clone)]
pub struct Hooks {
    pub(crate) pre: Vec<Arc<Registered<dyn PreToolUseHook>>>,
    pub(crate) post: Vec<Arc<Registered<dyn PostToolUseHook>>>,
    pub(crate) post_failure: Vec<Arc<Registered<dyn PostToolUseHook>>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("pre", &self.pre.iter().map(|h| &h.name).collect::<Vec<_>>())
            .field(
                "post",
                &self.post.iter().map(|h| &h.name).collect::<Vec<_>>(),
            )
            .field(
                "post_failure",
                &self
                    .post_failure
                    .iter()
                    .map(|h| &h.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a PreToolUse hook for the tools `matcher` selects.
    pub fn pre_tool_use(
        &mut self,
        matcher: &str,
        hook: impl PreToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        register(&mut self.pre, "PreToolUse", matcher, Arc::new(hook))?;
        Ok(self)
    }

    /// Add a PostToolUse hook.
    pub fn post_tool_use(
        &mut self,
        matcher: &str,
        hook: impl PostToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        register(&mut self.post, "PostToolUse", matcher, Arc::new(hook))?;
        Ok(self)
    }

    /// Add a PostToolUseFailure hook.
    pub fn post_tool_use_failure(
        &mut self,
        matcher: &str,
        hook: impl PostToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        register(
            &mut self.post_failure,
            "PostToolUseFailure",
            matcher,
            Arc::new(hook),
        )?;
        Ok(self)
    }

    /// True when no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.post_failure.is_empty()
    }
}

/// Add a hook to one event's list, named after the event, its matcher and its position.
fn register<H: ?Sized>(
    list: &mut Vec<Arc<Registered<H>>>,
    event: &str,
    matcher: &str,
    hook: Arc<H>,
) -> Result<(), Error> {
    let name = format!("{event}[{matcher}]#{}", list.len());
    list.push(Arc::new(Registered {
        name,
        matcher: Matcher::parse(matcher)?,
        hook,
    }));
    Ok(())
}

/// A `<system-reminder>` text block, as hook messages reach the model.
pub(crate) fn reminder(text: &str) -> ContentBlock {
    ContentBlock::text(format!("<system-reminder>\n{text}\n</system-reminder>"))
}
