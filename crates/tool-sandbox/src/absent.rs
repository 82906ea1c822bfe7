//! Stand-ins for protected names that do not exist yet (`.claude/`, `.mcp.json`, a missing
//! `.git/hooks`). A bind mount needs something to mount over, so an empty file is made at the
//! name before the launch and `/dev/null` is bound over it; the command can neither create the
//! name nor put anything under it. When the command ends, the file is removed again if a
//! sandbox made it, it is still an empty file, and no other sandboxed command (of any
//! process) still uses it: each user holds a shared lock on a file named after the path (which
//! also records that a sandbox made the stand-in), and the last one out, taking the lock
//! exclusively, cleans up. A command that plans while another's stand-in is there holds it too;
//! if it is gone by the time it locks, it makes it again.
//!
//! And names that must not be left behind ([`MountPlan::undone`]): whatever the command
//! created there is removed when it ends.

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
            if !parent.is_dir() {
                continue;
            }
            let lock_path = runtime.join(lock_name(&a.path));
            let mut lock = File::options()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&lock_path)?;
            flock(&lock, libc::LOCK_SH);
            match std::fs::symlink_metadata(&a.path) {
                Err(_) => {
                    let made = File::options()
                        .write(true)
                        .create_new(true)
                        .open(&a.path)
                        .map(drop);
                    match made {
                        Ok(()) => {
                            use std::io::Write as _;
                            // Mark: a sandbox made this stand-in.
                            let _ = lock.write_all(b"1");
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(e),
                    }
                }
                // A stand-in (or an empty file of the user's): held as it is.
                Ok(m) if m.is_file() && m.len() == 0 => {}
                // Something real appeared since the plan was made: not a stand-in's place.
                Ok(_) => continue,
            }
            held.push(Held {
                path: a.path.clone(),
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
            let made_by_a_sandbox = {
                use std::io::{Read as _, Seek as _};
                let mut mark = Vec::new();
                let mut f = &h.lock;
                let _ = f.rewind();
                let _ = f.read_to_end(&mut mark);
                mark.starts_with(b"1")
            };
            if made_by_a_sandbox
                && std::fs::symlink_metadata(&h.path).is_ok_and(|m| m.is_file() && m.len() == 0)
            {
                let _ = std::fs::remove_file(&h.path);
            }
            if made_by_a_sandbox {
                let _ = h.lock.set_len(0);
            }
            // The lock file stays: removing it would let a later user lock a new file while
            // an earlier one still holds the old one.
            flock(&h.lock, libc::LOCK_UN);
        }
    }
}

/// Names that must not be left behind, with those that did not exist when the command started.
#[derive(Debug, Default)]
pub(crate) struct Undone {
    missing: Vec<AbsentPath>,
}

impl Undone {
    pub(crate) fn note(list: &[AbsentPath]) -> Self {
        Self {
            missing: list
                .iter()
                .filter(|a| std::fs::symlink_metadata(&a.path).is_err())
                .cloned()
                .collect(),
        }
    }

    /// Remove what the command created at these names; what was removed.
    pub(crate) fn undo(&self) -> Vec<AbsentPath> {
        let mut removed = Vec::new();
        for a in &self.missing {
            let Ok(m) = std::fs::symlink_metadata(&a.path) else {
                continue;
            };
            let gone = if m.is_dir() {
                std::fs::remove_dir_all(&a.path)
            } else {
                std::fs::remove_file(&a.path)
            };
            if gone.is_ok() {
                removed.push(a.clone());
            }
        }
        removed
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        self.release();
    }
}
