//! Hook configuration from policy files: TOML (`[[hooks.PreToolUse]]`) and Claude Code
//! settings (`hooks.<Event>[].hooks[]` with `type = "command"`), layer by layer.
//!
//! The same command (with the same `if`) configured in several places runs once: the last
//! one loaded wins, and layers load from user up to managed. Hooks from the project and local
//! layers run only when the project is trusted. Events other than the tool events are not run
//! by toolgate and are reported; a hook type other than `command` is a load error, so a guard
//! is never silently dropped.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tool_permissions::PolicyFiles;

use crate::Error;
use crate::command::CommandSpec;
use crate::hooks::{HookEvent, Hooks};

/// One group as loaded.
#[derive(Debug, Clone)]
struct Group {
    event: HookEvent,
    matcher: String,
    sequential: bool,
    specs: Vec<CommandSpec>,
}

/// Collects hook groups from files, then builds the hook set.
#[derive(Debug, Default)]
pub struct HookLoader {
    groups: Vec<Group>,
    notes: Vec<String>,
}

#[derive(Deserialize)]
struct TomlDoc {
    #[serde(default)]
    hooks: BTreeMap<String, Vec<TomlGroup>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlGroup {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<u64>,
    #[serde(default, rename = "if")]
    condition: Option<String>,
    #[serde(default)]
    fail_closed: bool,
    #[serde(default)]
    sequential: bool,
    #[serde(default)]
    hooks: Vec<TomlHook>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlHook {
    command: String,
    #[serde(default)]
    timeout: Option<u64>,
    #[serde(default, rename = "if")]
    condition: Option<String>,
    #[serde(default)]
    fail_closed: bool,
}

impl HookLoader {
    /// An empty loader.
    pub fn new() -> Self {
        Self::default()
    }

    /// What loading noticed (ignored events, untrusted hooks, bad matchers).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Load the hooks of every file of `files` (read once by
    /// [`PolicySources::read`](tool_permissions::PolicySources::read), which also gives the
    /// policy), respecting the trust settled when they were read.
    pub fn files(&mut self, files: &PolicyFiles) -> Result<&mut Self, Error> {
        let trusted = files.project_trusted();
        // Lowest precedence first, so that a later duplicate (a higher layer) wins.
        for f in files.files().iter().rev() {
            let (file, text) = (&f.path, &f.text);
            let before = self.groups.len();
            if f.is_claude_settings() {
                let v: Value = serde_json::from_str(text).map_err(|e| Error::Config {
                    file: file.clone(),
                    message: format!("line {} column {}: {e}", e.line(), e.column()),
                })?;
                self.claude_settings(&v, file)?;
            } else {
                self.toml(text, file)?;
            }
            if f.layer.needs_trust() && !trusted && self.groups.len() > before {
                self.groups.truncate(before);
                self.notes.push(format!(
                    "hooks in {} are not run: the project's policy is not trusted",
                    file.display()
                ));
            }
        }
        Ok(self)
    }

    /// Load the `hooks` of Claude Code settings (`file` names them in errors).
    pub fn claude_settings(&mut self, settings: &Value, file: &Path) -> Result<&mut Self, Error> {
        let Some(hooks) = settings.get("hooks") else {
            return Ok(self);
        };
        let bad = |message: String| Error::Config {
            file: file.to_path_buf(),
            message,
        };
        let hooks = hooks
            .as_object()
            .ok_or_else(|| bad("`hooks` must be an object".into()))?;
        for (event_name, groups) in hooks {
            let Some(event) = HookEvent::parse(event_name) else {
                self.notes.push(format!(
                    "{}: `{event_name}` hooks are not tool hooks; toolgate does not run them",
                    file.display()
                ));
                continue;
            };
            let groups = groups
                .as_array()
                .ok_or_else(|| bad(format!("`hooks.{event_name}` must be a list")))?;
            for g in groups {
                let matcher = g.get("matcher").and_then(Value::as_str).unwrap_or("");
                let list = g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad(format!("`hooks.{event_name}[].hooks` must be a list")))?;
                let mut specs = Vec::new();
                for h in list {
                    let kind = h.get("type").and_then(Value::as_str).unwrap_or("command");
                    if kind != "command" {
                        return Err(bad(format!(
                            "a `{kind}` hook in `hooks.{event_name}` cannot be run by toolgate (only `command` hooks are); remove it or replace it with a command"
                        )));
                    }
                    let command = h.get("command").and_then(Value::as_str).ok_or_else(|| {
                        bad(format!("a hook in `hooks.{event_name}` has no `command`"))
                    })?;
                    let timeout = match h.get("timeout") {
                        None => None,
                        Some(t) => Some(Duration::from_secs_f64(
                            t.as_f64()
                                .filter(|s| *s > 0.0 && s.is_finite())
                                .ok_or_else(|| bad(format!("the timeout of `{command}` must be a positive number of seconds")))?,
                        )),
                    };
                    specs.push(CommandSpec {
                        command: command.to_owned(),
                        timeout,
                        condition: h.get("if").and_then(Value::as_str).map(str::to_owned),
                        fail_closed: h
                            .get("failClosed")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    });
                }
                self.groups.push(Group {
                    event,
                    matcher: matcher.to_owned(),
                    sequential: false,
                    specs,
                });
            }
        }
        Ok(self)
    }

    /// Load the `hooks` of a TOML policy file's text.
    pub fn toml(&mut self, text: &str, file: &Path) -> Result<&mut Self, Error> {
        let doc: TomlDoc = toml::from_str(text).map_err(|e| {
            let (line, column) =
                tool_permissions::line_column(text, e.span().map_or(0, |s| s.start));
            Error::Config {
                file: file.to_path_buf(),
                message: format!("{line}:{column}: {}", e.message().trim_end()),
            }
        })?;
        for (event_name, groups) in doc.hooks {
            let event = HookEvent::parse(&event_name).ok_or_else(|| Error::Config {
                file: file.to_path_buf(),
                message: format!(
                    "`hooks.{event_name}`: toolgate runs PreToolUse, PostToolUse and PostToolUseFailure hooks"
                ),
            })?;
            for g in groups {
                let mut specs: Vec<CommandSpec> = Vec::new();
                if let Some(command) = g.command {
                    specs.push(CommandSpec {
                        command,
                        timeout: g.timeout.map(Duration::from_secs),
                        condition: g.condition.clone(),
                        fail_closed: g.fail_closed,
                    });
                }
                specs.extend(g.hooks.into_iter().map(|h| CommandSpec {
                    command: h.command,
                    timeout: h.timeout.or(g.timeout).map(Duration::from_secs),
                    condition: h.condition.or_else(|| g.condition.clone()),
                    fail_closed: h.fail_closed || g.fail_closed,
                }));
                if specs.is_empty() {
                    return Err(Error::Config {
                        file: file.to_path_buf(),
                        message: format!(
                            "a `hooks.{event_name}` entry needs a `command` or a `hooks` list"
                        ),
                    });
                }
                if specs.iter().any(|s| s.timeout == Some(Duration::ZERO)) {
                    return Err(Error::Config {
                        file: file.to_path_buf(),
                        message: format!(
                            "a `hooks.{event_name}` timeout must be at least 1 second"
                        ),
                    });
                }
                self.groups.push(Group {
                    event,
                    matcher: g.matcher.unwrap_or_default(),
                    sequential: g.sequential,
                    specs,
                });
            }
        }
        Ok(self)
    }

    /// Build the hook set: duplicates (same event, command and `if`) dropped but the last,
    /// invalid matchers reported and left out.
    pub fn build(mut self) -> Result<(Hooks, Vec<String>), Error> {
        let mut last: BTreeMap<(HookEvent, String, Option<String>), (usize, usize)> =
            BTreeMap::new();
        for (gi, g) in self.groups.iter().enumerate() {
            for (si, s) in g.specs.iter().enumerate() {
                last.insert((g.event, s.command.clone(), s.condition.clone()), (gi, si));
            }
        }
        let mut hooks = Hooks::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let specs: Vec<CommandSpec> = g
                .specs
                .iter()
                .enumerate()
                .filter(|(si, s)| {
                    last.get(&(g.event, s.command.clone(), s.condition.clone())) == Some(&(gi, *si))
                })
                .map(|(_, s)| s.clone())
                .collect();
            if specs.is_empty() {
                continue;
            }
            match hooks.command_group(g.event, &g.matcher, g.sequential, specs) {
                Ok(_) => {}
                Err(Error::InvalidMatcher { matcher, message }) => self.notes.push(format!(
                    "{} hooks with matcher `{matcher}` never run: {message}",
                    g.event.as_str()
                )),
                Err(e) => return Err(e),
            }
        }
        Ok((hooks, self.notes))
    }
}

