//! Step 6: the permission decision. The policy decides (rules × mode × the tool's own check),
//! the PreToolUse hooks' answer is folded in (a hook's allow only waives a prompt; its deny
//! beats everything), and an ask goes to the approver. With no approver an ask is refused with
//! the ask's own text, as Claude Code does in headless mode.

mod layer;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tool_core::texts::{REJECT_MESSAGE, REJECT_WITH_FEEDBACK_PREFIX};
use tool_core::{
    Approval, ApprovalRequest, Approver, Decision, DecisionReason, PermissionPolicy,
    PermissionRequest, Stage, ToolInvocation, ToolOutcome, Verdict,
};
use tower_service::Service;

pub use layer::PermissionLayer;

/// The service [`PermissionLayer`] produces.
#[derive(Clone)]
pub struct Permission<S> {
    inner: S,
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
}

fn refuse(inv: &ToolInvocation, decision: Decision, text: String) -> ToolOutcome {
    let mut out = ToolOutcome::refused(inv.tool_use_id.clone(), Stage::Permission, text);
    out.decision = Some(decision);
    out
}

impl<S> Service<ToolInvocation> for Permission<S>
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
        let policy = self.policy.clone();
        let approver = self.approver.clone();
        Box::pin(async move {
            let tool = inv.tool.tool.clone();
            let subject = tool.permission_subject(&inv.input, &inv.ctx);
            let hook = inv.hook_outcome.as_ref().and_then(|h| h.decision.clone());
            let request =
                PermissionRequest::for_tool(tool.as_ref(), &inv.input, &subject, &inv.ctx);
            let mut decision = policy.resolve_with_hook(&request, hook.as_ref());
            let stop = inv
                .hook_outcome
                .as_ref()
                .filter(|h| h.prevent_continuation)
                .map(|h| h.stop_reason.clone());
            if decision.verdict == Verdict::Deny {
                let text = match (&stop, decision.message.is_empty()) {
                    (Some(reason), true) => stopped_text(reason.as_deref()),
                    _ => decision.message.clone(),
                };
                return Ok(refuse(&inv, decision, text));
            }
            if decision.verdict == Verdict::Ask {
                let Some(approver) = approver else {
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
                                Ok(v) => inv.input = inv.tool.tool.normalize_input(v),
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
            }
            let stop = stop.map(|r| r.unwrap_or_else(|| "Execution stopped by hook".to_owned()));
            let mut outcome = inner.call(inv).await?;
            outcome.decision = Some(decision);
            if outcome.stop_reason.is_none() {
                outcome.stop_reason = stop;
            }
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
