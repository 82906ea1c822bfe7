//! Tests of the command database: the shipped data, its schema, and the attack spellings.

use tool_shell::db::{Database, database};
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

/// The shipped database compiles each program on first use; every program, and every name it
/// runs by, must come out exactly as the eager reading of the whole file gives it.
#[test]
fn programs_compiled_on_demand_equal_the_eager_compilation() {
    let text = include_str!("../src/commands.toml");
    let eager = Database::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let lazy = Database::parse_lazily(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lazy.len(), eager.len());
    for p in eager.programs() {
        for name in std::iter::once(&p.name).chain(&p.aliases) {
            let on_demand = lazy
                .program(name)
                .unwrap_or_else(|| panic!("{name} is missing or does not compile"));
            assert_eq!(format!("{on_demand:?}"), format!("{p:?}"), "{name}");
        }
    }
    assert_eq!(
        format!("{:?}", lazy.programs().collect::<Vec<_>>()),
        format!("{:?}", eager.programs().collect::<Vec<_>>())
    );
    for (table, key) in [
        ("git", "core.pager"),
        ("git", "alias.x"),
        ("ssh", "proxycommand"),
    ] {
        assert_eq!(
            lazy.config_category(table, key),
            eager.config_category(table, key)
        );
    }
    // A program header the splitter cannot place is an error, not a silent loss.
    assert!(Database::parse_lazily("[p.\"odd.name\"]\nstyle = \"gnu\"\n").is_err());
    // A broken program is unknown (fail closed) without hiding the others.
    let broken = "[p.good]\nstyle = \"gnu\"\n\n[p.bad]\nstyle = \"nonsense\"\n";
    let db = Database::parse_lazily(broken).unwrap();
    assert!(db.program("good").is_some());
    assert!(db.program("bad").is_none());
}

fn has(i: &tool_shell::db::Interpretation, kind: EffectKind, value: &str) -> bool {
    i.effects
        .iter()
        .any(|e| e.kind == kind && e.value.as_deref() == Some(value))
}

fn has_kind(i: &tool_shell::db::Interpretation, kind: EffectKind) -> bool {
    i.effects.iter().any(|e| e.kind == kind)
}

fn exec_argv(i: &tool_shell::db::Interpretation) -> &Effect {
    i.effects
        .iter()
        .find(|e| e.kind == EffectKind::ExecArgv)
        .unwrap_or_else(|| panic!("no exec-argv in {:?}", i.effects))
}

#[track_caller]
fn expect(line: &[&str], kind: EffectKind, value: &str) {
    let i = run(line);
    assert!(
        has(&i, kind, value),
        "{line:?}: no {kind} {value:?} in {:#?}",
        i.effects
    );
}

#[track_caller]
fn read_only(line: &[&str]) {
    let i = run(line);
    assert!(
        i.is_known() && i.is_read_only(),
        "{line:?} is not read-only: {:#?}",
        i.effects
    );
}

#[test]
fn sort_output_in_every_spelling() {
    expect(&["sort", "--out=x", "a"], EffectKind::Write, "x");
    expect(&["sort", "-ox", "a"], EffectKind::Write, "x");
    expect(&["sort", "-rno", "x", "a"], EffectKind::Write, "x");
    expect(&["sort", "a", "-o", "x"], EffectKind::Write, "x");
    expect(
        &["sort", "--compress-program=sh", "a"],
        EffectKind::ExecProgram,
        "sh",
    );
    expect(
        &["sort", "--compress-prog", "sh", "a"],
        EffectKind::ExecProgram,
        "sh",
    );
    // `--` ends options: `-o` after it is a file.
    let i = run(&["sort", "--", "-o", "x"]);
    assert!(has(&i, EffectKind::Read, "-o") && !has_kind(&i, EffectKind::Write));
    read_only(&["sort", "-rn", "a", "b"]);
}

#[test]
fn unknown_and_ambiguous_options_are_unknown() {
    let i = run(&["sort", "--frobnicate", "a"]);
    assert!(has(&i, EffectKind::Unknown, "--frobnicate"));
    // `--s` is a prefix of --sort, --stable, --buffer-size? no: of --sort and --stable.
    let i = run(&["sort", "--s", "a"]);
    assert!(!i.is_known());
    let i = run(&["frobctl", "x"]);
    assert!(has(&i, EffectKind::Unknown, "frobctl") && i.path.is_empty());
}

#[test]
fn git_execution_surface() {
    expect(
        &["git", "ls-remote", "--upload-pa=sh -c id", "origin"],
        EffectKind::ExecProgram,
        "sh -c id",
    );
    expect(
        &["git", "-c", "core.pager=sh -c id", "log"],
        EffectKind::ExecProgram,
        "sh -c id",
    );
    expect(
        &["git", "-c", "CORE.PAGER=x", "log"],
        EffectKind::ExecProgram,
        "x",
    );
    expect(
        &["git", "-c", "alias.st=!rm -rf x", "st"],
        EffectKind::ExecString,
        "rm -rf x",
    );
    expect(&["git", "log", "--output=f"], EffectKind::Write, "f");
    expect(&["git", "show", "--output", "f"], EffectKind::Write, "f");
    // `--out` is a prefix of --output and --output-indicator-*: ambiguous, so unknown.
    assert!(!run(&["git", "show", "--out=f"]).is_known());
    assert!(has_kind(
        &run(&["git", "diff", "--ext-diff"]),
        EffectKind::ExecProgram
    ));
    assert!(has_kind(
        &run(&["git", "-p", "status"]),
        EffectKind::ExecProgram
    ));
    assert!(has_kind(
        &run(&["git", "grep", "-O", "foo"]),
        EffectKind::ExecProgram
    ));
    expect(
        &["git", "grep", "-Ovim", "foo"],
        EffectKind::ExecProgram,
        "vim",
    );
    expect(
        &["git", "-C", "sub", "log", "--output=f"],
        EffectKind::Write,
        "sub/f",
    );
    let i = run(&["git", "--config-env=core.fsmonitor=EVIL", "status"]);
    assert!(has_kind(&i, EffectKind::ExecProgram), "{:?}", i.effects);
    // An alias or an unknown subcommand is unknown.
    assert!(!run(&["git", "frob"]).is_known());
    // Setting a key that runs a program.
    let i = run(&["git", "config", "core.pager", "sh -c id"]);
    assert!(has(&i, EffectKind::ExecProgram, "sh -c id") && has_kind(&i, EffectKind::Write));
    read_only(&["git", "config", "--get", "user.name"]);
    read_only(&["git", "config", "user.name"]);
    assert!(!run(&["git", "config", "user.name", "x"]).is_read_only());
    expect(
        &["git", "rebase", "-x", "make test", "main"],
        EffectKind::ExecString,
        "make test",
    );
    expect(
        &["git", "clone", "-c", "core.hooksPath=/tmp/h", "u", "d"],
        EffectKind::ExecProgram,
        "/tmp/h",
    );
}

