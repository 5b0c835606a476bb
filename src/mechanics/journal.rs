//! The undo journal: for each of the last edits mcpenv made, the previous
//! bytes of every file it changed, so `mcpenv undo` can put them back.
//!
//! It lives in mcpenv's state directory, under `undo/` (mode 0700), one
//! directory per edit named by its sequence number, holding `edit.json` (what
//! was changed, and an XXH3-128 digest of each file as the edit left it, so undo can
//! refuse when a file changed since) and one `N.before` copy per file
//! (mode 0600: a `.env` copy holds secrets). The copy is written from the
//! bytes the edit read anyway, and not synced: a copy lost in a crash costs
//! an undo, never the edit. At most [`KEPT_EDITS`] edits and about
//! [`KEPT_BYTES`] of copies are kept, the newest edit always.
//!
//! Each edit records where it was made ([`Place`]): the project (the
//! directory Claude Code keys local scope by) and, for each file, whether it
//! is the project's or the user's own ([`Owner`]), so `undo` in one project
//! never takes back another's edit. `~/.claude.json` holds every project's
//! local scope and the user's: for it the edit also keeps the bytes it wrote
//! (`N.after`, only the span that differs from the previous bytes), so undo
//! can take back just the members the edit changed when a later edit (or
//! Claude Code) changed others since. An undo is kept too, as an edit that
//! names the one it took back (`undoes`), so it can be redone.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::mechanics::fsx;
use crate::mechanics::fsx::spliced::{self, Piece};

/// How many edits are kept.
pub const KEPT_EDITS: usize = 20;

/// How many bytes of copies the kept edits may hold together (the newest
/// edit is kept whatever its size).
pub const KEPT_BYTES: u64 = 128 << 20;

/// The name of an edit's record in its directory.
const RECORD: &str = "edit.json";

/// The format of the records this version writes: 2 added `project`,
/// `undoes` and each file's `owner` and `after`.
pub const SCHEMA_VERSION: u32 = 2;

/// What an edit changed, as `edit.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EditRecord {
    /// The format of this record.
    pub schema_version: u32,
    /// The command that made the edit (`add`, `secrets move`).
    pub command: String,
    /// When, in seconds since the Unix epoch.
    pub recorded_at: u64,
    /// The project it was made in (the directory Claude Code keys local
    /// scope by); `None` in a record written before mcpenv kept it.
    #[serde(default)]
    pub project: Option<PathBuf>,
    /// For an undo: the number of the edit it took back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u64>,
    /// Each file changed, in the order first written.
    pub files: Vec<FileRecord>,
}

impl EditRecord {
    /// Whether the edit changed the user's own files alone, which belong
    /// to every project (a record without a project is never taken to).
    pub fn only_users_files(&self) -> bool {
        self.project.is_some() && self.files.iter().all(|file| file.owner == Owner::User)
    }
}

/// Whose a changed file (or, in `~/.claude.json`, the changed members) is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The project's: a file in it, or its local scope in `~/.claude.json`
    /// (also the reading of a record written before owners were kept).
    #[default]
    Project,
    /// The user's own: user scope in `~/.claude.json`, the user's dotenv
    /// store, another client's user file.
    User,
}

/// Where an edit is made.
#[derive(Debug, Clone)]
pub struct Place {
    /// The project: the directory Claude Code keys local scope by (the
    /// repository root, else the working directory).
    pub project: PathBuf,
    /// The directories whose files are the project's.
    pub project_dirs: Vec<PathBuf>,
    /// `~/.claude.json` (symbolic links resolved), shared by every project.
    pub shared: PathBuf,
}

impl Place {
    /// Whose a file other than `~/.claude.json` is: the project's when it
    /// lies in the project.
    fn owner_by_path(&self, resolved: &Path) -> Owner {
        if self
            .project_dirs
            .iter()
            .any(|dir| resolved.starts_with(dir))
        {
            Owner::Project
        } else {
            Owner::User
        }
    }

    /// In `~/.claude.json`: the project's when the change touches
    /// `projects` (its own entry, or, conservatively, any), else the user's.
    /// Found in the bytes before the edit, where the change replaced
    /// `changed`: the writer checked both texts already, so members are
    /// found without a second parse, which would cost more than the rest
    /// of the edit. Only when `projects` did not exist before is the new
    /// text (`after`) looked at.
    fn shared_owner(
        &self,
        before: &[u8],
        changed: std::ops::Range<usize>,
        after: impl FnOnce() -> Vec<u8>,
    ) -> Owner {
        let member = |text: &[u8]| {
            let text = std::str::from_utf8(text).ok()?;
            let is_object = text
                .trim_start_matches('\u{feff}')
                .trim_start()
                .starts_with('{');
            Some((
                is_object,
                crate::mechanics::document::root_member_of_valid(text, "projects"),
            ))
        };
        match member(before) {
            Some((_, Some(projects)))
                if projects.key_span.start > changed.end
                    || changed.start > projects.value_span.end =>
            {
                Owner::User
            }
            Some((_, Some(_))) => Owner::Project,
            _ => match member(&after()) {
                Some((true, None)) => Owner::User,
                _ => Owner::Project,
            },
        }
    }
}

/// One file an edit changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRecord {
    /// The file written (symbolic links resolved).
    pub path: PathBuf,
    /// The copy of its previous bytes, in the edit's directory; `None`
    /// when the edit created the file.
    pub before: Option<String>,
    /// XXH3-128 of the previous bytes, to check the copy.
    pub before_digest: Option<String>,
    /// XXH3-128 of the bytes the edit left.
    pub after_digest: String,
    /// Whether the edit removed the file (only an undo does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_absent: bool,
    /// Whose the change is.
    #[serde(default)]
    pub owner: Owner,
    /// For `~/.claude.json`: the bytes the edit left, as the span that
    /// differs from the previous bytes (for undo member by member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AfterCopy>,
}

/// The bytes an edit left in a file, kept as what differs from its
/// previous bytes: they are the first `kept_prefix` and last `kept_suffix`
/// bytes of those, with the copy `middle` between.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AfterCopy {
    /// How many leading bytes are the previous file's.
    pub kept_prefix: usize,
    /// How many trailing bytes are the previous file's.
    pub kept_suffix: usize,
    /// The copy of the bytes between, in the edit's directory; `None`
    /// when there are none.
    pub middle: Option<String>,
}

/// The hex XXH3-128 digest of the concatenation of `pieces`: enough to
/// tell whether a file changed (nobody forges a collision against their own
/// undo), and fast on a 25 MB `~/.claude.json`.
pub fn digest(pieces: &[&[u8]]) -> String {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for piece in pieces {
        hasher.update(piece);
    }
    format!("{:032x}", hasher.digest128())
}

/// The digests the journal keeps of one write of a file: of the bytes it
/// held before (`None`: it did not exist) and of the bytes written. What
/// [`Journal::keep_owned`] works out itself when not given them; a writer
/// with a core to spare works them out while its write waits on the disk
/// (`fsync`), so that the edit does not wait for two passes over the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests {
    before: Option<String>,
    after: String,
}

impl Digests {
    /// The digests of `before` and of the concatenation of `after`.
    pub fn of(before: Option<&[u8]>, after: &[&[u8]]) -> Self {
        Self {
            before: before.map(|bytes| digest(&[bytes])),
            after: digest(after),
        }
    }
}

/// What the journal keeps of a write of `~/.claude.json` made of pieces of
/// the old file ([`Piece`]), worked out from the open old file without
/// holding it: the [`Digests`] of the old and the new bytes, and the span of
/// the new bytes that differs from the old ones, as [`Journal::keep_after`]
/// finds it from the whole texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    digests: Digests,
    old_len: u64,
    kept_prefix: usize,
    kept_suffix: usize,
    middle: Vec<u8>,
}

