//! The variables of the dotenv files mcpenv reads here, as secrets to
//! manage: where each value lives (plaintext, the keychain, 1Password,
//! dotenvx ciphertext) and which servers use it; removing one; moving a
//! value between a dotenv file and the keychain. What `mcpenv secrets`
//! does. No report ever holds a value; references (which name where a
//! value is kept) may be shown.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::{self, EnvSources};
use crate::config::inventory::Inventory;
use crate::config::store::Progress;
use crate::envfiles::dotenv::DotEnv;
use crate::envfiles::{self, EnvFilesError};
use crate::ops::secret_stores::{Accounts, SecretStore, keychain_error};
use crate::ops::shown_paths::shown_path;
use crate::ops::{Context, Error, Kind};
use crate::stores::keychain::{self, KeychainError};
use crate::stores::references::{self, Manager};

/// Where a variable's value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kept {
    /// The dotenv file holds the value itself.
    Plaintext,
    /// The OS keychain; the file holds `keychain:…`.
    Keychain,
    /// 1Password; the file holds `op://…`.
    #[serde(rename = "1password")]
    OnePassword,
    /// The file holds dotenvx ciphertext (`encrypted:…`).
    Dotenvx,
    /// The file assigns the empty string.
    Empty,
}

impl Kept {
    /// How `value`, as a dotenv file holds it, is kept.
    pub fn of(value: &str) -> Self {
        match references::manager_of(value) {
            Some(Manager::Keychain) => Self::Keychain,
            Some(Manager::OnePassword) => Self::OnePassword,
            Some(Manager::Dotenvx) => Self::Dotenvx,
            None if value.is_empty() => Self::Empty,
            None => Self::Plaintext,
        }
    }

    /// How a table names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plaintext => "plaintext",
            Self::Keychain => "keychain",
            Self::OnePassword => "1Password",
            Self::Dotenvx => "dotenvx ciphertext",
            Self::Empty => "empty",
        }
    }
}

/// One assignment of one dotenv file.
#[derive(Debug, Clone, Serialize)]
pub struct StoredVariable {
    /// The variable.
    pub name: String,
    /// Where its value lives.
    pub kept: Kept,
    /// The dotenv file.
    pub file: PathBuf,
    /// The file as tables show it (relative to the working directory).
    #[serde(skip)]
    pub file_shown: String,
    /// The reference the file holds (`keychain:…`, `op://…`): never a
    /// secret, and never the ciphertext.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The servers in effect whose configs reference it.
    pub servers: Vec<String>,
    /// The file of higher precedence that also assigns it, whose value
    /// wins; `None` for the value in effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<PathBuf>,
    /// [`Self::shadowed_by`] as tables show it.
    #[serde(skip)]
    pub shadowed_by_shown: Option<String>,
}

/// Every variable of the dotenv files mcpenv reads here.
#[derive(Debug, Serialize)]
pub struct SecretList {
    /// By name, then by precedence of their files.
    pub variables: Vec<StoredVariable>,
}

/// Lists every variable of the dotenv files `mcpenv run` loads here (each
/// `.env.local` and `.env` of the directories whose `.mcp.json` is in
/// effect, then the user's store), with the servers that use each.
pub fn list(ctx: &Context) -> Result<SecretList, Error> {
    let sources = ctx.env_sources()?;
    let inventory = Inventory::load_all(&ctx.locations);
    ctx.shield.learn_inventory(&inventory);
    let used_by: BTreeMap<String, Vec<String>> =
        check::check(&ctx.locations, &inventory, &sources, Vec::new)
            .variables
            .into_iter()
            .map(|variable| (variable.name, variable.servers))
            .collect();
    let files = sources.dotenv_files();
    let mut variables = Vec::new();
    // Hashed once per file: a `.env` may hold 100,000 names, and each is
    // looked up in every file of higher precedence.
    let values: Vec<Vec<(&str, &str)>> = files.iter().map(|file| file.values()).collect();
    let names: Vec<HashSet<&str>> = values
        .iter()
        .map(|pairs| pairs.iter().map(|(name, _)| *name).collect())
        .collect();
    for (rank, (file, pairs)) in files.iter().zip(&values).enumerate() {
        for &(name, value) in pairs {
            let kept = Kept::of(value);
            let shadowed_by = files[..rank]
                .iter()
                .zip(&names)
                .find(|(_, earlier)| earlier.contains(name))
                .map(|(earlier, _)| earlier.path.clone());
            variables.push((
                rank,
                StoredVariable {
                    name: name.to_string(),
                    kept,
                    file_shown: shown_path(ctx, &file.path),
                    file: file.path.clone(),
                    reference: matches!(kept, Kept::Keychain | Kept::OnePassword)
                        .then(|| value.to_string()),
                    servers: used_by.get(name).cloned().unwrap_or_default(),
                    shadowed_by_shown: shadowed_by.as_deref().map(|path| shown_path(ctx, path)),
                    shadowed_by,
                },
            ));
        }
    }
    variables.sort_by(|(a_rank, a), (b_rank, b)| a.name.cmp(&b.name).then(a_rank.cmp(b_rank)));
    Ok(SecretList {
        variables: variables
            .into_iter()
            .map(|(_, variable)| variable)
            .collect(),
    })
}

