//! Grep: ripgrep's search in-process, with the arguments Claude Code passes to `rg` and the
//! texts it builds from `rg`'s output.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput};

use crate::search::{VCS_DIRS, WalkSpec, display_relative, rg_rejected, walk_files};
use crate::text_file;

/// Default `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Lines longer than this many bytes are not printed (ripgrep's `--max-columns 500`).
pub const MAX_COLUMNS: usize = 500;

/// What Grep reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines.
    Content,
    /// Paths of matching files (the default).
    #[default]
    FilesWithMatches,
    /// Matching-line counts per file.
    Count,
}

/// The input of Grep.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression to search for (Rust regex syntax, as ripgrep).
    pub pattern: String,
    /// File or directory to search (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Glob(s) limiting the files searched, e.g. `*.rs` or `*.{ts,tsx}`.
    #[serde(default)]
    pub glob: Option<String>,
    /// What to report (default files_with_matches).
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Lines of context before each match (content mode).
    #[serde(rename = "-B", default)]
    pub before: Option<f64>,
    /// Lines of context after each match (content mode).
    #[serde(rename = "-A", default)]
    pub after: Option<f64>,
    /// Lines of context around each match (content mode).
    #[serde(rename = "-C", default)]
    pub around: Option<f64>,
    /// Same as -C.
    #[serde(default)]
    pub context: Option<f64>,
    /// Show line numbers (content mode; default true).
    #[serde(rename = "-n", default)]
    pub line_numbers: Option<bool>,
    /// Ignore case.
    #[serde(rename = "-i", default)]
    pub ignore_case: Option<bool>,
    /// A ripgrep file type (rust, py, js, ...).
    #[serde(rename = "type", default)]
    pub file_type: Option<String>,
    /// Show at most this many entries (default 250; 0 for all).
    #[serde(default)]
    pub head_limit: Option<f64>,
    /// Skip this many entries first.
    #[serde(default)]
    pub offset: Option<f64>,
    /// Let `.` match newlines and patterns span lines.
    #[serde(default)]
    pub multiline: Option<bool>,
}

/// The Grep tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct GrepTool;

