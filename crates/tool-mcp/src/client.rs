//! External MCP servers as tools: each server a child process spoken to over stdio, each of
//! its tools a [`Tool`] named `mcp__SERVER__TOOL` that joins the registry and so passes the
//! same schema check, hooks and policy as any other.
//!
//! Identity is the (server, tool) pair each [`McpTool`] holds: a call goes to that server's
//! tool by its own name, never by splitting the registry's name again. Server names are
//! checked when they are configured (letters, digits, `-` and `_`; no `__`, no `_` at either
//! end), so `mcp__SERVER__TOOL` names one pair; two tools whose names come out the same are
//! both left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ContentBlock as McpBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;
use tool_core::{
    PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput, ToolResultContent,
};

use crate::Error;

/// An external server to start: `[mcp_servers.NAME]` in a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server's name, as tools are named after it (`mcp__NAME__TOOL`).
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the environment it inherits.
    pub env: BTreeMap<String, String>,
    /// The file that configured it.
    pub source: PathBuf,
    /// Which arguments of which of its tools are paths, checked against Read and Edit rules
    /// (`[mcp_servers.NAME.paths] TOOL = { read = ["path"], write = ["dest"] }`).
    pub paths: BTreeMap<String, PathArgs>,
}

/// The arguments of one tool that name paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathArgs {
    /// Arguments the tool reads from.
    pub read: Vec<String>,
    /// Arguments the tool writes to.
    pub write: Vec<String>,
}

/// Why `name` cannot name a server, if it cannot (CONTRACT item 13).
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a server name cannot be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "the server name `{name}` has `{c}` in it; only letters, digits, `-` and `_` can be in one"
        ));
    }
    if name.contains("__") {
        return Err(format!(
            "the server name `{name}` has `__` in it, which separates the server from the tool in `mcp__SERVER__TOOL`"
        ));
    }
    if name.starts_with('_') || name.ends_with('_') {
        return Err(format!(
            "the server name `{name}` begins or ends with `_`, which would run into the `__` of `mcp__SERVER__TOOL`"
        ));
    }
    Ok(())
}

/// The servers to start for a session in `project`: the `mcp_servers` tables of the policy
/// files, highest layer first winning a name, then Claude Code's `project/.mcp.json`. The
/// project's own files configure servers only when the project is trusted (a server is a
/// program that runs as soon as the session starts; `.mcp.json` is among the files trust is
/// bound to); what was left out is said in the notes.
pub fn server_specs(
    files: &tool_permissions::PolicyFiles,
    project: &Path,
) -> Result<(Vec<ServerSpec>, Vec<String>), Error> {
    let mut specs: Vec<ServerSpec> = Vec::new();
    let mut notes = Vec::new();
    for f in files.files() {
        if f.is_claude_settings() {
            continue;
        }
        let bad = |message: String| Error::Config {
            file: f.path.clone(),
            message,
        };
        let doc: toml::Table = toml::from_str(&f.text).map_err(|e| bad(e.to_string()))?;
        let Some(servers) = doc.get("mcp_servers") else {
            continue;
        };
        let servers = servers
            .as_table()
            .ok_or_else(|| bad("`mcp_servers` must be a table of servers".into()))?;
        if f.layer.needs_trust() && !files.project_trusted() {
            notes.push(format!(
                "MCP servers in {} are not started: the project's policy is not trusted",
                f.path.display()
            ));
            continue;
        }
        for (name, table) in servers {
            check_server_name(name).map_err(|m| bad(format!("[mcp_servers.{name}]: {m}")))?;
            if specs.iter().any(|s| s.name == *name) {
                // A higher layer configured it already.
                continue;
            }
            let entry = serde_json::to_value(table)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .ok_or_else(|| bad(format!("[mcp_servers.{name}] must be a table")))?;
            let spec = server_entry(name, &entry, &f.path, Form::Policy)?;
            specs.push(spec);
        }
    }
    let mcp_json = project.join(".mcp.json");
    match std::fs::read_to_string(&mcp_json) {
        Ok(text) if files.project_trusted() => {
            for spec in specs_from_mcp_json(&text, &mcp_json)? {
                if !specs.iter().any(|s| s.name == spec.name) {
                    specs.push(spec);
                }
            }
        }
        Ok(_) => notes.push(format!(
            "MCP servers in {} are not started: the project is not trusted",
            mcp_json.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::Config {
                file: mcp_json,
                message: e.to_string(),
            });
        }
    }
    // A server that is this very program (the `toolgate mcp` that Claude Code starts from the
    // same `.mcp.json`, say) would read the same files and start itself again, without end.
    if let Some(me) = this_program() {
        specs.retain(|spec| {
            let itself = spec.program(project).is_some_and(|p| p == me);
            if itself {
                notes.push(format!(
                    "MCP server `{}` ({}) is this program itself; it is not started from here",
                    spec.name,
                    spec.source.display()
                ));
            }
            !itself
        });
    }
    Ok((specs, notes))
}

