//! A sandbox started ahead, for the next command like the last one.
//!
//! Most of what a sandboxed call costs is bubblewrap making its namespaces and mounts; the
//! command itself (`bash -c true`) is a fraction of it. So once a command has started, the
//! next sandbox is started in the background, with the same plan, environment, directory and
//! shell: bubblewrap sets everything up and executes a small bash script of ours (the
//! trampoline), which waits on a pipe. When the next command fits (every setting the sandbox
//! was made from is equal, and its mounts are still those bubblewrap made), it takes that
//! sandbox: the judge, the approver and the command's streams are handed over, the script is
//! written, and the trampoline executes `SHELL -c SCRIPT`, exactly the program a fresh
//! sandbox would have executed. Otherwise the sandbox started ahead is killed and a fresh one
//! started, as without it.
//!
//! What keeps it sound:
//! - The supervisor watches the sandbox from its start. The trampoline's own `execve` of the
//!   shell is the only program let through before the command's; its second `execve` is the
//!   command's shell, checked to be exactly that program with exactly those arguments (the
//!   executed file and the words), and it is the line's shell from then on, as in a fresh
//!   sandbox. Any other `execve` before it stops the command.
//! - The command's streams go in at that second `execve`, by the seccomp listener
//!   (`SECCOMP_IOCTL_NOTIF_ADDFD`), in place of the trampoline's `/dev/null`s.
//! - The mounts a fresh sandbox would make are those of the plan computed for the command, at
//!   its start; the sandbox started ahead is used only when that plan equals the one it was
//!   made with, and its mount table (`/proc/PID/mountinfo`) is still the one it had when it
//!   was ready. A protected or hidden file the host replaced since (a rename over it, a
//!   removal) takes its mount away in the sandbox, and a mount made on the host since comes
//!   in: either changes the table, and the sandbox is not used. Nor is it when its working
//!   directory is no longer the directory at that path.
//! - Names that must not be left behind are noted when the command takes the sandbox, as a
//!   fresh sandbox notes them when it starts.
//! - Plans with stand-ins (protected names held by an empty file while a command runs) are not
//!   started ahead: the stand-in would stand on the host between commands.

use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tool_core::Decision;
use tool_core::sandbox::{ExecRequest, MountPlan, NetworkPlan, RunJudge, Settled, Watching};

use crate::{ExecApprover, Io, Launch, Running, Sandbox, absent, lock};

/// Where the trampoline waits for the word `go`.
pub(crate) const GO_FD: RawFd = 60;
/// Where the trampoline reads the command's script from (a memory file).
pub(crate) const SCRIPT_FD: RawFd = 61;

/// The trampoline: waits for `go`, reads the script (`mapfile` reads a seekable file in
/// blocks), closes both descriptors and executes the shell (`$0`) with the script.
pub(crate) const TRAMPOLINE: &str = "IFS= read -r -d '' -u 60 g && [ \"$g\" = go ] && mapfile -d '' -u 61 s && exec 60<&- 61<&- && exec \"$0\" -c \"${s[0]}\"; exit 125";

/// Whether a command ran in a sandbox started ahead, and when not, why not (see
/// [`Launch::keep_warm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ahead {
    /// It ran in the sandbox started ahead for it.
    Used,
    /// Its launch did not ask for one ([`Launch::keep_warm`] off).
    NotAsked,
    /// Its launch cannot run in one: not `bash -c SCRIPT`, not supervised, no explicit
    /// environment, a plan with stand-ins, or a kernel without what the handover needs.
    NotEligible,
    /// None was started ahead, or being started, for it.
    NoneStarted,
    /// The sandbox started ahead was made with other settings (it was killed).
    OtherSettings,
    /// The sandbox being started ahead for it was not ready in time.
    NotReady,
    /// The sandbox started ahead for it could no longer take it: it had ended, or its mounts
    /// or its working directory changed since it was ready (it was killed).
    Changed,
}

/// How long a command waits for the sandbox being started ahead for it before it starts its
/// own.
const READY_WAIT: Duration = Duration::from_millis(150);

