//! File primitives that keep users' files safe: atomic replacement through
//! symlinks with the original mode, and the locks that serialise editors.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

/// Longest symlink chain followed before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Follows the whole symlink chain of `path`, even when the final target
/// does not exist yet, so a write replaces the target and keeps the links.
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
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

/// Reads a file, `None` when it does not exist.
pub fn read_if_exists(path: &Path) -> io::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Whether the file at `path` still holds exactly `expected` (`None`: does
/// not exist), compared in chunks so a large file is not held twice.
pub fn unchanged(path: &Path, expected: Option<&str>) -> io::Result<bool> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(expected.is_none()),
        Err(error) => return Err(error),
    };
    let Some(expected) = expected else {
        return Ok(false);
    };
    if file.metadata()?.len() != expected.len() as u64 {
        return Ok(false);
    }
    let mut expected = expected.as_bytes();
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
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    let existing_mode = match fs::metadata(path) {
        Ok(metadata) => Some(metadata.permissions().mode() & 0o7777),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    if let (None, NewMode::Umasked(mode)) = (existing_mode, new_mode) {
        // Applied at creation, so the kernel subtracts the umask.
        builder.permissions(Permissions::from_mode(mode));
    }
    let mut temporary = builder.tempfile_in(directory)?;
    match (existing_mode, new_mode) {
        (Some(mode), _) | (None, NewMode::Exact(mode)) => {
            temporary
                .as_file()
                .set_permissions(Permissions::from_mode(mode))?;
        }
        (None, NewMode::Umasked(_)) => {}
    }
    for piece in contents {
        temporary.write_all(piece)?;
    }
    temporary.as_file().sync_all()?;
    if let Err(error) = verify() {
        return Ok(Err(error));
    }
    temporary.persist(path).map_err(|error| error.error)?;
    File::open(directory)?.sync_all()?;
    Ok(Ok(()))
}

/// How often an edit is redone when the file keeps changing under it.
pub const EDIT_ATTEMPTS: usize = 5;

/// Why [`edit_text`] failed.
#[derive(Debug)]
pub enum TextEditError<E> {
    /// Reading the file failed.
    Read(io::Error),
    /// Writing it failed; the file is as it was.
    Write(io::Error),
    /// Another mcpenv held the lock for longer than [`LOCK_TIMEOUT`].
    Locked(Duration),
    /// Another program kept rewriting the file.
    Contended,
    /// The change itself failed.
    Change(E),
}

/// Rewrites the text file `path` with `change(old)` (`None` from it: leave
/// the file alone) under mcpenv's lock, atomically, and redoes the change
/// when another program rewrote the file meanwhile. Returns whether it wrote.
pub fn edit_text<E>(
    state_dir: &Path,
    path: &Path,
    new_mode: NewMode,
    mut change: impl FnMut(Option<&str>) -> Result<Option<String>, E>,
) -> Result<bool, TextEditError<E>> {
    let resolved = resolve_symlinks(path).map_err(TextEditError::Read)?;
    let _lock =
        EditLock::acquire(state_dir, &resolved, LOCK_TIMEOUT).map_err(|error| match error {
            LockError::Io(source) => TextEditError::Write(source),
            LockError::TimedOut(waited) => TextEditError::Locked(waited),
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
            return Ok(true);
        }
    }
    Err(TextEditError::Contended)
}

/// How long to wait for another mcpenv editing the same file.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// An exclusive lock on a file in mcpenv's state directory, keyed by the
/// path of the file being edited; the target itself is never locked.
#[derive(Debug)]
pub struct EditLock {
    _file: File,
}

/// Taking a lock failed.
#[derive(Debug)]
pub enum LockError {
    /// The lock file could not be created.
    Io(io::Error),
    /// Another process held it for longer than the timeout.
    TimedOut(Duration),
}

impl EditLock {
    /// Waits for the lock guarding edits of `target`.
    pub fn acquire(state_dir: &Path, target: &Path, timeout: Duration) -> Result<Self, LockError> {
        let directory = state_dir.join("locks");
        fs::create_dir_all(&directory).map_err(LockError::Io)?;
        let digest = Sha256::digest(target.as_os_str().as_encoded_bytes());
        let name: String = digest[..12]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(directory.join(format!("{name}.lock")))
            .map_err(LockError::Io)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    thread::sleep(Duration::from_millis(5));
                }
                Err(fs::TryLockError::WouldBlock) => return Err(LockError::TimedOut(timeout)),
                Err(fs::TryLockError::Error(error)) => return Err(LockError::Io(error)),
            }
        }
    }
}

/// Claude Code's own lock on `~/.claude.json`: a directory `<file>.lock`
/// (npm proper-lockfile), stale once its mtime is older than 10 s.
#[derive(Debug)]
pub struct ClaudeLock {
    directory: PathBuf,
}

/// When proper-lockfile considers a lock abandoned.
pub const CLAUDE_LOCK_STALE: Duration = Duration::from_secs(10);

impl ClaudeLock {
    /// Takes the lock for `target`, waiting while a live holder has it and
    /// taking over a stale one.
    pub fn acquire(target: &Path) -> io::Result<Self> {
        let mut directory = target.as_os_str().to_owned();
        directory.push(".lock");
        let directory = PathBuf::from(directory);
        loop {
            match fs::create_dir(&directory) {
                Ok(()) => return Ok(Self { directory }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                    let age = fs::metadata(&directory)
                        .and_then(|metadata| metadata.modified())
                        .ok()
                        .and_then(|modified| SystemTime::now().duration_since(modified).ok());
                    match age {
                        Some(age) if age > CLAUDE_LOCK_STALE => {
                            // Abandoned by a process that died: take it over.
                            let _ = fs::remove_dir(&directory);
                        }
                        _ => thread::sleep(Duration::from_millis(10)),
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }
}

impl Drop for ClaudeLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.directory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

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
        assert!(matches!(waited, Err(LockError::TimedOut(_))));
        drop(held);
        assert!(EditLock::acquire(temp.path(), &target, Duration::from_millis(50)).is_ok());
    }
}
