//! The single-call pipeline: find the tool, take the input, then the tower stack
//! schema → validate → PreToolUse → permission → result policy → PostToolUse → call.
//! Every exit produces a `tool_result` with the call's id; nothing panics out of it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tool_core::texts::{CANCEL_MESSAGE, error_calling_tool};
use tool_core::{
    Approver, Lookup, PermissionPolicy, Stage, ToolContext, ToolInvocation, ToolOutcome,
    ToolRegistry, ToolUse,
};
use tool_hooks::{Hooks, PostToolUseLayer, PreToolUseLayer};
use tower::ServiceBuilder;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use crate::call::{CallTool, panic_message};
use crate::permission::PermissionLayer;
use crate::result_policy::ResultPolicyLayer;
use crate::schema::SchemaLayer;
use crate::validate::ValidateLayer;

/// The boxed stack a [`Pipeline`] runs each call through.
pub type ToolService = BoxCloneSyncService<ToolInvocation, ToolOutcome, tool_core::Error>;

/// The assembled pipeline for one session's calls.
#[derive(Clone)]
pub struct Pipeline {
    registry: Arc<ToolRegistry>,
    service: ToolService,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

/// The standard stack around [`CallTool`], in the order of the architecture's table. The
/// first layer sees the call first.
pub fn standard_stack(
    hooks: Arc<Hooks>,
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
) -> ToolService {
    let stack = ServiceBuilder::new()
        .layer(SchemaLayer)
        .layer(ValidateLayer)
        .layer(PreToolUseLayer::new(hooks.clone()))
        .layer(PermissionLayer::new(policy, approver))
        .layer(ResultPolicyLayer)
        .layer(PostToolUseLayer::new(hooks))
        .service(CallTool);
    BoxCloneSyncService::new(stack)
}

/// The stack up to the permission decision, without running anything: schema → validate →
/// PreToolUse → permission, and a call that would run comes back as [`Stage::Ran`] with no
/// content and its decision. For dry runs ("what would happen to this call?") with hooks.
pub fn decision_stack(hooks: Arc<Hooks>, policy: Arc<dyn PermissionPolicy>) -> ToolService {
    let stack = ServiceBuilder::new()
        .layer(SchemaLayer)
        .layer(ValidateLayer)
        .layer(PreToolUseLayer::new(hooks))
        .layer(PermissionLayer::new(policy, None))
        .service(tower::service_fn(|inv: ToolInvocation| async move {
            Ok::<_, tool_core::Error>(ToolOutcome::ran(
                inv.tool_use_id,
                tool_core::ToolResultContent::Text(String::new()),
                false,
            ))
        }));
    BoxCloneSyncService::new(stack)
}

impl Pipeline {
    /// A pipeline over `registry` running calls through `service` (usually
    /// [`standard_stack`], possibly wrapped in a host's own middleware).
    pub fn new(registry: Arc<ToolRegistry>, service: ToolService) -> Self {
        Self { registry, service }
    }

    /// The registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Run one `tool_use` to its outcome. `offered` says which tools the model was offered.
    ///
    /// Cancel safety: dropping the future abandons the call; cancel `ctx.cancel` instead to
    /// get the call's cancellation text. Never panics: a panic anywhere in the pipeline
    /// becomes an error result for this call.
    pub async fn run(
        &self,
        tool_use: &ToolUse,
        ctx: ToolContext,
        offered: &(dyn Fn(&str) -> bool + Sync),
    ) -> ToolOutcome {
        let tool = match self.registry.lookup(&tool_use.name, &|n| offered(n)) {
            Lookup::Found(t) => t,
            Lookup::NotFound(text) => {
                return ToolOutcome::refused(tool_use.id.clone(), Stage::Lookup, text);
            }
        };
        if ctx.cancel.is_cancelled() {
            return ToolOutcome::refused(tool_use.id.clone(), Stage::Cancelled, CANCEL_MESSAGE);
        }
        let name = tool.name().to_owned();
        let span = tracing::debug_span!("tool_call", tool = %name, id = %tool_use.id);
        let inv = ToolInvocation::new(tool_use.id.clone(), tool, tool_use.input.clone(), ctx);
        let svc = self.service.clone();
        let fut = AssertUnwindSafe(svc.oneshot(inv)).catch_unwind();
        let _enter = span.enter();
        match fut.await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => ToolOutcome::refused(
                tool_use.id.clone(),
                Stage::Internal,
                error_calling_tool(&name, &e.to_string()),
            ),
            Err(panic) => {
                let msg = panic_message(panic.as_ref());
                tracing::error!(tool = %name, panic = %msg, "pipeline panicked");
                ToolOutcome::refused(
                    tool_use.id.clone(),
                    Stage::Internal,
                    error_calling_tool(&name, &msg),
                )
            }
        }
    }
}
