//! Project trust bound to content: a host that asked the user records a hash of a project's
//! own policy files in the user layer's store ([`TrustStore::record`]), and the project's allow rules apply only while those files still
//! hash to a recorded value. Changing one byte of them (a new commit, a post-install script)
//! withdraws the trust until the user looks again. Deny and ask rules never need trust.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Error;

/// The project files whose content trust covers, relative to the project root. `.mcp.json`
/// (Claude Code's MCP servers, programs started with the session) is among them.
pub const TRUSTED_FILES: &[&str] = &[
    ".toolgate/policy.toml",
    ".toolgate/policy.local.toml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
];

/// Files of [`TRUSTED_FILES`] that count only when present: they were added to the list later,
/// and a project without one hashes as it did before, so its recorded trust holds.
const COUNTED_WHEN_PRESENT: &[&str] = &[".mcp.json"];

/// The hash of a project's policy content: every file of [`TRUSTED_FILES`], present or not,
/// by name and bytes. `sha256:` followed by 64 hex digits.
pub fn project_hash(root: &Path) -> Result<String, Error> {
    let mut contents = Vec::with_capacity(TRUSTED_FILES.len());
    for name in TRUSTED_FILES {
        let path = root.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => contents.push(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => contents.push(None),
            Err(e) => {
                return Err(Error::Io {
                    file: path,
                    source: e,
                });
            }
        }
    }
    Ok(hash_contents(&contents))
}

/// The hash [`project_hash`] gives for these contents of [`TRUSTED_FILES`], in that order
/// (`None` for a file that is absent).
pub(crate) fn hash_contents(contents: &[Option<Vec<u8>>]) -> String {
    let mut h = Sha256::new();
    for (name, content) in TRUSTED_FILES.iter().zip(contents) {
        if content.is_none() && COUNTED_WHEN_PRESENT.contains(name) {
            continue;
        }
        h.update(name.as_bytes());
        h.update([0]);
        match content {
            Some(bytes) => {
                h.update((bytes.len() as u64).to_le_bytes());
                h.update(bytes);
            }
            None => h.update(b"absent"),
        }
        h.update([0]);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    #[serde(default)]
    trusted: Vec<TrustEntry>,
}

/// One trusted content hash, with the project it was recorded for (for the user's eyes: the
/// hash alone decides).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustEntry {
    /// The project root it was recorded in.
    pub project: PathBuf,
    /// The content hash.
    pub hash: String,
}

/// The user layer's record of trusted content (`$XDG_CONFIG_HOME/toolgate/trust.toml`).
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    entries: Vec<TrustEntry>,
}

impl TrustStore {
    /// Read the store at `path`; a missing file is an empty store.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let entries = match std::fs::read_to_string(path) {
            Ok(text) => {
                toml::from_str::<StoreFile>(&text)
                    .map_err(|e| Error::Trust {
                        file: path.to_path_buf(),
                        message: e.message().to_owned(),
                    })?
                    .trusted
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Error::Io {
                    file: path.to_path_buf(),
                    source: e,
                });
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The recorded entries.
    pub fn entries(&self) -> &[TrustEntry] {
        &self.entries
    }

    /// Is this content hash trusted?
    pub fn is_trusted(&self, hash: &str) -> bool {
        self.entries.iter().any(|e| e.hash == hash)
    }

    /// Is the project at `root`, as its files are now, trusted?
    pub fn trusts_project(&self, root: &Path) -> Result<bool, Error> {
        Ok(self.is_trusted(&project_hash(root)?))
    }

    /// Record `hash` for `project`, replacing what was recorded for that project before, and
    /// write the store (atomically: a reader sees the old or the new file, never half).
    pub fn record(&mut self, project: &Path, hash: &str) -> Result<(), Error> {
        self.entries.retain(|e| e.project != project);
        self.entries.push(TrustEntry {
            project: project.to_path_buf(),
            hash: hash.to_owned(),
        });
        self.save()
    }

    /// Forget what was recorded for `project`; true if there was something.
    pub fn revoke(&mut self, project: &Path) -> Result<bool, Error> {
        let before = self.entries.len();
        self.entries.retain(|e| e.project != project);
        let removed = self.entries.len() != before;
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> Result<(), Error> {
        let fail = |message: String| Error::Trust {
            file: self.path.clone(),
            message,
        };
        let body = toml::to_string(&StoreFile {
            trusted: self.entries.clone(),
        })
        .map_err(|e| fail(e.to_string()))?;
        let text = format!(
            "# Hashes of project policy content the user trusts (written by toolgate).\n{body}"
        );
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        let tmp = dir.join(format!(".trust.toml.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| fail(e.to_string()))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_follows_content_not_path() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("p");
        std::fs::create_dir_all(root.join(".toolgate")).unwrap();
        std::fs::write(
            root.join(".toolgate/policy.toml"),
            "[permissions]\nallow = [\"Bash\"]\n",
        )
        .unwrap();
        let store_path = d.path().join("cfg/trust.toml");
        let mut store = TrustStore::load(&store_path).unwrap();
        assert!(!store.trusts_project(&root).unwrap());
        store.record(&root, &project_hash(&root).unwrap()).unwrap();
        let store = TrustStore::load(&store_path).unwrap();
        assert!(store.trusts_project(&root).unwrap());
        // One more byte: no longer trusted.
        std::fs::write(
            root.join(".toolgate/policy.toml"),
            "[permissions]\nallow = [\"Bash\"]\n ",
        )
        .unwrap();
        assert!(!store.trusts_project(&root).unwrap());
        // A new settings file counts too.
        std::fs::write(
            root.join(".toolgate/policy.toml"),
            "[permissions]\nallow = [\"Bash\"]\n",
        )
        .unwrap();
        assert!(store.trusts_project(&root).unwrap());
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(root.join(".claude/settings.local.json"), "{}").unwrap();
        assert!(!store.trusts_project(&root).unwrap());
    }

    #[test]
    fn an_mcp_json_counts_when_present_and_leaves_older_trust_alone_when_absent() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join(".toolgate")).unwrap();
        std::fs::write(root.join(".toolgate/policy.toml"), "[permissions]\n").unwrap();
        // The hash as it was before `.mcp.json` was listed: the first four files only.
        let mut h = Sha256::new();
        for name in &TRUSTED_FILES[..4] {
            h.update(name.as_bytes());
            h.update([0]);
            match std::fs::read(root.join(name)) {
                Ok(bytes) => {
                    h.update((bytes.len() as u64).to_le_bytes());
                    h.update(&bytes);
                }
                Err(_) => h.update(b"absent"),
            }
            h.update([0]);
        }
        let before: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let without = project_hash(root).unwrap();
        assert_eq!(without, format!("sha256:{before}"));
        std::fs::write(root.join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
        let with = project_hash(root).unwrap();
        assert_ne!(with, without);
        std::fs::write(root.join(".mcp.json"), "{\"mcpServers\": {\"x\": {}}}").unwrap();
        assert_ne!(project_hash(root).unwrap(), with);
    }

    #[test]
    fn revoking_forgets_the_project() {
        let d = tempfile::tempdir().unwrap();
        let store_path = d.path().join("trust.toml");
        let mut store = TrustStore::load(&store_path).unwrap();
        store.record(d.path(), "sha256:00").unwrap();
        assert!(store.revoke(d.path()).unwrap());
        assert!(!store.revoke(d.path()).unwrap());
        assert!(
            !TrustStore::load(&store_path)
                .unwrap()
                .is_trusted("sha256:00")
        );
    }
}
