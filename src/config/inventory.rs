//! The merged view of every scope: each server with the scope and file it
//! comes from, how Claude Code's loader treats it, its approval, and which
//! definition wins. Every reader (`list`, `get`, `check`, `scan`, `probe`,
//! `export`, …) sees the configuration through this one loader.

pub mod loader;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::approval::{Approval, ApprovalPolicy};
use crate::config::error::ConfigError;
use crate::config::json_files::{
    ClaudeJson, check_project_file_size, load_claude_json, load_document_from,
};
use crate::config::locate::Locations;
use crate::config::managed_policy::{Block, Policy};
use crate::config::model::{Field, ServerEntry};
use crate::config::scope::Scope;
use crate::mechanics::document::JsonDocument;
use crate::mechanics::fsx::{self, Reads};

pub use loader::Loading;

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
    /// How Claude Code's loader treats the entry.
    pub loading: Loading,
    /// Whether the name is in this project's `disabledMcpServers` in
    /// `~/.claude.json` (what the `/mcp` toggle writes).
    pub disabled: bool,
    /// What keeps it out by the managed policy, if anything.
    pub blocked: Option<Block>,
}

impl Sourced {
    /// Whether Claude Code lets this definition take a name from a lower
    /// scope: entries it does not load, and pending and rejected project
    /// servers, do not.
    fn can_shadow(&self) -> bool {
        self.loading.is_loaded()
            && self.blocked.is_none()
            && self
                .approval
                .is_none_or(|approval| approval == Approval::Approved)
    }

    /// Claude Code's words for why it does not load this entry, if it does
    /// not.
    pub fn reason(&self) -> Option<String> {
        self.loading
            .reason(&self.name)
            .or_else(|| self.blocked.as_ref().map(Block::message))
    }
}

/// What Claude Code makes of one definition, from the most to the least
/// decisive: not loaded at all (reserved, skipped), loaded but losing its
/// name to another scope (shadowed), not approved (pending, rejected),
/// turned off for this project (disabled), or in use (active).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Loaded and started (once connected).
    Active,
    /// Another scope's definition of the name wins.
    Shadowed,
    /// A project server Claude Code asks about before starting it.
    Pending,
    /// A project server rejected in Claude Code's settings: hidden.
    Rejected,
    /// Turned off for this project (`disabledMcpServers`): listed, never
    /// started.
    Disabled,
    /// Skipped by Claude Code's loader (invalid entry, unknown or `sdk`
    /// type): never listed, never started.
    Skipped,
    /// A name Claude Code reserves: never loaded.
    Reserved,
    /// Kept out by the managed policy (`deniedMcpServers`,
    /// `allowedMcpServers`, an exclusive `managed-mcp.json`): never listed,
    /// never started.
    Blocked,
}

impl Status {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Shadowed => "shadowed",
            Self::Pending => "pending",
            Self::Rejected => "rejected",
            Self::Disabled => "disabled",
            Self::Skipped => "skipped",
            Self::Reserved => "reserved",
            Self::Blocked => "blocked",
        }
    }

    /// Whether Claude Code does not load the definition at all.
    pub fn not_loaded(self) -> bool {
        matches!(self, Self::Skipped | Self::Reserved | Self::Blocked)
    }

    /// Whether `check` counts the server as in effect and checks its
    /// needs: a pending one counts, since a teammate who just cloned has
    /// approved nothing; a rejected or disabled one is never started.
    pub fn counted(self) -> bool {
        !matches!(self, Self::Rejected | Self::Disabled)
    }

    /// Whether what it references is checked.
    pub fn checked(self) -> bool {
        matches!(self, Self::Active | Self::Shadowed | Self::Pending)
    }
}

/// Something about the configuration worth telling, that is not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The file concerned.
    pub path: PathBuf,
    /// What to know about it.
    pub message: String,
    /// The server it is about, if one.
    pub server: Option<String>,
}

/// A file (or the part of one holding a scope) that Claude Code does not
/// load at all.
#[derive(Debug)]
pub struct Unloaded {
    /// The file.
    pub path: PathBuf,
    /// The scopes it would have provided.
    pub scopes: Vec<Scope>,
    /// Why it is not loaded.
    pub problem: FileProblem,
}

/// Why a whole file is not loaded.
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    /// It cannot be read, does not parse, or a value on the way to its
    /// servers has the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A project file without an `mcpServers` object: Claude Code reports
    /// it as an error and loads none of it.
    #[error("{}", no_mcp_servers_message(path, top_level, *servers_key))]
    NoMcpServers {
        /// The file.
        path: PathBuf,
        /// Top-level members that look like server entries.
        top_level: Vec<String>,
        /// Whether it has VS Code's `servers` key instead.
        servers_key: bool,
    },
}

