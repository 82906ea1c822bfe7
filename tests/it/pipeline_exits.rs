//! Every exit of the single-call pipeline produces a tool_result with the call's id and
//! Claude Code's wording.

use serde_json::json;
use tool_core::{Stage, ToolUse};
use toolgate_tests::{Sandbox, call};

#[tokio::test]
async fn unknown_tool() {
    let sb = Sandbox::new();
    let mut s = sb.session(&[]);
    let o = call(&mut s, "FrobnicateWidget", json!({"x": 1})).await;
    assert_eq!(o.stage, Stage::Lookup);
    assert!(o.is_error);
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>Error: No such tool available: FrobnicateWidget</tool_use_error>"
    );
    assert_eq!(o.tool_result().tool_use_id, "toolu_test");
}

#[tokio::test]
async fn aliases_and_deprecated_aliases_resolve() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Sleep"]);
    assert_eq!(
        call(&mut s, "Nap", json!({"n": 1})).await.content.to_text(),
        "slept 1ms"
    );
    assert_eq!(
        call(&mut s, "Doze", json!({"n": 1}))
            .await
            .content
            .to_text(),
        "slept 1ms"
    );
    // A deprecated alias resolves even when the tool is not offered; its plain alias does not.
    let mut s = sb.builder(&["Sleep"]).offered_tools(["Read"]).build();
    assert_eq!(
        call(&mut s, "Doze", json!({"n": 1}))
            .await
            .content
            .to_text(),
        "slept 1ms"
    );
    let o = call(&mut s, "Nap", json!({})).await;
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>Error: No such tool available: Nap. Nap is disabled for this session, in subagents as well as here.</tool_use_error>"
    );
}

#[tokio::test]
async fn bad_json_input() {
    let sb = Sandbox::new();
    let mut s = sb.session(&[]);
    let raw = "{\"file_path\": \"/tmp/x";
    let o = call(&mut s, "Read", json!(raw)).await;
    assert_eq!(o.stage, Stage::Schema);
    assert_eq!(
        o.content.to_text(),
        format!(
            "<tool_use_error>InputValidationError: Read was called with input that could not be parsed as JSON.\nYou sent (first 21 of 21 bytes): {raw}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.</tool_use_error>"
        )
    );
}

#[tokio::test]
async fn each_schema_error_kind() {
    let sb = Sandbox::new();
    let mut s = sb.session(&[]);
    let cases = [
        (json!({}), "The required parameter `file_path` is missing"),
        (
            json!({"file_path": "/x", "bogus": 1}),
            "An unexpected parameter `bogus` was provided",
        ),
        (
            json!({"file_path": 1}),
            "The parameter `file_path` type is expected as `string` but provided as `number`",
        ),
        (
            json!({"file_path": "/x", "limit": 2.5}),
            "The parameter `limit` type is expected as `int` but provided as `number`",
        ),
    ];
    for (input, line) in cases {
        let o = call(&mut s, "Read", input.clone()).await;
        assert_eq!(o.stage, Stage::Schema, "{input}");
        assert_eq!(
            o.content.to_text(),
            format!(
                "<tool_use_error>InputValidationError: Read failed due to the following issue:\n{line}</tool_use_error>"
            ),
            "{input}"
        );
    }
}

#[tokio::test]
async fn validate_input_failure_is_wrapped_and_stops_before_the_call() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Picky"]);
    let o = call(&mut s, "Picky", json!({"text": "bad"})).await;
    assert_eq!(o.stage, Stage::Validation);
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>Picky does not take `bad`.</tool_use_error>"
    );
    assert!(
        o.decision.is_none(),
        "validation comes before the permission decision"
    );
    assert_eq!(
        call(&mut s, "Picky", json!({"text": "good"}))
            .await
            .content
            .to_text(),
        "fine"
    );
}

#[tokio::test]
async fn denied_by_rule_and_refused_ask() {
    let sb = Sandbox::new();
    let mut s = sb.session(&[]);
    // No rule allows Picky: the ask has no approver, so it is refused with Claude Code's text.
    let o = call(&mut s, "Picky", json!({})).await;
    assert_eq!(o.stage, Stage::Permission);
    assert_eq!(
        o.content.to_text(),
        "Claude requested permissions to use Picky, but you haven't granted it yet."
    );
    // In dontAsk mode the ask becomes a deny.
    let mut s = sb.session(&[]);
    s.context_mut().permission_mode = tool_core::PermissionMode::DontAsk;
    let o = call(&mut s, "Picky", json!({})).await;
    assert_eq!(o.stage, Stage::Permission);
    assert_eq!(
        o.decision.as_ref().map(|d| d.verdict),
        Some(tool_core::Verdict::Deny)
    );
    assert_eq!(
        o.content.to_text(),
        format!(
            "Permission to use Picky has been denied because Claude Code is running in don't ask mode. {}",
            tool_core::texts::DENIAL_WORKAROUND_GUIDANCE
        )
    );
    // An ask rule beats an allow rule.
    let mut s = sb
        .builder(&[])
        .policy(std::sync::Arc::new(toolgate_tests::policy(
            &[],
            &["Picky"],
            &["Picky"],
        )))
        .build();
    assert_eq!(
        call(&mut s, "Picky", json!({})).await.stage,
        Stage::Permission
    );
}

