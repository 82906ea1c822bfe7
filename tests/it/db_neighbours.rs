//! Every option the command database knows, tried against the rules that should and should
//! not cover it. The cases are not written by hand: each program, subcommand and option of the
//! shipped database makes its own, so an entry added later is held to the same laws.

use tool_core::{PermissionMode, PermissionSubject, Verdict};
use tool_shell::EffectKind;
use tool_shell::db::{Arity, OptionSpec, Program, ValueKind, database};
use toolgate_tests::{Sandbox, policy};

/// The effects an option can add that no rule covers unless it names the option.
const ADDED: [EffectKind; 6] = [
    EffectKind::Write,
    EffectKind::ExecString,
    EffectKind::ExecProgram,
    EffectKind::RunsCode,
    EffectKind::Network,
    EffectKind::System,
];

/// Every program of the database and every subcommand below it, by the words that run it.
fn programs() -> Vec<&'static Program> {
    fn walk(p: &'static Program, out: &mut Vec<&'static Program>) {
        out.push(p);
        for sub in p.subcommands() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    for p in database().programs() {
        walk(p, &mut out);
    }
    out
}

/// A value that, wherever `effect` puts it, does something no rule here covers.
fn value_for(effect: EffectKind) -> &'static str {
    match effect {
        EffectKind::Write => "out.txt",
        EffectKind::ExecString => "'touch /opt/made'",
        EffectKind::ExecProgram => "/opt/prog",
        EffectKind::Network => "http://evil.example/",
        _ => "/opt/code",
    }
}

/// Every way of giving option `o` of `p` the value `value` that the program reads alike: the
/// value as the next word or attached, by each of the option's names, a long name shortened
/// where the program takes prefixes, the name quoted. Empty for an option whose value has a
/// grammar of its own (tried elsewhere).
fn spellings(p: &Program, o: &OptionSpec, value: &str) -> Vec<Vec<String>> {
    if o.value != ValueKind::Plain || o.count > 1 {
        return Vec::new();
    }
    spelt(p, o, value)
}

/// The value `o` takes to name the file `path`, by how the option reads its value: `@PATH`
/// for an option that reads a file so marked (`curl -d @FILE`), `NAME=@PATH` for a form
/// field; `None` for an option whose value names no file.
fn naming(o: &OptionSpec, path: &str) -> Option<String> {
    Some(match o.value {
        ValueKind::Plain | ValueKind::NamesFile | ValueKind::MakefilePath => path.to_owned(),
        ValueKind::AtFile => format!("@{path}"),
        ValueKind::FormFile => format!("f=@{path}"),
        _ => return None,
    })
}

/// [`spellings`] for a value already in the option's own form.
fn spelt(p: &Program, o: &OptionSpec, value: &str) -> Vec<Vec<String>> {
    if o.count > 1 {
        return Vec::new();
    }
    let mut names: Vec<String> = o.names.clone();
    if p.syntax.abbrev {
        for long in o
            .names
            .iter()
            .filter(|n| n.starts_with("--") && n.len() > 5)
        {
            let short = &long[..long.len() - 1];
            let others = p
                .options
                .iter()
                .flat_map(|other| &other.names)
                .filter(|n| n.starts_with(short))
                .count();
            if others == 1 {
                names.push(short.to_owned());
            }
        }
    }
    let mut out = Vec::new();
    for name in names {
        let long = name.starts_with("--") || p.syntax.single_dash_long;
        let quoted = format!("'{name}'");
        match o.arg {
            Arity::None => {
                out.push(vec![name]);
                out.push(vec![quoted]);
            }
            Arity::Optional if o.in_place => out.push(vec![name]),
            Arity::Required => {
                out.push(vec![name.clone(), value.to_owned()]);
                out.push(vec![quoted, value.to_owned()]);
                if long && name.len() > 2 {
                    out.push(vec![format!("{name}={value}")]);
                } else if name.len() == 2 && p.syntax.bundle {
                    out.push(vec![format!("{name}{value}")]);
                }
            }
            Arity::Optional | Arity::Command => {}
        }
    }
    out
}

