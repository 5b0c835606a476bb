//! Which dotenv values a process mcpenv starts may receive: the rule that
//! keeps a cloned repository's words out of the person's processes.
//!
//! - A dotenv file the repository ships (tracked by git) is the
//!   repository's, not the person's: none of its values is handed to any
//!   process until the person trusts the folder (Claude Code's trust dialog,
//!   or `mcpenv approve --trust`). A `.env` written after the clone (by
//!   `onboard`, `extract` or by hand) is untracked and the person's own. A
//!   folder outside git cannot tell the two apart; its files count as the
//!   person's.
//! - A server mcpenv starts itself (`probe`, `doctor --probe`, `serve`'s
//!   `probe_servers`) gets the environment Claude Code would hand it (the
//!   process environment and its entry's `env`) plus, from the dotenv files,
//!   only the variables its own entry references: a `NODE_OPTIONS` or
//!   `LD_PRELOAD` in a `.env` never reaches a server that did not ask for it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::EnvSources;
use crate::config::approval;
use crate::config::locate::Locations;

/// A project dotenv file whose values are not handed on, and why.
#[derive(Debug, Clone, Serialize)]
pub struct HeldFile {
    /// The file.
    pub path: PathBuf,
    /// What to do about it, one sentence.
    pub hint: String,
}

/// The project dotenv files (`.env`, `.env.local` of every directory whose
/// `.mcp.json` is in effect) that the repository ships, in a folder the
/// person has not trusted. Empty outside git, and when the folder is
/// trusted. Asks git only about files that exist.
pub fn held_files(locations: &Locations) -> Vec<HeldFile> {
    if locations.git_root.is_none() {
        return Vec::new();
    }
    let candidates: Vec<PathBuf> = locations
        .env_dirs()
        .into_iter()
        .flat_map(|dir| [dir.join(".env.local"), dir.join(".env")])
        .filter(|path| path.is_file())
        .collect();
    let tracked: Vec<PathBuf> = candidates
        .into_iter()
        .filter(|path| approval::tracked_by_git(path))
        .collect();
    // Reading the trust costs a parse of `~/.claude.json`: only when needed.
    if tracked.is_empty() || approval::project_trusted(locations) {
        return Vec::new();
    }
    tracked
        .into_iter()
        .map(|path| HeldFile {
            hint: held_hint(&path, locations),
            path,
        })
        .collect()
}

fn held_hint(path: &Path, locations: &Locations) -> String {
    let shown = path
        .strip_prefix(locations.project_root())
        .unwrap_or(path)
        .display()
        .to_string();
    format!(
        "`{shown}` is committed to the repository, so its values are the repository's, not yours; mcpenv hands none of them to a process until you trust this folder (`mcpenv approve --trust`). If the values are yours, stop tracking it: `git rm --cached {shown}`"
    )
}

/// The values of the variables `wanted` that the dotenv files may hand
/// on, highest precedence winning, as [`EnvSources::file_values`] less the
/// held files. Borrowed, and only for the names asked: a `.env` of
/// 100,000 lines costs one look-up per line, no copy.
pub fn handed_values<'s>(
    sources: &'s EnvSources,
    held: &[HeldFile],
    wanted: &HashSet<&str>,
) -> HashMap<&'s str, &'s str> {
    let mut values = HashMap::new();
    if wanted.is_empty() {
        return values;
    }
    for (_, name, value) in handed_entries(sources, held) {
        if wanted.contains(name) {
            values.insert(name, value);
        }
    }
    values
}

/// [`handed_values`], each with the file it comes from (whose say a
/// reference in it has: [`crate::stores::references::confirmed`]).
pub fn handed_values_with_files(
    sources: &EnvSources,
    held: &[HeldFile],
) -> BTreeMap<String, (String, PathBuf)> {
    let mut values = BTreeMap::new();
    for (file, name, value) in handed_entries(sources, held) {
        values.insert(name.to_owned(), (value.to_owned(), file.to_path_buf()));
    }
    values
}

/// Every entry of the dotenv files that are not held, lowest precedence
/// first (so a map filled in this order keeps the winner), with its file.
fn handed_entries<'s, 'h>(
    sources: &'s EnvSources,
    held: &'h [HeldFile],
) -> impl Iterator<Item = (&'s Path, &'s str, &'s str)> + use<'s, 'h> {
    sources
        .dotenv_files()
        .into_iter()
        .rev()
        .filter(|file| !held.iter().any(|held| held.path == file.path))
        .flat_map(|file| {
            file.entries()
                .map(move |(name, value)| (file.path.as_path(), name, value))
        })
}
