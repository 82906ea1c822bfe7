//! The builder: rules added one by one, checked as they are added, and the policy built from
//! them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_core::{PermissionMode, RuleList};

use super::Policy;
use super::entry::{IgnoredRule, Layer, OPAQUE_CONTENT_TOOLS, PathFamily, RuleEntry, RuleMatcher};
use super::index::RuleIndex;
use crate::Error;
use crate::path_rule::PathPattern;
use crate::rule::PermissionRule;
use crate::shell_rule::ShellPattern;

/// Builds a [`Policy`] from rules and settings files.
#[derive(Debug, Clone, Default)]
pub struct PolicyBuilder {
    entries: Vec<RuleEntry>,
    default_mode: Option<(Layer, PermissionMode)>,
    additional_directories: Vec<PathBuf>,
    trusted: bool,
    managed_only: Option<String>,
    bypass_disabled: Option<String>,
    pub(crate) tests: Vec<crate::file::PolicyTest>,
    pub(crate) warnings: Vec<crate::lint::LintWarning>,
    pub(crate) files: Vec<(Layer, PathBuf)>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) sandbox: crate::sandbox::settings::SandboxSettings,
}

impl PolicyBuilder {
    /// An empty builder. The project is untrusted until [`trust_project`](Self::trust_project).
    pub fn new() -> Self {
        Self::default()
    }

    /// The home directory `~` stands for in settings (rules take it from the call's context).
    pub fn home(&mut self, home: &Path) -> &mut Self {
        self.home = Some(home.to_path_buf());
        self
    }

    /// Whether the project's own allow rules apply (deny and ask rules always do).
    pub fn trust_project(&mut self, trusted: bool) -> &mut Self {
        self.trusted = trusted;
        self
    }

    /// Add one rule.
    pub fn rule(
        &mut self,
        list: RuleList,
        text: &str,
        layer: Layer,
        file: Option<&Path>,
    ) -> Result<&mut Self, Error> {
        self.add_rule(list, text, layer, file, None)
    }

    /// Add one rule written at `line` and `column` (1-based) of `file`; an error points there.
    pub fn rule_at(
        &mut self,
        list: RuleList,
        text: &str,
        layer: Layer,
        file: &Path,
        line: usize,
        column: usize,
    ) -> Result<&mut Self, Error> {
        self.add_rule(list, text, layer, Some(file), Some((line, column)))
    }

    fn add_rule(
        &mut self,
        list: RuleList,
        text: &str,
        layer: Layer,
        file: Option<&Path>,
        at: Option<(usize, usize)>,
    ) -> Result<&mut Self, Error> {
        let locate = |e: Error| match (file, at) {
            (Some(f), Some((line, column))) => Error::At {
                file: f.to_path_buf(),
                line,
                column,
                error: Box::new(e),
            },
            (Some(f), None) => Error::InFile {
                file: f.to_path_buf(),
                source: Box::new(e),
            },
            (None, _) => e,
        };
        let rule = PermissionRule::parse(text).map_err(locate)?;
        let invalid = |message: String| {
            locate(Error::InvalidRule {
                rule: text.to_owned(),
                message,
            })
        };
        let matcher = match (&rule.content, PathFamily::of(&rule.tool)) {
            (None, _) => RuleMatcher::WholeTool,
            (Some(content), Some(family)) => {
                // (A `Write(...)` allow rule is not applied at all; `build` says so instead.)
                let write_allow = rule.tool == "Write" && list == RuleList::Allow;
                if !matches!(rule.tool.as_str(), "Read" | "Edit") && !write_allow {
                    let governs = match family {
                        PathFamily::Read => "Read",
                        PathFamily::Edit => "Edit",
                    };
                    self.warnings.push(crate::lint::LintWarning {
                severity: crate::lint::Severity::Warning,
                        file: file.map(Path::to_path_buf),
                        line: at.map(|a| a.0),
                        column: at.map(|a| a.1),
                        rule: Some(text.to_owned()),
                        message: format!(
                            "`{}(...)` rules are read as `{governs}(...)` rules, which govern every tool that {}s files; write `{governs}(...)`",
                            rule.tool,
                            governs.to_ascii_lowercase()
                        ),
                    });
                }
                // In a user settings file `/path` is relative to that file's directory.
                let user_dir = file.filter(|_| layer == Layer::User).and_then(Path::parent);
                let pattern = PathPattern::parse(content, user_dir, list != RuleList::Allow)
                    .map_err(invalid)?;
                RuleMatcher::Path {
                    family,
                    pattern: Arc::new(pattern),
                }
            }
            (Some(content), None) if rule.tool == "Bash" => {
                RuleMatcher::Shell(Arc::new(ShellPattern::parse(content).map_err(invalid)?))
            }
            (Some(content), None) if rule.tool == "WebFetch" => {
                RuleMatcher::Domain(crate::domain::DomainPattern::parse(content).map_err(invalid)?)
            }
            (Some(_), None)
                if OPAQUE_CONTENT_TOOLS.contains(&rule.tool.as_str())
                    || rule.tool.starts_with("mcp__") =>
            {
                let message = match list {
                    RuleList::Allow => format!(
                        "toolgate cannot tell which {} calls this rule means, so it never allows anything",
                        rule.tool
                    ),
                    _ if matches!(rule.tool.as_str(), "Agent" | "Skill") => format!(
                        "toolgate matches this rule against the call's {} only: it covers every {} call without one",
                        if rule.tool == "Agent" {
                            "subagent_type"
                        } else {
                            "skill"
                        },
                        rule.tool
                    ),
                    _ => format!(
                        "toolgate does not match the content of {} rules: this rule covers every {} call",
                        rule.tool, rule.tool
                    ),
                };
                self.warnings.push(crate::lint::LintWarning {
                    severity: crate::lint::Severity::Warning,
                    file: file.map(Path::to_path_buf),
                    line: at.map(|a| a.0),
                    column: at.map(|a| a.1),
                    rule: Some(text.to_owned()),
                    message,
                });
                RuleMatcher::AnyContent
            }
            (Some(_), None) => {
                return Err(locate(Error::UnsupportedRule {
                    rule: text.to_owned(),
                    file: None,
                }));
            }
        };
        self.entries.push(RuleEntry {
            rule,
            text: text.to_owned(),
            list,
            layer,
            file: file.map(Path::to_path_buf),
            matcher,
            line: at.map(|a| a.0),
            column: at.map(|a| a.1),
        });
        Ok(self)
    }

