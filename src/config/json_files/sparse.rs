//! What an edit of `~/.claude.json` reads of a file whose layout the cache
//! knows: only the parts its plan looks at, each read where the layout says
//! into a text of the file's length, every other byte of it NUL.
//!
//! The parts: the file's start up to the root's first value (the style of
//! new members comes from the root's first member), every root key, the
//! root `mcpServers` member and this project's entry under `projects`, each
//! from the end of the member before it (so the indent of their lines is
//! there), and the braces of the root and of `projects`. Offsets in the
//! text are the file's own: a splice planned on it is a splice of the file.
//!
//! NUL is in no valid JSON text, inside strings or out, so a byte that was
//! not read is never taken for one that was: a splice whose context holds a
//! NUL ([`Sparse::covers`]) is not written from this text, and the edit reads the
//! whole file instead. `projects` is laid out holding this project's entry
//! alone (the keys of the others are read, through a small buffer, only to
//! find it): an edit that adds an entry to `projects` reads the whole file.

use std::fs::File;
use std::ops::Range;

use crate::mechanics::document::{JsonDocument, Layout, Member, Splice};
use crate::mechanics::fsx::spliced::read_exact_at;

use super::parts::{keys_of, last_named, members_of};

/// Ranges closer than this are read in one `pread`.
const GAP: usize = 4096;

/// A document of the parts an edit reads, and the whole layout of its
/// file.
#[derive(Debug)]
pub struct Sparse {
    /// The parts read, at their offsets in a text of the file's length.
    pub document: JsonDocument,
    /// The file's layout, as the cache holds it (the document's own lays
    /// out `projects` with this project's entry alone).
    pub layout: Layout,
    /// `projects`, whose members the document does not all know.
    reduced: Option<Range<usize>>,
}

/// The parts of `file` (`size` bytes, laid out as `layout`) an edit of the
/// root `mcpServers` or of `project`'s entry looks at (see the module's
/// documentation); `None` (read the whole file) when the layout does not
/// fit, a part is not UTF-8, `projects` holds no entry for `project`, or a
/// read fails.
pub fn read(file: &File, size: u64, layout: &Layout, project: &str) -> Option<Sparse> {
    let size = usize::try_from(size).ok()?;
    let members_of = |span: &Range<usize>| members_of(layout, span);
    let root = members_of(&layout.root)?;
    let keys_of = |members: &[Member]| keys_of(file, size, members, None);
    let root_keys = keys_of(root)?;
    let servers = last_named(root, &root_keys, "mcpServers")?;
    let projects = last_named(root, &root_keys, "projects")?;
    let mut wanted: Vec<Range<usize>> = vec![
        0..root
            .first()
            .map_or(layout.root.end, |first| first.value_span.start + 1),
        layout.root.start..layout.root.start + 1,
        layout.root.end - 1..layout.root.end,
    ];
    for member in root {
        wanted.push(member.key_span.start..member.value_span.start + 1);
        wanted.push(member.value_span.end - 1..member.value_span.end);
    }
    // A member from the end of the one before it: its line's indent.
    let whole = |members: &[Member], index: usize, open: usize| {
        let from = index
            .checked_sub(1)
            .map_or(open + 1, |before| members[before].value_span.end);
        from..members[index].value_span.end
    };
    let position = |members: &[Member], member: &Member| {
        members.iter().position(|other| std::ptr::eq(other, member))
    };
    if let Some(servers) = servers {
        wanted.push(whole(root, position(root, servers)?, layout.root.start));
    }
    let mut objects = vec![(layout.root.clone(), root.to_vec())];
    let mut entry = None;
    if let Some(projects) = projects {
        let span = &projects.value_span;
        let members = members_of(span)?;
        let found = last_named(members, &keys_of(members)?, project)?;
        if let Some(found) = found {
            wanted.push(whole(members, position(members, found)?, span.start));
        }
        wanted.push(span.end - 1..span.end);
        objects.push((span.clone(), found.into_iter().cloned().collect()));
        entry = found;
    }
    // Objects the cache knows inside the parts read whole.
    let inside = |object: &Range<usize>| {
        servers.into_iter().chain(entry).any(|member| {
            member.value_span.start <= object.start && object.end <= member.value_span.end
        })
    };
    for (span, members) in &layout.objects {
        if !objects.iter().any(|(known, _)| known == span) && inside(span) {
            objects.push((span.clone(), members.clone()));
        }
    }
    objects.sort_by_key(|(span, _)| span.start);
    let text = read_windows(file, size, wanted)?;
    let reduced = Layout {
        root: layout.root.clone(),
        objects,
    };
    let document = JsonDocument::from_layout(text, reduced).ok()?;
    Some(Sparse {
        document,
        layout: layout.clone(),
        reduced: projects.map(|projects| projects.value_span.clone()),
    })
}

