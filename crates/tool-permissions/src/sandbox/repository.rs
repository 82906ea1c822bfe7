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

/// One setting of a git `config`: its name as git lists it (`section.key`,
/// `section.subsection.key`; section and key in lower case) and its value (none for a bare
/// boolean `key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub value: Option<String>,
}

impl Entry {
    /// (section, subsection, key).
    fn parts(&self) -> (&str, Option<&str>, &str) {
        let (section, rest) = self.name.split_once('.').unwrap_or((&self.name, ""));
        match rest.rsplit_once('.') {
            Some((sub, key)) => (section, Some(sub), key),
            None => (section, None, rest),
        }
    }

    /// May a repository keep it (see [`KEPT`])?
    fn kept(&self) -> bool {
        let (section, _, key) = self.parts();
        kept(section, key, self.value.as_deref().unwrap_or(""))
    }
}

/// Why a `config` cannot be read as settings.
#[derive(Debug)]
pub(crate) struct Unreadable(pub String);

/// The settings of the `config` at `path` as git itself reads them (`git config --file
/// --no-includes --list -z`), or, where there is no git to ask, as a strict reader of the
/// plain form reads them (anything else in the file makes it unreadable).
pub(crate) fn config_entries(path: &Path) -> Result<Vec<Entry>, Unreadable> {
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--list", "-z", "--file"])
        .arg(path)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(o
            .stdout
            .split(|&b| b == 0)
            .filter(|e| !e.is_empty())
            .map(|e| {
                let e = String::from_utf8_lossy(e);
                match e.split_once('\n') {
                    Some((k, v)) => Entry {
                        name: k.to_owned(),
                        value: Some(v.to_owned()),
                    },
                    None => Entry {
                        name: e.into_owned(),
                        value: None,
                    },
                }
            })
            .collect()),
        Ok(o) => Err(Unreadable(format!(
            "git cannot read it: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(_) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Unreadable(format!("not readable text: {e}")))?;
            plain_entries(&text)
        }
    }
}

/// The settings of a `config` in the plain form only: `[section]` or `[section "sub"]`
/// headers alone on their line, `key = value` lines without quotes, escapes or continuations,
/// whole-line comments. Anything else is unreadable (git may read it otherwise).
fn plain_entries(text: &str) -> Result<Vec<Entry>, Unreadable> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let odd = || {
            Unreadable(format!(
                "a line in a form this reader does not take: {line}"
            ))
        };
        if line.contains(['\\', '"']) && !line.starts_with('[') {
            return Err(odd());
        }
        if let Some(h) = line.strip_prefix('[') {
            let h = h.strip_suffix(']').ok_or_else(odd)?;
            let (name, sub) = match h.split_once(' ') {
                Some((n, s)) => {
                    let s = s.trim();
                    let s = s
                        .strip_prefix('"')
                        .and_then(|s| s.strip_suffix('"'))
                        .filter(|s| !s.contains(['"', '\\']))
                        .ok_or_else(odd)?;
                    (n, Some(s))
                }
                None => (h, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(odd());
            }
            section = Some(match sub {
                Some(s) => format!("{}.{s}", name.to_ascii_lowercase()),
                None => name.to_ascii_lowercase(),
            });
            continue;
        }
        let section = section.as_ref().ok_or_else(odd)?;
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_owned())),
            None => (line, None),
        };
        if key.is_empty()
            || !key.starts_with(|c: char| c.is_ascii_alphabetic())
            || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            || value.as_deref().is_some_and(|v| v.contains(['#', ';']))
        {
            return Err(odd());
        }
        out.push(Entry {
            name: format!("{section}.{}", key.to_ascii_lowercase()),
            value,
        });
    }
    Ok(out)
}

/// A `config` holding `entries`, in git's form (a value quoted and escaped where it holds
/// anything but plain characters).
pub(crate) fn config_text(entries: &[Entry]) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._/:@+=,~*-".contains(c))
    };
    let quote = |s: &str| {
        if plain(s) {
            return s.to_owned();
        }
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '\\' => q.push_str("\\\\"),
                '"' => q.push_str("\\\""),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    };
    let mut out = String::new();
    let mut current: Option<(String, Option<String>)> = None;
    for e in entries {
        let (section, sub, key) = e.parts();
        let here = (section.to_owned(), sub.map(str::to_owned));
        if current.as_ref() != Some(&here) {
            match sub {
                Some(s) => out.push_str(&format!(
                    "[{section} \"{}\"]\n",
                    s.replace('\\', "\\\\").replace('"', "\\\"")
                )),
                None => out.push_str(&format!("[{section}]\n")),
            }
            current = Some(here);
        }
        match &e.value {
            Some(v) => out.push_str(&format!("\t{key} = {}\n", quote(v))),
            None => out.push_str(&format!("\t{key}\n")),
        }
    }
    out
}

