//! Claude Code's loader, entry by entry: which definitions it loads, which it
//! skips (and the reason it gives), and which names it reserves.
//!
//! Mirrors Claude Code 2.1.332: a reserved name is never loaded; the `type`
//! (a string, else `stdio`) picks a schema; `sdk` and `claudeai-proxy`
//! entries are skipped; an entry that fails its schema is skipped, with the
//! schema's complaints joined by `; ` (or, for an entry with a `url` and
//! neither `type` nor `command`, a pointer to the missing `type`). Unknown
//! keys are ignored, as the schemas strip them. Reasons are Claude Code's
//! own words (without its `Skipped — ` prefix), so they can be compared
//! with what `claude mcp list` prints.

use serde_json::{Map, Value};

/// How Claude Code's loader treats one definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loading {
    /// Loaded: listed, and started once approved and enabled.
    Loaded,
    /// Skipped with Claude Code's reason: never listed, never started.
    Skipped(String),
    /// A name Claude Code reserves for its own servers: never loaded.
    Reserved,
}

impl Loading {
    /// Whether Claude Code loads the definition.
    pub fn is_loaded(&self) -> bool {
        matches!(self, Self::Loaded)
    }

    /// Claude Code's words for a definition it does not load.
    pub fn reason(&self, name: &str) -> Option<String> {
        match self {
            Self::Loaded => None,
            Self::Skipped(reason) => Some(reason.clone()),
            Self::Reserved => Some(reserved_message(name)),
        }
    }
}

/// Claude Code's message for a reserved name.
pub fn reserved_message(name: &str) -> String {
    format!("\"{name}\" is a reserved MCP server name and was not loaded")
}

/// Names Claude Code reserves, compared after the normalisation of
/// [`normalized_server`]: its built-in servers (browser, computer use,
/// workspace, claude.ai, devices, remote sessions).
const RESERVED: &[&str] = &[
    "hearthbot",
    "remote-devices",
    "claude_ai",
    "ccr-email",
    "Claude_Preview",
    "Claude_Browser",
    "claude-in-chrome",
    "Claude_in_Chrome",
    "computer-use",
    "workspace",
    "claude-device",
    "webagent",
    "claude-code-remote",
];

/// Reserved as written, without normalisation.
const RESERVED_EXACT: &[&str] = &["Slack sign-in (Claude Code tag)"];

