//! Word expansion as bash performs it, as far as it can be known before running: quote and
//! backslash removal, ANSI-C strings, brace expansion, tilde, parameters whose value is known
//! (assigned earlier on the line, or given by the environment), arithmetic on literals, word
//! splitting of unquoted expansions, and pathname expansion against the file system.
//!
//! Every word expands to fields and a certainty. When something cannot be known (a variable of
//! the environment, a command substitution, `${x@P}`), the word is *uncertain*: its fields are
//! then bash's result in a fresh shell with the unknown parts empty, good for deny and ask
//! matching (a deny must see `rm` in `rm${IFS}-rf`), never enough for an allow.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use brush_parser::ParserOptions;
use brush_parser::word::{
    self, Parameter, ParameterExpr, ParameterTestType, SpecialParameter, SubstringMatchKind,
    TildeExpr, WordPiece, WordPieceWithSource,
};

/// Bash's default `IFS`.
const DEFAULT_IFS: &str = " \t\n";
/// Most fields one word may expand to (brace sequences can be huge).
const MAX_FIELDS: usize = 4096;
/// Most directory entries pathname expansion reads for one word.
const MAX_GLOB_ENTRIES: usize = 20_000;

/// A shell variable's value as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// Set to this value.
    Known(String),
    /// Set (or perhaps set) to a value that cannot be known.
    Unknown,
}

/// What the expansion knows of the shell it models.
#[derive(Debug, Clone)]
pub struct Vars {
    /// Variables assigned on the line so far (and the few the environment is known to hold).
    vars: HashMap<String, Var>,
    /// Name references made on the line (`declare -n r=PATH`): the variable each stands for.
    refs: HashMap<String, String>,
    /// The home directory (`~`, `$HOME`).
    pub home: PathBuf,
    /// The working directory, when known (`$PWD`, relative globs).
    pub cwd: Option<PathBuf>,
    /// The previous working directory, when known (`$OLDPWD`, `~-`).
    pub oldpwd: Option<PathBuf>,
    /// Expand globs against the file system.
    pub glob_fs: bool,
    /// The shell options that change pathname expansion, as the line set them (`shopt -s`).
    pub glob_opts: GlobOpts,
    /// `$0` and the positional parameters, when known: a shell started with `-c SCRIPT ARG0
    /// ARG1 ...` of known words.
    pub positional: Option<(String, Vec<String>)>,
}

/// The shell options that change how patterns match file names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobOpts {
    /// `dotglob` (also in effect while `GLOBIGNORE` is set and not empty): `*` matches a
    /// leading `.`.
    pub dotglob: bool,
    /// `extglob`: `@(a|b)`, `?(..)`, `*(..)`, `+(..)`, `!(..)`.
    pub extglob: bool,
    /// `nocaseglob`: names match without regard to case.
    pub nocaseglob: bool,
}

impl Vars {
    /// A fresh shell in `cwd` with home `home`.
    pub fn new(cwd: Option<PathBuf>, home: PathBuf) -> Self {
        Self {
            vars: HashMap::new(),
            refs: HashMap::new(),
            home,
            cwd,
            oldpwd: None,
            glob_fs: true,
            glob_opts: GlobOpts::default(),
            positional: None,
        }
    }

    /// A positional or special parameter whose value the shell's arguments give: `$0`, `$1`
    /// ..., `$#`, and `$*` and `$@` where they give the same fields however they are quoted
    /// (one argument, or `$*` with the default `IFS`). `None` when not known.
    fn positional(&self, p: &Parameter) -> Option<String> {
        let (zero, args) = self.positional.as_ref()?;
        match p {
            Parameter::Positional(0) => Some(zero.clone()),
            Parameter::Positional(n) => {
                Some(args.get(*n as usize - 1).cloned().unwrap_or_default())
            }
            Parameter::Special(SpecialParameter::ShellName) => Some(zero.clone()),
            Parameter::Special(SpecialParameter::PositionalParameterCount) => {
                Some(args.len().to_string())
            }
            Parameter::Special(SpecialParameter::AllPositionalParameters { .. })
                if args.len() == 1 =>
            {
                Some(args[0].clone())
            }
            // `$*` joins them with the first character of `IFS` (a space by default), which
            // splitting then separates as it would each argument.
            Parameter::Special(SpecialParameter::AllPositionalParameters { concatenate: true })
                if !self.is_set("IFS") =>
            {
                Some(args.join(" "))
            }
            _ => None,
        }
    }

    /// The options in force for pathname expansion now (`GLOBIGNORE` counts as `dotglob`).
    pub fn effective_glob_opts(&self) -> GlobOpts {
        let mut o = self.glob_opts;
        if self.is_set("GLOBIGNORE") && self.get("GLOBIGNORE") != Var::Known(String::new()) {
            o.dotglob = true;
        }
        o
    }

    /// Set a variable.
    pub fn set(&mut self, name: &str, value: Var) {
        let name = self.referred(name);
        self.vars.insert(name, value);
    }

    /// Make `name` a reference to the variable `target` (`declare -n name=target`): what is
    /// assigned to or read from `name` is `target`'s.
    pub fn name_ref(&mut self, name: &str, target: &str) {
        self.refs.insert(name.to_owned(), target.to_owned());
    }

    /// The variable `name` stands for, through name references (a few levels, as bash
    /// allows).
    fn referred(&self, name: &str) -> String {
        let mut at = name.to_owned();
        for _ in 0..8 {
            match self.refs.get(&at) {
                Some(t) => at = t.clone(),
                None => break,
            }
        }
        at
    }

    /// Was the variable assigned on the line (to anything, known or not)?
    pub fn is_set(&self, name: &str) -> bool {
        self.vars.contains_key(&self.referred(name))
    }

    /// Forget a variable (`unset`).
    pub fn unset(&mut self, name: &str) {
        let name = self.referred(name);
        self.vars.insert(name, Var::Known(String::new()));
    }

    /// A variable's value: `Some(Known)` when known, `Some(Unknown)` when it cannot be known.
    pub fn get(&self, name: &str) -> Var {
        let referred = self.referred(name);
        let name = referred.as_str();
        if let Some(v) = self.vars.get(name) {
            return v.clone();
        }
        match name {
            "HOME" => Var::Known(self.home.display().to_string()),
            "PWD" => self
                .cwd
                .as_ref()
                .map_or(Var::Unknown, |c| Var::Known(c.display().to_string())),
            "OLDPWD" => self
                .oldpwd
                .as_ref()
                .map_or(Var::Unknown, |c| Var::Known(c.display().to_string())),
            "IFS" => Var::Known(DEFAULT_IFS.to_owned()),
            _ => Var::Unknown,
        }
    }

    fn ifs(&self) -> Option<String> {
        match self.get("IFS") {
            Var::Known(v) => Some(v),
            Var::Unknown => None,
        }
    }
}

/// The result of expanding one word.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expanded {
    /// The fields: exactly bash's when `certain`, otherwise bash's in a fresh shell with every
    /// unknown part empty.
    pub fields: Vec<String>,
    /// Every part of the word was known.
    pub certain: bool,
    /// The commands of `$(...)` and backquote substitutions in the word, in order.
    pub substitutions: Vec<String>,
    /// Some field came from pathname expansion against the file system.
    pub globbed: bool,
    /// Why the word is uncertain (empty when certain).
    pub unknown: Vec<String>,
}