#[tokio::test]
async fn tool_error_is_not_wrapped_and_long_errors_are_cut() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Fail"]);
    let o = call(&mut s, "Fail", json!({"text": "disk on fire"})).await;
    assert_eq!((o.stage, o.is_error), (Stage::Ran, true));
    assert_eq!(o.content.to_text(), "disk on fire");
    let long = format!("{}{}", "a".repeat(7_000), "z".repeat(7_000));
    let o = call(&mut s, "Fail", json!({"text": long})).await;
    let text = o.content.to_text();
    assert!(text.starts_with(&"a".repeat(5_000)) && text.ends_with(&"z".repeat(5_000)));
    assert!(text.contains("\n\n... [4000 characters truncated] ...\n\n"));
}

#[tokio::test]
async fn tool_panic_becomes_an_error_result_and_the_session_goes_on() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Panic", "Sleep"]);
    let turn = s
        .run_turn(&[
            ToolUse::new("a", "Panic", json!({})),
            ToolUse::new("b", "Sleep", json!({"n": 1})),
        ])
        .await;
    let o = &turn.outcomes[0];
    assert!(o.is_error);
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>Error calling tool (Panic): the tool panicked: deliberate panic in a test tool</tool_use_error>"
    );
    assert_eq!(turn.outcomes[1].content.to_text(), "slept 1ms");
}

#[tokio::test]
async fn cancelled_before_start() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Sleep"]);
    s.cancel();
    let turn = s
        .run_turn(&[
            ToolUse::new("a", "Sleep", json!({"n": 1})),
            ToolUse::new("b", "Nope", json!({})),
        ])
        .await;
    assert_eq!(turn.outcomes[0].stage, Stage::Cancelled);
    assert_eq!(
        turn.outcomes[0].content.to_text(),
        tool_core::texts::CANCEL_MESSAGE
    );
    assert_eq!(
        turn.outcomes[1].stage,
        Stage::Lookup,
        "an unknown tool still gets its own text"
    );
    // The next turn starts with a fresh token.
    assert_eq!(
        call(&mut s, "Sleep", json!({"n": 1}))
            .await
            .content
            .to_text(),
        "slept 1ms"
    );
}

#[tokio::test]
async fn cancelled_while_running() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Sleep"]);
    let token = s.cancellation_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let o = call(&mut s, "Sleep", json!({"n": 60_000})).await;
    canceller.await.unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "cancellation ended the call"
    );
    assert_eq!((o.stage, o.is_error), (Stage::Ran, true));
    assert_eq!(
        o.content.to_text(),
        "[Request interrupted by user for tool use]"
    );
}

#[tokio::test]
async fn empty_result_gets_the_marker() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Empty"]);
    let o = call(&mut s, "Empty", json!({})).await;
    assert_eq!(o.content.to_text(), "(Empty completed with no output)");
    assert!(!o.is_error);
}

#[tokio::test]
async fn large_result_is_persisted_with_a_preview() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Big"]);
    let o = call(&mut s, "Big", json!({"n": 40_000})).await;
    let text = o.content.to_text();
    let file = sb.results_dir().join("toolu_test.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap().len(), 40_000);
    assert!(text.starts_with(&format!("<persisted-output>\nOutput too large (39.1KB). Full output saved to: {}\n\nPreview (first 2KB):\n", file.display())), "{text}");
    assert!(text.ends_with("\n...\n</persisted-output>"));
    // Under the tool's threshold, the result stays inline.
    assert_eq!(
        call(&mut s, "Big", json!({"n": 100}))
            .await
            .content
            .to_text(),
        "b".repeat(100)
    );
}

#[tokio::test]
async fn user_message_lists_results_in_block_order_with_ids() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Sleep", "Fail"]);
    let blocks = [
        ToolUse::new("one", "Sleep", json!({"n": 1})),
        ToolUse::new("two", "Nope", json!({})),
        ToolUse::new("three", "Fail", json!({})),
    ];
    let msg = s.run_turn(&blocks).await.user_message();
    let v = serde_json::to_value(&msg).unwrap();
    assert_eq!(v["role"], "user");
    let ids: Vec<&str> = msg.tool_results().map(|r| r.tool_use_id.as_str()).collect();
    assert_eq!(ids, ["one", "two", "three"]);
    assert_eq!(v["content"][0].get("is_error"), None);
    assert_eq!(v["content"][1]["is_error"], true);
}
