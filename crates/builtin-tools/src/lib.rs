//! Claude Code's built-in file tools for toolgate: [`ReadTool`], [`EditTool`] and
//! [`WriteTool`], with Claude Code's inputs, validation order and model-visible texts
//! (as recorded from the current CLI), streaming reads, and atomic writes that keep a file's
//! encoding, line endings and permissions.
//!
//! [`GrepTool`] and [`GlobTool`] search in-process with ripgrep's library crates, returning the
//! texts Claude Code builds from `rg`'s output. [`BashTool`] runs each command line in its own
//! process group, classified read-only (and so concurrency-safe) only by `tool-shell`'s
//! fail-closed classifier.
//!
//! ```
//! let registry = builtin_tools::registry().unwrap();
//! let names: Vec<_> = registry.tools().map(|t| t.name().to_owned()).collect();
//! assert_eq!(names, ["Read", "Edit", "Write", "Grep", "Glob", "Bash"]);
//! ```

mod bash;
mod edit;
mod glob;
mod grep;
mod image;
mod notebook;
mod read;
mod search;
mod text_file;
mod write;

use std::sync::Arc;

pub use bash::{BashInput, BashTool, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, format_duration};
pub use edit::{EditInput, EditTool, MAX_EDIT_FILE_BYTES};
pub use glob::{GlobInput, GlobTool, MAX_GLOB_RESULTS};
pub use grep::{DEFAULT_HEAD_LIMIT, GrepInput, GrepTool, MAX_COLUMNS, OutputMode};
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
    vec![
        Arc::new(ReadTool),
        Arc::new(EditTool),
        Arc::new(WriteTool),
        Arc::new(GrepTool),
        Arc::new(GlobTool),
        Arc::new(BashTool),
    ]
}

/// A registry holding every built-in tool.
pub fn registry() -> Result<tool_core::ToolRegistry, Error> {
    let mut r = tool_core::ToolRegistry::new();
    for t in all() {
        r.register(t)?;
    }
    Ok(r)
}