impl Expanded {
    /// The single field, when the word expands to exactly one.
    pub fn single(&self) -> Option<&str> {
        match self.fields.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// One character of a word on its way through expansion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ch {
    c: char,
    /// Quoted (or escaped): no brace, split or pathname expansion.
    quoted: bool,
    /// Comes from an expansion (split by IFS when not quoted).
    expanded: bool,
}

/// A part of a word before brace expansion.
#[derive(Debug, Clone)]
enum Tok {
    Ch(Ch),
    /// An expansion, expanded later (after brace expansion).
    Atom(WordPiece, bool),
}

/// How a word is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An argument of a simple command: all expansions, splitting, globbing.
    Argument,
    /// The value of an assignment, a redirect target or a `[[ ]]` operand: no splitting, no
    /// brace expansion, no globbing (bash's rules for these places).
    NoSplit,
    /// A heredoc body: only parameters, substitutions and arithmetic; quotes are literal.
    Heredoc,
}

/// Expand one word as bash would.
pub fn expand(raw: &str, vars: &Vars, mode: Mode) -> Expanded {
    let joined;
    let raw = if raw.contains("\\\n") && mode != Mode::Heredoc {
        joined = remove_continuations(raw);
        joined.as_str()
    } else {
        raw
    };
    let options = ParserOptions::default();
    // The word parser is guarded like the line parser: a panic is a word it cannot read.
    let pieces = std::panic::catch_unwind(|| match mode {
        Mode::Heredoc => word::parse_heredoc(raw, &options),
        _ => word::parse(raw, &options),
    });
    let mut out = Expanded {
        certain: true,
        ..Expanded::default()
    };
    let pieces = match pieces {
        Ok(Ok(p)) => p,
        Err(_) => {
            out.certain = false;
            out.unknown
                .push("the word parser failed on the word".to_owned());
            out.fields.push(raw.to_owned());
            return out;
        }
        Ok(Err(e)) => {
            out.certain = false;
            out.unknown.push(format!("the word does not parse: {e}"));
            out.fields.push(raw.to_owned());
            return out;
        }
    };
    let mut toks = Vec::new();
    flatten(&pieces, false, mode == Mode::Heredoc, &mut toks);
    let alternatives = if mode == Mode::Argument {
        brace_expand(&toks)
    } else {
        vec![toks]
    };
    for (n, alt) in alternatives.iter().enumerate() {
        if n >= MAX_FIELDS {
            out.certain = false;
            out.unknown.push("too many fields".into());
            break;
        }
        let chars = expand_atoms(alt, vars, mode, n == 0, &mut out);
        let quoted_part = alt.iter().any(|t| match t {
            Tok::Ch(c) => c.quoted,
            Tok::Atom(_, q) => *q,
        });
        let fields = if mode == Mode::Argument {
            if chars.is_empty() && !quoted_part {
                // Unquoted expansions that produced nothing: the word disappears.
                continue;
            }
            split_fields(&chars, vars, &mut out)
        } else {
            vec![chars]
        };
        for f in fields {
            let extglob = vars.glob_opts.extglob && has_extglob(&f);
            if mode == Mode::Argument
                && (extglob || f.iter().any(|c| !c.quoted && is_glob_char(c.c)))
            {
                let text: String = f.iter().map(|c| c.c).collect();
                match glob(&f, vars) {
                    Some(mut matches) if !matches.is_empty() => {
                        matches.sort();
                        out.globbed = true;
                        out.fields.extend(matches);
                        continue;
                    }
                    // Nothing matches: bash passes the pattern as it is (the caller checks it
                    // as a pattern against deny rules: files may appear before it runs).
                    Some(_) => out.fields.push(text),
                    None => {
                        out.certain = false;
                        out.unknown
                            .push(format!("`{text}` is a pattern of unknown files"));
                        out.fields.push(text);
                    }
                }
            } else {
                out.fields.push(f.iter().map(|c| c.c).collect());
            }
        }
    }
    out
}

/// Remove backslash-newline pairs outside single quotes: bash joins the lines before it reads
/// the word.
fn remove_continuations(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    let mut single = false;
    let mut double = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(&n) => {
                    out.push(c);
                    out.push(n);
                    chars.next();
                    continue;
                }
                None => {}
            },
            _ => {}
        }
        out.push(c);
    }
    out
}

fn is_glob_char(c: char) -> bool {
    matches!(c, '*' | '?' | '[')
}

/// Pieces to characters and atoms, with their quoting.
fn flatten(pieces: &[WordPieceWithSource], in_dq: bool, heredoc: bool, out: &mut Vec<Tok>) {
    let lit = |s: &str, quoted: bool, out: &mut Vec<Tok>| {
        out.extend(s.chars().map(|c| {
            Tok::Ch(Ch {
                c,
                quoted,
                expanded: false,
            })
        }))
    };
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) => lit(t, in_dq || heredoc, out),
            WordPiece::SingleQuotedText(t) if t.is_empty() => {
                out.push(Tok::Atom(p.piece.clone(), true))
            }
            WordPiece::SingleQuotedText(t) => lit(t, true, out),
            WordPiece::AnsiCQuotedText(t) => match decode_ansi_c(t) {
                Some(d) => lit(&d, true, out),
                None => out.push(Tok::Atom(p.piece.clone(), true)),
            },
            WordPiece::EscapeSequence(e) => {
                let mut cs = e.chars();
                let _backslash = cs.next();
                let rest: String = cs.collect();
                let first = rest.chars().next();
                // Inside double quotes (and heredocs) a backslash escapes only `$`, `` ` ``,
                // `"`, `\` and newline; before anything else it stays.
                let special = |c: char| {
                    matches!(c, '$' | '`' | '\\' | '\n') || (c == '"' && in_dq && !heredoc)
                };
                if (in_dq || heredoc) && !first.is_some_and(special) {
                    lit(e, true, out);
                } else if first == Some('\n') {
                    // A line continuation: nothing.
                } else {
                    lit(&rest, true, out);
                }
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                if inner.is_empty() {
                    // `""` is an empty quoted string: it keeps an empty field alive.
                    out.push(Tok::Atom(WordPiece::SingleQuotedText(String::new()), true));
                }
                flatten(inner, true, heredoc, out)
            }
            other => out.push(Tok::Atom(other.clone(), in_dq || heredoc)),
        }
    }
}

/// Bash's brace expansion over unquoted `{`, `,` and `}`.
fn brace_expand(toks: &[Tok]) -> Vec<Vec<Tok>> {
    let mut results = Vec::new();
    brace_into(toks.to_vec(), &mut results, 0);
    results
}

fn unquoted(t: &Tok, c: char) -> bool {
    matches!(t, Tok::Ch(ch) if ch.c == c && !ch.quoted)
}

fn brace_into(toks: Vec<Tok>, out: &mut Vec<Vec<Tok>>, depth: usize) {
    if out.len() >= MAX_FIELDS || depth > 64 {
        out.push(toks);
        return;
    }
    let mut start = 0;
    while let Some(open) = (start..toks.len()).find(|&i| unquoted(&toks[i], '{')) {
        // `${` is an atom already; a `{` right after an unquoted `$` is not a brace.
        if let Some(close) = matching_brace(&toks, open) {
            let inner = &toks[open + 1..close];
            let alternatives = split_commas(inner).or_else(|| sequence(inner));
            if let Some(alts) = alternatives {
                for alt in alts {
                    let mut w = toks[..open].to_vec();
                    w.extend(alt);
                    w.extend_from_slice(&toks[close + 1..]);
                    brace_into(w, out, depth + 1);
                }
                return;
            }
        }
        start = open + 1;
    }
    out.push(toks);
}

