//! Deciding about a Bash command line from its analysis (`tool_shell::analyze`): every unit
//! the line runs (carried commands and substitutions included), and every effect the command
//! database finds in them.
//!
//! A deny on any unit, or on a path any effect reads or writes, denies the line. An allow
//! needs every unit allowed, and a unit is allowed either by a rule matching its words (the
//! rule covers what the program does by itself: its operands and its own code), or as a
//! read-only command. Effects that go beyond the program itself are decided on their own by
//! the same lattice: a file an option writes is an Edit (as a redirection is), a file read
//! is a Read, a program or command string run is a unit of its own, and code that cannot be
//! known is an ask.

use std::path::{Path, PathBuf};

use tool_core::ToolContext;
use tool_shell::analyze::{Analysis, Origin, ShellEnv, Unit};
use tool_shell::{Effect, EffectKind, inert_assignment, trusted_program_name};

use crate::policy::{PathFamily, RuleEntry};

/// Process wrappers Claude Code strips before matching allow rules: they add nothing of their
/// own, so a unit of theirs is allowed when the command they run is.
const INERT_WRAPPERS: &[&str] = &["time", "timeout", "nice", "nohup", "stdbuf"];

/// What a unit does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Reads it (or changes into it).
    Read,
    /// Creates, changes or removes it as the program's own operand.
    Write,
    /// Writes it through an output redirection, or an option that writes a file.
    Redirect,
}

/// One path a unit uses.
#[derive(Debug, Clone)]
pub(crate) struct PathUse {
    /// The unit's index in the analysis.
    pub unit: usize,
    /// The program's name.
    pub command: String,
    /// The path, resolved against the unit's working directory.
    pub path: PathBuf,
    /// What is done with it.
    pub op: Op,
    /// Written by a shell redirection (not by the program or one of its options).
    pub redirect: bool,
    /// Named by one of the program's options (`grep -f PATTERNS`), not an operand.
    pub by_option: bool,
}

/// The paths each unit reads and writes.
pub(crate) struct Touches {
    pub uses: Vec<PathUse>,
    /// Units with a read or write whose path cannot be known.
    pub unknown_paths: Vec<usize>,
    /// Files a program loads from where it runs that are not there now (`.env` for `docker
    /// compose` in a project without one): read once something puts them there.
    pub absent_loads: Vec<PathUse>,
    /// The links the line's units make: `(unit, link, what it leads to)` (see `made_links`).
    pub links: Vec<(usize, PathBuf, PathBuf)>,
}

impl Touches {
    pub(crate) fn reads(&self) -> impl Iterator<Item = &Path> {
        self.uses
            .iter()
            .filter(|u| u.op == Op::Read)
            .map(|u| u.path.as_path())
    }

    pub(crate) fn writes(&self) -> impl Iterator<Item = &PathUse> {
        self.uses.iter().filter(|u| u.op != Op::Read)
    }
}

/// Whether a unit runs a program by a path the line itself writes in another unit (`cp
/// /usr/bin/curl ./ls && ./ls`, `cat x > run; sh -c ./run`, a link made with `ln`): what runs
/// there is what was written, not what the name says, so the line's words are to be read as
/// every command they could be.
pub(crate) fn runs_what_it_wrote(a: &Analysis, touched: &Touches, ctx: &ToolContext) -> bool {
    a.units.iter().enumerate().any(|(i, u)| {
        if !u.path_qualified() {
            return false;
        }
        let Some(program) = u.argv.first() else {
            return false;
        };
        let ran = same_root(&resolve(program, &u.cwd, ctx));
        touched.writes().any(|w| {
            let wrote = same_root(&w.path);
            w.unit != i && (wrote == ran || ran.starts_with(&wrote))
        })
    })
}

/// A path as the process's own root sees it: `/proc/self/root/x` (and `thread-self`) is `/x`.
fn same_root(p: &Path) -> PathBuf {
    for proc_root in ["/proc/self/root", "/proc/thread-self/root"] {
        if let Ok(rest) = p.strip_prefix(proc_root) {
            return Path::new("/").join(rest);
        }
    }
    p.to_path_buf()
}

/// The words of units whose program the command database does not know, as paths: such a
/// program may read or write any file it is given (`openssl enc -in .env`), as an operand or
/// as an option's value (`--in=.env`). For deny rules only: what an unknown program does with
/// the rest is for the rules that allow it.
pub(crate) fn unknown_programs_paths(a: &Analysis, ctx: &ToolContext) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for u in &a.units {
        let unplaced = u.interpretation.path.is_empty()
            || u.interpretation
                .effects
                .iter()
                .any(|e| e.kind == tool_shell::EffectKind::Unknown);
        // A variable's value that is a path: what the program does with it is not known
        // (`GIT_TRACE=FILE` appends a trace to FILE).
        for a in &u.assignments {
            if let Some(v) = a.value.as_deref()
                && (v.contains('/') || v.starts_with('.') || v.starts_with('~'))
                && !v.contains("://")
                && !v.contains(':')
            {
                out.push(resolve(v, &u.cwd, ctx));
            }
        }
        if u.is_bare() {
            continue;
        }
        let words = if unplaced {
            &u.argv[1..]
        } else {
            &u.interpretation.loose[..]
        };
        // What the line feeds it on its standard input (a here-document, a here-string, an
        // `echo` into a pipe) is words it may read as names too (`#include ".env"`).
        let fed: Vec<String> = if unplaced {
            u.redirects
                .iter()
                .filter_map(|r| r.here.clone().flatten())
                .flat_map(|t| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .collect()
        } else {
            Vec::new()
        };
        for w in words.iter().chain(&fed) {
            for word in path_candidates(w) {
                out.push(resolve(word, &u.cwd, ctx));
            }
        }
    }
    out
}

impl Touches {
    /// Where `path` leads through the links the line makes (`ln -s ~/.aws a && mytool
    /// a/credentials`), not counting those `except` makes: for each such link, in the order
    /// the line makes them, its target with the rest of the path. Any spelling of `path`
    /// counts (a link there now may lead to one the line makes; `/proc/self/root/x` is `/x`;
    /// a link there now, dangling, may lead into one).
    pub(crate) fn through_links(
        &self,
        path: &Path,
        except: Option<usize>,
        ctx: &ToolContext,
    ) -> Vec<PathBuf> {
        if self.links.is_empty() {
            return Vec::new();
        }
        let mut spellings = crate::path_rule::candidates(path, ctx);
        spellings.push(same_root(path));
        spellings.extend(tool_core::follow_links(&same_root(path)));
        let mut out = Vec::new();
        for (unit, link, target) in &self.links {
            if Some(*unit) == except {
                continue;
            }
            for s in &spellings {
                if let Ok(rest) = s.strip_prefix(link) {
                    let p = tool_core::normalize(&target.join(rest));
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
        out
    }
}

/// The paths the strings of code given on the line pass to calls that open files
/// (`python3 -c 'open(".env")'`, `node -e 'require("./.env")'`, `php -r
/// 'file_get_contents(".env")'`): the code may open them. For deny rules only.
/// Each path with whether the call may write it (its name says so, `writeFileSync`,
/// `os.remove`, or it opens for writing, `open(F, "w")`): a read alone meets only the Read
/// deny rules.
pub(crate) fn code_paths(a: &Analysis, ctx: &ToolContext) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for u in &a.units {
        for code in &u.interpretation.code {
            // Past this size every word is a name it may open (the scan below looks at each
            // call's arguments, which nested calls make slow).
            if code.len() > 16 * 1024 {
                for word in path_candidates(code) {
                    out.push((resolve(word, &u.cwd, ctx), true));
                }
                continue;
            }
            for (lit, writes) in opened_literals(code) {
                for word in path_candidates(lit) {
                    out.push((resolve(word, &u.cwd, ctx), writes));
                }
            }
            for (value, writes) in literal_values(code) {
                for word in path_candidates(&value) {
                    out.push((resolve(word, &u.cwd, ctx), writes));
                }
            }
        }
    }
    out
}

/// The parts of a call's name that say it opens, reads, writes, copies or loads a file, in
/// the languages programs take code in on the line (`open`, `readFileSync`, `require`,
/// `file_get_contents`, `File.read`, `Path`, `shutil.copy`, `include`).
const OPENING_CALLS: &[&str] = &[
    "open", "read", "write", "append", "load", "require", "include", "import", "file", "content",
    "copy", "path", "stream", "source", "slurp", "spawn", "exec", "system",
];

/// The parts of a call's name that say it changes the file it is given.
const WRITING_CALLS: &[&str] = &[
    "write", "append", "remove", "unlink", "rename", "copy", "move", "mkdir", "rmdir", "touch",
    "dump", "save", "truncate", "chmod", "symlink", "link", "put",
];

/// The string literals in the arguments of calls whose name says they open a file, each
/// with whether the call may write it.
fn opened_literals(code: &str) -> Vec<(&str, bool)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
            i += 1;
            continue;
        }
        let from = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = code[from..i].to_ascii_lowercase();
        let mut j = i;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if j >= b.len()
            || b[j] != b'('
            || !OPENING_CALLS
                .iter()
                .chain(WRITING_CALLS)
                .any(|w| name.contains(w))
        {
            continue;
        }
        // The arguments, to the matching `)`: every string literal in them.
        let writes_by_name = WRITING_CALLS.iter().any(|w| name.contains(w));
        let first = out.len();
        let mut depth = 0usize;
        let mut k = j;
        while k < b.len() {
            match b[k] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                q @ (b'"' | b'\'' | b'`') => {
                    let start = k + 1;
                    let mut end = start;
                    while end < b.len() && b[end] != q {
                        end += if b[end] == b'\\' { 2 } else { 1 };
                    }
                    if let Some(lit) = code.get(start..end.min(b.len())) {
                        out.push((lit, writes_by_name));
                    }
                    k = end;
                }
                _ => {}
            }
            k += 1;
        }
        // `open(F, "w")`, `fopen(F, 'a+')`: a mode that writes.
        let mode_writes = out[first..].iter().any(|(l, _)| {
            l.len() <= 3 && (l.starts_with(['w', 'a']) || l.contains('+') || *l == ">")
        });
        if mode_writes {
            for entry in &mut out[first..] {
                entry.1 = true;
            }
        }
    }
    out
}

