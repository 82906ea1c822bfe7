//! Content rules through the whole pipeline: path rules (anchors, symlinks, every reading and
//! writing tool) and Bash deny rules on every unit a command line runs.

use std::sync::Arc;

use serde_json::json;
use tool_core::{RuleList, Stage};
use tool_permissions::{Layer, PolicyBuilder};
use toolgate_tests::{Sandbox, call, decide_builtin, policy_of};

fn policy(rules: &[(RuleList, &str)]) -> Arc<tool_permissions::Policy> {
    Arc::new(policy_of(rules))
}

const DENIED: &str = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";
const READ_DENIED_WRITE: &str = "<tool_use_error>File is covered by a Read deny rule in your permission settings and cannot be written.</tool_use_error>";

#[tokio::test]
async fn read_deny_covers_every_reading_tool_and_writes() {
    let sb = Sandbox::new();
    sb.write("secrets/key.pem", "k\n");
    sb.write("open.txt", "needle\n");
    sb.write("secrets/notes.txt", "needle\n");
    let mut s = sb
        .builder(&["Edit", "Write"])
        .policy(policy(&[(RuleList::Deny, "Read(./secrets/**)")]))
        .build();
    assert_eq!(
        call(
            &mut s,
            "Read",
            json!({"file_path": sb.p("secrets/key.pem")})
        )
        .await
        .content
        .to_text(),
        DENIED
    );
    assert_eq!(
        call(
            &mut s,
            "Write",
            json!({"file_path": sb.p("secrets/new.txt"), "content": "x"})
        )
        .await
        .content
        .to_text(),
        READ_DENIED_WRITE
    );
    let grep = call(&mut s, "Grep", json!({"pattern": "needle"}))
        .await
        .content
        .to_text();
    assert_eq!(grep, "Found 1 file\nopen.txt");
    let o = call(
        &mut s,
        "Grep",
        json!({"pattern": "needle", "path": sb.p("secrets")}),
    )
    .await;
    assert_eq!(
        o.stage,
        Stage::Permission,
        "a deny covering the search root denies the call"
    );
    assert_eq!(
        o.content.to_text(),
        format!("Permission to read {} has been denied.", sb.p("secrets"))
    );
    assert_eq!(
        call(&mut s, "Glob", json!({"pattern": "**/*"}))
            .await
            .content
            .to_text(),
        "open.txt"
    );
    assert!(!sb.path("secrets/new.txt").exists());
}

#[tokio::test]
async fn a_symlink_into_a_denied_directory_is_denied() {
    let sb = Sandbox::new();
    sb.write("private/data.txt", "secret\n");
    std::os::unix::fs::symlink(sb.path("private"), sb.path("innocent")).unwrap();
    let mut s = sb
        .builder(&["Edit", "Write"])
        .policy(policy(&[
            (RuleList::Deny, "Edit(/private)"),
            (RuleList::Deny, "Read(/private/**)"),
        ]))
        .build();
    assert_eq!(
        call(
            &mut s,
            "Read",
            json!({"file_path": sb.p("innocent/data.txt")})
        )
        .await
        .content
        .to_text(),
        // The name passes the Read tool's own check; the decision resolves the link (as
        // Claude Code does, recorded: sl_read_through_links).
        format!(
            "Permission to read {} has been denied.",
            sb.p("innocent/data.txt")
        )
    );
    let o = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("innocent/new.txt"), "content": "x"}),
    )
    .await;
    // Write's own check resolves links against Read denies (recorded: sl_link_parent_dir).
    assert_eq!(o.content.to_text(), READ_DENIED_WRITE);
    assert!(!sb.path("private/new.txt").exists());
}

#[tokio::test]
async fn path_allow_needs_every_spelling_and_edit_deny_beats_allow() {
    let sb = Sandbox::new();
    sb.write("docs/a.md", "a\n");
    sb.write("other/b.md", "b\n");
    std::os::unix::fs::symlink(sb.path("other"), sb.path("docs/link")).unwrap();
    let mut s = sb
        .builder(&[])
        .policy(policy(&[
            (RuleList::Allow, "Edit(/docs/**)"),
            (RuleList::Deny, "Edit(/docs/locked.md)"),
        ]))
        .build();
    call(&mut s, "Read", json!({"file_path": sb.p("docs/a.md")})).await;
    assert!(
        !call(
            &mut s,
            "Edit",
            json!({"file_path": sb.p("docs/a.md"), "old_string": "a", "new_string": "A"})
        )
        .await
        .is_error
    );
    // Through the link the real path is other/b.md, which the allow does not cover: ask.
    call(&mut s, "Read", json!({"file_path": sb.p("docs/link/b.md")})).await;
    let o = call(
        &mut s,
        "Edit",
        json!({"file_path": sb.p("docs/link/b.md"), "old_string": "b", "new_string": "B"}),
    )
    .await;
    assert_eq!(o.stage, Stage::Permission);
    let o = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("docs/locked.md"), "content": "x"}),
    )
    .await;
    assert_eq!(o.content.to_text(), DENIED);
}

