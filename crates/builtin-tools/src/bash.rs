//! Bash: one shell process per call, in its own process group, stdout and stderr interleaved
//! into one output file; Claude Code's exit-code semantics, texts, working-directory tracking,
//! timeouts (moved to the background, or stopped) and background runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::process::{ProcessGroup, Stopped, exit_code, read_file_capped, within};
use tool_core::{ContextModifier, PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput};

/// Default timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout honoured; larger requests are reduced to it.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// How long a command moved to the background may keep running before it is stopped.
pub(crate) const BACKGROUND_LIMIT: Duration = Duration::from_secs(600);
/// How much of a failing command's output the model is shown.
pub(crate) const MAX_OUTPUT_CHARS: usize = 30_000;
/// How much output is kept at most (the rest stays in the output file).
const MAX_KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// The input of Bash.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line to run.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// A few words saying what the command does.
    #[serde(default)]
    pub description: Option<String>,
    /// Run it in the background and return at once with an id and an output file.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// Run outside the sandbox (the user is asked first, unless a rule for the command or
    /// bypass mode allows it; ignored where the policy refuses unsandboxed commands). Programs
    /// the command runs are still checked against the deny and ask rules.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

/// The Bash tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct BashTool;

impl BashTool {
    /// The tool's name.
    pub const NAME: &'static str = "Bash";
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Runs a bash command line in the working directory and returns its combined stdout and stderr. \
         The working directory carries over to the next call; environment variables do not. Prefer Read, \
         Grep and Glob for reading and searching. Use run_in_background for long-running commands."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<BashInput>()
    }

    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Bash", input, ctx).0
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.is_read_only(input)
    }

    fn is_read_only(&self, input: &Value) -> bool {
        input
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(tool_shell::is_read_only)
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        Some(30_000)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: BashInput = tool_core::parse_input(input)?;
        // The shell's directory was deleted (by an earlier command, between turns): Claude
        // Code runs nothing there and moves the shell back to the project root (recorded:
        // cwd_deleted_between_turns).
        if !ctx.cwd.exists() && ctx.project_root.is_dir() {
            return Err(ToolCallError::new(format!(
                "Working directory \"{}\" no longer exists, so this command was not run. Shell cwd recovered to \"{}\": re-issue the command if it still makes sense there.",
                ctx.cwd.display(),
                ctx.project_root.display()
            ))
            .with_cwd(ctx.project_root.clone()));
        }
        run(&input, ctx).await
    }
}

/// A stream handed back by the sandbox's launcher, for a plain launch.
#[cfg(feature = "sandbox")]
fn stdio(io: tool_sandbox::Io) -> Stdio {
    match io {
        tool_sandbox::Io::Inherit => Stdio::inherit(),
        tool_sandbox::Io::Null => Stdio::null(),
        tool_sandbox::Io::Fd(fd) => Stdio::from(fd),
    }
}

/// What a command's environment gets when the host's lacks it: a UTF-8 locale, as Claude Code
/// gives its shells (`LANG=C.UTF-8` unless `LANG` is set; recorded: programs then quote with
/// `‘…’`).
pub(crate) fn default_env(ctx: &ToolContext) -> Vec<(&'static str, &'static str)> {
    if ctx.env_var("LANG").is_some() {
        Vec::new()
    } else {
        vec![("LANG", "C.UTF-8")]
    }
}

/// Claude Code's duration words: `45s`, `2m 0s`, `1h 5m 0s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m {sec}s"),
        (h, m, sec) => format!("{h}h {m}m {sec}s"),
    }
}

/// Quote for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A background task id: `b` and eight characters.
fn task_id() -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("b{}", &u[..8])
}

/// The shell: `/bin/bash` where it exists (Claude Code's choice, and the name its error lines
/// carry), else the first `bash` on `PATH`, else `/bin/sh`.
pub(crate) fn find_shell(ctx: &ToolContext) -> PathBuf {
    let preferred = Path::new("/bin/bash");
    if preferred.is_file() {
        return preferred.to_path_buf();
    }
    let path = ctx
        .env_var("PATH")
        .map(str::to_owned)
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

fn truthy(v: Option<&str>) -> bool {
    v.is_some_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no"
        )
    })
}

/// Exit codes that are not errors for the command that ends the line.
fn exit_is_error(command: &str, code: i32) -> bool {
    if code == 0 {
        return false;
    }
    let last = line_programs(command).pop();
    match last.as_deref() {
        Some("grep" | "egrep" | "fgrep" | "rg" | "find" | "diff" | "test" | "[") => code >= 2,
        _ => true,
    }
}

