//! Deciding about a Bash command line from the rules: every simple command it runs is a unit;
//! a deny on any unit, or on a path a unit reads or writes, denies the line; an allow needs
//! every unit allowed.
//!
//! Allowing is deliberately narrower than denying. A unit can be allowed by a rule only when
//! it is plain: a literal program name without a path, literal arguments, no assignments other
//! than inert locale-like ones, no wrapper that runs another command, no redirection that
//! writes. Anything else needs the user (or a whole-tool `Bash` allow).

use std::path::{Path, PathBuf};

use tool_core::ToolContext;
use tool_shell::{CommandLine, RedirectKind, SimpleCommand};

use crate::policy::{PathFamily, RuleEntry};

/// Programs whose file operands are reads, for Read-rule checks.
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "sed",
    "awk",
    "sort",
    "uniq",
    "wc",
    "cut",
    "paste",
    "diff",
    "cmp",
    "comm",
    "strings",
    "od",
    "hexdump",
    "xxd",
    "base64",
    "nl",
    "file",
    "stat",
    "jq",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "tac",
    "rev",
    "column",
    "tr",
    "source",
    ".",
    "cp",
    "mv",
    "scp",
    "rsync",
    "tar",
    "zip",
    "gzip",
    "bat",
    "view",
    "vim",
    "vi",
    "nano",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "bash",
    "sh",
    "ln",
    "link",
    "install",
    "split",
    "csplit",
    "iconv",
    "openssl",
    "gpg",
    "curl",
    "wget",
    "nc",
];

/// A word's value when it is literal, or when its only expansions are `$PWD`, `$OLDPWD` and
/// `$HOME` (tracked through the line's `cd`s), bare or inside double quotes.
fn word_value(
    w: &tool_shell::Word,
    cwd: &Path,
    oldpwd: Option<&Path>,
    ctx: &ToolContext,
) -> Option<String> {
    if let Some(l) = &w.literal {
        return Some(l.clone());
    }
    let mut raw = w.raw.clone();
    let vars = [
        ("OLDPWD", oldpwd.map(|p| p.display().to_string())),
        ("PWD", Some(cwd.display().to_string())),
        ("HOME", Some(ctx.home.display().to_string())),
    ];
    for (name, value) in vars {
        let Some(v) = value else { continue };
        raw = raw
            .replace(&format!("${{{name}}}"), &v)
            .replace(&format!("${name}"), &v);
    }
    if raw.contains(['$', '`', '\\', '\'']) {
        return None;
    }
    Some(raw.replace('"', ""))
}

/// Assignments that do not change what a command does.
fn inert_assignment(a: &str) -> bool {
    let name = a.split('=').next().unwrap_or("");
    matches!(
        name,
        "LANG"
            | "LANGUAGE"
            | "TZ"
            | "NO_COLOR"
            | "CI"
            | "TERM"
            | "COLUMNS"
            | "LINES"
            | "FORCE_COLOR"
    ) || name.starts_with("LC_")
}

/// Wrappers that run their arguments as a command, or take a command from elsewhere.
const COMMAND_CARRIERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "exec", "source", ".", "xargs", "env",
    "sudo", "doas", "su", "command", "builtin", "watch", "setsid", "parallel", "nohup", "script",
    "ssh", "busybox",
];

/// Process wrappers that may be stripped before matching an allow rule.
fn strip_inert_wrappers(words: &[String]) -> &[String] {
    let mut w = words;
    loop {
        match w.first().map(String::as_str) {
            Some("time") => w = &w[1..],
            Some("nice") if w.get(1).is_some_and(|a| a == "-n") => w = &w[w.len().min(3)..],
            Some("nice") => w = &w[1..],
            Some("timeout") => {
                let mut i = 1;
                while i < w.len() && w[i].starts_with('-') {
                    i += if matches!(w[i].as_str(), "-s" | "-k") {
                        2
                    } else {
                        1
                    };
                }
                w = &w[(i + 1).min(w.len())..];
            }
            _ => return w,
        }
    }
}

/// How one unit stands towards allow rules.
fn unit_allow_form(cmd: &SimpleCommand) -> Option<String> {
    if cmd.assignments.iter().any(|a| !inert_assignment(a)) {
        return None;
    }
    let words: Option<Vec<String>> = cmd.argv.iter().map(|w| w.literal.clone()).collect();
    let words = words?;
    let words = strip_inert_wrappers(&words);
    let first = words.first()?;
    if first.contains('/') || COMMAND_CARRIERS.contains(&first.as_str()) {
        return None;
    }
    if cmd
        .redirects
        .iter()
        .any(|r| writes(r.kind) && !to_dev_null(r))
    {
        return None;
    }
    if first == "git" && git_runs_programs(words) {
        return None;
    }
    Some(words.join(" "))
}

