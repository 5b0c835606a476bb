//! Claude Code's managed MCP policy: `allowedMcpServers`,
//! `deniedMcpServers`, `allowManagedMcpServersOnly` and `managedMcpServers`
//! in `managed-settings.json` and the `managed-settings.d/*.json` drop-ins
//! (their lists merged), and the exclusive `managed-mcp.json`, all in the
//! system's managed folder. Read, never written; the rules are matched
//! as Claude Code 2.1.332 matches them (checked against its bundled code
//! and `claude mcp list` with a managed folder in a temporary root):
//!
//! - a denied server is hidden wherever it is configured; deny beats allow;
//! - `serverName` is compared verbatim, `serverCommand` with the whole
//!   `[command, ...args]` array (an extra argument does not match);
//! - `serverUrl` is a pattern where `*` stands for any text (any scheme,
//!   host part or path); a deny pattern with no query also matches the URL
//!   with a query, and with a trailing slash added or (when its path has no
//!   `*`) removed; an allow pattern matches exactly;
//! - with an allowlist, a stdio server must match a `serverCommand` entry
//!   when the list has one, else a `serverName` entry; a remote server must
//!   match a `serverUrl` entry when the list has one, else a `serverName`
//!   entry;
//! - an invalid entry is dropped; a `deniedMcpServers` that is not an array
//!   is dropped, an `allowedMcpServers` that is not an array admits nothing;
//! - a `managed-settings.json` that does not parse stops Claude Code (exit 1);
//! - while `managed-mcp.json` exists (even unparsable), only its servers load.
//!
//! Only the managed folder is read: a repository's own settings never
//! loosen (or define) the policy mcpenv reports.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::error::ConfigError;
use crate::config::json_files::load_document_from;
use crate::config::model::ServerEntry;
use crate::mechanics::document::JsonDocument;
use crate::mechanics::fsx::Reads;

/// The settings file in the managed folder.
pub const SETTINGS_FILE: &str = "managed-settings.json";
/// The folder of drop-in settings files beside it.
pub const DROP_IN_DIR: &str = "managed-settings.d";
/// The exclusive server file in the managed folder.
pub const MCP_FILE: &str = "managed-mcp.json";

/// Claude Code's managed folder on the system mcpenv is built for (as its
/// code names it: no variable moves it; `MCPENV_MANAGED_DIR` is mcpenv's,
/// for tests).
pub const DEFAULT_MANAGED_DIR: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode"
} else if cfg!(windows) {
    "C:\\Program Files\\ClaudeCode"
} else {
    "/etc/claude-code"
};

/// One entry of `allowedMcpServers` or `deniedMcpServers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Rule {
    /// `{"serverName": …}`
    ServerName(String),
    /// `{"serverCommand": [command, ...args]}`
    ServerCommand(Vec<String>),
    /// `{"serverUrl": pattern}`
    ServerUrl(String),
}

impl Rule {
    /// The entry as written in the settings file.
    pub fn as_json(&self) -> String {
        let value = match self {
            Self::ServerName(name) => serde_json::json!({ "serverName": name }),
            Self::ServerCommand(words) => serde_json::json!({ "serverCommand": words }),
            Self::ServerUrl(url) => serde_json::json!({ "serverUrl": url }),
        };
        value.to_string()
    }
}

/// Which list a rule is in, or what else keeps a server out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockKind {
    /// An entry of `deniedMcpServers` matches it.
    Denied,
    /// `allowedMcpServers` is set and no entry admits it.
    NotAllowed,
    /// `managed-mcp.json` exists: only its servers load.
    Exclusive,
}

/// Why policy keeps a server out, and where that is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// What keeps it out.
    pub kind: BlockKind,
    /// The `deniedMcpServers` entry that matches, as written.
    pub rule: Option<String>,
    /// The file the rule comes from.
    pub file: PathBuf,
}

