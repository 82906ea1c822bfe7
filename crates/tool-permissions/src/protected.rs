//! Protected paths: writes that ask in every mode, whatever rule allows them.

use std::path::Path;

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
const PROTECTED_DIRS: &[&str] = &[".git", ".vscode", ".idea", ".claude", ".toolgate"];
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
];

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
        if i + 1 < parts.len() && PROTECTED_DIRS.contains(&part.as_str()) {
            return Some(Protection::SensitiveFile);
        }
    }
    PROTECTED_FILES
        .contains(&name.as_str())
        .then_some(Protection::SensitiveFile)
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
