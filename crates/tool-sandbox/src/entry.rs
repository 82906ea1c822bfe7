//! Deciding an `execve` at its entry, where what the supervisor reads there is what the kernel
//! will execute.
//!
//! The `notify` supervisor decides a program at its exec stop, after the kernel loaded it,
//! because at the call's entry its arguments sit in memory that something else may rewrite
//! between the supervisor's read and the kernel's copy. Stopping there costs a `ptrace` attach,
//! a stop and a detach for every program, most of the supervisor's cost on a command that
//! starts many short ones. That risk has a short list of causes, and inside the sandbox each
//! one is either closed for the whole command or checked for the one call:
//!
//! - another thread of the caller: the caller must be its only thread (`/proc/PID/stat`);
//! - a process sharing its memory: a `vfork` child shares its parent's, whose only thread is
//!   then held until the child executes (checked up the chain with `kcmp`); any other sharing
//!   (`clone` with `CLONE_VM` beyond a `vfork`, or `CLONE_FS`) is handed to the supervisor by
//!   the filter (`seccomp::notify_program`), and from the first one on nothing is decided at
//!   entry for the rest of the command;
//! - memory shared with another process (a shared mapping, a file's pages): every byte read
//!   (the path, the argument array, each argument) must lie in private anonymous memory (the
//!   heap, the stack), asked of the kernel per mapping (`PROCMAP_QUERY`);
//! - writes from outside: `ptrace`, `process_vm_writev` and `userfaultfd` are refused by the
//!   sandbox's filter when every program is watched, `io_uring` and asynchronous I/O are not
//!   there at all, and `/proc` is mounted read-only, so no `/proc/PID/mem` opens for writing;
//!   where only the line's own programs are watched, what could write there is a program the
//!   policy allowed, which could as well do what it liked in the line's shell;
//! - a signal: a handler can run only if the call is interrupted, and then the answer to this
//!   notification fails and the call comes again, to be read again;
//! - the path resolving to another file by the time the kernel opens it: the path must be
//!   absolute and pass only through read-only mounts of the sandbox (no process in it can
//!   change those, or mount anything), and name a native ELF executable, no script (whose
//!   interpreter the kernel chooses), no file the kernel hands to another program.
//!
//! Only an allow is taken at entry. Anything else (an ask, a deny, any doubt) goes the way of
//! the exec stop, which decides again on what was loaded and stops the command there.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Component, Path, PathBuf};

use crate::supervise::read_memory;

/// The most arguments, and bytes of them, decided at entry; beyond, the exec stop decides.
const MAX_ARGS: usize = 64;
const MAX_BYTES: usize = 64 * 1024;
const PATH_MAX: usize = 4096;

/// A file an absolute path was found to resolve to, for good.
#[derive(Debug)]
struct Fixed {
    /// The path as the sandbox sees it, every symbolic link followed.
    inside: PathBuf,
    /// The path as this process sees it (what `/proc/PID/exe` would say once loaded).
    exe: PathBuf,
    id: (u64, u64),
}

/// What the supervisor keeps to decide at entry, for one command.
#[derive(Debug)]
pub(crate) struct AtEntry {
    /// The sandbox's mounts (in its own view), in the order mounted, and whether each is
    /// writable.
    mounts: Vec<(PathBuf, bool)>,
    /// What each absolute path executed so far resolves to; `None`: it cannot be decided at
    /// entry.
    files: HashMap<Vec<u8>, Option<Fixed>>,
    /// A process sharing memory or the working directory beyond a `vfork` was made.
    shared: bool,
    /// The link count of a single-threaded process's `task` directory in `/proc`.
    alone_links: u64,
}

/// The program an `execve` is about to run, read at its entry.
pub(crate) struct Read {
    pub(crate) argv: Vec<String>,
    pub(crate) exe: PathBuf,
    pub(crate) cwd: PathBuf,
    pub(crate) image: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) image_id: (u64, u64),
}

