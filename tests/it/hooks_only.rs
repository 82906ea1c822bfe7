//! tool-hooks used alone, around a host's own tower service (no orchestrator, no policy): the
//! PreToolUse stage enforces its hooks' answers itself and the PostToolUse stage joins its own
//! texts to the result.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_core::{
    HookOutcome, Stage, ToolContext, ToolInvocation, ToolOutcome, ToolRegistry, ToolResultContent,
    Verdict,
};
use tool_hooks::{
    CommandSpec, HookEvent, Hooks, PostHookOutcome, PostToolUse, PostToolUseInput, PreToolUse,
    PreToolUseInput,
};
use tower::{ServiceBuilder, ServiceExt};

/// The host's own execution: counts its calls and answers `ran <command>`.
fn host_service(
    calls: Arc<AtomicUsize>,
) -> impl tower::Service<
    ToolInvocation,
    Response = ToolOutcome,
    Error = tool_core::Error,
    Future = impl Send + 'static,
> + Clone
+ Send
+ 'static {
    tower::service_fn(move |inv: ToolInvocation| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            let text = format!("ran {}", inv.input["command"].as_str().unwrap_or(""));
            let mut out = ToolOutcome::ran(inv.tool_use_id, ToolResultContent::Text(text), false);
            out.raw_output = Some(json!({"stdout": "ran"}));
            Ok::<_, tool_core::Error>(out)
        }
    })
}

/// Run one Bash call through PreToolUse → PostToolUse → the host's service.
async fn run(hooks: Hooks, command: &str) -> (ToolOutcome, usize) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry: ToolRegistry = builtin_tools::registry().unwrap_or_else(|e| panic!("{e}"));
    let tool = registry
        .get("Bash")
        .cloned()
        .unwrap_or_else(|| panic!("no Bash tool"));
    let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
    let calls = Arc::new(AtomicUsize::new(0));
    let hooks = Arc::new(hooks);
    let stack = ServiceBuilder::new()
        .layer(PreToolUse::new(hooks.clone()).layer())
        .layer(PostToolUse::new(hooks).layer())
        .service(host_service(calls.clone()));
    let inv = ToolInvocation::new("toolu_1", tool, json!({"command": command}), ctx);
    let out = stack.oneshot(inv).await.unwrap_or_else(|e| panic!("{e}"));
    (out, calls.load(Ordering::SeqCst))
}

fn deny_rm(input: PreToolUseInput) -> impl std::future::Future<Output = HookOutcome> {
    let rm = input.tool_input["command"]
        .as_str()
        .is_some_and(|c| c.contains("rm -rf"));
    async move {
        if rm {
            HookOutcome::deny("no rm -rf here")
        } else {
            HookOutcome::default()
        }
    }
}

#[tokio::test]
async fn a_deny_hook_stops_the_call_without_an_orchestrator() {
    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("Bash", deny_rm)
        .unwrap_or_else(|e| panic!("{e}"));
    let (out, calls) = run(hooks.clone(), "rm -rf /tmp/x").await;
    assert_eq!(calls, 0, "the host's service must not run a denied call");
    assert_eq!(out.stage, Stage::PreToolUse);
    assert!(out.is_error);
    assert_eq!(
        out.content.to_text(),
        "PreToolUse:Bash hook error: no rm -rf here"
    );
    assert_eq!(out.decision.map(|d| d.verdict), Some(Verdict::Deny));
    // The same stack lets other calls through.
    let (out, calls) = run(hooks, "ls").await;
    assert_eq!((calls, out.content.to_text().as_str()), (1, "ran ls"));
}

#[tokio::test]
async fn a_fail_closed_hook_whose_script_is_missing_denies() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.path().join("no-such-hook.sh").display().to_string();
    let mut hooks = Hooks::new();
    hooks
        .command_group(
            HookEvent::PreToolUse,
            "Bash",
            false,
            vec![CommandSpec {
                fail_closed: true,
                ..CommandSpec::new(missing.clone())
            }],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let (out, calls) = run(hooks, "rm -rf /tmp/x").await;
    assert_eq!(
        calls, 0,
        "a fail_closed hook that gave no answer must stop the call"
    );
    assert_eq!(out.stage, Stage::PreToolUse);
    let text = out.content.to_text();
    assert!(
        text.starts_with(&format!("PreToolUse:Bash hook error: [{missing}]:")),
        "{text}"
    );
    assert!(text.contains("fail_closed"), "{text}");
}

#[tokio::test]
async fn an_exit_2_hook_denies_and_an_ask_with_no_one_to_ask_refuses() {
    let mut hooks = Hooks::new();
    hooks
        .command_group(
            HookEvent::PreToolUse,
            "Bash",
            false,
            vec![CommandSpec::new(
                "cat >/dev/null; echo 'not today' >&2; exit 2",
            )],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let (out, calls) = run(hooks, "make deploy").await;
    assert_eq!(calls, 0);
    assert_eq!(
        out.content.to_text(),
        "PreToolUse:Bash hook error: [cat >/dev/null; echo 'not today' >&2; exit 2]: not today\n"
    );

    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("Bash", |_: PreToolUseInput| async {
            HookOutcome::ask("Deploy to production?")
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (out, calls) = run(hooks, "make deploy").await;
    assert_eq!(calls, 0, "an ask nobody below can answer must not run");
    assert_eq!(out.content.to_text(), "Deploy to production?");
    assert_eq!(out.decision.map(|d| d.verdict), Some(Verdict::Ask));
}

#[tokio::test]
async fn post_tool_use_texts_join_the_result_without_an_orchestrator() {
    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("Bash", |_: PreToolUseInput| async { HookOutcome::allow() })
        .unwrap_or_else(|e| panic!("{e}"));
    hooks
        .post_tool_use("Bash", |input: PostToolUseInput| async move {
            let seen: Value = input.tool_response.unwrap_or(Value::Null);
            PostHookOutcome {
                additional_context: vec![format!("saw {seen}")],
                ..Default::default()
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (out, calls) = run(hooks, "ls").await;
    assert_eq!(calls, 1);
    assert_eq!(
        out.content.to_text(),
        "ran ls\n\n<system-reminder>\nPostToolUse:Bash hook additional context: saw {\"stdout\":\"ran\"}\n</system-reminder>"
    );
}
