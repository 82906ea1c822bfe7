//! awk programs: what they read, write and run, checked by table and against gawk --sandbox.

use std::path::Path;
use std::process::Command;

use tool_shell::lang::awk::analyze;

use super::{Lcg, created_files, strs, unknown_mentions};

/// Programs that only read their input and print to standard output.
const READ_ONLY: &[&str] = &[
    "{print $1}",
    "$3 > 100 {print $1}",
    "NR>1{s+=$2} END{print s}",
    "{ if ($1 > max) max = $1 } END { print max }",
    "{ print (a > b) }",
    "{ print ($1 > $2) ? \"gt\" : \"le\" }",
    "BEGIN { x = 1 / 2 / 1; print x }",
    "BEGIN { n = 10; m = n / 2 / 5 }",
    "{ n = NF / 2; print n }",
    "/foo/ { print }",
    "/a\\/b/ { c++ }",
    "/[/]/ { print }",
    "$0 ~ /x|y/ { print \"x|y\" }",
    "{ print \"a > b\" }",
    "{ print \"cmd | getline\" }",
    "# print > \"/tmp/x\"\n{ print }",
    "{ print } # system(\"id\")",
    "BEGIN { s = sprintf(\"%s>%s\", \"a\", \"b\") }",
    "BEGIN { k = \"a\" > \"b\" }",
    "BEGIN { if (length(\"abc\") > 2) print \"long\" }",
    "BEGIN { close(\"x\"); fflush() }",
    "BEGIN { h = ENVIRON[\"HOME\"]; p = PROCINFO[\"pid\"] }",
    "{ getline; print }",
    "{ getline line; print line }",
    "NR == 1, NR == 3",
    "{ a[$1]++ } END { for (k in a) print k, a[k] }",
    "{ print > \"/dev/stdout\" }",
    "{ print > \"/dev/stderr\" }",
    "{ printf \"%s\\n\", $0 > \"/dev/stderr\" }",
    "{ print | \"cat 1>&2\" ; }",
    "{ print $1, $2 }\n{ print $3 }",
    "BEGIN { FS = \":\" } { print $1 }",
    "function f(x) { return x * 2 } { print f($1) }",
    "BEGIN { print ARGV[1], ARGC }",
    "BEGIN { for (i = 0; i < ARGC; i++) print ARGV[i] }",
    "BEGIN { for (k in ARGV) n++ }",
    "BEGIN { if (substr(ARGV[1], 1, 1) == \"-\") x = 1 }",
    "{ getline line < \"/dev/stdin\" }",
    "{ print \\\n $1 }",
    "@namespace \"ns\"\nBEGIN { print 1 }",
    "{ $1 = \"\"; print }",
    "{ sub(/a/, \"b\"); gsub(/c/, \"d\", $2); print }",
    "END { print NR > \"/dev/stdout\" }",
    "BEGIN { x = 2; y = x++ / 2 }",
    "BEGIN { print 1e+5, 0x1F, .5 }",
];

#[test]
fn accepts_programs_that_only_read() {
    for &program in READ_ONLY {
        let got = analyze(program);
        // `{ print | "cat 1>&2" }` runs cat: that one is an exec, checked below.
        if program.contains("cat 1>&2") {
            assert_eq!(got.exec_strings, strs(&["cat 1>&2"]), "{program:?}");
            continue;
        }
        assert!(got.is_read_only(), "{program:?}: {got:?}");
        assert!(got.reads.is_empty(), "{program:?}: {got:?}");
    }
}

