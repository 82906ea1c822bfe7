//! `toolgate run --session FILE`: what a session keeps between invocations, so a host can run
//! a conversation one turn per process. The file holds the session id, the working directory,
//! the rules approved for the session, and the file-state cache (what the model has read, so
//! an Edit in the next invocation finds the Read of this one).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tool_core::{FileState, ToolContext};

/// The format's version; a file of another version is refused, not misread.
const VERSION: u32 = 1;

/// One file the model has seen.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeenFile {
    /// Its absolute path.
    pub path: PathBuf,
    /// What was seen.
    #[serde(flatten)]
    pub state: FileState,
}

/// What a session keeps between invocations.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    /// The format's version.
    pub version: u32,
    /// The project the session runs in.
    pub project: PathBuf,
    /// The session's id.
    pub session_id: String,
    /// The working directory a `cd` left it in.
    pub cwd: PathBuf,
    /// Rules approved "for this session".
    #[serde(default)]
    pub approvals: Vec<String>,
    /// The file-state cache, least recently used first.
    #[serde(default)]
    pub files: Vec<SeenFile>,
}

/// Why a session file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    /// It cannot be read or written.
    #[error("session file {}: {source}", .file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// It is not a session file of this version.
    #[error("session file {}: {message}", .file.display())]
    Format {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl SessionState {
    /// The state kept in `file`, or `None` when there is no such file yet. A session of
    /// another project is refused.
    pub fn load(file: &Path, project: &Path) -> Result<Option<Self>, SessionFileError> {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(SessionFileError::Io {
                    file: file.to_path_buf(),
                    source,
                });
            }
        };
        let format = |message: String| SessionFileError::Format {
            file: file.to_path_buf(),
            message,
        };
        let state: SessionState = serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        if state.version != VERSION {
            return Err(format(format!(
                "version {} (this toolgate reads version {VERSION})",
                state.version
            )));
        }
        if state.project != project {
            return Err(format(format!(
                "it belongs to the project {}, not {}",
                state.project.display(),
                project.display()
            )));
        }
        Ok(Some(state))
    }

    /// The state of a session running in `ctx`, with `approvals`.
    pub fn of(ctx: &ToolContext, approvals: Vec<String>) -> Self {
        Self {
            version: VERSION,
            project: ctx.project_root.clone(),
            session_id: ctx.session_id.clone(),
            cwd: ctx.cwd.clone(),
            approvals,
            files: ctx
                .file_state
                .entries()
                .into_iter()
                .map(|(path, state)| SeenFile { path, state })
                .collect(),
        }
    }

    /// Carry the kept state into `ctx`: the session id, the working directory (when it still
    /// exists) and the file-state cache.
    pub fn restore(&self, ctx: &mut ToolContext) {
        ctx.session_id = self.session_id.clone();
        if self.cwd.is_dir() {
            ctx.cwd = self.cwd.clone();
        }
        for f in &self.files {
            ctx.file_state.insert(f.path.clone(), f.state.clone());
        }
    }

    /// Write the state to `file` in one step (a temporary file, then a rename), so an
    /// interrupted write leaves the previous state.
    pub fn save(&self, file: &Path) -> Result<(), SessionFileError> {
        let io = |source| SessionFileError::Io {
            file: file.to_path_buf(),
            source,
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| SessionFileError::Format {
            file: file.to_path_buf(),
            message: e.to_string(),
        })?;
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
        tmp.persist(file).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_other_projects() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        let mut ctx = ToolContext::new(&ws, dir.path(), dir.path().join("r"));
        ctx.session_id = "s1".into();
        ctx.cwd = ws.join("sub");
        ctx.file_state.insert(
            ws.join("a.txt"),
            FileState {
                content: "alpha\n".into(),
                timestamp_ms: 7,
                offset: Some(1),
                limit: None,
                full_view: true,
            },
        );
        let file = dir.path().join("session.json");
        SessionState::of(&ctx, vec!["Bash(make)".into()])
            .save(&file)
            .unwrap();
        let back = SessionState::load(&file, &ws).unwrap().unwrap();
        let mut fresh = ToolContext::new(&ws, dir.path(), dir.path().join("r"));
        back.restore(&mut fresh);
        assert_eq!(fresh.session_id, "s1");
        assert_eq!(fresh.cwd, ws.join("sub"));
        assert_eq!(back.approvals, ["Bash(make)"]);
        assert_eq!(
            fresh
                .file_state
                .get(&ws.join("a.txt"))
                .unwrap()
                .timestamp_ms,
            7
        );
        let e = SessionState::load(&file, dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("belongs to the project"), "{e}");
        assert!(
            SessionState::load(&dir.path().join("none.json"), &ws)
                .unwrap()
                .is_none()
        );
        std::fs::write(&file, "{").unwrap();
        assert!(SessionState::load(&file, &ws).is_err());
    }
}
