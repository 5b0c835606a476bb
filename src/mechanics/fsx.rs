//! File primitives that keep users' files safe: reading only regular files,
//! atomic replacement through symlinks with the original mode, and the locks
//! that serialise editors.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

mod confine;
pub mod os;
pub mod spliced;
pub use confine::{LeavesRepository, confine, link_target, real_location};

/// Longest symlink chain followed before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Follows the whole symlink chain of `path`, even when the final target
/// does not exist yet, so a write replaces the target and keeps the links.
/// A repository's file that really lies outside the repository is refused
/// ([`LeavesRepository`] inside the `io::Error`): every writer resolves
/// its file here first.
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    check_confined(path)?;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(current),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_SYMLINK_HOPS} symbolic links in the chain of `{}`",
        path.display()
    )))
}

/// Fails, naming both, when `path` is a repository's file that really lies
/// outside the repository ([`LeavesRepository`] inside the `io::Error`).
/// For commands that check every file they will write before the first.
pub fn check_confined(path: &Path) -> io::Result<()> {
    confine::check(path).map_err(LeavesRepository::into_io)
}

/// What a path holds, when that is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A named pipe: reading it blocks until a writer comes.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A block device.
    BlockDevice,
    /// A character device (`/dev/null`, a terminal).
    CharDevice,
    /// A symbolic link (seen only where links are not followed).
    Symlink,
    /// Anything else the platform has.
    Other,
}

impl FileKind {
    /// The kind of `metadata`; `None` for a regular file.
    pub fn of(metadata: &fs::Metadata) -> Option<Self> {
        let kind = metadata.file_type();
        Some(if kind.is_file() {
            return None;
        } else if kind.is_dir() {
            Self::Directory
        } else if let Some(special) = os::special_kind(kind) {
            special
        } else if kind.is_symlink() {
            Self::Symlink
        } else {
            Self::Other
        })
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Directory => "a directory",
            Self::Fifo => "a FIFO",
            Self::Socket => "a socket",
            Self::BlockDevice => "a block device",
            Self::CharDevice => "a character device",
            Self::Symlink => "a symbolic link",
            Self::Other => "a special file",
        })
    }
}

/// A path where a file is read holds something else.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is {kind}, not a regular file", path.display())]
pub struct NotRegularFile {
    /// The path.
    pub path: PathBuf,
    /// What it is instead.
    pub kind: FileKind,
}

impl NotRegularFile {
    /// The [`NotRegularFile`] inside `error`, if that is what it is.
    pub fn in_io(error: &io::Error) -> Option<&Self> {
        error.get_ref().and_then(|inner| inner.downcast_ref())
    }

    fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidInput, self)
    }
}

fn check_regular(path: &Path, metadata: &fs::Metadata) -> io::Result<()> {
    match FileKind::of(metadata) {
        None => Ok(()),
        Some(kind) => Err(NotRegularFile {
            path: path.to_path_buf(),
            kind,
        }
        .into_io()),
    }
}

/// Opens `path` for reading only if it is a regular file (symlinks
/// followed); `None` when it does not exist, or is a repository's file
/// that leads out of the repository ([`confine`]). A FIFO, socket, device or
/// directory is an error ([`NotRegularFile`] inside the `io::Error`) and is
/// never opened for a read that could block.
///
/// The path is checked twice: `stat` before opening, so a device is never
/// even opened, and `fstat` of what was opened, in case the path was swapped
/// in between. The open itself uses `O_NONBLOCK`, so a FIFO swapped in
/// during that window does not block the open; on a regular file the flag
/// changes nothing (Linux ignores it for regular files), so it is not
/// cleared.
pub fn open_regular(path: &Path) -> io::Result<Option<File>> {
    // A repository's file that leads outside it is not followed: what is
    // there (`~/.aws/credentials`) is not the repository's to hand out.
    if confine::check(path).is_err() {
        return Ok(None);
    }
    match fs::metadata(path) {
        Ok(metadata) => check_regular(path, &metadata)?,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    }
    let file = match os::nonblocking(OpenOptions::new().read(true)).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    check_regular(path, &file.metadata()?)?;
    Ok(Some(file))
}

/// Reads the regular file at `path` whole; `None` when it does not exist.
/// See [`open_regular`] for what is refused.
pub fn read_regular(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let Some(mut file) = open_regular(path)? else {
        return Ok(None);
    };
    let mut bytes = os::read_buffer(file.metadata().map_or(0, |metadata| {
        usize::try_from(metadata.len()).unwrap_or_default()
    }));
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Reads a UTF-8 text file, `None` when it does not exist; only regular
/// files are read (see [`open_regular`]).
pub fn read_if_exists(path: &Path) -> io::Result<Option<String>> {
    Disk.read_text(path)
}

/// Where reads of files come from: the disk, or an edit session, which
/// shows a dry run's own earlier writes in place of the files.
pub trait Reads {
    /// The regular file at `path` whole; `None` when it does not exist.
    fn read_regular(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;

    /// [`Reads::read_regular`] as UTF-8 text.
    fn read_text(&self, path: &Path) -> io::Result<Option<String>> {
        self.read_regular(path)?
            .map(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
            })
            .transpose()
    }

    /// Whether what is read of `path` may go into mcpenv's caches (the
    /// layout cache): the bytes on disk may, a preview's text of a change
    /// it did not make may not.
    fn keeps_caches(&self, _path: &Path) -> bool {
        true
    }
}

/// The files as they are on disk ([`read_regular`]).
pub struct Disk;

impl Reads for Disk {
    fn read_regular(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        read_regular(path)
    }
}

/// Whether the file at `path` still holds exactly `expected` (`None`: does
/// not exist), compared in chunks so a large file is not held twice. Anything
/// but a regular file there now counts as a change.
pub fn unchanged(path: &Path, expected: Option<&str>) -> io::Result<bool> {
    unchanged_bytes(path, expected.map(str::as_bytes))
}

/// [`unchanged`] for bytes.
pub fn unchanged_bytes(path: &Path, expected: Option<&[u8]>) -> io::Result<bool> {
    let mut file = match open_regular(path) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(expected.is_none()),
        Err(error) if NotRegularFile::in_io(&error).is_some() => return Ok(false),
        Err(error) => return Err(error),
    };
    let Some(expected) = expected else {
        return Ok(false);
    };
    if file.metadata()?.len() != expected.len() as u64 {
        return Ok(false);
    }
    let mut expected = expected;
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(expected.is_empty());
        }
        if expected.len() < read || expected[..read] != buffer[..read] {
            return Ok(false);
        }
        expected = &expected[read..];
    }
}

