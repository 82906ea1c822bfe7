//! Read: text files by line window (streamed, so a window deep in a huge file costs little
//! memory), images as image blocks, notebooks as cells.

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;

use async_trait::async_trait;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::texts::format_file_size;
use tool_core::{
    ContentBlock, FileState, PermissionSubject, Tool, ToolCallError, ToolContext, ToolOutput,
    ToolResultContent, ValidationFailure,
};

use crate::notebook;
use crate::text_file::{self, missing_file_message};

/// A whole-file read (no `limit`) of a file larger than this is refused.
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;
/// Default token budget of one Read result.
pub const DEFAULT_MAX_TOKENS: u64 = 25_000;
const MAX_PAGES_PER_REQUEST: u32 = 20;
const MAX_IMAGE_DIMENSION: u32 = 2000;
const MAX_IMAGE_BASE64_BYTES: usize = 5 * 1024 * 1024;

const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// Extensions Claude Code treats as binary (images and PDFs are handled separately).
const BINARY_EXTENSIONS: &[&str] = &[
    "bmp", "ico", "tiff", "tif", "heic", "avif", "mp4", "mov", "avi", "mkv", "webm", "wmv", "flv",
    "m4v", "mpeg", "mpg", "mp3", "wav", "ogg", "flac", "aac", "m4a", "wma", "aiff", "opus", "zip",
    "tar", "gz", "bz2", "7z", "rar", "xz", "z", "tgz", "iso", "exe", "dll", "so", "dylib", "bin",
    "o", "a", "obj", "lib", "app", "msi", "deb", "rpm", "doc", "docx", "xls", "xlsx", "ppt",
    "pptx", "odt", "ods", "odp", "ttf", "otf", "woff", "woff2", "eot", "pyc", "pyo", "class",
    "jar", "war", "ear", "node", "wasm", "rlib", "sqlite", "sqlite3", "db", "mdb", "idx", "psd",
    "ai", "eps", "sketch", "fig", "xd", "blend", "3ds", "max", "swf", "fla", "lockb", "dat",
    "data",
];

/// The input of Read.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path of the file to read (a path relative to the working directory also works).
    pub file_path: String,
    /// Line number to start at (1-based).
    #[serde(default)]
    #[schemars(extend("x-semantic" = true))]
    pub offset: Option<i64>,
    /// How many lines to read.
    #[serde(default)]
    #[schemars(extend("x-semantic" = true))]
    pub limit: Option<i64>,
    /// For PDF files: one page ("3") or one range ("1-5").
    #[serde(default)]
    pub pages: Option<String>,
    /// Read past the size and token limits.
    #[serde(default)]
    pub allow_large: Option<bool>,
}

/// The Read tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadTool;

impl ReadTool {
    /// The tool's name.
    pub const NAME: &'static str = "Read";
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> String {
        "Reads a file from the local filesystem and returns its lines prefixed with line numbers (`N<TAB>text`). \
         Give an absolute path. Use offset (1-based line) and limit to read a window of a large file. \
         Images (PNG, JPEG, GIF, WebP) come back as images; Jupyter notebooks come back as their cells with outputs."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        tool_core::input_schema_for::<ReadInput>()
    }