/// The dotenv files that assign `name`, highest precedence first; a usage
/// error, with the close name when there is one, when none does.
fn holders<'a>(
    ctx: &Context,
    sources: &'a EnvSources,
    name: &str,
) -> Result<Vec<&'a DotEnv>, Error> {
    let files = sources.dotenv_files();
    let holding: Vec<&DotEnv> = files
        .iter()
        .copied()
        .filter(|file| file.get(name).is_some())
        .collect();
    if !holding.is_empty() {
        return Ok(holding);
    }
    let mut known: Vec<&str> = files
        .iter()
        .flat_map(|file| file.entries().map(|(name, _)| name))
        .collect();
    known.sort_unstable();
    known.dedup();
    let hint = match crate::ops::names::closest(&known, name) {
        Some(close) => format!("a variable with a similar name exists: `{close}`"),
        None => format!(
            "see the variables mcpenv reads here with `{}`",
            ctx.command(&["secrets", "list"])
        ),
    };
    Err(Error::usage(format!(
        "no dotenv file mcpenv reads here sets `{}`",
        crate::mechanics::display::escape(name)
    ))
    .with_hint(hint))
}

/// Why `secrets rm` of a value the file held keeps no copies for undo.
const REMOVED: &str =
    "the files' previous bytes hold the value it removed, and no copy of it may stay behind";

/// What `secrets rm` did.
#[derive(Debug, Serialize)]
pub struct RemovedVariable {
    /// The variable.
    pub name: String,
    /// The dotenv file its line was removed from: the one whose value was
    /// in effect.
    pub file: PathBuf,
    /// [`Self::file`] as status lines show it.
    #[serde(skip)]
    pub file_shown: String,
    /// Where its value lived.
    pub kept: Kept,
    /// The keychain entry deleted with it, when the value was kept there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keychain_entry: Option<KeychainEntry>,
    /// Files of lower precedence that still set it (now in effect).
    pub still_set_in: Vec<PathBuf>,
    /// [`Self::still_set_in`] as status lines show them.
    #[serde(skip)]
    pub still_set_in_shown: Vec<String>,
}

/// A keychain entry (service `mcpenv`).
#[derive(Debug, Serialize)]
pub struct KeychainEntry {
    /// Its account.
    pub account: String,
    /// Whether it was there to delete.
    pub existed: bool,
}

