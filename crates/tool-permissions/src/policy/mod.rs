//! Policies: rules from several layers, merged, and the decision they make for one call.
//!
//! Deny beats ask beats allow across every layer; within a list the first matching rule is
//! the one reported. Whole-tool rules, `Read(...)`/`Edit(...)` path rules (and their aliases
//! `Grep`, `Glob`, `LS`, `Write`, `MultiEdit`, `NotebookEdit`), Bash rules and
//! `WebFetch(domain:...)` rules are evaluated; a content rule for any other tool is refused
//! with [`Error::UnsupportedRule`], so a caller never silently runs with fewer rules than
//! written.
//!
//! This module holds [`Policy`] and the decision (in the order written down on [`Policy`]);
//! `entry` the rule types, `builder` the [`PolicyBuilder`], `claude` its Claude Code settings
//! parser, `index` the rule index lookups go through, `paths` which path rule covers a path,
//! and `shell` the Bash part of a decision. Protected paths and the path-policy seam tools ask
//! are `crate::protected` and `crate::path_policy`.

use std::path::PathBuf;

use tool_core::texts::{permission_denied, permission_not_granted};
use tool_core::{
    Decision, DecisionReason, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionSubject, RuleList,
};

use std::sync::Arc;

use crate::Error;

mod builder;
mod claude;
mod entry;
mod index;
mod paths;
mod shell;

pub use builder::PolicyBuilder;
pub use entry::{IgnoredRule, Layer, RuleEntry};
pub(crate) use entry::{PathFamily, RuleMatcher};
use index::RuleIndex;
use shell::ShellLine;

use crate::protected::Protection;

