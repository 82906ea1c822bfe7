//! Rewrites of a Bash command string that keep what bash runs.

use super::lex::{self, Kind, Lexed, Segment};
use super::paths::{self, PathCtx};
use super::{Family, Rng};
use crate::security::Extra;

/// Reserved words: quoting or wrapping one changes the grammar, so segments starting with one
/// are left alone.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// Commands whose effect outlives a subshell: wrapping a command that uses one in `( )`,
/// `$( )`, `bash -c` or a pipeline would change what it does.
const STATEFUL: &[&str] = &[
    "cd",
    "pushd",
    "popd",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "set",
    "shopt",
    "alias",
    "unalias",
    "source",
    ".",
    "eval",
    "exec",
    "umask",
    "ulimit",
    "trap",
    "exit",
    "hash",
    "read",
    "let",
    "enable",
    "builtin",
    "history",
    "mapfile",
    "readarray",
    "getopts",
    "shift",
    "return",
    "break",
    "continue",
    "wait",
    "disown",
    "bg",
    "fg",
    "jobs",
    "complete",
    "compopt",
];

/// Builtins that a process wrapper cannot run (they act on the shell itself or do not exist as
/// programs): the [`STATEFUL`] ones and these. `echo`, `printf`, `true`, `false`, `test`, `pwd`
/// and `kill` also exist as programs and are not listed.
const OTHER_BUILTINS: &[&str] = &[
    "dirs", "command", "type", "caller", "compgen", "suspend", "logout",
];

/// `command X` is the same as `X` except for these (their arguments are parsed as assignments
/// only when they are the command word).
const NO_COMMAND_PREFIX: &[&str] = &["declare", "typeset", "local", "export", "readonly"];

/// Programs that do not read their standard input (so `echo x | X` runs X the same way).
const STDIN_IGNORING: &[&str] = &[
    "rm", "touch", "ls", "cp", "ln", "mkdir", "find", "git", "curl", "pwd", "man",
];

/// Short options that take no argument, per program: these may be bundled, split and reordered.
const FLAGS: &[(&str, &str)] = &[
    ("rm", "rRfivd"),
    ("ls", "laAdhtrSR1Fip"),
    ("wc", "lcwmL"),
    ("cp", "rRfipvn"),
    ("cat", "nAbeEsTv"),
    ("ln", "sfvn"),
    ("touch", "acm"),
    ("grep", "inrvlcwqHshoE"),
    ("sort", "rnufb"),
    ("diff", "uaibwBEtTNr"),
    ("mkdir", "pv"),
];

/// GNU-style long options this generator abbreviates: (program, subcommand words, option,
/// shortest unambiguous prefix). Checked against the programs' option lists (man-db `man`,
/// `git ls-remote`/`git fetch`, GNU `sort`).
const ABBREV: &[(&str, &[&str], &str, &str)] = &[
    ("man", &[], "--html", "--htm"),
    ("git", &["ls-remote"], "--upload-pack", "--upl"),
    ("git", &["fetch"], "--upload-pack", "--upl"),
    ("sort", &[], "--output", "--outp"),
    ("sort", &[], "--compress-program", "--compress-p"),
];

/// The parsed form of one command string.
struct Cmd<'a> {
    s: &'a str,
    lx: Lexed,
    segs: Vec<Segment>,
}

impl<'a> Cmd<'a> {
    fn new(s: &'a str) -> Option<Self> {
        let lx = lex::lex(s)?;
        let segs = lex::segments(s, &lx);
        Some(Cmd { s, lx, segs })
    }

