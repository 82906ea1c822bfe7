//! Host tools the session allows without a prompt ([`SessionBuilder::allow_tools`]).
//!
//! [`SessionBuilder::allow_tools`]: crate::SessionBuilder::allow_tools

use std::collections::BTreeSet;
use std::sync::Arc;

use tool_core::{
    Decision, DecisionReason, PermissionMode, PermissionPolicy, PermissionRequest, RuleList,
    Verdict,
};

/// Where [`AllowTools`] says its allows come from.
pub const ALLOW_TOOLS_SOURCE: &str = "the session (SessionBuilder::allow_tools)";

/// A policy that also allows every call of the named tools that nothing else decided: what a
/// whole-tool allow rule would do. Deny rules, ask rules, the built-in checks (protected
/// paths, paths outside the working directories) and plan mode still decide first; only the
/// prompt that nothing asked for ("not granted") is waived, in `dontAsk` mode too.
#[derive(Clone)]
pub struct AllowTools {
    tools: Arc<BTreeSet<String>>,
    inner: Arc<dyn PermissionPolicy>,
}

impl std::fmt::Debug for AllowTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllowTools")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl AllowTools {
    /// `inner`, with the calls of `tools` (canonical names) that it leaves ungranted allowed.
    pub fn new<I, S>(inner: Arc<dyn PermissionPolicy>, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            tools: Arc::new(tools.into_iter().map(Into::into).collect()),
            inner,
        }
    }

    fn allow(tool: &str) -> Decision {
        Decision::allow(DecisionReason::Rule {
            rule: tool.to_owned(),
            list: RuleList::Allow,
            source: ALLOW_TOOLS_SOURCE.to_owned(),
        })
    }
}

fn not_granted(d: &Decision) -> bool {
    d.verdict == Verdict::Ask && d.reason == DecisionReason::NotGranted
}

impl PermissionPolicy for AllowTools {
    fn session_mode(&self) -> Option<tool_core::PermissionMode> {
        self.inner.session_mode()
    }

    fn session_directories(&self) -> Vec<std::path::PathBuf> {
        self.inner.session_directories()
    }

    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        let decision = self.inner.decide(request);
        if !self.tools.contains(request.tool_name) {
            return decision;
        }
        if not_granted(&decision) {
            return Self::allow(request.tool_name);
        }
        // dontAsk turns every ask into a deny; ask again in the default mode to tell a prompt
        // nothing asked for (which an allow rule would have waived) from an ask rule or check.
        if decision.reason
            == (DecisionReason::Mode {
                mode: PermissionMode::DontAsk,
            })
        {
            let ctx = request
                .ctx
                .clone()
                .with_permission_mode(PermissionMode::Default);
            let again = PermissionRequest {
                ctx: &ctx,
                ..*request
            };
            if not_granted(&self.inner.decide(&again)) {
                return Self::allow(request.tool_name);
            }
        }
        decision
    }

    fn removes_tool(&self, tool_name: &str) -> bool {
        self.inner.removes_tool(tool_name)
    }
}
