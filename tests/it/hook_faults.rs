//! The fault matrix: a command hook that exits 0, 2 or 1, dies by a signal, hangs past its
//! timeout, prints 10 MB, prints broken JSON, is missing, is not executable, or closes its
//! stdin early, for each of PreToolUse, PostToolUse and PostToolUseFailure. Every cell gives
//! its specified outcome, ends within the hook timeout plus a bound, leaves no process of the
//! hook behind, and never lets a call run that the rules would not let run.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::Stage;
use tool_hooks::{CommandSpec, HookEvent, Hooks};
use toolgate_tests::{Sandbox, call};

/// How a hook misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Exit0,
    Exit2,
    Exit1,
    Signal,
    Hang,
    TenMegabytes,
    BadJson,
    Missing,
    NotExecutable,
    ClosesStdin,
}

const FAULTS: [Fault; 10] = [
    Fault::Exit0,
    Fault::Exit2,
    Fault::Exit1,
    Fault::Signal,
    Fault::Hang,
    Fault::TenMegabytes,
    Fault::BadJson,
    Fault::Missing,
    Fault::NotExecutable,
    Fault::ClosesStdin,
];

const TIMEOUT: Duration = Duration::from_secs(2);

/// The hook's command: a script that records its pid (and a background child's, for the hang)
/// in `pids/`, then misbehaves.
fn hook_command(sb: &Sandbox, fault: Fault) -> String {
    use std::os::unix::fs::PermissionsExt;
    let record = "echo $$ >> \"$CLAUDE_PROJECT_DIR/pids/list\"\n";
    let body = match fault {
        Fault::Exit0 => "cat > /dev/null\nexit 0\n".to_owned(),
        Fault::Exit2 => "cat > /dev/null\necho 'stopped by the hook' >&2\nexit 2\n".to_owned(),
        Fault::Exit1 => "cat > /dev/null\necho 'hook broke' >&2\nexit 1\n".to_owned(),
        Fault::Signal => "cat > /dev/null\nkill -9 $$\n".to_owned(),
        Fault::Hang => "cat > /dev/null\nsleep 300 &\necho $! >> \"$CLAUDE_PROJECT_DIR/pids/list\"\nsleep 300\n".to_owned(),
        Fault::TenMegabytes => "cat > /dev/null\nhead -c 10000000 /dev/zero | tr '\\0' x\n".to_owned(),
        Fault::BadJson => "cat > /dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"'\n".to_owned(),
        Fault::ClosesStdin => "exec 0<&-\nexit 0\n".to_owned(),
        Fault::Missing => return sb.p("hooks/no-such-hook.sh"),
        Fault::NotExecutable => "cat > /dev/null\nexit 0\n".to_owned(),
    };
    let name = format!("{fault:?}.sh");
    sb.write(
        &format!("hooks/{name}"),
        format!("#!/bin/sh\n{record}{body}"),
    );
    let p = sb.path(&format!("hooks/{name}"));
    let mode = if fault == Fault::NotExecutable {
        0o644
    } else {
        0o755
    };
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{e}"));
    p.display().to_string()
}

