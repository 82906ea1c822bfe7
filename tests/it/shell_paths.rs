//! The paths a Bash line uses: Edit rules on the files it creates, changes or removes;
//! acceptEdits mode's file commands; and the texts for paths outside the working directories
//! and for compound lines, as recorded from Claude Code.

use serde_json::json;
use tool_core::{PermissionMode, ToolContext, Verdict};
use tool_permissions::Policy;
use toolgate_tests::{Sandbox, decide_builtin, policy_of};

/// The decision on a Bash call of `command`, as the pipeline asks it.
fn bash(p: &Policy, c: &ToolContext, command: &str) -> (Verdict, String) {
    let d = decide_builtin(p, c, "Bash", &json!({"command": command}));
    (d.verdict, d.message)
}

#[test]
fn edit_denies_cover_the_files_shell_commands_create_change_or_remove() {
    use tool_core::RuleList::{Allow, Deny};
    let sb = Sandbox::new();
    sb.write("a.txt", "a\n");
    let p = policy_of(&[(Deny, "Edit(./x.txt)"), (Allow, "Bash")]);
    let c = sb.ctx_in(PermissionMode::Default);
    for command in [
        "touch x.txt",
        "rm -f x.txt",
        "cp a.txt x.txt",
        "mv x.txt b.txt",
        "mkdir x.txt",
        "sed -i s/a/b/ x.txt",
        "dd if=a.txt of=x.txt",
        "echo hi >> x.txt",
        "cd sub && touch ../x.txt",
    ] {
        assert_eq!(bash(&p, &c, command).0, Verdict::Deny, "{command}");
    }
    // Reading it is not editing it; copying from it neither.
    for command in ["cat x.txt", "cp x.txt b.txt", "sed -n 1p x.txt"] {
        assert_eq!(bash(&p, &c, command).0, Verdict::Allow, "{command}");
    }
}

#[test]
fn accept_edits_allows_file_commands_inside_the_working_directories_only() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let p = policy_of(&[]);
    let c = sb.ctx_in(PermissionMode::AcceptEdits);
    for command in [
        "mkdir d",
        "touch d/t.txt",
        "cp a.txt b.txt",
        "mv b.txt c.txt",
        "rm -r d && echo gone",
        "rmdir d",
        "sed -i s/alpha/beta/ a.txt",
        "echo x > new.txt",
    ] {
        assert_eq!(
            bash(&p, &c, command),
            (Verdict::Allow, String::new()),
            "{command}"
        );
    }
    let home = c.home.display().to_string();
    for command in [
        format!("touch {home}/x.txt"),
        "cp -r a.txt b".to_owned(),
        "mv -f a.txt b.txt".to_owned(),
        "touch .git/config".to_owned(),
        "rm .bashrc".to_owned(),
        "touch $X".to_owned(),
        "python3 -c 'open(\"a\",\"w\")'".to_owned(),
    ] {
        assert_eq!(bash(&p, &c, &command).0, Verdict::Ask, "{command}");
    }
    // Bypass mode runs a write outside; a protected path still asks.
    let b = sb.ctx_in(PermissionMode::BypassPermissions);
    assert_eq!(
        bash(&p, &b, &format!("touch {home}/x.txt")).0,
        Verdict::Allow
    );
    assert_eq!(
        bash(&p, &b, &format!("echo x > {home}/.bashrc")).0,
        Verdict::Ask
    );
    // Default mode asks, with the recorded text for a write inside.
    let d = sb.ctx_in(PermissionMode::Default);
    let (v, m) = bash(&p, &d, "touch n.txt");
    assert_eq!(v, Verdict::Ask);
    assert_eq!(
        m,
        format!(
            "touch in '{}' needs approval. The path is inside the working directories for this session ('{}'), and Claude Code asks before a shell command creates, changes or removes files there.",
            sb.p("n.txt"),
            sb.ws().display()
        )
    );
}

