//! `mcpenv undo`: takes back the newest edit made in this project (or one
//! that changed only the user's own files), from the journal
//! ([`crate::mechanics::journal`]): every file it changed is put back byte for byte,
//! or, for `~/.claude.json` changed since by somebody else, member by member
//! ([`members`]). An edit of another project is taken back only when named
//! by its number. It refuses when a file changed since in what the edit
//! wrote, so nobody's later change is lost. An undo is kept as an edit of
//! its own, so `undo --redo` can take it back until the next edit here.

mod members;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::mechanics::journal::{self, FileRecord, Journal, KeptEdit, Owner, Place};
use crate::ops::shown_paths::shown_path;
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
    /// When, for people: `2026-12-03 08:40:03 UTC`.
    #[serde(skip)]
    pub time: String,
    /// The project it was made in; `None` for an edit recorded before
    /// mcpenv kept where edits were made.
    pub project: Option<PathBuf>,
    /// Whether it belongs here (made in this project, or changing only the
    /// user's own files): plain `undo` takes back only such edits.
    pub here: bool,
    /// The number of the undo that took it back, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<u64>,
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
    /// Whether the change is the project's or the user's own.
    pub owner: Owner,
    /// Whether undo would put a literal secret back into it while git
    /// tracks it or would commit it (it is not ignored).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub secret_into_commit: bool,
    /// Whether undo takes back only the members the edit changed, the
    /// file having changed elsewhere since (`~/.claude.json`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub members_only: bool,
}

/// The edits `undo --list` shows.
#[derive(Debug, Serialize)]
pub struct EditList {
    /// Newest first: this project's and the user's own, or with `all`
    /// every one. An undo is not listed; the edit it took back is, marked.
    pub edits: Vec<EditSummary>,
    /// How many edits were left out, made in other projects (or recorded
    /// before mcpenv kept where).
    pub elsewhere: usize,
}

/// The edits the journal holds, newest first: those that belong here, or
/// with `all` every one.
pub fn list(ctx: &Context, all: bool) -> Result<EditList, Error> {
    let journal = Kept::read(ctx)?;
    let mut edits = Vec::new();
    let mut elsewhere = 0;
    for edit in journal
        .edits
        .iter()
        .filter(|edit| edit.record.undoes.is_none())
    {
        let summary = journal.summary(edit);
        if all || summary.here {
            edits.push(summary);
        } else {
            elsewhere += 1;
        }
    }
    Ok(EditList { edits, elsewhere })
}

/// Which edit `undo` takes back.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// The newest edit here not undone yet.
    Newest,
    /// The edit with this number, wherever it was made (an undo's number
    /// redoes it).
    Numbered(u64),
    /// The newest undo here: redo.
    Redo,
}

/// What `undo` did.
#[derive(Debug, Serialize)]
pub struct UndoReport {
    /// The edit taken back.
    pub edit: EditSummary,
    /// For a redo: the undo taken back (`edit` is the edit redone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redid: Option<u64>,
    /// How many edits here undo could still take back.
    pub remaining: usize,
    /// Why the undo could not be kept for redo, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redo_lost: Option<String>,
}

/// What `undo` would do, decided before anything is written: the edit,
/// each file it puts back or removes, and which of them would get a
/// literal secret back into a file git commits.
#[derive(Debug)]
pub struct UndoPlan {
    /// The journal entry taken back: the edit, or for a redo the undo.
    entry: KeptEdit,
    /// For a redo: the edit redone, as shown.
    redone: Option<EditSummary>,
    /// The edit and its files, as shown before anything is done.
    pub summary: EditSummary,
    restores: Vec<Restore>,
    remaining: usize,
}

/// One file undo puts back.
#[derive(Debug)]
struct Restore {
    file: FileRecord,
    /// What the file must hold for undo to replace it.
    expected: Expected,
    /// What undo writes (`None`: removes the file).
    text: Option<String>,
}

/// What a file holds, as a check.
#[derive(Debug, Clone)]
enum Expected {
    /// Bytes with this digest.
    Digest(String),
    /// Nothing: the file is absent.
    Absent,
}

impl Expected {
    fn holds(&self, current: Option<&[u8]>) -> bool {
        match (self, current) {
            (Self::Digest(digest), Some(bytes)) => journal::digest(&[bytes]) == *digest,
            (Self::Absent, None) => true,
            _ => false,
        }
    }
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