/// What identifies one state of a file without reading it: its inode
/// (device and number), size, and the times of its last change of content
/// (`mtime`) and of anything (`ctime`, which no program can set back).
/// Windows gives neither inode nor `ctime` ([`os`]): there the stamp tells
/// a change apart only by size and `mtime`, and the bytes are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    inode: Option<os::Identity>,
    size: u64,
    modified: (i64, i64),
    changed: Option<(i64, i64)>,
    links: Option<u64>,
}

impl Stamp {
    /// The stamp of `metadata`.
    pub fn of(metadata: &fs::Metadata) -> Self {
        Self {
            inode: os::identity(metadata),
            size: metadata.len(),
            modified: os::modified(metadata),
            changed: os::changed(metadata),
            links: os::links(metadata),
        }
    }

    /// Whether the file has no other name than the one it was read by.
    pub fn single_link(&self) -> bool {
        self.links == Some(1)
    }

    /// The inode, as (device, number); `None` on Windows.
    pub fn inode(&self) -> Option<os::Identity> {
        self.inode
    }
}

/// A file read whole for an edit, kept open: its bytes and the [`Stamp`]
/// of the state they were read from, so that a change made since is found
/// from metadata ([`Snapshot::unchanged_at`]) instead of by reading the
/// file again. Holding the file open also keeps its inode from being
/// reused while the edit runs.
#[derive(Debug)]
pub struct Snapshot {
    file: File,
    stamp: Stamp,
}

impl Snapshot {
    /// The stamp of the state read.
    pub fn stamp(&self) -> &Stamp {
        &self.stamp
    }

    /// Whether `path` still holds the state read, `bytes` being what was
    /// read, asked while the writer holds `temporary` (created before the
    /// read): the same inode, size, `mtime` and `ctime`. Those can miss a
    /// change only when it fell in the very clock tick of the read, which
    /// is when the file's `ctime` is not older than the temporary file's
    /// creation; then the bytes are compared, as a slow path.
    pub fn unchanged_at(
        &self,
        path: &Path,
        bytes: &[u8],
        temporary: &AtomicWrite,
    ) -> io::Result<bool> {
        let now = match fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => Stamp::of(&metadata),
            Ok(_) => return Ok(false),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        if now != self.stamp {
            return Ok(false);
        }
        if let (Some(changed), Some(created)) = (self.stamp.changed, temporary.created)
            && changed < created
        {
            return Ok(true);
        }
        unchanged_bytes(path, Some(bytes))
    }

    /// The file read, open.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether the file's last change (its `ctime`) is older than the
    /// creation of `temporary`: then every byte read after that creation
    /// is of the stamped state, as long as the stamp stays
    /// ([`Snapshot::same_at`]). `false` where there is no `ctime`.
    pub fn settled_before(&self, temporary: &AtomicWrite) -> bool {
        matches!(
            (self.stamp.changed, temporary.created),
            (Some(changed), Some(created)) if changed < created
        )
    }

    /// Whether `path` still has the stamp of the state opened: for a file
    /// [`Snapshot::settled_before`] the writer's temporary file, the
    /// metadata check of [`Snapshot::unchanged_at`], which needs no bytes
    /// (any change since moved the `ctime` past the temporary's creation).
    pub fn same_at(&self, path: &Path) -> io::Result<bool> {
        match fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => Ok(Stamp::of(&metadata) == self.stamp),
            Ok(_) => Ok(false),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }
}

/// Reads the regular file at `path` whole and keeps it open (see
/// [`open_regular`] for what is refused); `None` when it does not exist.
pub fn read_snapshot(path: &Path) -> io::Result<Option<(Vec<u8>, Snapshot)>> {
    let Some(mut file) = open_regular(path)? else {
        return Ok(None);
    };
    let metadata = file.metadata()?;
    let mut bytes = os::read_buffer(usize::try_from(metadata.len()).unwrap_or_default());
    file.read_to_end(&mut bytes)?;
    // Taken after the read: a change made while it read shows as a `ctime`
    // not older than the writer's temporary file, which
    // [`Snapshot::unchanged_at`] checks by comparing the bytes.
    let stamp = Stamp::of(&file.metadata()?);
    Ok(Some((bytes, Snapshot { file, stamp })))
}

/// Opens the regular file at `path` for an edit that reads only parts of
/// it (see [`open_regular`] for what is refused), stamped as opened;
/// `None` when it does not exist. Its state is that stamp only when
/// nothing changed it since before the writer's temporary file was made
/// ([`Snapshot::settled_before`]): the edit checks that first, and
/// [`Snapshot::same_at`] before its rename.
pub fn open_snapshot(path: &Path) -> io::Result<Option<Snapshot>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    let stamp = Stamp::of(&file.metadata()?);
    Ok(Some(Snapshot { file, stamp }))
}

/// An atomic replacement of a file under way: the temporary file next to
/// it exists (created first, so its creation time is a clock reading of
/// the file's own file system taken before the edit read the file), is
/// written, then renamed over the file by [`AtomicWrite::commit`]. Dropped
/// uncommitted, the temporary file is removed.
pub struct AtomicWrite {
    temporary: tempfile::NamedTempFile,
    directory: PathBuf,
    path: PathBuf,
    /// The temporary file's `ctime` at its creation (`None` on Windows).
    created: Option<(i64, i64)>,
}

