//! What a call of each Claude Code tool is decided on: its permission subject, from the tool's
//! name and input alone, with no tool to run it.
//!
//! The built-in tools (`builtin-tools`) take their subjects from here, and so do hosts that
//! run their own tools and only want decisions ([`decide_call`]): the same call is decided on
//! the same paths, line or URL whoever asks, without the crates that run tools (an async
//! runtime, the directory walker, the search engine).

use std::path::Path;

use serde_json::Value;
use tool_core::{
    Decision, InputError, PermissionPolicy, PermissionRequest, PermissionSubject, ToolContext,
};

use crate::Error;

/// How a call of a tool is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallModel {
    /// A tool that reads or writes the file named in `field` (Read, Edit, Write, and Claude
    /// Code's MultiEdit, NotebookEdit and LS): decided on that path, like its family.
    File {
        /// The input field holding the path.
        field: &'static str,
        /// Whether the tool writes it (the Edit family) rather than reads it.
        writes: bool,
    },
    /// A search under `path` (or the working directory): Grep; Glob also on its pattern's
    /// literal directories.
    Search {
        /// Whether the pattern names paths too (Glob).
        pattern_names_paths: bool,
    },
    /// A shell command line in `field`: Bash, and Claude Code's Monitor (which Claude Code
    /// checks against the Bash rules).
    Shell {
        /// The input field holding the line.
        field: &'static str,
    },
    /// A fetch of the URL in `url`: WebFetch, decided on the `WebFetch(domain:…)` rules.
    Url,
    /// Any other tool: decided by the rules that name it (a whole-tool rule, an MCP server or
    /// tool pattern, `Agent(type)`, `Skill(name)`), nothing else.
    Named,
}

/// The model of the tool called `tool`.
pub fn call_model(tool: &str) -> CallModel {
    match tool {
        "Read" => CallModel::File {
            field: "file_path",
            writes: false,
        },
        "Edit" | "Write" | "MultiEdit" => CallModel::File {
            field: "file_path",
            writes: true,
        },
        "NotebookEdit" => CallModel::File {
            field: "notebook_path",
            writes: true,
        },
        "LS" => CallModel::File {
            field: "path",
            writes: false,
        },
        "Grep" => CallModel::Search {
            pattern_names_paths: false,
        },
        "Glob" => CallModel::Search {
            pattern_names_paths: true,
        },
        "Bash" => CallModel::Shell { field: "command" },
        "Monitor" => CallModel::Shell { field: "command" },
        "WebFetch" => CallModel::Url,
        _ => CallModel::Named,
    }
}

/// The input fields a call of a modelled tool cannot be decided without (each a string).
fn required(tool: &str) -> &'static [&'static str] {
    match tool {
        "Read" => &["file_path"],
        "LS" => &["path"],
        "Edit" => &["file_path", "old_string", "new_string"],
        "Write" => &["file_path", "content"],
        "MultiEdit" => &["file_path"],
        "NotebookEdit" => &["notebook_path", "new_source"],
        "Grep" | "Glob" => &["pattern"],
        "Bash" => &["command"],
        "WebFetch" => &["url", "prompt"],
        _ => &[],
    }
}

/// The paths a call of a tool this engine does not know the input of (an MCP tool's) names in
/// arguments whose key says they are paths (`path`, `paths`, `file_path`, `source`,
/// `destination`, `directory`, ...; a string, or a list of strings, at the top level), absolute,
/// a relative one taken from `base` (where the server runs), `~/` from `home`. A URL is not a
/// path. These only restrict the call ([`PermissionSubject::ToolPaths`]): a key that is not a
/// path after all can only make a deny or ask rule cover the call.
pub fn path_arguments(input: &Value, base: &Path, home: &Path) -> Vec<std::path::PathBuf> {
    const PATH_WORDS: [&str; 10] = [
        "path", "file", "dir", "folder", "source", "src", "dest", "target", "root", "cwd",
    ];
    let Some(fields) = input.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in fields {
        let key = key.to_ascii_lowercase();
        // A `file:` URI names a file whatever its key (`uri`, `resource`).
        let uris: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for u in uris {
            if let Some(path) = file_uri_path(u) {
                out.push(tool_core::normalize(Path::new(&path)));
            }
        }
        if !PATH_WORDS.iter().any(|w| key.contains(w)) {
            continue;
        }
        let strings: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for s in strings {
            if s.is_empty() || s.contains("://") {
                continue;
            }
            let expanded = match s.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => base.join(s),
            };
            out.push(tool_core::normalize(&expanded));
        }
    }
    out
}

