//! The five policy layers and where their files are: managed, command line, local, project
//! and user, each as a TOML policy file and (so an existing setup works unchanged) the
//! matching Claude Code settings file.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::policy::{Layer, Policy, PolicyBuilder};
use crate::trust::{TRUSTED_FILES, TrustStore, hash_contents};

/// Whether the project's own allow rules (and hooks) apply: the choice a host makes when it
/// loads a project's policy. There is no default: a project's `.toolgate/` and `.claude/`
/// files come with the code, so applying their allow rules is a decision.
///
/// Whatever the choice, the project's deny and ask rules always apply. Allow rules left out
/// are listed by [`Policy::ignored_rules`] (and [`Policy::lint`]), and tool-hooks reports the
/// hooks it does not run, so a host can show them and offer to trust the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// As the user's [`TrustStore`] says for the project's current content: trusted only if
    /// the project's policy files hash to a value the user recorded
    /// ([`TrustStore::record`] with [`project_hash`](crate::project_hash)). Any change to
    /// those files withdraws the trust until the user records it again.
    Store,
    /// Trusted, whatever the store says: for a host that asked the user itself, or runs only
    /// projects it vouches for.
    Trusted,
    /// Not trusted: the project's and local layer's allow rules and hooks never apply.
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
    /// `~/.config/toolgate` (user), and the Claude Code settings files, with trust settled as
    /// `trust` says.
    pub fn standard(
        project_root: &Path,
        home: &Path,
        xdg_config_home: Option<&Path>,
        trust: Trust,
    ) -> Self {
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
            trust,
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

    /// Read every file of [`files`](Self::files) once, and settle trust once, from the same
    /// bytes: the rules ([`PolicyFiles::policy`]) and the hooks (tool-hooks) are then built
    /// from these texts, so a file replaced in between cannot make them disagree, nor make
    /// trust vouch for content other than what is loaded. Missing files add nothing; a
    /// command-line file that is missing is an error.
    pub fn read(&self) -> Result<PolicyFiles, Error> {
        let mut files = Vec::new();
        for (layer, path) in self.files() {
            let text = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if layer == Layer::CommandLine {
                        return Err(Error::Io {
                            file: path,
                            source: std::io::Error::new(
                                std::io::ErrorKind::NotFound,
                                "the policy file given on the command line does not exist",
                            ),
                        });
                    }
                    continue;
                }
                Err(e) => {
                    return Err(Error::Io {
                        file: path,
                        source: e,
                    });
                }
            };
            // Relative directories: the project root, except in the user layer (that file's
            // directory), as for `/path` rules.
            let base = match layer {
                Layer::User => path
                    .parent()
                    .map_or_else(|| self.project_root.clone(), Path::to_path_buf),
                _ => self.project_root.clone(),
            };
            files.push((layer, path, base, text));
        }
        // The project's content hash, from the bytes just read.
        let mut contents = Vec::with_capacity(TRUSTED_FILES.len());
        for name in TRUSTED_FILES {
            let path = self.project_root.join(name);
            let content = match files.iter().find(|f| f.1 == path) {
                Some(f) => Some(f.3.clone()),
                // Not a file of these sources (Claude Code settings not read): its content
                // still counts for the hash.
                None => match std::fs::read(&path) {
                    Ok(bytes) => Some(bytes),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => {
                        return Err(Error::Io {
                            file: path,
                            source: e,
                        });
                    }
                },
            };
            contents.push(content);
        }
        let project_hash = hash_contents(&contents);
        let trusted = match self.trust {
            Trust::Trusted => true,
            Trust::Untrusted => false,
            Trust::Store => TrustStore::load(&self.trust_store_path())?.is_trusted(&project_hash),
        };
        let files = files
            .into_iter()
            .map(
                |(layer, path, base, bytes)| match String::from_utf8(bytes) {
                    Ok(text) => Ok(PolicyFile {
                        layer,
                        path,
                        base,
                        text,
                    }),
                    Err(_) => Err(Error::Io {
                        file: path,
                        source: std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "stream did not contain valid UTF-8",
                        ),
                    }),
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PolicyFiles {
            files,
            home: self.home.clone(),
            trusted,
            project_hash,
        })
    }

    /// Load every layer into a builder (for a host that adds rules of its own before building):
    /// [`read`](Self::read), then [`PolicyFiles::builder`].
    pub fn builder(&self) -> Result<PolicyBuilder, Error> {
        self.read()?.builder()
    }

    /// Load and build the policy: [`read`](Self::read), then [`PolicyFiles::policy`]. A host
    /// that also loads hooks from the same files reads once and builds both from the
    /// [`PolicyFiles`].
    pub fn load(&self) -> Result<Policy, Error> {
        self.read()?.policy()
    }
}

/// One policy file as read: its layer, where it is, the directory its relative paths are
/// taken from, and its text.
#[derive(Debug, Clone)]
pub struct PolicyFile {
    /// The layer it belongs to.
    pub layer: Layer,
    /// Where it was read from.
    pub path: PathBuf,
    /// The directory relative `additional_directories` are taken from: the project root, or
    /// the user layer file's own directory.
    pub base: PathBuf,
    /// Its text.
    pub text: String,
}

impl PolicyFile {
    /// True for a Claude Code settings file (JSON), false for a TOML policy file.
    pub fn is_claude_settings(&self) -> bool {
        is_json(&self.path)
    }
}

/// The files of a [`PolicySources`], read once, with trust settled once from the same bytes
/// ([`PolicySources::read`]). Build the policy from it, and hand it to tool-hooks for the
/// hooks of the same files.
#[derive(Debug, Clone)]
pub struct PolicyFiles {
    files: Vec<PolicyFile>,
    home: PathBuf,
    trusted: bool,
    project_hash: String,
}

impl PolicyFiles {
    /// The files that exist, in layer order (highest precedence first).
    pub fn files(&self) -> &[PolicyFile] {
        &self.files
    }

    /// Whether the project's own files (the local and project layers) are trusted, as settled
    /// when they were read.
    pub fn project_trusted(&self) -> bool {
        self.trusted
    }

    /// The hash of the project's policy content as it was read (what
    /// [`project_hash`](crate::project_hash) gives for it): what a host records with
    /// [`TrustStore::record`] after showing the user these files, so that the trust covers
    /// exactly what was shown.
    pub fn project_hash(&self) -> &str {
        &self.project_hash
    }

    /// A builder loaded with every file's rules and settings (for a host that adds rules of
    /// its own before building).
    pub fn builder(&self) -> Result<PolicyBuilder, Error> {
        let mut b = PolicyBuilder::new();
        b.home(&self.home);
        b.trust_project(self.trusted);
        for f in &self.files {
            if f.is_claude_settings() {
                b.claude_settings_str(&f.text, f.layer, &f.path, &f.base)?;
            } else {
                b.toml_str(&f.text, f.layer, &f.path, &f.base)?;
            }
        }
        Ok(b)
    }

    /// Build the policy.
    pub fn policy(&self) -> Result<Policy, Error> {
        Ok(self.builder()?.build())
    }
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
}
