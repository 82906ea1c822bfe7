//! The policy as run-time enforcement: for one Bash line, the sandbox's plan of the file
//! system and the network, and the judge the exec supervisor and the network filter ask while
//! it runs ([`tool_core::sandbox::SandboxPolicy`]).
//!
//! The plan is what the rules say, found on the file system when the call starts:
//! - writable: the working directories, the session's temporary directory (Bash adds it),
//!   `sandbox.filesystem.allowWrite`, the directories whole-directory Edit allow rules name,
//!   and, for a line the user approved, the places its writes go; in bypass mode (when the
//!   sandbox is on by default rather than by a setting), everything, as the mode allows;
//! - read-only, even inside those: every protected path found there (`.git/hooks`,
//!   `.git/config`, `.claude/`, `.toolgate/`, `.vscode/`, `.idea/`, shell start-up files,
//!   `.mcp.json`, …), what Edit deny rules and `denyWrite` cover, and the policy's own files;
//! - hidden: what Read deny rules and `denyRead` cover (less `allowRead`), found by walking
//!   the directories those patterns can match in;
//! - absent: protected names missing from a working directory (`.claude`, `.toolgate`,
//!   `.mcp.json`, a repository's `hooks` and `config`) and literal Edit-denied paths, so the
//!   command cannot create them;
//! - the network: through the filter when any domain is allowed (`WebFetch(domain:…)` allow
//!   rules, `allowedDomains`) or the sandbox was enabled by a setting (Claude Code's sandbox
//!   always filters); otherwise none.
//!
//! The judge decides each program a running line executes: a program the line's own shell
//! starts that the analysis foresaw (same words, same directory) needs only to pass the deny
//! rules; one it did not foresee is decided like a line of its own, with the full policy (an
//! allow, an ask, a deny); a program started by another program meets only the deny and ask
//! rules. A connection is allowed for an allowed domain, refused for a denied one, and asks
//! otherwise.

mod repository;
pub(crate) mod settings;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::sandbox::{
    AbsentPath, ExecRequest, MountPlan, NetworkPlan, PlannedPath, RunJudge, SandboxMode,
    SandboxPolicy, SandboxSpec,
};
use tool_core::{
    Decision, DecisionReason, PermissionPolicy, PermissionRequest, PermissionSubject, RuleList,
    ToolContext, Verdict,
};

use crate::policy::{PathFamily, Policy, RuleMatcher};

/// Most directory entries one plan's walks look at.
const WALK_ENTRIES: usize = 200_000;
/// Longest one plan's walks may take.
const WALK_TIME: Duration = Duration::from_secs(2);

/// Directories whose whole contents stay read-only in the sandbox.
const READ_ONLY_DIRS: &[&str] = &[".toolgate", ".vscode", ".idea"];
/// What stays read-only inside a `.claude` directory: its settings and the directories of
/// commands, agents, skills, hooks and workflows it runs (notes and worktrees stay writable,
/// as under Claude Code's sandbox).
const CLAUDE_PROTECTED: &[&str] = &[
    "settings.json",
    "settings.local.json",
    "commands",
    "agents",
    "skills",
    "hooks",
    "workflows",
];
/// Names missing from a working directory that the command may not create (Claude Code's
/// sandbox holds the same ones; recorded: sb_protected_absent).
const ABSENT_NAMES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    ".mcp.json",
    ".vscode",
    ".idea",
];
/// Names that would make a working directory a bare repository for git (with a `config` that
/// runs programs): whatever a command creates there is removed when it ends, as Claude Code's
/// sandbox does (recorded: sb_protected_absent).
const BARE_REPOSITORY_NAMES: &[&str] = &["HEAD", "objects", "refs"];
/// Inside a repository's `.git`: its hooks and the files whose settings run programs or lend
/// it another object store.
const GIT_PROTECTED: &[&str] = &[
    "hooks",
    "config",
    "config.worktree",
    "commondir",
    "objects/info/alternates",
];

/// What the walk makes of one entry.
#[derive(Debug, Clone)]
enum Seen {
    /// Covered by a Read deny: hidden, not entered.
    Hidden(String),
    /// Protected or Edit-denied: read-only, not entered.
    ReadOnly(String),
    /// A repository's `.git`: its own protected files are looked up each time.
    Repository,
    /// A directory to go into.
    Descend,
    /// Nothing to do.
    Leaf,
}

/// A directory's identity and last change, to tell whether what was read of it still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn stamp(dir: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::symlink_metadata(dir).ok()?;
    Some(Stamp {
        ino: m.ino(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

/// What one directory held when it was read, and what the walk made of each entry.
#[derive(Debug, Clone)]
struct DirRecord {
    stamp: Stamp,
    /// When it was read (nanoseconds since the epoch).
    read_at: i128,
    /// The context the entries were judged in (see [`Walk::context`]).
    context: u64,
    entries: Vec<(PathBuf, bool, Seen)>,
}

/// What earlier plans read of each directory, so a plan reads again only directories that
/// changed: a directory whose change time is the same as when it was read, and which had not
/// changed for [`SETTLED`] before that read (file times come from a coarse clock, so a change
/// in the same tick as the read would not show), holds what it held. Kept by the policy, whose
/// rules the judgements were made with.
#[derive(Debug, Default)]
pub(crate) struct WalkCache(Mutex<HashMap<PathBuf, DirRecord>>);

impl WalkCache {
    /// What `dir` held when it was last read, if that was by `by` (nanoseconds since the
    /// epoch): its stamp then, when it was read, and its entries (path, is a directory).
    #[allow(clippy::type_complexity)]
    fn read_by(&self, dir: &Path, by: i128) -> Option<(Stamp, i128, Vec<(PathBuf, bool)>)> {
        let cache = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let r = cache.get(dir)?;
        (r.read_at <= by).then(|| {
            (
                r.stamp,
                r.read_at,
                r.entries.iter().map(|(p, d, _)| (p.clone(), *d)).collect(),
            )
        })
    }
}

/// What a walk found, and whether it saw everything.
struct Walk<'a> {
    /// Entries read from disk (what the budget counts).
    entries: usize,
    deadline: Instant,
    cut: Vec<PathBuf>,
    cache: &'a WalkCache,
    context: u64,
    /// The git directories and `.git` files met.
    git: repository::Seen,
    /// The directories walked inside writable ones (their entries are in the cache).
    open_dirs: Vec<PathBuf>,
}

/// How long a directory must have been unchanged, when it was read, for the reading to be
/// reused: well over the coarse clock's tick.
const SETTLED: i128 = 100_000_000;

fn now_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

fn nanos((secs, nsec): (i64, i64)) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsec)
}

impl<'a> Walk<'a> {
    fn new(cache: &'a WalkCache, context: u64) -> Self {
        Self {
            entries: 0,
            deadline: Instant::now() + WALK_TIME,
            cut: Vec::new(),
            cache,
            context,
            git: repository::Seen::default(),
            open_dirs: Vec::new(),
        }
    }

    /// The entries of `dir` as `classify` sees them: from the cache when the directory has not
    /// changed, else read and judged now.
    fn entries(&mut self, dir: &Path, classify: &Classifier) -> Option<Vec<(PathBuf, bool, Seen)>> {
        let now = stamp(dir)?;
        {
            let cache = self
                .cache
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(r) = cache.get(dir)
                && r.stamp == now
                && r.context == self.context
                && r.read_at >= nanos(now.ctime).max(nanos(now.mtime)) + SETTLED
            {
                return Some(r.entries.clone());
            }
        }
        let read_at = now_nanos();
        let rd = std::fs::read_dir(dir).ok()?;
        let mut entries = Vec::new();
        for entry in rd.flatten() {
            self.entries += 1;
            if self.entries > WALK_ENTRIES || Instant::now() > self.deadline {
                self.cut.push(dir.to_path_buf());
                return None;
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let seen = classify.seen(&path, is_dir);
            entries.push((path, is_dir, seen));
        }
        self.cache
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                dir.to_path_buf(),
                DirRecord {
                    stamp: now,
                    read_at,
                    context: self.context,
                    entries: entries.clone(),
                },
            );
        Some(entries)
    }

    /// Walk everything below `root` (not following links), collecting what is hidden and what
    /// is read-only. Inside a read-only directory or a repository's `.git` (not its object
    /// store) only what is hidden is looked for: a Read deny covers files there too.
    fn run(
        &mut self,
        root: &Path,
        classify: &Classifier,
        hidden: &mut Vec<PlannedPath>,
        read_only: &mut Vec<PlannedPath>,
        walked: &[PathBuf],
    ) {
        /// File systems of the kernel's own: the sandbox mounts fresh ones, nothing to hide.
        const PSEUDO: &[&str] = &["/proc", "/sys", "/dev"];
        let skip =
            |p: &Path| walked.iter().any(|w| w == p) || PSEUDO.iter().any(|s| p == Path::new(s));
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Within {
            /// A writable (or plain readable) directory.
            Open,
            /// A read-only directory: only hidden paths matter.
            ReadOnly,
            /// A repository's git directory: only hidden paths, its objects left alone.
            Git,
        }
        let inside = classify.hides_anything();
        let mut stack = vec![(root.to_path_buf(), Within::Open)];
        while let Some((dir, within)) = stack.pop() {
            if skip(&dir) {
                continue;
            }
            let Some(entries) = self.entries(&dir, classify) else {
                if !self.cut.is_empty() {
                    return;
                }
                continue;
            };
            if within != Within::Open {
                for (path, is_dir, seen) in entries {
                    match seen {
                        Seen::Hidden(why) => hidden.push(PlannedPath::new(path, why)),
                        _ if !is_dir => {}
                        _ if within == Within::Git
                            && path.file_name().is_some_and(|n| n == "objects") => {}
                        Seen::Repository => stack.push((path, Within::Git)),
                        _ => stack.push((path, within)),
                    }
                }
                continue;
            }
            if repository::is_git_dir(entries.iter().map(|(p, d, _)| (p.as_path(), *d))) {
                self.git.dirs.insert(dir.clone());
            }
            if under(&dir, &classify.writable_roots) {
                self.open_dirs.push(dir.clone());
            }
            for (path, is_dir, seen) in entries {
                if !is_dir && path.file_name().is_some_and(|n| n == ".git") {
                    self.git.files.insert(path.clone());
                }
                match seen {
                    Seen::Hidden(why) => hidden.push(PlannedPath::new(path, why)),
                    Seen::ReadOnly(why) => {
                        if is_dir && inside {
                            stack.push((path.clone(), Within::ReadOnly));
                        }
                        read_only.push(PlannedPath::new(path, why));
                    }
                    Seen::Repository => {
                        let mut linked = Vec::new();
                        repository::linked_dirs(&path, &mut linked);
                        self.git.dirs.extend(linked);
                        self.git.dirs.insert(path.clone());
                        repository(&path, read_only);
                        if inside {
                            stack.push((path, Within::Git));
                        }
                    }
                    Seen::Descend if is_dir => stack.push((path, Within::Open)),
                    Seen::Descend | Seen::Leaf => {}
                }
            }
        }
    }
}

