//! Server entries as Claude Code stores them: names, transports, and the
//! exact shapes (key order included) that `claude mcp add` writes.

use std::fmt;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Names Claude Code refuses to add (compared case-sensitively).
pub const RESERVED_NAMES: [&str; 4] = [
    "claude-in-chrome",
    "computer-use",
    "Claude_Preview",
    "workspace",
];

/// Why a server name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty name.
    #[error("server name is required")]
    Empty,
    /// Characters outside `[A-Za-z0-9_-]`.
    #[error(
        "invalid server name `{0}`: names can only contain letters, numbers, hyphens and underscores"
    )]
    Invalid(String),
    /// One of Claude Code's reserved names.
    #[error("server name `{0}` is reserved by Claude Code")]
    Reserved(String),
}

/// The characters Claude Code 2.1.332 accepts in a new server's name, as a
/// JSON Schema `pattern` (no length cap: Claude Code sets none). With
/// [`RESERVED_NAMES`], the whole rule; [`validate_name`] applies it.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9_-]+$";

/// Checks a new server's name (every front-end, every command that
/// names a server): [`NAME_PATTERN`] and not reserved.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if !name
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
    {
        return Err(NameError::Invalid(name.to_string()));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(NameError::Reserved(name.to_string()));
    }
    Ok(())
}

/// How Claude Code talks to a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking over stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Server-sent events (deprecated by the spec, still supported).
    Sse,
    /// WebSocket (Claude Code only, not in `claude mcp add`).
    Ws,
    /// In-process SDK server.
    Sdk,
    /// A `type` Claude Code does not know; it skips such entries.
    #[serde(untagged)]
    Unknown(String),
}

impl Transport {
    /// Parses a `type` value (`streamable-http` is Claude Code's alias for `http`).
    pub fn parse(text: &str) -> Self {
        match text {
            "stdio" => Self::Stdio,
            "http" | "streamable-http" => Self::Http,
            "sse" => Self::Sse,
            "ws" => Self::Ws,
            "sdk" => Self::Sdk,
            other => Self::Unknown(other.to_string()),
        }
    }

    /// The value stored in `type`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
            Self::Sse => "sse",
            Self::Ws => "ws",
            Self::Sdk => "sdk",
            Self::Unknown(other) => other,
        }
    }

    /// Whether entries of this transport are reached by URL.
    pub fn is_remote(&self) -> bool {
        matches!(self, Self::Http | Self::Sse | Self::Ws)
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Where a string sits in a server entry; displayed as mcpenv reports it:
/// `command`, `args[3]`, `env.GITHUB_TOKEN`, `url`, `url.password`,
/// `url.query.api_key`, `headers.Authorization`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// `command`.
    Command,
    /// One element of `args`.
    Arg(usize),
    /// The value of one `env` variable.
    Env(String),
    /// The whole `url`.
    Url,
    /// The password in the URL's userinfo (`scheme://user:PASSWORD@host`).
    UrlPassword,
    /// The value of one query parameter of the URL.
    UrlQuery(String),
    /// The value of one header.
    Header(String),
}

impl fmt::Display for Field {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command => formatter.write_str("command"),
            Self::Arg(index) => write!(formatter, "args[{index}]"),
            Self::Env(key) => write!(formatter, "env.{key}"),
            Self::Url => formatter.write_str("url"),
            Self::UrlPassword => formatter.write_str("url.password"),
            Self::UrlQuery(name) => write!(formatter, "url.query.{name}"),
            Self::Header(name) => write!(formatter, "headers.{name}"),
        }
    }
}

