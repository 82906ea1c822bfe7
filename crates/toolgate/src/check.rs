//! Deciding about one call without running it: what `toolgate check` prints and what
//! `cargo xtask security` compares.

use std::path::Path;

use serde_json::Value;
use tool_core::{Decision, Lookup, PermissionPolicy, PermissionRequest, ToolContext, ToolRegistry};
use tool_permissions::{Layer, Policy, PolicyBuilder};

/// Why a call could not be decided about.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// No tool of that name.
    #[error("{0}")]
    UnknownTool(String),
    /// The input does not pass the tool's schema.
    #[error("{0}")]
    InvalidInput(String),
}

/// The permission decision for `tool` with `input` in `ctx` (every registered tool counts as
/// offered; a whole-tool deny shows as the deny it is).
pub fn decide(
    registry: &ToolRegistry,
    policy: &Policy,
    tool: &str,
    input: &Value,
    ctx: &ToolContext,
) -> Result<Decision, CheckError> {
    let found = match registry.lookup(tool, &|_| true) {
        Lookup::Found(t) => t,
        Lookup::NotFound(text) => return Err(CheckError::UnknownTool(text)),
    };
    let input = found
        .schema
        .check(input)
        .map_err(|e| CheckError::InvalidInput(e.render(found.name())))?;
    let input = found.tool.normalize_input(input);
    let subject = found.tool.permission_subject(&input, ctx);
    let request = PermissionRequest {
        tool_name: found.name(),
        input: &input,
        subject: &subject,
        read_only: found.tool.is_read_only(&input),
        requires_user_interaction: found.tool.requires_user_interaction(),
        ctx,
    };
    Ok(policy.decide(&request))
}

/// The policy of a workspace: the user's, the project's and the local Claude Code settings
/// files, and optionally a command-line settings file. The project's allow rules apply only
/// when `trusted`.
pub fn load_policy(
    ws: &Path,
    home: &Path,
    settings: Option<&Path>,
    trusted: bool,
) -> Result<Policy, tool_permissions::Error> {
    let mut b = PolicyBuilder::new();
    b.trust_project(trusted);
    b.claude_settings_file(&home.join(".claude/settings.json"), Layer::User, home)?;
    b.claude_settings_file(&ws.join(".claude/settings.json"), Layer::Project, ws)?;
    b.claude_settings_file(&ws.join(".claude/settings.local.json"), Layer::Local, ws)?;
    if let Some(s) = settings {
        b.claude_settings_file(s, Layer::CommandLine, s.parent().unwrap_or(ws))?;
    }
    Ok(b.build())
}
