//! `toolgate guard`: a Claude Code PreToolUse hook that asks toolgate's engine.
//!
//! It reads the hook's JSON on stdin, decides the call with the policy of the call's project
//! (toolgate's policy layers and the Claude Code settings of the same project and user), and
//! answers in the hook protocol: a deny or an ask with toolgate's reason, and nothing when
//! toolgate would allow, so Claude Code's own rules and prompts stay in force. With `allow`
//! set it also answers allow for calls an allow rule of the policy grants explicitly (waiving
//! Claude Code's prompt; a hook's allow never lifts Claude Code's own denies). It never
//! answers allow on an error: a malformed input or an unreadable policy gives ask (deny when
//! failing closed), with the reason on stderr.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tool_core::{
    Decision, DecisionReason, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionSubject, RuleList, ToolContext, Verdict,
};
use tool_permissions::{PolicySources, Trust};

/// How the guard answers.
#[derive(Debug, Clone, Default)]
pub struct GuardOptions {
    /// Also answer allow for what an allow rule of the policy grants.
    pub allow: bool,
    /// Answer deny, not ask, when the call cannot be decided.
    pub fail_closed: bool,
    /// Run the Bash calls it does not deny through `toolgate sandbox` (this program, at this
    /// path): an allowed call is answered allow with the command rewritten, an asked one ask
    /// with it rewritten, so what runs is sandboxed and supervised by toolgate.
    pub sandbox: Option<PathBuf>,
}

/// What the guard prints: the hook's answer on stdout (none: no opinion) and a note on stderr.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardAnswer {
    /// The JSON answer, when there is one.
    pub stdout: Option<String>,
    /// Why the call could not be decided, when it could not.
    pub stderr: Option<String>,
}

/// The answer to one PreToolUse (or PermissionRequest) hook input. `home` and `xdg` say where the user's settings are.
///
/// In `bypassPermissions` mode Claude Code runs a call a hook answers ask for without asking
/// anyone, so there an ask (and an error) is answered deny: the only answer that still stops
/// the call.
pub fn answer(input: &str, home: &Path, xdg: Option<&Path>, opts: GuardOptions) -> GuardAnswer {
    let parsed = serde_json::from_str::<Value>(input).ok();
    let field = |k: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(Value::as_str)
    };
    let bypass = field("permission_mode") == Some("bypassPermissions");
    let event = match field("hook_event_name") {
        Some("PermissionRequest") => Event::PermissionRequest,
        _ => Event::PreToolUse,
    };
    const BYPASS_NOTE: &str =
        " [answered deny: in bypassPermissions mode Claude Code would run what a hook asks about]";
    match decide(input, home, xdg, opts.allow) {
        Ok(Decided {
            decision: d,
            explicit_allow,
        }) => match d.verdict {
            Verdict::Deny => GuardAnswer {
                stdout: hook_output(event, Verdict::Deny, &reason_text(&d)),
                stderr: None,
            },
            verdict @ (Verdict::Ask | Verdict::Allow)
                if event == Event::PreToolUse
                    && !(verdict == Verdict::Ask && bypass)
                    && let Some(exe) = &opts.sandbox
                    && let Some(updated) = sandboxed_input(parsed.as_ref(), exe) =>
            {
                let reason = if verdict == Verdict::Allow {
                    format!("toolgate: runs in toolgate's sandbox ({})", d.reason)
                } else {
                    reason_text(&d)
                };
                let out = json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": verdict.to_string(),
                    "permissionDecisionReason": reason,
                    "updatedInput": updated,
                }});
                GuardAnswer {
                    stdout: Some(out.to_string()),
                    stderr: None,
                }
            }
            Verdict::Ask if bypass => GuardAnswer {
                stdout: hook_output(
                    event,
                    Verdict::Deny,
                    &format!("{}{BYPASS_NOTE}", reason_text(&d)),
                ),
                stderr: None,
            },
            Verdict::Ask => GuardAnswer {
                stdout: hook_output(event, Verdict::Ask, &reason_text(&d)),
                stderr: None,
            },
            Verdict::Allow if opts.allow && explicit_allow => GuardAnswer {
                stdout: hook_output(event, Verdict::Allow, &reason_text(&d)),
                stderr: None,
            },
            Verdict::Allow => GuardAnswer::default(),
        },
        Err(why) => {
            let verdict = if opts.fail_closed || bypass {
                Verdict::Deny
            } else {
                Verdict::Ask
            };
            let reason = format!("toolgate could not decide this call: {why}");
            GuardAnswer {
                stdout: hook_output(event, verdict, &reason),
                stderr: Some(reason),
            }
        }
    }
}

/// A Bash call's input with its command run through `toolgate sandbox` (`exe`), the other
/// fields kept; `None` for any other call, or one already wrapped.
fn sandboxed_input(hook_input: Option<&Value>, exe: &Path) -> Option<Value> {
    let v = hook_input?;
    if v.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return None;
    }
    let mut input = v.get("tool_input")?.clone();
    let command = input.get("command")?.as_str()?.to_owned();
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let exe = exe.display().to_string();
    if command.starts_with(&format!("{} sandbox ", quote(&exe))) {
        return None;
    }
    let let_out = input.get("dangerouslyDisableSandbox") == Some(&Value::Bool(true));
    let flag = if let_out {
        " --dangerously-disable-sandbox"
    } else {
        ""
    };
    input["command"] = json!(format!(
        "{} sandbox{flag} -- {}",
        quote(&exe),
        quote(&command)
    ));
    Some(input)
}

