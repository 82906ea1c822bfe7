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

/// The paths each unit reads and writes, tracking literal `cd` through the line.
pub(crate) struct Touches {
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
}

pub(crate) fn touches(line: &CommandLine, ctx: &ToolContext) -> Touches {
    let mut cwd = ctx.cwd.clone();
    let mut oldpwd: Option<PathBuf> = None;
    let mut t = Touches {
        reads: Vec::new(),
        writes: Vec::new(),
    };
    for c in &line.commands {
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
                t.writes.push(p.clone());
            }
            if matches!(r.kind, RedirectKind::Read | RedirectKind::ReadWrite) {
                t.reads.push(p);
            }
        }
        let reader = READERS.contains(&name);
        for w in c.argv.iter().skip(1) {
            let Some(value) = word_value(w, &cwd, oldpwd.as_deref(), ctx) else {
                continue;
            };
            // `dd if=X of=Y`.
            if name == "dd" {
                if let Some(f) = value.strip_prefix("if=") {
                    t.reads.push(resolve(f, &cwd, ctx));
                }
                if let Some(f) = value.strip_prefix("of=") {
                    t.writes.push(resolve(f, &cwd, ctx));
                }
                continue;
            }
            // `curl -d @file`, `--data-binary @file`: the file is read and sent.
            if let Some(file) = value.strip_prefix('@').filter(|f| !f.is_empty()) {
                t.reads.push(resolve(file, &cwd, ctx));
                continue;
            }
            let operand = value
                .split_once('=')
                .filter(|(k, _)| k.starts_with("--"))
                .map_or(value.as_str(), |(_, v)| v);
            if reader && !operand.starts_with('-') && !operand.is_empty() {
                t.reads.push(resolve(operand, &cwd, ctx));
            }
        }
    }
    t
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

/// Is every unit of the line allowed, by an allow rule on its plain form or by being
/// read-only? Returns the rules used (empty when only read-only units).
pub(crate) fn all_units_allowed<'a>(
    line: &CommandLine,
    ctx: &ToolContext,
    allow_rule: &dyn Fn(&str) -> Option<&'a RuleEntry>,
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
    for c in &line.commands {
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
        let form = unit_allow_form(c);
        if let Some(e) = form.as_deref().and_then(allow_rule) {
            used.push(e);
            continue;
        }
        let read_only = tool_shell::is_read_only_command(c)
            && c.redirects
                .iter()
                .all(|r| !writes(r.kind) || to_dev_null(r))
            && c.assignments.is_empty();
        if !read_only {
            return None;
        }
    }
    Some(used)
}

/// Programs that create, change or remove the files they name.
const FILE_WRITERS: &[&str] = &["touch", "mkdir", "rm", "rmdir", "mv", "cp"];

/// The text Claude Code shows when a command line that nothing allowed would write inside the
/// working directories: naming the redirect target, or the writing program and its operand.
pub(crate) fn write_ask_message(command: &str, ctx: &ToolContext) -> Option<String> {
    let line = CommandLine::parse(command).ok()?;
    let dirs = ctx
        .working_dirs
        .iter()
        .map(|d| format!("'{}'", d.display()))
        .collect::<Vec<_>>()
        .join(", ");
    let tail = format!(
        "needs approval. The path is inside the working directories for this session ({dirs}), and {} asks before a shell command creates, changes or removes files there.",
        ctx.product_name
    );
    let inside = |p: &Path| crate::path_rule::inside_working_dirs(ctx, p);
    let t = touches(&line, ctx);
    if let Some(p) = t.writes.iter().find(|p| inside(p)) {
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