    fn text(&self, t: usize) -> &'a str {
        let t = self.lx.toks[t];
        &self.s[t.start..t.end]
    }

    fn span(&self, t: usize) -> (usize, usize) {
        (self.lx.toks[t].start, self.lx.toks[t].end)
    }

    fn replace(&self, t: usize, new: &str) -> String {
        let (a, b) = self.span(t);
        splice(self.s, a, b, new)
    }

    /// The command word's value when it is fixed text.
    fn cw_value(&self, seg: &Segment) -> Option<String> {
        seg.cw.and_then(|t| lex::static_word(self.text(t)))
    }

    /// A segment that is a plain simple command (not a reserved-word construct).
    fn simple(&self, seg: &Segment) -> bool {
        seg.cw.is_some_and(|t| !KEYWORDS.contains(&self.text(t)))
    }

    /// The text between two tokens is spaces and tabs only.
    fn tight(&self, a: usize, b: usize) -> bool {
        b == a + 1
            && self.s[self.lx.toks[a].end..self.lx.toks[b].start]
                .bytes()
                .all(|c| c == b' ' || c == b'\t')
            && self.lx.toks[b].start > self.lx.toks[a].end
    }

    /// Plain words a word-level rewrite may touch: command words, arguments, redirect targets.
    fn plain_words(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for seg in self.segs.iter().filter(|s| self.simple(s)) {
            out.extend(seg.cw);
            out.extend(&seg.args);
            out.extend(seg.redirs.iter().map(|r| r.1));
        }
        out.retain(|t| lex::plain(self.text(*t)));
        out
    }

    /// Plain words whose characters may be re-spelled (quoted, escaped, ANSI-C encoded): not
    /// the absolute paths the runner re-roots into its temporary root (`/w/...`,
    /// `/home/...`), which it finds by their text and would no longer find. A re-spelled path
    /// would then name a file the staging did not make: a failure of the harness, not of the
    /// engine.
    fn respellable_words(&self) -> Vec<usize> {
        let mut out = self.plain_words();
        out.retain(|t| {
            let w = self.text(*t);
            !(w.contains("/w/") || w.contains("/home/"))
        });
        out
    }

    /// Command words and arguments of each simple segment, in order.
    fn argv_runs(&self) -> Vec<Vec<usize>> {
        self.segs
            .iter()
            .filter(|s| self.simple(s))
            .map(|s| s.cw.into_iter().chain(s.args.iter().copied()).collect())
            .collect()
    }

    fn stateful(&self) -> bool {
        self.segs.iter().any(|seg| match seg.cw {
            None => !seg.assigns.is_empty(),
            Some(_) => self
                .cw_value(seg)
                .is_none_or(|v| STATEFUL.contains(&v.as_str())),
        })
    }

    /// The text ends where another list member may follow on the same line.
    fn open_end(&self) -> bool {
        !self.lx.has_heredoc
            && !self.lx.has_comment
            && self.lx.toks.last().is_some_and(|t| {
                !(t.kind == Kind::Op && matches!(&self.s[t.start..t.end], "&" | ";"))
            })
    }
}

fn splice(s: &str, a: usize, b: usize, new: &str) -> String {
    format!("{}{new}{}", &s[..a], &s[b..])
}

fn squote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn external(v: &str) -> bool {
    !v.is_empty()
        && !STATEFUL.contains(&v)
        && !OTHER_BUILTINS.contains(&v)
        && !KEYWORDS.contains(&v)
}

/// Builtins whose program of the same name on disk lacks what makes them run code: bash's
/// `test`/`[` and `printf -v` evaluate array subscripts (`test -v 'a[$(cmd)]'`), and its `kill`
/// takes job specifications. Run by path they are other programs, so `argv0-path` leaves them.
const BUILTIN_ONLY_FEATURES: &[&str] = &["test", "[", "printf", "kill"];

