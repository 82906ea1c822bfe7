//! The read-only classifier: a command line is read-only only when it parses, runs no
//! substitution, control flow, function or background job, writes through no redirection, and
//! every simple command is an allowlisted program with allowlisted arguments. Anything else,
//! including anything it cannot parse, is not read-only.

use crate::parse::{CommandLine, RedirectKind, SimpleCommand};

/// Programs that only read, whatever their (literal) arguments.
const PLAIN: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "stat",
    "strings",
    "hexdump",
    "od",
    "nl",
    "id",
    "uname",
    "free",
    "df",
    "du",
    "locale",
    "groups",
    "nproc",
    "basename",
    "dirname",
    "realpath",
    "cut",
    "paste",
    "tr",
    "column",
    "tac",
    "rev",
    "fold",
    "expand",
    "unexpand",
    "fmt",
    "comm",
    "cmp",
    "numfmt",
    "readlink",
    "diff",
    "true",
    "false",
    "sleep",
    "which",
    "type",
    "expr",
    "test",
    "[",
    "getconf",
    "seq",
    "tsort",
    "pr",
    "cal",
    "uptime",
    "ls",
    "pwd",
    "whoami",
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "file",
    "tree",
    "date",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "base64",
    "basenc",
    "jq",
    "hostname",
    "printenv",
    "ps",
    "lsof",
];

/// Per-program argument checks for programs that are read-only only with some arguments.
fn args_ok(name: &str, args: &[String]) -> bool {
    let any = |pred: &dyn Fn(&str) -> bool| args.iter().any(|a| pred(a));
    match name {
        // ripgrep can run preprocessors.
        "rg" => !any(&|a| {
            a == "--pre"
                || a.starts_with("--pre=")
                || a == "--pre-glob"
                || a.starts_with("--pre-glob=")
        }),
        "find" => !any(&|a| {
            matches!(
                a,
                "-delete"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "sort" => !any(&|a| {
            a == "-o"
                || a.starts_with("-o") && !a.starts_with("--")
                || a.starts_with("--output")
                || a == "--compress-program"
                || a.starts_with("--compress-program=")
        }),
        // `uniq in out` writes `out`.
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        "sed" => sed_ok(args),
        "date" => !any(&|a| a == "-s" || a.starts_with("--set")),
        "hostname" => args.iter().all(|a| {
            a.starts_with('-') && !matches!(a.as_str(), "-F" | "--file" | "-b" | "--boot")
        }),
        "git" => git_ok(args),
        "jq" => !any(&|a| {
            matches!(a, "--rawfile" | "--slurpfile" | "-L" | "--from-file" | "-f")
                || a.starts_with("--rawfile=")
        }),
        "tree" => !any(&|a| a == "-o" || a.starts_with("--fromfile")),
        _ => PLAIN.contains(&name),
    }
}

/// `sed` only as a printer: `-n` with `Np`, `N,Mp` or `/re/p` scripts, no in-place editing,
/// no `w`/`e`/`r` commands.
fn sed_ok(args: &[String]) -> bool {
    let mut quiet = false;
    let mut script = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" => {}
            "-e" | "--expression" => script = it.next().cloned().or(script),
            s if s.starts_with('-') => return false,
            s if script.is_none() => script = Some(s.to_owned()),
            _ => {}
        }
    }
    let Some(script) = script else { return false };
    let printer = |s: &str| {
        let s = s.trim();
        let Some(addr) = s.strip_suffix('p') else {
            return false;
        };
        let addr = addr.trim();
        addr.split(',').all(|part| {
            let p = part.trim();
            (!p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '$'))
                || (p.len() >= 2
                    && p.starts_with('/')
                    && p.ends_with('/')
                    && !p[1..p.len() - 1].contains('/'))
        })
    };
    quiet && script.split(';').all(printer)
}

/// Read-only git subcommands, with no global options that change what git runs.
fn git_ok(args: &[String]) -> bool {
    let mut it = args.iter().skip_while(|a| *a == "--no-pager");
    let Some(sub) = it.next() else { return false };
    let rest: Vec<&str> = it.map(String::as_str).collect();
    let has = |pred: &dyn Fn(&str) -> bool| rest.iter().any(|a| pred(a));
    // Options that run programs or write files, whatever the subcommand.
    if has(&|a| {
        a.starts_with("--output")
            || a == "-o"
            || a.starts_with("--ext-diff")
            || a.starts_with("--exec")
            || a.starts_with("--upload-pack")
    }) {
        return false;
    }
    match sub.as_str() {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "blame" | "describe"
        | "shortlog" | "cat-file" | "ls-tree" | "grep" | "rev-list" | "merge-base" | "show-ref"
        | "name-rev" | "whatchanged" | "reflog" => {
            !(sub == "reflog" && has(&|a| matches!(a, "expire" | "delete")))
        }
        "branch" => rest.iter().all(|a| {
            matches!(
                *a,
                "-a" | "--all"
                    | "-r"
                    | "--remotes"
                    | "-v"
                    | "-vv"
                    | "--list"
                    | "--show-current"
                    | "--no-color"
                    | "--color"
            )
        }),
        "tag" => rest.iter().all(|a| matches!(*a, "-l" | "--list" | "-n")),
        "remote" => {
            rest.iter()
                .all(|a| matches!(*a, "-v" | "--verbose" | "show" | "get-url"))
                || rest.is_empty()
        }
        "stash" => rest.first().is_some_and(|a| matches!(*a, "list" | "show")),
        "config" => rest
            .iter()
            .any(|a| matches!(*a, "--get" | "--get-all" | "--list" | "-l" | "--get-regexp")),
        _ => false,
    }
}

