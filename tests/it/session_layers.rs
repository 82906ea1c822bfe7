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

#[tokio::test]
async fn policy_files_give_the_session_rules_and_hooks_from_one_read() {
    use tool_core::HookOutcome;
    use tool_hooks::{Hooks, PreToolUseInput};
    use tool_permissions::{PolicySources, Trust};

    let sb = Sandbox::new();
    sb.write(
        ".toolgate/policy.toml",
        "[permissions]\nallow = [\"Bash(touch:*)\"]\n\n\
         [[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\
         command = \"grep -q secret && { echo 'no secrets' >&2; exit 2; } || exit 0\"\n",
    );
    let home = sb.path("home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    for trust in [Trust::Trusted, Trust::Untrusted] {
        let mut sources = PolicySources::standard(&sb.ws(), &home, None, trust);
        sources.managed.clear();
        let files = sources.read().unwrap_or_else(|e| panic!("{e}"));
        // An in-process hook set before the files' hooks keeps running beside them.
        let mut own = Hooks::new();
        own.pre_tool_use("Bash", |_: PreToolUseInput| async {
            HookOutcome {
                additional_context: vec!["host hook ran".into()],
                ..HookOutcome::default()
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let mut s = sb
            .builder(&[])
            .hooks(own)
            .policy_files(&files)
            .unwrap_or_else(|e| panic!("{e}"))
            .build();
        let plain = call(&mut s, "Bash", json!({"command": "touch hi"})).await;
        let secret = call(&mut s, "Bash", json!({"command": "touch secret"})).await;
        let host_ran = |o: &tool_core::ToolOutcome| {
            o.hook_messages
                .iter()
                .any(|m| format!("{m:?}").contains("host hook ran"))
        };
        match trust {
            Trust::Trusted => {
                assert!(s.load_notes().is_empty(), "{:?}", s.load_notes());
                assert_eq!(plain.stage, Stage::Ran, "{}", plain.content.to_text());
                assert!(host_ran(&plain));
                assert_eq!(secret.stage, Stage::PreToolUse);
                assert!(
                    secret.content.to_text().ends_with("no secrets\n"),
                    "{}",
                    secret.content.to_text()
                );
                assert!(host_ran(&secret));
            }
            _ => {
                // Neither the project's allow rule nor its hook applies, and both are noted.
                let notes = s.load_notes().join("\n");
                assert!(notes.contains("Bash(touch:*)"), "{notes}");
                assert!(notes.contains("hooks in"), "{notes}");
                assert_eq!(plain.stage, Stage::Permission);
                assert_eq!(secret.stage, Stage::Permission);
                assert!(host_ran(&plain));
            }
        }
    }
}
