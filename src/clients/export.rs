//! Export: writes the servers of `.mcp.json` into another client's config
//! file, in that client's own syntax (reference/clients.md).
//!
//! Each `${VAR}` of Claude Code becomes what the client reads from its
//! environment (`${env:VAR}`, `${input:id}`, `env_vars = ["VAR"]`, …); for
//! clients that expand nothing (Zed, Claude Desktop) the value itself is
//! written. What a client cannot express is written as close as it gets and
//! reported as a warning.
//!
//! Existing files are edited, never regenerated: only the exported servers
//! change (and VS Code's `inputs`), every other byte stays, comments
//! included. A file that does not parse is an error, never rewritten.

use std::ops::Range;

use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use jsonc_parser::tokens::{Token, TokenAndRange};
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};
use serde_json::{Map, Value};
use toml_edit::{DocumentMut, InlineTable, Item, Table};

use super::{Client, FormatError};
use crate::config::expansion::{self, Reference};
use crate::config::model::{Field, ServerEntry, Transport, json_kind};
use crate::mechanics::document::pretty;
use crate::secrets::is_secret_name;

/// How a client gets the values of a server's variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// The client expands environment references itself: each `${VAR}` is
    /// translated into its syntax and no value is written.
    Placeholders,
    /// The client expands nothing (Zed, Claude Desktop): each `${VAR}` is
    /// resolved with [`ExportOptions::lookup`] and the value is written.
    Resolved,
}

impl Secrets {
    /// How `client` gets the values of a server's variables.
    pub fn of(client: Client) -> Self {
        match client {
            Client::Zed | Client::ClaudeDesktop => Self::Resolved,
            _ => Self::Placeholders,
        }
    }
}

/// The value of a variable, `None` when unset.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Choices for [`export`].
#[derive(Clone, Copy, Default)]
pub struct ExportOptions<'a> {
    /// VS Code: write `${input:id}` plus an `inputs` entry with
    /// `"password": true` for secret-looking variables, instead of
    /// `${env:VAR}` (VS Code then asks once and stores the value).
    pub vscode_inputs: bool,
    /// The value of a variable (`None` when unset), for the clients whose
    /// [`Secrets`] is [`Secrets::Resolved`]; never consulted for others.
    pub lookup: Option<Lookup<'a>>,
    /// Servers to remove from the client's file (those mcpenv exported
    /// earlier and that are gone from the scope); absent ones are ignored.
    pub prune: &'a [String],
    /// Stdio servers get an `envFile` key and read these variables from it
    /// (only for clients where [`supports_env_file`] holds).
    pub env_file: Option<EnvFile<'a>>,
}

/// An `envFile` for stdio servers: the client loads the file itself.
#[derive(Debug, Clone, Copy)]
pub struct EnvFile<'a> {
    /// The value written, as the client resolves it (`${workspaceFolder}/.env`).
    pub path: &'a str,
    /// The variables the file provides: `KEY: ${KEY}` entries for them are
    /// left out of `env`, the client takes them from the file.
    pub provides: &'a [String],
}

/// Whether `client` reads an `envFile` key in its stdio servers, as its
/// documentation says:
/// - VS Code: <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>
///   (stdio servers: `"envFile": "${workspaceFolder}/.env"`);
/// - Cursor: <https://cursor.com/docs/context/mcp> (stdio `envFile`).
pub fn supports_env_file(client: Client) -> bool {
    matches!(client, Client::Cursor | Client::Vscode)
}

/// Whether mcpenv writes `key` of a server entry for `client`: on
/// re-export such keys are replaced (or removed when the translation no
/// longer produces them); every other key of the existing entry belongs to
/// the client (or the user) and is kept. `envFile` is mcpenv's only with
/// `--env-file`: one added by hand stays.
fn is_managed(client: Client, env_file: bool, key: &str) -> bool {
    const CODEX: &[&str] = &[
        "command",
        "args",
        "env",
        "env_vars",
        "url",
        "bearer_token_env_var",
        "http_headers",
        "env_http_headers",
    ];
    const JSON: &[&str] = &[
        "type",
        "command",
        "args",
        "env",
        "url",
        "serverUrl",
        "httpUrl",
        "headers",
    ];
    match client {
        Client::Codex => CODEX.contains(&key),
        _ => JSON.contains(&key) || (env_file && key == "envFile"),
    }
}

/// `produced` (mcpenv's translation of a server) laid over the entry the
/// file holds now, `existing`: keys mcpenv manages take the produced value
/// (or go when it produces none), other keys stay where they were, new
/// managed keys follow.
fn keep_client_keys(managed: impl Fn(&str) -> bool, existing: &Value, produced: &Value) -> Value {
    let (Value::Object(existing), Value::Object(produced)) = (existing, produced) else {
        return produced.clone();
    };
    let mut merged = Map::new();
    for (key, value) in existing {
        if !managed(key) {
            merged.insert(key.clone(), value.clone());
        } else if let Some(new) = produced.get(key) {
            merged.insert(key.clone(), new.clone());
        }
    }
    for (key, value) in produced {
        if !merged.contains_key(key) {
            merged.insert(key.clone(), value.clone());
        }
    }
    Value::Object(merged)
}

/// The result of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The whole new text of the client's file.
    pub text: String,
    /// Whether `text` differs from the existing file (true for a new one,
    /// unless nothing could be exported: then no file is made).
    pub changed: bool,
    /// The servers written, in order.
    pub servers: Vec<String>,
    /// The servers the client cannot take at all, each with a warning.
    pub skipped: Vec<String>,
    /// The servers of [`ExportOptions::prune`] the file held, now removed.
    pub pruned: Vec<String>,
    /// What could not be exported faithfully, one sentence each.
    pub warnings: Vec<String>,
}

/// Why an export could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// The target is Claude Code itself, whose `.mcp.json` is the source.
    #[error("cannot export to {0}: its `.mcp.json` is the source of the export")]
    Unsupported(Client),
    /// The existing file is not valid in the client's format.
    #[error("the existing {} config does not parse", .client.title())]
    Parse {
        /// Whose file it is.
        client: Client,
        /// Where and why.
        #[source]
        source: FormatError,
    },
    /// The existing file parses, but a value mcpenv must edit has another type.
    #[error("{what} in the existing {} config is {found}, expected {expected}", .client.title())]
    Shape {
        /// Whose file it is.
        client: Client,
        /// The value, as "`servers`" or "the root".
        what: String,
        /// What it is, as "an array".
        found: &'static str,
        /// What it should be, as "an object".
        expected: &'static str,
    },
    /// A variable that a client which expands nothing needs is not set.
    #[error(
        "variable `{name}` is not set, and {} cannot read variables (server `{server}`, `{field}`)",
        .client.title()
    )]
    Unresolved {
        /// The target client.
        client: Client,
        /// The server whose field needs the variable.
        server: String,
        /// The field.
        field: Field,
        /// The variable.
        name: String,
    },
    /// The edited text does not parse (a bug in mcpenv).
    #[error("the edited {} config would be invalid (a bug in mcpenv)", .client.title())]
    Edit {
        /// Whose file it is.
        client: Client,
        /// Where and why.
        #[source]
        source: FormatError,
    },
    /// The edited text still holds a server it was to lose (a bug in mcpenv).
    #[error("the edited {} config still holds server `{server}` (a bug in mcpenv)", .client.title())]
    Kept {
        /// Whose file it is.
        client: Client,
        /// The server.
        server: String,
    },
    /// The edited text parses but misses an exported server (a bug in mcpenv).
    #[error("the edited {} config lost server `{server}` (a bug in mcpenv)", .client.title())]
    Lost {
        /// Whose file it is.
        client: Client,
        /// The server, or `inputs` for VS Code's inputs.
        server: String,
    },
}

/// Exports `servers` (from `.mcp.json`) into `client`'s file, whose current
/// text is `existing` (`None` when there is no file yet): servers of the same
/// name are replaced, new ones appended, everything else kept.
pub fn export(
    client: Client,
    existing: Option<&str>,
    servers: &[(String, ServerEntry)],
    options: &ExportOptions,
) -> Result<Exported, ExportError> {
    if client == Client::ClaudeCode {
        return Err(ExportError::Unsupported(client));
    }
    let mut builder = Builder {
        client,
        options,
        warnings: Vec::new(),
        inputs: Vec::new(),
    };
    let mut entries = Vec::with_capacity(servers.len());
    let mut skipped = Vec::new();
    // One entry per name, the last, as a JSON object keeps it (the
    // splices below each write a name once).
    let last_of_each = servers
        .iter()
        .enumerate()
        .filter(|(index, (name, _))| !servers[index + 1..].iter().any(|(later, _)| later == name));
    for (_, (name, entry)) in last_of_each {
        match builder.entry(name, entry)? {
            Some(shaped) => entries.push((name.clone(), Value::Object(shaped))),
            None => skipped.push(name.clone()),
        }
    }
    let exported: Vec<String> = entries.iter().map(|(name, _)| name.clone()).collect();
    let current = match existing {
        Some(text) => entries_in(client, text)?,
        None => Map::new(),
    };
    let pruned: Vec<String> = options
        .prune
        .iter()
        .filter(|name| current.contains_key(*name) && !exported.contains(name))
        .cloned()
        .collect();
    // Keys only the client knows (a hand-added `disabled`, `sandbox`,
    // `startup_timeout_sec`, …) survive the replacement of an entry.
    let managed = |key: &str| is_managed(client, options.env_file.is_some(), key);
    let entries: Vec<(String, Value)> = entries
        .into_iter()
        .map(|(name, produced)| {
            let value = match current.get(&name) {
                Some(old) => keep_client_keys(managed, old, &produced),
                None => produced,
            };
            (name, value)
        })
        .collect();
    if entries.is_empty() && pruned.is_empty() {
        // Nothing to write: a file that exists stays as it is (it still has
        // to parse and have the right shape), and none is created.
        if let Some(text) = existing {
            if client == Client::Codex {
                emit_toml(Some(text), &[], &[])?;
            } else {
                emit_json(client, Some(text), &[], &[], &[])?;
            }
        }
        return Ok(Exported {
            text: existing.unwrap_or_default().to_string(),
            changed: false,
            servers: exported,
            skipped,
            pruned,
            warnings: builder.warnings,
        });
    }
    let text = if client == Client::Codex {
        emit_toml(existing, &entries, &pruned)?
    } else {
        emit_json(client, existing, &entries, &builder.inputs, &pruned)?
    };
    Ok(Exported {
        changed: existing != Some(text.as_str()),
        text,
        servers: exported,
        skipped,
        pruned,
        warnings: builder.warnings,
    })
}

