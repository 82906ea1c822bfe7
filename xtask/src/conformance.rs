//! `cargo xtask conformance`: run oracle scenarios and compare with their recorded results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;
use toolgate::scenario::{self, RunError, Scenario};

/// How one scenario went.
pub(crate) enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

/// Run every `DIR/scenarios/*.json` that has a `DIR/results/*.json`; print one line each and
/// the summary. Returns the number of failures.
pub(crate) async fn run_dir(dir: &Path) -> anyhow::Result<(usize, usize, usize)> {
    let scenarios = dir.join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&scenarios)
        .with_context(|| format!("reading {}", scenarios.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    let progress = crate::progress::Progress::new("conformance", files.len());
    for f in files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let expected = dir.join("results").join(format!("{name}.json"));
        let verdict = match check(&f, &expected).await {
            Ok(v) => v,
            Err(e) => Verdict::Fail(format!("{e:#}")),
        };
        match verdict {
            Verdict::Pass => {
                pass += 1;
                let line = match differs_reason(&f) {
                    Some(why) => format!("PASS {name} (differs on purpose: {why})"),
                    None => format!("PASS {name}"),
                };
                progress.step(&line, false, false);
            }
            Verdict::Fail(why) => {
                fail += 1;
                progress.step(&format!("FAIL {name}: {why}"), true, true);
            }
            Verdict::Skip(why) => {
                skip += 1;
                progress.step(&format!("SKIP {name}: {why}"), true, false);
            }
        }
    }
    progress.finish();
    Ok((pass, fail, skip))
}

pub(crate) async fn check(scenario_file: &Path, result_file: &Path) -> anyhow::Result<Verdict> {
    let s = Scenario::load(scenario_file)?;
    if let Some(why) = &s.not_applicable {
        return Ok(Verdict::Skip(format!("not applicable: {why}")));
    }
    if let Some(what) = s.unsupported() {
        return Ok(Verdict::Skip(format!("unsupported: {what}")));
    }
    if s.recorded_as_root && !running_as_root() {
        return Ok(Verdict::Skip(
            "recorded as root, whom file modes do not bind; this run is not root".into(),
        ));
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(result_file)
            .with_context(|| format!("no recorded result {}", result_file.display()))?,
    )
    .with_context(|| format!("parsing {}", result_file.display()))?;
    let layout = scenario::lay_out(&s)?;
    let run = match scenario::run(&s, &layout).await {
        Ok(r) => r,
        Err(RunError::Unsupported(what)) => {
            return Ok(Verdict::Skip(format!("unsupported: {what}")));
        }
        Err(RunError::Failed(why)) => return Ok(Verdict::Fail(why)),
    };
    let subs = &layout.subs;
    let ours: BTreeMap<String, (String, Value, bool)> = run
        .results
        .iter()
        .map(|(name, r)| {
            let content =
                subs.unapply_value(&serde_json::to_value(&r.content).unwrap_or(Value::Null));
            (r.tool_use_id.clone(), (name.clone(), content, r.is_error))
        })
        .collect();
    let mut want = expected
        .get("tool_results")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // A scenario where toolgate differs on purpose (`"differs": "<reason>"`) gives our own
    // expected results for the calls concerned in `"toolgate_expected"` (by id); the rest is
    // compared with the recording as usual.
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(scenario_file)?)?;
    if raw.get("differs").and_then(Value::as_str).is_some()
        && let Some(Value::Object(ours_expected)) = raw.get("toolgate_expected")
    {
        for w in &mut want {
            let id = w.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            if let Some(Value::Object(e)) = ours_expected.get(id)
                && let Value::Object(wo) = w
            {
                for (k, v) in e {
                    wo.insert(k.clone(), v.clone());
                }
            }
        }
    }
    for w in &want {
        let id = w.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
        let Some((_, content, is_error)) = ours.get(id) else {
            return Ok(Verdict::Fail(format!("{id}: no result")));
        };
        let want_error = w.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        if *is_error != want_error {
            return Ok(Verdict::Fail(format!(
                "{id}: is_error {is_error}, recorded {want_error}; content {}",
                short(content)
            )));
        }
        let want_content = w.get("content").cloned().unwrap_or(Value::Null);
        if !same_content(content, &want_content) {
            return Ok(Verdict::Fail(format!(
                "{id}: content differs\n  ours:     {}\n  recorded: {}",
                short(content),
                short(&want_content)
            )));
        }
    }
    let want_ids: Vec<&str> = want
        .iter()
        .filter_map(|w| w.get("tool_use_id").and_then(Value::as_str))
        .collect();
    if let Some(extra) = ours.keys().find(|k| !want_ids.contains(&k.as_str())) {
        return Ok(Verdict::Fail(format!(
            "{extra}: a result the recording does not have"
        )));
    }
    // Hook messages outside the results (PreToolUse context) must match the recording's, in
    // order; other reminders the CLI adds (environment, dates) are not the tool layer's.
    let hook_text = |v: &Value| -> Option<String> {
        let t = v.get("text").and_then(Value::as_str)?;
        t.contains(" hook ").then(|| t.to_owned())
    };
    // A `differs` scenario may give the hook messages toolgate sends instead.
    let want_blocks: Vec<String> = match raw
        .get("differs")
        .and(raw.pointer("/toolgate_expected/hook_messages"))
        .and_then(Value::as_array)
    {
        Some(texts) => texts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        None => expected
            .get("extra_user_blocks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(hook_text)
            .collect(),
    };
    let our_blocks: Vec<String> = run.extra_blocks.iter().filter_map(hook_text).collect();
    if want_blocks != our_blocks {
        return Ok(Verdict::Fail(format!(
            "hook messages differ\n  ours:     {our_blocks:?}\n  recorded: {want_blocks:?}"
        )));
    }
    // A `differs` scenario may give the workspace toolgate leaves instead of the recorded one.
    let expected_after = raw
        .get("differs")
        .and(raw.pointer("/toolgate_expected/workspace_after"))
        .or_else(|| expected.get("workspace_after"));
    if let Some(Value::Object(after)) = expected_after {
        let mine = &run.workspace_after;
        for (path, v) in after {
            let Some(ours) = mine.get(path) else {
                return Ok(Verdict::Fail(format!("workspace_after: {path} missing")));
            };
            let want = v.as_str().unwrap_or_default();
            if !same_file(path, ours, want) {
                let sorted = |s: &str| {
                    let mut l: Vec<String> = s
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(str::to_owned)
                        .collect();
                    l.sort_unstable();
                    l
                };
                if path.ends_with(".jsonl") && sorted(ours) == sorted(want) {
                    return Ok(Verdict::Fail(format!(
                        "workspace_after: {path} has the same lines in another order"
                    )));
                }
                let fields = json_fields_differing(ours, want);
                let detail = if fields.is_empty() {
                    format!("\n  ours:     {ours:?}\n  recorded: {want:?}")
                } else {
                    format!("\n  {}", fields.join("\n  "))
                };
                return Ok(Verdict::Fail(format!(
                    "workspace_after: {path} differs{detail}"
                )));
            }
        }
        if let Some(extra) = mine.keys().find(|k| !after.contains_key(*k)) {
            return Ok(Verdict::Fail(format!(
                "workspace_after: {extra} exists but the recording has no such file"
            )));
        }
    }
    Ok(Verdict::Pass)
}

