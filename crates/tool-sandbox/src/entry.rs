//! Deciding an `execve` at its entry, while the caller waits on its notification, where
//! nothing can change what the call will run before the kernel reads it.
//!
//! The `notify` supervisor decides at the exec stop because what a notification shows can
//! change after it was read: the arguments sit in memory other tasks can write, and the path
//! names a file through directories others can change. Holding each program at its exec stop
//! costs two more stops of the caller. So, where every program is watched (the command runs
//! sealed: see `seccomp`), the supervisor decides at the entry when it can show that nothing
//! can change what it read, and takes the exec stop otherwise. What it checks:
//!
//! - **Memory.** The caller is the only thread of its process and shares its memory with no
//!   other process (a `vfork` child does not qualify: its parent waits, but can be killed,
//!   and its exit writes to the shared memory). The sealed filter leaves no other way in:
//!   `ptrace`, `process_vm_writev` and `userfaultfd` fail, native AIO (which completes into
//!   memory with no task running) fails, `clone` shares memory only to make a thread or a
//!   `vfork` child, and bubblewrap mounts `/proc` read-only, so no `/proc/PID/mem` opens for
//!   writing. The path, the argument vector and every argument lie in private anonymous
//!   mappings (the stack, the heap), which no file and no other process's writes show
//!   through. (Devices that write into pinned user pages are not in the sandbox's `/dev`.)
//! - **The file.** The path is absolute and leads, within the caller's root and without
//!   crossing a mount point, to a regular file with one link on a read-only mount: the
//!   sandbox's root, which nothing inside can remount, link into or write. A file found
//!   before is used again only while the path still leads to it with the same change time
//!   (the host, outside the sandbox, may replace it; what happens outside between the check
//!   and the kernel's load is not in this reading).
//! - **The program.** The file is an ELF executable of this machine, which the kernel runs
//!   itself (no `binfmt_misc` handler is registered). A script's interpreter is read from the
//!   script by the kernel, and is decided at the exec stop.
//!
//! A path that leads nowhere on the read-only root is answered with the kernel's own error,
//! whatever the memory holds by then: an error runs nothing. Anything else (a relative path,
//! a writable directory, a script, a process with threads or a `vfork` parent, arguments in a
//! shared mapping, a kernel without `PROCMAP_QUERY`) goes to the exec stop. Reading the
//! caller's `/proc` files is sound only while the caller is the task the notification names:
//! the notification is checked to be still pending after every read.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;

use crate::supervise::{Loaded, lossy, read_memory};

/// What an `execve` notification will do, as far as can be known before it runs.
pub(crate) enum Entry {
    /// It runs this program, which nothing can change before the kernel loads it. The
    /// descriptor holds the file open for as long as the judge may read it (`image`).
    Runs(Loaded, Arc<OwnedFd>),
    /// Its path leads nowhere on the read-only root: it is answered with this error, the
    /// kernel's own for it, rather than let go to find the same (so nothing that changes
    /// meanwhile can make it find something).
    Fails(libc::c_int),
    /// Not known: the program is decided at its exec stop.
    Unsure,
}

/// Whether programs can be decided at the entry on this machine: no `binfmt_misc` handler is
/// registered (one could run an interpreter for an ELF file that the kernel would otherwise
/// load itself, and the exec stop would judge that interpreter). Where its file system is not
/// mounted, none can be seen, and none registered from inside the sandbox.
pub(crate) fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| match std::fs::read_dir("/proc/sys/fs/binfmt_misc") {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .all(|e| matches!(e.file_name().to_str(), Some("register" | "status"))),
        Err(_) => true,
    })
}

/// The system call number of `execve` on this architecture.
#[cfg(target_arch = "x86_64")]
const SYS_EXECVE: i32 = 59;
#[cfg(target_arch = "aarch64")]
const SYS_EXECVE: i32 = 221;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYS_EXECVE: i32 = -1;

/// The ELF machine of this architecture.
#[cfg(target_arch = "x86_64")]
const ELF_MACHINE: u16 = 62;
#[cfg(target_arch = "aarch64")]
const ELF_MACHINE: u16 = 183;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ELF_MACHINE: u16 = 0;

/// `kcmp`'s type for "do these processes share their memory".
const KCMP_VM: libc::c_int = 1;

