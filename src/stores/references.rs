//! Values in a dotenv file that say where a secret is kept instead of
//! holding it: `op://Engineering/GitHub/token` (1Password),
//! `keychain:github.com/acme/widgets/GITHUB_TOKEN` (the OS keychain), and
//! dotenvx's `encrypted:…`, which only dotenvx can turn into the value.
//!
//! Each kind is one row of [`SCHEMES`]: how to recognise it and how to
//! resolve it. Commands never look at the text of a reference; adding a
//! password manager is one more row.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde::Serialize;

use crate::stores::keychain;

/// Where a reference says the value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Manager {
    /// 1Password, read through its CLI (`op read`).
    #[serde(rename = "1password")]
    OnePassword,
    /// The OS keychain.
    Keychain,
    /// dotenvx's ciphertext, which `dotenvx run` decrypts.
    Dotenvx,
}

impl Manager {
    /// Where a value it holds is said to be: "from 1Password", "set in
    /// the keychain".
    pub fn source(self) -> &'static str {
        match self {
            Self::OnePassword => "from 1Password",
            Self::Keychain => "set in the keychain",
            Self::Dotenvx => "encrypted by dotenvx",
        }
    }

    /// Whether a team can commit such a reference in `.env.example`: it
    /// names the same secret for everyone with access (a keychain entry is
    /// one person's, ciphertext needs one key).
    pub fn shared(self) -> bool {
        matches!(self, Self::OnePassword)
    }
}

/// One kind of reference.
struct Scheme {
    manager: Manager,
    /// What every reference of the kind starts with: a value without it
    /// is no such reference, known without calling `matches` (the test of
    /// each of a 100,000-line `.env`'s values).
    prefix: &'static str,
    matches: fn(&str) -> bool,
    resolve: fn(&str) -> Result<String, ResolveError>,
}

/// Every kind of reference mcpenv resolves.
const SCHEMES: &[Scheme] = &[
    Scheme {
        manager: Manager::OnePassword,
        prefix: OP_PREFIX,
        matches: is_op_reference,
        resolve: op_read,
    },
    Scheme {
        manager: Manager::Keychain,
        prefix: keychain::PREFIX,
        matches: |value| keychain::account_of(value).is_some(),
        resolve: keychain_read,
    },
    Scheme {
        manager: Manager::Dotenvx,
        prefix: DOTENVX_PREFIX,
        matches: is_dotenvx_ciphertext,
        resolve: |_| {
            Err(ResolveError {
            message: "is encrypted by dotenvx; mcpenv does not decrypt it".to_string(),
            hint: "start through dotenvx, which decrypts it into the environment that mcpenv passes on: `dotenvx run -- mcpenv run -- …`".to_string(),
        })
        },
    },
];

/// The manager a value refers to, when it is a reference.
pub fn manager_of(value: &str) -> Option<Manager> {
    scheme_of(value).map(|scheme| scheme.manager)
}

fn scheme_of(value: &str) -> Option<&'static Scheme> {
    SCHEMES
        .iter()
        .find(|scheme| value.starts_with(scheme.prefix) && (scheme.matches)(value))
}

/// Why a reference gave no value: a sentence that follows the variable's
/// name ("`X` in `.env` …"), and the next step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ResolveError {
    /// What went wrong, never holding a value.
    pub message: String,
    /// The next step.
    pub hint: String,
}

/// Whether the reference `value`, which the dotenv file `file` gives
/// `name`, may be read: `Err` (saying why, and the next step) when `file`
/// is one git tracks. A repository wrote such a file, and may point a
/// variable at any item of the person's vault or keychain
/// (`op://Private/Bank/password`), which would then reach its servers. A
/// reference is the person's once it is in a file of their own (one git
/// does not track: `mcpenv onboard` copies the ones of `.env.example` the
/// person agrees to into `.env`); that copy is the confirmation. A value
/// that is no reference, and a file outside git, are always fine.
pub fn confirmed(file: &Path, name: &str, value: &str) -> Result<(), ResolveError> {
    if manager_of(value).is_none() || !crate::mechanics::git_files::tracked(file) {
        return Ok(());
    }
    Err(unconfirmed(file, name, value))
}

/// The error for a reference in a file git tracks, read by nothing.
fn unconfirmed(file: &Path, name: &str, value: &str) -> ResolveError {
    let local = file.with_file_name(".env.local");
    ResolveError {
        message: format!(
            "is a reference (`{}`) in a file git tracks: the repository chose it, and mcpenv reads no such reference before you make it yours",
            crate::mechanics::display::escape(value)
        ),
        hint: format!(
            "if it is yours to use, copy the line `{}=…` into `{}` (which git must not track), or set your own value there",
            crate::mechanics::display::escape(name),
            local.display()
        ),
    }
}

/// What learns each secret a reference resolves to, so no output shows it
/// whole (the shield of `crate::secrets::redact`, which sits above this module).
pub trait LearnsSecrets: Send + Sync {
    /// Learns `secret`.
    fn learn_secret(&self, secret: &str);
}

