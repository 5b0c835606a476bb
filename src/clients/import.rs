//! Importing another client's servers into Claude Code's entry shape.
//!
//! [`super::servers`] already maps each client's shape (Zed's `command`
//! object, Windsurf's `serverUrl`, ...); this module turns each client's
//! placeholder syntax into Claude Code's `${VAR}`, maps the fields Claude
//! Code has an equivalent for, and notes every field it cannot carry over.
//! Literal values are kept as they are: moving secrets into `.env` is the
//! caller's job.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::{Map, Value};

use super::{Client, servers};
use crate::config::expansion::{
    is_placeholder_only, is_variable_name, placeholder, variable_name_from,
};
use crate::config::model::{Transport, json_kind};

/// One server imported from another client's file.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The server's name, as in the file.
    pub name: String,
    /// The entry in Claude Code's shape, keys in the order `claude mcp add`
    /// writes them: `type, command, args, env` for stdio, `type, url,
    /// headers` for http/sse (`headers` only when there are some), then
    /// `timeout` and the other keys Claude Code knows. When the source entry
    /// is unusable (no `command` nor `url`) the entry is incomplete;
    /// [`crate::config::model::ServerEntry::problems`] says why.
    pub entry: Value,
    /// What could not be carried over, or changes meaning, one sentence
    /// each. Values are never quoted (they may be secrets), except the
    /// default of a VS Code input that is not a password.
    pub notes: Vec<String>,
    /// Whether the client has the server switched off (`disabled: true`,
    /// Codex `enabled = false`): the client does not start it.
    pub disabled: bool,
    /// Why Claude Code cannot run the server as the client does, when a
    /// value only the editor can fill in (the open file, the selection) is
    /// part of it: one sentence.
    pub unusable: Option<String>,
}

/// Choices for [`import_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// The name of the project folder the servers are imported into: the
    /// value of an editor's `${workspaceFolderBasename}`.
    pub project_name: Option<&'a str>,
}

/// Every server of `client`'s parsed file (as [`super::parse`] returns it),
/// in the value's order (file order; sorted for Codex, as `parse` reads TOML
/// tables sorted). For [`Client::ClaudeCode`] only the top-level servers are
/// returned; [`super::servers`] lists the per-project ones of `~/.claude.json`.
pub fn import(client: Client, value: &Value) -> Vec<Imported> {
    import_with(client, value, &ImportOptions::default())
}

/// [`import`] with choices.
pub fn import_with(client: Client, value: &Value, options: &ImportOptions) -> Vec<Imported> {
    let inputs = (client == Client::Vscode).then(|| vscode_inputs(value));
    let raw = value.get(client.servers_key()).and_then(Value::as_object);
    servers(client, value.clone())
        .into_iter()
        .filter(|server| server.project.is_none())
        .map(|server| {
            let raw = raw.and_then(|raw| raw.get(&server.name));
            let source = Source {
                client,
                inputs: inputs.as_ref(),
                project_name: options.project_name,
                remote: false,
            };
            let (entry, notes) = source.entry(server.entry.fields().clone(), raw);
            Imported {
                name: server.name,
                entry,
                notes: notes.notes,
                disabled: client != Client::ClaudeCode && raw.is_some_and(is_disabled),
                unusable: notes.unusable,
            }
        })
        .collect()
}

/// Whether a client entry is switched off: `disabled: true` (Cursor,
/// Windsurf, Cline and others) or `enabled = false` (Codex, Goose).
fn is_disabled(raw: &Value) -> bool {
    raw.get("disabled") == Some(&Value::Bool(true))
        || raw.get("enabled") == Some(&Value::Bool(false))
}

/// Turns one string of `client`'s file into Claude Code's placeholder
/// syntax, with a note for each form that could not be translated or whose
/// meaning changes: Cursor, VS Code and Windsurf `${env:X}` become `${X}`,
/// VS Code `${input:id}` becomes `${ID}`, Gemini CLI `$X` becomes `${X}`,
/// and editor variables become what Claude Code has (`${workspaceFolder}`
/// → `.`, `${userHome}` → `${HOME}`), as in a stdio server's fields.
pub fn translate(client: Client, text: &str) -> (String, Vec<String>) {
    let mut notes = Notes::default();
    let source = Source {
        client,
        inputs: None,
        project_name: None,
        remote: false,
    };
    let text = source.text(text, &mut notes);
    let mut all = notes.notes;
    all.extend(notes.unusable);
    (text, all)
}

/// Notes in order, each once (one input used twice is one note), and the
/// first reason the server cannot run in Claude Code.
#[derive(Default)]
struct Notes {
    notes: Vec<String>,
    unusable: Option<String>,
}

impl Notes {
    fn push(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    fn unusable(&mut self, reason: String) {
        self.unusable.get_or_insert(reason);
    }
}

/// A VS Code `inputs` entry.
#[derive(Debug, Default)]
struct Input {
    description: Option<String>,
    default: Option<String>,
    password: bool,
}

/// The `inputs` of a VS Code file, by id.
fn vscode_inputs(value: &Value) -> HashMap<String, Input> {
    let Some(inputs) = value.get("inputs").and_then(Value::as_array) else {
        return HashMap::new();
    };
    inputs
        .iter()
        .filter_map(|input| {
            let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
            let id = text("id")?;
            let input = Input {
                description: text("description").filter(|text| !text.is_empty()),
                default: text("default"),
                password: input.get("password").and_then(Value::as_bool) == Some(true),
            };
            Some((id, input))
        })
        .collect()
}

/// Compiles one of this module's constant patterns.
fn pattern(source: &str) -> Regex {
    // Invariant: every caller passes a literal pattern that the tests compile.
    Regex::new(source).expect("constant pattern is valid")
}

/// Any `${…}` of an editor: VS Code's resolver and its forks.
static EDITOR_VARIABLE: LazyLock<Regex> = LazyLock::new(|| pattern(r"\$\{([^}]*)\}"));

/// Gemini CLI's `$NAME` or `${…}` (its loader's own pattern, with names
/// limited to those a variable can have).
static GEMINI_VARIABLE: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"\$(?:\{([^}]+)\}|([A-Za-z_][A-Za-z0-9_]*))"));

/// What Claude Code has for one of the editor variables of VS Code and its
/// forks (Cursor, Windsurf) written without a colon, which Claude Code would
/// otherwise read as an environment variable someone has to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditorValue {
    /// The folder the editor has open: Claude Code starts stdio servers in
    /// the folder it was started in (verified with Claude Code 2.1.332,
    /// which also gives them `CLAUDE_PROJECT_DIR` in their environment but
    /// does not expand `${CLAUDE_PROJECT_DIR}` in the entry), so `.`.
    ProjectFolder,
    /// That folder's name.
    ProjectName,
    /// The user's home folder: `${HOME}`, which Claude Code expands.
    Home,
    /// The path separator: `/`.
    Separator,
    /// Part of the editor's state (the open file, the selection): nothing
    /// in Claude Code has a value for it. The text says what it is.
    EditorOnly(&'static str),
}

/// The editor variable `name` (the text between `${` and `}`), if it is one.
fn editor_value(name: &str) -> Option<EditorValue> {
    use EditorValue::{EditorOnly, Home, ProjectFolder, ProjectName, Separator};
    Some(match name {
        "workspaceFolder" | "workspaceRoot" | "cwd" => ProjectFolder,
        "workspaceFolderBasename" => ProjectName,
        "userHome" => Home,
        "pathSeparator" | "/" => Separator,
        "file"
        | "fileWorkspaceFolder"
        | "relativeFile"
        | "relativeFileDirname"
        | "fileBasename"
        | "fileBasenameNoExtension"
        | "fileExtname"
        | "fileDirname"
        | "fileDirnameBasename" => EditorOnly("the file open in the editor"),
        "lineNumber" | "columnNumber" | "selectedText" => {
            EditorOnly("where the cursor is in the editor")
        }
        "execPath" => EditorOnly("the editor's own program"),
        "defaultBuildTask" => EditorOnly("the editor's build task"),
        _ => return None,
    })
}

