//! Claude Code 2.1.332's OAuth client secrets on Linux: `.credentials.json`
//! in its data directory (mode 0600), under
//! `mcpOAuthClientConfig["<name>|<key>"].clientSecret`. Verified by adding
//! the same servers with `claude mcp add --client-secret` (see
//! `tests/cli/oauth.rs`). On macOS Claude Code uses the Keychain instead.

use std::fs;
use std::path::Path;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::error::ConfigError;
use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::{self, NewMode, TextEditError};

/// The file's name in Claude Code's data directory.
pub const FILE_NAME: &str = ".credentials.json";

/// The key Claude Code files a server's client secret under: its name, `|`,
/// and the first 16 hex digits of the SHA-256 of the compact JSON
/// `{"type","url","headers"}` of the stored entry. `headers` is `{}` when
/// the entry has none: Claude Code hashes its defaulted value.
pub fn client_config_key(name: &str, entry: &Value) -> String {
    let field = |key: &str| entry.get(key).cloned().unwrap_or(Value::Null);
    let mut identity = Map::new();
    identity.insert("type".into(), field("type"));
    identity.insert("url".into(), field("url"));
    identity.insert(
        "headers".into(),
        entry
            .get("headers")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
    );
    // serde_json's compact form escapes as JSON.stringify does.
    let compact = Value::Object(identity).to_string();
    let digest = Sha256::digest(compact.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{name}|{}", &hex[..16])
}

/// `old` (the file's text, if any) with `secret` filed under `key`; every
/// other member kept. Compact, as Claude Code writes it.
pub fn with_client_secret(
    path: &Path,
    old: Option<&str>,
    key: &str,
    secret: &str,
) -> Result<String, ConfigError> {
    let shape = |detail: &str| ConfigError::Shape {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    };
    let mut root: Value = match old.map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(text) => serde_json::from_str(text).map_err(|error| ConfigError::Syntax {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })?,
    };
    let configs = root
        .as_object_mut()
        .ok_or_else(|| shape("the top level is not an object"))?
        .entry("mcpOAuthClientConfig")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("`mcpOAuthClientConfig` is not an object"))?;
    let config = configs
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !config.is_object() {
        *config = Value::Object(Map::new());
    }
    if let Some(config) = config.as_object_mut() {
        config.insert("clientSecret".into(), Value::from(secret));
    }
    Ok(root.to_string())
}

/// Files `secret` under `key` in `path`, under mcpenv's edit lock; the file
/// ends up mode 0600 whatever it was, as Claude Code leaves it.
pub fn save_client_secret(
    edit: &Edit,
    state_dir: &Path,
    path: &Path,
    key: &str,
    secret: &str,
) -> Result<(), ConfigError> {
    let write_error = |source| ConfigError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        edit.unshown(|| fs::create_dir_all(parent).map_err(write_error))?;
    }
    // An existing file keeps its mode through the edit: tighten it first,
    // so the secret is never in a file others can read, even for a moment.
    if path.exists() {
        edit.unshown(|| {
            let resolved = fsx::resolve_symlinks(path).map_err(write_error)?;
            fsx::os::set_mode(&resolved, 0o600).map_err(write_error)
        })?;
    }
    edit.edit_text(state_dir, path, NewMode::Exact(0o600), |old| {
        with_client_secret(path, old, key, secret).map(Some)
    })
    .map_err(|error| match error {
        TextEditError::Read(source) => ConfigError::Read {
            path: path.to_path_buf(),
            source,
        },
        TextEditError::Write(source) => write_error(source),
        TextEditError::Locked(source) => ConfigError::Lock {
            path: path.to_path_buf(),
            source,
        },
        TextEditError::Contended => ConfigError::Contended {
            path: path.to_path_buf(),
        },
        TextEditError::Change(error) => error,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_match_what_claude_code_wrote() {
        // Keys from `claude mcp add --client-id c --client-secret` 2.1.332.
        let cases = [
            (
                "api",
                json!({"type":"http","url":"https://api.example.com/mcp","headers":{"X-A":"1"},"oauth":{"clientId":"cid","callbackPort":8123}}),
                "api|d342c71ae7d010ec",
            ),
            (
                "nohdr3",
                json!({"type":"http","url":"https://x.example/mcp","oauth":{"clientId":"c"}}),
                "nohdr3|9b8ef7a9df3c11fb",
            ),
            (
                "ord",
                json!({"type":"http","url":"https://x.example/mcp","headers":{"B":"2","A":"1"}}),
                "ord|5026d9fae73499d7",
            ),
            (
                "ssesec",
                json!({"type":"sse","url":"https://x.example/sse?q=${X}","headers":{"B":"2"}}),
                "ssesec|e99f83591101a97c",
            ),
        ];
        for (name, entry, key) in cases {
            assert_eq!(client_config_key(name, &entry), key);
        }
    }

    #[test]
    fn other_members_are_kept() {
        let path = Path::new("c.json");
        let old = r#"{"claudeAiOauth":{"x":1},"mcpOAuthClientConfig":{"old|1":{"clientSecret":"o","other":2}}}"#;
        assert_eq!(
            with_client_secret(path, Some(old), "new|2", "s").unwrap(),
            r#"{"claudeAiOauth":{"x":1},"mcpOAuthClientConfig":{"old|1":{"clientSecret":"o","other":2},"new|2":{"clientSecret":"s"}}}"#
        );
        assert_eq!(
            with_client_secret(path, None, "a|b", "s").unwrap(),
            r#"{"mcpOAuthClientConfig":{"a|b":{"clientSecret":"s"}}}"#
        );
        assert!(with_client_secret(path, Some("[]"), "a|b", "s").is_err());
        assert!(with_client_secret(path, Some("{"), "a|b", "s").is_err());
    }
}
