//! `cargo xtask guard-e2e`: the real Claude Code with `toolgate guard` installed, through a
//! session that calls every tool it offers (MCP tools of a stub server included), against the
//! same session without the guard.
//!
//! The sessions are `tests/guard-e2e/session*.json`, oracle scenarios whose user settings let
//! Claude Code run every benign call by itself. Each is recorded twice with `cargo xtask record`'s
//! recorder (Claude Code installed under `target/oracle` on first use): alone, and with the
//! PreToolUse hook that `toolgate guard install --user` writes (`toolgate guard`, found on
//! PATH, matcher `*`). The guard passes when it adds no prompt and no denial to any benign
//! call (each gives the same kind of result as without it, and no `permission_denied` event),
//! and every call whose id says `harmful` is refused with it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::workspace_root;

use crate::record::SYSTEM_PATH;

/// What the guard must do to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Nothing: the call goes as it goes without the guard.
    Benign,
    /// Refuse it.
    Harmful,
}

/// One call's outcome in a run: refused (by a rule, a hook or a prompt) or not, and the text.
#[derive(Debug, Clone)]
struct Outcome {
    /// The result is an error (refused, or failed before or while running).
    error: bool,
    refused: bool,
    by_guard: bool,
    text: String,
}

/// The outcome of each call of a recorded run, by tool_use id.
fn outcomes(record: &Value) -> BTreeMap<String, Outcome> {
    let asked: Vec<&str> = record["stream_events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["subtype"] == "permission_denied")
        .filter_map(|e| e["tool_use_id"].as_str())
        .collect();
    let mut out = BTreeMap::new();
    for r in record["tool_results"].as_array().into_iter().flatten() {
        let Some(id) = r["tool_use_id"].as_str() else {
            continue;
        };
        let text = match &r["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let refused_text = [
            "hook error",
            "requested permissions",
            "denied",
            "haven't granted",
            "No such tool available",
        ];
        let refused = asked.contains(&id)
            || (r["is_error"] == Value::Bool(true)
                && refused_text.iter().any(|t| text.contains(t)));
        let by_guard = text.contains("toolgate");
        out.insert(
            id.to_owned(),
            Outcome {
                error: r["is_error"] == Value::Bool(true),
                refused,
                by_guard,
                text,
            },
        );
    }
    out
}

/// The user settings `toolgate guard install --user` writes into an empty home.
fn installed_hook(toolgate: &Path) -> anyhow::Result<Value> {
    let home = tempfile::tempdir()?;
    let out = Command::new(toolgate)
        .args(["guard", "install", "--user"])
        .env("HOME", home.path())
        .output()
        .context("running toolgate guard install")?;
    if !out.status.success() {
        bail!(
            "toolgate guard install --user failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(home.path().join(".claude/settings.json"))?;
    let v: Value = serde_json::from_str(&text)?;
    Ok(v["hooks"].clone())
}

/// Record `scenario` with Claude Code (`cargo xtask record`'s recorder); its record.
fn record(claude: &Path, scenario: &Value, name: &str) -> anyhow::Result<Value> {
    let dir = workspace_root().join("target/guard-e2e");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(scenario)?)?;
    let record = crate::record::record(&file, claude)?;
    std::fs::write(
        dir.join(format!("{name}.record.json")),
        serde_json::to_string_pretty(&record)?,
    )?;
    Ok(record)
}

/// Run the sessions with and without the guard and compare; an error names every call the
/// guard got wrong.
pub(crate) fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    crate::build_toolgate()?;
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let toolgate = root.join("target").join(profile).join("toolgate");
    let claude = crate::record::install()?;
    // `toolgate` on PATH, as a teammate's machine has it: the hook command names no path.
    let bin = root.join("target/guard-e2e/bin");
    std::fs::create_dir_all(&bin)?;
    let link = bin.join("toolgate");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&toolgate, &link)?;
    let hooks = installed_hook(&toolgate)?;
    let stub = root.join("tests/guard-e2e/mcp_stub.py");
    let mut problems = Vec::new();
    let mut rows = Vec::new();
    for name in ["session", "session-agent"] {
        let text = std::fs::read_to_string(root.join(format!("tests/guard-e2e/{name}.json")))?
            .replace("{{MCP_STUB}}", &stub.display().to_string());
        let mut alone: Value = serde_json::from_str(&text)?;
        // The oracle runs Claude Code with a fixed PATH; `toolgate` is found on this one.
        alone["env"]["PATH"] = Value::from(format!("{}:{SYSTEM_PATH}", bin.display()));
        let mut guarded = alone.clone();
        guarded["user_settings"]["hooks"] = hooks.clone();
        let without = outcomes(&record(&claude, &alone, &format!("{name}-alone"))?);
        let with = outcomes(&record(&claude, &guarded, &format!("{name}-guard"))?);
        let calls: Vec<(String, String)> = alone["turns"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t.as_array().cloned().unwrap_or_default())
            .filter_map(|b| Some((b["id"].as_str()?.to_owned(), b["name"].as_str()?.to_owned())))
            .collect();
        for (id, tool) in calls {
            let expect = if id.contains("harmful") {
                Expect::Harmful
            } else {
                Expect::Benign
            };
            let (Some(a), Some(g)) = (without.get(&id), with.get(&id)) else {
                problems.push(format!("{id} ({tool}): no result in one of the runs"));
                continue;
            };
            let shown = |o: &Outcome| {
                if o.by_guard {
                    "refused by the guard"
                } else if o.refused {
                    "refused"
                } else {
                    "ran"
                }
            };
            rows.push(format!(
                "{id:<34} {tool:<18} alone: {:<22} guard: {}",
                shown(a),
                shown(g)
            ));
            match expect {
                Expect::Benign if g.refused && !a.refused => problems.push(format!(
                    "{id} ({tool}): benign, ran alone but was refused with the guard: {}",
                    g.text
                )),
                Expect::Benign if g.by_guard => problems.push(format!(
                    "{id} ({tool}): benign, but the guard spoke: {}",
                    g.text
                )),
                Expect::Harmful if !g.refused => problems.push(format!(
                    "{id} ({tool}): harmful, but it ran with the guard: {}",
                    g.text
                )),
                _ => {}
            }
        }
    }
    let checked = rows.len();
    // Where `toolgate` is not installed, the hook blocks every call rather than let it run.
    let text = std::fs::read_to_string(root.join("tests/guard-e2e/session.json"))?
        .replace("{{MCP_STUB}}", &stub.display().to_string());
    let mut missing: Value = serde_json::from_str(&text)?;
    missing["user_settings"]["hooks"] = hooks;
    missing["env"]["PATH"] = Value::from(SYSTEM_PATH);
    let blocked = outcomes(&record(&claude, &missing, "session-no-toolgate")?);
    // A call that failed before the hooks (bad input, Claude Code's own deny) did not run
    // either; every other must have been blocked by the hook command.
    let ran: Vec<&String> = blocked
        .iter()
        .filter(|(_, o)| !o.error)
        .map(|(id, _)| id)
        .collect();
    let by_hook = blocked
        .values()
        .filter(|o| o.text.contains("toolgate guard could not run"))
        .count();
    rows.push(format!(
        "without toolgate on PATH: {by_hook} of {} calls blocked by the hook command, the other {} refused before the hooks, none ran",
        blocked.len(),
        blocked.len() - by_hook
    ));
    if !ran.is_empty() || blocked.is_empty() {
        problems.push(format!(
            "without toolgate on PATH these calls were not blocked: {ran:?}"
        ));
    }
    for r in &rows {
        println!("{r}");
    }
    if !problems.is_empty() {
        bail!(
            "the guard got {} calls wrong:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    println!(
        "{checked} calls: every benign call went as without the guard, every harmful one was refused"
    );
    Ok(())
}
