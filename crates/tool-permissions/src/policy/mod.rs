//! Policies: rules from several layers, merged, and the decision they make for one call.
//!
//! Deny beats ask beats allow across every layer; within a list the first matching rule is
//! the one reported. Whole-tool rules, `Read(...)`/`Edit(...)` path rules (and their aliases
//! `Grep`, `Glob`, `LS`, `Write`, `MultiEdit`, `NotebookEdit`), Bash rules and
//! `WebFetch(domain:...)` rules are evaluated; a content rule for any other tool is refused
//! with [`Error::UnsupportedRule`], so a caller never silently runs with fewer rules than
//! written.

use std::path::PathBuf;

use tool_core::texts::{permission_denied, permission_not_granted};
use tool_core::{
    Decision, DecisionReason, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionSubject, RuleList,
};

use std::sync::Arc;

use crate::Error;
use crate::path_rule::candidates;

mod builder;
mod claude;
mod entry;
mod index;
mod paths;
mod shell;

pub use builder::PolicyBuilder;
pub use entry::{IgnoredRule, Layer, PathFamily, RuleEntry, RuleMatcher};
use index::RuleIndex;
use shell::ShellLine;

use crate::protected::{Protection, protected};

/// A built policy: the decision for each call, and the path checks tools ask for.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    entries: Vec<RuleEntry>,
    ignored: Vec<IgnoredRule>,
    default_mode: Option<PermissionMode>,
    additional_directories: Vec<PathBuf>,
    bypass_disabled: Option<String>,
    tests: Vec<crate::file::PolicyTest>,
    warnings: Vec<crate::lint::LintWarning>,
    files: Vec<(Layer, PathBuf)>,
    index: Arc<RuleIndex>,
    identities: Arc<crate::identity::IdentityCache>,
}

impl Policy {
    /// A policy with no rules: the default-mode baseline alone.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The rules in effect.
    pub fn rules(&self) -> &[RuleEntry] {
        &self.entries
    }

    /// Allow rules left out (the project is not trusted, or only managed allow rules apply).
    pub fn ignored_rules(&self) -> &[IgnoredRule] {
        &self.ignored
    }

    /// Where bypass mode was disabled, if it was.
    pub fn bypass_disabled(&self) -> Option<&str> {
        self.bypass_disabled.as_deref()
    }

    /// The `[[tests]]` of the policy files, in load order.
    pub fn tests(&self) -> &[crate::file::PolicyTest] {
        &self.tests
    }

    /// The files that were loaded, with their layers.
    pub fn files(&self) -> &[(Layer, PathBuf)] {
        &self.files
    }

    /// Warnings found while loading (aliased rule families, settings in the wrong layer).
    pub fn load_warnings(&self) -> &[crate::lint::LintWarning] {
        &self.warnings
    }

    /// The mode a session starts in: `requested` (a command-line flag) or else the settings'
    /// default mode, or default. Asking for bypass mode where a managed policy disabled it is an
    /// error; a settings file's bypass default is then ignored with a warning.
    pub fn effective_mode(
        &self,
        requested: Option<PermissionMode>,
    ) -> Result<PermissionMode, Error> {
        let disabled = self.bypass_disabled.as_ref();
        match (requested, disabled) {
            (Some(PermissionMode::BypassPermissions), Some(by)) => Err(Error::BypassDisabled {
                source_setting: by.clone(),
            }),
            (Some(m), _) => Ok(m),
            (None, Some(by)) if self.default_mode == Some(PermissionMode::BypassPermissions) => {
                tracing::warn!(
                    "the settings' default mode bypassPermissions is disabled by {by}; starting in default mode"
                );
                Ok(PermissionMode::Default)
            }
            (None, _) => Ok(self.default_mode.unwrap_or_default()),
        }
    }

    /// The starting mode the settings ask for.
    pub fn default_mode(&self) -> Option<PermissionMode> {
        self.default_mode
    }

