//! The exec supervisor of a confined command, by seccomp user notification: every `execve`
//! in the sandbox waits at its entry until the supervisor answers, and the supervisor decides
//! what runs after the kernel has loaded it, as the `ptrace` supervisor does.
//!
//! A notification alone cannot be trusted: it comes while the arguments still sit in memory
//! another thread (or a process sharing the pages) can rewrite after they were read. So the
//! supervisor uses it only to find the process that is about to execute: it attaches to that
//! one thread (`PTRACE_SEIZE`, with the exec event), lets the call go on, and reads the
//! program at the `PTRACE_EVENT_EXEC` stop, from the new image of a stopped, single-threaded
//! process, as the `ptrace` supervisor does. Then it lets go of it. A call that fails (a
//! `PATH` search, a missing file) ends in the stop that `PTRACE_INTERRUPT` asked for, and is
//! let go of the same way.
//!
//! Only the executing thread is ever stopped, once per `execve`: forks, threads, signals and
//! exits of the command go by without the supervisor, which is where the `ptrace` supervisor
//! spent most of its time (four stops for every process a shell starts).
//!
//! Where nothing can change what the call will run (see `entry`: the caller alone in its
//! memory, the arguments in private memory, the file fixed on the read-only root), the
//! program is decided at the notification itself and the exec stop is not needed. A program
//! stopped there is not answered: the call waits until the command's end kills it, and the
//! listener is closed only once the sandbox's namespace is empty (closing it would fail the
//! call, and the caller could run on for a moment).
//!
//! Which processes are the line's own: when the kernel loaded the line's shell, it put 16
//! random bytes on its stack (`AT_RANDOM`); the shell's forks that have not executed anything
//! have the same bytes at the same address (a fork copies the memory), and any `execve` puts
//! new ones at a new address. The supervisor reads those 16 bytes at that address of the
//! process that is about to execute, before its `execve` replaces them (one
//! `process_vm_readv`). A shell never writes there; a program that wrote the bytes there to
//! look like the line's would only be judged as the line's, the stricter reading.
//!
//! Killing the command is killing the init of the sandbox's PID namespace, which takes every
//! process in it down at once, however started (and bubblewrap, whose `--die-with-parent`
//! would do the same a step later). A program that is stopped is not killed on its own
//! before that: its end would wake the shell waiting for it, which could run on for a moment.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::process::ExitStatus;

use tool_core::Verdict;
use tool_core::sandbox::Watching;

use crate::entry::Entry;

use crate::supervise::{Role, Supervisor, is_group_stop, ptrace, read_memory, read_small, stopped};

/// Whether commands in bubblewrap at `bwrap` can be supervised this way on this machine:
/// an architecture the filter is written for, a kernel with user notification and its
/// `CONTINUE` answer (5.5), and a `bwrap` that is not set-user-ID (the filter needs
/// `no_new_privs`, which would take its privileges away).
pub(crate) fn available(bwrap: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    if crate::seccomp::notify_program().is_none() {
        return false;
    }
    let setuid = std::fs::metadata(bwrap).is_ok_and(|m| m.permissions().mode() & 0o4000 != 0);
    if setuid {
        return false;
    }
    let actions =
        std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail").unwrap_or_default();
    if !actions.split_whitespace().any(|a| a == "user_notif") {
        return false;
    }
    kernel_at_least(5, 5)
}

/// Whether the supervisor can put descriptors into a process that waits at its `execve`
/// (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SETFD`, Linux 5.9), which handing a
/// sandbox started ahead to a command needs.
pub(crate) fn can_add_fds() -> bool {
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAN.get_or_init(|| kernel_at_least(5, 9))
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    release_at_least(&release, major, minor)
}

