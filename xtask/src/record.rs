//! `cargo xtask record SCENARIO…`: run a scenario against the real Claude Code, offline, and
//! record what its tool layer sends back to the model.
//!
//! The CLI comes from the npm registry (`@anthropic-ai/claude-code`, pinned to
//! [`CLAUDE_CODE_VERSION`]) and is installed into `target/oracle` on first use. Each run happens
//! in a fresh network namespace whose only interface is loopback (`unshare -n`, or `-rn` when not
//! root): the CLI talks to a scripted Messages API on 127.0.0.1 ([`fake_api`]) and to nothing
//! else. The workspace and a fresh `HOME` are laid out from the scenario as `toolgate` lays them
//! out for `cargo xtask conformance`, and the record has the reference harness's format
//! (`../shared/oracle/run_scenario.py`): the `tool_result` blocks in order of first appearance,
//! with paths put back as `{{WORKSPACE}}`, `{{HOME}}` and `{{WORKSPACE_SLUG}}`, the other
//! blocks of later user messages, the CLI's permission metadata and system events, and the
//! workspace after the run.

mod fake_api;

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use toolgate::scenario;

/// The Claude Code release the recorder installs and the committed records were made with.
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.332";
/// The model named on the command line unless the scenario says otherwise (`null`: none).
const DEFAULT_MODEL: &str = "claude-sonnet-4-5-20250929";
/// Set in the environment of the re-executed recorder once it is inside its namespace.
const IN_NETNS: &str = "TOOLGATE_RECORD_IN_NETNS";
/// When set, the folder the raw request log and the CLI's output of each run are kept in.
pub(crate) const RAW_DIR: &str = "TOOLGATE_RECORD_RAW";
/// The PATH the CLI runs with unless the scenario's `env` gives another.
pub(crate) const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// Where the CLI is installed.
pub(crate) fn install_dir() -> PathBuf {
    crate::workspace_root().join("target/oracle")
}

/// The CLI's native binary inside an install folder.
fn binary_in(dir: &Path) -> PathBuf {
    dir.join("node_modules/@anthropic-ai/claude-code-linux-x64/claude")
}

