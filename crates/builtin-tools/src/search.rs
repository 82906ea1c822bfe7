//! What Grep and Glob share: ripgrep's walk (the `ignore` crate) with ripgrep's own override
//! and file-type semantics, so the files searched and the errors reported match `rg`'s.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::overrides::OverrideBuilder;
use ignore::types::{Types, TypesBuilder};
use ignore::{WalkBuilder, WalkState};
use tool_core::ToolCallError;

/// Directories of version-control systems that Grep never searches (Claude Code passes
/// `--glob !.git` and friends to ripgrep).
pub(crate) const VCS_DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// How a search walks the tree.
pub(crate) struct WalkSpec<'a> {
    /// Where to start (a directory or a single file).
    pub root: &'a Path,
    /// Where the globs are relative to: the directory searched (Glob runs ripgrep there), or,
    /// when `None`, the working directory for a search below it (Grep).
    pub glob_base: Option<&'a Path>,
    /// Override globs in ripgrep's `--glob` form (`!x` excludes).
    pub globs: Vec<String>,
    /// The ripgrep file types to select ([`file_types`]).
    pub types: Types,
    /// Respect `.gitignore` and friends.
    pub respect_ignores: bool,
    /// The call's context: its path policy says which files are unreadable (never visited).
    pub ctx: &'a tool_core::ToolContext,
}

/// ripgrep's file types with `file_type` selected (all files when none is), or ripgrep's error
/// for a type it does not know.
pub(crate) fn file_types(file_type: Option<&str>) -> Result<Types, ToolCallError> {
    let mut types = TypesBuilder::new();
    types.add_defaults();
    if let Some(t) = file_type {
        types.select(t);
    }
    types.build().map_err(|e| rg_rejected(&e.to_string()))
}