/// At most this many arguments, and this many bytes of them, are read at the entry; a
/// longer command goes to the exec stop.
const MAX_ARGS: usize = 4096;
const MAX_BYTES: usize = 256 * 1024;
const PAGE: u64 = 4096;

/// `struct procmap_query` (`linux/fs.h`, Linux 6.11).
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
const PROCMAP_QUERY: libc::c_ulong = 0xC068_6611;
const PROCMAP_QUERY_VMA_SHARED: u64 = 0x08;

/// A file a path led to on the sandbox's read-only root: its descriptor, its path as the
/// supervisor sees it, its identity, and its change time (a file the host replaces or
/// changes meanwhile, from outside the sandbox, is looked up again).
#[derive(Clone)]
struct Found {
    file: Arc<OwnedFd>,
    exe: PathBuf,
    id: (u64, u64),
    changed: (i64, i64),
}

/// What a path leads to.
enum Resolved {
    /// Nowhere: a name on the way does not exist (the error).
    Nothing(libc::c_int),
    File(Found),
    /// Somewhere else (another mount, a file with other links, a script), or not known.
    Unsure,
}

/// Deciding at the entry, for one command.
#[derive(Default)]
pub(crate) struct Entries {
    /// The root of the sandbox, which every process of the command shares: none can change
    /// its root or mount namespace (no capabilities, no new user namespace).
    root: Option<Arc<OwnedFd>>,
    /// Files paths led to.
    found: HashMap<Vec<u8>, Found>,
}

/// At most this many paths are remembered (each file's descriptor is held).
const REMEMBERED: usize = 512;

impl Entries {
    /// Read the `execve` notification `n` asks about; `pending` says whether it is still
    /// waiting (so that what was read of its process was read of that process).
    pub(crate) fn read(&mut self, n: &libc::seccomp_notif, pending: impl Fn() -> bool) -> Entry {
        if n.data.nr != SYS_EXECVE {
            return Entry::Unsure;
        }
        let tid = n.pid as libc::pid_t;
        // First what is cheapest to find out and rules out the most (a `vfork` child).
        if alone(tid) != Some(true) {
            return Entry::Unsure;
        }
        let [path_at, argv_at, ..] = n.data.args;
        let Some((path, pointers)) = read_path_and_vector(tid, path_at, argv_at) else {
            return Entry::Unsure;
        };
        let root = match &self.root {
            Some(root) => root.clone(),
            None => {
                let Some(root) = open_at(
                    None,
                    &format!("/proc/{tid}/root"),
                    libc::O_PATH | libc::O_DIRECTORY,
                ) else {
                    return Entry::Unsure;
                };
                // Only the process that called can have given it.
                if !pending() {
                    return Entry::Unsure;
                }
                let root = Arc::new(root);
                self.root = Some(root.clone());
                root
            }
        };
        let found = match self.resolve(&root, &path) {
            Resolved::File(found) => found,
            // Whatever the memory holds by now: the answer is an error, which runs nothing.
            Resolved::Nothing(errno) => return Entry::Fails(errno),
            Resolved::Unsure => return Entry::Unsure,
        };
        match Self::read_in(tid, path_at, &path, argv_at, &pointers, found) {
            Some(entry) if pending() => entry,
            _ => Entry::Unsure,
        }
    }

    /// The rest of [`Entries::read`], for a caller found alone in its memory. Its `/proc`
    /// files are read by path: the caller's number cannot name another process while its
    /// notification is pending, which is checked after them.
    fn read_in(
        tid: libc::pid_t,
        path_at: u64,
        path: &[u8],
        argv_at: u64,
        pointers: &[u64],
        found: Found,
    ) -> Option<Entry> {
        if pointers.is_empty() {
            return Some(Entry::Unsure);
        }
        let mut spans: Vec<(u64, u64)> = vec![
            (path_at, path.len() as u64 + 1),
            (argv_at, (pointers.len() as u64 + 1) * 8),
        ];
        let words = read_strings(tid, pointers)?;
        for (at, word) in pointers.iter().zip(&words) {
            spans.push((*at, word.len() as u64 + 1));
        }
        if !private_memory(tid, &spans)? {
            return Some(Entry::Unsure);
        }
        let cwd = std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?;
        Some(Entry::Runs(
            Loaded {
                argv: words.into_iter().map(lossy).collect(),
                interpreter: None,
                exe: found.exe,
                cwd,
                image: PathBuf::from(format!("/proc/self/fd/{}", found.file.as_raw_fd())),
                root: PathBuf::from(format!("/proc/{tid}/root")),
                image_id: found.id,
            },
            found.file,
        ))
    }

