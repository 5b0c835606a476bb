//! What `--dry-run` prints: each file that would change, as a unified
//! diff with secrets masked (see [`crate::ops::shown_changes`]); nothing is
//! written. The command runs as usual up to its writes, which its preview
//! session ([`crate::mechanics::edits::Edit::preview`]) collects instead of making.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::render::{self, Report, emit};
use crate::cli::resolve::Ctx;
use crate::ops::shown_changes::{self, ShownChange};

/// A dry run's report: the changes, and, for a command whose own report
/// already speaks of what it would do (`extract`, `import`), that report.
#[derive(Serialize)]
pub struct DryRunReport<'a, R: Report> {
    /// Always true: nothing was written.
    pub dry_run: bool,
    /// The command's own report, when it reads as a plan (its keys beside
    /// these, as without `--dry-run`).
    #[serde(flatten)]
    pub report: Option<&'a R>,
    /// Each file that would change.
    pub changes: Vec<ShownChange>,
    /// Changes outside files (a keychain entry), described.
    pub elsewhere: Vec<String>,
}

impl<R: Report> Report for DryRunReport<'_, R> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(report) = self.report {
            report.write_text(out)?;
            if !self.changes.is_empty() {
                writeln!(out)?;
            }
        }
        for (index, change) in self.changes.iter().enumerate() {
            if index > 0 {
                writeln!(out)?;
            }
            write_diff(out, &change.diff)?;
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if let Some(report) = self.report {
            report.write_status(err)?;
        }
        for what in &self.elsewhere {
            writeln!(err, "would also {}", render::shown(what))?;
        }
        match self.changes.len() {
            0 => writeln!(err, "dry run: no file would change"),
            1 => writeln!(err, "dry run: 1 file would change; nothing was written"),
            files => writeln!(
                err,
                "dry run: {files} files would change; nothing was written"
            ),
        }
    }
}

/// Writes a unified diff, its lines escaped, added lines green and removed
/// ones red (on a terminal that takes colour).
fn write_diff(out: &mut dyn Write, diff: &str) -> io::Result<()> {
    for line in diff.lines() {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            render::BOLD
        } else if line.starts_with('+') {
            render::GREEN
        } else if line.starts_with('-') {
            render::RED
        } else if line.starts_with("@@") {
            render::DIM
        } else {
            anstyle::Style::new()
        };
        writeln!(
            out,
            "{style}{}{style:#}",
            render::shown(line.trim_end_matches('\r'))
        )?;
    }
    Ok(())
}

/// Prints `report` for a command that writes: as usual, or, in a dry run,
/// the diffs of what it would have written (with `report` too when
/// `plan_report`: its own words already say "would"). Returns whether the
/// report is a failure.
pub fn emit_edit<R: Report>(
    ctx: &Ctx,
    report: &R,
    json: bool,
    quiet: bool,
    plan_report: bool,
) -> io::Result<bool> {
    let Some((changes, elsewhere)) = ctx.edit.finish_preview() else {
        return emit(ctx, report, json, quiet);
    };
    let dry_run = DryRunReport {
        dry_run: true,
        report: plan_report.then_some(report),
        changes: shown_changes::shown(ctx, &changes),
        elsewhere,
    };
    emit(ctx, &dry_run, json, quiet)
}
