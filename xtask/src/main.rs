//! `cargo xtask`: conformance, bench and ci for the toolgate workspace.

mod bench;
mod conformance;
mod differential;
mod effects;
mod explore;
mod guard_e2e;
mod mutate;
mod progress;
mod record;
mod security;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "toolgate's project tasks")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Run oracle scenarios and compare with their recorded results: tests/conformance, or
    /// DIR (laid out as DIR/scenarios/*.json + DIR/results/*.json).
    Conformance {
        /// Another scenario folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Run a benchmark and print the figures beside the reference tool's (`read`).
    Bench {
        /// Which benchmark: read, grep, rules, hooks, pipeline, guard, sandbox or mcp.
        which: String,
        /// Size of the generated file in MiB (read; default 1024).
        #[arg(long, default_value_t = 1024)]
        size_mib: u64,
    },
    /// Run permission decision cases: every `*.jsonl` directly in tests/security by default
    /// (not its sub-folders).
    Security {
        /// A case file, or a folder whose `*.jsonl` files are read (not recursively); with
        /// --mutate, the cases mutated.
        #[arg(long)]
        cases: Option<PathBuf>,
        /// Instead of the cases, run this many meaning-preserving variants of the cases of
        /// every tests/security/*.jsonl file and fail when one is decided more weakly.
        #[arg(long)]
        mutate: Option<usize>,
        /// The seed the variants are generated from (with --mutate).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write a findings summary (counts, one minimal example per failure class) to
        /// this file (with --mutate).
        #[arg(long)]
        findings: Option<PathBuf>,
        /// Run N generated command lines through bash and the analyser instead of the cases.
        #[arg(long, value_name = "N")]
        differential: Option<u64>,
        /// Run the lines of a findings file (JSON strings, one a line) through bash and the
        /// analyser instead of generated ones.
        #[arg(long, value_name = "FILE")]
        differential_file: Option<PathBuf>,
        /// Lines run at once (with --differential).
        #[arg(long, default_value_t = 4)]
        threads: usize,
        /// Run every Bash case that can be staged for real, inside the sandbox, and check
        /// what it did: fails when an effect breaks a deny rule, a protected path, the
        /// working-directory boundary for writes or the network policy.
        #[arg(long)]
        effects: bool,
        /// With --effects: allow every call (the analysis switched off), so only the sandbox
        /// and the exec supervisor stand between a command and its effect.
        #[arg(long, requires = "effects")]
        assume_allow: bool,
        /// With --effects: run the commands without the sandbox, to see the cases' attacks do
        /// harm when nothing stops them (a check of the harness; exits 1 when none did).
        #[arg(long, requires = "effects")]
        unconfined: bool,
        /// Inside an effects run's container: run the case this file describes.
        #[arg(long, hide = true, value_name = "FILE")]
        effects_inner: Option<PathBuf>,
    },
    /// The real Claude Code with `toolgate guard` installed (matcher `*`), through a session
    /// that calls every tool it offers, MCP tools of a stub server included, compared with the
    /// same session without the guard: no prompt and no denial for a benign call, a refusal
    /// for every harmful one. Installs Claude Code for the oracle under target/oracle (npm).
    GuardE2e,
    /// Run the fuzz targets (rules, policy files, settings, Bash lines, hook output, whole tool
    /// calls) with fresh seeds for MINUTES, keeping every failing input, shrunk, in
    /// `tests/fuzz/<target>.txt` (which the tests replay).
    Fuzz {
        /// How long to run, in minutes.
        #[arg(long, default_value_t = 1.0)]
        minutes: f64,
        /// Only this target.
        #[arg(long)]
        target: Option<String>,
        /// Cases per round of one target.
        #[arg(long, default_value_t = 256)]
        cases: u32,
    },
    /// Generate COUNT scenarios from SEED, record each with the real Claude Code through the
    /// oracle, run toolgate on them as `conformance` does, and print the differences grouped
    /// by signature (one smallest scenario per group in OUT/triage).
    Explore {
        /// The seed; a seed and an index reproduce a scenario exactly.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// How many scenarios.
        #[arg(long, default_value_t = 200)]
        count: u64,
        /// The Claude Code binary to record with (default: the one `record` installs under
        /// target/oracle).
        #[arg(long)]
        claude: Option<PathBuf>,
        /// Where scenarios, results and triage go (default target/explore/SEED).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Oracle runs at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
    },
    /// Record scenarios with the real Claude Code, offline: installs it from the npm registry
    /// under target/oracle on first use, runs it in a loopback-only network namespace against a
    /// scripted Messages API, and writes each record to `results/` beside the scenario's
    /// `scenarios/` folder (or --results-dir), unless it says what the committed record says.
    Record {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Where records go (default: `../results` of a scenario in a `scenarios` folder;
        /// otherwise the tool results are printed).
        #[arg(long)]
        results_dir: Option<PathBuf>,
        /// Only compare with the committed records; exit 1 when one differs or is missing.
        #[arg(long)]
        check: bool,
        /// The Claude Code binary (default: the one installed under target/oracle).
        #[arg(long)]
        claude: Option<PathBuf>,
        /// Recordings at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
    },
    /// Inside the recorder's network namespace: record one scenario into OUT.
    #[command(hide = true)]
    RecordIsolated {
        #[arg(long)]
        claude: PathBuf,
        scenario: PathBuf,
        out: PathBuf,
    },
    /// Exactly what .ci/run runs: installs what the tests need beyond the Rust toolchain when
    /// it is missing (bubblewrap, pytest), then format and lint checks (tool-core also without
    /// its default features), the docs with warnings denied, the tests (the examples'
    /// included), the conformance suite, the security cases, the mutation gate and the guard's
    /// end-to-end run with the real Claude Code.
    Ci {
        /// The long variants of the reliability tests: 2,000 crash injections, 10,000 fuzz
        /// cases per target, 100,000 calls in the load test.
        #[arg(long)]
        long: bool,
    },
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == bench::MEASURE_ARG) {
        std::process::exit(bench::spawn_and_measure(&args[2..]));
    }
    if args.get(1).is_some_and(|a| a == bench::ECHO_SERVER_ARG) {
        std::process::exit(bench::echo_server());
    }
    tokio::runtime::Runtime::new()?.block_on(run(Cli::parse()))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Task::Conformance { dir } => {
            let dir = dir.unwrap_or_else(|| workspace_root().join("tests/conformance"));
            build_toolgate()?;
            let (pass, fail, skip) = conformance::run_dir(&dir).await?;
            println!("{pass} passed, {fail} failed, {skip} skipped");
            if fail > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Fuzz {
            minutes,
            target,
            cases,
        } => fuzz(minutes, target.as_deref(), cases),
        Task::GuardE2e => guard_e2e::run(),
        Task::Bench { which, size_mib } => match which.as_str() {
            "read" => bench::read(size_mib).await,
            "grep" => bench::grep().await,
            "rules" => bench::rules(),
            "hooks" => bench::hooks().await,
            "pipeline" => bench::pipeline().await,
            "guard" => bench::guard(),
            "sandbox" => bench::sandbox().await,
            "sandbox-exec" => bench::sandbox_exec().await,
            "mcp" => bench::mcp().await,
            other => {
                bail!(
                    "unknown benchmark `{other}` (available: read, grep, rules, hooks, pipeline, guard, sandbox, sandbox-exec, mcp)"
                )
            }
        },
        Task::Security {
            effects_inner: Some(spec),
            ..
        } => effects::inner(&spec).await,
        Task::Security {
            effects: true,
            cases,
            assume_allow,
            unconfined,
            ..
        } => {
            // By default the decision cases and the attacks written for this run
            // (`tests/security/effects`, which the decision suite does not read).
            let files = match cases {
                Some(source) => security::case_files(&source)?,
                None => {
                    let mut f = security::case_files(&workspace_root().join("tests/security"))?;
                    f.extend(security::case_files(
                        &workspace_root().join("tests/security/effects"),
                    )?);
                    f
                }
            };
            let opts = effects::Options {
                assume_allow,
                unconfined,
            };
            // Unconfined, the run checks the harness: it must see harm.
            if effects::run(&files, opts)? == unconfined {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Security {
            differential: Some(lines),
            seed,
            threads,
            ..
        } => {
            if !differential::run(lines, seed, threads)? {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Security {
            differential_file: Some(file),
            ..
        } => {
            if !differential::run_file(&file)? {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Security {
            cases,
            mutate: Some(n),
            seed,
            findings,
            ..
        } => {
            let source = cases.unwrap_or_else(|| workspace_root().join("tests/security"));
            let files = security::case_files(&source)?;
            let weaker = mutate::run(&files, n, seed, findings.as_deref())?;
            if weaker > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Security { cases, .. } => {
            let source = cases.unwrap_or_else(|| workspace_root().join("tests/security"));
            let files = security::case_files(&source)?;
            let (pass, fail, skip, unsafe_) = security::run(&files)?;
            if unsafe_ > 0 {
                println!("{unsafe_} UNSAFE: expected deny or ask, got allow");
            }
            println!("{pass} passed, {fail} failed, {skip} skipped");
            if fail > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        Task::Explore {
            seed,
            count,
            claude,
            out,
            jobs,
        } => {
            let out =
                out.unwrap_or_else(|| workspace_root().join(format!("target/explore/{seed}")));
            let opts = explore::Options {
                seed,
                count,
                claude,
                out,
                jobs,
            };
            explore::explore(&opts).await?;
            Ok(())
        }
        Task::Record {
            scenarios,
            results_dir,
            check,
            claude,
            jobs,
        } => {
            let differing = record::run(
                &scenarios,
                results_dir.as_deref(),
                check,
                claude.as_deref(),
                jobs,
            )?;
            if check && differing > 0 {
                eprintln!("{differing} records differ from the committed ones");
                std::process::exit(1);
            }
            Ok(())
        }
        Task::RecordIsolated {
            claude,
            scenario,
            out,
        } => record::record_isolated(&scenario, &claude, &out),
        Task::Ci { long } => ci(long),
    }
}

/// The mutation gate in `cargo xtask ci`: 2,000 meaning-preserving variants of the security
/// cases (fixed seed), failing when one is decided more weakly than its case expects.
const MUTATION_GATE: &[&str] = &[
    "run",
    "--quiet",
    "--package",
    "xtask",
    "--",
    "security",
    "--mutate",
    "2000",
    "--seed",
    "20240501",
];

/// The environment of the long reliability tests (`cargo xtask ci --long`).
const LONG_TESTS: &[(&str, &str)] = &[
    ("TOOLGATE_CRASH_RUNS", "2000"),
    ("TOOLGATE_FUZZ_CASES", "10000"),
    ("TOOLGATE_LOAD_CALLS", "100000"),
];

/// One step of `cargo xtask ci`: cargo's arguments, and environment variables to set.
type Step<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);

/// Is `program` on the PATH and does `program arg` succeed?
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The real parts the tests need that the Rust toolchain does not bring: bubblewrap (the
/// sandbox), from Debian's packages; pytest (one benign-work test), from PyPI. Installed when
/// missing and possible, with a clear message otherwise. Returns whether the sandbox works
/// here, so the tests can insist on it.
fn ensure_real_parts() -> bool {
    if !runs("bwrap", &["--version"]) {
        eprintln!(
            "bubblewrap (bwrap) is missing: installing it with apt-get (Debian package `bubblewrap`)"
        );
        let installed = runs("apt-get", &["install", "-y", "-q", "bubblewrap"])
            || (runs("apt-get", &["update", "-q"])
                && runs("apt-get", &["install", "-y", "-q", "bubblewrap"]));
        if !installed {
            eprintln!(
                "WARNING: bubblewrap could not be installed here (apt-get missing, no root, or no package registry). \
                 The sandbox's tests will say they were skipped, and conformance scenarios that need it will fail. \
                 Install it (Debian/Ubuntu: `apt-get install bubblewrap`) and run again."
            );
        }
    }
    let sandbox = match tool_sandbox::Sandbox::detect() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("WARNING: {e}; the sandbox's tests will say they were skipped");
            false
        }
    };
    if runs("python3", &["--version"]) && !runs("python3", &["-m", "pytest", "--version"]) {
        eprintln!(
            "pytest is missing: installing it with pip (for the benign-work test in the sandbox)"
        );
        if !runs("python3", &["-m", "pip", "install", "-q", "pytest"]) {
            eprintln!(
                "pytest could not be installed; its benign-work test will say it was skipped"
            );
        }
    }
    sandbox
}

fn ci(long: bool) -> anyhow::Result<()> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // With the sandbox working here, its tests must run (they fail rather than skip).
    let require_sandbox: &[(&str, &str)] = if ensure_real_parts() {
        &[("TOOLGATE_REQUIRE_SANDBOX", "1")]
    } else {
        &[]
    };
    let mut steps: Vec<Step<'_>> = vec![
        (&["fmt", "--all", "--", "--check"], &[]),
        (
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        ),
        // tool-core without its default `jsonschema` feature, as a policy-only host builds it.
        (
            &[
                "clippy",
                "--package",
                "tool-core",
                "--no-default-features",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        ),
        (
            &["test", "--package", "tool-core", "--no-default-features"],
            &[],
        ),
        // Every public item documented, every intra-doc link resolved.
        (
            &["doc", "--workspace", "--no-deps", "--quiet"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        ),
        // The tests, the examples' included (each runs its example and checks the output).
        (
            &["test", "--workspace", "--no-fail-fast"],
            if long { LONG_TESTS } else { &[] },
        ),
        (
            &["run", "--quiet", "--package", "xtask", "--", "conformance"],
            &[],
        ),
        (
            &["run", "--quiet", "--package", "xtask", "--", "security"],
            &[],
        ),
        (MUTATION_GATE, &[]),
        // The real Claude Code with the guard installed (installs it for the oracle once).
        (
            &["run", "--quiet", "--package", "xtask", "--", "guard-e2e"],
            &[],
        ),
    ];
    if !require_sandbox.is_empty() {
        // Effects, not decisions: every case run for real with the analysis switched off.
        steps.push((
            &[
                "run",
                "--quiet",
                "--package",
                "xtask",
                "--",
                "security",
                "--effects",
                "--assume-allow",
            ],
            &[],
        ));
    }
    for (args, env) in steps {
        let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}='{v}' ")).collect();
        eprintln!("$ {}cargo {}", shown.concat(), args.join(" "));
        let started = std::time::Instant::now();
        let status = Command::new(&cargo)
            .args(args)
            .envs(env.iter().copied())
            .envs(require_sandbox.iter().copied())
            .current_dir(&root)
            .status()
            .with_context(|| format!("running cargo {}", args.join(" ")))?;
        eprintln!(
            "  (cargo {} took {:.0} s)",
            args.first().copied().unwrap_or_default(),
            started.elapsed().as_secs_f64()
        );
        if !status.success() {
            bail!("cargo {} failed ({status})", args.join(" "));
        }
    }
    // The project's recorder against the reference harness: a committed scenario, and the
    // reference's own scenarios give the results it recorded.
    let record = |args: &[String]| -> anyhow::Result<()> {
        let mut all: Vec<String> = [
            "run",
            "--quiet",
            "--package",
            "xtask",
            "--",
            "record",
            "--check",
        ]
        .map(String::from)
        .to_vec();
        all.extend_from_slice(args);
        eprintln!("$ cargo {}", all.join(" "));
        let status = Command::new(&cargo)
            .args(&all)
            .current_dir(&root)
            .status()
            .context("running cargo xtask record")?;
        if !status.success() {
            bail!("cargo {} failed ({status})", all.join(" "));
        }
        Ok(())
    };
    record(&["tests/conformance/scenarios/a_read_then_edit.json".into()])?;
    let reference = root.join("../shared/oracle");
    if reference.join("scenarios").is_dir() {
        record(&[
            "--results-dir".into(),
            reference.join("results").display().to_string(),
            reference.join("scenarios").display().to_string(),
        ])?;
    } else {
        eprintln!(
            "no reference harness at {}: the recorder was checked on a committed scenario only",
            reference.display()
        );
    }
    Ok(())
}

/// Build the `toolgate` program beside this one (`target/<profile>/toolgate`), where the
/// scenario runner finds it for scenarios whose hook command is `toolgate guard`.
pub(crate) fn build_toolgate() -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "--package",
        "toolgate",
        "--bin",
        "toolgate",
    ])
    .current_dir(workspace_root());
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let status = cmd.status().context("building toolgate")?;
    if !status.success() {
        bail!("building toolgate failed ({status})");
    }
    Ok(())
}

/// `cargo xtask fuzz`: round after round of every target, each with a new seed, until the
/// time is up; a failure is printed and its input appended to the target's regression file
/// (once).
fn fuzz(minutes: f64, only: Option<&str>, cases: u32) -> anyhow::Result<()> {
    use std::io::Write as _;
    let root = workspace_root();
    let targets: Vec<_> = toolgate_tests::fuzz::targets()
        .into_iter()
        .filter(|t| only.is_none_or(|o| o == t.name))
        .collect();
    if targets.is_empty() {
        bail!("no fuzz target named {}", only.unwrap_or_default());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(minutes * 60.0);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let (mut rounds, mut total, mut failures) = (0u64, 0u64, 0u64);
    while std::time::Instant::now() < deadline {
        for t in &targets {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            rounds += 1;
            total += u64::from(cases);
            if let Err(f) = (t.run)(cases, seed) {
                failures += 1;
                println!(
                    "FAIL {} (seed {seed}): {}
  input: {}",
                    t.name, f.why, f.input
                );
                let file = toolgate_tests::fuzz::regression_file(&root, t.name);
                let kept = std::fs::read_to_string(&file).unwrap_or_default();
                if !f.input.is_empty() && !kept.lines().any(|l| l == f.input) {
                    std::fs::create_dir_all(file.parent().unwrap_or(&root))?;
                    let mut out = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&file)?;
                    writeln!(out, "{}", f.input)?;
                    println!("  kept in {}", file.display());
                }
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
        }
    }
    println!("{rounds} rounds, {total} cases, {failures} failures");
    if failures > 0 {
        std::process::exit(1);
    }
    Ok(())
}
