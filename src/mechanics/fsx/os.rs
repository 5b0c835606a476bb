//! What differs between Unix and Windows for files: permission bits, a
//! file's identity and change time, special files, private folders. Every
//! other part of `fsx` is the same on each system and asks here.
//!
//! Windows has no mode bits: a file's access control list decides who may
//! read it. The files mcpenv writes live under the user's profile
//! (`%USERPROFILE%\.claude.json`, `%APPDATA%`, `%LOCALAPPDATA%`) or in a
//! project the user checked out there, and a new file inherits its folder's
//! list, which under the profile grants the user, SYSTEM and the
//! administrators alone. So a new secret file is private there by
//! inheritance, the Windows counterpart of mode 0600; mcpenv neither reads
//! nor sets modes on Windows, and says nothing about them.
//!
//! Windows' standard library also gives no stable file identity (volume
//! and file index) and no change time (`ctime`) in its metadata: where
//! Unix decides from them that a file did not change, Windows compares the
//! bytes instead ([`identity`] and [`changed`] return `None`).

use std::fs::{self, Metadata, OpenOptions};
use std::io;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};

/// A file's identity: its device and inode.
pub type Identity = (u64, u64);

/// The identity of the file `metadata` describes; `None` on Windows (see
/// the module's documentation).
#[cfg(unix)]
pub fn identity(metadata: &Metadata) -> Option<Identity> {
    Some((metadata.dev(), metadata.ino()))
}

/// The identity of the file `metadata` describes; `None` on Windows (see
/// the module's documentation).
#[cfg(not(unix))]
pub fn identity(_metadata: &Metadata) -> Option<Identity> {
    None
}

/// The time of the last change of content, as seconds and nanoseconds
/// since the Unix epoch (before it: negative seconds).
#[cfg(unix)]
pub fn modified(metadata: &Metadata) -> (i64, i64) {
    (metadata.mtime(), metadata.mtime_nsec())
}

/// The time of the last change of content, as seconds and nanoseconds
/// since the Unix epoch (before it: negative seconds).
#[cfg(not(unix))]
pub fn modified(metadata: &Metadata) -> (i64, i64) {
    let Ok(time) = metadata.modified() else {
        return (0, 0);
    };
    match time.duration_since(std::time::SystemTime::UNIX_EPOCH) {
        Ok(since) => (
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            i64::from(since.subsec_nanos()),
        ),
        Err(before) => (
            -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
            -i64::from(before.duration().subsec_nanos()),
        ),
    }
}

/// The time of the last change of anything about the file (`ctime`, which
/// no program can set back); `None` on Windows.
#[cfg(unix)]
pub fn changed(metadata: &Metadata) -> Option<(i64, i64)> {
    Some((metadata.ctime(), metadata.ctime_nsec()))
}

/// The time of the last change of anything about the file (`ctime`, which
/// no program can set back); `None` on Windows.
#[cfg(not(unix))]
pub fn changed(_metadata: &Metadata) -> Option<(i64, i64)> {
    None
}

/// How many names the file has; `None` where the system does not say.
#[cfg(unix)]
pub fn links(metadata: &Metadata) -> Option<u64> {
    Some(metadata.nlink())
}

/// How many names the file has; `None` where the system does not say.
#[cfg(not(unix))]
pub fn links(_metadata: &Metadata) -> Option<u64> {
    None
}

/// The permission bits (with set-id and sticky bits); `None` on Windows.
#[cfg(unix)]
pub fn mode(metadata: &Metadata) -> Option<u32> {
    Some(metadata.permissions().mode() & 0o7777)
}

/// The permission bits (with set-id and sticky bits); `None` on Windows.
#[cfg(not(unix))]
pub fn mode(_metadata: &Metadata) -> Option<u32> {
    None
}

/// Gives the open `file` the permission bits `mode`; on Windows nothing to
/// do (the folder's inherited access list applies, see the module).
#[cfg(unix)]
pub fn set_file_mode(file: &fs::File, mode: u32) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(mode))
}

/// Gives the open `file` the permission bits `mode`; on Windows nothing to
/// do (the folder's inherited access list applies, see the module).
#[cfg(not(unix))]
pub fn set_file_mode(_file: &fs::File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Gives the file at `path` the permission bits `mode`; on Windows nothing
/// to do (see the module).
#[cfg(unix)]
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// Gives the file at `path` the permission bits `mode`; on Windows nothing
/// to do (see the module).
#[cfg(not(unix))]
pub fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// The permissions a new temporary file is created with, `mode` less the
/// umask; `None` on Windows (the folder's inherited access list).
#[cfg(unix)]
pub fn new_file_permissions(mode: u32) -> Option<fs::Permissions> {
    Some(fs::Permissions::from_mode(mode))
}

/// The permissions a new temporary file is created with, `mode` less the
/// umask; `None` on Windows (the folder's inherited access list).
#[cfg(not(unix))]
pub fn new_file_permissions(_mode: u32) -> Option<fs::Permissions> {
    None
}

/// Opens new files with mode 0600 (on Windows, the inherited access list).
#[cfg(unix)]
pub fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    options.mode(0o600)
}

/// Opens new files with mode 0600 (on Windows, the inherited access list).
#[cfg(not(unix))]
pub fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Opens without waiting for a writer: a FIFO swapped in does not block
/// the open. Windows keeps no FIFOs among files (its named pipes live in
/// `\\.\pipe\`), so there is nothing to add there.
#[cfg(unix)]
pub fn nonblocking(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(nix::libc::O_NONBLOCK)
}

