//! Shell lines in the sandbox: the policy's plan for the line (`ToolContext::sandbox_policy`),
//! run by `tool-sandbox`, and what it stopped reported to the model and the audit log. Bash
//! uses it for every call; `toolgate sandbox` for a line given on its command line.
//!
//! How a line runs:
//! - the policy turned the sandbox off, or the line matches `sandbox.excludedCommands`: as it
//!   is, unsupervised (the way out Claude Code gives, for what cannot run traced);
//! - the call asked to run outside the sandbox (`dangerouslyDisableSandbox`, which the decision
//!   let through) or bubblewrap cannot run here: on the host's file system and network, still
//!   supervised, so deny and ask rules hold for every program it starts; where the policy
//!   requires the sandbox, the call is refused instead;
//! - otherwise: in the sandbox, supervised, with the session's temporary directory as
//!   `TMPDIR`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tool_core::sandbox::{ExecRequest, PlannedPath, SandboxMode};
use tool_core::{
    Approval, ApprovalRequest, Decision, DecisionReason, ToolCallError, ToolContext, Verdict,
};
use tool_sandbox::{Launch, Report, Sandbox};

/// The target of audit events (the orchestrator's audit layer writes them).
const AUDIT_TARGET: &str = "toolgate::audit";

/// How a line was started.
#[derive(Debug)]
pub enum Started {
    /// Supervised (and, unless let out, sandboxed), with what its result must report.
    Supervised(Box<(tool_sandbox::Running, Enforcement)>),
    /// The policy runs it as it is (the sandbox is off, or the line is excluded): the caller
    /// starts it itself, with the streams handed back.
    Unsupervised(Streams),
}

/// The streams a line runs with.
#[derive(Debug)]
pub struct Streams {
    /// Standard input.
    pub stdin: tool_sandbox::Io,
    /// Standard output.
    pub stdout: tool_sandbox::Io,
    /// Standard error.
    pub stderr: tool_sandbox::Io,
    /// Given to the command as descriptor 3 (Bash's shell writes its last directory there).
    pub fd3: Option<OwnedFd>,
}

/// What the result and the audit log need to say about a supervised line.
#[derive(Debug, Clone)]
pub struct Enforcement {
    command: String,
    confined: bool,
    allowed_by: Option<DecisionReason>,
    notes: Vec<String>,
    quiet: Vec<String>,
}

/// The session's temporary directory: `TMPDIR` inside the sandbox, and writable there.
fn session_tmp(ctx: &ToolContext) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let session: String = ctx
        .session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let session = if session.is_empty() {
        "session".to_owned()
    } else {
        session
    };
    let dir = std::env::temp_dir()
        .join(format!("toolgate-{}", uid()))
        .join(session);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    Ok(dir)
}

fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    // The owner of a directory this process just made is this process's user.
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

fn warn_unavailable(why: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        tracing::warn!(
            target: "toolgate::sandbox",
            "{why}; Bash commands run without the sandbox's file system and network limits (programs are still checked against the rules)"
        );
    });
}

/// The shell Bash runs lines with: `/bin/bash` where it exists, else `bash` on the context's
/// `PATH`, else `/bin/sh`.
pub fn shell(ctx: &ToolContext) -> std::path::PathBuf {
    crate::bash::find_shell(ctx)
}

