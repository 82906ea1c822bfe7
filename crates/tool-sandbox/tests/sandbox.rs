//! The sandbox on the real kernel: bubblewrap, the exec supervisor and the network filter.
//! These need `bwrap`; `cargo xtask ci` installs it. Without it they say so and pass, unless
//! `TOOLGATE_REQUIRE_SANDBOX` is set (CI sets it), where they fail.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tool_core::sandbox::{AbsentPath, ExecRequest, MountPlan, NetworkPlan, PlannedPath, RunJudge};
use tool_core::{Decision, DecisionReason};
use tool_sandbox::{Launch, Sandbox};

fn sandbox() -> Option<&'static Sandbox> {
    match Sandbox::detect() {
        Ok(s) => Some(s),
        Err(e) if std::env::var_os("TOOLGATE_REQUIRE_SANDBOX").is_some() => {
            panic!("TOOLGATE_REQUIRE_SANDBOX is set but {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// A judge that denies programs by name and records what it was asked.
#[derive(Default)]
struct Judge {
    deny: Vec<&'static str>,
    allow_hosts: Vec<&'static str>,
    seen: Mutex<Vec<(Vec<String>, bool)>>,
    hosts: Mutex<Vec<String>>,
}

fn base(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

impl RunJudge for Judge {
    fn exec(&self, r: &ExecRequest<'_>) -> Decision {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((r.argv.to_vec(), r.started_by_line));
        let name = r.argv.first().map(|a| base(a)).unwrap_or("");
        if self.deny.contains(&name) {
            Decision::deny(
                format!("{name} is denied"),
                DecisionReason::Check {
                    name: "test".into(),
                },
            )
        } else {
            Decision::allow(DecisionReason::Check {
                name: "test".into(),
            })
        }
    }
    fn connect(&self, host: &str, _port: u16) -> Decision {
        self.hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(host.to_owned());
        if self.allow_hosts.contains(&host) {
            Decision::allow(DecisionReason::Check {
                name: "test".into(),
            })
        } else {
            Decision::deny(
                format!("{host} is not allowed"),
                DecisionReason::Check {
                    name: "test".into(),
                },
            )
        }
    }
}

/// Run `script` with `sh -c` in `dir` under `plan`; its output and whether it succeeded.
fn run(
    sb: &Sandbox,
    dir: &Path,
    plan: MountPlan,
    network: NetworkPlan,
    judge: Arc<dyn RunJudge>,
    script: &str,
) -> (String, bool, tool_sandbox::Report) {
    run_traced(sb, dir, plan, network, judge, script, false)
}

/// Both ways of supervising: stopping each `execve` (where the kernel can) and tracing every
/// process.
const EVERY_PROCESS: [bool; 2] = [false, true];

/// As [`run`], tracing every process when `every` is set.
fn run_traced(
    sb: &Sandbox,
    dir: &Path,
    plan: MountPlan,
    network: NetworkPlan,
    judge: Arc<dyn RunJudge>,
    script: &str,
    every: bool,
) -> (String, bool, tool_sandbox::Report) {
    let out_path = dir.join(".out");
    let out = std::fs::File::create(&out_path).unwrap_or_else(|e| panic!("{e}"));
    let err = out.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let running = Launch::new("/bin/sh", ["-c", script])
        .cwd(dir)
        .stdin(tool_sandbox::Io::Null)
        .stdout(out)
        .stderr(err)
        .plan(plan, network)
        .judge(judge)
        .trace_every_process(every)
        .spawn(sb)
        .unwrap_or_else(|e| panic!("{e}"));
    let status = running.wait_blocking();
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    (text, status.success(), running.report())
}

/// As [`run_traced`] in `dir` (writable, no network), with a judge that allows every
/// program: the output, whether it succeeded, and what the judge was asked (argv, started by
/// the line).
fn run_judged(
    sb: &Sandbox,
    dir: &Path,
    script: &str,
    every: bool,
) -> (String, bool, Vec<(Vec<String>, bool)>) {
    let judge = Arc::new(Judge::default());
    let (out, ok, _) = run_traced(
        sb,
        dir,
        writable(dir),
        NetworkPlan::Blocked,
        judge.clone(),
        script,
        every,
    );
    let seen = judge.seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    (out, ok, seen)
}

fn writable(dir: &Path) -> MountPlan {
    MountPlan {
        writable: vec![PlannedPath::new(dir, "test")],
        ..MountPlan::default()
    }
}

#[test]
fn the_file_system_follows_the_plan() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    std::fs::write(dir.join(".env"), "SECRET=hunter2\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join("keys")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("keys/id"), "PRIVATE\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join(".git/config"), "[core]\n").unwrap_or_else(|e| panic!("{e}"));
    let mut plan = writable(dir);
    plan.read_only = vec![
        PlannedPath::new(dir.join(".git/hooks"), "protected"),
        PlannedPath::new(dir.join(".git/config"), "protected"),
    ];
    plan.hidden = vec![
        PlannedPath::new(dir.join(".env"), "Read(./.env)"),
        PlannedPath::new(dir.join("keys"), "Read(./keys/**)"),
    ];
    plan.absent = vec![AbsentPath {
        path: dir.join(".claude"),
        silent: false,
        why: "protected".into(),
    }];
    let script = "
        echo inside > made.txt && echo made-ok
        echo x > /etc/toolgate-test 2>/dev/null || echo etc-refused
        echo evil > .git/hooks/pre-commit 2>/dev/null || echo hooks-refused
        echo evil >> .git/config 2>/dev/null || echo config-refused
        mv .git/config gone 2>/dev/null || echo config-kept
        cat .env; cat keys/id 2>/dev/null; ls keys | wc -l
        ln .env hard 2>/dev/null || echo link-refused
        mkdir -p .claude/x 2>/dev/null || echo claude-refused
        echo '{}' > .claude/settings.json 2>/dev/null || echo settings-refused
        rmdir .claude 2>/dev/null || echo claude-stays
    ";
    let (out, _, _) = run(
        sb,
        dir,
        plan,
        NetworkPlan::Blocked,
        Arc::new(Judge::default()),
        script,
    );
    for want in [
        "made-ok",
        "etc-refused",
        "hooks-refused",
        "config-refused",
        "config-kept",
        "link-refused",
        "claude-refused",
        "settings-refused",
        "claude-stays",
    ] {
        assert!(out.contains(want), "{want} missing from:\n{out}");
    }
    assert!(
        !out.contains("hunter2") && !out.contains("PRIVATE"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.trim() == "0"),
        "keys/ lists empty: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("made.txt")).unwrap_or_default(),
        "inside\n"
    );
    assert!(!Path::new("/etc/toolgate-test").exists());
    assert!(!dir.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join(".git/config")).unwrap_or_default(),
        "[core]\n"
    );
    assert!(
        !dir.join(".claude").exists(),
        "the stand-in for .claude is gone after the command"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".env")).unwrap_or_default(),
        "SECRET=hunter2\n",
        "the masked file itself is untouched"
    );
}

