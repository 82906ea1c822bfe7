//! The exec supervisor by tracing: every process of a command is traced (`ptrace`, with the
//! fork, vfork, clone and exec events), and every program it executes is decided by the
//! policy's judge after the kernel has loaded it and before it runs its first instruction.
//!
//! In bubblewrap, where the kernel has seccomp user notification, the `notify` supervisor is
//! used instead: it stops only the thread that executes, once per `execve`, and decides at the
//! same point with the same code (`Supervisor::on_exec`). Tracing every process is kept for
//! commands outside bubblewrap, where no PID namespace holds the tree together (tracing is how
//! every process is known, and killed), and for kernels without notification.
//!
//! Why the decision is made at the exec event and not at a notification: a notification
//! arrives at the `execve` system call's entry, while its arguments still sit in memory
//! another thread of the caller can rewrite after the supervisor read them, so what was
//! decided is not what runs. The `PTRACE_EVENT_EXEC` stop comes after the new image is in
//! place: its arguments are on the new stack of a process that is stopped and, after `exec`,
//! single-threaded. Children are attached by the kernel at `fork`/`clone` before they run, so
//! nothing starts unseen; the seccomp filter (see `seccomp`) refuses `CLONE_UNTRACED` and
//! `clone3`, the only ways around that.
//!
//! What it breaks: a traced process cannot be traced again, so debuggers and `strace` cannot
//! attach to programs inside the sandbox; and job-control stops (`SIGSTOP`) are let run on.
//!
//! Every system call here is on processes this thread traces; a tracee's pid stays valid
//! until this thread has collected its exit, so nothing is signalled by a reused pid.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;

use tool_core::sandbox::{ExecRequest, RunJudge, Watching};
use tool_core::{Decision, Verdict};

use crate::{ExecApprover, Shared, Stop};

/// Who started a process, which decides what its `exec`s are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// bubblewrap setting the sandbox up: its first `exec` is the line's shell.
    Launcher,
    /// The shell of the line, or a fork of it that has not executed anything (a subshell, a
    /// pipeline member, a substitution): what it executes is a program the line starts.
    Line,
    /// A program the line started, or anything started under it: its `exec`s are that
    /// program's business, bound only by deny and ask rules.
    Descendant,
}

#[derive(Debug)]
struct Tracee {
    /// `None` until the parent's fork event says who started it.
    role: Option<Role>,
    /// The kernel's initial `SIGSTOP` of an attached child has not been seen yet.
    initial_pending: bool,
    /// Stopped at its initial stop, waiting for its parent's fork event.
    held: bool,
}

/// Called once, when the line's shell has been loaded and before it runs (the sandbox's
/// namespaces then exist): sets up what needs them (the network filter's listener).
pub(crate) type LineStart = dyn FnOnce(libc::pid_t) -> Result<(), String> + Send;

pub(crate) struct Supervisor {
    pub(crate) shared: Arc<Shared>,
    pub(crate) judge: Arc<dyn RunJudge>,
    pub(crate) approver: Option<Arc<ExecApprover>>,
    pub(crate) on_line_start: Option<Box<LineStart>>,
    pub(crate) confined: bool,
    /// For a sandbox started ahead: where the command that takes it hands itself over.
    pub(crate) handover: Option<Arc<crate::warm::Handover>>,
    /// The program the line's shell must be (a sandbox started ahead's trampoline executes
    /// it): its arguments, the first one the file it executes.
    pub(crate) expect: Option<Vec<OsString>>,
    /// Programs may be decided at their `execve`'s entry where nothing can change what it
    /// runs (see `entry`): the command runs sealed, or only the line's own programs are
    /// watched.
    pub(crate) at_entry: Option<crate::entry::Entries>,
}

#[allow(unsafe_code)]
pub(crate) fn ptrace(request: libc::c_uint, pid: libc::pid_t, data: usize) -> libc::c_long {
    // SAFETY: the requests made with it (SETOPTIONS, SEIZE, CONT, INTERRUPT, DETACH) take a
    // pid and an integer; the kernel checks the pid.
    unsafe {
        libc::ptrace(
            request as _,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            data,
        )
    }
}