/// Start `line` (a shell command line, run as `shell_args` by the shell Bash uses) in `cwd` as
/// the policy of `ctx` plans it ([`tool_core::ToolContext::sandbox_policy`]): in the sandbox,
/// supervised; unconfined but supervised when the call was let out (`let_out`, a call's
/// `dangerouslyDisableSandbox`) or bubblewrap is missing here; or handed back to run as it is
/// when the policy turned the sandbox off or excludes the line. A policy that requires the
/// sandbox where it cannot run refuses the line.
pub fn start(
    line: &str,
    shell_args: Vec<String>,
    ctx: &ToolContext,
    cwd: &Path,
    streams: Streams,
    let_out: bool,
) -> Result<Started, ToolCallError> {
    let spec = ctx.sandbox_policy.clone().sandbox(line, ctx);
    if spec.mode == SandboxMode::Off || spec.excluded_by.is_some() {
        return Ok(Started::Unsupervised(streams));
    }
    let let_out = let_out && spec.allow_unsandboxed;
    let sandbox = if let_out {
        None
    } else {
        match Sandbox::detect_on(ctx.env_var("PATH").map(std::ffi::OsStr::new)) {
            Ok(s) => Some(s),
            Err(e) if spec.mode == SandboxMode::Required => {
                return Err(ToolCallError::new(format!(
                    "Sandbox is required but failed to initialize: {e} (required by {}). Running it outside the sandbox (dangerouslyDisableSandbox) is not allowed either.",
                    spec.mode_source
                )));
            }
            // Enabled by a setting, and there, but broken: the decision counted on it.
            Err(e @ tool_sandbox::Error::Unavailable(_)) if spec.explicit => {
                return Err(ToolCallError::new(format!(
                    "Sandbox is enabled but failed to initialize: {e}. Fix it, or turn the sandbox off ({}), to run commands.",
                    spec.mode_source
                )));
            }
            Err(e) => {
                warn_unavailable(&e.to_string());
                None
            }
        }
    };
    if sandbox.is_none()
        && let Err(e) = tool_sandbox::can_supervise()
    {
        // Not even supervision works here: as it is, unless a setting counted on the sandbox.
        if spec.mode == SandboxMode::Required || spec.explicit {
            return Err(ToolCallError::new(format!(
                "Sandbox is required but failed to initialize: {e} ({}).",
                spec.mode_source
            )));
        }
        warn_unavailable(&e.to_string());
        return Ok(Started::Unsupervised(streams));
    }
    let mut env: Vec<(String, String)> = ctx
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.extend(
        crate::bash::default_env(ctx)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    env.push(("TOOLGATE".into(), "1".into()));
    env.push(("GIT_EDITOR".into(), "true".into()));
    let mut mounts = spec.mounts.clone();
    if sandbox.is_some() {
        let tmp = session_tmp(ctx).map_err(|e| {
            ToolCallError::new(format!(
                "Cannot make the session's temporary directory: {e}"
            ))
        })?;
        env.retain(|(k, _)| k != "TMPDIR" && k != "SANDBOX_RUNTIME");
        env.push(("TMPDIR".into(), tmp.display().to_string()));
        env.push(("SANDBOX_RUNTIME".into(), "1".into()));
        mounts
            .writable
            .push(PlannedPath::new(tmp, "the session's temporary directory"));
    }
    // Kept for the case where not even supervision can start here.
    let Streams {
        stdin,
        stdout,
        stderr,
        fd3,
    } = streams;
    let mut launch = Launch::new(crate::bash::find_shell(ctx), shell_args)
        .cwd(cwd)
        .env(env)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .plan(mounts, spec.network)
        .judge(spec.judge.clone())
        .unix_sockets(spec.unix_sockets)
        .keep_warm(true);
    if let Some(fd) = fd3 {
        launch = launch.fd(fd, 3);
    }
    if let Some(approver) = ctx.run_approver.clone()
        && let Ok(handle) = tokio::runtime::Handle::try_current()
    {
        let asked = move |req: &ExecRequest<'_>, decision: &Decision| -> bool {
            let request = ApprovalRequest {
                tool_name: "Bash".to_owned(),
                tool_use_id: String::new(),
                input: json!({ "command": tool_core::sandbox::shell_line(req.argv) }),
                decision: decision.clone(),
            };
            matches!(
                handle.block_on(approver.approve(request)),
                Approval::Approve { .. }
            )
        };
        launch = launch.approver(Arc::new(asked));
    }
    let started = match sandbox {
        Some(sb) => launch.spawn(sb),
        None => launch.spawn_unconfined(),
    };
    match started {
        Ok(running) => Ok(Started::Supervised(Box::new((
            running,
            Enforcement {
                command: line.to_owned(),
                confined: sandbox.is_some(),
                allowed_by: ctx.allowed_by.clone(),
                notes: spec.mounts.notes.clone(),
                quiet: spec.quiet.clone(),
            },
        )))),
        Err(e) => Err(ToolCallError::new(format!("Cannot start the shell: {e}"))),
    }
}

