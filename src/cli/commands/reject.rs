//! `mcpenv reject`: records Claude Code's rejection of project servers in
//! `.claude/settings.local.json` (`disabledMcpjsonServers`); a rejected
//! server is hidden and never started.

use crate::cli::args::RejectArgs;
use crate::cli::commands::approve::ChoiceReport;
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::config::claude_settings::Choice;
use crate::ops::project_choices::{ChoiceRequest, apply_choice, plan_choice};

/// Runs `mcpenv reject`.
pub fn run(ctx: &Ctx, args: &RejectArgs) -> Result<ChoiceReport, CliError> {
    let request = ChoiceRequest {
        choice: Choice::Reject,
        names: args.names.clone(),
        all: false,
    };
    apply_choice(ctx, plan_choice(ctx, &request)?)
}
