//! The generator's own model of what bash runs for a tree it generated: an interpreter for
//! exactly the constructs the generator writes (brace expansion, tilde, parameters, command
//! substitution with the `echo` shim's output, arithmetic, word splitting on `IFS`, globs over
//! the staged directories, `cd`, `&&`/`||`, loops and branches). It is the harness's
//! self-check: when bash does not run what this model says, the generator (not the analyser)
//! is wrong.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::ast::{Cmd, HerePiece, List, Pipeline, Redir, Seg, Sep, Simple, Word};
use super::{FAILING, PROGRAMS, Unit};

/// Where a line runs: its start directory (`ws`) and home, each a tree of `d1`/`d2` two
/// levels deep, every directory holding `f1.txt`, `f2.txt` and `g.md`.
#[derive(Debug, Clone)]
pub struct World {
    /// The directory the line starts in.
    pub ws: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
}

/// The files in every staged directory.
pub(crate) const FILES: [&str; 3] = ["f1.txt", "f2.txt", "g.md"];
/// The subdirectories of a staged directory less than [`MAX_DEPTH`] deep.
pub(crate) const SUBDIRS: [&str; 2] = ["d1", "d2"];
/// How deep the staged trees go.
pub(crate) const MAX_DEPTH: usize = 2;

impl World {
    /// Every staged directory, roots first.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in [&self.ws, &self.home] {
            let mut level = vec![root.clone()];
            for _ in 0..=MAX_DEPTH {
                let mut next = Vec::new();
                for d in &level {
                    out.push(d.clone());
                    for s in SUBDIRS {
                        next.push(d.join(s));
                    }
                }
                level = next;
            }
        }
        out
    }

    /// How deep `dir` is in a staged tree, `None` when it is not a staged directory.
    pub(crate) fn depth(&self, dir: &Path) -> Option<usize> {
        for root in [&self.ws, &self.home] {
            if let Ok(rel) = dir.strip_prefix(root) {
                let comps: Vec<_> = rel.components().collect();
                let ok = comps
                    .iter()
                    .all(|c| matches!(c, Component::Normal(n) if SUBDIRS.iter().any(|s| n == s)));
                if ok && comps.len() <= MAX_DEPTH {
                    return Some(comps.len());
                }
            }
        }
        None
    }

    fn entries(&self, dir: &Path) -> Vec<String> {
        let mut e: Vec<String> = FILES.iter().map(|s| (*s).to_owned()).collect();
        if self.depth(dir).is_some_and(|d| d < MAX_DEPTH) {
            e.extend(SUBDIRS.iter().map(|s| (*s).to_owned()));
        }
        e.sort();
        e
    }
}

/// Lexically normalised `base/rel`.
pub(crate) fn join_norm(base: &Path, rel: &str) -> PathBuf {
    let mut out = if rel.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    for c in Path::new(rel).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// A shell's state: what a subshell copies.
#[derive(Debug, Clone)]
pub(crate) struct State {
    pub cwd: PathBuf,
    pub vars: BTreeMap<String, String>,
}

impl State {
    pub(crate) fn new(world: &World) -> Self {
        Self {
            cwd: world.ws.clone(),
            vars: BTreeMap::new(),
        }
    }
}

/// Runs trees, collecting what runs.
pub(crate) struct Exec<'w> {
    world: &'w World,
    /// The programs run, in order.
    pub units: Vec<Unit>,
    /// A command was skipped by `&&`, `||`, a branch or a loop.
    pub skipped: bool,
    /// Why the line is not one bash would run as modelled (a bad `cd`, a non-shim program).
    pub invalid: Option<String>,
    last_sub_status: Option<i32>,
}

type Flow = (i32, String);

/// A character of a word being expanded: may it split, may it glob.
#[derive(Clone, Copy)]
struct Ch {
    c: char,
    glob: bool,
}

struct Splitter {
    ifs: String,
    fields: Vec<Vec<Ch>>,
    cur: Vec<Ch>,
    started: bool,
}

impl Splitter {
    fn new(ifs: String) -> Self {
        Self {
            ifs,
            fields: Vec::new(),
            cur: Vec::new(),
            started: false,
        }
    }

    fn fixed(&mut self, text: &str, glob: bool) {
        for c in text.chars() {
            self.cur.push(Ch { c, glob });
            self.started = true;
        }
    }

    fn quoted(&mut self, text: &str) {
        self.started = true;
        self.fixed(text, false);
    }

