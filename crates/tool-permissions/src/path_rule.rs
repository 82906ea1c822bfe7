//! Path rules: `Read(...)` and `Edit(...)` contents as gitignore patterns with Claude Code's
//! anchors, matched against canonical paths.
//!
//! | written | anchored at |
//! |---|---|
//! | `//abs/path` | the filesystem root |
//! | `~/path`, `$HOME/path` | the home directory |
//! | `/path` | the project root (for a user settings file: that file's directory) |
//! | `path`, `./path` | the current working directory; a bare name matches at any depth |
//!
//! `*` stays within one path segment, `**` crosses segments, and a pattern naming a directory
//! covers everything inside it.

use std::path::{Path, PathBuf};

use crate::gitignore::{Gitignore, GitignoreBuilder, Match};
use tool_core::ToolContext;

/// Where a pattern is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `//…`
    FilesystemRoot,
    /// `~/…`
    Home,
    /// `/…` in a project, local, managed or command-line source.
    ProjectRoot,
    /// `/…` in a user settings file: that file's directory.
    Directory(PathBuf),
    /// Anything else: the directory the rule's settings belong to, which is the session's
    /// starting directory (the project root), never a directory a `cd` reached since.
    Start,
}

impl Anchor {
    /// The directory the anchor stands for in `ctx`.
    pub(crate) fn dir<'a>(&'a self, ctx: &'a ToolContext) -> &'a Path {
        match self {
            Anchor::FilesystemRoot => Path::new("/"),
            Anchor::Home => &ctx.home,
            Anchor::ProjectRoot => &ctx.project_root,
            Anchor::Directory(d) => d,
            Anchor::Start => &ctx.project_root,
        }
    }
}

/// Many patterns with one anchor compiled into one matcher, so a decision costs one match per
/// group however many rules there are.
#[derive(Debug, Clone)]
pub(crate) struct PathGroup {
    anchor: Anchor,
    /// Patterns anchored under a literal first directory (`/dir/gen/*.rs`), by that directory:
    /// a path is matched only against the patterns of its own first directory.
    by_first: std::collections::HashMap<String, Gitignore>,
    /// The other patterns (bare names, leading wildcards), matched against every path.
    rest: Gitignore,
    by_line: std::collections::HashMap<String, usize>,
    fold_case: bool,
}

impl PathGroup {
    /// Compile `(entry index, pattern)` pairs sharing `anchor`. With `fold_case`, patterns and
    /// paths are compared without regard to case (deny rules on Windows volumes).
    pub(crate) fn build(anchor: Anchor, items: &[(usize, &PathPattern)], fold_case: bool) -> Self {
        let builder = || {
            let mut b = GitignoreBuilder::new();
            b.case_insensitive(fold_case);
            b
        };
        let mut firsts: std::collections::HashMap<String, GitignoreBuilder> =
            std::collections::HashMap::new();
        let mut rest = builder();
        let mut by_line = std::collections::HashMap::new();
        for (i, p) in items {
            // Each line was already accepted on its own, so adding it again cannot fail.
            match literal_first_dir(&p.line) {
                Some(first) => {
                    let key = if fold_case {
                        first.to_lowercase()
                    } else {
                        first.to_owned()
                    };
                    let _ = firsts.entry(key).or_insert_with(builder).add_line(&p.line);
                }
                None => {
                    let _ = rest.add_line(&p.line);
                }
            }
            by_line.entry(p.line.clone()).or_insert(*i);
        }
        let build = |b: GitignoreBuilder| b.build().unwrap_or_else(|_| Gitignore::empty());
        Self {
            anchor,
            by_first: firsts.into_iter().map(|(k, b)| (k, build(b))).collect(),
            rest: build(rest),
            by_line,
            fold_case,
        }
    }

    /// The entry index of a pattern covering `path` (absolute, normalised), if any: the first
    /// rule of the matching lines.
    pub(crate) fn matched(&self, path: &Path, is_dir: bool, ctx: &ToolContext) -> Option<usize> {
        let folded;
        let rel = if self.fold_case {
            let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
            folded = lower(path);
            folded.strip_prefix(lower(self.anchor.dir(ctx))).ok()?
        } else {
            path.strip_prefix(self.anchor.dir(ctx)).ok()?
        };
        if rel.as_os_str().is_empty() {
            return None;
        }
        let hit = |g: &Gitignore| match g.matched_path_or_any_parents(rel, is_dir) {
            Match::Ignore(glob) => self.by_line.get(glob.original()).copied(),
            _ => None,
        };
        let first = rel.components().next().and_then(|c| c.as_os_str().to_str());
        let own = first.and_then(|f| self.by_first.get(f)).and_then(&hit);
        own.into_iter().chain(hit(&self.rest)).min()
    }
}