    fn normalize_input(&self, input: Value) -> Value {
        // An empty `pages` is no page range: Claude Code drops it before the hooks see the
        // input and reads the file (recorded: hp_pre_inputs).
        let mut input = input;
        if let Value::Object(o) = &mut input
            && o.get("pages").and_then(Value::as_str) == Some("")
        {
            o.remove("pages");
        }
        input
    }

    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(), ValidationFailure> {
        let input: ReadInput = parse(input)?;
        if let Some(pages) = &input.pages {
            match parse_pages(pages) {
                None => {
                    return Err(ValidationFailure::new(
                        7,
                        format!(
                            "Invalid pages parameter: \"{pages}\". Give one page (\"3\") or one range (\"1-5\"), not a list. To read several pages or ranges, read each one separately. Pages are 1-indexed."
                        ),
                    ));
                }
                Some((first, last))
                    if last.is_none_or(|l| l - first + 1 > MAX_PAGES_PER_REQUEST) =>
                {
                    return Err(ValidationFailure::new(
                        8,
                        format!(
                            "Page range \"{pages}\" exceeds maximum of {MAX_PAGES_PER_REQUEST} pages per request. Please use a smaller range."
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        let path = ctx.resolve_path(&input.file_path);
        if ctx.path_policy.read_denied(&path, ctx) {
            return Err(ValidationFailure::new(
                1,
                "File is in a directory that is denied by your permission settings.",
            ));
        }
        let ext = extension(&path);
        if BINARY_EXTENSIONS.contains(&ext.as_str()) {
            return Err(ValidationFailure::new(
                4,
                format!(
                    "This tool cannot read binary files. The file appears to be a binary .{ext} file. Use a skill for this file type if one is available, or a shell command or script that can read the format."
                ),
            ));
        }
        // `/dev/null` reads as an empty file (recorded: sf_read_dev_null*); other devices and
        // process files are refused.
        if (path.starts_with("/dev") || path.starts_with("/proc")) && path != Path::new("/dev/null")
        {
            return Err(ValidationFailure::new(
                9,
                format!(
                    "Cannot read '{}': this path names a device or process file that this tool does not read.",
                    input.file_path
                ),
            ));
        }
        Ok(())
    }

    fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
        tool_permissions::call_subject("Read", input, ctx).0
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        // Claude Code asks its strict schema (a positive integer `limit`, a non-negative
        // integer `offset`): a Read outside it runs on its own, which splits the batch, though
        // the call itself is accepted (recorded: explore seed 11, `limit: 0`).
        let integer = |key: &str, min: i64| {
            input.get(key).is_none_or(|v| {
                v.as_u64().is_some_and(|n| n >= min.unsigned_abs())
                    || v.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f >= min as f64)
            })
        };
        integer("limit", 1) && integer("offset", 0)
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        None
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let input: ReadInput = tool_core::parse_input(input)?;
        let ctx = ctx.clone();
        text_file::run_blocking("Read", move || read(&input, &ctx)).await
    }
}

fn parse(input: &Value) -> Result<ReadInput, ValidationFailure> {
    serde_json::from_value(input.clone())
        .map_err(|e| ValidationFailure::new(99, format!("Invalid input: {e}")))
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

/// `N`, `N-M` (M ≥ N) or `N-`, 1-based. Returns the first page and the last (None = open).
fn parse_pages(pages: &str) -> Option<(u32, Option<u32>)> {
    let p = pages.trim();
    let num = |s: &str| s.trim().parse::<u32>().ok().filter(|n| *n >= 1);
    match p.split_once('-') {
        None => num(p).map(|n| (n, Some(n))),
        Some((a, "")) => num(a).map(|n| (n, None)),
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            (b >= a).then_some((a, Some(b)))
        }
    }
}

fn read(input: &ReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
    let path = ctx.resolve_path(&input.file_path);
    // The file read must be the one the decision was about: a link swapped in since (to a
    // denied file, or out of the project) is refused, and a denied file is never read.
    let now = tool_core::resolve_target(&path);
    if let Some(decided) = ctx.decided_target(&path)
        && decided != now
    {
        return Err(ToolCallError::new(format!(
            "{} now leads to {}, not to {} as when this read was allowed (a link on the way changed); nothing was read",
            path.display(),
            now.display(),
            decided.display()
        )));
    }
    if now != path && ctx.path_policy.read_denied(&now, ctx) {
        return Err(ToolCallError::new(
            "File is in a directory that is denied by your permission settings.",
        ));
    }
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolCallError::new(missing_file_message(&path, &ctx.cwd)));
        }
        // A path whose links do not resolve (a loop): Claude Code refuses to read where it
        // cannot tell where the path leads (recorded: sf_read_symlink_loop).
        Err(e) if e.raw_os_error() == Some(40) => {
            return Err(ToolCallError::new(format!(
                "Refusing to read {}: where it leads on disk could not be determined (a link on the way could not be examined, or the links do not resolve).",
                path.display()
            )));
        }
        Err(e) => return Err(ToolCallError::new(text_file::node_error(&e, "open", &path))),
    };
    if meta.is_dir() {
        // An absolute path given with a trailing slash is named with two (recorded:
        // sf_read_dir_trailing_slashes); a relative one is resolved without.
        let slashes = if Path::new(&input.file_path).is_absolute() && input.file_path.ends_with('/')
        {
            "//"
        } else {
            ""
        };
        return Err(ToolCallError::new(format!(
            "EISDIR: illegal operation on a directory, read '{}{slashes}'",
            path.display()
        )));
    }
    if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
        return read_fifo(input, &path, ctx);
    }
    let ext = extension(&path);
    if IMAGE_EXTENSIONS.contains(&ext.as_str()) {
        return read_image(&path, meta.len());
    }
    if ext == "pdf" {
        // The whole document goes to the model, as Claude Code sends it (recorded); pages are
        // not rendered here.
        if meta.len() == 0 {
            return Err(ToolCallError::new(format!(
                "PDF file is empty: {}",
                path.display()
            )));
        }
        // A document must start with exactly `%PDF-` (recorded: z1_pdf_missing_header).
        let mut head = [0u8; 5];
        let whole = std::fs::File::open(&path)
            .and_then(|f| std::io::Read::read_exact(&mut &f, &mut head))
            .is_ok();
        if !whole || &head != b"%PDF-" {
            return Err(ToolCallError::new(format!(
                "File is not a valid PDF (missing %PDF- header): {}",
                path.display()
            )));
        }
        // Pages are rendered with poppler's `pdftoppm` in Claude Code; where it is missing,
        // its text says so (recorded: sf_pdf_pages).
        if input.pages.is_some() && !on_path("pdftoppm") {
            return Err(ToolCallError::new(
                "pdftoppm is not installed. Install poppler-utils (e.g. `brew install poppler` or `apt-get install poppler-utils`) to enable PDF page rendering.",
            ));
        }
        if input.pages.is_some() || meta.len() > MAX_PDF_BYTES {
            return Err(ToolCallError::new(format!(
                "Reading PDF pages or PDFs over 32MB is not supported by this tool: {}. Extract the text with a shell command (for example `pdftotext`) and read that instead.",
                path.display()
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| ToolCallError::new(e.to_string()))?;
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let blocks = vec![
            ContentBlock::text(format!(
                "PDF file read: {} ({} bytes)",
                path.display(),
                bytes.len()
            )),
            ContentBlock::Document {
                source: tool_core::ImageSource::Base64 {
                    media_type: "application/pdf".into(),
                    data: data.clone(),
                },
            },
        ];
        return Ok(ToolOutput::new(
            json!({"type": "pdf", "file": {"filePath": path.display().to_string(), "base64": data, "originalSize": bytes.len()}}),
            ToolResultContent::Blocks(blocks),
        ));
    }
    if ext == "ipynb" {
        return read_notebook(&path, &meta, ctx);
    }
    read_text(input, &path, &meta, ctx)
}

/// How long Read waits for something to write into a named pipe (Claude Code's 20 s).
const FIFO_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Read a named pipe: what a writer sends until it closes, shown as a file's lines; with no
/// writer within [`FIFO_WAIT`], Claude Code's error (recorded: sf_read_fifo). The pipe is
/// opened without blocking, so a Read never hangs on it.
fn read_fifo(
    input: &ReadInput,
    path: &Path,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolCallError> {
    use std::io::Read as _;
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| ToolCallError::new(text_file::node_error(&e.into(), "open", path)))?;
    let mut pipe = File::from(fd);
    let wait = ctx
        .env_var("TOOLGATE_FIFO_WAIT_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(FIFO_WAIT, std::time::Duration::from_millis);
    let started = std::time::Instant::now();
    let (mut data, mut writer_seen) = (Vec::new(), false);
    let mut buf = [0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) if writer_seen || !data.is_empty() => break,
            Ok(0) => {}
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                writer_seen = true;
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => writer_seen = true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ToolCallError::new(text_file::node_error(&e, "read", path))),
        }
        if ctx.cancel.is_cancelled() {
            return Err(ToolCallError::interrupted());
        }
        if !writer_seen && started.elapsed() >= wait {
            return Err(ToolCallError::new(
                "Nothing is writing to this pipe. Check that the app serving it is running and unlocked.",
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let text = String::from_utf8_lossy(&data).replace("\r\n", "\n");
    let window = Window::of(input);
    let got = window_of_text(&text, window.skip, window.limit);
    let seen = got.lines.join("\n");
    let n = got.lines.len() as u64;
    Ok(text_output(
        path,
        number_lines(&got.lines, window.first_number),
        &seen,
        window.first_number,
        n,
        got.total.unwrap_or(n),
    ))
}

/// The line window a Read asks for, with Claude Code's quirks: offset 0 numbers from 0,
/// negative offsets and non-positive limits mean "from the start" and "no limit".
struct Window {
    skip: u64,
    first_number: i64,
    limit: Option<u64>,
}

impl Window {
    fn of(input: &ReadInput) -> Self {
        let offset = input.offset.unwrap_or(1);
        let (skip, first_number) = match offset {
            o if o <= 0 => (0, if o == 0 { 0 } else { 1 }),
            o => (u64::try_from(o - 1).unwrap_or(0), o),
        };
        let limit = input
            .limit
            .filter(|l| *l > 0)
            .and_then(|l| u64::try_from(l).ok());
        Window {
            skip,
            first_number,
            limit,
        }
    }
}

struct Lines {
    lines: Vec<String>,
    /// Some line shown was not valid UTF-8 (its bytes became U+FFFD).
    invalid_utf8: bool,
    /// Total number of lines, known when the read reached the end of the file.
    total: Option<u64>,
    /// A `\r` was dropped that Edit's view of the file keeps (one of two before a line end,
    /// or one ending the file).
    extra_cr: bool,
}

/// Stream lines `[skip, skip+limit)` of a UTF-8 file without holding the rest. A BOM and a
/// trailing `\r` on each line are removed. A final newline ends with an empty last line.
fn stream_lines(path: &Path, skip: u64, limit: Option<u64>) -> std::io::Result<Lines> {
    let mut reader = BufReader::with_capacity(256 * 1024, File::open(path)?);
    let mut invalid_utf8 = false;
    let mut extra_cr = false;
    let mut buf = Vec::with_capacity(256);
    let mut lines = Vec::new();
    // Skip whole lines by counting newlines in the reader's buffer, without copying them.
    let mut index: u64 = 0;
    while index < skip {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            // The file ended before the window: it has `index + 1` lines.
            return Ok(Lines {
                lines,
                invalid_utf8,
                total: Some(index + 1),
                extra_cr,
            });
        }
        let need = skip - index;
        let mut consumed = chunk.len();
        let mut seen = 0;
        for pos in memchr::memchr_iter(b'\n', chunk) {
            seen += 1;
            if seen == need {
                consumed = pos + 1;
                break;
            }
        }
        index += seen;
        reader.consume(consumed);
    }
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        let ended_with_newline = buf.last() == Some(&b'\n');
        if n == 0 && index > 0 {
            // The previous line ended with a newline: the file's last line is empty.
            if index >= skip && limit.is_none_or(|l| (lines.len() as u64) < l) {
                lines.push(String::new());
            }
            return Ok(Lines {
                lines,
                invalid_utf8,
                total: Some(index + 1),
                extra_cr,
            });
        }
        let in_window = index >= skip && limit.is_none_or(|l| (lines.len() as u64) < l);
        if !in_window && index >= skip {
            return Ok(Lines {
                lines,
                total: None,
                invalid_utf8,
                extra_cr,
            });
        }
        if in_window {
            let mut bytes: &[u8] = &buf;
            if index == 0 {
                bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
            }
            // A line ends at `\n`; one `\r` before it and one more are not part of it, as
            // Claude Code reads `\r\n` as a line end and then drops a `\r` that ends a line
            // (recorded: dn_eol_*).
            bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            if let Some(b) = bytes.strip_suffix(b"\r") {
                extra_cr |= !ended_with_newline;
                bytes = b;
                if let Some(b) = bytes.strip_suffix(b"\r") {
                    extra_cr = true;
                    bytes = b;
                }
            }
            let line = String::from_utf8_lossy(bytes);
            invalid_utf8 |= matches!(line, std::borrow::Cow::Owned(_));
            lines.push(line.into_owned());
        }
        if !ended_with_newline {
            return Ok(Lines {
                lines,
                invalid_utf8,
                total: Some(index + 1),
                extra_cr,
            });
        }
        index += 1;
    }
}

/// The same window over text already in memory (UTF-16 files).
fn window_of_text(text: &str, skip: u64, limit: Option<u64>) -> Lines {
    let all: Vec<&str> = text.split('\n').collect();
    let total = all.len() as u64;
    let start = usize::try_from(skip).unwrap_or(usize::MAX).min(all.len());
    let end = match limit {
        Some(l) => start
            .saturating_add(usize::try_from(l).unwrap_or(usize::MAX))
            .min(all.len()),
        None => all.len(),
    };
    Lines {
        invalid_utf8: false,
        extra_cr: text.contains("\r\r\n") || text.ends_with('\r'),
        lines: all[start..end]
            .iter()
            .map(|l| {
                let l = l.strip_suffix('\r').unwrap_or(l);
                l.strip_suffix('\r').unwrap_or(l).to_owned()
            })
            .collect(),
        total: Some(total),
    }
}

fn max_tokens(ctx: &ToolContext) -> u64 {
    ctx.env_var("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS)
}

fn number_lines(lines: &[String], first_number: i64) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 8).sum());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&(first_number + i as i64).to_string());
        out.push('\t');
        out.push_str(line);
    }
    out
}