/// A built policy: the decision for each call, and the path checks tools ask for.
///
/// Build one with [`PolicyBuilder`] (or [`PolicySources`](crate::PolicySources)), then ask it
/// through [`PermissionPolicy::decide`] (or [`decide`](crate::decide), which makes the
/// request from a tool call). A decision is made in this order; the first step that settles it
/// wins, and its [`DecisionReason`] names the rule (list, file and line) or the check:
///
/// 1. **Whole-tool deny.** A deny rule naming the tool (`Bash`, `WebFetch`), or a deny rule
///    whose content this engine widens to the whole tool (MCP tools, `WebSearch(...)`):
///    deny. `Agent(type)` and `Skill(name)` deny the calls of that subagent type or skill
///    (and every call that names none).
/// 2. **Bash denies.** A Bash line is analysed once, into the commands it runs (its units)
///    and the paths they read and write; its deny rules, matched against the line and every
///    unit, and the Read/Edit deny rules, matched against every path a unit touches: deny.
///    (The rest of the Bash checks run here too, in the order listed on step 6, but only a
///    deny is taken now, so any deny beats any ask.)
/// 3. **Content denies.** A Read deny rule covering a path the call reads; an Edit or Read
///    deny rule covering a path it writes; a `WebFetch(domain:...)` deny rule covering the
///    URL's host: deny. Paths are matched under every spelling (canonical, through symlinks,
///    case-folded on Windows volumes, 8.3 short names expanded) and by file identity (hard
///    links, symlink targets in a denied tree).
/// 4. **Whole-tool ask.** An ask rule naming the tool: ask.
/// 5. **Paths no rule can vouch for.** A UNC or device path, a path with an 8.3 short name,
///    or a file with several links whose identity the deny rules' walk could not settle: ask,
///    in every mode.
/// 6. **Content asks and the tool's safety checks.**
///    - reads: a Read ask rule covering a path: ask;
///    - writes: a protected path ([`protected`](crate::protected): `.git/`, `.claude/`,
///      shell start-up files...) asks whatever allows it, then an Edit ask rule covering a
///      path: ask;
///    - Bash, the rest of the line's checks in order: (a) a Bash ask rule matching the line or
///      a unit: ask; (b) a recursive search (`rg`, `grep -r`, `find`...) whose root holds a
///      denied tree: ask; (c) a line that does not parse: ask; (d) a line over the analysis
///      budget or that cannot be analysed fully (unknown words, functions, raw CR/NUL): ask;
///      (e) a removal of the root, home or project directory: ask; (f) a write to a protected
///      path: ask, and a write outside the working directories that no Edit allow rule covers:
///      ask (not in bypass mode); (g) every read inside the working directories or allowed,
///      every path argument inside them or allowed, and every unit allowed by a Bash allow
///      rule or known read-only: allow. Otherwise the line goes on (step 7 has nothing for
///      Bash) to step 8;
///    - URLs: a `WebFetch(domain:...)` ask rule covering the host: ask.
/// 7. **Allows from the call's content.**
///    - read-only reads: every path inside the working directories (or the spilled tool
///      results): allow; else a whole-tool `Edit` allow rule: allow; else every path covered
///      by a Read or Edit allow rule: allow;
///    - writes in acceptEdits mode, every path inside the working directories: allow;
///    - URLs: a `WebFetch(domain:...)` allow rule covering the host: allow;
///    - other writes: every path covered by an Edit allow rule: allow.
/// 8. **A tool that needs the user** (it asks questions itself): ask.
/// 9. **Bypass mode** (`bypassPermissions`, unless the managed layer disabled it): allow.
/// 10. **Whole-tool allow.** An allow rule naming the tool: allow.
/// 11. **Not granted:** ask, with the text Claude Code shows (for Bash, which part of the line
///     needs approval).
///
/// Then the mode has the last word on an ask: in plan mode an ask about a write becomes a
/// deny; in dontAsk mode every ask becomes a deny.
///
/// Allow rules that do not apply (an untrusted project's, a non-managed layer's under
/// `allow_managed_rules_only`, content this engine cannot match) are left out when the policy
/// is built and listed by [`ignored_rules`](Self::ignored_rules).
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
    pub(crate) sandbox: crate::sandbox::settings::SandboxSettings,
    /// What the sandbox's plans read of the file system, by directory.
    pub(crate) walk_cache: Arc<crate::sandbox::WalkCache>,
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
        self.find_for(list, tool, &serde_json::Value::Null)
    }

    /// [`find`](Self::find) for one call's `input`: a deny or ask rule whose content this
    /// engine reads only from one field (`Agent(Explore)` from `subagent_type`,
    /// `Skill(name)` from `skill`) covers the calls whose field matches, and every call
    /// without that field (fail closed).
    fn find_for(
        &self,
        list: RuleList,
        tool: &str,
        input: &serde_json::Value,
    ) -> Option<&RuleEntry> {
        self.index
            .whole
            .iter()
            .map(|&i| &self.entries[i])
            .find(|e| {
                e.list == list
                    && if list == RuleList::Allow {
                        e.rule.names_tool(tool)
                    } else {
                        e.rule.names_tool_by_pattern(tool) && opaque_content_covers(&e.rule, input)
                    }
            })
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
        const READ: &[PathFamily] = &[PathFamily::Read];
        const WRITE: &[PathFamily] = &[PathFamily::Edit, PathFamily::Read];
        let touched: Vec<(&PathBuf, &[PathFamily])> = match request.subject {
            PermissionSubject::ReadPaths(p) => p.iter().map(|p| (p, READ)).collect(),
            PermissionSubject::WritePaths(p) => p.iter().map(|p| (p, WRITE)).collect(),
            PermissionSubject::ToolPaths { read, write } => read
                .iter()
                .map(|p| (p, READ))
                .chain(write.iter().map(|p| (p, WRITE)))
                .collect(),
            _ => return None,
        };
        let why = touched.into_iter().find_map(|(p, families)| {
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
            PermissionSubject::ToolPaths { read, write } => {
                let (read, write) = (
                    PermissionSubject::ReadPaths(read.clone()),
                    PermissionSubject::WritePaths(write.clone()),
                );
                [write, read].iter().find_map(|subject| {
                    self.content_deny(&PermissionRequest {
                        subject,
                        ..*request
                    })
                })
            }
            _ => None,
        }
    }

    /// The first `list` domain rule covering `url`'s host. A URL whose host cannot be read
    /// matches no rule (so it is never allowed by one).
    pub(crate) fn domain_rule(&self, list: RuleList, url: &str) -> Option<&RuleEntry> {
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
                    "{agent} requested permissions to read from {}, but you haven't granted it yet.{}",
                    p[0].display(),
                    escape_sentence(request.ctx, &p[0])
                )
            }
            PermissionSubject::WritePaths(p) if !p.is_empty() => {
                format!(
                    "{agent} requested permissions to write to {}, but you haven't granted it yet.{}",
                    p[0].display(),
                    escape_sentence(request.ctx, &p[0])
                )
            }
            _ => permission_not_granted(agent, request.tool_name),
        }
    }
}

