//! Programs whose options change the directory of the command they run: for every such option
//! in the database, the command is read in that directory, whatever the program.

use std::path::PathBuf;

use tool_shell::analyze::{ShellEnv, analyze};
use tool_shell::db::{Program, Role, database};

/// Every program and subcommand of the database, with the words that run it.
fn every_program() -> Vec<(Vec<String>, &'static Program)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<String>, &'static Program)> = database()
        .programs()
        .map(|p| (vec![p.name.clone()], p))
        .collect();
    while let Some((words, p)) = stack.pop() {
        for sub in p.subcommands() {
            let last = sub.name.rsplit(' ').next().unwrap_or(&sub.name).to_owned();
            let mut w = words.clone();
            w.push(last);
            stack.push((w, sub));
        }
        out.push((words, p));
    }
    out
}

#[test]
fn a_command_run_after_an_option_that_changes_directory_is_read_there() {
    let env = ShellEnv::new("/w/p", "/home/u");
    let mut checked = Vec::new();
    for (words, p) in every_program() {
        // How the command is given: its words, or one string.
        let Some(joined) = p.operands.iter().find_map(|s| {
            s.roles.iter().find_map(|r| match r {
                Role::ExecArgv | Role::ExecArgvOpen => Some(false),
                Role::ExecStringJoined => Some(true),
                _ => None,
            })
        }) else {
            continue;
        };
        for o in p.options.iter().filter(|o| o.chdir) {
            for name in &o.names {
                // A value that is only ever attached (`nsenter -wDIR`) is written so.
                let attached = o.arg == tool_shell::db::Arity::Optional;
                let (opt, cmd) = if name.starts_with("--") {
                    (format!("{name}=sub/dir"), "cat f")
                } else if attached {
                    (format!("{name}sub/dir"), "cat f")
                } else {
                    (format!("{name} sub/dir"), "cat f")
                };
                let cmd = if joined {
                    format!("'{cmd}'")
                } else {
                    cmd.to_owned()
                };
                let line = format!("{} {opt} {cmd}", words.join(" "));
                let a = analyze(&line, &env);
                let cat = a
                    .units
                    .iter()
                    .find(|u| u.argv.first().is_some_and(|w| w == "cat"))
                    .unwrap_or_else(|| panic!("{line}: no unit runs cat: {:?}", a.units));
                assert_eq!(cat.cwd, PathBuf::from("/w/p/sub/dir"), "{line}");
                checked.push(line);
            }
        }
    }
    // env, sudo, unshare, systemd-run, tmux (three forms), at least.
    assert!(checked.len() >= 10, "{checked:?}");
}
