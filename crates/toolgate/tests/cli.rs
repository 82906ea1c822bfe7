//! The `toolgate` binary, run as a user would.

use std::process::Command;

fn toolgate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
}

#[test]
fn check_names_the_rule_file_and_line_of_a_denied_command() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".claude")).unwrap();
    let settings = d.path().join(".claude/settings.json");
    std::fs::write(
        &settings,
        "{\n  \"permissions\": {\n    \"deny\": [\n      \"Bash(curl:*)\"\n    ]\n  }\n}\n",
    )
    .unwrap();
    let out = toolgate()
        .args([
            "check",
            "Bash",
            r#"{"command": "ls && timeout 5 curl https://x.example"}"#,
            "--dir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let file = std::fs::canonicalize(&settings).unwrap();
    assert!(text.starts_with("deny\n"), "{text}");
    assert!(
        text.contains(&format!(
            "because: deny rule `Bash(curl:*)` from project settings ({}:4)",
            file.display()
        )),
        "{text}"
    );
}

#[test]
fn run_prints_tool_results_as_json_lines() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.txt"), "hi\n").unwrap();
    let transcript = d.path().join("t.json");
    let path = d.path().join("a.txt").display().to_string();
    std::fs::write(&transcript, serde_json::json!([[{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": path}}, {"type": "tool_use", "id": "t2", "name": "Nope", "input": {}}]]).to_string()).unwrap();
    let out = toolgate()
        .arg("run")
        .arg(&transcript)
        .arg("--workspace")
        .arg(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"type": "tool_result", "tool_use_id": "t1", "content": "1\thi\n2\t"})
    );
    assert_eq!(lines[1]["is_error"], true);
}
