//! The `Tool` trait: what a tool declares about itself and how it is called.
//!
//! Defaults fail closed: a tool that says nothing is not concurrency-safe, not read-only, and
//! blocks on interrupts.

use std::fmt;
use std::path::PathBuf;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::wire::{ContentBlock, ToolResultContent};

/// What the policy engine must look at to decide about a call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PermissionSubject {
    /// Paths the call reads (absolute).
    ReadPaths(Vec<PathBuf>),
    /// Paths the call writes (absolute).
    WritePaths(Vec<PathBuf>),
    /// A shell command line.
    ShellCommand(String),
    /// A URL fetched.
    Url(String),
    /// Paths a call of a tool that is not a file tool reads and writes (absolute): an
    /// external tool's arguments that a policy names as paths. They only restrict the call:
    /// Read and Edit deny rules refuse it, their ask rules and protected paths ask, and
    /// nothing about them allows it (rules naming the tool decide that, as for
    /// [`Nothing`](Self::Nothing)).
    ToolPaths {
        /// Paths it reads.
        read: Vec<PathBuf>,
        /// Paths it writes.
        write: Vec<PathBuf>,
    },
    /// Nothing beyond the tool itself.
    #[default]
    Nothing,
}

impl PermissionSubject {
    /// [`ToolPaths`](Self::ToolPaths) of these paths, or [`Nothing`](Self::Nothing) when there
    /// are none.
    pub fn tool_paths(read: Vec<PathBuf>, write: Vec<PathBuf>) -> Self {
        if read.is_empty() && write.is_empty() {
            Self::Nothing
        } else {
            Self::ToolPaths { read, write }
        }
    }
}

/// What an interrupt (the user sending a new message) does to a running call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InterruptBehavior {
    /// Cancel the call.
    Cancel,
    /// Let it finish.
    #[default]
    Block,
}

/// `validate_input` refused the input. The message reaches the model wrapped in
/// `<tool_use_error>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationFailure {
    /// What the model sees.
    pub message: String,
    /// A tool-specific code (Claude Code's `errorCode`), for hosts and tests.
    pub code: u32,
}

impl ValidationFailure {
    /// A failure with a message and code.
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
        }
    }
}

/// A tool's `call` failed. The message reaches the model as is (not wrapped), with long texts
/// cut in the middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallError {
    /// What the model sees.
    pub message: String,
    /// True when the call ended because it was cancelled.
    pub is_interrupt: bool,
    /// The working directory the session moves to although the call failed (a shell whose
    /// directory was deleted recovers to the project root).
    pub cwd: Option<std::path::PathBuf>,
}

impl ToolCallError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            is_interrupt: false,
            cwd: None,
        }
    }

    /// The error a cancelled call ends with.
    pub fn interrupted() -> Self {
        Self {
            message: crate::texts::INTERRUPTED_FOR_TOOL_USE.to_owned(),
            is_interrupt: true,
            cwd: None,
        }
    }

    /// The same error, moving the session to `cwd`.
    pub fn with_cwd(mut self, cwd: std::path::PathBuf) -> Self {
        self.cwd = Some(cwd);
        self
    }
}

impl fmt::Display for ToolCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolCallError {}

/// A change a call makes to the session's context (Bash's `cd`, for example). Applied in call
/// order by the orchestrator.
pub struct ContextModifier(Box<dyn FnOnce(&mut ToolContext) + Send + Sync>);

impl ContextModifier {
    /// Wrap a function that changes the context.
    pub fn new(f: impl FnOnce(&mut ToolContext) + Send + Sync + 'static) -> Self {
        Self(Box::new(f))
    }

    /// Apply it.
    pub fn apply(self, ctx: &mut ToolContext) {
        (self.0)(ctx)
    }
}

impl fmt::Debug for ContextModifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContextModifier(..)")
    }
}

/// What a successful call returns.
#[derive(Debug, Default)]
pub struct ToolOutput {
    /// The raw output as hooks see it (`tool_response`).
    pub raw: Value,
    /// What the model sees.
    pub content: ToolResultContent,
    /// Extra user-message blocks to send after the result (meta messages).
    pub extra_messages: Vec<ContentBlock>,
    /// Changes to the session's context, applied in this order (for a concurrency-safe call,
    /// after its batch; otherwise as soon as it finishes).
    pub context_modifiers: Vec<ContextModifier>,
}

impl Default for ToolResultContent {
    fn default() -> Self {
        ToolResultContent::Text(String::new())
    }
}

impl ToolOutput {
    /// An output with raw data and model-facing text.
    pub fn new(raw: Value, content: impl Into<ToolResultContent>) -> Self {
        Self {
            raw,
            content: content.into(),
            extra_messages: Vec::new(),
            context_modifiers: Vec::new(),
        }
    }
}

