//! The crate's error type.

/// Errors of the tool contract's machinery (never shown to the model raw).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two tools (or a tool and an alias) share a name.
    #[error("a tool named `{0}` is already registered")]
    DuplicateTool(String),
    /// A schema does not compile.
    #[error("invalid JSON Schema: {0}")]
    InvalidSchema(String),
    /// A tool's schema does not compile.
    #[error("tool `{tool}` has an invalid input schema: {message}")]
    InvalidToolSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// A permission mode name is not one of the known ones.
    #[error(
        "unknown permission mode `{0}` (expected default, acceptEdits, plan, dontAsk or bypassPermissions)"
    )]
    InvalidPermissionMode(String),
    /// A pipeline stage failed in a way that is not the tool's fault.
    #[error("pipeline failure: {0}")]
    Pipeline(String),
    /// A Messages API message, response or `messages` list is malformed.
    #[error("{at} {problem}")]
    InvalidMessage {
        /// Where: `the message`, `content[3]`, `messages[2].content[0]`, ...
        at: String,
        /// What is wrong, e.g. "(tool_use) has no `id`".
        problem: String,
    },
    /// A stream event is malformed, out of order, or does not fit its block.
    #[error("stream event {number} (`{kind}`) {problem}")]
    InvalidStreamEvent {
        /// The event's number in the stream, from 1.
        number: usize,
        /// The event's `type`.
        kind: String,
        /// What is wrong.
        problem: String,
    },
    /// The stream carried an `error` event.
    #[error("the API streamed an error: {kind}: {message}")]
    StreamError {
        /// The error's `type` (e.g. `overloaded_error`).
        kind: String,
        /// The error's `message`.
        message: String,
    },
    /// Server-Sent Events text is malformed.
    #[error("server-sent events, line {line}: {problem}")]
    InvalidSse {
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// Tool results do not answer an assistant message's tool uses one to one.
    #[error("cannot reply to the assistant message: {0}")]
    InvalidReply(String),
}