/// Variables every process already has: an input named `path` must not
/// become `${PATH}`.
const PROCESS_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "USERNAME",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "TERM",
    "HOSTNAME",
    "USERPROFILE",
    "APPDATA",
];

/// Whether `name` is a variable every process already has (`HOME`,
/// `PATH`, …): nothing anyone needs to be asked to set.
pub fn is_process_variable(name: &str) -> bool {
    PROCESS_VARIABLES.contains(&name)
}

/// Claude Code keys carried over from Claude-shaped files, after the ones
/// built here, in Claude Code's order.
const CLAUDE_STDIO_EXTRAS: &[&str] = &["alwaysLoad", "role"];
const CLAUDE_REMOTE_EXTRAS: &[&str] = &["tools", "alwaysLoad", "role", "toolPermissions"];

/// One client file being imported: the client, for VS Code its inputs, and
/// while one entry is read, whether it is a remote server's.
#[derive(Clone, Copy)]
struct Source<'a> {
    client: Client,
    inputs: Option<&'a HashMap<String, Input>>,
    /// The value of `${workspaceFolderBasename}`.
    project_name: Option<&'a str>,
    /// Translating a remote server's `url` or headers: names made here
    /// avoid the ones Claude Code sends empty there.
    remote: bool,
}

impl Source<'_> {
    /// One string in Claude Code's placeholder syntax.
    fn text(self, text: &str, notes: &mut Notes) -> String {
        if !text.contains('$') {
            return text.to_owned();
        }
        match self.client {
            Client::ClaudeCode => text.to_owned(),
            Client::Cursor | Client::Vscode | Client::Windsurf => EDITOR_VARIABLE
                .replace_all(text, |captures: &Captures<'_>| {
                    self.editor_variable(&captures[0], &captures[1], notes)
                })
                .into_owned(),
            Client::Gemini => GEMINI_VARIABLE
                .replace_all(text, |captures: &Captures<'_>| {
                    let whole = &captures[0];
                    if let Some(name) = captures.get(2) {
                        let braced = placeholder(name.as_str());
                        // `$TMP` is a variable to Gemini CLI and plain text
                        // to Claude Code: the change is worth a word.
                        if whole != braced {
                            notes.push(format!(
                                "Gemini CLI's `{whole}` became `{braced}`, the form Claude Code expands"
                            ));
                        }
                        return braced;
                    }
                    if !is_placeholder_only(whole) {
                        notes.push(format!(
                            "`{whole}` left as is: neither Gemini CLI nor Claude Code expands it"
                        ));
                    }
                    whole.to_owned()
                })
                .into_owned(),
            Client::ClaudeDesktop | Client::Codex | Client::Zed => {
                for reference in crate::config::expansion::references(text) {
                    notes.push(self.now_expanded(&text[reference.span]));
                }
                text.to_owned()
            }
        }
    }

    /// The note for a `${VAR}` that the client passed on literally.
    fn now_expanded(self, whole: &str) -> String {
        format!(
            "`{whole}` was passed literally by {} but Claude Code expands it",
            self.client.title()
        )
    }

    /// One `${inner}` of Cursor, VS Code or Windsurf.
    fn editor_variable(self, whole: &str, inner: &str, notes: &mut Notes) -> String {
        if let Some(name) = inner.strip_prefix("env:") {
            if is_variable_name(name) {
                return placeholder(name);
            }
            notes.push(format!(
                "`{whole}` left as is: `{name}` is not a variable name Claude Code can expand"
            ));
            return whole.to_owned();
        }
        if self.client == Client::Vscode
            && let Some(id) = inner.strip_prefix("input:")
        {
            return self.input(whole, id, notes);
        }
        if self.client == Client::Windsurf && inner.starts_with("file:") {
            notes.push(format!(
                "`{whole}` left as is: Claude Code cannot read a value from a file; set a variable instead"
            ));
            return whole.to_owned();
        }
        if let Some(value) = editor_value(inner) {
            return self.editor_value(whole, value, notes);
        }
        if is_placeholder_only(whole) {
            notes.push(self.now_expanded(whole));
            return whole.to_owned();
        }
        notes.push(format!(
            "{} variable `{whole}` left as is: Claude Code has no such variable",
            self.client.title()
        ));
        whole.to_owned()
    }

    /// An editor variable as Claude Code gets it.
    fn editor_value(self, whole: &str, value: EditorValue, notes: &mut Notes) -> String {
        let client = self.client.title();
        let became = |notes: &mut Notes, text: &str, why: &str| {
            notes.push(format!("{client}'s `{whole}` became `{text}`{why}"));
            text.to_owned()
        };
        match value {
            EditorValue::ProjectFolder if self.remote => {
                notes.unusable(format!(
                    "`{whole}` is the folder open in {client}, which means nothing to a remote server"
                ));
                whole.to_owned()
            }
            EditorValue::ProjectFolder => became(
                notes,
                ".",
                ": Claude Code starts stdio servers in the folder it was started in (the project)",
            ),
            EditorValue::ProjectName => match self.project_name {
                // A name holding `$` could read as a placeholder.
                Some(name) if !name.is_empty() && !name.contains('$') => {
                    became(notes, name, ", the project folder's name")
                }
                _ => {
                    notes.unusable(format!(
                        "`{whole}` is the name of the folder open in {client}, and the project's name is not known"
                    ));
                    whole.to_owned()
                }
            },
            EditorValue::Home => became(notes, "${HOME}", ""),
            EditorValue::Separator => became(notes, "/", ""),
            EditorValue::EditorOnly(what) => {
                notes.unusable(format!(
                    "`{whole}` is {what}, which {client} fills in and Claude Code has no value for"
                ));
                whole.to_owned()
            }
        }
    }

    /// VS Code's `${input:id}`: the editor prompts for it, Claude Code reads
    /// it from the environment.
    fn input(self, whole: &str, id: &str, notes: &mut Notes) -> String {
        let Some(mut name) = variable_name_from(id) else {
            notes.push(format!(
                "`{whole}` left as is: no variable name can be made from the input id"
            ));
            return whole.to_owned();
        };
        let mut renamed = String::new();
        if PROCESS_VARIABLES.contains(&name.as_str()) {
            renamed = format!(" (not `${{{name}}}`, which every process already has)");
            name = format!("INPUT_{name}");
        }
        let safe = crate::config::claude_code::blanked::remote_safe_name(&name, "");
        if self.remote && safe != name {
            renamed = format!(
                " (not `${{{name}}}`, which Claude Code 2.1.332 sends empty to remote servers)"
            );
            name = safe;
        }
        let input = self.inputs.and_then(|inputs| inputs.get(id));
        let described = input
            .and_then(|input| input.description.as_deref())
            .map(|description| format!(" ({description})"))
            .unwrap_or_default();
        let plain = placeholder(&name);
        let (text, tail) = match input {
            None if self.inputs.is_some() => (plain, "; the file has no `inputs` entry for it"),
            None => (plain, ""),
            Some(Input { default: None, .. }) => (plain, ""),
            // A password's default would be a secret in a shared file.
            Some(Input { password: true, .. }) => {
                (plain, "; its default was not carried over (a password)")
            }
            // Claude Code's default ends at the first `}`.
            Some(Input {
                default: Some(default),
                ..
            }) if default.contains('}') => {
                (plain, "; its default was not carried over (it holds `}`)")
            }
            Some(Input {
                default: Some(default),
                ..
            }) => (format!("${{{name}:-{default}}}"), ""),
        };
        notes.push(format!(
            "VS Code input `{id}`{described} became `{text}`{renamed}{tail}"
        ));
        text
    }

    /// One entry (shape already mapped by `normalize`) in Claude Code's shape.
    fn entry(self, mut fields: Map<String, Value>, raw: Option<&Value>) -> (Value, Notes) {
        let mut notes = Notes::default();
        if let Some(raw) = raw.filter(|raw| !raw.is_object()) {
            notes.push(format!(
                "the entry is {}, not an object; nothing to import",
                json_kind(raw)
            ));
            return (Value::Object(Map::new()), notes);
        }
        self.prefer_own_keys(&mut fields, raw, &mut notes);
        let transport = take_transport(&mut fields, &mut notes);
        // Editor paths mean something only where a process is started.
        let this = Self {
            remote: transport.is_remote(),
            ..self
        };
        this.shaped(transport, fields, notes)
    }

    /// The entry for a known transport, its `type` already taken out.
    fn shaped(
        self,
        transport: Transport,
        mut fields: Map<String, Value>,
        mut notes: Notes,
    ) -> (Value, Notes) {
        let mut entry = Map::new();
        entry.insert("type".into(), Value::from(transport.as_str()));
        let claude_shaped = matches!(self.client, Client::ClaudeCode | Client::ClaudeDesktop);
        let carry =
            |entry: &mut Map<String, Value>, fields: &mut Map<String, Value>, keys: &[&str]| {
                for key in keys {
                    if claude_shaped && let Some(value) = fields.shift_remove(*key) {
                        entry.insert((*key).to_owned(), value);
                    }
                }
            };
        match transport {
            Transport::Stdio => {
                match fields.shift_remove("command") {
                    Some(Value::String(command)) if !command.is_empty() => {
                        entry.insert("command".into(), self.text(&command, &mut notes).into());
                    }
                    None | Some(Value::String(_)) => {
                        notes.push("no `command`: Claude Code cannot start this server".into());
                    }
                    Some(other) => notes.push(format!(
                        "`command` is {}, not a string; Claude Code cannot start this server",
                        json_kind(&other)
                    )),
                }
                let args = self.args(fields.shift_remove("args"), &mut notes);
                entry.insert("args".into(), Value::Array(args));
                let mut env = self.strings(fields.shift_remove("env"), "env", &mut notes);
                if self.client == Client::Codex {
                    codex_env_vars(&mut fields, &mut env, &mut notes);
                }
                entry.insert("env".into(), Value::Object(env));
                if let Some(timeout) = self.timeout(&mut fields, &mut notes) {
                    entry.insert("timeout".into(), timeout);
                }
                carry(&mut entry, &mut fields, CLAUDE_STDIO_EXTRAS);
            }
            Transport::Http | Transport::Sse | Transport::Ws => {
                let remote = Source {
                    remote: true,
                    ..self
                };
                match fields.shift_remove("url") {
                    Some(Value::String(url)) if !url.is_empty() => {
                        if let Some(scheme) =
                            ["unix:", "pipe:"].iter().find(|s| url.starts_with(**s))
                        {
                            notes.push(format!(
                                "`url` is a `{scheme}` address, which Claude Code cannot connect to"
                            ));
                        }
                        entry.insert("url".into(), remote.text(&url, &mut notes).into());
                    }
                    None | Some(Value::String(_)) => {
                        notes.push("no `url`: Claude Code cannot connect to this server".into());
                    }
                    Some(other) => notes.push(format!(
                        "`url` is {}, not a string; Claude Code cannot connect to this server",
                        json_kind(&other)
                    )),
                }
                let mut headers =
                    remote.strings(fields.shift_remove("headers"), "headers", &mut notes);
                if self.client == Client::Codex {
                    codex_headers(&mut fields, &mut headers, &mut notes);
                }
                if !headers.is_empty() {
                    entry.insert("headers".into(), Value::Object(headers));
                }
                carry(&mut entry, &mut fields, &["headersHelper"]);
                if let Some(oauth) = self.oauth(&mut fields, &mut notes) {
                    entry.insert("oauth".into(), oauth);
                }
                if let Some(timeout) = self.timeout(&mut fields, &mut notes) {
                    entry.insert("timeout".into(), timeout);
                }
                carry(&mut entry, &mut fields, CLAUDE_REMOTE_EXTRAS);
            }
            Transport::Sdk | Transport::Unknown(_) => {
                carry(&mut entry, &mut fields, &["name"]);
            }
        }
        let remote = transport.is_remote();
        for (key, value) in &fields {
            notes.push(self.dropped(key, value, remote));
        }
        if remote {
            blanked_note(&entry, &mut notes);
        }
        (Value::Object(entry), notes)
    }

    /// Windsurf's `serverUrl`, Gemini CLI's `httpUrl` and Codex's
    /// `http_headers` win over a `url`/`headers` beside them, as in those
    /// clients; `normalize` keeps the other one.
    fn prefer_own_keys(
        self,
        fields: &mut Map<String, Value>,
        raw: Option<&Value>,
        notes: &mut Notes,
    ) {
        let (own, claude) = match self.client {
            Client::Windsurf => ("serverUrl", "url"),
            Client::Gemini => ("httpUrl", "url"),
            Client::Codex => ("http_headers", "headers"),
            _ => return,
        };
        let Some(raw) = raw else { return };
        if let (Some(value), Some(_)) = (raw.get(own), raw.get(claude)) {
            fields.insert(claude.to_owned(), value.clone());
            notes.push(format!(
                "`{claude}` dropped: {} uses `{own}` when both are set",
                self.client.title()
            ));
        }
    }

    /// `args` as strings.
    fn args(self, args: Option<Value>, notes: &mut Notes) -> Vec<Value> {
        match args {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| self.string(item, &format!("args[{index}]"), notes))
                .map(Value::from)
                .collect(),
            Some(other) => {
                notes.push(format!(
                    "`args` dropped: it is {}, not an array",
                    json_kind(&other)
                ));
                Vec::new()
            }
        }
    }

    /// `env` or `headers` as a map of strings.
    fn strings(self, value: Option<Value>, key: &str, notes: &mut Notes) -> Map<String, Value> {
        match value {
            None => Map::new(),
            Some(Value::Object(members)) => members
                .into_iter()
                .filter_map(|(name, value)| {
                    let text = self.string(value, &format!("{key}.{name}"), notes)?;
                    Some((name, Value::from(text)))
                })
                .collect(),
            Some(other) => {
                notes.push(format!(
                    "`{key}` dropped: it is {}, not an object",
                    json_kind(&other)
                ));
                Map::new()
            }
        }
    }

    /// One string field, translated; numbers and booleans become strings, as
    /// Claude Code takes only strings.
    fn string(self, value: Value, field: &str, notes: &mut Notes) -> Option<String> {
        match value {
            Value::String(text) => Some(self.text(&text, notes)),
            Value::Number(_) | Value::Bool(_) => {
                notes.push(format!(
                    "`{field}` was {}; written as a string",
                    json_kind(&value)
                ));
                Some(value.to_string())
            }
            other => {
                notes.push(format!(
                    "`{field}` dropped: it is {}, not a string",
                    json_kind(&other)
                ));
                None
            }
        }
    }

    /// Claude Code's `timeout` (milliseconds) from the client's own key.
    fn timeout(self, fields: &mut Map<String, Value>, notes: &mut Notes) -> Option<Value> {
        let (key, scale) = match self.client {
            Client::Codex if fields.contains_key("startup_timeout_sec") => {
                ("startup_timeout_sec", 1000.0)
            }
            Client::Codex => ("startup_timeout_ms", 1.0),
            // Gemini CLI's `timeout` is in milliseconds too.
            Client::Gemini | Client::ClaudeCode | Client::ClaudeDesktop => ("timeout", 1.0),
            _ => return None,
        };
        let value = fields.shift_remove(key)?;
        let milliseconds = value
            .as_f64()
            .map(|number| (number * scale).round())
            .filter(|ms| *ms >= 1.0 && *ms <= u64::MAX as f64);
        let Some(milliseconds) = milliseconds else {
            notes.push(format!("`{key}` dropped: it is not a positive number"));
            return None;
        };
        // Bounds checked above; the cast keeps whole milliseconds.
        let milliseconds = milliseconds as u64;
        if milliseconds < 1000 {
            notes.push(format!(
                "`timeout` of {milliseconds} ms is below Claude Code's 1000 ms minimum, so Claude Code ignores it"
            ));
        }
        Some(Value::from(milliseconds))
    }

    /// Claude Code's `oauth` from Cursor's `auth` or Gemini CLI's `oauth`:
    /// only the client id has a place (Claude Code keeps client secrets out
    /// of its config and never expands variables there).
    fn oauth(self, fields: &mut Map<String, Value>, notes: &mut Notes) -> Option<Value> {
        let (key, id_key, secret_key) = match self.client {
            Client::ClaudeCode | Client::ClaudeDesktop => return fields.shift_remove("oauth"),
            Client::Cursor => ("auth", "CLIENT_ID", "CLIENT_SECRET"),
            Client::Gemini => ("oauth", "clientId", "clientSecret"),
            _ => return None,
        };
        let value = fields.shift_remove(key)?;
        let Value::Object(members) = value else {
            notes.push(format!(
                "`{key}` dropped: it is {}, not an object",
                json_kind(&value)
            ));
            return None;
        };
        let mut oauth = Map::new();
        for (member, value) in members {
            match (member.as_str(), value) {
                (id, Value::String(client_id)) if id == id_key && !client_id.contains('$') => {
                    oauth.insert("clientId".into(), Value::from(client_id));
                }
                (id, _) if id == id_key => notes.push(format!(
                    "`{key}.{member}` dropped: Claude Code takes a literal client id and expands no variables in `oauth`"
                )),
                (secret, _) if secret == secret_key => notes.push(format!(
                    "`{key}.{member}` dropped: Claude Code keeps OAuth client secrets out of its config; pass it to `claude mcp add --client-secret`"
                )),
                ("enabled", _) if self.client == Client::Gemini => notes.push(format!(
                    "`{key}.{member}` dropped: Claude Code starts OAuth when the server asks for it"
                )),
                _ => notes.push(format!("`{key}.{member}` dropped: Claude Code has no such OAuth setting")),
            }
        }
        (!oauth.is_empty()).then_some(Value::Object(oauth))
    }

    /// Whether a `cwd` value names the project folder itself.
    fn is_project_folder(self, value: &Value) -> bool {
        let Some(text) = value.as_str() else {
            return false;
        };
        // Other clients resolve a relative `cwd` against their own folders.
        if !matches!(
            self.client,
            Client::Cursor | Client::Vscode | Client::Windsurf
        ) {
            return false;
        }
        match text.trim_end_matches(['/', '\\']) {
            "." => true,
            folder => {
                folder
                    .strip_prefix("${")
                    .and_then(|rest| rest.strip_suffix('}'))
                    .and_then(editor_value)
                    == Some(EditorValue::ProjectFolder)
            }
        }
    }

    /// The note for a key that was not carried over.
    fn dropped(self, key: &str, value: &Value, remote: bool) -> String {
        let client = self.client.title();
        let codex = self.client == Client::Codex;
        let assign = if codex { " = " } else { ": " };
        match key {
            "envFile" => {
                "`envFile` is not supported by Claude Code; its variables must be set another way".into()
            }
            "disabled" if value == &Value::Bool(true) => {
                "`disabled: true` dropped; the server will be enabled in Claude Code".into()
            }
            "enabled" if value == &Value::Bool(false) => format!(
                "{client} `enabled{assign}false` dropped; the server will be enabled in Claude Code"
            ),
            "disabled" | "enabled" if value.is_boolean() => {
                format!("`{key}{assign}{value}` dropped (the default)")
            }
            "enabled_tools" | "disabled_tools" | "includeTools" | "excludeTools"
            | "disabledTools" | "alwaysAllow" => format!(
                "{client} `{key}` dropped: Claude Code has no per-server tool list; allow or deny tools with permission rules (`mcp__<server>__<tool>`)"
            ),
            "cwd" if self.is_project_folder(value) => {
                "`cwd` dropped: Claude Code starts stdio servers in the folder it was started in (the project), as `cwd` asks".into()
            }
            "cwd" => "`cwd` dropped: Claude Code starts servers in its own working directory".into(),
            "tool_timeout_sec" => format!(
                "{client} `{key}` dropped: Claude Code sets one tool timeout for all servers (`MCP_TOOL_TIMEOUT`)"
            ),
            "trust" => format!(
                "{client} `trust` dropped: Claude Code asks before tool calls unless permission rules allow them"
            ),
            "settings" if self.client == Client::Zed => {
                "Zed `settings` dropped: they configure a Zed extension, which Claude Code cannot run".into()
            }
            "source" if self.client == Client::Zed => "Zed `source` dropped".into(),
            "env" if remote => "`env` dropped: Claude Code passes no environment to remote servers".into(),
            "headers" if !remote => "`headers` dropped: stdio servers take no headers".into(),
            "url" if !remote => "`url` dropped: the server is started with `command`".into(),
            "command" | "args" if remote => format!("`{key}` dropped: the server is reached at `url`"),
            "env_vars" if codex && remote => {
                "Codex `env_vars` dropped: it applies only to stdio servers".into()
            }
            "bearer_token_env_var" | "env_http_headers" | "bearer_token" if codex && !remote => {
                format!("Codex `{key}` dropped: it applies only to HTTP servers")
            }
            "startup_timeout_ms" if codex => {
                "Codex `startup_timeout_ms` dropped: `startup_timeout_sec` is used".into()
            }
            _ => format!("`{key}` is not supported by Claude Code; dropped"),
        }
    }
}

