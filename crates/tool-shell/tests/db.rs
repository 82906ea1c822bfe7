//! Tests of the command database: the shipped data, its schema, and the attack spellings.

use tool_shell::db::{database, Database};
use tool_shell::{Effect, EffectKind};

fn argv(line: &[&str]) -> Vec<String> {
    line.iter().map(|s| (*s).to_owned()).collect()
}

fn run(line: &[&str]) -> tool_shell::db::Interpretation {
    database().interpret(&argv(line))
}

#[test]
fn shipped_database_loads() {
    let text = include_str!("../src/commands.toml");
    let db = Database::parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert!(db.len() >= 120, "only {} programs", db.len());
    assert_eq!(db.len(), database().len());
}
