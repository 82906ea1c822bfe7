//! File identity for deny rules: the files a deny rule names, found on disk, so another name
//! of the same file is denied too.
//!
//! A deny rule is a pattern over names, but a file can have several: a hard link is the same
//! file (same device and inode) under a name no rule mentions, and a symlink inside a denied
//! directory makes the file it points to readable through the denied name only. So for the
//! deny rules of one family the engine walks the directories their files can be in (each
//! rule's [`base`](crate::PathPattern::base): its anchor joined with its leading literal
//! segments), without following symlinks, and records
//!
//! - the `(device, inode)` of every file a rule covers (a later read or write of a file with
//!   more than one link and one of those identities is denied), and
//! - the resolved target of every symlink a rule covers (that target, and everything below it
//!   when it is a directory, is denied; a directory target is walked too, for its files'
//!   identities).
//!
//! The walk visits at most [`MAX_WALK`] entries per family. When it stops early the record is
//! *incomplete*: a multi-link file whose identity was not recorded might be a denied file's
//! other name, so it is asked about, never allowed.
//!
//! Rules are anchored to the call's home, project root and cwd, so the walk is done lazily, on
//! the first decision that needs it, and cached per family and anchors. Building a new policy
//! (a reload) starts with an empty cache; [`Policy::refresh_identities`](crate::Policy::refresh_identities)
//! empties it in place, for hosts that know the file system changed (a denied file created
//! after the walk is only known from then on).

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::policy::PathFamily;

/// Most directory entries one walk visits (per family and anchors).
pub(crate) const MAX_WALK: usize = 20_000;

/// Most walks kept in the cache; beyond that it starts over.
const MAX_CACHED: usize = 32;

/// What a walk found for the deny rules of one family.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// `(device, inode)` of each denied file, with the entry index of a rule covering it.
    pub ids: HashMap<(u64, u64), usize>,
    /// Resolved targets of symlinks a rule covers, with that rule's entry index.
    pub targets: Vec<(PathBuf, usize)>,
    /// False when the walk stopped at [`MAX_WALK`].
    pub complete: bool,
    /// Each denied file with more than one link when the walk saw it: one of its names, its
    /// identity and the entry index of a rule covering it.
    pub linked: Vec<(PathBuf, (u64, u64), usize)>,
}

impl Walked {
    /// The rule a path is denied by through its identity: one of its spellings is at or below
    /// a denied symlink's target, or it is a file with more than one link whose identity is a
    /// denied file's.
    pub(crate) fn denied(&self, path: &Path, spellings: &[PathBuf]) -> Option<usize> {
        let by_target = self
            .targets
            .iter()
            .find_map(|(t, i)| spellings.iter().any(|s| s.starts_with(t)).then_some(*i));
        by_target.or_else(|| {
            let id = multi_link_id(path)?;
            self.ids.get(&id).copied()
        })
    }

    /// Is `path` a file with more than one link that this (incomplete) walk cannot vouch for?
    pub(crate) fn unknown(&self, path: &Path) -> bool {
        !self.complete && multi_link_id(path).is_some_and(|id| !self.ids.contains_key(&id))
    }
}

/// `(device, inode)` of a regular file (symlinks followed) with more than one link.
pub(crate) fn multi_link_id(path: &Path) -> Option<(u64, u64)> {
    let md = std::fs::metadata(path).ok()?;
    (md.is_file() && md.nlink() > 1).then(|| (md.dev(), md.ino()))
}

/// Which walk a cache slot holds: the family and the anchors (home, project root, cwd).
type Key = (PathFamily, PathBuf, PathBuf, PathBuf);

/// Walks already done, shared by the clones of one policy.
#[derive(Debug, Default)]
pub(crate) struct IdentityCache {
    walks: Mutex<HashMap<Key, Arc<OnceLock<Arc<Walked>>>>>,
}

impl IdentityCache {
    /// The walk for `key`, done with `walk` when it is not cached. Callers wanting the same
    /// walk wait for the one doing it (a parallel search does not walk once per thread);
    /// callers wanting another walk do not wait.
    pub(crate) fn get(&self, key: Key, walk: impl FnOnce() -> Walked) -> Arc<Walked> {
        let slot = {
            let mut walks = self.walks.lock().unwrap_or_else(|p| p.into_inner());
            if walks.len() >= MAX_CACHED && !walks.contains_key(&key) {
                walks.clear();
            }
            walks.entry(key).or_default().clone()
        };
        slot.get_or_init(|| Arc::new(walk())).clone()
    }

