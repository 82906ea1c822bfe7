//! The hook set: hooks registered by event and matcher, in-process (closures) or command hooks
//! (Claude Code's `type: "command"`), each optionally limited by an `if` condition and grouped.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tool_core::{ContentBlock, HookOutcome, PermissionMode};

use crate::Error;
use crate::command::{CommandHook, CommandSpec};
use crate::condition::IfCondition;
use crate::matcher::Matcher;

/// The tool events hooks run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before the permission decision.
    PreToolUse,
    /// After a call that succeeded.
    PostToolUse,
    /// After a call that failed.
    PostToolUseFailure,
}

impl HookEvent {
    /// The event's name as Claude Code writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
        }
    }

    /// The event named `name`, if it is a tool event.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "PreToolUse" => Some(HookEvent::PreToolUse),
            "PostToolUse" => Some(HookEvent::PostToolUse),
            "PostToolUseFailure" => Some(HookEvent::PostToolUseFailure),
            _ => None,
        }
    }
}

/// What every hook is told about the session, besides the call itself.
#[derive(Debug, Clone, Default)]
pub struct HookSession {
    /// The session id.
    pub session_id: String,
    /// The transcript file, when the host keeps one.
    pub transcript_path: Option<String>,
    /// The session's working directory.
    pub cwd: String,
    /// The id of the prompt this turn answers, when the host has one.
    pub prompt_id: Option<String>,
    /// The permission mode.
    pub permission_mode: PermissionMode,
    /// The project root (`CLAUDE_PROJECT_DIR`, `TOOLGATE_PROJECT_DIR` for command hooks).
    pub project_dir: PathBuf,
    /// The environment command hooks run with (the process's own when empty).
    pub env: Arc<BTreeMap<String, String>>,
    /// Fires when the call is cancelled: running command hooks are killed.
    pub cancel: tool_core::CancellationToken,
}

impl HookSession {
    /// The session part of a call's context.
    pub fn from_context(ctx: &tool_core::ToolContext) -> Self {
        Self {
            session_id: ctx.session_id.clone(),
            transcript_path: ctx
                .transcript_path
                .as_ref()
                .map(|p| p.display().to_string()),
            cwd: ctx.cwd.display().to_string(),
            prompt_id: ctx.prompt_id.clone(),
            permission_mode: ctx.permission_mode,
            project_dir: ctx.project_root.clone(),
            env: ctx.env.clone(),
            cancel: ctx.cancel.clone(),
        }
    }
}

/// What a PreToolUse hook is given.
#[derive(Debug, Clone)]
pub struct PreToolUseInput {
    /// The session.
    pub session: HookSession,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's input (after schema defaults and normalisation).
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
}

/// What a PostToolUse or PostToolUseFailure hook is given.
#[derive(Debug, Clone)]
pub struct PostToolUseInput {
    /// The session.
    pub session: HookSession,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The tool's raw output (PostToolUse).
    pub tool_response: Option<Value>,
    /// The error text (PostToolUseFailure).
    pub error: Option<String>,
    /// The failure was an interrupt.
    pub is_interrupt: bool,
    /// How long the call ran, in milliseconds.
    pub duration_ms: u64,
}

/// What a PostToolUse hook answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostHookOutcome {
    /// Text for the model, added to the result.
    pub additional_context: Vec<String>,
    /// A blocking error (`decision: "block"` or exit code 2), added to the result.
    pub blocking_error: Option<String>,
    /// Replacement output for external tools.
    pub updated_output: Option<Value>,
    /// Stop the turn after this call.
    pub prevent_continuation: bool,
    /// Why.
    pub stop_reason: Option<String>,
    /// Notes for the user.
    pub user_notes: Vec<String>,
}

/// A PreToolUse hook.
#[async_trait]
pub trait PreToolUseHook: Send + Sync {
    /// Run the hook.
    async fn pre_tool_use(&self, input: PreToolUseInput) -> HookOutcome;
}

#[async_trait]
impl<F, Fut> PreToolUseHook for F
where
    F: Fn(PreToolUseInput) -> Fut + Send + Sync,
    Fut: Future<Output = HookOutcome> + Send,
{
    async fn pre_tool_use(&self, input: PreToolUseInput) -> HookOutcome {
        (self)(input).await
    }
}

/// A PostToolUse (or PostToolUseFailure) hook.
#[async_trait]
pub trait PostToolUseHook: Send + Sync {
    /// Run the hook.
    async fn post_tool_use(&self, input: PostToolUseInput) -> PostHookOutcome;
}

#[async_trait]
impl<F, Fut> PostToolUseHook for F
where
    F: Fn(PostToolUseInput) -> Fut + Send + Sync,
    Fut: Future<Output = PostHookOutcome> + Send,
{
    async fn post_tool_use(&self, input: PostToolUseInput) -> PostHookOutcome {
        (self)(input).await
    }
}