/// A repository's `.git` (or a submodule's git directory under `.git/modules`): its hooks and
/// the files that run programs or lend it objects stay read-only; the rest (objects, refs, the
/// index) is what `git commit` writes.
fn repository(git: &Path, read_only: &mut Vec<PlannedPath>) {
    let mut dirs = vec![git.to_path_buf()];
    repository::linked_dirs(git, &mut dirs);
    for d in dirs {
        for inner in GIT_PROTECTED {
            let q = d.join(inner);
            if std::fs::symlink_metadata(&q).is_ok() {
                read_only.push(PlannedPath::new(q, "a protected path"));
            }
        }
    }
}

/// What becomes of one path the walk meets inside a writable directory, as a protected path.
/// By name alone, whatever the entry is (a link named `.toolgate` is the policy's directory
/// for everyone who follows it).
fn protected_here(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if READ_ONLY_DIRS.contains(&name.as_str()) {
        return Some("a protected directory");
    }
    let in_claude = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|p| p.eq_ignore_ascii_case(".claude"));
    if in_claude && CLAUDE_PROTECTED.contains(&name.as_str()) {
        return Some("the agent's configuration");
    }
    if crate::protected::protected_file_name(&name) {
        return Some("a protected file");
    }
    None
}

/// The name a new entry of a directory is tried under, to see whether a rule denies what
/// could be made there (a name no pattern names on purpose, without an extension).
const NEW_ENTRY: &str = "toolgate-new-entry";

/// Does the sandbox keep `path` as it is, whatever the command and whatever the rules say (a
/// protected path: the agent's and editors' configuration, shell start-up files, a
/// repository's hooks and the files that make git run programs)? Why, when it does. The rest
/// of a `.git` (objects, refs, the index) is what `git commit` writes, so it is not.
pub fn kept_read_only(path: &Path) -> Option<&'static str> {
    let parts: Vec<&std::ffi::OsStr> = path
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .map(|c| c.as_os_str())
        .collect();
    let git_tail = |tail: &[&std::ffi::OsStr]| {
        GIT_PROTECTED.iter().any(|g| {
            let want: Vec<&str> = g.split('/').collect();
            tail.len() >= want.len()
                && want
                    .iter()
                    .zip(tail)
                    .all(|(w, t)| t.eq_ignore_ascii_case(w))
        })
    };
    let mut at = PathBuf::from("/");
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        if let Some(why) = protected_here(&at) {
            return Some(why);
        }
        if part.eq_ignore_ascii_case(".git") {
            // The repository's own files, and those of each submodule's git directory.
            let mut j = i + 1;
            loop {
                if git_tail(&parts[j.min(parts.len())..]) {
                    return Some("a protected path");
                }
                match parts.get(j) {
                    Some(m)
                        if (m.eq_ignore_ascii_case("modules")
                            || m.eq_ignore_ascii_case("worktrees"))
                            && j + 2 <= parts.len() =>
                    {
                        j += 2;
                    }
                    _ => break,
                }
            }
        }
    }
    None
}

/// Is `bwrap` where the sandbox would look for it (`TOOLGATE_BWRAP`, or the commands' `PATH`)?
fn bwrap_present(ctx: &ToolContext) -> bool {
    if let Some(p) = std::env::var_os("TOOLGATE_BWRAP") {
        return Path::new(&p).is_file();
    }
    let path = ctx
        .env_var("PATH")
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path).any(|d| d.join("bwrap").is_file())
}

/// The names of the file `id` (device, inode) under `places`, on that device only, looked for
/// within one budget, place by place in order (a directory met before is not read again);
/// below `skip` (walked already) nothing is looked at; `enough` names end the search.
fn links_to(id: (u64, u64), places: &[PathBuf], skip: &[PathBuf], enough: usize) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    const BUDGET: usize = 50_000;
    let deadline = Instant::now() + Duration::from_millis(500);
    let mut seen = 0usize;
    let mut out = Vec::new();
    let mut read: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for place in places {
        if skip.contains(place)
            || !std::fs::symlink_metadata(place).is_ok_and(|m| m.is_dir() && m.dev() == id.0)
        {
            continue;
        }
        let mut stack = vec![place.clone()];
        while let Some(dir) = stack.pop() {
            if !read.insert(dir.clone()) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                seen += 1;
                if seen > BUDGET || Instant::now() > deadline || out.len() >= enough {
                    return out;
                }
                let Ok(m) = e.metadata() else {
                    continue;
                };
                if m.dev() != id.0 {
                    continue;
                }
                if m.is_dir() {
                    let path = e.path();
                    if !skip.contains(&path) {
                        stack.push(path);
                    }
                } else if m.is_file() && m.ino() == id.1 && !out.contains(&e.path()) {
                    out.push(e.path());
                }
            }
        }
    }
    out
}

/// Does `path` lie at or below one of `roots`?
fn under(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

/// Keep the outermost of nested roots, once each.
fn outermost(mut roots: Vec<PathBuf>) -> Vec<PathBuf> {
    roots.sort();
    roots.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        if !out.iter().any(|o| r.starts_with(o)) {
            out.push(r);
        }
    }
    out
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| tool_core::normalize(p))
}

/// Gitignore lines anchored at `/` (absolute paths and patterns), compiled once.
fn absolute_matcher(lines: &[String]) -> Option<crate::gitignore::Gitignore> {
    if lines.is_empty() {
        return None;
    }
    let mut b = crate::gitignore::GitignoreBuilder::new();
    for l in lines {
        let _ = b.add_line(l);
    }
    b.build().ok()
}

fn absolute_match(m: Option<&crate::gitignore::Gitignore>, path: &Path, is_dir: bool) -> bool {
    let Some(m) = m else { return false };
    let Ok(rel) = path.strip_prefix("/") else {
        return false;
    };
    !rel.as_os_str().is_empty() && m.matched_path_or_any_parents(rel, is_dir).is_ignore()
}

/// The literal directory a path setting starts with (before any wildcard).
fn literal_base(p: &str) -> PathBuf {
    let mut base = PathBuf::from("/");
    for seg in p.trim_start_matches('/').split('/') {
        if settings::has_glob(seg) {
            break;
        }
        base.push(seg);
    }
    base
}

impl Policy {
    fn sandbox_settings(&self) -> &settings::SandboxSettings {
        &self.sandbox
    }

    /// Writes this line makes outside the writable places fail in the sandbox: the sandbox was
    /// enabled by a setting (as in Claude Code, where such a write then runs and meets a
    /// read-only file system instead of a prompt; recorded: sb_enabled_write_outside), bubblewrap
    /// is there to run it, and the line is not excluded from it. Where the sandbox is only on by
    /// toolgate's default, or cannot run, the write asks as it always did.
    pub(crate) fn sandbox_contains_writes(&self, command: &str, ctx: &ToolContext) -> bool {
        let (mode, _, explicit) = self.sandbox_mode();
        explicit
            && mode != SandboxMode::Off
            && bwrap_present(ctx)
            && self.excluded_by(command, ctx).is_none()
    }

    /// The sandbox is on and a call may ask to run outside it.
    pub(crate) fn sandbox_lets_calls_out(&self) -> bool {
        self.sandbox_mode().0 != SandboxMode::Off
            && settings::highest(&self.sandbox.allow_unsandboxed).is_none_or(|x| x.value)
    }

    /// The sandbox mode the settings ask for, and which setting says so.
    fn sandbox_mode(&self) -> (SandboxMode, String, bool) {
        let s = self.sandbox_settings();
        let enabled = settings::highest(&s.enabled);
        let required = settings::highest(&s.fail_if_unavailable).filter(|x| x.value);
        match (enabled, required) {
            (Some(e), _) if !e.value => (SandboxMode::Off, e.source.clone(), false),
            (e, Some(r)) => (SandboxMode::Required, r.source.clone(), e.is_some()),
            (Some(e), None) => (SandboxMode::On, e.source.clone(), true),
            (None, None) => (
                SandboxMode::On,
                "toolgate's default (sandbox.enabled not set)".into(),
                false,
            ),
        }
    }

    /// The pattern of `sandbox.excludedCommands` every unit of the line matches, if any: such
    /// a line runs outside the sandbox (it was decided like any other).
    fn excluded_by(&self, command: &str, ctx: &ToolContext) -> Option<String> {
        let s = self.sandbox_settings();
        if s.excluded.is_empty() {
            return None;
        }
        let a = Self::analyze_shell(command, ctx);
        if !a.parsed || !a.problems.is_empty() {
            return None;
        }
        let units: Vec<_> = a
            .units
            .iter()
            .filter(|u| !u.is_bare() && u.origin == tool_shell::analyze::Origin::Line)
            .collect();
        if units.is_empty() {
            return None;
        }
        let mut by = None;
        for u in units {
            let forms = crate::shell_policy::unit_forms(u);
            let hit = s
                .excluded
                .iter()
                .find(|x| forms.iter().any(|f| x.value.matches(f)))?;
            by.get_or_insert_with(|| hit.source.clone());
        }
        by
    }

