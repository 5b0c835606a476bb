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

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::diff::FileChange;
use crate::ops::Context;

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

/// One file's change as the person sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownChange {
    /// The file, as a person knows it.
    pub file: String,
    /// Whether the file is meant to be committed (`.mcp.json`,
    /// `.env.example`, `.gitignore`): its diff is shown whole.
    pub committed: bool,
    /// The change: a unified diff of a committed file; for a private one
    /// only what changes in it (the variables of a `.env`, values masked;
    /// the servers of `~/.claude.json`), so no other line of a file that
    /// holds secrets is passed on.
    pub diff: String,
}

/// `changes` as the person sees them, every secret the shield knows
/// masked (the values moved into `.env` are learned from the
/// configuration they come from).
pub fn shown(ctx: &Context, changes: &[FileChange]) -> Vec<ShownChange> {
    ctx.learn_world();
    changes
        .iter()
        .map(|change| {
            let file = crate::ops::shown::shown_path(ctx, &change.path);
            let name = change
                .path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let committed = matches!(name.as_str(), ".mcp.json" | ".env.example" | ".gitignore");
            let diff = if committed {
                change.unified(&file)
            } else if change.path == ctx.locations.claude_json {
                servers_changed(ctx, change)
            } else {
                variables_changed(change, &file)
            };
            ShownChange {
                committed,
                file,
                diff: ctx.shield.clean(&diff),
            }
        })
        .collect()
}

/// The lines of a dotenv file that change, each value masked; no other
/// line of the file.
fn variables_changed(change: &FileChange, file: &str) -> String {
    let before = change.before.as_deref().unwrap_or_default();
    let after = change.after.as_deref().unwrap_or_default();
    let mut text = format!(
        "--- a/{file}\n+++ b/{file}\n(changed lines only, values masked; references shown)\n"
    );
    for line in similar::TextDiff::from_lines(before, after).iter_all_changes() {
        let sign = match line.tag() {
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Equal => continue,
        };
        let line = line.value().trim_end_matches('\n');
        let shown = match line.split_once('=') {
            Some((name, value)) if !name.trim_start().starts_with('#') => {
                let value = value.trim_matches(['\'', '"']);
                // A reference names where the value is; it is no secret.
                if crate::references::manager_of(value).is_some() {
                    format!("{name}={value}")
                } else {
                    format!("{name}={}", crate::redact::mask(value))
                }
            }
            _ => line.to_string(),
        };
        text.push(sign);
        text.push_str(&shown);
        text.push('\n');
    }
    text
}

/// The server entries of `~/.claude.json` that change (user scope and
/// this project's local scope); the rest of the file, other projects'
/// entries among it, is not passed on.
fn servers_changed(ctx: &Context, change: &FileChange) -> String {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    let (before, after) = (parse(&change.before), parse(&change.after));
    let key = &ctx.locations.local_key;
    let places: [(&str, Vec<&str>); 2] = [
        ("user scope", vec!["mcpServers"]),
        ("local scope", vec!["projects", key.as_str(), "mcpServers"]),
    ];
    let mut text = String::from("~/.claude.json (only the servers that change):\n");
    for (scope, path) in places {
        let at = |root: &serde_json::Value| {
            path.iter()
                .try_fold(root, |value, step| value.get(*step))
                .and_then(serde_json::Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let (old, new) = (at(&before), at(&after));
        for (name, entry) in &old {
            if new.get(name) != Some(entry) {
                text.push_str(&format!("- {scope} server `{name}`: {entry}\n"));
            }
        }
        for (name, entry) in &new {
            if old.get(name) != Some(entry) {
                text.push_str(&format!("+ {scope} server `{name}`: {entry}\n"));
            }
        }
    }
    text
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
