//! Adding and removing servers: each edit is one splice of one member, made
//! under the locks, written atomically, and redone if another program
//! changed the file while we were editing it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::document::{JsonDocument, Splice, Step};
use crate::error::{ConfigError, StoreError};
use crate::fsx::{self, ClaudeLock, EditLock, NewMode};
use crate::layered::{CLAUDE_JSON_EXPAND, document_error, parse_for_edit};
use crate::locate::Locations;
use crate::model::Field;
use crate::scope::Scope;

/// Where a scope's servers live: a file and the path of the object in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The scope.
    pub scope: Scope,
    /// The file written.
    pub path: PathBuf,
    /// Member names from the root to the `mcpServers` object.
    pub object_path: Vec<String>,
}

impl Target {
    /// The file and object that writes to `scope` go to.
    pub fn for_scope(locations: &Locations, scope: Scope) -> Self {
        let (path, object_path) = match scope {
            Scope::Local => (
                locations.claude_json.clone(),
                vec![
                    "projects".to_string(),
                    locations.local_key.clone(),
                    "mcpServers".to_string(),
                ],
            ),
            Scope::Project => (
                locations.project_file_for_write(),
                vec!["mcpServers".to_string()],
            ),
            Scope::User => (
                locations.claude_json.clone(),
                vec!["mcpServers".to_string()],
            ),
        };
        Self {
            scope,
            path,
            object_path,
        }
    }

    fn object_path(&self) -> Vec<&str> {
        self.object_path.iter().map(String::as_str).collect()
    }

    fn is_claude_json(&self) -> bool {
        self.scope != Scope::Project
    }
}

/// What to do when the name already exists in the target scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse, naming the scope and file.
    Fail,
    /// Replace the entry in place.
    Replace,
}

/// The result of a successful write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written (as configured; symlinks were written through).
    pub path: PathBuf,
    /// Whether the file did not exist before.
    pub created: bool,
    /// Whether an existing entry was replaced.
    pub replaced: bool,
    /// Whether anything was written (an edit may find nothing to change).
    pub changed: bool,
}

/// Adds server `name` with `entry` to `target`.
pub fn add_server(
    locations: &Locations,
    target: &Target,
    name: &str,
    entry: &Value,
    if_exists: IfExists,
) -> Result<Written, StoreError> {
    let object_path = target.object_path();
    let mut replaced = false;
    let written = edit(locations, target, |document| {
        let existing = document
            .object_at(&object_path)
            .map_err(|shape| shape_error(&target.path, &shape))?
            .and_then(|object| document.find_member(&object, name));
        if existing.is_some() {
            if if_exists == IfExists::Fail {
                return Err(StoreError::AlreadyExists {
                    name: name.to_string(),
                    scope: target.scope,
                    path: target.path.clone(),
                });
            }
            replaced = true;
        }
        document
            .plan_set(&object_path, name, entry, &claude_skeleton)
            .map(|splice| vec![splice])
            .map_err(|shape| shape_error(&target.path, &shape))
    })?;
    Ok(Written {
        replaced,
        ..written
    })
}

/// Removes server `name` from `target`; the containers stay, even empty.
pub fn remove_server(
    locations: &Locations,
    target: &Target,
    name: &str,
) -> Result<Written, StoreError> {
    let object_path = target.object_path();
    edit(locations, target, |document| {
        document
            .plan_remove(&object_path, name)
            .map_err(|shape| shape_error(&target.path, &shape))?
            .map(|splice| vec![splice])
            .ok_or_else(|| StoreError::NotFound {
                name: name.to_string(),
                scope: target.scope,
                path: target.path.clone(),
            })
    })
}

/// Removes server `name` from the one scope that defines it here (its own
/// write target in each scope), reading `~/.claude.json` once, under its
/// locks. Several scopes: [`StoreError::Ambiguous`]; none:
/// [`StoreError::NotFoundAnywhere`]; nothing is written in either case.
pub fn remove_server_anywhere(
    locations: &Locations,
    name: &str,
) -> Result<(Target, Written), StoreError> {
    let project = Target::for_scope(locations, Scope::Project);
    let in_project = match crate::layered::load_document(&project.path, &[])? {
        Some(document) => has_member(&document, &project, name)?,
        None => false,
    };
    let claude = Target::for_scope(locations, Scope::Local);
    let user = Target::for_scope(locations, Scope::User);
    let mut chosen = None;
    let outcome = edit(locations, &claude, |document| {
        let mut scopes = Vec::new();
        if has_member(document, &claude, name)? {
            scopes.push(Scope::Local);
        }
        if in_project {
            scopes.push(Scope::Project);
        }
        if has_member(document, &user, name)? {
            scopes.push(Scope::User);
        }
        match scopes.as_slice() {
            [] => Err(Anywhere::Store(StoreError::NotFoundAnywhere {
                name: name.to_string(),
            })),
            [Scope::Project] => Err(Anywhere::InProject),
            [scope] => {
                let target = if *scope == Scope::Local {
                    &claude
                } else {
                    &user
                };
                chosen = Some(target.clone());
                let splice = document
                    .plan_remove(&target.object_path(), name)
                    .map_err(|shape| Anywhere::Store(shape_error(&target.path, &shape)))?;
                Ok(vec![splice.expect("the member was just found")])
            }
            several => Err(Anywhere::Store(StoreError::Ambiguous {
                name: name.to_string(),
                scopes: several.to_vec(),
            })),
        }
    });
    match outcome {
        Ok(written) => Ok((chosen.expect("set when a splice was planned"), written)),
        Err(Anywhere::InProject) => {
            remove_server(locations, &project, name).map(|written| (project, written))
        }
        Err(Anywhere::Store(error)) => Err(error),
    }
}

