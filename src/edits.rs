//! One command's changes to files, gathered in one place. Every write of a
//! config or dotenv file passes through the two writers (`store`'s edit and
//! [`crate::fsx::edit_text`]), and they report here, so that
//! - a dry run shows each change as a diff instead of making it (the
//!   writers ask [`previewing`] and hand the change to [`preview`]; later
//!   reads of the same file see the previewed text, so a command that
//!   writes a file twice previews what it would really write), and
//! - a real run keeps each file's previous bytes in the undo journal
//!   ([`crate::journal`]), for `mcpenv undo`.
//!
//! The session is process-wide: a command runs once per process, and its
//! writes may happen on any thread. Without a session (library use, unit
//! tests) the writers write and nothing is kept.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::diff::FileChange;
use crate::journal::{self, Journal};

/// What a session does with the writes that pass through it.
enum Session {
    /// A dry run: nothing is written; the changes are collected.
    Preview {
        /// Each file's change, in the order first touched; `resolved` is the
        /// path reads use (symbolic links resolved).
        changes: Vec<(PathBuf, FileChange)>,
        /// Changes outside files (a keychain entry), described.
        elsewhere: Vec<String>,
    },
    /// A real run: each file's previous bytes go into the journal.
    Record(Box<Journal>),
}

static SESSION: Mutex<Option<Session>> = Mutex::new(None);

fn session() -> MutexGuard<'static, Option<Session>> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts a dry run: until [`finish`], no file is written.
pub fn begin_preview() {
    *session() = Some(Session::Preview {
        changes: Vec::new(),
        elsewhere: Vec::new(),
    });
}

/// Starts recording the edit of `command` (its name, as `undo --list`
/// shows it), made at `place`, into the journal under `state_dir`.
pub fn begin_recording(state_dir: &Path, command: &str, place: journal::Place) {
    *session() = Some(Session::Record(Box::new(Journal::new(
        state_dir, command, place,
    ))));
}

/// Whether this is a dry run: writers must not write.
pub fn previewing() -> bool {
    matches!(&*session(), Some(Session::Preview { .. }))
}

/// In a dry run, the text an earlier previewed write left at `resolved`
/// (`Some(None)`: the file would not exist); `None` when untouched.
pub fn previewed(resolved: &Path) -> Option<Option<String>> {
    match &*session() {
        Some(Session::Preview { changes, .. }) => changes
            .iter()
            .find(|(path, _)| path == resolved)
            .map(|(_, change)| change.after.clone()),
        _ => None,
    }
}

/// Records, in a dry run, that the file at `resolved` (shown as
/// `change.path`) would change as `change` says. A second change of the
/// same file keeps the first `before`.
pub fn preview(resolved: &Path, change: FileChange) {
    if let Some(Session::Preview { changes, .. }) = &mut *session() {
        match changes.iter_mut().find(|(path, _)| path == resolved) {
            Some((_, earlier)) => earlier.after = change.after,
            None => changes.push((resolved.to_path_buf(), change)),
        }
    }
}

/// Records, in a dry run, a change outside files (`what` describes it).
pub fn preview_elsewhere(what: String) {
    if let Some(Session::Preview { elsewhere, .. }) = &mut *session() {
        elsewhere.push(what);
    }
}

/// Records, in a dry run, that the file at `path` (mode `mode`) would be
/// made readable by its owner alone.
pub fn preview_private(path: &Path, mode: u32) {
    preview_elsewhere(format!(
        "make `{}` readable by you alone (mode {:o} → {:o})",
        path.display(),
        mode & 0o777,
        mode & 0o700
    ));
}

/// Tells the journal that `resolved` was just replaced: it held `before`
/// (`None`: it did not exist) and now holds the concatenation of `after`.
/// A journal that cannot keep the copy does not fail the edit, which is
/// made already; [`finish`] says so.
pub fn written(resolved: &Path, before: Option<&str>, after: &[&[u8]]) {
    if let Some(Session::Record(journal)) = &mut *session() {
        journal.keep(resolved, before, after);
    }
}

/// Keeps no copies of this edit's files for undo, for `reason` (the old
/// bytes hold a secret the edit moves where no plaintext copy may stay).
pub fn keep_no_copies(reason: &str) {
    if let Some(Session::Record(journal)) = &mut *session() {
        journal.forgo(reason);
    }
}

/// Keeps no copies of this edit's files for undo, for `reason`, and drops
/// every earlier edit whose copies hold `secret`: this edit moved it where
/// no plaintext copy may stay (the keychain), or removed it.
pub fn keep_no_copies_of(reason: &str, secret: &str) {
    if let Some(Session::Record(journal)) = &mut *session() {
        journal.forgo_holding(reason, secret);
    }
}

/// How a session ended.
#[derive(Debug)]
pub enum Finished {
    /// No session was begun.
    Nothing,
    /// A dry run: what would change.
    Previewed {
        /// Each file that would change.
        changes: Vec<FileChange>,
        /// Changes outside files.
        elsewhere: Vec<String>,
    },
    /// A real run, and what the journal kept of it.
    Recorded(journal::Kept),
}

/// Ends the session.
pub fn finish() -> Finished {
    match session().take() {
        None => Finished::Nothing,
        Some(Session::Preview { changes, elsewhere }) => Finished::Previewed {
            changes: changes
                .into_iter()
                .map(|(_, change)| change)
                .filter(FileChange::changes)
                .collect(),
            elsewhere,
        },
        Some(Session::Record(journal)) => Finished::Recorded(journal.close()),
    }
}