/// The settings of `entries` a repository keeps, and the names of those taken out.
pub(crate) fn filter_entries(entries: Vec<Entry>) -> (Vec<Entry>, Vec<String>) {
    let (kept, gone): (Vec<Entry>, Vec<Entry>) = entries.into_iter().partition(Entry::kept);
    (kept, gone.into_iter().map(|e| e.name).collect())
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

/// The entries of `dir` (path, is a directory).
fn entries(dir: &Path) -> Vec<(PathBuf, bool)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect()
}

/// Is `dir` a git directory by git's own test?
fn git_dir_at(dir: &Path) -> bool {
    let e = entries(dir);
    is_git_dir(e.iter().map(|(p, d)| (p.as_path(), *d)))
}

/// The git directories kept inside the git directory `git`: its submodules' (anywhere below
/// `modules/`, as module names may hold slashes, and theirs in turn), its linked worktrees'
/// (`worktrees/<name>`), and any other directory of its own that has a git directory's shape.
pub(crate) fn linked_dirs(git: &Path, out: &mut Vec<PathBuf>) {
    /// How deep below `modules/` a module's name may reach.
    const MODULE_DEPTH: usize = 8;
    fn modules(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        for (p, is_dir) in entries(dir) {
            if !is_dir {
                continue;
            }
            if git_dir_at(&p) {
                out.push(p.clone());
                linked_dirs(&p, out);
            } else if depth < MODULE_DEPTH {
                modules(&p, depth + 1, out);
            }
        }
    }
    for (p, is_dir) in entries(git) {
        if !is_dir {
            continue;
        }
        match p.file_name().and_then(|n| n.to_str()) {
            Some("modules") => modules(&p, 1, out),
            Some("worktrees") => {
                out.extend(entries(&p).into_iter().filter(|(_, d)| *d).map(|(w, _)| w))
            }
            Some("objects" | "refs" | "logs" | "hooks" | "info" | "lfs" | "rr-cache") => {}
            Some(_) if git_dir_at(&p) => {
                out.push(p.clone());
                linked_dirs(&p, out);
            }
            _ => {}
        }
    }
}

/// Remove `p` (a file, a link or a directory).
pub(crate) fn remove(p: &Path) -> bool {
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
        let (kept, removed) = match config_entries(&p) {
            Ok(entries) => filter_entries(entries),
            Err(Unreadable(e)) => {
                if remove(&p) {
                    out.push(Settled {
                        path: p,
                        done: "removed".into(),
                        why: format!("the settings of {why} cannot be read as settings ({e})"),
                    });
                }
                continue;
            }
        };
        if removed.is_empty() {
            continue;
        }
        if write_replacing(&p, &config_text(&kept)).is_ok() {
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

    /// The settings of `text`, as `config_entries` reads a file holding it.
    fn entries_of(text: &str) -> Result<Vec<Entry>, Unreadable> {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("config");
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        config_entries(&p)
    }

    #[test]
    fn a_config_keeps_only_settings_that_run_nothing() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tfsmonitor = \"touch /tmp/x\"\n\thooksPath = /tmp/h\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tuploadpack = sh -c id\n[alias]\n\tst = !sh -c id\n[include]\n\tpath = /tmp/evil\n[submodule \"a\"]\n\tupdate = !rm -rf .\n[submodule \"b\"]\n\tupdate = rebase\n[filter \"x\"]\n\tclean = sh -c id \\\n\t  more\n# a comment that ends in a backslash \\\n\tpager = less\n[core] sshCommand = sh -c id\n";
        let Ok(entries) = entries_of(text) else {
            panic!("git reads it");
        };
        let (kept, removed) = filter_entries(entries);
        let names: Vec<&str> = kept.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "core.repositoryformatversion",
                "core.filemode",
                "remote.origin.url",
                "remote.origin.fetch",
                "submodule.b.update",
            ]
        );
        assert_eq!(
            removed,
            [
                "core.fsmonitor",
                "core.hookspath",
                "remote.origin.uploadpack",
                "alias.st",
                "include.path",
                "submodule.a.update",
                "filter.x.clean",
                "filter.x.pager",
                "core.sshcommand",
            ]
        );
        // What is kept, written out, reads back the same.
        let again = entries_of(&config_text(&kept)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(again, kept);
        // Without git, the strict reader refuses what it does not know for certain.
        assert!(plain_entries(text).is_err());
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n";
        let plain = plain_entries(init).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(filter_entries(plain.clone()).1, Vec::<String>::new());
        assert_eq!(plain, entries_of(init).unwrap_or_else(|e| panic!("{e:?}")));
    }

    #[test]
    fn a_config_git_cannot_read_is_unreadable() {
        assert!(entries_of("[core\n\tfsmonitor = x\n").is_err());
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