    /// The edit taken back, or for a redo the edit redone.
    pub fn edit(&self) -> &EditSummary {
        self.redone.as_ref().unwrap_or(&self.summary)
    }

    /// Whether this plan redoes an edit (takes back an undo).
    pub fn is_redo(&self) -> bool {
        self.redone.is_some()
    }
}

/// The journal as read once: its edits, newest first, and where this is.
struct Kept {
    edits: Vec<KeptEdit>,
    project: PathBuf,
}

impl Kept {
    fn read(ctx: &Context) -> Result<Self, Error> {
        let edits = journal::edits(&ctx.locations.state_dir).map_err(|error| {
            Error::failure(format!(
                "cannot read mcpenv's undo journal `{}`: {error}",
                journal_dir(ctx)
            ))
            .with_hint("check the directory's permissions")
        })?;
        Ok(Self {
            edits,
            project: PathBuf::from(&ctx.locations.local_key),
        })
    }

    /// Whether `edit` belongs here: made in this project, or changing only
    /// the user's own files. A record without a project never does.
    fn here(&self, edit: &KeptEdit) -> bool {
        edit.record.project.as_deref() == Some(self.project.as_path())
            || edit.record.only_users_files()
    }

    /// The undo that took `edit` back, if one did.
    fn undone_by(&self, edit: &KeptEdit) -> Option<u64> {
        self.edits
            .iter()
            .find(|undo| undo.record.undoes == Some(edit.number))
            .map(|undo| undo.number)
    }

    /// The edits here plain `undo` could take back, newest first.
    fn undoable_here(&self) -> impl Iterator<Item = &KeptEdit> {
        self.edits.iter().filter(|edit| {
            edit.record.undoes.is_none() && self.undone_by(edit).is_none() && self.here(edit)
        })
    }

    fn summary(&self, edit: &KeptEdit) -> EditSummary {
        EditSummary {
            number: edit.number,
            command: edit.record.command.clone(),
            recorded_at: edit.record.recorded_at,
            age: age(edit.record.recorded_at),
            time: utc_time(edit.record.recorded_at),
            project: edit.record.project.clone(),
            here: self.here(edit),
            undone_by: self.undone_by(edit),
            files: edit
                .record
                .files
                .iter()
                .map(|file| EditedFile {
                    path: file.path.clone(),
                    created: file.before.is_none(),
                    owner: file.owner,
                    secret_into_commit: false,
                    members_only: false,
                })
                .collect(),
        }
    }

    /// The newest edit after `number` that changed `path`.
    fn later_edit_of(&self, number: u64, path: &Path) -> Option<&KeptEdit> {
        self.edits.iter().find(|edit| {
            edit.number > number && edit.record.files.iter().any(|file| file.path == path)
        })
    }
}

fn journal_dir(ctx: &Context) -> String {
    ctx.locations
        .display(&journal::root(&ctx.locations.state_dir))
}