    /// The mount plan for a line run in `ctx`.
    fn mount_plan(
        self: &Arc<Self>,
        command: &str,
        ctx: &ToolContext,
        explicit: bool,
    ) -> (MountPlan, Option<Watch>) {
        let s = self.sandbox_settings();
        let mut plan = MountPlan::default();
        // Writable.
        let mut writable: Vec<(PathBuf, String)> = ctx
            .working_dirs
            .iter()
            .map(|d| (d.clone(), "a working directory".to_owned()))
            .collect();
        for w in &s.allow_write {
            if settings::has_glob(&w.value) {
                continue;
            }
            writable.push((settings::expand_home(&w.value, ctx), w.source.clone()));
        }
        for e in self.rules() {
            if e.list != RuleList::Allow {
                continue;
            }
            if let RuleMatcher::Path {
                family: PathFamily::Edit,
                pattern,
            } = &e.matcher
                && !pattern
                    .line
                    .trim_start_matches('/')
                    .contains(['*', '?', '[', '\\'])
                && pattern.line.contains('/')
            {
                writable.push((pattern.base(ctx), e.source()));
            }
        }
        // A setting or an allow rule never makes a protected or Edit-denied path writable.
        writable.retain(|(p, _)| {
            let p = canonical(p);
            kept_read_only(&p).is_none()
                && self
                    .lexical_path_rule(RuleList::Deny, PathFamily::Edit, &p, ctx)
                    .is_none()
        });
        if matches!(
            ctx.allowed_by,
            Some(DecisionReason::Approver { approved: true })
        ) {
            // The user saw the line and let it write where it writes, protected or not.
            for w in self.line_writes(command, ctx) {
                let target = if w.exists() {
                    w
                } else {
                    match w.ancestors().skip(1).find(|a| a.is_dir()) {
                        Some(a) => a.to_path_buf(),
                        None => continue,
                    }
                };
                writable.push((target, "a write the user approved".into()));
            }
        }
        let writable: Vec<(PathBuf, String)> = writable
            .into_iter()
            .filter(|(p, _)| p.exists())
            .map(|(p, why)| (canonical(&p), why))
            .collect();
        let writable_roots: Vec<PathBuf> = writable.iter().map(|(p, _)| p.clone()).collect();
        plan.writable = writable
            .iter()
            .map(|(p, why)| PlannedPath::new(p, why))
            .collect();
        // What the walks look for.
        let expanded = |v: &[settings::Setting<String>]| -> Vec<(String, String)> {
            v.iter()
                .map(|x| {
                    (
                        settings::expand_home(&x.value, ctx)
                            .to_string_lossy()
                            .into_owned(),
                        x.source.clone(),
                    )
                })
                .collect()
        };
        let deny_read_paths = expanded(&s.deny_read);
        let allow_read_paths = expanded(&s.allow_read);
        let deny_write_paths = expanded(&s.deny_write);
        let lines = |v: &[(String, String)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        let (drl, arl, dwl) = (
            lines(&deny_read_paths),
            lines(&allow_read_paths),
            lines(&deny_write_paths),
        );
        let has_read_denies = self.has_path_rules(RuleList::Deny, PathFamily::Read);
        // Denied files that have other names (hard links): every name the walks meet is
        // hidden too (a link cannot be made across the mask, but one made before can be read).
        let linked: HashMap<(u64, u64), (PathBuf, String, u64)> = if has_read_denies {
            use std::os::unix::fs::MetadataExt as _;
            let walked = self.identities(PathFamily::Read, ctx);
            walked
                .linked
                .iter()
                .filter_map(|(p, id, i)| {
                    let md = std::fs::metadata(p).ok()?;
                    ((md.dev(), md.ino()) == *id && md.nlink() > 1).then(|| {
                        let rule = self
                            .rules()
                            .get(*i)
                            .map_or_else(String::new, |e| e.text.clone());
                        (*id, (p.clone(), rule, md.nlink()))
                    })
                })
                .collect()
        } else {
            HashMap::new()
        };
        let classifier = Arc::new(Classifier {
            policy: Arc::clone(self),
            ctx: ctx.clone(),
            deny_read: absolute_matcher(&drl),
            allow_read: absolute_matcher(&arl),
            deny_write: absolute_matcher(&dwl),
            has_read_denies,
            has_edit_denies: self.has_path_rules(RuleList::Deny, PathFamily::Edit),
            linked,
            writable_roots: writable_roots.clone(),
            aliases: {
                // Each deny rule's base, where a link on its way makes it another place.
                // (For a relative rule that covers its path at any depth, also the place it
                // names at the start: `./config/secret.key` through a linked `config/`.)
                let mut bases: Vec<PathBuf> = self
                    .rules()
                    .iter()
                    .filter(|e| e.list == RuleList::Deny)
                    .filter_map(|e| match &e.matcher {
                        RuleMatcher::Path { pattern, .. } => {
                            Some([Some(pattern.base(ctx)), pattern.named_tree(ctx)])
                        }
                        _ => None,
                    })
                    .flatten()
                    .flatten()
                    .collect();
                bases.extend(drl.iter().chain(&dwl).map(|p| literal_base(p)));
                let mut aliases: Vec<(PathBuf, PathBuf)> = Vec::new();
                for b in bases {
                    let named = tool_core::normalize(&b);
                    let Some(at) = named.ancestors().find(|a| a.exists()) else {
                        continue;
                    };
                    let real = canonical(at);
                    if real != at && !aliases.iter().any(|(r, n)| *r == real && n == at) {
                        aliases.push((real, at.to_path_buf()));
                    }
                }
                aliases
            },
        });
        // Where to walk, most important first (the walk has a budget): the writable
        // directories (protected paths and Edit denies can only matter there), the home
        // directory where a Read deny reaches it (keys and credentials live there), then the
        // rest of what Read denies can match in. A directory walked once is not walked again
        // as part of a wider root.
        let mut bases: Vec<PathBuf> = Vec::new();
        for e in self.rules() {
            if let RuleMatcher::Path {
                family: PathFamily::Read,
                pattern,
            } = &e.matcher
                && e.list == RuleList::Deny
            {
                bases.push(pattern.base(ctx));
            }
        }
        for (p, _) in &deny_read_paths {
            bases.push(literal_base(p));
        }
        let existing = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            outermost(
                v.into_iter()
                    .filter(|r| r.exists())
                    .map(|r| canonical(&r))
                    .collect(),
            )
        };
        let bases = existing(bases);
        let home = canonical(&ctx.home);
        let mut roots: Vec<PathBuf> = existing(writable_roots.clone());
        if bases.iter().any(|b| home.starts_with(b) && *b != home) {
            roots.push(home);
        }
        roots.extend(bases);
        let mut ordered: Vec<PathBuf> = Vec::new();
        for r in roots {
            if !ordered.contains(&r) {
                ordered.push(r);
            }
        }
        let roots = ordered;
        let context = {
            use std::hash::{Hash as _, Hasher as _};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (&ctx.cwd, &ctx.home, &ctx.project_root, &writable_roots).hash(&mut h);
            let mut ids: Vec<&(u64, u64)> = classifier.linked.keys().collect();
            ids.sort();
            ids.hash(&mut h);
            h.finish()
        };
        let mut walk = Walk::new(&self.walk_cache, context);
        let mut hidden: Vec<PlannedPath> = Vec::new();
        let mut read_only: Vec<PlannedPath> = Vec::new();
        for (i, root) in roots.iter().enumerate() {
            // Walked already, as part of an earlier root.
            if roots[..i].iter().any(|r| root.starts_with(r)) {
                continue;
            }
            // The root itself may be covered.
            let root_dir = root.is_dir();
            if let Some(why) = classifier.why_hidden(root, root_dir) {
                hidden.push(PlannedPath::new(root, why));
                continue;
            }
            walk.run(root, &classifier, &mut hidden, &mut read_only, &roots[..i]);
        }
        // Other names (hard links made before) of what stays read-only: of the files found
        // read-only here, of the Edit-denied files the rules' walk found, and of the protected
        // files in the home directory. Found by looking at the files the walk went past, only
        // when such a file exists.
        {
            use std::os::unix::fs::MetadataExt as _;
            let mut ro_linked: HashMap<(u64, u64), String> = HashMap::new();
            let mut note = |p: &Path, why: &str| {
                if let Ok(m) = std::fs::metadata(p)
                    && m.is_file()
                    && m.nlink() > 1
                {
                    ro_linked
                        .entry((m.dev(), m.ino()))
                        .or_insert_with(|| format!("{why} (a hard link to {})", p.display()));
                }
            };
            for r in &read_only {
                note(&r.path, &r.why);
            }
            if classifier.has_edit_denies {
                for (p, _, i) in &self.identities(PathFamily::Edit, ctx).linked {
                    let rule = self
                        .rules()
                        .get(*i)
                        .map_or("an Edit deny rule", |e| e.text.as_str());
                    note(p, rule);
                }
            }
            for name in crate::protected::PROTECTED_FILES {
                note(&ctx.home.join(name), "a protected file");
            }
            for rel in [
                ".claude/settings.json",
                ".claude/settings.local.json",
                ".config/git/config",
            ] {
                note(&ctx.home.join(rel), "a protected file");
            }
            if !ro_linked.is_empty() {
                let known: std::collections::HashSet<PathBuf> =
                    read_only.iter().map(|r| r.path.clone()).collect();
                let dirs = std::mem::take(&mut walk.open_dirs);
                for dir in dirs {
                    let entries = self
                        .walk_cache
                        .read_by(&dir, i128::MAX)
                        .map(|(_, _, e)| e)
                        .unwrap_or_default();
                    for (p, is_dir) in entries {
                        if is_dir || known.contains(&p) {
                            continue;
                        }
                        if let Ok(m) = std::fs::symlink_metadata(&p)
                            && m.is_file()
                            && let Some(why) = ro_linked.get(&(m.dev(), m.ino()))
                        {
                            read_only.push(PlannedPath::new(p, why.clone()));
                        }
                    }
                }
            }
        }
        // The policy's own files stay as they are wherever they are.
        for (_, f) in self.files() {
            if f.exists() && under(&canonical(f), &writable_roots) {
                read_only.push(PlannedPath::new(canonical(f), "a policy file"));
            }
        }
        // Literal denyRead / denyWrite paths the walks did not reach (outside every root).
        for (raw, source) in &deny_read_paths {
            let p = Path::new(raw);
            if !settings::has_glob(raw)
                && p.exists()
                && !hidden.iter().any(|h| p.starts_with(&h.path))
                && !absolute_match(classifier.allow_read.as_ref(), p, p.is_dir())
            {
                hidden.push(PlannedPath::new(canonical(p), source.clone()));
            }
        }
        for (raw, source) in &deny_write_paths {
            let p = Path::new(raw);
            if !settings::has_glob(raw) && p.exists() {
                read_only.push(PlannedPath::new(canonical(p), source.clone()));
            }
        }
        // Names that do not exist yet.
        let mut absent = Vec::new();
        for d in &ctx.working_dirs {
            let d = canonical(d);
            for name in ABSENT_NAMES {
                absent.push((d.join(name), "a protected path"));
            }
            if d.join(".claude").is_dir() {
                for name in CLAUDE_PROTECTED {
                    absent.push((d.join(".claude").join(name), "the agent's configuration"));
                }
            } else {
                absent.push((d.join(".claude"), "the agent's configuration"));
            }
            if d.join(".git").is_dir() {
                for inner in GIT_PROTECTED {
                    absent.push((d.join(".git").join(inner), "a protected path"));
                }
            }
            for name in BARE_REPOSITORY_NAMES {
                absent.push((
                    d.join(name),
                    "a name that makes the directory a git repository",
                ));
            }
        }
        for e in self.rules() {
            if let RuleMatcher::Path {
                family: PathFamily::Edit,
                pattern,
            } = &e.matcher
                && e.list == RuleList::Deny
                && !pattern.line.contains(['*', '?', '[', '\\'])
                && pattern.line.contains('/')
            {
                absent.push((pattern.base(ctx), "an Edit deny rule"));
            }
        }
        // A line the user approved may write what it was approved for.
        let approved: Vec<PathBuf> = if matches!(
            ctx.allowed_by,
            Some(DecisionReason::Approver { approved: true })
        ) {
            self.line_writes(command, ctx)
        } else {
            Vec::new()
        };
        for (path, why) in absent {
            if approved
                .iter()
                .any(|w| w.starts_with(&path) || path.starts_with(w))
                || !path.parent().is_some_and(Path::is_dir)
                || !under(&path, &writable_roots)
            {
                continue;
            }
            let bare = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| BARE_REPOSITORY_NAMES.contains(&n));
            let entry = AbsentPath {
                path: path.clone(),
                silent: bare,
                why: why.into(),
            };
            let meta = std::fs::symlink_metadata(&path);
            // The bare repository's names are taken back afterwards rather than held.
            let held = explicit && !bare;
            if held {
                // Held by a stand-in, as Claude Code's sandbox holds them (a stand-in another
                // command left, an empty file, is held too).
                if meta.as_ref().map_or(true, |m| m.is_file() && m.len() == 0) {
                    plan.absent.push(entry);
                }
            } else if meta.is_err() {
                plan.undone.push(entry);
            }
        }
        // Denied files with other names the walks did not meet: looked for where names are
        // made for a file that already exists (the temporary directories, the home
        // directory), on the file's own file system only.
        {
            use std::os::unix::fs::MetadataExt as _;
            for (id, (name, rule, nlink)) in &classifier.linked {
                let found = |hidden: &[PlannedPath]| {
                    hidden
                        .iter()
                        .filter(|h| {
                            h.path != *name
                                && std::fs::symlink_metadata(&h.path)
                                    .is_ok_and(|m| m.is_file() && (m.dev(), m.ino()) == *id)
                        })
                        .count() as u64
                };
                if found(&hidden) + 1 >= *nlink {
                    continue;
                }
                // Where a name for an existing file is made, nearest first: the object store
                // of each working directory's repository (the walks leave it out), the
                // directories around the file, around the home directory and around the working
                // directories (up to, not including, `/`), then the temporary directories.
                let ancestors = |p: &Path| -> Vec<PathBuf> {
                    p.ancestors()
                        .skip(1)
                        .filter(|a| a.parent().is_some())
                        .map(Path::to_path_buf)
                        .collect()
                };
                let mut places: Vec<PathBuf> = ctx
                    .working_dirs
                    .iter()
                    .map(|d| d.join(".git/objects"))
                    .collect();
                places.extend(ancestors(name));
                places.push(ctx.home.clone());
                places.extend(ancestors(&ctx.home));
                for d in &ctx.working_dirs {
                    places.extend(ancestors(d));
                }
                places.extend(["/tmp", "/var/tmp", "/dev/shm"].iter().map(PathBuf::from));
                // Every name, the file's own among them when a place holds it.
                let enough = usize::try_from(*nlink).unwrap_or(usize::MAX);
                for other in links_to(*id, &places, &ctx.working_dirs, enough) {
                    if other != *name && !hidden.iter().any(|h| h.path == other) {
                        hidden.push(PlannedPath::new(
                            other,
                            format!("{rule} (a hard link to {})", name.display()),
                        ));
                    }
                }
                let missing = nlink.saturating_sub(found(&hidden) + 1);
                if missing > 0 {
                    plan.notes.push(format!(
                        "{} has {missing} other name(s) (hard links) the sandbox could not find; they stay readable",
                        name.display()
                    ));
                }
            }
        }
        if !walk.cut.is_empty() {
            plan.notes.push(format!(
                "the sandbox's walk for protected and denied files stopped at {} entries or {} s, in {}; files below it are not masked",
                WALK_ENTRIES,
                WALK_TIME.as_secs(),
                walk.cut[0].display()
            ));
        }
        // `allowRead` paths inside hidden directories are bound back in.
        for (raw, source) in &allow_read_paths {
            let p = Path::new(raw);
            if !settings::has_glob(raw)
                && p.exists()
                && hidden.iter().any(|h| p.starts_with(&h.path) && p != h.path)
            {
                plan.readable_within
                    .push(PlannedPath::new(canonical(p), source.clone()));
            }
        }
        hidden.dedup_by(|a, b| a.path == b.path);
        read_only.dedup_by(|a, b| a.path == b.path);
        // Repositories the command may create where it can write are looked at when it ends.
        let watch = Watch {
            before: std::mem::take(&mut walk.git),
            roots: outermost(writable_roots.clone()),
            skip: hidden
                .iter()
                .chain(&read_only)
                .map(|p| p.path.clone())
                .collect(),
            classifier,
            planned_at: now_nanos(),
            approved,
            links: read_only
                .iter()
                .filter_map(|r| Some((r.path.clone(), std::fs::read_link(&r.path).ok()?)))
                .collect(),
        };
        // The directories holding what is mounted over, inside the writable ones, are pinned.
        let mut pinned: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
        let mounted = hidden
            .iter()
            .chain(&read_only)
            .map(|p| &p.path)
            .chain(plan.absent.iter().map(|a| &a.path));
        for p in mounted {
            for a in p.ancestors().skip(1) {
                if writable_roots.iter().any(|r| a != r && a.starts_with(r)) {
                    pinned.insert(a.to_path_buf());
                } else {
                    break;
                }
            }
        }
        plan.pinned = pinned.into_iter().collect();
        plan.hidden = hidden;
        plan.read_only = read_only;
        (plan, Some(watch))
    }

    /// Whether a host is reachable, and which rule or setting says so.
    fn connect_decision(&self, host: &str, port: u16) -> Decision {
        let s = self.sandbox_settings();
        let url = format!("https://{host}/");
        // The host as the URL Standard reads it, so every spelling of a listed host is it.
        let host_lc = crate::domain::url_host(&url).unwrap_or_else(|| host.to_ascii_lowercase());
        if let Some(d) = s
            .denied_domains
            .iter()
            .find(|d| d.value.matches(&host_lc, port))
        {
            return Decision::deny(
                format!("Connection to {host}:{port} blocked: the host is on the deny list"),
                DecisionReason::Check {
                    name: d.source.clone(),
                },
            );
        }
        if let Some(e) = self.domain_rule(RuleList::Deny, &url) {
            return Decision::deny(
                format!("Connection to {host}:{port} blocked: the host is on the deny list"),
                e.reason(),
            );
        }
        if let Some(d) = s
            .allowed_domains
            .iter()
            .find(|d| d.value.matches(&host_lc, port))
        {
            return Decision::allow(DecisionReason::Check {
                name: d.source.clone(),
            });
        }
        if let Some(e) = self.domain_rule(RuleList::Allow, &url) {
            return Decision::allow(e.reason());
        }
        Decision::ask(
            format!("Connection to {host}:{port} blocked by network allowlist"),
            DecisionReason::NotGranted,
        )
    }

    /// Any domain allowed at all.
    fn allows_some_domain(&self) -> bool {
        !self.sandbox_settings().allowed_domains.is_empty()
            || self
                .rules()
                .iter()
                .any(|e| e.list == RuleList::Allow && matches!(e.matcher, RuleMatcher::Domain(_)))
    }
}

