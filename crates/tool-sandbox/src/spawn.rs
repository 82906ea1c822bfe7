//! Starting a traced process the way `posix_spawn` starts one: `clone` with `CLONE_VM |
//! CLONE_VFORK`, so the child borrows the parent's memory until it executes instead of copying
//! its page tables (`fork` of a host process with a large heap costs the better part of a
//! millisecond; this costs tens of microseconds). The child, on a stack of its own, only makes
//! system calls on what the parent prepared: it resets signal handling, joins a new process
//! group, joins a prepared network namespace when it has one, puts its descriptors in place and
//! closes every other one, changes directory, installs the seccomp filters it must (handing the exec supervisor the
//! listener of the one that reports every `execve`), asks to be traced by the parent thread
//! when it must, and executes. A failure before `execve` is reported through a close-on-exec
//! pipe.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt as _;

/// One of the standard streams of the child.
#[derive(Debug)]
pub enum Io {
    /// The parent's own.
    Inherit,
    /// `/dev/null`.
    Null,
    /// This descriptor (a file, a pipe, a socket).
    Fd(OwnedFd),
}

impl From<std::fs::File> for Io {
    fn from(f: std::fs::File) -> Self {
        Io::Fd(f.into())
    }
}

impl From<OwnedFd> for Io {
    fn from(fd: OwnedFd) -> Self {
        Io::Fd(fd)
    }
}

/// What the child is to be.
pub(crate) struct Child {
    /// The program (an absolute path).
    pub(crate) program: OsString,
    /// Its arguments, the first one included.
    pub(crate) argv: Vec<OsString>,
    /// Its whole environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Where it starts (none: where the parent is).
    pub(crate) cwd: Option<OsString>,
    /// Standard input, output and error.
    pub(crate) stdio: [Io; 3],
    /// Further descriptors and the numbers they get.
    pub(crate) fds: Vec<(OwnedFd, RawFd)>,
    /// Traced by the calling thread from its `exec` on.
    pub(crate) trace: bool,
    /// A seccomp filter (classic BPF) it installs itself.
    pub(crate) filter: Option<Vec<u8>>,
    /// A network namespace it joins before it executes.
    pub(crate) netns: Option<std::fs::File>,
    /// A seccomp filter with a listener (see `seccomp::notify_program`), installed last, and
    /// the socket the listener is sent over. The `execve` that follows waits for an answer on
    /// that listener, so another thread must be ready to give it.
    pub(crate) notify: Option<(Vec<u8>, OwnedFd)>,
    /// Where the kernel writes the child's pid as it makes it, before the child runs.
    pub(crate) pid: Option<std::sync::Arc<std::sync::atomic::AtomicI32>>,
}

/// Everything the child reads, laid out before the clone.
struct Prepared {
    program: CString,
    argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    cwd: Option<CString>,
    /// (from, to) pairs; `from` numbered above every `to`.
    dups: Vec<(RawFd, RawFd)>,
    /// The ranges of descriptors the child closes once its own are in place (inclusive):
    /// every number but the standard streams, the targets of `dups`, the error pipe and the
    /// listener's socket.
    closes: Vec<(libc::c_uint, libc::c_uint)>,
    /// Where closing one by one stops, where `close_range` is not there (before Linux 5.9,
    /// or refused by a filter the host runs under): the limit on open descriptors.
    open_limit: libc::c_uint,
    trace: bool,
    filter: Option<Vec<u8>>,
    /// The network namespace to join, or -1.
    netns: RawFd,
    notify_filter: Option<Vec<u8>>,
    /// The socket the listener goes over, or -1.
    notify_socket: RawFd,
    /// Room for one `SCM_RIGHTS` message (the parent's, 32 bytes); the child writes into it.
    notify_control: *mut u64,
    error_pipe: RawFd,
    /// The signal mask to restore in the child.
    mask: libc::sigset_t,
}

fn cstring(s: OsString) -> std::io::Result<CString> {
    CString::new(s.into_vec()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a NUL byte in an argument",
        )
    })
}

/// A close-on-exec copy of `fd` numbered 64 or above.
fn high(fd: RawFd) -> std::io::Result<OwnedFd> {
    dup_from(fd, 64)
}

/// A close-on-exec copy of `fd` numbered `lowest` or above.
#[allow(unsafe_code)]
pub(crate) fn dup_from(fd: RawFd, lowest: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor that we then own.
    let n = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, lowest) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `n` is new and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}

