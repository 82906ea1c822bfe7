//! Claude Code's built-in tools for toolgate, as [`tool_core::Tool`]s: [`ReadTool`],
//! [`EditTool`] and [`WriteTool`] with Claude Code's inputs, validation order and model-visible
//! texts (as recorded from the current CLI), streaming reads, and atomic writes that keep a
//! file's encoding, line endings and permissions; [`GrepTool`] and [`GlobTool`], which search
//! in-process with ripgrep's library crates and return the texts Claude Code builds from `rg`'s
//! output; and [`BashTool`], which runs each command line in its own process group
//! ([`tool_core::process`]) and is read-only (and so concurrency-safe) only when `tool-shell`'s
//! fail-closed classifier says so.
//!
//! It is for a host that wants these tools in a [`tool_core::ToolRegistry`] ([`registry`],
//! [`all`]) or one by one. It is not a permission layer: a tool checks its own input
//! ([`Tool::validate_input`](tool_core::Tool::validate_input)) and reports what a policy must
//! look at ([`Tool::permission_subject`](tool_core::Tool::permission_subject)), but deciding
//! allow / ask / deny, running hooks and spilling large results belong to `tool-permissions`,
//! `tool-hooks` and `tool-orchestrator`. Calling [`Tool::call`](tool_core::Tool::call)
//! directly runs the tool unchecked.
//!
//! ```
//! use serde_json::json;
//! use tool_core::{Tool, ToolContext};
//!
//! let registry = builtin_tools::registry().unwrap();
//! let names: Vec<_> = registry.tools().map(|t| t.name().to_owned()).collect();
//! assert_eq!(names, ["Read", "Edit", "Write", "Grep", "Glob", "Bash"]);
//!
//! // One tool on its own, outside any pipeline: write a file, then read it back.
//! let dir = tempfile::tempdir().unwrap();
//! let ctx = ToolContext::new(dir.path(), dir.path().join("home"), dir.path().join("results"));
//! let file = dir.path().join("notes.txt").display().to_string();
//! tokio::runtime::Runtime::new().unwrap().block_on(async {
//!     let write = json!({"file_path": file, "content": "first\nsecond"});
//!     builtin_tools::WriteTool.call(write, &ctx).await.unwrap();
//!     let read = builtin_tools::ReadTool.call(json!({"file_path": file}), &ctx).await.unwrap();
//!     assert_eq!(read.content.to_text(), "1\tfirst\n2\tsecond");
//! });
//! ```

mod bash;
mod bash_reads;
mod edit;
mod glob;
mod grep;
mod image;
mod js_json;
mod notebook;
mod read;
#[cfg(feature = "sandbox")]
pub mod sandboxed;
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