/// True when one simple command only reads (its redirections not considered).
pub fn is_read_only_command(cmd: &SimpleCommand) -> bool {
    if !cmd.assignments.is_empty() {
        return false;
    }
    let Some(name) = cmd.name() else {
        return cmd.argv.is_empty();
    };
    // Every argument must be a literal: `$VAR` could hold anything (even `${x@P}` tricks).
    let Some(args) = cmd.argv[1..]
        .iter()
        .map(|w| w.literal.clone())
        .collect::<Option<Vec<String>>>()
    else {
        return false;
    };
    if args.iter().any(|a| a.contains('$') || a.contains('`')) {
        return false;
    }
    // A program named by path is only the program it claims to be in a system directory; one
    // in any other (perhaps writable) place could be anything.
    if name.contains('/')
        && !["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/"]
            .iter()
            .any(|d| name.starts_with(d) && !name[d.len()..].contains('/'))
    {
        return false;
    }
    let name = name.rsplit('/').next().unwrap_or(name);
    args_ok(name, &args)
}

/// True when the command line only reads (spec §6.7). Fails closed.
pub fn is_read_only(command: &str) -> bool {
    let Ok(line) = CommandLine::parse(command) else {
        return false;
    };
    if !line.substitutions.is_empty()
        || line.process_substitution
        || line.control_flow
        || line.defines_function
        || line.background
    {
        return false;
    }
    if line.commands.is_empty() {
        return false;
    }
    line.commands.iter().all(|c| {
        is_read_only_command(c)
            && c.redirects.iter().all(|r| match r.kind {
                RedirectKind::Read | RedirectKind::Here | RedirectKind::Duplicate => true,
                RedirectKind::Write | RedirectKind::Append => {
                    r.target.as_ref().and_then(|t| t.literal.as_deref()) == Some("/dev/null")
                }
                RedirectKind::ReadWrite => false,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::is_read_only;

    #[test]
    fn accepts_read_only_commands() {
        for cmd in [
            "ls -la",
            "git status",
            "grep -rn foo .",
            "cat a | wc -l",
            "git --no-pager log --oneline -5",
            "git diff HEAD~1 -- src",
            "find . -name '*.rs' -type f",
            "sed -n '1,20p' file.txt",
            "rg -n 'fn main' src",
            "head -5 a && tail -3 b",
            "grep foo a 2>/dev/null",
            "echo done",
            "/usr/bin/git status",
            "sort -u names.txt",
            "cat <<'EOF'\nliteral $(not run)\nEOF",
        ] {
            assert!(is_read_only(cmd), "should be read-only: {cmd}");
        }
    }

    #[test]
    fn rejects_anything_that_may_write_or_run() {
        for cmd in [
            "echo x > f",
            "echo x >> f",
            "git -c core.pager=sh log",
            "find . -delete",
            "find . -exec rm {} +",
            "sed -i s/a/b/ f",
            "sed -n '1w out' f",
            "rg --pre=sh x",
            "rg --pre sh x",
            "awk 'BEGIN{system(\"id\")}'",
            "$(id)",
            "echo $(id)",
            "echo `id`",
            "cat <(id)",
            "cat <<EOF\n$(id)\nEOF",
            "echo 'unterminated",
            "if true; then ls; fi",
            "ls &",
            "FOO=bar ls",
            "rm -rf /",
            "git push",
            "git branch -D main",
            "sort -o out in",
            "uniq in out",
            "xargs rm",
            "env ls",
            "ls $HOME",
            "f() { ls; }; f",
            "cat a > /dev/null; touch b",
            "git log --output=x",
            "git diff --ext-diff",
            "/tmp/git status",
            "./ls",
            "/usr/bin/../../tmp/cat x",
            "",
        ] {
            assert!(!is_read_only(cmd), "should not be read-only: {cmd:?}");
        }
    }
}
