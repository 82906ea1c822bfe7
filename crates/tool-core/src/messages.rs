//! The assistant side of the Messages API: the content blocks of an assistant message, parsing
//! a response (or a conversation) into tool uses, assembling a message from the streamed
//! events, and building the user message that answers it.
//!
//! An assistant message holds `text` blocks, `tool_use` blocks, and blocks the tool layer does
//! not read (`thinking`, `redacted_thinking`, server tool blocks, types added after this was
//! written). Those are kept as the exact JSON received, so a host sends them back unchanged,
//! as the API requires of thinking blocks.
//!
//! A response parsed into tool uses:
//!
//! ```
//! use serde_json::json;
//! use tool_core::messages::AssistantMessage;
//!
//! let response = json!({
//!     "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
//!     "content": [
//!         {"type": "thinking", "thinking": "Look first.", "signature": "c2ln"},
//!         {"type": "text", "text": "Reading it."},
//!         {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}}
//!     ]
//! });
//! let message = AssistantMessage::from_value(&response).unwrap();
//! let calls: Vec<_> = message.tool_uses().collect();
//! assert_eq!(calls[0].name, "Read");
//! assert_eq!(message.stop_reason.as_deref(), Some("tool_use"));
//! // The thinking block goes back exactly as it came.
//! assert_eq!(serde_json::to_value(&message).unwrap()["content"], response["content"]);
//! ```
//!
//! The same message assembled from a stream; each tool use is handed over as soon as its block
//! stops, before the message ends:
//!
//! ```
//! use tool_core::messages::{MessageAssembler, StreamProgress, parse_sse};
//!
//! let sse = "event: message_start\n\
//! data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null}}\n\n\
//! event: content_block_start\n\
//! data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":{}}}\n\n\
//! event: content_block_delta\n\
//! data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_pa\"}}\n\n\
//! event: content_block_delta\n\
//! data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"th\\\": \\\"/a\\\"}\"}}\n\n\
//! event: content_block_stop\n\
//! data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
//! event: message_delta\n\
//! data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null}}\n\n\
//! event: message_stop\n\
//! data: {\"type\":\"message_stop\"}\n\n";
//!
//! let mut assembler = MessageAssembler::new();
//! let mut ready = Vec::new();
//! let mut message = None;
//! for event in parse_sse(sse).unwrap() {
//!     match assembler.push(&event).unwrap() {
//!         StreamProgress::ToolUseReady(call) => ready.push(call),
//!         StreamProgress::Complete(m) => message = Some(m),
//!         StreamProgress::Pending => {}
//!     }
//! }
//! assert_eq!(ready[0].input, serde_json::json!({"file_path": "/a"}));
//! assert_eq!(message.unwrap().tool_uses().count(), 1);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::Error;
use crate::wire::{ContentBlock, Role, ToolResult, ToolUse, UserMessage};

/// One block of an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantBlock {
    /// A `text` block.
    Text {
        /// The text.
        text: String,
        /// The block's other fields as received (e.g. `citations`), sent back unchanged.
        extra: Map<String, Value>,
    },
    /// A `tool_use` block: a call for the tool layer.
    ToolUse {
        /// The call.
        call: ToolUse,
        /// The block's other fields as received, sent back unchanged.
        extra: Map<String, Value>,
    },
    /// Any other block (`thinking`, `redacted_thinking`, `server_tool_use`, a type this
    /// version does not know), kept as the exact JSON received.
    Opaque(Value),
}

impl AssistantBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantBlock::Text {
            text: text.into(),
            extra: Map::new(),
        }
    }

    /// A plain `tool_use` block.
    pub fn tool_use(call: ToolUse) -> Self {
        AssistantBlock::ToolUse {
            call,
            extra: Map::new(),
        }
    }

    /// Parse one content block of an assistant message. A block of a type other than `text`
    /// and `tool_use` is kept opaque; a `text` or `tool_use` block missing a field is an error.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        parse_block(value, "the content block")
    }

    /// The call, when this is a `tool_use` block.
    pub fn as_tool_use(&self) -> Option<&ToolUse> {
        match self {
            AssistantBlock::ToolUse { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The block as the API's JSON.
    pub fn to_value(&self) -> Value {
        match self {
            AssistantBlock::Text { text, extra } => {
                let mut o = Map::new();
                o.insert("type".into(), Value::from("text"));
                o.insert("text".into(), Value::from(text.as_str()));
                o.extend(extra.clone());
                Value::Object(o)
            }
            AssistantBlock::ToolUse { call, extra } => {
                let mut o = Map::new();
                o.insert("type".into(), Value::from("tool_use"));
                o.insert("id".into(), Value::from(call.id.as_str()));
                o.insert("name".into(), Value::from(call.name.as_str()));
                o.insert("input".into(), call.input.clone());
                o.extend(extra.clone());
                Value::Object(o)
            }
            AssistantBlock::Opaque(v) => v.clone(),
        }
    }
}

impl Serialize for AssistantBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AssistantBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(deserializer)?;
        AssistantBlock::from_value(&v).map_err(serde::de::Error::custom)
    }
}

/// An assistant message: what the model answered.
///
/// It serializes as `{"role": "assistant", "content": [...]}`, the form the next request's
/// `messages` carries; `stop_reason` is the response's and is not part of that form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantMessage {
    /// The blocks, in order.
    pub content: Vec<AssistantBlock>,
    /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, ...), when known.
    pub stop_reason: Option<String>,
}

impl AssistantMessage {
    /// A message of the given blocks.
    pub fn new(content: Vec<AssistantBlock>) -> Self {
        Self {
            content,
            stop_reason: None,
        }
    }

