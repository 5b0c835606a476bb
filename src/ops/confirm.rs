//! Changes an agent asked `mcpenv serve` to make, waiting for the person:
//! the store behind `serve`'s token mode and `mcpenv confirm`.
//!
//! A client without elicitation cannot ask the person, and whatever the
//! server hands the agent the agent can hand back. So the preview is kept
//! here, in a private file of mcpenv's state (mode 0600 in a 0700
//! directory), with the change's fingerprint, the tool, a short id and an
//! expiry; only `mcpenv confirm`, which the person runs at their own
//! terminal, records an answer, bound to the fingerprint it showed; and a
//! later call with the id writes once, only if the change it would make
//! still has that fingerprint. Nothing in a tool result approves anything.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::mechanics::fsx::{self, EditLock, NewMode};
use crate::ops::{Context, Error};

/// How long a change waits for the person's answer, then for the call
/// that writes it.
pub const WAITS: Duration = Duration::from_secs(15 * 60);

/// The most changes kept waiting: an agent that previews again and again
/// makes the oldest lapse instead of growing the file.
const KEPT: usize = 64;

/// The letters of an id: no two that look alike (`0`/`o`, `1`/`l`/`i`).
const ID_LETTERS: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
/// How long an id is.
const ID_LENGTH: usize = 8;

/// The person's answer to a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Answer {
    /// Not answered yet.
    Waiting,
    /// Agreed to, as shown: the change whose fingerprint this is.
    Confirmed {
        /// The fingerprint of the change shown to the person (hex).
        fingerprint: String,
    },
    /// Refused.
    Declined,
}

/// One file's change, as the person sees it (secrets masked already).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingFile {
    /// The file, as a person knows it.
    pub file: String,
    /// Whether the file is meant to be committed.
    pub committed: bool,
    /// Its diff.
    pub diff: String,
}

/// A change waiting for the person.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pending {
    /// The short id the agent's next call carries.
    pub id: String,
    /// The tool that asked for it.
    pub tool: String,
    /// The change's fingerprint (hex): its tool, arguments and every
    /// file's text before and after.
    pub fingerprint: String,
    /// The project the agent works in.
    pub project: PathBuf,
    /// What will be done, in a sentence or two.
    pub summary: String,
    /// Every file that changes.
    pub changes: Vec<PendingFile>,
    /// When it was asked for (seconds since the epoch).
    pub created: u64,
    /// When it lapses (seconds since the epoch).
    pub expires: u64,
    /// The person's answer.
    pub answer: Answer,
}

impl Pending {
    /// Whole minutes left before it lapses, at least 1 while it waits.
    pub fn minutes_left(&self) -> u64 {
        self.expires.saturating_sub(now()).div_ceil(60).max(1)
    }
}

/// Why a call with an id does not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No such change waits: never asked for, written already, or lapsed.
    Unknown,
    /// The person has not answered yet (the change keeps waiting).
    Waiting,
    /// The person said no.
    Declined,
    /// The person agreed to another change: the tool, the arguments or a
    /// file differ from what they were shown.
    Stale,
}

/// The file of changes waiting, in mcpenv's state directory.
#[derive(Debug, Serialize, Deserialize, Default)]
struct Store {
    schema_version: u32,
    pending: Vec<Pending>,
}

/// The private directory the store lives in.
fn directory(state_dir: &Path) -> PathBuf {
    state_dir.join("confirm")
}

/// The store's file.
pub fn store_path(state_dir: &Path) -> PathBuf {
    directory(state_dir).join("pending.json")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn store_error(
    path: &Path,
    what: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::failure_from(format!("cannot {what} `{}`", path.display()), source)
}

/// Runs `change` on the changes waiting (the lapsed ones dropped), under
/// mcpenv's lock, and writes the store back when it changed.
fn with_store<T>(ctx: &Context, change: impl FnOnce(&mut Vec<Pending>) -> T) -> Result<T, Error> {
    let state_dir = &ctx.locations.state_dir;
    let dir = directory(state_dir);
    let path = store_path(state_dir);
    std::fs::create_dir_all(state_dir)
        .map_err(|error| store_error(state_dir, "create the directory", error))?;
    fsx::private_dir(&dir).map_err(|error| {
        Error::failure_from("cannot keep changes waiting for the person", error)
    })?;
    let _lock = EditLock::acquire(state_dir, &path, fsx::LOCK_TIMEOUT)
        .map_err(|error| store_error(&path, "lock", error))?;
    let old = fsx::read_if_exists(&path).map_err(|error| store_error(&path, "read", error))?;
    let mut store: Store = match &old {
        None => Store::default(),
        Some(text) => serde_json::from_str(text).map_err(|error| {
            store_error(&path, "read", error).with_hint(format!(
                "it is mcpenv's own list of changes waiting for `mcpenv confirm`: remove `{}` and ask the agent again",
                path.display()
            ))
        })?,
    };
    let at = now();
    store.pending.retain(|pending| pending.expires > at);
    let done = change(&mut store.pending);
    store.schema_version = 1;
    let text =
        serde_json::to_string_pretty(&store).map_err(|error| store_error(&path, "write", error))?;
    if old.as_deref() != Some(text.as_str()) {
        // Nothing to verify: the file is mcpenv's own, under its lock.
        let written = fsx::write_atomic(&path, &[text.as_bytes()], NewMode::Exact(0o600), || {
            Ok::<(), std::convert::Infallible>(())
        })
        .map_err(|error| store_error(&path, "write", error))?;
        if let Err(never) = written {
            match never {}
        }
    }
    Ok(done)
}

/// A fresh id.
fn new_id() -> Result<String, Error> {
    let mut bytes = [0u8; ID_LENGTH];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::failure(format!("cannot make an id ({error})")))?;
    Ok(bytes
        .iter()
        .map(|byte| char::from(ID_LETTERS[usize::from(*byte) % ID_LETTERS.len()]))
        .collect())
}

