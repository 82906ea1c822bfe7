//! The awk lexer: strings (with their escapes decoded), regex literals told apart from
//! division the way awk's grammar does (a `/` where an operand is expected starts a regex),
//! comments, line continuations, and gawk's `@` directives.

/// One awk token.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// A newline (statements end there).
    Newline,
    /// A string literal, escapes decoded.
    Str(String),
    /// A regex literal (`/re/`, gawk's `@/re/`).
    Regex,
    /// A number literal.
    Num,
    /// A name: a variable, keyword or built-in.
    Name(String),
    /// A name directly followed by `(`: a function call.
    Func(String),
    /// An operator or punctuation.
    Op(&'static str),
    /// gawk's `@name`: a directive (`@include`, `@load`, `@namespace`) or an indirect call.
    At(String),
}

/// Why a program does not lex, and where.
#[derive(Debug)]
pub(super) struct LexError {
    pub(super) at: usize,
    pub(super) what: &'static str,
}

const OPS: [&str; 41] = [
    "**=", "+=", "-=", "*=", "/=", "%=", "^=", "==", "<=", ">=", "!=", "++", "--", "&&", "||",
    ">>", "|&", "!~", "**", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^",
    "!", ">", "<", "|", "?", ":", "~", "$",
];
const ASSIGN: &str = "=";

/// Keywords after which an operand is expected, so a `/` there starts a regex.
const EXPECT_OPERAND: [&str; 7] = ["print", "printf", "return", "case", "do", "else", "exit"];

pub(super) fn tokens(src: &str) -> Result<Vec<Tok>, LexError> {
    Lexer {
        src: src.as_bytes(),
        pos: 0,
        out: Vec::new(),
        parens: Vec::new(),
        header_close: None,
    }
    .run()
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    out: Vec<Tok>,
    /// For each open `(`: does it open the header of `if`, `while`, `for` or `switch`?
    parens: Vec<bool>,
    /// The index in `out` of the `)` that closed such a header most recently: a statement
    /// follows it, so a `/` there starts a regex (`if (x) /re/ ...` in gawk).
    header_close: Option<usize>,
}

