//! Step 3: the input must satisfy the tool's schema (compiled once at registration). String
//! inputs are parsed, numeric and boolean strings coerced, and failures rendered in Claude
//! Code's words. The tool's input normalisation runs on the accepted input.

use tool_core::stage::{Next, OutcomeFuture, PipelineStage};
use tool_core::{Stage, ToolInvocation, ToolOutcome};

/// The schema stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchemaCheck;

impl PipelineStage for SchemaCheck {
    fn run(self, mut inv: ToolInvocation, next: Next) -> OutcomeFuture {
        match inv.tool.schema.check(&inv.input) {
            Ok(v) => {
                inv.input = inv.tool.tool.normalize_input(v);
                next.run(inv)
            }
            Err(e) => {
                let text = e.to_tool_result_text(inv.tool.name());
                let out = ToolOutcome::refused(inv.tool_use_id, Stage::Schema, text);
                Box::pin(futures::future::ready(Ok(out)))
            }
        }
    }
}
