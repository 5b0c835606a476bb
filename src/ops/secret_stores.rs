//! Where the secrets a command saves are kept: in the dotenv file itself,
//! or in the OS keychain with the dotenv file holding only a reference
//! (`keychain:…`, see [`crate::stores::keychain`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::mechanics::edits::Edit;
use crate::ops::{Context, Error};
use crate::secrets::extraction_plan::ExtractionPlan;
use crate::stores::keychain::{self, KeychainError};
use crate::stores::references::ResolveError;

/// Where a saved secret is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecretStore {
    /// In the dotenv file (mode 0600, never committed).
    #[default]
    Dotenv,
    /// In the OS keychain; the dotenv file names its entry.
    Keychain,
}

/// The keychain accounts of the variables saved to dotenv files, each
/// file's project named once (naming it asks git).
#[derive(Debug, Default)]
pub struct Accounts {
    projects: HashMap<PathBuf, String>,
}

impl Accounts {
    /// The account of `name` when saved for `env_file`: the user's store
    /// is `user`, a project's `.env` is named by its project.
    pub fn account(&mut self, ctx: &Context, env_file: &Path, name: &str) -> String {
        if env_file == ctx.user_env_file() {
            return keychain::account(keychain::USER, name);
        }
        let dir = env_file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let project = self
            .projects
            .entry(dir)
            .or_insert_with_key(|dir| keychain::project_part(dir));
        keychain::account(project, name)
    }
}

/// The error for `name`, whose reference in `place` (a file as messages
/// name it) gave no value: what went wrong and the next step.
pub fn unresolved(name: &str, place: &str, error: ResolveError) -> Error {
    Error::failure(format!("`{name}` in {place} {}", error.message)).with_hint(error.hint)
}

/// The error for a value the keychain would not take or give.
pub fn keychain_error(name: &str, error: &KeychainError) -> Error {
    Error::failure(format!("cannot keep `{name}` in the keychain: {error}")).with_hint(error.hint())
}

/// Fails unless the keychain takes a value, before anyone types a secret
/// for it: an entry is written and deleted (reading alone cannot tell a
/// locked keychain from an empty one).
pub fn check_keychain(edit: &Edit) -> Result<(), Error> {
    let account = keychain::account(keychain::USER, "mcpenv-write-check");
    let unusable = |error: KeychainError| {
        Error::failure(format!("cannot use the keychain: {error}")).with_hint(error.hint())
    };
    edit.trial_write(
        // A dry run writes no probe entry: a read tells a missing keychain
        // (not a locked one) apart.
        || match keychain::get(&account) {
            Ok(_) | Err(KeychainError::NoEntry { .. }) => Ok(()),
            Err(error) => Err(unusable(error)),
        },
        || {
            keychain::set(edit, &account, "mcpenv checks that it can write here")
                .and_then(|()| keychain::delete(edit, &account).map(|_| ()))
                .map_err(unusable)
        },
    )
}

/// Keeps each value in the keychain and gives the pairs to write into
/// `env_file` instead: the names with their references. Nothing is
/// written to any file.
pub fn keep_in_keychain(
    ctx: &Context,
    accounts: &mut Accounts,
    env_file: &Path,
    values: &[(String, String)],
) -> Result<Vec<(String, String)>, Error> {
    values
        .iter()
        .map(|(name, value)| {
            let account = accounts.account(ctx, env_file, name);
            keychain::set(&ctx.edit, &account, value)
                .map_err(|error| keychain_error(name, &error))?;
            Ok((name.clone(), keychain::reference(&account)))
        })
        .collect()
}

/// Rewrites an extraction plan for `store`: with the keychain, each value
/// is kept there (when `keep`; a preview only names the entries) and the
/// plan writes its reference into the dotenv file instead.
pub fn store_plan(
    ctx: &Context,
    plan: &mut ExtractionPlan,
    store: SecretStore,
    keep: bool,
) -> Result<(), Error> {
    if store == SecretStore::Dotenv {
        return Ok(());
    }
    let mut accounts = Accounts::default();
    for variable in &mut plan.new_variables {
        let account = accounts.account(ctx, &variable.file, &variable.name);
        if keep {
            keychain::set(&ctx.edit, &account, &variable.value)
                .map_err(|error| keychain_error(&variable.name, &error))?;
        }
        variable.value = keychain::reference(&account);
    }
    Ok(())
}

/// Whether the dotenv assignment `name=value` holds a literal secret: a
/// value that is no reference, under a name or of a shape `scan` takes
/// for a secret (an entry's `env` is scanned by the same rules).
pub fn holds_secret(name: &str, value: &str) -> bool {
    if value.is_empty() || crate::stores::references::manager_of(value).is_some() {
        return false;
    }
    let entry = crate::config::model::ServerEntry::from_value(
        serde_json::json!({ "env": { name: value } }),
    );
    crate::secrets::is_secret_name(name) || !crate::secrets::scan_entry(&entry).is_empty()
}
