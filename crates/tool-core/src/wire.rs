//! Wire types of the Anthropic Messages API that the tool layer reads and writes.
//!
//! This module owns the shapes only: a `tool_use` block as the model sends it, a `tool_result`
//! block as the model reads it, and the user message that carries results back. It does not
//! decide what goes into them; that is the pipeline's job.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `tool_use` block: the model asks for one tool call.
///
/// `input` is normally a JSON object. A model that streams broken JSON leaves it as a string,
/// which the schema layer reports back (see [`crate::schema::render_unparsable_input`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_use")]
pub struct ToolUse {
    /// The id the result must carry back.
    pub id: String,
    /// The tool name as the model wrote it.
    pub name: String,
    /// The input, as sent.
    pub input: Value,
}

impl ToolUse {
    /// A `tool_use` block with the given id, name and input.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
        }
    }
}

/// Where an image block's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline base64 data.
    Base64 {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// Base64 of the image bytes.
        data: String,
    },
}

/// A block inside a `tool_result` whose content is an array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image data.
        source: ImageSource,
    },
    /// A document (a PDF), as the Messages API takes it.
    Document {
        /// The document's data.
        source: ImageSource,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// A base64 image block.
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: media_type.into(),
                data: data.into(),
            },
        }
    }
}

/// The content of a `tool_result`: a string, or an array of text and image blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// A plain string.
    Text(String),
    /// An array of blocks.
    Blocks(Vec<ContentBlock>),
}

impl ToolResultContent {
    /// Total characters of text (what the size policy measures), counted in UTF-16 units as
    /// JavaScript's `length` does, so thresholds match Claude Code's.
    pub fn text_len(&self) -> usize {
        match self {
            ToolResultContent::Text(s) => utf16_len(s),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => utf16_len(text),
                    ContentBlock::Image { .. } | ContentBlock::Document { .. } => 0,
                })
                .sum(),
        }
    }

    /// True when there is nothing to show: an empty or blank string, no blocks, or only blank
    /// text blocks.
    pub fn is_empty(&self) -> bool {
        match self {
            ToolResultContent::Text(s) => s.trim().is_empty(),
            ToolResultContent::Blocks(blocks) => blocks.iter().all(|b| match b {
                ContentBlock::Text { text } => text.trim().is_empty(),
                ContentBlock::Image { .. } | ContentBlock::Document { .. } => false,
            }),
        }
    }

    /// Add `note` after the content, as Claude Code joins reminders and hook texts to a result:
    /// after a blank line, the content's own trailing whitespace dropped first (no blank line
    /// before it when the content is empty); a result of blocks gets it as a text block.
    pub fn append_note(&mut self, note: &str) {
        match self {
            ToolResultContent::Text(t) => {
                let kept = t.trim_end().len();
                t.truncate(kept);
                if !t.is_empty() {
                    t.push_str("\n\n");
                }
                t.push_str(note);
            }
            ToolResultContent::Blocks(blocks) => blocks.push(ContentBlock::text(note)),
        }
    }

    /// True when any block is an image or a document (a result the size policy leaves whole).
    pub fn has_image(&self) -> bool {
        matches!(self, ToolResultContent::Blocks(b) if b.iter().any(|b| matches!(b, ContentBlock::Image { .. } | ContentBlock::Document { .. })))
    }

    /// The text, with blocks' texts joined by newlines and images left out.
    pub fn to_text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    ContentBlock::Image { .. } | ContentBlock::Document { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<String> for ToolResultContent {
    fn from(s: String) -> Self {
        ToolResultContent::Text(s)
    }
}

impl From<&str> for ToolResultContent {
    fn from(s: &str) -> Self {
        ToolResultContent::Text(s.to_owned())
    }
}

/// A `tool_result` block: what the model reads back for one `tool_use`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result")]
pub struct ToolResult {
    /// The id of the `tool_use` this answers.
    pub tool_use_id: String,
    /// What the model sees.
    pub content: ToolResultContent,
    /// True when the call failed or was refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn success(tool_use_id: impl Into<String>, content: impl Into<ToolResultContent>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// An error result. An error result may only hold text (the API rejects images in it), so
    /// image blocks are dropped.
    pub fn error(tool_use_id: impl Into<String>, content: impl Into<ToolResultContent>) -> Self {
        let content = match content.into() {
            ToolResultContent::Blocks(b)
                if b.iter().any(|b| matches!(b, ContentBlock::Image { .. })) =>
            {
                ToolResultContent::Text(ToolResultContent::Blocks(b).to_text())
            }
            other => other,
        };
        Self {
            tool_use_id: tool_use_id.into(),
            content,
            is_error: true,
        }
    }
}

/// A block of a user message sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// A tool result.
    ToolResult(ToolResult),
    /// A text or image block (hook messages, meta messages from tools).
    Block(ContentBlock),
}

