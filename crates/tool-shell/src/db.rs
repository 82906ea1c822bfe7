//! The command database: for each program coding agents run, what its options and operands
//! do, as data (`commands.toml`), and one interpreter that reads an argv with it.
//!
//! Every option of every entry declares its effect (an [`EffectKind`], or none); an option,
//! a subcommand or a program the database does not know is [`EffectKind::Unknown`]. The
//! interpreter reads options the way the program does: short options bundle (`-rn`, `-n5`,
//! `-oFILE`), long options take `--opt=VALUE` or `--opt VALUE`, GNU tools accept unambiguous
//! prefixes of long options (`sort --out=x`) and permute (options after operands count), `--`
//! ends options. A few grammars that are not options and operands (`find`'s expression, `sed`
//! and `awk` scripts, `tar`'s modes, `git config`) have small hooks in code.
//!
//! ```
//! use tool_shell::db::database;
//! use tool_shell::EffectKind;
//!
//! let db = database();
//! let i = db.interpret(&["sort".into(), "--out=x".into(), "a".into()]);
//! assert!(i.effects.iter().any(|e| e.kind == EffectKind::Write && e.value.as_deref() == Some("x")));
//! assert!(db.interpret(&["git".into(), "status".into()]).is_read_only());
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::Error;
use crate::effect::{Effect, EffectKind, Source};
use crate::lang::{self, ScriptEffects};

/// The shipped database.
const SHIPPED: &str = include_str!("commands.toml");

/// The shipped database, read once and each program compiled when first asked for (a
/// process that decides one command compiles the few programs it names, not all of them).
/// If it does not load, the database is empty, so every program is unknown (fail closed); a
/// program whose entry does not compile is unknown too. The tests prove the shipped file
/// loads whole, and that every program compiled on demand equals its eager compilation.
pub fn database() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| {
        Database::parse_lazily(SHIPPED).unwrap_or_else(|e| Database {
            load_error: Some(e.to_string()),
            ..Database::default()
        })
    })
}

/// How many words an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// A flag: no value.
    None,
    /// A value, attached (`-oFILE`, `--out=FILE`) or the next word.
    Required,
    /// A value only when attached (`-i.bak`, `--in-place=.bak`).
    Optional,
    /// A command up to `;` or `+` (`find -exec`).
    Command,
}

/// How an option's value is read before its effect is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// The value is the file, program or code itself.
    Plain,
    /// `@FILE` reads FILE (`curl -d @f`); any other value is data.
    AtFile,
    /// `NAME=@FILE` or `NAME=<FILE` reads FILE (`curl -F`).
    FormFile,
    /// An ssh `Key=Value` option, judged with the `[config.ssh]` table.
    SshOption,
    /// A git `key=value` configuration, judged with the `[config.git]` table.
    GitConfig,
    /// A git `key=ENVVAR` configuration (`--config-env`): the value is not known.
    GitConfigEnv,
    /// A `key=value` setting of the program's own, judged with the `[config.PROGRAM]` table
    /// (`rustc -C linker=PROG`).
    Setting,
    /// A tar checkpoint action: `exec=COMMAND` runs COMMAND with the shell.
    CheckpointAction,
    /// Commands of the program's own [`Language`] (`vim -c`, `gdb -ex`).
    Commands,
    /// Makefile text (`make --eval`): its recipes are shell code, and what can change how
    /// or what it runs (`$(shell ...)`, `SHELL`, `.SHELLFLAGS`) cannot be known.
    Makefile,
    /// A makefile's path (`make -f`): `-` (or `/dev/stdin`) is the makefile fed on standard
    /// input, read as [`ValueKind::Makefile`].
    MakefilePath,
    /// A file that names the files the program reads (`tar -T`, `sort --files0-from`), one a
    /// line or NUL-separated: `-` is standard input, and names fed on the line are read;
    /// names that are not shown on the line are reads that cannot be known.
    NamesFile,
    /// A module run with the words after it (`python -m pytest -x`): where the database
    /// knows a program of that name, those words are read as that program's.
    Module,
}

/// What an operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A file read.
    Read,
    /// A file written.
    Write,
    /// A file written in place of standard output (`uniq IN OUT`, `xxd IN OUT`): decided as a
    /// redirection is, not as what the program is for.
    Output,
    /// Commands of the program's own language (`sqlite3 DB SQL`).
    Commands,
    /// The rest of the words are the arguments of a shell it starts (`capsh -- -c CMD`): run as
    /// `bash WORDS...`.
    ShellArgs,
    /// `+COMMAND` is a command of the program's language (`vim +CMD`); anything else a file
    /// it edits.
    PlusCommands,
    /// A file read and written.
    ReadWrite,
    /// Data (a pattern, a number, a name): no effect.
    Data,
    /// The `sed` script.
    Script,
    /// The `awk` program.
    Program,
    /// The rest of the words are a command run (`timeout 5 CMD...`).
    ExecArgv,
    /// Like [`Role::ExecArgv`], with more words added at run time (`xargs`).
    ExecArgvOpen,
    /// Shell code run (`sh -c STRING`).
    ExecString,
    /// The rest of the words, joined with spaces, are shell code run (`watch`, `eval`).
    ExecStringJoined,
    /// A script file run by the program (`bash x.sh`, `python x.py`): runs code and reads it.
    RunsCode,
    /// A program run.
    ExecProgram,
    /// Changes the system (a host name, a process id, a variable of the shell).
    System,
    /// A host or URL talked to.
    Network,
    /// The rest of the words, joined, are a command run on another host (`ssh h CMD`).
    Remote,
    /// Cannot be known.
    Unknown,
    /// `NAME=VALUE` assignments (`env A=1 cmd`), then the next role.
    Assign,
    /// An awk input: `var=value` is an assignment, anything else a file read.
    AwkInput,
    /// A `less` operand: `+COMMAND` runs a less command, anything else is a file read.
    LessFile,
    /// A `date` operand: `+FORMAT` prints, anything else sets the clock.
    Date,
    /// A `key=value` operand judged with the program's `keys` table (`dd if=a of=b`).
    KeyValue,
    /// A variable assignment judged with the program's `keys` table when it names one there
    /// (`make SHELL=...`); any other word (a target, another variable) is data.
    AssignKeys,
    /// A file read, or `host:path` (network).
    RemoteRead,
    /// A file written, or `host:path` (network).
    RemoteWrite,
    /// A name looked up, or the file it names when it has a `/` (`man ./page.1`).
    Page,
    /// A git revision or path: `REV:PATH` (and `:PATH`) prints PATH's content, an operand
    /// after `--` is a path git reads; anything else is data (a revision).
    GitObject,
}

impl Role {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "read" => Role::Read,
            "write" => Role::Write,
            "output" => Role::Output,
            "commands" => Role::Commands,
            "shell-args" => Role::ShellArgs,
            "plus-commands" => Role::PlusCommands,
            "read-write" => Role::ReadWrite,
            "data" | "pattern" => Role::Data,
            "script" => Role::Script,
            "program" => Role::Program,
            "exec-argv" => Role::ExecArgv,
            "exec-argv-open" => Role::ExecArgvOpen,
            "exec-string" => Role::ExecString,
            "exec-string-joined" => Role::ExecStringJoined,
            "runs-code" => Role::RunsCode,
            "exec-program" => Role::ExecProgram,
            "system" => Role::System,
            "network" => Role::Network,
            "remote" => Role::Remote,
            "unknown" => Role::Unknown,
            "assign" => Role::Assign,
            "awk-input" => Role::AwkInput,
            "less-file" => Role::LessFile,
            "date" => Role::Date,
            "key-value" => Role::KeyValue,
            "assign-keys" => Role::AssignKeys,
            "remote-read" => Role::RemoteRead,
            "remote-write" => Role::RemoteWrite,
            "git-object" => Role::GitObject,
            "page" => Role::Page,
            _ => return None,
        })
    }

    /// Does this role take every word from its position on?
    fn takes_rest(self) -> bool {
        matches!(
            self,
            Role::ExecArgv
                | Role::ExecArgvOpen
                | Role::ExecStringJoined
                | Role::Remote
                | Role::ShellArgs
        )
    }

    /// Does an operand of this role have no effect at all?
    pub fn is_inert(self) -> bool {
        matches!(self, Role::Data)
    }
}

/// How many operands a slot takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Exactly one.
    One,
    /// Zero or one (`read?`).
    Optional,
    /// Any number (`read...`).
    Many,
}

/// One position of a program's operand grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// What the operand is (several roles: `read+system`).
    pub roles: Vec<Role>,
    /// How many operands it takes.
    pub repeat: Repeat,
}

/// How a program reads its options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Syntax {
    /// Accepts unambiguous prefixes of long options (GNU `getopt_long`, git).
    pub abbrev: bool,
    /// Options after operands still count (GNU permutation).
    pub permute: bool,
    /// Short options bundle (`-rn`, `-n5`).
    pub bundle: bool,
    /// `--no-OPTION` turns a long option off (git).
    pub negate: bool,
    /// `-NUMBER` is an option (`head -5`).
    pub numeric: bool,
    /// Long options take one dash as well as two, and never bundle (Go's `flag`).
    pub single_dash_long: bool,
    /// Every option is accepted and has no effect (only for programs whose operands are all
    /// data, such as `echo`).
    pub any_option: bool,
    /// Options are read again after the first operand, up to the next (OpenSSH reads its
    /// options once more after the destination: `ssh HOST -o X=Y CMD`).
    pub options_after_first: bool,
    /// `@FILE` stands for the arguments written in FILE (GCC and binutils, rustc, javac):
    /// FILE is read, and what the arguments do cannot be known.
    pub argument_files: bool,
    /// A first word `+NAME` picks the toolchain it runs from (rustup's proxies: `cargo
    /// +nightly build`); `+PATH` runs the programs of the toolchain at PATH.
    pub toolchain: bool,
}

/// One option of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    /// Its spellings (`-o`, `--output`).
    pub names: Vec<String>,
    /// How many words it takes.
    pub arg: Arity,
    /// What it does (empty: declared to have no effect).
    pub effects: Vec<EffectKind>,
    /// How its value is read.
    pub value: ValueKind,
    /// The operand grammar from now on (`grep -e` leaves no pattern operand).
    pub operands: Option<Vec<Slot>>,
    /// Files read are also written (`sed -i`).
    pub in_place: bool,
    /// No option follows (`python -c`).
    pub stop: bool,
    /// Its value is the directory later relative paths are resolved in (`git -C`).
    pub chdir: bool,
    /// How many words its value takes (`find -fprintf FILE FORMAT`: 2).
    pub count: usize,
    /// Which of those words (from 1) the effect applies to (`jq --rawfile NAME FILE`: 2).
    pub effect_on: usize,
    /// A note for a hook (`script`, `extended`, a tar mode), several joined with `+`.
    pub mark: Option<String>,
    /// The value used when an optional value is absent (`gawk --profile`: `awkprof.out`).
    pub default: Option<String>,
}

impl OptionSpec {
    /// The name used in explanations: the first long name, else the first name.
    pub fn name(&self) -> &str {
        self.names
            .iter()
            .find(|n| n.starts_with("--"))
            .or_else(|| self.names.first())
            .map(String::as_str)
            .unwrap_or("")
    }
}

/// A hook for a grammar that is not options and operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// `find`'s expression.
    Find,
    /// `sed` scripts.
    Sed,
    /// `awk` programs.
    Awk,
    /// `tar`'s modes.
    Tar,
    /// `git config`'s get and set forms.
    GitConfig,
    /// `ln TARGET` links into the current directory.
    Ln,
}

impl Hook {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "find" => Hook::Find,
            "sed" => Hook::Sed,
            "awk" => Hook::Awk,
            "tar" => Hook::Tar,
            "git-config" => Hook::GitConfig,
            "ln" => Hook::Ln,
            _ => return None,
        })
    }
}

/// A program (or a subcommand) of the database.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// Its name, with its parents for a subcommand (`git diff`).
    pub name: String,
    /// Other names it is run by (`egrep` for `grep`; `i` for `npm install`).
    pub aliases: Vec<String>,
    /// How it reads options.
    pub syntax: Syntax,
    /// What running it does whatever its arguments (`curl`: network).
    pub effects: Vec<EffectKind>,
    /// What it does when given no operand (`bash` alone runs its standard input).
    pub bare: Vec<EffectKind>,
    /// Its options.
    pub options: Vec<OptionSpec>,
    /// Its operand grammar.
    pub operands: Vec<Slot>,
    /// Its subcommands by name (aliases included), when the first operand selects one; each
    /// compiled when first looked up.
    subcommands: BTreeMap<String, Arc<Subcommand>>,
    /// Subcommands also accept this program's options (`cargo build -v`).
    pub shared_options: bool,
    /// It walks the directories it is given (or the working directory) recursively: `rg`,
    /// `find`, `tree`, `du`. An option marked `recursive` makes it so too (`grep -r`).
    pub recursive: bool,
    /// As it walks, it follows links to directories: `zip -r`. An option marked
    /// `follows-links` makes it so too (`grep -R`, `rg -L`, `find -L`).
    pub follows_links: bool,
    /// What it writes, it writes throughout, when it is a directory: `mv` moves a tree. An
    /// option marked `tree-writes` makes it so too (`chmod -R`, `rm -r`).
    pub tree_writes: bool,
    /// Files it reads from the directory it runs in, whatever its arguments: `docker compose`,
    /// `bun`, `vite` load `.env` from there.
    pub cwd_reads: Vec<String>,
    /// Which files it writes its input says, not its words (`patch`, `unzip`): any below the
    /// directory it works in.
    pub writes_below: bool,
    /// Its grammar hook, if any.
    pub hook: Option<Hook>,
    /// `key=value` operands and what the key's value is (`dd`).
    pub keys: BTreeMap<String, Vec<EffectKind>>,
    /// What text fed to its standard input on the line (a here-document or here-string) is.
    pub stdin: Option<Stdin>,
    /// Its own command language, when commands given on the line can reach a shell (`vim -c`,
    /// `gdb -ex`, `sqlite3`'s dot commands, `ed`'s `!`).
    pub language: Option<Language>,
    index: BTreeMap<String, usize>,
}

/// `line` without the line address ed-style editors take before a command: numbers, `.`,
/// `$`, `,`, `;`, `+`, `-`, marks (`'a`) and searches (`/re/`, `?re?`).
fn strip_address(line: &str) -> &str {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'0'..=b'9' | b'.' | b'$' | b',' | b';' | b'+' | b'-' | b' ' | b'\t' => i += 1,
            b'\'' if i + 1 < b.len() => i += 2,
            q @ (b'/' | b'?') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = (j + 1).min(b.len());
            }
            _ => break,
        }
    }
    &line[i..]
}

/// Whether `word` occurs in `text` as a whole word: not inside a longer name of letters,
/// digits and `_`.
fn has_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(part)
            && !text[at + word.len()..].chars().next().is_some_and(part)
    })
}

