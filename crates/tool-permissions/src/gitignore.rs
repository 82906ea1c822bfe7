//! Gitignore lines matched against relative paths: the pattern language of Claude Code's
//! `Read(...)` and `Edit(...)` rules and of the sandbox's path settings.
//!
//! The semantics are git's (`gitignore(5)`), as ripgrep's `ignore` crate implements them, so
//! that a rule means what it means in Claude Code: `#` starts a comment, trailing unescaped
//! spaces are dropped, `!` negates, a leading `/` (or any `/` before the last character)
//! anchors the line at the root, a line without one matches at any depth, a trailing `/`
//! matches only directories, `a/**` matches what is inside `a` but not `a` itself, `*` and `?`
//! never cross a `/`, and the last line that matches decides. A path matches when it or one of
//! its parent directories does. Only the matcher is here (on `globset`): no directory walker.

use std::path::Path;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

/// One line as written and what it compiled to.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    original: String,
    negated: bool,
    dirs_only: bool,
}

impl Line {
    /// The line as it was added.
    pub(crate) fn original(&self) -> &str {
        &self.original
    }
}

/// What matching a path found.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Match<'a> {
    /// No line matches.
    None,
    /// The last matching line is a pattern.
    Ignore(&'a Line),
    /// The last matching line is a negated (`!`) pattern.
    Whitelist,
}

impl Match<'_> {
    /// Whether a (non-negated) pattern matched.
    pub(crate) fn is_ignore(&self) -> bool {
        matches!(self, Match::Ignore(_))
    }
}

/// Lines being collected into a [`Gitignore`].
#[derive(Debug, Clone)]
pub(crate) struct GitignoreBuilder {
    set: GlobSetBuilder,
    lines: Vec<Line>,
    case_insensitive: bool,
}

/// A compiled set of gitignore lines.
#[derive(Debug, Clone)]
pub(crate) struct Gitignore {
    set: GlobSet,
    lines: Vec<Line>,
}

impl GitignoreBuilder {
    /// No lines yet, matched with case.
    pub(crate) fn new() -> Self {
        Self {
            set: GlobSetBuilder::new(),
            lines: Vec::new(),
            case_insensitive: false,
        }
    }

    /// Compare the lines added from now on without regard to case.
    pub(crate) fn case_insensitive(&mut self, yes: bool) -> &mut Self {
        self.case_insensitive = yes;
        self
    }

    /// Add one line; comments and blank lines add nothing. Fails on a pattern that is not a
    /// glob (an unclosed `{`, a bad range), naming it.
    pub(crate) fn add_line(&mut self, line: &str) -> Result<&mut Self, String> {
        if line.starts_with('#') {
            return Ok(self);
        }
        let mut rest = trim_trailing_spaces(line);
        if rest.is_empty() {
            return Ok(self);
        }
        let original = rest.to_owned();
        let (mut negated, mut anchored) = (false, false);
        if rest.starts_with("\\!") || rest.starts_with("\\#") {
            rest = &rest[1..];
            anchored = rest.starts_with('/');
        } else {
            if let Some(r) = rest.strip_prefix('!') {
                negated = true;
                rest = r;
            }
            if let Some(r) = rest.strip_prefix('/') {
                anchored = true;
                rest = r;
            }
        }
        // `!` or `/` alone leaves no pattern: git ignores such a line.
        if rest.is_empty() {
            return Ok(self);
        }
        let mut dirs_only = false;
        if let Some(r) = rest.strip_suffix('/') {
            dirs_only = true;
            rest = r.strip_suffix('\\').unwrap_or(r);
        }
        let mut glob = rest.to_owned();
        // A line without a slash matches at any depth (unless it already says so).
        let anywhere = !(anchored || rest.contains('/') || glob.starts_with("**/") || glob == "**");
        if anywhere {
            glob = format!("**/{glob}");
        }
        if glob.ends_with("/**") {
            glob.push_str("/*");
        }
        let compiled = GlobBuilder::new(&glob)
            .literal_separator(true)
            .case_insensitive(self.case_insensitive)
            .backslash_escape(true)
            .allow_unclosed_class(true)
            .build()
            .map_err(|e| format!("`{original}`: {}", e.kind()))?;
        self.set.add(compiled);
        self.lines.push(Line {
            original,
            negated,
            dirs_only,
        });
        Ok(self)
    }

    /// The matcher of the lines added.
    pub(crate) fn build(&self) -> Result<Gitignore, String> {
        Ok(Gitignore {
            set: self.set.build().map_err(|e| e.to_string())?,
            lines: self.lines.clone(),
        })
    }
}

impl Gitignore {
    /// A matcher of no lines.
    pub(crate) fn empty() -> Self {
        Self {
            set: GlobSet::empty(),
            lines: Vec::new(),
        }
    }

