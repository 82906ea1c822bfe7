//! From a command line to the simple commands it runs.

use std::io::BufReader;

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use crate::Error;

/// A word as written, and its literal value when it has no expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word as written (quotes included).
    pub raw: String,
    /// The value after quote removal, when the word expands to exactly that: no parameters,
    /// substitutions, arithmetic or tilde. `None` otherwise.
    pub literal: Option<String>,
}

impl Word {
    fn new(raw: &str, substitutions: &mut Vec<String>) -> Self {
        let options = ParserOptions::default();
        let literal = match word::parse(raw, &options) {
            Ok(pieces) => literal_of(&pieces, substitutions),
            Err(_) => None,
        };
        Self {
            raw: raw.to_owned(),
            literal,
        }
    }

    /// The literal value, or the raw text when it has expansions.
    pub fn text(&self) -> &str {
        self.literal.as_deref().unwrap_or(&self.raw)
    }
}

fn literal_of(pieces: &[WordPieceWithSource], substitutions: &mut Vec<String>) -> Option<String> {
    let mut out = String::new();
    let mut literal = true;
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => out.push_str(t),
            WordPiece::AnsiCQuotedText(t) => match decode_ansi_c(t) {
                Some(d) => out.push_str(&d),
                None => literal = false,
            },
            WordPiece::EscapeSequence(e) => out.push_str(e.strip_prefix('\\').unwrap_or(e)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                match literal_of(inner, substitutions) {
                    Some(s) => out.push_str(&s),
                    None => literal = false,
                }
            }
            WordPiece::CommandSubstitution(inner)
            | WordPiece::BackquotedCommandSubstitution(inner) => {
                substitutions.push(inner.clone());
                literal = false;
            }
            WordPiece::TildeExpansion(_)
            | WordPiece::ParameterExpansion(_)
            | WordPiece::ArithmeticExpression(_) => {
                literal = false;
            }
        }
    }
    literal.then_some(out)
}