/// Where `path` really leads when it is written inside the working directories but a symbolic
/// link takes it outside them.
fn symlink_escape(
    ctx: &tool_core::ToolContext,
    path: &std::path::Path,
) -> Option<std::path::PathBuf> {
    let literal = tool_core::normalize(path);
    if !ctx.working_dirs.iter().any(|d| literal.starts_with(d)) {
        return None;
    }
    let real = tool_core::resolve_target(&literal);
    if real == literal {
        return None;
    }
    let inside = ctx.working_dirs.iter().any(|d| {
        real.starts_with(d) || std::fs::canonicalize(d).is_ok_and(|c| real.starts_with(c))
    });
    (!inside).then_some(real)
}

/// Claude Code's sentence for a path a link takes outside the working directories (with a
/// leading space), or nothing.
fn escape_sentence(ctx: &tool_core::ToolContext, path: &std::path::Path) -> String {
    symlink_escape(ctx, path).map_or_else(String::new, |target| {
        format!(
            " {} resolves through a symlink to {}, which is outside the allowed working directories.",
            path.display(),
            target.display()
        )
    })
}

/// Every place a path passes through when links are involved: its name, each hop of its
/// last component's link chain, and where it finally leads. `None` when no link is involved
/// (the path leads where it says).
fn link_points(path: &std::path::Path) -> Option<Vec<std::path::PathBuf>> {
    let literal = tool_core::normalize(path);
    let target = tool_core::resolve_target(&literal);
    let mut points = vec![literal.clone()];
    let mut at = literal.clone();
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&at) else {
            break;
        };
        let parent = at
            .parent()
            .map(tool_core::resolve_target)
            .unwrap_or_default();
        at = tool_core::normalize(&parent.join(next));
        points.push(at.clone());
    }
    if target == literal && points.len() == 1 {
        return None;
    }
    points.push(target);
    Some(points)
}

impl PermissionPolicy for Policy {
    /// The decision for one call, in the order written down on [`Policy`]: steps 1 to 11, then
    /// the mode's last word on an ask.
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        // A path no system opens is refused outright: it names nothing, and walking it
        // through the rules costs time for nothing.
        let all_paths: &[PathBuf] = match request.subject {
            PermissionSubject::ReadPaths(paths) | PermissionSubject::WritePaths(paths) => paths,
            _ => &[],
        };
        let tool_paths = match request.subject {
            PermissionSubject::ToolPaths { read, write } => read.iter().chain(write.iter()),
            _ => [].iter().chain([].iter()),
        };
        if let Some(p) = all_paths
            .iter()
            .chain(tool_paths)
            .find(|p| p.as_os_str().len() > tool_core::MAX_PATH_BYTES)
        {
            let shown: String = p.to_string_lossy().chars().take(80).collect();
            return Decision::deny(
                format!(
                    "Permission to use {} has been denied: the path {shown}… is longer than {} bytes, which no file system opens.",
                    request.tool_name,
                    tool_core::MAX_PATH_BYTES
                ),
                DecisionReason::Check {
                    name: "a path longer than the system allows".into(),
                },
            );
        }
        let mut decision = self.unsandboxed_run(request, self.decide_before_mode_post(request));
        // An MCP tool's name that splits into a server and a tool more than one way
        // (`mcp__github___delete_repo`: `github` + `_delete_repo`, or `github_` +
        // `delete_repo`) is not taken for the tool an allow rule names while a deny or ask
        // rule names an MCP tool: which one it is cannot be told (CONTRACT item 13).
        if decision.verdict == tool_core::Verdict::Allow
            && ambiguous_mcp_name(request.tool_name)
            && self
                .entries
                .iter()
                .any(|e| e.list != RuleList::Allow && e.rule.tool.starts_with("mcp__"))
        {
            decision = Decision::ask(
                format!(
                    "{} requested permissions to use {}, but you haven't granted it yet.",
                    request.ctx.agent_name, request.tool_name
                ),
                DecisionReason::Check {
                    name: "an MCP tool name that splits into server and tool more than one way"
                        .into(),
                },
            );
        }
        // Plan mode refuses file writes, allowed by a rule or not; an ask rule still asks
        // (recorded: explore seeds 6 and 11).
        if matches!(
            decision.verdict,
            tool_core::Verdict::Ask | tool_core::Verdict::Allow
        ) && !matches!(
            &decision.reason,
            DecisionReason::Rule {
                list: RuleList::Ask,
                ..
            }
        ) && request.ctx.permission_mode == PermissionMode::Plan
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

