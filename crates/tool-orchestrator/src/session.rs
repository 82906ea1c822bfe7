//! Sessions: what lives across turns (the context, the file-state cache, the policy, the
//! hooks) and the running of a turn's `tool_use` blocks.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use tool_core::{
    Approver, InterruptBehavior, Lookup, PathPolicy, PermissionPolicy, ToolContext, ToolDefinition,
    ToolOutcome, ToolRegistry, ToolUse, UserMessage,
};
use tool_hooks::Hooks;
use tool_permissions::{Policy, PolicyFiles};

use crate::allow_tools::AllowTools;
use crate::pipeline::{BoxedLayer, HostLayer, Pipeline, Stack, boxed_layer};
use crate::turn::{InterruptHandle, TurnRun};

/// Builds a [`Session`].
pub struct SessionBuilder {
    registry: ToolRegistry,
    ctx: ToolContext,
    policy: Arc<dyn PermissionPolicy>,
    hooks: Hooks,
    approver: Option<Arc<dyn Approver>>,
    offered: Option<BTreeSet<String>>,
    allowed_tools: BTreeSet<String>,
    load_notes: Vec<String>,
    cancel_siblings: bool,
    around_stack: Vec<BoxedLayer>,
    around_call: Vec<BoxedLayer>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("registry", &self.registry)
            .field("hooks", &self.hooks)
            .field("offered", &self.offered)
            .field("allowed_tools", &self.allowed_tools)
            .field("layers_around_stack", &self.around_stack.len())
            .field("layers_around_call", &self.around_call.len())
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// A session over `registry` starting from `ctx`, with no rules (the default-mode
    /// baseline), no hooks, no approver (asks are refused) and every tool offered.
    pub fn new(registry: ToolRegistry, ctx: ToolContext) -> Self {
        Self {
            registry,
            ctx,
            policy: Arc::new(Policy::empty()),
            hooks: Hooks::new(),
            approver: None,
            offered: None,
            allowed_tools: BTreeSet::new(),
            load_notes: Vec::new(),
            cancel_siblings: false,
            around_stack: Vec::new(),
            around_call: Vec::new(),
        }
    }

    /// Add the host's own middleware (any tower layer over the boxed [`ToolService`](crate::ToolService)) around
    /// the whole stack: it sees every call first, before the schema check, and every outcome
    /// last, refusals included. Of several, the first added is the outermost.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use serde_json::json;
    /// use tool_core::{ToolContext, ToolInvocation, ToolUse};
    /// use tool_orchestrator::Session;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let calls = Arc::new(AtomicUsize::new(0));
    /// let counted = calls.clone();
    /// // A layer counting the calls it sees, written with tower's helpers.
    /// let count = tower::layer::layer_fn(move |inner: tool_orchestrator::ToolService| {
    ///     let counted = counted.clone();
    ///     tower::ServiceExt::map_request(inner, move |inv: ToolInvocation| {
    ///         counted.fetch_add(1, Ordering::SeqCst);
    ///         inv
    ///     })
    /// });
    /// let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
    /// let mut session = Session::builder(builtin_tools::registry().unwrap(), ctx)
    ///     .layer(count)
    ///     .build();
    /// let turn = session.run_turn(&[ToolUse::new("t1", "Glob", json!({"pattern": "*.none"}))]).await;
    /// assert_eq!(turn.outcomes[0].content.to_text(), "No files found");
    /// assert_eq!(calls.load(Ordering::SeqCst), 1);
    /// # });
    /// ```
    pub fn layer(mut self, layer: impl HostLayer) -> Self {
        self.around_stack.push(boxed_layer(layer));
        self
    }

    /// Add the host's own middleware around the tool call itself: it sees only calls that
    /// passed the schema, validation, the PreToolUse hooks and the permission decision, with
    /// their final input, and the tool's raw outcome before the result policy and the
    /// PostToolUse hooks. Of several, the first added is the outermost.
    pub fn layer_around_call(mut self, layer: impl HostLayer) -> Self {
        self.around_call.push(boxed_layer(layer));
        self
    }