    fn expanded(&mut self, text: &str) {
        for c in text.chars() {
            if self.ifs.contains(c) {
                if c.is_whitespace() {
                    if self.started {
                        self.fields.push(std::mem::take(&mut self.cur));
                        self.started = false;
                    }
                } else {
                    self.fields.push(std::mem::take(&mut self.cur));
                    self.started = false;
                }
            } else {
                self.cur.push(Ch { c, glob: true });
                self.started = true;
            }
        }
    }

    fn finish(mut self) -> Vec<Vec<Ch>> {
        if self.started {
            self.fields.push(self.cur);
        }
        self.fields
    }
}

fn glob_match(pat: &[Ch], name: &[char]) -> bool {
    match pat.first() {
        None => name.is_empty(),
        Some(Ch { c: '*', glob: true }) => {
            (0..=name.len()).any(|i| glob_match(&pat[1..], &name[i..]))
        }
        Some(Ch { c: '?', glob: true }) => !name.is_empty() && glob_match(&pat[1..], &name[1..]),
        Some(Ch { c: '[', glob: true }) => {
            let close = pat.iter().skip(2).position(|ch| ch.c == ']').map(|p| p + 2);
            match close {
                Some(end) => {
                    let set: Vec<char> = pat[1..end].iter().map(|ch| ch.c).collect();
                    let (neg, set) = match set.first() {
                        Some('!' | '^') => (true, &set[1..]),
                        _ => (false, &set[..]),
                    };
                    !name.is_empty()
                        && set.contains(&name[0]) != neg
                        && glob_match(&pat[end + 1..], &name[1..])
                }
                None => name.first() == Some(&'[') && glob_match(&pat[1..], &name[1..]),
            }
        }
        Some(ch) => name.first() == Some(&ch.c) && glob_match(&pat[1..], &name[1..]),
    }
}

impl<'w> Exec<'w> {
    pub(crate) fn new(world: &'w World) -> Self {
        Self {
            world,
            units: Vec::new(),
            skipped: false,
            invalid: None,
            last_sub_status: None,
        }
    }

    fn invalid(&mut self, why: String) {
        self.invalid.get_or_insert(why);
    }

    pub(crate) fn list(&mut self, st: &mut State, l: &List) -> Flow {
        let mut status = 0;
        let mut out = String::new();
        for item in &l.0 {
            if matches!(item.sep, Sep::Amp) {
                let mut bg = st.clone();
                let (_, o) = self.and_or(&mut bg, item);
                out.push_str(&o);
                status = 0;
            } else {
                let (s, o) = self.and_or(st, item);
                status = s;
                out.push_str(&o);
            }
        }
        (status, out)
    }

    fn and_or(&mut self, st: &mut State, a: &super::ast::AndOr) -> Flow {
        let (mut status, mut out) = self.pipeline(st, &a.first);
        for (and, p) in &a.rest {
            if *and == (status == 0) {
                let (s, o) = self.pipeline(st, p);
                status = s;
                out.push_str(&o);
            } else {
                self.skipped = true;
            }
        }
        (status, out)
    }

    pub(crate) fn pipeline(&mut self, st: &mut State, p: &Pipeline) -> Flow {
        let (status, out) = if p.cmds.len() == 1 {
            self.cmd(st, &p.cmds[0].0)
        } else {
            let mut last = (0, String::new());
            for (c, _) in &p.cmds {
                let mut sub = st.clone();
                last = self.cmd(&mut sub, c);
            }
            last
        };
        let status = if p.bang {
            i32::from(status == 0)
        } else {
            status
        };
        (status, out)
    }