/// Decode the body of a `$'...'` word as bash does. `None` for escapes it does not model.
fn decode_ansi_c(body: &str) -> Option<String> {
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
        out.push(match e {
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
            _ => return None,
        });
    }
    Some(out)
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&` / `>&` to a descriptor
    Duplicate,
    /// A heredoc or here-string.
    Here,
}

/// A redirection of a simple command (or of the compound command around it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// The file (or descriptor) it names; `None` for heredocs.
    pub target: Option<Word>,
}

/// One simple command the line runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// `NAME=value` assignments before the command.
    pub assignments: Vec<String>,
    /// The command name and its arguments.
    pub argv: Vec<Word>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The command name, when it is a literal.
    pub fn name(&self) -> Option<&str> {
        self.argv.first().and_then(|w| w.literal.as_deref())
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandLine {
    /// Every simple command, in source order (including those inside subshells, brace groups,
    /// control flow and command substitutions).
    pub commands: Vec<SimpleCommand>,
    /// The text of every `$(...)` and backquote substitution.
    pub substitutions: Vec<String>,
    /// Some command runs in a process substitution `<(...)` / `>(...)`.
    pub process_substitution: bool,
    /// The line uses `if`, `for`, `while`, `until`, `case`, arithmetic, `[[ ]]` or coprocesses.
    pub control_flow: bool,
    /// The line defines a function.
    pub defines_function: bool,
    /// Some command runs in the background (`&`).
    pub background: bool,
}

impl CommandLine {
    /// Parse a command line. Substitutions are parsed too, and their commands are listed.
    pub fn parse(command: &str) -> Result<Self, Error> {
        let mut line = CommandLine::default();
        line.add_program(command, 0)?;
        Ok(line)
    }

    fn add_program(&mut self, command: &str, depth: usize) -> Result<(), Error> {
        if depth > 16 {
            return Err(Error::Parse("substitutions nested too deeply".into()));
        }
        let options = ParserOptions::default();
        let program = Parser::new(BufReader::new(command.as_bytes()), &options)
            .parse_program()
            .map_err(|e| Error::Parse(e.to_string()))?;
        for list in &program.complete_commands {
            self.add_list(list);
        }
        let pending = std::mem::take(&mut self.substitutions);
        for inner in &pending {
            self.add_program(inner, depth + 1)?;
        }
        self.substitutions.splice(0..0, pending);
        Ok(())
    }

    fn add_list(&mut self, list: &ast::CompoundList) {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            if matches!(sep, ast::SeparatorOperator::Async) {
                self.background = true;
            }
            self.add_pipeline(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.add_pipeline(p),
                }
            }
        }
    }

    fn add_pipeline(&mut self, p: &ast::Pipeline) {
        for c in &p.seq {
            self.add_command(c);
        }
    }

    fn add_command(&mut self, c: &ast::Command) {
        match c {
            ast::Command::Simple(s) => self.add_simple(s),
            ast::Command::Compound(cc, redirects) => {
                let before = self.commands.len();
                self.add_compound(cc);
                if let Some(r) = redirects {
                    let extra: Vec<Redirect> = r.0.iter().map(|r| self.redirect(r)).collect();
                    // Redirections of a group apply to every command inside it.
                    for cmd in &mut self.commands[before..] {
                        cmd.redirects.extend(extra.iter().cloned());
                    }
                    if self.commands.len() == before {
                        self.commands.push(SimpleCommand {
                            redirects: extra,
                            ..Default::default()
                        });
                    }
                }
            }
            ast::Command::Function(f) => {
                self.defines_function = true;
                self.add_compound(&f.body.0);
            }
            ast::Command::ExtendedTest(_, _) => self.control_flow = true,
        }
    }

    fn add_compound(&mut self, cc: &ast::CompoundCommand) {
        match cc {
            ast::CompoundCommand::BraceGroup(b) => self.add_list(&b.list),
            ast::CompoundCommand::Subshell(s) => self.add_list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                self.control_flow = true;
                self.add_list(&f.body.list);
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                self.control_flow = true;
                self.add_list(&f.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.control_flow = true;
                for item in &c.cases {
                    if let Some(cmd) = &item.cmd {
                        self.add_list(cmd);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.control_flow = true;
                self.add_list(&i.condition);
                self.add_list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.add_list(c);
                    }
                    self.add_list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.control_flow = true;
                self.add_list(&w.0);
                self.add_list(&w.1.list);
            }
            ast::CompoundCommand::Arithmetic(_) => self.control_flow = true,
            ast::CompoundCommand::Coprocess(c) => {
                self.control_flow = true;
                self.add_command(&c.body);
            }
        }
    }

    fn word(&mut self, w: &ast::Word) -> Word {
        Word::new(&w.value, &mut self.substitutions)
    }

    fn redirect(&mut self, r: &ast::IoRedirect) -> Redirect {
        match r {
            ast::IoRedirect::File(_, kind, target) => {
                let kind = match kind {
                    ast::IoFileRedirectKind::Read => RedirectKind::Read,
                    ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => {
                        RedirectKind::Write
                    }
                    ast::IoFileRedirectKind::Append => RedirectKind::Append,
                    ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                    ast::IoFileRedirectKind::DuplicateInput
                    | ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::Duplicate,
                };
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w) => Some(self.word(w)),
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let w = self.word(w);
                        // `>&file` (not a descriptor number or `-`) writes to a file.
                        let is_fd = w
                            .literal
                            .as_deref()
                            .is_some_and(|l| l == "-" || l.chars().all(|c| c.is_ascii_digit()));
                        return Redirect {
                            kind: if is_fd {
                                RedirectKind::Duplicate
                            } else {
                                RedirectKind::Write
                            },
                            target: Some(w),
                        };
                    }
                    ast::IoFileRedirectTarget::Fd(_) => None,
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.process_substitution = true;
                        self.add_list(&sub.list);
                        None
                    }
                };
                Redirect { kind, target }
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    // The body expands like a double-quoted word: collect its substitutions.
                    if let Ok(pieces) =
                        word::parse_heredoc(&doc.doc.value, &ParserOptions::default())
                    {
                        literal_of(&pieces, &mut self.substitutions);
                    }
                }
                Redirect {
                    kind: RedirectKind::Here,
                    target: None,
                }
            }
            ast::IoRedirect::HereString(_, w) => {
                self.word(w);
                Redirect {
                    kind: RedirectKind::Here,
                    target: None,
                }
            }
            ast::IoRedirect::OutputAndError(w, append) => Redirect {
                kind: if *append {
                    RedirectKind::Append
                } else {
                    RedirectKind::Write
                },
                target: Some(self.word(w)),
            },
        }
    }

    fn add_simple(&mut self, s: &ast::SimpleCommand) {
        // Reserve this command's place, so commands in its process substitutions come after it.
        let slot = self.commands.len();
        self.commands.push(SimpleCommand::default());
        let mut cmd = SimpleCommand::default();
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Some)
            .chain(std::iter::once(None))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(Some));
        for item in items {
            match item {
                None => {
                    if let Some(name) = &s.word_or_name {
                        let w = self.word(name);
                        cmd.argv.insert(0, w);
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => {
                    let r = self.redirect(r);
                    cmd.redirects.push(r);
                }
                Some(ast::CommandPrefixOrSuffixItem::Word(w)) => {
                    let w = self.word(w);
                    cmd.argv.push(w);
                }
                Some(ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)) => {
                    let w = self.word(w);
                    if cmd.argv.is_empty() && s.word_or_name.is_none() || !cmd.argv.is_empty() {
                        cmd.argv.push(w);
                    } else {
                        cmd.assignments.push(w.raw);
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub)) => {
                    self.process_substitution = true;
                    self.add_list(&sub.list);
                }
            }
        }
        self.commands[slot] = cmd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cmd: &str) -> Vec<String> {
        CommandLine::parse(cmd)
            .unwrap()
            .commands
            .iter()
            .map(|c| c.argv.iter().map(Word::text).collect::<Vec<_>>().join(" "))
            .collect()
    }

    #[test]
    fn finds_every_simple_command() {
        let cases: &[(&str, &[&str])] = &[
            ("ls -la", &["ls -la"]),
            ("a && b || c; d", &["a", "b", "c", "d"]),
            ("cat x | wc -l", &["cat x", "wc -l"]),
            ("(cd sub && make) & echo hi", &["cd sub", "make", "echo hi"]),
            (
                "echo $(id) `whoami`",
                &["echo $(id) `whoami`", "id", "whoami"],
            ),
            ("if true; then rm a; fi", &["true", "rm a"]),
            ("for f in *; do cat \"$f\"; done", &["cat \"$f\""]),
            ("diff <(ls a) b", &["diff b", "ls a"]),
            (
                "cat <<'EOF'\n$(nope)\nEOF\necho done",
                &["cat", "echo done"],
            ),
            (
                "echo 'single quoted' \"dq\" es\\ caped",
                &["echo single quoted dq es caped"],
            ),
            ("$'\\x72\\x6d' -rf build", &["rm -rf build"]),
        ];
        for (cmd, want) in cases {
            assert_eq!(names(cmd), *want, "{cmd}");
        }
    }

    #[test]
    fn records_assignments_redirects_and_flags() {
        let l = CommandLine::parse("FOO=1 BAR=2 make > out.txt 2>&1").unwrap();
        assert_eq!(l.commands[0].assignments, ["FOO=1", "BAR=2"]);
        assert_eq!(
            l.commands[0].redirects[0],
            Redirect {
                kind: RedirectKind::Write,
                target: Some(Word {
                    raw: "out.txt".into(),
                    literal: Some("out.txt".into())
                })
            }
        );
        assert_eq!(l.commands[0].redirects[1].kind, RedirectKind::Duplicate);
        let l = CommandLine::parse("cat <<EOF\n$(id)\nEOF").unwrap();
        assert_eq!(l.substitutions, ["id"]);
        assert!(CommandLine::parse("sleep 1 &").unwrap().background);
        assert!(CommandLine::parse("echo 'unterminated").is_err());
    }
}
