//! `ToolContext`: everything a tool call may look at besides its input.
//!
//! A context is cheap to clone (the shared parts sit behind `Arc`s). A session holds one and
//! gives each call a clone with its own child cancellation token; context modifiers change the
//! session's copy.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::cancel::CancellationToken;

use crate::decision::{Approver, DecisionReason, NoPathRules, PathPolicy, PermissionMode};
use crate::file_state::FileStateCache;
use crate::sandbox::{NoSandbox, SandboxPolicy};

/// The context of one tool call.
#[derive(Clone)]
pub struct ToolContext {
    /// The current working directory (absolute).
    pub cwd: PathBuf,
    /// The project root: the directory the session started in.
    pub project_root: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// Directories the session may work in: the project root and any added ones.
    pub working_dirs: Vec<PathBuf>,
    /// The permission mode.
    pub permission_mode: PermissionMode,
    /// Whether the host chose [`permission_mode`](Self::permission_mode) (see
    /// [`with_permission_mode`](Self::with_permission_mode)): then a policy's default mode
    /// does not replace it. A mode other than default counts as chosen either way.
    pub permission_mode_chosen: bool,
    /// The session's id.
    pub session_id: String,
    /// Fires when the call (or its turn) is cancelled.
    pub cancel: CancellationToken,
    /// What the model has seen of each file.
    pub file_state: Arc<FileStateCache>,
    /// The environment for subprocesses and for settings read from it.
    pub env: Arc<BTreeMap<String, String>>,
    /// Which paths the policy denies, asked by tools before they touch a path.
    pub path_policy: Arc<dyn PathPolicy>,
    /// Where results too large to inline are written.
    pub tool_results_dir: PathBuf,
    /// Where shell commands write their output (a background command's output file stays
    /// there for the model to read).
    pub task_output_dir: PathBuf,
    /// The agent's name in texts that mention it ("Claude requested permissions ...").
    pub agent_name: String,
    /// The product's name in texts that mention it ("... because Claude Code is running in
    /// don't ask mode").
    pub product_name: String,
    /// The session's transcript file, when the host keeps one (hooks are told where it is).
    pub transcript_path: Option<PathBuf>,
    /// The id of the user prompt this turn answers, when the host has one (hooks see it).
    pub prompt_id: Option<String>,
    /// For this call: where each path the permission decision was about led when it was
    /// decided (the path as named → [`resolve_target`] of it then). A file tool refuses to
    /// touch a path that leads elsewhere by the time it acts (a link swapped in after the
    /// decision). Empty outside the pipeline's permission stage.
    pub decided_targets: Arc<BTreeMap<PathBuf, PathBuf>>,
    /// What the sandbox that runs shell commands must enforce, from the policy.
    pub sandbox_policy: Arc<dyn SandboxPolicy>,
    /// For this call: why the permission stage let it run (a rule, a mode, the user's
    /// approval). `None` outside the pipeline's permission stage, or when nothing decided.
    pub allowed_by: Option<DecisionReason>,
    /// For this call: who answers an ask that arises while the tool runs (a program a
    /// sandboxed command starts that needs approval). `None` refuses such asks.
    pub run_approver: Option<Arc<dyn Approver>>,
    /// The conversation's size in tokens as the model's last answer reported it (its
    /// `usage.input_tokens`), when the host knows it: how much room a Read with `allow_large`
    /// has. `None` reads as 1,000.
    pub context_tokens_used: Option<u64>,
    /// Tokens the Reads with `allow_large` of the current user turn have returned: they share
    /// the turn's room. A host starts a user turn by storing 0.
    pub large_read_tokens: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("cwd", &self.cwd)
            .field("project_root", &self.project_root)
            .field("working_dirs", &self.working_dirs)
            .field("permission_mode", &self.permission_mode)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context rooted at `project_root` (also the cwd and the only working directory), with
    /// `home` as the home directory, default mode, an empty file-state cache, no path rules and
    /// results spilled under `tool_results_dir`.
    pub fn new(
        project_root: impl Into<PathBuf>,
        home: impl Into<PathBuf>,
        tool_results_dir: impl Into<PathBuf>,
    ) -> Self {
        let root: PathBuf = project_root.into();
        let root = match windows_to_posix(&root.to_string_lossy()) {
            Some(p) => PathBuf::from(p),
            None => root,
        };
        let root = normalize(&root);
        let tool_results_dir: PathBuf = tool_results_dir.into();
        Self {
            task_output_dir: tool_results_dir.with_file_name("tasks"),
            cwd: root.clone(),
            working_dirs: vec![root.clone()],
            project_root: root,
            home: home.into(),
            permission_mode: PermissionMode::Default,
            permission_mode_chosen: false,
            session_id: String::new(),
            cancel: CancellationToken::new(),
            file_state: Arc::new(FileStateCache::default()),
            env: Arc::new(BTreeMap::new()),
            path_policy: Arc::new(NoPathRules),
            tool_results_dir,
            agent_name: "Claude".to_owned(),
            product_name: "Claude Code".to_owned(),
            transcript_path: None,
            prompt_id: None,
            decided_targets: Arc::new(BTreeMap::new()),
            sandbox_policy: Arc::new(NoSandbox),
            allowed_by: None,
            run_approver: None,
            context_tokens_used: None,
            large_read_tokens: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// Where `path` led when the permission decision was made, if the decision was about it.
    pub fn decided_target(&self, path: &Path) -> Option<&Path> {
        self.decided_targets.get(path).map(PathBuf::as_path)
    }

    /// The context in `mode`, chosen by the host: a policy's default mode does not replace it
    /// (not even with default).
    pub fn with_permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = mode;
        self.permission_mode_chosen = true;
        self
    }

    /// The context with what `policy` says of a session where the host left it open: the
    /// policy's default mode (a settings file's `defaultMode`) when the host chose none (the
    /// mode is default and not [chosen](Self::permission_mode_chosen)), and the policy's
    /// additional directories among the working directories. Borrowed unchanged when the
    /// policy adds nothing.
    pub fn with_policy_defaults(
        &self,
        policy: &dyn crate::PermissionPolicy,
    ) -> std::borrow::Cow<'_, ToolContext> {
        let mode = policy.session_mode().filter(|_| {
            !self.permission_mode_chosen && self.permission_mode == PermissionMode::Default
        });
        let dirs: Vec<PathBuf> = policy
            .session_directories()
            .into_iter()
            .filter(|d| !self.working_dirs.contains(d))
            .collect();
        if mode.is_none() && dirs.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut ctx = self.clone();
        if let Some(m) = mode {
            ctx.permission_mode = m;
        }
        ctx.working_dirs.extend(dirs);
        std::borrow::Cow::Owned(ctx)
    }

