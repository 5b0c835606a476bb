//! `mcpenv remove`: a server from one scope. A name defined in several
//! scopes needs `-s`, and the error says exactly which commands to run.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::RemoveArgs;
use crate::cli::commands::scope_file;
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::ops::remove_server::{RemoveReport, RemoveRequest, remove_server};
use crate::scope::Scope;

/// What `remove` did, with its file as the text names it.
#[derive(Debug, Serialize)]
pub struct RemoveOutput {
    /// The server, its scope and the file written.
    #[serde(flatten)]
    pub report: RemoveReport,
    #[serde(skip)]
    file_shown: String,
}

impl Report for RemoveOutput {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        writeln!(
            err,
            "Removed MCP server `{}` from {} scope",
            self.report.name, self.report.scope
        )?;
        writeln!(err, "Wrote {}", self.file_shown)
    }
}

/// Runs `mcpenv remove`.
pub fn run(ctx: &Ctx, args: &RemoveArgs) -> Result<RemoveOutput, CliError> {
    let request = RemoveRequest {
        name: args.name.clone(),
        scope: args.scope.map(Scope::from),
    };
    let report = remove_server(ctx, &request)?;
    Ok(RemoveOutput {
        file_shown: scope_file(ctx, report.scope, &report.file),
        report,
    })
}
