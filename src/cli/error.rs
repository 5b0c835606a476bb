//! The CLI's rendering of a use case's error ([`crate::ops::Error`]): `error:`,
//! its causes, and `hint:` lines; the kind picks the exit code.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use crate::mechanics::display::escape;

pub use crate::ops::error::{Error as CliError, Kind};
pub use crate::ops::hints::{config_hints, lock_hints};

impl CliError {
    /// Writes `error: …`, one `caused by:` line per source, a blank line and
    /// the hints.
    pub fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let red = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
        let cyan = Style::new().bold().fg_color(Some(AnsiColor::Cyan.into()));
        // Messages are one line each: whatever they quote (a name from a
        // file, a server's words) is escaped so it cannot forge a line.
        let message = self.message();
        writeln!(out, "{red}error:{red:#} {}", escape(&message))?;
        for cause in self.causes() {
            writeln!(out, "  caused by: {}", escape(&cause))?;
        }
        if !self.hints().is_empty() {
            writeln!(out)?;
        }
        for hint in self.hints() {
            // Every line is escaped on its own: a name quoted in a hint
            // cannot start a line of its own.
            let lines: Vec<_> = hint.iter().map(|line| escape(line)).collect();
            writeln!(out, "{cyan}hint:{cyan:#} {}", lines.join("\n"))?;
        }
        Ok(())
    }
}

impl CliError {
    /// The error as the one JSON document a command run with `--json`
    /// prints instead of its report: `{"schema_version": 1, "error":
    /// {"message", "causes", "hint", "kind", "file", "line", "column"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let (file, position) = self
            .location()
            .map_or((None, None), |(file, position)| (Some(file), position));
        let hints: Vec<String> = self.hints().iter().map(|lines| lines.join("\n")).collect();
        serde_json::json!({
            "schema_version": crate::cli::render::SCHEMA_VERSION,
            "error": {
                "message": self.message(),
                "causes": self.causes(),
                "hint": (!hints.is_empty()).then(|| hints.join("\n")),
                "kind": match self.kind() {
                    Kind::Usage => "usage",
                    Kind::Failure => "failure",
                },
                "file": file.map(|file| file.display().to_string()),
                "line": position.map(|(line, _)| line),
                "column": position.map(|(_, column)| column),
            }
        })
    }
}

impl From<clap::Error> for CliError {
    fn from(error: clap::Error) -> Self {
        Self::new(Kind::Usage, Box::new(error))
    }
}
