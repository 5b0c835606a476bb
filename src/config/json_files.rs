//! Reading Claude Code's JSON config files as documents mcpenv can edit:
//! only regular files, every error naming its file (with line and column
//! for syntax), an empty file refused for an edit, a project file's size
//! capped as Claude Code caps it.

use std::path::Path;

use crate::config::error::ConfigError;
use crate::config::locate::MAX_PROJECT_FILE_BYTES;
use crate::mechanics::document::{DocumentError, JsonDocument};
use crate::mechanics::fsx::{self, Reads};

/// The root members of `~/.claude.json` worth reading in the first pass:
/// `projects` holds the local scope, and is most of the file.
pub const CLAUDE_JSON_EXPAND: &[&str] = &["projects"];

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
) -> Result<JsonDocument, ConfigError> {
    let existed = original.is_some();
    let document = parse_document(path, original.unwrap_or_default(), expand)?;
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
    JsonDocument::parse_expanding(text, expand).map_err(|error| document_error(path, error))
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
