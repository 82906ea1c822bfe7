//! The file-state cache: what the model has seen of each file, so Edit and Write can insist on
//! a prior Read and notice files that changed on disk since.
//!
//! Bounded like an LRU by entry count and by bytes of content (Claude Code: 100 entries,
//! 25 MB). An evicted entry makes the next Edit or Write ask for a fresh Read, which is the
//! safe direction.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the model saw of one file. Serializable, so a host can keep a session's cache between
/// processes (see [`FileStateCache::entries`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileState {
    /// The text seen (the returned range for a Read, the whole file after Edit or Write),
    /// with a BOM removed and CRLF turned into LF.
    pub content: String,
    /// The file's mtime in whole milliseconds since the epoch when it was seen.
    pub timestamp_ms: u64,
    /// The Read's offset (1 when not given); `None` for entries written by Edit or Write.
    pub offset: Option<i64>,
    /// The Read's limit; `None` when not given and for entries written by Edit or Write.
    pub limit: Option<i64>,
    /// True when the model has the whole current file in its context (a full Read, a Write,
    /// or an Edit on top of either).
    pub full_view: bool,
}

/// Default maximum number of entries.
pub const DEFAULT_MAX_ENTRIES: usize = 100;
/// Default maximum bytes of content held.
pub const DEFAULT_MAX_BYTES: usize = 25 * 1024 * 1024;

#[derive(Debug)]
struct Inner {
    map: HashMap<PathBuf, (FileState, u64)>,
    bytes: usize,
    clock: u64,
}

/// An LRU map from absolute path to [`FileState`], bounded by entries and bytes.
/// Shared between calls of a session; all methods take `&self`.
#[derive(Debug)]
pub struct FileStateCache {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

impl Default for FileStateCache {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ENTRIES, DEFAULT_MAX_BYTES)
    }
}

impl FileStateCache {
    /// A cache holding at most `max_entries` entries and `max_bytes` bytes of content.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            max_entries: max_entries.max(1),
            max_bytes,
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                bytes: 0,
                clock: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the map consistent (every update is a single
        // insert or remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entry for `path`, marking it recently used.
    pub fn get(&self, path: &Path) -> Option<FileState> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        inner.map.get_mut(path).map(|(state, used)| {
            *used = now;
            state.clone()
        })
    }

    /// Record what the model saw of `path`, evicting the least recently used entries beyond the
    /// bounds. An entry larger than the byte bound on its own is not kept.
    pub fn insert(&self, path: PathBuf, state: FileState) {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let size = state.content.len();
        if let Some((old, _)) = inner.map.remove(&path) {
            inner.bytes -= old.content.len();
        }
        if size > self.max_bytes {
            return;
        }
        inner.bytes += size;
        inner.map.insert(path, (state, now));
        while inner.map.len() > self.max_entries || inner.bytes > self.max_bytes {
            let Some(oldest) = inner
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            if let Some((old, _)) = inner.map.remove(&oldest) {
                inner.bytes -= old.content.len();
            }
        }
    }

    /// Every entry, least recently used first: inserting them in this order into a new cache
    /// rebuilds the same recency order.
    pub fn entries(&self) -> Vec<(PathBuf, FileState)> {
        let inner = self.lock();
        let mut all: Vec<_> = inner
            .map
            .iter()
            .map(|(p, (s, used))| (*used, p.clone(), s.clone()))
            .collect();
        all.sort_by_key(|(used, _, _)| *used);
        all.into_iter().map(|(_, p, s)| (p, s)).collect()
    }

    /// Forget `path`.
    pub fn remove(&self, path: &Path) {
        let mut inner = self.lock();
        if let Some((old, _)) = inner.map.remove(path) {
            inner.bytes -= old.content.len();
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of content held.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(content: &str) -> FileState {
        FileState {
            content: content.into(),
            timestamp_ms: 1,
            offset: Some(1),
            limit: None,
            full_view: true,
        }
    }

    #[test]
    fn evicts_least_recently_used_by_count() {
        let c = FileStateCache::new(2, 1000);
        c.insert("/a".into(), st("a"));
        c.insert("/b".into(), st("b"));
        assert!(c.get(Path::new("/a")).is_some());
        c.insert("/c".into(), st("c"));
        assert!(
            c.get(Path::new("/b")).is_none(),
            "b was least recently used"
        );
        assert!(c.get(Path::new("/a")).is_some());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn evicts_by_bytes_and_refuses_oversized() {
        let c = FileStateCache::new(10, 10);
        c.insert("/a".into(), st("123456"));
        c.insert("/b".into(), st("123456"));
        assert!(c.get(Path::new("/a")).is_none());
        assert_eq!(c.bytes(), 6);
        c.insert("/big".into(), st("12345678901"));
        assert!(c.get(Path::new("/big")).is_none());
        assert_eq!(c.bytes(), 6);
    }

    #[test]
    fn entries_rebuild_the_same_recency_order() {
        let c = FileStateCache::new(3, 1000);
        c.insert("/a".into(), st("a"));
        c.insert("/b".into(), st("b"));
        c.insert("/c".into(), st("c"));
        assert!(c.get(Path::new("/a")).is_some());
        let order: Vec<_> = c.entries().into_iter().map(|(p, _)| p).collect();
        assert_eq!(order, [Path::new("/b"), Path::new("/c"), Path::new("/a")]);
        let copy = FileStateCache::new(3, 1000);
        for (p, s) in c.entries() {
            copy.insert(p, s);
        }
        copy.insert("/d".into(), st("d"));
        assert!(copy.get(Path::new("/b")).is_none(), "b is still the oldest");
        assert!(copy.get(Path::new("/a")).is_some());
    }

    #[test]
    fn replacing_an_entry_keeps_byte_count_right() {
        let c = FileStateCache::new(10, 100);
        c.insert("/a".into(), st("1234"));
        c.insert("/a".into(), st("12"));
        assert_eq!(c.bytes(), 2);
        c.remove(Path::new("/a"));
        assert_eq!(c.bytes(), 0);
        assert!(c.is_empty());
    }
}