/// Decides what undoing `target` does; writes nothing.
pub fn plan(ctx: &Context, target: Target) -> Result<UndoPlan, Error> {
    let kept = Kept::read(ctx)?;
    let (entry, redone) = match target {
        Target::Newest => (newest(ctx, &kept)?, None),
        Target::Redo => {
            let undo = newest_undo(ctx, &kept)?;
            let redone = redone(&kept, undo);
            (undo, Some(redone))
        }
        Target::Numbered(number) => {
            let entry = numbered(ctx, &kept, number)?;
            match entry.record.undoes {
                Some(_) => (entry, Some(redone(&kept, entry))),
                None => (entry, None),
            }
        }
    };
    let mut summary = kept.summary(entry);
    let shown_edit = redone.as_ref().unwrap_or(&summary).clone();
    let shared = ctx.locations.shared_claude_json();
    let mut restores = Vec::new();
    for file in entry.record.files.iter().rev() {
        let cannot_read = |error: std::io::Error| {
            Error::failure(format!(
                "cannot read the copy of `{}` kept for undo: {error}",
                shown_path(ctx, &file.path)
            ))
            .with_hint("the journal is damaged; restore the file by hand")
        };
        let before = entry.before(file).map_err(cannot_read)?;
        let current = crate::mechanics::fsx::read_regular(&file.path).map_err(|error| {
            Error::failure(format!("cannot read `{}`: {error}", file.path.display()))
                .with_hint("check the file's permissions")
        })?;
        let left = if file.after_absent {
            Expected::Absent
        } else {
            Expected::Digest(file.after_digest.clone())
        };
        if left.holds(current.as_deref()) {
            restores.push(Restore {
                file: file.clone(),
                expected: left,
                text: before,
            });
            continue;
        }
        let back = match (&current, &before) {
            (None, None) => true,
            (Some(bytes), Some(before)) => bytes == before.as_bytes(),
            _ => false,
        };
        if back {
            // An undo interrupted: this file is back already.
            continue;
        }
        let merged = match (&current, file.path == shared) {
            (Some(current), true) => {
                let after = entry.after(file).map_err(cannot_read)?;
                after.map(|after| match std::str::from_utf8(current) {
                    Ok(current) => {
                        members::take_back(before.as_deref().unwrap_or(""), &after, current)
                    }
                    Err(_) => Err(members::Refusal::Unreadable),
                })
            }
            _ => None,
        };
        match merged {
            Some(Ok(Some(text))) => {
                let current = current.as_deref().unwrap_or_default();
                restores.push(Restore {
                    file: file.clone(),
                    expected: Expected::Digest(journal::digest(&[current])),
                    text: Some(text),
                });
                if let Some(shown) = summary.files.iter_mut().find(|f| f.path == file.path) {
                    shown.members_only = true;
                }
            }
            // What the edit changed holds what it held before already.
            Some(Ok(None)) => {}
            Some(Err(members::Refusal::ChangedAgain(changed))) => {
                return Err(changed_since(
                    ctx,
                    &kept,
                    entry,
                    &shown_edit,
                    file,
                    &changed,
                ));
            }
            Some(Err(members::Refusal::Unreadable)) | None => {
                return Err(changed_since(ctx, &kept, entry, &shown_edit, file, &[]));
            }
        }
    }
    for restore in &restores {
        let Some(text) = &restore.text else { continue };
        if holds_literal_secret(&restore.file.path, text)
            && crate::mechanics::git_files::standing(&restore.file.path).committed()
            && let Some(shown) = summary
                .files
                .iter_mut()
                .find(|shown| shown.path == restore.file.path)
        {
            shown.secret_into_commit = true;
        }
    }
    let remaining = kept
        .undoable_here()
        .filter(|edit| edit.number != entry.number)
        .count();
    Ok(UndoPlan {
        entry: entry.clone(),
        redone,
        summary,
        restores,
        remaining,
    })
}

/// The newest edit here that undo can take back.
fn newest<'a>(ctx: &Context, kept: &'a Kept) -> Result<&'a KeptEdit, Error> {
    if let Some(edit) = kept.undoable_here().next() {
        return Ok(edit);
    }
    let elsewhere = kept
        .edits
        .iter()
        .filter(|edit| edit.record.undoes.is_none() && kept.undone_by(edit).is_none())
        .count();
    if elsewhere == 0 {
        return Err(Error::failure("there is no edit to undo").with_hint(format!(
            "mcpenv keeps the last {} edits of the commands that write files (add, remove, share, extract, onboard, …); none is kept in `{}`",
            journal::KEPT_EDITS,
            journal_dir(ctx)
        )));
    }
    Err(Error::failure("there is no edit to undo in this project").with_hint(format!(
        "{} of other projects (or recorded before mcpenv kept where an edit was made) {} kept; `{}` lists every edit, and `{}` takes back one by its number",
        plural(elsewhere, "edit"),
        if elsewhere == 1 { "is" } else { "are" },
        ctx.command(&["undo", "--list", "--all"]),
        ctx.command(&["undo", "NUMBER"])
    )))
}

/// The newest undo here, for redo: refused once an edit was made here
/// after it.
fn newest_undo<'a>(ctx: &Context, kept: &'a Kept) -> Result<&'a KeptEdit, Error> {
    let Some(undo) = kept
        .edits
        .iter()
        .find(|edit| edit.record.undoes.is_some() && kept.here(edit))
    else {
        return Err(
            Error::failure("there is no undo to redo here").with_hint(format!(
                "`{}` shows the edits kept; an edit taken back is marked `undone`",
                ctx.command(&["undo", "--list"])
            )),
        );
    };
    if let Some(later) = kept.undoable_here().find(|edit| edit.number > undo.number) {
        return Err(Error::failure(format!(
            "`mcpenv {}` (edit {}) was made here after the last undo, so there is nothing to redo",
            later.record.command, later.number
        ))
        .with_hint(format!(
            "redo takes back an undo until the next edit; `{}` redoes it anyway, unless a file it puts back changed since",
            ctx.command(&["undo", &undo.number.to_string()])
        )));
    }
    Ok(undo)
}