#[test]
fn a_denied_program_never_runs_however_deep_it_is_started() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    std::fs::write(dir.join("victim"), "v").unwrap_or_else(|e| panic!("{e}"));
    for (script, every) in [
        "rm victim",
        "sh -c 'sh -c \"rm -f victim\"'",
        "echo victim | xargs rm",
        "find . -name victim -exec rm {} +",
        "cp /bin/rm ./rm && ./rm victim",
        "env rm victim; echo after",
        "rm victim & wait; echo after",
        "python3 -c 'import os, threading; threading.Thread(target=lambda: os.execv(\"/bin/rm\", [\"rm\", \"victim\"])).start()' || : ; echo after",
    ]
    .iter()
    .flat_map(|s| EVERY_PROCESS.map(|every| (*s, every)))
    {
        if script.starts_with("python3") && !Path::new("/usr/bin/python3").exists() {
            continue;
        }
        let judge = Arc::new(Judge {
            deny: vec!["rm"],
            ..Judge::default()
        });
        let (out, ok, report) = run_traced(
            sb,
            dir,
            writable(dir),
            NetworkPlan::Blocked,
            judge.clone(),
            script,
            every,
        );
        let script = format!("{script} (tracing every process: {every})");
        assert!(!ok, "{script}: the command was stopped");
        assert!(dir.join("victim").exists(), "{script}: rm ran: {out}");
        assert!(!out.contains("after"), "{script}: the command went on: {out:?}");
        let stop = report
            .stops
            .first()
            .unwrap_or_else(|| panic!("{script}: no stop recorded"));
        assert_eq!(base(&stop.argv[0]), "rm", "{script}: {stop:?}");
        assert_eq!(stop.decision.message, "rm is denied");
        let _ = std::fs::remove_file(dir.join("rm"));
    }
}

