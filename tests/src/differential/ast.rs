//! The generated command lines as a tree, and their rendering to bash text. Every quoting
//! choice is made when the tree is generated and stored in it, so rendering is a plain walk.

/// How a literal piece of a word is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Unquoted, with backslashes before special characters.
    Bare,
    /// `'...'`, a `'` written `'\''`.
    Single,
    /// `"..."`, with `\` before `"`, `\`, `$` and `` ` ``.
    Double,
    /// `$'...'`; `seed` picks, per character, a plain, `\x`, `\u`, octal or named escape.
    AnsiC {
        /// Which escapes to use.
        seed: u64,
    },
}

/// A piece of a word.
#[derive(Debug, Clone)]
pub(crate) enum Seg {
    /// A literal value written in a style (never split, never globbed).
    Lit(String, Style),
    /// An unquoted glob pattern such as `*.txt`.
    Glob(String),
    /// `~` or `~/rest`, only at the start of a word.
    Tilde(String),
    /// `$NAME`, `${NAME}` or `${NAME:-default}`, in double quotes when `quoted`.
    Var {
        name: String,
        quoted: bool,
        default: Option<String>,
    },
    /// `$(list)` or `` `list` ``, in double quotes when `quoted`.
    Sub {
        list: Box<List>,
        quoted: bool,
        backtick: bool,
    },
    /// `$((a+b))`, in double quotes when `quoted`.
    Arith { a: i64, b: i64, quoted: bool },
    /// `{a,b,...}` (unquoted).
    Brace(Vec<String>),
    /// `{1..3}` or `{a..c}` (unquoted).
    Seq(char, char),
    /// `<(list)`, always a whole word.
    ProcSub(Box<List>),
    /// A backslash-newline, removed by the lexer.
    Cont,
}

/// A word: pieces written next to each other.
#[derive(Debug, Clone)]
pub(crate) struct Word(pub Vec<Seg>);

/// A piece of a here-document body.
#[derive(Debug, Clone)]
pub(crate) enum HerePiece {
    /// Plain text (letters, digits, spaces, newlines).
    Text(String),
    /// A command substitution, run when the delimiter is unquoted.
    Sub(List),
}

/// A redirection.
#[derive(Debug, Clone)]
pub(crate) enum Redir {
    /// `[fd]op target` with op in `>`, `>>`, `>|`, `<`, `&>`.
    File {
        fd: Option<u8>,
        op: &'static str,
        target: Word,
    },
    /// `2>&1` or `>&2`.
    Dup(&'static str),
    /// `<<DELIM` (or `<<'DELIM'` when quoted) with its body.
    Heredoc { quoted: bool, body: Vec<HerePiece> },
}

impl Redir {
    /// Does it send the command's standard output somewhere other than where it was?
    pub(crate) fn moves_stdout(&self) -> bool {
        match self {
            Redir::File { fd, op, .. } => {
                matches!(*op, ">" | ">>" | ">|" | "&>") && fd.is_none_or(|f| f == 1)
            }
            Redir::Dup(d) => *d == ">&2",
            Redir::Heredoc { .. } => false,
        }
    }
}

/// A simple command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Simple {
    /// `NAME=value` before the words.
    pub assigns: Vec<(String, Word)>,
    /// The words (the program first).
    pub words: Vec<Word>,
    /// Redirections, written after the words.
    pub redirs: Vec<Redir>,
    /// Write a backslash-newline before the word at these indexes.
    pub conts: Vec<usize>,
}

/// A `[[ ]]` test.
#[derive(Debug, Clone)]
pub(crate) struct Test {
    /// `-z` or `-n`.
    pub op: &'static str,
    /// The operand.
    pub word: Word,
}

