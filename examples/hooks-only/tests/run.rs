//! Runs the example and checks what it printed.

#[test]
fn the_host_service_only_runs_what_the_hooks_let_through() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_example-hooks-only"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the example: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "echo hello: ok: hello\\n\\n<system-reminder>\\nPostToolUse:Shell hook additional context: the command printed 6 bytes\\n</system-reminder>",
            "rm -rf ./build: refused: PreToolUse:Shell hook error: recursive deletes are not allowed here",
            "curl https://example.com: refused: PreToolUse:Shell hook error: [grep -q curl && { echo 'no network from this host' >&2; exit 2; } || exit 0]: no network from this host\\n",
            "audit: ran Shell {\"command\":\"echo hello\"}",
        ]
    );
}