#[test]
fn git_global_options_are_dropped_from_rule_words() {
    let i = run(&["git", "-C", "x", "-c", "k=v", "push", "origin"]);
    assert_eq!(i.path, ["git", "push"]);
    assert_eq!(i.rule_words, ["git", "push", "origin"]);
    assert!(has_kind(&i, EffectKind::Network));
    let i = run(&["git", "--no-pager", "stash", "list"]);
    assert_eq!(i.path, ["git", "stash", "list"]);
    assert_eq!(i.rule_words, ["git", "stash", "list"]);
}

#[test]
fn git_read_only_commands() {
    read_only(&["git", "status"]);
    read_only(&["git", "status", "--short", "-b"]);
    read_only(&["git", "log", "--oneline", "-20", "--graph"]);
    read_only(&["git", "log", "-n", "5", "--stat", "--", "src"]);
    read_only(&["git", "diff", "--cached", "--name-only"]);
    read_only(&["git", "show", "HEAD~1", "--stat"]);
    read_only(&["git", "branch", "-a"]);
    read_only(&["git", "branch", "--show-current"]);
    read_only(&["git", "blame", "-L", "1,10", "src/lib.rs"]);
    read_only(&["git", "rev-parse", "--show-toplevel"]);
    read_only(&["git", "remote", "-v"]);
    assert!(!run(&["git", "branch", "-D", "x"]).is_read_only());
    assert!(!run(&["git", "branch", "newbranch"]).is_read_only());
    assert!(!run(&["git", "checkout", "--", "f"]).is_read_only());
    assert!(!run(&["git", "commit", "-m", "x"]).is_read_only());
}

#[test]
fn ripgrep_preprocessor() {
    expect(&["rg", "--pre", "sh", "x"], EffectKind::ExecProgram, "sh");
    expect(&["rg", "--pre=sh", "x"], EffectKind::ExecProgram, "sh");
    read_only(&["rg", "-n", "--no-heading", "foo", "src"]);
    read_only(&["rg", "--no-pre", "foo"]);
}

#[test]
fn find_expression() {
    expect(&["find", ".", "-delete"], EffectKind::Write, ".");
    expect(&["find", ".", "-fprint", "f"], EffectKind::Write, "f");
    let i = run(&["find", ".", "-exec", "rm", "{}", ";"]);
    let e = exec_argv(&i);
    assert_eq!(e.argv, ["rm", "{}"]);
    assert!(!e.argv_open);
    let i = run(&["find", ".", "-name", "*.o", "-exec", "rm", "{}", "+"]);
    let e = exec_argv(&i);
    assert_eq!(e.argv, ["rm", "{}"]);
    assert!(e.argv_open);
    read_only(&["find", "src", "-name", "*.rs", "-type", "f"]);
    assert!(!run(&["find", ".", "-frobnicate"]).is_known());
}

#[test]
fn readers_that_write() {
    expect(&["tree", "-o", "f"], EffectKind::Write, "f");
    expect(&["uniq", "in", "out"], EffectKind::Write, "out");
    expect(&["uniq", "in", "out"], EffectKind::Read, "in");
    read_only(&["uniq", "-c", "in"]);
    expect(
        &["date", "010100002030"],
        EffectKind::System,
        "010100002030",
    );
    expect(&["date", "-s", "x"], EffectKind::System, "x");
    read_only(&["date", "+%Y-%m-%d"]);
    expect(&["hostname", "evil"], EffectKind::System, "evil");
    read_only(&["hostname", "-f"]);
    assert!(has_kind(
        &run(&["man", "--html=x", "ls"]),
        EffectKind::ExecProgram
    ));
    expect(&["less", "+!id", "f"], EffectKind::ExecString, "id");
    read_only(&["less", "+G", "f"]);
    assert!(!run(&["less", "+sfile", "f"]).is_known());
    expect(&["head", "-5", "f"], EffectKind::Read, "f");
    read_only(&["head", "-n5", "f"]);
    read_only(&["tail", "-20f", "f"]);
}

#[test]
fn archives() {
    expect(
        &["tar", "-cf", "x.tar", "--use-compress-program=sh", "."],
        EffectKind::ExecProgram,
        "sh",
    );
    expect(
        &["tar", "-cf", "x.tar", "--use-compress-program=sh", "."],
        EffectKind::Write,
        "x.tar",
    );
    expect(
        &["tar", "--to-command=sh", "-xf", "a.tar"],
        EffectKind::ExecString,
        "sh",
    );
    expect(
        &["tar", "-xf", "a.tar", "--checkpoint-action=exec=sh"],
        EffectKind::ExecString,
        "sh",
    );
    expect(
        &["tar", "czf", "out.tgz", "src"],
        EffectKind::Write,
        "out.tgz",
    );
    expect(&["tar", "czf", "out.tgz", "src"], EffectKind::Read, "src");
    expect(
        &["tar", "-xzf", "a.tgz", "-C", "dest"],
        EffectKind::Write,
        "dest",
    );
    read_only(&["tar", "-tzf", "a.tgz"]);
    expect(
        &["zip", "-TT", "sh -c id", "a.zip", "f"],
        EffectKind::ExecString,
        "sh -c id",
    );
    expect(
        &["zip", "-rTT", "sh -c id", "a.zip", "f"],
        EffectKind::ExecString,
        "sh -c id",
    );
    expect(&["zip", "-r", "a.zip", "f"], EffectKind::Write, "a.zip");
}

