//! The PostToolUse / PostToolUseFailure stage: once the tool has run, the matching hooks see
//! its raw output (or its error) and may add context for the model, report a blocking error,
//! stop the turn, or (for external tools only) replace the output.
//!
//! The stage joins the hooks' texts to the result itself, after a blank line each, the
//! result's own trailing whitespace dropped first, as Claude Code sends them. In the
//! orchestrator's stack it sits above the result-policy stage, so the texts join the result
//! after its size policy (an empty result's marker, a large result's preview), and a
//! replacement output of an external tool goes through the same size policy itself.

use std::sync::Arc;

use tool_core::stage::{Next, OutcomeFuture, PipelineStage, StageLayer};
use tool_core::{Stage, ToolInvocation, ToolResultContent};

use crate::hooks::{
    HookEvent, HookSession, Hooks, PostHookOutcome, PostToolUseInput, reminder_text, run_units,
};

/// The layer of the [`PostToolUse`] stage.
pub type PostToolUseLayer = StageLayer<PostToolUse>;

/// The PostToolUse / PostToolUseFailure stage.
#[derive(Clone, Debug)]
pub struct PostToolUse {
    hooks: Arc<Hooks>,
}

impl PostToolUse {
    /// A stage running `hooks`.
    pub fn new(hooks: Arc<Hooks>) -> Self {
        Self { hooks }
    }

    /// This stage as a tower layer.
    pub fn layer(self) -> PostToolUseLayer {
        StageLayer::new(self)
    }
}

impl PipelineStage for PostToolUse {
    fn run(self, inv: ToolInvocation, next: Next) -> OutcomeFuture {
        let hooks = self.hooks;
        Box::pin(async move {
            if hooks.post.is_empty() && hooks.post_failure.is_empty() {
                return next.run(inv).await;
            }
            let tool = inv.tool.clone();
            let tool_name = inv.tool_name().to_owned();
            let external = inv.tool.tool.is_external();
            let session = HookSession::from_context(&inv.ctx);
            let results_dir = inv.ctx.tool_results_dir.clone();
            let tool_input = inv.input.clone();
            let tool_use_id = inv.tool_use_id.clone();
            let started = std::time::Instant::now();
            let mut outcome = next.run(inv).await?;
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
                tool_use_id: tool_use_id.clone(),
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
            let mut texts = Vec::new();
            for (h, r) in results {
                tracing::info!(
                    target: "toolgate::audit",
                    kind = "hook",
                    event,
                    hook = %h.name,
                    blocking_error = r.blocking_error.as_deref(),
                    added_context = !r.additional_context.is_empty(),
                    stop = r.prevent_continuation,
                );
                if external
                    && !failed
                    && let Some(out) = r.updated_output
                {
                    let content = match &out {
                        serde_json::Value::String(s) => ToolResultContent::Text(s.clone()),
                        other => ToolResultContent::Text(other.to_string()),
                    };
                    let (tool, dir, id) = (tool.clone(), results_dir.clone(), tool_use_id.clone());
                    let max = tool.tool.max_result_size_chars();
                    outcome.content = tokio::task::spawn_blocking(move || {
                        tool_core::result::apply_result_policy(content, tool.name(), max, &dir, &id)
                    })
                    .await
                    .map_err(|e| tool_core::Error::Pipeline(format!("result policy: {e}")))?;
                    outcome.raw_output = Some(out);
                }
                if !r.additional_context.is_empty() {
                    texts.push(reminder_text(&format!(
                        "{event}:{tool_name} hook additional context: {}",
                        r.additional_context.join("\n")
                    )));
                }
                if let Some(err) = &r.blocking_error {
                    texts.push(reminder_text(&format!(
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
            join_texts(&mut outcome.content, texts);
            Ok(outcome)
        })
    }
}

/// Join hook texts to a result after a blank line each, the result's own trailing whitespace
/// dropped first (as Claude Code joins them); a result of blocks gets them as text blocks.
fn join_texts(content: &mut ToolResultContent, texts: Vec<String>) {
    for t in texts {
        content.append_note(&t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_join_after_a_blank_line_without_trailing_whitespace() {
        let mut c = ToolResultContent::Text("out\n\n".into());
        join_texts(&mut c, vec!["a".into(), "b".into()]);
        assert_eq!(c.to_text(), "out\n\na\n\nb");
        let mut empty = ToolResultContent::Text(String::new());
        join_texts(&mut empty, vec!["a".into()]);
        assert_eq!(empty.to_text(), "a");
        let mut untouched = ToolResultContent::Text("x \n".into());
        join_texts(&mut untouched, Vec::new());
        assert_eq!(untouched.to_text(), "x \n");
    }
}