/// Resolves references, each once per run however many variables name
/// it; every value it reads is taught to the shield before anyone can
/// show it.
pub struct Resolver {
    shield: Arc<dyn LearnsSecrets>,
    known: HashMap<String, Result<String, ResolveError>>,
    /// Whether git tracks each dotenv file asked about (asked once).
    tracked: HashMap<PathBuf, bool>,
}

impl Resolver {
    /// A resolver teaching `shield`.
    pub fn new(shield: Arc<dyn LearnsSecrets>) -> Self {
        Self {
            shield,
            known: HashMap::new(),
            tracked: HashMap::new(),
        }
    }

    /// [`Self::resolve`] for the value `file` gives `name` (`None`: the
    /// process environment's, the person's own): a reference in a file git
    /// tracks is refused unread (see [`confirmed`]).
    pub fn resolve_from(
        &mut self,
        file: Option<&Path>,
        name: &str,
        value: &str,
    ) -> Option<Result<String, ResolveError>> {
        manager_of(value)?;
        if let Some(file) = file {
            let tracked = *self
                .tracked
                .entry(file.to_path_buf())
                .or_insert_with(|| crate::mechanics::git_files::tracked(file));
            if tracked {
                return Some(Err(unconfirmed(file, name, value)));
            }
        }
        self.resolve(value)
    }

    /// [`Self::value_of`] for the value `file` gives `name` (see
    /// [`Self::resolve_from`]).
    pub fn value_from(
        &mut self,
        file: Option<&Path>,
        name: &str,
        value: &str,
    ) -> Result<String, ResolveError> {
        self.resolve_from(file, name, value)
            .unwrap_or_else(|| Ok(value.to_string()))
    }

    /// The value `value` stands for: `None` when it is no reference (it
    /// is the value itself).
    pub fn resolve(&mut self, value: &str) -> Option<Result<String, ResolveError>> {
        let scheme = scheme_of(value)?;
        if let Some(known) = self.known.get(value) {
            return Some(known.clone());
        }
        let resolved = (scheme.resolve)(value);
        if let Ok(secret) = &resolved {
            self.shield.learn_secret(secret);
        }
        self.known.insert(value.to_string(), resolved.clone());
        Some(resolved)
    }

    /// `value`, or what it refers to.
    pub fn value_of(&mut self, value: &str) -> Result<String, ResolveError> {
        self.resolve(value).unwrap_or_else(|| Ok(value.to_string()))
    }
}

/// `op://vault/item/field` (or `…/section/field`, with `?attribute=…`):
/// 1Password's secret reference syntax. Names may hold spaces (`op://Team
/// Vault/…`, quoted in `.env`); `op read` gets the reference as one
/// argument, never through a shell.
/// What a 1Password reference starts with.
const OP_PREFIX: &str = "op://";

fn is_op_reference(value: &str) -> bool {
    value.strip_prefix(OP_PREFIX).is_some_and(|rest| {
        let path = rest.split('?').next().unwrap_or(rest);
        let parts: Vec<&str> = path.split('/').collect();
        (3..=4).contains(&parts.len())
            && parts
                .iter()
                .all(|part| !part.is_empty() && part.trim() == *part)
            && !rest.contains(char::is_control)
    })
}

/// Reads a 1Password reference with `op read`, which prints the value
/// (without the newline, given `--no-newline`) and exits 0, or prints an
/// `[ERROR] <date> <time> <message>` line on stderr and exits 1. Its stdin
/// is never the terminal's or a protocol's: the desktop app asks for
/// approval itself.
fn op_read(reference: &str) -> Result<String, ResolveError> {
    let output = Command::new("op")
        .args(["read", "--no-newline", reference])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(ResolveError {
                message: "is a 1Password reference, and the 1Password CLI (`op`) is not on PATH"
                    .to_string(),
                hint: "install the 1Password CLI (https://developer.1password.com/docs/cli/get-started/) and sign in (`op signin`), then run the command again".to_string(),
            });
        }
        Err(error) => {
            return Err(ResolveError {
                message: format!(
                    "is a 1Password reference, and `op` could not be started: {error}"
                ),
                hint: "check the 1Password CLI's installation (`op --version`)".to_string(),
            });
        }
    };
    if output.status.success() {
        return String::from_utf8(output.stdout).map_err(|_| ResolveError {
            message: "is a 1Password reference whose value is not UTF-8 text".to_string(),
            hint: "keep text values in 1Password, or set the value itself".to_string(),
        });
    }
    let said = op_message(&String::from_utf8_lossy(&output.stderr));
    let signed_out = [
        "not currently signed in",
        "not signed in",
        "no accounts configured",
        "session expired",
        "authorization prompt dismissed",
        "account is not signed in",
    ]
    .iter()
    .any(|sign| said.to_ascii_lowercase().contains(sign));
    let hint = if signed_out {
        "sign in to 1Password (`eval $(op signin)`, or unlock the 1Password app with its CLI integration turned on; a service account needs `OP_SERVICE_ACCOUNT_TOKEN`), then run the command again".to_string()
    } else {
        format!("check the reference with `op read '{reference}'`, or ask whoever shared it")
    };
    Err(ResolveError {
        message: format!("is a 1Password reference that `op read` could not read: {said}"),
        hint,
    })
}

