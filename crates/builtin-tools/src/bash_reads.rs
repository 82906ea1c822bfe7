//! What a finished Bash command showed the model of a file, and what it changed of the files
//! the model had read, as Claude Code 2.1.332 counts them (recorded: `br_*`).
//!
//! A command that prints one file and nothing else counts as a read of it: `cat [-n] F`, `nl F`
//! and `bat F` of the whole file; `head`/`tail` of their lines (the whole file when they cover
//! it); `sed -n 'N[,M]p' F` of those lines; `grep`/`egrep`/`fgrep`/`rg` of one file as the
//! whole command (the file is then known, its content not shown). Beside it, only `echo`,
//! `printf`, `true` and `:` may run, joined by `&&` or `;`; a pipe or a redirection makes it no
//! read at all (what was shown is not certain).
//!
//! A command of the kind that rewrites files in place (`sed -i`, formatters, `--fix`, ...)
//! that changed files the model had read adds a note naming them.

use std::path::{Path, PathBuf};

use tool_core::{FileState, ToolContext};
use tool_shell::analyze::{Analysis, Origin, ShellEnv};

/// How much of a file a command showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Every line.
    Whole,
    /// Lines `offset..offset + limit` (1-based).
    Lines { offset: i64, limit: i64 },
    /// The last `count` lines.
    Last { count: i64 },
    /// The file was searched; its content is not in the model's context.
    Searched,
}