/// What a PostToolUse hook gets as Bash's `tool_response` (Claude Code 2.1.332, recorded:
/// hp_bash, hp_bash_more): the output (both streams, merged), an empty error stream, and what
/// an exit code that is not an error means.
fn payload(stdout: &str, command: &str, interpretation: Option<&str>) -> serde_json::Value {
    let mut raw = json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false});
    if let Some(meaning) = interpretation {
        raw["returnCodeInterpretation"] = json!(meaning);
    }
    raw["noOutputExpected"] = json!(no_output_expected(command));
    raw
}

/// What Claude Code says a non-zero exit that is not an error means, for the command that ends
/// the line.
fn return_code_interpretation(command: &str, code: i32) -> Option<&'static str> {
    if code != 1 {
        return None;
    }
    match line_programs(command).pop().as_deref() {
        Some("grep" | "egrep" | "fgrep" | "rg") => Some("No matches found"),
        Some("find") => Some("Some directories were inaccessible"),
        Some("diff") => Some("Files differ"),
        Some("test" | "[") => Some("Condition is false"),
        _ => None,
    }
}

/// Strip leading blank lines and trailing whitespace.
fn tidy(output: &str) -> String {
    let start = output
        .char_indices()
        .find(|(_, c)| *c != '\n' && *c != '\r')
        .map_or(output.len(), |(i, _)| {
            output[..i].rfind('\n').map_or(0, |n| n + 1)
        });
    output[start..].trim_end().to_owned()
}

/// A running shell: a process group of its own, or a sandboxed command.
pub(crate) enum Child {
    Plain(ProcessGroup),
    #[cfg(feature = "sandbox")]
    Sandboxed(tool_sandbox::Running),
}

impl Child {
    async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Child::Plain(g) => g.wait().await,
            #[cfg(feature = "sandbox")]
            Child::Sandboxed(r) => Ok(r.wait().await),
        }
    }

    async fn kill_and_reap(&mut self) {
        match self {
            Child::Plain(g) => g.kill_and_reap().await,
            #[cfg(feature = "sandbox")]
            Child::Sandboxed(r) => r.kill_and_reap().await,
        }
    }

    fn detach(&mut self) {
        match self {
            Child::Plain(g) => g.detach(),
            #[cfg(feature = "sandbox")]
            Child::Sandboxed(r) => r.detach(),
        }
    }

    fn limit_in_background(
        self,
        limit: Duration,
        name: String,
        then: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        match self {
            Child::Plain(g) => g.limit_in_background(limit, name, then),
            #[cfg(feature = "sandbox")]
            Child::Sandboxed(r) => r.limit_in_background(limit, name, then),
        }
    }
}

/// A running shell with its output files. Dropping it mid-run kills the shell's whole process
/// group (the pipeline drops a call's future when the call is cancelled) and removes the files,
/// unless the command was handed to the background with [`Running::detach`].
struct Running {
    child: Child,
    files: OutputFiles,
    id: String,
    /// What the sandbox saw, for the result and the audit log.
    #[cfg(feature = "sandbox")]
    enforcement: Option<crate::sandboxed::Enforcement>,
}

/// A command's output file and the file its shell writes its last working directory to;
/// removed on drop unless kept.
pub(crate) struct OutputFiles {
    output: PathBuf,
    pub(crate) cwd_file: PathBuf,
    keep: bool,
}

impl OutputFiles {
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.output);
        let _ = std::fs::remove_file(&self.cwd_file);
    }
}

impl Drop for OutputFiles {
    fn drop(&mut self) {
        if !self.keep {
            self.remove();
        }
    }
}

impl Running {
    /// Hand the process group and its output file over to the background.
    fn detach(mut self) -> Self {
        self.child.detach();
        self.files.keep = true;
        self
    }
}

/// The one-line script the shell runs: the command through `eval`, its last working directory
/// written on exit through `cwd_to` (a redirection: `>| 'file'`, or `>&3`).
pub(crate) fn script(command: &str, cwd_to: &str) -> String {
    // One line, the command through `eval`, as Claude Code runs it: its error lines then read
    // `/bin/bash: line N:` and `/bin/bash: eval: line 1: syntax error ...` as there.
    // The directory it ends in is reported for the session. Where that fails (the command
    // deleted its own directory), `pwd`'s error is shown and a command that succeeded ends
    // with status 1, as in Claude Code (recorded: cwd_deleted_same_call). The `eval` is the
    // left side of an `&&` list, as in Claude Code's own line, so `set -e` in the command does
    // not end it (recorded: explore seed 11, `set -e; false; echo after` prints `after`).
    format!(
        "trap 'c=$?; pwd -P {cwd_to} || [ \"$c\" -ne 0 ] || exit 1' EXIT; eval {} < /dev/null && :",
        sh_quote(command)
    )
}

