//! Path rules: which rule covers a path, under any of its spellings and identities.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_core::RuleList;

use super::Policy;
use super::entry::{PathFamily, RuleEntry, RuleMatcher};
use crate::path_rule::candidates;

/// How many entries a recursive search's root is walked for before the walk gives up (and
/// the search asks).
pub(crate) const SEARCH_WALK_BUDGET: usize = 20_000;

/// What a walk of a search's root found.
/// What a family's deny rules say of a tree before it is looked at.
enum Below<'a> {
    /// No deny rule of the family names a path.
    Unruled,
    /// The root, or a tree the rule names inside it, is denied.
    Denied(&'a RuleEntry),
    /// The rule's tree only meets the root: what is there decides.
    Meets(&'a RuleEntry),
    /// No rule reaches the root (a file there may still be a denied one by identity).
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walked {
    Clean,
    Found(usize),
    Cut,
}

impl Policy {
    /// The first `list` path rule of `family` covering `path` (any of its spellings).
    pub(crate) fn path_rule(
        &self,
        list: RuleList,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        // Resolving a path's spellings costs system calls: skip it when no rule could match.
        if !self.has_path_rules(list, family) {
            return None;
        }
        let spellings = candidates(path, ctx);
        let found = spellings
            .iter()
            .find_map(|p| self.path_group_match(list, family, p, ctx));
        let found = match (found, list) {
            (None, RuleList::Deny) => self
                .folded_rule(RuleList::Deny, family, &spellings, ctx)
                .or_else(|| self.short_name_deny(family, &spellings, ctx))
                .or_else(|| self.glob_deny(family, &spellings, ctx))
                .or_else(|| self.identity_deny(family, path, &spellings, ctx)),
            (None, list) => self.folded_rule(list, family, &spellings, ctx),
            (found, _) => found,
        };
        found.map(|i| &self.entries[i])
    }

    /// The `list` rule of `family` covering `path` as it is spelled (normalised, not resolved):
    /// what a tool's own input check sees, before the decision resolves links and other
    /// names of the file (as Claude Code's validation does).
    pub(crate) fn lexical_path_rule(
        &self,
        list: RuleList,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        if !self.has_path_rules(list, family) {
            return None;
        }
        let spelling = [tool_core::normalize(path)];
        let found = self
            .path_group_match(list, family, &spelling[0], ctx)
            .or_else(|| match list {
                RuleList::Deny => self
                    .folded_rule(list, family, &spelling, ctx)
                    .or_else(|| self.short_name_deny(family, &spelling, ctx)),
                _ => self.folded_rule(list, family, &spelling, ctx),
            });
        found.map(|i| &self.entries[i])
    }

    /// A deny rule of `family` covering a long name an 8.3 short name in `path` may stand for
    /// (`SECRET~1` for `Secrets`): each short component is replaced by every literal name of a
    /// deny rule it could abbreviate, and the result matched as any path on such a volume.
    pub(super) fn short_name_deny(
        &self,
        family: PathFamily,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let spellings: Vec<&PathBuf> = spellings
            .iter()
            .filter(|p| crate::path_rule::has_short_name(p))
            .collect();
        if spellings.is_empty() {
            return None;
        }
        let names = self.deny_literals(family, |line| line.split('/'));
        for p in spellings {
            let parts: Vec<String> = p
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            for (i, part) in parts.iter().enumerate() {
                for long in names
                    .iter()
                    .filter(|n| crate::path_rule::short_name_could_be(part, n))
                {
                    let mut alt = parts.clone();
                    alt[i] = long.clone();
                    let alt: PathBuf = alt.iter().collect();
                    let found = self
                        .path_group_match(RuleList::Deny, family, &alt, ctx)
                        .or_else(|| {
                            self.folded_rule(
                                RuleList::Deny,
                                family,
                                std::slice::from_ref(&alt),
                                ctx,
                            )
                        });
                    if found.is_some() {
                        return found;
                    }
                }
            }
        }
        None
    }

    /// A deny rule of `family` covering a path a glob in `path` names (`[s]ecrets/*`, `sec*/k`
    /// as a Glob pattern): each directory component with a class or a partial wildcard is replaced by
    /// every literal component of a deny rule it matches (one component at a time, and all of
    /// them at once). A bare `*` or `**` names nothing in particular: what it finds in a denied
    /// tree is left out of the results when the search runs.
    pub(super) fn glob_deny(
        &self,
        family: PathFamily,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let is_glob = |s: &str| s.contains(['*', '?', '[']);
        let names_something = |s: &str| is_glob(s) && s != "*" && s != "**";
        let spellings: Vec<&PathBuf> = spellings
            .iter()
            .filter(|p| is_glob(&p.to_string_lossy()))
            .collect();
        if spellings.is_empty() {
            return None;
        }
        let names = self.deny_literals(family, |line| line.split('/'));
        let names: Vec<&String> = names.iter().filter(|n| !n.is_empty()).collect();
        for p in spellings {
            let parts: Vec<String> = p
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let fits = |part: &str| -> Vec<&String> {
                names
                    .iter()
                    .copied()
                    .filter(|n| tool_shell::expand::pattern_could_match(part, n))
                    .collect()
            };
            let mut all = parts.clone();
            for (i, part) in parts.iter().enumerate() {
                // The last component names the files a search lists, and what a denied one is
                // is left out of its results; the ones before it are directories it walks into.
                if !names_something(part) || i + 1 == parts.len() {
                    continue;
                }
                let fit = fits(part);
                for name in &fit {
                    let mut alt = parts.clone();
                    alt[i] = (*name).clone();
                    let alt: PathBuf = alt.iter().collect();
                    if let Some(i) = self.path_group_match(RuleList::Deny, family, &alt, ctx) {
                        return Some(i);
                    }
                }
                if let Some(first) = fit.first() {
                    all[i] = (*first).clone();
                }
            }
            let all: PathBuf = all.iter().collect();
            if let Some(i) = self.path_group_match(RuleList::Deny, family, &all, ctx) {
                return Some(i);
            }
        }
        None
    }

    /// A `list` rule of `family` covering one of `spellings`, compared without case.
    pub(super) fn folded_rule(
        &self,
        list: RuleList,
        family: PathFamily,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        // Claude Code compares path rules without case on every volume, deny, ask and allow
        // rules alike (recorded: a deny `Edit(/sub/**)` refuses `Sub/f0.rs` on Linux,
        // z2_ask_rule_case, z2_allow_rule_case).
        spellings.iter().find_map(|p| {
            let is_dir = std::fs::metadata(p).is_ok_and(|m| m.is_dir());
            self.index
                .folded
                .iter()
                .filter(|(l, f, _)| *l == list && *f == family)
                .filter_map(|(_, _, g)| g.matched(p, is_dir, ctx))
                .min()
        })
    }

    /// A deny rule of `family` covering another name of the file `path` is: see
    /// [`identity`](crate::identity).
    pub(super) fn identity_deny(
        &self,
        family: PathFamily,
        path: &Path,
        spellings: &[PathBuf],
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        self.identities(family, ctx).denied(path, spellings)
    }

    /// What the walk for the deny rules of `family` found, under `ctx`'s anchors.
    pub(crate) fn identities(
        &self,
        family: PathFamily,
        ctx: &tool_core::ToolContext,
    ) -> Arc<crate::identity::Walked> {
        let key = (
            family,
            ctx.home.clone(),
            ctx.project_root.clone(),
            ctx.cwd.clone(),
        );
        self.identities.get(key, || {
            let bases = self
                .entries
                .iter()
                .filter_map(|e| match &e.matcher {
                    RuleMatcher::Path { family: f, pattern }
                        if e.list == RuleList::Deny && *f == family =>
                    {
                        Some(pattern.base(ctx))
                    }
                    _ => None,
                })
                .collect();
            crate::identity::walk(bases, &|p, is_dir| {
                self.path_group_match_kind(RuleList::Deny, family, p, is_dir, ctx)
            })
        })
    }

    /// Is `path` a file with more than one link whose identity the deny rules of `family`
    /// cannot settle (their walk stopped at [`MAX_WALK`](crate::MAX_WALK))? Such a file may be
    /// a denied file under another name: it is asked about, never allowed.
    pub(crate) fn identity_unknown(
        &self,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> bool {
        self.has_path_rules(RuleList::Deny, family) && self.identities(family, ctx).unknown(path)
    }

    /// A Read deny rule that could match something at or below `root`: it covers `root`, its
    /// files lie below `root` (its base, the literal directories its pattern starts with, is
    /// inside `root`), or `root` is inside its base (a bare name such as `.env` matches at any
    /// depth under its anchor), or a symlink it covers points at or below `root`, under any
    /// spelling of `root`. For recursive readers (`rg`, `grep -r`, `find`, `ls -R`, `tree`,
    /// `du`) rooted at `root`: when this is `Some`, the command reads past the rule unless it
    /// excludes the tree.
    /// With `look`, a rule whose tree only meets `root` is checked against what is there: a
    /// bounded walk of `root` (at most 20,000 entries, not entering links but checking
    /// where each link leads) finds a file or directory the rule covers (`Some`), finds none
    /// (`None`), or is cut short (`Some`: fail closed). Without `look` (the line itself may
    /// create files), such a rule counts whatever is there. The walk checks each file by its
    /// identity too (a hard link to a denied file).
    pub fn denied_below(
        &self,
        root: &Path,
        ctx: &tool_core::ToolContext,
        look: bool,
    ) -> Option<&RuleEntry> {
        self.denied_below_of(&[PathFamily::Read], root, ctx, look, false)
    }

    /// [`Policy::denied_below`] for the deny rules of each of `families` in turn (for a
    /// program that changes every file below a directory it writes, `chmod -R`, `rm -r`,
    /// `mv`: Edit's and Read's), with one walk of `root` for those that need one.
    ///
    /// With `follow`, the program follows links to directories as it walks (`grep -R`, `rg
    /// -L`, `find -L`): a deny rule whose tree lies elsewhere may be reached through a link
    /// below `root`, so the walk enters each such link (once per directory it leads to).
    pub(crate) fn denied_below_of(
        &self,
        families: &[PathFamily],
        root: &Path,
        ctx: &tool_core::ToolContext,
        look: bool,
        follow: bool,
    ) -> Option<&RuleEntry> {
        let spellings = candidates(root, ctx);
        let windows = spellings
            .iter()
            .any(|s| crate::path_rule::case_folding_volume(s));
        let fold = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
        let related = |a: &Path, b: &Path| {
            a.starts_with(b)
                || b.starts_with(a)
                || (windows && (fold(a).starts_with(fold(b)) || fold(b).starts_with(fold(a))))
        };
        let found: Vec<(PathFamily, Below<'_>)> = families
            .iter()
            .map(|&f| (f, self.below(f, root, &spellings, &related, follow, ctx)))
            .collect();
        // The families whose rule only meets the root: what is there decides, in one walk.
        let to_walk: Vec<PathFamily> = found
            .iter()
            .filter(|(_, b)| matches!(b, Below::Meets(_)))
            .map(|(f, _)| *f)
            .collect();
        let walked = std::cell::OnceCell::new();
        found.into_iter().find_map(|(family, below)| {
            let by_rule = match below {
                Below::Denied(e) => return Some(e),
                Below::Meets(e) if look => {
                    let at = to_walk.iter().position(|f| *f == family)?;
                    match walked.get_or_init(|| self.walk_for_denied(&to_walk, root, follow, ctx))
                        [at]
                    {
                        Walked::Clean => None,
                        Walked::Found(i) => Some(&self.entries[i]),
                        Walked::Cut => Some(e),
                    }
                }
                Below::Meets(e) => Some(e),
                Below::Unruled => return None,
                Below::Nothing => None,
            };
            by_rule.or_else(|| {
                let w = self.identities(family, ctx);
                w.targets
                    .iter()
                    .find(|(t, _)| spellings.iter().any(|s| related(t, s)))
                    .map(|(_, i)| &self.entries[*i])
            })
        })
    }

    /// What the deny rules of `family` say of the tree at `root` (seen as `spellings`) before
    /// anything there is looked at.
    fn below(
        &self,
        family: PathFamily,
        root: &Path,
        spellings: &[PathBuf],
        related: &dyn Fn(&Path, &Path) -> bool,
        follow: bool,
        ctx: &tool_core::ToolContext,
    ) -> Below<'_> {
        if !self.has_path_rules(RuleList::Deny, family) {
            return Below::Unruled;
        }
        if let Some(e) = self.path_rule(RuleList::Deny, family, root, ctx) {
            return Below::Denied(e);
        }
        let denies = || {
            self.entries.iter().filter_map(|e| match &e.matcher {
                RuleMatcher::Path { family: f, pattern }
                    if e.list == RuleList::Deny && *f == family =>
                {
                    Some((e, pattern))
                }
                _ => None,
            })
        };
        // A rule naming a tree inside the root (`Read(./secrets/**)` under `rg KEY` at the
        // project root) stands whatever is there now: its author says the tree is there.
        let named = denies().find(|(_, pattern)| {
            pattern
                .named_tree(ctx)
                .is_some_and(|t| spellings.iter().any(|s| t.starts_with(s)))
        });
        if let Some((e, _)) = named {
            return Below::Denied(e);
        }
        // A name that may be anywhere below (`.env`), or a tree the root lies in: what is
        // there decides.
        // A program that follows links may reach any rule's tree through one.
        denies()
            .find(|(_, pattern)| spellings.iter().any(|s| related(&pattern.base(ctx), s)))
            .or_else(|| denies().next().filter(|_| follow))
            .map_or(Below::Nothing, |(e, _)| Below::Meets(e))
    }

    /// A deny rule of `family` naming a tree that lies below `root` (`Read(~/.ssh/**)` for
    /// `~`): whatever is there now, a walk of `root` reaches it.
    pub(crate) fn denied_tree_below(
        &self,
        family: PathFamily,
        root: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        let spellings = candidates(root, ctx);
        self.entries.iter().find(|e| match &e.matcher {
            RuleMatcher::Path { family: f, pattern }
                if e.list == RuleList::Deny && *f == family =>
            {
                pattern
                    .named_tree(ctx)
                    .is_some_and(|t| spellings.iter().any(|s| t.starts_with(s) && t != *s))
            }
            _ => false,
        })
    }

    /// Walk `root` (not following links unless `follow`) for an entry a deny rule of each of `families`
    /// covers, by its path, by where a link leads, or by its identity: for each family, what
    /// a walk for it alone would give (the first entry found, or cut short at the same
    /// entry), in one walk that ends once each has found one.
    /// With `follow`, a link to a directory is entered too (each directory once).
    fn walk_for_denied(
        &self,
        families: &[PathFamily],
        root: &Path,
        follow: bool,
        ctx: &tool_core::ToolContext,
    ) -> Vec<Walked> {
        let mut out: Vec<Option<Walked>> = vec![None; families.len()];
        let cut = |out: Vec<Option<Walked>>| -> Vec<Walked> {
            out.into_iter().map(|w| w.unwrap_or(Walked::Cut)).collect()
        };
        let mut left = SEARCH_WALK_BUDGET;
        let mut stack = vec![tool_core::normalize(root)];
        // The directories entered, by where they are (with `follow` only).
        let mut entered: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        if follow && let Ok(at) = std::fs::canonicalize(root) {
            entered.insert(at);
        }
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                // Unreadable here is unreadable to the search too; a root that is a file was
                // checked by its path already.
                continue;
            };
            for entry in entries {
                let Ok(entry) = entry else { continue };
                if left == 0 {
                    return cut(out);
                }
                left -= 1;
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    return cut(out);
                };
                for (at, &family) in families.iter().enumerate() {
                    if out[at].is_some() {
                        continue;
                    }
                    let found = if kind.is_symlink() || kind.is_file() {
                        // Where a link leads, and what a file is (a hard link to a denied one).
                        self.path_rule(RuleList::Deny, family, &path, ctx)
                            .and_then(|e| self.entries.iter().position(|x| std::ptr::eq(x, e)))
                    } else {
                        self.path_group_match_kind(
                            RuleList::Deny,
                            family,
                            &path,
                            kind.is_dir(),
                            ctx,
                        )
                    };
                    out[at] = found.map(Walked::Found);
                }
                if out.iter().all(Option::is_some) {
                    return cut(out);
                }
                if kind.is_dir() {
                    // Reached through a link already, it is not walked again.
                    if !follow || std::fs::canonicalize(&path).map_or(true, |at| entered.insert(at))
                    {
                        stack.push(path);
                    }
                } else if follow
                    && kind.is_symlink()
                    && std::fs::metadata(&path).is_ok_and(|m| m.is_dir())
                    && std::fs::canonicalize(&path).is_ok_and(|at| entered.insert(at))
                {
                    // Entered under the link's name: the rules see both spellings.
                    stack.push(path);
                }
            }
        }
        out.into_iter()
            .map(|w| w.unwrap_or(Walked::Clean))
            .collect()
    }

    pub(crate) fn has_path_rules(&self, list: RuleList, family: PathFamily) -> bool {
        self.index
            .paths
            .iter()
            .any(|(l, f, _)| *l == list && *f == family)
    }

    /// The lowest entry index of a `list`/`family` path rule covering this one spelling.
    pub(super) fn path_group_match(
        &self,
        list: RuleList,
        family: PathFamily,
        p: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        let is_dir = std::fs::metadata(p).is_ok_and(|m| m.is_dir());
        self.path_group_match_kind(list, family, p, is_dir, ctx)
    }

    /// [`path_group_match`](Self::path_group_match) for a spelling known to be a directory or
    /// not.
    pub(super) fn path_group_match_kind(
        &self,
        list: RuleList,
        family: PathFamily,
        p: &Path,
        is_dir: bool,
        ctx: &tool_core::ToolContext,
    ) -> Option<usize> {
        self.index
            .paths
            .iter()
            .filter(|(l, f, _)| *l == list && *f == family)
            .filter_map(|(_, _, g)| g.matched(p, is_dir, ctx))
            .min()
    }

    /// An allow path rule of `family` covering every spelling of `path`.
    pub(super) fn path_allowed(
        &self,
        family: PathFamily,
        path: &Path,
        ctx: &tool_core::ToolContext,
    ) -> Option<&RuleEntry> {
        // Allow rules never fold spellings: a short name or a UNC path gets no allow.
        if !self.has_path_rules(RuleList::Allow, family)
            || crate::path_rule::short_name_spelling(path, ctx)
            || tool_core::is_unc(path)
        {
            return None;
        }
        // Compared without case too, as Claude Code does (z2_allow_rule_case).
        let found: Option<Vec<usize>> = candidates(path, ctx)
            .iter()
            .map(|p| {
                self.path_group_match(RuleList::Allow, family, p, ctx)
                    .or_else(|| {
                        self.folded_rule(RuleList::Allow, family, std::slice::from_ref(p), ctx)
                    })
            })
            .collect();
        found
            .and_then(|v| v.into_iter().min())
            .map(|i| &self.entries[i])
    }

    /// The literal last names of `family` deny rules (`.env` of `Read(./.env)`), for checking a
    /// glob pattern that matched nothing against what it could match.
    pub(super) fn denied_names(&self, family: PathFamily) -> Vec<String> {
        self.listed_names(RuleList::Deny, family)
    }

    /// The literal last segments of `family` patterns in `list`.
    pub(super) fn listed_names(&self, list: RuleList, family: PathFamily) -> Vec<String> {
        self.literals(list, family, |line| {
            line.trim_end_matches('/').rsplit('/').next()
        })
    }

    /// The literal segments (no wildcard) of `family` deny patterns that `pick` takes from
    /// each pattern's line.
    pub(super) fn deny_literals<'a, I>(
        &'a self,
        family: PathFamily,
        pick: impl Fn(&'a str) -> I,
    ) -> Vec<String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.literals(RuleList::Deny, family, pick)
    }

    fn literals<'a, I>(
        &'a self,
        list: RuleList,
        family: PathFamily,
        pick: impl Fn(&'a str) -> I,
    ) -> Vec<String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.entries
            .iter()
            .filter(|e| e.list == list)
            .filter_map(|e| match &e.matcher {
                RuleMatcher::Path { family: f, pattern } if *f == family => Some(pattern),
                _ => None,
            })
            .flat_map(|p| pick(&p.line))
            .filter(|n| !n.is_empty() && !n.contains(['*', '?', '[']))
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layer, PolicyBuilder};

    /// One walk for several families gives each what a walk for it alone gives: the same
    /// entry found first, or the same cut, over generated trees and rules.
    #[test]
    fn one_walk_for_many_families_is_each_family_walked_alone() {
        let names = ["a", "b", ".env", "key.pem", "hooks", "src"];
        let patterns = [
            "**/.env",
            "/a/**",
            "**/key.pem",
            "/b/hooks/**",
            "**/src/b",
            "/nothing/**",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..60 {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let root = dir.path().to_path_buf();
            for _ in 0..next(12) + 1 {
                let depth = next(3) + 1;
                let mut p = root.clone();
                for _ in 0..depth {
                    p.push(names[next(names.len())]);
                }
                if let Some(parent) = p.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::fs::write(&p, "x");
            }
            let mut b = PolicyBuilder::new();
            for family in ["Read", "Edit"] {
                for _ in 0..next(3) {
                    let rule = format!("{family}({})", patterns[next(patterns.len())]);
                    b.rule(RuleList::Deny, &rule, Layer::Project, None)
                        .unwrap_or_else(|e| panic!("{rule}: {e}"));
                }
            }
            // Links to directories, in the tree (a cycle among them) and out of it.
            let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let _ = std::fs::write(outside.path().join(names[next(names.len())]), "x");
            for k in 0..next(3) {
                let to = match next(3) {
                    0 => root.clone(),
                    1 => root.join(names[next(names.len())]),
                    _ => outside.path().to_path_buf(),
                };
                let _ = std::os::unix::fs::symlink(to, root.join(format!("link{k}")));
            }
            let policy = b.build();
            let ctx = tool_core::ToolContext::new(&root, root.join("home"), root.join("out"));
            let both = [PathFamily::Edit, PathFamily::Read];
            for follow in [false, true] {
                let together = policy.walk_for_denied(&both, &root, follow, &ctx);
                let alone: Vec<Walked> = both
                    .iter()
                    .map(|f| policy.walk_for_denied(&[*f], &root, follow, &ctx)[0])
                    .collect();
                assert_eq!(together, alone, "round {round}, follow {follow}");
            }
        }
    }

    /// A search that follows links reaches a denied file through a link to a directory out of
    /// its root, and through a link to the root itself it ends; one that does not follow them
    /// reaches neither.
    #[test]
    fn a_walk_that_follows_links_reaches_what_they_lead_to() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let keys = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root_path = root.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let keys_path = keys.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(keys_path.join("inner")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(keys_path.join("inner/id_rsa"), "k").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root_path.join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&keys_path, root_path.join("src/vendor"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&root_path, root_path.join("src/again"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut b = PolicyBuilder::new();
        let rule = format!("Read(/{}/inner/**)", keys_path.display());
        b.rule(RuleList::Deny, &rule, Layer::Project, None)
            .unwrap_or_else(|e| panic!("{rule}: {e}"));
        let policy = b.build();
        let ctx = tool_core::ToolContext::new(&root_path, root_path.join("h"), root_path.join("o"));
        let found = |follow| {
            policy
                .denied_below_of(&[PathFamily::Read], &root_path, &ctx, true, follow)
                .is_some()
        };
        assert!(found(true));
        assert!(!found(false));
    }
}
