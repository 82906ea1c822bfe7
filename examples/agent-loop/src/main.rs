//! An agent loop's tool step on toolgate, from one dependency (`tool-orchestrator` and its
//! prelude): the model's response (Messages API JSON) is parsed into tool uses, run as one turn
//! through a session with the built-in tools, a custom tool of the host's, an in-process
//! PreToolUse hook and the host's own tower layer, and answered with the next user message.
//!
//! It prints the user message to send back (JSON), then the host layer's log.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_orchestrator::prelude::*;

/// The host's own tool: counts the words of a text. Read-only, touches no files.
#[derive(Debug)]
struct WordCount;

#[async_trait]
impl Tool for WordCount {
    fn name(&self) -> &str {
        "WordCount"
    }
    fn description(&self) -> String {
        "Counts the words of a text.".into()
    }
    fn input_schema(&self) -> Value {
        object_schema(&[("text", "string", true)])
    }
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolCallError> {
        let text = input["text"].as_str().unwrap_or_default();
        let words = text.split_whitespace().count();
        Ok(ToolOutput::new(
            json!({ "words": words }),
            format!("{words} words"),
        ))
    }
}

/// What the model answered (as the API returns it): a thinking block, some text, and three
/// tool uses.
fn model_response(file: &str) -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude",
        "stop_reason": "tool_use",
        "content": [
            {"type": "thinking", "thinking": "Read the notes, count, clean up.", "signature": "c2ln"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": file}},
            {"type": "tool_use", "id": "toolu_02", "name": "WordCount", "input": {"text": "one two three four"}},
            {"type": "tool_use", "id": "toolu_03", "name": "Bash", "input": {"command": "rm -rf ~/projects"}},
            {"type": "tool_use", "id": "toolu_04", "name": "Write", "input": {"file_path": "summary.txt", "content": "4 words\n"}}
        ]
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "buy milk\n")?;

    let mut registry = builtin_tools::registry()?;
    registry.register(Arc::new(WordCount))?;

    let mut hooks = Hooks::new();
    hooks.pre_tool_use("Bash", |input: PreToolUseInput| async move {
        let command = input.tool_input["command"].as_str().unwrap_or_default();
        if command.contains("rm -rf") {
            HookOutcome::deny("this agent never deletes recursively")
        } else {
            HookOutcome::default()
        }
    })?;

    // The host's own middleware around the whole stack: a log of every call it sees.
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = log.clone();
    let audit = tower::layer::layer_fn(move |inner: ToolService| {
        let seen = seen.clone();
        tower::ServiceExt::map_request(inner, move |inv: ToolInvocation| {
            if let Ok(mut l) = seen.lock() {
                l.push(format!("{} {}", inv.tool_use_id, inv.tool_name()));
            }
            inv
        })
    });

    // The project's Claude Code settings start its sessions in acceptEdits mode: the session
    // takes that mode from the policy files (the host chose none), so the Write below runs
    // without a prompt. A host that wants its own mode says so with `with_permission_mode`.
    std::fs::create_dir_all(dir.path().join(".claude"))?;
    std::fs::write(
        dir.path().join(".claude/settings.json"),
        r#"{"permissions": {"defaultMode": "acceptEdits", "deny": ["Read(./.env)"]}}"#,
    )?;
    let mut sources = PolicySources::standard(dir.path(), dir.path(), None, Trust::Trusted);
    sources.managed.clear(); // this example reads nothing outside its temporary directory

    let ctx = ToolContext::new(dir.path(), dir.path(), dir.path().join(".results"));
    let mut session = Session::builder(registry, ctx)
        .policy_files(&sources.read()?)?
        .hooks(hooks)
        .allow_tools(["WordCount"])
        .layer(audit)
        .build();

    let message = AssistantMessage::from_value(&model_response(&file.display().to_string()))?;
    let calls: Vec<ToolUse> = message.tool_uses().cloned().collect();
    let turn = session.run_turn(&calls).await;
    let reply = turn.user_message();
    println!("{}", serde_json::to_string_pretty(&reply)?);
    // Read and WordCount ran together (both are concurrency-safe), so sort the log.
    let mut log = log
        .lock()
        .map_err(|_| anyhow::anyhow!("log poisoned"))?
        .clone();
    log.sort();
    println!("layer saw: {}", log.join(", "));
    Ok(())
}
