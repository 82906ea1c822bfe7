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

/// The input as a hook sees it: a file tool's absolute path written as Node's `path.normalize`
/// writes it (`//` collapsed, `.` and `..` resolved, a trailing `/` kept), as Claude Code
/// shows it to hooks (recorded: explore seed 12, `sub//` seen as `sub/`). The tool itself
/// gets the path as the model wrote it.
fn observable(tool: &str, input: &Value) -> Value {
    let field = match tool {
        "Read" | "Edit" | "Write" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        _ => return input.clone(),
    };
    let mut out = input.clone();
    if let Some(p) = input.get(field).and_then(Value::as_str)
        && p.starts_with('/')
    {
        out[field] = Value::String(node_normalize(p));
    }
    out
}

/// Node's `path.normalize` of an absolute POSIX path.
fn node_normalize(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = format!("/{}", parts.join("/"));
    if p.ends_with('/') && out != "/" {
        out.push('/');
    }
    out
}

/// The PreToolUse input.
pub fn pre_input_json(input: &PreToolUseInput) -> String {
    let mut m = base(&input.session, HookEvent::PreToolUse);
    m.insert("tool_name".into(), Value::String(input.tool_name.clone()));
    m.insert(
        "tool_input".into(),
        observable(&input.tool_name, &input.tool_input),
    );
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
    m.insert(
        "tool_input".into(),
        observable(&input.tool_name, &input.tool_input),
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_paths_are_shown_as_node_normalizes_them() {
        for (given, shown) in [
            ("/w/sub//", "/w/sub/"),
            ("/w/./a/../b.txt", "/w/b.txt"),
            ("/w//x", "/w/x"),
            ("/..", "/"),
        ] {
            assert_eq!(node_normalize(given), shown);
        }
        let input = serde_json::json!({"file_path": "/w/sub//", "content": "x"});
        assert_eq!(observable("Write", &input)["file_path"], "/w/sub/");
        let relative = serde_json::json!({"file_path": "a//b"});
        assert_eq!(observable("Read", &relative), relative);
        let bash = serde_json::json!({"command": "cat /w//x"});
        assert_eq!(observable("Bash", &bash), bash);
    }
}
