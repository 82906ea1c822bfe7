//! Rule types: the layers rules come from, what a rule's content is matched as, and a rule
//! with its list and origin.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use tool_core::{DecisionReason, RuleList};

use crate::path_rule::PathPattern;
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
pub(crate) enum RuleMatcher {
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
pub(super) const OPAQUE_CONTENT_TOOLS: &[&str] = &["Agent", "Skill", "WebSearch", "SlashCommand"];

/// Which tools a path rule governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PathFamily {
    /// Reading tools: Read, Grep, Glob.
    Read,
    /// Writing tools: Edit, Write, MultiEdit, NotebookEdit.
    Edit,
}

impl PathFamily {
    /// The family a rule's tool name belongs to, if any (aliases included).
    pub(crate) fn of(tool: &str) -> Option<Self> {
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
    pub(crate) matcher: RuleMatcher,
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

    pub(crate) fn reason(&self) -> DecisionReason {
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