impl SandboxPolicy for Policy {
    fn sandbox(self: Arc<Self>, command: &str, ctx: &ToolContext) -> SandboxSpec {
        let (mode, mode_source, explicit) = self.sandbox_mode();
        let s = self.sandbox_settings();
        let allow_unsandboxed = settings::highest(&s.allow_unsandboxed).is_none_or(|x| x.value);
        if mode == SandboxMode::Off {
            let mut spec = SandboxSpec::off();
            spec.mode_source = mode_source;
            spec.allow_unsandboxed = allow_unsandboxed;
            return spec;
        }
        let excluded_by = self.excluded_by(command, ctx);
        let (mut mounts, watch) = if excluded_by.is_some() {
            (MountPlan::default(), None)
        } else {
            self.mount_plan(command, ctx, explicit)
        };
        mounts.host_proc = settings::highest(&s.host_proc).is_some_and(|x| x.value);
        let quiet = s
            .ignore_violations
            .iter()
            .filter(|x| x.value.0 == "*" || command.contains(&x.value.0))
            .flat_map(|x| x.value.1.iter().cloned())
            .collect();
        let network = if explicit || self.allows_some_domain() {
            NetworkPlan::Filtered
        } else {
            NetworkPlan::Blocked
        };
        let unix_sockets = settings::highest(&s.allow_all_unix_sockets).is_some_and(|x| x.value);
        let mut judge = PolicyJudge::new(self.clone(), command, ctx);
        judge.watch = watch;
        let judge = Arc::new(judge);
        SandboxSpec {
            mode,
            mode_source,
            explicit,
            excluded_by,
            allow_unsandboxed,
            unix_sockets,
            mounts,
            network,
            judge,
            quiet,
        }
    }
}

/// How a plan judges the paths it meets: what is hidden, what stays read-only. Kept by the
/// judge, to judge in the same way what the command created.
pub(crate) struct Classifier {
    policy: Arc<Policy>,
    ctx: ToolContext,
    allow_read: Option<crate::gitignore::Gitignore>,
    deny_read: Option<crate::gitignore::Gitignore>,
    deny_write: Option<crate::gitignore::Gitignore>,
    has_read_denies: bool,
    has_edit_denies: bool,
    /// Denied files with more than one name: identity → (a denied name, the rule, links).
    linked: HashMap<(u64, u64), (PathBuf, String, u64)>,
    writable_roots: Vec<PathBuf>,
    /// Directories a deny rule names through a symbolic link: (where they really are, the
    /// name the rule uses). The walk meets the real path; the rule is matched on both.
    aliases: Vec<(PathBuf, PathBuf)>,
}

impl Classifier {
    /// `p`, and the names a deny rule may know it by (through a linked directory).
    fn spellings(&self, p: &Path) -> Vec<PathBuf> {
        let mut out = vec![p.to_path_buf()];
        for (real, named) in &self.aliases {
            if let Ok(rest) = p.strip_prefix(real) {
                out.push(named.join(rest));
            }
        }
        out
    }

    /// The rule or setting that hides `p`, if any.
    fn why_hidden(&self, p: &Path, is_dir: bool) -> Option<String> {
        if self.aliases.is_empty() {
            return self.why_hidden_as(p, p, is_dir);
        }
        self.spellings(p)
            .iter()
            .find_map(|s| self.why_hidden_as(p, s, is_dir))
    }

    /// `why_hidden` for the entry `p` under the name `as_named`.
    fn why_hidden_as(&self, p: &Path, as_named: &Path, is_dir: bool) -> Option<String> {
        if absolute_match(self.allow_read.as_ref(), as_named, is_dir) {
            return None;
        }
        if !is_dir && !self.linked.is_empty() {
            use std::os::unix::fs::MetadataExt as _;
            if let Ok(md) = std::fs::symlink_metadata(p)
                && md.is_file()
                && let Some((name, rule, _)) = self.linked.get(&(md.dev(), md.ino()))
                && name != p
            {
                return Some(format!("{rule} (a hard link to {})", name.display()));
            }
        }
        if self.has_read_denies
            && let Some(e) =
                self.policy
                    .lexical_path_rule(RuleList::Deny, PathFamily::Read, as_named, &self.ctx)
        {
            return Some(e.text.clone());
        }
        if absolute_match(self.deny_read.as_ref(), as_named, is_dir) {
            return Some("sandbox.filesystem.denyRead".into());
        }
        None
    }

