//! Policies: rules from several layers, merged, and the decision they make for one call.
//!
//! Deny beats ask beats allow across every layer; within a list the first matching rule is
//! the one reported. Whole-tool rules, `Read(...)`/`Edit(...)` path rules (and their aliases
//! `Grep`, `Glob`, `LS`, `Write`, `MultiEdit`, `NotebookEdit`), Bash rules and
//! `WebFetch(domain:...)` rules are evaluated; a content rule for any other tool is refused
//! with [`Error::UnsupportedRule`], so a caller never silently runs with fewer rules than
//! written.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tool_core::texts::{permission_denied, permission_not_granted};
use tool_core::{
    Decision, DecisionReason, PathPolicy, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionSubject, RuleList,
};

use std::sync::Arc;

use crate::Error;
use crate::path_rule::{PathPattern, candidates};
use crate::rule::PermissionRule;
use crate::shell_rule::ShellPattern;

/// Where a rule came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Managed by an administrator.
    Managed,
    /// Given on the command line.
    CommandLine,
    /// The project's local, uncommitted settings.
    Local,
    /// The project's shared settings.
    Project,
    /// The user's own settings.
    User,
}

impl Layer {
    /// True for layers whose allow rules need the project to be trusted.
    pub fn needs_trust(self) -> bool {
        matches!(self, Layer::Local | Layer::Project)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Managed => "managed",
            Layer::CommandLine => "command line",
            Layer::Local => "local",
            Layer::Project => "project",
            Layer::User => "user",
        })
    }
}

/// What a rule's content is matched as.
#[derive(Debug, Clone)]
pub enum RuleMatcher {
    /// A whole-tool rule.
    WholeTool,
    /// A path rule of the Read or Edit family.
    Path {
        /// Which family it governs.
        family: PathFamily,
        /// The compiled pattern.
        pattern: Arc<PathPattern>,
    },
    /// A Bash command rule.
    Shell(Arc<ShellPattern>),
    /// A `WebFetch(domain:...)` rule.
    Domain(crate::domain::DomainPattern),
    /// A content rule of a Claude Code tool whose content this engine does not match
    /// (`Agent(Explore)`, `Skill(name)`, `WebSearch(...)`, MCP tools): as a deny or ask rule it
    /// covers every call of the tool (fail closed); as an allow rule it never applies.
    AnyContent,
}

/// Claude Code tools whose rules take a content this engine does not match.
const OPAQUE_CONTENT_TOOLS: &[&str] = &["Agent", "Skill", "WebSearch", "SlashCommand"];

/// Which tools a path rule governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathFamily {
    /// Reading tools: Read, Grep, Glob.
    Read,
    /// Writing tools: Edit, Write, MultiEdit, NotebookEdit.
    Edit,
}

impl PathFamily {
    /// The family a rule's tool name belongs to, if any (aliases included).
    pub fn of(tool: &str) -> Option<Self> {
        match tool {
            "Read" | "Grep" | "Glob" | "LS" => Some(PathFamily::Read),
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Some(PathFamily::Edit),
            _ => None,
        }
    }
}

/// A rule with its list and origin.
#[derive(Debug, Clone)]
pub struct RuleEntry {
    /// The parsed rule.
    pub rule: PermissionRule,
    /// As written.
    pub text: String,
    /// Which list.
    pub list: RuleList,
    /// Which layer.
    pub layer: Layer,
    /// Which file, when it came from one.
    pub file: Option<PathBuf>,
    /// How its content is matched.
    pub matcher: RuleMatcher,
    /// The 1-based line of the file it was written on, when known.
    pub line: Option<usize>,
    /// The 1-based column (in characters) where it starts on that line, when known.
    pub column: Option<usize>,
}

impl RuleEntry {
    /// Where the rule came from: layer, file and line.
    pub fn source(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{} settings ({}:{l})", self.layer, f.display()),
            (Some(f), None) => format!("{} settings ({})", self.layer, f.display()),
            _ => format!("{} settings", self.layer),
        }
    }

    fn reason(&self) -> DecisionReason {
        DecisionReason::Rule {
            rule: self.text.clone(),
            list: self.list,
            source: self.source(),
        }
    }
}

