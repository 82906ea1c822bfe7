//! Running a turn's calls: concurrency-safe neighbours together, everything else alone, in
//! the order the model wrote them where it matters.
//!
//! One engine serves both ways a turn arrives. Given all at once ([`Session::run_turn`]) or
//! block by block while the model is still streaming ([`Session::streaming`] with
//! [`TurnRun::push`] and [`TurnRun::finish`]), a call starts as soon as it may:
//!
//! - a concurrency-safe call starts when every running call is safe too and fewer than the cap
//!   are in flight (`TOOLGATE_MAX_TOOL_USE_CONCURRENCY`, or Claude Code's
//!   `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`; default 10), in block order;
//! - any other call waits for everything before it and holds back everything after it.
//!
//! Consecutive safe calls thus form one batch and each other call a batch of its own, exactly
//! the partition [`Session::partition`] computes. Context changes of a safe batch are queued per
//! call and applied when the batch ends, in block order (for each call, in the order it emitted
//! them); an unsafe call's apply as soon as it finishes, so the next call sees them. Each call
//! runs as its own task (blocking work inside the tools goes to the blocking pool), its result
//! is reported the moment it is done, and the assembled message lists results in block order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tracing::Instrument as _;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use tool_core::texts::{REJECT_MESSAGE, error_calling_tool, wrap_tool_use_error};
use tool_core::{
    CancellationToken, ContentBlock, ContextModifier, InterruptBehavior, Stage, ToolContext,
    ToolOutcome, ToolResult, ToolResultContent, ToolUse,
};

use crate::session::{Session, TurnOutcome};

/// The default number of safe calls in flight at once.
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// The cap on concurrent safe calls: `TOOLGATE_MAX_TOOL_USE_CONCURRENCY`, else
/// `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`, from the session's environment and then the
/// process's; missing, invalid or 0 means 10.
pub fn max_concurrency(ctx: &ToolContext) -> usize {
    [
        "TOOLGATE_MAX_TOOL_USE_CONCURRENCY",
        "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY",
    ]
    .iter()
    .find_map(|name| {
        ctx.env
            .get(*name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    })
    .and_then(|v| v.trim().parse::<usize>().ok())
    .filter(|n| *n > 0)
    .unwrap_or(DEFAULT_MAX_CONCURRENCY)
}

/// What a running turn reports, as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnUpdate {
    /// A call started.
    Started {
        /// Its position in the turn.
        index: usize,
        /// Its `tool_use` id.
        tool_use_id: String,
    },
    /// A call finished; its `tool_result` as the model will see it.
    Finished {
        /// Its position in the turn.
        index: usize,
        /// The result.
        result: ToolResult,
    },
    /// Context changes were applied to the session: those of the calls at `indices`, in that
    /// order (a safe batch's, when it ended; an unsafe call's, when it finished).
    ContextChanged {
        /// Whose changes.
        indices: Vec<usize>,
    },
}

/// Lets another task interrupt the running turn (the user sent a new message): calls whose
/// tool cancels on interrupt end with Claude Code's rejection text, the others run on.
#[derive(Clone, Debug, Default)]
pub struct InterruptHandle {
    inner: Arc<InterruptState>,
}

#[derive(Debug, Default)]
struct InterruptState {
    interrupted: AtomicBool,
    cancellable: Mutex<Vec<CancellationToken>>,
}

impl InterruptHandle {
    /// Interrupt: cancel every running and queued call whose interrupt behaviour is `cancel`.
    pub fn interrupt(&self) {
        self.inner.interrupted.store(true, Ordering::SeqCst);
        if let Ok(tokens) = self.inner.cancellable.lock() {
            for t in tokens.iter() {
                t.cancel();
            }
        }
    }

    fn interrupted(&self) -> bool {
        self.inner.interrupted.load(Ordering::SeqCst)
    }

    fn register(&self, token: CancellationToken) {
        if let Ok(mut tokens) = self.inner.cancellable.lock() {
            tokens.push(token);
        }
    }

