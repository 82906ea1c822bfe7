//! The sandbox settings: Claude Code's `sandbox` object in its settings files, and the same
//! keys in a TOML policy's `[sandbox]` table (snake case).
//!
//! | Claude Code JSON | TOML | meaning |
//! |---|---|---|
//! | `enabled` | `enabled` | sandbox Bash (toolgate: on by default where bubblewrap works; `false` turns it off) |
//! | `failIfUnavailable` | `fail_if_unavailable` | refuse Bash where the sandbox cannot start |
//! | `excludedCommands` | `excluded_commands` | Bash patterns (`docker *`) of lines run outside the sandbox and unsupervised |
//! | `allowUnsandboxedCommands` | `allow_unsandboxed_commands` | whether a call may ask to run outside (`dangerouslyDisableSandbox`) |
//! | `filesystem.allowWrite` … `denyRead` | `[sandbox.filesystem] allow_write` … | paths writable, read-only, readable again, hidden |
//! | `network.allowedDomains`, `deniedDomains` | `[sandbox.network] allowed_domains`, `denied_domains` | hosts reachable through the filter (`*.x`, `:port`) |
//! | `network.allowAllUnixSockets` | `allow_all_unix_sockets` | let processes open Unix sockets |
//!
//! Booleans take the value of the highest layer that sets them; lists merge across layers.
//! Settings that loosen the sandbox (`enabled = false`, exclusions, paths made writable or
//! readable, domains allowed, Unix sockets, unsandboxed calls) from a project's own files apply
//! only once the project is trusted, like its allow rules; settings that tighten it always
//! apply.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Error;
use crate::policy::Layer;
use crate::shell_rule::ShellPattern;

/// One setting with where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Setting<T> {
    pub(crate) value: T,
    pub(crate) layer: Layer,
    /// `sandbox.enabled in /p/.claude/settings.json`, for messages.
    pub(crate) source: String,
}

/// A host pattern of the network lists: `example.com`, `*.example.com`, `[::1]`, with an
/// optional `:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPattern {
    host: String,
    subdomains: bool,
    port: Option<u16>,
}

impl HostPattern {
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (h, after) = rest
                .split_once(']')
                .ok_or_else(|| format!("`{s}`: an IPv6 address needs its closing `]`"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p.parse().map_err(|_| format!("`{s}`: bad port"))?),
                None if after.is_empty() => None,
                None => return Err(format!("`{s}`: unexpected text after `]`")),
            };
            (h.to_ascii_lowercase(), port)
        } else {
            match s.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_owned(),
                    Some(p.parse().map_err(|_| format!("`{s}`: bad port"))?),
                ),
                None => (s.to_owned(), None),
            }
        };
        let (subdomains, host) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest.to_owned()),
            None => (false, host),
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() || host.contains(['*', '/', ' ', '@']) {
            return Err(format!(
                "`{s}` is not a host pattern (`example.com`, `*.example.com`, optionally `:port`)"
            ));
        }
        Ok(Self {
            host,
            subdomains,
            port,
        })
    }

    /// Does the pattern cover `host` (lower case) on `port`?
    pub(crate) fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.'))
        } else {
            host == self.host
        }
    }
}

/// The sandbox settings of all layers.
#[derive(Debug, Clone, Default)]
pub(crate) struct SandboxSettings {
    pub(crate) enabled: Vec<Setting<bool>>,
    pub(crate) fail_if_unavailable: Vec<Setting<bool>>,
    pub(crate) allow_unsandboxed: Vec<Setting<bool>>,
    pub(crate) allow_all_unix_sockets: Vec<Setting<bool>>,
    pub(crate) excluded: Vec<Setting<Arc<ShellPattern>>>,
    /// Absolute paths (`/**` and a trailing `/` dropped); a pattern with a wildcard is a
    /// gitignore line anchored at `/`.
    pub(crate) allow_write: Vec<Setting<String>>,
    pub(crate) deny_write: Vec<Setting<String>>,
    pub(crate) allow_read: Vec<Setting<String>>,
    pub(crate) deny_read: Vec<Setting<String>>,
    pub(crate) allowed_domains: Vec<Setting<HostPattern>>,
    pub(crate) denied_domains: Vec<Setting<HostPattern>>,
    pub(crate) host_proc: Vec<Setting<bool>>,
    /// `ignoreViolations`: a command substring (or `*`) and the report texts it keeps quiet.
    pub(crate) ignore_violations: Vec<Setting<(String, Vec<String>)>>,
    /// Keys read but not honoured, with why (for load warnings).
    pub(crate) unhonoured: Vec<(String, String)>,
}

