//! Oracle scenarios: the JSON format `../shared/oracle` records (fixture, settings, CLI
//! arguments, turns, `before_turn` actions), laid out and run against a toolgate
//! [`Session`] exactly as the oracle lays out and runs Claude Code, so the recorded
//! `tool_result` texts and workspaces compare byte for byte.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use tool_core::{PermissionMode, ToolContext, ToolResult, ToolUse};
use tool_orchestrator::Session;
use tool_permissions::{Layer, PolicyBuilder};

/// The session id the oracle passes to Claude Code.
pub const DEFAULT_SESSION_ID: &str = "00000000-0000-4000-8000-000000000001";

/// Tools Claude Code has that this version of toolgate does not implement yet. A scenario
/// that calls one is reported unsupported rather than failed.
/// The tools Claude Code 2.1.332 has beyond the built-in ones here (its tool list as recorded
/// in tests/guard-e2e/claude-code-tools.json, and the ones it leaves out by default).
const CLAUDE_CODE_OTHER_TOOLS: &[&str] = &[
    "Agent",
    "ListAgents",
    "ReportFindings",
    "ScheduleWakeup",
    "Skill",
    "ToolSearch",
    "Workflow",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "NotebookEdit",
    "SendMessage",
    "TaskStop",
    "WebFetch",
    "WebSearch",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TodoWrite",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "BashOutput",
    "TaskOutput",
    "LSP",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "MultiEdit",
    "LS",
];

const NOT_YET_IMPLEMENTED: &[&str] = &[
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "Agent",
    "Task",
    "TodoWrite",
    "TaskCreate",
    "TaskUpdate",
    "TaskStop",
    "KillShell",
    "AskUserQuestion",
    "ExitPlanMode",
    "Skill",
    "ToolSearch",
    "LSP",
];

/// Errors of scenario handling.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario file could not be read or parsed.
    #[error("{}: {message}", .file.display())]
    Load {
        /// The file.
        file: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Laying out or changing the workspace failed.
    #[error("workspace: {0}")]
    Workspace(String),
}

/// A scenario, with `{{WORKSPACE}}` and `{{HOME}}` still unsubstituted.
#[derive(Debug, Clone, Deserialize)]
pub struct Scenario {
    /// Its name (defaults to the file stem).
    #[serde(default)]
    pub name: String,
    /// What it shows.
    #[serde(default)]
    pub description: String,
    /// Files and directories of the workspace.
    #[serde(default)]
    pub fixture: Option<Value>,
    /// Files and directories of the fresh home.
    #[serde(default)]
    pub home_fixture: Option<Value>,
    /// The project's `.claude/settings.json`.
    #[serde(default)]
    pub settings: Option<Value>,
    /// The user's `~/.claude/settings.json`.
    #[serde(default)]
    pub user_settings: Option<Value>,
    /// Extra CLI arguments.
    #[serde(default)]
    pub cli_args: Vec<String>,
    /// Extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The assistant turns.
    #[serde(default)]
    pub turns: Vec<Value>,
    /// Whether the workspace is trusted (default true).
    #[serde(default)]
    pub trust_workspace: Option<bool>,
    /// Set when the scenario tests Claude Code's own configuration, not the tool layer.
    #[serde(default)]
    pub not_applicable: Option<String>,
    /// Recorded as root, whom file modes do not bind (a `chmod 444` file is still written):
    /// run by another user, the results differ, so it is skipped there.
    #[serde(default)]
    pub recorded_as_root: bool,
    /// The session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The `input_tokens` the scripted model reports in every answer.
    #[serde(default)]
    pub usage_input_tokens: Option<u64>,
}

