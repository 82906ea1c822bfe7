//! `toolgate`: run tool calls the way Claude Code does, with policies that explain themselves.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use tool_core::{PermissionMode, ToolContext};
use tool_orchestrator::Session;
use tool_permissions::{PolicySources, TRUSTED_FILES, Trust, TrustStore, project_hash};
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

/// Where the policy comes from (see `toolgate policy lint` for what is loaded).
#[derive(clap::Args, Clone)]
struct PolicyArgs {
    /// The project (default: the current directory): its `.toolgate/policy*.toml` and
    /// `.claude/settings*.json` are the project and local layers.
    #[arg(long, alias = "workspace")]
    dir: Option<PathBuf>,
    /// A policy file for the command-line layer: TOML, or Claude Code settings JSON (by
    /// extension). May be repeated.
    #[arg(long = "policy")]
    policy: Vec<PathBuf>,
    /// A Claude Code settings file for the command-line layer (same as --policy FILE.json).
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Apply the project's own allow rules without a `toolgate trust` record.
    #[arg(long)]
    trust_project: bool,
}

impl PolicyArgs {
    /// The project in `dir` (default: the current directory) and its own files, no more.
    fn of_dir(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            policy: Vec::new(),
            settings: None,
            trust_project: false,
        }
    }

    fn workspace(&self) -> anyhow::Result<PathBuf> {
        let dir = match &self.dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()?,
        };
        std::fs::canonicalize(&dir).with_context(|| format!("the project {}", dir.display()))
    }

    fn sources(&self, ws: &std::path::Path, home: &std::path::Path) -> PolicySources {
        let mut files = self.policy.clone();
        files.extend(self.settings.clone());
        toolgate::check::sources(ws, home, &files, self.trust_project)
    }
}

/// Exit with status 1 after flushing what was printed.
/// Whether the hook loader left out hooks of an untrusted project.
fn hooks_untrusted(notes: &[String]) -> bool {
    notes.iter().any(|n| n.contains("not trusted"))
}

/// The CLI's hint when the project's own allow rules or hooks were left out because it is not
/// trusted (the library says what is wrong; the command that fixes it is the CLI's).
fn trust_hint(
    files: &tool_permissions::PolicyFiles,
    loaded: &tool_permissions::Policy,
    hooks_untrusted: bool,
) -> Option<&'static str> {
    let rules_untrusted = loaded
        .ignored_rules()
        .iter()
        .any(|i| i.entry.layer.needs_trust());
    (!files.project_trusted() && (rules_untrusted || hooks_untrusted)).then_some(
        "run `toolgate trust` to trust the project's policy as it is now (or pass --trust-project)",
    )
}

/// `println!` that ends the program quietly when nobody reads standard output any more
/// (see [`emit`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        emit(&format!($($arg)*))
    };
}

/// Say on stderr which allow rules are not applied (an untrusted project's, those toolgate
/// cannot match), how to trust the project, and what loading the hooks noticed: what `run`,
/// `check` and `policy test` decide without.
fn report_ignored(
    files: &tool_permissions::PolicyFiles,
    loaded: &tool_permissions::Policy,
    notes: &[String],
) {
    for i in loaded.ignored_rules() {
        eprintln!(
            "toolgate: allow rule `{}` ({}) not applied: {}",
            i.entry.text,
            i.entry.source(),
            i.why
        );
    }
    if let Some(hint) = trust_hint(files, loaded, hooks_untrusted(notes)) {
        eprintln!("toolgate: {hint}");
    }
    for n in notes {
        eprintln!("toolgate: {n}");
    }
}

/// Print one line of results. A reader that went away (`toolgate run ... | head`) ends the
/// program quietly, with success, instead of a panic.
fn emit(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("toolgate: cannot write the results: {e}");
        std::process::exit(1);
    }
}

fn exit_failure() -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    std::process::exit(1)
}