    /// What `path` leads to from the sandbox's root: a file found before, if the path still
    /// leads to it unchanged, else looked up afresh.
    fn resolve(&mut self, root: &OwnedFd, path: &[u8]) -> Resolved {
        let name = path
            .strip_prefix(b"/")
            .and_then(|rel| CString::new(rel).ok());
        if let Some(f) = self.found.get(path)
            && let Some(name) = &name
            && stat_at(root, name, 0).is_some_and(|st| version(&st) == (f.id, f.changed))
        {
            return Resolved::File(f.clone());
        }
        let r = resolve(root, path).unwrap_or(Resolved::Unsure);
        match &r {
            Resolved::File(f) if self.found.len() < REMEMBERED => {
                self.found.insert(path.to_vec(), f.clone());
            }
            _ => {
                self.found.remove(path);
            }
        }
        r
    }
}

/// Resolve `path` afresh (see [`Entries::resolve`]).
fn resolve(root: &OwnedFd, path: &[u8]) -> Option<Resolved> {
    let (file, st) = match open_fixed(root, path) {
        Ok(opened) => opened,
        Err(Fixed::Nothing(errno)) => return Some(Resolved::Nothing(errno)),
        Err(Fixed::Unsure) => return Some(Resolved::Unsure),
    };
    if !native_elf(&file) {
        return Some(Resolved::Unsure);
    }
    let exe = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let (id, changed) = version(&st);
    Some(Resolved::File(Found {
        file: Arc::new(file),
        exe,
        id,
        changed,
    }))
}

/// `fstatat(dir, name, flags)`: what `name` in `dir` leads to (`dir` itself with
/// `AT_EMPTY_PATH` and an empty name).
#[allow(unsafe_code)]
fn stat_at(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> Option<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstatat writes one stat to our buffer; `dir` is open.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), flags) };
    if r != 0 {
        return None;
    }
    // SAFETY: fstatat succeeded, so it filled the buffer in.
    Some(unsafe { st.assume_init() })
}

/// A file's identity (device and inode) and change time.
fn version(st: &libc::stat) -> ((u64, u64), (i64, i64)) {
    ((st.st_dev, st.st_ino), (st.st_ctime, st.st_ctime_nsec))
}

/// Whether no task but `tid` can run in its memory, or write to it on its way out: it is
/// the only thread of its process and shares its memory with no other process. (A `vfork`
/// parent, though it waits for the `execve`, can be killed, and its exit writes to the
/// memory it shares: its thread id's clearing, its robust futexes.) `None` when it cannot
/// be told.
///
/// What it looks at cannot change while `tid` waits at its notification: no process of a
/// sealed command can add a thread to another or come to share its memory (`clone` shares
/// memory only from the caller, which waits), so the answer holds until the call goes on.
fn alone(tid: libc::pid_t) -> Option<bool> {
    // One read of `/proc/TID/stat` gives both the parent and the number of threads.
    let stat = crate::supervise::read_small(&format!("/proc/{tid}/stat"))?;
    let (parent, threads) = parent_and_threads(&stat)?;
    if threads != 1 {
        return Some(false);
    }
    if parent <= 1 {
        return Some(true);
    }
    // kcmp compares with the parent's leader, whose memory is gone once it has ended on its
    // own (a zombie leader of threads that live on): a parent with threads is not looked into.
    Some(!same_memory(tid, parent)? && task_count(parent)? == 1)
}

/// The number of threads of process `pid`: its `task` directory has two links more (a
/// leader that has ended while its threads live on still counts).
fn task_count(pid: libc::pid_t) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    let links = std::fs::metadata(format!("/proc/{pid}/task")).ok()?.nlink();
    links.checked_sub(2)
}

