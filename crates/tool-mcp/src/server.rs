//! The MCP server: a session's offered tools as MCP tools, each call through the session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::Value;
use tool_core::{Approval, ApprovalRequest, Approver, ToolResultContent, ToolUse};
use tool_orchestrator::Session;

use crate::Error;

/// Makes the session the server runs, with the approver asks go to (`None`: asks are
/// refused, the headless rule). Called once for the tool list and once more after the
/// handshake, when the client offers elicitation.
type MakeSession = dyn Fn(Option<Arc<dyn Approver>>) -> Session + Send + Sync;

/// An MCP server for a toolgate session's tools.
pub struct GatedServer {
    make: Box<MakeSession>,
    tools: Vec<Tool>,
    /// The session, once the client is known (with an approver if it can elicit).
    session: tokio::sync::Mutex<Option<Session>>,
    /// The client, for the approver to elicit from.
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for GatedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatedServer")
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The MCP form of a tool: its definition, and hints from what it does. A tool that reads
/// whatever its input (it says it only reads even for an empty input) is read-only; any
/// other may change or remove what it touches.
fn mcp_tool(session: &Session) -> Vec<Tool> {
    let registered = session.offered_tools();
    session
        .tool_definitions()
        .into_iter()
        .map(|d| {
            let schema = match d.input_schema {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            let read_only = registered
                .iter()
                .find(|t| t.name() == d.name)
                .is_some_and(|t| t.tool.is_read_only(&Value::Null));
            let mut tool = Tool::new(d.name, d.description, Arc::new(schema));
            tool.annotations = Some(
                ToolAnnotations::new()
                    .read_only(read_only)
                    .destructive(!read_only),
            );
            tool
        })
        .collect()
}

impl GatedServer {
    /// A server for the sessions `make` builds. `make` is given the approver asks go to
    /// (`None`: asks are refused, the headless rule); it is called once for the tool list,
    /// and once more at the first call, with an approver when the client offers elicitation.
    pub fn new<F>(make: F) -> Self
    where
        F: Fn(Option<Arc<dyn Approver>>) -> Session + Send + Sync + 'static,
    {
        let tools = mcp_tool(&make(None));
        Self {
            make: Box::new(make),
            tools,
            session: tokio::sync::Mutex::new(None),
            peer: Arc::new(Mutex::new(None)),
            next_id: AtomicU64::new(1),
        }
    }

    /// The tools the server lists.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Serve one client on standard input and output until it closes the connection.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Handshake(e.to_string()))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| Error::Connection(e.to_string()))
    }

    /// Run one call through the session, made now if this is the first.
    async fn call(&self, name: &str, input: Value, peer: &Peer<RoleServer>) -> CallToolResult {
        let mut slot = self.session.lock().await;
        let session = slot.get_or_insert_with(|| {
            let elicits = peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form);
            let approver: Option<Arc<dyn Approver>> = elicits.then(|| {
                Arc::new(Eliciting {
                    peer: self.peer.clone(),
                }) as Arc<dyn Approver>
            });
            (self.make)(approver)
        });
        *self
            .peer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(peer.clone());
        let id = format!(
            "toolu_mcp_{:06}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let outcome = session.run_call(&ToolUse::new(id, name, input)).await;
        let content = to_mcp_content(outcome.content);
        if outcome.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
}

/// A tool result's content as MCP content blocks.
fn to_mcp_content(content: ToolResultContent) -> Vec<ContentBlock> {
    match content {
        ToolResultContent::Text(t) => vec![ContentBlock::text(t)],
        ToolResultContent::Blocks(blocks) => blocks
            .into_iter()
            .map(|b| match b {
                tool_core::ContentBlock::Text { text } => ContentBlock::text(text),
                tool_core::ContentBlock::Image { source }
                | tool_core::ContentBlock::Document { source } => {
                    let tool_core::ImageSource::Base64 { media_type, data } = source;
                    if media_type.starts_with("image/") {
                        ContentBlock::image(data, media_type)
                    } else {
                        ContentBlock::resource(
                            rmcp::model::ResourceContents::BlobResourceContents {
                                uri: "toolgate://tool-result".into(),
                                mime_type: Some(media_type),
                                blob: data,
                                meta: None,
                            },
                        )
                    }
                }
            })
            .collect(),
    }
}

/// The answer the client's form gives.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Answer {
    /// Run the call.
    approve: bool,
}

rmcp::elicit_safe!(Answer);

/// Asks the client, by elicitation, about each call the policy asks about.
struct Eliciting {
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
}

#[async_trait::async_trait]
impl Approver for Eliciting {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let peer = self
            .peer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(peer) = peer else {
            return Approval::Reject { feedback: None };
        };
        let message = format!(
            "{} wants to run with {}. {}",
            request.tool_name,
            serde_json::to_string(&request.input).unwrap_or_default(),
            request.decision.message
        );
        match peer.elicit::<Answer>(message).await {
            Ok(Some(Answer { approve: true })) => Approval::Approve {
                updated_input: None,
            },
            Ok(_) | Err(_) => Approval::Reject { feedback: None },
        }
    }
}

impl ServerHandler for GatedServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.call(&request.name, input, &context.peer).await.into())
    }
}