fn read_text(
    input: &ReadInput,
    path: &Path,
    meta: &std::fs::Metadata,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolCallError> {
    let window = Window::of(input);
    let allow_large = input.allow_large.unwrap_or(false);
    let size = meta.len();
    if window.limit.is_none() && !allow_large && size > MAX_WHOLE_FILE_BYTES {
        return Err(ToolCallError::new(format!(
            "File content ({}) exceeds maximum allowed size (256KB). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. To read it anyway, up to what still fits in your context, call Read again with allow_large: true — only if you genuinely need all of it or the user asked for the whole file.",
            format_file_size(size)
        )));
    }
    let timestamp_ms = text_file::mtime_ms(meta);
    // A lone `\r` is dropped as a line end, which leaves nothing (recorded: dn_eol_read).
    let only_cr = size == 1 && std::fs::read(path).is_ok_and(|b| b == b"\r");
    if size == 0 || only_cr {
        record(ctx, path, String::new(), timestamp_ms, input, true);
        // An empty file has one (empty) line: an offset past it gets the shorter-than warning
        // (recorded).
        if let Some(offset) = input.offset.filter(|o| *o > 1) {
            return Ok(text_output(
                path,
                format!(
                    "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has 1 lines.</system-reminder>"
                ),
                "",
                window.first_number,
                0,
                1,
            ));
        }
        // The hooks' payload counts the empty file as one empty line (recorded: hp_read_text).
        return Ok(text_output(path, "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>".into(), "", window.first_number, 1, 1));
    }
    let mut head = [0u8; 2];
    let is_utf16 = File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == [0xFF, 0xFE];
    let mut got = if is_utf16 {
        let bytes = std::fs::read(path).map_err(|e| ToolCallError::new(e.to_string()))?;
        let text = text_file::decode(&bytes)
            .map(|(t, _)| t)
            .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
        window_of_text(&text, window.skip, window.limit)
    } else {
        stream_lines(path, window.skip, window.limit)
            .map_err(|e| ToolCallError::new(e.to_string()))?
    };
    if got.lines.is_empty() {
        let total = match got.total {
            Some(t) => t,
            None => stream_lines(path, u64::MAX, Some(0))
                .map_err(|e| ToolCallError::new(e.to_string()))?
                .total
                .unwrap_or(0),
        };
        let offset = input.offset.unwrap_or(1);
        // The file counts as read (recorded: a Write after such a Read is not refused).
        record(ctx, path, String::new(), timestamp_ms, input, false);
        // The encoding note follows this warning too (recorded: explore seed 7).
        let note = if head == [0xFE, 0xFF] {
            UTF16_BE_NOTE
        } else if !is_utf16 && text_file::nul_in_head(path) {
            NUL_NOTE
        } else if !is_utf16 && invalid_elsewhere(path, size) {
            NOT_UTF8_NOTE
        } else {
            ""
        };
        return Ok(text_output(
            path,
            format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has {total} lines.</system-reminder>{note}"
            ),
            "",
            window.first_number,
            0,
            total,
        ));
    }
    let budget = TokenBudget::of(ctx, path);
    let mut first_number = window.first_number;
    let mut reminder = String::new();
    if let Some(over) = budget.over(&got.lines, window.first_number, allow_large) {
        // From the start with no limit, or with allow_large: a page that fits. Otherwise the
        // call is refused (Claude Code 2.1.332, recorded: dn_tok_*).
        if !(over.large || (window.skip == 0 && window.limit.is_none())) {
            return Err(ToolCallError::new(format!(
                "File content ({} tokens) exceeds maximum allowed tokens ({}). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. {}",
                over.tokens,
                budget.cap,
                budget.tail(over.tokens)
            )));
        }
        let total = got.total.unwrap_or(got.lines.len() as u64 + window.skip);
        let page = budget.page(&got.lines, over.tokens);
        let count = if over.large {
            format!(
                "{} tokens, allow_large had room for {} tokens this turn",
                over.tokens, budget.room
            )
        } else {
            format!("{} tokens, cap {}", over.tokens, budget.cap)
        };
        let tail = budget.tail(over.tokens);
        reminder = match page {
            Page::Lines(k) => {
                got.lines.truncate(k);
                // A page is numbered from 1 (recorded: dn_tok_offset_limit, offset 0).
                first_number = first_number.max(1);
                let start = first_number;
                let end = start + k as i64 - 1;
                format!(
                    "\n\n<system-reminder>\n[Truncated: PARTIAL view — {}: showing lines {start}-{end} of {total} total ({count}). Call Read with offset={} limit={k} for the next page, or Grep to find a specific section. {tail} Do NOT answer from this page alone if the answer may be further in the file.]\n</system-reminder>",
                    path.display(),
                    end + 1
                )
            }
            Page::Chars(c) => {
                first_number = first_number.max(1);
                let text = got.lines.join("\n");
                let units: Vec<u16> = text.encode_utf16().collect();
                let shown = String::from_utf16_lossy(&units[..c.min(units.len())]);
                got.lines = shown.split('\n').map(str::to_owned).collect();
                format!(
                    "\n\n<system-reminder>\n[Truncated: PARTIAL view — {}: showing the first {c} of {} characters ({count}); this file has very long lines and cannot be paginated by line. Use Grep to find a specific section, or Read with offset/limit to page through it. {tail} Do NOT answer from this excerpt alone if the answer may be elsewhere in the file.]\n</system-reminder>",
                    path.display(),
                    units.len()
                )
            }
        };
        got.total = None;
    }
    let mut notice = String::new();
    // A full view: the whole file, read from its start as Claude Code counts it (no offset, or
    // 1; an offset of 0 or below reads from the start but is not one, as recorded).
    let covered = window.skip == 0 && got.total.is_some_and(|t| t == got.lines.len() as u64);
    // A limit the read reached makes it partial, even when the file ends there (recorded:
    // dn_eol_detect, a limit of 3 on a file of 3 lines; explore seed 12, a limit of 2000 on 4).
    let full_view = covered
        && input.offset.is_none_or(|o| o == 1)
        && window.limit.is_none_or(|l| (got.lines.len() as u64) < l);
    let seen = got.lines.join("\n");
    let mut numbered = number_lines(&got.lines, first_number);
    if !reminder.is_empty() {
        // A page is shown without its trailing whitespace (recorded: dn_tok_cut_mode).
        numbered.truncate(numbered.trim_end().len());
    }
    let n = got.lines.len() as u64;
    if allow_large {
        // What this read returns is part of the turn's room no longer free.
        let tokens = (numbered.encode_utf16().count() as u64).div_ceil(4);
        ctx.large_read_tokens
            .fetch_add(tokens, std::sync::atomic::Ordering::Relaxed);
    }
    // A file that is not UTF-8 is shown with U+FFFD for its bad bytes, and a note (Claude
    // Code 2.1.332, recorded); Edit and Write then refuse to change it. One note: big-endian
    // UTF-16 before NUL bytes before bytes that are not UTF-8.
    if head == [0xFE, 0xFF] {
        notice.push_str(UTF16_BE_NOTE);
    } else if !is_utf16 && text_file::nul_in_head(path) {
        notice.push_str(NUL_NOTE);
    } else if got.invalid_utf8 || (!is_utf16 && !covered && invalid_elsewhere(path, size)) {
        notice.push_str(NOT_UTF8_NOTE);
    }
    notice.push_str(&reminder);
    // What Edit later compares the file with: its text with `\r\n` read as `\n` and one
    // `\r` ending it dropped, which differs from the lines shown only where a `\r` was dropped
    // that Edit keeps (recorded: dn_eol_edit).
    let state = if got.extra_cr && full_view {
        text_file::load(path).map_or_else(
            |_| seen.clone(),
            |t| {
                t.text
                    .strip_suffix('\r')
                    .map_or(t.text.clone(), str::to_owned)
            },
        )
    } else {
        seen.clone()
    };
    // A page the token budget cut counts as not read: Edit and Write still want a Read
    // (recorded: explore seed 11's triage).
    if reminder.is_empty() {
        record(ctx, path, state, timestamp_ms, input, full_view);
    }
    // The hooks' payload has the file's line count also when a limit stopped the read early
    // (recorded: hp_read_text).
    let total = match got.total {
        Some(t) => t,
        None if is_utf16 => 0,
        None => stream_lines(path, u64::MAX, Some(0))
            .ok()
            .and_then(|g| g.total)
            .unwrap_or(0),
    };
    Ok(text_output(
        path,
        format!("{numbered}{notice}"),
        &seen,
        first_number,
        n,
        total,
    ))
}

