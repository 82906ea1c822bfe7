//! The vocabulary of what a command does: the effects the command database assigns to
//! programs, their options and their operands, and that the analysis reports per unit.

use std::fmt;

/// What an option, an operand or a whole program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EffectKind {
    /// Reads the file (or lists the directory) its value names.
    Read,
    /// Creates, changes or removes the file its value names.
    Write,
    /// The words that follow are a command that is run (a wrapper such as `timeout`, `xargs`,
    /// `find -exec`): decided as units of their own.
    ExecArgv,
    /// The value is shell code that is run (`sh -c`, `eval`, `env -S`, a git `!` alias, sed's
    /// `e`, awk's `system()`): parsed and decided as units of their own when literal.
    ExecString,
    /// The value names a program (or a command line) that is run with arguments the caller
    /// does not see (`--pre`, `core.pager`, `--upload-pack`, `--compress-program`): decided as
    /// a unit of its own when literal, as unknown code otherwise.
    ExecProgram,
    /// The program itself runs code it is given (a script file, `python -c`, `node -e`,
    /// `make`'s recipes, `npm run`'s scripts): covered by a rule for the program, never
    /// read-only.
    RunsCode,
    /// Talks to the network.
    Network,
    /// Changes the state of the system outside files: the clock, the host name, processes,
    /// packages, containers, remote state.
    System,
    /// Cannot be known before running: an unknown program, an unknown option, an option value
    /// or operand that cannot be read statically.
    Unknown,
}

impl EffectKind {
    /// The name used in the command database and in explanations.
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Read => "read",
            EffectKind::Write => "write",
            EffectKind::ExecArgv => "exec-argv",
            EffectKind::ExecString => "exec-string",
            EffectKind::ExecProgram => "exec-program",
            EffectKind::RunsCode => "runs-code",
            EffectKind::Network => "network",
            EffectKind::System => "system",
            EffectKind::Unknown => "unknown",
        }
    }

    /// Parse a database name (the inverse of [`EffectKind::as_str`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "read" => EffectKind::Read,
            "write" => EffectKind::Write,
            "exec-argv" => EffectKind::ExecArgv,
            "exec-string" => EffectKind::ExecString,
            "exec-program" => EffectKind::ExecProgram,
            "runs-code" => EffectKind::RunsCode,
            "network" => EffectKind::Network,
            "system" => EffectKind::System,
            "unknown" => EffectKind::Unknown,
            _ => return None,
        })
    }

    /// Does an effect of this kind keep a command read-only?
    pub fn is_read_only(self) -> bool {
        matches!(self, EffectKind::Read)
    }
}

impl fmt::Display for EffectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an effect comes from: the database entry (program, subcommand, option or operand)
/// that produced it, for explanations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// The program (with its subcommands: `git diff`).
    pub program: String,
    /// The option that produced it (`--output`), or `None` for an operand or the program
    /// itself.
    pub option: Option<String>,
    /// What the database says, in a few words (`operand 2: write`, `sed script command w`).
    pub detail: String,
}

impl Source {
    /// The program name redirections are attributed to.
    const SHELL: &'static str = "bash";
    /// The detail every redirection's source starts with.
    const REDIRECTION: &'static str = "redirection";

    /// The source of an effect of a shell redirection written `raw`.
    pub fn redirection(raw: &str) -> Self {
        Self {
            program: Self::SHELL.into(),
            option: None,
            detail: format!("{} {raw}", Self::REDIRECTION),
        }
    }

    /// Is this the source of a shell redirection (not of a program or one of its options)?
    pub fn is_redirection(&self) -> bool {
        self.program == Self::SHELL
            && self.option.is_none()
            && self.detail.starts_with(Self::REDIRECTION)
    }

    /// Whether it is an operand the program writes in place of its standard output
    /// (`uniq IN OUT`): a redirection in all but syntax.
    pub fn is_output_operand(&self) -> bool {
        self.option.is_none() && self.detail == Self::OUTPUT_OPERAND
    }

    /// The detail of an output operand's effect.
    pub(crate) const OUTPUT_OPERAND: &'static str = "operand: output";

    /// Whether it is a file a program's script writes by name (sed's `w FILE`, awk's
    /// `print > FILE`): a redirection in all but syntax.
    pub fn is_script_write(&self) -> bool {
        self.option.is_none() && self.detail.ends_with(Self::SCRIPT_WRITES)
    }

    /// The end of the detail of a write a program's script makes.
    pub(crate) const SCRIPT_WRITES: &'static str = ": writes by name";

    /// Whether the effect is a file the program loads from where it runs, whatever its
    /// arguments (`.env` for `docker compose`): read when it is there.
    pub fn is_loaded_where_it_runs(&self) -> bool {
        self.option.is_none() && self.detail == Self::LOADED_WHERE_IT_RUNS
    }

    /// The detail of the effect of a file a program loads from where it runs.
    pub(crate) const LOADED_WHERE_IT_RUNS: &'static str = "program: loads it from where it runs";
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.option {
            Some(o) => write!(f, "{} {} ({})", self.program, o, self.detail),
            None => write!(f, "{} ({})", self.program, self.detail),
        }
    }
}

/// One thing a command does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Effect {
    /// What kind of thing.
    pub kind: EffectKind,
    /// The file, program or code it concerns, as bash passes it (after expansion). `None` when
    /// the effect has no value (network, system) or its value cannot be known.
    pub value: Option<String>,
    /// For [`EffectKind::ExecArgv`]: the command's words.
    pub argv: Vec<String>,
    /// For [`EffectKind::ExecArgv`]: more words are added at run time (`xargs` appends what it
    /// reads; `find -exec ... {} +` appends file names), so `argv` is only a prefix.
    pub argv_open: bool,
    /// For a command it runs ([`EffectKind::ExecArgv`], [`EffectKind::ExecString`],
    /// [`EffectKind::ExecProgram`]): the directory it runs in, as the program's options name it
    /// (relative to the program's own), when they change it (`env -C DIR CMD`).
    pub cwd: Option<String>,
    /// For [`EffectKind::ExecArgv`]: the variables the program sets for the command it runs
    /// (`env PATH=/x ls`), `NAME=VALUE` as given.
    pub assigns: Vec<String>,
    /// Where it comes from.
    pub source: Source,
}

impl Effect {
    /// An effect with a value.
    pub fn new(kind: EffectKind, value: Option<String>, source: Source) -> Self {
        Self {
            kind,
            value,
            argv: Vec::new(),
            argv_open: false,
            cwd: None,
            assigns: Vec::new(),
            source,
        }
    }
}