/// What the judge is asked is the program's arguments as the kernel laid them out, whether
/// they and the environment fit in the first read of the new stack or not (many arguments,
/// a large environment, none at all), with empty and spaced words, and for a script.
#[test]
fn every_program_is_judged_on_the_arguments_it_was_given() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    std::fs::write(dir.join("s.sh"), "#!/bin/sh\nexit 0\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(
        dir.join("s.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let many: Vec<String> = (1..=1500).map(|i| i.to_string()).collect();
    let few: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let with = |tag: &str, rest: &[String]| -> Vec<String> {
        let mut v = vec!["/bin/echo".to_owned(), tag.to_owned()];
        v.extend_from_slice(rest);
        v
    };
    let script = "/bin/echo spaced '' 'a b' c; \
         env -i /bin/echo bare; \
         /bin/echo few $(seq 1 100); \
         /bin/echo many $(seq 1 1500); \
         i=0; while [ $i -lt 1500 ]; do export V$i=$i; i=$((i+1)); done; /bin/echo big-env; \
         ./s.sh one 'two three'";
    let expected = [
        vec!["/bin/echo", "spaced", "", "a b", "c"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>(),
        vec!["/bin/echo".into(), "bare".into()],
        with("few", &few),
        with("many", &many),
        vec!["/bin/echo".into(), "big-env".into()],
        vec!["./s.sh".into(), "one".into(), "two three".into()],
    ];
    for every in EVERY_PROCESS {
        let (out, ok, seen) = run_judged(sb, dir, script, every);
        assert!(ok, "tracing every process: {every}: {out}");
        for want in &expected {
            assert!(
                seen.iter().any(|(argv, _)| argv == want),
                "tracing every process: {every}: not judged as {:?} (first words); judged: {:?}",
                &want[..want.len().min(4)],
                seen.iter()
                    .map(|(a, _)| a.iter().take(4).cloned().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// A launcher that is a script of the user's executing bubblewrap (as some systems ship it)
/// runs its own programs outside the sandbox, unjudged; the line's shell is still the first
/// program inside, and the command neither hangs nor loses track of which programs are the
/// line's.
#[test]
fn a_launcher_script_in_front_of_bubblewrap_changes_nothing_inside() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path().join("work");
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    let wrapper = tmp.path().join("bwrap-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n/bin/echo wrapper-marker >/dev/null\nexec {} \"$@\"\n",
            sb.bwrap().display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let wrapped = Sandbox::at(&wrapper).unwrap_or_else(|e| panic!("{e}"));
    if !wrapped.stops_only_execs() {
        eprintln!("skipped: no seccomp user notification here");
        return;
    }
    std::fs::write(dir.join("victim"), "v").unwrap_or_else(|e| panic!("{e}"));
    let judge = Arc::new(Judge {
        deny: vec!["rm"],
        ..Judge::default()
    });
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (dir, judge) = (dir.clone(), judge.clone());
        std::thread::spawn(move || {
            let r = run(
                &wrapped,
                &dir,
                writable(&dir),
                NetworkPlan::Blocked,
                judge,
                "/bin/echo line-marker; sh -c '/bin/echo deep-marker'; rm victim; echo after",
            );
            let _ = tx.send(r);
        });
    }
    let (out, ok, report) = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("the command behind a launcher script did not end"));
    assert!(!ok, "rm was stopped: {out}");
    assert!(dir.join("victim").exists(), "rm ran: {out}");
    assert!(!out.contains("after"), "the command went on: {out}");
    assert_eq!(
        report.stops.first().map(|s| base(&s.argv[0])),
        Some("rm"),
        "{out} {report:?}"
    );
    let seen = judge.seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let by_line = |marker: &str| {
        seen.iter()
            .find(|(argv, _)| argv.last().map(String::as_str) == Some(marker))
            .map(|(_, line)| *line)
    };
    assert_eq!(by_line("wrapper-marker"), None, "judged: {seen:?}");
    assert_eq!(by_line("line-marker"), Some(true), "judged: {seen:?}");
    assert_eq!(by_line("deep-marker"), Some(false), "judged: {seen:?}");
}

#[test]
fn programs_the_line_starts_are_told_apart_from_what_they_start() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    // `uname` is run by a subshell of the line whose parent ended before it (an orphan of the
    // line's own); `hostname` by such an orphan of a program the line started.
    let script = "echo $(date +%Y) >/dev/null; (ls /); sh -c 'id -u' | cat; \
        ( (sleep 0.2; uname) & ); sh -c '(sleep 0.2; hostname) &'; sleep 0.5";
    for every in EVERY_PROCESS {
        let (out, ok, seen) = run_judged(sb, dir, script, every);
        assert!(ok, "{out}");
        let by_line = |name: &str| {
            seen.iter()
                .find(|(argv, _)| base(&argv[0]) == name)
                .map(|(_, line)| *line)
        };
        for (name, line) in [
            ("date", true),
            ("ls", true),
            ("sh", true),
            ("cat", true),
            ("uname", true),
            ("id", false),
            ("hostname", false),
        ] {
            assert_eq!(
                by_line(name),
                Some(line),
                "{name} (tracing every process: {every}): {seen:?}"
            );
        }
    }
}

#[test]
fn where_every_program_is_watched_no_program_traces_another() {
    let Some(sb) = sandbox() else { return };
    if !sb.stops_only_execs() || !Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: every process is traced here, or no python3");
        return;
    }
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    // A child that asks its parent to trace it (as under a debugger), then executes a denied
    // program: the request is refused, and the program is stopped all the same.
    let script = r#"python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    r = libc.ptrace(0, 0, 0, 0)
    print("ptrace", r, os.strerror(ctypes.get_errno()), flush=True)
    os.execv("/bin/rm", ["rm", "victim"])
os.waitpid(pid, 0)
'; echo after"#;
    std::fs::write(dir.join("victim"), "v").unwrap_or_else(|e| panic!("{e}"));
    let judge = Arc::new(Judge {
        deny: vec!["rm"],
        ..Judge::default()
    });
    let (out, ok, report) = run(sb, dir, writable(dir), NetworkPlan::Blocked, judge, script);
    assert!(out.contains("ptrace -1 Operation not permitted"), "{out}");
    assert!(!ok && !out.contains("after"), "{out}");
    assert!(dir.join("victim").exists(), "{out}");
    let stop = report
        .stops
        .first()
        .unwrap_or_else(|| panic!("no stop recorded: {out}"));
    assert_eq!(stop.decision.message, "rm is denied");
}

/// Where every program is watched, no process writes another's memory (so what the
/// supervisor read of a waiting `execve` is what the kernel will read): `process_vm_writev`,
/// `userfaultfd`, a writable `/proc/PID/mem` and memory shared but as a thread or a `vfork`
/// child are all refused, while threads, `vfork` and `posix_spawn` still work.
#[test]
fn where_every_program_is_watched_no_process_writes_another_s_memory() {
    let Some(sb) = sandbox() else { return };
    if !sb.stops_only_execs()
        || !cfg!(target_arch = "x86_64")
        || !Path::new("/usr/bin/python3").exists()
    {
        eprintln!("skipped: every process is traced here, not x86_64, or no python3");
        return;
    }
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let script = r#"python3 -c '
import ctypes, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    r = libc.syscall(*[ctypes.c_long(a) for a in args])
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "ok", flush=True)
call("process_vm_writev", 311, os.getppid(), 0, 0, 0, 0, 0)
call("userfaultfd", 323, 0)
call("clone", 56, 0x100 | 17, 0, 0, 0, 0)
call("io_setup", 206, 8, 0)
r = libc.syscall(ctypes.c_long(56), ctypes.c_long(0x200 | 17), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
if r == 0: os._exit(0)
print("clone_fs", r, os.strerror(ctypes.get_errno()) if r < 0 else "ok", flush=True)
try:
    open("/proc/self/mem", "r+b")
    print("mem open", flush=True)
except OSError as e:
    print("mem", e.strerror, flush=True)
t = threading.Thread(target=lambda: print("thread ran", flush=True))
t.start(); t.join()
print(subprocess.run(["/bin/echo", "spawned"], capture_output=True, text=True).stdout.strip())
'; echo after"#;
    let judge = Arc::new(Judge {
        deny: vec!["rm"],
        ..Judge::default()
    });
    let (out, ok, _) = run(sb, dir, writable(dir), NetworkPlan::Blocked, judge, script);
    assert!(ok, "{out}");
    for line in [
        "process_vm_writev -1 Operation not permitted",
        "userfaultfd -1 Operation not permitted",
        "clone -1 Operation not permitted",
        "io_setup -1 Function not implemented",
        "clone_fs -1 Operation not permitted",
        "mem Read-only file system",
        "thread ran",
        "spawned",
        "after",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    // With allow rules only, nothing of that is refused: a debugger's tools still work.
    let (out, ok, _) = run(
        sb,
        dir,
        writable(dir),
        NetworkPlan::Blocked,
        Arc::new(LineOnly),
        script,
    );
    assert!(ok, "{out}");
    assert!(out.contains("process_vm_writev 0 ok"), "{out}");
    assert!(!out.contains("mem Read-only file system"), "{out}");
}

/// A judge with allow rules only: it watches the line's own programs and allows them.
struct LineOnly;

impl RunJudge for LineOnly {
    fn exec(&self, _r: &ExecRequest<'_>) -> Decision {
        Decision::allow(DecisionReason::Check {
            name: "test".into(),
        })
    }
    fn connect(&self, _host: &str, _port: u16) -> Decision {
        Decision::allow(DecisionReason::Check {
            name: "test".into(),
        })
    }
    fn watching(&self, _confined: bool) -> tool_core::sandbox::Watching {
        tool_core::sandbox::Watching::LineOnly
    }
}

#[test]
fn untraced_clones_are_refused() {
    let Some(sb) = sandbox() else { return };
    if !sb.filters_clone() || !Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: no clone filter on this architecture, or no python3");
        return;
    }
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    // clone(CLONE_UNTRACED | SIGCHLD) by its number, then clone3: both refused.
    let script = r#"python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(56, 0x00800000 | 17, 0, 0, 0, 0)
if r == 0: os._exit(0)
print("clone", r, os.strerror(ctypes.get_errno()))
r = libc.syscall(435, 0, 0)
print("clone3", r, os.strerror(ctypes.get_errno()))
'"#;
    let (out, ok, _) = run(
        sb,
        dir,
        writable(dir),
        NetworkPlan::Blocked,
        Arc::new(Judge::default()),
        script,
    );
    assert!(ok, "{out}");
    assert!(out.contains("clone -1 Operation not permitted"), "{out}");
    assert!(out.contains("clone3 -1 Function not implemented"), "{out}");
}

/// A one-request HTTP server on the host: answers `hello` and reports what it was asked.
fn origin() -> (std::net::SocketAddr, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let n = conn.read(&mut buf).unwrap_or(0);
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    (addr, rx)
}

#[test]
fn the_network_is_closed_or_filtered_by_host_name() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let (addr, asked) = origin();
    // Blocked: not even the host's loopback is there.
    let script = format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{}) 2>/dev/null && echo reached || echo unreachable",
        addr.port()
    );
    let (out, _, _) = run(
        sb,
        dir,
        writable(dir),
        NetworkPlan::Blocked,
        Arc::new(Judge::default()),
        &format!("bash -c '{script}'"),
    );
    assert!(out.contains("unreachable"), "{out}");

    // Filtered: the proxy relays an allowed host (aimed at the local origin) and refuses the
    // rest with its reason.
    let judge = Arc::new(Judge {
        allow_hosts: vec!["allowed.test"],
        ..Judge::default()
    });
    let script = r#"
        ask() { exec 3<>/dev/tcp/127.0.0.1/3128; printf "GET http://$1/x HTTP/1.1\r\nHost: $1\r\n\r\n" >&3; cat <&3; exec 3>&-; }
        echo "proxy=$http_proxy"
        ask allowed.test
        ask denied.test
    "#;
    for every in EVERY_PROCESS {
        let to = addr;
        let resolver: Arc<tool_sandbox::Resolver> = Arc::new(move |_host, _port| Ok(vec![to]));
        let out_path = dir.join(".out");
        let out = std::fs::File::create(&out_path).unwrap_or_else(|e| panic!("{e}"));
        let running = Launch::new("/bin/bash", ["-c", script])
            .cwd(dir)
            .stdout(out)
            .plan(writable(dir), NetworkPlan::Filtered)
            .judge(judge.clone())
            .resolver(resolver)
            .trace_every_process(every)
            .spawn(sb)
            .unwrap_or_else(|e| panic!("{e}"));
        running.wait_blocking();
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        assert!(out.contains("proxy=http://127.0.0.1:3128"), "{out}");
        assert!(out.contains("hello"), "{out}");
        assert!(
            out.contains("403 Forbidden")
                && out.contains("Connection blocked by network allowlist"),
            "{out}"
        );
        let request = asked
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(request.starts_with("GET /x HTTP/1.1\r\n"), "{request}");
        assert!(
            asked.try_recv().is_err(),
            "the denied host never reached the origin"
        );
        let report = running.report();
        assert_eq!(report.refusals.len(), 1);
        assert_eq!(report.refusals[0].host, "denied.test");
    }
}

