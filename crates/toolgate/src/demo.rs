//! The built-in demo: a Read → Edit session on a scratch copy of a small example workspace,
//! showing a refused call and a successful one, printed step by step.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::json;
use tool_core::{RuleList, ToolContext, ToolUse};
use tool_orchestrator::Session;
use tool_permissions::{Layer, PolicyBuilder};

const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../demo/README.md")),
    ("src/greeting.txt", include_str!("../demo/src/greeting.txt")),
    ("notes.txt", include_str!("../demo/notes.txt")),
];

/// Run the demo in a fresh temporary directory and return what it printed.
pub async fn run() -> anyhow::Result<String> {
    let dir = tempfile::Builder::new()
        .prefix("toolgate-demo-")
        .tempdir()?;
    let ws = dir.path().join("workspace");
    for (rel, content) in FILES {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(&ws))?;
        std::fs::write(p, content)?;
    }
    let mut out = String::new();
    writeln!(
        out,
        "toolgate demo: a scratch copy of an example workspace at {}",
        ws.display()
    )?;
    writeln!(
        out,
        "policy: allow = [\"Edit\"] (everything else follows the default mode)\n"
    )?;
    let mut b = PolicyBuilder::new();
    b.rule(RuleList::Allow, "Edit", Layer::CommandLine, None)?;
    let ctx = ToolContext::new(
        &ws,
        dir.path().join("home"),
        dir.path().join("tool-results"),
    );
    let mut session = Session::builder(builtin_tools::registry()?, ctx)
        .policy(Arc::new(b.build()))
        .build();

    let p = |rel: &str| ws.join(rel).display().to_string();
    let turns = [
        vec![ToolUse::new(
            "toolu_1",
            "Read",
            json!({"file_path": p("src/greeting.txt")}),
        )],
        vec![
            ToolUse::new(
                "toolu_2",
                "Edit",
                json!({"file_path": p("src/greeting.txt"), "old_string": "world", "new_string": "toolgate"}),
            ),
            ToolUse::new(
                "toolu_3",
                "Edit",
                json!({"file_path": p("notes.txt"), "old_string": "never", "new_string": "now"}),
            ),
            ToolUse::new("toolu_4", "Frobnicate", json!({})),
            ToolUse::new(
                "toolu_5",
                "Read",
                json!({"file_path": p("src/greeting.txt"), "offset": "zero"}),
            ),
        ],
        vec![ToolUse::new(
            "toolu_6",
            "Read",
            json!({"file_path": p("src/greeting.txt")}),
        )],
    ];
    for (i, turn) in turns.iter().enumerate() {
        writeln!(out, "── turn {} ──", i + 1)?;
        let result = session.run_turn(turn).await;
        for (call, o) in turn.iter().zip(&result.outcomes) {
            writeln!(out, "{} {} {}", call.id, call.name, call.input)?;
            let why = o
                .decision
                .as_ref()
                .map(|d| format!(" ({}: {})", d.verdict, d.reason))
                .unwrap_or_default();
            writeln!(
                out,
                "  → {:?}{}{why}",
                o.stage,
                if o.is_error { ", error" } else { "" }
            )?;
            for line in o.content.to_text().lines() {
                writeln!(out, "    {line}")?;
            }
        }
        writeln!(
            out,
            "  user message: {}",
            serde_json::to_string(&result.user_message())?
        )?;
    }
    writeln!(
        out,
        "\nsrc/greeting.txt is now:\n{}",
        indent(&std::fs::read_to_string(ws.join("src/greeting.txt"))?)
    )?;
    Ok(out)
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn demo_edits_the_scratch_copy_and_shows_each_exit() {
        let out = super::run().await.unwrap();
        assert!(
            out.contains("src/greeting.txt is now:\n    Hello, toolgate!"),
            "{out}"
        );
        assert!(out.contains("File has not been read yet. Read it first before writing to it."));
        assert!(out.contains("No such tool available: Frobnicate"));
        assert!(out.contains("allow rule `Edit` from command line settings"));
        for (rel, content) in super::FILES {
            assert!(!content.is_empty(), "{rel}");
        }
    }
}