/// The literal first directory of an anchored gitignore line (`/dir/gen/*.rs` → `dir`), when
/// it has one.
fn literal_first_dir(line: &str) -> Option<&str> {
    let first = line.strip_prefix('/')?.split('/').next()?;
    (!first.is_empty() && !first.contains(['*', '?', '[', '\\', '!'])).then_some(first)
}

/// A compiled path pattern.
#[derive(Debug, Clone)]
pub(crate) struct PathPattern {
    /// Where it is anchored.
    pub anchor: Anchor,
    /// The gitignore line it compiles to.
    pub(crate) line: String,
    /// The line as written, anchored where it names a path (`./secrets/**` → `/secrets`),
    /// before a relative deny or ask was lifted to match at any depth.
    rooted: String,
}

impl PathPattern {
    /// Compile `pattern` (the rule's content). `user_dir` is the directory `/…` means for a user
    /// settings file, `None` for sources where it means the project root. With `any_depth` (deny
    /// and ask rules), a relative pattern covers its path at any depth below the starting
    /// directory, as Claude Code matches them (`Read(./config/**)` covers `sub/config/a`);
    /// relative allow rules stay anchored at the starting directory itself.
    pub(crate) fn parse(
        pattern: &str,
        user_dir: Option<&Path>,
        any_depth: bool,
    ) -> Result<Self, String> {
        let p = pattern.trim();
        if p.is_empty() {
            return Err("the path pattern is empty".into());
        }
        if p.starts_with('!') {
            return Err("a permission rule cannot negate a pattern (`!`)".into());
        }
        let (anchor, rest) = if let Some(r) = p.strip_prefix("//") {
            (Anchor::FilesystemRoot, format!("/{r}"))
        } else if p == "~" || p == "$HOME" {
            (Anchor::Home, "/**".to_owned())
        } else if let Some(r) = p.strip_prefix("~/").or_else(|| p.strip_prefix("$HOME/")) {
            (Anchor::Home, format!("/{r}"))
        } else if p.starts_with('~') {
            return Err("`~user` paths are not supported; write the home directory out".into());
        } else if p.starts_with('/') {
            (
                user_dir.map_or(Anchor::ProjectRoot, |d| Anchor::Directory(d.to_path_buf())),
                p.to_owned(),
            )
        } else {
            (Anchor::Start, p.strip_prefix("./").unwrap_or(p).to_owned())
        };
        // `dir/**` and `dir` mean the same: the directory and everything in it. A pattern with
        // a slash is anchored (gitignore), so `secrets/**` is `/secrets`, never a `secrets`
        // at any depth.
        let line = match rest.strip_suffix("/**").filter(|r| !r.is_empty()) {
            Some(dir) if !dir.contains('/') => format!("/{dir}"),
            Some(dir) => dir.to_owned(),
            None => rest.clone(),
        };
        let line = if line == "/" || line.is_empty() {
            "**".to_owned()
        } else {
            line
        };
        let rooted = line.clone();
        let line = if any_depth && anchor == Anchor::Start {
            // gitignore anchors a line with a slash in it; `**/` lifts that.
            let bare = line.trim_start_matches('/');
            if bare.contains('/') && !bare.starts_with("**/") && bare != "**" {
                format!("**/{bare}")
            } else {
                bare.to_owned()
            }
        } else {
            line
        };
        // Compiled alone to check it; rules are matched as groups (`PathGroup`).
        compile(&line)?;
        Ok(Self {
            anchor,
            line,
            rooted,
        })
    }