/// A command.
#[derive(Debug, Clone)]
pub(crate) enum Cmd {
    Simple(Simple),
    /// `eval 'inner'` with the inner line written in `style`.
    Eval(Box<List>, Style),
    Subshell(List, Vec<Redir>),
    Group(List, Vec<Redir>),
    If {
        cond: List,
        then: List,
        els: Option<List>,
    },
    For {
        var: String,
        items: Vec<Word>,
        body: List,
    },
    /// `while cond; do body; break; done` (`until` when `until`).
    While {
        until: bool,
        cond: List,
        body: List,
    },
    Test(Test),
    /// A command written as it is, run in a subshell (`( text )`, so nothing it sets reaches
    /// the rest of the line), with the programs it runs (argvs, in the directory it starts in)
    /// and its status: the constructs whose effect on what runs is in the shell's state
    /// (`printf -v`, `read`, arrays, `set --`, `${!x}`, arithmetic assignments, `$BASH -c`,
    /// here-strings).
    Raw {
        text: String,
        runs: Vec<Vec<String>>,
        status: i32,
    },
}

/// A pipeline: `[time] [!] cmd [| cmd]...`; the operator after each command but the last is
/// `|` or `|&`.
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    pub time: bool,
    pub bang: bool,
    pub cmds: Vec<(Cmd, &'static str)>,
}

/// A separator after an and-or list.
#[derive(Debug, Clone)]
pub(crate) enum Sep {
    Semi,
    Newline,
    Amp,
    /// ` # text` then a newline.
    Comment(String),
}

/// `pipeline [&&|| pipeline]...` and its separator.
#[derive(Debug, Clone)]
pub(crate) struct AndOr {
    pub first: Pipeline,
    /// `true` for `&&`, `false` for `||`.
    pub rest: Vec<(bool, Pipeline)>,
    pub sep: Sep,
}

/// A list of and-or lists.
#[derive(Debug, Clone, Default)]
pub(crate) struct List(pub Vec<AndOr>);

impl List {
    /// Is this list just `:` (a skipped branch that runs nothing)?
    pub(crate) fn is_noop(&self) -> bool {
        self.0.len() == 1
            && self.0[0].rest.is_empty()
            && self.0[0].first.cmds.len() == 1
            && matches!(&self.0[0].first.cmds[0].0, Cmd::Simple(s)
                if s.words.len() == 1 && matches!(s.words[0].0.as_slice(), [Seg::Lit(v, Style::Bare)] if v == ":"))
    }
}

/// Renders a tree to bash text; here-document bodies wait for the next newline.
#[derive(Default)]
pub(crate) struct Render {
    out: String,
    pending: Vec<String>,
    heredocs: usize,
}

const HEREDOC_DELIM: &str = "EOF";

/// The bash text of a top-level list.
pub(crate) fn render_line(list: &List) -> String {
    let mut r = Render::default();
    r.list(list, false);
    if !r.pending.is_empty() {
        r.newline();
    }
    r.out
}

fn render_nested(list: &List) -> String {
    let mut r = Render::default();
    r.list(list, false);
    r.out
}