impl Scenario {
    /// Load a scenario file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = fs::read_to_string(path).map_err(|e| Error::Load {
            file: path.into(),
            message: e.to_string(),
        })?;
        let mut s: Scenario = serde_json::from_str(&text).map_err(|e| Error::Load {
            file: path.into(),
            message: format!("line {} column {}: {e}", e.line(), e.column()),
        })?;
        if s.name.is_empty() {
            s.name = path
                .file_stem()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(s)
    }

    /// The scenario's turns: each a list of tool_use blocks and the actions to apply before it.
    pub fn parsed_turns(&self, subs: &Subs) -> Result<Vec<Turn>, String> {
        self.turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (blocks, before) = crate::transcript::turn_parts(&subs.apply_value(t))
                    .ok_or_else(|| format!("turn {i} is neither a list nor an object"))?;
                let calls =
                    crate::transcript::tool_uses(blocks).map_err(|e| format!("turn {i}: {e}"))?;
                Ok(Turn { calls, before })
            })
            .collect()
    }

    /// Why this scenario cannot run yet (a tool, a rule kind, hooks, a CLI argument), if so.
    pub fn unsupported(&self) -> Option<String> {
        let mut args = self.cli_args.iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "--tools" | "--mcp-config" => {
                    args.next();
                }
                "--strict-mcp-config" => {}
                "--permission-mode" => {
                    if args
                        .next()
                        .and_then(|m| m.parse::<PermissionMode>().ok())
                        .is_none()
                    {
                        return Some("a --permission-mode this engine does not know".into());
                    }
                }
                other => return Some(format!("CLI argument `{other}`")),
            }
        }
        for t in &self.turns {
            let blocks = crate::transcript::turn_parts(t)
                .map(|(b, _)| b)
                .unwrap_or_default();
            for b in blocks {
                // A tool this engine lacks matters only where it is offered: one left out of
                // `--tools` gets Claude Code's not-offered text, which this engine gives.
                let offered = |name: &str| {
                    self.offered_tools()
                        .is_none_or(|tools| tools.iter().any(|t| t == name))
                };
                if let Some(name) = b.get("name").and_then(Value::as_str)
                    && NOT_YET_IMPLEMENTED.contains(&name)
                    && offered(name)
                {
                    return Some(format!("tool {name}"));
                }
            }
        }
        None
    }

    /// The mode given with `--permission-mode` (it beats the settings' `defaultMode`).
    fn cli_permission_mode(&self) -> Option<PermissionMode> {
        let i = self
            .cli_args
            .iter()
            .position(|a| a == "--permission-mode")?;
        self.cli_args.get(i + 1)?.parse().ok()
    }

    fn offered_tools(&self) -> Option<Vec<String>> {
        let i = self.cli_args.iter().position(|a| a == "--tools")?;
        self.cli_args.get(i + 1).map(|list| {
            list.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
    }
}

/// One turn: actions on the workspace, then calls.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The calls, in block order.
    pub calls: Vec<ToolUse>,
    /// `before_turn` actions.
    pub before: Vec<Value>,
}

/// Placeholder substitutions, both ways.
#[derive(Debug, Clone)]
pub struct Subs {
    /// The temporary base directory.
    pub base: PathBuf,
    /// The workspace.
    pub ws: PathBuf,
    /// The fresh home.
    pub home: PathBuf,
}

/// Claude Code's per-project folder name: the path with every character that is not an
/// ASCII letter or digit turned into `-`.
pub fn project_slug(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

impl Subs {
    fn pairs(&self) -> Vec<(String, &'static str)> {
        vec![
            (self.ws.display().to_string(), "{{WORKSPACE}}"),
            (self.home.display().to_string(), "{{HOME}}"),
            (self.base.display().to_string(), "{{BASE}}"),
            (project_slug(&self.ws), "{{WORKSPACE_SLUG}}"),
        ]
    }

    /// Put real paths in place of `{{WORKSPACE}}` and `{{HOME}}`.
    pub fn apply(&self, s: &str) -> String {
        s.replace("{{WORKSPACE}}", &self.ws.display().to_string())
            .replace("{{HOME}}", &self.home.display().to_string())
    }

    /// [`apply`](Self::apply) to every string in a value.
    pub fn apply_value(&self, v: &Value) -> Value {
        map_strings(v, &|s| self.apply(s))
    }

    /// Put placeholders in place of real paths (and of the random names of persisted
    /// results), as the oracle does in what it records.
    pub fn unapply(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for (real, ph) in self.pairs() {
            out = out.replace(&real, ph);
        }
        tool_result_ids()
            .replace_all(&out, "${1}{{TOOL_RESULT_ID}}${2}")
            .into_owned()
    }

    /// [`unapply`](Self::unapply) to every string in a value.
    pub fn unapply_value(&self, v: &Value) -> Value {
        map_strings(v, &|s| self.unapply(s))
    }
}

/// Replace background task ids (random per run, and not normalised by the oracle) with
/// `{{TASK_ID}}`, on both sides of a comparison.
pub fn normalise_task_ids(s: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(ID: |tasks/|<task-id>)b[a-z0-9]{8}\b")
            .unwrap_or_else(|_| unreachable!())
    });
    re.replace_all(s, "${1}{{TASK_ID}}").into_owned()
}