/// The user message that carries a turn's tool results (and any messages the tools or hooks
/// added) back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Always `user`.
    pub role: Role,
    /// The blocks, tool results first in block order.
    pub content: Vec<UserContent>,
}

/// The role of a message; tool results always travel in a `user` message, tool uses in an
/// `assistant` one (see [`crate::messages::AssistantMessage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A user message.
    User,
    /// An assistant message: what the model answered.
    Assistant,
}

impl UserMessage {
    /// A user message holding the given blocks.
    pub fn new(content: Vec<UserContent>) -> Self {
        Self {
            role: Role::User,
            content,
        }
    }

    /// The user message answering a turn: the `tool_result` blocks in the order given (the
    /// order of the `tool_use` blocks they answer), then the `after` blocks (the messages hooks
    /// and tools added). [`crate::messages::AssistantMessage::reply`] also checks the results
    /// against the message's tool uses.
    pub fn with_tool_results(
        results: impl IntoIterator<Item = ToolResult>,
        after: impl IntoIterator<Item = ContentBlock>,
    ) -> Self {
        let content = results
            .into_iter()
            .map(UserContent::ToolResult)
            .chain(after.into_iter().map(UserContent::Block))
            .collect();
        Self::new(content)
    }

    /// The tool results in this message, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.content.iter().filter_map(|c| match c {
            UserContent::ToolResult(r) => Some(r),
            UserContent::Block(_) => None,
        })
    }
}

/// One entry of the API's `tools` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What the model is told the tool does.
    pub description: String,
    /// The JSON Schema of the input.
    pub input_schema: Value,
}

/// Length of a string in UTF-16 code units, as JavaScript counts it.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_use_round_trips() {
        let raw = json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}});
        let tu: ToolUse = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(tu.name, "Read");
        assert_eq!(serde_json::to_value(&tu).unwrap(), raw);
    }

    #[test]
    fn tool_result_string_and_blocks_round_trip() {
        let a =
            json!({"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": true});
        let r: ToolResult = serde_json::from_value(a.clone()).unwrap();
        assert!(r.is_error);
        assert_eq!(serde_json::to_value(&r).unwrap(), a);

        let b = json!({"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA="}}
        ]});
        let r: ToolResult = serde_json::from_value(b.clone()).unwrap();
        assert!(!r.is_error);
        assert!(r.content.has_image());
        assert_eq!(serde_json::to_value(&r).unwrap(), b);
    }

    #[test]
    fn user_message_round_trips() {
        let m = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "ok"},
            {"type": "text", "text": "<system-reminder>x</system-reminder>"}
        ]});
        let msg: UserMessage = serde_json::from_value(m.clone()).unwrap();
        assert_eq!(msg.tool_results().count(), 1);
        assert_eq!(serde_json::to_value(&msg).unwrap(), m);
    }

    #[test]
    fn error_results_drop_images() {
        let r = ToolResult::error(
            "t",
            ToolResultContent::Blocks(vec![
                ContentBlock::text("a"),
                ContentBlock::image("image/png", "x"),
            ]),
        );
        assert_eq!(r.content, ToolResultContent::Text("a".into()));
    }

    #[test]
    fn emptiness_and_length() {
        assert!(ToolResultContent::Text("  \n".into()).is_empty());
        assert!(ToolResultContent::Blocks(vec![]).is_empty());
        assert!(!ToolResultContent::Blocks(vec![ContentBlock::image("image/png", "x")]).is_empty());
        assert_eq!(ToolResultContent::Text("é😀".into()).text_len(), 3);
    }
}

/// The deepest nesting a tool input may have. No tool's schema comes near it, and a JSON
/// text cannot carry more through `serde_json`'s parser (its limit is the same); an input a
/// host builds in memory deeper than this is refused before anything walks it recursively.
pub const MAX_INPUT_DEPTH: usize = 128;

/// Is `value` nested more than `max` arrays or objects deep? Walks without recursion, so any
/// depth is safe to ask about.
pub fn exceeds_depth(value: &Value, max: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

/// Drop `value` without recursion (dropping a value nested thousands deep the ordinary way
/// can overflow the stack).
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// The text for an input nested deeper than [`MAX_INPUT_DEPTH`].
pub fn too_deep_text(tool: &str) -> String {
    crate::texts::wrap_tool_use_error(&format!(
        "InputValidationError: {tool} failed due to the following issue:\nThe input is nested more than {MAX_INPUT_DEPTH} levels deep; no tool takes such input."
    ))
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn depth_is_measured_without_recursion() {
        let mut v = serde_json::json!({"a": 1});
        for _ in 0..200_000 {
            v = Value::Array(vec![v]);
        }
        assert!(exceeds_depth(&v, MAX_INPUT_DEPTH));
        dismantle(v);
        let flat = serde_json::json!({"file_path": "/a", "edits": [{"old": "x"}]});
        assert!(!exceeds_depth(&flat, 3));
        assert!(exceeds_depth(&flat, 2));
    }
}
