//! The decision vocabulary every crate shares: modes, verdicts, explained decisions, what a
//! hook answered, and the traits through which the pipeline asks a policy, an approver and the
//! path-policy seam.
//!
//! The policy engine itself lives in `tool-permissions`; hooks live in `tool-hooks`. This module
//! only fixes the types they exchange, so a host can plug in its own of either.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::PermissionSubject;

/// The session's permission mode (Claude Code's `defaultMode` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Reads inside the working directories are allowed; everything else asks.
    #[default]
    Default,
    /// File edits inside the working directories are allowed too.
    AcceptEdits,
    /// Planning: nothing is hard-denied by the mode itself.
    Plan,
    /// Every ask becomes a deny.
    DontAsk,
    /// Everything is allowed except deny rules, ask rules and safety checks.
    BypassPermissions,
}

impl PermissionMode {
    /// The name as written in settings files.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "default" => PermissionMode::Default,
            "acceptEdits" => PermissionMode::AcceptEdits,
            "plan" => PermissionMode::Plan,
            "dontAsk" => PermissionMode::DontAsk,
            "bypassPermissions" => PermissionMode::BypassPermissions,
            other => {
                return Err(crate::Error::InvalidPermissionMode(other.to_owned()));
            }
        })
    }
}

/// Allow, ask or deny, ordered so that combining decisions is `max()`: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run the tool.
    Allow,
    /// Ask the user (through the approver).
    Ask,
    /// Refuse.
    Deny,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        })
    }
}

/// Which list of a policy a rule sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    /// `allow`.
    Allow,
    /// `ask`.
    Ask,
    /// `deny`.
    Deny,
}

impl fmt::Display for RuleList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        })
    }
}

/// Why a decision came out the way it did. Every decision carries one, so a host can show
/// the user which rule or which built-in check produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionReason {
    /// A rule matched.
    Rule {
        /// The rule as written.
        rule: String,
        /// The list it sits in.
        list: RuleList,
        /// Where it came from (layer and file).
        source: String,
    },
    /// The permission mode decided.
    Mode {
        /// The mode.
        mode: PermissionMode,
    },
    /// The tool only reads, and what it reads is inside a working directory.
    ReadInsideWorkingDirectory {
        /// The path read.
        path: String,
    },
    /// A hook decided.
    Hook {
        /// The hook's name (its command, or the name given to an in-process hook).
        hook: String,
        /// The reason it gave, if any.
        reason: Option<String>,
    },
    /// The approver answered an ask.
    Approver {
        /// What it answered.
        approved: bool,
    },
    /// No approver was there to answer an ask, so it was refused.
    NoApprover,
    /// Nothing allowed the call, so it needs approval.
    NotGranted,
    /// A built-in check (named) decided.
    Check {
        /// What the check was.
        name: String,
    },
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecisionReason::Rule { rule, list, source } => {
                write!(f, "{list} rule `{rule}` from {source}")
            }
            DecisionReason::Mode { mode } => write!(f, "permission mode `{mode}`"),
            DecisionReason::ReadInsideWorkingDirectory { path } => {
                write!(f, "read-only access to {path}, inside a working directory")
            }
            DecisionReason::Hook {
                hook,
                reason: Some(r),
            } => write!(f, "hook `{hook}`: {r}"),
            DecisionReason::Hook { hook, reason: None } => write!(f, "hook `{hook}`"),
            DecisionReason::Approver { approved: true } => f.write_str("approved by the user"),
            DecisionReason::Approver { approved: false } => f.write_str("rejected by the user"),
            DecisionReason::NoApprover => {
                f.write_str("needs approval, and no approver is configured")
            }
            DecisionReason::NotGranted => f.write_str("no rule or mode allows it"),
            DecisionReason::Check { name } => write!(f, "check: {name}"),
        }
    }
}

/// A permission decision: the verdict, the text the model sees when it is not an allow, and
/// why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The model-facing text for an ask or a deny.
    pub message: String,
    /// Why.
    pub reason: DecisionReason,
    /// A replacement input, when the deciding party rewrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
}

