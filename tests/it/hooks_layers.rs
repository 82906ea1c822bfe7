//! In-process hooks in the pipeline: a hook's allow only waives a prompt, its deny beats
//! everything, an updated input is checked again, post hooks see the raw output.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::{HookDecision, HookOutcome, Stage, Verdict};
use tool_hooks::{Hooks, PostHookOutcome, PostToolUseInput, PreToolUseInput};
use toolgate_tests::{Sandbox, call, policy};

fn decide(v: Verdict, reason: &str) -> HookOutcome {
    HookOutcome {
        decision: Some(HookDecision {
            verdict: v,
            reason: Some(reason.into()),
            hook: String::new(),
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn hook_allow_waives_the_prompt_but_never_lifts_a_deny() {
    let sb = Sandbox::new();
    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("Picky|Fail", |_: PreToolUseInput| async {
            decide(Verdict::Allow, "hook says yes")
        })
        .unwrap();
    // No rule: the hook's allow replaces the prompt.
    let mut s = sb.builder(&[]).hooks(hooks.clone()).build();
    let o = call(&mut s, "Picky", json!({})).await;
    assert_eq!(o.content.to_text(), "fine");
    assert!(matches!(
        o.decision.map(|d| d.reason),
        Some(tool_core::DecisionReason::Hook { .. })
    ));
    // An ask rule still asks (and, with no approver, refuses).
    let mut s = sb
        .builder(&[])
        .hooks(hooks.clone())
        .policy(Arc::new(policy(&[], &[], &["Picky"])))
        .build();
    assert_eq!(
        call(&mut s, "Picky", json!({})).await.stage,
        Stage::Permission
    );
    // A deny through the policy still denies (here Fail is registered but denied as a whole,
    // so the deny is reported by the policy, not hidden by the hook).
    let mut s = sb
        .builder(&[])
        .hooks(hooks)
        .policy(Arc::new(policy(&["Picky"], &[], &[])))
        .build();
    let o = call(&mut s, "Picky", json!({})).await;
    assert_eq!(
        o.stage,
        Stage::Lookup,
        "a whole-tool deny removes the tool before hooks run"
    );
}

#[tokio::test]
async fn hook_deny_beats_an_allow_rule_whatever_order_hooks_finish_in() {
    let sb = Sandbox::new();
    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("*", |_: PreToolUseInput| async {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            decide(Verdict::Allow, "slow allow")
        })
        .unwrap();
    hooks
        .pre_tool_use("Picky", |_: PreToolUseInput| async {
            decide(Verdict::Deny, "blocked by policy hook")
        })
        .unwrap();
    let mut s = sb.builder(&["Picky"]).hooks(hooks).build();
    let o = call(&mut s, "Picky", json!({})).await;
    assert_eq!(o.stage, Stage::PreToolUse);
    assert_eq!(
        o.content.to_text(),
        "PreToolUse:Picky hook error: blocked by policy hook"
    );
}

#[tokio::test]
async fn updated_input_goes_back_through_the_schema() {
    let sb = Sandbox::new();
    let mut hooks = Hooks::new();
    hooks
        .pre_tool_use("Fail", |input: PreToolUseInput| async move {
            let text = input
                .tool_input
                .get("text")
                .and_then(|t| t.as_str())
                .unwrap_or("");
            let updated = if text == "swap" {
                json!({"text": 5})
            } else {
                json!({"text": "rewritten"})
            };
            HookOutcome {
                updated_input: Some(updated),
                ..Default::default()
            }
        })
        .unwrap();
    let mut s = sb.builder(&["Fail"]).hooks(hooks).build();
    let o = call(&mut s, "Fail", json!({"text": "swap"})).await;
    assert_eq!(o.stage, Stage::Schema);
    assert_eq!(
        o.content.to_text(),
        "PreToolUse hook for Fail returned updatedInput that failed schema validation: Fail failed due to the following issue:\nThe parameter `text` type is expected as `string` but provided as `number`\nThe tool input from the model was valid; the hook's rewrite of it was not."
    );
    // The tool echoes its text as its error: it received the hook's input, not the model's.
    assert_eq!(
        call(&mut s, "Fail", json!({"text": "original"}))
            .await
            .content
            .to_text(),
        "rewritten"
    );
}

#[tokio::test]
async fn validation_failures_run_no_hooks_and_post_hooks_see_the_output() {
    let sb = Sandbox::new();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut hooks = Hooks::new();
    let pre_seen = seen.clone();
    hooks
        .pre_tool_use("*", move |input: PreToolUseInput| {
            let seen = pre_seen.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push(format!("pre {}", input.tool_name));
                HookOutcome::default()
            }
        })
        .unwrap();
    let post_seen = seen.clone();
    hooks
        .post_tool_use("Sleep", move |input: PostToolUseInput| {
            let seen = post_seen.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push(format!("post {}", input.tool_response.unwrap_or_default()));
                PostHookOutcome {
                    additional_context: vec!["remember this".into()],
                    ..Default::default()
                }
            }
        })
        .unwrap();
    let fail_seen = seen.clone();
    hooks
        .post_tool_use_failure("Fail", move |input: PostToolUseInput| {
            let seen = fail_seen.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push(format!("failure {}", input.error.unwrap_or_default()));
                PostHookOutcome::default()
            }
        })
        .unwrap();
    let mut s = sb.builder(&["Picky", "Sleep", "Fail"]).hooks(hooks).build();
    call(&mut s, "Picky", json!({"text": "bad"})).await;
    call(&mut s, "Picky", json!({"text": 1})).await;
    let turn = s
        .run_turn(&[tool_core::ToolUse::new("s", "Sleep", json!({"n": 1}))])
        .await;
    call(&mut s, "Fail", json!({"text": "boom"})).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "pre Sleep",
            "post {\"slept\":1}",
            "pre Fail",
            "failure boom"
        ]
    );
    // A PostToolUse hook's context joins the result itself, after a blank line.
    let msg = serde_json::to_value(turn.user_message()).unwrap();
    let result = msg["content"][0]["content"].as_str().unwrap_or_default();
    assert!(
        result.ends_with(
            "\n\n<system-reminder>\nPostToolUse:Sleep hook additional context: remember this\n</system-reminder>"
        ),
        "{result}"
    );
}
