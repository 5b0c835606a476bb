//! Typed errors of the core. Messages are lower-case sentences without a
//! final period; every error about a file names it. The CLI decides exit
//! codes and hints.

use std::io;
use std::path::PathBuf;

use crate::scope::Scope;

/// The working directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// It does not exist or cannot be resolved.
    #[error("cannot use `{}` as the working directory", path.display())]
    WorkingDir {
        /// The directory asked for.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// It is a file.
    #[error("`{}` is not a directory", path.display())]
    NotADirectory {
        /// The path asked for.
        path: PathBuf,
    },
}

/// Reading, parsing or writing one configuration file failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("failed to read `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file is not valid JSON.
    #[error("failed to parse `{}:{line}:{column}`: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file is JSON but a value mcpenv needs has the wrong type.
    #[error("`{}` is malformed: {detail}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// Which value and what it is.
        detail: String,
    },
    /// Writing failed; the original file is untouched.
    #[error("failed to write `{}`", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Another process held the lock for too long.
    #[error("timed out after {seconds} s waiting for the lock on `{}`", path.display())]
    LockTimeout {
        /// The file being edited.
        path: PathBuf,
        /// How long mcpenv waited.
        seconds: u64,
    },
    /// Another program kept rewriting the file during the edit.
    #[error("`{}` kept changing while mcpenv was editing it", path.display())]
    Contended {
        /// The file.
        path: PathBuf,
    },
    /// A `.mcp.json` that Claude Code would skip for its size.
    #[error("{}", too_large(path, *size, *after_edit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes, or the size the edit would give it.
        size: u64,
        /// Whether the file is small enough now and only the edit would
        /// make it too large.
        after_edit: bool,
    },
    /// Right after the write, the file no longer held the edit: another
    /// program replaced it with a copy made before it.
    #[error("`{}` was replaced by another program right after mcpenv wrote it, and mcpenv's change is not in it", path.display())]
    Overwritten {
        /// The file.
        path: PathBuf,
    },
}

fn too_large(path: &std::path::Path, size: u64, after_edit: bool) -> String {
    let limit = crate::locate::MAX_PROJECT_FILE_BYTES;
    if after_edit {
        format!(
            "the edit would make `{}` {size} bytes, more than the {limit} bytes (2 MiB) Claude Code reads; nothing was written",
            path.display()
        )
    } else {
        format!(
            "`{}` is {size} bytes, more than the {limit} bytes (2 MiB) Claude Code reads: Claude Code skips it, so mcpenv does not write to it",
            path.display()
        )
    }
}

impl ConfigError {
    /// A value on the way to what mcpenv needs in `path` has the wrong type.
    pub fn shape(path: &std::path::Path, shape: &crate::document::ShapeError) -> Self {
        Self::Shape {
            path: path.to_path_buf(),
            detail: shape.to_string(),
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &PathBuf {
        match self {
            Self::Read { path, .. }
            | Self::Syntax { path, .. }
            | Self::Shape { path, .. }
            | Self::Write { path, .. }
            | Self::LockTimeout { path, .. }
            | Self::Contended { path }
            | Self::TooLarge { path, .. }
            | Self::Overwritten { path } => path,
        }
    }
}

/// Adding or removing a server failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read, parsed or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The target scope already has a server of that name.
    #[error("MCP server `{name}` already exists in {scope} scope (`{}`)", path.display())]
    AlreadyExists {
        /// The server name.
        name: String,
        /// The scope written to.
        scope: Scope,
        /// Its file.
        path: PathBuf,
    },
    /// A value planned for change was not what it was when read.
    #[error("`{}` changed while mcpenv was planning the edit; nothing was written", path.display())]
    Stale {
        /// The file.
        path: PathBuf,
    },
    /// No scope has a server of that name.
    #[error("no MCP server named `{name}`")]
    NotFoundAnywhere {
        /// The server name.
        name: String,
    },
    /// Several scopes have a server of that name and none was chosen.
    #[error("MCP server `{name}` is defined in {} scopes; nothing was removed", scopes.len())]
    Ambiguous {
        /// The server name.
        name: String,
        /// The scopes that define it, by precedence.
        scopes: Vec<Scope>,
    },
    /// The scope has no server of that name.
    #[error("no MCP server named `{name}` in {scope} scope (`{}`)", path.display())]
    NotFound {
        /// The server name.
        name: String,
        /// The scope searched.
        scope: Scope,
        /// Its file.
        path: PathBuf,
    },
}
