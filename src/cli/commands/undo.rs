//! `mcpenv undo` and `mcpenv undo --list`.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

use crate::cli::args::UndoArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
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
            // Each file was named before anything was done.
            Self::Undone { report, .. } => {
                writeln!(
                    err,
                    "Undid `mcpenv {}` ({})",
                    shown(&report.edit.command),
                    report.edit.age
                )?;
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
            let path = crate::ops::shown_paths::shown_path(ctx, &file.path);
            if file.created {
                format!("{} `{path}`", verb.1)
            } else {
                format!("{} `{path}`", verb.0)
            }
        })
        .collect()
}

/// Runs `mcpenv undo`: says every file it will put back or remove before
/// touching any, and puts a literal secret back into a file git commits
/// only when the person agrees (a terminal's question, or
/// `--restore-secrets`).
pub fn run(ctx: &Ctx, args: &UndoArgs) -> Result<UndoOutput, CliError> {
    if args.list {
        let edits = undo::list(ctx)?;
        let shown = edits
            .iter()
            .map(|edit| shown_files(ctx, edit, ("changed", "created")))
            .collect();
        return Ok(UndoOutput::List { edits, shown });
    }
    let plan = undo::plan(ctx)?;
    let into_commits = !plan.secrets_into_commits().is_empty();
    if !args.dry_run {
        announce(ctx, &plan.summary);
        if into_commits && !args.restore_secrets && !agreed(ctx, args)? {
            return Err(undo::refused(ctx, &plan));
        }
    }
    let report = undo::apply(ctx, plan)?;
    Ok(UndoOutput::Undone { report })
}

/// Says, before anything is written, what undo is about to do to each file.
fn announce(ctx: &Ctx, edit: &EditSummary) {
    if ctx.quiet {
        return;
    }
    let files = shown_files(ctx, edit, ("put back", "remove"));
    let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
        writeln!(
            err,
            "Undoing `mcpenv {}` ({}) will:",
            shown(&edit.command),
            edit.age
        )?;
        for (file, line) in edit.files.iter().zip(&files) {
            if file.secret_into_commit {
                writeln!(
                    err,
                    "  {}, with a literal secret, into a file git tracks or would commit",
                    shown(line)
                )?;
            } else {
                writeln!(err, "  {}", shown(line))?;
            }
        }
        Ok(())
    });
}

/// Whether the person at a terminal agrees to put a literal secret back
/// into a file git commits; `false` without a terminal (or with `--json`).
fn agreed(ctx: &Ctx, args: &UndoArgs) -> Result<bool, CliError> {
    if args.json || !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Ok(false);
    }
    dialoguer::Confirm::new()
        .with_prompt(
            ctx.shield
                .clean("Put the literal secret back into a file git tracks or would commit?"),
        )
        .default(false)
        .interact()
        .map_err(|error| {
            CliError::failure_from("cannot read the answer; nothing was put back", error)
        })
}