/// Every recorded pid of the hooks is gone (reaped: not even a zombie) within `limit`.
fn all_reaped(dir: &Path, limit: Duration) -> Result<(), String> {
    let list = std::fs::read_to_string(dir.join("pids/list")).unwrap_or_default();
    let start = Instant::now();
    for pid in list.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
        while Path::new(&format!("/proc/{pid}")).exists() {
            if start.elapsed() > limit {
                return Err(format!("process {pid} of the hook is still there"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// One cell: the outcome's stage, its text and notes, and how long the call took.
async fn cell(
    event: HookEvent,
    fault: Fault,
    allow_bash: bool,
) -> (Stage, String, Vec<String>, Duration, Sandbox) {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.path("pids")).unwrap_or_else(|e| panic!("{e}"));
    let mut hooks = Hooks::new();
    hooks
        .command_group(
            event,
            "Bash",
            false,
            vec![CommandSpec {
                timeout: Some(TIMEOUT),
                ..CommandSpec::new(hook_command(&sb, fault))
            }],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let allow: &[&str] = if allow_bash { &["Bash"] } else { &[] };
    let mut s = sb.builder(allow).hooks(hooks).build();
    let command = match event {
        // Writes: no rule, no run (echo alone is read-only and needs no rule).
        HookEvent::PostToolUseFailure => "touch made.txt; echo failing; exit 3",
        _ => "touch made.txt; echo ran",
    };
    let start = Instant::now();
    let o = call(&mut s, "Bash", json!({"command": command})).await;
    (
        o.stage,
        o.content.to_text(),
        o.user_notes.clone(),
        start.elapsed(),
        sb,
    )
}

#[tokio::test]
async fn every_hook_fault_on_every_event_gives_its_outcome_in_time_and_leaves_nothing_behind() {
    let mut table = Vec::new();
    for event in [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
    ] {
        for fault in FAULTS {
            let (stage, text, notes, took, sb) = cell(event, fault, true).await;
            let here = format!("{event:?} × {fault:?}");
            assert!(
                took < TIMEOUT + Duration::from_secs(10),
                "{here}: took {took:?}"
            );
            all_reaped(&sb.ws(), Duration::from_secs(10)).unwrap_or_else(|e| panic!("{here}: {e}"));
            // What each cell must give, with Bash allowed by a rule.
            let failing = event == HookEvent::PostToolUseFailure;
            match (event, fault) {
                // A PreToolUse exit 2 blocks the call with the hook's stderr.
                (HookEvent::PreToolUse, Fault::Exit2) => {
                    assert_eq!(stage, Stage::PreToolUse, "{here}");
                    assert!(text.contains("stopped by the hook"), "{here}: {text}");
                }
                // Every other PreToolUse fault gives no decision: the rules decide, and the
                // allowed call runs.
                (HookEvent::PreToolUse, _) => {
                    assert_eq!(stage, Stage::Ran, "{here}: {text}");
                    assert_eq!(text, "ran", "{here}");
                }
                // After the call, exit 2 adds the hook's stderr to the result as feedback.
                (_, Fault::Exit2) => {
                    assert_eq!(stage, Stage::Ran, "{here}");
                    assert!(text.contains("stopped by the hook"), "{here}: {text}");
                }
                // Any other fault after the call leaves the result as the tool gave it.
                _ => {
                    assert_eq!(stage, Stage::Ran, "{here}");
                    let expect = if failing {
                        "Exit code 3\nfailing"
                    } else {
                        "ran"
                    };
                    assert_eq!(text, expect, "{here}");
                    assert!(!text.contains("hook"), "{here}: {text}");
                }
            }
            // A fault the user should hear about leaves a note (not shown to the model).
            let noted = matches!(
                fault,
                Fault::Exit1 | Fault::Signal | Fault::Hang | Fault::Missing | Fault::NotExecutable
            );
            if noted {
                assert!(!notes.is_empty(), "{here}: no note for the user");
            }
            table.push(format!(
                "{here}: {stage:?}, {} notes, {:.2}s",
                notes.len(),
                took.as_secs_f64()
            ));
        }
    }
    eprintln!("{}", table.join("\n"));
}

#[tokio::test]
async fn no_hook_fault_turns_a_call_the_rules_do_not_allow_into_one_that_runs() {
    // No rule allows Bash and nobody is there to approve: whatever the PreToolUse hook does,
    // the call is refused, and a PostToolUse hook is never reached.
    for event in [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
    ] {
        for fault in FAULTS {
            let (stage, text, _, _, sb) = cell(event, fault, false).await;
            assert_ne!(stage, Stage::Ran, "{event:?} × {fault:?}: {text}");
            all_reaped(&sb.ws(), Duration::from_secs(10))
                .unwrap_or_else(|e| panic!("{event:?} × {fault:?}: {e}"));
        }
    }
}
