//! Programs that change everything below a directory they write: the interpretation says so
//! for every spelling of the option that makes them, and only then.

use tool_shell::db::database;

fn tree_writes(line: &str) -> bool {
    let argv: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    database().interpret(&argv).tree_writes
}

#[test]
fn every_spelling_of_a_recursive_write_is_seen_and_nothing_else_is() {
    // Every option the database marks, in each of its names, alone, bundled and abbreviated.
    let mut checked = 0;
    for p in database().programs() {
        for o in p
            .options
            .iter()
            .filter(|o| o.mark.as_deref() == Some("tree-writes"))
        {
            for name in &o.names {
                let mut lines = vec![format!("{} {name} 755 dir", p.name)];
                if name.len() == 2 {
                    lines.push(format!("{} -f{} 755 dir", p.name, &name[1..]));
                    lines.push(format!("{} {name}f 755 dir", p.name));
                } else if name.starts_with("--") {
                    lines.push(format!("{} {} 755 dir", p.name, &name[..name.len() - 2]));
                }
                for line in lines {
                    assert!(tree_writes(&line), "{line}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 12, "{checked}");
    assert!(tree_writes("mv src /tmp/x"));
    for line in [
        "chmod 755 dir",
        "chown 1000 dir",
        "rm -f file",
        "rm --force file",
        "cp -r src dst",
    ] {
        assert!(!tree_writes(line), "{line}");
    }
}