/// Git options that make git run another program, including unambiguous prefixes of long
/// options (git accepts `--upload-pa` for `--upload-pack`).
fn git_runs_programs(words: &[String]) -> bool {
    const LONG: &[&str] = &[
        "--upload-pack",
        "--receive-pack",
        "--exec-path",
        "--exec",
        "--config-env",
        "--config",
        "--ext-diff",
        "--textconv",
        "--output",
        "--template",
    ];
    words.iter().skip(1).any(|w| {
        let opt = w.split_once('=').map_or(w.as_str(), |(k, _)| k);
        opt == "-c"
            || (opt.starts_with("-c") && !opt.starts_with("--"))
            || opt == "-u"
            || opt == "-o"
            || (opt.starts_with("--") && opt.len() >= 5 && LONG.iter().any(|l| l.starts_with(opt)))
    })
}

fn writes(kind: RedirectKind) -> bool {
    matches!(
        kind,
        RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
    )
}

fn to_dev_null(r: &tool_shell::Redirect) -> bool {
    r.target.as_ref().and_then(|t| t.literal.as_deref()) == Some("/dev/null")
}

/// A path a unit touches, resolved against the effective cwd.
fn resolve(word: &str, cwd: &Path, ctx: &ToolContext) -> PathBuf {
    let mut c = ctx.clone();
    c.cwd = cwd.to_path_buf();
    c.resolve_path(word)
}

/// What a unit does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Reads it (or changes into it).
    Read,
    /// Creates, changes or removes it.
    Write,
    /// Writes it through an output redirection.
    Redirect,
}

/// One path a unit uses.
#[derive(Debug, Clone)]
pub(crate) struct PathUse {
    /// The unit's index in the line.
    pub unit: usize,
    /// The program's name.
    pub command: String,
    /// The path, resolved against the effective cwd.
    pub path: PathBuf,
    /// What is done with it.
    pub op: Op,
}

/// The paths each unit reads and writes, tracking literal `cd` through the line.
pub(crate) struct Touches {
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
    pub uses: Vec<PathUse>,
}

impl Touches {
    fn add(&mut self, unit: usize, command: &str, path: PathBuf, op: Op) {
        match op {
            Op::Read => self.reads.push(path.clone()),
            Op::Write | Op::Redirect => self.writes.push(path.clone()),
        }
        self.uses.push(PathUse {
            unit,
            command: command.to_owned(),
            path,
            op,
        });
    }
}

/// Programs that create, change or remove the files they name, as Claude Code's path checks
/// and acceptEdits mode know them.
const FILE_EDITORS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// The file operands of a unit: its arguments that are not options, without the first
/// operand of programs whose first operand is a pattern or a script.
fn operands<'a>(name: &str, values: &'a [String]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut options_done = false;
    // `-e`/`-f` (grep, sed, awk, jq's `-f`) give the script: then the first operand is a file.
    let script_given = values.iter().any(|v| {
        matches!(
            v.as_str(),
            "-e" | "-f" | "--expression" | "--file" | "--regexp"
        )
    });
    let mut skip_first = matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "sed" | "awk" | "jq"
    ) && !script_given;
    let mut find_paths_done = false;
    for v in values {
        if !options_done && v == "--" {
            options_done = true;
            continue;
        }
        if !options_done && v.starts_with('-') && v.len() > 1 {
            if name == "find" {
                find_paths_done = true;
            }
            continue;
        }
        if name == "find" && (find_paths_done || v == "!" || v == "(") {
            find_paths_done = true;
            continue;
        }
        // `--flag=value`.
        let v = v
            .split_once('=')
            .filter(|(k, _)| k.starts_with("--"))
            .map_or(v.as_str(), |(_, x)| x);
        if v.is_empty() {
            continue;
        }
        if skip_first {
            skip_first = false;
            continue;
        }
        out.push(v);
    }
    out
}

