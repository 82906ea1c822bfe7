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
use tool_core::{Decision, DecisionReason, PermissionMode, RuleList, ToolContext, Verdict};
use tool_permissions::{CallModel, PolicySources, Trust};

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

/// The most the guard reads from its input: a larger input is not decided (it is answered
/// as one that cannot be read). Claude Code's hook inputs are a few kilobytes.
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// The most characters of a reason the guard answers with; a longer one (a reason quoting a
/// huge command) is cut there, with a note of how much was left out.
pub const MAX_REASON_CHARS: usize = 2000;

/// The answer to one hook input given as the bytes read from standard input: what the
/// program prints. Never allows what it could not read: input that is not UTF-8, not JSON,
/// larger than [`MAX_INPUT_BYTES`] or without the fields a hook input has is answered ask
/// (deny when failing closed or in `bypassPermissions` mode), and so is a panic while
/// deciding.
pub fn answer_bytes(
    input: &[u8],
    home: &Path,
    xdg: Option<&Path>,
    opts: GuardOptions,
) -> GuardAnswer {
    if input.len() > MAX_INPUT_BYTES {
        let head = String::from_utf8_lossy(&input[..4096]);
        return unreadable(
            Event::PreToolUse,
            &format!("the input is larger than {MAX_INPUT_BYTES} bytes"),
            says_bypass(&head),
            &opts,
        );
    }
    match std::str::from_utf8(input) {
        Ok(text) => answer(text, home, xdg, opts),
        Err(e) => unreadable(
            Event::PreToolUse,
            &format!(
                "the input is not UTF-8 (an invalid byte at offset {})",
                e.valid_up_to()
            ),
            says_bypass(&String::from_utf8_lossy(input)),
            &opts,
        ),
    }
}

/// The answer to one PreToolUse (or PermissionRequest) hook input. `home` and `xdg` say where the user's settings are.
///
/// In `bypassPermissions` mode Claude Code runs a call a hook answers ask for without asking
/// anyone, so there an ask (and an error) is answered deny: the only answer that still stops
/// the call.
pub fn answer(input: &str, home: &Path, xdg: Option<&Path>, opts: GuardOptions) -> GuardAnswer {
    let parsed = match parse_input(input) {
        Ok(v) => v,
        Err(why) => return unreadable(Event::PreToolUse, &why, says_bypass(input), &opts),
    };
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        answer_parsed(&parsed, home, xdg, &opts)
    }));
    caught.unwrap_or_else(|_| {
        let bypass =
            parsed.get("permission_mode").and_then(Value::as_str) == Some("bypassPermissions");
        unreadable(
            Event::PreToolUse,
            "toolgate failed while deciding it",
            bypass,
            &opts,
        )
    })
}

/// The hook input as JSON (what the guard can read of it). JavaScript strings may hold a lone surrogate, which
/// `JSON.stringify` writes as an escape (`"\ud800"`) that is not Unicode; such an escape is
/// read as U+FFFD, the character Claude Code's runtime writes in its place when it hands the
/// string to a program or the file system, so the call is decided as it will run.
pub fn parse_input(input: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(input) {
        Ok(v) => Ok(v),
        Err(first) => {
            let repaired = replace_lone_surrogates(input);
            if repaired != input
                && let Ok(v) = serde_json::from_str::<Value>(&repaired)
            {
                return Ok(v);
            }
            Err(format!("the input is not JSON: {first}"))
        }
    }
}