/// An allow that an allow rule made (not a read inside the working directories, not a mode).
fn explicit_allow(d: &Decision) -> bool {
    matches!(
        d.reason,
        DecisionReason::Rule {
            list: RuleList::Allow,
            ..
        }
    )
}

fn reason_text(d: &Decision) -> String {
    if d.message.is_empty() {
        format!("toolgate: {}", d.reason)
    } else {
        format!("toolgate: {} ({})", d.message, d.reason)
    }
}

/// The hook's answer for `event`. A PermissionRequest hook answers the permission dialog:
/// allow or deny, and no answer for an ask (the dialog is then shown as usual).
fn hook_output(event: Event, verdict: Verdict, reason: &str) -> Option<String> {
    Some(
        match event {
            Event::PreToolUse => json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": verdict.to_string(),
                "permissionDecisionReason": reason,
            }}),
            Event::PermissionRequest => {
                let behavior = match verdict {
                    Verdict::Ask => return None,
                    v => v.to_string(),
                };
                json!({"hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": behavior, "message": reason},
                }})
            }
        }
        .to_string(),
    )
}

/// The hook events the guard answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    PreToolUse,
    PermissionRequest,
}

/// What the guard acts on: the decision, and whether the policy as toolgate trusts it
/// grants the call with an allow rule (what `--allow` may answer allow for).
struct Decided {
    decision: Decision,
    explicit_allow: bool,
}

/// The decision for the call the hook input describes.
///
/// Trust: the project's allow rules count for the guard's allow answer (`--allow`, which
/// waives Claude Code's prompt) only with a `toolgate trust` record. When Claude Code trusts
/// the project it applies those rules itself, so they also keep the guard quiet: a call they
/// allow gets no answer, and Claude Code decides it, instead of the guard asking about the
/// project's ordinary work. Trust only adds allow rules; deny and ask rules always apply.
fn decide(
    input: &str,
    home: &Path,
    xdg: Option<&Path>,
    answer_allow: bool,
) -> Result<Decided, String> {
    let v: Value =
        serde_json::from_str(input).map_err(|e| format!("the input is not JSON: {e}"))?;
    let text = |key: &str| -> Result<&str, String> {
        v.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("the input has no `{key}` string"))
    };
    let tool = text("tool_name")?;
    let cwd = PathBuf::from(text("cwd")?);
    let tool_input = v
        .get("tool_input")
        .cloned()
        .ok_or("the input has no `tool_input`")?;
    let project = crate::find_project(&cwd, home);
    let mode = v
        .get("permission_mode")
        .and_then(Value::as_str)
        .and_then(|m| m.parse::<PermissionMode>().ok());
    // Only the tool called: its schema is the only one compiled (the guard runs once per call).
    let mut registry = tool_core::ToolRegistry::new();
    for t in builtin_tools::all() {
        if t.name() == tool || t.aliases().iter().any(|a| a == tool) {
            registry.register(t).map_err(|e| e.to_string())?;
        }
    }
    let decide_with = |trust: Trust| -> Result<Decision, String> {
        let sources = PolicySources::standard(&project, home, xdg, trust);
        let policy = sources.load().map_err(|e| e.to_string())?;
        let mut ctx = ToolContext::new(&project, home, project.join(".toolgate-guard-results"));
        ctx.cwd = cwd.clone();
        ctx.working_dirs
            .extend(policy.additional_directories().iter().cloned());
        if let Some(mode) = mode {
            ctx.permission_mode = mode;
        }
        if registry.get(tool).is_some() {
            return tool_permissions::decide(&policy, &registry, tool, &tool_input, &ctx)
                .map_err(|e| e.to_string());
        }
        // A tool toolgate does not run (WebFetch, an MCP tool): the engine decides it from
        // its name and, for WebFetch, its URL.
        let subject = match (tool, tool_input.get("url").and_then(Value::as_str)) {
            ("WebFetch", Some(url)) => PermissionSubject::Url(url.to_owned()),
            _ => PermissionSubject::Nothing,
        };
        let request = PermissionRequest {
            tool_name: tool,
            input: &tool_input,
            subject: &subject,
            read_only: false,
            requires_user_interaction: false,
            ctx: &ctx,
        };
        Ok(policy.decide(&request))
    };
    let claude_trusts = crate::sandbox_cmd::claude_code_trusts(home, &project);
    if !answer_allow {
        // Only deny, ask or silence can come of it: one reading, with the project's allow
        // rules as Claude Code applies them.
        let trust = if claude_trusts {
            Trust::Trusted
        } else {
            Trust::Store
        };
        return Ok(Decided {
            decision: decide_with(trust)?,
            explicit_allow: false,
        });
    }
    let stored = decide_with(Trust::Store)?;
    let explicit_allow = stored.verdict == Verdict::Allow && explicit_allow(&stored);
    let decision = if stored.verdict != Verdict::Allow && claude_trusts {
        decide_with(Trust::Trusted)?
    } else {
        stored
    };
    Ok(Decided {
        decision,
        explicit_allow,
    })
}