#[test]
fn killing_a_command_ends_every_process_in_it() {
    let Some(sb) = sandbox() else { return };
    for every in EVERY_PROCESS {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = tmp.path();
        let running = Launch::new(
            "/bin/sh",
            [
                "-c",
                "setsid sleep 300 & sleep 300 & echo started > started; wait",
            ],
        )
        .cwd(dir)
        .plan(writable(dir), NetworkPlan::Blocked)
        .trace_every_process(every)
        .spawn(sb)
        .unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        while !dir.join("started").exists() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        running.kill();
        let status = running.wait_blocking();
        assert!(!status.success());
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the command ended when killed"
        );
    }
}

/// A descriptor the host holds without close-on-exec (one another thread of it just made, or
/// one it inherited) does not reach the command: only the standard streams and the
/// descriptors the launch names do.
#[test]
#[allow(unsafe_code)]
fn no_descriptor_of_the_host_reaches_the_command() {
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let secret = tmp.path().join("secret");
    std::fs::write(&secret, "host file").unwrap_or_else(|e| panic!("{e}"));
    let file = std::fs::File::open(&secret).unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: F_DUPFD makes a new descriptor (without close-on-exec) that we then own.
    let leaked = unsafe {
        let n = libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 200);
        assert!(n >= 200, "{}", std::io::Error::last_os_error());
        OwnedFd::from_raw_fd(n)
    };
    let n = leaked.as_raw_fd();
    assert!(Path::new(&format!("/proc/self/fd/{n}")).exists());
    let script = format!("if [ -L /proc/$$/fd/{n} ]; then cat <&{n}; else echo closed; fi");
    for every in EVERY_PROCESS {
        let (out, ok, _) = run_traced(
            sb,
            dir,
            writable(dir),
            NetworkPlan::Blocked,
            Arc::new(Judge::default()),
            &script,
            every,
        );
        assert!(ok, "{out}");
        assert_eq!(out, "closed\n", "every process traced: {every}");
    }
    drop(leaked);
}

