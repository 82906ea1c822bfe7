//! Command hooks with real scripts run by `sh`: timeouts that kill the whole tree, hooks that
//! close stdin, parallel and sequential runs, fail-closed hooks, unbounded output, and hooks
//! loaded from policy files with trust.

use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::Stage;
use tool_hooks::{CommandSpec, HookEvent, Hooks};
use toolgate_tests::{Sandbox, call, gone_within};

fn script(sb: &Sandbox, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    sb.write(&format!("hooks/{name}"), format!("#!/bin/sh\n{body}"));
    let p = sb.path(&format!("hooks/{name}"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    p.display().to_string()
}

fn pre(hooks: &mut Hooks, matcher: &str, sequential: bool, specs: Vec<CommandSpec>) {
    hooks
        .command_group(HookEvent::PreToolUse, matcher, sequential, specs)
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_children_and_the_call_goes_on() {
    let sb = Sandbox::new();
    let cmd = script(
        &sb,
        "stuck.sh",
        "cat > /dev/null\nsleep 300 &\necho $! > \"$CLAUDE_PROJECT_DIR/child.pid\"\nsleep 300\n",
    );
    let mut hooks = Hooks::new();
    pre(
        &mut hooks,
        "Bash",
        false,
        vec![CommandSpec {
            timeout: Some(Duration::from_secs(1)),
            ..CommandSpec::new(cmd)
        }],
    );
    let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
    let start = Instant::now();
    let o = call(&mut s, "Bash", json!({"command": "echo after"})).await;
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        (o.stage, o.content.to_text().as_str()),
        (Stage::Ran, "after")
    );
    assert!(
        o.user_notes
            .iter()
            .any(|n| n.contains("didn't answer in time")),
        "{:?}",
        o.user_notes
    );
    let pid: u32 = std::fs::read_to_string(sb.path("child.pid"))
        .unwrap_or_else(|e| panic!("{e}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "the hook's child {pid} survived its timeout"
    );
}

#[tokio::test]
async fn a_hook_that_closes_stdin_early_still_answers() {
    let sb = Sandbox::new();
    let cmd = script(
        &sb,
        "closer.sh",
        "exec 0<&-\nprintf '%s\\n' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"closed early\"}}'\n",
    );
    let mut hooks = Hooks::new();
    pre(&mut hooks, "Write", false, vec![CommandSpec::new(cmd)]);
    let mut s = sb.builder(&["Write"]).hooks(hooks).build();
    // An input far larger than a pipe's buffer: writing it fails once the hook has gone.
    let big = "x".repeat(1 << 20);
    let o = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("big.txt"), "content": big}),
    )
    .await;
    assert_eq!(
        o.content.to_text(),
        "PreToolUse:Write hook error: closed early"
    );
    assert!(!sb.path("big.txt").exists());
}

