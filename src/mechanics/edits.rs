//! One edit session: what a command (or one `serve` call) does to files,
//! gathered in one place. Every writer is handed an [`Edit`] and gives it
//! what it would do (a file's new text, a keychain entry, a `chmod`, a
//! folder), and the session decides:
//! - a preview (a dry run, `serve`'s gate) makes none of it and collects
//!   each change instead; later reads through the session
//!   (`Reads for Edit`) see the previewed text, so a command that
//!   writes a file twice previews what it would really write;
//! - a recording makes it and keeps each file's previous bytes in the undo
//!   journal ([`crate::mechanics::journal`]), for `mcpenv undo`;
//! - a plain session (library use, `MCPENV_UNDO=off`, reads) makes it and
//!   keeps nothing.
//!
//! A session is a value, owned by `ops::Context`: two `serve` calls at once
//! each have their own. Its writes may happen on any thread.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::mechanics::diff::FileChange;
use crate::mechanics::document::JsonDocument;
use crate::mechanics::fsx::{self, EditLock, NewMode, Reads, Stamp, TextEditError};
use crate::mechanics::journal::{self, Digests, Journal, Place};

/// An edit session: a cheap handle, cloned along with the context that
/// owns it (the clones are the same session).
#[derive(Clone)]
pub struct Edit(Arc<Session>);

struct Session {
    mode: Mutex<Mode>,
    /// The documents the session's writers read (and the values they
    /// wrote into them), for [`Edit::take_read`].
    read: Mutex<Vec<Read>>,
    /// The thread removing the old edits the journal set aside to make
    /// room for this one ([`Journal::make_room`]), joined when the session
    /// ends.
    evicting: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// A JSON file a writer of the session read and parsed for its edit, and
/// the values it wrote into it: what the shield learns from, instead of
/// reading and parsing the file once more after the write.
pub struct Read {
    /// The file (symbolic links resolved).
    pub resolved: PathBuf,
    /// The file as the writer read it, before its change.
    pub document: Arc<JsonDocument>,
    /// The values the writer put into it.
    pub written: Vec<serde_json::Value>,
}

/// What a session does with the writes that pass through it.
enum Mode {
    /// Writes are made, nothing is kept.
    Plain,
    /// Nothing is written; the changes are collected.
    Preview {
        /// Each file's change, in the order first touched; `resolved` is the
        /// path reads use (symbolic links resolved).
        changes: Vec<(PathBuf, FileChange)>,
        /// Changes outside files (a keychain entry), described.
        elsewhere: Vec<String>,
    },
    /// Writes are made, and each file's previous bytes go into the journal
    /// under `state_dir`.
    Record {
        journal: Box<Journal>,
        state_dir: PathBuf,
    },
}

/// A file change a writer proposes in a preview: the path reads use
/// (symbolic links resolved) and the change itself.
pub type Proposed = Option<(PathBuf, FileChange)>;

impl fmt::Debug for Edit {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match &*self.mode() {
            Mode::Plain => "plain",
            Mode::Preview { .. } => "preview",
            Mode::Record { .. } => "record",
        };
        formatter.debug_tuple("Edit").field(&mode).finish()
    }
}

impl Edit {
    /// A session that writes and keeps nothing for undo.
    pub fn plain() -> Self {
        Self::with(Mode::Plain)
    }

    /// A dry run: until [`Edit::finish`], nothing is written.
    pub fn preview() -> Self {
        Self::with(Mode::Preview {
            changes: Vec::new(),
            elsewhere: Vec::new(),
        })
    }

    /// A real run recording the edit of `command` (its name, as
    /// `undo --list` shows it) into the journal under `state_dir`.
    pub fn recording(state_dir: &Path, command: &str, place: Place) -> Self {
        Self::with(Mode::Record {
            journal: Box::new(Journal::new(state_dir, command, place)),
            state_dir: state_dir.to_path_buf(),
        })
    }

    fn with(mode: Mode) -> Self {
        Self(Arc::new(Session {
            mode: Mutex::new(mode),
            read: Mutex::default(),
            evicting: Mutex::default(),
        }))
    }