/// Members of JavaScript's `Object.prototype` that Claude Code refuses as
/// names (`constructor` and `toString` it loads).
const PROTOTYPE_NAMES: &[&str] = &[
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// The server part of the tool names Claude Code makes from `name`
/// (`mcp__<name>__<tool>`, every character outside `[A-Za-z0-9_-]` mapped to
/// `_`): what it compares with its reserved names. So `claude.ai`,
/// `workspace.` and `workspace__x` are reserved too.
fn normalized_server(name: &str) -> String {
    let normalized: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let tool = format!("mcp__{normalized}__tool");
    tool.split("__").nth(1).unwrap_or_default().to_string()
}

/// Whether Claude Code refuses to load a server named `name`.
pub fn is_reserved(name: &str) -> bool {
    if PROTOTYPE_NAMES.contains(&name) || RESERVED_EXACT.contains(&name) {
        return true;
    }
    let server = normalized_server(name);
    !server.is_empty() && RESERVED.contains(&server.as_str())
}

/// What Claude Code's loader does with the entry `value` named `name`.
pub fn classify(name: &str, value: &Value) -> Loading {
    if is_reserved(name) {
        return Loading::Reserved;
    }
    let kind = match value.get("type") {
        Some(Value::String(kind)) if value.is_object() => kind.as_str(),
        _ => "stdio",
    };
    let schema = match kind {
        "stdio" => Schema::Stdio,
        "http" | "streamable-http" => Schema::Http,
        "sse" => Schema::Sse,
        "ws" => Schema::Ws,
        "sdk" => {
            return Loading::Skipped(format!(
                "MCP server \"{name}\" declares type \"sdk\", which only an SDK host application can register"
            ));
        }
        "claudeai-proxy" => {
            return Loading::Skipped(format!(
                "MCP server \"{name}\" declares type \"claudeai-proxy\", which only claude.ai connectors use"
            ));
        }
        other => {
            return Loading::Skipped(format!(
                "unknown MCP server type \"{other}\" for server \"{name}\""
            ));
        }
    };
    let issues = schema.issues(value);
    if issues.is_empty() {
        return Loading::Loaded;
    }
    if let Value::Object(fields) = value
        && !fields.contains_key("type")
        && fields.contains_key("url")
        && !fields.contains_key("command")
    {
        return Loading::Skipped(format!(
            "MCP server \"{name}\" has a \"url\" but no \"type\"; add \"type\": \"http\" (or \"sse\" / \"ws\") to this entry"
        ));
    }
    let issues: Vec<String> = issues
        .into_iter()
        .map(|issue| {
            let path = if issue.path.is_empty() {
                "(root)".to_string()
            } else {
                issue.path
            };
            format!("{path}: {}", issue.message)
        })
        .collect();
    Loading::Skipped(format!(
        "invalid MCP server config for \"{name}\": {}",
        issues.join("; ")
    ))
}

/// One complaint of a schema, as zod words it (without `Invalid input: `).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Issue {
    path: String,
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Schema {
    Stdio,
    Http,
    Sse,
    Ws,
}

/// JavaScript's `Number.MAX_SAFE_INTEGER`: zod's bound for an `int`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// Claude Code's limit on a `url`.
const MAX_URL: usize = 65_536;
/// Claude Code's limit on `oauth.authServerMetadataUrl`.
const MAX_METADATA_URL: usize = 4_096;

/// What the checks below need to say.
struct Checker {
    issues: Vec<Issue>,
}

impl Checker {
    fn push(&mut self, path: &str, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.to_string(),
            message: message.into(),
        });
    }

    fn expected(&mut self, path: &str, expected: &str, found: Option<&Value>) {
        self.push(
            path,
            format!("expected {expected}, received {}", received(found)),
        );
    }

    /// A required or optional string; `Some(text)` when it is one.
    fn string<'a>(
        &mut self,
        path: &str,
        value: Option<&'a Value>,
        required: bool,
    ) -> Option<&'a str> {
        match value {
            Some(Value::String(text)) => Some(text),
            None if !required => None,
            other => {
                self.expected(path, "string", other);
                None
            }
        }
    }

    fn boolean(&mut self, path: &str, value: Option<&Value>) {
        match value {
            None | Some(Value::Bool(_)) => {}
            other => self.expected(path, "boolean", other),
        }
    }

    /// zod's `number().int().positive()`.
    fn positive_int(&mut self, path: &str, value: Option<&Value>) {
        let Some(value) = value else {
            return;
        };
        if !value.is_number() {
            self.expected(path, "number", Some(value));
            return;
        }
        // A number too large for an f64 is JavaScript's `Infinity`.
        let number = value.as_f64().unwrap_or(f64::INFINITY);
        if !number.is_finite() || number.fract() != 0.0 {
            self.push(path, "expected int, received number");
        } else if number > MAX_SAFE_INTEGER {
            self.push(path, "Too big: expected int to be <=9007199254740991");
        } else if number < -MAX_SAFE_INTEGER {
            self.push(path, "Too small: expected int to be >=-9007199254740991");
        } else if number <= 0.0 {
            self.push(path, "Too small: expected number to be >0");
        }
    }

    /// zod's `record(string(), string())`.
    fn string_record(&mut self, path: &str, value: Option<&Value>) {
        match value {
            None => {}
            Some(Value::Object(members)) => {
                for (key, member) in members {
                    if !member.is_string() {
                        self.expected(&format!("{path}.{key}"), "string", Some(member));
                    }
                }
            }
            other => self.expected(path, "record", other),
        }
    }

    fn one_of(&mut self, path: &str, value: &Value, options: &[&str]) {
        if !value.as_str().is_some_and(|text| options.contains(&text)) {
            let listed: Vec<String> = options
                .iter()
                .map(|option| format!("\"{option}\""))
                .collect();
            self.push(
                path,
                format!("Invalid option: expected one of {}", listed.join("|")),
            );
        }
    }

    fn url(&mut self, value: Option<&Value>) {
        if let Some(url) = self.string("url", value, true)
            && url.encode_utf16().count() > MAX_URL
        {
            self.push("url", "url is too long");
        }
    }

    fn oauth(&mut self, value: Option<&Value>) {
        let fields = match value {
            None => return,
            Some(Value::Object(fields)) => fields,
            other => return self.expected("oauth", "object", other),
        };
        self.string("oauth.clientId", fields.get("clientId"), false);
        self.positive_int("oauth.callbackPort", fields.get("callbackPort"));
        let path = "oauth.authServerMetadataUrl";
        if let Some(url) = self.string(path, fields.get("authServerMetadataUrl"), false) {
            if url.encode_utf16().count() > MAX_METADATA_URL {
                self.push(path, "authServerMetadataUrl is too long");
            } else {
                if url::Url::parse(url.trim()).is_err() {
                    self.push(path, "Invalid URL");
                }
                if !url.starts_with("https://") {
                    self.push(path, "authServerMetadataUrl must use https://");
                }
            }
        }
        if self
            .string("oauth.scopes", fields.get("scopes"), false)
            .is_some_and(str::is_empty)
        {
            self.push(
                "oauth.scopes",
                "Too small: expected string to have >=1 characters",
            );
        }
        self.boolean("oauth.xaa", fields.get("xaa"));
    }

    fn tools(&mut self, value: Option<&Value>) {
        let tools = match value {
            None => return,
            Some(Value::Array(tools)) => tools,
            other => return self.expected("tools", "array", other),
        };
        for (index, tool) in tools.iter().enumerate() {
            let path = format!("tools.{index}");
            let Value::Object(fields) = tool else {
                self.expected(&path, "object", Some(tool));
                continue;
            };
            self.string(&format!("{path}.name"), fields.get("name"), true);
            if let Some(policy) = fields.get("permission_policy") {
                self.one_of(
                    &format!("{path}.permission_policy"),
                    policy,
                    &["always_allow", "always_ask", "always_deny"],
                );
            }
        }
    }

    fn tool_permissions(&mut self, value: Option<&Value>) {
        match value {
            None => {}
            Some(Value::Object(members)) => {
                for (name, permission) in members {
                    self.one_of(
                        &format!("toolPermissions.{name}"),
                        permission,
                        &["allow", "ask", "blocked"],
                    );
                }
            }
            other => self.expected("toolPermissions", "record", other),
        }
    }
}

