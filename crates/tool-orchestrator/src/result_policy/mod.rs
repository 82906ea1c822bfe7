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
            let outcome = inner.call(inv).await?;
            if outcome.stage != Stage::Ran {
                return Ok(outcome);
            }
            let mut outcome = size_policy(outcome, &tool, &dir, &id).await?;
            append_hook_texts(&mut outcome);
            Ok(outcome)
        })
    }
}

/// Texts from PostToolUse hooks join the result after a blank line, the result's own trailing
/// whitespace dropped first (as Claude Code joins them).
fn append_hook_texts(outcome: &mut ToolOutcome) {
    if outcome.appended.is_empty() {
        return;
    }
    let texts = std::mem::take(&mut outcome.appended);
    match &mut outcome.content {
        ToolResultContent::Text(t) => {
            let mut joined = t.trim_end().to_owned();
            for a in texts {
                if !joined.is_empty() {
                    joined.push_str("\n\n");
                }
                joined.push_str(&a);
            }
            *t = joined;
        }
        ToolResultContent::Blocks(blocks) => {
            blocks.extend(texts.into_iter().map(tool_core::ContentBlock::text));
        }
    }
}

/// Empty results get the marker, large ones are persisted, long error texts are cut.
async fn size_policy(
    mut outcome: ToolOutcome,
    tool: &std::sync::Arc<tool_core::RegisteredTool>,
    dir: &std::path::Path,
    id: &str,
) -> Result<ToolOutcome, tool_core::Error> {
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
    // Only writing a large result to disk is worth the trip to the blocking pool.
    if !tool_core::result::needs_persisting(&content, max) {
        outcome.content = apply_result_policy(content, tool.name(), max, dir, id);
        return Ok(outcome);
    }
    let (tool, dir, id) = (tool.clone(), dir.to_path_buf(), id.to_owned());
    outcome.content = tokio::task::spawn_blocking(move || {
        apply_result_policy(content, tool.name(), max, &dir, &id)
    })
    .await
    .map_err(|e| tool_core::Error::Pipeline(format!("result policy: {e}")))?;
    Ok(outcome)
}
