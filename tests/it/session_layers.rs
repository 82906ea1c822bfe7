//! A session with the host's own middleware (around the whole stack, around the tool call) and
//! host tools allowed without a prompt.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tool_core::{DecisionReason, PermissionMode, Stage, ToolInvocation, Verdict};
use tool_orchestrator::{ALLOW_TOOLS_SOURCE, ToolService};
use toolgate_tests::{Sandbox, call, policy};

/// A layer counting the calls that reach it.
fn counting(
    n: Arc<AtomicUsize>,
) -> impl tower::Layer<
    ToolService,
    Service = impl tower::Service<
        ToolInvocation,
        Response = tool_core::ToolOutcome,
        Error = tool_core::Error,
        Future = impl Send + 'static,
    > + Clone
              + Send
              + Sync
              + 'static,
> + Send
+ Sync
+ 'static {
    tower::layer::layer_fn(move |inner: ToolService| {
        let n = n.clone();
        tower::ServiceExt::map_request(inner, move |inv: ToolInvocation| {
            n.fetch_add(1, Ordering::SeqCst);
            inv
        })
    })
}

#[tokio::test]
async fn layers_sit_around_the_stack_and_around_the_call() {
    let sb = Sandbox::new();
    let (outer, inner) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut s = sb
        .builder(&["Empty"])
        .layer(counting(outer.clone()))
        .layer_around_call(counting(inner.clone()))
        .build();
    // Allowed: both layers see it.
    assert_eq!(call(&mut s, "Empty", json!({})).await.stage, Stage::Ran);
    // Not granted (no rule, no approver): only the outer layer sees it.
    assert_eq!(
        call(&mut s, "Picky", json!({"text": "x"})).await.stage,
        Stage::Permission
    );
    // Refused by the schema: only the outer layer sees it.
    assert_eq!(
        call(&mut s, "Empty", json!({"nope": 1})).await.stage,
        Stage::Schema
    );
    assert_eq!(outer.load(Ordering::SeqCst), 3);
    assert_eq!(inner.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn allow_tools_waives_only_the_prompt_nothing_asked_for() {
    let sb = Sandbox::new();
    // Without it, a host tool nothing allows is refused (no approver to ask).
    let mut s = sb.builder(&[]).build();
    let o = call(&mut s, "Picky", json!({"text": "x"})).await;
    assert_eq!(o.stage, Stage::Permission);

    let mut s = sb.builder(&[]).allow_tools(["Picky"]).build();
    let o = call(&mut s, "Picky", json!({"text": "x"})).await;
    assert_eq!(o.stage, Stage::Ran, "{}", o.content.to_text());
    assert_eq!(
        o.decision.map(|d| d.reason),
        Some(DecisionReason::Rule {
            rule: "Picky".into(),
            list: tool_core::RuleList::Allow,
            source: ALLOW_TOOLS_SOURCE.into(),
        })
    );
    // Other tools are untouched.
    assert_eq!(
        call(&mut s, "Empty", json!({})).await.stage,
        Stage::Permission
    );
    // dontAsk mode: an ungranted call is denied, but an allowed tool is allowed.
    s.context_mut().permission_mode = PermissionMode::DontAsk;
    assert_eq!(
        call(&mut s, "Picky", json!({"text": "x"})).await.stage,
        Stage::Ran
    );
    assert_eq!(
        call(&mut s, "Empty", json!({})).await.stage,
        Stage::Permission
    );

    // An ask rule still asks, in either mode.
    for mode in [PermissionMode::Default, PermissionMode::DontAsk] {
        let mut s = sb
            .builder(&[])
            .policy(Arc::new(policy(&[], &[], &["Picky"])))
            .allow_tools(["Picky"])
            .build();
        s.context_mut().permission_mode = mode;
        let o = call(&mut s, "Picky", json!({"text": "x"})).await;
        assert_eq!(o.stage, Stage::Permission, "{mode}");
        assert_ne!(
            o.decision.map(|d| d.verdict),
            Some(Verdict::Allow),
            "{mode}"
        );
    }
    // A whole-tool deny still removes the tool.
    let mut s = sb
        .builder(&[])
        .policy(Arc::new(policy(&["Picky"], &[], &[])))
        .allow_tools(["Picky"])
        .build();
    assert_eq!(
        call(&mut s, "Picky", json!({"text": "x"})).await.stage,
        Stage::Lookup
    );
}
