//! Turns with many calls: batches, the concurrency cap, context replay in block order,
//! streaming pushes, cancellation, interrupts, sibling cancel, panics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;
use tool_core::texts::REJECT_MESSAGE;
use tool_core::{ToolContext, ToolUse};
use tool_orchestrator::{Session, TurnUpdate, max_concurrency};
use toolgate_tests::{Sandbox, add_env, prop_peak};

fn session(sb: &Sandbox, cap: Option<usize>) -> Session {
    let mut s = sb.session(&["Prop", "PropBlock", "Read", "Grep", "Bash"]);
    if let Some(cap) = cap {
        add_env(
            &mut s,
            [("TOOLGATE_MAX_TOOL_USE_CONCURRENCY", cap.to_string())],
        );
    }
    s
}

fn prop(id: &str, group: &str, safe: bool, ms: u64, mods: u64) -> ToolUse {
    ToolUse::new(
        id,
        "Prop",
        json!({"id": id, "group": group, "safe": safe, "ms": ms, "mods": mods}),
    )
}

fn log(s: &Session) -> String {
    s.context().env.get("log").cloned().unwrap_or_default()
}

/// (safe, ms, mods) per call.
fn calls() -> impl Strategy<Value = Vec<(bool, u64, u64)>> {
    prop::collection::vec((any::<bool>(), 0u64..25, 0u64..3), 1..9)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the safety flags, durations and context changes: batches keep block order,
    /// results come back in block order, every change applies in block order whatever the
    /// completion order, each call sees exactly the changes of the batches before its own, the
    /// cap is never exceeded, and pushing the blocks one by one gives the same turn.
    #[test]
    fn turns_keep_block_order(spec in calls(), cap in 1usize..5, seed in any::<u64>()) {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let sb = Sandbox::new();
        let group = format!("prop-{seed}-{}", spec.len());
        let blocks: Vec<ToolUse> = spec
            .iter()
            .enumerate()
            .map(|(i, (safe, ms, mods))| prop(&format!("c{i}"), &group, *safe, *ms, *mods))
            .collect();

        // The partition: consecutive safe calls together, in block order.
        let s = session(&sb, Some(cap));
        let batches = s.partition(&blocks);
        let flat: Vec<usize> = batches.iter().flatten().copied().collect();
        prop_assert_eq!(flat, (0..blocks.len()).collect::<Vec<_>>());
        for b in &batches {
            if b.len() > 1 {
                prop_assert!(b.iter().all(|&i| spec[i].0));
            }
        }

        // What each call must see: the changes of every earlier batch, in block order.
        let mut expected_saw = vec![String::new(); blocks.len()];
        let mut applied: Vec<String> = Vec::new();
        for b in &batches {
            for &i in b {
                expected_saw[i] = applied.join(",");
            }
            for &i in b {
                applied.extend((0..spec[i].2).map(|k| format!("c{i}.{k}")));
            }
        }
        let expected_log = applied.join(",");

        let mut whole = session(&sb, Some(cap));
        let turn = rt.block_on(whole.run_turn(&blocks));
        let ids: Vec<String> = turn
            .user_message()
            .tool_results()
            .map(|r| r.tool_use_id.clone())
            .collect();
        prop_assert_eq!(ids, blocks.iter().map(|b| b.id.clone()).collect::<Vec<_>>());
        for (i, o) in turn.outcomes.iter().enumerate() {
            prop_assert_eq!(o.content.to_text(), format!("c{i} saw [{}]", expected_saw[i]));
        }
        prop_assert_eq!(log(&whole), expected_log.clone());
        prop_assert!(turn.peak_in_flight <= cap);
        prop_assert!(prop_peak(&group) <= cap);

        // The streaming executor, blocks pushed one at a time with pauses between.
        let mut streamed = session(&sb, Some(cap));
        let outcome = rt.block_on(async {
            let mut run = streamed.streaming();
            for (i, b) in blocks.iter().enumerate() {
                run.push(b.clone());
                if (seed >> (i % 60)) & 1 == 1 {
                    tokio::time::sleep(Duration::from_millis(3)).await;
                }
            }
            run.collect().await
        });
        for (a, b) in outcome.outcomes.iter().zip(&turn.outcomes) {
            prop_assert_eq!(a.content.to_text(), b.content.to_text());
        }
        prop_assert_eq!(log(&streamed), expected_log);
    }
}

#[tokio::test]
async fn fifty_safe_calls_with_a_cap_of_ten_run_ten_at_a_time() {
    let sb = Sandbox::new();
    let mut s = session(&sb, Some(10));
    let blocks: Vec<ToolUse> = (0..50)
        .map(|i| prop(&format!("f{i}"), "fifty", true, 100, 0))
        .collect();
    let start = Instant::now();
    let turn = s.run_turn(&blocks).await;
    let took = start.elapsed();
    assert!(turn.outcomes.iter().all(|o| !o.is_error));
    // Serially this is 5 s; ten at a time, about 0.5 s.
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert_eq!(turn.peak_in_flight, 10);
    assert!(prop_peak("fifty") <= 10);
}

