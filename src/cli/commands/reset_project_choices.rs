//! `mcpenv reset-project-choices`: what `claude mcp reset-project-choices`
//! does. The approval keys leave this project's entry in `~/.claude.json`
//! (where old releases kept them) and `.claude/settings.local.json`; every
//! other key of both stays. Claude Code asks about each project server again.

use std::io::{self, Write};

use crate::cli::args::ResetProjectChoicesArgs;
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::ops::project_choices::reset_project_choices;

pub use crate::ops::project_choices::ResetReport;

impl Report for ResetReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if self.written.is_empty() {
            writeln!(
                err,
                "No approvals or rejections of project servers are recorded for this project"
            )?;
            return Ok(());
        }
        writeln!(
            err,
            "Reset the approvals and rejections of project (`.mcp.json`) servers: Claude Code asks again"
        )?;
        for file in &self.written {
            writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
        }
        Ok(())
    }
}

/// Runs `mcpenv reset-project-choices`.
pub fn run(ctx: &Ctx, _args: &ResetProjectChoicesArgs) -> Result<ResetReport, CliError> {
    reset_project_choices(ctx)
}