/// The local path a `file:` URI names (`file:///x`, `file://localhost/x`, `file:/x`), its
/// `%XX` escapes decoded; `None` for anything else.
fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri
        .get(..5)
        .filter(|s| s.eq_ignore_ascii_case("file:"))
        .map(|_| &uri[5..])?;
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let slash = after.find('/')?;
            let host = &after[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
            &after[slash..]
        }
        None => rest,
    };
    let path = path.split(['?', '#']).next()?;
    if !path.starts_with('/') {
        return None;
    }
    Some(crate::shell_policy::percent_decoded(path).unwrap_or_else(|| path.to_owned()))
}

/// The paths (read, written) of a call of a tool that is not a file tool: the arguments
/// `declared` names (read, written), else those [`path_arguments`] finds, read, and written
/// too unless the tool only reads. Relative paths are taken from `base`.
pub fn tool_path_arguments(
    input: &Value,
    declared: Option<(&[String], &[String])>,
    read_only: bool,
    base: &Path,
    home: &Path,
) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
    let Some((read, write)) = declared else {
        let found = path_arguments(input, base, home);
        let written = if read_only { Vec::new() } else { found.clone() };
        return (found, written);
    };
    let of = |names: &[String]| -> Vec<std::path::PathBuf> {
        names
            .iter()
            .filter_map(|n| input.get(n)?.as_str())
            .map(|p| tool_core::normalize(&base.join(p)))
            .collect()
    };
    (of(read), of(write))
}

/// The subject a call of `tool` with `input` is decided on, and whether it only reads.
/// A field the model left out gives no subject (the call is then decided by name).
pub fn call_subject(tool: &str, input: &Value, ctx: &ToolContext) -> (PermissionSubject, bool) {
    let text = |field: &str| input.get(field).and_then(Value::as_str);
    match call_model(tool) {
        CallModel::File { field, writes } => match text(field) {
            Some(p) if writes => (PermissionSubject::WritePaths(ctx.decided_paths(p)), false),
            Some(p) => (PermissionSubject::ReadPaths(ctx.decided_paths(p)), true),
            None => (PermissionSubject::Nothing, !writes),
        },
        CallModel::Search {
            pattern_names_paths,
        } => {
            let root = text("path").map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve_path(p));
            let pattern = text("pattern").filter(|p| !p.is_empty() && pattern_names_paths);
            // An absolute Glob pattern is searched in the directory before its first wildcard,
            // which is what Claude Code decides on and names (`path` is not used); the pattern
            // itself is a subject too, for the rules to see what it names.
            if let Some(p) = pattern.filter(|p| Path::new(p).is_absolute()) {
                let base = split_absolute_glob(p).map_or_else(|| ctx.resolve_path(p), |(b, _)| b);
                let named = ctx.resolve_path(p);
                let mut paths = vec![base];
                if !paths.contains(&named) {
                    paths.push(named);
                }
                return (PermissionSubject::ReadPaths(paths), true);
            }
            let mut paths = vec![root.clone()];
            if let Some(pattern) = pattern {
                // Each alternative of `{a,b}` names its own paths (the rules then see
                // `secrets/**` in `{secrets,src}/**`); wildcards are matched against the rules.
                // A relative pattern matches only below the directory searched, so an
                // alternative that climbs out of it (`../*`) names nothing (Claude Code lists
                // no files for it, and asks nothing).
                for alt in tool_shell::expand::brace_alternatives(pattern) {
                    let named = tool_core::normalize(&root.join(&alt));
                    if named.starts_with(&root) && !paths.contains(&named) {
                        paths.push(named);
                    }
                }
            }
            (PermissionSubject::ReadPaths(paths), true)
        }
        CallModel::Shell { field } => {
            let line = text(field).unwrap_or_default();
            (
                PermissionSubject::ShellCommand(line.to_owned()),
                tool_shell::is_read_only(line),
            )
        }
        CallModel::Url => match text("url") {
            Some(url) => (PermissionSubject::Url(url.to_owned()), true),
            None => (PermissionSubject::Nothing, true),
        },
        CallModel::Named => (PermissionSubject::Nothing, false),
    }
}

