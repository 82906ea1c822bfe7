//! Approvals that last: the narrowest rule that allows one call, saved to a TOML policy file
//! with `toml_edit` so the user's comments and layout survive, and removed again on request.
//!
//! A saved rule is an ordinary allow rule of the file's layer: a deny or ask rule of any layer,
//! and every built-in check, still outrank it. It is marked by a comment line just above it
//! ([`SAVED_APPROVAL_MARK`]), which is how [`is_saved_approval`] and [`revoke_approval`] tell
//! it from the rules the user wrote.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};
use tool_core::PermissionSubject;

use crate::Error;
use crate::rule::PermissionRule;
use crate::shell_rule::ShellPattern;

/// The comment written on the line above a saved approval.
pub const SAVED_APPROVAL_MARK: &str = "# saved approval (toolgate)";

/// The narrowest rule that allows this call of `tool` and little else, or why there is none.
///
/// - A shell command of one unit: `Bash(<the unit>)`, an exact-match rule.
/// - One path: `Read(//<path>)` or `Edit(//<path>)`, anchored at the filesystem root.
/// - A URL: `WebFetch(domain:<host>)`.
/// - A tool with nothing more to match: the tool's name.
///
/// Commands of several units, several paths, and paths with pattern characters have no rule
/// narrow enough: approving one of them for good would approve more than was asked.
pub fn narrowest_rule(tool: &str, subject: &PermissionSubject) -> Result<String, String> {
    let with = |content: String| {
        PermissionRule {
            tool: tool.to_owned(),
            content: Some(content),
        }
        .to_string()
    };
    match subject {
        // The paths only restrict such a call: the rule that allows it names the tool.
        PermissionSubject::Nothing | PermissionSubject::ToolPaths { .. } => Ok(tool.to_owned()),
        PermissionSubject::ShellCommand(command) => {
            let units = crate::shell_rule::units(command)
                .ok_or("the command cannot be analysed, so no rule can describe it")?;
            let [unit] = units.as_slice() else {
                return Err(format!(
                    "the command has {} parts; a rule can only cover one",
                    units.len()
                ));
            };
            if unit.contains('\n') || unit.ends_with(":*") || unit.contains('*') {
                return Err("the command has characters a rule would read as a pattern".into());
            }
            match ShellPattern::parse(unit) {
                Ok(ShellPattern::Exact(e)) if &e == unit => Ok(with(unit.clone())),
                _ => Err("the command cannot be written as an exact rule".into()),
            }
        }
        PermissionSubject::ReadPaths(paths) | PermissionSubject::WritePaths(paths) => {
            let family = if matches!(subject, PermissionSubject::ReadPaths(_)) {
                "Read"
            } else {
                "Edit"
            };
            let [path] = paths.as_slice() else {
                return Err(format!(
                    "the call touches {} paths; a rule covers one",
                    paths.len()
                ));
            };
            let text = path
                .to_str()
                .ok_or("the path is not UTF-8, so no rule can name it")?;
            if !path.is_absolute() || text.contains(['*', '?', '[', ']', '{', '}', '\\', '!', '\n'])
            {
                return Err("the path has characters a rule would read as a pattern".into());
            }
            Ok(PermissionRule {
                tool: family.to_owned(),
                content: Some(format!("/{text}")),
            }
            .to_string())
        }
        PermissionSubject::Url(url) => {
            let host = url
                .split_once("://")
                .map(|(_, rest)| rest)
                .and_then(|rest| rest.split(['/', '?', '#']).next())
                .map(|h| h.rsplit_once('@').map_or(h, |(_, h)| h))
                .map(|h| h.split(':').next().unwrap_or(h))
                .filter(|h| !h.is_empty() && !h.contains(['*', '[']))
                .ok_or("the URL has no host")?;
            Ok(with(format!("domain:{}", host.to_ascii_lowercase())))
        }
    }
}

fn read_doc(path: &Path) -> Result<(String, DocumentMut), Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(Error::Io {
                file: path.to_path_buf(),
                source,
            });
        }
    };
    let doc = text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |s| crate::file::line_column(&text, s.start));
        Error::Syntax {
            file: path.to_path_buf(),
            line,
            column,
            message: e.message().to_owned(),
        }
    })?;
    Ok((text, doc))
}

fn shape(path: &Path, message: &str) -> Error {
    Error::Shape {
        file: Some(path.to_path_buf()),
        message: message.to_owned(),
    }
}