/// The server entries `text` (a file of `client`) holds, by name, as
/// they are written there (the last of duplicate names wins).
pub fn entries_in(client: Client, text: &str) -> Result<Map<String, Value>, ExportError> {
    if client == Client::Codex {
        let value: Value = toml::from_str(text).map_err(|error| ExportError::Parse {
            client,
            source: format_error(text, error.span(), error.message()),
        })?;
        return Ok(match value.get("mcp_servers") {
            Some(Value::Object(servers)) => servers.clone(),
            _ => Map::new(),
        });
    }
    let body = text.strip_prefix(BOM).unwrap_or(text);
    let parsed =
        parse_jsonc(client, body).map_err(|source| ExportError::Parse { client, source })?;
    let root = parsed.value.as_ref().map(ast_to_json).unwrap_or_default();
    Ok(match root.get(client.servers_key()) {
        Some(Value::Object(servers)) => servers.clone(),
        _ => Map::new(),
    })
}

/// Whether exporting `servers` into `existing` again would change nothing
/// (for `export --check`).
pub fn in_sync(
    client: Client,
    existing: &str,
    servers: &[(String, ServerEntry)],
    options: &ExportOptions,
) -> Result<bool, ExportError> {
    Ok(!export(client, Some(existing), servers, options)?.changed)
}

/// Turns server entries into one client's shape, collecting warnings and
/// VS Code inputs on the way.
struct Builder<'a, 'o> {
    client: Client,
    options: &'a ExportOptions<'o>,
    warnings: Vec<String>,
    /// VS Code `inputs` entries, in order of first use.
    inputs: Vec<Value>,
}

impl Builder<'_, '_> {
    fn warn(&mut self, server: &str, message: impl AsRef<str>) {
        self.warnings
            .push(format!("`{server}`: {}", message.as_ref()));
    }

    /// The entry in the client's shape, or `None` (with a warning) when the
    /// client cannot take it at all.
    fn entry(
        &mut self,
        name: &str,
        entry: &ServerEntry,
    ) -> Result<Option<Map<String, Value>>, ExportError> {
        let client = self.client;
        let transport = entry.transport();
        let supported = match transport {
            Transport::Stdio => true,
            Transport::Http => client != Client::ClaudeDesktop,
            // Codex speaks only streamable HTTP to remote servers.
            Transport::Sse => !matches!(client, Client::ClaudeDesktop | Client::Codex),
            Transport::Ws | Transport::Sdk | Transport::Unknown(_) => false,
        };
        if !supported {
            let why = if client == Client::ClaudeDesktop && transport.is_remote() {
                "Claude Desktop reads only stdio servers from its file (remote ones are added as connectors in the app)"
                    .to_string()
            } else {
                format!("{} has no `{transport}` servers", client.title())
            };
            self.warn(name, format!("not exported: {why}"));
            return Ok(None);
        }
        if let Some(problem) = entry.problems().into_iter().next() {
            self.warn(name, format!("not exported: {problem}"));
            return Ok(None);
        }
        let managed: &[&str] = if transport.is_remote() {
            &["type", "url", "headers"]
        } else {
            &["type", "command", "args", "env"]
        };
        let dropped: Vec<String> = entry
            .fields()
            .keys()
            .filter(|key| !managed.contains(&key.as_str()))
            .map(|key| format!("`{key}`"))
            .collect();
        if !dropped.is_empty() {
            let message = format!(
                "{} not exported: only the command, arguments, environment, URL and headers go to {}",
                dropped.join(", "),
                client.title()
            );
            self.warn(name, message);
        }
        if client == Client::Codex {
            return Ok(Some(self.codex(name, entry, &transport)));
        }
        let mut resolved = Vec::new();
        let mut out = Map::new();
        if client == Client::Vscode {
            out.insert("type".into(), Value::from(transport.as_str()));
        }
        if transport.is_remote() {
            let key = match (client, &transport) {
                (Client::Windsurf, _) => "serverUrl",
                (Client::Gemini, Transport::Http) => "httpUrl",
                _ => "url",
            };
            let url = entry.url().unwrap_or_default();
            let url = self.translate(name, &Field::Url, url, &mut resolved)?;
            out.insert(key.into(), Value::from(url));
            let mut headers = Map::new();
            for (header, value) in entry.headers() {
                let field = Field::Header(header.to_string());
                let value = self.translate(name, &field, value, &mut resolved)?;
                headers.insert(header.to_string(), Value::from(value));
            }
            if !headers.is_empty() {
                out.insert("headers".into(), Value::Object(headers));
            }
        } else {
            let command = entry.command().unwrap_or_default();
            let command = self.translate(name, &Field::Command, command, &mut resolved)?;
            out.insert("command".into(), Value::from(command));
            let mut args = Vec::new();
            for (index, arg) in entry.args().into_iter().enumerate() {
                args.push(Value::from(self.translate(
                    name,
                    &Field::Arg(index),
                    arg,
                    &mut resolved,
                )?));
            }
            // Zed's custom servers want `args` even when empty.
            if !args.is_empty() || client == Client::Zed {
                out.insert("args".into(), Value::Array(args));
            }
            let env_file = self.options.env_file.filter(|_| supports_env_file(client));
            let mut env = Map::new();
            for (key, value) in entry.env() {
                // `KEY: ${KEY}` with KEY in the env file: the client reads
                // it from there, so no placeholder is needed.
                let from_file = env_file.is_some_and(|file| {
                    file.provides.iter().any(|provided| provided == key)
                        && whole_reference(value).is_some_and(|reference| reference.name == key)
                });
                if from_file {
                    continue;
                }
                let field = Field::Env(key.to_string());
                let value = self.translate(name, &field, value, &mut resolved)?;
                env.insert(key.to_string(), Value::from(value));
            }
            if !env.is_empty() {
                out.insert("env".into(), Value::Object(env));
            }
            if let Some(file) = env_file {
                out.insert("envFile".into(), Value::from(file.path));
            }
        }
        if !resolved.is_empty() {
            let names: Vec<String> = resolved.iter().map(|name| format!("`{name}`")).collect();
            let what = if names.len() == 1 { "value" } else { "values" };
            let message = format!(
                "{} cannot read environment variables, so the {what} of {} {} written into its file; keep that file private",
                client.title(),
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
            );
            self.warn(name, message);
        }
        Ok(Some(out))
    }

    /// One string of an entry in the client's placeholder syntax; the names
    /// of variables whose values were written go to `resolved`.
    fn translate(
        &mut self,
        server: &str,
        field: &Field,
        text: &str,
        resolved: &mut Vec<String>,
    ) -> Result<String, ExportError> {
        let client = self.client;
        let references = expansion::references(text);
        match Secrets::of(client) {
            Secrets::Resolved => {
                let lookup = self.options.lookup;
                let value = |name: &str| lookup.and_then(|lookup| lookup(name));
                let expansion = expansion::expand(text, value);
                if let Some(name) = expansion.missing.into_iter().next() {
                    return Err(ExportError::Unresolved {
                        client,
                        server: server.to_string(),
                        field: field.clone(),
                        name,
                    });
                }
                for reference in references {
                    if value(&reference.name).is_some() && !resolved.contains(&reference.name) {
                        resolved.push(reference.name);
                    }
                }
                Ok(expansion.text)
            }
            Secrets::Placeholders if client == Client::Gemini => {
                // Gemini reads `${VAR}` and `${VAR:-d}` as Claude Code does,
                // and also a bare `$VAR`, which Claude Code leaves alone.
                for form in expansion::unsupported_forms(text) {
                    if !form.found.starts_with("${") && form.found.starts_with('$') {
                        let message = format!(
                            "Gemini CLI expands `{}` in `{field}`, which Claude Code passes on as it is",
                            form.found
                        );
                        self.warn(server, message);
                    }
                }
                Ok(text.to_string())
            }
            Secrets::Placeholders => {
                let mut out = String::with_capacity(text.len());
                let mut copied = 0;
                for reference in &references {
                    let literal = &text[copied..reference.span.start];
                    self.literal_part(server, field, literal);
                    out.push_str(literal);
                    out.push_str(&self.reference(server, field, reference));
                    copied = reference.span.end;
                }
                self.literal_part(server, field, &text[copied..]);
                out.push_str(&text[copied..]);
                Ok(out)
            }
        }
    }

    /// Warns when text that Claude Code passes on literally looks like a
    /// placeholder to the client, such as `${env:X}` or `${input:id}`.
    fn literal_part(&mut self, server: &str, field: &Field, text: &str) {
        if text.contains("${") {
            let message = format!(
                "{} may expand the `${{…}}` in `{field}`, which Claude Code passes on as it is",
                self.client.title()
            );
            self.warn(server, message);
        }
    }

