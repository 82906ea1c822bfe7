//! Time of check to time of use: a path allowed when the permission decision is made and
//! changed before the tool acts (a link swapped in, in the file's place or on the way to it)
//! is not read or written through. The swap is made by a host layer that runs between the
//! decision and the call, so the race is hit every time.

#![allow(clippy::unwrap_used)] // helpers outside #[test] functions fail the test the same way

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tool_core::{PermissionMode, RuleList, Stage, ToolInvocation};
use tool_orchestrator::{Session, ToolService};
use toolgate_tests::{Sandbox, call, policy_of};

/// A layer that runs `swap` once, right before the first call reaches the tool.
fn swap_once(
    swap: impl Fn() + Send + Sync + 'static,
) -> impl tower::Layer<
    ToolService,
    Service = impl tower::Service<
        ToolInvocation,
        Response = tool_core::ToolOutcome,
        Error = tool_core::Error,
        Future = impl Send + 'static,
    > + Clone
              + Send
              + Sync
              + 'static,
> + Send
+ Sync
+ 'static {
    let swap = Arc::new(swap);
    let done = Arc::new(AtomicBool::new(false));
    tower::layer::layer_fn(move |inner: ToolService| {
        let (swap, done) = (swap.clone(), done.clone());
        tower::ServiceExt::map_request(inner, move |inv: ToolInvocation| {
            if !done.swap(true, Ordering::SeqCst) {
                swap();
            }
            inv
        })
    })
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// A session in acceptEdits mode (writes inside the workspace need no rule) with `rules`, and
/// `swap` run between the decision and the first call.
fn session(
    sb: &Sandbox,
    rules: &[(RuleList, &str)],
    swap: impl Fn() + Send + Sync + 'static,
) -> Session {
    let mut ctx = sb.ctx_in(PermissionMode::AcceptEdits);
    ctx.home = sb.ws().parent().unwrap().join("home");
    Session::builder(builtin_tools::registry().unwrap(), ctx)
        .policy(Arc::new(policy_of(rules)))
        .layer_around_call(swap_once(swap))
        .build()
}

#[tokio::test]
async fn a_directory_swapped_for_a_link_after_the_decision_is_not_written_through() {
    let sb = Sandbox::new();
    let home = sb.ws().parent().unwrap().join("home");
    std::fs::create_dir_all(home.join("elsewhere")).unwrap();
    sb.write("sub/keep.txt", "k\n");
    let (sub, ws) = (sb.path("sub"), sb.ws());
    let outside = home.join("elsewhere");
    let mut s = session(&sb, &[], move || {
        std::fs::rename(&sub, ws.join("sub.moved")).unwrap();
        link(&outside, &sub);
    });
    let out = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("sub/new.txt"), "content": "x\n"}),
    )
    .await;
    assert!(out.is_error, "{:?}", out.content);
    let text = format!("{:?}", out.content);
    assert!(
        text.contains(
            "its parent-directory symlink resolution changed after permission was checked"
        ),
        "{text}"
    );
    assert!(
        !home.join("elsewhere/new.txt").exists(),
        "written through the swapped-in link"
    );
    assert!(!sb.path("sub.moved/new.txt").exists());
}

#[tokio::test]
async fn a_file_swapped_for_a_link_to_a_denied_file_is_neither_edited_nor_read() {
    let sb = Sandbox::new();
    let home = sb.ws().parent().unwrap().join("home");
    std::fs::create_dir_all(home.join("secret")).unwrap();
    std::fs::write(home.join("secret/key"), "alpha secret\n").unwrap();
    sb.write("a.txt", "alpha\n");
    let deny = format!("Read(/{}/secret/**)", home.display());
    let deny_edit = format!("Edit(/{}/secret/**)", home.display());
    let rules = [
        (RuleList::Deny, deny.as_str()),
        (RuleList::Deny, deny_edit.as_str()),
    ];

    // Edit: read first, then the file is replaced by a link to the key before the Edit runs.
    let (a, key) = (sb.path("a.txt"), home.join("secret/key"));
    let mut s = session(&sb, &rules, move || {
        std::fs::remove_file(&a).unwrap();
        link(&key, &a);
    });
    // The swap runs before the first call that reaches the tool: make that the Edit by
    // recording the Read in the file-state cache through a session without the layer.
    let mut reader = session(&sb, &rules, || {});
    assert_eq!(
        call(&mut reader, "Read", json!({"file_path": sb.p("a.txt")}))
            .await
            .stage,
        Stage::Ran
    );
    for (p, st) in reader.context().file_state.entries() {
        s.context().file_state.insert(p, st);
    }
    let out = call(
        &mut s,
        "Edit",
        json!({"file_path": sb.p("a.txt"), "old_string": "alpha", "new_string": "beta"}),
    )
    .await;
    assert!(out.is_error, "{:?}", out.content);
    assert_eq!(
        std::fs::read_to_string(home.join("secret/key")).unwrap(),
        "alpha secret\n"
    );

    // Read: the file is swapped for a link to the key after the decision.
    let sb2 = Sandbox::new();
    let home2 = sb2.ws().parent().unwrap().join("home");
    std::fs::create_dir_all(home2.join("secret")).unwrap();
    std::fs::write(home2.join("secret/key"), "alpha secret\n").unwrap();
    sb2.write("b.txt", "plain\n");
    let deny2 = format!("Read(/{}/secret/**)", home2.display());
    let (b, key2) = (sb2.path("b.txt"), home2.join("secret/key"));
    let mut s2 = session(&sb2, &[(RuleList::Deny, deny2.as_str())], move || {
        std::fs::remove_file(&b).unwrap();
        link(&key2, &b);
    });
    let out = call(&mut s2, "Read", json!({"file_path": sb2.p("b.txt")})).await;
    assert!(out.is_error, "{:?}", out.content);
    let text = format!("{:?}", out.content);
    assert!(
        !text.contains("alpha secret"),
        "the denied file was read: {text}"
    );
    assert!(text.contains("nothing was read"), "{text}");
}

#[tokio::test]
async fn without_a_swap_the_same_calls_go_through() {
    let sb = Sandbox::new();
    sb.write("sub/keep.txt", "k\n");
    let mut s = session(&sb, &[], || {});
    let out = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("sub/new.txt"), "content": "x\n"}),
    )
    .await;
    assert!(!out.is_error, "{:?}", out.content);
    assert_eq!(sb.read("sub/new.txt"), b"x\n");
}