/// An absolute glob pattern split as Claude Code splits it: the directory it is searched in
/// (the text before its first wildcard, cut at its last `/`, normalized) and the pattern to
/// match there. A pattern with no wildcard is a directory and a file name. `None` for a
/// relative pattern. Glob searches there, and the decision is about that directory.
pub fn split_absolute_glob(pattern: &str) -> Option<(std::path::PathBuf, String)> {
    if !Path::new(pattern).is_absolute() {
        return None;
    }
    let literal_end = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let cut = pattern[..literal_end].rfind('/').unwrap_or(0);
    let base = if cut == 0 { "/" } else { &pattern[..cut] };
    Some((
        tool_core::normalize(Path::new(base)),
        pattern[cut + 1..].to_owned(),
    ))
}

/// Decide one call of any Claude Code tool from its name and input, with no tool to run it: the
/// subject from [`call_subject`] (a Monitor line is decided as the Bash call of it), after the
/// fields it needs are checked. A host that runs its own tools asks this; one with a
/// registry of tools asks [`decide`](crate::decide), which checks the whole input schema.
/// The policy's default mode and directories apply where `ctx` leaves them open
/// ([`ToolContext::with_policy_defaults`]).
///
/// # Errors
///
/// [`Error::InvalidInput`] when the input is not an object or lacks a field the call is decided
/// on (or has it with another type), with the text Claude Code shows the model.
pub fn decide_call(
    policy: &dyn PermissionPolicy,
    tool: &str,
    input: &Value,
    ctx: &ToolContext,
) -> Result<Decision, Error> {
    let ctx = &*ctx.with_policy_defaults(policy);
    let Value::Object(fields) = input else {
        return Err(Error::InvalidInput(
            InputError::Unparsable {
                raw: input.to_string(),
            }
            .render(tool),
        ));
    };
    let (mut missing, mut mismatched) = (Vec::new(), Vec::new());
    for field in required(tool) {
        match fields.get(*field) {
            None => missing.push((*field).to_owned()),
            Some(Value::String(_)) => {}
            Some(other) => mismatched.push((
                (*field).to_owned(),
                "string".to_owned(),
                tool_core::schema::received_type_word(other).to_owned(),
            )),
        }
    }
    if !missing.is_empty() || !mismatched.is_empty() {
        return Err(Error::InvalidInput(
            InputError::Invalid {
                missing,
                unexpected: Vec::new(),
                mismatched,
                other: Vec::new(),
            }
            .render(tool),
        ));
    }
    // Monitor's line is decided as Bash running it, as Claude Code checks it; without a line,
    // by its name.
    let as_bash;
    let (tool, input) = match (call_model(tool), tool) {
        (CallModel::Shell { field }, t) if t != "Bash" => match fields.get(field) {
            Some(line @ Value::String(_)) => {
                as_bash = serde_json::json!({ "command": line });
                ("Bash", &as_bash)
            }
            _ => (tool, input),
        },
        _ => (tool, input),
    };
    let (subject, read_only) = match (call_model(tool), tool) {
        (CallModel::Shell { .. }, t) if t != "Bash" => (PermissionSubject::Nothing, false),
        _ => call_subject(tool, input, ctx),
    };
    let request = PermissionRequest {
        tool_name: tool,
        input,
        subject: &subject,
        read_only,
        requires_user_interaction: false,
        ctx,
    };
    Ok(policy.decide(&request))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_arguments_are_found_by_key_and_resolved_from_the_base() {
        let base = Path::new("/w/p");
        let home = Path::new("/h");
        let input = serde_json::json!({
            "path": "a/../b.txt",
            "file_path": "/abs/c",
            "paths": ["d", 5, "~/e"],
            "sourceDir": "src",
            "Destination": "/out",
            "url": "https://x/y",
            "content": "not/a/path",
            "target": "",
            "count": 3,
            "nested": {"path": "deep"},
        });
        let mut found = path_arguments(&input, base, home);
        found.sort();
        let want: Vec<std::path::PathBuf> =
            ["/abs/c", "/h/e", "/out", "/w/p/b.txt", "/w/p/d", "/w/p/src"]
                .iter()
                .map(std::path::PathBuf::from)
                .collect();
        assert_eq!(found, want);
        assert!(path_arguments(&serde_json::json!("path"), base, home).is_empty());
    }
}
