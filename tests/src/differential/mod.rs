//! A differential test of the Bash analyser against the real bash.
//!
//! A generator ([`generate`]) writes bash command lines from a grammar (lists, pipelines,
//! subshells, groups, every quoting style, continuations, comments, brace/tilde/parameter/
//! arithmetic expansion, command and process substitution, here-documents, redirections,
//! `command`/`exec`/`eval`/`time`, `cd`, `[[ ]]`, `if`/`for`/`while`), reproducible from a
//! seed and a line number. A runner ([`run_bash`]) runs each line with `/bin/bash --noprofile
//! --norc -c` in a fresh directory whose `PATH` holds only logging shims ([`PROGRAMS`]), so the
//! log says exactly which programs bash executed, with which argv and in which directory. The
//! analyser's [`claim`] about the line is then compared with that log: when the claim is
//! [`Claim::Known`], the claimed multiset of argvs (and directories, where claimed) must equal
//! the executed one. The generator only writes lines in which every command it lists runs
//! (`&&` after a success, `||` after a failure, skipped branches are `:`), so equality is the
//! rule, with no allowance for conditionals.
//!
//! The generator also carries its own model of what bash runs ([`Generated::expected`]); a line
//! where bash does not run that is a harness error (the generator is wrong), reported apart
//! from the analyser's disagreements.

mod ast;
mod claim;
mod grammar;
mod oracle;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use claim::{BASH_BUILTINS, Claim, ClaimedUnit, claim};
pub use grammar::{Generated, generate};
pub use oracle::World;
pub use run::{Executed, Shims, run_bash, stage};

/// The programs the shims stand for: the names the generator runs. Builtins among them are
/// disabled with `enable -n` ([`DISABLED_BUILTINS`]) so bash looks them up in `PATH`.
pub const PROGRAMS: &[&str] = &[
    "p1", "p2", "p3", "a", "b", "rm", "cat", "curl", "git", "echo", "printf", "true", "pwd",
    "test", "kill", "f1", "false",
];

/// The shims that exit 1 (the others exit 0).
pub const FAILING: &[&str] = &["f1", "false"];

/// Bash builtins disabled before each line, so that the shims of the same name run.
pub const DISABLED_BUILTINS: &[&str] = &["echo", "printf", "true", "false", "pwd", "test", "kill"];

/// What an argument naming a process substitution's pipe (`/dev/fd/63`) is compared as.
pub const PROC_SUB_PATH: &str = "/dev/fd/*";

/// A program bash executed (or the oracle says it executes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unit {
    /// Its argv, argv\[0\] being the name bash looked up.
    pub argv: Vec<String>,
    /// The directory it ran in.
    pub cwd: PathBuf,
}

