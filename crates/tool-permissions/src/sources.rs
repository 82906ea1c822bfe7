//! The five policy layers and where their files are: managed, command line, local, project
//! and user, each as a TOML policy file and (so an existing setup works unchanged) the
//! matching Claude Code settings file.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::policy::{Layer, Policy, PolicyBuilder};
use crate::trust::TrustStore;

/// Whether the project's own allow rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// As the user's trust store says for the project's current content.
    #[default]
    Store,
    /// Trusted, whatever the store says (a host that asked the user itself).
    Trusted,
    /// Not trusted.
    Untrusted,
}

/// Where a session's policy comes from.
#[derive(Debug, Clone)]
pub struct PolicySources {
    /// The project root: `.toolgate/` and `.claude/` live here.
    pub project_root: PathBuf,
    /// The home directory (`~/.claude/settings.json`).
    pub home: PathBuf,
    /// The managed files, TOML or Claude Code JSON by extension.
    pub managed: Vec<PathBuf>,
    /// Command-line policy files (`--policy`, `--settings`), TOML or JSON by extension.
    pub command_line: Vec<PathBuf>,
    /// The user layer's directory (`$XDG_CONFIG_HOME/toolgate`): `policy.toml`, `trust.toml`.
    pub user_dir: PathBuf,
    /// Also read Claude Code's settings files (`.claude/settings*.json`,
    /// `~/.claude/settings.json`, `/etc/claude-code/managed-settings.json`).
    pub claude_settings: bool,
    /// How trust is settled.
    pub trust: Trust,
}

impl PolicySources {
    /// The standard places for a project at `project_root`: `/etc/toolgate/policy.toml` and
    /// `/etc/claude-code/managed-settings.json` (managed), `$XDG_CONFIG_HOME/toolgate` or
    /// `~/.config/toolgate` (user), and the Claude Code settings files.
    pub fn standard(project_root: &Path, home: &Path, xdg_config_home: Option<&Path>) -> Self {
        let config = xdg_config_home
            .filter(|p| p.is_absolute())
            .map_or_else(|| home.join(".config"), Path::to_path_buf);
        Self {
            project_root: project_root.to_path_buf(),
            home: home.to_path_buf(),
            managed: vec![
                PathBuf::from("/etc/toolgate/policy.toml"),
                PathBuf::from("/etc/claude-code/managed-settings.json"),
            ],
            command_line: Vec::new(),
            user_dir: config.join("toolgate"),
            claude_settings: true,
            trust: Trust::Store,
        }
    }

    /// The trust store's file.
    pub fn trust_store_path(&self) -> PathBuf {
        self.user_dir.join("trust.toml")
    }

    /// Every file that may contribute, in layer order (highest precedence first).
    pub fn files(&self) -> Vec<(Layer, PathBuf)> {
        let root = &self.project_root;
        let mut out: Vec<(Layer, PathBuf)> = Vec::new();
        for m in &self.managed {
            if self.claude_settings || !is_json(m) {
                out.push((Layer::Managed, m.clone()));
            }
        }
        for c in &self.command_line {
            out.push((Layer::CommandLine, c.clone()));
        }
        out.push((Layer::Local, root.join(".toolgate/policy.local.toml")));
        if self.claude_settings {
            out.push((Layer::Local, root.join(".claude/settings.local.json")));
        }
        out.push((Layer::Project, root.join(".toolgate/policy.toml")));
        if self.claude_settings {
            out.push((Layer::Project, root.join(".claude/settings.json")));
        }
        out.push((Layer::User, self.user_dir.join("policy.toml")));
        if self.claude_settings {
            out.push((Layer::User, self.home.join(".claude/settings.json")));
        }
        out
    }

    /// Is the project trusted, as [`trust`](Self::trust) settles it?
    pub fn project_trusted(&self) -> Result<bool, Error> {
        match self.trust {
            Trust::Trusted => Ok(true),
            Trust::Untrusted => Ok(false),
            Trust::Store => {
                TrustStore::load(&self.trust_store_path())?.trusts_project(&self.project_root)
            }
        }
    }

    /// Load every layer into a builder (for a host that adds rules of its own before building).
    /// Missing files add nothing; a command-line file that is missing is an error.
    pub fn builder(&self) -> Result<PolicyBuilder, Error> {
        let mut b = PolicyBuilder::new();
        b.home(&self.home);
        b.trust_project(self.project_trusted()?);
        for (layer, file) in self.files() {
            if layer == Layer::CommandLine && !file.exists() {
                return Err(Error::Io {
                    file: file.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "the policy file given on the command line does not exist",
                    ),
                });
            }
            // Relative directories: the project root, except in the user layer (that file's
            // directory), as for `/path` rules.
            let base = match layer {
                Layer::User => file
                    .parent()
                    .map_or_else(|| self.project_root.clone(), Path::to_path_buf),
                _ => self.project_root.clone(),
            };
            if is_json(&file) {
                b.claude_settings_file(&file, layer, &base)?;
            } else {
                b.toml_file(&file, layer, &base)?;
            }
        }
        Ok(b)
    }

    /// Load and build the policy.
    pub fn load(&self) -> Result<Policy, Error> {
        Ok(self.builder()?.build())
    }
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
}
