//! File identity and search scopes, on real files: a deny rule covers the same file under
//! another name (hard links, the targets of symlinks in a denied tree), Windows spellings
//! (drive case, UNC, 8.3 short names), Grep and Glob rooted above a denied tree, Glob patterns
//! naming one, and `Policy::denied_below` for recursive readers.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{PathPolicy, PermissionMode, ToolContext, Verdict};
use tool_permissions::Policy;
use toolgate_tests::{Sandbox, call, decide_builtin, grep_every_mode, policy};

/// The decision for a built-in tool's call, from its own permission subject.
fn decide(p: &Policy, ctx: &ToolContext, tool: &str, input: Value) -> Verdict {
    decide_builtin(p, ctx, tool, &input).verdict
}

fn read(path: &Path) -> Value {
    json!({"file_path": path.display().to_string()})
}

fn write(path: &Path) -> Value {
    json!({"file_path": path.display().to_string(), "content": "x"})
}

fn edit(path: &Path) -> Value {
    json!({"file_path": path.display().to_string(), "old_string": "s", "new_string": "t"})
}

#[test]
fn a_hard_link_to_a_denied_file_is_denied_under_its_other_name() {
    let sb = Sandbox::new();
    sb.write("secrets/key.pem", "s\n");
    sb.write("notes.txt", "s\n");
    std::fs::hard_link(sb.path("secrets/key.pem"), sb.path("k.txt")).unwrap();
    std::fs::hard_link(sb.path("notes.txt"), sb.path("notes2.txt")).unwrap();
    let mut c = sb.ctx();
    c.permission_mode = PermissionMode::AcceptEdits;
    let p = policy(&["Read(./secrets/**)"], &[], &[]);
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("k.txt"))),
        Verdict::Deny
    );
    assert_eq!(
        decide(&p, &c, "Write", write(&sb.path("k.txt"))),
        Verdict::Deny
    );
    assert_eq!(
        decide(&p, &c, "Edit", edit(&sb.path("k.txt"))),
        Verdict::Deny
    );
    // The tools' own name check sees only the name; the decision above and a search see
    // the file by every name.
    assert!(!p.read_denied(&sb.path("k.txt"), &c));
    assert!(p.write_read_denied(&sb.path("k.txt"), &c));
    assert!(p.search_hidden(&sb.path("k.txt"), &c));
    // A hard link between two allowed files is an ordinary file.
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("notes2.txt"))),
        Verdict::Allow
    );
    assert_eq!(
        decide(&p, &c, "Write", write(&sb.path("notes2.txt"))),
        Verdict::Allow
    );
    assert!(!p.read_denied(&sb.path("notes2.txt"), &c));

    // An Edit deny covers writes through another name, and leaves reads alone.
    let p = policy(&["Edit(./secrets/**)"], &[], &[]);
    assert_eq!(
        decide(&p, &c, "Write", write(&sb.path("k.txt"))),
        Verdict::Deny
    );
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("k.txt"))),
        Verdict::Allow
    );

    // A link made after the walk, to a file the walk saw, is still the same identity; a file
    // created after it is known once the identities are refreshed.
    let p = policy(&["Read(./secrets/**)"], &[], &[]);
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("notes.txt"))),
        Verdict::Allow
    );
    std::fs::hard_link(sb.path("secrets/key.pem"), sb.path("later.txt")).unwrap();
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("later.txt"))),
        Verdict::Deny
    );
    sb.write("secrets/new.pem", "n\n");
    std::fs::hard_link(sb.path("secrets/new.pem"), sb.path("new.txt")).unwrap();
    p.refresh_identities();
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("new.txt"))),
        Verdict::Deny
    );
}

#[test]
fn symlinks_in_a_denied_tree_deny_their_targets() {
    let sb = Sandbox::new();
    sb.write("data/out.txt", "d\n");
    sb.write("data/dir/inner.txt", "d\n");
    sb.write("secrets/key.pem", "k\n");
    std::os::unix::fs::symlink(sb.path("data/out.txt"), sb.path("secrets/alias")).unwrap();
    std::os::unix::fs::symlink(sb.path("data/dir"), sb.path("secrets/tree")).unwrap();
    std::os::unix::fs::symlink(sb.path("secrets/key.pem"), sb.path("docs-key")).unwrap();
    let c = sb.ctx();
    let p = policy(&["Read(./secrets/**)"], &[], &[]);
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("data/out.txt"))),
        Verdict::Deny
    );
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("data/dir/inner.txt"))),
        Verdict::Deny
    );
    // A symlink alias of a denied file (the link is outside the tree, its target inside).
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("docs-key"))),
        Verdict::Deny
    );
    // Files beside the targets are untouched.
    sb.write("data/other.txt", "o\n");
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("data/other.txt"))),
        Verdict::Allow
    );
}