    /// The same context with a child cancellation token, for one call.
    pub fn child(&self) -> Self {
        let mut c = self.clone();
        c.cancel = self.cancel.child_token();
        c
    }

    /// The paths a call naming the file `path` is decided on: `path` resolved
    /// ([`resolve_path`](Self::resolve_path)) and, where a `..` follows a symbolic link, also
    /// the file the kernel would reach ([`resolve_physical`]). What a file tool's permission
    /// subject holds: wrap it in [`PermissionSubject::ReadPaths`](crate::PermissionSubject)
    /// or `WritePaths`.
    pub fn decided_paths(&self, path: &str) -> Vec<PathBuf> {
        let lexical = self.resolve_path(path);
        let raw = if Path::new(path).is_absolute() {
            PathBuf::from(path)
        } else {
            self.cwd.join(path)
        };
        match resolve_physical(&raw) {
            Some(physical) if physical != lexical => vec![lexical, physical],
            _ => vec![lexical],
        }
    }

    /// Expand `~` and make `path` absolute against the cwd, folding `.` and `..` lexically.
    /// Symlinks are not resolved here; the policy engine does that.
    ///
    /// A UNC path (`\\\\host\\share\\x`, `\\\\?\\UNC\\host\\share\\x`, `\\??\\UNC\\...`, and
    /// `//host/share/x` when the session runs on a Windows drive) keeps its leading `//`, so the
    /// policy can tell a network path from a local one ([`is_unc`]); every other path has one
    /// leading `/`.
    pub fn resolve_path(&self, path: &str) -> PathBuf {
        let posix = windows_to_posix(path).or_else(|| {
            (is_unc_str(path) && is_drive_form(&self.project_root)).then(|| path.to_owned())
        });
        let unc = posix.as_deref().is_some_and(is_unc_str);
        let path = posix.as_deref().unwrap_or(path);
        if unc {
            // `normalize` would fold the leading `//` into `/`: fold the rest, then put it back.
            let rest = normalize(Path::new(&path[1..]));
            let mut unc = std::ffi::OsString::from("/");
            unc.push(rest.as_os_str());
            return PathBuf::from(unc);
        }
        let p = if path == "~" {
            self.home.clone()
        } else if let Some(rest) = path.strip_prefix("~/") {
            // `~//x` is `$HOME/x`, not `/x`.
            self.home.join(rest.trim_start_matches('/'))
        } else {
            PathBuf::from(path)
        };
        let abs = if p.is_absolute() { p } else { self.cwd.join(p) };
        normalize(&abs)
    }