impl fmt::Debug for AtomicWrite {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AtomicWrite")
            .field("path", &self.path)
            .field("temporary", &self.temporary.path())
            .finish()
    }
}

/// What [`AtomicWrite::commit`] renamed into place.
#[derive(Debug)]
pub struct Committed {
    /// The `mtime` of the last write, before the rename.
    written: (i64, i64),
    /// The file as it was right after the rename (whose `ctime` the
    /// rename set).
    renamed: Stamp,
}

impl Committed {
    /// Whether `path` still holds what was renamed there, told from
    /// metadata: the same inode, size, `mtime` and `ctime` as right after
    /// the rename, and that `mtime` the one of the last write. A write in
    /// place after the rename changes them, unless it falls in the clock
    /// tick of the last write and of the rename (the rename's `ctime`
    /// equal to that `mtime`): then the bytes are compared with `pieces`.
    pub fn still_at(&self, path: &Path, pieces: &[&[u8]]) -> io::Result<bool> {
        self.still_at_or(path, || holds_pieces(path, pieces))
    }

    /// [`Committed::still_at`] for a text written as [`spliced::Piece`]s
    /// of the old file `old`.
    pub fn still_at_spliced(
        &self,
        path: &Path,
        old: &File,
        pieces: &[spliced::Piece<'_>],
    ) -> io::Result<bool> {
        self.still_at_or(path, || match open_regular(path)? {
            Some(file) => spliced::holds(&file, old, pieces),
            None => Ok(false),
        })
    }

    /// [`Committed::still_at`], the bytes compared by `holds`.
    fn still_at_or(
        &self,
        path: &Path,
        holds: impl FnOnce() -> io::Result<bool>,
    ) -> io::Result<bool> {
        let now = match fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => Stamp::of(&metadata),
            Ok(_) => return Ok(false),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        if now != self.renamed || self.renamed.modified != self.written {
            return Ok(false);
        }
        if self
            .renamed
            .changed
            .is_some_and(|changed| changed != self.written)
        {
            return Ok(true);
        }
        holds()
    }
}

impl AtomicWrite {
    /// Creates the temporary file for replacing `path` (already
    /// symlink-resolved) in its directory, with the existing file's mode
    /// (else `new_mode`).
    pub fn begin(path: &Path, new_mode: NewMode) -> io::Result<Self> {
        let directory = directory_of(path);
        let name = path
            .file_name()
            .map_or_else(|| "file".into(), |name| name.to_string_lossy());
        let existing_mode = match fs::metadata(path) {
            Ok(metadata) => os::mode(&metadata),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        if let (None, NewMode::Umasked(mode)) = (existing_mode, new_mode)
            && let Some(permissions) = os::new_file_permissions(mode)
        {
            // Applied at creation, so the kernel subtracts the umask.
            builder.permissions(permissions);
        }
        let temporary = builder.tempfile_in(directory)?;
        let metadata = temporary.as_file().metadata()?;
        match (existing_mode, new_mode) {
            (Some(mode), _) | (None, NewMode::Exact(mode)) => {
                os::set_file_mode(temporary.as_file(), mode)?;
            }
            (None, NewMode::Umasked(_)) => {}
        }
        Ok(Self {
            temporary,
            directory: directory.to_path_buf(),
            path: path.to_path_buf(),
            created: os::changed(&metadata),
        })
    }

    /// Writes `pieces` (the whole new content, once) and syncs it.
    pub fn write(&mut self, pieces: &[&[u8]]) -> io::Result<()> {
        let file = self.temporary.as_file_mut();
        file.set_len(0)?;
        file.seek(io::SeekFrom::Start(0))?;
        for piece in pieces {
            file.write_all(piece)?;
        }
        // Needed before the rename: without it a crash (power loss, not a
        // kill) can leave the file's name on an inode whose data never
        // reached the disk, an empty or partial file where the old one
        // was.
        file.sync_all()
    }

    /// Writes the text `pieces` of the old file `old` make (its ranges
    /// copied by the kernel where it can: [`spliced::write_to`]) and syncs
    /// it.
    pub fn write_spliced(&mut self, old: &File, pieces: &[spliced::Piece<'_>]) -> io::Result<()> {
        let file = self.temporary.as_file_mut();
        file.set_len(0)?;
        file.seek(io::SeekFrom::Start(0))?;
        spliced::write_to(old, pieces, file, true)?;
        file.sync_all()
    }

    /// Renames the temporary file over the file and syncs the directory,
    /// if `verify` agrees; otherwise the temporary file is removed.
    pub fn commit<E>(
        self,
        verify: impl FnOnce(&Self) -> Result<(), E>,
    ) -> Result<Result<Committed, E>, io::Error> {
        if let Err(error) = verify(&self) {
            return Ok(Err(error));
        }
        let written = os::modified(&self.temporary.as_file().metadata()?);
        let directory = self.directory.clone();
        let file = self
            .temporary
            .persist(&self.path)
            .map_err(|error| error.error)?;
        let renamed = Stamp::of(&file.metadata()?);
        // Needed before the edit is reported: until the directory is
        // synced, a crash can bring the old file back after mcpenv said
        // it wrote the new one.
        os::sync_directory(&directory)?;
        Ok(Ok(Committed { written, renamed }))
    }
}

/// The folder a file's temporary copy is made in: its own (`.` for a bare
/// name), so the rename stays on one file system.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Whether the file at `path` holds exactly the concatenation of `pieces`,
/// compared in chunks so a large file is not read into memory again; only
/// a regular file is opened (a FIFO put there is not waited on).
pub fn holds_pieces(path: &Path, pieces: &[&[u8]]) -> io::Result<bool> {
    let Some(mut file) = open_regular(path)? else {
        return Ok(false);
    };
    let size: usize = pieces.iter().map(|piece| piece.len()).sum();
    if file.metadata()?.len() != size as u64 {
        return Ok(false);
    }
    let mut buffer = vec![0; 1 << 16];
    for piece in pieces {
        for chunk in piece.chunks(buffer.len()) {
            let read = &mut buffer[..chunk.len()];
            if file.read_exact(read).is_err() || read != chunk {
                return Ok(false);
            }
        }
    }
    Ok(file.read(&mut buffer)? == 0)
}

/// The mode a file gets when mcpenv creates it.
#[derive(Debug, Clone, Copy)]
pub enum NewMode {
    /// Exactly this mode, whatever the umask (`~/.claude.json`, `.env`).
    Exact(u32),
    /// This mode less the umask, as any program creating a file gets.
    Umasked(u32),
}

/// Replaces `path` (already symlink-resolved) with the concatenation of
/// `contents` atomically: a
/// temporary file in the same directory, the existing file's mode (else
/// `new_mode`), `fsync`, then `verify`, then rename and `fsync` of the
/// directory. When `verify` says no, nothing is renamed and the temporary
/// file is removed.
pub fn write_atomic<E>(
    path: &Path,
    contents: &[&[u8]],
    new_mode: NewMode,
    verify: impl FnOnce() -> Result<(), E>,
) -> Result<Result<(), E>, io::Error> {
    let mut write = AtomicWrite::begin(path, new_mode)?;
    write.write(contents)?;
    Ok(write.commit(|_| verify())?.map(|_| ()))
}

/// Replaces `path` with `contents` atomically (a temporary file renamed
/// over it, so a reader or a kill sees the old or the new bytes, never a
/// mix) without syncing anything: for mcpenv's own bookkeeping that a
/// crash may lose (the undo journal's records), where an fsync would cost
/// more than the edit it records.
pub fn replace_unsynced(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    let directory = directory_of(path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".").suffix(".tmp");
    if let Some(permissions) = os::new_file_permissions(mode) {
        builder.permissions(permissions);
    }
    let mut temporary = builder.tempfile_in(directory)?;
    temporary.write_all(contents)?;
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// How often an edit is redone when the file keeps changing under it.
pub const EDIT_ATTEMPTS: usize = 5;

/// Why [`edit_text`] failed.
#[derive(Debug)]
pub enum TextEditError<E> {
    /// Reading the file failed.
    Read(io::Error),
    /// Writing it failed (or mcpenv's lock file could not be created, which
    /// the error names); the file is as it was.
    Write(io::Error),
    /// Another mcpenv held the lock for longer than [`LOCK_TIMEOUT`].
    Locked(LockError),
    /// Another program kept rewriting the file.
    Contended,
    /// The change itself failed.
    Change(E),
}

/// Rewrites the text file `path` with `change(old)` (`None` from it: leave
/// the file alone) under mcpenv's lock, atomically, and redoes the change
/// when another program rewrote the file meanwhile; `written(resolved,
/// before, after)` is told of the write once the lock is released (the
/// undo journal keeps `before`). Returns whether it wrote. Writers call it
/// through their edit session, which previews instead in a dry run.
pub fn edit_text<E>(
    state_dir: &Path,
    path: &Path,
    new_mode: NewMode,
    mut change: impl FnMut(Option<&str>) -> Result<Option<String>, E>,
    written: impl FnOnce(&Path, Option<&str>, &str),
) -> Result<bool, TextEditError<E>> {
    let resolved = resolve_symlinks(path).map_err(TextEditError::Read)?;
    let _lock =
        EditLock::acquire(state_dir, &resolved, LOCK_TIMEOUT).map_err(|error| match error {
            LockError::Io { .. } => TextEditError::Write(io::Error::other(error)),
            busy => TextEditError::Locked(busy),
        })?;
    for _ in 0..EDIT_ATTEMPTS {
        let old = read_if_exists(&resolved).map_err(TextEditError::Read)?;
        let Some(new) = change(old.as_deref()).map_err(TextEditError::Change)? else {
            return Ok(false);
        };
        let verified = write_atomic(&resolved, &[new.as_bytes()], new_mode, || {
            match unchanged(&resolved, old.as_deref()) {
                Ok(true) => Ok(()),
                _ => Err(()),
            }
        })
        .map_err(TextEditError::Write)?;
        if verified.is_ok() {
            drop(_lock);
            written(&resolved, old.as_deref(), &new);
            return Ok(true);
        }
    }
    Err(TextEditError::Contended)
}

/// How long to wait for another mcpenv editing the same file.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Pauses between attempts to take a lock: short at first, then longer, so
/// waiting never spins.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Self(Duration::from_millis(2))
    }

    fn pause(&mut self) {
        thread::sleep(self.0);
        self.0 = (self.0 * 2).min(Duration::from_millis(50));
    }
}

/// Taking a lock failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock could not be created or examined.
    #[error("cannot create the lock `{}`", path.display())]
    Io {
        /// The lock file or directory (or the directory meant to hold it).
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Another mcpenv held mcpenv's lock for longer than the timeout.
    #[error("mcpenv's lock `{}` is still held after {} s, by {}", lock.display(), waited.as_secs(), holder.map_or_else(|| "another mcpenv".to_string(), |pid| format!("mcpenv process {pid}")))]
    Edit {
        /// The lock file.
        lock: PathBuf,
        /// How long mcpenv waited.
        waited: Duration,
        /// The process id the holder wrote into it, if it could be read.
        holder: Option<u32>,
    },
    /// Claude Code's lock stayed fresh (kept being renewed) for longer than
    /// the timeout.
    #[error("Claude Code's lock `{}` is still held after {} s ({kind}, {})", lock.display(), waited.as_secs(), describe_age(*age))]
    Claude {
        /// The lock (normally a directory).
        lock: PathBuf,
        /// What the lock is.
        kind: LockKind,
        /// How long mcpenv waited.
        waited: Duration,
        /// How long ago it was last modified; `None` when in the future.
        age: Option<Duration>,
    },
}

fn describe_age(age: Option<Duration>) -> String {
    match age {
        Some(age) => format!("last modified {} s ago", age.as_secs()),
        None => "modified in the future: a clock is wrong".to_string(),
    }
}

impl LockError {
    /// The lock file or directory the error is about.
    pub fn lock_path(&self) -> &Path {
        match self {
            Self::Io { path, .. } => path,
            Self::Edit { lock, .. } | Self::Claude { lock, .. } => lock,
        }
    }
}

/// An exclusive lock on a file in mcpenv's state directory, keyed by the
/// path of the file being edited; the target itself is never locked. The
/// holder's process id is written into the file, for the error of whoever
/// waits too long. The operating system releases the lock when its holder
/// dies, so it can never be stale.
#[derive(Debug)]
pub struct EditLock {
    _file: File,
}

impl EditLock {
    /// Waits (sleeping between attempts) up to `timeout` for the lock
    /// guarding edits of `target`.
    pub fn acquire(state_dir: &Path, target: &Path, timeout: Duration) -> Result<Self, LockError> {
        let directory = state_dir.join("locks");
        fs::create_dir_all(&directory).map_err(|source| LockError::Io {
            path: directory.clone(),
            source,
        })?;
        let digest = Sha256::digest(target.as_os_str().as_encoded_bytes());
        let name: String = digest[..12]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let path = directory.join(format!("{name}.lock"));
        let io_error = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = os::nonblocking(
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true),
        )
        .open(&path)
        .map_err(io_error)?;
        check_regular(&path, &file.metadata().map_err(io_error)?).map_err(io_error)?;
        let started = Instant::now();
        let mut backoff = Backoff::new();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    backoff.pause();
                }
                Err(fs::TryLockError::WouldBlock) => {
                    let holder = read_if_exists(&path)
                        .ok()
                        .flatten()
                        .and_then(|text| text.trim().parse().ok());
                    return Err(LockError::Edit {
                        lock: path,
                        waited: timeout,
                        holder,
                    });
                }
                Err(fs::TryLockError::Error(error)) => return Err(io_error(error)),
            }
        }
        // Informational only: the lock is the flock, not this text. Of one
        // width, written over the last holder's: no `ftruncate`, which
        // waits for the file system's journal on every lock taken.
        let holder = format!("{:<10}\n", std::process::id());
        let _ = file
            .write_all(holder.as_bytes())
            .and_then(|()| match file.metadata() {
                Ok(metadata) if metadata.len() > holder.len() as u64 => {
                    file.set_len(holder.len() as u64)
                }
                Ok(_) => Ok(()),
                Err(error) => Err(error),
            });
        Ok(Self { _file: file })
    }
}

