//! Write: create a file or replace one the model has read, atomically, keeping an existing
//! file's encoding and permissions.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{
    PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput, ValidationFailure,
};

use crate::edit::{
    DENIED, MODIFIED_SINCE_READ, NOT_READ, READ_DENIED_WRITE, STATE_CURRENT, UNEXPECTEDLY_MODIFIED,
    changed_since_seen, structured_patch,
};
use crate::text_file::{self, Encoding, LineEnding, LoadError};

/// The input of Write.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Absolute path of the file to write.
    pub file_path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// The Write tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteTool;

impl WriteTool {
    /// The tool's name.
    pub const NAME: &'static str = "Write";
}

fn check(input: &WriteInput, ctx: &ToolContext) -> Result<(), ValidationFailure> {
    let path = ctx.resolve_path(&input.file_path);
    if ctx.path_policy.edit_denied(&path, ctx) {
        return Err(ValidationFailure::new(1, DENIED));
    }
    if ctx.path_policy.write_read_denied(&path, ctx) {
        return Err(ValidationFailure::new(1, READ_DENIED_WRITE));
    }
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        // Node's error, as a failed call (recorded: sf_write_parent_is_file, sf_read_symlink_loop).
        Err(e) => {
            return Err(ValidationFailure::new(
                4,
                format!(
                    "Error calling tool (Write): {}",
                    text_file::node_error(&e, "stat", &path)
                ),
            ));
        }
    };
    if meta.is_dir() {
        // The path as the model wrote it (recorded: `sub//` stays `sub//`).
        return Err(ValidationFailure::new(
            5,
            format!(
                "{} is a directory, not a file. To create a file inside it, include the file name in file_path.",
                input.file_path
            ),
        ));
    }
    // A device, FIFO or socket is never opened (Claude Code 2.1.332's refusal, recorded:
    // explore seed 11's triage).
    if !meta.is_file() {
        return Err(ValidationFailure::new(
            6,
            format!(
                "{} exists but is not a regular file (a device, FIFO or socket). Write only creates or overwrites regular files.",
                input.file_path
            ),
        ));
    }
    let Some(seen) = ctx.file_state.get(&path) else {
        return Err(ValidationFailure::new(2, NOT_READ));
    };
    // A newer mtime alone is not a change: a file rewritten with the content the model saw in
    // full passes, as in Claude Code 2.1.332 (recorded: explore seed 1, index 39).
    if text_file::mtime_ms(&meta) > seen.timestamp_ms {
        let unchanged = seen.full_view
            && text_file::load(&path).is_ok_and(|current| current.text == seen.content);
        if !unchanged {
            return Err(ValidationFailure::new(3, MODIFIED_SINCE_READ));
        }
    }
    Ok(())
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Writes a file, creating it (and its directories) or replacing it. Replacing an existing file needs a \
         Read of it first. Prefer Edit for changes to part of a file."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<WriteInput>()
    }

    fn normalize_input(&self, input: Value) -> Value {
        text_file::normalize_text_field(input, "content")
    }

    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(), ValidationFailure> {
        let input: WriteInput = serde_json::from_value(input.clone())
            .map_err(|e| ValidationFailure::new(99, format!("Invalid input: {e}")))?;
        check(&input, ctx)
    }

    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Write", input, ctx).0
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: WriteInput = tool_core::parse_input(input)?;
        let ctx = ctx.clone();
        text_file::run_blocking("Write", move || write(&input, &ctx)).await
    }
}

/// Why Write (and Edit) do not change a file that is not UTF-8 text (Claude Code's text).
pub(crate) const NOT_UTF8_WRITE: &str = "File is not valid UTF-8: it uses a legacy encoding such as Windows-1252, Shift-JIS or GBK, or it is binary. These tools write UTF-8 (or UTF-16LE behind its byte-order mark) and never convert a file's encoding on their own, so nothing was written. If the file is text, make the change with a shell command that reads and writes it in its own encoding (iconv, or PowerShell Get-Content/Set-Content -Encoding), or ask the user whether to convert it to UTF-8 first. To replace the whole file with new UTF-8 text anyway, delete it first, then Write it.";