/// [`Spliced`] of the write of `pieces` over the `old_len` bytes of `old`:
/// each text digested through one buffer, and the common ends compared
/// from where the pieces say they start to differ, a little at a time.
pub fn spliced(old: &File, old_len: u64, pieces: &[Piece<'_>]) -> io::Result<Spliced> {
    let hash = |pieces: &[Piece<'_>]| -> io::Result<String> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        spliced::stream(old, pieces, |chunk| hasher.update(chunk))?;
        Ok(format!("{:032x}", hasher.digest128()))
    };
    let before = hash(&[Piece::Old(0..old_len)])?;
    let after = hash(pieces)?;
    let new_len = spliced::len_of(pieces);
    let old_at = |at: u64, buffer: &mut [u8]| spliced::read_exact_at(old, buffer, at);
    let new_at = |at: u64, buffer: &mut [u8]| {
        let filled = spliced::read_at(old, pieces, at, buffer)?;
        if filled == buffer.len() {
            Ok(())
        } else {
            Err(io::Error::from(io::ErrorKind::UnexpectedEof))
        }
    };
    let shorter = old_len.min(new_len);
    // The first piece, when it is the old file's start, is shared whole;
    // the last, when it is the old file's end, likewise.
    let mut prefix = match pieces.first() {
        Some(Piece::Old(range)) if range.start == 0 => range.end.min(shorter),
        _ => 0,
    };
    let mut chunk = 256u64;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    while prefix < shorter {
        let take = chunk.min(shorter - prefix);
        let size = usize::try_from(take).map_err(io::Error::other)?;
        a.resize(size, 0);
        b.resize(size, 0);
        old_at(prefix, &mut a)?;
        new_at(prefix, &mut b)?;
        let same = common_prefix(&a, &b) as u64;
        prefix += same;
        if same < take {
            break;
        }
        chunk = (chunk * 2).min(64 << 10);
    }
    let limit = shorter - prefix;
    let mut suffix = match pieces.last() {
        Some(Piece::Old(range)) if range.end == old_len => (range.end - range.start).min(limit),
        _ => 0,
    };
    let mut chunk = 256u64;
    while suffix < limit {
        let take = chunk.min(limit - suffix);
        let size = usize::try_from(take).map_err(io::Error::other)?;
        a.resize(size, 0);
        b.resize(size, 0);
        old_at(old_len - suffix - take, &mut a)?;
        new_at(new_len - suffix - take, &mut b)?;
        let same = common_suffix(&a, &b) as u64;
        suffix += same;
        if same < take {
            break;
        }
        chunk = (chunk * 2).min(64 << 10);
    }
    let mut middle =
        vec![0u8; usize::try_from(new_len - suffix - prefix).map_err(io::Error::other)?];
    new_at(prefix, &mut middle)?;
    Ok(Spliced {
        digests: Digests {
            before: Some(before),
            after,
        },
        old_len,
        kept_prefix: usize::try_from(prefix).map_err(io::Error::other)?,
        kept_suffix: usize::try_from(suffix).map_err(io::Error::other)?,
        middle,
    })
}

/// The bytes a file held before an edit: as read, or the old file, open.
enum Before<'a> {
    Text(&'a str),
    File(&'a File, u64),
}

/// The journal's directory in mcpenv's state directory.
pub fn root(state_dir: &Path) -> PathBuf {
    state_dir.join("undo")
}

/// The edit being recorded.
#[derive(Debug)]
pub struct Journal {
    root: PathBuf,
    place: Place,
    /// Its directory, once the first file is kept.
    dir: Option<PathBuf>,
    record: EditRecord,
    /// Why a copy could not be kept, if one could not.
    problem: Option<String>,
    /// Why no copy is to be kept, if the edit said so.
    forgone: Option<String>,
    /// Secrets the edit moved out of plaintext or removed: no earlier
    /// edit's copy may keep them either.
    scrubbed: Vec<String>,
    /// Copies made by hard-linking a file's old inode into the edit's
    /// journal before the file was replaced ([`Journal::stage`]): the
    /// file and the copy, until [`Journal::keep`] takes them.
    staged: Vec<(PathBuf, PathBuf)>,
    /// Whether [`Journal::make_room`] ran already.
    made_room: bool,
}

/// What the journal kept of an edit.
#[derive(Debug, Default)]
pub struct Kept {
    /// How many files the edit changed and the journal can restore.
    pub files: usize,
    /// Why undo will not be able to restore this edit, if it will not.
    pub problem: Option<String>,
    /// Why the edit keeps no copies on purpose, if it does not.
    pub forgone: Option<String>,
}

impl Journal {
    /// A journal for the edit `command` makes at `place`, under `state_dir`.
    pub fn new(state_dir: &Path, command: &str, place: Place) -> Self {
        Self {
            root: root(state_dir),
            record: EditRecord {
                schema_version: SCHEMA_VERSION,
                command: command.to_string(),
                recorded_at: now(),
                project: Some(place.project.clone()),
                undoes: None,
                files: Vec::new(),
            },
            place,
            dir: None,
            problem: None,
            forgone: None,
            scrubbed: Vec::new(),
            staged: Vec::new(),
            made_room: false,
        }
    }

    /// Keeps the previous bytes of `resolved`, about to be replaced by a
    /// rename, at no cost: its inode (`inode`, as read, with no other
    /// name) is hard-linked into the journal, where it stays once the
    /// rename takes the file's name away from it, and [`Journal::keep`]
    /// moves it into the edit's directory. Returns whether it did; when it
    /// cannot (another file system, a journal that cannot be written),
    /// [`Journal::keep`] writes a copy as before. A staged copy the edit
    /// does not use is dropped by [`Journal::unstage`]; one a killed run
    /// left is removed by a later edit ([`evict`]).
    pub fn stage(&mut self, resolved: &Path, inode: fsx::os::Identity) -> bool {
        if self.problem.is_some()
            || self.forgone.is_some()
            || self.record.files.iter().any(|file| file.path == resolved)
        {
            return false;
        }
        self.unstage(resolved);
        // In the journal's own folder, not yet the edit's: an edit folder
        // without its record is a leftover another session may remove.
        if self.create_root().is_err() {
            return false;
        }
        let copy = self.root.join(format!(
            "{STAGED}{}.{}.{}",
            std::process::id(),
            now_nanos(),
            self.staged.len()
        ));
        if fs::hard_link(resolved, &copy).is_err() {
            return false;
        }
        // The name may have been given to another file in between.
        match fs::symlink_metadata(&copy) {
            Ok(metadata) if fsx::os::identity(&metadata) == Some(inode) => {
                self.staged.push((resolved.to_path_buf(), copy));
                true
            }
            _ => {
                let _ = fs::remove_file(&copy);
                false
            }
        }
    }

    /// Drops the copy [`Journal::stage`] made of `resolved`, if any: the
    /// file was not replaced after all.
    pub fn unstage(&mut self, resolved: &Path) {
        if let Some(index) = self.staged.iter().position(|(path, _)| path == resolved) {
            let (_, copy) = self.staged.remove(index);
            let _ = fs::remove_file(copy);
        }
    }

    fn drop_staged(&mut self) {
        for (_, copy) in self.staged.drain(..) {
            let _ = fs::remove_file(copy);
        }
    }

    /// Makes room, once, for this edit's staged copies ([`Journal::stage`]),
    /// the rename that replaces their files being about to happen: the
    /// oldest edits that [`Journal::close`] would drop past the bounds
    /// once this one is kept are set aside now (renamed out of the list of
    /// edits, under the journal's lock like every change to it), and
    /// returned to be removed by [`remove_set_aside`] while the edit goes
    /// on. Removing an old copy of a large file takes the file system a
    /// while (a 25 MB `~/.claude.json` takes ext4 about 7 ms), and is then
    /// not waited for at the end. The edit this one undoes is never taken.
    pub fn make_room(&mut self) -> Vec<PathBuf> {
        if self.made_room || self.staged.is_empty() || !self.keeps_copies() {
            return Vec::new();
        }
        self.made_room = true;
        let incoming = self
            .staged
            .iter()
            .filter_map(|(_, copy)| fs::symlink_metadata(copy).ok())
            .map(|metadata| metadata.len())
            .sum();
        let Ok(past) = past_bounds(&self.root, Some(incoming), self.record.undoes) else {
            return Vec::new();
        };
        past.into_iter()
            .filter(|dir| dir.join(RECORD).is_file())
            .enumerate()
            .filter_map(|(index, dir)| {
                let aside = self.root.join(format!(
                    "{SET_ASIDE}{}.{}.{index}",
                    now_nanos(),
                    std::process::id()
                ));
                fs::rename(&dir, &aside).ok().map(|()| aside)
            })
            .collect()
    }

    /// Keeps no copies of this edit, and, when it ends, drops every
    /// earlier edit whose copies hold `secret`: the edit moved it where no
    /// plaintext copy may stay (the keychain), or removed it.
    pub fn forgo_holding(&mut self, reason: &str, secret: &str) {
        self.forgo(reason);
        if !secret.is_empty() && !self.scrubbed.iter().any(|known| known == secret) {
            self.scrubbed.push(secret.to_string());
        }
    }

    /// Keeps no copies of this edit (and drops those kept so far).
    pub fn forgo(&mut self, reason: &str) {
        if self.forgone.is_none() {
            self.forgone = Some(reason.to_string());
        }
        self.drop_staged();
        if let Some(dir) = self.dir.take() {
            let _ = fs::remove_dir_all(dir);
        }
    }

    /// Records that this edit undoes edit `number`.
    pub fn undoing(&mut self, number: u64) {
        self.record.undoes = Some(number);
    }

    /// Keeps what `resolved` held before (`None`: nothing) and a digest of
    /// what it holds now; a file written twice keeps its first `before`.
    pub fn keep(&mut self, resolved: &Path, before: Option<&str>, after: &[&[u8]]) {
        self.keep_owned(resolved, before, after, None);
    }

    /// Whether this edit still keeps copies: not forgone, and none failed
    /// to be kept. Digests worked out ahead for it ([`Digests`]) are
    /// otherwise wasted.
    pub fn keeps_copies(&self) -> bool {
        self.problem.is_none() && self.forgone.is_none()
    }

    /// Keeps what `resolved` held before it was removed (an undo removes
    /// the files the edit it takes back created).
    pub fn keep_removed(&mut self, resolved: &Path, before: Option<&str>, owner: Owner) {
        self.keep_owned(resolved, before, &[], Some(owner));
        if let Some(file) = self
            .record
            .files
            .iter_mut()
            .find(|file| file.path == resolved)
        {
            file.after_absent = true;
            if self.problem.is_none() && self.forgone.is_none() {
                let _ = self.save().map_err(|error| {
                    self.problem = Some(format!(
                        "mcpenv could not record this edit for `mcpenv undo`: {error}"
                    ));
                });
            }
        }
    }

    /// [`Journal::keep`], the file's owner given (an undo's files are the
    /// undone edit's) or, with `None`, found from [`Place`].
    pub fn keep_owned(
        &mut self,
        resolved: &Path,
        before: Option<&str>,
        after: &[&[u8]],
        owner: Option<Owner>,
    ) {
        self.keep_digested(resolved, before, after, owner, None);
    }

    /// [`Journal::keep_owned`] with the [`Digests`] of `before` and `after`
    /// worked out already (`None`: worked out here).
    pub fn keep_digested(
        &mut self,
        resolved: &Path,
        before: Option<&str>,
        after: &[&[u8]],
        owner: Option<Owner>,
        digests: Option<Digests>,
    ) {
        if !self.keeps_copies() {
            return;
        }
        let (before_digest, after_digest) = match digests {
            Some(Digests { before, after }) => (before, after),
            None => (None, digest(after)),
        };
        // The file's first `before`: the one given, on its first write.
        let (index, first) = match self
            .record
            .files
            .iter()
            .position(|file| file.path == resolved)
        {
            Some(index) => {
                self.record.files[index].after_digest = after_digest;
                (Ok(index), None)
            }
            None => (
                self.add(
                    resolved,
                    before.map(Before::Text),
                    before_digest,
                    after_digest,
                ),
                Some(before.unwrap_or_default()),
            ),
        };
        let kept = index.and_then(|index| self.keep_after(index, first, after, owner));
        self.saved(resolved, kept);
    }

    /// Saves the record after `kept`, the keeping of a copy of `resolved`;
    /// either failing is the edit's problem.
    fn saved(&mut self, resolved: &Path, kept: io::Result<()>) {
        if let Err(error) = kept {
            self.problem = Some(format!(
                "mcpenv could not keep a copy of `{}` for `mcpenv undo`: {error}",
                resolved.display(),
            ));
            return;
        }
        if let Err(error) = self.save() {
            self.problem = Some(format!(
                "mcpenv could not record this edit for `mcpenv undo`: {error}"
            ));
        }
    }

    /// Whether this edit wrote `resolved` already (its first `before` is
    /// kept).
    pub fn holds(&self, resolved: &Path) -> bool {
        self.record.files.iter().any(|file| file.path == resolved)
    }

    /// [`Journal::keep_digested`] for the first write of `~/.claude.json`
    /// (`resolved`) in this edit, made of pieces of the old file `old`
    /// (open, its name replaced already) and summed up as `spliced`: its
    /// copy is the staged inode, else copied from `old`.
    pub fn keep_spliced(
        &mut self,
        resolved: &Path,
        old: &File,
        spliced: io::Result<Spliced>,
        owner: Owner,
    ) {
        if !self.keeps_copies() {
            return;
        }
        let spliced = match spliced {
            Ok(spliced) => spliced,
            Err(error) => return self.saved(resolved, Err(error)),
        };
        let Spliced {
            digests: Digests { before, after },
            old_len,
            kept_prefix,
            kept_suffix,
            middle,
        } = spliced;
        let kept = if self.holds(resolved) {
            Err(io::Error::other("written twice in one edit"))
        } else {
            self.add(resolved, Some(Before::File(old, old_len)), before, after)
        }
        .and_then(|index| self.set_after(index, owner, kept_prefix, kept_suffix, &middle));
        self.saved(resolved, kept);
    }

    /// Finds the file's owner and, for the shared `~/.claude.json`, keeps
    /// the bytes the edit left, as what differs from its first `before`.
    fn keep_after(
        &mut self,
        index: usize,
        first: Option<&str>,
        after: &[&[u8]],
        owner: Option<Owner>,
    ) -> io::Result<()> {
        let file = &self.record.files[index];
        let shared = file.path == self.place.shared;
        let (Some(dir), true) = (self.dir.clone(), shared) else {
            let owner = owner.unwrap_or_else(|| self.place.owner_by_path(&file.path));
            self.record.files[index].owner = owner;
            return Ok(());
        };
        // Written before in this edit: its first `before` is the copy.
        let read;
        let before = match (first, &file.before) {
            (Some(first), _) => first.as_bytes(),
            (None, Some(name)) => {
                read = fs::read(dir.join(name)).map_err(failed("read", &dir.join(name)))?;
                &read
            }
            (None, None) => &[],
        };
        // Compared piece by piece: the new text is never put together
        // whole, which would hold a 25 MB `~/.claude.json` twice.
        let after_len: usize = after.iter().map(|piece| piece.len()).sum();
        let kept_prefix = common_prefix_pieces(before, after);
        let kept_suffix = common_suffix_pieces(&before[kept_prefix..], after, kept_prefix);
        let changed = kept_prefix..after_len - kept_suffix;
        let owner = owner.unwrap_or_else(|| {
            self.place
                .shared_owner(before, kept_prefix..before.len() - kept_suffix, || {
                    after.concat()
                })
        });
        let middle = slice_of_pieces(after, changed);
        self.set_after(index, owner, kept_prefix, kept_suffix, &middle)
    }

    /// Records file `index`'s owner and the bytes the edit left in it: the
    /// previous bytes' first `kept_prefix` and last `kept_suffix`, and
    /// `middle` between, kept as its `.after` copy.
    fn set_after(
        &mut self,
        index: usize,
        owner: Owner,
        kept_prefix: usize,
        kept_suffix: usize,
        middle: &[u8],
    ) -> io::Result<()> {
        let middle = match &self.dir {
            Some(dir) => after_copy(dir, index, middle)?,
            None => None,
        };
        let file = &mut self.record.files[index];
        file.owner = owner;
        file.after = Some(AfterCopy {
            kept_prefix,
            kept_suffix,
            middle,
        });
        Ok(())
    }

    /// Adds `resolved` to the edit, keeping a copy of `before`, whose
    /// digest is `before_digest` when worked out already.
    fn add(
        &mut self,
        resolved: &Path,
        before: Option<Before<'_>>,
        before_digest: Option<String>,
        after_digest: String,
    ) -> io::Result<usize> {
        let dir = match &self.dir {
            Some(dir) => dir.clone(),
            None => {
                let dir = self.create_dir()?;
                self.dir = Some(dir.clone());
                dir
            }
        };
        let staged = self
            .staged
            .iter()
            .position(|(path, _)| path == resolved)
            .map(|index| self.staged.remove(index).1);
        let (copy, before_digest) = match before {
            Some(before) => {
                let name = format!("{}.before", self.record.files.len());
                let copy = dir.join(&name);
                // The old inode itself, no longer the file: moved into the
                // edit's folder and made readable by its owner alone, as
                // every copy is; else a copy of the bytes read.
                let linked = staged.is_some_and(|staged| {
                    let moved =
                        fs::rename(&staged, &copy).and_then(|()| fsx::os::set_mode(&copy, 0o600));
                    if moved.is_err() {
                        let _ = fs::remove_file(&staged);
                        let _ = fs::remove_file(&copy);
                    }
                    moved.is_ok()
                });
                if !linked {
                    match before {
                        Before::Text(text) => write_private(&copy, text.as_bytes())?,
                        Before::File(old, len) => copy_private(&copy, old, len)?,
                    }
                }
                let checked = match (before_digest, before) {
                    (Some(digest), _) => digest,
                    (None, Before::Text(text)) => digest(&[text.as_bytes()]),
                    (None, Before::File(..)) => {
                        return Err(io::Error::other("no digest of the old file"));
                    }
                };
                (Some(name), Some(checked))
            }
            None => {
                if let Some(staged) = staged {
                    let _ = fs::remove_file(staged);
                }
                (None, None)
            }
        };
        self.record.files.push(FileRecord {
            path: resolved.to_path_buf(),
            before: copy,
            before_digest,
            after_digest,
            after_absent: false,
            owner: Owner::Project,
            after: None,
        });
        Ok(self.record.files.len() - 1)
    }

    /// A new directory for this edit, numbered after the newest one (two
    /// mcpenv processes racing for a number: the loser takes the next).
    fn create_dir(&self) -> io::Result<PathBuf> {
        self.create_root()?;
        let mut number = numbered(&self.root)
            .map_err(failed("read the folder", &self.root))?
            .last()
            .map_or(1, |(number, _)| number + 1);
        loop {
            let dir = self.root.join(format!("{number:06}"));
            match fsx::os::create_private_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => number += 1,
                Err(error) => return Err(failed("create the folder", &dir)(error)),
            }
        }
    }

    /// The journal's own folder, private.
    fn create_root(&self) -> io::Result<()> {
        if let Some(parent) = self.root.parent() {
            fs::create_dir_all(parent).map_err(failed("create the folder", parent))?;
        }
        fsx::private_dir(&self.root).map_err(io::Error::other)
    }

    fn save(&self) -> io::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let text = serde_json::to_string_pretty(&self.record).map_err(io::Error::other)?;
        let record = dir.join(RECORD);
        // Unsynced like the copies: a record lost in a crash costs an
        // undo, never the edit, and an fsync here would cost as much as
        // the edit's own.
        fsx::replace_unsynced(&record, text.as_bytes(), 0o600).map_err(failed("write", &record))
    }

    /// Drops what was kept of this edit: it was not made whole.
    pub fn discard(mut self) {
        self.drop_staged();
        if let Some(dir) = &self.dir {
            let _ = fs::remove_dir_all(dir);
        }
    }

    /// Ends the edit: drops the oldest edits past the bounds.
    pub fn close(mut self) -> Kept {
        self.drop_staged();
        if let Some(reason) = self.forgone {
            let forgone = match drop_holding(&self.root, &self.scrubbed) {
                Ok(0) => reason,
                Ok(dropped) => format!(
                    "{reason}; {} that held it {} dropped from the journal too",
                    if dropped == 1 {
                        "the earlier edit".to_string()
                    } else {
                        format!("the {dropped} earlier edits")
                    },
                    if dropped == 1 { "was" } else { "were" }
                ),
                Err(error) => format!(
                    "{reason}; earlier edits kept in `{}` may still hold it, and could not be dropped ({error}): remove that directory",
                    self.root.display()
                ),
            };
            return Kept {
                files: 0,
                problem: None,
                forgone: Some(forgone),
            };
        }
        let files = if self.problem.is_some() {
            0
        } else {
            self.record.files.len()
        };
        if self.dir.is_some() {
            if self.problem.is_some()
                && let Some(dir) = &self.dir
            {
                // A partial copy would restore only some files: drop it.
                let _ = fs::remove_dir_all(dir);
            }
            let _ = evict(&self.root);
        }
        Kept {
            files,
            problem: self.problem,
            forgone: None,
        }
    }
}

