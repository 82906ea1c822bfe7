//! `sh -c SCRIPT ARG0 ARG1 ...`: the positional parameters the script sees are the words after
//! it, checked against real bash for every script and argument list below.

use std::process::Command;

use tool_shell::analyze::{ShellEnv, analyze};

/// bash's own fields for `bash -c 'PREFIX printf "<%s>" WORDS' ARGS...`.
fn bash_fields(prefix: &str, words: &str, args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{prefix}printf '<%s>' {words}"))
        .args(args)
        .env_remove("IFS")
        .output()
        .unwrap_or_else(|e| panic!("bash: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

#[test]
fn positional_parameters_of_a_shell_string_are_the_words_after_it() {
    let env = ShellEnv::new("/nonexistent-dir-for-globs", "/home/u");
    let words = [
        "$1", "\"$1\"", "$0", "\"$0\"", "$#", "$*", "\"$*\"", "$@", "\"$@\"", "$2$1", "${1}",
        "\"${2}\"", "x$*y", "$9",
    ];
    let arg_sets: [&[&str]; 6] = [
        &[],
        &["zero"],
        &["zero", "a"],
        &["zero", "a b", "c"],
        &["zero", "", "d"],
        &["zero", "one two", "three", "four"],
    ];
    // `shift` moves them (not at all past their number).
    let prefixes = ["", "shift; ", "shift 2; ", "shift 9; ", "shift; shift; "];
    let mut compared = 0;
    for (w, prefix) in words
        .iter()
        .flat_map(|w| prefixes.iter().map(move |p| (w, p)))
    {
        for args in arg_sets {
            let line = format!(
                "bash -c {} {}",
                quote(&format!("{prefix}printf '<%s>' {w}")),
                args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
            );
            let a = analyze(&line, &env);
            let Some(printf) = a
                .units
                .iter()
                .find(|u| u.argv.first().is_some_and(|p| p == "printf"))
            else {
                panic!("{line}: no printf unit");
            };
            if !printf.certain {
                // Not known (`"$@"` of several words): never a guess.
                continue;
            }
            let ours: String = printf.argv[2..].iter().map(|f| format!("<{f}>")).collect();
            // printf with no argument for `%s` still prints the format once.
            let ours = if printf.argv.len() == 2 {
                "<>".to_owned()
            } else {
                ours
            };
            assert_eq!(ours, bash_fields(prefix, w, args), "{line}");
            compared += 1;
        }
    }
    assert!(compared >= 350, "{compared}");
}

/// Where the positional parameters may have changed in ways the walk does not follow (a loop
/// that may `shift` each time round, a function's own arguments, `set`, a sourced file), `$1`
/// is not known: never the value it had before.
#[test]
fn positional_parameters_are_not_guessed_where_they_may_have_changed() {
    let env = ShellEnv::new("/nonexistent-dir-for-globs", "/home/u");
    for script in [
        "while [ $# -gt 0 ]; do cat \"$1\"; shift; done",
        "until false; do cat $1; shift; done",
        "for x in a b; do cat $1; shift; done",
        "for ((i=0; i<2; i++)); do cat $1; shift; done",
        "f() { cat $1; }; f other",
        "set -- other; cat $1",
        ". ./lib.sh; cat $1",
        "shift $N; cat $1",
    ] {
        let line = format!("bash -c {} zero a b", quote(script));
        let a = analyze(&line, &env);
        let cats: Vec<_> = a
            .units
            .iter()
            .filter(|u| u.argv.first().is_some_and(|p| p == "cat"))
            .collect();
        assert!(!cats.is_empty(), "{line}");
        for u in cats {
            assert!(
                !u.certain && u.argv.get(1).is_none_or(|w| w.is_empty()),
                "{line}: {:?}",
                u.argv
            );
        }
    }
}
