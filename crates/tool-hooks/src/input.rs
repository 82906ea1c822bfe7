//! The JSON a command hook reads on stdin, with the fields in the order Claude Code sends them
//! (absent optional fields are left out).

use serde_json::{Map, Value};

use crate::hooks::{HookEvent, HookSession, PostToolUseInput, PreToolUseInput};

fn base(session: &HookSession, event: HookEvent) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        "session_id".into(),
        Value::String(session.session_id.clone()),
    );
    if let Some(t) = &session.transcript_path {
        m.insert("transcript_path".into(), Value::String(t.clone()));
    }
    m.insert("cwd".into(), Value::String(session.cwd.clone()));
    if let Some(p) = &session.prompt_id {
        m.insert("prompt_id".into(), Value::String(p.clone()));
    }
    m.insert(
        "permission_mode".into(),
        Value::String(session.permission_mode.as_str().to_owned()),
    );
    m.insert(
        "hook_event_name".into(),
        Value::String(event.as_str().to_owned()),
    );
    m
}

/// The PreToolUse input.
pub fn pre_input_json(input: &PreToolUseInput) -> String {
    let mut m = base(&input.session, HookEvent::PreToolUse);
    m.insert("tool_name".into(), Value::String(input.tool_name.clone()));
    m.insert("tool_input".into(), input.tool_input.clone());
    m.insert(
        "tool_use_id".into(),
        Value::String(input.tool_use_id.clone()),
    );
    Value::Object(m).to_string()
}

/// The PostToolUse or PostToolUseFailure input.
pub fn post_input_json(input: &PostToolUseInput, event: HookEvent) -> String {
    let mut m = base(&input.session, event);
    m.insert("tool_name".into(), Value::String(input.tool_name.clone()));
    m.insert("tool_input".into(), input.tool_input.clone());
    if event == HookEvent::PostToolUse {
        m.insert(
            "tool_response".into(),
            input.tool_response.clone().unwrap_or(Value::Null),
        );
    }
    m.insert(
        "tool_use_id".into(),
        Value::String(input.tool_use_id.clone()),
    );
    if event == HookEvent::PostToolUseFailure {
        m.insert(
            "error".into(),
            Value::String(input.error.clone().unwrap_or_default()),
        );
        m.insert("is_interrupt".into(), Value::Bool(input.is_interrupt));
    }
    m.insert("duration_ms".into(), Value::from(input.duration_ms));
    Value::Object(m).to_string()
}
