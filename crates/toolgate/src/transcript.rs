//! Transcripts: a JSON list of turns, each a list of `tool_use` blocks, run against a
//! workspace.

use std::path::Path;

use serde_json::Value;
use tool_core::ToolUse;

/// Parse a transcript: `[[{tool_use}, ...], ...]`. Non-`tool_use` blocks are skipped. An
/// object with `turns` (an oracle scenario) is also accepted; its `before_turn` actions are
/// not applied here (use `toolgate run` on the scenario file for that).
pub fn parse(value: &Value) -> Result<Vec<Vec<ToolUse>>, String> {
    let turns = match value {
        Value::Array(t) => t.clone(),
        Value::Object(o) => o
            .get("turns")
            .and_then(Value::as_array)
            .cloned()
            .ok_or("the object has no `turns` list")?,
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

/// The `tool_use` blocks among `blocks` (a block without a `type` counts as one); a
/// `raw_input_json` string stands for the input, as a model streaming broken JSON sends it.
pub fn tool_uses(blocks: Vec<Value>) -> Result<Vec<ToolUse>, String> {
    blocks
        .into_iter()
        .filter(|b| {
            b.get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "tool_use")
        })
        .map(|b| serde_json::from_value::<ToolUse>(with_type(b)).map_err(|e| e.to_string()))
        .collect()
}

fn with_type(mut b: Value) -> Value {
    if let Value::Object(o) = &mut b {
        o.entry("type")
            .or_insert_with(|| Value::String("tool_use".into()));
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
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
    parse(&v).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_lists_and_scenarios() {
        let t = parse(&json!([[{"type": "tool_use", "id": "a", "name": "Read", "input": {}}, {"type": "text", "text": "x"}], [{"id": "b", "name": "Edit", "input": {}}]])).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1][0].id, "b");
        let s = parse(&json!({"turns": [{"content": [{"type": "tool_use", "id": "k", "name": "Read", "raw_input_json": "{\"x"}]}]})).unwrap();
        assert_eq!(s[0][0].input, json!("{\"x"));
        assert!(parse(&json!("nope")).is_err());
        assert!(parse(&json!([["x"]])).is_err());
    }
}
