//! The layout cache: where the objects and members of the last few
//! `~/.claude.json` texts mcpenv parsed are, so that the same bytes read
//! again are not validated again (like git's index, or cargo's
//! fingerprints).
//!
//! A text is known by its length and its XXH3-128 digest keyed by a secret
//! of 192 random bytes that the cache file itself holds (created with the
//! file, mode 0600): nobody who cannot read the cache can make a different
//! text with the same digest. A text found there parsed before, and its
//! layout ([`Layout`]: offsets and lengths only, never a byte of the text)
//! replaces the validating pass; any other text gets the pass, and its
//! layout goes into the cache. After an edit, the edit's own layout
//! (worked out by [`JsonDocument::layout_after`]) goes in too, so the next
//! command finds the file it wrote.
//!
//! A file read again is known first by its metadata, as git's index knows
//! a file: each layout also keeps the fingerprint of the file whose bytes
//! it was verified against (device, inode, size, `mtime` and `ctime` to the
//! nanosecond) and when that was. A file whose metadata is that
//! fingerprint, and that was older than [`MARGIN`] when verified, is taken
//! to hold those bytes without reading them ([`Opened::trusted`]): only
//! the parts a command uses are then read. Anything else (a racy file,
//! changed within the margin of its verification, or another fingerprint)
//! is digested, as it is read through one buffer ([`Opened::key_of_file`])
//! or read whole, and a digest-confirmed hit records the new fingerprint.
//! See `docs/src/safety/files.md` for why this is safe.
//!
//! The cache is never needed: a missing, unreadable, corrupt, truncated,
//! foreign or wrong-version file is ignored and replaced, and a failure to
//! write it is silent. It is read only when it is a regular file of this
//! user that nobody else may read or write, never through a symbolic link
//! (`O_NOFOLLOW`), and written by renaming a temporary file created anew
//! (`O_EXCL`) over it; a checksum over the whole file tells a torn write,
//! so it is written without `fsync`.

use std::fs;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::mechanics::document::{DocumentError, JsonDocument, Layout, Member};
use crate::mechanics::fsx::spliced::{self, Piece};

/// The first bytes of a cache file, then its format's version.
const MAGIC: &[u8; 8] = b"mcpenvLC";
/// Bumped whenever the format or the meaning of a layout changes (2: the
/// fingerprint of the file each layout was verified against).
const VERSION: u32 = 2;
/// The digest key's size: XXH3's default secret size (its minimum is 136).
const SECRET_BYTES: usize = 192;
/// The layouts kept: the last few texts read or written.
const ENTRIES: usize = 4;
/// A cache file larger than this is not read.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Where the cache is, and whether this run may write it (a dry run only
/// reads it: it changes nothing, not even mcpenv's cache).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The cache file.
    pub file: PathBuf,
    /// Whether texts not found there are added.
    pub write: bool,
}

/// How much older than its verification a file's `mtime` and `ctime` must
/// be for its fingerprint to be trusted, in nanoseconds: 3 s.
///
/// A change of the file after the verification began sets its `ctime` (and
/// `mtime`) to the time of the change as the file system records it, which
/// is at most its timestamp granularity plus the kernel's coarse-clock lag
/// (a few milliseconds) before the true time: 1 ns on ext4, XFS, btrfs,
/// tmpfs and APFS, 1 s on ext3, HFS+ and some network file systems, 2 s
/// for FAT's `mtime` (which has no `ctime`: Linux reports the `mtime`). So
/// a later change always leaves `ctime` later than `verified - 2 s - lag`,
/// and a fingerprint whose times are both older than `verified - 3 s`
/// cannot be that of a file changed since: a change would have moved its
/// `ctime` past that point (and no program can set `ctime` back). A file
/// changed within the margin, even in the same tick as the verification
/// (where its times alone cannot tell two states apart), is "racy", as git
/// calls it, and is read and digested again; once it is older, the next
/// digest-confirmed reading records it as trusted. What this cannot see is
/// a wall clock set back by more than the margin, or a file server whose
/// clock runs behind by more than the margin and a change in the same
/// timestamp tick of a coarse file system: `MCPENV_LAYOUT_CACHE=off` is for
/// such set-ups.
pub const MARGIN_NANOS: i128 = 3_000_000_000;

/// What a file's metadata says of it: enough to tell any change of it
/// after its verification (together with [`MARGIN_NANOS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    device: u64,
    inode: u64,
    size: u64,
    /// `mtime`, nanoseconds since the Unix epoch.
    modified: i128,
    /// `ctime`, nanoseconds since the Unix epoch.
    changed: i128,
}

