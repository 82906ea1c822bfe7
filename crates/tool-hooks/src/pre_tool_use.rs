//! The PreToolUse stage: runs the matching hooks before the permission decision.
//!
//! Matching hooks (matcher and `if` condition) run concurrently, except that a sequential group
//! runs in declared order, each hook seeing the input the previous one rewrote. Their decisions
//! combine as `deny > ask > allow` whatever order they finish in, each with its own reason. A
//! replacement input goes back through the tool's schema (and its normalisation); an invalid
//! one ends the call with Claude Code's text. Hook context for the model follows the call's
//! result.
//!
//! A deny (a JSON deny or block, exit code 2, a `fail_closed` hook that gave no answer) stops
//! the call here, whatever sits below: the rest of the stack is never called and the result
//! is Claude Code's `PreToolUse:<Tool> hook error: <reason>`. An ask stops it too, with the
//! ask's text, unless the stage was told that a permission stage below answers asks
//! ([`PreToolUse::before_permission_stage`]): there a hook's ask or allow is combined with
//! the rules (an allow only waives a prompt nothing else asked for).

use std::sync::Arc;

use tool_core::stage::{Next, OutcomeFuture, PipelineStage, StageLayer};
use tool_core::{HookOutcome, Stage, ToolInvocation, ToolOutcome, Verdict};

use crate::hooks::{HookSession, Hooks, PreToolUseInput, reminder, run_units};

/// The layer of the [`PreToolUse`] stage.
pub type PreToolUseLayer = StageLayer<PreToolUse>;

/// The PreToolUse stage: the hooks it runs, and who answers their asks.
#[derive(Clone, Debug)]
pub struct PreToolUse {
    hooks: Arc<Hooks>,
    permission_stage_below: bool,
}

impl PreToolUse {
    /// A stage running `hooks` that enforces their answers itself: a deny or an ask stops the
    /// call (no one below would answer an ask), an allow lets it through.
    pub fn new(hooks: Arc<Hooks>) -> Self {
        Self {
            hooks,
            permission_stage_below: false,
        }
    }

    /// Leave a hook's ask and allow to the permission stage below this one, which combines them
    /// with the rules (the orchestrator's stack does this). A deny still stops the call here.
    pub fn before_permission_stage(mut self) -> Self {
        self.permission_stage_below = true;
        self
    }

    /// This stage as a tower layer.
    pub fn layer(self) -> PreToolUseLayer {
        StageLayer::new(self)
    }
}

impl PipelineStage for PreToolUse {
    fn run(self, mut inv: ToolInvocation, next: Next) -> OutcomeFuture {
        Box::pin(async move {
            let tool_name = inv.tool_name().to_owned();
            let matching: Vec<_> = self
                .hooks
                .pre
                .iter()
                .filter(|h| h.applies(&tool_name, &inv.input))
                .cloned()
                .collect();
            if matching.is_empty() {
                return next.run(inv).await;
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
            let Some(outcomes) = unless_cancelled(run, cancel).await else {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Cancelled,
                    tool_core::texts::CANCEL_MESSAGE,
                ));
            };
            let mut combined = HookOutcome::default();
            for (h, o) in outcomes {
                tracing::info!(
                    target: "toolgate::audit",
                    kind = "hook",
                    event = "PreToolUse",
                    hook = %h.name,
                    verdict = o.decision.as_ref().map(|d| d.verdict.to_string()),
                    reason = o.decision.as_ref().and_then(|d| d.reason.clone()),
                    rewrote_input = o.updated_input.is_some(),
                );
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
            let contexts = std::mem::take(&mut combined.additional_context);
            let notes = std::mem::take(&mut combined.user_notes);
            let stop = combined.prevent_continuation.then(|| {
                combined
                    .stop_reason
                    .clone()
                    .unwrap_or_else(|| "Execution stopped by hook".to_owned())
            });
            let stopping = match &combined.decision {
                Some(d) if d.verdict == Verdict::Deny => Some(d.deny_decision(&tool_name)),
                Some(d) if d.verdict == Verdict::Ask && !self.permission_stage_below => {
                    Some(d.ask_decision(&tool_name))
                }
                _ => None,
            };
            let mut outcome = match stopping {
                Some(decision) => {
                    let mut out = ToolOutcome::refused(
                        inv.tool_use_id,
                        Stage::PreToolUse,
                        decision.message.clone(),
                    );
                    out.decision = Some(decision);
                    out
                }
                None => {
                    inv.hook_outcome = Some(combined);
                    let mut out = next.run(inv).await?;
                    // A call the permission stage refused does not also stop the turn.
                    if out.stop_reason.is_none() && out.stage != Stage::Permission {
                        out.stop_reason = stop;
                    }
                    out
                }
            };
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
async fn unless_cancelled<F: std::future::Future>(
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
