//! `mcpenv undo`: puts back every file the last edit changed, byte for
//! byte as it was, from the journal ([`crate::mechanics::journal`]); refuses when a
//! file changed since that edit, so nobody's later change is lost. Undo
//! is not itself kept: a second `undo` takes back the edit before.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::mechanics::journal::{self, FileRecord, KeptEdit};
use crate::ops::{Context, Error, Kind};

/// One edit the journal holds, as `undo --list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EditSummary {
    /// Its number (later edits have higher ones).
    pub number: u64,
    /// The command that made it.
    pub command: String,
    /// When, in seconds since the Unix epoch.
    pub recorded_at: u64,
    /// How long ago, for people.
    #[serde(skip)]
    pub age: String,
    /// The files it changed.
    pub files: Vec<EditedFile>,
}

/// A file an edit changed.
#[derive(Debug, Clone, Serialize)]
pub struct EditedFile {
    /// The file.
    pub path: PathBuf,
    /// Whether the edit created it (undo removes it).
    pub created: bool,
    /// Whether undo would put a literal secret back into it while git
    /// tracks it or would commit it (it is not ignored).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub secret_into_commit: bool,
}

/// The edits the journal holds, newest first.
pub fn list(ctx: &Context) -> Result<Vec<EditSummary>, Error> {
    Ok(kept_edits(ctx)?.iter().map(summary).collect())
}

/// What `undo` did.
#[derive(Debug, Serialize)]
pub struct UndoReport {
    /// The edit taken back.
    pub edit: EditSummary,
    /// How many edits the journal still holds.
    pub remaining: usize,
}

/// What `undo` would do, decided before anything is written: the edit,
/// each file it puts back or removes, and which of them would get a
/// literal secret back into a file git commits.
#[derive(Debug)]
pub struct UndoPlan {
    edit: KeptEdit,
    /// The edit and its files, as shown before anything is done.
    pub summary: EditSummary,
    restores: Vec<(FileRecord, Option<String>)>,
    remaining: usize,
}

impl UndoPlan {
    /// The files undo would put a literal secret back into while git
    /// tracks them or would commit them.
    pub fn secrets_into_commits(&self) -> Vec<&Path> {
        self.summary
            .files
            .iter()
            .filter(|file| file.secret_into_commit)
            .map(|file| file.path.as_path())
            .collect()
    }
}

/// Decides what undoing the newest edit does; writes nothing.
pub fn plan(ctx: &Context) -> Result<UndoPlan, Error> {
    let mut edits = kept_edits(ctx)?;
    if edits.is_empty() {
        return Err(Error::failure("there is no edit to undo").with_hint(format!(
            "mcpenv keeps the last {} edits of the commands that write files (add, remove, share, extract, onboard, …); none is kept in `{}`",
            journal::KEPT_EDITS,
            ctx.locations
                .display(&journal::root(&ctx.locations.state_dir))
        )));
    }
    let edit = edits.remove(0);
    let mut summary = summary(&edit);
    let mut restores = Vec::new();
    for file in edit.record.files.iter().rev() {
        let before = edit.before(file).map_err(|error| {
            Error::failure(format!(
                "cannot read the copy of `{}` kept for undo: {error}",
                crate::ops::shown_paths::shown_path(ctx, &file.path)
            ))
            .with_hint("the journal is damaged; restore the file by hand")
        })?;
        match state(file, &before)? {
            State::AsLeft => restores.push((file.clone(), before)),
            State::AlreadyBack => {}
            State::ChangedSince => {
                return Err(Error::failure(format!(
                    "`{}` changed since `mcpenv {}` wrote it {}; undo would lose that change, so nothing was put back",
                    crate::ops::shown_paths::shown_path(ctx, &file.path),
                    edit.record.command,
                    summary.age
                ))
                .with_hint(format!(
                    "see what changed in the file; `{}` lists the edits kept",
                    ctx.command(&["undo", "--list"])
                )));
            }
        }
    }
    for (file, before) in &restores {
        let Some(before) = before else { continue };
        if holds_literal_secret(&file.path, before)
            && crate::mechanics::git_files::standing(&file.path).committed()
            && let Some(shown) = summary
                .files
                .iter_mut()
                .find(|shown| shown.path == file.path)
        {
            shown.secret_into_commit = true;
        }
    }
    Ok(UndoPlan {
        edit,
        summary,
        restores,
        remaining: edits.len(),
    })
}

