//! Run-time enforcement for shell commands: what the policy forbids is made impossible while
//! the command runs, whatever a reading of the command line missed.
//!
//! A command runs under [bubblewrap](https://github.com/containers/bubblewrap) (`bwrap`) with
//! the file system of a [`MountPlan`] (the root read-only; the plan's writable paths
//! writable; its read-only paths read-only even inside them; its hidden paths replaced by
//! empty stand-ins; protected names that do not exist yet held by read-only stand-ins), in
//! fresh PID, network, IPC and UTS namespaces, with no capabilities, dying with its
//! supervisor. Every process of the command is traced: each program it executes is decided by
//! the policy's [`RunJudge`] after the kernel loaded it and before its first instruction, and a
//! deny (or an ask nobody grants) kills the whole command. The network is the sandbox's own
//! loopback only, or, with [`NetworkPlan::Filtered`], an HTTP proxy on that loopback which asks
//! the judge about each host by name.
//!
//! This crate knows no rule syntax: the plan and the judge come from the policy
//! (`tool-permissions` implements [`tool_core::sandbox::SandboxPolicy`]); Bash (in
//! `builtin-tools`) joins the two.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tool_core::sandbox::{AllowAll, MountPlan, NetworkPlan, PlannedPath};
//! use tool_sandbox::{Launch, Sandbox};
//!
//! let sandbox = Sandbox::detect().expect("bwrap works here");
//! let mut plan = MountPlan::default();
//! plan.writable.push(PlannedPath::new("/tmp/project", "the working directory"));
//! let running = Launch::new("/bin/sh", ["-c", "echo hi > /etc/x"])
//!     .cwd("/tmp/project")
//!     .plan(plan, NetworkPlan::Blocked)
//!     .judge(Arc::new(AllowAll))
//!     .spawn(sandbox)
//!     .expect("started");
//! let status = running.wait_blocking();
//! assert!(!status.success(), "/etc is read-only in the sandbox");
//! ```

mod absent;
mod bwrap;
mod entry;
mod netns;
mod notify;
mod proxy;
mod seccomp;
mod spawn;
mod supervise;
mod warm;

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

pub use spawn::Io;
use tool_core::Decision;
use tool_core::sandbox::ExecRequest;
pub use tool_core::sandbox::{MountPlan, NetworkPlan, RunJudge};
pub use warm::Ahead;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `bwrap` is not installed (not on the `PATH` searched).
    #[error("bubblewrap (bwrap) is not installed; on Debian or Ubuntu: apt-get install bubblewrap")]
    Missing,
    /// `bwrap` is there but the sandbox cannot run: it cannot create its namespaces, or
    /// processes cannot be traced. The text says which, for a one-line warning.
    #[error("the sandbox is unavailable: {0}")]
    Unavailable(String),
    /// Starting the command failed.
    #[error("cannot start the sandboxed command: {0}")]
    Spawn(#[source] std::io::Error),
    /// Preparing the sandbox's file system (its stand-ins) failed.
    #[error("cannot prepare the sandbox: {0}")]
    Prepare(#[source] std::io::Error),
}

/// A program the supervisor stopped, or a setup step that stopped the command.
#[derive(Debug, Clone)]
pub struct Stop {
    /// Its arguments (empty when the stop was not about a program).
    pub argv: Vec<String>,
    /// The file it executed.
    pub exe: PathBuf,
    /// Started by the line's own shell (see [`ExecRequest::started_by_line`]).
    pub started_by_line: bool,
    /// The judge's decision: a deny, or an ask.
    pub decision: Decision,
    /// For an ask: `Some(false)` when the approver refused it, `None` when there was no one to
    /// ask.
    pub approved: Option<bool>,
}

/// A connection the network filter refused.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The host, as the client asked for it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Why.
    pub decision: Decision,
}

/// A program that needed approval and got it while it was held.
#[derive(Debug, Clone)]
pub struct Approved {
    /// Its arguments.
    pub argv: Vec<String>,
    /// The ask that was granted.
    pub decision: Decision,
}

/// What happened to a command while it ran, beyond its output.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Protected names the command created, removed when it ended.
    pub removed: Vec<tool_core::sandbox::AbsentPath>,
    /// What else the judge put right when the command ended ([`RunJudge::settle`]).
    ///
    /// [`RunJudge::settle`]: tool_core::sandbox::RunJudge::settle
    pub settled: Vec<tool_core::sandbox::Settled>,
    /// Programs stopped (the first one ended the command).
    pub stops: Vec<Stop>,
    /// Connections refused.
    pub refusals: Vec<Refusal>,
    /// Programs granted by the approver while held.
    pub approvals: Vec<Approved>,
}

/// SIGKILL the process a pidfd of ours holds (a pidfd cannot come to name another process).
fn kill_by_pidfd(pidfd: &OwnedFd) {
    let _ = send_kill(pidfd, 0);
}

/// `PIDFD_SIGNAL_PROCESS_GROUP` (Linux 6.9): signal the process group of the pidfd's process.
const PIDFD_SIGNAL_PROCESS_GROUP: libc::c_uint = 1 << 2;

/// SIGKILL through `pidfd` with `flags`; whether the kernel took it.
fn send_kill(pidfd: &OwnedFd, flags: libc::c_uint) -> std::io::Result<()> {
    pidfd_signal(pidfd, libc::SIGKILL, flags)
}

