//! Other MCP clients' config files: where they live and how to read their
//! servers into Claude Code's entry shape (for `scan`; `import`/`export`
//! build on this). Parsing only, no I/O besides the caller-given text.

pub mod export;
pub mod import;
pub mod placeholders;

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::model::ServerEntry;
use crate::secrets::node::{self, Members, Node};

/// A client whose config file mcpenv knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// Claude Code's `~/.claude.json` (all projects) or `.mcp.json`.
    ClaudeCode,
    /// Claude Desktop.
    ClaudeDesktop,
    /// Cursor.
    Cursor,
    /// VS Code (Copilot).
    Vscode,
    /// Windsurf.
    Windsurf,
    /// Gemini CLI.
    Gemini,
    /// Codex CLI (TOML).
    Codex,
    /// Zed.
    Zed,
}

impl Client {
    /// The name used on the command line and in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::ClaudeDesktop => "claude-desktop",
            Self::Cursor => "cursor",
            Self::Vscode => "vscode",
            Self::Windsurf => "windsurf",
            Self::Gemini => "gemini",
            Self::Codex => "codex",
            Self::Zed => "zed",
        }
    }

    /// The client's name as people write it, for messages.
    pub fn title(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Windsurf => "Windsurf",
            Self::Gemini => "Gemini CLI",
            Self::Codex => "Codex",
            Self::Zed => "Zed",
        }
    }

    /// The member holding the servers.
    pub(crate) fn servers_key(self) -> &'static str {
        match self {
            Self::Vscode => "servers",
            Self::Zed => "context_servers",
            Self::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A config file of another client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFile {
    /// Whose file it is.
    pub client: Client,
    /// Where it is.
    pub path: PathBuf,
    /// Whether it belongs to the project (else to the user).
    pub project: bool,
}

/// Where a client file lives: in the project, in the home folder, or in
/// the user's config folder (`$XDG_CONFIG_HOME`, or `~/.config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Project,
    Home,
    ConfigHome,
}

/// Every other client's file on Linux, in the order [`known_files`] lists
/// them; the paths are relative to their [`Base`].
const FILES: &[(Client, Base, &str)] = &[
    (
        Client::ClaudeDesktop,
        Base::ConfigHome,
        "Claude/claude_desktop_config.json",
    ),
    (Client::Cursor, Base::Project, ".cursor/mcp.json"),
    (Client::Cursor, Base::Home, ".cursor/mcp.json"),
    (Client::Vscode, Base::Project, ".vscode/mcp.json"),
    (Client::Vscode, Base::ConfigHome, "Code/User/mcp.json"),
    (
        Client::Windsurf,
        Base::Home,
        ".codeium/windsurf/mcp_config.json",
    ),
    (Client::Gemini, Base::Project, ".gemini/settings.json"),
    (Client::Gemini, Base::Home, ".gemini/settings.json"),
    // Read by Codex only in a project it trusts (see [`codex_trust`]).
    (Client::Codex, Base::Project, ".codex/config.toml"),
    (Client::Codex, Base::Home, ".codex/config.toml"),
    (Client::Zed, Base::Project, ".zed/settings.json"),
    (Client::Zed, Base::ConfigHome, "zed/settings.json"),
];

/// Where the other clients keep their files on Linux, user-level and in
/// `project`; `config_home` is `$XDG_CONFIG_HOME` (or `~/.config`). A file
/// that is both (the project is the home folder) is listed once, as the
/// user's.
pub fn known_files(home: &Path, config_home: &Path, project: &Path) -> Vec<ClientFile> {
    let all: Vec<ClientFile> = FILES
        .iter()
        .map(|&(client, base, path)| ClientFile {
            client,
            project: base == Base::Project,
            path: match base {
                Base::Project => project,
                Base::Home => home,
                Base::ConfigHome => config_home,
            }
            .join(path),
        })
        .collect();
    let mut files: Vec<ClientFile> = Vec::with_capacity(all.len());
    for (index, candidate) in all.iter().enumerate() {
        let later = all[index + 1..]
            .iter()
            .any(|other| other.path == candidate.path);
        if !later && !files.iter().any(|file| file.path == candidate.path) {
            files.push(candidate.clone());
        }
    }
    files
}