/// Whether a kernel release string (`6.18.44-fc-v657`) names `major.minor` or later.
fn release_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// A socket pair for the listener: (the supervisor's end, the child's end).
#[allow(unsafe_code)]
pub(crate) fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: socketpair writes two new descriptors into the array, which we then own.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Receive the listener the child sends (see `spawn::send_listener`), then answer the
/// child's own `execve` (of bubblewrap, which this process asked for) while the thread that
/// started it waits for that `execve`. Runs on a thread of its own for that reason.
#[allow(unsafe_code)]
pub(crate) fn take_listener(socket: OwnedFd) -> std::io::Result<OwnedFd> {
    let mut control = [0u64; 4];
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    // SAFETY: recvmsg into locals that outlive the call; the descriptor taken from the
    // message is new and becomes ours.
    let listener = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = loop {
            let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n == 0
            || cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(std::io::Error::other(
                "the child ended before it sent the exec listener",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        OwnedFd::from_raw_fd(fd)
    };
    sync_wake_up(&listener);
    match receive(&listener)? {
        Some(first) => {
            respond(&listener, first.id, Answer::Continue);
            Ok(listener)
        }
        None => Err(std::io::Error::other(
            "the child ended before it executed bubblewrap",
        )),
    }
}

enum Answer {
    Continue,
    Fail(libc::c_int),
}

/// Whether `fd` has something to read (or its end) right now.
#[allow(unsafe_code)]
fn poll_now(fd: Option<&OwnedFd>) -> bool {
    let Some(fd) = fd else { return false };
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll on one descriptor of ours, without waiting.
    unsafe { libc::poll(&mut pfd, 1, 0) == 1 }
}

/// The next notification; `None` once no process is left under the filter.
#[allow(unsafe_code)]
fn receive(listener: &OwnedFd) -> std::io::Result<Option<libc::seccomp_notif>> {
    loop {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one descriptor of ours.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if pfd.revents & libc::POLLIN == 0 {
            return Ok(None);
        }
        if let Some(n) = recv_one(listener)? {
            return Ok(Some(n));
        }
    }
}

/// One pending notification; `None` when the one that was pending went away (its process
/// was killed or interrupted) before it could be taken.
#[allow(unsafe_code)]
fn recv_one(listener: &OwnedFd) -> std::io::Result<Option<libc::seccomp_notif>> {
    // SAFETY: an all-zero seccomp_notif is what the kernel requires; RECV fills it in.
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: RECV writes one seccomp_notif to the buffer given, a local of ours.
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n) };
    if r == 0 {
        return Ok(Some(n));
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
        _ => Err(e),
    }
}

/// Answer a notification. `false` when it was no longer pending (the process was killed, or
/// a signal interrupted the call, which is then made again).
#[allow(unsafe_code)]
fn respond(listener: &OwnedFd, id: u64, answer: Answer) -> bool {
    // SAFETY: an all-zero response, then filled in.
    let mut resp: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
    resp.id = id;
    match answer {
        Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        Answer::Fail(errno) => resp.error = -errno,
    }
    // SAFETY: SEND reads one response from a local of ours.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        ) == 0
    }
}

/// Ask the kernel to hand the CPU over at each notification and answer (Linux 6.6): the
/// process that executes waits while the supervisor decides, and the supervisor waits while
/// it runs, so each can run where the other just stopped instead of waking a CPU that
/// idles. Without it (an older kernel), the same happens more slowly.
#[allow(unsafe_code)]
fn sync_wake_up(listener: &OwnedFd) {
    const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    // SAFETY: SET_FLAGS takes the flags as its argument and touches no memory of ours.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        )
    };
}

/// Whether notification `id` still waits for its answer (its caller was not killed or
/// interrupted since), so that what was read of its process was read of that process.
#[allow(unsafe_code)]
fn pending(listener: &OwnedFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: ID_VALID reads one u64, a local of ours.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id,
        ) == 0
    }
}

/// Put `fd` into the process of pending notification `id` as its descriptor `number` (in
/// place of what it had there), inherited by what it executes.
#[allow(unsafe_code)]
fn add_fd(listener: &OwnedFd, id: u64, fd: &OwnedFd, number: RawFd) -> std::io::Result<()> {
    let mut add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: fd.as_raw_fd() as u32,
        newfd: number as u32,
        newfd_flags: 0,
    };
    // SAFETY: ADDFD reads one seccomp_notif_addfd from a local of ours.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut add,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The line's shell as its own forks share it: where the kernel put its random bytes, and
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineMark {
    addr: u64,
    bytes: [u8; 16],
}

const AT_RANDOM: u64 = 25;

/// The mark of the program `pid` (a stopped tracee of ours) has just loaded.
fn line_mark(pid: libc::pid_t) -> Option<LineMark> {
    let auxv = read_small(&format!("/proc/{pid}/auxv"))?;
    let addr = auxv.chunks_exact(16).find_map(|pair| {
        let key = u64::from_ne_bytes(pair[..8].try_into().ok()?);
        let value = u64::from_ne_bytes(pair[8..].try_into().ok()?);
        (key == AT_RANDOM).then_some(value)
    })?;
    let mut bytes = [0u8; 16];
    (read_memory(pid, addr, &mut bytes).ok()? == 16).then_some(LineMark { addr, bytes })
}

