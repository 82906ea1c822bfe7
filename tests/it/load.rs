//! Load: 10,000 calls through one session in turns of 100, with PreToolUse and PostToolUse
//! hooks (in-process on every call, a command hook on the Bash ones) and a policy of 1,000
//! rules. Every call gets exactly one result, with its id; the file-state cache stays within
//! its bounds; memory stops growing once the caches are warm; no file descriptor leaks.
//! `TOOLGATE_LOAD_CALLS` sets the number of calls (default 10,000).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tool_core::{HookOutcome, PermissionMode, RuleList, Stage, ToolUse};
use tool_hooks::{CommandSpec, HookEvent, Hooks, PostHookOutcome};
use tool_orchestrator::Session;
use toolgate_tests::{Sandbox, policy_of};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Open descriptors once the background work between calls has settled (the sandbox makes
/// the next command's network namespace ahead, on a thread of its own): the count seen five
/// times in a row, 5 ms apart, or the last one after two seconds.
fn settled_fds() -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let (mut last, mut same) = (open_fds(), 0);
    while same < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let now = open_fds();
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    last
}

/// Resident memory now, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// 1,000 rules of every kind, none of which touches the calls made.
fn rules() -> Vec<(RuleList, String)> {
    (0..1000)
        .map(|i| match i % 5 {
            0 => (RuleList::Deny, format!("Read(./secret{i}/**)")),
            1 => (RuleList::Allow, format!("Edit(/src{i}/**)")),
            2 => (RuleList::Deny, format!("Bash(tool{i}:*)")),
            3 => (RuleList::Ask, format!("Bash(cmd{i} *)")),
            _ => (RuleList::Deny, format!("WebFetch(domain:host{i}.example)")),
        })
        .collect()
}

/// Descriptors and memory are the process's, and the other tests of this binary open and
/// close their own at the same time: the load runs in a child process of its own (this test
/// binary again, running only this test).
#[test]
fn ten_thousand_calls_through_one_session_leak_nothing() {
    if std::env::var_os("TOOLGATE_LOAD_CHILD").is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
            .block_on(load());
        return;
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "load::ten_thousand_calls_through_one_session_leak_nothing",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("TOOLGATE_LOAD_CHILD", "1")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert!(
        out.status.success(),
        "{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains(" calls: file descriptors "),
        "the load did not run: {err}"
    );
}

async fn load() {
    let calls: usize = std::env::var("TOOLGATE_LOAD_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let sb = Sandbox::new();
    for i in 0..150 {
        sb.write(&format!("src/f{i}.txt"), format!("file {i}\n").repeat(20));
    }
    let (pre_seen, post_seen) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut hooks = Hooks::new();
    let n = pre_seen.clone();
    hooks
        .pre_tool_use("*", move |_: tool_hooks::PreToolUseInput| {
            n.fetch_add(1, Ordering::SeqCst);
            async { HookOutcome::default() }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let n = post_seen.clone();
    hooks
        .post_tool_use("*", move |_: tool_hooks::PostToolUseInput| {
            n.fetch_add(1, Ordering::SeqCst);
            async { PostHookOutcome::default() }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    hooks
        .command_group(
            HookEvent::PreToolUse,
            "Bash",
            false,
            vec![CommandSpec::new("cat > /dev/null")],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let rules = rules();
    let refs: Vec<(RuleList, &str)> = rules.iter().map(|(l, r)| (*l, r.as_str())).collect();
    let mut ctx = sb.ctx_in(PermissionMode::Default);
    ctx.file_state = Arc::new(tool_core::FileStateCache::new(100, 1 << 20));
    let mut s = Session::builder(
        builtin_tools::registry().unwrap_or_else(|e| panic!("{e}")),
        ctx,
    )
    .policy(Arc::new(policy_of(&refs)))
    .hooks(hooks)
    .build();
    let turn = |t: usize| -> Vec<ToolUse> {
        (0..100)
            .map(|k| {
                let i = t * 100 + k;
                let id = format!("toolu_{i}");
                match k {
                    0 => ToolUse::new(id, "Bash", json!({"command": "echo batch"})),
                    1 => ToolUse::new(id, "Glob", json!({"pattern": "src/*.txt"})),
                    2 => ToolUse::new(
                        id,
                        "Grep",
                        json!({"pattern": "file 1", "path": sb.p("src")}),
                    ),
                    _ => ToolUse::new(
                        id,
                        "Read",
                        json!({"file_path": sb.p(&format!("src/f{}.txt", i % 150))}),
                    ),
                }
            })
            .collect()
    };
    let turns = calls / 100;
    let warm = (turns / 5).max(1);
    let (mut fds_warm, mut rss_warm, mut rss_peak) = (0, 0, 0);
    let mut results = 0;
    for t in 0..turns {
        let blocks = turn(t);
        let out = s.run_turn(&blocks).await;
        assert_eq!(out.outcomes.len(), blocks.len(), "turn {t}");
        for (b, o) in blocks.iter().zip(&out.outcomes) {
            assert_eq!(o.tool_use_id, b.id);
            assert_eq!(o.stage, Stage::Ran, "{}: {:?}", b.id, o.content);
        }
        results += out.outcomes.len();
        assert!(s.context().file_state.len() <= 100);
        assert!(s.context().file_state.bytes() <= 1 << 20);
        if t + 1 == warm {
            (fds_warm, rss_warm) = (settled_fds(), rss_kib());
        }
        rss_peak = rss_peak.max(rss_kib());
    }
    let (fds_end, rss_end) = (settled_fds(), rss_kib());
    eprintln!(
        "{results} calls: file descriptors {fds_warm} after warm-up, {fds_end} at the end; resident memory {rss_warm} KiB after warm-up, {rss_end} KiB at the end, {rss_peak} KiB at most; cache {} entries",
        s.context().file_state.len()
    );
    assert_eq!(results, turns * 100);
    assert_eq!(pre_seen.load(Ordering::SeqCst), results);
    assert_eq!(post_seen.load(Ordering::SeqCst), results);
    assert_eq!(fds_end, fds_warm, "file descriptors leaked");
    assert!(
        rss_end < rss_warm + 64 * 1024,
        "memory grew by {} KiB after warm-up",
        rss_end.saturating_sub(rss_warm)
    );
}