impl Block {
    /// One sentence: what blocks the server, and where.
    pub fn message(&self) -> String {
        let file = self.file.display();
        match (self.kind, &self.rule) {
            (BlockKind::Denied, Some(rule)) => {
                format!("blocked by enterprise policy: deniedMcpServers entry {rule} in `{file}`")
            }
            (BlockKind::Denied, None) => {
                format!("blocked by enterprise policy: deniedMcpServers in `{file}`")
            }
            (BlockKind::NotAllowed, _) => format!(
                "blocked by enterprise policy: no allowedMcpServers entry in `{file}` admits it"
            ),
            (BlockKind::Exclusive, _) => {
                format!("ignored: `{file}` is present and has exclusive control over MCP servers")
            }
        }
    }

    /// What `claude mcp add` says when it refuses a server for this reason.
    pub fn add_refusal(&self, name: &str) -> String {
        match self.kind {
            BlockKind::Denied => format!(
                "Cannot add MCP server \"{name}\": server is explicitly blocked by enterprise policy"
            ),
            BlockKind::NotAllowed => {
                format!("Cannot add MCP server \"{name}\": not allowed by enterprise policy")
            }
            BlockKind::Exclusive => "Cannot add MCP server: enterprise MCP configuration is active and has exclusive control over MCP servers".to_string(),
        }
    }
}

/// A server the organisation provides.
#[derive(Debug, Clone)]
pub struct ManagedServer {
    /// Its name.
    pub name: String,
    /// The file it comes from.
    pub file: PathBuf,
    /// `managed-mcp.json` or `managedMcpServers`.
    pub origin: &'static str,
    /// The entry.
    pub entry: ServerEntry,
}

/// A note about a policy file: an entry Claude Code drops, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyNote {
    /// The file.
    pub file: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// The policy in force: what the managed folder (or an organisation's
/// policy file) says.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The settings file read first (`managed-settings.json`, or the
    /// policy file given).
    pub settings_file: PathBuf,
    /// `allowedMcpServers`, when set (valid entries only; the lists of
    /// every file read, together).
    pub allowed: Option<Vec<Rule>>,
    /// The first file that sets `allowedMcpServers`.
    pub allowed_file: Option<PathBuf>,
    /// `deniedMcpServers` (valid entries only), each with its file.
    pub denied: Vec<(Rule, PathBuf)>,
    /// `allowManagedMcpServersOnly`.
    pub managed_only: bool,
    /// `managedMcpServers`, and the servers of `managed-mcp.json`.
    pub managed_servers: Vec<ManagedServer>,
    /// `managed-mcp.json`, when it exists.
    pub exclusive: Option<PathBuf>,
    /// Entries Claude Code drops.
    pub notes: Vec<PolicyNote>,
}

impl Policy {
    /// Whether the policy says anything at all.
    pub fn is_empty(&self) -> bool {
        self.allowed.is_none()
            && self.denied.is_empty()
            && self.managed_servers.is_empty()
            && self.exclusive.is_none()
    }