#[test]
fn network_tools() {
    expect(
        &["rsync", "-e", "sh -c id", "a", "b"],
        EffectKind::ExecProgram,
        "sh -c id",
    );
    expect(
        &["rsync", "-av", "src/", "host:dst"],
        EffectKind::Network,
        "host:dst",
    );
    expect(
        &["ssh", "-o", "ProxyCommand=x", "h"],
        EffectKind::ExecString,
        "x",
    );
    expect(
        &["ssh", "-oProxyCommand x", "h"],
        EffectKind::ExecString,
        "x",
    );
    expect(
        &["ssh", "h", "rm", "-rf", "x"],
        EffectKind::System,
        "rm -rf x",
    );
    expect(&["curl", "-o", "f", "https://x"], EffectKind::Write, "f");
    expect(&["curl", "-d", "@f", "https://x"], EffectKind::Read, "f");
    expect(&["curl", "-F", "a=@f", "https://x"], EffectKind::Read, "f");
    expect(&["curl", "-sSLo", "f", "https://x"], EffectKind::Write, "f");
    assert!(has_kind(&run(&["curl", "https://x"]), EffectKind::Network));
    expect(&["wget", "-O", "f", "https://x"], EffectKind::Write, "f");
    expect(
        &["scp", "h:/etc/passwd", "local"],
        EffectKind::Write,
        "local",
    );
}

#[test]
fn wrappers_expose_their_command() {
    let i = run(&["timeout", "-s", "KILL", "5", "rm", "-rf", "x"]);
    assert_eq!(exec_argv(&i).argv, ["rm", "-rf", "x"]);
    let i = run(&["timeout", "5", "rm", "-rf", "x"]);
    assert_eq!(exec_argv(&i).argv, ["rm", "-rf", "x"]);
    let i = run(&["env", "-i", "A=1", "B=2", "rm", "x"]);
    let e = exec_argv(&i);
    assert_eq!(e.argv, ["rm", "x"]);
    assert!(e.source.detail.contains("A=1 B=2"), "{}", e.source.detail);
    let i = run(&["xargs", "-0", "-n1", "rm", "-f"]);
    let e = exec_argv(&i);
    assert_eq!(e.argv, ["rm", "-f"]);
    assert!(e.argv_open);
    let i = run(&["xargs", "-I{}", "sh", "-c", "rm {}"]);
    assert_eq!(exec_argv(&i).argv, ["sh", "-c", "rm {}"]);
    let i = run(&["xargs", "-I", "{}", "sh", "-c", "rm {}"]);
    assert_eq!(exec_argv(&i).argv, ["sh", "-c", "rm {}"]);
    for w in [
        &["nice", "-n", "5", "rm", "x"][..],
        &["nohup", "rm", "x"],
        &["stdbuf", "-oL", "rm", "x"],
        &["time", "rm", "x"],
        &["sudo", "-u", "root", "rm", "x"],
        &["doas", "rm", "x"],
        &["command", "rm", "x"],
        &["builtin", "rm", "x"],
        &["exec", "rm", "x"],
        &["setsid", "-f", "rm", "x"],
        &["ionice", "-c", "3", "rm", "x"],
        &["chroot", "/srv", "rm", "x"],
        &["flock", "l", "rm", "x"],
        &["taskset", "1", "rm", "x"],
    ] {
        let i = run(w);
        assert_eq!(exec_argv(&i).argv, ["rm", "x"], "{w:?}");
    }
    read_only(&["command", "-v", "rm"]);
    expect(
        &["env", "-S", "rm -rf x"],
        EffectKind::ExecString,
        "rm -rf x",
    );
    expect(
        &["env", "--split-string=rm -rf x"],
        EffectKind::ExecString,
        "rm -rf x",
    );
    expect(&["bash", "-lc", "rm x"], EffectKind::ExecString, "rm x");
    expect(
        &["sh", "-ec", "rm x", "arg0", "arg1"],
        EffectKind::ExecString,
        "rm x",
    );
    expect(
        &["bash", "-o", "pipefail", "-c", "rm x"],
        EffectKind::ExecString,
        "rm x",
    );
    expect(
        &["bash", "script.sh", "-c", "x"],
        EffectKind::RunsCode,
        "script.sh",
    );
    expect(&["bash", "script.sh"], EffectKind::Read, "script.sh");
    expect(&["eval", "a", "b"], EffectKind::ExecString, "a b");
    expect(
        &["su", "-c", "rm x", "root"],
        EffectKind::ExecString,
        "rm x",
    );
    expect(
        &["runuser", "-u", "u", "-c", "rm x"],
        EffectKind::ExecString,
        "rm x",
    );
    expect(
        &["watch", "-n", "1", "rm", "x"],
        EffectKind::ExecString,
        "rm x",
    );
    expect(&["time", "-o", "f", "ls"], EffectKind::Write, "f");
}

