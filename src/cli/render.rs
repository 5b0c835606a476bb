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

    /// Writes the errors [`Report::write_status`] includes, alone: what
    /// `-q` still prints (a file that cannot be read fails the command).
    fn write_errors(&self, _err: &mut dyn Write) -> io::Result<()> {
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
        write_report_json(ctx, report)?;
    } else {
        output::write(&ctx.shield, Stream::Stdout, report.reveals(), |out| {
            report.write_text(out)
        })?;
    }
    emit_status(ctx, report, quiet)?;
    Ok(report.failed())
}

/// [`emit`] as JSON, written by `write` when it can (it is handed the
/// shield once it knows every secret, and says `None` to leave the report
/// to the usual way: turned into a `Value`, masked, written).
pub fn emit_json_with<R: Report>(
    ctx: &Ctx,
    report: &R,
    quiet: bool,
    write: impl FnOnce(&output::Shield) -> Option<io::Result<()>>,
) -> io::Result<bool> {
    learn_world_for(ctx, report);
    match write(&ctx.shield) {
        Some(written) => written?,
        None => write_report_json(ctx, report)?,
    }
    emit_status(ctx, report, quiet)?;
    Ok(report.failed())
}

/// `report` as JSON with `schema_version`, through a `Value`.
fn write_report_json<R: Report>(ctx: &Ctx, report: &R) -> io::Result<()> {
    let envelope = Envelope {
        schema_version: SCHEMA_VERSION,
        report,
    };
    let value = serde_json::to_value(&envelope).map_err(io::Error::other)?;
    output::write_json(&ctx.shield, value, report.reveals())
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
    output::write(&ctx.shield, Stream::Stderr, false, |err| {
        if quiet {
            report.write_errors(err)
        } else {
            report.write_status(err)
        }
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
    crate::mechanics::display::escape(text)
}

pub use crate::mechanics::display::quoted_names;

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

/// Columns `text` takes on a terminal (no style codes in it).
pub fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// The fewest columns free text is squeezed into beside other columns;
/// with less room it goes on lines of its own below them.
const MIN_ROOM: usize = 24;

/// `text` broken at spaces into lines of at most `room` columns, first fit
/// (textwrap). A word wider than `room` stays whole on a line of its own: it
/// may be a URL or a name someone copies, so it is never cut.
pub fn wrap(text: &str, room: usize) -> Vec<String> {
    let options = textwrap::Options::new(room.max(1))
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit);
    let lines: Vec<String> = textwrap::wrap(text, options)
        .into_iter()
        .map(|line| line.trim_end().to_string())
        .collect();
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

/// Writes `lead` (shown `lead_width` columns wide) then `text` in `style`;
/// when the line would pass the terminal's width, `text` wraps with a
/// hanging indent under its first word, or (too little room beside `lead`)
/// goes on lines of its own indented by `fallback_indent`.
pub fn write_hanging(
    out: &mut dyn Write,
    lead: &str,
    lead_width: usize,
    text: &str,
    style: Style,
    fallback_indent: usize,
) -> io::Result<()> {
    let Some(width) = output::width() else {
        return writeln!(out, "{}", lead_and(lead, text, style));
    };
    if lead_width + display_width(text) <= width {
        return writeln!(out, "{}", lead_and(lead, text, style));
    }
    let room = width.saturating_sub(lead_width);
    if room >= MIN_ROOM {
        let mut lines = wrap(text, room).into_iter();
        let first = lines.next().unwrap_or_default();
        writeln!(out, "{}", lead_and(lead, &first, style))?;
        for line in lines {
            // A word too wide for the indent (a long URL) moves left just
            // enough to fit, rather than being cut.
            let indent = lead_width.min(width.saturating_sub(display_width(&line)));
            let indent = " ".repeat(indent);
            writeln!(out, "{indent}{style}{line}{style:#}")?;
        }
        return Ok(());
    }
    writeln!(out, "{}", lead.trim_end())?;
    let lines = wrap(text, width.saturating_sub(fallback_indent).max(1));
    let indent = " ".repeat(fallback_indent);
    for line in lines {
        writeln!(out, "{indent}{style}{line}{style:#}")?;
    }
    Ok(())
}

/// `lead` then `text` in `style`, as one line that ends in no spaces.
fn lead_and(lead: &str, text: &str, style: Style) -> String {
    if text.is_empty() {
        return lead.trim_end().to_string();
    }
    format!("{lead}{style}{text}{style:#}")
}

/// How a table's last column meets the terminal's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastColumn {
    /// Whole, however long: a command, a URL or a name people copy.
    Whole,
    /// Free text (a description): wrapped with a hanging indent.
    Wraps,
}

/// Fewest rows of a table written on more than one core.
const PARALLEL_ROWS: usize = 1024;

/// Rows a thread writes at a time.
const ROW_RUN: usize = 512;

/// Writes rows in aligned columns under a bold header; the last column is
/// not padded, so no line ends in spaces. Other columns are never cut.
/// A long table's rows are written in runs on every core, then put out in
/// order.
pub fn table(out: &mut dyn Write, header: &[&str], rows: &[Vec<Cell>]) -> io::Result<()> {
    if rows.len() < PARALLEL_ROWS {
        return table_fitted(out, header, rows, LastColumn::Whole, |_, _| Ok(()));
    }
    let layout = Layout::of(header, rows);
    layout.write_row(out, &header_cells(header), false)?;
    let runs: Vec<&[Vec<Cell>]> = rows.chunks(ROW_RUN).collect();
    let written = crate::secrets::redact::on_every_core(
        runs.len(),
        || (),
        |(), index| {
            let mut bytes = Vec::new();
            for row in runs[index] {
                layout.write_row(&mut bytes, row, false)?;
            }
            Ok::<_, io::Error>(bytes)
        },
    );
    for bytes in written {
        out.write_all(&bytes?)?;
    }
    Ok(())
}

/// [`table`] whose last column is `last`, with `after(out, row)` writing
/// lines of its own under each row (what a template installs).
pub fn table_fitted(
    out: &mut dyn Write,
    header: &[&str],
    rows: &[Vec<Cell>],
    last: LastColumn,
    mut after: impl FnMut(&mut dyn Write, usize) -> io::Result<()>,
) -> io::Result<()> {
    let layout = Layout::of(header, rows);
    let header_cells = header_cells(header);
    for (index, row) in std::iter::once(&header_cells).chain(rows).enumerate() {
        layout.write_row(out, row, last == LastColumn::Wraps && index > 0)?;
        if index > 0 {
            after(out, index - 1)?;
        }
    }
    Ok(())
}

/// A table's header, bold.
fn header_cells(header: &[&str]) -> Vec<Cell> {
    header
        .iter()
        .map(|title| Cell::styled(*title, BOLD))
        .collect()
}

/// How wide a table's columns are, and how many are shown.
struct Layout {
    widths: Vec<usize>,
    /// Columns up to the last one that is not empty in every row.
    used: usize,
}

impl Layout {
    fn of(header: &[&str], rows: &[Vec<Cell>]) -> Self {
        let columns = header.len();
        let mut widths: Vec<usize> = header.iter().map(|title| display_width(title)).collect();
        for row in rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(display_width(&cell.text));
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
        Self { widths, used }
    }

    /// Writes one row; its last cell wraps when `wraps`.
    fn write_row(&self, out: &mut dyn Write, row: &[Cell], wraps: bool) -> io::Result<()> {
        let widths = &self.widths;
        let mut lead = String::new();
        let mut lead_width = 0;
        let count = row.len().min(self.used);
        let Some((final_cell, leading)) = row[..count].split_last() else {
            return writeln!(out);
        };
        for (column, cell) in leading.iter().enumerate() {
            let style = cell.style;
            lead.push_str(&format!("{style}{}{style:#}", cell.text));
            let pad = widths[column] - display_width(&cell.text) + 2;
            lead.push_str(&" ".repeat(pad));
            lead_width += widths[column] + 2;
        }
        if wraps {
            write_hanging(
                out,
                &lead,
                lead_width,
                &final_cell.text,
                final_cell.style,
                4,
            )
        } else {
            let style = final_cell.style;
            let line = format!("{lead}{style}{}{style:#}", final_cell.text);
            writeln!(out, "{}", line.trim_end())
        }
    }
}

/// `1 edit`, `2 edits`: a count and its noun, plural when it is not one.
pub fn counted(count: usize, noun: &str) -> String {
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words_whole() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(
            wrap("see https://example.com/a/long/path now", 10),
            ["see", "https://example.com/a/long/path", "now"]
        );
        assert_eq!(wrap("", 10), [""]);
    }

    #[test]
    fn a_long_table_is_written_on_every_core_as_on_one() {
        let rows: Vec<Vec<Cell>> = (0..PARALLEL_ROWS + ROW_RUN + 7)
            .map(|index| {
                vec![
                    Cell::plain(format!("file-{index}{}", "日".repeat(index % 4))),
                    Cell::styled(format!("{}", index % 13), BOLD),
                    Cell::plain(if index % 3 == 0 { "" } else { "x\u{1b}y" }),
                    Cell::plain(if index % 5 == 0 { "v " } else { "" }),
                    Cell::plain(""),
                ]
            })
            .collect();
        let header = ["FILE", "N", "WHAT", "VALUE", "EMPTY"];
        let mut on_one = Vec::new();
        table_fitted(
            &mut on_one,
            &header,
            &rows,
            LastColumn::Whole,
            |_, _| Ok(()),
        )
        .unwrap();
        let mut on_every = Vec::new();
        table(&mut on_every, &header, &rows).unwrap();
        assert_eq!(
            String::from_utf8(on_every).unwrap(),
            String::from_utf8(on_one).unwrap()
        );
    }

    #[test]
    fn widths_count_columns_as_displayed() {
        assert_eq!(display_width("日本"), 4);
        assert_eq!(display_width("e\u{301}"), 1);
    }
}