/// A flag of `p` that does nothing a rule could care about: the "use" a rule names.
fn plain_flag(p: &Program) -> Option<&OptionSpec> {
    p.options.iter().find(|o| {
        o.arg == Arity::None
            && o.effects.is_empty()
            && !o.in_place
            && !o.stop
            && !o.chdir
            && o.operands.is_none()
            && o.mark.is_none()
            && o.names
                .first()
                .is_some_and(|n| n.starts_with('-') && n.len() > 1)
    })
}

fn verdict(sb: &Sandbox, mode: PermissionMode, allow: &str, line: &str) -> Verdict {
    let p = policy(&[], &[allow], &[]);
    let subject = PermissionSubject::ShellCommand(line.to_owned());
    toolgate_tests::decide(&p, &sb.ctx_in(mode), "Bash", &subject, false).verdict
}

/// A rule naming a use of a program (`Bash(git diff --stat:*)`) does not cover an option it
/// does not name that writes, runs code or a program, reaches the network or changes the
/// system; the use alone it covers.
#[test]
fn a_rule_naming_a_use_never_covers_an_option_that_adds_an_effect() {
    let sb = Sandbox::new();
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let Some(flag) = plain_flag(p) else { continue };
        let used = format!("{} {}", p.name, flag.names[0]);
        let rule = format!("Bash({used}:*)");
        if verdict(&sb, PermissionMode::Default, &rule, &used) != Verdict::Allow {
            continue;
        }
        for o in &p.options {
            let Some(&effect) = ADDED.iter().find(|e| o.effects.contains(e)) else {
                continue;
            };
            for words in spellings(p, o, value_for(effect)) {
                let line = format!("{used} {}", words.join(" "));
                tried += 1;
                if verdict(&sb, PermissionMode::Default, &rule, &line) == Verdict::Allow {
                    wrong.push(format!("{rule} allowed {line:?} ({})", effect.as_str()));
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A rule naming the program covers what the program does, but not a write an option makes
/// in default mode, nor a command or program an option names (decided as its own).
#[test]
fn a_rule_naming_the_program_does_not_cover_what_its_options_write_or_run() {
    let sb = Sandbox::new();
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let rule = format!("Bash({}:*)", p.name);
        for o in &p.options {
            let Some(&effect) = [
                EffectKind::Write,
                EffectKind::ExecString,
                EffectKind::ExecProgram,
            ]
            .iter()
            .find(|e| o.effects.contains(e)) else {
                continue;
            };
            for words in spellings(p, o, value_for(effect)) {
                let line = format!("{} {}", p.name, words.join(" "));
                tried += 1;
                if verdict(&sb, PermissionMode::Default, &rule, &line) == Verdict::Allow {
                    wrong.push(format!("{rule} allowed {line:?} ({})", effect.as_str()));
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The spellings of one path that bash hands over alike, or that name the same file.
const SECRET: [&str; 6] = [
    "/opt/secret/key",
    "/opt//secret/key",
    "/opt/secret/./key",
    "/opt/x/../secret/key",
    "\"/opt/secret/key\"",
    "/opt/secret/'k'ey",
];

/// Whatever option or operand of whatever program names a file, and however the path is
/// spelt: a Read or Edit deny rule on the file denies the line, under a rule that allows the
/// program.
#[test]
fn every_option_and_operand_that_names_a_denied_file_is_denied() {
    use tool_shell::db::Role;
    let sb = Sandbox::new();
    let p_deny = ["Read(//opt/secret/**)", "Edit(//opt/secret/**)"];
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        // bash's `time` is its keyword: `time -o FILE` runs a command named `-o`.
        if p.name == "time" {
            continue;
        }
        let rule = format!("Bash({}:*)", p.name);
        let pol = policy(&p_deny, &[&rule], &[]);
        let mut check = |line: String, what: &str| {
            tried += 1;
            let subject = PermissionSubject::ShellCommand(line.clone());
            let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
            if v != Verdict::Deny {
                wrong.push(format!("{rule}: {line:?} ({what}) came out {v:?}"));
            }
        };
        for o in &p.options {
            let Some(&effect) = [EffectKind::Read, EffectKind::Write]
                .iter()
                .find(|e| o.effects.contains(e))
            else {
                continue;
            };
            if o.arg != Arity::Required {
                continue;
            }
            for path in SECRET {
                let Some(value) = naming(o, path) else { break };
                for words in spelt(p, o, &value) {
                    check(format!("{} {}", p.name, words.join(" ")), effect.as_str());
                }
            }
        }
        let first = p.operands.first().map(|s| &s.roles);
        if first.is_some_and(|r| {
            r.iter()
                .any(|r| matches!(r, Role::Read | Role::Write | Role::ReadWrite))
        }) && !p.has_subcommands()
        {
            for path in SECRET {
                check(format!("{} {path}", p.name), "operand");
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Spellings of a `file:` URL of the denied file that the programs taking URLs read as it.
const SECRET_URLS: [&str; 5] = [
    "file:///opt/secret/key",
    "file:/opt/secret/key",
    "file://localhost/opt/secret/key",
    "FILE:///opt/secret/key",
    "'file:///opt/secret/key'",
];

/// A `file:` URL names a local file wherever a program takes a URL or a remote: an operand
/// that reaches the network, or a repository to read from or write to, never reads a denied
/// file by its URL under a rule that allows the program. (Options that reach the network
/// take ports, modes and hosts as often as URLs: they are not tried here.)
#[test]
fn a_file_url_of_a_denied_file_is_never_allowed_where_a_url_goes() {
    use tool_shell::db::Role;
    let sb = Sandbox::new();
    let p_deny = ["Read(//opt/secret/**)", "Edit(//opt/secret/**)"];
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let rule = format!("Bash({}:*)", p.name);
        let pol = policy(&p_deny, &[&rule], &[]);
        let mut check = |line: String| {
            tried += 1;
            let subject = PermissionSubject::ShellCommand(line.clone());
            let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
            if v == Verdict::Allow {
                wrong.push(format!("{rule}: {line:?} came out {v:?}"));
            }
        };
        let first = p.operands.first().map(|s| &s.roles);
        if first.is_some_and(|r| {
            r.iter()
                .any(|r| matches!(r, Role::Network | Role::RemoteRead | Role::RemoteWrite))
        }) {
            for url in SECRET_URLS {
                check(format!("{} {url}", p.name));
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// What a program reads on its standard input from another program of the line cannot be
/// known: where that is shell code, a job or commands of the program's own language, the
/// line is not allowed by rules that allow both programs, whatever the first one is.
#[test]
fn code_fed_from_another_program_is_never_taken_for_known() {
    use tool_shell::db::Stdin;
    let sb = Sandbox::new();
    sb.write("notes.txt", "x\n");
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        if !matches!(p.stdin, Some(Stdin::Shell | Stdin::Job | Stdin::Commands)) {
            continue;
        }
        let rule = format!("Bash({}:*)", p.name);
        for producer in [
            "cat notes.txt",
            "sort notes.txt",
            "head -n 5 notes.txt",
            "jq . notes.txt",
        ] {
            let first = producer.split(' ').next().unwrap_or(producer);
            let first_rule = format!("Bash({first}:*)");
            let pol = policy(&[], &[&rule, &first_rule, "Bash(tee:*)"], &[]);
            for line in [
                format!("{producer} | {}", p.name),
                format!("{producer} |& {}", p.name),
                format!("{} < <({producer})", p.name),
                format!("{producer} | tee /dev/null | {}", p.name),
            ] {
                tried += 1;
                let subject = PermissionSubject::ShellCommand(line.clone());
                let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
                if v == Verdict::Allow {
                    wrong.push(format!("{rule} {first_rule}: {line:?} came out {v:?}"));
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A rule naming a use of a program that runs the code it is fed when given no script
/// (`Bash(python3 -u:*)`) does not cover code fed from another program of the line.
#[test]
fn a_rule_naming_a_use_does_not_cover_code_fed_on_standard_input() {
    let sb = Sandbox::new();
    sb.write("notes.txt", "x\n");
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let runs = [EffectKind::RunsCode, EffectKind::ExecString];
        if !p.bare.iter().any(|e| runs.contains(e)) {
            continue;
        }
        let Some(flag) = plain_flag(p) else { continue };
        let used = format!("{} {}", p.name, flag.names[0]);
        let rule = format!("Bash({used}:*)");
        let pol = policy(&[], &[&rule, "Bash(cat:*)"], &[]);
        for line in [
            format!("cat notes.txt | {used}"),
            format!("{used} < notes.txt"),
            format!("{used} <<< \"$(cat notes.txt)\""),
        ] {
            tried += 1;
            let subject = PermissionSubject::ShellCommand(line.clone());
            let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
            if v == Verdict::Allow {
                wrong.push(format!("{rule}: {line:?} came out {v:?}"));
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every program that runs the rest of its words as a command (`timeout 5 CMD`, `nice CMD`,
/// `xargs CMD`): the command is a unit of its own, which a deny rule stops and which a rule
/// for the wrapper does not allow.
#[test]
fn what_a_wrapper_runs_is_decided_as_its_own() {
    use tool_shell::db::{Repeat, Role};
    let sb = Sandbox::new();
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let Some(at) = p.operands.iter().position(|s| {
            s.roles
                .iter()
                .any(|r| matches!(r, Role::ExecArgv | Role::ExecArgvOpen))
        }) else {
            continue;
        };
        // The operands before the command, each given a number (a duration, a priority).
        let before: Vec<&str> = p.operands[..at]
            .iter()
            .filter(|s| s.repeat == Repeat::One)
            .map(|_| "5")
            .collect();
        // The wrapper alone, and with each of its options that has no effect of its own
        // (its value a number) and leaves the command where it is, so that an option read
        // with the wrong arity shows.
        let mut leads = vec![String::new()];
        for o in p
            .options
            .iter()
            .filter(|o| o.effects.is_empty() && !o.stop && o.operands.is_none())
        {
            let Some(name) = o.names.first() else {
                continue;
            };
            match o.arg {
                Arity::None => leads.push(name.clone()),
                Arity::Required => {
                    leads.push(format!("{name} 5"));
                    if name.starts_with("--") {
                        leads.push(format!("{name}=5"));
                    }
                }
                Arity::Optional | Arity::Command => {}
            }
        }
        let rule = format!("Bash({}:*)", p.name);
        for options in &leads {
            let lead = std::iter::once(p.name.as_str())
                .chain((!options.is_empty()).then_some(options.as_str()))
                .chain(before.iter().copied())
                .collect::<Vec<_>>()
                .join(" ");
            for (deny, command, want) in [
                (Some("Bash(touch:*)"), "touch made.txt", Verdict::Deny),
                (None, "touch /opt/made", Verdict::Ask),
                (None, "sh -c 'touch /opt/made'", Verdict::Ask),
            ] {
                let pol = policy(deny.as_slice(), &[&rule], &[]);
                let line = format!("{lead} {command}");
                tried += 1;
                let subject = PermissionSubject::ShellCommand(line.clone());
                let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
                let ok = match want {
                    Verdict::Deny => v == Verdict::Deny,
                    _ => v != Verdict::Allow,
                };
                if !ok {
                    wrong.push(format!("{rule} deny {deny:?}: {line:?} came out {v:?}"));
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// An option that sets the directory a program works in reads that directory, as `cd` does:
/// pointed at a denied directory, the line is not allowed by a rule that allows the program.
#[test]
fn an_option_that_moves_a_program_into_a_denied_directory_is_not_allowed() {
    let sb = Sandbox::new();
    let p_deny = ["Read(//opt/secret/**)", "Read(//opt/secret)"];
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        let rule = format!("Bash({}:*)", p.name);
        let pol = policy(&p_deny, &[&rule], &[]);
        for o in p.options.iter().filter(|o| o.chdir) {
            for dir in ["/opt/secret", "/opt/secret/", "/opt/x/../secret"] {
                for words in spelt(p, o, dir) {
                    let line = format!("{} {}", p.name, words.join(" "));
                    tried += 1;
                    let subject = PermissionSubject::ShellCommand(line.clone());
                    let v =
                        toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
                    if v != Verdict::Deny {
                        wrong.push(format!("{rule}: {line:?} came out {v:?}"));
                    }
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A program that reads more arguments from `@FILE` may find any of its options there (GCC's
/// `-wrapper`, an output elsewhere): a rule for the program does not allow what it cannot
/// see, and a denied file named so is denied.
#[test]
fn arguments_read_from_a_file_are_not_known() {
    let sb = Sandbox::new();
    sb.write("args.txt", "-O2\n");
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs().into_iter().filter(|p| p.syntax.argument_files) {
        let rule = format!("Bash({}:*)", p.name);
        let pol = policy(&["Read(//opt/secret/**)"], &[&rule], &[]);
        for (line, want) in [
            (format!("{} @args.txt main.c", p.name), Verdict::Ask),
            (format!("{} main.c '@args.txt'", p.name), Verdict::Ask),
            (format!("{} @/opt/secret/key", p.name), Verdict::Deny),
            (format!("{} main.c", p.name), Verdict::Allow),
        ] {
            tried += 1;
            let subject = PermissionSubject::ShellCommand(line.clone());
            let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
            if v != want {
                wrong.push(format!("{rule}: {line:?} came out {v:?}, not {want:?}"));
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(
        tried > 0,
        "no program of the database reads arguments from a file"
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// What a program's own command language does with files and the shell, fed on its standard
/// input by the line: a command that reads or writes a denied file is denied, and a shell
/// escape running a denied program is denied, for every program whose language the database
/// describes.
#[test]
fn a_language_fed_on_the_line_meets_the_deny_rules() {
    use tool_shell::db::Stdin;
    let sb = Sandbox::new();
    let deny = [
        "Read(//opt/secret/**)",
        "Edit(//opt/secret/**)",
        "Bash(touch:*)",
    ];
    let mut tried = 0;
    let mut wrong = Vec::new();
    for p in programs() {
        if p.stdin != Some(Stdin::Commands) {
            continue;
        }
        let Some(lang) = &p.language else { continue };
        let rule = format!("Bash({}:*)", p.name);
        let pol = policy(&deny, &[&rule, "Bash(printf:*)"], &[]);
        let mut lines: Vec<String> = Vec::new();
        for c in lang.reads.iter().chain(&lang.writes) {
            lines.push(format!("{c} /opt/secret/key"));
        }
        for s in &lang.shell {
            let sep = if s.ends_with([' ', '!']) { "" } else { " " };
            lines.push(format!("{s}{sep}touch made.txt"));
        }
        for text in lines {
            for line in [
                format!("printf '%s\\n' '{text}' | {}", p.name),
                format!("{} <<'EOF'\n{text}\nEOF", p.name),
            ] {
                tried += 1;
                let subject = PermissionSubject::ShellCommand(line.clone());
                let v = toolgate_tests::decide(&pol, &sb.ctx(), "Bash", &subject, false).verdict;
                if v != Verdict::Deny {
                    wrong.push(format!("{rule}: {line:?} came out {v:?}"));
                }
            }
        }
    }
    eprintln!("{tried} lines tried");
    assert!(tried > 0, "no language in the database");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
