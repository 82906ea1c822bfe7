//! Claude Code's built-in file tools for toolgate: [`ReadTool`], [`EditTool`] and
//! [`WriteTool`], with Claude Code's inputs, validation order and model-visible texts
//! (as recorded from the current CLI), streaming reads, and atomic writes that keep a file's
//! encoding, line endings and permissions.
//!
//! Grep, Glob and Bash arrive with their own issue.
//!
//! ```
//! let registry = builtin_tools::registry().unwrap();
//! let names: Vec<_> = registry.tools().map(|t| t.name().to_owned()).collect();
//! assert_eq!(names, ["Read", "Edit", "Write"]);
//! ```

mod edit;
mod image;
mod notebook;
mod read;
mod text_file;
mod write;

use std::sync::Arc;

pub use edit::{EditInput, EditTool, MAX_EDIT_FILE_BYTES};
pub use read::{DEFAULT_MAX_TOKENS, MAX_WHOLE_FILE_BYTES, ReadInput, ReadTool};
pub use write::{WriteInput, WriteTool};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Registering a tool failed.
    #[error(transparent)]
    Registry(#[from] tool_core::Error),
}

/// The built-in tools, each once.
pub fn all() -> Vec<Arc<dyn tool_core::Tool>> {
    vec![Arc::new(ReadTool), Arc::new(EditTool), Arc::new(WriteTool)]
}

/// A registry holding every built-in tool.
pub fn registry() -> Result<tool_core::ToolRegistry, Error> {
    let mut r = tool_core::ToolRegistry::new();
    for t in all() {
        r.register(t)?;
    }
    Ok(r)
}