fn home_dir(fallback: &std::path::Path) -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| fallback.to_path_buf())
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
        #[command(flatten)]
        policy: PolicyArgs,
        /// The permission mode (default: the settings' default mode).
        #[arg(long)]
        mode: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Exit with the decision, for scripts: 0 allow, 1 ask, 2 deny (and 3 when the call
        /// cannot be decided: bad input, an unreadable policy).
        #[arg(long)]
        exit_code: bool,
        /// For Bash: also print what the analysis saw (each unit's words after expansion, its
        /// effects with the database entry behind each, and the rules that matched).
        #[arg(long)]
        explain: bool,
    },
    /// Run the built-in demo (a Read → Edit session in a temporary directory).
    Demo,
    /// A Claude Code PreToolUse hook that asks toolgate: reads the hook's JSON on stdin and
    /// answers deny or ask with toolgate's reason, or nothing when toolgate allows (Claude
    /// Code's own rules and prompts then apply). Never answers allow on an error.
    Guard {
        /// Also answer allow for calls an allow rule of the policy grants.
        #[arg(long)]
        allow: bool,
        /// Answer deny, not ask, when the call cannot be decided.
        #[arg(long)]
        fail_closed: bool,
        /// Run the Bash calls it does not deny through `toolgate sandbox` (the command is
        /// rewritten; an allowed call is answered allow, an asked one ask).
        #[arg(long)]
        sandbox: bool,
        #[command(subcommand)]
        action: Option<GuardAction>,
    },
    /// Run one shell command line in the sandbox the project's policy plans, every program it
    /// starts checked against the rules (what `toolgate guard --sandbox` runs Bash calls
    /// through). The line is decided first: a deny refuses it with exit status 126. Its exit
    /// status is the line's.
    Sandbox {
        #[command(flatten)]
        policy: PolicyArgs,
        /// The permission mode (default: the settings' default mode).
        #[arg(long)]
        mode: Option<String>,
        /// Run outside the sandbox, still supervised (a call's `dangerouslyDisableSandbox`;
        /// decided as such).
        #[arg(long)]
        dangerously_disable_sandbox: bool,
        /// The command line: one argument, or several joined with spaces.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<String>,
    },
    /// Serve the built-in tools over MCP (stdio) to any MCP client, under the project's policy
    /// and hooks: every call goes through the schema check, the hooks and the policy; a
    /// refusal or a bad input is a tool result with `isError`, and an ask goes to the client
    /// by elicitation when it offers it (else it is refused, as in a headless run).
    Mcp {
        #[command(flatten)]
        policy: PolicyArgs,
        /// The permission mode (default: the settings' default mode).
        #[arg(long)]
        mode: Option<String>,
        /// Offer only these tools (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
    },
    /// Print the tool definitions in the Messages API's `tools` format, ready to send to a
    /// model: the built-in tools, less those the policy denies as a whole.
    Tools {
        #[command(flatten)]
        policy: PolicyArgs,
        /// Offer only these tools (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
    },
    /// Run a transcript against a workspace, or an oracle scenario file in a fresh temporary
    /// layout, and print the tool_result blocks as JSON lines. A transcript is a JSON list of
    /// turns of tool_use blocks; Messages API JSON (an assistant message, a response, a
    /// `messages` list or a request body: each assistant message with tool_use blocks is a
    /// turn); or the Server-Sent Events text of a streamed response (one turn).
    Run {
        /// The transcript or scenario file.
        file: PathBuf,
        #[command(flatten)]
        policy: PolicyArgs,
        /// Offer only these tools (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
        /// The permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions).
        #[arg(long)]
        mode: Option<String>,
        /// Keep the session in FILE between invocations (its id, working directory, session
        /// approvals and what the model has read), so a host can run one turn per call.
        #[arg(long, value_name = "FILE")]
        session: Option<PathBuf>,
        /// Print the tool_result blocks as JSON lines (the default when standard output is
        /// not a terminal; on a terminal the default is a report).
        #[arg(long)]
        json: bool,
        /// Append the audit trail to FILE: one JSON line per permission decision, hook and
        /// call (see the README for the fields).
        #[arg(long, value_name = "FILE")]
        audit: Option<PathBuf>,
    },
    /// Trust the project's policy files as they are now: their allow rules apply until their
    /// content changes. Records a hash in the user layer's trust.toml.
    Trust {
        /// The project (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Forget the project's trust instead.
        #[arg(long)]
        revoke: bool,
        /// Only say whether the project is trusted (exit status 1 if not).
        #[arg(long, conflicts_with = "revoke")]
        status: bool,
    },
    /// Check or exercise the policy files.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Subcommand)]