/// A tool the model can call.
///
/// Implement it directly, or declare the input as a struct and use [`parse_input`] and
/// [`input_schema_for`] to get the schema and parsing from the type.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The canonical name.
    fn name(&self) -> &str;

    /// Other names the tool answers to when offered.
    fn aliases(&self) -> Vec<String> {
        Vec::new()
    }

    /// Old names that still resolve, even when the tool is looked up outside the offered set
    /// (so old transcripts keep working).
    fn deprecated_aliases(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the model is told the tool does.
    fn description(&self) -> String;

    /// The JSON Schema of the input. Compiled once when the tool is registered.
    fn input_schema(&self) -> Value;

    /// Rewrite a schema-valid input before anything else sees it (Claude Code strips trailing
    /// whitespace from text an Edit or Write would write). The default returns it unchanged.
    fn normalize_input(&self, input: Value) -> Value {
        input
    }

    /// Checks that need state: was the file read, is it stale, is the match unique, is the path
    /// denied. Runs after schema validation and before hooks.
    async fn validate_input(
        &self,
        _input: &Value,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationFailure> {
        Ok(())
    }

    /// What the policy engine must look at for this input. Default: [`PermissionSubject::Nothing`],
    /// which only rules naming the tool decide: with no allow rule, every call asks (even a
    /// read-only one, since there is no path to find inside a working directory). A host tool
    /// that needs no prompt is allowed by a whole-tool allow rule, or named in
    /// `tool-orchestrator`'s `SessionBuilder::allow_tools`; declaring its paths as
    /// [`PermissionSubject::ReadPaths`] lets reads inside the working directories through.
    fn permission_subject(&self, _input: &Value, _ctx: &ToolContext) -> PermissionSubject {
        PermissionSubject::Nothing
    }

    /// May this call run alongside others? Default: no.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    /// Does this call only read? Default: no. Being read-only alone allows nothing: the policy
    /// allows a read-only call without a rule only when its [`permission_subject`] names paths
    /// that are all inside the working directories.
    ///
    /// [`permission_subject`]: Tool::permission_subject
    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    /// What an interrupt does to this tool. Default: let it finish.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// True for tools that always need the user (questions, plan approval).
    fn requires_user_interaction(&self) -> bool {
        false
    }

    /// True for external (MCP-like) tools: PostToolUse hooks run before the output is mapped
    /// and may replace it.
    fn is_external(&self) -> bool {
        false
    }

    /// Results longer than this many characters are persisted to disk with a preview; `None`
    /// means never persist.
    fn max_result_size_chars(&self) -> Option<usize> {
        Some(100_000)
    }

    /// Run the call. `input` has passed the schema and `validate_input`.
    ///
    /// Cancel safety: the pipeline drops this future when `ctx.cancel` fires; a tool that
    /// starts processes must kill them on drop or watch the token itself.
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolCallError>;
}

/// Parse a schema-valid input into the tool's input type. A failure here means the schema and
/// the type disagree; it comes back as a [`ToolCallError`] naming the problem.
pub fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T, ToolCallError> {
    serde_json::from_value(input)
        .map_err(|e| ToolCallError::new(format!("Input does not match the tool's input type: {e}")))
}

/// The input schema for a type deriving `schemars::JsonSchema`, shaped as the API expects:
/// `$schema` and `title` removed, and `Option` fields written as plain optional properties
/// (`null` is not an accepted value, as in Claude Code's schemas).
pub fn input_schema_for<T: schemars::JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        let defs = map.remove("$defs");
        if let Some(Value::Object(props)) = map.get_mut("properties") {
            for prop in props.values_mut() {
                strip_null_type(prop);
                inline_ref(prop, defs.as_ref());
                consts_to_enum(prop);
            }
        }
        let unresolved = map
            .get("properties")
            .is_some_and(|p| p.to_string().contains("\"$ref\""));
        if let (true, Some(d)) = (unresolved, defs) {
            map.insert("$defs".into(), d);
        }
    }
    schema
}

/// Replace a `#/$defs/X` reference with the definition itself (keeping the property's own
/// description), so the model and the error renderer see the property's real shape.
fn inline_ref(prop: &mut Value, defs: Option<&Value>) {
    let Value::Object(p) = prop else { return };
    let Some(name) = p
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(str::to_owned)
    else {
        return;
    };
    let Some(Value::Object(def)) = defs.and_then(|d| d.get(&name)) else {
        return;
    };
    p.remove("$ref");
    for (k, v) in def {
        p.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// schemars writes a documented unit enum as `oneOf` of `const`s; write it as a plain `enum`
/// of strings, as Claude Code's schemas do.
fn consts_to_enum(prop: &mut Value) {
    let Value::Object(p) = prop else { return };
    let Some(Value::Array(options)) = p.get("oneOf") else {
        return;
    };
    let consts: Option<Vec<Value>> = options.iter().map(|o| o.get("const").cloned()).collect();
    let Some(values) = consts else { return };
    p.remove("oneOf");
    p.insert("type".into(), Value::String("string".into()));
    p.insert("enum".into(), Value::Array(values));
}

fn strip_null_type(prop: &mut Value) {
    let Value::Object(p) = prop else { return };
    if let Some(Value::Array(types)) = p.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types[0].clone();
            p.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(any_of)) = p.get("anyOf").cloned() {
        let kept: Vec<Value> = any_of
            .into_iter()
            .filter(|v| v.get("type") != Some(&Value::String("null".into())))
            .collect();
        if kept.len() == 1 {
            p.remove("anyOf");
            if let Value::Object(inner) = &kept[0] {
                for (k, v) in inner {
                    p.insert(k.clone(), v.clone());
                }
            }
        } else {
            p.insert("anyOf".into(), Value::Array(kept));
        }
    }
}