/// Whose file `path` is, judged by its name and the folders it sits in
/// (`.cursor/mcp.json` is Cursor's, `.mcp.json` and `.claude.json` Claude
/// Code's); `None` for a name no client uses.
pub fn client_of_path(path: &Path) -> Option<Client> {
    if path
        .file_name()
        .is_some_and(|name| name == ".mcp.json" || name == ".claude.json")
    {
        return Some(Client::ClaudeCode);
    }
    // Claude Desktop's file keeps its name wherever it is committed.
    if path
        .file_name()
        .is_some_and(|name| name == "claude_desktop_config.json")
    {
        return Some(Client::ClaudeDesktop);
    }
    FILES
        .iter()
        .find(|(_, _, relative)| path.ends_with(relative))
        .map(|&(client, _, _)| client)
}

/// Whether Codex trusts a project, and so reads its `.codex/config.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodexTrust {
    /// `trust_level = "trusted"`: Codex reads the project's file.
    Trusted,
    /// `trust_level = "untrusted"`: Codex ignores it.
    Untrusted,
    /// Not recorded: Codex ignores the file until the user trusts the
    /// project (Codex asks when it starts there).
    Unknown,
}

/// The trust Codex's user config (`~/.codex/config.toml`, parsed) records
/// for a project: the first of `dirs` (nearest first: the folder holding
/// `.codex/`, then the repository root) that has a `trust_level` under
/// `[projects."<path>"]` decides, as in Codex (openai/codex
/// `codex-rs/core/src/config_loader`), which compares the paths as text.
pub fn codex_trust(user_config: &Value, dirs: &[&Path]) -> CodexTrust {
    let Some(projects) = user_config.get("projects").and_then(Value::as_object) else {
        return CodexTrust::Unknown;
    };
    let level = |dir: &Path| {
        let dir = dir.to_string_lossy();
        projects
            .iter()
            .find(|(key, _)| {
                let key = key.as_str();
                key == dir || (key.len() > 1 && key.trim_end_matches('/') == dir)
            })
            .and_then(|(_, project)| project.get("trust_level")?.as_str())
            .map(str::to_owned)
    };
    match dirs.iter().find_map(|dir| level(dir)).as_deref() {
        Some("trusted") => CodexTrust::Trusted,
        Some(_) => CodexTrust::Untrusted,
        None => CodexTrust::Unknown,
    }
}

/// Guesses whose file `path` is from its name and content: `.toml` is
/// Codex; JSON is read by the key that holds the servers.
pub fn guess_client(path: &Path, value: Option<&Value>) -> Client {
    guess_client_by(path, |key| value.and_then(|value| value.get(key)).is_some())
}

/// [`guess_client`] of a file read as a [`Node`].
pub fn guess_client_of(path: &Path, root: &Node<'_>) -> Client {
    guess_client_by(path, |key| root.get(key).is_some())
}

/// [`guess_client`], `has` saying whether the root has a member.
fn guess_client_by(path: &Path, has: impl Fn(&str) -> bool) -> Client {
    if path
        .extension()
        .is_some_and(|extension| extension == "toml")
    {
        return Client::Codex;
    }
    if has("context_servers") {
        Client::Zed
    } else if has("servers") && !has("mcpServers") {
        Client::Vscode
    } else {
        Client::ClaudeCode
    }
}

