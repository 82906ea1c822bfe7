//! A repository's own git configuration as an execution surface: `core.fsmonitor` runs on
//! `git status`, `core.pager` on `git log`, `diff.external` on `git diff`, and so on. The
//! repository's `config` file (not the user's `~/.gitconfig`) can come with the code or be
//! left by an earlier step, so a git command run in such a repository runs what that file
//! names, however read-only the command looks.
//!
//! [`repository_runs_programs`] finds the repository around a directory (a `.git` directory,
//! or a `.git` file naming one) and reports the first setting of its config that runs a
//! program, per the database's `[config.git]` table. An `include.path` or `includeIf` is
//! reported too: what it includes cannot be known without reading further files.

use std::path::{Path, PathBuf};

/// A setting of a repository's config that runs a program (or includes another file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoSetting {
    /// The key, lowercased (`core.fsmonitor`).
    pub key: String,
    /// The config file.
    pub file: PathBuf,
    /// Its 1-based line there.
    pub line: usize,
}

/// The config file of the repository that contains `dir`, if there is one.
fn config_file(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git.join("config"));
        }
        if dot_git.is_file() {
            // A worktree or submodule: `gitdir: PATH`, and the shared `commondir`'s config.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
            let gitdir = d.join(gitdir);
            let common = std::fs::read_to_string(gitdir.join("commondir"))
                .map(|c| gitdir.join(c.trim()))
                .unwrap_or(gitdir);
            return Some(common.join("config"));
        }
    }
    None
}

/// The keys set in a git config text, lowercased as `section[.subsection].name`, with their
/// lines.
fn keys(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for (n, raw) in text.lines().enumerate() {
        let mut line = raw.trim();
        if line.starts_with(['#', ';']) || line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else {
                continue;
            };
            let header = &rest[..end];
            section = match header.split_once(char::is_whitespace) {
                Some((name, sub)) => {
                    format!(
                        "{}.{}",
                        name.to_ascii_lowercase(),
                        sub.trim().trim_matches('"')
                    )
                }
                None => header.to_ascii_lowercase(),
            };
            line = rest[end + 1..].trim();
            if line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
        }
        let name: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() && !section.is_empty() {
            out.push((format!("{section}.{}", name.to_ascii_lowercase()), n + 1));
        }
    }
    out
}

/// The first setting of the config of the repository around `dir` that runs a program or
/// includes another file; `None` when there is no repository or no such setting. A config
/// that exists but cannot be read is reported as such a setting (`(unreadable)`): what it
/// holds cannot be known.
pub fn repository_runs_programs(dir: &Path) -> Option<RepoSetting> {
    config_runs_programs(&config_file(dir)?)
}

/// The first setting of the git config `file` that runs a program or includes another file
/// (see [`repository_runs_programs`]); `None` when there is no such file or setting.
pub fn config_runs_programs(file: &Path) -> Option<RepoSetting> {
    let file = file.to_path_buf();
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(_) => {
            return Some(RepoSetting {
                key: "(unreadable)".into(),
                file,
                line: 0,
            });
        }
    };
    let db = crate::db::database();
    keys(&text).into_iter().find_map(|(key, line)| {
        let runs = key == "include.path"
            || key.starts_with("includeif.")
            || matches!(
                db.config_category("git", &key),
                Some("exec-program" | "exec-string")
            );
        runs.then(|| RepoSetting {
            key,
            file: file.clone(),
            line,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_with_sections_and_lines() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tbare\n[remote \"origin\"]\n\turl = x\n# [core] fsmonitor = no\n[Core] FSMonitor = touch p\n";
        assert_eq!(
            keys(text),
            [
                ("core.repositoryformatversion".to_owned(), 2),
                ("core.bare".to_owned(), 3),
                ("remote.origin.url".to_owned(), 5),
                ("core.fsmonitor".to_owned(), 7),
            ]
        );
    }

    #[test]
    fn a_repository_whose_config_runs_programs_is_found_from_a_subdirectory() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let plain = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://x.example/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
        std::fs::write(repo.join(".git/config"), plain).unwrap();
        assert_eq!(
            repository_runs_programs(&repo.join("src/deep")),
            None,
            "an ordinary config"
        );
        for (extra, key) in [
            ("\tfsmonitor = touch pwned; false\n", "core.fsmonitor"),
            ("\tpager = sh -c 'id'\n", "core.pager"),
            ("[include]\n\tpath = ../shared.gitconfig\n", "include.path"),
            ("[filter \"x\"]\n\tclean = ./clean.sh\n", "filter.x.clean"),
            ("[diff]\n\texternal = ./d.sh\n", "diff.external"),
        ] {
            let text = plain.replacen("[core]\n", &format!("[core]\n{extra}"), 1);
            let text = if extra.starts_with('[') {
                format!("{plain}{extra}")
            } else {
                text
            };
            std::fs::write(repo.join(".git/config"), &text).unwrap();
            let found = repository_runs_programs(&repo.join("src")).unwrap();
            assert_eq!(found.key, key, "{text}");
            assert_eq!(found.file, repo.join(".git/config"));
            assert!(
                text.lines()
                    .nth(found.line - 1)
                    .unwrap()
                    .to_ascii_lowercase()
                    .contains(key.rsplit('.').next().unwrap())
            );
        }
        // A worktree: `.git` is a file naming the git directory.
        let wt = d.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        assert_eq!(repository_runs_programs(&wt).unwrap().key, "diff.external");
        // No repository at all.
        let none = tempfile::tempdir().unwrap();
        assert_eq!(repository_runs_programs(none.path()), None);
    }
}