fn spawn(input: &BashInput, ctx: &ToolContext) -> Result<Running, ToolCallError> {
    std::fs::create_dir_all(&ctx.task_output_dir).map_err(|e| {
        ToolCallError::new(format!(
            "Cannot create {}: {e}",
            ctx.task_output_dir.display()
        ))
    })?;
    let id = task_id();
    let output = ctx.task_output_dir.join(format!("{id}.output"));
    let cwd_file = ctx.task_output_dir.join(format!("{id}.cwd"));
    let out = std::fs::File::create(&output)
        .map_err(|e| ToolCallError::new(format!("Cannot create {}: {e}", output.display())))?;
    let files = OutputFiles {
        output,
        cwd_file,
        keep: false,
    };
    let cwd = if ctx.cwd.is_dir() {
        ctx.cwd.clone()
    } else {
        ctx.project_root.clone()
    };
    #[cfg(feature = "sandbox")]
    let out = {
        let err = out
            .try_clone()
            .map_err(|e| ToolCallError::new(e.to_string()))?;
        let cwd_report = std::fs::File::create(&files.cwd_file).map_err(|e| {
            ToolCallError::new(format!("Cannot create {}: {e}", files.cwd_file.display()))
        })?;
        let streams = crate::sandboxed::Streams {
            stdin: tool_sandbox::Io::Null,
            stdout: out.into(),
            stderr: err.into(),
            fd3: Some(cwd_report.into()),
        };
        let args = vec!["-c".to_owned(), script(&input.command, ">&3")];
        let let_out = input.dangerously_disable_sandbox == Some(true);
        match crate::sandboxed::start(&input.command, args, ctx, &cwd, streams, let_out)? {
            crate::sandboxed::Started::Supervised(started) => {
                let (running, enforcement) = *started;
                return Ok(Running {
                    child: Child::Sandboxed(running),
                    files,
                    id,
                    enforcement: Some(enforcement),
                });
            }
            crate::sandboxed::Started::Unsupervised(streams) => streams,
        }
    };
    #[cfg(feature = "sandbox")]
    let (stdout, stderr) = (stdio(out.stdout), stdio(out.stderr));
    #[cfg(not(feature = "sandbox"))]
    let (stdout, stderr) = {
        let err = out
            .try_clone()
            .map_err(|e| ToolCallError::new(e.to_string()))?;
        (Stdio::from(out), Stdio::from(err))
    };
    let mut cmd = tokio::process::Command::new(find_shell(ctx));
    cmd.arg("-c")
        .arg(script(
            &input.command,
            &format!(">| {}", sh_quote(&files.cwd_file.display().to_string())),
        ))
        .current_dir(cwd)
        .env_clear()
        .envs(ctx.env.iter())
        .envs(default_env(ctx))
        .env("TOOLGATE", "1")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let group = ProcessGroup::spawn(&mut cmd)
        .map_err(|e| ToolCallError::new(format!("Cannot start the shell: {e}")))?;
    Ok(Running {
        child: Child::Plain(group),
        files,
        id,
        #[cfg(feature = "sandbox")]
        enforcement: None,
    })
}

/// Keep a background task's group alive until it ends or `limit` passes, then stop it. The
/// supervisor is a thread of its own, so it works whatever happens to the caller's runtime.
fn supervise(running: Running, limit: Duration) {
    let running = running.detach();
    let (child, cwd_file, id) = (running.child, running.files.cwd_file.clone(), running.id);
    let supervised = child.limit_in_background(limit, format!("toolgate-bash-{id}"), move || {
        let _ = std::fs::remove_file(&cwd_file);
    });
    if let Err(e) = supervised {
        tracing::error!(error = %e, "cannot supervise a background command; it runs without a limit");
    }
}