/// Removes `name`'s assignments from the dotenv file whose value is in
/// effect and, when that value names a keychain entry, the entry.
///
/// The file's line goes first, then the entry: a failure between the two
/// leaves an entry no file names (harmless, and said), never a file naming
/// an entry that is gone, which would break `mcpenv run`. Before either,
/// the keychain is checked to take writes, so a locked or absent keychain
/// fails with nothing written.
pub fn remove(ctx: &Context, name: &str) -> Result<RemovedVariable, Error> {
    let sources = ctx.env_sources()?;
    let holding = holders(ctx, &sources, name)?;
    let file = holding[0];
    let value = file.get(name).unwrap_or_default();
    let kept = Kept::of(value);
    let account = keychain::account_of(value).map(str::to_string);
    if account.is_some() {
        crate::ops::secret_stores::check_keychain(&ctx.edit)?;
    }
    if crate::ops::secret_stores::holds_secret(name, value) {
        // Removed on purpose: no copy of it stays behind for undo.
        ctx.edit.keep_no_copies_of(REMOVED, value);
    }
    let mut progress = Progress::default();
    envfiles::remove_value_with(
        &ctx.edit,
        &file.path,
        &ctx.locations.state_dir,
        name,
        &mut progress,
    )
    .map_err(edit_error)?;
    let keychain_entry = match account {
        Some(account) => {
            let existed = keychain::delete(&ctx.edit, &account).map_err(|error| {
                Error::failure(format!(
                    "removed `{name}` from `{}`, but its keychain entry `{account}` could not be deleted: {error}",
                    shown_path(ctx, &file.path)
                ))
                .with_hint(error.hint())
            })?;
            Some(KeychainEntry { account, existed })
        }
        None => None,
    };
    let still_set_in: Vec<PathBuf> = holding[1..].iter().map(|file| file.path.clone()).collect();
    Ok(RemovedVariable {
        name: name.to_string(),
        file_shown: shown_path(ctx, &file.path),
        file: file.path.clone(),
        kept,
        keychain_entry,
        still_set_in_shown: still_set_in
            .iter()
            .map(|path| shown_path(ctx, path))
            .collect(),
        still_set_in,
    })
}