    /// Allow the calls of these tools (the host's own, usually) that nothing else decided,
    /// as a whole-tool allow rule would: without it, a call that no rule, mode or check
    /// allows asks, which for a read-only tool with no paths is every call. Deny and ask
    /// rules, the built-in checks and plan mode still apply (see [`AllowTools`]).
    pub fn allow_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.allowed_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// When a Bash call fails, cancel the other calls of its batch (Claude Code's older
    /// streaming executor did; off by default, as in current Claude Code).
    pub fn cancel_siblings_on_bash_error(mut self, on: bool) -> Self {
        self.cancel_siblings = on;
        self
    }

    /// The permission policy; it also answers the tools' path checks and plans the sandbox
    /// Bash commands run in ([`SandboxPolicy`](tool_core::sandbox::SandboxPolicy)).
    pub fn policy<
        P: PermissionPolicy + PathPolicy + tool_core::sandbox::SandboxPolicy + 'static,
    >(
        mut self,
        policy: Arc<P>,
    ) -> Self {
        // The policy's own default mode and directories, where the host left them open.
        self.ctx = self.ctx.with_policy_defaults(policy.as_ref()).into_owned();
        self.ctx.path_policy = policy.clone();
        self.ctx.sandbox_policy = policy.clone();
        self.policy = policy;
        self
    }

    /// The hooks (replacing any set before).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// The policy and the hooks of the same policy files, read once
    /// ([`PolicySources::read`](tool_permissions::PolicySources::read)), so a session never runs
    /// a project's rules without its hooks. The files' hooks run beside any set with
    /// [`hooks`](Self::hooks) before; what loading noticed (hooks or allow rules of an untrusted
    /// project left out, hooks of events toolgate does not run) is in
    /// [`Session::load_notes`].
    ///
    /// ```
    /// use tool_core::ToolContext;
    /// use tool_orchestrator::Session;
    /// use tool_permissions::{PolicySources, Trust};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let root = dir.path().join("project");
    /// std::fs::create_dir_all(root.join(".toolgate")).unwrap();
    /// std::fs::write(
    ///     root.join(".toolgate/policy.toml"),
    ///     "[permissions]\nallow = [\"Bash(cargo test:*)\"]\n\n\
    ///      [[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"./check.sh\"\n",
    /// )
    /// .unwrap();
    /// let mut sources = PolicySources::standard(&root, dir.path(), None, Trust::Untrusted);
    /// sources.managed.clear();
    /// let files = sources.read().unwrap();
    /// let ctx = ToolContext::new(&root, dir.path(), dir.path().join(".results"));
    /// let session = Session::builder(builtin_tools::registry().unwrap(), ctx)
    ///     .policy_files(&files)
    ///     .unwrap()
    ///     .build();
    /// // Untrusted: the project's allow rule and its hook are left out, and the session says so.
    /// assert_eq!(session.load_notes().len(), 2, "{:?}", session.load_notes());
    /// ```
    pub fn policy_files(mut self, files: &PolicyFiles) -> Result<Self, crate::Error> {
        let policy = files.policy()?;
        let (mut hooks, notes) = tool_hooks::load_hooks(files)?;
        self.load_notes.extend(notes);
        self.load_notes
            .extend(policy.ignored_rules().iter().map(|i| {
                format!(
                    "{} rule `{}` ({}) is ignored: {}",
                    i.entry.list,
                    i.entry.text,
                    i.entry.source(),
                    i.why
                )
            }));
        hooks.append(std::mem::take(&mut self.hooks));
        self.hooks = hooks;
        Ok(self.policy(Arc::new(policy)))
    }