    /// The policy of the managed folder `dir`: `managed-settings.json`,
    /// then each `managed-settings.d/*.json` in name order (not hidden
    /// ones), their lists merged, and `managed-mcp.json`; each optional. A
    /// settings file that cannot be read or does not parse is an error
    /// (Claude Code stops on it too).
    pub fn load(reads: &dyn Reads, dir: &Path) -> Result<Self, ConfigError> {
        let mut policy = Self::from_settings_file(reads, &dir.join(SETTINGS_FILE))?;
        let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(dir.join(DROP_IN_DIR))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| {
                        path.file_name()
                            .and_then(|name| name.to_str())
                            .is_some_and(|name| name.ends_with(".json") && !name.starts_with('.'))
                            && path.is_file()
                    })
                    .collect()
            })
            .unwrap_or_default();
        drop_ins.sort();
        for file in drop_ins {
            if let Some(document) = load_document_from(reads, &file, &[])? {
                let root = root_object(&document, &file)?;
                policy.read_settings(&file, &root);
            }
        }
        let mcp_file = dir.join(MCP_FILE);
        if mcp_file.is_file() {
            policy.exclusive = Some(mcp_file.clone());
            // Unreadable or unparsable, it still holds exclusive control.
            match load_document_from(reads, &mcp_file, &[]) {
                Ok(Some(document)) => {
                    let root = root_object(&document, &mcp_file).unwrap_or_default();
                    if let Some(Value::Object(servers)) = root.get("mcpServers") {
                        for (name, value) in servers {
                            policy.managed_servers.push(ManagedServer {
                                name: name.clone(),
                                file: mcp_file.clone(),
                                origin: MCP_FILE,
                                entry: ServerEntry::from_value(value.clone()),
                            });
                        }
                    }
                }
                Ok(None) => {}
                Err(error) => policy.notes.push(PolicyNote {
                    file: mcp_file.clone(),
                    message: format!(
                        "{error}; Claude Code loads no MCP server while it exists, only the organisation's once it is fixed"
                    ),
                }),
            }
        }
        Ok(policy)
    }

    /// The policy written in one settings file (`managed-settings.json`'s
    /// shape); a missing file is an empty policy.
    pub fn from_settings_file(reads: &dyn Reads, file: &Path) -> Result<Self, ConfigError> {
        let mut policy = Self {
            settings_file: file.to_path_buf(),
            ..Self::default()
        };
        let Some(document) = load_document_from(reads, file, &[])? else {
            return Ok(policy);
        };
        let root = root_object(&document, file)?;
        policy.read_settings(file, &root);
        Ok(policy)
    }

    fn read_settings(&mut self, file: &Path, root: &Map<String, Value>) {
        let mut note = |message: String| {
            self.notes.push(PolicyNote {
                file: file.to_path_buf(),
                message,
            });
        };
        match root.get("allowedMcpServers") {
            None => {}
            Some(Value::Array(entries)) => {
                let found = rules(entries, "allowedMcpServers", &mut note);
                self.allowed.get_or_insert_default().extend(found);
                self.allowed_file.get_or_insert_with(|| file.to_path_buf());
            }
            Some(_) => {
                note("\"allowedMcpServers\" is not an array: Claude Code enforces an empty allowlist (no MCP server admitted) until it is fixed".to_string());
                self.allowed.get_or_insert_default();
                self.allowed_file.get_or_insert_with(|| file.to_path_buf());
            }
        }
        match root.get("deniedMcpServers") {
            None => {}
            Some(Value::Array(entries)) => {
                let found = rules(entries, "deniedMcpServers", &mut note);
                self.denied
                    .extend(found.into_iter().map(|rule| (rule, file.to_path_buf())));
            }
            Some(_) => note("\"deniedMcpServers\" is not an array: Claude Code drops it and enforces none of its entries".to_string()),
        }
        self.managed_only |= root.get("allowManagedMcpServersOnly") == Some(&Value::Bool(true));
        if let Some(Value::Object(servers)) = root.get("managedMcpServers") {
            for (name, value) in servers {
                match managed_server_problem(value) {
                    None => {
                        self.managed_servers.retain(|server| &server.name != name);
                        self.managed_servers.push(ManagedServer {
                            name: name.clone(),
                            file: file.to_path_buf(),
                            origin: "managedMcpServers",
                            entry: ServerEntry::from_value(value.clone()),
                        });
                    }
                    Some(problem) => note(format!(
                        "managedMcpServers `{name}` {problem}: Claude Code drops it"
                    )),
                }
            }
        }
    }

    /// What keeps server `name` (defined as `entry` by a user or project)
    /// out, if anything. `managed` is true for a server the organisation
    /// provides, which needs no allowlist entry and survives
    /// `managed-mcp.json`.
    pub fn judge(&self, name: &str, entry: &ServerEntry, managed: bool) -> Option<Block> {
        if !managed && let Some(file) = &self.exclusive {
            return Some(Block {
                kind: BlockKind::Exclusive,
                rule: None,
                file: file.clone(),
            });
        }
        let target = Target::of(entry);
        if let Some((rule, file)) = self
            .denied
            .iter()
            .find(|(rule, _)| target.denied_by(name, rule))
        {
            return Some(Block {
                kind: BlockKind::Denied,
                rule: Some(rule.as_json()),
                file: file.clone(),
            });
        }
        if let Some(allowed) = &self.allowed
            && !managed
            && !target.allowed_by(name, allowed)
        {
            return Some(Block {
                kind: BlockKind::NotAllowed,
                rule: None,
                file: self
                    .allowed_file
                    .clone()
                    .unwrap_or_else(|| self.settings_file.clone()),
            });
        }
        None
    }
}

