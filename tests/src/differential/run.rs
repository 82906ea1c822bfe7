//! Running a line with the real bash and reading what it executed.
//!
//! `PATH` holds only shims: `#!/bin/sh` scripts (the real `/bin/sh`, which is never a shim)
//! that append a record of their directory and argv to `$TG_LOG/<pid>` and exit 0 (1 for
//! [`FAILING`]); the `echo` shim also prints its arguments, so substitutions have output. A
//! record is `U`, then `<byte length>:<bytes>` for the directory, the name and each
//! argument, then a newline; lengths make any byte, newlines included, safe.
//!
//! The line runs as `bash --noprofile --norc -c` in its own process group with a clean
//! environment (`PATH`, `HOME`, `TG_LOG`, `LC_ALL=C`), after `exec 9>&1` and `enable -n` of
//! [`DISABLED_BUILTINS`]. Every process bash starts inherits descriptor 9, the write end of the
//! pipe the runner reads, so the end of that pipe means every background job and process
//! substitution has finished too. A line that outlives its timeout has its group killed.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::oracle::{FILES, World};
use super::{DISABLED_BUILTINS, FAILING, PROGRAMS, Unit};

/// The shim directory, shared by every line of a run.
#[derive(Debug)]
pub struct Shims {
    dir: tempfile::TempDir,
}

impl Shims {
    /// Write the shims.
    pub fn new() -> io::Result<Self> {
        let dir = tempfile::tempdir()?;
        for name in PROGRAMS {
            // The echo shim ignores SIGPIPE: a reader that exits first must not change its
            // status (it would turn `echo x | p1 && p2` into a skipped `p2`).
            let mut script = String::from(
                "#!/bin/sh\ntrap '' PIPE\n{ printf U; for a in \"$PWD\" \"${0##*/}\" \"$@\"; do \
                 printf '%s:%s' \"${#a}\" \"$a\"; done; printf '\\n'; } >>\"$TG_LOG/$$\"\n",
            );
            if *name == "echo" {
                script.push_str("printf '%s\\n' \"$*\" 2>/dev/null\n");
            }
            script.push_str(if FAILING.contains(name) {
                "exit 1\n"
            } else {
                "exit 0\n"
            });
            let path = dir.path().join(name);
            fs::write(&path, script)?;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        }
        Ok(Self { dir })
    }

    /// Where they are.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Make a fresh temporary root with `ws/` and `home/` laid out as [`World`] says. The
/// directory is removed when the returned guard drops.
pub fn stage() -> io::Result<(tempfile::TempDir, World)> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let world = World {
        ws: root.join("ws"),
        home: root.join("home"),
    };
    for d in world.dirs() {
        fs::create_dir_all(&d)?;
        for f in FILES {
            fs::write(d.join(f), f)?;
        }
    }
    fs::create_dir_all(root.join("log"))?;
    Ok((dir, world))
}

/// What bash did with a line.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    /// The programs it ran.
    pub units: Vec<Unit>,
    /// Its standard error.
    pub stderr: String,
    /// Why the run cannot be trusted (a timeout, an unreadable log), if so.
    pub problem: Option<String>,
}

fn parse_log(bytes: &[u8], out: &mut Vec<Unit>) -> Result<(), String> {
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'U' {
            return Err(format!("bad record start at byte {i}"));
        }
        i += 1;
        let mut fields = Vec::new();
        while bytes.get(i) != Some(&b'\n') {
            let colon = bytes[i..]
                .iter()
                .position(|b| *b == b':')
                .ok_or("a field without a length")?;
            let len: usize = std::str::from_utf8(&bytes[i..i + colon])
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or("a bad field length")?;
            let start = i + colon + 1;
            let field = bytes
                .get(start..start + len)
                .ok_or("a field past the end")?;
            fields.push(String::from_utf8_lossy(field).into_owned());
            i = start + len;
            if i >= bytes.len() {
                return Err("a record without its newline".into());
            }
        }
        i += 1;
        if fields.len() < 2 {
            return Err("a record without directory and name".into());
        }
        let cwd = PathBuf::from(fields.remove(0));
        out.push(Unit { argv: fields, cwd });
    }
    Ok(())
}

/// Run `line` with bash in `world` (its `ws` the start directory).
pub fn run_bash(
    shims: &Shims,
    world: &World,
    line: &str,
    timeout: Duration,
) -> io::Result<Executed> {
    let root = world.ws.parent().unwrap_or(&world.ws).to_path_buf();
    let log = root.join("log");
    let script = format!(
        "exec 9>&1\nenable -n {}\n{line}",
        DISABLED_BUILTINS.join(" ")
    );
    let stderr_path = root.join("stderr");
    let mut child = Command::new("/bin/bash")
        .args(["--noprofile", "--norc", "-c", &script])
        .env_clear()
        .env("PATH", shims.path())
        .env("HOME", &world.home)
        .env("TG_LOG", &log)
        .env("LC_ALL", "C")
        .current_dir(&world.ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&stderr_path)?)
        .process_group(0)
        .spawn()?;
    let pgid = child.id();
    let (done, wait_done) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = wait_done.recv_timeout(timeout) {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            return true;
        }
        false
    });
    let mut sink = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut sink)?;
    }
    child.wait()?;
    let _ = done.send(());
    let timed_out = watchdog.join().unwrap_or(true);
    let mut ran = Executed {
        stderr: fs::read_to_string(&stderr_path).unwrap_or_default(),
        ..Executed::default()
    };
    if timed_out {
        ran.problem = Some(format!("timed out after {timeout:?}"));
    }
    let mut names: Vec<_> = fs::read_dir(&log)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        if let Err(e) = parse_log(&fs::read(&p)?, &mut ran.units) {
            ran.problem
                .get_or_insert(format!("log {}: {e}", p.display()));
        }
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_records_with_newlines_and_colons() {
        let mut units = Vec::new();
        parse_log(b"U4:/w/x2:p13:a:b2:\n\n\nU4:/w/y1:a\n", &mut units).unwrap();
        assert_eq!(units.len(), 2);
        assert_eq!(units[0].argv, ["p1", "a:b", "\n\n"]);
        assert_eq!(units[0].cwd, PathBuf::from("/w/x"));
        assert_eq!(units[1].argv, ["a"]);
        assert!(parse_log(b"U4:/w/x2:p1", &mut Vec::new()).is_err());
    }
}
