//! Process groups (feature `process`): a command spawned as the leader of a process group of
//! its own, so that everything it starts — pipelines, `&` jobs, their children — is stopped at
//! once with `SIGKILL` on a timeout, on cancellation, or when the owner drops it mid-run.
//!
//! This is the one place toolgate's crates start and kill such groups (Bash in
//! `builtin-tools`, command hooks in `tool-hooks`). It uses only `std`, `tokio` and `libc`, and
//! is Unix-only, like the process groups it manages. Its tests run with
//! `cargo test -p tool-core --features process` (or in any run that also builds
//! `builtin-tools` or `tool-hooks`, which turn the feature on).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use std::time::Duration;
//! use tool_core::CancellationToken;
//! use tool_core::process::{ProcessGroup, Stopped, within};
//!
//! let mut cmd = tokio::process::Command::new("sh");
//! cmd.arg("-c").arg("sleep 30 & sleep 30");
//! let mut group = ProcessGroup::spawn(&mut cmd)?;
//! let cancel = CancellationToken::new();
//! let ended = within(Duration::from_millis(50), &cancel, group.wait()).await;
//! assert!(matches!(ended, Err(Stopped::TimedOut)));
//! // Both sleeps go, not just the shell.
//! group.kill_and_reap().await;
//! # Ok(())
//! # }
//! ```

use std::io::Read;
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::cancel::CancellationToken;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// A child process leading a process group of its own.
///
/// Dropping it while the leader has not been reaped kills the whole group (the pipeline drops
/// a call's future when the call is cancelled), unless it was [detached](Self::detach). Once
/// the leader has been waited for, dropping it leaves whatever the command started in the
/// background alone, as a terminal would; [`kill`](Self::kill) still stops them.
#[derive(Debug)]
pub struct ProcessGroup {
    child: Child,
    /// The group's id (the leader's pid); `None` when the child had no usable pid.
    pgid: Option<libc::pid_t>,
    /// Kill the group on drop while the leader runs.
    armed: bool,
}

/// Why [`within`] stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The timeout passed first.
    TimedOut,
    /// The cancellation token fired first.
    Cancelled,
}

impl ProcessGroup {
    /// Spawn `cmd` as the leader of a new process group. The command's own `kill_on_drop` is
    /// turned off: the group, not just the leader, is killed on drop.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Self> {
        cmd.process_group(0).kill_on_drop(false);
        let child = cmd.spawn()?;
        let pgid = child
            .id()
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|p| *p > 1);
        Ok(Self {
            child,
            pgid,
            armed: true,
        })
    }

    /// The leader's pid, which is also the group's id; `None` once the leader has been reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Take the leader's stdin (piped only if the command asked for it).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Take the leader's stdout (piped only if the command asked for it).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Take the leader's stderr (piped only if the command asked for it).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Wait for the leader to exit (its background children may live on).
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Has the leader exited? Does not block; usable outside a runtime.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Send `SIGKILL` to every process of the group.
    pub fn kill(&self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }

    /// Kill the group and reap its leader. Dropping the group afterwards kills nothing more.
    pub async fn kill_and_reap(&mut self) {
        self.kill();
        let _ = self.child.wait().await;
        self.armed = false;
    }

    /// Do not kill the group on drop: the caller hands it over (to a supervisor, or to the
    /// background). [`kill`](Self::kill) still works.
    pub fn detach(&mut self) {
        self.armed = false;
    }

    /// Hand the group to a supervising thread that lets it run until its leader exits or
    /// `limit` passes, then kills the group; `then` runs when the supervision ends. The thread
    /// is independent of any async runtime. If the thread cannot be started, the group runs
    /// on without a limit and the error is returned.
    pub fn limit_in_background(
        mut self,
        limit: Duration,
        thread_name: String,
        then: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.detach();
        std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || {
                let deadline = Instant::now() + limit;
                loop {
                    match self.child.try_wait() {
                        Ok(Some(_)) | Err(_) => break,
                        Ok(None) if Instant::now() >= deadline => {
                            self.kill();
                            break;
                        }
                        Ok(None) => std::thread::sleep(Duration::from_millis(100)),
                    }
                }
                then();
            })
            .map(drop)
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // Only while the leader is unreaped: its pid, the group's id, cannot have been reused.
        if self.armed && self.child.id().is_some() {
            self.kill();
        }
    }
}

/// Run `work` until it finishes, `timeout` passes or `cancel` fires, whichever comes first.
/// Nothing is killed here: on [`Stopped`] the caller decides (typically
/// [`ProcessGroup::kill_and_reap`]).
pub async fn within<F: Future>(
    timeout: Duration,
    cancel: &CancellationToken,
    work: F,
) -> Result<F::Output, Stopped> {
    tokio::select! {
        r = tokio::time::timeout(timeout, work) => r.map_err(|_| Stopped::TimedOut),
        () = cancel.cancelled() => Err(Stopped::Cancelled),
    }
}

/// The exit code a shell would report: the code, or 128 + the signal that killed the process.
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| {
        128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
    })
}

/// Read `stream` to its end, keeping the first `max` bytes and dropping the rest unbuffered
/// (so a writer is never blocked on a full pipe). A read error ends the reading.
pub async fn read_capped(stream: Option<impl AsyncRead + Unpin>, max: usize) -> Vec<u8> {
    let Some(mut s) = stream else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}