/// Writes a new copy, readable by its owner alone.
fn write_private(copy: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fsx::os::private_file(OpenOptions::new().write(true).create_new(true))
        .open(copy)
        .map_err(failed("create", copy))?;
    file.write_all(bytes).map_err(failed("write", copy))
}

/// Keeps `middle`, the new bytes of file `index` of the edit in `dir`, as
/// its `.after` copy; `None` when there are none.
fn after_copy(dir: &Path, index: usize, middle: &[u8]) -> io::Result<Option<String>> {
    if middle.is_empty() {
        return Ok(None);
    }
    let name = format!("{index}.after");
    let copy = dir.join(&name);
    let _ = fs::remove_file(&copy);
    write_private(&copy, middle)?;
    Ok(Some(name))
}

/// Writes a new copy of the first `len` bytes of `old`, readable by its
/// owner alone.
fn copy_private(copy: &Path, old: &File, len: u64) -> io::Result<()> {
    let mut file = fsx::os::private_file(OpenOptions::new().write(true).create_new(true))
        .open(copy)
        .map_err(failed("create", copy))?;
    spliced::write_to(old, &[Piece::Old(0..len)], &mut file, true).map_err(failed("write", copy))
}

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    // The same memory (an edit's unchanged ends are slices of the text it
    // read): equal without reading 25 MB twice.
    if a.as_ptr() == b.as_ptr() {
        return a.len().min(b.len());
    }
    // Chunks first: comparing 25 MB byte by byte costs milliseconds.
    const CHUNK: usize = 4096;
    let mut at = 0;
    while at + CHUNK <= a.len().min(b.len()) && a[at..at + CHUNK] == b[at..at + CHUNK] {
        at += CHUNK;
    }
    at + a[at..]
        .iter()
        .zip(&b[at..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many trailing bytes `a` and `b` share.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let mut at = 0;
    let shorter = a.len().min(b.len());
    // The same memory, as in `common_prefix`.
    if a[a.len() - shorter..].as_ptr() == b[b.len() - shorter..].as_ptr() {
        return shorter;
    }
    while at + CHUNK <= shorter
        && a[a.len() - at - CHUNK..a.len() - at] == b[b.len() - at - CHUNK..b.len() - at]
    {
        at += CHUNK;
    }
    at + a[..a.len() - at]
        .iter()
        .rev()
        .zip(b[..b.len() - at].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many leading bytes `before` shares with the concatenation of
/// `pieces`.
fn common_prefix_pieces(before: &[u8], pieces: &[&[u8]]) -> usize {
    let mut at = 0;
    for piece in pieces {
        let shared = common_prefix(&before[at.min(before.len())..], piece);
        at += shared;
        if shared < piece.len() {
            break;
        }
    }
    at
}

/// How many trailing bytes `before` shares with the concatenation of
/// `pieces`, not counting the first `skip` bytes of the pieces (their
/// common prefix, already taken).
fn common_suffix_pieces(before: &[u8], pieces: &[&[u8]], skip: usize) -> usize {
    let mut end = before.len();
    let mut left = pieces.iter().map(|piece| piece.len()).sum::<usize>() - skip;
    let mut shared_total = 0;
    for piece in pieces.iter().rev() {
        // The part of this piece after the skipped prefix.
        let usable = piece.len().min(left);
        let piece = &piece[piece.len() - usable..];
        let shared = common_suffix(&before[..end], piece);
        shared_total += shared;
        end -= shared;
        left -= usable;
        if shared < piece.len() || left == 0 {
            break;
        }
    }
    shared_total
}

/// The bytes `range` of the concatenation of `pieces`.
fn slice_of_pieces(pieces: &[&[u8]], range: std::ops::Range<usize>) -> Vec<u8> {
    let mut out = Vec::with_capacity(range.len());
    let mut at = 0;
    for piece in pieces {
        let (start, end) = (at, at + piece.len());
        at = end;
        if end <= range.start || start >= range.end {
            continue;
        }
        out.extend_from_slice(&piece[range.start.max(start) - start..range.end.min(end) - start]);
    }
    out
}

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The numbered edit directories under `root`, oldest first.
/// `error`, saying what was done to which file (a full disk fails on the
/// copy, not on the folder that holds it).
fn failed(operation: &'static str, path: &Path) -> impl FnOnce(io::Error) -> io::Error {
    let path = path.to_path_buf();
    move |error| {
        io::Error::new(
            error.kind(),
            format!("cannot {operation} `{}`: {error}", path.display()),
        )
    }
}

fn numbered(root: &Path) -> io::Result<Vec<(u64, PathBuf)>> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut numbered: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let number = entry.file_name().to_str()?.parse::<u64>().ok()?;
            Some((number, entry.path()))
        })
        .collect();
    numbered.sort();
    Ok(numbered)
}