#[tokio::test]
async fn bash_deny_rules_match_every_unit_whatever_the_spelling() {
    let sb = Sandbox::new();
    let mut s = sb
        .builder(&["Bash"])
        .policy(policy(&[
            (RuleList::Allow, "Bash"),
            (RuleList::Deny, "Bash(curl:*)"),
        ]))
        .build();
    // The message quotes the line, or with a pipe the first piece denied on its own (as
    // Claude Code does; recorded: dm_ scenarios).
    for (cmd, quoted) in [
        ("curl https://example.com", "curl https://example.com"),
        ("echo hi && curl x", "echo hi && curl x"),
        (
            "timeout 5 nice -n 1 /usr/bin/curl x",
            "timeout 5 nice -n 1 /usr/bin/curl x",
        ),
        ("FOO=1 env BAR=2 curl x", "FOO=1 env BAR=2 curl x"),
        ("bash -c 'curl x | sh'", "bash -c 'curl x | sh'"),
        ("echo $(curl x)", "echo $(curl x)"),
        ("\"cu\"rl x", "\"cu\"rl x"),
        ("ls | xargs curl", "xargs curl"),
    ] {
        let o = call(&mut s, "Bash", json!({"command": cmd})).await;
        assert_eq!(o.stage, Stage::Permission, "{cmd}");
        assert_eq!(
            o.content.to_text(),
            format!("Permission to use Bash with command {quoted} has been denied.")
        );
    }
    assert_eq!(
        call(&mut s, "Bash", json!({"command": "echo curly"}))
            .await
            .content
            .to_text(),
        "curly"
    );
}

#[test]
fn rules_for_unsupported_contents_are_refused_at_load() {
    let err = PolicyBuilder::new()
        .rule(RuleList::Allow, "Frobnicate(fast)", Layer::User, None)
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("has content this engine cannot match")),
        "{err:?}"
    );
}

#[tokio::test]
async fn protected_paths_ask_in_every_mode_and_hooks_cannot_lift_them() {
    use tool_core::{HookDecision, HookOutcome, PermissionMode, Verdict};
    let sb = Sandbox::new();
    sb.write(".git/config", "[core]\n");
    let mut hooks = tool_hooks::Hooks::new();
    hooks
        .pre_tool_use("*", |_: tool_hooks::PreToolUseInput| async {
            HookOutcome {
                decision: Some(HookDecision {
                    verdict: Verdict::Allow,
                    reason: None,
                    hook: String::new(),
                }),
                ..Default::default()
            }
        })
        .unwrap();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let mut s = sb.builder(&["Edit"]).hooks(hooks.clone()).build();
        s.context_mut().permission_mode = mode;
        call(&mut s, "Read", json!({"file_path": sb.p(".git/config")})).await;
        let o = call(&mut s, "Edit", json!({"file_path": sb.p(".git/config"), "old_string": "[core]", "new_string": "[core]\n\tpager = sh"})).await;
        assert_eq!(o.stage, Stage::Permission, "{mode}");
        assert_eq!(
            o.content.to_text(),
            format!(
                "Claude requested permissions to edit {} which is a sensitive file.",
                sb.p(".git/config")
            )
        );
    }
    assert_eq!(sb.read(".git/config"), b"[core]\n");
}

/// Bash allow rules: every unit must be allowed; anything opaque, chained to an unallowed unit,
/// or touching a denied path is not.
#[tokio::test]
async fn bash_allow_rules_need_every_unit() {
    let sb = Sandbox::new();
    sb.write(".env", "SECRET=1\n");
    let p = policy(&[
        (RuleList::Allow, "Bash(git diff:*)"),
        (RuleList::Allow, "Bash(npm run test:*)"),
        (RuleList::Deny, "Read(./.env)"),
    ]);
    let ctx = sb.ctx();
    let decide =
        |cmd: &str| decide_builtin(p.as_ref(), &ctx, "Bash", &json!({"command": cmd})).verdict;
    use tool_core::Verdict::*;
    let cases = [
        ("git diff HEAD", Allow),
        ("git diff && ls -la", Allow),
        ("git diff && npm run test", Allow),
        ("git diff | sh", Ask),
        ("git diff && rm -rf build", Ask),
        ("git -c core.pager=sh diff", Ask),
        ("FOO=1 git diff", Ask),
        ("LANG=C git diff", Allow),
        ("/tmp/git diff", Ask),
        ("git diff > out.txt", Ask),
        ("git diff $(id)", Ask),
        ("eval 'git diff'", Ask),
        ("git diff; cat .env", Deny),
        ("git diff < .env", Deny),
        ("cat ./sub/../.env", Deny),
        ("echo 'unterminated", Ask),
        ("ls -la", Allow),
        ("cat /etc/hostname", Ask),
    ];
    for (cmd, want) in cases {
        assert_eq!(decide(cmd), want, "{cmd}");
    }
}

#[tokio::test]
async fn over_budget_and_raw_cr_lines_never_allow() {
    let sb = Sandbox::new();
    let mut s = sb
        .builder(&["Bash"])
        .policy(policy(&[(RuleList::Allow, "Bash")]))
        .build();
    let many = vec!["true"; 300].join(" && ");
    for cmd in [many.as_str(), "echo a\rrm -rf x"] {
        let o = call(&mut s, "Bash", json!({"command": cmd})).await;
        assert_eq!(o.stage, Stage::Permission, "{cmd:?}");
    }
}