fn background_limit(ctx: &ToolContext) -> Duration {
    ctx.env_var("TOOLGATE_BASH_BACKGROUND_LIMIT_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(BACKGROUND_LIMIT, Duration::from_millis)
}

async fn run(input: &BashInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut running = spawn(input, ctx)?;
    let output_path = running.files.output.display().to_string();
    if input.run_in_background.unwrap_or(false) {
        let text = format!(
            "Command running in background with ID: {}. Output is being written to: {output_path}. You will be notified when it completes. To check interim output, use Read on that file path.",
            running.id
        );
        let mut raw = payload("", &input.command, None);
        raw["backgroundTaskId"] = json!(running.id);
        supervise(running, background_limit(ctx));
        return Ok(ToolOutput::new(raw, text));
    }
    let requested = input
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .map_or(DEFAULT_TIMEOUT_MS, |t| t as u64);
    let timeout = Duration::from_millis(requested.min(MAX_TIMEOUT_MS));
    let status = match within(timeout, &ctx.cancel, running.child.wait()).await {
        Ok(s) => s.map_err(|e| ToolCallError::new(format!("Waiting for the shell failed: {e}")))?,
        Err(Stopped::TimedOut) => return timed_out(input, ctx, running, timeout).await,
        Err(Stopped::Cancelled) => {
            running.child.kill_and_reap().await;
            running.files.remove();
            return Err(ToolCallError::interrupted());
        }
    };
    // The shell has exited: what it started in the background (the user asked for it with
    // `&`) is left alone, as a terminal would; the group is not killed on drop once reaped.
    let code = exit_code(status);
    #[allow(unused_mut)]
    let mut full = read_file_capped(&running.files.output, MAX_KEPT_BYTES);
    // What the sandbox stopped is reported after the output. Claude Code's own sandbox adds
    // its block to the end of the error stream, which for a successful command follows the
    // trimmed output on a line of its own and for a failed one follows it as it is (recorded:
    // sb_network); a program the supervisor stopped (toolgate's alone) is reported on a line
    // after the trimmed output, as `toolgate sandbox` under Claude Code shows it (recorded:
    // gd_sandbox_script_rm).
    #[cfg(feature = "sandbox")]
    if let (Some(e), Child::Sandboxed(r)) = (&running.enforcement, &running.child) {
        let report = r.report();
        let block = e.report(&report);
        if !block.is_empty() {
            if !report.stops.is_empty() || !exit_is_error(&input.command, code) {
                full.truncate(full.trim_end().len());
            }
            full.push_str(&block);
        }
    }
    let new_cwd = std::fs::read_to_string(&running.files.cwd_file)
        .ok()
        .map(|s| PathBuf::from(s.trim_end_matches('\n')));
    running.files.remove();
    if exit_is_error(&input.command, code) {
        let shown: String = full.chars().take(MAX_OUTPUT_CHARS).collect();
        let shown = tidy(&shown);
        let text = if shown.is_empty() {
            format!("Exit code {code}")
        } else {
            format!("Exit code {code}\n{shown}")
        };
        return Err(ToolCallError::new(text));
    }
    let mut text = tidy(&full);
    let mut out = ToolOutput::new(
        payload(
            &text,
            &input.command,
            return_code_interpretation(&input.command, code),
        ),
        String::new(),
    );
    // Output the session will keep in a file: the hooks get its first 30,000 characters, where
    // it went (filled in by the result policy, which writes it) and its size (recorded:
    // hp_bash_more).
    if text.encode_utf16().count() > MAX_OUTPUT_CHARS {
        let units: Vec<u16> = text.encode_utf16().take(MAX_OUTPUT_CHARS).collect();
        out.raw["stdout"] = json!(String::from_utf16_lossy(&units));
        out.raw[tool_core::result::PERSISTED_PATH_KEY] = json!("");
        out.raw["persistedOutputSize"] = json!(full.len());
    }
    if let Some(new_cwd) = new_cwd.filter(|c| c.is_absolute() && *c != ctx.cwd) {
        let old = ctx.cwd.clone();
        let target = if ctx.is_in_working_dirs(&new_cwd) {
            new_cwd
        } else {
            let reset = format!("Shell cwd was reset to {}", ctx.project_root.display());
            // The hooks see the notice as the error stream (recorded: hp_bash).
            out.raw["stderr"] = json!(format!("\n{reset}"));
            text = join_nonempty(&text, &reset);
            ctx.project_root.clone()
        };
        // The session reminds the model of the new directory after the turn's last result.
        if target != old {
            out.context_modifiers
                .push(ContextModifier::new(move |c: &mut ToolContext| {
                    c.cwd = target
                }));
        }
    }
    // What the command showed of a file counts as a read of it; what it rewrote of the files
    // read is said (Claude Code 2.1.332; recorded: br_*).
    if code == 0 {
        crate::bash_reads::record_reads(&input.command, ctx);
    }
    if let Some(note) = crate::bash_reads::modified_note(&input.command, started_ms, ctx) {
        text = join_nonempty(&text, &note);
    }
    out.content = text.into();
    Ok(out)
}

fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}\n{b}"),
    }
}

