//! Helpers for toolgate's cross-crate tests: a session in a temporary workspace, and small
//! tools that exercise each pipeline exit (failing, panicking, empty, large, slow).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_core::{
    PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutcome, ToolOutput, ToolRegistry,
    ToolUse, ValidationFailure,
};
use tool_orchestrator::{Session, SessionBuilder};
use tool_permissions::{Layer, Policy, PolicyBuilder};

/// A temporary workspace with a home beside it.
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

    /// A session builder with the built-in tools and the test tools, and `allow` rules.
    pub fn builder(&self, allow: &[&str]) -> SessionBuilder {
        let mut registry = builtin_tools::registry().unwrap_or_else(|e| panic!("{e}"));
        for t in test_tools() {
            registry.register(t).unwrap_or_else(|e| panic!("{e}"));
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
    let mut b = PolicyBuilder::new();
    for (list, rules) in [
        (tool_core::RuleList::Deny, deny),
        (tool_core::RuleList::Allow, allow),
        (tool_core::RuleList::Ask, ask),
    ] {
        for r in rules {
            b.rule(list, r, Layer::User, None)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    b.build()
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
