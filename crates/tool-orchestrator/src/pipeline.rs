//! The single-call pipeline: find the tool, take the input, then the tower stack
//! schema → validate → PreToolUse → permission → PostToolUse → result policy → call.
//! Every exit produces a `tool_result` with the call's id; nothing panics out of it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tool_core::stage::StageLayer;
use tool_core::texts::{CANCEL_MESSAGE, error_calling_tool};
use tool_core::{
    Approver, Lookup, PermissionPolicy, Stage, ToolContext, ToolInvocation, ToolOutcome,
    ToolRegistry, ToolUse,
};
use tool_hooks::{Hooks, PostToolUse, PreToolUse};
use tower::ServiceBuilder;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;
use tracing::Instrument as _;

use crate::call::{CallTool, panic_message};
use crate::permission::Permission;
use crate::result_policy::ResultPolicy;
use crate::schema::SchemaCheck;
use crate::validate::Validate;

/// The boxed stack a [`Pipeline`] runs each call through.
pub type ToolService = BoxCloneSyncService<ToolInvocation, ToolOutcome, tool_core::Error>;

/// A host's middleware, boxed: it wraps a part of the stack (see [`Stack`]).
pub(crate) type BoxedLayer = Box<dyn FnOnce(ToolService) -> ToolService + Send + Sync>;

/// A host's tower middleware for a session's stack: any layer over the boxed [`ToolService`]
/// whose service is again a cloneable, thread-safe service of tool calls.
pub trait HostLayer: Send + Sync + 'static {
    /// Wrap `inner`.
    fn wrap(self, inner: ToolService) -> ToolService;
}

impl<L> HostLayer for L
where
    L: tower_layer::Layer<ToolService> + Send + Sync + 'static,
    L::Service: tower_service::Service<ToolInvocation, Response = ToolOutcome, Error = tool_core::Error>
        + Clone
        + Send
        + Sync
        + 'static,
    <L::Service as tower_service::Service<ToolInvocation>>::Future: Send + 'static,
{
    fn wrap(self, inner: ToolService) -> ToolService {
        BoxCloneSyncService::new(self.layer(inner))
    }
}

/// Box a host layer as a [`BoxedLayer`].
pub(crate) fn boxed_layer(layer: impl HostLayer) -> BoxedLayer {
    Box::new(move |inner| layer.wrap(inner))
}

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

/// The standard stack around [`CallTool`]; the first stage sees the call first:
///
/// 1. [`SchemaCheck`]: the input against the tool's schema, then its normalisation;
/// 2. [`Validate`]: the tool's own `validate_input`;
/// 3. [`PreToolUse`] hooks: a deny stops the call here; an ask or allow goes on to
/// 4. [`Permission`]: the policy, combined with the hooks' answer, and the approver for asks;
/// 5. [`PostToolUse`] hooks: their texts join the result after its size policy;
/// 6. [`ResultPolicy`]: empty-result marker, large results persisted, long errors cut;
/// 7. [`CallTool`]: the tool itself, under the call's cancellation token.
pub fn standard_stack(
    hooks: Arc<Hooks>,
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
) -> ToolService {
    Stack::new(hooks, policy, approver).build()
}

/// The standard stack with a host's middleware at the two documented places: around the
/// whole stack (it sees every call first, before the schema check, and every outcome last)
/// and around the tool call (it sees only calls that passed every check, and their raw
/// outcome before the result policy and the PostToolUse hooks).
pub(crate) struct Stack {
    hooks: Arc<Hooks>,
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
    pub(crate) around_stack: Vec<BoxedLayer>,
    pub(crate) around_call: Vec<BoxedLayer>,
}

impl Stack {
    pub(crate) fn new(
        hooks: Arc<Hooks>,
        policy: Arc<dyn PermissionPolicy>,
        approver: Option<Arc<dyn Approver>>,
    ) -> Self {
        Self {
            hooks,
            policy,
            approver,
            around_stack: Vec::new(),
            around_call: Vec::new(),
        }
    }