impl Decision {
    /// An allow.
    pub fn allow(reason: DecisionReason) -> Self {
        Self {
            verdict: Verdict::Allow,
            message: String::new(),
            reason,
            updated_input: None,
        }
    }

    /// An ask with the message the model sees if nobody grants it.
    pub fn ask(message: impl Into<String>, reason: DecisionReason) -> Self {
        Self {
            verdict: Verdict::Ask,
            message: message.into(),
            reason,
            updated_input: None,
        }
    }

    /// A deny with the message the model sees.
    pub fn deny(message: impl Into<String>, reason: DecisionReason) -> Self {
        Self {
            verdict: Verdict::Deny,
            message: message.into(),
            reason,
            updated_input: None,
        }
    }

    /// The stricter of two decisions (`Allow < Ask < Deny`); on a tie, `self`.
    pub fn stricter(self, other: Decision) -> Decision {
        if other.verdict > self.verdict {
            other
        } else {
            self
        }
    }
}

/// What a PreToolUse hook (or a chain of them) answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookOutcome {
    /// A permission decision, when a hook gave one.
    pub decision: Option<HookDecision>,
    /// A replacement input.
    pub updated_input: Option<Value>,
    /// Text to add to the model's context.
    pub additional_context: Vec<String>,
    /// The hook asked to stop the turn after this call (`continue: false`).
    pub prevent_continuation: bool,
    /// Why the turn should stop.
    pub stop_reason: Option<String>,
    /// Notes for the user (not the model): a hook that crashed, timed out, printed garbage.
    pub user_notes: Vec<String>,
}

/// A hook's permission answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookDecision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The reason the hook gave.
    pub reason: Option<String>,
    /// Which hook.
    pub hook: String,
}

impl HookDecision {
    /// Why, as a decision reason.
    pub fn reason_of(&self) -> DecisionReason {
        DecisionReason::Hook {
            hook: self.hook.clone(),
            reason: self.reason.clone(),
        }
    }

    /// The decision a hook's deny makes about a call of `tool_name`, whatever the rules say:
    /// Claude Code's text, `PreToolUse:<Tool> hook error: <reason>` (`Blocked by hook` when the
    /// hook gave none).
    pub fn deny_decision(&self, tool_name: &str) -> Decision {
        Decision::deny(
            format!(
                "PreToolUse:{tool_name} hook error: {}",
                self.reason.as_deref().unwrap_or("Blocked by hook")
            ),
            self.reason_of(),
        )
    }

    /// The ask a hook's ask makes about a call of `tool_name`: the hook's reason as the
    /// prompt's text, or Claude Code's `Hook PreToolUse:<Tool> asked for confirmation for this
    /// tool`.
    pub fn ask_decision(&self, tool_name: &str) -> Decision {
        Decision::ask(
            self.reason.clone().unwrap_or_else(|| {
                format!("Hook PreToolUse:{tool_name} asked for confirmation for this tool")
            }),
            self.reason_of(),
        )
    }
}

impl HookOutcome {
    /// An outcome that denies the call, with the reason the model is shown.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::decided(Verdict::Deny, Some(reason.into()))
    }

    /// An outcome that asks the user, with the text of the prompt.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::decided(Verdict::Ask, Some(reason.into()))
    }

    /// An outcome that allows the call. It only waives a prompt nothing else asked for: it
    /// never lifts a deny rule, an ask rule or a safety check.
    pub fn allow() -> Self {
        Self::decided(Verdict::Allow, None)
    }

    /// An outcome with `verdict` and an optional reason; the pipeline fills in the hook's name.
    pub fn decided(verdict: Verdict, reason: Option<String>) -> Self {
        Self {
            decision: Some(HookDecision {
                verdict,
                reason,
                hook: String::new(),
            }),
            ..Self::default()
        }
    }

    /// The verdict, when a hook gave one.
    pub fn verdict(&self) -> Option<Verdict> {
        self.decision.as_ref().map(|d| d.verdict)
    }

    /// Merge another hook's outcome into this one: the stricter decision wins
    /// (`deny > ask > allow`), whatever order the hooks finished in; a later `updated_input`
    /// replaces an earlier one; lists are concatenated.
    pub fn merge(&mut self, other: HookOutcome) {
        self.decision = match (self.decision.take(), other.decision) {
            (Some(a), Some(b)) => Some(if b.verdict > a.verdict { b } else { a }),
            (a, b) => a.or(b),
        };
        if other.updated_input.is_some() {
            self.updated_input = other.updated_input;
        }
        self.additional_context.extend(other.additional_context);
        self.prevent_continuation |= other.prevent_continuation;
        if other.stop_reason.is_some() {
            self.stop_reason = other.stop_reason;
        }
        self.user_notes.extend(other.user_notes);
    }
}

