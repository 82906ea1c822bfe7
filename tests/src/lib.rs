//! Helpers for toolgate's cross-crate tests: a session in a temporary workspace ([`Sandbox`]),
//! policies from rule lists ([`policy`], [`policy_of`]), permission requests and decisions
//! ([`request`] by hand, [`decide_builtin`] as the pipeline asks a built-in tool), the
//! session's environment ([`add_env`]), process checks ([`alive`], [`gone_within`]), and small
//! tools that exercise each pipeline exit (failing, panicking, empty, large, slow).

pub mod fuzz;

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_core::{
    Decision, Lookup, PermissionMode, PermissionPolicy, PermissionRequest, PermissionSubject,
    RuleList, Tool, ToolCallError, ToolContext, ToolOutcome, ToolOutput, ToolRegistry, ToolUse,
    ValidationFailure,
};
use tool_orchestrator::{Session, SessionBuilder};
use tool_permissions::{Layer, Policy, PolicyBuilder};

/// A temporary workspace with a home beside it.
#[derive(Debug)]
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    /// A fresh sandbox.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        std::fs::create_dir_all(dir.path().join("ws")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("home")).unwrap_or_else(|e| panic!("{e}"));
        Self { dir }
    }

    /// The workspace.
    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// A path in the workspace.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.ws().join(rel)
    }

    /// A path in the workspace, as a string.
    pub fn p(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    /// Write a file in the workspace.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(p, content).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Read a file of the workspace as bytes.
    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Where spilled results go.
    pub fn results_dir(&self) -> PathBuf {
        self.dir.path().join("results")
    }

    /// A context rooted at the workspace.
    pub fn ctx(&self) -> ToolContext {
        ToolContext::new(self.ws(), self.dir.path().join("home"), self.results_dir())
    }

    /// A context rooted at the workspace, in permission `mode`.
    pub fn ctx_in(&self, mode: PermissionMode) -> ToolContext {
        let mut c = self.ctx();
        c.permission_mode = mode;
        c
    }

    /// A session builder with the built-in tools and the test tools, and `allow` rules.
    pub fn builder(&self, allow: &[&str]) -> SessionBuilder {
        let mut registry = builtin_tools::registry().unwrap_or_else(|e| panic!("{e}"));
        for t in test_tools() {
            registry.register(t).unwrap_or_else(|e| panic!("{e}"));
        }
        for (name, interrupt) in [
            ("Prop", tool_core::InterruptBehavior::Cancel),
            ("PropBlock", tool_core::InterruptBehavior::Block),
        ] {
            registry
                .register(Arc::new(Prop { name, interrupt }))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        Session::builder(registry, self.ctx()).policy(Arc::new(policy(&[], allow, &[])))
    }

    /// A session with `allow` rules.
    pub fn session(&self, allow: &[&str]) -> Session {
        self.builder(allow).build()
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

/// A policy from whole-tool rules (user layer).
pub fn policy(deny: &[&str], allow: &[&str], ask: &[&str]) -> Policy {
    let rules: Vec<(RuleList, &str)> = [
        (RuleList::Deny, deny),
        (RuleList::Allow, allow),
        (RuleList::Ask, ask),
    ]
    .into_iter()
    .flat_map(|(list, rules)| rules.iter().map(move |r| (list, *r)))
    .collect();
    policy_of(&rules)
}

/// A policy from `(list, rule)` pairs, all in the user layer.
pub fn policy_of(rules: &[(RuleList, &str)]) -> Policy {
    let mut b = PolicyBuilder::new();
    for (list, r) in rules {
        b.rule(*list, r, Layer::User, None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    b.build()
}

/// The input of a hand-built request: `{}`.
static EMPTY_INPUT: LazyLock<Value> = LazyLock::new(|| json!({}));

/// A request built by hand, for a decision about a subject the test chooses: `tool` need not
/// be a real tool, the input is `{}`, and the read-only flag is `read_only`. For a call of a
/// built-in tool use [`decide_builtin`], which asks the tool as the pipeline does.
pub fn request<'a>(
    tool: &'a str,
    subject: &'a PermissionSubject,
    read_only: bool,
    ctx: &'a ToolContext,
) -> PermissionRequest<'a> {
    PermissionRequest {
        tool_name: tool,
        input: &EMPTY_INPUT,
        subject,
        read_only,
        requires_user_interaction: false,
        ctx,
    }
}

/// The policy's decision on a hand-built [`request`].
pub fn decide(
    policy: &dyn PermissionPolicy,
    ctx: &ToolContext,
    tool: &str,
    subject: &PermissionSubject,
    read_only: bool,
) -> Decision {
    policy.decide(&request(tool, subject, read_only, ctx))
}

/// The policy's decision on a call of the built-in tool `tool` with `input`, asked as the
/// pipeline asks it: the subject is the tool's own `permission_subject`, the request
/// [`PermissionRequest::for_tool`]. Panics when there is no such built-in tool.
pub fn decide_builtin(
    policy: &dyn PermissionPolicy,
    ctx: &ToolContext,
    tool: &str,
    input: &Value,
) -> Decision {
    let registry = builtin_tools::registry().unwrap_or_else(|e| panic!("{e}"));
    let Lookup::Found(t) = registry.lookup(tool, &|_| true) else {
        panic!("no built-in tool {tool}")
    };
    let subject = t.tool.permission_subject(input, ctx);
    policy.decide(&PermissionRequest::for_tool(
        t.tool.as_ref(),
        input,
        &subject,
        ctx,
    ))
}

/// Add `vars` to the environment the session's tools see (a name already there is replaced).
pub fn add_env<K: Into<String>, V: Into<String>>(
    session: &mut Session,
    vars: impl IntoIterator<Item = (K, V)>,
) {
    let mut env = (*session.context().env).clone();
    env.extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
    session.context_mut().env = Arc::new(env);
}

/// Is process `pid` running (neither gone nor a zombie)? Read from `/proc`.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|s| s != "Z" && s != "X"),
        Err(_) => false,
    }
}

/// The pids (as this process sees them) of the live processes whose arguments are exactly
/// `argv`. A command in the sandbox's PID namespace knows only its own pids (`$!` there is not
/// a pid here), so tests find its processes by what they run.
pub fn pids_running(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want) && alive(*pid)
        })
        .collect()
}

