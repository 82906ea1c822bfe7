//! Transcripts: the `tool_use` blocks a model sent, in turns, run against a workspace.
//!
//! A transcript is one of:
//! - a JSON list of turns, each a list of blocks (`[[{tool_use}, ...], ...]`) or an object with
//!   `content` (and `before_turn`, as oracle scenarios write it);
//! - an object with `turns` (an oracle scenario);
//! - Messages API JSON: one assistant message, a response object, a `messages` list or a
//!   request body (`{"messages": [...]}`), whose assistant messages with `tool_use` blocks
//!   are the turns;
//! - a recorded stream: Server-Sent Events text of a streamed response, one turn.
//!
//! The Messages API shapes are tool-core's [`tool_core::messages`].

use std::path::Path;

use serde_json::Value;
use tool_core::messages::{AssistantMessage, MessageAssembler, StreamProgress};
use tool_core::{ToolUse, assistant_messages, parse_sse};

/// Parse a transcript given as JSON (see the module documentation for the forms). In the
/// list-of-turns and scenario forms a block without a `type` counts as a `tool_use`, a missing
/// `input` as `{}`, and a `raw_input_json` string stands for the input (as a model streaming
/// broken JSON sends it); the `before_turn` actions of a scenario are not applied here (use
/// `toolgate run` on the scenario file for that).
pub fn parse(value: &Value) -> Result<Vec<Vec<ToolUse>>, String> {
    if is_messages_api(value) {
        let messages = assistant_messages(value).map_err(|e| e.to_string())?;
        return Ok(turns_of(&messages));
    }
    let turns = match value {
        Value::Array(t) => t,
        Value::Object(o) => o
            .get("turns")
            .and_then(Value::as_array)
            .ok_or("the object has no `turns` list and is no Messages API message")?,
        _ => return Err("a transcript is a JSON list of turns".into()),
    };
    turns
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            let (blocks, _) = turn_parts(turn)
                .ok_or_else(|| format!("turn {} is not a list of blocks", i + 1))?;
            tool_uses(blocks).map_err(|e| format!("turn {}: {e}", i + 1))
        })
        .collect()
}

/// Parse a transcript file's text: Server-Sent Events of a streamed response (one turn), or
/// JSON as [`parse`] takes it.
pub fn parse_text(text: &str) -> Result<Vec<Vec<ToolUse>>, String> {
    let turns = if is_sse(text) {
        turns_of(&[assemble(text)?])
    } else {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("{}:{}: {e}", e.line(), e.column()))?;
        parse(&v)?
    };
    unique_ids(&turns)?;
    Ok(turns)
}

/// Every `tool_use` id of a conversation is unique, or the Messages API refuses the request
/// that carries them: the same error here, naming the second use as the API does (turn `t`,
/// 0-based, is message `2t + 1` after the user's first message; the block is counted among
/// the turn's tool uses).
pub fn unique_ids(turns: &[Vec<ToolUse>]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (t, turn) in turns.iter().enumerate() {
        for (b, call) in turn.iter().enumerate() {
            if !seen.insert(call.id.as_str()) {
                return Err(format!(
                    "messages.{}.content.{b}: `tool_use` ids must be unique (the id {} is used twice)",
                    2 * t + 1,
                    call.id
                ));
            }
        }
    }
    Ok(())
}

/// True when the text is Server-Sent Events rather than JSON: its first line that is not
/// blank starts with `event:`, `data:` or a `:` comment.
pub fn is_sse(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("event:") || l.starts_with("data:") || l.starts_with(':'))
}

/// The assistant message a recorded stream carries.
fn assemble(text: &str) -> Result<AssistantMessage, String> {
    let mut assembler = MessageAssembler::new();
    for event in parse_sse(text).map_err(|e| e.to_string())? {
        if let StreamProgress::Complete(m) = assembler.push(&event).map_err(|e| e.to_string())? {
            return Ok(m);
        }
    }
    Err("the stream ends without `message_stop`".into())
}