#[test]
fn file_operands() {
    let i = run(&["cp", "a", "b"]);
    assert!(has(&i, EffectKind::Read, "a") && has(&i, EffectKind::Write, "b"));
    assert!(!has(&i, EffectKind::Write, "a"));
    let i = run(&["cp", "-t", "dir", "a", "b"]);
    assert!(has(&i, EffectKind::Write, "dir") && has(&i, EffectKind::Read, "b"));
    let i = run(&["ln", "-s", "/etc/passwd", "x"]);
    assert!(has(&i, EffectKind::Read, "/etc/passwd") && has(&i, EffectKind::Write, "x"));
    expect(&["ln", "-s", "/etc/passwd"], EffectKind::Write, "passwd");
    let i = run(&["dd", "if=a", "of=b"]);
    assert!(has(&i, EffectKind::Read, "a") && has(&i, EffectKind::Write, "b"));
    assert!(!run(&["dd", "frob=a"]).is_known());
    expect(&["tee", "f"], EffectKind::Write, "f");
    expect(&["tee", "-a", "f", "g"], EffectKind::Write, "g");
    expect(&["split", "f", "pre"], EffectKind::Write, "pre");
    expect(&["mv", "a", "b"], EffectKind::Write, "a");
    expect(&["mv", "a", "b"], EffectKind::Write, "b");
    expect(&["rm", "-rf", "x"], EffectKind::Write, "x");
    expect(&["touch", "x"], EffectKind::Write, "x");
    expect(&["mkdir", "-p", "x"], EffectKind::Write, "x");
    expect(&["chmod", "+x", "f"], EffectKind::Write, "f");
    // `-` is standard input, not a file.
    let i = run(&["cat", "-", "a"]);
    assert!(!has(&i, EffectKind::Read, "-") && has(&i, EffectKind::Read, "a"));
}

/// `python -m MODULE` runs the module with the words after it: where the database knows a
/// program of that name, its options are read as that program's (`--basetemp` empties and
/// writes the directory it names).
#[test]
fn a_module_run_by_python_has_its_programs_options() {
    expect(
        &[
            "python3",
            "-m",
            "pytest",
            "-q",
            "--basetemp=/home/u/.ssh",
            "t",
        ],
        EffectKind::Write,
        "/home/u/.ssh",
    );
    expect(
        &["pytest", "--junitxml", "out/r.xml"],
        EffectKind::Write,
        "out/r.xml",
    );
    // A module the database does not know keeps its words as data.
    let i = run(&["python3", "-m", "http.server", "--bind", "127.0.0.1"]);
    assert!(!has_kind(&i, EffectKind::Write), "{:?}", i.effects);
    assert!(has(&i, EffectKind::RunsCode, "http.server"));
}

/// A file of names (`tar -T`, `--files0-from`): names fed on the line are read; a name
/// that is an option to the program, or holds an escape, is a read that cannot be known.
#[test]
fn names_in_a_names_file_are_reads() {
    let fed = database().interpret_fed(
        &argv(&["tar", "-cf", "-", "-T", "-"]),
        Some(Some("src/a.rs\n.env\n")),
    );
    assert!(has(&fed, EffectKind::Read, ".env"), "{:?}", fed.effects);
    for odd in ["-C\n/home/u\n.ssh/id_rsa\n", ".e\\156v\n"] {
        let i = database().interpret_fed(&argv(&["tar", "-cf", "-", "-T", "-"]), Some(Some(odd)));
        assert!(
            i.effects
                .iter()
                .any(|e| e.kind == EffectKind::Read && e.value.is_none()),
            "{odd:?}: {:?}",
            i.effects
        );
    }
    let from_file = run(&["sort", "--files0-from=names"]);
    assert!(has(&from_file, EffectKind::Read, "names"));
    assert!(
        from_file
            .effects
            .iter()
            .any(|e| e.kind == EffectKind::Read && e.value.is_none())
    );
}

/// `make -f -` reads its makefile from standard input: fed on the line, its recipes are
/// commands it runs (a `+` line runs even under `-n`); not known, it is code that cannot be.
#[test]
fn a_makefile_fed_on_standard_input_is_read_as_one() {
    let fed = "all:\n\t+./scripts/provision.sh\n\t@echo done\n";
    let i = database().interpret_fed(&argv(&["make", "-n", "-f", "-", "all"]), Some(Some(fed)));
    assert!(
        has(&i, EffectKind::ExecString, "./scripts/provision.sh"),
        "{:#?}",
        i.effects
    );
    assert!(has(&i, EffectKind::ExecString, "echo done"));
    let unknown = database().interpret_fed(&argv(&["make", "-f", "/dev/stdin"]), Some(None));
    assert!(
        has_kind(&unknown, EffectKind::Unknown),
        "{:?}",
        unknown.effects
    );
    // What reads, writes or loads without a recipe cannot be known.
    for line in [
        "$(file >/home/u/.bashrc,x)",
        "include /home/u/x.mk",
        "-include x.mk",
        "load ./evil.so",
        ".RECIPEPREFIX = >",
        "export PATH := /tmp/evil:$(PATH)",
        "CC = ./evil.sh",
    ] {
        let text = format!("{line}\nall:\n\ttrue\n");
        let i = database().interpret_fed(&argv(&["make", "-f", "-"]), Some(Some(&text)));
        assert!(has_kind(&i, EffectKind::Unknown), "{line}: {:?}", i.effects);
    }
    // A makefile named by its path is a file read, as before.
    expect(&["make", "-f", "build.mk"], EffectKind::Read, "build.mk");
}

