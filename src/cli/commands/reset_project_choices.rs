//! `mcpenv reset-project-choices`: what `claude mcp reset-project-choices`
//! does. The approval keys leave this project's entry in `~/.claude.json`
//! (where old releases kept them) and `.claude/settings.local.json`; every
//! other key of both stays. Claude Code asks about each project server again.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::claude_settings::{self, CHOICE_KEYS};
use crate::cli::args::ResetProjectChoicesArgs;
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::store;

/// What `reset-project-choices` did.
#[derive(Debug, Serialize)]
pub struct ResetReport {
    /// The keys removed wherever they were.
    pub keys: Vec<&'static str>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

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
            writeln!(err, "Wrote `{}`", file.display())?;
        }
        Ok(())
    }
}

/// Runs `mcpenv reset-project-choices`.
pub fn run(ctx: &Ctx, _args: &ResetProjectChoicesArgs) -> Result<ResetReport, CliError> {
    let mut written = Vec::new();
    // `~/.claude.json` first, as Claude Code does: its legacy arrays would
    // otherwise be merged back into the settings file on the next start.
    let claude = store::remove_project_keys(&ctx.locations, &CHOICE_KEYS)?;
    if claude.changed {
        written.push(claude.path);
    }
    if claude_settings::reset_choices(&ctx.locations)? {
        written.push(ctx.locations.local_settings());
    }
    Ok(ResetReport {
        keys: CHOICE_KEYS.to_vec(),
        written,
    })
}