#[test]
fn windows_spellings_fold_case_for_deny_and_never_allow() {
    let mut c = ToolContext::new("C:\\w\\p", "/home/u", "/tmp/r");
    c.cwd = "/c/w/p".into();
    let p = policy(
        &["Read(//c/Users/alice/.aws/**)", "Read(./secret.txt)"],
        &[],
        &[],
    );
    for path in [
        "C:\\Users\\alice\\.aws\\credentials",
        "c:/USERS/Alice/.AWS/credentials",
        "\\\\?\\C:\\Users\\ALICE\\.aws\\credentials",
        "\\??\\c:\\users\\alice\\.aws\\config",
        "C:\\W\\P\\SECRET.TXT",
    ] {
        assert_eq!(
            decide(&p, &c, "Read", json!({ "file_path": path })),
            Verdict::Deny,
            "{path}"
        );
    }
    // Deny rules fold case on every volume, as Claude Code's path rules do (recorded with
    // explore: `Edit(/sub/**)` refuses `Sub/f0.rs` on Linux).
    let posix = ToolContext::new("/work/proj", "/home/u", "/tmp/r");
    let p2 = policy(&["Read(./secret.txt)"], &[], &[]);
    assert!(p2.read_denied(&posix.cwd.join("secret.txt"), &posix));
    assert!(p2.read_denied(&posix.cwd.join("SECRET.TXT"), &posix));
    // UNC and device paths: never allowed silently, in any mode; deny rules still apply.
    let p = policy(
        &["Read(//fileserver/share/private/**)"],
        &["Read(//fileserver/**)", "Read"],
        &[],
    );
    let mut bypass = c.clone();
    bypass.permission_mode = PermissionMode::BypassPermissions;
    for path in [
        "\\\\fileserver\\share\\pub\\a.txt",
        "\\\\?\\UNC\\fileserver\\share\\pub\\a.txt",
        "\\??\\UNC\\fileserver\\share\\pub\\a.txt",
        "//fileserver/share/pub/a.txt",
        "\\\\.\\pipe\\x",
    ] {
        for ctx in [&c, &bypass] {
            assert_eq!(
                decide(&p, ctx, "Read", json!({ "file_path": path })),
                Verdict::Ask,
                "{path}"
            );
        }
    }
    for path in [
        "\\\\FileServer\\Share\\Private\\k.txt",
        "\\\\?\\UNC\\fileserver\\share\\private\\k.txt",
    ] {
        assert_eq!(
            decide(&p, &c, "Read", json!({ "file_path": path })),
            Verdict::Deny,
            "{path}"
        );
    }
    // On a POSIX session `//host/x` is the local `/host/x`, as the kernel reads it.
    let posix_unc = posix.resolve_path("//fileserver/share/pub/a.txt");
    assert!(!tool_core::is_unc(&posix_unc));
}

#[test]
fn short_names_get_no_allow() {
    let sb = Sandbox::new();
    sb.write("PROGRA~1/app.cfg", "x\n");
    sb.write("SECRET~1.TXT", "x\n");
    sb.write("notes~draft.txt", "x\n");
    let mut c = sb.ctx();
    c.permission_mode = PermissionMode::AcceptEdits;
    let p = policy(
        &["Read(./secret_stuff.txt)"],
        &["Read(./**)", "Edit(./**)"],
        &[],
    );
    // A short name no allow covers; one that may abbreviate the denied long name
    // (`secret_stuff.txt`) is denied.
    for (rel, want) in [
        ("PROGRA~1/app.cfg", Verdict::Ask),
        ("SECRET~1.TXT", Verdict::Deny),
        ("secre~12.txt", Verdict::Deny),
    ] {
        assert_eq!(decide(&p, &c, "Read", read(&sb.path(rel))), want, "{rel}");
        assert_eq!(decide(&p, &c, "Write", write(&sb.path(rel))), want, "{rel}");
    }
    // `~` without the short-name shape is an ordinary name.
    assert_eq!(
        decide(&p, &c, "Read", read(&sb.path("notes~draft.txt"))),
        Verdict::Allow
    );
}