impl Serialize for Field {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One server entry, exactly as found in a file (unknown keys kept).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerEntry {
    fields: Map<String, Value>,
}

impl ServerEntry {
    /// Wraps a parsed entry; a non-object entry becomes an empty one, which
    /// [`ServerEntry::problems`] then reports.
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(fields) => Self { fields },
            _ => Self::default(),
        }
    }

    /// The entry's members, in file order.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// The transport: `type`, or stdio when absent.
    pub fn transport(&self) -> Transport {
        match self.fields.get("type") {
            Some(Value::String(kind)) => Transport::parse(kind),
            Some(other) => Transport::Unknown(other.to_string()),
            None => Transport::Stdio,
        }
    }

    /// `command`, when it is a string.
    pub fn command(&self) -> Option<&str> {
        self.fields.get("command").and_then(Value::as_str)
    }

    /// The string members of `args`.
    pub fn args(&self) -> Vec<&str> {
        self.fields
            .get("args")
            .and_then(Value::as_array)
            .map(|args| args.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// `url`, when it is a string.
    pub fn url(&self) -> Option<&str> {
        self.fields.get("url").and_then(Value::as_str)
    }

    /// The string members of `env`, in order.
    pub fn env(&self) -> Vec<(&str, &str)> {
        string_map(self.fields.get("env"))
    }

    /// The string members of `headers`, in order.
    pub fn headers(&self) -> Vec<(&str, &str)> {
        string_map(self.fields.get("headers"))
    }

    /// The string fields Claude Code expands `${VAR}` in, in entry order:
    /// stdio `command`, each of `args`, `env` values; remote `url` and
    /// header values. Keys are never expanded.
    pub fn expandable_fields(&self) -> Vec<(Field, &str)> {
        self.expandable_fields_where(|_| true)
    }

    /// [`Self::expandable_fields`] whose value passes `keep`: the others
    /// cost no [`Field`] (a scan asks only for the values holding a `$`).
    pub fn expandable_fields_where(&self, keep: impl Fn(&str) -> bool) -> Vec<(Field, &str)> {
        let mut fields = Vec::new();
        if self.transport().is_remote() {
            if let Some(url) = self.url().filter(|url| keep(url)) {
                fields.push((Field::Url, url));
            }
            for (name, value) in string_members(self.fields.get("headers")) {
                if keep(value) {
                    fields.push((Field::Header(name.to_string()), value));
                }
            }
        } else {
            if let Some(command) = self.command().filter(|command| keep(command)) {
                fields.push((Field::Command, command));
            }
            if let Some(Value::Array(args)) = self.fields.get("args") {
                for (index, arg) in args.iter().enumerate() {
                    if let Some(arg) = arg.as_str().filter(|arg| keep(arg)) {
                        fields.push((Field::Arg(index), arg));
                    }
                }
            }
            for (key, value) in string_members(self.fields.get("env")) {
                if keep(value) {
                    fields.push((Field::Env(key.to_string()), value));
                }
            }
        }
        fields
    }

    /// What Claude Code would reject or skip about this entry.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.fields.is_empty() {
            problems.push("entry is not a JSON object".to_string());
            return problems;
        }
        match self.transport() {
            Transport::Stdio => match self.fields.get("command") {
                Some(Value::String(command)) if !command.is_empty() => {}
                Some(Value::String(_)) => problems.push("`command` is empty".to_string()),
                Some(_) => problems.push("`command` is not a string".to_string()),
                None => problems.push("stdio entry has no `command`".to_string()),
            },
            Transport::Http | Transport::Sse | Transport::Ws => match self.fields.get("url") {
                Some(Value::String(url)) if !url.is_empty() => {}
                Some(_) => problems.push("`url` is not a non-empty string".to_string()),
                None => problems.push(format!("{} entry has no `url`", self.transport())),
            },
            Transport::Sdk => {}
            Transport::Unknown(kind) => problems.push(format!("unknown transport type `{kind}`")),
        }
        for (key, kind) in [
            ("args", "an array of strings"),
            ("env", "an object of strings"),
            ("headers", "an object of strings"),
        ] {
            let valid = match self.fields.get(key) {
                None => true,
                Some(Value::Array(items)) if key == "args" => items.iter().all(Value::is_string),
                Some(Value::Object(members)) if key != "args" => {
                    members.values().all(Value::is_string)
                }
                Some(_) => false,
            };
            if !valid {
                problems.push(format!("`{key}` is not {kind}"));
            }
        }
        problems
    }

    /// The entry as JSON.
    pub fn to_value(&self) -> Value {
        Value::Object(self.fields.clone())
    }
}

fn string_map(value: Option<&Value>) -> Vec<(&str, &str)> {
    string_members(value).collect()
}

/// The string members of an object, in order; none for anything else.
fn string_members(value: Option<&Value>) -> impl Iterator<Item = (&str, &str)> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| Some((key.as_str(), value.as_str()?)))
}

/// A stdio entry as `claude mcp add` writes it: all four keys, empty ones kept.
pub fn stdio_entry(command: &str, args: &[String], env: &IndexMap<String, String>) -> Value {
    json!({
        "type": "stdio",
        "command": command,
        "args": args,
        "env": env,
    })
}

/// An http/sse entry as `claude mcp add` writes it: `headers` only when given.
pub fn remote_entry(transport: &Transport, url: &str, headers: &IndexMap<String, String>) -> Value {
    let mut entry = Map::new();
    entry.insert("type".into(), Value::from(transport.as_str()));
    entry.insert("url".into(), Value::from(url));
    if !headers.is_empty() {
        entry.insert("headers".into(), json!(headers));
    }
    Value::Object(entry)
}

/// Why a JSON entry given to `add-json` is not usable (Claude Code
/// 2.1.332's reasons, in mcpenv's wording).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Not an object.
    #[error("a server entry must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// Neither `type` nor `command`.
    #[error("{0}")]
    Shape(&'static str),
    /// A `type` Claude Code does not know.
    #[error(r#"unknown "type" {0}: use "stdio", "sse", "http" (or "streamable-http") or "ws""#)]
    UnknownType(String),
    /// A type Claude Code never stores in configuration.
    #[error("type `{kind}` {reason}")]
    NotStorable {
        /// The type.
        kind: String,
        /// Why.
        reason: &'static str,
    },
    /// A member does not fit Claude Code's schema.
    #[error("`{field}`: {problem}")]
    Invalid {
        /// The member's path (`oauth.callbackPort`, `tools[0].name`).
        field: String,
        /// What is wrong.
        problem: String,
    },
}

