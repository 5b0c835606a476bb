//! The OS keychain as a store of secrets: macOS Keychain, Windows
//! Credential Manager, the Secret Service on Linux (GNOME Keyring,
//! KeePassXC), through the `keyring` crate.
//!
//! A value kept there is named by a reference in the dotenv file that
//! would otherwise hold it: `GITHUB_TOKEN=keychain:github.com/acme/widgets/GITHUB_TOKEN`.
//! The entry's service is `mcpenv`; its account is the reference without
//! `keychain:`, made of the project's identity and the variable's name:
//! - a project whose git repository has an `origin` remote is named by the
//!   remote, host and path (`github.com/acme/widgets`), so two clones of
//!   one repository on one machine share their values; a `.env` in a
//!   sub-directory (a monorepo's service) adds that directory
//!   (`github.com/acme/mono/services/api`);
//! - a project without a remote is named by its directory's full path;
//! - the user's own store (the secrets of user-scope servers) is `user`.
//!
//! Nothing here falls back to plaintext: a keychain that is absent or
//! locked is an error saying so.

use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::mechanics::edits::Edit;

/// The service of every entry mcpenv makes.
pub const SERVICE: &str = "mcpenv";

/// Why an edit that writes the keychain keeps no copies for undo.
pub const NO_COPIES: &str = "the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind";

/// Why an edit that deletes a keychain entry keeps none either.
const NO_COPIES_DELETE: &str =
    "the keychain entry it deleted is kept nowhere, so undo could put back only the files";

/// How a dotenv value names a keychain entry.
pub const PREFIX: &str = "keychain:";

/// The project part of the accounts of the user's own store.
pub const USER: &str = "user";

/// Why the keychain could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KeychainError {
    /// There is no entry for the account.
    #[error("the keychain has no entry `{account}` (service `mcpenv`)")]
    NoEntry {
        /// The account.
        account: String,
    },
    /// The keychain is there but locked, or access was refused.
    #[error("the keychain is locked or refused access")]
    Locked {
        /// What the platform said.
        detail: String,
    },
    /// There is no keychain to talk to (no Secret Service in this session).
    #[error("no keychain is available ({detail})")]
    Unavailable {
        /// What the platform said.
        detail: String,
    },
    /// Anything else the platform reported.
    #[error("the keychain failed: {detail}")]
    Failed {
        /// What the platform said.
        detail: String,
    },
}

impl KeychainError {
    /// The next step.
    pub fn hint(&self) -> String {
        match self {
            Self::NoEntry { account } => format!(
                "save a value under it again (`mcpenv onboard --to keychain`), or look for the entry with service `mcpenv` and account `{account}` in your keychain"
            ),
            Self::Locked { .. } => "unlock the keychain (log in to the desktop session, or open your keychain app and unlock it), then run the command again".to_string(),
            Self::Unavailable { .. } => if cfg!(target_os = "linux") {
                "start a Secret Service in this session (GNOME Keyring or KeePassXC; a desktop login starts one), or keep the value in `.env` instead (`--to dotenv`)".to_string()
            } else {
                "check that the system keychain can be used from this session, or keep the value in `.env` instead (`--to dotenv`)".to_string()
            },
            Self::Failed { .. } => "run the command again; if it fails again, keep the value in `.env` instead (`--to dotenv`)".to_string(),
        }
    }
}

/// The reference a dotenv file holds for `account`.
pub fn reference(account: &str) -> String {
    format!("{PREFIX}{account}")
}

/// The account a dotenv value names, when it is a keychain reference.
pub fn account_of(value: &str) -> Option<&str> {
    value
        .strip_prefix(PREFIX)
        .filter(|account| !account.is_empty() && !account.contains(char::is_whitespace))
}

/// The account of `name` for a project part (see the module's comment).
pub fn account(project: &str, name: &str) -> String {
    format!("{project}/{name}")
}