/// Claude Code's own lock on `~/.claude.json`: a directory `<file>.lock`
/// (npm proper-lockfile), stale once its mtime is older than 10 s.
#[derive(Debug)]
pub struct ClaudeLock {
    directory: PathBuf,
}

/// When proper-lockfile considers a lock abandoned: its holder renews the
/// mtime every 5 s while it lives.
pub const CLAUDE_LOCK_STALE: Duration = Duration::from_secs(10);

/// How long mcpenv waits for a Claude Code lock that keeps being renewed.
/// Longer than [`CLAUDE_LOCK_STALE`], so an abandoned lock is always taken
/// over before this runs out.
pub const CLAUDE_LOCK_TIMEOUT: Duration = Duration::from_secs(15);

/// What sits at the path of Claude Code's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// An empty directory, as proper-lockfile makes it.
    EmptyDirectory,
    /// A directory with something in it.
    Directory,
    /// Anything else: a file, a symlink, a FIFO.
    File,
}

impl fmt::Display for LockKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::EmptyDirectory => "an empty directory",
            Self::Directory => "a directory that is not empty",
            Self::File => "not a directory",
        })
    }
}

/// What mcpenv saw at the lock's path: if it stays the same while mcpenv
/// watches it for [`CLAUDE_LOCK_STALE`], nobody is renewing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    inode: Option<os::Identity>,
    modified: Option<SystemTime>,
}

