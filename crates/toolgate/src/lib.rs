//! The `toolgate` program's library.
//!
//! What it is for: what the program and `cargo xtask` share: running transcripts and oracle
//! scenarios against a workspace ([`scenario`], [`transcript`]), the CLI's policy sources and
//! checks ([`check`]), the Claude Code hook that asks toolgate ([`guard`]) and its installer
//! ([`install`]), the terminal
//! approver ([`prompt`]), the run report ([`report`]), kept sessions ([`session_file`]), one
//! line run in the sandbox ([`sandbox_cmd`]) and the built-in demo ([`demo`]).
//!
//! What it is not for: embedding. A host uses the library crates directly: `tool-permissions`
//! to decide, `tool-hooks` to run hooks, `tool-orchestrator` for sessions; this crate adds
//! only what a command-line program needs on top of them.

pub mod check;
pub mod demo;
pub mod guard;
pub mod install;
pub mod prompt;
pub mod report;
pub mod sandbox_cmd;
pub mod scenario;
pub mod session_file;
pub mod transcript;

/// The project a command or a hook call from `cwd` belongs to: `$CLAUDE_PROJECT_DIR` when set,
/// else the nearest ancestor of `cwd` (itself included) holding `.claude/` or `.toolgate/`
/// other than the home directory (whose `.claude/` holds the user's own settings), else `cwd`.
/// Relative rules are anchored there, so a model that `cd`-ed into a subdirectory still meets
/// the project's rules where they were written.
pub fn find_project(cwd: &std::path::Path, home: &std::path::Path) -> std::path::PathBuf {
    if let Some(d) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
        return std::path::PathBuf::from(d);
    }
    cwd.ancestors()
        .filter(|d| *d != home)
        .find(|d| d.join(".claude").is_dir() || d.join(".toolgate").is_dir())
        .unwrap_or(cwd)
        .to_path_buf()
}