    /// True when `path` (absolute, normalised) is inside one of the working directories,
    /// compared by components.
    pub fn is_in_working_dirs(&self, path: &Path) -> bool {
        self.working_dirs.iter().any(|d| path.starts_with(d))
    }

    /// A variable of the subprocess environment.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }
}

/// A Windows spelling of a path in POSIX form: `C:\\Users\\x`, `C:/Users/x`, `\\\\?\\C:\\x` and
/// `\\??\\C:\\x` become `/c/Users/x`, so rules written for one spelling cover the others;
/// each name loses the trailing dots and spaces Windows drops and the stream it names
/// (`C:\\x.\\f::$DATA` is `/c/x/f`). `None` for paths that are not in a Windows form.
///
/// UNC paths keep a leading `//`: `\\\\host\\share\\x`, `\\\\?\\UNC\\host\\share\\x`,
/// `\\??\\UNC\\host\\share\\x`, `//?/UNC/host/share/x` and a `//host/share\\x` spelled with
/// backslashes become `//host/share/x`; other device paths (`\\\\.\\pipe\\x`,
/// `\\\\?\\Volume{…}\\x`) become `//.` or `//?` forms of the same kind. Either way [`is_unc`] is
/// true of the result: it names no local file.
pub fn windows_to_posix(path: &str) -> Option<String> {
    let prefixed = |pre: &str| {
        path.get(..pre.len())
            .filter(|h| h.eq_ignore_ascii_case(pre))
            .map(|_| &path[pre.len()..])
    };
    if let Some(rest) = prefixed("\\\\?\\UNC\\")
        .or_else(|| prefixed("\\??\\UNC\\"))
        .or_else(|| prefixed("\\\\.\\UNC\\"))
        .or_else(|| prefixed("//?/UNC/"))
        .or_else(|| prefixed("//./UNC/"))
    {
        return Some(format!("//{}", rest.replace('\\', "/")));
    }
    let p = path
        .strip_prefix("\\\\?\\")
        .or_else(|| path.strip_prefix("\\??\\"))
        .or_else(|| path.strip_prefix("\\\\.\\"))
        .or_else(|| path.strip_prefix("//?/"))
        .or_else(|| path.strip_prefix("//./"))
        .unwrap_or(path);
    let b = p.as_bytes();
    if b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || b[2] == b'\\' || b[2] == b'/')
    {
        // Windows drops a name's trailing dots and spaces (`.aws.` is `.aws`), and `:NAME` or
        // `::$DATA` names a stream of the file (`::$DATA` its content): the file is the same.
        let rest = p[2..]
            .replace('\\', "/")
            .split('/')
            .map(|c| {
                let c = c.split(':').next().unwrap_or(c);
                if c.chars().all(|ch| ch == '.') {
                    c
                } else {
                    c.trim_end_matches(['.', ' '])
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        return Some(format!(
            "/{}{}",
            (b[0] as char).to_ascii_lowercase(),
            if rest.is_empty() {
                "/".to_owned()
            } else {
                rest
            }
        ));
    }
    // Not a drive: a device path under an NT prefix, or a UNC path.
    if p.len() != path.len() {
        let device = &path[..path.len() - p.len()];
        let kind = if device.contains('.') { "." } else { "?" };
        return Some(format!("//{kind}/{}", p.replace('\\', "/")));
    }
    if (path.starts_with("\\\\") || (path.starts_with("//") && path.contains('\\')))
        && path[2..].starts_with(|c: char| c != '\\' && c != '/')
    {
        return Some(format!("//{}", path[2..].replace('\\', "/")));
    }
    None
}

/// Does `path` (as [`ToolContext::resolve_path`] gives it) name a UNC or device path: exactly
/// two leading slashes?
pub fn is_unc(path: &Path) -> bool {
    path.to_str().is_some_and(is_unc_str)
}

fn is_unc_str(path: &str) -> bool {
    path.starts_with("//") && path[2..].starts_with(|c: char| c != '/')
}

/// Is `path` the POSIX form of a Windows drive path (`/c/...`: a first component of one ASCII
/// letter)?
pub fn is_drive_form(path: &Path) -> bool {
    let mut parts = path.components();
    parts.next() == Some(Component::RootDir)
        && parts.next().is_some_and(|c| {
            let b = c.as_os_str().as_encoded_bytes();
            b.len() == 1 && b[0].is_ascii_alphabetic()
        })
}

/// `path` walked as the kernel walks it: each symbolic link followed where it is met, `..`
/// taken from there; once a component does not exist, the rest lexically. `None` for a
/// relative path, one without `..`, or a loop of links.
pub fn resolve_physical(path: &Path) -> Option<PathBuf> {
    if !path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    follow_links(path)
}

/// `path` walked as the kernel walks it, with or without `..` in it: each symbolic link
/// followed where it is met, a dangling one too (to where it would lead); once a component
/// does not exist, the rest lexically. `None` for a relative path or a loop of links.
pub fn follow_links(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    if !path.is_absolute() || path.as_os_str().len() > crate::MAX_PATH_BYTES {
        return None;
    }
    let mut pending: std::collections::VecDeque<std::ffi::OsString> = path
        .components()
        .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut cur = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = pending.pop_front() {
        if c == "." {
            continue;
        }
        if c == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&c);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > 40 {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for t in target
                    .components()
                    .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
                    .rev()
                {
                    pending.push_front(t.as_os_str().to_owned());
                }
            }
            Ok(_) => cur = next,
            // A name that is not there, then `..`: the kernel would stop; read lexically
            // (as the tools open it) and walk on.
            Err(_) if pending.front().is_some_and(|n| n == "..") => {
                pending.pop_front();
            }
            Err(_) => {
                let rest: PathBuf = pending.iter().collect();
                return Some(normalize(&next.join(rest)));
            }
        }
    }
    Some(cur)
}