/// Rewrite the command `s` by `family`, or `None` when the family does not apply to it.
pub(super) fn rewrite(
    family: Family,
    s: &str,
    cwd: Option<&str>,
    sibling_links: bool,
    rng: &mut Rng,
    extra: &mut Extra,
) -> Option<String> {
    let c = Cmd::new(s)?;
    use Family as F;
    match family {
        F::Quote => {
            let t = rng.take(c.respellable_words())?;
            let w = c.text(t);
            let n = w.len();
            let new = match rng.below(3) {
                0 => {
                    let k = rng.below(n + 1);
                    let q = if rng.below(2) == 0 { "''" } else { "\"\"" };
                    format!("{}{q}{}", &w[..k], &w[k..])
                }
                r => {
                    let a = rng.below(n);
                    let b = a + 1 + rng.below(n - a);
                    let q = if r == 1 { '\'' } else { '"' };
                    format!("{}{q}{}{q}{}", &w[..a], &w[a..b], &w[b..])
                }
            };
            Some(c.replace(t, &new))
        }
        F::Backslash => {
            let t = rng.take(c.respellable_words())?;
            let w = c.text(t);
            let k = rng.below(w.len());
            Some(c.replace(t, &format!("{}\\{}", &w[..k], &w[k..])))
        }
        F::AnsiC => {
            let t = rng.take(c.respellable_words())?;
            let w = c.text(t);
            let body: String = w
                .bytes()
                .map(|b| {
                    if rng.below(2) == 0 {
                        format!("\\x{b:02x}")
                    } else {
                        (b as char).to_string()
                    }
                })
                .collect();
            Some(c.replace(t, &format!("$'{body}'")))
        }
        F::Argv0Path => {
            let cands: Vec<(usize, String)> = c
                .segs
                .iter()
                .filter(|s| c.simple(s))
                .filter_map(|s| Some((s.cw?, c.cw_value(s)?)))
                .filter(|(_, v)| {
                    !v.contains('/') && external(v) && !BUILTIN_ONLY_FEATURES.contains(&v.as_str())
                })
                .flat_map(|(t, v)| {
                    ["/bin", "/usr/bin"]
                        .into_iter()
                        .map(move |d| (t, format!("{d}/{v}")))
                })
                .filter(|(_, p)| std::path::Path::new(p).is_file())
                .collect();
            let (t, p) = rng.take(cands)?;
            Some(c.replace(t, &p))
        }
        F::Brace => {
            let mut runs = Vec::new();
            for run in c.argv_runs() {
                let ok = |t: &usize| {
                    let w = c.text(*t);
                    lex::plain(w) && !w.contains(',')
                };
                for i in 0..run.len() {
                    let mut j = i;
                    while j < run.len() && ok(&run[j]) && (j == i || c.tight(run[j - 1], run[j])) {
                        j += 1;
                        runs.push((run[i], run[j - 1]));
                    }
                }
            }
            let (a, b) = rng.take(runs)?;
            let words: Vec<&str> = (a..=b).map(|t| c.text(t)).collect();
            let inner = if words.len() == 1 {
                format!("{},", words[0])
            } else {
                words.join(",")
            };
            Some(splice(s, c.span(a).0, c.span(b).1, &format!("{{{inner}}}")))
        }
        F::Ifs => {
            let mut gaps = Vec::new();
            for run in c.argv_runs() {
                for w in run.windows(2) {
                    if c.tight(w[0], w[1]) && lex::plain(c.text(w[0])) && lex::plain(c.text(w[1])) {
                        gaps.push((w[0], w[1]));
                    }
                }
            }
            let (a, b) = rng.take(gaps)?;
            let next = c.text(b).as_bytes()[0];
            let ifs = if !next.is_ascii_alphanumeric() && next != b'_' && rng.below(2) == 0 {
                "$IFS"
            } else {
                "${IFS}"
            };
            Some(splice(s, c.span(a).1, c.span(b).0, ifs))
        }
        F::Continuation => {
            if rng.below(2) == 0 {
                let t = rng.take(
                    c.respellable_words()
                        .into_iter()
                        .filter(|t| c.text(*t).len() > 1)
                        .collect(),
                )?;
                let w = c.text(t);
                let k = 1 + rng.below(w.len() - 1);
                Some(c.replace(t, &format!("{}\\\n{}", &w[..k], &w[k..])))
            } else {
                let mut gaps = Vec::new();
                for seg in c.segs.iter().filter(|s| s.delims.is_empty()) {
                    let last = seg
                        .args
                        .last()
                        .copied()
                        .into_iter()
                        .chain(seg.cw)
                        .chain(seg.redirs.iter().map(|r| r.1))
                        .chain(seg.assigns.iter().copied())
                        .max()?;
                    for t in seg.first..last {
                        if c.tight(t, t + 1) {
                            gaps.push(t);
                        }
                    }
                }
                let t = rng.take(gaps)?;
                Some(splice(s, c.span(t).1, c.span(t + 1).0, " \\\n"))
            }
        }
        F::Flags => {
            let mut options = Vec::new();
            for seg in c.segs.iter().filter(|s| c.simple(s)) {
                let Some(v) = c.cw_value(seg) else { continue };
                let Some((_, letters)) = FLAGS.iter().find(|(p, _)| *p == v) else {
                    continue;
                };
                let flag = |t: usize| {
                    let w = c.text(t);
                    w.len() > 1
                        && w.starts_with('-')
                        && w[1..].bytes().all(|b| letters.as_bytes().contains(&b))
                };
                let args: Vec<usize> = seg
                    .args
                    .iter()
                    .copied()
                    .take_while(|t| c.text(*t) != "--")
                    .collect();
                for (i, &t) in args.iter().enumerate() {
                    if !flag(t) {
                        continue;
                    }
                    let w = c.text(t);
                    if w.len() > 2 {
                        let split: Vec<String> =
                            w[1..].chars().map(|ch| format!("-{ch}")).collect();
                        options.push(c.replace(t, &split.join(" ")));
                        let mut rev: Vec<char> = w[1..].chars().collect();
                        rev.rotate_left(1);
                        let rot: String = rev.into_iter().collect();
                        if rot != w[1..] {
                            options.push(c.replace(t, &format!("-{rot}")));
                        }
                    }
                    if let Some(&u) = args.get(i + 1).filter(|u| flag(**u) && c.tight(t, **u)) {
                        let joined = format!("-{}{}", &w[1..], &c.text(u)[1..]);
                        options.push(splice(s, c.span(t).0, c.span(u).1, &joined));
                    }
                }
            }
            rng.take(options)
        }
        F::Abbrev => {
            let mut options = Vec::new();
            for seg in c.segs.iter().filter(|s| c.simple(s)) {
                let Some(v) = c.cw_value(seg) else { continue };
                for (prog, sub, full, min) in ABBREV {
                    if v != *prog || seg.args.len() < sub.len() {
                        continue;
                    }
                    let head = seg.args[..sub.len()]
                        .iter()
                        .map(|t| lex::static_word(c.text(*t)));
                    if !head.zip(sub.iter()).all(|(a, b)| a.as_deref() == Some(*b)) {
                        continue;
                    }
                    for &t in &seg.args[sub.len()..] {
                        let w = c.text(t);
                        let name_end = w.find('=').unwrap_or(w.len());
                        let name = &w[..name_end];
                        if name.len() < min.len() || !full.starts_with(name) {
                            continue;
                        }
                        for len in min.len()..=full.len() {
                            if len != name.len() {
                                options.push(
                                    c.replace(t, &format!("{}{}", &full[..len], &w[name_end..])),
                                );
                            }
                        }
                    }
                }
            }
            rng.take(options)
        }
        F::EnvPrefix | F::EnvPrefixInert => {
            let vars: &[&str] = if family == F::EnvPrefix {
                &["FOO=1", "MUTATED=x"]
            } else {
                &["LANG=C", "TZ=UTC", "NO_COLOR=1", "LC_ALL=C"]
            };
            let spots: Vec<usize> = c
                .segs
                .iter()
                .filter_map(|seg| match seg.cw {
                    Some(t) if c.simple(seg) => Some(t),
                    None => seg.assigns.first().copied(),
                    _ => None,
                })
                .collect();
            let t = rng.take(spots)?;
            let at = c.span(t).0;
            Some(splice(s, at, at, &format!("{} ", rng.pick(vars))))
        }
        F::WrapTimeout
        | F::WrapNice
        | F::WrapEnv
        | F::WrapCommand
        | F::WrapSudo
        | F::WrapNohup
        | F::WrapStdbuf => {
            let wrapper = match family {
                F::WrapTimeout => *rng.pick(&["timeout 5", "timeout 10s"]),
                F::WrapNice => *rng.pick(&["nice", "nice -n 5"]),
                F::WrapEnv => *rng.pick(&["env", "env FOO=1"]),
                F::WrapCommand => "command",
                F::WrapSudo => "sudo",
                F::WrapNohup => "nohup",
                _ => *rng.pick(&["stdbuf -o0", "stdbuf -oL"]),
            };
            let spots: Vec<usize> = c
                .segs
                .iter()
                .filter(|seg| c.simple(seg))
                .filter(|seg| family != F::WrapSudo || seg.assigns.is_empty())
                .filter_map(|seg| {
                    let v = c.cw_value(seg)?;
                    // `printf -v NAME` and `test -v NAME` exist only as builtins: the programs
                    // of those names neither assign nor evaluate an array subscript.
                    let builtin_only = matches!(v.as_str(), "printf" | "test" | "[")
                        && s.split_whitespace().any(|w| w == "-v");
                    let ok = if family == F::WrapCommand {
                        !KEYWORDS.contains(&v.as_str()) && !NO_COMMAND_PREFIX.contains(&v.as_str())
                    } else {
                        external(&v) && !builtin_only
                    };
                    ok.then_some(seg.cw?)
                })
                .collect();
            let t = rng.take(spots)?;
            let at = c.span(t).0;
            Some(splice(s, at, at, &format!("{wrapper} ")))
        }
        F::WrapTime => {
            let spots: Vec<usize> = c
                .segs
                .iter()
                .filter(|seg| c.simple(seg) && !matches!(seg.before.as_deref(), Some("|" | "|&")))
                .map(|seg| seg.first)
                .collect();
            let t = rng.take(spots)?;
            let at = c.span(t).0;
            let time = if rng.below(2) == 0 {
                "time "
            } else {
                "time -p "
            };
            Some(splice(s, at, at, time))
        }
        F::JoinAnd => Some(format!("true && {s}")),
        F::JoinOr => Some(format!("false || {s}")),
        F::JoinBg => Some(format!("true & {s}")),
        F::JoinSemi => {
            if c.open_end() && rng.below(2) == 0 {
                Some(format!("{s}; echo done"))
            } else {
                Some(format!("true; {s}"))
            }
        }
        F::JoinNewline => Some(if rng.below(2) == 0 {
            format!("{s}\necho done")
        } else {
            format!("true\n{s}")
        }),
        F::JoinPipe => {
            let seg = c
                .segs
                .first()
                .filter(|seg| seg.before.is_none() && c.simple(seg))?;
            let v = c.cw_value(seg)?;
            let reads_stdin = seg.args.iter().any(|t| matches!(c.text(*t), "-" | "@-"));
            (STDIN_IGNORING.contains(&v.as_str()) && !reads_stdin).then(|| format!("echo x | {s}"))
        }
        F::Comment => Some(if c.lx.has_heredoc {
            format!("{s}\n# mutated")
        } else {
            format!("{s} # mutated")
        }),
        F::Subshell | F::Group | F::CmdSubst => {
            if family != F::Group && c.stateful() {
                return None;
            }
            let (open, close, nl_close) = match family {
                F::Subshell => ("( ", " )", "\n)"),
                F::Group => ("{ ", "; }", "\n}"),
                _ => ("echo $( ", " )", "\n)"),
            };
            Some(if c.open_end() {
                format!("{open}{s}{close}")
            } else {
                format!("{open}{s}{nl_close}")
            })
        }
        F::Backtick => {
            let clean = !s.contains(['\\', '`']) && !c.lx.has_heredoc && !c.lx.has_comment;
            (clean && !c.stateful()).then(|| format!("echo `{s}`"))
        }
        F::BashC => (!c.stateful()).then(|| format!("bash -c {}", squote(s))),
        F::ShC => {
            let bashisms = [
                "$'", "<(", ">(", "[[", "{", "|&", "&>", "<<<", "declare", "function",
            ];
            (!c.stateful() && !bashisms.iter().any(|b| s.contains(b)))
                .then(|| format!("sh -c {}", squote(s)))
        }
        F::Eval => Some(format!("eval {}", squote(s))),
        f if f.is_path() => {
            let mut ops = path_operands(&c, cwd);
            while !ops.is_empty() {
                let k = rng.below(ops.len());
                let op = ops.swap_remove(k);
                let pc = PathCtx {
                    cwd,
                    can_rel: op.can_rel,
                    is_dir: op.is_dir,
                    follows: op.follows,
                    bash: true,
                    glob: c.text(op.tok).contains(['*', '?']),
                    sibling_links,
                };
                let mut trial = extra.clone();
                if let Some(new) = paths::rewrite(f, c.text(op.tok), &pc, rng, &mut trial) {
                    let new = if op.needs_slash && !new.contains('/') {
                        format!("./{new}")
                    } else {
                        new
                    };
                    *extra = trial;
                    return Some(c.replace(op.tok, &new));
                }
            }
            None
        }
        _ => None,
    }
}

