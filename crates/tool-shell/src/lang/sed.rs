//! `sed` scripts, read the way GNU sed 4.x compiles them: addresses, `{ }` blocks, labels,
//! `a`/`i`/`c` text, `s` and `y` with any delimiter (brackets may hold the delimiter
//! unescaped), and the commands that reach outside the stream: `r`/`R` (read a file), `w`/`W`
//! and `s///w` (write a file), `e COMMAND` (run a command), `e` alone and `s///e` (run the
//! pattern space, unknowable). It does not evaluate regexes or check labels; a script GNU sed
//! rejects may be accepted here, but never the other way round for the commands with effects.
//!
//! The script is read as bytes. Delimiters must be ASCII (GNU sed refuses multibyte ones in a
//! UTF-8 locale; a non-ASCII one is reported as unknown), and the script is assumed to be
//! UTF-8, whose multibyte characters never contain an ASCII byte.

use super::ScriptEffects;

/// What a sed script reads, writes and runs. `extended` is `-E`/`-r`.
///
/// GNU sed finds the end of a regex the same way in both syntaxes (an unescaped delimiter
/// outside a bracket expression), so `extended` does not change the result; it is taken so
/// the caller need not know that.
pub fn analyze(script: &str, extended: bool) -> ScriptEffects {
    let _ = extended;
    let mut parser = Parser {
        src: script.as_bytes(),
        pos: 0,
        depth: 0,
        effects: ScriptEffects::default(),
    };
    match parser.program() {
        Ok(()) => parser.effects,
        Err(err) => {
            let mut effects = parser.effects;
            effects.unknown.push(format!(
                "the sed script does not parse at byte {}: {}",
                err.at, err.what
            ));
            effects
        }
    }
}

/// Why a script does not parse, and where.
#[derive(Debug)]
struct SyntaxError {
    at: usize,
    what: &'static str,
}

/// Files GNU sed opens as its own standard streams instead of opening them.
const SPECIAL_OUTPUTS: [&str; 2] = ["/dev/stdout", "/dev/stderr"];
const SPECIAL_INPUTS: [&str; 1] = ["/dev/stdin"];

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    depth: usize,
    effects: ScriptEffects,
}

fn is_blank(ch: Option<u8>) -> bool {
    matches!(ch, Some(b' ' | b'\t'))
}

