//! Randomised hostile input for every parser and entry point a model or a repository can
//! reach: permission rules, TOML policy files, Claude Code settings, Bash lines, hook
//! output, tool schemas and whole tool calls. The same generators run a fixed number of
//! cases in the tests and for as long as asked in `cargo xtask fuzz --minutes N`, which keeps
//! every failing input (shrunk) in `tests/fuzz/<target>.txt`; the tests replay those first.
//!
//! A case fails when the code panics, takes more than [`CASE_LIMIT`], or (for Bash) allows a
//! line that runs a denied command.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::{Value, json};
use tool_core::{PermissionMode, RuleList, ToolContext, ToolUse, Verdict};
use tool_hooks::{Exit, HookEvent, RawRun};
use tool_permissions::{Layer, PolicyBuilder};

/// The longest one case may take: far beyond any real input's cost, so only a hang (or a
/// blow-up) trips it.
pub const CASE_LIMIT: Duration = Duration::from_secs(5);

/// One fuzz target.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Its name (and the name of its regression file).
    pub name: &'static str,
    /// Run `cases` generated cases from `seed`; `Err` holds the shrunk failing input as one
    /// line of text and why it failed.
    pub run: fn(cases: u32, seed: u64) -> Result<(), Failure>,
    /// Replay one kept input (a line of its regression file).
    pub replay: fn(line: &str) -> Result<(), String>,
}

/// A failing input: the line to keep, and what went wrong.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The input, as one line (JSON).
    pub input: String,
    /// Why it failed.
    pub why: String,
}

/// Every target.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "rules",
            run: |n, seed| run_strings(n, seed, rule_text(), check_rule),
            replay: |l| replay_string(l, check_rule),
        },
        Target {
            name: "policy_toml",
            run: |n, seed| run_strings(n, seed, toml_text(), check_policy_toml),
            replay: |l| replay_string(l, check_policy_toml),
        },
        Target {
            name: "settings_json",
            run: |n, seed| run_values(n, seed, settings_value(), check_settings),
            replay: |l| replay_value(l, check_settings),
        },
        Target {
            name: "bash",
            run: |n, seed| run_strings(n, seed, bash_line(), check_bash),
            replay: |l| replay_string(l, check_bash),
        },
        Target {
            name: "hook_output",
            run: |n, seed| run_values(n, seed, hook_run(), check_hook_output),
            replay: |l| replay_value(l, check_hook_output),
        },
        Target {
            name: "tool_input",
            run: |n, seed| run_values(n, seed, tool_call(), check_tool_call),
            replay: |l| replay_value(l, check_tool_call),
        },
        Target {
            name: "guard",
            run: |n, seed| run_bytes(n, seed, guard_input(), check_guard),
            replay: |l| replay_bytes(l, check_guard),
        },
    ]
}

/// Where `target`'s kept failing inputs live.
pub fn regression_file(root: &Path, target: &str) -> PathBuf {
    root.join("tests/fuzz").join(format!("{target}.txt"))
}