/// An entry as `claude mcp add-json` stores it, and what changed on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The entry to store.
    pub entry: Value,
    /// Keys no Claude Code schema knows, kept after the known ones
    /// (Claude Code drops them; mcpenv keeps them and says so).
    pub unknown: Vec<String>,
    /// What Claude Code would drop or change, one sentence each (mcpenv
    /// does the same).
    pub notes: Vec<String>,
}

/// What a member must hold, as Claude Code 2.1.332's schema checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Checked before the rest.
    Type,
    /// A non-empty string (`command`).
    Command,
    /// A string of at most `limit` characters.
    Text(usize),
    /// An array of strings.
    Strings,
    /// An object of strings.
    StringMap,
    /// A positive integer.
    PositiveInt,
    /// `true` or `false`.
    Bool,
    /// A string; anything else is dropped.
    TextOrDropped,
    /// `"comms"`; anything else is dropped.
    Role,
    /// A positive integer folded into `timeout` (at most 300000 ms) when
    /// `timeout` is absent; anything else is dropped.
    RequestTimeout,
    /// `oauth`: an object of known members.
    Oauth,
    /// `tools`: an array of `{name, permission_policy}`.
    Tools,
    /// `toolPermissions`: tool name to `allow`, `ask` or `blocked`.
    ToolPermissions,
    /// A string or null; anything else becomes `"malformed"`; `"allow"` is
    /// dropped.
    OrgMaxPermission,
}

/// The longest `url` Claude Code accepts.
const URL_LIMIT: usize = 65_536;
/// The largest `timeout` `request_timeout_ms` folds into.
const REQUEST_TIMEOUT_CAP: u64 = 300_000;

/// Claude Code's stdio schema, in stored order.
const STDIO_SCHEMA: &[(&str, Rule)] = &[
    ("type", Rule::Type),
    ("command", Rule::Command),
    ("args", Rule::Strings),
    ("env", Rule::StringMap),
    ("timeout", Rule::PositiveInt),
    ("alwaysLoad", Rule::Bool),
    ("bareElicitationCapability", Rule::Bool),
    ("role", Rule::Role),
];

/// Claude Code's sse and http schema, in stored order.
const REMOTE_SCHEMA: &[(&str, Rule)] = &[
    ("type", Rule::Type),
    ("url", Rule::Text(URL_LIMIT)),
    ("headers", Rule::StringMap),
    ("headersHelper", Rule::Text(usize::MAX)),
    ("oauth", Rule::Oauth),
    ("timeout", Rule::PositiveInt),
    ("request_timeout_ms", Rule::RequestTimeout),
    ("tools", Rule::Tools),
    ("alwaysLoad", Rule::Bool),
    ("displayName", Rule::TextOrDropped),
    ("bareElicitationCapability", Rule::Bool),
    ("discoveryCache", Rule::Bool),
    ("role", Rule::Role),
    ("toolPermissions", Rule::ToolPermissions),
    ("orgMaxPermission", Rule::OrgMaxPermission),
];

/// Claude Code's ws schema, in stored order.
const WS_SCHEMA: &[(&str, Rule)] = &[
    ("type", Rule::Type),
    ("url", Rule::Text(URL_LIMIT)),
    ("headers", Rule::StringMap),
    ("headersHelper", Rule::Text(usize::MAX)),
    ("timeout", Rule::PositiveInt),
    ("alwaysLoad", Rule::Bool),
    ("bareElicitationCapability", Rule::Bool),
    ("role", Rule::Role),
];

/// `oauth` members, in stored order.
const OAUTH_KEYS: &[&str] = &[
    "clientId",
    "callbackPort",
    "authServerMetadataUrl",
    "scopes",
    "xaa",
];

/// Types Claude Code knows but never stores (the host registers them).
const HOST_ONLY_TYPES: &[&str] = &["sdk", "sse-ide", "ws-ide"];