/// The files a patch's headers name (`+++ b/x`, `diff --git a/x b/y`, `rename to x`, a
/// context diff's `*** x`, `Index: x`), each as written and with its first component taken
/// off (`-p0` and `-p1` both), for they are what the patch may write.
pub fn patch_targets(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |raw: &str| {
        // A tab ends the name (a timestamp follows); a name may be quoted.
        let name = raw
            .split('\t')
            .next()
            .unwrap_or(raw)
            .trim()
            .trim_matches('"');
        if name.is_empty() || name == "/dev/null" {
            return;
        }
        let mut forms = vec![name.to_owned()];
        if let Some((_, rest)) = name.split_once('/')
            && !rest.is_empty()
        {
            forms.push(rest.to_owned());
        }
        for f in forms {
            if !names.contains(&f) {
                names.push(f);
            }
        }
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/X b/Y`: names with spaces make the split ambiguous; every split is taken.
            for (i, _) in rest.match_indices(" b/") {
                add(&rest[..i]);
                add(&rest[i + 1..]);
            }
            if !rest.contains(" b/") {
                for w in rest.split_whitespace() {
                    add(w);
                }
            }
        } else if let Some(rest) = ["+++ ", "--- ", "*** ", "Index: "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            // Not a hunk's range (`--- 1,4 ----`, `*** 1,3 ****`).
            if !rest.ends_with("----") && !rest.ends_with("****") {
                add(rest);
            }
        } else if let Some(rest) = ["rename to ", "rename from ", "copy to "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            add(rest);
        }
    }
    names
}

/// What text fed to a program's standard input on the line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    /// Shell code, when the program runs its standard input (`bash` with no script).
    Shell,
    /// Shell code, always (`at`: the job it schedules).
    Job,
    /// Commands of its own [`Language`].
    Commands,
    /// Git object names, one or more a line (`git cat-file --batch`, `git log --stdin`):
    /// `REV:PATH` reads PATH as the revision has it.
    Objects,
    /// A patch (`patch`, `git apply`): the files its headers name are written.
    Patch,
    /// Names of files it reads (`cpio -o`, `zip -@`), one a line.
    Names,
}

/// A command language that can reach a shell, read line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Language {
    /// Line prefixes (after blanks and Ex's `:`) whose rest is shell code (`!`, `shell `).
    pub shell: Vec<String>,
    /// Line prefixes that make the line code that cannot be known (`.load`, `python`).
    pub unknown_prefixes: Vec<String>,
    /// Commands that only show or set how things are shown, taken out of those prefixes
    /// (sqlite's `.schema`, `.tables`): a line whose first word is one of them.
    pub showing: Vec<String>,
    /// The program splits a shell escape's text into words by its own quoting and joins them
    /// again for the shell, a word with a space in double quotes (sqlite's `.shell`): quotes
    /// it removes do not reach the shell (`.shell cat '<f'` runs `cat <f`).
    pub requotes: bool,
    /// Words anywhere in a line that make it code that cannot be known (`syscmd`).
    pub unknown_words: Vec<String>,
    /// Any other line cannot be known either (`vim -c`: any Ex command may run anything).
    pub other_unknown: bool,
    /// Its words are the same in any case (SQL's `READFILE` is `readfile`): they are looked
    /// for in the line whatever its case (the database gives them in lower case).
    pub ignore_case: bool,
    /// Commands that read the file named after them (`r FILE`, `e FILE`), after an ed-style
    /// line address (`1,$`, `.`, `/re/`, `'a`) when `addresses` is set.
    pub reads: Vec<String>,
    /// Commands that write the file named after them (`w FILE`, `wq FILE`), likewise.
    pub writes: Vec<String>,
    /// A command may start with a line address (ed).
    pub addresses: bool,
}

/// A subcommand, compiled when it is first looked up (git has a hundred; a command names one).
pub struct Subcommand {
    name: String,
    raw: RawProgram,
    parent_syntax: Syntax,
    style: Option<String>,
    sets: Arc<BTreeMap<String, RawSet>>,
    compiled: OnceLock<Result<Program, String>>,
}

impl Subcommand {
    /// The subcommand, compiled; its compile error when its entry is wrong.
    fn compiled(&self) -> &Result<Program, String> {
        self.compiled.get_or_init(|| {
            compile(
                &self.name,
                &self.raw,
                Some((&self.parent_syntax, self.style.as_deref())),
                &self.sets,
            )
            .map_err(|e| e.to_string())
        })
    }

    /// The subcommand's program; `None` when its entry does not compile (it is then unknown).
    pub fn program(&self) -> Option<&Program> {
        self.compiled().as_ref().ok()
    }
}

impl fmt::Debug for Subcommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.compiled().fmt(f)
    }
}

impl Program {
    /// The subcommand a word selects (a name or an alias).
    pub fn subcommand(&self, word: &str) -> Option<&Program> {
        self.subcommands.get(word).and_then(|s| s.program())
    }

    /// Whether it does anything with what it is given, by itself or through an option it is
    /// known to have: a program that takes any option and does nothing (`echo`, `true`)
    /// only prints its words, and one that does (`openssl`: `-in`, `-out`) may do with an
    /// option it is not known to have what it does with those.
    pub fn does_things(&self) -> bool {
        !self.effects.is_empty() || self.options.iter().any(|o| !o.effects.is_empty())
    }

    /// Does the first operand select a subcommand?
    pub fn has_subcommands(&self) -> bool {
        !self.subcommands.is_empty()
    }

    /// Every subcommand once (not once per alias), compiled now.
    pub fn subcommands(&self) -> impl Iterator<Item = &Program> {
        let mut seen = std::collections::BTreeSet::new();
        self.subcommands
            .values()
            .filter(move |s| seen.insert(Arc::as_ptr(s)))
            .filter_map(|s| s.program())
    }

    /// The first error among this program's subcommands, at any depth.
    fn subcommand_error(&self) -> Option<String> {
        self.subcommands.values().find_map(|s| match s.compiled() {
            Ok(p) => p.subcommand_error(),
            Err(e) => Some(e.clone()),
        })
    }

    /// The option a name spells exactly.
    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.index.get(name).map(|&i| &self.options[i])
    }

    /// Resolve a long option name (`--out`) the way the program does: exactly, else (when the
    /// program accepts abbreviations) as the one option it is a prefix of. `None` when the
    /// prefix is ambiguous or matches nothing.
    pub fn resolve_long(&self, name: &str) -> Option<&OptionSpec> {
        if let Some(o) = self.option(name) {
            return Some(o);
        }
        if !self.syntax.abbrev || !name.starts_with("--") || name.len() < 3 {
            return None;
        }
        let mut found: Option<usize> = None;
        for (n, &i) in &self.index {
            if n.starts_with("--") && n.starts_with(name) {
                match found {
                    Some(j) if j != i => return None,
                    _ => found = Some(i),
                }
            }
        }
        found.map(|i| &self.options[i])
    }
}

/// The command database.
#[derive(Debug, Default)]
pub struct Database {
    programs: BTreeMap<String, Program>,
    /// Programs not compiled yet: each one's TOML tables, compiled on first use.
    pending: BTreeMap<String, Pending>,
    /// The `[sets.*]` programs include.
    sets: Arc<BTreeMap<String, RawSet>>,
    by_name: HashMap<String, String>,
    config: BTreeMap<String, Vec<(String, String)>>,
    /// Why the shipped data did not load (the database is then empty).
    load_error: Option<String>,
}

/// What the database reads in an argv.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interpretation {
    /// Program and subcommands recognised (`["git", "diff"]`); empty when `argv[0]` is unknown.
    pub path: Vec<String>,
    /// The words rules are matched against: global options before the subcommand dropped
    /// (`git -C x -c k=v push origin` -> `["git","push","origin"]`); otherwise argv as given.
    pub rule_words: Vec<String>,
    /// Every effect found, each with its source.
    pub effects: Vec<Effect>,
    /// It searches the directories it reads recursively (its read operands, or the working
    /// directory when it names none).
    pub recursive: bool,
    /// As it searches, it follows links to directories (`grep -R`, `rg -L`, `find -L`): what
    /// it reaches may lie outside the directories it reads.
    pub follows_links: bool,
    /// It changes every file below the directories it writes (`chmod -R`, `rm -r`, `mv`).
    pub tree_writes: bool,
    /// Which files it writes its input says (an archive's members, a patch's files), not its
    /// words: any file below the directories it writes may be one (`tar -x`, `unzip`,
    /// `patch`). The directory it works in is among its writes.
    pub writes_below: bool,
    /// Words a program that takes any option, and has effects, was given without the database
    /// knowing what it does with them (its options, and its operands, which may be files it
    /// reads), and the arguments of code a program runs: `prettier .env`,
    /// `docker build -f .env .`, `python3 tool.py .env`.
    pub loose: Vec<String>,
    /// Code given on the line (`python3 -c 'open(".env").read()'`): the files its strings
    /// name may be opened, which deny rules decide.
    pub code: Vec<String>,
    /// The option, as written, that made it write the files it would otherwise only read
    /// (`sed -i`, `perl -i`).
    pub in_place_by: Option<String>,
}

impl Interpretation {
    /// No effect is [`EffectKind::Unknown`].
    pub fn is_known(&self) -> bool {
        self.effects.iter().all(|e| e.kind != EffectKind::Unknown)
    }

    /// Every effect is a read.
    pub fn is_read_only(&self) -> bool {
        self.effects.iter().all(|e| e.kind.is_read_only())
    }

    /// The effects of one kind.
    pub fn of_kind(&self, kind: EffectKind) -> impl Iterator<Item = &Effect> {
        self.effects.iter().filter(move |e| e.kind == kind)
    }
}

// ---------------------------------------------------------------------------------------------
// Loading

/// Add `part` (whole tables) to its owner's section, or to the shared text.
fn flush<'t>(
    sections: &mut BTreeMap<&'t str, String>,
    shared: &mut String,
    owner: Option<&'t str>,
    part: &str,
) {
    match owner {
        Some(name) => sections.entry(name).or_default().push_str(part),
        None => shared.push_str(part),
    }
}

/// A program's TOML tables, compiled on first use.
#[derive(Debug, Default)]
struct Pending {
    text: String,
    compiled: OnceLock<Option<Program>>,
}