impl Schema {
    /// Every complaint of the schema about `value`, in the schema's order.
    fn issues(self, value: &Value) -> Vec<Issue> {
        let mut checker = Checker { issues: Vec::new() };
        let Value::Object(fields) = value else {
            checker.expected("", "object", Some(value));
            return checker.issues;
        };
        match self {
            Self::Stdio => stdio(&mut checker, fields),
            Self::Http | Self::Sse => remote(&mut checker, fields),
            Self::Ws => ws(&mut checker, fields),
        }
        checker.issues
    }
}

fn stdio(checker: &mut Checker, fields: &Map<String, Value>) {
    if let Some(kind) = fields.get("type")
        && kind.as_str() != Some("stdio")
    {
        checker.push("type", "expected \"stdio\"");
    }
    if checker
        .string("command", fields.get("command"), true)
        .is_some_and(str::is_empty)
    {
        checker.push("command", "Command cannot be empty");
    }
    match fields.get("args") {
        None => {}
        Some(Value::Array(args)) => {
            for (index, arg) in args.iter().enumerate() {
                if !arg.is_string() {
                    checker.expected(&format!("args.{index}"), "string", Some(arg));
                }
            }
        }
        other => checker.expected("args", "array", other),
    }
    checker.string_record("env", fields.get("env"));
    checker.positive_int("timeout", fields.get("timeout"));
    checker.boolean("alwaysLoad", fields.get("alwaysLoad"));
    checker.boolean(
        "bareElicitationCapability",
        fields.get("bareElicitationCapability"),
    );
}

