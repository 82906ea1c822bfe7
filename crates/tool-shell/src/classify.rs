//! The read-only classifier, a query on the analysis: a command line is read-only only when
//! it parses completely, runs nothing in the background, and every unit is a program the
//! command database knows, with known words, whose every effect is a read, with no
//! redirection that writes (but to `/dev/null`). Anything else, including anything it cannot
//! parse, is not read-only.

use crate::EffectKind;
use crate::analyze::{Analysis, ShellEnv, Unit, analyze};

/// Directories whose programs are the programs they claim to be.
const SYSTEM_DIRS: &[&str] = &["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/"];

/// Variables whose assignment does not change what a command does (locale, colour, terminal
/// size, `CI`).
pub fn inert_assignment(name: &str) -> bool {
    matches!(
        name,
        "LANG"
            | "LANGUAGE"
            | "TZ"
            | "NO_COLOR"
            | "CI"
            | "TERM"
            | "COLUMNS"
            | "LINES"
            | "FORCE_COLOR"
            | "CLICOLOR"
            | "CLICOLOR_FORCE"
    ) || name.starts_with("LC_")
}

/// Is `argv0` the program it names: a bare name, or a program directly in a system
/// directory? One in any other (perhaps writable) place could be anything.
pub fn trusted_program_name(argv0: &str) -> bool {
    !argv0.contains('/')
        || SYSTEM_DIRS
            .iter()
            .any(|d| argv0.starts_with(d) && !argv0[d.len()..].contains('/'))
}

/// Does a unit, by its own words, only read? Known exactly, a program the database knows,
/// named plainly, with only inert assignments, and every effect a read, but for the writes of
/// its redirections: where those may write is the caller's question.
pub fn reads_only(u: &Unit) -> bool {
    u.certain
        && u.unknown.is_empty()
        && !u.is_bare()
        && u.argv.first().is_some_and(|a| trusted_program_name(a))
        && !u.interpretation.path.is_empty()
        && u.assignments.iter().all(|a| inert_assignment(&a.name))
        && u.effects().all(|e| {
            e.kind == EffectKind::Read || (e.kind == EffectKind::Write && e.source.is_redirection())
        })
}

/// True when one unit only reads, its redirections and assignments included.
pub fn is_read_only_unit(u: &Unit) -> bool {
    reads_only(u)
        && u.assignments.is_empty()
        && u.redirects
            .iter()
            .all(|r| r.is_harmless() || (r.kind.reads() && !r.kind.writes()))
}

/// True when every unit of an analysis only reads.
pub fn is_read_only_analysis(a: &Analysis) -> bool {
    a.parsed
        && a.problems.is_empty()
        && !a.background
        && !a.has_substitution()
        && !a.units.is_empty()
        && a.units.iter().all(is_read_only_unit)
}

/// True when the command line only reads (spec §6.7). Fails closed. Words are expanded
/// without a file system (no globbing), in a home that names nothing.
pub fn is_read_only(command: &str) -> bool {
    is_read_only_analysis(&analyze(command, &ShellEnv::detached()))
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
            "ls &",
            "FOO=bar ls",
            "rm -rf /",
            "git push",
            "git branch -D main",
            "sort -o out in",
            "sort --out=x in",
            "uniq in out",
            "xargs rm",
            "ls $HOME_UNKNOWN_VAR",
            "f() { ls; }; f",
            "cat a > /dev/null; touch b",
            "git log --output=x",
            "git diff --ext-diff",
            "/tmp/git status",
            "./ls",
            "/usr/bin/../../tmp/cat x",
            "{rm,-rf,x}",
            "r''m -rf x",
            "",
        ] {
            assert!(!is_read_only(cmd), "should not be read-only: {cmd:?}");
        }
    }
}
