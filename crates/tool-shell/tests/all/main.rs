//! Integration tests of tool-shell, one binary.
#![allow(clippy::expect_used)] // helpers outside #[test] functions fail the test the same way

use std::collections::BTreeSet;
use std::path::Path;

use tool_shell::lang::ScriptEffects;

mod chdir;
mod lang_awk;
mod lang_sed;
mod positional;
mod redirect_order;
mod tree_writes;

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

/// brush-parser 0.4's tokenizer panics on this line (found by the differential generator,
/// seed 1): the analysis reads it as a line that does not parse, with the programs it can
/// still see, instead of panicking.
#[test]
fn a_line_the_parser_panics_on_is_a_line_that_does_not_parse() {
    let line = "! ( declare -a A; A[$(p1)]=x; b y.txt ) | 'b' 2> 'o0.log'; $'git' >| o1.log |& $'\\x74\\162\\u0075\\145' \\\n~ -r'f' && p1 $Y *.md | {a,abz} \"\" /tmp <<'EOF1' && false $(p3 $'<z\\'' \\) ~ | \"pwd\" f?.txt x{a,b}y; while if $'c\\165''rl' b19q > 'o2.log' && \"cat\" a\"$HOME\"\"b c\"; then $'b' {a,b,c1}\"y\" $((11+4)) '{*?*'; fi\ndo Z=`kill foo.txt @ \"-rf\"`; break; done | $'p\\u0032' \"_\" '/tmp' a\"${P:-d e f}\"b\\ c) \\\n{a..c} $'\\u0078'''$'\\x31' &\nline one\nat $(cat '-' a.b '_') end\nEOF1\n";
    let env = tool_shell::analyze::ShellEnv::new("/w/p", "/home/u");
    let a = tool_shell::analyze::analyze(line, &env);
    assert!(!a.parsed);
    assert!(a.shell_executed().is_none());
    assert!(
        a.units.iter().any(|u| u.program() == "p1"),
        "{:?}",
        a.units.iter().map(|u| &u.argv).collect::<Vec<_>>()
    );
}
