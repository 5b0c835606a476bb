//! `mcpenv undo` and `mcpenv undo --list`.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::UndoArgs;
use crate::cli::error::CliError;
use crate::cli::render::{BOLD, DIM, Report, shown};
use crate::cli::resolve::Ctx;
use crate::ops::undo::{self, EditSummary, UndoReport};

/// What `undo` printed: the edits kept, or the one taken back.
#[derive(Serialize)]
#[serde(untagged)]
pub enum UndoOutput {
    /// `--list`.
    List {
        /// Newest first.
        edits: Vec<EditSummary>,
        #[serde(skip)]
        shown: Vec<Vec<String>>,
    },
    /// An edit taken back.
    Undone {
        #[serde(flatten)]
        report: UndoReport,
        #[serde(skip)]
        shown: Vec<String>,
    },
}

impl Report for UndoOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let Self::List {
            edits,
            shown: files,
        } = self
        else {
            return Ok(());
        };
        for (edit, files) in edits.iter().zip(files) {
            writeln!(
                out,
                "{BOLD}{}{BOLD:#}  mcpenv {}  {DIM}{}{DIM:#}",
                edit.number,
                shown(&edit.command),
                edit.age
            )?;
            for file in files {
                writeln!(out, "    {}", shown(file))?;
            }
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        match self {
            Self::List { edits, .. } if edits.is_empty() => {
                writeln!(err, "No edit is kept: nothing to undo")
            }
            Self::List { .. } => writeln!(
                err,
                "`mcpenv undo` puts back the newest (first) edit; run it again for the one before"
            ),
            Self::Undone {
                report,
                shown: files,
            } => {
                writeln!(
                    err,
                    "Undid `mcpenv {}` ({})",
                    shown(&report.edit.command),
                    report.edit.age
                )?;
                for file in files {
                    writeln!(err, "  {}", shown(file))?;
                }
                if report.remaining > 0 {
                    writeln!(
                        err,
                        "{} earlier edit{} kept; `mcpenv undo --list` shows them",
                        report.remaining,
                        if report.remaining == 1 { "" } else { "s" }
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// How a file of an edit is listed: its path, and what undo does to it.
fn shown_files(ctx: &Ctx, edit: &EditSummary, verb: (&str, &str)) -> Vec<String> {
    edit.files
        .iter()
        .map(|file| {
            let path = crate::ops::shown::shown_path(ctx, &file.path);
            if file.created {
                format!("{} `{path}`", verb.1)
            } else {
                format!("{} `{path}`", verb.0)
            }
        })
        .collect()
}

/// Runs `mcpenv undo`.
pub fn run(ctx: &Ctx, args: &UndoArgs) -> Result<UndoOutput, CliError> {
    if args.list {
        let edits = undo::list(ctx)?;
        let shown = edits
            .iter()
            .map(|edit| shown_files(ctx, edit, ("changed", "created")))
            .collect();
        return Ok(UndoOutput::List { edits, shown });
    }
    let report = undo::undo(ctx)?;
    let shown = shown_files(ctx, &report.edit, ("put back", "removed"));
    Ok(UndoOutput::Undone { report, shown })
}
