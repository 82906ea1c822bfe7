//! What a command line runs, reads, writes and executes.
//!
//! [`analyze`] parses the line with a real bash grammar, walks it in execution order with a
//! model of the shell's state (variables assigned on the line, the working directory through
//! `cd`, `pushd` and `popd`), expands every word as bash would ([`crate::expand`]), and turns
//! each simple command into a [`Unit`]: its argv, its redirections, and the effects the
//! command database ([`crate::db`]) finds in it. Commands carried inside other commands
//! (wrappers, `sh -c`, `eval`, `xargs`, `find -exec`, git aliases and pagers, sed's `e`,
//! awk's `system()`) become units of their own, linked to the unit that runs them, and
//! substitutions (`$(...)`, backquotes, `<(...)`, in words, redirect targets, heredocs,
//! `[[ ]]` and arithmetic) are units too.
//!
//! Nothing here decides anything: the policy matches rules against the units and decides each
//! effect. What cannot be known is said (a unit's `certain`, the analysis' `problems`), so a
//! caller can fail closed.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions};

use crate::db::{Interpretation, database};
use crate::expand::{self, Expanded, Mode, Var, Vars};
use crate::{Effect, EffectKind, Source};

/// Longest command line that is parsed; a longer one is only scanned for words.
pub const MAX_PARSE_BYTES: usize = 256 * 1024;
/// Most units one line may produce before the analysis stops adding them.
pub const MAX_UNITS: usize = 4096;
/// Deepest nesting of substitutions and carried commands followed.
pub const MAX_DEPTH: usize = 16;

/// The shell a command line will run in.
#[derive(Debug, Clone)]
pub struct ShellEnv {
    /// The working directory at the start of the line.
    pub cwd: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// Expand globs against the file system (turn off for a line that will not run here).
    pub glob_fs: bool,
}

impl ShellEnv {
    /// A shell in `cwd` with home `home`, expanding globs against the file system.
    pub fn new(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home: home.into(),
            glob_fs: true,
        }
    }

    /// A shell in no particular place: a relative cwd, a home that names nothing, no globbing.
    /// For questions about a line that do not depend on where it runs (is it read-only, which
    /// programs does it run).
    pub fn detached() -> Self {
        Self {
            cwd: ".".into(),
            home: "/nonexistent-home".into(),
            glob_fs: false,
        }
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`, `>&file`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&N`, `>&N`: to a descriptor.
    Duplicate,
    /// A heredoc or here-string.
    Here,
}

impl RedirectKind {
    /// Does it write its target?
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
        )
    }

    /// Does it read its target?
    pub fn reads(self) -> bool {
        matches!(self, RedirectKind::Read | RedirectKind::ReadWrite)
    }
}

/// The variables an arithmetic expression assigns: a name (or an element of one, `a[i]`)
/// before `=` or a compound assignment operator (`+=`, `<<=`...), or next to `++`/`--`.
/// A name inside a nested substitution counts too (the stricter reading).
pub(crate) fn arithmetic_targets(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$'));
        if !starts {
            i += 1;
            continue;
        }
        let from = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = &text[from..i];
        // `0x1f`, `2#101`: digits come first, so a name never starts there; what follows a
        // name: a subscript, then the operator.
        let mut j = i;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if j < b.len() && b[j] == b'[' {
            let mut level = 0usize;
            while j < b.len() {
                match b[j] {
                    b'[' => level += 1,
                    b']' => {
                        level -= 1;
                        if level == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
        }
        let rest = &b[j.min(b.len())..];
        let before = text[..from].trim_end();
        let assigns = (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'='))
            || rest.starts_with(b"++")
            || rest.starts_with(b"--")
            || [
                &b"+="[..],
                b"-=",
                b"*=",
                b"/=",
                b"%=",
                b"&=",
                b"|=",
                b"^=",
                b"<<=",
                b">>=",
            ]
            .iter()
            .any(|op| rest.starts_with(op))
            || before.ends_with("++")
            || before.ends_with("--");
        if assigns && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

/// Whether an arithmetic expression holds an assignment operator (`=`, `+=`, `<<=`, `++`...),
/// whatever it assigns to.
fn assigns_any(text: &str) -> bool {
    let b = text.as_bytes();
    text.contains("++")
        || text.contains("--")
        || b.iter().enumerate().any(|(i, &c)| {
            if c != b'=' || b.get(i + 1) == Some(&b'=') {
                return false;
            }
            match i.checked_sub(1).map(|p| b[p]) {
                Some(b'=' | b'!') => false,
                Some(b'<' | b'>') => i >= 2 && b[i - 2] == b[i - 1],
                _ => true,
            }
        })
}

/// Variables bash itself reads as it runs the line (`PATH` to find programs, `BASH_ENV` and
/// `ENV` for code to source, `CDPATH` for `cd`, `IFS` to split words, `BASH_CMDS` and
/// `BASH_ALIASES` as the command and alias tables...), from bash's manual; and any variable
/// the environment holds now, which programs the line starts inherit changed.
pub(crate) fn shell_reads(name: &str) -> bool {
    const READ_BY_BASH: &[&str] = &[
        "PATH",
        "CDPATH",
        "HOME",
        "IFS",
        "ENV",
        "GLOBIGNORE",
        "GLOBSORT",
        "EXECIGNORE",
        "FIGNORE",
        "HISTFILE",
        "HISTCONTROL",
        "HISTIGNORE",
        "HISTSIZE",
        "HISTFILESIZE",
        "HOSTFILE",
        "INPUTRC",
        "MAIL",
        "MAILPATH",
        "OPTIND",
        "OPTARG",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "TMOUT",
        "TMPDIR",
        "POSIXLY_CORRECT",
        "LANG",
        "LC_ALL",
        "LC_COLLATE",
        "LC_CTYPE",
        "TIMEFORMAT",
        "OLDPWD",
        "PWD",
        "SHELL",
        "TERM",
    ];
    READ_BY_BASH.contains(&name)
        || name.starts_with("BASH_")
        || name.starts_with("LD_")
        || std::env::var_os(name).is_some()
}

/// The `key=value` settings git takes from the environment a unit gives it (its own
/// assignments, then variables set earlier on the line, exported or not: the stricter
/// reading).
/// `--config-env=KEY=VAR` in `argv` takes KEY's value from the variable VAR: when that is
/// known, it is among them as `KEY=value`.
fn git_env_config(assignments: &[Assignment], vars: &Vars, argv: &[String]) -> Vec<String> {
    let get = |name: &str| -> Option<String> {
        assignments
            .iter()
            .rev()
            .find(|a| a.name == name)
            .and_then(|a| a.value.clone())
            .or_else(|| match vars.get(name) {
                expand::Var::Known(v) => Some(v),
                expand::Var::Unknown => None,
            })
    };
    let mut out = Vec::new();
    let mut words = argv.iter().skip(1);
    while let Some(w) = words.next() {
        let spec = match w.strip_prefix("--config-env") {
            Some("") => words.next().cloned(),
            Some(rest) => rest.strip_prefix('=').map(str::to_owned),
            None => None,
        };
        if let Some((key, var)) = spec.as_deref().and_then(|s| s.rsplit_once('='))
            && let Some(v) = get(var)
        {
            out.push(format!("{key}={v}"));
        }
    }
    if let Some(n) = get("GIT_CONFIG_COUNT").and_then(|c| c.trim().parse::<usize>().ok()) {
        for i in 0..n.min(64) {
            if let (Some(k), Some(v)) = (
                get(&format!("GIT_CONFIG_KEY_{i}")),
                get(&format!("GIT_CONFIG_VALUE_{i}")),
            ) {
                out.push(format!("{k}={v}"));
            }
        }
    }
    // `'key'='value'` pairs, space separated, as git writes them for its children.
    if let Some(params) = get("GIT_CONFIG_PARAMETERS") {
        let mut rest = params.as_str();
        while let Some(start) = rest.find('\'') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('\'') else { break };
            let key = &after[..end];
            rest = &after[end + 1..];
            if let Some(v) = rest.strip_prefix("='") {
                let Some(e) = v.find('\'') else { break };
                out.push(format!("{key}={}", &v[..e]));
                rest = &v[e + 1..];
            } else {
                out.push(key.to_owned());
            }
        }
    }
    out
}

/// A redirection of a unit (its own, or of a compound command around it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// The target after expansion (a file, or a descriptor for duplications); `None` for
    /// heredocs and process substitutions.
    pub target: Option<String>,
    /// The target was known exactly.
    pub certain: bool,
    /// The target as written.
    pub raw: String,
    /// For a here-document or here-string on standard input: its text, when known exactly
    /// (`Some(None)` when it is fed but cannot be known).
    pub here: Option<Option<String>>,
    /// It gives the command its standard input (`< f`, `0<&3`, `<<EOF`): the last one that
    /// does is what the command reads.
    pub stdin: bool,
}

impl Redirect {
    /// A write to `/dev/null`, or a duplication: writes nothing anyone keeps.
    pub fn is_harmless(&self) -> bool {
        self.kind == RedirectKind::Duplicate
            || self.kind == RedirectKind::Here
            || (self.certain
                && self
                    .target
                    .as_deref()
                    .is_some_and(|t| lexical(Path::new(t)) == Path::new("/dev/null")))
    }
}

/// A variable assignment of a unit (`NAME=value cmd`, or a bare `NAME=value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable.
    pub name: String,
    /// Its value, when known.
    pub value: Option<String>,
    /// As written.
    pub raw: String,
    /// For an array (`a=(x y)`): its elements as far as they expand (`"${a[@]}"` runs them).
    pub elements: Vec<String>,
}