    fn session_mode(&self) -> Option<PermissionMode> {
        // A bypass default that a managed policy disabled starts in default mode.
        self.default_mode
            .and_then(|_| self.effective_mode(None).ok())
    }

    fn session_directories(&self) -> Vec<PathBuf> {
        self.additional_directories.clone()
    }

    fn removes_tool(&self, tool_name: &str) -> bool {
        // Only a whole-tool deny hides the tool; a widened content deny refuses its calls.
        self.index.whole.iter().map(|&i| &self.entries[i]).any(|e| {
            e.list == RuleList::Deny
                && matches!(e.matcher, RuleMatcher::WholeTool)
                && e.rule.names_tool_by_pattern(tool_name)
        })
    }
}

impl Policy {
    /// A Bash call that asks to run outside the sandbox (`dangerouslyDisableSandbox`), where the
    /// sandbox is on and the policy lets calls ask: allowed only by a rule naming the command
    /// or by bypass mode, otherwise the user is asked (Claude Code's "Run outside of the
    /// sandbox"; recorded: sb_disable_sandbox_input*). A deny stays a deny.
    fn unsandboxed_run(&self, request: &PermissionRequest<'_>, decision: Decision) -> Decision {
        if request.tool_name != "Bash"
            || request.input.get("dangerouslyDisableSandbox")
                != Some(&serde_json::Value::Bool(true))
            || decision.verdict == tool_core::Verdict::Deny
            || !self.sandbox_lets_calls_out()
        {
            return decision;
        }
        let by_rule = matches!(
            &decision.reason,
            DecisionReason::Rule { list: RuleList::Allow, rule, .. } if rule.contains('(')
        );
        let by_mode = matches!(
            decision.reason,
            DecisionReason::Mode {
                mode: PermissionMode::BypassPermissions
            }
        );
        if decision.verdict == tool_core::Verdict::Allow && (by_rule || by_mode) {
            return decision;
        }
        Decision::ask(
            "Run outside of the sandbox",
            DecisionReason::Check {
                name: "a command that asks to run outside the sandbox".into(),
            },
        )
    }