/// The CLI, installed from the npm registry into `target/oracle` when it is not there yet.
pub(crate) fn install() -> anyhow::Result<PathBuf> {
    let dir = install_dir();
    let claude = binary_in(&dir);
    if claude.is_file() && version_of(&claude).is_ok_and(|v| v.starts_with(CLAUDE_CODE_VERSION)) {
        return Ok(claude);
    }
    std::fs::create_dir_all(&dir)?;
    let manifest = json!({
        "name": "toolgate-oracle",
        "private": true,
        "description": "Claude Code, installed by `cargo xtask record` to record scenarios against; never committed",
        "dependencies": {"@anthropic-ai/claude-code": CLAUDE_CODE_VERSION}
    });
    std::fs::write(
        dir.join("package.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    eprintln!(
        "installing Claude Code {CLAUDE_CODE_VERSION} into {} (npm install, from the npm registry)",
        dir.display()
    );
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .context(
            "running npm: recording needs Node.js's package manager to install Claude Code from the npm registry (Debian: apt-get install npm)",
        )?;
    if !status.success() || !claude.is_file() {
        bail!(
            "npm install in {} failed ({status}); no Claude Code at {}",
            dir.display(),
            claude.display()
        );
    }
    let version = version_of(&claude)?;
    if !version.starts_with(CLAUDE_CODE_VERSION) {
        bail!("npm installed Claude Code {version}, not {CLAUDE_CODE_VERSION}");
    }
    Ok(claude)
}

/// What `claude --version` prints.
fn version_of(claude: &Path) -> anyhow::Result<String> {
    let out = Command::new(claude)
        .arg("--version")
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("HOME", std::env::temp_dir())
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .with_context(|| format!("running {} --version", claude.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Record `scenario_file` with `claude`, isolated in a loopback-only network namespace.
pub(crate) fn record(scenario_file: &Path, claude: &Path) -> anyhow::Result<Value> {
    let out = tempfile::Builder::new()
        .prefix("toolgate-record-")
        .suffix(".json")
        .tempfile()?;
    let unshare = ["/usr/bin/unshare", "/bin/unshare"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .context("`unshare` (util-linux) is needed to run Claude Code in a loopback-only network namespace")?;
    let mut cmd = Command::new(unshare);
    if !is_root() {
        cmd.arg("-r");
    }
    let run = cmd
        .arg("-n")
        .arg("--")
        .arg(this_program()?)
        .arg("record-isolated")
        .arg("--claude")
        .arg(claude)
        .arg(scenario_file)
        .arg(out.path())
        .env(IN_NETNS, "1")
        .stdin(Stdio::null())
        .output()
        .context("running the recorder under unshare")?;
    if !run.status.success() {
        bail!(
            "recording {} failed ({}): {}",
            scenario_file.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        );
    }
    let text = std::fs::read_to_string(out.path())?;
    serde_json::from_str(&text).context("reading the record")
}

/// This program's path, also after a rebuild replaced it (Linux then names the running file
/// `PATH (deleted)`, and the new build is at PATH).
fn this_program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let text = exe.to_string_lossy();
    Ok(match text.strip_suffix(" (deleted)") {
        Some(path) => PathBuf::from(path),
        None => exe,
    })
}

fn is_root() -> bool {
    // The owner of /proc/self is the process's effective user.
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

/// Inside the namespace: bring loopback up, make sure nothing else is there, record, write.
pub(crate) fn record_isolated(
    scenario_file: &Path,
    claude: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    if std::env::var_os(IN_NETNS).is_none() {
        bail!("record-isolated runs only inside the recorder's network namespace");
    }
    loopback_up()?;
    let interfaces = interfaces()?;
    if interfaces != ["lo"] {
        bail!(
            "the network namespace has interfaces {interfaces:?}, not loopback alone; refusing to run Claude Code"
        );
    }
    let record = record_here(scenario_file, claude)?;
    std::fs::write(out, serde_json::to_string_pretty(&record)? + "\n")?;
    Ok(())
}

/// The network interfaces this namespace has (`/proc/self/net/dev` is per namespace).
fn interfaces() -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/net/dev")?;
    Ok(text
        .lines()
        .skip(2)
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.trim().to_owned())
        .collect())
}

/// Set `lo` up (a new network namespace has it down).
#[allow(unsafe_code)]
fn loopback_up() -> anyhow::Result<()> {
    // SAFETY: a plain datagram socket used for two interface ioctls on a zeroed `ifreq` whose
    // name is `lo`; the socket is closed on every path.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            bail!("socket: {}", std::io::Error::last_os_error());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let mut result = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req);
        if result == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            result = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &mut req);
        }
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if result != 0 {
            bail!("bringing loopback up: {err}");
        }
    }
    Ok(())
}