/// Removes the oldest edits past [`KEPT_EDITS`] or [`KEPT_BYTES`] (the
/// newest always stays), and directories no record was written for.
fn evict(root: &Path) -> io::Result<()> {
    remove_abandoned_staged(root);
    remove_set_aside_dirs(root, Some(STAGED_ABANDONED));
    for dir in past_bounds(root, None, None)? {
        fs::remove_dir_all(dir)?;
    }
    Ok(())
}

/// The edits under `root` past [`KEPT_EDITS`] or [`KEPT_BYTES`], counted
/// from the newest (which always stays), and directories no record was
/// written for. `incoming`: the size of an edit about to be kept, counted
/// as the newest; `spare`: an edit never taken.
fn past_bounds(root: &Path, incoming: Option<u64>, spare: Option<u64>) -> io::Result<Vec<PathBuf>> {
    let mut total = incoming.unwrap_or_default();
    let mut kept = usize::from(incoming.is_some());
    let mut past = Vec::new();
    for (number, dir) in numbered(root)?.into_iter().rev() {
        let size: u64 = fs::read_dir(&dir)?
            .filter_map(Result::ok)
            .filter_map(|entry| entry.metadata().ok())
            .map(|metadata| metadata.len())
            .sum();
        total += size;
        let keep = spare == Some(number)
            || (dir.join(RECORD).is_file()
                && (kept == 0 || (kept < KEPT_EDITS && total <= KEPT_BYTES)));
        if keep {
            kept += 1;
        } else {
            past.push(dir);
        }
    }
    Ok(past)
}