/// An entry normalised as `claude mcp add-json` (Claude Code 2.1.332)
/// stores it: validated, known keys in Claude Code's order, `streamable-http`
/// stored as `http`, `args` defaulted to `[]` for stdio, keys Claude Code
/// knows but does not use for this transport dropped (`displayName` for
/// stdio), `request_timeout_ms` folded into `timeout` (last, at most
/// 300000), invalid optional values dropped as Claude Code drops them.
/// Keys no schema knows are kept after the known ones (Claude Code reads
/// entries with extra keys without complaint) and returned so the caller
/// can say so.
pub fn normalize_entry(value: Value) -> Result<Normalized, EntryError> {
    let Value::Object(mut fields) = value else {
        return Err(EntryError::NotAnObject(json_kind(&value)));
    };
    let transport = match fields.get("type") {
        None if fields.contains_key("command") => Transport::Stdio,
        None if fields.contains_key("url") => {
            return Err(EntryError::Shape(
                r#"it has a "url" but no "type": add "type": "http" (or "sse" / "ws")"#,
            ));
        }
        None if fields.contains_key("mcpServers") => {
            return Err(EntryError::Shape(
                r#"leave out the "mcpServers" wrapper and the server name: pass only the settings inside them"#,
            ));
        }
        None => {
            return Err(EntryError::Shape(
                r#"it needs a "command" for a local server, or a "type" and a "url" for a remote one"#,
            ));
        }
        Some(Value::String(kind)) if HOST_ONLY_TYPES.contains(&kind.as_str()) => {
            return Err(EntryError::NotStorable {
                kind: kind.clone(),
                reason: "servers are registered by the host application at runtime, not stored in configuration",
            });
        }
        Some(Value::String(kind)) if kind == "claudeai-proxy" => {
            return Err(EntryError::NotStorable {
                kind: kind.clone(),
                reason: r#"is used only by claude.ai connectors: connect the service at claude.ai/customize/connectors, or add it with type "http""#,
            });
        }
        Some(Value::String(kind)) => match Transport::parse(kind) {
            Transport::Unknown(kind) => return Err(EntryError::UnknownType(format!("`{kind}`"))),
            transport => transport,
        },
        Some(other) => return Err(EntryError::UnknownType(json_kind(other).to_string())),
    };
    if fields.contains_key("type") {
        fields.insert("type".into(), Value::from(transport.as_str()));
    }
    let schema = match transport {
        Transport::Stdio => {
            fields.entry("args").or_insert_with(|| json!([]));
            STDIO_SCHEMA
        }
        Transport::Ws => WS_SCHEMA,
        _ => REMOTE_SCHEMA,
    };
    let mut notes = Vec::new();
    let mut ordered = Map::new();
    let mut folded_timeout = None;
    for (key, rule) in schema {
        let Some(value) = fields.shift_remove(*key) else {
            continue;
        };
        let invalid = |problem: String| EntryError::Invalid {
            field: (*key).to_string(),
            problem,
        };
        let kept = match rule {
            Rule::Type => Some(value),
            Rule::Command => match value.as_str() {
                Some("") => return Err(invalid("command cannot be empty".into())),
                Some(_) => Some(value),
                None => return Err(invalid(expected("a string", &value))),
            },
            Rule::Text(limit) => match value.as_str() {
                Some(text) if text.chars().count() > *limit => {
                    return Err(invalid(format!("longer than {limit} characters")));
                }
                Some(_) => Some(value),
                None => return Err(invalid(expected("a string", &value))),
            },
            Rule::Strings => {
                let Some(items) = value.as_array() else {
                    return Err(invalid(expected("an array of strings", &value)));
                };
                if let Some((index, item)) =
                    items.iter().enumerate().find(|(_, item)| !item.is_string())
                {
                    return Err(EntryError::Invalid {
                        field: format!("{key}[{index}]"),
                        problem: expected("a string", item),
                    });
                }
                Some(value)
            }
            Rule::StringMap => {
                let Some(members) = value.as_object() else {
                    return Err(invalid(expected("an object of strings", &value)));
                };
                if let Some((name, member)) = members.iter().find(|(_, member)| !member.is_string())
                {
                    return Err(EntryError::Invalid {
                        field: format!("{key}.{name}"),
                        problem: expected("a string", member),
                    });
                }
                Some(value)
            }
            Rule::PositiveInt => {
                positive_int(&value)
                    .ok_or_else(|| invalid(expected("a positive integer", &value)))?;
                Some(value)
            }
            Rule::Bool => {
                if !value.is_boolean() {
                    return Err(invalid(expected("true or false", &value)));
                }
                Some(value)
            }
            Rule::TextOrDropped => {
                if value.is_string() {
                    Some(value)
                } else {
                    notes.push(format!(
                        "dropped `{key}`: it is {}, not a string (Claude Code drops it too)",
                        json_kind(&value)
                    ));
                    None
                }
            }
            Rule::Role => {
                if value == "comms" {
                    Some(value)
                } else {
                    notes.push(format!(
                        "dropped `{key}`: Claude Code knows only \"comms\" (and drops anything else)"
                    ));
                    None
                }
            }
            Rule::RequestTimeout => {
                match positive_int(&value) {
                    Some(ms) => folded_timeout = Some(ms),
                    None => notes.push(format!(
                        "dropped `{key}`: it is not a positive integer (Claude Code drops it too)"
                    )),
                }
                None
            }
            Rule::Oauth => Some(oauth(value, &mut notes)?),
            Rule::Tools => Some(tools(value, &mut notes)?),
            Rule::ToolPermissions => {
                let Some(members) = value.as_object() else {
                    return Err(invalid(expected("an object", &value)));
                };
                if let Some((name, member)) = members.iter().find(|(_, member)| {
                    !matches!(member.as_str(), Some("allow" | "ask" | "blocked"))
                }) {
                    return Err(EntryError::Invalid {
                        field: format!("{key}.{name}"),
                        problem: format!(
                            "expected \"allow\", \"ask\" or \"blocked\", not {}",
                            shown_value(member)
                        ),
                    });
                }
                Some(value)
            }
            Rule::OrgMaxPermission => match value {
                Value::String(text) if text == "allow" => {
                    notes.push(format!(
                        "dropped `{key}`: \"allow\" is no limit (Claude Code drops it too)"
                    ));
                    None
                }
                Value::String(_) | Value::Null => Some(value),
                other => {
                    notes.push(format!(
                        "`{key}` is {}, which Claude Code stores as \"malformed\"",
                        json_kind(&other)
                    ));
                    Some(Value::from("malformed"))
                }
            },
        };
        if let Some(value) = kept {
            ordered.insert((*key).to_string(), value);
        }
    }
    if let Some(ms) = folded_timeout {
        if ordered.contains_key("timeout") {
            notes.push(
                "dropped `request_timeout_ms`: `timeout` is set (Claude Code keeps `timeout`)"
                    .into(),
            );
        } else {
            let timeout = ms.min(REQUEST_TIMEOUT_CAP);
            if ms > REQUEST_TIMEOUT_CAP {
                notes.push(format!(
                    "`request_timeout_ms` {ms} became `\"timeout\": {timeout}`: Claude Code caps it there"
                ));
            }
            ordered.insert("timeout".into(), Value::from(timeout));
        }
    }
    // Keys Claude Code knows for other transports: it drops them here.
    let known_elsewhere: Vec<String> = fields
        .keys()
        .filter(|key| {
            [STDIO_SCHEMA, REMOTE_SCHEMA, WS_SCHEMA]
                .iter()
                .any(|schema| schema.iter().any(|(known, _)| known == key))
        })
        .cloned()
        .collect();
    for key in &known_elsewhere {
        fields.shift_remove(key);
        notes.push(format!(
            "dropped `{key}`: Claude Code does not use it for {transport} servers (and drops it)"
        ));
    }
    let required = if transport.is_remote() {
        "url"
    } else {
        "command"
    };
    let problem = match ordered.get(required).and_then(Value::as_str) {
        None => Some("missing"),
        // Claude Code stores an empty `url`, and then cannot connect.
        Some("") => Some("empty: Claude Code cannot connect to an empty URL"),
        Some(_) => None,
    };
    if let Some(problem) = problem {
        return Err(EntryError::Invalid {
            field: required.to_string(),
            problem: problem.to_string(),
        });
    }
    let unknown: Vec<String> = fields.keys().cloned().collect();
    ordered.extend(fields);
    Ok(Normalized {
        entry: Value::Object(ordered),
        unknown,
        notes,
    })
}