/// Every `/dev/fd/N` in `arg` (a process substitution's path, whole or inside a
/// substitution's output) written as [`PROC_SUB_PATH`], the rest as is.
pub fn normalize_arg(arg: &str) -> String {
    const FD: &str = "/dev/fd/";
    let mut out = String::new();
    let mut rest = arg;
    while let Some(at) = rest.find(FD) {
        let after = &rest[at + FD.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&rest[..at]);
        if digits > 0 {
            out.push_str(PROC_SUB_PATH);
        } else {
            out.push_str(FD);
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

fn normalized(argv: &[String]) -> Vec<String> {
    argv.iter().map(|a| normalize_arg(a)).collect()
}

/// Does the claim list exactly what ran? Units that claim a directory must match one that ran
/// there; the others match any directory.
pub fn claim_matches(claimed: &[ClaimedUnit], executed: &[Unit]) -> bool {
    if claimed.len() != executed.len() {
        return false;
    }
    let mut left: Vec<(Vec<String>, &Path)> = executed
        .iter()
        .map(|u| (normalized(&u.argv), u.cwd.as_path()))
        .collect();
    let (with_cwd, without): (Vec<&ClaimedUnit>, Vec<&ClaimedUnit>) =
        claimed.iter().partition(|c| c.cwd.is_some());
    for c in with_cwd.into_iter().chain(without) {
        let argv = normalized(&c.argv);
        let hit = left.iter().position(|(a, d)| {
            *a == argv
                && c.cwd.as_deref().is_none_or(|want| {
                    oracle::join_norm(Path::new("/"), &want.display().to_string()) == *d
                })
        });
        match hit {
            Some(i) => {
                left.swap_remove(i);
            }
            None => return false,
        }
    }
    true
}

/// Do two lists of units hold the same units, whatever the order?
pub fn same_units(a: &[Unit], b: &[Unit]) -> bool {
    let key = |units: &[Unit]| {
        let mut v: Vec<(Vec<String>, PathBuf)> = units
            .iter()
            .map(|u| (normalized(&u.argv), u.cwd.clone()))
            .collect();
        v.sort();
        v
    };
    key(a) == key(b)
}

/// What came of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The claim was known and equal to what ran.
    Agree,
    /// The analyser said it does not know.
    Unknown,
    /// The claim was known and not what ran.
    Disagree,
    /// Bash did not run what the generator meant (the harness is wrong), with why.
    Harness(String),
}

/// One line's run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Its number in the run.
    pub index: u64,
    /// The line.
    pub line: String,
    /// Where it ran.
    pub world: World,
    /// What the analyser claimed.
    pub claim: Claim,
    /// What the generator meant bash to run.
    pub expected: Vec<Unit>,
    /// What bash ran.
    pub executed: Vec<Unit>,
    /// The verdict.
    pub verdict: Verdict,
}

impl Outcome {
    fn show_path(&self, p: &str) -> String {
        let root = self
            .world
            .ws
            .parent()
            .map(|r| r.display().to_string())
            .unwrap_or_default();
        if root.is_empty() {
            p.to_owned()
        } else {
            p.replace(&root, "$ROOT")
        }
    }

    fn show_units<'a>(
        &self,
        units: impl Iterator<Item = (&'a [String], Option<&'a Path>)>,
    ) -> String {
        let shown: Vec<String> = units
            .map(|(argv, cwd)| {
                let argv: Vec<String> = argv.iter().map(|a| self.show_path(a)).collect();
                let argv = serde_json::to_string(&argv).unwrap_or_default();
                match cwd {
                    Some(d) => format!("{argv}@{}", self.show_path(&d.display().to_string())),
                    None => argv,
                }
            })
            .collect();
        format!("[{}]", shown.join(", "))
    }

    /// The line as a JSON string, then what was claimed and what ran (paths under the line's
    /// temporary root shown as `$ROOT`), one line each.
    pub fn report(&self) -> String {
        let line = serde_json::to_string(&self.line).unwrap_or_default();
        let claimed = match &self.claim {
            Claim::Unknown => "unknown".to_owned(),
            Claim::Known(units) => {
                self.show_units(units.iter().map(|u| (u.argv.as_slice(), u.cwd.as_deref())))
            }
        };
        let executed = self.show_units(
            self.executed
                .iter()
                .map(|u| (u.argv.as_slice(), Some(u.cwd.as_path()))),
        );
        let mut out = format!("{line}\n  claimed:  {claimed}\n  executed: {executed}");
        if let Verdict::Harness(why) = &self.verdict {
            let expected = self.show_units(
                self.expected
                    .iter()
                    .map(|u| (u.argv.as_slice(), Some(u.cwd.as_path()))),
            );
            out.push_str(&format!("\n  expected: {expected}\n  harness:  {why}"));
        }
        out
    }
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// How many lines.
    pub lines: u64,
    /// The seed; line `i` is generated from `(seed, i)`.
    pub seed: u64,
    /// Lines run at once.
    pub threads: usize,
    /// How long one line may run before its process group is killed.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            lines: 1000,
            seed: 1,
            threads: 4,
            timeout: Duration::from_secs(20),
        }
    }
}

