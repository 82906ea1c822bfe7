//! Step 7: the innermost service, which calls the tool under the call's cancellation token.
//! A panic inside the tool becomes an error result for this call alone.

use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use tool_core::texts::{CANCEL_MESSAGE, error_calling_tool};
use tool_core::{Stage, ToolCallError, ToolInvocation, ToolOutcome};
use tower_service::Service;

/// Calls the tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallTool;

impl Service<ToolInvocation> for CallTool {
    type Response = ToolOutcome;
    type Error = tool_core::Error;
    type Future = BoxFuture<'static, Result<ToolOutcome, tool_core::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        Box::pin(async move {
            if inv.ctx.cancel.is_cancelled() {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Cancelled,
                    CANCEL_MESSAGE,
                ));
            }
            let tool = inv.tool.tool.clone();
            let cancel = inv.ctx.cancel.clone();
            let run = AssertUnwindSafe(tool.call(inv.input.clone(), &inv.ctx)).catch_unwind();
            let result = tokio::select! {
                r = run => r,
                () = cancel.cancelled() => Ok(Err(ToolCallError::interrupted())),
            };
            Ok(match result {
                Ok(Ok(output)) => {
                    let mut out = ToolOutcome::ran(inv.tool_use_id, output.content, false);
                    out.raw_output = Some(output.raw);
                    out.extra_messages = output.extra_messages;
                    out.context_modifiers.extend(output.context_modifiers);
                    out
                }
                Ok(Err(err)) => {
                    let mut out =
                        ToolOutcome::ran(inv.tool_use_id, err.message.clone().into(), true);
                    if let Some(cwd) = err.cwd.clone() {
                        out.context_modifiers
                            .push(tool_core::ContextModifier::new(move |c| c.cwd = cwd));
                    }
                    out.call_error = Some(err);
                    out
                }
                Err(panic) => {
                    let msg = panic_message(panic.as_ref());
                    tracing::error!(tool = inv.tool.name(), panic = %msg, "tool panicked");
                    ToolOutcome::refused(
                        inv.tool_use_id,
                        Stage::Internal,
                        error_calling_tool(inv.tool.name(), &format!("the tool panicked: {msg}")),
                    )
                }
            })
        })
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