    fn cmd(&mut self, st: &mut State, c: &Cmd) -> Flow {
        match c {
            Cmd::Simple(s) => self.simple(st, s),
            Cmd::Eval(inner, _) => self.list(st, inner),
            Cmd::Raw { runs, status, .. } => {
                for argv in runs {
                    self.units.push(Unit {
                        argv: argv.clone(),
                        cwd: st.cwd.clone(),
                    });
                }
                (*status, String::new())
            }
            Cmd::Subshell(l, redirs) => {
                let mut sub = st.clone();
                let (s, o) = self.list(&mut sub, l);
                let moved = self.redirs(st, redirs);
                (s, if moved { String::new() } else { o })
            }
            Cmd::Group(l, redirs) => {
                let (s, o) = self.list(st, l);
                let moved = self.redirs(st, redirs);
                (s, if moved { String::new() } else { o })
            }
            Cmd::If { cond, then, els } => {
                let (s, mut out) = self.list(st, cond);
                if s == 0 {
                    if els.as_ref().is_some_and(|e| !e.is_noop()) {
                        self.skipped = true;
                    }
                    let (s, o) = self.list(st, then);
                    out.push_str(&o);
                    (s, out)
                } else {
                    if !then.is_noop() {
                        self.skipped = true;
                    }
                    match els {
                        Some(e) => {
                            let (s, o) = self.list(st, e);
                            out.push_str(&o);
                            (s, out)
                        }
                        None => (0, out),
                    }
                }
            }
            Cmd::For { var, items, body } => {
                let mut fields = Vec::new();
                for w in items {
                    fields.extend(self.expand(st, w));
                }
                if fields.is_empty() {
                    self.skipped = true;
                }
                let mut flow = (0, String::new());
                for f in fields {
                    st.vars.insert(var.clone(), f);
                    let (s, o) = self.list(st, body);
                    flow.0 = s;
                    flow.1.push_str(&o);
                }
                flow
            }
            Cmd::While { until, cond, body } => {
                let (s, mut out) = self.list(st, cond);
                if (s == 0) != *until {
                    let (_, o) = self.list(st, body);
                    out.push_str(&o);
                } else {
                    self.skipped = true;
                }
                (0, out)
            }
            Cmd::Test(t) => {
                let v = self.expand_flat(st, &t.word);
                let holds = if t.op == "-z" {
                    v.is_empty()
                } else {
                    !v.is_empty()
                };
                (i32::from(!holds), String::new())
            }
        }
    }

    fn simple(&mut self, st: &mut State, s: &Simple) -> Flow {
        if s.words.is_empty() {
            // An assignment-only command has the status of its last command substitution.
            let mut status = 0;
            for (name, w) in &s.assigns {
                self.last_sub_status = None;
                let v = self.expand_flat(st, w);
                if let Some(sub) = self.last_sub_status.take() {
                    status = sub;
                }
                st.vars.insert(name.clone(), v);
            }
            self.redirs(st, &s.redirs);
            return (status, String::new());
        }
        let mut argv = Vec::new();
        for w in &s.words {
            argv.extend(self.expand(st, w));
        }
        for (_, w) in &s.assigns {
            self.expand_flat(st, w);
        }
        let moved = self.redirs(st, &s.redirs);
        self.run_argv(st, argv, moved)
    }

    fn run_argv(&mut self, st: &mut State, mut argv: Vec<String>, moved: bool) -> Flow {
        loop {
            let Some(name) = argv.first().cloned() else {
                self.invalid("a command expanded to nothing".into());
                return (0, String::new());
            };
            match name.as_str() {
                "command" | "exec" => {
                    argv.remove(0);
                }
                ":" => return (0, String::new()),
                "cd" => {
                    let target = match argv.get(1) {
                        None => self.world.home.clone(),
                        Some(t) => join_norm(&st.cwd, t),
                    };
                    if argv.len() > 2 || self.world.depth(&target).is_none() {
                        self.invalid(format!("cd to {}", target.display()));
                        return (1, String::new());
                    }
                    st.cwd = target;
                    return (0, String::new());
                }
                n if PROGRAMS.contains(&n) => {
                    self.units.push(Unit {
                        argv: argv.clone(),
                        cwd: st.cwd.clone(),
                    });
                    let out = if n == "echo" && !moved {
                        format!("{}\n", argv[1..].join(" "))
                    } else {
                        String::new()
                    };
                    return (i32::from(FAILING.contains(&n)), out);
                }
                other => {
                    self.invalid(format!("`{other}` is no shim"));
                    return (127, String::new());
                }
            }
        }
    }

    fn redirs(&mut self, st: &State, redirs: &[Redir]) -> bool {
        for r in redirs {
            match r {
                Redir::File { target, .. } => {
                    self.expand_flat(st, target);
                }
                Redir::Dup(_) => {}
                Redir::Heredoc { quoted, body } => {
                    if !quoted {
                        for p in body {
                            if let HerePiece::Sub(l) = p {
                                let mut sub = st.clone();
                                self.list(&mut sub, l);
                            }
                        }
                    }
                }
            }
        }
        redirs.iter().any(Redir::moves_stdout)
    }

    fn var(&self, st: &State, name: &str) -> Option<String> {
        match name {
            "HOME" => Some(self.world.home.display().to_string()),
            "PWD" => Some(st.cwd.display().to_string()),
            _ => st.vars.get(name).cloned(),
        }
    }

