//! `mcpenv share`: a private (local or user) server becomes a project
//! server in `.mcp.json`, its secrets moved into `.env` first, and the
//! private copy removed unless `--keep`.

use std::io::{self, Write};

use crate::cli::args::{PrivateScope, ShareArgs};
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::config::scope::Scope;
use crate::ops::share::{self, ShareReport, ShareRequest};

impl Report for ShareReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        crate::cli::commands::write_moves(err, &self.moves, &self.env_files_shown, false)?;
        writeln!(
            err,
            "Shared MCP server `{}` in `{}`",
            self.name,
            self.file.display()
        )?;
        if self.kept {
            writeln!(err, "Kept the private copy in {}", self.from_shown)?;
        } else {
            writeln!(
                err,
                "Removed it from {} scope: {}",
                self.from, self.from_shown
            )?;
        }
        for file in &self.written {
            writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
        }
        if !self.moves.is_empty() {
            writeln!(
                err,
                "Teammates set the variables listed in `.env.example` in their own `.env`"
            )?;
        }
        // A kept private copy still wins over (or stands in for) the
        // pending project one: only without it does the sharer need these.
        if self.kept {
            return Ok(());
        }
        writeln!(
            err,
            "To keep using it: approve it with `{}` (Claude Code asks before starting a project server)",
            self.approve_command
        )?;
        if !self.moves.is_empty() {
            writeln!(
                err,
                "and start Claude Code with `{}`, which supplies the values in `.env`",
                self.run_command
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv share`.
pub fn run(ctx: &Ctx, args: &ShareArgs) -> Result<ShareReport, CliError> {
    let request = ShareRequest {
        name: args.name.clone(),
        from: args.from.map(|from| match from {
            PrivateScope::Local => Scope::Local,
            PrivateScope::User => Scope::User,
        }),
        keep: args.keep,
        force: args.force,
        store: args.to.into(),
    };
    let plan = share::plan(ctx, &request)?;
    share::apply(ctx, plan)
}
