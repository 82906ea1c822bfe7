//! `toolgate mcp` driven by a real MCP client this project did not write: the official Python
//! `mcp` package from PyPI, installed into a virtual environment under the target directory
//! the first time. Where Python or the registry is missing, the test says it was skipped
//! (and fails instead when `TOOLGATE_REQUIRE_MCP` is set).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The client: lists the tools, then makes four calls and prints what came back as JSON.
/// `answer` is what it answers an elicitation with: `yes`, `no`, or `absent` (it does not
/// offer elicitation at all).
const CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

async def main(exe, ws, answer):
    params = StdioServerParameters(command=exe, args=["mcp", "--dir", ws, "--trust-project"], cwd=ws)
    asked = []
    async def elicit(ctx, p):
        asked.append(p.message)
        return types.ElicitResult(action="accept", content={"approve": answer == "yes"})
    callbacks = {} if answer == "absent" else {"elicitation_callback": elicit}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, **callbacks) as s:
            await s.initialize()
            listed = await s.list_tools()
            def hints(t):
                a = t.annotations
                ro = getattr(a, "read_only_hint", None) if hasattr(a, "read_only_hint") else getattr(a, "readOnlyHint", None)
                de = getattr(a, "destructive_hint", None) if hasattr(a, "destructive_hint") else getattr(a, "destructiveHint", None)
                return [ro, de]
            out = {"tools": {t.name: hints(t) for t in listed.tools}}
            async def call(name, args):
                res = await s.call_tool(name, args)
                err = getattr(res, "is_error", None) if hasattr(res, "is_error") else getattr(res, "isError", None)
                return {"isError": bool(err), "text": "".join(c.text for c in res.content if c.type == "text")}
            out["read"] = await call("Read", {"file_path": ws + "/a.txt"})
            out["edit_denied"] = await call("Edit", {"file_path": ws + "/locked.txt", "old_string": "locked", "new_string": "open"})
            out["schema"] = await call("Read", {"file_path": 5})
            out["write_ask"] = await call("Write", {"file_path": ws + "/new.txt", "content": "x\n"})
            out["asked"] = asked
            print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
"#;

/// The packages the tests take from PyPI: the official client (and server library), and a
/// third-party server, `mcp-server-time`.
const PACKAGES: [&str; 2] = ["mcp>=1.10,<3", "mcp-server-time"];