    /// The rule, setting or check that keeps `p` read-only, if any. (A directory is also
    /// read-only when a rule denies an entry new in it, named [`NEW_ENTRY`].)
    fn why_read_only(&self, p: &Path, is_dir: bool) -> Option<String> {
        if self.aliases.is_empty() {
            return self.why_read_only_as(p, is_dir);
        }
        self.spellings(p)
            .iter()
            .find_map(|s| self.why_read_only_as(s, is_dir))
    }

    fn why_read_only_as(&self, p: &Path, is_dir: bool) -> Option<String> {
        if self.has_edit_denies
            && let Some(e) =
                self.policy
                    .lexical_path_rule(RuleList::Deny, PathFamily::Edit, p, &self.ctx)
        {
            return Some(e.text.clone());
        }
        // A directory whose new entries a rule denies (`Edit(./.git/**)`): nothing may be
        // made in it either, so it is read-only as a whole.
        if is_dir
            && self.has_edit_denies
            && let Some(e) = self.policy.lexical_path_rule(
                RuleList::Deny,
                PathFamily::Edit,
                &p.join(NEW_ENTRY),
                &self.ctx,
            )
        {
            return Some(e.text.clone());
        }
        if absolute_match(self.deny_write.as_ref(), p, is_dir) {
            return Some("sandbox.filesystem.denyWrite".into());
        }
        protected_here(p).map(str::to_owned)
    }

    /// What the walk makes of `p`.
    fn seen(&self, p: &Path, is_dir: bool) -> Seen {
        if let Some(why) = self.why_hidden(p, is_dir) {
            return Seen::Hidden(why);
        }
        if !under(p, &self.writable_roots) {
            return Seen::Descend;
        }
        if is_dir && p.file_name().is_some_and(|n| n == ".git") {
            return match self.why_read_only(p, true) {
                Some(why) => Seen::ReadOnly(why),
                None => Seen::Repository,
            };
        }
        match self.why_read_only(p, is_dir) {
            Some(why) => Seen::ReadOnly(why),
            None if is_dir => Seen::Descend,
            None => Seen::Leaf,
        }
    }

    /// Can anything be hidden at all (so read-only directories are worth walking into)?
    fn hides_anything(&self) -> bool {
        self.has_read_denies || self.deny_read.is_some() || !self.linked.is_empty()
    }
}

/// What the plan saw where the command can write, to find what it created there.
pub(crate) struct Watch {
    before: repository::Seen,
    roots: Vec<PathBuf>,
    /// What the plan hid or kept read-only (nothing can be created there).
    skip: Vec<PathBuf>,
    classifier: Arc<Classifier>,
    /// When the plan's walk ended (nanoseconds since the epoch): a directory read by then
    /// holds what it held for the plan if it has not changed since.
    planned_at: i128,
    /// What the user approved this line to write.
    approved: Vec<PathBuf>,
    /// Read-only paths that are symbolic links, and where each points: the mount holds what
    /// it points to, not the link, which lives in a writable directory.
    links: Vec<(PathBuf, PathBuf)>,
}

impl Watch {
    /// The git directories and `.git` files under the writable directories now, and the
    /// entries created since the plan that it would have kept read-only (a protected name,
    /// what an Edit deny or `denyWrite` covers). Directories that did not change since the
    /// plan read them are not read again.
    fn scan(&self, cache: &WalkCache) -> Scanned {
        /// What is known of a directory's entries: there when the plan looked, made since,
        /// or not known (the plan did not read the directory: nothing there is taken for new).
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Known {
            Old,
            New,
            Unknown,
        }
        let mut out = Scanned::default();
        let deadline = Instant::now() + SETTLE_TIME;
        let mut budget = SETTLE_ENTRIES;
        let skipped = |p: &Path| self.skip.iter().any(|s| p.starts_with(s));
        let mut stack: Vec<(PathBuf, Known)> =
            self.roots.iter().map(|r| (r.clone(), Known::Old)).collect();
        while let Some((dir, known)) = stack.pop() {
            if Instant::now() > deadline || budget == 0 {
                out.cut = Some(dir);
                break;
            }
            if skipped(&dir) {
                continue;
            }
            let before = match known {
                Known::Old => cache.read_by(&dir, self.planned_at),
                Known::New | Known::Unknown => None,
            };
            let unchanged = match (&before, stamp(&dir)) {
                (Some((then, read_at, _)), Some(now)) => {
                    *then == now && *read_at >= nanos(now.ctime).max(nanos(now.mtime)) + SETTLED
                }
                _ => false,
            };
            let entries: Vec<(PathBuf, bool)> = if unchanged {
                before
                    .as_ref()
                    .map(|(_, _, e)| e.clone())
                    .unwrap_or_default()
            } else {
                let Ok(rd) = std::fs::read_dir(&dir) else {
                    continue;
                };
                rd.flatten()
                    .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
                    .collect()
            };
            budget = budget.saturating_sub(entries.len());
            if repository::is_git_dir(entries.iter().map(|(p, d)| (p.as_path(), *d))) {
                out.git.dirs.insert(dir.clone());
            }
            for (p, is_dir) in entries {
                if p.file_name().is_some_and(|n| n == ".git") {
                    if is_dir {
                        let mut linked = Vec::new();
                        repository::linked_dirs(&p, &mut linked);
                        out.git.dirs.extend(linked);
                        out.git.dirs.insert(p);
                    } else {
                        out.git.files.insert(p);
                    }
                    continue;
                }
                if skipped(&p) {
                    continue;
                }
                let state = match (known, &before) {
                    (Known::Old, _) if unchanged => Known::Old,
                    (Known::Old, Some((_, _, e))) => {
                        if e.iter().any(|(q, _)| *q == p) {
                            Known::Old
                        } else {
                            Known::New
                        }
                    }
                    (Known::Old, None) | (Known::Unknown, _) => Known::Unknown,
                    (Known::New, _) => Known::New,
                };
                if state == Known::New
                    && !self
                        .approved
                        .iter()
                        .any(|a| a.starts_with(&p) || p.starts_with(a))
                    && let Some(why) = self.classifier.why_read_only(&p, is_dir)
                {
                    out.created.push((p, why));
                    continue;
                }
                if is_dir {
                    stack.push((p, state));
                }
            }
        }
        out
    }
}

/// What the look at the writable directories found when the command ended.
#[derive(Default)]
struct Scanned {
    /// The git directories and `.git` files there now.
    git: repository::Seen,
    /// Entries made since the plan that it would have kept read-only, and why.
    created: Vec<(PathBuf, String)>,
    /// Where the look stopped, if it ran out of time or entries.
    cut: Option<PathBuf>,
}

/// How many entries, and how long, the look at what a command created may take: more than the
/// plan's walk (it runs once, after the command), still bounded.
const SETTLE_ENTRIES: usize = 2_000_000;
const SETTLE_TIME: Duration = Duration::from_secs(20);

/// A unit of the line the analysis foresaw: its words and where it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Foreseen {
    /// Its words, when all were known; `None` when only the program was (the decision that
    /// let the line run covered the words it could not know).
    argv: Option<Vec<String>>,
    /// `argv[0]` as written.
    program: String,
    cwd: PathBuf,
}

impl Foreseen {
    /// Is an exec of `words` in `cwd` this unit? A program the line names without a path is
    /// looked up on `PATH`; an exec of a script shows the path it was found at, which must not
    /// be one the command could have put there (`writable`).
    fn is(&self, words: &[String], cwd: &Path, writable: &[PathBuf]) -> bool {
        let same_program = |w: &String| {
            *w == self.program
                || (!self.program.contains('/')
                    && w.starts_with('/')
                    && w.rsplit('/').next() == Some(self.program.as_str())
                    && !under(Path::new(w), writable))
        };
        self.cwd == cwd
            && words.first().is_some_and(same_program)
            && match &self.argv {
                Some(argv) => argv.len() == words.len() && argv[1..] == words[1..],
                None => true,
            }
    }
}

/// What an exec's decision depends on: its words, its directory, who started it, whether it
/// runs confined, and which file it is.
type ExecKey = (
    Vec<String>,
    Option<Vec<String>>,
    PathBuf,
    bool,
    bool,
    (u64, u64),
);

/// Decides, while a line runs, each program it executes and each host it connects to.
pub(crate) struct PolicyJudge {
    policy: Arc<Policy>,
    ctx: ToolContext,
    /// The programs the line's shell was expected to start, when a decision let the line run.
    foreseen: Vec<Foreseen>,
    /// Deny or ask Bash rules, or Read/Edit deny rules, exist: programs started by other
    /// programs need deciding at all.
    rules_for_descendants: bool,
    /// Deny or ask Bash rules exist: in the sandbox, the only rules about what programs
    /// started by other programs may do.
    program_rules: bool,
    /// Programs Bash deny and ask rules name, by the identity of their files, so a copy under
    /// another name is still that program.
    identities: std::sync::OnceLock<Vec<(String, Identity)>>,
    /// The identity of `git` on the command's `PATH`, once looked up.
    git: std::sync::OnceLock<Option<Identity>>,
    cache: Mutex<HashMap<ExecKey, Decision>>,
    /// The repositories the plan saw, when it planned mounts.
    watch: Option<Watch>,
}

/// What identifies a program's file: its inode, its size and content digest, and the build
/// id its linker wrote (which a copy with bytes added or changed outside the code keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    digest: [u8; 32],
    build_id: Option<Vec<u8>>,
    /// The size and digest of its code (its largest executable segment), which a copy with
    /// its notes, data or trailing bytes changed keeps.
    code: Option<(u64, [u8; 32])>,
    /// The digests of its code's pages (4 KiB each, from the segment's start): a copy whose
    /// code is the same but for a few pages (a byte of padding changed, the segment declared
    /// shorter) keeps most of them.
    pages: Arc<Vec<[u8; 32]>>,
}

