//! The PostToolUse / PostToolUseFailure stage: once the tool has run, the matching hooks see
//! its raw output (or its error) and may add context for the model, report a blocking error,
//! stop the turn, or (for external tools only) replace the output.
//!
//! It sits inside the result-policy stage, so for external tools a replaced output is what
//! gets mapped and size-checked; for built-in tools the hook messages simply follow the
//! result.

mod layer;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, join_all};
use tool_core::{Stage, ToolInvocation, ToolOutcome, ToolResultContent};
use tower_service::Service;

use crate::hooks::{Hooks, PostToolUseInput, reminder};
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
            let tool_name = inv.tool_name().to_owned();
            let external = inv.tool.tool.is_external();
            let base = PostToolUseInput {
                session_id: inv.ctx.session_id.clone(),
                cwd: inv.ctx.cwd.display().to_string(),
                permission_mode: inv.ctx.permission_mode,
                tool_name: tool_name.clone(),
                tool_input: inv.input.clone(),
                tool_use_id: inv.tool_use_id.clone(),
                tool_response: None,
                error: None,
                is_interrupt: false,
            };
            let mut outcome = inner.call(inv).await?;
            if outcome.stage != Stage::Ran {
                return Ok(outcome);
            }
            let failed = outcome.call_error.is_some();
            let (event, list) = if failed {
                ("PostToolUseFailure", &hooks.post_failure)
            } else {
                ("PostToolUse", &hooks.post)
            };
            let matching: Vec<_> = list
                .iter()
                .filter(|h| h.matcher.matches(&tool_name))
                .cloned()
                .collect();
            if matching.is_empty() {
                return Ok(outcome);
            }
            let input = PostToolUseInput {
                tool_response: outcome.raw_output.clone(),
                error: outcome.call_error.as_ref().map(|e| e.message.clone()),
                is_interrupt: outcome.call_error.as_ref().is_some_and(|e| e.is_interrupt),
                ..base
            };
            let results = join_all(matching.iter().map(|h| {
                let input = input.clone();
                async move { (h.name.clone(), h.hook.post_tool_use(input).await) }
            }))
            .await;
            for (name, r) in results {
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
                for ctx in &r.additional_context {
                    outcome.hook_messages.push(reminder(&format!(
                        "{event}:{tool_name} hook additional context: {ctx}"
                    )));
                }
                if let Some(err) = &r.blocking_error {
                    outcome.hook_messages.push(reminder(&format!(
                        "{event}:{tool_name} hook blocking error from {name}: {err}"
                    )));
                }
                if r.prevent_continuation {
                    outcome.stop_reason = Some(
                        r.stop_reason
                            .unwrap_or_else(|| "Execution stopped by hook".to_owned()),
                    );
                }
                outcome.user_notes.extend(r.user_notes);
            }
            Ok(outcome)
        })
    }
}