fn matching_brace(toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if unquoted(t, '{') {
            depth += 1;
        } else if unquoted(t, '}') {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The alternatives of `a,b,c` (top-level commas), or `None` without a comma.
fn split_commas(inner: &[Tok]) -> Option<Vec<Vec<Tok>>> {
    let mut parts = vec![Vec::new()];
    let mut depth = 0usize;
    let mut commas = 0;
    for t in inner {
        if unquoted(t, '{') {
            depth += 1;
        } else if unquoted(t, '}') {
            depth = depth.saturating_sub(1);
        } else if unquoted(t, ',') && depth == 0 {
            commas += 1;
            parts.push(Vec::new());
            continue;
        }
        if let Some(last) = parts.last_mut() {
            last.push(t.clone());
        }
    }
    (commas > 0).then_some(parts)
}

/// `{1..5}`, `{01..10..2}`, `{a..e}`.
fn sequence(inner: &[Tok]) -> Option<Vec<Vec<Tok>>> {
    let text: Option<String> = inner
        .iter()
        .map(|t| match t {
            Tok::Ch(c) if !c.quoted => Some(c.c),
            _ => None,
        })
        .collect();
    let text = text?;
    let parts: Vec<&str> = text.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let step = step.unsigned_abs().max(1) as usize;
    let mk = |s: String| -> Vec<Tok> {
        s.chars()
            .map(|c| {
                Tok::Ch(Ch {
                    c,
                    quoted: false,
                    expanded: false,
                })
            })
            .collect()
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let count = (a - b).unsigned_abs() as usize / step + 1;
        if count > MAX_FIELDS {
            return None;
        }
        let width = [parts[0], parts[1]]
            .iter()
            .filter(|p| {
                let d = p.trim_start_matches('-');
                d.len() > 1 && d.starts_with('0')
            })
            .map(|p| p.len())
            .max();
        let seq: Vec<i64> = if a <= b {
            (a..=b).step_by(step).collect()
        } else {
            (b..=a).rev().step_by(step).collect()
        };
        return Some(
            seq.into_iter()
                .map(|n| {
                    mk(match width {
                        Some(w) if n < 0 => format!("-{:0w$}", -n, w = w - 1),
                        Some(w) => format!("{n:0w$}"),
                        None => n.to_string(),
                    })
                })
                .collect(),
        );
    }
    let (a, b) = (single_char(parts[0])?, single_char(parts[1])?);
    if !(a.is_ascii_alphabetic() && b.is_ascii_alphabetic()) {
        return None;
    }
    let (lo, hi) = (a.min(b) as u8, a.max(b) as u8);
    let mut seq: Vec<u8> = (lo..=hi).step_by(step).collect();
    if a > b {
        seq = (lo..=hi).rev().step_by(step).collect();
    }
    Some(
        seq.into_iter()
            .map(|c| mk((c as char).to_string()))
            .collect(),
    )
}

fn single_char(s: &str) -> Option<char> {
    let mut cs = s.chars();
    let c = cs.next()?;
    cs.next().is_none().then_some(c)
}

/// Replace the atoms by their values.
fn expand_atoms(toks: &[Tok], vars: &Vars, mode: Mode, first: bool, out: &mut Expanded) -> Vec<Ch> {
    let mut chars = Vec::new();
    let push = |s: &str, quoted: bool, chars: &mut Vec<Ch>| {
        chars.extend(s.chars().map(|c| Ch {
            c,
            quoted,
            expanded: true,
        }))
    };
    // A tilde at the start of the word, after brace expansion (`{~,x}` gives `~`).
    let mut toks = toks;
    if mode == Mode::Argument
        && let Some(Tok::Ch(Ch {
            c: '~',
            quoted: false,
            ..
        })) = toks.first()
    {
        let end = toks
            .iter()
            .position(|t| matches!(t, Tok::Ch(c) if c.c == '/'))
            .unwrap_or(toks.len());
        if end == 1 {
            push(&vars.home.display().to_string(), true, &mut chars);
            toks = &toks[1..];
        }
    }
    let tildes = if mode == Mode::Argument {
        assignment_tildes(toks)
    } else {
        Vec::new()
    };
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Ch(_) if tildes.contains(&i) => {
                push(&vars.home.display().to_string(), true, &mut chars)
            }
            Tok::Ch(c) => chars.push(*c),
            Tok::Atom(piece, quoted) => {
                let value = match unquoted_all_arguments(piece, *quoted, vars) {
                    Some(v) => Some(v),
                    None => atom_value(piece, vars, out, first),
                };
                match value {
                    Some(v) => push(&v, *quoted, &mut chars),
                    None => {
                        out.certain = false;
                    }
                }
            }
        }
    }
    chars
}

/// Unquoted `$@` of known positional parameters, with the default `IFS`: the arguments joined
/// by spaces, which splitting separates again as bash does each one. (Quoted, `"$@"` is one
/// field per argument, which a single value cannot say: see [`Vars::positional`].)
fn unquoted_all_arguments(piece: &WordPiece, quoted: bool, vars: &Vars) -> Option<String> {
    let WordPiece::ParameterExpansion(ParameterExpr::Parameter {
        parameter: Parameter::Special(SpecialParameter::AllPositionalParameters { .. }),
        indirect: false,
    }) = piece
    else {
        return None;
    };
    if quoted || vars.is_set("IFS") {
        return None;
    }
    vars.positional.as_ref().map(|(_, args)| args.join(" "))
}

