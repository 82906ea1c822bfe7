//! Edit: replace a unique string in a file the model has read, keeping the file's encoding,
//! line endings and permissions, writing atomically.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{
    FileState, PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput, ValidationFailure,
};

use crate::text_file::{self, Encoding, LineEnding, LoadError, TextFile, missing_file_message};

/// Files larger than this are not edited.
pub const MAX_EDIT_FILE_BYTES: u64 = 1024 * 1024 * 1024;

pub(crate) const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
pub(crate) const MODIFIED_SINCE_READ: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
pub(crate) const UNEXPECTEDLY_MODIFIED: &str = "File content has changed since it was last read. This commonly happens when a linter or formatter run via Bash rewrites the file. Call Read on this file to refresh, then retry the edit.";
pub(crate) const DENIED: &str =
    "File is in a directory that is denied by your permission settings.";
const READ_DENIED_EDIT: &str =
    "File is covered by a Read deny rule in your permission settings and cannot be edited.";
pub(crate) const READ_DENIED_WRITE: &str =
    "File is covered by a Read deny rule in your permission settings and cannot be written.";
pub(crate) const STATE_CURRENT: &str =
    " (file state is current in your context — no need to Read it back)";
pub(crate) const CHANGED_ON_DISK: &str = " (note: the file had been modified on disk since you last read it — the edit applied cleanly, but the file contains other changes not in your context. Read it before edits that depend on surrounding content.)";

/// The input of Edit.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Absolute path of the file to change.
    pub file_path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence instead of exactly one (default false).
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// The Edit tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditTool;

impl EditTool {
    /// The tool's name.
    pub const NAME: &'static str = "Edit";
}

/// True when the file on disk differs from what the model last saw: a newer mtime and other
/// content. A newer mtime with the same content (a `touch`) does not count.
pub(crate) fn changed_since_seen(current: &TextFile, seen: &FileState) -> bool {
    current.mtime_ms > seen.timestamp_ms && current.text != seen.content
}

/// Appended to "String to replace not found" when the old string has non-ASCII characters or
/// `\uXXXX` escapes, whose other form Claude Code 2.1.332 also tries (recorded: explore seed
/// 1, index 22).
const ESCAPE_SWAP_NOTE: &str = "\n(note: Edit also tried swapping \\uXXXX escapes and their characters; neither form matched, so the mismatch is likely elsewhere in old_string. Re-read the file and copy the exact surrounding text.)";

/// Does `s` hold a character with a `\uXXXX` form, or such an escape?
fn has_escape_forms(s: &str) -> bool {
    if !s.is_ascii() {
        return true;
    }
    let b = s.as_bytes();
    b.windows(6)
        .any(|w| w[0] == b'\\' && w[1] == b'u' && w[2..].iter().all(u8::is_ascii_hexdigit))
}

/// The span of `file` that `search` stands for: the exact text, else the text with curly
/// quotes read as straight ones (Claude Code's `findActualString`).
pub(crate) fn find_actual(file: &str, search: &str) -> Option<String> {
    if file.contains(search) {
        return Some(search.to_owned());
    }
    let norm = |s: &str| s.chars().map(straighten).collect::<String>();
    let (nfile, nsearch) = (norm(file), norm(search));
    let byte = nfile.find(&nsearch)?;
    let start_char = nfile[..byte].chars().count();
    let len_chars = nsearch.chars().count();
    Some(file.chars().skip(start_char).take(len_chars).collect())
}

fn straighten(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201C}' | '\u{201D}' => '"',
        other => other,
    }
}

/// When the match needed quote normalisation, give `new` the file's curly quotes.
fn restyle_quotes(actual: &str, new: &str) -> String {
    let doubles = actual.contains(['\u{201C}', '\u{201D}']);
    let singles = actual.contains(['\u{2018}', '\u{2019}']);
    let chars: Vec<char> = new.chars().collect();
    let opening = |i: usize| {
        i == 0 || chars[i - 1].is_whitespace() || "([{\u{2014}\u{2013}".contains(chars[i - 1])
    };
    chars
        .iter()
        .enumerate()
        .map(|(i, &c)| match c {
            '"' if doubles => {
                if opening(i) {
                    '\u{201C}'
                } else {
                    '\u{201D}'
                }
            }
            '\'' if singles => {
                let between_letters = i > 0
                    && chars[i - 1].is_alphabetic()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
                if between_letters {
                    '\u{2019}'
                } else if opening(i) {
                    '\u{2018}'
                } else {
                    '\u{2019}'
                }
            }
            other => other,
        })
        .collect()
}