/// A registered hook with its matcher, condition, group and name.
pub(crate) struct Registered<H: ?Sized> {
    /// How messages name it: the command for command hooks.
    pub name: String,
    pub matcher: Matcher,
    pub condition: Option<IfCondition>,
    /// Hooks of one sequential group share an id and run in declared order.
    pub sequence: Option<usize>,
    pub hook: Arc<H>,
}

impl<H: ?Sized> Registered<H> {
    /// Does the hook apply to this call?
    pub(crate) fn applies(&self, tool_name: &str, input: &Value) -> bool {
        self.matcher.matches(tool_name)
            && self
                .condition
                .as_ref()
                .is_none_or(|c| c.matches(tool_name, input))
    }
}

/// The hooks of a session, by event.
#[derive(Default, Clone)]
pub struct Hooks {
    pub(crate) pre: Vec<Arc<Registered<dyn PreToolUseHook>>>,
    pub(crate) post: Vec<Arc<Registered<dyn PostToolUseHook>>>,
    pub(crate) post_failure: Vec<Arc<Registered<dyn PostToolUseHook>>>,
    next_sequence: usize,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |v: &[Arc<Registered<dyn PostToolUseHook>>]| {
            v.iter().map(|h| h.name.clone()).collect::<Vec<_>>()
        };
        f.debug_struct("Hooks")
            .field("pre", &self.pre.iter().map(|h| &h.name).collect::<Vec<_>>())
            .field("post", &names(&self.post))
            .field("post_failure", &names(&self.post_failure))
            .finish()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a PreToolUse hook for the tools `matcher` selects.
    pub fn pre_tool_use(
        &mut self,
        matcher: &str,
        hook: impl PreToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        let name = format!("PreToolUse[{matcher}]#{}", self.pre.len());
        let hook: Arc<dyn PreToolUseHook> = Arc::new(hook);
        self.pre
            .push(registered(name, Matcher::parse(matcher)?, None, None, hook));
        Ok(self)
    }

    /// Add a PostToolUse hook.
    pub fn post_tool_use(
        &mut self,
        matcher: &str,
        hook: impl PostToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        let name = format!("PostToolUse[{matcher}]#{}", self.post.len());
        let hook: Arc<dyn PostToolUseHook> = Arc::new(hook);
        self.post
            .push(registered(name, Matcher::parse(matcher)?, None, None, hook));
        Ok(self)
    }

    /// Add a PostToolUseFailure hook.
    pub fn post_tool_use_failure(
        &mut self,
        matcher: &str,
        hook: impl PostToolUseHook + 'static,
    ) -> Result<&mut Self, Error> {
        let name = format!("PostToolUseFailure[{matcher}]#{}", self.post_failure.len());
        let hook: Arc<dyn PostToolUseHook> = Arc::new(hook);
        self.post_failure
            .push(registered(name, Matcher::parse(matcher)?, None, None, hook));
        Ok(self)
    }

    /// Add command hooks for `event` as one group. Hooks of a `sequential` group run one after
    /// another in the order given, each PreToolUse hook seeing the input the previous one
    /// rewrote; otherwise every matching hook runs at once.
    pub fn command_group(
        &mut self,
        event: HookEvent,
        matcher: &str,
        sequential: bool,
        specs: Vec<CommandSpec>,
    ) -> Result<&mut Self, Error> {
        let matcher = Matcher::parse(matcher)?;
        let sequence = sequential.then(|| {
            self.next_sequence += 1;
            self.next_sequence
        });
        for spec in specs {
            let condition = spec
                .condition
                .as_deref()
                .map(IfCondition::parse)
                .transpose()?;
            let hook = Arc::new(CommandHook::new(spec));
            let name = hook.command().to_owned();
            let (m, c) = (matcher.clone(), condition);
            match event {
                HookEvent::PreToolUse => {
                    let h: Arc<dyn PreToolUseHook> = hook;
                    self.pre.push(registered(name, m, c, sequence, h));
                }
                HookEvent::PostToolUse => {
                    let h: Arc<dyn PostToolUseHook> = hook;
                    self.post.push(registered(name, m, c, sequence, h));
                }
                HookEvent::PostToolUseFailure => {
                    let h: Arc<dyn PostToolUseHook> = hook;
                    self.post_failure.push(registered(name, m, c, sequence, h));
                }
            }
        }
        Ok(self)
    }

