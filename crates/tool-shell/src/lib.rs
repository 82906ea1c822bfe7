//! Bash command-line analysis for toolgate: the simple commands a command line runs (through
//! lists, pipelines, subshells, brace groups, control flow and substitutions), their
//! arguments, assignments and redirections, and a read-only classification that fails closed.
//!
//! It parses with `brush-parser`, a real bash grammar, so `a;b`, `a && b`, `$(b)`, `` `b` ``,
//! `<(b)` and heredocs are seen for what they are rather than split on characters.
//!
//! ```
//! use tool_shell::{CommandLine, is_read_only};
//!
//! assert!(is_read_only("git status && cat a | wc -l"));
//! assert!(!is_read_only("echo x > f"));
//! assert!(!is_read_only("echo $(id)"));
//! let line = CommandLine::parse("FOO=1 ls -la src; rm -rf target").unwrap();
//! let names: Vec<_> = line.commands.iter().filter_map(|c| c.name()).collect();
//! assert_eq!(names, ["ls", "rm"]);
//! ```

mod classify;
pub mod db;
mod effect;
pub mod lang;
mod parse;

pub use classify::{is_read_only, is_read_only_command};
pub use effect::{Effect, EffectKind, Source};
pub use parse::{CommandLine, Redirect, RedirectKind, SimpleCommand, Word};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line is not valid bash.
    #[error("cannot parse the command: {0}")]
    Parse(String),
    /// The command database does not load (bad TOML or a bad entry).
    #[error("the command database is invalid: {0}")]
    Database(String),
}