/// How a unit comes to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The shell runs it: a member of a list or pipeline, a body of a compound command.
    Line,
    /// The shell runs it for a substitution (`$(...)`, backquotes, `<(...)`).
    Substitution,
    /// Another unit runs it (a wrapper, `sh -c`, `xargs`, `find -exec`, a git alias...).
    Carried {
        /// The index of the unit that runs it.
        parent: usize,
        /// The database entry that says so.
        via: Source,
        /// The shell itself runs it (`eval`, `command`, `exec`, `builtin`), not a child
        /// program.
        by_shell: bool,
    },
}

/// One simple command the line (or a command inside it) runs.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The words after expansion (bash's fields); `argv[0]` as written (it may hold a path).
    pub argv: Vec<String>,
    /// Every word (and the working directory) was known exactly.
    pub certain: bool,
    /// Why it is not certain, beyond its words: the directory, code run that cannot be known,
    /// arguments added at run time.
    pub unknown: Vec<String>,
    /// Why some of its words are not known exactly.
    pub unknown_words: Vec<String>,
    /// The unit as the model wrote it: assignments and words, without redirections.
    pub text: String,
    /// Leading assignments.
    pub assignments: Vec<Assignment>,
    /// Redirections (its own and those of compound commands around it).
    pub redirects: Vec<Redirect>,
    /// The working directory it runs in.
    pub cwd: PathBuf,
    /// The working directory is known.
    pub cwd_certain: bool,
    /// Where the working directory is not known but is one of these (`CDPATH=/x cd y` where
    /// no `/x/y` is there now: `/x/y` or `./y`), for deny rules to meet what it does there.
    pub cwd_candidates: Vec<PathBuf>,
    /// How it comes to run.
    pub origin: Origin,
    /// How deep it is nested in substitutions and carried commands.
    pub depth: usize,
    /// What the command database makes of it (for `argv[0]`'s basename).
    pub interpretation: Interpretation,
    /// Effects found outside the database: `cd`'s directory, redirections, unknown code.
    pub extra_effects: Vec<Effect>,
}

impl Unit {
    /// `argv[0]`'s basename (empty for a bare assignment or redirection).
    pub fn program(&self) -> &str {
        self.argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a))
            .unwrap_or("")
    }

    /// `argv[0]` names a path (`./x`, `/usr/bin/x`).
    pub fn path_qualified(&self) -> bool {
        self.argv.first().is_some_and(|a| a.contains('/'))
    }

    /// Every effect: the database's and the others.
    pub fn effects(&self) -> impl Iterator<Item = &Effect> {
        self.interpretation
            .effects
            .iter()
            .chain(self.extra_effects.iter())
    }

    /// The words rules are matched against: `argv[0]`'s basename, global options before a
    /// subcommand dropped.
    pub fn rule_words(&self) -> Vec<String> {
        let mut w = if self.interpretation.rule_words.is_empty() {
            self.argv.clone()
        } else {
            self.interpretation.rule_words.clone()
        };
        if let Some(first) = w.first_mut() {
            *first = first.rsplit('/').next().unwrap_or(first).to_owned();
        }
        w
    }

    /// Is this a bare assignment or redirection with no command?
    pub fn is_bare(&self) -> bool {
        self.argv.is_empty()
    }
}

/// The analysis of a command line.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Every unit, in execution order (a carried unit right after the unit that runs it).
    pub units: Vec<Unit>,
    /// The line parsed as bash. When it did not, `units` holds what a word scan found.
    pub parsed: bool,
    /// What keeps the analysis from being complete: parse errors, budgets, function
    /// definitions, characters parsers disagree on. Any problem means the line cannot be
    /// allowed without a person.
    pub problems: Vec<String>,
    /// Of [`problems`](Self::problems), those that only say the line changes the shell's own
    /// state for what follows (`set`, `shopt`, `alias`, a function definition): what a
    /// whole-tool `Bash` allow with no deny or ask rule lets run, as Claude Code does.
    pub state_problems: usize,
    /// Something runs in the background (`&`).
    pub background: bool,
    /// Some unit is in a loop body (`for`, `while`, `until`): it may run any number of times.
    pub loops: bool,
}

impl Analysis {
    /// Every unit is known exactly and nothing stands in the way of an allow.
    pub fn is_complete(&self) -> bool {
        self.parsed && self.problems.is_empty() && self.units.iter().all(|u| u.certain)
    }

    /// Does the line run a command substitution or a process substitution? Claude Code asks
    /// about such a line whatever its parts (it is "too complex" to approve piecewise).
    pub fn has_substitution(&self) -> bool {
        self.units.iter().any(|u| u.origin == Origin::Substitution)
    }

    /// The argv of every command the shell itself executes (not what child programs run), when
    /// all are known; `None` otherwise.
    pub fn shell_executed(&self) -> Option<Vec<&Unit>> {
        if !self.parsed || !self.problems.is_empty() || self.loops {
            return None;
        }
        let mut out = Vec::new();
        for (i, u) in self.units.iter().enumerate() {
            if !self.run_by_shell(i) {
                continue;
            }
            // Words that expanded to nothing the analysis can know (`$Q` after `read Q`):
            // what runs is not known, not "nothing".
            if u.is_bare() && !u.unknown_words.is_empty() {
                return None;
            }
            if u.is_bare() {
                continue;
            }
            if !u.certain {
                return None;
            }
            out.push(u);
        }
        Some(out)
    }

    fn run_by_shell(&self, i: usize) -> bool {
        match &self.units[i].origin {
            Origin::Line | Origin::Substitution => true,
            Origin::Carried {
                parent, by_shell, ..
            } => *by_shell && self.run_by_shell(*parent),
        }
    }
}

/// The most items of a `for` loop whose body is read once per item; past that, once with
/// the variable unknown.
const MAX_LOOP_ITEMS: usize = 32;

/// The deepest nesting a line may have and still be parsed: far more than any real command
/// (a handful), far less than what would exhaust a 2 MiB thread stack in the parser.
pub const MAX_NESTING: usize = 48;

/// An upper estimate of how deep a line nests: brackets, braces and parentheses (of
/// subshells, groups, substitutions, arithmetic, tests), backquotes, and the compound
/// commands `if`/`while`/`until`/`for`/`select`/`case`, outside single quotes and escapes.
/// Over-counting is harmless (the line is then asked about); under-counting is what must not
/// happen, so brackets in double quotes count too.
pub fn nesting_estimate(command: &str) -> usize {
    const OPEN_WORDS: [&str; 6] = ["if", "while", "until", "for", "select", "case"];
    const CLOSE_WORDS: [&str; 3] = ["fi", "done", "esac"];
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_single = false;
    let mut in_backquote = false;
    let mut chars = command.char_indices().peekable();
    let mut word_start = true;
    while let Some((i, c)) = chars.next() {
        if in_single {
            if c == '\'' {
                in_single = false;
            }
            continue;
        }
        match c {
            '\\' => {
                chars.next();
                word_start = false;
                continue;
            }
            '\'' => in_single = true,
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            '`' => {
                if in_backquote {
                    depth = depth.saturating_sub(1);
                } else {
                    depth += 1;
                }
                in_backquote = !in_backquote;
            }
            c if word_start && c.is_ascii_alphabetic() => {
                let word: String = command[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if OPEN_WORDS.contains(&word.as_str()) {
                    depth += 1;
                } else if CLOSE_WORDS.contains(&word.as_str()) {
                    depth = depth.saturating_sub(1);
                }
            }
            _ => {}
        }
        max = max.max(depth);
        word_start =
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '!');
    }
    max
}

/// Analyse a command line.
pub fn analyze(command: &str, env: &ShellEnv) -> Analysis {
    let mut a = Analysis {
        parsed: true,
        ..Analysis::default()
    };
    if let Some(e) = database().load_error() {
        a.problems
            .push(format!("the command database did not load: {e}"));
    }
    if command.contains(['\r', '\0']) {
        a.problems
            .push("the line holds a raw CR or NUL, which parsers read differently".into());
    }
    let mut vars = Vars::new(Some(env.cwd.clone()), env.home.clone());
    vars.glob_fs = env.glob_fs;
    let mut w = Walker {
        a,
        env: env.clone(),
        texts: Vec::new(),
    };
    if command.len() > MAX_PARSE_BYTES {
        w.a.problems.push(format!(
            "the line is longer than {MAX_PARSE_BYTES} bytes, the most that is analysed"
        ));
        w.scan(command, &vars);
        return w.a;
    }
    // The parser and the walk recurse once per level of nesting: a line nested deeper than
    // any real command is scanned for words, never parsed (it would exhaust the stack).
    let depth = nesting_estimate(command);
    if depth > MAX_NESTING {
        w.a.problems.push(format!(
            "the line nests {depth} levels deep (subshells, groups, substitutions, compound commands); at most {MAX_NESTING} are analysed"
        ));
        w.scan(command, &vars);
        return w.a;
    }
    let mut state = State {
        vars,
        stdin: None,
        cwd_certain: true,
        cwd_candidates: Vec::new(),
    };
    if let Err(e) = w.program(command, &mut state, Origin::Line, 0) {
        w.a.parsed = false;
        w.a.problems.push(format!("the line does not parse: {e}"));
        w.a.units.clear();
        let vars = Vars::new(Some(env.cwd.clone()), env.home.clone());
        w.scan(command, &vars);
    }
    w.a
}

/// The shell's state as the walk goes.
#[derive(Debug, Clone)]
struct State {
    vars: Vars,
    /// Standard input as `exec <FILE` (with no command) left it for the rest of the shell:
    /// what every later command reads unless it is given its own.
    stdin: Option<Redirect>,
    cwd_certain: bool,
    /// Where the directory is not known but is one of these (a `cd` through `CDPATH` to a
    /// name none of its directories holds now).
    cwd_candidates: Vec<PathBuf>,
}

impl State {
    fn cwd(&self) -> PathBuf {
        self.vars.cwd.clone().unwrap_or_default()
    }
}

struct Walker {
    a: Analysis,
    env: ShellEnv,
    /// For each program being walked (the line, then substitutions and carried command
    /// strings inside it; innermost last), its text when the parser's reading of it must be
    /// checked: when it holds a heredoc (see [`Walker::check_word`]).
    texts: Vec<Option<String>>,
}