/// The judge of a sandbox started ahead: the command's own, once it takes the sandbox. Until
/// then nothing may run, and nothing does (the trampoline executes no program of its own).
pub(crate) struct Deferred {
    watching: Watching,
    inner: OnceLock<Arc<dyn RunJudge>>,
}

impl Deferred {
    fn not_yet() -> Decision {
        Decision::deny(
            "A program ran in a sandbox started ahead before any command took it.",
            tool_core::DecisionReason::Check {
                name: "a sandbox started ahead".into(),
            },
        )
    }
}

impl RunJudge for Deferred {
    fn exec(&self, request: &ExecRequest<'_>) -> Decision {
        self.inner
            .get()
            .map_or_else(Self::not_yet, |j| j.exec(request))
    }
    fn connect(&self, host: &str, port: u16) -> Decision {
        self.inner
            .get()
            .map_or_else(Self::not_yet, |j| j.connect(host, port))
    }
    fn settle(&self) -> Vec<Settled> {
        self.inner.get().map(|j| j.settle()).unwrap_or_default()
    }
    fn watching(&self, _confined: bool) -> Watching {
        self.watching
    }
}

/// What the command hands the sandbox when it takes it.
pub(crate) struct Taken {
    /// Its streams and further descriptors, by the numbers they get.
    pub(crate) fds: Vec<(OwnedFd, RawFd)>,
    pub(crate) approver: Option<Arc<ExecApprover>>,
    /// The program the trampoline must execute: the shell and its arguments.
    pub(crate) argv: Vec<OsString>,
}

#[derive(Default)]
struct HandState {
    /// The trampoline (its pid outside), once bubblewrap executed it.
    trampoline: Option<libc::pid_t>,
    /// Its mount table then.
    mounts: Option<Vec<u8>>,
    /// What the command handed over, until the supervisor takes it.
    taken: Option<Taken>,
    /// What must not be left behind, noted when the command took the sandbox.
    undone: Option<absent::Undone>,
    /// The sandbox ended, or failed to start.
    over: bool,
}

/// Between the supervisor of a sandbox started ahead and the command that takes it.
#[derive(Default)]
pub(crate) struct Handover {
    state: Mutex<HandState>,
    cond: Condvar,
}

impl Handover {
    /// The trampoline is about to be executed by bubblewrap (`pid`): the sandbox's mounts are
    /// all made. Called by the supervisor.
    pub(crate) fn ready(&self, pid: libc::pid_t) {
        let mounts = mount_table(pid);
        let mut s = lock(&self.state);
        s.trampoline = Some(pid);
        s.over |= mounts.is_none();
        s.mounts = mounts;
        self.cond.notify_all();
    }

    /// The trampoline's pid, once ready.
    pub(crate) fn trampoline(&self) -> Option<libc::pid_t> {
        lock(&self.state).trampoline
    }

    /// What the command handed over (once: the supervisor takes it).
    pub(crate) fn take(&self) -> Option<Taken> {
        lock(&self.state).taken.take()
    }

    /// What must not be left behind, for the end of the command.
    pub(crate) fn undone(&self) -> absent::Undone {
        lock(&self.state).undone.take().unwrap_or_default()
    }

    /// The sandbox ended (or never started).
    pub(crate) fn end(&self) {
        lock(&self.state).over = true;
        self.cond.notify_all();
    }

