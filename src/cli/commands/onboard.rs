//! `mcpenv onboard`: ask for each missing variable and save the answers.
//! (Being written.)

use crate::check;
use crate::cli::args::OnboardArgs;
use crate::cli::commands::check::CheckOutput;
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;

/// Runs `mcpenv onboard`.
pub fn run(ctx: &Ctx, args: &OnboardArgs) -> Result<CheckOutput, CliError> {
    let _ = (ctx, args, check::State::Missing);
    Err(CliError::failure("`mcpenv onboard` is not available yet")
        .with_hint("set the variables `mcpenv check` lists in `.env`"))
}
