//! TOML policy files in their layers: merging, trust bound to content, the managed layer's
//! settings, errors that point at a line and column, lint, `[[tests]]`, and domain rules.

use std::path::{Path, PathBuf};

use serde_json::json;
use tool_core::{PermissionMode, PermissionPolicy, PermissionSubject, ToolContext, Verdict};
use tool_permissions::{
    Error, Layer, Policy, PolicyBuilder, PolicySources, Trust, TrustStore, project_hash,
};
use toolgate_tests::Sandbox;

/// Sources rooted in the sandbox: managed policy in `<base>/etc`, user layer in
/// `<base>/config/toolgate`, no Claude Code files unless the test writes them.
fn sources(sb: &Sandbox) -> PolicySources {
    let base = sb.ws().parent().map(Path::to_path_buf).unwrap_or_default();
    let mut s = PolicySources::standard(
        &sb.ws(),
        &base.join("home"),
        Some(&base.join("config")),
        Trust::Store,
    );
    s.managed = vec![base.join("etc/policy.toml")];
    s
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn managed(s: &PolicySources) -> PathBuf {
    s.managed[0].clone()
}

fn user(s: &PolicySources) -> PathBuf {
    s.user_dir.join("policy.toml")
}

fn decide(p: &Policy, ctx: &ToolContext, tool: &str, subject: PermissionSubject) -> Verdict {
    toolgate_tests::decide(p, ctx, tool, &subject, false).verdict
}

fn bash(cmd: &str) -> PermissionSubject {
    PermissionSubject::ShellCommand(cmd.to_owned())
}

#[test]
fn a_deny_in_any_layer_beats_an_allow_in_any_other() {
    let sb = Sandbox::new();
    let s = sources(&sb);
    write(&managed(&s), "[permissions]\ndeny = [\"Bash(curl:*)\"]\n");
    write(
        &user(&s),
        "[permissions]\nallow = [\"Bash(curl:*)\", \"Bash(make:*)\"]\n",
    );
    write(
        &sb.path(".toolgate/policy.toml"),
        "[permissions]\ndeny = [\"Bash(make deploy:*)\"]\n",
    );
    let p = s.load().unwrap();
    let c = sb.ctx();
    assert_eq!(
        decide(&p, &c, "Bash", bash("curl https://x")),
        Verdict::Deny
    );
    assert_eq!(decide(&p, &c, "Bash", bash("make test")), Verdict::Allow);
    // The project's deny applies without trust.
    assert_eq!(decide(&p, &c, "Bash", bash("make deploy")), Verdict::Deny);
    // Where each came from.
    let files: Vec<Layer> = p.files().iter().map(|(l, _)| *l).collect();
    assert_eq!(files, [Layer::Managed, Layer::Project, Layer::User]);
}

#[test]
fn project_allows_apply_only_while_the_trusted_content_is_unchanged() {
    let sb = Sandbox::new();
    let mut s = sources(&sb);
    let project = sb.path(".toolgate/policy.toml");
    write(&project, "[permissions]\nallow = [\"Bash(make:*)\"]\n");
    let c = sb.ctx();
    assert_eq!(
        decide(&s.load().unwrap(), &c, "Bash", bash("make")),
        Verdict::Ask
    );
    let mut store = TrustStore::load(&s.trust_store_path()).unwrap();
    store
        .record(&sb.ws(), &project_hash(&sb.ws()).unwrap())
        .unwrap();
    assert_eq!(
        decide(&s.load().unwrap(), &c, "Bash", bash("make")),
        Verdict::Allow
    );
    // The local layer is covered by the same hash: a new local file withdraws trust.
    write(
        &sb.path(".toolgate/policy.local.toml"),
        "[permissions]\nallow = [\"Bash\"]\n",
    );
    let p = s.load().unwrap();
    assert_eq!(decide(&p, &c, "Bash", bash("make")), Verdict::Ask);
    assert_eq!(p.ignored_rules().len(), 2);
    assert!(p.ignored_rules()[0].why.contains("not trusted"));
    // A host that asked the user itself can say so.
    s.trust = Trust::Trusted;
    assert_eq!(
        decide(&s.load().unwrap(), &c, "Bash", bash("rm -rf x")),
        Verdict::Allow
    );
    s.trust = Trust::Untrusted;
    std::fs::remove_file(sb.path(".toolgate/policy.local.toml")).unwrap();
    assert_eq!(
        decide(&s.load().unwrap(), &c, "Bash", bash("make")),
        Verdict::Ask
    );
}

#[test]
fn managed_rules_only_drops_other_allows_but_keeps_their_denies() {
    let sb = Sandbox::new();
    let mut s = sources(&sb);
    s.trust = Trust::Trusted;
    write(
        &managed(&s),
        "[permissions]\nallow_managed_rules_only = true\nallow = [\"Bash(git status)\"]\n",
    );
    write(
        &user(&s),
        "[permissions]\nallow = [\"Bash(make:*)\"]\ndeny = [\"Bash(git status)\"]\n",
    );
    write(
        &sb.path(".toolgate/policy.toml"),
        "[permissions]\nallow = [\"Bash(cargo:*)\"]\n",
    );
    let p = s.load().unwrap();
    let c = sb.ctx();
    assert_eq!(decide(&p, &c, "Bash", bash("make")), Verdict::Ask);
    assert_eq!(decide(&p, &c, "Bash", bash("cargo build")), Verdict::Ask);
    assert_eq!(decide(&p, &c, "Bash", bash("git status")), Verdict::Deny);
    assert!(
        p.ignored_rules()
            .iter()
            .all(|i| i.why.contains("allow_managed_rules_only"))
    );
    assert_eq!(p.ignored_rules().len(), 2);
}

#[test]
fn a_managed_policy_can_disable_bypass_mode() {
    let sb = Sandbox::new();
    let s = sources(&sb);
    write(&managed(&s), "[permissions]\ndisable_bypass_mode = true\n");
    write(
        &user(&s),
        "[permissions]\ndefault_mode = \"bypassPermissions\"\n",
    );
    let p = s.load().unwrap();
    // Asked for on the command line: refused, saying where it was disabled.
    let err = p
        .effective_mode(Some(PermissionMode::BypassPermissions))
        .unwrap_err();
    assert!(matches!(err, Error::BypassDisabled { .. }), "{err}");
    assert!(err.to_string().contains("disable_bypass_mode at "), "{err}");
    // From a settings default: the session starts in default mode instead.
    assert_eq!(p.effective_mode(None).unwrap(), PermissionMode::Default);
    // A context that still says bypass gets no allow from it.
    let mut c = sb.ctx();
    c.permission_mode = PermissionMode::BypassPermissions;
    assert_eq!(decide(&p, &c, "Bash", bash("make")), Verdict::Ask);
    // Without the managed setting, bypass allows.
    let mut s2 = sources(&sb);
    s2.managed.clear();
    let p2 = s2.load().unwrap();
    assert_eq!(
        p2.effective_mode(None).unwrap(),
        PermissionMode::BypassPermissions
    );
    assert_eq!(decide(&p2, &c, "Bash", bash("make")), Verdict::Allow);
}

#[test]
fn the_claude_code_managed_settings_keys_work_too() {
    let sb = Sandbox::new();
    let mut s = sources(&sb);
    let json = managed(&s).with_file_name("managed-settings.json");
    s.managed.push(json.clone());
    write(
        &json,
        r#"{"allowManagedPermissionRulesOnly": true, "permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    );
    write(&user(&s), "[permissions]\nallow = [\"Bash(make:*)\"]\n");
    let p = s.load().unwrap();
    assert!(p.bypass_disabled().is_some());
    assert_eq!(decide(&p, &sb.ctx(), "Bash", bash("make")), Verdict::Ask);
    // In a user settings file they are lint warnings with no effect.
    let home_settings = s.home.join(".claude/settings.json");
    write(
        &home_settings,
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    );
    s.managed.clear();
    let p = s.load().unwrap();
    assert!(p.bypass_disabled().is_none());
    assert!(p.lint().iter().any(|w| {
        w.message
            .contains("only has an effect in the managed layer")
    }));
}

/// (file text, expected line, expected column, words the message must contain)
const ERRORS: &[(&str, usize, usize, &str)] = &[
    (
        "[permissions]\nallow = [\"Read\",\n  \"Bash(git log\"]\n",
        3,
        4,
        "`(` cannot appear",
    ),
    (
        "[permissions]\ndeny = [\"Frobnicate(x)\"]\n",
        2,
        10,
        "cannot match",
    ),
    (
        "[permissions]\ndeny = [\"Read(!x)\"]\n",
        2,
        10,
        "cannot negate",
    ),
    (
        "[permissions]\ndeny = [\"WebFetch(example.com)\"]\n",
        2,
        10,
        "domain:",
    ),
    ("[permissions]\nask = [1]\n", 2, 8, "expected a string"),
    (
        "[permissions]\nallow_managed_rules_only = true\n",
        2,
        28,
        "managed policy",
    ),
    ("[permisions]\n", 1, 2, "unknown field `permisions`"),
    ("[permissions]\ndefault_mode = \"yolo\"\n", 2, 16, "yolo"),
    (
        "[[tests]]\ntool = \"Bash\"\nexpect = \"maybe\"\n",
        3,
        10,
        "maybe",
    ),
];

#[test]
fn errors_name_file_line_and_column() {
    for (text, line, column, words) in ERRORS {
        let err = PolicyBuilder::new()
            .toml_str(
                text,
                Layer::Project,
                Path::new("/p/.toolgate/policy.toml"),
                Path::new("/p"),
            )
            .map(|_| ())
            .unwrap_err();
        let shown = err.to_string();
        let prefix = format!("/p/.toolgate/policy.toml:{line}:{column}: ");
        assert!(shown.starts_with(&prefix), "{text:?}: {shown}");
        assert!(shown.contains(words), "{text:?}: {shown}");
    }
}

#[test]
fn settings_json_rule_errors_have_line_and_column_too() {
    let sb = Sandbox::new();
    let f = sb.path(".claude/settings.json");
    write(
        &f,
        "{\n  \"permissions\": {\n    \"deny\": [\"Read\", \"Frob(x)\"]\n  }\n}\n",
    );
    let err = PolicyBuilder::new()
        .claude_settings_file(&f, Layer::Project, &sb.ws())
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:3:23: ", f.display())),
        "{err}"
    );
}

#[test]
fn a_missing_command_line_file_is_an_error_and_other_missing_files_are_not() {
    let sb = Sandbox::new();
    let mut s = sources(&sb);
    assert!(s.load().unwrap().rules().is_empty());
    s.command_line.push(sb.path("nope.toml"));
    let err = s.load().unwrap_err();
    assert!(err.to_string().contains("nope.toml"), "{err}");
}

#[test]
fn policy_tests_and_settings_load_with_their_positions() {
    let sb = Sandbox::new();
    let text = "[permissions]\ndefault_mode = \"acceptEdits\"\nadditional_directories = [\"../lib\"]\n\n[[tests]]\nname = \"no curl\"\ntool = \"Bash\"\ninput = { command = \"curl x\" }\nexpect = \"deny\"\nmode = \"plan\"\n";
    let mut b = PolicyBuilder::new();
    b.toml_str(
        text,
        Layer::Project,
        &sb.path(".toolgate/policy.toml"),
        &sb.ws(),
    )
    .unwrap();
    let p = b.build();
    assert_eq!(p.default_mode(), Some(PermissionMode::AcceptEdits));
    assert_eq!(
        p.additional_directories(),
        [sb.ws().parent().unwrap().join("lib")]
    );
    let t = &p.tests()[0];
    assert_eq!(
        (t.name.as_deref(), t.tool.as_str(), t.expect, t.mode, t.line),
        (
            Some("no curl"),
            "Bash",
            Verdict::Deny,
            Some(PermissionMode::Plan),
            5
        )
    );
    assert_eq!(t.input, json!({"command": "curl x"}));
}

#[test]
fn lint_reports_shadowed_and_aliased_rules_and_nothing_else() {
    let mut b = PolicyBuilder::new();
    let text = "[permissions]\nallow = [\"Bash(git:*)\", \"Bash(git status)\", \"Bash(git log:*)\", \"Bash(ls)\", \"Write(src/**)\", \"Edit(src)\"]\ndeny = [\"Read(secrets)\", \"Read(secrets/a)\", \"Bash(rm:*)\"]\nask = [\"Bash(rm -rf:*)\", \"Read(other)\"]\n";
    b.trust_project(true)
        .toml_str(
            text,
            Layer::Project,
            Path::new("/p/policy.toml"),
            Path::new("/p"),
        )
        .unwrap();
    let warnings: Vec<String> = b.build().lint().iter().map(ToString::to_string).collect();
    let about = |rule: &str| {
        warnings
            .iter()
            .filter(|w| w.contains(&format!("`{rule}`:")))
            .count()
    };
    assert_eq!(about("Bash(git status)"), 1, "{warnings:#?}");
    assert_eq!(about("Bash(git log:*)"), 1, "{warnings:#?}");
    assert_eq!(about("Read(secrets/a)"), 1, "{warnings:#?}");
    assert_eq!(about("Bash(rm -rf:*)"), 1, "{warnings:#?}");
    // Aliased and (its `src/**` is `src`) shadowed by nothing broader: one warning, the alias.
    assert_eq!(about("Write(src/**)"), 1, "{warnings:#?}");
    // Not shadowed.
    for rule in [
        "Bash(git:*)",
        "Bash(ls)",
        "Read(secrets)",
        "Bash(rm:*)",
        "Read(other)",
    ] {
        assert_eq!(about(rule), 0, "{rule}: {warnings:#?}");
    }
    assert!(
        warnings.iter().any(|w| w.starts_with("/p/policy.toml:2:")),
        "{warnings:#?}"
    );
}

#[test]
fn domain_rules_decide_url_calls_by_whole_host() {
    let mut b = PolicyBuilder::new();
    let text = "[permissions]\nallow = [\"WebFetch(domain:docs.rs)\", \"WebFetch(domain:*.example.com)\"]\ndeny = [\"WebFetch(domain:evil.example.com)\"]\nask = [\"WebFetch(domain:crates.io)\"]\n";
    b.toml_str(
        text,
        Layer::User,
        Path::new("/u/policy.toml"),
        Path::new("/u"),
    )
    .unwrap();
    let p = b.build();
    let c = ToolContext::new("/w/p", "/home/u", "/tmp/r");
    let url = |u: &str| PermissionSubject::Url(u.to_owned());
    let cases = [
        ("https://docs.rs/serde", Verdict::Allow),
        ("https://DOCS.RS./x", Verdict::Allow),
        ("https://a.example.com/", Verdict::Allow),
        ("https://evil.example.com/", Verdict::Deny),
        ("https://EVIL.example.com./x", Verdict::Deny),
        ("https://crates.io/", Verdict::Ask),
        ("https://docs.rs.evil.net/", Verdict::Ask),
        ("https://example.com/", Verdict::Ask),
        ("http://evil.net\\@docs.rs/", Verdict::Ask),
        ("https://docs.rs%2eevil.net/", Verdict::Ask),
    ];
    for (u, want) in cases {
        assert_eq!(decide(&p, &c, "WebFetch", url(u)), want, "{u}");
    }
}

#[test]
fn content_rules_for_tools_whose_content_is_not_matched_fail_closed() {
    let mut b = PolicyBuilder::new();
    let text = "[permissions]\ndeny = [\"Agent(Explore)\"]\nask = [\"mcp__github__create_issue(x)\"]\nallow = [\"Skill(deploy)\", \"WebSearch(rust)\"]\n";
    b.toml_str(
        text,
        Layer::User,
        Path::new("/u/policy.toml"),
        Path::new("/u"),
    )
    .unwrap();
    let p = b.build();
    let c = ToolContext::new("/w/p", "/home/u", "/tmp/r");
    // Widened: every Agent call that names no subagent type is denied, but the tool stays
    // offered; one that names its type is denied only for that type.
    assert_eq!(
        decide(&p, &c, "Agent", PermissionSubject::Nothing),
        Verdict::Deny
    );
    let agent = |kind: &str| {
        let input = serde_json::json!({"prompt": "p", "subagent_type": kind});
        let request = tool_core::PermissionRequest {
            tool_name: "Agent",
            input: &input,
            subject: &PermissionSubject::Nothing,
            read_only: false,
            requires_user_interaction: false,
            ctx: &c,
        };
        tool_core::PermissionPolicy::decide(&p, &request).verdict
    };
    assert_eq!(agent("Explore"), Verdict::Deny);
    assert_ne!(agent("general-purpose"), Verdict::Deny);
    assert!(!p.removes_tool("Agent"));
    assert_eq!(
        decide(
            &p,
            &c,
            "mcp__github__create_issue",
            PermissionSubject::Nothing
        ),
        Verdict::Ask
    );
    // Allow rules with such contents never allow.
    assert_eq!(
        decide(&p, &c, "Skill", PermissionSubject::Nothing),
        Verdict::Ask
    );
    assert_eq!(p.ignored_rules().len(), 2);
    let lint: Vec<String> = p.lint().iter().map(ToString::to_string).collect();
    assert!(
        lint.iter()
            .any(|w| w.contains("`Agent(Explore)`: toolgate matches this rule against the call's subagent_type only: it covers every Agent call without one")),
        "{lint:#?}"
    );
}

/// One read of the sources gives the rules and the hooks of the same files: a
/// `.claude/settings.json` with both loads both, and replacing the file after the read changes
/// neither (the texts, and the trust settled from them, were read once).
#[test]
fn one_read_gives_rules_and_hooks_of_the_same_text() {
    let sb = Sandbox::new();
    let mut s = sources(&sb);
    s.claude_settings = true;
    let settings = sb.path(".claude/settings.json");
    write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(make:*)"], "deny": ["Bash(curl:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    // Trust the project as it is now, through the store.
    let mut store = TrustStore::load(&s.trust_store_path()).unwrap();
    store
        .record(&sb.ws(), &project_hash(&sb.ws()).unwrap())
        .unwrap();
    let files = s.read().unwrap();
    assert!(files.project_trusted());
    assert_eq!(files.project_hash(), project_hash(&sb.ws()).unwrap());
    assert!(
        files
            .files()
            .iter()
            .any(|f| f.path == settings && f.layer == Layer::Project),
        "{:?}",
        files.files()
    );
    // The file is replaced after the read: allow rules and hooks gone, a new deny.
    write(
        &settings,
        r#"{"permissions": {"allow": ["Bash"], "deny": ["Bash(make:*)"]}}"#,
    );
    assert_ne!(files.project_hash(), project_hash(&sb.ws()).unwrap());
    let c = sb.ctx();
    let p = files.policy().unwrap();
    assert_eq!(decide(&p, &c, "Bash", bash("make all")), Verdict::Allow);
    assert_eq!(
        decide(&p, &c, "Bash", bash("curl example.com")),
        Verdict::Deny
    );
    assert!(p.ignored_rules().is_empty(), "{:?}", p.ignored_rules());
    let (hooks, notes) = tool_hooks::load_hooks(&files).unwrap();
    assert_eq!(hooks.counts(), (1, 0, 0), "{notes:?}");
    // A new read sees the new text, which the store does not trust: its allow is ignored.
    let p = s.load().unwrap();
    assert_eq!(decide(&p, &c, "Bash", bash("make all")), Verdict::Deny);
    assert_eq!(p.ignored_rules().len(), 1);
    let (hooks, _) = tool_hooks::load_hooks(&s.read().unwrap()).unwrap();
    assert_eq!(hooks.counts(), (0, 0, 0));
}

/// A wildcard in an MCP tool's name (`mcp__gh__delete_*`) denies and asks for every tool of the
/// server it matches, never allows, and `policy lint` says so for an allow.
#[test]
fn mcp_tool_name_patterns_deny_and_ask_but_never_allow() {
    let mut b = PolicyBuilder::new();
    b.trust_project(true)
        .toml_str(
            "[permissions]\nallow = [\"mcp__gh\", \"mcp__db__get_*\"]\ndeny = [\"mcp__gh__delete_*\"]\nask = [\"mcp__gh__merge_*\"]\n",
            Layer::Project,
            Path::new("/p/policy.toml"),
            Path::new("/p"),
        )
        .unwrap();
    let p = b.build();
    let ctx = ToolContext::new("/p", "/h", "/tmp/r");
    let v = |tool: &str| decide(&p, &ctx, tool, PermissionSubject::Nothing);
    assert_eq!(v("mcp__gh__delete_repo"), Verdict::Deny);
    assert_eq!(v("mcp__gh__delete_"), Verdict::Deny);
    assert_eq!(v("mcp__gh__merge_pr"), Verdict::Ask);
    assert_eq!(v("mcp__gh__get_repo"), Verdict::Allow);
    assert_eq!(v("mcp__ghx__delete_repo"), Verdict::Ask);
    // The allow pattern allows nothing.
    assert_eq!(v("mcp__db__get_rows"), Verdict::Ask);
    let warnings: Vec<String> = p.lint().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings
            .iter()
            .filter(|w| w.contains("`mcp__db__get_*`") && w.contains("never allows"))
            .count(),
        1,
        "{warnings:#?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains("`mcp__gh__delete_*`")),
        "{warnings:#?}"
    );
}

/// The arguments a policy names as paths of an external tool only restrict its calls: Read and
/// Edit denies refuse, their asks and protected paths ask (even under a whole-tool allow), and
/// a path inside the project allows nothing by itself.
#[test]
fn an_external_tools_path_arguments_restrict_and_never_allow() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = std::fs::canonicalize(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    for d in ["src", "secret", "cfg", "locked", ".git"] {
        std::fs::create_dir_all(ws.join(d)).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut b = PolicyBuilder::new();
    b.trust_project(true)
        .toml_str(
            "[permissions]\nallow = [\"mcp__fs\"]\n\
             deny = [\"Read(./.env)\", \"Edit(./locked/**)\"]\n\
             ask = [\"Read(./secret/**)\", \"Edit(./cfg/**)\"]\n",
            Layer::Project,
            &ws.join(".toolgate/policy.toml"),
            &ws,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let p = b.build();
    let ctx = ToolContext::new(&ws, "/h", "/tmp/r");
    let paths = |read: &[&str], write: &[&str]| PermissionSubject::ToolPaths {
        read: read.iter().map(|r| ws.join(r)).collect(),
        write: write.iter().map(|w| ws.join(w)).collect(),
    };
    let cases = [
        (paths(&[".env"], &[]), Verdict::Deny),
        (paths(&["src/a.rs"], &["locked/a"]), Verdict::Deny),
        (paths(&["locked/a"], &[]), Verdict::Allow),
        (paths(&["secret/k"], &["src/b.rs"]), Verdict::Ask),
        (paths(&[], &["cfg/x"]), Verdict::Ask),
        (paths(&[], &[".git/config"]), Verdict::Ask),
        (paths(&[], &[".claude/settings.json"]), Verdict::Ask),
        (paths(&["src/a.rs"], &["src/b.rs"]), Verdict::Allow),
    ];
    for (subject, want) in cases {
        let d = toolgate_tests::decide(&p, &ctx, "mcp__fs__copy", &subject, false);
        assert_eq!(d.verdict, want, "{subject:?}: {d:?}");
    }
    let denied = toolgate_tests::decide(&p, &ctx, "mcp__fs__copy", &paths(&[".env"], &[]), false);
    assert_eq!(
        denied.message,
        format!(
            "Permission to read {} has been denied.",
            ws.join(".env").display()
        )
    );
    // A read-only tool no rule names, reading inside the project: its path does not allow it.
    let other = toolgate_tests::decide(
        &p,
        &ctx,
        "mcp__other__read",
        &paths(&["src/a.rs"], &[]),
        true,
    );
    assert_eq!(other.verdict, Verdict::Ask, "{other:?}");
    assert_eq!(
        other.message,
        "Claude requested permissions to use mcp__other__read, but you haven't granted it yet."
    );
}