impl AtEntry {
    /// For the sandbox the line's shell `line` (loaded, not yet running) runs in; `None` when
    /// this kernel or sandbox cannot give the guarantees (`/proc` not read-only in it, no
    /// `PROCMAP_QUERY`).
    pub(crate) fn new(line: libc::pid_t) -> Option<AtEntry> {
        let text = std::fs::read(format!("/proc/{line}/mountinfo")).ok()?;
        let mounts = mounts_of(&text);
        let proc_writable = mounts
            .iter()
            .rev()
            .find(|(p, _)| p == Path::new("/proc"))
            .is_none_or(|(_, rw)| *rw);
        let dir = ProcDir::open(line)?;
        if proc_writable || !Maps::open(&dir)?.is_supported() {
            return None;
        }
        // The line's shell, just loaded, is one thread.
        let alone_links = dir.task_links()?;
        Some(AtEntry {
            mounts,
            files: HashMap::new(),
            shared: false,
            alone_links,
        })
    }

    /// A process sharing memory or the working directory beyond a `vfork` was made: from now
    /// on nothing is decided at entry.
    pub(crate) fn sharing_seen(&mut self) {
        self.shared = true;
    }

    /// Read what thread `tid`, waiting at the entry of `execve(path, argv, …)` (the call's
    /// first two arguments), is about to run, when that read is certain to be what the kernel
    /// executes; `None` otherwise.
    pub(crate) fn read(&mut self, tid: libc::pid_t, path_at: u64, argv_at: u64) -> Option<Read> {
        if self.shared {
            return None;
        }
        let dir = ProcDir::open(tid)?;
        if !self.alone(tid, &dir) {
            return None;
        }
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let path = read_string(tid, path_at, PATH_MAX)?;
        ranges.push((path_at, path.len() as u64 + 1));
        let pointers = read_pointers(tid, argv_at)?;
        ranges.push((argv_at, (pointers.len() as u64 + 1) * 8));
        let mut argv = Vec::with_capacity(pointers.len());
        let mut total = 0usize;
        for &p in &pointers {
            let word = read_string(tid, p, MAX_BYTES - total)?;
            total += word.len() + 1;
            ranges.push((p, word.len() as u64 + 1));
            argv.push(word);
        }
        if argv.is_empty() {
            return None;
        }
        let maps = Maps::open(&dir)?;
        if !ranges
            .iter()
            .all(|&(at, len)| maps.private_anonymous(at, len))
        {
            return None;
        }
        let root = PathBuf::from(format!("/proc/{tid}/root"));
        if !self.files.contains_key(&path) {
            let fixed = self.resolve(&root, &path);
            self.files.insert(path.clone(), fixed);
        }
        let fixed = self.files.get(&path)?.as_ref()?;
        let cwd = dir.read_link(c"cwd")?;
        Some(Read {
            argv: argv.into_iter().map(lossy).collect(),
            exe: fixed.exe.clone(),
            cwd,
            image: root.join(fixed.inside.strip_prefix("/").unwrap_or(&fixed.inside)),
            root,
            image_id: fixed.id,
        })
    }

    /// Whether nothing but thread `tid` itself can write its memory while it waits: it is its
    /// process's only thread, and each process up the chain it shares memory with (its `vfork`
    /// parents, held until it executes) is its own only thread too.
    fn alone(&self, tid: libc::pid_t, dir: &ProcDir) -> bool {
        if dir.task_links() != Some(self.alone_links) {
            return false;
        }
        let mut at = tid;
        for _ in 0..8 {
            let Some(parent) = parent_of(at) else {
                return false;
            };
            if parent <= 0 || !same_memory(at, parent) {
                return true;
            }
            let Some(up) = ProcDir::open(parent) else {
                return false;
            };
            if up.task_links() != Some(self.alone_links) {
                return false;
            }
            at = parent;
        }
        false
    }