#[tokio::test]
async fn grep_and_glob_above_a_denied_tree_leave_it_out() {
    let sb = Sandbox::new();
    sb.write("secrets/key.pem", "needle secret\n");
    sb.write("secrets/sub/deep.txt", "needle deep\n");
    sb.write("src/a.txt", "needle open\n");
    sb.write("data/far.txt", "needle far\n");
    std::fs::hard_link(sb.path("secrets/key.pem"), sb.path("src/copy.txt")).unwrap();
    std::os::unix::fs::symlink(sb.path("data/far.txt"), sb.path("secrets/far")).unwrap();
    let policy = Arc::new(policy(&["Read(./secrets/**)"], &[], &[]));
    let mut s = sb.builder(&[]).policy(policy.clone()).build();
    for (mode, text) in grep_every_mode(&mut s, "needle").await {
        assert!(text.contains("a.txt"), "{mode}: {text}");
        for hidden in ["secret", "deep", "copy", "far"] {
            assert!(!text.contains(hidden), "{mode} shows {hidden}: {text}");
        }
    }
    let text = call(&mut s, "Glob", json!({"pattern": "**/*"}))
        .await
        .content
        .to_text();
    assert_eq!(text, "src/a.txt", "{text}");

    // A pattern naming the denied tree is a denied read, whatever the files.
    let c = sb.ctx();
    for pattern in ["secrets/**", "secrets/*.pem", "./secrets/sub/*.txt"] {
        assert_eq!(
            decide(&policy, &c, "Glob", json!({ "pattern": pattern })),
            Verdict::Deny,
            "{pattern}"
        );
    }
    let abs = format!("{}/*.pem", sb.p("secrets"));
    assert_eq!(
        decide(&policy, &c, "Glob", json!({ "pattern": abs })),
        Verdict::Deny
    );
    assert_eq!(
        decide(
            &policy,
            &c,
            "Glob",
            json!({"pattern": "*.pem", "path": sb.p("secrets")})
        ),
        Verdict::Deny
    );
    // Patterns elsewhere are reads inside the workspace, or outside it.
    assert_eq!(
        decide(&policy, &c, "Glob", json!({"pattern": "src/*.txt"})),
        Verdict::Allow
    );
    assert_eq!(
        decide(&policy, &c, "Glob", json!({"pattern": "**/*.rs"})),
        Verdict::Allow
    );
    assert_eq!(
        decide(&policy, &c, "Glob", json!({"pattern": "/etc/*.conf"})),
        Verdict::Ask
    );
    // A relative pattern matches only below the directory searched: one that climbs out of it
    // lists nothing, and Claude Code asks nothing for it.
    assert_eq!(
        decide(&policy, &c, "Glob", json!({"pattern": "../**"})),
        Verdict::Allow
    );
}

#[test]
fn denied_below_finds_rules_a_recursive_reader_would_pass() {
    let sb = Sandbox::new();
    sb.write("secrets/key.pem", "k\n");
    sb.write("src/a.txt", "a\n");
    sb.write("data/far.txt", "f\n");
    std::os::unix::fs::symlink(sb.path("data"), sb.path("secrets/data")).unwrap();
    let c = sb.ctx();
    let p = policy(&["Read(/secrets/**)", "Read(~/.ssh/**)"], &[], &[]);
    let rule = |root: &Path| p.denied_below(root, &c, true).map(|e| e.text.clone());
    let secrets = Some("Read(/secrets/**)".to_owned());
    assert_eq!(rule(&sb.ws()), secrets, "the workspace holds the tree");
    assert_eq!(rule(Path::new("/")), secrets);
    assert_eq!(rule(&sb.path("secrets/x")), secrets, "inside the tree");
    assert_eq!(rule(&sb.path("data")), secrets, "a denied symlink's target");
    assert_eq!(rule(&sb.path("src")), None);
    assert_eq!(
        rule(&c.home.join(".ssh/keys")),
        Some("Read(~/.ssh/**)".to_owned())
    );
    // A bare name matches at any depth under its anchor, so every directory there may hold
    // it: without looking, that counts; looking, only what is there does.
    let p = policy(&["Read(.env)"], &[], &[]);
    assert!(p.denied_below(&sb.path("src"), &c, false).is_some());
    assert!(p.denied_below(&sb.path("src"), &c, true).is_none());
    assert!(p.denied_below(&sb.ws(), &c, true).is_none());
    sb.write("src/deep/.env", "K=1\n");
    assert!(p.denied_below(&sb.path("src"), &c, true).is_some());
    assert!(p.denied_below(&sb.ws(), &c, true).is_some());
    // A hard link elsewhere to a denied file is that file.
    let p = policy(&["Read(./secrets/**)"], &[], &[]);
    sb.write("lib/a.txt", "a\n");
    assert!(p.denied_below(&sb.path("lib"), &c, true).is_none());
    std::fs::hard_link(sb.path("secrets/key.pem"), sb.path("lib/copy.pem")).unwrap();
    assert!(p.denied_below(&sb.path("lib"), &c, true).is_some());
    // A relative deny covers its tree at any depth: `src/x/secrets` is covered too.
    assert!(p.denied_below(&sb.path("src"), &c, true).is_none());
    sb.write("src/x/secrets/k", "k\n");
    assert!(p.denied_below(&sb.path("src"), &c, true).is_some());
    // The tree a rule names inside the root stands, whatever is there.
    let named = policy(&["Read(./vault/**)"], &[], &[]);
    assert!(named.denied_below(&sb.ws(), &c, true).is_some());
    let p = policy(&["Read(.env)"], &[], &[]);
    assert!(p.denied_below(Path::new("/usr/share"), &c, true).is_none());
    assert!(
        policy(&[], &[], &[])
            .denied_below(&sb.ws(), &c, true)
            .is_none()
    );
}