/// `pidfd_send_signal(pidfd, signal, NULL, flags)`.
#[allow(unsafe_code)]
fn pidfd_signal(pidfd: &OwnedFd, signal: libc::c_int, flags: libc::c_uint) -> std::io::Result<()> {
    // SAFETY: pidfd_send_signal on a pidfd of ours, with no siginfo.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            flags,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// SIGKILL the process group bubblewrap (`pidfd`, `pid`) made, and bubblewrap. Through the
/// pidfd the group stays the one it made even once it was waited for; before Linux 6.9 (no
/// `PIDFD_SIGNAL_PROCESS_GROUP`), by number, only while bubblewrap is not yet waited for (a
/// null signal through the pidfd still reaches it), so that the number is not another's.
#[allow(unsafe_code)]
fn kill_launcher_group(pidfd: &OwnedFd, pid: libc::pid_t) {
    if let Err(e) = send_kill(pidfd, PIDFD_SIGNAL_PROCESS_GROUP)
        && e.raw_os_error() == Some(libc::EINVAL)
    {
        if pidfd_signal(pidfd, 0, 0).is_ok() {
            // SAFETY: kill(2) of the group of our child, which was not yet reaped just now.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = send_kill(pidfd, 0);
    }
}

/// State shared by the supervisor thread, the network filter and the handle.
#[derive(Default)]
pub(crate) struct Shared {
    pids: Mutex<HashSet<libc::pid_t>>,
    /// The init of the sandbox's PID namespace (a pidfd), once known: killing it kills every
    /// process in the namespace at once.
    ns_init: Mutex<Option<OwnedFd>>,
    /// Bubblewrap as started (a pidfd, and its pid), the leader of the process group it
    /// made: until its init in the new PID namespace has set itself to die with it and
    /// started a session of its own, that init is only in this group (bubblewrap killed
    /// before it let the init go on would leave the init waiting for it for ever).
    launcher: Mutex<Option<(OwnedFd, libc::pid_t)>>,
    /// Bubblewrap's pid, written by the kernel as it makes the process (0 before).
    launcher_pid: Arc<std::sync::atomic::AtomicI32>,
    killed: AtomicBool,
    finished: AtomicBool,
    status: Mutex<Option<ExitStatus>>,
    cond: Condvar,
    notify: tokio::sync::Notify,
    report: Mutex<Report>,
    /// The network filter's listener, shut when the command ends so its thread ends and the
    /// sandbox's network namespace goes.
    listener: Mutex<Option<std::net::TcpListener>>,
    /// The judge that puts right what a confined command left ([`RunJudge::settle`]); held
    /// while settling, so two looks never run at once.
    settler: Mutex<Option<Arc<dyn RunJudge>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    fn track(&self, pid: libc::pid_t) {
        lock(&self.pids).insert(pid);
    }
    fn untrack(&self, pid: libc::pid_t) {
        lock(&self.pids).remove(&pid);
    }
    fn is_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }
    fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }
    pub(crate) fn set_ns_init(&self, pidfd: OwnedFd) {
        *lock(&self.ns_init) = Some(pidfd);
    }
    /// Note bubblewrap as started: `pid`, a child of this thread not yet waited for. From
    /// now on it is known by its pidfd only (the number may be waited for, then reused).
    fn set_launcher(&self, pid: libc::pid_t) {
        if let Ok(fd) = notify::pidfd_open(pid) {
            *lock(&self.launcher) = Some((fd, pid));
        }
        self.launcher_pid.store(0, Ordering::SeqCst);
    }
    /// For a process that is exiting (nothing here waits for a lock): SIGKILL bubblewrap
    /// and the process group it made, through its pidfd once there is one, else by the pid
    /// the kernel wrote as it made the process (a child of ours, not yet waited for: its
    /// thread is still starting it).
    #[allow(unsafe_code)]
    fn kill_launcher_at_exit(&self) {
        if self.is_finished() {
            return;
        }
        let launcher = match self.launcher.try_lock() {
            Ok(l) => l,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            // Being killed right now by another thread.
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if let Some((fd, pid)) = launcher.as_ref() {
            kill_launcher_group(fd, *pid);
            return;
        }
        drop(launcher);
        // Still being started: the number the kernel wrote, until spawning is over.
        let pid = self.launcher_pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) and getpgid(2) of our own child, not yet reaped. Killed first,
            // it makes no process any more; its group is its own once it set it (before it
            // executed bubblewrap), and then holds whatever bubblewrap made.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                if libc::getpgid(pid) == pid {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
        }
    }
    /// SIGKILL every process of the command: the sandbox's PID namespace first (its init,
    /// through a pidfd, which no other process can take the place of), then the process
    /// group bubblewrap made (its init, when it is not known yet), then each pid the
    /// supervisor has not yet seen exit, so none can have been reused.
    #[allow(unsafe_code)]
    fn kill_all(&self) {
        self.killed.store(true, Ordering::SeqCst);
        if let Some(init) = lock(&self.ns_init).as_ref() {
            kill_by_pidfd(init);
        }
        if let Some((fd, pid)) = lock(&self.launcher).as_ref() {
            kill_launcher_group(fd, *pid);
        }
        for &pid in lock(&self.pids).iter() {
            // SAFETY: kill(2) on a live tracee's pid; it touches no memory.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    fn record_stop(&self, stop: Stop) {
        lock(&self.report).stops.push(stop);
    }
    fn record_refusal(&self, refusal: Refusal) {
        lock(&self.report).refusals.push(refusal);
    }
    /// Put right now what the command left so far (for a confined command).
    fn settle_now(&self) {
        let settler = lock(&self.settler);
        if let Some(judge) = settler.as_ref() {
            let settled = judge.settle();
            lock(&self.report).settled.extend(settled);
        }
    }
    fn note_approved(&self, argv: &[String], decision: &Decision) {
        lock(&self.report).approvals.push(Approved {
            argv: argv.to_vec(),
            decision: decision.clone(),
        });
    }
    /// Once bubblewrap has ended: kill what is left of the command (its background jobs) and
    /// wait until its PID namespace is empty, so that nothing of it runs once its status is
    /// out. The namespace's init ends only after every other process in it has been reaped;
    /// `reap`: this thread's tracees among them are reaped here meanwhile.
    #[allow(unsafe_code)]
    fn end_namespace(&self, reap: bool) {
        let Some(init) = lock(&self.ns_init).take() else {
            return;
        };
        kill_by_pidfd(&init);
        let deadline = std::time::Instant::now() + NAMESPACE_END;
        loop {
            let mut fd = libc::pollfd {
                fd: init.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one descriptor of ours.
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let wait = if reap {
                5
            } else {
                left.as_millis().min(1000) as libc::c_int
            };
            let r = unsafe { libc::poll(&mut fd, 1, wait) };
            if r > 0
                || (r < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted)
            {
                return;
            }
            if reap {
                notify::reap_tracees();
            }
            if std::time::Instant::now() >= deadline {
                tracing::warn!("the sandbox's PID namespace did not empty in time");
                return;
            }
        }
    }
    #[allow(unsafe_code)]
    fn finish(&self, status: ExitStatus) {
        *lock(&self.status) = Some(status);
        self.finished.store(true, Ordering::SeqCst);
        if let Some(l) = lock(&self.listener).take() {
            // SAFETY: shutdown on a socket we own; the accept waiting on it returns.
            unsafe {
                libc::shutdown(l.as_raw_fd(), libc::SHUT_RDWR);
            }
        }
        self.cond.notify_all();
        self.notify.notify_waiters();
    }
}

/// Asks the host's approver about a program that needs approval; `true` lets it run. Called
/// on the supervisor's thread, with the program held, so it may block.
pub type ExecApprover = dyn Fn(&ExecRequest<'_>, &Decision) -> bool + Send + Sync;

/// Where the network filter connects for a host and port. The default resolves the name with
/// the system's resolver; a test can aim every host at its own listener.
pub type Resolver = dyn Fn(&str, u16) -> std::io::Result<Vec<std::net::SocketAddr>> + Send + Sync;

/// The sandbox of this machine: `bwrap` found and working, with the runtime directory the
/// stand-ins live in.
#[derive(Debug, Clone)]
pub struct Sandbox {
    bwrap: PathBuf,
    runtime: PathBuf,
    stand_ins: bwrap::StandIns,
    /// Seccomp user notification can stop each `execve` (see `notify`).
    notify: bool,
    /// The sandbox started ahead for the next command (see `warm`).
    warm: Arc<warm::Slot>,
}

/// The sandboxes checked so far, by the `bwrap` they use.
static DETECTED: OnceLock<Mutex<Vec<Detected>>> = OnceLock::new();

/// A `bwrap` and what checking it found, kept for the life of the process.
type Detected = (PathBuf, &'static Result<Sandbox, String>);

/// The per-user directory the stand-ins and locks live in.
#[allow(unsafe_code)]
fn runtime_dir() -> PathBuf {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("toolgate-sandbox-{uid}"))
}

/// `bwrap` where `TOOLGATE_BWRAP` says, else on `path` (the process's `PATH` when `None`).
fn find_bwrap(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TOOLGATE_BWRAP") {
        return Some(PathBuf::from(p));
    }
    let path = path
        .map(std::ffi::OsStr::to_owned)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

impl Sandbox {
    /// The sandbox, checked once per process by running `true` in it: `Err` with the reason
    /// (for a one-line warning) when `bwrap` is missing, cannot start, or its processes cannot
    /// be traced.
    pub fn detect() -> Result<&'static Sandbox, Error> {
        Self::detect_on(None)
    }

    /// As [`detect`](Self::detect), looking for `bwrap` on `path` (a `PATH` value) instead of
    /// the process's own: the commands' environment decides which `bwrap` they get. Each
    /// `bwrap` is checked once per process.
    pub fn detect_on(path: Option<&std::ffi::OsStr>) -> Result<&'static Sandbox, Error> {
        let bwrap = find_bwrap(path).ok_or(Error::Missing)?;
        let known = DETECTED.get_or_init(|| Mutex::new(Vec::new()));
        let mut known = lock(known);
        let found = match known.iter().find(|(p, _)| *p == bwrap) {
            Some((_, r)) => *r,
            None => {
                // Checked once and kept for the life of the process.
                let r: &'static Result<Sandbox, String> = Box::leak(Box::new(Sandbox::at(&bwrap)));
                known.push((bwrap, r));
                r
            }
        };
        found.as_ref().map_err(|e| Error::Unavailable(e.clone()))
    }

    /// The sandbox with the `bwrap` at `bwrap`, checked now (not cached).
    pub fn at(bwrap: &Path) -> Result<Sandbox, String> {
        let runtime = runtime_dir();
        {
            use std::os::unix::fs::DirBuilderExt as _;
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&runtime);
        }
        let stand_ins = bwrap::StandIns::make(&runtime)
            .map_err(|e| format!("cannot make {}: {e}", runtime.display()))?;
        let mut sandbox = Sandbox {
            bwrap: bwrap.to_path_buf(),
            runtime,
            stand_ins,
            notify: notify::available(bwrap),
            warm: Arc::default(),
        };
        sandbox.check(false)?;
        // Stopping each exec where it works here (a container may refuse the listener);
        // else the whole tree is traced.
        if sandbox.notify && sandbox.check(true).is_err() {
            sandbox.notify = false;
        }
        Ok(sandbox)
    }

    /// Run `true` in the sandbox, supervised, and see it succeed; with `watched`, with a judge
    /// that watches every program (so the supervisor stops its `execve`).
    fn check(&self, watched: bool) -> Result<(), String> {
        let truth = ["/bin/true", "/usr/bin/true"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .ok_or("no /bin/true to check the sandbox with")?;
        let err = tempfile_for_errors(&self.runtime)?;
        let err_path = err.1.clone();
        let mut launch = Launch::new("/bin/sh", ["-c", truth]).cwd("/").stderr(err.0);
        if watched {
            launch = launch.judge(Arc::new(WatchAll));
        }
        let running = launch.spawn(self).map_err(|e| e.to_string())?;
        let status = running.wait_blocking();
        let said = std::fs::read_to_string(&err_path).unwrap_or_default();
        let _ = std::fs::remove_file(&err_path);
        if status.success() {
            Ok(())
        } else {
            let said = said.trim();
            Err(format!(
                "{} cannot start a sandbox here ({}){}",
                self.bwrap.display(),
                status,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            ))
        }
    }

    /// The `bwrap` in use.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// Whether the supervisor stops only each `execve` of a command (seccomp user
    /// notification, then the exec event of that one thread) rather than tracing every
    /// process: on kernels from 5.5 on, on the architectures the filters are written for,
    /// with a `bwrap` that is not set-user-ID.
    pub fn stops_only_execs(&self) -> bool {
        self.notify
    }

    /// Kill the sandbox started ahead for the next command, if there is one (see
    /// [`Launch::keep_warm`]).
    pub fn discard_ahead(&self) {
        self.warm.clear();
    }

    /// Whether the seccomp filter that keeps every process traced is in place on this
    /// architecture.
    pub fn filters_clone(&self) -> bool {
        seccomp::program(false, true, false).is_some()
    }
}