impl Sparse {
    /// Whether `splice`, planned on [`Sparse::document`], was planned from
    /// bytes read alone and writes no NUL: the value it changes
    /// ([`Splice::enclosing`], which the check validates again) and the
    /// lines its range and that value start on, from their start (where
    /// the indent of new lines comes from), hold no NUL, and that value
    /// does not hold `projects`, whose members the document does not all
    /// know (an entry added there is planned on the whole file).
    pub fn covers(&self, splice: &Splice) -> bool {
        let bytes = self.document.text().as_bytes();
        let line_read = |at: usize| {
            bytes[..at.min(bytes.len())]
                .iter()
                .rev()
                .take_while(|byte| **byte != b'\n')
                .all(|byte| *byte != 0)
        };
        let enclosing = splice.enclosing();
        let holds_reduced = self.reduced.as_ref().is_some_and(|reduced| {
            enclosing.start <= reduced.start && reduced.end <= enclosing.end
        });
        !holds_reduced
            && bytes
                .get(enclosing.clone())
                .is_some_and(|enclosed| !enclosed.contains(&0))
            && line_read(enclosing.start)
            && line_read(splice.range.start)
            && !splice.replacement.as_bytes().contains(&0)
    }
}

/// A text of `size` bytes holding the file's bytes in `wanted` (close
/// ones read together) and NUL everywhere else; `None` when a read fails
/// or what was read is not UTF-8.
fn read_windows(file: &File, size: usize, mut wanted: Vec<Range<usize>>) -> Option<String> {
    wanted.retain(|range| range.start < range.end);
    wanted.sort_by_key(|range| range.start);
    let mut windows: Vec<Range<usize>> = Vec::new();
    for range in wanted {
        match windows.last_mut() {
            Some(last) if range.start <= last.end + GAP => last.end = last.end.max(range.end),
            _ => windows.push(range),
        }
    }
    if windows.last().is_some_and(|last| last.end > size) {
        return None;
    }
    // Zeroed by the allocator: a fresh mapping for a large file, whose
    // pages take no memory until written, so the bytes not read cost none.
    let mut bytes = vec![0u8; size];
    for window in &windows {
        read_exact_at(file, &mut bytes[window.clone()], window.start as u64).ok()?;
        std::str::from_utf8(&bytes[window.clone()]).ok()?;
    }
    text_of(bytes, &windows)
}

/// `bytes` as text, each of `windows` (sorted, apart) checked to be UTF-8
/// already and every other byte NUL: then the whole is UTF-8 (text of
/// valid pieces next to each other, and NUL, is valid), without reading
/// the pages of the bytes not read, which would map them.
#[cfg(target_os = "linux")]
fn text_of(bytes: Vec<u8>, windows: &[Range<usize>]) -> Option<String> {
    let _ = windows;
    // SAFETY: `read_windows` made `bytes` zeroed, then wrote only the
    // windows, each checked to be UTF-8 on its own (their ends fall
    // between characters); NUL bytes are UTF-8 too, and UTF-8 strings put
    // next to each other are UTF-8, so the whole is.
    #[allow(unsafe_code)]
    let text = unsafe { String::from_utf8_unchecked(bytes) };
    Some(text)
}

/// `bytes` as text, checked whole: off Linux, where a large zeroed
/// allocation is not known to cost no memory until written.
#[cfg(not(target_os = "linux"))]
fn text_of(bytes: Vec<u8>, windows: &[Range<usize>]) -> Option<String> {
    text_of_checked(bytes, windows)
}