/// The value of the highest layer that set a boolean, with its source.
pub(crate) fn highest(values: &[Setting<bool>]) -> Option<&Setting<bool>> {
    values.iter().min_by_key(|s| s.layer)
}

impl SandboxSettings {
    /// Drop what a layer that is not trusted may not loosen. `trusted`: the project's own
    /// layers are trusted. Returns what was dropped, for the load warnings.
    pub(crate) fn without_untrusted(&self, trusted: bool) -> (Self, Vec<String>) {
        let mut s = self.clone();
        let mut dropped = Vec::new();
        let keep = |layer: Layer| trusted || !layer.needs_trust();
        let mut filter_bool = |v: &mut Vec<Setting<bool>>, loosening: bool| {
            v.retain(|x| {
                let ok = x.value != loosening || keep(x.layer);
                if !ok {
                    dropped.push(x.source.clone());
                }
                ok
            });
        };
        filter_bool(&mut s.enabled, false);
        filter_bool(&mut s.allow_unsandboxed, true);
        filter_bool(&mut s.allow_all_unix_sockets, true);
        filter_bool(&mut s.host_proc, true);
        fn retain_trusted<T>(v: &mut Vec<Setting<T>>, trusted: bool, dropped: &mut Vec<String>) {
            v.retain(|x| {
                let ok = trusted || !x.layer.needs_trust();
                if !ok {
                    dropped.push(x.source.clone());
                }
                ok
            });
        }
        retain_trusted(&mut s.excluded, trusted, &mut dropped);
        retain_trusted(&mut s.allow_write, trusted, &mut dropped);
        retain_trusted(&mut s.allow_read, trusted, &mut dropped);
        retain_trusted(&mut s.allowed_domains, trusted, &mut dropped);
        (s, dropped)
    }
}

/// Where a path setting points: `//x` and `/x` absolute, `~/x` the home directory (kept as
/// `~/x`, expanded with the session's home when the plan is made), anything else relative to
/// `base` (the project root for a project's files; for a user's settings, the directory of the
/// file). A trailing `/` or `/**` is dropped.
pub(crate) fn resolve_path_setting(raw: &str, base: &Path) -> Result<String, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err("an empty path".into());
    }
    let t = t.strip_suffix("/**").unwrap_or(t);
    let t = if t.len() > 1 {
        t.trim_end_matches('/')
    } else {
        t
    };
    if t == "~" || t.starts_with("~/") {
        let rest = tool_core::normalize(
            &Path::new("/").join(t.trim_start_matches('~').trim_start_matches('/')),
        );
        let rest = rest.to_string_lossy();
        return Ok(format!("~{}", if rest == "/" { "" } else { &rest }));
    }
    let abs: PathBuf = if let Some(rest) = t.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if t.starts_with('/') {
        PathBuf::from(t)
    } else {
        base.join(t.strip_prefix("./").unwrap_or(t))
    };
    Ok(tool_core::normalize(&abs).to_string_lossy().into_owned())
}

/// A path setting with `~` expanded to the session's home.
pub(crate) fn expand_home(p: &str, ctx: &tool_core::ToolContext) -> PathBuf {
    match p.strip_prefix('~') {
        Some(rest) => ctx.home.join(rest.trim_start_matches('/')),
        None => PathBuf::from(p),
    }
}

/// A path setting has a wildcard.
pub(crate) fn has_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// Which list a path setting goes to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PathList {
    AllowWrite,
    DenyWrite,
    AllowRead,
    DenyRead,
}