    fn mode(&self) -> MutexGuard<'_, Mode> {
        self.0.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps what a writer read of `resolved` for its edit (the document
    /// before its change, and the values it wrote), replacing what an
    /// earlier write of the same file left: the newer reading holds the
    /// earlier write.
    pub fn keep_read(
        &self,
        resolved: &Path,
        document: Arc<JsonDocument>,
        written: Vec<serde_json::Value>,
    ) {
        let mut read = self.0.read.lock().unwrap_or_else(PoisonError::into_inner);
        let mut written = written;
        if let Some(index) = read.iter().position(|kept| kept.resolved == resolved) {
            let earlier = read.remove(index);
            written.extend(earlier.written);
        }
        read.push(Read {
            resolved: resolved.to_path_buf(),
            document,
            written,
        });
    }

    /// Takes what a writer of this session read of `resolved`
    /// ([`Edit::keep_read`]), if one did.
    pub fn take_read(&self, resolved: &Path) -> Option<Read> {
        let mut read = self.0.read.lock().unwrap_or_else(PoisonError::into_inner);
        let index = read.iter().position(|kept| kept.resolved == resolved)?;
        Some(read.remove(index))
    }

    /// Tells a recording session that `resolved`, read in the state
    /// `stamp`, is about to be replaced by a rename: the journal keeps its
    /// previous bytes by hard-linking that inode, at no cost, where it can
    /// ([`Journal::stage`]). [`Edit::not_replaced`] when the rename does not
    /// happen after all. The oldest edits past the journal's bounds are
    /// removed meanwhile, on another thread ([`Journal::make_room`]).
    pub fn before_replacing(&self, resolved: &Path, stamp: &Stamp) {
        if let Mode::Record { journal, state_dir } = &mut *self.mode()
            && stamp.single_link()
            && let Some(inode) = stamp.inode()
        {
            let _lock = journal_lock(state_dir);
            if journal.stage(resolved, inode) {
                self.remove_meanwhile(journal.make_room());
            }
        }
    }

    /// Removes `set_aside` (old edits) on a thread of its own, joined at
    /// [`Edit::finish`]; here, when no thread can be had.
    fn remove_meanwhile(&self, set_aside: Vec<PathBuf>) {
        if set_aside.is_empty() {
            return;
        }
        let mut evicting = self
            .0
            .evicting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(earlier) = evicting.take() {
            let _ = earlier.join();
        }
        let ahead = set_aside.clone();
        match std::thread::Builder::new().spawn(move || journal::remove_set_aside(ahead)) {
            Ok(thread) => *evicting = Some(thread),
            Err(_) => journal::remove_set_aside(set_aside),
        }
    }

    /// The rename [`Edit::before_replacing`] announced did not happen.
    pub fn not_replaced(&self, resolved: &Path) {
        if let Mode::Record { journal, state_dir } = &mut *self.mode() {
            let _lock = journal_lock(state_dir);
            journal.unstage(resolved);
        }
    }

    /// The one question of the session, asked here alone: writers hand
    /// it both ways and it picks.
    fn previewing(&self) -> bool {
        matches!(&*self.mode(), Mode::Preview { .. })
    }

    /// A write of one file, given both ways with the `work` they share (a
    /// change to plan): in a preview, `preview` computes the result and the
    /// change from what it reads through the session, and the change is
    /// kept; otherwise `write` writes (under its locks) and tells the
    /// session through [`Edit::written`].
    pub fn write_file<W, T, E>(
        &self,
        work: W,
        preview: impl FnOnce(W) -> Result<(T, Proposed), E>,
        write: impl FnOnce(W) -> Result<T, E>,
    ) -> Result<T, E> {
        if !self.previewing() {
            return write(work);
        }
        let (result, proposed) = preview(work)?;
        if let Some((resolved, change)) = proposed {
            self.keep_preview(&resolved, change);
        }
        Ok(result)
    }

    /// Rewrites the text file `path` with `change(old)` ([`fsx::edit_text`]:
    /// under mcpenv's lock, atomically, redone when another program wrote
    /// meanwhile); a preview reads through the session and takes no lock.
    /// Returns whether it wrote (would write).
    pub fn edit_text<E>(
        &self,
        state_dir: &Path,
        path: &Path,
        new_mode: NewMode,
        change: impl FnMut(Option<&str>) -> Result<Option<String>, E>,
    ) -> Result<bool, TextEditError<E>> {
        self.write_file(
            change,
            |mut change| {
                let resolved = fsx::resolve_symlinks(path).map_err(TextEditError::Read)?;
                let old = self.read_text(&resolved).map_err(TextEditError::Read)?;
                let Some(new) = change(old.as_deref()).map_err(TextEditError::Change)? else {
                    return Ok((false, None));
                };
                let change = FileChange {
                    path: path.to_path_buf(),
                    before: old,
                    after: Some(new),
                };
                Ok((change.changes(), Some((resolved, change))))
            },
            |change| {
                fsx::edit_text(
                    state_dir,
                    path,
                    new_mode,
                    change,
                    |resolved, before, after| {
                        self.written(resolved, before, &[after.as_bytes()]);
                    },
                )
            },
        )
    }

    /// A change outside files (a keychain entry): in a preview, `preview`
    /// says what it would do (`None`: nothing would change) and what to
    /// answer, and the description is kept; otherwise `act` does it.
    pub fn change_elsewhere<T, E>(
        &self,
        preview: impl FnOnce() -> (Option<String>, T),
        act: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        if !self.previewing() {
            return act();
        }
        let (described, result) = preview();
        if let (Some(what), Mode::Preview { elsewhere, .. }) = (described, &mut *self.mode()) {
            elsewhere.push(what);
        }
        Ok(result)
    }

    /// Makes the file at `path` (mode `mode`) readable by its owner alone
    /// with `chmod`; a preview says it would and answers `shown`.
    pub fn make_private<T, E>(
        &self,
        path: &Path,
        mode: u32,
        shown: T,
        chmod: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        self.change_elsewhere(
            || {
                let what = format!(
                    "make `{}` readable by you alone (mode {:o} → {:o})",
                    path.display(),
                    mode & 0o777,
                    mode & 0o700
                );
                (Some(what), shown)
            },
            chmod,
        )
    }

    /// Work no dry run does nor shows: a folder a write needs, mcpenv's
    /// own bookkeeping (its export manifest, tidying what a killed run
    /// left, forgetting an undone edit).
    pub fn unshown<E>(&self, work: impl FnOnce() -> Result<(), E>) -> Result<(), E> {
        if self.previewing() {
            return Ok(());
        }
        work()
    }

    /// A write made only to learn whether a store takes one (a keychain
    /// entry written and deleted): a preview runs `instead`, which reads.
    pub fn trial_write<T>(&self, instead: impl FnOnce() -> T, write: impl FnOnce() -> T) -> T {
        if self.previewing() {
            instead()
        } else {
            write()
        }
    }

    /// Keeps, in a preview, that the file at `resolved` (shown as
    /// `change.path`) would change as `change` says. A second change of the
    /// same file keeps the first `before`.
    fn keep_preview(&self, resolved: &Path, change: FileChange) {
        if let Mode::Preview { changes, .. } = &mut *self.mode() {
            match changes.iter_mut().find(|(path, _)| path == resolved) {
                Some((_, earlier)) => earlier.after = change.after,
                None => changes.push((resolved.to_path_buf(), change)),
            }
        }
    }

    /// Tells the journal that `resolved` was just replaced: it held
    /// `before` (`None`: it did not exist) and now holds the concatenation
    /// of `after`. A journal that cannot keep the copy does not fail the
    /// edit, which is made already; [`Edit::finish`] says so.
    pub fn written(&self, resolved: &Path, before: Option<&str>, after: &[&[u8]]) {
        self.written_as(resolved, before, after, None, None);
    }

    /// [`Edit::written`] by a writer that knows whose the change is
    /// (`owner`; `None`: the journal finds out from the bytes) and may
    /// have worked out the journal's [`Digests`] of `before` and `after`
    /// already (`None`: the journal works them out).
    pub fn written_as(
        &self,
        resolved: &Path,
        before: Option<&str>,
        after: &[&[u8]],
        owner: Option<journal::Owner>,
        digests: Option<Digests>,
    ) {
        if let Mode::Record { journal, state_dir } = &mut *self.mode() {
            let _lock = journal_lock(state_dir);
            journal.keep_digested(resolved, before, after, owner, digests);
        }
    }

    /// [`Edit::written_as`] for the first write of `~/.claude.json`
    /// (`resolved`) in this session, made of pieces of the old file `old`
    /// (open) and summed up ahead as `spliced`
    /// ([`journal::spliced`]); whether the session holds an earlier write
    /// of it is [`Edit::wrote`].
    pub fn written_spliced(
        &self,
        resolved: &Path,
        old: &std::fs::File,
        spliced: io::Result<journal::Spliced>,
        owner: journal::Owner,
    ) {
        if let Mode::Record { journal, state_dir } = &mut *self.mode() {
            let _lock = journal_lock(state_dir);
            journal.keep_spliced(resolved, old, spliced, owner);
        }
    }

    /// Whether the journal of this session holds a write of `resolved`
    /// already (its first bytes are kept: a later write is compared with
    /// those, not with what it replaces).
    pub fn wrote(&self, resolved: &Path) -> bool {
        matches!(&*self.mode(), Mode::Record { journal, .. } if journal.holds(resolved))
    }

    /// Whether [`Edit::written_as`] would use [`Digests`] worked out
    /// ahead: the session records, and its journal still keeps copies.
    pub fn wants_digests(&self) -> bool {
        matches!(&*self.mode(), Mode::Record { journal, .. } if journal.keeps_copies())
    }

    /// Keeps no copies of this edit's files for undo, for `reason` (the old
    /// bytes hold a secret the edit moves where no plaintext copy may stay).
    pub fn keep_no_copies(&self, reason: &str) {
        if let Mode::Record { journal, .. } = &mut *self.mode() {
            journal.forgo(reason);
        }
    }

    /// Keeps no copies of this edit's files for undo, for `reason`, and
    /// drops every earlier edit whose copies hold `secret`: this edit moved
    /// it where no plaintext copy may stay (the keychain), or removed it.
    pub fn keep_no_copies_of(&self, reason: &str, secret: &str) {
        if let Mode::Record { journal, .. } = &mut *self.mode() {
            journal.forgo_holding(reason, secret);
        }
    }

    /// Ends the session (it is plain from then on) and says how it went.
    pub fn finish(&self) -> Finished {
        let evicting = self
            .0
            .evicting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = evicting {
            let _ = thread.join();
        }
        match std::mem::replace(&mut *self.mode(), Mode::Plain) {
            Mode::Plain => Finished::Nothing,
            Mode::Preview { changes, elsewhere } => Finished::Previewed {
                changes: changes
                    .into_iter()
                    .map(|(_, change)| change)
                    .filter(FileChange::changes)
                    .collect(),
                elsewhere,
            },
            Mode::Record { journal, state_dir } => {
                let _lock = journal_lock(&state_dir);
                Finished::Recorded(journal.close())
            }
        }
    }

    /// Ends the session if it is a preview, with what would change (the
    /// files, then the changes elsewhere); `None`, the session going on,
    /// when it is not.
    pub fn finish_preview(&self) -> Option<(Vec<FileChange>, Vec<String>)> {
        if !self.previewing() {
            return None;
        }
        match self.finish() {
            Finished::Previewed { changes, elsewhere } => Some((changes, elsewhere)),
            Finished::Nothing | Finished::Recorded(_) => None,
        }
    }
}

/// The lock every session takes to change the journal: one edit's new
/// folder is never taken, before its record is written, for a leftover by
/// another session (a `serve` call, a CLI edit) closing at the same time.
/// Without it (the state folder is unusable) the journal is written all
/// the same: a lost undo copy never fails an edit.
fn journal_lock(state_dir: &Path) -> Option<EditLock> {
    EditLock::acquire(state_dir, &journal::root(state_dir), fsx::LOCK_TIMEOUT).ok()
}

impl Reads for Edit {
    /// The file at `resolved` as on disk ([`fsx::read_regular`]), or, in a
    /// preview, the text an earlier previewed write left there.
    fn read_regular(&self, resolved: &Path) -> io::Result<Option<Vec<u8>>> {
        if let Mode::Preview { changes, .. } = &*self.mode()
            && let Some((_, change)) = changes.iter().find(|(path, _)| path == resolved)
        {
            return Ok(change.after.clone().map(String::into_bytes));
        }
        fsx::read_regular(resolved)
    }