/// Fold `.` and `..` components and repeated separators without touching the file system.
/// `..` at the root stays at the root.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
                if out.as_os_str().is_empty() && path.is_absolute() {
                    out.push("/");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_home_and_dots() {
        let mut c = ToolContext::new("/work/proj", "/home/u", "/tmp/r");
        c.cwd = "/work/proj/sub".into();
        assert_eq!(
            c.resolve_path("a.txt"),
            PathBuf::from("/work/proj/sub/a.txt")
        );
        assert_eq!(c.resolve_path("../b/./c"), PathBuf::from("/work/proj/b/c"));
        assert_eq!(c.resolve_path("~/x"), PathBuf::from("/home/u/x"));
        assert_eq!(c.resolve_path("/a//b/../c"), PathBuf::from("/a/c"));
        assert_eq!(c.resolve_path("/../../x"), PathBuf::from("/x"));
        assert_eq!(
            c.resolve_path("C:\\Users\\a\\x"),
            PathBuf::from("/c/Users/a/x")
        );
        assert_eq!(
            c.resolve_path("\\\\?\\C:\\Users\\a"),
            PathBuf::from("/c/Users/a")
        );
        assert_eq!(c.resolve_path("d:/x/../y"), PathBuf::from("/d/y"));
        assert_eq!(windows_to_posix("notes:txt"), None);
        // Windows drops a name's trailing dots and spaces, and a stream names the same file.
        for same in [
            "C:\\Users\\a\\.aws.\\credentials",
            "C:\\Users\\a\\.aws\\credentials::$DATA",
            "C:\\Users\\a\\.aws \\credentials:extra",
            "c:/Users/a/.aws../credentials.",
        ] {
            assert_eq!(
                windows_to_posix(same).as_deref(),
                Some("/c/Users/a/.aws/credentials"),
                "{same}"
            );
        }
        assert_eq!(
            windows_to_posix("C:\\a\\..\\b").as_deref(),
            Some("/c/a/../b")
        );
        // UNC and NT forms keep their two leading slashes; plain `//x` on POSIX is `/x`.
        for unc in [
            "\\\\host\\share\\a\\..\\x",
            "\\\\?\\UNC\\host\\share\\x",
            "\\??\\unc\\host\\share\\x",
            "//?/UNC/host/share/x",
            "//host/share\\x",
        ] {
            assert_eq!(
                c.resolve_path(unc),
                PathBuf::from("//host/share/x"),
                "{unc}"
            );
            assert!(is_unc(&c.resolve_path(unc)), "{unc}");
        }
        assert!(is_unc(&c.resolve_path("\\\\.\\pipe\\x")));
        assert_eq!(
            c.resolve_path("//host/share/x"),
            PathBuf::from("/host/share/x")
        );
        assert!(!is_unc(&c.resolve_path("//host/share/x")));
        let w = ToolContext::new("C:\\w\\p", "/home/u", "/tmp/r");
        assert!(is_drive_form(&w.project_root));
        assert!(is_unc(&w.resolve_path("//host/share/x")));
        assert!(!is_drive_form(Path::new("/cc/x")));
    }

    #[test]
    fn working_dir_containment_is_by_component() {
        let c = ToolContext::new("/work/proj", "/home/u", "/tmp/r");
        assert!(c.is_in_working_dirs(Path::new("/work/proj/a")));
        assert!(c.is_in_working_dirs(Path::new("/work/proj")));
        assert!(!c.is_in_working_dirs(Path::new("/work/project2/a")));
    }
}