#[test]
fn paths_outside_the_working_directories_get_claude_codes_texts() {
    let sb = Sandbox::new();
    let p = policy_of(&[(tool_core::RuleList::Allow, "Bash(echo:*)")]);
    let c = sb.ctx_in(PermissionMode::Default);
    let home = c.home.display().to_string();
    let ws = sb.ws().display().to_string();
    let blocked = |cmd: &str, path: &str, verb: &str| {
        format!(
            "{cmd} in '{path}' was blocked. For security, Claude Code may only {verb} the allowed working directories for this session: '{ws}'."
        )
    };
    let approval = |what: &str, path: &str| {
        format!(
            "{what} '{path}' needs approval. The path is outside the working directories for this session ('{ws}'). Allowing runs the command as written."
        )
    };
    let h = format!("{home}/h.txt");
    let cases = [
        (format!("cat {h}"), blocked("cat", &h, "concatenate files from")),
        (format!("ls {home}"), blocked("ls", &home, "list files in")),
        (format!("tail -n 2 {h}"), blocked("tail", &h, "read the end of files from")),
        (format!("grep -r needle {home}"), blocked("grep", &home, "search for patterns in files from")),
        (format!("cd {home}"), blocked("cd", &home, "change directories to")),
        (format!("touch {h}"), approval("touch in", &h)),
        (format!("cp a.txt {h}"), approval("cp in", &h)),
        (format!("echo x > {h}"), approval("Output redirection to", &h)),
        // One part of a compound line outside: that part's text.
        (format!("echo a && head -1 {h}"), blocked("head", &h, "read the beginning of files from")),
        (
            "echo a && python3 -c 'print(2)'".to_owned(),
            "This Bash command contains multiple operations. The following part requires approval: python3 -c 'print(2)'".to_owned(),
        ),
        (
            format!("cat {h} && python3 x.py; echo ok"),
            format!("This Bash command contains multiple operations. The following parts require approval: cat {h}, python3 x.py"),
        ),
        ("python3 x.py".to_owned(), "This command requires approval".to_owned()),
    ];
    for (command, want) in cases {
        assert_eq!(bash(&p, &c, &command), (Verdict::Ask, want), "{command}");
    }
    // A Read allow rule covering the path lifts the block for a read-only command.
    let p = policy_of(&[(tool_core::RuleList::Allow, &format!("Read(/{h})"))]);
    assert_eq!(bash(&p, &c, &format!("cat {h}")).0, Verdict::Allow);
}

#[test]
fn a_redirection_an_edit_allow_rule_covers_runs() {
    let sb = Sandbox::new();
    let p = policy_of(&[(tool_core::RuleList::Allow, "Edit(src/**)")]);
    let c = sb.ctx_in(PermissionMode::Default);
    assert_eq!(bash(&p, &c, "echo y > src/by-shell.txt").0, Verdict::Allow);
    assert_eq!(bash(&p, &c, "echo y > other.txt").0, Verdict::Ask);
    assert_eq!(bash(&p, &c, "echo y > src/$NAME").0, Verdict::Ask);
    assert_eq!(bash(&p, &c, "python3 gen.py > src/out.txt").0, Verdict::Ask);
}

/// A repository's own config can make any git command run a program (`core.fsmonitor` on
/// `git status`, `core.pager` on `git log`, `diff.external` on `git diff`): git there asks,
/// whatever rule allows the command; an ordinary config changes nothing.
#[test]
fn git_asks_in_a_repository_whose_config_runs_programs() {
    use tool_core::RuleList::Allow;
    let sb = Sandbox::new();
    sb.write("sub/a.txt", "a\n");
    let config = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote \"origin\"]\n\turl = https://x.example/r.git\n";
    sb.write(".git/config", config);
    let p = policy_of(&[(Allow, "Bash(git:*)")]);
    let c = sb.ctx_in(PermissionMode::Default);
    let none = policy_of(&[]);
    for command in ["git status", "git -C sub log", "git diff"] {
        assert_eq!(bash(&p, &c, command).0, Verdict::Allow, "{command}");
        assert_eq!(
            bash(&none, &c, command).0,
            Verdict::Allow,
            "{command}: read-only"
        );
    }
    for (setting, command) in [
        ("[core]\n\tfsmonitor = touch pwned; false\n", "git status"),
        ("[Core]\n\tPAGER = sh -c id\n", "git -C sub log"),
        ("[diff]\n\texternal = ./d.sh\n", "git -C sub diff"),
        ("[include]\n\tpath = ../evil.gitconfig\n", "git status"),
    ] {
        sb.write(".git/config", format!("{config}{setting}"));
        for policy in [&p, &none] {
            let d = decide_builtin(policy, &c, "Bash", &json!({"command": command}));
            assert_eq!(d.verdict, Verdict::Ask, "{setting:?} {command}");
            assert!(
                d.reason
                    .to_string()
                    .contains("git in a repository whose own config runs programs"),
                "{}",
                d.reason
            );
        }
    }
    // A --git-dir elsewhere is read too.
    sb.write(".git/config", config);
    sb.write("other.git/config", "[core]\n\tfsmonitor = ./x\n");
    assert_eq!(
        bash(&p, &c, "git --git-dir=other.git status").0,
        Verdict::Ask
    );
}