/// What `secrets move` did.
#[derive(Debug, Serialize)]
pub struct MovedVariable {
    /// The variable.
    pub name: String,
    /// The dotenv file whose line was rewritten (or would have been).
    pub file: PathBuf,
    /// [`Self::file`] as status lines show it.
    #[serde(skip)]
    pub file_shown: String,
    /// Where the value is now.
    pub to: SecretStore,
    /// Whether anything changed: `false` when it was there already.
    pub moved: bool,
    /// The keychain account it was moved into or out of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// Moves `name`'s value (in the dotenv file whose value is in effect)
/// between that file and the keychain.
///
/// Into the keychain: the entry is written first, then the line becomes
/// its reference, so the file never names an entry that does not hold the
/// value. Out of it: the value is read, the line becomes the value (the
/// file must be private), then the entry is deleted, so a failure leaves
/// a copy in the keychain, never a value in neither place.
pub fn move_to(ctx: &Context, name: &str, to: SecretStore) -> Result<MovedVariable, Error> {
    let sources = ctx.env_sources()?;
    let file = holders(ctx, &sources, name)?[0];
    let value = file.get(name).unwrap_or_default();
    let kept = Kept::of(value);
    let file_shown = shown_path(ctx, &file.path);
    let done = |moved: bool, account: Option<String>| MovedVariable {
        name: name.to_string(),
        file: file.path.clone(),
        file_shown: file_shown.clone(),
        to,
        moved,
        account,
    };
    match (kept, to) {
        (Kept::OnePassword | Kept::Dotenvx, _) => Err(cannot_move(ctx, name, &file.path, kept)),
        (Kept::Keychain, SecretStore::Keychain)
        | (Kept::Plaintext | Kept::Empty, SecretStore::Dotenv) => {
            Ok(done(false, keychain::account_of(value).map(str::to_string)))
        }
        (Kept::Empty, SecretStore::Keychain) => Err(Error::failure(format!(
            "`{name}` in `{file_shown}` is empty; there is no value to keep in the keychain"
        ))
        .with_hint(format!(
            "set a value first (`{}`), or remove it with `{}`",
            ctx.command(&["onboard", "--to", "keychain"]),
            ctx.command(&["secrets", "rm", name])
        ))),
        (Kept::Plaintext, SecretStore::Keychain) => {
            let account = Accounts::default().account(ctx, &file.path, name);
            into_keychain(ctx, name, &file.path, value, &account)?;
            Ok(done(true, Some(account)))
        }
        (Kept::Keychain, SecretStore::Dotenv) => {
            let account = keychain::account_of(value).unwrap_or_default().to_string();
            out_of_keychain(ctx, name, &file.path, &account)?;
            Ok(done(true, Some(account)))
        }
    }
}

/// Keeps `value` under `account`, then writes its reference in place of
/// the value. An entry that holds another value is refused: it may be
/// another clone's.
fn into_keychain(
    ctx: &Context,
    name: &str,
    path: &Path,
    value: &str,
    account: &str,
) -> Result<(), Error> {
    let created = match keychain::get(account) {
        Ok(kept) if kept == value => false,
        Ok(_) => {
            return Err(Error::failure(format!(
                "the keychain already holds a different value for `{name}` (account `{account}`); nothing was changed"
            ))
            .with_hint(
                "another clone of this repository may use it; delete the entry in your keychain app (service `mcpenv`) if it is stale, then run the command again",
            ));
        }
        Err(KeychainError::NoEntry { .. }) => {
            keychain::set(&ctx.edit, account, value)
                .map_err(|error| keychain_error(name, &error))?;
            true
        }
        Err(error) => return Err(keychain_error(name, &error)),
    };
    // Also when the keychain held it already (and nothing was set).
    ctx.edit.keep_no_copies_of(keychain::NO_COPIES, value);
    let reference = keychain::reference(account);
    let mut progress = Progress::default();
    // A reference is no secret: a file others can read may hold it.
    envfiles::save_values_with(
        &ctx.edit,
        path,
        &ctx.locations.state_dir,
        &[(name.to_string(), reference)],
        true,
        &mut progress,
    )
    .map_err(|error| {
        if created {
            // The file still holds the value: the new entry is a stray copy.
            let _ = keychain::delete(&ctx.edit, account);
        }
        edit_error(error)
    })
}

/// Reads the value kept under `account`, writes it in place of the
/// reference (the file must be private), then deletes the entry.
fn out_of_keychain(ctx: &Context, name: &str, path: &Path, account: &str) -> Result<(), Error> {
    envfiles::check_private(path, false).map_err(edit_error)?;
    let secret = keychain::get(account).map_err(|error| {
        Error::failure(format!(
            "cannot read `{name}` from the keychain: {error}; nothing was changed"
        ))
        .with_hint(error.hint())
    })?;
    ctx.shield.learn(|redactor| redactor.learn(&secret));
    let mut progress = Progress::default();
    envfiles::save_values_with(
        &ctx.edit,
        path,
        &ctx.locations.state_dir,
        &[(name.to_string(), secret)],
        false,
        &mut progress,
    )
    .map_err(edit_error)?;
    keychain::delete(&ctx.edit, account).map_err(|error| {
        Error::failure(format!(
            "moved `{name}` into `{}`, but its keychain entry `{account}` could not be deleted: {error}",
            shown_path(ctx, path)
        ))
        .with_hint(error.hint())
    })?;
    Ok(())
}

/// The error for a value kept by 1Password or dotenvx, which mcpenv does
/// not move.
fn cannot_move(ctx: &Context, name: &str, path: &Path, kept: Kept) -> Error {
    let (why, hint) = match kept {
        Kept::OnePassword => (
            "is a 1Password reference: the value is kept in 1Password, which mcpenv reads but does not write",
            "keep it in 1Password, or replace the reference by hand",
        ),
        _ => (
            "is dotenvx ciphertext, which only dotenvx can decrypt",
            "decrypt it with `dotenvx decrypt` first, then move it",
        ),
    };
    Error::failure(format!(
        "`{name}` in `{}` {why}; nothing was changed",
        shown_path(ctx, path)
    ))
    .with_hint(hint)
}

/// The error for a dotenv edit that failed: nothing was written.
fn edit_error(error: EnvFilesError) -> Error {
    let hint = match &error {
        EnvFilesError::ReadableByOthers { path, .. } => format!(
            "make it private with `chmod 600 {}`, then run the command again; nothing was changed",
            path.display()
        ),
        EnvFilesError::Entangled { path, .. } | EnvFilesError::Malformed { path, .. } => {
            format!("edit `{}` by hand; nothing was changed", path.display())
        }
        _ => "nothing was changed; fix the problem and run the command again".to_string(),
    };
    Error::new(Kind::Failure, Box::new(error)).with_hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_kept_somewhere() {
        assert_eq!(Kept::of("ghp_abc"), Kept::Plaintext);
        assert_eq!(Kept::of(""), Kept::Empty);
        assert_eq!(
            Kept::of("keychain:github.com/acme/widgets/TOKEN"),
            Kept::Keychain
        );
        assert_eq!(Kept::of("op://Engineering/GitHub/token"), Kept::OnePassword);
        assert_eq!(Kept::of("encrypted:BDx9"), Kept::Dotenvx);
    }
}
