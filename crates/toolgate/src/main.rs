//! `toolgate`: run tool calls the way Claude Code does, with policies that explain themselves.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use tool_core::{PermissionMode, ToolContext};
use tool_orchestrator::Session;
use toolgate::{demo, scenario, transcript};

#[derive(Parser)]
#[command(
    name = "toolgate",
    version,
    about = "Run model tool calls safely, as Claude Code does. With no command, runs a demo."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print the permission decision for one call, and why: the rule (its file and line) or the
    /// built-in check that decided.
    Check {
        /// The tool's name, e.g. Bash.
        tool: String,
        /// The tool's input as JSON, e.g. '{"command": "curl x"}'.
        input: String,
        /// The workspace whose policy applies (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A Claude Code settings file to load as command-line policy.
        #[arg(long)]
        settings: Option<PathBuf>,
        /// The permission mode (default: the settings' defaultMode).
        #[arg(long)]
        mode: Option<String>,
        /// Apply the workspace's own allow rules.
        #[arg(long)]
        trust_project: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the built-in demo (a Read → Edit session in a temporary directory).
    Demo,
    /// Run a transcript (a JSON list of turns of tool_use blocks) against a workspace, or an
    /// oracle scenario file in a fresh temporary layout, and print the tool_result blocks as
    /// JSON lines.
    Run {
        /// The transcript or scenario file.
        file: PathBuf,
        /// The workspace (default: the current directory). Ignored for scenario files.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// A Claude Code settings file to load as command-line policy.
        #[arg(long)]
        settings: Option<PathBuf>,
        /// Offer only these tools (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
        /// The permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions).
        #[arg(long)]
        mode: Option<String>,
        /// Apply the workspace's own allow rules (its .claude/settings*.json).
        #[arg(long)]
        trust_project: bool,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("TOOLGATE_LOG"))
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Some(Command::Check {
            tool,
            input,
            dir,
            settings,
            mode,
            trust_project,
            json,
        }) => {
            let input: serde_json::Value =
                serde_json::from_str(&input).context("the input is not JSON")?;
            let ws = std::fs::canonicalize(dir.unwrap_or(std::env::current_dir()?))?;
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| ws.clone());
            let policy =
                toolgate::check::load_policy(&ws, &home, settings.as_deref(), trust_project)?;
            let mut ctx = ToolContext::new(&ws, &home, ws.join(".toolgate-check-results"));
            ctx.permission_mode = match mode {
                Some(m) => m.parse()?,
                None => policy.default_mode().unwrap_or(PermissionMode::Default),
            };
            ctx.working_dirs
                .extend(policy.additional_directories().iter().cloned());
            let registry = builtin_tools::registry()?;
            let d = toolgate::check::decide(&registry, &policy, &tool, &input, &ctx)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                println!("{}", d.verdict);
                if !d.message.is_empty() {
                    println!("  message: {}", d.message);
                }
                println!("  because: {}", d.reason);
            }
            Ok(())
        }
        None | Some(Command::Demo) => {
            print!("{}", demo::run().await?);
            Ok(())
        }
        Some(Command::Run {
            file,
            workspace,
            settings,
            tools,
            mode,
            trust_project,
        }) => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", file.display()))?;
            if value.get("turns").is_some()
                && (value.get("fixture").is_some() || value.get("name").is_some())
            {
                return run_scenario(&file).await;
            }
            let turns = transcript::parse(&value)
                .map_err(anyhow::Error::msg)
                .with_context(|| file.display().to_string())?;
            let ws = std::fs::canonicalize(workspace.unwrap_or(std::env::current_dir()?))?;
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| ws.clone());
            if let Some(s) = &settings
                && !s.exists()
            {
                bail!("settings file {} does not exist", s.display());
            }
            let policy =
                toolgate::check::load_policy(&ws, &home, settings.as_deref(), trust_project)?;
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".local/share"));
            let session_id = format!("run-{}", std::process::id());
            let mut ctx = ToolContext::new(
                &ws,
                &home,
                data.join("toolgate/tool-results").join(&session_id),
            );
            ctx.session_id = session_id;
            ctx.env = Arc::new(std::env::vars().collect());
            ctx.permission_mode = match mode {
                Some(m) => m.parse()?,
                None => policy.default_mode().unwrap_or(PermissionMode::Default),
            };
            ctx.working_dirs
                .extend(policy.additional_directories().iter().cloned());
            let mut builder =
                Session::builder(builtin_tools::registry()?, ctx).policy(Arc::new(policy));
            if let Some(t) = tools {
                builder = builder.offered_tools(t);
            }
            let mut session = builder.build();
            for turn in turns {
                let out = session.run_turn(&turn).await;
                for r in out.user_message().tool_results() {
                    println!("{}", serde_json::to_string(r)?);
                }
            }
            Ok(())
        }
    }
}

async fn run_scenario(file: &std::path::Path) -> anyhow::Result<()> {
    let s = scenario::Scenario::load(file)?;
    let layout = scenario::lay_out(&s)?;
    eprintln!(
        "scenario {} laid out in {}",
        s.name,
        layout.base().display()
    );
    let run = scenario::run(&s, &layout)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (_, r) in &run.results {
        println!("{}", serde_json::to_string(r)?);
    }
    Ok(())
}