fn ansi_c(value: &str, seed: u64) -> String {
    let mut s = seed | 1;
    let mut out = String::from("$'");
    for c in value.chars() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let pick = s % 6;
        let ascii = c.is_ascii() && c != '\0';
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' if pick < 3 => out.push_str("\\n"),
            '\t' if pick < 3 => out.push_str("\\t"),
            _ if ascii && pick == 3 => out.push_str(&format!("\\x{:02x}", c as u32)),
            _ if ascii && pick == 4 => out.push_str(&format!("\\u{:04X}", c as u32)),
            _ if ascii && pick == 5 => out.push_str(&format!("\\{:03o}", c as u32)),
            _ if ascii && (c.is_ascii_control()) => out.push_str(&format!("\\x{:02x}", c as u32)),
            _ => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A literal value in a style.
pub(crate) fn lit(value: &str, style: Style) -> String {
    match style {
        Style::Bare => {
            let mut out = String::new();
            for c in value.chars() {
                if c.is_ascii_alphanumeric() || "._-/+:@%^,=".contains(c) {
                    out.push(c);
                } else if c == '\n' {
                    out.push_str("'\n'");
                } else {
                    out.push('\\');
                    out.push(c);
                }
            }
            out
        }
        Style::Single => format!("'{}'", value.replace('\'', "'\\''")),
        Style::Double => {
            let mut out = String::from("\"");
            for c in value.chars() {
                if matches!(c, '"' | '\\' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
        Style::AnsiC { seed } => ansi_c(value, seed),
    }
}

impl Render {
    fn newline(&mut self) {
        self.out.push('\n');
        for body in std::mem::take(&mut self.pending) {
            self.out.push_str(&body);
        }
    }

    fn list(&mut self, list: &List, terminated: bool) {
        let n = list.0.len();
        for (i, item) in list.0.iter().enumerate() {
            self.and_or(item);
            let last = i + 1 == n;
            match &item.sep {
                Sep::Amp => self.out.push_str(" &"),
                Sep::Comment(c) => {
                    // The generator puts comments only where a newline may follow.
                    self.out.push_str(" # ");
                    self.out.push_str(c);
                    self.newline();
                    continue;
                }
                Sep::Newline if !last || terminated => {
                    self.newline();
                    continue;
                }
                Sep::Semi | Sep::Newline => {
                    if !last || terminated {
                        self.out.push(';');
                    }
                }
            }
            if last && terminated && !self.pending.is_empty() {
                self.newline();
            } else if !last || terminated {
                self.out.push(' ');
            }
        }
    }

    fn and_or(&mut self, a: &AndOr) {
        self.pipeline(&a.first);
        for (and, p) in &a.rest {
            self.out.push_str(if *and { " && " } else { " || " });
            self.pipeline(p);
        }
    }

    fn pipeline(&mut self, p: &Pipeline) {
        if p.time {
            self.out.push_str("time ");
        }
        if p.bang {
            self.out.push_str("! ");
        }
        for (i, (c, op)) in p.cmds.iter().enumerate() {
            self.cmd(c);
            if i + 1 < p.cmds.len() {
                self.out.push(' ');
                self.out.push_str(op);
                self.out.push(' ');
            }
        }
    }

    /// Nested lists end with `;` (or a newline when here-documents wait) before a closer.
    fn body(&mut self, list: &List) {
        self.list(list, true);
    }

    fn cmd(&mut self, c: &Cmd) {
        match c {
            Cmd::Simple(s) => self.simple(s),
            Cmd::Eval(inner, style) => {
                let text = render_nested(inner);
                self.out.push_str("eval ");
                self.out.push_str(&lit(&text, *style));
            }
            Cmd::Subshell(l, redirs) => {
                self.out.push_str("( ");
                self.body(l);
                self.out.push(')');
                self.redirs(redirs);
            }
            Cmd::Group(l, redirs) => {
                self.out.push_str("{ ");
                self.body(l);
                self.out.push('}');
                self.redirs(redirs);
            }
            Cmd::If { cond, then, els } => {
                self.out.push_str("if ");
                self.body(cond);
                self.out.push_str("then ");
                self.body(then);
                if let Some(e) = els {
                    self.out.push_str("else ");
                    self.body(e);
                }
                self.out.push_str("fi");
            }
            Cmd::For { var, items, body } => {
                self.out.push_str("for ");
                self.out.push_str(var);
                self.out.push_str(" in");
                for w in items {
                    self.out.push(' ');
                    self.word(w);
                }
                self.out.push_str("; do ");
                self.body(body);
                self.out.push_str("done");
            }
            Cmd::While { until, cond, body } => {
                self.out.push_str(if *until { "until " } else { "while " });
                self.body(cond);
                self.out.push_str("do ");
                self.body(body);
                self.out.push_str("break; done");
            }
            Cmd::Raw { text, .. } => {
                self.out.push_str("( ");
                self.out.push_str(text);
                self.out.push_str(" )");
            }
            Cmd::Test(t) => {
                self.out.push_str("[[ ");
                self.out.push_str(t.op);
                self.out.push(' ');
                self.word(&t.word);
                self.out.push_str(" ]]");
            }
        }
    }

    fn simple(&mut self, s: &Simple) {
        let mut first = true;
        for (name, value) in &s.assigns {
            if !first {
                self.out.push(' ');
            }
            first = false;
            self.out.push_str(name);
            self.out.push('=');
            self.word(value);
        }
        for (i, w) in s.words.iter().enumerate() {
            if !first {
                self.out.push(' ');
            }
            first = false;
            if s.conts.contains(&i) {
                self.out.push_str("\\\n");
            }
            self.word(w);
        }
        self.redirs(&s.redirs);
    }

    fn redirs(&mut self, redirs: &[Redir]) {
        for r in redirs {
            self.out.push(' ');
            match r {
                Redir::File { fd, op, target } => {
                    if let Some(fd) = fd {
                        self.out.push_str(&fd.to_string());
                    }
                    self.out.push_str(op);
                    self.out.push(' ');
                    self.word(target);
                }
                Redir::Dup(d) => self.out.push_str(d),
                Redir::Heredoc { quoted, body } => {
                    self.heredocs += 1;
                    let delim = format!("{HEREDOC_DELIM}{}", self.heredocs);
                    self.out.push_str("<<");
                    if *quoted {
                        self.out.push_str(&format!("'{delim}'"));
                    } else {
                        self.out.push_str(&delim);
                    }
                    let mut text = String::new();
                    for p in body {
                        match p {
                            HerePiece::Text(t) => text.push_str(t),
                            HerePiece::Sub(l) => {
                                text.push_str("$(");
                                text.push_str(&render_nested(l));
                                text.push(')');
                            }
                        }
                    }
                    text.push('\n');
                    text.push_str(&delim);
                    text.push('\n');
                    self.pending.push(text);
                }
            }
        }
    }

    fn word(&mut self, w: &Word) {
        let pieces: Vec<String> = w.0.iter().map(seg_text).collect();
        for (i, (seg, text)) in w.0.iter().zip(&pieces).enumerate() {
            if let Seg::Var {
                name,
                quoted: false,
                default: None,
            } = seg
            {
                // `$X` followed by a name character (or a brace) would read another name.
                let next = pieces[i + 1..].iter().find(|p| !p.is_empty());
                let glued = next
                    .and_then(|p| p.chars().next())
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '{' | '\\'));
                if glued {
                    self.out.push_str(&format!("${{{name}}}"));
                    continue;
                }
            }
            self.out.push_str(text);
        }
    }
}

fn seg_text(seg: &Seg) -> String {
    match seg {
        Seg::Lit(v, style) => lit(v, *style),
        Seg::Glob(p) => p.clone(),
        Seg::Tilde(rest) => format!("~{rest}"),
        Seg::Var {
            name,
            quoted,
            default,
        } => {
            let inner = match default {
                Some(d) => format!("${{{name}:-{d}}}"),
                None => format!("${name}"),
            };
            if *quoted {
                format!("\"{inner}\"")
            } else {
                inner
            }
        }
        Seg::Sub {
            list,
            quoted,
            backtick,
        } => {
            let text = render_nested(list);
            let inner = if *backtick {
                format!("`{text}`")
            } else if text.starts_with('(') {
                format!("$( {text})")
            } else {
                format!("$({text})")
            };
            if *quoted {
                format!("\"{inner}\"")
            } else {
                inner
            }
        }
        Seg::Arith { a, b, quoted } => {
            let inner = format!("$(({a}+{b}))");
            if *quoted {
                format!("\"{inner}\"")
            } else {
                inner
            }
        }
        Seg::Brace(alts) => format!("{{{}}}", alts.join(",")),
        Seg::Seq(a, b) => format!("{{{a}..{b}}}"),
        Seg::ProcSub(list) => format!("<({})", render_nested(list)),
        Seg::Cont => "\\\n".to_owned(),
    }
}