/// How long the keychain may take to answer. zbus sets no deadline of its
/// own, so a Secret Service that hangs would hang mcpenv; a desktop's
/// unlock dialog gets this long to be answered.
const DEADLINE: Duration = Duration::from_secs(60);

/// The value kept for `account`.
pub fn get(account: &str) -> Result<String, KeychainError> {
    let account = account.to_string();
    with_deadline(move || {
        entry(&account)?
            .get_password()
            .map_err(|error| classify(&account, error))
    })
}

/// Keeps `value` for `account`, replacing what it held; a preview `edit`
/// only says it would.
pub fn set(edit: &Edit, account: &str, value: &str) -> Result<(), KeychainError> {
    edit.change_elsewhere(
        || {
            let what =
                format!("keep a value in the system keychain as `{account}` (service `{SERVICE}`)");
            (Some(what), ())
        },
        || {
            edit.keep_no_copies_of(NO_COPIES, value);
            let (account, value) = (account.to_string(), value.to_string());
            with_deadline(move || {
                entry(&account)?
                    .set_password(&value)
                    .map_err(|error| classify(&account, error))
            })
        },
    )
}

/// Deletes the entry for `account`; whether there was one. A preview
/// `edit` only says it would (when there is one).
pub fn delete(edit: &Edit, account: &str) -> Result<bool, KeychainError> {
    edit.change_elsewhere(
        || {
            let exists = get(account).is_ok();
            let what = exists
                .then(|| format!("delete the keychain entry `{account}` (service `{SERVICE}`)"));
            (what, exists)
        },
        || {
            edit.keep_no_copies(NO_COPIES_DELETE);
            let account = account.to_string();
            with_deadline(move || match entry(&account)?.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(error) => Err(classify(&account, error)),
            })
        },
    )
}

/// Runs `call` on a thread of its own and gives up after [`DEADLINE`]
/// (the thread is left to the end of the process).
fn with_deadline<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, KeychainError> + Send + 'static,
) -> Result<T, KeychainError> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(call());
    });
    receiver.recv_timeout(DEADLINE).unwrap_or_else(|_| {
        Err(KeychainError::Unavailable {
            detail: format!("it did not answer within {} s", DEADLINE.as_secs()),
        })
    })
}

fn entry(account: &str) -> Result<keyring::Entry, KeychainError> {
    keyring::Entry::new(SERVICE, account).map_err(|error| match error {
        keyring::Error::NoDefaultStore => KeychainError::Unavailable {
            detail: match keyring::Entry::store_status() {
                Err(error) => one_line(&error.to_string()),
                Ok(()) => "no credential store".to_string(),
            },
        },
        error => classify(account, error),
    })
}

fn classify(account: &str, error: keyring::Error) -> KeychainError {
    let detail = one_line(&error.to_string());
    match error {
        keyring::Error::NoEntry => KeychainError::NoEntry {
            account: account.to_string(),
        },
        keyring::Error::NoStorageAccess(_) => KeychainError::Locked { detail },
        keyring::Error::NoDefaultStore => KeychainError::Unavailable { detail },
        keyring::Error::PlatformFailure(_) if unreachable_service(&detail) => {
            KeychainError::Unavailable { detail }
        }
        _ => KeychainError::Failed { detail },
    }
}

/// Whether a platform failure says no Secret Service answers: no session
/// bus, or nothing on it owns `org.freedesktop.secrets`.
fn unreachable_service(detail: &str) -> bool {
    [
        "ServiceUnknown",
        "org.freedesktop.secrets",
        "No such file or directory",
        "Connection refused",
        "DBUS_SESSION_BUS_ADDRESS",
        "was not provided by any .service files",
        "NameHasNoOwner",
    ]
    .iter()
    .any(|sign| detail.contains(sign))
}

/// Platform messages can run over several lines; errors are one line.
fn one_line(text: &str) -> String {
    crate::mechanics::display::escape(&text.split_whitespace().collect::<Vec<_>>().join(" "))
        .into_owned()
}