/// A note for each variable of a remote entry's `url` and headers that
/// Claude Code 2.1.332 sends empty (the client's own names, kept as they are).
fn blanked_note(entry: &Map<String, Value>, notes: &mut Notes) {
    let entry = crate::config::model::ServerEntry::from_value(Value::Object(entry.clone()));
    for (field, value) in entry.expandable_fields() {
        for reference in crate::config::expansion::references(value) {
            if crate::config::claude_code::blanked::blanked_toward_remote(&reference.name) {
                notes.push(format!(
                    "`${{{}}}` in `{field}`: Claude Code 2.1.332 sends it empty to remote servers; rename the variable",
                    reference.name
                ));
            }
        }
    }
}

/// The transport, from `type` (taken out of `fields`), else from what the
/// entry holds; `normalize` has already typed entries with only a `url`.
fn take_transport(fields: &mut Map<String, Value>, notes: &mut Notes) -> Transport {
    let inferred = if !fields.contains_key("command") && fields.contains_key("url") {
        Transport::Http
    } else {
        Transport::Stdio
    };
    match fields.shift_remove("type") {
        None => inferred,
        Some(Value::String(kind)) => match Transport::parse(&kind) {
            // Cline's and Goose's spellings of streamable HTTP.
            Transport::Unknown(_) if kind == "streamableHttp" || kind == "streamable_http" => {
                Transport::Http
            }
            Transport::Unknown(_) => {
                notes.push(format!(
                    "`type: {kind}` is not a Claude Code transport; imported as {inferred}"
                ));
                inferred
            }
            known => known,
        },
        Some(other) => {
            notes.push(format!(
                "`type` is {}, not a string; imported as {inferred}",
                json_kind(&other)
            ));
            inferred
        }
    }
}