/// `text` (JSON) with every `\uXXXX` escape of a surrogate that is not half of a pair
/// replaced by `\ufffd`. Text outside strings, and every other escape, is kept.
fn replace_lone_surrogates(text: &str) -> String {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                if bytes.get(i + 1) != Some(&b'u') {
                    i += 2;
                    continue;
                }
                let Some(unit) = hex4(&bytes[i + 2..]) else {
                    i += 2;
                    continue;
                };
                let low_next = || {
                    bytes.get(i + 6) == Some(&b'\\')
                        && bytes.get(i + 7) == Some(&b'u')
                        && hex4(bytes.get(i + 8..).unwrap_or_default())
                            .is_some_and(|u| (0xDC00..0xE000).contains(&u))
                };
                if (0xD800..0xDC00).contains(&unit) && low_next() {
                    i += 12;
                } else if (0xD800..0xE000).contains(&unit) {
                    out.push_str(&text[copied..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    copied = i;
                } else {
                    i += 6;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// Whether unreadable input still says its session runs in `bypassPermissions` mode (where
/// only a deny stops a call).
fn says_bypass(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("\"permission_mode\"") {
        rest = &rest[at + "\"permission_mode\"".len()..];
        let value = rest.trim_start().strip_prefix(':').map(str::trim_start);
        if value.is_some_and(|v| v.starts_with("\"bypassPermissions\"")) {
            return true;
        }
    }
    false
}

/// The answer when the guard cannot even read its input (`why`): ask, or deny when failing
/// closed.
pub fn cannot_decide(why: &str, opts: &GuardOptions) -> GuardAnswer {
    unreadable(Event::PreToolUse, why, false, opts)
}

/// The answer to input the guard cannot decide: ask, or deny when failing closed or in
/// bypass mode; the reason also on stderr.
fn unreadable(event: Event, why: &str, bypass: bool, opts: &GuardOptions) -> GuardAnswer {
    let verdict = if opts.fail_closed || bypass {
        Verdict::Deny
    } else {
        Verdict::Ask
    };
    let reason = capped(&format!("toolgate could not decide this call: {why}"));
    GuardAnswer {
        stdout: hook_output(event, verdict, &reason),
        stderr: Some(reason),
    }
}

/// `text` cut to [`MAX_REASON_CHARS`] characters.
fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_REASON_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}… [{} more bytes not shown]",
            &text[..at],
            text.len() - at
        ),
    }
}