/// The first `max` bytes of the file at `path` as text (invalid UTF-8 replaced); empty when it
/// cannot be read.
pub fn read_file_capped(path: &Path, max: u64) -> String {
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(max).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Kill every process in group `pgid`.
#[allow(unsafe_code)]
fn kill_group(pgid: libc::pid_t) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg is a plain system call on a process group that ProcessGroup::spawn
    // created (the child leads it); it touches no memory of ours.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    /// Is `pid` running? Asked with `kill -0`; a killed process not yet reaped answers that
    /// too, so its state in /proc must not be zombie.
    fn alive(pid: u32) -> bool {
        let signalable = std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|st| st == "Z" || st == "X")
        });
        signalable && !zombie
    }

    fn gone_soon(pid: u32) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// A shell that prints its background child's pid, then sleeps.
    fn with_grandchild() -> Command {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("sleep 30 & echo $!; sleep 30")
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        cmd
    }

    async fn printed_pid(group: &mut ProcessGroup) -> u32 {
        use tokio::io::AsyncBufReadExt;
        let out = group.take_stdout().unwrap_or_else(|| panic!("stdout"));
        let mut line = String::new();
        tokio::io::BufReader::new(out)
            .read_line(&mut line)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        line.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    #[tokio::test]
    async fn a_timeout_then_kill_and_reap_takes_the_grandchild_too() {
        let mut group =
            ProcessGroup::spawn(&mut with_grandchild()).unwrap_or_else(|e| panic!("{e}"));
        let grandchild = printed_pid(&mut group).await;
        assert!(alive(grandchild));
        let ended = within(
            Duration::from_millis(100),
            &CancellationToken::new(),
            group.wait(),
        )
        .await;
        assert_eq!(ended.err(), Some(Stopped::TimedOut));
        group.kill_and_reap().await;
        assert_eq!(group.id(), None, "the leader is reaped");
        assert!(gone_soon(grandchild), "grandchild {grandchild} survived");
    }

    #[tokio::test]
    async fn cancellation_is_reported_as_such() {
        let mut group =
            ProcessGroup::spawn(&mut with_grandchild()).unwrap_or_else(|e| panic!("{e}"));
        let grandchild = printed_pid(&mut group).await;
        let cancel = CancellationToken::new();
        cancel.cancel();
        let ended = within(Duration::from_secs(60), &cancel, group.wait()).await;
        assert_eq!(ended.err(), Some(Stopped::Cancelled));
        group.kill_and_reap().await;
        assert!(gone_soon(grandchild), "grandchild {grandchild} survived");
    }

    #[tokio::test]
    async fn dropping_a_running_group_kills_it_but_a_detached_one_lives() {
        let mut group =
            ProcessGroup::spawn(&mut with_grandchild()).unwrap_or_else(|e| panic!("{e}"));
        let grandchild = printed_pid(&mut group).await;
        drop(group);
        assert!(
            gone_soon(grandchild),
            "grandchild {grandchild} survived the drop"
        );

        let mut group =
            ProcessGroup::spawn(&mut with_grandchild()).unwrap_or_else(|e| panic!("{e}"));
        let grandchild = printed_pid(&mut group).await;
        let leader = group
            .id()
            .unwrap_or_else(|| panic!("a running leader has a pid"));
        group.detach();
        drop(group);
        std::thread::sleep(Duration::from_millis(200));
        assert!(alive(grandchild), "a detached group is left running");
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{leader}")])
            .status();
        assert!(gone_soon(grandchild));
    }

    #[tokio::test]
    async fn a_finished_leader_leaves_its_background_jobs_alone_on_drop() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("sleep 30 >/dev/null 2>&1 & echo $!")
            .stdout(Stdio::piped());
        let mut group = ProcessGroup::spawn(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
        let grandchild = printed_pid(&mut group).await;
        let status = group.wait().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exit_code(status), 0);
        drop(group);
        std::thread::sleep(Duration::from_millis(200));
        assert!(alive(grandchild), "the shell's `&` job outlives the shell");
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &grandchild.to_string()])
            .status();
    }

    #[test]
    fn the_supervisor_kills_at_the_limit() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let (group, grandchild) = rt.block_on(async {
            let mut group =
                ProcessGroup::spawn(&mut with_grandchild()).unwrap_or_else(|e| panic!("{e}"));
            let pid = printed_pid(&mut group).await;
            (group, pid)
        });
        let (tx, rx) = std::sync::mpsc::channel();
        group
            .limit_in_background(
                Duration::from_millis(300),
                "test-supervisor".into(),
                move || {
                    let _ = tx.send(());
                },
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(alive(grandchild), "running until the limit");
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("the supervisor never ended: {e}"));
        assert!(
            gone_soon(grandchild),
            "grandchild {grandchild} outlived the limit"
        );
    }

    #[tokio::test]
    async fn exit_codes_and_capped_reads() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("head -c 100000 /dev/zero; exit 3")
            .stdout(Stdio::piped());
        let mut group = ProcessGroup::spawn(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
        let out = read_capped(group.take_stdout(), 10).await;
        assert_eq!(out, vec![0u8; 10]);
        let status = group.wait().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exit_code(status), 3);

        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg("kill -TERM $$");
        let mut group = ProcessGroup::spawn(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
        let status = group.wait().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exit_code(status), 128 + libc::SIGTERM);

        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("out");
        std::fs::write(&f, "abcdef").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_file_capped(&f, 3), "abc");
        assert_eq!(read_file_capped(&dir.path().join("missing"), 3), "");
    }
}