/// The file range of an ELF file's largest executable `PT_LOAD` segment (little-endian, 64
/// bits): (offset, size).
fn code_segment(f: &std::fs::File) -> Option<(u64, u64)> {
    use std::os::unix::fs::FileExt as _;
    const PT_LOAD: u32 = 1;
    const PF_X: u32 = 1;
    let mut hdr = [0u8; 64];
    f.read_exact_at(&mut hdr, 0).ok()?;
    if &hdr[..4] != b"\x7fELF" || hdr[4] != 2 || hdr[5] != 1 {
        return None;
    }
    let phoff = u64::from_le_bytes(hdr[32..40].try_into().ok()?);
    let phentsize = usize::from(u16::from_le_bytes(hdr[54..56].try_into().ok()?));
    let phnum = usize::from(u16::from_le_bytes(hdr[56..58].try_into().ok()?));
    if phentsize < 56 || phnum > 512 {
        return None;
    }
    let mut phdrs = vec![0u8; phentsize * phnum];
    f.read_exact_at(&mut phdrs, phoff).ok()?;
    phdrs
        .chunks(phentsize)
        .filter_map(|ph| {
            let kind = u32::from_le_bytes(ph[0..4].try_into().ok()?);
            let flags = u32::from_le_bytes(ph[4..8].try_into().ok()?);
            let off = u64::from_le_bytes(ph[8..16].try_into().ok()?);
            let size = u64::from_le_bytes(ph[32..40].try_into().ok()?);
            (kind == PT_LOAD && flags & PF_X != 0 && size > 0).then_some((off, size))
        })
        .max_by_key(|(_, size)| *size)
}

/// The digest of `len` bytes of `f` from `off`.
fn digest_range(f: &std::fs::File, off: u64, len: u64) -> Option<[u8; 32]> {
    use sha2::Digest as _;
    use std::os::unix::fs::FileExt as _;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0u64;
    while at < len {
        let want = usize::try_from((len - at).min(buf.len() as u64)).ok()?;
        let n = f.read_at(&mut buf[..want], off + at).ok()?;
        if n == 0 {
            return None;
        }
        hasher.update(&buf[..n]);
        at += n as u64;
    }
    Some(hasher.finalize().into())
}

/// The digests of the 4 KiB pages of the `len` bytes at `off` of `f`, at most `most` of them.
fn code_pages(f: &std::fs::File, off: u64, len: u64, most: usize) -> Vec<[u8; 32]> {
    use sha2::Digest as _;
    use std::os::unix::fs::FileExt as _;
    let mut out = Vec::new();
    let mut buf = vec![0u8; CODE_PAGE as usize];
    let mut at = 0u64;
    while at < len && out.len() < most {
        let want = usize::try_from((len - at).min(CODE_PAGE)).unwrap_or(0);
        let Ok(n) = f.read_at(&mut buf[..want], off + at) else {
            break;
        };
        if n == 0 {
            break;
        }
        out.push(sha2::Sha256::digest(&buf[..n]).into());
        at += n as u64;
    }
    out
}

/// The page a program's code is compared by.
const CODE_PAGE: u64 = 4096;

/// A copy keeps at least this share (in quarters) of a known program's code pages, where that
/// program has at least `MIN_CODE_PAGES` of them, to be that program.
const SAME_CODE_QUARTERS: usize = 3;
const MIN_CODE_PAGES: usize = 4;

/// The digests of the first `most` code pages of the file `f` (whose metadata is `m`),
/// remembered by file.
fn candidate_pages(
    f: &std::fs::File,
    m: &std::fs::Metadata,
    off: u64,
    len: u64,
    most: usize,
) -> Arc<Vec<[u8; 32]>> {
    use std::os::unix::fs::MetadataExt as _;
    type Key = (u64, u64, u64, i64, i64, usize);
    type Pages = Arc<Vec<[u8; 32]>>;
    static KNOWN: std::sync::OnceLock<Mutex<HashMap<Key, Pages>>> = std::sync::OnceLock::new();
    const MAX_KNOWN: usize = 512;
    let key: Key = (m.dev(), m.ino(), m.len(), m.ctime(), m.ctime_nsec(), most);
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(p) = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
    {
        return p.clone();
    }
    let pages = Arc::new(code_pages(f, off, len, most));
    let mut known = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if known.len() >= MAX_KNOWN {
        known.clear();
    }
    known.insert(key, pages.clone());
    pages
}

/// The digest of the first `len` bytes of the code segment at `off` of `f` (whose metadata is
/// `m`), remembered by file and length: a program's file is hashed once for each length a
/// known program's code has, not once per command.
fn code_prefix_digest(
    f: &std::fs::File,
    m: &std::fs::Metadata,
    off: u64,
    len: u64,
) -> Option<[u8; 32]> {
    use std::os::unix::fs::MetadataExt as _;
    type Key = (u64, u64, u64, i64, i64, u64, u64);
    static KNOWN: std::sync::OnceLock<Mutex<HashMap<Key, Option<[u8; 32]>>>> =
        std::sync::OnceLock::new();
    const MAX_KNOWN: usize = 1024;
    let key: Key = (
        m.dev(),
        m.ino(),
        m.len(),
        m.ctime(),
        m.ctime_nsec(),
        off,
        len,
    );
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(d) = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
    {
        return *d;
    }
    let d = digest_range(f, off, len);
    let mut known = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if known.len() >= MAX_KNOWN {
        known.clear();
    }
    known.insert(key, d);
    d
}

/// The GNU build id of an ELF file (little-endian, 32 or 64 bits): the `NT_GNU_BUILD_ID`
/// note of a `PT_NOTE` segment.
fn build_id(f: &std::fs::File) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt as _;
    const PT_NOTE: u32 = 4;
    const NT_GNU_BUILD_ID: u32 = 3;
    let mut hdr = [0u8; 64];
    f.read_exact_at(&mut hdr, 0).ok()?;
    if &hdr[..4] != b"\x7fELF" || hdr[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], i: usize| Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?));
    let u32_at = |b: &[u8], i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let u64_at = |b: &[u8], i: usize| Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
    let wide = hdr[4] == 2;
    let (phoff, phentsize, phnum) = if wide {
        (u64_at(&hdr, 32)?, u16_at(&hdr, 54)?, u16_at(&hdr, 56)?)
    } else {
        (
            u64::from(u32_at(&hdr, 28)?),
            u16_at(&hdr, 42)?,
            u16_at(&hdr, 44)?,
        )
    };
    let (phentsize, phnum) = (usize::from(phentsize), usize::from(phnum));
    if phnum > 512 || phentsize < if wide { 56 } else { 32 } {
        return None;
    }
    let mut phdrs = vec![0u8; phentsize * phnum];
    f.read_exact_at(&mut phdrs, phoff).ok()?;
    for ph in phdrs.chunks(phentsize) {
        if u32_at(ph, 0)? != PT_NOTE {
            continue;
        }
        let (off, size) = if wide {
            (u64_at(ph, 8)?, u64_at(ph, 32)?)
        } else {
            (u64::from(u32_at(ph, 4)?), u64::from(u32_at(ph, 16)?))
        };
        if size > 1 << 16 {
            continue;
        }
        let mut notes = vec![0u8; usize::try_from(size).ok()?];
        f.read_exact_at(&mut notes, off).ok()?;
        let mut i = 0usize;
        let pad = |n: usize| n.div_ceil(4) * 4;
        while i + 12 <= notes.len() {
            let namesz = usize::try_from(u32_at(&notes, i)?).ok()?;
            let descsz = usize::try_from(u32_at(&notes, i + 4)?).ok()?;
            let kind = u32_at(&notes, i + 8)?;
            let name_at = i + 12;
            let desc_at = name_at.checked_add(pad(namesz))?;
            let end = desc_at.checked_add(descsz)?;
            if end > notes.len() {
                break;
            }
            if kind == NT_GNU_BUILD_ID && notes.get(name_at..name_at + namesz) == Some(b"GNU\0") {
                return Some(notes[desc_at..end].to_vec());
            }
            i = desc_at + pad(descsz);
        }
    }
    None
}

/// The identity of the open file `f`. Digests are kept for the life of the process, by
/// inode, size and change times (a file changed in place gets a new entry), so a program's
/// file is read once, not once per command.
fn identity_of(f: &std::fs::File) -> Option<Identity> {
    use sha2::Digest as _;
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;
    type Key = (u64, u64, u64, i64, i64, i64, i64);
    static KNOWN: std::sync::OnceLock<Mutex<HashMap<Key, Identity>>> = std::sync::OnceLock::new();
    const MAX_KNOWN: usize = 512;
    let m = f.metadata().ok()?;
    let key: Key = (
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    );
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(id) = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
    {
        return Some(id.clone());
    }
    let mut hasher = sha2::Sha256::new();
    let mut r = std::io::BufReader::new(f);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let id = Identity {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        digest: hasher.finalize().into(),
        build_id: build_id(f),
        code: code_segment(f).and_then(|(off, len)| Some((len, digest_range(f, off, len)?))),
        pages: Arc::new(
            code_segment(f)
                .map(|(off, len)| code_pages(f, off, len, usize::MAX))
                .unwrap_or_default(),
        ),
    };
    let mut known = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if known.len() >= MAX_KNOWN {
        known.clear();
    }
    known.insert(key, id.clone());
    Some(id)
}