/// Apply an edit to `file`. `None` when `old` is not in it.
pub(crate) fn apply_edit(file: &str, old: &str, new: &str, replace_all: bool) -> Option<String> {
    if old.is_empty() {
        return Some(new.to_owned());
    }
    let actual = find_actual(file, old)?;
    let new = if actual == old {
        new.to_owned()
    } else {
        restyle_quotes(&actual, new)
    };
    let target =
        if new.is_empty() && !actual.ends_with('\n') && file.contains(&format!("{actual}\n")) {
            format!("{actual}\n")
        } else {
            actual
        };
    Some(if replace_all {
        file.replace(&target, &new)
    } else {
        file.replacen(&target, &new, 1)
    })
}

fn count(file: &str, actual: &str) -> usize {
    if actual.is_empty() {
        0
    } else {
        file.matches(actual).count()
    }
}

enum Plan {
    Create,
    Update {
        current: TextFile,
        changed: bool,
        full_view: bool,
    },
}

/// Every check Edit makes before writing, in Claude Code's order.
/// Edit's checks, in Claude Code's order. `at_call` is false for the validation before the
/// permission check and true for the check right before writing.
fn check(input: &EditInput, ctx: &ToolContext, at_call: bool) -> Result<Plan, ValidationFailure> {
    if input.old_string == input.new_string {
        return Err(ValidationFailure::new(
            1,
            "No changes to make: old_string and new_string are exactly the same.",
        ));
    }
    let path = ctx.resolve_path(&input.file_path);
    if ctx.path_policy.edit_denied(&path, ctx) {
        return Err(ValidationFailure::new(2, DENIED));
    }
    if ctx.path_policy.write_read_denied(&path, ctx) {
        return Err(ValidationFailure::new(2, READ_DENIED_EDIT));
    }
    // A device, FIFO or socket is never opened: reading one could block or never end (Claude
    // Code 2.1.332's refusal, recorded: explore seed 11's triage).
    if text_file::is_special(&path) {
        return Err(ValidationFailure::new(
            13,
            format!(
                "{} exists but is not a regular file (a device, FIFO or socket). Edit only changes regular files.",
                input.file_path
            ),
        ));
    }
    if let Ok(meta) = std::fs::metadata(&path)
        && meta.len() > MAX_EDIT_FILE_BYTES
    {
        return Err(ValidationFailure::new(
            10,
            format!(
                "File is too large to edit ({}). Maximum editable file size is 1GB.",
                tool_core::texts::format_file_size(meta.len())
            ),
        ));
    }
    let current = match text_file::load(&path) {
        Ok(f) => f,
        Err(LoadError::Missing) if input.old_string.is_empty() => return Ok(Plan::Create),
        Err(LoadError::Missing) => {
            return Err(ValidationFailure::new(
                4,
                missing_file_message(&path, &ctx.cwd),
            ));
        }
        // Claude Code reads the path and reports Node's error, as a failed call.
        Err(LoadError::Directory) => {
            return Err(ValidationFailure::new(
                12,
                "Error calling tool (Edit): EISDIR: illegal operation on a directory, read",
            ));
        }
        // Not UTF-8: Claude Code reads it anyway (bad bytes as U+FFFD), so its checks of an
        // existing file and of the read state come first, in its order (recorded).
        Err(LoadError::NotText) => {
            let lossy = std::fs::read(&path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if input.old_string.is_empty() && !lossy.trim().is_empty() {
                return Err(ValidationFailure::new(
                    3,
                    "Cannot create new file - file already exists.",
                ));
            }
            if ctx.file_state.get(&path).is_none() {
                return Err(ValidationFailure::new(6, NOT_READ));
            }
            return Err(ValidationFailure::new(
                11,
                crate::write::not_text_refusal(&path),
            ));
        }
        // Node's error, as a failed call (recorded: sf_write_parent_is_file, sf_read_symlink_loop).
        Err(LoadError::Io(e)) => {
            return Err(ValidationFailure::new(
                12,
                format!(
                    "Error calling tool (Edit): {}",
                    text_file::node_error(&e, "stat", &path)
                ),
            ));
        }
    };
    if input.old_string.is_empty() && !current.text.trim().is_empty() {
        return Err(ValidationFailure::new(
            3,
            "Cannot create new file - file already exists.",
        ));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
    {
        return Err(ValidationFailure::new(
            5,
            "File is a Jupyter Notebook. Use the NotebookEdit to edit this file.",
        ));
    }
    let not_found = || {
        ValidationFailure::new(
            8,
            format!(
                "String to replace not found in file.\nString: {}{}",
                input.old_string,
                if has_escape_forms(&input.old_string) {
                    ESCAPE_SWAP_NOTE
                } else {
                    ""
                }
            ),
        )
    };
    let Some(seen) = ctx.file_state.get(&path) else {
        // Filling a blank file the model never read passes validation and is refused only
        // when it runs, as a failed call (recorded: explore seeds 11 to 13).
        if input.old_string.is_empty() && !at_call {
            return Ok(Plan::Update {
                current,
                changed: false,
                full_view: false,
            });
        }
        return Err(ValidationFailure::new(6, NOT_READ));
    };
    let changed = changed_since_seen(&current, &seen);
    // The model's view is current only if the file still holds what it saw (a file replaced
    // by an older one is not flagged as changed, and not current either; recorded:
    // br_mod_mv_older_source).
    let unchanged_text = current.text == seen.content;
    if input.old_string.is_empty() {
        return Ok(Plan::Update {
            current,
            changed,
            full_view: seen.full_view && !changed && unchanged_text,
        });
    }
    let actual = find_actual(&current.text, &input.old_string);
    let matches = actual.as_deref().map_or(0, |a| count(&current.text, a));
    // A file changed since it was read may still be edited where the edit is unambiguous: one
    // match, or every match with replace_all (recorded: explore seed 4).
    let replace_all = input.replace_all.unwrap_or(false);
    if changed && (matches == 0 || (matches > 1 && !replace_all)) {
        return Err(ValidationFailure::new(7, MODIFIED_SINCE_READ));
    }
    if matches == 0 {
        return Err(not_found());
    }
    if matches > 1 && !input.replace_all.unwrap_or(false) {
        return Err(ValidationFailure::new(
            9,
            format!(
                "Found {matches} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {}",
                input.old_string
            ),
        ));
    }
    Ok(Plan::Update {
        current,
        changed,
        full_view: seen.full_view && !changed && unchanged_text,
    })
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Replaces text in a file: old_string must match the file exactly (indentation included) and, unless \
         replace_all is true, exactly once. Read the file first. An empty old_string creates a new file with \
         new_string as its content."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<EditInput>()
    }

    fn normalize_input(&self, input: Value) -> Value {
        let mut input = text_file::normalize_text_field(input, "new_string");
        // The schema's default, filled in as Claude Code's parser does (hooks see it).
        if let Value::Object(o) = &mut input
            && !o.contains_key("replace_all")
        {
            o.insert("replace_all".into(), Value::Bool(false));
        }
        input
    }

    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(), ValidationFailure> {
        let input: EditInput = serde_json::from_value(input.clone())
            .map_err(|e| ValidationFailure::new(99, format!("Invalid input: {e}")))?;
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || check(&input, &ctx, false).map(|_| ()))
            .await
            .unwrap_or_else(|e| {
                Err(ValidationFailure::new(
                    98,
                    format!("Edit validation failed: {e}"),
                ))
            })
    }

    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Edit", input, ctx).0
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: EditInput = tool_core::parse_input(input)?;
        let ctx = ctx.clone();
        text_file::run_blocking("Edit", move || edit(&input, &ctx)).await
    }
}

