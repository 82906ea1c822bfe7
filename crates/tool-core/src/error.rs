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
}