/// The members of a parsed document's root object (none for a blank file).
fn root_object(document: &JsonDocument, path: &Path) -> Result<Map<String, Value>, ConfigError> {
    if document.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(document.text()) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(ConfigError::Shape {
            path: path.to_path_buf(),
            detail: "the top level is not an object".to_string(),
        }),
        Err(error) => Err(ConfigError::Shape {
            path: path.to_path_buf(),
            detail: error.to_string(),
        }),
    }
}

/// Why a `managedMcpServers` entry is dropped, if it is.
fn managed_server_problem(value: &Value) -> Option<&'static str> {
    let object = value.as_object()?;
    if ["command", "args", "env", "headersHelper"]
        .iter()
        .any(|key| object.contains_key(*key))
    {
        return Some("names a program to run (only https remote servers are accepted)");
    }
    if !matches!(
        object.get("type").and_then(Value::as_str),
        Some("http" | "sse")
    ) {
        return Some("is not an \"http\" or \"sse\" server");
    }
    let url = object.get("url").and_then(Value::as_str).unwrap_or("");
    if !url.starts_with("https://") {
        return Some("has no https `url`");
    }
    if value.to_string().contains("${") {
        return Some("holds a ${VAR} reference");
    }
    None
}

/// The valid entries of one list; each invalid one is noted.
fn rules(entries: &[Value], list: &str, note: &mut dyn FnMut(String)) -> Vec<Rule> {
    let mut valid = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match rule(entry, list == "allowedMcpServers") {
            Ok(rule) => valid.push(rule),
            Err(problem) => note(format!(
                "{list}[{index}] {problem}: Claude Code drops the entry"
            )),
        }
    }
    valid
}

fn rule(entry: &Value, allow: bool) -> Result<Rule, &'static str> {
    let object = entry.as_object().ok_or("is not an object")?;
    let known = ["serverName", "serverCommand", "serverUrl"];
    if known
        .iter()
        .filter(|key| object.contains_key(**key))
        .count()
        != 1
    {
        return Err("must have exactly one of \"serverName\", \"serverCommand\" or \"serverUrl\"");
    }
    if let Some(name) = object.get("serverName") {
        let name = name
            .as_str()
            .ok_or("has a serverName that is not a string")?;
        let valid = if allow {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        } else {
            !name.trim().is_empty() && name == name.trim()
        };
        return if valid {
            Ok(Rule::ServerName(name.to_string()))
        } else {
            Err("has a serverName that never matches")
        };
    }
    if let Some(words) = object.get("serverCommand") {
        let words: Option<Vec<String>> = words.as_array().and_then(|words| {
            words
                .iter()
                .map(|word| word.as_str().map(str::to_string))
                .collect()
        });
        return match words {
            Some(words) if !words.is_empty() => Ok(Rule::ServerCommand(words)),
            _ => Err("has a serverCommand that is not a non-empty array of strings"),
        };
    }
    match object.get("serverUrl").and_then(Value::as_str) {
        Some(url) => Ok(Rule::ServerUrl(url.to_string())),
        None => Err("has a serverUrl that is not a string"),
    }
}

/// What rules are matched against: a command line or a URL.
enum Target {
    Command(Vec<String>),
    Url(String),
    Neither,
}

