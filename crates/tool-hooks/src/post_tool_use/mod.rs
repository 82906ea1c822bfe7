//! The PostToolUse / PostToolUseFailure stage: once the tool has run, the matching hooks see
//! its raw output (or its error) and may add context for the model, report a blocking error,
//! stop the turn, or (for external tools only) replace the output.
//!
//! It sits inside the result-policy stage, so for external tools a replaced output is what
//! gets mapped and size-checked; the hooks' texts join the result itself after its size
//! policy, as Claude Code sends them.

mod layer;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tool_core::{Stage, ToolInvocation, ToolOutcome, ToolResultContent};
use tower_service::Service;

use crate::hooks::{
    HookEvent, HookSession, Hooks, PostHookOutcome, PostToolUseInput, reminder_text, run_units,
};
pub use layer::PostToolUseLayer;

/// The service [`PostToolUseLayer`] produces.
#[derive(Clone)]
pub struct PostToolUse<S> {
    inner: S,
    hooks: Arc<Hooks>,
}

impl<S> PostToolUse<S> {
    /// Wrap `inner` with `hooks`.
    pub fn new(inner: S, hooks: Arc<Hooks>) -> Self {
        Self { inner, hooks }
    }
}

impl<S> Service<ToolInvocation> for PostToolUse<S>
where
    S: Service<ToolInvocation, Response = ToolOutcome, Error = tool_core::Error>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = ToolOutcome;
    type Error = tool_core::Error;
    type Future = BoxFuture<'static, Result<ToolOutcome, tool_core::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let hooks = self.hooks.clone();
        Box::pin(async move {
            if hooks.post.is_empty() && hooks.post_failure.is_empty() {
                return inner.call(inv).await;
            }
            let tool_name = inv.tool_name().to_owned();
            let external = inv.tool.tool.is_external();
            let session = HookSession::from_context(&inv.ctx);
            let tool_input = inv.input.clone();
            let tool_use_id = inv.tool_use_id.clone();
            let started = std::time::Instant::now();
            let mut outcome = inner.call(inv).await?;
            if outcome.stage != Stage::Ran {
                return Ok(outcome);
            }
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let failed = outcome.call_error.is_some();
            let (event, list) = if failed {
                (HookEvent::PostToolUseFailure, &hooks.post_failure)
            } else {
                (HookEvent::PostToolUse, &hooks.post)
            };
            let matching: Vec<_> = list
                .iter()
                .filter(|h| h.applies(&tool_name, &tool_input))
                .cloned()
                .collect();
            if matching.is_empty() {
                return Ok(outcome);
            }
            let input = PostToolUseInput {
                session,
                tool_name: tool_name.clone(),
                tool_input: tool_input.clone(),
                tool_use_id,
                tool_response: outcome.raw_output.clone(),
                error: outcome.call_error.as_ref().map(|e| e.message.clone()),
                is_interrupt: outcome.call_error.as_ref().is_some_and(|e| e.is_interrupt),
                duration_ms,
            };
            let results = run_units(
                &matching,
                tool_input,
                |h, _| {
                    let input = input.clone();
                    async move { h.hook.post_tool_use(input).await }
                },
                |_: &PostHookOutcome| None,
            )
            .await;
            let event = event.as_str();
            for (h, r) in results {
                if external
                    && !failed
                    && let Some(out) = r.updated_output
                {
                    outcome.content = match &out {
                        serde_json::Value::String(s) => ToolResultContent::Text(s.clone()),
                        other => ToolResultContent::Text(other.to_string()),
                    };
                    outcome.raw_output = Some(out);
                }
                if !r.additional_context.is_empty() {
                    outcome.appended.push(reminder_text(&format!(
                        "{event}:{tool_name} hook additional context: {}",
                        r.additional_context.join("\n")
                    )));
                }
                if let Some(err) = &r.blocking_error {
                    outcome.appended.push(reminder_text(&format!(
                        "{event}:{tool_name} hook blocking error from command: \"{}\": {err}",
                        h.name
                    )));
                }
                if r.prevent_continuation && outcome.stop_reason.is_none() {
                    outcome.stop_reason = Some(
                        r.stop_reason
                            .unwrap_or_else(|| format!("Execution stopped by {event} hook")),
                    );
                }
                outcome.user_notes.extend(r.user_notes);
            }
            Ok(outcome)
        })
    }
}