    /// Steps 1 to 11 of the decision (see [`Policy`]), before the mode's last word on an ask.
    fn decide_before_mode_post(&self, request: &PermissionRequest<'_>) -> Decision {
        let tool = request.tool_name;
        let ctx = request.ctx;
        // The steps are numbered as in the doc of `Policy`.
        // 1. Whole-tool deny.
        if let Some(e) = self.find_for(RuleList::Deny, tool, request.input) {
            return Decision::deny(permission_denied(tool), e.reason());
        }
        // 2. Bash denies. Any deny beats any ask: content denies are checked before a whole-tool ask. A Bash
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
        // 3. Content denies.
        if let Some(d) = self.content_deny(request) {
            return d;
        }
        // 3b. A write whose file is itself a symbolic link is refused, after the denies and
        // before any ask, in every mode (Claude Code 2.1.332 never writes through a file link;
        // recorded: sl_write_through_links, sl_links_default_mode, sl_links_bypass).
        if let PermissionSubject::WritePaths(paths) = request.subject {
            for p in paths {
                if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Decision::deny(
                        format!(
                            "Refusing to write {}: it is a symbolic link. Write to the link's target path instead: {}.",
                            p.display(),
                            tool_core::resolve_target(p).display()
                        ),
                        DecisionReason::Check {
                            name: "a write through a symbolic link".into(),
                        },
                    );
                }
            }
        }
        // 4. Whole-tool ask. For a tool that reads, its text names the tool, not the path
        // (recorded: an ask rule `Read` gives "requested permissions to use Read"; an ask rule
        // `Edit` keeps the path).
        if let Some(e) = self.find_for(RuleList::Ask, tool, request.input) {
            let message = match request.subject {
                PermissionSubject::ReadPaths(_) => {
                    permission_not_granted(&request.ctx.agent_name, request.tool_name)
                }
                // A Bash line the default mode would ask about gets that mode's text (recorded:
                // explore seed 11); one it would run, the generic text. Where the user's
                // settings turn the sandbox on, Claude Code's sandbox flow words it generically
                // (recorded: sb_auto_allow_bare_ask).
                PermissionSubject::ShellCommand(line)
                    if !crate::sandbox::settings::highest(&self.sandbox.enabled)
                        .is_some_and(|s| s.value) =>
                {
                    let l = shell::ShellLine::new(line, ctx);
                    let message = self.shell_ask_message(&l.analysis, &l.touched, ctx);
                    if message == "This command requires approval" && tool_shell::is_read_only(line)
                    {
                        Self::ask_message(request)
                    } else {
                        message
                    }
                }
                _ => Self::ask_message(request),
            };
            return Decision::ask(message, e.reason());
        }
        // 5. Paths no rule can vouch for.
        if let Some(d) = self.path_identity_ask(request) {
            return d;
        }
        // 6. Content rules: ask (denies were settled above), for what this call touches, and
        // the tool's safety checks (protected paths; for Bash, the rest of `decide_shell`).
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
                    if let Some(protection) = crate::protected::protected_at(p, ctx) {
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
                // A path a directory link takes outside the working directories asks whatever
                // allows it, except in bypass mode (recorded: sl_link_parent_dir,
                // sl_links_default_allow_rules, sl_links_bypass).
                if ctx.permission_mode != PermissionMode::BypassPermissions
                    && paths.iter().any(|p| symlink_escape(ctx, p).is_some())
                {
                    return Decision::ask(
                        Self::ask_message(request),
                        DecisionReason::Check {
                            name: "a symlink inside the working directories leads outside them"
                                .into(),
                        },
                    );
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
            PermissionSubject::ToolPaths { read, write } => {
                let protected = write
                    .iter()
                    .find_map(|p| crate::protected::protected_at(p, ctx));
                if let Some(protection) = protected {
                    return Decision::ask(
                        Self::ask_message(request),
                        DecisionReason::Check {
                            name: protection.name().into(),
                        },
                    );
                }
                let rule = write
                    .iter()
                    .find_map(|p| self.path_rule(RuleList::Ask, PathFamily::Edit, p, ctx))
                    .or_else(|| {
                        read.iter()
                            .find_map(|p| self.path_rule(RuleList::Ask, PathFamily::Read, p, ctx))
                    });
                if let Some(e) = rule {
                    return Decision::ask(Self::ask_message(request), e.reason());
                }
                // A directory given to a tool whose results cannot be filtered (a server's
                // search or listing) reaches what is denied below it.
                let below = read.iter().find_map(|p| {
                    let e = self.denied_tree_below(PathFamily::Read, p, ctx)?;
                    Some((p, e))
                });
                if let Some((p, e)) = below {
                    return Decision::ask(
                        Self::ask_message(request),
                        DecisionReason::Check {
                            name: format!(
                                "the tool is given {}, which holds files denied by {}",
                                p.display(),
                                e.source()
                            ),
                        },
                    );
                }
            }
            _ => {}
        }
        // 7. Allows from the call's content. The tool's own check: reads inside the working directories (and of spilled tool
        // results) are allowed; in acceptEdits mode, so are writes inside them.
        match request.subject {
            PermissionSubject::ReadPaths(paths) if request.read_only && !paths.is_empty() => {
                // A path inside the working directories that a symlink takes outside them (or
                // through a hop outside them) asks, whatever the whole-tool allows say, except
                // in bypass mode (as Claude Code 2.1.332 does, recorded: sl_read_*). Allow
                // rules covering both the name and where it leads do allow it; the working
                // directories do not count for the name.
                if ctx.permission_mode != PermissionMode::BypassPermissions {
                    for p in paths {
                        let Some(points) = link_points(p) else {
                            continue;
                        };
                        let all_inside = points
                            .iter()
                            .all(|q| crate::path_rule::inside_working_dirs(ctx, q));
                        let all_allowed = points.iter().all(|q| {
                            self.lexical_path_rule(RuleList::Allow, PathFamily::Read, q, ctx)
                                .is_some()
                        });
                        if !all_inside && !all_allowed {
                            return Decision::ask(
                                Self::ask_message(request),
                                DecisionReason::Check {
                                    name: "a symlink leads between the working directories and places no rule allows"
                                        .into(),
                                },
                            );
                        }
                    }
                }
                if paths.iter().all(|p| {
                    crate::path_rule::inside_working_dirs(ctx, p)
                        || p.starts_with(&ctx.tool_results_dir)
                }) {
                    return Decision::allow(DecisionReason::ReadInsideWorkingDirectory {
                        path: paths[0].display().to_string(),
                    });
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
        // 8. A tool that needs the user.
        if request.requires_user_interaction {
            return Decision::ask(
                Self::ask_message(request),
                DecisionReason::Check {
                    name: "the tool needs the user".into(),
                },
            );
        }
        // 9. Bypass mode.
        if ctx.permission_mode == PermissionMode::BypassPermissions
            && self.bypass_disabled.is_none()
        {
            return Decision::allow(DecisionReason::Mode {
                mode: PermissionMode::BypassPermissions,
            });
        }
        // 10. Whole-tool allow.
        if let Some(e) = self.find(RuleList::Allow, tool) {
            return Decision::allow(e.reason());
        }
        // 11. Not granted.
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

/// Whether a deny or ask rule of a tool whose content is not otherwise matched covers a call
/// with `input`: `Agent(type)` (and its old name `Task`) names the subagent type,
/// `Skill(name)` the skill, exactly or, ending in `:*` or ` *`, by prefix. Any other content,
/// or a call without the field, is covered: a rule this engine cannot read stops every call.
fn opaque_content_covers(rule: &crate::PermissionRule, input: &serde_json::Value) -> bool {
    let Some(content) = rule.content.as_deref() else {
        return true;
    };
    let field = match rule.tool.as_str() {
        "Agent" => "subagent_type",
        "Skill" => "skill",
        _ => return true,
    };
    let Some(value) = input.get(field).and_then(serde_json::Value::as_str) else {
        return true;
    };
    let value = value.trim_start_matches('/');
    match content
        .strip_suffix(":*")
        .or_else(|| content.strip_suffix(" *"))
    {
        Some(prefix) => value.starts_with(prefix.trim_start_matches('/')),
        None => value == content.trim_start_matches('/'),
    }
}

/// Whether an MCP tool's name (`mcp__SERVER__TOOL`) splits at `__` more than one way.
fn ambiguous_mcp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("mcp__") else {
        return false;
    };
    let b = rest.as_bytes();
    (0..b.len().saturating_sub(1))
        .filter(|&i| b[i] == b'_' && b[i + 1] == b'_')
        .count()
        > 1
}
