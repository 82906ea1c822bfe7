//! Reading and writing text files the way the file tools need: encoding and line endings
//! detected and kept, writes atomic, mtimes in whole milliseconds.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// How a text file's bytes encode its characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8, with or without a byte-order mark.
    Utf8 {
        /// The file starts with EF BB BF.
        bom: bool,
    },
    /// UTF-16 little-endian with the FF FE mark.
    Utf16Le,
}

/// Which line ending a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    Lf,
    CrLf,
}

/// A text file decoded: content with the BOM removed and CRLF turned into LF.
#[derive(Debug, Clone)]
pub(crate) struct TextFile {
    pub text: String,
    pub encoding: Encoding,
    pub line_ending: LineEnding,
    pub mtime_ms: u64,
    pub len: u64,
}

/// Why a file could not be taken as text.
#[derive(Debug)]
pub(crate) enum LoadError {
    Missing,
    /// The path is a directory.
    Directory,
    Io(io::Error),
    NotText,
}

impl From<io::Error> for LoadError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::NotFound {
            LoadError::Missing
        } else {
            LoadError::Io(e)
        }
    }
}

/// The file's mtime in whole milliseconds since the epoch.
pub(crate) fn mtime_ms(meta: &fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// How far Claude Code looks for NUL bytes before it calls a file binary: the first 8,000
/// bytes (recorded: dn_nul_offset_bisect).
pub(crate) const NUL_WINDOW: usize = 8000;

/// Does the file at `path` have a NUL byte in its first [`NUL_WINDOW`] bytes?
pub(crate) fn nul_in_head(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(NUL_WINDOW);
    fs::File::open(path)
        .and_then(|f| f.take(NUL_WINDOW as u64).read_to_end(&mut head))
        .is_ok()
        && head.contains(&0)
}

/// Decode bytes: UTF-16LE when they start with FF FE, otherwise UTF-8 (a leading BOM noted and
/// removed). Invalid UTF-8, and NUL bytes near the start, are `None`: editing such a file as
/// text would corrupt it.
pub(crate) fn decode(bytes: &[u8]) -> Option<(String, Encoding)> {
    if !bytes.starts_with(&[0xFF, 0xFE]) && bytes[..bytes.len().min(NUL_WINDOW)].contains(&0) {
        return None;
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        // A last odd byte is no code unit (recorded: explore seed 13, a UTF-16 file with
        // bytes appended).
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16(&units)
            .ok()
            .map(|s| (s, Encoding::Utf16Le));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return std::str::from_utf8(rest)
            .ok()
            .map(|s| (s.to_owned(), Encoding::Utf8 { bom: true }));
    }
    std::str::from_utf8(bytes)
        .ok()
        .map(|s| (s.to_owned(), Encoding::Utf8 { bom: false }))
}

/// CRLF when CRLF line ends outnumber bare LF ones in the first 4,096 bytes (recorded:
/// dn_eol_detect_window).
pub(crate) fn detect_line_ending(text: &str) -> LineEnding {
    let mut end = text.len().min(4096);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf {
        LineEnding::CrLf
    } else {
        LineEnding::Lf
    }
}

/// The refusal to write through `path` when it is a symbolic link, naming the path it leads to.
pub(crate) fn symlink_refusal(path: &Path) -> Option<tool_core::ToolCallError> {
    let link = fs::symlink_metadata(path).ok()?;
    if !link.file_type().is_symlink() {
        return None;
    }
    Some(tool_core::ToolCallError::new(symlink_text(path)))
}

/// Claude Code's refusal to write through a file link, naming where the link finally leads.
fn symlink_text(path: &Path) -> String {
    format!(
        "Refusing to write {}: it is a symbolic link. Write to the link's target path instead: {}.",
        path.display(),
        tool_core::resolve_target(path).display()
    )
}

/// Claude Code's refusal when a directory link on the way changed after the permission check
/// (a dangling one included: there is no directory to create the file in).
pub(crate) fn parent_changed_text(path: &Path) -> String {
    format!(
        "Refusing to write {}: its parent-directory symlink resolution changed after permission was checked.",
        path.display()
    )
}

/// The refusal to write `path` when a directory on the way is a link that leads nowhere.
pub(crate) fn dangling_parent_refusal(path: &Path) -> Option<tool_core::ToolCallError> {
    path.ancestors().skip(1).find_map(|a| {
        let link = fs::symlink_metadata(a).ok()?.file_type().is_symlink();
        (link && fs::metadata(a).is_err())
            .then(|| tool_core::ToolCallError::new(parent_changed_text(path)))
    })
}

/// Is `path` (followed) something other than a regular file or a directory: a device, a FIFO
/// or a socket, which reading could block on or never finish?
pub(crate) fn is_special(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Load a file as text.
pub(crate) fn load(path: &Path) -> Result<TextFile, LoadError> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        return Err(LoadError::Directory);
    }
    if !meta.is_file() {
        // Never read a device or a pipe as a file's text: it may block or never end.
        return Err(LoadError::Io(std::io::Error::other("not a regular file")));
    }
    let bytes = fs::read(path)?;
    let (raw, encoding) = decode(&bytes).ok_or(LoadError::NotText)?;
    let line_ending = detect_line_ending(&raw);
    Ok(TextFile {
        text: raw.replace("\r\n", "\n"),
        encoding,
        line_ending,
        mtime_ms: mtime_ms(&meta),
        len: meta.len(),
    })
}