    fn reset(&self) {
        self.inner.interrupted.store(false, Ordering::SeqCst);
        if let Ok(mut tokens) = self.inner.cancellable.lock() {
            tokens.clear();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Queued,
    Running,
    Done,
}

struct Entry {
    block: ToolUse,
    safe: bool,
    interrupt: InterruptBehavior,
    is_bash: bool,
    state: State,
    outcome: Option<ToolOutcome>,
}

type Running = BoxFuture<'static, (usize, ToolOutcome)>;

/// A turn in progress. Push calls (or have them pushed by [`Session::run_turn`]), read
/// updates with [`next`](Self::next), and [`collect`](Self::collect) the outcome.
pub struct TurnRun<'s> {
    /// The working directory when the turn started.
    start_cwd: std::path::PathBuf,
    session: &'s mut Session,
    entries: Vec<Entry>,
    finished: bool,
    running: FuturesUnordered<Running>,
    running_unsafe: bool,
    pending: BTreeMap<usize, Vec<ContextModifier>>,
    updates: VecDeque<TurnUpdate>,
    cap: usize,
    in_flight: usize,
    peak: usize,
    /// The turn's `tracing` span, the parent of its calls' spans.
    span: tracing::Span,
    siblings: Option<CancellationToken>,
    errored: Option<String>,
}

impl std::fmt::Debug for TurnRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnRun")
            .field("calls", &self.entries.len())
            .field("in_flight", &self.in_flight)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

/// `Tool(summary)` for the sibling-cancel text: the first 40 characters of the command, file
/// path or pattern, with `…` when cut.
fn describe(block: &ToolUse) -> String {
    let summary = ["command", "file_path", "pattern"]
        .iter()
        .find_map(|k| block.input.get(*k).and_then(|v| v.as_str()));
    match summary {
        Some(s) => {
            let mut cut: String = s.chars().take(40).collect();
            if s.chars().count() > 40 {
                cut.push('\u{2026}');
            }
            format!("{}({cut})", block.name)
        }
        None => String::new(),
    }
}

impl<'s> TurnRun<'s> {
    /// A turn on `session`. A turn cancelled before it starts (the session's token already
    /// fired) ends every call with the cancel text; the next turn gets a fresh token.
    pub(crate) fn new(session: &'s mut Session) -> Self {
        session.interrupt.reset();
        let cap = max_concurrency(&session.ctx);
        let siblings = session
            .cancel_siblings_on_bash_error
            .then(|| session.ctx.cancel.child_token());
        let start_cwd = session.ctx.cwd.clone();
        let span = tracing::info_span!("turn", session = %session.ctx.session_id);
        Self {
            span,
            start_cwd,
            session,
            entries: Vec::new(),
            finished: false,
            running: FuturesUnordered::new(),
            running_unsafe: false,
            pending: BTreeMap::new(),
            updates: VecDeque::new(),
            cap,
            in_flight: 0,
            peak: 0,
            siblings,
            errored: None,
        }
    }

    /// Add the next `tool_use` block; it starts at once if it may.
    pub fn push(&mut self, mut block: ToolUse) {
        if tool_core::exceeds_depth(&block.input, tool_core::MAX_INPUT_DEPTH) {
            // Refused as it arrives, and taken apart without recursion.
            tool_core::dismantle(std::mem::take(&mut block.input));
            let text = tool_core::too_deep_text(&block.name);
            let i = self.entries.len();
            self.entries.push(Entry {
                block,
                safe: true,
                interrupt: InterruptBehavior::Block,
                is_bash: false,
                state: State::Queued,
                outcome: None,
            });
            self.finish_refused(i, Stage::Schema, text);
            self.start_ready();
            return;
        }
        let (safe, interrupt, name) = self.session.classify(&block);
        let is_bash = name.as_deref() == Some("Bash");
        self.entries.push(Entry {
            block,
            safe,
            interrupt,
            is_bash,
            state: State::Queued,
            outcome: None,
        });
        self.start_ready();
    }

    /// No more blocks will come.
    pub fn finish(&mut self) {
        self.finished = true;
        self.start_ready();
    }

    /// The most calls that were in flight at once so far.
    pub fn peak_in_flight(&self) -> usize {
        self.peak
    }