    /// Does this pattern cover every path `other` covers (same anchor assumed)? Conservative:
    /// equal patterns, `**`, or a plain directory and a pattern under it.
    pub(crate) fn covers_pattern(&self, other: &PathPattern) -> bool {
        if self.line == other.line || self.line == "**" {
            return true;
        }
        let under = |dir: &str, line: &str| {
            line.strip_prefix(dir.trim_end_matches('/'))
                .is_some_and(|rest| rest.starts_with('/'))
        };
        let plain = |s: &str| !s.contains(['*', '?', '[', '\\']);
        if plain(&self.line) && under(&self.line, &other.line) {
            return true;
        }
        // A name at any depth (`secrets`, `**/secrets`) covers what lies under that name,
        // anchored or at any depth (`secrets/a`, `**/secrets/a`).
        let core = self.line.strip_prefix("**/").unwrap_or(&self.line);
        let any_depth = !core.trim_start_matches('/').contains('/') && !core.starts_with('/');
        any_depth && plain(core) && {
            let rest = other.line.strip_prefix("**/").unwrap_or(&other.line);
            under(core, rest.trim_start_matches('/'))
        }
    }

    fn anchor_dir<'a>(&'a self, ctx: &'a ToolContext) -> &'a Path {
        self.anchor.dir(ctx)
    }

    /// The deepest directory every path the pattern covers lies in: the anchor joined with the
    /// pattern's leading literal segments (`/secrets/*.pem` → `<root>/secrets`). A pattern that
    /// matches at any depth (a bare name such as `.env` or `*.pem`) or starts with a wildcard
    /// gives the anchor itself.
    pub(crate) fn base(&self, ctx: &ToolContext) -> PathBuf {
        self.base_of(&self.line, ctx)
    }

    /// The tree the pattern names by its literal leading directories, as written
    /// (`./secrets/**` → `<start>/secrets`, although as a deny it also covers a `secrets` at
    /// any depth); `None` for a name that may be anywhere (`.env`, `**/x`, `*.pem`).
    pub(crate) fn named_tree(&self, ctx: &ToolContext) -> Option<PathBuf> {
        let base = self.base_of(&self.rooted, ctx);
        (base != self.anchor_dir(ctx)).then_some(base)
    }

    fn base_of(&self, line: &str, ctx: &ToolContext) -> PathBuf {
        let line = line.trim_end_matches('/');
        let dir = self.anchor_dir(ctx).to_path_buf();
        if !line.contains('/') {
            return dir;
        }
        let literal: Vec<&str> = line
            .trim_start_matches('/')
            .split('/')
            .take_while(|seg| !seg.contains(['*', '?', '[', '\\']))
            .collect();
        literal.iter().fold(dir, |d, seg| d.join(seg))
    }

    /// Does the pattern cover `path` (absolute, normalised)? A path outside the anchor never
    /// matches. The tests' reference for what a group of patterns matches.
    #[cfg(test)]
    pub(crate) fn matches(&self, path: &Path, ctx: &ToolContext) -> bool {
        let Ok(rel) = path.strip_prefix(self.anchor_dir(ctx)) else {
            return false;
        };
        if rel.as_os_str().is_empty() {
            return false;
        }
        let Ok(m) = compile(&self.line) else {
            return false;
        };
        let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        matches!(m.matched_path_or_any_parents(rel, is_dir), Match::Ignore(_))
    }
}

/// One gitignore line compiled, anchored at `/`.
fn compile(line: &str) -> Result<Gitignore, String> {
    let mut b = GitignoreBuilder::new();
    b.add_line(line)
        .map_err(|e| format!("invalid path pattern: {e}"))?;
    b.build().map_err(|e| format!("invalid path pattern: {e}"))
}

/// The spellings of one path that rules must agree on: the path as given (lexically
/// normalised); the path with every symlink resolved (also for a file that does not exist yet:
/// its nearest existing ancestor is resolved); and for `/proc/<self|thread-self|pid>/root/…`
/// and `…/cwd/…`, the path they alias for the process that opens them (the root directory, and
/// the call's working directory: not the engine's own).
pub(crate) fn candidates(path: &Path, ctx: &ToolContext) -> Vec<PathBuf> {
    let lexical = tool_core::normalize(path);
    let mut out = vec![lexical.clone()];
    let mut add = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(plain) = unalias_proc(&lexical, &ctx.cwd) {
        add(resolve(&plain));
        add(plain);
    }
    add(resolve(&lexical));
    // `..` after a symbolic link goes up from where the link leads, as the kernel walks it
    // (`link/../../.env`), not from the link's own directory.
    if let Some(p) = tool_core::resolve_physical(path) {
        add(p);
    }
    out
}

