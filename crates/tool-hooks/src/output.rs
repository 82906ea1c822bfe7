//! Reading what a command hook answered: its exit code, and its stdout as JSON when it is JSON
//! (then any exit code but 2 is ignored; exit code 2 blocks whatever stdout says), as Claude
//! Code reads them.

use serde_json::Value;
use tool_core::{HookDecision, HookOutcome, Verdict};

use crate::command::{Exit, RawRun};
use crate::hooks::{HookEvent, PostHookOutcome};

/// One hook's answer, whatever the event.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parsed {
    /// A permission answer and its reason (for a deny: the text the model is shown after
    /// `PreToolUse:<Tool> hook error: `).
    pub permission: Option<(Verdict, Option<String>)>,
    /// A blocking error: exit code 2, or a JSON deny or block.
    pub blocking_error: Option<String>,
    /// A replacement input (PreToolUse).
    pub updated_input: Option<Value>,
    /// Context for the model.
    pub additional_context: Option<String>,
    /// `continue: false`.
    pub prevent_continuation: bool,
    /// Its `stopReason`.
    pub stop_reason: Option<String>,
    /// A replacement output for external tools (PostToolUse).
    pub updated_mcp_output: Option<Value>,
    /// Notes for the user: what went wrong, `systemMessage`.
    pub notes: Vec<String>,
    /// Why the hook gave no usable answer, when it did not.
    pub failed: Option<String>,
}

impl Parsed {
    /// Why the hook gave no usable answer, if so.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failed.clone()
    }

    /// As a PreToolUse outcome; `hook` names the hook in explanations.
    pub(crate) fn to_pre_outcome(&self, hook: &str) -> HookOutcome {
        HookOutcome {
            decision: self
                .permission
                .as_ref()
                .map(|(verdict, reason)| HookDecision {
                    verdict: *verdict,
                    reason: reason.clone(),
                    hook: hook.to_owned(),
                }),
            updated_input: self.updated_input.clone(),
            additional_context: self.additional_context.iter().cloned().collect(),
            prevent_continuation: self.prevent_continuation,
            stop_reason: self.stop_reason.clone(),
            user_notes: self.notes.clone(),
        }
    }

    /// As a PostToolUse or PostToolUseFailure outcome.
    pub(crate) fn to_post_outcome(&self) -> PostHookOutcome {
        PostHookOutcome {
            additional_context: self.additional_context.iter().cloned().collect(),
            blocking_error: self.blocking_error.clone(),
            updated_output: self.updated_mcp_output.clone(),
            prevent_continuation: self.prevent_continuation,
            stop_reason: self.stop_reason.clone(),
            user_notes: self.notes.clone(),
        }
    }
}

fn no_stderr(stderr: &str) -> &str {
    if stderr.is_empty() {
        "No stderr output"
    } else {
        stderr
    }
}

/// Read a command hook's run for `event`.
pub(crate) fn parse_output(raw: &RawRun, event: HookEvent, command: &str) -> Parsed {
    let mut p = Parsed::default();
    p.notes.extend(raw.stdin_note.clone());
    let code = match &raw.exit {
        Exit::Code(c) => *c,
        Exit::TimedOut => {
            p.notes.push(format!(
                "Hook {command} didn't answer in time, so it didn't check this action."
            ));
            p.failed = Some("it timed out".into());
            return p;
        }
        Exit::Cancelled => {
            p.failed = Some("it was cancelled".into());
            return p;
        }
        Exit::SpawnFailed(e) => {
            p.notes.push(format!("Failed to run: {e}"));
            p.failed = Some(format!("it could not run: {e}"));
            return p;
        }
    };
    // Exit code 2 blocks whatever stdout says (a JSON allow printed by a hook that exits 2
    // is ignored, as Claude Code ignores it).
    let trimmed = raw.stdout.trim();
    if code != 2
        && trimmed.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(trimmed)
    {
        match validate(&v, event) {
            Ok(()) => read_json(&v, event, &mut p),
            Err(why) => {
                p.notes.push(format!("JSON validation failed: {why}"));
                p.failed = Some(format!("its JSON output is not valid: {why}"));
            }
        }
        return p;
    }
    match code {
        0 => {}
        2 => {
            let text = format!("[{command}]: {}", no_stderr(&raw.stderr));
            if event == HookEvent::PreToolUse {
                p.permission = Some((Verdict::Deny, Some(text.clone())));
            }
            p.blocking_error = Some(text);
        }
        other => {
            p.notes.push(format!(
                "Failed with non-blocking status code {other}: {}",
                no_stderr(&raw.stderr)
            ));
            p.failed = Some(format!("it exited with status {other}"));
        }
    }
    p
}