impl Fingerprint {
    /// The fingerprint of the file of `metadata` (an `fstat` of the open
    /// file); `None` where the platform gives no inode and `ctime`.
    #[cfg(unix)]
    pub fn of(metadata: &fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let nanos =
            |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.len(),
            modified: nanos(metadata.mtime(), metadata.mtime_nsec()),
            changed: nanos(metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    /// Windows has no `ctime` a program cannot set: nothing is trusted.
    #[cfg(not(unix))]
    pub fn of(_metadata: &fs::Metadata) -> Option<Self> {
        None
    }

    /// The file's size.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// That the file of `fingerprint` held the bytes of a cache entry when it
/// was read, the reading having begun at `at` (nanoseconds since the Unix
/// epoch, by the wall clock): its fingerprint was the same before and
/// after the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    fingerprint: Fingerprint,
    at: i128,
}

impl Verified {
    /// The verification of a file of `fingerprint` whose reading began at
    /// `at`; `None` for a time before the Unix epoch.
    pub fn new(fingerprint: Fingerprint, at: SystemTime) -> Option<Self> {
        let since = at.duration_since(UNIX_EPOCH).ok()?;
        Some(Self {
            fingerprint,
            at: i128::try_from(since.as_nanos()).ok()?,
        })
    }

    /// Whether the file was older than the margin when verified: only then
    /// does its fingerprint alone tell that it still holds those bytes.
    fn trusted(&self) -> bool {
        let limit = self.at - MARGIN_NANOS;
        self.fingerprint.modified < limit && self.fingerprint.changed < limit
    }
}

/// The cache file's name in mcpenv's cache directory.
pub const FILE_NAME: &str = "claude-json-layouts";

/// A text as the cache knows it: length, keyed digest and which root
/// members were expanded (their keys are decoded, so they decide what the
/// pass accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    len: u64,
    digest: u128,
    expand: u64,
}

/// One text the cache knows: its key, its layout, and the file it was
/// last verified in, when that file was old enough to be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: Key,
    layout: Layout,
    seen: Option<Verified>,
}

/// The cache file's contents.
struct Cache {
    secret: [u8; SECRET_BYTES],
    /// Newest first.
    entries: Vec<Entry>,
}

/// The cache as read from its file, for one reading of `~/.claude.json`.
pub struct Opened<'a> {
    file: &'a Path,
    cache: Cache,
}

/// The cache in `file` (an empty one when it cannot be used).
pub fn open(file: &Path) -> Opened<'_> {
    Opened {
        file,
        cache: Cache::load(file),
    }
}

impl Opened<'_> {
    /// The layout of the bytes the file of `fingerprint` holds, read with
    /// `expand`, when a cache entry was verified against a file of that
    /// very fingerprint that was then older than the margin
    /// ([`MARGIN_NANOS`]): the file has not changed since.
    pub fn trusted(&self, fingerprint: &Fingerprint, expand: &[&str]) -> Option<&Layout> {
        let expand = expand_key(expand);
        self.cache
            .entries
            .iter()
            .find(|entry| {
                entry
                    .seen
                    .is_some_and(|seen| seen.fingerprint == *fingerprint)
                    && entry.key.expand == expand
                    && entry.key.len == fingerprint.size
            })
            .filter(|entry| entry.seen.is_some_and(|seen| seen.trusted()))
            .map(|entry| &entry.layout)
    }

    /// Whether the cache may hold a text of `size` bytes read with
    /// `expand`: when it does not, [`Opened::key_of_file`] cannot find one.
    pub fn may_hold(&self, size: u64, expand: &[&str]) -> bool {
        let expand = expand_key(expand);
        self.cache
            .entries
            .iter()
            .any(|entry| entry.key.len == size && entry.key.expand == expand)
    }

    /// The key of the `size` bytes `file` holds from where it is read,
    /// read through one buffer of [`STREAM_BUFFER`] bytes and never held
    /// whole: the keyed digest, worked out as the bytes come, equals
    /// [`Cache::key`]'s of the same bytes. `None` when the file ends
    /// before `size` bytes, or on an error reading it (the whole reading
    /// reports it). The bytes are not checked to be UTF-8: only a key the
    /// cache holds is used, and each text it holds was UTF-8 when it was
    /// parsed (a text of other bytes with the same keyed digest is what
    /// the cache's secret rules out); bytes that are not UTF-8 miss, and
    /// the whole reading refuses them.
    pub fn key_of_file(&self, file: &mut impl Read, size: u64, expand: &[&str]) -> Option<Key> {
        self.key_of_file_keeping(file, size, expand, &mut Captured::default())
    }

    /// [`Opened::key_of_file`], keeping the bytes of the ranges of
    /// `captured` as they pass.
    pub fn key_of_file_keeping(
        &self,
        file: &mut impl Read,
        size: u64,
        expand: &[&str],
        captured: &mut Captured,
    ) -> Option<Key> {
        stream_key(
            &self.cache.secret,
            file,
            size,
            STREAM_BUFFER,
            expand,
            captured,
        )
    }

    /// The layout of the one text of `size` bytes read with `expand` the
    /// cache holds, when it holds exactly one: the layout a text of that
    /// size read next can only be, if the cache knows it.
    pub fn sole_layout_of_size(&self, size: u64, expand: &[&str]) -> Option<&Layout> {
        self.sole_of_size(size, expand).map(|(_, layout)| layout)
    }

    /// [`Opened::sole_layout_of_size`], with the key of that text: what
    /// the file must digest to for the layout to be its.
    pub fn sole_of_size(&self, size: u64, expand: &[&str]) -> Option<(Key, &Layout)> {
        let expand = expand_key(expand);
        let mut sized = self
            .cache
            .entries
            .iter()
            .filter(|entry| entry.key.len == size && entry.key.expand == expand);
        let entry = sized.next()?;
        sized.next().is_none().then_some((entry.key, &entry.layout))
    }

    /// The key of the first `size` bytes of the open file `old`, each read
    /// at its offset (`pread`), so that the file's own offset stays where
    /// another thread copying from it meanwhile puts it; `None` when the
    /// file ends before `size` bytes or cannot be read.
    pub fn key_of_open_file(&self, old: &fs::File, size: u64, expand: &[&str]) -> Option<Key> {
        key_of_spliced(&self.cache.secret, old, &[Piece::Old(0..size)], expand)
    }

    /// The layout of the text of `key`, when the cache holds it.
    pub fn layout_of(&self, key: &Key) -> Option<&Layout> {
        self.cache.find(key).map(|entry| &entry.layout)
    }

    /// Records that the text of `key` (which the cache holds) was read
    /// from a file as `verified`: when the file was old enough, the next
    /// reading of it, unchanged, needs no digest. Nothing is written when
    /// `keep` is false, or when that is known already.
    pub fn confirm(self, key: &Key, keep: bool, verified: Option<Verified>) {
        let Self { file, cache } = self;
        if let Some(entry) = cache.find(key) {
            let layout = entry.layout.clone();
            cache.confirm(file, *key, layout, keep, verified);
        }
    }

    /// Parses `text` as [`JsonDocument::parse_expanding`] does, with the
    /// layout from the cache when these exact bytes were parsed before; on
    /// a miss, the layout found goes into the cache when `keep` (a preview
    /// leaves the cache alone, as it leaves every file). `verified`: the
    /// text is the file's as read with that fingerprint; when the file was
    /// old enough, a hit or a miss records it, so the next reading of the
    /// unchanged file needs no digest.
    pub fn parse(
        self,
        text: String,
        expand: &[&str],
        keep: bool,
        verified: Option<Verified>,
    ) -> Result<JsonDocument, DocumentError> {
        let Self { file, cache } = self;
        let key = cache.key(&[text.as_bytes()], expand);
        let seen = verified.filter(Verified::trusted);
        let text = match cache.find(&key) {
            Some(entry) => match JsonDocument::from_layout(text, entry.layout.clone()) {
                Ok(document) => {
                    let layout = entry.layout.clone();
                    cache.confirm(file, key, layout, keep, verified);
                    return Ok(document);
                }
                Err(text) => text,
            },
            None => text,
        };
        let document = JsonDocument::parse_expanding(text, expand)?;
        if keep && let Some(layout) = document.layout() {
            cache.with(key, layout, seen).save(file);
        }
        Ok(document)
    }
}