/// Why [`remove_server_anywhere`]'s first edit wrote nothing.
enum Anywhere {
    Store(StoreError),
    /// Only the project file has it: edit that one instead.
    InProject,
}

impl From<ConfigError> for Anywhere {
    fn from(error: ConfigError) -> Self {
        Self::Store(error.into())
    }
}

impl From<StoreError> for Anywhere {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

fn has_member(document: &JsonDocument, target: &Target, name: &str) -> Result<bool, StoreError> {
    let object = document
        .object_at(&target.object_path())
        .map_err(|shape| shape_error(&target.path, &shape))?;
    Ok(object.is_some_and(|object| document.find_member(&object, name).is_some()))
}

/// A change of one string of one server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// The server.
    pub server: String,
    /// The string to change.
    pub field: Field,
    /// What it must hold now; if not, the file changed since it was read
    /// and nothing is written.
    pub old: String,
    /// What it becomes.
    pub new: String,
}

/// Replaces strings of server entries in `target`, each only if it still
/// holds its expected old value; every other byte of the file is kept.
pub fn replace_fields(
    locations: &Locations,
    target: &Target,
    changes: &[FieldChange],
) -> Result<Written, StoreError> {
    let object_path = target.object_path();
    edit(locations, target, |document| {
        let stale = || StoreError::Stale {
            path: target.path.clone(),
        };
        let object = document
            .object_at(&object_path)
            .map_err(|shape| shape_error(&target.path, &shape))?
            .ok_or_else(stale)?;
        let mut splices = Vec::new();
        for change in changes {
            let entry = document
                .find_member(&object, &change.server)
                .ok_or_else(stale)?;
            let steps = field_steps(&change.field);
            let span = document
                .value_at_path(&entry.value_span, &steps)
                .ok_or_else(stale)?;
            if document.value_at(&span).as_str() != Some(change.old.as_str()) {
                return Err(stale());
            }
            splices.push(document.plan_replace(&span, &Value::String(change.new.clone())));
        }
        Ok(splices)
    })
}

/// Where a field's string lives inside an entry.
fn field_steps(field: &Field) -> Vec<Step<'_>> {
    match field {
        Field::Command => vec![Step::Key("command")],
        Field::Arg(index) => vec![Step::Key("args"), Step::Index(*index)],
        Field::Env(key) => vec![Step::Key("env"), Step::Key(key)],
        Field::Url | Field::UrlPassword | Field::UrlQuery(_) => vec![Step::Key("url")],
        Field::Header(name) => vec![Step::Key("headers"), Step::Key(name)],
    }
}

/// What a new project entry in `~/.claude.json` looks like when Claude Code
/// creates it; other objects start empty.
fn claude_skeleton(path: &[&str]) -> Map<String, Value> {
    if path.len() != 2 || path[0] != "projects" {
        return Map::new();
    }
    let template = json!({
        "allowedTools": [],
        "mcpContextUris": [],
        "mcpServers": {},
        "enabledMcpjsonServers": [],
        "disabledMcpjsonServers": [],
        "hasTrustDialogAccepted": false,
        "projectOnboardingSeenCount": 0,
        "hasClaudeMdExternalIncludesApproved": false,
        "hasClaudeMdExternalIncludesWarningShown": false,
    });
    match template {
        Value::Object(map) => map,
        _ => unreachable!("the template is an object literal"),
    }
}

fn shape_error(path: &Path, shape: &crate::document::ShapeError) -> StoreError {
    ConfigError::shape(path, shape).into()
}

/// The file changed between our read and our rename.
struct Changed;

