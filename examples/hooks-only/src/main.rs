//! A host with its own way of running commands (a tower service that runs `sh -c` and keeps an
//! audit log) that wants Claude Code's hooks in front of it, and nothing else of toolgate: no
//! policy engine, no orchestrator.
//!
//! The stack is `PreToolUse` → `PostToolUse` → the host's service. A hook's deny stops the call
//! before the host's service sees it; PostToolUse texts join the result. It prints one line a
//! call, then the audit log.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    HookOutcome, Tool, ToolCallError, ToolContext, ToolInvocation, ToolOutcome, ToolOutput,
    ToolRegistry, async_trait,
};
use tool_hooks::{
    CommandSpec, HookEvent, Hooks, PostHookOutcome, PostToolUse, PostToolUseInput, PreToolUse,
    PreToolUseInput,
};
use tower::{ServiceBuilder, ServiceExt};

/// The host's shell tool: its name, schema and description, as the model is offered them.
#[derive(Debug)]
struct Shell;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShellInput {
    /// The command to run.
    command: String,
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &str {
        "Shell"
    }
    fn description(&self) -> String {
        "Runs a shell command.".into()
    }
    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<ShellInput>()
    }
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: ShellInput = tool_core::parse_input(input)?;
        let out = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&input.command)
            .current_dir(&ctx.cwd)
            .output()
            .await
            .map_err(|e| ToolCallError::new(format!("cannot run sh: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(ToolCallError::new(format!("exit {}: {stdout}", out.status)));
        }
        Ok(ToolOutput::new(json!({"stdout": stdout}), stdout))
    }
}

/// The host's own service: runs the tool and writes an audit line for every call it runs.
fn host_service(
    audit: Arc<Mutex<Vec<String>>>,
) -> impl tower::Service<
    ToolInvocation,
    Response = ToolOutcome,
    Error = tool_core::Error,
    Future = impl Send + 'static,
> + Clone
+ Send
+ 'static {
    tower::service_fn(move |inv: ToolInvocation| {
        let audit = audit.clone();
        async move {
            if let Ok(mut log) = audit.lock() {
                log.push(format!("ran {} {}", inv.tool_name(), inv.input));
            }
            let outcome = match inv.tool.tool.call(inv.input.clone(), &inv.ctx).await {
                Ok(out) => {
                    let mut o = ToolOutcome::ran(inv.tool_use_id, out.content, false);
                    o.raw_output = Some(out.raw);
                    o
                }
                Err(e) => {
                    let mut o = ToolOutcome::ran(inv.tool_use_id, e.message.clone().into(), true);
                    o.call_error = Some(e);
                    o
                }
            };
            Ok(outcome)
        }
    })
}

/// The hooks: an in-process guard, a command hook (a script reading the call's JSON on stdin,
/// blocking with exit code 2), and a PostToolUse hook that adds a note for the model.
fn hooks() -> anyhow::Result<Hooks> {
    let mut hooks = Hooks::new();
    hooks.pre_tool_use("Shell", |input: PreToolUseInput| async move {
        let command = input.tool_input["command"].as_str().unwrap_or_default();
        if command.contains("rm -rf") {
            HookOutcome::deny("recursive deletes are not allowed here")
        } else {
            HookOutcome::default()
        }
    })?;
    hooks.command_group(
        HookEvent::PreToolUse,
        "Shell",
        false,
        vec![CommandSpec::new(
            "grep -q curl && { echo 'no network from this host' >&2; exit 2; } || exit 0",
        )],
    )?;
    hooks.post_tool_use("Shell", |input: PostToolUseInput| async move {
        let bytes = input
            .tool_response
            .map_or(0, |r| r["stdout"].as_str().map_or(0, str::len));
        PostHookOutcome {
            additional_context: vec![format!("the command printed {bytes} bytes")],
            ..Default::default()
        }
    })?;
    Ok(hooks)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Shell))?;
    let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
    let hooks = Arc::new(hooks()?);
    let audit = Arc::new(Mutex::new(Vec::new()));
    let stack = ServiceBuilder::new()
        .layer(PreToolUse::new(hooks.clone()).layer())
        .layer(PostToolUse::new(hooks).layer())
        .service(host_service(audit.clone()));

    let commands = ["echo hello", "rm -rf ./build", "curl https://example.com"];
    for (i, command) in commands.iter().enumerate() {
        let tool = registry
            .get("Shell")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("Shell is not registered"))?;
        let inv = ToolInvocation::new(
            format!("toolu_{i}"),
            tool,
            json!({ "command": command }),
            ctx.child(),
        );
        let out = stack.clone().oneshot(inv).await?;
        let verdict = if out.is_error { "refused" } else { "ok" };
        println!(
            "{command}: {verdict}: {}",
            out.content.to_text().replace('\n', "\\n")
        );
    }
    let log = audit
        .lock()
        .map_err(|_| anyhow::anyhow!("audit log poisoned"))?;
    println!("audit: {}", log.join("; "));
    Ok(())
}
