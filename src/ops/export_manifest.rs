//! Which entries of which client file `mcpenv export` wrote, so `export
//! --prune` removes only those.
//!
//! Why a manifest in mcpenv's state dir and not a marker in the client's
//! file: clients validate their keys (VS Code's schema flags unknown ones,
//! Codex refuses a config it cannot read into its types), and a marker
//! would travel with a committed project file to teammates. The manifest,
//! `<state dir>/exports.json` (private, written atomically under mcpenv's
//! lock), is keyed by the client file's path with its symlinks resolved and
//! lists, per server, a fingerprint of the entry as written. An entry whose
//! fingerprint no longer matches was edited since and is never pruned; a
//! server mcpenv never wrote is not in the manifest, so never pruned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::{self, NewMode, TextEditError};
use crate::ops::Error;

/// The manifest's file name in mcpenv's state dir.
const FILE_NAME: &str = "exports.json";

/// Every client file mcpenv exported into, and what it wrote there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always 1.
    pub schema_version: u32,
    /// By the client file's path (symlinks resolved).
    #[serde(default)]
    pub files: BTreeMap<PathBuf, Managed>,
}

/// The entries mcpenv wrote into one client file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Managed {
    /// Server name → fingerprint of its entry as written.
    #[serde(default)]
    pub servers: BTreeMap<String, String>,
}

/// Where the manifest lives.
pub fn manifest_path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE_NAME)
}

/// The key of a client file: its path with the symlink chain resolved, so
/// two spellings of one file share their entries.
pub fn file_key(file: &Path) -> PathBuf {
    fsx::resolve_symlinks(file).unwrap_or_else(|_| file.to_path_buf())
}

/// A fingerprint of an entry: SHA-256 of its JSON with keys sorted, so a
/// client that reorders nothing but rewrites the layout still matches,
/// while any edit of a value does not. Holds no value of the entry.
pub fn fingerprint(entry: &Value) -> String {
    let digest = Sha256::digest(canonical(entry).to_string().as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(members) => {
            let sorted: BTreeMap<&String, Value> = members
                .iter()
                .map(|(key, member)| (key, canonical(member)))
                .collect();
            Value::Object(
                sorted
                    .into_iter()
                    .map(|(key, member)| (key.clone(), member))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Reads the manifest; none yet is an empty one.
pub fn load(state_dir: &Path) -> Result<Manifest, Error> {
    let path = manifest_path(state_dir);
    let text = fsx::read_if_exists(&path)
        .map_err(|error| Error::failure_from(format!("cannot read `{}`", path.display()), error))?;
    match text {
        None => Ok(Manifest {
            schema_version: 1,
            files: BTreeMap::new(),
        }),
        Some(text) => parse(&path, &text),
    }
}

fn parse(path: &Path, text: &str) -> Result<Manifest, Error> {
    serde_json::from_str(text).map_err(|error| {
        Error::failure_from(format!("cannot read `{}`", path.display()), error).with_hint(
            "delete it: mcpenv then treats no exported entry as its own until the next export",
        )
    })
}

/// Records `managed` as what mcpenv wrote into `file` (no entry when
/// empty), re-reading the manifest under mcpenv's lock so concurrent
/// exports to other files are kept.
pub fn record(edit: &Edit, state_dir: &Path, file: &Path, managed: &Managed) -> Result<(), Error> {
    // mcpenv's own bookkeeping is not part of what a dry run shows.
    edit.unshown(|| record_now(edit, state_dir, file, managed))
}

fn record_now(edit: &Edit, state_dir: &Path, file: &Path, managed: &Managed) -> Result<(), Error> {
    let path = manifest_path(state_dir);
    let key = file_key(file);
    let hint = format!(
        "`{}` must be a folder mcpenv can write (not a file, on a disk with room); run the export again once it is",
        state_dir.display()
    );
    fs_err::create_dir_all(state_dir).map_err(|error| {
        Error::failure_from(
            format!(
                "cannot create the folder `{}` for `{}`",
                state_dir.display(),
                path.display()
            ),
            error,
        )
        .with_hint(&hint)
    })?;
    edit.edit_text(state_dir, &path, NewMode::Exact(0o600), |old| {
        let mut manifest = match old {
            Some(text) => parse(&path, text)?,
            None => Manifest::default(),
        };
        manifest.schema_version = 1;
        let before = manifest.files.get(&key).cloned().unwrap_or_default();
        if before == *managed {
            return Ok(None);
        }
        if managed.servers.is_empty() {
            manifest.files.remove(&key);
        } else {
            manifest.files.insert(key.clone(), managed.clone());
        }
        let text = serde_json::to_string_pretty(&manifest)
            .map_err(|error| Error::failure_from("cannot record the export", error))?;
        Ok(Some(text + "\n"))
    })
    .map_err(|error| match error {
        TextEditError::Change(error) => error,
        TextEditError::Read(source) => {
            Error::failure_from(format!("cannot read `{}`", path.display()), source)
                .with_hint(&hint)
        }
        TextEditError::Write(source) => {
            Error::failure_from(format!("cannot write `{}`", path.display()), source)
                .with_hint(&hint)
        }
        TextEditError::Locked(_) | TextEditError::Contended => {
            Error::failure(format!("`{}` is busy; try again", path.display()))
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_ignore_key_order_but_not_values() {
        let one = json!({"command": "npx", "env": {"A": "1", "B": "2"}});
        let reordered = json!({"env": {"B": "2", "A": "1"}, "command": "npx"});
        let edited = json!({"command": "npx", "env": {"A": "1", "B": "3"}});
        assert_eq!(fingerprint(&one), fingerprint(&reordered));
        assert_ne!(fingerprint(&one), fingerprint(&edited));
        assert!(!fingerprint(&edited).contains("npx"));
    }

    #[test]
    fn records_are_kept_per_file_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let managed = |name: &str| Managed {
            servers: BTreeMap::from([(name.to_string(), "sha256:x".to_string())]),
        };
        record(
            &Edit::plain(),
            &state,
            &dir.path().join("a.json"),
            &managed("a"),
        )
        .unwrap();
        record(
            &Edit::plain(),
            &state,
            &dir.path().join("b.json"),
            &managed("b"),
        )
        .unwrap();
        let manifest = load(&state).unwrap();
        assert_eq!(manifest.files.len(), 2);
        assert_eq!(manifest.files[&dir.path().join("a.json")], managed("a"));
        let mode = std::fs::metadata(manifest_path(&state))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        record(
            &Edit::plain(),
            &state,
            &dir.path().join("a.json"),
            &Managed::default(),
        )
        .unwrap();
        assert_eq!(load(&state).unwrap().files.len(), 1);
    }
}