/// Codex's `env_vars = ["X"]` (forwarded from Codex's environment) as
/// `env.X = "${X}"`; a literal `env.X` wins, as it does in Codex.
fn codex_env_vars(
    fields: &mut Map<String, Value>,
    env: &mut Map<String, Value>,
    notes: &mut Notes,
) {
    let Some(value) = fields.shift_remove("env_vars") else {
        return;
    };
    let Value::Array(names) = value else {
        notes.push(format!(
            "Codex `env_vars` dropped: it is {}, not an array",
            json_kind(&value)
        ));
        return;
    };
    for (index, name) in names.into_iter().enumerate() {
        match name.as_str() {
            // Not quoted: a value put here by mistake may be a secret.
            Some(name) if !is_variable_name(name) => notes.push(format!(
                "Codex `env_vars[{index}]` dropped: it is not a variable name Claude Code can expand"
            )),
            Some(name) if env.contains_key(name) => notes.push(format!(
                "Codex `env_vars` entry `{name}` dropped: `env.{name}` is set literally"
            )),
            Some(name) => {
                env.insert(name.to_owned(), Value::from(placeholder(name)));
            }
            None => notes.push(format!(
                "Codex `env_vars[{index}]` dropped: it is {}, not a string",
                json_kind(&name)
            )),
        }
    }
}

