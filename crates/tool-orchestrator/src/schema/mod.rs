//! Step 3: the input must satisfy the tool's schema (compiled once at registration). String
//! inputs are parsed, numeric and boolean strings coerced, and failures rendered in Claude
//! Code's words. The tool's input normalisation runs on the accepted input.

mod layer;

use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use tool_core::{Stage, ToolInvocation, ToolOutcome};
use tower_service::Service;

pub use layer::SchemaLayer;

/// The service [`SchemaLayer`] produces.
#[derive(Clone, Debug)]
pub struct Schema<S> {
    inner: S,
}

impl<S> Service<ToolInvocation> for Schema<S>
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
        match inv.tool.schema.check(&inv.input) {
            Ok(v) => {
                inv.input = inv.tool.tool.normalize_input(v);
                let clone = self.inner.clone();
                let mut inner = std::mem::replace(&mut self.inner, clone);
                inner.call(inv).boxed()
            }
            Err(e) => {
                let text = e.to_tool_result_text(inv.tool.name());
                futures::future::ready(Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Schema,
                    text,
                )))
                .boxed()
            }
        }
    }
}
