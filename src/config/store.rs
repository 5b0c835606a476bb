//! Adding and removing servers: each edit changes only the members it is
//! about, is made under the locks, written atomically, redone if another
//! program changed the file while we were editing it, and checked once
//! more after the rename, so an edit another program threw away is
//! reported instead of claimed. Commands that write several files keep
//! their [`Progress`], so a failure names what was already written.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::error::{ConfigError, StoreError};
use crate::config::json_files::sparse::{self, Sparse};
use crate::config::json_files::{
    CLAUDE_JSON_EXPAND, Cached, check_project_file_size, document_error, load_document,
    parse_for_edit,
};
use crate::config::locate::Locations;
use crate::config::model::Field;
use crate::config::scope::Scope;
use crate::mechanics::diff::FileChange;
use crate::mechanics::document::{JsonDocument, Splice, Step};
use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::spliced::Piece;
use crate::mechanics::fsx::{self, ClaudeLock, EditLock, LockError, NewMode, Reads};
use crate::mechanics::journal::{self, Digests, Owner};
use crate::mechanics::layout_cache::{self, Fingerprint};

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
    /// Leave an entry that is already exactly this one alone (nothing is
    /// written), refuse a different one: how a second run finishes an
    /// interrupted one.
    KeepSame,
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

/// How far a command that writes several files got: the files it still
/// means to write, in order, and those it wrote. The one place such a
/// command records its writes, so a failure can say exactly what happened.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    planned: Vec<PathBuf>,
    written: Vec<PathBuf>,
}

impl Progress {
    /// Adds `path` to the files still to be written (once).
    pub fn plan(&mut self, path: impl Into<PathBuf>) {
        let path = path.into();
        if !self.planned.contains(&path) {
            self.planned.push(path);
        }
    }

    /// Records that the step for `path` finished; `changed` when it wrote.
    pub fn record(&mut self, path: &Path, changed: bool) {
        if let Some(index) = self.planned.iter().position(|planned| planned == path) {
            self.planned.remove(index);
        }
        if changed && !self.written.iter().any(|written| written == path) {
            self.written.push(path.to_path_buf());
        }
    }

    /// The files written so far, in order.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }

    /// The planned files not finished yet, in order: after a failure, the
    /// file that failed first, then those never reached.
    pub fn left(&self) -> &[PathBuf] {
        &self.planned
    }

    /// The files written, in order.
    pub fn into_written(self) -> Vec<PathBuf> {
        self.written
    }

    /// The error of a step that failed, with what was already written.
    pub fn interrupted(&self, source: Box<dyn std::error::Error + Send + Sync>) -> Interrupted {
        Interrupted {
            written: self.written.clone(),
            left: self.planned.clone(),
            source,
        }
    }
}

