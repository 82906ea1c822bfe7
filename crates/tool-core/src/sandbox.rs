//! The run-time enforcement seam: what a policy tells the sandbox that runs a shell command, and
//! how the sandbox asks the policy about each program the command executes and each host it
//! connects to.
//!
//! The policy engine (`tool-permissions`) implements [`SandboxPolicy`]: for one command line it
//! returns a [`SandboxSpec`], the plan of the file system and the network (paths writable,
//! read-only, hidden; domains reachable) and a [`RunJudge`] that decides, while the command
//! runs, each program it executes and each connection it opens. The sandbox (`tool-sandbox`)
//! applies the plan and asks the judge; it knows no rule syntax, and the policy spawns nothing.
//! Bash joins the two. A host without a policy gets [`NoSandbox`]: commands run as they are.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ToolContext;
use crate::decision::{Decision, DecisionReason};

/// Whether commands run in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Never: commands run unconfined (the policy turned the sandbox off, or there is no
    /// policy).
    #[default]
    Off,
    /// Where the sandbox can start; elsewhere commands run unconfined after a warning.
    On,
    /// Always: where the sandbox cannot start, commands are refused.
    Required,
}

/// What the sandbox may reach on the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkPlan {
    /// Nothing: a network namespace with only its own loopback.
    #[default]
    Blocked,
    /// Only through the filtering proxy, host by host as [`RunJudge::connect`] decides.
    Filtered,
}

/// A path that does not exist yet and must not be created while the command runs (a protected
/// or denied name): the sandbox puts a read-only stand-in there for the command's duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbsentPath {
    /// The absolute path.
    pub path: PathBuf,
    /// Taken back without a word in the result (the audit log still records it).
    pub silent: bool,
    /// Why (the rule or the check), for the user.
    pub why: String,
}

/// A path the plan names, with why: a rule (`Read(./.env)` from `.claude/settings.json:3`) or
/// a check (`protected path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPath {
    /// The absolute path, as found on the file system when the plan was made.
    pub path: PathBuf,
    /// Why it is in the plan.
    pub why: String,
}

impl PlannedPath {
    /// `path`, planned because of `why`.
    pub fn new(path: impl Into<PathBuf>, why: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            why: why.into(),
        }
    }
}

/// The file system as the sandboxed command sees it: the root read-only, then these, in this
/// order (a later entry wins over an earlier one on the same or an enclosing path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountPlan {
    /// Existing directories and files the command may write (the working directories, the
    /// session's temporary directory, what Edit allow rules name).
    pub writable: Vec<PlannedPath>,
    /// Directories inside writable ones that hold a read-only, hidden or absent path: each is
    /// bound onto itself, so it cannot be renamed or removed (which would carry the mounts
    /// away and let a new directory take its place).
    pub pinned: Vec<PathBuf>,
    /// Existing paths that stay read-only even inside a writable directory (protected paths,
    /// what Edit deny rules cover, the policy's own files).
    pub read_only: Vec<PlannedPath>,
    /// Existing paths the command cannot read (what Read deny rules cover): a file cannot be
    /// opened, a directory is empty.
    pub hidden: Vec<PlannedPath>,
    /// Existing paths inside hidden directories that stay readable (`allowRead`), read-only.
    pub readable_within: Vec<PlannedPath>,
    /// Protected or denied names that do not exist yet (or are empty stand-ins) and must not
    /// be created: a read-only stand-in holds each for the command's duration (the command
    /// sees it, as under Claude Code's sandbox).
    pub absent: Vec<AbsentPath>,
    /// Protected names that do not exist yet and must not be left behind: whatever the command
    /// creates there is removed when it ends, and reported (for a sandbox that must stay out
    /// of sight, where a stand-in would show in every listing).
    pub undone: Vec<AbsentPath>,
    /// Show the host's `/proc` instead of one of the sandbox's own (for a sandbox nested in a
    /// container that cannot mount a new one; Claude Code's `enableWeakerNestedSandbox`).
    pub host_proc: bool,
    /// What the plan could not settle (a walk cut short by its budget), for the user.
    pub notes: Vec<String>,
}