/// [`text_of`] the portable way: the whole checked.
#[cfg(any(test, not(target_os = "linux")))]
fn text_of_checked(bytes: Vec<u8>, _windows: &[Range<usize>]) -> Option<String> {
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A file of `text`, its layout as a parse finds it, and what [`read`]
    /// reads of it for project `/p`.
    fn read_text(text: &str) -> Option<Sparse> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        std::fs::write(&path, text).unwrap();
        let layout = JsonDocument::parse_expanding(text.to_string(), &["projects"])
            .unwrap()
            .layout()
            .unwrap();
        let file = File::open(&path).unwrap();
        read(&file, text.len() as u64, &layout, "/p")
    }

    fn padding() -> String {
        "x".repeat(3 * GAP)
    }

    #[test]
    fn only_the_parts_an_edit_looks_at_are_read() {
        let pad = padding();
        let text = format!(
            "{{\n  \"numStartups\": 1,\n  \"projects\": {{\n    \"/o\": {{\"h\": \"{pad}\"}},\n    \"/p\": {{\n      \"mcpServers\": {{\"a\": 1}}\n    }},\n    \"/q\": {{\"h\": \"{pad}\"}}\n  }},\n  \"tips\": \"{pad}\",\n  \"mcpServers\": {{\n    \"u\": 2\n  }}\n}}\n"
        );
        let sparse = read_text(&text).unwrap();
        let read = sparse.document.text();
        assert_eq!(read.len(), text.len());
        // Every byte is the file's or NUL, and the long values are not read.
        assert!(
            read.bytes()
                .zip(text.bytes())
                .all(|(r, t)| r == t || r == 0)
        );
        for unread in [
            text.find("\"/o\": {").unwrap() + 20,
            text.find("\"tips\"").unwrap() + 20,
        ] {
            assert_eq!(read.as_bytes()[unread], 0, "{unread}");
        }
        for part in [
            "\"/p\": {\n      \"mcpServers\": {\"a\": 1}\n    }",
            "\"mcpServers\": {\n    \"u\": 2\n  }",
        ] {
            let at = text.find(part).unwrap();
            assert_eq!(&read[at..at + part.len()], part);
        }
        let document = &sparse.document;
        let skeleton = |_: &[&str]| serde_json::Map::new();
        let value = json!({"command": "x"});
        // Into this project's servers and the user's: covered, and what the
        // whole file plans.
        let whole = JsonDocument::parse_expanding(text.clone(), &["projects"]).unwrap();
        for path in [&["projects", "/p", "mcpServers"][..], &["mcpServers"]] {
            let splice = document.plan_set(path, "n", &value, &skeleton).unwrap();
            assert!(sparse.covers(&splice), "{path:?}");
            assert_eq!(
                splice,
                whole.plan_set(path, "n", &value, &skeleton).unwrap()
            );
            let removed = document
                .plan_remove(path, if path.len() == 1 { "u" } else { "a" })
                .unwrap()
                .unwrap();
            assert!(sparse.covers(&removed));
        }
        // A new project's entry, or a new root member: not covered.
        for path in [&["projects", "/new", "mcpServers"][..], &["other"]] {
            let splice = document.plan_set(path, "n", &value, &skeleton).unwrap();
            assert!(!sparse.covers(&splice), "{path:?}");
        }
    }

    #[test]
    fn a_project_without_an_entry_is_read_and_its_insertion_not_covered() {
        let pad = padding();
        let text = format!("{{\"projects\": {{\"/o\": \"{pad}\"}}, \"mcpServers\": {{}}}}");
        let sparse = read_text(&text).unwrap();
        let skeleton = |_: &[&str]| serde_json::Map::new();
        let value = json!(1);
        let local = sparse
            .document
            .plan_set(&["projects", "/p", "mcpServers"], "n", &value, &skeleton)
            .unwrap();
        assert!(!sparse.covers(&local));
        // On one line: no line start is read before the user's servers.
        let user = sparse
            .document
            .plan_set(&["mcpServers"], "n", &value, &skeleton)
            .unwrap();
        assert!(!sparse.covers(&user));
    }

    #[test]
    fn a_layout_that_does_not_fit_or_a_projects_that_is_no_object_reads_nothing() {
        assert!(read_text("{\"projects\": [1], \"mcpServers\": {}}").is_none());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        let text = "{\"mcpServers\": {\"a\": 1}}";
        let layout = JsonDocument::parse_expanding(text.to_string(), &["projects"])
            .unwrap()
            .layout()
            .unwrap();
        // The file changed under the layout: shorter, or other bytes.
        std::fs::write(&path, "{\"mcpServers\": {}}").unwrap();
        let file = File::open(&path).unwrap();
        assert!(read(&file, text.len() as u64, &layout, "/p").is_none());
        std::fs::write(&path, "[\"mcpServers\", {\"a\": 1}]").unwrap();
        let file = File::open(&path).unwrap();
        assert!(read(&file, 24, &layout, "/p").is_none());
        // Bytes that are not UTF-8 where a part is read.
        std::fs::write(&path, b"{\"mcpServers\": {\"\xff\": 1}}").unwrap();
        let file = File::open(&path).unwrap();
        assert!(read(&file, 25, &layout, "/p").is_none());
    }

    #[test]
    fn the_unchecked_text_is_the_checked_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes = format!("é{}日本{}", "a".repeat(10_000), "b".repeat(10_000));
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let windows = vec![0..2, 5_000..5_010, 10_002..10_008, 20_000..20_008];
        let text = read_windows(&file, bytes.len(), windows.clone()).unwrap();
        let mut expected = vec![0u8; bytes.len()];
        for window in windows.clone() {
            expected[window.clone()].copy_from_slice(&bytes.as_bytes()[window]);
        }
        assert!(text.as_bytes() == expected, "only the windows are read");
        assert!(Some(text) == text_of_checked(expected, &windows));
        // A window that cuts a character is refused.
        assert!(read_windows(&file, bytes.len(), std::iter::once(0..1).collect()).is_none());
        assert!(
            read_windows(
                &file,
                bytes.len(),
                std::iter::once(0..bytes.len() + 1).collect()
            )
            .is_none()
        );
    }
}