/// What the string literals of code stand for, where that differs from how they are
/// written: escapes decoded (`\u0073`, `\x73`, `\163`), literals written next to each other
/// joined (`"/a/.ss" "h/k"`, `'a' + 'b'`, `'a' . 'b'`, `'a' .. 'b'`), `%XX` decoded (a
/// `file:` URL). Each literal an opening call takes keeps what that call does; a joined run is
/// a read.
fn literal_values(code: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let push = |v: String, writes: bool, out: &mut Vec<(String, bool)>| {
        if let Some(p) = percent_decoded(&v) {
            out.push((p, writes));
        }
        out.push((v, writes));
    };
    for (lit, writes) in opened_literals(code) {
        if let Some(v) = decoded_literal(lit).filter(|v| v != lit) {
            push(v, writes, &mut out);
        } else if let Some(p) = percent_decoded(lit) {
            out.push((p, writes));
        }
    }
    // Runs of literals joined by nothing but blanks and a concatenation operator.
    let b = code.as_bytes();
    let mut run: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |run: &mut Vec<String>, out: &mut Vec<(String, bool)>| {
        if run.len() > 1 {
            let joined: String = run.concat();
            if let Some(p) = percent_decoded(&joined) {
                out.push((p, false));
            }
            out.push((joined, false));
        }
        run.clear();
    };
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'' | b'`') => {
                let start = i + 1;
                let mut end = start;
                while end < b.len() && b[end] != q {
                    end += if b[end] == b'\\' { 2 } else { 1 };
                }
                let lit = code.get(start..end.min(b.len())).unwrap_or_default();
                run.push(decoded_literal(lit).unwrap_or_else(|| lit.to_owned()));
                i = end + 1;
                // What comes before the next literal: a join, or the end of the run.
                let mut j = i;
                while j < b.len() && matches!(b[j], b' ' | b'\t' | b'+' | b'.') {
                    j += 1;
                }
                if j >= b.len() || !matches!(b[j], b'"' | b'\'' | b'`') {
                    flush(&mut run, &mut out);
                }
                i = j.max(i);
            }
            _ => i += 1,
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A literal's text with its escapes decoded (`\u0073`, `\u{73}`, `\x73`, `\163`, `\n`);
/// `None` when an escape is broken.
fn decoded_literal(lit: &str) -> Option<String> {
    if !lit.contains('\\') {
        return Some(lit.to_owned());
    }
    let mut out = String::new();
    let mut chars = lit.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let digits: String = (0..n).filter_map(|_| chars.next()).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v)?);
            }
            'x' => out.push(hex(&mut chars, 2)?),
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let digits: String = chars.by_ref().take_while(|&d| d != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?);
            }
            'u' => out.push(hex(&mut chars, 4)?),
            'U' => out.push(hex(&mut chars, 8)?),
            other => out.push(other),
        }
    }
    Some(out)
}