/// Kill a process group.
#[allow(unsafe_code)]
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Record a scenario in this process's network namespace.
fn record_here(scenario_file: &Path, claude: &Path) -> anyhow::Result<Value> {
    let raw: Value = serde_json::from_str(
        &std::fs::read_to_string(scenario_file)
            .with_context(|| format!("reading {}", scenario_file.display()))?,
    )
    .with_context(|| format!("{} is not JSON", scenario_file.display()))?;
    let s = scenario::Scenario::load(scenario_file)?;
    let layout = scenario::lay_out(&s)?;
    let subs = layout.subs.clone();
    let base = layout.base().to_path_buf();

    // The user settings as the reference harness writes them: the scenario's, with the CLI's
    // internal "tokens left" reminder off unless the scenario says otherwise.
    let mut user_settings = match raw.get("user_settings") {
        Some(Value::Object(o)) => subs.apply_value(&Value::Object(o.clone())),
        _ => Value::Object(Map::new()),
    };
    let reminder = raw
        .get("total_tokens_reminder")
        .cloned()
        .unwrap_or_else(|| Value::from("off"));
    if !reminder.is_null()
        && let Value::Object(o) = &mut user_settings
    {
        o.entry("totalTokensReminder").or_insert(reminder);
    }
    if user_settings.as_object().is_some_and(|o| !o.is_empty()) {
        std::fs::create_dir_all(subs.home.join(".claude"))?;
        std::fs::write(
            subs.home.join(".claude/settings.json"),
            serde_json::to_string_pretty(&user_settings)?,
        )?;
    }
    let tmp = base.join("tmp");
    std::fs::create_dir_all(&tmp)?;

    let script = Arc::new(fake_api::Script::new(
        &subs.apply_value(&raw),
        subs.ws.clone(),
    )?);
    let server = fake_api::Server::start(Arc::clone(&script))?;

    let mut args: Vec<String> = s.cli_args.iter().map(|a| subs.apply(a)).collect();
    if !args
        .iter()
        .any(|a| a == "--session-id" || a == "--resume" || a == "-r")
    {
        let id = s
            .session_id
            .clone()
            .unwrap_or_else(|| scenario::DEFAULT_SESSION_ID.to_owned());
        args.splice(0..0, ["--session-id".to_owned(), id]);
    }
    let model = match raw.get("model") {
        None => Some(DEFAULT_MODEL.to_owned()),
        Some(Value::String(m)) if !m.is_empty() => Some(m.clone()),
        Some(_) => None,
    };
    if let Some(m) = model
        && !args.iter().any(|a| a == "--model")
    {
        args.splice(0..0, ["--model".to_owned(), m]);
    }
    let prompt = raw.get("prompt").and_then(Value::as_str).unwrap_or("go");
    let mut command = vec![
        "-p".to_owned(),
        prompt.to_owned(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
    ];
    command.extend(args);

    let mut env: Vec<(String, String)> = vec![
        // The oracle's PATH, with this build's `toolgate` first, as the conformance runner
        // has it: a scenario's hook `toolgate guard` or MCP server `toolgate mcp` runs it.
        (
            "PATH".into(),
            match scenario::toolgate_dir() {
                Some(dir) => format!("{}:{SYSTEM_PATH}", dir.display()),
                None => SYSTEM_PATH.into(),
            },
        ),
        ("HOME".into(), subs.home.display().to_string()),
        (
            "USER".into(),
            std::env::var("USER").unwrap_or_else(|_| "root".into()),
        ),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
        ("SHELL".into(), "/bin/bash".into()),
        ("TMPDIR".into(), tmp.display().to_string()),
        (
            "ANTHROPIC_BASE_URL".into(),
            format!("http://127.0.0.1:{}", server.port()),
        ),
        ("ANTHROPIC_API_KEY".into(), "dummy".into()),
    ];
    for switch in [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_BUG_COMMAND",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE",
    ] {
        env.push((switch.into(), "1".into()));
    }
    for (k, v) in &s.env {
        env.retain(|(key, _)| key != k);
        env.push((k.clone(), subs.apply(v)));
    }

    let timeout = Duration::from_secs_f64(
        raw.get("timeout_s")
            .and_then(Value::as_f64)
            .unwrap_or(120.0)
            .max(1.0),
    );
    let started = Instant::now();
    let mut child = {
        use std::os::unix::process::CommandExt as _;
        Command::new(claude)
            .args(&command)
            .current_dir(&subs.ws)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", claude.display()))?
    };
    let pid = child.id();
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            timed_out = true;
            kill_group(pid);
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    // What the CLI left running (a background command) may hold the pipes open.
    let workspace_after = scenario::snapshot_workspace(&subs.ws, &subs);
    kill_group(pid);
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    drop(server);

    let log = script.log();
    if let Some(dir) = std::env::var_os(RAW_DIR) {
        // Raw logs hold the CLI's system prompt and tool descriptions: kept apart, never committed.
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir)?;
        let lines: Vec<String> = log.iter().map(Value::to_string).collect();
        std::fs::write(
            dir.join(format!("{}.requests.jsonl", s.name)),
            lines.join("\n") + "\n",
        )?;
        std::fs::write(dir.join(format!("{}.stdout.jsonl", s.name)), &out)?;
        std::fs::write(dir.join(format!("{}.stderr.txt", s.name)), &err)?;
    }
    let before_applied: Vec<Value> = log
        .iter()
        .filter(|e| e["kind"] == "before_turn")
        .map(|e| json!({"turn_index": e["turn_index"], "actions": e["actions"], "results": e["results"]}))
        .collect();
    let requests: Vec<&Value> = log.iter().filter(|e| e["kind"] != "before_turn").collect();
    let rows: Vec<Value> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!({"unparsed": l})))
        .collect();
    let mut tool_results = tool_results(&requests);
    let (meta, final_row) = stream_meta(&rows);
    for tr in &mut tool_results {
        if let Some(m) = tr["tool_use_id"].as_str().and_then(|id| meta.get(id)) {
            tr["cli_meta"] = m.clone();
        }
    }
    let models: BTreeSet<&str> = requests
        .iter()
        .filter_map(|r| r.pointer("/body/model").and_then(Value::as_str))
        .collect();
    let tools_offered: Vec<Value> = requests
        .iter()
        .find(|r| r["kind"] == "main")
        .and_then(|r| r.pointer("/body/tools").and_then(Value::as_array))
        .map(|t| t.iter().map(|t| t["name"].clone()).collect())
        .unwrap_or_default();
    let err_text = String::from_utf8_lossy(&err);
    let tail: String = {
        let chars: Vec<char> = err_text.chars().collect();
        chars[chars.len().saturating_sub(2000)..].iter().collect()
    };
    let mut record = json!({
        "scenario": s.name,
        "description": s.description,
        "claude_version": version_of(claude).unwrap_or_default(),
        "command": std::iter::once("claude".to_owned()).chain(command).collect::<Vec<_>>(),
        "workspace_trusted": s.trust_workspace.unwrap_or(true),
        "user_settings": user_settings,
        "models_sent": models.into_iter().collect::<Vec<_>>(),
        "exit_code": status.code(),
        "timed_out": timed_out,
        "tools_offered": tools_offered,
        "requests": requests.iter().map(|r| json!({
            "seq": r["seq"], "method": r["method"], "path": r["path"], "kind": r.get("kind").cloned().unwrap_or(Value::Null),
            "turn_index": r.get("turn_index").cloned().unwrap_or(Value::Null),
            "model": r.pointer("/body/model").cloned().unwrap_or(Value::Null),
        })).collect::<Vec<_>>(),
        "tool_results": tool_results,
        "extra_user_blocks": extra_user_blocks(&requests),
    });
    if !before_applied.is_empty() {
        record["before_turn_applied"] = Value::Array(before_applied);
    }
    record["final"] = final_row;
    record["stream_events"] = Value::Array(
        rows.iter()
            .filter(|r| r["type"] == "system" && r["subtype"] != "init")
            .map(|r| {
                let mut r = r.clone();
                if let Value::Object(o) = &mut r {
                    o.remove("uuid");
                    o.remove("session_id");
                }
                r
            })
            .collect(),
    );
    let mut record = subs.unapply_value(&record);
    record["workspace_after"] = serde_json::to_value(workspace_after)?;
    record["elapsed_s"] = json!(elapsed);
    record["stderr_tail"] = Value::from(subs.unapply(&tail));
    Ok(record)
}