    /// Who answers an ask.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Offer only these tools (Claude Code's `--tools`).
    pub fn offered_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.offered = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Build the session.
    pub fn build(self) -> Session {
        let policy: Arc<dyn PermissionPolicy> = if self.allowed_tools.is_empty() {
            self.policy
        } else {
            Arc::new(AllowTools::new(self.policy, self.allowed_tools))
        };
        let mut stack = Stack::new(Arc::new(self.hooks), policy.clone(), self.approver);
        stack.around_stack = self.around_stack;
        stack.around_call = self.around_call;
        let service = stack.build();
        let registry = Arc::new(self.registry);
        Session {
            pipeline: Pipeline::new(registry, service),
            ctx: self.ctx,
            policy,
            offered: self.offered.map(Arc::new),
            load_notes: self.load_notes,
            interrupt: InterruptHandle::default(),
            cancel_siblings_on_bash_error: self.cancel_siblings,
        }
    }
}

/// What a turn produced.
#[derive(Debug)]
pub struct TurnOutcome {
    /// Each call's outcome, in block order.
    pub outcomes: Vec<ToolOutcome>,
    /// The most calls that ran at once.
    pub peak_in_flight: usize,
}

impl TurnOutcome {
    /// The user message to send back: every `tool_result` in block order, then the messages
    /// hooks and tools added, in call order.
    pub fn user_message(&self) -> UserMessage {
        UserMessage::with_tool_results(
            self.outcomes.iter().map(ToolOutcome::tool_result),
            self.outcomes
                .iter()
                .flat_map(|o| o.hook_messages.iter().chain(&o.extra_messages))
                .cloned(),
        )
    }

    /// The reason to stop the turn, when a hook asked for it.
    pub fn stop_reason(&self) -> Option<&str> {
        self.outcomes.iter().find_map(|o| o.stop_reason.as_deref())
    }
}

/// A session: runs turns of `tool_use` blocks and keeps the context across them.
pub struct Session {
    pub(crate) pipeline: Pipeline,
    pub(crate) ctx: ToolContext,
    policy: Arc<dyn PermissionPolicy>,
    offered: Option<Arc<BTreeSet<String>>>,
    load_notes: Vec<String>,
    pub(crate) interrupt: InterruptHandle,
    pub(crate) cancel_siblings_on_bash_error: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("ctx", &self.ctx)
            .field("offered", &self.offered)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Start building a session.
    pub fn builder(registry: ToolRegistry, ctx: ToolContext) -> SessionBuilder {
        SessionBuilder::new(registry, ctx)
    }

    /// What loading the policy files noticed ([`SessionBuilder::policy_files`]): rules and
    /// hooks left out, and why. A host shows them to the user.
    pub fn load_notes(&self) -> &[String] {
        &self.load_notes
    }

    /// The session's context.
    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    /// Change the session's context (mode, working directories, ...).
    pub fn context_mut(&mut self) -> &mut ToolContext {
        &mut self.ctx
    }

    /// Is `name` (a canonical tool name) offered to the model? Not when the tool set leaves it
    /// out, nor when a whole-tool deny rule removes it.
    pub fn is_offered(&self, name: &str) -> bool {
        self.offered.as_ref().is_none_or(|o| o.contains(name)) && !self.policy.removes_tool(name)
    }

