//! No data loss: Write and Edit replace a file in one step, so a process killed at any moment
//! leaves the old content or the new, never a truncated or mixed file; a write the file system
//! refuses (a full disk, simulated with RLIMIT_FSIZE) leaves the original as it was, with a
//! clear error.
//!
//! `TOOLGATE_CRASH_RUNS` sets how many kills the crash test makes (default 200).

#![allow(clippy::unwrap_used)] // helpers outside #[test] functions fail the test the same way

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The content of version `i`: 64 KiB, every line naming the version, so a mix of two is seen.
fn version(i: usize) -> String {
    format!("version {i:04} {}\n", "x".repeat(50)).repeat(1100)
}

/// A transcript: Read the file, then Write versions 1..=n, one turn each.
fn transcript(file: &Path, n: usize) -> String {
    let path = file.display().to_string();
    let mut turns = vec![
        serde_json::json!([{"type": "tool_use", "id": "r", "name": "Read",
        "input": {"file_path": path, "limit": 1}}]),
    ];
    for i in 1..=n {
        turns.push(
            serde_json::json!([{"type": "tool_use", "id": format!("w{i}"), "name": "Write",
            "input": {"file_path": path, "content": version(i)}}]),
        );
    }
    serde_json::to_string(&turns).unwrap()
}

/// A small deterministic generator for the kill delays.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn a_write_killed_at_any_moment_leaves_one_whole_version() {
    let runs: usize = std::env::var("TOOLGATE_CRASH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let file = ws.join("data.txt");
    std::fs::write(&file, version(0)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    const WRITES: usize = 40;
    let turns = d.path().join("turns.json");
    std::fs::write(&turns, transcript(&file, WRITES)).unwrap();
    let valid: BTreeSet<String> = (0..=WRITES).map(version).collect();
    let mut rng = Lcg(0x5eed);
    let (mut mid_run, mut seen_versions) = (0, BTreeSet::new());
    for run in 0..runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .arg("run")
            .arg(&turns)
            .args(["--dir"])
            .arg(&ws)
            .args(["--mode", "acceptEdits"])
            .env("HOME", d.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % 300_000));
        let killed = child.kill().is_ok();
        let status = child.wait().unwrap();
        if killed && !status.success() {
            mid_run += 1;
        }
        let now = std::fs::read_to_string(&file).unwrap();
        assert!(
            valid.contains(&now),
            "run {run}: the file is not one whole version ({} bytes)",
            now.len()
        );
        seen_versions.insert(now.get(8..12).unwrap_or_default().to_owned());
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "run {run}: the mode changed");
    }
    // A kill between creating the temporary file and renaming it leaves that file behind
    // (never the data file half written); count them.
    let leftovers = std::fs::read_dir(&ws)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".toolgate-write-")
        })
        .count();
    eprintln!(
        "{runs} runs, {mid_run} killed mid-run, {runs} files checked whole, {} different versions found intact, {leftovers} temporary files left by kills",
        seen_versions.len()
    );
    assert!(
        mid_run > runs / 2,
        "most runs must be killed while writing: {mid_run}"
    );
    assert!(
        seen_versions.len() > 3,
        "kills landed at too few points: {seen_versions:?}"
    );
}

#[test]
fn a_full_disk_refuses_the_write_and_keeps_the_original() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let file = ws.join("data.txt");
    let original = "short original\n";
    std::fs::write(&file, original).unwrap();
    let turns = d.path().join("turns.json");
    std::fs::write(&turns, transcript(&file, 1)).unwrap();
    // At most 8 KiB per file for the child (RLIMIT_FSIZE), with SIGXFSZ ignored so the write
    // fails with EFBIG instead of killing the process: what a full disk looks like to it.
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 16; exec \"$0\" run \"$1\" --dir \"$2\" --mode acceptEdits")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(&turns)
        .arg(&ws)
        .env("HOME", d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let write = &lines[1];
    assert_eq!(write["is_error"], true, "{write}");
    let text = write["content"].as_str().unwrap();
    assert!(
        text.contains("Cannot write") && text.contains("too large"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let leftovers: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "data.txt")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn a_read_only_file_system_refuses_the_write_and_keeps_the_original() {
    // A real read-only file system: a tmpfs remounted read-only in a user and mount namespace
    // of our own (no privileges needed where user namespaces are allowed).
    if !Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: user and mount namespaces are not available here");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let file = mnt.join("ws/data.txt");
    let turns = d.path().join("turns.json");
    std::fs::write(&turns, transcript(&file, 1)).unwrap();
    let script = "mount -t tmpfs none \"$1\" && mkdir \"$1/ws\" && printf 'the original\\n' > \"$1/ws/data.txt\" \
        && mount -o remount,ro \"$1\" && \"$0\" run \"$2\" --dir \"$1/ws\" --mode acceptEdits && echo '--after--' && cat \"$1/ws/data.txt\" && ls -a \"$1/ws\"";
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", script])
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(&mnt)
        .arg(&turns)
        .env("HOME", d.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (results, after) = stdout.split_once("--after--\n").unwrap();
    let write: serde_json::Value = serde_json::from_str(results.lines().nth(1).unwrap()).unwrap();
    assert_eq!(write["is_error"], true, "{write}");
    let text = write["content"].as_str().unwrap();
    assert!(
        text.contains("Cannot write") && text.contains("Read-only file system"),
        "{text}"
    );
    let mut rest = after.lines();
    assert_eq!(rest.next(), Some("the original"));
    let names: Vec<&str> = rest.filter(|n| !matches!(*n, "." | "..")).collect();
    assert_eq!(names, ["data.txt"], "nothing else was left");
}