/// This process's executable, resolved, also after a rebuild replaced it.
fn this_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let text = exe.to_string_lossy();
    let exe = match text.strip_suffix(" (deleted)") {
        Some(path) => PathBuf::from(path),
        None => exe,
    };
    std::fs::canonicalize(exe).ok()
}

impl McpTool {
    /// The paths this call's path arguments name (read, written), absolute: a relative one
    /// is taken from the server's working directory, as the server takes it. Those the
    /// policy declares for the tool; for a tool it declares nothing for, the arguments whose
    /// key says they are paths ([`tool_permissions::path_arguments`]), read, and written too
    /// unless the server marks the tool read-only.
    fn path_args(&self, input: &Value, ctx: &ToolContext) -> (Vec<PathBuf>, Vec<PathBuf>) {
        tool_permissions::tool_path_arguments(
            input,
            self.paths
                .as_ref()
                .map(|d| (d.read.as_slice(), d.write.as_slice())),
            self.read_only,
            &self.server.cwd,
            &ctx.home,
        )
    }
}

impl ServerSpec {
    /// The executable the server's command names, resolved as starting it in `cwd` would
    /// (a name without a slash through `PATH`, the server's own `PATH` first), if it exists.
    pub fn program(&self, cwd: &Path) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt as _;
        let runnable = |p: &Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        let found = if self.command.contains('/') {
            let p = cwd.join(&self.command);
            runnable(&p).then_some(p)
        } else {
            let path = self
                .env
                .get("PATH")
                .map(std::ffi::OsString::from)
                .or_else(|| std::env::var_os("PATH"))?;
            std::env::split_paths(&path)
                .map(|d| cwd.join(d).join(&self.command))
                .find(|p| runnable(p))
        };
        std::fs::canonicalize(found?).ok()
    }
}

/// The servers of an MCP configuration in Claude Code's format (`.mcp.json`, or what
/// `--mcp-config` takes): `{"mcpServers": {"NAME": {"command": …, "args": […], "env": {…}}}}`.
/// Only stdio servers (no `type`, or `"stdio"`) can be started.
pub fn specs_from_mcp_json(text: &str, source: &Path) -> Result<Vec<ServerSpec>, Error> {
    let bad = |message: String| Error::Config {
        file: source.to_path_buf(),
        message,
    };
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("line {} column {}: {e}", e.line(), e.column())))?;
    let Some(servers) = doc.get("mcpServers") else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_object()
        .ok_or_else(|| bad("`mcpServers` must be an object".into()))?;
    let mut specs = Vec::new();
    for (name, entry) in servers {
        check_server_name(name).map_err(|m| bad(format!("mcpServers.{name}: {m}")))?;
        let entry = entry
            .as_object()
            .ok_or_else(|| bad(format!("mcpServers.{name}: must be an object")))?;
        specs.push(server_entry(name, entry, source, Form::McpJson)?);
    }
    Ok(specs)
}

