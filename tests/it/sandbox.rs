//! Bash through the whole pipeline with the sandbox the policy plans: what an analysis cannot
//! see (a script's contents) still meets the rules while it runs, benign work runs the same
//! inside as outside, and what was stopped is reported to the model and the audit log.
//!
//! These need `bwrap`; without it they say so and pass, unless `TOOLGATE_REQUIRE_SANDBOX` is
//! set (`cargo xtask ci` installs bubblewrap and sets it).

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::{Approval, ApprovalRequest, ToolOutcome, ToolUse};
use tool_orchestrator::Session;
use tool_permissions::{Layer, PolicyBuilder};
use toolgate_tests::{Sandbox, add_env};

fn sandbox_here() -> bool {
    match tool_sandbox::Sandbox::detect() {
        Ok(_) => true,
        Err(e) if std::env::var_os("TOOLGATE_REQUIRE_SANDBOX").is_some() => {
            panic!("TOOLGATE_REQUIRE_SANDBOX is set but {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// A session over `sb` with Claude Code settings `settings` (project layer, trusted) and the
/// process's environment.
fn session(sb: &Sandbox, settings: serde_json::Value) -> Session {
    let mut b = PolicyBuilder::new();
    b.trust_project(true);
    b.claude_settings_str(
        &settings.to_string(),
        Layer::Project,
        &sb.path(".claude/settings.json"),
        &sb.ws(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let registry = builtin_tools::registry().unwrap_or_else(|e| panic!("{e}"));
    let mut s = Session::builder(registry, sb.ctx())
        .policy(Arc::new(b.build()))
        .build();
    add_env(&mut s, std::env::vars());
    s
}

async fn bash(s: &mut Session, command: &str) -> ToolOutcome {
    bash_input(s, json!({ "command": command })).await
}

async fn bash_input(s: &mut Session, input: serde_json::Value) -> ToolOutcome {
    let mut turn = s.run_turn(&[ToolUse::new("toolu_sb", "Bash", input)]).await;
    turn.outcomes.remove(0)
}

fn script(sb: &Sandbox, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    sb.write(name, format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(sb.path(name), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_denied_program_started_by_a_script_the_rules_allow_is_stopped_and_reported() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write("victim.txt", "v");
    script(&sb, "clean.sh", "echo cleaning\nrm victim.txt\necho after");
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}),
    );
    let o = bash(&mut s, "./clean.sh").await;
    let text = o.content.to_text();
    assert!(o.is_error, "{text}");
    assert!(sb.path("victim.txt").exists(), "rm ran: {text}");
    assert!(text.starts_with("Exit code 137\ncleaning\n"), "{text}");
    assert!(!text.contains("after"), "the script went on: {text}");
    assert!(
        text.contains("<sandbox_violations>\ndeny exec rm victim.txt (started by another program of the line; denied: deny rule `Bash(rm:*)`"),
        "{text}"
    );
    // The same line, decided statically, is refused before it runs.
    let o = bash(&mut s, "rm victim.txt").await;
    assert_eq!(
        o.content.to_text(),
        "Permission to use Bash with command rm victim.txt has been denied."
    );
}

#[tokio::test]
async fn an_ask_rule_stops_a_program_nobody_can_approve_and_an_approver_can_let_it_run() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    script(&sb, "ship.sh", "echo shipping\ntouch shipped\necho done");
    let settings = json!({"permissions": {"allow": ["Bash"], "ask": ["Bash(touch:*)"]}});
    let mut s = session(&sb, settings.clone());
    let o = bash(&mut s, "./ship.sh").await;
    let text = o.content.to_text();
    assert!(o.is_error && !sb.path("shipped").exists(), "{text}");
    assert!(
        text.contains("deny exec touch shipped (started by another program of the line; it needs approval, and there was no one to ask: ask rule `Bash(touch:*)`"),
        "{text}"
    );

    // With an approver, the program waits for the answer; a yes lets it and the rest run.
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = asked.clone();
    let approver = move |r: ApprovalRequest| {
        let seen = seen.clone();
        async move {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(r.input["command"].as_str().unwrap_or("").to_owned());
            Approval::Approve {
                updated_input: None,
            }
        }
    };
    let mut b = PolicyBuilder::new();
    b.trust_project(true);
    b.claude_settings_str(
        &settings.to_string(),
        Layer::Project,
        &sb.path(".claude/settings.json"),
        &sb.ws(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut s = Session::builder(
        builtin_tools::registry().unwrap_or_else(|e| panic!("{e}")),
        sb.ctx(),
    )
    .policy(Arc::new(b.build()))
    .approver(Arc::new(approver))
    .build();
    add_env(&mut s, std::env::vars());
    let o = bash(&mut s, "./ship.sh").await;
    assert_eq!(o.content.to_text(), "shipping\ndone");
    assert!(sb.path("shipped").exists());
    assert_eq!(
        asked.lock().unwrap_or_else(|e| e.into_inner()).as_slice(),
        ["touch shipped"]
    );
}

#[tokio::test]
async fn denied_files_are_out_of_reach_of_what_the_analysis_cannot_read() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write(".env", "API_KEY=hunter2\n");
    sb.write("keys/id_rsa", "PRIVATE KEY\n");
    sb.write("src/.env", "NESTED=swordfish\n");
    script(
        &sb,
        "leak.sh",
        "cat .env src/.env keys/id_rsa 2>&1\nls keys | wc -l\ncp .env copy 2>&1\nln .env hard 2>&1\ncat copy hard 2>/dev/null\necho end",
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Read(**/.env)", "Read(./keys/**)"]}}),
    );
    let o = bash(&mut s, "./leak.sh").await;
    let text = o.content.to_text();
    for secret in ["hunter2", "swordfish", "PRIVATE KEY"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(text.contains(".env: Permission denied"), "{text}");
    assert!(text.contains("end"), "the script ran to its end: {text}");
    assert!(!sb.path("hard").exists(), "a hard link to a hidden file");
}

#[tokio::test]
async fn a_hard_link_made_before_to_a_denied_file_is_hidden_too() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write("secrets/key.pem", "PRIVATE KEY\n");
    sb.write("plain.txt", "plain\n");
    sb.write("notes/new.txt", "new\n");
    std::fs::hard_link(sb.path("secrets/key.pem"), sb.path("notes/old.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    script(&sb, "show.sh", "cat notes/old.txt plain.txt; echo end");
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Read(./secrets/**)"]}}),
    );
    let o = bash(&mut s, "./show.sh").await;
    let text = o.content.to_text();
    assert!(
        !text.contains("PRIVATE KEY"),
        "read through a hard link: {text}"
    );
    assert!(text.contains("plain") && text.contains("end"), "{text}");
    // The file itself is untouched.
    assert_eq!(
        std::fs::read_to_string(sb.path("notes/old.txt")).unwrap_or_default(),
        "PRIVATE KEY\n"
    );
}

#[tokio::test]
async fn a_changed_copy_of_a_denied_program_is_still_that_program() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write("victim.txt", "v");
    // A byte added at the end: another size and digest, the same code and build id.
    script(
        &sb,
        "copy.sh",
        "cp \"$(command -v rm)\" ./eraser\nprintf z >> ./eraser\n./eraser victim.txt\necho after",
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}),
    );
    let o = bash(&mut s, "./copy.sh").await;
    let text = o.content.to_text();
    assert!(sb.path("victim.txt").exists(), "{text}");
    assert!(text.contains("deny exec"), "{text}");
}

/// The system's dynamic loader, if it is where it usually is.
fn loader() -> Option<&'static str> {
    ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

#[tokio::test]
async fn a_renamed_copy_of_the_dynamic_loader_still_runs_the_program_it_is_given() {
    let Some(ld) = loader() else {
        return;
    };
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write("victim.txt", "v");
    // Directly, and as the interpreter of a script (`#!./l /usr/bin/rm` runs rm on the
    // script's arguments).
    script(
        &sb,
        "copy.sh",
        &format!(
            "cp {ld} ./l\n./l \"$(command -v rm)\" victim.txt\nprintf '#!%s/l %s\\n' \"$PWD\" \"$(command -v rm)\" > s && chmod +x s && ./s victim.txt\necho after"
        ),
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}),
    );
    let o = bash(&mut s, "./copy.sh").await;
    let text = o.content.to_text();
    assert!(sb.path("victim.txt").exists(), "{text}");
    assert!(text.contains("deny exec"), "{text}");
}

#[tokio::test]
async fn a_script_the_rules_allow_by_name_runs_through_its_env_interpreter() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    // On PATH, outside the directories the command can write: the program the rule means.
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let greet = bin.path().join("greet");
    std::fs::write(&greet, "#!/usr/bin/env sh\necho \"hello $1\"\n")
        .unwrap_or_else(|e| panic!("{e}"));
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&greet, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash(greet:*)"]}}));
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    add_env(&mut s, [("PATH", path)]);
    let o = bash(&mut s, "greet world").await;
    let text = o.content.to_text();
    assert!(!o.is_error && text.trim() == "hello world", "{text}");
}

#[tokio::test]
async fn a_protected_link_the_command_replaces_is_put_back() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write("shared/mcp.json", "{}\n");
    std::os::unix::fs::symlink("shared/mcp.json", sb.path(".mcp.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    script(
        &sb,
        "swap.sh",
        "rm -f .mcp.json && echo '{\"mcpServers\":{}}' > .mcp.json\necho swapped",
    );
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash"]}}));
    let o = bash(&mut s, "./swap.sh").await;
    let text = o.content.to_text();
    assert_eq!(
        std::fs::read_link(sb.path(".mcp.json")).ok(),
        Some(std::path::PathBuf::from("shared/mcp.json")),
        "{text}"
    );
    assert_eq!(sb.read("shared/mcp.json"), b"{}\n");
    assert!(
        text.contains("put back as a link to shared/mcp.json"),
        "{text}"
    );
}

#[tokio::test]
async fn what_is_moved_or_made_around_protected_paths_is_put_right() {
    if !sandbox_here() || !have("git", "--version") {
        return;
    }
    let sb = Sandbox::new();
    sb.write(".git/HEAD", "ref: refs/heads/main\n");
    sb.write(".git/config", "[core]\n\trepositoryformatversion = 0\n");
    sb.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    sb.write(".git/objects/.keep", "");
    sb.write(".git/refs/heads/.keep", "");
    sb.write(".vscode/.env", "VSCODE_SECRET=1\n");
    sb.write("config/prod.yml", "prod: true\n");
    sb.write("sub/x.txt", "x\n");
    script(
        &sb,
        "plant.sh",
        r#"cat .vscode/.env 2>&1
mv .git gitold 2>&1 || echo pinned-git
mv config c 2>&1 || echo pinned-config
mkdir -p sub/.claude && echo '{}' > sub/.claude/settings.json
echo '{}' > src.mcp.json && mkdir -p lib && echo '{}' > lib/.mcp.json
echo 'export X=1' > .envrc
echo x > new.lock
mkdir -p evil/objects evil/refs && printf '[core]
	fsmonitor = touch pwned
' > evil/config
echo "$PWD/evil" > .git/commondir
echo done"#,
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Read(**/.env)", "Edit(./config/prod.yml)", "Edit(**/*.lock)"]}}),
    );
    let o = bash(&mut s, "./plant.sh").await;
    let text = o.content.to_text();
    assert!(!text.contains("VSCODE_SECRET"), "{text}");
    assert!(
        text.contains("pinned-git") && text.contains("pinned-config"),
        "{text}"
    );
    assert!(sb.path(".git/hooks/pre-commit.sample").exists() && !sb.path("gitold").exists());
    assert!(sb.path("config/prod.yml").exists() && !sb.path("c").exists());
    for gone in [
        "sub/.claude/settings.json",
        "lib/.mcp.json",
        ".envrc",
        "new.lock",
        ".git/commondir",
    ] {
        assert!(!sb.path(gone).exists(), "{gone} left: {text}");
        assert!(text.contains(gone), "{gone} not reported: {text}");
    }
    // What is not protected stays.
    assert!(sb.path("src.mcp.json").exists() && sb.path("evil/config").exists());
    assert!(text.contains("done"), "{text}");
}

#[tokio::test]
async fn protected_paths_stay_as_they_are_and_new_ones_are_taken_back() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    sb.write(".git/config", "[core]\n");
    sb.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    script(
        &sb,
        "plant.sh",
        "echo evil > .git/hooks/pre-commit 2>&1\necho '[core] fsmonitor = evil' >> .git/config 2>&1\nln .git/config cfglink 2>&1 || echo no-link\nmkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json\necho '{}' > .mcp.json\necho planted",
    );
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash"]}}));
    let o = bash(&mut s, "./plant.sh").await;
    let text = o.content.to_text();
    assert!(text.contains("planted"), "{text}");
    assert!(!sb.path(".git/hooks/pre-commit").exists(), "{text}");
    assert_eq!(sb.read(".git/config"), b"[core]\n");
    // A hard link cannot be made across the read-only bind.
    assert!(
        text.contains("no-link") && !sb.path("cfglink").exists(),
        "{text}"
    );
    // Made during the command, gone after it, and the model is told.
    assert!(!sb.path(".claude").exists(), "{text}");
    assert!(!sb.path(".mcp.json").exists(), "{text}");
    assert!(
        text.contains(
            ".claude (the agent's configuration: the command created it, and it was removed)"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_hook_planted_in_a_repository_the_command_creates_is_taken_back() {
    if !sandbox_here() || !have("git", "--version") {
        return;
    }
    let sb = Sandbox::new();
    script(
        &sb,
        "init.sh",
        "git init -q\nprintf '#!/bin/sh\\necho hooked\\n' > .git/hooks/pre-commit\nchmod +x .git/hooks/pre-commit\necho made",
    );
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash"]}}));
    let o = bash(&mut s, "./init.sh").await;
    let text = o.content.to_text();
    assert!(text.starts_with("made\n<sandbox_violations>"), "{text}");
    assert!(
        text.contains("pre-commit (a hook of a repository the command created"),
        "{text}"
    );
    assert!(!sb.path(".git/hooks/pre-commit").exists(), "{text}");
    assert!(
        sb.path(".git/config").exists(),
        "the repository itself stays"
    );
    let samples = std::fs::read_dir(sb.path(".git/hooks"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(samples > 0, "git's samples stay");
}

#[tokio::test]
async fn repositories_made_anywhere_in_the_project_keep_only_settings_that_run_nothing() {
    if !sandbox_here() || !have("git", "--version") {
        return;
    }
    let sb = Sandbox::new();
    sb.write("src/lib.rs", "\n");
    // A repository in a sub-directory with a monitor hook in its config and a hook; a bare
    // repository's shape with a config of its own; a `.git` file pointing to a repository in
    // the temporary directory; a repository with only git's own settings and a remote.
    script(
        &sb,
        "plant.sh",
        r#"set -e
mkdir -p sub && cd sub && git init -q && git config core.fsmonitor 'touch pwned' && git config user.name me
printf '#!/bin/sh\necho hooked\n' > .git/hooks/post-checkout && cd ..
mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD
printf '[core]\n\tbare = true\n\tpager = sh -c id\n' > bare/config
git init -q --bare "$TMPDIR/evil" && git -C "$TMPDIR/evil" config core.fsmonitor 'touch pwned'
mkdir -p ptr && echo "gitdir: $TMPDIR/evil" > ptr/.git
git init -q plain && git -C plain remote add origin https://example.com/r.git
echo made"#,
    );
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash"]}}));
    let o = bash(&mut s, "./plant.sh").await;
    let text = o.content.to_text();
    assert!(text.starts_with("made\n<sandbox_violations>"), "{text}");
    let sub = std::fs::read_to_string(sb.path("sub/.git/config")).unwrap_or_default();
    assert!(
        !sub.contains("fsmonitor") && sub.contains("name = me"),
        "{sub}"
    );
    assert!(
        text.contains("sub/.git/config (settings of a repository the command created that may run programs: settings taken out: core.fsmonitor when the command ended)"),
        "{text}"
    );
    assert!(!sb.path("sub/.git/hooks/post-checkout").exists(), "{text}");
    let bare = std::fs::read_to_string(sb.path("bare/config")).unwrap_or_default();
    assert!(
        !bare.contains("pager") && bare.contains("bare = true"),
        "{bare}"
    );
    assert!(!sb.path("ptr/.git").exists(), "{text}");
    assert!(text.contains("ptr/.git (a new .git file"), "{text}");
    let plain = std::fs::read_to_string(sb.path("plain/.git/config")).unwrap_or_default();
    assert!(plain.contains("url = https://example.com/r.git"), "{plain}");
    assert!(!text.contains("plain/.git"), "{text}");
    // Git still works in what was kept.
    let out = std::process::Command::new("git")
        .args([
            "-C",
            &sb.path("sub").display().to_string(),
            "status",
            "--short",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{out:?}");
    assert!(!sb.path("sub/pwned").exists());
}

#[tokio::test]
async fn the_network_is_closed_unless_a_domain_is_allowed_and_then_only_that_domain() {
    if !sandbox_here() {
        return;
    }
    // An origin on the host's loopback, reached as `localhost` through the filter.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .port();
    std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 2048];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\norigin",
            );
        }
    });
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no curl");
        return;
    }
    let sb = Sandbox::new();
    script(
        &sb,
        "fetch.sh",
        &format!(
            "curl -sS --noproxy '' --max-time 5 http://localhost:{port}/ 2>&1; echo; curl -sS --noproxy '' --max-time 5 http://127.0.0.1:{port}/ 2>&1; echo"
        ),
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash", "WebFetch(domain:localhost)"]}}),
    );
    let o = bash(&mut s, "./fetch.sh").await;
    let text = o.content.to_text();
    assert!(text.starts_with("origin\n"), "{text}");
    assert!(
        text.contains("Connection blocked by network allowlist"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "<sandbox_violations>\ndeny network-outbound 127.0.0.1:{port} (user denied)\n</sandbox_violations>"
        )),
        "{text}"
    );

    // No domain allowed: not even the host's loopback is there.
    let mut s = session(&sb, json!({"permissions": {"allow": ["Bash"]}}));
    let o = bash(
        &mut s,
        &format!("curl -sS --max-time 5 http://127.0.0.1:{port}/ 2>&1; echo rc=$?"),
    )
    .await;
    let text = o.content.to_text();
    assert!(!text.contains("origin") && text.contains("rc=7"), "{text}");
}

#[tokio::test]
async fn a_call_let_out_of_the_sandbox_writes_where_it_was_allowed_and_stays_supervised() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    let outside = sb
        .ws()
        .parent()
        .unwrap_or(Path::new("/"))
        .join("home/out.txt");
    let settings = json!({
        "permissions": {"allow": ["Bash(sh out.sh)"], "deny": ["Bash(rm:*)"]},
        "sandbox": {"enabled": true}
    });
    script(
        &sb,
        "out.sh",
        &format!(
            "echo written > {}\nrm -f out.sh\necho after",
            outside.display()
        ),
    );
    let mut s = session(&sb, settings);
    // In the sandbox the write outside fails; let out, it lands, and rm is still stopped.
    let o = bash(&mut s, "sh out.sh").await;
    let text = o.content.to_text();
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!outside.exists(), "{text}");
    let o = bash_input(
        &mut s,
        json!({"command": "sh out.sh", "dangerouslyDisableSandbox": true}),
    )
    .await;
    let text = o.content.to_text();
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap_or_default(),
        "written\n"
    );
    assert!(sb.path("out.sh").exists(), "{text}");
    assert!(text.contains("deny exec rm -f out.sh"), "{text}");

    // Asking to leave the sandbox needs a rule for the command (or bypass mode).
    let o = bash_input(
        &mut s,
        json!({"command": "echo hi", "dangerouslyDisableSandbox": true}),
    )
    .await;
    assert_eq!(o.content.to_text(), "Run outside of the sandbox");
}

#[tokio::test]
async fn excluded_commands_run_as_they_are() {
    if !sandbox_here() {
        return;
    }
    let sb = Sandbox::new();
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash(sh probe.sh)"]}, "sandbox": {"excludedCommands": ["sh probe.sh"]}}),
    );
    script(&sb, "probe.sh", "echo ${SANDBOX_RUNTIME:-outside}");
    assert_eq!(
        bash(&mut s, "sh probe.sh").await.content.to_text(),
        "outside"
    );
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash(sh probe.sh)"]}}),
    );
    assert_eq!(bash(&mut s, "sh probe.sh").await.content.to_text(), "1");
}

#[tokio::test]
async fn without_bubblewrap_commands_run_supervised_or_are_refused_where_required() {
    // A PATH with no bwrap on it (TOOLGATE_BWRAP, if set, wins; leave it unset here).
    if std::env::var_os("TOOLGATE_BWRAP").is_some() {
        return;
    }
    let sb = Sandbox::new();
    script(&sb, "go.sh", "echo ran\nrm -f go.sh\necho after");
    let empty = sb.path("nobin");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    let path = format!("{}:/nonexistent", empty.display());
    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}),
    );
    add_env(&mut s, [("PATH", path.as_str())]);
    // `rm` is found by its full path here: the PATH has nothing.
    script(&sb, "go.sh", "echo ran\n/bin/rm -f go.sh\necho after");
    let o = bash(&mut s, "./go.sh").await;
    let text = o.content.to_text();
    assert!(text.starts_with("Exit code 137\nran"), "{text}");
    assert!(sb.path("go.sh").exists(), "{text}");

    let mut s = session(
        &sb,
        json!({"permissions": {"allow": ["Bash"]}, "sandbox": {"failIfUnavailable": true}}),
    );
    add_env(&mut s, [("PATH", path.as_str())]);
    let o = bash(&mut s, "echo hi").await;
    let text = o.content.to_text();
    assert!(o.is_error, "{text}");
    assert!(
        text.starts_with(
            "Sandbox is required but failed to initialize: bubblewrap (bwrap) is not installed"
        ),
        "{text}"
    );
}

/// Run `command` in `dir` through a session, in the sandbox toolgate starts by default or with
/// it turned off; its output with timings blanked.
async fn run_in(dir: &Sandbox, command: &str, sandboxed: bool) -> (String, bool) {
    let settings = if sandboxed {
        json!({"permissions": {"allow": ["Bash"]}})
    } else {
        json!({"permissions": {"allow": ["Bash"]}, "sandbox": {"enabled": false}})
    };
    let mut s = session(dir, settings);
    add_env(
        &mut s,
        [
            ("GIT_AUTHOR_NAME", "t"),
            ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
            ("GIT_COMMITTER_NAME", "t"),
            ("GIT_COMMITTER_EMAIL", "t@example.invalid"),
            ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
            ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
            ("CARGO_TERM_COLOR", "never"),
        ],
    );
    let o = bash(&mut s, command).await;
    let text = o.content.to_text();
    let timing = blank_timings(&text);
    (timing, o.is_error)
}

/// Blank what changes from run to run: durations (`in 0.21s`, `0.01s`) and the temporary
/// directory's own name.
fn blank_timings(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut num = String::from(c);
            while let Some(&d) = chars.peek() {
                if d.is_ascii_digit() || d == '.' {
                    num.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            if chars.peek() == Some(&'s') && num.contains('.') {
                out.push('N');
            } else {
                out.push_str(&num);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Lay out the same fixture twice, run `command` in each (in and out of the sandbox), compare.
async fn same_inside_and_outside(fixture: &[(&str, &str)], command: &str) {
    let mut outputs = Vec::new();
    let mut dirs = Vec::new();
    for sandboxed in [false, true] {
        let sb = Sandbox::new();
        for (path, body) in fixture {
            sb.write(path, body);
        }
        let (text, err) = run_in(&sb, command, sandboxed).await;
        let text = text.replace(&sb.ws().display().to_string(), "<ws>");
        outputs.push((text, err));
        dirs.push(sb);
    }
    assert!(
        !outputs[0].1,
        "{command} failed outside the sandbox: {}",
        outputs[0].0
    );
    assert_eq!(outputs[1], outputs[0], "{command}: inside vs outside");
}

fn have(program: &str, arg: &str) -> bool {
    std::process::Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn cargo_build_and_test_run_the_same_in_the_sandbox() {
    if !sandbox_here() || !have("cargo", "--version") {
        return;
    }
    let fixture = [
        (
            "Cargo.toml",
            "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "src/main.rs",
            "fn main() { println!(\"hi\"); }\n#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n",
        ),
    ];
    same_inside_and_outside(
        &fixture,
        "cargo build 2>&1 && cargo test 2>&1 | grep -v Running",
    )
    .await;
}

#[tokio::test]
async fn npm_test_runs_the_same_in_the_sandbox() {
    if !sandbox_here() || !have("npm", "--version") {
        return;
    }
    let fixture = [
        (
            "package.json",
            "{\"name\":\"fixture\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}\n",
        ),
        ("test.js", "console.log('tests passed');\n"),
    ];
    same_inside_and_outside(&fixture, "npm test 2>&1").await;
}

#[tokio::test]
async fn git_and_make_run_the_same_in_the_sandbox() {
    if !sandbox_here() || !have("git", "--version") {
        return;
    }
    let fixture = [
        ("a.txt", "alpha\n"),
        ("Makefile", "all:\n\techo built > out.txt\n\tcat out.txt\n"),
    ];
    same_inside_and_outside(
        &fixture,
        "git init -q -b main && git add a.txt && git commit -q -m first && echo beta >> a.txt && git status --short && git diff && git commit -qam second && git log --format='%h %s'",
    )
    .await;
    if have("make", "--version") {
        same_inside_and_outside(&fixture, "make").await;
    }
}

#[tokio::test]
async fn pytest_runs_the_same_in_the_sandbox() {
    let pytest = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !sandbox_here() || !pytest {
        eprintln!("skipped: no pytest");
        return;
    }
    let fixture = [("test_a.py", "def test_adds():\n    assert 1 + 1 == 2\n")];
    same_inside_and_outside(&fixture, "python3 -m pytest -q -p no:cacheprovider 2>&1").await;
}