/// Opens without waiting for a writer: a FIFO swapped in does not block
/// the open. Windows keeps no FIFOs among files (its named pipes live in
/// `\\.\pipe\`), so there is nothing to add there.
#[cfg(not(unix))]
pub fn nonblocking(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Creates the folder `dir` (its parent must exist) with mode 0700; on
/// Windows with the inherited access list.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Creates the folder `dir` (its parent must exist) with mode 0700; on
/// Windows with the inherited access list.
#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().create(dir)
}

/// [`create_private_dir`] with every missing parent (each new one 0700).
#[cfg(unix)]
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// [`create_private_dir`] with every missing parent (each new one 0700).
#[cfg(not(unix))]
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).create(dir)
}

/// What a file is when it is neither a regular file, a folder nor a
/// symbolic link: a FIFO, a socket, a device (Unix only).
#[cfg(unix)]
pub fn special_kind(kind: fs::FileType) -> Option<super::FileKind> {
    use super::FileKind;
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        Some(FileKind::Fifo)
    } else if kind.is_socket() {
        Some(FileKind::Socket)
    } else if kind.is_block_device() {
        Some(FileKind::BlockDevice)
    } else if kind.is_char_device() {
        Some(FileKind::CharDevice)
    } else {
        None
    }
}

/// What a file is when it is neither a regular file, a folder nor a
/// symbolic link: a FIFO, a socket, a device (Unix only).
#[cfg(not(unix))]
pub fn special_kind(_kind: fs::FileType) -> Option<super::FileKind> {
    None
}

/// Makes what was renamed in `directory` durable: the folder itself is
/// synced. Windows refuses to open a folder as a file (access denied), and
/// its rename (`MoveFileEx` with `MOVEFILE_REPLACE_EXISTING`, what
/// `std::fs::rename` uses) is journaled by NTFS, so there it is skipped.
#[cfg(unix)]
pub fn sync_directory(directory: &Path) -> io::Result<()> {
    fs::File::open(directory)?.sync_all()
}

/// Makes what was renamed in `directory` durable: the folder itself is
/// synced. Windows refuses to open a folder as a file (access denied), and
/// its rename (`MoveFileEx` with `MOVEFILE_REPLACE_EXISTING`, what
/// `std::fs::rename` uses) is journaled by NTFS, so there it is skipped.
#[cfg(not(unix))]
pub fn sync_directory(_directory: &Path) -> io::Result<()> {
    Ok(())
}

/// Whether this process may create entries in the existing folder `dir`,
/// without creating anything (`access(2)` with write and search).
#[cfg(unix)]
pub fn check_writable(dir: &Path) -> io::Result<()> {
    nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .map_err(io::Error::from)
}

/// Whether this process may create entries in the existing folder `dir`.
/// Windows has no `access(2)` that reads the access list, so a nameless
/// temporary file is made there and deleted as it closes
/// (`FILE_FLAG_DELETE_ON_CLOSE`): nothing is left behind.
#[cfg(not(unix))]
pub fn check_writable(dir: &Path) -> io::Result<()> {
    tempfile::tempfile_in(dir).map(drop)
}

/// Why the existing folder `metadata` describes is not this user's alone:
/// another owner, or permissions for group or others; `None` when it is.
#[cfg(unix)]
pub fn not_private(metadata: &Metadata) -> Option<String> {
    let me = nix::unistd::geteuid().as_raw();
    if metadata.uid() != me {
        return Some(format!("owned by uid {}, you are {me}", metadata.uid()));
    }
    let mode = metadata.mode() & 0o777;
    (mode & 0o077 != 0).then(|| format!("mode {mode:o}"))
}

/// Why the existing folder `metadata` describes is not this user's alone.
/// On Windows the folders mcpenv keeps private lie in the user's profile
/// (the temporary folder is `%LOCALAPPDATA%\Temp`, the user's own), whose
/// inherited access list admits the user alone (see the module), so there
/// is nothing further to check.
#[cfg(not(unix))]
pub fn not_private(_metadata: &Metadata) -> Option<String> {
    None
}

/// An empty buffer with room for a file of `len` bytes. On Linux a large
/// one asks for transparent huge pages (`madvise(MADV_HUGEPAGE)`, which
/// systems with THP in `madvise` mode honour), so that reading a 25 MB
/// `~/.claude.json` into it faults in a dozen 2 MiB pages instead of
/// thousands of 4 KiB ones; elsewhere, and when the advice is refused, it
/// is a plain buffer.
#[cfg(target_os = "linux")]
pub fn read_buffer(len: usize) -> Vec<u8> {
    /// The huge page size on x86_64 and on aarch64 with 4 KiB pages; on
    /// another size the advice covers fewer pages or none, which is fine.
    const HUGE: usize = 2 << 20;
    let mut buffer: Vec<u8> = Vec::with_capacity(len);
    let start = buffer.as_ptr() as usize;
    // The whole huge pages inside the buffer.
    let first = start.next_multiple_of(HUGE);
    let end = (start + buffer.capacity()) / HUGE * HUGE;
    if end > first {
        let address = buffer.as_mut_ptr().wrapping_add(first - start);
        // SAFETY: the range lies inside the buffer's own allocation, and
        // this advice changes only how the kernel backs its pages, never
        // what they hold; its result is ignored (it is only advice).
        #[allow(unsafe_code)]
        unsafe {
            nix::libc::madvise(address.cast(), end - first, nix::libc::MADV_HUGEPAGE);
        }
    }
    buffer
}

/// An empty buffer with room for a file of `len` bytes.
#[cfg(not(target_os = "linux"))]
pub fn read_buffer(len: usize) -> Vec<u8> {
    Vec::with_capacity(len)
}
