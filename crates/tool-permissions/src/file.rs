//! TOML policy files: `[permissions]` with rule lists and settings, and the `[[tests]]` a
//! policy carries as examples. Every value keeps its position, so an error names the file,
//! line and column it came from.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use tool_core::{PermissionMode, RuleList, Verdict};

use crate::Error;
use crate::policy::{Layer, PolicyBuilder};

/// One `[[tests]]` entry: a call and the decision the policy must give it.
#[derive(Debug, Clone)]
pub struct PolicyTest {
    /// Its name, when it has one.
    pub name: Option<String>,
    /// The tool called.
    pub tool: String,
    /// The tool input.
    pub input: serde_json::Value,
    /// The expected decision.
    pub expect: Verdict,
    /// The mode to decide in (default: the policy's).
    pub mode: Option<PermissionMode>,
    /// The file it was written in.
    pub file: PathBuf,
    /// Its 1-based line there.
    pub line: usize,
}

impl PolicyTest {
    /// How to refer to the test: its name, or its file and line.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{}:{}", self.file.display(), self.line),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    #[serde(default)]
    permissions: Option<Spanned<Permissions>>,
    /// `hooks` tables belong to the hook loader (tool-hooks), which reads the same files.
    #[serde(default, rename = "hooks")]
    _hooks: Option<serde::de::IgnoredAny>,
    /// `mcp_servers` tables belong to the MCP adapters (tool-mcp), which read the same files.
    #[serde(default, rename = "mcp_servers")]
    _mcp_servers: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    tests: Vec<Spanned<TestEntry>>,
    #[serde(default)]
    sandbox: Option<SandboxTable>,
}