#[test]
fn rejects_programs_that_write_files() {
    let cases: [(&str, &[&str]); 11] = [
        ("{print > \"/tmp/x\"}", &["/tmp/x"]),
        ("{print $0 >> \"f\"}", &["f"]),
        ("{printf \"%s\", $1 > \"out\"}", &["out"]),
        ("{printf(\"%s\\n\", $1) > \"out\"}", &["out"]),
        ("{print(\"a\") >> \"log\"}", &["log"]),
        ("BEGIN { print \"a\" > \"out\" \"x\" }", &["outx"]),
        ("BEGIN { print \"a\" > (\"/tmp/\" \"y\") }", &["/tmp/y"]),
        (
            "{ if ($1 > 2) print $1 > \"big\"; else print $1 > \"small\" }",
            &["big", "small"],
        ),
        (
            "{ print a, b > \"f\" }\n{ print > \"/dev/stdout\" }",
            &["f"],
        ),
        ("{ print \"a\",\n \"b\" > \"f\" }", &["f"]),
        (
            "{ print \"\\x2ftmp\\057z\" > \"\\x2ftmp\\057z\" }",
            &["/tmp/z"],
        ),
    ];
    for (program, writes) in cases {
        let got = analyze(program);
        assert_eq!(got.writes, strs(writes), "{program:?}: {got:?}");
        assert!(got.unknown.is_empty(), "{program:?}: {got:?}");
        assert!(!got.is_read_only(), "{program:?}");
    }
}

#[test]
fn rejects_programs_that_run_commands() {
    let cases: [(&str, &str); 14] = [
        ("BEGIN{system(\"id\")}", "id"),
        ("BEGIN { system (\"touch /tmp/p\") }", "touch /tmp/p"),
        ("{print | \"sh\"}", "sh"),
        ("{print $0 | \"sort -u\"}", "sort -u"),
        ("{printf \"%s\\n\", $1 | \"sh\"}", "sh"),
        ("BEGIN{\"id\" | getline x}", "id"),
        ("BEGIN{\"echo \" \"hi\" | getline}", "echo hi"),
        (
            "BEGIN { while ((\"ls /\" | getline line) > 0) n++ }",
            "ls /",
        ),
        ("BEGIN { print \"x\" |& \"cat\" }", "cat"),
        ("BEGIN { \"date\" |& getline d }", "date"),
        ("BEGIN { x = 1 / 2; system(\"id\"); y = 3 / 4 }", "id"),
        ("BEGIN { x = (1) / 2; system(\"id\"); y = 3 / 1 }", "id"),
        // After an `if (...)` header a statement starts: gawk reads `/"/` as a regex.
        ("BEGIN { if (1) /\"/; system(\"id\") } # \"", "id"),
        (
            "BEGIN { while (0) /\"/; system(\"id\"); x = \"}\" } # \"",
            "id",
        ),
    ];
    for (program, command) in cases {
        let got = analyze(program);
        assert_eq!(got.exec_strings, strs(&[command]), "{program:?}: {got:?}");
        assert!(!got.is_read_only(), "{program:?}");
    }
}

#[test]
fn reports_the_files_a_program_reads() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "BEGIN{while ((getline line < \"/etc/passwd\") > 0) print line}",
            &["/etc/passwd"],
        ),
        ("BEGIN { getline < \"/etc/hosts\"; print }", &["/etc/hosts"]),
        ("{ getline a[NR] < \"f\" }", &["f"]),
        ("{ getline $2 < \"g\" }", &["g"]),
        (
            "BEGIN { getline x < (\"/etc/\" \"shadow\") }",
            &["/etc/shadow"],
        ),
    ];
    for (program, reads) in cases {
        let got = analyze(program);
        assert_eq!(got.reads, strs(reads), "{program:?}: {got:?}");
        assert!(got.unknown.is_empty(), "{program:?}: {got:?}");
        assert!(got.is_read_only(), "{program:?}");
    }
}

