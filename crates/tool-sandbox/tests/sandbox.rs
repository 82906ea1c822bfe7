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
    judge: Arc<Judge>,
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
    judge: Arc<Judge>,
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
        assert!(!out.contains("after"), "{script}: the command went on");
        let stop = report
            .stops
            .first()
            .unwrap_or_else(|| panic!("{script}: no stop recorded"));
        assert_eq!(base(&stop.argv[0]), "rm", "{script}: {stop:?}");
        assert_eq!(stop.decision.message, "rm is denied");
        let _ = std::fs::remove_file(dir.join("rm"));
    }
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
        assert!(ok, "{out}");
        let seen = judge.seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
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
