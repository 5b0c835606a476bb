//! `mcpenv serve`'s MCP front-end: mcpenv's read-only jobs as tools, over
//! the use cases in [`crate::ops`] (the CLI runs the same ones).
//!
//! Channels: an unknown tool is a JSON-RPC -32602 error (`Unknown tool:
//! NAME`, as the spec's example; rmcp's own router sends -32602 `tool not
//! found`); arguments that fail a tool's input schema are a result with
//! `isError: true` from protocol 2025-11-25 on and a -32602 error before
//! (negotiated per session); a call whose work failed (a config file that
//! does not load, a `server` that names no server) is a result with
//! `isError: true` and what to do. Every result is masked with a
//! [`Redactor`] that learned what the use case read.

mod tools;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use crate::ops::{self, Read};
use crate::redact::Redactor;

/// The MCP server: the tools over one [`ops::Context`].
#[derive(Debug, Clone)]
pub struct Server {
    context: ops::Context,
}

impl Server {
    /// A server whose tools see the world through `context`.
    pub fn new(context: ops::Context) -> Self {
        Self { context }
    }

    /// Runs the tool `name` with `arguments`, already valid for its schema.
    fn run(&self, name: &str, arguments: &JsonObject) -> Option<CallToolResult> {
        Some(match name {
            tools::LIST_SERVERS => {
                let (list, read) = ops::list_servers::list_servers(&self.context, None);
                let failed = tools::unloaded(&read);
                answer(&read, &list, tools::list_summary(&list), failed)
            }
            tools::CHECK_ENVIRONMENT => {
                let server = arguments.get("server").and_then(Value::as_str);
                match ops::check_environment::check_environment(&self.context, false, server) {
                    Ok((check, read)) => {
                        let failed = tools::unloaded(&read);
                        answer(&read, &check, tools::check_summary(&check), failed)
                    }
                    Err(error) => {
                        let mut redactor = Redactor::new();
                        let text = tools::check_error(&error);
                        CallToolResult::error(vec![ContentBlock::text(
                            redactor.mask_text(&text).into_owned(),
                        )])
                    }
                }
            }
            _ => return None,
        })
    }
}

/// The result for `report`, masked with what was read: structured content
/// and a short text; `isError: true` with `failed` as the text when the
/// work could not be done whole.
fn answer(
    read: &Read,
    report: &impl serde::Serialize,
    summary: String,
    failed: Option<String>,
) -> CallToolResult {
    let mut redactor = Redactor::new();
    read.teach(&mut redactor);
    let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
    redactor.mask_json(&mut value);
    let is_error = failed.is_some();
    let text = redactor.mask_text(&failed.unwrap_or(summary)).into_owned();
    let mut result = CallToolResult::structured(value);
    result.content = vec![ContentBlock::text(text)];
    result.is_error = Some(is_error);
    result
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(Default::default());
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("mcpenv", env!("CARGO_PKG_VERSION")))
            .with_instructions(tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::all().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.get_tool(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        if let Err(problem) = tools::validate(&tool, &arguments) {
            let message = format!("invalid arguments for `{}`: {problem}", tool.name);
            // From 2025-11-25 on a tool execution error the model can read
            // and correct; before, a protocol error.
            let new_style = context
                .protocol_version()
                .is_none_or(|version| version >= ProtocolVersion::V_2025_11_25);
            if !new_style {
                return Err(ErrorData::invalid_params(message, None));
            }
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        let work = self.clone();
        let name = tool.name.to_string();
        // The work reads files: off the async threads.
        let result = tokio::task::spawn_blocking(move || work.run(&name, &arguments))
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        result
            .map(Into::into)
            .ok_or_else(|| ErrorData::invalid_params(format!("Unknown tool: {}", tool.name), None))
    }
}