/// A file that could not be read as its client's format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line} column {column}")]
pub struct FormatError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a client file's text into a JSON value: JSON with comments and
/// trailing commas (which several clients accept), or TOML for Codex.
pub fn parse(path: &Path, text: &str) -> Result<Value, FormatError> {
    if path
        .extension()
        .is_some_and(|extension| extension == "toml")
    {
        return toml::from_str::<Value>(text).map_err(|error| {
            let (line, column) = error
                .span()
                .map(|span| line_column(text, span.start))
                .unwrap_or((1, 1));
            FormatError {
                line,
                column,
                message: error.message().to_string(),
            }
        });
    }
    // Most files are strict JSON, which serde_json reads several times
    // faster; comments and trailing commas fall back to the JSONC parser.
    // Any depth up to mcpenv's bound, as `.mcp.json` is read (serde_json
    // alone stops at 128 levels, which Claude Code reads).
    match crate::mechanics::document::parse_value(text) {
        Ok(value) => return Ok(value),
        Err(crate::mechanics::document::ValueError::TooDeep(error)) => {
            return Err(FormatError {
                line: 1,
                column: 1,
                message: error.to_string(),
            });
        }
        Err(crate::mechanics::document::ValueError::Syntax(_)) => {}
    }
    let options = jsonc_parser::ParseOptions::default();
    match jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &options) {
        Ok(value) => Ok(value.unwrap_or(Value::Object(Map::new()))),
        Err(error) => Err(FormatError {
            line: error.line_display(),
            column: error.column_display(),
            message: error.kind().to_string(),
        }),
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |newline| before.len() - newline - 1)
        + 1;
    (line, column)
}

/// A server found in a client file.
#[derive(Debug, Clone)]
pub struct FoundServer {
    /// For `~/.claude.json`: the project key of a local-scope server.
    pub project: Option<String>,
    /// The server's name.
    pub name: String,
    /// The entry in Claude Code's shape.
    pub entry: ServerEntry,
}

/// The servers of a parsed client file, in Claude Code's entry shape.
pub fn servers(client: Client, mut value: Value) -> Vec<FoundServer> {
    let mut found = Vec::new();
    let mut add = |project: Option<String>, servers: Option<Value>| {
        let Some(Value::Object(servers)) = servers else {
            return;
        };
        for (name, entry) in servers {
            found.push(FoundServer {
                project: project.clone(),
                name,
                entry: ServerEntry::from_value(normalize(client, entry)),
            });
        }
    };
    add(None, value.get_mut(client.servers_key()).map(Value::take));
    if client == Client::ClaudeCode
        && let Some(Value::Object(projects)) = value.get_mut("projects").map(Value::take)
    {
        for (key, mut project) in projects {
            add(Some(key), project.get_mut("mcpServers").map(Value::take));
        }
    }
    found
}

/// A server found in a client file, borrowed from its text (`scan`).
#[derive(Debug, Clone)]
pub struct FoundMembers<'a> {
    /// For `~/.claude.json`: the project key of a local-scope server.
    pub project: Option<Cow<'a, str>>,
    /// The server's name.
    pub name: Cow<'a, str>,
    /// The entry's members in Claude Code's shape (none for an entry that
    /// is no object, as [`ServerEntry::from_value`] makes it).
    pub entry: Members<'a>,
}

/// [`servers`] of a file read as a [`Node`]: the same servers, in the same
/// order, each normalised the same way.
pub fn servers_of<'a>(client: Client, root: Node<'a>) -> Vec<FoundMembers<'a>> {
    let Node::Object(mut root) = root else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut add = |project: Option<Cow<'a, str>>, servers: Option<Node<'a>>| {
        let Some(Node::Object(servers)) = servers else {
            return;
        };
        for (name, entry) in servers {
            found.push(FoundMembers {
                project: project.clone(),
                name,
                entry: normalize_members(client, entry),
            });
        }
    };
    let servers = take(&mut root, client.servers_key());
    add(None, servers);
    if client == Client::ClaudeCode
        && let Some(Node::Object(projects)) = take(&mut root, "projects")
    {
        for (key, project) in projects {
            let servers = match project {
                Node::Object(mut members) => take(&mut members, "mcpServers"),
                _ => None,
            };
            add(Some(key), servers);
        }
    }
    found
}

/// The member `key` of `members`, taken out: the copy the tree holds is
/// left as `null`, as `Value::take` leaves it.
fn take<'a>(members: &mut Members<'a>, key: &str) -> Option<Node<'a>> {
    members
        .iter_mut()
        .find(|(name, _)| name == key)
        .map(|(_, value)| std::mem::replace(value, Node::Null))
}