/// What the policy is asked to decide about.
#[derive(Debug, Clone, Copy)]
pub struct PermissionRequest<'a> {
    /// The tool's canonical name.
    pub tool_name: &'a str,
    /// The input (after schema validation, hooks and normalisation).
    pub input: &'a Value,
    /// What the tool will touch, as the tool declares it.
    pub subject: &'a PermissionSubject,
    /// Whether the tool says this input only reads.
    pub read_only: bool,
    /// Whether the tool needs the user's interaction whatever the mode.
    pub requires_user_interaction: bool,
    /// The call's context (cwd, mode, working directories).
    pub ctx: &'a crate::ToolContext,
}

impl<'a> PermissionRequest<'a> {
    /// The request for a call of `tool` with `input` (already checked and normalised) in
    /// `ctx`, whose permission subject (`tool.permission_subject(input, ctx)`) is `subject`:
    /// the read-only and user-interaction flags are the tool's own.
    pub fn for_tool(
        tool: &'a dyn crate::Tool,
        input: &'a Value,
        subject: &'a PermissionSubject,
        ctx: &'a crate::ToolContext,
    ) -> Self {
        Self {
            tool_name: tool.name(),
            input,
            subject,
            read_only: tool.is_read_only(input),
            requires_user_interaction: tool.requires_user_interaction(),
            ctx,
        }
    }
}

/// A permission policy: decides allow / ask / deny for one call.
pub trait PermissionPolicy: Send + Sync {
    /// Decide about one call. Never panics; a policy that cannot decide asks.
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision;

    /// True when a whole-tool deny removes `tool_name` from the tools offered to the model.
    fn removes_tool(&self, tool_name: &str) -> bool;

    /// The permission mode the policy starts a session in (a settings file's `defaultMode`),
    /// for a host that chose none ([`ToolContext::with_policy_defaults`](crate::ToolContext::with_policy_defaults)).
    fn session_mode(&self) -> Option<PermissionMode> {
        None
    }

    /// Directories the policy adds to the session's working directories (a settings file's
    /// `additionalDirectories`).
    fn session_directories(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Combine the policy's decision with a PreToolUse hook's answer. A hook's allow only
    /// waives a prompt: it never lifts a deny, an ask rule or a safety check. A hook's deny
    /// beats everything.
    fn resolve_with_hook(
        &self,
        request: &PermissionRequest<'_>,
        hook: Option<&HookDecision>,
    ) -> Decision {
        let Some(h) = hook else {
            return self.decide(request);
        };
        let tool = request.tool_name;
        match h.verdict {
            // A hook's deny stands whatever the rules say, with Claude Code's hook-error text.
            Verdict::Deny => h.deny_decision(tool),
            Verdict::Ask => match self.decide(request) {
                // A hook's ask never lowers a deny; otherwise the prompt shows the hook's text.
                decision if decision.verdict == Verdict::Deny => decision,
                _ => h.ask_decision(tool),
            },
            // A hook's allow waives only the prompt nothing asked for: deny rules, ask rules and
            // the built-in checks stand.
            Verdict::Allow => match self.decide(request) {
                decision
                    if decision.verdict == Verdict::Ask
                        && decision.reason == DecisionReason::NotGranted =>
                {
                    Decision::allow(h.reason_of())
                }
                decision => decision,
            },
        }
    }
}

/// What an approver is asked.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool_name: String,
    /// The tool_use id.
    pub tool_use_id: String,
    /// The input.
    pub input: Value,
    /// The policy's ask, with its message and reason.
    pub decision: Decision,
}