/// Encode text (LF line ends) for writing with the given encoding and line ending.
pub(crate) fn encode(text: &str, encoding: Encoding, line_ending: LineEnding) -> Vec<u8> {
    let text = match line_ending {
        LineEnding::Lf => std::borrow::Cow::Borrowed(text),
        LineEnding::CrLf => {
            std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\n', "\r\n"))
        }
    };
    match encoding {
        Encoding::Utf8 { bom: false } => text.as_bytes().to_vec(),
        Encoding::Utf8 { bom: true } => {
            let mut v = vec![0xEF, 0xBB, 0xBF];
            v.extend_from_slice(text.as_bytes());
            v
        }
        Encoding::Utf16Le => {
            let mut v = vec![0xFF, 0xFE];
            for u in text.encode_utf16() {
                v.extend_from_slice(&u.to_le_bytes());
            }
            v
        }
    }
}

/// Replace `path`'s content atomically: write a temporary file in the same directory, copy the
/// old file's permissions (and owner, where the process may), fsync, rename over the target,
/// fsync the directory. A reader sees the old content or the new, never a mix; a crash at any
/// point leaves one of the two. A symlink is followed, so the link stays a link.
///
/// The write is bound to where `path` leads: `decided` (where it led when the write was
/// allowed) must still be where it leads, and from the moment that is checked every step
/// works through a handle on the target's directory, never through the path again, so a link
/// swapped in along the way cannot redirect the write. `still_current` runs right before the
/// rename; returning false aborts the write.
pub(crate) fn atomic_write(
    path: &Path,
    bytes: &[u8],
    decided: Option<&Path>,
    still_current: impl FnOnce() -> bool,
) -> io::Result<bool> {
    let target = match fs::symlink_metadata(path) {
        // A link whose target does not exist is refused, as before: nothing to write through.
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => tool_core::resolve_target(path),
    };
    if let Some(decided) = decided
        && decided != target
    {
        return Err(redirected(path));
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    bound_write(
        dir,
        name,
        bytes,
        decided.map(|_| (path, &*target)),
        still_current,
    )
}

/// Why a write was refused: `path` leads elsewhere than when the write was allowed. The
/// texts are Claude Code's: a file that is now a link, or a directory link that changed.
fn redirected(path: &Path) -> io::Error {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        io::Error::other(symlink_text(path))
    } else {
        io::Error::other(parent_changed_text(path))
    }
}