    /// Always [`Role::Assistant`].
    pub fn role(&self) -> Role {
        Role::Assistant
    }

    /// Parse a response object (`{"type": "message", "role": "assistant", "content": [...],
    /// "stop_reason": ...}`) or a bare assistant message (`{"role": "assistant", "content":
    /// ...}`, content a string or a list of blocks).
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        parse_message(value, "the message", "")
    }

    /// Parse the `content` of an assistant message: a string (one text block) or a list of
    /// blocks.
    pub fn from_content(content: &Value) -> Result<Self, Error> {
        Ok(Self::new(parse_content(content, "content", "")?))
    }

    /// The `tool_use` blocks' calls, in block order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(AssistantBlock::as_tool_use)
    }

    /// The text blocks' texts, concatenated.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The message as the API's JSON: `{"role": "assistant", "content": [...]}`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("role".into(), Value::from("assistant"));
        o.insert(
            "content".into(),
            Value::Array(self.content.iter().map(AssistantBlock::to_value).collect()),
        );
        Value::Object(o)
    }

    /// The user message answering this one: a `tool_result` for every `tool_use`, in block
    /// order whatever the order of `results`, then the `after` blocks (hook and tool messages)
    /// as given. Fails when a `tool_use` has no result, or a result answers no `tool_use` of
    /// this message or answers one twice: the API rejects such a message.
    pub fn reply(
        &self,
        results: impl IntoIterator<Item = ToolResult>,
        after: impl IntoIterator<Item = ContentBlock>,
    ) -> Result<UserMessage, Error> {
        let mut by_id: BTreeMap<String, ToolResult> = BTreeMap::new();
        for r in results {
            if !self.tool_uses().any(|c| c.id == r.tool_use_id) {
                return Err(Error::InvalidReply(format!(
                    "a tool_result answers `{}`, which is no tool_use of the message",
                    r.tool_use_id
                )));
            }
            let id = r.tool_use_id.clone();
            if by_id.insert(id.clone(), r).is_some() {
                return Err(Error::InvalidReply(format!(
                    "two tool_results answer `{id}`"
                )));
            }
        }
        let mut ordered = Vec::with_capacity(by_id.len());
        for call in self.tool_uses() {
            let r = by_id.remove(&call.id).ok_or_else(|| {
                Error::InvalidReply(format!(
                    "tool_use `{}` ({}) has no tool_result",
                    call.id, call.name
                ))
            })?;
            ordered.push(r);
        }
        Ok(UserMessage::with_tool_results(ordered, after))
    }
}

impl Serialize for AssistantMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AssistantMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(deserializer)?;
        AssistantMessage::from_value(&v).map_err(serde::de::Error::custom)
    }
}

/// The assistant messages of a Messages API document, in order: one for a response object or
/// a bare assistant message, and every `assistant` message of a `messages` list or of a
/// request body (`{"messages": [...], ...}`). `user` messages are skipped.
pub fn assistant_messages(value: &Value) -> Result<Vec<AssistantMessage>, Error> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(list)) => list,
            Some(_) => return Err(invalid("`messages`", "is not a list")),
            None => return Ok(vec![AssistantMessage::from_value(value)?]),
        },
        _ => {
            return Err(invalid(
                "the document",
                "is neither a message, a response, a `messages` list nor a request body",
            ));
        }
    };
    let mut out = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let at = format!("messages[{i}]");
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => out.push(parse_message(m, &at, &format!("{at}."))?),
            Some("user") => {}
            Some(other) => {
                return Err(invalid(
                    &at,
                    &format!("has role `{other}` (expected `user` or `assistant`)"),
                ));
            }
            None => return Err(invalid(&at, "has no `role`")),
        }
    }
    Ok(out)
}

fn invalid(at: &str, problem: &str) -> Error {
    Error::InvalidMessage {
        at: at.to_owned(),
        problem: problem.to_owned(),
    }
}

fn parse_message(value: &Value, at: &str, prefix: &str) -> Result<AssistantMessage, Error> {
    let Value::Object(o) = value else {
        return Err(invalid(at, "is not an object"));
    };
    if let Some(t) = o.get("type")
        && t != "message"
    {
        return Err(invalid(
            at,
            &format!("has type {t} (a response has type `message`)"),
        ));
    }
    match o.get("role") {
        Some(r) if r == "assistant" => {}
        Some(r) => {
            return Err(invalid(at, &format!("has role {r} (expected `assistant`)")));
        }
        None => return Err(invalid(at, "has no `role`")),
    }
    let content = o
        .get("content")
        .ok_or_else(|| invalid(at, "has no `content`"))?;
    let stop_reason = match o.get("stop_reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid(at, "has a `stop_reason` that is not a string")),
    };
    Ok(AssistantMessage {
        content: parse_content(content, &format!("{prefix}content"), prefix)?,
        stop_reason,
    })
}

fn parse_content(content: &Value, at: &str, prefix: &str) -> Result<Vec<AssistantBlock>, Error> {
    match content {
        Value::String(s) => Ok(vec![AssistantBlock::text(s.as_str())]),
        Value::Array(blocks) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| parse_block(b, &format!("{prefix}content[{i}]")))
            .collect(),
        _ => Err(invalid(at, "is neither a string nor a list of blocks")),
    }
}