/// The message of `op`'s error output, without its `[ERROR] date time`
/// prefix, on one line and safe for a terminal.
fn op_message(stderr: &str) -> String {
    let line = stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("no message");
    let message = line
        .strip_prefix("[ERROR]")
        .map(str::trim_start)
        .map(|rest| {
            // `2024/01/02 15:04:05 message`
            let mut words = rest.splitn(3, ' ');
            match (words.next(), words.next(), words.next()) {
                (Some(date), Some(time), Some(message))
                    if date.contains('/') && time.contains(':') =>
                {
                    message
                }
                _ => rest,
            }
        })
        .unwrap_or(line);
    let mut message = crate::mechanics::display::escape(message).into_owned();
    if message.chars().count() > 300 {
        message = message.chars().take(300).collect::<String>() + "…";
    }
    message
}

fn keychain_read(reference: &str) -> Result<String, ResolveError> {
    let account = keychain::account_of(reference).unwrap_or_default();
    keychain::get(account).map_err(|error| ResolveError {
        message: format!("is kept in the keychain, which could not give it: {error}"),
        hint: error.hint(),
    })
}

/// The prefix dotenvx gives a value it encrypted (`dotenvx encrypt`).
pub const DOTENVX_PREFIX: &str = "encrypted:";

/// Whether `value` is dotenvx ciphertext (`encrypted:BD…`): only dotenvx,
/// with the private key, turns it into the value a server needs.
pub fn is_dotenvx_ciphertext(value: &str) -> bool {
    value
        .strip_prefix(DOTENVX_PREFIX)
        .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_without_a_schemes_prefix_is_never_one_of_its_references() {
        let values = [
            "op://Engineering/GitHub/token",
            " op://Engineering/GitHub/token",
            "OP://Engineering/GitHub/token",
            "keychain:github.com/acme/widgets/TOKEN",
            "Keychain:github.com/acme/widgets/TOKEN",
            "xkeychain:a",
            "encrypted:BDx9",
            "\u{feff}encrypted:BDx9",
            "ENCRYPTED:BDx9",
            "ghp_abc",
            "",
        ];
        for scheme in SCHEMES {
            for value in values {
                if (scheme.matches)(value) {
                    assert!(value.starts_with(scheme.prefix), "{value:?}");
                }
            }
        }
    }

    #[test]
    fn each_kind_is_recognised() {
        assert_eq!(
            manager_of("op://Engineering/GitHub/token"),
            Some(Manager::OnePassword)
        );
        assert_eq!(
            manager_of("op://Private/Server/admin/password"),
            Some(Manager::OnePassword)
        );
        assert_eq!(
            manager_of("op://Team Vault/Login/one-time password?attribute=otp"),
            Some(Manager::OnePassword),
            "names may hold spaces"
        );
        assert_eq!(manager_of("op://Private/ Login/token"), None);
        assert_eq!(manager_of("op://Private/Login/token\n"), None);
        assert_eq!(
            manager_of("op://Private/Login/totp?attribute=otp"),
            Some(Manager::OnePassword)
        );
        assert_eq!(
            manager_of("keychain:github.com/acme/widgets/TOKEN"),
            Some(Manager::Keychain)
        );
        assert_eq!(manager_of("encrypted:BDx9"), Some(Manager::Dotenvx));
        for plain in [
            "ghp_abc",
            "op://only/two",
            "op:///a/b",
            "https://op/x/y",
            "",
        ] {
            assert_eq!(manager_of(plain), None, "{plain}");
        }
    }

    #[test]
    fn op_errors_lose_their_date() {
        assert_eq!(
            op_message("[ERROR] 2024/01/02 15:04:05 could not read secret 'op://a/b/c': x\n"),
            "could not read secret 'op://a/b/c': x"
        );
        assert_eq!(op_message("\n  something else\n"), "something else");
        assert_eq!(op_message(""), "no message");
        assert_eq!(op_message("[ERROR] \u{1b}[2J boom"), "\\u{1b}[2J boom");
    }

    #[test]
    fn a_reference_is_resolved_once() {
        let mut resolver = Resolver::new(Arc::new(crate::secrets::redact::Shield::default()));
        assert_eq!(resolver.resolve("plain"), None);
        assert_eq!(resolver.value_of("plain"), Ok("plain".to_string()));
        let first = resolver.resolve("encrypted:abc");
        assert!(matches!(first, Some(Err(_))));
        assert_eq!(resolver.known.len(), 1);
        assert_eq!(resolver.resolve("encrypted:abc"), first);
        assert_eq!(resolver.known.len(), 1);
    }
}
