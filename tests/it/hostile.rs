//! Hostile inputs of the sizes and shapes an injected model can send: each gets a clear
//! refusal, never a crash and never an allow.

use serde_json::{Value, json};
use tool_core::{PermissionMode, Stage, ToolUse, Verdict};
use toolgate_tests::{Sandbox, decide_builtin, policy};

/// A JSON value nested `depth` arrays deep, built without recursion.
fn nested(depth: usize) -> Value {
    let mut v = json!("leaf");
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

#[tokio::test]
async fn a_tool_input_nested_ten_thousand_levels_is_refused_with_a_clear_error() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Read", "Bash"]);
    for (tool, field) in [
        ("Read", "file_path"),
        ("Bash", "command"),
        ("Edit", "old_string"),
    ] {
        let mut input = serde_json::Map::new();
        input.insert(field.to_owned(), nested(10_000));
        let turn = [ToolUse::new("toolu_deep", tool, Value::Object(input))];
        let mut out = s.run_turn(&turn).await;
        let o = out.outcomes.remove(0);
        assert!(o.is_error, "{tool}");
        assert_eq!(o.stage, Stage::Schema, "{tool}: {:?}", o.content);
        assert!(
            o.content.to_text().contains("InputValidationError"),
            "{tool}"
        );
        for t in turn {
            tool_core::dismantle(t.input);
        }
    }
}

#[test]
fn huge_and_strange_commands_ask_and_never_allow() {
    let sb = Sandbox::new();
    let c = sb.ctx_in(PermissionMode::Default);
    let p = policy(&[], &["Bash"], &[]);
    let cases: Vec<(String, &str)> = vec![
        (
            "echo ".to_owned() + &"x".repeat(10 * 1024 * 1024),
            "a 10 MB command",
        ),
        ("true;".repeat(100_000), "100,000 units"),
        ("true && ".repeat(50_000) + "true", "100,000 operators"),
        ("echo a\0; rm -rf ~".to_owned(), "a NUL byte"),
        ("echo ok\rrm -rf ~".to_owned(), "a raw CR"),
        (
            "$(".repeat(5_000) + &")".repeat(5_000),
            "5,000 nested substitutions",
        ),
        (
            "(".repeat(20_000) + &")".repeat(20_000),
            "20,000 nested subshells",
        ),
        (
            "{ ".repeat(20_000) + "true;" + &" }".repeat(20_000),
            "20,000 nested groups",
        ),
    ];
    for (command, what) in &cases {
        let d = decide_builtin(&p, &c, "Bash", &json!({"command": command}));
        assert_ne!(d.verdict, Verdict::Allow, "{what}: {}", d.reason);
    }
    // Without the whole-tool allow rule too (the checks, not the rule, must stop them).
    let none = policy(&[], &[], &[]);
    for (command, what) in &cases {
        let d = decide_builtin(&none, &c, "Bash", &json!({"command": command}));
        assert_ne!(d.verdict, Verdict::Allow, "{what} (no rules): {}", d.reason);
    }
}

#[tokio::test]
async fn paths_of_a_hundred_thousand_components_or_with_nul_are_refused() {
    let sb = Sandbox::new();
    let mut s = sb.session(&["Read", "Write", "Edit"]);
    let deep = format!("{}/{}", sb.ws().display(), "a/".repeat(100_000));
    let cases = [
        ("Read", json!({"file_path": format!("{deep}f.txt")})),
        (
            "Write",
            json!({"file_path": format!("{deep}f.txt"), "content": "x"}),
        ),
        (
            "Edit",
            json!({"file_path": format!("{deep}f.txt"), "old_string": "", "new_string": "x"}),
        ),
        (
            "Read",
            json!({"file_path": format!("{}/a\u{0}b", sb.ws().display())}),
        ),
        (
            "Write",
            json!({"file_path": format!("{}/a\u{0}b", sb.ws().display()), "content": "x"}),
        ),
        (
            "Write",
            json!({"file_path": format!("{}/a\rb", sb.ws().display()), "content": "x"}),
        ),
    ];
    for (tool, input) in cases {
        let turn = [ToolUse::new("toolu_p", tool, input)];
        let mut out = s.run_turn(&turn).await;
        let o = out.outcomes.remove(0);
        let shown: String = o.content.to_text().chars().take(200).collect();
        if tool == "Write" && !shown.contains('\0') && o.stage == Stage::Ran {
            // A CR is a legal file name character; writing it inside the project is fine.
            assert!(!o.is_error, "{shown}");
            continue;
        }
        assert!(o.is_error, "{tool}: {shown}");
    }
    // Nothing of the long path was created, not even its first directory.
    assert!(!sb.path("a").exists());
}