/// `text` with its `%XX` escapes decoded, where it has any.
pub(crate) fn percent_decoded(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if !b
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
    {
        return None;
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            let v = u8::from_str_radix(&text[i + 1..i + 3], 16).ok()?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What in a word a program may take for a path: the word, and where it holds a small
/// language of its own (`.read .env`, `w! .git/hooks/x`, `src=.env`, `-v .env:/x`), its
/// space-separated parts, the values after `=` and the pieces between `:` and `,`.
fn path_candidates(word: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    fn add<'w>(out: &mut Vec<&'w str>, c: &'w str) {
        let c = c.trim_matches(|ch: char| ch == '\'' || ch == '"');
        if !c.is_empty() && !c.starts_with('-') && !c.contains("://") && !out.contains(&c) {
            out.push(c);
        }
    }
    match word.split_once('=') {
        Some((opt, value)) if opt.starts_with('-') => add(&mut out, value),
        _ => add(&mut out, word),
    }
    // A response file (`gcc @args`, `javac @opts`): the program reads it.
    if let Some(file) = word.strip_prefix('@') {
        add(&mut out, file);
    }
    // A value attached to a short option (`-f.env`, `-xrm`).
    if !word.starts_with("--")
        && let Some(tail) = word.strip_prefix('-').and_then(|w| w.get(1..))
    {
        add(&mut out, tail);
    }
    for token in word.split_whitespace() {
        add(&mut out, token);
        // `name=@file`, `name@file` (HTTPie, curl's URL encoding) among the parts.
        for part in token.split([
            '=', ':', ',', '"', '\'', '(', ')', '<', '>', ';', '{', '}', '@',
        ]) {
            add(&mut out, part);
        }
    }
    out
}

/// A path a unit touches, resolved against its working directory.
fn resolve(word: &str, cwd: &Path, ctx: &ToolContext) -> PathBuf {
    if cwd == ctx.cwd {
        return ctx.resolve_path(word);
    }
    let mut c = ctx.clone();
    c.cwd = cwd.to_path_buf();
    c.resolve_path(word)
}

fn is_redirect(e: &Effect) -> bool {
    e.source.is_redirection()
}

/// Every path the line's units read and write.
pub(crate) fn touches(a: &Analysis, ctx: &ToolContext) -> Touches {
    let links = made_links(a, ctx);
    let mut t = Touches {
        uses: Vec::new(),
        unknown_paths: Vec::new(),
        absent_loads: Vec::new(),
        links: Vec::new(),
    };
    for (i, u) in a.units.iter().enumerate() {
        for e in u.effects() {
            let op = match e.kind {
                EffectKind::Read => Op::Read,
                EffectKind::Write
                    if is_redirect(e)
                        || e.source.option.is_some()
                        || e.source.is_output_operand()
                        || e.source.is_script_write() =>
                {
                    Op::Redirect
                }
                EffectKind::Write => Op::Write,
                _ => continue,
            };
            let Some(v) = &e.value else {
                // A program that writes where it pleases is covered by a rule for it; a
                // redirection or an option whose file cannot be known is not.
                if is_redirect(e) || e.source.option.is_some() {
                    t.unknown_paths.push(i);
                }
                continue;
            };
            if v == "-" || v.is_empty() {
                continue;
            }
            let path = resolve(v, &u.cwd, ctx);
            if ["/dev/null", "/dev/stdout", "/dev/stderr"]
                .iter()
                .any(|d| path == Path::new(d))
                || path.starts_with("/dev/fd")
            {
                continue;
            }
            let name = if is_redirect(e) {
                u.program().to_owned()
            } else {
                e.source
                    .program
                    .split(' ')
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            };
            // `..` after a symbolic link: the kernel reaches the file from where the link
            // leads (`cat link/../../.env`); that file is used too.
            let raw = if Path::new(v).is_absolute() {
                PathBuf::from(v)
            } else {
                u.cwd.join(v)
            };
            let mut physical = tool_core::resolve_physical(&raw).filter(|p| *p != path);
            // `..` after a link the line makes (`ln -s secrets/a l; cat l/../key.pem`): the
            // kernel goes up from where the link leads.
            for (unit, link, target) in &links {
                if *unit != i
                    && let Ok(rest) = raw.strip_prefix(link)
                    && rest
                        .components()
                        .any(|c| c == std::path::Component::ParentDir)
                {
                    physical = Some(tool_core::normalize(&target.join(rest)));
                }
            }
            if e.source.is_loaded_where_it_runs() && std::fs::symlink_metadata(&raw).is_err() {
                t.absent_loads.push(PathUse {
                    unit: i,
                    command: name,
                    path,
                    op,
                    redirect: false,
                    by_option: e.source.option.is_some(),
                });
                continue;
            }
            t.uses.push(PathUse {
                unit: i,
                command: name.clone(),
                path,
                op,
                redirect: is_redirect(e),
                by_option: e.source.option.is_some(),
            });
            // A directory that is one of several (`CDPATH`): the path from each, for the
            // deny rules (the unit is not certain, so nothing is allowed through them).
            if !Path::new(v).is_absolute() && !v.starts_with('~') {
                for c in &u.cwd_candidates {
                    t.uses.push(PathUse {
                        unit: i,
                        command: name.clone(),
                        path: resolve(v, c, ctx),
                        op,
                        redirect: is_redirect(e),
                        by_option: e.source.option.is_some(),
                    });
                }
            }
            if let Some(physical) = physical {
                t.uses.push(PathUse {
                    unit: i,
                    command: name,
                    path: physical,
                    op,
                    redirect: is_redirect(e),
                    by_option: e.source.option.is_some(),
                });
            }
        }
    }
    // A write through a link the line itself makes (`ln -s .git/hooks/pre-commit x && ... > x`)
    // writes the link's target too; a read through one (`ln -s ~/.ssh k && grep -r . k`)
    // reads it.
    t.links = links;
    let through: Vec<PathUse> = t
        .uses
        .iter()
        .filter_map(|p| {
            let path = t
                .through_links(&p.path, Some(p.unit), ctx)
                .into_iter()
                .next()?;
            Some(PathUse { path, ..p.clone() })
        })
        .collect();
    t.uses.extend(through);
    t
}

/// The links `ln` units of the line make: `(unit, link, what it leads to)`, absolute. A
/// symbolic link's target is read from the link's directory, a hard link's from the unit's.
fn made_links(a: &Analysis, ctx: &ToolContext) -> Vec<(usize, PathBuf, PathBuf)> {
    made_links_as_spelled(a, ctx)
        .into_iter()
        .map(|(i, link, target)| (i, same_root(&link), same_root(&target)))
        .collect()
}

/// [`made_links`], the paths as the line spells them.
fn made_links_as_spelled(a: &Analysis, ctx: &ToolContext) -> Vec<(usize, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for (i, u) in a.units.iter().enumerate() {
        if u.program() == "cp" {
            copied_links(i, u, ctx, &mut out);
            continue;
        }
        if u.program() != "ln" {
            continue;
        }
        let mut symbolic = false;
        let mut dir_opt: Option<String> = None;
        let mut words: Vec<&str> = Vec::new();
        let mut args = u.argv.iter().skip(1);
        let mut options_done = false;
        while let Some(w) = args.next() {
            if options_done || !w.starts_with('-') || w == "-" {
                words.push(w);
                continue;
            }
            if w == "--" {
                options_done = true;
            } else if w == "--target-directory" {
                dir_opt = args.next().cloned();
            } else if let Some(d) = w.strip_prefix("--target-directory=") {
                dir_opt = Some(d.to_owned());
            } else if w == "--symbolic" {
                symbolic = true;
            } else if !w.starts_with("--") {
                // Short options, bundled (`-sf`, `-st DIR`, `-tDIR`); `-S SUFFIX` takes a value.
                let (flags, valued) = short_bundle(w, &['t', 'S'], &mut args);
                symbolic |= flags.contains('s');
                if let Some(('t', value)) = valued {
                    dir_opt = value;
                }
            }
        }
        let (targets, into): (Vec<&str>, Option<PathBuf>) = match (&dir_opt, words.as_slice()) {
            (Some(d), ts) => (ts.to_vec(), Some(resolve(d, &u.cwd, ctx))),
            (None, [t]) => (vec![*t], Some(u.cwd.clone())),
            (None, [ts @ .., last]) => {
                let last_path = resolve(last, &u.cwd, ctx);
                // A link there now to a directory: `ln -sfn` (or `-T`, or after the line
                // removed it) replaces the link itself; without, the link is made inside.
                // Both are taken.
                if ts.len() == 1
                    && last_path.is_dir()
                    && std::fs::symlink_metadata(&last_path).is_ok_and(|m| m.is_symlink())
                {
                    out.push((
                        i,
                        last_path.clone(),
                        link_target(ts[0], &last_path, symbolic, u, ctx),
                    ));
                }
                if ts.len() > 1 || last_path.is_dir() {
                    (ts.to_vec(), Some(last_path))
                } else {
                    out.push((
                        i,
                        last_path.clone(),
                        link_target(ts[0], &last_path, symbolic, u, ctx),
                    ));
                    (Vec::new(), None)
                }
            }
            (None, []) => (Vec::new(), None),
        };
        if let Some(into) = into {
            for t in targets {
                let name = Path::new(t)
                    .file_name()
                    .map(PathBuf::from)
                    .unwrap_or_default();
                let link = into.join(name);
                out.push((i, link.clone(), link_target(t, &link, symbolic, u, ctx)));
            }
        }
    }
    out
}

/// The links a `cp` unit makes: `cp -s SRC DST` makes DST a link to SRC (`-rs`: a tree of
/// links to SRC's files, taken as DST leading to SRC); `cp -P`/`-d`/`-a` copies a link as a
/// link, so DST leads where SRC does (SRC a link there now, or one the line made before).
fn copied_links(i: usize, u: &Unit, ctx: &ToolContext, out: &mut Vec<(usize, PathBuf, PathBuf)>) {
    let mut symbolic = false;
    // `-P`, `-d`, `-a`, and `-r`/`-R` without `-L`: GNU cp copies a link as a link.
    let mut keeps_links = false;
    let mut follows = false;
    let mut into: Option<String> = None;
    let mut words: Vec<&str> = Vec::new();
    let mut options_done = false;
    let mut args = u.argv.iter().skip(1);
    while let Some(w) = args.next() {
        if options_done || !w.starts_with('-') || w == "-" {
            words.push(w);
        } else if w == "--" {
            options_done = true;
        } else if let Some(long) = w.strip_prefix("--") {
            symbolic |= long == "symbolic-link";
            keeps_links |= matches!(long, "no-dereference" | "archive" | "recursive")
                || long.starts_with("preserve=") && long.contains("links");
            follows |= long == "dereference";
            if long == "target-directory" {
                into = args.next().cloned();
            } else if let Some(d) = long.strip_prefix("target-directory=") {
                into = Some(d.to_owned());
            } else if long == "suffix" {
                args.next();
            }
        } else {
            // Short options, bundled; `-t DIR` and `-S SUFFIX` take the rest or the next word.
            let (flags, valued) = short_bundle(w, &['t', 'S'], &mut args);
            symbolic |= flags.contains('s');
            keeps_links |= flags.contains(['P', 'd', 'a', 'r', 'R']);
            follows |= flags.contains('L');
            if let Some(('t', value)) = valued {
                into = value;
            }
        }
    }
    let keeps_links = keeps_links && !follows;
    // The sources and where each lands.
    let (sources, dir): (Vec<&str>, Option<PathBuf>) = match (&into, words.as_slice()) {
        (Some(d), srcs) => (srcs.to_vec(), Some(resolve(d, &u.cwd, ctx))),
        (None, [src, dst]) => {
            let dst_path = resolve(dst, &u.cwd, ctx);
            if dst_path.is_dir() {
                (vec![*src], Some(dst_path))
            } else {
                push_copied(i, u, ctx, src, dst_path, symbolic, keeps_links, out);
                return;
            }
        }
        (None, [srcs @ .., dst]) if srcs.len() > 1 => {
            (srcs.to_vec(), Some(resolve(dst, &u.cwd, ctx)))
        }
        _ => return,
    };
    if let Some(dir) = dir {
        for src in sources {
            let name = Path::new(src).file_name().unwrap_or_default();
            push_copied(i, u, ctx, src, dir.join(name), symbolic, keeps_links, out);
        }
    }
}

/// A bundle of short options (`-rs`, `-st DIR`, `-tDIR`): the letters before the first of
/// `valued`, and that one with its value (the rest of the word, else the next word).
fn short_bundle<'a>(
    word: &str,
    valued: &[char],
    args: &mut impl Iterator<Item = &'a String>,
) -> (String, Option<(char, Option<String>)>) {
    let body = word.strip_prefix('-').unwrap_or(word);
    for (k, c) in body.char_indices() {
        if valued.contains(&c) {
            let rest = &body[k + c.len_utf8()..];
            let value = if rest.is_empty() {
                args.next().cloned()
            } else {
                Some(rest.to_owned())
            };
            return (body[..k].to_owned(), Some((c, value)));
        }
    }
    (body.to_owned(), None)
}

/// One link `cp` makes at `dst` from `src` (see [`copied_links`]).
#[allow(clippy::too_many_arguments)]
fn push_copied(
    i: usize,
    u: &Unit,
    ctx: &ToolContext,
    src: &str,
    dst: PathBuf,
    symbolic: bool,
    keeps_links: bool,
    out: &mut Vec<(usize, PathBuf, PathBuf)>,
) {
    let src_path = resolve(src, &u.cwd, ctx);
    if symbolic {
        out.push((i, dst, src_path));
        return;
    }
    if keeps_links {
        let made = out
            .iter()
            .rev()
            .find(|(_, link, _)| *link == src_path)
            .map(|(_, _, t)| t.clone());
        let there = std::fs::read_link(&src_path)
            .ok()
            .map(|t| src_path.parent().unwrap_or(Path::new("/")).join(t));
        if let Some(target) = made.or(there) {
            out.push((i, dst, tool_core::normalize(&target)));
        }
    }
}

fn link_target(target: &str, link: &Path, symbolic: bool, u: &Unit, ctx: &ToolContext) -> PathBuf {
    if symbolic && !target.starts_with('/') {
        let dir = link.parent().unwrap_or(Path::new("/"));
        resolve(target, dir, ctx)
    } else {
        resolve(target, &u.cwd, ctx)
    }
}

/// The forms of every unit rules are matched against, for deny and ask.
pub(crate) fn match_forms(a: &Analysis) -> Vec<String> {
    a.units.iter().flat_map(unit_forms).collect()
}

