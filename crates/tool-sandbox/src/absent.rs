//! Stand-ins for protected names that do not exist yet (`.claude/`, `.mcp.json`, a missing
//! `.git/hooks`). A bind mount needs something to mount over, so an empty directory or file is
//! made at the name before the launch and a read-only stand-in is bound over it; the command
//! can neither create the name nor put anything under it. When the command ends, the name is
//! removed again if this process made it, it is still empty, and no other sandboxed command
//! (of any process) still uses it: each user holds a shared lock on a file named after the
//! path, and the last one out, taking the lock exclusively, cleans up.

use std::fs::File;
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};

use tool_core::sandbox::AbsentPath;

/// The stand-ins one command made or shares, held until it ends.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    held: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    dir: bool,
    lock: File,
}

#[allow(unsafe_code)]
fn flock(f: &File, op: libc::c_int) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(f.as_raw_fd(), op) == 0 }
}

fn lock_name(path: &Path) -> String {
    // FNV-1a of the path: a stable file name per placeholder.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("absent-{h:016x}.lock")
}

impl Placeholders {
    /// Make (or share) a stand-in at every absent path whose parent exists.
    pub(crate) fn make(absent: &[AbsentPath], runtime: &Path) -> std::io::Result<Self> {
        let mut held = Vec::new();
        for a in absent {
            let Some(parent) = a.path.parent() else {
                continue;
            };
            // Nothing to stand in for without a parent; a name that exists is bound read-only
            // as it is (the plan lists existing protected paths on their own).
            if !parent.is_dir() || std::fs::symlink_metadata(&a.path).is_ok() {
                continue;
            }
            let lock_path = runtime.join(lock_name(&a.path));
            let lock = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)?;
            flock(&lock, libc::LOCK_SH);
            if std::fs::symlink_metadata(&a.path).is_err() {
                let made = if a.dir {
                    std::fs::create_dir(&a.path)
                } else {
                    File::options()
                        .write(true)
                        .create_new(true)
                        .open(&a.path)
                        .map(drop)
                };
                if let Err(e) = made
                    && e.kind() != std::io::ErrorKind::AlreadyExists
                {
                    return Err(e);
                }
            }
            held.push(Held {
                path: a.path.clone(),
                dir: a.dir,
                lock,
            });
        }
        Ok(Self { held })
    }

    /// Release the stand-ins: the last user removes the ones still empty.
    pub(crate) fn release(&mut self) {
        for h in self.held.drain(..) {
            flock(&h.lock, libc::LOCK_UN);
            if !flock(&h.lock, libc::LOCK_EX | libc::LOCK_NB) {
                continue;
            }
            let empty = if h.dir {
                std::fs::read_dir(&h.path).is_ok_and(|mut d| d.next().is_none())
            } else {
                std::fs::symlink_metadata(&h.path).is_ok_and(|m| m.is_file() && m.len() == 0)
            };
            if empty {
                let _ = if h.dir {
                    std::fs::remove_dir(&h.path)
                } else {
                    std::fs::remove_file(&h.path)
                };
            }
            // The lock file stays: removing it would let a later user lock a new file while
            // an earlier one still holds the old one.
            flock(&h.lock, libc::LOCK_UN);
        }
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        self.release();
    }
}