impl SandboxSettings {
    pub(crate) fn add_bool(&mut self, key: &str, value: bool, layer: Layer, source: String) {
        let s = Setting {
            value,
            layer,
            source,
        };
        match key {
            "enabled" => self.enabled.push(s),
            "enableWeakerNestedSandbox" => self.host_proc.push(s),
            "failIfUnavailable" => self.fail_if_unavailable.push(s),
            "allowUnsandboxedCommands" => self.allow_unsandboxed.push(s),
            _ => self.allow_all_unix_sockets.push(s),
        }
    }

    pub(crate) fn add_path(&mut self, list: PathList, path: String, layer: Layer, source: String) {
        let s = Setting {
            value: path,
            layer,
            source,
        };
        match list {
            PathList::AllowWrite => self.allow_write.push(s),
            PathList::DenyWrite => self.deny_write.push(s),
            PathList::AllowRead => self.allow_read.push(s),
            PathList::DenyRead => self.deny_read.push(s),
        }
    }
}

/// Read Claude Code's `sandbox` object (its JSON value) into `settings`. `base` is where
/// relative paths start, `file` where the object came from.
pub(crate) fn from_claude_json(
    settings: &mut SandboxSettings,
    value: &serde_json::Value,
    layer: Layer,
    file: Option<&Path>,
    base: &Path,
) -> Result<(), Error> {
    let shape = |what: String| Error::Shape {
        file: file.map(Path::to_path_buf),
        message: what,
    };
    let source = |key: &str| match file {
        Some(f) => format!("sandbox.{key} in {}", f.display()),
        None => format!("sandbox.{key}"),
    };
    let obj = value
        .as_object()
        .ok_or_else(|| shape("`sandbox` must be an object".into()))?;
    for (key, v) in obj {
        match key.as_str() {
            "enabled" | "failIfUnavailable" | "allowUnsandboxedCommands"
            | "enableWeakerNestedSandbox" => {
                let b = v
                    .as_bool()
                    .ok_or_else(|| shape(format!("`sandbox.{key}` must be true or false")))?;
                settings.add_bool(key, b, layer, source(key));
            }
            "excludedCommands" => {
                for item in strings(v, &format!("sandbox.{key}"), &shape)? {
                    let content = item
                        .strip_prefix("Bash(")
                        .and_then(|i| i.strip_suffix(')'))
                        .unwrap_or(item);
                    let pattern = ShellPattern::parse(content)
                        .map_err(|e| shape(format!("`sandbox.excludedCommands`: `{item}`: {e}")))?;
                    settings.excluded.push(Setting {
                        value: Arc::new(pattern),
                        layer,
                        source: format!("{} (`{item}`)", source(key)),
                    });
                }
            }
            "filesystem" => {
                let fs = v
                    .as_object()
                    .ok_or_else(|| shape("`sandbox.filesystem` must be an object".into()))?;
                for (k, list) in fs {
                    let which = match k.as_str() {
                        "allowWrite" => PathList::AllowWrite,
                        "denyWrite" => PathList::DenyWrite,
                        "allowRead" => PathList::AllowRead,
                        "denyRead" => PathList::DenyRead,
                        other => {
                            settings.unhonoured.push((
                                format!("sandbox.filesystem.{other}"),
                                "toolgate does not read this key".into(),
                            ));
                            continue;
                        }
                    };
                    for item in strings(list, &format!("sandbox.filesystem.{k}"), &shape)? {
                        let p = resolve_path_setting(item, base)
                            .map_err(|e| shape(format!("`sandbox.filesystem.{k}`: {e}")))?;
                        settings.add_path(which, p, layer, format!("{} (`{item}`)", source(&format!("filesystem.{k}"))));
                    }
                }
            }
            "network" => {
                let net = v
                    .as_object()
                    .ok_or_else(|| shape("`sandbox.network` must be an object".into()))?;
                for (k, item) in net {
                    match k.as_str() {
                        "allowedDomains" | "deniedDomains" => {
                            for d in strings(item, &format!("sandbox.network.{k}"), &shape)? {
                                let p = HostPattern::parse(d)
                                    .map_err(|e| shape(format!("`sandbox.network.{k}`: {e}")))?;
                                let s = Setting {
                                    value: p,
                                    layer,
                                    source: format!("{} (`{d}`)", source(&format!("network.{k}"))),
                                };
                                if k == "allowedDomains" {
                                    settings.allowed_domains.push(s);
                                } else {
                                    settings.denied_domains.push(s);
                                }
                            }
                        }
                        "allowAllUnixSockets" => {
                            let b = item.as_bool().ok_or_else(|| {
                                shape("`sandbox.network.allowAllUnixSockets` must be true or false".into())
                            })?;
                            settings.add_bool(k, b, layer, source("network.allowAllUnixSockets"));
                        }
                        other => settings.unhonoured.push((
                            format!("sandbox.network.{other}"),
                            "not used by toolgate's network filter".into(),
                        )),
                    }
                }
            }
            "ignoreViolations" => {
                let map = v.as_object().ok_or_else(|| {
                    shape("`sandbox.ignoreViolations` must map command text to lists of strings".into())
                })?;
                for (cmd, list) in map {
                    let texts = strings(list, &format!("sandbox.ignoreViolations.{cmd}"), &shape)?
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    settings.ignore_violations.push(Setting {
                        value: (cmd.clone(), texts),
                        layer,
                        source: source(key),
                    });
                }
            }
            "autoAllowBashIfSandboxed" => settings.unhonoured.push((
                "sandbox.autoAllowBashIfSandboxed".into(),
                "toolgate decides every Bash call from its rules; the sandbox bounds what an analysis miss can do, it does not waive prompts".into(),
            )),
            other => settings.unhonoured.push((
                format!("sandbox.{other}"),
                "toolgate does not read this key".into(),
            )),
        }
    }
    Ok(())
}