/// Is a file (up to 16 MiB; larger ones are judged by the lines read) not valid UTF-8 outside
/// the lines a Read showed? The note is about the file, not the window.
fn invalid_elsewhere(path: &Path, size: u64) -> bool {
    size <= 16 * 1024 * 1024
        && std::fs::read(path).is_ok_and(|bytes| std::str::from_utf8(&bytes).is_err())
}

/// What Read adds after the lines of a file with NUL bytes near its start (Claude Code's text,
/// recorded: dn_nul_*).
pub(crate) const NUL_NOTE: &str = "\n\n[This file has NUL bytes in its first 8 KB: binary data, UTF-16/UTF-32 without a byte-order mark, or text with embedded NULs. Edit and Write will refuse it: change it with a shell command that keeps its encoding, or ask the user whether to convert it to UTF-8.]";

/// The token budget of one Read: Claude Code counts a page's tokens once its characters pass
/// a quarter of the cap (four characters a token, two for JSON), and a page over the cap is
/// cut or refused (Claude Code 2.1.332, recorded: dn_tok_*).
struct TokenBudget {
    cap: u64,
    /// Characters per token for the pre-check.
    per_token: f64,
    /// What an `allow_large` read may take this turn.
    room: u64,
}

/// A page over the budget.
struct Over {
    tokens: u64,
    /// Counted against allow_large's room (not the cap).
    large: bool,
}

