//! Repositories a sandboxed command creates. A repository's hooks and the settings in its
//! `config` run programs the next time anyone runs git there, so an existing repository's are
//! mounted read-only. A repository that did not exist when the plan was made cannot be
//! protected by a mount: when the command ends, every git directory that is new under the
//! writable directories (a `.git`, a bare repository's `HEAD` + `objects` + `refs`, a
//! submodule's git directory) keeps only what `git init` and `git clone` put there: its hooks
//! other than git's samples are removed, and its `config` keeps only settings that run
//! nothing. A new `.git` file pointing somewhere that is not looked after this way is removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tool_core::sandbox::Settled;

/// Settings a repository's `config` may keep, by section (lower case) and key (lower case):
/// those `git init` and `git clone` write and others that only shape how git stores and
/// names things. Anything else (`core.fsmonitor`, `core.hooksPath`, `core.sshCommand`,
/// aliases, filters, diff and merge drivers, credential helpers, includes, ...) may run a
/// program and is taken out.
const KEPT: &[(&str, &[&str])] = &[
    (
        "core",
        &[
            "repositoryformatversion",
            "filemode",
            "bare",
            "logallrefupdates",
            "ignorecase",
            "precomposeunicode",
            "symlinks",
            "autocrlf",
            "eol",
            "safecrlf",
            "quotepath",
            "sparsecheckout",
            "sparsecheckoutcone",
            "compression",
            "looseCompression",
            "abbrev",
            "checkstat",
            "trustctime",
            "untrackedcache",
            "splitindex",
            "commentchar",
            "commentstring",
            "whitespace",
        ],
    ),
    (
        "remote",
        &[
            "url",
            "pushurl",
            "fetch",
            "push",
            "tagopt",
            "prune",
            "prunetags",
            "mirror",
            "skipdefaultupdate",
            "skipfetchall",
            "promisor",
            "partialclonefilter",
        ],
    ),
    (
        "branch",
        &["remote", "merge", "rebase", "pushremote", "description"],
    ),
    ("user", &["name", "email"]),
    ("init", &["defaultbranch"]),
    (
        "extensions",
        &["objectformat", "refstorage", "partialclone"],
    ),
    ("pull", &["rebase", "ff"]),
    ("push", &["default", "autosetupremote"]),
    ("fetch", &["prune", "prunetags"]),
    ("gc", &["auto", "autopacklimit", "autodetach"]),
    ("submodule", &["url", "active", "branch", "shallow"]),
    ("lfs", &["repositoryformatversion"]),
];

/// `submodule.<name>.update` is kept only with a value that names no command.
const SUBMODULE_UPDATE: &[&str] = &["checkout", "rebase", "merge", "none"];

/// Is `key` (`section`, `key`, value) one a repository's `config` may keep?
fn kept(section: &str, key: &str, value: &str) -> bool {
    if section == "submodule" && key == "update" {
        return SUBMODULE_UPDATE
            .contains(&value.trim().trim_matches('"').to_ascii_lowercase().as_str());
    }
    KEPT.iter()
        .any(|(s, keys)| *s == section && keys.iter().any(|k| k.eq_ignore_ascii_case(key)))
}

