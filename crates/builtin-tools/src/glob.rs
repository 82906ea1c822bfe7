//! Glob: file paths matching a glob pattern, as Claude Code lists them (ripgrep's `--files`
//! with `--glob`, hidden files included, ignore files not respected, oldest first).

use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput};

use crate::search::{Found, WalkSpec, display_relative, shown_path, walk_files};
use crate::text_file;

/// At most this many paths are listed.
pub const MAX_GLOB_RESULTS: usize = 100;

/// The input of Glob.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The glob to match, e.g. `**/*.rs` or `src/**/*.ts`.
    pub pattern: String,
    /// The directory to search (default: the working directory). Leave it out rather than
    /// passing "undefined" or "null".
    #[serde(default)]
    pub path: Option<String>,
}

/// The Glob tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct GlobTool;

impl GlobTool {
    /// The tool's name.
    pub const NAME: &'static str = "Glob";
}

#[async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Finds files by name with a glob pattern such as `**/*.rs` or `src/**/*.{ts,tsx}`, searching \
         hidden and git-ignored files too. Returns paths sorted by modification time, oldest first, \
         at most 100."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<GlobInput>()
    }

    /// The directory searched, and the pattern read as a path under it (`secrets/*.pem` →
    /// `<dir>/secrets/*.pem`, an absolute pattern as it is): a pattern that names files in a
    /// denied tree, or outside the working directories, is decided as a read of them.
    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Glob", input, ctx).0
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        Some(100_000)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: GlobInput = tool_core::parse_input(input)?;
        let ctx = ctx.clone();
        text_file::run_blocking("Glob", move || glob(&input, &ctx)).await
    }
}

/// Split an absolute pattern into the directory before its first glob character and the rest.
fn split_absolute(pattern: &str) -> Option<(PathBuf, String)> {
    let p = Path::new(pattern);
    if !p.is_absolute() {
        return None;
    }
    let mut base = PathBuf::new();
    let mut rest = Vec::new();
    for comp in p.components() {
        let s = comp.as_os_str().to_string_lossy();
        if rest.is_empty() && !s.contains(['*', '?', '[', '{']) {
            base.push(comp);
        } else if !matches!(comp, Component::RootDir) {
            rest.push(s.into_owned());
        }
    }
    Some((base, rest.join("/")))
}

fn glob(input: &GlobInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let started = std::time::Instant::now();
    // The pattern as the model wrote it is the one ripgrep names in its error.
    if let Some(e) = crate::search::nested_alternates(&input.pattern) {
        return Err(crate::search::rg_rejected(&e));
    }
    let mut root = input
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve_path(p));
    let mut pattern = input.pattern.clone();
    let mut named = input.path.is_some();
    if let Some((base, rest)) = split_absolute(&input.pattern) {
        root = base;
        pattern = rest;
        named = true;
    }
    match std::fs::metadata(&root) {
        // The session's own directory gone (deleted by a command): nothing is found there, as
        // in Claude Code (recorded: cwd_deleted_then_glob); only Bash refuses to run there.
        Err(_) if !named => {}
        Err(_) => {
            return Err(ToolCallError::new(format!(
                "Directory does not exist: {}. Note: your current working directory is {}.",
                // The path as the model wrote it (recorded: a relative `sub` stays `sub`).
                shown_path(input.path.as_deref(), &root),
                ctx.cwd.display()
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(ToolCallError::new(format!(
                "Path is not a directory: {}",
                root.display()
            )));
        }
        Ok(_) => {}
    }
    let hidden_off = ctx.env_var("CLAUDE_CODE_GLOB_HIDDEN") == Some("false");
    let respect_ignores = ctx.env_var("CLAUDE_CODE_GLOB_NO_IGNORE") == Some("false");
    // A relative pattern with a directory part matches at any depth below the root, as if it
    // began with `**/` (recorded: `sub/*` and `deep/*` searched from `sub` both find files).
    let pattern =
        if pattern.contains('/') && !pattern.starts_with("**/") && !pattern.starts_with('/') {
            format!("**/{pattern}")
        } else {
            pattern
        };
    let mut globs = vec![pattern];
    if hidden_off {
        globs.push("!.*".to_owned());
    }
    let spec = WalkSpec {
        root: &root,
        globs,
        types: crate::search::file_types(None)?,
        respect_ignores,
        ctx,
    };
    let mut found = walk_files(&spec, || {
        |path: &Path, mtime: &dyn Fn() -> Option<std::time::SystemTime>| {
            Some(Found {
                path: path.to_path_buf(),
                mtime: mtime(),
            })
        }
    })?;
    // Oldest first. Claude Code keeps files of equal mtime in the order its walk met them,
    // which is the file system's directory listing order and so differs from machine to
    // machine; ties here are by path, the same everywhere.
    found.sort_by(|a, b| a.mtime.cmp(&b.mtime).then_with(|| a.path.cmp(&b.path)));
    let total = found.len();
    let shown: Vec<String> = found
        .iter()
        .take(MAX_GLOB_RESULTS)
        .map(|f| display_relative(&f.path, &ctx.cwd))
        .collect();
    let text = if total == 0 {
        "No files found".to_owned()
    } else if total > MAX_GLOB_RESULTS {
        format!(
            "{}\n(Showing {MAX_GLOB_RESULTS} of {total} matching files; {} more are not listed. Narrow the pattern or path to see the rest.)",
            shown.join("\n"),
            total - MAX_GLOB_RESULTS
        )
    } else {
        shown.join("\n")
    };
    // `numFiles` counts what is listed, `totalMatches` everything found (recorded: hp_glob).
    let data = json!({"filenames": shown, "durationMs": started.elapsed().as_millis() as u64,
                      "numFiles": shown.len(), "truncated": total > MAX_GLOB_RESULTS,
                      "totalMatches": total, "countIsComplete": true});
    Ok(ToolOutput::new(data, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_patterns_split_at_the_first_glob() {
        assert_eq!(
            split_absolute("/a/b/*.rs"),
            Some((PathBuf::from("/a/b"), "*.rs".to_owned()))
        );
        assert_eq!(
            split_absolute("/a/**/c/*.rs"),
            Some((PathBuf::from("/a"), "**/c/*.rs".to_owned()))
        );
        assert_eq!(split_absolute("src/*.rs"), None);
    }
}