    /// Whether `path` (in the sandbox's view) lies on a writable mount.
    fn on_writable(&self, path: &Path) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (m, rw) in &self.mounts {
            if path.starts_with(m) {
                let depth = m.components().count();
                if best.is_none_or(|(d, _)| depth >= d) {
                    best = Some((depth, *rw));
                }
            }
        }
        best.is_none_or(|(_, rw)| rw)
    }

    /// What absolute `path` resolves to in the sandbox, seen through `root`, when every name
    /// looked up on the way lies on a read-only mount and the file is a native ELF executable.
    fn resolve(&self, root: &Path, path: &[u8]) -> Option<Fixed> {
        use std::os::unix::fs::MetadataExt as _;
        let path = Path::new(std::ffi::OsStr::from_bytes(path));
        if !path.is_absolute() {
            return None;
        }
        let mut todo: Vec<OsString> = components(path)?;
        todo.reverse();
        let mut at = PathBuf::from("/");
        let mut links = 0;
        while let Some(name) = todo.pop() {
            let next = at.join(&name);
            if self.on_writable(&next) {
                return None;
            }
            let seen = root.join(next.strip_prefix("/").ok()?);
            let meta = std::fs::symlink_metadata(&seen).ok()?;
            if meta.file_type().is_symlink() {
                links += 1;
                if links > 40 {
                    return None;
                }
                let target = std::fs::read_link(&seen).ok()?;
                if target.is_absolute() {
                    at = PathBuf::from("/");
                }
                let mut more = components(&target)?;
                more.reverse();
                todo.extend(more);
            } else {
                if !todo.is_empty() && !meta.is_dir() {
                    return None;
                }
                at = next;
            }
        }
        let seen = root.join(at.strip_prefix("/").ok()?);
        let file = std::fs::File::open(&seen).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || !native_elf(&file) {
            return None;
        }
        let exe = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
        Some(Fixed {
            inside: at,
            exe,
            id: (meta.dev(), meta.ino()),
        })
    }
}

/// The normal components of `path`; `None` when it has `..` (resolved by the kernel against
/// whatever the link led to, which this reading does not follow).
fn components(path: &Path) -> Option<Vec<OsString>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n.to_owned()),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Whether `file` starts as an ELF executable of this machine's own architecture (one the
/// kernel loads itself rather than hand to another program).
fn native_elf(file: &std::fs::File) -> bool {
    use std::os::unix::fs::FileExt as _;
    #[cfg(target_arch = "x86_64")]
    const MACHINE: u16 = 62;
    #[cfg(target_arch = "aarch64")]
    const MACHINE: u16 = 183;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const MACHINE: u16 = u16::MAX;
    let mut head = [0u8; 20];
    if file.read_exact_at(&mut head, 0).is_err() {
        return false;
    }
    let little = cfg!(target_endian = "little");
    head[..4] == *b"\x7fELF"
        && head[4] == 2
        && head[5] == if little { 1 } else { 2 }
        && u16::from_ne_bytes([head[18], head[19]]) == MACHINE
}

/// The sandbox's mounts from a `mountinfo` text: each mount point and whether it is writable.
fn mounts_of(text: &[u8]) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let (Some(point), Some(options)) = (fields.get(4), fields.get(5)) else {
            continue;
        };
        let rw = options.split(|&b| b == b',').any(|o| o == b"rw");
        out.push((PathBuf::from(OsString::from_vec(unescape(point))), rw));
    }
    out
}