/// The text of a git `config` with only the settings that run nothing, and the settings taken
/// out (`section.key`, in the order met). Lines that do not parse are taken out too.
pub(crate) fn filter_config(text: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut removed = Vec::new();
    // The section being read (lower case, without its subsection).
    let mut section = String::new();
    let mut section_name = String::new();
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        // A line ending with a backslash goes on in the next one.
        let mut whole = line.to_owned();
        while whole.trim_end_matches(['\n', '\r']).ends_with('\\') {
            match lines.next() {
                Some(more) => whole.push_str(more),
                None => break,
            }
        }
        let t = whole.trim();
        if t.is_empty() || t.starts_with(['#', ';']) {
            out.push_str(&whole);
            continue;
        }
        let mut rest = t;
        if t.starts_with('[') {
            let Some(end) = t.find(']') else {
                removed.push(format!("(an unreadable line: {t})"));
                section = String::from("\u{0}");
                continue;
            };
            let header = &t[1..end];
            let name = header
                .split(['"', ' ', '\t', '.'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            section = name;
            section_name = header.to_owned();
            rest = t[end + 1..].trim();
            if matches!(section.as_str(), "include" | "includeif") {
                removed.push(format!("[{header}]"));
            } else {
                out.push_str(&format!("[{header}]\n"));
            }
            if rest.is_empty() || rest.starts_with(['#', ';']) {
                continue;
            }
        }
        let key: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let after = rest[key.len()..].trim_start();
        let value = after.strip_prefix('=').unwrap_or("");
        let well_formed = !key.is_empty()
            && key.starts_with(|c: char| c.is_ascii_alphabetic())
            && (after.is_empty() || after.starts_with(['=', '#', ';']));
        if well_formed && kept(&section, &key, value) {
            out.push_str(&whole);
            if !whole.ends_with('\n') {
                out.push('\n');
            }
        } else if well_formed {
            let full = if section_name.contains('"') {
                let sub = section_name.split('"').nth(1).unwrap_or_default();
                format!("{section}.{sub}.{}", key.to_ascii_lowercase())
            } else {
                format!(
                    "{}.{}",
                    section_name.to_ascii_lowercase(),
                    key.to_ascii_lowercase()
                )
            };
            removed.push(full);
        } else {
            removed.push(format!("(an unreadable line: {t})"));
        }
    }
    (out, removed)
}

/// What the plan saw of git directories under the writable directories, to tell afterwards
/// which ones the command made.
#[derive(Debug, Default, Clone)]
pub(crate) struct Seen {
    /// Git directories: `.git` directories, bare repositories, submodules' git directories.
    pub dirs: HashSet<PathBuf>,
    /// `.git` files (a worktree's or a submodule's pointer to its git directory).
    pub files: HashSet<PathBuf>,
}

/// Is `dir` (its entries' names, and which are directories) a git directory by git's own
/// test: a `HEAD` beside `objects` and `refs` directories?
pub(crate) fn is_git_dir<'a>(mut entries: impl Iterator<Item = (&'a Path, bool)>) -> bool {
    let (mut head, mut objects, mut refs) = (false, false, false);
    for (p, is_dir) in entries.by_ref() {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("HEAD") if !is_dir => head = true,
            Some("objects") if is_dir => objects = true,
            Some("refs") if is_dir => refs = true,
            _ => {}
        }
    }
    head && objects && refs
}

/// The git directories kept inside `git`: its submodules' (`modules/<name>`, nested) and its
/// linked worktrees' (`worktrees/<name>`).
pub(crate) fn linked_dirs(git: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(modules) = std::fs::read_dir(git.join("modules")) {
        for m in modules.flatten() {
            if m.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(m.path());
                linked_dirs(&m.path(), out);
            }
        }
    }
    if let Ok(worktrees) = std::fs::read_dir(git.join("worktrees")) {
        for w in worktrees.flatten() {
            if w.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(w.path());
            }
        }
    }
}

/// Remove `p` (a file, a link or a directory).
fn remove(p: &Path) -> bool {
    let is_dir = std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if is_dir {
        std::fs::remove_dir_all(p).is_ok()
    } else {
        std::fs::remove_file(p).is_ok()
    }
}

