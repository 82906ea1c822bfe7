//! The rule index: content rules compiled for lookup.

use tool_core::RuleList;

use super::entry::{PathFamily, RuleEntry, RuleMatcher};
use crate::path_rule::PathPattern;

/// Bash rules of one list: entry indices by the first word they match, and those with none.
pub(super) type ShellBucket = (
    RuleList,
    std::collections::HashMap<String, Vec<usize>>,
    Vec<usize>,
);
/// Path rules share a matcher when they share list, family and anchor.
pub(super) type PathGroupKey = (RuleList, PathFamily, crate::path_rule::Anchor);

/// Content rules compiled for lookup: path rules as one matcher per (list, family, anchor),
/// Bash rules bucketed by the first word of the command they match, so a decision's cost grows
/// with the groups and buckets it touches, not with the number of rules.
#[derive(Debug, Default)]
pub(super) struct RuleIndex {
    pub(super) paths: Vec<(RuleList, PathFamily, crate::path_rule::PathGroup)>,
    /// The path groups again, comparing without case, as Claude Code compares every path
    /// rule.
    pub(super) folded: Vec<(RuleList, PathFamily, crate::path_rule::PathGroup)>,
    pub(super) shell: Vec<ShellBucket>,
    /// Entries that cover whole tools (whole-tool rules, widened content rules), in order.
    pub(super) whole: Vec<usize>,
    /// `WebFetch(domain:...)` entries, in order.
    pub(super) domains: Vec<usize>,
}

impl RuleIndex {
    pub(super) fn build(entries: &[RuleEntry]) -> Self {
        let mut groups: Vec<(PathGroupKey, Vec<(usize, &PathPattern)>)> = Vec::new();
        let mut shell: Vec<ShellBucket> = Vec::new();
        let (mut whole, mut domains) = (Vec::new(), Vec::new());
        for (i, e) in entries.iter().enumerate() {
            match &e.matcher {
                RuleMatcher::Path { family, pattern } => {
                    let key = (e.list, *family, pattern.anchor.clone());
                    match groups.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, items)) => items.push((i, pattern)),
                        None => groups.push((key, vec![(i, pattern)])),
                    }
                }
                RuleMatcher::Shell(p) => {
                    let slot = match shell.iter().position(|(l, _, _)| *l == e.list) {
                        Some(s) => s,
                        None => {
                            shell.push((e.list, Default::default(), Vec::new()));
                            shell.len() - 1
                        }
                    };
                    let (_, by_word, any) = &mut shell[slot];
                    match p.first_word() {
                        Some(w) => by_word.entry(w.to_owned()).or_default().push(i),
                        None => any.push(i),
                    }
                }
                RuleMatcher::WholeTool | RuleMatcher::AnyContent => whole.push(i),
                RuleMatcher::Domain(_) => domains.push(i),
            }
        }
        let folded = groups
            .iter()
            .map(|((list, family, anchor), items)| {
                (
                    *list,
                    *family,
                    crate::path_rule::PathGroup::build(anchor.clone(), items, true),
                )
            })
            .collect();
        let paths = groups
            .into_iter()
            .map(|((list, family, anchor), items)| {
                (
                    list,
                    family,
                    crate::path_rule::PathGroup::build(anchor, &items, false),
                )
            })
            .collect();
        Self {
            paths,
            folded,
            shell,
            whole,
            domains,
        }
    }

    /// Entry indices of `list` Bash rules that may match a form starting with `word`.
    pub(super) fn shell_candidates<'a>(
        &'a self,
        list: RuleList,
        word: &str,
    ) -> impl Iterator<Item = usize> + 'a {
        let word = word.to_owned();
        self.shell
            .iter()
            .filter(move |(l, _, _)| *l == list)
            .flat_map(move |(_, by_word, any)| {
                by_word
                    .get(&word)
                    .into_iter()
                    .flatten()
                    .chain(any.iter())
                    .copied()
            })
    }
}