/// In a word shaped like an assignment (`name=...`, as an argument too: bash outside POSIX
/// mode), the tildes that start a tilde-prefix: right after the first `=` and after each `:`,
/// when followed by `/`, `:` or the end.
fn assignment_tildes(toks: &[Tok]) -> Vec<usize> {
    let unq = |t: &Tok| match t {
        Tok::Ch(c) if !c.quoted => Some(c.c),
        _ => None,
    };
    let Some(eq) = toks.iter().position(|t| unq(t) == Some('=')) else {
        return Vec::new();
    };
    let name: Option<String> = toks[..eq].iter().map(unq).collect();
    let is_name = name.is_some_and(|n| {
        n.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if !is_name {
        return Vec::new();
    }
    let mut out = Vec::new();
    for i in eq + 1..toks.len() {
        let starts = i == eq + 1 || unq(&toks[i - 1]) == Some(':');
        let ends = toks
            .get(i + 1)
            .is_none_or(|n| matches!(unq(n), Some('/' | ':')));
        if starts && ends && unq(&toks[i]) == Some('~') {
            out.push(i);
        }
    }
    out
}

/// The value of one expansion, `None` when it cannot be known (the reason and any
/// substitution recorded in `out`).
fn atom_value(piece: &WordPiece, vars: &Vars, out: &mut Expanded, first: bool) -> Option<String> {
    match piece {
        WordPiece::SingleQuotedText(t) => Some(t.clone()),
        WordPiece::TildeExpansion(t) => match t {
            TildeExpr::Home => Some(vars.home.display().to_string()),
            TildeExpr::WorkingDir => vars.cwd.as_ref().map(|c| c.display().to_string()),
            TildeExpr::OldWorkingDir => vars.oldpwd.as_ref().map(|c| c.display().to_string()),
            _ => {
                out.unknown
                    .push("a tilde expression naming another directory".into());
                None
            }
        },
        WordPiece::CommandSubstitution(inner) | WordPiece::BackquotedCommandSubstitution(inner) => {
            if first {
                out.substitutions.push(inner.clone());
            }
            if let Some(v) = echo_output(inner, vars) {
                return Some(v);
            }
            out.unknown.push("a command substitution".into());
            None
        }
        WordPiece::ArithmeticExpression(e) => match arithmetic(&e.value, vars) {
            Some(n) => Some(n.to_string()),
            None => {
                // `$(( ))` can hold substitutions too.
                if first {
                    collect_substitutions(&e.value, out);
                }
                out.unknown.push("an arithmetic expression".into());
                None
            }
        },
        WordPiece::ParameterExpansion(p) => parameter(p, vars, out, first),
        WordPiece::AnsiCQuotedText(_) => {
            out.unknown
                .push("an ANSI-C escape that is not modelled".into());
            None
        }
        other => {
            out.unknown
                .push(format!("an expansion that is not modelled: {other:?}"));
            None
        }
    }
}

/// What `$(echo WORDS)` prints, when it is exactly that with known words and no options: its
/// fields joined by spaces (the trailing newline is removed by the substitution).
fn echo_output(inner: &str, vars: &Vars) -> Option<String> {
    let rest = inner.trim().strip_prefix("echo ")?;
    if rest.contains([';', '&', '|', '<', '>', '\n', '(', ')', '`']) || rest.contains("$(") {
        return None;
    }
    let mut fields = Vec::new();
    for w in rest.split_whitespace() {
        let e = expand(w, vars, Mode::Argument);
        if !e.certain || !e.substitutions.is_empty() {
            return None;
        }
        fields.extend(e.fields);
    }
    if fields.first().is_some_and(|f| f.starts_with('-')) {
        return None;
    }
    Some(fields.join(" "))
}

/// Substitutions written inside an arithmetic expression or a parameter's operand.
fn collect_substitutions(text: &str, out: &mut Expanded) {
    if let Ok(pieces) = word::parse(text, &ParserOptions::default()) {
        let mut toks = Vec::new();
        flatten(&pieces, true, false, &mut toks);
        for t in toks {
            if let Tok::Atom(
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner),
                _,
            ) = t
            {
                out.substitutions.push(inner);
            }
        }
    } else if text.contains("$(") || text.contains('`') {
        out.unknown
            .push("an operand with a substitution that does not parse".into());
    }
}

fn parameter(p: &ParameterExpr, vars: &Vars, out: &mut Expanded, first: bool) -> Option<String> {
    let value_of = |param: &Parameter, indirect: bool, out: &mut Expanded| -> Option<Var> {
        if indirect {
            out.unknown.push("an indirect expansion".into());
            return None;
        }
        if let Some(v) = vars.positional(param) {
            return Some(Var::Known(v));
        }
        match param {
            Parameter::Named(n) => Some(vars.get(n)),
            Parameter::Special(SpecialParameter::ShellName) => Some(Var::Unknown),
            _ => Some(Var::Unknown),
        }
    };
    // An array subscript is arithmetic: substitutions in it run.
    if first
        && let ParameterExpr::Parameter { parameter, .. }
        | ParameterExpr::UseDefaultValues { parameter, .. } = p
        && let Some(index) = subscript(parameter)
    {
        collect_substitutions(index, out);
    }
    match p {
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => match value_of(parameter, *indirect, out)? {
            Var::Known(v) => Some(v),
            Var::Unknown => {
                out.unknown
                    .push(format!("the value of ${}", param_name(parameter)));
                None
            }
        },
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value,
        } => {
            let v = value_of(parameter, *indirect, out)?;
            let default = |out: &mut Expanded| {
                let d = default_value.as_deref().unwrap_or("");
                let e = expand(d, vars, Mode::NoSplit);
                if first {
                    out.substitutions.extend(e.substitutions.iter().cloned());
                }
                e.certain.then(|| e.fields.concat())
            };
            match v {
                Var::Known(s) if !s.is_empty() || matches!(test_type, ParameterTestType::Unset) => {
                    Some(s)
                }
                Var::Known(_) => {
                    let d = default(out);
                    if d.is_none() {
                        out.unknown.push("a default value".into());
                    }
                    d
                }
                Var::Unknown => {
                    if first {
                        let d = default_value.as_deref().unwrap_or("");
                        collect_substitutions(d, out);
                    }
                    out.unknown
                        .push(format!("the value of ${}", param_name(parameter)));
                    None
                }
            }
        }
        other => {
            // Operands of other forms may still hold substitutions that run.
            if first {
                for text in parameter_operands(other) {
                    collect_substitutions(text, out);
                }
            }
            if let Some(v) = transformed(other, vars) {
                return Some(v);
            }
            out.unknown.push("a parameter transformation".into());
            None
        }
    }
}

/// What bash makes of a known variable's value under a length, substring, case or pattern
/// operator (`${#c}`, `${c:0:4}`, `${c,,}`, `${c^^[a-c]}`, `${c#x}`, `${c%%.*}`,
/// `${c//x/y}`); `None` where the value, an offset or a pattern is not known exactly.
fn transformed(p: &ParameterExpr, vars: &Vars) -> Option<String> {
    let known = |param: &Parameter, indirect: bool| -> Option<String> {
        match (param, indirect) {
            (Parameter::Named(n), false) => match vars.get(n) {
                Var::Known(v) => Some(v),
                Var::Unknown => None,
            },
            _ => None,
        }
    };
    let chars = |s: &str| s.chars().collect::<Vec<char>>();
    match p {
        ParameterExpr::ParameterLength {
            parameter,
            indirect,
        } => Some(known(parameter, *indirect)?.chars().count().to_string()),
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            let v = chars(&known(parameter, *indirect)?);
            let n = v.len() as i64;
            let mut start = arithmetic(&offset.value, vars)?;
            if start < 0 {
                start += n;
            }
            if start < 0 || start > n {
                return Some(String::new());
            }
            let end = match length {
                None => n,
                Some(l) => {
                    let l = arithmetic(&l.value, vars)?;
                    if l < 0 { n + l } else { (start + l).min(n) }
                }
            };
            if end < start {
                // bash: "substring expression < 0", an error; nothing known to run.
                return None;
            }
            Some(v[start as usize..end as usize].iter().collect())
        }
        ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } => {
            let v = known(parameter, *indirect)?;
            let pat = match pattern.as_deref() {
                None | Some("") => None,
                Some(t) => Some(literal_pattern(t)?),
            };
            let upper = matches!(
                p,
                ParameterExpr::UppercaseFirstChar { .. } | ParameterExpr::UppercasePattern { .. }
            );
            let only_first = matches!(
                p,
                ParameterExpr::UppercaseFirstChar { .. } | ParameterExpr::LowercaseFirstChar { .. }
            );
            let mut out = String::new();
            for (i, c) in v.chars().enumerate() {
                let applies =
                    (!only_first || i == 0) && pat.as_ref().is_none_or(|pat| match_from(pat, &[c]));
                match (applies, upper) {
                    (true, true) => out.extend(c.to_uppercase()),
                    (true, false) => out.extend(c.to_lowercase()),
                    (false, _) => out.push(c),
                }
            }
            Some(out)
        }
        ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        } => {
            let v = chars(&known(parameter, *indirect)?);
            let pat = literal_pattern(pattern.as_deref().unwrap_or(""))?;
            let n = v.len();
            let cut = match p {
                ParameterExpr::RemoveSmallestPrefixPattern { .. } => (0..=n)
                    .find(|&k| match_from(&pat, &v[..k]))
                    .map(|k| v[k..].iter().collect()),
                ParameterExpr::RemoveLargestPrefixPattern { .. } => (0..=n)
                    .rev()
                    .find(|&k| match_from(&pat, &v[..k]))
                    .map(|k| v[k..].iter().collect()),
                ParameterExpr::RemoveSmallestSuffixPattern { .. } => (0..=n)
                    .rev()
                    .find(|&k| match_from(&pat, &v[k..]))
                    .map(|k| v[..k].iter().collect()),
                _ => (0..=n)
                    .find(|&k| match_from(&pat, &v[k..]))
                    .map(|k| v[..k].iter().collect()),
            };
            Some(cut.unwrap_or_else(|| v.iter().collect()))
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            match_kind,
        } => {
            let v = chars(&known(parameter, *indirect)?);
            let pat = literal_pattern(pattern)?;
            let with = match replacement.as_deref() {
                None => String::new(),
                Some(r) => {
                    let e = expand(r, vars, Mode::NoSplit);
                    if !e.certain || !e.substitutions.is_empty() {
                        return None;
                    }
                    e.fields.concat()
                }
            };
            let n = v.len();
            if n == 0 {
                // Only a pattern that matches the empty string replaces anything.
                return Some(if !pat.is_empty() && match_from(&pat, &[]) {
                    with
                } else {
                    String::new()
                });
            }
            let whole: String = v.iter().collect();
            // The longest match starting at `i` (bash replaces the longest).
            let longest_at = |i: usize| (i + 1..=n).rev().find(|&j| match_from(&pat, &v[i..j]));
            Some(match match_kind {
                SubstringMatchKind::Prefix => match longest_at(0) {
                    Some(j) => format!("{with}{}", v[j..].iter().collect::<String>()),
                    None => whole,
                },
                SubstringMatchKind::Suffix => match (0..n).find(|&i| match_from(&pat, &v[i..])) {
                    Some(i) => format!("{}{with}", v[..i].iter().collect::<String>()),
                    None => whole,
                },
                SubstringMatchKind::FirstOccurrence | SubstringMatchKind::Anywhere => {
                    let all = matches!(match_kind, SubstringMatchKind::Anywhere);
                    let (mut out, mut i, mut done) = (String::new(), 0, false);
                    while i < n {
                        match (!done).then(|| longest_at(i)).flatten() {
                            Some(j) => {
                                out.push_str(&with);
                                i = j;
                                done = !all;
                            }
                            None => {
                                out.push(v[i]);
                                i += 1;
                            }
                        }
                    }
                    out
                }
            })
        }
        _ => None,
    }
}