fn edit(input: &EditInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let path = ctx.resolve_path(&input.file_path);
    // A symbolic link is never written through (Claude Code 2.1.332 refuses it, recorded).
    if let Some(refusal) = text_file::symlink_refusal(&path) {
        return Err(refusal);
    }
    if let Some(refusal) = text_file::dangling_parent_refusal(&path) {
        return Err(refusal);
    }
    // Re-check right before writing: the file may have changed since validation.
    let plan = check(input, ctx, true).map_err(|f| match f.code {
        7 | 4 => ToolCallError::new(UNEXPECTEDLY_MODIFIED),
        _ => ToolCallError::new(f.message),
    })?;
    let replace_all = input.replace_all.unwrap_or(false);
    let (original, updated, encoding, line_ending, changed, full_view, expected_mtime) = match plan
    {
        Plan::Create => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    ToolCallError::new(format!("Cannot create {}: {e}", dir.display()))
                })?;
            }
            (
                String::new(),
                input.new_string.clone(),
                Encoding::Utf8 { bom: false },
                LineEnding::Lf,
                false,
                true,
                None,
            )
        }
        Plan::Update {
            current,
            changed,
            full_view,
        } => {
            let updated = apply_edit(
                &current.text,
                &input.old_string,
                &input.new_string,
                replace_all,
            )
            .ok_or_else(|| ToolCallError::new(UNEXPECTEDLY_MODIFIED))?;
            (
                current.text,
                updated,
                current.encoding,
                current.line_ending,
                changed,
                full_view,
                Some((current.mtime_ms, current.len)),
            )
        }
    };
    if updated == original && expected_mtime.is_some() {
        return Err(ToolCallError::new(
            "Original and edited file match exactly. Failed to apply edit.",
        ));
    }
    let bytes = text_file::encode(&updated, encoding, line_ending);
    text_file::commit(
        ctx,
        &path,
        &bytes,
        expected_mtime,
        updated.clone(),
        full_view,
    )?;
    let mut text = if replace_all {
        format!(
            "The file {} has been updated. All occurrences were successfully replaced.",
            input.file_path
        )
    } else {
        format!(
            "The file {} has been updated successfully.",
            input.file_path
        )
    };
    if changed {
        text.push_str(CHANGED_ON_DISK);
    } else if full_view {
        text.push_str(STATE_CURRENT);
    }
    let mut raw = json!({
        "filePath": input.file_path,
        "oldString": input.old_string,
        "newString": input.new_string,
        "originalFile": original,
        "structuredPatch": structured_patch(&original, &updated),
        "userModified": false,
        "replaceAll": replace_all,
    });
    if changed {
        // The hooks learn the edit was applied to a file the model had not seen whole
        // (recorded: hp_stale_pre_touch).
        raw["staleRecovered"] = json!(true);
        raw["contentNotInModelContext"] = json!(true);
    }
    Ok(ToolOutput::new(raw, text))
}