/// A unit's forms: its rule words (argv from the program's basename on, git's global options
/// dropped) and, when they differ, its argv as written (with the program's basename).
pub(crate) fn unit_forms(u: &Unit) -> Vec<String> {
    if u.is_bare() {
        return Vec::new();
    }
    let rw = u.rule_words().join(" ");
    let argv = std::iter::once(u.program())
        .chain(u.argv[1..].iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let mut forms = if argv == rw { vec![rw] } else { vec![argv, rw] };
    // A program named by its path, as written (`Bash(./deploy.sh:*)` denies `./deploy.sh`
    // wherever the line runs it: after `&&`, in a subshell, under `env`).
    if u.argv[0] != u.program() {
        forms.push(u.argv.join(" "));
    }
    forms
}

/// How one unit stands towards allow rules: the words a rule must match, when a rule may allow
/// it at all (known words, only inert assignments), and whether only a rule naming the
/// program's path as written may (a program named by a path outside the system directories:
/// `Bash(./run.sh:*)` allows the project's `./run.sh`, never a `run.sh` elsewhere, and no
/// rule without that literal first word allows it).
fn unit_allow_form(u: &Unit, ctx: &ToolContext) -> Option<(String, bool)> {
    if !u.certain || u.is_bare() {
        return None;
    }
    if u.assignments.iter().any(|a| !inert_assignment(&a.name)) {
        return None;
    }
    let program = u.argv.first()?;
    let by_path = !trusted_program_name(program);
    // A relative path means what the rule meant only where the rule was written: the path
    // from the unit's directory is the path from the project root.
    if by_path
        && !Path::new(program).is_absolute()
        && !(u.cwd_certain
            && tool_core::normalize(&u.cwd.join(program))
                == tool_core::normalize(&ctx.project_root.join(program)))
    {
        return None;
    }
    let mut words = u.rule_words();
    if by_path && let Some(first) = words.first_mut() {
        // The rule must match the path as written, not its last component.
        first.clone_from(program);
    }
    Some((words.join(" "), by_path))
}

/// Whether an allow rule's pattern starts with `program` exactly as written.
fn names_program(e: &RuleEntry, program: &str) -> bool {
    matches!(&e.matcher, crate::policy::RuleMatcher::Shell(p) if p.first_word() == Some(program))
}

/// Whether an allow rule that covers the unit also names each option that makes the unit do
/// more than the use the rule's words name. A rule that names more than the program allows a
/// use of it (`Bash(perl -c:*)`, a syntax check; `Bash(git apply --check:*)`, a check;
/// `Bash(sed -n:*)`, printing), not what an option it does not name adds: code handed in
/// (`perl -c -e 'BEGIN { system ... }'`, `node --test -r ./x.js`), the program's own writes
/// turned back on (`git apply --check --apply`), files changed in place (`sed -n -i`), the
/// network or the system (`pytest -q --pastebin=all`). A rule with only the program's name,
/// or the whole command, names everything. `at` is where the unit's program stands among the
/// rule's words (after the wrappers that start it: `Bash(timeout 60 perl -c:*)`).
fn names_code_options(e: &RuleEntry, u: &Unit, at: usize, ctx: &ToolContext) -> bool {
    let crate::policy::RuleMatcher::Shell(pattern) = &e.matcher else {
        return true;
    };
    let (words, rest) = pattern.literal_words();
    let named = words.get(at + 1..).unwrap_or_default();
    // The whole command, or the program with anything after it, names everything; a rule
    // that constrains what follows (`Bash(python3 *.py)`) names no option it does not spell
    // out.
    if rest == crate::shell_rule::Rest::Nothing
        || (named.is_empty() && rest == crate::shell_rule::Rest::Anything)
    {
        return true;
    }
    let by_named = |option: Option<&str>| option.is_none_or(|o| named.contains(&o));
    let options_named = u.effects().all(|e| match e.kind {
        EffectKind::RunsCode => e.value.is_none() || by_named(e.source.option.as_deref()),
        EffectKind::Network | EffectKind::System => by_named(e.source.option.as_deref()),
        _ => true,
    }) && by_named(u.interpretation.in_place_by.as_deref());
    options_named && own_writes_named(words.get(at..).unwrap_or_default(), u, ctx)
}

/// Whether the program's own writes (not those of its operands or options: `git apply`
/// writing what its patch names) are ones the rule's words make too: an option the rule
/// does not name may turn them back on (`Bash(git apply --check:*)` allows a check, not
/// `git apply --check --apply`).
fn own_writes_named(words: &[&str], u: &Unit, ctx: &ToolContext) -> bool {
    let own = |e: &tool_shell::Effect| {
        e.kind == EffectKind::Write
            && e.source.option.is_none()
            && e.source.detail.starts_with("program:")
    };
    if words.len() < 2 || !u.effects().any(own) {
        return true;
    }
    let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    let line = tool_core::sandbox::shell_line(&words);
    let env = tool_shell::analyze::ShellEnv {
        cwd: u.cwd.clone(),
        home: ctx.home.clone(),
        glob_fs: false,
    };
    let a = tool_shell::analyze::analyze(&line, &env);
    // Words that do not read as the same program on their own say nothing either way.
    match a.units.first() {
        Some(r) if a.units.len() == 1 && r.interpretation.path == u.interpretation.path => {
            r.effects().any(own)
        }
        _ => true,
    }
}

/// May the unit's effects stand under a rule that covers the program? Effects that run other
/// commands are decided as units of their own; unknown code is not covered; options the
/// database does not know (for a program it knows) are not covered.
fn effects_covered(u: &Unit) -> bool {
    let known_program = !u.interpretation.path.is_empty();
    u.unknown.is_empty()
        && u.effects().all(|e| match e.kind {
            EffectKind::Unknown => !known_program,
            _ => true,
        })
}

/// Whether unit `index` runs its project's own code (`make`, `cargo check`, `pytest`, `npm
/// test`: code no word of the line names) where another unit of the line writes a file
/// (`printf ... > build.rs && cargo check`, `cat > tests/conftest.py <<EOF ... pytest`): what
/// runs is then, possibly, what the line wrote, which no rule that allows the program
/// allowed.
fn runs_planted_code(index: usize, a: &Analysis, t: &Touches, ctx: &ToolContext) -> bool {
    let u = &a.units[index];
    // (Python's `-m` looks for the module where it runs first: `pip.py` there is `-m pip`.)
    let runs_project = u.effects().any(|e| {
        e.kind == EffectKind::RunsCode
            && (e.value.is_none()
                || (e.source.program == "python" && e.source.option.as_deref() == Some("-m")))
    });
    if !runs_project {
        return false;
    }
    // The units that run it make files of their own (`flock .lock make`: a lock, not code);
    // their redirections are still writes of the line (`sh -c '...; make' > Makefile`).
    let mut carriers = Vec::new();
    let mut at = index;
    while let Origin::Carried { parent, .. } = &a.units[at].origin {
        if carriers.contains(parent) || *parent >= a.units.len() {
            break;
        }
        carriers.push(*parent);
        at = *parent;
    }
    t.writes().any(|w| {
        w.unit != index
            && (w.op == Op::Redirect || !carriers.contains(&w.unit))
            && meets(&w.path, &u.cwd, ctx)
    })
}

/// How one unit stands on its own: allowed by a rule (`Some(Some(rule))`), allowed as a
/// read-only command or, in acceptEdits mode, as a file edit inside the working directories
/// (`Some(None)`), or not allowed (`None`). Paths are checked by the caller.
pub(crate) fn unit_allowed<'a>(
    index: usize,
    a: &Analysis,
    t: &Touches,
    ctx: &ToolContext,
    allow_rules: &dyn Fn(&str) -> Vec<&'a RuleEntry>,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> Option<Option<&'a RuleEntry>> {
    let u = &a.units[index];
    // Every write must be permitted on its own, through a shell redirection or through the
    // program's own options or operands (`sort -o`, `uniq IN OUT`, `git diff --output`,
    // `perl -i`): the user allowed the program, not edits of the project's files without a
    // prompt (CONTRACT item 6). Claude Code 2.1.332 runs `sort -o x` under `Bash(sort:*)`;
    // toolgate asks (pm_bash_option_writes differs on purpose).
    if !writes_stand(index, a, t, ctx, redirect_ok) {
        return None;
    }
    let allow_form = unit_allow_form(u, ctx);
    if let Some(e) = own_rule(u, allow_form.as_ref(), allow_rules, ctx, &|_| true) {
        return Some(Some(e));
    }
    if let Some(e) = allowed_with_parent(index, a, t, ctx, allow_rules, redirect_ok) {
        return Some(Some(e));
    }
    let form = allow_form.filter(|(_, by_path)| !by_path).map(|(f, _)| f);
    // A wrapper that adds nothing of its own stands or falls with what it runs.
    if form.is_some() && INERT_WRAPPERS.contains(&u.program()) && effects_covered(u) {
        let runs_child = a
            .units
            .iter()
            .any(|c| matches!(&c.origin, Origin::Carried { parent, .. } if *parent == index));
        if runs_child {
            return Some(None);
        }
    }
    if tool_shell::reads_only(u) {
        return Some(None);
    }
    // acceptEdits: `mkdir touch rm rmdir mv cp sed` on paths inside the working directories
    // (none protected); `mv` and `cp` only without options.
    let name = form.as_deref().and_then(|f| f.split(' ').next());
    if ctx.permission_mode == tool_core::PermissionMode::AcceptEdits
        && let Some(name) = name.filter(|n| FILE_EDITORS.contains(n))
        && effects_covered(u)
    {
        let has_option = u.argv.iter().skip(1).any(|w| w.starts_with('-'));
        let mine: Vec<&PathUse> = t.uses.iter().filter(|p| p.unit == index).collect();
        let paths_ok = !mine.is_empty()
            && mine.iter().all(|p| {
                crate::path_rule::inside_working_dirs(ctx, &p.path)
                    && crate::protected::protected_at(&p.path, ctx).is_none()
            });
        if paths_ok && !(matches!(name, "mv" | "cp") && has_option) {
            return Some(None);
        }
    }
    None
}

/// Whether unit `index`'s redirections are each permitted and it runs no code the line
/// planted: what any rule that allows it presumes.
fn writes_stand(
    index: usize,
    a: &Analysis,
    t: &Touches,
    ctx: &ToolContext,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> bool {
    !t.unknown_paths.contains(&index)
        && t.uses
            .iter()
            .filter(|p| p.unit == index && p.op == Op::Redirect)
            .all(|p| redirect_ok(&p.path))
        && !runs_planted_code(index, a, t, ctx)
}

/// The first allow rule that matches the unit by its own words (`allow_form`, from
/// [`unit_allow_form`]), covers its effects and the code options it is given, and passes
/// `also`.
fn own_rule<'a>(
    u: &Unit,
    allow_form: Option<&(String, bool)>,
    allow_rules: &dyn Fn(&str) -> Vec<&'a RuleEntry>,
    ctx: &ToolContext,
    also: &dyn Fn(&RuleEntry) -> bool,
) -> Option<&'a RuleEntry> {
    let (form, by_path) = allow_form?;
    if !effects_covered(u) {
        return None;
    }
    let program = u.argv.first().map_or("", String::as_str);
    allow_rules(form).into_iter().find(|e| {
        (!by_path || names_program(e, program)) && names_code_options(e, u, 0, ctx) && also(e)
    })
}