/// Whether this process can supervise commands at all (trace them with `ptrace`, under the
/// seccomp filter): checked once, by running `true` supervised outside any sandbox. Some
/// container runtimes forbid `ptrace`; there commands can only run unsupervised.
pub fn can_supervise() -> Result<(), Error> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let truth = ["/bin/true", "/usr/bin/true"]
                .into_iter()
                .find(|p| Path::new(p).is_file())
                .ok_or("no /bin/true to check supervision with")?;
            let running = Launch::new(truth, Vec::<String>::new())
                .cwd("/")
                .spawn_unconfined()
                .map_err(|e| e.to_string())?;
            let status = running.wait_blocking();
            if status.success() {
                Ok(())
            } else {
                Err(format!("a supervised `true` ended with {status}"))
            }
        })
        .clone()
        .map_err(Error::Unavailable)
}

fn tempfile_for_errors(dir: &Path) -> Result<(std::fs::File, PathBuf), String> {
    let path = dir.join(format!("check-{}.err", std::process::id()));
    let f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((f, path))
}

/// A judge that allows everything and watches every program: what checking the supervisor
/// needs.
struct WatchAll;

impl RunJudge for WatchAll {
    fn exec(&self, _: &tool_core::sandbox::ExecRequest<'_>) -> Decision {
        Decision::allow(tool_core::DecisionReason::Check {
            name: "the sandbox's own check".into(),
        })
    }
    fn connect(&self, _: &str, _: u16) -> Decision {
        Decision::deny(
            "the sandbox's own check makes no connections",
            tool_core::DecisionReason::Check {
                name: "the sandbox's own check".into(),
            },
        )
    }
}