impl Lexer<'_> {
    fn error(&self, what: &'static str) -> LexError {
        LexError { at: self.pos, what }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    /// Does a `/` here start a regex? Yes unless the previous token ends an operand.
    fn regex_allowed(&self) -> bool {
        match self.out.last() {
            None | Some(Tok::Newline | Tok::Func(_) | Tok::At(_)) => true,
            Some(Tok::Str(_) | Tok::Num | Tok::Regex) => false,
            Some(Tok::Name(name)) => EXPECT_OPERAND.contains(&name.as_str()),
            Some(Tok::Op(")")) => self.header_close == Some(self.out.len() - 1),
            Some(Tok::Op(op)) => !matches!(*op, "]" | "++" | "--"),
        }
    }

    fn run(mut self) -> Result<Vec<Tok>, LexError> {
        while let Some(ch) = self.peek(0) {
            match ch {
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => self.pos += 1,
                b'\\' => match (self.peek(1), self.peek(2)) {
                    (Some(b'\n'), _) => self.pos += 2,
                    (Some(b'\r'), Some(b'\n')) => self.pos += 3,
                    _ => return Err(self.error("stray backslash")),
                },
                b'\n' => {
                    self.pos += 1;
                    self.out.push(Tok::Newline);
                }
                b'#' => {
                    while !matches!(self.peek(0), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    let text = self.string()?;
                    self.out.push(Tok::Str(text));
                }
                b'/' if self.regex_allowed() => {
                    self.pos += 1;
                    self.regex()?;
                    self.out.push(Tok::Regex);
                }
                b'@' => {
                    self.pos += 1;
                    if self.peek(0) == Some(b'/') {
                        self.pos += 1;
                        self.regex()?;
                        self.out.push(Tok::Regex);
                    } else {
                        let name = self.name();
                        if name.is_empty() {
                            return Err(self.error("`@' without a name"));
                        }
                        self.out.push(Tok::At(name));
                    }
                }
                b'0'..=b'9' => self.number(),
                b'.' if matches!(self.peek(1), Some(b'0'..=b'9')) => self.number(),
                c if c == b'_' || c.is_ascii_alphabetic() => {
                    let name = self.name();
                    if self.peek(0) == Some(b'(') {
                        self.out.push(Tok::Func(name));
                    } else {
                        self.out.push(Tok::Name(name));
                    }
                }
                _ => {
                    let rest = &self.src[self.pos..];
                    let op = OPS
                        .iter()
                        .copied()
                        .chain(std::iter::once(ASSIGN))
                        .find(|op| rest.starts_with(op.as_bytes()))
                        .ok_or_else(|| self.error("unexpected character"))?;
                    self.pos += op.len();
                    if op == "(" {
                        let header = matches!(self.out.last(), Some(Tok::Name(n) | Tok::Func(n))
                            if matches!(n.as_str(), "if" | "while" | "for" | "switch"));
                        self.parens.push(header);
                    } else if op == ")" && self.parens.pop() == Some(true) {
                        // (`pop` runs for every `)`, header or not.)
                        self.header_close = Some(self.out.len());
                    }
                    self.out.push(Tok::Op(op));
                }
            }
        }
        Ok(self.out)
    }

    /// A name, with gawk's `namespace::name` form.
    fn name(&mut self) -> String {
        let start = self.pos;
        loop {
            while matches!(self.peek(0), Some(c) if c == b'_' || c.is_ascii_alphanumeric()) {
                self.pos += 1;
            }
            let more = self.peek(0) == Some(b':')
                && self.peek(1) == Some(b':')
                && matches!(self.peek(2), Some(c) if c == b'_' || c.is_ascii_alphabetic());
            if !more {
                break;
            }
            self.pos += 2;
        }
        String::from_utf8_lossy(&self.src[start..self.pos]).into_owned()
    }

    fn number(&mut self) {
        let start = self.pos;
        let hex = matches!(self.src.get(start..start + 2), Some(b"0x" | b"0X"));
        loop {
            match self.peek(0) {
                Some(c) if c.is_ascii_alphanumeric() || c == b'.' => self.pos += 1,
                Some(b'+' | b'-')
                    if !hex
                        && matches!(self.src[self.pos - 1], b'e' | b'E')
                        && matches!(self.peek(1), Some(b'0'..=b'9')) =>
                {
                    self.pos += 1
                }
                _ => break,
            }
        }
        self.out.push(Tok::Num);
    }

    /// The body of a string whose `"` is read; escapes decoded as gawk does.
    fn string(&mut self) -> Result<String, LexError> {
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek(0) else {
                return Err(self.error("unterminated string"));
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\n' => return Err(self.error("newline in string")),
                b'\\' => {
                    let Some(e) = self.peek(0) else {
                        return Err(self.error("unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'\n' => {}
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'a' => out.push(0x07),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'v' => out.push(0x0b),
                        b'0'..=b'7' => {
                            let mut value = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek(0) {
                                    Some(d @ b'0'..=b'7') => {
                                        value = value * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(value.to_le_bytes()[0]);
                        }
                        b'x' => {
                            let mut value = 0u32;
                            let mut digits = 0;
                            while digits < 2 {
                                match self.peek(0).and_then(|d| char::from(d).to_digit(16)) {
                                    Some(d) => {
                                        value = value * 16 + d;
                                        self.pos += 1;
                                        digits += 1;
                                    }
                                    None => break,
                                }
                            }
                            if digits == 0 {
                                out.extend_from_slice(b"\\x");
                            } else {
                                out.push(value.to_le_bytes()[0]);
                            }
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Skip a regex whose `/` is read: to the next `/` outside a bracket expression.
    fn regex(&mut self) -> Result<(), LexError> {
        loop {
            let Some(c) = self.peek(0) else {
                return Err(self.error("unterminated regex"));
            };
            self.pos += 1;
            match c {
                b'/' => return Ok(()),
                b'\n' => return Err(self.error("newline in regex")),
                b'\\' => {
                    if matches!(self.peek(0), None | Some(b'\n')) {
                        return Err(self.error("unterminated regex"));
                    }
                    self.pos += 1;
                }
                b'[' => self.bracket()?,
                _ => {}
            }
        }
    }

    /// Skip a bracket expression whose `[` is read (`[]...]`, `[^]...]`, `[:class:]`).
    fn bracket(&mut self) -> Result<(), LexError> {
        if self.peek(0) == Some(b'^') {
            self.pos += 1;
        }
        if self.peek(0) == Some(b']') {
            self.pos += 1;
        }
        loop {
            let Some(c) = self.peek(0) else {
                return Err(self.error("unterminated bracket expression"));
            };
            self.pos += 1;
            match c {
                b']' => return Ok(()),
                b'\n' => return Err(self.error("newline in regex")),
                b'\\' if self.peek(0).is_some_and(|n| n != b'\n') => self.pos += 1,
                b'[' if matches!(self.peek(0), Some(b':' | b'.' | b'=')) => {
                    let Some(kind) = self.peek(0) else {
                        return Err(self.error("unterminated bracket expression"));
                    };
                    self.pos += 1;
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (None | Some(b'\n'), _) => {
                                return Err(self.error("unterminated character class"));
                            }
                            (Some(k), Some(b']')) if k == kind => {
                                self.pos += 2;
                                break;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