/// `oauth` with its members checked and in Claude Code's order.
fn oauth(value: Value, notes: &mut Vec<String>) -> Result<Value, EntryError> {
    let invalid = |field: &str, problem: String| EntryError::Invalid {
        field: format!("oauth.{field}"),
        problem,
    };
    let Value::Object(mut members) = value else {
        return Err(EntryError::Invalid {
            field: "oauth".into(),
            problem: expected("an object", &value),
        });
    };
    let mut ordered = Map::new();
    for key in OAUTH_KEYS {
        let Some(value) = members.shift_remove(*key) else {
            continue;
        };
        match *key {
            "clientId" if !value.is_string() => {
                return Err(invalid(key, expected("a string", &value)));
            }
            "callbackPort" if positive_int(&value).is_none() => {
                return Err(invalid(key, expected("a positive integer", &value)));
            }
            "authServerMetadataUrl" => {
                let Some(text) = value.as_str() else {
                    return Err(invalid(key, expected("a string", &value)));
                };
                if text.chars().count() > 4096 {
                    return Err(invalid(key, "longer than 4096 characters".into()));
                }
                if !text.starts_with("https://") || url::Url::parse(text).is_err() {
                    return Err(invalid(key, "must be an https:// URL".into()));
                }
            }
            "scopes" if value.as_str().is_none_or(str::is_empty) => {
                return Err(invalid(key, expected("a non-empty string", &value)));
            }
            "xaa" if !value.is_boolean() => {
                return Err(invalid(key, expected("true or false", &value)));
            }
            _ => {}
        }
        ordered.insert((*key).to_string(), value);
    }
    for key in members.keys() {
        notes.push(format!(
            "dropped `oauth.{key}`: Claude Code has no such OAuth setting (and drops it)"
        ));
    }
    Ok(Value::Object(ordered))
}