/// The turns of assistant messages: the tool uses of each message that has any.
fn turns_of(messages: &[AssistantMessage]) -> Vec<Vec<ToolUse>> {
    messages
        .iter()
        .map(|m| m.tool_uses().cloned().collect::<Vec<_>>())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether a JSON document is Messages API JSON rather than a list of turns or a scenario: an
/// object with `role` or `messages`, or a list holding a message (an object with `role`).
fn is_messages_api(value: &Value) -> bool {
    match value {
        Value::Object(o) => {
            !o.contains_key("turns") && (o.contains_key("role") || o.contains_key("messages"))
        }
        Value::Array(items) => items.iter().any(|m| m.get("role").is_some()),
        _ => false,
    }
}

/// A turn's blocks and `before_turn` actions: a turn is a list of blocks, or an object with
/// `content` (and optionally `before_turn`), as oracle scenarios write it.
pub fn turn_parts(turn: &Value) -> Option<(Vec<Value>, Vec<Value>)> {
    let list = |o: &serde_json::Map<String, Value>, k: &str| {
        o.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match turn {
        Value::Array(b) => Some((b.clone(), Vec::new())),
        Value::Object(o) => Some((list(o, "content"), list(o, "before_turn"))),
        _ => None,
    }
}

/// The `tool_use` blocks among `blocks`, read as an assistant message's content (other blocks
/// are checked and skipped). A block without a `type` counts as a `tool_use`, a missing
/// `input` as `{}`, and a `raw_input_json` string stands for the input.
pub fn tool_uses(blocks: Vec<Value>) -> Result<Vec<ToolUse>, String> {
    let content = Value::Array(blocks.into_iter().map(with_type).collect());
    let message = AssistantMessage::from_content(&content).map_err(|e| e.to_string())?;
    Ok(message.tool_uses().cloned().collect())
}

fn with_type(mut b: Value) -> Value {
    if let Value::Object(o) = &mut b {
        let kind = o
            .entry("type")
            .or_insert_with(|| Value::String("tool_use".into()));
        if kind != "tool_use" {
            return b;
        }
        if let Some(raw) = o.remove("raw_input_json") {
            o.insert("input".into(), raw);
        }
        o.entry("input")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    b
}

/// Read and parse a transcript file.
pub fn load(path: &Path) -> Result<Vec<Vec<ToolUse>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_text(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(turns: &[Vec<ToolUse>]) -> Vec<Vec<&str>> {
        turns
            .iter()
            .map(|t| t.iter().map(|c| c.id.as_str()).collect())
            .collect()
    }

    #[test]
    fn parses_lists_and_scenarios() {
        let t = parse(&json!([[{"type": "tool_use", "id": "a", "name": "Read", "input": {}}, {"type": "text", "text": "x"}], [{"id": "b", "name": "Edit"}]])).unwrap();
        assert_eq!(ids(&t), [vec!["a"], vec!["b"]]);
        assert_eq!(t[1][0].input, json!({}));
        let s = parse(&json!({"turns": [{"content": [{"type": "tool_use", "id": "k", "name": "Read", "raw_input_json": "{\"x"}], "before_turn": []}]})).unwrap();
        assert_eq!(s[0][0].input, json!("{\"x"));
        assert_eq!(
            parse(&json!("nope")).unwrap_err(),
            "a transcript is a JSON list of turns"
        );
        assert_eq!(
            parse(&json!([["x"]])).unwrap_err(),
            "turn 1: content[0] is not an object"
        );
        assert_eq!(
            parse(&json!([[{"type": "tool_use", "name": "Read", "input": {}}]])).unwrap_err(),
            "turn 1: content[0] (tool_use) has no `id`"
        );
        assert_eq!(
            parse(&json!({"x": 1})).unwrap_err(),
            "the object has no `turns` list and is no Messages API message"
        );
    }

    #[test]
    fn parses_messages_api_json() {
        let read =
            json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}});
        let glob =
            json!({"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*"}});
        let bare = json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "s"}, read, glob]});
        assert_eq!(ids(&parse(&bare).unwrap()), [vec!["t1", "t2"]]);
        let response = json!({"id": "msg", "type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [read]});
        let t = parse(&response).unwrap();
        assert_eq!(ids(&t), [vec!["t1"]]);
        assert_eq!(t[0][0].input, json!({"file_path": "/a"}));
        let messages = json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [read]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "and"}, glob]},
            {"role": "assistant", "content": "done"}
        ]);
        assert_eq!(ids(&parse(&messages).unwrap()), [vec!["t1"], vec!["t2"]]);
        let body = json!({"model": "m", "max_tokens": 9, "messages": messages});
        assert_eq!(ids(&parse(&body).unwrap()), [vec!["t1"], vec!["t2"]]);
        assert_eq!(
            parse(&json!([{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "input": {}}]}])).unwrap_err(),
            "messages[0].content[0] (tool_use) has no `name`"
        );
    }

    #[test]
    fn parses_a_recorded_stream() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_path\\\":\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"/a\\\"}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
        assert!(is_sse(sse));
        assert_eq!(
            parse_text(sse).unwrap_err(),
            "the stream ends without `message_stop`"
        );
        let full = format!("{sse}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n");
        let t = parse_text(&full).unwrap();
        assert_eq!(
            t,
            vec![vec![ToolUse::new("t1", "Read", json!({"file_path": "/a"}))]]
        );
        assert!(!is_sse("[[]]"));
        assert_eq!(
            parse_text("[[{\"id\": \"a\", \"name\": \"R\"}]]").unwrap()[0][0].id,
            "a"
        );
        assert_eq!(
            parse_text("[[").unwrap_err(),
            "1:2: EOF while parsing a list at line 1 column 2"
        );
    }

    #[test]
    fn loads_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Read", "input": {}}]}"#).unwrap();
        assert_eq!(ids(&load(&p).unwrap()), [vec!["a"]]);
        let missing = dir.path().join("none.json");
        assert!(
            load(&missing)
                .unwrap_err()
                .starts_with(&missing.display().to_string())
        );
    }
}