/// What the policy asks of the sandbox for one command.
#[derive(Clone)]
pub struct SandboxSpec {
    /// Whether to sandbox at all.
    pub mode: SandboxMode,
    /// Why the mode is what it is (the setting and its file), for warnings and refusals.
    pub mode_source: String,
    /// The sandbox was enabled by a setting (not only by default): the decision counted on it
    /// to contain writes, so where bubblewrap is there but cannot start, commands are refused
    /// rather than run without it.
    pub explicit: bool,
    /// The setting that excludes this command from the sandbox (`sandbox.excludedCommands`):
    /// it was decided like any other command and runs unconfined and unsupervised.
    pub excluded_by: Option<String>,
    /// Whether a call may ask to run outside the sandbox (`dangerouslyDisableSandbox`), after
    /// the user approves it.
    pub allow_unsandboxed: bool,
    /// Whether processes may open Unix-domain sockets (by default they may not: a socket
    /// such as a container engine's or a desktop bus's would lead out of the sandbox).
    pub unix_sockets: bool,
    /// The file system.
    pub mounts: MountPlan,
    /// The network.
    pub network: NetworkPlan,
    /// Decides each program the command executes and each host it connects to.
    pub judge: Arc<dyn RunJudge>,
    /// Text that, found in a report of something stopped, keeps it out of the result (still
    /// in the audit log): the settings' `ignoreViolations` for this command.
    pub quiet: Vec<String>,
}

impl std::fmt::Debug for SandboxSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxSpec")
            .field("mode", &self.mode)
            .field("mode_source", &self.mode_source)
            .field("explicit", &self.explicit)
            .field("excluded_by", &self.excluded_by)
            .field("allow_unsandboxed", &self.allow_unsandboxed)
            .field("unix_sockets", &self.unix_sockets)
            .field("mounts", &self.mounts)
            .field("network", &self.network)
            .finish_non_exhaustive()
    }
}

impl SandboxSpec {
    /// A spec that runs commands unconfined.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            mode_source: "no policy".to_owned(),
            explicit: false,
            excluded_by: None,
            allow_unsandboxed: true,
            unix_sockets: true,
            mounts: MountPlan::default(),
            network: NetworkPlan::Blocked,
            judge: Arc::new(AllowAll),
            quiet: Vec::new(),
        }
    }
}

/// One program a sandboxed command executes, seen before it runs its first instruction: after
/// the kernel loaded it, or at its `execve` where nothing can change what that will run.
#[derive(Debug, Clone, Copy)]
pub struct ExecRequest<'a> {
    /// Its arguments, as the program receives them (`argv[0]` as the caller spelled it).
    pub argv: &'a [String],
    /// The file the kernel executes (for a script, the script; its interpreter is in `argv`).
    pub exe: &'a Path,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Started by the shell of the line itself (a command of the line, of its subshells,
    /// substitutions, functions or `eval`), rather than by a program the line started.
    pub started_by_line: bool,
    /// The command runs in the sandbox's file system (its mounts already keep what Read and
    /// Edit deny rules cover), rather than only supervised on the host's.
    pub confined: bool,
    /// The executable the kernel loads (the interpreter, for a script), as a path that opens
    /// it while the program is held (`/proc/<pid>/exe`, or a descriptor of the supervisor's):
    /// a judge can recognise a program by its content whatever its name.
    pub image: &'a Path,
    /// The process's root directory, as a path that opens it (`/proc/<pid>/root`): where the
    /// paths it names are looked up.
    pub root: &'a Path,
    /// The loaded executable's device and inode: what a judge keys what it remembers on.
    pub image_id: (u64, u64),
    /// For a script: the words the interpreter actually runs with (its path, the arguments
    /// its `#!` line gives, the script, the script's arguments). What runs is that program
    /// as much as the script.
    pub interpreter: Option<&'a [String]>,
    /// Opens a path the program names (an argument) as the program itself would: from its
    /// working directory, within its root. `None` where it leads to no regular file, or where
    /// the supervisor cannot follow it as the program would (a descriptor of the program's,
    /// `/proc/self/...`).
    pub open: fn(root: &Path, cwd: &Path, named: &Path) -> Option<Named>,
}