pub(crate) fn touches(line: &CommandLine, ctx: &ToolContext) -> Touches {
    let mut cwd = ctx.cwd.clone();
    let mut oldpwd: Option<PathBuf> = None;
    let mut t = Touches {
        reads: Vec::new(),
        writes: Vec::new(),
        uses: Vec::new(),
    };
    for (unit, c) in line.commands.iter().enumerate() {
        let name = c
            .argv
            .first()
            .map(|w| w.text())
            .map(|n| n.rsplit('/').next().unwrap_or(n))
            .unwrap_or("");
        if matches!(name, "cd" | "pushd") {
            if let Some(dir) = c
                .argv
                .get(1)
                .and_then(|w| word_value(w, &cwd, oldpwd.as_deref(), ctx))
            {
                let next = if dir == "-" {
                    oldpwd.clone().unwrap_or_else(|| cwd.clone())
                } else {
                    resolve(&dir, &cwd, ctx)
                };
                t.uses.push(PathUse {
                    unit,
                    command: name.to_owned(),
                    path: next.clone(),
                    op: Op::Read,
                });
                oldpwd = Some(std::mem::replace(&mut cwd, next));
            }
            continue;
        }
        for r in &c.redirects {
            let Some(target) = r
                .target
                .as_ref()
                .and_then(|w| word_value(w, &cwd, oldpwd.as_deref(), ctx))
            else {
                continue;
            };
            if target == "/dev/null" || r.kind == RedirectKind::Duplicate {
                continue;
            }
            let p = resolve(&target, &cwd, ctx);
            if writes(r.kind) {
                t.add(unit, name, p.clone(), Op::Redirect);
            }
            if matches!(r.kind, RedirectKind::Read | RedirectKind::ReadWrite) {
                t.add(unit, name, p, Op::Read);
            }
        }
        let values: Vec<String> = c
            .argv
            .iter()
            .skip(1)
            .filter_map(|w| word_value(w, &cwd, oldpwd.as_deref(), ctx))
            .collect();
        // `dd if=X of=Y`.
        if name == "dd" {
            for v in &values {
                if let Some(f) = v.strip_prefix("if=") {
                    t.add(unit, name, resolve(f, &cwd, ctx), Op::Read);
                }
                if let Some(f) = v.strip_prefix("of=") {
                    t.add(unit, name, resolve(f, &cwd, ctx), Op::Write);
                }
            }
            continue;
        }
        // `curl -d @file`, `--data-binary @file`: the file is read and sent.
        for v in &values {
            if let Some(file) = v.strip_prefix('@').filter(|f| !f.is_empty()) {
                t.add(unit, name, resolve(file, &cwd, ctx), Op::Read);
            }
        }
        let ops = operands(name, &values);
        let in_place = name == "sed"
            && values
                .iter()
                .any(|v| v.starts_with("-i") || v.starts_with("--in-place"));
        let last = ops.len().saturating_sub(1);
        for (i, o) in ops.iter().enumerate() {
            if o.starts_with('@') {
                continue;
            }
            let p = resolve(o, &cwd, ctx);
            match name {
                "mkdir" | "touch" | "rm" | "rmdir" | "mv" => t.add(unit, name, p, Op::Write),
                "cp" if i == last && ops.len() > 1 => t.add(unit, name, p, Op::Write),
                "sed" if in_place => {
                    t.add(unit, name, p.clone(), Op::Read);
                    t.add(unit, name, p, Op::Write);
                }
                _ if READERS.contains(&name) || matches!(name, "ls" | "find" | "tree") => {
                    t.add(unit, name, p, Op::Read)
                }
                _ => {}
            }
        }
    }
    t
}

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
        let verb = PATH_VERBS.iter().find(|(c, _)| *c == u.command).map(|(_, v)| *v);
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
            (Op::Redirect, _) => {
                format!("Output redirection to '{}' {needs_approval}", u.path.display())
            }
            (Op::Write, _) => format!("{} in '{}' {needs_approval}", u.command, u.path.display()),
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

/// The text of a unit as the model wrote it (assignments, words; no redirections).
pub(crate) fn unit_text(c: &SimpleCommand) -> String {
    c.assignments
        .iter()
        .cloned()
        .chain(c.argv.iter().map(|w| w.raw.clone()))
        .collect::<Vec<_>>()
        .join(" ")
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
    ctx: &ToolContext,
    find: &dyn Fn(PathFamily, &Path) -> Option<&'a RuleEntry>,
) -> Option<(&'a RuleEntry, PathBuf)> {
    for p in &t.reads {
        if let Some(e) = find(PathFamily::Read, p) {
            return Some((e, p.clone()));
        }
    }
    for p in &t.writes {
        if let Some(e) = find(PathFamily::Edit, p).or_else(|| find(PathFamily::Read, p)) {
            return Some((e, p.clone()));
        }
    }
    let _ = ctx;
    None
}

