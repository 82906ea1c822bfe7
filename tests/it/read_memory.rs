//! Reading a window deep in a large file streams: peak memory stays flat. Measured in a child
//! process (this test binary re-run on one ignored test), so other tests' memory does not
//! count.

use std::io::Write;
use std::process::Command;

use serde_json::json;
use toolgate_tests::{Sandbox, call, peak_rss_kib};

const FILE_ENV: &str = "TOOLGATE_TEST_BIG_FILE";
const LINE: &str = "0123456789 the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz\n";

/// The child side: read lines 2,000,000..2,002,000 and print the peak RSS.
#[tokio::test]
#[ignore = "run by read_window_deep_in_a_large_file_keeps_memory_flat in a child process"]
async fn child_reads_window() {
    let Ok(file) = std::env::var(FILE_ENV) else {
        return;
    };
    let sb = Sandbox::new();
    let mut s = sb.session(&["Read"]);
    let o = call(
        &mut s,
        "Read",
        // 1,000 lines: a window over Read's token budget is refused, as in Claude Code.
        json!({"file_path": file, "offset": 2_000_000, "limit": 1000}),
    )
    .await;
    let text = o.content.to_text();
    assert!(!o.is_error, "{text}");
    assert_eq!(text.lines().count(), 1000);
    assert!(text.starts_with("2000000\t0123456789"));
    println!("PEAK_RSS_KIB={}", peak_rss_kib().unwrap_or(0));
}

#[test]
fn read_window_deep_in_a_large_file_keeps_memory_flat() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc on this system");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let lines = 220 * 1024 * 1024 / LINE.len() + 1;
    {
        let mut f =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        for _ in 0..lines {
            f.write_all(LINE.as_bytes()).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size >= 200 * 1024 * 1024, "the file is {size} bytes");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "read_memory::child_reads_window",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FILE_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak: u64 = stdout
        .lines()
        .find_map(|l| l.split("PEAK_RSS_KIB=").nth(1))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no figure in the child's output:\n{stdout}"));
    // Loading the file would take over 200 MiB; a streamed read stays far below.
    assert!(
        peak > 0 && peak < 64 * 1024,
        "peak RSS {peak} KiB for a {size}-byte file"
    );
}
