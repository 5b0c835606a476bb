//! The human gate in front of every write, of every scope: the person
//! sees the exact change (each file's diff, secrets masked) and agrees to
//! it before anything is written. A private scope is no exception: Claude
//! Code starts local and user servers without asking.
//!
//! With a client that declares elicitation, the server asks the person
//! itself (`elicitation/create`, a form with no fields: accept, decline or
//! cancel). Otherwise (token mode) the first call keeps the change waiting
//! in mcpenv's state ([`crate::ops::confirm`]) and returns its id; the
//! person answers with `mcpenv confirm` at their own terminal, and only a
//! later call with the id writes. Nothing the agent is handed approves
//! anything. Both answers are bound to the change: its fingerprint covers
//! the tool, its arguments and every file's text before and after, so a
//! changed argument or a file edited in between voids the answer, and an
//! answer is spent by its first use.

use sha2::{Digest, Sha256};

use crate::mechanics::diff::FileChange;
pub use crate::ops::shown_changes::{ShownChange, shown};

/// A change's identity: what the person's answer is bound to.
pub type Fingerprint = [u8; 32];

/// The fingerprint of `tool` called with `arguments` (without the id
/// itself) making `changes`.
pub fn fingerprint(
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    changes: &[FileChange],
) -> Fingerprint {
    let mut hasher = Sha256::new();
    // Lengths first, so no two different inputs hash the same bytes.
    let mut piece = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    piece(tool.as_bytes());
    let mut sorted: Vec<(&String, &serde_json::Value)> = arguments
        .iter()
        .filter(|(name, _)| name.as_str() != CONFIRMATION)
        .collect();
    sorted.sort_by_key(|(name, _)| name.as_str());
    for (name, value) in sorted {
        piece(name.as_bytes());
        piece(value.to_string().as_bytes());
    }
    for change in changes {
        piece(change.path.as_os_str().as_encoded_bytes());
        for side in [&change.before, &change.after] {
            match side {
                Some(text) => piece(text.as_bytes()),
                None => piece(b"\xff(absent)"),
            }
        }
    }
    hasher.finalize().into()
}

/// The argument that carries the id of a change the person confirmed.
pub const CONFIRMATION: &str = "confirmation";

/// `fingerprint` in hex, as the store of changes waiting keeps it.
pub fn hex(fingerprint: &Fingerprint) -> String {
    fingerprint
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The files of a change as `mcpenv confirm` shows them.
pub fn pending_files(changes: &[ShownChange]) -> Vec<crate::ops::confirm::PendingFile> {
    changes
        .iter()
        .map(|change| crate::ops::confirm::PendingFile {
            file: change.file.clone(),
            committed: change.committed,
            diff: change.diff.clone(),
        })
        .collect()
}

/// The message of the elicitation that asks the person: what the tool
/// will do, then every diff.
pub fn question(summary: &str, changes: &[ShownChange]) -> String {
    let mut text = format!("{summary}\n\nThese files change:\n");
    for change in changes {
        text.push('\n');
        text.push_str(&change.diff);
    }
    text.push_str("\nAccept to write these changes; decline to leave every file as it is.");
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn change(after: &str) -> FileChange {
        FileChange {
            path: PathBuf::from("/p/.mcp.json"),
            before: None,
            after: Some(after.to_string()),
        }
    }

    #[test]
    fn a_fingerprint_is_bound_to_the_files_text() {
        let arguments = serde_json::Map::new();
        let first = fingerprint("share_server", &arguments, &[change("{}")]);
        let other = fingerprint("share_server", &arguments, &[change("{ }")]);
        assert_ne!(first, other);
        assert_eq!(hex(&first).len(), 64);
    }

    #[test]
    fn the_id_itself_is_not_part_of_the_fingerprint() {
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), "a".into());
        let without = fingerprint("t", &arguments, &[]);
        arguments.insert(CONFIRMATION.into(), "x".into());
        assert_eq!(without, fingerprint("t", &arguments, &[]));
        arguments.insert("name".into(), "b".into());
        assert_ne!(without, fingerprint("t", &arguments, &[]));
    }
}