/// The parent (field 4) and the number of threads (field 20) of a `/proc/PID/stat`.
fn parent_and_threads(stat: &[u8]) -> Option<(libc::pid_t, u64)> {
    // The fields after the command name, which is in parentheses and may hold anything.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    // Field 3 (the state) comes first.
    let mut fields = rest.split_whitespace();
    let parent = fields.nth(1)?.parse().ok()?;
    let threads = fields.nth(15)?.parse().ok()?;
    Some((parent, threads))
}

/// Whether processes `a` and `b` share their memory (`kcmp`); `None` when it cannot be told.
#[allow(unsafe_code)]
fn same_memory(a: libc::pid_t, b: libc::pid_t) -> Option<bool> {
    // SAFETY: kcmp takes two pids, a type and two unused integers, and touches no memory.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, a, b, KCMP_VM, 0, 0) };
    (r >= 0).then_some(r == 0)
}

/// Whether every span (address, length) of `tid`'s memory lies in a private mapping of no
/// file: no other process shares those pages and no file shows through them. `None` when the
/// kernel cannot say (`PROCMAP_QUERY` is Linux 6.11's).
#[allow(unsafe_code)]
fn private_memory(tid: libc::pid_t, spans: &[(u64, u64)]) -> Option<bool> {
    let maps = open_at(None, &format!("/proc/{tid}/maps"), libc::O_RDONLY)?;
    let mut known: Vec<(u64, u64)> = Vec::new();
    for &(at, len) in spans {
        let end = at.checked_add(len)?;
        if known.iter().any(|&(s, e)| s <= at && end <= e) {
            continue;
        }
        let mut q = ProcmapQuery {
            size: std::mem::size_of::<ProcmapQuery>() as u64,
            query_addr: at,
            ..ProcmapQuery::default()
        };
        // SAFETY: PROCMAP_QUERY reads and writes one procmap_query, a local of ours whose
        // size it is told; no name or build id buffer is given.
        let r = unsafe { libc::ioctl(maps.as_raw_fd(), PROCMAP_QUERY as _, &mut q) };
        if r != 0 {
            return None;
        }
        let anonymous = q.inode == 0 && q.dev_major == 0 && q.dev_minor == 0;
        if !anonymous || q.vma_flags & PROCMAP_QUERY_VMA_SHARED != 0 || end > q.vma_end {
            return Some(false);
        }
        known.push((q.vma_start, q.vma_end));
    }
    Some(true)
}

/// `struct open_how` (`linux/openat2.h`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

enum Fixed {
    /// The path leads nowhere (the error), through directories that cannot change.
    Nothing(libc::c_int),
    /// Not a file that cannot change, or not known.
    Unsure,
}

/// Open the file `path` (as `execve` would resolve it in the caller's root) when it is a
/// regular file that nothing in the sandbox can change: reached without crossing a mount
/// point from the root, on a read-only mount, with no other link.
#[allow(unsafe_code)]
fn open_fixed(root: &OwnedFd, path: &[u8]) -> Result<(OwnedFd, libc::stat), Fixed> {
    let rel = path.strip_prefix(b"/").ok_or(Fixed::Unsure)?;
    if !read_only(root) {
        return Err(Fixed::Unsure);
    }
    let name = CString::new(if rel.is_empty() {
        b".".to_vec()
    } else {
        rel.to_vec()
    })
    .map_err(|_| Fixed::Unsure)?;
    let resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_XDEV | libc::RESOLVE_NO_MAGICLINKS;
    let file = open_in_root(root, &name, resolve).map_err(|e| match e {
        // Everything looked at lies on the read-only root: the call fails the same way.
        // (`ELOOP` may be a magic link refused here, which the kernel would follow.)
        libc::ENOENT | libc::ENOTDIR | libc::ENAMETOOLONG => Fixed::Nothing(e),
        _ => Fixed::Unsure,
    })?;
    let st = stat_at(&file, c"", libc::AT_EMPTY_PATH).ok_or(Fixed::Unsure)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink != 1 || !read_only(&file) {
        return Err(Fixed::Unsure);
    }
    Ok((file, st))
}

