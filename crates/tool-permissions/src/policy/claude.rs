//! Claude Code settings files: the `permissions` object of `.claude/settings.json` and
//! friends.

use std::path::Path;

use serde_json::Value;
use tool_core::{PermissionMode, RuleList};

use super::builder::PolicyBuilder;
use super::entry::Layer;
use crate::Error;

impl PolicyBuilder {
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
        self.claude_settings_str(&text, layer, path, base)
    }

    /// Load the `permissions` of Claude Code settings text as if read from `path` (errors and
    /// rules point at its lines). Relative additional directories are taken relative to
    /// `base`.
    pub fn claude_settings_str(
        &mut self,
        text: &str,
        layer: Layer,
        path: &Path,
        base: &Path,
    ) -> Result<&mut Self, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Json {
            file: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        self.files.push((layer, path.to_path_buf()));
        self.claude_settings_inner(&value, layer, Some(path), base, Some(text))
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
        if let Some(sb) = settings.get("sandbox") {
            crate::sandbox::settings::from_claude_json(&mut self.sandbox, sb, layer, file, base)?;
        }
        let Some(perms) = settings.get("permissions") else {
            return Ok(self);
        };
        let perms = perms
            .as_object()
            .ok_or_else(|| shape("`permissions` must be an object"))?;
        // Claude Code passes keys it does not know through; a misspelt one (`denny`) would
        // silently drop its rules, so it is reported (and fails `policy lint`).
        for key in perms.keys() {
            let known = || {
                APPLIED_PERMISSION_KEYS
                    .iter()
                    .chain(IGNORED_PERMISSION_KEYS)
            };
            if known().any(|k| k == key) {
                continue;
            }
            let near = known()
                .min_by_key(|k| edit_distance(k, key))
                .filter(|k| edit_distance(k, key) <= 2)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            let at = text.zip(file).and_then(|(t, _)| {
                let found = t.find(&serde_json::to_string(key).ok()?)?;
                Some(crate::file::line_column(t, found))
            });
            let warning = crate::lint::LintWarning {
                file: file.map(Path::to_path_buf),
                line: at.map(|a| a.0),
                column: at.map(|a| a.1),
                rule: None,
                message: format!(
                    "unknown key `permissions.{key}`{near}: Claude Code and toolgate ignore it"
                ),
                severity: crate::lint::Severity::Error,
            };
            tracing::warn!("{warning}");
            self.warnings.push(warning);
        }
        for key in IGNORED_PERMISSION_KEYS {
            if perms.contains_key(*key) {
                self.warnings.push(crate::lint::LintWarning {
                    file: file.map(Path::to_path_buf),
                    line: None,
                    column: None,
                    rule: None,
                    message: format!(
                        "`permissions.{key}` is a Claude Code setting toolgate does not apply"
                    ),
                    severity: crate::lint::Severity::Warning,
                });
            }
        }
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
}

/// The keys of a Claude Code settings `permissions` block (2.1.332) this engine reads.
const APPLIED_PERMISSION_KEYS: &[&str] = &[
    "allow",
    "ask",
    "deny",
    "defaultMode",
    "disableBypassPermissionsMode",
    "additionalDirectories",
];

/// The other keys of that block (2.1.332): Claude Code's, not read here (a lint warning says so).
const IGNORED_PERMISSION_KEYS: &[&str] = &[
    "blockReadsOutsideWorkingDirectories",
    "blockFileToolReadsOutsideWorkingDirectories",
    "blockWritesOutsideWorkingDirectories",
    "blockReadsExemptPaths",
    "workingDirectoriesAsGiven",
    "workingDirectoriesExclude",
    "disableAutoMode",
    "denyInsteadOfPrompting",
];

/// The Levenshtein distance of two short strings (for "did you mean").
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