impl Seen {
    fn of(metadata: &fs::Metadata) -> Self {
        Self {
            inode: os::identity(metadata),
            modified: metadata.modified().ok(),
        }
    }

    /// Whether `moved` is still the lock seen: the same inode, or on
    /// Windows (no inode, see [`os`]) the same modification time.
    fn is(&self, moved: &fs::Metadata) -> bool {
        match (os::identity(moved), self.inode) {
            (Some(now), Some(before)) => now == before,
            _ => moved.modified().ok() == self.modified,
        }
    }
}

impl ClaudeLock {
    /// Takes the lock for `target`, waiting (sleeping between attempts)
    /// while a live holder renews it, up to [`CLAUDE_LOCK_TIMEOUT`].
    pub fn acquire(target: &Path) -> Result<Self, LockError> {
        Self::acquire_within(target, CLAUDE_LOCK_TIMEOUT)
    }

    /// [`ClaudeLock::acquire`] with another timeout.
    ///
    /// A lock is stale, and is taken over, when its mtime is more than
    /// [`CLAUDE_LOCK_STALE`] old (proper-lockfile's rule), or when it has not
    /// changed at all while mcpenv watched it for that long (which covers an
    /// mtime in the future). Stale locks are taken over whatever they are:
    /// an empty or non-empty directory, a file.
    pub fn acquire_within(target: &Path, timeout: Duration) -> Result<Self, LockError> {
        Self::acquire_with(target, timeout, CLAUDE_LOCK_STALE)
    }

