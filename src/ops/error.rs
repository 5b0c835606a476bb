//! A use case's error: a kind (usage or failure, which the CLI turns into
//! its exit code and `serve` into its error channel), the error chain, and
//! hints that say what to do next. Front-ends render it; nothing here prints.

use std::error::Error as StdError;
use std::fmt;

use crate::config::error::{ConfigError, StoreError};
use crate::config::store::Progress;
use crate::ops::hints::config_hints;

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
pub struct Error {
    kind: Kind,
    error: Box<dyn StdError + Send + Sync>,
    /// Each hint is a list of lines: one, unless built with
    /// [`Error::with_hint_lines`].
    hints: Vec<Vec<String>>,
}

#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl StdError for Message {}

#[derive(Debug)]
struct WithSource {
    message: String,
    source: Box<dyn StdError + Send + Sync>,
}

impl fmt::Display for WithSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl StdError for WithSource {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.source.as_ref())
    }
}

impl Error {
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
        source: impl StdError + Send + Sync + 'static,
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
    pub fn new(kind: Kind, error: Box<dyn StdError + Send + Sync>) -> Self {
        Self {
            kind,
            error,
            hints: Vec::new(),
        }
    }

    /// Adds a hint line.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(vec![hint.into()]);
        self
    }

    /// Adds a hint of several lines (a heading, then one command a line).
    #[must_use]
    pub fn with_hint_lines(mut self, lines: Vec<String>) -> Self {
        self.hints.push(lines);
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
        hints.push(vec![
            "run the same command again to finish: it does only what is missing".to_string(),
        ]);
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

    /// The message, without its causes.
    pub fn message(&self) -> String {
        self.error.to_string()
    }

    /// The error chain below the message, outermost first.
    pub fn causes(&self) -> Vec<String> {
        let mut causes = Vec::new();
        let mut source = self.error.source();
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        causes
    }

    /// The hints, each a list of lines.
    pub fn hints(&self) -> &[Vec<String>] {
        &self.hints
    }

    /// The file the error is about, with the line and column (1-based)
    /// of a parse error, when the error chain names one.
    pub fn location(&self) -> Option<(std::path::PathBuf, Option<(usize, usize)>)> {
        let mut current: Option<&(dyn StdError + 'static)> = Some(self.error.as_ref());
        while let Some(error) = current {
            let config = error.downcast_ref::<ConfigError>().or_else(|| {
                match error.downcast_ref::<StoreError>() {
                    Some(StoreError::Config(config)) => Some(config),
                    _ => None,
                }
            });
            if let Some(config) = config {
                let position = match config {
                    ConfigError::Syntax { line, column, .. } => Some((*line, *column)),
                    _ => None,
                };
                return Some((config.path().clone(), position));
            }
            current = error.source();
        }
        None
    }
}

impl From<ConfigError> for Error {
    fn from(error: ConfigError) -> Self {
        let hints = config_hints(&error);
        hints
            .into_iter()
            .fold(Self::new(Kind::Failure, Box::new(error)), Self::with_hint)
    }
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Config(error) => error.into(),
            top_level @ StoreError::TopLevelServers { .. } => {
                Self::new(Kind::Failure, Box::new(top_level))
                    .with_hint(r#"move them under "mcpServers", then try again"#)
                    .with_hint(
                        r#"if they aren't servers, add "mcpServers": {} to the file instead"#,
                    )
            }
            other => Self::new(Kind::Failure, Box::new(other)),
        }
    }
}