    /// Only allow rules from the managed layer apply (`allow_managed_rules_only`; Claude Code's
    /// `allowManagedPermissionRulesOnly`). Deny and ask rules from every layer still apply: a
    /// managed setting never weakens a restriction. `source` says where it was set.
    pub fn allow_managed_rules_only(&mut self, source: impl Into<String>) -> &mut Self {
        self.managed_only = Some(source.into());
        self
    }

    /// Bypass mode is unavailable (`disable_bypass_mode`; Claude Code's
    /// `disableBypassPermissionsMode = "disable"`). `source` says where it was set.
    pub fn disable_bypass_mode(&mut self, source: impl Into<String>) -> &mut Self {
        self.bypass_disabled = Some(source.into());
        self
    }

    /// Set the starting mode from `layer` (the highest layer that sets it wins).
    pub fn default_mode(&mut self, mode: PermissionMode, layer: Layer) -> &mut Self {
        if self.default_mode.is_none_or(|(l, _)| layer <= l) {
            self.default_mode = Some((layer, mode));
        }
        self
    }

    /// Add a working directory.
    pub fn additional_directory(&mut self, dir: PathBuf) -> &mut Self {
        self.additional_directories.push(dir);
        self
    }

    /// A managed-only setting found in another layer: it has no effect there.
    pub(crate) fn warn_setting(&mut self, file: Option<&Path>, key: &str) {
        self.warnings.push(crate::lint::LintWarning {
            severity: crate::lint::Severity::Warning,
            file: file.map(Path::to_path_buf),
            line: None,
            column: None,
            rule: None,
            message: format!("`{key}` only has an effect in the managed layer; ignored here"),
        });
    }

    /// Build the policy.
    pub fn build(&self) -> Policy {
        let mut entries = Vec::new();
        let mut ignored = Vec::new();
        for e in &self.entries {
            let why = if e.list != RuleList::Allow {
                None
            } else if matches!(e.matcher, RuleMatcher::AnyContent) {
                Some(format!(
                    "toolgate does not match the content of {} rules",
                    e.rule.tool
                ))
            } else if e.rule.tool == "Write" && e.rule.content.is_some() {
                // Claude Code 2.1.332 grants no write through a `Write(path)` allow rule (it
                // still asks; recorded with explore); its deny and ask rules are kept here, the
                // stricter reading.
                Some(
                    "a Write(path) allow rule grants nothing in Claude Code; allow Edit(path) to let Write and Edit change those paths"
                        .to_owned(),
                )
            } else if let Some(set) = self
                .managed_only
                .as_ref()
                .filter(|_| e.layer != Layer::Managed)
            {
                Some(format!(
                    "only managed allow rules apply (allow_managed_rules_only, set by {set})"
                ))
            } else if e.layer.needs_trust() && !self.trusted {
                Some(
                    "the project's policy is not trusted, so its allow rules do not apply"
                        .to_owned(),
                )
            } else {
                None
            };
            match why {
                Some(why) => ignored.push(IgnoredRule {
                    entry: e.clone(),
                    why,
                }),
                None => entries.push(e.clone()),
            }
        }
        let (sandbox, dropped) = self.sandbox.without_untrusted(self.trusted);
        let mut warnings = self.warnings.clone();
        for d in dropped {
            warnings.push(crate::lint::LintWarning {
                severity: crate::lint::Severity::Warning,
                file: None,
                line: None,
                column: None,
                rule: None,
                message: format!(
                    "{d} is ignored: the project's policy is not trusted, and this setting loosens the sandbox"
                ),
            });
        }
        for (key, why) in &self.sandbox.unhonoured {
            warnings.push(crate::lint::LintWarning {
                severity: crate::lint::Severity::Warning,
                file: None,
                line: None,
                column: None,
                rule: None,
                message: format!("{key} is read but not honoured: {why}"),
            });
        }
        for i in &ignored {
            tracing::warn!(rule = %i.entry.text, source = %i.entry.source(), "allow rule ignored: {}", i.why);
        }
        Policy {
            index: Arc::new(RuleIndex::build(&entries)),
            entries,
            ignored,
            default_mode: self.default_mode.map(|(_, m)| m),
            additional_directories: self.additional_directories.clone(),
            bypass_disabled: self.bypass_disabled.clone(),
            tests: self.tests.clone(),
            warnings,
            files: self.files.clone(),
            identities: Arc::default(),
            sandbox,
            walk_cache: Arc::default(),
        }
    }
}
