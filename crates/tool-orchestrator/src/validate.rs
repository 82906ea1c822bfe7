//! Step 4: the tool's own `validate_input` (file read yet? stale? unique match? path denied?).
//! Its message reaches the model wrapped in `<tool_use_error>`; no hook has run yet.

use tool_core::stage::{Next, OutcomeFuture, PipelineStage};
use tool_core::texts::wrap_tool_use_error;
use tool_core::{Stage, ToolInvocation, ToolOutcome};

/// The validation stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct Validate;

impl PipelineStage for Validate {
    fn run(self, inv: ToolInvocation, next: Next) -> OutcomeFuture {
        Box::pin(async move {
            if let Err(f) = inv.tool.tool.validate_input(&inv.input, &inv.ctx).await {
                return Ok(ToolOutcome::refused(
                    inv.tool_use_id,
                    Stage::Validation,
                    wrap_tool_use_error(&f.message),
                ));
            }
            next.run(inv).await
        })
    }
}