/// `/proc/<self|thread-self|pid>/root/rest` → `/rest`; `…/cwd/rest` → `cwd/rest`.
fn unalias_proc(path: &Path, cwd: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix("/proc").ok()?;
    let mut parts = rest.components();
    let who = parts.next()?.as_os_str().to_str()?;
    if !(who == "self" || who == "thread-self" || who.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let base = match parts.next()?.as_os_str().to_str()? {
        "root" => PathBuf::from("/"),
        "cwd" => cwd.to_path_buf(),
        _ => return None,
    };
    Some(tool_core::normalize(&base.join(parts.as_path())))
}

/// Does `path`, under any of its spellings (the symlinks it goes through resolved, `/proc`
/// aliases undone), have a component shaped like an 8.3 short name?
pub(crate) fn short_name_spelling(path: &Path, ctx: &ToolContext) -> bool {
    candidates(path, ctx).iter().any(|c| has_short_name(c))
}

/// Does `path` have a component shaped like a Windows 8.3 short name (`PROGRA~1`,
/// `SECRET~1.TXT`: at most eight characters with `~` and a digit, an extension of at most
/// three)? On a FAT or NTFS volume such a name is another spelling of a long name that rules
/// are written against, so no allow (rule or working directory) covers it. Case is ignored.
pub(crate) fn has_short_name(path: &Path) -> bool {
    path.components()
        .any(|c| c.as_os_str().to_str().is_some_and(is_short_name))
}

/// Is `name` shaped like an 8.3 short name (`PROGRA~1`, `SECRET~1.TXT`)?
pub(crate) fn is_short_name(name: &str) -> bool {
    short_name_parts(name).is_some()
}

/// An 8.3 short name's head (before `~`) and extension.
fn short_name_parts(name: &str) -> Option<(&str, &str)> {
    let (base, ext) = name.split_once('.').unwrap_or((name, ""));
    let (head, tail) = base.split_once('~')?;
    (!head.is_empty()
        && base.len() <= 8
        && ext.len() <= 3
        && !ext.contains('.')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit()))
    .then_some((head, ext))
}

/// Could the volume have given the long name `long` the short name `short`? The short name
/// keeps the first characters of the long name's base (spaces and dots dropped, case folded)
/// before `~N`, and the first characters of its last extension.
pub(crate) fn short_name_could_be(short: &str, long: &str) -> bool {
    let Some((head, ext)) = short_name_parts(short) else {
        return false;
    };
    let (long_base, long_ext) = match long.rsplit_once('.') {
        Some((b, e)) if !b.is_empty() => (b, e),
        _ => (long, ""),
    };
    let squeeze = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != ' ' && *c != '.')
            .flat_map(char::to_uppercase)
            .collect()
    };
    squeeze(long_base).starts_with(&head.to_uppercase())
        && squeeze(long_ext).starts_with(&ext.to_uppercase())
}

/// Is `path` on a volume whose names are compared without case: the POSIX form of a Windows
/// drive (`/c/...`, what `C:\...` and `c:/...` are mapped to) or a UNC path
/// (`//host/share/...`)? Deny rules fold case there; allow rules never do. On a POSIX host a
/// top-level directory with a one-letter name is read as a drive too: that only widens deny
/// rules there.
pub(crate) fn case_folding_volume(path: &Path) -> bool {
    tool_core::is_drive_form(path) || tool_core::is_unc(path)
}

/// Is `path` inside a working directory under every spelling (so a symlink inside the
/// workspace that points out of it is outside)? Working directories count under their own
/// resolved spelling too. A UNC path and a path with an 8.3 short-name component are never
/// inside: the implicit allow for the working directories does not cover them.
pub(crate) fn inside_working_dirs(ctx: &ToolContext, path: &Path) -> bool {
    if tool_core::is_unc(path) {
        return false;
    }
    candidates(path, ctx).iter().all(|c| {
        !has_short_name(c)
            && ctx
                .working_dirs
                .iter()
                .any(|d| c.starts_with(d) || c.starts_with(resolve(d)))
    })
}