/// Whether thread `tid`, about to execute, is the line's shell or one of its forks. Unsure
/// (it cannot be read for another reason than the address not being there), it is.
fn is_line(tid: libc::pid_t, mark: &LineMark) -> bool {
    let mut bytes = [0u8; 16];
    match read_memory(tid, mark.addr, &mut bytes) {
        Ok(16) => bytes == mark.bytes,
        Ok(_) => false,
        Err(e) => e.raw_os_error() != Some(libc::EFAULT),
    }
}

/// Whether `pid` lives in a PID namespace below this process's (its `NSpid` has more than
/// one number). Unsure, it does: its exec is then taken for the line's shell's.
fn in_pid_namespace_below_ours(pid: libc::pid_t) -> bool {
    let Some(status) = read_small(&format!("/proc/{pid}/status")) else {
        return true;
    };
    let text = String::from_utf8_lossy(&status);
    text.lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .is_none_or(|ids| ids.split_whitespace().count() > 1)
}

/// `/proc/TID`, opened as a path. What is read through it is that thread's for as long as
/// it lives and fails after (a reused number is another directory), where a path names
/// whichever process holds the number at the time.
#[allow(unsafe_code)]
pub(crate) fn open_proc_dir(tid: libc::pid_t) -> Option<OwnedFd> {
    let path = std::ffi::CString::new(format!("/proc/{tid}")).ok()?;
    // SAFETY: open takes a path of ours and flags, and returns a new descriptor, then ours.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    // SAFETY: new and owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

#[allow(unsafe_code)]
pub(crate) fn pidfd_open(pid: libc::pid_t) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor, then ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: new and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Wait for one of this thread's children or tracees, without blocking when `block` is off.
#[allow(unsafe_code)]
fn wait_any(block: bool) -> Option<(libc::pid_t, libc::c_int)> {
    loop {
        let mut status: libc::c_int = 0;
        let flags = libc::__WALL | libc::__WNOTHREAD | if block { 0 } else { libc::WNOHANG };
        // SAFETY: waitpid writes the status to a local of ours; __WNOTHREAD keeps it to this
        // thread's own children and tracees.
        let pid = unsafe { libc::waitpid(-1, &mut status, flags) };
        if pid > 0 {
            return Some((pid, status));
        }
        if pid == 0 {
            return None;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Reap, without waiting, what of this thread's tracees has ended.
pub(crate) fn reap_tracees() {
    while wait_any(false).is_some() {}
}

pub(crate) fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn raw_status(status: libc::c_int) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt as _;
    ExitStatus::from_raw(status)
}

impl Supervisor {
    /// Supervise a confined command whose bubblewrap (`launcher`, a child of this thread)
    /// runs under the notifying filter, until bubblewrap ends; its status.
    ///
    /// `info` is bubblewrap's `--info-fd`, read as it comes in for the init of the sandbox's
    /// PID namespace.
    pub(crate) fn run_notify(
        mut self,
        launcher: libc::pid_t,
        listener: &OwnedFd,
        mut info: Option<OwnedFd>,
    ) -> ExitStatus {
        let mut info_text: Option<Vec<u8>> = Some(Vec::new());
        self.shared.track(launcher);
        let watching = self.judge.watching(true);
        let mut launcher_status: Option<ExitStatus> = None;
        // The line's shell's mark, once it is loaded.
        let mut line: Option<LineMark> = None;
        let pidfd = pidfd_open(launcher).ok();
        let mut listening = true;
        while launcher_status.is_none() {
            let mut fds = [
                libc::pollfd {
                    fd: if listening { listener.as_raw_fd() } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: pidfd.as_ref().map_or(-1, |f| f.as_raw_fd()),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: info.as_ref().map_or(-1, |f| f.as_raw_fd()),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if !listening && pidfd.is_none() {
                // Nothing to poll: bubblewrap's end is all that is left to see.
                if let Some((pid, status)) = wait_any(true) {
                    if pid == launcher && !stopped(status) {
                        launcher_status = Some(raw_status(status));
                    }
                    continue;
                }
                break;
            }
            #[allow(unsafe_code)]
            // SAFETY: poll on three descriptors of ours (a negative one is passed over).
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 3, -1) };
            if r < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[2].revents != 0 {
                self.read_info(&mut info, &mut info_text, launcher);
            }
            if fds[1].revents != 0 || (pidfd.is_none() && fds[0].revents & libc::POLLHUP != 0) {
                // Bubblewrap ended (or, with no pidfd, nothing under the filter is left).
                while let Some((pid, status)) = wait_any(true) {
                    if pid == launcher && !stopped(status) {
                        launcher_status = Some(raw_status(status));
                        break;
                    }
                }
                break;
            }
            if fds[0].revents & libc::POLLIN != 0 {
                match recv_one(listener) {
                    Ok(Some(n)) => {
                        if let Some(status) =
                            self.on_notification(listener, &n, launcher, watching, &mut line)
                        {
                            launcher_status = Some(status);
                        }
                    }
                    Ok(None) => {}
                    Err(_) => listening = false,
                }
            } else if fds[0].revents != 0 {
                listening = false;
            }
        }
        // Written before bubblewrap's end, and not all read when it came (bounded: whatever
        // still holds the pipe open cannot keep this here).
        for _ in 0..256 {
            if info_text.is_none() || !poll_now(info.as_ref()) {
                break;
            }
            self.read_info(&mut info, &mut info_text, launcher);
        }
        self.shared.untrack(launcher);
        launcher_status.unwrap_or_else(|| raw_status(libc::SIGKILL))
    }

    /// Read what bubblewrap's `--info-fd` (`info`, which poll said is ready) holds now; once
    /// it names the init of the sandbox's PID namespace, note it. The pipe is read to its end,
    /// never closed before: bubblewrap may write more, and would die of `SIGPIPE`.
    fn read_info(
        &self,
        info: &mut Option<OwnedFd>,
        text: &mut Option<Vec<u8>>,
        launcher: libc::pid_t,
    ) {
        let Some(fd) = info.as_ref() else { return };
        // One read does not block once poll said so: some bytes, or the end.
        let mut buf = [0u8; 512];
        #[allow(unsafe_code)]
        // SAFETY: read into a local buffer of ours, at most its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            return;
        }
        let end = n <= 0;
        if end {
            *info = None;
        }
        // Already found (`None`): the rest is only drained.
        let Some(t) = text.as_mut() else { return };
        if n > 0 && t.len() < 64 * 1024 {
            t.extend_from_slice(&buf[..n as usize]);
        }
        if end {
            t.push(b'\n');
        }
        if let Some(init) = crate::ns_init_from_text(&String::from_utf8_lossy(t), launcher) {
            self.shared.set_ns_init(init);
            *text = None;
        }
    }

    /// Handle one `execve` notification to its end: the program is decided and let run, or
    /// the command is stopped. Bubblewrap's status when it ended meanwhile.
    fn on_notification(
        &mut self,
        listener: &OwnedFd,
        n: &libc::seccomp_notif,
        launcher: libc::pid_t,
        watching: Watching,
        line: &mut Option<LineMark>,
    ) -> Option<ExitStatus> {
        let tid = n.pid as libc::pid_t;
        if self.shared.is_killed() {
            respond(listener, n.id, Answer::Fail(libc::EPERM));
            return None;
        }
        // Before the line's shell, the only programs run are the launcher's own, outside the
        // sandbox (bubblewrap, or a launcher script of the user's that executes it): the
        // line's shell is the first program executed inside the sandbox's PID namespace.
        if line.is_none() && !in_pid_namespace_below_ours(tid) {
            respond(listener, n.id, Answer::Continue);
            return None;
        }
        // A sandbox started ahead: the first program executed in it is the trampoline (let
        // through: the sandbox is ready); the next, the command's shell, which only the
        // trampoline executes, once a command has taken the sandbox, with the command's
        // streams put in now.
        if line.is_none()
            && let Some(handover) = self.handover.clone()
        {
            match handover.trampoline() {
                None => {
                    handover.ready(tid);
                    respond(listener, n.id, Answer::Continue);
                    return None;
                }
                Some(t) => {
                    let taken = if t == tid { handover.take() } else { None };
                    let Some(taken) = taken else {
                        respond(listener, n.id, Answer::Fail(libc::EPERM));
                        self.stop_unwatchable(&std::io::Error::other(
                            "a program ran in a sandbox started ahead before a command took it",
                        ));
                        return None;
                    };
                    for (fd, number) in &taken.fds {
                        if let Err(why) = add_fd(listener, n.id, fd, *number) {
                            respond(listener, n.id, Answer::Fail(libc::EPERM));
                            self.stop_unwatchable(&why);
                            return None;
                        }
                    }
                    self.approver = taken.approver;
                    self.expect = Some(taken.argv);
                }
            }
        }
        // Before the call replaces it: whose process this is.
        let role = match line {
            None => Role::Launcher,
            Some(mark) if is_line(tid, mark) => Role::Line,
            Some(_) => Role::Descendant,
        };
        let watched = match (watching, role) {
            (_, Role::Launcher) | (Watching::Everything, _) => true,
            (Watching::LineOnly, Role::Line) => true,
            (Watching::LineOnly, Role::Descendant) | (Watching::Nothing, _) => false,
        };
        if !watched {
            respond(listener, n.id, Answer::Continue);
            return None;
        }
        if role != Role::Launcher
            && let Some(entries) = self.at_entry.as_mut()
        {
            match entries.read(n, || pending(listener, n.id)) {
                Entry::Fails(errno) => {
                    respond(listener, n.id, Answer::Fail(errno));
                    return None;
                }
                Entry::Runs(loaded, file) => {
                    let started_by_line = role == Role::Line;
                    let decision = self.verdict(&loaded, started_by_line);
                    // An ask that goes to an approver holds the program at its exec stop, as
                    // every other does.
                    if decision.verdict != Verdict::Ask || self.approver.is_none() {
                        if self.carry_out(loaded, started_by_line, decision).is_some() {
                            respond(listener, n.id, Answer::Continue);
                        }
                        // Stopped: the call waits, unanswered, until the command's end kills it.
                        drop(file);
                        return None;
                    }
                }
                Entry::Unsure => {}
            }
        }
        if ptrace(
            libc::PTRACE_SEIZE,
            tid,
            libc::PTRACE_O_TRACEEXEC as usize | libc::PTRACE_O_EXITKILL as usize,
        ) != 0
        {
            let why = std::io::Error::last_os_error();
            respond(listener, n.id, Answer::Fail(libc::EPERM));
            if why.raw_os_error() == Some(libc::ESRCH) {
                // Gone already (killed while it waited).
                return None;
            }
            self.stop_unwatchable(&why);
            return None;
        }
        // The call goes on; if it fails, the interrupt stops the thread on its way back.
        respond(listener, n.id, Answer::Continue);
        ptrace(libc::PTRACE_INTERRUPT, tid, 0);
        // While the kernel loads the program: the thread's `/proc` directory, for the reads
        // at the exec stop (valid only for this thread; an exec from another thread of its
        // process ends under the leader's pid, and is read by path).
        let proc_dir = open_proc_dir(tid);
        let mut launcher_status = None;
        let mut held = tid;
        loop {
            let Some((pid, status)) = wait_any(true) else {
                // Nothing left to wait for: the thread is gone.
                return launcher_status;
            };
            if pid == launcher && !stopped(status) {
                launcher_status = Some(raw_status(status));
                continue;
            }
            if !stopped(status) {
                // It ended (killed, or its process ended).
                if pid == held {
                    return launcher_status;
                }
                continue;
            }
            let event = (status >> 16) & 0xff;
            if event == libc::PTRACE_EVENT_EXEC {
                // From a thread other than the leader, the leader's pid carries on.
                held = pid;
                match self.on_exec(pid, role, proc_dir.as_ref().filter(|_| pid == tid)) {
                    Some(_) => {
                        if role == Role::Launcher {
                            *line = line_mark(pid);
                            if line.is_none() {
                                // Without it the line could not be told from what it starts.
                                self.stop_unwatchable(&std::io::Error::other(
                                    "the line's shell's random bytes could not be read",
                                ));
                                continue;
                            }
                        }
                        ptrace(libc::PTRACE_DETACH, pid, 0);
                        return launcher_status;
                    }
                    None => {
                        // The command is being killed; this one goes with it, held until
                        // then, without having run an instruction of the program.
                        continue;
                    }
                }
            }
            // The interrupt's stop (the call failed or is to be made again), or a signal on
            // its way back: let go, with the signal.
            let signal = (status >> 8) & 0xff;
            let pass = if event == 0 && !is_group_stop(pid) {
                signal
            } else {
                0
            };
            ptrace(libc::PTRACE_DETACH, pid, pass as usize);
            return launcher_status;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_compare_by_major_then_minor() {
        assert!(release_at_least("6.18.44-fc-v657\n", 5, 5));
        assert!(release_at_least("5.5.0", 5, 5));
        assert!(release_at_least("5.10-rc1", 5, 5));
        assert!(!release_at_least("5.4.0-150-generic", 5, 5));
        assert!(!release_at_least("4.19.0", 5, 5));
        assert!(!release_at_least("", 5, 5));
        assert!(!release_at_least("6", 5, 5));
    }
}