/// Keeps the change `fingerprint` that `tool` would make waiting for the
/// person; returns it, with its id.
pub fn request(
    ctx: &Context,
    tool: &str,
    fingerprint: &str,
    summary: &str,
    changes: Vec<PendingFile>,
) -> Result<Pending, Error> {
    let id = new_id()?;
    let created = now();
    let pending = Pending {
        id,
        tool: tool.to_string(),
        fingerprint: fingerprint.to_string(),
        project: ctx.locations.project_root(),
        summary: summary.to_string(),
        changes,
        created,
        expires: created + WAITS.as_secs(),
        answer: Answer::Waiting,
    };
    let kept = pending.clone();
    with_store(ctx, move |waiting| {
        while waiting.len() >= KEPT {
            waiting.remove(0);
        }
        waiting.push(kept);
    })?;
    Ok(pending)
}

/// The changes waiting for the person's answer, oldest first.
pub fn waiting(ctx: &Context) -> Result<Vec<Pending>, Error> {
    with_store(ctx, |waiting| {
        waiting
            .iter()
            .filter(|pending| pending.answer == Answer::Waiting)
            .cloned()
            .collect()
    })
}

/// Records the person's answer to the change `id` they were shown with
/// the fingerprint `shown`; false when it no longer waits as shown.
pub fn answer(ctx: &Context, id: &str, shown: &str, yes: bool) -> Result<bool, Error> {
    with_store(ctx, |waiting| {
        let Some(pending) = waiting
            .iter_mut()
            .find(|pending| pending.id == id && pending.fingerprint == shown)
        else {
            return false;
        };
        if pending.answer != Answer::Waiting {
            return false;
        }
        pending.answer = if yes {
            Answer::Confirmed {
                fingerprint: shown.to_string(),
            }
        } else {
            Answer::Declined
        };
        true
    })
}

/// Spends the change `id` for `tool` making the change `fingerprint`:
/// `Ok` only when the person confirmed exactly that change. Any answer
/// spends it (a change that waits keeps waiting): a stale one cannot be
/// tried again once the files are put back.
pub fn redeem(
    ctx: &Context,
    id: &str,
    tool: &str,
    fingerprint: &str,
) -> Result<Result<(), Refusal>, Error> {
    with_store(ctx, |waiting| {
        let Some(index) = waiting.iter().position(|pending| pending.id == id) else {
            return Err(Refusal::Unknown);
        };
        let pending = &waiting[index];
        let same = pending.tool == tool && pending.fingerprint == fingerprint;
        let outcome = match &pending.answer {
            Answer::Declined => Err(Refusal::Declined),
            _ if !same => Err(Refusal::Stale),
            Answer::Waiting => return Err(Refusal::Waiting),
            Answer::Confirmed {
                fingerprint: agreed,
            } if agreed != fingerprint => Err(Refusal::Stale),
            Answer::Confirmed { .. } => Ok(()),
        };
        waiting.remove(index);
        outcome
    })
}

/// What `mcpenv confirm` did: each change shown and the person's answer.
#[derive(Debug, Serialize)]
pub struct ConfirmReport {
    /// The changes answered, in the order asked.
    pub answered: Vec<Answered>,
}

/// One change and the person's answer.
#[derive(Debug, Serialize)]
pub struct Answered {
    /// Its id.
    pub id: String,
    /// Whether the person agreed.
    pub confirmed: bool,
    /// False when it had lapsed or been answered elsewhere meanwhile.
    pub recorded: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_short_and_plain() {
        let id = new_id().unwrap();
        assert_eq!(id.len(), ID_LENGTH);
        assert!(id.bytes().all(|byte| ID_LETTERS.contains(&byte)));
        assert_ne!(id, new_id().unwrap());
    }
}