/// Read, plan, write, verify: the one way mcpenv changes a config file.
fn edit<E: From<ConfigError>>(
    locations: &Locations,
    target: &Target,
    mut plan: impl FnMut(&JsonDocument) -> Result<Vec<Splice>, E>,
) -> Result<Written, E> {
    let path = &target.path;
    let resolved = fsx::resolve_symlinks(path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let write_error = |source| ConfigError::Write {
        path: path.clone(),
        source,
    };
    if let Some(parent) = resolved.parent().filter(|_| target.is_claude_json()) {
        fs_err::create_dir_all(parent).map_err(write_error)?;
    }
    let _edit_lock = EditLock::acquire(&locations.state_dir, &resolved, fsx::LOCK_TIMEOUT)
        .map_err(|error| ConfigError::lock(path, error))?;
    let _claude_lock = if target.is_claude_json() {
        Some(ClaudeLock::acquire(&resolved).map_err(|error| ConfigError::lock(path, error))?)
    } else {
        None
    };
    let new_mode = if target.is_claude_json() {
        NewMode::Exact(0o600)
    } else {
        NewMode::Umasked(0o644)
    };
    for _ in 0..fsx::EDIT_ATTEMPTS {
        let original =
            fsx::read_if_exists(&resolved).map_err(|source| ConfigError::read(path, source))?;
        let existed = original.is_some();
        let expand = if target.is_claude_json() {
            CLAUDE_JSON_EXPAND
        } else {
            &[]
        };
        let document = parse_for_edit(path, original, expand)?;
        let splices = plan(&document)?;
        if splices.is_empty() {
            return Ok(Written {
                path: path.clone(),
                created: false,
                replaced: false,
                changed: false,
            });
        }
        document
            .check(&splices)
            .map_err(|error| document_error(path, error))?;
        let pieces: Vec<&[u8]> = document
            .spliced(&splices)
            .into_iter()
            .map(str::as_bytes)
            .collect();
        let before = existed.then(|| document.text());
        let verified = fsx::write_atomic(&resolved, &pieces, new_mode, || {
            match fsx::unchanged(&resolved, before) {
                Ok(true) => Ok(()),
                _ => Err(Changed),
            }
        })
        .map_err(write_error)?;
        if verified.is_ok() {
            return Ok(Written {
                path: path.clone(),
                created: !existed,
                replaced: false,
                changed: true,
            });
        }
    }
    Err(ConfigError::Contended { path: path.clone() }.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::Environment;

    fn locations(root: &Path) -> Locations {
        std::fs::create_dir_all(root.join("project/.git")).unwrap();
        Locations::discover(&Environment {
            home: root.join("home"),
            claude_config_dir: None,
            working_dir: root.join("project"),
            managed_dir: root.join("managed"),
            state_dir: root.join("state"),
        })
        .unwrap()
    }

    #[test]
    fn a_change_made_during_the_edit_is_kept_and_the_edit_redone() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::User);
        std::fs::create_dir_all(target.path.parent().unwrap()).unwrap();
        std::fs::write(&target.path, "{\n  \"numStartups\": 1\n}").unwrap();

        // Another program (a running Claude Code that ignores the lock)
        // rewrites the file after our read, before our rename.
        let mut attempts = 0;
        let written = edit(&locations, &target, |document| {
            attempts += 1;
            if attempts == 1 {
                std::fs::write(&target.path, "{\n  \"numStartups\": 2\n}").unwrap();
            }
            document
                .plan_set(
                    &["mcpServers"],
                    "x",
                    &json!({"command": "node"}),
                    &claude_skeleton,
                )
                .map(|splice| vec![splice])
                .map_err(|shape| shape_error(&target.path, &shape))
        })
        .unwrap();
        assert_eq!(attempts, 2);
        assert!(!written.created);
        let text = std::fs::read_to_string(&target.path).unwrap();
        assert_eq!(
            text,
            "{\n  \"numStartups\": 2,\n  \"mcpServers\": {\n    \"x\": {\n      \"command\": \"node\"\n    }\n  }\n}"
        );
    }

    #[test]
    fn a_file_that_never_settles_is_left_alone() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::Project);
        std::fs::write(&target.path, "{}").unwrap();
        let mut attempts = 0;
        let error = edit(&locations, &target, |document| {
            attempts += 1;
            std::fs::write(&target.path, format!("{{\"n\": {attempts}}}")).unwrap();
            document
                .plan_set(&["mcpServers"], "x", &json!(1), &claude_skeleton)
                .map(|splice| vec![splice])
                .map_err(|shape| shape_error(&target.path, &shape))
        })
        .unwrap_err();
        assert!(
            matches!(error, StoreError::Config(ConfigError::Contended { .. })),
            "{error}"
        );
        assert_eq!(attempts, fsx::EDIT_ATTEMPTS);
        assert_eq!(
            std::fs::read_to_string(&target.path).unwrap(),
            format!("{{\"n\": {}}}", fsx::EDIT_ATTEMPTS)
        );
    }
}
