//! `mcpenv reject`: records Claude Code's rejection of project servers in
//! `.claude/settings.local.json` (`disabledMcpjsonServers`); a rejected
//! server is hidden and never started.

use crate::claude_settings::Choice;
use crate::cli::args::RejectArgs;
use crate::cli::commands::approve::{ChoiceReport, record};
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;

/// Runs `mcpenv reject`.
pub fn run(ctx: &Ctx, args: &RejectArgs) -> Result<ChoiceReport, CliError> {
    let inventory = ctx.inventory()?;
    record(ctx, &inventory, Choice::Reject, &args.names)
}