/// Replace `path`'s content with `text` without a moment where the file is half written: a
/// temporary file beside it, then a rename. Keeps the file's permission bits.
fn write_whole(path: &Path, text: &str) -> Result<(), Error> {
    let io = |source| Error::Io {
        file: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    let tmp: PathBuf = dir.join(format!(
        ".{}.toolgate-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, text)
        .and_then(|()| match mode {
            Some(m) => std::fs::set_permissions(&tmp, m),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// The `permissions.allow` array of `doc`, created when missing.
fn allow_array<'d>(doc: &'d mut DocumentMut, path: &Path) -> Result<&'d mut Array, Error> {
    let permissions = doc
        .entry("permissions")
        .or_insert_with(|| Item::Table(Table::new()));
    let permissions = permissions
        .as_table_like_mut()
        .ok_or_else(|| shape(path, "`permissions` is not a table"))?;
    let allow = permissions
        .entry("allow")
        .or_insert(Item::Value(Value::Array(Array::new())));
    allow
        .as_array_mut()
        .ok_or_else(|| shape(path, "`permissions.allow` is not an array"))
}

/// The 1-based line of the saved approval `rule` in `text`: the line after the mark whose
/// value is the rule.
fn saved_line(text: &str, rule: &str) -> Option<usize> {
    let encoded = Value::from(rule).to_string();
    let lines: Vec<&str> = text.lines().collect();
    (1..lines.len())
        .find(|&i| {
            lines[i - 1].trim() == SAVED_APPROVAL_MARK
                && lines[i].trim().trim_end_matches(',').trim() == encoded.trim()
        })
        .map(|i| i + 1)
}

/// Append the allow rule `rule` to the TOML policy file at `path` (created when missing), on
/// its own line under a [`SAVED_APPROVAL_MARK`] comment, keeping everything else in the file
/// as it was. Returns the rule's 1-based line. A rule already saved there is not added twice.
pub fn save_approval(path: &Path, rule: &str) -> Result<usize, Error> {
    PermissionRule::parse(rule)?;
    let (text, mut doc) = read_doc(path)?;
    if let Some(line) = saved_line(&text, rule) {
        return Ok(line);
    }
    let allow = allow_array(&mut doc, path)?;
    let indent = allow
        .iter()
        .find_map(|v| {
            v.decor()
                .prefix()
                .and_then(|p| p.as_str())
                .and_then(|p| p.rsplit('\n').next().filter(|_| p.contains('\n')))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "    ".to_owned());
    // What follows the last element (a comment on its line, the closing bracket's
    // indentation) stays where it was: the comment before the new element, the rest after it.
    let trailing = allow.trailing().as_str().unwrap_or("").to_owned();
    let (same_line, closing) = match trailing.rsplit_once('\n') {
        Some((line, closing)) => (line.to_owned(), closing.to_owned()),
        None => (String::new(), String::new()),
    };
    let mut value = Value::from(rule);
    value.decor_mut().set_prefix(format!(
        "{same_line}\n{indent}{SAVED_APPROVAL_MARK}\n{indent}"
    ));
    allow.push_formatted(value);
    allow.set_trailing_comma(true);
    allow.set_trailing(format!("\n{closing}"));
    let out = doc.to_string();
    write_whole(path, &out)?;
    saved_line(&out, rule).ok_or_else(|| shape(path, "the saved rule cannot be found again"))
}

/// Remove the saved approval `rule` from the TOML policy file at `path`, with its mark. Rules
/// the user wrote (without the mark) are never removed. Returns whether one was removed.
pub fn revoke_approval(path: &Path, rule: &str) -> Result<bool, Error> {
    let (text, mut doc) = read_doc(path)?;
    if saved_line(&text, rule).is_none() {
        return Ok(false);
    }
    let allow = allow_array(&mut doc, path)?;
    let Some(index) = allow.iter().position(|v| {
        v.as_str() == Some(rule)
            && v.decor()
                .prefix()
                .and_then(|p| p.as_str())
                .is_some_and(|p| p.contains(SAVED_APPROVAL_MARK))
    }) else {
        return Ok(false);
    };
    // A comment at the end of the previous element's line sits in this element's prefix,
    // before its first newline: it stays, moved to whatever now follows that element.
    let prefix = allow
        .get(index)
        .and_then(|v| v.decor().prefix())
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_owned();
    let same_line = prefix.split('\n').next().unwrap_or("").to_owned();
    allow.remove(index);
    if !same_line.trim().is_empty() {
        match allow.get_mut(index) {
            Some(next) => {
                let rest = next
                    .decor()
                    .prefix()
                    .and_then(|p| p.as_str())
                    .unwrap_or("")
                    .to_owned();
                next.decor_mut().set_prefix(format!("{same_line}{rest}"));
            }
            None => {
                let rest = allow.trailing().as_str().unwrap_or("").to_owned();
                allow.set_trailing(format!("{same_line}{rest}"));
            }
        }
    }
    // An allow list left empty goes, as saving created it (it means the same either way).
    if allow.is_empty()
        && let Some(permissions) = doc.get_mut("permissions").and_then(Item::as_table_like_mut)
    {
        permissions.remove("allow");
    }
    write_whole(path, &doc.to_string())?;
    Ok(true)
}

/// True when the rule on `line` of `file` is a saved approval (the line above it is the mark).
pub fn is_saved_approval(file: &Path, line: usize) -> bool {
    line >= 2
        && std::fs::read_to_string(file).is_ok_and(|t| {
            t.lines()
                .nth(line - 2)
                .is_some_and(|l| l.trim() == SAVED_APPROVAL_MARK)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowest_rules() {
        let cmd = |c: &str| narrowest_rule("Bash", &PermissionSubject::ShellCommand(c.into()));
        assert_eq!(cmd("npm test").as_deref(), Ok("Bash(npm test)"));
        assert_eq!(cmd("echo 'a)b'").as_deref(), Ok("Bash(echo a\\)b)"));
        assert!(cmd("make && rm -rf x").is_err());
        assert!(cmd("ls *.rs").is_err());
        assert_eq!(
            narrowest_rule(
                "Write",
                &PermissionSubject::WritePaths(vec!["/w/p/a.txt".into()])
            )
            .as_deref(),
            Ok("Edit(//w/p/a.txt)")
        );
        assert!(
            narrowest_rule(
                "Edit",
                &PermissionSubject::WritePaths(vec!["/w/p/*.txt".into()])
            )
            .is_err()
        );
        assert_eq!(
            narrowest_rule(
                "WebFetch",
                &PermissionSubject::Url("https://u@Docs.RS:443/x?y".into())
            )
            .as_deref(),
            Ok("WebFetch(domain:docs.rs)")
        );
        assert_eq!(
            narrowest_rule("mcp__s__t", &PermissionSubject::Nothing).as_deref(),
            Ok("mcp__s__t")
        );
    }

    #[test]
    fn save_keeps_comments_and_layout_and_revoke_undoes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.local.toml");
        let original = "# my policy\n[permissions]\n# reads are fine\nallow = [\n  \"Read\", # all reads\n]\ndeny = [\"Bash(curl:*)\"] # never\n";
        std::fs::write(&path, original).unwrap();
        let line = save_approval(&path, "Bash(npm test)").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        for kept in [
            "# my policy",
            "# reads are fine",
            "\"Read\", # all reads",
            "deny = [\"Bash(curl:*)\"] # never",
        ] {
            assert!(text.contains(kept), "{kept} lost:\n{text}");
        }
        assert_eq!(
            text.lines().nth(line - 1).unwrap().trim(),
            "\"Bash(npm test)\","
        );
        assert!(is_saved_approval(&path, line));
        assert!(
            !is_saved_approval(&path, 5),
            "the user's own rule is not a saved one"
        );
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            parsed["permissions"]["allow"].as_array().unwrap().len(),
            2,
            "{text}"
        );
        assert_eq!(
            save_approval(&path, "Bash(npm test)").unwrap(),
            line,
            "not twice"
        );
        assert!(
            !revoke_approval(&path, "Read").unwrap(),
            "the user's rule stays"
        );
        assert!(revoke_approval(&path, "Bash(npm test)").unwrap());
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            !after.contains("npm test") && !after.contains(SAVED_APPROVAL_MARK),
            "{after}"
        );
        assert!(after.contains("\"Read\", # all reads"), "{after}");
        assert!(!revoke_approval(&path, "Bash(npm test)").unwrap());
    }

    #[test]
    fn save_creates_the_file_and_refuses_bad_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".toolgate/policy.local.toml");
        let line = save_approval(&path, "WebFetch(domain:docs.rs)").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .contains("WebFetch(domain:docs.rs)"),
            "{text}"
        );
        std::fs::write(&path, "permissions = 3\n").unwrap();
        let e = save_approval(&path, "Bash(ls)").unwrap_err().to_string();
        assert!(e.contains("`permissions` is not a table"), "{e}");
        std::fs::write(&path, "[permissions\n").unwrap();
        let e = save_approval(&path, "Bash(ls)").unwrap_err().to_string();
        assert!(e.contains("policy.local.toml:1:"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[permissions\n",
            "left as it was"
        );
    }
}