/// Where a page that is too large is cut: after K lines, or (lines too long to cut between)
/// after C UTF-16 units.
enum Page {
    Lines(usize),
    Chars(usize),
}

/// The context the recorded Claude Code had for a turn, less what it keeps back: an
/// `allow_large` read may use 70% of what the conversation leaves of it.
const CONTEXT_ROOM: u64 = 166_999;

impl TokenBudget {
    fn of(ctx: &ToolContext, path: &Path) -> Self {
        let per_token = if matches!(extension(path).as_str(), "json" | "jsonl" | "jsonc") {
            2.0
        } else {
            4.0
        };
        // The conversation's size as the model's last answer reported it (the host may say;
        // the reference recordings' API reports 1,000).
        let used = ctx.context_tokens_used.unwrap_or(1000)
            + ctx
                .large_read_tokens
                .load(std::sync::atomic::Ordering::Relaxed);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let room = (0.7 * CONTEXT_ROOM.saturating_sub(used) as f64).floor() as u64;
        TokenBudget {
            cap: max_tokens(ctx),
            per_token,
            room,
        }
    }

    /// Whether the page is over its budget, and by how many tokens.
    fn over(&self, lines: &[String], first_number: i64, allow_large: bool) -> Option<Over> {
        let text = lines.join("\n");
        #[allow(clippy::cast_precision_loss)]
        let rough = (text.encode_utf16().count() as f64 / self.per_token).round();
        #[allow(clippy::cast_precision_loss)]
        if rough <= (self.cap / 4) as f64 {
            return None;
        }
        // allow_large is honoured only when it gives more room than the cap.
        let large = allow_large && self.room >= self.cap;
        let (tokens, limit) = if large {
            (count_tokens(&number_lines(lines, first_number)), self.room)
        } else {
            (count_tokens(&text), self.cap)
        };
        (tokens > limit).then_some(Over { tokens, large })
    }