/// The figures of a run.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Lines run.
    pub lines: u64,
    /// Lines whose claim was known.
    pub known: u64,
    /// The lines where a known claim was not what ran, by line number.
    pub disagreements: Vec<Outcome>,
    /// The lines where bash did not run what the generator meant, by line number.
    pub harness_errors: Vec<Outcome>,
}

impl Summary {
    /// The share of lines with a known claim, in percent.
    pub fn known_percent(&self) -> f64 {
        if self.lines == 0 {
            0.0
        } else {
            self.known as f64 * 100.0 / self.lines as f64
        }
    }
}

/// Run one line: stage its directory, generate it, run bash, ask the analyser, compare.
pub fn run_one(
    shims: &Shims,
    seed: u64,
    index: u64,
    timeout: Duration,
) -> std::io::Result<Outcome> {
    let (dir, world) = stage()?;
    let generated = generate(seed, index, &world);
    let ran = run_bash(shims, &world, &generated.line, timeout)?;
    let claimed = claim(&generated.line, &world.ws, &world.home);
    let verdict = if let Some(why) = &ran.problem {
        Verdict::Harness(why.clone())
    } else if !same_units(&generated.expected, &ran.units) {
        Verdict::Harness(format!(
            "bash ran other programs than the generator meant (stderr: {:?})",
            ran.stderr
        ))
    } else {
        match &claimed {
            Claim::Unknown => Verdict::Unknown,
            Claim::Known(units) if claim_matches(units, &ran.units) => Verdict::Agree,
            Claim::Known(_) => Verdict::Disagree,
        }
    };
    drop(dir);
    Ok(Outcome {
        index,
        line: generated.line,
        world,
        claim: claimed,
        expected: generated.expected,
        executed: ran.units,
        verdict,
    })
}

/// Run a given line (not a generated one) through bash and the analyser. There is no
/// generator model to check bash against, so the verdict is only about the claim.
pub fn check_line(shims: &Shims, line: &str, timeout: Duration) -> std::io::Result<Outcome> {
    let (dir, world) = stage()?;
    let ran = run_bash(shims, &world, line, timeout)?;
    let claimed = claim(line, &world.ws, &world.home);
    let verdict = match (&ran.problem, &claimed) {
        (Some(why), _) => Verdict::Harness(why.clone()),
        (None, Claim::Unknown) => Verdict::Unknown,
        (None, Claim::Known(units)) if claim_matches(units, &ran.units) => Verdict::Agree,
        (None, Claim::Known(_)) => Verdict::Disagree,
    };
    drop(dir);
    Ok(Outcome {
        index: 0,
        line: line.to_owned(),
        world,
        claim: claimed,
        expected: Vec::new(),
        executed: ran.units,
        verdict,
    })
}

/// Run `opts.lines` lines on `opts.threads` threads; `each` sees every outcome as it comes.
pub fn run_many(opts: &Options, each: impl Fn(&Outcome) + Sync) -> std::io::Result<Summary> {
    let shims = Shims::new()?;
    let next = AtomicU64::new(0);
    let outcomes: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..opts.threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= opts.lines {
                        break;
                    }
                    match run_one(&shims, opts.seed, i, opts.timeout) {
                        Ok(o) => {
                            each(&o);
                            if let Ok(mut v) = outcomes.lock() {
                                v.push(o);
                            }
                        }
                        Err(e) => {
                            if let Ok(mut f) = failure.lock() {
                                f.get_or_insert(e);
                            }
                            next.store(opts.lines, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|o| o.index);
    let mut summary = Summary {
        lines: outcomes.len() as u64,
        ..Summary::default()
    };
    for o in outcomes {
        if matches!(o.claim, Claim::Known(_)) {
            summary.known += 1;
        }
        match o.verdict {
            Verdict::Disagree => summary.disagreements.push(o),
            Verdict::Harness(_) => summary.harness_errors.push(o),
            Verdict::Agree | Verdict::Unknown => {}
        }
    }
    Ok(summary)
}