/// Wait up to `limit` for a process running `argv` to appear; its pid.
pub fn pid_running_within(argv: &[&str], limit: Duration) -> Option<u32> {
    let start = Instant::now();
    loop {
        if let Some(p) = pids_running(argv).first() {
            return Some(*p);
        }
        if start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait up to `limit` for process `pid` to be gone; true when it went.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !alive(pid) {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A registry with only the test tools.
pub fn test_registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    for t in test_tools() {
        r.register(t).unwrap_or_else(|e| panic!("{e}"));
    }
    r
}

/// Run one call in a fresh turn.
pub async fn call(session: &mut Session, name: &str, input: Value) -> ToolOutcome {
    let mut out = session
        .run_turn(&[ToolUse::new("toolu_test", name, input)])
        .await;
    out.outcomes.remove(0)
}

/// Grep for `pattern` in each output mode (`files_with_matches`, `content`, `count`): the mode
/// and the text of the result, each from a fresh turn.
pub async fn grep_every_mode(session: &mut Session, pattern: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for mode in ["files_with_matches", "content", "count"] {
        let input = json!({"pattern": pattern, "output_mode": mode});
        out.push((mode, call(session, "Grep", input).await.content.to_text()));
    }
    out
}

/// The test tools: `Fail`, `Panic`, `Empty`, `Big`, `Sleep` (alias `Nap`, deprecated alias
/// `Doze`), `Picky` (whose validate_input refuses `bad`).
pub fn test_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Simple {
            name: "Fail",
            kind: Kind::Fail,
        }),
        Arc::new(Simple {
            name: "Panic",
            kind: Kind::Panic,
        }),
        Arc::new(Simple {
            name: "Empty",
            kind: Kind::Empty,
        }),
        Arc::new(Simple {
            name: "Big",
            kind: Kind::Big,
        }),
        Arc::new(Simple {
            name: "Sleep",
            kind: Kind::Sleep,
        }),
        Arc::new(Simple {
            name: "Picky",
            kind: Kind::Picky,
        }),
    ]
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Fail,
    Panic,
    Empty,
    Big,
    Sleep,
    Picky,
}

struct Simple {
    name: &'static str,
    kind: Kind,
}

#[async_trait]
impl Tool for Simple {
    fn name(&self) -> &str {
        self.name
    }
    fn aliases(&self) -> Vec<String> {
        if self.kind == Kind::Sleep {
            vec!["Nap".into()]
        } else {
            Vec::new()
        }
    }
    fn deprecated_aliases(&self) -> Vec<String> {
        if self.kind == Kind::Sleep {
            vec!["Doze".into()]
        } else {
            Vec::new()
        }
    }
    fn description(&self) -> String {
        format!("test tool {}", self.name)
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}, "text": {"type": "string"}, "flag": {"type": "boolean"}},
               "additionalProperties": false})
    }
    async fn validate_input(
        &self,
        input: &Value,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationFailure> {
        if self.kind == Kind::Picky && input.get("text").and_then(Value::as_str) == Some("bad") {
            return Err(ValidationFailure::new(1, "Picky does not take `bad`."));
        }
        Ok(())
    }
    fn permission_subject(&self, _input: &Value, _ctx: &ToolContext) -> PermissionSubject {
        PermissionSubject::Nothing
    }
    fn max_result_size_chars(&self) -> Option<usize> {
        Some(30_000)
    }
    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        match self.kind {
            Kind::Fail => Err(ToolCallError::new(
                input
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("it failed")
                    .to_owned(),
            )),
            Kind::Panic => panic!("deliberate panic in a test tool"),
            Kind::Empty => Ok(ToolOutput::new(json!(null), "   ")),
            Kind::Big => {
                let n = input.get("n").and_then(Value::as_u64).unwrap_or(40_000) as usize;
                Ok(ToolOutput::new(json!(null), "b".repeat(n)))
            }
            Kind::Sleep => {
                let ms = input.get("n").and_then(Value::as_u64).unwrap_or(10);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(ToolOutput::new(
                    json!({"slept": ms}),
                    format!("slept {ms}ms"),
                ))
            }
            Kind::Picky => Ok(ToolOutput::new(json!(null), "fine")),
        }
    }
}