enum GuardAction {
    /// Add `toolgate guard` as a PreToolUse hook for every tool to a Claude Code settings
    /// file, keeping the file's other content, formatting and line endings (a symbolic link is
    /// edited through); with --uninstall, take it out again. The hook runs `toolgate` found on
    /// PATH, so a project's shared settings work on every teammate's machine; --absolute-path
    /// writes this program's full path instead (user and local settings only). A project
    /// trusted with `toolgate trust` stays trusted: the trust is renewed in the same step.
    Install {
        /// The user's settings, ~/.claude/settings.json (the default).
        #[arg(long, group = "target")]
        user: bool,
        /// The project's shared settings, .claude/settings.json.
        #[arg(long, group = "target")]
        project: bool,
        /// The project's local settings, .claude/settings.local.json.
        #[arg(long, group = "target")]
        local: bool,
        /// The project (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Remove the guard instead.
        #[arg(long)]
        uninstall: bool,
        /// Install it with --allow.
        #[arg(long, conflicts_with = "uninstall")]
        allow: bool,
        /// Install it with --fail-closed.
        #[arg(long, conflicts_with = "uninstall")]
        fail_closed: bool,
        /// Install it with --sandbox.
        #[arg(long, conflicts_with = "uninstall")]
        sandbox: bool,
        /// Run this program by its full path rather than `toolgate` from PATH (not in the
        /// project's shared settings, which teammates use on their own machines).
        #[arg(long, conflicts_with_all = ["uninstall", "project"])]
        absolute_path: bool,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Load every layer and report errors (with file, line and column), rules that a broader
    /// rule shadows, allow rules that do not apply, and aliased rule families.
    Lint {
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Run the `[[tests]]` of the policy files and report each.
    Test {
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Show every rule with its list, layer, file and line; approvals saved with "always" are
    /// marked.
    List {
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Remove an approval saved with "always" from the project's .toolgate/policy.local.toml.
    Revoke {
        /// The rule, as `policy list` shows it.
        rule: String,
        /// The project (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `--tools` names only tools the registry has.
/// Start the MCP servers the policy files configure (`[mcp_servers.NAME]`) in `ws` and add
/// their tools to `registry` as `mcp__NAME__TOOL`. A server that cannot start is reported on
/// standard error and its tools are not offered; a bad configuration is an error.
async fn add_mcp_servers(
    files: &tool_permissions::PolicyFiles,
    ws: &std::path::Path,
    registry: &mut tool_core::ToolRegistry,
) -> anyhow::Result<()> {
    let (specs, notes) = tool_mcp::server_specs(files, ws)?;
    for n in notes {
        eprintln!("toolgate: {n}");
    }
    for spec in specs {
        match tool_mcp::ExternalServer::start(spec, ws).await {
            Ok(server) => {
                let (tools, notes) = server.tools().await?;
                for n in notes {
                    eprintln!("toolgate: {n}");
                }
                for t in tools {
                    registry.register(t)?;
                }
            }
            Err(e) => eprintln!("toolgate: {e}; its tools are not offered"),
        }
    }
    Ok(())
}

fn known_tools(
    registry: &tool_core::ToolRegistry,
    tools: Option<&Vec<String>>,
) -> anyhow::Result<()> {
    let Some(tools) = tools else { return Ok(()) };
    let all: Vec<&str> = registry.tools().map(|t| t.name()).collect();
    for t in tools {
        let known = registry.get(t).is_some();
        anyhow::ensure!(
            known,
            "--tools names `{t}`, which is not a tool toolgate has (its tools: {})",
            all.join(", ")
        );
    }
    Ok(())
}

/// One hook as `policy list` and `trust` show it: event, matcher, command, condition, file.
fn hook_line(h: &tool_hooks::HookListing) -> String {
    let condition = h
        .condition
        .as_ref()
        .map(|c| format!(" if {c}"))
        .unwrap_or_default();
    format!(
        "{} {}: {}{condition}  ({})",
        h.event,
        h.matcher,
        h.command,
        h.file.display()
    )
}

/// Where "always" approvals of the project in `ws` are saved.
fn saved_approvals_file(ws: &std::path::Path) -> PathBuf {
    ws.join(".toolgate/policy.local.toml")
}

/// A context for deciding about calls in `ws` under `policy`.
fn decision_context(
    ws: &std::path::Path,
    home: &std::path::Path,
    policy: &tool_permissions::Policy,
    mode: Option<&str>,
) -> anyhow::Result<ToolContext> {
    let requested = mode.map(str::parse::<PermissionMode>).transpose()?;
    // The mode is settled here (the flag, else the settings' default mode): chosen.
    let mut ctx = ToolContext::new(ws, home, ws.join(".toolgate-check-results"))
        .with_permission_mode(policy.effective_mode(requested)?);
    ctx.working_dirs
        .extend(policy.additional_directories().iter().cloned());
    Ok(ctx)
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // The guard runs once per tool call of Claude Code: it decides synchronously, without
    // starting a runtime or a log subscriber it does not need.
    if let Some(Command::Guard {
        allow,
        fail_closed,
        sandbox,
        action: None,
    }) = cli.command
    {
        return guard(allow, fail_closed, sandbox);
    }
    let result = tokio::runtime::Runtime::new()
        .context("starting the async runtime")?
        .block_on(run(cli));
    // Background commands die with this process: stop them first, so what they left in the
    // workspace is put right.
    tool_sandbox::stop_background(std::time::Duration::from_secs(10));
    result
}

/// The guard: read the hook's input (at most one byte past the limit, so an endless input
/// cannot fill memory), answer, and exit 0 whatever happened: a hook that fails makes Claude
/// Code run the call, so every failure is answered in the hook's own JSON instead.
fn guard(allow: bool, fail_closed: bool, sandbox: bool) -> anyhow::Result<()> {
    use std::io::{Read as _, Write as _};
    let mut input = Vec::new();
    let limit = toolgate::guard::MAX_INPUT_BYTES as u64 + 1;
    let read = std::io::stdin().lock().take(limit).read_to_end(&mut input);
    let home = home_dir(std::path::Path::new("/"));
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let opts = toolgate::guard::GuardOptions {
        allow,
        fail_closed,
        sandbox: sandbox
            .then(std::env::current_exe)
            .transpose()
            .ok()
            .flatten(),
    };
    let out = match read {
        Ok(_) if sandbox && opts.sandbox.is_none() => {
            toolgate::guard::cannot_decide("this program cannot find its own path", &opts)
        }
        Ok(_) => toolgate::guard::answer_bytes(&input, &home, xdg.as_deref(), opts),
        Err(e) => toolgate::guard::cannot_decide(&format!("reading the hook's input: {e}"), &opts),
    };
    if let Some(e) = out.stderr {
        let _ = writeln!(std::io::stderr(), "{e}");
    }
    if let Some(o) = out.stdout {
        let mut stdout = std::io::stdout().lock();
        // Nobody reading the answer (Claude Code went away) is not an error of the guard's.
        let _ = writeln!(stdout, "{o}").and_then(|()| stdout.flush());
    }
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let audit = match &cli.command {
        Some(Command::Run { audit: Some(f), .. }) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .with_context(|| format!("opening the audit log {}", f.display()))?,
        ),
        _ => None,
    };
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(tracing_subscriber::EnvFilter::from_env("TOOLGATE_LOG")),
        )
        .with(audit.map(tool_orchestrator::audit::AuditLayer::new))
        .init();
    match cli.command {
        Some(Command::Check {
            tool,
            input,
            policy,
            mode,
            json,
            explain,
            exit_code,
        }) => {
            let decided = (|| -> anyhow::Result<_> {
                let input: serde_json::Value =
                    serde_json::from_str(&input).context("the input is not JSON")?;
                let ws = policy.workspace()?;
                let home = home_dir(&ws);
                let files = policy.sources(&ws, &home).read()?;
                let loaded = files.policy()?;
                report_ignored(&files, &loaded, &[]);
                let ctx = decision_context(&ws, &home, &loaded, mode.as_deref())?;
                let registry = builtin_tools::registry()?;
                let d = tool_permissions::decide(&loaded, &registry, &tool, &input, &ctx)?;
                Ok((input, loaded, ctx, d))
            })();
            let (input, loaded, ctx, d) = match decided {
                Ok(x) => x,
                Err(e) if exit_code => {
                    eprintln!("Error: {e:#}");
                    std::process::exit(3);
                }
                Err(e) => return Err(e),
            };
            if json {
                outln!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                outln!("{}", d.verdict);
                if !d.message.is_empty() {
                    outln!("  message: {}", d.message);
                }
                outln!("  because: {}", d.reason);
            }
            if explain
                && tool == "Bash"
                && let Some(command) = input.get("command").and_then(serde_json::Value::as_str)
            {
                emit(loaded.explain_shell(command, &ctx).trim_end_matches('\n'));
            }
            if exit_code {
                use std::io::Write as _;
                let _ = std::io::stdout().flush();
                std::process::exit(match d.verdict {
                    tool_core::Verdict::Allow => 0,
                    tool_core::Verdict::Ask => 1,
                    tool_core::Verdict::Deny => 2,
                });
            }
            Ok(())
        }
        Some(Command::Guard {
            allow,
            fail_closed,
            sandbox,
            action: None,
        }) => guard(allow, fail_closed, sandbox),
        Some(Command::Sandbox {
            policy,
            mode,
            dangerously_disable_sandbox,
            command,
        }) => {
            let cwd = std::env::current_dir().context("the current directory")?;
            let project = match &policy.dir {
                Some(d) => d.clone(),
                None => toolgate::find_project(&cwd, &home_dir(std::path::Path::new("/"))),
            };
            let project = std::fs::canonicalize(&project)
                .with_context(|| format!("the project {}", project.display()))?;
            let mut files = policy.policy.clone();
            files.extend(policy.settings.clone());
            let run = toolgate::sandbox_cmd::SandboxRun {
                line: command.join(" "),
                project,
                cwd,
                home: home_dir(std::path::Path::new("/")),
                xdg: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
                mode: mode.as_deref().map(str::parse).transpose()?,
                files,
                let_out: dangerously_disable_sandbox,
            };
            let code = toolgate::sandbox_cmd::run(&run).await?;
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            std::process::exit(code);
        }
        Some(Command::Guard {
            action:
                Some(GuardAction::Install {
                    user: _,
                    project,
                    local,
                    dir,
                    uninstall,
                    allow,
                    fail_closed,
                    sandbox,
                    absolute_path,
                }),
            ..
        }) => {
            let args = PolicyArgs::of_dir(dir);
            let (file, ws) = if project || local {
                let ws = args.workspace()?;
                let name = if local {
                    ".claude/settings.local.json"
                } else {
                    ".claude/settings.json"
                };
                (ws.join(name), Some(ws))
            } else {
                let home = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .context("HOME is not set, so there are no user settings")?;
                (home.join(".claude/settings.json"), None)
            };
            // A project trusted as it is now stays trusted after this edit of its settings.
            let was_trusted = match &ws {
                Some(ws) => project_trusted(&args, ws)?,
                None => false,
            };
            let (changed, said) = if uninstall {
                let changed =
                    toolgate::install::edit_file(&file, toolgate::install::without_guard)?;
                let said = if !changed {
                    "no toolgate guard to remove".to_owned()
                } else if file.exists() {
                    "guard removed".to_owned()
                } else {
                    "guard removed (the file held nothing else, so it was removed)".to_owned()
                };
                (changed, said)
            } else {
                let mut command = if absolute_path {
                    let exe = std::env::current_exe().context("finding this program")?;
                    let exe = exe.to_string_lossy();
                    if exe
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
                    {
                        exe.into_owned()
                    } else {
                        format!("'{}'", exe.replace('\'', "'\\''"))
                    }
                } else {
                    if let Some(note) = path_note() {
                        eprintln!("toolgate: {note}");
                    }
                    "toolgate".to_owned()
                };
                command.push_str(" guard");
                if allow {
                    command.push_str(" --allow");
                }
                if fail_closed {
                    command.push_str(" --fail-closed");
                }
                if sandbox {
                    command.push_str(" --sandbox");
                }
                // A machine without the program (a teammate who has not installed it) must
                // not run every call unguarded: Claude Code runs a call whose hook fails to
                // start, so that failure blocks the call instead (exit 2), saying why.
                command.push_str(toolgate::install::IF_GUARD_CANNOT_RUN);
                let changed = toolgate::install::edit_file(&file, |t| {
                    toolgate::install::with_guard(t, &command)
                })?;
                let said = if changed {
                    format!("added the PreToolUse hook `{command}`")
                } else {
                    "a toolgate guard is already installed".to_owned()
                };
                (changed, said)
            };
            outln!("{}: {said}", file.display());
            if let Some(ws) = &ws
                && changed
                && was_trusted
            {
                retrust(&args, ws)?;
                outln!(
                    "{}: toolgate trust renewed (what changed: {} in {})",
                    ws.display(),
                    if uninstall {
                        "the guard hook taken out"
                    } else {
                        "the guard hook added"
                    },
                    file.display()
                );
            }
            Ok(())
        }
        Some(Command::Tools { policy, tools }) => {
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let loaded = policy.sources(&ws, &home).load()?;
            let registry = builtin_tools::registry()?;
            known_tools(&registry, tools.as_ref())?;
            let offered = |name: &str| {
                tools.as_ref().is_none_or(|t| t.iter().any(|x| x == name))
                    && !tool_core::PermissionPolicy::removes_tool(&loaded, name)
            };
            outln!(
                "{}",
                serde_json::to_string_pretty(&registry.definitions(&offered))?
            );
            Ok(())
        }
        None | Some(Command::Demo) => {
            emit(demo::run().await?.trim_end_matches('\n'));
            Ok(())
        }
        Some(Command::Trust {
            dir,
            revoke,
            status,
        }) => {
            let args = PolicyArgs::of_dir(dir);
            let ws = args.workspace()?;
            let home = home_dir(&ws);
            let sources = args.sources(&ws, &home);
            let store_path = sources.trust_store_path();
            let mut store = TrustStore::load(&store_path)?;
            let hash = project_hash(&ws)?;
            if status {
                let trusted = store.is_trusted(&hash);
                outln!(
                    "{} is {}trusted ({hash})",
                    ws.display(),
                    if trusted { "" } else { "not " }
                );
                if !trusted {
                    exit_failure();
                }
            } else if revoke {
                let had = store.revoke(&ws)?;
                outln!(
                    "{}: {}",
                    ws.display(),
                    if had {
                        "trust revoked"
                    } else {
                        "was not trusted"
                    }
                );
            } else {
                // Show what is being trusted: the files and the allow rules they carry.
                // The hash recorded is that of the content read and shown here.
                let mut untrusted = sources.clone();
                untrusted.trust = Trust::Untrusted;
                let files = untrusted.read()?;
                let loaded = files.policy()?;
                for name in TRUSTED_FILES {
                    if ws.join(name).exists() {
                        outln!("trusting {}", ws.join(name).display());
                    }
                }
                for i in loaded.ignored_rules() {
                    outln!("  allow {} ({})", i.entry.text, i.entry.source());
                }
                // The project's hooks run shell commands once trusted: show each.
                for h in tool_hooks::list_hooks(&files)?
                    .iter()
                    .filter(|h| h.file.starts_with(&ws))
                {
                    outln!("  hook  {}", hook_line(h));
                }
                // So do its MCP servers, started with every session once trusted.
                let mut as_trusted = sources.clone();
                as_trusted.trust = Trust::Trusted;
                let (servers, _) = tool_mcp::server_specs(&as_trusted.read()?, &ws)?;
                for s in servers.iter().filter(|s| s.source.starts_with(&ws)) {
                    outln!("  mcp   {}: {} {}", s.name, s.command, s.args.join(" "));
                }
                let hash = files.project_hash();
                store.record(&ws, hash)?;
                outln!("recorded {hash} in {}", store_path.display());
            }
            Ok(())
        }
        Some(Command::Policy(PolicyCommand::Lint { policy })) => {
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let files = match policy.sources(&ws, &home).read() {
                Ok(f) => f,
                Err(e) => {
                    outln!("error: {e}");
                    exit_failure();
                }
            };
            let loaded = match files.policy() {
                Ok(p) => p,
                Err(e) => {
                    outln!("error: {e}");
                    exit_failure();
                }
            };
            for (layer, file) in loaded.files() {
                outln!("loaded {layer} {}", file.display());
            }
            let (hooks, notes) = match tool_hooks::load_hooks(&files) {
                Ok(h) => h,
                Err(e) => {
                    outln!("error: {e}");
                    exit_failure();
                }
            };
            let lint = loaded.lint();
            let errors = lint
                .iter()
                .filter(|w| w.severity == tool_permissions::Severity::Error)
                .count();
            let mut warnings: Vec<String> = lint
                .iter()
                .filter(|w| w.severity == tool_permissions::Severity::Warning)
                .map(ToString::to_string)
                .collect();
            for e in lint
                .iter()
                .filter(|w| w.severity == tool_permissions::Severity::Error)
            {
                outln!("error: {e}");
            }
            let notes_untrusted = hooks_untrusted(&notes);
            warnings.extend(notes);
            for w in &warnings {
                outln!("warning: {w}");
            }
            if let Some(hint) = trust_hint(&files, &loaded, notes_untrusted) {
                outln!("hint: {hint}");
            }
            let (pre, post, failure) = hooks.counts();
            let error_count = if errors > 0 {
                format!(", {errors} errors")
            } else {
                String::new()
            };
            outln!(
                "{} rules, {} hooks, {} warnings{error_count}",
                loaded.rules().len() + loaded.ignored_rules().len(),
                pre + post + failure,
                warnings.len()
            );
            if errors > 0 {
                exit_failure();
            }
            Ok(())
        }
        Some(Command::Policy(PolicyCommand::Test { policy })) => {
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let files = policy.sources(&ws, &home).read()?;
            let loaded = files.policy()?;
            report_ignored(&files, &loaded, &[]);
            let ctx = decision_context(&ws, &home, &loaded, None)?;
            let registry = builtin_tools::registry()?;
            let report = tool_permissions::run_tests(&loaded, &registry, &ctx);
            for l in &report.lines {
                outln!("{l}");
            }
            outln!("{} passed, {} failed", report.passed, report.failed);
            if report.failed > 0 {
                exit_failure();
            }
            Ok(())
        }
        Some(Command::Policy(PolicyCommand::List { policy })) => {
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let files = policy.sources(&ws, &home).read()?;
            let loaded = files.policy()?;
            let ignored = loaded
                .ignored_rules()
                .iter()
                .map(|i| (&i.entry, Some(&i.why)));
            let rules = loaded.rules().iter().map(|e| (e, None));
            for (entry, why) in rules.chain(ignored) {
                let saved = match (&entry.file, entry.line) {
                    (Some(f), Some(l)) if tool_permissions::is_saved_approval(f, l) => {
                        "  [saved approval]"
                    }
                    _ => "",
                };
                let not_applied = why
                    .map(|w| format!("  [not applied: {w}]"))
                    .unwrap_or_default();
                emit(&format!(
                    "{:<5} {}  {}{saved}{not_applied}",
                    entry.list.to_string(),
                    entry.text,
                    entry.source()
                ));
            }
            for h in tool_hooks::list_hooks(&files)? {
                let not_run = if h.applied {
                    ""
                } else {
                    "  [not run: the project's policy is not trusted]"
                };
                outln!("hook  {}{not_run}", hook_line(&h));
            }
            Ok(())
        }
        Some(Command::Policy(PolicyCommand::Revoke { rule, dir })) => {
            let args = PolicyArgs::of_dir(dir);
            let ws = args.workspace()?;
            let file = saved_approvals_file(&ws);
            let was_trusted = project_trusted(&args, &ws)?;
            if tool_permissions::revoke_approval(&file, &rule)? {
                if was_trusted {
                    retrust(&args, &ws)?;
                }
                outln!("removed `{rule}` from {}", file.display());
                Ok(())
            } else {
                anyhow::bail!(
                    "`{rule}` is not an approval saved in {} (rules you wrote yourself are edited by hand)",
                    file.display()
                )
            }
        }
        Some(Command::Mcp {
            policy,
            mode,
            tools,
        }) => {
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let files = policy.sources(&ws, &home).read()?;
            let loaded = Arc::new(files.policy()?);
            let (hooks, notes) = tool_hooks::load_hooks(&files)?;
            // Standard output is the protocol's: what loading noticed goes to standard error.
            report_ignored(&files, &loaded, &notes);
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".local/share"));
            let session_id = format!("mcp-{}", uuid::Uuid::new_v4());
            let mut ctx = decision_context(&ws, &home, &loaded, mode.as_deref())?;
            ctx.tool_results_dir = data.join("toolgate/tool-results").join(&session_id);
            ctx.task_output_dir = ctx.tool_results_dir.with_file_name("tasks");
            ctx.session_id = session_id;
            ctx.env = Arc::new(std::env::vars().collect());
            let mut registry = builtin_tools::registry()?;
            add_mcp_servers(&files, &ws, &mut registry).await?;
            known_tools(&registry, tools.as_ref())?;
            let make = move |approver: Option<Arc<dyn tool_core::Approver>>| {
                let mut builder = Session::builder(registry.clone(), ctx.clone())
                    .policy(loaded.clone())
                    .hooks(hooks.clone());
                if let Some(t) = &tools {
                    builder = builder.offered_tools(t.clone());
                }
                if let Some(a) = approver {
                    builder = builder.approver(a);
                }
                builder.build()
            };
            tool_mcp::GatedServer::new(make).serve_stdio().await?;
            Ok(())
        }
        Some(Command::Run {
            file,
            policy,
            tools,
            mode,
            session: session_file,
            json,
            audit: _,
        }) => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            if !transcript::is_sse(&text) {
                let value: serde_json::Value = serde_json::from_str(&text)
                    .with_context(|| format!("parsing {}", file.display()))?;
                if value.get("turns").is_some()
                    && (value.get("fixture").is_some() || value.get("name").is_some())
                {
                    return run_scenario(&file).await;
                }
            }
            let turns = transcript::parse_text(&text)
                .map_err(anyhow::Error::msg)
                .with_context(|| file.display().to_string())?;
            let ws = policy.workspace()?;
            let home = home_dir(&ws);
            let files = policy.sources(&ws, &home).read()?;
            let loaded = files.policy()?;
            let (hooks, notes) = tool_hooks::load_hooks(&files)?;
            report_ignored(&files, &loaded, &notes);
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".local/share"));
            let kept = match &session_file {
                Some(f) => toolgate::session_file::SessionState::load(f, &ws)?,
                None => None,
            };
            let session_id = match &kept {
                Some(k) => k.session_id.clone(),
                None => format!("run-{}", uuid::Uuid::new_v4()),
            };
            let mut ctx = decision_context(&ws, &home, &loaded, mode.as_deref())?;
            ctx.tool_results_dir = data.join("toolgate/tool-results").join(&session_id);
            ctx.task_output_dir = ctx.tool_results_dir.with_file_name("tasks");
            ctx.session_id = session_id;
            ctx.env = Arc::new(std::env::vars().collect());
            ctx.prompt_id = Some(uuid::Uuid::new_v4().to_string());
            if let Some(k) = &kept {
                k.restore(&mut ctx);
            }
            let mut all_tools = builtin_tools::registry()?;
            add_mcp_servers(&files, &ws, &mut all_tools).await?;
            let registry = Arc::new(all_tools.clone());
            known_tools(&registry, tools.as_ref())?;
            let mut builder = Session::builder(all_tools, ctx.clone())
                .policy(Arc::new(loaded))
                .hooks(hooks);
            if let Some(t) = tools {
                builder = builder.offered_tools(t);
            }
            // On a terminal an ask becomes a question; otherwise it is refused, as headless
            // Claude Code refuses it.
            let mut approver = None;
            {
                use std::io::IsTerminal as _;
                if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
                    let trusted_before = project_trusted(&policy, &ws)?;
                    let (args, root) = (policy.clone(), ws.clone());
                    let save_to = toolgate::prompt::SaveTo {
                        file: saved_approvals_file(&ws),
                        after_save: Box::new(move || {
                            if trusted_before {
                                retrust(&args, &root).map_err(|e| {
                                    format!("the project's trust could not be renewed: {e}")
                                })?;
                            }
                            Ok(())
                        }),
                    };
                    let a = Arc::new(
                        toolgate::prompt::TerminalApprover::stdio().remembering(
                            Arc::clone(&registry),
                            ctx.clone(),
                            kept.as_ref()
                                .map(|k| k.approvals.clone())
                                .unwrap_or_default(),
                            Some(save_to),
                        ),
                    );
                    builder = builder.approver(a.clone());
                    approver = Some(a);
                }
            }
            let report = {
                use std::io::IsTerminal as _;
                !json && std::io::stdout().is_terminal()
            };
            let colour = if report && std::env::var_os("NO_COLOR").is_none() {
                toolgate::report::Colour::On
            } else {
                toolgate::report::Colour::Off
            };
            let mut summary = toolgate::report::Summary::default();
            let mut session = builder.build();
            for (i, turn) in turns.iter().enumerate() {
                let started = std::time::Instant::now();
                let out = session.run_turn(turn).await;
                let wall = started.elapsed();
                if report {
                    emit(
                        toolgate::report::turn(
                            i + 1,
                            turn,
                            &out.outcomes,
                            wall,
                            colour,
                            &mut summary,
                        )
                        .trim_end(),
                    );
                } else {
                    for r in out.user_message().tool_results() {
                        emit(&serde_json::to_string(r)?);
                    }
                }
            }
            if report {
                emit(&toolgate::report::summary(&summary, colour));
            }
            if let Some(f) = &session_file {
                let approvals = match &approver {
                    Some(a) => a.session_rules(),
                    None => kept.map(|k| k.approvals).unwrap_or_default(),
                };
                toolgate::session_file::SessionState::of(session.context(), approvals).save(f)?;
            }
            Ok(())
        }
    }
}

