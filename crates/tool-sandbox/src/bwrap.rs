//! bubblewrap's command line for a mount plan.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tool_core::sandbox::MountPlan;

/// Stand-ins the plan binds over hidden and absent paths: an empty file and an empty
/// directory, both read-only, made once per process.
#[derive(Debug, Clone)]
pub(crate) struct StandIns {
    pub(crate) file: PathBuf,
    pub(crate) dir: PathBuf,
}

impl StandIns {
    pub(crate) fn make(runtime: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::create_dir_all(runtime)?;
        let file = runtime.join("empty-file");
        let dir = runtime.join("empty-dir");
        if !file.is_file() {
            std::fs::write(&file, b"")?;
        }
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555))?;
        Ok(Self { file, dir })
    }
}

/// Where a planned path really is (links resolved), when it still exists.
fn existing(p: &Path) -> Option<(PathBuf, bool)> {
    let real = std::fs::canonicalize(p).ok()?;
    let dir = std::fs::metadata(&real).ok()?.is_dir();
    Some((real, dir))
}

/// The arguments before `--`: the file system from `plan`, fresh namespaces, no capabilities.
/// `seccomp_fd` is the descriptor the filter program is read from; `cwd` where the command
/// starts.
pub(crate) fn args(
    plan: &MountPlan,
    stand_ins: &StandIns,
    seccomp_fd: Option<i32>,
    cwd: &Path,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        for i in items {
            a.push(i.as_ref().to_owned());
        }
    };
    push(&[
        &"--ro-bind",
        &"/",
        &"/",
        &"--dev",
        &"/dev",
        &"--proc",
        &"/proc",
    ]);
    for w in &plan.writable {
        if let Some((real, _)) = existing(&w.path) {
            push(&[&"--bind", &real, &real]);
        }
    }
    for r in &plan.read_only {
        if let Some((real, _)) = existing(&r.path) {
            push(&[&"--ro-bind", &real, &real]);
        }
    }
    for h in &plan.hidden {
        if let Some((real, dir)) = existing(&h.path) {
            let with = if dir { &stand_ins.dir } else { &stand_ins.file };
            push(&[&"--ro-bind", with, &real]);
        }
    }
    for ab in &plan.absent {
        // The placeholder was made before the launch (see `absent`); it is bound over now.
        if let Some((real, dir)) = existing(&ab.path) {
            let with = if dir { &stand_ins.dir } else { &stand_ins.file };
            push(&[&"--ro-bind", with, &real]);
        }
    }
    push(&[
        &"--unshare-pid",
        &"--unshare-net",
        &"--unshare-ipc",
        &"--unshare-uts",
        &"--unshare-cgroup-try",
        &"--die-with-parent",
        &"--new-session",
        &"--cap-drop",
        &"ALL",
    ]);
    if let Some(fd) = seccomp_fd {
        push(&[&"--seccomp", &fd.to_string()]);
    }
    push(&[&"--chdir", &cwd]);
    a
}