#[test]
fn scripts_and_interpreters() {
    expect(&["python", "-c", "code"], EffectKind::RunsCode, "code");
    expect(
        &["python3", "-m", "pytest", "-x"],
        EffectKind::RunsCode,
        "pytest",
    );
    expect(
        &["python", "x.py", "--out", "y"],
        EffectKind::RunsCode,
        "x.py",
    );
    expect(&["node", "-e", "code"], EffectKind::RunsCode, "code");
    assert!(has_kind(
        &run(&["npm", "run", "build"]),
        EffectKind::RunsCode
    ));
    assert_eq!(run(&["npm", "run", "build"]).path, ["npm", "run"]);
    assert!(has_kind(&run(&["make", "-j4"]), EffectKind::RunsCode));
    assert!(has_kind(
        &run(&["cargo", "test", "-p", "x"]),
        EffectKind::RunsCode
    ));
    assert!(has_kind(&run(&["pytest", "-x"]), EffectKind::RunsCode));
    // sed: -i makes files written; the script goes to the sed analyser.
    let i = run(&["sed", "-i", "s/a/b/", "f"]);
    assert!(has(&i, EffectKind::Read, "f") && has(&i, EffectKind::Write, "f"));
    let i = run(&["sed", "-i.bak", "-e", "s/a/b/", "f"]);
    assert!(has(&i, EffectKind::Write, "f"));
    let i = run(&["sed", "-f", "s.sed", "f"]);
    assert!(has(&i, EffectKind::Read, "s.sed") && has(&i, EffectKind::Read, "f") && !i.is_known());
    // awk: var=value operands are not files.
    let i = run(&["awk", "-v", "x=1", "{print}", "n=2", "f"]);
    assert!(has(&i, EffectKind::Read, "f") && !has(&i, EffectKind::Read, "n=2"));
    expect(&["awk", "-f", "p.awk", "f"], EffectKind::Read, "p.awk");
    expect(&["gawk", "--profile=p", "1", "f"], EffectKind::Write, "p");
    expect(&["jq", "--rawfile", "a", "f", "."], EffectKind::Read, "f");
    let i = run(&["jq", "--rawfile", "a", "f", ".", "in.json"]);
    assert!(has(&i, EffectKind::Read, "in.json") && !has(&i, EffectKind::Read, "."));
}

#[test]
fn plain_readers_are_read_only() {
    read_only(&["ls", "-la"]);
    read_only(&["ls", "-la", "--color=auto", "src"]);
    read_only(&["grep", "-rn", "foo", "."]);
    read_only(&["grep", "-e", "foo", "-e", "bar", "f"]);
    read_only(&["cat", "a", "b"]);
    read_only(&["wc", "-l", "a"]);
    read_only(&["head", "-n", "20", "a"]);
    read_only(&["echo", "hello", "-n"]);
    read_only(&["diff", "-u", "a", "b"]);
    let i = run(&["grep", "-f", "pats", "f"]);
    assert!(has(&i, EffectKind::Read, "pats") && has(&i, EffectKind::Read, "f"));
    let i = run(&["grep", "foo", "f"]);
    assert!(!has(&i, EffectKind::Read, "foo"));
}

#[test]
fn every_option_declares_its_effect_and_names_are_unique() {
    let db = database();
    let mut options = 0;
    fn walk(p: &tool_shell::db::Program, options: &mut usize) {
        let mut seen = std::collections::HashSet::new();
        for o in &p.options {
            *options += 1;
            assert!(!o.names.is_empty(), "{}: an option without a name", p.name);
            for n in &o.names {
                assert!(seen.insert(n.clone()), "{}: {n} names two options", p.name);
                // Every name resolves to its own option.
                let found = if n.starts_with("--") {
                    p.resolve_long(n)
                } else {
                    p.option(n)
                };
                assert!(
                    found.is_some_and(|f| std::ptr::eq(f, o)),
                    "{}: {n} does not resolve to itself",
                    p.name
                );
            }
            for k in &o.effects {
                assert!(EffectKind::from_name(k.as_str()) == Some(*k));
            }
        }
        for s in p.subcommands() {
            walk(s, options);
        }
    }
    for p in db.programs() {
        walk(p, &mut options);
    }
    assert!(options > 1500, "only {options} options");
}

#[test]
fn abbreviations_never_resolve_to_a_different_option() {
    fn walk(p: &tool_shell::db::Program) {
        if p.syntax.abbrev {
            for o in &p.options {
                for n in o.names.iter().filter(|n| n.starts_with("--")) {
                    for end in 3..n.len() {
                        let prefix = &n[..end];
                        match p.resolve_long(prefix) {
                            Some(found) => {
                                // The prefix names this option, or one whose name it spells
                                // exactly, and never one with a weaker effect.
                                let exact = found.names.iter().any(|m| m == prefix);
                                assert!(
                                    std::ptr::eq(found, o) || exact,
                                    "{}: {prefix} (of {n}) resolves to {}",
                                    p.name,
                                    found.name()
                                );
                            }
                            None => {
                                // Ambiguous: the interpreter reports the word as unknown.
                                let mut words: Vec<&str> = p.name.split(' ').collect();
                                words.push(prefix);
                                let i = run(&words);
                                assert!(
                                    has(&i, EffectKind::Unknown, prefix),
                                    "{}: ambiguous {prefix} is not unknown: {:?}",
                                    p.name,
                                    i.effects
                                );
                            }
                        }
                    }
                }
            }
        }
        for s in p.subcommands() {
            walk(s);
        }
    }
    for p in database().programs() {
        walk(p);
    }
    // An ambiguous prefix is unknown when interpreted.
    let i = run(&["git", "log", "--no-m"]);
    assert!(!i.is_known() || i.is_read_only());
    let i = run(&["sort", "--c", "a"]);
    assert!(!i.is_known(), "{:?}", i.effects);
}

#[test]
fn a_bad_database_fails_to_load() {
    assert!(Database::parse("[p.x]\nstyle = \"gnu\"\noptions = [{ names = \"-o\" }]\n").is_err());
    assert!(Database::parse("[p.x]\nstyle = \"gnu\"\nflags = \"-a -a\"\n").is_err());
    assert!(Database::parse("[p.x]\nstyle = \"gnu\"\noperands = [\"exec-argv\"]\n").is_err());
    assert!(Database::parse("[p.x]\nstyle = \"gnu\"\nfrob = 1\n").is_err());
    assert!(Database::parse("not toml [").is_err());
    let empty = Database::default();
    let i = empty.interpret(&argv(&["ls"]));
    assert!(!i.is_known());
}

