//! One report type per command, rendered as text or as JSON.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use crate::cli::output::{self, Stream};
use crate::cli::resolve::Ctx;

/// Bold: headings and names.
pub const BOLD: Style = Style::new().bold();
/// Dimmed: shadowed definitions and secondary text.
pub const DIM: Style = Style::new().dimmed();
/// Warnings.
pub const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
/// Failures.
pub const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
/// Success.
pub const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));

/// Version of every JSON document mcpenv prints.
pub const SCHEMA_VERSION: u32 = 1;

/// What a command produced: data for stdout, status for stderr.
pub trait Report: Serialize {
    /// Whether printing values is the point of this report (`env`,
    /// `get --reveal`): its data is then not masked.
    fn reveals(&self) -> bool {
        false
    }

    /// Writes the data as text (stdout).
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()>;

    /// Writes status sentences and warnings (stderr); silenced by `-q`.
    fn write_status(&self, _err: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Whether the command found what it exists to find (secrets for
    /// `scan`): printed as usual, then exit 1.
    fn failed(&self) -> bool {
        false
    }

    /// Whether the shield learns every scope's secrets before printing,
    /// which reads `~/.claude.json` and the env files; not for a report
    /// that must read only the files it was given (`scan --only-paths`).
    fn learns_world(&self) -> bool {
        true
    }
}

#[derive(Serialize)]
struct Envelope<'a, T> {
    schema_version: u32,
    #[serde(flatten)]
    report: &'a T,
}

/// Prints `report`: JSON (with `schema_version`) or text on stdout, then
/// its status on stderr unless `quiet` (a summary reads after the table it
/// sums up), all through the shield (secrets masked, stray controls
/// escaped). Returns whether the report is a failure.
pub fn emit<R: Report>(ctx: &Ctx, report: &R, json: bool, quiet: bool) -> io::Result<bool> {
    learn_world_for(ctx, report);
    if json {
        let envelope = Envelope {
            schema_version: SCHEMA_VERSION,
            report,
        };
        let value = serde_json::to_value(&envelope).map_err(io::Error::other)?;
        output::write_json(&ctx.shield, value, report.reveals())?;
    } else {
        output::write(&ctx.shield, Stream::Stdout, report.reveals(), |out| {
            report.write_text(out)
        })?;
    }
    emit_status(ctx, report, quiet)?;
    Ok(report.failed())
}

/// Prints `document`, the report in another JSON format (SARIF), on
/// stdout, then `report`'s status on stderr (unless `quiet`), secrets
/// masked. Returns whether the report is a failure.
pub fn emit_document<R: Report>(
    ctx: &Ctx,
    report: &R,
    document: serde_json::Value,
    quiet: bool,
) -> io::Result<bool> {
    learn_world_for(ctx, report);
    output::write_json(&ctx.shield, document, report.reveals())?;
    emit_status(ctx, report, quiet)?;
    Ok(report.failed())
}

/// Teaches the shield every scope's secrets before anything is printed,
/// unless the report must read only the files it was given.
fn learn_world_for<R: Report>(ctx: &Ctx, report: &R) {
    if report.learns_world() {
        ctx.learn_world();
    }
}

fn emit_status<R: Report>(ctx: &Ctx, report: &R, quiet: bool) -> io::Result<()> {
    if quiet {
        return Ok(());
    }
    output::write(&ctx.shield, Stream::Stderr, false, |err| {
        report.write_status(err)
    })
}

/// Writes `warning: message` lines.
pub fn warning(err: &mut dyn Write, message: &str) -> io::Result<()> {
    let style = YELLOW.bold();
    // A warning is one line: whatever it quotes from a file stays inside it.
    let message = shown(message);
    writeln!(err, "{style}warning:{style:#} {message}")
}

/// Untrusted text (a name, a command, a value from a file or a server) as it
/// may be shown on a terminal: controls and bidi characters escaped.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::display::escape(text)
}

pub use crate::display::quoted_names;

/// A table cell: text and how to style it.
pub struct Cell {
    text: String,
    style: Style,
}

impl Cell {
    /// A plain cell. Cells hold data, so controls in it are escaped.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::styled(text, Style::new())
    }

    /// A styled cell.
    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        let text = text.into();
        Self {
            text: shown(&text).into_owned(),
            style,
        }
    }

    /// A styled cell for a row's last column: left unstyled when empty, so
    /// the line ends without style codes.
    pub fn last(text: impl Into<String>, style: Style) -> Self {
        let text = text.into();
        let style = if text.is_empty() { Style::new() } else { style };
        Self::styled(text, style)
    }
}

/// Writes rows in aligned columns under a bold header; the last column is
/// not padded, so no line ends in spaces.
pub fn table(out: &mut dyn Write, header: &[&str], rows: &[Vec<Cell>]) -> io::Result<()> {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.text.chars().count());
        }
    }
    // Drop trailing columns that are empty in every row.
    let used = (0..columns)
        .rev()
        .find(|&column| {
            rows.iter()
                .any(|row| row.get(column).is_some_and(|cell| !cell.text.is_empty()))
        })
        .map_or(columns, |last| last + 1)
        .max(1);
    let header_cells: Vec<Cell> = header
        .iter()
        .map(|title| Cell::styled(*title, BOLD))
        .collect();
    for row in std::iter::once(&header_cells).chain(rows) {
        let mut line = String::new();
        let count = row.len().min(used);
        for (index, cell) in row.iter().take(count).enumerate() {
            let style = cell.style;
            line.push_str(&format!("{style}{}{style:#}", cell.text));
            if index + 1 < count {
                let pad = widths[index] - cell.text.chars().count() + 2;
                line.push_str(&" ".repeat(pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