impl Target {
    fn of(entry: &ServerEntry) -> Self {
        if entry.transport().is_remote() {
            entry
                .url()
                .map_or(Self::Neither, |url| Self::Url(url.to_string()))
        } else if let Some(command) = entry.command() {
            let mut words = vec![command.to_string()];
            words.extend(entry.args().into_iter().map(str::to_string));
            Self::Command(words)
        } else {
            Self::Neither
        }
    }

    fn denied_by(&self, name: &str, rule: &Rule) -> bool {
        match (rule, self) {
            (Rule::ServerName(denied), _) => denied == name,
            (Rule::ServerCommand(denied), Self::Command(words)) => denied == words,
            (Rule::ServerUrl(pattern), Self::Url(url)) => deny_url_matches(url, pattern),
            _ => false,
        }
    }

    fn allowed_by(&self, name: &str, allowed: &[Rule]) -> bool {
        let by_name = || {
            allowed
                .iter()
                .any(|rule| matches!(rule, Rule::ServerName(allowed) if allowed == name))
        };
        match self {
            Self::Command(words) => {
                let commands: Vec<&Vec<String>> = allowed
                    .iter()
                    .filter_map(|rule| match rule {
                        Rule::ServerCommand(words) => Some(words),
                        _ => None,
                    })
                    .collect();
                if commands.is_empty() {
                    by_name()
                } else {
                    commands.contains(&words)
                }
            }
            Self::Url(url) => {
                let patterns: Vec<&String> = allowed
                    .iter()
                    .filter_map(|rule| match rule {
                        Rule::ServerUrl(pattern) => Some(pattern),
                        _ => None,
                    })
                    .collect();
                if patterns.is_empty() {
                    by_name()
                } else {
                    patterns.iter().any(|pattern| url_matches(url, pattern))
                }
            }
            Self::Neither => by_name(),
        }
    }
}

/// Stands for `*` while a pattern is parsed as a URL (a valid scheme, host
/// label and path segment).
const STAR: &str = "mcpenvstar0";

/// Whether `url` matches `pattern` as an allow entry does.
pub fn url_matches(url: &str, pattern: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let Ok(actual) = url::Url::parse(url) else {
        return false;
    };
    let marked = pattern.replace('*', STAR);
    let (parsed, any_port) = match url::Url::parse(&marked) {
        Ok(parsed) => (parsed, false),
        Err(_) => {
            let zeroed = marked.replacen(&format!(":{STAR}"), ":0", 1);
            match url::Url::parse(&zeroed) {
                Ok(parsed) if zeroed != marked => (parsed, true),
                _ => {
                    let text = format!(
                        "{}://{}{}{}",
                        actual.scheme(),
                        actual.host_str().unwrap_or(""),
                        actual.path(),
                        query_part(&actual)
                    );
                    return segments_match(pattern, &text);
                }
            }
        }
    };
    if parsed.scheme() != STAR && parsed.scheme() != actual.scheme() {
        return false;
    }
    let host = |url: &url::Url| {
        url.host_str()
            .unwrap_or("")
            .trim_end_matches('.')
            .to_lowercase()
    };
    let pattern_host = host(&parsed).replace(STAR, "*");
    if !glob(&pattern_host, &host(&actual)) {
        return false;
    }
    let any_port = any_port || (parsed.port().is_none() && pattern_host.contains('*'));
    if !any_port && parsed.port() != actual.port() {
        return false;
    }
    if (parsed.path() == "/" || parsed.path().is_empty())
        && parsed.query().is_none()
        && !marked.ends_with('/')
    {
        return true;
    }
    let pattern_rest = format!("{}{}", parsed.path(), query_part(&parsed)).replace(STAR, "*");
    glob(
        &pattern_rest,
        &format!("{}{}", actual.path(), query_part(&actual)),
    )
}