/// Parses `text` as [`JsonDocument::parse_expanding`] does, with the layout
/// from the cache file at `file` when these exact bytes were parsed
/// before; on a miss, the layout found goes into the cache when `keep`
/// (a preview leaves the cache alone, as it leaves every file).
pub fn parse(
    file: &Path,
    text: String,
    expand: &[&str],
    keep: bool,
) -> Result<JsonDocument, DocumentError> {
    open(file).parse(text, expand, keep, None)
}

/// Records that the text made of `pieces` (one an edit just wrote) is laid
/// out as `layout`, so that the next reading of it needs no pass. No
/// fingerprint is recorded: the file was just written, so it is racy (its
/// `ctime` is within the margin of now) until a reading verifies it again.
pub fn record(file: &Path, pieces: &[&[u8]], expand: &[&str], layout: Layout) {
    prepare(file, pieces, expand).record(layout);
}

/// A [`record`] whose key (the digest of the new text) is worked out
/// ahead, on another thread while the edit waits for the disk; only the
/// layout, known once the write is checked, is left to give.
pub struct Prepared<'a> {
    file: &'a Path,
    cache: Cache,
    key: Key,
}

/// The cache at `file` and the key of the text made of `pieces`, for a
/// [`Prepared::record`] of that text's layout.
pub fn prepare<'a>(file: &'a Path, pieces: &[&[u8]], expand: &[&str]) -> Prepared<'a> {
    let cache = Cache::load(file);
    let key = cache.key(pieces, expand);
    Prepared { file, cache, key }
}

/// [`prepare`] of the text `pieces` of the old file `old` make, read
/// through one buffer; `None` when it cannot be read.
pub fn prepare_spliced<'a>(
    file: &'a Path,
    old: &fs::File,
    pieces: &[Piece<'_>],
    expand: &[&str],
) -> Option<Prepared<'a>> {
    let cache = Cache::load(file);
    let key = key_of_spliced(&cache.secret, old, pieces, expand)?;
    Some(Prepared { file, cache, key })
}

/// The key of the text `pieces` of the open file `old` make, read through
/// one buffer at the old bytes' offsets; `None` when they cannot be read.
fn key_of_spliced(
    secret: &[u8; SECRET_BYTES],
    old: &fs::File,
    pieces: &[Piece<'_>],
    expand: &[&str],
) -> Option<Key> {
    let mut hasher = Xxh3::with_secret(*secret);
    spliced::stream(old, pieces, |chunk| hasher.update(chunk)).ok()?;
    Some(Key {
        len: spliced::len_of(pieces),
        digest: hasher.digest128(),
        expand: expand_key(expand),
    })
}

impl Prepared<'_> {
    /// Records that the text is laid out as `layout` (see [`record`]).
    pub fn record(self, layout: Layout) {
        self.cache.with(self.key, layout, None).save(self.file);
    }
}

/// The layout the cache at `file` holds for the text `text` read with
/// `expand`, if any (for tests of what edits record).
#[cfg(test)]
pub fn layout_of_text(file: &Path, text: &[u8], expand: &[&str]) -> Option<Layout> {
    let cache = Cache::load(file);
    let key = cache.key(&[text], expand);
    cache.find(&key).map(|entry| entry.layout.clone())
}

