//! `toolgate sandbox -- LINE`: run one shell command line the way toolgate's Bash runs it: in
//! the sandbox the project's policy plans, with every program it starts checked against the
//! rules. What `toolgate guard --sandbox` turns Claude Code's Bash calls into.
//!
//! The line is decided first, as the guard decides it: a deny refuses it (exit status 126,
//! the reason on stderr); an ask is taken as answered (the line came through Claude Code's
//! prompt, or from a person at a terminal). Its output goes straight to this process's
//! standard output and error; what the sandbox stopped follows on standard error, as the
//! `<sandbox_violations>` block the model reads. The exit status is the line's (128 plus the
//! signal for a killed one).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tool_core::{DecisionReason, PermissionMode, ToolContext, Verdict};
use tool_permissions::{PolicySources, Trust};

/// What `toolgate sandbox` runs, and where.
#[derive(Debug, Clone)]
pub struct SandboxRun {
    /// The command line.
    pub line: String,
    /// The project whose policy applies.
    pub project: PathBuf,
    /// Where the line starts.
    pub cwd: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, when set.
    pub xdg: Option<PathBuf>,
    /// The permission mode (default: the settings').
    pub mode: Option<PermissionMode>,
    /// Extra policy files (the command-line layer).
    pub files: Vec<PathBuf>,
    /// The call asked to run outside the sandbox (`dangerouslyDisableSandbox`).
    pub let_out: bool,
}

/// The exit status `toolgate sandbox` ends with when it refuses the line.
pub const REFUSED: i32 = 126;

/// Does Claude Code trust the project (its trust dialog was accepted, as recorded in
/// `~/.claude.json`)?
pub(crate) fn claude_code_trusts(home: &Path, project: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(home.join(".claude.json")) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let Some(key) = project.to_str() else {
        return false;
    };
    v.get("projects")
        .and_then(|p| p.get(key))
        .and_then(|p| p.get("hasTrustDialogAccepted"))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// Run `run.line` and return the exit status to end with.
pub async fn run(run: &SandboxRun) -> anyhow::Result<i32> {
    let trust = if claude_code_trusts(&run.home, &run.project) {
        Trust::Trusted
    } else {
        Trust::Store
    };
    let mut sources = PolicySources::standard(&run.project, &run.home, run.xdg.as_deref(), trust);
    sources.command_line.extend(run.files.iter().cloned());
    let policy = sources.load()?;
    let mut ctx = ToolContext::new(
        &run.project,
        &run.home,
        std::env::temp_dir().join("toolgate-sandbox-results"),
    );
    ctx.cwd = run.cwd.clone();
    ctx.working_dirs
        .extend(policy.additional_directories().iter().cloned());
    ctx = ctx.with_permission_mode(policy.effective_mode(run.mode)?);
    ctx.env = Arc::new(std::env::vars().collect());
    let mut registry = tool_core::ToolRegistry::new();
    registry.register(Arc::new(builtin_tools::BashTool))?;
    let mut input = json!({ "command": run.line });
    if run.let_out {
        input["dangerouslyDisableSandbox"] = json!(true);
    }
    let decision = tool_permissions::decide(&policy, &registry, "Bash", &input, &ctx)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if decision.verdict == Verdict::Deny {
        eprintln!("toolgate: {} ({})", decision.message, decision.reason);
        return Ok(REFUSED);
    }
    ctx.allowed_by = Some(match decision.verdict {
        Verdict::Allow => decision.reason,
        _ => DecisionReason::Approver { approved: true },
    });
    ctx.sandbox_policy = Arc::new(policy);
    let streams = builtin_tools::sandboxed::Streams {
        stdin: tool_sandbox::Io::Inherit,
        stdout: tool_sandbox::Io::Inherit,
        stderr: tool_sandbox::Io::Inherit,
        fd3: None,
    };
    let args = vec!["-c".to_owned(), run.line.clone()];
    let started = builtin_tools::sandboxed::start(
        &run.line,
        args.clone(),
        &ctx,
        &run.cwd,
        streams,
        run.let_out,
    )
    .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    match started {
        builtin_tools::sandboxed::Started::Supervised(s) => {
            let (running, enforcement) = *s;
            let status = running.wait().await;
            let block = enforcement.report(&running.report());
            if !block.is_empty() {
                eprintln!("{}", block.trim_start_matches('\n'));
            }
            Ok(tool_core::process::exit_code(status))
        }
        builtin_tools::sandboxed::Started::Unsupervised(_) => {
            let status = tokio::process::Command::new(builtin_tools::sandboxed::shell(&ctx))
                .args(&args)
                .current_dir(&run.cwd)
                .status()
                .await?;
            Ok(tool_core::process::exit_code(status))
        }
    }
}