/// Where a server's entry was written: the two forms differ only in what else they allow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `[mcp_servers.NAME]` in a policy file: `paths` too, no unknown keys.
    Policy,
    /// An entry of Claude Code's `mcpServers`: `type` too (stdio only), other keys passed over.
    McpJson,
}

/// One server's entry (`command`, `args`, `env`, and what its form allows), named `name`.
fn server_entry(
    name: &str,
    entry: &serde_json::Map<String, Value>,
    source: &Path,
    form: Form,
) -> Result<ServerSpec, Error> {
    let label = match form {
        Form::Policy => format!("[mcp_servers.{name}]"),
        Form::McpJson => format!("mcpServers.{name}:"),
    };
    let wrong = |what: String| Error::Config {
        file: source.to_path_buf(),
        message: format!("{label} {what}"),
    };
    let strings = |v: &Value, what: &str| -> Result<Vec<String>, Error> {
        v.as_array()
            .and_then(|a| {
                a.iter()
                    .map(|x| x.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| wrong(format!("{what} must be a list of strings")))
    };
    let mut spec = ServerSpec {
        name: name.to_owned(),
        command: String::new(),
        args: Vec::new(),
        env: BTreeMap::new(),
        source: source.to_path_buf(),
        paths: BTreeMap::new(),
    };
    for (key, value) in entry {
        match (key.as_str(), form) {
            ("command", _) => {
                spec.command = value
                    .as_str()
                    .ok_or_else(|| wrong("`command` must be a string".into()))?
                    .to_owned();
            }
            ("args", _) => spec.args = strings(value, "`args`")?,
            ("env", _) => {
                for (k, v) in value
                    .as_object()
                    .ok_or_else(|| wrong("`env` must be a table of strings".into()))?
                {
                    let v = v
                        .as_str()
                        .ok_or_else(|| wrong("`env` must be a table of strings".into()))?;
                    spec.env.insert(k.clone(), v.to_owned());
                }
            }
            ("paths", Form::Policy) => {
                let tools = value
                    .as_object()
                    .ok_or_else(|| wrong("`paths` must be a table of tools".into()))?;
                for (tool, kinds) in tools {
                    let kinds = kinds.as_object().ok_or_else(|| {
                        wrong(format!(
                            "`paths.{tool}` must be a table with `read` and `write`"
                        ))
                    })?;
                    let mut args = PathArgs::default();
                    for (kind, list) in kinds {
                        let names = strings(list, &format!("`paths.{tool}.{kind}`"))?;
                        match kind.as_str() {
                            "read" => args.read = names,
                            "write" => args.write = names,
                            other => {
                                return Err(wrong(format!(
                                    "`paths.{tool}`: unknown key `{other}` (known: read, write)"
                                )));
                            }
                        }
                    }
                    spec.paths.insert(tool.clone(), args);
                }
            }
            ("type", Form::McpJson) => {
                if value.as_str() != Some("stdio") {
                    return Err(wrong(format!(
                        "a `{}` server; toolgate starts stdio servers only",
                        value.as_str().unwrap_or("?")
                    )));
                }
            }
            (other, Form::Policy) => {
                return Err(wrong(format!(
                    "unknown key `{other}` (known: command, args, env, paths)"
                )));
            }
            (_, Form::McpJson) => {}
        }
    }
    if spec.command.is_empty() {
        return Err(wrong("needs a `command`".into()));
    }
    Ok(spec)
}

type Client = RunningService<RoleClient, ()>;

/// A running external server, started again once after it died.
#[derive(Debug)]
pub struct ExternalServer {
    spec: ServerSpec,
    cwd: PathBuf,
    client: tokio::sync::Mutex<Option<Client>>,
}

async fn connect(spec: &ServerSpec, cwd: &Path) -> Result<Client, String> {
    let mut cmd = tokio::process::Command::new(&spec.command);
    cmd.args(&spec.args).envs(&spec.env).current_dir(cwd);
    let transport = TokioChildProcess::new(cmd).map_err(|e| {
        format!(
            "`{}` could not be started ({}): {e}",
            spec.command,
            spec.source.display()
        )
    })?;
    ().serve(transport)
        .await
        .map_err(|e| format!("the handshake failed: {e}"))
}

impl ExternalServer {
    /// Start the server in `cwd` and complete the handshake.
    pub async fn start(spec: ServerSpec, cwd: &Path) -> Result<Arc<Self>, Error> {
        let client = connect(&spec, cwd).await.map_err(|message| Error::Server {
            name: spec.name.clone(),
            message,
        })?;
        Ok(Arc::new(Self {
            spec,
            cwd: cwd.to_path_buf(),
            client: tokio::sync::Mutex::new(Some(client)),
        }))
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Its tools as registry tools, and notes on tools left out.
    pub async fn tools(self: &Arc<Self>) -> Result<(Vec<Arc<dyn Tool>>, Vec<String>), Error> {
        let listed = {
            let guard = self.client.lock().await;
            let client = guard.as_ref().ok_or_else(|| Error::Server {
                name: self.spec.name.clone(),
                message: "it is not running".into(),
            })?;
            client.list_all_tools().await.map_err(|e| Error::Server {
                name: self.spec.name.clone(),
                message: format!("listing its tools failed: {e}"),
            })?
        };
        let mut by_name: BTreeMap<String, Vec<rmcp::model::Tool>> = BTreeMap::new();
        for t in listed {
            by_name
                .entry(format!("mcp__{}__{}", self.spec.name, normalize(&t.name)))
                .or_default()
                .push(t);
        }
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut notes = Vec::new();
        for (name, mut same) in by_name {
            if same.len() > 1 {
                let remote: Vec<String> = same.iter().map(|t| t.name.to_string()).collect();
                notes.push(format!(
                    "the tools {} of MCP server {} all come out as {name}; none of them is offered",
                    remote.join(", "),
                    self.spec.name
                ));
                continue;
            }
            let Some(t) = same.pop() else { continue };
            let read_only = t
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false);
            let paths = self.spec.paths.get(t.name.as_ref()).cloned();
            tools.push(Arc::new(McpTool {
                server: self.clone(),
                paths,
                remote: t.name.to_string(),
                name,
                description: t.description.as_deref().unwrap_or_default().to_owned(),
                schema: Value::Object((*t.input_schema).clone()),
                read_only,
            }));
        }
        Ok((tools, notes))
    }

    /// Call `tool` on the server; a server that died is started again once for the call.
    async fn call(&self, tool: &str, input: Value) -> Result<rmcp::model::CallToolResult, String> {
        let mut guard = self.client.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_transport_closed()) {
            *guard = None;
            let client = connect(&self.spec, &self.cwd).await.map_err(|e| {
                format!(
                    "MCP server {} is unavailable: it had stopped, and starting it again failed: {e}",
                    self.spec.name
                )
            })?;
            *guard = Some(client);
        }
        let Some(client) = guard.as_ref() else {
            return Err(format!("MCP server {} is unavailable", self.spec.name));
        };
        let arguments = match input {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match client.call_tool(params).await {
            Ok(r) => Ok(r),
            Err(e) => {
                let stopped = client.is_transport_closed();
                if stopped {
                    *guard = None;
                }
                Err(if stopped {
                    format!(
                        "MCP server {} stopped while running {tool} ({e}); it will be started again for the next call",
                        self.spec.name
                    )
                } else {
                    format!("MCP server {} failed to run {tool}: {e}", self.spec.name)
                })
            }
        }
    }
}

/// A tool name as it can appear in `mcp__SERVER__TOOL`: other characters than letters,
/// digits, `-` and `_` become `_`.
fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One tool of an external server.
#[derive(Debug)]
pub struct McpTool {
    server: Arc<ExternalServer>,
    /// Which of its arguments are paths, as the policy declares them.
    paths: Option<PathArgs>,
    /// Its name on the server.
    remote: String,
    /// `mcp__SERVER__TOOL`.
    name: String,
    description: String,
    schema: Value,
    read_only: bool,
}

impl McpTool {
    /// The (server, tool) pair this tool calls.
    pub fn identity(&self) -> (&str, &str) {
        (self.server.name(), &self.remote)
    }
}

/// MCP content as the model sees it: text blocks as text, images as images, in a list.
fn to_content(result: &rmcp::model::CallToolResult) -> ToolResultContent {
    let blocks: Vec<tool_core::ContentBlock> = result
        .content
        .iter()
        .filter_map(|c| match c {
            McpBlock::Text(t) => Some(tool_core::ContentBlock::Text {
                text: t.text.clone(),
            }),
            McpBlock::Image(i) => Some(tool_core::ContentBlock::Image {
                source: tool_core::ImageSource::Base64 {
                    media_type: i.mime_type.clone(),
                    data: i.data.clone(),
                },
            }),
            other => serde_json::to_string(other)
                .ok()
                .map(|text| tool_core::ContentBlock::Text { text }),
        })
        .collect();
    // Claude Code passes an MCP tool's content on as blocks, a single text block too.
    ToolResultContent::Blocks(blocks)
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_external(&self) -> bool {
        true
    }

    /// The call's path arguments (see `path_args`): one a Read deny rule covers (read) or an
    /// Edit deny rule covers (written) refuses the call, with the text Read and Edit give.
    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(), tool_core::ValidationFailure> {
        const DENIED: &str = "File is in a directory that is denied by your permission settings.";
        let (read, write) = self.path_args(input, ctx);
        if read.iter().any(|p| ctx.path_policy.read_denied(p, ctx)) {
            return Err(tool_core::ValidationFailure::new(1, DENIED));
        }
        if write.iter().any(|p| ctx.path_policy.edit_denied(p, ctx)) {
            return Err(tool_core::ValidationFailure::new(2, DENIED));
        }
        Ok(())
    }

    /// The same arguments for the policy: their Read and Edit ask rules, and protected paths
    /// written, make the call ask; they never allow it (rules naming the tool do).
    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        let (read, write) = self.path_args(input, ctx);
        PermissionSubject::tool_paths(read, write)
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let result = self
            .server
            .call(&self.remote, input)
            .await
            .map_err(ToolCallError::new)?;
        let content = to_content(&result);
        if result.is_error == Some(true) {
            // An error result reaches the model as its text, in one string.
            return Err(ToolCallError::new(content.to_text()));
        }
        let raw = serde_json::to_value(&result.content).unwrap_or(Value::Null);
        Ok(ToolOutput::new(raw, content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string over `alphabet` of length 1 to `max`.
    fn strings(alphabet: &[char], max: usize) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        let mut last = vec![String::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    /// Over every server name the check accepts and every tool name a server can list (short
    /// ones, over the characters that matter: `_`, `-` and one that is normalized), a full name
    /// `mcp__SERVER__TOOL` names one (server, tool) pair, and a server's rules (`mcp__S`,
    /// `mcp__S__*`) name exactly that server's tools.
    #[test]
    fn full_names_name_one_pair_and_server_rules_one_server() {
        let servers: Vec<String> = strings(&['a', 'b', '_', '-'], 4)
            .into_iter()
            .filter(|s| check_server_name(s).is_ok())
            .collect();
        let tools = strings(&['a', '_', '-', '.'], 3);
        let mut seen: std::collections::HashMap<String, (&str, String)> =
            std::collections::HashMap::new();
        for s in &servers {
            for t in &tools {
                let t = normalize(t);
                let full = format!("mcp__{s}__{t}");
                if let Some(other) = seen.insert(full.clone(), (s, t.clone())) {
                    assert_eq!(other, (s.as_str(), t.clone()), "{full} names two pairs");
                }
            }
        }
        let rules: Vec<(
            String,
            tool_permissions::PermissionRule,
            tool_permissions::PermissionRule,
        )> = servers
            .iter()
            .map(|s| {
                let parse = |r: String| {
                    tool_permissions::PermissionRule::parse(&r)
                        .unwrap_or_else(|e| panic!("{r}: {e}"))
                };
                (
                    s.clone(),
                    parse(format!("mcp__{s}")),
                    parse(format!("mcp__{s}__*")),
                )
            })
            .collect();
        for (full, (server, _)) in &seen {
            for (s, whole, wildcard) in &rules {
                let mine = s == server;
                assert_eq!(whole.names_tool(full), mine, "mcp__{s} and {full}");
                assert_eq!(wildcard.names_tool(full), mine, "mcp__{s}__* and {full}");
            }
        }
    }

    /// A project whose `.mcp.json` names this very program (as `toolgate mcp` is named in the
    /// `.mcp.json` Claude Code starts it from) and another server: this program is not started
    /// from it, whether named through `PATH` or by its path; the other one is.
    #[test]
    fn a_server_that_is_this_program_is_not_started_by_itself() {
        let me = this_program().unwrap_or_else(|| panic!("no current executable"));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (ws, home) = (dir.path().join("ws"), dir.path().join("home"));
        std::fs::create_dir_all(&ws).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        let name = me
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bin_dir = me
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mcp_json = serde_json::json!({"mcpServers": {
            "byname": {"command": name, "args": ["mcp"], "env": {"PATH": bin_dir}},
            "bypath": {"command": me.display().to_string(), "args": ["mcp"]},
            "other": {"command": "sh", "args": ["-c", "exit 0"]},
        }});
        std::fs::write(ws.join(".mcp.json"), mcp_json.to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let files = tool_permissions::PolicySources::standard(
            &ws,
            &home,
            None,
            tool_permissions::Trust::Trusted,
        )
        .read()
        .unwrap_or_else(|e| panic!("{e}"));
        let (specs, notes) = server_specs(&files, &ws).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["other"], "{notes:?}");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes.iter().all(|n| n.contains("is this program itself")),
            "{notes:?}"
        );
    }

    #[test]
    fn server_names_that_would_blur_the_pair_are_refused() {
        for ok in ["time", "git-hub", "my_server", "a1"] {
            assert!(check_server_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a__b", "_a", "a_", "a.b", "a b", "ä"] {
            assert!(check_server_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn claude_codes_mcp_json_gives_stdio_servers_and_refuses_the_rest() {
        let src = Path::new("/p/.mcp.json");
        let specs = specs_from_mcp_json(
            r#"{"mcpServers": {"time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"], "env": {"A": "1"}}}}"#,
            src,
        )
        .unwrap_or_default();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].name, "time");
        assert_eq!(specs[0].args, ["--local-timezone", "UTC"]);
        assert_eq!(specs[0].env.get("A").map(String::as_str), Some("1"));
        for bad in [
            r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
            r#"{"mcpServers": {"web": {"type": "http", "url": "https://x"}}}"#,
            r#"{"mcpServers": {"x": {"args": []}}}"#,
            r#"{"mcpServers": {"x": {"command": "x", "args": [1]}}}"#,
            r#"{"mcpServers": []}"#,
            "{",
        ] {
            assert!(specs_from_mcp_json(bad, src).is_err(), "{bad}");
        }
        assert!(
            specs_from_mcp_json("{}", src).is_ok_and(|s| s.is_empty()),
            "no servers"
        );
    }

    #[test]
    fn tool_names_keep_only_what_a_tool_name_can_hold() {
        assert_eq!(normalize("get_current-time"), "get_current-time");
        assert_eq!(normalize("files.read v2"), "files_read_v2");
    }
}