    /// `${env:NAME}`, or for VS Code with inputs a `${input:id}` backed by
    /// an `inputs` entry when the name looks secret.
    fn reference(&mut self, server: &str, field: &Field, reference: &Reference) -> String {
        let name = &reference.name;
        if reference.default.is_some() {
            let message = format!(
                "{} has no default values; `{field}` reads `{name}` without its default",
                self.client.title()
            );
            self.warn(server, message);
        }
        if self.client == Client::Vscode && self.options.vscode_inputs && is_secret_name(name) {
            let id = input_id(name);
            let known = self
                .inputs
                .iter()
                .any(|input| input.get("id").and_then(Value::as_str) == Some(id.as_str()));
            if !known {
                self.inputs.push(serde_json::json!({
                    "type": "promptString",
                    "id": id,
                    "description": name,
                    "password": true,
                }));
            }
            format!("${{input:{id}}}")
        } else {
            format!("${{env:{name}}}")
        }
    }

    /// A Codex table: variable names go to `env_vars`,
    /// `bearer_token_env_var` and `env_http_headers`; anything else with a
    /// placeholder is written literally, with a warning.
    fn codex(
        &mut self,
        server: &str,
        entry: &ServerEntry,
        transport: &Transport,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        if transport.is_remote() {
            let url = entry.url().unwrap_or_default();
            out.insert(
                "url".into(),
                Value::from(self.codex_literal(server, &Field::Url, url)),
            );
            let mut bearer = None;
            let mut literal = Map::new();
            let mut named = Map::new();
            for (header, value) in entry.headers() {
                let field = Field::Header(header.to_string());
                if bearer.is_none()
                    && header.eq_ignore_ascii_case("authorization")
                    && let Some(reference) = value.strip_prefix("Bearer ").and_then(whole_reference)
                {
                    self.codex_default(server, &field, &reference);
                    bearer = Some(reference.name);
                } else if let Some(reference) = whole_reference(value) {
                    self.codex_default(server, &field, &reference);
                    named.insert(header.to_string(), Value::from(reference.name));
                } else {
                    let value = self.codex_literal(server, &field, value);
                    literal.insert(header.to_string(), Value::from(value));
                }
            }
            if let Some(bearer) = bearer {
                out.insert("bearer_token_env_var".into(), Value::from(bearer));
            }
            if !literal.is_empty() {
                out.insert("http_headers".into(), Value::Object(literal));
            }
            if !named.is_empty() {
                out.insert("env_http_headers".into(), Value::Object(named));
            }
        } else {
            let command = entry.command().unwrap_or_default();
            let command = self.codex_literal(server, &Field::Command, command);
            out.insert("command".into(), Value::from(command));
            let args: Vec<Value> = entry
                .args()
                .into_iter()
                .enumerate()
                .map(|(index, arg)| {
                    Value::from(self.codex_literal(server, &Field::Arg(index), arg))
                })
                .collect();
            if !args.is_empty() {
                out.insert("args".into(), Value::Array(args));
            }
            let mut env = Map::new();
            let mut env_vars = Vec::new();
            for (key, value) in entry.env() {
                let field = Field::Env(key.to_string());
                match whole_reference(value) {
                    // `env_vars` forwards a variable under its own name only.
                    Some(reference) if reference.name == key => {
                        self.codex_default(server, &field, &reference);
                        env_vars.push(Value::from(reference.name));
                    }
                    _ => {
                        let value = self.codex_literal(server, &field, value);
                        env.insert(key.to_string(), Value::from(value));
                    }
                }
            }
            if !env.is_empty() {
                out.insert("env".into(), Value::Object(env));
            }
            if !env_vars.is_empty() {
                out.insert("env_vars".into(), Value::Array(env_vars));
            }
        }
        out
    }

    /// `text` as Codex gets it: as is, with a warning when it holds
    /// placeholders (Codex expands nothing).
    fn codex_literal(&mut self, server: &str, field: &Field, text: &str) -> String {
        if !expansion::references(text).is_empty() {
            let hint = match field {
                Field::Env(key) => format!(" (only a whole `${{{key}}}` can become `env_vars`)"),
                _ => String::new(),
            };
            let message =
                format!("Codex cannot expand variables; `{field}` is written as `{text}`{hint}");
            self.warn(server, message);
        }
        text.to_string()
    }

    fn codex_default(&mut self, server: &str, field: &Field, reference: &Reference) {
        if reference.default.is_some() {
            let message = format!(
                "Codex has no default values; `{field}` reads `{}` without its default",
                reference.name
            );
            self.warn(server, message);
        }
    }
}

/// The one reference that is the whole of `text`.
fn whole_reference(text: &str) -> Option<Reference> {
    let mut references = expansion::references(text);
    if references.len() == 1 && references[0].span == (0..text.len()) {
        references.pop()
    } else {
        None
    }
}

/// A VS Code input id for a variable: `GITHUB_TOKEN` → `github-token`.
fn input_id(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

const BOM: &str = "\u{feff}";

/// Parser settings per client: comments and trailing commas where the
/// client accepts them, strict JSON for Claude Desktop.
fn parse_options(client: Client) -> ParseOptions {
    let lenient = client != Client::ClaudeDesktop;
    ParseOptions {
        allow_comments: lenient,
        allow_trailing_commas: lenient,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses `text` (no BOM) with its tokens, comments included.
fn parse_jsonc(client: Client, text: &str) -> Result<jsonc_parser::ParseResult<'_>, FormatError> {
    if client == Client::ClaudeDesktop
        && let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(text)
        && !text.trim().is_empty()
    {
        let message = error.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |cut| &message[..cut])
            .to_string();
        return Err(FormatError {
            line: error.line(),
            column: error.column(),
            message,
        });
    }
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::AsTokens,
        tokens: true,
    };
    jsonc_parser::parse_to_ast(text, &collect, &parse_options(client)).map_err(|error| {
        FormatError {
            line: error.line_display(),
            column: error.column_display(),
            message: error.kind().to_string(),
        }
    })
}

/// The JSON clients: edits (or creates) the file.
fn emit_json(
    client: Client,
    existing: Option<&str>,
    servers: &[(String, Value)],
    inputs: &[Value],
    pruned: &[String],
) -> Result<String, ExportError> {
    let key = client.servers_key();
    let original = existing.unwrap_or("");
    let (bom, body) = match original.strip_prefix(BOM) {
        Some(body) => (BOM, body),
        None => ("", original),
    };
    // Removals first, on their own: the additions below then lay out
    // against the members that stay.
    let without_pruned;
    let body = if pruned.is_empty() {
        body
    } else {
        without_pruned = prune_json(client, body, pruned)?;
        without_pruned.as_str()
    };
    let parsed =
        parse_jsonc(client, body).map_err(|source| ExportError::Parse { client, source })?;
    let tokens = parsed.tokens.as_deref().unwrap_or_default();
    let Some(root) = &parsed.value else {
        // No file, an empty one, or only comments: write the layout anew.
        let mut root = Map::new();
        root.insert(key.into(), Value::Object(servers.iter().cloned().collect()));
        if !inputs.is_empty() {
            root.insert("inputs".into(), Value::Array(inputs.to_vec()));
        }
        let fresh = pretty(&Value::Object(root), "  ", "") + "\n";
        let text = if body.trim().is_empty() {
            format!("{bom}{fresh}")
        } else {
            let newline = if body.ends_with('\n') { "" } else { "\n" };
            format!("{bom}{body}{newline}{fresh}")
        };
        return check_json(client, text, servers, inputs, pruned);
    };
    let ast::Value::Object(root) = root else {
        return Err(ExportError::Shape {
            client,
            what: "the root".into(),
            found: ast_kind(root),
            expected: "an object",
        });
    };
    let editor = Editor {
        text: body,
        tokens,
        unit: indent_unit(body, root),
        inline: root
            .properties
            .first()
            .is_some_and(|prop| !starts_line(body, prop.range.start)),
    };
    let mut splices = Vec::new();
    let mut root_members: Vec<(String, Value)> = Vec::new();
    match last_prop(root, key).map(|prop| &prop.value) {
        // Nothing to export adds nothing to an existing file.
        None if servers.is_empty() => {}
        None => root_members.push((key.into(), Value::Object(servers.iter().cloned().collect()))),
        Some(ast::Value::Object(object)) => {
            let mut added = Vec::new();
            for (name, value) in servers {
                match last_prop(object, name) {
                    Some(prop) if ast_to_json(&prop.value) == *value => {}
                    Some(prop) => splices.push(editor.replace(prop, value)),
                    None => added.push(New::Member(name, value)),
                }
            }
            let children: Vec<Range<usize>> = object.properties.iter().map(span).collect();
            splices.extend(editor.insert(span(object), &children, &added));
        }
        Some(other) => {
            return Err(ExportError::Shape {
                client,
                what: format!("`{key}`"),
                found: ast_kind(other),
                expected: "an object",
            });
        }
    }
    if !inputs.is_empty() {
        match last_prop(root, "inputs").map(|prop| &prop.value) {
            None => root_members.push(("inputs".into(), Value::Array(inputs.to_vec()))),
            Some(ast::Value::Array(array)) => {
                let ids: Vec<Value> = array
                    .elements
                    .iter()
                    .filter_map(|element| ast_to_json(element).get("id").cloned())
                    .collect();
                let added: Vec<New<'_>> = inputs
                    .iter()
                    .filter(|input| input.get("id").is_none_or(|id| !ids.contains(id)))
                    .map(New::Element)
                    .collect();
                let children: Vec<Range<usize>> = array.elements.iter().map(span).collect();
                splices.extend(editor.insert(span(array), &children, &added));
            }
            Some(other) => {
                return Err(ExportError::Shape {
                    client,
                    what: "`inputs`".into(),
                    found: ast_kind(other),
                    expected: "an array",
                });
            }
        }
    }
    let added: Vec<New<'_>> = root_members
        .iter()
        .map(|(name, value)| New::Member(name, value))
        .collect();
    let children: Vec<Range<usize>> = root.properties.iter().map(span).collect();
    splices.extend(editor.insert(span(root), &children, &added));
    let text = format!("{bom}{}", apply(body, splices));
    check_json(client, text, servers, inputs, pruned)
}