/// Carries out `plan`: puts back every file, removes those the edit
/// created, and forgets the edit.
pub fn apply(ctx: &Context, plan: UndoPlan) -> Result<UndoReport, Error> {
    for (file, before) in &plan.restores {
        let expected = |current: Option<&[u8]>| {
            current.is_some_and(|bytes| journal::digest(&[bytes]) == file.after_digest)
        };
        let put_back = crate::config::store::put_back(
            &ctx.locations,
            &ctx.edit,
            &file.path,
            expected,
            before.as_deref(),
        )
        .map_err(|error| {
            Error::failure(format!(
                "cannot put back `{}`: {error}",
                crate::ops::shown_paths::shown_path(ctx, &file.path)
            ))
            .with_hint("run `mcpenv undo` again: the files already put back are skipped")
        })?;
        if !put_back {
            return Err(Error::failure(format!(
                "`{}` changed while undo was putting it back",
                crate::ops::shown_paths::shown_path(ctx, &file.path)
            ))
            .with_hint("look at the file, then run `mcpenv undo` again"));
        }
    }
    ctx.edit.unshown(|| {
        plan.edit.forget().map_err(|error| {
            Error::new(Kind::Failure, Box::new(error))
                .with_hint("the files are back; remove the edit's directory by hand")
        })
    })?;
    Ok(UndoReport {
        edit: plan.summary,
        remaining: plan.remaining,
    })
}

/// The error for a plan that would put a literal secret back into a file
/// git commits, when nobody agreed to it.
pub fn refused(ctx: &Context, plan: &UndoPlan) -> Error {
    let files: Vec<String> = plan
        .secrets_into_commits()
        .iter()
        .map(|path| format!("`{}`", crate::ops::shown_paths::shown_path(ctx, path)))
        .collect();
    Error::failure(format!(
        "undoing `mcpenv {}` would put a literal secret back into {}, which git tracks or would commit; nothing was put back",
        plan.summary.command,
        files.join(", ")
    ))
    .with_hint(format!(
        "run `{}` in a terminal to be asked, or `{}` to put it back all the same (then keep it out of commits with `{}`)",
        ctx.command(&["undo"]),
        ctx.command(&["undo", "--restore-secrets"]),
        ctx.command(&["extract"])
    ))
}

/// Whether `text`, the bytes undo would put back at `path`, holds a literal
/// secret: a server entry `scan` would flag, or a dotenv value that is no
/// reference under a name or of a shape `scan` takes for a secret.
fn holds_literal_secret(path: &Path, text: &str) -> bool {
    if let Ok(value) = crate::clients::parse(path, text) {
        let client = crate::clients::client_of_path(path)
            .unwrap_or_else(|| crate::clients::guess_client(path, Some(&value)));
        return crate::clients::servers(client, value)
            .iter()
            .any(|server| !crate::secrets::scan_entry(&server.entry).is_empty());
    }
    crate::envfiles::dotenv::DotEnv::parse(path, text.to_string())
        .entries
        .iter()
        .any(|(name, value)| crate::ops::secret_stores::holds_secret(name, value))
}

/// Where a file stands against the edit.
enum State {
    /// It holds what the edit left: it can be put back.
    AsLeft,
    /// It holds what it held before already (an undo interrupted).
    AlreadyBack,
    /// Something else changed it.
    ChangedSince,
}

fn state(file: &FileRecord, before: &Option<String>) -> Result<State, Error> {
    let current = crate::mechanics::fsx::read_regular(&file.path).map_err(|error| {
        Error::failure(format!("cannot read `{}`: {error}", file.path.display()))
            .with_hint("check the file's permissions")
    })?;
    Ok(match (&current, before) {
        (Some(bytes), _) if journal::digest(&[bytes]) == file.after_digest => State::AsLeft,
        (None, None) => State::AlreadyBack,
        (Some(bytes), Some(before)) if bytes == before.as_bytes() => State::AlreadyBack,
        _ => State::ChangedSince,
    })
}

fn kept_edits(ctx: &Context) -> Result<Vec<KeptEdit>, Error> {
    journal::edits(&ctx.locations.state_dir).map_err(|error| {
        Error::failure(format!(
            "cannot read mcpenv's undo journal `{}`: {error}",
            ctx.locations
                .display(&journal::root(&ctx.locations.state_dir))
        ))
        .with_hint("check the directory's permissions")
    })
}

fn summary(edit: &KeptEdit) -> EditSummary {
    EditSummary {
        number: edit.number,
        command: edit.record.command.clone(),
        recorded_at: edit.record.recorded_at,
        age: age(edit.record.recorded_at),
        files: edit
            .record
            .files
            .iter()
            .map(|file| EditedFile {
                path: file.path.clone(),
                created: file.before.is_none(),
                secret_into_commit: false,
            })
            .collect(),
    }
}

/// `3 minutes ago`, `just now`.
fn age(recorded_at: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let seconds = now.saturating_sub(recorded_at);
    let (amount, unit) = match seconds {
        0..60 => return "just now".to_string(),
        60..3600 => (seconds / 60, "minute"),
        3600..86_400 => (seconds / 3600, "hour"),
        _ => (seconds / 86_400, "day"),
    };
    let plural = if amount == 1 { "" } else { "s" };
    format!("{amount} {unit}{plural} ago")
}