fn expand_key(expand: &[&str]) -> u64 {
    xxh3_64(expand.join("\0").as_bytes())
}

/// The buffer [`Opened::key_of_file`] reads a file through: large enough
/// that the system calls cost little next to the digest (about four
/// hundred for 25 MB), and below glibc's threshold for
/// serving an allocation by a fresh `mmap` (128 KiB), which in mcpenv's
/// process made every read into it about three times slower. Measured on
/// a 25 MB file, the first keying in a process (as a command does it),
/// medians of 9: 32 KiB 5.1 ms, 64 KiB 5.0 ms, 124 KiB 4.9 ms, 128 and
/// 256 KiB 13.0 ms.
pub const STREAM_BUFFER: usize = 64 << 10;

/// The key of the first `size` bytes of `reader` under `secret`, read
/// through a buffer of `buffer_len` bytes; `None` when the reader ends
/// before `size` bytes, or on an error.
fn stream_key(
    secret: &[u8; SECRET_BYTES],
    reader: &mut impl Read,
    size: u64,
    buffer_len: usize,
    expand: &[&str],
    captured: &mut Captured,
) -> Option<Key> {
    let mut hasher = Xxh3::with_secret(*secret);
    let mut buffer = vec![0u8; buffer_len.max(1)];
    let mut left = size;
    let mut at = 0;
    while left > 0 {
        let room = buffer
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        let read = match reader.read(&mut buffer[..room]) {
            Ok(0) => return None,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        hasher.update(&buffer[..read]);
        captured.feed(at, &buffer[..read]);
        at += read;
        left -= read as u64;
    }
    Some(Key {
        len: size,
        digest: hasher.digest128(),
        expand: expand_key(expand),
    })
}

/// Byte ranges of a file whose bytes [`Opened::key_of_file_keeping`]
/// keeps as they pass (the keys a reader looks up, read in the same pass
/// as the digest instead of one `pread` each after it). Ranges that are
/// empty, or overlap another, are not kept.
#[derive(Debug, Default)]
pub struct Captured {
    /// Sorted by start, apart from each other.
    ranges: Vec<Range<usize>>,
    /// The bytes of each range read so far.
    bytes: Vec<Vec<u8>>,
    /// The first range not read whole yet.
    next: usize,
}

impl Captured {
    /// Keeps the bytes of `ranges` (any order) as they pass.
    pub fn new(ranges: impl IntoIterator<Item = Range<usize>>) -> Self {
        let mut ranges: Vec<Range<usize>> = ranges
            .into_iter()
            .filter(|range| range.start < range.end)
            .collect();
        ranges.sort_by_key(|range| range.start);
        if ranges.windows(2).any(|pair| pair[0].end > pair[1].start) {
            ranges.clear();
        }
        let bytes = ranges
            .iter()
            .map(|range| Vec::with_capacity(range.len()))
            .collect();
        Self {
            ranges,
            bytes,
            next: 0,
        }
    }

    /// Takes `chunk`, the file's bytes from offset `at` on, read in order.
    fn feed(&mut self, at: usize, chunk: &[u8]) {
        let end = at + chunk.len();
        while let Some(range) = self.ranges.get(self.next)
            && range.start < end
        {
            let (from, to) = (range.start.max(at), range.end.min(end));
            if from < to {
                self.bytes[self.next].extend_from_slice(&chunk[from - at..to - at]);
            }
            if range.end > end {
                break;
            }
            self.next += 1;
        }
    }

    /// The bytes of `range`, when it was one of the ranges kept and passed
    /// whole.
    pub fn get(&self, range: &Range<usize>) -> Option<&[u8]> {
        let index = self
            .ranges
            .binary_search_by_key(&range.start, |kept| kept.start)
            .ok()?;
        let bytes = &self.bytes[index];
        (self.ranges[index] == *range && bytes.len() == range.len()).then_some(bytes.as_slice())
    }
}

impl Cache {
    /// The cache in `file`, or a new, empty one (with a new secret) when it
    /// cannot be used.
    fn load(file: &Path) -> Self {
        read_private(file)
            .and_then(|bytes| decode(&bytes))
            .unwrap_or_else(Self::fresh)
    }

    fn fresh() -> Self {
        let mut secret = [0u8; SECRET_BYTES];
        if getrandom::fill(&mut secret).is_err() {
            // No randomness: an all-zero secret would be known to all, so
            // this cache is kept in memory only (see `save`).
            secret = [0; SECRET_BYTES];
        }
        Self {
            secret,
            entries: Vec::new(),
        }
    }

    fn key(&self, pieces: &[&[u8]], expand: &[&str]) -> Key {
        let mut hasher = Xxh3::with_secret(self.secret);
        let mut len = 0u64;
        for piece in pieces {
            hasher.update(piece);
            len += piece.len() as u64;
        }
        Key {
            len,
            digest: hasher.digest128(),
            expand: expand_key(expand),
        }
    }

    fn find(&self, key: &Key) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.key == *key)
    }

    /// Records, when `keep`, that the text of `key` (laid out as `layout`,
    /// as the cache holds it) was read from a file as `verified`, if that
    /// file was old enough to be trusted and this is not known already.
    fn confirm(
        self,
        file: &Path,
        key: Key,
        layout: Layout,
        keep: bool,
        verified: Option<Verified>,
    ) {
        let seen = verified.filter(Verified::trusted);
        let known = self.find(&key).map(|entry| entry.seen);
        if keep && seen.is_some() && known != Some(seen) {
            self.with(key, layout, seen).save(file);
        }
    }

    /// The cache with `key` laid out as `layout` as its newest entry, last
    /// verified as `seen` (`None`: as the entry of the same key was, if
    /// one). A fingerprint belongs to one entry only: the newest verified.
    fn with(mut self, key: Key, layout: Layout, seen: Option<Verified>) -> Self {
        let seen = seen.or_else(|| self.find(&key).and_then(|entry| entry.seen));
        self.entries.retain(|entry| entry.key != key);
        if let Some(seen) = seen {
            for entry in &mut self.entries {
                if entry
                    .seen
                    .is_some_and(|old| old.fingerprint == seen.fingerprint)
                {
                    entry.seen = None;
                }
            }
        }
        self.entries.insert(0, Entry { key, layout, seen });
        self.entries.truncate(ENTRIES);
        self
    }

    /// Writes the cache to `file`, or nothing: a cache that cannot be
    /// written is only a slower next command.
    fn save(&self, file: &Path) {
        if self.secret == [0; SECRET_BYTES] {
            return;
        }
        let _ = write_private(file, &encode(self));
    }
}

