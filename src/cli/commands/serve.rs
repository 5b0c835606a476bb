//! `mcpenv serve`: mcpenv's read-only jobs as MCP tools over stdio, for an
//! agent (see [`crate::serve`]). stdout carries the protocol only; it ends
//! when the client closes stdin.

use crate::cli::args::ServeArgs;
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::serve::Server;

/// Runs `mcpenv serve` until the client disconnects.
pub fn run(ctx: &Ctx, _args: &ServeArgs) -> Result<(), CliError> {
    let server = Server::new(ctx.ops.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| CliError::failure_from("cannot start the MCP server", error))?;
    runtime.block_on(async {
        let running = rmcp::ServiceExt::serve(server, rmcp::transport::stdio())
            .await
            .map_err(|error| CliError::failure_from("the MCP session did not start", error))?;
        running
            .waiting()
            .await
            .map_err(|error| CliError::failure_from("the MCP session failed", error))?;
        Ok(())
    })
}
