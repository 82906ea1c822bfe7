//! The result-size policy: empty results get a marker, results over the threshold are written
//! to a per-session directory and replaced by a `<persisted-output>` preview.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::texts::{format_file_size, no_output};
use crate::wire::{ToolResultContent, utf16_len};

/// Claude Code's global cap on inlined results.
pub const DEFAULT_MAX_RESULT_SIZE_CHARS: usize = 50_000;
const PREVIEW_CHARS: usize = 2_000;

/// The threshold for a tool whose own limit is `max` (`None` = never persist).
pub fn persistence_threshold(max: Option<usize>) -> Option<usize> {
    max.map(|m| m.min(DEFAULT_MAX_RESULT_SIZE_CHARS))
}

/// Apply the policy to one result's content. Persistence failures leave the content inline:
/// losing the result would be worse than a large message.
pub fn apply_result_policy(
    content: ToolResultContent,
    tool_name: &str,
    max_result_size_chars: Option<usize>,
    results_dir: &Path,
    tool_use_id: &str,
) -> ToolResultContent {
    if content.is_empty() {
        return ToolResultContent::Text(no_output(tool_name));
    }
    if content.has_image() {
        return content;
    }
    let Some(threshold) = persistence_threshold(max_result_size_chars) else {
        return content;
    };
    let size = content.text_len();
    if size <= threshold {
        return content;
    }
    let (text, ext) = match &content {
        ToolResultContent::Text(s) => (s.clone(), "txt"),
        ToolResultContent::Blocks(b) => {
            (serde_json::to_string_pretty(b).unwrap_or_default(), "json")
        }
    };
    match persist(results_dir, tool_use_id, ext, &text) {
        Ok(path) => ToolResultContent::Text(persisted_preview(&text, size, &path)),
        Err(e) => {
            tracing::warn!(error = %e, "could not persist a large tool result; sending it inline");
            content
        }
    }
}

/// Would [`apply_result_policy`] write this content to disk? (Only then is it worth moving the
/// work off the async runtime.)
pub fn needs_persisting(content: &ToolResultContent, max_result_size_chars: Option<usize>) -> bool {
    !content.is_empty()
        && !content.has_image()
        && persistence_threshold(max_result_size_chars)
            .is_some_and(|threshold| content.text_len() > threshold)
}

/// The key of a tool's raw output (`tool_response`) that the result policy fills with the file
/// a persisted result went to, when the tool put it there (Bash does).
pub const PERSISTED_PATH_KEY: &str = "persistedOutputPath";

/// Where a persisted text result of call `id` goes.
pub fn persisted_path(dir: &Path, id: &str) -> PathBuf {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.txt"))
}

fn persist(dir: &Path, id: &str, ext: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = persisted_path(dir, id).with_extension(ext);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(mut f) => {
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(path)
}

fn persisted_preview(text: &str, size: usize, path: &Path) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    let (preview, truncated) = if units.len() <= PREVIEW_CHARS {
        (text.to_owned(), false)
    } else {
        let head = String::from_utf16_lossy(&units[..PREVIEW_CHARS]);
        let cut = match head.rfind('\n') {
            Some(i) if utf16_len(&head[..i]) > PREVIEW_CHARS / 2 => head[..i].to_owned(),
            _ => head,
        };
        (cut, true)
    };
    format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\nPreview (first 2KB):\n{}{}</persisted-output>",
        format_file_size(size as u64),
        path.display(),
        preview,
        if truncated { "\n...\n" } else { "\n" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ContentBlock;

    #[test]
    fn empty_results_get_the_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        for c in [
            ToolResultContent::Text(" \n".into()),
            ToolResultContent::Blocks(vec![ContentBlock::text("")]),
        ] {
            assert_eq!(
                apply_result_policy(c, "Bash", Some(30_000), &d, "t"),
                ToolResultContent::Text("(Bash completed with no output)".into())
            );
        }
    }

    #[test]
    fn large_results_are_persisted_with_preview() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(600);
        let out = apply_result_policy(
            ToolResultContent::Text(text.clone()),
            "Bash",
            Some(30_000),
            &d,
            "toolu_1",
        )
        .to_text();
        let file = d.join("toolu_1.txt");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        assert!(out.starts_with(&format!("<persisted-output>\nOutput too large (58.6KB). Full output saved to: {}\n\nPreview (first 2KB):\n", file.display())));
        assert!(out.ends_with("\n...\n</persisted-output>"));
        let preview = out.split("Preview (first 2KB):\n").nth(1).unwrap();
        assert_eq!(
            preview.trim_end_matches("\n...\n</persisted-output>").len(),
            1999,
            "cut at the last newline"
        );
    }

    #[test]
    fn unlimited_tools_and_images_are_never_persisted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        let big = ToolResultContent::Text("y".repeat(200_000));
        assert_eq!(apply_result_policy(big.clone(), "Read", None, &d, "t"), big);
        let img =
            ToolResultContent::Blocks(vec![ContentBlock::image("image/png", "z".repeat(200_000))]);
        assert_eq!(
            apply_result_policy(img.clone(), "Read", Some(10), &d, "t"),
            img
        );
    }
}
