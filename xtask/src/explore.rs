//! `cargo xtask explore --seed S --count N`: generate N scenarios (a seed and an index
//! reproduce a scenario exactly), record each with the real Claude Code (`cargo xtask record`'s
//! recorder, which installs it under `target/oracle`), run toolgate on it as
//! `cargo xtask conformance` does, and group the differences by a signature (tool, field, shape
//! of the first difference). One smallest scenario per group goes to `OUT/triage/`.

mod grammar;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

use crate::conformance::{self, Verdict};

/// What `explore` is asked to do.
pub(crate) struct Options {
    pub(crate) seed: u64,
    pub(crate) count: u64,
    /// The Claude Code binary (default: the recorder's install).
    pub(crate) claude: Option<PathBuf>,
    /// Where scenarios, results and triage go.
    pub(crate) out: PathBuf,
    /// Oracle runs at once.
    pub(crate) jobs: usize,
}

/// Differences toolgate makes on purpose or cannot avoid, by a part of their signature or
/// message, with the reason (listed in the README's compatibility section).
pub(crate) const DECLARED: &[(&str, &str)] = &[
    (
        "Glob order: same lines, another order",
        "Glob keeps files of equal mtime in the order of the file system's directory listings, which differs from machine to machine; toolgate orders them by path",
    ),
    (
        "Killed",
        "the text names the killed process's id, which differs on every run",
    ),
    (
        "the same lines in another order",
        "hooks of calls that run at once append to one file in the order the calls finish, which differs from run to run",
    ),
    (
        "Shell cwd was reset",
        "Claude Code runs the read-only Bash calls of a turn at once on one working directory, so which of them reports a reset working directory depends on timing",
    ),
    (
        "Environment update",
        "which result of a batch carries the working-directory reminder depends on the order its calls finish in (Claude Code: the last to finish; toolgate: the last in block order)",
    ),
    (
        "within its 0s timeout",
        "a Bash timeout below a second races the command: Claude Code lets a command that ends within a few milliseconds finish, toolgate times it out",
    ),
    (
        "PreToolUse: && hook additional context",
        "where a PreToolUse hook's added context lands (a block after the results, or the text of the message's last result) varies from run to run in Claude Code; toolgate puts it after the results",
    ),
    (
        "[SYSTEM NOTIFICATION - NOT USER INPUT]",
        "when a background task's completion notice reaches the model depends on timing",
    ),
    (
        "Command running in background with ID",
        "a Bash timeout of a few milliseconds races the command's start: Claude Code may report the call as started in the background before it ran, toolgate as timed out",
    ),
    (
        "content \"y\\ny\\ny\"",
        "toolgate runs without asking the commands its command database shows only read (here `yes`), where Claude Code's fixed list of read-only commands asks",
    ),
];

/// The reason a difference is declared, if it is.
fn declared(signature: &str, message: &str) -> Option<&'static str> {
    // A needle of several parts joined by ` && ` needs every part.
    let found = |needle: &str| {
        needle
            .split(" && ")
            .all(|part| signature.contains(part) || message.contains(part))
    };
    DECLARED
        .iter()
        .find(|(needle, _)| found(needle))
        .map(|(_, why)| *why)
}

