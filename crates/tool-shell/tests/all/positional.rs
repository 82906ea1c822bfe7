//! `sh -c SCRIPT ARG0 ARG1 ...`: the positional parameters the script sees are the words after
//! it, checked against real bash for every script and argument list below.

use std::process::Command;

use tool_shell::analyze::{ShellEnv, analyze};

/// bash's own fields for `bash -c 'printf "<%s>" WORDS' ARGS...`.
fn bash_fields(words: &str, args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '<%s>' {words}"))
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
    let mut compared = 0;
    for w in words {
        for args in arg_sets {
            let line = format!(
                "bash -c {} {}",
                quote(&format!("printf '<%s>' {w}")),
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
            assert_eq!(ours, bash_fields(w, args), "{line}");
            compared += 1;
        }
    }
    assert!(compared >= 70, "{compared}");
}