    /// The number of calls pushed so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no call was pushed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Has the call at `index` started (or finished)?
    pub fn started(&self, index: usize) -> bool {
        self.entries
            .get(index)
            .is_some_and(|e| e.state != State::Queued)
    }

    /// The next update. `None` once the turn is finished and every call is done, or (before
    /// [`finish`](Self::finish)) when nothing is running and the next call needs a push.
    pub async fn next(&mut self) -> Option<TurnUpdate> {
        loop {
            if let Some(u) = self.updates.pop_front() {
                return Some(u);
            }
            self.start_ready();
            if let Some(u) = self.updates.pop_front() {
                return Some(u);
            }
            if self.running.is_empty() {
                if self.finished && self.entries.iter().all(|e| e.state == State::Done) {
                    self.flush_pending();
                    return self.updates.pop_front();
                }
                return None;
            }
            if let Some((i, outcome)) = self.running.next().await {
                self.complete(i, outcome);
            }
        }
    }

    /// The updates as a [`futures::Stream`] (ends when [`next`](Self::next) returns `None`).
    pub fn updates(&mut self) -> impl futures::Stream<Item = TurnUpdate> + '_ {
        futures::stream::unfold(self, |run| async move {
            let u = run.next().await?;
            Some((u, run))
        })
    }

    /// Finish the turn, run it to the end and return every call's outcome in block order.
    pub async fn collect(mut self) -> TurnOutcome {
        self.finish();
        while self.next().await.is_some() {}
        let mut outcomes: Vec<ToolOutcome> = self
            .entries
            .iter_mut()
            .map(|e| {
                e.outcome.take().unwrap_or_else(|| {
                    ToolOutcome::refused(e.block.id.clone(), Stage::Internal, "no result")
                })
            })
            .collect();
        // A turn that moved the working directory says so once, at the end of the message it
        // sends: Claude Code attaches the reminder to the message's last block, the last
        // result, or, where hooks or tools added blocks after the results, a text block of
        // its own after them (recorded: z1_cwd_reminder_with_hook_context).
        let cwd = &self.session.ctx.cwd;
        let added = outcomes
            .iter()
            .any(|o| !o.hook_messages.is_empty() || !o.extra_messages.is_empty());
        if *cwd != self.start_cwd
            && let Some(last) = outcomes.last_mut()
        {
            let reminder = format!(
                "<system-reminder>\n# Environment update\n - Primary working directory: {} (was {})\n</system-reminder>",
                cwd.display(),
                self.start_cwd.display()
            );
            if added {
                last.extra_messages.push(ContentBlock::text(reminder));
            } else {
                last.content.append_note(&reminder);
            }
        }
        if self.session.ctx.cancel.is_cancelled() {
            self.session.ctx.cancel = CancellationToken::new();
        }
        TurnOutcome {
            outcomes,
            peak_in_flight: self.peak,
        }
    }

    /// Start every queued call that may start now, in block order.
    fn start_ready(&mut self) {
        while let Some(i) = self.entries.iter().position(|e| e.state == State::Queued) {
            if self.errored.is_some() {
                // A Bash sibling failed: the queued calls are cancelled without running.
                self.finish_without_running(i, self.sibling_text());
                continue;
            }
            if self.session.interrupt.interrupted()
                && self.entries[i].interrupt == InterruptBehavior::Cancel
            {
                self.finish_without_running(i, REJECT_MESSAGE.to_owned());
                continue;
            }
            if self.entries[i].safe {
                if self.running_unsafe || self.in_flight >= self.cap {
                    return;
                }
                self.start(i);
            } else {
                if !self.running.is_empty() {
                    return;
                }
                // A safe batch ends here: its changes apply before the next call starts.
                self.flush_pending();
                self.start(i);
                return;
            }
        }
    }

    fn finish_without_running(&mut self, i: usize, text: String) {
        self.finish_refused(i, Stage::Cancelled, text);
    }

    fn finish_refused(&mut self, i: usize, stage: Stage, text: String) {
        let id = self.entries[i].block.id.clone();
        let outcome = ToolOutcome::refused(id, stage, text);
        self.entries[i].state = State::Done;
        self.updates.push_back(TurnUpdate::Finished {
            index: i,
            result: outcome.tool_result(),
        });
        self.entries[i].outcome = Some(outcome);
    }