impl GrepTool {
    /// The tool's name.
    pub const NAME: &'static str = "Grep";
}

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Searches file contents with a regular expression (ripgrep syntax), respecting .gitignore. \
         output_mode files_with_matches (default) lists matching files, newest first; content shows \
         matching lines (with -A/-B/-C context and line numbers); count shows per-file counts. Narrow \
         with glob or type; page with head_limit and offset."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<GrepInput>()
    }

    async fn validate_input(
        &self,
        input: &Value,
        _ctx: &ToolContext,
    ) -> Result<(), tool_core::ValidationFailure> {
        // Claude Code's own check of the two paging numbers (its schema takes any number).
        for (key, tail) in [("head_limit", " Pass 0 for unlimited."), ("offset", "")] {
            if let Some(n) = input.get(key).and_then(Value::as_f64)
                && (n < 0.0 || n.fract() != 0.0)
            {
                return Err(tool_core::ValidationFailure::new(
                    1,
                    format!(
                        "{key} must be a whole number of 0 or more, got {}.{tail}",
                        js_number(n)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Grep", input, ctx).0
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        Some(20_000)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: GrepInput = tool_core::parse_input(input)?;
        let ctx = ctx.clone();
        text_file::run_blocking("Grep", move || grep(&input, &ctx)).await
    }
}

/// Claude Code's `--glob` splitting: on whitespace, then on commas outside braces.
fn split_globs(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in glob.split_whitespace() {
        if part.contains('{') {
            out.push(part.to_owned());
        } else {
            out.extend(part.split(',').filter(|p| !p.is_empty()).map(str::to_owned));
        }
    }
    out
}

fn nonneg(v: Option<f64>) -> Option<usize> {
    // Saturating: a huge offset skips everything, a huge limit cuts nothing.
    v.map(|n| n.max(0.0).floor() as usize)
}

/// A number as JavaScript's `String(n)` writes it (whole numbers without a fraction, up to
/// 1e21), as Claude Code's texts show them.
fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{n:.0}")
    } else {
        n.to_string()
    }
}

/// A context flag's value as ripgrep reads the number Claude Code writes: a whole number of 0 or
/// more, else ripgrep's own error.
fn context_flag(flag: &str, value: f64) -> Result<usize, ToolCallError> {
    js_number(value).parse::<usize>().map_err(|e| {
        rg_rejected(&format!(
            "error parsing flag {flag}: value is not a valid number: {e}"
        ))
    })
}

/// The offset as the model gave it, for the pagination texts.
fn offset_text(input: &GrepInput) -> String {
    js_number(input.offset.unwrap_or(0.0).max(0.0))
}

/// One file's results.
struct FileHits {
    path: PathBuf,
    mtime: Option<std::time::SystemTime>,
    /// Output lines (content mode), joined by newlines, and how many there are.
    text: String,
    lines: usize,
    count: u64,
}

fn grep(input: &GrepInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let mode = input.output_mode.unwrap_or_default();
    let root = input
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve_path(p));
    // The session's own directory gone (deleted by a command): nothing is found there, as in
    // Claude Code (recorded: cwd_deleted_then_glob); a path the model named must exist.
    if !root.exists() && input.path.is_some() {
        return Err(ToolCallError::new(format!(
            "Path does not exist: {}. Note: your current working directory is {}.",
            crate::search::shown_path(input.path.as_deref(), &root),
            ctx.cwd.display()
        )));
    }
    let multiline = input.multiline.unwrap_or(false);
    // Context flags reach ripgrep in content mode only (`context` beats `-C` beats `-A`/`-B`),
    // as the decimal Claude Code writes; ripgrep parses its flags before the pattern.
    let (before, after) = if mode == OutputMode::Content {
        match (input.context.or(input.around), input.before, input.after) {
            (Some(c), _, _) => {
                let c = context_flag("-C", c)?;
                (c, c)
            }
            (None, b, a) => (
                b.map(|v| context_flag("-B", v)).transpose()?.unwrap_or(0),
                a.map(|v| context_flag("-A", v)).transpose()?.unwrap_or(0),
            ),
        }
    } else {
        (0, 0)
    };
    let mut mb = RegexMatcherBuilder::new();
    mb.case_insensitive(input.ignore_case.unwrap_or(false));
    if multiline {
        mb.multi_line(true).dot_matches_new_line(true);
    } else {
        mb.line_terminator(Some(b'\n'));
    }
    // ripgrep settles the file type before it compiles the pattern (recorded).
    let types = crate::search::file_types(input.file_type.as_deref())?;
    let mut globs: Vec<String> = VCS_DIRS.iter().map(|d| format!("!{d}")).collect();
    if let Some(g) = &input.glob {
        globs.extend(split_globs(g));
    }
    // ... and its globs before the pattern too (recorded: explore seeds 12 and 13).
    crate::search::check_globs(&globs)?;
    let matcher = mb.build(&input.pattern).map_err(|e| {
        let mut message = e.to_string();
        // ripgrep adds this hint to the error of a pattern with a newline (recorded).
        if message.contains("the literal \"\\n\" is not allowed in a regex") {
            message.push_str("\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched.");
        }
        // ... and this one to a pattern only PCRE2 supports (recorded: rg_pcre_hint).
        if message.contains("look-around, including look-ahead and look-behind, is not supported")
            || message.contains("backreferences are not supported")
        {
            message.push_str("\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around.");
        }
        rg_rejected(&message)
    })?;
    let line_numbers = input.line_numbers.unwrap_or(true);
    let single_file = root.is_file();
    // In content mode no file can show more than offset + head_limit lines: keep the text of a
    // file up to one line past that (so truncation is still seen) and only count the rest.
    let cap = match (mode, nonneg(input.head_limit).unwrap_or(DEFAULT_HEAD_LIMIT)) {
        (OutputMode::Content, limit) if limit > 0 => Some(
            limit
                .saturating_add(nonneg(input.offset).unwrap_or(0))
                .saturating_add(1),
        ),
        _ => None,
    };

    let spec = WalkSpec {
        root: &root,
        glob_base: root.is_dir().then_some(root.as_path()),
        globs,
        types,
        respect_ignores: true,
        ctx,
    };
    let mut searcher_template = SearcherBuilder::new();
    searcher_template
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .multi_line(multiline)
        .before_context(before)
        .after_context(after);
    let found = walk_files(&spec, || {
        let mut searcher = searcher_template.build();
        let matcher = matcher.clone();
        let cwd = ctx.cwd.clone();
        move |path: &Path, mtime: &dyn Fn() -> Option<std::time::SystemTime>| {
            let hits = search_file(
                &mut searcher,
                &matcher,
                path,
                mode,
                line_numbers,
                single_file,
                cap,
                &cwd,
            )?;
            // Only files mode sorts by mtime: only it pays for the stat, and only for matches.
            let mtime = if mode == OutputMode::FilesWithMatches {
                mtime()
            } else {
                None
            };
            Some(FileHits { mtime, ..hits })
        }
    })?;
    Ok(render(input, mode, found, &ctx.cwd))
}

#[allow(clippy::too_many_arguments)]
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    mode: OutputMode,
    line_numbers: bool,
    single_file: bool,
    cap: Option<usize>,
    cwd: &Path,
) -> Option<FileHits> {
    let prefix = if single_file {
        String::new()
    } else {
        display_relative(path, cwd)
    };
    let mut sink = Collect {
        mode,
        line_numbers,
        prefix,
        text: String::new(),
        lines: 0,
        count: 0,
        last_line: None,
        cap,
    };
    searcher.search_path(matcher, path, &mut sink).ok()?;
    (sink.count > 0).then(|| FileHits {
        path: path.to_path_buf(),
        mtime: None,
        text: sink.text,
        lines: sink.lines,
        count: sink.count,
    })
}