    /// Assemble it: of several layers at one place, the first added is the outermost.
    pub(crate) fn build(self) -> ToolService {
        let call = wrap(BoxCloneSyncService::new(CallTool), self.around_call);
        let stack = ServiceBuilder::new()
            .layer(StageLayer::new(SchemaCheck))
            .layer(StageLayer::new(Validate))
            .layer(
                PreToolUse::new(self.hooks.clone())
                    .before_permission_stage()
                    .layer(),
            )
            .layer(StageLayer::new(Permission::new(self.policy, self.approver)))
            .layer(PostToolUse::new(self.hooks).layer())
            .layer(StageLayer::new(ResultPolicy))
            .service(call);
        wrap(BoxCloneSyncService::new(stack), self.around_stack)
    }
}

fn wrap(mut service: ToolService, layers: Vec<BoxedLayer>) -> ToolService {
    for layer in layers.into_iter().rev() {
        service = layer(service);
    }
    service
}

/// The stack up to the permission decision, without running anything: schema → validate →
/// PreToolUse → permission, and a call that would run comes back as [`Stage::Ran`] with no
/// content and its decision. For dry runs ("what would happen to this call?") with hooks.
pub fn decision_stack(hooks: Arc<Hooks>, policy: Arc<dyn PermissionPolicy>) -> ToolService {
    let stack = ServiceBuilder::new()
        .layer(StageLayer::new(SchemaCheck))
        .layer(StageLayer::new(Validate))
        .layer(PreToolUse::new(hooks).before_permission_stage().layer())
        .layer(StageLayer::new(Permission::new(policy, None)))
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
        let span = tracing::info_span!(
            "tool_call",
            session = %ctx.session_id,
            tool_use_id = %tool_use.id,
            tool = %tool_use.name
        );
        let started = std::time::Instant::now();
        let outcome = match self.registry.lookup(&tool_use.name, &|n| offered(n)) {
            Lookup::NotFound(text) => {
                ToolOutcome::refused(tool_use.id.clone(), Stage::Lookup, text)
            }
            // Refused before anything walks it recursively (a clone, the schema, a hook's
            // JSON): a value nested thousands deep would overflow the stack.
            Lookup::Found(tool)
                if tool_core::exceeds_depth(&tool_use.input, tool_core::MAX_INPUT_DEPTH) =>
            {
                ToolOutcome::refused(
                    tool_use.id.clone(),
                    Stage::Schema,
                    tool_core::too_deep_text(tool.name()),
                )
            }
            _ if ctx.cancel.is_cancelled() => {
                ToolOutcome::refused(tool_use.id.clone(), Stage::Cancelled, CANCEL_MESSAGE)
            }
            Lookup::Found(tool) => {
                let name = tool.name().to_owned();
                let inv =
                    ToolInvocation::new(tool_use.id.clone(), tool, tool_use.input.clone(), ctx);
                let svc = self.service.clone();
                let fut = AssertUnwindSafe(svc.oneshot(inv)).catch_unwind();
                match fut.instrument(span.clone()).await {
                    Ok(Ok(outcome)) => outcome,
                    Ok(Err(e)) => ToolOutcome::refused(
                        tool_use.id.clone(),
                        Stage::Internal,
                        error_calling_tool(&name, &e.to_string()),
                    ),
                    Err(panic) => {
                        let msg = panic_message(panic.as_ref());
                        tracing::error!(parent: &span, tool = %name, panic = %msg, "pipeline panicked");
                        ToolOutcome::refused(
                            tool_use.id.clone(),
                            Stage::Internal,
                            error_calling_tool(&name, &msg),
                        )
                    }
                }
            }
        };
        span.in_scope(|| crate::audit::emit_call(tool_use, &outcome, started.elapsed()));
        outcome
    }
}