fn runner(cases: u32, seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Run `check` on `value` within [`CASE_LIMIT`], a panic being a failure.
fn timed<T: ?Sized>(value: &T, check: fn(&T) -> Result<(), String>) -> Result<(), String> {
    let start = Instant::now();
    let out = check(value);
    let took = start.elapsed();
    if took > CASE_LIMIT {
        return Err(format!("took {took:?}"));
    }
    out
}

fn run_strings(
    cases: u32,
    seed: u64,
    strategy: BoxedStrategy<String>,
    check: fn(&str) -> Result<(), String>,
) -> Result<(), Failure> {
    runner(cases, seed)
        .run(&strategy, |s| {
            timed(s.as_str(), check).map_err(TestCaseError::fail)
        })
        .map_err(|e| failure(e, |s: &String| Value::String(s.clone()).to_string()))
}

fn run_values(
    cases: u32,
    seed: u64,
    strategy: BoxedStrategy<Value>,
    check: fn(&Value) -> Result<(), String>,
) -> Result<(), Failure> {
    runner(cases, seed)
        .run(&strategy, |v| timed(&v, check).map_err(TestCaseError::fail))
        .map_err(|e| failure(e, Value::to_string))
}

fn run_bytes(
    cases: u32,
    seed: u64,
    strategy: BoxedStrategy<Vec<u8>>,
    check: fn(&[u8]) -> Result<(), String>,
) -> Result<(), Failure> {
    runner(cases, seed)
        .run(&strategy, |b| {
            timed(b.as_slice(), check).map_err(TestCaseError::fail)
        })
        .map_err(|e| failure(e, |b: &Vec<u8>| encode_bytes(b)))
}

/// Bytes kept as one line: a JSON list of byte values.
fn encode_bytes(b: &[u8]) -> String {
    Value::Array(b.iter().map(|&x| Value::from(x)).collect()).to_string()
}

fn replay_bytes(line: &str, check: fn(&[u8]) -> Result<(), String>) -> Result<(), String> {
    let v: Vec<u8> = serde_json::from_str(line).map_err(|e| e.to_string())?;
    catch(|| timed(v.as_slice(), check))
}

fn failure<T>(e: TestError<T>, encode: impl Fn(&T) -> String) -> Failure {
    match e {
        TestError::Fail(why, value) => Failure {
            input: encode(&value),
            why: why.to_string(),
        },
        TestError::Abort(why) => Failure {
            input: String::new(),
            why: why.to_string(),
        },
    }
}

fn replay_string(line: &str, check: fn(&str) -> Result<(), String>) -> Result<(), String> {
    let Value::String(s) = serde_json::from_str(line).map_err(|e| e.to_string())? else {
        return Err("a kept input that is not a JSON string".into());
    };
    catch(|| timed(s.as_str(), check))
}

fn replay_value(line: &str, check: fn(&Value) -> Result<(), String>) -> Result<(), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    catch(|| timed(&v, check))
}

fn catch(f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(p.as_ref()))))
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

// ---- generators ----

/// Text built from the pieces the target's parser cares about, and anything else.
fn pieces(parts: &'static [&'static str], max: usize) -> BoxedStrategy<String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(parts).prop_map(str::to_owned),
            1 => any::<String>(),
            1 => prop::char::any().prop_map(|c| c.to_string()),
        ],
        0..max,
    )
    .prop_map(|v| v.concat())
    .boxed()
}

fn rule_text() -> BoxedStrategy<String> {
    pieces(
        &[
            "Bash", "Read", "Edit", "Write", "WebFetch", "mcp__", "srv", "__", "(", ")", "\\(",
            "\\)", "\\\\", ":*", "*", "**", "/", "//", "~/", "./", "domain:", ".", "git ", " ",
            "!", "[", "]", "{", "}", "?", "$HOME", "C:\\", "\\\\?\\",
        ],
        16,
    )
}

fn toml_text() -> BoxedStrategy<String> {
    pieces(
        &[
            "[permissions]\n",
            "allow = [",
            "deny = [",
            "ask = [",
            "\"Bash(ls)\"",
            "\"Read(~/x/**)\"",
            ", ",
            "]\n",
            "default_mode = \"",
            "plan",
            "bypassPermissions",
            "\"\n",
            "additional_directories = [\"../",
            "[[tests]]\n",
            "tool = \"Bash\"\n",
            "input = { command = \"ls\" }\n",
            "expect = \"allow\"\n",
            "[[hooks.PreToolUse]]\n",
            "command = \"x\"\n",
            "\"",
            "'",
            "\n",
            "=",
            "{",
            "}",
            "#",
            "\\u0000",
        ],
        24,
    )
}