struct Collect {
    mode: OutputMode,
    line_numbers: bool,
    prefix: String,
    /// Every output line of the file in one buffer, one allocation per file rather than one
    /// per line.
    text: String,
    lines: usize,
    count: u64,
    last_line: Option<u64>,
    /// Keep the text of this many output lines; count the rest.
    cap: Option<usize>,
}

impl Collect {
    fn full(&self) -> bool {
        self.cap.is_some_and(|c| self.lines >= c)
    }

    fn start_line(&mut self) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.lines += 1;
    }

    fn push(&mut self, number: Option<u64>, sep: char, bytes: &[u8], omitted: &str) {
        use std::fmt::Write as _;
        if self.full() {
            // Past what can be shown, lines are only counted (the hooks' `totalLines`).
            self.lines += 1;
            self.last_line = number;
            return;
        }
        let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        self.start_line();
        if !self.prefix.is_empty() {
            self.text.push_str(&self.prefix);
            self.text.push(sep);
        }
        if self.line_numbers
            && let Some(n) = number
        {
            let _ = write!(self.text, "{n}{sep}");
        }
        if text.len() > MAX_COLUMNS {
            self.text.push_str(omitted);
        } else {
            self.text.push_str(&String::from_utf8_lossy(text));
        }
        self.last_line = number;
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        match self.mode {
            OutputMode::FilesWithMatches => {
                self.count += 1;
                Ok(false)
            }
            OutputMode::Count => {
                self.count += 1;
                Ok(true)
            }
            OutputMode::Content => {
                self.count += 1;
                let first = m.line_number();
                for (i, line) in m.bytes().split_inclusive(|b| *b == b'\n').enumerate() {
                    self.push(
                        first.map(|n| n + i as u64),
                        ':',
                        line,
                        "[Omitted long matching line]",
                    );
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        c: &SinkContext<'_>,
    ) -> Result<bool, std::io::Error> {
        if matches!(c.kind(), SinkContextKind::Before | SinkContextKind::After) {
            self.push(
                c.line_number(),
                '-',
                c.bytes(),
                "[Omitted long context line]",
            );
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, std::io::Error> {
        if self.last_line.is_some() {
            if self.full() {
                self.lines += 1;
            } else {
                self.start_line();
                self.text.push_str("--");
            }
        }
        Ok(true)
    }
}

/// ` limit: L, offset: O` parts, as applicable.
fn pagination(limit: Option<usize>, offset: usize, offset_text: &str) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(l) = limit {
        parts.push(format!("limit: {l}"));
    }
    if offset > 0 {
        parts.push(format!("offset: {offset_text}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Apply offset and head_limit; report the limit only when it cut something.
fn page<T>(items: Vec<T>, input: &GrepInput) -> (Vec<T>, Option<usize>, usize) {
    let offset = nonneg(input.offset).unwrap_or(0);
    let limit = nonneg(input.head_limit).unwrap_or(DEFAULT_HEAD_LIMIT);
    let rest: Vec<T> = items.into_iter().skip(offset).collect();
    if limit > 0 && rest.len() > limit {
        (rest.into_iter().take(limit).collect(), Some(limit), offset)
    } else {
        (rest, None, offset)
    }
}

/// The paging a result had, as Claude Code adds it to the hooks' `tool_response`: the limit
/// when it cut something, the offset when there was one.
fn with_paging(
    mut data: serde_json::Value,
    limit: Option<usize>,
    offset: usize,
) -> serde_json::Value {
    if let Some(o) = data.as_object_mut() {
        if let Some(l) = limit {
            o.insert("appliedLimit".into(), json!(l));
        }
        if offset > 0 {
            o.insert("appliedOffset".into(), json!(offset));
        }
    }
    data
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn render(input: &GrepInput, mode: OutputMode, mut found: Vec<FileHits>, cwd: &Path) -> ToolOutput {
    let no_entries = |offset: &str| {
        format!("No entries at this offset. [Showing results with pagination = offset: {offset}]")
    };
    match mode {
        OutputMode::FilesWithMatches => {
            // Newest first; ties as JavaScript's localeCompare orders the paths (recorded).
            found.sort_by(|a, b| {
                b.mtime.cmp(&a.mtime).then_with(|| {
                    crate::search::locale_cmp(&a.path.to_string_lossy(), &b.path.to_string_lossy())
                })
            });
            let total = found.len();
            let paths: Vec<String> = found
                .iter()
                .map(|f| display_relative(&f.path, cwd))
                .collect();
            let (shown, limit, offset) = page(paths, input);
            let text = if total == 0 {
                "No files found".to_owned()
            } else if shown.is_empty() {
                no_entries(&offset_text(input))
            } else {
                let suffix = pagination(limit, offset, &offset_text(input))
                    .map(|p| format!(" {p}"))
                    .unwrap_or_default();
                format!(
                    "Found {}{suffix}\n{}",
                    plural(shown.len(), "file", "files"),
                    shown.join("\n")
                )
            };
            let listed = shown.len();
            let data = json!({"mode": "files_with_matches", "filenames": shown, "numFiles": listed, "totalFiles": total});
            ToolOutput::new(with_paging(data, limit, offset), text)
        }
        OutputMode::Content => {
            found.sort_by(|a, b| a.path.cmp(&b.path));
            let total = found.len();
            // With context, ripgrep separates the groups of different files with `--` too,
            // and the separators are lines of its output (recorded).
            let context_on = [input.context, input.around, input.before, input.after]
                .iter()
                .flatten()
                .any(|v| *v > 0.0);
            let mut all: Vec<&str> = Vec::new();
            for f in found.iter().filter(|f| f.lines > 0) {
                if context_on && !all.is_empty() {
                    all.push("--");
                }
                all.extend(f.text.split('\n'));
            }
            let files_with_lines = found.iter().filter(|f| f.lines > 0).count();
            let all_lines: usize = found.iter().map(|f| f.lines).sum::<usize>()
                + if context_on {
                    files_with_lines.saturating_sub(1)
                } else {
                    0
                };
            let offset = nonneg(input.offset).unwrap_or(0);
            let head = nonneg(input.head_limit).unwrap_or(DEFAULT_HEAD_LIMIT);
            let take = if head == 0 { usize::MAX } else { head };
            let shown: Vec<&str> = all.into_iter().skip(offset).take(take).collect();
            let limit = (head > 0 && all_lines.saturating_sub(offset) > head).then_some(head);
            let text = if total == 0 {
                // The offset is reported even when nothing matched (recorded).
                let note = pagination(None, offset, &offset_text(input))
                    .map(|p| format!("\n\n[Showing results with pagination = {p}]"))
                    .unwrap_or_default();
                format!("No matches found{note}")
            } else if shown.is_empty() {
                // Content mode words it its own way (recorded).
                format!(
                    "No entries at this offset\n\n[Showing results with pagination = offset: {}]",
                    offset_text(input)
                )
            } else {
                let note = pagination(limit, offset, &offset_text(input))
                    .map(|p| format!("\n\n[Showing results with pagination = {p}]"))
                    .unwrap_or_default();
                format!("{}{note}", shown.join("\n"))
            };
            // Claude Code's payload for this mode names no files (`numFiles` 0) and counts the
            // lines before paging in `totalLines` (recorded: hp_grep_*).
            let data = json!({"mode": "content", "numFiles": 0, "filenames": [],
                              "content": shown.join("\n"), "numLines": shown.len(), "totalLines": all_lines});
            ToolOutput::new(with_paging(data, limit, offset), text)
        }
        OutputMode::Count => {
            found.sort_by(|a, b| a.path.cmp(&b.path));
            let files = found.len();
            let total: u64 = found.iter().map(|f| f.count).sum();
            let lines: Vec<String> = found
                .iter()
                .map(|f| format!("{}:{}", display_relative(&f.path, cwd), f.count))
                .collect();
            let (shown, limit, offset) = page(lines, input);
            let summary = format!(
                "Found {total} total {} across {}.",
                if total == 1 {
                    "occurrence"
                } else {
                    "occurrences"
                },
                plural(files, "file", "files")
            );
            let text = if files == 0 {
                // The offset is reported even when nothing matched (recorded).
                let note = pagination(None, offset, &offset_text(input))
                    .map(|p| format!(" with pagination = {p}"))
                    .unwrap_or_default();
                format!("No matches found\n\n{summary}{note}")
            } else if shown.is_empty() {
                // Count mode keeps its summary of everything found (recorded: rg_count_offset).
                format!(
                    "No entries at this offset\n\n{summary} with pagination = offset: {}",
                    offset_text(input)
                )
            } else {
                let note = pagination(limit, offset, &offset_text(input))
                    .map(|p| format!(" with pagination = {p}"))
                    .unwrap_or_default();
                format!("{}\n\n{summary}{note}", shown.join("\n"))
            };
            let data = json!({"mode": "count", "numFiles": files, "filenames": [],
                              "content": shown.join("\n"), "numMatches": total});
            ToolOutput::new(with_paging(data, limit, offset), text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_like_claude_code() {
        assert_eq!(split_globs("*.rs *.toml"), ["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.js,*.ts"), ["*.js", "*.ts"]);
        assert_eq!(split_globs("*.{js,ts} src/*.py"), ["*.{js,ts}", "src/*.py"]);
    }

    #[test]
    fn regex_errors_read_as_ripgreps() {
        let e = RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build("beta(")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "regex parse error:\n    (?:beta()\n    ^\nerror: unclosed group"
        );
    }
}