/// A pattern inside a parameter expansion, as written: quoted and escaped characters match
/// themselves. `None` when it expands something (`$`, a backquote), which is not followed.
fn literal_pattern(text: &str) -> Option<Vec<Ch>> {
    let mut out = Vec::new();
    let mut it = text.chars();
    let (mut single, mut double) = (false, false);
    let ch = |c: char, quoted: bool| Ch {
        c,
        quoted,
        expanded: false,
    };
    while let Some(c) = it.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => out.push(ch(it.next()?, true)),
            '$' | '`' if !single => return None,
            c => out.push(ch(c, single || double)),
        }
    }
    (!single && !double).then_some(out)
}

fn subscript(param: &Parameter) -> Option<&str> {
    match param {
        Parameter::NamedWithIndex { index, .. } => Some(index.as_str()),
        _ => None,
    }
}

/// The texts inside a parameter expansion that bash expands in turn (operands, patterns,
/// offsets, array subscripts): substitutions in them run.
fn parameter_operands(p: &ParameterExpr) -> Vec<&str> {
    let (param, texts): (Option<&Parameter>, Vec<Option<&str>>) = match p {
        ParameterExpr::Parameter { parameter, .. }
        | ParameterExpr::ParameterLength { parameter, .. }
        | ParameterExpr::Transform { parameter, .. } => (Some(parameter), vec![]),
        ParameterExpr::UseDefaultValues {
            parameter,
            default_value: v,
            ..
        }
        | ParameterExpr::AssignDefaultValues {
            parameter,
            default_value: v,
            ..
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            error_message: v,
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            alternative_value: v,
            ..
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            pattern: v,
            ..
        } => (Some(parameter), vec![v.as_deref()]),
        ParameterExpr::Substring {
            parameter,
            offset,
            length,
            ..
        } => (
            Some(parameter),
            vec![
                Some(offset.value.as_str()),
                length.as_ref().map(|l| l.value.as_str()),
            ],
        ),
        ParameterExpr::ReplaceSubstring {
            parameter,
            pattern,
            replacement,
            ..
        } => (
            Some(parameter),
            vec![Some(pattern.as_str()), replacement.as_deref()],
        ),
        ParameterExpr::VariableNames { .. } | ParameterExpr::MemberKeys { .. } => (None, vec![]),
    };
    param
        .and_then(subscript)
        .into_iter()
        .chain(texts.into_iter().flatten())
        .collect()
}

fn param_name(p: &Parameter) -> String {
    match p {
        Parameter::Named(n) => n.clone(),
        Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
        Parameter::NamedWithAllIndices { name, .. } => format!("{name}[@]"),
        Parameter::Positional(n) => n.to_string(),
        Parameter::Special(s) => s.to_string(),
    }
}

/// Integer arithmetic over literals, `+ - * / %`, parentheses and known variables.
fn arithmetic(text: &str, vars: &Vars) -> Option<i64> {
    let toks: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut pos = 0;
    let v = arith_sum(&toks, &mut pos, vars, 0)?;
    (pos == toks.len()).then_some(v)
}

fn arith_sum(t: &[char], pos: &mut usize, vars: &Vars, depth: usize) -> Option<i64> {
    let mut v = arith_product(t, pos, vars, depth)?;
    while let Some(&op) = t.get(*pos) {
        if op != '+' && op != '-' {
            break;
        }
        *pos += 1;
        let r = arith_product(t, pos, vars, depth)?;
        v = if op == '+' {
            v.checked_add(r)?
        } else {
            v.checked_sub(r)?
        };
    }
    Some(v)
}

fn arith_product(t: &[char], pos: &mut usize, vars: &Vars, depth: usize) -> Option<i64> {
    let mut v = arith_atom(t, pos, vars, depth)?;
    while let Some(&op) = t.get(*pos) {
        if !matches!(op, '*' | '/' | '%') || t.get(*pos + 1) == Some(&'*') {
            break;
        }
        *pos += 1;
        let r = arith_atom(t, pos, vars, depth)?;
        v = match op {
            '*' => v.checked_mul(r)?,
            '/' => v.checked_div(r)?,
            _ => v.checked_rem(r)?,
        };
    }
    Some(v)
}

fn arith_atom(t: &[char], pos: &mut usize, vars: &Vars, depth: usize) -> Option<i64> {
    if depth > 32 {
        return None;
    }
    match t.get(*pos)? {
        '(' => {
            *pos += 1;
            let v = arith_sum(t, pos, vars, depth + 1)?;
            (t.get(*pos) == Some(&')')).then(|| *pos += 1)?;
            Some(v)
        }
        '-' => {
            *pos += 1;
            arith_atom(t, pos, vars, depth + 1)?.checked_neg()
        }
        '+' => {
            *pos += 1;
            arith_atom(t, pos, vars, depth + 1)
        }
        c if c.is_ascii_digit() => {
            let start = *pos;
            while t.get(*pos).is_some_and(|c| c.is_ascii_digit()) {
                *pos += 1;
            }
            let s: String = t[start..*pos].iter().collect();
            // Leading zeros are octal in bash, and `0x`/`base#` forms exist: only plain decimals.
            if s.len() > 1 && s.starts_with('0') {
                return None;
            }
            if t.get(*pos)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '#')
            {
                return None;
            }
            s.parse().ok()
        }
        c if c.is_ascii_alphabetic() || *c == '_' || *c == '$' => {
            if *c == '$' {
                *pos += 1;
            }
            let start = *pos;
            while t
                .get(*pos)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                *pos += 1;
            }
            let name: String = t[start..*pos].iter().collect();
            match vars.get(&name) {
                Var::Known(v) if v.is_empty() => Some(0),
                Var::Known(v) => arithmetic(&v, vars),
                Var::Unknown => None,
            }
        }
        _ => None,
    }
}