/// Open `named`, a path a program names, as that program would: relative to its working
/// directory `cwd`, within its root `root` (a path that opens it, `/proc/PID/root`). Fixed
/// (see [`open_fixed`]) where nothing in the sandbox can change where it leads; else what it
/// leads to now, links followed within the root. A magic link (`/proc/self/fd/3`, `/dev/fd/3`)
/// is not followed: the supervisor's `/proc/self` is not the program's.
pub(crate) fn open_named(
    root: &std::path::Path,
    cwd: &std::path::Path,
    named: &std::path::Path,
) -> Option<tool_core::sandbox::Named> {
    use std::os::unix::ffi::OsStrExt as _;
    let abs = if named.is_absolute() {
        named.to_path_buf()
    } else {
        cwd.join(named)
    };
    let root = open_at(None, root.to_str()?, libc::O_PATH | libc::O_DIRECTORY)?;
    let regular = |file: OwnedFd, fixed: bool| {
        let st = stat_at(&file, c"", libc::AT_EMPTY_PATH)?;
        (st.st_mode & libc::S_IFMT == libc::S_IFREG).then(|| tool_core::sandbox::Named {
            file: std::fs::File::from(file),
            fixed,
        })
    };
    match open_fixed(&root, abs.as_os_str().as_bytes()) {
        Ok((file, _)) => return regular(file, true),
        Err(Fixed::Nothing(_)) => return None,
        Err(Fixed::Unsure) => {}
    }
    let rel = abs.as_os_str().as_bytes().strip_prefix(b"/")?;
    let name = CString::new(if rel.is_empty() { &b"."[..] } else { rel }).ok()?;
    let file = open_in_root(
        &root,
        &name,
        libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS,
    )
    .ok()?;
    regular(file, false)
}