/// A command to run in the sandbox.
pub struct Launch {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    env: Option<Vec<(OsString, OsString)>>,
    stdin: Io,
    stdout: Io,
    stderr: Io,
    fds: Vec<(OwnedFd, RawFd)>,
    mounts: MountPlan,
    network: NetworkPlan,
    judge: Arc<dyn RunJudge>,
    approver: Option<Arc<ExecApprover>>,
    supervise: bool,
    trace_every_process: bool,
    unix_sockets: bool,
    resolver: Option<Arc<Resolver>>,
    keep_warm: bool,
    /// For a sandbox started ahead: where the command that takes it hands itself over.
    handover: Option<Arc<warm::Handover>>,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("mounts", &self.mounts)
            .field("network", &self.network)
            .field("supervise", &self.supervise)
            .finish_non_exhaustive()
    }
}

impl Launch {
    /// `program` with `args`, supervised, with an empty plan (only the root, read-only), no
    /// network, a judge that allows everything, the caller's environment and standard streams.
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            cwd: PathBuf::from("/"),
            env: None,
            stdin: Io::Inherit,
            stdout: Io::Inherit,
            stderr: Io::Inherit,
            fds: Vec::new(),
            mounts: MountPlan::default(),
            network: NetworkPlan::Blocked,
            judge: Arc::new(tool_core::sandbox::AllowAll),
            approver: None,
            supervise: true,
            trace_every_process: false,
            unix_sockets: false,
            resolver: None,
            keep_warm: false,
            handover: None,
        }
    }

    /// Where the command starts.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = cwd.into();
        self
    }

    /// The whole environment (nothing of the caller's is kept).
    pub fn env<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// Standard input (by default the caller's).
    pub fn stdin(mut self, s: impl Into<Io>) -> Self {
        self.stdin = s.into();
        self
    }

    /// Standard output (by default the caller's).
    pub fn stdout(mut self, s: impl Into<Io>) -> Self {
        self.stdout = s.into();
        self
    }

    /// Standard error (by default the caller's).
    pub fn stderr(mut self, s: impl Into<Io>) -> Self {
        self.stderr = s.into();
        self
    }

    /// Give the command `fd` as descriptor number `target` (3 and up).
    pub fn fd(mut self, fd: OwnedFd, target: RawFd) -> Self {
        self.fds.push((fd, target));
        self
    }

    /// The file system and the network.
    pub fn plan(mut self, mounts: MountPlan, network: NetworkPlan) -> Self {
        self.mounts = mounts;
        self.network = network;
        self
    }

    /// Who decides each program and connection.
    pub fn judge(mut self, judge: Arc<dyn RunJudge>) -> Self {
        self.judge = judge;
        self
    }

    /// Who answers an ask while the program waits; without one, an ask stops the command.
    pub fn approver(mut self, approver: Arc<ExecApprover>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Trace the command's programs (on by default). Off, the judge is never asked about
    /// programs and a filtered network is refused: the network filter starts from the
    /// supervisor. For measuring what supervision costs.
    pub fn supervise(mut self, on: bool) -> Self {
        self.supervise = on;
        self
    }

    /// Supervise by tracing every process of the command (`ptrace` with the fork and exec
    /// events), as is always done outside bubblewrap and where seccomp user notification is
    /// missing, instead of stopping only each `execve` (the default in bubblewrap where the
    /// kernel has it; see [`Sandbox::stops_only_execs`]). Both decide the same programs; the
    /// default costs a fraction of the time on commands that start many processes.
    pub fn trace_every_process(mut self, on: bool) -> Self {
        self.trace_every_process = on;
        self
    }

    /// Let processes open Unix-domain sockets (off by default).
    pub fn unix_sockets(mut self, on: bool) -> Self {
        self.unix_sockets = on;
        self
    }

    /// Where the network filter connects (by default, the system's resolver's addresses).
    pub fn resolver(mut self, resolver: Arc<Resolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Keep a sandbox started ahead for the next command like this one (off by default).
    ///
    /// Once this command has started, the next sandbox is made in the background with the
    /// same plan, network, environment, directory and shell, and waits. A later launch with
    /// `keep_warm` whose settings are all equal, and whose sandbox's mounts are still those
    /// bubblewrap made, runs in it and does not wait for bubblewrap; a launch with `keep_warm` and
    /// other settings kills it. [`Running::ahead`] tells which it was, and why.
    /// For `bash -c SCRIPT` lines only, supervised, with an explicit environment
    /// ([`env`](Self::env)) and a plan without stand-ins; other launches start as without it.
    /// What runs, what the supervisor sees and what the command can reach are the same as in
    /// a sandbox started for it.
    pub fn keep_warm(mut self, on: bool) -> Self {
        self.keep_warm = on;
        self
    }

    /// Start the command in `sandbox`.
    pub fn spawn(self, sandbox: &Sandbox) -> Result<Running, Error> {
        if !self.keep_warm {
            return self.start(Some(sandbox));
        }
        let Some(key) = warm::Key::of(&self, sandbox) else {
            let mut running = self.start(Some(sandbox))?;
            running.ahead = Ahead::NotEligible;
            return Ok(running);
        };
        let (mut running, ahead) = match sandbox.warm.take(&key) {
            Ok(warm) => match warm.hand_over(self) {
                Ok(running) => (running, Ahead::Used),
                Err(launch) => (launch.start(Some(sandbox))?, Ahead::Changed),
            },
            Err(why) => (self.start(Some(sandbox))?, why),
        };
        running.ahead = ahead;
        sandbox
            .warm
            .start_ahead(sandbox.clone(), key, running.shared.clone());
        Ok(running)
    }

    /// Start the command without the sandbox's file system and network (the host's, as they
    /// are), still supervised: every program it executes is decided by the judge, under the
    /// same seccomp filter. For a command the user let out of the sandbox, and where bubblewrap
    /// cannot run. The plan's mounts and network are ignored.
    pub fn spawn_unconfined(self) -> Result<Running, Error> {
        if !self.supervise {
            return Err(Error::Spawn(std::io::Error::other(
                "an unconfined launch is only for supervision",
            )));
        }
        self.start(None)
    }

    fn start(self, sandbox: Option<&Sandbox>) -> Result<Running, Error> {
        if !self.supervise && self.network == NetworkPlan::Filtered && sandbox.is_some() {
            return Err(Error::Spawn(std::io::Error::other(
                "a filtered network needs the supervisor",
            )));
        }
        let placeholders = match sandbox {
            Some(sb) => absent::Placeholders::make(&self.mounts.absent, &sb.runtime)
                .map_err(Error::Prepare)?,
            None => absent::Placeholders::default(),
        };
        // A sandbox started ahead notes them when a command takes it.
        let undone = match sandbox {
            Some(_) if self.handover.is_none() => absent::Undone::note(&self.mounts.undone),
            _ => absent::Undone::default(),
        };
        let handover = self.handover.clone();
        // Stopping each exec needs every process free to be attached to: where every program is
        // watched, no process of the command may trace another.
        // Deciding programs at their entry needs no process of the command to be able to
        // change another's memory (see `entry`).
        let watching = self.judge.watching(true);
        let sealed = self.supervise
            && !self.trace_every_process
            && sandbox.is_some_and(|sb| sb.notify)
            && watching == tool_core::sandbox::Watching::Everything;
        let at_entry = sealed && entry::available();
        let program = seccomp::program(
            self.unix_sockets || sandbox.is_none(),
            sandbox.is_some(),
            sealed,
        );
        const SECCOMP_FD: RawFd = 10;
        const INFO_FD: RawFd = 11;
        let mut fds = self.fds;
        let by_notify =
            self.supervise && !self.trace_every_process && sandbox.is_some_and(|sb| sb.notify);
        // Bubblewrap says on this pipe which process is the init of the sandbox's PID
        // namespace, to kill the namespace by and to see it gone. Tracing the whole tree, the
        // supervisor sees that process end itself (and reading the pipe before the launcher
        // is let go would wait forever).
        let mut info = None;
        // Under bubblewrap, the seccomp program goes in through a pipe it reads; unconfined,
        // the child installs it itself before it executes the command.
        // A fresh network namespace made ahead, when this process can make them; else
        // bubblewrap makes one.
        let prepared = sandbox.and_then(|_| netns::take_prepared());
        let (exec_path, args, own_filter): (OsString, Vec<OsString>, _) = match sandbox {
            Some(sb) => {
                let seccomp = match &program {
                    Some(prog) => Some(pipe_with(prog).map_err(Error::Prepare)?),
                    None => None,
                };
                if !self.supervise || by_notify {
                    let (read, write) = pipe().map_err(Error::Prepare)?;
                    fds.push((write, INFO_FD));
                    info = Some(read);
                }
                let mut args = bwrap::args(
                    &self.mounts,
                    &sb.stand_ins,
                    seccomp.as_ref().map(|_| SECCOMP_FD),
                    info.as_ref().map(|_| INFO_FD),
                    &self.cwd,
                    prepared.is_none(),
                    sealed,
                );
                args.push("--".into());
                args.push(self.program.clone());
                args.extend(self.args.iter().cloned());
                if let Some(s) = seccomp {
                    fds.push((s, SECCOMP_FD));
                }
                (sb.bwrap.clone().into_os_string(), args, None)
            }
            None => (self.program.clone(), self.args.clone(), program),
        };
        let program_name = exec_path.clone();
        let mut env = self.env;
        if self.network == NetworkPlan::Filtered && sandbox.is_some() {
            let proxy = format!("http://127.0.0.1:{}", netns::PROXY_PORT);
            let vars = env.get_or_insert_with(|| std::env::vars_os().collect());
            for name in [
                "http_proxy",
                "https_proxy",
                "HTTP_PROXY",
                "HTTPS_PROXY",
                "ALL_PROXY",
                "all_proxy",
            ] {
                vars.retain(|(k, _)| k != name);
                vars.push((name.into(), proxy.clone().into()));
            }
            for name in ["no_proxy", "NO_PROXY"] {
                vars.retain(|(k, _)| k != name);
                vars.push((name.into(), "localhost,127.0.0.1,::1".into()));
            }
        }
        let shared = Arc::new(Shared::default());
        let (tx, rx) = std::sync::mpsc::channel::<Result<libc::pid_t, std::io::Error>>();
        let confined = sandbox.is_some();
        let cwd = self.cwd.clone();
        let supervise = self.supervise;
        let (stdin, stdout, stderr) = (self.stdin, self.stdout, self.stderr);
        let judge = self.judge;
        if confined {
            *lock(&shared.settler) = Some(judge.clone());
        }
        let approver = self.approver;
        let network = self.network;
        let resolver = self.resolver;
        let thread_shared = shared.clone();
        // The prepared listener is only for a filtered network; a closed one is closed now.
        let (netns_file, mut ready_listener) = match prepared {
            Some(p) => (
                Some(p.ns),
                (self.network == NetworkPlan::Filtered).then_some(p.listener),
            ),
            None => (None, None),
        };
        let spawned = std::thread::Builder::new()
            .name("toolgate-sandbox".into())
            .spawn(move || {
                // However this thread ends, a sandbox started ahead is then over.
                let _over = warm::EndOnDrop(handover.clone());
                let mut placeholders = placeholders;
                // Stopping only each exec: the child sends the listener of its filter, and a
                // thread of its own takes it and answers the child's `execve` of bubblewrap
                // (this thread is suspended until that `execve`).
                let mut notify_child = None;
                let mut taker = None;
                if by_notify {
                    let made = notify::socket_pair().and_then(|(mine, theirs)| {
                        let handle = std::thread::Builder::new()
                            .name("toolgate-sandbox-listener".into())
                            .spawn(move || notify::take_listener(mine))?;
                        Ok((theirs, handle))
                    });
                    match (made, seccomp::notify_program()) {
                        (Ok((theirs, handle)), Some(filter)) => {
                            notify_child = Some((filter, theirs));
                            taker = Some(handle);
                        }
                        (Err(e), _) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                        (Ok(_), None) => {
                            let _ = tx.send(Err(std::io::Error::other(
                                "no exec filter for this architecture",
                            )));
                            return;
                        }
                    }
                }
                launchers().push(Arc::downgrade(&thread_shared));
                let spawned = spawn::spawn(spawn::Child {
                    program: exec_path,
                    argv: std::iter::once(OsString::from(&program_name))
                        .chain(args)
                        .collect(),
                    env: env.unwrap_or_else(|| std::env::vars_os().collect()),
                    cwd: (!confined).then(|| cwd.clone().into_os_string()),
                    stdio: [stdin, stdout, stderr],
                    fds,
                    trace: supervise && !by_notify,
                    filter: own_filter,
                    netns: netns_file,
                    notify: notify_child,
                    pid: Some(thread_shared.launcher_pid.clone()),
                });
                // The taker ends either way: with the listener once it answered the child's
                // `execve`, or with an error once the child's end of the socket is closed.
                let listener = taker.map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(std::io::Error::other("the listener's thread panicked"))
                    })
                });
                let pid = match spawned {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                thread_shared.set_launcher(pid);
                let listener = match listener {
                    None => None,
                    Some(Ok(l)) => Some(l),
                    Some(Err(e)) => {
                        // Our own child, which cannot be watched: killed and reaped.
                        thread_shared.track(pid);
                        thread_shared.kill_all();
                        let _ = supervise::wait_pid(pid);
                        let _ = tx.send(Err(e));
                        return;
                    }
                };

                if !supervise {
                    thread_shared.track(pid);
                    let _ = tx.send(Ok(pid));
                    if let Some(init) = info.and_then(|i| ns_init_from_info(i, pid)) {
                        thread_shared.set_ns_init(init);
                    }
                    let status = supervise::wait_pid(pid).map_or_else(
                        |_| {
                            use std::os::unix::process::ExitStatusExt as _;
                            ExitStatus::from_raw(libc::SIGKILL)
                        },
                        |raw| {
                            use std::os::unix::process::ExitStatusExt as _;
                            ExitStatus::from_raw(raw)
                        },
                    );
                    thread_shared.untrack(pid);
                    thread_shared.end_namespace(false);
                    placeholders.release();
                    let removed = undone.undo();
                    lock(&thread_shared.report).removed = removed;
                    thread_shared.settle_now();
                    thread_shared.finish(status);
                    return;
                }
                let started = if listener.is_some() {
                    Ok(())
                } else {
                    supervise::wait_pid(pid).and_then(|status| {
                        if status & 0xff == 0x7f {
                            supervise::start_tracing(pid)
                        } else {
                            Err(std::io::Error::other(format!(
                                "bwrap ended before it could be traced (status {status:#x})"
                            )))
                        }
                    })
                };
                if let Err(e) = started {
                    let _ = tx.send(Err(e));
                    return;
                }
                let _ = tx.send(Ok(pid));
                let line_start: Option<Box<supervise::LineStart>> = match network {
                    _ if !confined => None,
                    NetworkPlan::Blocked => None,
                    NetworkPlan::Filtered => {
                        let judge = judge.clone();
                        let shared = thread_shared.clone();
                        let resolver: Arc<Resolver> =
                            resolver.unwrap_or_else(|| Arc::new(proxy::system_resolve));
                        let ready = ready_listener.take();
                        Some(Box::new(move |line_pid| {
                            // The prepared namespace's listener, or one made in the
                            // namespace bubblewrap made.
                            let listener = match ready {
                                Some(l) => l,
                                None => netns::listener_in(line_pid, netns::PROXY_PORT)?,
                            };
                            proxy::serve(listener, judge, shared, resolver);
                            Ok(())
                        }))
                    }
                };
                let supervisor = supervise::Supervisor {
                    shared: thread_shared.clone(),
                    judge,
                    approver,
                    on_line_start: line_start,
                    confined,
                    handover: handover.clone(),
                    expect: None,
                    at_entry: at_entry.then(entry::Entries::default),
                };
                let status = match listener {
                    Some(l) => {
                        // Read as it comes, beside the notifications: what bubblewrap writes
                        // there may come only after an `execve` that waits for an answer (a
                        // launcher that is a script executing bubblewrap).
                        let status = supervisor.run_notify(pid, &l, info);
                        // Programs held at their exec stops as the command was killed are
                        // this thread's tracees: reaped while the namespace empties. Those
                        // stopped at their `execve`'s entry wait unanswered until they die:
                        // the listener is closed only then (closing it would fail their
                        // calls, and the process that called could run on for a moment).
                        thread_shared.end_namespace(true);
                        drop(l);
                        status
                    }
                    None => supervisor.run(pid, confined),
                };
                placeholders.release();
                let removed = match &handover {
                    Some(h) => h.undone().undo(),
                    None => undone.undo(),
                };
                lock(&thread_shared.report).removed = removed;
                thread_shared.settle_now();
                thread_shared.finish(status);
            });
        if let Err(e) = spawned {
            return Err(Error::Spawn(e));
        }
        let pid = rx
            .recv()
            .map_err(|_| Error::Spawn(std::io::Error::other("the supervisor ended at once")))?
            .map_err(Error::Spawn)?;
        Ok(Running {
            shared,
            pid,
            armed: true,
            ahead: Ahead::NotAsked,
        })
    }
}