fn json_value(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<String>().prop_map(Value::String),
        prop::sample::select(
            &[
                "Bash",
                "Read(./x)",
                "Bash(rm:*)",
                "*",
                "",
                "plan",
                "..",
                "/"
            ][..]
        )
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(depth, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(
                    &[
                        "permissions",
                        "allow",
                        "deny",
                        "ask",
                        "defaultMode",
                        "additionalDirectories",
                        "hooks",
                        "PreToolUse",
                        "matcher",
                        "type",
                        "command",
                        "timeout",
                        "x",
                    ][..]
                )
                .prop_map(str::to_owned),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn settings_value() -> BoxedStrategy<Value> {
    json_value(5)
}

fn bash_line() -> BoxedStrategy<String> {
    pieces(
        &[
            "ls",
            "cat ",
            "git ",
            "-c ",
            "core.pager=",
            "status",
            "rm ",
            "-rf ",
            "curl ",
            "echo ",
            "find . ",
            "-exec ",
            "{} ",
            "\\;",
            "sed ",
            "-i ",
            "'s/a/b/'",
            "$(",
            ")",
            "`",
            "${",
            "}",
            "<(",
            ">",
            ">>",
            "2>&1",
            "|",
            "||",
            "&&",
            ";",
            "&",
            "\n",
            "\\\n",
            "'",
            "\"",
            "#",
            "x=1 ",
            "*",
            "?",
            "[",
            "]",
            "{a,b}",
            "~",
            "/etc/passwd",
            ".env",
            "if ",
            "then ",
            "fi",
            "for i in 1; do ",
            "done",
            "case x in x) ",
            ";;",
            "esac",
            "((",
            "))",
            "[[ ",
            " ]]",
            "<<EOF\n",
            "EOF\n",
            "\r",
            "\0",
            "eval ",
            "bash -c ",
            "xargs ",
            "env ",
            "IFS=",
        ],
        24,
    )
}

fn hook_run() -> BoxedStrategy<Value> {
    let text = pieces(
        &[
            "{",
            "}",
            "\"hookSpecificOutput\":",
            "{\"hookEventName\":\"PreToolUse\",",
            "\"permissionDecision\":",
            "\"allow\"",
            "\"deny\"",
            "\"ask\"",
            "\"updatedInput\":",
            "{\"command\":\"rm -rf /\"}",
            "\"continue\":false",
            "\"decision\":\"block\"",
            "\"reason\":\"r\"",
            ",",
            "\n",
            "null",
            "\"additionalContext\":\"c\"",
            "\"permissionDecisionReason\":",
            "[",
            "]",
        ],
        16,
    );
    (text.clone(), text, -3i32..300, 0u8..5, 0u8..3)
        .prop_map(|(stdout, stderr, code, exit, event)| {
            json!({"stdout": stdout, "stderr": stderr, "code": code, "exit": exit, "event": event})
        })
        .boxed()
}

fn tool_call() -> BoxedStrategy<Value> {
    let name = prop::sample::select(
        &[
            "Read", "Edit", "Write", "Grep", "Glob", "Bash", "Nope", "read", "",
        ][..],
    );
    let field = prop::sample::select(
        &[
            "file_path",
            "command",
            "pattern",
            "path",
            "content",
            "old_string",
            "new_string",
            "offset",
            "limit",
            "replace_all",
            "glob",
            "output_mode",
            "-n",
            "head_limit",
            "timeout",
            "run_in_background",
            "pages",
            "type",
            "multiline",
            "extra",
        ][..],
    );
    let value = prop_oneof![
        json_value(2),
        prop::sample::select(
            &[
                "a.txt",
                "../outside.txt",
                "/etc/passwd",
                "~/.ssh/id_rsa",
                "*.rs",
                "**/*",
                "ls",
                "",
                "a\0b"
            ][..]
        )
        .prop_map(|s| Value::String(s.to_owned())),
        (-5i64..100_000).prop_map(Value::from),
    ];
    (name, prop::collection::btree_map(field.prop_map(str::to_owned), value, 0..5))
        .prop_map(|(name, fields)| json!({"name": name, "input": Value::Object(fields.into_iter().collect())}))
        .boxed()
}

// ---- checks ----

fn check_rule(text: &str) -> Result<(), String> {
    let _ = tool_permissions::PermissionRule::parse(text);
    for list in [RuleList::Allow, RuleList::Ask, RuleList::Deny] {
        let mut b = PolicyBuilder::new();
        if b.rule(list, text, Layer::User, None).is_ok() {
            let _ = b.build();
        }
    }
    Ok(())
}

fn check_policy_toml(text: &str) -> Result<(), String> {
    let mut b = PolicyBuilder::new();
    let path = Path::new("/w/p/.toolgate/policy.toml");
    if b.toml_str(text, Layer::Project, path, Path::new("/w/p"))
        .is_ok()
    {
        let _ = b.build();
    }
    Ok(())
}

fn check_settings(v: &Value) -> Result<(), String> {
    let text = v.to_string();
    let mut b = PolicyBuilder::new();
    let path = Path::new("/w/p/.claude/settings.json");
    if b.claude_settings_str(&text, Layer::Project, path, Path::new("/w/p"))
        .is_ok()
    {
        let _ = b.build();
    }
    Ok(())
}

/// A Bash line is decided without a panic, and a line that runs a denied command first,
/// whatever follows (`rm -rf x; <line>`), is never allowed: nothing after it can undo that
/// `rm` runs (if the whole line does not parse, bash runs nothing, and the decision asks).
fn check_bash(line: &str) -> Result<(), String> {
    let mut b = PolicyBuilder::new();
    for (list, rule) in [
        (RuleList::Allow, "Bash(ls:*)"),
        (RuleList::Allow, "Bash(git status)"),
        (RuleList::Allow, "Bash(echo:*)"),
        (RuleList::Deny, "Bash(rm:*)"),
        (RuleList::Deny, "Read(./.env)"),
    ] {
        b.rule(list, rule, Layer::User, None)
            .map_err(|e| e.to_string())?;
    }
    let policy = b.build();
    let ctx = ToolContext::new("/w/p", "/home/u", "/tmp/toolgate-fuzz-results");
    let _ = crate::decide_builtin(&policy, &ctx, "Bash", &json!({"command": line}));
    let first = format!("rm -rf x; {line}");
    let d = crate::decide_builtin(&policy, &ctx, "Bash", &json!({"command": first}));
    if d.verdict == Verdict::Allow {
        return Err(format!(
            "allowed a line that runs a denied rm: {}",
            d.reason
        ));
    }
    Ok(())
}

fn check_hook_output(v: &Value) -> Result<(), String> {
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let code = v["code"].as_i64().unwrap_or(0) as i32;
    let exit = match v["exit"].as_u64().unwrap_or(0) {
        0 | 1 => Exit::Code(code),
        2 => Exit::TimedOut,
        3 => Exit::Cancelled,
        _ => Exit::SpawnFailed(text("stderr")),
    };
    let raw = RawRun {
        exit,
        stdout: text("stdout"),
        stderr: text("stderr"),
        stdin_note: None,
    };
    let pre = tool_hooks::read_pre_run(&raw, "hook.sh");
    // Only an exit 0 with a well-formed allow may allow.
    if pre
        .decision
        .as_ref()
        .is_some_and(|d| d.verdict == Verdict::Allow)
        && !matches!(raw.exit, Exit::Code(0))
    {
        return Err("a failed hook run was read as an allow".into());
    }
    let event = match v["event"].as_u64().unwrap_or(0) {
        0 => HookEvent::PostToolUse,
        _ => HookEvent::PostToolUseFailure,
    };
    let _ = tool_hooks::read_post_run(&raw, event, "hook.sh");
    Ok(())
}

/// A whole call through a session (schema, validation, permission, the tool) in a scratch
/// workspace, where nothing is allowed beyond reads inside it and Bash is denied: exactly one
/// result comes back, with the call's id, and no panic.
fn check_tool_call(v: &Value) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).map_err(|e| e.to_string())?;
    std::fs::write(ws.join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;
    let mut ctx = ToolContext::new(&ws, dir.path().join("home"), dir.path().join("results"));
    ctx.permission_mode = PermissionMode::Default;
    let mut b = PolicyBuilder::new();
    b.rule(RuleList::Deny, "Bash", Layer::User, None)
        .map_err(|e| e.to_string())?;
    let registry = builtin_tools::registry().map_err(|e| e.to_string())?;
    let mut session = tool_orchestrator::Session::builder(registry, ctx)
        .policy(Arc::new(b.build()))
        .build();
    let call = ToolUse::new(
        "toolu_fuzz",
        v["name"].as_str().unwrap_or_default(),
        v["input"].clone(),
    );
    // A runtime of its own on a thread of its own, so the target runs from async code too
    // (xtask's).
    let out = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|rt| rt.block_on(session.run_turn(std::slice::from_ref(&call))))
                    .map_err(|e| e.to_string())
            })
            .join()
            .map_err(|p| format!("panicked: {}", panic_text(p.as_ref())))?
    })?;
    match out.outcomes.as_slice() {
        [one] if one.tool_use_id == "toolu_fuzz" => Ok(()),
        other => Err(format!("{} results", other.len())),
    }
}