#[test]
fn rejects_programs_whose_effects_are_computed() {
    let programs = [
        "{print > $1}",
        "BEGIN{cmd=\"id\"; system(cmd)}",
        "{ system($0) }",
        "{ print | $2 }",
        "{ print >> (\"/tmp/\" $1) }",
        "{ $0 | getline }",
        "{ \"echo \" $1 | getline x }",
        "BEGIN { getline line < ARGV[1] }",
        "BEGIN { getline x < \"/etc/\" \"passwd\" }",
        "BEGIN { getline x < \"/inet/tcp/0/example.com/80\" }",
        "@include \"lib.awk\"\nBEGIN { f() }",
        "@load \"filefuncs\"",
        "BEGIN { f = \"system\"; @f(\"id\") }",
        "BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }",
        "BEGIN { ARGC++ }",
        "BEGIN { delete ARGV[1] }",
        "BEGIN { split(\"/etc/shadow\", ARGV) }",
        "function f(a) { a[1] = \"/etc/shadow\" } BEGIN { f(ARGV) }",
        "BEGIN { sub(/x/, \"y\", ARGV[1]) }",
        "BEGIN { getline ARGV[1] < \"-\" }",
        "{ print length(\"abc\") > 0 ? \"y\" : \"n\" }",
        "BEGIN { printf \"%d\\n\", 3 > 2 }",
        "{ print a[$1 > 2] }",
    ];
    for program in programs {
        let got = analyze(program);
        assert!(!got.unknown.is_empty(), "{program:?}: {got:?}");
        assert!(!got.is_read_only(), "{program:?}");
    }
}

/// Programs no awk accepts: they lex badly or their brackets do not balance.
const MALFORMED: &[&str] = &[
    "{ print \"unterminated }",
    "{ print \"a\nb\" }",
    "/unterminated { print }",
    "{ print $1 ",
    "{ print ) }",
    "BEGIN { x = 1 \\ y }",
    "{ print ` }",
];

#[test]
fn rejects_programs_that_do_not_parse() {
    for &program in MALFORMED {
        let got = analyze(program);
        assert!(
            unknown_mentions(&got, "does not parse"),
            "{program:?}: {got:?}"
        );
    }
}

/// Statements for the differential programs: harmless ones, and ones gawk's `--sandbox`
/// refuses when they run (all run: they sit in BEGIN, and nothing before them exits).
const PURE_STMTS: [&str; 22] = [
    "print \"a\" \"b\"",
    "print (1 > 2)",
    "x = \"a\"; y = x \"b\"",
    "s = \"a/b\"; n = split(s, arr, \"/\")",
    "if (\"abc\" ~ /b/) z = 1",
    "m = 10 / 2 / 5",
    "u = 4 /2/ 1",
    "a[\"k\"] = 1; for (k in a) c++",
    "while (i < 3) i++",
    "q = substr(\"hello\", 2, 3)",
    "r = (1 < 2) ? \"y\" : \"n\"",
    "close(\"nothing\"); fflush()",
    "v = ENVIRON[\"HOME\"]",
    "t = toupper(\"x\"); gsub(/a/, \"b\", t)",
    "if (/x/) w = 1",
    "s = sprintf(\"%s>%s\", \"a\", \"b\")",
    "print \"a\", \"b\" # > \"comment\"",
    "print \"x|y\"",
    "k = \"a\" > \"b\"",
    "print (\"a\" > \"b\")",
    "print ARGV[0], ARGC",
    "getline line",
];
const EFFECT_STMTS: [&str; 16] = [
    "system(\"true\")",
    "print \"x\" > \"out1\"",
    "print \"x\" >> \"out2\"",
    "printf \"%s\", \"x\" > \"out3\"",
    "print \"x\" | \"cat\"",
    "\"echo hi\" | getline v",
    "getline l < \"in1\"",
    "while ((getline line < \"in1\") > 0) n++",
    "f = \"out4\"; print \"x\" > f",
    "cmd = \"true\"; system(cmd)",
    "print \"x\" |& \"cat\"",
    "print \"x\" > \"out\" \"5\"",
    "print \"x\" > (\"o\" \"7\")",
    "ARGV[1] = \"in1\"",
    "q = 1 / 2; system(\"true\"); r = 3 / 4",
    "printf(\"%s\", \"x\") > \"out6\"",
];

