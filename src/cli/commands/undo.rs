//! `mcpenv undo` and `mcpenv undo --list`.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

use crate::cli::args::UndoArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::{BOLD, DIM, Report, counted, shown};
use crate::cli::resolve::Ctx;
use crate::ops::undo::{self, EditList, EditSummary, Target, UndoPlan, UndoReport};

/// What `undo` printed: the edits kept, or the one taken back.
#[derive(Serialize)]
#[serde(untagged)]
pub enum UndoOutput {
    /// `--list`.
    List {
        #[serde(flatten)]
        list: EditList,
        /// Each edit's files, as shown.
        #[serde(skip)]
        shown: Vec<Vec<String>>,
        /// Where each edit was made, when not here.
        #[serde(skip)]
        places: Vec<Option<String>>,
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
            list,
            shown: files,
            places,
        } = self
        else {
            return Ok(());
        };
        for ((edit, files), place) in list.edits.iter().zip(files).zip(places) {
            let mut marks = String::new();
            if let Some(place) = place {
                marks.push_str(&format!("  {place}"));
            }
            if edit.undone_by.is_some() {
                marks.push_str("  undone");
            }
            writeln!(
                out,
                "{BOLD}{}{BOLD:#}  mcpenv {}  {DIM}{}{DIM:#}{}",
                edit.number,
                shown(&edit.command),
                edit.age,
                shown(&marks)
            )?;
            for file in files {
                writeln!(out, "    {}", shown(file))?;
            }
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        match self {
            Self::List { list, places, .. } => {
                if list.edits.is_empty() && list.elsewhere == 0 {
                    return writeln!(err, "No edit is kept: nothing to undo");
                }
                if list.edits.is_empty() {
                    writeln!(
                        err,
                        "No edit of this project (or of your own files) is kept"
                    )?;
                } else if places.iter().any(Option::is_some) {
                    writeln!(
                        err,
                        "`mcpenv undo` takes back this project's edits and those of your own files; `mcpenv undo NUMBER` takes back any"
                    )?;
                } else {
                    writeln!(
                        err,
                        "`mcpenv undo` puts back the newest edit not undone; run it again for the one before"
                    )?;
                }
                if list.elsewhere > 0 {
                    writeln!(
                        err,
                        "{} of other projects {} not shown; `mcpenv undo --list --all` lists every edit",
                        counted(list.elsewhere, "edit"),
                        if list.elsewhere == 1 { "is" } else { "are" }
                    )?;
                }
                Ok(())
            }
            // Each file was named before anything was done.
            Self::Undone { report, .. } => {
                let verb = if report.redid.is_some() {
                    "Redid"
                } else {
                    "Undid"
                };
                writeln!(
                    err,
                    "{verb} `mcpenv {}` ({})",
                    shown(&report.edit.command),
                    report.edit.age
                )?;
                if report.remaining > 0 {
                    writeln!(
                        err,
                        "{} kept; `mcpenv undo --list` shows them",
                        counted(report.remaining, "earlier edit")
                    )?;
                }
                if let Some(problem) = &report.redo_lost {
                    crate::cli::render::warning(err, problem)?;
                    writeln!(
                        err,
                        "hint: the undo itself was made; only `mcpenv undo --redo` cannot redo it"
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
            if file.created && !file.members_only {
                format!("{} `{path}`", verb.1)
            } else {
                format!("{} `{path}`", verb.0)
            }
        })
        .collect()
}

/// Where an edit was made, said when it was not here.
fn place(ctx: &Ctx, edit: &EditSummary) -> Option<String> {
    if edit.here {
        return None;
    }
    Some(match &edit.project {
        Some(project) => format!("in `{}`", ctx.locations.display(project)),
        None => "in a project not recorded".to_string(),
    })
}

/// Runs `mcpenv undo`: says which edit and every file it will put back or
/// remove before touching any, and puts a literal secret back into a file
/// git commits only when the person agrees (a terminal's question, or
/// `--restore-secrets`).
pub fn run(ctx: &Ctx, args: &UndoArgs) -> Result<UndoOutput, CliError> {
    if args.list {
        let list = undo::list(ctx, args.all)?;
        let shown = list
            .edits
            .iter()
            .map(|edit| shown_files(ctx, edit, ("changed", "created")))
            .collect();
        let places = list.edits.iter().map(|edit| place(ctx, edit)).collect();
        return Ok(UndoOutput::List {
            list,
            shown,
            places,
        });
    }
    let target = match (args.number, args.redo) {
        (Some(number), _) => Target::Numbered(number),
        (None, true) => Target::Redo,
        (None, false) => Target::Newest,
    };
    let plan = undo::plan(ctx, target)?;
    let into_commits = !plan.secrets_into_commits().is_empty();
    if !args.dry_run {
        announce(ctx, &plan);
        if into_commits && !args.restore_secrets && !agreed(ctx, args)? {
            return Err(undo::refused(ctx, &plan));
        }
    }
    let report = undo::apply(ctx, plan)?;
    Ok(UndoOutput::Undone { report })
}

/// Says, before anything is written, which edit undo takes back (or redo
/// puts back), when it was made, and what it is about to do to each file.
fn announce(ctx: &Ctx, plan: &UndoPlan) {
    if ctx.quiet {
        return;
    }
    let edit = plan.edit();
    let files = shown_files(ctx, &plan.summary, ("put back", "remove"));
    let mut when = Vec::new();
    if let Some(place) = place(ctx, edit) {
        when.push(format!("edit {}, made {place}", edit.number));
    }
    when.push(edit.age.clone());
    when.push(edit.time.clone());
    let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
        writeln!(
            err,
            "{} `mcpenv {}` ({}) will:",
            if plan.is_redo() { "Redoing" } else { "Undoing" },
            shown(&edit.command),
            shown(&when.join(", "))
        )?;
        for (file, line) in plan.summary.files.iter().zip(&files) {
            if file.secret_into_commit {
                writeln!(
                    err,
                    "  {}, with a literal secret, into a file git tracks or would commit",
                    shown(line)
                )?;
            } else if file.members_only {
                writeln!(
                    err,
                    "  {}: only the members the edit changed, as the file changed since",
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
