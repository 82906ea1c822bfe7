//! The grammar-driven generator. It builds a tree while running each finished piece through
//! the oracle, so it knows the exit status of what came before and writes `&&` only after a
//! success, `||` only after a failure, and `while`/`until` and `if`/`else` so that the branch
//! that does not run is `:`. A line the oracle still finds skipped or invalid is drawn again.

use super::ast::{
    AndOr, Cmd, HerePiece, List, Pipeline, Redir, Seg, Sep, Simple, Style, Test, Word,
};
use super::oracle::{Exec, State, World};
use super::{FAILING, PROGRAMS, Unit};
use crate::rng::Rng;

/// Where in a line a piece is generated.
#[derive(Debug, Clone, Copy, Default)]
struct Scope {
    /// Inside `$(...)`, `<(...)`, a here-document or `eval`: no here-documents, comments or `&`.
    nested: bool,
    /// Inside backquotes: only plain letters, no backslashes or nested substitutions.
    plain: bool,
    /// Inside a loop body: no `cd` (it would run once per iteration).
    in_loop: bool,
    /// Compound nesting depth.
    depth: usize,
}

impl Scope {
    /// One compound level further in.
    fn deeper(self) -> Scope {
        Scope {
            depth: self.depth + 1,
            ..self
        }
    }
}

const SIMPLE_VALUES: &[&str] = &[
    "a", "b", "x1", "-n", "-rf", "--force", "foo.txt", "a.b", "x=y", "1", "/tmp", "dir/f", "-", "@",
];
const WILD_CHARS: &[char] = &[
    'a', 'b', 'z', '0', '7', ' ', ' ', '\t', '\n', '\'', '"', '$', '\\', '*', '?', '[', ']', '{',
    '}', ',', ';', '|', '&', '#', '~', '=', '(', ')', '<', '>', '!', '`', 'é', '%', '-', '.',
];
const GLOBS: &[&str] = &["*.txt", "f?.txt", "*.md", "[fg]*", "*.zz", "f*", "d?"];
const VAR_VALUES: &[&str] = &[
    "a b", "x", "*.txt", "a,b", "a:b c", "p2", "p3 -v", "", "  a  b  ", "f?.txt", "a,,b,",
];
const COMMENTS: &[&str] = &[
    "rm -rf / $(p9 boom) `p9`",
    "it's fine \"really\"",
    "p9 && p9 | p9",
    "",
];

/// A generated line: its text and what the oracle says bash runs.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The bash text.
    pub line: String,
    /// The programs bash runs, by the generator's model.
    pub expected: Vec<Unit>,
}

/// Generate line `index` of the run seeded with `seed`, for `world`.
pub fn generate(seed: u64, index: u64, world: &World) -> Generated {
    let mut g = Gen {
        rng: Rng::for_line(seed, index),
        world,
        budget: 0,
    };
    for _ in 0..64 {
        g.budget = if g.rng.chance(70) {
            1 + g.rng.below(4)
        } else {
            4 + g.rng.below(8)
        };
        let mut st = State::new(world);
        let tree = g.list(&mut st, Scope::default(), 4, true);
        let mut exec = Exec::new(world);
        exec.list(&mut State::new(world), &tree);
        if !exec.skipped && exec.invalid.is_none() && !exec.units.is_empty() {
            return Generated {
                line: super::ast::render_line(&tree),
                expected: exec.units,
            };
        }
    }
    Generated {
        line: "p1 a".into(),
        expected: vec![Unit {
            argv: vec!["p1".into(), "a".into()],
            cwd: world.ws.clone(),
        }],
    }
}

struct Gen<'w> {
    rng: Rng,
    world: &'w World,
    /// Simple commands left to draw in this line.
    budget: usize,
}

