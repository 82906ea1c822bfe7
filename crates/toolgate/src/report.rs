//! The human report of `toolgate run` on a terminal: each call with its decision and why, the
//! start of what the model was told, each turn's wall time, and a summary.

use std::fmt::Write as _;
use std::time::Duration;

use tool_core::{Stage, ToolOutcome, ToolResultContent, ToolUse, Verdict};

/// Whether to colour the report (ANSI escapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// Plain text.
    Off,
    /// ANSI colours.
    On,
}

impl Colour {
    fn paint(self, code: &str, text: &str) -> String {
        match self {
            Colour::Off => text.to_owned(),
            Colour::On => format!("\x1b[{code}m{text}\x1b[0m"),
        }
    }
}

/// Counts over a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Turns run.
    pub turns: usize,
    /// Calls run to completion with a success.
    pub ok: usize,
    /// Calls that ran and failed.
    pub failed: usize,
    /// Calls refused before they ran (unknown tool, bad input, a hook, the policy, the user).
    pub refused: usize,
    /// The turns' wall time, added up.
    pub wall: Duration,
}

/// What a call is about, in a few words: its command, path, pattern or URL.
fn subject(tool_use: &ToolUse) -> String {
    let field = [
        "command",
        "file_path",
        "notebook_path",
        "pattern",
        "url",
        "path",
    ]
    .iter()
    .find_map(|k| tool_use.input.get(*k).and_then(|v| v.as_str()));
    let text = match field {
        Some(t) => t.to_owned(),
        None => tool_use.input.to_string(),
    };
    shorten(&text, 72)
}

/// The first line of `text`, cut to `max` characters, with control characters shown escaped.
fn shorten(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .take(max)
        .collect();
    if first.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

fn result_text(content: &ToolResultContent) -> String {
    match content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Blocks(_) => serde_json::to_string(content).unwrap_or_default(),
    }
}

/// The report of one turn (`index` counts from 1), adding its counts to `summary`.
pub fn turn(
    index: usize,
    blocks: &[ToolUse],
    outcomes: &[ToolOutcome],
    wall: Duration,
    colour: Colour,
    summary: &mut Summary,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} call{}, {:.1} ms)",
        colour.paint("1", &format!("turn {index}")),
        outcomes.len(),
        if outcomes.len() == 1 { "" } else { "s" },
        wall.as_secs_f64() * 1e3
    );
    summary.turns += 1;
    summary.wall += wall;
    for o in outcomes {
        let block = blocks.iter().find(|b| b.id == o.tool_use_id);
        let (mark, code) = match (o.stage, o.is_error) {
            (Stage::Ran, false) => {
                summary.ok += 1;
                ("ok", "32")
            }
            (Stage::Ran, true) => {
                summary.failed += 1;
                ("failed", "33")
            }
            _ => {
                summary.refused += 1;
                ("refused", "31")
            }
        };
        let _ = writeln!(
            out,
            "  {} {} {}",
            colour.paint(code, &format!("{mark:<7}")),
            block.map_or(o.tool_use_id.as_str(), |b| b.name.as_str()),
            block.map(subject).unwrap_or_default()
        );
        match &o.decision {
            Some(d) => {
                let verdict = d.verdict.to_string();
                let painted = match d.verdict {
                    Verdict::Allow => colour.paint("32", &verdict),
                    Verdict::Ask => colour.paint("33", &verdict),
                    Verdict::Deny => colour.paint("31", &verdict),
                };
                let _ = writeln!(out, "          {painted}: {}", d.reason);
            }
            None => {
                let _ = writeln!(out, "          stopped at {:?}", o.stage);
            }
        }
        let text = result_text(&o.content);
        if !text.is_empty() {
            let _ = writeln!(out, "          → {}", shorten(&text, 100));
        }
    }
    out
}

/// The closing line.
pub fn summary(s: &Summary, colour: Colour) -> String {
    let calls = s.ok + s.failed + s.refused;
    format!(
        "{}: {} turn{}, {calls} call{}: {} ok, {} failed, {} refused; {:.1} ms in tool calls",
        colour.paint("1", "summary"),
        s.turns,
        if s.turns == 1 { "" } else { "s" },
        if calls == 1 { "" } else { "s" },
        s.ok,
        s.failed,
        s.refused,
        s.wall.as_secs_f64() * 1e3
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::{Decision, DecisionReason};

    #[test]
    fn a_turn_shows_each_call_its_decision_and_result() {
        let blocks = vec![
            ToolUse::new("t1", "Bash", json!({"command": "echo hi\nrm -rf /"})),
            ToolUse::new("t2", "Read", json!({"file_path": "/w/a.txt"})),
        ];
        let mut ran = ToolOutcome::ran(
            "t2",
            ToolResultContent::Text("1\talpha\n2\tbeta".into()),
            false,
        );
        ran.decision = Some(Decision::allow(DecisionReason::NotGranted));
        let mut refused = ToolOutcome::refused("t1", Stage::Permission, "Permission denied");
        refused.decision = Some(Decision::deny(
            "Permission denied",
            DecisionReason::Check {
                name: "rm of the root".into(),
            },
        ));
        let mut s = Summary::default();
        let text = turn(
            2,
            &blocks,
            &[refused, ran],
            Duration::from_micros(1500),
            Colour::Off,
            &mut s,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "turn 2 (2 calls, 1.5 ms)");
        assert_eq!(lines[1], "  refused Bash echo hi…");
        assert_eq!(lines[2], "          deny: check: rm of the root");
        assert_eq!(lines[3], "          → Permission denied");
        assert_eq!(lines[4], "  ok      Read /w/a.txt");
        assert_eq!(lines[6], "          → 1\\talpha…");
        assert_eq!(
            s,
            Summary {
                turns: 1,
                ok: 1,
                failed: 0,
                refused: 1,
                wall: Duration::from_micros(1500)
            }
        );
        assert_eq!(
            summary(&s, Colour::Off),
            "summary: 1 turn, 2 calls: 1 ok, 0 failed, 1 refused; 1.5 ms in tool calls"
        );
        let coloured = turn(1, &blocks, &[], Duration::ZERO, Colour::On, &mut s);
        assert!(coloured.starts_with("\x1b[1mturn 1\x1b[0m"), "{coloured:?}");
    }
}
