//! Runs the example and checks the user message it would send back.

use serde_json::Value;

#[test]
fn the_turn_answers_every_tool_use_in_order() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_example-agent-loop"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the example: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let (json, log) = text
        .rsplit_once("\nlayer saw: ")
        .unwrap_or_else(|| panic!("no layer log in {text}"));
    let reply: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(reply["role"], "user");
    let blocks = reply["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {reply}"));
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["toolu_01", "toolu_02", "toolu_03", "toolu_04"]);
    assert_eq!(blocks[0]["content"], "1\tbuy milk\n2\t");
    assert_eq!(blocks[0].get("is_error"), None);
    assert_eq!(blocks[1]["content"], "4 words");
    assert_eq!(
        blocks[2]["content"],
        "PreToolUse:Bash hook error: this agent never deletes recursively"
    );
    assert_eq!(blocks[2]["is_error"], true);
    // The policy files' defaultMode (acceptEdits) applies: the write needs no prompt.
    let written = blocks[3]["content"].as_str().unwrap_or_default();
    assert!(
        written.starts_with("File created successfully"),
        "{written}"
    );
    assert_eq!(blocks[3].get("is_error"), None);
    assert_eq!(
        log.trim(),
        "toolu_01 Read, toolu_02 WordCount, toolu_03 Bash, toolu_04 Write"
    );
}