fn tool_result_ids() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(/tool-results/)[A-Za-z0-9_-]+(\.[A-Za-z0-9]+)")
            .unwrap_or_else(|_| unreachable!())
    })
}

fn map_strings(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), map_strings(x, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A laid-out scenario: `<tmp>/oracle-<name>-<8 chars>/{ws,home}`, removed on drop.
#[derive(Debug)]
pub struct Layout {
    dir: tempfile::TempDir,
    /// Substitutions for this layout.
    pub subs: Subs,
}

impl Layout {
    /// The base directory.
    pub fn base(&self) -> &Path {
        self.dir.path()
    }
}

/// Lay out a scenario's workspace and home as the oracle does (also under `/tmp`, so paths
/// quoted in texts have the same length), with its settings files.
pub fn lay_out(s: &Scenario) -> Result<Layout, Error> {
    let tmp = if Path::new("/tmp").is_dir() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    let dir = tempfile::Builder::new()
        .prefix(&format!("oracle-{}-", s.name))
        .rand_bytes(8)
        .tempdir_in(&tmp)
        .map_err(|e| Error::Workspace(e.to_string()))?;
    let base = fs::canonicalize(dir.path()).map_err(|e| Error::Workspace(e.to_string()))?;
    let subs = Subs {
        ws: base.join("ws"),
        home: base.join("home"),
        base: base.clone(),
    };
    let w = |e: std::io::Error| Error::Workspace(e.to_string());
    fs::create_dir_all(&subs.ws).map_err(w)?;
    fs::create_dir_all(&subs.home).map_err(w)?;
    if let Some(f) = &s.fixture {
        build_fixture(&subs.ws, f, &subs)?;
    }
    if let Some(f) = &s.home_fixture {
        build_fixture(&subs.home, f, &subs)?;
    }
    if let Some(settings) = &s.settings {
        fs::create_dir_all(subs.ws.join(".claude")).map_err(w)?;
        let text = serde_json::to_string_pretty(&subs.apply_value(settings))
            .map_err(|e| Error::Workspace(e.to_string()))?;
        fs::write(subs.ws.join(".claude/settings.json"), text).map_err(w)?;
    }
    if let Some(settings) = &s.user_settings {
        fs::create_dir_all(subs.home.join(".claude")).map_err(w)?;
        let text = serde_json::to_string_pretty(&subs.apply_value(settings))
            .map_err(|e| Error::Workspace(e.to_string()))?;
        fs::write(subs.home.join(".claude/settings.json"), text).map_err(w)?;
    }
    // As the oracle does: Claude Code trusts the workspace (what `toolgate guard` reads).
    if s.trust_workspace.unwrap_or(true) {
        let trusted = serde_json::json!({"projects": {subs.ws.to_string_lossy(): {"hasTrustDialogAccepted": true}}});
        fs::write(subs.home.join(".claude.json"), trusted.to_string()).map_err(w)?;
    }
    Ok(Layout { dir, subs })
}

fn build_fixture(root: &Path, fixture: &Value, subs: &Subs) -> Result<(), Error> {
    let w = |e: std::io::Error| Error::Workspace(e.to_string());
    for d in fixture
        .get("dirs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(d) = d.as_str() {
            fs::create_dir_all(root.join(d)).map_err(w)?;
        }
    }
    for (rel, spec) in fixture
        .get("files")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(w)?;
        }
        let spec = match spec {
            Value::String(s) => serde_json::json!({"content": s}),
            other => other.clone(),
        };
        if let Some(target) = spec.get("symlink").and_then(Value::as_str) {
            std::os::unix::fs::symlink(subs.apply(target), &p).map_err(w)?;
            continue;
        }
        let n = spec.get("repeat").and_then(Value::as_u64).unwrap_or(1) as usize;
        let bytes: Vec<u8> = match spec.get("content_b64").and_then(Value::as_str) {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| Error::Workspace(format!("{rel}: {e}")))?,
            None => subs
                .apply(spec.get("content").and_then(Value::as_str).unwrap_or(""))
                .into_bytes(),
        };
        fs::write(&p, bytes.repeat(n)).map_err(w)?;
        if let Some(mode) = spec.get("mode").and_then(Value::as_str) {
            set_mode(&p, mode)?;
        }
        if let Some(t) = spec.get("mtime").and_then(Value::as_f64) {
            set_mtime(&p, UNIX_EPOCH + Duration::from_secs_f64(t))?;
        }
    }
    Ok(())
}

