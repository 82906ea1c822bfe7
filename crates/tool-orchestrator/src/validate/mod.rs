//! Step 4: the tool's own `validate_input` (file read yet? stale? unique match? path denied?).
//! Its message reaches the model wrapped in `<tool_use_error>`; no hook has run yet.

mod layer;

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tool_core::texts::wrap_tool_use_error;
use tool_core::{Stage, ToolInvocation, ToolOutcome};
use tower_service::Service;

pub use layer::ValidateLayer;

/// The service [`ValidateLayer`] produces.
#[derive(Clone, Debug)]
pub struct Validate<S> {
    inner: S,
}

impl<S> Service<ToolInvocation> for Validate<S>
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
        Box::pin(async move {
            if let Err(f) = inv.tool.tool.validate_input(&inv.input, &inv.ctx).await {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Validation,
                    wrap_tool_use_error(&f.message),
                ));
            }
            inner.call(inv).await
        })
    }
}