/// A file a program names, opened by the supervisor as the program would open it.
#[derive(Debug)]
pub struct Named {
    /// The file, open for reading.
    pub file: std::fs::File,
    /// Nothing the command can do makes the path lead elsewhere before the program opens it:
    /// a regular file with one link on a read-only mount, reached from the root without a link
    /// and without leaving that mount. Otherwise the file is only what the path leads to now.
    pub fixed: bool,
}

/// What the sandbox asks while a command runs. Every answer is a [`Decision`]: an allow lets the
/// program run (or the connection through); a deny stops the whole command; an ask stops it too
/// unless the host's approver grants it while the program is held.
pub trait RunJudge: Send + Sync {
    /// Decide a program about to run.
    fn exec(&self, request: &ExecRequest<'_>) -> Decision;
    /// Decide a connection through the filtering proxy to `host` (a name or an address, as the
    /// client asked for it) on `port`.
    fn connect(&self, host: &str, port: u16) -> Decision;
    /// Called once the confined command has ended, before its result is reported: put right
    /// what it left that the policy does not let stand and that no mount could keep from
    /// happening (names that did not exist when the plan was made). What was put right.
    fn settle(&self) -> Vec<Settled> {
        Vec::new()
    }
    /// Which programs this judge wants to see when the command runs `confined` (in the
    /// sandbox, whose mounts and namespaces bound the rest). The supervisor stops tracing the
    /// others, which then run at full speed (in the sandbox, they still die with the command).
    fn watching(&self, confined: bool) -> Watching {
        let _ = confined;
        Watching::Everything
    }
}

/// Which programs a [`RunJudge`] wants to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watching {
    /// Every program the command tree executes.
    Everything,
    /// The programs the line's own shell starts; what they start is theirs.
    LineOnly,
    /// None.
    Nothing,
}

/// Something a command left that was put right when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The path.
    pub path: PathBuf,
    /// What was done (`removed`, `the settings core.fsmonitor taken out`).
    pub done: String,
    /// Why (the check or the rule).
    pub why: String,
}

/// A judge that allows everything (the sandbox's mounts and network plan still apply).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl RunJudge for AllowAll {
    fn exec(&self, _: &ExecRequest<'_>) -> Decision {
        Decision::allow(DecisionReason::Check {
            name: "no run-time rules".into(),
        })
    }
    fn connect(&self, _: &str, _: u16) -> Decision {
        Decision::allow(DecisionReason::Check {
            name: "no run-time rules".into(),
        })
    }
    fn watching(&self, confined: bool) -> Watching {
        // Unconfined, tracing is what keeps the tree together to be killed.
        if confined {
            Watching::Nothing
        } else {
            Watching::Everything
        }
    }
}

/// The policy side of the sandbox: the spec for one command line.
pub trait SandboxPolicy: Send + Sync {
    /// What the sandbox must enforce while `command` runs in `ctx`, and the judge it asks.
    /// `self` comes as an `Arc` so the judge can keep the policy alive for as long as the
    /// command runs (a background command outlives the call).
    fn sandbox(self: Arc<Self>, command: &str, ctx: &ToolContext) -> SandboxSpec;
}

/// No sandbox: commands run unconfined. The default of a [`ToolContext`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSandbox;

impl SandboxPolicy for NoSandbox {
    fn sandbox(self: Arc<Self>, _: &str, _: &ToolContext) -> SandboxSpec {
        SandboxSpec::off()
    }
}

/// A shell word for `s`: as it is when it needs no quoting, else in single quotes.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%^".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `argv` as one shell line that runs it (each word quoted as needed).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            // A first word with `=` would read back as an assignment.
            if i == 0 && a.contains('=') {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                shell_word(a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        let argv: Vec<String> = ["rm", "-rf", "a b", "it's", "", "$HOME", "x=1"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            shell_line(&argv),
            r#"rm -rf 'a b' 'it'\''s' '' '$HOME' x=1"#
        );
        assert_eq!(shell_line(&["a=b".to_owned(), "c".to_owned()]), "'a=b' c");
    }
}