/// Whether `url` matches `pattern` as a deny entry does: as an allow entry,
/// or with its query dropped, its trailing slashes dropped, or the
/// pattern's trailing slashes put in their place.
pub fn deny_url_matches(url: &str, pattern: &str) -> bool {
    if url_matches(url, pattern) {
        return true;
    }
    let Ok(mut actual) = url::Url::parse(url) else {
        return false;
    };
    actual.set_query(None);
    actual.set_fragment(None);
    let plain_path = url::Url::parse(&pattern.replace('*', STAR))
        .ok()
        .filter(|parsed| {
            parsed.query().is_none()
                && parsed.fragment().is_none()
                && !pattern_path_has_star(parsed)
        })
        .map(|parsed| parsed.path().to_string())
        .unwrap_or_default();
    let slashes = &plain_path[plain_path.trim_end_matches('/').len()..];
    let href = actual.as_str().to_string();
    let trimmed = href.trim_end_matches('/');
    [
        href.clone(),
        trimmed.to_string(),
        format!("{trimmed}{slashes}"),
    ]
    .iter()
    .any(|candidate| url_matches(candidate, pattern))
}

fn pattern_path_has_star(parsed: &url::Url) -> bool {
    parsed.path().contains(STAR)
}

fn query_part(url: &url::Url) -> String {
    match url.query() {
        Some(query) if !query.is_empty() => format!("?{query}"),
        _ => String::new(),
    }
}

/// `*` matches any text, everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut at = first.len();
    let end = text.len() - last.len();
    for middle in &parts[1..parts.len() - 1] {
        if middle.is_empty() {
            continue;
        }
        match text[at..end].find(middle) {
            Some(found) => at += found + middle.len(),
            None => return false,
        }
    }
    true
}

/// A pattern that is no URL, matched `/`-segment by segment.
fn segments_match(pattern: &str, text: &str) -> bool {
    let patterns: Vec<&str> = pattern.split('/').collect();
    let texts: Vec<&str> = text.split('/').collect();
    patterns.len() == texts.len()
        && patterns
            .iter()
            .zip(&texts)
            .all(|(pattern, text)| glob(pattern, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_patterns_match_as_claude_code_matches_them() {
        let cases = [
            (
                "https://mcp.example.com/v1/mcp",
                "https://*.example.com/*",
                true,
            ),
            ("https://example.com/mcp", "https://*.example.com/*", false),
            (
                "http://mcp.example.com/v1/mcp",
                "https://*.example.com/*",
                false,
            ),
            ("https://other.test/mcp", "*://other.test/*", true),
            ("https://other.test/mcp", "*", true),
            ("https://other.test/mcp", "https://other.test", true),
            ("https://other.test:8443/mcp", "https://other.test", false),
            ("https://other.test:8443/mcp", "https://*.test", true),
            ("https://example.com/mcp", "https://example.com/mcp/", false),
            (
                "http://mcp.example.com/v1/mcp?x=1",
                "http://mcp.example.com/v1/mcp",
                false,
            ),
            ("https://A.Example.com./x", "https://a.example.com/x", true),
        ];
        for (url, pattern, expected) in cases {
            assert_eq!(url_matches(url, pattern), expected, "{url} ~ {pattern}");
        }
    }

    #[test]
    fn deny_patterns_also_match_with_a_query_or_another_trailing_slash() {
        assert!(deny_url_matches(
            "http://mcp.example.com/v1/mcp?x=1",
            "http://mcp.example.com/v1/mcp"
        ));
        assert!(deny_url_matches(
            "https://example.com/mcp",
            "https://example.com/mcp/"
        ));
        assert!(deny_url_matches(
            "https://example.com/mcp/",
            "https://example.com/mcp"
        ));
        assert!(!deny_url_matches(
            "https://example.com/mcpx",
            "https://example.com/mcp"
        ));
    }

    #[test]
    fn glob_stars_match_any_text() {
        assert!(glob("a*c", "abbbc"));
        assert!(glob("*", ""));
        assert!(!glob("a*c", "ab"));
        assert!(glob("/v1/*/mcp", "/v1/x/y/mcp"));
        assert!(!glob("ab*ba", "aba"));
    }
}