fn set_mode(p: &Path, mode: &str) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let m =
        u32::from_str_radix(mode, 8).map_err(|e| Error::Workspace(format!("mode {mode}: {e}")))?;
    fs::set_permissions(p, fs::Permissions::from_mode(m))
        .map_err(|e| Error::Workspace(e.to_string()))
}

fn set_mtime(p: &Path, t: SystemTime) -> Result<(), Error> {
    let f = fs::File::options()
        .read(true)
        .open(p)
        .or_else(|_| fs::File::open(p))
        .map_err(|e| Error::Workspace(e.to_string()))?;
    f.set_times(fs::FileTimes::new().set_accessed(t).set_modified(t))
        .map_err(|e| Error::Workspace(e.to_string()))
}

/// Apply one `before_turn` action inside the workspace.
pub fn apply_action(ws: &Path, action: &Value) -> Result<(), Error> {
    let op = action.get("op").and_then(Value::as_str).unwrap_or("");
    let rel = action
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Workspace("before_turn action without a path".into()))?;
    let p = tool_core::normalize(&ws.join(rel));
    if !p.starts_with(ws) {
        return Err(Error::Workspace(format!(
            "before_turn path {rel} leaves the workspace"
        )));
    }
    let w = |e: std::io::Error| Error::Workspace(format!("{op} {rel}: {e}"));
    let content = || -> Result<Vec<u8>, Error> {
        match action.get("content_b64").and_then(Value::as_str) {
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| Error::Workspace(e.to_string())),
            None => Ok(action
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .as_bytes()
                .to_vec()),
        }
    };
    if matches!(op, "write" | "append" | "touch")
        && let Some(parent) = p.parent()
    {
        fs::create_dir_all(parent).map_err(w)?;
    }
    match op {
        "write" => fs::write(&p, content()?).map_err(w)?,
        "append" => {
            use std::io::Write;
            let data = content()?;
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .and_then(|mut f| f.write_all(&data))
                .map_err(w)?;
        }
        "touch" => {
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .map_err(w)?;
            set_mtime(&p, SystemTime::now())?;
        }
        "chmod" => set_mode(
            &p,
            action.get("mode").and_then(Value::as_str).unwrap_or("644"),
        )?,
        "symlink" => {
            let _ = fs::remove_file(&p);
            std::os::unix::fs::symlink(
                action.get("target").and_then(Value::as_str).unwrap_or(""),
                &p,
            )
            .map_err(w)?;
        }
        "mkdir" => fs::create_dir_all(&p).map_err(w)?,
        "delete" => {
            // Nothing to delete is no error (the reference harness's rule).
            let Ok(meta) = fs::symlink_metadata(&p) else {
                return Ok(());
            };
            if meta.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            }
            .map_err(w)?;
        }
        other => {
            return Err(Error::Workspace(format!(
                "unknown before_turn op `{other}`"
            )));
        }
    }
    if op != "delete" && op != "symlink" {
        if let Some(bump) = action.get("mtime_bump").and_then(Value::as_f64) {
            let old = fs::metadata(&p)
                .and_then(|m| m.modified())
                .unwrap_or(UNIX_EPOCH);
            let base = old.max(SystemTime::now());
            set_mtime(&p, base + Duration::from_secs_f64(bump))?;
        } else if let Some(t) = action.get("mtime").and_then(Value::as_f64) {
            set_mtime(&p, UNIX_EPOCH + Duration::from_secs_f64(t))?;
        }
    }
    Ok(())
}

