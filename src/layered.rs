//! The merged view of every scope: each server with the scope and file it
//! comes from, its approval, and which definition wins.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::approval::{Approval, ApprovalPolicy};
use crate::document::JsonDocument;
use crate::error::ConfigError;
use crate::fsx;
use crate::locate::{Locations, MAX_PROJECT_FILE_BYTES};
use crate::model::{RESERVED_NAMES, ServerEntry};
use crate::scope::Scope;

/// A server definition and where it was found.
#[derive(Debug, Clone)]
pub struct Sourced {
    /// The server's name.
    pub name: String,
    /// The scope it is defined in.
    pub scope: Scope,
    /// The file it is defined in.
    pub file: PathBuf,
    /// The entry as written.
    pub entry: ServerEntry,
    /// For project servers, Claude Code's approval state.
    pub approval: Option<Approval>,
}

impl Sourced {
    /// Whether Claude Code lets this definition take a name from a lower
    /// scope: pending and rejected project servers do not.
    fn can_shadow(&self) -> bool {
        self.approval
            .is_none_or(|approval| approval == Approval::Approved)
    }
}

/// Something about the configuration worth telling, that is not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The file concerned.
    pub path: PathBuf,
    /// What to know about it.
    pub message: String,
}

/// Every server of every scope for one working directory.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// Definitions by precedence: local, project (nearest file first), user;
    /// file order within a file.
    pub entries: Vec<Sourced>,
    /// Things Claude Code would skip or warn about.
    pub notes: Vec<Note>,
}

impl Inventory {
    /// Reads every scope. A file that does not parse is an error: nothing is
    /// guessed about a broken file.
    pub fn load(locations: &Locations) -> Result<Self, ConfigError> {
        let mut notes = Vec::new();
        let claude = load_document(&locations.claude_json, CLAUDE_JSON_EXPAND)?;
        if claude.as_ref().is_some_and(JsonDocument::is_empty) {
            // Claude Code reports an empty `~/.claude.json` as corrupted and
            // loads nothing; reading it as `{}` would tell a different story.
            return Err(ConfigError::Empty {
                path: locations.claude_json.clone(),
                claude_refuses: true,
            });
        }
        let project_path = ["projects", locations.local_key.as_str()];
        let local = match &claude {
            Some(document) => servers_at(
                document,
                &locations.claude_json,
                &[project_path[0], project_path[1], "mcpServers"],
            )?,
            None => Vec::new(),
        };
        let user = match &claude {
            Some(document) => servers_at(document, &locations.claude_json, &["mcpServers"])?,
            None => Vec::new(),
        };
        let project_entry = match &claude {
            Some(document) => approval_keys(document, &locations.claude_json, &project_path)?,
            None => None,
        };
        let policy = ApprovalPolicy::load(locations, project_entry.as_ref());
        notes.extend(policy.problems.iter().map(|problem| Note {
            path: problem.path.clone(),
            message: format!("settings file {}; Claude Code skips it", problem.message),
        }));

        let mut entries = Vec::new();
        let mut add = |scope: Scope,
                       file: &Path,
                       servers: Vec<(String, ServerEntry)>,
                       notes: &mut Vec<Note>| {
            for (name, entry) in servers {
                if RESERVED_NAMES.contains(&name.as_str()) {
                    notes.push(Note {
                        path: file.to_path_buf(),
                        message: format!(
                            "`{name}` is a reserved name; Claude Code does not load it"
                        ),
                    });
                }
                for problem in entry.problems() {
                    notes.push(Note {
                        path: file.to_path_buf(),
                        message: format!("`{name}`: {problem}; Claude Code skips it"),
                    });
                }
                notes.extend(placeholder_notes(file, &name, &entry));
                let approval = (scope == Scope::Project).then(|| policy.approval(&name));
                entries.push(Sourced {
                    name,
                    scope,
                    file: file.to_path_buf(),
                    entry,
                    approval,
                });
            }
        };
        add(Scope::Local, &locations.claude_json, local, &mut notes);
        for file in locations.project_files().iter().rev() {
            if let Some(servers) = read_project_file(file, &mut notes)? {
                add(Scope::Project, file, servers, &mut notes);
            }
        }
        add(Scope::User, &locations.claude_json, user, &mut notes);

        let managed = locations.managed_mcp();
        if managed.is_file() {
            notes.push(Note {
                path: managed,
                message: "managed MCP configuration is active: Claude Code uses only its servers and ignores every scope listed here"
                    .to_string(),
            });
        }
        Ok(Self { entries, notes })
    }

    /// The definition Claude Code uses for `name`, if any.
    pub fn winner(&self, name: &str) -> Option<&Sourced> {
        let mut candidates = self.entries.iter().filter(|entry| entry.name == name);
        let first = candidates.clone().next()?;
        Some(candidates.find(|entry| entry.can_shadow()).unwrap_or(first))
    }

    /// Whether `entry` loses its name to another definition, and to which.
    pub fn shadowed_by(&self, entry: &Sourced) -> Option<&Sourced> {
        let winner = self.winner(&entry.name)?;
        (!std::ptr::eq(winner, entry)).then_some(winner)
    }

    /// Every definition of `name`, by precedence.
    pub fn all_named(&self, name: &str) -> Vec<&Sourced> {
        self.entries
            .iter()
            .filter(|entry| entry.name == name)
            .collect()
    }

    /// Every distinct name, in order of first definition.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for entry in &self.entries {
            if !names.contains(&entry.name.as_str()) {
                names.push(&entry.name);
            }
        }
        names
    }
}

/// The root members of `~/.claude.json` worth reading in the first pass:
/// `projects` holds the local scope, and is most of the file.
pub const CLAUDE_JSON_EXPAND: &[&str] = &["projects"];

