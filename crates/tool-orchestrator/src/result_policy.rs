//! Step 8: the model-facing content of a call that ran: empty results get Claude Code's
//! marker, large ones are persisted with a preview, error texts are cut in the middle past
//! 10,000 characters.

use tool_core::result::apply_result_policy;
use tool_core::stage::{Next, OutcomeFuture, PipelineStage};
use tool_core::texts::truncate_middle;
use tool_core::{Stage, ToolInvocation, ToolOutcome, ToolResultContent};

/// The result-policy stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResultPolicy;

impl PipelineStage for ResultPolicy {
    fn run(self, inv: ToolInvocation, next: Next) -> OutcomeFuture {
        let tool = inv.tool.clone();
        let dir = inv.ctx.tool_results_dir.clone();
        Box::pin(async move {
            let id = inv.tool_use_id.clone();
            let outcome = next.run(inv).await?;
            if outcome.stage != Stage::Ran {
                return Ok(outcome);
            }
            size_policy(outcome, &tool, &dir, &id).await
        })
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
    // A tool that said where its persisted output goes learns the file (or, when it stays
    // inline, loses the key).
    let persisting = tool_core::result::needs_persisting(&content, max);
    if let Some(serde_json::Value::Object(raw)) = outcome.raw_output.as_mut()
        && raw.contains_key(tool_core::result::PERSISTED_PATH_KEY)
    {
        if persisting && !matches!(content, ToolResultContent::Blocks(_)) {
            let path = tool_core::result::persisted_path(dir, id);
            raw.insert(
                tool_core::result::PERSISTED_PATH_KEY.into(),
                serde_json::Value::from(path.display().to_string()),
            );
        } else {
            raw.shift_remove(tool_core::result::PERSISTED_PATH_KEY);
            raw.shift_remove("persistedOutputSize");
        }
    }
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
