//! Grep and Glob: pagination at the edges, and files the path policy denies never appear.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tool_core::PathPolicy;
use toolgate_tests::{Sandbox, call, grep_every_mode};

#[tokio::test]
async fn content_pagination_reports_truncation_exactly() {
    let sb = Sandbox::new();
    sb.write("a.txt", "m1\nm2\nm3\n");
    sb.write("b.txt", "m4\nm5\n");
    let mut s = sb.session(&[]);
    let grep = |limit: i64, offset: i64| json!({"pattern": "m", "output_mode": "content", "head_limit": limit, "offset": offset});
    let cases = [
        (
            5,
            0,
            "a.txt:1:m1\na.txt:2:m2\na.txt:3:m3\nb.txt:1:m4\nb.txt:2:m5",
        ),
        (
            3,
            0,
            "a.txt:1:m1\na.txt:2:m2\na.txt:3:m3\n\n[Showing results with pagination = limit: 3]",
        ),
        (
            2,
            3,
            "b.txt:1:m4\nb.txt:2:m5\n\n[Showing results with pagination = offset: 3]",
        ),
        (
            1,
            3,
            "b.txt:1:m4\n\n[Showing results with pagination = limit: 1, offset: 3]",
        ),
        (
            0,
            4,
            "b.txt:2:m5\n\n[Showing results with pagination = offset: 4]",
        ),
        (
            2,
            9,
            // Content mode's own wording (recorded: explore seed 3).
            "No entries at this offset\n\n[Showing results with pagination = offset: 9]",
        ),
    ];
    for (limit, offset, want) in cases {
        assert_eq!(
            call(&mut s, "Grep", grep(limit, offset))
                .await
                .content
                .to_text(),
            want,
            "limit {limit} offset {offset}"
        );
    }
}

struct DenySecrets;

impl PathPolicy for DenySecrets {
    fn read_denied(&self, path: &Path, _ctx: &tool_core::ToolContext) -> bool {
        path.file_name().is_some_and(|n| n == "secret.txt")
    }
    fn edit_denied(&self, _path: &Path, _ctx: &tool_core::ToolContext) -> bool {
        false
    }
}

#[tokio::test]
async fn denied_files_never_appear() {
    let sb = Sandbox::new();
    sb.write("secret.txt", "needle\n");
    sb.write("sub/secret.txt", "needle\n");
    sb.write("open.txt", "needle\n");
    let mut s = sb.session(&[]);
    s.context_mut().path_policy = Arc::new(DenySecrets);
    for (mode, text) in grep_every_mode(&mut s, "needle").await {
        assert!(
            text.contains("open.txt") && !text.contains("secret"),
            "{mode}: {text}"
        );
    }
    assert_eq!(
        call(&mut s, "Glob", json!({"pattern": "**/*.txt"}))
            .await
            .content
            .to_text(),
        "open.txt"
    );
}

#[tokio::test]
async fn glob_caps_at_100_oldest_first() {
    let sb = Sandbox::new();
    for i in 0..105 {
        sb.write(&format!("f{i:03}.txt"), "x");
        let t = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs(1_700_000_000 + 105 - i);
        std::fs::File::options()
            .write(true)
            .open(sb.path(&format!("f{i:03}.txt")))
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    let mut s = sb.session(&[]);
    let text = call(&mut s, "Glob", json!({"pattern": "*.txt"}))
        .await
        .content
        .to_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "f104.txt", "oldest first");
    assert_eq!(
        lines[100],
        "(Showing 100 of 105 matching files; 5 more are not listed. Narrow the pattern or path to see the rest.)"
    );
}
