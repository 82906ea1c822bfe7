//! Benchmarks, each measured side by side with a reference tool in the same run.
//!
//! `read`: a 2,000-line window at the end of a generated file (1 GiB by default), read by
//! toolgate's Read (the release `toolgate run` binary, end to end: process start, session,
//! pipeline, output) and by `sed -n`, alternating, five runs each. Reports the median wall time
//! and the peak resident memory of each, and their ratios.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

const RUNS: usize = 5;
const WINDOW: u64 = 2000;

fn line(i: u64) -> String {
    format!(
        "{i:010} the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs\n"
    )
}

/// Generate (once) a file of about `size_mib` MiB of numbered lines; returns its line count.
fn generate(path: &Path, size_mib: u64) -> anyhow::Result<u64> {
    let target = size_mib * 1024 * 1024;
    let per_line = line(0).len() as u64;
    let lines = target.div_ceil(per_line);
    if std::fs::metadata(path).is_ok_and(|m| m.len() == lines * per_line) {
        return Ok(lines);
    }
    eprintln!(
        "generating {} ({size_mib} MiB, {lines} lines)...",
        path.display()
    );
    let tmp = path.with_extension("partial");
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    for i in 1..=lines {
        f.write_all(line(i).as_bytes())?;
    }
    f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(lines)
}

/// The argument that makes xtask act as a minimal spawner (see [`spawn_and_measure`]).
pub const MEASURE_ARG: &str = "__measure";

/// Wall time and peak RSS (KiB) of one command, measured by a fresh xtask process in its
/// minimal mode. On Linux a child's peak RSS includes the RSS of the process that spawned it
/// (folded in at `exec`), so the spawner must be small; its own floor is reported beside.
fn measure(cmd: &Command) -> anyhow::Result<(Duration, u64)> {
    let exe = std::env::current_exe()?;
    let out = Command::new(exe)
        .arg(MEASURE_ARG)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    match (
        out.status.success(),
        parts.next().and_then(|v| v.parse().ok()),
        parts.next().and_then(|v| v.parse().ok()),
    ) {
        (true, Some(ns), Some(kib)) => Ok((Duration::from_nanos(ns), kib)),
        _ => bail!("measuring {cmd:?} failed: {text}"),
    }
}

/// The minimal spawner: run `args` with output discarded, wait for it with `wait4`, print
/// "<nanoseconds> <peak RSS KiB>". Runs before any runtime starts, to keep its own RSS small.
#[allow(unsafe_code)]
pub fn spawn_and_measure(args: &[std::ffi::OsString]) -> i32 {
    let Some((program, rest)) = args.split_first() else {
        return 2;
    };
    let start = Instant::now();
    let Ok(child) = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
    else {
        return 3;
    };
    let Ok(pid) = i32::try_from(child.id()) else {
        return 3;
    };
    let mut status = 0;
    // SAFETY: wait4 only writes into the two locals passed; std has no API for a child's
    // resource usage, and this child is waited for nowhere else.
    let (rc, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::wait4(pid, &mut status, 0, &mut usage);
        (rc, usage)
    };
    let elapsed = start.elapsed();
    if rc != pid || !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return 4;
    }
    println!("{} {}", elapsed.as_nanos(), usage.ru_maxrss);
    0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub async fn read(size_mib: u64) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(format!("read-{size_mib}mib.txt"));
    let lines = generate(&file, size_mib)?;
    let first = lines - WINDOW + 1;

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--release", "--quiet", "-p", "toolgate"])
        .current_dir(&root)
        .status()?;
    if !status.success() {
        bail!("building toolgate failed");
    }
    let toolgate = root.join("target/release/toolgate");
    let transcript = dir.join("read-window.json");
    let call = serde_json::json!([[{"type": "tool_use", "id": "bench", "name": "Read",
        "input": {"file_path": file.display().to_string(), "offset": first, "limit": WINDOW}}]]);
    std::fs::write(&transcript, call.to_string())?;
    let ours = || {
        let mut c = Command::new(&toolgate);
        c.arg("run").arg(&transcript).arg("--workspace").arg(&dir);
        c
    };
    let sed = || {
        let mut c = Command::new("sed");
        c.arg("-n").arg(format!("{first},{lines}p")).arg(&file);
        c
    };
    check_same_window(ours(), sed(), first)?;

    let (_, floor) = measure(&Command::new("true"))?;
    let (mut our_times, mut sed_times, mut our_rss, mut sed_rss) = (Vec::new(), Vec::new(), 0, 0);
    for _ in 0..RUNS {
        let (t, r) = measure(&ours())?;
        our_times.push(t);
        our_rss = our_rss.max(r);
        let (t, r) = measure(&sed())?;
        sed_times.push(t);
        sed_rss = sed_rss.max(r);
    }
    let (ot, st) = (median(our_times), median(sed_times));
    let size = std::fs::metadata(&file)?.len();
    println!(
        "read: lines {first}-{lines} ({WINDOW} lines) at the end of a {:.0} MiB file, {RUNS} runs each, alternating",
        size as f64 / 1048576.0
    );
    println!("{:<28} {:>12} {:>16}", "", "median time", "peak memory");
    println!(
        "{:<28} {:>9.1} ms {:>12.1} MiB",
        "toolgate run (Read)",
        ot.as_secs_f64() * 1e3,
        our_rss as f64 / 1024.0
    );
    println!(
        "{:<28} {:>9.1} ms {:>12.1} MiB",
        "sed -n",
        st.as_secs_f64() * 1e3,
        sed_rss as f64 / 1024.0
    );
    println!(
        "(peak memory cannot read below the spawner's own {:.1} MiB, measured with `true`)",
        floor as f64 / 1024.0
    );
    println!(
        "ratio toolgate/sed: time {:.2}x, memory {:.2}x",
        ot.as_secs_f64() / st.as_secs_f64(),
        our_rss as f64 / sed_rss.max(1) as f64
    );
    Ok(())
}

/// Both tools must produce the same window: our numbered lines are sed's lines.
fn check_same_window(mut ours: Command, mut sed: Command, first: u64) -> anyhow::Result<()> {
    let out = ours.output().context("running toolgate")?;
    let sed_out = sed.output().context("running sed")?;
    let result: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap_or_default())
            .with_context(|| {
                format!("toolgate printed: {}", String::from_utf8_lossy(&out.stdout))
            })?;
    let content = result["content"].as_str().unwrap_or_default();
    let ours: Vec<&str> = content
        .lines()
        .map(|l| l.split_once('\t').map_or(l, |(_, t)| t))
        .collect();
    let sed_text = String::from_utf8_lossy(&sed_out.stdout);
    let theirs: Vec<&str> = sed_text.lines().collect();
    if ours != theirs || !content.starts_with(&format!("{first}\t")) {
        bail!(
            "toolgate and sed disagree on the window ({} vs {} lines): {}",
            ours.len(),
            theirs.len(),
            &content[..content.len().min(300)]
        );
    }
    Ok(())
}
