//! A file's new bytes told as ranges of its old bytes and new bytes between
//! them: what an edit of a large `~/.claude.json` writes without holding
//! the file. The old bytes are read from the old file, kept open (its inode
//! outlives the rename that replaces its name), through one small buffer,
//! or copied by the kernel (`copy_file_range`, through `std::io::copy`)
//! where it can.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::ops::Range;

/// The buffer old bytes are read through.
const BUFFER: usize = 64 << 10;

/// One piece of a new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// These bytes of the old file.
    Old(Range<u64>),
    /// These bytes.
    New(&'a [u8]),
}

impl Piece<'_> {
    fn len(&self) -> u64 {
        match self {
            Self::Old(range) => range.end - range.start,
            Self::New(bytes) => bytes.len() as u64,
        }
    }
}

/// The length of the text `pieces` make.
pub fn len_of(pieces: &[Piece<'_>]) -> u64 {
    pieces.iter().map(Piece::len).sum()
}

/// Reads exactly `buffer.len()` bytes of `file` at `at`, not moving its
/// offset.
pub fn read_exact_at(file: &File, buffer: &mut [u8], at: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buffer, at)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let (mut buffer, mut at) = (buffer, at);
        while !buffer.is_empty() {
            match file.seek_read(buffer, at) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(read) => {
                    buffer = &mut buffer[read..];
                    at += read as u64;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buffer, at);
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// Gives `each` the text `pieces` make, in order, in chunks of at most
/// [`BUFFER`] bytes (the old file's bytes read through one buffer).
pub fn stream(old: &File, pieces: &[Piece<'_>], mut each: impl FnMut(&[u8])) -> io::Result<()> {
    let mut buffer = vec![0u8; BUFFER];
    for piece in pieces {
        match piece {
            Piece::New(bytes) => {
                for chunk in bytes.chunks(BUFFER) {
                    each(chunk);
                }
            }
            Piece::Old(range) => {
                let mut at = range.start;
                while at < range.end {
                    let take =
                        usize::try_from(range.end - at).map_or(BUFFER, |left| left.min(BUFFER));
                    read_exact_at(old, &mut buffer[..take], at)?;
                    each(&buffer[..take]);
                    at += take as u64;
                }
            }
        }
    }
    Ok(())
}

/// Fills `buffer` with the text `pieces` make from offset `at` on, as far
/// as it goes; returns how many bytes it put there.
pub fn read_at(old: &File, pieces: &[Piece<'_>], at: u64, buffer: &mut [u8]) -> io::Result<usize> {
    let mut start = 0u64;
    let mut filled = 0usize;
    for piece in pieces {
        let end = start + piece.len();
        let from = at + filled as u64;
        if filled == buffer.len() {
            break;
        }
        if from < end && from >= start {
            let offset = from - start;
            let take = usize::try_from(end - from).map_or(buffer.len() - filled, |left| {
                left.min(buffer.len() - filled)
            });
            let into = &mut buffer[filled..filled + take];
            match piece {
                Piece::New(bytes) => {
                    let offset = usize::try_from(offset).map_err(io::Error::other)?;
                    into.copy_from_slice(&bytes[offset..offset + take]);
                }
                Piece::Old(range) => read_exact_at(old, into, range.start + offset)?,
            }
            filled += take;
        }
        start = end;
    }
    Ok(filled)
}

/// Writes the text `pieces` make into `to` from its current offset: the
/// old file's ranges copied by the kernel when `kernel` (`std::io::copy`
/// uses `copy_file_range` between files on Linux, and falls back itself
/// where it cannot), through one buffer otherwise.
///
/// The kernel copies only the ranges that stay at their offset: the bytes
/// an edit moves (all those after a change of length) are copied through
/// a buffer of [`MOVED_BUFFER`] bytes, which measured faster. Splicing
/// pages into others at another offset cost ext4 here, for 25 MB, 14–16
/// ms and a slower `fsync` after it (17–20 ms), against 10–11 ms and 16–18
/// ms read and written through half a MiB; the bytes that stay took 9–11
/// ms either way.
pub fn write_to(old: &File, pieces: &[Piece<'_>], to: &mut File, kernel: bool) -> io::Result<()> {
    write_with(old, pieces, to, |old, range, to, at| {
        if kernel && range.start == at {
            copy_in_kernel(old, range, to)
        } else {
            Err(io::ErrorKind::Unsupported.into())
        }
    })
}

/// The buffer old bytes are copied through when they move (see
/// [`write_to`]): large enough that the system calls and the partial
/// pages they write cost little (64 KiB took 16–18 ms for 25 MB, 512 KiB
/// 10–11 ms, 1 MiB no less).
const MOVED_BUFFER: usize = 512 << 10;

/// [`write_to`], each old range first given to `copy` (with the offset it
/// goes to); when it fails (part way, maybe), the range is written again
/// from its start through one buffer.
fn write_with(
    old: &File,
    pieces: &[Piece<'_>],
    to: &mut File,
    mut copy: impl FnMut(&File, &Range<u64>, &mut File, u64) -> io::Result<()>,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    for piece in pieces {
        match piece {
            Piece::New(bytes) => to.write_all(bytes)?,
            Piece::Old(range) => {
                let at = to.stream_position()?;
                if copy(old, range, to, at).is_ok() {
                    continue;
                }
                to.seek(SeekFrom::Start(at))?;
                to.set_len(at)?;
                if buffer.is_empty() {
                    buffer = vec![0u8; MOVED_BUFFER];
                }
                copy_through(old, range, to, &mut buffer)?;
            }
        }
    }
    Ok(())
}

/// The bytes `range` of `old` appended to `to` by `std::io::copy` from a
/// reader limited to them (on Linux, `copy_file_range`: no byte passes
/// through this process).
fn copy_in_kernel(old: &File, range: &Range<u64>, to: &mut File) -> io::Result<()> {
    let mut reader = old;
    reader.seek(SeekFrom::Start(range.start))?;
    let wanted = range.end - range.start;
    let copied = io::copy(&mut reader.take(wanted), to)?;
    if copied == wanted {
        Ok(())
    } else {
        Err(io::ErrorKind::UnexpectedEof.into())
    }
}

/// The bytes `range` of `old` appended to `to` through `buffer`.
fn copy_through(
    old: &File,
    range: &Range<u64>,
    to: &mut File,
    buffer: &mut [u8],
) -> io::Result<()> {
    let mut at = range.start;
    while at < range.end {
        let take =
            usize::try_from(range.end - at).map_or(buffer.len(), |left| left.min(buffer.len()));
        read_exact_at(old, &mut buffer[..take], at)?;
        to.write_all(&buffer[..take])?;
        at += take as u64;
    }
    Ok(())
}

/// Whether `file` (read from its start) holds exactly the text `pieces`
/// make, compared through two small buffers.
pub fn holds(mut file: &File, old: &File, pieces: &[Piece<'_>]) -> io::Result<bool> {
    if file.metadata()?.len() != len_of(pieces) {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(0))?;
    let mut theirs = vec![0u8; BUFFER];
    let mut same = true;
    stream(old, pieces, |chunk| {
        if same {
            let read = &mut theirs[..chunk.len()];
            same = file.read_exact(read).is_ok() && read == chunk;
        }
    })?;
    Ok(same && file.read(&mut theirs)? == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// The old file's bytes, and pieces over them as a random plan cuts
    /// them: kept ranges in order, new bytes between.
    fn cut(old_len: usize) -> impl Strategy<Value = Vec<(Range<usize>, Vec<u8>)>> {
        proptest::collection::vec(
            (
                0..=old_len,
                0..=old_len,
                proptest::collection::vec(any::<u8>(), 0..40),
            ),
            0..5,
        )
        .prop_map(|cuts| {
            cuts.into_iter()
                .map(|(a, b, new)| (a.min(b)..a.max(b), new))
                .collect()
        })
    }

    fn pieces_of<'a>(cuts: &'a [(Range<usize>, Vec<u8>)]) -> Vec<Piece<'a>> {
        cuts.iter()
            .flat_map(|(range, new)| {
                [
                    Piece::Old(range.start as u64..range.end as u64),
                    Piece::New(new.as_slice()),
                ]
            })
            .collect()
    }

    fn whole(old: &[u8], cuts: &[(Range<usize>, Vec<u8>)]) -> Vec<u8> {
        cuts.iter()
            .flat_map(|(range, new)| [&old[range.clone()], new.as_slice()].concat())
            .collect()
    }

    fn old_file(dir: &std::path::Path, bytes: &[u8]) -> File {
        let path = dir.join("old");
        std::fs::write(&path, bytes).unwrap();
        File::open(path).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_form_gives_the_text_put_together_whole(
            old in proptest::collection::vec(any::<u8>(), 0..300_000),
            cuts in cut(300_000),
            at in 0usize..400_000,
        ) {
            let cuts: Vec<_> = cuts
                .into_iter()
                .map(|(range, new)| (range.start.min(old.len())..range.end.min(old.len()), new))
                .collect();
            let expected = whole(&old, &cuts);
            let pieces = pieces_of(&cuts);
            let dir = tempfile::tempdir().unwrap();
            let file = old_file(dir.path(), &old);
            prop_assert_eq!(len_of(&pieces), expected.len() as u64);
            let mut streamed = Vec::new();
            stream(&file, &pieces, |chunk| streamed.extend_from_slice(chunk)).unwrap();
            prop_assert_eq!(&streamed, &expected);
            let mut window = vec![0u8; 1000];
            let filled = read_at(&file, &pieces, at as u64, &mut window).unwrap();
            let from = at.min(expected.len());
            prop_assert_eq!(&window[..filled], &expected[from..(from + 1000).min(expected.len())]);
            for kernel in [true, false] {
                let path = dir.path().join(format!("new-{kernel}"));
                let mut to = File::options().create(true).truncate(true).read(true).write(true).open(&path).unwrap();
                write_to(&file, &pieces, &mut to, kernel).unwrap();
                prop_assert_eq!(&std::fs::read(&path).unwrap(), &expected);
                prop_assert!(holds(&to, &file, &pieces).unwrap());
            }
            let mut other = expected.clone();
            other.push(b'x');
            let path = dir.path().join("other");
            std::fs::write(&path, &other).unwrap();
            prop_assert!(!holds(&File::open(&path).unwrap(), &file, &pieces).unwrap());
            let mut other = expected.clone();
            if let Some(first) = other.first_mut() {
                *first ^= 1;
                std::fs::write(&path, &other).unwrap();
                prop_assert!(!holds(&File::open(&path).unwrap(), &file, &pieces).unwrap());
            }
        }
    }

    #[test]
    fn a_failed_kernel_copy_is_written_again_through_the_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let old: Vec<u8> = (0..200_000u32).map(|at| (at % 251) as u8).collect();
        let file = old_file(dir.path(), &old);
        let path = dir.path().join("new");
        let pieces = [
            Piece::New(b"head"),
            Piece::Old(10..150_000),
            Piece::New(b"middle"),
            Piece::Old(150_000..200_000),
        ];
        let expected = [b"head", &old[10..150_000], b"middle", &old[150_000..]].concat();
        // A copy that writes half its range and fails, once; one that
        // always fails; and none (`kernel` false): the same bytes.
        let mut failures = 0;
        let mut to = File::create(&path).unwrap();
        write_with(&file, &pieces, &mut to, |old, range, to, _at| {
            failures += 1;
            copy_through(
                old,
                &(range.start..range.start + (range.end - range.start) / 2),
                to,
                &mut [0; 100],
            )?;
            Err(io::ErrorKind::Other.into())
        })
        .unwrap();
        assert_eq!(failures, 2);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        for kernel in [true, false] {
            let mut to = File::create(&path).unwrap();
            write_to(&file, &pieces, &mut to, kernel).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), expected);
            // A range past the old file's end is an error either way.
            let mut to = File::create(&path).unwrap();
            assert!(write_to(&file, &[Piece::Old(199_000..200_001)], &mut to, kernel).is_err());
        }
    }
}