/// Stop tracing `pid` (stopped) and let it go on.
fn detach(pid: libc::pid_t) {
    ptrace(libc::PTRACE_DETACH as _, pid, 0);
}

fn cont(pid: libc::pid_t, signal: libc::c_int) {
    ptrace(libc::PTRACE_CONT as _, pid, signal as usize);
}

#[allow(unsafe_code)]
fn event_message(pid: libc::pid_t) -> Option<libc::pid_t> {
    let mut msg: libc::c_ulong = 0;
    // SAFETY: GETEVENTMSG writes one c_ulong to the address given, a local of ours.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG as _,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut msg as *mut libc::c_ulong,
        )
    };
    (r == 0).then_some(msg as libc::pid_t)
}

/// True when the stop is a group-stop rather than a signal being delivered.
#[allow(unsafe_code)]
pub(crate) fn is_group_stop(pid: libc::pid_t) -> bool {
    let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
    // SAFETY: GETSIGINFO writes one siginfo_t to the buffer given, a local of ours.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGINFO as _,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            info.as_mut_ptr(),
        )
    };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL)
}

/// Wait for any child or tracee of this thread.
#[allow(unsafe_code)]
fn wait_any() -> Result<(libc::pid_t, libc::c_int), std::io::Error> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes the status to a local of ours; __WNOTHREAD keeps it to this
        // thread's own children and tracees, so other threads' children are never reaped here.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL | libc::__WNOTHREAD) };
        if pid >= 0 {
            return Ok((pid, status));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wait for the first change of `pid` (a child of this thread): its first stop when traced,
/// else its end.
#[allow(unsafe_code)]
pub(crate) fn wait_pid(pid: libc::pid_t) -> Result<libc::c_int, std::io::Error> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: as in `wait_any`, for one pid.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r == pid {
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

pub(crate) const OPTIONS: libc::c_int = libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_EXITKILL;

/// Set the tracing options on the launcher (stopped at its own `exec`) and let it run.
pub(crate) fn start_tracing(pid: libc::pid_t) -> Result<(), std::io::Error> {
    if ptrace(libc::PTRACE_SETOPTIONS as _, pid, OPTIONS as usize) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    cont(pid, 0);
    Ok(())
}

/// `WIFSTOPPED` and friends, spelled out (the libc functions are `unsafe` for no reason here).
pub(crate) fn stopped(status: libc::c_int) -> bool {
    status & 0xff == 0x7f
}
fn stop_signal(status: libc::c_int) -> libc::c_int {
    (status >> 8) & 0xff
}
fn event_of(status: libc::c_int) -> libc::c_int {
    (status >> 16) & 0xff
}
fn ended(status: libc::c_int) -> bool {
    // Exited (low 7 bits 0) or killed by a signal (low 7 bits a signal, not 0x7f).
    let low = status & 0x7f;
    low == 0 || (low != 0x7f && !stopped(status))
}

/// What a process is about to run.
pub(crate) struct Loaded {
    pub(crate) argv: Vec<String>,
    /// For a script, the interpreter's whole command line.
    pub(crate) interpreter: Option<Vec<String>>,
    pub(crate) exe: PathBuf,
    pub(crate) cwd: PathBuf,
    /// A path that opens the executable the kernel loads.
    pub(crate) image: PathBuf,
    /// A path that opens the process's root directory.
    pub(crate) root: PathBuf,
    pub(crate) image_id: (u64, u64),
}

impl Loaded {
    /// The question put to the judge about it.
    fn request(&self, started_by_line: bool, confined: bool) -> ExecRequest<'_> {
        ExecRequest {
            argv: &self.argv,
            exe: &self.exe,
            cwd: &self.cwd,
            started_by_line,
            confined,
            image: &self.image,
            root: &self.root,
            image_id: self.image_id,
            interpreter: self.interpreter.as_deref(),
            open: crate::entry::open_named,
        }
    }
}

pub(crate) fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Read `buf.len()` bytes at `addr` of the memory of `pid` (a tracee of ours), in one call.
#[allow(unsafe_code)]
pub(crate) fn read_memory(pid: libc::pid_t, addr: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the local iovec is our buffer, valid for its length; the remote one is only an
    // address in the other process, which the kernel checks.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Where the kernel laid out a newly loaded program's strings (`/proc/PID/stat`, fields 48 to
/// 51): its arguments from `arg_start` to `arg_end`, its environment up to `env_end`, and
/// right after it the path the caller passed to `execve` (`AT_EXECFN`), up to the top of the
/// stack.
struct Layout {
    arg_start: u64,
    arg_end: u64,
    env_end: u64,
}

/// A small `/proc` file in one read (open, read, close: what the hot path can afford).
pub(crate) fn read_small(path: &str) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 4096];
    let n = f.read(&mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// The layout of a program `pid` has just loaded, read from its new stack: at the exec
/// stop, before it has run an instruction, the stack pointer points at what the kernel put
/// there (`argc`, the argument and environment pointers, the auxiliary vector), and the
/// strings lie above in the order arguments, environment, executed path (`AT_EXECFN`). One
/// `ptrace` and one memory read, where `/proc/PID/stat` costs an open, a read and a close;
/// `None` (the caller then reads `/proc`) when anything there is not as the kernel lays it.
#[allow(unsafe_code)]
fn layout_from_stack(pid: libc::pid_t) -> Option<Layout> {
    const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
    const AT_EXECFN: u64 = 31;
    // `struct ptrace_syscall_info` up to the stack pointer: op, pad, arch, ip, sp.
    let mut info = [0u64; 3];
    // SAFETY: GET_SYSCALL_INFO writes at most the size given (`addr`) to the buffer given
    // (`data`), a local of ours.
    let n = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO as _,
            pid,
            std::mem::size_of_val(&info) as *mut libc::c_void,
            info.as_mut_ptr(),
        )
    };
    if n < std::mem::size_of_val(&info) as libc::c_long {
        return None;
    }
    let sp = info[2];
    let mut raw = [0u8; 8192];
    let got = read_memory(pid, sp, &mut raw).ok()?;
    let words: Vec<u64> = raw[..got - got % 8]
        .chunks_exact(8)
        .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()))
        .collect();
    let argc = usize::try_from(*words.first()?).ok()?;
    let argv = words.get(1..1 + argc)?;
    if argc == 0 || *words.get(1 + argc)? != 0 {
        return None;
    }
    let env_from = 2 + argc;
    let envc = words.get(env_from..)?.iter().position(|&w| w == 0)?;
    let envp = &words[env_from..env_from + envc];
    let aux = words.get(env_from + envc + 1..)?;
    let execfn = aux.chunks_exact(2).find_map(|pair| match pair[0] {
        AT_EXECFN => Some(Some(pair[1])),
        0 => Some(None),
        _ => None,
    })??;
    let arg_start = argv[0];
    let arg_end = envp.first().copied().unwrap_or(execfn);
    let l = Layout {
        arg_start,
        arg_end,
        env_end: execfn,
    };
    (arg_start > sp && l.arg_end >= l.arg_start && l.env_end >= l.arg_end).then_some(l)
}

