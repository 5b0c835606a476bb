//! Typed errors of the core. Messages are lower-case sentences without a
//! final period; every error about a file names it. The CLI decides exit
//! codes and hints.

use std::io;
use std::path::{Path, PathBuf};

use crate::config::scope::Scope;
use crate::mechanics::fsx::{FileKind, LockError, NotRegularFile};

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
    /// Something other than a regular file is where the file should be
    /// (a FIFO, socket, device or directory); it was never opened.
    #[error("`{}` is {kind}, not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What is there instead.
        kind: FileKind,
    },
    /// The file holds nothing but whitespace: not JSON, and possibly a file
    /// truncated by accident, so mcpenv does not write over it.
    #[error("`{}` is empty", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// Whether Claude Code refuses it too (`~/.claude.json`), rather
        /// than reading it as `{}` (`.mcp.json`).
        claude_refuses: bool,
    },
    /// A value is nested deeper than mcpenv reads.
    #[error("`{}` is nested more than {limit} levels deep at `{pointer}`", path.display())]
    TooDeep {
        /// The file.
        path: PathBuf,
        /// JSON pointer of the value that holds the deep nesting.
        pointer: String,
        /// The deepest nesting mcpenv reads.
        limit: usize,
    },
    /// A project file is larger than Claude Code reads.
    #[error("`{}` is {size} bytes, larger than the {limit} bytes Claude Code reads", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, or the size it would have after the edit.
        size: u64,
        /// Claude Code's limit.
        limit: u64,
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
    /// A lock guarding the edit could not be taken: not created, or held
    /// too long by another program; the source names the lock.
    #[error("cannot lock `{}` for editing", path.display())]
    Lock {
        /// The file being edited.
        path: PathBuf,
        /// Which lock, and why.
        #[source]
        source: LockError,
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
    /// Right after the write, the file no longer held the edit: another
    /// program replaced it with a copy made before it.
    #[error("`{}` was replaced by another program right after mcpenv wrote it, and mcpenv's change is not in it", path.display())]
    Overwritten {
        /// The file.
        path: PathBuf,
    },
}

impl ConfigError {
    /// A value on the way to what mcpenv needs in `path` has the wrong type.
    pub fn shape(path: &std::path::Path, shape: &crate::mechanics::document::ShapeError) -> Self {
        Self::Shape {
            path: path.to_path_buf(),
            detail: shape.to_string(),
        }
    }

    /// Reading `path` failed with `source`: a non-regular file gets its own
    /// variant, which says what is there.
    pub fn read(path: &Path, source: io::Error) -> Self {
        match NotRegularFile::in_io(&source) {
            Some(not_regular) => Self::NotRegular {
                path: path.to_path_buf(),
                kind: not_regular.kind,
            },
            None => Self::Read {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// Taking a lock to edit `path` failed.
    pub fn lock(path: &Path, source: LockError) -> Self {
        Self::Lock {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &PathBuf {
        match self {
            Self::NotRegular { path, .. }
            | Self::Empty { path, .. }
            | Self::TooDeep { path, .. }
            | Self::TooLarge { path, .. }
            | Self::Lock { path, .. }
            | Self::Read { path, .. }
            | Self::Syntax { path, .. }
            | Self::Shape { path, .. }
            | Self::Write { path, .. }
            | Self::LockTimeout { path, .. }
            | Self::Contended { path }
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
    /// A `.mcp.json` lists servers at its top level and has no
    /// `mcpServers`: Claude Code 2.1.332 refuses to add to it, because the
    /// new key would stop a plugin from loading those servers.
    #[error("can't add to `{}`: it lists servers at the top level, and adding an \"mcpServers\" key would stop a plugin from loading them", path.display())]
    TopLevelServers {
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