fn is_space(ch: Option<u8>) -> bool {
    matches!(ch, Some(b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
}

fn is_digit(ch: Option<u8>) -> bool {
    matches!(ch, Some(b'0'..=b'9'))
}

impl Parser<'_> {
    fn error(&self, what: &'static str) -> SyntaxError {
        SyntaxError { at: self.pos, what }
    }

    fn inchar(&mut self) -> Option<u8> {
        let ch = self.src.get(self.pos).copied();
        if ch.is_some() {
            self.pos += 1;
        }
        ch
    }

    /// Give back the character `inchar` just returned.
    fn savchar(&mut self, ch: Option<u8>) {
        if ch.is_some() {
            self.pos -= 1;
        }
    }

    fn in_nonblank(&mut self) -> Option<u8> {
        loop {
            let ch = self.inchar();
            if !is_blank(ch) {
                return ch;
            }
        }
    }

    /// Digits after the first one, `ch`, which is already read.
    fn in_integer(&mut self, mut ch: Option<u8>) {
        while is_digit(ch) {
            ch = self.inchar();
        }
        self.savchar(ch);
    }

    fn program(&mut self) -> Result<(), SyntaxError> {
        loop {
            let mut ch = self.inchar();
            while ch == Some(b';') || is_space(ch) {
                ch = self.inchar();
            }
            if ch.is_none() {
                break;
            }
            let addressed = self.address(ch)?;
            if addressed {
                ch = self.in_nonblank();
                if ch == Some(b',') {
                    let next = self.in_nonblank();
                    if !self.address(next)? {
                        return Err(self.error("unexpected `,'"));
                    }
                    ch = self.in_nonblank();
                }
            }
            if ch == Some(b'!') {
                ch = self.in_nonblank();
                if ch == Some(b'!') {
                    return Err(self.error("multiple `!'s"));
                }
            }
            let Some(cmd) = ch else {
                return Err(self.error("missing command"));
            };
            self.command(cmd, addressed)?;
        }
        if self.depth != 0 {
            return Err(self.error("unmatched `{'"));
        }
        Ok(())
    }

    fn command(&mut self, cmd: u8, addressed: bool) -> Result<(), SyntaxError> {
        match cmd {
            b'#' => {
                if addressed {
                    return Err(self.error("comments don't accept any addresses"));
                }
                while !matches!(self.inchar(), None | Some(b'\n')) {}
            }
            b'v' | b'b' | b't' | b'T' => {
                self.read_label();
            }
            b':' => {
                if addressed {
                    return Err(self.error(": doesn't want any addresses"));
                }
                if self.read_label().is_empty() {
                    return Err(self.error("\":\" lacks a label"));
                }
            }
            b'{' => self.depth += 1,
            b'}' => {
                if self.depth == 0 {
                    return Err(self.error("unexpected `}'"));
                }
                if addressed {
                    return Err(self.error("} doesn't want any addresses"));
                }
                self.read_end_of_cmd()?;
                self.depth -= 1;
            }
            b'e' => {
                let ch = self.in_nonblank();
                if matches!(ch, None | Some(b'\n')) {
                    self.effects.unknown.push(
                        "sed `e' without a command runs the pattern space as a shell command"
                            .to_owned(),
                    );
                } else {
                    let text = self.read_text_after(ch)?;
                    let command = self.decode(&normalize_text(&text));
                    self.effects.exec_strings.push(command);
                }
            }
            b'a' | b'i' | b'c' => {
                let ch = self.in_nonblank();
                self.read_text_after(ch)?;
            }
            b'q' | b'Q' | b'l' | b'L' => {
                let ch = self.in_nonblank();
                if is_digit(ch) {
                    self.in_integer(ch);
                } else {
                    self.savchar(ch);
                }
                self.read_end_of_cmd()?;
            }
            b'=' | b'd' | b'D' | b'F' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P'
            | b'z' | b'x' => self.read_end_of_cmd()?,
            b'r' | b'R' => {
                let name = self.read_filename()?;
                if !SPECIAL_INPUTS.contains(&name.as_str()) {
                    self.effects.reads.push(name);
                }
            }
            b'w' | b'W' => self.write_file()?,
            b's' => self.substitute()?,
            b'y' => {
                let slash = self.inchar();
                self.match_slash(slash, false)?;
                self.match_slash(slash, false)?;
                self.read_end_of_cmd()?;
            }
            _ => return Err(self.error("unknown command")),
        }
        Ok(())
    }

    fn substitute(&mut self) -> Result<(), SyntaxError> {
        let slash = self.inchar();
        self.match_slash(slash, true)?;
        self.match_slash(slash, false)?;
        let mut eval = false;
        loop {
            let ch = self.in_nonblank();
            match ch {
                Some(b'i' | b'I' | b'm' | b'M' | b'g' | b'p') => {}
                Some(b'e') => eval = true,
                Some(b'0'..=b'9') => self.in_integer(ch),
                Some(b'w') => {
                    self.write_file()?;
                    break;
                }
                Some(b'}' | b'#') => {
                    self.savchar(ch);
                    break;
                }
                None | Some(b'\n' | b';') => break,
                Some(b'\r') if self.inchar() == Some(b'\n') => break,
                Some(_) => return Err(self.error("unknown option to `s'")),
            }
        }
        if eval {
            self.effects
                .unknown
                .push("sed `s///e' runs the pattern space as a shell command".to_owned());
        }
        Ok(())
    }

    fn write_file(&mut self) -> Result<(), SyntaxError> {
        let name = self.read_filename()?;
        if !SPECIAL_OUTPUTS.contains(&name.as_str()) {
            self.effects.writes.push(name);
        }
        Ok(())
    }

    /// An address starting with `ch`; false (nothing read) when `ch` does not start one.
    fn address(&mut self, ch: Option<u8>) -> Result<bool, SyntaxError> {
        match ch {
            Some(b'/') => self.regex_address(ch)?,
            Some(b'\\') => {
                let slash = self.inchar();
                self.regex_address(slash)?;
            }
            Some(b'0'..=b'9') => {
                self.in_integer(ch);
                let next = self.in_nonblank();
                if next == Some(b'~') {
                    let step = self.in_nonblank();
                    self.in_integer(step);
                } else {
                    self.savchar(next);
                }
            }
            Some(b'+' | b'~') => {
                let step = self.in_nonblank();
                self.in_integer(step);
            }
            Some(b'$') => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn regex_address(&mut self, slash: Option<u8>) -> Result<(), SyntaxError> {
        self.match_slash(slash, true)?;
        loop {
            let ch = self.in_nonblank();
            if !matches!(ch, Some(b'I' | b'M')) {
                self.savchar(ch);
                return Ok(());
            }
        }
    }

    /// Skip to the unescaped `slash` ending a regex (`regex`: brackets may hold it) or a
    /// replacement / `y` string.
    fn match_slash(&mut self, slash: Option<u8>, regex: bool) -> Result<(), SyntaxError> {
        let slash = match slash {
            None | Some(b'\n') => return Err(self.error("unterminated regex or string")),
            Some(s) if !s.is_ascii() => return Err(self.error("non-ASCII delimiter")),
            Some(s) => s,
        };
        loop {
            let ch = self.inchar();
            match ch {
                None | Some(b'\n') => return Err(self.error("unterminated regex or string")),
                Some(c) if c == slash => return Ok(()),
                Some(b'\\') => {
                    if self.inchar().is_none() {
                        return Err(self.error("unterminated regex or string"));
                    }
                }
                Some(b'[') if regex => {
                    if self.snarf_char_class() != Some(b']') {
                        return Err(self.error("unterminated bracket expression"));
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Skip a bracket expression whose `[` is read; returns the character that ended it
    /// (`]`, or a newline / end of script when it is unterminated). `[:x:]`, `[.x.]` and
    /// `[=x=]` inside may hold `]`; a backslash is an ordinary character here.
    fn snarf_char_class(&mut self) -> Option<u8> {
        // 0: plain, 1: after `[`, 2: inside `[:`/`[.`/`[=`, 3: after its closing `:`/`.`/`=`.
        let mut state = 0u8;
        let mut delim = 0u8;
        let mut ch = self.inchar();
        if ch == Some(b'^') {
            ch = self.inchar();
        }
        if ch == Some(b']') {
            ch = self.inchar();
        }
        loop {
            match ch {
                None | Some(b'\n') => return ch,
                Some(c @ (b'.' | b':' | b'=')) if state == 1 => {
                    delim = c;
                    state = 2;
                    ch = self.inchar();
                    continue;
                }
                Some(c @ (b'.' | b':' | b'=')) if state == 2 && c == delim => {
                    state = 3;
                    ch = self.inchar();
                    continue;
                }
                Some(b'[') => {
                    if state == 0 {
                        state = 1;
                    }
                    ch = self.inchar();
                    continue;
                }
                Some(b']') => {
                    if state <= 1 {
                        return ch;
                    }
                    if state == 3 {
                        state = 0;
                    }
                }
                Some(_) => {}
            }
            state &= !1;
            ch = self.inchar();
        }
    }

    /// A label for `:`, `b`, `t`, `T` (or `v`'s version): up to a blank, `;`, `}`, `#` or
    /// the end of the line.
    fn read_label(&mut self) -> Vec<u8> {
        let mut label = Vec::new();
        let mut ch = self.in_nonblank();
        while let Some(c) = ch {
            if matches!(c, b'\n' | b' ' | b'\t' | b';' | b'}' | b'#') {
                break;
            }
            label.push(c);
            ch = self.inchar();
        }
        self.savchar(ch);
        label
    }

    /// A file name for `r`, `R`, `w`, `W`, `s///w`: everything to the end of the line.
    fn read_filename(&mut self) -> Result<String, SyntaxError> {
        let mut ch = self.in_nonblank();
        let start = self.pos.saturating_sub(usize::from(ch.is_some()));
        while !matches!(ch, None | Some(b'\n')) {
            ch = self.inchar();
        }
        let end = self.pos - usize::from(ch.is_some());
        if start >= end {
            return Err(self.error("missing filename in r/R/w/W commands"));
        }
        let name = self.src[start..end].to_vec();
        Ok(self.decode(&name))
    }

    fn read_end_of_cmd(&mut self) -> Result<(), SyntaxError> {
        let ch = self.in_nonblank();
        match ch {
            Some(b'}' | b'#') => {
                self.savchar(ch);
                Ok(())
            }
            None | Some(b'\n' | b';') => Ok(()),
            Some(_) => Err(self.error("extra characters after command")),
        }
    }

    /// The text of `a`, `i`, `c` or `e`, whose first non-blank character `ch` is read: the
    /// one-liner form (`a text`) or the backslash form (`a\` then text, on the same line or
    /// the next). It runs to the first newline no backslash escapes. Returned raw (escapes
    /// kept, as GNU sed stores it before `normalize_text`).
    fn read_text_after(&mut self, ch: Option<u8>) -> Result<Vec<u8>, SyntaxError> {
        let leadin = match ch {
            None => return Err(self.error("expected \\ after `a', `c' or `i'")),
            Some(b'\\') => self.inchar(),
            Some(_) => {
                self.savchar(ch);
                Some(b'\n')
            }
        };
        let mut text = Vec::new();
        let Some(leadin) = leadin else {
            return Ok(text);
        };
        if leadin != b'\n' {
            text.push(leadin);
        }
        let mut ch = self.inchar();
        while let Some(mut c) = ch {
            if c == b'\n' {
                break;
            }
            if c == b'\\' {
                match self.inchar() {
                    Some(escaped) => {
                        text.push(b'\\');
                        c = escaped;
                    }
                    None => break,
                }
            }
            text.push(c);
            ch = self.inchar();
        }
        Ok(text)
    }

    /// Bytes as text; bytes that are not UTF-8 make the effect unknown as well, since the
    /// lossy text names another file or command.
    fn decode(&mut self, bytes: &[u8]) -> String {
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            Err(_) => {
                self.effects
                    .unknown
                    .push("a sed file name or command is not UTF-8".to_owned());
                String::from_utf8_lossy(bytes).into_owned()
            }
        }
    }
}

/// GNU sed's escape processing of stored text (`\n`, `\t`, `\xHH`, `\oNNN`, `\dNNN`, `\cX`,
/// backslash-newline; any other `\X` is `X`), which is what `e COMMAND` hands to the shell.
fn normalize_text(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let byte = text[i];
        if byte != b'\\' || i + 1 >= text.len() {
            out.push(byte);
            i += 1;
            continue;
        }
        let esc = text[i + 1];
        i += 2;
        match esc {
            b'a' => out.push(0x07),
            b'f' => out.push(0x0c),
            b'n' | b'\n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'd' | b'x' | b'o' => {
                let base: u32 = match esc {
                    b'd' => 10,
                    b'x' => 16,
                    _ => 8,
                };
                let mut value: u32 = 0;
                let mut max: u32 = 1;
                let start = i;
                while i < text.len() && max <= 255 {
                    match char::from(text[i]).to_digit(16) {
                        Some(d) if d < base => value = value * base + d,
                        _ => break,
                    }
                    i += 1;
                    max *= base;
                }
                if i == start {
                    out.push(esc);
                } else {
                    out.push(value.to_le_bytes()[0]);
                }
            }
            b'c' if i < text.len() => {
                out.push(text[i].to_ascii_uppercase() ^ 0x40);
                // `\c\\` is a control-backslash; the second backslash belongs to it.
                if text[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            // A trailing `\c` stands for nothing.
            b'c' => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize_text;

    #[test]
    fn normalize_text_decodes_escapes_like_gnu_sed() {
        let cases: [(&str, &[u8]); 9] = [
            (r"\x72m", b"rm"),
            (r"\o162m", b"rm"),
            (r"\d114m", b"rm"),
            (r"a\tb", b"a\tb"),
            (r"\qx", b"qx"),
            ("a\\\nb", b"a\nb"),
            (r"\xzz", b"xzz"),
            (r"\cA", b"\x01"),
            (r"\x414", b"A4"),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_text(raw.as_bytes()), want, "{raw:?}");
        }
    }
}