/// When a command's shell has ended, nothing it started is left: its status is reported only
/// once every process of it is gone. A background writer blocked opening a FIFO shows one
/// left behind: a reader opening the FIFO then would let it open (and, killed, close it
/// without writing), so the reader would see an empty pipe instead of no writer at all.
#[test]
fn a_command_has_ended_only_when_every_process_of_it_has() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let fifo = dir.join("p");
    let script = "[ -p p ] || mkfifo p; sh -c 'echo from-writer > p' & sleep 0.05; echo started";
    // No supervisor, stopping each exec, tracing every process.
    for (supervise, every) in [(false, false), (true, false), (true, true)] {
        for round in 0..25 {
            let running = Launch::new("/bin/sh", ["-c", script])
                .cwd(dir)
                .stdin(tool_sandbox::Io::Null)
                .plan(writable(dir), NetworkPlan::Blocked)
                .judge(Arc::new(Judge::default()))
                .supervise(supervise)
                .trace_every_process(every)
                .spawn(sb)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(running.wait_blocking().success());
            let mut reader = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut buf = [0u8; 64];
            let read = reader.read(&mut buf);
            assert!(
                matches!(read, Ok(0)),
                "round {round} (supervised: {supervise}, every process: {every}): a writer \
                 outlived its command: {read:?}"
            );
        }
    }
}