/// `tools` with each item checked, unknown members dropped.
fn tools(value: Value, notes: &mut Vec<String>) -> Result<Value, EntryError> {
    let Value::Array(items) = value else {
        return Err(EntryError::Invalid {
            field: "tools".into(),
            problem: expected("an array", &value),
        });
    };
    let mut out = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let field = |member: &str| format!("tools[{index}]{member}");
        let Value::Object(mut members) = item else {
            return Err(EntryError::Invalid {
                field: field(""),
                problem: expected("an object", &item),
            });
        };
        let mut ordered = Map::new();
        match members.shift_remove("name") {
            Some(name @ Value::String(_)) => {
                ordered.insert("name".into(), name);
            }
            Some(other) => {
                return Err(EntryError::Invalid {
                    field: field(".name"),
                    problem: expected("a string", &other),
                });
            }
            None => {
                return Err(EntryError::Invalid {
                    field: field(".name"),
                    problem: "missing".into(),
                });
            }
        }
        if let Some(policy) = members.shift_remove("permission_policy") {
            if !matches!(
                policy.as_str(),
                Some("always_allow" | "always_ask" | "always_deny")
            ) {
                return Err(EntryError::Invalid {
                    field: field(".permission_policy"),
                    problem: format!(
                        "expected \"always_allow\", \"always_ask\" or \"always_deny\", not {}",
                        shown_value(&policy)
                    ),
                });
            }
            ordered.insert("permission_policy".into(), policy);
        }
        for key in members.keys() {
            notes.push(format!(
                "dropped `tools[{index}].{key}`: Claude Code has no such tool setting (and drops it)"
            ));
        }
        out.push(Value::Object(ordered));
    }
    Ok(Value::Array(out))
}

/// A positive integer (`5000`; not `1.5`, `0` or `-5`).
fn positive_int(value: &Value) -> Option<u64> {
    value.as_u64().filter(|number| *number > 0)
}

fn expected(what: &str, value: &Value) -> String {
    format!("expected {what}, not {}", json_kind(value))
}

/// A short value for messages: strings quoted, others by kind.
fn shown_value(value: &Value) -> String {
    match value {
        Value::String(text) => format!("{text:?}"),
        other => json_kind(other).to_string(),
    }
}

/// Whether Claude Code reads `value` as a server entry (its schema union:
/// the stored transports, and the host-only `sdk`, `sse-ide`, `ws-ide` and
/// `claudeai-proxy` shapes).
pub fn accepted_by_claude(value: &Value) -> bool {
    let Some(fields) = value.as_object() else {
        return false;
    };
    let string = |key: &str| fields.get(key).is_some_and(Value::is_string);
    match fields.get("type").and_then(Value::as_str) {
        Some("sdk") => string("name"),
        Some("sse-ide" | "ws-ide") => string("url") && string("ideName"),
        Some("claudeai-proxy") => string("url") && string("id"),
        _ => normalize_entry(value.clone()).is_ok(),
    }
}