fn layout(pid: libc::pid_t) -> Option<Layout> {
    if let Some(l) = layout_from_stack(pid) {
        return Some(l);
    }
    let stat = read_small(&format!("/proc/{pid}/stat"))?;
    // The fields after the command name, which is in parentheses and may hold anything.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    // Field 3 (the state) comes first.
    let field = |n: usize| -> Option<u64> { rest.split_whitespace().nth(n - 3)?.parse().ok() };
    let l = Layout {
        arg_start: field(48)?,
        arg_end: field(49)?,
        env_end: field(51)?,
    };
    (l.arg_start != 0 && l.arg_end >= l.arg_start && l.env_end >= l.arg_end).then_some(l)
}

/// The arguments of the program `pid` has just loaded (what `/proc/PID/cmdline` gives then).
fn arguments(pid: libc::pid_t, l: &Layout) -> Option<Vec<u8>> {
    // The kernel's own bound on what `execve` takes.
    const MAX: u64 = 32 * 1024 * 1024;
    let len = (l.arg_end - l.arg_start).min(MAX) as usize;
    let mut raw = vec![0u8; len];
    let n = read_memory(pid, l.arg_start, &mut raw).ok()?;
    raw.truncate(n);
    Some(raw)
}

/// The path the caller passed to `execve` (`AT_EXECFN`): the string after the environment's.
fn exec_filename(pid: libc::pid_t, l: &Layout) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = l.env_end;
    // Page by page, never past the page the string is known to reach, up to PATH_MAX.
    while out.len() < 4096 {
        let room = (PAGE - at % PAGE) as usize;
        let mut buf = vec![0u8; room];
        let n = read_memory(pid, at, &mut buf).ok()?;
        buf.truncate(n);
        if let Some(end) = buf.iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf);
        at += n as u64;
        if n == 0 {
            return None;
        }
    }
    None
}