#[test]
fn git_prints_the_files_its_objects_and_paths_name() {
    let reads = |line: &[&str]| -> Vec<String> {
        run(line)
            .effects
            .iter()
            .filter(|e| e.kind == EffectKind::Read)
            .filter_map(|e| e.value.clone())
            .collect()
    };
    assert_eq!(reads(&["git", "show", "HEAD:.env"]), [".env"]);
    assert_eq!(reads(&["git", "show", "HEAD~1:./sub/a.txt"]), ["sub/a.txt"]);
    // Before `--`, a word that is not a revision is a path to git: `main` may be either.
    assert_eq!(
        reads(&["git", "log", "-p", "main", "--", ".env"]),
        ["main", ".env"]
    );
    assert_eq!(reads(&["git", "log", "-p", ".env"]), [".env"]);
    assert_eq!(
        reads(&["git", "diff", "HEAD~1", "secrets/k"]),
        ["secrets/k"]
    );
    assert_eq!(
        reads(&["git", "-C", "r", "diff", "HEAD", "--", "k"]),
        ["r", "r/k"]
    );
    assert_eq!(
        reads(&["git", "diff", "--no-index", ".env", "/dev/null"]),
        [".env", "/dev/null"]
    );
    assert_eq!(
        reads(&["git", "diff", ".env", "--no-index", "x"]),
        [".env", "x"]
    );
    assert_eq!(reads(&["git", "grep", "KEY", "HEAD:sec"]), ["sec"]);
    // A word in revision syntax (`HEAD~1`, `a..b`) is not read as a file, but meets the deny
    // rules as a word whose place is not known.
    assert!(reads(&["git", "diff", "HEAD~1"]).is_empty());
    assert!(run(&["git", "diff", "HEAD~1"]).is_read_only());
    assert_eq!(run(&["git", "log", "a..b"]).loose, ["a..b"]);
    // Object names fed on standard input.
    let fed = |line: &[&str], text: &str| -> Vec<String> {
        database()
            .interpret_fed(&argv(line), Some(Some(text)))
            .effects
            .iter()
            .filter(|e| e.kind == EffectKind::Read)
            .filter_map(|e| e.value.clone())
            .collect()
    };
    assert_eq!(
        fed(&["git", "cat-file", "--batch"], "HEAD:.env\nHEAD:a\n"),
        [".env", "a"]
    );
    assert_eq!(
        fed(&["git", "cat-file", "--batch-command"], "contents HEAD:k\n"),
        ["contents", "k"]
    );
}

#[test]
fn recursive_searches_are_known_by_program_and_option() {
    for line in [
        &["rg", "KEY"][..],
        &["grep", "-rn", "KEY", "."],
        &["grep", "--recursive", "KEY"],
        &["egrep", "-R", "KEY", "src"],
        &["ls", "-laR"],
        &["find", ".", "-name", "*.pem"],
        &["tree"],
        &["du", "-a"],
        // grep's `-d recurse` is `-r`, its action cut short as far as it stays unambiguous.
        &["grep", "-d", "recurse", "KEY", "."],
        &["grep", "--directories=rec", "KEY", "."],
        &["grep", "-drecu", "KEY", "."],
        // git grep searches the working tree below its pathspecs, or below the directory.
        &["git", "grep", "KEY"],
        &["git", "grep", "--no-index", "-n", "KEY"],
        &["git", "-C", "sub", "grep", "KEY", "--", "src"],
        // tar archives a directory with all it holds.
        &["tar", "cf", "-", "."],
        &["tar", "-czf", "x.tgz", "src"],
        // `--no-recursion` holds for the names after it only: not placed, so not trusted.
        &["tar", "-cf", "-", "src", "--no-recursion"],
        &["bsdtar", "-rf", "x.tar", "src"],
        // Directories compared file by file.
        &["diff", "-ru", "old", "."],
        &["diff", "--recursive", "-q", "a", "b"],
        &["git", "diff", "--no-index", "old", "."],
    ] {
        assert!(run(line).recursive, "{line:?}");
    }
    for line in [
        &["grep", "-n", "KEY", "f"][..],
        &["grep", "-e", "r", "f"],
        &["grep", "-d", "skip", "KEY", "f"],
        &["grep", "-d", "read", "KEY", "f"],
        &["ls", "-lrt"],
        &["cat", "-r"],
        &["tar", "xf", "x.tar"],
        &["tar", "-tzf", "x.tgz"],
        &["git", "log", "-p"],
        &["diff", "-u", "a", "b"],
        &["git", "diff", "HEAD"],
    ] {
        assert!(!run(line).recursive, "{line:?}");
    }
}

/// A program the database does not know runs what its operands name as a command: a
/// program the database knows, a file named as one runs it from here, a command line in one
/// word. Data operands, and words that are only everyday shell words, are not commands.
#[test]
fn unknown_programs_run_the_commands_they_are_given() {
    use tool_shell::EffectKind;
    let runs = |line: &[&str]| -> Vec<(EffectKind, Vec<String>, Option<String>)> {
        run(line)
            .effects
            .into_iter()
            .filter(|e| matches!(e.kind, EffectKind::ExecArgv | EffectKind::ExecString))
            .map(|e| (e.kind, e.argv, e.value))
            .collect()
    };
    let argv = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        runs(&["chronic", "-e", "./deploy.sh", "x"])[0].1,
        argv(&["./deploy.sh", "x"])
    );
    assert_eq!(
        runs(&["xvfb-run", "-a", "python3", "e2e.py"])[0].1,
        argv(&["python3", "e2e.py"])
    );
    assert_eq!(
        runs(&["fakeroot", "-i", "state.db", "--", "../tools/build"])[0].1,
        argv(&["../tools/build"])
    );
    let string = runs(&["parallel-ish", "make -j8"]);
    assert_eq!(string[0].0, EffectKind::ExecString);
    assert_eq!(string[0].2.as_deref(), Some("make -j8"));
    for line in [
        // Subcommands named like programs, and data after them.
        &["gh", "pr", "create", "--title", "rm stale fixtures"][..],
        &["gh", "issue", "comment", "5", "--body", "curl returns 404"],
        &["brew", "install", "curl"],
        &["gsutil", "rm", "gs://b/x"],
        &["aws", "s3", "rm", "s3://b/x"],
        &["conda", "install", "python=3.11"],
        &["gcc2", "-O2", "-o", "build/app", "src/main.c"][..],
        &["dos2unix", "-n", "tools/hook.sh", "build/hook.sh"],
        &["mytool", "test"],
        &["mytool", "echo", "hi"],
        &["mytool", "./data.json"],
        &["mytool", "/no/such/program"],
    ] {
        assert!(runs(line).is_empty(), "{line:?}: {:?}", runs(line));
    }
}