/// The `aliases` of the program `name`, read from the first table of its section (the
/// program's own, before any subcommand's).
fn section_aliases(name: &str, section: &str) -> Result<Vec<String>, Error> {
    #[derive(Deserialize)]
    struct Line {
        aliases: Vec<String>,
    }
    let own = section
        .split_inclusive('\n')
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !l.starts_with('['))
        .map(|(_, l)| l);
    for line in own {
        if line.trim_start().starts_with("aliases") {
            let parsed: Line =
                toml::from_str(line).map_err(|e| bad(format!("{name}: aliases: {e}")))?;
            return Ok(parsed.aliases);
        }
    }
    Ok(Vec::new())
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    sets: BTreeMap<String, RawSet>,
    #[serde(default)]
    config: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    p: BTreeMap<String, RawProgram>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawSet {
    #[serde(default)]
    flags: String,
    #[serde(default)]
    args: String,
    #[serde(default)]
    optargs: String,
    #[serde(default)]
    options: Vec<RawOption>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    #[serde(default)]
    aliases: Vec<String>,
    style: Option<String>,
    sub_style: Option<String>,
    abbrev: Option<bool>,
    permute: Option<bool>,
    bundle: Option<bool>,
    negate: Option<bool>,
    numeric: Option<bool>,
    any_option: Option<bool>,
    options_after_first: Option<bool>,
    argument_files: Option<bool>,
    toolchain: Option<bool>,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    follows_links: bool,
    #[serde(default)]
    tree_writes: bool,
    #[serde(default)]
    cwd_reads: Vec<String>,
    #[serde(default)]
    writes_below: bool,
    #[serde(default)]
    flags: String,
    #[serde(default)]
    args: String,
    #[serde(default)]
    optargs: String,
    #[serde(default)]
    options: Vec<RawOption>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    operands: Vec<String>,
    #[serde(default)]
    effects: Vec<String>,
    #[serde(default)]
    bare: Vec<String>,
    hook: Option<String>,
    #[serde(default)]
    keys: BTreeMap<String, String>,
    #[serde(default)]
    shared: bool,
    #[serde(default)]
    sub: BTreeMap<String, RawProgram>,
    stdin: Option<String>,
    language: Option<RawLanguage>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawLanguage {
    #[serde(default)]
    shell: Vec<String>,
    #[serde(default)]
    unknown_prefixes: Vec<String>,
    #[serde(default)]
    showing: Vec<String>,
    #[serde(default)]
    requotes: bool,
    #[serde(default)]
    unknown_words: Vec<String>,
    #[serde(default)]
    other: Option<String>,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    reads: Vec<String>,
    #[serde(default)]
    writes: Vec<String>,
    #[serde(default)]
    addresses: bool,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawOption {
    names: String,
    #[serde(default)]
    arg: Option<String>,
    effect: String,
    value: Option<String>,
    operands: Option<Vec<String>>,
    #[serde(default)]
    in_place: bool,
    #[serde(default)]
    stop: bool,
    #[serde(default)]
    chdir: bool,
    count: Option<usize>,
    effect_on: Option<usize>,
    mark: Option<String>,
    default: Option<String>,
}

fn bad(what: impl Into<String>) -> Error {
    Error::Database(what.into())
}

fn parse_effects(text: &str, whose: &str) -> Result<Vec<EffectKind>, Error> {
    if text == "none" {
        return Ok(Vec::new());
    }
    text.split('+')
        .map(|k| {
            EffectKind::from_name(k).ok_or_else(|| bad(format!("{whose}: unknown effect `{k}`")))
        })
        .collect()
}

fn parse_slots(list: &[String], whose: &str) -> Result<Vec<Slot>, Error> {
    let mut slots = Vec::new();
    for s in list {
        let (body, repeat) = if let Some(b) = s.strip_suffix("...") {
            (b, Repeat::Many)
        } else if let Some(b) = s.strip_suffix('?') {
            (b, Repeat::Optional)
        } else {
            (s.as_str(), Repeat::One)
        };
        let roles = body
            .split('+')
            .map(|r| {
                Role::parse(r).ok_or_else(|| bad(format!("{whose}: unknown operand role `{r}`")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        slots.push(Slot { roles, repeat });
    }
    let many = slots.iter().filter(|s| s.repeat == Repeat::Many).count();
    let assigns = slots
        .iter()
        .filter(|s| s.roles.contains(&Role::Assign))
        .count();
    if many > 1 + assigns {
        return Err(bad(format!("{whose}: more than one `...` operand")));
    }
    if let Some(p) = slots
        .iter()
        .position(|s| s.roles.iter().any(|r| r.takes_rest()))
        && p + 1 != slots.len()
    {
        return Err(bad(format!("{whose}: a command operand must come last")));
    }
    Ok(slots)
}

fn parse_names(names: &str, whose: &str) -> Result<Vec<String>, Error> {
    let v: Vec<String> = names.split('|').map(str::to_owned).collect();
    for n in &v {
        let ok = n.len() >= 2
            && (n.starts_with('-') || n.starts_with('+'))
            && n != "--"
            && !n.contains('=');
        if !ok {
            return Err(bad(format!("{whose}: bad option name `{n}`")));
        }
    }
    Ok(v)
}

fn style(name: &str, whose: &str) -> Result<Syntax, Error> {
    let s = |abbrev, permute, bundle, negate| Syntax {
        abbrev,
        permute,
        bundle,
        negate,
        ..Syntax::default()
    };
    Ok(match name {
        "gnu" => s(true, true, true, false),
        "gnu-stop" => s(true, false, true, false),
        "git" => s(true, true, true, true),
        "plain" => s(false, true, true, false),
        "posix" => s(false, false, true, false),
        "go" => Syntax {
            single_dash_long: true,
            ..s(false, false, false, false)
        },
        // Long options with one dash, anywhere among the operands (`openssl list -providers`).
        "single-dash" => Syntax {
            single_dash_long: true,
            ..s(false, true, false, false)
        },
        _ => return Err(bad(format!("{whose}: unknown style `{name}`"))),
    })
}

impl Database {
    /// Parse a database from its TOML text.
    pub fn parse(text: &str) -> Result<Database, Error> {
        let raw: RawFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut db = Database::default();
        db.read_config(&raw);
        db.sets = Arc::new(raw.sets.clone());
        for (name, rp) in &raw.p {
            let prog = compile(name, rp, None, &db.sets)?;
            if let Some(e) = prog.subcommand_error() {
                return Err(bad(e));
            }
            for n in std::iter::once(name).chain(&rp.aliases) {
                if db.by_name.insert(n.clone(), name.clone()).is_some() {
                    return Err(bad(format!("{n}: named twice")));
                }
            }
            db.programs.insert(name.clone(), prog);
        }
        Ok(db)
    }

    /// Read a database from its TOML text, compiling each program only when it is first
    /// asked for. The sets, the configuration tables and every program's names are read now.
    pub fn parse_lazily(text: &str) -> Result<Database, Error> {
        // Split the text at table headers into the shared tables (`[sets.*]`, `[config.*]`)
        // and each program's tables (`[p.NAME]`, `[p.NAME.sub.*]`, `[[p.NAME.options]]`).
        let mut shared = String::new();
        let mut sections: BTreeMap<&str, String> = BTreeMap::new();
        let mut owner: Option<&str> = None;
        let mut start = 0;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if line.starts_with('[') {
                flush(&mut sections, &mut shared, owner, &text[start..at]);
                start = at;
                let header = line.trim_start_matches('[');
                owner = header
                    .strip_prefix("p.")
                    .map(|rest| rest.split(['.', ']']).next().unwrap_or_default().trim());
                if matches!(owner, Some(n) if n.is_empty() || n.starts_with('"')) {
                    return Err(bad(format!(
                        "a program header this reader cannot split: {line}"
                    )));
                }
            }
            at += line.len();
        }
        flush(&mut sections, &mut shared, owner, &text[start..at]);
        let raw: RawFile = toml::from_str(&shared).map_err(|e| bad(e.to_string()))?;
        let mut db = Database::default();
        db.read_config(&raw);
        db.sets = Arc::new(raw.sets);
        for (name, section) in sections {
            let name = name.to_owned();
            for n in std::iter::once(name.clone()).chain(section_aliases(&name, &section)?) {
                if db.by_name.insert(n.clone(), name.clone()).is_some() {
                    return Err(bad(format!("{n}: named twice")));
                }
            }
            db.pending.insert(
                name,
                Pending {
                    text: section,
                    compiled: OnceLock::new(),
                },
            );
        }
        Ok(db)
    }

    fn read_config(&mut self, raw: &RawFile) {
        for (name, table) in &raw.config {
            let mut pats = Vec::new();
            for (category, keys) in table {
                for k in keys {
                    pats.push((k.to_ascii_lowercase(), category.clone()));
                }
            }
            self.config.insert(name.clone(), pats);
        }
    }

    /// Why the shipped data did not load, when it did not: every program is then unknown, and
    /// an analysis must not treat "unknown" as "a program a rule may name".
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    /// The program run by this name (its basename, or an alias).
    pub fn program(&self, name: &str) -> Option<&Program> {
        let name = self.by_name.get(name)?;
        self.programs
            .get(name)
            .or_else(|| self.compile_pending(name))
    }

    /// A pending program, compiled now if it was not yet; `None` if it does not compile.
    fn compile_pending(&self, name: &str) -> Option<&Program> {
        let pending = self.pending.get(name)?;
        pending
            .compiled
            .get_or_init(|| {
                let raw: RawFile = toml::from_str(&pending.text).ok()?;
                let rp = raw.p.get(name)?;
                compile(name, rp, None, &self.sets).ok()
            })
            .as_ref()
    }

    /// Every program (those not compiled yet are compiled now; one that does not compile is
    /// left out).
    pub fn programs(&self) -> impl Iterator<Item = &Program> {
        let mut all: Vec<&Program> = self.programs.values().collect();
        all.extend(self.pending.keys().filter_map(|n| self.compile_pending(n)));
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all.into_iter()
    }

    /// How many programs.
    pub fn len(&self) -> usize {
        self.programs.len() + self.pending.len()
    }

    /// Is the database empty (it did not load)?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The effects of a configuration key (`[config.git]`, `[config.ssh]`): the category
    /// (`exec-program`, ..., `alias`) of the first pattern matching the lowercased key.
    pub fn config_category(&self, table: &str, key: &str) -> Option<&str> {
        let key = key.to_ascii_lowercase();
        self.config
            .get(table)?
            .iter()
            .find(|(p, _)| glob_match(p, &key))
            .map(|(_, c)| c.as_str())
    }

    /// Interpret an argv: `argv[0]` is the program's basename, every word already expanded.
    pub fn interpret(&self, argv: &[String]) -> Interpretation {
        self.interpret_fed(argv, None)
    }

    /// [`interpret`](Self::interpret), with the text a here-document or here-string feeds its
    /// standard input (`Some(None)`: fed, but not known exactly): shell code for a program that
    /// runs its standard input, commands of its own language for one that reads them.
    pub fn interpret_fed(&self, argv: &[String], here: Option<Option<&str>>) -> Interpretation {
        let mut out = Interpretation::default();
        let Some(first) = argv.first() else {
            return out;
        };
        let base = first.rsplit('/').next().unwrap_or(first);
        let Some(prog) = self.program(base) else {
            out.rule_words = argv.to_vec();
            out.effects.push(Effect::new(
                EffectKind::Unknown,
                Some(first.clone()),
                Source {
                    program: first.clone(),
                    option: None,
                    detail: "program not in the command database".into(),
                },
            ));
            let mut i = 1;
            let mut runs_named = false;
            let mut wrapped: Vec<usize> = Vec::new();
            // The command a wrapper runs is its first operand (after `--` when there is
            // one); later operands are its data (`gh pr create --title 'rm stale'`).
            let first_operand = argv
                .iter()
                .position(|w| w == "--")
                .map(|d| d + 1)
                .filter(|&d| d < argv.len())
                .or_else(|| {
                    argv.iter()
                        .skip(1)
                        .position(|w| !w.starts_with('-'))
                        .map(|p| p + 1)
                });
            while i < argv.len() {
                let named = option_runs(&argv[i], argv.get(i + 1));
                if let Some((kind, value, took_next)) = named {
                    out.effects.push(Effect::new(
                        kind,
                        Some(value),
                        Source {
                            program: first.clone(),
                            option: Some(option_name(&argv[i]).to_owned()),
                            detail: PROGRAM_OPTION.into(),
                        },
                    ));
                    runs_named = true;
                    i += usize::from(took_next);
                } else if Some(i) == first_operand {
                    // A command line in one word (`sh-like -c 'make -j8'`): its first word.
                    let head = argv[i].split_whitespace().next().unwrap_or_default();
                    if self.names_a_command(head) {
                        wrapped.push(i);
                    }
                } else if wrapped.len() < 3
                    && !argv[i].starts_with('-')
                    && is_run_path(&argv[i])
                    && argv[i].rsplit('/').next().is_some_and(|n| n.contains('.'))
                {
                    // A script named as one runs it, wherever it stands (`faketime TIME
                    // ./renew.sh`, `ssh-agent -t 60 ./push.sh`).
                    wrapped.push(i);
                }
                i += 1;
            }
            // A program that starts another one (`chronic`, `xvfb-run -a`, `eatmydata --`,
            // `numactl --membind=0`): a first operand that names a program that runs code or
            // reaches the network, or a script, with what follows it, may be a command it
            // runs, and is decided as one.
            for at in wrapped.into_iter().filter(|_| !runs_named) {
                let source = Source {
                    program: first.clone(),
                    option: None,
                    detail: WRAPPED_OPERAND.into(),
                };
                if argv[at].split_whitespace().nth(1).is_some() {
                    out.effects.push(Effect::new(
                        EffectKind::ExecString,
                        Some(argv[at].clone()),
                        source,
                    ));
                } else {
                    let mut e = Effect::new(EffectKind::ExecArgv, Some(argv[at].clone()), source);
                    e.argv = argv[at..].to_vec();
                    out.effects.push(e);
                }
            }
            return out;
        };
        out.path.push(prog.name.clone());
        out.rule_words = argv.to_vec();
        let mut run = Run {
            db: self,
            out: &mut out,
            here: here.map(|h| h.map(str::to_owned)),
            git_aliases: Vec::new(),
            expansions: 0,
        };
        run.program(&[prog], &argv[1..], vec![first.clone()], None);
        out
    }
}

/// The command a git `ext::` address runs: the rest of the address, with `% ` a space and
/// `%%` a `%` as git's remote-ext reads it (other `%` escapes stand for arguments git adds).
/// The local file a `file:` URL names (`file:///etc/passwd`, `FILE://localhost/x`,
/// `file:/x`), its `%XX` escapes decoded as curl and git decode them: `Some(None)` when the
/// path cannot be known (a glob curl expands, an escape that is not UTF-8), `None` when it is
/// not a `file:` URL.
fn file_url_path(w: &str) -> Option<Option<String>> {
    let scheme = w.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &w[5..];
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let slash = after.find('/').unwrap_or(after.len());
            let host = &after[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Some(None);
            }
            &after[slash..]
        }
        None => rest,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if path.contains(['{', '[']) || !path.starts_with('/') {
        return Some(None);
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(String::from_utf8(out).ok())
}

/// A shell escape's text as a program that splits it into words by its own quoting hands it
/// to the shell (sqlite's `.shell`/`.system`): a word starts with `'` or `"` and runs to the
/// same quote, or runs to a blank; each word goes on as it is, or in double quotes when it
/// holds a blank. `None` when a backslash in double quotes (which the program resolves) makes
/// the word uncertain.
fn rejoined_words(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else { break };
        let mut word = String::new();
        if first == '\'' || first == '"' {
            chars.next();
            for c in chars.by_ref() {
                if c == first {
                    break;
                }
                if c == '\\' && first == '"' {
                    return None;
                }
                word.push(c);
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                word.push(c);
            }
        }
        words.push(word);
    }
    Some(
        words
            .iter()
            .map(|w| {
                if w.contains(char::is_whitespace) {
                    format!("\"{w}\"")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn ext_command(w: &str) -> Option<String> {
    let rest = w.strip_prefix("ext::")?;
    let mut out = String::with_capacity(rest.len());
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(' ') => out.push(' '),
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    Some(out)
}

/// A path inside a git object name or pathspec as git reads it: `./` and empty components
/// dropped (`HEAD:.//.env` is `.env`), never made absolute.
fn git_clean_path(p: &str) -> String {
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The paths a git pathspec with magic names: `:(top,literal)PATH`, `:/PATH` and `:/:PATH`
/// name PATH (from the top of the work tree: here, from where git runs, as the rules see
/// it); `icase` adds PATH in lower case, as a deny rule is written; an exclusion (`:!PATH`,
/// `:(exclude)PATH`) names nothing read.
fn git_pathspec(w: &str) -> Vec<String> {
    let (magic, rest) = if let Some(body) = w.strip_prefix(":(") {
        match body.split_once(')') {
            Some((m, r)) => (m.to_ascii_lowercase(), r),
            None => (String::new(), body),
        }
    } else if let Some(body) = w.strip_prefix(':') {
        // Short magic: any of `/` (top), `!` and `^` (exclude), then an optional `:`.
        let rest = body.trim_start_matches(['/', '!', '^']);
        let magic = &body[..body.len() - rest.len()];
        let exclude = if magic.contains(['!', '^']) {
            "exclude"
        } else {
            ""
        };
        (exclude.to_owned(), rest.strip_prefix(':').unwrap_or(rest))
    } else {
        (String::new(), w)
    };
    // What an exclusion names is what the command leaves out.
    if magic.split(',').any(|m| m.trim() == "exclude") {
        return Vec::new();
    }
    let p = git_clean_path(rest);
    let mut out = vec![p.clone()];
    if magic.split(',').any(|m| m.trim() == "icase") && p.to_ascii_lowercase() != p {
        out.push(p.to_ascii_lowercase());
    }
    out
}

const PROGRAM_OPTION: &str =
    "an option not in the command database whose name says it runs a program or loads code";

const WRAPPED_OPERAND: &str =
    "an operand of a program not in the command database that names a program or script to run";

/// Whether `word` names a program file as one runs it: by its absolute path (an executable
/// file there), or spelled from here (`./deploy.sh`, `../tools/run`: no extension, or a
/// script's). Other paths (`build/app`, `src/x.sh`, `./data.json`) name files.
fn is_run_path(word: &str) -> bool {
    if word.starts_with('/') {
        use std::os::unix::fs::PermissionsExt as _;
        return std::fs::metadata(word)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    }
    if word.contains("://")
        || word.ends_with('/')
        || !(word.starts_with("./") || word.starts_with("../"))
    {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    match name.rsplit_once('.') {
        None => !name.is_empty(),
        Some((stem, ext)) => {
            !stem.is_empty()
                && matches!(
                    ext,
                    "sh" | "bash"
                        | "zsh"
                        | "py"
                        | "rb"
                        | "pl"
                        | "js"
                        | "mjs"
                        | "cjs"
                        | "ts"
                        | "php"
                )
        }
    }
}

impl Database {
    /// Whether `word`, an operand of a program the database does not know, names a command
    /// it may run: a program the database knows that runs code, reaches the network or runs
    /// a command it is given (`python3`, `curl`, `cargo`, `env`; not `install` or `pr`,
    /// which subcommands of other tools are named like), a program file named by its
    /// absolute path, or a path spelled as one runs a file from here (`./deploy.sh`,
    /// `../tools/run`: no extension, or a script's). Other paths (`build/app`, `src/x.sh`) are
    /// taken for the files they name.
    fn names_a_command(&self, word: &str) -> bool {
        if word.contains('/') {
            return is_run_path(word);
        }
        self.program(word).is_some_and(|p| {
            let runs = p
                .effects
                .iter()
                .any(|e| matches!(e, EffectKind::RunsCode | EffectKind::Network))
                || p.operands.iter().flat_map(|s| &s.roles).any(|r| {
                    matches!(
                        r,
                        Role::ExecArgv
                            | Role::ExecArgvOpen
                            | Role::ExecString
                            | Role::RunsCode
                            | Role::Network
                    )
                });
            runs || p.has_subcommands()
        })
    }
}

/// The last parts of option names that, by the same convention, take code to load: a plugin,
/// a loader, a module to preload, a kubeconfig (whose `exec` entries run programs).
const LOAD_WORDS: &[&str] = &["plugin", "plugins", "loader", "preload", "kubeconfig"];

/// What an option the database does not know runs, by its name: a program or command line
/// ([`names_a_program`]: an exec string), or code it loads from a file (runs code).
fn option_runs(word: &str, next: Option<&String>) -> Option<(EffectKind, String, bool)> {
    if let Some((value, took)) = names_a_program(word, next) {
        return Some((EffectKind::ExecString, value, took));
    }
    option_value_by_name(word, next, LOAD_WORDS).map(|(v, took)| (EffectKind::RunsCode, v, took))
}

/// The last parts of option names that, by the common convention of command-line tools, take
/// a program (or a command line) to run: `--post-renderer`, `-Dexec.executable`,
/// `--ssh-command`, `--editor`, `--with-pager`, `--test-wrapper`, `--pre-hook`.
const PROGRAM_WORDS: &[&str] = &[
    "exec",
    "executable",
    "command",
    "cmd",
    "program",
    "shell",
    "editor",
    "pager",
    "renderer",
    "interpreter",
    "wrapper",
    "launcher",
    "hook",
    "ld",
];

/// The name of an option word, without its dashes and value (`--a-b=c` gives `a-b`).
fn option_name(word: &str) -> &str {
    let body = word.trim_start_matches('-');
    body.split_once('=').map_or(body, |(n, _)| n)
}

/// Whether `word`, an option that the database does not know, names by the convention of
/// command-line tools a program to run: its name's last part is one of [`PROGRAM_WORDS`]
/// (`-Dexec.executable=curl`, `--post-renderer ./x.sh`; not `--no-pager`). The program (the
/// attached value, else `next` when it is not an option itself, then taken as the value)
/// and whether `next` was taken.
pub(crate) fn names_a_program(word: &str, next: Option<&String>) -> Option<(String, bool)> {
    option_value_by_name(word, next, PROGRAM_WORDS)
}

/// The value of option `word` when its name's last part is one of `names`.
fn option_value_by_name(
    word: &str,
    next: Option<&String>,
    names: &[&str],
) -> Option<(String, bool)> {
    if !word.starts_with('-') || word == "-" || word == "--" {
        return None;
    }
    let mut name = option_name(word);
    // A Java-style property (`-Dexec.executable=...`), and a compiler's feature option
    // (`-fplugin=./x.so` in gcc and clang).
    if !word.starts_with("--") && word.contains('=') {
        name = name
            .strip_prefix('D')
            .or_else(|| name.strip_prefix('f'))
            .unwrap_or(name);
    }
    if name.starts_with("no-") || name.starts_with("no_") {
        return None;
    }
    let last = name
        .rsplit(['.', '-', '_', ':'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    if !names.contains(&last.as_str()) {
        return None;
    }
    match word.split_once('=') {
        Some((_, v)) if !v.trim().is_empty() => Some((v.to_owned(), false)),
        Some(_) => None,
        None => next
            .filter(|n| !n.starts_with('-') && !n.trim().is_empty())
            .map(|n| (n.clone(), true)),
    }
}

fn compile(
    name: &str,
    rp: &RawProgram,
    parent: Option<(&Syntax, Option<&str>)>,
    sets: &Arc<BTreeMap<String, RawSet>>,
) -> Result<Program, Error> {
    let mut syntax = match (&rp.style, parent) {
        (Some(s), _) => style(s, name)?,
        (None, Some((_, Some(s)))) => style(s, name)?,
        (None, Some((p, None))) => Syntax {
            any_option: false,
            numeric: false,
            ..*p
        },
        (None, None) => return Err(bad(format!("{name}: no style"))),
    };
    let set = |b: &mut bool, v: Option<bool>| {
        if let Some(v) = v {
            *b = v;
        }
    };
    set(&mut syntax.abbrev, rp.abbrev);
    set(&mut syntax.permute, rp.permute);
    set(&mut syntax.bundle, rp.bundle);
    set(&mut syntax.negate, rp.negate);
    set(&mut syntax.numeric, rp.numeric);
    set(&mut syntax.any_option, rp.any_option);
    set(&mut syntax.options_after_first, rp.options_after_first);
    set(&mut syntax.argument_files, rp.argument_files);
    set(&mut syntax.toolchain, rp.toolchain);

    let operands = parse_slots(&rp.operands, name)?;
    if syntax.permute && rest_slot(&operands).is_some() {
        return Err(bad(format!(
            "{name}: a command operand needs a style that stops at operands"
        )));
    }
    let mut prog = Program {
        name: name.to_owned(),
        aliases: rp.aliases.clone(),
        syntax,
        effects: rp
            .effects
            .iter()
            .map(|e| parse_effects(e, name))
            .collect::<Result<Vec<_>, _>>()?
            .concat(),
        bare: rp
            .bare
            .iter()
            .map(|e| parse_effects(e, name))
            .collect::<Result<Vec<_>, _>>()?
            .concat(),
        operands,
        shared_options: rp.shared,
        recursive: rp.recursive,
        follows_links: rp.follows_links,
        tree_writes: rp.tree_writes,
        cwd_reads: rp.cwd_reads.clone(),
        writes_below: rp.writes_below,
        hook: match &rp.hook {
            Some(h) => {
                Some(Hook::parse(h).ok_or_else(|| bad(format!("{name}: unknown hook `{h}`")))?)
            }
            None => None,
        },
        stdin: match rp.stdin.as_deref() {
            None => None,
            Some("shell") => Some(Stdin::Shell),
            Some("job") => Some(Stdin::Job),
            Some("commands") => Some(Stdin::Commands),
            Some("git-objects") => Some(Stdin::Objects),
            Some("patch") => Some(Stdin::Patch),
            Some("names") => Some(Stdin::Names),
            Some(other) => return Err(bad(format!("{name}: unknown stdin `{other}`"))),
        },
        language: match &rp.language {
            None => None,
            Some(l) => Some(Language {
                shell: l.shell.clone(),
                unknown_prefixes: l.unknown_prefixes.clone(),
                showing: l.showing.clone(),
                requotes: l.requotes,
                unknown_words: l.unknown_words.clone(),
                ignore_case: l.ignore_case,
                reads: l.reads.clone(),
                writes: l.writes.clone(),
                addresses: l.addresses,
                other_unknown: match l.other.as_deref() {
                    None | Some("none") => false,
                    Some("unknown") => true,
                    Some(o) => return Err(bad(format!("{name}: unknown language.other `{o}`"))),
                },
            }),
        },
        ..Program::default()
    };
    if prog.stdin == Some(Stdin::Commands) && prog.language.is_none() {
        return Err(bad(format!(
            "{name}: stdin = \"commands\" needs a language"
        )));
    }
    for (k, v) in &rp.keys {
        prog.keys.insert(k.clone(), parse_effects(v, name)?);
    }
    if prog.syntax.any_option
        && prog
            .operands
            .iter()
            .any(|s| s.roles.iter().any(|r| !r.is_inert()))
    {
        return Err(bad(format!("{name}: any_option needs data operands only")));
    }

    let mut groups: Vec<RawSet> = Vec::new();
    for inc in &rp.include {
        groups.push(
            sets.get(inc)
                .cloned()
                .ok_or_else(|| bad(format!("{name}: unknown option set `{inc}`")))?,
        );
    }
    groups.push(RawSet {
        flags: rp.flags.clone(),
        args: rp.args.clone(),
        optargs: rp.optargs.clone(),
        options: rp.options.clone(),
    });
    for g in &groups {
        for (text, arg) in [
            (&g.flags, Arity::None),
            (&g.args, Arity::Required),
            (&g.optargs, Arity::Optional),
        ] {
            for names in text.split_whitespace() {
                add_option(
                    &mut prog,
                    OptionSpec {
                        names: parse_names(names, name)?,
                        arg,
                        effects: Vec::new(),
                        value: ValueKind::Plain,
                        operands: None,
                        in_place: false,
                        stop: false,
                        chdir: false,
                        count: 1,
                        effect_on: 1,
                        mark: None,
                        default: None,
                    },
                )?;
            }
        }
        for o in &g.options {
            let whose = format!("{name} {}", o.names);
            let arg = match o.arg.as_deref().unwrap_or("none") {
                "none" => Arity::None,
                "required" => Arity::Required,
                "optional" => Arity::Optional,
                "command" => Arity::Command,
                other => return Err(bad(format!("{whose}: unknown arity `{other}`"))),
            };
            let value = match o.value.as_deref().unwrap_or("plain") {
                "plain" => ValueKind::Plain,
                "at-file" => ValueKind::AtFile,
                "form-file" => ValueKind::FormFile,
                "ssh-option" => ValueKind::SshOption,
                "git-config" => ValueKind::GitConfig,
                "git-config-env" => ValueKind::GitConfigEnv,
                "setting" => ValueKind::Setting,
                "checkpoint-action" => ValueKind::CheckpointAction,
                "commands" => ValueKind::Commands,
                "makefile" => ValueKind::Makefile,
                "makefile-path" => ValueKind::MakefilePath,
                "module" => ValueKind::Module,
                "names-file" => ValueKind::NamesFile,
                other => return Err(bad(format!("{whose}: unknown value kind `{other}`"))),
            };
            add_option(
                &mut prog,
                OptionSpec {
                    names: parse_names(&o.names, name)?,
                    arg,
                    effects: parse_effects(&o.effect, &whose)?,
                    value,
                    operands: match &o.operands {
                        Some(list) => Some(parse_slots(list, &whose)?),
                        None => None,
                    },
                    in_place: o.in_place,
                    stop: o.stop,
                    chdir: o.chdir,
                    count: o.count.unwrap_or(1).max(1),
                    effect_on: o
                        .effect_on
                        .unwrap_or(1)
                        .clamp(1, o.count.unwrap_or(1).max(1)),
                    mark: o.mark.clone(),
                    default: o.default.clone(),
                },
            )?;
        }
    }

    for (sub_name, sub_raw) in &rp.sub {
        let sub = Arc::new(Subcommand {
            name: format!("{name} {sub_name}"),
            raw: sub_raw.clone(),
            parent_syntax: prog.syntax,
            style: rp.sub_style.clone(),
            sets: Arc::clone(sets),
            compiled: OnceLock::new(),
        });
        for n in std::iter::once(sub_name).chain(&sub_raw.aliases) {
            if prog
                .subcommands
                .insert(n.clone(), Arc::clone(&sub))
                .is_some()
            {
                return Err(bad(format!("{name}: subcommand {n} named twice")));
            }
        }
    }
    Ok(prog)
}

fn add_option(prog: &mut Program, opt: OptionSpec) -> Result<(), Error> {
    let i = prog.options.len();
    for n in &opt.names {
        if prog.index.insert(n.clone(), i).is_some() {
            return Err(bad(format!("{}: option {n} declared twice", prog.name)));
        }
    }
    prog.options.push(opt);
    Ok(())
}

/// `*` matches any run of characters (dots included).
fn glob_match(pat: &str, s: &str) -> bool {
    match pat.split_once('*') {
        None => pat == s,
        Some((head, tail)) => {
            let Some(rest) = s.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|&i| rest.is_char_boundary(i))
                .any(|i| glob_match(tail, &rest[i..]))
        }
    }
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn is_remote_path(w: &str) -> bool {
    match w.find(':') {
        Some(i) => !w[..i].contains('/') && i > 0,
        None => false,
    }
}

/// Whether a file name given to a program is its standard input (`-`, `/dev/stdin`).
fn names_standard_input(name: &str) -> bool {
    matches!(name, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

fn join_dir(dir: &Option<String>, v: &str) -> String {
    match dir {
        Some(d) if !v.starts_with('/') && !v.starts_with('~') => {
            format!("{}/{}", d.trim_end_matches('/'), v)
        }
        _ => v.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Interpreting

struct Run<'d, 'o> {
    db: &'d Database,
    out: &'o mut Interpretation,
    /// What a here-document or here-string feeds the program's standard input.
    here: Option<Option<String>>,
    /// git aliases defined on the line (`-c alias.NAME=VALUE`) that do not run the shell:
    /// `(name, expansion)`.
    git_aliases: Vec<(String, String)>,
    /// How many aliases were expanded (git refuses loops; so does this).
    expansions: usize,
}

/// What one program's words said.
struct Parsed<'p> {
    label: String,
    chdir: Option<String>,
    spec: &'p [Slot],
    overridden: bool,
    /// The option that makes it change its read operands in place (`sed -i`), as written.
    in_place: Option<String>,
    /// Operands with the directory in force when they were seen.
    operands: Vec<(String, Option<String>)>,
    assigns: Vec<String>,
    marks: Vec<(String, Option<String>)>,
    rest_taken: bool,
    /// How many operands came before `--`, when it was given.
    dashes_at: Option<usize>,
    /// The program's own command language, if any.
    language: Option<&'p Language>,
}

impl Parsed<'_> {
    fn mark(&self, m: &str) -> bool {
        self.marks.iter().any(|(k, _)| k == m)
    }
    fn mark_values(&self, m: &str) -> Vec<String> {
        self.marks
            .iter()
            .filter(|(k, _)| k == m)
            .filter_map(|(_, v)| v.clone())
            .collect()
    }
}

enum Found<'p> {
    Opt(&'p OptionSpec),
    Negated,
    Missing,
}

impl Run<'_, '_> {
    fn push(
        &mut self,
        kind: EffectKind,
        value: Option<String>,
        program: &str,
        option: Option<&str>,
        detail: String,
    ) {
        self.out.effects.push(Effect::new(
            kind,
            value,
            Source {
                program: program.to_owned(),
                option: option.map(str::to_owned),
                detail,
            },
        ));
    }

    /// Commands of a program's own language given on the line: a line whose rest is shell
    /// code is that code (decided as units of its own); a line that can run programs in ways
    /// that cannot be read is unknown code; any other line does what the program does.
    fn commands(
        &mut self,
        lang: Option<&Language>,
        text: Option<&str>,
        program: &str,
        option: Option<&str>,
        detail: &str,
    ) {
        let (Some(lang), Some(text)) = (lang, text) else {
            self.push(
                EffectKind::Unknown,
                None,
                program,
                option,
                format!("{detail} that cannot be known"),
            );
            return;
        };
        for line in text.lines() {
            let l = line.trim_start().trim_start_matches(':').trim();
            if l.is_empty() {
                continue;
            }
            let l = if lang.addresses { strip_address(l) } else { l };
            // A file the command names: read or written as the command says.
            let named = |cmds: &[String]| {
                cmds.iter().find_map(|c| {
                    let rest = l.strip_prefix(c.as_str())?;
                    let file = rest.strip_prefix([' ', '\t'])?.trim();
                    (!file.is_empty() && !file.starts_with('!')).then(|| file.to_owned())
                })
            };
            if let Some(file) = named(&lang.reads) {
                let d = format!("{detail}: `{l}` reads a file");
                self.push(EffectKind::Read, Some(file), program, option, d);
                continue;
            }
            if let Some(file) = named(&lang.writes) {
                let d = format!("{detail}: `{l}` writes a file");
                self.push(EffectKind::Write, Some(file), program, option, d);
                continue;
            }
            if let Some(rest) = lang.shell.iter().find_map(|p| l.strip_prefix(p.as_str())) {
                let code = if lang.requotes {
                    rejoined_words(rest)
                } else {
                    Some(rest.trim().to_owned())
                };
                match code {
                    Some(code) => self.push(
                        EffectKind::ExecString,
                        Some(code),
                        program,
                        option,
                        format!("{detail}: a shell escape"),
                    ),
                    None => self.push(
                        EffectKind::Unknown,
                        Some(l.to_owned()),
                        program,
                        option,
                        format!("{detail}: a shell escape whose words cannot be read"),
                    ),
                }
            } else if lang.other_unknown
                || (lang
                    .unknown_prefixes
                    .iter()
                    .any(|p| l.starts_with(p.as_str()))
                    && !l
                        .split_whitespace()
                        .next()
                        .is_some_and(|first| lang.showing.iter().any(|w| w == first)))
                || if lang.ignore_case {
                    // Whole words (`edit (...)`, not a column `edited_at`), in any case.
                    let folded = l.to_lowercase();
                    lang.unknown_words.iter().any(|w| has_word(&folded, w))
                } else {
                    lang.unknown_words.iter().any(|w| l.contains(w.as_str()))
                }
            {
                self.push(
                    EffectKind::Unknown,
                    Some(l.to_owned()),
                    program,
                    option,
                    format!("{detail}: `{l}` can run programs"),
                );
            }
        }
    }

    /// Makefile text given on the line (`make --eval`). A recipe (a line after a tab, or
    /// after the `;` of a rule) is shell code, with make's `$$` as the shell's `$`. A line
    /// that can change what runs without being a recipe (a `$(shell ...)`, an `$(eval ...)`,
    /// the recipes' shell or its flags, make's own flags) cannot be known.
    fn makefile(&mut self, text: &str, program: &str, option: &str) {
        // Also what reads or writes files, or runs code, without a recipe: `$(file ...)`,
        // `include`, `load`, GNU Guile, and a recipe prefix other than the tab.
        const CHANGES_WHAT_RUNS: [&str; 12] = [
            "$(shell",
            "${shell",
            "$(eval",
            "${eval",
            "SHELL",
            "MAKEFLAGS",
            "!=",
            "$(file",
            "${file",
            "$(guile",
            "${guile",
            ".RECIPEPREFIX",
        ];
        const DIRECTIVES: [&str; 7] = [
            "include", "-include", "sinclude", "load", "-load", "vpath", "export",
        ];
        // Variables the built-in rules run (`CC = ./evil.sh` with `all: x.o`), and what
        // every recipe's programs are found through.
        const PROGRAM_VARIABLES: [&str; 15] = [
            "CC",
            "CXX",
            "CPP",
            "AS",
            "LD",
            "AR",
            "FC",
            "LEX",
            "YACC",
            "RM",
            "MAKE",
            "PATH",
            "LD_PRELOAD",
            "SHELL",
            "MAKESHELL",
        ];
        for line in text.lines() {
            let recipe = match line.strip_prefix('\t') {
                Some(r) => Some(r),
                None => match (line.find(':'), line.find(';')) {
                    (Some(colon), Some(semi)) if colon < semi && !line[..colon].contains('=') => {
                        Some(&line[semi + 1..])
                    }
                    _ => None,
                },
            };
            if let Some(r) = recipe {
                let r = r
                    .trim_start_matches(['@', '+', '-', ' ', '\t'])
                    .replace("$$", "$");
                if !r.trim().is_empty() {
                    self.push(
                        EffectKind::ExecString,
                        Some(r),
                        program,
                        Some(option),
                        format!("{option}: a recipe"),
                    );
                }
            }
            let directive = line
                .split_whitespace()
                .next()
                .is_some_and(|w| DIRECTIVES.contains(&w));
            let sets_a_program = line
                .split(['=', ':', '+', '?', '!'])
                .next()
                .map(str::trim)
                .is_some_and(|name| line.contains('=') && PROGRAM_VARIABLES.contains(&name));
            let directive = directive || sets_a_program;
            if directive || CHANGES_WHAT_RUNS.iter().any(|w| line.contains(w)) {
                self.push(
                    EffectKind::Unknown,
                    Some(line.to_owned()),
                    program,
                    Some(option),
                    format!("{option}: `{line}` can change what runs"),
                );
            }
        }
    }

    /// An option the database does not know at `words[i]` whose name says its value is a
    /// program to run ([`names_a_program`]): the value is code the program runs. The index of
    /// the next word; `None` when the option is not one of those.
    fn program_option(&mut self, words: &[String], i: usize, program: &str) -> Option<usize> {
        let (kind, value, took_next) = option_runs(&words[i], words.get(i + 1))?;
        self.push(
            kind,
            Some(value),
            program,
            Some(option_name(&words[i])),
            PROGRAM_OPTION.into(),
        );
        Some(i + 1 + usize::from(took_next))
    }

    fn unknown(&mut self, value: &str, program: &str, detail: &str) {
        self.push(
            EffectKind::Unknown,
            Some(value.to_owned()),
            program,
            None,
            detail.to_owned(),
        );
    }

    /// Parse `words` (argv without the program's name) with `scopes[0]`, falling back to
    /// the parents' options in `scopes[1..]`.
    fn program(
        &mut self,
        scopes: &[&Program],
        words: &[String],
        head: Vec<String>,
        chdir: Option<String>,
    ) {
        let from = self.out.effects.len();
        let chdir = self.program_in(scopes, words, head, chdir);
        // What the program runs, it runs in the directory its options changed to (`env -C
        // DIR CMD`, `git -C DIR` with an alias).
        if chdir.is_some() {
            for e in &mut self.out.effects[from..] {
                if e.cwd.is_none()
                    && matches!(
                        e.kind,
                        EffectKind::ExecArgv | EffectKind::ExecString | EffectKind::ExecProgram
                    )
                {
                    e.cwd = chdir.clone();
                }
            }
        }
    }

    /// [`Run::program`]: the directory the program's options changed to, at the end.
    fn program_in<'p>(
        &mut self,
        scopes: &[&'p Program],
        words: &[String],
        head: Vec<String>,
        chdir: Option<String>,
    ) -> Option<String> {
        let prog = scopes[0];
        let label = prog.name.clone();
        self.out.recursive |= prog.recursive;
        self.out.follows_links |= prog.follows_links;
        self.out.tree_writes |= prog.tree_writes;
        for &k in &prog.effects {
            self.push(k, None, &label, None, format!("program: {k}"));
        }

        if prog.hook == Some(Hook::Find) {
            self.find(prog, words, chdir.clone());
            return chdir;
        }
        let words = if prog.hook == Some(Hook::Tar) {
            tar_traditional(prog, words)
        } else {
            words.to_vec()
        };
        let mut st: Parsed<'p> = Parsed {
            label: label.clone(),
            chdir,
            spec: &prog.operands,
            overridden: false,
            in_place: None,
            operands: Vec::new(),
            assigns: Vec::new(),
            marks: Vec::new(),
            rest_taken: false,
            dashes_at: None,
            language: scopes.iter().find_map(|p| p.language.as_ref()),
        };
        let mut options_done = false;
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if !options_done && w == "--" {
                options_done = true;
                st.dashes_at = Some(st.operands.len());
                i += 1;
                continue;
            }
            if i == 0
                && prog.syntax.toolchain
                && let Some(name) = w.strip_prefix('+').filter(|n| !n.is_empty())
            {
                if name.contains('/') {
                    let detail = "+PATH: the toolchain whose programs run".to_owned();
                    let at = join_dir(&st.chdir, name);
                    self.push(EffectKind::ExecProgram, Some(at), &label, None, detail);
                }
                i += 1;
                continue;
            }
            if !options_done
                && scopes.iter().any(|p| p.syntax.argument_files)
                && let Some(file) = w.strip_prefix('@').filter(|f| !f.is_empty())
            {
                let detail = "@FILE: arguments read from the file".to_owned();
                let read = join_dir(&st.chdir, file);
                self.push(EffectKind::Read, Some(read), &label, None, detail.clone());
                self.push(EffectKind::Unknown, Some(w.clone()), &label, None, detail);
                i += 1;
                continue;
            }
            let looks_option = w.len() > 1
                && (w.starts_with('-')
                    || (w.starts_with('+') && prog.index.keys().any(|n| n.starts_with('+'))));
            if !options_done && looks_option {
                i = self.option(scopes, &words, i, &mut st, &mut options_done);
                continue;
            }
            // An operand.
            if prog.has_subcommands() {
                let Some(sub) = prog.subcommand(w.as_str()) else {
                    // A git alias given on the line: its expansion, then the rest.
                    let alias = self
                        .git_aliases
                        .iter()
                        .rev()
                        .find(|(n, _)| *n == w.to_ascii_lowercase())
                        .map(|(_, v)| v.clone());
                    if let Some(expansion) = alias
                        && self.expansions < 8
                    {
                        self.expansions += 1;
                        let mut expanded: Vec<String> =
                            expansion.split_whitespace().map(str::to_owned).collect();
                        expanded.extend(words[i + 1..].iter().cloned());
                        self.program(scopes, &expanded, head, st.chdir.clone());
                        return st.chdir;
                    }
                    self.unknown(w, &label, "subcommand not in the command database");
                    // Its options are read as an unknown program's are: one whose name says
                    // it takes a program runs it (`git fetch-pack --exec=CMD`).
                    let mut j = i + 1;
                    while j < words.len() {
                        if let Some((kind, value, took)) = option_runs(&words[j], words.get(j + 1))
                        {
                            self.push(
                                kind,
                                Some(value),
                                &label,
                                Some(option_name(&words[j])),
                                PROGRAM_OPTION.into(),
                            );
                            j += usize::from(took);
                        }
                        j += 1;
                    }
                    return st.chdir;
                };
                self.out.path.push(w.clone());
                let mut rule = head.clone();
                rule.push(w.clone());
                rule.extend(words[i + 1..].iter().cloned());
                self.out.rule_words = rule;
                let mut chain: Vec<&Program> = vec![sub];
                if prog.shared_options {
                    chain.extend_from_slice(scopes);
                }
                let mut head = head;
                head.push(w.clone());
                self.program(&chain, &words[i + 1..], head, st.chdir.clone());
                return st.chdir;
            }
            if let Some(k) = assign_slot(st.spec)
                && k == st.operands.len()
                && is_assignment(w)
            {
                st.assigns.push(w.clone());
                i += 1;
                continue;
            }
            if self.at_rest(&st) {
                // A command given by an option after the operands (`flock FILE -c CMD`) is the
                // program's own option, not the first word of a command.
                let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
                let carries_command = looks_option
                    && prog.option(name).is_some_and(|o| {
                        o.effects
                            .iter()
                            .any(|e| matches!(e, EffectKind::ExecString | EffectKind::ExecArgv))
                    });
                if carries_command {
                    options_done = false;
                    i = self.option(scopes, &words, i, &mut st, &mut options_done);
                    st.rest_taken = true;
                    continue;
                }
                self.rest(&mut st, &words[i..]);
                break;
            }
            st.operands.push((w.clone(), st.chdir.clone()));
            // OpenSSH goes on reading options after its first operand.
            let again = prog.syntax.options_after_first && st.operands.len() == 1;
            if !prog.syntax.permute && !again {
                options_done = true;
            }
            i += 1;
        }
        self.finish(prog, &mut st);
        st.chdir
    }

    /// Is the next operand the start of a rest-of-words role?
    fn at_rest(&self, st: &Parsed<'_>) -> bool {
        match rest_slot(st.spec) {
            Some((_, k)) => !st.rest_taken && st.operands.len() == k,
            None => false,
        }
    }

    fn rest(&mut self, st: &mut Parsed<'_>, words: &[String]) {
        st.rest_taken = true;
        let Some((role, _)) = rest_slot(st.spec) else {
            return;
        };
        let label = st.label.clone();
        let detail = if st.assigns.is_empty() {
            format!("operands: {}", role_name(role))
        } else {
            format!(
                "operands: {} with {}",
                role_name(role),
                st.assigns.join(" ")
            )
        };
        match role {
            Role::ShellArgs => {
                let mut argv = vec!["bash".to_owned()];
                argv.extend(words.iter().cloned());
                let mut e = Effect::new(
                    EffectKind::ExecArgv,
                    Some("bash".to_owned()),
                    Source {
                        program: label,
                        option: None,
                        detail,
                    },
                );
                e.argv = argv;
                self.out.effects.push(e);
            }
            Role::ExecArgv | Role::ExecArgvOpen => {
                let mut e = Effect::new(
                    EffectKind::ExecArgv,
                    words.first().cloned(),
                    Source {
                        program: label,
                        option: None,
                        detail,
                    },
                );
                e.argv = words.to_vec();
                e.argv_open = role == Role::ExecArgvOpen;
                e.assigns.clone_from(&st.assigns);
                self.out.effects.push(e);
            }
            Role::ExecStringJoined => self.push(
                EffectKind::ExecString,
                Some(words.join(" ")),
                &label,
                None,
                detail,
            ),
            Role::Remote => {
                self.push(
                    EffectKind::System,
                    Some(words.join(" ")),
                    &label,
                    None,
                    detail,
                );
                // The command runs wherever the host is, this machine too (`ssh localhost
                // CMD`): its words may be any command, which deny rules meet.
                self.push(
                    EffectKind::RunsCode,
                    None,
                    &label,
                    None,
                    "a command run on the host it reaches".into(),
                );
            }
            _ => {}
        }
    }

    /// Parse the option word(s) at `words[i]`; returns the index of the next word.
    fn option<'p>(
        &mut self,
        scopes: &[&'p Program],
        words: &[String],
        i: usize,
        st: &mut Parsed<'p>,
        options_done: &mut bool,
    ) -> usize {
        let prog = scopes[0];
        let w = &words[i];
        let label = st.label.clone();
        let find = |name: &str| scopes.iter().find_map(|p| p.option(name));
        // A one-letter option that takes a value may have it attached (`gcc -B.cache/`,
        // `pytest -c/tmp/x.ini`), also where any other option goes.
        if (prog.syntax.single_dash_long || prog.syntax.bundle)
            && !w.starts_with("--")
            && find(w.split('=').next().unwrap_or(w)).is_none()
            && let Some(short) = w.get(..2).filter(|s| s.starts_with('-') && w.len() > 2)
            && let Some(opt) = find(short).filter(|o| o.arg == Arity::Required)
        {
            return self.take(opt, words, i, Some(&w[2..]), w, st, options_done);
        }
        // Any option goes, without effect, but those listed: they have theirs (`go test
        // -exec CMD`, `npm run --script-shell SHELL`), also by a prefix where the program
        // takes prefixes (`npm config get --userc FILE`; one that could be several of them
        // cannot be known).
        let name = w.split('=').next().unwrap_or(w);
        let listed = find(name).is_some()
            || (name.len() >= 3
                && name.starts_with("--")
                && scopes
                    .iter()
                    .any(|p| p.syntax.abbrev && has_prefix(p, name)));
        if scopes.iter().any(|p| p.syntax.any_option) && !listed {
            if scopes.iter().any(|p| p.does_things()) {
                self.out.loose.push(w.clone());
            }
            return self.program_option(words, i, &label).unwrap_or(i + 1);
        }
        // Long options (and Go-style single-dash long options).
        let long_body = if let Some(b) = w.strip_prefix("--") {
            Some(b)
        } else if prog.syntax.single_dash_long {
            w.strip_prefix('-')
        } else {
            None
        };
        if let Some(body) = long_body {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let found = self.find_long(scopes, name);
            return match found {
                Found::Opt(opt) => self.take(opt, words, i, attached, w, st, options_done),
                Found::Negated if attached.is_none() => i + 1,
                _ => {
                    self.unknown(w, &label, "option not in the command database");
                    self.program_option(words, i, &label).unwrap_or(i + 1)
                }
            };
        }
        // A single-dash option spelled whole (`-TT`, `-5`, `-name`).
        if let Some(opt) = find(w) {
            return self.take(opt, words, i, None, w, st, options_done);
        }
        // Short options, bundled (`+` options bundle with `+` options).
        let lead = if w.starts_with('+') { '+' } else { '-' };
        let body = &w[1..];
        let mut pos = 0;
        while pos < body.len() {
            let rest = &body[pos..];
            // Longest declared name matching here.
            let mut best: Option<(&'p OptionSpec, usize)> = None;
            for p in scopes {
                for (n, &ix) in &p.index {
                    if let Some(s) = n.strip_prefix(lead)
                        && !n.starts_with("--")
                        && rest.starts_with(s)
                        && best.is_none_or(|(_, l)| s.len() > l)
                    {
                        best = Some((&p.options[ix], s.len()));
                    }
                }
            }
            if best.is_none()
                && prog.syntax.numeric
                && rest.starts_with(|c: char| c.is_ascii_digit())
            {
                let n = rest.chars().take_while(char::is_ascii_digit).count();
                pos += n;
                continue;
            }
            let Some((opt, len)) = best else {
                self.unknown(w, &label, "option not in the command database");
                return i + 1;
            };
            let after = &rest[len..];
            match opt.arg {
                Arity::None => {
                    if !prog.syntax.bundle && !after.is_empty() {
                        self.unknown(w, &label, "options do not bundle");
                        return i + 1;
                    }
                    self.take(opt, words, i, None, w, st, options_done);
                    pos += len;
                }
                Arity::Required | Arity::Optional | Arity::Command => {
                    let attached = if after.is_empty() { None } else { Some(after) };
                    return self.take(opt, words, i, attached, w, st, options_done);
                }
            }
        }
        i + 1
    }

    fn find_long<'p>(&self, scopes: &[&'p Program], name: &str) -> Found<'p> {
        let dashed = format!("--{name}");
        let single = format!("-{name}");
        for p in scopes {
            if let Some(o) = p.option(&dashed).or_else(|| {
                if p.syntax.single_dash_long {
                    p.option(&single)
                } else {
                    None
                }
            }) {
                return Found::Opt(o);
            }
        }
        for p in scopes {
            if p.syntax.abbrev {
                if let Some(o) = p.resolve_long(&dashed) {
                    return Found::Opt(o);
                }
                if has_prefix(p, &dashed) {
                    return Found::Missing; // ambiguous
                }
            }
        }
        if let Some(rest) = name.strip_prefix("no-") {
            for p in scopes {
                if p.syntax.negate
                    && matches!(p.resolve_long(&format!("--{rest}")), Some(o) if o.arg != Arity::Command)
                {
                    return Found::Negated;
                }
            }
        }
        Found::Missing
    }

    /// An option followed by a command (`fd -x CMD ARGS... [;]`, `fd --exec=CMD ARGS...`):
    /// its value and the words after it up to a `;` (or the end) are the command, to which
    /// the program adds more (the paths it found). The index of the word after it.
    fn take_command(
        &mut self,
        opt: &OptionSpec,
        words: &[String],
        i: usize,
        attached: Option<&str>,
        word: &str,
        st: &Parsed<'_>,
    ) -> usize {
        let start = (i + 1).min(words.len());
        let end = words[start..]
            .iter()
            .position(|w| w == ";")
            .map_or(words.len(), |p| start + p);
        let argv: Vec<String> = attached
            .map(str::to_owned)
            .into_iter()
            .chain(words[start..end].iter().cloned())
            .collect();
        let Some(first) = argv.first().cloned() else {
            self.unknown(word, &st.label, "option value missing");
            return (end + 1).min(words.len());
        };
        let before = self.out.effects.len();
        self.apply(opt, word, Some(first), &st.label, &st.chdir);
        for e in &mut self.out.effects[before..] {
            if e.kind == EffectKind::ExecArgv {
                e.argv = argv.clone();
                e.argv_open = true;
            }
        }
        (end + 1).min(words.len())
    }

    /// Take the option's value(s) and apply its effects; returns the index of the next word.
    #[allow(clippy::too_many_arguments)]
    fn take<'p>(
        &mut self,
        opt: &'p OptionSpec,
        words: &[String],
        i: usize,
        attached: Option<&str>,
        word: &str,
        st: &mut Parsed<'p>,
        options_done: &mut bool,
    ) -> usize {
        let label = st.label.clone();
        let mut next = i + 1;
        if opt.arg == Arity::Command {
            return self.take_command(opt, words, i, attached, word, st);
        }
        let value: Option<String> = match opt.arg {
            Arity::None => {
                if attached.is_some() {
                    self.unknown(word, &label, "option takes no value");
                    return next;
                }
                None
            }
            Arity::Optional => attached.map(str::to_owned),
            Arity::Required | Arity::Command => match attached {
                Some(v) => Some(v.to_owned()),
                None => match words.get(next) {
                    Some(v) => {
                        next += 1;
                        Some(v.clone())
                    }
                    None => {
                        self.unknown(word, &label, "option value missing");
                        return next;
                    }
                },
            },
        };
        // Extra words (`-fprintf FILE FORMAT`, `--rawfile NAME FILE`).
        let value = if opt.effect_on > 1 {
            words.get(next + opt.effect_on - 2).cloned()
        } else {
            value
        };
        if next + opt.count - 1 > words.len() {
            self.unknown(word, &label, "option values missing");
        }
        next = (next + opt.count - 1).min(words.len());
        // Several notes join with `+` (`recursive+follows-links`).
        for m in opt.mark.iter().flat_map(|m| m.split('+')) {
            st.marks
                .push((m.to_owned(), value.clone().or_else(|| opt.default.clone())));
        }
        if opt.value == ValueKind::Commands {
            let lang = st.language;
            let shown = word.split('=').next().unwrap_or(word);
            let detail = format!("{}: commands", opt.name());
            self.commands(lang, value.as_deref(), &label, Some(shown), &detail);
        } else {
            self.apply(opt, word, value.clone(), &label, &st.chdir);
        }
        if opt.chdir
            && let Some(v) = &value
        {
            let dir = join_dir(&st.chdir, v);
            // Working there is looking there, as `cd` is (`env -C ~/secret git log`).
            if opt.effects.is_empty() {
                let shown = word.split('=').next().unwrap_or(word);
                self.push(
                    EffectKind::Read,
                    Some(dir.clone()),
                    &label,
                    Some(shown),
                    format!("{}: the directory it works in", opt.name()),
                );
            }
            st.chdir = Some(dir);
        }
        if let Some(slots) = &opt.operands {
            st.spec = slots;
            st.overridden = true;
        }
        // `python -m pytest ...`: the words after are pytest's.
        if opt.value == ValueKind::Module
            && let Some(module) = value.as_deref()
            && let Some(prog) = self.db.program(module)
        {
            // Rules still match the words as written (`python3 -m pip list`), not the module's.
            let rule_words = std::mem::take(&mut self.out.rule_words);
            let path = self.out.path.clone();
            self.program(
                &[prog],
                &words[next..],
                vec![module.to_owned()],
                st.chdir.clone(),
            );
            self.out.rule_words = rule_words;
            self.out.path = path;
            st.rest_taken = true;
            *options_done = true;
            return words.len();
        }
        if opt.in_place {
            st.in_place = Some(word.split('=').next().unwrap_or(word).to_owned());
        }
        if opt.stop {
            *options_done = true;
        }
        next
    }

    /// Apply an option's effects to its value.
    fn apply(
        &mut self,
        opt: &OptionSpec,
        word: &str,
        value: Option<String>,
        label: &str,
        chdir: &Option<String>,
    ) {
        let shown = word.split('=').next().unwrap_or(word);
        let value = value.or_else(|| opt.default.clone());
        if opt.value == ValueKind::Makefile {
            self.makefile(value.as_deref().unwrap_or_default(), label, shown);
            return;
        }
        if opt.value == ValueKind::NamesFile {
            let v = value.clone().unwrap_or_default();
            let from_stdin = names_standard_input(&v);
            let detail = format!("{}: a file of names", opt.name());
            if !from_stdin {
                self.push(
                    EffectKind::Read,
                    Some(join_dir(chdir, &v)),
                    label,
                    Some(shown),
                    detail,
                );
            }
            let fed = if from_stdin {
                self.here.take().flatten()
            } else {
                None
            };
            let detail = format!("{}: a file it names", opt.name());
            let names: Option<Vec<&str>> = fed.as_deref().map(|text| {
                text.split(['\0', '\n'])
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .collect()
            });
            // A name that starts with `-` is an option to tar (`-C DIR`, `-T FILE`), and a
            // backslash an escape it decodes (`\056env`): what is read is not the name.
            let plain = names
                .as_ref()
                .is_some_and(|ns| ns.iter().all(|n| !n.starts_with('-') && !n.contains('\\')));
            match names {
                Some(names) if plain => {
                    for name in names {
                        let f = Some(join_dir(chdir, name));
                        self.push(EffectKind::Read, f, label, Some(shown), detail.clone());
                    }
                }
                _ => self.push(EffectKind::Read, None, label, Some(shown), detail),
            }
            return;
        }
        if opt.value == ValueKind::MakefilePath
            && value.as_deref().is_some_and(names_standard_input)
        {
            match self.here.take() {
                Some(Some(text)) => self.makefile(&text, label, shown),
                _ => self.push(
                    EffectKind::Unknown,
                    None,
                    label,
                    Some(shown),
                    format!("{shown}: a makefile read from standard input that cannot be known"),
                ),
            }
            return;
        }
        if matches!(
            opt.value,
            ValueKind::SshOption
                | ValueKind::GitConfig
                | ValueKind::GitConfigEnv
                | ValueKind::Setting
        ) {
            let v = value.unwrap_or_default();
            self.config_value(opt.value, &v, label, shown);
            return;
        }
        for &kind in &opt.effects {
            let detail = format!("{}: {kind}", opt.name());
            match opt.value {
                ValueKind::Plain
                | ValueKind::MakefilePath
                | ValueKind::Module
                | ValueKind::NamesFile => match &value {
                    // `git archive --remote=ext::CMD`: an address that is a command.
                    Some(v) if kind == EffectKind::Network && ext_command(v).is_some() => {
                        self.push(kind, Some(v.clone()), label, Some(shown), detail);
                        let cmd = ext_command(v);
                        let detail = format!("{}: ext:: command", opt.name());
                        self.push(EffectKind::ExecString, cmd, label, Some(shown), detail);
                    }
                    Some(v) if is_path_kind(kind) && v == "-" => {}
                    Some(v) if is_path_kind(kind) => {
                        self.push(kind, Some(join_dir(chdir, v)), label, Some(shown), detail);
                        // Code loaded from a file is read from it (`node -r ./x`); code given
                        // on the line may read the files it names (`python3 -c
                        // 'open(".env")'`): they meet the deny rules.
                        if kind == EffectKind::RunsCode {
                            if v.contains(['(', ' ', ';', '\n', '"', '\'']) {
                                self.out.code.push(v.clone());
                            } else {
                                let detail = format!("{}: read", opt.name());
                                let f = Some(join_dir(chdir, v));
                                self.push(EffectKind::Read, f, label, Some(shown), detail);
                            }
                        }
                    }
                    v => self.push(kind, v.clone(), label, Some(shown), detail),
                },
                ValueKind::AtFile => {
                    // `@FILE`; and in curl's URL-encoding syntax (`--data-urlencode`,
                    // `--url-query`, `--variable`), `NAME@FILE` too.
                    let named = ["urlencode", "url-query", "variable"]
                        .iter()
                        .any(|n| shown.contains(n));
                    let file = value.as_deref().and_then(|v| {
                        v.strip_prefix('@').or_else(|| {
                            v.split_once('@')
                                .filter(|(n, _)| named && !n.contains('='))
                                .map(|(_, f)| f)
                        })
                    });
                    if let Some(f) = file
                        && f != "-"
                    {
                        self.push(kind, Some(join_dir(chdir, f)), label, Some(shown), detail);
                    }
                }
                ValueKind::FormFile => {
                    // `NAME=@FILE` or `NAME=<FILE`, then `;type=...` and the like. Quotes,
                    // a list of files (`@a,b`) or another file in the rest (`;headers=@F`)
                    // are read by curl's own rules: which files cannot be told here.
                    let v = value.as_deref().unwrap_or("");
                    if let Some((_, rhs)) = v.split_once('=')
                        && rhs.contains(['@', '<'])
                    {
                        let file = rhs.strip_prefix('@').or_else(|| rhs.strip_prefix('<'));
                        let plain = file.map(|f| {
                            let (f, rest) = f.split_once(';').unwrap_or((f, ""));
                            (
                                f,
                                !f.contains(['"', ',', '\\']) && !rest.contains(['@', '<', '"']),
                            )
                        });
                        match plain {
                            Some((f, true)) if f != "-" => {
                                self.push(
                                    kind,
                                    Some(join_dir(chdir, f)),
                                    label,
                                    Some(shown),
                                    detail,
                                );
                            }
                            Some((_, true)) => {}
                            _ => self.push(kind, None, label, Some(shown), detail),
                        }
                    }
                }
                ValueKind::CheckpointAction => {
                    if let Some(cmd) = value.as_deref().and_then(|v| v.strip_prefix("exec=")) {
                        self.push(kind, Some(cmd.to_owned()), label, Some(shown), detail);
                    }
                }
                // Read by `commands` or `makefile` before it gets here.
                ValueKind::SshOption
                | ValueKind::GitConfig
                | ValueKind::GitConfigEnv
                | ValueKind::Setting
                | ValueKind::Commands
                | ValueKind::Makefile => {}
            }
        }
    }

    /// A configuration setting (`-c key=value`, `-o Key=Value`).
    fn config_value(&mut self, kind: ValueKind, text: &str, label: &str, shown: &str) {
        let (table, key, value) = match kind {
            ValueKind::SshOption => {
                let text = text.trim_start();
                let split = text
                    .find(|c: char| c == '=' || c.is_whitespace())
                    .unwrap_or(text.len());
                let key = &text[..split];
                let value = text[split..]
                    .trim_start_matches(|c: char| c.is_whitespace())
                    .trim_start_matches('=')
                    .trim_start();
                ("ssh", key, Some(value.to_owned()))
            }
            ValueKind::GitConfig => match text.split_once('=') {
                Some((k, v)) => ("git", k, Some(v.to_owned())),
                None => ("git", text, Some("true".to_owned())),
            },
            ValueKind::Setting => {
                let program = label.split(' ').next().unwrap_or(label);
                match text.split_once('=') {
                    Some((k, v)) => (program, k, Some(v.to_owned())),
                    None => (program, text, None),
                }
            }
            _ => match text.split_once('=') {
                Some((k, _)) => ("git", k, None),
                None => {
                    self.unknown(text, label, "bad --config-env value");
                    return;
                }
            },
        };
        self.config_effect(table, key, value, label, Some(shown));
    }

    fn config_effect(
        &mut self,
        table: &str,
        key: &str,
        value: Option<String>,
        label: &str,
        option: Option<&str>,
    ) {
        let Some(category) = self.db.config_category(table, key).map(str::to_owned) else {
            return;
        };
        let detail = format!("{table} config {key}: {category}");
        match category.as_str() {
            "alias" => match value.as_deref() {
                Some(v) if v.starts_with('!') => self.push(
                    EffectKind::ExecString,
                    Some(v[1..].to_owned()),
                    label,
                    option,
                    detail,
                ),
                // Another git command line: the subcommand it names is run in its place.
                Some(v) => {
                    if let Some(name) = key.split_once('.').map(|(_, n)| n.to_ascii_lowercase()) {
                        self.git_aliases.push((name, v.to_owned()));
                    }
                }
                None => self.push(EffectKind::Unknown, None, label, option, detail),
            },
            // git runs a helper written `!COMMAND` (`credential.helper`) with the shell.
            "exec-program"
                if table == "git" && value.as_deref().is_some_and(|v| v.starts_with('!')) =>
            {
                let v = value.unwrap_or_default();
                self.push(
                    EffectKind::ExecString,
                    Some(v[1..].to_owned()),
                    label,
                    option,
                    detail,
                );
            }
            c => match EffectKind::from_name(c) {
                Some(k) if value.is_none() => {
                    let k = if matches!(k, EffectKind::Read | EffectKind::Write) {
                        EffectKind::Unknown
                    } else {
                        k
                    };
                    self.push(k, None, label, option, detail)
                }
                Some(k) => self.push(k, value, label, option, detail),
                None => self.push(EffectKind::Unknown, value, label, option, detail),
            },
        }
    }

    /// Assign operands to roles and apply hooks.
    fn finish(&mut self, prog: &Program, st: &mut Parsed<'_>) {
        // The files it reads where it runs (where its options took it), unless an option
        // named another file to read in their place (`docker compose --env-file x`).
        if !st.mark("instead-of-cwd-reads") {
            for f in &prog.cwd_reads {
                self.push(
                    EffectKind::Read,
                    Some(join_dir(&st.chdir, f)),
                    &st.label,
                    None,
                    crate::effect::Source::LOADED_WHERE_IT_RUNS.into(),
                );
            }
        }
        // `directories`: what to do with a directory operand (grep's `-d ACTION`, whose
        // action may be cut short as long as it stays unambiguous: `rec` is `recurse`).
        self.out.recursive |= st.mark("recursive")
            || st
                .mark_values("directories")
                .iter()
                .any(|v| v.len() >= 3 && "recurse".starts_with(v.as_str()));
        // `RANGE:FILE` (`git log -L 1,5:src/a.rs`): FILE is read.
        for v in st.mark_values("range-file") {
            if let Some((_, file)) = v.rsplit_once(':')
                && !file.is_empty()
            {
                self.push(
                    EffectKind::Read,
                    Some(join_dir(&st.chdir, file)),
                    &st.label,
                    Some("-L"),
                    "a range of the file's lines".into(),
                );
            }
        }
        self.out.tree_writes |= st.mark("tree-writes");
        self.out.follows_links |= st.mark("follows-links");
        // An option that makes it only check or report (`git apply --check`, `--stat`)
        // leaves nothing written: the program's own writes are not made.
        let writes_nothing = st.mark("writes-nothing") && !st.mark("applies");
        if writes_nothing {
            let own = format!("program: {}", EffectKind::Write);
            self.out.effects.retain(|e| {
                !(e.kind == EffectKind::Write
                    && e.value.is_none()
                    && e.source.option.is_none()
                    && e.source.detail == own)
            });
        }
        if prog.writes_below && !writes_nothing {
            self.out.writes_below = true;
            self.push(
                EffectKind::Write,
                Some(join_dir(&st.chdir, ".")),
                &st.label,
                None,
                "program: writes what its input names, below where it works".into(),
            );
        }
        let label = st.label.clone();
        let bare = st.operands.is_empty() && !st.overridden && !st.rest_taken;
        if bare {
            for &k in &prog.bare {
                // Code fed on its standard input by the line is code given on the line, as
                // `-e` gives it (`perl -c <<'E' BEGIN{...}`): a rule naming another use of the
                // program does not name it.
                if k == EffectKind::RunsCode && self.here.is_some() {
                    self.push(
                        k,
                        Some("-".into()),
                        &label,
                        Some("-"),
                        "no operand: runs the code the line feeds its standard input".into(),
                    );
                    continue;
                }
                self.push(
                    k,
                    None,
                    &label,
                    None,
                    "no operand: runs its standard input".into(),
                );
            }
        }
        if let Some(fed) = self.here.take() {
            match prog.stdin {
                Some(Stdin::Job) | Some(Stdin::Shell) if bare || prog.stdin == Some(Stdin::Job) => {
                    match fed {
                        Some(code) => self.push(
                            EffectKind::ExecString,
                            Some(code),
                            &label,
                            None,
                            "standard input: shell code fed on the line".into(),
                        ),
                        None => self.push(
                            EffectKind::Unknown,
                            None,
                            &label,
                            None,
                            "standard input: shell code that cannot be known".into(),
                        ),
                    }
                }
                Some(Stdin::Commands) => {
                    let detail = "standard input: commands fed on the line";
                    self.commands(st.language, fed.as_deref(), &label, None, detail);
                }
                Some(Stdin::Objects) => match fed {
                    Some(text) => {
                        for w in text.split_whitespace() {
                            self.operand(prog, Role::GitObject, w, &None, &label);
                        }
                    }
                    None => self.push(
                        EffectKind::Unknown,
                        None,
                        &label,
                        None,
                        "standard input: object names that cannot be known".into(),
                    ),
                },
                Some(Stdin::Names) => {
                    if fed.is_none() {
                        self.push(
                            EffectKind::Read,
                            None,
                            &label,
                            None,
                            "standard input: names that cannot be known".into(),
                        );
                    }
                    for name in fed.as_deref().unwrap_or_default().lines() {
                        let name = name.trim();
                        // A backslash may be an escape or a line joined by the shell: the
                        // name read is not the one shown.
                        if name.contains('\\') {
                            self.push(
                                EffectKind::Read,
                                None,
                                &label,
                                None,
                                "standard input: a name that cannot be known".into(),
                            );
                        } else if !name.is_empty() {
                            self.push(
                                EffectKind::Read,
                                Some(join_dir(&st.chdir, name)),
                                &label,
                                None,
                                "standard input: a file named on the line".into(),
                            );
                        }
                    }
                }
                // Unknown, it may write anything below where it works (`writes_below`).
                Some(Stdin::Patch) if !writes_nothing => {
                    for name in patch_targets(fed.as_deref().unwrap_or_default()) {
                        self.push(
                            EffectKind::Write,
                            Some(join_dir(&st.chdir, &name)),
                            &label,
                            None,
                            "standard input: a file the patch fed on the line names".into(),
                        );
                    }
                }
                _ => {}
            }
        }
        let ops = std::mem::take(&mut st.operands);
        if prog.hook == Some(Hook::Ln) && ops.len() == 1 && !st.overridden {
            let (t, dir) = &ops[0];
            let name = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
            self.push(
                EffectKind::Read,
                Some(join_dir(dir, t)),
                &label,
                None,
                "operand: target".into(),
            );
            self.push(
                EffectKind::Write,
                Some(join_dir(dir, name)),
                &label,
                None,
                "operand: link made here".into(),
            );
            return;
        }
        let assigned = assign(st.spec, &ops);
        let mut script_operand = None;
        for (k, (slot, (w, dir))) in assigned.iter().enumerate() {
            match slot {
                None => self.unknown(w, &label, "extra operand"),
                Some(slot) => {
                    for &role in &slot.roles {
                        // After `--`, git's operands are paths.
                        let role =
                            if role == Role::GitObject && st.dashes_at.is_some_and(|d| k >= d) {
                                Role::Read
                            } else {
                                role
                            };
                        if role == Role::Script || role == Role::Program {
                            script_operand = Some(w.clone());
                        }
                        let in_place = st.in_place.as_deref().filter(|_| role == Role::Read);
                        let role = if in_place.is_some() {
                            Role::ReadWrite
                        } else {
                            role
                        };
                        if prog.hook == Some(Hook::Tar) || prog.hook == Some(Hook::GitConfig) {
                            continue;
                        }
                        self.operand(prog, role, w, dir, &label);
                        // The writes are the in-place option's doing (a rule naming a use of
                        // the program without it does not cover them: `Bash(sed -n:*)`).
                        if let Some(option) = in_place {
                            self.out.in_place_by = Some(option.to_owned());
                        }
                    }
                }
            }
        }
        match prog.hook {
            Some(hook @ (Hook::Sed | Hook::Awk)) => {
                let what = if hook == Hook::Sed {
                    "sed script"
                } else {
                    "awk program"
                };
                let mut scripts = st.mark_values("script");
                scripts.extend(script_operand);
                if st.mark("script-file") {
                    self.push(
                        EffectKind::Unknown,
                        None,
                        &label,
                        Some("-f"),
                        format!("{what} read from a file"),
                    );
                } else if !scripts.is_empty() {
                    let text = scripts.join("\n");
                    let fx = if hook == Hook::Sed {
                        lang::sed::analyze(&text, st.mark("extended"))
                    } else {
                        lang::awk::analyze(&text)
                    };
                    self.script(fx, &label, what);
                }
            }
            Some(Hook::Tar) => self.tar(st, &ops, &label),
            Some(Hook::GitConfig) => self.git_config(st, &ops, &label),
            _ => {}
        }
    }

    fn script(&mut self, fx: ScriptEffects, label: &str, what: &str) {
        for (kind, values, verb) in [
            (EffectKind::Read, fx.reads, "reads"),
            (EffectKind::Write, fx.writes, &Source::SCRIPT_WRITES[2..]),
            (EffectKind::ExecString, fx.exec_strings, "runs"),
        ] {
            for v in values {
                self.push(kind, Some(v), label, None, format!("{what}: {verb}"));
            }
        }
        for u in fx.unknown {
            self.push(
                EffectKind::Unknown,
                None,
                label,
                None,
                format!("{what}: {u}"),
            );
        }
    }

    fn operand(&mut self, prog: &Program, role: Role, w: &str, dir: &Option<String>, label: &str) {
        // A file operand given as a `file:` URI (sqlite's `file:/x/secret.db?mode=ro`, or
        // `file:data.db`) is the file the URI names, for any program that reads it as one.
        if matches!(
            role,
            Role::Read | Role::ReadWrite | Role::Write | Role::Output
        ) && w.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("file:"))
        {
            let named = file_url_path(w).flatten().or_else(|| {
                let rest = &w[5..];
                let rest = rest.split(['?', '#']).next().unwrap_or_default();
                (!rest.is_empty() && !rest.starts_with('/') && !rest.contains('%'))
                    .then(|| rest.to_owned())
            });
            match named {
                Some(p) if p != w => return self.operand(prog, role, &p, dir, label),
                _ => {
                    let detail =
                        format!("operand: {} (a URI that cannot be read)", role_name(role));
                    self.push(EffectKind::Unknown, Some(w.to_owned()), label, None, detail);
                    return;
                }
            }
        }
        // An editor of ed's kind takes `!COMMAND` for a file: it reads what the command prints
        // (`ed '!curl -s URL'`).
        if matches!(role, Role::Read | Role::ReadWrite)
            && prog.language.as_ref().is_some_and(|l| l.addresses)
            && let Some(command) = w.strip_prefix('!')
        {
            let detail = "operand: `!COMMAND`, whose output is read".to_owned();
            let command = Some(command.trim().to_owned());
            self.push(EffectKind::ExecString, command, label, None, detail);
            return;
        }
        let detail = format!("operand: {}", role_name(role));
        let path = |w: &str| join_dir(dir, w);
        let push = |run: &mut Self, k: EffectKind, v: Option<String>| {
            run.push(k, v, label, None, detail.clone())
        };
        match role {
            Role::Read | Role::ReadWrite | Role::Write | Role::Output if w == "-" => {}
            // A pathspec with magic (`:(top).env`, `:/.env`): the paths it names.
            Role::GitObject | Role::Read
                if label.starts_with("git")
                    && (w.starts_with(":(")
                        || w.starts_with([':']) && w[1..].starts_with(['/', '!', '^'])) =>
            {
                for p in git_pathspec(w) {
                    push(self, EffectKind::Read, Some(path(&p)));
                }
            }
            Role::Read => {
                push(self, EffectKind::Read, Some(path(w)));
                // `@FILE`: a response file, read for more arguments by compilers and the
                // tools built like them (`gcc @args`, `rustc @opts`, `javac @files`).
                if let Some(file) = w.strip_prefix('@').filter(|f| !f.is_empty()) {
                    push(self, EffectKind::Read, Some(path(file)));
                }
            }
            Role::Write | Role::Output => push(self, EffectKind::Write, Some(path(w))),
            Role::Commands => {
                self.commands(prog.language.as_ref(), Some(w), label, None, &detail);
            }
            Role::PlusCommands => match w.strip_prefix('+') {
                Some(cmd) => self.commands(prog.language.as_ref(), Some(cmd), label, None, &detail),
                None => {
                    push(self, EffectKind::Read, Some(path(w)));
                    push(self, EffectKind::Write, Some(path(w)));
                }
            },
            Role::ReadWrite => {
                push(self, EffectKind::Read, Some(path(w)));
                push(self, EffectKind::Write, Some(path(w)));
            }
            // A program that does something (`echo` only prints its words), or the arguments
            // of code it runs (`python3 tool.py .env`, `python3 -m base64 .env`): the code
            // may open them.
            Role::Data
                if (prog.syntax.any_option && prog.does_things())
                    || self
                        .out
                        .effects
                        .iter()
                        .any(|e| e.kind == EffectKind::RunsCode) =>
            {
                self.out.loose.push(w.to_owned());
                // Where the program's options changed its directory, the word may name a
                // file there too (`uv --directory DIR run cat FILE`).
                let there = path(w);
                if there != w {
                    self.out.loose.push(there);
                }
            }
            Role::Data | Role::Script | Role::Program | Role::Assign => {}
            Role::Page => {
                if w.contains('/') {
                    push(self, EffectKind::Read, Some(path(w)));
                }
            }
            // `REV:PATH` (`:N:PATH`, an index stage); not a URL (`https://...`), which is a
            // remote's name.
            Role::GitObject => {
                if let Some((rev, file)) = w.split_once(':')
                    && !file.is_empty()
                    && !file.starts_with("//")
                {
                    let file = match file.split_once(':') {
                        Some((stage, rest))
                            if rev.is_empty()
                                && stage.len() == 1
                                && stage.as_bytes()[0].is_ascii_digit() =>
                        {
                            rest
                        }
                        _ => file,
                    };
                    push(self, EffectKind::Read, Some(path(&git_clean_path(file))));
                } else if !w.starts_with('-') {
                    // Git takes a word that names no revision for a path whose history it
                    // reads (`git log -p .env`, without `--`). One in revision syntax
                    // (`HEAD~2`, `main^`, `@{u}`, `a..b`, `HEAD`, `@`) still meets the deny rules.
                    let revision = w.contains(['~', '^'])
                        || w.contains("@{")
                        || w.contains("..")
                        || w == "@"
                        || (w.ends_with("HEAD")
                            && w.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
                    if revision {
                        self.out.loose.push(path(w));
                    } else {
                        push(self, EffectKind::Read, Some(path(w)));
                    }
                }
            }
            Role::ExecString => push(self, EffectKind::ExecString, Some(w.to_owned())),
            Role::RunsCode => {
                push(self, EffectKind::RunsCode, Some(path(w)));
                if w != "-" {
                    push(self, EffectKind::Read, Some(path(w)));
                }
            }
            Role::ExecProgram => push(self, EffectKind::ExecProgram, Some(w.to_owned())),
            Role::System => push(self, EffectKind::System, Some(w.to_owned())),
            Role::Network => {
                push(self, EffectKind::Network, Some(w.to_owned()));
                // A `file:` URL reads the local file it names.
                match file_url_path(w) {
                    Some(Some(local)) => push(self, EffectKind::Read, Some(local)),
                    Some(None) => push(self, EffectKind::Unknown, Some(w.to_owned())),
                    None => {}
                }
                // git's `ext::` transport runs the rest of its address as a command.
                if let Some(cmd) = ext_command(w) {
                    push(self, EffectKind::ExecString, Some(cmd));
                }
            }
            Role::Unknown => push(self, EffectKind::Unknown, Some(w.to_owned())),
            Role::AwkInput => {
                if !is_assignment(w) && w != "-" {
                    push(self, EffectKind::Read, Some(path(w)))
                }
            }
            Role::LessFile => match w.strip_prefix('+') {
                Some(cmd) => match less_command(cmd) {
                    LessCmd::Inert => {}
                    LessCmd::Shell(s) => push(self, EffectKind::ExecString, Some(s)),
                    LessCmd::Unknown => push(self, EffectKind::Unknown, Some(w.to_owned())),
                },
                None => push(self, EffectKind::Read, Some(path(w))),
            },
            Role::Date => {
                if !w.starts_with('+') {
                    push(self, EffectKind::System, Some(w.to_owned()))
                }
            }
            Role::KeyValue => {
                let kinds = w
                    .split_once('=')
                    .and_then(|(k, v)| Some((prog.keys.get(k)?, v)));
                match kinds {
                    Some((kinds, v)) => {
                        for &k in kinds {
                            let v = if is_path_kind(k) {
                                path(v)
                            } else {
                                v.to_owned()
                            };
                            push(self, k, Some(v));
                        }
                    }
                    None => push(self, EffectKind::Unknown, Some(w.to_owned())),
                }
            }
            Role::AssignKeys => {
                // `NAME=V`, `NAME:=V`, `NAME::=V`, `NAME+=V`, `NAME?=V`, `NAME!=V`.
                if let Some((name, v)) = w.split_once('=')
                    && let Some(kinds) = prog
                        .keys
                        .get(name.trim_end_matches([':', '+', '?', '!']).trim())
                {
                    for &k in kinds {
                        // A program's bare name (`CC=clang`, `SHELL=bash`) is one found where
                        // every program is found: what runs is what a recipe naming it runs
                        // (deny rules still meet it among the line's possible commands). A
                        // path, or words, is code the line chose (`CC=./evil.sh`).
                        let bare_name = k == EffectKind::ExecString
                            && !v.is_empty()
                            && !v
                                .contains(['/', ' ', '\t', ';', '&', '|', '$', '`', '(', '<', '>']);
                        if !bare_name {
                            push(self, k, Some(v.to_owned()));
                        }
                    }
                }
            }
            Role::RemoteRead | Role::RemoteWrite => {
                let k = if role == Role::RemoteRead {
                    EffectKind::Read
                } else {
                    EffectKind::Write
                };
                if let Some(cmd) = ext_command(w) {
                    push(self, EffectKind::ExecString, Some(cmd));
                } else if let Some(local) = file_url_path(w) {
                    // A `file://` URL is the local repository it names.
                    match local {
                        Some(local) => push(self, k, Some(local)),
                        None => push(self, EffectKind::Unknown, Some(w.to_owned())),
                    }
                } else if is_remote_path(w) {
                    push(self, EffectKind::Network, Some(w.to_owned()))
                } else if w != "-" {
                    push(self, k, Some(path(w)))
                }
            }
            Role::ExecArgv
            | Role::ExecArgvOpen
            | Role::ExecStringJoined
            | Role::Remote
            | Role::ShellArgs => {}
        }
    }

    /// `find`: options, starting points, then an expression of primaries.
    fn find(&mut self, prog: &Program, words: &[String], chdir: Option<String>) {
        let label = prog.name.clone();
        let mut i = 0;
        // Leading options -H -L -P -D LIST -OLEVEL.
        while let Some(w) = words.get(i) {
            match w.as_str() {
                "-H" | "-L" | "-P" => i += 1,
                "-D" => i += 2,
                _ if w.starts_with("-O") && w.len() > 2 => i += 1,
                _ => break,
            }
        }
        // `-L` (whatever `-H`/`-P` follow it: the stricter reading) and the `-follow`
        // primary follow links as the walk meets them.
        if words[..i].iter().any(|w| w == "-L") || words[i..].iter().any(|w| w == "-follow") {
            self.out.follows_links = true;
        }
        let is_expr =
            |w: &str| (w.starts_with('-') && w.len() > 1) || matches!(w, "(" | ")" | "!" | ",");
        let mut starts = Vec::new();
        while let Some(w) = words.get(i) {
            if is_expr(w) {
                break;
            }
            starts.push(join_dir(&chdir, w));
            i += 1;
        }
        if starts.is_empty() {
            starts.push(join_dir(&chdir, "."));
        }
        for s in &starts {
            self.push(
                EffectKind::Read,
                Some(s.clone()),
                &label,
                None,
                "starting point: read".into(),
            );
        }
        while let Some(w) = words.get(i) {
            i += 1;
            if matches!(w.as_str(), "(" | ")" | "!" | ",") {
                continue;
            }
            let Some(opt) = prog.option(w) else {
                self.unknown(w, &label, "find primary not in the command database");
                continue;
            };
            let detail = format!(
                "{}: {}",
                opt.name(),
                opt.effects
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join("+")
            );
            match opt.arg {
                Arity::Command => {
                    let start = i;
                    let mut end = None;
                    let mut j = i;
                    while let Some(x) = words.get(j) {
                        if x == ";" || (x == "+" && j > start && words[j - 1] == "{}") {
                            end = Some(j);
                            break;
                        }
                        j += 1;
                    }
                    let Some(end) = end else {
                        self.unknown(w, &label, "find command without `;` or `+`");
                        return;
                    };
                    let mut e = Effect::new(
                        EffectKind::ExecArgv,
                        words.get(start).cloned(),
                        Source {
                            program: label.clone(),
                            option: Some(w.clone()),
                            detail: detail.clone(),
                        },
                    );
                    e.argv = words[start..end].to_vec();
                    e.argv_open = words[end] == "+";
                    self.out.effects.push(e);
                    i = end + 1;
                }
                Arity::None | Arity::Optional => {
                    for &k in &opt.effects {
                        if is_path_kind(k) {
                            for s in &starts {
                                self.push(k, Some(s.clone()), &label, Some(w), detail.clone());
                            }
                        } else {
                            self.push(k, None, &label, Some(w), detail.clone());
                        }
                    }
                }
                Arity::Required => {
                    let Some(v) = words.get(i) else {
                        self.unknown(w, &label, "find primary without its value");
                        return;
                    };
                    let v = words.get(i + opt.effect_on - 1).unwrap_or(v).clone();
                    i += opt.count;
                    self.apply(opt, w, Some(v), &label, &chdir);
                }
            }
        }
    }

    /// `tar`: the archive and the operands mean what the mode says.
    fn tar(&mut self, st: &Parsed<'_>, ops: &[(String, Option<String>)], label: &str) {
        const MODES: [&str; 5] = ["create", "extract", "list", "append", "update"];
        let mode = st
            .marks
            .iter()
            .rev()
            .find(|(m, _)| MODES.contains(&m.as_str()))
            .map(|(m, _)| m.as_str());
        let archives = st.mark_values("archive");
        let remote_ok = !st.mark("force-local");
        for a in &archives {
            if a == "-" {
                continue;
            }
            if remote_ok && is_remote_path(a) {
                self.push(
                    EffectKind::Network,
                    Some(a.clone()),
                    label,
                    Some("-f"),
                    "remote archive (rsh)".into(),
                );
                self.push(
                    EffectKind::ExecProgram,
                    Some("rsh".into()),
                    label,
                    Some("-f"),
                    "remote archive (rsh)".into(),
                );
                continue;
            }
            let kinds: &[EffectKind] = match mode {
                Some("create") => &[EffectKind::Write],
                Some("extract") | Some("list") => &[EffectKind::Read],
                Some(_) => &[EffectKind::Read, EffectKind::Write],
                None => &[EffectKind::Unknown],
            };
            for &k in kinds {
                self.push(
                    k,
                    Some(a.clone()),
                    label,
                    Some("-f"),
                    format!("archive: {k}"),
                );
            }
        }
        match mode {
            Some("create") | Some("append") | Some("update") => {
                // A directory among the files archived is archived with all it holds
                // (`--no-recursion` holds only for the names after it, which this reading
                // does not place: the stricter reading).
                self.out.recursive = true;
                for (w, dir) in ops {
                    self.push(
                        EffectKind::Read,
                        Some(join_dir(dir, w)),
                        label,
                        None,
                        "operand: read".into(),
                    );
                    if st.mark("remove-files") {
                        self.push(
                            EffectKind::Write,
                            Some(join_dir(dir, w)),
                            label,
                            Some("--remove-files"),
                            "operand: removed".into(),
                        );
                    }
                }
            }
            Some("extract") => {
                if st.mark("to-stdout") {
                } else if st.mark("absolute-names") {
                    self.push(
                        EffectKind::Write,
                        None,
                        label,
                        Some("-P"),
                        "extracts anywhere".into(),
                    );
                } else {
                    let dir = st.chdir.clone().unwrap_or_else(|| ".".into());
                    // What the archive holds is written wherever its names say (a member
                    // named may be a directory, or a pattern).
                    self.out.writes_below = true;
                    // The members named are written where they are extracted.
                    for (w, _) in ops {
                        self.push(
                            EffectKind::Write,
                            Some(join_dir(&Some(dir.clone()), w)),
                            label,
                            None,
                            "member extracted".into(),
                        );
                    }
                    self.push(
                        EffectKind::Write,
                        Some(dir),
                        label,
                        None,
                        "extracts into".into(),
                    );
                }
            }
            Some(_) => {}
            None => {
                if !ops.is_empty() {
                    self.push(
                        EffectKind::Unknown,
                        None,
                        label,
                        None,
                        "tar without a mode".into(),
                    );
                }
            }
        }
    }

    /// `git config`: reads unless it sets; settings of keys that run programs run them.
    fn git_config(&mut self, st: &Parsed<'_>, ops: &[(String, Option<String>)], label: &str) {
        let words: Vec<&str> = ops.iter().map(|(w, _)| w.as_str()).collect();
        // `--blob REV:PATH`: the configuration is PATH as REV has it.
        for blob in st.mark_values("blob") {
            if let Some((_, path)) = blob.split_once(':')
                && !path.is_empty()
            {
                self.push(
                    EffectKind::Read,
                    Some(git_clean_path(path)),
                    label,
                    Some("--blob"),
                    "reads the configuration a commit's file holds".into(),
                );
            }
        }
        let file = st.mark_values("file").pop();
        let (write, key, value): (bool, Option<&str>, Option<&str>) = match words.as_slice() {
            ["get" | "list", ..] => (false, None, None),
            ["set", rest @ ..] => (true, rest.first().copied(), rest.get(1).copied()),
            ["unset" | "rename-section" | "remove-section" | "edit", ..] => (true, None, None),
            _ if st.mark("set") => (true, words.first().copied(), words.get(1).copied()),
            _ if st.mark("get") => (false, None, None),
            [_] | [] => (false, None, None),
            [k, v, ..] => (true, Some(*k), Some(*v)),
        };
        // Without a file option, `git config` writes the repository's own configuration.
        let target = file
            .clone()
            .or_else(|| write.then(|| ".git/config".to_owned()));
        if write {
            self.push(
                EffectKind::Write,
                target,
                label,
                None,
                "writes git configuration".into(),
            );
            if let Some(k) = key {
                self.config_effect("git", k, value.map(str::to_owned), label, None);
            }
            if words.first() == Some(&"edit") {
                self.push(
                    EffectKind::ExecProgram,
                    None,
                    label,
                    None,
                    "runs the editor".into(),
                );
            }
        } else if let Some(f) = target
            && f != "-"
        {
            self.push(
                EffectKind::Read,
                Some(f),
                label,
                None,
                "reads git configuration".into(),
            );
        }
    }
}

fn has_prefix(p: &Program, dashed: &str) -> bool {
    p.index
        .keys()
        .any(|n| n.starts_with("--") && n.starts_with(dashed))
}

fn is_path_kind(k: EffectKind) -> bool {
    matches!(
        k,
        EffectKind::Read | EffectKind::Write | EffectKind::RunsCode
    )
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Read => "read",
        Role::Write => "write",
        Role::Output => "output",
        Role::Commands => "commands",
        Role::ShellArgs => "shell-args",
        Role::PlusCommands => "plus-commands",
        Role::ReadWrite => "read-write",
        Role::Data => "data",
        Role::Script => "script",
        Role::Program => "program",
        Role::ExecArgv => "exec-argv",
        Role::ExecArgvOpen => "exec-argv-open",
        Role::ExecString => "exec-string",
        Role::ExecStringJoined => "exec-string-joined",
        Role::RunsCode => "runs-code",
        Role::ExecProgram => "exec-program",
        Role::System => "system",
        Role::Network => "network",
        Role::Remote => "remote",
        Role::Unknown => "unknown",
        Role::Assign => "assign",
        Role::AwkInput => "awk-input",
        Role::LessFile => "less-file",
        Role::Date => "date",
        Role::KeyValue => "key-value",
        Role::AssignKeys => "assign-keys",
        Role::RemoteRead => "remote-read",
        Role::RemoteWrite => "remote-write",
        Role::GitObject => "git-object",
        Role::Page => "page",
    }
}

/// The slot taking the rest of the words, and how many operands come before it.
fn rest_slot(spec: &[Slot]) -> Option<(Role, usize)> {
    let last = spec.last()?;
    let role = *last.roles.iter().find(|r| r.takes_rest())?;
    let before = spec[..spec.len() - 1]
        .iter()
        .filter(|s| !s.roles.contains(&Role::Assign))
        .count();
    Some((role, before))
}

/// The position of the assignment slot.
fn assign_slot(spec: &[Slot]) -> Option<usize> {
    spec.iter().position(|s| s.roles.contains(&Role::Assign))
}

/// An operand with the directory in force when it was seen.
type Operand = (String, Option<String>);

/// Assign operands to slots: slots before the `...` one from the front, after it from the
/// back, the `...` one takes the middle; with no `...` slot, extra operands get `None`.
fn assign<'s, 'w>(spec: &'s [Slot], ops: &'w [Operand]) -> Vec<(Option<&'s Slot>, &'w Operand)> {
    let spec: Vec<&Slot> = spec
        .iter()
        .filter(|s| !s.roles.contains(&Role::Assign) && !s.roles.iter().any(|r| r.takes_rest()))
        .collect();
    let n = ops.len();
    let mut out = Vec::with_capacity(n);
    match spec.iter().position(|s| s.repeat == Repeat::Many) {
        None => {
            for (k, op) in ops.iter().enumerate() {
                out.push((spec.get(k).copied(), op));
            }
        }
        Some(m) => {
            let front = &spec[..m];
            let back = &spec[m + 1..];
            let nf = front.len().min(n);
            let nb = back.len().min(n - nf);
            for (k, op) in ops.iter().enumerate() {
                let slot = if k < nf {
                    front[k]
                } else if k >= n - nb {
                    back[k - (n - nb)]
                } else {
                    spec[m]
                };
                out.push((Some(slot), op));
            }
        }
    }
    out
}

enum LessCmd {
    Inert,
    Shell(String),
    Unknown,
}

/// A `less +COMMAND`: only a line number, `G`, `g`, `F`, or a search are inert; `!CMD` runs a
/// shell command; anything else (it is typed as keys) is unknown.
fn less_command(cmd: &str) -> LessCmd {
    let cmd = cmd.strip_prefix('+').unwrap_or(cmd);
    if cmd.contains(['\n', '\r']) {
        return LessCmd::Unknown;
    }
    let digits = cmd.trim_start_matches(|c: char| c.is_ascii_digit());
    if matches!(digits, "" | "G" | "g" | "F" | "p" | "%") {
        return LessCmd::Inert;
    }
    if cmd.starts_with('/') || cmd.starts_with('?') {
        return LessCmd::Inert;
    }
    if let Some(s) = cmd.strip_prefix('!') {
        return LessCmd::Shell(s.to_owned());
    }
    LessCmd::Unknown
}

/// `tar cvf a.tar x` (the first word without a dash) means `-c -v -f a.tar x`: each letter
/// that takes a value takes the next word.
fn tar_traditional(prog: &Program, words: &[String]) -> Vec<String> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    if first.starts_with('-') || first.is_empty() {
        return words.to_vec();
    }
    let mut out = Vec::new();
    let mut rest = words[1..].iter();
    for c in first.chars() {
        let name = format!("-{c}");
        out.push(name.clone());
        if let Some(o) = prog.option(&name)
            && o.arg == Arity::Required
            && let Some(v) = rest.next()
        {
            out.push(v.clone());
        }
    }
    out.extend(rest.cloned());
    out
}