fn parse_block(value: &Value, at: &str) -> Result<AssistantBlock, Error> {
    let Value::Object(o) = value else {
        return Err(invalid(at, "is not an object"));
    };
    let kind = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err(invalid(at, "has a `type` that is not a string")),
        None => return Err(invalid(at, "has no `type`")),
    };
    let string = |key: &str| match o.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(invalid(
            at,
            &format!("({kind}) has an `{key}` that is not a string"),
        )),
        None => Err(invalid(at, &format!("({kind}) has no `{key}`"))),
    };
    let extra = |known: &[&str]| -> Map<String, Value> {
        o.iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    match kind {
        "text" => Ok(AssistantBlock::Text {
            text: string("text")?,
            extra: extra(&["type", "text"]),
        }),
        "tool_use" => {
            let id = string("id")?;
            let name = string("name")?;
            let input = o
                .get("input")
                .cloned()
                .ok_or_else(|| invalid(at, "(tool_use) has no `input`"))?;
            Ok(AssistantBlock::ToolUse {
                call: ToolUse::new(id, name, input),
                extra: extra(&["type", "id", "name", "input"]),
            })
        }
        _ => Ok(AssistantBlock::Opaque(value.clone())),
    }
}

/// What one stream event completed.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamProgress {
    /// Nothing complete yet.
    Pending,
    /// A `tool_use` block stopped: the call is complete and can start while the model still
    /// streams.
    ToolUseReady(ToolUse),
    /// `message_stop`: the whole message.
    Complete(AssistantMessage),
}

/// A block being streamed, or finished.
#[derive(Debug)]
enum Slot {
    Open {
        block: Map<String, Value>,
        /// The `partial_json` pieces so far, for a block with an `input`.
        json: Option<String>,
    },
    Done(AssistantBlock),
}

/// Assembles an assistant message from the Messages API's stream events (`message_start`,
/// `content_block_start` / `content_block_delta` / `content_block_stop`, `message_delta`,
/// `message_stop`, `ping`, `error`), given as JSON values one at a time.
///
/// A tool use's `input_json_delta` pieces are concatenated and parsed when its block stops; an
/// empty stream of pieces means the input of `content_block_start` (`{}`), and text that does
/// not parse is kept as the input string, which the schema layer reports back to the model
/// (see [`crate::schema::render_unparsable_input`]). Event types this version does not know
/// are ignored, as the API's documentation asks of clients.
#[derive(Debug, Default)]
pub struct MessageAssembler {
    events: usize,
    started: bool,
    finished: bool,
    blocks: BTreeMap<u64, Slot>,
    stop_reason: Option<String>,
}

impl MessageAssembler {
    /// An assembler waiting for the first event.
    pub fn new() -> Self {
        Self::default()
    }

    /// True once `message_stop` was seen.
    pub fn is_complete(&self) -> bool {
        self.finished
    }

    /// Take one event. Fails on an event out of order (a delta or stop for a block not
    /// started or already stopped, a block started twice, a message ending with a block still
    /// open, anything after `message_stop`), a delta that does not fit its block, a malformed
    /// event, and an `error` event (its type and message are carried).
    pub fn push(&mut self, event: &Value) -> Result<StreamProgress, Error> {
        self.events += 1;
        let kind = match event.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err(self.bad("?", "has no `type`")),
        };
        if self.finished {
            return Err(self.bad(&kind, "comes after `message_stop`"));
        }
        match kind.as_str() {
            "message_start" => {
                if self.started {
                    return Err(self.bad(&kind, "is a second `message_start`"));
                }
                self.started = true;
                if let Some(Value::String(r)) = event.pointer("/message/stop_reason") {
                    self.stop_reason = Some(r.clone());
                }
                Ok(StreamProgress::Pending)
            }
            "content_block_start" => {
                let index = self.index(&kind, event)?;
                let Some(Value::Object(block)) = event.get("content_block") else {
                    return Err(self.bad(&kind, "has no `content_block` object"));
                };
                if !block.get("type").is_some_and(Value::is_string) {
                    return Err(self.bad(&kind, "has a `content_block` without a `type`"));
                }
                if self.blocks.contains_key(&index) {
                    return Err(self.bad(&kind, &format!("starts block {index} a second time")));
                }
                let json = block.contains_key("input").then(String::new);
                self.blocks.insert(
                    index,
                    Slot::Open {
                        block: block.clone(),
                        json,
                    },
                );
                Ok(StreamProgress::Pending)
            }
            "content_block_delta" => {
                let index = self.index(&kind, event)?;
                let Some(Value::Object(delta)) = event.get("delta") else {
                    return Err(self.bad(&kind, "has no `delta` object"));
                };
                let problem = match self.blocks.get_mut(&index) {
                    None => Some(format!("is for block {index}, which was not started")),
                    Some(Slot::Done(_)) => {
                        Some(format!("is for block {index}, which already stopped"))
                    }
                    Some(Slot::Open { block, json }) => {
                        apply_delta(block, json, delta).err().map(|p| {
                            let bt = block.get("type").and_then(Value::as_str).unwrap_or("?");
                            format!("for block {index} ({bt}): {p}")
                        })
                    }
                };
                match problem {
                    Some(p) => Err(self.bad(&kind, &p)),
                    None => Ok(StreamProgress::Pending),
                }
            }
            "content_block_stop" => {
                let index = self.index(&kind, event)?;
                let (block, json) = match self.blocks.remove(&index) {
                    Some(Slot::Open { block, json }) => (block, json),
                    Some(done @ Slot::Done(_)) => {
                        self.blocks.insert(index, done);
                        return Err(self.bad(&kind, &format!("stops block {index} twice")));
                    }
                    None => {
                        return Err(self.bad(
                            &kind,
                            &format!("stops block {index}, which was not started"),
                        ));
                    }
                };
                let mut block = block;
                if let Some(raw) = json
                    && !raw.trim().is_empty()
                {
                    let input = serde_json::from_str(&raw).unwrap_or(Value::String(raw));
                    block.insert("input".into(), input);
                }
                let done = parse_block(&Value::Object(block), &format!("block {index}"))
                    .map_err(|e| self.bad(&kind, &e.to_string()))?;
                let progress = match &done {
                    AssistantBlock::ToolUse { call, .. } => {
                        StreamProgress::ToolUseReady(call.clone())
                    }
                    _ => StreamProgress::Pending,
                };
                self.blocks.insert(index, Slot::Done(done));
                Ok(progress)
            }
            "message_delta" => {
                match event.pointer("/delta/stop_reason") {
                    Some(Value::String(r)) => self.stop_reason = Some(r.clone()),
                    None | Some(Value::Null) => {}
                    Some(_) => {
                        return Err(self.bad(&kind, "has a `stop_reason` that is not a string"));
                    }
                }
                Ok(StreamProgress::Pending)
            }
            "message_stop" => {
                if let Some(open) = self
                    .blocks
                    .iter()
                    .find_map(|(i, s)| matches!(s, Slot::Open { .. }).then_some(*i))
                {
                    return Err(self.bad(&kind, &format!("comes while block {open} is open")));
                }
                self.finished = true;
                let content = std::mem::take(&mut self.blocks)
                    .into_values()
                    .filter_map(|s| match s {
                        Slot::Done(b) => Some(b),
                        Slot::Open { .. } => None,
                    })
                    .collect();
                Ok(StreamProgress::Complete(AssistantMessage {
                    content,
                    stop_reason: self.stop_reason.take(),
                }))
            }
            "error" => {
                let text = |k: &str| {
                    event
                        .get("error")
                        .and_then(|e| e.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                Err(Error::StreamError {
                    kind: text("type"),
                    message: text("message"),
                })
            }
            _ => Ok(StreamProgress::Pending),
        }
    }

    fn index(&self, kind: &str, event: &Value) -> Result<u64, Error> {
        event
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| self.bad(kind, "has no `index`"))
    }

