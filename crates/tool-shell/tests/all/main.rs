//! Integration tests of tool-shell, one binary.
#![allow(clippy::expect_used)] // helpers outside #[test] functions fail the test the same way

use std::collections::BTreeSet;
use std::path::Path;

use tool_shell::lang::ScriptEffects;

mod lang_awk;
mod lang_sed;

/// Owned copies of `v`.
fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// One of the analysis' reasons for an unknown effect mentions `what`.
fn unknown_mentions(got: &ScriptEffects, what: &str) -> bool {
    got.unknown.iter().any(|u| u.contains(what))
}

/// The names of the files in `dir` other than `input.txt`.
fn created_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "input.txt")
        .collect()
}

/// A small deterministic generator (an LCG), so a failure names a reproducible script.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    /// One element of a non-empty slice.
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}