/// Why Write (and Edit) do not change `path`, a file that is not UTF-8 text: its UTF-16
/// big-endian variant when it starts with FE FF (Claude Code's texts, recorded).
pub(crate) fn not_text_refusal(path: &std::path::Path) -> String {
    let be = std::fs::File::open(path)
        .and_then(|mut f| {
            let mut head = [0u8; 2];
            std::io::Read::read_exact(&mut f, &mut head).map(|()| head)
        })
        .is_ok_and(|h| h == [0xFE, 0xFF]);
    let first = "File is not valid UTF-8: it uses a legacy encoding such as Windows-1252, Shift-JIS or GBK, or it is binary.";
    if be {
        NOT_UTF8_WRITE.replacen(
            first,
            "File is UTF-16 big-endian (it starts FE FF), which these tools cannot write.",
            1,
        )
    } else if crate::text_file::nul_in_head(path) {
        NOT_UTF8_WRITE.replacen(
            first,
            "File has NUL bytes in its first 8 KB: binary data, UTF-16/UTF-32 without a byte-order mark, or text with embedded NULs.",
            1,
        )
    } else {
        NOT_UTF8_WRITE.to_owned()
    }
}

fn write(input: &WriteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let path = ctx.resolve_path(&input.file_path);
    // A symbolic link is never written through (Claude Code 2.1.332 refuses it the same way;
    // recorded: explore seed 2, index 337, and seed 3's triage).
    if let Some(refusal) = crate::text_file::symlink_refusal(&path) {
        return Err(refusal);
    }
    if let Some(refusal) = crate::text_file::dangling_parent_refusal(&path) {
        return Err(refusal);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolCallError::new(format!("Cannot create {}: {e}", dir.display())))?;
    }
    let (original, encoding, expected) = match text_file::load(&path) {
        Ok(current) => {
            // Re-check right before writing, with the content fallback: a touch is not a change.
            let seen = ctx
                .file_state
                .get(&path)
                .ok_or_else(|| ToolCallError::new(NOT_READ))?;
            if changed_since_seen(&current, &seen) {
                return Err(ToolCallError::new(UNEXPECTEDLY_MODIFIED));
            }
            (
                Some(current.text),
                current.encoding,
                Some((current.mtime_ms, current.len)),
            )
        }
        Err(LoadError::Missing) => (None, Encoding::Utf8 { bom: false }, None),
        // Not UTF-8 (nor UTF-16LE behind its BOM): refused, nothing written (Claude Code
        // 2.1.332's text, recorded: explore seed 2, index 430's group).
        Err(LoadError::NotText) => return Err(ToolCallError::new(not_text_refusal(&path))),
        Err(LoadError::Directory) => {
            return Err(ToolCallError::new(format!(
                "Cannot write {}: it is a directory.",
                path.display()
            )));
        }
        Err(LoadError::Io(e)) => {
            return Err(ToolCallError::new(format!(
                "Cannot read {}: {e}",
                path.display()
            )));
        }
    };
    // Empty content is an empty file, without the byte-order mark of the encoding kept
    // (recorded: a UTF-16LE file written with "" is left empty).
    let bytes = if input.content.is_empty() {
        Vec::new()
    } else {
        text_file::encode(&input.content, encoding, LineEnding::Lf)
    };
    text_file::commit(
        ctx,
        &path,
        &bytes,
        expected,
        input.content.replace("\r\n", "\n"),
        true,
    )?;
    let created = original.as_deref().is_none_or(str::is_empty);
    let text = if created {
        format!(
            "File created successfully at: {}{STATE_CURRENT}",
            input.file_path
        )
    } else {
        format!(
            "The file {} has been updated successfully.{STATE_CURRENT}",
            input.file_path
        )
    };
    let original = original.unwrap_or_default();
    let raw = json!({
        "type": if created { "create" } else { "update" },
        "filePath": input.file_path,
        "content": input.content,
        "structuredPatch": if created { json!([]) } else { structured_patch(&original, &input.content) },
        "originalFile": if created { Value::Null } else { Value::String(original) },
        "userModified": false,
    });
    Ok(ToolOutput::new(raw, text))
}
