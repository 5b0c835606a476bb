//! The tools `mcpenv serve` lists: names, descriptions, schemas, argument
//! validation, and the short texts of their results.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::ops::Read;
use crate::ops::check_environment::{CheckError, EnvironmentCheck};
use crate::ops::list_servers::{ServerList, file_errors};

/// The `list_servers` tool.
pub const LIST_SERVERS: &str = "list_servers";
/// The `check_environment` tool.
pub const CHECK_ENVIRONMENT: &str = "check_environment";

/// What the server tells the client about itself.
pub const INSTRUCTIONS: &str = "mcpenv manages the MCP server configuration of Claude Code (user, project and local scopes) for the project this server was started in. Its tools only read: they never change a file and never return a secret value, only names, files and states.";

/// Every tool, in the order listed.
pub fn all() -> Vec<Tool> {
    vec![
        tool(
            LIST_SERVERS,
            "List every MCP server Claude Code is configured with for this project, in all three scopes (user, project, local): for each its scope, transport, command or URL, the file defining it, its status (active, shadowed, pending approval, rejected, disabled, skipped, reserved), its approval in Claude Code and the names (never values) of its environment variables and headers. Files that do not load are listed under `errors`. Read-only.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            list_output(),
        ),
        tool(
            CHECK_ENVIRONMENT,
            "Check whether every MCP server in effect for this project has what it needs before Claude Code starts it: each variable it references is set, empty, defaulted or missing (and in which file or the environment it is set), whether its command is found, and the problems Claude Code would hit, each with a hint. `ok` is false when something would fail. Never returns a value. Read-only; pass `server` to check one server only.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Check only the server of this name (as `list_servers` shows it)."}
                },
                "additionalProperties": false
            }),
            check_output(),
        ),
    ]
}

fn tool(name: &'static str, description: &'static str, input: Value, output: Value) -> Tool {
    Tool::new(name, description, object(input))
        .with_raw_output_schema(Arc::new(object(output)))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        // Every schema here is written as an object literal.
        _ => unreachable!("schemas are objects"),
    }
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn nullable(kind: &str) -> Value {
    json!({"type": [kind, "null"]})
}

fn list_output() -> Value {
    json!({
        "type": "object",
        "required": ["servers", "warnings", "errors"],
        "properties": {
            "servers": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "scope", "transport", "file", "shadowed", "status", "env_names", "header_names"],
                "properties": {
                    "name": {"type": "string"},
                    "scope": {"enum": ["user", "project", "local"]},
                    "transport": {"type": "string"},
                    "command": nullable("string"),
                    "args": {"type": ["array", "null"], "items": {"type": "string"}},
                    "url": nullable("string"),
                    "file": {"type": "string"},
                    "shadowed": {"type": "boolean"},
                    "shadowed_by": {"enum": ["user", "project", "local", null]},
                    "approval": {"enum": ["approved", "pending", "rejected", null]},
                    "status": {"enum": ["active", "shadowed", "pending", "rejected", "disabled", "skipped", "reserved"]},
                    "reason": nullable("string"),
                    "env_names": strings(),
                    "header_names": strings(),
                    "approve_command": nullable("string")
                }
            }},
            "warnings": {"type": "array", "items": {
                "type": "object",
                "required": ["file", "message"],
                "properties": {"file": {"type": "string"}, "message": {"type": "string"}}
            }},
            "errors": {"type": "array", "items": {
                "type": "object",
                "required": ["file", "scopes", "message", "hints"],
                "properties": {
                    "file": {"type": "string"},
                    "scopes": strings(),
                    "message": {"type": "string"},
                    "line": nullable("integer"),
                    "column": nullable("integer"),
                    "claude_says": nullable("string"),
                    "hints": strings()
                }
            }}
        }
    })
}