/// A path operand of a command the generator knows.
struct Operand {
    tok: usize,
    is_dir: bool,
    follows: bool,
    can_rel: bool,
    /// `.`/`source` search `$PATH` for a name without `/`.
    needs_slash: bool,
}

/// The path operands of the commands in `c`: file operands of known file commands, `cd`
/// targets, `find` start points and output files, redirect targets.
fn path_operands(c: &Cmd<'_>, cwd: Option<&str>) -> Vec<Operand> {
    let mut out = Vec::new();
    let mut cd_seen = cwd.is_none();
    let path_word = |w: &str| {
        let body = w.strip_prefix('~').unwrap_or(w);
        (w == "~" || !w.starts_with('~') || body.starts_with('/'))
            && !w.starts_with('-')
            && body
                .bytes()
                .all(|b| lex::plain(&(b as char).to_string()) || b == b'*' || b == b'?')
    };
    for seg in &c.segs {
        let can_rel = !cd_seen;
        for &(op, target) in &seg.redirs {
            let o = c.text(op);
            let file = (!o.contains('&') || o.starts_with('&')) && !o.ends_with("<<<");
            if file && path_word(c.text(target)) {
                out.push(Operand {
                    tok: target,
                    is_dir: false,
                    follows: true,
                    can_rel,
                    needs_slash: false,
                });
            }
        }
        let Some(v) = c.simple(seg).then(|| c.cw_value(seg)).flatten() else {
            if seg.cw.is_some() {
                cd_seen = true;
            }
            continue;
        };
        let (is_dir, follows) = match v.as_str() {
            "cat" | "head" | "tail" | "wc" | "diff" | "." | "source" | "touch" => (false, true),
            "rm" | "ln" | "mkdir" | "cp" | "ls" => (false, false),
            "cd" | "pushd" => (true, true),
            "find" => (true, false),
            _ => {
                if v == "popd" {
                    cd_seen = true;
                }
                continue;
            }
        };
        let needs_slash = v == "." || v == "source";
        // A symbolic link's target is read from the link's directory, not the working
        // directory: respelled from here it would name another file.
        let mut skip_target = v == "ln"
            && seg.args.iter().any(|&t| {
                let w = c.text(t);
                w == "--symbolic" || (w.starts_with('-') && !w.starts_with("--") && w.contains('s'))
            });
        let mut options_done = false;
        let mut skip_next = false;
        let mut in_find_expr = false;
        for &t in &seg.args {
            let w = c.text(t);
            if skip_next {
                skip_next = false;
                continue;
            }
            if v == "find" {
                if in_find_expr || w.starts_with('-') || w == "(" || w == "!" {
                    let output = matches!(w, "-fprint" | "-fprint0" | "-fls" | "-fprintf");
                    let next = seg.args.iter().copied().find(|n| *n > t);
                    if let Some(n) = next.filter(|n| output && path_word(c.text(*n))) {
                        out.push(Operand {
                            tok: n,
                            is_dir: false,
                            follows: true,
                            can_rel,
                            needs_slash,
                        });
                    }
                    in_find_expr = true;
                    continue;
                }
            } else if !options_done && w.starts_with('-') {
                if w == "--" {
                    options_done = true;
                }
                if matches!(v.as_str(), "head" | "tail") && matches!(w, "-n" | "-c") {
                    skip_next = true;
                }
                continue;
            }
            if skip_target {
                skip_target = false;
                continue;
            }
            if path_word(w) {
                out.push(Operand {
                    tok: t,
                    is_dir,
                    follows,
                    can_rel,
                    needs_slash,
                });
            }
        }
        if matches!(v.as_str(), "cd" | "pushd") {
            cd_seen = true;
        }
    }
    // A path below a link the command itself makes (`ln -s ~ h; cat h/.ssh/x`) is not
    // respelled: staging another spelling (a link to it, a real directory on its way) would
    // make `h` before the command does, and `ln` would then put its link inside.
    let made: Vec<String> = c
        .segs
        .iter()
        .filter(|seg| c.simple(seg) && c.cw_value(seg).as_deref() == Some("ln"))
        .filter_map(|seg| {
            seg.args
                .iter()
                .map(|&t| c.text(t))
                .rfind(|w| !w.starts_with('-'))
                .map(|w| w.trim_end_matches('/').to_owned())
        })
        .collect();
    out.retain(|op| {
        let w = c.text(op.tok);
        let w = w.strip_prefix("./").unwrap_or(w);
        !made.iter().any(|m| {
            let m = m.strip_prefix("./").unwrap_or(m);
            w == m
                || w.starts_with(&format!("{m}/"))
                || cwd.is_some_and(|d| {
                    let abs = format!("{d}/{m}");
                    w == abs || w.starts_with(&format!("{abs}/"))
                })
        })
    });
    out
}