/// `body` without the servers named in `pruned`: each member goes with the
/// comma and layout that separate it from the next one; a run of members
/// at the end goes with the comma after the last member that stays.
fn prune_json(client: Client, body: &str, pruned: &[String]) -> Result<String, ExportError> {
    let parsed =
        parse_jsonc(client, body).map_err(|source| ExportError::Parse { client, source })?;
    let Some(ast::Value::Object(root)) = &parsed.value else {
        return Ok(body.to_string());
    };
    let Some(ast::Value::Object(object)) = last_prop(root, client.servers_key()).map(|p| &p.value)
    else {
        return Ok(body.to_string());
    };
    let members = &object.properties;
    let gone = |prop: &ast::ObjectProp<'_>| pruned.iter().any(|name| name == prop.name.as_str());
    let last_kept = members.iter().rposition(|prop| !gone(prop));
    let mut splices = Vec::new();
    for (index, prop) in members.iter().enumerate() {
        if !gone(prop) {
            continue;
        }
        match last_kept {
            // Before a member that stays (or another removed one followed
            // by one that stays): up to where the next member starts.
            Some(kept) if index < kept => splices.push(Splice {
                range: prop.range.start..members[index + 1].range.start,
                text: String::new(),
            }),
            // The trailing run: from the end of the last member that stays.
            Some(kept) => {
                if index == kept + 1 {
                    let end = members.last().map_or(prop.range.end, |last| last.range.end);
                    splices.push(Splice {
                        range: members[kept].range.end..end,
                        text: String::new(),
                    });
                }
            }
            // Every member goes: the object keeps only its comments.
            None => {
                if index == 0 {
                    let close = object.range.end - 1;
                    let last_end = members.last().map_or(prop.range.end, |last| last.range.end);
                    let has_comments =
                        parsed
                            .tokens
                            .as_deref()
                            .unwrap_or_default()
                            .iter()
                            .any(|token| {
                                token.range.start > object.range.start
                                    && token.range.end <= close
                                    && matches!(
                                        token.token,
                                        Token::CommentLine(_) | Token::CommentBlock(_)
                                    )
                            });
                    let range = if has_comments {
                        // A trailing comma after the last member goes too.
                        let end = parsed
                            .tokens
                            .as_deref()
                            .unwrap_or_default()
                            .iter()
                            .find(|token| {
                                token.range.start >= last_end
                                    && token.range.end <= close
                                    && matches!(token.token, Token::Comma)
                            })
                            .map_or(last_end, |comma| comma.range.end);
                        prop.range.start..end
                    } else {
                        object.range.start + 1..close
                    };
                    splices.push(Splice {
                        range,
                        text: String::new(),
                    });
                }
            }
        }
    }
    Ok(apply(body, splices))
}

/// Re-reads the edited text: it must parse as the client's format and hold
/// exactly the exported servers and inputs.
fn check_json(
    client: Client,
    text: String,
    servers: &[(String, Value)],
    inputs: &[Value],
    pruned: &[String],
) -> Result<String, ExportError> {
    let body = text.strip_prefix(BOM).unwrap_or(&text);
    let parsed =
        parse_jsonc(client, body).map_err(|source| ExportError::Edit { client, source })?;
    let root = parsed.value.as_ref().map(ast_to_json).unwrap_or_default();
    if let Some((name, _)) = servers.iter().find(|(name, value)| {
        root.get(client.servers_key()).and_then(|s| s.get(name)) != Some(value)
    }) {
        return Err(ExportError::Lost {
            client,
            server: name.clone(),
        });
    }
    let known: Vec<&Value> = root
        .get("inputs")
        .and_then(Value::as_array)
        .map(|all| all.iter().filter_map(|input| input.get("id")).collect())
        .unwrap_or_default();
    if !inputs
        .iter()
        .all(|input| input.get("id").is_some_and(|id| known.contains(&id)))
    {
        return Err(ExportError::Lost {
            client,
            server: "inputs".into(),
        });
    }
    if let Some(name) = pruned.iter().find(|name| {
        root.get(client.servers_key())
            .and_then(|s| s.get(name.as_str()))
            .is_some()
    }) {
        return Err(ExportError::Kept {
            client,
            server: name.clone(),
        });
    }
    Ok(text)
}

/// The last member named `name` (the one JSON parsers keep).
fn last_prop<'o, 'a>(object: &'o ast::Object<'a>, name: &str) -> Option<&'o ast::ObjectProp<'a>> {
    object
        .properties
        .iter()
        .rev()
        .find(|prop| prop.name.as_str() == name)
}

fn span(node: &impl Ranged) -> Range<usize> {
    let range = node.range();
    range.start..range.end
}

fn ast_kind(value: &ast::Value<'_>) -> &'static str {
    json_kind(&ast_to_json(value))
}

/// A parsed JSONC value as serde_json's (the last of duplicate keys wins).
fn ast_to_json(value: &ast::Value<'_>) -> Value {
    match value {
        ast::Value::StringLit(string) => Value::from(string.value.as_ref()),
        ast::Value::NumberLit(number) => {
            serde_json::from_str(number.value).unwrap_or_else(|_| Value::from(number.value))
        }
        ast::Value::BooleanLit(boolean) => Value::Bool(boolean.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(array) => Value::Array(array.elements.iter().map(ast_to_json).collect()),
        ast::Value::Object(object) => Value::Object(
            object
                .properties
                .iter()
                .map(|prop| (prop.name.as_str().to_string(), ast_to_json(&prop.value)))
                .collect(),
        ),
    }
}

/// A member or element to add to a container.
enum New<'v> {
    Member(&'v str, &'v Value),
    Element(&'v Value),
}

impl New<'_> {
    /// The text of the member or element, laid out multi-line with `unit`
    /// and continued lines at `indent`, or compact when `unit` is `None`.
    fn render(&self, unit: Option<&str>, indent: &str) -> String {
        let value = |value: &Value| match unit {
            Some(unit) => pretty(value, unit, indent),
            None => value.to_string(),
        };
        match self {
            Self::Member(name, member) => {
                format!("{}: {}", Value::from(*name), value(member))
            }
            Self::Element(element) => value(element),
        }
    }
}

/// A replacement of `range` in the text.
struct Splice {
    range: Range<usize>,
    text: String,
}

/// Plans edits of one JSONC text.
struct Editor<'t> {
    text: &'t str,
    tokens: &'t [TokenAndRange<'t>],
    /// The file's indent unit.
    unit: String,
    /// Whether the file is written on one line: new members stay compact.
    inline: bool,
}

impl Editor<'_> {
    /// Replaces a member's value, laid out to match its line.
    fn replace(&self, prop: &ast::ObjectProp<'_>, value: &Value) -> Splice {
        let text = if starts_line(self.text, prop.range.start) {
            pretty(value, &self.unit, line_indent(self.text, prop.range.start))
        } else {
            value.to_string()
        };
        Splice {
            range: span(&prop.value),
            text,
        }
    }

    /// Appends `added` to the container at `container` (an object or an
    /// array) whose members are at `children`, following its layout: one
    /// per line at the members' indent, or inline; after same-line
    /// comments; with a trailing comma when the container has one.
    fn insert(
        &self,
        container: Range<usize>,
        children: &[Range<usize>],
        added: &[New<'_>],
    ) -> Vec<Splice> {
        if added.is_empty() {
            return Vec::new();
        }
        let text = self.text;
        let close = container.end - 1;
        let (Some(first), Some(last)) = (children.first(), children.last()) else {
            // Empty: lay the container out anew after any comments in it.
            if self.inline {
                let items: Vec<String> = added.iter().map(|new| new.render(None, "")).collect();
                return vec![Splice {
                    range: container.start + 1..close,
                    text: items.join(", "),
                }];
            }
            let base = line_indent(text, container.start);
            let inner = format!("{base}{}", self.unit);
            let after = self
                .tokens
                .iter()
                .filter(|token| token.range.start > container.start && token.range.end <= close)
                .map(|token| token.range.end)
                .max()
                .unwrap_or(container.start + 1);
            let items: Vec<String> = added
                .iter()
                .map(|new| format!("\n{inner}{}", new.render(Some(&self.unit), &inner)))
                .collect();
            return vec![Splice {
                range: after..close,
                text: format!("{}\n{base}", items.join(",")),
            }];
        };
        // Commas and comments between the last member and the end.
        let mut point = last.end;
        let mut trailing_comma = false;
        for token in self
            .tokens
            .iter()
            .filter(|token| token.range.start >= last.end && token.range.end <= close)
        {
            let same_line = !text[last.end..token.range.start].contains('\n');
            match token.token {
                Token::Comma => {
                    trailing_comma = true;
                    point = point.max(token.range.end);
                }
                Token::CommentLine(_) | Token::CommentBlock(_) if same_line => {
                    point = token.range.end;
                }
                _ => {}
            }
        }
        let mut splices = Vec::new();
        if !trailing_comma {
            splices.push(Splice {
                range: last.end..last.end,
                text: ",".into(),
            });
        }
        let after = if trailing_comma { "," } else { "" };
        let items: Vec<String> = if starts_line(text, first.start) {
            let indent = line_indent(text, first.start);
            added
                .iter()
                .map(|new| format!("\n{indent}{}", new.render(Some(&self.unit), indent)))
                .collect()
        } else {
            added
                .iter()
                .map(|new| format!(" {}", new.render(None, "")))
                .collect()
        };
        splices.push(Splice {
            range: point..point,
            text: format!("{}{after}", items.join(",")),
        });
        splices
    }
}

