//! `awk` programs (placeholder until the awk parser lands: every program is unknown).

use super::ScriptEffects;

/// What an awk program reads, writes and runs.
pub fn analyze(program: &str) -> ScriptEffects {
    let _ = program;
    ScriptEffects::unknown("awk programs are not analysed yet")
}
