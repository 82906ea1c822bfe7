//! MCP adapters for toolgate.
//!
//! [`GatedServer`] serves the tools of a toolgate [`Session`](tool_orchestrator::Session) to any
//! MCP client. Every `tools/call` runs through the session's whole pipeline (the schema check,
//! PreToolUse hooks, the policy, the tool, PostToolUse hooks), exactly as a model's `tool_use`
//! block would: a schema error or a refusal comes back as a tool result with `isError` set and
//! the text the model would have read, never as a protocol error. An ask goes to the client
//! through MCP elicitation when the client offers it; otherwise the headless rule applies (the
//! call is refused with the ask's own text).
//!
//! ```no_run
//! # async fn serve(make: impl Fn(Option<std::sync::Arc<dyn tool_core::Approver>>) -> tool_orchestrator::Session + Send + Sync + 'static) -> Result<(), tool_mcp::Error> {
//! tool_mcp::GatedServer::new(make).serve_stdio().await
//! # }
//! ```
//!
//! [`ExternalServer`] goes the other way: it starts a server configured under
//! `[mcp_servers.NAME]` in a policy file ([`server_specs`]) and offers its tools as
//! `mcp__NAME__TOOL` tools for the registry, external tools that pass the same pipeline.
//!
//! A host that does not speak MCP does not depend on this crate, and so never compiles `rmcp`.

mod client;
mod server;

pub use client::{
    ExternalServer, McpTool, PathArgs, ServerSpec, check_server_name, server_specs,
    specs_from_mcp_json,
};
pub use server::GatedServer;

/// What can go wrong serving MCP.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client did not complete the `initialize` handshake.
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
    /// The connection failed after the handshake.
    #[error("the MCP connection failed: {0}")]
    Connection(String),
    /// A policy file's `mcp_servers` could not be used.
    #[error("{}: {message}", file.display())]
    Config {
        /// The file.
        file: std::path::PathBuf,
        /// What was wrong.
        message: String,
    },
    /// An external server could not be started or asked.
    #[error("MCP server {name}: {message}")]
    Server {
        /// The server's name.
        name: String,
        /// What went wrong.
        message: String,
    },
}
