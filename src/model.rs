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

/// Checks a name for `add`: `^[A-Za-z0-9_-]+$` and not reserved.
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
        let mut fields = Vec::new();
        if self.transport().is_remote() {
            if let Some(url) = self.url() {
                fields.push((Field::Url, url));
            }
            for (name, value) in self.headers() {
                fields.push((Field::Header(name.to_string()), value));
            }
        } else {
            if let Some(command) = self.command() {
                fields.push((Field::Command, command));
            }
            if let Some(Value::Array(args)) = self.fields.get("args") {
                for (index, arg) in args.iter().enumerate() {
                    if let Some(arg) = arg.as_str() {
                        fields.push((Field::Arg(index), arg));
                    }
                }
            }
            for (key, value) in self.env() {
                fields.push((Field::Env(key.to_string()), value));
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
    value
        .and_then(Value::as_object)
        .map(|members| {
            members
                .iter()
                .filter_map(|(key, value)| value.as_str().map(|value| (key.as_str(), value)))
                .collect()
        })
        .unwrap_or_default()
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

/// Why a JSON entry given to `add-json` is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Not an object.
    #[error("a server entry must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// Invalid for Claude Code's schema.
    #[error("invalid server entry: {0}")]
    Invalid(String),
}

/// Claude Code's stored key order, per transport.
const STDIO_ORDER: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "timeout",
    "alwaysLoad",
    "role",
];
const REMOTE_ORDER: &[&str] = &[
    "type",
    "url",
    "headers",
    "headersHelper",
    "oauth",
    "timeout",
    "tools",
    "alwaysLoad",
    "role",
    "toolPermissions",
];
const SDK_ORDER: &[&str] = &["type", "name"];

/// An entry normalised as `claude mcp add-json` stores it: validated, known
/// keys in Claude Code's order, `streamable-http` stored as `http`, `args`
/// defaulted to `[]` for stdio. Unknown keys are kept after the known ones
/// (Claude Code reads entries with extra keys without complaint) and
/// returned so the caller can say so.
pub fn normalize_entry(value: Value) -> Result<(Value, Vec<String>), EntryError> {
    let Value::Object(mut fields) = value else {
        return Err(EntryError::NotAnObject(json_kind(&value)));
    };
    let transport = match fields.get("type") {
        None => Transport::Stdio,
        Some(Value::String(kind)) => Transport::parse(kind),
        Some(other) => {
            return Err(EntryError::Invalid(format!(
                "`type` must be a string, not {}",
                json_kind(other)
            )));
        }
    };
    if let Transport::Unknown(kind) = &transport {
        return Err(EntryError::Invalid(format!(
            "unknown transport type `{kind}` (expected stdio, http, sse, ws or sdk)"
        )));
    }
    if fields.contains_key("type") {
        fields.insert("type".into(), Value::from(transport.as_str()));
    }
    let order = match transport {
        Transport::Stdio => {
            fields.entry("args").or_insert_with(|| json!([]));
            STDIO_ORDER
        }
        Transport::Sdk => SDK_ORDER,
        _ => REMOTE_ORDER,
    };
    check_types(&fields, &transport)?;
    let problems = ServerEntry {
        fields: fields.clone(),
    }
    .problems();
    if let Some(problem) = problems.into_iter().next() {
        return Err(EntryError::Invalid(problem));
    }
    let mut ordered = Map::new();
    for key in order {
        if let Some(value) = fields.shift_remove(*key) {
            ordered.insert((*key).to_string(), value);
        }
    }
    let unknown: Vec<String> = fields.keys().cloned().collect();
    ordered.extend(fields);
    Ok((Value::Object(ordered), unknown))
}

fn check_types(fields: &Map<String, Value>, transport: &Transport) -> Result<(), EntryError> {
    let invalid = |message: String| Err(EntryError::Invalid(message));
    if fields
        .get("timeout")
        .is_some_and(|timeout| timeout.as_u64().is_none_or(|ms| ms == 0))
    {
        return invalid("`timeout` must be a positive integer (milliseconds)".into());
    }
    if fields
        .get("alwaysLoad")
        .is_some_and(|always_load| !always_load.is_boolean())
    {
        return invalid("`alwaysLoad` must be true or false".into());
    }
    if *transport == Transport::Sdk && !fields.get("name").is_some_and(Value::is_string) {
        return invalid("sdk entry has no `name`".into());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

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
        ];
        for (input, expected) in cases {
            let (value, unknown) = normalize_entry(serde_json::from_str(input).unwrap()).unwrap();
            assert_eq!(value.to_string(), expected);
            assert!(unknown.is_empty());
        }
        let (value, unknown) = normalize_entry(json!({"command": "x", "extra": 1})).unwrap();
        assert_eq!(value.to_string(), r#"{"command":"x","args":[],"extra":1}"#);
        assert_eq!(unknown, ["extra"]);
    }

    #[test]
    fn add_json_rejects_what_claude_rejects() {
        for (input, message) in [
            (
                json!([]),
                "a server entry must be a JSON object, not an array",
            ),
            (
                json!({"type": "stdio"}),
                "invalid server entry: stdio entry has no `command`",
            ),
            (
                json!({"type": "http"}),
                "invalid server entry: http entry has no `url`",
            ),
            (
                json!({"type": "carrier-pigeon", "url": "x"}),
                "invalid server entry: unknown transport type `carrier-pigeon` (expected stdio, http, sse, ws or sdk)",
            ),
            (
                json!({"command": "x", "args": [1]}),
                "invalid server entry: `args` is not an array of strings",
            ),
            (
                json!({"command": "x", "timeout": -5}),
                "invalid server entry: `timeout` must be a positive integer (milliseconds)",
            ),
        ] {
            assert_eq!(normalize_entry(input).unwrap_err().to_string(), message);
        }
    }
}