/// The longest path the system opens (Linux's `PATH_MAX`); a longer one names nothing that
/// can be read or written, and is not resolved.
pub const MAX_PATH_BYTES: usize = 4096;

/// Where `path` (absolute) leads now: every symbolic link resolved, in the longest prefix that
/// exists; the components after it (a file or directories not created yet) appended as they
/// are. Two calls give different answers exactly when a link on the way was made, removed or
/// changed in between.
pub fn resolve_target(path: &Path) -> PathBuf {
    resolve_within(path, 0)
}

/// [`resolve_target`], following at most 40 dangling links (as the kernel follows at most 40
/// links in one lookup): a cycle ends there, at the path reached.
fn resolve_within(path: &Path, links: usize) -> PathBuf {
    if path.as_os_str().len() > MAX_PATH_BYTES {
        return path.to_path_buf();
    }
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let rebuild =
        |base: PathBuf, rest: &[std::ffi::OsString]| rest.iter().rev().fold(base, |p, c| p.join(c));
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return rebuild(real, &rest);
        }
        // A dangling link (or one in a cycle): where it points, resolved the same way.
        if let Ok(target) = std::fs::read_link(&existing) {
            if links >= 40 {
                return rebuild(existing, &rest);
            }
            let parent = existing.parent().unwrap_or(Path::new("/"));
            let next = normalize(&parent.join(target));
            return rebuild(resolve_within(&next, links + 1), &rest);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return rebuild(existing, &rest),
        }
    }
}

#[cfg(all(test, unix))]
mod resolve_tests {
    use super::*;

    #[test]
    fn targets_follow_links_dangling_ones_and_cycles_end() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        assert_eq!(
            resolve_target(&root.join("link/new/f.txt")),
            root.join("real/new/f.txt")
        );
        std::os::unix::fs::symlink(root.join("gone/x"), root.join("dangling")).unwrap();
        assert_eq!(resolve_target(&root.join("dangling")), root.join("gone/x"));
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let cyc = resolve_target(&root.join("a"));
        assert!(cyc == root.join("a") || cyc == root.join("b"), "{cyc:?}");
        assert_eq!(
            resolve_target(&root.join("plain.txt")),
            root.join("plain.txt")
        );
    }
}