/// [`normalize`] of an entry read as a [`Node`]: every step as serde_json's
/// `Map` takes it (`remove` is its `swap_remove`, `insert` keeps a key's
/// place), so the members come out in the same order.
fn normalize_members(client: Client, entry: Node<'_>) -> Members<'_> {
    let Node::Object(mut out) = entry else {
        return Vec::new();
    };
    let position = |out: &Members<'_>, key: &str| out.iter().position(|(name, _)| name == key);
    // Zed: `"command": {"path", "args", "env"}`.
    if let Some(Node::Object(command)) = node::member(&out, "command").cloned() {
        if let Some(at) = position(&out, "command") {
            out.swap_remove(at);
        }
        for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
            if let Some(value) = node::member(&command, from) {
                match position(&out, to) {
                    Some(at) => out[at].1 = value.clone(),
                    None => out.push((Cow::Borrowed(to), value.clone())),
                }
            }
        }
    }
    let had_http_url = position(&out, "httpUrl").is_some();
    for (from, to) in [
        ("serverUrl", "url"),
        ("httpUrl", "url"),
        ("http_headers", "headers"),
    ] {
        if let Some(at) = position(&out, from) {
            let (_, value) = out.swap_remove(at);
            if position(&out, to).is_none() {
                out.push((Cow::Borrowed(to), value));
            }
        }
    }
    if position(&out, "type").is_none()
        && position(&out, "command").is_none()
        && position(&out, "url").is_some()
    {
        let transport = if client == Client::Gemini && !had_http_url {
            "sse"
        } else {
            "http"
        };
        out.push((
            Cow::Borrowed("type"),
            Node::String(Cow::Borrowed(transport)),
        ));
    }
    out
}