/// The `tool_result` blocks of main-loop requests, in order of first appearance.
fn tool_results(requests: &[&Value]) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    let mut names = Map::new();
    let mut out = Vec::new();
    for r in requests.iter().filter(|r| r["kind"] == "main") {
        for m in r
            .pointer("/body/messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(blocks) = m.get("content").and_then(Value::as_array) else {
                continue;
            };
            for b in blocks {
                if m["role"] == "assistant" && b["type"] == "tool_use" {
                    if let Some(id) = b["id"].as_str() {
                        names.insert(id.to_owned(), b["name"].clone());
                    }
                } else if m["role"] == "user" && b["type"] == "tool_result" {
                    let id = b["tool_use_id"].as_str().unwrap_or_default().to_owned();
                    if !seen.insert(id.clone()) {
                        continue;
                    }
                    out.push(json!({
                        "tool_use_id": id,
                        "tool_name": names.get(&id).cloned().unwrap_or(Value::Null),
                        "is_error": b["is_error"].as_bool().unwrap_or(false),
                        "content": b.get("content").cloned().unwrap_or(Value::Null),
                        "request_seq": r["seq"],
                    }));
                }
            }
        }
    }
    out
}

/// Blocks other than `tool_result` in user messages after the first assistant message, in
/// order of first appearance.
fn extra_user_blocks(requests: &[&Value]) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in requests.iter().filter(|r| r["kind"] == "main") {
        let Some(messages) = r.pointer("/body/messages").and_then(Value::as_array) else {
            continue;
        };
        let Some(first) = messages.iter().position(|m| m["role"] == "assistant") else {
            continue;
        };
        for (i, m) in messages.iter().enumerate().skip(first + 1) {
            if m["role"] != "user" {
                continue;
            }
            let blocks = match &m["content"] {
                Value::String(t) => vec![json!({"type": "text", "text": t})],
                Value::Array(b) => b.clone(),
                _ => Vec::new(),
            };
            for b in blocks {
                if !b.is_object() || b["type"] == "tool_result" {
                    continue;
                }
                if !seen.insert((i, sorted_key(&b))) {
                    continue;
                }
                let mut row =
                    json!({"message_index": i, "request_seq": r["seq"], "type": b["type"]});
                if b["type"] == "text" {
                    row["text"] = b["text"].clone();
                } else {
                    row["block"] = b;
                }
                out.push(row);
            }
        }
    }
    out
}