/// Codex's `env_http_headers = {H = "X"}` as `H: ${X}` and
/// `bearer_token_env_var = "X"` as `Authorization: Bearer ${X}`; headers
/// already set literally (`http_headers`) are kept.
fn codex_headers(
    fields: &mut Map<String, Value>,
    headers: &mut Map<String, Value>,
    notes: &mut Notes,
) {
    let has = |headers: &Map<String, Value>, name: &str| {
        headers.keys().any(|key| key.eq_ignore_ascii_case(name))
    };
    match fields.shift_remove("env_http_headers") {
        None => {}
        Some(Value::Object(members)) => {
            for (header, variable) in members {
                match variable.as_str() {
                    // Not quoted: a value put here by mistake may be a secret.
                    Some(variable) if !is_variable_name(variable) => notes.push(format!(
                        "Codex `env_http_headers.{header}` dropped: it is not a variable name Claude Code can expand"
                    )),
                    Some(_) if has(headers, &header) => notes.push(format!(
                        "Codex `env_http_headers.{header}` dropped: `http_headers` sets it literally"
                    )),
                    Some(variable) => {
                        headers.insert(header, Value::from(placeholder(variable)));
                    }
                    None => notes.push(format!(
                        "Codex `env_http_headers.{header}` dropped: it is {}, not a variable name",
                        json_kind(&variable)
                    )),
                }
            }
        }
        Some(other) => notes.push(format!(
            "Codex `env_http_headers` dropped: it is {}, not a table",
            json_kind(&other)
        )),
    }
    for key in ["bearer_token_env_var", "bearer_token"] {
        let Some(value) = fields.shift_remove(key) else {
            continue;
        };
        let token = match (key, value.as_str()) {
            (_, None) => {
                notes.push(format!(
                    "Codex `{key}` dropped: it is {}, not a string",
                    json_kind(&value)
                ));
                continue;
            }
            ("bearer_token_env_var", Some(name)) if !is_variable_name(name) => {
                notes.push(format!(
                    "Codex `{key}` dropped: it is not a variable name Claude Code can expand"
                ));
                continue;
            }
            ("bearer_token_env_var", Some(name)) => placeholder(name),
            (_, Some(token)) => {
                // Codex refuses an inline token, but the intent is plain;
                // the caller moves the literal into `.env`.
                notes.push(
                    "Codex `bearer_token` (which Codex rejects) became `headers.Authorization`"
                        .into(),
                );
                token.to_owned()
            }
        };
        if has(headers, "Authorization") {
            notes.push(format!(
                "Codex `{key}` dropped: an `Authorization` header is already set"
            ));
        } else {
            headers.insert(
                "Authorization".into(),
                Value::from(format!("Bearer {token}")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn fixture(name: &str, text: &str) -> Value {
        super::super::parse(Path::new(name), text)
            .unwrap_or_else(|error| panic!("fixture `{name}` parses: {error}"))
    }

    /// (name, entry, notes) of every server, for one comparison.
    fn imported(client: Client, value: &Value) -> Vec<(String, Value, Vec<String>)> {
        import(client, value)
            .into_iter()
            .map(|server| (server.name, server.entry, server.notes))
            .collect()
    }

    fn row(name: &str, entry: Value, notes: &[&str]) -> (String, Value, Vec<String>) {
        (
            name.to_owned(),
            entry,
            notes.iter().map(|note| (*note).to_owned()).collect(),
        )
    }

    fn translated(client: Client, text: &str) -> (String, Vec<String>) {
        translate(client, text)
    }

    fn result(text: &str, notes: &[&str]) -> (String, Vec<String>) {
        (
            text.to_owned(),
            notes.iter().map(|note| (*note).to_owned()).collect(),
        )
    }

    #[test]
    fn patterns_compile() {
        for regex in [&EDITOR_VARIABLE, &GEMINI_VARIABLE] {
            assert!(regex.captures_len() > 1);
        }
    }

    #[test]
    fn claude_desktop_values_are_literal() {
        let value = fixture(
            "claude_desktop_config.json",
            include_str!("../../tests/clients/import/claude_desktop_config.json"),
        );
        assert_eq!(
            imported(Client::ClaudeDesktop, &value),
            [
                row(
                    "filesystem",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/dana/Documents", "/Users/dana/Desktop"], "env": {}}),
                    &[],
                ),
                row(
                    "github",
                    json!({"type": "stdio", "command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_9xS4cbhOAlXLOQAauD7swUxFacOSeprn87sF"}}),
                    &[],
                ),
                row(
                    "postgres",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://app:${PGPASSWORD}@localhost:5432/app"], "env": {}}),
                    &[
                        "`${PGPASSWORD}` was passed literally by Claude Desktop but Claude Code expands it",
                        "`cwd` dropped: Claude Code starts servers in its own working directory",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn cursor_env_placeholders_become_claude_ones() {
        let value = fixture(
            "mcp.json",
            include_str!("../../tests/clients/import/cursor.mcp.json"),
        );
        assert_eq!(
            imported(Client::Cursor, &value),
            [
                row(
                    "linear",
                    json!({"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}),
                    &[],
                ),
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_1eRhU7xG0Y2aITYzjvCnUrvxDa41Lytrohaf"}}),
                    &[],
                ),
                row(
                    "db",
                    json!({"type": "stdio", "command": "./bin/db-mcp", "args": ["--config", "${HOME}/.config/db-mcp.toml", "--port", "5432"], "env": {"DATABASE_URL": "postgres://${DB_USER}:${DB_PASSWORD}@localhost:5432/app"}}),
                    &[
                        "Cursor's `${workspaceFolder}` became `.`: Claude Code starts stdio servers in the folder it was started in (the project)",
                        "Cursor's `${userHome}` became `${HOME}`",
                        "`args[3]` was a number; written as a string",
                        "`envFile` is not supported by Claude Code; its variables must be set another way",
                    ],
                ),
                row(
                    "sentry",
                    json!({"type": "http", "url": "https://mcp.sentry.dev/mcp", "oauth": {"clientId": "cursor-sentry-7f3a"}}),
                    &[
                        "`auth.CLIENT_SECRET` dropped: Claude Code keeps OAuth client secrets out of its config; pass it to `claude mcp add --client-secret`",
                        "`auth.scopes` dropped: Claude Code has no such OAuth setting",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn remote_names_claude_code_blanks_are_renamed_or_pointed_out() {
        let value = json!({
            "servers": {
                "registry": {"type": "http", "url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer ${input:npm_token}", "X-Vault": "${env:VAULT_TOKEN}"}},
                "local": {"command": "npx", "env": {"NPM_TOKEN": "${input:npm_token}"}}
            },
            "inputs": [{"id": "npm_token", "type": "promptString", "password": true}]
        });
        assert_eq!(
            imported(Client::Vscode, &value),
            [
                row(
                    "registry",
                    json!({"type": "http", "url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer ${MCP_NPM_TOKEN}", "X-Vault": "${VAULT_TOKEN}"}}),
                    &[
                        "VS Code input `npm_token` became `${MCP_NPM_TOKEN}` (not `${NPM_TOKEN}`, which Claude Code 2.1.332 sends empty to remote servers)",
                        "`${VAULT_TOKEN}` in `headers.X-Vault`: Claude Code 2.1.332 sends it empty to remote servers; rename the variable",
                    ],
                ),
                row(
                    "local",
                    json!({"type": "stdio", "command": "npx", "args": [], "env": {"NPM_TOKEN": "${NPM_TOKEN}"}}),
                    &["VS Code input `npm_token` became `${NPM_TOKEN}`"],
                ),
            ]
        );
    }

    #[test]
    fn vscode_inputs_become_variables() {
        let value = fixture(
            "mcp.json",
            include_str!("../../tests/clients/import/vscode.mcp.json"),
        );
        assert_eq!(
            imported(Client::Vscode, &value),
            [
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}", "LOG_LEVEL": "${LOG_LEVEL:-info}"}}),
                    &[
                        "VS Code input `gh-token` (GitHub Personal Access Token) became `${GH_TOKEN}`",
                        "VS Code input `log-level` (Server log level) became `${LOG_LEVEL:-info}`",
                    ],
                ),
                row(
                    "github-remote",
                    json!({"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ghp_0Fx2Xf5O9HirTo6iYjHCQvrkaLCz9OAHPJ7l"}}),
                    &[],
                ),
                row(
                    "playwright",
                    json!({"type": "stdio", "command": "npx", "args": ["@playwright/mcp@latest", "--output-dir", "./.playwright"], "env": {"DEBUG": "${PW_DEBUG}"}}),
                    &[
                        "VS Code's `${workspaceFolder}` became `.`: Claude Code starts stdio servers in the folder it was started in (the project)",
                        "`envFile` is not supported by Claude Code; its variables must be set another way",
                        "`dev` is not supported by Claude Code; dropped",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn vscode_input_edge_cases() {
        let value = json!({
            "inputs": [
                {"type": "promptString", "id": "path", "description": ""},
                {"type": "promptString", "id": "key", "password": true, "default": "sk-test"},
            ],
            "servers": {"s": {"command": "x", "args": ["${input:path}", "${input:key}", "${input:missing}", "${input:--}"]}},
        });
        assert_eq!(
            imported(Client::Vscode, &value),
            [row(
                "s",
                json!({"type": "stdio", "command": "x", "args": ["${INPUT_PATH}", "${KEY}", "${MISSING}", "${input:--}"], "env": {}}),
                &[
                    "VS Code input `path` became `${INPUT_PATH}` (not `${PATH}`, which every process already has)",
                    "VS Code input `key` became `${KEY}`; its default was not carried over (a password)",
                    "VS Code input `missing` became `${MISSING}`; the file has no `inputs` entry for it",
                    "`${input:--}` left as is: no variable name can be made from the input id",
                ],
            )]
        );
    }

    #[test]
    fn windsurf_server_url_and_file_placeholders() {
        let value = fixture(
            "mcp_config.json",
            include_str!("../../tests/clients/import/windsurf.mcp_config.json"),
        );
        assert_eq!(
            imported(Client::Windsurf, &value),
            [
                row(
                    "docs",
                    json!({"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-API-Key": "${DOCS_API_KEY}"}}),
                    &[],
                ),
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_WFCqa1mz6seaSdzJgycyouQAw7EAqJz6HDBs"}}),
                    &[
                        "`disabled: true` dropped; the server will be enabled in Claude Code",
                        "Windsurf `disabledTools` dropped: Claude Code has no per-server tool list; allow or deny tools with permission rules (`mcp__<server>__<tool>`)",
                    ],
                ),
                row(
                    "notes",
                    json!({"type": "stdio", "command": "node", "args": ["/opt/notes-mcp/index.js"], "env": {"NOTES_TOKEN": "${file:/run/secrets/notes_token}", "NOTES_USER": "${USER}"}}),
                    &[
                        "`${file:/run/secrets/notes_token}` left as is: Claude Code cannot read a value from a file; set a variable instead",
                    ],
                ),
            ]
        );
        let both = json!({"mcpServers": {"d": {"serverUrl": "https://a", "url": "https://b"}}});
        assert_eq!(
            imported(Client::Windsurf, &both),
            [row(
                "d",
                json!({"type": "http", "url": "https://a"}),
                &["`url` dropped: Windsurf uses `serverUrl` when both are set"],
            )]
        );
    }

    #[test]
    fn gemini_bare_variables_get_braces() {
        let value = fixture(
            "settings.json",
            include_str!("../../tests/clients/import/gemini.settings.json"),
        );
        assert_eq!(
            imported(Client::Gemini, &value),
            [
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}),
                    &[
                        "Gemini CLI's `$GITHUB_TOKEN` became `${GITHUB_TOKEN}`, the form Claude Code expands",
                        "Gemini CLI `trust` dropped: Claude Code asks before tool calls unless permission rules allow them",
                        "Gemini CLI `includeTools` dropped: Claude Code has no per-server tool list; allow or deny tools with permission rules (`mcp__<server>__<tool>`)",
                    ],
                ),
                row(
                    "exa",
                    json!({"type": "http", "url": "https://mcp.exa.ai/mcp?exaApiKey=${EXA_API_KEY}", "headers": {"X-Team": "${TEAM:-platform}"}, "timeout": 30000}),
                    &[],
                ),
                row(
                    "db",
                    json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-postgres", "--dsn", "postgresql://${DB_USER}:${DB_PASSWORD}@db.internal:5432/app"], "env": {"GITHUB_TOKEN": "ghp_jciTNkLZvlkle5GTtPMRgF75La078RF8lZCQ"}}),
                    &[
                        "Gemini CLI's `$DB_USER` became `${DB_USER}`, the form Claude Code expands",
                        "`cwd` dropped: Claude Code starts servers in its own working directory",
                    ],
                ),
                row(
                    "legacy-sse",
                    json!({"type": "sse", "url": "https://sse.example.com/sse"}),
                    &[],
                ),
            ]
        );
        let both = json!({"mcpServers": {"d": {"httpUrl": "https://a", "url": "https://b", "oauth": {"enabled": true, "clientId": "cid", "scopes": ["r"]}}}});
        assert_eq!(
            imported(Client::Gemini, &both),
            [row(
                "d",
                json!({"type": "http", "url": "https://a", "oauth": {"clientId": "cid"}}),
                &[
                    "`url` dropped: Gemini CLI uses `httpUrl` when both are set",
                    "`oauth.enabled` dropped: Claude Code starts OAuth when the server asks for it",
                    "`oauth.scopes` dropped: Claude Code has no such OAuth setting",
                ],
            )]
        );
    }

    #[test]
    fn codex_variable_names_become_placeholders() {
        let value = fixture(
            "config.toml",
            include_str!("../../tests/clients/import/codex.config.toml"),
        );
        // Servers come in file order (`toml` is built with `preserve_order`).
        assert_eq!(
            imported(Client::Codex, &value),
            [
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}, "timeout": 20000}),
                    &[
                        "Codex `tool_timeout_sec` dropped: Claude Code sets one tool timeout for all servers (`MCP_TOOL_TIMEOUT`)",
                    ],
                ),
                row(
                    "linear",
                    json!({"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}),
                    &[],
                ),
                row(
                    "docs",
                    json!({"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Client": "codex", "X-API-Key": "${DOCS_API_KEY}"}}),
                    &[
                        "Codex `enabled = false` dropped; the server will be enabled in Claude Code",
                        "Codex `enabled_tools` dropped: Claude Code has no per-server tool list; allow or deny tools with permission rules (`mcp__<server>__<tool>`)",
                    ],
                ),
                row(
                    "gh-enterprise",
                    json!({"type": "stdio", "command": "/usr/local/bin/github-mcp-server", "args": ["stdio", "--gh-host", "https://github.example.com"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_vAIKGLDeRMODlM2P2JTRuRnrA4aQb0iXEKKA", "LOG_LEVEL": "info", "HTTPS_PROXY": "${HTTPS_PROXY}"}, "timeout": 7500}),
                    &["`cwd` dropped: Claude Code starts servers in its own working directory"],
                ),
            ]
        );
    }

    #[test]
    fn codex_conflicts_and_odd_values() {
        let value: Value = toml::from_str(
            r#"
[mcp_servers.a]
url = "https://a"
http_headers = { Authorization = "Bearer lit", "X-K" = "v" }
env_http_headers = { "X-K" = "K", "X-Bad" = "not-a-name" }
bearer_token_env_var = "TOKEN"
startup_timeout_sec = 0.5
env_vars = ["X"]

[mcp_servers.b]
url = "https://b"
bearer_token = "inline"
startup_timeout_ms = 3000

[mcp_servers.c]
command = "c"
env = { A = "literal" }
env_vars = ["A", "1B", 3]
bearer_token_env_var = "T"
enabled = true
"#,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            imported(Client::Codex, &value),
            [
                row(
                    "a",
                    json!({"type": "http", "url": "https://a", "headers": {"Authorization": "Bearer lit", "X-K": "v"}, "timeout": 500}),
                    &[
                        "Codex `env_http_headers.X-K` dropped: `http_headers` sets it literally",
                        "Codex `env_http_headers.X-Bad` dropped: it is not a variable name Claude Code can expand",
                        "Codex `bearer_token_env_var` dropped: an `Authorization` header is already set",
                        "`timeout` of 500 ms is below Claude Code's 1000 ms minimum, so Claude Code ignores it",
                        "Codex `env_vars` dropped: it applies only to stdio servers",
                    ],
                ),
                row(
                    "b",
                    json!({"type": "http", "url": "https://b", "headers": {"Authorization": "Bearer inline"}, "timeout": 3000}),
                    &["Codex `bearer_token` (which Codex rejects) became `headers.Authorization`"],
                ),
                row(
                    "c",
                    json!({"type": "stdio", "command": "c", "args": [], "env": {"A": "literal"}}),
                    &[
                        "Codex `env_vars` entry `A` dropped: `env.A` is set literally",
                        "Codex `env_vars[1]` dropped: it is not a variable name Claude Code can expand",
                        "Codex `env_vars[2]` dropped: it is a number, not a string",
                        "Codex `bearer_token_env_var` dropped: it applies only to HTTP servers",
                        "`enabled = true` dropped (the default)",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn zed_values_are_literal_and_extensions_cannot_be_imported() {
        let value = fixture(
            "settings.json",
            include_str!("../../tests/clients/import/zed.settings.json"),
        );
        assert_eq!(
            imported(Client::Zed, &value),
            [
                row(
                    "github",
                    json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_RAEt9sHsQps0T1PCHXpVvTy3HcktOrJbwFDx"}}),
                    &["Zed `source` dropped"],
                ),
                row(
                    "linear",
                    json!({"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}),
                    &["`${LINEAR_API_KEY}` was passed literally by Zed but Claude Code expands it"],
                ),
                row(
                    "mcp-server-context7",
                    json!({"type": "stdio", "args": [], "env": {}}),
                    &[
                        "no `command`: Claude Code cannot start this server",
                        "Zed `source` dropped",
                        "Zed `settings` dropped: they configure a Zed extension, which Claude Code cannot run",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn odd_shapes_are_noted() {
        let value = json!({"mcpServers": {
            "n": 5,
            "t": {"type": "streamableHttp", "url": "https://t", "env": {"A": "b"}, "command": "x"},
            "u": {"type": "carrier-pigeon", "command": "x", "args": "-v", "env": {"N": null}, "headers": {"H": "v"}, "disabled": false},
            "p": {"type": "http", "url": "unix:///tmp/mcp.sock", "headers": {"H": true}},
        }});
        assert_eq!(
            imported(Client::Cursor, &value),
            [
                row(
                    "n",
                    json!({}),
                    &["the entry is a number, not an object; nothing to import"]
                ),
                row(
                    "t",
                    json!({"type": "http", "url": "https://t"}),
                    &[
                        "`env` dropped: Claude Code passes no environment to remote servers",
                        "`command` dropped: the server is reached at `url`",
                    ],
                ),
                row(
                    "u",
                    json!({"type": "stdio", "command": "x", "args": [], "env": {}}),
                    &[
                        "`type: carrier-pigeon` is not a Claude Code transport; imported as stdio",
                        "`args` dropped: it is a string, not an array",
                        "`env.N` dropped: it is null, not a string",
                        "`headers` dropped: stdio servers take no headers",
                        "`disabled: false` dropped (the default)",
                    ],
                ),
                row(
                    "p",
                    json!({"type": "http", "url": "unix:///tmp/mcp.sock", "headers": {"H": "true"}}),
                    &[
                        "`url` is a `unix:` address, which Claude Code cannot connect to",
                        "`headers.H` was a boolean; written as a string",
                    ],
                ),
            ]
        );
    }

    #[test]
    fn editor_variables_become_what_claude_code_has() {
        let value = json!({"mcpServers": {
            "run": {"command": "bash", "args": ["${workspaceRoot}/run.sh", "--name=${workspaceFolderBasename}", "${workspaceFolder}"], "cwd": "${workspaceFolder}/", "env": {"CACHE": "${userHome}${pathSeparator}.cache"}},
            "lint": {"command": "lint", "args": ["${relativeFile}", "${env:LEVEL}"]},
            "remote": {"url": "https://x.test/${workspaceFolder}", "headers": {"X-Home": "${userHome}"}},
            "off": {"command": "x", "disabled": true},
            "codex-off": {"command": "x", "enabled": false},
            "on": {"command": "x", "disabled": false},
        }});
        let options = ImportOptions {
            project_name: Some("shop"),
        };
        let got = import_with(Client::Windsurf, &value, &options);
        let folder =
            "Claude Code starts stdio servers in the folder it was started in (the project)";
        assert_eq!(
            got[0].entry,
            json!({"type": "stdio", "command": "bash", "args": ["./run.sh", "--name=shop", "."], "env": {"CACHE": "${HOME}/.cache"}})
        );
        assert_eq!(
            got[0].notes,
            [
                format!("Windsurf's `${{workspaceRoot}}` became `.`: {folder}"),
                "Windsurf's `${workspaceFolderBasename}` became `shop`, the project folder's name".to_owned(),
                format!("Windsurf's `${{workspaceFolder}}` became `.`: {folder}"),
                "Windsurf's `${userHome}` became `${HOME}`".to_owned(),
                "Windsurf's `${pathSeparator}` became `/`".to_owned(),
                "`cwd` dropped: Claude Code starts stdio servers in the folder it was started in (the project), as `cwd` asks".to_owned(),
            ]
        );
        assert_eq!(got[0].unusable, None);
        assert_eq!(
            got[1].unusable.as_deref(),
            Some(
                "`${relativeFile}` is the file open in the editor, which Windsurf fills in and Claude Code has no value for"
            )
        );
        assert_eq!(
            got[2].unusable.as_deref(),
            Some(
                "`${workspaceFolder}` is the folder open in Windsurf, which means nothing to a remote server"
            )
        );
        assert_eq!(got[2].entry["headers"], json!({"X-Home": "${HOME}"}));
        let disabled: Vec<bool> = got.iter().map(|server| server.disabled).collect();
        assert_eq!(disabled, [false, false, false, true, true, false]);
        // Without the project's name its basename cannot be filled in.
        let value =
            json!({"servers": {"s": {"command": "x", "args": ["${workspaceFolderBasename}"]}}});
        let got = import(Client::Vscode, &value);
        assert!(got[0].unusable.is_some(), "{got:?}");
        // Claude Code's own files have no switch-off key.
        let value = json!({"mcpServers": {"s": {"command": "x", "disabled": true}}});
        assert!(!import(Client::ClaudeCode, &value)[0].disabled);
    }

    #[test]
    fn claude_shaped_files_keep_claude_keys_in_order() {
        let value = json!({"mcpServers": {
            "r": {"alwaysLoad": true, "oauth": {"clientId": "c"}, "url": "https://r", "type": "sse", "timeout": 5000},
            "s": {"role": "comms", "command": "x", "timeout": 2000},
        }, "projects": {"/p": {"mcpServers": {"l": {"command": "y"}}}}});
        assert_eq!(
            imported(Client::ClaudeCode, &value),
            [
                row(
                    "r",
                    json!({"type": "sse", "url": "https://r", "oauth": {"clientId": "c"}, "timeout": 5000, "alwaysLoad": true}),
                    &[],
                ),
                row(
                    "s",
                    json!({"type": "stdio", "command": "x", "args": [], "env": {}, "timeout": 2000, "role": "comms"}),
                    &[],
                ),
            ]
        );
        // Key order is part of the contract: compare the serialised text.
        let entry = &import(Client::ClaudeCode, &value)[0].entry;
        assert_eq!(
            entry.to_string(),
            r#"{"type":"sse","url":"https://r","oauth":{"clientId":"c"},"timeout":5000,"alwaysLoad":true}"#
        );
    }

    #[test]
    fn translate_cursor_and_windsurf() {
        for client in [Client::Cursor, Client::Windsurf] {
            assert_eq!(translated(client, "${env:TOKEN}"), result("${TOKEN}", &[]));
            assert_eq!(
                translated(client, "Bearer ${env:TOKEN}"),
                result("Bearer ${TOKEN}", &[])
            );
            assert_eq!(
                translated(client, "postgres://${env:U}:${env:P}@h/${env:U}"),
                result("postgres://${U}:${P}@h/${U}", &[])
            );
            assert_eq!(
                translated(client, "plain $HOME 5$"),
                result("plain $HOME 5$", &[])
            );
        }
        assert_eq!(
            translated(Client::Cursor, "${env:TOKEN}${/}${pathSeparator}"),
            result(
                "${TOKEN}//",
                &[
                    "Cursor's `${/}` became `/`",
                    "Cursor's `${pathSeparator}` became `/`",
                ],
            )
        );
        assert_eq!(
            translated(Client::Cursor, "${GITHUB_TOKEN} ${A:-d}"),
            result(
                "${GITHUB_TOKEN} ${A:-d}",
                &[
                    "`${GITHUB_TOKEN}` was passed literally by Cursor but Claude Code expands it",
                    "`${A:-d}` was passed literally by Cursor but Claude Code expands it",
                ],
            )
        );
        assert_eq!(
            translated(Client::Cursor, "${env:ProgramFiles(x86)}"),
            result(
                "${env:ProgramFiles(x86)}",
                &[
                    "`${env:ProgramFiles(x86)}` left as is: `ProgramFiles(x86)` is not a variable name Claude Code can expand"
                ],
            )
        );
        // `${input:…}` and `${file:…}` belong to VS Code and Windsurf only.
        assert_eq!(
            translated(Client::Cursor, "${input:x}"),
            result(
                "${input:x}",
                &["Cursor variable `${input:x}` left as is: Claude Code has no such variable"],
            )
        );
        assert_eq!(
            translated(Client::Windsurf, "--token-file=${file:/run/t}"),
            result(
                "--token-file=${file:/run/t}",
                &[
                    "`${file:/run/t}` left as is: Claude Code cannot read a value from a file; set a variable instead"
                ],
            )
        );
    }

    #[test]
    fn translate_vscode() {
        assert_eq!(
            translated(Client::Vscode, "Bearer ${input:api-key}"),
            result(
                "Bearer ${API_KEY}",
                &["VS Code input `api-key` became `${API_KEY}`"],
            )
        );
        assert_eq!(
            translated(Client::Vscode, "${input:user}:${input:apiKey}@${env:HOST}"),
            result(
                "${INPUT_USER}:${API_KEY}@${HOST}",
                &[
                    "VS Code input `user` became `${INPUT_USER}` (not `${USER}`, which every process already has)",
                    "VS Code input `apiKey` became `${API_KEY}`",
                ],
            )
        );
        assert_eq!(
            translated(Client::Vscode, "${workspaceFolder}/a:${config:python.path}"),
            result(
                "./a:${config:python.path}",
                &[
                    "VS Code's `${workspaceFolder}` became `.`: Claude Code starts stdio servers in the folder it was started in (the project)",
                    "VS Code variable `${config:python.path}` left as is: Claude Code has no such variable",
                ],
            )
        );
    }

    #[test]
    fn translate_gemini() {
        let gemini = |text| translated(Client::Gemini, text);
        assert_eq!(
            gemini("$TOKEN"),
            result(
                "${TOKEN}",
                &["Gemini CLI's `$TOKEN` became `${TOKEN}`, the form Claude Code expands"]
            )
        );
        assert_eq!(gemini("${TOKEN}"), result("${TOKEN}", &[]));
        assert_eq!(
            gemini("${TEAM:-platform}"),
            result("${TEAM:-platform}", &[])
        );
        assert_eq!(
            gemini("Bearer $TOKEN"),
            result(
                "Bearer ${TOKEN}",
                &["Gemini CLI's `$TOKEN` became `${TOKEN}`, the form Claude Code expands"]
            )
        );
        assert_eq!(
            gemini("$USER:${PASS}@$HOST_1/x$$A"),
            result(
                "${USER}:${PASS}@${HOST_1}/x$${A}",
                &[
                    "Gemini CLI's `$USER` became `${USER}`, the form Claude Code expands",
                    "Gemini CLI's `$HOST_1` became `${HOST_1}`, the form Claude Code expands",
                    "Gemini CLI's `$A` became `${A}`, the form Claude Code expands",
                ],
            )
        );
        assert_eq!(
            gemini("cost: $5, $ and ${"),
            result("cost: $5, $ and ${", &[])
        );
        assert_eq!(
            gemini("${env:TOKEN}"),
            result(
                "${env:TOKEN}",
                &["`${env:TOKEN}` left as is: neither Gemini CLI nor Claude Code expands it"],
            )
        );
    }

    #[test]
    fn translate_literal_clients() {
        for (client, name) in [
            (Client::ClaudeDesktop, "Claude Desktop"),
            (Client::Codex, "Codex"),
            (Client::Zed, "Zed"),
        ] {
            assert_eq!(
                translated(client, "$HOME ${env:X} literal"),
                result("$HOME ${env:X} literal", &[])
            );
            let note =
                format!("`${{TOKEN}}` was passed literally by {name} but Claude Code expands it");
            assert_eq!(
                translated(client, "Bearer ${TOKEN}"),
                ("Bearer ${TOKEN}".to_owned(), vec![note])
            );
        }
        assert_eq!(
            translated(Client::ClaudeCode, "${A} $B ${env:C}"),
            result("${A} $B ${env:C}", &[])
        );
    }
}
