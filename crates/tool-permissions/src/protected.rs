//! Protected paths: writes that ask in every mode, whatever rule allows them.

use std::path::{Path, PathBuf};

/// Why a path is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// Version-control internals, editor and agent configuration, shell start-up files: code
    /// runs from them.
    SensitiveFile,
    /// The agent's own commands, agents and skills, and its settings files.
    AgentConfiguration,
}

impl Protection {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protection::SensitiveFile => "protected path (a sensitive file)",
            Protection::AgentConfiguration => "protected path (agent configuration)",
        }
    }
}

/// Directories whose contents are protected.
const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".vscode",
    ".idea",
    ".claude",
    ".toolgate",
    // Git hooks by another name (Husky's), and what a dev container runs on the host.
    ".husky",
    ".devcontainer",
];
/// Files protected wherever they are.
pub(crate) const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".gitattributes",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
    ".claude.json",
    ".envrc",
    ".npmrc",
    ".bash_aliases",
    ".vimrc",
    ".exrc",
    ".emacs",
    ".tmux.conf",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".yarnrc",
    ".yarnrc.yml",
    // Files that make a later command run code: commit hooks, a toolchain picked from a
    // path, a debugger's, R's, pylint's, Bazel's, less's, pnpm's and mise's start-up.
    ".pre-commit-config.yaml",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".tool-versions",
    ".mise.toml",
    "mise.toml",
    ".pdbrc",
    ".rprofile",
    ".pylintrc",
    ".bazelrc",
    ".lesskey",
    ".pnpmfile.cjs",
];

/// Places below a directory whose files run code or hold the engine's own configuration,
/// protected wherever they are (`~/.config/git/config`, a project's `.cargo/config.toml`): a
/// path whose components include one of these sequences, the last one a directory (anything
/// below it) or a file.
const PROTECTED_PLACES: &[&[&str]] = &[
    // The engine's own user layer (policy, trust records, hooks).
    &[".config", "toolgate"],
    // Git's, fish's, Neovim's user configuration; what systemd and the desktop start at login.
    &[".config", "git"],
    &[".config", "fish"],
    &[".config", "nvim"],
    &[".config", "systemd"],
    &[".config", "autostart"],
    &[".config", "environment.d"],
    // What sshd runs at login, and what ssh and git over ssh run.
    &[".ssh", "rc"],
    &[".ssh", "environment"],
    &[".ssh", "config"],
    &[".ssh", "authorized_keys"],
    // Build tools' configuration that names programs to run.
    &[".cargo", "config"],
    &[".cargo", "config.toml"],
    &[".gradle", "init.d"],
    &[".gradle", "init.gradle"],
    &[".m2", "settings.xml"],
    &[".docker", "config.json"],
    &[".emacs.d"],
    // Maven's JVM options, extensions and wrapper; Yarn's own release and plugins (what
    // `yarnPath` runs); a home's own programs, first on `PATH`.
    &[".mvn"],
    &[".yarn", "releases"],
    &[".yarn", "plugins"],
    &[".local", "bin"],
    // direnv's, VS Code's user settings, GnuPG's (agent programs), lesskey, mise.
    &[".config", "direnv"],
    &[".config", "code"],
    &[".config", "code - oss"],
    &[".config", "vscodium"],
    &[".config", "lesskey"],
    &[".config", "mise"],
    &[".gnupg"],
];

/// Python runs these at every start from a site directory: `import` lines of `.pth` files,
/// `sitecustomize` and `usercustomize`.
fn python_start_up(parts: &[String]) -> bool {
    let Some(name) = parts.last() else {
        return false;
    };
    parts
        .iter()
        .any(|p| p == "site-packages" || p == "dist-packages")
        && (name.ends_with(".pth") || name == "sitecustomize.py" || name == "usercustomize.py")
}

/// Is `name` a file name protected wherever it is (shell start-up files, `.mcp.json`, git's
/// and npm's configuration)? Compared case-insensitively.
pub(crate) fn protected_file_name(name: &str) -> bool {
    PROTECTED_FILES.contains(&name.to_lowercase().as_str())
}

/// Is writing `path` guarded by the safety check, and why? Compared case-insensitively.
pub fn protected(path: &Path) -> Option<Protection> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    let name = parts.last()?;
    for (i, part) in parts.iter().enumerate() {
        if part == ".claude" {
            let next = parts.get(i + 1).map(String::as_str);
            if next == Some("worktrees") {
                return None;
            }
            if matches!(
                next,
                Some("commands" | "agents" | "skills" | "settings.json" | "settings.local.json")
            ) {
                return Some(Protection::AgentConfiguration);
            }
            return Some(Protection::SensitiveFile);
        }
        // Inside the directory, or the directory itself (`rm -rf .git`, `mv .git x`).
        if PROTECTED_DIRS.contains(&part.as_str()) {
            return Some(Protection::SensitiveFile);
        }
    }
    let placed = PROTECTED_PLACES.iter().any(|place| {
        parts
            .windows(place.len())
            .any(|w| w.iter().zip(place.iter()).all(|(a, b)| a == b))
    });
    (placed || python_start_up(&parts) || PROTECTED_FILES.contains(&name.as_str()))
        .then_some(Protection::SensitiveFile)
}

/// Is writing `path` guarded by the safety check, under any of its spellings (links, `/proc`
/// aliases) or as another name of a protected file (a hard link to `.git/config` made
/// earlier, anywhere)?
pub(crate) fn protected_at(path: &Path, ctx: &tool_core::ToolContext) -> Option<Protection> {
    crate::path_rule::candidates(path, ctx)
        .iter()
        .find_map(|c| protected(c))
        .or_else(|| protected_identity(path, ctx))
}