/// A value's text with object keys sorted (to tell equal blocks apart from others).
fn sorted_key(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&o[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Per `tool_use_id` permission metadata, and the final `result` row.
fn stream_meta(rows: &[Value]) -> (Map<String, Value>, Value) {
    let mut meta = Map::new();
    let mut last = Value::Null;
    for row in rows {
        if row["type"] == "user" {
            for m in row["tool_result_meta"].as_array().into_iter().flatten() {
                if let Some(id) = m["id"].as_str() {
                    let mut m = m.clone();
                    if let Value::Object(o) = &mut m {
                        o.remove("id");
                    }
                    meta.insert(id.to_owned(), m);
                }
            }
        }
        if row["type"] == "result" {
            let mut f = Map::new();
            for k in [
                "subtype",
                "is_error",
                "result",
                "stop_reason",
                "num_turns",
                "permission_denials",
            ] {
                if let Some(v) = row.get(k) {
                    f.insert(k.into(), v.clone());
                }
            }
            last = Value::Object(f);
        }
    }
    (meta, last)
}

/// How a fresh record differs from a committed one where the model or the user can see it:
/// the tool results (by id), the workspace after the run, and the other user blocks (when the
/// committed record has them). Empty when they agree.
pub(crate) fn differences(new: &Value, old: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let results = |r: &Value| -> std::collections::BTreeMap<String, Value> {
        r["tool_results"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                    json!({"is_error": t["is_error"], "content": task_ids(&t["content"])}),
                )
            })
            .collect()
    };
    let (a, b) = (results(old), results(new));
    for id in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
        if a.get(id) != b.get(id) {
            out.push(format!(
                "tool result {id}:\n    recorded: {}\n    now:      {}",
                clip(a.get(id)),
                clip(b.get(id))
            ));
        }
    }
    let files = |r: &Value| {
        r["workspace_after"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    let (a, b) = (files(old), files(new));
    for f in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
        if a.get(f) != b.get(f) {
            out.push(format!(
                "workspace_after {f}:\n    recorded: {}\n    now:      {}",
                clip(a.get(f)),
                clip(b.get(f))
            ));
        }
    }
    if let Some(old_blocks) = old.get("extra_user_blocks") {
        let strip = |v: &Value| -> Vec<Value> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    let mut r = task_ids(r);
                    if let Value::Object(o) = &mut r {
                        o.remove("request_seq");
                    }
                    r
                })
                .collect()
        };
        let (a, b) = (strip(old_blocks), strip(&new["extra_user_blocks"]));
        if a != b {
            out.push(format!(
                "extra_user_blocks:\n    recorded: {}\n    now:      {}",
                clip(Some(&Value::Array(a))),
                clip(Some(&Value::Array(b)))
            ));
        }
    }
    out
}