/// A pipe whose read end holds `bytes` and is at its end of input.
fn pipe_with(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    use std::io::Write as _;
    let (read, write) = pipe()?;
    let mut w = std::fs::File::from(write);
    w.write_all(bytes)?;
    drop(w);
    Ok(read)
}

/// A pipe, both ends closed on exec (the child's end is moved to its number by the spawn).
#[allow(unsafe_code)]
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd as _;
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into the array, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The init of the sandbox's PID namespace, from what bubblewrap (`launcher`) wrote to its
/// `--info-fd` (`{"child-pid": N, ...}`): a pidfd, once it is sure to be that process.
fn ns_init_from_info(info: OwnedFd, launcher: libc::pid_t) -> Option<OwnedFd> {
    use std::io::Read as _;
    let mut text = String::new();
    // Bubblewrap writes it and closes its end before the sandbox's first process runs; the
    // end of input comes then (or at once, when bubblewrap failed before).
    std::fs::File::from(info).read_to_string(&mut text).ok()?;
    text.push('\n');
    ns_init_from_text(&text, launcher)
}

/// As [`ns_init_from_info`], from what was read of it so far: `None` until the pid is there
/// whole (digits, then something else).
pub(crate) fn ns_init_from_text(text: &str, launcher: libc::pid_t) -> Option<OwnedFd> {
    let after = &text[text.find("\"child-pid\"")? + "\"child-pid\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let digits = after.find(|c: char| !c.is_ascii_digit())?;
    let pid: libc::pid_t = after[..digits].parse().ok()?;
    let pidfd = notify::pidfd_open(pid).ok()?;
    // Held by a pidfd, the process cannot change; it is the one meant if it is bubblewrap's
    // child still, or (bubblewrap having ended) the init of a PID namespace below ours.
    let nspid_is_init = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd()))
        .ok()
        .and_then(|t| {
            let line = t.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
            let ids: Vec<&str> = line.split_whitespace().collect();
            Some(ids.len() >= 2 && ids.last() == Some(&"1"))
        })
        .unwrap_or(false);
    (notify::parent_of(pid) == Some(launcher) || nspid_is_init).then_some(pidfd)
}