/// The target of link `name` in directory `dir`.
#[allow(unsafe_code)]
pub(crate) fn read_link_at(dir: &OwnedFd, name: &std::ffi::CStr) -> Option<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: readlinkat writes at most the buffer's length into our buffer; `dir` is open.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 || n as usize >= buf.len() {
        return None;
    }
    buf.truncate(n as usize);
    Some(PathBuf::from(OsString::from_vec(buf)))
}

/// The device and inode of the file `name` in directory `dir` leads to.
#[allow(unsafe_code)]
fn identity_at(dir: &OwnedFd, name: &std::ffi::CStr) -> Option<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstatat writes one stat to our buffer; `dir` is open.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), 0) };
    if r != 0 {
        return None;
    }
    // SAFETY: fstatat succeeded, so it filled the buffer in.
    let st = unsafe { st.assume_init() };
    Some((st.st_dev, st.st_ino))
}

/// The program `pid` has loaded (the target of its `exe` link, and that file's device and
/// inode) and its working directory, read through `dir`, its `/proc` directory when the
/// caller opened it ahead (one lookup of the pid saved on each of three reads), else by path.
fn program_of(pid: libc::pid_t, dir: Option<&OwnedFd>) -> Option<(PathBuf, (u64, u64), PathBuf)> {
    use std::os::unix::fs::MetadataExt as _;
    if let Some(dir) = dir {
        return Some((
            read_link_at(dir, c"exe")?,
            identity_at(dir, c"exe")?,
            read_link_at(dir, c"cwd")?,
        ));
    }
    let image = format!("/proc/{pid}/exe");
    let exe = std::fs::read_link(&image).ok()?;
    let meta = std::fs::metadata(&image).ok()?;
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    Some((exe, (meta.dev(), meta.ino()), cwd))
}

