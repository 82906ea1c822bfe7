//! Command hooks: a shell command run with `sh -c` in the session's working directory, given
//! the event's JSON on stdin, answering with its exit code and output (Claude Code's protocol).
//!
//! The command runs in its own process group ([`tool_core::process`]); at its timeout (600 s
//! unless configured), when the call is cancelled, or when the running hook's future is
//! dropped, the whole group is killed. Output past [`MAX_OUTPUT_BYTES`] on
//! either stream is read and dropped, never buffered. A hook that cannot run, crashes, times
//! out or prints something unusable gives no decision and leaves a note for the user; marked
//! `fail_closed`, it denies the call instead.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::AsyncWriteExt;
use tool_core::process::{ProcessGroup, Stopped, exit_code, read_capped, within};
use tool_core::{CancellationToken, HookDecision, HookOutcome, Verdict};

use crate::hooks::{
    HookEvent, HookSession, PostHookOutcome, PostToolUseHook, PostToolUseInput, PreToolUseHook,
    PreToolUseInput,
};
use crate::input::{post_input_json, pre_input_json};
use crate::output::{Parsed, parse_output};

/// Most bytes kept of a hook's stdout or stderr.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// Claude Code's default timeout for command hooks on tool events.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// One command hook as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The shell command.
    pub command: String,
    /// How long it may run (default 600 s).
    pub timeout: Option<Duration>,
    /// An `if` condition: a permission rule the call must match.
    pub condition: Option<String>,
    /// Deny the call when the hook fails to give an answer (PreToolUse).
    pub fail_closed: bool,
}

impl CommandSpec {
    /// A hook running `command` with the defaults.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            timeout: None,
            condition: None,
            fail_closed: false,
        }
    }
}

/// How a command hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It exited (or was killed by a signal: 128 + signal).
    Code(i32),
    /// It outlived its timeout and was killed.
    TimedOut,
    /// The call was cancelled while it ran; it was killed.
    Cancelled,
    /// It could not be started.
    SpawnFailed(String),
}

/// What a command hook printed and how it ended.
#[derive(Debug, Clone)]
pub struct RawRun {
    /// How it ended.
    pub exit: Exit,
    /// Its standard output (at most [`MAX_OUTPUT_BYTES`]).
    pub stdout: String,
    /// Its standard error (at most [`MAX_OUTPUT_BYTES`]).
    pub stderr: String,
    /// A problem delivering its input (it closed stdin early).
    pub stdin_note: Option<String>,
}

/// A command hook.
#[derive(Debug, Clone)]
pub(crate) struct CommandHook {
    spec: CommandSpec,
}

impl CommandHook {
    /// A hook for `spec`.
    pub(crate) fn new(spec: CommandSpec) -> Self {
        Self { spec }
    }

    /// The command.
    pub(crate) fn command(&self) -> &str {
        &self.spec.command
    }

    /// Run the command with `input` on stdin.
    pub(crate) async fn run(
        &self,
        input: &str,
        session: &HookSession,
        cancel: &CancellationToken,
    ) -> RawRun {
        run_command(
            &self.spec.command,
            input,
            session,
            self.spec.timeout.unwrap_or(DEFAULT_TIMEOUT),
            cancel,
        )
        .await
    }

    /// A deny for a PreToolUse hook marked fail_closed that gave no answer.
    fn fail_closed(&self, why: &str) -> HookDecision {
        HookDecision {
            verdict: Verdict::Deny,
            reason: Some(format!(
                "[{}]: the hook gave no answer ({why}) and is marked fail_closed",
                self.spec.command
            )),
            hook: self.spec.command.clone(),
        }
    }
}

#[async_trait]
impl PreToolUseHook for CommandHook {
    async fn pre_tool_use(&self, input: PreToolUseInput) -> HookOutcome {
        let json = pre_input_json(&input);
        let raw = self.run(&json, &input.session, &input.session.cancel).await;
        let parsed = parse_output(&raw, HookEvent::PreToolUse, &self.spec.command);
        let mut out = parsed.to_pre_outcome(&self.spec.command);
        if self.spec.fail_closed
            && out.decision.is_none()
            && let Some(why) = parsed.failure()
        {
            out.decision = Some(self.fail_closed(&why));
        }
        out
    }
}