/// The start of the name of an edit's folder [`Journal::make_room`] set
/// aside, then its time (nanoseconds since the Unix epoch).
const SET_ASIDE: &str = ".evicted.";

/// Removes the folders [`Journal::make_room`] set aside.
pub fn remove_set_aside(dirs: Vec<PathBuf>) {
    for dir in dirs {
        let _ = fs::remove_dir_all(dir);
    }
}

/// Removes the folders under `root` that [`Journal::make_room`] set aside
/// and a killed run left, older than `older_than` (`None`: every one, for
/// an edit that drops every copy of a secret; one a running edit is still
/// removing is then removed twice, harmlessly).
fn remove_set_aside_dirs(root: &Path, older_than: Option<std::time::Duration>) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let now = now_nanos();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|name| name.strip_prefix(SET_ASIDE)) else {
            continue;
        };
        let set_aside_at = rest
            .split('.')
            .next()
            .and_then(|nanos| nanos.parse::<u128>().ok());
        let old_enough = match older_than {
            None => true,
            Some(age) => set_aside_at.is_none_or(|at| now.saturating_sub(at) > age.as_nanos()),
        };
        if old_enough {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The start of the name of a copy [`Journal::stage`] made.
const STAGED: &str = ".staged.";

/// How old a staged copy must be to be taken for one a killed run left:
/// far longer than any edit takes between its link and its record.
const STAGED_ABANDONED: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the staged copies under `root` that a killed run left (their
/// `ctime` is the time of the link; Windows, without `ctime` or inodes,
/// never stages).
fn remove_abandoned_staged(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let abandoned = entry.file_name().to_string_lossy().starts_with(STAGED)
            && entry
                .metadata()
                .ok()
                .and_then(|metadata| fsx::os::changed(&metadata))
                .is_some_and(|(seconds, nanoseconds)| {
                    let linked = UNIX_EPOCH
                        + std::time::Duration::new(
                            u64::try_from(seconds).unwrap_or_default(),
                            u32::try_from(nanoseconds).unwrap_or_default(),
                        );
                    SystemTime::now()
                        .duration_since(linked)
                        .is_ok_and(|age| age > STAGED_ABANDONED)
                });
        if abandoned {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Removes every edit under `root` any of whose copies holds one of
/// `secrets`; how many. A copy that cannot be read is taken to hold one.
fn drop_holding(root: &Path, secrets: &[String]) -> io::Result<usize> {
    if secrets.is_empty() {
        return Ok(0);
    }
    // Old edits being removed, or left by a killed run, may hold it too.
    remove_set_aside_dirs(root, None);
    let mut dropped = 0;
    for (_, dir) in numbered(root)? {
        // Every copy: the bytes before, and those an edit left (`.after`).
        let holds = fs::read_dir(&dir)?
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name() != RECORD)
            .any(|entry| {
                fs::read(entry.path()).map_or(true, |bytes| {
                    secrets.iter().any(|secret| holds_secret(&bytes, secret))
                })
            });
        if holds {
            fs::remove_dir_all(&dir)?;
            dropped += 1;
        }
    }
    Ok(dropped)
}

/// Whether a file's bytes hold `secret` as any file mcpenv edits would
/// spell it: as it is (a dotenv value, single-quoted or bare), JSON-escaped
/// (a config), or in a dotenv line's double quotes or escapes (read back
/// through the dotenv reader).
fn holds_secret(bytes: &[u8], secret: &str) -> bool {
    let contains = |needle: &[u8]| {
        !needle.is_empty() && bytes.windows(needle.len()).any(|window| window == needle)
    };
    if contains(secret.as_bytes()) {
        return true;
    }
    let escaped = serde_json::to_string(secret).unwrap_or_default();
    if contains(escaped.trim_matches('"').as_bytes()) {
        return true;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    dotenv_values_hold(text, secret)
        || serde_json::from_str::<serde_json::Value>(text)
            .is_ok_and(|document| json_holds(&document, secret))
}

/// Whether a value of `text`, read as a dotenv file, holds `secret`. Read
/// with dotenvy itself (the journal sits below mcpenv's own dotenv module):
/// a line it cannot read is skipped, as the raw byte search above covers it.
fn dotenv_values_hold(text: &str, secret: &str) -> bool {
    dotenvy::from_read_iter(text.as_bytes())
        .filter_map(Result::ok)
        .any(|(_, value)| value.contains(secret))
}

/// Whether a string anywhere in `value` (a key or a value) holds `secret`.
fn json_holds(value: &serde_json::Value, secret: &str) -> bool {
    match value {
        serde_json::Value::String(text) => text.contains(secret),
        serde_json::Value::Array(items) => items.iter().any(|item| json_holds(item, secret)),
        serde_json::Value::Object(members) => members
            .iter()
            .any(|(key, item)| key.contains(secret) || json_holds(item, secret)),
        _ => false,
    }
}

/// An edit the journal holds.
#[derive(Debug, Clone)]
pub struct KeptEdit {
    /// Its sequence number.
    pub number: u64,
    /// Its directory.
    pub dir: PathBuf,
    /// What it changed.
    pub record: EditRecord,
}

impl KeptEdit {
    /// What `file` held before the edit (`None`: it did not exist),
    /// checked against the digest taken then.
    pub fn before(&self, file: &FileRecord) -> io::Result<Option<String>> {
        let Some(name) = &file.before else {
            return Ok(None);
        };
        let text = fs::read_to_string(self.dir.join(name))?;
        if file.before_digest.as_deref() != Some(digest(&[text.as_bytes()]).as_str()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the copy `{}` was changed", self.dir.join(name).display()),
            ));
        }
        Ok(Some(text))
    }

    /// What `file` held after the edit, when the journal kept it (for
    /// `~/.claude.json`), checked against the digest taken then.
    pub fn after(&self, file: &FileRecord) -> io::Result<Option<String>> {
        let Some(after) = &file.after else {
            return Ok(None);
        };
        let before = self.before(file)?.unwrap_or_default();
        let middle = match &after.middle {
            Some(name) => fs::read_to_string(self.dir.join(name))?,
            None => String::new(),
        };
        let damaged = || {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the copies in `{}` do not fit together", self.dir.display()),
            )
        };
        let suffix_start = before
            .len()
            .checked_sub(after.kept_suffix)
            .filter(|&start| start >= after.kept_prefix)
            .ok_or_else(damaged)?;
        let prefix = before.get(..after.kept_prefix).ok_or_else(damaged)?;
        let suffix = before.get(suffix_start..).ok_or_else(damaged)?;
        let text = [prefix, &middle, suffix].concat();
        if digest(&[text.as_bytes()]) != file.after_digest {
            return Err(damaged());
        }
        Ok(Some(text))
    }

    /// Removes the edit from the journal.
    pub fn forget(&self) -> io::Result<()> {
        fs::remove_dir_all(&self.dir)
    }
}

/// The edits the journal holds under `state_dir`, newest first; a record
/// that cannot be read is skipped (it is an edit undo cannot restore).
pub fn edits(state_dir: &Path) -> io::Result<Vec<KeptEdit>> {
    let mut edits = Vec::new();
    for (number, dir) in numbered(&root(state_dir))?.into_iter().rev() {
        let Ok(text) = fs::read_to_string(dir.join(RECORD)) else {
            continue;
        };
        let Ok(record) = serde_json::from_str::<EditRecord>(&text) else {
            continue;
        };
        edits.push(KeptEdit {
            number,
            dir,
            record,
        });
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A place whose project is `dir/project`.
    fn place(dir: &Path) -> Place {
        Place {
            project: dir.join("project"),
            project_dirs: vec![dir.join("project")],
            shared: dir.join(".claude.json"),
        }
    }

    #[test]
    fn an_edit_keeps_each_files_first_bytes_and_last_digest() {
        let state = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(state.path(), "add", place(state.path()));
        let file = state.path().join("a.json");
        journal.keep(&file, Some("one"), &[b"two"]);
        journal.keep(&file, Some("two"), &[b"th", b"ree"]);
        journal.keep(&state.path().join("new"), None, &[b"x"]);
        let kept = journal.close();
        assert_eq!((kept.files, kept.problem, kept.forgone), (2, None, None));
        let edits = edits(state.path()).unwrap();
        assert_eq!(edits.len(), 1);
        let edit = &edits[0];
        assert_eq!(edit.record.command, "add");
        assert_eq!(
            edit.before(&edit.record.files[0]).unwrap().as_deref(),
            Some("one")
        );
        assert_eq!(edit.record.files[0].after_digest, digest(&[b"three"]));
        assert_eq!(edit.before(&edit.record.files[1]).unwrap(), None);
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&root(state.path())), 0o700);
        assert_eq!(mode(&edit.dir.join("0.before")), 0o600);
        assert_eq!(mode(&edit.dir.join(RECORD)), 0o600);
    }

    #[test]
    fn only_the_newest_edits_are_kept() {
        let state = tempfile::tempdir().unwrap();
        record_edits(state.path(), 0, KEPT_EDITS + 3);
        let edits = edits(state.path()).unwrap();
        assert_eq!(edits.len(), KEPT_EDITS);
        assert_eq!(edits[0].record.command, format!("edit {}", KEPT_EDITS + 2));
    }

    /// Records `count` edits of the file `f` under `state`, numbered from
    /// `first`.
    fn record_edits(state: &Path, first: usize, count: usize) {
        for round in first..first + count {
            let mut journal = Journal::new(state, &format!("edit {round}"), place(state));
            journal.keep(&state.join("f"), Some("old"), &[b"new"]);
            journal.close();
        }
    }

    /// The commands of the edits kept, newest first.
    fn commands(state: &Path) -> Vec<String> {
        edits(state)
            .unwrap()
            .into_iter()
            .map(|edit| edit.record.command)
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn room_made_ahead_drops_what_closing_would_and_spares_the_undone_edit() {
        use std::os::unix::fs::MetadataExt;
        let made_ahead = |undoes: Option<u64>| {
            let state = tempfile::tempdir().unwrap();
            record_edits(state.path(), 0, KEPT_EDITS);
            let file = state.path().join("g");
            fs::write(&file, "old").unwrap();
            let metadata = fs::metadata(&file).unwrap();
            let mut journal = Journal::new(state.path(), "edit new", place(state.path()));
            if let Some(number) = undoes {
                journal.undoing(number);
            }
            assert!(journal.stage(&file, (metadata.dev(), metadata.ino())));
            let set_aside = journal.make_room();
            assert!(journal.make_room().is_empty(), "room is made once");
            let listed = commands(state.path());
            fs::write(state.path().join("new"), "new").unwrap();
            fs::rename(state.path().join("new"), &file).unwrap();
            journal.keep(&file, Some("old"), &[b"new"]);
            remove_set_aside(set_aside.clone());
            journal.close();
            let aside_left = fs::read_dir(root(state.path()))
                .unwrap()
                .flatten()
                .any(|entry| entry.file_name().to_string_lossy().starts_with(SET_ASIDE));
            (set_aside.len(), listed, commands(state.path()), aside_left)
        };
        let (set_aside, listed, kept, aside_left) = made_ahead(None);
        assert_eq!(set_aside, 1);
        assert!(!aside_left);
        assert_eq!(
            listed.len(),
            KEPT_EDITS - 1,
            "the oldest is set aside at once"
        );
        assert!(!listed.contains(&"edit 0".to_string()));
        let state = tempfile::tempdir().unwrap();
        record_edits(state.path(), 0, KEPT_EDITS);
        let mut journal = Journal::new(state.path(), "edit new", place(state.path()));
        journal.keep(&state.path().join("g"), Some("old"), &[b"new"]);
        journal.close();
        assert_eq!(kept, commands(state.path()), "as closing alone keeps");
        // An undo of the oldest edit (number 1): it stays until the undo
        // closes, and no other is taken in its stead.
        let (set_aside, listed, _, _) = made_ahead(Some(1));
        assert_eq!(set_aside, 0);
        assert_eq!(listed.len(), KEPT_EDITS);
    }

    #[test]
    fn set_aside_edits_a_killed_run_left_go_once_old_or_when_a_secret_goes() {
        let state = tempfile::tempdir().unwrap();
        record_edits(state.path(), 0, 1);
        let journal_root = root(state.path());
        let old = now_nanos() - 2 * STAGED_ABANDONED.as_nanos();
        let aside = |at: u128| {
            let dir = journal_root.join(format!("{SET_ASIDE}{at}.1.0"));
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join("0.before"), "TOKEN=s3cr3t-value\n").unwrap();
            dir
        };
        let (abandoned, recent) = (aside(old), aside(now_nanos()));
        record_edits(state.path(), 1, 1);
        assert!(!abandoned.exists(), "an hour old: a killed run's");
        assert!(recent.exists(), "a running edit may still be removing it");
        let mut journal = Journal::new(state.path(), "extract", place(state.path()));
        journal.forgo_holding("moved to the keychain", "s3cr3t-value");
        journal.close();
        assert!(!recent.exists(), "no copy of a secret the edit moved stays");
    }

    #[test]
    fn a_forgone_edit_leaves_no_copy() {
        let state = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(state.path(), "extract", place(state.path()));
        journal.keep(&state.path().join("f"), Some("secret"), &[b"new"]);
        journal.forgo("moved into the keychain");
        journal.keep(&state.path().join("g"), Some("secret"), &[b"new"]);
        let kept = journal.close();
        assert_eq!(kept.forgone.as_deref(), Some("moved into the keychain"));
        assert!(edits(state.path()).unwrap().is_empty());
        assert_eq!(numbered(&root(state.path())).unwrap(), Vec::new());
    }

    #[test]
    fn an_edit_that_moves_a_secret_drops_every_earlier_copy_of_it() {
        let state = tempfile::tempdir().unwrap();
        let secret = "ghp_Sc\"rub'M3\\0123456789";
        let json = serde_json::to_string(secret).unwrap();
        let earlier = [
            format!("TOKEN={secret}\n"),
            format!("{{\"env\": {{\"T\": {json}}}}}"),
            // The same string, escaped by hand the way a person might.
            format!(
                "{{\"T\": \"{}\"}}",
                json.trim_matches('"').replace('g', "\\u0067")
            ),
            "unrelated".to_string(),
        ];
        for (round, before) in earlier.iter().enumerate() {
            let mut journal =
                Journal::new(state.path(), &format!("edit {round}"), place(state.path()));
            journal.keep(&state.path().join("f"), Some(before), &[b"after"]);
            journal.close();
        }
        let mut journal = Journal::new(state.path(), "secrets move", place(state.path()));
        journal.keep(&state.path().join("f"), Some(&earlier[0]), &[b"after"]);
        journal.forgo_holding("moved into the keychain", secret);
        let kept = journal.close();
        assert_eq!(
            kept.forgone.as_deref(),
            Some(
                "moved into the keychain; the 3 earlier edits that held it were dropped from the journal too"
            )
        );
        let left: Vec<String> = edits(state.path())
            .unwrap()
            .into_iter()
            .map(|edit| edit.record.command)
            .collect();
        assert_eq!(left, ["edit 3"]);
    }

    #[test]
    fn a_changed_copy_is_not_restored() {
        let state = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(state.path(), "add", place(state.path()));
        journal.keep(&state.path().join("f"), Some("old"), &[b"new"]);
        journal.close();
        let edit = edits(state.path()).unwrap().remove(0);
        fs::write(edit.dir.join("0.before"), "tampered").unwrap();
        assert!(edit.before(&edit.record.files[0]).is_err());
    }

    #[test]
    fn each_file_is_the_projects_or_the_users() {
        let state = tempfile::tempdir().unwrap();
        let place = place(state.path());
        let shared = place.shared.clone();
        let before = r#"{"mcpServers": {}, "projects": {"/a": {"mcpServers": {}}}}"#;
        let user = r#"{"mcpServers": {"x": {}}, "projects": {"/a": {"mcpServers": {}}}}"#;
        let local = r#"{"mcpServers": {}, "projects": {"/a": {"mcpServers": {"x": {}}}}}"#;
        for (after, owner) in [(user, Owner::User), (local, Owner::Project)] {
            let mut journal = Journal::new(state.path(), "add", place.clone());
            journal.keep(&shared, Some(before), &[after.as_bytes()]);
            journal.keep(&state.path().join("project/.mcp.json"), None, &[b"{}"]);
            journal.keep(&state.path().join("store/.env"), None, &[b"A=1"]);
            journal.close();
            let edit = edits(state.path()).unwrap().remove(0);
            let owners: Vec<Owner> = edit.record.files.iter().map(|file| file.owner).collect();
            assert_eq!(owners, [owner, Owner::Project, Owner::User]);
            assert_eq!(
                edit.record.project.as_deref(),
                Some(state.path().join("project").as_path())
            );
            // The bytes the edit left in the shared file are kept, and only
            // there.
            assert_eq!(
                edit.after(&edit.record.files[0]).unwrap().as_deref(),
                Some(after)
            );
            assert!(edit.record.files[1].after.is_none());
            let middle = edit.record.files[0].after.as_ref().unwrap();
            assert!(middle.kept_prefix > 0 && middle.kept_suffix > 0);
        }
    }

    #[test]
    fn a_record_of_an_older_mcpenv_still_reads_without_a_project() {
        let state = tempfile::tempdir().unwrap();
        let dir = root(state.path()).join("000001");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join(RECORD),
            r#"{"schema_version": 1, "command": "add", "recorded_at": 1,
                "files": [{"path": "/p/.mcp.json", "before": null,
                           "before_digest": null, "after_digest": "00"}]}"#,
        )
        .unwrap();
        let edit = edits(state.path()).unwrap().remove(0);
        assert_eq!(edit.record.project, None);
        assert_eq!(edit.record.files[0].owner, Owner::Project);
        assert!(!edit.record.only_users_files());
    }

    #[test]
    fn a_removed_file_is_recorded_as_absent() {
        let state = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(state.path(), "undo", place(state.path()));
        journal.undoing(7);
        journal.keep_removed(&state.path().join("f"), Some("was"), Owner::User);
        journal.close();
        let edit = edits(state.path()).unwrap().remove(0);
        assert_eq!(edit.record.undoes, Some(7));
        assert!(edit.record.files[0].after_absent);
        assert_eq!(edit.record.files[0].owner, Owner::User);
        assert_eq!(
            edit.before(&edit.record.files[0]).unwrap().as_deref(),
            Some("was")
        );
    }

    #[test]
    fn a_staged_link_is_the_copy_and_costs_no_copy() {
        use std::os::unix::fs::MetadataExt;
        let state = tempfile::tempdir().unwrap();
        let place = place(state.path());
        let shared = place.shared.clone();
        let before = r#"{"mcpServers": {}, "projects": {"/a": {"mcpServers": {}}}}"#;
        fs::write(&shared, before).unwrap();
        let metadata = fs::metadata(&shared).unwrap();
        let inode = (metadata.dev(), metadata.ino());
        let mut journal = Journal::new(state.path(), "add", place);
        assert!(journal.stage(&shared, inode));
        // The writer renames its new text over the file.
        let after = r#"{"mcpServers": {"x": {}}, "projects": {"/a": {"mcpServers": {}}}}"#;
        let new = state.path().join("new");
        fs::write(&new, after).unwrap();
        fs::rename(&new, &shared).unwrap();
        journal.keep_owned(
            &shared,
            Some(before),
            &[&after.as_bytes()[..20], &after.as_bytes()[20..]],
            Some(Owner::User),
        );
        let kept = journal.close();
        assert_eq!((kept.files, kept.problem), (1, None));
        let edit = edits(state.path()).unwrap().remove(0);
        let file = &edit.record.files[0];
        let copy = edit.dir.join(file.before.as_ref().unwrap());
        let copied = fs::metadata(&copy).unwrap();
        assert_eq!((copied.dev(), copied.ino()), inode, "the old inode itself");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(copied.permissions().mode() & 0o777, 0o600);
        assert_eq!(edit.before(file).unwrap().as_deref(), Some(before));
        assert_eq!(edit.after(file).unwrap().as_deref(), Some(after));
        assert_eq!(file.owner, Owner::User);
    }

    #[test]
    fn an_unused_staged_link_is_dropped() {
        use std::os::unix::fs::MetadataExt;
        let state = tempfile::tempdir().unwrap();
        let file = state.path().join("f");
        fs::write(&file, "old").unwrap();
        let metadata = fs::metadata(&file).unwrap();
        let mut journal = Journal::new(state.path(), "add", place(state.path()));
        // Another inode than the one read: no link is kept.
        assert!(!journal.stage(&file, (metadata.dev(), metadata.ino() + 1)));
        assert!(journal.stage(&file, (metadata.dev(), metadata.ino())));
        journal.unstage(&file);
        assert_eq!(fs::metadata(&file).unwrap().nlink(), 1);
        journal.keep(&file, Some("old"), &[b"new"]);
        let edit = {
            journal.close();
            edits(state.path()).unwrap().remove(0)
        };
        assert_eq!(
            edit.before(&edit.record.files[0]).unwrap().as_deref(),
            Some("old")
        );
    }

    #[test]
    fn digests_worked_out_ahead_record_what_the_journal_would() {
        let state = tempfile::tempdir().unwrap();
        let record = |ahead: bool| {
            let mut journal = Journal::new(state.path(), "add", place(state.path()));
            let (file, new) = (state.path().join("a.json"), state.path().join("new"));
            for (path, before, after) in [
                (&file, Some("one"), &[&b"tw"[..], b"o"][..]),
                (&file, Some("two"), &[b"three"]),
                (&new, None, &[b"x"]),
            ] {
                let digests = ahead.then(|| Digests::of(before.map(str::as_bytes), after));
                journal.keep_digested(path, before, after, None, digests);
            }
            journal.close();
            let edit = edits(state.path()).unwrap().remove(0);
            edit.forget().unwrap();
            let files: Vec<_> = edit
                .record
                .files
                .iter()
                .map(|file| (file.before_digest.clone(), file.after_digest.clone()))
                .collect();
            files
        };
        let worked_out_here = record(false);
        assert_eq!(
            worked_out_here,
            [
                (Some(digest(&[b"one"])), digest(&[b"three"])),
                (None, digest(&[b"x"]))
            ]
        );
        assert_eq!(record(true), worked_out_here);
    }

    /// The record `keep` makes of one write of the shared file, and the
    /// bytes of its `.after` copy.
    fn kept_shared(keep: impl FnOnce(&mut Journal, &Path)) -> (FileRecord, Option<Vec<u8>>) {
        let state = tempfile::tempdir().unwrap();
        let mut place = place(state.path());
        place.shared = state.path().join(".claude.json");
        let mut journal = Journal::new(state.path(), "add", place.clone());
        keep(&mut journal, &place.shared);
        let dir = journal.dir.clone().unwrap();
        let file = journal.record.files[0].clone();
        let middle = file
            .after
            .as_ref()
            .and_then(|after| after.middle.as_ref())
            .map(|name| fs::read(dir.join(name)).unwrap());
        let before = fs::read(dir.join(file.before.as_ref().unwrap())).unwrap();
        assert_eq!(
            Some(digest(&[&before])),
            file.before_digest,
            "the copy is the old bytes"
        );
        journal.close();
        (file, middle)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// A write told as pieces of the old file is kept as the same write
        /// told as whole texts: the same digests, the same changed span,
        /// the same copies.
        #[test]
        fn a_spliced_write_is_kept_as_the_whole_write(
            old in proptest::collection::vec(proptest::sample::select(b"ab{}".to_vec()), 0..20_000),
            cuts in proptest::collection::vec(
                (0usize..20_000, proptest::collection::vec(proptest::sample::select(b"ab{}".to_vec()), 0..600)),
                0..4,
            ),
            head in proptest::bool::ANY,
            tail in proptest::bool::ANY,
        ) {
            let mut at = 0;
            let mut cuts: Vec<(std::ops::Range<usize>, Vec<u8>)> = cuts
                .into_iter()
                .map(|(end, new)| {
                    let end = end.min(old.len()).max(at);
                    let range = at..end;
                    at = (end + new.len() % 7).min(old.len());
                    (range, new)
                })
                .collect();
            if head && let Some((range, _)) = cuts.first_mut() {
                range.start = 0;
            }
            if tail {
                cuts.push((at..old.len(), Vec::new()));
            }
            let pieces: Vec<Piece<'_>> = cuts
                .iter()
                .flat_map(|(range, new)| {
                    [Piece::Old(range.start as u64..range.end as u64), Piece::New(new.as_slice())]
                })
                .collect();
            let new: Vec<u8> = cuts
                .iter()
                .flat_map(|(range, new)| [&old[range.clone()], new.as_slice()].concat())
                .collect();
            let text = String::from_utf8(old.clone()).unwrap();
            let whole = kept_shared(|journal, shared| {
                journal.keep_digested(shared, Some(&text), &[&new], Some(Owner::User), None);
            });
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("old");
            fs::write(&path, &old).unwrap();
            let file = File::open(&path).unwrap();
            let summed = spliced(&file, old.len() as u64, &pieces).unwrap();
            let streamed = kept_shared(|journal, shared| {
                journal.keep_spliced(shared, &file, Ok(summed), Owner::User);
            });
            let view = |(file, middle): &(FileRecord, Option<Vec<u8>>)| {
                let after = file.after.as_ref().map(|after| (after.kept_prefix, after.kept_suffix));
                (file.before_digest.clone(), file.after_digest.clone(), after, middle.clone(), file.owner)
            };
            proptest::prop_assert_eq!(view(&streamed), view(&whole));
        }
    }

    #[test]
    fn common_ends_are_found_across_pieces() {
        let before = b"0123456789";
        let pieces: [&[u8]; 3] = [b"0123", b"XY", b"6789"];
        assert_eq!(common_prefix_pieces(before, &pieces), 4);
        assert_eq!(common_suffix_pieces(&before[4..], &pieces, 4), 4);
        assert_eq!(slice_of_pieces(&pieces, 4..6), b"XY");
        let same: [&[u8]; 2] = [b"01234", b"56789"];
        assert_eq!(common_prefix_pieces(before, &same), 10);
        assert_eq!(common_suffix_pieces(&before[10..], &same, 10), 0);
        let longer: [&[u8]; 2] = [b"0123", b"456789AB"];
        assert_eq!(common_prefix_pieces(before, &longer), 10);
        assert_eq!(slice_of_pieces(&longer, 10..12), b"AB");
    }

    /// The common ends, byte by byte.
    fn naive_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
        let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let suffix = (a.iter().rev())
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        (prefix, suffix)
    }

    proptest::proptest! {
        /// Slices of one buffer (the same memory when they start or end
        /// together) and copies of them have the ends found byte by byte.
        #[test]
        fn common_ends_of_slices_of_one_text_are_the_bytes_ends(
            text in proptest::collection::vec(proptest::sample::select(b"ab".to_vec()), 0..9000),
            a in (0usize..9000, 0usize..9000),
            b in (0usize..9000, 0usize..9000),
            shared in 0u8..3,
        ) {
            let range = |(x, y): (usize, usize)| {
                let (x, y) = (x.min(text.len()), y.min(text.len()));
                x.min(y)..x.max(y)
            };
            let (a, mut b) = (range(a), range(b));
            // Most often from the same start or to the same end.
            match shared {
                0 => b.start = a.start.min(b.end),
                1 => b.end = a.end.max(b.start),
                _ => {}
            }
            let (a, b) = (&text[a], &text[b]);
            let expected = naive_ends(a, b);
            proptest::prop_assert_eq!((common_prefix(a, b), common_suffix(a, b)), expected);
            let (a, b) = (a.to_vec(), b.to_vec());
            proptest::prop_assert_eq!((common_prefix(&a, &b), common_suffix(&a, &b)), expected);
        }
    }

    #[test]
    fn common_ends_are_found_across_chunks() {
        let long = "x".repeat(10_000);
        let a = format!("{long}A{long}");
        let b = format!("{long}BB{long}");
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 10_000);
        assert_eq!(common_suffix(a.as_bytes(), b.as_bytes()), 10_000);
        assert_eq!(common_prefix(b"ab", b"ab"), 2);
        assert_eq!(common_suffix(b"", b"ab"), 0);
    }
}