/// Split on `IFS` the characters that came from unquoted expansions.
fn split_fields(chars: &[Ch], vars: &Vars, out: &mut Expanded) -> Vec<Vec<Ch>> {
    let needs_split = chars.iter().any(|c| c.expanded && !c.quoted);
    if !needs_split {
        return vec![chars.to_vec()];
    }
    let ifs = match vars.ifs() {
        Some(i) => i,
        None => {
            out.certain = false;
            out.unknown
                .push("IFS has a value that cannot be known".into());
            DEFAULT_IFS.to_owned()
        }
    };
    let is_ws = |c: char| ifs.contains(c) && matches!(c, ' ' | '\t' | '\n');
    let is_sep = |c: &Ch| c.expanded && !c.quoted && ifs.contains(c.c);
    let mut fields: Vec<Vec<Ch>> = Vec::new();
    let mut cur: Vec<Ch> = Vec::new();
    let mut has_content = false;
    let mut i = 0;
    while i < chars.len() {
        let c = &chars[i];
        if is_sep(c) {
            // A run of IFS white space, with at most one non-white IFS character, is one
            // separator.
            let mut j = i;
            let mut hard = false;
            while j < chars.len() && is_sep(&chars[j]) {
                if !is_ws(chars[j].c) {
                    if hard {
                        break;
                    }
                    hard = true;
                }
                j += 1;
            }
            if has_content || hard {
                fields.push(std::mem::take(&mut cur));
            }
            has_content = false;
            i = j;
            continue;
        }
        cur.push(*c);
        has_content = true;
        i += 1;
    }
    if has_content {
        fields.push(cur);
    }
    // A word whose unquoted expansions produced nothing disappears, unless a quoted part keeps
    // it (`""$x` is one empty field).
    if fields.is_empty() && chars.iter().any(|c| c.quoted) {
        fields.push(Vec::new());
    }
    fields
}

/// Pathname expansion of a field against the file system. `None` when it cannot be done (no
/// known directory, too many entries); `Some(vec![])` when nothing matches.
fn glob(field: &[Ch], vars: &Vars) -> Option<Vec<String>> {
    if !vars.glob_fs {
        return None;
    }
    let absolute = field.first().is_some_and(|c| c.c == '/');
    let base = if absolute {
        PathBuf::from("/")
    } else {
        vars.cwd.clone()?
    };
    // Split into segments on `/`.
    let mut segments: Vec<Vec<Ch>> = vec![Vec::new()];
    for c in field {
        if c.c == '/' {
            segments.push(Vec::new());
        } else if let Some(last) = segments.last_mut() {
            last.push(*c);
        }
    }
    let mut paths: Vec<(PathBuf, String)> = vec![(
        base,
        if absolute {
            "/".to_owned()
        } else {
            String::new()
        },
    )];
    let mut budget = MAX_GLOB_ENTRIES;
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        if seg.is_empty() {
            if i == 0 && absolute {
                continue;
            }
            // `a//b` or a trailing `/`: keep only directories.
            for (p, text) in &mut paths {
                text.push('/');
                let _ = p;
            }
            if i == last {
                paths.retain(|(p, _)| p.is_dir());
            }
            continue;
        }
        let opts = vars.effective_glob_opts();
        let has_glob = seg.iter().any(|c| !c.quoted && is_glob_char(c.c))
            || (opts.extglob && has_extglob(seg));
        let alts = if opts.extglob {
            extglob_alternatives(seg)
        } else {
            vec![seg.clone()]
        };
        let mut next = Vec::new();
        for (dir, text) in &paths {
            let sep = if text.is_empty() || text.ends_with('/') {
                ""
            } else {
                "/"
            };
            if !has_glob {
                let name: String = seg.iter().map(|c| c.c).collect();
                let p = dir.join(&name);
                if i == last || p.is_dir() {
                    next.push((p, format!("{text}{sep}{name}")));
                }
                continue;
            }
            let entries = std::fs::read_dir(dir).ok();
            for e in entries.into_iter().flatten().flatten() {
                budget = budget.checked_sub(1)?;
                let name = e.file_name().to_string_lossy().into_owned();
                if alts.iter().any(|a| fnmatch_with(a, &name, opts)) {
                    let p = dir.join(&name);
                    if i == last || p.is_dir() {
                        next.push((p, format!("{text}{sep}{name}")));
                    }
                }
            }
        }
        paths = next;
    }
    Some(paths.into_iter().map(|(_, t)| t).collect())
}

