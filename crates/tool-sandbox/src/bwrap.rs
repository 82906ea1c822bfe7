//! bubblewrap's command line for a mount plan.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tool_core::sandbox::MountPlan;

/// Stand-ins the plan binds over hidden and absent paths: the host's `/dev/null` for a file
/// (bind mounts are `nodev`, so opening it fails with "Permission denied": reading gives
/// nothing, and the command is told so, as under Claude Code's sandbox), and an empty,
/// read-only directory made once per process for a directory.
#[derive(Debug, Clone)]
pub(crate) struct StandIns {
    pub(crate) file: PathBuf,
    pub(crate) dir: PathBuf,
}

impl StandIns {
    pub(crate) fn make(runtime: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::create_dir_all(runtime)?;
        let dir = runtime.join("empty-dir");
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555))?;
        Ok(Self {
            file: PathBuf::from("/dev/null"),
            dir,
        })
    }
}

/// Where a planned path really is (links resolved), when it still exists.
fn existing(p: &Path) -> Option<(PathBuf, bool)> {
    let real = std::fs::canonicalize(p).ok()?;
    let dir = std::fs::metadata(&real).ok()?.is_dir();
    Some((real, dir))
}

/// The arguments before `--`: the file system from `plan`, fresh namespaces, no capabilities.
/// `sealed`: `/proc` is mounted read-only (see `entry`).
/// `seccomp_fd` is the descriptor the filter program is read from; `cwd` where the command
/// starts.
pub(crate) fn args(
    plan: &MountPlan,
    stand_ins: &StandIns,
    seccomp_fd: Option<i32>,
    info_fd: Option<i32>,
    cwd: &Path,
    own_network: bool,
    sealed: bool,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        for i in items {
            a.push(i.as_ref().to_owned());
        }
    };
    push(&[&"--ro-bind", &"/", &"/", &"--dev", &"/dev"]);
    if plan.host_proc {
        push(&[&"--ro-bind", &"/proc", &"/proc"]);
    } else {
        push(&[&"--proc", &"/proc"]);
        if sealed {
            // No `/proc/PID/mem` opens for writing: no process writes another's memory.
            push(&[&"--remount-ro", &"/proc"]);
        }
    }
    for w in &plan.writable {
        if let Some((real, _)) = existing(&w.path) {
            push(&[&"--bind", &real, &real]);
        }
    }
    let mut pinned: Vec<&PathBuf> = plan.pinned.iter().collect();
    pinned.sort_by_key(|p| p.components().count());
    for p in pinned {
        if let Some((real, true)) = existing(p) {
            push(&[&"--bind", &real, &real]);
        }
    }
    for r in &plan.read_only {
        // `-try`: a path removed since the plan was made is passed over.
        if let Some((real, _)) = existing(&r.path) {
            push(&[&"--ro-bind-try", &real, &real]);
        }
    }
    let readable: Vec<(PathBuf, bool)> = plan
        .readable_within
        .iter()
        .filter_map(|r| existing(&r.path))
        .collect();
    for h in &plan.hidden {
        let Some((real, dir)) = existing(&h.path) else {
            continue;
        };
        let exceptions: Vec<&PathBuf> = readable
            .iter()
            .filter(|(r, _)| dir && r.starts_with(&real) && *r != real)
            .map(|(r, _)| r)
            .collect();
        if exceptions.is_empty() {
            let with = if dir { &stand_ins.dir } else { &stand_ins.file };
            push(&[&"--ro-bind", with, &real]);
            continue;
        }
        // An empty directory with the readable paths bound back in, then made read-only.
        push(&[&"--tmpfs", &real]);
        for e in exceptions {
            push(&[&"--ro-bind", e, e]);
        }
        push(&[&"--remount-ro", &real]);
    }
    for ab in &plan.absent {
        // The placeholder, an empty file made before the launch (see `absent`), is covered
        // by `/dev/null`: the name can be neither created nor used as a directory.
        if let Some((real, false)) = existing(&ab.path) {
            push(&[&"--ro-bind", &stand_ins.file, &real]);
        }
    }
    if own_network {
        push(&[&"--unshare-net"]);
    }
    push(&[
        &"--unshare-pid",
        &"--unshare-ipc",
        &"--unshare-uts",
        &"--unshare-cgroup-try",
        &"--die-with-parent",
        &"--new-session",
        &"--cap-drop",
        &"ALL",
    ]);
    // Run by root, a command reads and writes files whatever their modes, as it does outside
    // (a `chmod 444` file of the project is still written: recorded, as root,
    // z1_bash_write_readonly_file_as_root). Only that: no mount, no trace, no other user's
    // powers (`open_by_handle_at` needs `CAP_DAC_READ_SEARCH`, which stays dropped), and a
    // read-only mount stays read-only.
    if is_root() {
        push(&[&"--cap-add", &"CAP_DAC_OVERRIDE"]);
    }
    if let Some(fd) = seccomp_fd {
        push(&[&"--seccomp", &fd.to_string()]);
    }
    if let Some(fd) = info_fd {
        push(&[&"--info-fd", &fd.to_string()]);
    }
    push(&[&"--chdir", &cwd]);
    a
}

/// Whether this process runs as root (its effective user id is 0).
#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