fn strings<'a>(
    v: &'a serde_json::Value,
    key: &str,
    shape: &dyn Fn(String) -> Error,
) -> Result<Vec<&'a str>, Error> {
    v.as_array()
        .ok_or_else(|| shape(format!("`{key}` must be a list of strings")))?
        .iter()
        .map(|i| {
            i.as_str()
                .ok_or_else(|| shape(format!("`{key}` must be a list of strings")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns_match_whole_labels_and_ports() {
        let p = HostPattern::parse("*.Example.com.").unwrap_or_else(|e| panic!("{e}"));
        assert!(p.matches("api.example.com", 443));
        assert!(!p.matches("example.com", 443));
        assert!(!p.matches("evilexample.com", 443));
        let p = HostPattern::parse("docs.rs:443").unwrap_or_else(|e| panic!("{e}"));
        assert!(p.matches("docs.rs", 443) && !p.matches("docs.rs", 80));
        let p = HostPattern::parse("[::1]:8080").unwrap_or_else(|e| panic!("{e}"));
        assert!(p.matches("::1", 8080));
        assert!(HostPattern::parse("a/b").is_err());
    }

    #[test]
    fn path_settings_resolve_like_claude_code() {
        let base = Path::new("/w/p");
        for (raw, want) in [
            ("/etc/x", "/etc/x"),
            ("//etc/x/", "/etc/x"),
            ("~/.aws/**", "~/.aws"),
            ("~/a/../b", "~/b"),
            ("./build", "/w/p/build"),
            ("out/../dist", "/w/p/dist"),
        ] {
            assert_eq!(
                resolve_path_setting(raw, base).unwrap_or_else(|e| panic!("{e}")),
                want,
                "{raw}"
            );
        }
        let ctx = tool_core::ToolContext::new("/w/p", "/home/u", "/tmp/r");
        assert_eq!(expand_home("~/.aws", &ctx), Path::new("/home/u/.aws"));
        assert_eq!(expand_home("/etc", &ctx), Path::new("/etc"));
    }
}