#[tokio::test]
async fn matching_hooks_run_at_once() {
    let sb = Sandbox::new();
    let cmd = script(&sb, "nap.sh", "cat > /dev/null\nsleep 0.2\n");
    let mut hooks = Hooks::new();
    for i in 0..10 {
        // Different commands, so none is a duplicate of another.
        pre(
            &mut hooks,
            "Bash",
            false,
            vec![CommandSpec::new(format!("{cmd} {i}"))],
        );
    }
    let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
    let start = Instant::now();
    let o = call(&mut s, "Bash", json!({"command": "echo ok"})).await;
    let took = start.elapsed();
    assert_eq!(o.content.to_text(), "ok");
    // Ten 200 ms hooks one after another would take 2 s.
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

/// A hook that appends `word` to the Bash command it is given (sh and sed only).
fn appender(sb: &Sandbox, name: &str, word: &str) -> String {
    script(
        sb,
        name,
        &format!(
            "cmd=$(sed -n 's/.*\"command\":\"\\([^\"]*\\)\".*/\\1/p')\nprintf '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"updatedInput\":{{\"command\":\"%s {word}\"}}}}}}\\n' \"$cmd\"\n"
        ),
    )
}

#[tokio::test]
async fn a_sequential_group_applies_rewrites_in_order() {
    let sb = Sandbox::new();
    let two = appender(&sb, "two.sh", "two");
    let three = appender(&sb, "three.sh", "three");
    let four = appender(&sb, "four.sh", "four");
    let mut hooks = Hooks::new();
    pre(
        &mut hooks,
        "Bash",
        true,
        vec![
            CommandSpec::new(two),
            CommandSpec::new(three),
            CommandSpec::new(four),
        ],
    );
    let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
    let o = call(&mut s, "Bash", json!({"command": "echo one"})).await;
    assert_eq!(o.content.to_text(), "one two three four");
}

#[tokio::test]
async fn fail_closed_hooks_deny_when_they_give_no_answer() {
    let sb = Sandbox::new();
    let missing = sb.p("hooks/missing.sh");
    let garbage = script(
        &sb,
        "garbage.sh",
        "cat > /dev/null\necho '{\"decision\": 7}'\n",
    );
    for (cmd, fail_closed, ran) in [
        (missing.clone(), false, true),
        (missing, true, false),
        (garbage.clone(), false, true),
        (garbage, true, false),
    ] {
        let mut hooks = Hooks::new();
        pre(
            &mut hooks,
            "Bash",
            false,
            vec![CommandSpec {
                fail_closed,
                ..CommandSpec::new(cmd.clone())
            }],
        );
        let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
        let o = call(&mut s, "Bash", json!({"command": "echo ran"})).await;
        assert_eq!(
            o.stage == Stage::Ran,
            ran,
            "{cmd} fail_closed={fail_closed}: {:?}",
            o.content
        );
        if !ran {
            assert!(
                o.content.to_text().starts_with(&format!(
                    "PreToolUse:Bash hook error: [{cmd}]: the hook gave no answer"
                )),
                "{:?}",
                o.content
            );
        }
    }
}

#[tokio::test]
async fn huge_hook_output_is_cut_not_buffered() {
    let sb = Sandbox::new();
    let cmd = script(
        &sb,
        "flood.sh",
        "cat > /dev/null\nhead -c 8000000 /dev/zero | tr '\\0' 'x'\nexit 2\n",
    );
    let mut hooks = Hooks::new();
    hooks
        .command_group(
            HookEvent::PostToolUse,
            "Bash",
            false,
            vec![CommandSpec::new(cmd)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
    let o = call(&mut s, "Bash", json!({"command": "echo ok"})).await;
    let text = o.content.to_text();
    assert!(
        text.starts_with("ok\n\n<system-reminder>"),
        "{}",
        &text[..80.min(text.len())]
    );
    // Exit 2 with no stderr; the 8 MB on stdout never reached anything.
    assert!(text.len() < 2000, "{}", text.len());
}

#[tokio::test]
async fn hooks_load_from_policy_files_and_project_hooks_need_trust() {
    let sb = Sandbox::new();
    let deny = script(
        &sb,
        "deny.sh",
        "cat > /dev/null\necho 'from the project' >&2\nexit 2\n",
    );
    sb.write(
        ".toolgate/policy.toml",
        format!("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"{deny}\"\ntimeout = 30\n"),
    );
    let base = sb
        .ws()
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut sources = tool_permissions::PolicySources::standard(
        &sb.ws(),
        &base.join("home"),
        Some(&base.join("config")),
        tool_permissions::Trust::Store,
    );
    sources.managed.clear();
    let read = |s: &tool_permissions::PolicySources| s.read().unwrap_or_else(|e| panic!("{e}"));
    let (hooks, notes) = tool_hooks::load_hooks(&read(&sources)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hooks.counts(), (0, 0, 0));
    assert!(notes.iter().any(|n| n.contains("not trusted")), "{notes:?}");
    sources.trust = tool_permissions::Trust::Trusted;
    let (hooks, _) = tool_hooks::load_hooks(&read(&sources)).unwrap_or_else(|e| panic!("{e}"));
    let mut s = sb.builder(&["Bash"]).hooks(hooks).build();
    let o = call(&mut s, "Bash", json!({"command": "echo hi"})).await;
    assert_eq!(
        o.content.to_text(),
        format!("PreToolUse:Bash hook error: [{deny}]: from the project\n")
    );
    // The same command configured twice (here in the user layer too) runs once.
    std::fs::create_dir_all(base.join("config/toolgate")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        base.join("config/toolgate/policy.toml"),
        format!("[[hooks.PreToolUse]]\nmatcher = \"*\"\ncommand = \"{deny}\"\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (hooks, _) = tool_hooks::load_hooks(&read(&sources)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hooks.counts(), (1, 0, 0));
    // A bad entry is an error naming the file.
    sb.write(
        ".toolgate/policy.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n",
    );
    let err = tool_hooks::load_hooks(&read(&sources))
        .map(|_| ())
        .unwrap_err();
    assert!(err.to_string().contains("policy.toml"), "{err}");
}

#[tokio::test]
async fn dropping_a_running_hook_kills_its_whole_process_group() {
    let sb = Sandbox::new();
    let session = tool_hooks::HookSession::from_context(&sb.ctx());
    let cancel = tool_core::CancellationToken::new();
    // The hook backgrounds a child with its output redirected (so no pipe keeps it tied to
    // the hook), records its pid, and waits; the caller gives up on it by dropping the future.
    let command = "sleep 300 >/dev/null 2>&1 & echo $! > child.pid; sleep 300";
    let run = tool_hooks::run_command(command, "{}", &session, Duration::from_secs(600), &cancel);
    let pid_file = sb.path("child.pid");
    let written = |f: &std::path::Path| {
        std::fs::read_to_string(f).is_ok_and(|s| s.trim().parse::<u32>().is_ok())
    };
    let dropped = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::pin!(run);
        let start = Instant::now();
        loop {
            tokio::select! {
                raw = &mut run => panic!("the hook ended on its own: {raw:?}"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
            if written(&pid_file) || start.elapsed() > Duration::from_secs(10) {
                break;
            }
        }
        // `run` is dropped here, mid-run.
    })
    .await;
    assert!(dropped.is_ok());
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|e| panic!("{e}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "the dropped hook's child {pid} survived"
    );
}
