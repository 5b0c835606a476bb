//! The parts of `~/.claude.json` a reader uses, read alone from a file whose
//! layout is trusted: the root `mcpServers` and one project's entry under
//! `projects`, found through the keys of the root and of `projects`, each
//! read where the layout says (`pread`), and nothing else.
//!
//! They make a small document of their own, `{"mcpServers": …, "projects":
//! {"<key>": …}}`, the two values and the key byte for byte as in the file:
//! every lookup of those members gives what it gives in the whole file (the
//! same values, the same shapes and errors, at the same depths), and no
//! byte that was not read can be seen. Anything unexpected (a layout that
//! does not fit, bytes that are not what it says, `projects` not an object,
//! a file changed meanwhile) gives `None`, and the file is read whole.

use std::fs::File;
use std::ops::Range;

use crate::mechanics::document::{JsonDocument, Layout, Member, decode_key};
use crate::mechanics::layout_cache::{Captured, Fingerprint};

use super::CLAUDE_JSON_EXPAND;

/// Ranges closer than this are read in one `pread`: a few kilobytes more
/// copied cost less than another system call.
const GAP: usize = 4096;

/// The document of the parts of the file `file` that `project`'s lookups
/// need, read where `layout` says; `None` (read the whole file) when they
/// are not as it says or the file is no longer of `fingerprint`. Keys
/// `captured` holds (kept as the file was digested, with this layout's
/// [`key_spans`]) are not read again.
pub fn read(
    file: &File,
    layout: &Layout,
    project: &str,
    fingerprint: &Fingerprint,
    captured: Option<&Captured>,
) -> Option<JsonDocument> {
    let size = usize::try_from(fingerprint.size()).ok()?;
    let members_of = |span: &Range<usize>| members_of(layout, span);
    let keys_of = |members: &[Member]| keys_of(file, size, members, captured);
    let root = members_of(&layout.root)?;
    let root_keys = keys_of(root)?;
    let servers = last_named(root, &root_keys, "mcpServers")?;
    let projects = last_named(root, &root_keys, "projects")?;
    let entry = match projects {
        Some(projects) => {
            // Not expanded: not an object, whose lookups fail as the whole
            // file's do only when read whole.
            let members = members_of(&projects.value_span)?;
            last_named(members, &keys_of(members)?, project)?
        }
        None => None,
    };
    let mut wanted = Vec::new();
    if let Some(servers) = servers {
        wanted.push(&servers.value_span);
    }
    if let Some(entry) = entry {
        wanted.push(&entry.key_span);
        wanted.push(&entry.value_span);
    }
    let mut read = read_ranges(file, size, wanted.into_iter(), None)?.into_iter();
    // A change while the parts were read moves the fingerprint (its
    // `ctime`, at least): then they may mix two states of the file.
    if Fingerprint::of(&file.metadata().ok()?)? != *fingerprint {
        return None;
    }
    let mut text = String::from("{");
    if servers.is_some() {
        text.push_str("\"mcpServers\":");
        text.push_str(&read.next()?);
    }
    if projects.is_some() {
        if servers.is_some() {
            text.push(',');
        }
        text.push_str("\"projects\":{");
        if entry.is_some() {
            text.push_str(&read.next()?);
            text.push(':');
            text.push_str(&read.next()?);
        }
        text.push('}');
    }
    text.push('}');
    // The parts were valid in the file verified; parsed again (a small
    // cost), they are also checked to be what was verified.
    JsonDocument::parse_expanding(text, CLAUDE_JSON_EXPAND).ok()
}

/// The raw keys of `members` in the file `file` of `size` bytes, kept in
/// `captured` or read.
pub(super) fn keys_of(
    file: &File,
    size: usize,
    members: &[Member],
    captured: Option<&Captured>,
) -> Option<Vec<String>> {
    read_ranges(
        file,
        size,
        members.iter().map(|member| &member.key_span),
        captured,
    )
}

/// The members of the object at `span` that `layout` knows.
pub(super) fn members_of<'a>(layout: &'a Layout, span: &Range<usize>) -> Option<&'a [Member]> {
    layout
        .objects
        .iter()
        .find(|(object, _)| object == span)
        .map(|(_, members)| members.as_slice())
}

/// The last of `members` (whose raw keys are `keys`) named `name`, as
/// `JSON.parse` takes it; `None` when a key is not a JSON string.
pub(super) fn last_named<'a>(
    members: &'a [Member],
    keys: &[String],
    name: &str,
) -> Option<Option<&'a Member>> {
    for (member, key) in members.iter().zip(keys).rev() {
        if decode_key(key)? == name {
            return Some(Some(member));
        }
    }
    Some(None)
}

/// The key spans of every member [`read`] may look up in a file laid out
/// as `layout` (the root's and `projects`'s), to keep as the file is
/// digested.
pub fn key_spans(layout: &Layout) -> impl Iterator<Item = Range<usize>> + '_ {
    layout
        .objects
        .iter()
        .flat_map(|(_, members)| members.iter().map(|member| member.key_span.clone()))
}

/// The text of each of `ranges` (in file order) of the file of `size`
/// bytes, each valid UTF-8: from `captured` when it holds them all, else
/// read, close ranges together.
pub(super) fn read_ranges<'a>(
    file: &File,
    size: usize,
    ranges: impl Iterator<Item = &'a Range<usize>>,
    captured: Option<&Captured>,
) -> Option<Vec<String>> {
    let ranges: Vec<&Range<usize>> = ranges.collect();
    if let Some(captured) = captured
        && let Some(texts) = ranges
            .iter()
            .map(|range| {
                let bytes = captured.get(range)?;
                std::str::from_utf8(bytes).ok().map(str::to_owned)
            })
            .collect::<Option<Vec<String>>>()
    {
        return Some(texts);
    }
    let mut texts = Vec::with_capacity(ranges.len());
    let mut first = 0;
    while first < ranges.len() {
        let start = ranges[first].start;
        let mut end = ranges[first].end;
        let mut next = first + 1;
        while let Some(range) = ranges.get(next)
            && range.start >= end
            && range.start - end <= GAP
        {
            end = range.end;
            next += 1;
        }
        if start > end || end > size {
            return None;
        }
        let mut window = vec![0; end - start];
        read_at(file, &mut window, start)?;
        for range in &ranges[first..next] {
            let bytes =
                window.get(range.start.checked_sub(start)?..range.end.checked_sub(start)?)?;
            texts.push(std::str::from_utf8(bytes).ok()?.to_owned());
        }
        first = next;
    }
    Some(texts)
}

#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], at: usize) -> Option<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buffer, u64::try_from(at).ok()?).ok()
}

/// Never reached: no fingerprint is trusted off Unix.
#[cfg(not(unix))]
fn read_at(_file: &File, _buffer: &mut [u8], _at: usize) -> Option<()> {
    None
}