/// An allow rule that was loaded but does not apply, and why.
#[derive(Debug, Clone)]
pub struct IgnoredRule {
    /// The rule.
    pub entry: RuleEntry,
    /// Why it does not apply.
    pub why: String,
}

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
                if !matches!(rule.tool.as_str(), "Read" | "Edit") {
                    let governs = match family {
                        PathFamily::Read => "Read",
                        PathFamily::Edit => "Edit",
                    };
                    self.warnings.push(crate::lint::LintWarning {
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
                let pattern = PathPattern::parse(content, user_dir).map_err(invalid)?;
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
                    _ => format!(
                        "toolgate does not match the content of {} rules: this rule covers every {} call",
                        rule.tool, rule.tool
                    ),
                };
                self.warnings.push(crate::lint::LintWarning {
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

    /// Load the `permissions` of a Claude Code settings file (`.claude/settings.json` and
    /// friends). A missing file adds nothing. Relative additional directories are taken
    /// relative to `base`.
    pub fn claude_settings_file(
        &mut self,
        path: &Path,
        layer: Layer,
        base: &Path,
    ) -> Result<&mut Self, Error> {
        let Some(text) = crate::read_optional(path)? else {
            return Ok(self);
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::Json {
            file: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        self.files.push((layer, path.to_path_buf()));
        self.claude_settings_inner(&value, layer, Some(path), base, Some(&text))
    }

    /// Load the `permissions` object of Claude Code settings given as a value.
    pub fn claude_settings(
        &mut self,
        settings: &Value,
        layer: Layer,
        file: Option<&Path>,
        base: &Path,
    ) -> Result<&mut Self, Error> {
        self.claude_settings_inner(settings, layer, file, base, None)
    }

    fn claude_settings_inner(
        &mut self,
        settings: &Value,
        layer: Layer,
        file: Option<&Path>,
        base: &Path,
        text: Option<&str>,
    ) -> Result<&mut Self, Error> {
        let shape = |what: &str| Error::Shape {
            file: file.map(Path::to_path_buf),
            message: what.to_owned(),
        };
        let where_set = |key: &str| match file {
            Some(f) => format!("{key} in {}", f.display()),
            None => key.to_owned(),
        };
        if let Some(v) = settings.get("allowManagedPermissionRulesOnly") {
            let on = v
                .as_bool()
                .ok_or_else(|| shape("`allowManagedPermissionRulesOnly` must be true or false"))?;
            if layer == Layer::Managed {
                if on {
                    self.allow_managed_rules_only(where_set("allowManagedPermissionRulesOnly"));
                }
            } else {
                self.warn_setting(file, "allowManagedPermissionRulesOnly");
            }
        }
        let Some(perms) = settings.get("permissions") else {
            return Ok(self);
        };
        let perms = perms
            .as_object()
            .ok_or_else(|| shape("`permissions` must be an object"))?;
        for (key, list) in [
            ("allow", RuleList::Allow),
            ("ask", RuleList::Ask),
            ("deny", RuleList::Deny),
        ] {
            let Some(v) = perms.get(key) else { continue };
            let items = v
                .as_array()
                .ok_or_else(|| shape(&format!("`permissions.{key}` must be a list of strings")))?;
            // Rules are found in the text in order, after the key that lists them.
            let mut from = text
                .and_then(|t| t.find(&format!("\"{key}\"")))
                .unwrap_or(0);
            for item in items {
                let rule = item.as_str().ok_or_else(|| {
                    shape(&format!("`permissions.{key}` must be a list of strings"))
                })?;
                let at = text.zip(file).and_then(|(t, f)| {
                    let quoted = serde_json::to_string(rule).ok()?;
                    let found = from + t.get(from..)?.find(&quoted)?;
                    from = found + quoted.len();
                    let (line, column) = crate::file::line_column(t, found + 1);
                    Some((f, line, column))
                });
                match at {
                    Some((f, line, column)) => self.rule_at(list, rule, layer, f, line, column)?,
                    None => self.rule(list, rule, layer, file)?,
                };
            }
        }
        if let Some(m) = perms.get("defaultMode") {
            let m = m
                .as_str()
                .ok_or_else(|| shape("`permissions.defaultMode` must be a string"))?;
            let mode: PermissionMode = m
                .parse()
                .map_err(|e: tool_core::Error| shape(&e.to_string()))?;
            self.default_mode(mode, layer);
        }
        if let Some(v) = perms.get("disableBypassPermissionsMode") {
            let v = v.as_str().ok_or_else(|| {
                shape("`permissions.disableBypassPermissionsMode` must be \"disable\"")
            })?;
            if v != "disable" {
                return Err(shape(
                    "`permissions.disableBypassPermissionsMode` must be \"disable\"",
                ));
            }
            if layer == Layer::Managed {
                self.disable_bypass_mode(where_set("permissions.disableBypassPermissionsMode"));
            } else {
                self.warn_setting(file, "permissions.disableBypassPermissionsMode");
            }
        }
        if let Some(dirs) = perms.get("additionalDirectories") {
            let dirs = dirs.as_array().ok_or_else(|| {
                shape("`permissions.additionalDirectories` must be a list of strings")
            })?;
            for d in dirs {
                let d = d.as_str().ok_or_else(|| {
                    shape("`permissions.additionalDirectories` must be a list of strings")
                })?;
                self.additional_directory(tool_core::normalize(&base.join(d)));
            }
        }
        Ok(self)
    }

    /// A managed-only setting found in another layer: it has no effect there.
    pub(crate) fn warn_setting(&mut self, file: Option<&Path>, key: &str) {
        self.warnings.push(crate::lint::LintWarning {
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
            } else if let Some(set) = self
                .managed_only
                .as_ref()
                .filter(|_| e.layer != Layer::Managed)
            {
                Some(format!(
                    "only managed allow rules apply (allow_managed_rules_only, set by {set})"
                ))
            } else if e.layer.needs_trust() && !self.trusted {
                Some("the project's policy is not trusted (run `toolgate trust`)".to_owned())
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
            warnings: self.warnings.clone(),
            files: self.files.clone(),
            identities: Arc::default(),
        }
    }
}

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

/// Bash rules of one list: entry indices by the first word they match, and those with none.
type ShellBucket = (
    RuleList,
    std::collections::HashMap<String, Vec<usize>>,
    Vec<usize>,
);
/// Path rules share a matcher when they share list, family and anchor.
type PathGroupKey = (RuleList, PathFamily, crate::path_rule::Anchor);

/// Content rules compiled for lookup: path rules as one matcher per (list, family, anchor),
/// Bash rules bucketed by the first word of the command they match, so a decision's cost grows
/// with the groups and buckets it touches, not with the number of rules.
#[derive(Debug, Default)]
struct RuleIndex {
    paths: Vec<(RuleList, PathFamily, crate::path_rule::PathGroup)>,
    /// The deny path groups again, comparing without case (for Windows volumes).
    folded_denies: Vec<(PathFamily, crate::path_rule::PathGroup)>,
    shell: Vec<ShellBucket>,
    /// Entries that cover whole tools (whole-tool rules, widened content rules), in order.
    whole: Vec<usize>,
    /// `WebFetch(domain:...)` entries, in order.
    domains: Vec<usize>,
}

impl RuleIndex {
    fn build(entries: &[RuleEntry]) -> Self {
        let mut groups: Vec<(PathGroupKey, Vec<(usize, &PathPattern)>)> = Vec::new();
        let mut shell: Vec<ShellBucket> = Vec::new();
        let (mut whole, mut domains) = (Vec::new(), Vec::new());
        for (i, e) in entries.iter().enumerate() {
            match &e.matcher {
                RuleMatcher::Path { family, pattern } => {
                    let key = (e.list, *family, pattern.anchor.clone());
                    match groups.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, items)) => items.push((i, pattern)),
                        None => groups.push((key, vec![(i, pattern)])),
                    }
                }
                RuleMatcher::Shell(p) => {
                    let slot = match shell.iter().position(|(l, _, _)| *l == e.list) {
                        Some(s) => s,
                        None => {
                            shell.push((e.list, Default::default(), Vec::new()));
                            shell.len() - 1
                        }
                    };
                    let (_, by_word, any) = &mut shell[slot];
                    match p.first_word() {
                        Some(w) => by_word.entry(w.to_owned()).or_default().push(i),
                        None => any.push(i),
                    }
                }
                RuleMatcher::WholeTool | RuleMatcher::AnyContent => whole.push(i),
                RuleMatcher::Domain(_) => domains.push(i),
            }
        }
        let folded_denies = groups
            .iter()
            .filter(|((list, _, _), _)| *list == RuleList::Deny)
            .map(|((_, family, anchor), items)| {
                (
                    *family,
                    crate::path_rule::PathGroup::build(anchor.clone(), items, true),
                )
            })
            .collect();
        let paths = groups
            .into_iter()
            .map(|((list, family, anchor), items)| {
                (
                    list,
                    family,
                    crate::path_rule::PathGroup::build(anchor, &items, false),
                )
            })
            .collect();
        Self {
            paths,
            folded_denies,
            shell,
            whole,
            domains,
        }
    }

    /// Entry indices of `list` Bash rules that may match a form starting with `word`.
    fn shell_candidates<'a>(
        &'a self,
        list: RuleList,
        word: &str,
    ) -> impl Iterator<Item = usize> + 'a {
        let word = word.to_owned();
        self.shell
            .iter()
            .filter(move |(l, _, _)| *l == list)
            .flat_map(move |(_, by_word, any)| {
                by_word
                    .get(&word)
                    .into_iter()
                    .flatten()
                    .chain(any.iter())
                    .copied()
            })
    }
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

    /// The first `list` path rule of `family` covering `path` (any of its spellings).
    fn path_rule(
        &self,
        list: RuleList,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        // Resolving a path's spellings costs system calls: skip it when no rule could match.
        if !self.has_path_rules(list, family) {
            return None;
        }
        let spellings = candidates(path, ctx);
        let found = spellings
            .iter()
            .find_map(|p| self.path_group_match(list, family, p, ctx));
        let found = match (found, list) {
            (None, RuleList::Deny) => self
                .folded_deny(family, path, &spellings, ctx)
                .or_else(|| self.short_name_deny(family, &spellings, ctx))
                .or_else(|| self.identity_deny(family, path, &spellings, ctx)),
            (found, _) => found,
        };
        found.map(|i| &self.entries[i])
    }

    /// A deny rule of `family` covering a long name an 8.3 short name in `path` may stand for
    /// (`SECRET~1` for `Secrets`): each short component is replaced by every literal name of a
    /// deny rule it could abbreviate, and the result matched as any path on such a volume.
    fn short_name_deny(
        &self,
        family: PathFamily,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let spellings: Vec<&PathBuf> = spellings
            .iter()
            .filter(|p| crate::path_rule::has_short_name(p))
            .collect();
        if spellings.is_empty() {
            return None;
        }
        let names = self.deny_literals(family, |line| line.split('/'));
        for p in spellings {
            let parts: Vec<String> = p
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            for (i, part) in parts.iter().enumerate() {
                for long in names
                    .iter()
                    .filter(|n| crate::path_rule::short_name_could_be(part, n))
                {
                    let mut alt = parts.clone();
                    alt[i] = long.clone();
                    let alt: PathBuf = alt.iter().collect();
                    let found = self
                        .path_group_match(RuleList::Deny, family, &alt, ctx)
                        .or_else(|| {
                            self.folded_deny(family, &alt, std::slice::from_ref(&alt), ctx)
                        });
                    if found.is_some() {
                        return found;
                    }
                }
            }
        }
        None
    }

    /// A deny rule of `family` covering a spelling of `path` on a Windows volume (a drive or a
    /// UNC path), compared without case.
    fn folded_deny(
        &self,
        family: PathFamily,
        path: &Path,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let windows = crate::path_rule::case_folding_volume(path)
            || spellings
                .iter()
                .any(|s| crate::path_rule::case_folding_volume(s));
        if !windows {
            return None;
        }
        spellings.iter().find_map(|p| {
            let is_dir = std::fs::metadata(p).is_ok_and(|m| m.is_dir());
            self.index
                .folded_denies
                .iter()
                .filter(|(f, _)| *f == family)
                .filter_map(|(_, g)| g.matched(p, is_dir, ctx))
                .min()
        })
    }

    /// A deny rule of `family` covering another name of the file `path` is: see
    /// [`identity`](crate::identity).
    fn identity_deny(
        &self,
        family: PathFamily,
        path: &Path,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        self.identities(family, ctx).denied(path, spellings)
    }

    /// What the walk for the deny rules of `family` found, under `ctx`'s anchors.
    fn identities(
        &self,
        family: PathFamily,
        ctx: &tool_core::ToolContext,
    ) -> Arc<crate::identity::Walked> {
        let key = (
            family,
            ctx.home.clone(),
            ctx.project_root.clone(),
            ctx.cwd.clone(),
        );
        self.identities.get(key, || {
            let bases = self
                .entries
                .iter()
                .filter_map(|e| match &e.matcher {
                    RuleMatcher::Path { family: f, pattern }
                        if e.list == RuleList::Deny && *f == family =>
                    {
                        Some(pattern.base(ctx))
                    }
                    _ => None,
                })
                .collect();
            crate::identity::walk(bases, &|p, is_dir| {
                self.path_group_match_kind(RuleList::Deny, family, p, is_dir, ctx)
            })
        })
    }

    /// Forget what the identity walks found (the denied files' inodes, the targets of denied
    /// symlinks), so the next decision walks again: for a host that knows files under a deny
    /// rule were created or relinked. A reload builds a new policy, which starts empty anyway.
    pub fn refresh_identities(&self) {
        self.identities.clear();
    }

    /// Is `path` a file with more than one link whose identity the deny rules of `family`
    /// cannot settle (their walk stopped at [`MAX_WALK`](crate::MAX_WALK))? Such a file may be
    /// a denied file under another name: it is asked about, never allowed.
    fn identity_unknown(
        &self,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> bool {
        self.has_path_rules(RuleList::Deny, family) && self.identities(family, ctx).unknown(path)
    }

    /// A Read deny rule that could match something at or below `root`: it covers `root`, its
    /// files lie below `root` (its [`base`](crate::PathPattern::base) is inside `root`), or
    /// `root` is inside its base (a bare name such as `.env` matches at any depth under its
    /// anchor), or a symlink it covers points at or below `root`, under any spelling of
    /// `root`. For recursive readers (`rg`, `grep -r`, `find`, `ls -R`, `tree`, `du`) rooted at
    /// `root`: when this is `Some`, the command reads past the rule unless it excludes the tree.
    /// Conservative: a rule whose pattern happens not to match anything under `root` still
    /// counts. Hard links below `root` to a denied file are not looked for (that needs a walk of
    /// `root`); reads of such a file through the tools are denied by its identity.
    pub fn denied_below(&self, root: &Path, ctx: &tool_core::ToolContext) -> Option<&RuleEntry> {
        if !self.has_path_rules(RuleList::Deny, PathFamily::Read) {
            return None;
        }
        if let Some(e) = self.path_rule(RuleList::Deny, PathFamily::Read, root, ctx) {
            return Some(e);
        }
        let spellings = candidates(root, ctx);
        let windows = spellings
            .iter()
            .any(|s| crate::path_rule::case_folding_volume(s));
        let fold = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
        let related = |a: &Path, b: &Path| {
            a.starts_with(b)
                || b.starts_with(a)
                || (windows && (fold(a).starts_with(fold(b)) || fold(b).starts_with(fold(a))))
        };
        let by_rule = self.entries.iter().find(|e| {
            matches!(&e.matcher, RuleMatcher::Path { family: PathFamily::Read, pattern }
                if e.list == RuleList::Deny
                    && spellings.iter().any(|s| related(&pattern.base(ctx), s)))
        });
        by_rule.or_else(|| {
            let w = self.identities(PathFamily::Read, ctx);
            w.targets
                .iter()
                .find(|(t, _)| spellings.iter().any(|s| related(t, s)))
                .map(|(_, i)| &self.entries[*i])
        })
    }

    fn has_path_rules(&self, list: RuleList, family: PathFamily) -> bool {
        self.index
            .paths
            .iter()
            .any(|(l, f, _)| *l == list && *f == family)
    }

    /// The lowest entry index of a `list`/`family` path rule covering this one spelling.
    fn path_group_match(
        &self,
        list: RuleList,
        family: PathFamily,
        p: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let is_dir = std::fs::metadata(p).is_ok_and(|m| m.is_dir());
        self.path_group_match_kind(list, family, p, is_dir, ctx)
    }

    /// [`path_group_match`](Self::path_group_match) for a spelling known to be a directory or
    /// not.
    fn path_group_match_kind(
        &self,
        list: RuleList,
        family: PathFamily,
        p: &Path,
        is_dir: bool,
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        self.index
            .paths
            .iter()
            .filter(|(l, f, _)| *l == list && *f == family)
            .filter_map(|(_, _, g)| g.matched(p, is_dir, ctx))
            .min()
    }

    /// An allow path rule of `family` covering every spelling of `path`.
    fn path_allowed(
        &self,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        // Allow rules never fold spellings: a short name or a UNC path gets no allow.
        if !self.has_path_rules(RuleList::Allow, family)
            || crate::path_rule::short_name_spelling(path, ctx)
            || tool_core::is_unc(path)
        {
            return None;
        }
        let found: Option<Vec<usize>> = candidates(path, ctx)
            .iter()
            .map(|p| self.path_group_match(RuleList::Allow, family, p, ctx))
            .collect();
        found
            .and_then(|v| v.into_iter().min())
            .map(|i| &self.entries[i])
    }

    /// The first `list` Bash rule matching one of `forms`.
    fn shell_match(&self, list: RuleList, forms: &[String]) -> Option<&RuleEntry> {
        forms
            .iter()
            .filter_map(|form| {
                let word = form.split(' ').next().unwrap_or("");
                self.index
                    .shell_candidates(list, word)
                    .filter(|&i| matches!(&self.entries[i].matcher, RuleMatcher::Shell(p) if p.matches(form)))
                    .min()
            })
            .min()
            .map(|i| &self.entries[i])
    }

    /// An allow Bash rule matching a unit's plain form exactly as written (no global options
    /// skipped, nothing stripped but inert wrappers).
    fn shell_allow(&self, form: &str) -> Option<&RuleEntry> {
        self.shell_match(RuleList::Allow, &[form.to_owned()])
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

    /// The analysis of a Bash line in this call's context.
    fn analyze_shell(command: &str, ctx: &tool_core::ToolContext) -> tool_shell::analyze::Analysis {
        tool_shell::analyze::analyze(
            command,
            &tool_shell::analyze::ShellEnv::new(ctx.cwd.clone(), ctx.home.clone()),
        )
    }

    /// The Bash-specific part of a decision: `Some` when the rules or the safety checks settle
    /// it, `None` to continue with the mode and whole-tool rules.
    ///
    /// The steps, in order: (1) deny rules against the line and every unit it runs (carried
    /// commands and substitutions included); (2) deny rules against every path an effect reads
    /// or writes; (3) ask rules likewise; (4) a line that cannot be analysed completely
    /// (parse errors, budgets, raw CR/NUL, functions) asks; (5) removals of the root, home or
    /// project (or of paths that cannot be known) ask in every mode; (6) writes to protected
    /// paths ask, writes outside the working directories ask unless bypassed; (7) an allow
    /// needs every unit allowed and every read inside the working directories or allowed.
    fn decide_shell(
        &self,
        request: &PermissionRequest<'_>,
        command: &str,
        line: &ShellLine,
    ) -> Option<Decision> {
        let ctx = request.ctx;
        let (analysis, touched) = (&line.analysis, &line.touched);
        let denied = |e: &RuleEntry| {
            Decision::deny(
                format!("Permission to use Bash with command {command} has been denied."),
                e.reason(),
            )
        };
        let forms = Self::shell_forms(command, analysis);
        if let Some(e) = self.shell_match(RuleList::Deny, &forms) {
            return Some(denied(e));
        }
        let find = |family: PathFamily, p: &Path| self.path_rule(RuleList::Deny, family, p, ctx);
        let names = |family: PathFamily| self.denied_names(family);
        if let Some((e, _)) = crate::shell_policy::denied_path(touched, &find, &names) {
            return Some(denied(e));
        }
        if let Some(e) = self.shell_match(RuleList::Ask, &forms) {
            return Some(Decision::ask(Self::ask_message(request), e.reason()));
        }
        // A recursive search whose root holds a denied tree would print what it may not read.
        for root in crate::shell_policy::search_roots(analysis, touched) {
            if let Some(e) = self.denied_below(&root, ctx) {
                return Some(Decision::ask(
                    Self::ask_message(request),
                    DecisionReason::Check {
                        name: format!(
                            "a recursive search of {} reaches files denied by {}",
                            root.display(),
                            e.source()
                        ),
                    },
                ));
            }
        }
        if !analysis.parsed {
            return Some(Decision::ask(
                Self::ask_message(request),
                DecisionReason::Check {
                    name: "a command line that does not parse".into(),
                },
            ));
        }
        if command.len() > MAX_COMMAND_BYTES
            || analysis.units.len() > MAX_UNITS
            || !analysis.problems.is_empty()
        {
            return Some(Decision::ask(
                Self::ask_message(request),
                DecisionReason::Check {
                    name: match analysis.problems.first() {
                        Some(p) => format!("a command line that cannot be analysed fully: {p}"),
                        None => "a command line over the analysis budget".into(),
                    },
                },
            ));
        }
        if let Some(what) = crate::shell_policy::catastrophic_removal(analysis, ctx) {
            return Some(Decision::ask(
                Self::ask_message(request),
                DecisionReason::Check {
                    name: format!("a removal of the root, home or project directory: {what}"),
                },
            ));
        }
        for w in touched.writes() {
            let w = &w.path;
            if candidates(w, ctx).iter().any(|c| protected(c).is_some()) {
                return Some(Decision::ask(
                    Self::ask_message(request),
                    DecisionReason::Check {
                        name: "a write to a protected path".into(),
                    },
                ));
            }
            // Bypass mode waives this prompt (not the protected-path check above).
            let outside = ctx.permission_mode != PermissionMode::BypassPermissions
                && !crate::path_rule::inside_working_dirs(ctx, w)
                && self.path_allowed(PathFamily::Edit, w, ctx).is_none();
            if outside {
                return Some(Decision::ask(
                    self.shell_ask_message(analysis, touched, ctx),
                    DecisionReason::Check {
                        name: "a write outside the working directories".into(),
                    },
                ));
            }
        }
        let reads_inside = touched.reads().all(|p| {
            crate::path_rule::inside_working_dirs(ctx, p)
                || self.path_allowed(PathFamily::Read, p, ctx).is_some()
        });
        let redirect_ok = |p: &Path| self.redirect_permitted(p, ctx);
        if reads_inside
            && crate::shell_policy::args_inside(analysis, ctx, &|p| {
                self.path_allowed(PathFamily::Read, p, ctx).is_some()
                    || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
            })
            && let Some(used) = crate::shell_policy::all_units_allowed(
                analysis,
                touched,
                ctx,
                &|form| self.shell_allow(form),
                &redirect_ok,
            )
        {
            return Some(match used.first() {
                Some(e) => Decision::allow(e.reason()),
                None => Decision::allow(DecisionReason::Check {
                    name: "read-only command".into(),
                }),
            });
        }
        None
    }

    /// What the analysis of a Bash line saw, unit by unit, and which rule matched each: its
    /// words after expansion, its working directory, every effect with the database entry that
    /// produced it, and the deny, ask or allow rule (with file and line) that matched it. For
    /// `toolgate check --explain`.
    pub fn explain_shell(&self, command: &str, ctx: &tool_core::ToolContext) -> String {
        use std::fmt::Write as _;
        use tool_shell::analyze::Origin;
        let a = Self::analyze_shell(command, ctx);
        let t = crate::shell_policy::touches(&a, ctx);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "analysis: {} unit(s){}{}",
            a.units.len(),
            if a.parsed {
                ""
            } else {
                ", the line does not parse (words scanned)"
            },
            if a.background {
                ", runs in the background"
            } else {
                ""
            }
        );
        for p in &a.problems {
            let _ = writeln!(out, "  problem: {p}");
        }
        for (i, u) in a.units.iter().enumerate() {
            let origin = match &u.origin {
                Origin::Line => "the line".to_owned(),
                Origin::Substitution => "a substitution".to_owned(),
                Origin::Carried { parent, via, .. } => format!("unit {parent} through {via}"),
            };
            let _ = writeln!(
                out,
                "unit {i}: {} (run by {origin}; in {}{})",
                serde_json::to_string(&u.argv).unwrap_or_default(),
                u.cwd.display(),
                if u.certain { "" } else { "; not known exactly" }
            );
            for a in &u.assignments {
                let _ = writeln!(out, "  assigns {}", a.raw);
            }
            for why in u.unknown.iter().chain(&u.unknown_words) {
                let _ = writeln!(out, "  unknown: {why}");
            }
            if u.interpretation.path.is_empty() && !u.is_bare() {
                let _ = writeln!(out, "  program: not in the command database");
            } else if !u.is_bare() {
                let _ = writeln!(out, "  program: {}", u.interpretation.path.join(" "));
            }
            for e in u.effects() {
                let value = e.value.as_deref().unwrap_or("(unknown)");
                let _ = writeln!(out, "  effect: {} {value} (from {})", e.kind, e.source);
            }
            let forms = crate::shell_policy::unit_forms(u);
            for (list, name) in [
                (RuleList::Deny, "deny"),
                (RuleList::Ask, "ask"),
                (RuleList::Allow, "allow"),
            ] {
                if let Some(e) = self.shell_match(list, &forms) {
                    let _ = writeln!(out, "  matches {name} rule {}", e.source());
                }
            }
            for p in t.uses.iter().filter(|p| p.unit == i) {
                let family = match p.op {
                    crate::shell_policy::Op::Read => PathFamily::Read,
                    _ => PathFamily::Edit,
                };
                if let Some(e) = self.path_rule(RuleList::Deny, family, &p.path, ctx) {
                    let _ = writeln!(out, "  {} is denied by {}", p.path.display(), e.source());
                }
            }
        }
        out
    }

    /// The literal last names of `family` deny rules (`.env` of `Read(./.env)`), for checking a
    /// glob pattern that matched nothing against what it could match.
    fn denied_names(&self, family: PathFamily) -> Vec<String> {
        self.deny_literals(family, |line| line.trim_end_matches('/').rsplit('/').next())
    }

    /// The literal segments (no wildcard) of `family` deny patterns that `pick` takes from
    /// each pattern's line.
    fn deny_literals<'a, I>(
        &'a self,
        family: PathFamily,
        pick: impl Fn(&'a str) -> I,
    ) -> Vec<String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.entries
            .iter()
            .filter(|e| e.list == RuleList::Deny)
            .filter_map(|e| match &e.matcher {
                RuleMatcher::Path { family: f, pattern } if *f == family => Some(pattern),
                _ => None,
            })
            .flat_map(|p| pick(&p.line))
            .filter(|n| !n.is_empty() && !n.contains(['*', '?', '[']))
            .map(str::to_owned)
            .collect()
    }

    /// The forms deny and ask rules are matched against: the line as written, and every unit's
    /// words.
    fn shell_forms(command: &str, analysis: &tool_shell::analyze::Analysis) -> Vec<String> {
        let mut forms = vec![command.trim().to_owned()];
        forms.extend(crate::shell_policy::match_forms(analysis));
        forms
    }

    /// May a shell redirection write `p`? With an Edit allow rule covering it, or in
    /// acceptEdits mode inside the working directories; never a protected path.
    fn redirect_permitted(&self, p: &Path, ctx: &tool_core::ToolContext) -> bool {
        if candidates(p, ctx).iter().any(|c| protected(c).is_some()) {
            return false;
        }
        (ctx.permission_mode == PermissionMode::AcceptEdits
            && crate::path_rule::inside_working_dirs(ctx, p))
            || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
    }

    /// What the model is told when a Bash line needs approval that no rule asked for: the path
    /// outside the working directories, the parts of a compound line that need approval, the
    /// file write inside the working directories, or Claude Code's generic text.
    fn shell_ask_message(
        &self,
        a: &tool_shell::analyze::Analysis,
        t: &crate::shell_policy::Touches,
        ctx: &tool_core::ToolContext,
    ) -> String {
        use crate::shell_policy::{Op, compound_message, outside_message, unit_allowed};
        use tool_shell::analyze::Origin;
        let covered = |op: Op, p: &Path| match op {
            Op::Read => {
                self.path_allowed(PathFamily::Read, p, ctx).is_some()
                    || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
            }
            Op::Write | Op::Redirect => self.path_allowed(PathFamily::Edit, p, ctx).is_some(),
        };
        let line_units: Vec<usize> = a
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.origin == Origin::Line)
            .map(|(i, _)| i)
            .collect();
        if line_units.len() > 1 {
            let needing: Vec<usize> = line_units
                .iter()
                .copied()
                .filter(|&i| {
                    a.units[i].program() != "cd"
                        && (unit_allowed(i, a, t, ctx, &|f| self.shell_allow(f), &|p| {
                            self.redirect_permitted(p, ctx)
                        })
                        .is_none()
                            || outside_message(t, ctx, Some(&[i]), &covered).is_some())
                })
                .collect();
            if needing.len() == 1
                && let Some(m) = outside_message(t, ctx, Some(&needing), &covered)
            {
                return m;
            }
            if !needing.is_empty() {
                let parts: Vec<String> = needing.iter().map(|&i| a.units[i].text.clone()).collect();
                return compound_message(&parts);
            }
        }
        outside_message(t, ctx, None, &covered)
            .or_else(|| crate::shell_policy::write_ask_message(a, t, ctx))
            .unwrap_or_else(|| "This command requires approval".to_owned())
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

/// A Bash line as a decision sees it: analysed once, with the paths its units touch.
struct ShellLine {
    analysis: tool_shell::analyze::Analysis,
    touched: crate::shell_policy::Touches,
}

impl ShellLine {
    fn new(command: &str, ctx: &tool_core::ToolContext) -> Self {
        let analysis = Policy::analyze_shell(command, ctx);
        let touched = crate::shell_policy::touches(&analysis, ctx);
        Self { analysis, touched }
    }
}

/// Longest command line analysed for an allow.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Most simple commands in one line analysed for an allow.
const MAX_UNITS: usize = 256;

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
    fn name(self) -> &'static str {
        match self {
            Protection::SensitiveFile => "protected path (a sensitive file)",
            Protection::AgentConfiguration => "protected path (agent configuration)",
        }
    }
}

/// Directories whose contents are protected.
const PROTECTED_DIRS: &[&str] = &[".git", ".vscode", ".idea", ".claude", ".toolgate"];
/// Files protected wherever they are.
const PROTECTED_FILES: &[&str] = &[
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

/// The path seam tools ask: a `Read(...)` deny hides a path from every reading tool (and the
/// writing tools refuse it too, as current Claude Code does, with their own text); an
/// `Edit(...)` deny blocks writing.
impl PathPolicy for Policy {
    fn read_denied(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.path_rule(RuleList::Deny, PathFamily::Read, path, ctx)
            .is_some()
    }

    fn edit_denied(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.path_rule(RuleList::Deny, PathFamily::Edit, path, ctx)
            .is_some()
    }

    /// Denied paths, and files with several links whose identity the deny rules could not
    /// settle (a decision would ask about them; a walk has no one to ask).
    fn search_hidden(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.read_denied(path, ctx) || self.identity_unknown(PathFamily::Read, path, ctx)
    }
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
