//! `mcpenv undo`: puts back every file the last edit changed, byte for
//! byte as it was, from the journal ([`crate::journal`]); refuses when a
//! file changed since that edit, so nobody's later change is lost. Undo
//! is not itself kept: a second `undo` takes back the edit before.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::journal::{self, FileRecord, KeptEdit};
use crate::ops::{Context, Error, Kind};

/// One edit the journal holds, as `undo --list` shows it.
#[derive(Debug, Serialize)]
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
#[derive(Debug, Serialize)]
pub struct EditedFile {
    /// The file.
    pub path: PathBuf,
    /// Whether the edit created it (undo removes it).
    pub created: bool,
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

/// Takes back the newest edit.
pub fn undo(ctx: &Context) -> Result<UndoReport, Error> {
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
    let summary = summary(&edit);
    let mut restores = Vec::new();
    for file in edit.record.files.iter().rev() {
        let before = edit.before(file).map_err(|error| {
            Error::failure(format!(
                "cannot read the copy of `{}` kept for undo: {error}",
                crate::ops::shown::shown_path(ctx, &file.path)
            ))
            .with_hint("the journal is damaged; restore the file by hand")
        })?;
        match state(file, &before)? {
            State::AsLeft => restores.push((file, before)),
            State::AlreadyBack => {}
            State::ChangedSince => {
                return Err(Error::failure(format!(
                    "`{}` changed since `mcpenv {}` wrote it {}; undo would lose that change, so nothing was put back",
                    crate::ops::shown::shown_path(ctx, &file.path),
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
    for (file, before) in restores {
        let expected = |current: Option<&[u8]>| {
            current.is_some_and(|bytes| journal::digest(&[bytes]) == file.after_digest)
        };
        let put_back =
            crate::store::put_back(&ctx.locations, &file.path, expected, before.as_deref())
                .map_err(|error| {
                    Error::failure(format!(
                        "cannot put back `{}`: {error}",
                        crate::ops::shown::shown_path(ctx, &file.path)
                    ))
                    .with_hint("run `mcpenv undo` again: the files already put back are skipped")
                })?;
        if !put_back {
            return Err(Error::failure(format!(
                "`{}` changed while undo was putting it back",
                crate::ops::shown::shown_path(ctx, &file.path)
            ))
            .with_hint("look at the file, then run `mcpenv undo` again"));
        }
    }
    if !crate::edits::previewing() {
        edit.forget().map_err(|error| {
            Error::new(Kind::Failure, Box::new(error))
                .with_hint("the files are back; remove the edit's directory by hand")
        })?;
    }
    Ok(UndoReport {
        edit: summary,
        remaining: edits.len(),
    })
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
    let current = crate::fsx::read_regular(&file.path).map_err(|error| {
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
