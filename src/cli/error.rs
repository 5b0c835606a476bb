//! The CLI's error: a kind that picks the exit code, the error chain, and
//! hints that say what to do next.

use std::error::Error;
use std::fmt;
use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use crate::error::{ConfigError, StoreError};
use crate::store::Progress;

/// Whether the arguments alone decided the failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Decided by the arguments alone: exit 2.
    Usage,
    /// Depends on the world (files, environment, findings): exit 1.
    Failure,
}

/// An error as the user sees it.
#[derive(Debug)]
pub struct CliError {
    kind: Kind,
    error: Box<dyn Error + Send + Sync>,
    hints: Vec<String>,
}

#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl Error for Message {}

#[derive(Debug)]
struct WithSource {
    message: String,
    source: Box<dyn Error + Send + Sync>,
}

impl fmt::Display for WithSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl Error for WithSource {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(self.source.as_ref())
    }
}

impl CliError {
    /// A usage error (exit 2) with this message.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Kind::Usage, Box::new(Message(message.into())))
    }

    /// An operational failure (exit 1) with this message.
    pub fn failure(message: impl Into<String>) -> Self {
        Self::new(Kind::Failure, Box::new(Message(message.into())))
    }

    /// An operational failure caused by `source`.
    pub fn failure_from(
        message: impl Into<String>,
        source: impl Error + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            Kind::Failure,
            Box::new(WithSource {
                message: message.into(),
                source: Box::new(source),
            }),
        )
    }

    /// Wraps any error with a kind.
    pub fn new(kind: Kind, error: Box<dyn Error + Send + Sync>) -> Self {
        Self {
            kind,
            error,
            hints: Vec::new(),
        }
    }

    /// Adds a hint line.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// This error as the end of a command that had already written some
    /// files: it names them and the files left as they were, and says how
    /// to finish. Unchanged when nothing was written yet.
    #[must_use]
    pub fn interrupted(self, progress: &Progress) -> Self {
        if progress.written().is_empty() {
            return self;
        }
        let Self {
            kind,
            error,
            mut hints,
        } = self;
        hints
            .push("run the same command again to finish: it does only what is missing".to_string());
        Self {
            kind,
            error: Box::new(progress.interrupted(error)),
            hints,
        }
    }

    /// The kind, which decides the exit code.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Writes `error: …`, one `caused by:` line per source, a blank line and
    /// the hints.
    pub fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let red = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
        let cyan = Style::new().bold().fg_color(Some(AnsiColor::Cyan.into()));
        writeln!(out, "{red}error:{red:#} {}", self.error)?;
        let mut source = self.error.source();
        while let Some(cause) = source {
            writeln!(out, "  caused by: {cause}")?;
            source = cause.source();
        }
        if !self.hints.is_empty() {
            writeln!(out)?;
        }
        for hint in &self.hints {
            writeln!(out, "{cyan}hint:{cyan:#} {hint}")?;
        }
        Ok(())
    }
}

impl From<ConfigError> for CliError {
    fn from(error: ConfigError) -> Self {
        let hint = match &error {
            ConfigError::Syntax { .. } => {
                "fix the file by hand: mcpenv never rewrites a file it cannot parse".to_string()
            }
            ConfigError::Shape { .. } => {
                "fix that value by hand: mcpenv never rewrites a file it cannot make sense of".to_string()
            }
            ConfigError::Read { .. } => "check that the file is readable and is UTF-8 text".to_string(),
            ConfigError::Write { .. } => "check that its directory is writable; the file was left as it was".to_string(),
            ConfigError::LockTimeout { .. } => "another mcpenv is editing it; try again when it has finished".to_string(),
            ConfigError::Contended { .. } => {
                "another program (a running Claude Code?) kept rewriting it; the file was left as it was, try again".to_string()
            }
            ConfigError::TooLarge { .. } => {
                "make the file smaller, or keep the server in another scope (`-s local` or `-s user`)".to_string()
            }
            ConfigError::Overwritten { .. } => {
                "another program (a running Claude Code?) saved a copy it had read before mcpenv's change; run the same command again".to_string()
            }
        };
        Self::new(Kind::Failure, Box::new(error)).with_hint(hint)
    }
}

impl From<StoreError> for CliError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Config(error) => error.into(),
            other => Self::new(Kind::Failure, Box::new(other)),
        }
    }
}

impl From<clap::Error> for CliError {
    fn from(error: clap::Error) -> Self {
        Self::new(Kind::Usage, Box::new(error))
    }
}