/// `openat2(root, name)` for reading, resolved as `resolve` says; the error number when it
/// fails.
#[allow(unsafe_code)]
fn open_in_root(root: &OwnedFd, name: &CStr, resolve: u64) -> Result<OwnedFd, libc::c_int> {
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    // SAFETY: openat2 reads the path and one open_how of ours, and returns a new descriptor.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    // SAFETY: new and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Whether the mount `fd` lies on is read-only.
#[allow(unsafe_code)]
fn read_only(fd: &OwnedFd) -> bool {
    let mut sfs = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: fstatvfs writes one statvfs to our buffer; `fd` is open.
    if unsafe { libc::fstatvfs(fd.as_raw_fd(), sfs.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstatvfs succeeded, so it filled the buffer in.
    let sfs = unsafe { sfs.assume_init() };
    sfs.f_flag & libc::ST_RDONLY != 0
}

/// Whether `file` is an ELF executable of this machine (which the kernel loads itself, with
/// no interpreter read from the file).
#[allow(unsafe_code)]
fn native_elf(file: &OwnedFd) -> bool {
    let mut head = [0u8; 20];
    // SAFETY: pread writes at most the buffer's length into our buffer; `file` is open.
    let n = unsafe { libc::pread(file.as_raw_fd(), head.as_mut_ptr().cast(), head.len(), 0) };
    n == head.len() as isize
        && head[..4] == *b"\x7fELF"
        && head[4] == 2
        && head[5] == if cfg!(target_endian = "little") { 1 } else { 2 }
        && u16::from_ne_bytes([head[18], head[19]]) == ELF_MACHINE
}

/// The path (up to `PATH_MAX`) at `path_at` and the pointers of the NULL-terminated vector at
/// `argv_at` of `tid`'s memory: one read for both when each ends on its first page.
fn read_path_and_vector(
    tid: libc::pid_t,
    path_at: u64,
    argv_at: u64,
) -> Option<(Vec<u8>, Vec<u64>)> {
    if !argv_at.is_multiple_of(8) || path_at == 0 || argv_at == 0 {
        return None;
    }
    let room = |at: u64| (PAGE - at % PAGE) as usize;
    let mut path = vec![0u8; room(path_at)];
    let mut vector = vec![0u8; room(argv_at)];
    let got = read_many(
        tid,
        &mut [(path_at, &mut path[..]), (argv_at, &mut vector[..])],
    )?;
    if got != path.len() + vector.len() {
        return None;
    }
    let path = match path.iter().position(|&b| b == 0) {
        Some(end) => path[..end].to_vec(),
        None => read_string(tid, path_at, libc::PATH_MAX as usize)?,
    };
    let mut pointers = Vec::new();
    for w in vector.chunks_exact(8) {
        let p = u64::from_ne_bytes(w.try_into().ok()?);
        if p == 0 {
            return Some((path, pointers));
        }
        pointers.push(p);
    }
    // The vector goes on past its first page.
    let mut at = argv_at + vector.len() as u64;
    while pointers.len() <= MAX_ARGS {
        let mut buf = [0u8; 8];
        if read_memory(tid, at, &mut buf).ok()? != 8 {
            return None;
        }
        let p = u64::from_ne_bytes(buf);
        if p == 0 {
            return Some((path, pointers));
        }
        pointers.push(p);
        at += 8;
    }
    None
}

/// The NUL-terminated strings at `pointers` of `tid`'s memory, at most `MAX_BYTES` in all:
/// one read for all of them when each ends on its first page.
fn read_strings(tid: libc::pid_t, pointers: &[u64]) -> Option<Vec<Vec<u8>>> {
    let mut bufs: Vec<Vec<u8>> = pointers
        .iter()
        .map(|&at| vec![0u8; (PAGE - at % PAGE) as usize])
        .collect();
    let total: usize = bufs.iter().map(Vec::len).sum();
    if total > 64 * PAGE as usize {
        // Spread over many pages: one at a time.
        bufs.clear();
    } else {
        let mut parts: Vec<(u64, &mut [u8])> = pointers
            .iter()
            .zip(bufs.iter_mut())
            .map(|(&at, b)| (at, &mut b[..]))
            .collect();
        if read_many(tid, &mut parts)? != total {
            bufs.clear();
        }
    }
    let mut out = Vec::with_capacity(pointers.len());
    let mut size = 0usize;
    for (i, &at) in pointers.iter().enumerate() {
        let word = match bufs
            .get(i)
            .and_then(|b| b.iter().position(|&c| c == 0).map(|e| &b[..e]))
        {
            Some(w) => w.to_vec(),
            None => read_string(tid, at, MAX_BYTES.saturating_sub(size))?,
        };
        size += word.len() + 1;
        if size > MAX_BYTES {
            return None;
        }
        out.push(word);
    }
    Some(out)
}

/// Read each (address, buffer) of `tid`'s memory in one call; the bytes read in all.
#[allow(unsafe_code)]
fn read_many(tid: libc::pid_t, parts: &mut [(u64, &mut [u8])]) -> Option<usize> {
    // The kernel's bound on the vectors of one call.
    if parts.len() > 1024 {
        return None;
    }
    let local: Vec<libc::iovec> = parts
        .iter_mut()
        .map(|(_, b)| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    let remote: Vec<libc::iovec> = parts
        .iter()
        .map(|(at, b)| libc::iovec {
            iov_base: *at as usize as *mut libc::c_void,
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: each local iovec is a buffer of ours, valid for its length; the remote ones are
    // only addresses in the other process, which the kernel checks.
    let n = unsafe {
        libc::process_vm_readv(
            tid,
            local.as_ptr(),
            local.len() as libc::c_ulong,
            remote.as_ptr(),
            remote.len() as libc::c_ulong,
            0,
        )
    };
    usize::try_from(n).ok()
}

/// A NUL-terminated string at `at` of `tid`'s memory, page by page, of at most `max` bytes.
fn read_string(tid: libc::pid_t, mut at: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while out.len() <= max {
        let room = (PAGE - at % PAGE) as usize;
        let mut buf = vec![0u8; room];
        let n = read_memory(tid, at, &mut buf).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(&buf[..n]);
        at = at.checked_add(n as u64)?;
    }
    None
}

/// Open `name` (relative to `dir`, else a path), with `flags` and close-on-exec.
#[allow(unsafe_code)]
fn open_at(dir: Option<&OwnedFd>, name: &str, flags: libc::c_int) -> Option<OwnedFd> {
    let name = CString::new(name).ok()?;
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: openat takes a directory of ours (or AT_FDCWD), a path of ours and flags, and
    // returns a new descriptor.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC) };
    // SAFETY: new and owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own_pid() -> libc::pid_t {
        std::process::id() as libc::pid_t
    }

    #[test]
    #[allow(unsafe_code)]
    fn only_private_anonymous_memory_counts_as_private() {
        let pid = own_pid();
        let heap: Vec<u8> = std::iter::repeat_n(7u8, 64).collect();
        let span = |p: *const u8, len: usize| (p as u64, len as u64);
        let Some(private) = private_memory(pid, &[span(heap.as_ptr(), heap.len())]) else {
            eprintln!("skipped: no PROCMAP_QUERY on this kernel");
            return;
        };
        assert!(private, "the heap");
        let on_stack = [1u8; 16];
        assert_eq!(
            private_memory(pid, &[span(on_stack.as_ptr(), 16)]),
            Some(true)
        );
        let file = tempfile::tempfile().unwrap_or_else(|e| panic!("{e}"));
        file.set_len(4096).unwrap_or_else(|e| panic!("{e}"));
        for (flags, fd, what) in [
            (
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                "shared anonymous memory",
            ),
            (
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                "a private mapping of a file",
            ),
            (
                libc::MAP_SHARED,
                file.as_raw_fd(),
                "a shared mapping of a file",
            ),
        ] {
            // SAFETY: a new mapping of one page, unmapped below; nothing else refers to it.
            let p =
                unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, flags, fd, 0) };
            assert_ne!(p, libc::MAP_FAILED, "{what}");
            let got = private_memory(pid, &[span(heap.as_ptr(), 8), span(p.cast(), 8)]);
            // SAFETY: the mapping made above, no longer used.
            unsafe { libc::munmap(p, 4096) };
            assert_eq!(got, Some(false), "{what}");
        }
        // A span that runs past its mapping's end is not taken either.
        // SAFETY: two new anonymous pages, the second unmapped at once; unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                8192,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: the second page of the mapping made above.
        unsafe { libc::munmap(p.cast::<u8>().add(4096).cast(), 4096) };
        assert_eq!(private_memory(pid, &[(p as u64 + 4090, 12)]), Some(false));
        assert_eq!(private_memory(pid, &[(p as u64 + 4000, 12)]), Some(true));
        // SAFETY: the first page, no longer used.
        unsafe { libc::munmap(p, 4096) };
    }

    #[test]
    fn a_process_with_threads_is_not_alone() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv());
        assert_eq!(alone(own_pid()), Some(false));
        let _ = tx.send(());
        let _ = t.join();
    }

    #[test]
    fn a_child_of_its_own_is_alone_and_one_sharing_its_parent_memory_is_not() {
        // A child with memory of its own (a fork and exec) of a single-threaded parent.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("sh starts: {e}"));
        let mut line = String::new();
        if let Some(out) = sh.stdout.as_mut() {
            use std::io::BufRead as _;
            let _ = std::io::BufReader::new(out).read_line(&mut line);
        }
        let pid: libc::pid_t = line
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("the sleep's pid ({line:?}): {e}"));
        assert_eq!(alone(pid), Some(true));
        // SAFETY: kill takes a pid and a signal; the pid is our grandchild's, still running.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, libc::SIGKILL)
        };
        let _ = sh.wait();
        // A child of a parent with threads (this test process) is not looked into.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap_or_else(|e| panic!("sleep starts: {e}"));
        assert_eq!(alone(child.id() as libc::pid_t), Some(false));
        let _ = child.kill();
        let _ = child.wait();
        // A thread of this process, seen by its own id: it shares the memory.
        let (tx, rx) = std::sync::mpsc::channel::<libc::pid_t>();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid takes nothing and returns the caller's thread id.
            #[allow(unsafe_code)]
            let tid = unsafe { libc::gettid() };
            let _ = tx.send(tid);
            let _ = stop_rx.recv();
        });
        let tid = rx
            .recv()
            .unwrap_or_else(|e| panic!("the thread says its id: {e}"));
        assert_eq!(alone(tid), Some(false));
        let _ = stop_tx.send(());
        let _ = t.join();
    }

    #[test]
    fn stat_gives_the_parent_and_the_threads_whatever_the_name() {
        let stat = b"4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 3 0 1 2 3";
        assert_eq!(parent_and_threads(stat), Some((17, 3)));
        assert_eq!(parent_and_threads(b"12 (sh) S 1 12"), None);
        let own = crate::supervise::read_small(&format!("/proc/{}/stat", own_pid()))
            .unwrap_or_else(|| panic!("own stat reads"));
        let (parent, _) = parent_and_threads(&own).unwrap_or_else(|| panic!("own stat parses"));
        assert_eq!(parent, std::os::unix::process::parent_id() as libc::pid_t);
    }
}
