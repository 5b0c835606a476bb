//! Reading Claude Code's JSON config files as documents mcpenv can edit:
//! only regular files, every error naming its file (with line and column
//! for syntax), an empty file refused for an edit, a project file's size
//! capped as Claude Code caps it.

use std::path::Path;

use crate::config::error::ConfigError;
use crate::config::locate::{Locations, MAX_PROJECT_FILE_BYTES};
use crate::mechanics::document::{DocumentError, JsonDocument};
use crate::mechanics::fsx::{self, Reads};
use crate::mechanics::layout_cache;

/// The root members of `~/.claude.json` worth reading in the first pass:
/// `projects` holds the local scope, and is most of the file.
pub const CLAUDE_JSON_EXPAND: &[&str] = &["projects"];

/// The layout cache a reading of `~/.claude.json` uses (see
/// [`crate::mechanics::layout_cache`]).
#[derive(Debug, Clone, Copy)]
pub struct Cached<'a> {
    /// The cache's file.
    pub file: &'a Path,
    /// Whether a text not found there is added (not a preview's text).
    pub keep: bool,
}

impl<'a> Cached<'a> {
    /// The cache of `locations` for a reading of `path` through `reads`,
    /// if one is used.
    pub fn of(locations: &'a Locations, reads: &dyn Reads, path: &Path) -> Option<Self> {
        locations.layout_cache.as_ref().map(|setting| Self {
            file: &setting.file,
            keep: setting.write && reads.keeps_caches(path),
        })
    }
}

/// Reads and parses `~/.claude.json` (as [`load_document_from`], with
/// [`CLAUDE_JSON_EXPAND`]), its layout from the cache when its bytes were
/// read before.
pub fn load_claude_json(
    reads: &dyn Reads,
    locations: &Locations,
) -> Result<Option<JsonDocument>, ConfigError> {
    let path = &locations.claude_json;
    let text = reads
        .read_text(path)
        .map_err(|source| ConfigError::read(path, source))?;
    let cached = Cached::of(locations, reads, path);
    text.map(|text| parse_document_with(path, text, CLAUDE_JSON_EXPAND, cached))
        .transpose()
}

/// Reads and parses a JSON config file; `None` when it does not exist. Only
/// a regular file is read ([`ConfigError::NotRegular`] otherwise, never
/// opened); an empty or blank file is an empty document
/// ([`JsonDocument::is_empty`]). `expand` as in
/// [`JsonDocument::parse_expanding`].
pub fn load_document(path: &Path, expand: &[&str]) -> Result<Option<JsonDocument>, ConfigError> {
    load_document_from(&fsx::Disk, path, expand)
}

/// [`load_document`], read through `reads`.
pub fn load_document_from(
    reads: &dyn Reads,
    path: &Path,
    expand: &[&str],
) -> Result<Option<JsonDocument>, ConfigError> {
    let text = reads
        .read_text(path)
        .map_err(|source| ConfigError::read(path, source))?;
    text.map(|text| parse_document(path, text, expand))
        .transpose()
}

/// Parses the text an edit starts from: `original` as read (`None`: the
/// file does not exist, so the edit creates it). A file that exists but is
/// empty or blank is refused ([`ConfigError::Empty`]): Claude Code reports an
/// empty `~/.claude.json` as corrupted, and reads an empty `.mcp.json` as
/// `{}`, but an empty file is as likely one truncated by accident (`jq …
/// .mcp.json > .mcp.json`), and mcpenv never writes over what it cannot
/// read as meant.
pub fn parse_for_edit(
    path: &Path,
    original: Option<String>,
    expand: &[&str],
    cached: Option<Cached<'_>>,
) -> Result<JsonDocument, ConfigError> {
    let existed = original.is_some();
    let document = parse_document_with(path, original.unwrap_or_default(), expand, cached)?;
    if existed && document.is_empty() {
        return Err(ConfigError::Empty {
            path: path.to_path_buf(),
            claude_refuses: !is_project_file(path),
        });
    }
    Ok(document)
}

fn is_project_file(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == ".mcp.json")
}

/// Refuses a project file of `size` bytes (as it is, or as an edit would
/// leave it) that Claude Code would skip: over [`MAX_PROJECT_FILE_BYTES`].
pub fn check_project_file_size(path: &Path, size: u64) -> Result<(), ConfigError> {
    if size > MAX_PROJECT_FILE_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_PROJECT_FILE_BYTES,
        });
    }
    Ok(())
}

/// Parses `text` read from `path`, naming the file in any error.
pub fn parse_document(
    path: &Path,
    text: String,
    expand: &[&str],
) -> Result<JsonDocument, ConfigError> {
    parse_document_with(path, text, expand, None)
}

/// [`parse_document`], through the layout cache when `cached` says so.
pub fn parse_document_with(
    path: &Path,
    text: String,
    expand: &[&str],
    cached: Option<Cached<'_>>,
) -> Result<JsonDocument, ConfigError> {
    match cached {
        Some(cached) => layout_cache::parse(cached.file, text, expand, cached.keep),
        None => JsonDocument::parse_expanding(text, expand),
    }
    .map_err(|error| document_error(path, error))
}

/// Names the file in a document error.
pub fn document_error(path: &Path, error: DocumentError) -> ConfigError {
    match error {
        DocumentError::Syntax(syntax) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: syntax.line,
            column: syntax.column,
            message: syntax.message,
        },
        DocumentError::Shape(shape) => ConfigError::shape(path, &shape),
        DocumentError::Overlap => ConfigError::Shape {
            path: path.to_path_buf(),
            detail: "mcpenv planned two overlapping changes (a bug; nothing was written)"
                .to_string(),
        },
    }
}