/// The bytes of `file` if it is a regular file of this user that only this
/// user may read or write, opened without following a symbolic link.
fn read_private(file: &Path) -> Option<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Not through a symbolic link, and never waiting on a FIFO.
        options
            .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits());
    }
    let mut opened = options.open(file).ok()?;
    let metadata = opened.metadata().ok()?;
    if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if metadata.uid() != nix::unistd::geteuid().as_raw() || metadata.mode() & 0o077 != 0 {
            return None;
        }
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    opened.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Writes `bytes` to `file` through a new temporary file (mode 0600) in the
/// same directory, renamed over it.
fn write_private(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = file
        .parent()
        .ok_or_else(|| io::Error::other("no directory"))?;
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    let mut tag = [0u8; 8];
    getrandom::fill(&mut tag).map_err(|error| io::Error::other(error.to_string()))?;
    let name = file
        .file_name()
        .ok_or_else(|| io::Error::other("no file name"))?
        .to_string_lossy();
    remove_stale_temporaries(dir, &name);
    let temporary = dir.join(format!(".{name}.{:016x}.tmp", u64::from_le_bytes(tag)));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&temporary)
        .and_then(|mut out| out.write_all(bytes))
        .and_then(|()| fs::rename(&temporary, file));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// Removes the temporary files of `name` that a killed mcpenv left in `dir`
/// (those of a write still going on are younger than a few seconds).
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let stale = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 10);
        if file_name.starts_with(&prefix) && file_name.ends_with(".tmp") && stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The file's bytes: magic, version, secret, entries (key, then a 0 byte,
/// or a 1 byte and the fingerprint and time of its verification, then the
/// layout), then an XXH3-64 checksum of all that. Numbers are
/// little-endian; a layout's offsets are LEB128 varints, each relative to
/// the one before.
fn encode(cache: &Cache) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&cache.secret);
    let entries: Vec<Vec<u8>> = cache
        .entries
        .iter()
        .filter_map(|Entry { key, layout, seen }| {
            let mut entry = Vec::new();
            entry.extend_from_slice(&key.len.to_le_bytes());
            entry.extend_from_slice(&key.digest.to_le_bytes());
            entry.extend_from_slice(&key.expand.to_le_bytes());
            match seen {
                None => entry.push(0),
                Some(seen) => {
                    entry.push(1);
                    let print = &seen.fingerprint;
                    entry.extend_from_slice(&print.device.to_le_bytes());
                    entry.extend_from_slice(&print.inode.to_le_bytes());
                    entry.extend_from_slice(&print.size.to_le_bytes());
                    entry.extend_from_slice(&print.modified.to_le_bytes());
                    entry.extend_from_slice(&print.changed.to_le_bytes());
                    entry.extend_from_slice(&seen.at.to_le_bytes());
                }
            }
            encode_layout(&mut entry, layout).map(|()| entry)
        })
        .collect();
    varint(&mut out, entries.len() as u64);
    for entry in entries {
        out.extend_from_slice(&entry);
    }
    let checksum = xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// A layout's ranges; `None` (the entry is left out) if they are not in
/// the order a document's are, which would be a bug.
fn encode_layout(out: &mut Vec<u8>, layout: &Layout) -> Option<()> {
    span(out, &mut 0, &layout.root)?;
    varint(out, layout.objects.len() as u64);
    // Objects nest: each is placed from the start of the one before.
    let mut object_at = 0;
    for (object, members) in &layout.objects {
        span(out, &mut object_at.clone(), object)?;
        object_at = object.start;
        varint(out, members.len() as u64);
        let mut at = object.start;
        for member in members {
            span(out, &mut at, &member.key_span)?;
            span(out, &mut at, &member.value_span)?;
        }
    }
    Some(())
}

