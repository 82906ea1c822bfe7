//! Deciding about one call without running it: what `toolgate check` prints and what
//! `cargo xtask security` compares.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tool_core::{Decision, Lookup, PermissionPolicy, PermissionRequest, ToolContext, ToolRegistry};
use tool_permissions::{Policy, PolicySources, Trust};

/// Why a call could not be decided about.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// No tool of that name.
    #[error("{0}")]
    UnknownTool(String),
    /// The input does not pass the tool's schema.
    #[error("{0}")]
    InvalidInput(String),
}

/// The permission decision for `tool` with `input` in `ctx` (every registered tool counts as
/// offered; a whole-tool deny shows as the deny it is).
pub fn decide(
    registry: &ToolRegistry,
    policy: &Policy,
    tool: &str,
    input: &Value,
    ctx: &ToolContext,
) -> Result<Decision, CheckError> {
    let found = match registry.lookup(tool, &|_| true) {
        Lookup::Found(t) => t,
        Lookup::NotFound(text) => return Err(CheckError::UnknownTool(text)),
    };
    let input = found
        .schema
        .check(input)
        .map_err(|e| CheckError::InvalidInput(e.render(found.name())))?;
    let input = found.tool.normalize_input(input);
    let subject = found.tool.permission_subject(&input, ctx);
    let request = PermissionRequest::for_tool(found.tool.as_ref(), &input, &subject, ctx);
    Ok(policy.decide(&request))
}

/// Where the CLI reads a workspace's policy: the standard layers for `ws` (managed, user
/// in `$XDG_CONFIG_HOME/toolgate`, the project's `.toolgate/` and `.claude/` files), plus the
/// command-line files. `trusted` forces trust on; otherwise the user's trust store decides.
pub fn sources(ws: &Path, home: &Path, command_line: &[PathBuf], trusted: bool) -> PolicySources {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let mut s = PolicySources::standard(ws, home, xdg.as_deref());
    s.command_line = command_line.to_vec();
    if trusted {
        s.trust = Trust::Trusted;
    }
    s
}

/// What `toolgate policy test` found: one line per test, and the counts.
#[derive(Debug, Default)]
pub struct TestReport {
    /// `PASS name` / `FAIL name: expected X, got Y (because ...)` lines.
    pub lines: Vec<String>,
    /// Tests that gave the expected decision.
    pub passed: usize,
    /// Tests that did not (or could not be decided).
    pub failed: usize,
}

/// Run the policy's `[[tests]]` against it, each in `ctx` with its own mode if it names one.
pub fn run_tests(registry: &ToolRegistry, policy: &Policy, ctx: &ToolContext) -> TestReport {
    let mut report = TestReport::default();
    for t in policy.tests() {
        let mut ctx = ctx.clone();
        if let Some(m) = t.mode {
            ctx.permission_mode = m;
        }
        let label = t.label();
        match decide(registry, policy, &t.tool, &t.input, &ctx) {
            Ok(d) if d.verdict == t.expect => {
                report.passed += 1;
                report
                    .lines
                    .push(format!("PASS {label}: {} ({})", d.verdict, d.reason));
            }
            Ok(d) => {
                report.failed += 1;
                report.lines.push(format!(
                    "FAIL {label}: expected {}, got {} (because {})",
                    t.expect, d.verdict, d.reason
                ));
            }
            Err(e) => {
                report.failed += 1;
                report
                    .lines
                    .push(format!("FAIL {label}: the call cannot be decided: {e}"));
            }
        }
    }
    report
}