    /// The last sentence of a refusal or a page: whether allow_large could help.
    fn tail(&self, tokens: u64) -> &'static str {
        if tokens > self.room {
            "Even with allow_large, this is more than fits in the context you have left this turn (other large reads in the same turn share that room)."
        } else {
            "To read it anyway, up to what still fits in your context, call Read again with allow_large: true — only if you genuinely need all of it or the user asked for the whole file."
        }
    }

    /// Where to cut `lines` (of `tokens` tokens) to fit the cap with room to spare.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    fn page(&self, lines: &[String], tokens: u64) -> Page {
        let len16 = |l: &String| l.encode_utf16().count();
        let total: usize = lines.iter().map(len16).sum::<usize>() + lines.len().saturating_sub(1);
        let share = 0.85 * self.cap as f64 / tokens as f64;
        let mut k = (lines.len() as f64 * share).floor() as usize;
        // Shrink by 30% while the page's share of the tokens is over the cap.
        let mut prefix: Vec<usize> = Vec::with_capacity(lines.len() + 1);
        prefix.push(0);
        for l in lines {
            let last = prefix.last().copied().unwrap_or(0);
            prefix.push(last + len16(l));
        }
        let page_len = |k: usize| prefix[k.min(lines.len())] + k.saturating_sub(1);
        while k > 0 && tokens as f64 * page_len(k) as f64 / total.max(1) as f64 > self.cap as f64 {
            k = (0.7 * k as f64).floor() as usize;
        }
        let blank = lines[..k.min(lines.len())]
            .iter()
            .all(|l| l.chars().all(|c| c.is_whitespace() || c == '\u{feff}'));
        if k == 0 || blank {
            let mut c = (total as f64 * share).floor() as usize;
            // Never split a surrogate pair.
            let units: Vec<u16> = lines.join("\n").encode_utf16().take(c + 1).collect();
            if c > 0 && c <= units.len() && (0xD800..0xDC00).contains(&units[c - 1]) {
                c -= 1;
            }
            Page::Chars(c)
        } else {
            Page::Lines(k)
        }
    }
}