fn no_mcp_servers_message(path: &Path, top_level: &[String], servers_key: bool) -> String {
    let path = path.display();
    if servers_key {
        format!("`{path}` has `servers` but no `mcpServers`: Claude Code loads none of its servers")
    } else if top_level.is_empty() {
        format!("`{path}` has no `mcpServers` object: Claude Code reports it as an error")
    } else {
        let names: Vec<String> = top_level.iter().map(|name| format!("`{name}`")).collect();
        format!(
            "`{path}` lists servers at the top level ({}) without `mcpServers`: Claude Code loads none of them",
            names.join(", ")
        )
    }
}

impl FileProblem {
    /// What Claude Code 2.1.332 reports for the file in `claude mcp list`,
    /// when that is known.
    pub fn claude_says(&self) -> Option<String> {
        match self {
            Self::Config(ConfigError::Syntax { line, column, .. }) => Some(format!(
                "MCP config is not a valid JSON (line {line}, column {column})"
            )),
            Self::NoMcpServers {
                servers_key: true, ..
            } => Some(
                "mcpServers: Missing \"mcpServers\" — found \"servers\" instead. Claude Code reads MCP servers from the \"mcpServers\" key."
                    .to_string(),
            ),
            Self::NoMcpServers { .. } => {
                Some("mcpServers: Invalid input: expected record, received undefined".to_string())
            }
            Self::Config(_) => None,
        }
    }

    /// The line and column of a syntax error.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            Self::Config(ConfigError::Syntax { line, column, .. }) => Some((*line, *column)),
            _ => None,
        }
    }
}

/// Every server of every scope for one working directory.
#[derive(Debug)]
pub struct Inventory {
    /// Definitions by precedence: local, project (nearest file first), user;
    /// file order within a file. Entries Claude Code skips are included,
    /// marked by their [`Sourced::loading`].
    pub entries: Vec<Sourced>,
    /// Things Claude Code would skip or warn about.
    pub notes: Vec<Note>,
    /// Files Claude Code does not load at all; every other file is read.
    pub unloaded: Vec<Unloaded>,
    /// The managed policy in force (empty when the managed folder says
    /// nothing or its settings do not parse).
    pub policy: Policy,
}

impl Inventory {
    /// Reads every scope. A file that cannot be read or does not parse is
    /// an error: nothing is guessed about a broken file. A project file
    /// without `mcpServers` becomes a note.
    pub fn load(locations: &Locations) -> Result<Self, ConfigError> {
        Self::load_from(locations, &fsx::Disk)
    }

    /// [`Inventory::load`], the configs read through `reads` (an edit
    /// session, whose dry run shows its own earlier writes).
    pub fn load_from(locations: &Locations, reads: &dyn Reads) -> Result<Self, ConfigError> {
        let mut inventory = Self::load_all_from(locations, reads);
        let mut unloaded = std::mem::take(&mut inventory.unloaded).into_iter();
        for file in unloaded.by_ref() {
            match file.problem {
                FileProblem::Config(error) => return Err(error),
                problem @ FileProblem::NoMcpServers { .. } => inventory.notes.push(Note {
                    message: problem.to_string(),
                    path: file.path,
                    server: None,
                }),
            }
        }
        Ok(inventory)
    }

    /// Reads every scope as Claude Code does: a file it cannot load is
    /// listed in [`Inventory::unloaded`], and every other file is still
    /// read.
    pub fn load_all(locations: &Locations) -> Self {
        Self::load_all_from(locations, &fsx::Disk)
    }

    /// [`Inventory::load_all`], the configs read through `reads`.
    pub fn load_all_from(locations: &Locations, reads: &dyn Reads) -> Self {
        Self::load_all_with(locations, reads, None)
    }