/// The alternatives a pattern's braces stand for (`{a,b}/x` → `a/x`, `b/x`), as ripgrep's glob
/// syntax and bash's brace expansion both read a comma list
/// (`{a,b}/x` → `a/x`, `b/x`; nested braces too; a `\` escapes). At most 256; a pattern with
/// more is given back whole (its literal text still meets the rules).
pub fn brace_alternatives(pattern: &str) -> Vec<String> {
    fn expand(p: &str, out: &mut Vec<String>, budget: &mut usize) {
        let bytes: Vec<char> = p.chars().collect();
        // The first top-level `{`, and its matching `}`.
        let mut depth = 0usize;
        let mut open = None;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                '\\' => i += 1,
                '{' => {
                    if depth == 0 {
                        open = Some(i);
                    }
                    depth += 1;
                }
                '}' if depth > 0 => {
                    depth -= 1;
                    if depth == 0
                        && let Some(o) = open
                    {
                        let head: String = bytes[..o].iter().collect();
                        let tail: String = bytes[i + 1..].iter().collect();
                        // Split the inside on top-level commas.
                        let mut parts = Vec::new();
                        let mut cur = String::new();
                        let mut d = 0usize;
                        let mut j = o + 1;
                        while j < i {
                            let c = bytes[j];
                            match c {
                                '\\' if j + 1 < i => {
                                    cur.push(c);
                                    cur.push(bytes[j + 1]);
                                    j += 1;
                                }
                                '{' => {
                                    d += 1;
                                    cur.push(c);
                                }
                                '}' => {
                                    d = d.saturating_sub(1);
                                    cur.push(c);
                                }
                                ',' if d == 0 => parts.push(std::mem::take(&mut cur)),
                                _ => cur.push(c),
                            }
                            j += 1;
                        }
                        parts.push(cur);
                        for part in parts {
                            if *budget == 0 {
                                return;
                            }
                            expand(&format!("{head}{part}{tail}"), out, budget);
                        }
                        return;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if *budget > 0 {
            *budget -= 1;
            out.push(p.to_owned());
        }
    }
    let mut out = Vec::new();
    let mut budget = 256;
    expand(pattern, &mut out, &mut budget);
    if budget == 0 || out.is_empty() {
        return vec![pattern.to_owned()];
    }
    out
}

/// Does `name` match the shell pattern `pattern` (`*`, `?`, bracket expressions; every
/// character unquoted)? A leading `.` must be matched literally, as in pathname expansion.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    fnmatch(&unquoted_pattern(pattern), name)
}

/// A pattern's characters, none quoted.
fn unquoted_pattern(pattern: &str) -> Vec<Ch> {
    pattern
        .chars()
        .map(|c| Ch {
            c,
            quoted: false,
            expanded: false,
        })
        .collect()
}

/// Could `name` match the shell pattern `pattern` under some shell options (`dotglob`,
/// `extglob`, `nocaseglob`)? For deny rules: a pattern that matched nothing when the line was
/// read may match a denied name when it runs.
pub fn pattern_could_match(pattern: &str, name: &str) -> bool {
    let pat = unquoted_pattern(pattern);
    let opts = GlobOpts {
        dotglob: true,
        extglob: true,
        nocaseglob: true,
    };
    extglob_alternatives(&pat)
        .iter()
        .any(|a| fnmatch_with(a, name, opts))
}

/// Does `name` match the glob segment? A leading `.` must be matched literally.
fn fnmatch(pat: &[Ch], name: &str) -> bool {
    fnmatch_with(pat, name, GlobOpts::default())
}

/// [`fnmatch`] under shell options: with `dotglob` a leading `.` matches too (never in `.` or
/// `..`), with `nocaseglob` case is ignored.
fn fnmatch_with(pat: &[Ch], name: &str, opts: GlobOpts) -> bool {
    if name == "." || name == ".." {
        return pat.iter().map(|c| c.c).collect::<String>() == name;
    }
    let fold = |s: &str| {
        if opts.nocaseglob {
            s.to_lowercase()
        } else {
            s.to_owned()
        }
    };
    let name: Vec<char> = fold(name).chars().collect();
    let pat: Vec<Ch> = if opts.nocaseglob {
        pat.iter()
            .map(|c| Ch {
                c: c.c.to_lowercase().next().unwrap_or(c.c),
                ..*c
            })
            .collect()
    } else {
        pat.to_vec()
    };
    if !opts.dotglob && name.first() == Some(&'.') && pat.first().is_none_or(|c| c.c != '.') {
        return false;
    }
    match_from(&pat, &name)
}

/// Does the pattern hold an extended glob (`@(`, `?(`, `*(`, `+(`, `!(`) unquoted?
fn has_extglob(pat: &[Ch]) -> bool {
    pat.windows(2).any(|w| {
        !w[0].quoted
            && !w[1].quoted
            && matches!(w[0].c, '@' | '?' | '*' | '+' | '!')
            && w[1].c == '('
    })
}

/// An extended glob as plain patterns: `@(a|b)` is `a` or `b`, `?(a|b)` also nothing;
/// `*(..)`, `+(..)` and `!(..)` are read as `*` (they match at least what it would: wider,
/// never narrower). At most 64 alternatives; past that the group is read as `*` too.
fn extglob_alternatives(pat: &[Ch]) -> Vec<Vec<Ch>> {
    let star = Ch {
        c: '*',
        quoted: false,
        expanded: false,
    };
    // The first group.
    let Some(start) = (0..pat.len().saturating_sub(1)).find(|&i| {
        !pat[i].quoted
            && !pat[i + 1].quoted
            && matches!(pat[i].c, '@' | '?' | '*' | '+' | '!')
            && pat[i + 1].c == '('
    }) else {
        return vec![pat.to_vec()];
    };
    let mut depth = 0usize;
    let mut end = None;
    let mut bars = Vec::new();
    for (j, c) in pat.iter().enumerate().skip(start + 1) {
        if c.quoted {
            continue;
        }
        match c.c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(j);
                    break;
                }
            }
            '|' if depth == 1 => bars.push(j),
            _ => {}
        }
    }
    let Some(end) = end else {
        return vec![pat.to_vec()];
    };
    let head = &pat[..start];
    let tail = extglob_alternatives(&pat[end + 1..]);
    let mut choices: Vec<Vec<Ch>> = Vec::new();
    match pat[start].c {
        '@' | '?' => {
            let mut from = start + 2;
            for b in bars.iter().copied().chain(std::iter::once(end)) {
                choices.extend(extglob_alternatives(&pat[from..b]));
                from = b + 1;
            }
            if pat[start].c == '?' {
                choices.push(Vec::new());
            }
        }
        _ => choices.push(vec![star]),
    }
    let mut out = Vec::new();
    for c in &choices {
        for t in &tail {
            if out.len() >= 64 {
                let mut wide = head.to_vec();
                wide.push(star);
                return vec![wide];
            }
            let mut p = head.to_vec();
            p.extend_from_slice(c);
            p.extend_from_slice(t);
            out.push(p);
        }
    }
    out
}

fn match_from(pat: &[Ch], name: &[char]) -> bool {
    let Some(p) = pat.first() else {
        return name.is_empty();
    };
    if p.quoted {
        return name.first() == Some(&p.c) && match_from(&pat[1..], &name[1..]);
    }
    match p.c {
        '*' => (0..=name.len()).any(|k| match_from(&pat[1..], &name[k..])),
        '?' => !name.is_empty() && match_from(&pat[1..], &name[1..]),
        '[' => {
            let Some(c) = name.first() else { return false };
            match bracket(&pat[1..], *c) {
                Some((matched, used)) => matched && match_from(&pat[1 + used..], &name[1..]),
                // Not a valid bracket expression: `[` is literal.
                None => *c == '[' && match_from(&pat[1..], &name[1..]),
            }
        }
        c => name.first() == Some(&c) && match_from(&pat[1..], &name[1..]),
    }
}

/// A bracket expression after `[`: whether `c` matches, and how many pattern characters it
/// used (through the closing `]`).
fn bracket(pat: &[Ch], c: char) -> Option<(bool, usize)> {
    let mut i = 0;
    let negate = pat
        .first()
        .is_some_and(|p| !p.quoted && matches!(p.c, '!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pat.len() {
        let p = pat[i];
        if p.c == ']' && !p.quoted && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p.c == '[' && pat.get(i + 1).is_some_and(|n| n.c == ':') {
            // A character class `[:alpha:]`.
            let rest: String = pat[i + 2..].iter().map(|c| c.c).collect();
            let end = rest.find(":]")?;
            let class = &rest[..end];
            matched |= match class {
                "alpha" => c.is_alphabetic(),
                "digit" => c.is_ascii_digit(),
                "alnum" => c.is_alphanumeric(),
                "upper" => c.is_uppercase(),
                "lower" => c.is_lowercase(),
                "space" => c.is_whitespace(),
                "punct" => c.is_ascii_punctuation(),
                "xdigit" => c.is_ascii_hexdigit(),
                _ => return None,
            };
            i += 2 + end + 2;
            continue;
        }
        if pat.get(i + 1).is_some_and(|d| d.c == '-' && !d.quoted)
            && let Some(hi) = pat.get(i + 2).filter(|h| h.c != ']')
        {
            matched |= p.c <= c && c <= hi.c;
            i += 3;
            continue;
        }
        matched |= p.c == c;
        i += 1;
    }
    None
}

/// Decode the body of a `$'...'` word as bash does. `None` for escapes it does not model.
pub(crate) fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let mut radix_digits = |radix: u32, max: usize, first: Option<char>| -> Option<char> {
            let mut s: String = first.into_iter().collect();
            while s.len() < max && chars.peek().is_some_and(|d| d.is_digit(radix)) {
                s.push(chars.next()?);
            }
            u32::from_str_radix(&s, radix).ok().and_then(char::from_u32)
        };
        let decoded = match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            '\\' | '\'' | '"' | '?' => e,
            'x' => radix_digits(16, 2, None)?,
            'u' => radix_digits(16, 4, None)?,
            'U' => radix_digits(16, 8, None)?,
            '0'..='7' => radix_digits(8, 3, Some(e))?,
            'c' => return None,
            // An unknown escape stays as written.
            other => {
                out.push('\\');
                other
            }
        };
        // A NUL ends the string in bash.
        if decoded == '\0' {
            break;
        }
        out.push(decoded);
    }
    Some(out)
}