/// A word expanded in the walk, with what it ran.
struct Word {
    raw: String,
    exp: Expanded,
}

impl Walker {
    fn full(&mut self) -> bool {
        if self.a.units.len() >= MAX_UNITS {
            let msg = format!("the line runs more than {MAX_UNITS} commands");
            if !self.a.problems.contains(&msg) {
                self.a.problems.push(msg);
            }
            return true;
        }
        false
    }

    /// Parse and walk a program (the line, a substitution, a carried command string).
    fn program(
        &mut self,
        text: &str,
        state: &mut State,
        origin: Origin,
        depth: usize,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            self.a
                .problems
                .push("commands are nested too deeply to follow".into());
            return Ok(());
        }
        let options = ParserOptions::default();
        // The parser panics on some inputs (brush-parser 0.4's tokenizer unwraps a character
        // that is not there): a line it cannot read is a line that does not parse.
        let parsed = std::panic::catch_unwind(|| {
            Parser::new(BufReader::new(text.as_bytes()), &options).parse_program()
        });
        let program = match parsed {
            Ok(p) => p.map_err(|e| e.to_string())?,
            Err(_) => return Err("the shell grammar's parser failed on this line".into()),
        };
        self.texts.push(has_heredoc(text).then(|| text.to_owned()));
        for list in &program.complete_commands {
            self.list(list, state, &origin, depth, &[]);
        }
        self.texts.pop();
        Ok(())
    }

    /// A redirection's descriptor number must be written right before its operator (`2>`):
    /// one that is not was a separate word the parser took for a descriptor (brush-parser
    /// does so after a heredoc operator on the same line), an argument lost.
    fn check_io_number(&mut self, fd: &str) {
        let written = match self.texts.last() {
            Some(Some(t)) => t.contains(&format!("{fd}>")) || t.contains(&format!("{fd}<")),
            _ => true,
        };
        if !written {
            self.misread();
        }
    }

    fn misread(&mut self) {
        let msg = "the parser's reading of a word differs from the text".to_owned();
        if !self.a.problems.contains(&msg) {
            self.a.problems.push(msg);
        }
    }

    /// Every word the parser hands over must stand in the text it parsed: one that does not
    /// means the parser read the line otherwise than it is written (brush-parser splits
    /// `${...}` words that follow a heredoc operator on the same line), so nothing read from
    /// it can be trusted for an allow. Only texts with a heredoc are checked: elsewhere the
    /// parser rewrites words legitimately (it drops comments inside `$( )`).
    fn check_word(&mut self, w: &ast::Word) {
        let raw = w.value.as_str();
        // Where the parser says the word stands, first (cheap); anywhere in the text else. The
        // parser drops line continuations from words: compare with the text without them too.
        let at_its_place = |t: &str| {
            w.loc
                .as_ref()
                .and_then(|l| t.get(l.start.index..l.end.index))
                == Some(raw)
        };
        let misread = match self.texts.last() {
            Some(Some(t)) => {
                !at_its_place(t) && !t.contains(raw) && !t.replace("\\\n", "").contains(raw)
            }
            _ => false,
        };
        if misread {
            self.misread();
        }
    }

    /// A program carried inside a unit: a parse failure is a problem of the line, with the
    /// payload's words scanned so deny rules still see them.
    fn carried_program(&mut self, text: &str, state: &mut State, origin: Origin, depth: usize) {
        let before = self.a.units.len();
        if let Err(e) = self.program(text, state, origin.clone(), depth) {
            self.a.units.truncate(before);
            self.a
                .problems
                .push(format!("a carried command does not parse: {e}"));
            let vars = state.vars.clone();
            let start = self.a.units.len();
            self.scan(text, &vars);
            for u in &mut self.a.units[start..] {
                u.origin = origin.clone();
                u.depth = depth;
            }
        }
    }

    fn list(
        &mut self,
        list: &ast::CompoundList,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        redirects: &[Redirect],
    ) {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            let background = matches!(sep, ast::SeparatorOperator::Async);
            if background {
                self.a.background = true;
                // A background job runs in a subshell: its state does not come back.
                let mut sub = state.clone();
                self.and_or(and_or, &mut sub, origin, depth, redirects);
            } else {
                self.and_or(and_or, state, origin, depth, redirects);
            }
        }
    }

    fn and_or(
        &mut self,
        l: &ast::AndOrList,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        redirects: &[Redirect],
    ) {
        self.pipeline(&l.first, state, origin, depth, redirects);
        for next in &l.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => {
                    self.pipeline(p, state, origin, depth, redirects)
                }
            }
        }
    }

    fn pipeline(
        &mut self,
        p: &ast::Pipeline,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        redirects: &[Redirect],
    ) {
        if p.seq.len() == 1 {
            self.command(&p.seq[0], state, origin, depth, redirects);
            return;
        }
        // Each member of a pipeline runs in a subshell. What a plain `echo` of known words
        // writes is known: the next member reads it on its standard input as it would a
        // here-string (`echo 'rm -rf .' | sh` runs `rm -rf .`); its own redirections come after.
        let mut fed: Option<Redirect> = None;
        for c in &p.seq {
            let mut sub = state.clone();
            let before = self.a.units.len();
            match fed.take() {
                Some(r) => {
                    let mut with = redirects.to_vec();
                    with.push(r);
                    self.command(c, &mut sub, origin, depth, &with);
                }
                None => self.command(c, &mut sub, origin, depth, redirects),
            }
            let pushed = &self.a.units[before..];
            // So is what `printf` writes with `%s`, `%b`, `%d` and `%c` directives (its
            // format used again while arguments remain, as printf does).
            // The writer may come through wrappers (`time -p /bin/echo`, `nohup printf`): the
            // member's one `echo` or `printf`, when every unit of the member is known.
            let name = |u: &Unit| {
                let a = u.argv.first().map_or("", String::as_str);
                a.rsplit('/').next().unwrap_or(a).to_owned()
            };
            let writers: Vec<&Unit> = pushed
                .iter()
                .filter(|u| matches!(name(u).as_str(), "echo" | "printf"))
                .collect();
            let written = match writers.as_slice() {
                [u] if pushed.iter().all(|p| p.certain) && pushed.len() <= 4 => {
                    match name(u).as_str() {
                        "echo" if !u.argv.get(1).is_some_and(|a| a.starts_with('-')) => {
                            Some(format!("{}\n", u.argv[1..].join(" ")))
                        }
                        "printf" if u.argv.len() >= 2 && !u.argv[1].starts_with('-') => {
                            printf_output(&u.argv[1], &u.argv[2..])
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            // Otherwise the next member reads what cannot be known (`... | cat | sqlite3`).
            fed = Some(Redirect {
                kind: RedirectKind::Here,
                target: None,
                certain: true,
                raw: String::new(),
                here: Some(written),
                stdin: true,
            });
        }
    }

    fn command(
        &mut self,
        c: &ast::Command,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        outer: &[Redirect],
    ) {
        match c {
            ast::Command::Simple(s) => self.simple(s, state, origin, depth, outer),
            ast::Command::Compound(cc, redirects) => {
                let all = self.with_redirects(redirects, outer, state, depth);
                let before = self.a.units.len();
                self.compound(cc, state, origin, depth, &all);
                if self.a.units.len() == before && all.len() > outer.len() {
                    // A compound command with no command in it still opens its redirections.
                    self.push_unit(Vec::new(), Vec::new(), all, state, origin, depth, "");
                }
            }
            ast::Command::Function(f) => {
                self.a.problems.push(format!(
                    "the line defines a function `{}`, which changes what later names run",
                    f.fname.value
                ));
                self.a.state_problems += 1;
                // The body may run: walk it in a copy of the state with unknown arguments,
                // under the redirections written after it, which every call opens
                // (`log() { printf ...; } >> ~/.bashrc`).
                let mut sub = state.clone();
                sub.vars.positional = None;
                let all = self.with_redirects(&f.body.1, outer, &mut sub, depth);
                let before = self.a.units.len();
                self.compound(&f.body.0, &mut sub, origin, depth, &all);
                if self.a.units.len() == before && all.len() > outer.len() {
                    self.push_unit(Vec::new(), Vec::new(), all, &sub, origin, depth, "");
                }
            }
            ast::Command::ExtendedTest(t, redirects) => {
                let all = self.with_redirects(redirects, outer, state, depth);
                self.extended_test(&t.expr, state, origin, depth);
                if all.len() > outer.len() {
                    // `[[ ... ]] > file` still opens the file.
                    self.push_unit(Vec::new(), Vec::new(), all, state, origin, depth, "");
                }
            }
        }
    }

    /// The redirections of a compound command (walked for their substitutions) after those of
    /// the commands around it.
    fn with_redirects(
        &mut self,
        redirects: &Option<ast::RedirectList>,
        outer: &[Redirect],
        state: &mut State,
        depth: usize,
    ) -> Vec<Redirect> {
        let mut all = outer.to_vec();
        for r in redirects.iter().flat_map(|r| r.0.iter()) {
            if let Some(r) = self.redirect(r, state, depth) {
                all.push(r);
            }
        }
        all
    }

    fn extended_test(
        &mut self,
        e: &ast::ExtendedTestExpr,
        state: &mut State,
        origin: &Origin,
        depth: usize,
    ) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a, state, origin, depth);
                self.extended_test(b, state, origin, depth);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a, state, origin, depth)
            }
            ast::ExtendedTestExpr::UnaryTest(op, w) => {
                let w = self.word(&w.value, state, Mode::NoSplit, depth);
                // `-v NAME`: a subscript of NAME is arithmetic.
                if matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    self.subscript_code(&w.exp.fields.concat(), state, depth);
                }
            }
            ast::ExtendedTestExpr::BinaryTest(op, l, r) => {
                let l = self.word(&l.value, state, Mode::NoSplit, depth);
                let r = self.word(&r.value, state, Mode::NoSplit, depth);
                // Arithmetic operands are expressions: their subscripts run substitutions.
                if matches!(
                    op,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.subscript_code(&l.exp.fields.concat(), state, depth);
                    self.subscript_code(&r.exp.fields.concat(), state, depth);
                    // And they may assign (`[[ PATH=0 -eq 0 ]]`).
                    for side in [&l, &r] {
                        let text = side.exp.fields.concat();
                        for name in arithmetic_targets(&text) {
                            let raw = format!("[[ {text} ]]");
                            self.assigned_elsewhere(&name, None, &raw, state, origin, depth);
                        }
                    }
                }
            }
        }
    }

    fn compound(
        &mut self,
        cc: &ast::CompoundCommand,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        redirects: &[Redirect],
    ) {
        match cc {
            ast::CompoundCommand::BraceGroup(b) => {
                self.list(&b.list, state, origin, depth, redirects)
            }
            ast::CompoundCommand::Subshell(s) => {
                let mut sub = state.clone();
                self.list(&s.list, &mut sub, origin, depth, redirects);
            }
            ast::CompoundCommand::ForClause(f) => {
                let mut items: Option<Vec<String>> = f.values.as_ref().map(|_| Vec::new());
                if let Some(values) = &f.values {
                    for v in values {
                        let w = self.word(&v.value, state, Mode::Argument, depth);
                        match (&mut items, w.exp.certain) {
                            (Some(list), true) => list.extend(w.exp.fields),
                            _ => items = None,
                        }
                    }
                }
                self.a.loops = true;
                // A body that runs again may `shift`: its positional parameters are not known.
                state.vars.positional = None;
                match items {
                    // Known items, not too many: the body once per item, as bash runs it
                    // (`for f in src/*.rs; do wc -l "$f"; done`).
                    Some(list) if !list.is_empty() && list.len() <= MAX_LOOP_ITEMS => {
                        for item in list {
                            let raw = format!("for {} in {item}", f.variable_name);
                            self.assigned_elsewhere(
                                &f.variable_name,
                                Some(item),
                                &raw,
                                state,
                                origin,
                                depth,
                            );
                            self.list(&f.body.list, state, origin, depth, redirects);
                        }
                    }
                    _ => {
                        let raw = format!("for {} in ...", f.variable_name);
                        self.assigned_elsewhere(&f.variable_name, None, &raw, state, origin, depth);
                        self.list(&f.body.list, state, origin, depth, redirects);
                    }
                }
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value, state, origin, depth);
                }
                self.a.loops = true;
                state.vars.positional = None;
                self.list(&f.body.list, state, origin, depth, redirects);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, state, Mode::NoSplit, depth);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, state, Mode::NoSplit, depth);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, state, origin, depth, redirects);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition, state, origin, depth, redirects);
                self.list(&i.then, state, origin, depth, redirects);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, state, origin, depth, redirects);
                    }
                    self.list(&e.body, state, origin, depth, redirects);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.a.loops = true;
                state.vars.positional = None;
                self.list(&w.0, state, origin, depth, redirects);
                self.list(&w.1.list, state, origin, depth, redirects);
            }
            ast::CompoundCommand::Arithmetic(a) => {
                self.arithmetic(&a.expr.value, state, origin, depth)
            }
            ast::CompoundCommand::Coprocess(c) => {
                self.a.background = true;
                let mut sub = state.clone();
                self.command(&c.body, &mut sub, origin, depth, redirects);
            }
        }
    }

    /// Substitutions inside an arithmetic context run, and the variables it assigns change
    /// (see [`Walker::assigned_elsewhere`]).
    fn arithmetic(&mut self, text: &str, state: &mut State, origin: &Origin, depth: usize) {
        let w = self.word(
            &format!("\"{}\"", text.replace('"', "\\\"")),
            state,
            Mode::NoSplit,
            depth,
        );
        // The names assigned are read after expansion, quotes taken out (`(( "PATH"=0 ))`,
        // `(( P${x}ATH=0 ))`); one that cannot be known may be any variable.
        let expanded = w.exp.fields.concat().replace(['"', '\''], "");
        if !w.exp.certain && !arithmetic_targets(&text.replace(['"', '\''], "")).is_empty()
            || !w.exp.certain && arithmetic_targets(&expanded).is_empty() && assigns_any(text)
        {
            self.assigned_elsewhere(
                "PATH",
                None,
                &format!("(( {} )) (a variable that cannot be known)", text.trim()),
                state,
                origin,
                depth,
            );
        }
        for name in arithmetic_targets(&expanded) {
            self.assigned_elsewhere(
                &name,
                None,
                &format!("(( {} ))", text.trim()),
                state,
                origin,
                depth,
            );
        }
    }

    /// A variable assigned by something other than an assignment word: arithmetic
    /// (`(( PATH=0 ))`, `[[ X=1 -eq 1 ]]`), a `for` loop's name. Its value is what the
    /// analysis now holds for it (`None`: not known). When bash or the programs it starts
    /// read the variable (see [`shell_reads`]), the assignment is a unit of its own, as
    /// `PATH=0` written alone is: it changes what the rest of the line runs.
    fn assigned_elsewhere(
        &mut self,
        name: &str,
        value: Option<String>,
        raw: &str,
        state: &mut State,
        origin: &Origin,
        depth: usize,
    ) {
        state
            .vars
            .set(name, value.clone().map_or(Var::Unknown, Var::Known));
        if !shell_reads(name) {
            return;
        }
        let assignment = Assignment {
            name: name.to_owned(),
            value,
            raw: raw.to_owned(),
            elements: Vec::new(),
        };
        self.push_unit(
            Vec::new(),
            vec![assignment],
            Vec::new(),
            state,
            origin,
            depth,
            raw,
        );
    }

    /// Expand a word and walk the substitutions it runs.
    fn word(&mut self, raw: &str, state: &mut State, mode: Mode, depth: usize) -> Word {
        let exp = expand::expand(raw, &state.vars, mode);
        for sub in &exp.substitutions {
            // A substitution runs in a subshell.
            let mut s = state.clone();
            self.carried_program(sub, &mut s, Origin::Substitution, depth + 1);
        }
        Word {
            raw: raw.to_owned(),
            exp,
        }
    }

    fn redirect(
        &mut self,
        r: &ast::IoRedirect,
        state: &mut State,
        depth: usize,
    ) -> Option<Redirect> {
        let target = |w: &Word| {
            let certain = w.exp.certain && w.exp.fields.len() == 1;
            (Some(w.exp.fields.concat()), certain)
        };
        Some(match r {
            ast::IoRedirect::File(fd, kind, t) => {
                if let Some(fd) = fd {
                    self.check_io_number(&fd.to_string());
                }
                let stdin = match fd {
                    None => matches!(
                        kind,
                        ast::IoFileRedirectKind::Read
                            | ast::IoFileRedirectKind::ReadAndWrite
                            | ast::IoFileRedirectKind::DuplicateInput
                    ),
                    Some(fd) => fd.to_string() == "0",
                };
                let kind = match kind {
                    ast::IoFileRedirectKind::Read => RedirectKind::Read,
                    ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => {
                        RedirectKind::Write
                    }
                    ast::IoFileRedirectKind::Append => RedirectKind::Append,
                    ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                    ast::IoFileRedirectKind::DuplicateInput
                    | ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::Duplicate,
                };
                match t {
                    ast::IoFileRedirectTarget::Filename(w) => {
                        let w = self.word(&w.value, state, Mode::NoSplit, depth);
                        let (target, certain) = target(&w);
                        Redirect {
                            kind,
                            target,
                            certain,
                            raw: w.raw,
                            here: None,
                            stdin,
                        }
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let w = self.word(&w.value, state, Mode::NoSplit, depth);
                        let (t, certain) = target(&w);
                        // `>&file` (not a descriptor number or `-`) writes to a file.
                        let is_fd = certain
                            && t.as_deref().is_some_and(|l| {
                                l == "-"
                                    || l.trim_end_matches('-').chars().all(|c| c.is_ascii_digit())
                            });
                        Redirect {
                            kind: if is_fd {
                                RedirectKind::Duplicate
                            } else if kind == RedirectKind::Duplicate
                                && matches!(
                                    r,
                                    ast::IoRedirect::File(
                                        _,
                                        ast::IoFileRedirectKind::DuplicateInput,
                                        _
                                    )
                                )
                            {
                                RedirectKind::Read
                            } else {
                                RedirectKind::Write
                            },
                            target: t,
                            certain,
                            raw: w.raw,
                            here: None,
                            stdin,
                        }
                    }
                    ast::IoFileRedirectTarget::Fd(_) => Redirect {
                        here: None,
                        stdin,
                        kind: RedirectKind::Duplicate,
                        target: None,
                        certain: true,
                        raw: String::new(),
                    },
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        let mut s = state.clone();
                        self.list(&sub.list, &mut s, &Origin::Substitution, depth + 1, &[]);
                        return None;
                    }
                }
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let on_stdin = fd.as_ref().is_none_or(|f| f.to_string() == "0");
                if let Some(fd) = fd {
                    self.check_io_number(&fd.to_string());
                }
                let text = if doc.requires_expansion {
                    let w = self.word(&doc.doc.value, state, Mode::Heredoc, depth);
                    w.exp.certain.then(|| w.exp.fields.concat())
                } else {
                    Some(doc.doc.value.clone())
                };
                Redirect {
                    kind: RedirectKind::Here,
                    target: None,
                    certain: true,
                    raw: String::new(),
                    here: on_stdin.then_some(text),
                    stdin: on_stdin,
                }
            }
            ast::IoRedirect::HereString(fd, w) => {
                let on_stdin = fd.as_ref().is_none_or(|f| f.to_string() == "0");
                if let Some(fd) = fd {
                    self.check_io_number(&fd.to_string());
                }
                let w = self.word(&w.value, state, Mode::NoSplit, depth);
                // A here-string gets a newline at its end.
                let text = w
                    .exp
                    .certain
                    .then(|| format!("{}\n", w.exp.fields.concat()));
                Redirect {
                    kind: RedirectKind::Here,
                    target: None,
                    certain: true,
                    raw: String::new(),
                    here: on_stdin.then_some(text),
                    stdin: on_stdin,
                }
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let w = self.word(&w.value, state, Mode::NoSplit, depth);
                let (target, certain) = target(&w);
                Redirect {
                    kind: if *append {
                        RedirectKind::Append
                    } else {
                        RedirectKind::Write
                    },
                    target,
                    certain,
                    raw: w.raw,
                    stdin: false,
                    here: None,
                }
            }
        })
    }

    fn simple(
        &mut self,
        s: &ast::SimpleCommand,
        state: &mut State,
        origin: &Origin,
        depth: usize,
        outer: &[Redirect],
    ) {
        let mut assignments: Vec<(String, Word)> = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut redirects: Vec<Redirect> = Vec::new();
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Some)
            .chain(std::iter::once(None))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(Some));
        for item in items.clone() {
            match item {
                Some(ast::CommandPrefixOrSuffixItem::Word(w))
                | Some(ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)) => self.check_word(w),
                None => {
                    if let Some(w) = &s.word_or_name {
                        self.check_word(w)
                    }
                }
                _ => {}
            }
        }
        for item in items {
            match item {
                None => {
                    if let Some(name) = &s.word_or_name {
                        let w = self.word(&name.value, state, Mode::Argument, depth);
                        words.push(w);
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => {
                    if let Some(r) = self.redirect(r, state, depth) {
                        redirects.push(r);
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::Word(w)) => {
                    let w = self.word(&w.value, state, Mode::Argument, depth);
                    words.push(w);
                }
                Some(ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w)) => {
                    // An array element's subscript is arithmetic: substitutions in it run
                    // (`A[$(cmd)]=x`).
                    let name = a.name.to_string();
                    if let Some((_, rest)) = name.split_once('[')
                        && let Some(index) = rest.strip_suffix(']')
                        && (index.contains("$(") || index.contains('`'))
                    {
                        self.word(index, state, Mode::NoSplit, depth);
                    }
                    if words.is_empty() {
                        let exp = match &a.value {
                            ast::AssignmentValue::Scalar(v) => {
                                self.word(&v.value, state, Mode::NoSplit, depth).exp
                            }
                            ast::AssignmentValue::Array(items) => {
                                let mut elements = Vec::new();
                                for (k, v) in items {
                                    if let Some(k) = k {
                                        self.word(&k.value, state, Mode::NoSplit, depth);
                                    }
                                    let e = self.word(&v.value, state, Mode::Argument, depth);
                                    elements.extend(e.exp.fields);
                                }
                                // An array has no single value to expand later words with;
                                // its elements are kept (what `"${a[@]}"` runs).
                                Expanded {
                                    fields: elements,
                                    unknown: vec!["an array value".into()],
                                    ..Expanded::default()
                                }
                            }
                        };
                        let raw = w.value.clone();
                        assignments.push((a.name.to_string(), Word { raw, exp }));
                    } else {
                        // After the command name an assignment is an ordinary argument.
                        let w = self.word(&w.value, state, Mode::Argument, depth);
                        words.push(w);
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub)) => {
                    let mut st = state.clone();
                    self.list(&sub.list, &mut st, &Origin::Substitution, depth + 1, &[]);
                    words.push(Word {
                        raw: "/dev/fd/63".into(),
                        exp: Expanded {
                            fields: vec!["/dev/fd/63".into()],
                            certain: true,
                            ..Expanded::default()
                        },
                    });
                }
            }
        }
        // Those around the command (a pipe, an enclosing group's) are made first; its own
        // come after and win on the same descriptor (`echo x | cat <<< y` reads `y`).
        let mut all_redirects: Vec<Redirect> = state.stdin.iter().chain(outer).cloned().collect();
        // `exec <FILE` with no command: the shell's standard input is that file's from here
        // on (`exec 0<cmds.sql; sqlite3 db`).
        let exec_alone = words.len() == 1 && words[0].exp.fields.concat() == "exec";
        if exec_alone && let Some(r) = redirects.iter().rev().find(|r| r.stdin) {
            let mut r = r.clone();
            if r.here.is_none() {
                r.here = Some(None);
            }
            state.stdin = Some(r);
        }
        all_redirects.extend(redirects);
        let assignments: Vec<Assignment> = assignments
            .into_iter()
            .map(|(name, w)| {
                let array = w
                    .raw
                    .split_once('=')
                    .is_some_and(|(_, v)| v.trim_start_matches('+').starts_with('('));
                Assignment {
                    value: (w.exp.certain).then(|| w.exp.fields.concat()),
                    elements: if array {
                        w.exp.fields.clone()
                    } else {
                        Vec::new()
                    },
                    name,
                    raw: w.raw,
                }
            })
            .collect();
        let mut argv = Vec::new();
        let mut certain = true;
        let mut unknown_words = Vec::new();
        for w in &words {
            argv.extend(w.exp.fields.iter().cloned());
            certain &= w.exp.certain;
            unknown_words.extend(w.exp.unknown.iter().cloned());
        }
        let text = assignments
            .iter()
            .map(|a| a.raw.clone())
            .chain(words.iter().map(|w| w.raw.clone()))
            .collect::<Vec<_>>()
            .join(" ");
        let bare = argv.is_empty();
        if bare && words.is_empty() {
            // A bare assignment changes the shell's variables.
            for a in &assignments {
                state
                    .vars
                    .set(&a.name, a.value.clone().map_or(Var::Unknown, Var::Known));
            }
            if assignments.is_empty() && all_redirects.is_empty() {
                return;
            }
        }
        let Some(idx) = self.push_unit(
            argv,
            assignments,
            all_redirects,
            state,
            origin,
            depth,
            &text,
        ) else {
            return;
        };
        let u = &mut self.a.units[idx];
        u.certain &= certain;
        u.unknown_words = unknown_words;
        if bare {
            if !words.is_empty() {
                // Words that expanded to nothing known: bash runs whatever they expand to.
                u.certain = false;
                u.unknown
                    .push("the command name comes from an expansion that cannot be known".into());
            }
            return;
        }
        self.builtin_state(idx, state);
        self.name_subscripts(idx, state, depth);
        self.carried(idx, state, depth);
    }

    /// Builtins that take variable names evaluate an array element's subscript as arithmetic,
    /// and substitutions in it run (`test -v 'a[$(cmd)]'`, `printf -v 'a[$(cmd)]' x`,
    /// `read 'a[$(cmd)]'`), whatever quotes kept them from the line's own expansion.
    fn name_subscripts(&mut self, idx: usize, state: &mut State, depth: usize) {
        let mut argv = self.a.units[idx].argv.clone();
        // `command` and `builtin` run the builtin itself.
        while matches!(
            argv.first().map(String::as_str),
            Some("command" | "builtin" | "-p" | "--")
        ) {
            argv.remove(0);
        }
        let takes_names = matches!(
            argv.first().map(String::as_str),
            Some(
                "test"
                    | "["
                    | "printf"
                    | "read"
                    | "mapfile"
                    | "readarray"
                    | "declare"
                    | "typeset"
                    | "local"
                    | "export"
                    | "readonly"
                    | "unset"
                    | "let"
                    | "getopts"
                    | "wait"
                    | "eval"
            )
        );
        if !takes_names {
            return;
        }
        // `test` and `[` take a name only after `-v`: their `-eq` operands are plain integers
        // (bash refuses anything else), not arithmetic as in `[[ ]]`.
        let is_test = matches!(argv.first().map(String::as_str), Some("test" | "["));
        for (i, a) in argv.iter().enumerate().skip(1) {
            if !is_test || argv[i - 1] == "-v" {
                self.subscript_code(a, state, depth);
            }
        }
    }

    /// The substitutions in an array subscript of `name` (`a[$(cmd)]`), which run when the
    /// name is evaluated as a variable.
    fn subscript_code(&mut self, name: &str, state: &mut State, depth: usize) {
        let Some((_, rest)) = name.split_once('[') else {
            return;
        };
        let index = rest.rsplit_once(']').map_or(rest, |(i, _)| i);
        if index.contains("$(") || index.contains('`') {
            self.word(index, state, Mode::NoSplit, depth);
        }
    }

    /// Add a unit with its database interpretation. `None` when the budget is spent.
    #[allow(clippy::too_many_arguments)]
    fn push_unit(
        &mut self,
        argv: Vec<String>,
        assignments: Vec<Assignment>,
        redirects: Vec<Redirect>,
        state: &State,
        origin: &Origin,
        depth: usize,
        text: &str,
    ) -> Option<usize> {
        if self.full() {
            return None;
        }
        let interpretation = if argv.is_empty() {
            Interpretation::default()
        } else {
            let mut words = argv.clone();
            words[0] = words[0].rsplit('/').next().unwrap_or(&words[0]).to_owned();
            // git reads configuration from the environment as it reads `-c` (`GIT_CONFIG_COUNT`
            // with `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, `GIT_CONFIG_PARAMETERS`).
            if words[0] == "git" {
                let env = git_env_config(&assignments, &state.vars, &words);
                for kv in env.into_iter().rev() {
                    words.insert(1, kv);
                    words.insert(1, "-c".to_owned());
                }
            }
            // What the last redirection of standard input gives is what it reads: a
            // here-document's or here-string's text, or a file's, which is not known.
            // (Where nothing is fed on the line, the command's input is as before: a file's or
            // the caller's.)
            let last = redirects.iter().rev().find(|r| r.stdin);
            let fed = match last {
                Some(r) if r.here.is_some() => r.here.as_ref().map(Option::as_deref),
                Some(_) => Some(None),
                _ => None,
            };
            database().interpret_fed(&words, fed)
        };
        let certain = assignments.iter().all(|a| a.value.is_some())
            && redirects.iter().all(|r| r.certain)
            && state.cwd_certain;
        let mut unknown = Vec::new();
        if !state.cwd_certain {
            unknown.push("the working directory is not known".into());
        }
        let cwd = state.cwd();
        let mut extra = Vec::new();
        for r in &redirects {
            let source = || Source::redirection(&r.raw);
            if r.kind.writes() && !r.is_harmless() {
                extra.push(Effect::new(
                    EffectKind::Write,
                    r.certain.then(|| r.target.clone()).flatten(),
                    source(),
                ));
            }
            if r.kind.reads() {
                extra.push(Effect::new(
                    EffectKind::Read,
                    r.certain.then(|| r.target.clone()).flatten(),
                    source(),
                ));
            }
        }
        self.a.units.push(Unit {
            argv,
            certain,
            unknown,
            unknown_words: Vec::new(),
            text: text.to_owned(),
            assignments,
            redirects,
            cwd,
            cwd_certain: state.cwd_certain,
            cwd_candidates: if state.cwd_certain {
                Vec::new()
            } else {
                state.cwd_candidates.clone()
            },
            origin: origin.clone(),
            depth,
            interpretation,
            extra_effects: extra,
        });
        Some(self.a.units.len() - 1)
    }

    /// Builtins that change the shell's state: the working directory and variables.
    fn builtin_state(&mut self, idx: usize, state: &mut State) {
        let u = &self.a.units[idx];
        let argv = u.argv.clone();
        let certain = u.certain;
        let name = argv.first().map(String::as_str).unwrap_or("");
        match name {
            "cd" | "pushd" => {
                let args: Vec<&String> = argv[1..]
                    .iter()
                    .skip_while(|a| matches!(a.as_str(), "-L" | "-P" | "-e" | "-@" | "--"))
                    .collect();
                // The last of `-L`/`-P` holds.
                let physical = argv[1..]
                    .iter()
                    .take_while(|a| a.starts_with('-') && a.as_str() != "--" && a.as_str() != "-")
                    .filter(|a| a.contains(['L', 'P']))
                    .last()
                    .is_some_and(|a| a.ends_with('P') || (a.contains('P') && !a.contains('L')));
                // `CDPATH`: a relative name not starting with `.` is looked up in its
                // directories first (the first where it exists), as bash does; an
                // assignment before `cd` itself (`CDPATH=/x cd y`) holds while it runs. Where
                // none of them holds it now, the line may make one before `cd` runs (or
                // bash falls back to the working directory): the directory is not known.
                let own_cdpath = u
                    .assignments
                    .iter()
                    .rev()
                    .find(|a| a.name == "CDPATH")
                    .map(|a| a.value.clone().map_or(Var::Unknown, Var::Known));
                // The directories `cd d` looks in through `CDPATH`, in order: `Some(None)`
                // when it does not look (`./d`, an absolute name, no `CDPATH`), `None` when
                // `CDPATH` is set to what cannot be known.
                let cdpath_dirs = |d: &str| -> Option<Option<Vec<PathBuf>>> {
                    if d.starts_with('/')
                        || d.starts_with("./")
                        || d.starts_with("../")
                        || d == "."
                        || d == ".."
                    {
                        return Some(None);
                    }
                    let value = own_cdpath
                        .clone()
                        .unwrap_or_else(|| state.vars.get("CDPATH"));
                    let set = own_cdpath.is_some() || state.vars.is_set("CDPATH");
                    match value {
                        Var::Known(v) if v.is_empty() => Some(None),
                        Var::Known(v) => Some(Some(
                            v.split(':')
                                .map(|e| {
                                    if e.is_empty() {
                                        state.cwd()
                                    } else {
                                        expand::join(&state.cwd(), e)
                                    }
                                })
                                .map(|e| lexical(&expand::join(&e, d)))
                                .collect(),
                        )),
                        // Set to what cannot be known: so is the directory.
                        Var::Unknown if set => None,
                        Var::Unknown => Some(None),
                    }
                };
                // Where none of `CDPATH`'s directories holds the name now, the directory is
                // one of them or the working directory's: the candidates.
                let mut candidates: Vec<PathBuf> = Vec::new();
                let target = match args.first() {
                    _ if !certain => None,
                    None if name == "cd" => Some(state.vars.home.clone()),
                    None => None,
                    Some(d) if d.as_str() == "-" => state.vars.oldpwd.clone(),
                    // `cd -P DIR/..`: `..` is taken from where DIR physically is (a link's
                    // target), which is known only of what is there now.
                    Some(d)
                        if physical
                            && Path::new(d.as_str())
                                .components()
                                .any(|c| c == std::path::Component::ParentDir) =>
                    {
                        std::fs::canonicalize(expand::join(&state.cwd(), d)).ok()
                    }
                    Some(d) => match cdpath_dirs(d) {
                        Some(None) => Some(lexical(&expand::join(&state.cwd(), d))),
                        Some(Some(dirs)) => match dirs.iter().find(|p| p.is_dir()) {
                            Some(found) => Some(found.clone()),
                            None => {
                                candidates = dirs;
                                candidates.push(lexical(&expand::join(&state.cwd(), d)));
                                None
                            }
                        },
                        None => None,
                    },
                };
                match target {
                    Some(t) => {
                        state.cwd_candidates.clear();
                        self.a.units[idx].extra_effects.push(Effect::new(
                            EffectKind::Read,
                            Some(t.display().to_string()),
                            Source {
                                program: name.into(),
                                option: None,
                                detail: "changes the working directory".into(),
                            },
                        ));
                        state.vars.oldpwd = state.vars.cwd.replace(t);
                    }
                    None => {
                        state.cwd_certain = false;
                        state.cwd_candidates = candidates;
                    }
                }
            }
            "popd" => {
                state.cwd_certain = false;
                state.cwd_candidates.clear();
            }
            // The options that change pathname expansion for the rest of the line.
            "shopt" if certain => {
                let mut set = None;
                for a in &argv[1..] {
                    match a.as_str() {
                        "-s" => set = Some(true),
                        "-u" => set = Some(false),
                        o => {
                            let Some(on) = set else { continue };
                            let opts = &mut state.vars.glob_opts;
                            match o {
                                "dotglob" => opts.dotglob = on,
                                "extglob" => opts.extglob = on,
                                "nocaseglob" => opts.nocaseglob = on,
                                _ => {}
                            }
                        }
                    }
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let refs = name != "export"
                    && argv
                        .iter()
                        .skip(1)
                        .any(|a| a.starts_with('-') && a.contains('n'));
                for a in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
                    if refs && let Some((k, v)) = a.split_once('=') {
                        state.vars.name_ref(k, v);
                        continue;
                    }
                    if let Some((k, v)) = a.split_once('=') {
                        let value = if certain {
                            Var::Known(v.to_owned())
                        } else {
                            Var::Unknown
                        };
                        state.vars.set(k, value);
                    }
                }
            }
            "unset" => {
                for a in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
                    state.vars.unset(a);
                }
            }
            "read" | "mapfile" | "readarray" | "getopts" | "printf" | "let" => {
                // These can assign variables from input: anything they name is unknown.
                for a in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
                    if a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        state.vars.set(a, Var::Unknown);
                    }
                }
            }
            // `shift N` drops the first N positional parameters (none when there are fewer).
            "shift" => {
                let n = match argv.get(1) {
                    _ if !certain => None,
                    None => Some(1),
                    Some(n) => n.parse::<usize>().ok(),
                };
                match (n, state.vars.positional.as_mut()) {
                    (Some(n), Some((_, args))) if n <= args.len() => {
                        args.drain(..n);
                    }
                    (Some(_), Some(_)) => {}
                    _ => state.vars.positional = None,
                }
            }
            // They change how later words expand or what later names run.
            "set" | "shopt" | "source" | "." | "alias" | "enable" | "trap"
                if name != "set" || argv.len() > 1 =>
            {
                // `set ARGS`, and a sourced file, may set the positional parameters.
                if matches!(name, "set" | "source" | ".") {
                    state.vars.positional = None;
                }
                let msg = format!("`{name}` changes how the rest of the line is read");
                if !self.a.problems.contains(&msg) {
                    self.a.problems.push(msg);
                    if matches!(name, "set" | "shopt" | "alias") {
                        self.a.state_problems += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// The state a command carried by unit `idx` starts in, when the unit's options change the
    /// directory it runs in (`env -C DIR CMD`): that directory, as `cd` would reach it, or one
    /// that cannot be known.
    fn enter(&self, sub: &mut State, idx: usize, dir: Option<&str>) {
        let Some(dir) = dir else { return };
        if !self.a.units[idx].certain {
            sub.cwd_certain = false;
            sub.cwd_candidates.clear();
            return;
        }
        let to = lexical(&expand::join(&sub.cwd(), dir));
        sub.vars.oldpwd = sub.vars.cwd.replace(to);
    }

    /// `$0` and the positional parameters of the shell unit `idx` starts with `-c CODE ARG0
    /// ARG1 ...` (bash's `$0` is `ARG0`, or the shell's name without it), when the unit's
    /// words are all known.
    fn shell_arguments(&self, idx: usize, code: &str) -> Option<(String, Vec<String>)> {
        let u = &self.a.units[idx];
        // The database's shell (under any of its names), not a program that runs a string
        // of its own.
        let shell = u.interpretation.path.first().is_some_and(|p| p == "bash");
        if !shell || !u.certain || !u.unknown_words.is_empty() {
            return None;
        }
        // The script is the word after the last option word that holds `c`.
        let at = u.argv.iter().enumerate().skip(1).find_map(|(i, w)| {
            let takes_c = w.starts_with('-') && !w.starts_with("--") && w.contains('c');
            (takes_c && u.argv.get(i + 1).is_some_and(|n| n == code)).then_some(i + 1)
        })?;
        let rest = &u.argv[at + 1..];
        let zero = rest.first().cloned().unwrap_or_else(|| u.argv[0].clone());
        Some((zero, rest.iter().skip(1).cloned().collect()))
    }

    /// Units carried by unit `idx`'s effects.
    fn carried(&mut self, idx: usize, state: &mut State, depth: usize) {
        let effects: Vec<Effect> = self.a.units[idx].interpretation.effects.clone();
        let program = self.a.units[idx].program().to_owned();
        let by_shell = matches!(
            program.as_str(),
            "eval" | "command" | "builtin" | "exec" | "time"
        );
        for e in effects {
            let origin = Origin::Carried {
                parent: idx,
                via: e.source.clone(),
                by_shell,
            };
            match e.kind {
                EffectKind::ExecArgv if !e.argv.is_empty() => {
                    let text = e.argv.join(" ");
                    let mut sub = state.clone();
                    self.enter(&mut sub, idx, e.cwd.as_deref());
                    // The command a wrapper runs reads what the wrapper's standard input is
                    // fed (`timeout 5 at now <<EOF`).
                    let fed: Vec<Redirect> = self.a.units[idx]
                        .redirects
                        .iter()
                        .filter(|r| r.here.is_some())
                        .cloned()
                        .collect();
                    // ... and gets its environment (`GIT_CONFIG_* timeout 5 git ...`), with
                    // what the wrapper sets itself (`env PATH=/x ls`).
                    let mut env = self.a.units[idx].assignments.clone();
                    for a in &e.assigns {
                        if let Some((name, value)) = a.split_once('=') {
                            env.push(Assignment {
                                name: name.to_owned(),
                                value: Some(value.to_owned()),
                                raw: a.clone(),
                                elements: Vec::new(),
                            });
                        }
                    }
                    if let Some(i) =
                        self.push_unit(e.argv.clone(), env, fed, &sub, &origin, depth + 1, &text)
                    {
                        let parent_certain = self.a.units[idx].certain;
                        let u = &mut self.a.units[i];
                        u.certain &= parent_certain && !e.argv_open;
                        if e.argv_open {
                            u.unknown_words
                                .push("more arguments are added at run time".into());
                        }
                        if by_shell {
                            self.builtin_state(i, state);
                        }
                        self.carried(i, &mut sub, depth + 1);
                    }
                }
                EffectKind::ExecString | EffectKind::ExecProgram => match &e.value {
                    Some(code) => {
                        if by_shell {
                            self.carried_program(code, state, origin, depth + 1);
                        } else {
                            // A new shell (or the program's own `sh -c`): variables of this
                            // line are not passed unless exported; keep the directory.
                            let mut sub = State {
                                vars: Vars::new(Some(state.cwd()), state.vars.home.clone()),
                                stdin: None,
                                cwd_certain: state.cwd_certain,
                                cwd_candidates: state.cwd_candidates.clone(),
                            };
                            sub.vars.glob_fs = self.env.glob_fs;
                            self.enter(&mut sub, idx, e.cwd.as_deref());
                            sub.vars.positional = self.shell_arguments(idx, code);
                            self.carried_program(code, &mut sub, origin, depth + 1);
                        }
                    }
                    None => {
                        self.a.units[idx]
                            .unknown
                            .push(format!("{} runs code that cannot be known", e.source));
                    }
                },
                _ => {}
            }
        }
    }

    /// The words of a line that does not parse (or is too long to parse): every run of
    /// characters between operators, with quotes and backslashes removed, as pseudo-units.
    /// They are never certain; they let deny rules see the programs.
    fn scan(&mut self, text: &str, vars: &Vars) {
        self.a.parsed = false;
        // What the line assigns on its way (`X=curl; $X ...`), for the words after.
        let mut vars = vars.clone();
        let mut cur: Vec<String> = Vec::new();
        let mut word = String::new();
        let mut in_word = false;
        let mut chars = text.chars().peekable();
        let mut quote: Option<char> = None;
        let flush_word = |word: &mut String, in_word: &mut bool, cur: &mut Vec<String>| {
            if *in_word {
                cur.push(std::mem::take(word));
                *in_word = false;
            }
        };
        let mut segments: Vec<Vec<String>> = Vec::new();
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') => {
                    if let Some(n) = chars.next() {
                        word.push(n);
                    }
                }
                // A parameter whose value is known (`$IFS` above all): expanded, and outside
                // quotes split on IFS, as bash would had the line parsed.
                (q @ (None | Some('"')), '$') if let Some((name, after)) = parameter(&chars) => {
                    let Var::Known(value) = vars.get(&name) else {
                        word.push('$');
                        in_word = true;
                        continue;
                    };
                    chars = after;
                    let ifs = match vars.get("IFS") {
                        Var::Known(v) => v,
                        Var::Unknown => String::new(),
                    };
                    for v in value.chars() {
                        if q.is_none() && ifs.contains(v) {
                            flush_word(&mut word, &mut in_word, &mut cur);
                        } else {
                            word.push(v);
                            in_word = true;
                        }
                    }
                    if q.is_some() {
                        in_word = true;
                    }
                }
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    in_word = true;
                }
                (None, '\\') => {
                    if let Some(n) = chars.next()
                        && n != '\n'
                    {
                        word.push(n);
                        in_word = true;
                    }
                }
                (None, c) if c.is_whitespace() && c != '\n' => {
                    flush_word(&mut word, &mut in_word, &mut cur)
                }
                // `{` and `}` are reserved words only alone; in a word they are braces
                // (`{curl,-s,x}`), which the caller expands.
                (None, '{' | '}')
                    if in_word || chars.peek().is_some_and(|n| !n.is_whitespace()) =>
                {
                    word.push(c);
                    in_word = true;
                }
                (None, ';' | '&' | '|' | '(' | ')' | '\n' | '`' | '{' | '}' | '<' | '>') => {
                    flush_word(&mut word, &mut in_word, &mut cur);
                    if !cur.is_empty() {
                        segments.push(std::mem::take(&mut cur));
                        learn_assignments(segments.last().map_or(&[][..], |s| s), &mut vars);
                    }
                }
                // `$'...'`: decoded as bash decodes it.
                (None, '$') if chars.peek() == Some(&'\'') => {
                    chars.next();
                    let mut body = String::new();
                    while let Some(b) = chars.next() {
                        match b {
                            '\\' => {
                                body.push(b);
                                if let Some(n) = chars.next() {
                                    body.push(n);
                                }
                            }
                            '\'' => break,
                            _ => body.push(b),
                        }
                    }
                    word.push_str(&expand::decode_ansi_c(&body).unwrap_or(body));
                    in_word = true;
                }
                (None, '$') if chars.peek() == Some(&'(') => {
                    flush_word(&mut word, &mut in_word, &mut cur);
                    if !cur.is_empty() {
                        segments.push(std::mem::take(&mut cur));
                        learn_assignments(segments.last().map_or(&[][..], |s| s), &mut vars);
                    }
                }
                (None, c) => {
                    word.push(c);
                    in_word = true;
                }
            }
        }
        flush_word(&mut word, &mut in_word, &mut cur);
        if !cur.is_empty() {
            segments.push(cur);
        }
        let state = State {
            vars: vars.clone(),
            stdin: None,
            cwd_certain: true,
            cwd_candidates: Vec::new(),
        };
        for seg in segments {
            // Drop leading assignments; keep the rest as the words.
            let argv: Vec<String> = seg.into_iter().skip_while(|w| is_assignment(w)).collect();
            if argv.is_empty() {
                continue;
            }
            let text = argv.join(" ");
            if let Some(i) = self.push_unit(
                argv,
                Vec::new(),
                Vec::new(),
                &state,
                &Origin::Line,
                0,
                &text,
            ) {
                let u = &mut self.a.units[i];
                u.certain = false;
                u.unknown
                    .push("the line does not parse; words were scanned".into());
                let mut st = state.clone();
                self.carried(i, &mut st, 0);
            }
        }
    }
}