    /// Extra working directories from the settings.
    pub fn additional_directories(&self) -> &[PathBuf] {
        &self.additional_directories
    }

    /// The first `list` rule covering every call of `tool` (whole-tool rules, and deny or ask
    /// rules whose content this engine widens to the whole tool).
    fn find(&self, list: RuleList, tool: &str) -> Option<&RuleEntry> {
        self.index
            .whole
            .iter()
            .map(|&i| &self.entries[i])
            .find(|e| e.list == list && e.rule.names_tool(tool))
    }

    /// Forget what the identity walks found (the denied files' inodes, the targets of denied
    /// symlinks), so the next decision walks again: for a host that knows files under a deny
    /// rule were created or relinked. A reload builds a new policy, which starts empty anyway.
    pub fn refresh_identities(&self) {
        self.identities.clear();
    }

    /// Paths no rule can vouch for ask in every mode: a UNC or device path (a network
    /// location, never allowed silently), a path with an 8.3 short-name component (another
    /// spelling of a long name that deny rules are written against), and a file with several
    /// links whose identity the deny rules' walk could not settle.
    fn path_identity_ask(&self, request: &PermissionRequest<'_>) -> Option<Decision> {
        let ctx = request.ctx;
        let (paths, families): (&[PathBuf], &[PathFamily]) = match request.subject {
            PermissionSubject::ReadPaths(p) => (p, &[PathFamily::Read]),
            PermissionSubject::WritePaths(p) => (p, &[PathFamily::Edit, PathFamily::Read]),
            _ => return None,
        };
        let why = paths.iter().find_map(|p| {
            if tool_core::is_unc(p) {
                Some("a UNC or device path")
            } else if crate::path_rule::short_name_spelling(p, ctx) {
                Some("a path with an 8.3 short name")
            } else if families.iter().any(|&f| self.identity_unknown(f, p, ctx)) {
                Some("a file with several links that deny rules could not rule out")
            } else {
                None
            }
        })?;
        Some(Decision::ask(
            Self::ask_message(request),
            DecisionReason::Check { name: why.into() },
        ))
    }

    /// A deny from a path rule for what the call reads or writes, if any.
    fn content_deny(&self, request: &PermissionRequest<'_>) -> Option<Decision> {
        let ctx = request.ctx;
        match request.subject {
            PermissionSubject::ReadPaths(paths) => paths.iter().find_map(|p| {
                self.path_rule(RuleList::Deny, PathFamily::Read, p, ctx)
                    .map(|e| {
                        Decision::deny(
                            format!("Permission to read {} has been denied.", p.display()),
                            e.reason(),
                        )
                    })
            }),
            PermissionSubject::WritePaths(paths) => paths.iter().find_map(|p| {
                self.path_rule(RuleList::Deny, PathFamily::Edit, p, ctx)
                    .or_else(|| self.path_rule(RuleList::Deny, PathFamily::Read, p, ctx))
                    .map(|e| {
                        Decision::deny(
                            format!("Permission to edit {} has been denied.", p.display()),
                            e.reason(),
                        )
                    })
            }),
            PermissionSubject::Url(url) => self
                .domain_rule(RuleList::Deny, url)
                .map(|e| Decision::deny(permission_denied(request.tool_name), e.reason())),
            _ => None,
        }
    }

    /// The first `list` domain rule covering `url`'s host. A URL whose host cannot be read
    /// matches no rule (so it is never allowed by one).
    fn domain_rule(&self, list: RuleList, url: &str) -> Option<&RuleEntry> {
        let host = crate::domain::url_host(url)?;
        self.index
            .domains
            .iter()
            .map(|&i| &self.entries[i])
            .find(|e| {
                e.list == list && matches!(&e.matcher, RuleMatcher::Domain(d) if d.matches(&host))
            })
    }