    fn bad(&self, kind: &str, problem: &str) -> Error {
        Error::InvalidStreamEvent {
            number: self.events,
            kind: kind.to_owned(),
            problem: problem.to_owned(),
        }
    }
}

/// Apply one delta to an open block; the error names what did not fit.
fn apply_delta(
    block: &mut Map<String, Value>,
    json: &mut Option<String>,
    delta: &Map<String, Value>,
) -> Result<(), String> {
    let dtype = delta
        .get("type")
        .and_then(Value::as_str)
        .ok_or("the delta has no `type`")?;
    let piece = |key: &str| {
        delta
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("the `{dtype}` has no string `{key}`"))
    };
    let btype = block.get("type").and_then(Value::as_str).unwrap_or("");
    let (want, field, key) = match dtype {
        "text_delta" => ("text", "text", "text"),
        "thinking_delta" => ("thinking", "thinking", "thinking"),
        "signature_delta" => ("thinking", "signature", "signature"),
        "input_json_delta" => {
            let s = piece("partial_json")?;
            let buf = json
                .as_mut()
                .ok_or_else(|| format!("an `{dtype}` does not fit a block without `input`"))?;
            buf.push_str(s);
            return Ok(());
        }
        "citations_delta" => {
            if btype != "text" {
                return Err(format!("a `{dtype}` does not fit a `{btype}` block"));
            }
            let citation = delta
                .get("citation")
                .cloned()
                .ok_or("the `citations_delta` has no `citation`")?;
            match block
                .entry("citations")
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                Value::Array(list) => list.push(citation),
                _ => return Err("the block's `citations` is not a list".into()),
            }
            return Ok(());
        }
        other => return Err(format!("the delta type `{other}` is unknown")),
    };
    if btype != want {
        return Err(format!("a `{dtype}` does not fit a `{btype}` block"));
    }
    let s = piece(key)?;
    match block
        .entry(field)
        .or_insert_with(|| Value::String(String::new()))
    {
        Value::String(acc) => {
            acc.push_str(s);
            Ok(())
        }
        _ => Err(format!("the block's `{field}` is not a string")),
    }
}