/// Unified-diff hunks with three lines of context, in jsdiff's `structuredPatch` shape, as
/// hooks and hosts see them.
pub(crate) fn structured_patch(old: &str, new: &str) -> Value {
    let diff = similar::TextDiff::from_lines(old, new);
    let hunks: Vec<Value> = diff
        .unified_diff()
        .context_radius(3)
        .iter_hunks()
        .map(|h| {
            let ops = h.ops();
            let (first, last) = (ops.first(), ops.last());
            let old_start = first.map_or(0, |o| o.old_range().start);
            let new_start = first.map_or(0, |o| o.new_range().start);
            let old_end = last.map_or(0, |o| o.old_range().end);
            let new_end = last.map_or(0, |o| o.new_range().end);
            let lines: Vec<String> = h
                .iter_changes()
                .map(|c| {
                    let sign = match c.tag() {
                        similar::ChangeTag::Equal => ' ',
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                    };
                    format!("{sign}{}", c.value().trim_end_matches('\n'))
                })
                .collect();
            json!({"oldStart": old_start + 1, "oldLines": old_end - old_start,
                   "newStart": new_start + 1, "newLines": new_end - new_start, "lines": lines})
        })
        .collect();
    Value::Array(hunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_straight_quotes_in_curly_text_and_restyles() {
        let file = "She said \u{201C}hello\u{201D} and it\u{2019}s fine.";
        assert_eq!(
            find_actual(file, "said \"hello\"").as_deref(),
            Some("said \u{201C}hello\u{201D}")
        );
        assert_eq!(
            apply_edit(file, "said \"hello\"", "said \"bye\"", false).unwrap(),
            "She said \u{201C}bye\u{201D} and it\u{2019}s fine."
        );
        assert_eq!(
            restyle_quotes("\u{2018}x\u{2019}", "'it's'"),
            "\u{2018}it\u{2019}s\u{2019}"
        );
    }

    #[test]
    fn deleting_a_line_takes_its_newline() {
        assert_eq!(
            apply_edit("a\ndrop\nb\n", "drop", "", false).unwrap(),
            "a\nb\n"
        );
        assert_eq!(apply_edit("x x x", "x", "y", true).unwrap(), "y y y");
        assert_eq!(apply_edit("x x x", "x", "y", false).unwrap(), "y x x");
        assert_eq!(apply_edit("abc", "$", "d", false), None);
        assert_eq!(
            apply_edit("a$b", "$", "$$", false).unwrap(),
            "a$$b",
            "replacement is literal"
        );
    }

    #[test]
    fn patch_has_context_and_signs() {
        let p = structured_patch("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(p[0]["lines"], json!([" a", "-b", "+B", " c"]));
        assert_eq!(p[0]["oldStart"], 1);
    }
}
