//! Cancellation: a token a host fires to stop a turn or a call, and that the work awaits.
//!
//! Tokens form a tree: cancelling one cancels every token made from it with
//! [`child_token`](CancellationToken::child_token), never its parent. Built on `std` alone, so
//! a host that only asks for decisions does not pull in an async runtime for it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};

/// A cancellation signal shared by clones. Tokens form a tree: cancelling one cancels every
/// token made from it with [`child_token`](Self::child_token), never its parent.
#[derive(Clone, Default)]
pub struct CancellationToken {
    node: Arc<Node>,
}

#[derive(Default)]
struct Node {
    /// Set once, never cleared; read without the lock.
    cancelled: AtomicBool,
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    /// Futures waiting for the signal, by the id each holds.
    wakers: Vec<(u64, Waker)>,
    next_id: u64,
    /// Tokens made from this one that still exist.
    children: Vec<Weak<Node>>,
}

impl Node {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // A panic while holding this lock leaves the lists consistent: keep going.
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cancel(&self) {
        let (wakers, children) = {
            let mut w = self.lock();
            if self.cancelled.swap(true, Ordering::SeqCst) {
                return;
            }
            (
                std::mem::take(&mut w.wakers),
                std::mem::take(&mut w.children),
            )
        };
        for (_, waker) in wakers {
            waker.wake();
        }
        for child in children.iter().filter_map(Weak::upgrade) {
            child.cancel();
        }
    }
}

impl std::fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationToken")
            .field("is_cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancellationToken {
    /// A token not cancelled, with no parent.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token cancelled with this one (and on its own, without touching this one).
    pub fn child_token(&self) -> Self {
        let child = Self::new();
        {
            let mut w = self.node.lock();
            if !self.is_cancelled() {
                w.children.retain(|c| c.strong_count() > 0);
                w.children.push(Arc::downgrade(&child.node));
                return child;
            }
        }
        child.cancel();
        child
    }

    /// Fire the signal: this token, its clones and every token made from them are cancelled;
    /// whatever awaits [`cancelled`](Self::cancelled) wakes. Cancelling twice is harmless.
    pub fn cancel(&self) {
        self.node.cancel();
    }

    /// Whether the signal has fired.
    pub fn is_cancelled(&self) -> bool {
        self.node.cancelled.load(Ordering::SeqCst)
    }

    /// A future that completes once the signal fires (at once if it has).
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            id: None,
        }
    }
}

/// The future of [`CancellationToken::cancelled`].
#[must_use = "a future does nothing unless awaited"]
#[derive(Debug)]
pub struct Cancelled<'a> {
    token: &'a CancellationToken,
    /// Where this future's waker is registered, once it is.
    id: Option<u64>,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let node = &self.token.node;
        if node.cancelled.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let mut w = node.lock();
        // Checked again under the lock: `cancel` sets the flag before it takes the wakers.
        if node.cancelled.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        match self.id {
            Some(id) => {
                if let Some((_, waker)) = w.wakers.iter_mut().find(|(i, _)| *i == id) {
                    waker.clone_from(cx.waker());
                }
            }
            None => {
                let id = w.next_id;
                w.next_id += 1;
                w.wakers.push((id, cx.waker().clone()));
                drop(w);
                self.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.token.node.lock().wakers.retain(|(i, _)| *i != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_reaches_children_and_clones_never_parents() {
        let root = CancellationToken::new();
        let child = root.child_token();
        let grandchild = child.child_token();
        let clone = child.clone();
        let sibling = root.child_token();
        child.cancel();
        assert!(child.is_cancelled() && clone.is_cancelled() && grandchild.is_cancelled());
        assert!(!root.is_cancelled() && !sibling.is_cancelled());
        root.cancel();
        assert!(sibling.is_cancelled());
        // Made from a cancelled token: cancelled from the start.
        assert!(root.child_token().is_cancelled());
    }

    #[tokio::test]
    async fn cancelled_wakes_every_waiter() {
        let token = CancellationToken::new();
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let t = token.child_token();
                tokio::spawn(async move { t.cancelled().await })
            })
            .collect();
        tokio::task::yield_now().await;
        token.cancel();
        for w in waiters {
            tokio::time::timeout(std::time::Duration::from_secs(10), w)
                .await
                .unwrap_or_else(|_| panic!("a waiter was never woken"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        token.cancelled().await;
    }

    #[tokio::test]
    async fn a_dropped_waiter_leaves_nothing_registered() {
        let token = CancellationToken::new();
        for _ in 0..100 {
            let wait = token.cancelled();
            let _ = tokio::time::timeout(std::time::Duration::from_millis(1), wait).await;
        }
        assert!(token.node.lock().wakers.is_empty());
        for _ in 0..100 {
            drop(token.child_token());
        }
        let _keep = token.child_token();
        assert!(token.node.lock().children.len() <= 2);
    }
}