/// http and sse (their `type` was checked when the schema was chosen).
fn remote(checker: &mut Checker, fields: &Map<String, Value>) {
    checker.url(fields.get("url"));
    checker.string_record("headers", fields.get("headers"));
    checker.string("headersHelper", fields.get("headersHelper"), false);
    checker.oauth(fields.get("oauth"));
    checker.positive_int("timeout", fields.get("timeout"));
    checker.tools(fields.get("tools"));
    checker.boolean("alwaysLoad", fields.get("alwaysLoad"));
    checker.boolean(
        "bareElicitationCapability",
        fields.get("bareElicitationCapability"),
    );
    checker.boolean("discoveryCache", fields.get("discoveryCache"));
    checker.tool_permissions(fields.get("toolPermissions"));
}

fn ws(checker: &mut Checker, fields: &Map<String, Value>) {
    checker.url(fields.get("url"));
    checker.string_record("headers", fields.get("headers"));
    checker.string("headersHelper", fields.get("headersHelper"), false);
    checker.positive_int("timeout", fields.get("timeout"));
    checker.boolean("alwaysLoad", fields.get("alwaysLoad"));
    checker.boolean(
        "bareElicitationCapability",
        fields.get("bareElicitationCapability"),
    );
}

/// zod's name for what it found.
fn received(value: Option<&Value>) -> &'static str {
    match value {
        None => "undefined",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skipped(name: &str, value: Value) -> String {
        match classify(name, &value) {
            Loading::Skipped(reason) => reason,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn loads_what_claude_code_loads() {
        for value in [
            json!({"command": "npx"}),
            json!({"type": "stdio", "command": "x", "args": [], "env": {}, "timeout": 5000}),
            json!({"command": "x", "url": "http://a"}),
            json!({"command": "x", "unknown": [1], "discoveryCache": 1}),
            json!({"type": "http", "url": ""}),
            json!({"type": "http", "url": "not a url"}),
            json!({"type": "streamable-http", "url": "https://a/mcp"}),
            json!({"type": "sse", "url": "https://a/sse", "headers": {"A": "b"}, "role": 5, "displayName": 1}),
            json!({"type": "ws", "url": "ws://a", "oauth": 5, "tools": 5}),
            json!({"type": "http", "url": "https://a", "oauth": {"clientId": "c", "callbackPort": 8080, "authServerMetadataUrl": "https://a/x"}}),
            json!({"command": "x", "timeout": 5000.0}),
        ] {
            assert_eq!(classify("s", &value), Loading::Loaded, "{value}");
        }
    }

    /// Every reason below is the text Claude Code 2.1.332 prints for the
    /// same entry (after `Skipped — `).
    #[test]
    fn skips_with_claude_codes_words() {
        let rows = [
            (
                json!({"url": "http://x"}),
                r#"MCP server "s" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry"#,
            ),
            (
                json!({"url": null}),
                r#"MCP server "s" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry"#,
            ),
            (
                json!({"args": []}),
                r#"invalid MCP server config for "s": command: expected string, received undefined"#,
            ),
            (
                json!({"type": "bogus", "url": "x"}),
                r#"unknown MCP server type "bogus" for server "s""#,
            ),
            (
                json!({"type": "HTTP", "url": "x"}),
                r#"unknown MCP server type "HTTP" for server "s""#,
            ),
            (
                json!({"type": "sdk", "name": "x"}),
                r#"MCP server "s" declares type "sdk", which only an SDK host application can register"#,
            ),
            (
                json!({"command": ""}),
                r#"invalid MCP server config for "s": command: Command cannot be empty"#,
            ),
            (
                json!(5),
                r#"invalid MCP server config for "s": (root): expected object, received number"#,
            ),
            (
                json!(null),
                r#"invalid MCP server config for "s": (root): expected object, received null"#,
            ),
            (
                json!({"type": 5, "command": "x"}),
                r#"invalid MCP server config for "s": type: expected "stdio""#,
            ),
            (
                json!({"type": "stdio", "url": "http://x"}),
                r#"invalid MCP server config for "s": command: expected string, received undefined"#,
            ),
            (
                json!({"type": "http"}),
                r#"invalid MCP server config for "s": url: expected string, received undefined"#,
            ),
            (
                json!({"command": "x", "args": [1, 2]}),
                r#"invalid MCP server config for "s": args.0: expected string, received number; args.1: expected string, received number"#,
            ),
            (
                json!({"command": "x", "env": null}),
                r#"invalid MCP server config for "s": env: expected record, received null"#,
            ),
            (
                json!({"args": [1], "env": {"A": 2}, "timeout": 0}),
                r#"invalid MCP server config for "s": command: expected string, received undefined; args.0: expected string, received number; env.A: expected string, received number; timeout: Too small: expected number to be >0"#,
            ),
            (
                json!({"command": "x", "timeout": 1.5}),
                r#"invalid MCP server config for "s": timeout: expected int, received number"#,
            ),
            (
                json!({"command": "x", "timeout": 9_007_199_254_740_993_u64}),
                r#"invalid MCP server config for "s": timeout: Too big: expected int to be <=9007199254740991"#,
            ),
            (
                json!({"command": "x", "timeout": "5000"}),
                r#"invalid MCP server config for "s": timeout: expected number, received string"#,
            ),
            (
                json!({"type": "http", "url": "https://a", "oauth": {"authServerMetadataUrl": "not a url"}}),
                r#"invalid MCP server config for "s": oauth.authServerMetadataUrl: Invalid URL; oauth.authServerMetadataUrl: authServerMetadataUrl must use https://"#,
            ),
            (
                json!({"type": "http", "url": "https://a", "oauth": {"clientId": 5, "xaa": "y"}}),
                r#"invalid MCP server config for "s": oauth.clientId: expected string, received number; oauth.xaa: expected boolean, received string"#,
            ),
            (
                json!({"type": "http", "url": "https://a", "oauth": {"scopes": ""}}),
                r#"invalid MCP server config for "s": oauth.scopes: Too small: expected string to have >=1 characters"#,
            ),
            (
                json!({"type": "http", "url": "https://a", "tools": [{"name": "a", "permission_policy": "x"}]}),
                r#"invalid MCP server config for "s": tools.0.permission_policy: Invalid option: expected one of "always_allow"|"always_ask"|"always_deny""#,
            ),
            (
                json!({"type": "http", "url": "https://a", "toolPermissions": {"a": "x"}}),
                r#"invalid MCP server config for "s": toolPermissions.a: Invalid option: expected one of "allow"|"ask"|"blocked""#,
            ),
            (
                json!({"type": "http", "url": "https://a", "headers": []}),
                r#"invalid MCP server config for "s": headers: expected record, received array"#,
            ),
            (
                json!({"type": "http", "url": format!("http://x/{}", "a".repeat(70_000))}),
                r#"invalid MCP server config for "s": url: url is too long"#,
            ),
        ];
        for (value, reason) in rows {
            assert_eq!(skipped("s", value.clone()), reason, "{value}");
        }
    }

    /// The names Claude Code 2.1.332 refused and loaded when tried.
    #[test]
    fn reserved_names_match_claude_code() {
        for name in [
            "workspace",
            "claude-in-chrome",
            "computer-use",
            "Claude_Preview",
            "Claude Preview",
            "Claude Browser",
            "Claude in Chrome",
            "claude_ai",
            "claude.ai",
            "claude-device",
            "ccr-email",
            "hearthbot",
            "remote-devices",
            "webagent",
            "claude-code-remote",
            "workspace.",
            "workspace__x",
            "claude-in-chrome__a",
            "Slack sign-in (Claude Code tag)",
            "__proto__",
            "__defineGetter__",
            "__lookupSetter__",
        ] {
            assert!(is_reserved(name), "{name}");
            assert_eq!(classify(name, &json!({"command": "x"})), Loading::Reserved);
        }
        for name in [
            "Workspace",
            "computer_use",
            "computer.use",
            "claude_preview",
            "claude_ai_Gmail",
            "constructor",
            "toString",
            "hasOwnProperty",
            "__proto",
            "__x__",
            "x__workspace",
            "widgets",
            "remote-browser",
            "Claude_Pages",
            "ide",
            "a b",
        ] {
            assert!(!is_reserved(name), "{name}");
        }
    }
}