    fn ask_message(request: &PermissionRequest<'_>) -> String {
        let agent = &request.ctx.agent_name;
        match request.subject {
            PermissionSubject::ReadPaths(p) if !p.is_empty() => {
                format!(
                    "{agent} requested permissions to read from {}, but you haven't granted it yet.",
                    p[0].display()
                )
            }
            PermissionSubject::WritePaths(p) if !p.is_empty() => {
                format!(
                    "{agent} requested permissions to write to {}, but you haven't granted it yet.",
                    p[0].display()
                )
            }
            _ => permission_not_granted(agent, request.tool_name),
        }
    }
}

impl PermissionPolicy for Policy {
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        let decision = self.decide_before_mode_post(request);
        if decision.verdict == tool_core::Verdict::Ask
            && request.ctx.permission_mode == PermissionMode::Plan
            && let PermissionSubject::WritePaths(paths) = request.subject
            && let Some(p) = paths.first()
        {
            return Decision::deny(
                format!("Cannot write to {} while in plan mode.", p.display()),
                DecisionReason::Mode {
                    mode: PermissionMode::Plan,
                },
            );
        }
        if decision.verdict == tool_core::Verdict::Ask
            && request.ctx.permission_mode == PermissionMode::DontAsk
        {
            return Decision::deny(
                format!(
                    "Permission to use {} has been denied because {} is running in don't ask mode. {}",
                    request.tool_name,
                    request.ctx.product_name,
                    tool_core::texts::DENIAL_WORKAROUND_GUIDANCE
                ),
                DecisionReason::Mode {
                    mode: PermissionMode::DontAsk,
                },
            );
        }
        decision
    }

    fn removes_tool(&self, tool_name: &str) -> bool {
        // Only a whole-tool deny hides the tool; a widened content deny refuses its calls.
        self.index.whole.iter().map(|&i| &self.entries[i]).any(|e| {
            e.list == RuleList::Deny
                && matches!(e.matcher, RuleMatcher::WholeTool)
                && e.rule.names_tool(tool_name)
        })
    }
}

