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

/// A Python with the `mcp` package, installed on first use; `Err` says why there is none.
fn python_with_mcp() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-client");
    let python = venv.join("bin/python");
    let has_mcp = |p: &Path| {
        Command::new(p)
            .args(["-c", "import mcp"])
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
        .args(["install", "--quiet", "mcp>=1.10,<3"])
        .output()
        .map_err(|e| format!("pip could not run: {e}"))?;
    if !installed.status.success() || !has_mcp(&python) {
        return Err(format!(
            "the Python `mcp` package could not be installed from PyPI: {}",
            String::from_utf8_lossy(&installed.stderr).trim()
        ));
    }
    Ok(python)
}

fn python_or_skip() -> Option<PathBuf> {
    match python_with_mcp() {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("TOOLGATE_REQUIRE_MCP").is_some() => {
            panic!("TOOLGATE_REQUIRE_MCP is set but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
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