/// A command that writes several files stopped part way: the files it had
/// written, and those it left as they were.
#[derive(Debug, thiserror::Error)]
#[error("{}", interrupted_message(written, left))]
pub struct Interrupted {
    /// The files written before the failure, in order.
    pub written: Vec<PathBuf>,
    /// The files left as they were: the one that failed, then the rest.
    pub left: Vec<PathBuf>,
    /// Why the step failed.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

fn interrupted_message(written: &[PathBuf], left: &[PathBuf]) -> String {
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|path| format!("`{}`", path.display()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut message = format!("stopped part way: already wrote {}", list(written));
    match left.len() {
        0 => {}
        1 => message.push_str(&format!("; left {} as it was", list(left))),
        _ => message.push_str(&format!("; left {} as they were", list(left))),
    }
    message
}

/// One server for [`add_servers`].
#[derive(Debug, Clone, Copy)]
pub struct NewServer<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its entry.
    pub entry: &'a Value,
    /// What to do when the name is taken.
    pub if_exists: IfExists,
}

/// Adds server `name` with `entry` to `target`.
pub fn add_server(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    name: &str,
    entry: &Value,
    if_exists: IfExists,
) -> Result<Written, StoreError> {
    add_servers(
        locations,
        edit,
        target,
        &[NewServer {
            name,
            entry,
            if_exists,
        }],
    )
}

/// Adds every server of `servers` to `target` in one write: all of them or
/// none. With [`IfExists::KeepSame`], servers already there exactly as
/// given are left alone, and nothing is written if that is all of them.
pub fn add_servers(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    servers: &[NewServer<'_>],
) -> Result<Written, StoreError> {
    let mut replaced = false;
    let written = change_file(locations, edit, target, |document| {
        plan_add_servers(document, target, servers, &mut replaced)
    })?;
    Ok(Written {
        replaced,
        ..written
    })
}

/// The edit that adds `servers` to `document`; `replaced` says whether one
/// of them took the place of an entry of the same name.
fn plan_add_servers(
    document: &JsonDocument,
    target: &Target,
    servers: &[NewServer<'_>],
    replaced: &mut bool,
) -> Result<Plan, StoreError> {
    let object_path = target.object_path();
    *replaced = false;
    if !target.is_claude_json() && lists_servers_at_top_level(document) {
        return Err(StoreError::TopLevelServers {
            path: target.path.clone(),
        });
    }
    // One splice is written around the original text; a second one is
    // planned on the text with the first applied.
    let mut single: Option<Splice> = None;
    let mut applied: Option<JsonDocument> = None;
    for server in servers {
        if let Some(splice) = single.take() {
            applied = Some(apply(document, &splice, &target.path)?);
        }
        let current = applied.as_ref().unwrap_or(document);
        let existing = current
            .object_at(&object_path)
            .map_err(|shape| shape_error(&target.path, &shape))?
            .and_then(|object| current.find_member(&object, server.name));
        if let Some(member) = existing {
            let same = current.value_at(&member.value_span) == *server.entry;
            match server.if_exists {
                IfExists::KeepSame if same => continue,
                IfExists::Fail | IfExists::KeepSame => {
                    return Err(StoreError::AlreadyExists {
                        name: server.name.to_string(),
                        scope: target.scope,
                        path: target.path.clone(),
                    });
                }
                IfExists::Replace => *replaced = true,
            }
        }
        let splice = current
            .plan_set(&object_path, server.name, server.entry, &claude_skeleton)
            .map_err(|shape| shape_error(&target.path, &shape))?;
        match applied.take() {
            Some(current) => applied = Some(apply(&current, &splice, &target.path)?),
            None => single = Some(splice),
        }
    }
    let change = match (applied, single) {
        (Some(document), _) => Change::Whole(document),
        (None, Some(splice)) => Change::Splices(vec![splice]),
        (None, None) => Change::Nothing,
    };
    Ok(Plan {
        change,
        expect: servers
            .iter()
            .map(|server| Expect::Member {
                object_path: target.object_path.clone(),
                name: server.name.to_string(),
                value: server.entry.clone(),
            })
            .collect(),
    })
}

fn apply(
    document: &JsonDocument,
    splice: &Splice,
    path: &Path,
) -> Result<JsonDocument, StoreError> {
    document
        .apply(splice)
        .map_err(|error| document_error(path, error).into())
}

/// Removes server `name` from `target`; the containers stay, even empty.
pub fn remove_server(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    name: &str,
) -> Result<Written, StoreError> {
    change_file(locations, edit, target, |document| {
        plan_remove_server(document, target, name)
    })
}

fn plan_remove_server(
    document: &JsonDocument,
    target: &Target,
    name: &str,
) -> Result<Plan, StoreError> {
    let object_path = target.object_path();
    let splice = document
        .plan_remove(&object_path, name)
        .map_err(|shape| shape_error(&target.path, &shape))?
        .ok_or_else(|| StoreError::NotFound {
            name: name.to_string(),
            scope: target.scope,
            path: target.path.clone(),
        })?;
    Ok(Plan {
        change: Change::Splices(vec![splice]),
        expect: vec![Expect::NoMember {
            object_path: target.object_path.clone(),
            name: name.to_string(),
        }],
    })
}

/// Removes server `name` from the one scope that defines it here (its own
/// write target in each scope), reading `~/.claude.json` once, under its
/// locks. Several scopes: [`StoreError::Ambiguous`]; none:
/// [`StoreError::NotFoundAnywhere`]; nothing is written in either case.
pub fn remove_server_anywhere(
    locations: &Locations,
    edit: &Edit,
    name: &str,
) -> Result<(Target, Written), StoreError> {
    let project = Target::for_scope(locations, Scope::Project);
    let in_project = match crate::config::json_files::load_document(&project.path, &[])? {
        Some(document) => has_member(&document, &project, name)?,
        None => false,
    };
    let claude = Target::for_scope(locations, Scope::Local);
    let user = Target::for_scope(locations, Scope::User);
    let mut chosen = None;
    let outcome = change_file(locations, edit, &claude, |document| {
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
                Ok(Plan {
                    change: Change::Splices(vec![splice.expect("the member was just found")]),
                    expect: vec![Expect::NoMember {
                        object_path: target.object_path.clone(),
                        name: name.to_string(),
                    }],
                })
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
            remove_server(locations, edit, &project, name).map(|written| (project, written))
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

/// This project's entry in `~/.claude.json` (`projects[<key>]`), where
/// Claude Code keeps its local servers, trust and choices.
fn project_entry(locations: &Locations) -> Target {
    Target {
        scope: Scope::Local,
        path: locations.claude_json.clone(),
        object_path: vec!["projects".to_string(), locations.local_key.clone()],
    }
}

/// Removes each of `keys` from this project's entry in `~/.claude.json`
/// (`projects[<key>]`), keeping the entry and its other keys; nothing is
/// written when none is there.
pub fn remove_project_keys(
    locations: &Locations,
    edit: &Edit,
    keys: &[&str],
) -> Result<Written, StoreError> {
    let target = project_entry(locations);
    let object_path = target.object_path();
    change_file(locations, edit, &target, |document| {
        let mut edited: Option<JsonDocument> = None;
        for key in keys {
            let current = edited.as_ref().unwrap_or(document);
            let splice = current
                .plan_remove(&object_path, key)
                .map_err(|shape| shape_error(&target.path, &shape))?;
            if let Some(splice) = splice {
                edited = Some(apply(current, &splice, &target.path)?);
            }
        }
        Ok(Plan {
            change: edited.map_or(Change::Nothing, Change::Whole),
            expect: keys
                .iter()
                .map(|key| Expect::NoMember {
                    object_path: target.object_path.clone(),
                    name: (*key).to_string(),
                })
                .collect(),
        })
    })
}

/// Records in this project's entry of `~/.claude.json` that its trust
/// dialog was accepted (`hasTrustDialogAccepted: true`), as Claude Code does
/// when the user accepts it; the entry is created as Claude Code creates it.
pub fn trust_project(locations: &Locations, edit: &Edit) -> Result<Written, StoreError> {
    const KEY: &str = "hasTrustDialogAccepted";
    let target = project_entry(locations);
    let object_path = target.object_path();
    change_file(locations, edit, &target, |document| {
        let splice = document
            .plan_set(&object_path, KEY, &Value::Bool(true), &claude_skeleton)
            .map_err(|shape| shape_error(&target.path, &shape))?;
        Ok(Plan {
            change: Change::Splices(vec![splice]),
            expect: vec![Expect::Member {
                object_path: target.object_path.clone(),
                name: KEY.to_string(),
                value: Value::Bool(true),
            }],
        })
    })
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

/// Replaces strings of server entries, each only if it still holds its
/// expected old value; every other byte of the file is kept. Every target
/// of `changes` must be in the same file (local and user scope are both in
/// `~/.claude.json`): the file is written once.
pub fn replace_fields(
    locations: &Locations,
    edit: &Edit,
    changes: &[(Target, Vec<FieldChange>)],
) -> Result<Written, StoreError> {
    let Some((first, _)) = changes.first() else {
        return Ok(Written {
            path: PathBuf::new(),
            created: false,
            replaced: false,
            changed: false,
        });
    };
    debug_assert!(changes.iter().all(|(target, _)| target.path == first.path));
    change_file(locations, edit, first, |document| {
        let stale = || StoreError::Stale {
            path: first.path.clone(),
        };
        let mut splices = Vec::new();
        let mut expect = Vec::new();
        for (target, changes) in changes {
            let object = document
                .object_at(&target.object_path())
                .map_err(|shape| shape_error(&target.path, &shape))?
                .ok_or_else(stale)?;
            for change in changes {
                let entry = document
                    .find_member(&object, &change.server)
                    .ok_or_else(stale)?;
                let span = document
                    .value_at_path(&entry.value_span, &field_steps(&change.field))
                    .ok_or_else(stale)?;
                if document.value_at(&span).as_str() != Some(change.old.as_str()) {
                    return Err(stale());
                }
                splices.push(document.plan_replace(&span, &Value::String(change.new.clone())));
                expect.push(Expect::Field {
                    object_path: target.object_path.clone(),
                    change: change.clone(),
                });
            }
        }
        Ok(Plan {
            change: Change::Splices(splices),
            expect,
        })
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

/// Fails, before anything is written, when `target` is a file mcpenv will
/// not write: a `.mcp.json` larger than Claude Code reads. Commands that
/// write `.env` before the config call it first, so a refusal leaves
/// every file as it was.
pub fn preflight(target: &Target) -> Result<(), StoreError> {
    if target.is_claude_json() {
        return Ok(());
    }
    let resolved = fsx::resolve_symlinks(&target.path)
        .map_err(|source| ConfigError::read(&target.path, source))?;
    check_size(&target.path, &resolved)?;
    // A file that cannot be read or parsed is reported by the edit itself.
    if let Ok(Some(document)) = crate::config::json_files::load_document(&resolved, &[])
        && lists_servers_at_top_level(&document)
    {
        return Err(StoreError::TopLevelServers {
            path: target.path.clone(),
        });
    }
    Ok(())
}

/// Whether a `.mcp.json` has servers at its top level and no `mcpServers`
/// (the shape of a plugin's `.mcp.json`): Claude Code 2.1.332 refuses to
/// add to it, and so does mcpenv.
fn lists_servers_at_top_level(document: &JsonDocument) -> bool {
    let Ok(Some(root)) = document.object_at(&[]) else {
        return false;
    };
    document.find_member(&root, "mcpServers").is_none()
        && document.members(&root).iter().any(|member| {
            crate::config::model::accepted_by_claude(&document.value_at(&member.value_span))
        })
}

/// Refuses a `.mcp.json` Claude Code skips for its size, before reading it.
fn check_size(path: &Path, resolved: &Path) -> Result<(), ConfigError> {
    match fs::metadata(resolved) {
        Ok(metadata) if metadata.is_file() => check_project_file_size(path, metadata.len()),
        _ => Ok(()),
    }
}

/// What a killed mcpenv may have left for `path`: temporary files of a
/// write that never reached its rename and, for `~/.claude.json`, Claude
/// Code's lock directory, which Claude Code would otherwise wait 10 s for.
/// Both are removed, unless another mcpenv is editing the file right now.
/// Every edit does this for its own file; commands that may end up writing
/// nothing call it for the files they would write.
pub fn tidy(edit: &Edit, state_dir: &Path, path: &Path) {
    let _ = edit.unshown(|| {
        let resolved = fsx::resolve_symlinks(path)?;
        // Held by whoever is writing the file: then nothing is left over.
        let _lock =
            EditLock::acquire(state_dir, &resolved, Duration::ZERO).map_err(io::Error::other)?;
        remove_stale_temporaries(&resolved);
        remove_abandoned_claude_lock(state_dir, path);
        Ok::<(), io::Error>(())
    });
}

/// [`tidy`] for `~/.claude.json`, when a killed mcpenv may have left its
/// lock behind (its note is there): one `stat` when nothing was left, so
/// every command can afford it, and one that ends up writing nothing still
/// leaves no lock for Claude Code to wait on.
pub fn tidy_after_kill(edit: &Edit, locations: &Locations) {
    let configured = &locations.claude_json;
    if fs::symlink_metadata(claude_lock_note(&locations.state_dir, configured)).is_ok() {
        tidy(edit, &locations.state_dir, configured);
    }
}

/// Removes the temporary files `fsx::write_atomic` names `.<name>.XXXXXX.tmp`
/// next to `resolved`. Only with the file's [`EditLock`] held: then none
/// of them belongs to a write still under way.
fn remove_stale_temporaries(resolved: &Path) {
    let directory = match resolved.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let Some(name) = resolved.file_name().and_then(|name| name.to_str()) else {
        return;
    };
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let is_temporary = file_name
            .to_str()
            .and_then(|candidate| candidate.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .is_some_and(|random| {
                random.len() == 6 && random.bytes().all(|byte| byte.is_ascii_alphanumeric())
            });
        if is_temporary && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Claude Code's lock on `~/.claude.json`, taken by this process, with a
/// note in mcpenv's state directory naming the exact directory created. A
/// later mcpenv holding the [`EditLock`] knows that whoever wrote the note
/// is no longer editing, so a lock directory matching it was left by a
/// killed mcpenv and is removed at once.
struct HeldClaudeLock {
    lock: Option<ClaudeLock>,
    note: PathBuf,
}

impl HeldClaudeLock {
    /// Takes Claude Code's lock for the file configured at `configured`
    /// (Claude Code locks `~/.claude.json.lock` even when `~/.claude.json`
    /// is a symbolic link). The caller holds the file's [`EditLock`].
    fn acquire(state_dir: &Path, configured: &Path) -> Result<Self, LockError> {
        remove_abandoned_claude_lock(state_dir, configured);
        let lock = ClaudeLock::acquire(configured)?;
        let note = claude_lock_note(state_dir, configured);
        // Without the note a killed mcpenv's lock goes stale after 10 s, as
        // Claude Code's own do.
        // Written whole or not at all (a rename): a note cut short by a
        // kill would match no lock, and its lock would wait out the 10 s.
        if let Ok(stamp) = stamp(&claude_lock_dir(configured)) {
            let mut partial = note.clone().into_os_string();
            partial.push(format!(".{}.tmp", std::process::id()));
            let partial = PathBuf::from(partial);
            if fs::write(&partial, stamp).is_ok() && fs::rename(&partial, &note).is_err() {
                let _ = fs::remove_file(&partial);
            }
        }
        Ok(Self {
            lock: Some(lock),
            note,
        })
    }
}

/// mcpenv's lock for the file at `resolved`, then, for `~/.claude.json`
/// (`claude_json`: its configured path, since Claude Code locks
/// `~/.claude.json.lock` even when the file is a symbolic link), Claude
/// Code's: the order every edit takes them in.
fn lock_for_edit(
    state_dir: &Path,
    resolved: &Path,
    claude_json: Option<&Path>,
) -> Result<(EditLock, Option<HeldClaudeLock>), LockError> {
    let edit_lock = EditLock::acquire(state_dir, resolved, fsx::LOCK_TIMEOUT)?;
    let claude_lock = claude_json
        .map(|configured| HeldClaudeLock::acquire(state_dir, configured))
        .transpose()?;
    Ok((edit_lock, claude_lock))
}

/// Puts `text` back into the file at `resolved` (`None`: removes it), if
/// what the file holds now passes `expected`; under mcpenv's lock and, for
/// `~/.claude.json`, Claude Code's, in that order as every edit takes them.
/// Returns whether the file was as expected (and so was put back). What
/// `mcpenv undo` restores with; a dry run only previews it.
pub fn put_back(
    locations: &Locations,
    edit: &Edit,
    resolved: &Path,
    expected: impl Fn(Option<&[u8]>) -> bool,
    text: Option<&str>,
) -> io::Result<bool> {
    edit.write_file(
        expected,
        |expected| {
            let current = edit.read_regular(resolved)?;
            if !expected(current.as_deref()) {
                return Ok((false, None));
            }
            let change = FileChange {
                path: resolved.to_path_buf(),
                before: current.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
                after: text.map(str::to_string),
            };
            Ok((true, Some((resolved.to_path_buf(), change))))
        },
        |expected| {
            let is_claude_json = fsx::resolve_symlinks(&locations.claude_json)
                .is_ok_and(|claude_json| claude_json == resolved);
            let _locks = lock_for_edit(
                &locations.state_dir,
                resolved,
                is_claude_json.then_some(locations.claude_json.as_path()),
            )
            .map_err(io::Error::other)?;
            let current = fsx::read_regular(resolved)?;
            if !expected(current.as_deref()) {
                return Ok(false);
            }
            let current = current.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
            match text {
                Some(text) => {
                    let verified = fsx::write_atomic(
                        resolved,
                        &[text.as_bytes()],
                        NewMode::Exact(0o600),
                        || match fsx::unchanged(resolved, current.as_deref()) {
                            Ok(true) => Ok(()),
                            _ => Err(Changed),
                        },
                    )?;
                    Ok(verified.is_ok())
                }
                None => {
                    fs::remove_file(resolved)?;
                    Ok(true)
                }
            }
        },
    )
}

impl Drop for HeldClaudeLock {
    fn drop(&mut self) {
        drop(self.lock.take());
        let _ = fs::remove_file(&self.note);
    }
}

fn claude_lock_dir(configured: &Path) -> PathBuf {
    let mut directory = configured.as_os_str().to_owned();
    directory.push(".lock");
    PathBuf::from(directory)
}

fn claude_lock_note(state_dir: &Path, configured: &Path) -> PathBuf {
    let directory = claude_lock_dir(configured);
    let digest = Sha256::digest(directory.as_os_str().as_encoded_bytes());
    let name: String = digest[..12]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    state_dir.join("locks").join(format!("{name}.claude-lock"))
}

/// What identifies one lock directory: device, inode and modification time
/// (on Windows, which gives no inode, the modification time alone).
fn stamp(directory: &Path) -> io::Result<String> {
    let metadata = fs::symlink_metadata(directory)?;
    let (device, inode) = fsx::os::identity(&metadata).unwrap_or_default();
    let (seconds, nanoseconds) = fsx::os::modified(&metadata);
    Ok(format!("{device} {inode} {seconds}.{nanoseconds:09}"))
}

/// Removes the lock directory of `configured` if the note says a mcpenv
/// created it; the note goes either way. The caller holds the file's
/// [`EditLock`].
fn remove_abandoned_claude_lock(state_dir: &Path, configured: &Path) {
    let note = claude_lock_note(state_dir, configured);
    let Ok(Some(noted)) = fsx::read_if_exists(&note) else {
        return;
    };
    let directory = claude_lock_dir(configured);
    if stamp(&directory).is_ok_and(|current| current == noted) {
        let _ = fs::remove_dir(&directory);
    }
    let _ = fs::remove_file(&note);
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

fn shape_error(path: &Path, shape: &crate::mechanics::document::ShapeError) -> StoreError {
    ConfigError::shape(path, shape).into()
}

/// What an edit changes, and what must hold in the file once it is done.
struct Plan {
    change: Change,
    expect: Vec<Expect>,
}

/// The new text of the file.
enum Change {
    /// Nothing to write.
    Nothing,
    /// Splices of the text as read, written around it.
    Splices(Vec<Splice>),
    /// A whole new text (several members added, one after the other).
    Whole(JsonDocument),
}

/// One fact the edit makes true, checked in the file after the rename.
enum Expect {
    /// The object at `object_path` has member `name` equal to `value`.
    Member {
        object_path: Vec<String>,
        name: String,
        value: Value,
    },
    /// The object at `object_path` has no member `name`.
    NoMember {
        object_path: Vec<String>,
        name: String,
    },
    /// The string `change.field` of server `change.server` in the object at
    /// `object_path` is `change.new`.
    Field {
        object_path: Vec<String>,
        change: FieldChange,
    },
}

impl Expect {
    /// The values an edit writes, for the shield to learn instead of
    /// reading the file again after the write.
    fn written_values(expect: Vec<Self>) -> Vec<Value> {
        expect
            .into_iter()
            .filter_map(|fact| match fact {
                Self::Member { value, .. } => Some(value),
                Self::NoMember { .. } | Self::Field { .. } => None,
            })
            .collect()
    }

    fn holds(&self, document: &JsonDocument) -> bool {
        let member = |object_path: &[String], name: &str| {
            let path: Vec<&str> = object_path.iter().map(String::as_str).collect();
            document
                .object_at(&path)
                .ok()
                .flatten()
                .and_then(|object| document.find_member(&object, name))
        };
        match self {
            Self::Member {
                object_path,
                name,
                value,
            } => member(object_path, name)
                .is_some_and(|found| document.value_at(&found.value_span) == *value),
            Self::NoMember { object_path, name } => member(object_path, name).is_none(),
            Self::Field {
                object_path,
                change,
            } => member(object_path, &change.server)
                .and_then(|entry| {
                    document.value_at_path(&entry.value_span, &field_steps(&change.field))
                })
                .is_some_and(|span| document.value_at(&span).as_str() == Some(change.new.as_str())),
        }
    }
}

/// The file changed between our read and our rename.
struct Changed;

/// Read, plan, write, verify: the one way mcpenv changes a config file.
fn change_file<E: From<ConfigError>>(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    plan: impl FnMut(&JsonDocument) -> Result<Plan, E>,
) -> Result<Written, E> {
    change_file_with(locations, edit, target, plan, || ())
}

/// The file's new text after `change`, in pieces (the splices around the
/// text as read); `None` when nothing changes. What [`change_file`]
/// writes and [`preview`] shows.
fn new_text<'a>(
    document: &'a JsonDocument,
    change: &'a Change,
    path: &Path,
) -> Result<Option<Vec<&'a str>>, ConfigError> {
    Ok(match change {
        Change::Nothing => None,
        Change::Splices(splices) => {
            document
                .check(splices)
                .map_err(|error| document_error(path, error))?;
            Some(document.spliced(splices))
        }
        Change::Whole(edited) => Some(vec![edited.text()]),
    })
}

/// What [`change_file`] would write with `plan`: the file's text as read
/// through the session and as it would be, from the same reading and
/// planning, with no lock taken and nothing written; and the path reads use.
fn preview<E: From<ConfigError>>(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    mut plan: impl FnMut(&JsonDocument) -> Result<Plan, E>,
) -> Result<(PathBuf, FileChange), E> {
    let path = &target.path;
    let resolved = fsx::resolve_symlinks(path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let expand = if target.is_claude_json() {
        CLAUDE_JSON_EXPAND
    } else {
        &[]
    };
    let original = edit
        .read_text(&resolved)
        .map_err(|source| ConfigError::read(path, source))?;
    let before = original.clone();
    let cached = Cached::of(locations, edit, &resolved).filter(|_| target.is_claude_json());
    let document = parse_for_edit(path, original, expand, cached)?;
    let Plan { change, .. } = plan(&document)?;
    let after = match new_text(&document, &change, path)? {
        Some(pieces) => Some(pieces.concat()),
        None => before.clone(),
    };
    let change = FileChange {
        path: path.clone(),
        before,
        after,
    };
    Ok((resolved, change))
}

/// [`change_file`], with `after_rename` run right after the rename (tests
/// stand in for another program there). A preview session gets the same
/// reading and planning, shown, not written.
fn change_file_with<E: From<ConfigError>>(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    plan: impl FnMut(&JsonDocument) -> Result<Plan, E>,
    after_rename: impl FnMut(),
) -> Result<Written, E> {
    edit.write_file(
        plan,
        |plan| {
            let (resolved, change) = preview(locations, edit, target, plan)?;
            let written = Written {
                path: target.path.clone(),
                created: change.before.is_none() && change.after.is_some(),
                replaced: false,
                changed: change.changes(),
            };
            Ok((written, Some((resolved, change))))
        },
        |plan| write_config(locations, edit, target, plan, after_rename),
    )
}

/// The real write of [`change_file_with`]: locks, read, plan, atomic
/// rename, verify, then the journal is told. `~/.claude.json` whose layout
/// the cache knows is first edited without reading it whole
/// ([`Streamed`]); anything that edit cannot do is done reading the whole
/// file.
fn write_config<E: From<ConfigError>>(
    locations: &Locations,
    edit: &Edit,
    target: &Target,
    mut plan: impl FnMut(&JsonDocument) -> Result<Plan, E>,
    mut after_rename: impl FnMut(),
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
    let mut locks = Some(
        lock_for_edit(
            &locations.state_dir,
            &resolved,
            target.is_claude_json().then_some(path.as_path()),
        )
        .map_err(|error| ConfigError::lock(path, error))?,
    );
    remove_stale_temporaries(&resolved);
    let new_mode = if target.is_claude_json() {
        NewMode::Exact(0o600)
    } else {
        NewMode::Umasked(0o644)
    };
    let expand = if target.is_claude_json() {
        CLAUDE_JSON_EXPAND
    } else {
        &[]
    };
    let cached = Cached::of(locations, edit, &resolved).filter(|_| target.is_claude_json());
    for _ in 0..fsx::EDIT_ATTEMPTS {
        if !target.is_claude_json() {
            check_size(path, &resolved)?;
        }
        #[cfg(test)]
        let streamable = cached.filter(|_| !tests::WHOLE_ONLY.with(std::cell::Cell::get));
        #[cfg(not(test))]
        let streamable = cached;
        if let Some(cached) = streamable {
            let streamed = Streamed {
                locations,
                edit,
                path,
                resolved: &resolved,
                cached,
                new_mode,
            };
            match streamed.attempt(&mut plan, &mut after_rename, &mut locks)? {
                Some(Attempt::Written(written)) => return Ok(written),
                Some(Attempt::Changed) => continue,
                None => {}
            }
        }
        // Created before the read: its creation time, from the file's own
        // file system, is what lets the read's metadata tell any later
        // change apart (`Snapshot::unchanged_at`), so the file is read once.
        let mut temporary = fsx::AtomicWrite::begin(&resolved, new_mode).map_err(write_error)?;
        let read = fsx::read_snapshot(&resolved)
            .and_then(|read| {
                read.map(|(bytes, snapshot)| {
                    String::from_utf8(bytes)
                        .map(|text| (text, snapshot))
                        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
                })
                .transpose()
            })
            .map_err(|source| ConfigError::read(path, source))?;
        let (original, snapshot) = match read {
            Some((text, snapshot)) => (Some(text), Some(snapshot)),
            None => (None, None),
        };
        let existed = original.is_some();
        let document = parse_for_edit(path, original, expand, cached)?;
        let Plan { change, expect } = plan(&document)?;
        let Some(pieces) = new_text(&document, &change, path)? else {
            return Ok(Written {
                path: path.clone(),
                created: false,
                replaced: false,
                changed: false,
            });
        };
        let pieces: Vec<&[u8]> = pieces.into_iter().map(str::as_bytes).collect();
        if !target.is_claude_json() {
            let size: usize = pieces.iter().map(|piece| piece.len()).sum();
            check_project_file_size(path, size as u64)?;
        }
        let before = existed.then(|| document.text());
        // The undo journal's digests of the old and the new bytes, worked
        // out on a second thread while this one writes the temporary file
        // and waits for the disk (its `fsync`, then the directory's): the
        // edit does not wait for two more passes over the file. Wasted
        // only when the file changed meanwhile and the edit is redone; a
        // thread that cannot be had leaves them to the journal.
        // The layout cache's key of the new text is worked out there too,
        // when the layout of what is written will be recorded.
        let record_to = cached
            .filter(|cached| cached.keep)
            .filter(|_| matches!(change, Change::Splices(_)));
        let wants_digests = edit.wants_digests();
        let new_pieces = &pieces;
        let (written, ahead) = meanwhile(
            wants_digests || record_to.is_some(),
            move || {
                let digests =
                    wants_digests.then(|| Digests::of(before.map(str::as_bytes), new_pieces));
                let prepared =
                    record_to.map(|cached| layout_cache::prepare(cached.file, new_pieces, expand));
                (digests, prepared)
            },
            || {
                temporary.write(&pieces).map(|()| {
                    temporary.commit(|temporary| {
                        let unchanged = match &snapshot {
                            Some(snapshot) => snapshot.unchanged_at(
                                &resolved,
                                document.text().as_bytes(),
                                temporary,
                            ),
                            None => fsx::unchanged_bytes(&resolved, None),
                        };
                        match (unchanged, &snapshot) {
                            (Ok(true), Some(snapshot)) => {
                                // The undo copy: the old inode itself, linked
                                // before the rename takes its name away.
                                edit.before_replacing(&resolved, snapshot.stamp());
                                Ok(())
                            }
                            (Ok(true), None) => Ok(()),
                            _ => Err(Changed),
                        }
                    })
                })
            },
        );
        let (digests, prepared) = ahead.unwrap_or((None, None));
        let committed = match written.map_err(write_error)? {
            Ok(Ok(committed)) => committed,
            Ok(Err(Changed)) => continue,
            Err(error) => {
                edit.not_replaced(&resolved);
                return Err(ConfigError::Write {
                    path: path.clone(),
                    source: error,
                }
                .into());
            }
        };
        after_rename();
        // A program that ignores the locks may have renamed its own copy
        // over ours already, or written into ours; what it wrote counts
        // only if it kept the edit. Told from the inode and its times, not
        // by reading the file back.
        let exact = committed.still_at(&resolved, &pieces).unwrap_or(false);
        // The file is written: the undo copy needs no lock, and Claude Code
        // is not kept waiting while it is made.
        release(&mut locks);
        let owner = target.is_claude_json().then(|| owner_of(&expect));
        edit.written_as(&resolved, before, &pieces, owner, digests);
        // The layout of what was written, for the next command: worked out
        // from the change, the new bytes only digested (ahead, above, when
        // a thread could be had).
        if exact
            && let Some(cached) = record_to
            && let Change::Splices(splices) = &change
            && let Some(layout) = document.layout_after(splices)
        {
            match prepared {
                Some(prepared) => prepared.record(layout),
                None => layout_cache::record(cached.file, &pieces, expand, layout),
            }
        }
        drop(pieces);
        drop(change);
        drop(snapshot);
        if exact {
            if target.is_claude_json() {
                // What the shield learns from, instead of a second reading
                // and parse of the file after the write.
                edit.keep_read(
                    &resolved,
                    std::sync::Arc::new(document),
                    Expect::written_values(expect),
                );
            }
        } else {
            // Not held twice while the file is read again.
            drop(document);
            if !kept(&resolved, expand, &expect) {
                return Err(ConfigError::Overwritten { path: path.clone() }.into());
            }
        }
        return Ok(Written {
            path: path.clone(),
            created: !existed,
            replaced: false,
            changed: true,
        });
    }
    Err(ConfigError::Contended { path: path.clone() }.into())
}

/// Runs `work` on this thread and, when `wanted`, `ahead` on a second
/// thread meanwhile; `None` for `ahead` when it was not wanted or no
/// thread could be had (its work is then left to whoever needs it).
fn meanwhile<A: Send, W>(
    wanted: bool,
    ahead: impl FnOnce() -> A + Send,
    work: impl FnOnce() -> W,
) -> (W, Option<A>) {
    std::thread::scope(|scope| {
        let thread = wanted
            .then(|| std::thread::Builder::new().spawn_scoped(scope, ahead).ok())
            .flatten();
        let done = work();
        (done, thread.and_then(|thread| thread.join().ok()))
    })
}

/// The locks an edit holds ([`lock_for_edit`]).
type Locks = (EditLock, Option<HeldClaudeLock>);

/// Lets the locks go, Claude Code's first.
fn release(locks: &mut Option<Locks>) {
    if let Some((edit_lock, claude_lock)) = locks.take() {
        drop(claude_lock);
        drop(edit_lock);
    }
}

/// Whose a change of `~/.claude.json` is, known from where it is (what it
/// expects): finding it in the bytes would mean stepping over the whole of
/// `projects` again.
fn owner_of(expect: &[Expect]) -> Owner {
    let in_projects = expect.is_empty()
        || expect.iter().any(|fact| {
            let (Expect::Member { object_path, .. }
            | Expect::NoMember { object_path, .. }
            | Expect::Field { object_path, .. }) = fact;
            object_path.first().is_none_or(|first| first == "projects")
        });
    if in_projects {
        Owner::Project
    } else {
        Owner::User
    }
}

/// Why a streamed edit did not rename its temporary over the file.
enum NotRenamed {
    /// The file changed since it was opened.
    Changed,
    /// The racy file's digest is not the text the edit was planned on.
    Unconfirmed,
}

/// How an edit that did not read the whole file ended.
enum Attempt {
    /// Written (or nothing to write).
    Written(Written),
    /// The file changed since it was opened: the edit is made again.
    Changed,
}

/// An edit of `~/.claude.json` that never holds the file: when the cache
/// knows its layout (its fingerprint trusted, or its bytes, digested as
/// they are read, known), only the parts the plan looks at are read
/// ([`sparse::read`]), and the new file is written as the old file's
/// bytes before the change (copied by the kernel), the new bytes, and the
/// old file's bytes after it. Everything that needs the whole text works
/// from the open old file instead: the journal's digests and changed span
/// ([`journal::spliced`]), the layout cache's key of the new text, the
/// check after the rename. What it trusts: `docs/src/safety/files.md`.
struct Streamed<'a> {
    locations: &'a Locations,
    edit: &'a Edit,
    /// The file as named.
    path: &'a Path,
    /// The file, symbolic links resolved.
    resolved: &'a Path,
    cached: Cached<'a>,
    new_mode: NewMode,
}

impl Streamed<'_> {
    /// One attempt; `None` when this edit cannot be made so (the file is
    /// not known, changed lately, the plan needs bytes not read, or the
    /// session wrote the file already): it is made reading the whole file.
    fn attempt<E: From<ConfigError>>(
        &self,
        plan: &mut impl FnMut(&JsonDocument) -> Result<Plan, E>,
        after_rename: &mut impl FnMut(),
        locks: &mut Option<Locks>,
    ) -> Result<Option<Attempt>, E> {
        let (edit, path, resolved) = (self.edit, self.path, self.resolved);
        let expand = CLAUDE_JSON_EXPAND;
        let write_error = |source| ConfigError::Write {
            path: path.to_path_buf(),
            source,
        };
        let read_error = |source| ConfigError::read(path, source);
        // A second write in one session is kept against the first one's
        // old bytes, which the journal compares whole.
        if edit.wrote(resolved) {
            return Ok(None);
        }
        let mut temporary =
            fsx::AtomicWrite::begin(resolved, self.new_mode).map_err(write_error)?;
        let Some(snapshot) = fsx::open_snapshot(resolved).map_err(read_error)? else {
            return Ok(None);
        };
        // Changed since the temporary was made (or no `ctime` to tell):
        // the parts read later could be of several states.
        if !snapshot.settled_before(&temporary) {
            return Ok(None);
        }
        let file = snapshot.file();
        let Some(fingerprint) = Fingerprint::of(&file.metadata().map_err(read_error)?) else {
            return Ok(None);
        };
        let size = fingerprint.size();
        let cache = layout_cache::open(self.cached.file);
        // A file changed lately (racy) holds, if the cache knows its bytes,
        // the one text of its size the cache holds (as after mcpenv's own
        // last edit): the edit is planned and written from that text's
        // layout while a second thread digests the file, and the rename
        // waits for the digest to say the file holds that very text.
        let mut unconfirmed = None;
        let layout = match cache.trusted(&fingerprint, expand) {
            Some(layout) => layout,
            None => {
                if !cache.may_hold(size, expand) {
                    return Ok(None);
                }
                match cache.sole_of_size(size, expand) {
                    Some((key, layout)) => {
                        unconfirmed = Some(key);
                        layout
                    }
                    None => {
                        let mut reader = file;
                        let Some(layout) = cache
                            .key_of_file(&mut reader, size, expand)
                            .and_then(|key| cache.layout_of(&key))
                        else {
                            return Ok(None);
                        };
                        layout
                    }
                }
            }
        };
        let Some(sparse) = sparse::read(file, size, layout, &self.locations.local_key) else {
            return Ok(None);
        };
        // A plan that fails may have looked at bytes not read (one that
        // applies a first splice validates its value again): its error is
        // the whole file's to give.
        let Ok(Plan { change, expect }) = plan(&sparse.document) else {
            return Ok(None);
        };
        let splices = match change {
            Change::Nothing => {
                return Ok(Some(Attempt::Written(Written {
                    path: path.to_path_buf(),
                    created: false,
                    replaced: false,
                    changed: false,
                })));
            }
            Change::Whole(_) => return Ok(None),
            Change::Splices(splices) => splices,
        };
        if !splices.iter().all(|splice| sparse.covers(splice)) {
            return Ok(None);
        }
        let Sparse {
            document, layout, ..
        } = sparse;
        if document.check(&splices).is_err() {
            return Ok(None);
        }
        let mut sorted: Vec<&Splice> = splices.iter().collect();
        sorted.sort_by_key(|splice| splice.range.start);
        let mut pieces = Vec::with_capacity(sorted.len() * 2 + 1);
        let mut at = 0;
        for splice in sorted {
            pieces.push(Piece::Old(at..splice.range.start as u64));
            pieces.push(Piece::New(splice.replacement.as_bytes()));
            at = splice.range.end as u64;
        }
        pieces.push(Piece::Old(at..size));
        // As the whole edit does: the journal's summary and the new text's
        // key worked out on a second thread while this one waits for the
        // disk, each from the open old file through one small buffer.
        let record_to = Some(self.cached).filter(|cached| cached.keep);
        let wants_digests = edit.wants_digests();
        let pieces = &pieces;
        let cache = &cache;
        // The racy file's digest comes first on the second thread, before
        // the digests the journal and the cache want after the rename.
        let (digested, digest) = std::sync::mpsc::sync_channel(1);
        let (written, ahead) = meanwhile(
            unconfirmed.is_some() || wants_digests || record_to.is_some(),
            move || {
                if unconfirmed.is_some() {
                    let _ = digested.send(cache.key_of_open_file(file, size, expand));
                }
                drop(digested);
                let summed = wants_digests.then(|| journal::spliced(file, size, pieces));
                let prepared = record_to.and_then(|cached| {
                    layout_cache::prepare_spliced(cached.file, file, pieces, expand)
                });
                (summed, prepared)
            },
            || {
                temporary.write_spliced(file, pieces).map(|()| {
                    temporary.commit(|_| {
                        // No digest (the thread did not start, or the file
                        // could not be read) is no confirmation.
                        if let Some(expected) = unconfirmed
                            && digest.recv().ok().flatten() != Some(expected)
                        {
                            return Err(NotRenamed::Unconfirmed);
                        }
                        match snapshot.same_at(resolved) {
                            Ok(true) => {
                                edit.before_replacing(resolved, snapshot.stamp());
                                Ok(())
                            }
                            _ => Err(NotRenamed::Changed),
                        }
                    })
                })
            },
        );
        let (summed, prepared) = ahead.unwrap_or((None, None));
        let committed = match written.map_err(write_error)? {
            Ok(Ok(committed)) => committed,
            Ok(Err(NotRenamed::Changed)) => return Ok(Some(Attempt::Changed)),
            // The file holds other bytes than the text the cache knows of
            // its size: the temporary goes, and the edit reads it whole.
            Ok(Err(NotRenamed::Unconfirmed)) => {
                #[cfg(test)]
                tests::UNCONFIRMED.with(|count| count.set(count.get() + 1));
                return Ok(None);
            }
            Err(error) => {
                edit.not_replaced(resolved);
                return Err(write_error(error).into());
            }
        };
        after_rename();
        let exact = committed
            .still_at_spliced(resolved, file, pieces)
            .unwrap_or(false);
        release(locks);
        if wants_digests {
            let summed = summed.unwrap_or_else(|| journal::spliced(file, size, pieces));
            edit.written_spliced(resolved, file, summed, owner_of(&expect));
        }
        if exact
            && let Some(cached) = record_to
            && let Some(layout) = document.layout_after_known(&layout, &splices)
        {
            match prepared {
                Some(prepared) => prepared.record(layout),
                None => {
                    if let Some(prepared) =
                        layout_cache::prepare_spliced(cached.file, file, pieces, expand)
                    {
                        prepared.record(layout);
                    }
                }
            }
        }
        #[cfg(test)]
        tests::STREAMED.with(|count| count.set(count.get() + 1));
        if exact {
            edit.keep_read(
                resolved,
                std::sync::Arc::new(document),
                Expect::written_values(expect),
            );
        } else {
            drop(document);
            if !kept(resolved, expand, &expect) {
                return Err(ConfigError::Overwritten {
                    path: path.to_path_buf(),
                }
                .into());
            }
        }
        Ok(Some(Attempt::Written(Written {
            path: path.to_path_buf(),
            created: false,
            replaced: false,
            changed: true,
        })))
    }
}

/// Whether the file at `path`, rewritten by someone else, still has every
/// fact of `expect`; a file that is gone or does not parse has none.
fn kept(path: &Path, expand: &[&str], expect: &[Expect]) -> bool {
    match load_document(path, expand) {
        Ok(Some(document)) => expect.iter().all(|fact| fact.holds(&document)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::locate::{Environment, MAX_PROJECT_FILE_BYTES};

    fn locations(root: &Path) -> Locations {
        locations_with(root, None)
    }

    /// The places of a project at `root/project` and a HOME at
    /// `root/home`, with the layout cache `layout_cache`.
    fn locations_with(root: &Path, layout_cache: Option<layout_cache::Setting>) -> Locations {
        std::fs::create_dir_all(root.join("project/.git")).unwrap();
        Locations::discover(&Environment {
            home: root.join("home"),
            claude_config_dir: None,
            working_dir: root.join("project"),
            managed_dir: root.join("managed"),
            state_dir: root.join("state"),
            layout_cache,
        })
        .unwrap()
    }

    fn add_x(target: &Target, document: &JsonDocument) -> Result<Plan, StoreError> {
        let splice = document
            .plan_set(
                &["mcpServers"],
                "x",
                &json!({"command": "node"}),
                &claude_skeleton,
            )
            .map_err(|shape| shape_error(&target.path, &shape))?;
        Ok(Plan {
            change: Change::Splices(vec![splice]),
            expect: vec![Expect::Member {
                object_path: vec!["mcpServers".into()],
                name: "x".into(),
                value: json!({"command": "node"}),
            }],
        })
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
        let written = change_file(&locations, &Edit::plain(), &target, |document| {
            attempts += 1;
            if attempts == 1 {
                std::fs::write(&target.path, "{\n  \"numStartups\": 2\n}").unwrap();
            }
            add_x(&target, document)
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
        let error = change_file(&locations, &Edit::plain(), &target, |document| {
            attempts += 1;
            std::fs::write(&target.path, format!("{{\"n\": {attempts}}}")).unwrap();
            add_x(&target, document)
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

    #[test]
    fn an_edit_replaced_right_after_the_rename_is_reported_lost() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::User);
        std::fs::create_dir_all(target.path.parent().unwrap()).unwrap();
        let old = "{\n  \"numStartups\": 1\n}";
        std::fs::write(&target.path, old).unwrap();
        // Claude Code, ignoring the lock, renames the copy it read before
        // our write over the file.
        let error = change_file_with(
            &locations,
            &Edit::plain(),
            &target,
            |document| add_x(&target, document),
            || std::fs::write(&target.path, "{\n  \"numStartups\": 2\n}").unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(error, StoreError::Config(ConfigError::Overwritten { .. })),
            "{error}"
        );
    }

    #[test]
    fn a_rewrite_that_kept_the_edit_is_a_success() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::User);
        std::fs::create_dir_all(target.path.parent().unwrap()).unwrap();
        std::fs::write(&target.path, "{}").unwrap();
        // Claude Code re-serialises the file, our server included.
        change_file_with(
            &locations,
            &Edit::plain(),
            &target,
            |document| add_x(&target, document),
            || {
                std::fs::write(
                    &target.path,
                    r#"{"numStartups":3,"mcpServers":{"x":{"command":"node"}}}"#,
                )
                .unwrap();
            },
        )
        .unwrap();
    }

    #[test]
    fn several_servers_are_added_in_one_write_and_identical_ones_kept() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::Project);
        std::fs::write(
            &target.path,
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}",
        )
        .unwrap();
        let a = json!({"command": "a"});
        let b = json!({"command": "b"});
        let c = json!({"command": "c"});
        let servers = [
            NewServer {
                name: "a",
                entry: &a,
                if_exists: IfExists::KeepSame,
            },
            NewServer {
                name: "b",
                entry: &b,
                if_exists: IfExists::KeepSame,
            },
            NewServer {
                name: "c",
                entry: &c,
                if_exists: IfExists::KeepSame,
            },
        ];
        let written = add_servers(&locations, &Edit::plain(), &target, &servers).unwrap();
        assert!(written.changed && !written.replaced);
        assert_eq!(
            std::fs::read_to_string(&target.path).unwrap(),
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\"\n    },\n    \"c\": {\n      \"command\": \"c\"\n    }\n  }\n}"
        );
        // A second run finds them all there: nothing to write.
        let again = add_servers(&locations, &Edit::plain(), &target, &servers).unwrap();
        assert!(!again.changed);
        // A different entry under a taken name is refused, and nothing of
        // the others is written.
        let other = json!({"command": "other"});
        let d = json!({"command": "d"});
        let error = add_servers(
            &locations,
            &Edit::plain(),
            &target,
            &[
                NewServer {
                    name: "d",
                    entry: &d,
                    if_exists: IfExists::KeepSame,
                },
                NewServer {
                    name: "b",
                    entry: &other,
                    if_exists: IfExists::KeepSame,
                },
            ],
        )
        .unwrap_err();
        assert!(matches!(error, StoreError::AlreadyExists { .. }), "{error}");
        assert!(
            !std::fs::read_to_string(&target.path)
                .unwrap()
                .contains("\"d\"")
        );
    }

    #[test]
    fn a_mcp_json_claude_code_skips_for_its_size_is_not_written() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::Project);
        let padding = " ".repeat(MAX_PROJECT_FILE_BYTES as usize);
        let big = format!("{{\"mcpServers\": {{}}{padding}}}");
        std::fs::write(&target.path, &big).unwrap();
        let entry = json!({"command": "node"});
        let error = add_server(
            &locations,
            &Edit::plain(),
            &target,
            "x",
            &entry,
            IfExists::Fail,
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Config(ConfigError::TooLarge { size, .. }) if size > MAX_PROJECT_FILE_BYTES
            ),
            "{error}"
        );
        assert!(std::fs::read_to_string(&target.path).unwrap() == big);
        assert!(preflight(&target).is_err());

        // Just under the limit, an edit that would cross it is refused too.
        let padding = " ".repeat(MAX_PROJECT_FILE_BYTES as usize - 40);
        let near = format!("{{\"mcpServers\": {{}}{padding}}}");
        std::fs::write(&target.path, &near).unwrap();
        assert!(preflight(&target).is_ok());
        let error = add_server(
            &locations,
            &Edit::plain(),
            &target,
            "x",
            &entry,
            IfExists::Fail,
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Config(ConfigError::TooLarge { size, .. }) if size > MAX_PROJECT_FILE_BYTES
            ),
            "{error}"
        );
        assert!(std::fs::read_to_string(&target.path).unwrap() == near);
    }

    #[test]
    fn leftovers_of_a_killed_write_are_removed_by_the_next_edit() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::User);
        let home = target.path.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(&target.path, "{}").unwrap();
        // What a mcpenv killed in the middle of its write leaves.
        let temporary = home.join("..claude.json.a1B2c3.tmp");
        std::fs::write(&temporary, "{\"half").unwrap();
        let lock_dir = home.join(".claude.json.lock");
        std::fs::create_dir(&lock_dir).unwrap();
        std::fs::create_dir_all(locations.state_dir.join("locks")).unwrap();
        std::fs::write(
            claude_lock_note(&locations.state_dir, &target.path),
            stamp(&lock_dir).unwrap(),
        )
        .unwrap();
        // Files that only look alike are someone else's.
        let other = home.join(".claude.json.tmp.123.abcdef");
        std::fs::write(&other, "x").unwrap();

        let started = std::time::Instant::now();
        add_server(
            &locations,
            &Edit::plain(),
            &target,
            "x",
            &json!({"command": "node"}),
            IfExists::Fail,
        )
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "waited for the dead lock to go stale"
        );
        assert!(!temporary.exists());
        assert!(!lock_dir.exists());
        assert!(other.exists());
        assert!(!claude_lock_note(&locations.state_dir, &target.path).exists());
    }

    #[test]
    fn a_lock_directory_someone_else_holds_is_not_taken() {
        let temp = tempfile::tempdir().unwrap();
        let locations = locations(temp.path());
        let target = Target::for_scope(&locations, Scope::User);
        let home = target.path.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(home.join(".claude.json.lock")).unwrap();
        std::fs::create_dir_all(locations.state_dir.join("locks")).unwrap();
        // A note about an older lock directory, since replaced by Claude
        // Code's own.
        std::fs::write(
            claude_lock_note(&locations.state_dir, &target.path),
            "1 2 3.000000004",
        )
        .unwrap();
        tidy(&Edit::plain(), &locations.state_dir, &target.path);
        assert!(home.join(".claude.json.lock").is_dir());
        assert!(!claude_lock_note(&locations.state_dir, &target.path).exists());
    }

    #[test]
    fn progress_names_what_was_written_and_what_was_left() {
        let mut progress = Progress::default();
        for file in ["a", "b", "c", "d"] {
            progress.plan(file);
        }
        progress.record(Path::new("a"), true);
        progress.record(Path::new("b"), false);
        progress.record(Path::new("a"), true);
        assert_eq!(progress.written(), [PathBuf::from("a")]);
        let error = progress.interrupted("failed to write `c`".into());
        assert_eq!(
            error.to_string(),
            "stopped part way: already wrote `a`; left `c`, `d` as they were"
        );
    }

    thread_local! {
        /// Set: edits of this thread read the whole file (the reference
        /// the streamed edit is checked against).
        pub static WHOLE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// How many edits of this thread were made without reading the
        /// whole file.
        pub static STREAMED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// How many streamed edits of this thread found the racy file's
        /// digest other than the text they were planned on.
        pub static UNCONFIRMED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    mod streamed {
        use std::time::{Duration, SystemTime};

        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};

        use super::*;
        use crate::config::json_files::{load_claude_json, load_claude_json_at};
        use crate::mechanics::journal::Place;
        use crate::mechanics::layout_cache::Setting;

        /// A JSON value as the generator writes it.
        #[derive(Debug, Clone)]
        enum Node {
            Leaf(String),
            /// Raw keys (quotes included) and values.
            Object(Vec<(String, Self)>),
        }

        /// How the generated file is laid out.
        #[derive(Debug, Clone, Copy)]
        struct Style {
            /// `None`: on one line.
            unit: Option<&'static str>,
            crlf: bool,
            bom: bool,
        }

        fn render(node: &Node, style: Style, depth: usize, out: &mut String) {
            match node {
                Node::Leaf(text) => out.push_str(text),
                Node::Object(members) if members.is_empty() => out.push_str("{}"),
                Node::Object(members) => {
                    let newline = if style.crlf { "\r\n" } else { "\n" };
                    out.push('{');
                    for (index, (key, value)) in members.iter().enumerate() {
                        if index > 0 {
                            out.push(',');
                        }
                        match style.unit {
                            Some(unit) => {
                                out.push_str(newline);
                                out.push_str(&unit.repeat(depth + 1));
                            }
                            None if index > 0 => out.push(' '),
                            None => {}
                        }
                        out.push_str(key);
                        out.push_str(": ");
                        render(value, style, depth + 1, out);
                    }
                    if let Some(unit) = style.unit {
                        out.push_str(newline);
                        out.push_str(&unit.repeat(depth));
                    }
                    out.push('}');
                }
            }
        }

        fn key(name: &str) -> String {
            serde_json::to_string(name).unwrap()
        }

        fn leaf() -> impl Strategy<Value = Node> {
            prop_oneof![
                Just(Node::Leaf("1".into())),
                Just(Node::Leaf("\"x \\\" } {\"".into())),
                Just(Node::Leaf("[1, {\"a\": null}]".into())),
                Just(Node::Leaf("\"é日本\"".into())),
                // Longer than the gap reads are merged over: bytes around
                // it are left unread.
                Just(Node::Leaf(format!("\"{}\"", "é-".repeat(3000)))),
            ]
        }

        /// A `mcpServers` object: some of `a`, `b` (maybe twice, maybe
        /// escaped), each an entry.
        fn servers() -> impl Strategy<Value = Node> {
            prop::collection::vec(
                (
                    prop::sample::select(vec!["\"a\"", "\"b\"", "\"\\u0061\""]),
                    any::<bool>(),
                ),
                0..4,
            )
            .prop_map(|names| {
                Node::Object(
                    names
                        .into_iter()
                        .map(|(name, http)| {
                            let entry = if http {
                                Node::Object(vec![
                                    (key("type"), Node::Leaf("\"http\"".into())),
                                    (key("url"), Node::Leaf("\"https://h\"".into())),
                                ])
                            } else {
                                Node::Object(vec![
                                    (key("command"), Node::Leaf("\"x\"".into())),
                                    (key("args"), Node::Leaf("[\"1\"]".into())),
                                ])
                            };
                            (name.to_string(), entry)
                        })
                        .collect(),
                )
            })
        }

        /// A project's entry.
        fn entry() -> impl Strategy<Value = Node> {
            (
                prop::option::of(servers()),
                prop::option::of(leaf()),
                0..3usize,
            )
                .prop_map(|(servers, other, history)| {
                    let mut members = vec![(
                        key("history"),
                        Node::Leaf(format!(
                            "[{}]",
                            vec!["{\"display\": \"}\"}"; history].join(", ")
                        )),
                    )];
                    if let Some(servers) = servers {
                        members.push((key("mcpServers"), servers));
                    }
                    if let Some(other) = other {
                        members.push((key("allowedTools"), other));
                    }
                    Node::Object(members)
                })
        }

        /// What the generated file holds; `LOCAL` stands for this
        /// project's key, written plain or escaped.
        #[derive(Debug, Clone)]
        struct Input {
            root_servers: Option<(Node, bool)>,
            projects: Option<Vec<(&'static str, bool, Node)>>,
            tail: Option<Node>,
            style: Style,
            plan: usize,
            trusted: bool,
        }

        const LOCAL: &str = "<local>";

        fn input() -> impl Strategy<Value = Input> {
            (
                prop::option::of((servers(), any::<bool>())),
                prop::option::of(prop::collection::vec(
                    (
                        prop::sample::select(vec![LOCAL, "/other", "/o\"x"]),
                        any::<bool>(),
                        entry(),
                    ),
                    0..4,
                )),
                prop::option::of(leaf()),
                (
                    prop::sample::select(vec![
                        None,
                        Some("  "),
                        Some("  "),
                        Some("    "),
                        Some("\t"),
                    ]),
                    any::<bool>(),
                    any::<bool>(),
                ),
                0..PLANS,
                any::<bool>(),
            )
                .prop_map(
                    |(root_servers, projects, tail, (unit, crlf, bom), plan, trusted)| Input {
                        root_servers,
                        projects,
                        tail,
                        style: Style { unit, crlf, bom },
                        plan,
                        trusted,
                    },
                )
        }

        fn text_of(input: &Input, local: &str) -> String {
            let mut members = vec![(key("numStartups"), Node::Leaf("12".into()))];
            if let Some(projects) = &input.projects {
                let entries = projects
                    .iter()
                    .map(|(name, escaped, entry)| {
                        let name = if *name == LOCAL { local } else { name };
                        let raw = if *escaped {
                            key(name).replace('/', "\\/")
                        } else {
                            key(name)
                        };
                        (raw, entry.clone())
                    })
                    .collect();
                members.push((key("projects"), Node::Object(entries)));
            }
            if let Some((servers, first)) = &input.root_servers {
                let at = if *first { 0 } else { members.len() };
                members.insert(at, (key("mcpServers"), servers.clone()));
            }
            if let Some(tail) = &input.tail {
                members.push((key("zTail"), tail.clone()));
            }
            let mut text = String::new();
            if input.style.bom {
                text.push('\u{feff}');
            }
            render(&Node::Object(members), input.style, 0, &mut text);
            text
        }

        const PLANS: usize = 7;

        /// Plan `plan` made on `locations`: add, remove, trust, add two.
        fn run_plan(locations: &Locations, edit: &Edit, plan: usize) -> Result<Written, String> {
            let user = Target::for_scope(locations, Scope::User);
            let local = Target::for_scope(locations, Scope::Local);
            let entry = json!({"command": "npx", "args": ["-y", "pkg"]});
            match plan {
                0 => add_server(locations, edit, &user, "n", &entry, IfExists::Fail),
                1 => add_server(locations, edit, &local, "a", &entry, IfExists::Replace),
                2 => remove_server(locations, edit, &user, "a"),
                3 => remove_server(locations, edit, &local, "a"),
                4 => trust_project(locations, edit),
                5 => add_server(locations, edit, &user, "b", &entry, IfExists::Replace),
                _ => add_servers(
                    locations,
                    edit,
                    &local,
                    &[
                        NewServer {
                            name: "p",
                            entry: &entry,
                            if_exists: IfExists::Fail,
                        },
                        NewServer {
                            name: "q",
                            entry: &entry,
                            if_exists: IfExists::Fail,
                        },
                    ],
                ),
            }
            .map_err(|error| error.to_string())
        }

        /// A file's record in the journal: its digests before and after,
        /// the span kept of the old bytes, and its `.after` and `.before`
        /// copies.
        type KeptFile = (
            Option<String>,
            String,
            Option<(usize, usize)>,
            Option<Vec<u8>>,
            Option<Vec<u8>>,
        );

        /// What one edit left: its answer, the file, the journal's record
        /// of it and its copies, and the layout the cache holds for the new
        /// bytes.
        #[derive(Debug, PartialEq)]
        struct Outcome {
            answer: Result<Written, String>,
            file: Vec<u8>,
            journal: Vec<KeptFile>,
            layout: Option<crate::mechanics::document::Layout>,
        }

        fn later() -> SystemTime {
            SystemTime::now() + Duration::from_secs(3600)
        }

        /// Edits the file `text` once, the whole way or not; whether it
        /// was made without reading the whole file.
        fn edit_once(root: &Path, input: &Input, whole: bool) -> (Outcome, bool) {
            let _ = std::fs::remove_dir_all(root);
            std::fs::create_dir_all(root.join("home")).unwrap();
            let locations = locations_with(
                root,
                Some(Setting {
                    file: root.join("cache").join(layout_cache::FILE_NAME),
                    write: true,
                }),
            );
            let text = text_of(input, &locations.local_key);
            std::fs::write(&locations.claude_json, &text).unwrap();
            // Read once, as a command before the edit would: the layout is
            // cached, trusted (a clock an hour ahead) or not.
            let read = if input.trusted {
                load_claude_json_at(&fsx::Disk, &locations, later)
            } else {
                load_claude_json(&fsx::Disk, &locations)
            };
            assert!(read.is_ok(), "{text}");
            // The file older than the temporary the edit makes first.
            std::thread::sleep(Duration::from_millis(12));
            let place = Place {
                project: root.join("project"),
                project_dirs: vec![root.join("project")],
                shared: locations.claude_json.clone(),
            };
            let edit = Edit::recording(&locations.state_dir, "add", place);
            WHOLE_ONLY.with(|only| only.set(whole));
            let before = STREAMED.with(std::cell::Cell::get);
            let answer = run_plan(&locations, &edit, input.plan);
            let streamed = STREAMED.with(std::cell::Cell::get) > before;
            WHOLE_ONLY.with(|only| only.set(false));
            edit.finish();
            let file = std::fs::read(&locations.claude_json).unwrap();
            let journal = journal::edits(&locations.state_dir)
                .unwrap()
                .into_iter()
                .flat_map(|kept| {
                    kept.record
                        .files
                        .iter()
                        .map(|file| {
                            let after = file.after.as_ref();
                            (
                                file.before_digest.clone(),
                                file.after_digest.clone(),
                                after.map(|after| (after.kept_prefix, after.kept_suffix)),
                                after
                                    .and_then(|after| after.middle.as_ref())
                                    .map(|name| std::fs::read(kept.dir.join(name)).unwrap()),
                                file.before
                                    .as_ref()
                                    .map(|name| std::fs::read(kept.dir.join(name)).unwrap()),
                            )
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let cache = &locations.layout_cache.as_ref().unwrap().file;
            let layout = layout_cache::layout_of_text(cache, &file, CLAUDE_JSON_EXPAND);
            if let Some(layout) = &layout {
                // What a fresh parse finds of the same objects.
                let fresh = JsonDocument::parse_expanding(
                    String::from_utf8(file.clone()).unwrap(),
                    CLAUDE_JSON_EXPAND,
                )
                .unwrap();
                assert_eq!(
                    fresh.layout().map(|fresh| fresh.root),
                    Some(layout.root.clone())
                );
                for (span, members) in &layout.objects {
                    assert_eq!(
                        fresh.members(span).as_ref(),
                        members,
                        "the recorded layout is the file's"
                    );
                }
            }
            (
                Outcome {
                    answer,
                    file,
                    journal,
                    layout,
                },
                streamed,
            )
        }

        /// Random files and edits: the edit that reads only parts writes
        /// what the whole edit writes, keeps the same undo record and
        /// copies, records the same layout, and is the one made whenever
        /// its parts hold what the plan changes.
        #[test]
        fn a_streamed_edit_does_what_the_whole_edit_does() {
            let temp = tempfile::tempdir().unwrap();
            let root = dunce::canonicalize(temp.path()).unwrap().join("t");
            let mut runner = TestRunner::new(Config {
                cases: 96,
                ..Config::default()
            });
            let (cases, streamed_cases) =
                (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
            runner
                .run(&input(), |input| {
                    let (whole, whole_streamed) = edit_once(&root, &input, true);
                    prop_assert!(!whole_streamed);
                    let (streamed, was_streamed) = edit_once(&root, &input, false);
                    prop_assert_eq!(&streamed, &whole, "{:?}", input);
                    let local_entry = input
                        .projects
                        .as_ref()
                        .is_some_and(|projects| projects.iter().any(|(name, _, _)| *name == LOCAL));
                    let user = matches!(input.plan, 0 | 2 | 5);
                    let container = if user {
                        input.root_servers.is_some()
                    } else {
                        local_entry
                    };
                    let changes = matches!(whole.answer, Ok(Written { changed: true, .. }));
                    // Made so whenever the container exists in a file laid
                    // out on lines (one on a single line has no line start
                    // read before a change).
                    let expected =
                        changes && input.plan != 6 && container && input.style.unit.is_some();
                    if expected {
                        prop_assert!(was_streamed, "{:?}", input);
                    }
                    // A new member of the root or of `projects` holds
                    // `projects`, whose members are not all known.
                    if input.plan == 6 || (!container && input.projects.is_some()) {
                        prop_assert!(!was_streamed, "{:?}", input);
                    }
                    cases.set(cases.get() + 1);
                    streamed_cases.set(streamed_cases.get() + usize::from(was_streamed));
                    Ok(())
                })
                .unwrap();
            let (cases, streamed_cases) = (cases.get(), streamed_cases.get());
            assert!(
                streamed_cases * 3 >= cases,
                "{streamed_cases} of {cases} streamed"
            );
        }

        /// A racy file of the one size the cache knows is edited from that
        /// text's layout only once its digest says it holds that text:
        /// other bytes (here laid out alike, so the plan made on the parts
        /// read goes through) are edited reading the whole file.
        #[test]
        fn a_racy_file_of_other_bytes_is_edited_whole() {
            let temp = tempfile::tempdir().unwrap();
            let root = dunce::canonicalize(temp.path()).unwrap();
            std::fs::create_dir_all(root.join("home")).unwrap();
            let locations = locations_with(
                &root,
                Some(Setting {
                    file: root.join("cache").join(layout_cache::FILE_NAME),
                    write: true,
                }),
            );
            let text = |tail: &str| {
                format!(
                    "{{\n  \"mcpServers\": {{\n    \"a\": {{\n      \"command\": \"x\"\n    }}\n  }},\n  \"projects\": {{}},\n  \"tail\": \"{tail}\"\n}}\n"
                )
            };
            let (known, other) = (text("cached"), text("CHANGE"));
            assert_eq!(known.len(), other.len());
            let user = Target::for_scope(&locations, Scope::User);
            let entry = json!({"command": "node"});
            let add = |locations: &Locations| {
                let edit = Edit::plain();
                let written = add_server(locations, &edit, &user, "n", &entry, IfExists::Fail);
                edit.finish();
                written.unwrap()
            };

            // The cache knows `known`; the file, just rewritten, holds it.
            std::fs::write(&locations.claude_json, &known).unwrap();
            load_claude_json(&fsx::Disk, &locations).unwrap();
            std::thread::sleep(Duration::from_millis(12));
            let (streamed, unconfirmed) = (
                STREAMED.with(std::cell::Cell::get),
                UNCONFIRMED.with(std::cell::Cell::get),
            );
            add(&locations);
            assert_eq!(STREAMED.with(std::cell::Cell::get), streamed + 1);
            assert_eq!(UNCONFIRMED.with(std::cell::Cell::get), unconfirmed);
            let added = std::fs::read_to_string(&locations.claude_json).unwrap();

            // Another program writes other bytes of the same length.
            std::fs::write(&locations.claude_json, &known).unwrap();
            load_claude_json(&fsx::Disk, &locations).unwrap();
            std::fs::write(&locations.claude_json, &other).unwrap();
            std::thread::sleep(Duration::from_millis(12));
            add(&locations);
            assert_eq!(STREAMED.with(std::cell::Cell::get), streamed + 1);
            assert_eq!(UNCONFIRMED.with(std::cell::Cell::get), unconfirmed + 1);
            assert_eq!(
                std::fs::read_to_string(&locations.claude_json).unwrap(),
                added.replace("cached", "CHANGE")
            );
            let leftovers: Vec<_> = std::fs::read_dir(root.join("home"))
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .filter(|name| name.to_string_lossy().ends_with(".tmp"))
                .collect();
            assert!(leftovers.is_empty(), "{leftovers:?}");
        }
    }
}
