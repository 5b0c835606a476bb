//! The human gate in front of writes to committed files: the person sees
//! the exact change (each file's diff, secrets masked) and agrees to it
//! before anything is written.
//!
//! With a client that declares elicitation, the server asks the person
//! itself (`elicitation/create`, a form with no fields: accept, decline or
//! cancel). Otherwise the first call returns the preview and a one-time
//! confirmation token, and only a second call that carries it writes; the
//! client's own approval of that call (the tools are annotated
//! destructive) is where the person agrees. A token is bound to the
//! change: its fingerprint covers the tool, its arguments and every
//! file's text before and after, so a changed argument or a file edited
//! in between makes it stale, and a token is spent by its first use.

use std::sync::Mutex;

use indexmap::IndexMap;

use sha2::{Digest, Sha256};

use crate::diff::FileChange;
pub use crate::ops::shown_changes::{ShownChange, shown};

/// A change's identity: what a token is bound to.
pub type Fingerprint = [u8; 32];

/// The fingerprint of `tool` called with `arguments` (without the token
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

/// The argument that carries a confirmation token.
pub const CONFIRMATION: &str = "confirmation";

/// The tokens handed out and not yet spent, each with the change it
/// stands for, oldest first.
#[derive(Debug, Default)]
pub struct Confirmations {
    issued: Mutex<IndexMap<String, Fingerprint>>,
}

/// The most tokens kept: an agent that previews again and again makes the
/// oldest ones lapse instead of growing the list.
const KEPT: usize = 64;

/// Why a token does not let a call write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Never handed out, or spent already.
    Unknown,
    /// Handed out for another change (an argument or a file differs).
    Stale,
}

impl Confirmations {
    /// A new token for the change `fingerprint`: 128 random bits in hex.
    pub fn issue(&self, fingerprint: Fingerprint) -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let mut issued = self.lock();
        if issued.len() >= KEPT {
            issued.shift_remove_index(0);
        }
        issued.insert(token.clone(), fingerprint);
        Ok(token)
    }

    /// Spends `token` for the change `fingerprint`. A token is spent by
    /// any use, also a refused one: a stale token cannot be tried again
    /// once the files are put back.
    pub fn redeem(&self, token: &str, fingerprint: Fingerprint) -> Result<(), Refusal> {
        match self.lock().shift_remove(token) {
            None => Err(Refusal::Unknown),
            Some(bound) if bound != fingerprint => Err(Refusal::Stale),
            Some(_) => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<String, Fingerprint>> {
        // Inserting or removing a token cannot leave the map half-changed.
        self.issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
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
    fn a_token_is_spent_by_its_first_use_and_bound_to_its_change() {
        let confirmations = Confirmations::default();
        let arguments = serde_json::Map::new();
        let first = fingerprint("share_server", &arguments, &[change("{}")]);
        let other = fingerprint("share_server", &arguments, &[change("{ }")]);
        assert_ne!(first, other);
        let token = confirmations.issue(first).unwrap();
        assert_eq!(token.len(), 32);
        assert_eq!(confirmations.redeem(&token, first), Ok(()));
        assert_eq!(confirmations.redeem(&token, first), Err(Refusal::Unknown));
        let token = confirmations.issue(first).unwrap();
        assert_eq!(confirmations.redeem(&token, other), Err(Refusal::Stale));
        assert_eq!(confirmations.redeem(&token, first), Err(Refusal::Unknown));
    }

    #[test]
    fn the_oldest_tokens_lapse_past_the_limit() {
        let confirmations = Confirmations::default();
        let first = confirmations.issue([0; 32]).unwrap();
        let later: Vec<String> = (0..KEPT)
            .map(|_| confirmations.issue([1; 32]).unwrap())
            .collect();
        assert_eq!(confirmations.redeem(&first, [0; 32]), Err(Refusal::Unknown));
        assert_eq!(confirmations.redeem(&later[0], [1; 32]), Ok(()));
    }

    #[test]
    fn the_token_itself_is_not_part_of_the_fingerprint() {
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), "a".into());
        let without = fingerprint("t", &arguments, &[]);
        arguments.insert(CONFIRMATION.into(), "x".into());
        assert_eq!(without, fingerprint("t", &arguments, &[]));
        arguments.insert("name".into(), "b".into());
        assert_ne!(without, fingerprint("t", &arguments, &[]));
    }
}