#[test]
fn the_cap_comes_from_the_environment() {
    let mut ctx = ToolContext::new("/w", "/h", "/r");
    let with = |pairs: &[(&str, &str)]| {
        let mut c = ctx.clone();
        c.env = Arc::new(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        max_concurrency(&c)
    };
    assert_eq!(with(&[("TOOLGATE_MAX_TOOL_USE_CONCURRENCY", "3")]), 3);
    assert_eq!(with(&[("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY", "4")]), 4);
    assert_eq!(
        with(&[
            ("TOOLGATE_MAX_TOOL_USE_CONCURRENCY", "2"),
            ("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY", "4")
        ]),
        2
    );
    assert_eq!(with(&[("TOOLGATE_MAX_TOOL_USE_CONCURRENCY", "0")]), 10);
    assert_eq!(with(&[("TOOLGATE_MAX_TOOL_USE_CONCURRENCY", "many")]), 10);
    ctx.env = Arc::new(Default::default());
    assert!(max_concurrency(&ctx) >= 1);
}

#[tokio::test]
async fn an_edit_between_two_reads_splits_the_batch_and_the_last_read_sees_it() {
    let sb = Sandbox::new();
    sb.write("a.txt", "old\n");
    sb.write("b.txt", "bee\n");
    let mut s = sb.session(&["Edit"]);
    let read = |id: &str, f: &str| ToolUse::new(id, "Read", json!({"file_path": sb.p(f)}));
    let blocks = [
        read("r1", "a.txt"),
        ToolUse::new(
            "e",
            "Edit",
            json!({"file_path": sb.p("a.txt"), "old_string": "old", "new_string": "new"}),
        ),
        read("r2", "a.txt"),
    ];
    assert_eq!(s.partition(&blocks), [vec![0], vec![1], vec![2]]);
    let turn = s.run_turn(&blocks).await;
    assert_eq!(turn.outcomes[0].content.to_text(), "1\told\n2\t");
    assert!(!turn.outcomes[1].is_error, "{:?}", turn.outcomes[1].content);
    assert_eq!(turn.outcomes[2].content.to_text(), "1\tnew\n2\t");

    // Two reads form one batch and run at once: both start before either finishes.
    let blocks = [read("x", "a.txt"), read("y", "b.txt")];
    assert_eq!(s.partition(&blocks), [vec![0, 1]]);
    let mut run = s.start_turn(blocks);
    let events: Vec<TurnUpdate> = futures::StreamExt::collect(run.updates()).await;
    let first_finish = events
        .iter()
        .position(|u| matches!(u, TurnUpdate::Finished { .. }))
        .unwrap_or(usize::MAX);
    let starts = events[..first_finish.min(events.len())]
        .iter()
        .filter(|u| matches!(u, TurnUpdate::Started { .. }))
        .count();
    assert_eq!(starts, 2, "{events:?}");
    assert_eq!(run.collect().await.peak_in_flight, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_long_grep_does_not_delay_a_short_read_in_its_batch() {
    let sb = Sandbox::new();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    sb.write("big/corpus.txt", line.repeat(600_000));
    sb.write("small.txt", "small\n");
    let mut s = session(&sb, None);
    let blocks = [
        ToolUse::new(
            "g",
            "Grep",
            json!({"pattern": "z{3}q[0-9]+x", "path": sb.p("big"), "output_mode": "count"}),
        ),
        ToolUse::new("r", "Read", json!({"file_path": sb.p("small.txt")})),
    ];
    assert_eq!(s.partition(&blocks), [vec![0, 1]]);
    let start = Instant::now();
    let mut run = s.start_turn(blocks);
    let mut finished = Vec::new();
    while let Some(u) = run.next().await {
        if let TurnUpdate::Finished { index, .. } = u {
            finished.push((index, start.elapsed()));
        }
    }
    // One runtime thread: had the Grep searched on it, the Read could not have run meanwhile.
    assert_eq!(finished[0].0, 1, "{finished:?}");
    assert!(finished[0].1 * 2 < finished[1].1, "{finished:?}");
}

#[tokio::test]
async fn a_call_pushed_while_streaming_starts_before_the_turn_is_finished() {
    let sb = Sandbox::new();
    let mut s = session(&sb, None);
    let mut run = s.streaming();
    run.push(prop("s1", "stream", true, 150, 1));
    assert!(run.started(0));
    run.push(prop("u1", "stream", false, 0, 1));
    // The unsafe call waits for the safe one.
    assert!(!run.started(1));
    match run.next().await {
        Some(TurnUpdate::Started { index: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    match run.next().await {
        Some(TurnUpdate::Finished { index: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    run.finish();
    let turn = run.collect().await;
    // The unsafe call saw the safe batch's change; its own applied after it.
    assert_eq!(turn.outcomes[1].content.to_text(), "u1 saw [s1.0]");
    assert_eq!(log(&s), "s1.0,u1.0");
}

fn sleeps_alive(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c).replace('\0', " ").trim() == format!("sleep {marker}")
            })
        })
        .count()
}

#[tokio::test]
async fn cancelling_a_turn_mid_batch_answers_every_call_and_leaves_no_process() {
    let sb = Sandbox::new();
    let mut s = session(&sb, None);
    let token = s.cancellation_token();
    let marker = "31.4159";
    let blocks: Vec<ToolUse> = (0..3)
        .map(|i| {
            ToolUse::new(
                format!("b{i}"),
                "Bash",
                json!({"command": format!("sleep {marker}")}),
            )
        })
        .chain([prop("after", "cancel", false, 0, 0)])
        .collect();
    assert_eq!(s.partition(&blocks), [vec![0, 1, 2], vec![3]]);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        token.cancel();
    });
    let start = Instant::now();
    let turn = s.run_turn(&blocks).await;
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(turn.outcomes.len(), 4);
    for o in &turn.outcomes {
        assert!(o.is_error, "{:?}", o.content);
    }
    assert_eq!(
        turn.outcomes[3].content.to_text(),
        tool_core::texts::CANCEL_MESSAGE
    );
    let t = Instant::now();
    while sleeps_alive(marker) > 0 && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sleeps_alive(marker), 0);
    // The next turn runs normally.
    let o = s.run_turn(&[prop("next", "cancel", true, 0, 0)]).await;
    assert!(!o.outcomes[0].is_error);
}

#[tokio::test]
async fn a_panic_in_one_call_of_a_batch_leaves_the_others_intact() {
    let sb = Sandbox::new();
    let mut s = session(&sb, None);
    let mut blocks: Vec<ToolUse> = (0..5)
        .map(|i| prop(&format!("p{i}"), "panic", true, 30, 1))
        .collect();
    blocks[2] = ToolUse::new(
        "p2",
        "Prop",
        json!({"id": "p2", "group": "panic", "safe": true, "ms": 10, "panic": true}),
    );
    // A safety check that panics counts as unsafe.
    let odd = ToolUse::new(
        "odd",
        "Prop",
        json!({"id": "odd", "safe": true, "check_panics": true}),
    );
    assert_eq!(s.partition(std::slice::from_ref(&odd)), [vec![0]]);
    let turn = s.run_turn(&blocks).await;
    for (i, o) in turn.outcomes.iter().enumerate() {
        if i == 2 {
            assert!(o.is_error);
            assert!(
                o.content.to_text().contains("deliberate panic in Prop p2"),
                "{:?}",
                o.content
            );
        } else {
            assert_eq!(o.content.to_text(), format!("p{i} saw []"));
        }
    }
    assert_eq!(log(&s), "p0.0,p1.0,p3.0,p4.0");
}

#[tokio::test]
async fn an_interrupt_cancels_only_calls_that_cancel_on_interrupt() {
    let sb = Sandbox::new();
    let mut s = session(&sb, None);
    let handle = s.interrupt_handle();
    let blocks = [
        prop("c", "interrupt", true, 5000, 0),
        ToolUse::new(
            "b",
            "PropBlock",
            json!({"id": "b", "group": "interrupt", "safe": true, "ms": 300}),
        ),
    ];
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        handle.interrupt();
    });
    let start = Instant::now();
    let turn = s.run_turn(&blocks).await;
    assert!(start.elapsed() < Duration::from_secs(4));
    assert_eq!(turn.outcomes[0].content.to_text(), REJECT_MESSAGE);
    assert_eq!(turn.outcomes[1].content.to_text(), "b saw []");
}

#[tokio::test]
async fn a_failed_bash_cancels_its_siblings_only_when_asked() {
    let sb = Sandbox::new();
    for cancel in [false, true] {
        let mut s = sb
            .builder(&["Prop", "PropBlock", "Bash"])
            .cancel_siblings_on_bash_error(cancel)
            .build();
        let blocks = [
            ToolUse::new("bad", "Bash", json!({"command": "ls missing-dir"})),
            prop("slow", "sibling", true, 1500, 0),
        ];
        assert_eq!(s.partition(&blocks), [vec![0, 1]]);
        let turn = s.run_turn(&blocks).await;
        assert!(turn.outcomes[0].is_error);
        let other = turn.outcomes[1].content.to_text();
        if cancel {
            assert_eq!(
                other,
                "<tool_use_error>Cancelled: parallel tool call Bash(ls missing-dir) errored</tool_use_error>"
            );
        } else {
            assert_eq!(other, "slow saw []");
        }
    }
}
