//! The three host shapes of `examples/` build what the README says: its crate counts, and a
//! policy-only host without an async runtime, the directory walker or the search crates.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no workspace root"))
}

/// The packages `cargo tree -e normal` lists for `package` (itself included).
fn packages(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("cargo tree: {e}"));
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect()
}

#[test]
fn the_example_shapes_build_what_the_readme_says() {
    let readme = std::fs::read_to_string(root().join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    for example in ["policy-only", "agent-loop", "hooks-only"] {
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `examples/{example}` |")))
            .unwrap_or_else(|| panic!("no README row for {example}"));
        let stated: usize = row
            .trim_end_matches('|')
            .trim_end()
            .rsplit('|')
            .next()
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("no crate count in the README row: {row}"));
        let built = packages(&format!("example-{example}"));
        // A host that does not speak MCP never compiles the MCP SDK.
        let mcp: Vec<&String> = built.iter().filter(|p| p.starts_with("rmcp ")).collect();
        assert!(mcp.is_empty(), "{example} pulls in {mcp:?}");
        assert_eq!(
            built.len(),
            stated,
            "{example}: the README says {stated} crates, cargo tree lists {}",
            built.len()
        );
    }
    let policy_only = packages("example-policy-only");
    for banned in [
        "tokio ",
        "ignore ",
        "walkdir ",
        "grep-",
        "jsonschema ",
        "builtin-tools ",
    ] {
        let found: Vec<&String> = policy_only
            .iter()
            .filter(|p| p.starts_with(banned))
            .collect();
        assert!(found.is_empty(), "the policy-only shape pulls in {found:?}");
    }
}
