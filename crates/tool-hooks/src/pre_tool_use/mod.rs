//! The PreToolUse stage: runs the matching hooks before the permission decision and records
//! their combined answer on the invocation.
//!
//! Matching hooks run concurrently; their decisions combine as `deny > ask > allow` whatever
//! order they finish in. A replacement input goes back through the tool's schema (and its
//! normalisation); an invalid one ends the call with the schema's error text.

mod layer;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, join_all};
use tool_core::{HookOutcome, Stage, ToolInvocation, ToolOutcome};
use tower_service::Service;

use crate::hooks::{Hooks, PreToolUseInput};
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
            let matching: Vec<_> = hooks
                .pre
                .iter()
                .filter(|h| h.matcher.matches(inv.tool_name()))
                .cloned()
                .collect();
            if matching.is_empty() {
                return inner.call(inv).await;
            }
            let input = PreToolUseInput {
                session_id: inv.ctx.session_id.clone(),
                cwd: inv.ctx.cwd.display().to_string(),
                permission_mode: inv.ctx.permission_mode,
                tool_name: inv.tool_name().to_owned(),
                tool_input: inv.input.clone(),
                tool_use_id: inv.tool_use_id.clone(),
            };
            let cancel = inv.ctx.cancel.clone();
            let run = join_all(matching.iter().map(|h| {
                let input = input.clone();
                async move {
                    let mut out = h.hook.pre_tool_use(input).await;
                    if let Some(d) = &mut out.decision {
                        d.hook = h.name.clone();
                    }
                    out
                }
            }));
            let outcomes = tokio_select_cancel(run, cancel).await;
            let Some(outcomes) = outcomes else {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Cancelled,
                    tool_core::texts::CANCEL_MESSAGE,
                ));
            };
            let mut combined = HookOutcome::default();
            for o in outcomes {
                combined.merge(o);
            }
            if let Some(updated) = combined.updated_input.clone() {
                match inv.tool.schema.check(&updated) {
                    Ok(v) => inv.input = inv.tool.tool.normalize_input(v),
                    Err(e) => {
                        return Ok(ToolOutcome::refused(
                            inv.tool_use_id,
                            Stage::Schema,
                            e.to_tool_result_text(inv.tool.name()),
                        ));
                    }
                }
            }
            inv.hook_outcome = Some(combined);
            inner.call(inv).await
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
