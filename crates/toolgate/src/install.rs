//! `toolgate guard install`: add the guard to a Claude Code settings file as a PreToolUse
//! hook, or take it out again, changing nothing else in the file.
//!
//! The file is edited as text: the new entry is spliced in where it belongs, indented like the
//! file, and removing it takes out exactly the text it occupies (with its comma), so the
//! user's other settings, their order and their formatting stay as they were.

use std::ops::Range;
use std::path::Path;

use serde_json::Value;

/// A JSON value with where it sits in the text.
#[derive(Debug)]
enum Node {
    Object {
        span: Range<usize>,
        /// Each member: its key, where the key starts, and its value.
        members: Vec<(String, usize, Node)>,
    },
    Array {
        span: Range<usize>,
        items: Vec<Node>,
    },
    Scalar {
        span: Range<usize>,
        value: Value,
    },
}

impl Node {
    fn span(&self) -> Range<usize> {
        match self {
            Node::Object { span, .. } | Node::Array { span, .. } | Node::Scalar { span, .. } => {
                span.clone()
            }
        }
    }

    fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object { members, .. } => members.iter().find(|(k, _, _)| k == key).map(|m| &m.2),
            _ => None,
        }
    }
}

/// A recursive-descent reader of JSON that keeps each value's byte range.
struct Reader<'t> {
    text: &'t str,
    at: usize,
    depth: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        let (line, column) = tool_permissions::line_column(self.text, self.at);
        format!("{line}:{column}: {what}")
    }

    fn skip_ws(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    }

    fn value(&mut self) -> Result<Node, String> {
        self.skip_ws();
        self.depth += 1;
        if self.depth > 256 {
            return Err(self.error("nested too deeply"));
        }
        let start = self.at;
        let node = match self.text.as_bytes().get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.skip_ws();
                if self.text[self.at..].starts_with('}') {
                    self.at += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key_start = self.at;
                        let key = match self.value()? {
                            Node::Scalar {
                                value: Value::String(k),
                                ..
                            } => k,
                            _ => return Err(self.error("an object key must be a string")),
                        };
                        self.skip_ws();
                        if !self.text[self.at..].starts_with(':') {
                            return Err(self.error("expected `:`"));
                        }
                        self.at += 1;
                        let v = self.value()?;
                        members.push((key, key_start, v));
                        self.skip_ws();
                        match self.text.as_bytes().get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `}`")),
                        }
                    }
                }
                Node::Object {
                    span: start..self.at,
                    members,
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.text[self.at..].starts_with(']') {
                    self.at += 1;
                } else {
                    loop {
                        items.push(self.value()?);
                        self.skip_ws();
                        match self.text.as_bytes().get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                }
                Node::Array {
                    span: start..self.at,
                    items,
                }
            }
            Some(_) => {
                // A scalar: let serde_json read exactly one value from here.
                let mut stream =
                    serde_json::Deserializer::from_str(&self.text[self.at..]).into_iter::<Value>();
                let value = match stream.next() {
                    Some(Ok(v)) if !v.is_object() && !v.is_array() => v,
                    _ => return Err(self.error("expected a JSON value")),
                };
                self.at += stream.byte_offset();
                Node::Scalar {
                    span: start..self.at,
                    value,
                }
            }
            None => return Err(self.error("unexpected end of the file")),
        };
        self.depth -= 1;
        Ok(node)
    }
}

fn parse(text: &str) -> Result<Node, String> {
    let mut r = Reader {
        text,
        at: 0,
        depth: 0,
    };
    let root = r.value()?;
    r.skip_ws();
    if r.at != text.len() {
        return Err(r.error("text after the settings object"));
    }
    if !matches!(root, Node::Object { .. }) {
        return Err("the settings are not a JSON object".into());
    }
    Ok(root)
}

/// The file's indentation unit: the leading whitespace of its first indented line (two spaces
/// when nothing is indented).
fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

/// What the installed hook command does when `toolgate guard` cannot run at all (not on
/// PATH, killed): block the call (exit status 2, which Claude Code treats as a refusal) and
/// say why, rather than fail in a way Claude Code lets the call through.
pub const IF_GUARD_CANNOT_RUN: &str = " || { echo 'toolgate guard could not run (is toolgate installed and on PATH?); the call is blocked' >&2; exit 2; }";