/// The token count of a text: a quarter of its length as JSON with everything outside ASCII
/// escaped, in a count request's envelope. The recordings' count endpoint answers exactly this,
/// so pages are cut where Claude Code cut them there.
fn count_tokens(text: &str) -> u64 {
    const ENVELOPE: u64 = 99;
    let escaped: u64 = text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c if c.is_ascii() => 1,
            c => 6 * c.len_utf16() as u64,
        })
        .sum();
    (ENVELOPE + escaped) / 4
}

/// What Read adds after the lines of a UTF-16 big-endian file (Claude Code's text, recorded).
const UTF16_BE_NOTE: &str = "\n\n[This file is UTF-16 big-endian (it starts FE FF), which these tools cannot write. Edit and Write will refuse it: change it with a shell command that keeps its encoding, or ask the user whether to convert it to UTF-8.]";

/// Largest PDF Read sends whole.
const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;

/// What Read adds after the lines of a file that is not valid UTF-8.
const NOT_UTF8_NOTE: &str = "\n\n[This file is not valid UTF-8: it uses a legacy encoding such as Windows-1252, Shift-JIS or GBK, or it is binary. Its undecodable bytes show above as U+FFFD. Edit and Write will refuse it: change it with a shell command that keeps its encoding, or ask the user whether to convert it to UTF-8.]";

fn record(
    ctx: &ToolContext,
    path: &Path,
    content: String,
    timestamp_ms: u64,
    input: &ReadInput,
    full_view: bool,
) {
    ctx.file_state.insert(
        path.to_path_buf(),
        FileState {
            content,
            timestamp_ms,
            offset: Some(input.offset.unwrap_or(1)),
            limit: input.limit,
            full_view,
        },
    );
}

fn text_output(
    path: &Path,
    content: String,
    seen: &str,
    start_line: i64,
    num_lines: u64,
    total_lines: u64,
) -> ToolOutput {
    ToolOutput::new(
        json!({"type": "text", "file": {"filePath": path.display().to_string(), "content": seen,
               "numLines": num_lines, "startLine": start_line, "totalLines": total_lines}}),
        content,
    )
}

