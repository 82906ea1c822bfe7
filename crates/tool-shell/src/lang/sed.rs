//! `sed` scripts (placeholder until the sed parser lands: every script is unknown).

use super::ScriptEffects;

/// What a sed script reads, writes and runs. `extended` is `-E`/`-r`.
pub fn analyze(script: &str, extended: bool) -> ScriptEffects {
    let _ = (script, extended);
    ScriptEffects::unknown("sed scripts are not analysed yet")
}