/// A running sandboxed command.
///
/// Dropping it while the command runs kills the command (every process in it), unless it was
/// [detached](Self::detach).
pub struct Running {
    shared: Arc<Shared>,
    pid: libc::pid_t,
    armed: bool,
    ahead: Ahead,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("pid", &self.pid)
            .field("finished", &self.shared.is_finished())
            .finish_non_exhaustive()
    }
}

impl Running {
    /// bubblewrap's pid (outside the sandbox).
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Whether the command ran in a sandbox started ahead (see [`Launch::keep_warm`]).
    pub fn started_ahead(&self) -> bool {
        self.ahead == Ahead::Used
    }

    /// Whether the command ran in a sandbox started ahead, and when not, why not.
    pub fn ahead(&self) -> Ahead {
        self.ahead
    }

    /// Wait for the command to end: the status of its shell, or `SIGKILL` when it was stopped.
    pub async fn wait(&self) -> ExitStatus {
        loop {
            let notified = self.shared.notify.notified();
            if let Some(s) = *lock(&self.shared.status) {
                return s;
            }
            notified.await;
        }
    }

    /// Wait for the command to end, blocking the thread.
    pub fn wait_blocking(&self) -> ExitStatus {
        let mut status = lock(&self.shared.status);
        loop {
            if let Some(s) = *status {
                return s;
            }
            status = self
                .shared
                .cond
                .wait(status)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The status, if the command has ended.
    pub fn try_wait(&self) -> Option<ExitStatus> {
        *lock(&self.shared.status)
    }

    /// Kill every process of the command.
    pub fn kill(&self) {
        self.shared.kill_all();
    }

    /// Kill the command and wait for it to end.
    pub async fn kill_and_reap(&mut self) {
        self.kill();
        let _ = self.wait().await;
        self.armed = false;
    }

    /// Do not kill the command when this handle is dropped.
    pub fn detach(&mut self) {
        self.armed = false;
    }

    /// Let the command run until it ends or `limit` passes, then kill it; `then` runs when it
    /// has ended. A thread of its own watches, independent of any async runtime.
    pub fn limit_in_background(
        mut self,
        limit: Duration,
        thread_name: String,
        then: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.detach();
        let shared = self.shared.clone();
        background().push(Arc::downgrade(&shared));
        std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || {
                let deadline = std::time::Instant::now() + limit;
                loop {
                    let status = lock(&shared.status);
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    let (status, _) = shared
                        .cond
                        .wait_timeout_while(status, left.min(SETTLE_EVERY), |s| s.is_none())
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let ended = status.is_some();
                    drop(status);
                    if ended {
                        break;
                    }
                    if left <= SETTLE_EVERY {
                        shared.kill_all();
                        break;
                    }
                    // A command running on: what it left so far is put right now, not only
                    // when it ends.
                    shared.settle_now();
                }
                then();
            })
            .map(drop)
    }

    /// What the supervisor and the network filter stopped or granted so far.
    pub fn report(&self) -> Report {
        lock(&self.shared.report).clone()
    }
}

/// How often what a background command left is put right while it runs.
const SETTLE_EVERY: Duration = Duration::from_secs(1);

/// How long a command's PID namespace may take to empty once its shell has ended (killed
/// processes end at once; one stuck in the kernel holds the namespace's init meanwhile).
const NAMESPACE_END: Duration = Duration::from_secs(10);

/// The commands of this process whose bubblewrap may still be running; the first call
/// arranges for their process groups to be killed when the process exits. Bubblewrap dies with
/// the thread that started it, but a sandbox it was still setting up would not: the init it
/// has just made in the new PID namespace waits for it to say go on, and has not yet asked to
/// die with it.
#[allow(unsafe_code)]
fn launchers() -> std::sync::MutexGuard<'static, Vec<std::sync::Weak<Shared>>> {
    static LAUNCHERS: OnceLock<Mutex<Vec<std::sync::Weak<Shared>>>> = OnceLock::new();
    static OWNER: OnceLock<u32> = OnceLock::new();
    /// Run by `exit`: in this process only (not in a child that forked without executing).
    extern "C" fn at_exit() {
        if OWNER.get() != Some(&std::process::id()) {
            return;
        }
        let Some(list) = LAUNCHERS.get() else { return };
        // Other threads still run while the process exits: never wait for one of them.
        let Ok(list) = list.try_lock() else { return };
        for shared in list.iter().filter_map(std::sync::Weak::upgrade) {
            shared.kill_launcher_at_exit();
            // Never the last holder here: what dropping it runs (a judge's code) is not for a
            // process on its way out.
            std::mem::forget(shared);
        }
    }
    let list = LAUNCHERS.get_or_init(|| {
        let _ = OWNER.set(std::process::id());
        // SAFETY: atexit(3) registers a function that lives as long as the program.
        unsafe {
            libc::atexit(at_exit);
        }
        Mutex::default()
    });
    let mut list = lock(list);
    list.retain(|w| w.upgrade().is_some_and(|s| !s.is_finished()));
    list
}