/// `path` with its longest existing prefix canonicalised and the rest appended as it is.
/// Iterative: a path of any number of components is safe to resolve.
fn resolve(path: &Path) -> PathBuf {
    // No system opens a path this long: nothing to resolve (and resolving each prefix of a
    // path of a hundred thousand components would take quadratic time).
    if path.as_os_str().len() > tool_core::MAX_PATH_BYTES {
        return path.to_path_buf();
    }
    let mut existing = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(p) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(p, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) if parent != existing => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ToolContext {
        let mut c = ToolContext::new("/w/p", "/home/u", "/tmp/r");
        c.cwd = "/w/p/sub".into();
        c
    }

    #[test]
    fn anchors_and_gitignore_semantics() {
        let c = ctx();
        // The context's cwd is `/w/p/sub`: relative patterns ignore it.
        let m = |pat: &str, path: &str| {
            PathPattern::parse(pat, None, true)
                .unwrap()
                .matches(Path::new(path), &c)
        };
        let cases = [
            (".env", "/w/p/sub/.env", true),
            (".env", "/w/p/sub/deep/.env", true),
            (".env", "/w/p/.env", true),
            ("./.env", "/w/p/sub/x/.env", true),
            ("./.env", "/w/p/.env", true),
            (".env", "/elsewhere/.env", false),
            ("/secrets/**", "/w/p/secrets/a/b.txt", true),
            ("/secrets/**", "/w/p/sub/secrets/a/b.txt", false),
            // A relative deny covers its path at any depth below the start.
            ("./secrets/**", "/w/p/secrets/a/b.txt", true),
            ("./secrets/**", "/w/p/sub/x/secrets/a.txt", true),
            ("secrets/**", "/w/p/sub/secrets", true),
            ("./a/b/**", "/w/p/a/b/c", true),
            ("./a/b/**", "/w/p/sub/x/a/b/c", true),
            ("./a/b/**", "/w/p/sub/x/a/c", false),
            ("/secrets", "/w/p/secrets/a.txt", true),
            ("/secrets/*.txt", "/w/p/secrets/a.txt", true),
            ("/secrets/*.txt", "/w/p/secrets/d/a.txt", false),
            ("/secrets/**/*.txt", "/w/p/secrets/d/a.txt", true),
            ("~/.ssh/**", "/home/u/.ssh/id_rsa", true),
            ("~/.ssh", "/home/u/.ssh/id_rsa", true),
            ("~/.ssh/**", "/home/u/.sshx/id_rsa", false),
            ("//etc/passwd", "/etc/passwd", true),
            ("//etc/*", "/etc/passwd", true),
            ("*.pem", "/w/p/sub/a/b/key.pem", true),
            ("*.pem", "/elsewhere/key.pem", false),
            ("~", "/home/u/anything", true),
        ];
        for (pat, path, want) in cases {
            assert_eq!(m(pat, path), want, "{pat} vs {path}");
        }
        // An allow stays anchored at the start itself.
        let allow = |pat: &str, path: &str| {
            PathPattern::parse(pat, None, false)
                .unwrap()
                .matches(Path::new(path), &c)
        };
        assert!(allow("./src/**", "/w/p/src/a.rs"));
        assert!(!allow("./src/**", "/w/p/vendor/src/a.rs"));
        assert!(!allow("src/**", "/w/p/sub/src/a.rs"));
        assert!(allow("*.rs", "/w/p/sub/a.rs"));
        let user = PathPattern::parse("/x", Some(Path::new("/home/u/.claude")), false).unwrap();
        assert!(user.matches(Path::new("/home/u/.claude/x"), &c));
        assert!(!user.matches(Path::new("/w/p/x"), &c));
    }

    #[test]
    fn bases_are_the_literal_directories_patterns_live_in() {
        let c = ctx();
        let base = |pat: &str| PathPattern::parse(pat, None, true).unwrap().base(&c);
        let cases = [
            ("/secrets/**", "/w/p/secrets"),
            ("/secrets/*.pem", "/w/p/secrets"),
            ("/a/b/**/c", "/w/p/a/b"),
            ("./.env", "/w/p"),
            ("*.pem", "/w/p"),
            ("conf/*.yml", "/w/p"),
            ("~/.ssh/**", "/home/u/.ssh"),
            ("//etc/passwd", "/etc/passwd"),
            ("//**/*.key", "/"),
        ];
        for (pat, want) in cases {
            assert_eq!(base(pat), Path::new(want), "{pat}");
        }
    }

    #[test]
    fn short_names_stand_for_the_long_names_they_abbreviate() {
        assert!(short_name_could_be("SECRET~1", "Secrets"));
        assert!(short_name_could_be("PROGRA~1", "Program Files"));
        assert!(short_name_could_be("SECRET~1.TXT", "secret notes.txt"));
        assert!(short_name_could_be("MYDOCU~2.HTM", "My.Document.html"));
        assert!(!short_name_could_be("SECRET~1", "src"));
        assert!(!short_name_could_be("SECRET~1.TXT", "secrets.md"));
        assert!(!short_name_could_be("Secrets", "Secrets"));
    }

    #[test]
    fn short_names_and_windows_volumes() {
        for yes in [
            "/c/PROGRA~1/x",
            "/w/p/SECRET~1.TXT",
            "/w/p/a~9",
            "/w/p/ab~12.c",
        ] {
            assert!(has_short_name(Path::new(yes)), "{yes}");
        }
        for no in [
            "/w/p/a.txt~",
            "/w/p/a.txt.~1~",
            "/w/p/~1",
            "/w/p/longname~1",
            "/w/p/a~1.html",
            "/w/p/a~x",
        ] {
            assert!(!has_short_name(Path::new(no)), "{no}");
        }
        assert!(case_folding_volume(Path::new("/c/Users/x")));
        assert!(case_folding_volume(Path::new("//host/share/x")));
        assert!(!case_folding_volume(Path::new("/home/u/x")));
        let folded = PathGroup::build(
            Anchor::Start,
            &[(3, &PathPattern::parse("Secret.txt", None, true).unwrap())],
            true,
        );
        let mut c = ctx();
        c.project_root = "/c/w/p".into();
        assert_eq!(
            folded.matched(Path::new("/c/W/P/x/SECRET.TXT"), false, &c),
            Some(3)
        );
    }

    #[test]
    fn dot_dot_after_a_link_goes_up_from_where_it_leads() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("p/a/b")).unwrap();
        std::os::unix::fs::symlink(root.join("p/a/b"), root.join("p/link")).unwrap();
        std::os::unix::fs::symlink("a/b", root.join("p/rel")).unwrap();
        let c = ToolContext::new(root.join("p"), "/home/u", "/tmp/r");
        for via in [
            "p/link/../../.env",
            "p/rel/../../.env",
            "p/link/./../x/../../.env",
        ] {
            let spellings = candidates(&root.join(via), &c);
            assert!(
                spellings.contains(&root.join("p/.env")),
                "{via}: {spellings:?}"
            );
        }
        // Without a link, `..` is lexical.
        assert_eq!(
            tool_core::resolve_physical(&root.join("p/a/../.env")),
            Some(root.join("p/.env"))
        );
        assert_eq!(tool_core::resolve_physical(Path::new("rel/../x")), None);
    }

    #[test]
    fn rejects_patterns_that_cannot_work() {
        for bad in ["", "!x", "~bob/x"] {
            assert!(PathPattern::parse(bad, None, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn proc_aliases_give_the_path_they_stand_for() {
        let c = ctx();
        let has = |path: &str, want: &str| {
            candidates(Path::new(path), &c)
                .iter()
                .any(|p| p == Path::new(want))
        };
        assert!(has(
            "/proc/self/root/home/u/.ssh/id_rsa",
            "/home/u/.ssh/id_rsa"
        ));
        assert!(has("/proc/thread-self/root/etc/../home/u/x", "/home/u/x"));
        assert!(has(
            "/proc/4242/root/home/u/.aws/credentials",
            "/home/u/.aws/credentials"
        ));
        // `cwd` is the call's working directory, not the engine's.
        assert!(has("/proc/self/cwd/.env", "/w/p/sub/.env"));
        assert!(!has("/proc/selfish/root/etc/passwd", "/etc/passwd"));
        assert!(!has("/proc/self/environ", "/environ"));
        // Never inside the working directories under the alias spelling.
        assert!(!inside_working_dirs(
            &c,
            Path::new("/proc/self/root/w/p/a.txt")
        ));
        let deny = PathPattern::parse("~/.ssh/**", None, true).unwrap();
        assert!(
            candidates(Path::new("/proc/self/root/home/u/.ssh/id_rsa"), &c)
                .iter()
                .any(|p| deny.matches(p, &c))
        );
    }

    #[test]
    fn symlinks_give_two_candidates() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link")).unwrap();
        let ctx = ToolContext::new(d.path(), d.path(), d.path());
        let c = candidates(&d.path().join("link/new.txt"), &ctx);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1], std::fs::canonicalize(&real).unwrap().join("new.txt"));
        assert_eq!(
            candidates(&std::fs::canonicalize(&real).unwrap().join("a/../b"), &ctx).len(),
            1
        );
    }
}