    /// The last line matching `path` (relative to the root the lines are anchored at), or
    /// else the last matching one of its parent directories, nearest first.
    pub(crate) fn matched_path_or_any_parents(&self, path: &Path, is_dir: bool) -> Match<'_> {
        if self.lines.is_empty() {
            return Match::None;
        }
        let mut path = path.strip_prefix("./").unwrap_or(path);
        let found = self.matched_here(path, is_dir);
        if !matches!(found, Match::None) {
            return found;
        }
        while let Some(parent) = path.parent() {
            let found = self.matched_here(parent, true);
            if !matches!(found, Match::None) {
                return found;
            }
            path = parent;
        }
        Match::None
    }

    fn matched_here(&self, path: &Path, is_dir: bool) -> Match<'_> {
        let hits = self.set.matches_candidate(&Candidate::new(path));
        for &i in hits.iter().rev() {
            let line = &self.lines[i];
            if line.dirs_only && !is_dir {
                continue;
            }
            return if line.negated {
                Match::Whitelist
            } else {
                Match::Ignore(line)
            };
        }
        Match::None
    }
}

/// `line` without its trailing spaces, except those a backslash escapes.
fn trim_trailing_spaces(line: &str) -> &str {
    let bytes = line.as_bytes();
    let (mut i, mut spaces_from) = (0, None);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 >= bytes.len() => return line,
            b'\\' => {
                i += 2;
                spaces_from = None;
            }
            b' ' => {
                spaces_from.get_or_insert(i);
                i += 1;
            }
            _ => {
                spaces_from = None;
                i += 1;
            }
        }
    }
    &line[..spaces_from.unwrap_or(line.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(lines: &[String], ci: bool, path: &str, is_dir: bool) -> Option<(bool, String)> {
        let mut b = GitignoreBuilder::new();
        b.case_insensitive(ci);
        for l in lines {
            b.add_line(l).ok()?;
        }
        match b
            .build()
            .ok()?
            .matched_path_or_any_parents(Path::new(path), is_dir)
        {
            Match::None => Some((false, String::new())),
            Match::Ignore(l) => Some((true, l.original().to_owned())),
            Match::Whitelist => Some((false, "!".to_owned())),
        }
    }

    fn reference(lines: &[String], ci: bool, path: &str, is_dir: bool) -> Option<(bool, String)> {
        let mut b = ignore::gitignore::GitignoreBuilder::new("/");
        b.case_insensitive(ci).ok()?;
        for l in lines {
            b.add_line(None, l).ok()?;
        }
        let g = b.build().ok()?;
        Some(match g.matched_path_or_any_parents(path, is_dir) {
            ignore::Match::None => (false, String::new()),
            ignore::Match::Ignore(l) => (true, l.original().to_owned()),
            ignore::Match::Whitelist(_) => (false, "!".to_owned()),
        })
    }

    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a", "b", "A", ".env", "*", "**", "?", "/", "!", "#", "\\", " ", "[ab]", "[!a]",
            "{a,b}", "x.rs", "*.rs", "src", "-", "[", "]", "\\ ", ".",
        ])
        .prop_map(str::to_owned)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The same lines give the same verdict and the same deciding line as the `ignore`
        /// crate's matcher (git's semantics), for any path, with and without case folding.
        #[test]
        fn matches_as_the_ignore_crate_does(
            lines in prop::collection::vec(prop::collection::vec(piece(), 1..6).prop_map(|v| v.concat()), 1..4),
            path in prop::collection::vec(prop::sample::select(vec!["a", "b", "A", ".env", "x.rs", "src", "[ab]", "a b", "*"]), 1..5),
            is_dir in any::<bool>(),
            ci in any::<bool>(),
        ) {
            let path = path.join("/");
            let want = reference(&lines, ci, &path, is_dir);
            let got = ours(&lines, ci, &path, is_dir);
            // Where `ignore` refuses a line, we refuse it too; otherwise we agree exactly.
            prop_assert_eq!(got, want, "lines {:?} path {:?}", lines, path);
        }
    }

    #[test]
    fn git_semantics() {
        let m = |lines: &[&str], path: &str, is_dir: bool| {
            let lines: Vec<String> = lines.iter().map(|s| (*s).to_owned()).collect();
            ours(&lines, false, path, is_dir).map(|(hit, _)| hit)
        };
        assert_eq!(m(&[".env"], "a/b/.env", false), Some(true));
        assert_eq!(m(&["/.env"], "a/.env", false), Some(false));
        assert_eq!(m(&["src/**"], "src", true), Some(false));
        assert_eq!(m(&["src/**"], "src/a/b", false), Some(true));
        assert_eq!(m(&["build/"], "build", false), Some(false));
        assert_eq!(m(&["build/"], "build/x", false), Some(true));
        assert_eq!(m(&["*.rs", "!x.rs"], "x.rs", false), Some(false));
        assert_eq!(m(&["a/*.rs"], "a/b/c.rs", false), Some(false));
        assert_eq!(m(&["# c"], "# c", false), Some(false));
        assert_eq!(m(&["a\\ "], "a ", false), Some(true));
    }
}