    /// The API `tools` list for the offered tools.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.pipeline
            .registry()
            .definitions(&|n| self.is_offered(n))
    }

    /// The offered tools themselves, in the registry's order: what a host that serves them
    /// on (an MCP server) reads beyond their definitions, such as whether they only read.
    pub fn offered_tools(&self) -> Vec<Arc<tool_core::RegisteredTool>> {
        self.pipeline
            .registry()
            .tools()
            .filter(|t| self.is_offered(t.name()))
            .cloned()
            .collect()
    }

    /// Cancel whatever the current turn is running; the calls end with Claude Code's cancel
    /// texts. The next turn starts with a fresh token.
    pub fn cancel(&self) {
        self.ctx.cancel.cancel();
    }

    /// The token that cancels the current turn (cancel it from another task).
    pub fn cancellation_token(&self) -> tool_core::CancellationToken {
        self.ctx.cancel.clone()
    }

    /// Run one call and apply its context changes.
    pub async fn run_call(&mut self, tool_use: &ToolUse) -> ToolOutcome {
        let offered = |n: &str| self.is_offered(n);
        let mut outcome = self
            .pipeline
            .run(tool_use, self.ctx.child(), &offered)
            .await;
        for m in outcome.context_modifiers.drain(..) {
            m.apply(&mut self.ctx);
        }
        outcome
    }

    /// Run a turn's calls: consecutive concurrency-safe calls together (at most the cap at
    /// once), every other call alone, context changes applied in block order (see
    /// [`crate::turn`]). Every block gets an outcome, in block order.
    ///
    /// Cancel safety: dropping the future abandons calls that have not finished (their tasks
    /// run on); use [`cancel`](Self::cancel) or the [`cancellation_token`](Self::cancellation_token)
    /// to end a turn with a result for every block.
    pub async fn run_turn(&mut self, blocks: &[ToolUse]) -> TurnOutcome {
        // A block nested too deep is not cloned (that would recurse): a stand-in just past
        // the limit is, and is refused the same way.
        let copies = blocks.iter().map(|b| {
            if tool_core::exceeds_depth(&b.input, tool_core::MAX_INPUT_DEPTH) {
                let mut deep = serde_json::Value::Null;
                for _ in 0..=tool_core::MAX_INPUT_DEPTH {
                    deep = serde_json::Value::Array(vec![deep]);
                }
                ToolUse::new(b.id.clone(), b.name.clone(), deep)
            } else {
                b.clone()
            }
        });
        self.start_turn(copies).collect().await
    }

    /// Start a turn with all its blocks: read updates as calls start and finish with
    /// [`TurnRun::next`], then [`TurnRun::collect`] the outcome.
    pub fn start_turn(&mut self, blocks: impl IntoIterator<Item = ToolUse>) -> TurnRun<'_> {
        let mut run = TurnRun::new(self);
        for b in blocks {
            run.push(b);
        }
        run.finish();
        run
    }

    /// Start a turn whose blocks arrive one by one while the model streams: [`TurnRun::push`]
    /// each as it completes (it starts at once if it may), then [`TurnRun::finish`].
    pub fn streaming(&mut self) -> TurnRun<'_> {
        TurnRun::new(self)
    }

    /// A handle another task can use to interrupt the running turn (see [`InterruptHandle`]).
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.interrupt.clone()
    }

    /// How a turn's blocks split into batches: indices of consecutive concurrency-safe calls
    /// together, every other call alone, in block order.
    pub fn partition(&self, blocks: &[ToolUse]) -> Vec<Vec<usize>> {
        let mut batches: Vec<Vec<usize>> = Vec::new();
        let mut open_safe = false;
        for (i, b) in blocks.iter().enumerate() {
            let (safe, _, _) = self.classify(b);
            match batches.last_mut() {
                Some(last) if safe && open_safe => last.push(i),
                _ => batches.push(vec![i]),
            }
            open_safe = safe;
        }
        batches
    }

    /// Is the call concurrency-safe (found among the offered tools, its input valid, and the
    /// tool saying so without panicking)? What does an interrupt do to it? And its tool's
    /// canonical name, when found.
    pub(crate) fn classify(&self, block: &ToolUse) -> (bool, InterruptBehavior, Option<String>) {
        let offered = |n: &str| self.is_offered(n);
        let Lookup::Found(tool) = self.pipeline.registry().lookup(&block.name, &offered) else {
            return (false, InterruptBehavior::default(), None);
        };
        let interrupt = tool.tool.interrupt_behavior();
        let name = Some(tool.name().to_owned());
        let Ok(input) = tool.schema.check(&block.input) else {
            return (false, interrupt, name);
        };
        let safe = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let input = tool.tool.normalize_input(input);
            tool.tool.is_concurrency_safe(&input)
        }))
        .unwrap_or(false);
        (safe, interrupt, name)
    }

    /// Which tools are offered, as a closure a call's task can own.
    pub(crate) fn offered_fn(&self) -> Arc<dyn Fn(&str) -> bool + Send + Sync> {
        let offered = self.offered.clone();
        let policy = self.policy.clone();
        Arc::new(move |n: &str| {
            offered.as_ref().is_none_or(|o| o.contains(n)) && !policy.removes_tool(n)
        })
    }
}