fn read_notebook(
    path: &Path,
    meta: &std::fs::Metadata,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolCallError> {
    if meta.len() > MAX_WHOLE_FILE_BYTES {
        return Err(ToolCallError::new(format!(
            "Notebook content ({}) exceeds maximum allowed size (256KB). Use Bash with jq to read specific portions:\n  cat \"{p}\" | jq '.cells[:20]' # First 20 cells\n  cat \"{p}\" | jq '.cells[100:120]' # Cells 100-120\n  cat \"{p}\" | jq '.cells | length' # Count total cells",
            format_file_size(meta.len()),
            p = path.display()
        )));
    }
    // Read as Claude Code reads it: bad bytes as U+FFFD, a leading BOM dropped, and the
    // parser's first complaint in its own words (recorded: explore seed 11's triage).
    let bytes = std::fs::read(path).map_err(|e| ToolCallError::new(e.to_string()))?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let not_json = |why: String| {
        ToolCallError::new(format!(
            "Notebook file is not valid JSON (it may be truncated, corrupted, or still being written): JSON Parse error: {why}"
        ))
    };
    if let Some(why) = crate::js_json::parse_error(text) {
        return Err(not_json(why));
    }
    let nb: Value = serde_json::from_str(text).map_err(|e| not_json(e.to_string()))?;
    // A notebook is an object whose `cells` are cell objects with a string or string-list
    // `source` (recorded: sf_notebook_malformed).
    let cells_ok = nb
        .get("cells")
        .and_then(Value::as_array)
        .is_some_and(|cells| {
            cells.iter().all(|c| match c.get("source") {
                Some(Value::String(_)) => true,
                Some(Value::Array(lines)) => lines.iter().all(Value::is_string),
                _ => false,
            })
        });
    if !cells_ok {
        return Err(ToolCallError::new(
            "Notebook file is not a valid Jupyter notebook (top-level \"cells\" must be an array of cell objects, each with a string or string-array \"source\").",
        ));
    }
    let blocks = notebook::render(&nb);
    ctx.file_state.insert(
        path.to_path_buf(),
        FileState {
            content: text.replace("\r\n", "\n"),
            timestamp_ms: text_file::mtime_ms(meta),
            offset: Some(1),
            limit: None,
            full_view: true,
        },
    );
    Ok(ToolOutput::new(
        json!({"type": "notebook", "file": {"filePath": path.display().to_string(), "cells": crate::notebook::cells_payload(&nb)}}),
        ToolResultContent::Blocks(blocks),
    ))
}

/// What a file that should be an image holds instead, as Claude Code names it: a PDF, a ZIP,
/// else its first bytes in hex (recorded: sf_image_fake).
fn what_bytes_are(bytes: &[u8]) -> String {
    // Claude Code's checks, first match wins (recorded: explore seed 11's triage): markup in the
    // first 32 bytes, then XML, PDF, ZIP and JSON by their start, else the first 8 bytes.
    let starts = |p: &[u8]| bytes.len() >= p.len() && bytes[..p.len()].eq_ignore_ascii_case(p);
    let head = |n: usize| -> String {
        bytes
            .iter()
            .take(n)
            .map(|b| {
                if (0x20..=0x7E).contains(b) {
                    *b as char
                } else {
                    '.'
                }
            })
            .collect()
    };
    let first32 = bytes[..bytes.len().min(32)].to_ascii_lowercase();
    let contains = |needle: &[u8]| first32.windows(needle.len()).any(|w| w == needle);
    if contains(b"<!doctype") || contains(b"<html") {
        return format!("HTML document (starts with \"{}\")", head(24));
    }
    if starts(b"<?xml") || starts(b"<svg") {
        return format!("XML/SVG document (starts with \"{}\")", head(24));
    }
    if starts(b"%pdf") {
        return "PDF document".into();
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return "ZIP archive (Office documents such as .pptx/.docx/.xlsx are ZIPs)".into();
    }
    if matches!(bytes.first(), Some(b'{' | b'[')) {
        return format!("JSON/text (starts with \"{}\")", head(24));
    }
    let hex: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("unrecognized bytes (hex: {})", hex.join(" "))
}

/// Whether a program of that name is on PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

fn read_image(path: &Path, size: u64) -> Result<ToolOutput, ToolCallError> {
    if size == 0 {
        return Err(ToolCallError::new(format!(
            "Image file is empty: {}",
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| ToolCallError::new(e.to_string()))?;
    let Some((media_type, dims)) = crate::image::sniff(&bytes) else {
        return Err(ToolCallError::new(format!(
            "File has an image extension but its content is not a valid PNG/JPEG/GIF/WebP. Detected: {}. This usually means a download saved an error/login page instead of the image. Use `file \"{}\"` to confirm, or read it as text with Bash (e.g. `head -c 500`).",
            what_bytes_are(&bytes),
            path.display()
        )));
    };
    // An image whose size its header does not give cannot be checked against the limit, and
    // one over the limit is not resized here (Claude Code's texts for what it cannot resize;
    // recorded: explore seed 11's triage).
    let Some((w, h)) = dims else {
        return Err(ToolCallError::new(
            "Unable to resize image — image processing is unavailable and dimensions could not be read from the file header. Please convert the image to PNG, JPEG, GIF, or WebP.",
        ));
    };
    if w > MAX_IMAGE_DIMENSION || h > MAX_IMAGE_DIMENSION {
        return Err(ToolCallError::new(format!(
            "Unable to resize image — its pixels could not be decoded (the file may be damaged, or use an encoding Claude Code cannot read), and at {w}x{h}px it is over the {MAX_IMAGE_DIMENSION}x{MAX_IMAGE_DIMENSION}px limit, so it cannot be sent. Re-save it as a PNG or JPEG and try again."
        )));
    }
    let dims = Some((w, h));
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    if data.len() > MAX_IMAGE_BASE64_BYTES {
        return Err(ToolCallError::new(format!(
            "Image {} is {} and too large to send; this tool does not recompress images. Make a smaller copy and read that.",
            path.display(),
            format_file_size(size)
        )));
    }
    // Images are sent as they are, so the display size is the original (recorded: hp_read_media).
    let raw = json!({"type": "image", "file": {"base64": data.clone(), "type": media_type, "originalSize": size,
                     "dimensions": dims.map(|(w, h)| json!({"originalWidth": w, "originalHeight": h, "displayWidth": w, "displayHeight": h}))}});
    Ok(ToolOutput::new(
        raw,
        ToolResultContent::Blocks(vec![ContentBlock::image(media_type, data)]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_parse() {
        assert_eq!(parse_pages("3"), Some((3, Some(3))));
        assert_eq!(parse_pages("1-5"), Some((1, Some(5))));
        assert_eq!(parse_pages("4-"), Some((4, None)));
        for bad in ["x", "0", "5-2", "1,2", ""] {
            assert_eq!(parse_pages(bad), None, "{bad}");
        }
    }

    #[test]
    fn streams_windows_with_claude_line_semantics() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "\u{feff}a\r\nb\nc\n").unwrap();
        let all = stream_lines(&p, 0, None).unwrap();
        assert_eq!(all.lines, ["a", "b", "c", ""]);
        assert_eq!(all.total, Some(4));
        let w = stream_lines(&p, 1, Some(1)).unwrap();
        assert_eq!(w.lines, ["b"]);
        assert_eq!(w.total, None, "stopped before the end");
        let to_end = stream_lines(&p, 1, Some(2)).unwrap();
        assert_eq!(to_end.lines, ["b", "c"]);
        assert_eq!(
            to_end.total,
            Some(4),
            "reached the end, so the total is known"
        );
        let past = stream_lines(&p, 10, None).unwrap();
        assert!(past.lines.is_empty());
        assert_eq!(past.total, Some(4));
        std::fs::write(&p, "no newline").unwrap();
        assert_eq!(stream_lines(&p, 0, None).unwrap().lines, ["no newline"]);
    }
}