/// Splits Server-Sent Events text into the events' JSON data, as it arrives in chunks.
///
/// `event:` names the event, `data:` lines (joined by newlines) carry its JSON, a blank line
/// ends it; comments (`:`), `id:` and `retry:` lines are skipped. When the data has no `type`
/// the event name is used as its `type`.
#[derive(Debug, Default)]
pub struct SseDecoder {
    pending: String,
    line: usize,
    event: Option<String>,
    data: Option<String>,
    data_line: usize,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed a chunk of the stream; returns the events it completed.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<Value>, Error> {
        self.pending.push_str(chunk);
        let mut out = Vec::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            if let Some(v) = self.line(line)? {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// End of the stream: returns the last event when it was not followed by a blank line.
    pub fn finish(mut self) -> Result<Option<Value>, Error> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty()
            && let Some(v) = self.line(rest.trim_end_matches('\r'))?
        {
            return Ok(Some(v));
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Result<Option<Value>, Error> {
        self.line += 1;
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => {
                    self.data = Some(value.to_owned());
                    self.data_line = self.line;
                }
            },
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Result<Option<Value>, Error> {
        let event = self.event.take();
        let Some(data) = self.data.take() else {
            return Ok(None);
        };
        let line = self.data_line;
        let mut value: Value = serde_json::from_str(&data).map_err(|e| Error::InvalidSse {
            line,
            problem: format!("the data is not JSON: {e}"),
        })?;
        if let (Some(name), Value::Object(o)) = (event, &mut value) {
            match o.get("type") {
                None => {
                    o.insert("type".into(), Value::String(name));
                }
                Some(t) if t.as_str() == Some(name.as_str()) => {}
                Some(t) => {
                    return Err(Error::InvalidSse {
                        line,
                        problem: format!("event `{name}` carries data of type {t}"),
                    });
                }
            }
        }
        Ok(Some(value))
    }
}

/// Split a whole Server-Sent Events text into the events' JSON data (see [`SseDecoder`]).
pub fn parse_sse(text: &str) -> Result<Vec<Value>, Error> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.feed(text)?;
    events.extend(decoder.finish()?);
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::UserContent;
    use proptest::prelude::*;
    use serde_json::json;

    fn tu(id: &str, name: &str, input: Value) -> Value {
        json!({"type": "tool_use", "id": id, "name": name, "input": input})
    }

    fn err_text<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn parses_a_response_object() {
        let r = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "stop_reason": "tool_use", "usage": {"input_tokens": 1},
            "content": [{"type": "text", "text": "a"}, tu("t1", "Read", json!({"x": 1})),
                        {"type": "text", "text": "b"}, tu("t2", "Edit", json!({}))]});
        let m = AssistantMessage::from_value(&r).unwrap();
        assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
        let ids: Vec<&str> = m.tool_uses().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2"]);
        assert_eq!(m.tool_uses().next().unwrap().input, json!({"x": 1}));
        assert_eq!(m.text(), "ab");
        assert_eq!(m.role(), Role::Assistant);
        assert_eq!(
            m.to_value(),
            json!({"role": "assistant", "content": r["content"]})
        );
    }

    #[test]
    fn parses_a_bare_message_with_string_content() {
        let m =
            AssistantMessage::from_value(&json!({"role": "assistant", "content": "hi"})).unwrap();
        assert_eq!(m.content, vec![AssistantBlock::text("hi")]);
        assert_eq!(m.stop_reason, None);
        assert_eq!(m.tool_uses().count(), 0);
        let c = AssistantMessage::from_content(&json!([tu("a", "Read", json!({}))])).unwrap();
        assert_eq!(c.tool_uses().next().unwrap().name, "Read");
    }