    /// [`Inventory::load_all_from`], with `~/.claude.json` as `given`, when
    /// it was read and parsed already (by a writer of this run): it is not
    /// read again. An empty `given` is a file that did not exist.
    pub fn load_all_with(
        locations: &Locations,
        reads: &dyn Reads,
        given: Option<&JsonDocument>,
    ) -> Self {
        let mut notes = Vec::new();
        let mut unloaded = Vec::new();
        let loaded;
        let claude: Option<&JsonDocument> = if let Some(given) = given {
            (!given.is_empty()).then_some(given)
        } else {
            loaded = Self::read_claude_json(locations, reads, &mut unloaded);
            loaded.as_ref().map(ClaudeJson::lookups)
        };
        let project_path = ["projects", locations.local_key.as_str()];

        let mut servers_of = |scope: Scope, object_path: &[&str]| {
            let document = claude?;
            match servers_at(document, &locations.claude_json, object_path) {
                Ok(servers) => Some(servers),
                Err(error) => {
                    unloaded.push(Unloaded {
                        path: locations.claude_json.clone(),
                        scopes: vec![scope],
                        problem: error.into(),
                    });
                    None
                }
            }
        };
        let local = servers_of(
            Scope::Local,
            &[project_path[0], project_path[1], "mcpServers"],
        )
        .unwrap_or_default();
        let user = servers_of(Scope::User, &["mcpServers"]).unwrap_or_default();
        let project_entry = claude.and_then(|document| {
            approval_keys(document, &locations.claude_json, &project_path)
                .map_err(|error| {
                    unloaded.push(Unloaded {
                        path: locations.claude_json.clone(),
                        scopes: vec![Scope::Local],
                        problem: error.into(),
                    });
                })
                .ok()
                .flatten()
        });
        let disabled = disabled_servers(project_entry.as_ref());
        // Claude Code 2.1.332 stops (exit 1) on managed settings that do
        // not parse: every scope is listed, and the file is an error.
        let mut broken_policy = None;
        let policy = Policy::load(reads, &locations.managed_dir).unwrap_or_else(|error| {
            broken_policy = Some(error.path().clone());
            unloaded.push(Unloaded {
                path: error.path().clone(),
                scopes: Scope::ALL.to_vec(),
                problem: error.into(),
            });
            Policy::default()
        });
        notes.extend(policy.notes.iter().map(|note| Note {
            path: note.file.clone(),
            message: note.message.clone(),
            server: None,
        }));
        let managed_policy = policy;
        let policy = ApprovalPolicy::load(locations, project_entry.as_ref());
        // A managed file that stops Claude Code is an error, not a skip.
        notes.extend(
            policy
                .problems
                .iter()
                .filter(|problem| broken_policy.as_ref() != Some(&problem.path))
                .map(|problem| Note {
                    path: problem.path.clone(),
                    message: format!("settings file {}; Claude Code skips it", problem.message),
                    server: None,
                }),
        );

        let mut entries = Vec::new();
        let mut add =
            |scope: Scope, file: &Path, servers: Vec<(String, Value)>, notes: &mut Vec<Note>| {
                for (name, value) in servers {
                    let loading = loader::classify(&name, &value);
                    let entry = ServerEntry::from_value(value);
                    if let Some(reason) = loading.reason(&name) {
                        let message = match &loading {
                            Loading::Skipped(_) => format!("Claude Code skips `{name}`: {reason}"),
                            _ => reason,
                        };
                        notes.push(Note {
                            path: file.to_path_buf(),
                            message,
                            server: Some(name.clone()),
                        });
                    } else {
                        notes.extend(entry_notes(file, &name, &entry));
                    }
                    let approval = (scope == Scope::Project).then(|| policy.approval(&name));
                    entries.push(Sourced {
                        blocked: managed_policy.judge(&name, &entry, false),
                        disabled: disabled.contains(&name),
                        name,
                        scope,
                        file: file.to_path_buf(),
                        entry,
                        approval,
                        loading,
                    });
                }
            };
        add(Scope::Local, &locations.claude_json, local, &mut notes);
        for file in locations.project_files().iter().rev() {
            match read_project_file(reads, file, &mut notes) {
                Ok(Some(servers)) => add(Scope::Project, file, servers, &mut notes),
                Ok(None) => {}
                Err(problem) => unloaded.push(Unloaded {
                    path: file.clone(),
                    scopes: vec![Scope::Project],
                    problem,
                }),
            }
        }
        add(Scope::User, &locations.claude_json, user, &mut notes);
        Self {
            entries,
            notes,
            unloaded,
            policy: managed_policy,
        }
    }