fn generated_programs() -> Vec<String> {
    let mut rng = Lcg(0xa1c);
    let mut programs = Vec::new();
    for stmt in PURE_STMTS.iter().chain(EFFECT_STMTS.iter()) {
        programs.push(format!("BEGIN {{ {stmt} }}\n{{ n++ }}"));
    }
    for _ in 0..60 {
        let count = 1 + rng.below(3);
        let stmts: Vec<&str> = (0..count)
            .map(|_| {
                if rng.below(3) == 0 {
                    rng.pick(&EFFECT_STMTS)
                } else {
                    rng.pick(&PURE_STMTS)
                }
            })
            .collect();
        let sep = rng.pick(&["; ", "\n", " ;\n"]);
        programs.push(format!("BEGIN {{ {} }}\n{{ n++ }}", stmts.join(sep)));
    }
    programs
}

fn gawk_available() -> bool {
    Command::new("gawk")
        .arg("--version")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("GNU Awk"))
}

fn run_gawk(dir: &Path, program: &str) -> std::process::Output {
    Command::new("gawk")
        .args(["--sandbox", "--", program, "input.txt"])
        .current_dir(dir)
        .output()
        .expect("run gawk")
}

/// gawk's `--sandbox` refuses `system()`, redirections, `getline` from files and commands,
/// and new input files in ARGV when they run: every generated program with an effect must
/// hit one, every program without must run cleanly.
#[test]
fn agrees_with_gawk_sandbox() {
    if !gawk_available() {
        eprintln!("skipped: gawk is not installed (its --sandbox is the reference)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("input.txt"), "a b\nc d\n").expect("input");
    std::fs::write(dir.path().join("in1"), "line\n").expect("in1");
    let (mut pure, mut effect, mut broken) = (0, 0, 0);
    for program in generated_programs() {
        let got = analyze(&program);
        let out = run_gawk(dir.path(), &program);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if unknown_mentions(&got, "does not parse") {
            broken += 1;
            assert!(!out.status.success(), "{program:?}: gawk accepts it");
        } else if got.is_read_only() && got.reads.is_empty() {
            pure += 1;
            assert!(
                out.status.success() && stderr.is_empty(),
                "{program:?}: gawk --sandbox fails: {stderr:?}"
            );
        } else {
            effect += 1;
            assert!(
                stderr.contains("sandbox mode"),
                "{program:?}: {got:?} but gawk --sandbox says {stderr:?}"
            );
        }
    }
    for &program in MALFORMED {
        let out = run_gawk(dir.path(), program);
        assert!(!out.status.success(), "{program:?}: gawk accepts it");
    }
    eprintln!("awk differential: {pure} read-only, {effect} with effects, {broken} refused");
    assert!(pure > 15 && effect > 15, "the generator lost a direction");
}

/// For generated programs that only write, gawk run for real in a temp dir creates exactly
/// the files the analysis names.
#[test]
fn names_the_files_gawk_creates() {
    if !gawk_available() {
        eprintln!("skipped: gawk is not installed");
        return;
    }
    let mut checked = 0;
    for program in generated_programs() {
        let got = analyze(&program);
        if got.writes.is_empty()
            || !(got.exec_strings.is_empty() && got.unknown.is_empty() && got.reads.is_empty())
        {
            continue;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("input.txt"), "a b\n").expect("input");
        let out = Command::new("gawk")
            .args(["--", &program, "input.txt"])
            .current_dir(dir.path())
            .output()
            .expect("run gawk");
        assert!(out.status.success(), "{program:?}: {out:?}");
        let created = created_files(dir.path());
        let named = got.writes.iter().cloned().collect();
        assert_eq!(created, named, "{program:?}");
        checked += 1;
    }
    eprintln!("awk write differential: {checked} programs");
    assert!(checked > 5, "too few writing programs generated");
}