impl Policy {
    fn decide_before_mode_post(&self, request: &PermissionRequest<'_>) -> Decision {
        let tool = request.tool_name;
        let ctx = request.ctx;
        if let Some(e) = self.find(RuleList::Deny, tool) {
            return Decision::deny(permission_denied(tool), e.reason());
        }
        // Any deny beats any ask: content denies are checked before a whole-tool ask. A Bash
        // line is analysed once; a deny from it returns here, anything else is used below.
        let line = match request.subject {
            PermissionSubject::ShellCommand(command) => {
                Some((command, ShellLine::new(command, ctx)))
            }
            _ => None,
        };
        let shell = line
            .as_ref()
            .and_then(|(command, l)| self.decide_shell(request, command, l));
        if let Some(d) = shell
            .as_ref()
            .filter(|d| d.verdict == tool_core::Verdict::Deny)
        {
            return d.clone();
        }
        if let Some(d) = self.content_deny(request) {
            return d;
        }
        if let Some(e) = self.find(RuleList::Ask, tool) {
            return Decision::ask(Self::ask_message(request), e.reason());
        }
        if let Some(d) = self.path_identity_ask(request) {
            return d;
        }
        // Content rules: ask (denies were settled above), for what this call touches.
        match request.subject {
            PermissionSubject::ReadPaths(paths) => {
                for p in paths {
                    if let Some(e) = self.path_rule(RuleList::Ask, PathFamily::Read, p, ctx) {
                        return Decision::ask(Self::ask_message(request), e.reason());
                    }
                }
            }
            PermissionSubject::WritePaths(paths) => {
                // The safety check: protected paths ask in every mode, whatever allows them.
                for p in paths {
                    if let Some(protection) = candidates(p, ctx).iter().find_map(|c| protected(c)) {
                        let agent = &ctx.agent_name;
                        let message = match protection {
                            Protection::SensitiveFile => format!(
                                "{agent} requested permissions to edit {} which is a sensitive file.",
                                p.display()
                            ),
                            Protection::AgentConfiguration => {
                                format!(
                                    "{agent} requested permissions to write to {}, but you haven't granted it yet.",
                                    p.display()
                                )
                            }
                        };
                        return Decision::ask(
                            message,
                            DecisionReason::Check {
                                name: protection.name().into(),
                            },
                        );
                    }
                }
                for p in paths {
                    if let Some(e) = self.path_rule(RuleList::Ask, PathFamily::Edit, p, ctx) {
                        return Decision::ask(Self::ask_message(request), e.reason());
                    }
                }
            }
            PermissionSubject::ShellCommand(_) => {
                if let Some(d) = shell {
                    return d;
                }
            }
            PermissionSubject::Url(url) => {
                if let Some(e) = self.domain_rule(RuleList::Ask, url) {
                    return Decision::ask(Self::ask_message(request), e.reason());
                }
            }
            _ => {}
        }
        // The tool's own check: reads inside the working directories (and of spilled tool
        // results) are allowed; in acceptEdits mode, so are writes inside them.
        match request.subject {
            PermissionSubject::ReadPaths(paths) if request.read_only && !paths.is_empty() => {
                if paths.iter().all(|p| {
                    crate::path_rule::inside_working_dirs(ctx, p)
                        || p.starts_with(&ctx.tool_results_dir)
                }) {
                    return Decision::allow(DecisionReason::ReadInsideWorkingDirectory {
                        path: paths[0].display().to_string(),
                    });
                }
                if let Some(e) = self.find(RuleList::Allow, "Edit") {
                    return Decision::allow(e.reason());
                }
                // Path allow rules: every path covered (edit access implies read access).
                let allowed: Option<Vec<&RuleEntry>> = paths
                    .iter()
                    .map(|p| {
                        self.path_allowed(PathFamily::Read, p, ctx)
                            .or_else(|| self.path_allowed(PathFamily::Edit, p, ctx))
                    })
                    .collect();
                if let Some(e) = allowed.and_then(|a| a.into_iter().next()) {
                    return Decision::allow(e.reason());
                }
            }
            PermissionSubject::WritePaths(paths)
                if ctx.permission_mode == PermissionMode::AcceptEdits
                    && !paths.is_empty()
                    && paths
                        .iter()
                        .all(|p| crate::path_rule::inside_working_dirs(ctx, p)) =>
            {
                return Decision::allow(DecisionReason::Mode {
                    mode: PermissionMode::AcceptEdits,
                });
            }
            PermissionSubject::Url(url) => {
                if let Some(e) = self.domain_rule(RuleList::Allow, url) {
                    return Decision::allow(e.reason());
                }
            }
            PermissionSubject::WritePaths(paths) if !paths.is_empty() => {
                let allowed: Option<Vec<&RuleEntry>> = paths
                    .iter()
                    .map(|p| self.path_allowed(PathFamily::Edit, p, ctx))
                    .collect();
                if let Some(e) = allowed.and_then(|a| a.into_iter().next()) {
                    return Decision::allow(e.reason());
                }
            }
            _ => {}
        }
        if request.requires_user_interaction {
            return Decision::ask(
                Self::ask_message(request),
                DecisionReason::Check {
                    name: "the tool needs the user".into(),
                },
            );
        }
        if ctx.permission_mode == PermissionMode::BypassPermissions
            && self.bypass_disabled.is_none()
        {
            return Decision::allow(DecisionReason::Mode {
                mode: PermissionMode::BypassPermissions,
            });
        }
        if let Some(e) = self.find(RuleList::Allow, tool) {
            return Decision::allow(e.reason());
        }
        let message = match &line {
            Some((_, l)) if l.analysis.parsed => {
                self.shell_ask_message(&l.analysis, &l.touched, ctx)
            }
            Some(_) => "This command requires approval".to_owned(),
            None => Self::ask_message(request),
        };
        Decision::ask(message, DecisionReason::NotGranted)
    }
}
