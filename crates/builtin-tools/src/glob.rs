//! Glob: file paths matching a glob pattern, as Claude Code lists them (ripgrep's `--files`
//! with `--glob`, hidden files included, ignore files not respected, oldest first).

use std::path::{Component, Path};

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

/// Claude Code's rewrite of a relative pattern that repeats the end of the directory searched
/// (`sub/*` searched from `…/sub`): the leading literal folders that equal the directory's last
/// components are dropped and the rest anchored at the directory (`/*`), unless the directory
/// really holds a folder of that name, which the pattern then means (recorded: explore seed
/// 11's triage).
fn strip_repeated_prefix(pattern: &str, root: &Path) -> Option<String> {
    let segs: Vec<&str> = pattern.split('/').collect();
    let literal = |s: &&&str| !s.is_empty() && !s.contains(['*', '?', '[', ']', '{', '}', '!']);
    let g = segs[..segs.len().saturating_sub(1)]
        .iter()
        .take_while(literal)
        .count();
    let tail: Vec<String> = root
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for y in (1..=g).rev() {
        if y > tail.len() || segs[..y] != tail[tail.len() - y..] {
            continue;
        }
        let inside = segs[..y].iter().fold(root.to_path_buf(), |p, s| p.join(s));
        let real_dir = std::fs::symlink_metadata(&inside).is_ok_and(|m| m.is_dir());
        return (!real_dir).then(|| format!("/{}", segs[y..].join("/")));
    }
    None
}

fn glob(input: &GlobInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let started = std::time::Instant::now();
    let none_found = || {
        let data = json!({"filenames": [], "durationMs": started.elapsed().as_millis() as u64,
                          "numFiles": 0, "truncated": false, "totalMatches": 0, "countIsComplete": true});
        Ok(ToolOutput::new(data, "No files found"))
    };
    let (root, pattern) = match tool_permissions::split_absolute_glob(&input.pattern) {
        // An absolute pattern names its own directory; `path` is not used and nothing is
        // checked: a directory that is not there has no files, and a file is itself
        // (recorded: explore seed 11's triage).
        Some((base, rest)) => match std::fs::metadata(&base) {
            Err(_) => return none_found(),
            Ok(m) if !m.is_dir() => {
                let data = json!({"filenames": [display_relative(&base, &ctx.cwd)], "durationMs": started.elapsed().as_millis() as u64,
                                  "numFiles": 1, "truncated": false, "totalMatches": 1, "countIsComplete": true});
                return Ok(ToolOutput::new(data, display_relative(&base, &ctx.cwd)));
            }
            Ok(_) => (base, rest),
        },
        None => {
            let root = input
                .path
                .as_deref()
                .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve_path(p));
            // A `path` given is checked before the pattern, and named as written (recorded:
            // `sub` stays `sub`, `./one.txt` stays `./one.txt`).
            if let Some(given) = input.path.as_deref() {
                match std::fs::metadata(&root) {
                    Err(_) => {
                        return Err(ToolCallError::new(format!(
                            "Directory does not exist: {}. Note: your current working directory is {}.",
                            shown_path(Some(given), &root),
                            ctx.cwd.display()
                        )));
                    }
                    Ok(m) if !m.is_dir() => {
                        return Err(ToolCallError::new(format!(
                            "Path is not a directory: {given}"
                        )));
                    }
                    Ok(_) => {}
                }
            }
            // The session's own directory gone (deleted by a command): nothing is found there,
            // as in Claude Code (recorded: cwd_deleted_then_glob).
            if std::fs::metadata(&root).is_err() {
                return none_found();
            }
            let pattern = strip_repeated_prefix(&input.pattern, &root)
                .unwrap_or_else(|| input.pattern.clone());
            (root, pattern)
        }
    };
    let hidden_off = ctx.env_var("CLAUDE_CODE_GLOB_HIDDEN") == Some("false");
    let respect_ignores = ctx.env_var("CLAUDE_CODE_GLOB_NO_IGNORE") == Some("false");
    // ripgrep runs in the directory searched: a pattern without `/` matches names at any
    // depth, one with `/` is anchored there, and case counts.
    let mut globs = vec![pattern];
    if hidden_off {
        globs.push("!.*".to_owned());
    }
    let spec = WalkSpec {
        root: &root,
        glob_base: Some(&root),
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
    use std::path::PathBuf;

    #[test]
    fn absolute_patterns_split_at_the_first_glob() {
        assert_eq!(
            tool_permissions::split_absolute_glob("/a/b/*.rs"),
            Some((PathBuf::from("/a/b"), "*.rs".to_owned()))
        );
        assert_eq!(
            tool_permissions::split_absolute_glob("/a/**/c/*.rs"),
            Some((PathBuf::from("/a"), "**/c/*.rs".to_owned()))
        );
        assert_eq!(tool_permissions::split_absolute_glob("src/*.rs"), None);
    }
}