/// A command another unit runs with that unit's last words (`npx jest --ci`, `timeout 60
/// pytest -q`, `timeout 60 npx jest --ci`): a rule that allows one of the units that start it
/// (its parent, or one further out through programs that each run the next with their last
/// words) by that unit's own words allows it too when the rule's literal words, each one of
/// that unit's, reach the program (`Bash(npx jest:*)`, `Bash(timeout 60 pytest:*)`,
/// `Bash(timeout 60 npx jest:*)`; not `Bash(npx:*)`, which names no program npx runs, nor
/// `Bash(timeout 60 nice:*)` for what nice runs). Its own effects are checked as any unit's.
fn allowed_with_parent<'a>(
    index: usize,
    a: &Analysis,
    t: &Touches,
    ctx: &ToolContext,
    allow_rules: &dyn Fn(&str) -> Vec<&'a RuleEntry>,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> Option<&'a RuleEntry> {
    let u = &a.units[index];
    if !effects_covered(u) {
        return None;
    }
    // A program named by a path must be the one the words name from the project root.
    unit_allow_form(u, ctx)?;
    let mut at_unit = index;
    // Parents come first; anything else is not followed.
    while let Origin::Carried {
        parent,
        by_shell: false,
        ..
    } = &a.units[at_unit].origin
        && *parent < at_unit
    {
        at_unit = *parent;
        let p = &a.units[at_unit];
        let words = p.rule_words();
        let at = words.len().checked_sub(u.argv.len())?;
        if at == 0 || words[at..] != u.argv[..] {
            return None;
        }
        if !writes_stand(at_unit, a, t, ctx, redirect_ok) {
            continue;
        }
        // A rule that allows this unit by its own words (not through a wrapper of its own)
        // and whose literal words reach the program.
        let reaches = |e: &RuleEntry| {
            let crate::policy::RuleMatcher::Shell(pattern) = &e.matcher else {
                return false;
            };
            // Word for word: a quoted word with a space in it is one word, not two of the
            // rule's.
            let (literal, rest) = pattern.literal_words();
            let matches_words = if rest == crate::shell_rule::Rest::Nothing {
                literal.len() == words.len() && literal.iter().zip(&words).all(|(l, w)| l == w)
            } else {
                literal.len() <= words.len() && literal.iter().zip(&words).all(|(l, w)| l == w)
            };
            matches_words && literal.len() > at && names_code_options(e, u, at, ctx)
        };
        if let Some(e) = own_rule(
            p,
            unit_allow_form(p, ctx).as_ref(),
            allow_rules,
            ctx,
            &reaches,
        ) {
            return Some(e);
        }
    }
    None
}

/// Is every unit of the line allowed (see [`unit_allowed`])? Returns the rules used (empty
/// when no rule was needed).
pub(crate) fn all_units_allowed<'a>(
    a: &Analysis,
    t: &Touches,
    ctx: &ToolContext,
    allow_rules: &dyn Fn(&str) -> Vec<&'a RuleEntry>,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> Option<Vec<&'a RuleEntry>> {
    if a.units.is_empty()
        || a.background
        || a.has_substitution()
        || !a.problems.is_empty()
        || !a.parsed
    {
        return None;
    }
    let has_cd = a.units.iter().any(|u| u.program() == "cd");
    let has_git = a.units.iter().any(|u| u.program() == "git");
    if has_cd && has_git {
        return None;
    }
    let mut used = Vec::new();
    for (i, u) in a.units.iter().enumerate() {
        if u.argv.first().map(String::as_str) == Some("cd") {
            let inside = u.certain
                && u.redirects.is_empty()
                && u.argv.len() == 2
                && t.uses
                    .iter()
                    .filter(|p| p.unit == i)
                    .all(|p| crate::path_rule::inside_working_dirs(ctx, &p.path));
            if inside {
                continue;
            }
            return None;
        }
        used.extend(unit_allowed(i, a, t, ctx, allow_rules, redirect_ok)?);
    }
    Some(used)
}

/// Programs that create, change or remove the files they name, as Claude Code's path checks
/// and acceptEdits mode know them.
const FILE_EDITORS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// What Claude Code says a program does to the files it names, for the message of a path
/// outside the working directories.
const PATH_VERBS: &[(&str, &str)] = &[
    ("cd", "change directories to"),
    ("ls", "list files in"),
    ("find", "search files in"),
    ("mkdir", "create directories in"),
    ("touch", "create or modify files in"),
    ("rm", "remove files from"),
    ("rmdir", "remove directories from"),
    ("mv", "move files to/from"),
    ("cp", "copy files to/from"),
    ("cat", "concatenate files from"),
    ("head", "read the beginning of files from"),
    ("tail", "read the end of files from"),
    ("sort", "sort contents of files from"),
    ("uniq", "filter duplicate lines from files in"),
    ("wc", "count lines/words/bytes in files from"),
    ("cut", "extract columns from files in"),
    ("paste", "merge files from"),
    ("column", "format files from"),
    ("tr", "transform text from files in"),
    ("file", "examine file types in"),
    ("stat", "read file stats from"),
    ("diff", "compare files from"),
    ("awk", "process text from files in"),
    ("strings", "extract strings from files in"),
    ("hexdump", "display hex dump of files from"),
    ("od", "display octal dump of files from"),
    ("base64", "encode/decode files from"),
    ("nl", "number lines in files from"),
    ("grep", "search for patterns in files from"),
    ("rg", "search for patterns in files from"),
    ("sed", "edit files in"),
    ("git", "access files with git from"),
    ("jq", "process JSON from files in"),
    ("sha256sum", "compute SHA-256 checksums for files in"),
    ("sha1sum", "compute SHA-1 checksums for files in"),
    ("md5sum", "compute MD5 checksums for files in"),
];

/// The message for the first path a unit of `units` (all units when `None`) uses outside the
/// working directories that no allow rule covers (`covered`): a read is "blocked", a write
/// "needs approval". Only programs Claude Code's path checks know, and redirections, count.
pub(crate) fn outside_message(
    t: &Touches,
    ctx: &ToolContext,
    units: Option<&[usize]>,
    covered: &dyn Fn(Op, &Path) -> bool,
) -> Option<String> {
    let dirs = quoted_dirs(ctx);
    t.uses.iter().find_map(|u| {
        if units.is_some_and(|us| !us.contains(&u.unit)) {
            return None;
        }
        let verb = PATH_VERBS
            .iter()
            .find(|(c, _)| *c == u.command)
            .map(|(_, v)| *v);
        if (verb.is_none() && u.op != Op::Redirect)
            || crate::path_rule::inside_working_dirs(ctx, &u.path)
            || covered(u.op, &u.path)
        {
            return None;
        }
        let needs_approval = format!(
            "needs approval. The path is outside the working directories for this session ({dirs}). Allowing runs the command as written."
        );
        Some(match (u.op, verb) {
            (Op::Redirect, _) if u.redirect => {
                format!(
                    "Output redirection to '{}' {needs_approval}",
                    u.path.display()
                )
            }
            (Op::Write | Op::Redirect, _) => format!("{} in '{}' {needs_approval}", u.command, u.path.display()),
            (Op::Read, Some(verb)) => format!(
                "{} in '{}' was blocked. For security, {} may only {verb} the allowed working directories for this session: {dirs}.",
                u.command,
                u.path.display(),
                ctx.product_name
            ),
            (Op::Read, None) => return None,
        })
    })
}