/// Record in the session's file-state cache what `command` (which ran in `ctx.cwd` and ended
/// with status 0) showed of a file.
pub(crate) fn record_reads(command: &str, ctx: &ToolContext) {
    // Most commands name none of the readers: they are not analysed again.
    const READERS: &[&str] = &["cat", "nl", "bat", "head", "tail", "sed", "grep", "rg"];
    if command.contains(['|', '<', '>']) || !READERS.iter().any(|r| command.contains(r)) {
        return;
    }
    let analysis =
        tool_shell::analyze::analyze(command, &ShellEnv::new(ctx.cwd.clone(), ctx.home.clone()));
    let Some((path, shown)) = read_of(&analysis) else {
        return;
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    // A file that is not UTF-8 counts as read too, its bad bytes as U+FFFD (recorded: explore
    // seeds 11 and 13, where Edit then gives the encoding refusal, not "not read yet").
    let Ok(bytes) = std::fs::read(&path) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let text = text
        .strip_prefix('\u{feff}')
        .unwrap_or(&text)
        .replace("\r\n", "\n");
    let total = text.lines().count() as i64;
    let shown = match shown {
        Shown::Last { count } => Shown::Lines {
            offset: (total - count + 1).max(1),
            limit: count.min(total),
        },
        other => other,
    };
    let (offset, limit, full_view) = match shown {
        Shown::Whole => (Some(1), None, true),
        // A range over an empty file shows nothing: a partial view (recorded: explore seed
        // 12, `sed -n 1,2p` of an empty file).
        Shown::Lines { offset, limit } if offset <= 1 && limit >= total && total > 0 => {
            (Some(1), None, true)
        }
        Shown::Lines { offset, limit } => (Some(offset), Some(limit), false),
        Shown::Searched | Shown::Last { .. } => (Some(1), None, false),
    };
    ctx.file_state.insert(
        path,
        FileState {
            content: text,
            timestamp_ms: crate::text_file::mtime_ms(&meta),
            offset,
            limit,
            full_view,
        },
    );
}

/// The one file the line shows, and how much of it.
fn read_of(a: &Analysis) -> Option<(PathBuf, Shown)> {
    if !a.parsed || !a.problems.is_empty() || a.background || a.has_substitution() {
        return None;
    }
    if a.units
        .iter()
        .any(|u| u.origin != Origin::Line || !u.certain)
    {
        return None;
    }
    let inert = |p: &str| matches!(p, "echo" | "printf" | "true" | ":");
    let mut readers = a.units.iter().filter(|u| !inert(u.argv[0].as_str()));
    let unit = readers.next()?;
    if readers.next().is_some() {
        return None;
    }
    let alone = a.units.len() == 1;
    let argv = &unit.argv;
    let (file, shown) = match argv[0].as_str() {
        "cat" => match &argv[1..] {
            [f] => (f, Shown::Whole),
            [flag, f] if flag == "-n" || flag == "--number" => (f, Shown::Whole),
            _ => return None,
        },
        "nl" | "bat" => match &argv[1..] {
            [f] => (f, Shown::Whole),
            _ => return None,
        },
        program @ ("head" | "tail") => {
            let (count, f) = match &argv[1..] {
                [f] => (10, f),
                [n, f] if n.starts_with('-') => {
                    (n[1..].strip_prefix('n').unwrap_or(&n[1..]).parse().ok()?, f)
                }
                [flag, n, f] if flag == "-n" => (n.parse().ok()?, f),
                _ => return None,
            };
            let shown = if program == "head" {
                Shown::Lines {
                    offset: 1,
                    limit: count,
                }
            } else {
                Shown::Last { count }
            };
            (f, shown)
        }
        "sed" => match &argv[1..] {
            [flag, script, f] if flag == "-n" => (f, sed_print_range(script)?),
            _ => return None,
        },
        "grep" | "egrep" | "fgrep" | "rg" if alone => {
            // A count, a file list or a quiet test prints no line of the file (recorded:
            // explore seed 12, `grep -c`).
            let shows_nothing = argv[1..].iter().any(|w| {
                matches!(
                    w.as_str(),
                    "--count"
                        | "--files-with-matches"
                        | "--files-without-match"
                        | "--quiet"
                        | "--silent"
                ) || (w.starts_with('-')
                    && !w.starts_with("--")
                    && w[1..].chars().any(|c| matches!(c, 'c' | 'l' | 'L' | 'q')))
            });
            if shows_nothing {
                return None;
            }
            let operands: Vec<&String> = argv[1..].iter().filter(|w| !w.starts_with('-')).collect();
            match operands[..] {
                [_pattern, f] => (f, Shown::Searched),
                _ => return None,
            }
        }
        _ => return None,
    };
    let path = if Path::new(file).is_absolute() {
        tool_core::normalize(Path::new(file))
    } else {
        tool_core::normalize(&unit.cwd.join(file))
    };
    Some((path, shown))
}

/// `N,Mp` or `Np`: the lines a `sed -n` script prints.
fn sed_print_range(script: &str) -> Option<Shown> {
    let range = script.strip_suffix('p')?;
    let (from, to) = match range.split_once(',') {
        Some((a, b)) => (a.parse::<i64>().ok()?, b.parse::<i64>().ok()?),
        None => {
            let n = range.parse::<i64>().ok()?;
            (n, n)
        }
    };
    (from >= 1 && to >= from).then_some(Shown::Lines {
        offset: from,
        limit: to - from + 1,
    })
}

/// Commands that rewrite files in place: formatters, fixers, `sed -i`.
fn rewrites_in_place(command: &str) -> bool {
    const MARKS: &[&str] = &[
        "--write",
        "--fix",
        "--in-place",
        "--auto-correct",
        "run format",
        "run fix",
        "lint:file",
        "lint:fix",
        "black",
        "isort",
        "ruff format",
        "cargo fmt",
        "cargo fix",
        "rustfmt",
        "go fmt",
        "terraform fmt",
        "dprint fmt",
        "swiftformat",
        "phpcbf",
    ];
    let sed_in_place = command.split_whitespace().any(|w| w == "sed")
        && command
            .split_whitespace()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('i'));
    let js_format = ["yarn format", "pnpm format"]
        .iter()
        .any(|m| command.contains(m));
    sed_in_place || js_format || MARKS.iter().any(|m| command.contains(m))
}

/// The note for a command that rewrote files in place which the model had read (their mtime
/// after both the command's start and the read): `None` when there is none.
pub(crate) fn modified_note(command: &str, started_ms: u64, ctx: &ToolContext) -> Option<String> {
    if !rewrites_in_place(command) {
        return None;
    }
    let mut changed: Vec<String> = ctx
        .file_state
        .entries()
        .into_iter()
        .filter_map(|(p, seen)| {
            let meta = std::fs::metadata(&p).ok()?;
            let now = crate::text_file::mtime_ms(&meta);
            (now > started_ms && now > seen.timestamp_ms).then(|| {
                p.strip_prefix(&ctx.cwd)
                    .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
            })
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    changed.sort();
    let n = changed.len();
    let more = n.saturating_sub(5);
    changed.truncate(5);
    let mut names = changed.join(", ");
    if more > 0 {
        names.push_str(&format!(" and {more} more"));
    }
    Some(format!(
        "[This command modified {n} {} you've previously read: {names}. Call Read before editing.]",
        if n == 1 { "file" } else { "files" }
    ))
}
