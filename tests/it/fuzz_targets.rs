//! The fuzz targets (see `toolgate_tests::fuzz`) in CI: every kept failing input replayed,
//! then a fixed number of fresh cases each. `cargo xtask fuzz --minutes N` runs the same
//! generators for longer. `TOOLGATE_FUZZ_CASES` sets the cases per target (default 256).

use toolgate_tests::fuzz::{regression_file, targets};

#[test]
fn every_fuzz_target_holds_on_its_kept_inputs_and_fresh_cases() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| panic!("no workspace root"))
        .to_path_buf();
    let cases: u32 = std::env::var("TOOLGATE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let mut report = Vec::new();
    for t in targets() {
        let kept = std::fs::read_to_string(regression_file(&root, t.name)).unwrap_or_default();
        let mut replayed = 0;
        for line in kept.lines().filter(|l| !l.trim().is_empty()) {
            (t.replay)(line).unwrap_or_else(|e| panic!("{}: kept input {line}: {e}", t.name));
            replayed += 1;
        }
        if let Err(f) = (t.run)(cases, 0x7001_6a7e) {
            panic!("{}: {} (input: {})", t.name, f.why, f.input);
        }
        report.push(format!("{}: {replayed} kept, {cases} fresh", t.name));
    }
    eprintln!("{}", report.join("\n"));
}