/// How one unit stands on its own: allowed by a rule (`Some(Some(rule))`), allowed as a
/// read-only command or, in acceptEdits mode, as a file edit inside the working directories
/// (`Some(None)`), or not allowed (`None`).
pub(crate) fn unit_allowed<'a>(
    index: usize,
    c: &SimpleCommand,
    t: &Touches,
    ctx: &ToolContext,
    allow_rule: &dyn Fn(&str) -> Option<&'a RuleEntry>,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> Option<Option<&'a RuleEntry>> {
    let form = unit_allow_form(c);
    if let Some(e) = form.as_deref().and_then(allow_rule) {
        return Some(Some(e));
    }
    // Output redirections are allowed only to targets that were resolved and are permitted
    // (an Edit allow rule, or acceptEdits inside the working directories).
    let written = c
        .redirects
        .iter()
        .filter(|r| writes(r.kind) && !to_dev_null(r))
        .count();
    let resolved: Vec<&PathUse> = t
        .uses
        .iter()
        .filter(|u| u.unit == index && u.op == Op::Redirect)
        .collect();
    let redirects_ok = resolved.len() == written && resolved.iter().all(|u| redirect_ok(&u.path));
    let read_only = tool_shell::is_read_only_command(c) && redirects_ok && c.assignments.is_empty();
    if read_only {
        return Some(None);
    }
    // acceptEdits: `mkdir touch rm rmdir mv cp sed` on paths inside the working directories
    // (none protected); `mv` and `cp` only without options.
    let name = form.as_deref().and_then(|f| f.split(' ').next());
    if ctx.permission_mode == tool_core::PermissionMode::AcceptEdits
        && let Some(name) = name.filter(|n| FILE_EDITORS.contains(n))
    {
        let has_option = c
            .argv
            .iter()
            .skip(1)
            .any(|w| w.literal.as_deref().is_some_and(|l| l.starts_with('-')));
        let mine: Vec<&PathUse> = t.uses.iter().filter(|u| u.unit == index).collect();
        let paths_ok = !mine.is_empty()
            && mine.iter().all(|u| {
                crate::path_rule::inside_working_dirs(ctx, &u.path)
                    && crate::path_rule::candidates(&u.path, ctx)
                        .iter()
                        .all(|p| crate::policy::protected(p).is_none())
            });
        if paths_ok && !(matches!(name, "mv" | "cp") && has_option) {
            return Some(None);
        }
    }
    None
}

/// Is every unit of the line allowed (see [`unit_allowed`])? Returns the rules used (empty
/// when no rule was needed).
pub(crate) fn all_units_allowed<'a>(
    line: &CommandLine,
    t: &Touches,
    ctx: &ToolContext,
    allow_rule: &dyn Fn(&str) -> Option<&'a RuleEntry>,
    redirect_ok: &dyn Fn(&Path) -> bool,
) -> Option<Vec<&'a RuleEntry>> {
    if line.commands.is_empty() || line.background || line.defines_function {
        return None;
    }
    let has_cd = line.commands.iter().any(|c| c.name() == Some("cd"));
    let has_git = line.commands.iter().any(|c| c.name() == Some("git"));
    if has_cd && has_git {
        return None;
    }
    let mut used = Vec::new();
    for (i, c) in line.commands.iter().enumerate() {
        if c.name() == Some("cd") {
            let inside = c
                .argv
                .get(1)
                .and_then(|w| w.literal.as_deref())
                .is_some_and(|d| {
                    crate::path_rule::inside_working_dirs(ctx, &resolve(d, &ctx.cwd, ctx))
                });
            if inside && c.argv.len() == 2 && c.redirects.is_empty() {
                continue;
            }
            return None;
        }
        used.extend(unit_allowed(i, c, t, ctx, allow_rule, redirect_ok)?);
    }
    Some(used)
}

/// Programs that create, change or remove the files they name.
const FILE_WRITERS: &[&str] = &["touch", "mkdir", "rm", "rmdir", "mv", "cp"];

/// The text Claude Code shows when a command line that nothing allowed would write inside the
/// working directories: naming the redirect target, or the writing program and its operand.
pub(crate) fn write_ask_message(
    line: &CommandLine,
    t: &Touches,
    ctx: &ToolContext,
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
        .find(|u| u.op == Op::Redirect && inside(&u.path))
        .map(|u| &u.path)
    {
        return Some(format!("Output redirection to '{}' {tail}", p.display()));
    }
    for c in &line.commands {
        let Some(name) = c.name() else { continue };
        if !FILE_WRITERS.contains(&name) {
            continue;
        }
        let operands: Vec<&str> = c
            .argv
            .iter()
            .skip(1)
            .filter_map(|w| w.literal.as_deref())
            .filter(|a| !a.starts_with('-'))
            .collect();
        let target = if matches!(name, "mv" | "cp") {
            operands.last()
        } else {
            operands.first()
        };
        if let Some(p) = target
            .map(|o| resolve(o, &ctx.cwd, ctx))
            .filter(|p| inside(p))
        {
            return Some(format!("{name} in '{}' {tail}", p.display()));
        }
    }
    None
}