/// The edit with `number`.
fn numbered<'a>(ctx: &Context, kept: &'a Kept, number: u64) -> Result<&'a KeptEdit, Error> {
    let Some(edit) = kept.edits.iter().find(|edit| edit.number == number) else {
        return Err(
            Error::failure(format!("the journal holds no edit {number}")).with_hint(format!(
                "`{}` lists every edit kept",
                ctx.command(&["undo", "--list", "--all"])
            )),
        );
    };
    if let Some(undo) = kept.undone_by(edit) {
        return Err(Error::failure(format!(
            "edit {number} (`mcpenv {}`) was taken back already, by undo {undo}",
            edit.record.command
        ))
        .with_hint(format!(
            "`{}` redoes it",
            ctx.command(&["undo", &undo.to_string()])
        )));
    }
    Ok(edit)
}

/// The edit an undo took back, as shown for its redo.
fn redone(kept: &Kept, undo: &KeptEdit) -> EditSummary {
    let number = undo.record.undoes.unwrap_or_default();
    match kept.edits.iter().find(|edit| edit.number == number) {
        Some(edit) => kept.summary(edit),
        // The edit itself left the journal (evicted): the undo's own
        // copies still redo it.
        None => {
            let mut summary = kept.summary(undo);
            summary.command = format!("edit {number}");
            summary
        }
    }
}

/// The error for a file that changed since the edit in what it wrote;
/// `members` names the members changed again, for `~/.claude.json`.
fn changed_since(
    ctx: &Context,
    kept: &Kept,
    entry: &KeptEdit,
    shown_edit: &EditSummary,
    file: &FileRecord,
    members: &[String],
) -> Error {
    let path = shown_path(ctx, &file.path);
    let what = if entry.record.undoes.is_some() {
        format!("`mcpenv undo` put back `mcpenv {}`", shown_edit.command)
    } else {
        format!("`mcpenv {}` wrote it", shown_edit.command)
    };
    let by = match kept.later_edit_of(entry.number, &file.path) {
        Some(later) => format!(
            " (`mcpenv {}`, edit {}{}, changed it {})",
            later.record.command,
            later.number,
            match &later.record.project {
                Some(project) if project.as_path() != kept.project.as_path() =>
                    format!(" in `{}`", ctx.locations.display(project)),
                _ => String::new(),
            },
            age(later.record.recorded_at)
        ),
        None => String::new(),
    };
    let members = if members.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = members.iter().map(|member| format!("`{member}`")).collect();
        format!(", in {}", named.join(", "))
    };
    Error::failure(format!(
        "`{path}` changed since {what} {}{by}{members}; undo would lose that change, so nothing was put back",
        shown_edit.age
    ))
    .with_hint(format!(
        "see what changed in the file; `{}` lists the edits kept",
        ctx.command(&["undo", "--list"])
    ))
}

/// Carries out `plan`: puts back every file, removes those the edit
/// created, and keeps the undo (or, for a redo, forgets the undo, so the
/// edit is back in the journal as it was).
pub fn apply(ctx: &Context, plan: UndoPlan) -> Result<UndoReport, Error> {
    // The undo is kept as an edit of its own, so `--redo` can take it
    // back: mcpenv's bookkeeping, which a dry run neither does nor shows.
    let mut undo = None;
    if plan.redone.is_none() {
        let _ = ctx.edit.unshown(|| {
            undo = Some(undo_journal(ctx, &plan));
            Ok::<(), std::convert::Infallible>(())
        });
    }
    if let Err(error) = put_back_all(ctx, &plan.restores, undo.as_mut()) {
        // A partial undo is not one to redo: `undo` again finishes it.
        if let Some(journal) = undo {
            journal.discard();
        }
        return Err(error);
    }
    let mut redo_lost = None;
    ctx.edit.unshown(|| {
        if plan.redone.is_some() || plan.restores.is_empty() {
            // Redone (the edit is live again), or nothing was left to put
            // back (there is nothing to redo): the entry goes.
            plan.entry.forget().map_err(|error| {
                Error::new(Kind::Failure, Box::new(error))
                    .with_hint("the files are back; remove the entry's directory by hand")
            })?;
        } else if let Some(journal) = undo {
            let kept = journal.close();
            if let Some(problem) = kept.problem {
                // The undo is made, its redo lost: the edit goes, as it did
                // before undo was kept.
                let _ = plan.entry.forget();
                redo_lost = Some(problem);
            }
        }
        Ok::<(), Error>(())
    })?;
    let redid = plan.redone.is_some().then_some(plan.entry.number);
    Ok(UndoReport {
        edit: plan.redone.unwrap_or(plan.summary),
        redid,
        remaining: plan.remaining,
        redo_lost,
    })
}