/// Is this hook command a toolgate guard (`toolgate guard`, `/path/to/toolgate guard ...`)?
pub fn is_guard_command(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let program = words
        .next()
        .map(|w| w.trim_matches(['\'', '"']))
        .unwrap_or_default();
    program.rsplit('/').next() == Some("toolgate") && words.next() == Some("guard")
}

/// Does a PreToolUse matcher entry run a toolgate guard?
fn runs_guard(entry: &Node) -> bool {
    match entry.get("hooks") {
        Some(Node::Array { items, .. }) => items.iter().any(|h| {
            matches!(h.get("command"), Some(Node::Scalar { value: Value::String(c), .. }) if is_guard_command(c))
        }),
        _ => false,
    }
}

/// The file's line ending: CRLF when its first line ends so, LF otherwise.
fn newline(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// `value` written at nesting `depth` in the file's style (`unit` per level, `nl` between
/// lines).
fn pretty_at(value: &Value, unit: &str, nl: &str, depth: usize) -> String {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    serde::Serialize::serialize(value, &mut ser).unwrap_or_default();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let pad = unit.repeat(depth);
    text.replace('\n', &format!("{nl}{pad}"))
}

/// Insert `item` (already indented text) as the last element of the container spanning
/// `span` (an object or an array, whose last element, if any, ends at `last_end`), at `depth`.
fn append(
    text: &str,
    span: &Range<usize>,
    last_end: Option<usize>,
    item: &str,
    unit: &str,
    depth: usize,
) -> String {
    let nl = newline(text);
    let close = span.end - 1;
    let pad = unit.repeat(depth + 1);
    let closing_pad = unit.repeat(depth);
    match last_end {
        Some(end) => format!("{},{nl}{pad}{item}{}", &text[..end], &text[end..]),
        None => format!(
            "{}{nl}{pad}{item}{nl}{closing_pad}{}",
            &text[..close],
            &text[close..]
        ),
    }
}

/// The settings text with the guard's PreToolUse entry added (`command` is the hook
/// command). `None` when the file already runs a toolgate guard.
pub fn with_guard(text: &str, command: &str) -> Result<Option<String>, String> {
    let entry =
        serde_json::json!({"matcher": "*", "hooks": [{"type": "command", "command": command}]});
    if text.trim().is_empty() {
        let v = serde_json::json!({"hooks": {"PreToolUse": [entry]}});
        return Ok(Some(format!("{}\n", pretty_at(&v, "  ", "\n", 0))));
    }
    let root = parse(text)?;
    let unit = indent_unit(text);
    let nl = newline(text);
    let last_end = |members: &[(String, usize, Node)]| members.last().map(|(_, _, n)| n.span().end);
    let Node::Object { span, members } = &root else {
        return Err("the settings are not a JSON object".into());
    };
    let Some(hooks) = root.get("hooks") else {
        let member = format!(
            "\"hooks\": {}",
            pretty_at(&serde_json::json!({"PreToolUse": [entry]}), &unit, nl, 1)
        );
        return Ok(Some(append(
            text,
            span,
            last_end(members),
            &member,
            &unit,
            0,
        )));
    };
    let Node::Object {
        span: hooks_span,
        members: hook_members,
    } = hooks
    else {
        return Err("`hooks` is not an object".into());
    };
    let Some(pre) = hooks.get("PreToolUse") else {
        let member = format!(
            "\"PreToolUse\": {}",
            pretty_at(&serde_json::json!([entry]), &unit, nl, 2)
        );
        return Ok(Some(append(
            text,
            hooks_span,
            last_end(hook_members),
            &member,
            &unit,
            1,
        )));
    };
    let Node::Array {
        span: pre_span,
        items,
    } = pre
    else {
        return Err("`hooks.PreToolUse` is not an array".into());
    };
    if items.iter().any(runs_guard) {
        return Ok(None);
    }
    let item = pretty_at(&entry, &unit, nl, 3);
    Ok(Some(append(
        text,
        pre_span,
        items.last().map(|n| n.span().end),
        &item,
        &unit,
        2,
    )))
}

/// Remove `range` and the comma that joins it to its neighbours, with the whitespace between.
fn cut(text: &str, siblings: &[Range<usize>], index: usize) -> String {
    let this = &siblings[index];
    let range = if index + 1 < siblings.len() {
        // Up to the next element: this one, its comma and the whitespace before the next.
        this.start..siblings[index + 1].start
    } else if index > 0 {
        // The last one: from the end of the previous element (its comma goes too).
        siblings[index - 1].end..this.end
    } else {
        // The only one: the whitespace inside the brackets goes too.
        let open = text[..this.start].trim_end().len();
        let close = this.end + (text[this.end..].len() - text[this.end..].trim_start().len());
        open..close
    };
    format!("{}{}", &text[..range.start], &text[range.end..])
}

/// The settings text with every toolgate guard hook removed (a matcher entry left with no
/// hook goes too). `None` when there is none.
pub fn without_guard(text: &str) -> Result<Option<String>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let mut text = text.to_owned();
    let mut changed = false;
    // One removal at a time, reading the text again after each.
    loop {
        let root = parse(&text)?;
        let Some(Node::Array { items, .. }) = root.get("hooks").and_then(|h| h.get("PreToolUse"))
        else {
            break;
        };
        let Some(i) = items.iter().position(runs_guard) else {
            break;
        };
        let entry = &items[i];
        let Some(Node::Array { items: hooks, .. }) = entry.get("hooks") else {
            break;
        };
        let guards: Vec<usize> = hooks
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h.get("command"), Some(Node::Scalar { value: Value::String(c), .. }) if is_guard_command(c)))
            .map(|(j, _)| j)
            .collect();
        text = if guards.len() == hooks.len() {
            let spans: Vec<Range<usize>> = items.iter().map(Node::span).collect();
            cut(&text, &spans, i)
        } else {
            let spans: Vec<Range<usize>> = hooks.iter().map(Node::span).collect();
            cut(&text, &spans, guards[0])
        };
        changed = true;
    }
    if changed {
        // A PreToolUse list left empty goes, and so does a `hooks` object left empty.
        for path in [["hooks", "PreToolUse"].as_slice(), ["hooks"].as_slice()] {
            let root = parse(&text)?;
            let mut parent = &root;
            for key in &path[..path.len() - 1] {
                match parent.get(key) {
                    Some(n) => parent = n,
                    None => break,
                }
            }
            let Node::Object { members, .. } = parent else {
                continue;
            };
            let last = path[path.len() - 1];
            let Some(i) = members.iter().position(|(k, _, _)| k == last) else {
                continue;
            };
            let empty = match &members[i].2 {
                Node::Array { items, .. } => items.is_empty(),
                Node::Object { members, .. } => members.is_empty(),
                Node::Scalar { .. } => false,
            };
            if empty {
                let spans: Vec<Range<usize>> = members
                    .iter()
                    .map(|(_, start, n)| *start..n.span().end)
                    .collect();
                text = cut(&text, &spans, i);
            }
        }
    }
    Ok(changed.then_some(text))
}