/// A Python with the packages, installed on first use; `Err` says why there is none.
fn python_with_mcp() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-client");
    let python = venv.join("bin/python");
    let has_mcp = |p: &Path| {
        Command::new(p)
            .args(["-c", "import mcp, mcp_server_time"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python.exists() && has_mcp(&python) {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("no python3 to make a virtual environment with: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let installed = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet"])
        .args(PACKAGES)
        .output()
        .map_err(|e| format!("pip could not run: {e}"))?;
    if !installed.status.success() || !has_mcp(&python) {
        return Err(format!(
            "the Python packages {PACKAGES:?} could not be installed from PyPI: {}",
            String::from_utf8_lossy(&installed.stderr).trim()
        ));
    }
    Ok(python)
}

fn python_or_skip() -> Option<PathBuf> {
    // Installed once for all the tests of this file, which run at the same time.
    static PYTHON: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match PYTHON.get_or_init(python_with_mcp).clone() {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("TOOLGATE_REQUIRE_MCP").is_some() => {
            panic!("TOOLGATE_REQUIRE_MCP is set but {why}")
        }
        Err(why) => {
            // Straight to standard error, past the test harness's capture, so a run says so.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "skipped (MCP end-to-end): {why}");
            None
        }
    }
}

/// A project with a file to read, one whose Edit is denied, and Write asked about.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = dir.path();
    std::fs::write(ws.join("a.txt"), "hello\nworld\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(ws.join("locked.txt"), "locked\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.join(".toolgate")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        ws.join(".toolgate/policy.toml"),
        "[permissions]\ndeny = [\"Edit(./locked.txt)\"]\nask = [\"Write\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn run_client(python: &Path, ws: &Path, answer: &str) -> Value {
    let script = ws.join(".client.py");
    std::fs::write(&script, CLIENT).unwrap_or_else(|e| panic!("{e}"));
    let ws_real = std::fs::canonicalize(ws).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(&ws_real)
        .arg(answer)
        .env("HOME", ws)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "the client failed ({answer}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn an_mcp_client_gets_the_gated_tools_with_their_errors_and_asks() {
    let Some(python) = python_or_skip() else {
        return;
    };
    for answer in ["yes", "no", "absent"] {
        let dir = project();
        let ws = dir.path();
        let out = run_client(&python, ws, answer);
        let hints = |name: &str| out["tools"][name].clone();
        assert_eq!(hints("Read"), serde_json::json!([true, false]), "{out}");
        assert_eq!(hints("Grep"), serde_json::json!([true, false]), "{out}");
        assert_eq!(hints("Edit"), serde_json::json!([false, true]), "{out}");
        assert_eq!(hints("Bash"), serde_json::json!([false, true]), "{out}");

        assert_eq!(out["read"]["isError"], false, "{out}");
        assert!(
            out["read"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("1\thello\n2\tworld")),
            "{out}"
        );

        // A deny is an error result with the deny text; the file is untouched.
        assert_eq!(out["edit_denied"]["isError"], true, "{out}");
        assert!(
            out["edit_denied"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("denied by your permission settings")),
            "{out}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("locked.txt")).unwrap_or_default(),
            "locked\n"
        );

        // A schema error is an error result the model can act on, not a protocol error.
        assert_eq!(out["schema"]["isError"], true, "{out}");
        assert!(
            out["schema"]["text"].as_str().is_some_and(|t| t.contains(
                "The parameter `file_path` type is expected as `string` but provided as `number`"
            )),
            "{out}"
        );

        // The ask: through elicitation when the client offers it, else refused with its text.
        let asked = out["asked"].as_array().cloned().unwrap_or_default();
        let written = ws.join("new.txt").exists();
        let text = out["write_ask"]["text"].as_str().unwrap_or_default();
        match answer {
            "yes" => {
                assert_eq!(asked.len(), 1, "{out}");
                assert!(
                    asked[0].as_str().is_some_and(|m| m.contains("Write")),
                    "{out}"
                );
                assert_eq!(out["write_ask"]["isError"], false, "{out}");
                assert!(written, "{out}");
            }
            "no" => {
                assert_eq!(asked.len(), 1, "{out}");
                assert_eq!(out["write_ask"]["isError"], true, "{out}");
                assert!(text.contains("The user doesn't want to proceed"), "{out}");
                assert!(!written);
            }
            _ => {
                assert!(asked.is_empty(), "{out}");
                assert_eq!(out["write_ask"]["isError"], true, "{out}");
                assert!(text.contains("but you haven't granted it yet"), "{out}");
                assert!(!written);
            }
        }
    }
}

/// Run `toolgate run` on `turns` (tool_use blocks, one list per turn) in `ws`, the project
/// trusted; the results.
fn run_turns(ws: &Path, turns: Value) -> Vec<Value> {
    run_turns_trusting(ws, turns, true)
}

fn run_turns_trusting(ws: &Path, turns: Value, trusted: bool) -> Vec<Value> {
    let file = ws.join(".turns.json");
    std::fs::write(&file, turns.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("run")
        .arg(&file)
        .arg("--dir")
        .arg(ws)
        .args(if trusted {
            &["--trust-project", "--json"][..]
        } else {
            &["--json"][..]
        })
        .env("HOME", ws)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A result's text: its content string, or its text blocks joined (an MCP tool's success
/// comes as blocks, as Claude Code passes it on).
fn text_of(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn call(id: &str, name: &str, input: Value) -> Value {
    serde_json::json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

#[test]
fn a_third_party_server_is_gated_by_the_same_rules_and_hooks() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let server = python.with_file_name("mcp-server-time");
    for rewrite in [true, false] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".toolgate")).unwrap_or_else(|e| panic!("{e}"));
        let hook = if rewrite {
            "[[hooks.PostToolUse]]\nmatcher = \"mcp__time__get_current_time\"\ncommand = \"printf '{\\\"hookSpecificOutput\\\":{\\\"hookEventName\\\":\\\"PostToolUse\\\",\\\"updatedMCPToolOutput\\\":\\\"rewritten by the hook\\\"}}'\"\n"
        } else {
            ""
        };
        std::fs::write(
            ws.join(".toolgate/policy.toml"),
            format!(
                "[permissions]\nallow = [\"mcp__time\"]\ndeny = [\"mcp__time__convert_time\"]\n\n\
                 [mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n\n{hook}",
                server.display().to_string()
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let results = run_turns(
            ws,
            serde_json::json!([[
                call(
                    "t1",
                    "mcp__time__get_current_time",
                    serde_json::json!({"timezone": "UTC"})
                ),
                call(
                    "t2",
                    "mcp__time__convert_time",
                    serde_json::json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Paris"})
                ),
                call(
                    "t3",
                    "mcp__time__get_current_time",
                    serde_json::json!({"tz": 5})
                ),
            ]]),
        );
        assert_eq!(results.len(), 3, "{results:?}");
        let text = |i: usize| text_of(&results[i]);
        // The server's own answer, or the hook's in its place.
        assert_eq!(results[0]["is_error"], Value::Null, "{results:?}");
        if rewrite {
            assert_eq!(text(0), "rewritten by the hook");
        } else {
            assert!(text(0).contains("\"timezone\": \"UTC\""), "{results:?}");
        }
        // The deny rule on one tool holds: the tool is not even offered.
        assert_eq!(results[1]["is_error"], true);
        assert!(
            text(1).contains("No such tool available: mcp__time__convert_time"),
            "{results:?}"
        );
        // The server's schema is checked like any other.
        assert_eq!(results[2]["is_error"], true);
        assert!(
            text(2).contains("The required parameter `timezone` is missing"),
            "{results:?}"
        );
    }
}

/// A server (on the `mcp` package) whose `die` tool ends it in the middle of the call.
const DYING: &str = r#"
import os
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server

app = Server("dying")

@app.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"

@app.tool()
def die() -> str:
    """End the server in the middle of the call."""
    os._exit(1)

@app.tool()
def read_file(path: str) -> str:
    """Say which file it would read."""
    return "would read " + path

@app.tool()
def write_file(path: str, content: str) -> str:
    """Say which file it would write."""
    return "would write " + path

app.run()
"#;

/// A project whose policy has `permissions` and starts the test server `DYING` as `server`,
/// followed by `more`.
fn with_dying_server(
    python: &Path,
    server: &str,
    permissions: &str,
    more: &str,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = dir.path();
    std::fs::write(ws.join("dying.py"), DYING).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.join(".toolgate")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        ws.join(".toolgate/policy.toml"),
        format!(
            "[permissions]\n{permissions}\n[mcp_servers.{server}]\ncommand = {:?}\nargs = [\"dying.py\"]\n{more}",
            python.display().to_string()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[test]
fn a_server_that_dies_mid_call_gives_that_call_an_error_and_is_started_again() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = with_dying_server(&python, "dying", "allow = [\"mcp__dying\"]\n", "");
    let ws = dir.path();
    let results = run_turns(
        ws,
        serde_json::json!([
            [call("d1", "mcp__dying__ping", serde_json::json!({}))],
            [call("d2", "mcp__dying__die", serde_json::json!({}))],
            [call("d3", "mcp__dying__ping", serde_json::json!({}))],
        ]),
    );
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(text_of(&results[0]), "pong");
    assert_eq!(results[1]["is_error"], true, "{results:?}");
    assert!(
        results[1]["content"]
            .as_str()
            .is_some_and(|t| t.contains("MCP server dying stopped while running die")),
        "{results:?}"
    );
    assert_eq!(text_of(&results[2]), "pong", "{results:?}");
}

#[test]
fn claude_codes_mcp_json_starts_its_servers_only_in_a_trusted_project() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let server = python.with_file_name("mcp-server-time");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = dir.path();
    std::fs::write(
        ws.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"time": {"command": server, "args": ["--local-timezone", "UTC"]}}})
            .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Claude Code's own settings allow the server's tools (a user-layer rule needs no trust).
    std::fs::create_dir_all(ws.join(".claude")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        ws.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["mcp__time"]}}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let turns = serde_json::json!([[call(
        "t1",
        "mcp__time__get_current_time",
        serde_json::json!({"timezone": "UTC"})
    )]]);
    let trusted = run_turns_trusting(ws, turns.clone(), true);
    assert_eq!(trusted[0]["is_error"], Value::Null, "{trusted:?}");
    assert!(
        text_of(&trusted[0]).contains("\"timezone\": \"UTC\""),
        "{trusted:?}"
    );
    // Not trusted: the server is not started, so there is no such tool.
    let untrusted = run_turns_trusting(ws, turns, false);
    assert_eq!(untrusted[0]["is_error"], true, "{untrusted:?}");
    assert!(
        untrusted[0]["content"]
            .as_str()
            .is_some_and(|t| t.contains("No such tool available: mcp__time__get_current_time")),
        "{untrusted:?}"
    );
}

#[test]
fn path_arguments_a_policy_names_are_checked_against_read_and_edit_rules() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = with_dying_server(
        &python,
        "fs",
        "allow = [\"mcp__fs\"]\ndeny = [\"Read(./secret.txt)\", \"Edit(./locked/**)\"]\n\
         ask = [\"Read(./private/**)\", \"Edit(./cfg/**)\"]\n",
        "\n[mcp_servers.fs.paths]\nread_file = { read = [\"path\"] }\nwrite_file = { write = [\"path\"] }\n",
    );
    let ws = dir.path();
    let abs = |p: &str| ws.join(p).display().to_string();
    let results = run_turns(
        ws,
        serde_json::json!([[
            call(
                "p1",
                "mcp__fs__read_file",
                serde_json::json!({"path": "secret.txt"})
            ),
            call(
                "p2",
                "mcp__fs__read_file",
                serde_json::json!({"path": abs("secret.txt")})
            ),
            call(
                "p3",
                "mcp__fs__read_file",
                serde_json::json!({"path": "open.txt"})
            ),
            call(
                "p4",
                "mcp__fs__write_file",
                serde_json::json!({"path": "locked/a.txt", "content": "x"})
            ),
            call(
                "p5",
                "mcp__fs__write_file",
                serde_json::json!({"path": "free/a.txt", "content": "x"})
            ),
            // Not a path argument of this tool: the server's business.
            call("p6", "mcp__fs__ping", serde_json::json!({})),
            // Ask rules and protected paths ask (refused here, with no one to ask), whatever
            // allows the server's tools.
            call(
                "p7",
                "mcp__fs__read_file",
                serde_json::json!({"path": "private/key"})
            ),
            call(
                "p8",
                "mcp__fs__write_file",
                serde_json::json!({"path": "cfg/app.toml", "content": "x"})
            ),
            call(
                "p9",
                "mcp__fs__write_file",
                serde_json::json!({"path": ".git/hooks/pre-commit", "content": "x"})
            ),
        ]]),
    );
    assert_eq!(results.len(), 9, "{results:?}");
    for (i, tool) in [(6, "read_file"), (7, "write_file"), (8, "write_file")] {
        assert_eq!(results[i]["is_error"], true, "{i}: {results:?}");
        assert!(
            text_of(&results[i]).contains(&format!(
                "requested permissions to use mcp__fs__{tool}, but you haven't granted it yet"
            )),
            "{i}: {results:?}"
        );
    }
    let denied = "File is in a directory that is denied by your permission settings.";
    for i in [0, 1, 3] {
        assert_eq!(results[i]["is_error"], true, "{i}: {results:?}");
        assert!(text_of(&results[i]).contains(denied), "{i}: {results:?}");
    }
    assert_eq!(text_of(&results[2]), "would read open.txt", "{results:?}");
    assert_eq!(
        text_of(&results[4]),
        "would write free/a.txt",
        "{results:?}"
    );
    assert_eq!(text_of(&results[5]), "pong", "{results:?}");
}
