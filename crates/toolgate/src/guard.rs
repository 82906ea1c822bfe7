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
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardOptions {
    /// Also answer allow for what an allow rule of the policy grants.
    pub allow: bool,
    /// Answer deny, not ask, when the call cannot be decided.
    pub fail_closed: bool,
}

/// What the guard prints: the hook's answer on stdout (none: no opinion) and a note on stderr.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardAnswer {
    /// The JSON answer, when there is one.
    pub stdout: Option<String>,
    /// Why the call could not be decided, when it could not.
    pub stderr: Option<String>,
}

/// The answer to one PreToolUse hook input. `home` and `xdg` say where the user's settings are.
///
/// In `bypassPermissions` mode Claude Code runs a call a hook answers ask for without asking
/// anyone, so there an ask (and an error) is answered deny: the only answer that still stops
/// the call.
pub fn answer(input: &str, home: &Path, xdg: Option<&Path>, opts: GuardOptions) -> GuardAnswer {
    let bypass = serde_json::from_str::<Value>(input).is_ok_and(|v| {
        v.get("permission_mode").and_then(Value::as_str) == Some("bypassPermissions")
    });
    const BYPASS_NOTE: &str =
        " [answered deny: in bypassPermissions mode Claude Code would run what a hook asks about]";
    match decide(input, home, xdg) {
        Ok(d) => match d.verdict {
            Verdict::Deny => GuardAnswer {
                stdout: Some(hook_output(Verdict::Deny, &reason_text(&d))),
                stderr: None,
            },
            Verdict::Ask if bypass => GuardAnswer {
                stdout: Some(hook_output(
                    Verdict::Deny,
                    &format!("{}{BYPASS_NOTE}", reason_text(&d)),
                )),
                stderr: None,
            },
            Verdict::Ask => GuardAnswer {
                stdout: Some(hook_output(Verdict::Ask, &reason_text(&d))),
                stderr: None,
            },
            Verdict::Allow if opts.allow && explicit_allow(&d) => GuardAnswer {
                stdout: Some(hook_output(Verdict::Allow, &reason_text(&d))),
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
                stdout: Some(hook_output(verdict, &reason)),
                stderr: Some(reason),
            }
        }
    }
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

fn hook_output(verdict: Verdict, reason: &str) -> String {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict.to_string(),
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// The decision for the call the hook input describes.
fn decide(input: &str, home: &Path, xdg: Option<&Path>) -> Result<Decision, String> {
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
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cwd.clone());
    let sources = PolicySources::standard(&project, home, xdg, Trust::Store);
    let policy = sources.load().map_err(|e| e.to_string())?;
    let mut ctx = ToolContext::new(&project, home, project.join(".toolgate-guard-results"));
    ctx.cwd = cwd;
    ctx.working_dirs
        .extend(policy.additional_directories().iter().cloned());
    if let Some(mode) = v
        .get("permission_mode")
        .and_then(Value::as_str)
        .and_then(|m| m.parse::<PermissionMode>().ok())
    {
        ctx.permission_mode = mode;
    }
    let registry = builtin_tools::registry().map_err(|e| e.to_string())?;
    if registry.get(tool).is_some() {
        return tool_permissions::decide(&policy, &registry, tool, &tool_input, &ctx)
            .map_err(|e| e.to_string());
    }
    // A tool toolgate does not run (WebFetch, an MCP tool): the engine decides it from its
    // name and, for WebFetch, its URL.
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
}