/// A range as its distance from `at` and its length; `at` moves to its end.
fn span(out: &mut Vec<u8>, at: &mut usize, range: &Range<usize>) -> Option<()> {
    varint(out, range.start.checked_sub(*at)? as u64);
    varint(out, range.end.checked_sub(range.start)? as u64);
    *at = range.end;
    Some(())
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The cache in `bytes`, or `None` for anything that is not exactly a
/// cache file of this version.
fn decode(bytes: &[u8]) -> Option<Cache> {
    let (body, checksum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if xxh3_64(body).to_le_bytes() != checksum {
        return None;
    }
    let mut input = Input { bytes: body, at: 0 };
    if input.take(8)? != MAGIC || u32::from_le_bytes(input.take(4)?.try_into().ok()?) != VERSION {
        return None;
    }
    let secret: [u8; SECRET_BYTES] = input.take(SECRET_BYTES)?.try_into().ok()?;
    let count = input.varint()?;
    if count > ENTRIES as u64 {
        return None;
    }
    let mut entries = Vec::new();
    for _ in 0..count {
        let key = Key {
            len: input.u64()?,
            digest: input.u128()?,
            expand: input.u64()?,
        };
        let seen = match input.take(1)? {
            [0] => None,
            [1] => Some(Verified {
                fingerprint: Fingerprint {
                    device: input.u64()?,
                    inode: input.u64()?,
                    size: input.u64()?,
                    modified: input.u128()?.cast_signed(),
                    changed: input.u128()?.cast_signed(),
                },
                at: input.u128()?.cast_signed(),
            }),
            _ => return None,
        };
        entries.push(Entry {
            key,
            layout: input.layout()?,
            seen,
        });
    }
    (input.at == body.len()).then_some(Cache { secret, entries })
}

struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn take(&mut self, count: usize) -> Option<&[u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(count)?)?;
        self.at += count;
        Some(taken)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.take(1)?.first()?;
            value |= u64::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn span(&mut self, at: &mut usize) -> Option<Range<usize>> {
        let start = at.checked_add(usize::try_from(self.varint()?).ok()?)?;
        let end = start.checked_add(usize::try_from(self.varint()?).ok()?)?;
        *at = end;
        Some(start..end)
    }

    /// A count of things each at least `least` bytes long, no more than
    /// the bytes left could hold.
    fn count(&mut self, least: usize) -> Option<usize> {
        let count = usize::try_from(self.varint()?).ok()?;
        (count.checked_mul(least)? <= self.bytes.len() - self.at).then_some(count)
    }

    fn layout(&mut self) -> Option<Layout> {
        let root = self.span(&mut 0)?;
        let count = self.count(3)?;
        let mut objects = Vec::with_capacity(count);
        let mut object_at = 0;
        for _ in 0..count {
            let object = self.span(&mut object_at.clone())?;
            object_at = object.start;
            let count = self.count(4)?;
            let mut members = Vec::with_capacity(count);
            let mut at = object.start;
            for _ in 0..count {
                let key_span = self.span(&mut at)?;
                let value_span = self.span(&mut at)?;
                members.push(Member {
                    key_span,
                    value_span,
                });
            }
            objects.push((object, members));
        }
        Some(Layout { root, objects })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_of(text: &str) -> Layout {
        let document = JsonDocument::parse_expanding(text.to_string(), &["p"]).unwrap();
        document.layout().unwrap()
    }

    #[test]
    fn a_cache_reads_back_what_it_wrote() {
        let mut cache = Cache::fresh();
        for text in [
            r#"{"a": 1}"#,
            r#"{"p": {"x": [1], "y": {"z": 2}}, "b": "é"}"#,
        ] {
            let key = cache.key(&[text.as_bytes()], &["p"]);
            cache = cache.with(key, layout_of(text), None);
        }
        let back = decode(&encode(&cache)).unwrap();
        assert_eq!(back.secret, cache.secret);
        assert_eq!(back.entries, cache.entries);
    }

    fn fingerprint(inode: u64, modified: i128, changed: i128) -> Fingerprint {
        Fingerprint {
            device: 7,
            inode,
            size: 15,
            modified,
            changed,
        }
    }

    #[test]
    fn a_fingerprint_is_trusted_only_when_older_than_the_margin() {
        let at = 100 * MARGIN_NANOS;
        let seen = |modified, changed| Verified {
            fingerprint: fingerprint(1, modified, changed),
            at,
        };
        assert!(seen(at - MARGIN_NANOS - 1, at - MARGIN_NANOS - 1).trusted());
        assert!(!seen(at - MARGIN_NANOS, at - MARGIN_NANOS - 1).trusted());
        assert!(!seen(at - MARGIN_NANOS - 1, at - MARGIN_NANOS).trusted());
        // A file from the future (the clock was set back) is racy.
        assert!(!seen(at - MARGIN_NANOS - 1, at + 1).trusted());
    }

    #[test]
    fn a_trusted_layout_is_found_by_its_fingerprint_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        let text = r#"{"p": {"x": 1}}"#;
        let old = fingerprint(1, 10, 10);
        let verified = Verified {
            fingerprint: old,
            at: 10 + MARGIN_NANOS + 1,
        };
        open(&file)
            .parse(text.to_string(), &["p"], true, Some(verified))
            .unwrap();
        let opened = open(&file);
        assert_eq!(opened.trusted(&old, &["p"]), Some(&layout_of(text)));
        assert_eq!(opened.trusted(&old, &[]), None);
        for other in [
            fingerprint(2, 10, 10),
            fingerprint(1, 11, 10),
            fingerprint(1, 10, 11),
            Fingerprint { size: 16, ..old },
            Fingerprint { device: 8, ..old },
        ] {
            assert_eq!(opened.trusted(&other, &["p"]), None);
        }
        // Racy when verified: recorded nowhere, so never trusted.
        let racy = Verified {
            fingerprint: fingerprint(3, 10, 10),
            at: 10 + MARGIN_NANOS,
        };
        open(&file)
            .parse(r#"{"p": {"y": 2}}"#.to_string(), &["p"], true, Some(racy))
            .unwrap();
        assert_eq!(open(&file).trusted(&racy.fingerprint, &["p"]), None);
        // The same fingerprint verified with other bytes moves to them.
        let moved = Verified {
            at: verified.at + 1,
            ..verified
        };
        let other = r#"{"p": {"z": 3}}"#;
        open(&file)
            .parse(other.to_string(), &["p"], true, Some(moved))
            .unwrap();
        let opened = open(&file);
        assert_eq!(opened.trusted(&old, &["p"]), Some(&layout_of(other)));
        assert_eq!(
            opened
                .cache
                .entries
                .iter()
                .filter(|entry| entry.seen.is_some())
                .count(),
            1
        );
        // An edit's record keeps what was verified of the same bytes.
        let key = opened.cache.key(&[other.as_bytes()], &["p"]);
        record(&file, &[other.as_bytes()], &["p"], layout_of(other));
        let opened = open(&file);
        assert_eq!(opened.cache.find(&key).unwrap().seen, Some(moved));
    }

    #[test]
    fn a_damaged_cache_is_not_read() {
        let mut cache = Cache::fresh();
        let text = r#"{"p": {"x": 1}}"#;
        let key = cache.key(&[text.as_bytes()], &["p"]);
        let seen = Verified {
            fingerprint: fingerprint(1, -5, 1 << 70),
            at: 3,
        };
        cache = cache.with(key, layout_of(text), Some(seen));
        assert_eq!(decode(&encode(&cache)).unwrap().entries, cache.entries);
        let bytes = encode(&cache);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            assert!(decode(&flipped).is_none(), "flipped at {at}");
        }
    }

    #[test]
    fn keys_tell_texts_expansions_and_secrets_apart() {
        let cache = Cache::fresh();
        let key = cache.key(&[b"{\"a\": 1}"], &["p"]);
        assert_eq!(key, cache.key(&[b"{\"a\"", b": 1}"], &["p"]));
        assert_ne!(key, cache.key(&[b"{\"a\": 2}"], &["p"]));
        assert_ne!(key, cache.key(&[b"{\"a\": 1}"], &[]));
        assert_ne!(key, Cache::fresh().key(&[b"{\"a\": 1}"], &["p"]));
    }

    /// A reader that gives its bytes a few at a time, as a pipe or a
    /// signal-interrupted `read` may.
    struct Trickle<'a> {
        bytes: &'a [u8],
        steps: Vec<usize>,
        at: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let step = self.steps.get(self.at % self.steps.len().max(1)).copied();
            self.at += 1;
            let count = step.unwrap_or(usize::MAX).max(1).min(buffer.len());
            let count = count.min(self.bytes.len());
            buffer[..count].copy_from_slice(&self.bytes[..count]);
            self.bytes = &self.bytes[count..];
            Ok(count)
        }
    }

    fn streamed(
        cache: &Cache,
        bytes: &[u8],
        size: u64,
        buffer: usize,
        steps: &[usize],
    ) -> Option<Key> {
        let mut reader = Trickle {
            bytes,
            steps: steps.to_vec(),
            at: 0,
        };
        stream_key(
            &cache.secret,
            &mut reader,
            size,
            buffer,
            &["p"],
            &mut Captured::default(),
        )
    }

    #[test]
    fn bytes_captured_as_they_pass_are_the_ranges_of_the_file() {
        let cache = Cache::fresh();
        let text: String = (0..400).map(|i| format!("\"k{i}é\": {i}, ")).collect();
        let bytes = text.as_bytes();
        let ranges = [5..9, 0..1, 100..700, 701..702, 2000..bytes.len()];
        for buffer in [4, 7, 64, 1 << 16] {
            for steps in [&[][..], &[1], &[3, 1, 2], &[150]] {
                let mut captured = Captured::new(ranges.iter().cloned());
                let mut reader = Trickle {
                    bytes,
                    steps: steps.to_vec(),
                    at: 0,
                };
                let size = bytes.len() as u64;
                let key = stream_key(
                    &cache.secret,
                    &mut reader,
                    size,
                    buffer,
                    &["p"],
                    &mut captured,
                );
                assert_eq!(key, Some(cache.key(&[bytes], &["p"])));
                for range in &ranges {
                    assert_eq!(
                        captured.get(range),
                        Some(&bytes[range.clone()]),
                        "{range:?}, buffer {buffer}, steps {steps:?}"
                    );
                }
                assert_eq!(captured.get(&(5..8)), None, "not a range kept");
                assert_eq!(captured.get(&(6..9)), None, "not a range kept");
            }
        }
        // Overlapping ranges are not kept; a range past the end never
        // passes whole.
        let mut overlapping = Captured::new([0..10, 5..20]);
        overlapping.feed(0, bytes);
        assert_eq!(overlapping.get(&(0..10)), None);
        let mut past = Captured::new([0..4, 10..bytes.len() + 5]);
        past.feed(0, bytes);
        assert_eq!(past.get(&(0..4)), Some(&bytes[..4]));
        assert_eq!(past.get(&(10..bytes.len() + 5)), None);
    }

    #[test]
    fn a_spliced_text_is_prepared_with_the_key_of_the_same_bytes() {
        use crate::mechanics::fsx::spliced::Piece;
        let dir = tempfile::tempdir().unwrap();
        let (old, cache_file) = (dir.path().join("old"), dir.path().join("cache"));
        let text: Vec<u8> = (0..300_000u32)
            .map(|at| b"{}ab"[(at % 4) as usize])
            .collect();
        fs::write(&old, &text).unwrap();
        let file = fs::File::open(&old).unwrap();
        // Saved once, so both preparations load the same secret.
        Cache::fresh().save(&cache_file);
        let pieces = [
            Piece::Old(0..70_000),
            Piece::New(b"new bytes"),
            Piece::Old(70_010..300_000),
        ];
        let whole = [&text[..70_000], b"new bytes", &text[70_010..]].concat();
        let prepared = prepare_spliced(&cache_file, &file, &pieces, &["projects"]).unwrap();
        assert_eq!(
            prepared.key,
            prepare(&cache_file, &[&whole], &["projects"]).key
        );
        assert!(prepare_spliced(&cache_file, &file, &[Piece::Old(0..300_001)], &[]).is_none());
    }

    #[test]
    fn a_streamed_key_is_the_key_of_the_same_bytes() {
        let cache = Cache::fresh();
        let text = "{\"é\": \"日本\", \"😀\": [\"\u{feff}\"]}".repeat(50);
        let bytes = text.as_bytes();
        let whole = cache.key(&[bytes], &["p"]);
        for buffer in [4, 5, 7, 64, 1 << 20] {
            for steps in [&[][..], &[1], &[3, 1, 2], &[5, 4]] {
                let key = streamed(&cache, bytes, bytes.len() as u64, buffer, steps);
                assert_eq!(key, Some(whole), "buffer {buffer}, steps {steps:?}");
            }
        }
        // Through a real file, from its start.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("text");
        fs::write(&path, bytes).unwrap();
        let opened = Opened { file: &path, cache };
        let mut file = fs::File::open(&path).unwrap();
        assert_eq!(
            opened.key_of_file(&mut file, bytes.len() as u64, &["p"]),
            Some(whole)
        );
        let cache = opened.cache;
        // Shorter than said: no key; longer: the key of what was said.
        assert_eq!(
            streamed(&cache, bytes, bytes.len() as u64 + 1, 64, &[]),
            None
        );
        let head = &bytes[..8];
        assert_eq!(
            streamed(&cache, bytes, 8, 64, &[3]),
            Some(cache.key(&[head], &["p"]))
        );
        // A character cut by the end, or bytes that are not UTF-8: their
        // key, which no text the cache holds has.
        let cut = text.find('é').unwrap() + 1;
        assert_eq!(
            streamed(&cache, bytes, cut as u64, 64, &[]),
            Some(cache.key(&[&bytes[..cut]], &["p"]))
        );
        let invalid = b"{\"a\xff\": 1}";
        assert_eq!(
            streamed(&cache, invalid, 9, 4, &[]),
            Some(cache.key(&[&invalid[..9]], &["p"]))
        );
        assert_eq!(
            streamed(&cache, b"", 0, 4, &[]),
            Some(cache.key(&[], &["p"]))
        );
    }

    mod streaming {
        use proptest::prelude::*;

        use super::{Cache, streamed};

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// Random bytes, mostly UTF-8 with characters of every length,
            /// read through random buffers in random steps: the streamed
            /// key is the whole bytes' key.
            #[test]
            fn streamed_keys_are_whole_keys(
                pieces in prop::collection::vec(
                    prop_oneof![
                        4 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
                        4 => prop::collection::vec(0x20u8..0x7f, 0..40),
                        1 => prop::collection::vec(any::<u8>(), 0..3),
                    ],
                    0..200,
                ),
                buffer in 1usize..40,
                steps in prop::collection::vec(1usize..50, 0..5),
            ) {
                let bytes = pieces.concat();
                let cache = Cache::fresh();
                let expected = Some(cache.key(&[&bytes], &["p"]));
                let key = streamed(&cache, &bytes, bytes.len() as u64, buffer, &steps);
                prop_assert_eq!(key, expected);
            }
        }
    }

    #[test]
    fn a_hit_gives_the_document_a_pass_gives() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cache").join(FILE_NAME);
        let text = r#"{"p": {"x": {"mcpServers": {"a": 1}}}, "b": [1, 2]}"#;
        let missed = parse(&file, text.to_string(), &["p"], true).unwrap();
        assert!(file.exists());
        let hit = parse(&file, text.to_string(), &["p"], true).unwrap();
        assert_eq!(hit.layout(), missed.layout());
        // Not parsed again: a text the pass refuses is taken as cached
        // only when its bytes are the ones cached, which these are not.
        assert!(
            parse(
                &file,
                r#"{"p": {"x": 1}, "b": [1, 2],}"#.into(),
                &["p"],
                true
            )
            .is_err()
        );
    }
}