#[async_trait]
impl PostToolUseHook for CommandHook {
    async fn post_tool_use(&self, input: PostToolUseInput) -> PostHookOutcome {
        let event = if input.error.is_some() {
            HookEvent::PostToolUseFailure
        } else {
            HookEvent::PostToolUse
        };
        let json = post_input_json(&input, event);
        let raw = self.run(&json, &input.session, &input.session.cancel).await;
        let parsed: Parsed = parse_output(&raw, event, &self.spec.command);
        parsed.to_post_outcome()
    }
}

/// What a PreToolUse command hook's finished run means: its permission answer, rewritten
/// input, context and notes, read from its exit status and output exactly as the pipeline
/// reads them. For a host that runs hook commands its own way, and for the fuzzer.
pub fn read_pre_run(raw: &RawRun, command: &str) -> HookOutcome {
    parse_output(raw, HookEvent::PreToolUse, command).to_pre_outcome(command)
}

/// What a PostToolUse or PostToolUseFailure command hook's finished run means (see
/// [`read_pre_run`]).
pub fn read_post_run(raw: &RawRun, event: HookEvent, command: &str) -> PostHookOutcome {
    parse_output(raw, event, command).to_post_outcome()
}

/// Run `command` with `sh -c` in the session's working directory (the project root if that is
/// gone), `input` and a newline on stdin, the project root in `CLAUDE_PROJECT_DIR` and
/// `TOOLGATE_PROJECT_DIR`.
pub async fn run_command(
    command: &str,
    input: &str,
    session: &HookSession,
    timeout: Duration,
    cancel: &CancellationToken,
) -> RawRun {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(command);
    // The session's cwd; if that is gone, the project root; if that is gone too, ours.
    let cwd = Path::new(&session.cwd);
    if cwd.is_dir() {
        cmd.current_dir(cwd);
    } else if session.project_dir.is_dir() {
        cmd.current_dir(&session.project_dir);
    }
    if !session.env.is_empty() {
        cmd.env_clear().envs(session.env.iter());
    }
    cmd.env("CLAUDE_PROJECT_DIR", &session.project_dir)
        .env("TOOLGATE_PROJECT_DIR", &session.project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut group = match ProcessGroup::spawn(&mut cmd) {
        Ok(g) => g,
        Err(e) => {
            return RawRun {
                exit: Exit::SpawnFailed(e.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                stdin_note: None,
            };
        }
    };
    let stdin = group.take_stdin();
    let stdout = group.take_stdout();
    let stderr = group.take_stderr();
    let payload = format!("{input}\n");
    let feed = async move {
        let mut stdin = stdin?;
        let r = async {
            stdin.write_all(payload.as_bytes()).await?;
            stdin.shutdown().await
        }
        .await;
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Some(
                "Hook command closed stdin before hook input was fully written (EPIPE)".to_owned(),
            ),
            _ => None,
        }
    };
    let work = async {
        tokio::join!(
            feed,
            read_capped(stdout, MAX_OUTPUT_BYTES),
            read_capped(stderr, MAX_OUTPUT_BYTES),
            group.wait()
        )
    };
    // The timeout covers the output too: a child holding stdout open keeps the hook running.
    match within(timeout, cancel, work).await {
        Ok((stdin_note, stdout, stderr, status)) => {
            let exit = match status {
                Ok(s) => Exit::Code(exit_code(s)),
                Err(e) => Exit::SpawnFailed(e.to_string()),
            };
            RawRun {
                exit,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
                stdin_note,
            }
        }
        Err(stopped) => {
            group.kill_and_reap().await;
            RawRun {
                exit: match stopped {
                    Stopped::TimedOut => Exit::TimedOut,
                    Stopped::Cancelled => Exit::Cancelled,
                },
                stdout: String::new(),
                stderr: String::new(),
                stdin_note: None,
            }
        }
    }
}