/// Is `image` (an executable's file) the dynamic loader, under whatever name: the same file as
/// one of the system's loaders, or a copy of one (the same build id)?
fn is_loader(image: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    static LOADERS: std::sync::OnceLock<Vec<Identity>> = std::sync::OnceLock::new();
    let loaders = LOADERS.get_or_init(|| {
        // This program's own interpreter, and the usual places of the others.
        let mut paths: Vec<PathBuf> = [
            "/lib64/ld-linux-x86-64.so.2",
            "/lib/ld-linux-aarch64.so.1",
            "/lib/ld-linux-armhf.so.3",
            "/lib/ld-linux.so.2",
            "/lib/ld-musl-x86_64.so.1",
            "/lib/ld-musl-aarch64.so.1",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        if let Some(own) = interpreter_of(Path::new("/proc/self/exe")) {
            paths.push(own);
        }
        let mut out: Vec<Identity> = Vec::new();
        for p in paths {
            if let Ok(f) = std::fs::File::open(&p)
                && let Some(id) = identity_of(&f)
                && !out.iter().any(|o| o.dev == id.dev && o.ino == id.ino)
            {
                out.push(id);
            }
        }
        out
    });
    let Ok(f) = std::fs::File::open(image) else {
        return false;
    };
    let Ok(m) = f.metadata() else {
        return false;
    };
    if loaders.iter().any(|l| l.dev == m.dev() && l.ino == m.ino()) {
        return true;
    }
    let Some(b) = build_id(&f) else {
        return false;
    };
    loaders.iter().any(|l| l.build_id.as_ref() == Some(&b))
}

/// The interpreter (`PT_INTERP`) an ELF executable names, if any.
fn interpreter_of(exe: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::FileExt as _;
    const PT_INTERP: u32 = 3;
    let f = std::fs::File::open(exe).ok()?;
    let mut hdr = [0u8; 64];
    f.read_exact_at(&mut hdr, 0).ok()?;
    if &hdr[..4] != b"\x7fELF" || hdr[4] != 2 || hdr[5] != 1 {
        return None;
    }
    let phoff = u64::from_le_bytes(hdr[32..40].try_into().ok()?);
    let phentsize = usize::from(u16::from_le_bytes(hdr[54..56].try_into().ok()?));
    let phnum = usize::from(u16::from_le_bytes(hdr[56..58].try_into().ok()?));
    if phentsize < 56 || phnum > 512 {
        return None;
    }
    let mut phdrs = vec![0u8; phentsize * phnum];
    f.read_exact_at(&mut phdrs, phoff).ok()?;
    for ph in phdrs.chunks(phentsize) {
        if u32::from_le_bytes(ph[0..4].try_into().ok()?) != PT_INTERP {
            continue;
        }
        let off = u64::from_le_bytes(ph[8..16].try_into().ok()?);
        let size = u64::from_le_bytes(ph[32..40].try_into().ok()?);
        if size == 0 || size > 4096 {
            return None;
        }
        let mut buf = vec![0u8; usize::try_from(size).ok()?];
        f.read_exact_at(&mut buf, off).ok()?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        return Some(PathBuf::from(
            String::from_utf8_lossy(&buf[..end]).into_owned(),
        ));
    }
    None
}

/// Whether `p` runs code it is given (a script, code on its standard input, its project's
/// code): what it may do with a file is anything.
fn runs_code_it_is_given(p: &tool_shell::db::Program) -> bool {
    use tool_shell::EffectKind::RunsCode;
    p.bare.contains(&RunsCode)
        || p.effects.contains(&RunsCode)
        || p.operands
            .iter()
            .any(|s| s.roles.contains(&tool_shell::db::Role::RunsCode))
}

/// How many arguments of a program toolgate does not know (or of one that runs code) are
/// looked at for a denied program's file.
const ARGUMENTS_LOOKED_AT: usize = 8;

/// The dynamic loader's options that take a value, before the program it runs.
const LOADER_OPTIONS_WITH_VALUE: &[&str] = &[
    "--library-path",
    "--inhibit-rpath",
    "--preload",
    "--argv0",
    "--audit",
    "--glibc-hwcaps-prepend",
    "--glibc-hwcaps-mask",
];
/// The dynamic loader's options that take none.
const LOADER_FLAGS: &[&str] = &[
    "--list",
    "--verify",
    "--inhibit-cache",
    "--list-tunables",
    "--list-diagnostics",
    "--help",
    "--version",
];

impl PolicyJudge {
    fn new(policy: Arc<Policy>, command: &str, ctx: &ToolContext) -> Self {
        let foreseen = if ctx.allowed_by.is_some() {
            let a = Policy::analyze_shell(command, ctx);
            a.units
                .iter()
                .filter(|u| {
                    !u.is_bare()
                        && u.cwd_certain
                        && u.unknown.is_empty()
                        && match &u.origin {
                            tool_shell::analyze::Origin::Line
                            | tool_shell::analyze::Origin::Substitution => true,
                            tool_shell::analyze::Origin::Carried { by_shell, .. } => *by_shell,
                        }
                })
                .filter_map(|u| {
                    let program = u.argv.first()?.clone();
                    // Only the words were not all known: the program must have been (no
                    // expansion or pattern in it).
                    if !u.certain && program.contains(['$', '`', '*', '?', '[', '\\', '{']) {
                        return None;
                    }
                    Some(Foreseen {
                        argv: u.certain.then(|| u.argv.clone()),
                        program,
                        cwd: canonical(&u.cwd),
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let program_rules = policy
            .rules()
            .iter()
            .any(|e| e.list != RuleList::Allow && matches!(e.matcher, RuleMatcher::Shell(_)));
        let rules_for_descendants = policy.rules().iter().any(|e| {
            (e.list != RuleList::Allow && matches!(e.matcher, RuleMatcher::Shell(_)))
                || (e.list == RuleList::Deny && matches!(e.matcher, RuleMatcher::Path { .. }))
        });
        Self {
            policy,
            ctx: ctx.clone(),
            foreseen,
            rules_for_descendants,
            program_rules,
            identities: std::sync::OnceLock::new(),
            git: std::sync::OnceLock::new(),
            cache: Mutex::new(HashMap::new()),
            watch: None,
        }
    }

    /// The files of the programs Bash deny and ask rules name, found on the command's `PATH`.
    /// The command's `PATH`.
    fn path_var(&self) -> String {
        self.ctx
            .env_var("PATH")
            .map(str::to_owned)
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())
    }

    /// Is `image` git's own program, under whatever name (git picks its subcommand from the
    /// name it runs under: `git-push` is `git push`)?
    fn is_git(&self, image: &Path) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let git = self.git.get_or_init(|| {
            std::env::split_paths(&self.path_var())
                .map(|d| d.join("git"))
                .find_map(|p| identity_of(&std::fs::File::open(p).ok()?))
        });
        let (Some(git), Ok(f)) = (git, std::fs::File::open(image)) else {
            return false;
        };
        f.metadata()
            .is_ok_and(|m| m.dev() == git.dev && m.ino() == git.ino)
            || (git.build_id.is_some() && build_id(&f) == git.build_id)
    }

    fn identities(&self) -> &[(String, Identity)] {
        self.identities.get_or_init(|| {
            let mut names: Vec<String> = self
                .policy
                .rules()
                .iter()
                .filter(|e| e.list != RuleList::Allow)
                .filter_map(|e| match &e.matcher {
                    RuleMatcher::Shell(p) => p.first_word().map(str::to_owned),
                    _ => None,
                })
                .collect();
            names.sort();
            names.dedup();
            let path = self
                .ctx
                .env_var("PATH")
                .map(str::to_owned)
                .or_else(|| std::env::var("PATH").ok())
                .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
            let mut out = Vec::new();
            for name in names {
                for dir in std::env::split_paths(&path) {
                    let candidate = dir.join(&name);
                    if let Ok(f) = std::fs::File::open(&candidate)
                        && f.metadata().is_ok_and(|m| m.is_file())
                        && let Some(id) = identity_of(&f)
                        && !out
                            .iter()
                            .any(|(n, i): &(String, Identity)| *n == name && *i == id)
                    {
                        out.push((name.clone(), id));
                    }
                }
            }
            out
        })
    }

    /// The name of a denied or asked-about program whose file `image` is, if it is one under
    /// another name.
    fn known_as(&self, f: &std::fs::File, name: &str) -> Option<String> {
        use std::os::unix::fs::MetadataExt as _;
        let ids = self.identities();
        if ids.is_empty() {
            return None;
        }
        let m = f.metadata().ok()?;
        if let Some((n, _)) = ids
            .iter()
            .find(|(_, i)| i.dev == m.dev() && i.ino == m.ino())
        {
            return (n != name).then(|| n.clone());
        }
        if ids.iter().any(|(_, i)| i.build_id.is_some())
            && let Some(b) = build_id(f)
            && let Some((n, _)) = ids.iter().find(|(_, i)| i.build_id.as_ref() == Some(&b))
        {
            return (n != name).then(|| n.clone());
        }
        // The same code, though its segment was made longer (its header changed to take in
        // bytes after it): the known program's code is where the copy's begins.
        if let Some((off, len)) = code_segment(f) {
            for (n, i) in ids {
                if let Some((l, d)) = i.code
                    && l <= len
                    && code_prefix_digest(f, &m, off, l) == Some(d)
                {
                    return (n != name).then(|| n.clone());
                }
            }
            // Most of a known program's code pages, where they are in it: its code with a
            // few bytes changed (padding between functions), or declared shorter.
            let most = ids.iter().map(|(_, i)| i.pages.len()).max().unwrap_or(0);
            if most >= MIN_CODE_PAGES {
                let pages = candidate_pages(f, &m, off, len, most);
                for (n, i) in ids.iter().filter(|(_, i)| i.pages.len() >= MIN_CODE_PAGES) {
                    let same = i
                        .pages
                        .iter()
                        .zip(pages.iter())
                        .filter(|(a, b)| a == b)
                        .count();
                    if same * 4 >= i.pages.len() * SAME_CODE_QUARTERS {
                        return (n != name).then(|| n.clone());
                    }
                }
            }
        }
        if !ids.iter().any(|(_, i)| i.len == m.len()) {
            return None;
        }
        let id = identity_of(f)?;
        ids.iter()
            .find(|(_, i)| i.len == id.len && i.digest == id.digest)
            .filter(|(n, _)| n != name)
            .map(|(n, _)| n.clone())
    }

    /// The words the program runs as: the dynamic loader's own options taken off when the
    /// loader was run by name.
    fn program_words(argv: &[String], exe: &Path, image: &Path) -> Vec<String> {
        let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
        let exe_name = exe.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let loader = |n: &str| {
            n.starts_with("ld-linux") || n.starts_with("ld.so") || n.starts_with("ld-musl")
        };
        if !(loader(exe_name) || argv.first().is_some_and(|a| loader(&base(a))) || is_loader(image))
        {
            return argv.to_vec();
        }
        let mut i = 1;
        while i < argv.len() && argv[i].starts_with("--") {
            let (name, inline) = match argv[i].split_once('=') {
                Some((n, _)) => (n, true),
                None => (argv[i].as_str(), false),
            };
            i += if LOADER_FLAGS.contains(&name) || inline {
                1
            } else if LOADER_OPTIONS_WITH_VALUE.contains(&name) {
                2
            } else {
                // An option this reading does not know: whether it takes the next word is
                // not known, so neither is the program. Nothing is unwrapped; the exec is
                // decided as the loader with every word, and asked about (see `exec`).
                return Vec::new();
            };
        }
        if i >= argv.len() {
            return argv.to_vec();
        }
        argv[i..].to_vec()
    }

    /// Decide `raw` (an exec's words, or a script's interpreter's when `deny_only`): the
    /// dynamic loader and git's dashed names unwrapped, then the rules; and the program's file
    /// recognised by its identity, under whatever name. `script`: `raw` is a script's words,
    /// whose file is the script, not the image the kernel loaded.
    ///
    /// `looked` is set when the decision rests on what files named by the arguments are now,
    /// which the same words may not name next time.
    fn judge_words(
        &self,
        raw: &[String],
        r: &ExecRequest<'_>,
        script: bool,
        deny_only: bool,
        looked: &mut bool,
    ) -> Decision {
        let exe: &Path = if deny_only { r.image } else { r.exe };
        let mut words = if script {
            raw.to_vec()
        } else {
            Self::program_words(raw, exe, r.image)
        };
        if words.is_empty() {
            return Decision::ask(
                format!(
                    "The dynamic loader was run with an option toolgate does not know ({}), so the program it loads is not known.",
                    tool_core::sandbox::shell_line(raw)
                ),
                DecisionReason::Check {
                    name: "a dynamic loader with an unknown option".into(),
                },
            );
        }
        let unwrapped = words.len() < raw.len();
        // Git run as `git-<subcommand>` (by its dashed name, or `exec -a`) runs that subcommand.
        let first = words[0].rsplit('/').next().unwrap_or(&words[0]).to_owned();
        if let Some(sub) = first.strip_prefix("git-").filter(|s| !s.is_empty())
            && !script
            && !unwrapped
            && self.is_git(r.image)
        {
            let mut as_git = vec!["git".to_owned(), sub.to_owned()];
            as_git.extend(words.drain(1..));
            words = as_git;
        }
        let mut decision = if deny_only {
            let mut ctx = self.ctx.clone();
            ctx.cwd = r.cwd.to_path_buf();
            match self.policy.shell_rules_verdict(
                &tool_core::sandbox::shell_line(&words),
                &ctx,
                !r.confined,
            ) {
                Some(d) if d.verdict == Verdict::Deny => d,
                _ => Decision::allow(DecisionReason::Check {
                    name: "no deny rule applies".into(),
                }),
            }
        } else {
            self.decide_exec(&words, r.cwd, r.started_by_line, r.confined)
        };
        // A copy or link of a denied program under another name is that program. Run by the
        // dynamic loader, the program is the file the loader was given; for a script, the
        // script; as the process sees either.
        let in_root = |named: &Path| {
            let abs = if named.is_absolute() {
                named.to_path_buf()
            } else {
                r.cwd.join(named)
            };
            r.root.join(abs.strip_prefix("/").unwrap_or(&abs))
        };
        let program_file = if unwrapped {
            let named = (r.open)(r.root, r.cwd, Path::new(&words[0]));
            // The loader opens its program by path once it runs, with no stop left: a path
            // that can lead elsewhere by then (a link, a writable directory, a descriptor of
            // the program's through `/proc/self`) runs whatever it leads to then.
            if self.rules_for_descendants && !named.as_ref().is_some_and(|n| n.fixed) {
                decision = decision.stricter(Decision::ask(
                    format!(
                        "The dynamic loader was given its program by a path that can lead elsewhere by the time the loader opens it ({}: a link, a writable directory or a descriptor), so the program it runs is not known.",
                        words[0]
                    ),
                    DecisionReason::Check {
                        name: "a dynamic loader's program that can change".into(),
                    },
                ));
            }
            named.map(|n| n.file)
        } else if script {
            std::fs::File::open(in_root(r.exe)).ok()
        } else {
            std::fs::File::open(r.image).ok()
        };
        let name = words[0].rsplit('/').next().unwrap_or(&words[0]).to_owned();
        let known = program_file.as_ref().and_then(|f| self.known_as(f, &name));
        if decision.verdict != Verdict::Deny
            && let Some(real) = &known
        {
            let mut renamed = words.clone();
            renamed[0] = real.clone();
            decision = decision.stricter(self.decide_exec(&renamed, r.cwd, false, r.confined));
        }
        // A program toolgate knows nothing of, or one that runs code it is given (an
        // interpreter and its script), given a denied program's file (a link or a copy of it,
        // under any name), may load and run that file itself, as the dynamic loader does, with
        // no exec to see: it is judged as that program too.
        if decision.verdict != Verdict::Deny
            && self.rules_for_descendants
            && !unwrapped
            && !script
            && known.is_none()
            && tool_shell::db::database()
                .program(&name)
                .is_none_or(runs_code_it_is_given)
        {
            for (k, arg) in words.iter().enumerate().skip(1).take(ARGUMENTS_LOOKED_AT) {
                if arg.is_empty() || arg.starts_with('-') {
                    continue;
                }
                let Some(named) = (r.open)(r.root, r.cwd, Path::new(arg)) else {
                    continue;
                };
                *looked = true;
                if let Some(real) = self.known_as(&named.file, "") {
                    let mut as_real = vec![real];
                    as_real.extend(words[k + 1..].iter().cloned());
                    decision =
                        decision.stricter(self.decide_exec(&as_real, r.cwd, false, r.confined));
                }
            }
        }
        decision
    }

    fn decide_exec(
        &self,
        words: &[String],
        cwd: &Path,
        started_by_line: bool,
        confined: bool,
    ) -> Decision {
        let mut ctx = self.ctx.clone();
        ctx.cwd = cwd.to_path_buf();
        let command = tool_core::sandbox::shell_line(words);
        let foreseen = started_by_line
            && self
                .foreseen
                .iter()
                .any(|f| f.is(words, &canonical(cwd), &self.ctx.working_dirs));
        if started_by_line && !foreseen {
            // Decided like a line of its own: allow, ask or deny, with the mode's last word.
            let input = json!({ "command": command });
            let subject = PermissionSubject::ShellCommand(command.clone());
            let request = PermissionRequest {
                tool_name: "Bash",
                input: &input,
                subject: &subject,
                read_only: tool_shell::is_read_only(&command),
                requires_user_interaction: false,
                ctx: &ctx,
            };
            return self.policy.decide(&request);
        }
        if !self.rules_for_descendants {
            return Decision::allow(DecisionReason::Check {
                name: "no deny or ask rule applies".into(),
            });
        }
        // Foreseen, or started by another program: the deny rules, and for the latter the ask
        // rules too. In the sandbox, what Read and Edit deny rules cover is already out of
        // reach (a read there fails, as it would for the program's own file access), so only
        // the rules about programs stop it; unconfined, path denies stop it too.
        match self.policy.shell_rules_verdict(&command, &ctx, !confined) {
            Some(d) if d.verdict == Verdict::Deny => d,
            Some(d) if !foreseen => d,
            _ => Decision::allow(DecisionReason::Check {
                name: if foreseen {
                    "foreseen by the analysis".into()
                } else {
                    "no deny or ask rule applies".into()
                },
            }),
        }
    }
}

impl RunJudge for PolicyJudge {
    fn exec(&self, r: &ExecRequest<'_>) -> Decision {
        if r.argv.is_empty() {
            return Decision::deny(
                "A program was started with no arguments at all, so it cannot be identified.",
                DecisionReason::Check {
                    name: "an exec with an empty argument list".into(),
                },
            );
        }
        let key = (
            r.argv.to_vec(),
            r.interpreter.map(<[String]>::to_vec),
            r.cwd.to_path_buf(),
            r.started_by_line,
            r.confined,
            r.image_id,
        );
        if let Some(d) = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return d.clone();
        }
        // A script is judged as what the caller asked for (the script and its arguments) and,
        // for deny rules, as what actually runs (its interpreter's whole command line).
        let mut looked = false;
        let mut decision = self.judge_words(r.argv, r, r.interpreter.is_some(), false, &mut looked);
        if let Some(interp) = r.interpreter
            && decision.verdict != Verdict::Deny
        {
            decision = decision.stricter(self.judge_words(interp, r, false, true, &mut looked));
        }
        if !looked {
            self.cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(key, decision.clone());
        }
        decision
    }

    fn connect(&self, host: &str, port: u16) -> Decision {
        self.policy.connect_decision(host, port)
    }

    fn watching(&self, confined: bool) -> tool_core::sandbox::Watching {
        if confined && !self.program_rules {
            tool_core::sandbox::Watching::LineOnly
        } else {
            tool_core::sandbox::Watching::Everything
        }
    }

    fn settle(&self) -> Vec<tool_core::sandbox::Settled> {
        use tool_core::sandbox::Settled;
        let Some(w) = &self.watch else {
            return Vec::new();
        };
        let Scanned {
            git: now,
            created,
            cut,
        } = w.scan(&self.policy.walk_cache);
        let mut out = Vec::new();
        if let Some(at) = cut {
            out.push(Settled {
                path: at,
                done: format!(
                    "not looked at (the look stopped after {SETTLE_ENTRIES} entries or {} s)",
                    SETTLE_TIME.as_secs()
                ),
                why: "what the command created from here on".into(),
            });
        }
        // Protected links as they were: what the command put in a link's place goes, the link
        // comes back.
        for (link, target) in &w.links {
            if std::fs::read_link(link).is_ok_and(|t| t == *target) {
                continue;
            }
            if std::fs::symlink_metadata(link).is_ok() && !repository::remove(link) {
                continue;
            }
            if std::os::unix::fs::symlink(target, link).is_ok() {
                out.push(Settled {
                    path: link.clone(),
                    done: format!("put back as a link to {}", target.display()),
                    why: "a protected path the command replaced".into(),
                });
            }
        }
        // Protected or denied names the command created where the plan could not hold them.
        for (p, why) in created {
            let gone = if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            if gone.is_ok() {
                out.push(Settled {
                    path: p,
                    done: "removed".into(),
                    why,
                });
            }
        }
        // Every repository where the command could write: what it created in its protected
        // places (all of them, in a repository it created).
        let mut dirs: Vec<&PathBuf> = now.dirs.iter().filter(|d| under(d, &w.roots)).collect();
        dirs.sort();
        let held = |p: &Path| w.skip.iter().any(|s| p.starts_with(s));
        for d in dirs {
            let new = !w.before.dirs.contains(d);
            repository::settle_dir(d, new, &held, &mut out);
        }
        let mut files: Vec<&PathBuf> = now.files.difference(&w.before.files).collect();
        files.sort();
        for f in files {
            // A pointer to a git directory that is looked after (under the directories the
            // command could write, so new ones were just put right, or one that was there
            // before) stays; one pointing anywhere else goes.
            let looked_after = repository::pointed_dir(f).is_some_and(|t| {
                let t = canonical(&t);
                w.before.dirs.contains(&t) || now.dirs.contains(&t) && under(&t, &w.roots)
            });
            if !looked_after && std::fs::remove_file(f).is_ok() {
                out.push(Settled {
                    path: f.clone(),
                    done: "removed".into(),
                    why: "a new .git file pointing to a repository outside the directories the command may write".into(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_sandbox_keeps_as_it_is() {
        let kept = [
            "/w/p/.git/hooks/pre-commit",
            "/w/p/.git/hooks",
            "/w/p/.git/config",
            "/w/p/.GIT/Config",
            "/w/p/.git/objects/info/alternates",
            "/w/p/.git/modules/sub/hooks/post-checkout",
            "/w/p/.git/modules/a/modules/b/config",
            "/w/p/.claude/settings.json",
            "/w/p/.claude/commands/x.md",
            "/w/p/.toolgate/policy.toml",
            "/w/p/.vscode/tasks.json",
            "/home/u/.bashrc",
            "/w/p/sub/.mcp.json",
        ];
        for p in kept {
            assert!(kept_read_only(Path::new(p)).is_some(), "{p}");
        }
        let free = [
            "/w/p/.git/index",
            "/w/p/.git/objects/4b/825dc642cb6eb9a060e54bf8d69288fbee4904",
            "/w/p/.git/HEAD",
            "/w/p/.git/refs/heads/main",
            "/w/p/.git/modules/sub/index",
            "/w/p/.claude/notes.md",
            "/w/p/src/config",
            "/w/p/hooks/x",
        ];
        for p in free {
            assert_eq!(kept_read_only(Path::new(p)), None, "{p}");
        }
    }
}