/// A small deterministic generator (xorshift), so a failing script can be made again from its
/// seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A generated script, with what each marked program (`/bin/true mN`) is: started by the
/// line's own shell (a fork of it, however deep: subshells, pipelines, substitutions,
/// background jobs, orphans, functions, `eval`, `exec` in a subshell), or by a program the line
/// started (`sh -c`, `env`, `xargs`).
struct Generated {
    script: String,
    truth: Vec<(String, bool)>,
    /// Orphaned jobs: each makes `.done_N` when its programs have run.
    orphans: Vec<String>,
}

fn generate(rng: &mut Rng) -> Generated {
    let mut g = Generated {
        script: String::new(),
        truth: Vec::new(),
        orphans: Vec::new(),
    };
    let list = gen_list(rng, &mut g, 0, true, false);
    g.script = format!("{list}\nwait");
    // Orphaned jobs cannot be waited for: the line waits for their marks (up to 10 s).
    for done in &g.orphans {
        g.script.push_str(&format!(
            "\nn=0; while [ ! -e {done} ] && [ $n -lt 1000 ]; do /bin/sleep 0.01; n=$((n+1)); done"
        ));
    }
    g
}

fn gen_list(rng: &mut Rng, g: &mut Generated, depth: u32, line: bool, quoted: bool) -> String {
    let n = 1 + rng.below(3);
    (0..n)
        .map(|_| gen_command(rng, g, depth, line, quoted))
        .collect::<Vec<_>>()
        .join("\n")
}