/// What `pid`, held at its exec stop, is about to run. `dir`: its `/proc` directory, opened
/// ahead by the caller.
fn load(pid: libc::pid_t, dir: Option<&OwnedFd>) -> Option<Loaded> {
    use std::os::unix::fs::MetadataExt as _;
    let layout = layout(pid)?;
    let mut raw = arguments(pid, &layout)?;
    if raw.last() == Some(&0) {
        raw.pop();
    }
    let mut words: Vec<Vec<u8>> = raw.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    if raw.is_empty() {
        words.clear();
    }
    let image = PathBuf::from(format!("/proc/{pid}/exe"));
    let (exe, image_id, cwd) = program_of(pid, dir)?;
    // A script: the kernel ran its interpreter with the script's path inserted. The program
    // the caller asked for is the script, with the arguments after it. (The first word names
    // the interpreter then, as it does any program: `#!/usr/bin/env node` gives `env node
    // SCRIPT`, so the path the caller executed is always looked at.)
    let mut exe_named = exe.clone();
    let mut interpreter: Option<Vec<Vec<u8>>> = None;
    if words.len() > 1
        && let Some(execfn) = exec_filename(pid, &layout)
    {
        let execfn_path = PathBuf::from(OsString::from_vec(execfn.clone()));
        let seen = if execfn_path.is_absolute() {
            PathBuf::from(format!("/proc/{pid}/root"))
                .join(execfn_path.strip_prefix("/").unwrap_or(&execfn_path))
        } else {
            PathBuf::from(format!("/proc/{pid}/cwd")).join(&execfn_path)
        };
        // Only when the path is where a script's would be is it looked at (a `stat`).
        if let Some(at) = words.iter().take(3).skip(1).position(|w| *w == execfn)
            && !std::fs::metadata(&seen).map_or(true, |a| (a.dev(), a.ino()) == image_id)
        {
            // `at` counts from the second word: the script is word `at + 1`.
            interpreter = Some(words.clone());
            words.drain(..=at);
            exe_named = execfn_path;
        }
    }
    Some(Loaded {
        argv: words.into_iter().map(lossy).collect(),
        interpreter: interpreter.map(|w| w.into_iter().map(lossy).collect()),
        exe: exe_named,
        cwd,
        image,
        root: PathBuf::from(format!("/proc/{pid}/root")),
        image_id,
    })
}

/// Whether `pid`, held at its exec stop, has just loaded exactly `argv`: those words, and the
/// file the first one names (an absolute path, seen from `pid`'s root).
fn is_exactly(pid: libc::pid_t, argv: &[OsString]) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::MetadataExt as _;
    let Some(first) = argv.first() else {
        return false;
    };
    let Some(layout) = layout(pid) else {
        return false;
    };
    let Some(mut raw) = arguments(pid, &layout) else {
        return false;
    };
    if raw.last() == Some(&0) {
        raw.pop();
    }
    let want = argv
        .iter()
        .map(|a| a.as_bytes())
        .collect::<Vec<_>>()
        .join(&0u8);
    if raw != want {
        return false;
    }
    let named = Path::new(first);
    let in_root =
        PathBuf::from(format!("/proc/{pid}/root")).join(named.strip_prefix("/").unwrap_or(named));
    match (
        std::fs::metadata(format!("/proc/{pid}/exe")),
        std::fs::metadata(in_root),
    ) {
        (Ok(a), Ok(b)) => named.is_absolute() && a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `pid`, held at its exec stop, is dying or dead since (killed with its command):
/// its `/proc` entry is gone, it is a zombie, or the kernel marks it exiting (`PF_EXITING`
/// among the flags of `/proc/PID/stat`, set before its memory goes).
fn gone(pid: libc::pid_t) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Some(stat) = read_small(&format!("/proc/{pid}/stat")) else {
        return true;
    };
    let Some(close) = stat.iter().rposition(|&b| b == b')') else {
        return true;
    };
    let rest = String::from_utf8_lossy(&stat[close + 1..]).into_owned();
    let mut fields = rest.split_whitespace();
    // Field 3, the state, comes first; field 9, the flags, six after it.
    let state = fields.next().unwrap_or("X");
    let flags: u64 = fields.nth(5).and_then(|f| f.parse().ok()).unwrap_or(0);
    matches!(state, "Z" | "X" | "x") || flags & PF_EXITING != 0
}