fn is_str(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_string)
}

fn is_bool(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_boolean)
}

/// Check the output against the hook output schema.
fn validate(v: &Value, event: HookEvent) -> Result<(), String> {
    let o = v.as_object().ok_or("the output is not an object")?;
    if !is_bool(o.get("continue")) {
        return Err("`continue` must be a boolean".into());
    }
    if !is_bool(o.get("suppressOutput")) {
        return Err("`suppressOutput` must be a boolean".into());
    }
    for key in ["stopReason", "reason", "systemMessage"] {
        if !is_str(o.get(key)) {
            return Err(format!("`{key}` must be a string"));
        }
    }
    if let Some(d) = o.get("decision")
        && !matches!(d.as_str(), Some("approve" | "block"))
    {
        return Err(format!(
            "`decision` must be \"approve\" or \"block\", not {d}"
        ));
    }
    let Some(h) = o.get("hookSpecificOutput") else {
        return Ok(());
    };
    let h = h
        .as_object()
        .ok_or("`hookSpecificOutput` must be an object")?;
    let name = h
        .get("hookEventName")
        .and_then(Value::as_str)
        .ok_or("`hookSpecificOutput.hookEventName` is required")?;
    if name != event.as_str() {
        return Err(format!(
            "Hook returned incorrect event name: expected '{}' but got '{name}'",
            event.as_str()
        ));
    }
    if !is_str(h.get("additionalContext")) {
        return Err("`hookSpecificOutput.additionalContext` must be a string".into());
    }
    if event == HookEvent::PreToolUse {
        if let Some(d) = h.get("permissionDecision")
            && !matches!(d.as_str(), Some("allow" | "deny" | "ask"))
        {
            return Err(format!(
                "`hookSpecificOutput.permissionDecision` must be \"allow\", \"deny\" or \"ask\", not {d}"
            ));
        }
        if !is_str(h.get("permissionDecisionReason")) {
            return Err("`hookSpecificOutput.permissionDecisionReason` must be a string".into());
        }
        if h.get("updatedInput").is_some_and(|u| !u.is_object()) {
            return Err("`hookSpecificOutput.updatedInput` must be an object".into());
        }
    }
    Ok(())
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// Apply valid JSON output.
fn read_json(v: &Value, event: HookEvent, p: &mut Parsed) {
    if v.get("continue").and_then(Value::as_bool) == Some(false) {
        p.prevent_continuation = true;
        p.stop_reason = text(v.get("stopReason"));
    }
    p.notes.extend(text(v.get("systemMessage")));
    let mut reason = text(v.get("reason"));
    let mut verdict = match v.get("decision").and_then(Value::as_str) {
        Some("approve") => Some(Verdict::Allow),
        Some("block") => Some(Verdict::Deny),
        _ => None,
    };
    if let Some(h) = v.get("hookSpecificOutput") {
        p.additional_context = text(h.get("additionalContext"));
        match event {
            HookEvent::PreToolUse => {
                // The specific reason replaces the top-level one, even when absent.
                let specific = text(h.get("permissionDecisionReason"));
                if let Some(d) = h.get("permissionDecision").and_then(Value::as_str) {
                    verdict = match d {
                        "allow" => Some(Verdict::Allow),
                        "ask" => Some(Verdict::Ask),
                        _ => Some(Verdict::Deny),
                    };
                    if verdict == Some(Verdict::Deny) {
                        reason = specific.or(reason);
                    } else {
                        reason = specific;
                    }
                } else {
                    reason = specific.or(reason);
                }
                p.updated_input = h.get("updatedInput").cloned();
            }
            HookEvent::PostToolUse => {
                p.updated_mcp_output = h.get("updatedMCPToolOutput").cloned();
            }
            HookEvent::PostToolUseFailure => {}
        }
    }
    match verdict {
        Some(Verdict::Deny) => {
            let why = reason.unwrap_or_else(|| "Blocked by hook".to_owned());
            if event == HookEvent::PreToolUse {
                p.permission = Some((Verdict::Deny, Some(why.clone())));
            }
            p.blocking_error = Some(why);
        }
        Some(v) if event == HookEvent::PreToolUse => p.permission = Some((v, reason)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, stdout: &str, stderr: &str) -> RawRun {
        RawRun {
            exit: Exit::Code(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            stdin_note: None,
        }
    }

    fn pre(code: i32, stdout: &str, stderr: &str) -> Parsed {
        parse_output(&run(code, stdout, stderr), HookEvent::PreToolUse, "h.sh")
    }

    #[test]
    fn exit_codes_without_json() {
        assert_eq!(pre(0, "hello", "").permission, None);
        assert_eq!(
            pre(2, "", "nope\n").permission,
            Some((Verdict::Deny, Some("[h.sh]: nope\n".into())))
        );
        assert_eq!(
            pre(2, "", "").blocking_error.as_deref(),
            Some("[h.sh]: No stderr output")
        );
        let p = pre(1, "", "trouble");
        assert_eq!(p.permission, None);
        assert!(p.failed.is_some());
        // Not JSON after all: plain text.
        assert_eq!(pre(0, "{not json", "").failed, None);
    }

    #[test]
    fn exit_code_2_blocks_whatever_stdout_says() {
        for stdout in [
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
            r#"{"decision":"approve"}"#,
            r#"{"continue":true}"#,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}"#,
            r#"{"suppressOutput":true}"#,
            r#"{"hookSpecificOutput":{"hookEventName":"Nope"}}"#,
            "{",
            "allow",
        ] {
            let p = pre(2, stdout, "blocked by hook\n");
            assert_eq!(
                p.permission,
                Some((Verdict::Deny, Some("[h.sh]: blocked by hook\n".into()))),
                "{stdout}"
            );
            assert!(p.blocking_error.is_some(), "{stdout}");
        }
    }

    #[test]
    fn json_decisions_and_reasons() {
        let deny =
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#;
        assert_eq!(
            pre(0, deny, "").permission,
            Some((Verdict::Deny, Some("Blocked by hook".into())))
        );
        // Exit code 2 wins over the JSON: its stderr is the reason.
        assert_eq!(
            pre(2, deny, "x").blocking_error.as_deref(),
            Some("[h.sh]: x")
        );
        // Any other code: the JSON wins.
        assert_eq!(
            pre(1, deny, "x").blocking_error.as_deref(),
            Some("Blocked by hook")
        );
        let ask = r#"{"reason":"top","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}"#;
        assert_eq!(pre(0, ask, "").permission, Some((Verdict::Ask, None)));
        let block = r#"{"decision":"block","reason":"frozen"}"#;
        assert_eq!(
            pre(0, block, "").permission,
            Some((Verdict::Deny, Some("frozen".into())))
        );
        let approve = r#"{"decision":"approve"}"#;
        assert_eq!(pre(0, approve, "").permission, Some((Verdict::Allow, None)));
        let wrong =
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}"#;
        let p = pre(0, wrong, "");
        assert_eq!(p.permission, None);
        assert!(p.notes[0].contains("incorrect event name"), "{:?}", p.notes);
        let bad = r#"{"decision":"maybe"}"#;
        assert!(pre(0, bad, "").failed.is_some());
        let stop = r#"{"continue":false,"stopReason":"enough","systemMessage":"hi user"}"#;
        let p = pre(0, stop, "");
        assert!(p.prevent_continuation);
        assert_eq!(p.stop_reason.as_deref(), Some("enough"));
        assert_eq!(p.notes, ["hi user"]);
    }

    #[test]
    fn post_events() {
        let ctx =
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note"}}"#;
        let p = parse_output(&run(0, ctx, ""), HookEvent::PostToolUse, "h");
        assert_eq!(p.additional_context.as_deref(), Some("note"));
        assert_eq!(p.permission, None);
        let block = r#"{"decision":"block"}"#;
        let p = parse_output(&run(0, block, ""), HookEvent::PostToolUse, "h");
        assert_eq!(p.blocking_error.as_deref(), Some("Blocked by hook"));
        assert_eq!(p.permission, None);
    }
}