/// Whether settings text is an object with nothing in it (what taking the guard out of a
/// file the install created leaves).
pub fn is_empty_object(text: &str) -> bool {
    matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(m)) if m.is_empty())
}

/// The file a settings path names: a symbolic link (a dotfiles repository's) is followed,
/// link by link, to the file it leads to, so that file is edited and the link kept.
pub fn link_target(path: &Path) -> anyhow::Result<std::path::PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(at),
        }
    }
    anyhow::bail!("{}: too many levels of symbolic links", path.display())
}

/// Read `path`, apply `edit`, and write the result in one step (a temporary file beside it,
/// then a rename). A symbolic link is edited through: the file it leads to is replaced, the
/// link stays. An edit that leaves an empty object (`{}`) removes the file instead. Returns
/// whether the file changed.
pub fn edit_file(
    path: &Path,
    edit: impl FnOnce(&str) -> Result<Option<String>, String>,
) -> anyhow::Result<bool> {
    let path = &link_target(path)?;
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    };
    let Some(new) = edit(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))? else {
        return Ok(false);
    };
    serde_json::from_str::<Value>(&new).map_err(|e| {
        anyhow::anyhow!(
            "{}: the edit would not be JSON ({e}); left as it was",
            path.display()
        )
    })?;
    if is_empty_object(&new) {
        std::fs::remove_file(path)?;
        return Ok(true);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, new.as_bytes())?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "toolgate guard";

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn install_keeps_everything_else_byte_for_byte() {
        let original = "{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}\n        ]\n    }\n}\n";
        let out = with_guard(original, CMD).unwrap().unwrap();
        let v = json(&out);
        assert_eq!(v["hooks"]["PreToolUse"][1]["hooks"][0]["command"], CMD);
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./mine.sh"
        );
        assert_eq!(v["model"], "opus");
        // Only lines were added, each indented with the file's unit.
        let before: Vec<&str> = original.lines().collect();
        let after: Vec<&str> = out.lines().collect();
        let mut b = before.iter().peekable();
        for line in &after {
            if b.peek()
                .is_some_and(|x| x.trim_end_matches(',') == line.trim_end_matches(','))
            {
                b.next();
            } else {
                assert!(
                    line.starts_with("            ") || line.trim().starts_with(['}', ']', '"']),
                    "{out}"
                );
            }
        }
        assert!(
            b.next().is_none(),
            "a line of the original was lost:\n{out}"
        );
        assert_eq!(
            with_guard(&out, "/opt/bin/toolgate guard --allow").unwrap(),
            None,
            "installed once"
        );
        let back = without_guard(&out).unwrap().unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn install_into_files_without_hooks_and_empty_ones() {
        for original in [
            "",
            "{}",
            "{\n  \"model\": \"opus\"\n}\n",
            "{\"hooks\": {}}",
            "{\"hooks\": {\"PostToolUse\": []}}",
            "{\"hooks\": {\"PreToolUse\": []}}",
        ] {
            let out = with_guard(original, CMD).unwrap().unwrap();
            let v = json(&out);
            assert_eq!(
                v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], CMD,
                "{original:?} -> {out}"
            );
            assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "*");
            let back = without_guard(&out).unwrap();
            if original.is_empty() {
                assert!(back.is_some());
            } else {
                let back = back.unwrap();
                // What remains is what was there, as JSON, less a hook list or table left
                // empty.
                let mut expect = json(original);
                if let Some(hooks) = expect.get_mut("hooks").and_then(Value::as_object_mut) {
                    if hooks
                        .get("PreToolUse")
                        .is_some_and(|p| p == &serde_json::json!([]))
                    {
                        hooks.remove("PreToolUse");
                    }
                    if hooks.is_empty() {
                        expect.as_object_mut().unwrap().remove("hooks");
                    }
                }
                assert_eq!(json(&back), expect, "{original:?}: {back}");
            }
        }
    }

    #[test]
    fn uninstall_takes_only_the_guard_out_of_a_shared_entry() {
        let text = r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "./a.sh"}, {"type": "command", "command": "'/usr/local/bin/toolgate' guard --fail-closed"}]}, {"matcher": "Bash", "hooks": [{"type": "command", "command": "toolgate guard"}]}]}}"#;
        let out = without_guard(text).unwrap().unwrap();
        assert_eq!(
            json(&out),
            json(
                r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "./a.sh"}]}]}}"#
            )
        );
        assert_eq!(without_guard(&out).unwrap(), None);
        assert!(!is_guard_command("toolgate check"));
        assert!(!is_guard_command("mytoolgate guard"));
    }

    #[test]
    fn bad_settings_are_refused_with_where() {
        let e = with_guard("{\"hooks\": [1]}", CMD).unwrap_err();
        assert!(e.contains("`hooks` is not an object"), "{e}");
        let e = with_guard("{\n  \"a\": 1,\n  oops\n}", CMD).unwrap_err();
        assert!(e.starts_with("3:3:"), "{e}");
        let e = with_guard("[1]", CMD).unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
    }
}
