//! Which standard input a command reads when a pipe, an enclosing group and its own
//! redirections all give one: the analysis reads the code `sh` is fed as bash runs it.

use std::process::Command;

use tool_shell::analyze::{ShellEnv, analyze};

#[test]
fn the_code_a_shell_is_fed_is_what_bash_feeds_it() {
    let env = ShellEnv::new("/nonexistent-dir-for-globs", "/home/u");
    let a = "'printf A'";
    let b = "'printf B'";
    let c = "'printf C'";
    let lines = [
        format!("echo {a} | sh"),
        format!("echo {a} | sh <<< {b}"),
        format!("{{ sh; }} <<< {a}"),
        format!("{{ sh <<< {b}; }} <<< {a}"),
        format!("echo {a} | {{ sh <<< {b}; }}"),
        format!("echo {a} | {{ sh; }} <<< {c}"),
        format!("echo {a} | ( sh <<< {b} )"),
        format!("sh <<< {a} <<< {b}"),
        format!("echo {a} | {{ {{ sh; }} <<< {c}; }}"),
    ];
    for line in lines {
        let out = Command::new("bash")
            .arg("-c")
            .arg(&line)
            .output()
            .unwrap_or_else(|e| panic!("bash: {e}"));
        let ran = String::from_utf8_lossy(&out.stdout).into_owned();
        let got: Vec<String> = analyze(&line, &env)
            .units
            .iter()
            .filter(|u| u.argv.first().is_some_and(|p| p == "printf"))
            .map(|u| u.argv[1..].join(" "))
            .collect();
        assert_eq!(got, [ran], "{line}");
    }
}
