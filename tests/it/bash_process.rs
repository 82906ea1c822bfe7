//! Bash runs each command in its own process group and takes the whole group down on a
//! timeout, on cancellation, and when a backgrounded command outlives its limit.

use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::Stage;
use toolgate_tests::{Sandbox, add_env, alive, call, gone_within, pid_running_within};

fn wait_gone(pid: u32) -> bool {
    gone_within(pid, Duration::from_secs(10))
}

/// The backgrounded grandchild, found by its arguments: in the sandbox's PID namespace the
/// command's own `$!` is not a pid of this process's.
fn grandchild_pid(marker: &str) -> u32 {
    pid_running_within(&["sleep", marker], Duration::from_secs(10))
        .unwrap_or_else(|| panic!("the command never started `sleep {marker}`"))
}

/// Wait up to 10 s for every process running `argv` to be gone.
fn none_left(argv: &[&str]) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if toolgate_tests::pids_running(argv).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A line that backgrounds a `sleep <marker>` and waits in another sleep.
fn spawn_grandchild(marker: &str) -> String {
    format!("echo started; sleep {marker} & echo $! > pid; sleep 300")
}

fn session_with_env(sb: &Sandbox, env: &[(&str, &str)]) -> tool_orchestrator::Session {
    let mut s = sb.session(&["Bash"]);
    add_env(&mut s, std::env::vars());
    add_env(&mut s, env.iter().copied());
    s
}

#[tokio::test]
async fn a_timeout_kills_the_whole_tree() {
    let sb = Sandbox::new();
    let mut s = session_with_env(&sb, &[("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS", "1")]);
    let started = Instant::now();
    let o = call(
        &mut s,
        "Bash",
        // Wide enough that a loaded machine still starts the sandbox and echoes first.
        json!({"command": spawn_grandchild("300.101"), "timeout": 3000}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the timeout fired"
    );
    assert!(o.is_error);
    assert_eq!(
        o.content.to_text(),
        "Exit code 143\nCommand timed out after 3s\nstarted"
    );
    assert!(sb.path("pid").exists(), "the grandchild was started");
    assert!(
        none_left(&["sleep", "300.101"]),
        "the backgrounded grandchild survived the timeout"
    );
}

#[tokio::test]
async fn a_timed_out_command_moved_to_the_background_is_stopped_at_its_limit() {
    let sb = Sandbox::new();
    let mut s = session_with_env(&sb, &[("TOOLGATE_BASH_BACKGROUND_LIMIT_MS", "8000")]);
    let o = call(
        &mut s,
        "Bash",
        json!({"command": spawn_grandchild("300.102"), "timeout": 3000}),
    )
    .await;
    let text = o.content.to_text();
    assert!(!o.is_error, "{text}");
    assert!(text.starts_with("started\nCommand did not complete within its 3s timeout and was moved to the background (ID: b"), "{text}");
    let pid = grandchild_pid("300.102");
    assert!(alive(pid), "still running in the background");
    assert!(
        wait_gone(pid),
        "the grandchild {pid} outlived the background limit"
    );
}

#[tokio::test]
async fn cancelling_a_running_call_kills_its_tree() {
    let sb = Sandbox::new();
    let mut s = session_with_env(&sb, &[]);
    let token = s.cancellation_token();
    let pid_file = sb.path("pid");
    let canceller = tokio::spawn(async move {
        let start = Instant::now();
        // Wait for the pid itself, not just the file: the shell creates the file before it
        // writes to it.
        let written = |f: &std::path::Path| {
            std::fs::read_to_string(f).is_ok_and(|s| s.trim().parse::<u32>().is_ok())
        };
        while !written(&pid_file) && start.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        token.cancel();
    });
    let o = call(
        &mut s,
        "Bash",
        json!({"command": spawn_grandchild("300.103")}),
    )
    .await;
    canceller.await.unwrap();
    assert_eq!((o.stage, o.is_error), (Stage::Ran, true));
    assert_eq!(
        o.content.to_text(),
        "[Request interrupted by user for tool use]"
    );
    assert!(sb.path("pid").exists(), "the grandchild was started");
    assert!(
        none_left(&["sleep", "300.103"]),
        "the grandchild survived cancellation"
    );
}

#[tokio::test]
async fn cwd_carries_to_the_next_call_and_read_only_commands_need_no_rule() {
    let sb = Sandbox::new();
    sb.write("sub/f.txt", "f\n");
    let mut s = session_with_env(&sb, &[]);
    let o = call(&mut s, "Bash", json!({"command": "cd sub"})).await;
    assert!(o.content.to_text().contains("# Environment update"));
    assert_eq!(s.context().cwd, sb.path("sub"));
    assert_eq!(
        call(&mut s, "Bash", json!({"command": "ls"}))
            .await
            .content
            .to_text(),
        "f.txt"
    );
    // Without a Bash rule: a read-only command runs, anything else asks (refused headless).
    let mut s = sb.session(&[]);
    assert_eq!(
        call(&mut s, "Bash", json!({"command": "cat sub/f.txt | wc -l"}))
            .await
            .content
            .to_text(),
        "1"
    );
    let o = call(&mut s, "Bash", json!({"command": "touch x"})).await;
    assert_eq!(o.stage, Stage::Permission);
    // A read-only command reading outside the working directories asks too.
    assert_eq!(
        call(&mut s, "Bash", json!({"command": "cat /etc/hostname"}))
            .await
            .stage,
        Stage::Permission
    );
    assert!(!sb.path("x").exists());
}