/// One entry of `client` in Claude Code's shape: remote entries get a
/// `type`, and each client's own names for url and headers are mapped.
fn normalize(client: Client, entry: Value) -> Value {
    let Value::Object(mut out) = entry else {
        return entry;
    };
    // Zed: `"command": {"path", "args", "env"}`.
    if let Some(Value::Object(command)) = out.get("command").cloned() {
        out.remove("command");
        for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
            if let Some(value) = command.get(from) {
                out.insert(to.to_string(), value.clone());
            }
        }
    }
    let had_http_url = out.contains_key("httpUrl");
    for (from, to) in [
        ("serverUrl", "url"),
        ("httpUrl", "url"),
        ("http_headers", "headers"),
    ] {
        if let Some(value) = out.remove(from) {
            out.entry(to.to_string()).or_insert(value);
        }
    }
    if !out.contains_key("type") && !out.contains_key("command") && out.contains_key("url") {
        let transport = if client == Client::Gemini && !had_http_url {
            "sse"
        } else {
            "http"
        };
        out.insert("type".to_string(), Value::from(transport));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_client_shape_becomes_claude_shape() {
        let zed = json!({"context_servers": {"gh": {"command": {"path": "npx", "args": ["-y"], "env": {"T": "v"}}}}});
        let found = servers(Client::Zed, zed);
        assert_eq!(found[0].entry.command(), Some("npx"));
        assert_eq!(found[0].entry.env(), [("T", "v")]);

        let windsurf = json!({"mcpServers": {"docs": {"serverUrl": "https://x", "headers": {"X-API-Key": "k"}}}});
        let found = servers(Client::Windsurf, windsurf);
        assert_eq!(found[0].entry.url(), Some("https://x"));
        assert!(found[0].entry.transport().is_remote());

        let codex: Value =
            toml::from_str("[mcp_servers.l]\nurl = \"https://x\"\nhttp_headers = { A = \"b\" }\n")
                .unwrap();
        let found = servers(Client::Codex, codex);
        assert_eq!(found[0].entry.headers(), [("A", "b")]);
    }

    /// A client file's text: servers under each client's key, projects of
    /// servers, entries of each client's fields, values of any kind.
    fn client_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        fn object(members: Vec<(&str, String)>) -> String {
            let members: Vec<String> = members
                .into_iter()
                .map(|(key, value)| format!("{key}: {value}"))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        let value = crate::secrets::node::tests::json_text();
        let field = prop::sample::select(
            [
                crate::secrets::node::tests::ENTRY_KEYS.as_slice(),
                &["\"c\\u006fmmand\""],
            ]
            .concat(),
        );
        let strings = prop::collection::vec(
            prop::sample::select(vec![
                "\"--api-key\"",
                "\"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\"",
                "\"${T:-ghp_R2x9TqLm4VbN8cZw1YpK7sHd3FjG6aUe5oIi}\"",
                "\"${env:T}\"",
                "1",
            ]),
            0..4,
        );
        let fieldvalue = prop_oneof![
            value,
            strings
                .clone()
                .prop_map(|items| format!("[{}]", items.join(","))),
            strings.prop_map(|items| {
                let members: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| format!("\"API_KEY_{}\": {item}", index % 3))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ];
        let entry = prop::collection::vec((field, fieldvalue), 0..7).prop_map(object);
        let name = prop::sample::select(vec!["\"a\"", "\"b\"", "\"\\u0061\"", "\"é😀\""]);
        let servers = prop::collection::vec((name, entry), 0..4).prop_map(object);
        let root_key = prop::sample::select(vec![
            "\"mcpServers\"",
            "\"servers\"",
            "\"context_servers\"",
            "\"mcp_servers\"",
            "\"other\"",
        ]);
        let project = prop::sample::select(vec!["\"/p\"", "\"/q\"", "\"/p\\u0020\""]);
        let projects = prop::collection::vec(
            (
                project,
                servers
                    .clone()
                    .prop_map(|servers| format!("{{\"mcpServers\": {servers}, \"x\": 1}}")),
            ),
            0..3,
        )
        .prop_map(object);
        let part = prop_oneof![
            4 => (root_key, servers).prop_map(|(key, servers)| (key, servers)),
            1 => projects.prop_map(|projects| ("\"projects\"", projects)),
        ];
        prop::collection::vec(part, 0..4).prop_map(object)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1500))]

        /// `scan`'s borrowed reading finds what the `Value` path finds, for
        /// every client: the same servers in the same order, each entry
        /// normalised to the same members, the same secrets, the same
        /// placeholder fields and notes, the same guess of whose file it is.
        #[test]
        fn borrowed_servers_are_the_value_servers(
            text in proptest::prop_oneof![crate::secrets::node::tests::json_text(), client_text()],
        ) {
            use crate::config::expansion::may_hold_forms;
            let Ok(value) = crate::mechanics::document::parse_value(&text) else {
                return Ok(());
            };
            let Some(root) = Node::parse(&text) else {
                proptest::prop_assert!(text.contains("$serde_json::private::"));
                return Ok(());
            };
            let path = Path::new("dir/config.json");
            proptest::prop_assert_eq!(guess_client_of(path, &root), guess_client(path, Some(&value)));
            for client in [
                Client::ClaudeCode,
                Client::ClaudeDesktop,
                Client::Cursor,
                Client::Vscode,
                Client::Windsurf,
                Client::Gemini,
                Client::Codex,
                Client::Zed,
            ] {
                let owned = servers(client, value.clone());
                let borrowed = servers_of(client, root.clone());
                proptest::prop_assert_eq!(owned.len(), borrowed.len());
                for (owned, borrowed) in owned.iter().zip(&borrowed) {
                    proptest::prop_assert_eq!(owned.project.as_deref(), borrowed.project.as_deref());
                    proptest::prop_assert_eq!(&owned.name, &borrowed.name);
                    let entry = owned.entry.to_value();
                    proptest::prop_assert_eq!(Node::of_value(&entry), Node::Object(borrowed.entry.clone()));
                    proptest::prop_assert_eq!(
                        crate::secrets::scan_entry(&owned.entry),
                        crate::secrets::scan_entry_members(&borrowed.entry)
                    );
                    let fields = owned.entry.expandable_fields_where(may_hold_forms);
                    proptest::prop_assert_eq!(
                        &fields,
                        &node::expandable_fields_where(&borrowed.entry, may_hold_forms)
                    );
                    proptest::prop_assert_eq!(
                        placeholders::notes_in(client, path, &owned.name, &owned.entry, &fields),
                        placeholders::notes_of_members(client, path, &borrowed.name, &borrowed.entry, &fields)
                    );
                }
            }
        }
    }

    #[test]
    fn claude_json_yields_every_project() {
        let value = json!({"mcpServers": {"u": {"command": "x"}}, "projects": {"/p": {"mcpServers": {"l": {"command": "y"}}}}});
        let found = servers(Client::ClaudeCode, value);
        let names: Vec<(Option<&str>, &str)> = found
            .iter()
            .map(|server| (server.project.as_deref(), server.name.as_str()))
            .collect();
        assert_eq!(names, [(None, "u"), (Some("/p"), "l")]);
    }

    #[test]
    fn codex_trust_is_read_nearest_folder_first() {
        let config: Value = toml::from_str(
            r#"
[projects."/work/repo"]
trust_level = "trusted"

[projects."/work/repo/sub/"]
trust_level = "untrusted"

[projects."/work/other"]
model = "o3"
"#,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        let trust = |dirs: &[&str]| {
            let dirs: Vec<&Path> = dirs.iter().map(Path::new).collect();
            codex_trust(&config, &dirs)
        };
        assert_eq!(trust(&["/work/repo"]), CodexTrust::Trusted);
        assert_eq!(
            trust(&["/work/repo/sub", "/work/repo"]),
            CodexTrust::Untrusted
        );
        assert_eq!(trust(&["/work/wt", "/work/repo"]), CodexTrust::Trusted);
        assert_eq!(trust(&["/work/other"]), CodexTrust::Unknown);
        assert_eq!(trust(&["/work"]), CodexTrust::Unknown);
        assert_eq!(
            codex_trust(&Value::Null, &[Path::new("/")]),
            CodexTrust::Unknown
        );
    }

    #[test]
    fn known_files_lists_a_shared_path_once() {
        let home = Path::new("/home/u");
        let files = known_files(home, &home.join(".config"), home);
        let codex: Vec<&Path> = files
            .iter()
            .filter(|file| file.client == Client::Codex)
            .map(|file| file.path.as_path())
            .collect();
        assert_eq!(codex, [Path::new("/home/u/.codex/config.toml")]);
        let files = known_files(home, &home.join(".config"), Path::new("/p"));
        assert!(
            files
                .iter()
                .any(|file| file.path == Path::new("/p/.codex/config.toml"))
        );
    }

    #[test]
    fn a_file_is_known_by_its_path() {
        let client = |path: &str| client_of_path(Path::new(path));
        assert_eq!(client("/r/.cursor/mcp.json"), Some(Client::Cursor));
        assert_eq!(client(".vscode/mcp.json"), Some(Client::Vscode));
        assert_eq!(client("/r/.codex/config.toml"), Some(Client::Codex));
        assert_eq!(client("/r/.gemini/settings.json"), Some(Client::Gemini));
        assert_eq!(client("/r/.zed/settings.json"), Some(Client::Zed));
        assert_eq!(
            client("/h/.codeium/windsurf/mcp_config.json"),
            Some(Client::Windsurf)
        );
        assert_eq!(
            client("/h/.config/Claude/claude_desktop_config.json"),
            Some(Client::ClaudeDesktop)
        );
        assert_eq!(
            client("/repo/config/claude_desktop_config.json"),
            Some(Client::ClaudeDesktop)
        );
        assert_eq!(client("sub/.mcp.json"), Some(Client::ClaudeCode));
        assert_eq!(client("/r/mcp.json"), None);
        // A path component, not a suffix of a name.
        assert_eq!(client("/r/x.cursor/mcp.json"), None);
    }

    #[test]
    fn jsonc_and_toml_errors_have_positions() {
        let error = parse(Path::new("a.json"), "{\n  \"a\": ,\n}").unwrap_err();
        assert_eq!((error.line, error.column), (2, 8));
        let error = parse(Path::new("c.toml"), "[x\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert_eq!(
            parse(Path::new("v.json"), "// c\n{\"servers\": {},}").unwrap(),
            json!({"servers": {}})
        );
    }
}