impl Supervisor {
    /// Trace until every process of the sandbox has ended. `launcher` is bubblewrap (when
    /// `confined`) or the line's shell itself, already traced with [`OPTIONS`]. Its end is the
    /// command's end: its status is returned.
    pub(crate) fn run(mut self, launcher: libc::pid_t, confined: bool) -> ExitStatus {
        let mut tracees: HashMap<libc::pid_t, Tracee> = HashMap::new();
        tracees.insert(
            launcher,
            Tracee {
                role: Some(if confined { Role::Launcher } else { Role::Line }),
                initial_pending: false,
                held: false,
            },
        );
        self.shared.track(launcher);
        let watching = self.judge.watching(confined);
        let mut launcher_status: Option<ExitStatus> = None;
        // Until ECHILD: nothing left to wait for.
        while let Ok((pid, status)) = wait_any() {
            if ended(status) {
                tracees.remove(&pid);
                self.shared.untrack(pid);
                if pid == launcher {
                    use std::os::unix::process::ExitStatusExt as _;
                    launcher_status = Some(ExitStatus::from_raw(status));
                }
                continue;
            }
            if !stopped(status) {
                continue;
            }
            let signal = stop_signal(status);
            match event_of(status) {
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    let parent_role = tracees
                        .get(&pid)
                        .and_then(|t| t.role)
                        .unwrap_or(Role::Descendant);
                    // A fork or thread is in the same position as its parent until it
                    // executes something.
                    let child_role = parent_role;
                    if let Some(child) = event_message(pid) {
                        self.shared.track(child);
                        match tracees.get_mut(&child) {
                            Some(t) if t.held => {
                                t.role = Some(child_role);
                                t.held = false;
                                if !self.shared.is_killed() {
                                    cont(child, 0);
                                }
                            }
                            Some(t) => t.role = Some(child_role),
                            None => {
                                tracees.insert(
                                    child,
                                    Tracee {
                                        role: Some(child_role),
                                        initial_pending: true,
                                        held: false,
                                    },
                                );
                            }
                        }
                    }
                    cont(pid, 0);
                }
                libc::PTRACE_EVENT_EXEC => {
                    // After an exec from a thread other than the leader, the leader's pid
                    // carries on and the thread's id is gone.
                    if let Some(former) = event_message(pid)
                        && former != pid
                        && let Some(t) = tracees.remove(&former)
                    {
                        self.shared.untrack(former);
                        tracees.insert(pid, t);
                    }
                    let role = tracees
                        .get(&pid)
                        .and_then(|t| t.role)
                        .unwrap_or(Role::Descendant);
                    let next = self.on_exec(pid, role, None);
                    if let Some(next) = next {
                        // What the judge does not watch runs untraced from here on (in the
                        // sandbox, it still dies with the command).
                        let unwatched = match (watching, next) {
                            (Watching::Everything, _) => false,
                            (Watching::LineOnly, Role::Descendant) => true,
                            (Watching::LineOnly, _) => false,
                            (Watching::Nothing, Role::Launcher) => false,
                            (Watching::Nothing, _) => true,
                        };
                        if unwatched {
                            tracees.remove(&pid);
                            self.shared.untrack(pid);
                            detach(pid);
                            continue;
                        }
                        if let Some(t) = tracees.get_mut(&pid) {
                            t.role = Some(next);
                        }
                        cont(pid, 0);
                    }
                }
                0 => match tracees.get_mut(&pid) {
                    Some(t) if t.initial_pending && signal == libc::SIGSTOP => {
                        t.initial_pending = false;
                        cont(pid, 0);
                    }
                    Some(_) => {
                        let job_stop = matches!(
                            signal,
                            libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
                        );
                        if job_stop && is_group_stop(pid) {
                            cont(pid, 0);
                        } else {
                            cont(pid, signal);
                        }
                    }
                    None => {
                        // A new child stopped before its parent's fork event arrived: hold it
                        // until the event says who started it.
                        self.shared.track(pid);
                        tracees.insert(
                            pid,
                            Tracee {
                                role: None,
                                initial_pending: signal != libc::SIGSTOP,
                                held: true,
                            },
                        );
                    }
                },
                _ => cont(pid, 0),
            }
        }
        launcher_status.unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt as _;
            ExitStatus::from_raw(libc::SIGKILL)
        })
    }

    /// Decide an `exec`. `Some(role)`: let it run, with this role from now on; `None`: the
    /// command was stopped. `proc_dir`: `/proc/PID` of `pid`, when the caller opened it ahead.
    pub(crate) fn on_exec(
        &mut self,
        pid: libc::pid_t,
        role: Role,
        proc_dir: Option<&OwnedFd>,
    ) -> Option<Role> {
        if self.shared.is_killed() {
            return None;
        }
        if role == Role::Launcher {
            if let Some(argv) = self.expect.take()
                && !is_exactly(pid, &argv)
            {
                self.stop(Stop {
                    argv: argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
                    exe: PathBuf::new(),
                    started_by_line: false,
                    decision: Decision::deny(
                        "The sandbox started ahead executed another program than the command's shell, so the command was stopped.",
                        tool_core::DecisionReason::Check {
                            name: "a sandbox started ahead".into(),
                        },
                    ),
                    approved: None,
                });
                return None;
            }
            // The line's shell, loaded and not yet running: the sandbox's namespaces exist.
            if let Some(start) = self.on_line_start.take()
                && let Err(why) = start(pid)
            {
                self.stop(Stop {
                    argv: Vec::new(),
                    exe: PathBuf::new(),
                    started_by_line: false,
                    decision: Decision::deny(
                        format!("The sandbox could not start its network filter: {why}"),
                        tool_core::DecisionReason::Check {
                            name: "the sandbox's network filter".into(),
                        },
                    ),
                    approved: None,
                });
                return None;
            }
            return Some(Role::Line);
        }
        let started_by_line = role == Role::Line;
        let Some(loaded) = load(pid, proc_dir) else {
            if gone(pid) {
                // Killed while it was held (the command ended around it): nothing runs.
                return None;
            }
            self.stop(Stop {
                argv: Vec::new(),
                exe: PathBuf::new(),
                started_by_line,
                decision: Decision::deny(
                    "A program the command started could not be identified, so it was stopped.",
                    tool_core::DecisionReason::Check {
                        name: "an unreadable exec".into(),
                    },
                ),
                approved: None,
            });
            return None;
        };
        let decision = self.verdict(&loaded, started_by_line);
        self.carry_out(loaded, started_by_line, decision)
    }

    /// What the judge says of `loaded`.
    pub(crate) fn verdict(&self, loaded: &Loaded, started_by_line: bool) -> Decision {
        self.judge
            .exec(&loaded.request(started_by_line, self.confined))
    }

    /// Carry out the judge's `decision` on `loaded`, held: an allow lets it run; an ask goes to
    /// the approver, if any, and runs only when granted; a deny, or an ask not granted, stops
    /// the command. The program's role from then on, or `None` when the command is stopped.
    pub(crate) fn carry_out(
        &mut self,
        loaded: Loaded,
        started_by_line: bool,
        decision: Decision,
    ) -> Option<Role> {
        let next = Role::Descendant;
        match decision.verdict {
            Verdict::Allow => Some(next),
            Verdict::Ask => {
                let request = loaded.request(started_by_line, self.confined);
                let granted = self
                    .approver
                    .as_ref()
                    .is_some_and(|approve| approve(&request, &decision));
                if granted {
                    self.shared.note_approved(&loaded.argv, &decision);
                    Some(next)
                } else {
                    self.stop(Stop {
                        argv: loaded.argv,
                        exe: loaded.exe,
                        started_by_line,
                        decision,
                        approved: Some(false).filter(|_| self.approver.is_some()),
                    });
                    None
                }
            }
            Verdict::Deny => {
                self.stop(Stop {
                    argv: loaded.argv,
                    exe: loaded.exe,
                    started_by_line,
                    decision,
                    approved: None,
                });
                None
            }
        }
    }

    fn stop(&self, stop: Stop) {
        self.shared.record_stop(stop);
        self.shared.kill_all();
    }

    /// Stop the command because a program it started could not be watched.
    pub(crate) fn stop_unwatchable(&self, why: &std::io::Error) {
        self.stop(Stop {
            argv: Vec::new(),
            exe: PathBuf::new(),
            started_by_line: false,
            decision: Decision::deny(
                format!(
                    "A program the command started could not be supervised ({why}), so the command was stopped. A program traced by another (a debugger, strace) cannot be supervised; a command that needs one can be let out of the sandbox with sandbox.excludedCommands."
                ),
                tool_core::DecisionReason::Check {
                    name: "an exec the supervisor could not watch".into(),
                },
            ),
            approved: None,
        });
    }
}