/// The parameter a `$` just read names (`NAME`, `{NAME}`), and the characters after it; `None`
/// for anything else (`$(`, `$1`, `${x:-y}`, ...), which stays as it is.
fn parameter<'t>(
    chars: &std::iter::Peekable<std::str::Chars<'t>>,
) -> Option<(String, std::iter::Peekable<std::str::Chars<'t>>)> {
    let mut ahead = chars.clone();
    let braced = ahead.peek() == Some(&'{');
    if braced {
        ahead.next();
    }
    let mut name = String::new();
    while let Some(&c) = ahead.peek() {
        if c == '_' || c.is_ascii_alphabetic() || (!name.is_empty() && c.is_ascii_digit()) {
            name.push(c);
            ahead.next();
        } else {
            break;
        }
    }
    if name.is_empty() || (braced && ahead.next() != Some('}')) {
        return None;
    }
    Some((name, ahead))
}

/// Does the text hold a heredoc operator (`<<`, `<<-`; not a here-string `<<<`)? Quotes are
/// not considered: a `<<` inside them only turns the parser checks on.
fn has_heredoc(t: &str) -> bool {
    t.match_indices("<<")
        .any(|(i, _)| !t[i + 2..].starts_with('<') && !t[..i].ends_with('<'))
}

/// A scanned segment made of assignments only (`X=curl`): their values, known, for what the
/// scan reads after it.
fn learn_assignments(segment: &[String], vars: &mut Vars) {
    if segment.is_empty() || !segment.iter().all(|w| is_assignment(w)) {
        return;
    }
    for w in segment {
        if let Some((name, value)) = w.split_once('=') {
            // A value that still holds an expansion the scan could not make is not known.
            let value = if value.contains(['$', '`']) {
                Var::Unknown
            } else {
                Var::Known(value.to_owned())
            };
            vars.set(name, value);
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `.` and `..` removed lexically.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// What `printf FORMAT ARGS...` writes, where its format holds only `%s`, `%b`, `%d`, `%i`,
/// `%c` and `%%` directives (no flags or widths); `None` for anything else.
fn printf_output(format: &str, args: &[String]) -> Option<String> {
    let format = crate::expand::decode_ansi_c(format)?;
    let mut out = String::new();
    let mut next = 0usize;
    loop {
        let mut used = false;
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let directive = chars.next()?;
            if directive == '%' {
                out.push('%');
                continue;
            }
            let arg = args.get(next).map_or("", String::as_str);
            next += 1;
            used = true;
            match directive {
                's' | 'd' | 'i' => out.push_str(arg),
                'b' => out.push_str(&crate::expand::decode_ansi_c(arg)?),
                'c' => out.extend(arg.chars().next()),
                _ => return None,
            }
        }
        if !used || next >= args.len() {
            return Some(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What printf writes: its directives filled from the arguments, its format used again
    /// while arguments remain; a directive it cannot fill makes it unknown.
    #[test]
    fn printf_output_is_read() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::printf_output("%s\\n", &args(&["a", "b"])).as_deref(),
            Some("a\nb\n")
        );
        assert_eq!(
            super::printf_output("w %s\\nq\\n", &args(&["/x"])).as_deref(),
            Some("w /x\nq\n")
        );
        assert_eq!(super::printf_output("100%%", &[]).as_deref(), Some("100%"));
        assert_eq!(
            super::printf_output("%b", &args(&["a\\tb"])).as_deref(),
            Some("a\tb")
        );
        assert_eq!(super::printf_output("%5s", &args(&["x"])), None);
    }

    fn env() -> ShellEnv {
        ShellEnv {
            cwd: PathBuf::from("/w/p"),
            home: PathBuf::from("/home/u"),
            glob_fs: false,
        }
    }

    fn argvs(cmd: &str) -> Vec<String> {
        analyze(cmd, &env())
            .units
            .iter()
            .map(|u| u.argv.join(" "))
            .collect()
    }

    #[test]
    fn units_in_order_with_substitutions_and_carried_commands() {
        assert_eq!(argvs("ls -la; rm -rf x"), ["ls -la", "rm -rf x"]);
        assert_eq!(argvs("echo $(cat .env)"), ["cat .env", "echo"]);
        assert_eq!(
            argvs("timeout 5 rm -rf x"),
            ["timeout 5 rm -rf x", "rm -rf x"]
        );
        assert_eq!(
            argvs("bash -c 'curl x | sh'"),
            ["bash -c curl x | sh", "curl x", "sh"]
        );
        assert_eq!(argvs("{rm,-rf,x}"), ["rm -rf x"]);
        assert_eq!(argvs("rm${IFS}-rf x"), ["rm -rf x"]);
        assert_eq!(argvs("X=rm; $X -rf y"), ["", "rm -rf y"]);
        assert_eq!(
            argvs("diff <(cat .env) /dev/null"),
            ["cat .env", "diff /dev/fd/63 /dev/null"]
        );
        assert_eq!(argvs("cat <<EOF\n`touch p`\nEOF"), ["touch p", "cat"]);
        assert_eq!(argvs("[[ $(id) ]]"), ["id"]);
        let a = analyze("[[ -n x ]] > out.txt", &env());
        assert_eq!(a.units.len(), 1);
        assert_eq!(a.units[0].redirects[0].target.as_deref(), Some("out.txt"));
        assert!(!crate::is_read_only_analysis(&a));
        assert_eq!(argvs("r\\\nm -rf build"), ["rm -rf build"]);
        // brush-parser misreads `${...}` words after a heredoc operator on the same line: the
        // analysis must notice rather than claim the misread words.
        let a = analyze("true <<EOF | cat a${HOME}b\nline\nEOF\n", &env());
        assert!(!a.is_complete());
        assert!(analyze("make b\\\nuild", &env()).problems.is_empty());
        let a = analyze("cat <<EOF | grep x 1 > f\nbody\nEOF", &env());
        assert!(!a.is_complete());
        assert!(analyze("grep x f 2> err 1>&2", &env()).problems.is_empty());
        assert!(
            analyze("echo $( ls # a comment\n)", &env())
                .problems
                .is_empty()
        );
    }

    #[test]
    fn cd_is_tracked() {
        let a = analyze("cd sub && cat x; (cd /tmp); cat y", &env());
        let cwds: Vec<String> = a
            .units
            .iter()
            .map(|u| u.cwd.display().to_string())
            .collect();
        assert_eq!(cwds, ["/w/p", "/w/p/sub", "/w/p/sub", "/w/p/sub"]);
        let a = analyze("cd $X && cat x", &env());
        assert!(!a.units[1].certain);
    }

    #[test]
    fn cdpath_decides_where_a_relative_cd_goes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary directory: {e}"));
        let base = dir.path().display().to_string();
        std::fs::create_dir(dir.path().join("sub")).unwrap_or_else(|e| panic!("mkdir: {e}"));
        // As a prefix of `cd` itself, and as a variable set before it.
        for line in [
            format!("CDPATH={base} cd sub && cat x"),
            format!("CDPATH={base}; cd sub && cat x"),
        ] {
            let a = analyze(&line, &env());
            let last = a.units.last().unwrap_or_else(|| panic!("units of {line}"));
            assert_eq!(last.cwd, dir.path().join("sub"), "{line}");
            assert!(last.certain, "{line}");
        }
        // Found in none of its directories now: the line may make one, so it is not known.
        let a = analyze(&format!("CDPATH={base} cd missing && cat x"), &env());
        assert!(!a.units[1].certain);
        // It is one of its directories' or the working directory's: deny rules meet what
        // the unit does in each.
        assert_eq!(
            a.units[1].cwd_candidates,
            [dir.path().join("missing"), PathBuf::from("/w/p/missing")]
        );
        // A directory known again leaves none.
        let a = analyze(&format!("CDPATH={base} cd missing; cd /w && cat x"), &env());
        assert!(a.units[2].cwd_candidates.is_empty());
        // `./` and absolute names never look in it.
        let a = analyze(&format!("CDPATH={base} cd ./sub && cat x"), &env());
        assert_eq!(a.units[1].cwd, PathBuf::from("/w/p/sub"));
    }

    #[test]
    fn options_after_the_operand_they_follow_are_read_as_the_program_reads_them() {
        // OpenSSH reads its options again after the destination.
        let a = analyze(
            "ssh -T git@example.com -o ProxyCommand='nc %h %p' ls",
            &env(),
        );
        assert!(
            a.units[0]
                .effects()
                .any(|e| e.source.option.as_deref() == Some("-o")),
            "{:?}",
            a.units[0].effects().collect::<Vec<_>>()
        );
        // fd runs every word after -x/-X up to `;` as one command.
        let a = analyze("fd -e orig -X rm -f \\; -H", &env());
        let run: Vec<&Effect> = a.units[0]
            .effects()
            .filter(|e| e.kind == EffectKind::ExecArgv)
            .collect();
        assert_eq!(run.len(), 1);
        assert_eq!(run[0].argv, ["rm", "-f"]);
        assert!(run[0].argv_open);
        // The values of the first unit's effects of one kind.
        let values = |line: &str, kind: EffectKind| -> Vec<String> {
            analyze(line, &env()).units[0]
                .effects()
                .filter(|e| e.kind == kind)
                .filter_map(|e| e.value.clone())
                .collect()
        };
        // A page name with a `/` is a file man reads (and prints).
        let reads = |line: &str| values(line, EffectKind::Read);
        assert_eq!(reads("man ./notes.1"), ["./notes.1"]);
        assert!(reads("man 5 crontab").is_empty());
        // A patch fed on the line writes the files its headers name, as written and with
        // the first component taken off; `git apply --check` writes nothing.
        let writes = |line: &str| values(line, EffectKind::Write);
        let patch = "<<'EOF'\ndiff --git a/x.c b/.git/hooks/post-merge\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-merge\n@@ -0,0 +1 @@\n+id\nEOF";
        let w = writes(&format!("patch -p1 {patch}"));
        assert!(w.iter().any(|p| p == ".git/hooks/post-merge"), "{w:?}");
        assert!(w.iter().any(|p| p == "b/.git/hooks/post-merge"), "{w:?}");
        assert!(!w.iter().any(|p| p == "/dev/null"), "{w:?}");
        assert!(writes(&format!("git apply --check {patch}")).is_empty());
        assert!(!writes(&format!("git apply {patch}")).is_empty());
        // cpio's copy-in writes where its members' names say (absolute ones anywhere).
        let a = analyze("cpio -idmu < rootfs.cpio", &env());
        assert!(
            a.units[0]
                .effects()
                .any(|e| e.kind == EffectKind::Write && e.value.is_none())
        );
        // sqlite3 reads its options wherever they come.
        let a = analyze("sqlite3 d.db 'select 1' -init setup.sql", &env());
        assert!(a.units[0].effects().any(|e| e.kind == EffectKind::RunsCode));
        // SQL's words are the same in any case.
        let a = analyze("sqlite3 d.db \"SELECT ReadFile('k')\"", &env());
        assert!(a.units[0].effects().any(|e| e.kind == EffectKind::Unknown));
        let a = analyze("sqlite3 d.db 'select count(*) from t'", &env());
        assert!(!a.units[0].effects().any(|e| e.kind == EffectKind::Unknown));
    }

    #[test]
    fn what_cannot_be_known_is_said() {
        assert!(!analyze("echo $(id)", &env()).is_complete());
        assert!(!analyze("cat $F", &env()).is_complete());
        assert!(!analyze("f() { ls; }; f", &env()).is_complete());
        let a = analyze("echo 'open", &env());
        assert!(!a.parsed);
        assert_eq!(a.units[0].argv, ["echo", "open"]);
        assert!(analyze("ls -la", &env()).is_complete());
    }
}