/// Resolve `path` (after expansion) against `cwd`, lexically.
pub fn join(cwd: &Path, path: &str) -> PathBuf {
    if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_alternatives_expand_nested_and_escaped_braces() {
        assert_eq!(brace_alternatives("{a,b}/x"), ["a/x", "b/x"]);
        assert_eq!(
            brace_alternatives("s/{a,{b,c}d}/*.rs"),
            ["s/a/*.rs", "s/bd/*.rs", "s/cd/*.rs"]
        );
        assert_eq!(brace_alternatives("no/braces/**"), ["no/braces/**"]);
        assert_eq!(brace_alternatives("\\{a,b}"), ["\\{a,b}"]);
        assert_eq!(brace_alternatives("{a,b}{c,d}"), ["ac", "ad", "bc", "bd"]);
    }

    fn ex(raw: &str) -> Expanded {
        let mut v = Vars::new(
            Some(PathBuf::from("/nonexistent/cwd")),
            PathBuf::from("/home/u"),
        );
        v.set("X", Var::Known("a b".into()));
        v.set("E", Var::Known(String::new()));
        expand(raw, &v, Mode::Argument)
    }

    fn fields(raw: &str) -> Vec<String> {
        ex(raw).fields
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(fields("r''m"), ["rm"]);
        assert_eq!(fields("\"r\"m"), ["rm"]);
        assert_eq!(fields("\\rm"), ["rm"]);
        assert_eq!(fields("$'\\x72\\x6d'"), ["rm"]);
        assert_eq!(fields("\"a\\b\""), ["a\\b"]);
        assert_eq!(fields("\"a\\$b\""), ["a$b"]);
        assert_eq!(fields("''"), [""]);
        assert_eq!(fields("\"\""), [""]);
        assert!(ex("rm").certain);
    }

    #[test]
    fn braces() {
        assert_eq!(fields("{rm,-rf,x}"), ["rm", "-rf", "x"]);
        assert_eq!(fields("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(fields("{1..3}"), ["1", "2", "3"]);
        assert_eq!(fields("{01..03}"), ["01", "02", "03"]);
        assert_eq!(fields("{c..a}"), ["c", "b", "a"]);
        assert_eq!(fields("'{a,b}'"), ["{a,b}"]);
        assert_eq!(fields("{a}"), ["{a}"]);
        assert_eq!(fields("x{a,{b,c}}"), ["xa", "xb", "xc"]);
        assert_eq!(fields("r{m,}"), ["rm", "r"]);
        assert_eq!(fields("{~,x}"), ["/home/u", "x"]);
        assert_eq!(fields("a=~/x"), ["a=/home/u/x"]);
        assert_eq!(fields("PATH=~/bin:~/b"), ["PATH=/home/u/bin:/home/u/b"]);
        assert_eq!(fields("--a=~/x"), ["--a=~/x"]);
        assert_eq!(fields("a='~'/x"), ["a=~/x"]);
    }

    #[test]
    fn parameters_and_splitting() {
        assert_eq!(fields("$X"), ["a", "b"]);
        assert_eq!(fields("\"$X\""), ["a b"]);
        assert_eq!(fields("$E"), Vec::<String>::new());
        assert_eq!(fields("\"$E\""), [""]);
        assert_eq!(fields("rm${IFS}-rf"), ["rm", "-rf"]);
        assert!(ex("rm${IFS}-rf").certain);
        assert_eq!(fields("~/x"), ["/home/u/x"]);
        assert_eq!(fields("$HOME/x"), ["/home/u/x"]);
        assert_eq!(fields("${U:-def}"), Vec::<String>::new());
        assert!(!ex("${U:-def}").certain);
        assert_eq!(fields("${E:-def}"), ["def"]);
        assert_eq!(fields("$((1+2*3))"), ["7"]);
        let u = ex("$UNSET");
        assert!(!u.certain);
        let s = ex("a$(touch x)b");
        assert!(!s.certain);
        assert_eq!(s.substitutions, ["touch x"]);
        assert!(!ex("${x@P}").certain);
        for w in [
            "${x:=$(touch a)}",
            "${x/$(touch a)/b}",
            "${x:$(touch a)}",
            "${x%`touch a`}",
            "${x[$(touch a)]}",
        ] {
            assert_eq!(ex(w).substitutions, ["touch a"], "{w}");
        }
    }

    #[test]
    fn globs_against_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::write(dir.path().join("b.rs"), "").unwrap();
        let v = Vars::new(Some(dir.path().to_path_buf()), PathBuf::from("/home/u"));
        let e = |w: &str| expand(w, &v, Mode::Argument).fields;
        assert_eq!(e("*.rs"), ["a.rs", "b.rs"]);
        assert_eq!(e(".e*"), [".env"]);
        assert_eq!(e(".en?"), [".env"]);
        assert_eq!(e("[ab].rs"), ["a.rs", "b.rs"]);
        assert_eq!(e("*"), ["a.rs", "b.rs"]);
        assert_eq!(e("'*'.rs"), ["*.rs"]);
        assert_eq!(e("*.none"), ["*.none"]);
    }

    /// Length, substring, case and pattern operators on a known value, differentially against
    /// bash: every form the expander claims to know must give exactly what bash prints, over a
    /// grid of values, offsets, patterns and replacements.
    #[test]
    fn parameter_operators_expand_as_bash_does() {
        let values = [
            "curl",
            "CuRl",
            "a.b.c",
            "xcurlx",
            "path/to/file.txt",
            "aaa",
            "",
        ];
        let mut forms: Vec<String> = vec!["${#c}".into()];
        for o in ["0", "1", "-2", " -2", "3", "10", "1+1"] {
            forms.push(format!("${{c:{o}}}"));
            for l in ["0", "2", "-1", "10"] {
                forms.push(format!("${{c:{o}:{l}}}"));
            }
        }
        for op in ["^^", ",,", "^", ","] {
            forms.push(format!("${{c{op}}}"));
            for pat in ["[a-c]", "[A-C]", "?", "u"] {
                forms.push(format!("${{c{op}{pat}}}"));
            }
        }
        for op in ["#", "##", "%", "%%"] {
            for pat in [
                "*.", ".*", "x", "?", "*", "[a-c]*", "\\*", "'.'", "\"a\"", "*/",
            ] {
                forms.push(format!("${{c{op}{pat}}}"));
            }
        }
        for op in ["/", "//", "/#", "/%"] {
            for pat in ["c", "x*", "?", "[lr]", "url", "a", "*"] {
                for rep in ["/Z", "/", "", "/\\/"] {
                    forms.push(format!("${{c{op}{pat}{rep}}}"));
                }
            }
        }
        let mut script = String::new();
        let mut cases = Vec::new();
        for v in values {
            for f in &forms {
                // A subshell each: a bad substitution ends the shell it happens in.
                script.push_str(&format!(
                    "(c='{v}'; printf '%s\\0' \"{f}\") 2>/dev/null || printf 'ERR\\0'\n"
                ));
                cases.push((v, f.clone()));
            }
        }
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .expect("bash runs");
        let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .map(str::to_owned)
            .collect();
        assert!(
            printed.len() > cases.len(),
            "bash printed {} of {}",
            printed.len(),
            cases.len()
        );
        let mut known = 0;
        for ((v, f), want) in cases.iter().zip(&printed) {
            let mut vars = Vars::new(Some(PathBuf::from("/nonexistent/cwd")), PathBuf::from("/h"));
            vars.set("c", Var::Known((*v).to_owned()));
            let got = expand(&format!("\"{f}\""), &vars, Mode::NoSplit);
            if !got.certain {
                continue;
            }
            known += 1;
            assert_ne!(
                want, "ERR",
                "c='{v}'; {f}: bash fails, the expander says {:?}",
                got.fields
            );
            assert_eq!(&got.fields.concat(), want, "c='{v}'; {f}");
        }
        assert!(
            known * 10 > cases.len() * 9,
            "only {known} of {} forms known",
            cases.len()
        );
    }
}