/// One hook command as a policy file declares it, for showing (`toolgate policy list`,
/// `toolgate trust`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookListing {
    /// The event it runs on (`PreToolUse`, ...).
    pub event: String,
    /// The tools it matches (`*` for every tool).
    pub matcher: String,
    /// The shell command it runs.
    pub command: String,
    /// Its `if` condition, when it has one.
    pub condition: Option<String>,
    /// The file that declares it.
    pub file: std::path::PathBuf,
    /// Whether it runs: false for a hook of a project whose policy is not trusted.
    pub applied: bool,
}

/// Every hook command the files of `files` declare, in file order (highest layer first),
/// each with the file it comes from and whether it runs.
pub fn list_hooks(files: &PolicyFiles) -> Result<Vec<HookListing>, Error> {
    let trusted = files.project_trusted();
    let mut out = Vec::new();
    for f in files.files() {
        let mut l = HookLoader::new();
        if f.is_claude_settings() {
            let v: Value = serde_json::from_str(&f.text).map_err(|e| Error::Config {
                file: f.path.clone(),
                message: format!("line {} column {}: {e}", e.line(), e.column()),
            })?;
            l.claude_settings(&v, &f.path)?;
        } else {
            l.toml(&f.text, &f.path)?;
        }
        let applied = trusted || !f.layer.needs_trust();
        for g in l.groups {
            for spec in g.specs {
                out.push(HookListing {
                    event: g.event.as_str().to_owned(),
                    matcher: g.matcher.clone(),
                    command: spec.command,
                    condition: spec.condition,
                    file: f.path.clone(),
                    applied,
                });
            }
        }
    }
    Ok(out)
}

/// The hooks of every file of `files`, and what loading noticed.
pub fn load_hooks(files: &PolicyFiles) -> Result<(Hooks, Vec<String>), Error> {
    let mut l = HookLoader::new();
    l.files(files)?;
    l.build()
}