/// `[sandbox]`: the keys of Claude Code's `sandbox` object, in snake case.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxTable {
    #[serde(default)]
    enabled: Option<Spanned<bool>>,
    #[serde(default)]
    fail_if_unavailable: Option<Spanned<bool>>,
    #[serde(default)]
    allow_unsandboxed_commands: Option<Spanned<bool>>,
    #[serde(default)]
    excluded_commands: Vec<Spanned<String>>,
    #[serde(default)]
    filesystem: Option<SandboxFilesystem>,
    #[serde(default)]
    network: Option<SandboxNetwork>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxFilesystem {
    #[serde(default)]
    allow_write: Vec<Spanned<String>>,
    #[serde(default)]
    deny_write: Vec<Spanned<String>>,
    #[serde(default)]
    allow_read: Vec<Spanned<String>>,
    #[serde(default)]
    deny_read: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxNetwork {
    #[serde(default)]
    allowed_domains: Vec<Spanned<String>>,
    #[serde(default)]
    denied_domains: Vec<Spanned<String>>,
    #[serde(default)]
    allow_all_unix_sockets: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Permissions {
    #[serde(default)]
    default_mode: Option<Spanned<String>>,
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    additional_directories: Vec<Spanned<String>>,
    #[serde(default)]
    allow_managed_rules_only: Option<Spanned<bool>>,
    #[serde(default)]
    disable_bypass_mode: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestEntry {
    #[serde(default)]
    name: Option<String>,
    tool: String,
    #[serde(default)]
    input: Option<toml::Table>,
    expect: Spanned<String>,
    #[serde(default)]
    mode: Option<Spanned<String>>,
}

/// The 1-based line and column (in characters) of byte `offset` in `text`, for messages
/// that point into a policy file.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let offset = (0..=offset)
        .rev()
        .find(|&o| text.is_char_boundary(o))
        .unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn at(file: &Path, text: &str, span: Range<usize>, message: impl Into<String>) -> Error {
    let (line, column) = line_column(text, span.start);
    Error::Syntax {
        file: file.to_path_buf(),
        line,
        column,
        message: message.into(),
    }
}

impl PolicyBuilder {
    /// Load a TOML policy file into `layer`. A missing file adds nothing. Relative
    /// `additional_directories` are taken relative to `base` (the project root, or the user
    /// layer's directory).
    pub fn toml_file(
        &mut self,
        path: &Path,
        layer: Layer,
        base: &Path,
    ) -> Result<&mut Self, Error> {
        let Some(text) = crate::read_optional(path)? else {
            return Ok(self);
        };
        self.toml_str(&text, layer, path, base)
    }

    /// Load TOML policy text as if read from `path`.
    pub fn toml_str(
        &mut self,
        text: &str,
        layer: Layer,
        path: &Path,
        base: &Path,
    ) -> Result<&mut Self, Error> {
        let doc: Document = toml::from_str(text).map_err(|e| {
            at(
                path,
                text,
                e.span().unwrap_or(0..0),
                e.message().trim_end().to_owned(),
            )
        })?;
        self.files.push((layer, path.to_path_buf()));
        if let Some(perms) = doc.permissions {
            let perms = perms.into_inner();
            for (list, rules) in [
                (RuleList::Deny, &perms.deny),
                (RuleList::Ask, &perms.ask),
                (RuleList::Allow, &perms.allow),
            ] {
                for r in rules {
                    // Point at the rule's text, inside its quotes.
                    let (line, column) = line_column(text, r.span().start + 1);
                    self.rule_at(list, r.get_ref(), layer, path, line, column)?;
                }
            }
            if let Some(m) = &perms.default_mode {
                let mode: PermissionMode = m
                    .get_ref()
                    .parse()
                    .map_err(|e: tool_core::Error| at(path, text, m.span(), e.to_string()))?;
                self.default_mode(mode, layer);
            }
            for d in &perms.additional_directories {
                let p = Path::new(d.get_ref());
                let p = if let Some(rest) = d.get_ref().strip_prefix("~/") {
                    match &self.home {
                        Some(h) => h.join(rest),
                        None => {
                            return Err(at(
                                path,
                                text,
                                d.span(),
                                "`~` cannot be expanded: no home directory was given",
                            ));
                        }
                    }
                } else {
                    base.join(p)
                };
                self.additional_directory(tool_core::normalize(&p));
            }
            for (key, value) in [
                ("allow_managed_rules_only", &perms.allow_managed_rules_only),
                ("disable_bypass_mode", &perms.disable_bypass_mode),
            ] {
                let Some(v) = value else { continue };
                if layer != Layer::Managed {
                    return Err(at(
                        path,
                        text,
                        v.span(),
                        format!(
                            "`{key}` can only be set in the managed policy (/etc/toolgate/policy.toml)"
                        ),
                    ));
                }
                if *v.get_ref() {
                    let (line, _) = line_column(text, v.span().start);
                    let source = format!("{key} at {}:{line}", path.display());
                    match key {
                        "allow_managed_rules_only" => self.allow_managed_rules_only(source),
                        _ => self.disable_bypass_mode(source),
                    };
                }
            }
        }
        if let Some(sb) = doc.sandbox {
            self.toml_sandbox(sb, layer, path, text, base)?;
        }
        for t in doc.tests {
            let span = t.span();
            let t = t.into_inner();
            let expect = match t.expect.get_ref().as_str() {
                "allow" => Verdict::Allow,
                "ask" => Verdict::Ask,
                "deny" => Verdict::Deny,
                other => {
                    return Err(at(
                        path,
                        text,
                        t.expect.span(),
                        format!("`expect` must be \"allow\", \"ask\" or \"deny\", not \"{other}\""),
                    ));
                }
            };
            let mode = match &t.mode {
                Some(m) => Some(
                    m.get_ref()
                        .parse::<PermissionMode>()
                        .map_err(|e| at(path, text, m.span(), e.to_string()))?,
                ),
                None => None,
            };
            let input = serde_json::to_value(t.input.unwrap_or_default())
                .map_err(|e| at(path, text, span.clone(), format!("`input`: {e}")))?;
            self.tests.push(PolicyTest {
                name: t.name,
                tool: t.tool,
                input,
                expect,
                mode,
                file: path.to_path_buf(),
                line: line_column(text, span.start).0,
            });
        }
        Ok(self)
    }
}

impl PolicyBuilder {
    fn toml_sandbox(
        &mut self,
        sb: SandboxTable,
        layer: Layer,
        path: &Path,
        text: &str,
        base: &Path,
    ) -> Result<(), Error> {
        use crate::sandbox::settings::{HostPattern, PathList, Setting, resolve_path_setting};
        let source = |key: &str, span: Range<usize>| {
            let (line, _) = line_column(text, span.start);
            format!("sandbox.{key} at {}:{line}", path.display())
        };
        for (json_key, toml_key, v) in [
            ("enabled", "enabled", &sb.enabled),
            (
                "failIfUnavailable",
                "fail_if_unavailable",
                &sb.fail_if_unavailable,
            ),
            (
                "allowUnsandboxedCommands",
                "allow_unsandboxed_commands",
                &sb.allow_unsandboxed_commands,
            ),
        ] {
            if let Some(v) = v {
                self.sandbox
                    .add_bool(json_key, *v.get_ref(), layer, source(toml_key, v.span()));
            }
        }
        for c in &sb.excluded_commands {
            let pattern = crate::shell_rule::ShellPattern::parse(c.get_ref())
                .map_err(|e| at(path, text, c.span(), format!("`excluded_commands`: {e}")))?;
            self.sandbox.excluded.push(Setting {
                value: std::sync::Arc::new(pattern),
                layer,
                source: format!(
                    "{} (`{}`)",
                    source("excluded_commands", c.span()),
                    c.get_ref()
                ),
            });
        }
        if let Some(fs) = sb.filesystem {
            for (key, list, items) in [
                (
                    "filesystem.allow_write",
                    PathList::AllowWrite,
                    &fs.allow_write,
                ),
                ("filesystem.deny_write", PathList::DenyWrite, &fs.deny_write),
                ("filesystem.allow_read", PathList::AllowRead, &fs.allow_read),
                ("filesystem.deny_read", PathList::DenyRead, &fs.deny_read),
            ] {
                for item in items {
                    let p = resolve_path_setting(item.get_ref(), base)
                        .map_err(|e| at(path, text, item.span(), format!("`{key}`: {e}")))?;
                    let src = format!("{} (`{}`)", source(key, item.span()), item.get_ref());
                    self.sandbox.add_path(list, p, layer, src);
                }
            }
        }
        if let Some(net) = sb.network {
            for (key, allowed, items) in [
                ("network.allowed_domains", true, &net.allowed_domains),
                ("network.denied_domains", false, &net.denied_domains),
            ] {
                for item in items {
                    let p = HostPattern::parse(item.get_ref())
                        .map_err(|e| at(path, text, item.span(), format!("`{key}`: {e}")))?;
                    let s = Setting {
                        value: p,
                        layer,
                        source: format!("{} (`{}`)", source(key, item.span()), item.get_ref()),
                    };
                    if allowed {
                        self.sandbox.allowed_domains.push(s);
                    } else {
                        self.sandbox.denied_domains.push(s);
                    }
                }
            }
            if let Some(v) = &net.allow_all_unix_sockets {
                self.sandbox.add_bool(
                    "allowAllUnixSockets",
                    *v.get_ref(),
                    layer,
                    source("network.allow_all_unix_sockets", v.span()),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let t = "ab\nçd = 1\n";
        assert_eq!(line_column(t, 0), (1, 1));
        assert_eq!(line_column(t, 3), (2, 1));
        assert_eq!(line_column(t, 5), (2, 2));
    }
}
