//! Shell knowledge for toolgate: what a Bash command line runs, reads, writes and executes.
//!
//! - [`analyze`] parses a line with `brush-parser` (a real bash grammar, so `a;b`, `a && b`,
//!   `$(b)`, `` `b` ``, `<(b)` and heredocs are seen for what they are), expands every word as
//!   bash would ([`expand`]: quotes, backslashes, ANSI-C, braces, tilde, known variables,
//!   `$IFS` splitting, globs), tracks the working directory, and lists every unit the line
//!   runs, with the effects the command database finds in it.
//! - [`db`] is the command database: for each program agents run, its options and operands
//!   and what each does (reads or writes a file, runs a program or command string, talks to
//!   the network, changes the system), with subcommands, bundling and GNU abbreviations.
//! - [`lang`] reads `sed` scripts and `awk` programs for their own file and process access.
//! - [`is_read_only`] is the read-only classifier, a query on the analysis.
//!
//! What it is not for: deciding or running. It decides nothing (`tool-permissions` matches
//! rules against the units and decides each effect) and executes nothing (the Bash tool of
//! `builtin-tools` runs commands). What cannot be known is said, so a caller can fail closed.
//!
//! ```
//! use tool_shell::analyze::{ShellEnv, analyze};
//! use tool_shell::is_read_only;
//!
//! assert!(is_read_only("git status && cat a | wc -l"));
//! assert!(!is_read_only("echo x > f"));
//! assert!(!is_read_only("sort --out=x in"));
//! let env = ShellEnv::new("/w/p", "/home/u");
//! let a = analyze("FOO=1 timeout 5 {rm,-rf,x}; echo $(id)", &env);
//! let argvs: Vec<String> = a.units.iter().map(|u| u.argv.join(" ")).collect();
//! assert_eq!(argvs, ["timeout 5 rm -rf x", "rm -rf x", "id", "echo"]);
//! ```

pub mod analyze;
mod classify;
pub mod db;
mod effect;
pub mod expand;
pub mod gitconfig;
pub mod lang;

pub use classify::{
    inert_assignment, is_read_only, is_read_only_analysis, is_read_only_unit, reads_only,
    trusted_program_name,
};
pub use effect::{Effect, EffectKind, Source};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command database shipped with the crate does not load.
    #[error("the command database does not load: {0}")]
    Database(String),
}
