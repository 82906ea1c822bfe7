//! The path-policy seam: what tools ask a policy about a path they read, write or walk.

use std::path::Path;

use tool_core::{PathPolicy, RuleList};

use crate::policy::{PathFamily, Policy};

/// The path seam tools ask: a `Read(...)` deny hides a path from every reading tool (and the
/// writing tools refuse it too, as current Claude Code does, with their own text); an
/// `Edit(...)` deny blocks writing.
impl PathPolicy for Policy {
    /// A Read deny covering the path as named. Links and other names of the file are the
    /// decision's to resolve (it denies them with Claude Code's "Permission to read ... has
    /// been denied."), as Claude Code's own input check sees only the name.
    fn read_denied(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.lexical_path_rule(RuleList::Deny, PathFamily::Read, path, ctx)
            .is_some()
    }

    /// A Read deny covering the file, by any name (links resolved), or a deny of the whole
    /// Read tool (recorded: with `deny: ["Read"]`, Claude Code's Write refuses every file as
    /// covered by a Read deny; a link to a read-denied file is refused the same way).
    fn write_read_denied(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.path_rule(RuleList::Deny, PathFamily::Read, path, ctx)
            .is_some()
            || tool_core::PermissionPolicy::removes_tool(self, "Read")
    }

    /// An Edit deny covering the path as named (the decision resolves links).
    fn edit_denied(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.lexical_path_rule(RuleList::Deny, PathFamily::Edit, path, ctx)
            .is_some()
    }

    /// Denied paths by any name, and files with several links whose identity the deny rules
    /// could not settle (a decision would ask about them; a walk has no one to ask).
    fn search_hidden(&self, path: &Path, ctx: &tool_core::ToolContext) -> bool {
        self.path_rule(RuleList::Deny, PathFamily::Read, path, ctx)
            .is_some()
            || self.identity_unknown(PathFamily::Read, path, ctx)
    }
}
