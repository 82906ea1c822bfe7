//! Step 8: the model-facing content of a call that ran: empty results get Claude Code's
//! marker, large ones are persisted with a preview, error texts are cut in the middle past
//! 10,000 characters.

mod layer;

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tool_core::result::apply_result_policy;
use tool_core::texts::truncate_middle;
use tool_core::{Stage, ToolInvocation, ToolOutcome, ToolResultContent};
use tower_service::Service;

pub use layer::ResultPolicyLayer;

/// The service [`ResultPolicyLayer`] produces.
#[derive(Clone, Debug)]
pub struct ResultPolicy<S> {
    inner: S,
}

impl<S> Service<ToolInvocation> for ResultPolicy<S>
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
        let tool = inv.tool.clone();
        let dir = inv.ctx.tool_results_dir.clone();
        Box::pin(async move {
            let id = inv.tool_use_id.clone();
            let mut outcome = inner.call(inv).await?;
            if outcome.stage != Stage::Ran {
                return Ok(outcome);
            }
            if outcome.is_error {
                let text = outcome.content.to_text();
                let text = if text.trim().is_empty() {
                    "Command failed with no output".to_owned()
                } else {
                    truncate_middle(&text)
                };
                outcome.content = ToolResultContent::Text(text);
                return Ok(outcome);
            }
            let content = std::mem::take(&mut outcome.content);
            let max = tool.tool.max_result_size_chars();
            outcome.content = tokio::task::spawn_blocking(move || {
                apply_result_policy(content, tool.name(), max, &dir, &id)
            })
            .await
            .map_err(|e| tool_core::Error::Pipeline(format!("result policy: {e}")))?;
            Ok(outcome)
        })
    }
}