/// Differences toolgate makes on purpose that depend on the scenario, not only on the texts:
/// each a test of the scenario, the call that differs and the first failure, with its reason
/// (listed in the README's compatibility section).
fn declared_case(scenario: &Value, message: &str) -> Option<&'static str> {
    let first = message.lines().next().unwrap_or_default();
    let id = first.split_once(": ").map(|(id, _)| id)?;
    let call = calls(scenario).into_iter().find(|b| b["id"] == id)?;
    let tool = call["name"].as_str().unwrap_or_default();
    let command = call
        .pointer("/input/command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let rules = |lists: &[&str]| -> Vec<String> {
        lists
            .iter()
            .flat_map(|l| {
                scenario
                    .pointer(&format!("/settings/permissions/{l}"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect()
    };
    let content_rule =
        |r: &String, families: &[&str]| families.iter().any(|f| r.starts_with(&format!("{f}(")));
    // toolgate refused (or asked) where Claude Code ran the call, or the reverse.
    let refusal = message.contains("is_error true, recorded false")
        || message.contains("ours:     \"Claude requested permissions")
        || message.contains("ours:     \"Permission to use")
        || message.contains("ours:     \"Permission to read")
        || message.contains("ours:     \"<tool_use_error>File is")
        || message.contains("ours:     \"<tool_use_error>File is covered");
    let restrictive = rules(&["deny", "ask"]);
    if refusal
        && restrictive
            .iter()
            .any(|r| content_rule(r, &["Write", "Grep", "Glob", "LS"]))
    {
        return Some(
            "`Write(…)`, `Grep(…)`, `Glob(…)` and `LS(…)` deny and ask rules are read as the Edit or Read rules they name (CONTRACT item 10: aliased); Claude Code 2.1.332 matches them against nothing",
        );
    }
    if refusal
        && tool == "Bash"
        && restrictive
            .iter()
            .any(|r| content_rule(r, &["Read", "Edit"]))
    {
        return Some(
            "Read and Edit deny and ask rules reach what a Bash line reads and writes (and the directories it enters or lists); Claude Code 2.1.332 lets ask rules and most listings through",
        );
    }
    let shell_state = command.split([';', '&', '|']).any(|part| {
        let w = part.split_whitespace().next().unwrap_or_default();
        matches!(w, "set" | "shopt" | "alias" | "unalias" | "umask") || part.contains("()")
    });
    if tool == "Bash" && shell_state && (refusal || message.contains("requires approval: set")) {
        return Some(
            "a line that changes the shell's own state asks unless a whole-tool Bash allow with no deny or ask rule reaching Bash lets it run (CONTRACT: fail closed)",
        );
    }
    if tool == "Bash" && command.contains("curl") && message.contains("Could not resolve host") {
        return Some(
            "curl prints its progress meter only when an attempt lasts a second or more, which is timing (a quick failure prints the same in both: bb_curl_no_network)",
        );
    }
    // A PreToolUse hook that adds context moves every hook text of the turn out of the results
    // in Claude Code; toolgate appends PostToolUse texts to their result.
    let pre_context = scenario
        .pointer("/fixture/files")
        .and_then(Value::as_object)
        .is_some_and(|files| {
            files.iter().any(|(name, f)| {
                name.starts_with("hook")
                    && f["content"]
                        .as_str()
                        .is_some_and(|c| c.contains("\"PreToolUse\",\"additionalContext\""))
            })
        });
    if pre_context
        && (message.contains("hook blocking error") || message.contains("hook additional context"))
    {
        return Some(
            "where PostToolUse hook texts go in a turn where a PreToolUse hook added context: Claude Code sends them all as blocks after the results, toolgate appends each to its result",
        );
    }
    if message.contains("changed on disk since you last read it") {
        return Some(
            "Claude Code's note that a file it read changed on disk, with the changed lines, is not produced",
        );
    }
    None
}

/// The tool_use blocks of a scenario, in order.
fn calls(scenario: &Value) -> Vec<Value> {
    scenario
        .get("turns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|t| {
            t.as_array()
                .or_else(|| t.get("content").and_then(Value::as_array))
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// One difference: the scenario, its kind and the first failure.
struct Difference {
    name: String,
    size: usize,
    message: String,
    /// Why it is declared, when it is.
    why: Option<&'static str>,
}

/// Generate, record, compare and group. Returns the number of differences.
pub(crate) async fn explore(opts: &Options) -> anyhow::Result<usize> {
    let claude = match &opts.claude {
        Some(c) => c.clone(),
        None => crate::record::install()?,
    };
    let scenarios = opts.out.join("scenarios");
    let results = opts.out.join("results");
    std::fs::create_dir_all(&scenarios)?;
    std::fs::create_dir_all(&results)?;

    // 1. Generate.
    let mut names = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for index in 0..opts.count {
        let g = grammar::scenario(opts.seed, index);
        used.extend(g.used.iter().copied());
        let name = format!("x{}_{index:05}_{}", opts.seed, g.kind);
        let mut s = g.scenario;
        if let Value::Object(o) = &mut s {
            o.insert("name".into(), Value::String(name.clone()));
        }
        let file = scenarios.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&s)? + "\n";
        // A recording is reused only for the very scenario it was made from: when the grammar
        // changed what this seed and index give, the old recording goes.
        if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            let _ = std::fs::remove_file(results.join(format!("{name}.json")));
        }
        std::fs::write(&file, text)?;
        names.push(name);
    }

    // 2. Record what the CLI does (skipping those already recorded).
    let todo: Vec<&String> = names
        .iter()
        .filter(|n| !results.join(format!("{n}.json")).exists())
        .collect();
    eprintln!(
        "recording {} scenarios with the oracle ({} already recorded)",
        todo.len(),
        names.len() - todo.len()
    );
    let chunks: Vec<Vec<&String>> = (0..opts.jobs.max(1))
        .map(|j| {
            todo.iter()
                .enumerate()
                .filter(|(i, _)| i % opts.jobs.max(1) == j)
                .map(|(_, n)| *n)
                .collect()
        })
        .collect();
    let recording = crate::progress::Progress::new("recording", todo.len());
    std::thread::scope(|scope| {
        for chunk in &chunks {
            let (claude, scenarios, results, recording) =
                (&claude, &scenarios, &results, &recording);
            scope.spawn(move || {
                for name in chunk {
                    let made =
                        crate::record::record(&scenarios.join(format!("{name}.json")), claude)
                            .and_then(|r| {
                                let text = serde_json::to_string_pretty(&r)? + "\n";
                                std::fs::write(results.join(format!("{name}.json")), text)?;
                                Ok(())
                            });
                    let ok = made.is_ok();
                    let line = match made {
                        Ok(()) => format!("recorded {name}"),
                        Err(e) => format!("recording failed: {name}: {e:#}"),
                    };
                    recording.step(&line, !ok, !ok);
                }
            });
        }
    });
    recording.finish();

    // 3. Compare.
    let mut groups: BTreeMap<String, Vec<Difference>> = BTreeMap::new();
    let (mut compared, mut skipped) = (0usize, 0usize);
    for name in &names {
        let scenario_file = scenarios.join(format!("{name}.json"));
        let result_file = results.join(format!("{name}.json"));
        if !result_file.exists() {
            skipped += 1;
            continue;
        }
        compared += 1;
        let verdict = conformance::check(&scenario_file, &result_file)
            .await
            .unwrap_or_else(|e| Verdict::Fail(format!("{e:#}")));
        let message = match verdict {
            Verdict::Pass | Verdict::Skip(_) => continue,
            Verdict::Fail(m) => m,
        };
        let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&scenario_file)?)?;
        let sig = signature(&scenario, &message);
        let size = std::fs::metadata(&scenario_file).map_or(0, |m| m.len() as usize);
        let why = declared(&sig, &message).or_else(|| declared_case(&scenario, &message));
        groups.entry(sig).or_default().push(Difference {
            name: name.clone(),
            size,
            message,
            why,
        });
    }

    // 4. Report and triage.
    let triage = opts.out.join("triage");
    let _ = std::fs::remove_dir_all(&triage);
    std::fs::create_dir_all(&triage)?;
    let differences: usize = groups.values().map(Vec::len).sum();
    let mut declared_groups = 0usize;
    let mut ordered: Vec<(&String, &Vec<Difference>)> = groups.iter().collect();
    ordered.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (i, (sig, members)) in ordered.iter().enumerate() {
        let Some(smallest) = members.iter().min_by_key(|d| d.size) else {
            continue;
        };
        let why = smallest.why;
        if why.is_some() {
            declared_groups += 1;
        }
        let tag = why.map_or(String::new(), |w| format!(" [declared: {w}]"));
        println!("GROUP {i:03} ({} scenarios): {sig}{tag}", members.len());
        println!(
            "  e.g. {}: {}",
            smallest.name,
            first_lines(&smallest.message, 6)
        );
        let dir = triage.join(format!("{i:03}"));
        std::fs::create_dir_all(&dir)?;
        copy(&scenarios, &dir, &smallest.name, "scenario")?;
        copy(&results, &dir, &smallest.name, "recorded")?;
        let members_list: Vec<&str> = members.iter().map(|d| d.name.as_str()).collect();
        std::fs::write(
            dir.join("difference.txt"),
            format!(
                "{sig}\n\n{}\n\n{}\n",
                smallest.message,
                members_list.join("\n")
            ),
        )?;
    }
    if skipped > 0 {
        println!("{skipped} scenarios have no recording (the oracle failed on them)");
    }
    let undeclared: usize = groups
        .values()
        .flat_map(|m| m.iter())
        .filter(|d| d.why.is_none())
        .count();
    println!(
        "{compared} scenarios, {differences} differences in {} groups ({declared_groups} groups declared; {undeclared} differences not declared)",
        groups.len()
    );
    let (covered, total, missing) = grammar::coverage(&used);
    std::fs::write(opts.out.join("uncovered.txt"), missing.join("\n") + "\n")?;
    println!(
        "the {} scenarios covered {covered} of the grammar's {total} productions ({:.1}%); the others are listed in {}",
        names.len(),
        100.0 * covered as f64 / total.max(1) as f64,
        opts.out.join("uncovered.txt").display()
    );
    Ok(undeclared)
}

fn copy(from: &Path, to: &Path, name: &str, as_name: &str) -> anyhow::Result<()> {
    std::fs::copy(
        from.join(format!("{name}.json")),
        to.join(format!("{as_name}.json")),
    )
    .with_context(|| format!("copying {name} to {}", to.display()))?;
    Ok(())
}

fn first_lines(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join("\n    ")
}

/// The tool a `tool_use` id calls in `scenario`.
fn tool_of(scenario: &Value, id: &str) -> String {
    let turns = scenario
        .get("turns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for t in turns {
        let blocks = match t {
            Value::Array(b) => b,
            Value::Object(o) => o
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        for b in blocks {
            if b.get("id").and_then(Value::as_str) == Some(id) {
                return b
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned();
            }
        }
    }
    "-".to_owned()
}

/// A difference's signature: the scenario kind, the tool, the field, and the shape of the first
/// difference (its texts with digits, paths and quoted words folded).
fn signature(scenario: &Value, message: &str) -> String {
    let kind = scenario
        .pointer("/generator/kind")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let first = message.lines().next().unwrap_or_default();
    let (id, rest) = first.split_once(": ").unwrap_or(("", first));
    let tool = if id.starts_with("toolu_") {
        tool_of(scenario, id)
    } else {
        "-".to_owned()
    };
    let field = if rest.starts_with("content differs") {
        "content"
    } else if rest.starts_with("is_error") {
        "is_error"
    } else if rest.starts_with("no result") {
        "missing result"
    } else if rest.starts_with("a result the recording") {
        "extra result"
    } else if first.starts_with("workspace_after") {
        "workspace"
    } else if first.starts_with("hook messages") {
        "hook messages"
    } else {
        "run"
    };
    let line = |prefix: &str| {
        message
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(prefix))
            .map(shape)
            .unwrap_or_default()
    };
    // Same lines in another order: one signature for every ordering difference of a tool.
    let texts = |prefix: &str| {
        message
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(prefix))
            .and_then(|t| serde_json::from_str::<String>(t.trim()).ok())
    };
    // Two long file lists, both cut short in the message: Glob's order among ties again.
    let raw = |prefix: &str| {
        message
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(prefix))
            .map(str::trim)
    };
    if field == "content"
        && tool == "Glob"
        && raw("ours:").is_some_and(|t| t.ends_with('…'))
        && raw("recorded:").is_some_and(|t| t.ends_with('…'))
    {
        return format!("{kind} {tool} order: same lines, another order");
    }
    if field == "content"
        && let (Some(ours), Some(recorded)) = (texts("ours:"), texts("recorded:"))
    {
        let sorted = |t: &str| {
            let mut v: Vec<&str> = t.lines().collect();
            v.sort_unstable();
            v.join("\n")
        };
        if ours != recorded && sorted(&ours) == sorted(&recorded) {
            return format!("{kind} {tool} order: same lines, another order");
        }
        // A list cut at the same length from a differently ordered whole: the order again.
        let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), recorded.lines().collect());
        if tool == "Glob" && a.len() == b.len() && a.len() > 100 && a.last() == b.last() {
            return format!("{kind} {tool} order: same lines, another order");
        }
    }
    let detail = match field {
        "content" | "workspace" | "hook messages" => {
            format!("ours {} / recorded {}", line("ours:"), line("recorded:"))
        }
        "is_error" => shape(rest),
        _ => String::new(),
    };
    format!("{kind} {tool} {field}: {detail}")
}

/// A text's shape: placeholders and paths as `P`, numbers as `#`, at most 70 characters.
fn shape(s: &str) -> String {
    let s = s
        .trim()
        .replace("{{WORKSPACE}}", "P")
        .replace("{{HOME}}", "P");
    let mut out = String::new();
    let mut last_digit = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
        } else {
            out.push(c);
            last_digit = false;
        }
    }
    out.chars().take(70).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_fold_numbers_and_paths() {
        assert_eq!(shape("  {{WORKSPACE}}/a 12 of 345 "), "P/a # of #");
    }

    #[test]
    fn signatures_name_tool_and_field() {
        let s = serde_json::json!({"generator": {"kind": "read"},
            "turns": [[{"type": "tool_use", "id": "toolu_x01", "name": "Read", "input": {}}]]});
        let sig = signature(
            &s,
            "toolu_x01: content differs\n  ours:     \"1\\ta\"\n  recorded: \"2\\tb\"",
        );
        assert_eq!(
            sig,
            "read Read content: ours \"#\\ta\" / recorded \"#\\tb\""
        );
    }
}