/// The journal entry of the undo of `plan`'s edit, made where that edit was.
fn undo_journal(ctx: &Context, plan: &UndoPlan) -> Journal {
    let project = plan
        .entry
        .record
        .project
        .clone()
        .unwrap_or_else(|| PathBuf::from(&ctx.locations.local_key));
    let mut journal = Journal::new(
        &ctx.locations.state_dir,
        "undo",
        Place {
            project: project.clone(),
            project_dirs: vec![project],
            shared: ctx.locations.shared_claude_json(),
        },
    );
    journal.undoing(plan.entry.number);
    journal
}

/// Puts back each file, keeping in `undo` (when the undo is kept) what
/// each held before.
fn put_back_all(
    ctx: &Context,
    restores: &[Restore],
    mut undo: Option<&mut Journal>,
) -> Result<(), Error> {
    for restore in restores {
        let file = &restore.file;
        // What undo replaces, read under the lock: the undo's own `before`.
        let replaced = std::cell::RefCell::new(None);
        let put_back = crate::config::store::put_back(
            &ctx.locations,
            &ctx.edit,
            &file.path,
            |current| {
                *replaced.borrow_mut() =
                    current.map(|bytes| String::from_utf8_lossy(bytes).into_owned());
                restore.expected.holds(current)
            },
            restore.text.as_deref(),
        )
        .map_err(|error| {
            Error::failure(format!(
                "cannot put back `{}`: {error}",
                shown_path(ctx, &file.path)
            ))
            .with_hint("run `mcpenv undo` again: the files already put back are skipped")
        })?;
        if !put_back {
            return Err(Error::failure(format!(
                "`{}` changed while undo was putting it back",
                shown_path(ctx, &file.path)
            ))
            .with_hint("look at the file, then run `mcpenv undo` again"));
        }
        if let Some(journal) = undo.as_deref_mut() {
            let replaced = replaced.into_inner();
            match &restore.text {
                Some(text) => journal.keep_owned(
                    &file.path,
                    replaced.as_deref(),
                    &[text.as_bytes()],
                    Some(file.owner),
                ),
                None => journal.keep_removed(&file.path, replaced.as_deref(), file.owner),
            }
        }
    }
    Ok(())
}

/// The error for a plan that would put a literal secret back into a file
/// git commits, when nobody agreed to it.
pub fn refused(ctx: &Context, plan: &UndoPlan) -> Error {
    let files: Vec<String> = plan
        .secrets_into_commits()
        .iter()
        .map(|path| format!("`{}`", shown_path(ctx, path)))
        .collect();
    Error::failure(format!(
        "{} `mcpenv {}` would put a literal secret back into {}, which git tracks or would commit; nothing was put back",
        if plan.is_redo() { "redoing" } else { "undoing" },
        plan.edit().command,
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
        .entries()
        .any(|(name, value)| crate::ops::secret_stores::holds_secret(name, value))
}

fn plural(count: usize, noun: &str) -> String {
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// `3 minutes ago`, `just now`.
fn age(recorded_at: u64) -> String {
    let seconds = now().saturating_sub(recorded_at);
    let (amount, unit) = match seconds {
        0..60 => return "just now".to_string(),
        60..3600 => (seconds / 60, "minute"),
        3600..86_400 => (seconds / 3600, "hour"),
        _ => (seconds / 86_400, "day"),
    };
    format!("{} ago", plural(amount as usize, unit))
}

/// `2026-12-03 08:40:03 UTC`. In UTC, by hand: one fixed format needs no
/// time crate, and the local zone would mean reading the environment.
pub fn utc_time(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_time(1_796_287_203), "2026-12-03 08:40:03 UTC");
    }
}