    /// Add every hook of `other` after this set's own, keeping `other`'s sequential groups
    /// apart from this set's (for hooks loaded from files plus a host's in-process ones).
    pub fn append(&mut self, other: Hooks) -> &mut Self {
        let offset = self.next_sequence;
        fn moved<H: ?Sized>(h: &Arc<Registered<H>>, offset: usize) -> Arc<Registered<H>> {
            Arc::new(Registered {
                name: h.name.clone(),
                matcher: h.matcher.clone(),
                condition: h.condition.clone(),
                sequence: h.sequence.map(|s| s + offset),
                hook: h.hook.clone(),
            })
        }
        self.pre.extend(other.pre.iter().map(|h| moved(h, offset)));
        self.post
            .extend(other.post.iter().map(|h| moved(h, offset)));
        self.post_failure
            .extend(other.post_failure.iter().map(|h| moved(h, offset)));
        self.next_sequence += other.next_sequence;
        self
    }

    /// True when no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.post_failure.is_empty()
    }

    /// How many hooks each event has: (PreToolUse, PostToolUse, PostToolUseFailure).
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.pre.len(), self.post.len(), self.post_failure.len())
    }
}

fn registered<H: ?Sized>(
    name: String,
    matcher: Matcher,
    condition: Option<IfCondition>,
    sequence: Option<usize>,
    hook: Arc<H>,
) -> Arc<Registered<H>> {
    Arc::new(Registered {
        name,
        matcher,
        condition,
        sequence,
        hook,
    })
}

/// A `<system-reminder>` text, as hook messages reach the model.
pub(crate) fn reminder_text(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}

/// A `<system-reminder>` text block.
pub(crate) fn reminder(text: &str) -> ContentBlock {
    ContentBlock::text(reminder_text(text))
}

/// Run the hooks that apply, all at once except that each sequential group runs in order.
/// `run` runs one hook given the input the previous hook of its group left (the original
/// input for the first); `rewrite` reads a result's rewritten input, if any. Results come
/// back in declared order.
pub(crate) async fn run_units<H: ?Sized, O, F, Fut>(
    hooks: &[Arc<Registered<H>>],
    input: Value,
    run: F,
    rewrite: fn(&O) -> Option<Value>,
) -> Vec<(Arc<Registered<H>>, O)>
where
    F: Fn(Arc<Registered<H>>, Value) -> Fut,
    Fut: Future<Output = O>,
{
    // Units: each unsequenced hook alone; each sequence as one unit, in first-seen order.
    let mut units: Vec<Vec<(usize, Arc<Registered<H>>)>> = Vec::new();
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, h) in hooks.iter().enumerate() {
        match h.sequence {
            Some(s) => match seen.get(&s) {
                Some(&u) => units[u].push((i, h.clone())),
                None => {
                    seen.insert(s, units.len());
                    units.push(vec![(i, h.clone())]);
                }
            },
            None => units.push(vec![(i, h.clone())]),
        }
    }
    let run = &run;
    let runs = units.into_iter().map(|unit| {
        let input = input.clone();
        async move {
            let mut current = input;
            let mut out = Vec::new();
            for (i, h) in unit {
                let o = run(h.clone(), current.clone()).await;
                if let Some(next) = rewrite(&o) {
                    current = next;
                }
                out.push((i, h, o));
            }
            out
        }
    });
    let mut all: Vec<(usize, Arc<Registered<H>>, O)> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    all.sort_by_key(|(i, _, _)| *i);
    all.into_iter().map(|(_, h, o)| (h, o)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommandSpec;

    fn sequential(hooks: &mut Hooks, commands: &[&str]) {
        let specs = commands.iter().map(|c| CommandSpec::new(*c)).collect();
        hooks
            .command_group(HookEvent::PreToolUse, "*", true, specs)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn appended_sequential_groups_stay_apart() {
        let mut a = Hooks::new();
        sequential(&mut a, &["a1", "a2"]);
        let mut b = Hooks::new();
        sequential(&mut b, &["b1", "b2"]);
        sequential(&mut b, &["c1"]);
        a.append(b);
        let groups: Vec<(String, Option<usize>)> =
            a.pre.iter().map(|h| (h.name.clone(), h.sequence)).collect();
        assert_eq!(groups.len(), 5);
        let seq = |name: &str| groups.iter().find(|(n, _)| n == name).and_then(|(_, s)| *s);
        assert_eq!(seq("a1"), seq("a2"));
        assert_eq!(seq("b1"), seq("b2"));
        assert_ne!(seq("a1"), seq("b1"));
        assert_ne!(seq("b1"), seq("c1"));
        assert_ne!(seq("a1"), seq("c1"));
        // A group added after the append gets a fresh sequence too.
        sequential(&mut a, &["d1"]);
        let d = a.pre.last().and_then(|h| h.sequence);
        assert!(groups.iter().all(|(_, s)| *s != d), "{groups:?} {d:?}");
    }
}