    fn keeps_caches(&self, resolved: &Path) -> bool {
        match &*self.mode() {
            Mode::Preview { changes, .. } => !changes.iter().any(|(path, _)| path == resolved),
            Mode::Plain | Mode::Record { .. } => true,
        }
    }
}

/// How a session ended.
#[derive(Debug)]
pub enum Finished {
    /// A plain session (or one finished already): nothing to say.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_writes_nothing_and_reads_its_own_changes() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "one\n").unwrap();
        let edit = Edit::preview();
        for line in ["two\n", "three\n"] {
            let wrote = edit
                .edit_text(&state, &file, NewMode::Umasked(0o644), |old| {
                    Ok::<_, ()>(Some(format!("{}{line}", old.unwrap_or_default())))
                })
                .unwrap();
            assert!(wrote);
        }
        let resolved = fsx::resolve_symlinks(&file).unwrap();
        assert_eq!(
            edit.read_text(&resolved).unwrap().as_deref(),
            Some("one\ntwo\nthree\n")
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n");
        assert!(!state.exists(), "a preview takes no lock");
        let Finished::Previewed { changes, .. } = edit.finish() else {
            panic!("a preview finishes as one");
        };
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].before.as_deref(), Some("one\n"));
        assert_eq!(changes[0].after.as_deref(), Some("one\ntwo\nthree\n"));
    }

    #[test]
    fn a_preview_describes_what_it_would_do_elsewhere_and_does_none_of_it() {
        let edit = Edit::preview();
        let answer = edit
            .change_elsewhere(
                || (Some("keep a value".to_string()), 7),
                || Err::<u8, ()>(()),
            )
            .unwrap();
        assert_eq!(answer, 7);
        edit.unshown(|| Err::<(), ()>(())).unwrap();
        assert!(edit.trial_write(|| true, || false));
        let Finished::Previewed { elsewhere, .. } = edit.finish() else {
            panic!("a preview finishes as one");
        };
        assert_eq!(elsewhere, ["keep a value"]);
    }

    #[test]
    fn a_plain_session_writes_and_finishes_with_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        let edit = Edit::plain();
        edit.edit_text(
            &dir.path().join("state"),
            &file,
            NewMode::Exact(0o600),
            |_| Ok::<_, ()>(Some("new\n".to_string())),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
        assert!(edit.finish_preview().is_none());
        assert!(matches!(edit.finish(), Finished::Nothing));
    }

    #[test]
    fn sessions_recording_at_once_each_keep_their_whole_edit() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let sessions: Vec<_> = (0..12)
            .map(|session| {
                let (dir, state) = (dir.path().to_path_buf(), state.clone());
                std::thread::spawn(move || {
                    let place = Place {
                        project: dir.clone(),
                        project_dirs: vec![dir.clone()],
                        shared: dir.join(".claude.json"),
                    };
                    let edit = Edit::recording(&state, &format!("edit {session}"), place);
                    for file in 0..2 {
                        let path = dir.join(format!("{session}-{file}.txt"));
                        edit.edit_text(&state, &path, NewMode::Exact(0o600), |_| {
                            Ok::<_, ()>(Some("new\n".to_string()))
                        })
                        .unwrap();
                    }
                    edit.finish()
                })
            })
            .collect();
        for session in sessions {
            let Finished::Recorded(kept) = session.join().unwrap() else {
                panic!("a recording finishes as one");
            };
            assert_eq!(kept.problem, None);
            assert_eq!(kept.files, 2);
        }
        let edits = journal::edits(&state).unwrap();
        assert_eq!(
            edits.len(),
            12,
            "no session's edit was taken for a leftover"
        );
        assert!(edits.iter().all(|edit| edit.record.files.len() == 2));
    }

    #[test]
    fn sessions_are_apart_and_clones_are_one() {
        let preview = Edit::preview();
        let plain = Edit::plain();
        let same = preview.clone();
        assert!(same.previewing());
        assert!(!plain.previewing());
        assert!(preview.finish_preview().is_some());
        assert!(!same.previewing(), "a finished session is plain");
    }
}