/// What an approver answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// Run the call (optionally with an edited input).
    Approve {
        /// A replacement input, when the user edited the proposal.
        updated_input: Option<Value>,
    },
    /// Do not run it.
    Reject {
        /// What the user said, passed on to the model.
        feedback: Option<String>,
    },
}

/// Answers an ask: a prompt in a terminal, a UI dialog, a remote service.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decide about one ask. Cancel safety: dropping the future means no answer, and the
    /// pipeline treats it as a rejection.
    async fn approve(&self, request: ApprovalRequest) -> Approval;
}

#[async_trait]
impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = Approval> + Send,
{
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        (self)(request).await
    }
}

/// The seam through which a tool asks whether a path is denied, without depending on the
/// policy engine. Read asks `read_denied`, Edit and Write ask `edit_denied`; search tools use
/// `read_denied` to hide files. `ctx` gives the cwd, project root and home that rules are
/// anchored to.
pub trait PathPolicy: Send + Sync {
    /// True when reading `path` (absolute) is denied.
    fn read_denied(&self, path: &Path, ctx: &crate::ToolContext) -> bool;
    /// True when editing or writing `path` (absolute) is denied.
    fn edit_denied(&self, path: &Path, ctx: &crate::ToolContext) -> bool;
    /// True when a search (Grep, Glob) must leave `path`, met while walking, out of its walk
    /// and results: a denied path, and anything the policy could not clear without asking
    /// (there is no one to ask in the middle of a walk). By default, `read_denied`.
    fn search_hidden(&self, path: &Path, ctx: &crate::ToolContext) -> bool {
        self.read_denied(path, ctx)
    }

    /// True when Edit and Write must refuse `path` because reading it is denied: a Read deny
    /// covering it, or (as Claude Code reads it) a deny of the whole Read tool. By default,
    /// `read_denied`.
    fn write_read_denied(&self, path: &Path, ctx: &crate::ToolContext) -> bool {
        self.read_denied(path, ctx)
    }
}

/// A path policy that denies nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPathRules;

impl PathPolicy for NoPathRules {
    fn read_denied(&self, _path: &Path, _ctx: &crate::ToolContext) -> bool {
        false
    }
    fn edit_denied(&self, _path: &Path, _ctx: &crate::ToolContext) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_order_allow_ask_deny() {
        assert!(Verdict::Allow < Verdict::Ask && Verdict::Ask < Verdict::Deny);
        assert_eq!(
            [Verdict::Ask, Verdict::Deny, Verdict::Allow]
                .into_iter()
                .max(),
            Some(Verdict::Deny)
        );
    }

    #[test]
    fn hook_merge_takes_strictest_in_any_order() {
        let d = |v| HookOutcome {
            decision: Some(HookDecision {
                verdict: v,
                reason: None,
                hook: format!("{v}"),
            }),
            ..Default::default()
        };
        for order in [
            [Verdict::Allow, Verdict::Deny, Verdict::Ask],
            [Verdict::Deny, Verdict::Ask, Verdict::Allow],
        ] {
            let mut acc = HookOutcome::default();
            for v in order {
                acc.merge(d(v));
            }
            assert_eq!(acc.decision.map(|d| d.verdict), Some(Verdict::Deny));
        }
    }

    #[test]
    fn modes_parse_and_print() {
        for m in [
            "default",
            "acceptEdits",
            "plan",
            "dontAsk",
            "bypassPermissions",
        ] {
            assert_eq!(m.parse::<PermissionMode>().unwrap().as_str(), m);
        }
        assert!("auto-yes".parse::<PermissionMode>().is_err());
    }
}