fn marker(g: &mut Generated, line: bool) -> String {
    let m = format!("m{}", g.truth.len());
    g.truth.push((m.clone(), line));
    format!("/bin/true {m}")
}

fn gen_command(rng: &mut Rng, g: &mut Generated, depth: u32, line: bool, quoted: bool) -> String {
    let choice = if depth >= 3 { 0 } else { rng.below(15) };
    let d = depth + 1;
    match choice {
        0 => marker(g, line),
        1 => format!("( {}\nwait )", gen_list(rng, g, d, line, quoted)),
        2 => format!("{{ {}\n}}", gen_list(rng, g, d, line, quoted)),
        3 => format!("{{ {}\nwait\n}} &", gen_list(rng, g, d, line, quoted)),
        4 => format!(
            "{{ {}\nwait\n}} | {{ {}\nwait\n}}",
            gen_command(rng, g, d, line, quoted),
            gen_command(rng, g, d, line, quoted)
        ),
        5 => format!(": \"$( {}\nwait )\"", gen_list(rng, g, d, line, quoted)),
        6 => format!(
            "if {}; then {}\nfi",
            marker(g, line),
            gen_list(rng, g, d, line, quoted)
        ),
        7 => format!("for i in 1; do {}\ndone", gen_list(rng, g, d, line, quoted)),
        8 => {
            let name = format!("f{}", g.truth.len());
            format!(
                "{name}() {{ {}\n}}; {name}",
                gen_list(rng, g, d, line, quoted)
            )
        }
        9 => format!("( exec {} )", marker(g, line)),
        10 => {
            let done = format!(".done_{}", g.orphans.len());
            g.orphans.push(done.clone());
            format!(
                "( ( {}\nwait\n: > {done} ) & )",
                gen_list(rng, g, d, line, quoted)
            )
        }
        11 if !quoted => format!("eval '{}'", gen_list(rng, g, d, line, true)),
        // What a program the line started starts is that program's.
        11 | 12 if !quoted => format!("/bin/sh -c '{}\nwait'", gen_list(rng, g, d, false, true)),
        13 => format!("/usr/bin/env {}", marker(g, false)),
        14 => format!("echo x | /usr/bin/xargs {}", marker(g, false)),
        _ => format!("command {}", marker(g, line)),
    }
}