/// "an array", "a string", ... for messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The strings of a JSON array (`enabledMcpjsonServers`, a tool's list of
/// names), as written; anything else is an empty list.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expandable_fields_where_keeps_what_the_filter_keeps_in_order() {
        let entries = [
            json!({"command": "run $A", "args": ["x", "${B}", 3, "y$"], "env": {"K": "v", "L": "$L", "N": 1}, "url": "$U"}),
            json!({"type": "http", "url": "https://h/$P", "headers": {"A": "Bearer ${T}", "B": "plain", "C": null}, "env": {"E": "$E"}}),
            json!({"type": "sse", "headers": ["not", "an", "object"]}),
            json!("not an object"),
        ];
        for entry in entries {
            let entry = ServerEntry::from_value(entry);
            for keep in [
                |_: &str| true,
                |text: &str| text.contains('$'),
                |_: &str| false,
            ] {
                let expected: Vec<(Field, &str)> = entry
                    .expandable_fields()
                    .into_iter()
                    .filter(|(_, value)| keep(value))
                    .collect();
                assert_eq!(entry.expandable_fields_where(keep), expected, "{entry:?}");
            }
        }
    }

    #[test]
    fn names() {
        for good in ["a", "-lead", "_u", "123", "Workspace", "my-server_2"] {
            assert_eq!(validate_name(good), Ok(()), "{good}");
        }
        for bad in ["a b", "a.b", "café", "x/y"] {
            assert_eq!(validate_name(bad), Err(NameError::Invalid(bad.into())));
        }
        assert_eq!(validate_name(""), Err(NameError::Empty));
        assert_eq!(
            validate_name("workspace"),
            Err(NameError::Reserved("workspace".into()))
        );
    }

    #[test]
    fn the_pattern_says_what_validate_name_says() {
        let pattern = regex::Regex::new(NAME_PATTERN).unwrap();
        let long = "a".repeat(300);
        for name in [
            "a", "-x", "--trust", "_u", "a.b", "a b", "café", "", "x/y", "a\n", &long,
        ] {
            assert_eq!(
                pattern.is_match(name),
                validate_name(name).is_ok(),
                "{name:?}"
            );
        }
    }

    #[test]
    fn expandable_fields_follow_the_transport() {
        let stdio = ServerEntry::from_value(
            json!({"command": "npx", "args": ["-y", 1, "x"], "env": {"K": "v"}, "url": "ignored"}),
        );
        let shown: Vec<String> = stdio
            .expandable_fields()
            .iter()
            .map(|(field, value)| format!("{field}={value}"))
            .collect();
        assert_eq!(shown, ["command=npx", "args[0]=-y", "args[2]=x", "env.K=v"]);
        let remote = ServerEntry::from_value(
            json!({"type": "http", "url": "https://x", "headers": {"A": "b"}, "env": {"K": "v"}}),
        );
        let shown: Vec<String> = remote
            .expandable_fields()
            .iter()
            .map(|(field, value)| format!("{field}={value}"))
            .collect();
        assert_eq!(shown, ["url=https://x", "headers.A=b"]);
        assert_eq!(
            Field::UrlQuery("api_key".into()).to_string(),
            "url.query.api_key"
        );
    }

    #[test]
    fn add_shapes_match_claude() {
        let env = IndexMap::from([("K".to_string(), "v".to_string())]);
        assert_eq!(
            stdio_entry("npx", &["-y".into()], &env).to_string(),
            r#"{"type":"stdio","command":"npx","args":["-y"],"env":{"K":"v"}}"#
        );
        assert_eq!(
            stdio_entry("node", &[], &IndexMap::new()).to_string(),
            r#"{"type":"stdio","command":"node","args":[],"env":{}}"#
        );
        assert_eq!(
            remote_entry(&Transport::Http, "https://x", &IndexMap::new()).to_string(),
            r#"{"type":"http","url":"https://x"}"#
        );
    }

    #[test]
    fn add_json_normalises_like_claude() {
        let cases = [
            (
                r#"{"env":{"X":"1"},"args":["a.js"],"command":"node","type":"stdio","timeout":5000}"#,
                r#"{"type":"stdio","command":"node","args":["a.js"],"env":{"X":"1"},"timeout":5000}"#,
            ),
            (r#"{"command":"node"}"#, r#"{"command":"node","args":[]}"#),
            (
                r#"{"type":"streamable-http","url":"https://x.test/mcp"}"#,
                r#"{"type":"http","url":"https://x.test/mcp"}"#,
            ),
            (
                r#"{"url":"wss://x","type":"ws"}"#,
                r#"{"type":"ws","url":"wss://x"}"#,
            ),
            // What Claude Code 2.1.332 stored for these inputs (see
            // tests/cli/claude_add_json.rs, which compares with the binary).
            (
                r#"{"type":"stdio","command":"node","displayName":"D","discoveryCache":{"x":1},"request_timeout_ms":5000,"bareElicitationCapability":true,"alwaysLoad":true}"#,
                r#"{"type":"stdio","command":"node","args":[],"alwaysLoad":true,"bareElicitationCapability":true}"#,
            ),
            (
                r#"{"type":"http","url":"https://x.test/mcp","headers":{"A":"b"},"displayName":"D","bareElicitationCapability":true,"discoveryCache":true,"orgMaxPermission":"ask","request_timeout_ms":7000}"#,
                r#"{"type":"http","url":"https://x.test/mcp","headers":{"A":"b"},"displayName":"D","bareElicitationCapability":true,"discoveryCache":true,"orgMaxPermission":"ask","timeout":7000}"#,
            ),
            (
                r#"{"orgMaxPermission":"ask","toolPermissions":{"t":"allow"},"role":"comms","alwaysLoad":true,"tools":[{"name":"t","permission_policy":"always_ask"}],"timeout":3000,"oauth":{"clientId":"c"},"headersHelper":"h.sh","headers":{"A":"b"},"url":"https://x.test/mcp","type":"http","discoveryCache":false,"bareElicitationCapability":false,"displayName":"Disp","request_timeout_ms":9000}"#,
                r#"{"type":"http","url":"https://x.test/mcp","headers":{"A":"b"},"headersHelper":"h.sh","oauth":{"clientId":"c"},"timeout":3000,"tools":[{"name":"t","permission_policy":"always_ask"}],"alwaysLoad":true,"displayName":"Disp","bareElicitationCapability":false,"discoveryCache":false,"role":"comms","toolPermissions":{"t":"allow"},"orgMaxPermission":"ask"}"#,
            ),
            (
                r#"{"type":"http","url":"https://x.test/mcp","request_timeout_ms":999999}"#,
                r#"{"type":"http","url":"https://x.test/mcp","timeout":300000}"#,
            ),
            (
                r#"{"type":"http","url":"https://x.test/mcp","request_timeout_ms":-5,"displayName":5,"role":"other","orgMaxPermission":"allow"}"#,
                r#"{"type":"http","url":"https://x.test/mcp"}"#,
            ),
            (
                r#"{"type":"http","url":"https://x.test/mcp","orgMaxPermission":5}"#,
                r#"{"type":"http","url":"https://x.test/mcp","orgMaxPermission":"malformed"}"#,
            ),
            (
                r#"{"type":"ws","url":"wss://x.test","displayName":"W","bareElicitationCapability":true,"discoveryCache":true,"request_timeout_ms":4000,"orgMaxPermission":"ask","tools":[]}"#,
                r#"{"type":"ws","url":"wss://x.test","bareElicitationCapability":true}"#,
            ),
            (
                r#"{"type":"http","url":"https://x.test/mcp","oauth":{"scopes":"a b","extra":1,"xaa":true,"callbackPort":8080,"clientId":"c"},"tools":[{"extra":1,"name":"t"}]}"#,
                r#"{"type":"http","url":"https://x.test/mcp","oauth":{"clientId":"c","callbackPort":8080,"scopes":"a b","xaa":true},"tools":[{"name":"t"}]}"#,
            ),
            (
                r#"{"command":"node","url":"https://x.test/mcp"}"#,
                r#"{"command":"node","args":[]}"#,
            ),
        ];
        for (input, expected) in cases {
            let normalized = normalize_entry(serde_json::from_str(input).unwrap()).unwrap();
            assert_eq!(normalized.entry.to_string(), expected, "{input}");
            assert!(normalized.unknown.is_empty(), "{input}");
        }
        let normalized = normalize_entry(json!({"command": "x", "extra": 1})).unwrap();
        assert_eq!(
            normalized.entry.to_string(),
            r#"{"command":"x","args":[],"extra":1}"#
        );
        assert_eq!(normalized.unknown, ["extra"]);
        let normalized =
            normalize_entry(json!({"command": "x", "displayName": "D", "request_timeout_ms": 5}))
                .unwrap();
        assert_eq!(
            normalized.notes,
            [
                "dropped `displayName`: Claude Code does not use it for stdio servers (and drops it)",
                "dropped `request_timeout_ms`: Claude Code does not use it for stdio servers (and drops it)"
            ]
        );
    }

    #[test]
    fn add_json_rejects_what_claude_rejects() {
        for (input, message) in [
            (
                json!([]),
                "a server entry must be a JSON object, not an array",
            ),
            (json!({"type": "stdio"}), "`command`: missing"),
            (
                json!({"url": "https://x.test/mcp"}),
                r#"it has a "url" but no "type": add "type": "http" (or "sse" / "ws")"#,
            ),
            (
                json!({"mcpServers": {"a": {"command": "x"}}}),
                r#"leave out the "mcpServers" wrapper and the server name: pass only the settings inside them"#,
            ),
            (
                json!({"args": ["x"]}),
                r#"it needs a "command" for a local server, or a "type" and a "url" for a remote one"#,
            ),
            (json!({"type": "http"}), "`url`: missing"),
            (
                json!({"type": "carrier-pigeon", "url": "x"}),
                r#"unknown "type" `carrier-pigeon`: use "stdio", "sse", "http" (or "streamable-http") or "ws""#,
            ),
            (
                json!({"type": "sdk", "name": "foo"}),
                "type `sdk` servers are registered by the host application at runtime, not stored in configuration",
            ),
            (
                json!({"command": "x", "args": [1]}),
                "`args[0]`: expected a string, not a number",
            ),
            (
                json!({"command": "x", "timeout": -5}),
                "`timeout`: expected a positive integer, not a number",
            ),
            (
                json!({"type": "http", "url": "https://x", "discoveryCache": {"x": 1}}),
                "`discoveryCache`: expected true or false, not an object",
            ),
            (
                json!({"command": "x", "bareElicitationCapability": "yes"}),
                "`bareElicitationCapability`: expected true or false, not a string",
            ),
            (
                json!({"type": "http", "url": "https://x", "oauth": {"authServerMetadataUrl": "http://a.test/x"}}),
                "`oauth.authServerMetadataUrl`: must be an https:// URL",
            ),
            (
                json!({"type": "http", "url": "https://x", "tools": [{"name": "t", "permission_policy": "never"}]}),
                r#"`tools[0].permission_policy`: expected "always_allow", "always_ask" or "always_deny", not "never""#,
            ),
        ] {
            assert_eq!(
                normalize_entry(input.clone()).unwrap_err().to_string(),
                message,
                "{input}"
            );
        }
    }

    #[test]
    fn claude_code_reads_these_as_servers() {
        for server in [
            json!({"command": "npx"}),
            json!({"type": "http", "url": "https://x"}),
            json!({"type": "sdk", "name": "x"}),
        ] {
            assert!(accepted_by_claude(&server), "{server}");
        }
        for other in [
            json!({"x": {"command": "npx"}}),
            json!("text"),
            json!({"type": "http"}),
        ] {
            assert!(!accepted_by_claude(&other), "{other}");
        }
    }
}