/// A command that outlived its timeout: moved to the background, as Claude Code does, unless
/// background tasks are disabled or the command starts with `sleep`; then it is stopped.
async fn timed_out(
    input: &BashInput,
    ctx: &ToolContext,
    mut running: Running,
    timeout: Duration,
) -> Result<ToolOutput, ToolCallError> {
    let starts_with_sleep =
        line_programs(&input.command).first().map(String::as_str) == Some("sleep");
    let disabled = truthy(ctx.env_var("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"))
        || truthy(ctx.env_var("TOOLGATE_DISABLE_BACKGROUND_TASKS"));
    let so_far = tidy(&read_file_capped(
        &running.files.output,
        MAX_OUTPUT_CHARS as u64,
    ));
    let took = format_duration(timeout);
    if disabled || starts_with_sleep {
        running.child.kill_and_reap().await;
        running.files.remove();
        return Err(ToolCallError::new(join_nonempty(
            &format!("Exit code 143\nCommand timed out after {took}"),
            &so_far,
        )));
    }
    let path = running.files.output.display().to_string();
    let note = format!(
        "Command did not complete within its {took} timeout and was moved to the background (ID: {}). Output is being written to: {path}. You will be notified when it completes. If it is still running after {} in the background, it will be stopped and you will be notified. It is running now: do not start a second copy while it runs. If it is no longer needed, stop it with TaskStop. To check interim output, use Read on that file path.",
        running.id,
        format_duration(background_limit(ctx)).replace(" 0s", "")
    );
    let mut raw = payload(&so_far, &input.command, None);
    raw["backgroundTaskId"] = json!(running.id);
    raw["timedOutAfterMs"] = json!(timeout.as_millis() as u64);
    supervise(running, background_limit(ctx));
    Ok(ToolOutput::new(raw, join_nonempty(&so_far, &note)))
}

/// Commands that succeed silently: a line made only of them is not expected to print.
const SILENT_COMMANDS: &[&str] = &[
    "mv", "cp", "rm", "mkdir", "rmdir", "chmod", "chown", "chgrp", "touch", "ln", "cd", "export",
    "unset", "wait",
];

/// The analysis of a line for how it runs (no file system consulted).
fn analysis(command: &str) -> tool_shell::analyze::Analysis {
    tool_shell::analyze::analyze(command, &tool_shell::analyze::ShellEnv::detached())
}

/// The programs (basenames) the line itself runs, in order; empty when it does not parse.
fn line_programs(command: &str) -> Vec<String> {
    let a = analysis(command);
    if !a.parsed {
        return Vec::new();
    }
    a.units
        .iter()
        .filter(|u| u.origin == tool_shell::analyze::Origin::Line && !u.is_bare())
        .map(|u| u.program().to_owned())
        .collect()
}

/// True when every command the line runs is one that prints nothing on success.
fn no_output_expected(command: &str) -> bool {
    let a = analysis(command);
    a.parsed
        && !a.units.is_empty()
        && a.units.iter().all(|u| {
            u.origin == tool_shell::analyze::Origin::Line
                && u.argv
                    .first()
                    .is_some_and(|n| SILENT_COMMANDS.contains(&n.as_str()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(format_duration(Duration::from_millis(1000)), "1s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m 0s");
        assert_eq!(format_duration(Duration::from_secs(3725)), "1h 2m 5s");
    }

    #[test]
    fn exit_code_semantics() {
        assert!(!exit_is_error("grep x f", 1));
        assert!(exit_is_error("grep x f", 2));
        assert!(!exit_is_error("ls | diff a b", 1));
        assert!(
            exit_is_error("diff a b | cat", 1),
            "the last command decides"
        );
        assert!(exit_is_error("false", 1));
        assert!(!exit_is_error("true", 0));
    }

    #[test]
    fn tidy_trims_like_claude_code() {
        assert_eq!(tidy("\n\n  x\ny  \n\n"), "  x\ny");
        assert_eq!(tidy("x\n\n\n"), "x");
        assert_eq!(tidy(""), "");
    }
}