/// ripgrep's error for a glob with an alternate group inside another (`{a,{b,c}}`): the glob
/// engine of the ripgrep Claude Code runs refuses them, where this one would accept them.
pub(crate) fn nested_alternates(glob: &str) -> Option<String> {
    let (mut depth, mut escaped, mut in_class) = (0usize, false, false);
    for c in glob.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => {
                depth += 1;
                if depth > 1 {
                    return Some(format!(
                        "error parsing glob '{glob}': nested alternate groups are not allowed"
                    ));
                }
            }
            '}' if !in_class => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// ripgrep's error for the first of `globs` it would refuse, if any.
pub(crate) fn check_globs(globs: &[String]) -> Result<(), ToolCallError> {
    let mut overrides = OverrideBuilder::new("/");
    for g in globs {
        if let Some(e) = nested_alternates(g) {
            return Err(rg_rejected(&e));
        }
        overrides.add(g).map_err(|e| rg_rejected(&e.to_string()))?;
    }
    Ok(())
}

/// The error text Claude Code gives when ripgrep refuses its arguments.
pub(crate) fn rg_rejected(message: &str) -> ToolCallError {
    ToolCallError::new(format!(
        "Search failed — ripgrep rejected the pattern, glob, or file type without searching:\nrg: {message}"
    ))
}

/// Walk in parallel: each walker thread makes its own visitor with `make_visit` (so it can keep
/// a searcher and buffers) and calls it for every file that passes the filters. Returns what
/// the visits collected, in no particular order.
pub(crate) fn walk_files<T, V>(
    spec: &WalkSpec<'_>,
    make_visit: impl Fn() -> V + Sync,
) -> Result<Vec<T>, ToolCallError>
where
    T: Send,
    V: FnMut(&Path, &dyn Fn() -> Option<SystemTime>) -> Option<T> + Send,
{
    // Globs match paths relative to the directory ripgrep runs in: the directory searched
    // (Glob, and Grep in a directory; recorded: explore seed 12, Grep's `sub/**` in `sub`
    // finds nothing), else the working directory when the search is below it.
    let base = match spec.glob_base {
        Some(b) => b,
        None if spec.root.starts_with(&spec.ctx.cwd) => spec.ctx.cwd.as_path(),
        None => spec.root,
    };
    let mut overrides = OverrideBuilder::new(base);
    for g in &spec.globs {
        if let Some(e) = nested_alternates(g) {
            return Err(rg_rejected(&e));
        }
        overrides.add(g).map_err(|e| rg_rejected(&e.to_string()))?;
    }
    let overrides = overrides.build().map_err(|e| rg_rejected(&e.to_string()))?;
    let mut builder = WalkBuilder::new(spec.root);
    if spec.respect_ignores {
        // ripgrep's own ignore file beside `.ignore` and `.gitignore` (recorded:
        // rg_ignore_files).
        builder.add_custom_ignore_filename(".rgignore");
    }
    builder
        .standard_filters(spec.respect_ignores)
        .hidden(false)
        .overrides(overrides)
        .types(spec.types.clone())
        .threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .min(12),
        );
    let ctx = spec.ctx.clone();
    builder.filter_entry(move |e| !ctx.path_policy.search_hidden(e.path(), &ctx));
    let out = Mutex::new(Vec::new());
    let make_visit = &make_visit;
    builder.build_parallel().run(|| {
        let out = &out;
        let mut visit = make_visit();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            // Only visitors that need the mtime pay for the stat.
            let mtime = || entry.metadata().ok().and_then(|m| m.modified().ok());
            if let Some(t) = visit(entry.path(), &mtime) {
                out.lock().unwrap_or_else(|p| p.into_inner()).push(t);
            }
            WalkState::Continue
        })
    });
    Ok(out.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// A path for an error text: as the model gave it, else the resolved one.
pub(crate) fn shown_path(given: Option<&str>, resolved: &Path) -> String {
    given.map_or_else(|| resolved.display().to_string(), str::to_owned)
}

/// A path as the model sees it: relative to the cwd when inside it, else absolute.
pub(crate) fn display_relative(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// `a` against `b` as JavaScript's `localeCompare` orders them (ICU's root collation), which is
/// how Claude Code breaks ties between files of equal mtime in Grep's file list: symbols before
/// digits before letters, letters compared without case first (`a.txt`, `A.txt`, `b.txt`), then
/// lower case before upper case.
pub(crate) fn locale_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn primary(c: char) -> (u8, u32) {
        // ICU's order of the ASCII symbols (they sort before digits and letters).
        const SYMBOLS: &str = "\t\n\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
        if let Some(i) = SYMBOLS.find(c) {
            return (0, i as u32);
        }
        if c.is_ascii_digit() {
            return (1, c as u32);
        }
        if c.is_alphabetic() {
            // Accents do not count at this level: `é` sorts as `e` (recorded: explore seed 11).
            let base = base_letter(c);
            let lower = base.to_lowercase().next().unwrap_or(base);
            return (2, lower as u32);
        }
        (0, 0x100 + c as u32)
    }
    let key = |s: &str| s.chars().map(primary).collect::<Vec<_>>();
    key(a).cmp(&key(b)).then_with(|| {
        // Same letters: unaccented first, then lower case first, then code points.
        let rest = |s: &str| {
            s.chars()
                .map(|c| (base_letter(c) != c, c.is_uppercase(), c as u32))
                .collect::<Vec<_>>()
        };
        rest(a).cmp(&rest(b))
    })
}

/// The Latin letters with a diacritic and the base letters they decompose to (Unicode's
/// canonical decompositions of U+00C0 to U+024F).
const ACCENTED: &str = "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳ";
const BASES: &str = "AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYy";

/// The letter `c` is written on, without its diacritics (itself when it has none).
fn base_letter(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    ACCENTED
        .chars()
        .position(|a| a == c)
        .and_then(|i| BASES.chars().nth(i))
        .unwrap_or(c)
}

/// A file found, with its modification time for sorting.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub path: PathBuf,
    pub mtime: Option<SystemTime>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_order_folds_case_first_then_puts_lower_case_first() {
        let mut v = vec![
            "b.txt",
            "sub/a.txt",
            "A.txt",
            "other/q.txt",
            "a.txt",
            "c.txt",
            "a_b",
            "a-b",
            "a1",
        ];
        v.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(
            v,
            [
                "a_b",
                "a-b",
                "a.txt",
                "A.txt",
                "a1",
                "b.txt",
                "c.txt",
                "other/q.txt",
                "sub/a.txt"
            ]
        );
    }

    #[test]
    fn accents_count_after_letters_and_before_case() {
        // Claude Code's order of files of equal mtime (recorded: explore seed 11's triage).
        let mut v = vec![
            "ünï", "uz", "éa", "Ub", "eb", "ua", "日本", "Zed", "sub/ü", "sub/z", "va", "1", "_x",
        ];
        v.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(
            v,
            [
                "_x", "1", "éa", "eb", "sub/ü", "sub/z", "ua", "Ub", "ünï", "uz", "va", "Zed",
                "日本"
            ]
        );
        assert_eq!(locale_cmp("e", "é"), std::cmp::Ordering::Less);
        assert_eq!(locale_cmp("é", "E"), std::cmp::Ordering::Greater);
    }
}