#[test]
fn searches_that_follow_links_are_known_by_program_and_option() {
    for line in [
        &["grep", "-R", "KEY", "."][..],
        &["grep", "-nR", "KEY"],
        &["grep", "--dereference-recursive", "KEY"],
        &["rg", "-L", "KEY"],
        &["rg", "--follow", "KEY"],
        &["find", "-L", ".", "-name", "*.pem"],
        &["find", ".", "-follow", "-type", "f"],
        &["ls", "-RL"],
        &["tree", "-l"],
        &["du", "-L", "."],
        &["tar", "-chf", "x.tar", "."],
        &["zip", "-r", "x.zip", "."],
    ] {
        let i = run(line);
        assert!(i.recursive && i.follows_links, "{line:?}");
    }
    for line in [
        &["grep", "-r", "KEY", "."][..],
        &["rg", "KEY"],
        &["find", ".", "-name", "x"],
        &["find", "-P", "."],
        &["ls", "-R"],
        &["tree"],
        &["tar", "-cf", "x.tar", "."],
        // `-L` in rg's neighbours means something else.
        &["ag", "-L", "KEY"],
        &["grep", "-L", "KEY", "f"],
    ] {
        assert!(!run(line).follows_links, "{line:?}");
    }
}

/// An option the database does not know, whose name says it takes a program to run, runs its
/// value: for a program the database does not know, for one that takes any option, and for an
/// option a known program does not list. Negations and other names run nothing.
#[test]
fn options_named_for_a_program_run_their_value() {
    let runs = |line: &[&str], value: &str| {
        let i = run(line);
        assert!(
            has(&i, EffectKind::ExecString, value),
            "{line:?} should run `{value}`: {:?}",
            i.effects
        );
    };
    runs(
        &["helm", "template", "x", "--post-renderer", "./r.sh"],
        "./r.sh",
    );
    runs(&["nodemon", "--exec=curl x", "app.js"], "curl x");
    runs(&["mvn", "exec:exec", "-Dexec.executable=curl"], "curl");
    runs(&["mysql", "--pager", "less -S", "db"], "less -S");
    runs(&["air", "--build.cmd", "make"], "make");
    runs(&["tool", "--test_wrapper=valgrind"], "valgrind");
    let runs_nothing = |line: &[&str]| {
        let i = run(line);
        assert!(
            !has_kind(&i, EffectKind::ExecString),
            "{line:?} runs nothing: {:?}",
            i.effects
        );
    };
    runs_nothing(&["helm", "--no-pager", "list"]);
    runs_nothing(&["mvn", "-Dexec.mainClass=com.x.Main", "exec:java"]);
    runs_nothing(&["tool", "--shell"]);
    runs_nothing(&["tool", "--command", "--other"]);
    runs_nothing(&["tool", "--execution-mode", "fast"]);
    runs_nothing(&["git", "--no-pager", "log"]);
    // A compiler's feature option that loads code (`-fplugin=`) loads it; others do not.
    for line in [
        &["gcc", "-fplugin=./x.so", "a.c"][..],
        &["clang", "-O2", "-fplugin=/tmp/p.so", "-c", "a.c"],
    ] {
        assert!(has_kind(&run(line), EffectKind::RunsCode), "{line:?}");
    }
    assert!(!has_kind(
        &run(&["gcc", "-fPIC", "-fstack-protector=strong", "a.c"]),
        EffectKind::RunsCode
    ));
}

/// `rustc -C linker=PROG` runs PROG; other codegen settings run nothing.
#[test]
fn rustc_codegen_linker_runs_its_program() {
    for line in [
        &["rustc", "-C", "linker=curl", "a.rs"][..],
        &["rustc", "-Clinker=curl", "a.rs"],
        &["rustc", "--codegen=linker=curl", "a.rs"],
    ] {
        let i = run(line);
        assert!(
            i.effects.iter().any(|e| e.value.as_deref() == Some("curl")
                && matches!(e.kind, EffectKind::ExecProgram | EffectKind::ExecString)),
            "{line:?}: {:?}",
            i.effects
        );
    }
    let i = run(&["rustc", "-C", "opt-level=3", "a.rs"]);
    assert!(
        !i.effects
            .iter()
            .any(|e| matches!(e.kind, EffectKind::ExecProgram | EffectKind::ExecString)),
        "{:?}",
        i.effects
    );
}

/// Programs that load `.env` from the directory they run in read it, whatever their arguments
/// (where their options move them, there), unless an option names another file in its place.
#[test]
fn programs_that_load_env_files_read_them_where_they_run() {
    for line in [
        &["docker", "compose", "config"][..],
        &["docker", "compose", "-f", "compose.yml", "up", "-d"],
        &["podman", "compose", "ps"],
        &["docker-compose", "up"],
        &["bun", "test"],
        &["bunx", "vite", "build"],
        &["next", "build"],
        &["vite"],
        &["react-scripts", "build"],
        &["foreman", "start"],
        &["honcho", "run", "env"],
        &["dotenvx", "run", "--", "node", "app.js"],
        &["flask", "run"],
        &["prisma", "migrate", "dev"],
        &["pipenv", "run", "python", "app.py"],
        &["pipenv", "shell"],
    ] {
        expect(line, EffectKind::Read, ".env");
    }
    expect(
        &[
            "docker",
            "compose",
            "--project-directory",
            "deploy",
            "config",
        ],
        EffectKind::Read,
        "deploy/.env",
    );
    expect(&["flask", "run"], EffectKind::Read, ".flaskenv");
    expect(&["next", "dev"], EffectKind::Read, ".env.local");
    for line in [
        &["docker", "compose", "--env-file", ".env.example", "config"][..],
        &["docker-compose", "--env-file=ci.env", "up"],
        &["foreman", "start", "-e", "prod.env"],
        &["dotenv", "-f", "staging.env", "run", "env"],
        &["docker", "ps"],
        &["docker", "build", "."],
        &["npm", "run", "build"],
        &["pipenv", "install"],
    ] {
        assert!(!has(&run(line), EffectKind::Read, ".env"), "{line:?}");
    }
}