/// The workspace as the oracle snapshots it: every file but the top-level `.claude`, text as
/// is (first 64 KiB), other files as `<N bytes, not shown>`, symlinks as `<symlink -> T>`,
/// hook inputs' per-run values normalised.
pub fn snapshot_workspace(ws: &Path, subs: &Subs) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(ws, ws, &mut out);
    let prompt = regex::Regex::new(r#""prompt_id":"[0-9a-fA-F-]{36}""#).ok();
    let duration = regex::Regex::new(r#""duration_ms":\d+"#).ok();
    // Glob's `tool_response` in a PostToolUse hook's input carries its own measured time.
    let glob_duration = regex::Regex::new(r#""durationMs":\d+"#).ok();
    // A background command's id is random.
    let task = regex::Regex::new(r#""backgroundTaskId":"b[a-z0-9]{8}""#).ok();
    for v in out.values_mut() {
        let mut s = subs.unapply(v);
        if let Some(re) = &prompt {
            s = re
                .replace_all(&s, r#""prompt_id":"{{PROMPT_ID}}""#)
                .into_owned();
        }
        if let Some(re) = &duration {
            s = re
                .replace_all(&s, r#""duration_ms":{{DURATION_MS}}"#)
                .into_owned();
        }
        if let Some(re) = &task {
            s = re
                .replace_all(&s, r#""backgroundTaskId":"{{TASK_ID}}""#)
                .into_owned();
        }
        if let Some(re) = &glob_duration {
            s = re
                .replace_all(&s, r#""durationMs":{{DURATION_MS}}"#)
                .into_owned();
        }
        *v = s;
    }
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .map(|r| r.display().to_string())
            .unwrap_or_default();
        if dir == root && rel == ".claude" {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&p)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            out.insert(rel, format!("<symlink -> {target}>"));
        } else if meta.is_dir() {
            walk(root, &p, out);
        } else if !meta.is_file() {
            // A FIFO, socket or device: opening it could block or have effects.
            out.insert(rel, "<special file, not shown>".to_owned());
        } else {
            let data = fs::read(&p).unwrap_or_default();
            let head = &data[..data.len().min(65536)];
            let text = match std::str::from_utf8(head) {
                Ok(s) => s.to_owned(),
                Err(_) => format!("<{} bytes, not shown>", meta.len()),
            };
            out.insert(rel, text);
        }
    }
}

/// Why a scenario could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// It needs something this version does not support (a rule kind, ...).
    Unsupported(String),
    /// It is broken, or running it failed.
    Failed(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Unsupported(what) => write!(f, "unsupported: {what}"),
            RunError::Failed(why) => f.write_str(why),
        }
    }
}

fn setup_error(e: tool_permissions::Error) -> RunError {
    match e {
        tool_permissions::Error::UnsupportedRule { rule, .. } => {
            RunError::Unsupported(format!("permission rule `{rule}`"))
        }
        other => RunError::Failed(other.to_string()),
    }
}

/// What running a scenario produced.
#[derive(Debug)]
pub struct Run {
    /// Each call's tool name and result, in the order they ran.
    pub results: Vec<(String, ToolResult)>,
    /// The other blocks of the user messages (hook context, reminders), placeholders restored.
    pub extra_blocks: Vec<Value>,
    /// The workspace afterwards.
    pub workspace_after: BTreeMap<String, String>,
}

/// Build the session a scenario runs in: policy from its settings files (the workspace
/// trusted unless it says otherwise), the offered tools from `--tools`, hooks' and spilled
/// results' paths laid out as Claude Code lays them out under the scenario's home.
pub fn session_for(s: &Scenario, subs: &Subs) -> Result<Session, RunError> {
    session_with(s, subs, Vec::new())
}

/// The MCP servers the scenario gives Claude Code, started in the workspace with the
/// session's `PATH`; their tools. Those of `--mcp-config` (a file or JSON text), then those of
/// the workspace's `.mcp.json` unless `--strict-mcp-config` is given: Claude Code 2.1.332 in
/// `-p` mode starts the project's servers whether or not the workspace is trusted (recorded:
/// mc_project_mcp_json, mc_project_mcp_json_untrusted); a name given twice is started once.
async fn mcp_tools(
    s: &Scenario,
    subs: &Subs,
    path: &str,
) -> Result<Vec<Arc<dyn tool_core::Tool>>, RunError> {
    let mut configs: Vec<(String, PathBuf)> = Vec::new();
    let mut args = s.cli_args.iter();
    while let Some(a) = args.next() {
        if a != "--mcp-config" {
            continue;
        }
        let Some(value) = args.next().map(|v| subs.apply(v)) else {
            continue;
        };
        if value.trim_start().starts_with('{') {
            configs.push((value.clone(), subs.ws.join("--mcp-config")));
        } else {
            let file = subs.ws.join(&value);
            let text = fs::read_to_string(&file)
                .map_err(|e| RunError::Failed(format!("{}: {e}", file.display())))?;
            configs.push((subs.apply(&text), file));
        }
    }
    let project = subs.ws.join(".mcp.json");
    if !s.cli_args.iter().any(|a| a == "--strict-mcp-config")
        && let Ok(text) = fs::read_to_string(&project)
    {
        configs.push((subs.apply(&text), project));
    }
    let mut tools = Vec::new();
    let mut started: Vec<String> = Vec::new();
    for (text, source) in configs {
        let specs = tool_mcp::specs_from_mcp_json(&text, &source)
            .map_err(|e| RunError::Unsupported(e.to_string()))?;
        for mut spec in specs {
            if started.contains(&spec.name) {
                continue;
            }
            started.push(spec.name.clone());
            spec.env
                .entry("PATH".into())
                .or_insert_with(|| path.to_owned());
            spec.env
                .entry("HOME".into())
                .or_insert_with(|| subs.home.display().to_string());
            let server = tool_mcp::ExternalServer::start(spec, &subs.ws)
                .await
                .map_err(|e| RunError::Failed(e.to_string()))?;
            let (found, _notes) = server
                .tools()
                .await
                .map_err(|e| RunError::Failed(e.to_string()))?;
            tools.extend(found);
        }
    }
    Ok(tools)
}

/// [`session_for`] with more tools (an MCP server's) in the registry.
fn session_with(
    s: &Scenario,
    subs: &Subs,
    extra: Vec<Arc<dyn tool_core::Tool>>,
) -> Result<Session, RunError> {
    let session_id = s
        .session_id
        .clone()
        .unwrap_or_else(|| DEFAULT_SESSION_ID.to_owned());
    let slug = project_slug(&subs.ws);
    let results_dir = subs
        .home
        .join(".claude/projects")
        .join(slug)
        .join(&session_id)
        .join("tool-results");
    let mut ctx = ToolContext::new(&subs.ws, &subs.home, results_dir);
    // Shell output goes where Claude Code puts it: $TMPDIR/claude-<uid>/<slug>/<session>/tasks,
    // with the oracle's TMPDIR.
    let tmp = subs.base.join("tmp");
    let uid = std::os::unix::fs::MetadataExt::uid(
        &fs::metadata(&subs.base).map_err(|e| RunError::Failed(e.to_string()))?,
    );
    let slug_dir = project_slug(&subs.ws);
    ctx.task_output_dir = tmp
        .join(format!("claude-{uid}"))
        .join(slug_dir)
        .join(&session_id)
        .join("tasks");
    // Hooks are told the transcript Claude Code would keep, and a prompt id.
    ctx.transcript_path = Some(
        subs.home
            .join(".claude/projects")
            .join(project_slug(&subs.ws))
            .join(format!("{session_id}.jsonl")),
    );
    ctx.prompt_id = Some(uuid::Uuid::new_v4().to_string());
    ctx.session_id = session_id;
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("HOME".into(), subs.home.display().to_string());
    env.insert("PATH".into(), session_path(s, subs));
    for (k, v) in &s.env {
        env.insert(k.clone(), subs.apply(v));
    }
    ctx.env = Arc::new(env);
    ctx.context_tokens_used = Some(s.usage_input_tokens.unwrap_or(1000));

    let mut b = PolicyBuilder::new();
    b.trust_project(s.trust_workspace.unwrap_or(true));
    let claude = |p: &Path| p.join(".claude");
    b.claude_settings_file(
        &claude(&subs.home).join("settings.json"),
        Layer::User,
        &subs.home,
    )
    .map_err(setup_error)?;
    b.claude_settings_file(
        &claude(&subs.ws).join("settings.json"),
        Layer::Project,
        &subs.ws,
    )
    .map_err(setup_error)?;
    b.claude_settings_file(
        &claude(&subs.ws).join("settings.local.json"),
        Layer::Local,
        &subs.ws,
    )
    .map_err(setup_error)?;
    let policy = b.build();
    ctx.permission_mode = s
        .cli_permission_mode()
        .or(policy.default_mode())
        .unwrap_or(PermissionMode::Default);
    ctx.permission_mode_chosen = true;
    ctx.working_dirs
        .extend(policy.additional_directories().iter().cloned());
    let hooks = scenario_hooks(subs, s.trust_workspace.unwrap_or(true))?;
    let mut registry = builtin_tools::registry().map_err(|e| RunError::Failed(e.to_string()))?;
    for t in extra {
        registry
            .register(t)
            .map_err(|e| RunError::Failed(e.to_string()))?;
    }
    // Claude Code's other tools: left out of `--tools`, each gets its not-offered text.
    registry.know_names(CLAUDE_CODE_OTHER_TOOLS.iter().copied());
    let mut builder = Session::builder(registry, ctx)
        .policy(Arc::new(policy))
        .hooks(hooks);
    if let Some(tools) = s.offered_tools() {
        builder = builder.offered_tools(tools);
    }
    Ok(builder.build())
}

/// The `PATH` of a scenario's commands: the oracle's, with the directory of this build's
/// `toolgate` first (so a hook command `toolgate guard`, or an MCP server `toolgate mcp`, runs
/// the build being tested), unless the scenario sets its own.
fn session_path(s: &Scenario, subs: &Subs) -> String {
    if let Some(p) = s.env.get("PATH") {
        return subs.apply(p);
    }
    let system_path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    match toolgate_dir() {
        Some(dir) => format!("{}:{system_path}", dir.display()),
        None => system_path.to_owned(),
    }
}

/// The hooks of a scenario's settings files; the workspace's only when it is trusted.
fn scenario_hooks(subs: &Subs, trusted: bool) -> Result<tool_hooks::Hooks, RunError> {
    let mut loader = tool_hooks::HookLoader::new();
    for (file, needs_trust) in [
        (subs.home.join(".claude/settings.json"), false),
        (subs.ws.join(".claude/settings.json"), true),
        (subs.ws.join(".claude/settings.local.json"), true),
    ] {
        if needs_trust && !trusted {
            continue;
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| RunError::Failed(format!("{}: {e}", file.display())))?;
        loader
            .claude_settings(&v, &file)
            .map_err(|e| RunError::Unsupported(e.to_string()))?;
    }
    let (hooks, _notes) = loader
        .build()
        .map_err(|e| RunError::Failed(e.to_string()))?;
    Ok(hooks)
}

/// Run a laid-out scenario: for each turn, apply its `before_turn` actions, then run its calls.
pub async fn run(s: &Scenario, layout: &Layout) -> Result<Run, RunError> {
    let subs = &layout.subs;
    let turns = s.parsed_turns(subs).map_err(RunError::Failed)?;
    let path = session_path(s, subs);
    let extra = mcp_tools(s, subs, &path).await?;
    let mut session = session_with(s, subs, extra)?;
    let mut results = Vec::new();
    let mut extra_blocks = Vec::new();
    for turn in turns {
        for a in &turn.before {
            // An action that cannot be applied (its file is gone) is skipped, as the reference
            // harness records it and goes on.
            if let Err(e) = apply_action(&subs.ws, a) {
                tracing::debug!(error = %e, "before_turn action not applied");
            }
        }
        let out = session.run_turn(&turn.calls).await;
        // A hook that stopped the turn ends the conversation: Claude Code never sends this
        // turn's results, and the model is not asked for another.
        if out.stop_reason().is_some() {
            break;
        }
        let message = out.user_message();
        for (call, o) in turn.calls.iter().zip(&out.outcomes) {
            results.push((call.name.clone(), o.tool_result()));
        }
        extra_blocks.extend(message.content.iter().filter_map(|c| match c {
            tool_core::UserContent::Block(b) => {
                Some(subs.unapply_value(&serde_json::to_value(b).unwrap_or(Value::Null)))
            }
            tool_core::UserContent::ToolResult(_) => None,
        }));
    }
    Ok(Run {
        results,
        extra_blocks,
        workspace_after: snapshot_workspace(&subs.ws, subs),
    })
}

/// The directory of the `toolgate` program of this build: `TOOLGATE_BIN_DIR` when set, else
/// the directory of the running program or its parent (`target/debug` for `toolgate`, xtask
/// and test binaries in `target/debug/deps`), when a `toolgate` is there.
pub fn toolgate_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLGATE_BIN_DIR") {
        return Some(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .find(|d| d.join("toolgate").is_file())
        .map(Path::to_path_buf)
}