/// Put right the git directory `git` after a command: what it created in the places that run
/// programs, those the plan could not hold read-only because they did not exist (`held` says
/// which the plan held). In a repository the command created (`new`), that is all of them:
/// hooks other than git's samples are removed, `config` and `config.worktree` keep only
/// settings that run nothing. A `commondir` is kept only in a worktree's git directory,
/// pointing to its repository's; another object store lent (`objects/info/alternates`) to
/// an existing repository is removed.
pub(crate) fn settle_dir(
    git: &Path,
    new: bool,
    held: &dyn Fn(&Path) -> bool,
    out: &mut Vec<Settled>,
) {
    let why = if new {
        "a repository the command created"
    } else {
        "a repository"
    };
    let hooks = git.join("hooks");
    if (new || !held(&hooks))
        && let Ok(m) = std::fs::symlink_metadata(&hooks)
    {
        if m.is_dir() {
            for e in std::fs::read_dir(&hooks).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".sample") && e.file_type().is_ok_and(|t| t.is_file()) {
                    continue;
                }
                let p = e.path();
                if remove(&p) {
                    out.push(Settled {
                        path: p,
                        done: "removed".into(),
                        why: format!("a hook of {why}"),
                    });
                }
            }
        } else if remove(&hooks) {
            out.push(Settled {
                path: hooks,
                done: "removed".into(),
                why: format!("the hooks of {why} are not a directory"),
            });
        }
    }
    for name in ["config", "config.worktree"] {
        let p = git.join(name);
        if !new && held(&p) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if !m.is_file() {
            // A link or anything else where git reads its settings: gone.
            if remove(&p) {
                out.push(Settled {
                    path: p,
                    done: "removed".into(),
                    why: format!("the settings of {why} are not a plain file"),
                });
            }
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            if remove(&p) {
                out.push(Settled {
                    path: p,
                    done: "removed".into(),
                    why: format!("the settings of {why} are not readable text"),
                });
            }
            continue;
        };
        let (kept, removed) = filter_config(&text);
        if removed.is_empty() {
            continue;
        }
        if write_replacing(&p, &kept).is_ok() {
            out.push(Settled {
                path: p,
                done: format!("settings taken out: {}", removed.join(", ")),
                why: format!("settings of {why} that may run programs"),
            });
        } else if remove(&p) {
            out.push(Settled {
                path: p,
                done: "removed".into(),
                why: format!("settings of {why} that may run programs"),
            });
        }
    }
    let common = git.join("commondir");
    if !held(&common) && std::fs::symlink_metadata(&common).is_ok() {
        // A worktree's git directory (`<repository>/worktrees/<name>`) names its repository's;
        // anything else would lend the repository another one's settings.
        let owner = git
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
            .and_then(Path::parent);
        let points = std::fs::read_to_string(&common).ok().map(|t| {
            let t = Path::new(t.trim());
            tool_core::normalize(&if t.is_absolute() {
                t.to_path_buf()
            } else {
                git.join(t)
            })
        });
        let fine = matches!((owner, points), (Some(o), Some(p)) if tool_core::normalize(o) == p);
        if !fine && remove(&common) {
            out.push(Settled {
                path: common,
                done: "removed".into(),
                why: format!("{why} pointed to another repository's settings"),
            });
        }
    }
    let alternates = git.join("objects/info/alternates");
    if !new
        && !held(&alternates)
        && std::fs::symlink_metadata(&alternates).is_ok()
        && remove(&alternates)
    {
        out.push(Settled {
            path: alternates,
            done: "removed".into(),
            why: format!("{why} was lent another object store"),
        });
    }
}

/// Replace `p`'s content with `text` through a new file renamed over it (no half-written
/// config).
fn write_replacing(p: &Path, text: &str) -> std::io::Result<()> {
    let dir = p.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".toolgate-config-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, p).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The git directory a `.git` file points to (`gitdir: <path>`, relative to the file's
/// directory), when it says.
pub(crate) fn pointed_dir(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let p = Path::new(line);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        file.parent()?.join(p)
    };
    Some(tool_core::normalize(&abs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_keeps_only_settings_that_run_nothing() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tfsmonitor = \"touch /tmp/x\"\n\thooksPath = /tmp/h\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tuploadpack = sh -c id\n[alias]\n\tst = !sh -c id\n[include]\n\tpath = /tmp/evil\n[submodule \"a\"]\n\tupdate = !rm -rf .\n[submodule \"b\"]\n\tupdate = rebase\n[filter \"x\"]\n\tclean = sh -c id \\\n\t  more\n[core] sshCommand = sh -c id\n";
        let (kept, removed) = filter_config(text);
        for gone in [
            "fsmonitor",
            "hooksPath",
            "uploadpack",
            "!sh",
            "/tmp/evil",
            "!rm",
            "clean",
            "sshCommand",
            "more",
        ] {
            assert!(!kept.contains(gone), "{gone} kept:\n{kept}");
        }
        for stays in [
            "repositoryformatversion = 0",
            "filemode = true",
            "url = https://example.com/r.git",
            "fetch = +refs/heads/*:refs/remotes/origin/*",
            "update = rebase",
        ] {
            assert!(kept.contains(stays), "{stays} lost:\n{kept}");
        }
        assert_eq!(
            removed,
            [
                "core.fsmonitor",
                "core.hookspath",
                "remote.origin.uploadpack",
                "alias.st",
                "[include]",
                "include.path",
                "submodule.a.update",
                "filter.x.clean",
                "core.sshcommand",
            ]
        );
        // What git init writes stays as it is.
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        assert_eq!(filter_config(init), (init.to_owned(), Vec::new()));
    }

    #[test]
    fn git_directories_are_known_by_their_shape() {
        let d = |n: &str, dir: bool| (PathBuf::from(format!("/x/{n}")), dir);
        let has = |v: &[(PathBuf, bool)]| is_git_dir(v.iter().map(|(p, d)| (p.as_path(), *d)));
        assert!(has(&[
            d("HEAD", false),
            d("objects", true),
            d("refs", true),
            d("x", false)
        ]));
        assert!(!has(&[d("HEAD", false), d("objects", true)]));
        assert!(!has(&[
            d("HEAD", true),
            d("objects", true),
            d("refs", true)
        ]));
    }
}