    /// `~/.claude.json` read and parsed, or why not (in `unloaded`).
    fn read_claude_json(
        locations: &Locations,
        reads: &dyn Reads,
        unloaded: &mut Vec<Unloaded>,
    ) -> Option<ClaudeJson> {
        let claude_scopes = vec![Scope::Local, Scope::User];
        match load_claude_json(reads, locations) {
            // Claude Code reports an empty `~/.claude.json` as corrupted and
            // loads nothing; reading it as `{}` would tell a different story.
            Ok(Some(document)) if document.is_empty() => {
                unloaded.push(Unloaded {
                    path: locations.claude_json.clone(),
                    scopes: claude_scopes,
                    problem: ConfigError::Empty {
                        path: locations.claude_json.clone(),
                        claude_refuses: true,
                    }
                    .into(),
                });
                None
            }
            Ok(document) => document,
            Err(error) => {
                unloaded.push(Unloaded {
                    path: locations.claude_json.clone(),
                    scopes: claude_scopes,
                    problem: error.into(),
                });
                None
            }
        }
    }

    /// The definition Claude Code uses for `name`, if any: the first one
    /// that may take the name (loaded, and approved when from the
    /// project), else the first one it loads at all (pending or rejected),
    /// else the first one.
    pub fn winner(&self, name: &str) -> Option<&Sourced> {
        let candidates = || self.entries.iter().filter(|entry| entry.name == name);
        candidates()
            .find(|entry| entry.can_shadow())
            .or_else(|| candidates().find(|entry| entry.loading.is_loaded()))
            .or_else(|| candidates().next())
    }