    /// Forget every walk.
    pub(crate) fn clear(&self) {
        self.walks.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Walk `bases` (nested ones once), asking `matched(path, is_dir)` which deny rule covers each
/// entry; entries below a covered directory or a covered symlink's target are covered by it.
pub(crate) fn walk(
    mut bases: Vec<PathBuf>,
    matched: &dyn Fn(&Path, bool) -> Option<usize>,
) -> Walked {
    bases.sort();
    bases.dedup();
    let mut roots: Vec<PathBuf> = Vec::new();
    for b in bases {
        if !roots.iter().any(|r| b.starts_with(r)) {
            roots.push(b);
        }
    }
    let mut out = Walked {
        complete: true,
        ..Walked::default()
    };
    let mut followed: HashSet<PathBuf> = HashSet::new();
    let mut stack: Vec<(PathBuf, Option<usize>)> = roots.into_iter().map(|r| (r, None)).collect();
    let mut budget = MAX_WALK;
    while let Some((p, inherited)) = stack.pop() {
        if budget == 0 {
            out.complete = false;
            break;
        }
        budget -= 1;
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let ft = md.file_type();
        let hit = inherited.or_else(|| matched(&p, ft.is_dir()));
        if ft.is_symlink() {
            let (Some(i), Ok(target)) = (hit, std::fs::canonicalize(&p)) else {
                continue;
            };
            match std::fs::metadata(&target) {
                Ok(t) if t.is_dir() => {
                    if followed.insert(target.clone()) {
                        stack.push((target.clone(), Some(i)));
                    }
                }
                Ok(t) => {
                    out.ids.entry((t.dev(), t.ino())).or_insert(i);
                    if t.nlink() > 1 {
                        out.linked.push((target.clone(), (t.dev(), t.ino()), i));
                    }
                }
                Err(_) => {}
            }
            out.targets.push((target, i));
        } else if ft.is_dir() {
            if let Ok(dir) = std::fs::read_dir(&p) {
                stack.extend(dir.flatten().map(|e| (e.path(), hit)));
            }
        } else if let Some(i) = hit {
            out.ids.entry((md.dev(), md.ino())).or_insert(i);
            if md.is_file() && md.nlink() > 1 {
                out.linked.push((p.clone(), (md.dev(), md.ino()), i));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_denied_files_links_and_stops_at_the_budget() {
        let d = tempfile::tempdir().unwrap();
        let secrets = d.path().join("secrets");
        std::fs::create_dir(&secrets).unwrap();
        std::fs::write(secrets.join("key.pem"), "k").unwrap();
        std::fs::write(d.path().join("open.txt"), "o").unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("data"), "d").unwrap();
        std::os::unix::fs::symlink(outside.join("data"), secrets.join("alias")).unwrap();
        std::fs::hard_link(secrets.join("key.pem"), d.path().join("copy")).unwrap();
        let s = secrets.clone();
        let matched = move |p: &Path, _: bool| p.starts_with(&s).then_some(7);
        let w = walk(vec![d.path().to_path_buf(), secrets.clone()], &matched);
        assert!(w.complete);
        let id = multi_link_id(&d.path().join("copy")).unwrap();
        assert_eq!(w.ids.get(&id), Some(&7));
        assert_eq!(w.denied(&d.path().join("copy"), &[]), Some(7));
        let data = std::fs::canonicalize(outside.join("data")).unwrap();
        assert_eq!(w.denied(&data, std::slice::from_ref(&data)), Some(7));
        let open = d.path().join("open.txt");
        assert_eq!(w.denied(&open, std::slice::from_ref(&open)), None);
        assert!(!w.unknown(&d.path().join("copy")));

        // A tree larger than the budget leaves the record incomplete: a multi-link file it does
        // not know is unknown, a single-link one is not.
        let big = d.path().join("big");
        std::fs::create_dir(&big).unwrap();
        for i in 0..(MAX_WALK + 10) {
            std::fs::write(big.join(i.to_string()), "").unwrap();
        }
        std::fs::write(d.path().join("one"), "").unwrap();
        std::fs::hard_link(d.path().join("one"), d.path().join("two")).unwrap();
        let w = walk(vec![big.clone()], &|_, _| Some(1));
        assert!(!w.complete);
        assert!(w.unknown(&d.path().join("two")));
        assert!(!w.unknown(&d.path().join("open.txt")));
    }
}
