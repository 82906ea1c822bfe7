//! The analyser's claim about a line: the one seam between the differential test and the
//! analyser. Replace the body of [`claim`] when the analyser changes; keep its contract.
//!
//! Contract: `claim(line, cwd, home)` says which programs bash itself executes for `line`
//! (started in `cwd`, with `$HOME` = `home`, with [`DISABLED_BUILTINS`] disabled so those names
//! are looked up in `PATH`): every simple command whose name is not a builtin, including those
//! run through `eval`, `command`, `exec` and `time`, in substitutions and in every iteration of a
//! loop — but not what a program it runs might run in turn (a shim never runs its arguments).
//! [`Claim::Known`] lists them as a multiset (order does not matter), each with its argv after
//! every expansion and, when the analyser knows it, the absolute directory it runs in. A
//! process substitution's argument may be written `/dev/fd/63` (any number). When the analyser
//! cannot be sure of every argv, it says [`Claim::Unknown`]; that is never a disagreement, but
//! the share of known claims is reported, since a claim that is always unknown is useless.

use std::path::{Path, PathBuf};

use super::DISABLED_BUILTINS;

/// A program the analyser says bash runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedUnit {
    /// Its argv after every expansion (argv\[0\] is the name bash looks up).
    pub argv: Vec<String>,
    /// The absolute directory it runs in, when the analyser knows it.
    pub cwd: Option<PathBuf>,
}

/// The analyser's claim about a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Exactly these programs run.
    Known(Vec<ClaimedUnit>),
    /// The analyser does not know exactly.
    Unknown,
}

/// Bash's builtins and the words it runs without a `PATH` lookup.
pub const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// Is `name` run by bash itself (a builtin this runner leaves enabled)?
pub(crate) fn runs_in_bash(name: &str) -> bool {
    BASH_BUILTINS.contains(&name) && !DISABLED_BUILTINS.contains(&name)
}

/// The claim of the analyser (`tool_shell::analyze`): known when every command the shell
/// itself runs (list members, substitutions, and what `eval`, `command`, `exec` and `time`
/// run) is known exactly; then each of them but the builtins bash runs itself, with the
/// directory it runs in.
pub fn claim(line: &str, cwd: &Path, home: &Path) -> Claim {
    let env = tool_shell::analyze::ShellEnv::new(cwd, home);
    let a = tool_shell::analyze::analyze(line, &env);
    let Some(units) = a.shell_executed() else {
        return Claim::Unknown;
    };
    Claim::Known(
        units
            .into_iter()
            .filter(|u| !runs_in_bash(&u.argv[0]))
            .map(|u| ClaimedUnit {
                argv: u.argv.clone(),
                cwd: u.cwd_certain.then(|| u.cwd.clone()),
            })
            .collect(),
    )
}