/// Start `child`; its pid. When `child.trace` is set, the child is traced by the calling
/// thread and stops (`SIGTRAP`) right after its `execve`.
#[allow(unsafe_code)]
pub(crate) fn spawn(child: Child) -> std::io::Result<libc::pid_t> {
    // Every descriptor the child takes goes first to a number above all the targets, so no
    // `dup2` in the child overwrites one it still needs.
    let mut keep: Vec<OwnedFd> = Vec::new();
    let mut dups: Vec<(RawFd, RawFd)> = Vec::new();
    for (target, io) in child.stdio.iter().enumerate() {
        let from = match io {
            Io::Inherit => continue,
            Io::Null => high(std::fs::File::open("/dev/null")?.as_raw_fd())?,
            Io::Fd(fd) => high(fd.as_raw_fd())?,
        };
        dups.push((from.as_raw_fd(), target as RawFd));
        keep.push(from);
    }
    for (fd, target) in &child.fds {
        let from = high(fd.as_raw_fd())?;
        dups.push((from.as_raw_fd(), *target));
        keep.push(from);
    }
    // Numbered above every target too; close-on-exec, and closed by the child once used.
    let (notify_filter, notify_socket) = match child.notify {
        Some((filter, socket)) => {
            let moved = high(socket.as_raw_fd())?;
            drop(socket);
            (Some(filter), Some(moved))
        }
        None => (None, None),
    };
    let program = cstring(child.program)?;
    let argv: Vec<CString> = child
        .argv
        .into_iter()
        .map(cstring)
        .collect::<Result<_, _>>()?;
    let envp: Vec<CString> = child
        .env
        .into_iter()
        .map(|(k, v)| {
            let mut kv = k;
            kv.push("=");
            kv.push(v);
            cstring(kv)
        })
        .collect::<Result<_, _>>()?;
    let cwd = child.cwd.map(cstring).transpose()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut envp_ptrs: Vec<*const libc::c_char> = envp.iter().map(|a| a.as_ptr()).collect();
    envp_ptrs.push(std::ptr::null());
    let mut pipe = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two new descriptors into the array.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are new and ours.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])) };
    // Numbered above every descriptor the child puts in place, so none overwrites it.
    let write_end = {
        let moved = high(write_end.as_raw_fd())?;
        drop(write_end);
        moved
    };
    // Block every signal while the child shares our memory: no handler of ours may run in it.
    // SAFETY: sigset operations on locals.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    let mut open: Vec<RawFd> = vec![0, 1, 2, write_end.as_raw_fd()];
    open.extend(dups.iter().map(|&(_, to)| to));
    open.extend(notify_socket.as_ref().map(|s| s.as_raw_fd()));
    let closes = gaps(open);
    let mut control = Box::new([0u64; 4]);
    let mut prepared = Prepared {
        program,
        argv,
        argv_ptrs,
        envp,
        envp_ptrs,
        cwd,
        dups,
        closes,
        open_limit: open_limit(),
        trace: child.trace,
        filter: child.filter,
        netns: child.netns.as_ref().map_or(-1, |f| f.as_raw_fd()),
        notify_filter,
        notify_socket: notify_socket.as_ref().map_or(-1, |f| f.as_raw_fd()),
        notify_control: control.as_mut_ptr(),
        error_pipe: write_end.as_raw_fd(),
        mask: old,
    };
    const STACK: usize = 64 * 1024;
    let mut stack = vec![0u8; STACK];
    // The stack grows down; keep its top 16-byte aligned.
    let top = (stack.as_mut_ptr() as usize + STACK) & !0xf;
    // SAFETY: the child runs `child_main` on `stack` with `prepared`, both alive until clone
    // returns: with CLONE_VFORK this thread is suspended until the child has executed or
    // exited, and the child touches nothing else of ours.
    let pid_out: *mut libc::pid_t = child
        .pid
        .as_ref()
        .map_or(std::ptr::null_mut(), |p| p.as_ptr());
    let settid = if pid_out.is_null() {
        0
    } else {
        libc::CLONE_PARENT_SETTID
    };
    // SAFETY (continued): `pid_out`, when set, points into an atomic `child` holds.
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | settid,
            (&mut prepared as *mut Prepared).cast(),
            pid_out,
        )
    };
    let clone_error = std::io::Error::last_os_error();
    // SAFETY: restores the mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    drop(write_end);
    drop(keep);
    drop(child.netns);
    // The child's copy is closed (it executed or ended): the receiving thread sees the end.
    drop(notify_socket);
    if pid < 0 {
        return Err(clone_error);
    }
    // The child wrote its errno if it could not execute.
    let mut buf = [0u8; 4];
    let mut pipe = std::fs::File::from(read_end);
    if std::io::Read::read_exact(&mut pipe, &mut buf).is_ok() {
        // Its number is about to be free for another process.
        if let Some(p) = &child.pid {
            p.store(0, std::sync::atomic::Ordering::SeqCst);
        }
        let mut status = 0;
        // SAFETY: reaps the child that failed.
        unsafe {
            libc::waitpid(pid, &mut status, libc::__WALL);
        }
        return Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(buf)));
    }
    drop(prepared);
    drop(stack);
    drop(control);
    Ok(pid)
}