/// A `mountinfo` field with its octal escapes (`\040` for a space) undone.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && let Some(oct) = field.get(i + 1..i + 4)
            && oct.iter().all(|d| (b'0'..=b'7').contains(d))
        {
            out.push(oct.iter().fold(0u8, |v, d| v.wrapping_mul(8) + (d - b'0')));
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A process's directory in `/proc`, open: what is read of it is looked up from there.
struct ProcDir(OwnedFd);

impl ProcDir {
    #[allow(unsafe_code)]
    fn open(pid: libc::pid_t) -> Option<ProcDir> {
        let path = std::ffi::CString::new(format!("/proc/{pid}")).ok()?;
        // SAFETY: open a NUL-terminated path of ours; the descriptor is new and becomes ours.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: new and owned by nobody else.
        Some(ProcDir(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// The link count of its `task` directory: 2 and one per thread.
    #[allow(unsafe_code)]
    // `nlink_t` is 64 bits wide on some architectures, 32 on others.
    #[allow(clippy::unnecessary_cast)]
    fn task_links(&self) -> Option<u64> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
        // SAFETY: fstatat on our descriptor and a literal name, into a local of ours.
        let r = unsafe { libc::fstatat(self.0.as_raw_fd(), c"task".as_ptr(), st.as_mut_ptr(), 0) };
        // SAFETY: fstatat filled it in.
        (r == 0).then(|| unsafe { st.assume_init() }.st_nlink as u64)
    }

    #[allow(unsafe_code)]
    fn open_file(&self, name: &std::ffi::CStr) -> Option<OwnedFd> {
        // SAFETY: openat on our descriptor and a NUL-terminated name; the result is ours.
        let fd = unsafe {
            libc::openat(
                self.0.as_raw_fd(),
                name.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        // SAFETY: new and owned by nobody else.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    }

    #[allow(unsafe_code)]
    fn read_link(&self, name: &std::ffi::CStr) -> Option<PathBuf> {
        let mut buf = vec![0u8; PATH_MAX];
        // SAFETY: readlinkat into a buffer of ours, at most its length.
        let n = unsafe {
            libc::readlinkat(
                self.0.as_raw_fd(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n <= 0 || n as usize >= buf.len() {
            return None;
        }
        buf.truncate(n as usize);
        Some(PathBuf::from(OsString::from_vec(buf)))
    }
}

/// The parent of `pid` (a process's leader; for another thread, `None`), asked of a pidfd
/// (`PIDFD_GET_INFO`, Linux 6.13), or else read from `/proc/PID/stat`.
#[allow(unsafe_code)]
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    /// `struct pidfd_info`, its first version.
    #[repr(C)]
    #[derive(Default)]
    struct PidfdInfo {
        mask: u64,
        cgroupid: u64,
        pid: u32,
        tgid: u32,
        ppid: u32,
        ids: [u32; 8],
        exit_code: i32,
    }
    const PIDFD_GET_INFO: libc::c_ulong =
        (3 << 30) | ((std::mem::size_of::<PidfdInfo>() as libc::c_ulong) << 16) | (0xff << 8) | 11;
    let fd = crate::notify::pidfd_open(pid).ok()?;
    let mut info = PidfdInfo {
        mask: 1,
        ..PidfdInfo::default()
    };
    // SAFETY: PIDFD_GET_INFO reads and writes one pidfd_info (its size is in the request), a
    // local of ours.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO as _, &mut info) };
    if r == 0 && info.pid as libc::pid_t == pid {
        return Some(info.ppid as libc::pid_t);
    }
    crate::notify::parent_of(pid)
}

/// Whether `a` and `b` share one memory (`kcmp(KCMP_VM)`); unsure, they do.
#[allow(unsafe_code)]
fn same_memory(a: libc::pid_t, b: libc::pid_t) -> bool {
    const KCMP_VM: libc::c_int = 1;
    // SAFETY: kcmp takes two pids, a type and two indexes unused for this type.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, a, b, KCMP_VM, 0, 0) };
    !(1..=3).contains(&r)
}

/// A NUL-terminated string at `at` in `pid`'s memory, of at most `max` bytes.
fn read_string(pid: libc::pid_t, at: u64, max: usize) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut addr = at;
    loop {
        // To the end of the page at most: the next may not be mapped.
        let room = (PAGE - addr % PAGE) as usize;
        let mut buf = vec![0u8; room.min(max + 1 - out.len())];
        let n = read_memory(pid, addr, &mut buf).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() > max {
            return None;
        }
        addr += n as u64;
    }
}

/// The argument pointers of the array at `at` (NULL-terminated), at most [`MAX_ARGS`].
fn read_pointers(pid: libc::pid_t, at: u64) -> Option<Vec<u64>> {
    if at == 0 || !at.is_multiple_of(8) {
        return None;
    }
    let mut raw = [0u8; (MAX_ARGS + 1) * 8];
    // Up to the end of the page, then on: a short read stops at an unmapped page.
    let mut got = 0;
    while got < raw.len() {
        let addr = at + got as u64;
        let room = (4096 - addr % 4096) as usize;
        let end = (got + room).min(raw.len());
        let n = read_memory(pid, addr, &mut raw[got..end]).ok()?;
        if n == 0 {
            break;
        }
        got += n;
        if raw[..got - got % 8].chunks_exact(8).any(|w| w == [0u8; 8]) {
            break;
        }
    }
    let mut out = Vec::new();
    for w in raw[..got - got % 8].chunks_exact(8) {
        let p = u64::from_ne_bytes(w.try_into().ok()?);
        if p == 0 {
            return Some(out);
        }
        out.push(p);
    }
    None
}

/// A process's mappings, asked one address at a time (`PROCMAP_QUERY` on `/proc/PID/maps`,
/// Linux 6.11).
struct Maps(OwnedFd);

/// `struct procmap_query`.
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

/// `_IOWR('f', 17, struct procmap_query)`.
const PROCMAP_QUERY: libc::c_ulong =
    (3 << 30) | ((std::mem::size_of::<ProcmapQuery>() as libc::c_ulong) << 16) | (0x66 << 8) | 17;
const PROCMAP_QUERY_VMA_SHARED: u64 = 0x08;

impl Maps {
    fn open(dir: &ProcDir) -> Option<Maps> {
        dir.open_file(c"maps").map(Maps)
    }

    /// The mapping that holds `addr`: (start, end, flags, inode).
    #[allow(unsafe_code)]
    fn query(&self, addr: u64) -> Result<(u64, u64, u64, u64), std::io::Error> {
        let mut q = ProcmapQuery {
            size: std::mem::size_of::<ProcmapQuery>() as u64,
            query_addr: addr,
            ..ProcmapQuery::default()
        };
        // SAFETY: PROCMAP_QUERY reads and writes one procmap_query, a local of ours whose
        // `size` says how large it is; no name or build id is asked for (no buffers).
        let r = unsafe { libc::ioctl(self.0.as_raw_fd(), PROCMAP_QUERY as _, &mut q) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((q.vma_start, q.vma_end, q.vma_flags, q.inode))
    }

    /// Whether the kernel answers queries here (an address nothing maps gives `ENOENT`; an
    /// older kernel does not know the request).
    fn is_supported(&self) -> bool {
        match self.query(0) {
            Ok(_) => true,
            Err(e) => e.raw_os_error() == Some(libc::ENOENT),
        }
    }

    /// Whether `len` bytes at `at` lie in one private mapping of no file: memory only this
    /// process's threads can write.
    fn private_anonymous(&self, at: u64, len: u64) -> bool {
        match self.query(at) {
            Ok((start, end, flags, inode)) => {
                start <= at
                    && at.saturating_add(len) <= end
                    && flags & PROCMAP_QUERY_VMA_SHARED == 0
                    && inode == 0
            }
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_gives_each_mount_point_and_whether_it_is_writable() {
        let text = b"1 0 0:1 / / ro,nosuid - ext4 /dev/x ro\n\
            2 1 0:2 / /w/my\\040project rw,relatime - ext4 /dev/x rw\n\
            3 1 0:3 / /proc rw - proc proc rw\n\
            4 1 0:3 / /proc ro,nosuid - proc proc rw\n";
        let m = mounts_of(text);
        assert_eq!(
            m,
            vec![
                (PathBuf::from("/"), false),
                (PathBuf::from("/w/my project"), true),
                (PathBuf::from("/proc"), true),
                (PathBuf::from("/proc"), false),
            ]
        );
        let at = AtEntry {
            mounts: m,
            files: HashMap::new(),
            shared: false,
            alone_links: 3,
        };
        assert!(!at.on_writable(Path::new("/usr/bin/true")));
        assert!(at.on_writable(Path::new("/w/my project/bin/x")));
        assert!(at.on_writable(Path::new("/w/my project")));
        assert!(!at.on_writable(Path::new("/w/my")));
        // The mount on top (listed last) is the one that counts.
        assert!(!at.on_writable(Path::new("/proc/self/mem")));
    }

    #[test]
    fn paths_with_parent_components_are_not_followed() {
        assert!(components(Path::new("/usr/bin/../bin/true")).is_none());
        assert_eq!(
            components(Path::new("/usr/./bin//true")),
            Some(vec!["usr".into(), "bin".into(), "true".into()])
        );
    }

    #[test]
    fn only_native_elf_files_are_taken() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let script = dir.path().join("s");
        std::fs::write(&script, "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
        let f = std::fs::File::open(&script).unwrap_or_else(|e| panic!("{e}"));
        assert!(!native_elf(&f));
        let me = std::fs::File::open("/proc/self/exe").unwrap_or_else(|e| panic!("{e}"));
        assert!(native_elf(&me));
    }

    #[test]
    fn a_process_of_many_threads_is_not_alone() {
        // The test harness runs tests on threads: this process is never its only thread.
        let dir = ProcDir::open(std::process::id() as libc::pid_t)
            .unwrap_or_else(|| panic!("no /proc/self"));
        let links = dir.task_links().unwrap_or_else(|| panic!("no task links"));
        // The main thread and this test's at least: two and one per thread.
        assert!(links >= 4, "{links}");
        assert_eq!(
            parent_of(std::process::id() as libc::pid_t),
            Some(std::os::unix::process::parent_id() as libc::pid_t)
        );
        assert!(!same_memory(
            std::process::id() as libc::pid_t,
            std::os::unix::process::parent_id() as libc::pid_t
        ));
    }
}