/// The working directories as Claude Code lists them in messages: `'a', 'b'`.
fn quoted_dirs(ctx: &ToolContext) -> String {
    ctx.working_dirs
        .iter()
        .map(|d| format!("'{}'", d.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Claude Code's text for a compound line whose `parts` need approval.
pub(crate) fn compound_message(parts: &[String]) -> String {
    let (noun, verb) = if parts.len() == 1 {
        ("part", "requires")
    } else {
        ("parts", "require")
    };
    format!(
        "This Bash command contains multiple operations. The following {noun} {verb} approval: {}",
        parts.join(", ")
    )
}

/// The first deny rule that a path the line touches falls under: reads against Read rules,
/// writes against Edit and Read rules.
pub(crate) fn denied_path<'a>(
    t: &Touches,
    find: &dyn Fn(PathFamily, &Path) -> Option<&'a RuleEntry>,
    names: &dyn Fn(PathFamily) -> Vec<String>,
) -> Option<(&'a RuleEntry, PathBuf)> {
    // A path that is still a glob pattern (it matched nothing when the line was read) is
    // checked for every denied name it could match once files appear.
    let spellings = |family: PathFamily, p: &Path| -> Vec<PathBuf> {
        let mut out = vec![p.to_path_buf()];
        if let (Some(g), Some(dir)) = (p.file_name().and_then(|n| n.to_str()), p.parent())
            && (g.contains(['*', '?', '[']) || ["@(", "+(", "!("].iter().any(|x| g.contains(x)))
        {
            out.push(dir.join(g.replace(['*', '?'], "x")));
            out.extend(
                names(family)
                    .into_iter()
                    .filter(|n| tool_shell::expand::pattern_could_match(g, n))
                    .map(|n| dir.join(n)),
            );
        }
        out
    };
    for p in t.reads() {
        for s in spellings(PathFamily::Read, p) {
            if let Some(e) = find(PathFamily::Read, &s) {
                return Some((e, s));
            }
        }
    }
    for u in t.writes() {
        for s in spellings(PathFamily::Edit, &u.path)
            .into_iter()
            .chain(spellings(PathFamily::Read, &u.path))
        {
            if let Some(e) = find(PathFamily::Edit, &s).or_else(|| find(PathFamily::Read, &s)) {
                return Some((e, s));
            }
        }
    }
    None
}

/// Programs that create, change or remove the files they name.
const FILE_WRITERS: &[&str] = &["touch", "mkdir", "rm", "rmdir", "mv", "cp"];

/// The text Claude Code shows when a command line that nothing allowed would write inside the
/// working directories: naming the redirect target, or the writing program and its operand.
///
/// A path an Edit allow rule covers is not named: the path itself needs no approval, and
/// Claude Code then says only "This command requires approval" (recorded: explore seed 9,
/// index 138).
pub(crate) fn write_ask_message(
    a: &Analysis,
    t: &Touches,
    ctx: &ToolContext,
    covered: &dyn Fn(Op, &Path) -> bool,
) -> Option<String> {
    let dirs = quoted_dirs(ctx);
    let tail = format!(
        "needs approval. The path is inside the working directories for this session ({dirs}), and {} asks before a shell command creates, changes or removes files there.",
        ctx.product_name
    );
    let inside = |p: &Path| crate::path_rule::inside_working_dirs(ctx, p);
    if let Some(p) = t
        .uses
        .iter()
        .find(|u| u.redirect && inside(&u.path) && !covered(u.op, &u.path))
        .map(|u| &u.path)
    {
        return Some(format!("Output redirection to '{}' {tail}", p.display()));
    }
    for (i, u) in a.units.iter().enumerate() {
        let name = u.program();
        if !FILE_WRITERS.contains(&name) || !matches!(u.origin, Origin::Line) {
            continue;
        }
        let operands: Vec<&PathUse> = t
            .uses
            .iter()
            .filter(|p| p.unit == i && p.op == Op::Write)
            .collect();
        let target = if matches!(name, "mv" | "cp") {
            operands.last()
        } else {
            operands.first()
        };
        if let Some(p) = target
            .map(|p| &p.path)
            .filter(|p| inside(p) && !covered(Op::Write, p))
        {
            return Some(format!("{name} in '{}' {tail}", p.display()));
        }
    }
    None
}

/// Programs and options that remove what they name.
fn removes(u: &Unit, e: &Effect) -> bool {
    e.kind == EffectKind::Write
        && !is_redirect(e)
        && (matches!(u.program(), "rm" | "rmdir" | "shred" | "unlink" | "mv")
            || e.source.option.as_deref() == Some("-delete"))
}

/// A removal whose target is the file-system root, the home directory, the project root or a
/// parent of it, or cannot be known: asked in every mode.
pub(crate) fn catastrophic_removal(a: &Analysis, ctx: &ToolContext) -> Option<String> {
    let roots = [
        PathBuf::from("/"),
        ctx.home.clone(),
        ctx.project_root.clone(),
    ];
    for u in &a.units {
        let unknown = || {
            Some(format!(
                "`{}` removes paths that cannot be known before it runs",
                u.text
            ))
        };
        for e in u.effects().filter(|e| removes(u, e)) {
            let Some(v) = &e.value else {
                return unknown();
            };
            if !u.certain && !u.argv.iter().skip(1).any(|w| !w.starts_with('-')) {
                return unknown();
            }
            let p = resolve(v, &u.cwd, ctx);
            // Under every spelling (`/proc/self/root/home/u` is the home directory); `rm -rf *`
            // in one of them empties it.
            for c in crate::path_rule::candidates(&p, ctx) {
                let emptied = u.text.contains('*')
                    && c.parent()
                        .is_some_and(|d| roots.iter().any(|r| r.starts_with(d)));
                if roots.iter().any(|r| r.starts_with(&c)) || emptied {
                    return Some(format!("`{}` removes {}", u.text, p.display()));
                }
            }
        }
        if !u.certain && matches!(u.program(), "rm" | "rmdir" | "shred") {
            return unknown();
        }
    }
    None
}

/// Every argument that names a path (absolute, `~`, or with `..`, also after `--flag=`)
/// resolves inside a working directory or is `covered` by an allow rule.
pub(crate) fn args_inside(
    a: &Analysis,
    ctx: &ToolContext,
    covered: &dyn Fn(&Path) -> bool,
) -> bool {
    a.units.iter().all(|u| {
        // A program the database reads completely says which words are files: those are
        // checked, and the rest are data (`sed -n '/TODO/p'`, `awk '/x/'`).
        let read_completely = !u.interpretation.path.is_empty()
            && u.interpretation.is_known()
            && u.unknown.is_empty();
        if read_completely {
            let inside = |v: &str| {
                let p = resolve(v, &u.cwd, ctx);
                crate::path_rule::inside_working_dirs(ctx, &p) || covered(&p)
            };
            // Words it takes without the database saying what they are (`pytest
            // /elsewhere/test_x.py`, `prettier ~/x`) may be files it opens: those that
            // leave the working directories are too.
            let leaves = |c: &&str| c.starts_with(['/', '~']) || c.split('/').any(|s| s == "..");
            return u
                .effects()
                .filter(|e| matches!(e.kind, EffectKind::Read | EffectKind::Write))
                .filter_map(|e| e.value.as_deref())
                .filter(|v| *v != "/dev/null")
                .all(inside)
                && u.interpretation
                    .loose
                    .iter()
                    .flat_map(|w| path_candidates(w))
                    .filter(leaves)
                    .all(inside);
        }
        u.argv.iter().skip(1).all(|lit| {
            let value = lit
                .split_once('=')
                .filter(|(k, _)| k.starts_with('-'))
                .map_or(lit.as_str(), |(_, v)| v);
            let pathish = value.starts_with('/')
                || value.starts_with('~')
                || value.split('/').any(|p| p == "..");
            if !pathish || value == "/dev/null" {
                return true;
            }
            let p = resolve(value, &u.cwd, ctx);
            crate::path_rule::inside_working_dirs(ctx, &p) || covered(&p)
        })
    })
}

/// The directories a unit changes throughout (`chmod -R DIR`, `rm -r DIR`, `mv DIR ...`): its
/// written operands that are directories now (a link to one is followed: the stricter reading).
pub(crate) fn tree_writes(a: &Analysis, t: &Touches) -> Vec<PathBuf> {
    t.uses
        .iter()
        .filter(|p| {
            p.op == Op::Write
                && a.units
                    .get(p.unit)
                    .is_some_and(|u| u.interpretation.tree_writes)
                && p.path.is_dir()
        })
        .map(|p| p.path.clone())
        .collect()
}

/// The directories below which a unit writes files its input names rather than its words
/// (`tar -x`, `unzip`, `patch`): what it writes, its working directory among them.
pub(crate) fn writes_below_roots(a: &Analysis, t: &Touches) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in &t.uses {
        if p.op == Op::Write
            && a.units
                .get(p.unit)
                .is_some_and(|u| u.interpretation.writes_below)
            && !out.contains(&p.path)
        {
            out.push(p.path.clone());
        }
    }
    out
}

/// Whether a write to `written` can change what is below `root`: one is below the other,
/// in any spelling of either (as given, and with their links resolved).
pub(crate) fn meets(written: &Path, root: &Path, ctx: &ToolContext) -> bool {
    let roots = crate::path_rule::candidates(root, ctx);
    crate::path_rule::candidates(written, ctx)
        .iter()
        .any(|w| roots.iter().any(|r| w.starts_with(r) || r.starts_with(w)))
}

/// The directories the units the command database calls recursive searches (`rg`, `grep -r`,
/// `find`, `ls -R`, `tree`, `du`...) walk: their directory operands, or the working directory
/// when none is given.
pub(crate) fn search_roots(a: &Analysis, t: &Touches) -> Vec<(usize, PathBuf)> {
    let mut out = Vec::new();
    for (i, u) in a.units.iter().enumerate() {
        if !u.interpretation.recursive {
            continue;
        }
        // Every operand that is not a plain file is a root (one that does not exist yet may
        // be a directory by the time the search runs).
        let mut roots: Vec<PathBuf> = t
            .uses
            .iter()
            .filter(|p| p.unit == i && p.op == Op::Read && !p.path.is_file())
            .map(|p| p.path.clone())
            .collect();
        // Only an operand says where to search: a file an option names (`grep -r -f PATTERNS`)
        // or the shell opens (`< FILE`) leaves the search where it runs.
        let has_file_operand = t
            .uses
            .iter()
            .any(|p| p.unit == i && p.op == Op::Read && !p.by_option && !p.redirect);
        if roots.is_empty() && !has_file_operand {
            roots.push(u.cwd.clone());
        }
        out.extend(roots.into_iter().map(|r| (i, r)));
    }
    out
}

/// Every word sequence of a line that could run as a command once the shell has done what the
/// analysis cannot follow (a variable, an array, `set --`, an alias, a trap, a string run as
/// code): each suffix of each unit's words and assignment values, and the same in the text of
/// every quoted string, read as a line of its own (two levels deep). For a line whose code
/// cannot all be known, deny rules are matched against all of them (CONTRACT item 7: deny
/// rules apply to whatever can be extracted).
/// Programs named by path in option and setting values (`-C linker=/usr/bin/curl`,
/// `--smtp-server=/usr/bin/curl`, `core.pager=!/usr/bin/curl`), as command forms: a value
/// that is a path to a program is that program, whoever reads it.
pub(crate) fn programs_in_values(a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    for u in &a.units {
        for w in u.argv.iter().skip(1) {
            let Some((_, value)) = w.split_once('=') else {
                continue;
            };
            let value = value.strip_prefix('!').unwrap_or(value);
            let mut parts = value.split_whitespace();
            let Some(first) = parts.next() else { continue };
            if !first.contains('/') || first.contains("://") {
                continue;
            }
            let name = first.rsplit('/').next().unwrap_or(first);
            if name.is_empty() {
                continue;
            }
            out.push(
                std::iter::once(name)
                    .chain(parts)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    out
}

pub(crate) fn possible_commands(a: &Analysis, command: &str, env: &ShellEnv) -> Vec<String> {
    let mut out = Vec::new();
    collect_possible(a, command, env, 0, &mut out);
    out.sort();
    out.dedup();
    out
}

const POSSIBLE_LIMIT: usize = 4096;

/// Characters other languages quote, call, index or separate with, before a word that may be
/// a command they run.
const CODE_PUNCTUATION: &str = "{}[]()<>`'\";:,=%|&*@$\\";

fn collect_possible(a: &Analysis, text: &str, env: &ShellEnv, depth: usize, out: &mut Vec<String>) {
    for u in &a.units {
        // Assignment values, arrays' elements included (`c=(curl -s x)`), as words; braces
        // expanded in words the shell did not read (a line that does not parse), one word per
        // alternative as bash makes them.
        let mut words: Vec<String> = Vec::new();
        for s in &u.assignments {
            if !s.elements.is_empty() {
                words.extend(s.elements.iter().cloned());
            } else if let Some(v) = s
                .value
                .as_deref()
                .or_else(|| s.raw.split_once('=').map(|(_, v)| v))
            {
                words.extend(v.split_whitespace().map(str::to_owned));
            }
        }
        for w in &u.argv {
            if a.parsed {
                words.push(w.clone());
            } else {
                words.extend(
                    tool_shell::expand::brace_alternatives(w)
                        .into_iter()
                        .filter(|w| !w.is_empty()),
                );
            }
        }
        for i in 0..words.len() {
            if out.len() >= POSSIBLE_LIMIT {
                return;
            }
            // The command `name` (a path's last component) would be with the words after.
            let as_command = |name: &str| -> Option<String> {
                let name = name.rsplit('/').next().unwrap_or(name);
                (!name.is_empty()).then(|| {
                    std::iter::once(name)
                        .chain(words[i + 1..].iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            };
            let Some(form) = as_command(&words[i]) else {
                continue;
            };
            out.push(form);
            // Code of another language names a command after its own punctuation
            // (`qx{rm -rf x}`, `os.execute[[rm x]]`, `\write18{rm x}`, `EXEC:rm x`,
            // `%pipe%curl`, `exec {rm} x`): each piece of the word after such a character
            // starts a possible command, with the pieces and the words after it.
            let pieces: Vec<&str> = words[i]
                .split(|c: char| c.is_whitespace() || CODE_PUNCTUATION.contains(c))
                .filter(|p| !p.is_empty())
                .collect();
            // The first piece starts a command already pushed, unless punctuation came first
            // (`{rm}`).
            let first = usize::from(!words[i].starts_with(|c: char| CODE_PUNCTUATION.contains(c)));
            if pieces.len() > first {
                let after: Vec<&str> = words[i + 1..]
                    .iter()
                    .flat_map(|w| {
                        w.split(|c: char| c.is_whitespace() || CODE_PUNCTUATION.contains(c))
                            .filter(|p| !p.is_empty())
                    })
                    .collect();
                for k in first..pieces.len() {
                    if out.len() >= POSSIBLE_LIMIT {
                        return;
                    }
                    out.push(
                        pieces[k..]
                            .iter()
                            .chain(after.iter())
                            .copied()
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                }
            }
            // A make recipe's line may start with `@` (not echoed), `+` (run even under
            // `make -n`) and `-` (errors ignored) before its command (`test:; @-curl ...`
            // written to a Makefile). (A word that starts with `-` alone is an option.)
            if words[i].starts_with(['@', '+'])
                && let Some(form) = as_command(words[i].trim_start_matches(['@', '+', '-']))
            {
                out.push(form);
            }
            // An option's or a setting's value may be a program too
            // (`-Dexec.executable=curl`, `ProxyCommand=curl x`), and so is what follows a `|`
            // where a program takes a pipe to a command for a file (`strace -o '|cmd'`,
            // sqlite3's `.output '|cmd'`).
            if let Some(piped) = words[i].trim_start().strip_prefix('|')
                && !piped.trim().is_empty()
                && !possible_in(piped, env, depth, out)
            {
                out.push(piped.trim().to_owned());
            }
            if let Some((_, value)) = words[i].split_once('=') {
                // A leading `!` makes a setting a shell command (git's and Mercurial's
                // aliases, `submodule.NAME.update`).
                let value = value.strip_prefix('!').unwrap_or(value);
                if value.contains(char::is_whitespace) {
                    if depth < 2 {
                        possible_in(value, env, depth, out);
                    }
                } else if let Some(form) = as_command(value) {
                    out.push(form);
                }
            }
        }
    }
    if depth >= 2 {
        return;
    }
    // Text fed on standard input (`read -r Q <<< curl; $Q`) may become a command too.
    let fed: Vec<String> = a
        .units
        .iter()
        .flat_map(|u| u.redirects.iter())
        .filter_map(|r| r.here.clone().flatten())
        .collect();
    // A default or alternative value (`${X:-curl}`, `${X:+rm}`) may be what a parameter
    // expands to: the line read with each such expansion as its value.
    let defaulted = with_default_values(text);
    // The bodies of command substitutions (`$( ... )`, `` `...` ``), read again on their own:
    // one the analysis could not take apart (a comment in it) still runs its commands.
    let substituted = substitution_bodies(text);
    for s in quoted_strings(text)
        .into_iter()
        .chain(fed)
        .chain(defaulted)
        .chain(substituted)
    {
        if s.trim().is_empty() || s.len() > 8192 {
            continue;
        }
        possible_in(&s, env, depth, out);
    }
}

/// The bodies of the command substitutions bash runs in `text`, outermost only: `$( ... )` to
/// its matching parenthesis, and `` `...` ``, where the shell expands them: not in single
/// quotes (but inside a `${...}`, whose offsets and words expand them even between single
/// quotes), not in a comment, not in a here-document whose delimiter is quoted.
pub(crate) fn substitution_bodies(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    let mut double = false;
    let mut braces = 0usize;
    // Quoted here-documents whose bodies start at the next line: their delimiters, in order.
    let mut pending: Vec<(String, bool)> = Vec::new();
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' => i += 2,
            b'\n' => {
                i += 1;
                for (delim, tabs) in std::mem::take(&mut pending) {
                    // Skip the body: lines up to the one that is the delimiter.
                    while i < b.len() {
                        let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                        let line = &text[i..end];
                        let line = if tabs {
                            line.trim_start_matches('\t')
                        } else {
                            line
                        };
                        i = (end + 1).min(b.len());
                        if line == delim {
                            break;
                        }
                    }
                }
            }
            b'\'' if !double && braces == 0 => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                double = !double;
                i += 1;
            }
            b'#' if !double
                && braces == 0
                && (i == 0
                    || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(')) =>
            {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'<' if !double
                && braces == 0
                && b.get(i + 1) == Some(&b'<')
                && b.get(i + 2) != Some(&b'<') =>
            {
                let mut j = i + 2;
                let tabs = b.get(j) == Some(&b'-');
                if tabs {
                    j += 1;
                }
                while j < b.len() && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                let from = j;
                while j < b.len()
                    && !matches!(
                        b[j],
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
                    )
                {
                    j += 1;
                }
                let word = &text[from..j];
                if word.contains(['\'', '"', '\\']) {
                    pending.push((word.replace(['\'', '"', '\\'], ""), tabs));
                }
                i = j;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                braces += 1;
                i += 2;
            }
            b'}' if braces > 0 => {
                braces -= 1;
                i += 1;
            }
            b'$' if b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') => {
                let mut depth = 0usize;
                let mut j = i + 1;
                while j < b.len() {
                    match b[j] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if let Some(body) = text.get(i + 2..j.min(b.len())) {
                    out.push(body.to_owned());
                }
                i = j + 1;
            }
            b'`' => {
                let end = text[i + 1..].find('`').map_or(b.len(), |e| i + 1 + e);
                if let Some(body) = text.get(i + 1..end) {
                    out.push(body.to_owned());
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// `text` with every `${NAME:-WORD}`, `${NAME-WORD}`, `${NAME:=WORD}`, `${NAME:+WORD}` (and
/// their forms without `:`) put as its WORD; `None` when it has none.
fn with_default_values(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        // The matching `}`, braces inside counted.
        let mut depth = 1usize;
        let mut end = None;
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            out.push_str(&rest[at..]);
            return changed.then_some(out);
        };
        let inner = &body[..end];
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let op = &inner[name_len..];
        let word = [":-", ":=", ":+", "-", "=", "+"]
            .iter()
            .find_map(|o| op.strip_prefix(o));
        match word {
            Some(w) if name_len > 0 => {
                out.push_str(w);
                changed = true;
            }
            _ => out.push_str(&rest[at..at + 2 + end + 1]),
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// The possible commands of `text` read as a line of its own, one level down; whether it
/// holds any command at all.
/// The commands the `package.json` scripts a package manager's command runs may be (`npm
/// test` runs `pretest`, `test` and `posttest`; a bare `npm install` runs `prepare`), read
/// from the package where the command runs. For deny rules only: what an allowed `npm test`
/// runs is its own business, but a denied program is denied whoever starts it.
pub(crate) fn package_script_commands(a: &Analysis, env: &ShellEnv) -> Vec<String> {
    let mut out = Vec::new();
    for u in &a.units {
        let Some(first) = u.argv.first() else {
            continue;
        };
        let manager = first.rsplit('/').next().unwrap_or(first);
        if !matches!(manager, "npm" | "pnpm" | "yarn" | "bun") {
            continue;
        }
        // The package: where it runs, or `--prefix DIR` (`-C DIR` for pnpm and yarn).
        let mut dir = u.cwd.clone();
        let mut words: Vec<&str> = Vec::new();
        let mut rest = u.argv[1..].iter();
        while let Some(w) = rest.next() {
            if let Some(d) = w.strip_prefix("--prefix=").or(w.strip_prefix("--dir=")) {
                dir = dir.join(d);
            } else if matches!(w.as_str(), "--prefix" | "-C" | "--dir" | "--cwd") {
                if let Some(d) = rest.next() {
                    dir = dir.join(d);
                }
            } else if w == "--" {
                break;
            } else if !w.starts_with('-') {
                words.push(w);
            }
        }
        let Some(scripts) = std::fs::read_to_string(dir.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("scripts").cloned())
        else {
            continue;
        };
        let cycle = |name: &str| vec![format!("pre{name}"), name.to_owned(), format!("post{name}")];
        let install = || {
            [
                "preinstall",
                "install",
                "postinstall",
                "prepublish",
                "preprepare",
                "prepare",
                "postprepare",
            ]
            .map(str::to_owned)
            .to_vec()
        };
        let names: Vec<String> = match words.first().copied() {
            None if manager != "npm" => install(),
            None => Vec::new(),
            Some("test" | "t" | "tst") => cycle("test"),
            Some("start") => cycle("start"),
            Some("stop") => cycle("stop"),
            Some("restart") => [cycle("restart"), cycle("stop"), cycle("start")].concat(),
            Some("run" | "run-script" | "rum" | "urn") => {
                words.get(1).map(|n| cycle(n)).unwrap_or_default()
            }
            Some("install" | "i" | "ci" | "add" | "rebuild" | "pack" | "publish") => install(),
            // `yarn NAME`, `pnpm NAME`, `bun run NAME`: a script of that name.
            Some(other) if manager != "npm" => cycle(other),
            Some(_) => Vec::new(),
        };
        for name in names {
            if let Some(text) = scripts.get(&name).and_then(serde_json::Value::as_str) {
                out.push(text.to_owned());
                possible_in(text, env, 0, &mut out);
            }
        }
    }
    out
}

fn possible_in(text: &str, env: &ShellEnv, depth: usize, out: &mut Vec<String>) -> bool {
    let inner = tool_shell::analyze::analyze(text, env);
    collect_possible(&inner, text, env, depth + 1, out);
    !inner.units.is_empty()
}

/// The contents of the quoted strings of `text` (`'...'`, `"..."`, `$'...'`), outermost only.
fn quoted_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' => {
                let mut s = String::new();
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    s.push(c);
                }
                out.push(s);
            }
            '"' => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(n) = chars.next() {
                                s.push(n);
                            }
                        }
                        '"' => break,
                        _ => s.push(c),
                    }
                }
                out.push(s);
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{literal_values, opened_literals, substitution_bodies};

    /// The substitutions bash runs: in double quotes and in a `${...}`'s words (single quotes
    /// there too), not in single quotes, a comment or a quoted here-document.
    #[test]
    fn substitutions_are_found_where_bash_expands_them() {
        for (text, want) in [
            ("echo $(id)", vec!["id"]),
            ("echo \"$(id) `pwd`\"", vec!["id", "pwd"]),
            ("echo \"${HOME:'$(cat k)'}\"", vec!["cat k"]),
            ("echo '$(id)'", vec![]),
            ("echo $'$(id)'", vec![]),
            ("echo hi # $(id)", vec![]),
            ("echo a#$(id)", vec!["id"]),
            ("cat <<'EOF'\n$(id)\nEOF\necho $(pwd)", vec!["pwd"]),
            ("cat <<E\"OF\"\n$(id)\nEOF", vec![]),
            ("cat <<EOF\n$(id)\nEOF", vec!["id"]),
            ("x=$(a $(b))", vec!["a $(b)"]),
        ] {
            assert_eq!(substitution_bodies(text), want, "{text}");
        }
    }

    /// What code's literals stand for: escapes decoded, literals written side by side joined,
    /// `%XX` in a URL decoded; a literal written plainly adds nothing.
    #[test]
    fn literals_are_read_for_what_they_stand_for() {
        let values = |code: &str| -> Vec<String> {
            literal_values(code).into_iter().map(|(v, _)| v).collect()
        };
        for (code, want) in [
            (r#"open("/home/u/.ss" "h/id_rsa")"#, "/home/u/.ssh/id_rsa"),
            (
                r#"readFileSync("/home/u/.\u0073sh/id_rsa")"#,
                "/home/u/.ssh/id_rsa",
            ),
            (r#"open('/home/u/.\x73sh/k')"#, "/home/u/.ssh/k"),
            (r#"open("/home/u/.\163sh/k")"#, "/home/u/.ssh/k"),
            (r#"x = '/home/u/' + ".ssh/k""#, "/home/u/.ssh/k"),
            (r#"io.open('/a' .. '/b')"#, "/a/b"),
            (
                r#"urlopen("file:///home/u/.ss%68/id_rsa")"#,
                "file:///home/u/.ssh/id_rsa",
            ),
        ] {
            let got = values(code);
            assert!(got.iter().any(|v| v == want), "{code}: {got:?}");
        }
        assert!(values(r#"open(".env")"#).is_empty());
    }

    /// Strings passed to calls that open, read, write or load files are taken, in the
    /// languages code comes in on the line; strings passed to other calls are not.
    #[test]
    fn strings_given_to_calls_that_open_files_are_found() {
        for (code, want) in [
            (r#"print(open(".env").read())"#, vec![".env"]),
            (
                r#"console.log(require("fs").readFileSync(".env","utf8"))"#,
                vec!["fs", ".env", "utf8"],
            ),
            (r#"echo file_get_contents('.env');"#, vec![".env"]),
            (
                r#"puts File.read( "config/key.pem" )"#,
                vec!["config/key.pem"],
            ),
            (
                r#"import pathlib; print(pathlib.Path('.env').read_text())"#,
                vec![".env"],
            ),
            (r#"open(my $f, '<', "secret.txt")"#, vec!["<", "secret.txt"]),
            (r#"import os; print(oct(os.stat('.env').st_mode))"#, vec![]),
            (r#"print("open(.env)")"#, vec![]),
            (r#"x = len('abc'); y = open("a\"b")"#, vec![r#"a\"b"#]),
        ] {
            let got: Vec<&str> = opened_literals(code).into_iter().map(|(l, _)| l).collect();
            assert_eq!(got, want, "{code}");
        }
    }

    /// A call that writes says so by its name or by the mode it opens with.
    #[test]
    fn calls_that_write_are_told_from_calls_that_read() {
        let writes = |code: &str| -> Vec<bool> {
            opened_literals(code).into_iter().map(|(_, w)| w).collect()
        };
        assert_eq!(writes(r#"open("a.txt").read()"#), [false]);
        assert_eq!(
            writes(r#"open("a.txt", "w").write("x")"#),
            [true, true, true]
        );
        assert_eq!(writes(r#"fs.writeFileSync("a.json", "{}")"#), [true, true]);
        assert_eq!(writes(r#"require("./package.json")"#), [false]);
        assert_eq!(writes(r#"os.remove("x")"#), [true]);
    }
}