/// The child, on its own stack, sharing the parent's memory until `execve`: system calls only.
#[allow(unsafe_code)]
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Prepared`, alive and untouched while the parent waits.
    let p = unsafe { &*(arg as *const Prepared) };
    let fail = |p: &Prepared| -> libc::c_int {
        // SAFETY: writes a local int to the error pipe, then leaves without running anything
        // of the parent's.
        unsafe {
            let e = *libc::__errno_location();
            let bytes = e.to_ne_bytes();
            libc::write(p.error_pipe, bytes.as_ptr().cast(), 4);
            libc::_exit(127);
        }
    };
    // SAFETY: each call takes values prepared by the parent or locals.
    unsafe {
        // Default handling for every signal a handler was installed for, then the parent's
        // usual mask back (the handlers are the parent's code; after execve they would be
        // reset anyway, but a signal arriving before must not run one here).
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..65 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut cur: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut cur) == 0
                && cur.sa_sigaction != libc::SIG_DFL
                && (cur.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
            {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let _ = &p.mask;
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        if libc::setpgid(0, 0) != 0 {
            return fail(p);
        }
        // Before the descriptors are put in place: the namespace's may have a number one of
        // them takes.
        if p.netns >= 0 && libc::setns(p.netns, libc::CLONE_NEWNET) != 0 {
            return fail(p);
        }
        for &(from, to) in &p.dups {
            if libc::dup2(from, to) < 0 {
                return fail(p);
            }
        }
        // Nothing else of the parent's gets through: not a descriptor another thread made
        // without close-on-exec, nor one it is about to mark (the host's files have no
        // business in the sandbox, and a starting child holding another's socket could keep
        // both waiting once the parent is gone).
        for &(lo, hi) in &p.closes {
            if libc::syscall(libc::SYS_close_range, lo, hi, 0) != 0 {
                let mut fd = lo;
                while fd <= hi && fd < p.open_limit {
                    libc::close(fd as libc::c_int);
                    fd += 1;
                }
            }
        }
        if let Some(cwd) = &p.cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            return fail(p);
        }
        if let Some(f) = &p.filter {
            let prog = SockFprog::of(f);
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(libc::SYS_seccomp, 1, 0, &prog as *const SockFprog) != 0
            {
                return fail(p);
            }
        }
        if let Some(f) = &p.notify_filter
            && send_listener(p, f) != 0
        {
            return fail(p);
        }
        if p.trace
            && libc::ptrace(
                libc::PTRACE_TRACEME as _,
                0,
                std::ptr::null_mut::<libc::c_void>(),
                std::ptr::null_mut::<libc::c_void>(),
            ) != 0
        {
            return fail(p);
        }
        let _ = (&p.argv, &p.envp);
        libc::execve(
            p.program.as_ptr(),
            p.argv_ptrs.as_ptr(),
            p.envp_ptrs.as_ptr(),
        );
    }
    fail(p)
}

/// The soft limit on open descriptors (no descriptor is numbered at or above it), at most
/// 2^20.
#[allow(unsafe_code)]
fn open_limit() -> libc::c_uint {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, a local of ours.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if known {
        limit.rlim_cur.min(1 << 20) as libc::c_uint
    } else {
        1 << 20
    }
}

/// The inclusive ranges of descriptor numbers between and above the numbers of `open`.
fn gaps(mut open: Vec<RawFd>) -> Vec<(libc::c_uint, libc::c_uint)> {
    open.sort_unstable();
    open.dedup();
    let mut ranges = Vec::with_capacity(open.len() + 1);
    let mut next: libc::c_uint = 0;
    for fd in open {
        let fd = fd as libc::c_uint;
        if fd > next {
            ranges.push((next, fd - 1));
        }
        next = fd + 1;
    }
    ranges.push((next, libc::c_uint::MAX));
    ranges
}

/// `struct sock_fprog`: a classic BPF program as `seccomp(2)` takes it.
#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const u8,
}

impl SockFprog {
    /// The program of `bytes` (8 bytes an instruction), borrowed for the call.
    fn of(bytes: &[u8]) -> Self {
        Self {
            len: (bytes.len() / 8) as libc::c_ushort,
            filter: bytes.as_ptr(),
        }
    }
}

/// In the child: install `filter` with a new listener and send the listener over the
/// prepared socket, keeping no copy of either. Nonzero (with `errno` set) on failure.
#[allow(unsafe_code)]
fn send_listener(p: &Prepared, filter: &[u8]) -> libc::c_int {
    let prog = SockFprog::of(filter);
    // SAFETY: system calls on locals and on the parent's prepared values, which it does not
    // touch while suspended; the control buffer is written through a raw pointer to the
    // child's view of it (the same memory, reserved for this).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return -1;
        }
        let listener = libc::syscall(
            libc::SYS_seccomp,
            1, // SECCOMP_SET_MODE_FILTER
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const SockFprog,
        );
        if listener < 0 {
            return -1;
        }
        let listener = listener as RawFd;
        let control = p.notify_control.cast::<u8>();
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
        let sent = libc::sendmsg(p.notify_socket, &msg, libc::MSG_NOSIGNAL);
        libc::close(listener);
        libc::close(p.notify_socket);
        if sent != 1 {
            return -1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::gaps;

    #[test]
    fn the_child_closes_every_number_it_does_not_keep() {
        assert_eq!(
            gaps(vec![70, 2, 0, 1, 3, 70, 65]),
            vec![(4, 64), (66, 69), (71, libc::c_uint::MAX)]
        );
        assert_eq!(gaps(vec![5]), vec![(0, 4), (6, libc::c_uint::MAX)]);
    }
}