/// Background task ids (random per run) as `{{TASK_ID}}`.
fn task_ids(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(toolgate::scenario::normalise_task_ids(s)),
        Value::Array(a) => Value::Array(a.iter().map(task_ids).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), task_ids(v))).collect())
        }
        other => other.clone(),
    }
}

fn clip(v: Option<&Value>) -> String {
    let text = v.map_or_else(|| "(none)".to_owned(), Value::to_string);
    match text.char_indices().nth(400) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Where a scenario's record goes: `--results-dir`, or `results/` beside the `scenarios/`
/// folder it is in.
fn result_path(scenario_file: &Path, results_dir: Option<&Path>) -> Option<PathBuf> {
    let file = format!("{}.json", scenario_file.file_stem()?.to_string_lossy());
    match results_dir {
        Some(d) => Some(d.join(file)),
        None => {
            let dir = scenario_file.parent()?;
            (dir.file_name()? == "scenarios")
                .then(|| dir.parent().map(|p| p.join("results").join(file)))?
        }
    }
}

/// `cargo xtask record`: record each scenario; write its record where it belongs unless it
/// says what the committed one says; with `check`, only compare. Returns how many differ from
/// their committed record (with `check`, a missing record counts).
pub(crate) fn run(
    scenarios: &[PathBuf],
    results_dir: Option<&Path>,
    check: bool,
    claude: Option<&Path>,
    jobs: usize,
) -> anyhow::Result<usize> {
    // A folder stands for the scenarios in it.
    let mut files = Vec::new();
    for s in scenarios {
        if s.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(s)
                .with_context(|| format!("reading {}", s.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(s.clone());
        }
    }
    let scenarios = files.as_slice();
    if scenarios.is_empty() {
        bail!("name at least one scenario file (or a folder of them)");
    }
    let claude = match claude {
        Some(c) => c.to_path_buf(),
        None => install()?,
    };
    let jobs = jobs.clamp(1, scenarios.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(file) = scenarios.get(i) else { break };
                    let outcome = record_one(file, results_dir, check, &claude);
                    if let Ok(mut o) = outcomes.lock() {
                        o.push((i, outcome));
                    }
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|(i, _)| *i);
    let mut differing = 0;
    let mut failed = 0;
    for (_, outcome) in outcomes {
        match outcome {
            Ok(Outcome { line, differs }) => {
                println!("{line}");
                differing += usize::from(differs);
            }
            Err(e) => {
                println!("{e:#}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} scenarios could not be recorded",
            scenarios.len()
        );
    }
    Ok(differing)
}

struct Outcome {
    line: String,
    differs: bool,
}

fn record_one(
    file: &Path,
    results_dir: Option<&Path>,
    check: bool,
    claude: &Path,
) -> anyhow::Result<Outcome> {
    let name = file
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let record = record(file, claude)?;
    let status = format!(
        "{name}: Claude Code exited {} after {} s{}",
        record["exit_code"],
        record["elapsed_s"],
        if record["timed_out"] == true {
            " (timed out)"
        } else {
            ""
        }
    );
    let target = result_path(file, results_dir);
    let old: Option<Value> = target
        .as_ref()
        .and_then(|t| std::fs::read_to_string(t).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    let Some(target) = target else {
        let shown: Vec<Value> = record["tool_results"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| json!({"tool_use_id": t["tool_use_id"], "tool_name": t["tool_name"], "is_error": t["is_error"], "content": t["content"]}))
            .collect();
        return Ok(Outcome {
            line: format!("{status}\n{}", serde_json::to_string_pretty(&shown)?),
            differs: false,
        });
    };
    let shown_target = target
        .strip_prefix(crate::workspace_root())
        .unwrap_or(&target)
        .display()
        .to_string();
    match old {
        Some(old) => {
            let diffs = differences(&record, &old);
            if diffs.is_empty() {
                Ok(Outcome {
                    line: format!("{status}; the same as {shown_target}"),
                    differs: false,
                })
            } else {
                if !check {
                    write_record(&target, &record)?;
                }
                let verb = if check { "differs from" } else { "rewrote" };
                Ok(Outcome {
                    line: format!("{status}; {verb} {shown_target}:\n  {}", diffs.join("\n  ")),
                    differs: true,
                })
            }
        }
        None if check => Ok(Outcome {
            line: format!("{status}; no committed record at {shown_target}"),
            differs: true,
        }),
        None => {
            write_record(&target, &record)?;
            Ok(Outcome {
                line: format!("{status}; recorded in {shown_target}"),
                differs: false,
            })
        }
    }
}

fn write_record(target: &Path, record: &Value) -> anyhow::Result<()> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = target.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(record)? + "\n")?;
    std::fs::rename(&tmp, target)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_extra_blocks_come_in_order_of_first_appearance() {
        let turn1 = json!({"seq": 1, "kind": "main", "body": {"messages": [{"role": "user", "content": "go"}]}});
        let turn2 = json!({"seq": 3, "kind": "main", "body": {"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "b", "name": "Read"}, {"type": "tool_use", "id": "a", "name": "Bash"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "b", "content": "x", "is_error": true},
                {"type": "tool_result", "tool_use_id": "a", "content": "y"},
                {"type": "text", "text": "reminder"}]}]}});
        let mut turn3 = turn2.clone();
        turn3["seq"] = json!(5);
        let side = json!({"seq": 4, "kind": "side", "body": {"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "z"}]}]}});
        let requests = [&turn1, &turn2, &side, &turn3];
        let results = tool_results(&requests);
        let ids: Vec<&str> = results
            .iter()
            .filter_map(|r| r["tool_use_id"].as_str())
            .collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(results[0]["tool_name"], "Read");
        assert_eq!(results[0]["is_error"], true);
        assert_eq!(results[1]["is_error"], false);
        assert_eq!(results[1]["request_seq"], 3);
        let extra = extra_user_blocks(&requests);
        assert_eq!(extra.len(), 1, "{extra:?}");
        assert_eq!(extra[0]["text"], "reminder");
        assert_eq!(extra[0]["message_index"], 2);
    }

    #[test]
    fn differences_compare_by_id_and_ignore_what_the_model_does_not_see() {
        let old = json!({"tool_results": [
            {"tool_use_id": "a", "is_error": false, "content": "1", "request_seq": 2},
            {"tool_use_id": "b", "is_error": false, "content": "2"}],
            "workspace_after": {"f": "x"}, "elapsed_s": 1.0});
        let mut same = json!({"tool_results": [
            {"tool_use_id": "b", "is_error": false, "content": "2"},
            {"tool_use_id": "a", "is_error": false, "content": "1", "request_seq": 9}],
            "workspace_after": {"f": "x"}, "elapsed_s": 3.0, "extra_user_blocks": [{"text": "t"}]});
        assert!(differences(&same, &old).is_empty());
        same["tool_results"][0]["is_error"] = json!(true);
        same["workspace_after"]["g"] = json!("new");
        let d = differences(&same, &old);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("tool result b") && d[1].starts_with("workspace_after g"));
        // Extra blocks count once the committed record has them.
        let mut old2 = old.clone();
        old2["extra_user_blocks"] = json!([]);
        let mut new2 = old.clone();
        new2["extra_user_blocks"] = json!([{"text": "t", "request_seq": 4}]);
        assert_eq!(differences(&new2, &old2).len(), 1);
    }

    #[test]
    fn records_go_beside_the_scenarios_folder() {
        let p = result_path(Path::new("tests/conformance/scenarios/a.json"), None);
        assert_eq!(p, Some(PathBuf::from("tests/conformance/results/a.json")));
        assert_eq!(result_path(Path::new("/tmp/x/a.json"), None), None);
        assert_eq!(
            result_path(Path::new("/tmp/x/a.json"), Some(Path::new("/r"))),
            Some(PathBuf::from("/r/a.json"))
        );
    }
}
