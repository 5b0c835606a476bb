//! A correct stdio MCP server built with rmcp's server side, for the probe
//! tests: what a well-behaved Rust server looks like to `probe --audit`.
//! Test-only, an `[[example]]` like the raw fake next to it.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServiceExt, schemars, tool, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoRequest {
    /// The text to send back.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    /// The left-hand side.
    a: i64,
    /// The right-hand side.
    b: i64,
}

#[derive(Debug, Clone, Default)]
struct Tools;

#[tool_router(server_handler)]
impl Tools {
    #[tool(description = "Send the text back")]
    fn echo(&self, Parameters(EchoRequest { text }): Parameters<EchoRequest>) -> String {
        text
    }

    #[tool(description = "Add two integers")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        a.wrapping_add(b).to_string()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let Ok(server) = Tools.serve(rmcp::transport::stdio()).await else {
        return std::process::ExitCode::FAILURE;
    };
    let _ = server.waiting().await;
    std::process::ExitCode::SUCCESS
}