/// Programs whose input says which files they write (an archive's members, a patch's files)
/// may write anywhere below where they work; a program whose words name its writes does not.
#[test]
fn writes_named_by_the_input_may_land_anywhere_below() {
    for line in [
        &["tar", "-xzf", "vendor.tgz"][..],
        &["tar", "xf", "x.tar", "-C", "vendor"],
        &["tar", "-xf", "x.tar", "."],
        &["unzip", "-o", "release.zip"],
        &["unzip", "assets.zip", "-d", "public"],
        &["patch", "-p1"],
        &["patch", "-d", "src", "-p1", "-i", "fix.diff"],
    ] {
        assert!(run(line).writes_below, "{line:?}");
    }
    expect(&["patch", "-d", "src", "-p1"], EffectKind::Write, "src/.");
    for line in [
        &["tar", "-czf", "out.tgz", "src"][..],
        &["tar", "-tf", "x.tar"],
        &["tar", "-xOf", "x.tar", "a"],
        &["cp", "a", "b"],
        &["sed", "-i", "s/a/b/", "f"],
    ] {
        assert!(!run(line).writes_below, "{line:?}");
    }
}

/// A `file:` URL names a local file: a URL operand of curl reads it, and a git remote given
/// as one is that repository, with curl's `%XX` escapes decoded. A glob
/// curl expands, or a host other than the local one, cannot be known.
#[test]
fn file_urls_name_local_files() {
    for url in [
        "file:///home/u/.ssh/id_rsa",
        "FILE://localhost/home/u/.s%73h/id_rsa",
        "file:/home/u/.ssh/id_rsa",
        "file:///home/u/.ssh/id_rsa?x#y",
    ] {
        let i = run(&["curl", "-s", "http://localhost:3000/", url]);
        assert!(
            has(&i, EffectKind::Read, "/home/u/.ssh/id_rsa"),
            "{url}: {:?}",
            i.effects
        );
    }
    for url in [
        "file:///home/u/.ss{h,x}/id_rsa",
        "file://elsewhere/etc/passwd",
    ] {
        assert!(has_kind(&run(&["curl", url]), EffectKind::Unknown), "{url}");
    }
    assert!(!has_kind(
        &run(&["curl", "https://x.example/file:///a"]),
        EffectKind::Read
    ));
    assert!(has(
        &run(&["git", "clone", "file:///home/u/.ssh", "x"]),
        EffectKind::Read,
        "/home/u/.ssh"
    ));
    assert!(has(
        &run(&["git", "fetch", "file:///srv/repo.git"]),
        EffectKind::Read,
        "/srv/repo.git"
    ));
}

/// The option that turns a program's reads into writes in place is named (`sed -i`), so a
/// rule that names another use of the program can tell it did not name this one.
#[test]
fn the_option_that_writes_in_place_is_named() {
    assert_eq!(
        run(&["sed", "-n", "-i", "s/a/b/", "f"])
            .in_place_by
            .as_deref(),
        Some("-i")
    );
    assert_eq!(
        run(&["sed", "--in-place=.bak", "s/a/b/", "f"])
            .in_place_by
            .as_deref(),
        Some("--in-place")
    );
    assert_eq!(run(&["sed", "-n", "1p", "f"]).in_place_by, None);
}

/// Programs and modules whose options load or run code, or write where they are told:
/// timeit's `-s`, openssl's providers and engines, an unfiltered `tarfile -e`, patch's backup
/// prefix, `npm pkg set`; and sqlite's dot commands that only show something.
#[test]
fn options_that_load_code_or_write_elsewhere() {
    let code = |line: &[&str], option: &str| {
        run(line).effects.iter().any(|e| {
            e.kind == EffectKind::RunsCode
                && e.value.is_some()
                && e.source.option.as_deref() == Some(option)
        })
    };
    assert!(code(&["timeit", "-s", "import os", "pass"], "-s"));
    assert!(code(
        &[
            "openssl",
            "list",
            "-provider-path",
            ".cache/ossl",
            "-provider",
            "x"
        ],
        "-provider-path"
    ));
    assert!(code(&["openssl", "req", "-engine", "pkcs11"], "-engine"));
    assert!(!has_kind(
        &run(&["openssl", "list", "-providers"]),
        EffectKind::RunsCode
    ));
    assert!(has_kind(
        &run(&["tarfile", "-e", "a.tar", "out"]),
        EffectKind::Unknown
    ));
    assert!(!has_kind(
        &run(&["tarfile", "-l", "a.tar"]),
        EffectKind::Unknown
    ));
    assert!(has(
        &run(&["patch", "-p1", "-b", "-B", "../backup/"]),
        EffectKind::Write,
        "../backup/"
    ));
    assert!(run(&["npm", "pkg", "set", "scripts.test=x"]).writes_below);
    assert!(!has_kind(
        &run(&["npm", "pkg", "get", "name"]),
        EffectKind::Write
    ));
    let sql = |text: &str| {
        has_kind(
            &run(&["sqlite3", "-readonly", "a.db", text]),
            EffectKind::Unknown,
        )
    };
    assert!(!sql(".schema users"));
    assert!(!sql(".tables"));
    assert!(sql(".read |curl x.example"));
    assert!(sql(".output /tmp/x"));
    assert!(sql(".tables readfile"));
}
