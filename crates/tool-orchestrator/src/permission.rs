//! Step 6: the permission decision. The policy decides (rules × mode × the tool's own check),
//! the PreToolUse hooks' answer is folded in (a hook's allow only waives a prompt; its deny
//! beats everything, and the PreToolUse stage has already stopped such a call), and an ask goes
//! to the approver. With no approver an ask is refused with the ask's own text, as Claude Code
//! does in headless mode.

use std::sync::Arc;

use tool_core::stage::{Next, OutcomeFuture, PipelineStage};
use tool_core::texts::{REJECT_MESSAGE, REJECT_WITH_FEEDBACK_PREFIX};
use tool_core::{
    Approval, ApprovalRequest, Approver, Decision, DecisionReason, PermissionPolicy,
    PermissionRequest, Stage, ToolInvocation, ToolOutcome, Verdict,
};

/// The permission stage: a policy, and who answers its asks.
#[derive(Clone)]
pub struct Permission {
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
}

impl Permission {
    /// A stage asking `policy`, and `approver` for asks (none: asks are refused).
    pub fn new(policy: Arc<dyn PermissionPolicy>, approver: Option<Arc<dyn Approver>>) -> Self {
        Self { policy, approver }
    }
}

impl std::fmt::Debug for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permission")
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

fn refuse(inv: &ToolInvocation, decision: Decision, text: String) -> ToolOutcome {
    let mut out = ToolOutcome::refused(inv.tool_use_id.clone(), Stage::Permission, text);
    out.decision = Some(decision);
    out
}

impl PipelineStage for Permission {
    fn run(self, mut inv: ToolInvocation, next: Next) -> OutcomeFuture {
        let Self { policy, approver } = self;
        Box::pin(async move {
            let tool = inv.tool.tool.clone();
            let subject = tool.permission_subject(&inv.input, &inv.ctx);
            // Set when the approver or the decision rewrites the input after the decision.
            let mut rewritten = false;
            let hook = inv.hook_outcome.as_ref().and_then(|h| h.decision.clone());
            let request =
                PermissionRequest::for_tool(tool.as_ref(), &inv.input, &subject, &inv.ctx);
            let mut decision = policy.resolve_with_hook(&request, hook.as_ref());
            if decision.verdict == Verdict::Deny {
                let stop = inv.hook_outcome.as_ref().filter(|h| h.prevent_continuation);
                let text = match stop {
                    Some(h) if decision.message.is_empty() => {
                        stopped_text(h.stop_reason.as_deref())
                    }
                    _ => decision.message.clone(),
                };
                return Ok(refuse(&inv, decision, text));
            }
            if decision.verdict == Verdict::Ask {
                let Some(approver) = approver.clone() else {
                    decision.reason = match decision.reason {
                        DecisionReason::NotGranted => DecisionReason::NoApprover,
                        other => other,
                    };
                    let text = decision.message.clone();
                    return Ok(refuse(&inv, decision, text));
                };
                let answer = approver
                    .approve(ApprovalRequest {
                        tool_name: inv.tool.name().to_owned(),
                        tool_use_id: inv.tool_use_id.clone(),
                        input: inv.input.clone(),
                        decision: decision.clone(),
                    })
                    .await;
                match answer {
                    Approval::Approve { updated_input } => {
                        if let Some(updated) = updated_input {
                            match inv.tool.schema.check(&updated) {
                                Ok(v) => {
                                    inv.input = inv.tool.tool.normalize_input(v);
                                    rewritten = true;
                                }
                                Err(e) => {
                                    let text = e.to_tool_result_text(inv.tool.name());
                                    return Ok(refuse(&inv, decision, text));
                                }
                            }
                        }
                        decision = Decision::allow(DecisionReason::Approver { approved: true });
                    }
                    Approval::Reject { feedback } => {
                        let text = match feedback {
                            Some(f) => format!("{REJECT_WITH_FEEDBACK_PREFIX}{f}"),
                            None => REJECT_MESSAGE.to_owned(),
                        };
                        let d = Decision::deny(
                            text.clone(),
                            DecisionReason::Approver { approved: false },
                        );
                        return Ok(refuse(&inv, d, text));
                    }
                }
            }
            if let Some(updated) = decision.updated_input.take() {
                inv.input = updated;
                rewritten = true;
            }
            // Bind the call to where its paths led when it was allowed: a file tool refuses a
            // path that leads elsewhere by the time it acts (a link swapped in meanwhile). The
            // subject is worked out again only when the input was rewritten on the way.
            let subject = if rewritten {
                tool.permission_subject(&inv.input, &inv.ctx)
            } else {
                subject
            };
            if let tool_core::PermissionSubject::ReadPaths(paths)
            | tool_core::PermissionSubject::WritePaths(paths) = subject
            {
                inv.ctx.decided_targets = Arc::new(
                    paths
                        .into_iter()
                        .map(|p| {
                            let target = tool_core::resolve_target(&p);
                            (p, target)
                        })
                        .collect(),
                );
            }
            // What a running tool may need of the decision: why it was allowed (the sandbox
            // reports a program it stops against it), and who answers an ask that comes up
            // while it runs.
            inv.ctx.allowed_by = Some(decision.reason.clone());
            inv.ctx.run_approver = approver;
            let mut outcome = next.run(inv).await?;
            outcome.decision = Some(decision);
            Ok(outcome)
        })
    }
}

fn stopped_text(reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("Execution stopped by PreToolUse hook: {r}"),
        None => "Execution stopped by PreToolUse hook".to_owned(),
    }
}