/// Applies non-overlapping splices; `\n` in new text follows the file's
/// line endings.
fn apply(text: &str, mut splices: Vec<Splice>) -> String {
    let crlf = text.contains("\r\n");
    // Stable: a comma planned at the same point as an insertion stays first.
    splices.sort_by_key(|splice| splice.range.start);
    let mut out =
        String::with_capacity(text.len() + splices.iter().map(|s| s.text.len()).sum::<usize>());
    let mut at = 0;
    for splice in splices {
        out.push_str(&text[at..splice.range.start]);
        if crlf {
            out.push_str(&splice.text.replace('\n', "\r\n"));
        } else {
            out.push_str(&splice.text);
        }
        at = splice.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The file's indent unit: the indent of the root's first member, or two
/// spaces.
fn indent_unit(text: &str, root: &ast::Object<'_>) -> String {
    root.properties
        .first()
        .filter(|prop| starts_line(text, prop.range.start))
        .map(|prop| line_indent(text, prop.range.start).to_string())
        .filter(|unit| !unit.is_empty())
        .unwrap_or_else(|| "  ".to_string())
}

/// Whether only spaces and tabs precede `position` on its line.
fn starts_line(text: &str, position: usize) -> bool {
    let line_start = text[..position]
        .rfind('\n')
        .map_or(0, |newline| newline + 1);
    text[line_start..position]
        .trim_start_matches([' ', '\t'])
        .is_empty()
}

/// The spaces and tabs that start the line holding `position`.
fn line_indent(text: &str, position: usize) -> &str {
    let line_start = text[..position]
        .rfind('\n')
        .map_or(0, |newline| newline + 1);
    let line = &text[line_start..position];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Codex: edits (or creates) `config.toml` with toml_edit, which keeps
/// every other table, comment and layout as it was.
fn emit_toml(
    existing: Option<&str>,
    servers: &[(String, Value)],
    pruned: &[String],
) -> Result<String, ExportError> {
    let client = Client::Codex;
    let original = existing.unwrap_or("");
    let mut document: DocumentMut =
        original
            .parse()
            .map_err(|error: toml_edit::TomlError| ExportError::Parse {
                client,
                source: format_error(original, error.span(), error.message()),
            })?;
    let current: Value = toml::from_str(original).unwrap_or_default();
    let current = current.get("mcp_servers");
    let container = document.entry("mcp_servers").or_insert_with(|| {
        // Implicit: no bare `[mcp_servers]` header above the servers.
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    match container {
        Item::Table(table) => {
            for name in pruned {
                table.remove(name);
            }
            for (name, value) in servers {
                let now = current.and_then(|current| current.get(name));
                if now == Some(value) {
                    continue;
                }
                if let (Some(Item::Table(old)), Some(now)) = (table.get_mut(name), now) {
                    // Edited key by key: keys kept from the old entry keep
                    // their bytes, comments included.
                    update_toml_table(old, now, value);
                    continue;
                }
                let item = match table.get(name) {
                    Some(Item::Value(old)) => {
                        let mut inline = toml_inline(value);
                        *inline.decor_mut() = old.decor().clone();
                        Item::Value(toml_edit::Value::InlineTable(inline))
                    }
                    old => {
                        let mut new = toml_table(value);
                        if let Some(Item::Table(old)) = old {
                            // Same place, same comments above the header.
                            new.set_position(old.position());
                            *new.decor_mut() = old.decor().clone();
                        }
                        Item::Table(new)
                    }
                };
                table.insert(name, item);
            }
        }
        Item::Value(toml_edit::Value::InlineTable(table)) => {
            for name in pruned {
                table.remove(name);
            }
            for (name, value) in servers {
                if current.and_then(|current| current.get(name)) == Some(value) {
                    continue;
                }
                let mut inline = toml_inline(value);
                if let Some(old) = table.get(name) {
                    *inline.decor_mut() = old.decor().clone();
                }
                table.insert(name, toml_edit::Value::InlineTable(inline));
            }
        }
        other => {
            let found = match other {
                Item::ArrayOfTables(_) => "an array of tables",
                Item::Value(toml_edit::Value::String(_)) => "a string",
                Item::Value(toml_edit::Value::Integer(_)) => "an integer",
                Item::Value(toml_edit::Value::Float(_)) => "a float",
                Item::Value(toml_edit::Value::Boolean(_)) => "a boolean",
                Item::Value(toml_edit::Value::Datetime(_)) => "a date-time",
                Item::Value(toml_edit::Value::Array(_)) => "an array",
                _ => "empty",
            };
            return Err(ExportError::Shape {
                client,
                what: "`mcp_servers`".into(),
                found,
                expected: "a table",
            });
        }
    }
    let text = document.to_string();
    // Re-read: the file must parse and hold exactly the exported servers.
    let reread: Value = toml::from_str(&text).map_err(|error| ExportError::Edit {
        client,
        source: format_error(&text, error.span(), error.message()),
    })?;
    if let Some((name, _)) = servers
        .iter()
        .find(|(name, value)| reread.get("mcp_servers").and_then(|s| s.get(name)) != Some(value))
    {
        return Err(ExportError::Lost {
            client,
            server: name.clone(),
        });
    }
    if let Some(name) = pruned.iter().find(|name| {
        reread
            .get("mcp_servers")
            .and_then(|s| s.get(name.as_str()))
            .is_some()
    }) {
        return Err(ExportError::Kept {
            client,
            server: name.clone(),
        });
    }
    Ok(text)
}

/// Brings the server table `table`, which reads as `now`, to `value`: keys
/// `value` lacks go, keys whose value differs are rewritten, new keys are
/// added; every other key keeps its bytes.
fn update_toml_table(table: &mut Table, now: &Value, value: &Value) {
    let Value::Object(wanted) = value else {
        return;
    };
    let stale: Vec<String> = table
        .iter()
        .map(|(key, _)| key.to_string())
        .filter(|key| !wanted.contains_key(key))
        .collect();
    for key in stale {
        table.remove(&key);
    }
    for (key, member) in wanted {
        if now.get(key) != Some(member) {
            table.insert(key, Item::Value(toml_value(member)));
        }
    }
}

/// A TOML error at `span` of `text`, with its line and column.
fn format_error(text: &str, span: Option<Range<usize>>, message: &str) -> FormatError {
    let (line, column) = span.map_or((1, 1), |span| super::line_column(text, span.start));
    FormatError {
        line,
        column,
        message: message.trim_end().to_string(),
    }
}

/// A server as a `[mcp_servers.<name>]` table: scalars and arrays as
/// values, maps as inline tables (`env = { K = "v" }`).
fn toml_table(value: &Value) -> Table {
    let mut table = Table::new();
    if let Value::Object(members) = value {
        for (key, member) in members {
            table.insert(key, Item::Value(toml_value(member)));
        }
    }
    table
}

fn toml_inline(value: &Value) -> InlineTable {
    match toml_value(value) {
        toml_edit::Value::InlineTable(table) => table,
        _ => InlineTable::new(),
    }
}

fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::String(string) => string.as_str().into(),
        Value::Bool(boolean) => (*boolean).into(),
        Value::Number(number) => match number.as_i64() {
            Some(integer) => integer.into(),
            None => number.as_f64().unwrap_or_default().into(),
        },
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(toml_value).collect()),
        Value::Object(members) => toml_edit::Value::InlineTable(
            members
                .iter()
                .map(|(key, member)| (key.as_str(), toml_value(member)))
                .collect(),
        ),
        // TOML has no null; exported entries never hold one.
        Value::Null => "".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ALL: [Client; 7] = [
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
        Client::Gemini,
        Client::Codex,
        Client::Zed,
        Client::ClaudeDesktop,
    ];

    fn servers() -> Vec<(String, ServerEntry)> {
        let entry = |value: Value| ServerEntry::from_value(value);
        vec![
            (
                "github".into(),
                entry(json!({
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
                })),
            ),
            (
                "db".into(),
                entry(json!({
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-postgres", "${DB_URL:-postgres://localhost/dev}"],
                    "env": {}
                })),
            ),
            (
                "linear".into(),
                entry(json!({
                    "type": "http",
                    "url": "https://mcp.linear.app/mcp",
                    "headers": {
                        "Authorization": "Bearer ${LINEAR_API_KEY}",
                        "X-Api-Key": "${KEY}"
                    }
                })),
            ),
        ]
    }

    fn lookup(name: &str) -> Option<String> {
        match name {
            "GITHUB_TOKEN" => Some("github-secret-0001".into()),
            "LINEAR_API_KEY" => Some("linear-secret-0002".into()),
            "KEY" => Some("key-secret-0003".into()),
            _ => None,
        }
    }

    fn options() -> ExportOptions<'static> {
        ExportOptions {
            vscode_inputs: false,
            lookup: Some(&lookup),
            ..ExportOptions::default()
        }
    }

    /// The realistic existing file of `client` and what exporting
    /// [`servers`] into it must give.
    fn fixture(client: Client) -> (&'static str, &'static str) {
        match client {
            Client::Cursor => (
                include_str!("../../tests/clients/export/cursor.existing.json"),
                include_str!("../../tests/clients/export/cursor.expected.json"),
            ),
            Client::Vscode => (
                include_str!("../../tests/clients/export/vscode.existing.json"),
                include_str!("../../tests/clients/export/vscode.expected.json"),
            ),
            Client::Windsurf => (
                include_str!("../../tests/clients/export/windsurf.existing.json"),
                include_str!("../../tests/clients/export/windsurf.expected.json"),
            ),
            Client::Gemini => (
                include_str!("../../tests/clients/export/gemini.existing.json"),
                include_str!("../../tests/clients/export/gemini.expected.json"),
            ),
            Client::Codex => (
                include_str!("../../tests/clients/export/codex.existing.toml"),
                include_str!("../../tests/clients/export/codex.expected.toml"),
            ),
            Client::Zed => (
                include_str!("../../tests/clients/export/zed.existing.json"),
                include_str!("../../tests/clients/export/zed.expected.json"),
            ),
            Client::ClaudeDesktop => (
                include_str!("../../tests/clients/export/claude-desktop.existing.json"),
                include_str!("../../tests/clients/export/claude-desktop.expected.json"),
            ),
            Client::ClaudeCode => unreachable!("not an export target"),
        }
    }

    fn run(client: Client, existing: Option<&str>) -> Exported {
        export(client, existing, &servers(), &options()).unwrap()
    }

    fn one(name: &str, value: Value) -> Vec<(String, ServerEntry)> {
        vec![(name.to_string(), ServerEntry::from_value(value))]
    }

    fn stdio(args: &[&str], env: Value) -> Value {
        json!({"type": "stdio", "command": "npx", "args": args, "env": env})
    }

    #[test]
    fn existing_files_are_edited_in_place() {
        for client in ALL {
            let (existing, expected) = fixture(client);
            let exported = run(client, Some(existing));
            assert_eq!(exported.text, expected, "{client}");
            assert!(exported.changed, "{client}");
            // Exporting again changes nothing, byte for byte.
            let again = run(client, Some(&exported.text));
            assert_eq!(again.text, expected, "{client}");
            assert!(!again.changed, "{client}");
        }
        let mut options = options();
        options.vscode_inputs = true;
        let (existing, _) = fixture(Client::Vscode);
        let exported = export(Client::Vscode, Some(existing), &servers(), &options).unwrap();
        assert_eq!(
            exported.text,
            include_str!("../../tests/clients/export/vscode-inputs.expected.json")
        );
        let again = export(Client::Vscode, Some(&exported.text), &servers(), &options).unwrap();
        assert!(!again.changed);
    }

    #[test]
    fn new_files_follow_each_client_layout() {
        for client in ALL {
            let exported = run(client, None);
            assert!(exported.changed, "{client}");
            assert!(exported.text.ends_with("\n"), "{client}");
            assert!(!exported.text.ends_with("\n\n"), "{client}");
            let value: Value = if client == Client::Codex {
                toml::from_str(&exported.text).unwrap()
            } else {
                serde_json::from_str(&exported.text).unwrap()
            };
            // The toml crate reads tables in sorted order.
            let mut names: Vec<&String> = value[client.servers_key()]
                .as_object()
                .unwrap()
                .keys()
                .collect();
            names.sort();
            let expected: &[&str] = if client == Client::ClaudeDesktop {
                &["db", "github"]
            } else {
                &["db", "github", "linear"]
            };
            assert_eq!(names, expected, "{client}");
            assert!(in_sync(client, &exported.text, &servers(), &options()).unwrap());
            // An empty file counts as no file.
            assert_eq!(run(client, Some("")).text, exported.text, "{client}");
        }
        assert_eq!(
            run(Client::Codex, None).text,
            r#"[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env_vars = ["GITHUB_TOKEN"]

[mcp_servers.db]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-postgres", "${DB_URL:-postgres://localhost/dev}"]

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_API_KEY"
env_http_headers = { X-Api-Key = "KEY" }
"#
        );
        let linear = &servers()[2..];
        assert_eq!(
            export(Client::Vscode, None, linear, &options())
                .unwrap()
                .text,
            r#"{
  "servers": {
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp",
      "headers": {
        "Authorization": "Bearer ${env:LINEAR_API_KEY}",
        "X-Api-Key": "${env:KEY}"
      }
    }
  }
}
"#
        );
        let gemini: Value = serde_json::from_str(&run(Client::Gemini, None).text).unwrap();
        assert_eq!(
            gemini["mcpServers"]["linear"]["httpUrl"],
            "https://mcp.linear.app/mcp"
        );
        let windsurf: Value = serde_json::from_str(&run(Client::Windsurf, None).text).unwrap();
        assert_eq!(
            windsurf["mcpServers"]["linear"]["serverUrl"],
            "https://mcp.linear.app/mcp"
        );
        let cursor: Value = serde_json::from_str(&run(Client::Cursor, None).text).unwrap();
        assert_eq!(
            cursor["mcpServers"]["github"],
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}})
        );
        assert_eq!(
            cursor["mcpServers"]["linear"],
            json!({"url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${env:LINEAR_API_KEY}", "X-Api-Key": "${env:KEY}"}})
        );
    }

    #[test]
    fn in_sync_until_something_changes() {
        for client in ALL {
            let (existing, _) = fixture(client);
            assert!(
                !in_sync(client, existing, &servers(), &options()).unwrap(),
                "{client}"
            );
            let text = run(client, Some(existing)).text;
            assert!(
                in_sync(client, &text, &servers(), &options()).unwrap(),
                "{client}"
            );
            // A changed server in `.mcp.json`.
            let mut changed = servers();
            changed[0].1 = ServerEntry::from_value(stdio(
                &["-y", "@modelcontextprotocol/server-github", "--read-only"],
                json!({"GITHUB_TOKEN": "${GITHUB_TOKEN}"}),
            ));
            assert!(
                !in_sync(client, &text, &changed, &options()).unwrap(),
                "{client}"
            );
            // A new server in `.mcp.json`.
            let mut added = servers();
            added.extend(one("fetch", stdio(&["-y", "mcp-fetch"], json!({}))));
            assert!(
                !in_sync(client, &text, &added, &options()).unwrap(),
                "{client}"
            );
            // A server edited by hand in the client's file.
            let edited = text.replacen("@modelcontextprotocol/server-github", "server-github", 1);
            assert!(
                !in_sync(client, &edited, &servers(), &options()).unwrap(),
                "{client}"
            );
        }
        // Resolved clients go out of sync when a value changes.
        let text = run(Client::Zed, None).text;
        let rotated = |name: &str| lookup(name).map(|value| format!("{value}-rotated"));
        let options = ExportOptions {
            vscode_inputs: false,
            lookup: Some(&rotated),
            ..ExportOptions::default()
        };
        assert!(!in_sync(Client::Zed, &text, &servers(), &options).unwrap());
    }

    #[test]
    fn secret_values_appear_only_where_the_client_expands_nothing() {
        let secrets = [
            "github-secret-0001",
            "linear-secret-0002",
            "key-secret-0003",
        ];
        for vscode_inputs in [false, true] {
            let options = ExportOptions {
                vscode_inputs,
                lookup: Some(&lookup),
                ..ExportOptions::default()
            };
            for client in ALL {
                for existing in [None, Some(fixture(client).0)] {
                    let text = export(client, existing, &servers(), &options).unwrap().text;
                    let written: Vec<&str> = secrets
                        .into_iter()
                        .filter(|secret| text.contains(secret))
                        .collect();
                    match (client, Secrets::of(client)) {
                        (_, Secrets::Placeholders) => {
                            assert_eq!(written, [] as [&str; 0], "{client}");
                        }
                        (Client::ClaudeDesktop, Secrets::Resolved) => {
                            assert_eq!(written, ["github-secret-0001"]);
                            assert!(!text.contains("${"), "{text}");
                        }
                        (_, Secrets::Resolved) => {
                            assert_eq!(written, secrets, "{client}");
                            assert!(!text.contains("${"), "{text}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn warnings_name_what_is_lost() {
        let warnings = |client| run(client, None).warnings;
        for client in [Client::Cursor, Client::Vscode, Client::Windsurf] {
            assert_eq!(
                warnings(client),
                [format!(
                    "`db`: {} has no default values; `args[2]` reads `DB_URL` without its default",
                    client.title()
                )]
            );
        }
        assert_eq!(warnings(Client::Gemini), [] as [String; 0]);
        assert_eq!(
            warnings(Client::Codex),
            [
                "`db`: Codex cannot expand variables; `args[2]` is written as `${DB_URL:-postgres://localhost/dev}`"
            ]
        );
        assert_eq!(
            warnings(Client::Zed),
            [
                "`github`: Zed cannot read environment variables, so the value of `GITHUB_TOKEN` is written into its file; keep that file private",
                "`linear`: Zed cannot read environment variables, so the values of `LINEAR_API_KEY`, `KEY` are written into its file; keep that file private",
            ]
        );
        assert_eq!(
            warnings(Client::ClaudeDesktop),
            [
                "`github`: Claude Desktop cannot read environment variables, so the value of `GITHUB_TOKEN` is written into its file; keep that file private",
                "`linear`: not exported: Claude Desktop reads only stdio servers from its file (remote ones are added as connectors in the app)",
            ]
        );
    }

    #[test]
    fn an_unset_variable_is_an_error_only_where_values_are_written() {
        let no_values = ExportOptions::default();
        for client in [Client::Zed, Client::ClaudeDesktop] {
            let error = export(client, None, &servers(), &no_values).unwrap_err();
            assert_eq!(
                error,
                ExportError::Unresolved {
                    client,
                    server: "github".into(),
                    field: Field::Env("GITHUB_TOKEN".into()),
                    name: "GITHUB_TOKEN".into(),
                }
            );
        }
        assert_eq!(
            export(Client::Zed, None, &servers(), &no_values)
                .unwrap_err()
                .to_string(),
            "variable `GITHUB_TOKEN` is not set, and Zed cannot read variables (server `github`, `env.GITHUB_TOKEN`)"
        );
        // A default stands in for an unset variable.
        let db = &servers()[1..2];
        let text = export(Client::Zed, None, db, &no_values).unwrap().text;
        assert!(text.contains("\"postgres://localhost/dev\""), "{text}");
        // Clients that expand placeholders never ask for values.
        for client in [
            Client::Cursor,
            Client::Vscode,
            Client::Windsurf,
            Client::Gemini,
            Client::Codex,
        ] {
            assert!(
                export(client, None, &servers(), &no_values).is_ok(),
                "{client}"
            );
        }
    }

    #[test]
    fn unparsable_files_are_errors() {
        for client in ALL {
            let broken = if client == Client::Codex {
                "[mcp_servers.a\ncommand = 1\n"
            } else {
                "{\n  \"mcpServers\": {\n}\n"
            };
            let error = export(client, Some(broken), &servers(), &options()).unwrap_err();
            let ExportError::Parse {
                client: named,
                source,
            } = &error
            else {
                panic!("{client}: {error:?}");
            };
            assert_eq!(*named, client);
            assert!(source.line >= 1, "{source}");
        }
        // Claude Desktop's file is strict JSON; the others accept comments
        // and trailing commas.
        let commented = "// servers\n{\"mcpServers\": {},}\n";
        let error = export(
            Client::ClaudeDesktop,
            Some(commented),
            &servers(),
            &options(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the existing Claude Desktop config does not parse"
        );
        assert!(export(Client::Cursor, Some(commented), &servers(), &options()).is_ok());
        // Only comments and trailing commas: no JSON5.
        let json5 = "{mcpServers: {'a': 0x1}}";
        assert!(export(Client::Cursor, Some(json5), &servers(), &options()).is_err());
    }

    #[test]
    fn wrong_shapes_are_errors() {
        let shape = |client, text: &str, options: &ExportOptions| {
            export(client, Some(text), &servers(), options)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            shape(Client::Cursor, "{\"mcpServers\": []}", &options()),
            "`mcpServers` in the existing Cursor config is an array, expected an object"
        );
        assert_eq!(
            shape(Client::Zed, "[]", &options()),
            "the root in the existing Zed config is an array, expected an object"
        );
        assert_eq!(
            shape(Client::Codex, "mcp_servers = 1\n", &options()),
            "`mcp_servers` in the existing Codex config is an integer, expected a table"
        );
        let inputs = ExportOptions {
            vscode_inputs: true,
            lookup: None,
            ..ExportOptions::default()
        };
        assert_eq!(
            shape(Client::Vscode, "{\"inputs\": {}}", &inputs),
            "`inputs` in the existing VS Code config is an object, expected an array"
        );
        assert_eq!(
            export(Client::ClaudeCode, None, &servers(), &options())
                .unwrap_err()
                .to_string(),
            "cannot export to claude-code: its `.mcp.json` is the source of the export"
        );
    }

    #[test]
    fn json_layout_follows_the_file() {
        let github = &servers()[..1];
        let cursor = |text: &str| {
            export(Client::Cursor, Some(text), github, &options())
                .unwrap()
                .text
        };
        let entry = json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}});

        // Tabs, CRLF and a BOM are kept.
        let text = "\u{feff}{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {}\r\n\t}\r\n}\r\n";
        let out = cursor(text);
        assert!(out.starts_with("\u{feff}{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {},\r\n\t\t\"github\": {\r\n\t\t\t\"command\": \"npx\",\r\n"), "{out:?}");
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");

        // One-line files stay on one line.
        assert_eq!(
            cursor("{\"mcpServers\": {\"a\": {}}}"),
            format!("{{\"mcpServers\": {{\"a\": {{}}, \"github\": {entry}}}}}")
        );

        // An empty object with a comment in it opens after the comment.
        assert_eq!(
            cursor("{\n  \"mcpServers\": { // none yet\n  }\n}\n"),
            format!(
                "{{\n  \"mcpServers\": {{ // none yet\n    \"github\": {}\n  }}\n}}\n",
                pretty(&entry, "  ", "    ")
            )
        );

        // A missing servers object is added last, in the file's indent.
        assert_eq!(
            cursor("{\n    \"x\": 1 // one\n}"),
            format!(
                "{{\n    \"x\": 1, // one\n    \"mcpServers\": {{\n        \"github\": {}\n    }}\n}}",
                pretty(&entry, "    ", "        ")
            )
        );

        // A comment-only file gets the servers below its comments.
        assert_eq!(
            cursor("// my servers\n"),
            format!(
                "// my servers\n{{\n  \"mcpServers\": {{\n    \"github\": {}\n  }}\n}}\n",
                pretty(&entry, "  ", "    ")
            )
        );

        // A server that is already right keeps its own layout.
        let compact = format!("{{\"mcpServers\": {{\"github\": {entry}}}}}");
        assert_eq!(cursor(&compact), compact);

        // An empty object in a one-line file stays on one line.
        assert_eq!(
            cursor("{\"x\": 1, \"mcpServers\": {}}"),
            format!("{{\"x\": 1, \"mcpServers\": {{\"github\": {entry}}}}}")
        );

        // Nothing to export adds nothing to an existing file.
        let text = "{\n  \"x\": 1\n}\n";
        let exported = export(Client::Cursor, Some(text), &[], &options()).unwrap();
        assert_eq!((exported.text.as_str(), exported.changed), (text, false));
    }

    #[test]
    fn codex_maps_variables_to_its_own_keys() {
        let export_codex = |servers: &[(String, ServerEntry)], existing: Option<&str>| {
            export(Client::Codex, existing, servers, &options()).unwrap()
        };
        let renamed = one(
            "gh",
            stdio(
                &[],
                json!({"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1", "PORT": "${PORT:-8080}", "HOME_DIR": "${HOME}/x"}),
            ),
        );
        let exported = export_codex(&renamed, None);
        assert_eq!(
            exported.text,
            "[mcp_servers.gh]\ncommand = \"npx\"\nenv = { GITHUB_PERSONAL_ACCESS_TOKEN = \"${GITHUB_TOKEN}\", DEBUG = \"1\", HOME_DIR = \"${HOME}/x\" }\nenv_vars = [\"PORT\"]\n"
        );
        assert_eq!(
            exported.warnings,
            [
                "`gh`: Codex cannot expand variables; `env.GITHUB_PERSONAL_ACCESS_TOKEN` is written as `${GITHUB_TOKEN}` (only a whole `${GITHUB_PERSONAL_ACCESS_TOKEN}` can become `env_vars`)",
                "`gh`: Codex has no default values; `env.PORT` reads `PORT` without its default",
                "`gh`: Codex cannot expand variables; `env.HOME_DIR` is written as `${HOME}/x` (only a whole `${HOME_DIR}` can become `env_vars`)",
            ]
        );

        let remote = one(
            "api",
            json!({"type": "http", "url": "https://${HOST}/mcp", "headers": {"authorization": "Bearer ${TOKEN}", "X-Team": "core", "X-Key": "key=${KEY}"}}),
        );
        let exported = export_codex(&remote, None);
        assert_eq!(
            exported.text,
            "[mcp_servers.api]\nurl = \"https://${HOST}/mcp\"\nbearer_token_env_var = \"TOKEN\"\nhttp_headers = { X-Team = \"core\", X-Key = \"key=${KEY}\" }\n"
        );
        assert_eq!(exported.warnings.len(), 2, "{:?}", exported.warnings);

        // SSE and Claude-only transports are left out, with a warning.
        let sse = one(
            "events",
            json!({"type": "sse", "url": "https://x.test/sse"}),
        );
        let exported = export_codex(&sse, None);
        assert_eq!(exported.text, "");
        assert_eq!(
            exported.warnings,
            ["`events`: not exported: Codex has no `sse` servers"]
        );

        // Inline server tables stay inline.
        let existing =
            "mcp_servers = { other = { command = \"x\" }, gh = { command = \"old\" } }\n";
        let gh = one("gh", stdio(&["-y"], json!({})));
        assert_eq!(
            export_codex(&gh, Some(existing)).text,
            "mcp_servers = { other = { command = \"x\" }, gh = { command = \"npx\", args = [\"-y\"] } }\n"
        );

        // A config with other tables but no servers gets them at the end.
        let existing = "model = \"o3\"\n\n[profiles.x]\nmodel = \"y\"\n";
        assert_eq!(
            export_codex(&gh, Some(existing)).text,
            "model = \"o3\"\n\n[profiles.x]\nmodel = \"y\"\n\n[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"-y\"]\n"
        );
    }

    #[test]
    fn vscode_inputs_are_added_once() {
        let options = ExportOptions {
            vscode_inputs: true,
            lookup: None,
            ..ExportOptions::default()
        };
        let existing = r#"{
  "servers": {},
  "inputs": [
    {"type": "promptString", "id": "github-token", "description": "mine", "password": true}
  ]
}
"#;
        let github = &servers()[..1];
        let exported = export(Client::Vscode, Some(existing), github, &options).unwrap();
        assert_eq!(
            exported.text,
            r#"{
  "servers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "${input:github-token}"
      }
    }
  },
  "inputs": [
    {"type": "promptString", "id": "github-token", "description": "mine", "password": true}
  ]
}
"#
        );
        // Variables that do not look secret stay `${env:…}`.
        let db = one(
            "db",
            stdio(
                &["--url", "${DB_URL}"],
                json!({"LOG_LEVEL": "${LOG_LEVEL}"}),
            ),
        );
        let exported = export(Client::Vscode, None, &db, &options).unwrap();
        assert!(!exported.text.contains("inputs"), "{}", exported.text);
        assert!(exported.text.contains("\"${env:LOG_LEVEL}\""));
    }

    #[test]
    fn fields_and_forms_a_client_cannot_take_are_reported() {
        let entry = json!({"type": "stdio", "command": "node", "args": ["$HOME/server.js", "${env:PORT}"], "timeout": 5000, "alwaysLoad": true});
        let exported = export(
            Client::Gemini,
            None,
            &one("node", entry.clone()),
            &options(),
        )
        .unwrap();
        assert_eq!(
            exported.warnings,
            [
                "`node`: `timeout`, `alwaysLoad` not exported: only the command, arguments, environment, URL and headers go to Gemini CLI",
                "`node`: Gemini CLI expands `$HOME` in `args[0]`, which Claude Code passes on as it is",
            ]
        );
        let exported = export(Client::Cursor, None, &one("node", entry), &options()).unwrap();
        assert_eq!(
            exported.warnings[1],
            "`node`: Cursor may expand the `${…}` in `args[1]`, which Claude Code passes on as it is"
        );
        let ws = one("live", json!({"type": "ws", "url": "wss://x.test"}));
        for client in ALL {
            let exported = export(client, None, &ws, &options()).unwrap();
            let why = if client == Client::ClaudeDesktop {
                "Claude Desktop reads only stdio servers from its file (remote ones are added as connectors in the app)".to_string()
            } else {
                format!("{} has no `ws` servers", client.title())
            };
            assert_eq!(exported.warnings, [format!("`live`: not exported: {why}")]);
        }
        let broken = one("broken", json!({"type": "stdio", "args": []}));
        let exported = export(Client::Cursor, None, &broken, &options()).unwrap();
        assert_eq!(
            exported.warnings,
            ["`broken`: not exported: stdio entry has no `command`"]
        );
    }

    #[test]
    fn zed_and_sse_entries() {
        let sse = one(
            "events",
            json!({"type": "sse", "url": "https://x.test/sse"}),
        );
        let shape = |client| {
            let text = export(client, None, &sse, &options()).unwrap().text;
            serde_json::from_str::<Value>(&text).unwrap()[client.servers_key()]["events"].clone()
        };
        assert_eq!(
            shape(Client::Vscode),
            json!({"type": "sse", "url": "https://x.test/sse"})
        );
        assert_eq!(shape(Client::Gemini), json!({"url": "https://x.test/sse"}));
        assert_eq!(shape(Client::Cursor), json!({"url": "https://x.test/sse"}));
        assert_eq!(
            shape(Client::Windsurf),
            json!({"serverUrl": "https://x.test/sse"})
        );
        assert_eq!(shape(Client::Zed), json!({"url": "https://x.test/sse"}));
        // Zed's custom servers always carry `args`.
        let bare = one(
            "bare",
            json!({"type": "stdio", "command": "srv", "args": []}),
        );
        let text = export(Client::Zed, None, &bare, &options()).unwrap().text;
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["context_servers"]["bare"],
            json!({"command": "srv", "args": []})
        );
    }

    #[test]
    fn only_written_servers_count_and_nothing_makes_no_file() {
        let remote = one(
            "events",
            json!({"type": "sse", "url": "https://x.test/sse"}),
        );
        for client in [Client::Codex, Client::ClaudeDesktop] {
            let exported = export(client, None, &remote, &options()).unwrap();
            assert!(!exported.changed, "{client}");
            assert_eq!(exported.text, "");
            assert!(exported.servers.is_empty());
            assert_eq!(exported.skipped, ["events"]);
            assert_eq!(exported.warnings.len(), 1, "{:?}", exported.warnings);
        }
        let exported = export(Client::Codex, None, &[], &options()).unwrap();
        assert!(!exported.changed && exported.text.is_empty());
        // An existing file is left byte for byte, but must still parse.
        let existing = "model = \"o3\"\n";
        let exported = export(Client::Codex, Some(existing), &remote, &options()).unwrap();
        assert_eq!(
            (exported.changed, exported.text.as_str()),
            (false, existing)
        );
        assert!(export(Client::Codex, Some("[x\n"), &remote, &options()).is_err());
        let mut both = remote.clone();
        both.extend(one("gh", stdio(&["-y"], json!({}))));
        let exported = export(Client::Codex, None, &both, &options()).unwrap();
        assert_eq!(exported.servers, ["gh"]);
        assert_eq!(exported.skipped, ["events"]);
    }

    #[test]
    fn prune_removes_members_anywhere_and_keeps_the_rest() {
        let prune = |text: &str, names: &[&str]| {
            let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
            prune_json(Client::Cursor, text, &names).unwrap()
        };
        let text = "{\"mcpServers\": {\n  \"a\": 1, // one\n  \"b\": 2,\n  \"c\": 3\n}}";
        assert_eq!(
            prune(text, &["a"]),
            "{\"mcpServers\": {\n  \"b\": 2,\n  \"c\": 3\n}}"
        );
        assert_eq!(
            prune(text, &["b"]),
            "{\"mcpServers\": {\n  \"a\": 1, // one\n  \"c\": 3\n}}"
        );
        assert_eq!(
            prune(text, &["b", "c"]),
            "{\"mcpServers\": {\n  \"a\": 1\n}}"
        );
        // Comments on a member's line go with it.
        assert_eq!(prune(text, &["a", "b", "c"]), "{\"mcpServers\": {\n  \n}}");
        assert_eq!(
            prune("{\"mcpServers\": {\"a\": 1}}", &["a"]),
            "{\"mcpServers\": {}}"
        );
        // Through `export`: only names the file holds count as pruned.
        let options = ExportOptions {
            prune: &["b".to_string(), "zz".to_string()],
            ..ExportOptions::default()
        };
        let exported = export(Client::Cursor, Some(text), &[], &options).unwrap();
        assert_eq!(exported.pruned, ["b"]);
        assert!(exported.changed);
        let toml = "[mcp_servers.a]\ncommand = \"x\"\n\n[mcp_servers.b]\ncommand = \"y\"\n";
        let exported = export(Client::Codex, Some(toml), &[], &options).unwrap();
        assert_eq!(exported.text, "[mcp_servers.a]\ncommand = \"x\"\n");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn entry() -> impl Strategy<Value = Value> {
            prop_oneof![
                "[a-z]{1,6}".prop_map(|command| json!({"command": command})),
                ("[a-z]{1,6}", prop::collection::vec("[ -~]{0,6}", 0..3))
                    .prop_map(|(command, args)| json!({"command": command, "args": args})),
                "[a-z]{1,6}".prop_map(|host| json!({"url": format!("https://{host}.test")})),
            ]
        }

        /// A Cursor-style file: foreign servers and keys, laid out with any
        /// indent, inline or not, with comments and trailing commas.
        fn file() -> impl Strategy<Value = (String, Map<String, Value>)> {
            (
                prop::collection::vec(("[a-z]{1,4}", entry()), 0..4),
                prop_oneof![Just(""), Just("  "), Just("    "), Just("\t")],
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(foreign, unit, trailing_comma, comments, has_servers)| {
                    let foreign: Map<String, Value> = foreign.into_iter().collect();
                    let mut root = Map::new();
                    root.insert("before".into(), json!([1, "two"]));
                    if has_servers {
                        root.insert("mcpServers".into(), Value::Object(foreign.clone()));
                    }
                    root.insert("after".into(), json!({"k": null}));
                    let mut text = if unit.is_empty() {
                        Value::Object(root).to_string()
                    } else {
                        pretty(&Value::Object(root), unit, "")
                    };
                    if trailing_comma {
                        text = text.replace("}\n", "},\n").replace("]\n", "],\n");
                    }
                    if comments {
                        text = format!("// head\n{}", text.replace(",\n", ", // note\n"));
                    }
                    let foreign = if has_servers { foreign } else { Map::new() };
                    (text, foreign)
                })
        }

        proptest! {
            /// Exporting keeps every foreign server and key, writes the
            /// exported servers exactly, and is then in sync.
            #[test]
            fn export_keeps_foreign_members(
                (text, foreign) in file(),
                names in prop::collection::vec("[a-z]{1,4}", 1..4),
            ) {
                let servers: Vec<(String, ServerEntry)> = names
                    .iter()
                    .map(|name| (name.clone(), ServerEntry::from_value(json!({"command": "npx", "args": [name, "${TOKEN}"]}))))
                    .collect();
                let exported = export(Client::Cursor, Some(&text), &servers, &options()).unwrap();
                let options = ParseOptions { allow_comments: true, allow_trailing_commas: true, ..ParseOptions::default() };
                let parsed = jsonc_parser::parse_to_ast(&exported.text, &CollectOptions::default(), &options).unwrap();
                let root = ast_to_json(parsed.value.as_ref().unwrap());
                prop_assert_eq!(&root["before"], &json!([1, "two"]));
                prop_assert_eq!(&root["after"], &json!({"k": null}));
                for (name, value) in &foreign {
                    if !names.contains(name) {
                        prop_assert_eq!(&root["mcpServers"][name], value);
                    }
                }
                for name in &names {
                    prop_assert_eq!(&root["mcpServers"][name], &json!({"command": "npx", "args": [name, "${env:TOKEN}"]}));
                }
                prop_assert!(in_sync(Client::Cursor, &exported.text, &servers, &ExportOptions::default()).unwrap());
            }
        }
    }
}