/// The background commands started in this process.
fn background() -> std::sync::MutexGuard<'static, Vec<std::sync::Weak<Shared>>> {
    static BACKGROUND: OnceLock<Mutex<Vec<std::sync::Weak<Shared>>>> = OnceLock::new();
    let mut list = lock(BACKGROUND.get_or_init(Mutex::default));
    list.retain(|w| w.upgrade().is_some_and(|s| !s.is_finished()));
    list
}

/// Stop every background command of this process still running and wait, up to `wait`, for
/// each to have ended and what it left to have been put right: for a host about to exit (its
/// sandboxes would die with it, and what they left would stay). Returns how many were
/// stopped.
pub fn stop_background(wait: Duration) -> usize {
    // The sandboxes started ahead go first: nothing of theirs is to be waited for.
    if let Some(known) = DETECTED.get() {
        for (_, found) in lock(known).iter() {
            if let Ok(sandbox) = found {
                sandbox.discard_ahead();
            }
        }
    }
    let running: Vec<Arc<Shared>> = background()
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .collect();
    for s in &running {
        s.kill_all();
    }
    let deadline = std::time::Instant::now() + wait;
    for s in &running {
        let status = lock(&s.status);
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        drop(
            s.cond
                .wait_timeout_while(status, left, |st| st.is_none())
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }
    running.len()
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.armed && !self.shared.is_finished() {
            self.shared.kill_all();
        }
    }
}