    fn acquire_with(target: &Path, timeout: Duration, stale: Duration) -> Result<Self, LockError> {
        let mut directory = target.as_os_str().to_owned();
        directory.push(".lock");
        let directory = PathBuf::from(directory);
        let io_error = |source| LockError::Io {
            path: directory.clone(),
            source,
        };
        let started = Instant::now();
        let mut backoff = Backoff::new();
        let mut watched: Option<(Seen, Instant)> = None;
        loop {
            match fs::create_dir(&directory) {
                Ok(()) => return Ok(Self { directory }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(io_error(error)),
            }
            let metadata = match fs::symlink_metadata(&directory) {
                Ok(metadata) => metadata,
                // Released in between: try again.
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    if started.elapsed() >= timeout {
                        return Err(io_error(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "it kept appearing and disappearing",
                        )));
                    }
                    backoff.pause();
                    continue;
                }
                Err(error) => return Err(io_error(error)),
            };
            let seen = Seen::of(&metadata);
            let now = Instant::now();
            let since = match watched {
                Some((before, since)) if before == seen => since,
                _ => {
                    watched = Some((seen, now));
                    now
                }
            };
            let age = seen
                .modified
                .and_then(|modified| SystemTime::now().duration_since(modified).ok());
            if age.is_some_and(|age| age > stale) || now.duration_since(since) > stale {
                take_over(&directory, &metadata, seen).map_err(io_error)?;
                watched = None;
            } else if started.elapsed() >= timeout {
                return Err(LockError::Claude {
                    kind: lock_kind(&directory, &metadata),
                    lock: directory,
                    waited: timeout,
                    age,
                });
            }
            backoff.pause();
        }
    }
}

fn lock_kind(path: &Path, metadata: &fs::Metadata) -> LockKind {
    if !metadata.is_dir() {
        return LockKind::File;
    }
    match fs::read_dir(path).map(|mut entries| entries.next().is_none()) {
        Ok(true) => LockKind::EmptyDirectory,
        _ => LockKind::Directory,
    }
}

/// Removes the stale lock at `path` that was `seen` so: first renamed aside
/// (one atomic step, so nobody sees it half removed), then checked to be the
/// very lock judged stale (else put back), then deleted with its contents.
fn take_over(path: &Path, metadata: &fs::Metadata, seen: Seen) -> io::Result<()> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(
        ".stale.{}.{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    ));
    let aside = PathBuf::from(aside);
    match fs::rename(path, &aside) {
        Ok(()) => {}
        // Someone else removed it first.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    }
    let moved = fs::symlink_metadata(&aside)?;
    if !seen.is(&moved) {
        // A new holder replaced it between the look and the rename.
        let _ = fs::rename(&aside, path);
        return Ok(());
    }
    if metadata.is_dir() {
        fs::remove_dir_all(&aside)
    } else {
        fs::remove_file(&aside)
    }
}

impl Drop for ClaudeLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.directory);
    }
}

/// Why a directory cannot hold mcpenv's lock files.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// A path on the way is not a directory.
    #[error("`{}` is not a directory", path.display())]
    NotADirectory {
        /// That path.
        path: PathBuf,
    },
    /// The nearest existing directory cannot be written.
    #[error("`{}` is not writable", path.display())]
    NotWritable {
        /// That directory.
        path: PathBuf,
        /// What `access(2)` said (on Windows: the trial file that failed).
        #[source]
        source: io::Error,
    },
    /// The fallback exists but is not a private directory of this user.
    #[error("`{}` is not a private directory of yours ({detail})", path.display())]
    NotPrivate {
        /// The directory.
        path: PathBuf,
        /// What is wrong: owner, mode or a symlink.
        detail: String,
    },
    /// Creating or examining it failed.
    #[error("cannot create `{}`", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Whether `dir` (which may not exist yet) could be created and written,
/// without creating anything: the nearest existing ancestor must be a
/// directory this process may write to.
pub fn check_writable_dir(dir: &Path) -> Result<(), StateDirError> {
    let Some(existing) = dir
        .ancestors()
        .find(|ancestor| fs::symlink_metadata(ancestor).is_ok())
    else {
        return Ok(());
    };
    if !existing.is_dir() {
        return Err(StateDirError::NotADirectory {
            path: existing.to_path_buf(),
        });
    }
    os::check_writable(existing).map_err(|source| StateDirError::NotWritable {
        path: existing.to_path_buf(),
        source,
    })
}