// ---- the guard: any bytes on stdin, a valid answer out ----

/// The project and home the guard fuzz target decides in: deny and ask rules of both kinds
/// the guard applies (a Bash line, a path, a tool by name).
fn guard_world() -> &'static (PathBuf, PathBuf) {
    static WORLD: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    WORLD.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("toolgate-fuzz-guard-{}", std::process::id()));
        let project = base.join("proj");
        let home = base.join("home");
        for d in [project.join(".claude"), project.join("src"), home.clone()] {
            std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        }
        std::fs::write(
            project.join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Bash(curl:*)", "Read(./.env)", "mcp__srv__wipe"], "ask": ["Skill"]}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(project.join(".env"), "K=1\n").unwrap_or_else(|e| panic!("{e}"));
        (project, home)
    })
}

/// Hook inputs: well-formed ones of every tool family and mode, then broken every way a
/// pipe can break them (cut short, bytes that are not UTF-8, lone surrogate escapes, fields
/// of the wrong type, huge strings).
fn guard_input() -> BoxedStrategy<Vec<u8>> {
    let (project, _) = guard_world();
    let cwd = prop_oneof![
        Just(project.display().to_string()),
        Just(project.join("src").display().to_string()),
        Just("relative/dir".to_owned()),
        Just("/".to_owned()),
        any::<String>(),
    ];
    let tool = prop::sample::select(vec![
        "Bash",
        "Read",
        "Edit",
        "Write",
        "Grep",
        "Glob",
        "MultiEdit",
        "NotebookEdit",
        "LS",
        "Monitor",
        "WebFetch",
        "WebSearch",
        "Task",
        "Agent",
        "Skill",
        "TodoWrite",
        "mcp__srv__wipe",
        "mcp__srv__echo",
        "ToolSearch",
        "",
    ])
    .prop_map(str::to_owned);
    let text = prop_oneof![
        3 => bash_line(),
        1 => Just(".env".to_owned()),
        1 => Just(format!("{}/.env", project.display())),
        1 => any::<String>(),
        1 => Just("cat .env \u{fffd}".to_owned()),
    ];
    let input = (text.clone(), text, prop::sample::select(vec!["command", "file_path", "path", "notebook_path", "url", "pattern", "subagent_type", "skill"]))
        .prop_map(|(a, b, key)| json!({ key: a, "content": b, "prompt": "p", "url": "https://evil.example/x", "edits": [] }));
    let mode = prop::sample::select(vec![
        "default",
        "acceptEdits",
        "plan",
        "dontAsk",
        "bypassPermissions",
        "auto",
        "",
        "sudo",
    ]);
    let event = prop::sample::select(vec!["PreToolUse", "PermissionRequest", "PostToolUse", ""]);
    let well_formed =
        (cwd, tool, input, mode, event).prop_map(|(cwd, tool, input, mode, event)| {
            json!({"session_id": "s", "cwd": cwd, "hook_event_name": event, "permission_mode": mode,
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"})
            .to_string()
            .into_bytes()
        });
    let broken = (
        well_formed.clone(),
        0usize..10_000,
        prop::collection::vec(any::<u8>(), 0..8),
        0u8..6,
    )
        .prop_map(|(mut b, at, junk, how)| {
            let at = at % (b.len() + 1);
            match how {
                0 => b.truncate(at),
                1 => {
                    b.splice(at..at, junk);
                }
                2 => {
                    // A lone surrogate escape where a string is.
                    let text = String::from_utf8_lossy(&b).into_owned();
                    let t = text.replacen("\"p\"", "\"p\\ud800\"", 1).replacen(
                        "curl",
                        "\\udc00curl",
                        1,
                    );
                    b = t.into_bytes();
                }
                3 => {
                    // A field of the wrong type.
                    let text = String::from_utf8_lossy(&b).into_owned();
                    b = text
                        .replacen("\"tool_input\":", "\"tool_input\":7,\"x\":", 1)
                        .into_bytes();
                }
                4 => b.extend(std::iter::repeat_n(b'a', at * 100)),
                _ => b = junk,
            }
            b
        });
    prop_oneof![2 => well_formed, 3 => broken, 1 => prop::collection::vec(any::<u8>(), 0..64)]
        .boxed()
}

/// The guard's whole stdin-to-stdout path on `bytes`: an answer is one JSON object in the hook
/// protocol, never allow (the guard runs without `--allow`), with a bounded reason; input it
/// cannot read is answered (ask, or deny when failing closed or in bypass mode).
fn check_guard(bytes: &[u8]) -> Result<(), String> {
    let (_, home) = guard_world();
    for fail_closed in [false, true] {
        let opts = toolgate::guard::GuardOptions {
            allow: false,
            fail_closed,
            sandbox: None,
        };
        let a = toolgate::guard::answer_bytes(bytes, home, None, opts);
        let readable = std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| toolgate::guard::parse_input(t).ok())
            .filter(|v| {
                v.get("tool_name").is_some_and(Value::is_string)
                    && v.get("cwd").is_some_and(Value::is_string)
                    && v.get("tool_input").is_some()
            });
        // A PermissionRequest hook with no answer leaves Claude Code's permission dialog up:
        // the ask. Any other silence must come of input the guard could read.
        let permission_request = std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| toolgate::guard::parse_input(t).ok())
            .is_some_and(|v| v["hook_event_name"] == "PermissionRequest");
        let Some(out) = &a.stdout else {
            if readable.is_none() && (fail_closed || !permission_request) {
                return Err("no answer to input the guard cannot read".into());
            }
            continue;
        };
        let v: Value =
            serde_json::from_str(out).map_err(|e| format!("answer not JSON ({e}): {out}"))?;
        let h = &v["hookSpecificOutput"];
        let (verdict, reason) = match h["hookEventName"].as_str() {
            Some("PreToolUse") => (&h["permissionDecision"], &h["permissionDecisionReason"]),
            Some("PermissionRequest") => (&h["decision"]["behavior"], &h["decision"]["message"]),
            _ => return Err(format!("an answer of no hook event: {out}")),
        };
        match verdict.as_str() {
            Some("ask" | "deny") => {}
            other => return Err(format!("answered {other:?} without --allow: {out}")),
        }
        if fail_closed && readable.is_none() && verdict != "deny" {
            return Err(format!(
                "unreadable input answered {verdict} with --fail-closed"
            ));
        }
        let chars = reason.as_str().map_or(0, |r| r.chars().count());
        if chars > toolgate::guard::MAX_REASON_CHARS + 100 {
            return Err(format!("a reason of {chars} characters"));
        }
    }
    Ok(())
}