/// A protected path below the directory `root` that a program changing every file below it
/// (`chmod -R`, `rm -r`, `mv`) would reach, when `root` is not protected itself: one of
/// `root`'s entries, or of a working directory's or the home directory's below `root` (where
/// `.git`, `.claude` and the shell's start-up files live).
pub(crate) fn protected_below(root: &Path, ctx: &tool_core::ToolContext) -> Option<PathBuf> {
    if protected_at(root, ctx).is_some() {
        return None;
    }
    let root = tool_core::normalize(root);
    let mut dirs = vec![root.clone()];
    for d in ctx.working_dirs.iter().chain(std::iter::once(&ctx.home)) {
        let d = tool_core::normalize(d);
        if d != root && d.starts_with(&root) {
            dirs.push(d);
        }
    }
    dirs.iter().find_map(|d| {
        std::fs::read_dir(d)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| protected(p).is_some())
    })
}

/// A file with more than one name is protected when one of the protected files of the
/// working directories or the home directory is that same file.
fn protected_identity(path: &Path, ctx: &tool_core::ToolContext) -> Option<Protection> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() || m.nlink() < 2 {
        return None;
    }
    let same =
        |p: &Path| std::fs::metadata(p).is_ok_and(|o| o.dev() == m.dev() && o.ino() == m.ino());
    let mut roots: Vec<&Path> = vec![ctx.project_root.as_path(), ctx.home.as_path()];
    roots.extend(ctx.working_dirs.iter().map(PathBuf::as_path));
    for root in roots {
        for name in PROTECTED_FILES {
            let p = root.join(name);
            if same(&p) {
                return protected(&p);
            }
        }
        for dir in PROTECTED_DIRS {
            let d = root.join(dir);
            if !d.is_dir() {
                continue;
            }
            // The files code runs from: the directory's own files and one level below
            // (`.git/config`, `.git/hooks/pre-commit`, `.claude/settings.json`).
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten().take(256) {
                let p = e.path();
                if p.is_dir() {
                    if let Ok(inner) = std::fs::read_dir(&p) {
                        for f in inner.flatten().take(256) {
                            if same(&f.path()) {
                                return protected(&f.path());
                            }
                        }
                    }
                } else if same(&p) {
                    return protected(&p);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths() {
        let cases: &[(&str, Option<Protection>)] = &[
            ("/w/p/.git/config", Some(Protection::SensitiveFile)),
            (
                "/w/p/.git/hooks/pre-commit",
                Some(Protection::SensitiveFile),
            ),
            ("/w/p/.GIT/config", Some(Protection::SensitiveFile)),
            ("/home/u/.bashrc", Some(Protection::SensitiveFile)),
            ("/w/p/sub/.zshrc", Some(Protection::SensitiveFile)),
            ("/w/p/.mcp.json", Some(Protection::SensitiveFile)),
            // Configuration that runs code or holds the engine's own rules, by where it is.
            (
                "/home/u/.config/toolgate/policy.toml",
                Some(Protection::SensitiveFile),
            ),
            (
                "/home/u/.config/git/config",
                Some(Protection::SensitiveFile),
            ),
            ("/home/u/.ssh/rc", Some(Protection::SensitiveFile)),
            ("/w/p/.cargo/config.toml", Some(Protection::SensitiveFile)),
            (
                "/home/u/.gradle/init.d/ci.gradle",
                Some(Protection::SensitiveFile),
            ),
            (
                "/home/u/.local/lib/python3.11/site-packages/x.pth",
                Some(Protection::SensitiveFile),
            ),
            ("/home/u/.bash_aliases", Some(Protection::SensitiveFile)),
            ("/w/p/.husky/pre-commit", Some(Protection::SensitiveFile)),
            ("/w/p/.mvn/jvm.config", Some(Protection::SensitiveFile)),
            (
                "/w/p/.yarn/releases/yarn-4.cjs",
                Some(Protection::SensitiveFile),
            ),
            ("/w/p/rust-toolchain.toml", Some(Protection::SensitiveFile)),
            ("/home/u/.local/bin/git", Some(Protection::SensitiveFile)),
            (
                "/home/u/.config/Code/User/settings.json",
                Some(Protection::SensitiveFile),
            ),
            (
                "/home/u/.gnupg/gpg-agent.conf",
                Some(Protection::SensitiveFile),
            ),
            ("/w/p/.yarn/cache/x.zip", None),
            ("/w/p/src/bin/git", None),
            // Not those places: a file of the same name elsewhere, a package's own code.
            ("/w/p/config/git/config", None),
            ("/home/u/.ssh/id_rsa", None),
            ("/w/p/.cargo/registry/x.toml", None),
            ("/home/u/.local/lib/python3.11/site-packages/x.py", None),
            ("/w/p/docs/rc", None),
            (
                "/w/p/.vscode/settings.json",
                Some(Protection::SensitiveFile),
            ),
            (
                "/w/p/.toolgate/policy.toml",
                Some(Protection::SensitiveFile),
            ),
            ("/w/p/.claude/new.md", Some(Protection::SensitiveFile)),
            (
                "/w/p/.claude/commands/c.md",
                Some(Protection::AgentConfiguration),
            ),
            (
                "/home/u/.claude/settings.json",
                Some(Protection::AgentConfiguration),
            ),
            ("/w/p/.claude/worktrees/x/file.rs", None),
            ("/w/p/src/main.rs", None),
            ("/w/p/.github/workflows/ci.yml", None),
            ("/w/p/notgit/config", None),
        ];
        for (path, want) in cases {
            assert_eq!(protected(Path::new(path)), *want, "{path}");
        }
    }
}