    /// Wait until the sandbox is ready or over, at most until `deadline`; whether it is ready.
    fn wait_ready(&self, deadline: Instant) -> bool {
        let mut s = lock(&self.state);
        loop {
            if s.over {
                return false;
            }
            if s.trampoline.is_some() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s = self
                .cond
                .wait_timeout(s, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

/// Ends the handover (if any) when dropped: the supervisor's thread holds one.
pub(crate) struct EndOnDrop(pub(crate) Option<Arc<Handover>>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(h) = &self.0 {
            h.end();
        }
    }
}

/// Whether `pid`'s working directory is still the directory at `cwd` in its root (not one
/// removed, or moved away, since it started there).
fn same_directory(pid: libc::pid_t, cwd: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let in_root = std::path::PathBuf::from(format!("/proc/{pid}/root"))
        .join(cwd.strip_prefix("/").unwrap_or(cwd));
    match (
        std::fs::metadata(format!("/proc/{pid}/cwd")),
        std::fs::metadata(in_root),
    ) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The mount table of `pid`'s mount namespace.
fn mount_table(pid: libc::pid_t) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/mountinfo")).ok()
}

/// What a sandbox started ahead was made from; a command takes it only when its own are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    program: OsString,
    cwd: std::path::PathBuf,
    env: Vec<(OsString, OsString)>,
    mounts: MountPlan,
    network: NetworkPlan,
    unix_sockets: bool,
    watching: Watching,
    /// The numbers of the command's further descriptors.
    fd_targets: Vec<RawFd>,
}

/// Environment variables that change what bash does as it starts (the trampoline is a bash
/// too, and must do nothing but wait and execute).
fn startup_variable(name: &[u8]) -> bool {
    matches!(
        name,
        b"BASH_ENV"
            | b"ENV"
            | b"SHELLOPTS"
            | b"BASHOPTS"
            | b"POSIXLY_CORRECT"
            | b"BASH_XTRACEFD"
            | b"TMOUT"
    ) || name.starts_with(b"BASH_FUNC_")
}

fn is_name(name: &[u8]) -> bool {
    !name.is_empty()
        && !name[0].is_ascii_digit()
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

impl Key {
    /// The key of `launch`, when a sandbox started ahead could run it: a supervised bash line
    /// (`bash -c SCRIPT`) with a known environment of plain names, no stand-ins, and the
    /// system's resolver.
    pub(crate) fn of(launch: &Launch, sandbox: &Sandbox) -> Option<Key> {
        use std::os::unix::ffi::OsStrExt as _;
        let bash = std::path::Path::new(&launch.program)
            .file_name()
            .is_some_and(|n| n == "bash");
        let env = launch.env.as_ref()?;
        let fits = sandbox.notify
            && crate::notify::can_add_fds()
            && launch.supervise
            && !launch.trace_every_process
            && launch.resolver.is_none()
            && launch.mounts.absent.is_empty()
            && bash
            && std::path::Path::new(&launch.program).is_absolute()
            && launch.args.len() == 2
            && launch.args[0] == "-c"
            && !launch.args[1].as_bytes().contains(&0)
            && env.iter().all(|(k, _)| {
                let k = k.as_bytes();
                is_name(k) && !startup_variable(k)
            })
            && launch.fds.iter().all(|(_, t)| *t > 2 && *t < GO_FD);
        fits.then(|| Key {
            program: launch.program.clone(),
            cwd: launch.cwd.clone(),
            env: env.clone(),
            mounts: launch.mounts.clone(),
            network: launch.network,
            unix_sockets: launch.unix_sockets,
            watching: launch.judge.watching(true),
            fd_targets: launch.fds.iter().map(|(_, t)| *t).collect(),
        })
    }
}

/// A sandbox started ahead, waiting in its trampoline.
pub(crate) struct Warm {
    key: Key,
    running: Running,
    handover: Arc<Handover>,
    judge: Arc<Deferred>,
    go: std::fs::File,
    script: std::fs::File,
}

/// The sandbox started ahead, or being started, for the next command.
#[derive(Default)]
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    cond: Condvar,
}

#[derive(Default)]
struct SlotState {
    /// Being started for this key (the latest start asked for; an earlier one still on its
    /// way is not kept).
    starting: Option<(Key, u64)>,
    ready: Option<Warm>,
    /// Numbers the starts.
    starts: u64,
    /// Counts [`Slot::clear`]s: a sandbox whose start began before the last one is not kept.
    generation: u64,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = lock(&self.state);
        f.debug_struct("Slot")
            .field("starting", &s.starting.is_some())
            .field("ready", &s.ready.is_some())
            .finish()
    }
}

impl Slot {
    /// The sandbox started ahead for `key`, waiting a little for one being started for it. A
    /// sandbox started for another key is killed.
    pub(crate) fn take(&self, key: &Key) -> Result<Warm, Ahead> {
        let deadline = Instant::now() + READY_WAIT;
        let mut s = lock(&self.state);
        while s.ready.is_none() && s.starting.as_ref().is_some_and(|(k, _)| k == key) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            s = self
                .cond
                .wait_timeout(s, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        let Some(warm) = s.ready.take() else {
            let waited = s.starting.as_ref().is_some_and(|(k, _)| k == key);
            return Err(if waited {
                Ahead::NotReady
            } else {
                Ahead::NoneStarted
            });
        };
        drop(s);
        if warm.key == *key {
            Ok(warm)
        } else {
            // Dropped: killed.
            Err(Ahead::OtherSettings)
        }
    }

    /// Start a sandbox ahead for commands of `key` (in the background), once `after` has
    /// ended or a moment has passed; unless one is being started for the same key.
    pub(crate) fn start_ahead(
        self: &Arc<Self>,
        sandbox: Sandbox,
        key: Key,
        after: Arc<crate::Shared>,
    ) {
        let (token, generation) = {
            let mut s = lock(&self.state);
            if s.starting.as_ref().is_some_and(|(k, _)| *k == key) {
                return;
            }
            s.starts += 1;
            let token = s.starts;
            s.starting = Some((key.clone(), token));
            (token, s.generation)
        };
        let slot = self.clone();
        let started = std::thread::Builder::new()
            .name("toolgate-sandbox-ahead".into())
            .spawn(move || {
                // Not beside the command that just started, if it ends soon.
                {
                    let status = lock(&after.status);
                    drop(
                        after
                            .cond
                            .wait_timeout_while(status, Duration::from_millis(50), |st| {
                                st.is_none()
                            })
                            .unwrap_or_else(std::sync::PoisonError::into_inner),
                    );
                }
                let warm = key.start(&sandbox);
                let mut s = lock(&slot.state);
                let latest = s.starting.as_ref().is_some_and(|(_, t)| *t == token);
                if latest {
                    s.starting = None;
                }
                if let Ok(w) = warm
                    && latest
                    && s.generation == generation
                {
                    // The one it replaces (for another key) is killed as it drops.
                    s.ready = Some(w);
                }
                slot.cond.notify_all();
            });
        if started.is_err() {
            let mut s = lock(&self.state);
            if s.starting.as_ref().is_some_and(|(_, t)| *t == token) {
                s.starting = None;
            }
        }
    }

    /// Kill the sandbox started ahead, if any.
    pub(crate) fn clear(&self) {
        let warm = {
            let mut s = lock(&self.state);
            s.generation += 1;
            s.ready.take()
        };
        drop(warm);
    }
}

impl Key {
    /// Start a sandbox ahead for commands of this key.
    fn start(self, sandbox: &Sandbox) -> Result<Warm, crate::Error> {
        let (go_read, go) = crate::pipe().map_err(crate::Error::Prepare)?;
        let script = memfd().map_err(crate::Error::Prepare)?;
        let script_read = std::fs::File::open(format!("/proc/self/fd/{}", script.as_raw_fd()))
            .map_err(crate::Error::Prepare)?;
        let handover = Arc::new(Handover::default());
        let judge = Arc::new(Deferred {
            watching: self.watching,
            inner: OnceLock::new(),
        });
        let program = self.program.clone();
        let mut launch = Launch::new(
            self.program.clone(),
            [OsString::from("-c"), OsString::from(TRAMPOLINE), program],
        )
        .cwd(self.cwd.clone())
        .env(self.env.clone())
        .stdin(Io::Null)
        .stdout(Io::Null)
        .stderr(Io::Null)
        .fd(go_read, GO_FD)
        .fd(script_read.into(), SCRIPT_FD)
        .plan(self.mounts.clone(), self.network)
        .judge(judge.clone())
        .unix_sockets(self.unix_sockets);
        launch.handover = Some(handover.clone());
        let running = launch.start(Some(sandbox))?;
        if !handover.wait_ready(Instant::now() + Duration::from_secs(10)) {
            return Err(crate::Error::Spawn(std::io::Error::other(
                "the sandbox started ahead did not get ready",
            )));
        }
        Ok(Warm {
            key: self,
            running,
            handover,
            judge,
            go: go.into(),
            script,
        })
    }
}

/// A memory file, close-on-exec (the trampoline gets a descriptor of its own for it).
#[allow(unsafe_code)]
fn memfd() -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create takes a NUL-terminated name and flags and returns a new descriptor,
    // then ours.
    let fd = unsafe { libc::memfd_create(c"toolgate-line".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: new and owned by nobody else.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

fn stream_fd(io: Io, number: RawFd) -> std::io::Result<OwnedFd> {
    match io {
        Io::Inherit => crate::spawn::dup_from(number, 3),
        Io::Null => Ok(std::fs::File::options()
            .read(number == 0)
            .write(number != 0)
            .open("/dev/null")?
            .into()),
        Io::Fd(fd) => Ok(fd),
    }
}

impl Warm {
    /// Run `launch` in this sandbox; the launch back when the sandbox cannot take it (it
    /// ended, or its mounts changed), and this sandbox is then killed.
    pub(crate) fn hand_over(self, mut launch: Launch) -> Result<Running, Box<Launch>> {
        use std::io::Write as _;
        use std::os::unix::ffi::OsStrExt as _;
        use std::os::unix::fs::FileExt as _;
        let Some(pid) = self.handover.trampoline() else {
            return Err(Box::new(launch));
        };
        let unchanged = {
            let s = lock(&self.handover.state);
            !s.over && s.mounts.is_some() && s.mounts == mount_table(pid)
        };
        if !unchanged || self.running.shared.is_finished() || !same_directory(pid, &launch.cwd) {
            return Err(Box::new(launch));
        }
        // The script first: nothing reads it before `go`.
        let script = launch.args[1].as_bytes();
        if self.script.write_all_at(script, 0).is_err()
            || self.script.set_len(script.len() as u64).is_err()
        {
            return Err(Box::new(launch));
        }
        let streams = [
            std::mem::replace(&mut launch.stdin, Io::Inherit),
            std::mem::replace(&mut launch.stdout, Io::Inherit),
            std::mem::replace(&mut launch.stderr, Io::Inherit),
        ];
        let mut fds = Vec::with_capacity(3 + launch.fds.len());
        for (n, io) in streams.into_iter().enumerate() {
            match stream_fd(io, n as RawFd) {
                Ok(fd) => fds.push((fd, n as RawFd)),
                Err(_) => return Err(Box::new(launch)),
            }
        }
        fds.append(&mut launch.fds);
        let argv: Vec<OsString> = std::iter::once(launch.program.clone())
            .chain(launch.args.iter().cloned())
            .collect();
        let _ = self.judge.inner.set(launch.judge.clone());
        {
            let mut s = lock(&self.handover.state);
            s.taken = Some(Taken {
                fds,
                approver: launch.approver.clone(),
                argv,
            });
            s.undone = Some(absent::Undone::note(&launch.mounts.undone));
        }
        let mut go = &self.go;
        if go.write_all(b"go\0").is_err() {
            // The trampoline is gone; what was handed over comes back.
            let taken = self.handover.take();
            if let Some(t) = taken {
                let mut streams = Vec::new();
                for (fd, n) in t.fds {
                    if n <= 2 {
                        streams.push(Io::Fd(fd));
                    } else {
                        launch.fds.push((fd, n));
                    }
                }
                let mut it = streams.into_iter();
                if let (Some(a), Some(b), Some(c)) = (it.next(), it.next(), it.next()) {
                    launch.stdin = a;
                    launch.stdout = b;
                    launch.stderr = c;
                }
            }
            return Err(Box::new(launch));
        }
        Ok(self.running)
    }
}