/// Differential: generated scripts, run by `sh` and `bash` under both supervisors, each
/// marked program seen once and told as the generator built it (line or descendant). Allow
/// rules are checked against the line's programs only, so telling one of them as a descendant
/// would let it run unchecked. `TOOLGATE_SANDBOX_CASES` runs more seeds than the default 12.
#[test]
fn generated_scripts_have_every_program_told_as_line_or_descendant_as_built() {
    let Some(sb) = sandbox() else { return };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let cases: u64 = std::env::var("TOOLGATE_SANDBOX_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    for seed in 1..=cases {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let g = generate(&mut rng);
        for shell in ["/bin/sh", "/bin/bash"] {
            for every in EVERY_PROCESS {
                for done in &g.orphans {
                    let _ = std::fs::remove_file(dir.join(done));
                }
                let judge = Arc::new(Judge::default());
                let out = dir.join(".out");
                let file = std::fs::File::create(&out).unwrap_or_else(|e| panic!("{e}"));
                let err = file.try_clone().unwrap_or_else(|e| panic!("{e}"));
                let running = Launch::new(shell, ["-c", g.script.as_str()])
                    .cwd(dir)
                    .stdin(tool_sandbox::Io::Null)
                    .stdout(file)
                    .stderr(err)
                    .plan(writable(dir), NetworkPlan::Blocked)
                    .judge(judge.clone())
                    .trace_every_process(every)
                    .spawn(sb)
                    .unwrap_or_else(|e| panic!("{e}"));
                let status = running.wait_blocking();
                let text = std::fs::read_to_string(&out).unwrap_or_default();
                let case = format!(
                    "seed {seed}, {shell}, tracing every process: {every}\n{}\n{text}",
                    g.script
                );
                assert!(status.success(), "{case}");
                let seen = judge.seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let marked: Vec<(String, bool)> = seen
                    .iter()
                    .filter(|(argv, _)| argv.first().is_some_and(|a| a == "/bin/true"))
                    .filter_map(|(argv, line)| Some((argv.get(1)?.clone(), *line)))
                    .collect();
                for (m, line) in &g.truth {
                    let got: Vec<bool> = marked
                        .iter()
                        .filter(|(x, _)| x == m)
                        .map(|(_, l)| *l)
                        .collect();
                    assert_eq!(
                        got,
                        vec![*line],
                        "{m} should be seen once, started by the line: {line}; {case}"
                    );
                }
            }
        }
    }
}