fn rule_fields(reason: &DecisionReason) -> (Option<&str>, Option<String>, Option<&str>) {
    match reason {
        DecisionReason::Rule { rule, list, source } => (
            Some(rule.as_str()),
            Some(list.to_string()),
            Some(source.as_str()),
        ),
        _ => (None, None, None),
    }
}

impl Enforcement {
    /// The text that follows the command's output: what was stopped, as `<sandbox_violations>`
    /// (Claude Code's block for what its sandbox refused), and an audit event for each.
    pub fn report(&self, report: &Report) -> String {
        let mut lines = Vec::new();
        for stop in &report.stops {
            let unit = tool_core::sandbox::shell_line(&stop.argv);
            let who = if stop.started_by_line {
                "the line"
            } else {
                "another program of the line"
            };
            let verdict = match (stop.decision.verdict, stop.approved) {
                (Verdict::Ask, Some(false)) => "the user refused it",
                (Verdict::Ask, _) => "it needs approval, and there was no one to ask",
                _ => "denied",
            };
            if stop.argv.is_empty() {
                lines.push(format!("deny exec ({})", stop.decision.message));
            } else {
                lines.push(format!(
                    "deny exec {unit} (started by {who}; {verdict}: {})",
                    stop.decision.reason
                ));
            }
            let (rule, list, source) = rule_fields(&stop.decision.reason);
            tracing::info!(
                target: AUDIT_TARGET,
                kind = "enforcement",
                what = "exec",
                line = %self.command,
                unit = %unit,
                started_by_line = stop.started_by_line,
                verdict = %stop.decision.verdict,
                reason = %stop.decision.reason,
                rule,
                list,
                source,
                analysis = self.allowed_by.as_ref().map(ToString::to_string),
                confined = self.confined,
            );
        }
        for r in &report.refusals {
            let why = if r.decision.verdict == Verdict::Deny {
                "host is on the deny list"
            } else {
                "user denied"
            };
            lines.push(format!(
                "deny network-outbound {}:{} ({why})",
                r.host, r.port
            ));
            let (rule, list, source) = rule_fields(&r.decision.reason);
            tracing::info!(
                target: AUDIT_TARGET,
                kind = "enforcement",
                what = "network",
                line = %self.command,
                unit = %format!("{}:{}", r.host, r.port),
                verdict = %r.decision.verdict,
                reason = %r.decision.reason,
                rule,
                list,
                source,
                analysis = self.allowed_by.as_ref().map(ToString::to_string),
                confined = self.confined,
            );
        }
        for r in &report.removed {
            if !r.silent {
                lines.push(format!(
                    "deny write {} ({}: the command created it, and it was removed)",
                    r.path.display(),
                    r.why
                ));
            }
            tracing::info!(
                target: AUDIT_TARGET,
                kind = "enforcement",
                what = "write",
                line = %self.command,
                unit = %r.path.display(),
                verdict = "deny",
                reason = %r.why,
                analysis = self.allowed_by.as_ref().map(ToString::to_string),
                confined = self.confined,
            );
        }
        for s in &report.settled {
            lines.push(format!(
                "deny write {} ({}: {} when the command ended)",
                s.path.display(),
                s.why,
                s.done
            ));
            tracing::info!(
                target: AUDIT_TARGET,
                kind = "enforcement",
                what = "write",
                line = %self.command,
                unit = %s.path.display(),
                verdict = "deny",
                reason = %s.why,
                done = %s.done,
                analysis = self.allowed_by.as_ref().map(ToString::to_string),
                confined = self.confined,
            );
        }
        for a in &report.approvals {
            tracing::info!(
                target: AUDIT_TARGET,
                kind = "enforcement",
                what = "exec",
                line = %self.command,
                unit = %tool_core::sandbox::shell_line(&a.argv),
                verdict = "allow",
                reason = "approved by the user while held",
                analysis = self.allowed_by.as_ref().map(ToString::to_string),
                confined = self.confined,
            );
        }
        for n in &self.notes {
            tracing::warn!(target: "toolgate::sandbox", "{n}");
        }
        lines.retain(|l| !self.quiet.iter().any(|q| l.contains(q.as_str())));
        if lines.is_empty() {
            return String::new();
        }
        format!(
            "\n<sandbox_violations>\n{}\n</sandbox_violations>",
            lines.join("\n")
        )
    }
}