#[cfg(target_os = "linux")]
fn bound_write(
    dir: &Path,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    bound: Option<(&Path, &Path)>,
    still_current: impl FnOnce() -> bool,
) -> io::Result<bool> {
    use rustix::fs::{AtFlags, Mode, OFlags, openat, renameat, statat, unlinkat};
    use std::os::fd::AsRawFd as _;
    let dirfd = openat(
        rustix::fs::CWD,
        dir,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // The directory held is the one named: no link was swapped in on the way to it.
    if let Some((path, _)) = bound
        && let Ok(held) = fs::read_link(format!("/proc/self/fd/{}", dirfd.as_raw_fd()))
        && held != dir
    {
        return Err(redirected(path));
    }
    // The entry itself, not followed: a link put there since is not written through.
    let existing = match statat(&dirfd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if (st.st_mode & 0o170000) == 0o120000 => {
            let named = bound.map_or_else(|| dir.join(name), |(path, _)| path.to_path_buf());
            return Err(redirected(&named));
        }
        Ok(st) => Some(st),
        Err(rustix::io::Errno::NOENT) => None,
        Err(e) => return Err(e.into()),
    };
    let tmp_name = format!(
        ".toolgate-write-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let mode = existing.as_ref().map_or(0o644, |st| st.st_mode & 0o7777);
    // The new content goes into a file with no name (O_TMPFILE) while it is written, so a
    // process killed meanwhile leaves nothing behind; it gets its temporary name only for the
    // moment before the rename. File systems without O_TMPFILE get a named file from the start.
    // (Naming it later goes through /proc/self/fd, so that must be there too.)
    let unnamed_file = if Path::new("/proc/self/fd").is_dir() {
        openat(
            &dirfd,
            ".",
            OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_bits_truncate(mode),
        )
    } else {
        Err(rustix::io::Errno::NOENT)
    };
    let (tmp, unnamed) = match unnamed_file {
        Ok(fd) => (fd, true),
        Err(_) => (
            openat(
                &dirfd,
                tmp_name.as_str(),
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
                Mode::from_bits_truncate(mode),
            )?,
            false,
        ),
    };
    let result = (|| -> io::Result<bool> {
        let mut file = fs::File::from(tmp);
        file.write_all(bytes)?;
        rustix::fs::fchmod(&file, Mode::from_bits_truncate(mode))?;
        if let Some(st) = &existing {
            // Keep the owner where this process may (as root, or the same user); a change
            // of group only where it is one of the process's groups. Best effort.
            let _ = rustix::fs::fchown(
                &file,
                Some(rustix::fs::Uid::from_raw(st.st_uid)),
                Some(rustix::fs::Gid::from_raw(st.st_gid)),
            );
        }
        file.sync_all()?;
        if !still_current() {
            return Ok(false);
        }
        if unnamed {
            rustix::fs::linkat(
                rustix::fs::CWD,
                format!("/proc/self/fd/{}", file.as_raw_fd()).as_str(),
                &dirfd,
                tmp_name.as_str(),
                AtFlags::SYMLINK_FOLLOW,
            )?;
        }
        renameat(&dirfd, tmp_name.as_str(), &dirfd, name)?;
        // Best effort: some file systems refuse fsync on directories.
        let _ = rustix::fs::fsync(&dirfd);
        Ok(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = unlinkat(&dirfd, tmp_name.as_str(), AtFlags::empty());
    }
    result
}

#[cfg(not(target_os = "linux"))]
fn bound_write(
    dir: &Path,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    bound: Option<(&Path, &Path)>,
    still_current: impl FnOnce() -> bool,
) -> io::Result<bool> {
    let target = dir.join(name);
    if let Some((path, decided)) = bound
        && tool_core::resolve_target(path) != decided
    {
        return Err(redirected(path));
    }
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(".toolgate-write-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    match permissions {
        Some(p) => tmp.as_file().set_permissions(p)?,
        None => set_new_file_mode(tmp.as_file())?,
    }
    tmp.as_file().sync_all()?;
    if !still_current() {
        return Ok(false);
    }
    tmp.persist(&target).map_err(|e| e.error)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(true)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn set_new_file_mode(f: &fs::File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(fs::Permissions::from_mode(0o644))
}

#[cfg(all(not(unix), not(target_os = "linux")))]
fn set_new_file_mode(_f: &fs::File) -> io::Result<()> {
    Ok(())
}

/// Write `bytes` to `path` atomically, provided the file is still as it was loaded
/// (`expected`: its mtime and length, or `None` for a file that did not exist), then record
/// `seen` (LF line ends) as what the model now knows of the file. Returns nothing on success;
/// a file that changed in the meantime is [`UNEXPECTEDLY_MODIFIED`](crate::edit::UNEXPECTEDLY_MODIFIED).
pub(crate) fn commit(
    ctx: &tool_core::ToolContext,
    path: &Path,
    bytes: &[u8],
    expected: Option<(u64, u64)>,
    seen: String,
    full_view: bool,
) -> Result<(), tool_core::ToolCallError> {
    use tool_core::ToolCallError;
    let unchanged_on_disk = || match (expected, fs::metadata(path)) {
        (None, Err(_)) => true,
        (Some((mtime, len)), Ok(m)) => mtime_ms(&m) == mtime && m.len() == len,
        _ => false,
    };
    let written =
        atomic_write(path, bytes, ctx.decided_target(path), unchanged_on_disk).map_err(|e| {
            let text = e.to_string();
            if text.starts_with("Refusing to write") {
                ToolCallError::new(text)
            } else {
                ToolCallError::new(format!("Cannot write {}: {text}", path.display()))
            }
        })?;
    if !written {
        return Err(ToolCallError::new(crate::edit::UNEXPECTEDLY_MODIFIED));
    }
    let timestamp_ms = fs::metadata(path).map(|m| mtime_ms(&m)).unwrap_or(0);
    ctx.file_state.insert(
        path.to_path_buf(),
        tool_core::FileState {
            content: seen,
            timestamp_ms,
            offset: None,
            limit: None,
            full_view,
        },
    );
    Ok(())
}

/// [`strip_trailing_whitespace`] applied to one string field of a tool input, judged by the
/// input's `file_path`.
pub(crate) fn normalize_text_field(mut input: serde_json::Value, field: &str) -> serde_json::Value {
    let path = input
        .get("file_path")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_owned();
    if let Some(serde_json::Value::String(text)) = input.get_mut(field) {
        *text = strip_trailing_whitespace(&path, text);
    }
    input
}

/// Run a file tool's blocking body on the blocking pool, so file I/O never stalls the runtime.
pub(crate) async fn run_blocking<T: Send + 'static>(
    tool: &str,
    body: impl FnOnce() -> Result<T, tool_core::ToolCallError> + Send + 'static,
) -> Result<T, tool_core::ToolCallError> {
    tokio::task::spawn_blocking(body)
        .await
        .map_err(|e| tool_core::ToolCallError::new(format!("{tool} failed: {e}")))?
}

/// Remove trailing whitespace from every line, keeping each line's terminator (`\n` or
/// `\r\n`). Markdown files keep theirs: two trailing spaces are a line break there.
pub(crate) fn strip_trailing_whitespace(path: &str, text: &str) -> String {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".md") || lower.ends_with(".mdx") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for piece in text.split_inclusive('\n') {
        let (body, term) = if let Some(b) = piece.strip_suffix("\r\n") {
            (b, "\r\n")
        } else if let Some(b) = piece.strip_suffix('\n') {
            (b, "\n")
        } else {
            (piece, "")
        };
        out.push_str(body.trim_end_matches(|c: char| c.is_whitespace() && c != '\r' && c != '\n'));
        out.push_str(term);
    }
    out
}

/// Show `p` relative to `cwd` when it is inside it, else absolute.
pub(crate) fn display_path(p: &Path, cwd: &Path) -> String {
    p.strip_prefix(cwd)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// Claude Code's hint for a missing file: the same path under the cwd when the model dropped
/// the repository folder, else a sibling with the same stem and another extension.
pub(crate) fn suggest_for_missing(path: &Path, cwd: &Path) -> Option<String> {
    if let Some(parent) = cwd.parent()
        && !path.starts_with(cwd)
        && let Ok(rel) = path.strip_prefix(parent)
    {
        let candidate = cwd.join(rel);
        // Named in full (recorded: explore seed 12, `moved.txt` under a cwd of `made`).
        if candidate.exists() {
            return Some(candidate.display().to_string());
        }
    }
    let stem = path.file_stem()?.to_str()?;
    let dir = path.parent()?;
    let mut siblings: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file() && p.file_stem().and_then(|s| s.to_str()) == Some(stem) && p != path
        })
        .collect();
    siblings.sort();
    siblings.first().map(|p| display_path(p, cwd))
}

/// `File does not exist. Note: your current working directory is X.` with the hint.
pub(crate) fn missing_file_message(path: &Path, cwd: &Path) -> String {
    let mut msg = format!(
        "File does not exist. Note: your current working directory is {}.",
        cwd.display()
    );
    if let Some(s) = suggest_for_missing(path, cwd) {
        msg.push_str(&format!(" Did you mean {s}?"));
    }
    msg
}

/// An I/O error as Node.js words it, which is what Claude Code shows for a failed file system
/// call: `CODE: description, syscall 'path'` (recorded: `ENOTDIR: not a directory, stat '…'`,
/// `ELOOP: too many symbolic links encountered, stat '…'`). An error without an errno keeps
/// its own text.
pub(crate) fn node_error(e: &std::io::Error, syscall: &str, path: &Path) -> String {
    let (code, what) = match e.raw_os_error() {
        Some(libc_code) => match libc_code {
            2 => ("ENOENT", "no such file or directory"),
            13 => ("EACCES", "permission denied"),
            20 => ("ENOTDIR", "not a directory"),
            21 => ("EISDIR", "illegal operation on a directory"),
            36 => ("ENAMETOOLONG", "name too long"),
            40 => ("ELOOP", "too many symbolic links encountered"),
            1 => ("EPERM", "operation not permitted"),
            _ => return format!("{e}, {syscall} '{}'", path.display()),
        },
        None => return e.to_string(),
    };
    format!("{code}: {what}, {syscall} '{}'", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_encoding_and_line_ending() {
        for (enc, le) in [
            (Encoding::Utf8 { bom: false }, LineEnding::Lf),
            (Encoding::Utf8 { bom: true }, LineEnding::CrLf),
            (Encoding::Utf16Le, LineEnding::CrLf),
            (Encoding::Utf16Le, LineEnding::Lf),
        ] {
            let bytes = encode("héllo\nwörld\n", enc, le);
            let (raw, got) = decode(&bytes).unwrap();
            assert_eq!(got, enc);
            assert_eq!(detect_line_ending(&raw), le);
            assert_eq!(raw.replace("\r\n", "\n"), "héllo\nwörld\n");
        }
        assert!(decode(&[0x66, 0xFF, 0x00]).is_none());
    }

    #[test]
    fn strips_trailing_whitespace_but_keeps_terminators() {
        assert_eq!(
            strip_trailing_whitespace("a.txt", "x  \r\ny\t\nz  "),
            "x\r\ny\nz"
        );
        assert_eq!(strip_trailing_whitespace("a.md", "x  \n"), "x  \n");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_link_put_at_the_name_after_the_check_is_replaced_not_written_through() {
        let d = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(d.path()).unwrap();
        fs::write(dir.join("secret"), "keep").unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), dir.join("f")).unwrap();
        let name = std::ffi::OsStr::new("f");
        let e = bound_write(
            &dir,
            name,
            b"new",
            Some((&dir.join("f"), &dir.join("f"))),
            || true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("Refusing to write") && e.contains("symbolic link"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(dir.join("secret")).unwrap(), "keep");
        // A directory that is not where it was checked to be is refused too.
        fs::create_dir(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("via")).unwrap();
        let e = bound_write(
            &dir.join("via"),
            std::ffi::OsStr::new("x"),
            b"new",
            Some((&dir.join("via/x"), &dir.join("via/x"))),
            || true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("parent-directory symlink resolution changed"),
            "{e}"
        );
        assert!(!dir.join("real/x").exists());
    }

    #[test]
    fn atomic_write_keeps_permissions_and_follows_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.sh");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o751)).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(atomic_write(&link, b"new", None, || true).unwrap());
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        assert!(!atomic_write(&f, b"newer", None, || false).unwrap());
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        let leftovers: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(".toolgate"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn suggests_siblings_and_dropped_folders() {
        let d = tempfile::tempdir().unwrap();
        let cwd = d.path().join("repo");
        fs::create_dir_all(cwd.join("src")).unwrap();
        fs::write(cwd.join("notes.md"), "").unwrap();
        fs::write(cwd.join("src/lib.rs"), "").unwrap();
        assert_eq!(
            suggest_for_missing(&cwd.join("notes.txt"), &cwd).as_deref(),
            Some("notes.md")
        );
        // The dropped folder's candidate is named in full (recorded: explore seed 12).
        assert_eq!(
            suggest_for_missing(&d.path().join("src/lib.rs"), &cwd),
            Some(cwd.join("src/lib.rs").display().to_string())
        );
        assert_eq!(suggest_for_missing(&cwd.join("other.txt"), &cwd), None);
    }
}