/// The project part of the accounts for the dotenv files of `dir`: its git
/// repository's `origin` remote and the path below the repository's top,
/// or the directory's full path without a remote.
pub fn project_part(dir: &Path) -> String {
    let dir = dunce::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let git = |args: &[&str]| -> Option<String> {
        let output = crate::mechanics::git::command(&dir)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(output.stdout).ok()?;
        let text = text.trim();
        (output.status.success() && !text.is_empty()).then(|| text.to_string())
    };
    let remote = git(&["config", "--get", "remote.origin.url"]).and_then(|url| remote_name(&url));
    let Some(remote) = remote else {
        return dir.display().to_string();
    };
    let below = git(&["rev-parse", "--show-toplevel"])
        .map(|top| dunce::canonicalize(&top).unwrap_or_else(|_| top.into()))
        .and_then(|top| dir.strip_prefix(top).ok().map(Path::to_path_buf))
        .filter(|below| !below.as_os_str().is_empty());
    match below {
        Some(below) => format!("{remote}/{}", below.display()),
        None => remote,
    }
}

/// A remote URL as `host/path`, without scheme, user, port or `.git`:
/// `git@github.com:acme/widgets.git`, `https://github.com/acme/widgets`
/// and `ssh://git@github.com:22/acme/widgets.git` are one repository.
pub fn remote_name(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((_, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = host.split(':').next().unwrap_or(host);
        (host.to_string(), path.to_string())
    } else if let Some((authority, path)) = url.split_once(':') {
        // scp-like `user@host:path`; a local path has no host.
        if authority.contains('/') {
            return None;
        }
        let host = authority.rsplit('@').next().unwrap_or(authority);
        (host.to_string(), path.to_string())
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{path}", host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn one_repository_has_one_name_whatever_the_url() {
        for url in [
            "git@github.com:acme/widgets.git",
            "https://github.com/acme/widgets",
            "https://github.com/acme/widgets.git/",
            "ssh://git@GitHub.com:22/acme/widgets.git",
            "https://token@github.com/acme/widgets.git",
        ] {
            assert_eq!(
                remote_name(url).as_deref(),
                Some("github.com/acme/widgets"),
                "{url}"
            );
        }
        assert_eq!(remote_name("/srv/git/widgets.git"), None);
        assert_eq!(remote_name("../widgets"), None);
        assert_eq!(remote_name("file:///srv/git/widgets.git"), None);
    }

    #[test]
    fn a_project_is_named_by_its_remote_and_the_directory_below_its_top() {
        let temp = tempfile::tempdir().unwrap();
        let top = temp.path().join("mono");
        let service = top.join("services/api");
        std::fs::create_dir_all(&service).unwrap();
        assert_eq!(
            project_part(&top),
            dunce::canonicalize(&top).unwrap().display().to_string(),
            "without git, the directory's path"
        );
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .args(args)
                .current_dir(&top)
                .stderr(Stdio::null())
                .status();
            status.is_ok_and(|status| status.success())
        };
        if !git(&["init", "-q"]) {
            eprintln!("skipping the git half: git is not installed");
            return;
        }
        assert_eq!(
            project_part(&top),
            dunce::canonicalize(&top).unwrap().display().to_string(),
            "a repository without a remote: still the path"
        );
        assert!(git(&[
            "remote",
            "add",
            "origin",
            "https://x-access-token:ghs_abc@github.com/Acme/Mono.git"
        ]));
        assert_eq!(project_part(&top), "github.com/Acme/Mono");
        assert_eq!(project_part(&service), "github.com/Acme/Mono/services/api");
    }

    #[test]
    fn references_name_their_account() {
        let account = account("github.com/acme/widgets", "GITHUB_TOKEN");
        assert_eq!(
            reference(&account),
            "keychain:github.com/acme/widgets/GITHUB_TOKEN"
        );
        assert_eq!(account_of(&reference(&account)), Some(account.as_str()));
        assert_eq!(account_of("keychain:"), None);
        assert_eq!(account_of("keychain: x"), None);
        assert_eq!(account_of("ghp_abc"), None);
    }
}