/// Placeholder forms in `entry` that Claude Code never expands, with the fix.
pub fn placeholder_notes(path: &Path, name: &str, entry: &ServerEntry) -> Vec<Note> {
    entry
        .expandable_fields()
        .into_iter()
        .flat_map(|(field, value)| {
            crate::placeholder::unsupported_forms(value)
                .into_iter()
                .map(move |form| Note {
                    path: path.to_path_buf(),
                    message: format!(
                        "`{name}` {field}: Claude Code never expands `{}`; {}",
                        form.found, form.fix
                    ),
                })
        })
        .collect()
}

/// Reads and parses a JSON config file; `None` when it does not exist. Only
/// a regular file is read ([`ConfigError::NotRegular`] otherwise, never
/// opened); an empty or blank file is an empty document
/// ([`JsonDocument::is_empty`]). `expand` as in
/// [`JsonDocument::parse_expanding`].
pub fn load_document(path: &Path, expand: &[&str]) -> Result<Option<JsonDocument>, ConfigError> {
    let text = fsx::read_if_exists(path).map_err(|source| ConfigError::read(path, source))?;
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
pub fn document_error(path: &Path, error: crate::document::DocumentError) -> ConfigError {
    match error {
        crate::document::DocumentError::Syntax(syntax) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: syntax.line,
            column: syntax.column,
            message: syntax.message,
        },
        crate::document::DocumentError::Shape(shape) => ConfigError::shape(path, &shape),
        crate::document::DocumentError::Overlap => ConfigError::Shape {
            path: path.to_path_buf(),
            detail: "mcpenv planned two overlapping changes (a bug; nothing was written)"
                .to_string(),
        },
    }
}

/// The servers of the object at `object_path`, duplicates resolved as
/// `JSON.parse` does (first position, last value).
pub fn servers_at(
    document: &JsonDocument,
    path: &Path,
    object_path: &[&str],
) -> Result<Vec<(String, ServerEntry)>, ConfigError> {
    let object = document
        .object_at(object_path)
        .map_err(|shape| ConfigError::shape(path, &shape))?;
    let Some(object) = object else {
        return Ok(Vec::new());
    };
    let mut servers: Vec<(String, ServerEntry)> = Vec::new();
    for member in document.members(&object).iter() {
        let name = document.key(member).into_owned();
        let value = document.try_value_at(&member.value_span).map_err(|_| {
            let mut pointer_path = object_path.to_vec();
            pointer_path.push(&name);
            ConfigError::TooDeep {
                path: path.to_path_buf(),
                pointer: crate::document::pointer(&pointer_path),
                limit: crate::document::MAX_DEPTH,
            }
        })?;
        let entry = ServerEntry::from_value(value);
        match servers.iter_mut().find(|(existing, _)| *existing == name) {
            Some(slot) => slot.1 = entry,
            None => servers.push((name, entry)),
        }
    }
    Ok(servers)
}

/// The approval-related members of this project's `~/.claude.json` entry,
/// without parsing the rest of it (its `history` can be megabytes).
fn approval_keys(
    document: &JsonDocument,
    path: &Path,
    project_path: &[&str],
) -> Result<Option<Value>, ConfigError> {
    let object = document
        .object_at(project_path)
        .map_err(|shape| ConfigError::shape(path, &shape))?;
    let Some(object) = object else {
        return Ok(None);
    };
    let mut keys = Map::new();
    for member in document.members(&object).iter() {
        let key = document.key(member);
        if matches!(
            key.as_ref(),
            "hasTrustDialogAccepted"
                | "enabledMcpjsonServers"
                | "disabledMcpjsonServers"
                | "enableAllProjectMcpServers"
        ) {
            keys.insert(key.into_owned(), document.value_at(&member.value_span));
        }
    }
    Ok(Some(Value::Object(keys)))
}

/// Reads one project file as Claude Code does: a file that is not regular
/// (a FIFO, a directory, …) or is over 2 MiB is skipped with a note and never
/// opened; an empty one has no servers, with a note (mcpenv will not write
/// to it).
fn read_project_file(
    file: &Path,
    notes: &mut Vec<Note>,
) -> Result<Option<Vec<(String, ServerEntry)>>, ConfigError> {
    let mut skip = |message: String| {
        notes.push(Note {
            path: file.to_path_buf(),
            message,
        });
        Ok(None)
    };
    let metadata = match std::fs::metadata(file) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return skip(format!("cannot be read ({error}); Claude Code skips it")),
    };
    if let Some(kind) = fsx::FileKind::of(&metadata) {
        return skip(format!(
            "is {kind}, not a regular file; Claude Code skips it"
        ));
    }
    if check_project_file_size(file, metadata.len()).is_err() {
        return skip("larger than 2 MiB; Claude Code skips it".to_string());
    }
    let document = match load_document(file, &[]) {
        Ok(Some(document)) => document,
        Ok(None) => return Ok(None),
        // Swapped for something else since the look above.
        Err(ConfigError::NotRegular { kind, .. }) => {
            return skip(format!(
                "is {kind}, not a regular file; Claude Code skips it"
            ));
        }
        Err(error) => return Err(error),
    };
    if document.is_empty() {
        return skip(
            "is empty: Claude Code reads it as no servers; mcpenv does not write to it until it holds JSON"
                .to_string(),
        );
    }
    if document.object_at(&["mcpServers"]).ok().flatten().is_none()
        && document.object_at(&["servers"]).ok().flatten().is_some()
    {
        notes.push(Note {
            path: file.to_path_buf(),
            message: "has `servers` but no `mcpServers`; Claude Code reads only `mcpServers`"
                .to_string(),
        });
    }
    servers_at(&document, file, &["mcpServers"]).map(Some)
}