/// The reason a scenario gives for differing from Claude Code on purpose, if it does.
fn differs_reason(scenario_file: &Path) -> Option<String> {
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(scenario_file).ok()?).ok()?;
    raw.get("differs")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Content compares as JSON values: a string with a string, a block list with a block list
/// (key order does not matter).
fn same_content(ours: &Value, recorded: &Value) -> bool {
    normalised(ours) == normalised(recorded)
}

fn normalised(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(scenario::normalise_task_ids(s)),
        Value::Array(a) => Value::Array(a.iter().map(normalised).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), normalised(x))).collect())
        }
        other => other.clone(),
    }
}

/// Files compare byte for byte; JSON and JSON-lines files compare as parsed values.
fn same_file(path: &str, ours: &str, recorded: &str) -> bool {
    if ours == recorded {
        return true;
    }
    let json = |s: &str| serde_json::from_str::<Value>(s).ok();
    if path.ends_with(".json")
        && let (Some(a), Some(b)) = (json(ours), json(recorded))
    {
        return a == b;
    }
    if path.ends_with(".jsonl") {
        let lines = |s: &str| -> Option<Vec<Value>> {
            s.lines()
                .filter(|l| !l.trim().is_empty())
                .map(json)
                .collect()
        };
        if let (Some(a), Some(b)) = (lines(ours), lines(recorded)) {
            return a == b;
        }
    }
    false
}

/// For two JSON (or JSON lines) texts, the fields that differ, as `line N: .a.b: ours X,
/// recorded Y` (at most 12); empty when either is not JSON.
fn json_fields_differing(ours: &str, recorded: &str) -> Vec<String> {
    fn walk(a: Option<&Value>, b: Option<&Value>, path: String, out: &mut Vec<String>) {
        if out.len() >= 12 || a == b {
            return;
        }
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    walk(x.get(k), y.get(k), format!("{path}.{k}"), out);
                }
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    walk(Some(p), Some(q), format!("{path}[{i}]"), out);
                }
            }
            _ => {
                let show = |v: Option<&Value>| {
                    v.map_or_else(
                        || "(absent)".to_owned(),
                        |v| {
                            let t = v.to_string();
                            match t.char_indices().nth(160) {
                                Some((i, _)) => format!("{}…", &t[..i]),
                                None => t,
                            }
                        },
                    )
                };
                out.push(format!("{path}: ours {}, recorded {}", show(a), show(b)));
            }
        }
    }
    let lines = |s: &str| -> Option<Vec<Value>> {
        s.lines()
            .filter(|l| !l.trim().is_empty())
            // Measured times are placeholders, which are not JSON numbers.
            .map(|l| serde_json::from_str(&l.replace("{{DURATION_MS}}", "0")).ok())
            .collect()
    };
    let (Some(a), Some(b)) = (lines(ours), lines(recorded)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!("{} JSON lines, recorded {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        walk(Some(x), Some(y), format!("line {}: ", i + 1), &mut out);
    }
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 600 {
        format!("{}…", s.chars().take(600).collect::<String>())
    } else {
        s
    }
}

/// Whether this process runs as root: its `/proc/self` belongs to its effective user.
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