fn answer_parsed(
    parsed: &Value,
    home: &Path,
    xdg: Option<&Path>,
    opts: &GuardOptions,
) -> GuardAnswer {
    let field = |k: &str| parsed.get(k).and_then(Value::as_str);
    let bypass = field("permission_mode") == Some("bypassPermissions");
    let event = match field("hook_event_name") {
        Some("PermissionRequest") => Event::PermissionRequest,
        _ => Event::PreToolUse,
    };
    const BYPASS_NOTE: &str =
        " [answered deny: in bypassPermissions mode Claude Code would run what a hook asks about]";
    match decide(parsed, home, xdg, opts.allow) {
        Ok(None) => GuardAnswer::default(),
        Ok(Some(Decided {
            decision: d,
            explicit_allow,
        })) => match d.verdict {
            Verdict::Deny => GuardAnswer {
                stdout: hook_output(event, Verdict::Deny, &reason_text(&d)),
                stderr: None,
            },
            verdict @ (Verdict::Ask | Verdict::Allow)
                if event == Event::PreToolUse
                    && !(verdict == Verdict::Ask && bypass)
                    && let Some(exe) = &opts.sandbox
                    && let Some(updated) = sandboxed_input(parsed, exe) =>
            {
                let reason = if verdict == Verdict::Allow {
                    capped(&format!(
                        "toolgate: runs in toolgate's sandbox ({})",
                        d.reason
                    ))
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
        Err(why) => unreadable(event, &why, bypass, opts),
    }
}

/// A Bash call's input with its command run through `toolgate sandbox` (`exe`), the other
/// fields kept; `None` for any other call, or one already wrapped.
fn sandboxed_input(v: &Value, exe: &Path) -> Option<Value> {
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
    capped(&if d.message.is_empty() {
        format!("toolgate: {}", d.reason)
    } else {
        format!("toolgate: {} ({})", d.message, d.reason)
    })
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

/// The subject of a call of an MCP tool `tool` on its path arguments: those a policy names
/// (`[mcp_servers.NAME.paths]`; the tool is found by building each configured (server, tool)
/// pair's name and comparing it whole, never by splitting `tool`), else those whose key says
/// they are paths, taken as read and written (nothing says the tool only reads). A relative
/// path is taken from the project, where the server runs.
fn mcp_path_subject(
    files: &tool_permissions::PolicyFiles,
    project: &Path,
    home: &Path,
    tool: &str,
    input: &Value,
) -> Result<Option<tool_core::PermissionSubject>, String> {
    if !tool.starts_with("mcp__") {
        return Ok(None);
    }
    let (specs, _) = tool_mcp::server_specs(files, project).map_err(|e| e.to_string())?;
    let declared = specs.iter().find_map(|s| {
        s.paths
            .iter()
            .find(|(t, _)| format!("mcp__{}__{t}", s.name) == tool)
            .map(|(_, a)| a)
    });
    // Nothing says the tool only reads.
    let (read, write) = tool_permissions::tool_path_arguments(
        input,
        declared.map(|a| (a.read.as_slice(), a.write.as_slice())),
        false,
        project,
        home,
    );
    Ok(
        match tool_core::PermissionSubject::tool_paths(read, write) {
            tool_core::PermissionSubject::Nothing => None,
            subject => Some(subject),
        },
    )
}

/// The decision for the call the hook input describes; `None` when the guard has nothing to
/// say (a tool it does not model and no rule names).
///
/// Trust: the project's allow rules count for the guard's allow answer (`--allow`, which
/// waives Claude Code's prompt) only with a `toolgate trust` record. When Claude Code trusts
/// the project it applies those rules itself, so they also keep the guard quiet: a call they
/// allow gets no answer, and Claude Code decides it, instead of the guard asking about the
/// project's ordinary work. Trust only adds allow rules; deny and ask rules always apply.
fn decide(
    v: &Value,
    home: &Path,
    xdg: Option<&Path>,
    answer_allow: bool,
) -> Result<Option<Decided>, String> {
    let text = |key: &str| -> Result<&str, String> {
        v.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("the input has no `{key}` string"))
    };
    let tool = text("tool_name")?;
    let cwd = PathBuf::from(text("cwd")?);
    if !cwd.is_absolute() {
        return Err(format!(
            "the input's `cwd` is not absolute: {}",
            cwd.display()
        ));
    }
    let tool_input = v
        .get("tool_input")
        .cloned()
        .ok_or("the input has no `tool_input`")?;
    let project = crate::find_project(&cwd, home);
    let mode = match v.get("permission_mode").and_then(Value::as_str) {
        None => None,
        // Claude Code's `auto` mode has a classifier answer the prompts a hook's ask still
        // raises, and `manual` is its alias of default: both are decided as default.
        Some("auto" | "manual") => Some(PermissionMode::Default),
        Some(m) => Some(
            m.parse::<PermissionMode>()
                .map_err(|_| format!("the input's `permission_mode` `{m}` is not a mode"))?,
        ),
    };
    let model = tool_permissions::call_model(tool);
    // Whether the call's path arguments (an MCP tool's, as the policy names them) were
    // decided on.
    let on_paths = std::cell::Cell::new(false);
    let decide_with = |trust: Trust| -> Result<Decision, String> {
        let sources = PolicySources::standard(&project, home, xdg, trust);
        let files = sources.read().map_err(|e| e.to_string())?;
        let policy = files.policy().map_err(|e| e.to_string())?;
        let mut ctx = ToolContext::new(&project, home, project.join(".toolgate-guard-results"));
        ctx.cwd = cwd.clone();
        if let Some(mode) = mode {
            ctx = ctx.with_permission_mode(mode);
        }
        if let Some(subject) = mcp_path_subject(&files, &project, home, tool, &tool_input)? {
            on_paths.set(true);
            let ctx = ctx.with_policy_defaults(&policy);
            let request = tool_core::PermissionRequest {
                tool_name: tool,
                input: &tool_input,
                subject: &subject,
                read_only: false,
                requires_user_interaction: false,
                ctx: &ctx,
            };
            return Ok(tool_core::PermissionPolicy::decide(&policy, &request));
        }
        tool_permissions::decide_call(&policy, tool, &tool_input, &ctx).map_err(|e| e.to_string())
    };
    // A tool decided by name, or WebFetch on its domain: what a rule decided is answered,
    // nothing else (the engine's default ask, or a mode's refusal of it, is Claude Code's own
    // to make); for an MCP tool, what its path arguments made of it too (a protected path
    // written asks). The tools whose input names paths or a command line are decided in full.
    let speaks = |d: &Decision| match model {
        CallModel::File { .. } | CallModel::Search { .. } | CallModel::Shell { .. } => true,
        CallModel::Url | CallModel::Named => {
            matches!(d.reason, DecisionReason::Rule { .. })
                || (on_paths.get() && matches!(d.reason, DecisionReason::Check { .. }))
        }
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
        let decision = decide_with(trust)?;
        return Ok(speaks(&decision).then_some(Decided {
            decision,
            explicit_allow: false,
        }));
    }
    let stored = decide_with(Trust::Store)?;
    let explicit_allow = stored.verdict == Verdict::Allow && explicit_allow(&stored);
    let decision = if stored.verdict != Verdict::Allow && claude_trusts {
        decide_with(Trust::Trusted)?
    } else {
        stored
    };
    Ok(speaks(&decision).then_some(Decided {
        decision,
        explicit_allow,
    }))
}
