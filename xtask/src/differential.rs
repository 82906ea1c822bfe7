//! `cargo xtask security --differential N [--seed S]`: N generated command lines run through
//! the real bash and the Bash analyser (engine: `toolgate_tests::differential`). Prints each
//! disagreement (the line as a JSON string, then the claimed and the executed argvs), the
//! harness errors (bash did not run what the generator meant), the share of known claims, and
//! last `N lines, M disagreements`.

use std::io::Write as _;
use std::time::Duration;

use toolgate_tests::differential::{Claim, Options, Shims, Verdict, check_line, run_many};

/// Run the lines; false when there was a disagreement or a harness error (a run whose harness
/// is wrong proves nothing, so it fails too).
pub(crate) fn run(lines: u64, seed: u64, threads: usize) -> anyhow::Result<bool> {
    let opts = Options {
        lines,
        seed,
        threads,
        timeout: Duration::from_secs(20),
    };
    let summary = run_many(&opts, |_| {})?;
    let mut out = std::io::stdout().lock();
    for o in &summary.disagreements {
        writeln!(
            out,
            "DISAGREE line {} (seed {seed}): {}",
            o.index,
            o.report()
        )?;
    }
    for o in &summary.harness_errors {
        writeln!(
            out,
            "HARNESS line {} (seed {seed}): {}",
            o.index,
            o.report()
        )?;
    }
    writeln!(
        out,
        "{} harness errors (bash did not run what the generator meant)",
        summary.harness_errors.len()
    )?;
    writeln!(
        out,
        "known claims: {} of {} lines ({:.1}%)",
        summary.known,
        summary.lines,
        summary.known_percent()
    )?;
    writeln!(
        out,
        "{} lines, {} disagreements",
        summary.lines,
        summary.disagreements.len()
    )?;
    Ok(summary.disagreements.is_empty() && summary.harness_errors.is_empty())
}

/// Run every line of a findings file (one JSON string a line; blank lines and lines starting
/// with `#` are skipped) through bash and the analyser; false when one disagrees.
pub(crate) fn run_file(path: &std::path::Path) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let shims = Shims::new()?;
    let mut out = std::io::stdout().lock();
    let (mut lines, mut known, mut bad) = (0, 0, 0);
    for (n, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let line: String = serde_json::from_str(raw)
            .map_err(|e| anyhow::anyhow!("{}:{}: not a JSON string: {e}", path.display(), n + 1))?;
        let o = check_line(&shims, &line, Duration::from_secs(20))?;
        lines += 1;
        if matches!(o.claim, Claim::Known(_)) {
            known += 1;
        }
        if o.verdict != Verdict::Agree && o.verdict != Verdict::Unknown {
            bad += 1;
            writeln!(out, "DISAGREE {}:{}: {}", path.display(), n + 1, o.report())?;
        }
    }
    writeln!(out, "known claims: {known} of {lines} lines")?;
    writeln!(out, "{lines} lines, {bad} disagreements")?;
    Ok(bad == 0)
}