/// Concurrency seen by [`Prop`] calls, by group: (running now, most at once).
static PROP_GROUPS: std::sync::Mutex<Option<std::collections::HashMap<String, (usize, usize)>>> =
    std::sync::Mutex::new(None);

/// The most [`Prop`] calls of `group` that ran at once.
pub fn prop_peak(group: &str) -> usize {
    PROP_GROUPS
        .lock()
        .ok()
        .and_then(|g| g.as_ref().and_then(|m| m.get(group).map(|(_, p)| *p)))
        .unwrap_or(0)
}

fn prop_enter(group: &str, delta: isize) {
    if let Ok(mut g) = PROP_GROUPS.lock() {
        let m = g.get_or_insert_with(Default::default);
        let e = m.entry(group.to_owned()).or_insert((0, 0));
        e.0 = e.0.saturating_add_signed(delta);
        e.1 = e.1.max(e.0);
    }
}

/// A test tool for turns: input `{id, group, safe, ms, mods, panic, check_panics}`. It is
/// concurrency-safe when `safe` is true (its check panics when `check_panics`), sleeps `ms`,
/// answers `<id> saw [<log>]` with the session's `log` variable as it found it, and emits
/// `mods` context changes, each appending `<id>.<k>` to `log`. `Prop` cancels on interrupt,
/// `PropBlock` does not.
#[derive(Debug)]
pub struct Prop {
    /// Its name.
    pub name: &'static str,
    /// What an interrupt does.
    pub interrupt: tool_core::InterruptBehavior,
}

#[async_trait]
impl Tool for Prop {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        "test tool for turns".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "id": {"type": "string"}, "group": {"type": "string"}, "safe": {"type": "boolean"},
            "ms": {"type": "integer"}, "mods": {"type": "integer"}, "panic": {"type": "boolean"},
            "check_panics": {"type": "boolean"}},
            "required": ["id"], "additionalProperties": false})
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        if input.get("check_panics").and_then(Value::as_bool) == Some(true) {
            panic!("deliberate panic in is_concurrency_safe");
        }
        input.get("safe").and_then(Value::as_bool) == Some(true)
    }
    fn interrupt_behavior(&self) -> tool_core::InterruptBehavior {
        self.interrupt
    }
    fn permission_subject(&self, _input: &Value, _ctx: &ToolContext) -> PermissionSubject {
        PermissionSubject::Nothing
    }
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let id = input["id"].as_str().unwrap_or("?").to_owned();
        let group = input["group"].as_str().unwrap_or("").to_owned();
        let saw = ctx.env.get("log").cloned().unwrap_or_default();
        prop_enter(&group, 1);
        let ms = input["ms"].as_u64().unwrap_or(0);
        let slept = tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => true,
            () = ctx.cancel.cancelled() => false,
        };
        prop_enter(&group, -1);
        if input["panic"].as_bool() == Some(true) {
            panic!("deliberate panic in Prop {id}");
        }
        if !slept {
            return Err(ToolCallError::interrupted());
        }
        let mut out = ToolOutput::new(json!({"id": id}), format!("{id} saw [{saw}]"));
        for k in 0..input["mods"].as_u64().unwrap_or(0) {
            let entry = format!("{id}.{k}");
            out.context_modifiers.push(tool_core::ContextModifier::new(
                move |c: &mut ToolContext| {
                    let mut env = (*c.env).clone();
                    let log = env.entry("log".into()).or_default();
                    if !log.is_empty() {
                        log.push(',');
                    }
                    log.push_str(&entry);
                    c.env = Arc::new(env);
                },
            ));
        }
        Ok(out)
    }
}

/// Peak resident memory of this process in KiB (`VmHWM`), on Linux.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Does `path` exist?
pub fn exists(path: &Path) -> bool {
    path.exists()
}

pub mod differential;
pub mod rng;