/// Makes sure `dir` is a directory of this user's that nobody else can use:
/// created with mode 0700 if missing; if present, not a symlink, owned by
/// this user, no permissions for group or others. For state kept in a
/// shared place such as the temporary directory.
pub fn private_dir(dir: &Path) -> Result<(), StateDirError> {
    match os::create_private_dir(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(StateDirError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    }
    let metadata = fs::symlink_metadata(dir).map_err(|source| StateDirError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let not_private = |detail: String| StateDirError::NotPrivate {
        path: dir.to_path_buf(),
        detail,
    };
    if metadata.file_type().is_symlink() {
        return Err(not_private("a symbolic link".to_string()));
    }
    if !metadata.is_dir() {
        return Err(StateDirError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    match os::not_private(&metadata) {
        Some(detail) => Err(not_private(detail)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::{PermissionsExt, symlink};

    /// Files larger than a few huge pages, whose read buffer asks for them
    /// on Linux (`os::read_buffer`), and small ones read back whole, byte
    /// for byte.
    #[test]
    fn reads_small_and_huge_page_sized_files_whole() {
        let temp = tempfile::tempdir().unwrap();
        for len in [0, 1, 4095, (2 << 20) - 1, (6 << 20) + 12_345] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let path = temp.path().join(format!("file-{len}"));
            fs::write(&path, &bytes).unwrap();
            assert!(read_regular(&path).unwrap().unwrap() == bytes, "{len}");
            let (read, _snapshot) = read_snapshot(&path).unwrap().unwrap();
            assert!(read == bytes, "{len}");
            let buffer = os::read_buffer(len);
            assert!(buffer.is_empty() && buffer.capacity() >= len);
        }
    }

    #[test]
    fn writes_through_a_symlink_chain_and_keeps_the_mode() {
        let temp = tempfile::tempdir().unwrap();
        let real = temp.path().join("real.json");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, Permissions::from_mode(0o640)).unwrap();
        symlink("real.json", temp.path().join("one")).unwrap();
        symlink(temp.path().join("one"), temp.path().join("two")).unwrap();

        let resolved = resolve_symlinks(&temp.path().join("two")).unwrap();
        assert_eq!(resolved, temp.path().join("real.json"));
        write_atomic(
            &resolved,
            &[b"ne".as_slice(), b"w".as_slice()],
            NewMode::Exact(0o600),
            || Ok::<(), ()>(()),
        )
        .unwrap()
        .unwrap();
        assert!(
            fs::symlink_metadata(temp.path().join("two"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(temp.path().join("two")).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn new_files_get_the_requested_mode() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("new");
        write_atomic(&path, &[b"x".as_slice()], NewMode::Exact(0o600), || {
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn a_failed_verification_writes_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "keep").unwrap();
        let outcome = write_atomic(&path, &[b"lost".as_slice()], NewMode::Exact(0o600), || {
            Err("changed")
        })
        .unwrap();
        assert_eq!(outcome, Err("changed"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "keep");
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 1);
    }

    #[test]
    fn unchanged_compares_content() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        assert!(unchanged(&path, None).unwrap());
        fs::write(&path, "abc").unwrap();
        assert!(unchanged(&path, Some("abc")).unwrap());
        assert!(!unchanged(&path, Some("abd")).unwrap());
        assert!(!unchanged(&path, None).unwrap());
    }

    #[test]
    fn a_snapshot_tells_a_later_change_from_metadata() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "abc").unwrap();
        // An old file: its ctime is older than the temporary file made
        // before the read, so metadata alone decides.
        let old = SystemTime::now() - Duration::from_secs(60);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let temporary = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        let (bytes, snapshot) = read_snapshot(&path).unwrap().unwrap();
        assert_eq!(bytes, b"abc");
        assert!(snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
        // Rewritten in place with bytes of the same length.
        fs::write(&path, "abd").unwrap();
        assert!(!snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
        // Replaced by a rename, with the very same bytes: another inode.
        let other = temp.path().join("other");
        fs::write(&other, "abc").unwrap();
        fs::rename(&other, &path).unwrap();
        assert!(!snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
        fs::remove_file(&path).unwrap();
        assert!(!snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
    }

    #[test]
    fn a_file_changed_after_the_temporary_was_made_is_compared_by_its_bytes() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        // Created after the temporary file: metadata cannot be trusted, so
        // a same-size rewrite with its times put back is still found.
        let temporary = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        fs::write(&path, "abc").unwrap();
        let (bytes, snapshot) = read_snapshot(&path).unwrap().unwrap();
        assert!(snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        fs::write(&path, "xyz").unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert!(!snapshot.unchanged_at(&path, &bytes, &temporary).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn an_opened_snapshot_is_settled_only_when_older_than_the_temporary() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "abc").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let temporary = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        let snapshot = open_snapshot(&path).unwrap().unwrap();
        assert!(snapshot.settled_before(&temporary));
        assert!(snapshot.same_at(&path).unwrap());
        // Changed after the temporary was made: not settled, and its stamp
        // moved.
        fs::write(&path, "abd").unwrap();
        assert!(!snapshot.same_at(&path).unwrap());
        let changed = open_snapshot(&path).unwrap().unwrap();
        assert!(!changed.settled_before(&temporary));
        fs::remove_file(&path).unwrap();
        assert!(!snapshot.same_at(&path).unwrap());
        assert!(open_snapshot(&path).unwrap().is_none());
    }

    #[test]
    fn a_spliced_write_is_written_and_checked_as_its_pieces() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "old bytes").unwrap();
        let old = File::open(&path).unwrap();
        let pieces = [
            spliced::Piece::Old(0..4),
            spliced::Piece::New(b"new "),
            spliced::Piece::Old(4..9),
        ];
        let mut write = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        write.write_spliced(&old, &pieces).unwrap();
        let committed = write.commit(|_| Ok::<(), ()>(())).unwrap().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "old new bytes");
        assert!(committed.still_at_spliced(&path, &old, &pieces).unwrap());
        fs::write(&path, "old NEW bytes").unwrap();
        assert!(!committed.still_at_spliced(&path, &old, &pieces).unwrap());
    }

    #[test]
    fn a_committed_write_is_checked_by_inode() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "old").unwrap();
        let mut write = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        write.write(&[b"ne", b"w"]).unwrap();
        let committed = write.commit(|_| Ok::<(), ()>(())).unwrap().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert!(committed.still_at(&path, &[b"new"]).unwrap());
        // Another program renames its copy over it.
        let other = temp.path().join("other");
        fs::write(&other, "new").unwrap();
        fs::rename(&other, &path).unwrap();
        assert!(!committed.still_at(&path, &[b"new"]).unwrap());
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_uncommitted_write_leaves_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("file");
        fs::write(&path, "keep").unwrap();
        let mut write = AtomicWrite::begin(&path, NewMode::Exact(0o600)).unwrap();
        write.write(&[b"lost"]).unwrap();
        assert_eq!(
            write.commit(|_| Err("changed")).unwrap().unwrap_err(),
            "changed"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "keep");
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 1);
        replace_unsynced(&path, b"mine", 0o600).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "mine");
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_stale_claude_lock_is_taken_over() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join(".claude.json");
        let lock_dir = temp.path().join(".claude.json.lock");
        fs::create_dir(&lock_dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        File::open(&lock_dir).unwrap().set_modified(old).unwrap();
        let lock = ClaudeLock::acquire(&target).unwrap();
        assert!(lock_dir.is_dir());
        drop(lock);
        assert!(!lock_dir.exists());
    }

    #[test]
    fn edit_locks_exclude_each_other() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join("target");
        let held = EditLock::acquire(temp.path(), &target, LOCK_TIMEOUT).unwrap();
        let waited = EditLock::acquire(temp.path(), &target, Duration::from_millis(50));
        let Err(LockError::Edit { lock, holder, .. }) = waited else {
            panic!("{waited:?}")
        };
        assert!(lock.starts_with(temp.path().join("locks")), "{lock:?}");
        assert_eq!(holder, Some(std::process::id()));
        drop(held);
        assert!(EditLock::acquire(temp.path(), &target, Duration::from_millis(50)).is_ok());
    }

    #[test]
    fn a_lock_names_its_holder_over_whatever_the_file_held() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join("target");
        let held = EditLock::acquire(temp.path(), &target, LOCK_TIMEOUT).unwrap();
        let lock_file = fs::read_dir(temp.path().join("locks"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        drop(held);
        for earlier in ["1\n", "a much longer text than any process id\n4242\n", ""] {
            fs::write(&lock_file, earlier).unwrap();
            let held = EditLock::acquire(temp.path(), &target, LOCK_TIMEOUT).unwrap();
            let text = fs::read_to_string(&lock_file).unwrap();
            assert_eq!(
                text.trim().parse::<u32>().ok(),
                Some(std::process::id()),
                "{text:?} after {earlier:?}"
            );
            drop(held);
        }
    }

    fn aged(path: &Path, age: Duration) {
        let when = SystemTime::now() - age;
        File::open(path).unwrap().set_modified(when).unwrap();
    }

    #[test]
    fn only_regular_files_are_read() {
        let temp = tempfile::tempdir().unwrap();
        let fifo = temp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let error = read_if_exists(&fifo).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("`{}` is a FIFO, not a regular file", fifo.display())
        );
        assert_eq!(
            NotRegularFile::in_io(&error).map(|error| error.kind),
            Some(FileKind::Fifo)
        );
        let error = read_if_exists(temp.path()).unwrap_err();
        assert_eq!(
            NotRegularFile::in_io(&error).map(|error| error.kind),
            Some(FileKind::Directory)
        );
        // Through a symlink, what counts is the target.
        symlink(&fifo, temp.path().join("link")).unwrap();
        assert!(read_if_exists(&temp.path().join("link")).is_err());
        assert_eq!(read_if_exists(&temp.path().join("missing")).unwrap(), None);
        // A FIFO where the file was is a change, found without blocking.
        assert!(!unchanged(&fifo, Some("x")).unwrap());
        let error = read_if_exists(Path::new("/dev/null")).unwrap_err();
        assert_eq!(
            NotRegularFile::in_io(&error).map(|error| error.kind),
            Some(FileKind::CharDevice)
        );
    }

    #[test]
    fn stale_claude_locks_of_any_shape_are_taken_over() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join(".claude.json");
        let lock = temp.path().join(".claude.json.lock");
        // A file.
        fs::write(&lock, "").unwrap();
        aged(&lock, Duration::from_secs(60));
        let taken = ClaudeLock::acquire_within(&target, Duration::from_secs(5)).unwrap();
        assert!(lock.is_dir());
        drop(taken);
        // A directory that is not empty.
        fs::create_dir_all(lock.join("inner")).unwrap();
        fs::write(lock.join("inner/file"), "x").unwrap();
        aged(&lock, Duration::from_secs(60));
        let taken = ClaudeLock::acquire_within(&target, Duration::from_secs(5)).unwrap();
        assert_eq!(fs::read_dir(&lock).unwrap().count(), 0);
        drop(taken);
        assert!(!lock.exists());
        // Nothing left aside.
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_claude_lock_from_the_future_is_taken_over_once_it_stops_changing() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join(".claude.json");
        let lock = temp.path().join(".claude.json.lock");
        fs::create_dir(&lock).unwrap();
        let future = SystemTime::now() + Duration::from_secs(3600);
        File::open(&lock).unwrap().set_modified(future).unwrap();
        let started = Instant::now();
        let taken =
            ClaudeLock::acquire_with(&target, Duration::from_secs(5), Duration::from_millis(200))
                .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(200));
        drop(taken);
    }

    #[test]
    fn a_fresh_claude_lock_times_out_naming_it() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join(".claude.json");
        let lock = temp.path().join(".claude.json.lock");
        fs::create_dir(&lock).unwrap();
        let error = ClaudeLock::acquire_within(&target, Duration::from_millis(100)).unwrap_err();
        let LockError::Claude { kind, age, .. } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(*kind, LockKind::EmptyDirectory);
        assert!(age.is_some());
        assert_eq!(error.lock_path(), lock);
        assert_eq!(
            error.to_string(),
            format!(
                "Claude Code's lock `{}` is still held after 0 s (an empty directory, last modified 0 s ago)",
                lock.display()
            )
        );
        assert!(lock.is_dir(), "a live lock is left alone");
    }

    #[test]
    fn a_lock_directory_that_cannot_be_created_is_named() {
        let temp = tempfile::tempdir().unwrap();
        let state = temp.path().join("state");
        fs::write(&state, "a file where a directory should be").unwrap();
        let error = EditLock::acquire(&state, Path::new("/x"), LOCK_TIMEOUT).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("cannot create the lock `{}`", state.join("locks").display())
        );
        assert!(matches!(
            check_writable_dir(&state.join("mcpenv")),
            Err(StateDirError::NotADirectory { .. })
        ));
        assert!(check_writable_dir(&temp.path().join("new/dir")).is_ok());
    }

    #[test]
    fn private_dirs_are_created_0700_and_checked() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("mine");
        private_dir(&dir).unwrap();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        private_dir(&dir).unwrap();
        fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(
            private_dir(&dir),
            Err(StateDirError::NotPrivate { .. })
        ));
        symlink(&dir, temp.path().join("link")).unwrap();
        assert!(matches!(
            private_dir(&temp.path().join("link")),
            Err(StateDirError::NotPrivate { .. })
        ));
    }
}
