//! A stand-in for a program a Bash deny rule names, in the world `cargo xtask security
//! --effects` stages: bound over the program's file, it notes that it ran (its name and
//! arguments, one JSON line in the project's `.toolgate-effects/ran.jsonl`, or on standard
//! error when that cannot be written) and then runs the real program, bound at
//! `/harness/real/<name>`, with the same arguments.
//!
//! Which program it stands for is written at the end of its own file (`\0TOOLGATE-EFFECTS-STUB:
//! <name>\n`), so a copy of it under another name still says so, as a copy of the real program
//! is still that program.

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;

const MARK: &[u8] = b"\0TOOLGATE-EFFECTS-STUB:";

/// The name written at the end of `file`, if it is a stand-in.
fn marked(file: &[u8]) -> Option<String> {
    let at = file.windows(MARK.len()).rposition(|w| w == MARK)?;
    let rest = &file[at + MARK.len()..];
    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

fn main() {
    // Started directly, the running file is this one; started by the dynamic loader
    // (`ld.so ./copy`), it is one of the files mapped.
    let name = marked(&std::fs::read("/proc/self/exe").unwrap_or_default())
        .or_else(|| {
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
            let mut seen = std::collections::BTreeSet::new();
            maps.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .filter(|p| p.starts_with('/') && seen.insert(p.to_owned()))
                .find_map(|p| marked(&std::fs::read(p).ok()?))
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut line = vec![name.clone()];
    line.extend(args.iter().cloned());
    let text = format!("{}\n", serde_json::Value::from(line.clone()));
    let noted = std::fs::create_dir_all("/w/p/.toolgate-effects").is_ok()
        && std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open("/w/p/.toolgate-effects/ran.jsonl")
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .is_ok();
    if !noted {
        eprint!("TOOLGATE-EFFECTS-RAN {text}");
    }
    let err = std::process::Command::new(format!("/harness/real/{name}"))
        .arg0(&name)
        .args(&args)
        .exec();
    eprintln!("{name}: {err}");
    std::process::exit(127);
}