    #[test]
    fn parses_messages_lists_and_request_bodies() {
        let messages = json!([
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": [tu("t1", "Read", json!({}))]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
            {"role": "assistant", "content": "done"},
            {"role": "assistant", "content": [tu("t2", "Glob", json!({})), tu("t3", "Grep", json!({}))]}
        ]);
        let turns = assistant_messages(&messages).unwrap();
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[0].tool_uses().next().unwrap().id, "t1");
        assert_eq!(turns[1].text(), "done");
        assert_eq!(turns[2].tool_uses().count(), 2);
        let body = json!({"model": "m", "max_tokens": 5, "messages": messages});
        assert_eq!(assistant_messages(&body).unwrap(), turns);
        let one = assistant_messages(&json!({"role": "assistant", "content": "x"})).unwrap();
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn opaque_blocks_round_trip_exactly() {
        let text = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"redacted_thinking","data":"abc"},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"see","citations":[{"type":"char_location","cited_text":"x"}]},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a"},"caller":{"type":"direct"}},{"type":"future_block","z":1,"a":[true,null]}]}"#;
        let m: AssistantMessage = serde_json::from_str(text).unwrap();
        assert_eq!(m.tool_uses().count(), 1);
        assert!(matches!(&m.content[0], AssistantBlock::Opaque(_)));
        assert!(
            matches!(&m.content[4], AssistantBlock::Text { extra, .. } if extra.contains_key("citations"))
        );
        assert!(matches!(&m.content[6], AssistantBlock::Opaque(_)));
        assert_eq!(serde_json::to_string(&m).unwrap(), text);
        let b: AssistantBlock =
            serde_json::from_str(r#"{"type":"redacted_thinking","data":"abc"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"type":"redacted_thinking","data":"abc"}"#
        );
    }

    #[test]
    fn malformed_messages_name_what_and_where() {
        let cases = [
            (
                json!({"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "name": "R", "input": {}}]}),
                "content[1] (tool_use) has no `id`",
            ),
            (
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}),
                "content[0] (tool_use) has no `name`",
            ),
            (
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "R"}]}),
                "content[0] (tool_use) has no `input`",
            ),
            (
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "R", "input": {}}]}),
                "content[0] (tool_use) has an `id` that is not a string",
            ),
            (
                json!({"role": "assistant", "content": [{"type": "text"}]}),
                "content[0] (text) has no `text`",
            ),
            (
                json!({"role": "assistant", "content": [{"text": "a"}]}),
                "content[0] has no `type`",
            ),
            (
                json!({"role": "assistant", "content": ["a"]}),
                "content[0] is not an object",
            ),
            (
                json!({"role": "assistant", "content": 3}),
                "content is neither a string nor a list of blocks",
            ),
            (json!({"role": "assistant"}), "the message has no `content`"),
            (json!({"content": []}), "the message has no `role`"),
            (
                json!({"role": "user", "content": []}),
                "the message has role \"user\" (expected `assistant`)",
            ),
            (
                json!({"type": "error", "role": "assistant", "content": []}),
                "the message has type \"error\" (a response has type `message`)",
            ),
            (
                json!({"role": "assistant", "content": [], "stop_reason": 1}),
                "the message has a `stop_reason` that is not a string",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(err_text(AssistantMessage::from_value(&v)), want, "{v}");
        }
        let list = json!([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use", "name": "R", "input": {}}]}]);
        assert_eq!(
            err_text(assistant_messages(&list)),
            "messages[1].content[0] (tool_use) has no `id`"
        );
        assert_eq!(
            err_text(assistant_messages(
                &json!([{"role": "system", "content": "x"}])
            )),
            "messages[0] has role `system` (expected `user` or `assistant`)"
        );
        assert_eq!(
            err_text(assistant_messages(&json!([{"content": "x"}]))),
            "messages[0] has no `role`"
        );
        assert_eq!(
            err_text(assistant_messages(&json!({"messages": 1}))),
            "`messages` is not a list"
        );
        assert!(err_text(assistant_messages(&json!("x"))).starts_with("the document is neither"));
        assert!(
            serde_json::from_str::<AssistantBlock>(r#"{"type":"text"}"#)
                .unwrap_err()
                .to_string()
                .contains("has no `text`")
        );
    }

    #[test]
    fn reply_orders_results_by_block_and_checks_them() {
        let m = AssistantMessage::from_content(&json!([tu("a", "Read", json!({})), {"type": "text", "text": "x"}, tu("b", "Glob", json!({}))])).unwrap();
        let reply = m
            .reply(
                [ToolResult::success("b", "B"), ToolResult::error("a", "A")],
                [ContentBlock::text("hook said")],
            )
            .unwrap();
        assert_eq!(
            serde_json::to_value(&reply).unwrap(),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "A", "is_error": true},
                {"type": "tool_result", "tool_use_id": "b", "content": "B"},
                {"type": "text", "text": "hook said"}
            ]})
        );
        assert_eq!(
            err_text(m.reply([ToolResult::success("a", "A")], [])),
            "cannot reply to the assistant message: tool_use `b` (Glob) has no tool_result"
        );
        assert_eq!(
            err_text(m.reply(
                [
                    ToolResult::success("a", "A"),
                    ToolResult::success("a", "A"),
                    ToolResult::success("b", "B")
                ],
                []
            )),
            "cannot reply to the assistant message: two tool_results answer `a`"
        );
        assert_eq!(
            err_text(m.reply([ToolResult::success("z", "A")], [])),
            "cannot reply to the assistant message: a tool_result answers `z`, which is no tool_use of the message"
        );
    }

    fn start(i: u64, block: Value) -> Value {
        json!({"type": "content_block_start", "index": i, "content_block": block})
    }
    fn delta(i: u64, d: Value) -> Value {
        json!({"type": "content_block_delta", "index": i, "delta": d})
    }
    fn stop(i: u64) -> Value {
        json!({"type": "content_block_stop", "index": i})
    }
    fn json_piece(i: u64, s: &str) -> Value {
        delta(i, json!({"type": "input_json_delta", "partial_json": s}))
    }
    fn text_piece(i: u64, s: &str) -> Value {
        delta(i, json!({"type": "text_delta", "text": s}))
    }
    fn tool_start(i: u64, id: &str) -> Value {
        start(
            i,
            json!({"type": "tool_use", "id": id, "name": "Read", "input": {}}),
        )
    }

    fn run(events: &[Value]) -> Result<(Vec<ToolUse>, Option<AssistantMessage>), Error> {
        let mut a = MessageAssembler::new();
        let mut ready = Vec::new();
        let mut done = None;
        for e in events {
            match a.push(e)? {
                StreamProgress::ToolUseReady(c) => ready.push(c),
                StreamProgress::Complete(m) => done = Some(m),
                StreamProgress::Pending => {}
            }
        }
        Ok((ready, done))
    }

    #[test]
    fn assembles_a_full_stream() {
        let events = vec![
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
            start(0, json!({"type": "thinking", "thinking": ""})),
            delta(0, json!({"type": "thinking_delta", "thinking": "Let me "})),
            delta(0, json!({"type": "thinking_delta", "thinking": "see."})),
            delta(0, json!({"type": "signature_delta", "signature": "EqQB"})),
            stop(0),
            json!({"type": "ping"}),
            start(1, json!({"type": "text", "text": ""})),
            text_piece(1, "Reading "),
            delta(
                1,
                json!({"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "c"}}),
            ),
            text_piece(1, "both."),
            stop(1),
            tool_start(2, "t1"),
            json_piece(2, "{\"file_"),
            json_piece(2, "path\": \"/a\"}"),
            stop(2),
            tool_start(3, "t2"),
            stop(3),
            tool_start(4, "t3"),
            json_piece(4, "{\"file_path\": \"C:\\windows"),
            stop(4),
            json!({"type": "some_future_event", "x": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ];
        let (ready, done) = run(&events).unwrap();
        assert_eq!(ready.len(), 3);
        assert_eq!(ready[0].input, json!({"file_path": "/a"}));
        assert_eq!(
            ready[1].input,
            json!({}),
            "no pieces means the start's {{}}"
        );
        assert_eq!(
            ready[2].input,
            json!("{\"file_path\": \"C:\\windows"),
            "unparsable JSON stays text"
        );
        let m = done.unwrap();
        assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(m.tool_uses().cloned().collect::<Vec<_>>(), ready);
        assert_eq!(
            m.content[0],
            AssistantBlock::Opaque(
                json!({"type": "thinking", "thinking": "Let me see.", "signature": "EqQB"})
            )
        );
        assert_eq!(
            m.content[1].to_value(),
            json!({"type": "text", "text": "Reading both.", "citations": [{"type": "char_location", "cited_text": "c"}]})
        );
    }

    #[test]
    fn a_tool_use_is_ready_when_its_block_stops() {
        let mut a = MessageAssembler::new();
        assert_eq!(
            a.push(&tool_start(0, "t")).unwrap(),
            StreamProgress::Pending
        );
        assert_eq!(
            a.push(&json_piece(0, "{\"a\":1}")).unwrap(),
            StreamProgress::Pending
        );
        assert_eq!(
            a.push(&stop(0)).unwrap(),
            StreamProgress::ToolUseReady(ToolUse::new("t", "Read", json!({"a": 1})))
        );
        assert!(!a.is_complete());
        assert!(matches!(
            a.push(&json!({"type": "message_stop"})).unwrap(),
            StreamProgress::Complete(_)
        ));
        assert!(a.is_complete());
    }

    #[test]
    fn blank_pieces_keep_the_start_input_and_message_start_gives_a_stop_reason() {
        let events = [
            json!({"type": "message_start", "message": {"role": "assistant", "content": [], "stop_reason": "end_turn"}}),
            start(
                0,
                json!({"type": "tool_use", "id": "t", "name": "Read", "input": {"a": 1}}),
            ),
            json_piece(0, ""),
            json_piece(0, " "),
            stop(0),
            json!({"type": "message_stop"}),
        ];
        let (ready, done) = run(&events).unwrap();
        assert_eq!(ready[0].input, json!({"a": 1}));
        assert_eq!(done.unwrap().stop_reason.as_deref(), Some("end_turn"));
    }

    #[test]
    fn server_tool_use_input_is_assembled_but_not_handed_over() {
        let events = [
            start(
                0,
                json!({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}),
            ),
            json_piece(0, "{\"query\": "),
            json_piece(0, "\"rust\"}"),
            stop(0),
            json!({"type": "message_stop"}),
        ];
        let (ready, done) = run(&events).unwrap();
        assert!(ready.is_empty());
        assert_eq!(
            done.unwrap().content[0],
            AssistantBlock::Opaque(
                json!({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": "rust"}})
            )
        );
    }

    #[test]
    fn stream_errors_name_the_event_and_problem() {
        let text0 = start(0, json!({"type": "text", "text": ""}));
        let cases: Vec<(Vec<Value>, &str)> = vec![
            (
                vec![text_piece(2, "x")],
                "stream event 1 (`content_block_delta`) is for block 2, which was not started",
            ),
            (
                vec![stop(0)],
                "stream event 1 (`content_block_stop`) stops block 0, which was not started",
            ),
            (
                vec![text0.clone(), stop(0), stop(0)],
                "stream event 3 (`content_block_stop`) stops block 0 twice",
            ),
            (
                vec![text0.clone(), stop(0), text_piece(0, "x")],
                "stream event 3 (`content_block_delta`) is for block 0, which already stopped",
            ),
            (
                vec![text0.clone(), json_piece(0, "{")],
                "stream event 2 (`content_block_delta`) for block 0 (text): an `input_json_delta` does not fit a block without `input`",
            ),
            (
                vec![tool_start(0, "t"), text_piece(0, "x")],
                "stream event 2 (`content_block_delta`) for block 0 (tool_use): a `text_delta` does not fit a `tool_use` block",
            ),
            (
                vec![
                    text0.clone(),
                    delta(0, json!({"type": "signature_delta", "signature": "s"})),
                ],
                "stream event 2 (`content_block_delta`) for block 0 (text): a `signature_delta` does not fit a `text` block",
            ),
            (
                vec![
                    tool_start(0, "t"),
                    delta(0, json!({"type": "citations_delta", "citation": {}})),
                ],
                "stream event 2 (`content_block_delta`) for block 0 (tool_use): a `citations_delta` does not fit a `tool_use` block",
            ),
            (
                vec![text0.clone(), delta(0, json!({"type": "new_delta"}))],
                "stream event 2 (`content_block_delta`) for block 0 (text): the delta type `new_delta` is unknown",
            ),
            (
                vec![text0.clone(), delta(0, json!({"text": "x"}))],
                "stream event 2 (`content_block_delta`) for block 0 (text): the delta has no `type`",
            ),
            (
                vec![text0.clone(), delta(0, json!({"type": "text_delta"}))],
                "stream event 2 (`content_block_delta`) for block 0 (text): the `text_delta` has no string `text`",
            ),
            (
                vec![
                    text0.clone(),
                    json!({"type": "content_block_delta", "index": 0}),
                ],
                "stream event 2 (`content_block_delta`) has no `delta` object",
            ),
            (
                vec![text0.clone(), text0.clone()],
                "stream event 2 (`content_block_start`) starts block 0 a second time",
            ),
            (
                vec![
                    json!({"type": "content_block_start", "content_block": {"type": "text", "text": ""}}),
                ],
                "stream event 1 (`content_block_start`) has no `index`",
            ),
            (
                vec![json!({"type": "content_block_start", "index": 0})],
                "stream event 1 (`content_block_start`) has no `content_block` object",
            ),
            (
                vec![start(0, json!({"text": ""}))],
                "stream event 1 (`content_block_start`) has a `content_block` without a `type`",
            ),
            (
                vec![
                    start(0, json!({"type": "tool_use", "name": "R", "input": {}})),
                    stop(0),
                ],
                "stream event 2 (`content_block_stop`) block 0 (tool_use) has no `id`",
            ),
            (
                vec![text0.clone(), json!({"type": "message_stop"})],
                "stream event 2 (`message_stop`) comes while block 0 is open",
            ),
            (
                vec![json!({"type": "message_stop"}), json!({"type": "ping"})],
                "stream event 2 (`ping`) comes after `message_stop`",
            ),
            (
                vec![
                    json!({"type": "message_start", "message": {}}),
                    json!({"type": "message_start", "message": {}}),
                ],
                "stream event 2 (`message_start`) is a second `message_start`",
            ),
            (
                vec![json!({"type": "message_delta", "delta": {"stop_reason": 3}})],
                "stream event 1 (`message_delta`) has a `stop_reason` that is not a string",
            ),
            (
                vec![json!({"index": 0})],
                "stream event 1 (`?`) has no `type`",
            ),
            (
                vec![
                    json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                ],
                "the API streamed an error: overloaded_error: Overloaded",
            ),
        ];
        for (events, want) in cases {
            assert_eq!(err_text(run(&events)), want, "{events:?}");
        }
        let e = run(&[json!({"type": "error", "error": {"type": "api_error", "message": "m"}})])
            .unwrap_err();
        assert!(
            matches!(e, Error::StreamError { kind, message } if kind == "api_error" && message == "m")
        );
    }

    #[test]
    fn sse_text_is_split_into_events() {
        let text = ": comment\r\nevent: message_start\r\ndata: {\"type\":\"message_start\",\r\ndata: \"message\":{}}\r\n\r\nevent: ping\ndata: {}\nid: 7\nretry: 10\n\nevent: message_stop\ndata:{\"type\":\"message_stop\"}";
        let events = parse_sse(text).unwrap();
        assert_eq!(
            events,
            vec![
                json!({"type": "message_start", "message": {}}),
                json!({"type": "ping"}),
                json!({"type": "message_stop"}),
            ]
        );
        // The same text fed a character at a time gives the same events.
        let mut d = SseDecoder::new();
        let mut fed = Vec::new();
        for (i, _) in text.char_indices() {
            let end = text[i..].chars().next().map_or(i, |c| i + c.len_utf8());
            fed.extend(d.feed(&text[i..end]).unwrap());
        }
        fed.extend(d.finish().unwrap());
        assert_eq!(fed, events);
        assert_eq!(
            err_text(parse_sse("event: ping\n\ndata: {\"a\"\n\n")),
            "server-sent events, line 3: the data is not JSON: EOF while parsing an object at line 1 column 4"
        );
        assert_eq!(
            err_text(parse_sse(
                "event: ping\ndata: {\"type\":\"message_stop\"}\n\n"
            )),
            "server-sent events, line 2: event `ping` carries data of type \"message_stop\""
        );
        assert_eq!(parse_sse("event: ping\n\n").unwrap(), Vec::<Value>::new());
    }

    #[test]
    fn user_message_from_results_then_blocks() {
        let m = UserMessage::with_tool_results(
            [ToolResult::success("a", "1"), ToolResult::success("b", "2")],
            [ContentBlock::text("x")],
        );
        let ids: Vec<&str> = m.tool_results().map(|r| r.tool_use_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(
            m.content.last(),
            Some(&UserContent::Block(ContentBlock::text("x")))
        );
        assert_eq!(m.role, Role::User);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            "[\"\\\\/\n\té😀 ]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("\\PC{0,6}", inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Cut `s` at the given fractions, moved back to char boundaries.
    fn pieces(s: &str, cuts: &[f64]) -> Vec<String> {
        let mut at: Vec<usize> = cuts
            .iter()
            .map(|f| {
                let mut i = ((s.len() as f64) * f) as usize;
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                i
            })
            .collect();
        at.push(0);
        at.push(s.len());
        at.sort_unstable();
        at.windows(2).map(|w| s[w[0]..w[1]].to_owned()).collect()
    }

    proptest! {
        #[test]
        fn streamed_input_equals_the_original(
            fields in prop::collection::vec(("\\PC{1,8}", json_value()), 0..5),
            cuts in prop::collection::vec(0.0f64..=1.0, 0..12),
            text in "\\PC{0,20}",
            text_cuts in prop::collection::vec(0.0f64..=1.0, 0..6),
            order in prop::collection::vec(any::<bool>(), 0..40),
            tool_first in any::<bool>(),
        ) {
            let input = Value::Object(fields.into_iter().collect());
            let json = serde_json::to_string(&input).unwrap();
            let (ti, xi) = if tool_first { (0, 1) } else { (1, 0) };
            let mut tool_events: Vec<Value> = pieces(&json, &cuts).iter().map(|p| json_piece(ti, p)).collect();
            tool_events.push(stop(ti));
            let mut text_events: Vec<Value> = pieces(&text, &text_cuts).iter().map(|p| text_piece(xi, p)).collect();
            text_events.push(stop(xi));
            let mut events = vec![json!({"type": "message_start", "message": {"content": []}})];
            let (first, second) = if tool_first { (tool_start(ti, "t"), start(xi, json!({"type": "text", "text": ""}))) }
                else { (start(xi, json!({"type": "text", "text": ""})), tool_start(ti, "t")) };
            events.push(first);
            events.push(second);
            let (mut a, mut b) = (tool_events.into_iter().peekable(), text_events.into_iter().peekable());
            let mut choice = order.into_iter();
            while a.peek().is_some() || b.peek().is_some() {
                let take_tool = match (a.peek().is_some(), b.peek().is_some()) {
                    (true, true) => choice.next().unwrap_or(true),
                    (t, _) => t,
                };
                events.extend(if take_tool { a.next() } else { b.next() });
            }
            events.push(json!({"type": "message_stop"}));
            let (ready, done) = run(&events).unwrap();
            prop_assert_eq!(ready.len(), 1);
            prop_assert_eq!(&ready[0].input, &input);
            let m = done.unwrap();
            prop_assert_eq!(m.text(), text);
            prop_assert_eq!(m.tool_uses().next().map(|c| &c.input), Some(&input));
            let is_text = matches!(m.content[xi as usize], AssistantBlock::Text { .. });
            prop_assert!(is_text);
        }
    }
}