    /// The value of an expansion piece (running substitutions), `None` for literal pieces.
    fn piece(&mut self, st: &State, seg: &Seg) -> Option<String> {
        match seg {
            Seg::Var { name, default, .. } => {
                let v = self.var(st, name).unwrap_or_default();
                Some(match default {
                    Some(d) if v.is_empty() => d.clone(),
                    _ => v,
                })
            }
            Seg::Sub { list, .. } => {
                let mut sub = st.clone();
                let (status, out) = self.list(&mut sub, list);
                self.last_sub_status = Some(status);
                Some(out.trim_end_matches('\n').to_owned())
            }
            Seg::Arith { a, b, .. } => Some((a + b).to_string()),
            Seg::ProcSub(list) => {
                let mut sub = st.clone();
                self.list(&mut sub, list);
                Some(super::PROC_SUB_PATH.to_owned())
            }
            _ => None,
        }
    }

    /// A word expanded without splitting or globbing (assignments, `[[ ]]`, redirections).
    fn expand_flat(&mut self, st: &State, w: &Word) -> String {
        let mut out = String::new();
        for seg in &w.0 {
            match seg {
                Seg::Lit(v, _) | Seg::Glob(v) => out.push_str(v),
                Seg::Tilde(rest) => {
                    out.push_str(&self.world.home.display().to_string());
                    out.push_str(rest);
                }
                Seg::Brace(alts) => out.push_str(&format!("{{{}}}", alts.join(","))),
                Seg::Seq(a, b) => out.push_str(&format!("{{{a}..{b}}}")),
                Seg::Cont => {}
                other => {
                    if let Some(v) = self.piece(st, other) {
                        out.push_str(&v);
                    }
                }
            }
        }
        out
    }

    /// A word expanded as an argument: brace expansion, then each result expanded, split and
    /// globbed.
    pub(crate) fn expand(&mut self, st: &State, w: &Word) -> Vec<String> {
        let mut words: Vec<Vec<Seg>> = vec![Vec::new()];
        for seg in &w.0 {
            let alts: Vec<String> = match seg {
                Seg::Brace(alts) => alts.clone(),
                Seg::Seq(a, b) => {
                    let up: Vec<String> = (*a.min(b)..=*a.max(b)).map(String::from).collect();
                    if a <= b {
                        up
                    } else {
                        up.into_iter().rev().collect()
                    }
                }
                other => {
                    for word in &mut words {
                        word.push(other.clone());
                    }
                    continue;
                }
            };
            words = words
                .into_iter()
                .flat_map(|w| {
                    alts.iter().map(move |a| {
                        let mut w = w.clone();
                        w.push(Seg::Glob(a.clone()));
                        w
                    })
                })
                .collect();
        }
        let mut out = Vec::new();
        for segs in words {
            out.extend(self.expand_one(st, &segs));
        }
        out
    }

    fn expand_one(&mut self, st: &State, segs: &[Seg]) -> Vec<String> {
        let ifs = st
            .vars
            .get("IFS")
            .cloned()
            .unwrap_or_else(|| " \t\n".into());
        let mut sp = Splitter::new(ifs);
        for seg in segs {
            match seg {
                Seg::Lit(v, style) => {
                    if matches!(style, super::ast::Style::Bare) {
                        sp.fixed(v, false);
                    } else {
                        sp.quoted(v);
                    }
                }
                Seg::Glob(p) => sp.fixed(p, true),
                Seg::Tilde(rest) => {
                    sp.fixed(&self.world.home.display().to_string(), false);
                    sp.fixed(rest, false);
                }
                Seg::Cont => {}
                Seg::Brace(_) | Seg::Seq(..) => {}
                Seg::ProcSub(_) => {
                    if let Some(v) = self.piece(st, seg) {
                        sp.fixed(&v, false);
                    }
                }
                Seg::Var { quoted, .. } | Seg::Sub { quoted, .. } | Seg::Arith { quoted, .. } => {
                    let v = self.piece(st, seg).unwrap_or_default();
                    if *quoted {
                        sp.quoted(&v);
                    } else {
                        sp.expanded(&v);
                    }
                }
            }
        }
        let entries = self.world.entries(&st.cwd);
        let mut out = Vec::new();
        for field in sp.finish() {
            let text: String = field.iter().map(|c| c.c).collect();
            if field
                .iter()
                .any(|c| c.glob && matches!(c.c, '*' | '?' | '['))
            {
                let hits: Vec<&String> = entries
                    .iter()
                    .filter(|e| glob_match(&field, &e.chars().collect::<Vec<_>>()))
                    .collect();
                if !hits.is_empty() {
                    out.extend(hits.into_iter().cloned());
                    continue;
                }
            }
            out.push(text);
        }
        out
    }
}