fn check_output() -> Value {
    json!({
        "type": "object",
        "required": ["ok", "servers", "variables", "warnings"],
        "properties": {
            "ok": {"type": "boolean"},
            "servers": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "scope", "file", "status", "variables", "ok"],
                "properties": {
                    "name": {"type": "string"},
                    "scope": {"enum": ["user", "project", "local"]},
                    "file": {"type": "string"},
                    "status": {"type": "string"},
                    "reason": nullable("string"),
                    "variables": strings(),
                    "command": {"type": ["object", "null"]},
                    "blanked": {"type": "array"},
                    "ok": {"type": "boolean"}
                }
            }},
            "variables": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "state", "servers"],
                "properties": {
                    "name": {"type": "string"},
                    "state": {"enum": ["set", "empty", "defaulted", "missing"]},
                    "source": nullable("string"),
                    "seen_by_claude": {"type": "boolean"},
                    "interactive_only": {"type": "boolean"},
                    "servers": strings(),
                    "description": nullable("string"),
                    "secret": {"type": "boolean"},
                    "required": {"type": "boolean"}
                }
            }},
            "warnings": {"type": "array", "items": {
                "type": "object",
                "required": ["code", "severity", "message"],
                "properties": {
                    "code": {"type": "string"},
                    "severity": {"enum": ["error", "warning"]},
                    "server": nullable("string"),
                    "file": nullable("string"),
                    "message": {"type": "string"},
                    "hint": nullable("string")
                }
            }},
            "approve_command": nullable("string")
        }
    })
}

/// Checks `arguments` against the tool's input schema: only listed
/// properties, each of its `type`. Written here rather than with a JSON
/// Schema crate because the schemas are mcpenv's own and this small (one
/// optional string); a crate would be worth it once tools take more.
pub fn validate(tool: &Tool, arguments: &JsonObject) -> Result<(), String> {
    let empty = JsonObject::new();
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, value) in arguments {
        let Some(property) = properties.get(name) else {
            let known: Vec<String> = properties.keys().map(|key| format!("`{key}`")).collect();
            return Err(if known.is_empty() {
                format!("unexpected argument `{name}`: this tool takes no arguments")
            } else {
                format!(
                    "unexpected argument `{name}`: it takes only {}",
                    known.join(", ")
                )
            });
        };
        if property.get("type").and_then(Value::as_str) == Some("string") && !value.is_string() {
            // The kind, never the value: it may be anything the caller sent.
            return Err(format!(
                "`{name}` must be a string, got {}",
                crate::model::json_kind(value)
            ));
        }
    }
    Ok(())
}

/// The text for files that do not load, when there are any: the listing
/// or check is not whole.
pub fn unloaded(read: &Read) -> Option<String> {
    let errors = file_errors(&read.inventory);
    if errors.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Some configuration files do not load, so their servers are left out (the rest is in the structured content):",
    );
    for error in errors {
        text.push_str(&format!(
            "\n- `{}`: {}",
            error.file.display(),
            error.message
        ));
        for hint in error.hints {
            text.push_str(&format!("\n  hint: {hint}"));
        }
    }
    Some(text)
}

/// The short text of a `list_servers` result.
pub fn list_summary(list: &ServerList) -> String {
    let pending = list
        .servers
        .iter()
        .filter(|server| server.approve_command.is_some())
        .count();
    let mut text = format!(
        "{} server definition{} in {} scope{}",
        list.servers.len(),
        if list.servers.len() == 1 { "" } else { "s" },
        distinct_scopes(list),
        if distinct_scopes(list) == 1 { "" } else { "s" },
    );
    if pending > 0 {
        text.push_str(&format!("; {pending} pending approval"));
    }
    text.push_str("; details in the structured content");
    text
}

fn distinct_scopes(list: &ServerList) -> usize {
    let mut scopes: Vec<_> = list.servers.iter().map(|server| server.scope).collect();
    scopes.sort();
    scopes.dedup();
    scopes.len()
}

/// The short text of a `check_environment` result.
pub fn check_summary(check: &EnvironmentCheck) -> String {
    let missing: Vec<&str> = check
        .report
        .missing()
        .into_iter()
        .map(|variable| variable.name.as_str())
        .collect();
    let mut text = if check.ok {
        "Every server in effect has what it needs".to_string()
    } else {
        "Something would fail".to_string()
    };
    if !missing.is_empty() {
        text.push_str(&format!("; needing a value: {}", missing.join(", ")));
    }
    text.push_str("; details and hints in the structured content");
    text
}

/// The text of a check that could not be made.
pub fn check_error(error: &CheckError) -> String {
    match error {
        CheckError::EnvFiles(source) => format!(
            "{error}: {source}\nhint: {}",
            crate::ops::hints::dotenv_hint(source)
        ),
        CheckError::NoSuchServer { known, .. } if known.is_empty() => {
            format!("{error}: no server is in effect here")
        }
        CheckError::NoSuchServer { known, .. } => format!(
            "{error}\nhint: call it with one of: {} (or without `server` to check all)",
            known
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