/// Is the project in `ws` trusted as it is now (its trust record matches its policy files)?
fn project_trusted(args: &PolicyArgs, ws: &std::path::Path) -> anyhow::Result<bool> {
    let home = home_dir(ws);
    let store = TrustStore::load(&args.sources(ws, &home).trust_store_path())?;
    Ok(store.is_trusted(&project_hash(ws)?))
}

/// Why the `toolgate` a hook command runs may not be this program: none on PATH, or another
/// one first.
fn path_note() -> Option<String> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok());
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|d| d.join("toolgate"))
        .find(|p| p.is_file());
    match found {
        None => Some(
            "no `toolgate` on PATH: the hook runs `toolgate guard`, so put this program on PATH (or install with --absolute-path into user or local settings)".to_owned(),
        ),
        Some(p) if std::fs::canonicalize(&p).ok() != me => Some(format!(
            "the `toolgate` found first on PATH is {}, not this program",
            p.display()
        )),
        Some(_) => None,
    }
}

/// Record the project's trust again after the user's own change to its policy (a saved or
/// revoked approval), so that change does not untrust the project.
fn retrust(args: &PolicyArgs, ws: &std::path::Path) -> anyhow::Result<()> {
    let home = home_dir(ws);
    let mut store = TrustStore::load(&args.sources(ws, &home).trust_store_path())?;
    store.record(ws, &project_hash(ws)?)?;
    Ok(())
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
        emit(&serde_json::to_string(r)?);
    }
    Ok(())
}
