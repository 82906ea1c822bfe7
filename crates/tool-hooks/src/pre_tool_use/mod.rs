//! The PreToolUse stage: runs the matching hooks before the permission decision and records
//! their combined answer on the invocation.
//!
//! Matching hooks (matcher and `if` condition) run concurrently, except that a sequential group
//! runs in declared order, each hook seeing the input the previous one rewrote. Their decisions
//! combine as `deny > ask > allow` whatever order they finish in, each with its own reason. A
//! replacement input goes back through the tool's schema (and its normalisation) and then
//! through the permission rules; an invalid one ends the call with Claude Code's text. Hook
//! context for the model follows the call's result.

mod layer;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tool_core::{HookOutcome, Stage, ToolInvocation, ToolOutcome};
use tower_service::Service;

use crate::hooks::{HookSession, Hooks, PreToolUseInput, reminder, run_units};
pub use layer::PreToolUseLayer;

/// The service [`PreToolUseLayer`] produces.
#[derive(Clone)]
pub struct PreToolUse<S> {
    inner: S,
    hooks: Arc<Hooks>,
}

impl<S> PreToolUse<S> {
    /// Wrap `inner` with `hooks`.
    pub fn new(inner: S, hooks: Arc<Hooks>) -> Self {
        Self { inner, hooks }
    }
}

impl<S> Service<ToolInvocation> for PreToolUse<S>
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

    fn call(&mut self, mut inv: ToolInvocation) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let hooks = self.hooks.clone();
        Box::pin(async move {
            let tool_name = inv.tool_name().to_owned();
            let matching: Vec<_> = hooks
                .pre
                .iter()
                .filter(|h| h.applies(&tool_name, &inv.input))
                .cloned()
                .collect();
            if matching.is_empty() {
                return inner.call(inv).await;
            }
            let session = HookSession::from_context(&inv.ctx);
            let tool_use_id = inv.tool_use_id.clone();
            let run = run_units(
                &matching,
                inv.input.clone(),
                |h, tool_input| {
                    let input = PreToolUseInput {
                        session: session.clone(),
                        tool_name: tool_name.clone(),
                        tool_input,
                        tool_use_id: tool_use_id.clone(),
                    };
                    async move {
                        let mut out = h.hook.pre_tool_use(input).await;
                        if let Some(d) = &mut out.decision
                            && d.hook.is_empty()
                        {
                            d.hook = h.name.clone();
                        }
                        out
                    }
                },
                |o: &HookOutcome| o.updated_input.clone(),
            );
            let cancel = inv.ctx.cancel.clone();
            let Some(outcomes) = tokio_select_cancel(run, cancel).await else {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Cancelled,
                    tool_core::texts::CANCEL_MESSAGE,
                ));
            };
            let mut combined = HookOutcome::default();
            for (_, o) in outcomes {
                combined.merge(o);
            }
            if let Some(updated) = combined.updated_input.clone() {
                match inv.tool.schema.check(&updated) {
                    Ok(v) => inv.input = inv.tool.tool.normalize_input(v),
                    Err(e) => {
                        let name = inv.tool.name().to_owned();
                        let mut out = ToolOutcome::refused(
                            inv.tool_use_id,
                            Stage::Schema,
                            format!(
                                "PreToolUse hook for {name} returned updatedInput that failed schema validation: {}\nThe tool input from the model was valid; the hook's rewrite of it was not.",
                                e.render(&name)
                            ),
                        );
                        out.user_notes = combined.user_notes;
                        return Ok(out);
                    }
                }
            }
            let contexts = combined.additional_context.clone();
            let notes = combined.user_notes.clone();
            inv.hook_outcome = Some(combined);
            let mut outcome = inner.call(inv).await?;
            if !contexts.is_empty() {
                outcome.hook_messages.insert(
                    0,
                    reminder(&format!(
                        "PreToolUse:{tool_name} hook additional context: {}",
                        contexts.join("\n")
                    )),
                );
            }
            outcome.user_notes.splice(0..0, notes);
            Ok(outcome)
        })
    }
}

/// Run `fut` unless `cancel` fires first.
async fn tokio_select_cancel<F: std::future::Future>(
    fut: F,
    cancel: tool_core::CancellationToken,
) -> Option<F::Output> {
    futures::pin_mut!(fut);
    let cancelled = cancel.cancelled();
    futures::pin_mut!(cancelled);
    match futures::future::select(fut, cancelled).await {
        futures::future::Either::Left((out, _)) => Some(out),
        futures::future::Either::Right(((), _)) => None,
    }
}
