//! Sandboxes started ahead ([`Launch::keep_warm`]): a command run in one sees, and is held
//! to, what it would in a sandbox started for it; one whose mounts changed on the host is not
//! used. These need `bwrap` with seccomp user notification; without it they say so and pass,
//! unless `TOOLGATE_REQUIRE_SANDBOX` is set (CI sets it), where they fail.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tool_core::sandbox::{ExecRequest, MountPlan, NetworkPlan, PlannedPath, RunJudge};
use tool_core::{Decision, DecisionReason};
use tool_sandbox::{Ahead, Launch, Running, Sandbox};

/// A sandbox of this test's own (its own sandbox started ahead), where one can start ahead.
fn sandbox() -> Option<Sandbox> {
    let found = match Sandbox::detect() {
        Ok(s) => Sandbox::at(s.bwrap()).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match found {
        Ok(s) if s.stops_only_execs() => Some(s),
        Ok(_) => {
            eprintln!("skipped: no seccomp user notification here, so nothing is started ahead");
            None
        }
        Err(e) if std::env::var_os("TOOLGATE_REQUIRE_SANDBOX").is_some() => {
            panic!("TOOLGATE_REQUIRE_SANDBOX is set but {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn bash() -> PathBuf {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no bash"))
}

/// Denies programs by name; records what it was asked.
#[derive(Default)]
struct Judge {
    deny: Vec<&'static str>,
    seen: Mutex<Vec<Vec<String>>>,
}

impl RunJudge for Judge {
    fn exec(&self, r: &ExecRequest<'_>) -> Decision {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r.argv.to_vec());
        let name = r
            .argv
            .first()
            .map_or("", |a| a.rsplit('/').next().unwrap_or(a));
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
    fn connect(&self, _: &str, _: u16) -> Decision {
        Decision::deny(
            "no network",
            DecisionReason::Check {
                name: "test".into(),
            },
        )
    }
}

/// A temporary project directory (kept while the first is held), by its real path.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = std::fs::canonicalize(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    (tmp, dir)
}

fn plan_for(dir: &Path) -> MountPlan {
    let mut plan = MountPlan::default();
    plan.writable
        .push(PlannedPath::new(dir, "the working directory"));
    plan
}

/// Start `script` with `bash -c` in `dir`, kept warm; output goes to `dir/out` (standard
/// output and error) and descriptor 3 to `dir/three`.
fn start(
    sb: &Sandbox,
    dir: &Path,
    plan: MountPlan,
    judge: Arc<dyn RunJudge>,
    env: &[(&str, &str)],
    script: &str,
    warm: bool,
) -> Running {
    let out = std::fs::File::create(dir.join("out")).unwrap_or_else(|e| panic!("{e}"));
    let err = out.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let three = std::fs::File::create(dir.join("three")).unwrap_or_else(|e| panic!("{e}"));
    Launch::new(bash(), ["-c", script])
        .cwd(dir)
        .env(env.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .stdin(tool_sandbox::Io::Null)
        .stdout(out)
        .stderr(err)
        .fd(three.into(), 3)
        .plan(plan, NetworkPlan::Blocked)
        .judge(judge)
        .keep_warm(warm)
        .spawn(sb)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn finish(dir: &Path, running: &Running) -> (String, String, bool) {
    let status = running.wait_blocking();
    let out = std::fs::read_to_string(dir.join("out")).unwrap_or_default();
    let three = std::fs::read_to_string(dir.join("three")).unwrap_or_default();
    (out, three, status.success())
}

/// Time for the sandbox being started ahead to be ready: it takes milliseconds; this is
/// headroom on a loaded machine, not a measurement. (A command waits a little for it anyway,
/// but not this long.)
fn pause() {
    std::thread::sleep(std::time::Duration::from_millis(400));
}

const ENV: [(&str, &str); 4] = [
    ("PATH", "/usr/bin:/bin"),
    ("HOME", "/nonexistent"),
    ("LANG", "C.UTF-8"),
    ("ZZ_LAST", "a b\tc"),
];

/// Run `script` once kept warm and started fresh (the warm-up command first, so a sandbox is
/// started ahead), then in the sandbox started ahead; both results (output, descriptor 3,
/// success), whether the second ran ahead.
type Outcome = (String, String, bool);

fn fresh_and_ahead(sb: &Sandbox, dir: &Path, script: &str) -> (Outcome, Outcome, Ahead) {
    let judge: Arc<dyn RunJudge> = Arc::new(Judge::default());
    let first = start(sb, dir, plan_for(dir), judge.clone(), &ENV, script, true);
    assert_eq!(
        first.ahead(),
        Ahead::NoneStarted,
        "nothing was started ahead yet"
    );
    let fresh = finish(dir, &first);
    pause();
    let second = start(sb, dir, plan_for(dir), judge, &ENV, script, true);
    let ahead = second.ahead();
    (fresh, finish(dir, &second), ahead)
}

#[test]
fn a_line_in_a_sandbox_started_ahead_sees_what_it_sees_in_its_own() {
    let Some(sb) = sandbox() else { return };
    let (_tmp, dir) = project();
    // What the shell is, its variables, its environment as it passes it on and as it got it,
    // its descriptors, its process, its directory; the line's own file descriptor 3.
    let scripts = [
        "echo \"$0|$SHLVL|$$|$PPID|$-|$BASH_EXECUTION_STRING|${#BASH_ARGV[@]}\"",
        "env; echo; declare -p | grep -v -e BASH_ARGV -e BASHPID -e RANDOM -e SRANDOM -e EPOCH -e BASH_EXECUTION_STRING -e BASH_COMMAND -e _=",
        "sh -c 'tr \"\\0\" \"\\n\" < /proc/$$/environ'",
        // (Not through a pipe: the shell holds the pipe's ends while it starts the next
        // program of a pipeline, so the listing would catch them or not.)
        "ls -l --time-style=+ /proc/$$/fd >&3; echo ok",
        // (The sandbox's init, bubblewrap, shows the command it was started with: there the
        // trampoline.)
        "pwd; cd ..; pwd -P >&3; ps -o pid,ppid,args -p $$",
        "echo 'a \"quoted\" \\\\ line'; printf '%s\\n' $'tab\\there' 'é'",
        "false; echo $?; exit 3",
    ];
    let (fresh, _, _) = fresh_and_ahead(&sb, &dir, "exit 3");
    assert!(!fresh.2);
    for script in scripts {
        // A sandbox of its own each time: the first run starts one ahead, the second takes it.
        sb.discard_ahead();
        let (fresh, ahead, used) = fresh_and_ahead(&sb, &dir, script);
        assert_eq!(
            used,
            Ahead::Used,
            "{script}: the second run did not take the sandbox started ahead"
        );
        assert_eq!(fresh, ahead, "{script}");
    }
}

#[test]
fn a_sandbox_started_ahead_is_judged_by_the_command_that_takes_it() {
    let Some(sb) = sandbox() else { return };
    let (_tmp, dir) = project();
    let lenient = Arc::new(Judge::default());
    let first = start(
        &sb,
        &dir,
        plan_for(&dir),
        lenient.clone(),
        &ENV,
        "true",
        true,
    );
    finish(&dir, &first);
    // Started ahead with the first command's settings; the second brings a judge that denies
    // touch, reached through a program the line starts.
    let strict = Arc::new(Judge {
        deny: vec!["touch"],
        ..Judge::default()
    });
    let script = "echo before; sh -c 'touch made'; echo after";
    pause();
    let second = start(
        &sb,
        &dir,
        plan_for(&dir),
        strict.clone(),
        &ENV,
        script,
        true,
    );
    assert_eq!(second.ahead(), Ahead::Used);
    let (out, _, ok) = finish(&dir, &second);
    assert!(!ok, "{out}");
    assert!(!dir.join("made").exists(), "touch ran: {out}");
    assert!(!out.contains("after"), "{out}");
    let report = second.report();
    assert_eq!(report.stops.len(), 1, "{report:?}");
    assert_eq!(
        report.stops[0].argv.first().map(String::as_str),
        Some("touch")
    );
    let strict_saw = strict
        .seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert!(strict_saw.iter().any(|a| a[0] == "sh"), "{strict_saw:?}");
    // The first command's judge was asked about its own programs only.
    let lenient_saw = lenient
        .seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert!(lenient_saw.iter().all(|a| a[0] != "sh"), "{lenient_saw:?}");
}

#[test]
fn a_sandbox_started_ahead_is_not_used_once_a_hidden_file_was_replaced() {
    let Some(sb) = sandbox() else { return };
    let (_tmp, dir) = project();
    std::fs::write(dir.join(".env"), "OLD=1\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap_or_else(|e| panic!("{e}"));
    let plan = || {
        let mut p = plan_for(&dir);
        p.hidden
            .push(PlannedPath::new(dir.join(".env"), "Read(./.env)"));
        p.read_only
            .push(PlannedPath::new(dir.join(".git/hooks"), "protected"));
        p
    };
    let judge: Arc<dyn RunJudge> = Arc::new(Judge::default());
    let script = "cat .env; echo x > .git/hooks/pre-commit || echo hooks-refused";
    let first = start(&sb, &dir, plan(), judge.clone(), &ENV, script, true);
    let (out, _, _) = finish(&dir, &first);
    assert!(!out.contains("OLD"), "{out}");
    assert!(out.contains("hooks-refused"), "{out}");
    // Wait for the sandbox started ahead, then replace the hidden file on the host by a rename
    // over it (which takes the mount on it away in the sandbox), and the protected directory.
    pause();
    let ready = start(&sb, &dir, plan(), judge.clone(), &ENV, script, true);
    assert_eq!(ready.ahead(), Ahead::Used);
    finish(&dir, &ready);
    pause();
    std::fs::write(dir.join(".env.new"), "NEW=1\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(dir.join(".env.new"), dir.join(".env")).unwrap_or_else(|e| panic!("{e}"));
    let after = start(&sb, &dir, plan(), judge.clone(), &ENV, script, true);
    assert_eq!(after.ahead(), Ahead::Changed, "its mounts changed");
    let (out, _, _) = finish(&dir, &after);
    assert!(!out.contains("NEW"), "{out}");
    pause();
    std::fs::rename(dir.join(".git/hooks"), dir.join(".git/hooks-old"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap_or_else(|e| panic!("{e}"));
    let moved = start(&sb, &dir, plan(), judge, &ENV, script, true);
    assert_eq!(moved.ahead(), Ahead::Changed, "its mounts moved");
    let (out, _, _) = finish(&dir, &moved);
    assert!(out.contains("hooks-refused"), "{out}");
    assert!(!dir.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_sandbox_started_ahead_is_used_only_by_a_command_of_the_same_settings() {
    let Some(sb) = sandbox() else { return };
    let (_tmp, dir) = project();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
    let judge: Arc<dyn RunJudge> = Arc::new(Judge::default());
    let first = start(&sb, &dir, plan_for(&dir), judge.clone(), &ENV, "true", true);
    finish(&dir, &first);
    pause();
    // Another environment, another plan, another directory: each starts its own.
    let other_env = [("PATH", "/usr/bin:/bin")];
    let r = start(
        &sb,
        &dir,
        plan_for(&dir),
        judge.clone(),
        &other_env,
        "echo $HOME",
        true,
    );
    assert_eq!(r.ahead(), Ahead::OtherSettings);
    let (out, _, _) = finish(&dir, &r);
    assert_eq!(out, "\n");
    pause();
    let r = start(
        &sb,
        &dir,
        plan_for(&sub),
        judge.clone(),
        &other_env,
        "true",
        true,
    );
    assert_eq!(r.ahead(), Ahead::OtherSettings);
    finish(&dir, &r);
    pause();
    let r = start(
        &sb,
        &sub,
        plan_for(&sub),
        judge.clone(),
        &other_env,
        "pwd",
        true,
    );
    assert_eq!(r.ahead(), Ahead::OtherSettings);
    let (out, _, _) = finish(&sub, &r);
    assert_eq!(out.trim(), sub.display().to_string());
    // A launch that does not keep warm never takes it (nor kills it); one that does, does.
    let r = start(
        &sb,
        &sub,
        plan_for(&sub),
        judge.clone(),
        &other_env,
        "true",
        false,
    );
    assert_eq!(r.ahead(), Ahead::NotAsked);
    finish(&sub, &r);
    // Nor does one that cannot run in a sandbox started ahead (bash would read BASH_ENV as it
    // starts, and the trampoline is a bash too).
    let startup = [("PATH", "/usr/bin:/bin"), ("BASH_ENV", "/nonexistent")];
    let r = start(
        &sb,
        &sub,
        plan_for(&sub),
        judge.clone(),
        &startup,
        "true",
        true,
    );
    assert_eq!(r.ahead(), Ahead::NotEligible);
    finish(&sub, &r);
    pause();
    let r = start(&sb, &sub, plan_for(&sub), judge, &other_env, "true", true);
    assert_eq!(r.ahead(), Ahead::Used);
    finish(&sub, &r);
}

#[test]
fn a_sandbox_started_ahead_is_not_used_once_its_directory_was_made_anew() {
    let Some(sb) = sandbox() else { return };
    let (_tmp, dir) = project();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
    let judge: Arc<dyn RunJudge> = Arc::new(Judge::default());
    let first = start(&sb, &sub, plan_for(&dir), judge.clone(), &ENV, "true", true);
    finish(&sub, &first);
    pause();
    let second = start(&sb, &sub, plan_for(&dir), judge.clone(), &ENV, "true", true);
    assert_eq!(second.ahead(), Ahead::Used);
    finish(&sub, &second);
    // The sandbox started ahead waits in `sub`; `sub` is removed and made again.
    pause();
    std::fs::remove_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
    let third = start(
        &sb,
        &sub,
        plan_for(&dir),
        judge,
        &ENV,
        "touch made && ls",
        true,
    );
    assert_eq!(third.ahead(), Ahead::Changed);
    let (out, _, ok) = finish(&sub, &third);
    assert!(ok, "{out}");
    assert!(sub.join("made").exists(), "{out}");
}

/// The variable that makes this test binary a host that exits while a sandbox is being
/// started ahead (see the next test).
const EXITING_HOST: &str = "TOOLGATE_TEST_EXITING_HOST";

/// A host that exits while a sandbox is being started ahead leaves no process behind: not
/// bubblewrap, nor the init it made in the new PID namespace (which, made but not yet let go
/// on, has not asked to die with bubblewrap and would wait for it for ever). The host is this
/// test binary run again; it exits a little later each time, so some exits fall in the middle
/// of starting.
#[test]
fn a_host_that_exits_while_a_sandbox_starts_ahead_leaves_nothing_behind() {
    const NAME: &str = "a_host_that_exits_while_a_sandbox_starts_ahead_leaves_nothing_behind";
    if let Some(spec) = std::env::var_os(EXITING_HOST) {
        let spec = spec.to_string_lossy().into_owned();
        let (ms, dir) = spec.split_once(':').unwrap_or_else(|| panic!("{spec}"));
        let Some(sb) = sandbox() else {
            std::process::exit(0)
        };
        let dir = PathBuf::from(dir);
        let judge: Arc<dyn RunJudge> = Arc::new(Judge::default());
        let first = start(&sb, &dir, plan_for(&dir), judge, &ENV, "true", true);
        finish(&dir, &first);
        let ms: u64 = ms.parse().unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(std::time::Duration::from_millis(ms));
        std::process::exit(0);
    }
    if sandbox().is_none() {
        return;
    }
    let (_tmp, dir) = project();
    let me = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    for ms in 0..24 {
        let status = std::process::Command::new(&me)
            .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
            .env(EXITING_HOST, format!("{ms}:{}", dir.display()))
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "the host ({ms} ms) failed: {status}");
    }
    // Every process still named after the directory (bubblewrap's arguments hold it), once
    // those being killed had the time to end.
    let mark = dir.display().to_string();
    let left = || -> Vec<(String, String)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(&mark) {
                found.push((pid, cmdline));
            }
        }
        found
    };
    let start = std::time::Instant::now();
    let mut found = left();
    while !found.is_empty() && start.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        found = left();
    }
    for (pid, _) in &found {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    assert!(found.is_empty(), "left behind: {found:?}");
}
