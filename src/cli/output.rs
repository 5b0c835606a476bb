//! The one way out to the terminal: everything mcpenv prints, data or
//! status, text or JSON, success or error, passes through a [`Shield`] that
//! masks every secret this run knows of and escapes any control or bidi
//! character still raw in rendered text. Commands render into a buffer and
//! hand it here, so a new output cannot forget either rule.

use std::io::{self, IsTerminal, Write};
use std::sync::OnceLock;

use serde_json::Value;

pub use crate::secrets::redact::Shield;

/// Where rendered text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Data.
    Stdout,
    /// Everything else.
    Stderr,
}

/// Renders with `write` into a buffer, cleans it with `shield` (unless
/// `reveal`: the command exists to print values, as `env` does), and writes
/// it to `stream` through anstream, which drops colour where it is off.
pub fn write(
    shield: &Shield,
    stream: Stream,
    reveal: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    write(&mut buffer)?;
    if buffer.is_empty() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&buffer);
    let cleaned = if reveal {
        text.into_owned()
    } else {
        shield.clean(&text)
    };
    match stream {
        Stream::Stdout => {
            let mut out = anstream::stdout().lock();
            out.write_all(cleaned.as_bytes())?;
            out.flush()
        }
        Stream::Stderr => {
            let mut err = anstream::stderr().lock();
            err.write_all(cleaned.as_bytes())?;
            err.flush()
        }
    }
}

/// Writes `value` to stdout as pretty JSON with every secret masked.
pub fn write_json(shield: &Shield, mut value: Value, reveal: bool) -> io::Result<()> {
    if !reveal {
        shield.clean_json(&mut value);
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &value)?;
    writeln!(out)?;
    out.flush()
}

/// Writes one compact JSON line (JSON Lines) with every secret masked.
pub fn write_json_line(shield: &Shield, mut value: Value) -> io::Result<()> {
    shield.clean_json(&mut value);
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, &value)?;
    writeln!(out)?;
    out.flush()
}

/// The width text lines are bounded by, decided once per run.
static WIDTH: OnceLock<Option<usize>> = OnceLock::new();

/// Decides the width text output fits: `columns` (the `COLUMNS` variable)
/// when it is a positive number, else the terminal's width when stdout is
/// one, else none (a pipe: full lines, as scripts expect). Set once, like
/// anstream's colour choice; a later call changes nothing.
pub fn set_width(columns: Option<&str>) {
    let from_env = columns
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&width| width > 0);
    let width = from_env.or_else(|| {
        let stdout = io::stdout();
        if !stdout.is_terminal() {
            return None;
        }
        terminal_size::terminal_size_of(&stdout).map(|(width, _)| usize::from(width.0))
    });
    let _ = WIDTH.set(width);
}

/// The width text lines fit in, or `None` for full lines.
pub fn width() -> Option<usize> {
    WIDTH.get().copied().flatten()
}