    /// What Claude Code makes of `entry`.
    pub fn status(&self, entry: &Sourced) -> Status {
        match entry.loading {
            Loading::Reserved => return Status::Reserved,
            Loading::Skipped(_) => return Status::Skipped,
            Loading::Loaded => {}
        }
        if entry.blocked.is_some() {
            return Status::Blocked;
        }
        if self.shadowed_by(entry).is_some() {
            return Status::Shadowed;
        }
        match entry.approval {
            Some(Approval::Rejected) => Status::Rejected,
            Some(Approval::Pending) => Status::Pending,
            _ if entry.disabled => Status::Disabled,
            _ => Status::Active,
        }
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

/// Notes about an entry Claude Code loads: an empty `url`, and
/// placeholder forms it never expands.
fn entry_notes(path: &Path, name: &str, entry: &ServerEntry) -> Vec<Note> {
    let mut notes = Vec::new();
    if entry.transport().is_remote() && entry.url().is_some_and(|url| url.trim().is_empty()) {
        notes.push(Note {
            path: path.to_path_buf(),
            message: format!(
                "`{name}` has an empty `url`: Claude Code lists it as not configured and never connects"
            ),
            server: Some(name.to_string()),
        });
    }
    notes.extend(placeholder_notes(path, name, entry));
    notes
}

/// Placeholder forms in `entry` that Claude Code never expands, with the
/// fix. The script argument of an interpreter (`sh -c SCRIPT`, `node -e
/// SCRIPT`, …) is the interpreter's own code: its `$VAR` forms are the
/// interpreter's to expand, so they are not reported.
pub fn placeholder_notes(path: &Path, name: &str, entry: &ServerEntry) -> Vec<Note> {
    let fields = entry.expandable_fields_where(crate::config::expansion::may_hold_forms);
    placeholder_notes_in(path, name, entry, &fields)
}

/// [`placeholder_notes`] given `entry`'s expandable fields that may hold
/// a form ([`ServerEntry::expandable_fields_where`]
/// [`may_hold_forms`](crate::config::expansion::may_hold_forms)), listed
/// once by a scan for these notes and the redactor's defaults.
pub fn placeholder_notes_in(
    path: &Path,
    name: &str,
    entry: &ServerEntry,
    fields: &[(Field, &str)],
) -> Vec<Note> {
    if fields.is_empty() {
        return Vec::new();
    }
    let launch = (!entry.transport().is_remote()).then(|| {
        let args: Vec<&str> = entry
            .fields()
            .get("args")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .map(|arg| arg.as_str().unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        (entry.command().unwrap_or_default(), args)
    });
    placeholder_notes_launched(path, name, launch, fields)
}

/// [`placeholder_notes_in`] of an entry given as what starts it: for a
/// stdio entry, its `command` (empty when it has none) and its `args` (an
/// item that is no string as empty); `None` for a remote one. A scan
/// reads entries its own way ([`crate::secrets::node`]) and gives these.
pub fn placeholder_notes_launched(
    path: &Path,
    name: &str,
    launch: Option<(&str, Vec<&str>)>,
    fields: &[(Field, &str)],
) -> Vec<Note> {
    if fields.is_empty() {
        return Vec::new();
    }
    let scripts = match launch {
        Some((command, args)) => crate::config::expansion::script_arguments(command, &args),
        None => Vec::new(),
    };
    fields
        .iter()
        .filter(|(field, _)| !matches!(field, Field::Arg(index) if scripts.contains(index)))
        .flat_map(|(field, value)| {
            crate::config::expansion::unsupported_forms(value)
                .into_iter()
                .map(move |form| Note {
                    path: path.to_path_buf(),
                    message: format!(
                        "`{name}` {field}: Claude Code never expands `{}`; {}",
                        form.found, form.fix
                    ),
                    server: Some(name.to_string()),
                })
        })
        .collect()
}

/// The servers of the object at `object_path` as written, duplicates
/// resolved as `JSON.parse` does (first position, last value).
pub fn servers_at(
    document: &JsonDocument,
    path: &Path,
    object_path: &[&str],
) -> Result<Vec<(String, Value)>, ConfigError> {
    let object = document
        .object_at(object_path)
        .map_err(|shape| ConfigError::shape(path, &shape))?;
    let Some(object) = object else {
        return Ok(Vec::new());
    };
    let mut servers: Vec<(String, Value)> = Vec::new();
    for member in document.members(&object).iter() {
        let name = document.key(member).into_owned();
        let value = document.try_value_at(&member.value_span).map_err(|_| {
            let mut pointer_path = object_path.to_vec();
            pointer_path.push(&name);
            ConfigError::TooDeep {
                path: path.to_path_buf(),
                pointer: crate::mechanics::document::pointer(&pointer_path),
                limit: crate::mechanics::document::MAX_DEPTH,
            }
        })?;
        match servers.iter_mut().find(|(existing, _)| *existing == name) {
            Some(slot) => slot.1 = value,
            None => servers.push((name, value)),
        }
    }
    Ok(servers)
}

/// The members of this project's `~/.claude.json` entry that decide
/// approvals and what is disabled, without parsing the rest of it (its
/// `history` can be megabytes).
pub(crate) fn approval_keys(
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
                | "disabledMcpServers"
        ) {
            keys.insert(key.into_owned(), document.value_at(&member.value_span));
        }
    }
    Ok(Some(Value::Object(keys)))
}

/// The names in the project entry's `disabledMcpServers`, which Claude Code
/// compares as written (no normalisation, case-sensitive).
fn disabled_servers(project_entry: Option<&Value>) -> Vec<String> {
    crate::config::model::string_list(
        project_entry.and_then(|entry| entry.get("disabledMcpServers")),
    )
}

/// Reads one project file as Claude Code does: a file that is not regular
/// (a FIFO, a directory, …) or is over 2 MiB is skipped with a note and never
/// opened; an empty one has no servers, with a note (mcpenv will not write
/// to it). A file that does not parse, or has no `mcpServers` object, is a
/// [`FileProblem`]: Claude Code loads none of it.
fn read_project_file(
    reads: &dyn Reads,
    file: &Path,
    notes: &mut Vec<Note>,
) -> Result<Option<Vec<(String, Value)>>, FileProblem> {
    let mut skip = |message: String| {
        notes.push(Note {
            path: file.to_path_buf(),
            message,
            server: None,
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
    let document = match load_document_from(reads, file, &[]) {
        Ok(Some(document)) => document,
        Ok(None) => return Ok(None),
        // Swapped for something else since the look above.
        Err(ConfigError::NotRegular { kind, .. }) => {
            return skip(format!(
                "is {kind}, not a regular file; Claude Code skips it"
            ));
        }
        Err(error) => return Err(error.into()),
    };
    if document.is_empty() {
        return skip(
            "is empty: Claude Code reads it as no servers; mcpenv does not write to it until it holds JSON"
                .to_string(),
        );
    }
    if document
        .object_at(&["mcpServers"])
        .map_err(|shape| ConfigError::shape(file, &shape))?
        .is_none()
    {
        return Err(no_mcp_servers(file, &document));
    }
    Ok(Some(servers_at(&document, file, &["mcpServers"])?))
}

/// The problem of a project file whose root object has no `mcpServers`:
/// VS Code's `servers` key instead, servers at the top level, or nothing.
fn no_mcp_servers(file: &Path, document: &JsonDocument) -> FileProblem {
    let servers_key = document.object_at(&["servers"]).ok().flatten().is_some();
    let top_level = servers_at(document, file, &[])
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, value)| {
            ["command", "url", "type"]
                .iter()
                .any(|key| value.get(key).is_some())
        })
        .map(|(name, _)| name)
        .collect();
    FileProblem::NoMcpServers {
        path: file.to_path_buf(),
        top_level,
        servers_key,
    }
}
