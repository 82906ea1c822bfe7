//! Which part of a denied Bash line Claude Code quotes in "Permission to use Bash with command
//! X has been denied." (recorded: dm_* scenarios, sb_deny_read).
//!
//! A line with a pipe is cut at every unquoted `|` (and `|&`, never `||`) as raw text, and the
//! first piece from the left that is denied on its own is quoted, trimmed, with its output
//! redirections (`>`, `>>`, `1>`, `2>` and their targets) taken out; `;`, `&&`, `||` and
//! newlines inside a piece stay. A line without a pipe, or with a subshell, a group, a command
//! substitution or backquotes anywhere (or a redirection before an argument), is quoted whole.

/// The pieces of `line` between unquoted pipes, or `None` when it is quoted whole.
pub(crate) fn pipe_pieces(line: &str) -> Option<Vec<&str>> {
    let b = line.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    let (mut single, mut double) = (false, false);
    while i < b.len() {
        let c = b[i];
        if single {
            single = c != b'\'';
        } else if c == b'\\' {
            i += 1;
        } else if double {
            match c {
                b'"' => double = false,
                b'`' => return None,
                b'$' if b.get(i + 1) == Some(&b'(') => return None,
                _ => {}
            }
        } else {
            match c {
                b'\'' => single = true,
                b'"' => double = true,
                b'(' | b')' | b'`' => return None,
                b'{' | b'}' if i == 0 || b[i - 1] != b'$' => {
                    // `{` and `}` as words of their own are a group; `${x}` is an expansion.
                    let before = i == 0 || b[i - 1].is_ascii_whitespace() || b[i - 1] == b';';
                    let after = b
                        .get(i + 1)
                        .is_none_or(|n| n.is_ascii_whitespace() || *n == b';');
                    if before || after {
                        return None;
                    }
                }
                b'|' if b.get(i + 1) == Some(&b'|') => i += 1,
                b'|' => {
                    pieces.push(&line[start..i]);
                    if b.get(i + 1) == Some(&b'&') {
                        i += 1;
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if pieces.is_empty() {
        return None;
    }
    pieces.push(&line[start..]);
    Some(pieces)
}

/// `piece` as Claude Code quotes it: trimmed, output redirections and their targets taken
/// out (and then every run of blanks made one space). `None` when a redirection comes before
/// an argument of its command: the whole line is quoted then.
pub(crate) fn quoted_piece(piece: &str) -> Option<String> {
    let piece = piece.trim();
    let b = piece.as_bytes();
    let mut out = String::new();
    let mut removed = false;
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if single || double {
            if (single && c == b'\'') || (double && c == b'"') {
                single = false;
                double = false;
            } else if double && c == b'\\' && i + 1 < b.len() {
                out.push(c as char);
                i += 1;
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            out.push(c as char);
            i += 1;
            continue;
        }
        // An output redirection: an optional 1 or 2 starting a word, then `>` or `>>`, not
        // `>&`, `>|`.
        let at_word_start = i == 0 || b[i - 1].is_ascii_whitespace() || b[i - 1] == b';';
        let digit = (c == b'1' || c == b'2') && at_word_start && b.get(i + 1) == Some(&b'>');
        if c == b'>' || digit {
            let mut j = if digit { i + 1 } else { i };
            let is_stdout_digitless = c == b'>';
            j += 1;
            if b.get(j) == Some(&b'>') {
                j += 1;
            }
            if matches!(b.get(j), Some(b'&' | b'|'))
                || (is_stdout_digitless && i > 0 && b[i - 1] == b'&')
            {
                out.push(c as char);
                i += 1;
                continue;
            }
            // Its target: blanks, then a word (quotes kept together).
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            let (mut sq, mut dq) = (false, false);
            while j < b.len() {
                let t = b[j];
                if sq {
                    sq = t != b'\'';
                } else if dq {
                    dq = t != b'"';
                } else if t == b'\'' {
                    sq = true;
                } else if t == b'"' {
                    dq = true;
                } else if t.is_ascii_whitespace() || matches!(t, b';' | b'&' | b'|') {
                    break;
                }
                j += 1;
            }
            // Another argument of the same command after it: quoted whole.
            let mut k = j;
            while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            if k < b.len() && !matches!(b[k], b';' | b'&' | b'|' | b'\n' | b'2' | b'1' | b'>') {
                return None;
            }
            removed = true;
            i = j;
            continue;
        }
        match c {
            b'\'' => single = true,
            b'"' => double = true,
            _ => {}
        }
        out.push(c as char);
        i += 1;
    }
    if !removed {
        return Some(piece.to_owned());
    }
    let mut collapsed = String::new();
    for (n, w) in out.split([' ', '\t']).filter(|w| !w.is_empty()).enumerate() {
        if n > 0 {
            collapsed.push(' ');
        }
        collapsed.push_str(w);
    }
    Some(collapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text quoted when `denied` says which raw pieces are denied on their own.
    fn quote(line: &str, denied: &dyn Fn(&str) -> bool) -> String {
        let Some(pieces) = pipe_pieces(line) else {
            return line.to_owned();
        };
        for p in pieces {
            if denied(p.trim()) {
                return quoted_piece(p).unwrap_or_else(|| line.to_owned());
            }
        }
        line.to_owned()
    }

    #[test]
    fn the_first_denied_piece_between_pipes_is_quoted_as_claude_code_does() {
        let rm = |p: &str| p.contains("rm ");
        let env = |p: &str| p.contains(".env");
        // Recorded with Claude Code 2.1.332 (deny Bash(rm:*) and Read(./.env); allow Bash).
        type Denied<'a> = &'a dyn Fn(&str) -> bool;
        let cases: &[(&str, Denied<'_>, &str)] = &[
            ("rm f.txt", &rm, "rm f.txt"),
            ("echo a; rm f.txt", &rm, "echo a; rm f.txt"),
            ("echo a && rm f.txt", &rm, "echo a && rm f.txt"),
            ("echo a | rm f.txt", &rm, "rm f.txt"),
            ("rm f.txt | cat", &rm, "rm f.txt"),
            ("ls; rm f.txt | cat; echo z", &rm, "ls; rm f.txt"),
            ("echo $(rm f.txt)", &rm, "echo $(rm f.txt)"),
            ("(rm f.txt)", &rm, "(rm f.txt)"),
            (
                "true && (echo a; rm g.txt) | cat",
                &rm,
                "true && (echo a; rm g.txt) | cat",
            ),
            ("echo x | cat; rm f.txt", &rm, "cat; rm f.txt"),
            ("echo a | rm f.txt && echo b", &rm, "rm f.txt && echo b"),
            ("rm f.txt || true | cat", &rm, "rm f.txt || true"),
            ("echo a | cat\nrm f.txt", &rm, "cat\nrm f.txt"),
            ("echo a |& rm f.txt", &rm, "rm f.txt"),
            ("echo a | rm f.txt | cat; rm g.txt", &rm, "rm f.txt"),
            ("echo a;rm f.txt|cat", &rm, "echo a;rm f.txt"),
            ("echo \"a|b\"; rm f.txt", &rm, "echo \"a|b\"; rm f.txt"),
            ("echo 'a | b' | rm f.txt", &rm, "rm f.txt"),
            ("echo a  |   rm   f.txt", &rm, "rm   f.txt"),
            ("echo a | rm f.txt > \"o u.txt\"", &rm, "rm f.txt"),
            (
                "echo a | rm  f.txt 2>/dev/null; echo  b",
                &rm,
                "rm f.txt ; echo b",
            ),
            ("echo a | rm f.txt>out.txt; echo b", &rm, "rm f.txt; echo b"),
            (
                "echo a | rm >out.txt f.txt",
                &rm,
                "echo a | rm >out.txt f.txt",
            ),
            ("{ echo a; } | rm f.txt", &rm, "{ echo a; } | rm f.txt"),
            ("cat .env | wc -l", &env, "cat .env"),
            ("wc -l < .env | cat", &env, "wc -l < .env"),
            (
                "ls -la .env | cut -c1-10; wc -c < .env",
                &env,
                "ls -la .env",
            ),
            ("grep X .env | head -1 && echo done", &env, "grep X .env"),
            ("cp .env x && cat x", &env, "cp .env x && cat x"),
        ];
        for (line, denied, want) in cases {
            assert_eq!(quote(line, *denied), *want, "{line}");
        }
    }
}