    fn sibling_text(&self) -> String {
        match self.errored.as_deref() {
            Some(d) if !d.is_empty() => {
                wrap_tool_use_error(&format!("Cancelled: parallel tool call {d} errored"))
            }
            _ => wrap_tool_use_error("Cancelled: parallel tool call errored"),
        }
    }

    fn start(&mut self, i: usize) {
        let e = &mut self.entries[i];
        e.state = State::Running;
        let mut ctx = self.session.ctx.child();
        if let Some(s) = &self.siblings {
            ctx.cancel = s.child_token();
        }
        if e.interrupt == InterruptBehavior::Cancel {
            self.session.interrupt.register(ctx.cancel.clone());
        }
        if !e.safe {
            self.running_unsafe = true;
        }
        self.in_flight += 1;
        self.peak = self.peak.max(self.in_flight);
        let pipeline = self.session.pipeline.clone();
        let offered = self.session.offered_fn();
        let block = e.block.clone();
        self.updates.push_back(TurnUpdate::Started {
            index: i,
            tool_use_id: block.id.clone(),
        });
        let id = block.id.clone();
        let name = block.name.clone();
        if !e.safe {
            // An unsafe call runs alone: it runs on this task (its blocking work still goes to
            // the blocking pool), saving a task hand-off per call.
            self.running.push(Box::pin(
                async move {
                    let outcome = pipeline.run(&block, ctx, &move |n| offered(n)).await;
                    (i, outcome)
                }
                .instrument(self.span.clone()),
            ));
            return;
        }
        let task = tokio::spawn(
            async move { pipeline.run(&block, ctx, &move |n| offered(n)).await }
                .instrument(self.span.clone()),
        );
        self.running.push(Box::pin(async move {
            match task.await {
                Ok(outcome) => (i, outcome),
                Err(e) => {
                    let why = if e.is_panic() {
                        crate::call::panic_message(e.into_panic().as_ref())
                    } else {
                        e.to_string()
                    };
                    (
                        i,
                        ToolOutcome::refused(id, Stage::Internal, error_calling_tool(&name, &why)),
                    )
                }
            }
        }));
    }

    fn complete(&mut self, i: usize, mut outcome: ToolOutcome) {
        self.in_flight -= 1;
        let safe = self.entries[i].safe;
        if !safe {
            self.running_unsafe = false;
        }
        if self.session.interrupt.interrupted()
            && self.entries[i].interrupt == InterruptBehavior::Cancel
            && outcome.is_error
        {
            outcome.content = ToolResultContent::Text(REJECT_MESSAGE.to_owned());
        } else if self.errored.is_some()
            && outcome.is_error
            && matches!(outcome.stage, Stage::Ran | Stage::Cancelled)
        {
            outcome.content = ToolResultContent::Text(self.sibling_text());
        } else if let Some(s) = &self.siblings
            && self.entries[i].is_bash
            && outcome.is_error
            && outcome.stage == Stage::Ran
        {
            self.errored = Some(describe(&self.entries[i].block));
            s.cancel();
        }
        let mods: Vec<ContextModifier> = outcome.context_modifiers.drain(..).collect();
        if safe {
            if !mods.is_empty() {
                self.pending.insert(i, mods);
            }
        } else if !mods.is_empty() {
            for m in mods {
                m.apply(&mut self.session.ctx);
            }
            self.updates
                .push_back(TurnUpdate::ContextChanged { indices: vec![i] });
        }
        self.updates.push_back(TurnUpdate::Finished {
            index: i,
            result: outcome.tool_result(),
        });
        self.entries[i].state = State::Done;
        self.entries[i].outcome = Some(outcome);
    }

    /// Apply the queued changes of the safe calls, in block order.
    fn flush_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let indices: Vec<usize> = pending.keys().copied().collect();
        for (_, mods) in pending {
            for m in mods {
                m.apply(&mut self.session.ctx);
            }
        }
        self.updates
            .push_back(TurnUpdate::ContextChanged { indices });
    }
}