impl Gen<'_> {
    /// A list of one to `most` and-or lists.
    fn list(&mut self, st: &mut State, sc: Scope, most: usize, top: bool) -> List {
        let items = 1 + self.rng.below(most);
        let mut list = List::default();
        for i in 0..items.max(1) {
            if i > 0 && self.budget == 0 {
                break;
            }
            let last = i + 1 == items;
            let sep = match self.rng.below(10) {
                0..=3 => Sep::Semi,
                4..=5 => Sep::Newline,
                6 if !sc.nested => Sep::Amp,
                7 if !sc.nested && (top || !last) => {
                    Sep::Comment((*self.rng.pick(COMMENTS)).to_owned())
                }
                _ => Sep::Semi,
            };
            let item = if matches!(sep, Sep::Amp) {
                let mut bg = st.clone();
                self.and_or(&mut bg, sc, sep)
            } else {
                self.and_or(st, sc, sep)
            };
            list.0.push(item);
        }
        list
    }

    fn run(&self, st: &mut State, p: &Pipeline) -> i32 {
        Exec::new(self.world).pipeline(st, p).0
    }

    fn and_or(&mut self, st: &mut State, sc: Scope, sep: Sep) -> AndOr {
        let first = self.pipeline(st, sc);
        let mut status = self.run(st, &first);
        let mut rest = Vec::new();
        while self.budget > 0 && self.rng.chance(30) {
            let p = self.pipeline(st, sc);
            rest.push((status == 0, p.clone()));
            status = self.run(st, &p);
        }
        AndOr { first, rest, sep }
    }

    fn pipeline(&mut self, st: &State, sc: Scope) -> Pipeline {
        let n = if self.budget > 1 && self.rng.chance(25) {
            2 + self.rng.below(2)
        } else {
            1
        };
        let mut cmds = Vec::new();
        for _ in 0..n {
            let op = if self.rng.chance(20) { "|&" } else { "|" };
            cmds.push((self.cmd(st, sc, n == 1), op));
        }
        // `time` reports on the shell's own standard error: only where that is the line's,
        // never into a pipe whose reader may be gone (bash would die of SIGPIPE).
        let time = sc.depth == 0 && !sc.nested && self.rng.chance(5);
        let bang = !time && self.rng.chance(5);
        Pipeline { time, bang, cmds }
    }

    fn cmd(&mut self, st: &State, sc: Scope, alone: bool) -> Cmd {
        let compound = sc.depth < 3 && !sc.plain && self.budget > 1;
        match self.rng.below(100) {
            0..=7 if alone => Cmd::Simple(self.assignment(st, sc)),
            8..=13 if alone && !sc.in_loop && !sc.plain => Cmd::Simple(self.cd(st)),
            14..=18 if !sc.plain => {
                let inner = self.nested_list(st, sc, 2);
                let style = self.quoted_style();
                Cmd::Eval(Box::new(inner), style)
            }
            19..=23 if compound => {
                let inner = sc.deeper();
                let mut g = st.clone();
                let mut body = self.list(&mut g, inner, 3, false);
                if self.rng.chance(30) {
                    let mut s = self.simple(&g, inner);
                    // `exec` runs programs only, not the `command` builtin.
                    if matches!(s.words[0].0.as_slice(), [Seg::Lit(w, _)] if w == "command") {
                        s.words.remove(0);
                    }
                    s.words
                        .insert(0, Word(vec![Seg::Lit("exec".into(), Style::Bare)]));
                    body.0.push(AndOr {
                        first: Pipeline {
                            time: false,
                            bang: false,
                            cmds: vec![(Cmd::Simple(s), "|")],
                        },
                        rest: Vec::new(),
                        sep: Sep::Semi,
                    });
                }
                Cmd::Subshell(body, self.group_redirs())
            }
            24..=28 if compound => {
                let body = self.list_in(st, sc.deeper(), 3);
                Cmd::Group(body, self.group_redirs())
            }
            29..=33 if compound => {
                let (cond, status, body) = self.cond_and_body(st, sc.deeper());
                let noop = || noop_list();
                if status == 0 {
                    let els = self.rng.chance(40).then(noop);
                    Cmd::If {
                        cond,
                        then: body,
                        els,
                    }
                } else {
                    Cmd::If {
                        cond,
                        then: noop(),
                        els: Some(body),
                    }
                }
            }
            34..=37 if compound => {
                let (cond, status, body) = self.cond_and_body(st, sc.deeper());
                Cmd::While {
                    until: status != 0,
                    cond,
                    body,
                }
            }
            38..=42 if compound => {
                let inner = Scope {
                    in_loop: true,
                    ..sc.deeper()
                };
                let items: Vec<Word> = (0..1 + self.rng.below(3))
                    .map(|_| match self.rng.below(4) {
                        0 => Word(vec![Seg::Lit(
                            (*self.rng.pick(&PROGRAMS[..6])).to_owned(),
                            Style::Bare,
                        )]),
                        1 => Word(vec![Seg::Brace(vec!["a".into(), "b".into()])]),
                        _ => {
                            let v = self.simple_value();
                            self.styled(v, sc)
                        }
                    })
                    .collect();
                let mut g = st.clone();
                let mut probe = Exec::new(self.world);
                let first = items
                    .iter()
                    .flat_map(|w| probe.expand(&g, w))
                    .next()
                    .unwrap_or_default();
                g.vars.insert("v".into(), first);
                let body = self.list(&mut g, inner, 2, false);
                Cmd::For {
                    var: "v".into(),
                    items,
                    body,
                }
            }
            43..=47 if !sc.plain && alone => {
                let word = match self.rng.below(3) {
                    0 => Word(vec![self.sub(st, sc, true)]),
                    1 => self.var_word(st, true),
                    _ => self.arg(st, sc),
                };
                let op = if self.rng.chance(50) { "-z" } else { "-n" };
                Cmd::Test(Test { op, word })
            }
            48..=53 if !sc.plain => self.state_construct(),
            _ => Cmd::Simple(self.simple(st, sc)),
        }
    }

    /// A construct whose effect on what runs lives in the shell's state (issue 20 item 6):
    /// programs named through `printf -v`, `declare`, `read` and `mapfile` from here-strings,
    /// arrays, `set --`, indirect expansion, arithmetic assignments, substitutions in array
    /// subscripts, the shell run again through `$BASH`, and here-strings fed to a program.
    fn state_construct(&mut self) -> Cmd {
        // Programs that are shims in the child shell too (no builtin of that name).
        const CHILD_SAFE: &[&str] = &["p1", "p2", "p3", "a", "b", "cat", "curl", "git", "rm"];
        let prog = (*self.rng.pick(CHILD_SAFE)).to_owned();
        let status = 0;
        let args: Vec<String> = (0..self.rng.below(3))
            .map(|_| (*self.rng.pick(&["x", "-n", "y.txt", "z"])).to_owned())
            .collect();
        let tail = if args.is_empty() {
            String::new()
        } else {
            format!(" {}", args.join(" "))
        };
        let mut run = vec![prog.clone()];
        run.extend(args.iter().cloned());
        let (text, runs) = match self.rng.below(13) {
            0 => (
                format!("enable printf; printf -v Q %s {prog}; $Q{tail}"),
                vec![run],
            ),
            1 => (format!("declare Q={prog}; $Q{tail}"), vec![run]),
            2 => (format!("read -r Q <<< {prog}; $Q{tail}"), vec![run]),
            3 => (
                format!("mapfile -t Q <<< {prog}; ${{Q[0]}}{tail}"),
                vec![run],
            ),
            4 => (format!("Q=({prog}{tail}); \"${{Q[@]}}\""), vec![run]),
            5 => (format!("set -- {prog}{tail}; \"$@\""), vec![run]),
            6 => (format!("R={prog}; Q=R; ${{!Q}}{tail}"), vec![run]),
            7 => (
                format!("(( Q = 2 + 3 )); {prog} $Q"),
                vec![vec![prog.clone(), "5".into()]],
            ),
            8 => (
                format!("let Q=4*2; {prog} $Q"),
                vec![vec![prog.clone(), "8".into()]],
            ),
            9 => (
                format!("declare -a A; A[$(p1)]=x; {prog}{tail}"),
                vec![vec!["p1".into()], run],
            ),
            10 => (format!("Q={prog}; \"$BASH\" -c \"$Q{tail}\""), vec![run]),
            11 => {
                let word = *self.rng.pick(&["hello", "'a b'", "\"$HOME\"", "$(p2)"]);
                let mut runs = Vec::new();
                if word == "$(p2)" {
                    runs.push(vec!["p2".to_owned()]);
                }
                runs.push(run);
                (format!("{prog}{tail} <<< {word}"), runs)
            }
            _ => (format!("Q=$'{prog}'; $Q{tail}"), vec![run]),
        };
        Cmd::Raw { text, runs, status }
    }

    fn nested_list(&mut self, st: &State, sc: Scope, most: usize) -> List {
        let inner = Scope {
            nested: true,
            ..sc.deeper()
        };
        self.list_in(st, inner, most)
    }

    /// A list of one to `most` and-or lists in `inner`, run from a copy of `st`.
    fn list_in(&mut self, st: &State, inner: Scope, most: usize) -> List {
        let mut g = st.clone();
        self.list(&mut g, inner, most, false)
    }

    /// The condition of an `if` or `while` in `inner`, its exit status, and a body generated
    /// in the state the condition leaves.
    fn cond_and_body(&mut self, st: &State, inner: Scope) -> (List, i32, List) {
        let mut g = st.clone();
        let cond = self.list(&mut g, inner, 1, false);
        let status = Exec::new(self.world).list(&mut st.clone(), &cond).0;
        let body = self.list(&mut g, inner, 2, false);
        (cond, status, body)
    }

    fn group_redirs(&mut self) -> Vec<Redir> {
        match self.rng.below(6) {
            0 => vec![self.file_redir(">")],
            1 => vec![Redir::Dup("2>&1")],
            _ => Vec::new(),
        }
    }

    fn file_redir(&mut self, op: &'static str) -> Redir {
        let name = format!("o{}.log", self.rng.below(4));
        let fd = (op != "&>" && self.rng.chance(20)).then_some(2);
        let style = *self.rng.pick(&[Style::Bare, Style::Single, Style::Double]);
        Redir::File {
            fd,
            op,
            target: Word(vec![Seg::Lit(name, style)]),
        }
    }

    fn assignment(&mut self, st: &State, sc: Scope) -> Simple {
        let (name, value) = if !sc.plain && self.rng.chance(10) {
            let v = *self.rng.pick(&[",", ":", " "]);
            (
                "IFS".to_owned(),
                Word(vec![Seg::Lit(v.into(), Style::Single)]),
            )
        } else {
            let name = (*self.rng.pick(&["X", "Y", "Z", "P"])).to_owned();
            let value = if sc.plain {
                Word(vec![Seg::Lit(self.simple_value(), Style::Bare)])
            } else {
                match self.rng.below(8) {
                    0 => Word(vec![self.sub(st, sc, false)]),
                    1 => Word(vec![Seg::Tilde("/d1".into())]),
                    2 => Word(vec![Seg::Var {
                        name: "HOME".into(),
                        quoted: false,
                        default: None,
                    }]),
                    3 => Word(vec![Seg::Lit(
                        (*self.rng.pick(&PROGRAMS[..9])).to_owned(),
                        Style::Bare,
                    )]),
                    _ => {
                        let v = (*self.rng.pick(VAR_VALUES)).to_owned();
                        let style = self.quoted_style();
                        Word(vec![Seg::Lit(v, style)])
                    }
                }
            };
            (name, value)
        };
        Simple {
            assigns: vec![(name, value)],
            ..Simple::default()
        }
    }

    fn cd(&mut self, st: &State) -> Simple {
        let depth = self.world.depth(&st.cwd).unwrap_or(0);
        let mut targets: Vec<Option<Word>> =
            vec![None, Some(Word(vec![Seg::Tilde(String::new())]))];
        if depth < 2 {
            for d in ["d1", "d2"] {
                targets.push(Some(self.styled(d.into(), Scope::default())));
            }
        }
        if depth == 0 {
            targets.push(Some(self.styled("d1/d2".into(), Scope::default())));
        }
        if depth > 0 {
            targets.push(Some(Word(vec![Seg::Lit("..".into(), Style::Bare)])));
        }
        targets.push(Some(Word(vec![Seg::Tilde("/d2".into())])));
        targets.push(Some(Word(vec![
            Seg::Var {
                name: "HOME".into(),
                quoted: true,
                default: None,
            },
            Seg::Lit("/d1".into(), Style::Bare),
        ])));
        let target = self.rng.pick(&targets).clone();
        let mut words = vec![Word(vec![Seg::Lit("cd".into(), Style::Bare)])];
        words.extend(target);
        Simple {
            words,
            ..Simple::default()
        }
    }

    fn program(&mut self) -> &'static str {
        let pool: Vec<&'static str> = if self.rng.chance(15) {
            FAILING.to_vec()
        } else {
            PROGRAMS
                .iter()
                .copied()
                .filter(|p| !FAILING.contains(p))
                .collect()
        };
        pool[self.rng.below(pool.len())]
    }

    fn simple(&mut self, st: &State, sc: Scope) -> Simple {
        self.budget = self.budget.saturating_sub(1);
        let name = self.program();
        let mut words = Vec::new();
        // A variable whose unquoted expansion starts with a program name.
        let program_var = ["X", "Y", "Z", "P"].into_iter().find(|v| {
            let word = Word(vec![Seg::Var {
                name: (*v).into(),
                quoted: false,
                default: None,
            }]);
            let fields = Exec::new(self.world).expand(st, &word);
            fields
                .first()
                .is_some_and(|f| PROGRAMS.contains(&f.as_str()))
        });
        match self.rng.below(100) {
            0..=9 if !sc.plain && name.len() == 2 && name.starts_with('p') => {
                // `p{1..3}`: brace expansion in command position.
                words.push(Word(vec![
                    Seg::Lit("p".into(), Style::Bare),
                    Seg::Seq(
                        name.chars().nth(1).unwrap_or('1'),
                        *self.rng.pick(&['3', '4']),
                    ),
                ]));
            }
            10..=17 if !sc.plain => {
                words.push(Word(vec![Seg::Brace(vec![
                    name.to_owned(),
                    (*self.rng.pick(SIMPLE_VALUES))
                        .trim_start_matches('-')
                        .replace(['.', '/', '=', '@'], "")
                        .to_owned()
                        + "z",
                ])]));
            }
            18..=25 if !sc.plain && program_var.is_some() => {
                let v = program_var.unwrap_or("P");
                let quoted = st
                    .vars
                    .get(v)
                    .is_some_and(|val| PROGRAMS.contains(&val.as_str()))
                    && self.rng.chance(50);
                words.push(Word(vec![Seg::Var {
                    name: v.into(),
                    quoted,
                    default: None,
                }]));
            }
            26..=29 if !sc.plain => {
                words.push(Word(vec![Seg::Var {
                    name: "U".into(),
                    quoted: false,
                    default: None,
                }]));
                words.push(self.styled(name.into(), sc));
            }
            30..=34 => {
                words.push(Word(vec![Seg::Lit("command".into(), Style::Bare)]));
                words.push(self.styled(name.into(), sc));
            }
            _ => words.push(self.styled(name.into(), sc)),
        }
        for _ in 0..self.rng.below(4) {
            words.push(self.arg(st, sc));
        }
        let mut s = Simple {
            words,
            ..Simple::default()
        };
        if !sc.plain && self.rng.chance(8) {
            let value = {
                let v = self.simple_value();
                self.styled(v, sc)
            };
            s.assigns
                .push(((*self.rng.pick(&["X", "LANG", "A1"])).to_owned(), value));
        }
        if !sc.plain && self.rng.chance(25) {
            let r = match self.rng.below(9) {
                0 => self.file_redir(">"),
                1 => self.file_redir(">>"),
                2 => self.file_redir("&>"),
                3 => self.file_redir(">|"),
                4 => Redir::Dup("2>&1"),
                5 => Redir::Dup(">&2"),
                6 => Redir::File {
                    fd: None,
                    op: "<",
                    target: self.styled("f1.txt".into(), sc),
                },
                _ if !sc.nested => {
                    let mut body = vec![HerePiece::Text("line one\n".into())];
                    if self.rng.chance(70) {
                        body.push(HerePiece::Text("at ".into()));
                        // Backslashes mean something else in a here-document body: plain
                        // words only.
                        let plain = Scope { plain: true, ..sc };
                        body.push(HerePiece::Sub(self.nested_list(st, plain, 1)));
                        body.push(HerePiece::Text(" end".into()));
                    }
                    Redir::Heredoc {
                        quoted: self.rng.chance(40),
                        body,
                    }
                }
                _ => Redir::Dup("2>&1"),
            };
            s.redirs.push(r);
        }
        if !sc.plain {
            for i in 1..s.words.len() {
                if self.rng.chance(6) {
                    s.conts.push(i);
                }
            }
        }
        s
    }

    fn simple_value(&mut self) -> String {
        if self.rng.chance(70) {
            (*self.rng.pick(SIMPLE_VALUES)).to_owned()
        } else {
            let n = 1 + self.rng.below(4);
            (0..n)
                .map(|_| *self.rng.pick(&['a', 'b', 'q', '1', '9', '_']))
                .collect()
        }
    }

    fn wild_value(&mut self) -> String {
        let n = 1 + self.rng.below(6);
        (0..n).map(|_| *self.rng.pick(WILD_CHARS)).collect()
    }

    fn quoted_style(&mut self) -> Style {
        match self.rng.below(3) {
            0 => Style::Single,
            1 => Style::Double,
            _ => Style::AnsiC {
                seed: self.rng.next_u64(),
            },
        }
    }

    /// A literal value written in one style, or cut into pieces in several (`r''m`, `"r"m`).
    fn styled(&mut self, value: String, sc: Scope) -> Word {
        if sc.plain {
            let style = *self.rng.pick(&[Style::Bare, Style::Single, Style::Double]);
            return Word(vec![Seg::Lit(value, style)]);
        }
        let mut segs = Vec::new();
        if value.chars().count() > 1 && self.rng.chance(25) {
            let chars: Vec<char> = value.chars().collect();
            let cut = 1 + self.rng.below(chars.len() - 1);
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let sa = self.any_style();
            segs.push(Seg::Lit(a, sa));
            if self.rng.chance(40) {
                let empty = *self.rng.pick(&[Style::Single, Style::Double]);
                segs.push(Seg::Lit(String::new(), empty));
            }
            if self.rng.chance(10) {
                segs.push(Seg::Cont);
            }
            let sb = self.any_style();
            segs.push(Seg::Lit(b, sb));
        } else {
            let s = self.any_style();
            segs.push(Seg::Lit(value, s));
        }
        Word(segs)
    }

    fn any_style(&mut self) -> Style {
        if self.rng.chance(40) {
            Style::Bare
        } else {
            self.quoted_style()
        }
    }

    fn var_word(&mut self, st: &State, quoted: bool) -> Word {
        let mut names = vec!["X", "Y", "Z", "P", "U", "HOME", "PWD"];
        if st.vars.contains_key("v") {
            names.push("v");
        }
        let name = (*self.rng.pick(&names)).to_owned();
        let default = self
            .rng
            .chance(15)
            .then(|| (*self.rng.pick(&["def", "d e f", "x.txt"])).to_owned());
        Word(vec![Seg::Var {
            name,
            quoted,
            default,
        }])
    }

    fn sub(&mut self, st: &State, sc: Scope, quoted: bool) -> Seg {
        let backtick = sc.plain || self.rng.chance(25);
        let inner = Scope {
            nested: true,
            plain: backtick,
            ..sc.deeper()
        };
        let list = self.list_in(st, inner, 2);
        Seg::Sub {
            list: Box::new(list),
            quoted,
            backtick,
        }
    }

    fn arg(&mut self, st: &State, sc: Scope) -> Word {
        if sc.plain {
            let v = self.simple_value();
            return self.styled(v, sc);
        }
        let can_nest = sc.depth < 3 && self.budget > 0;
        let mut word = match self.rng.below(100) {
            0..=29 => {
                let v = self.simple_value();
                self.styled(v, sc)
            }
            30..=44 => {
                let v = self.wild_value();
                self.styled(v, sc)
            }
            45..=47 => Word(vec![Seg::Lit(
                String::new(),
                *self.rng.pick(&[Style::Single, Style::Double]),
            )]),
            48..=54 => {
                let mut segs = Vec::new();
                if self.rng.chance(50) {
                    segs.push(Seg::Lit("x".into(), Style::Bare));
                }
                if self.rng.chance(70) {
                    segs.push(Seg::Brace(
                        vec!["a".into(), "b".into(), "c1".into()][..2 + self.rng.below(2)].to_vec(),
                    ));
                } else {
                    let (a, b) = *self.rng.pick(&[('1', '3'), ('a', 'c'), ('3', '1')]);
                    segs.push(Seg::Seq(a, b));
                }
                if self.rng.chance(50) {
                    let s = self.any_style();
                    segs.push(Seg::Lit("y".into(), s));
                }
                Word(segs)
            }
            55..=59 => Word(vec![Seg::Glob((*self.rng.pick(GLOBS)).to_owned())]),
            60..=64 => Word(vec![Seg::Tilde(
                (*self.rng.pick(&["", "/d1", "/x y", "/f1.txt"])).to_owned(),
            )])
            .fixed_tilde(),
            65..=79 => {
                let quoted = self.rng.chance(40);
                self.var_word(st, quoted)
            }
            80..=87 if can_nest => {
                let quoted = self.rng.chance(40);
                Word(vec![self.sub(st, sc, quoted)])
            }
            88..=90 => Word(vec![Seg::Arith {
                a: self.rng.below(20) as i64,
                b: self.rng.below(5) as i64,
                quoted: self.rng.chance(30),
            }]),
            91..=93 if can_nest => {
                let list = self.nested_list(st, sc, 1);
                Word(vec![Seg::ProcSub(Box::new(list))])
            }
            _ => {
                let mut segs = vec![Seg::Lit("a".into(), Style::Bare)];
                let quoted = self.rng.chance(50);
                segs.extend(self.var_word(st, quoted).0);
                let s = self.any_style();
                segs.push(Seg::Lit("b c".into(), s));
                Word(segs)
            }
        };
        if self.rng.chance(4) && !matches!(word.0.first(), Some(Seg::Tilde(_) | Seg::ProcSub(_))) {
            let at = self.rng.below(word.0.len() + 1);
            if at > 0 {
                word.0.insert(at, Seg::Cont);
            }
        }
        word
    }
}

impl Word {
    /// A tilde word with a space in its rest is written `~/"x y"`, the rest kept literal.
    fn fixed_tilde(self) -> Word {
        match self.0.as_slice() {
            [Seg::Tilde(rest)] if rest.contains(' ') => Word(vec![
                Seg::Tilde("/".into()),
                Seg::Lit(rest.trim_start_matches('/').to_owned(), Style::Double),
            ]),
            _ => self,
        }
    }
}

fn noop_list() -> List {
    List(vec![AndOr {
        first: Pipeline {
            time: false,
            bang: false,
            cmds: vec![(
                Cmd::Simple(Simple {
                    words: vec![Word(vec![Seg::Lit(":".into(), Style::Bare)])],
                    ..Simple::default()
                }),
                "|",
            )],
        },
        rest: Vec::new(),
        sep: Sep::Semi,
    }])
}
