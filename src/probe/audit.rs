//! The audit's tool calls: how a server answers a call to a tool it does not
//! have, and arguments that cannot pass a tool's input schema.
//!
//! A server that does not validate its input runs whatever it is sent, so
//! the audit calls only tools that cannot do harm: annotated read-only (or,
//! with `--audit-calls`, any tool not annotated destructive), and only with
//! arguments built from the schema to fail it.

use rmcp::model::{CallToolRequestParams, ErrorCode, JsonObject};
use rmcp::service::ServiceError;
use serde::Serialize;
use serde_json::Value;

use super::{AuditCheck, TOOLS_ERRORS_2025_06_18, TOOLS_ERRORS_2025_11_25};
use super::{ServerFacts, ToolFacts, describe_error, describe_result, some_names, static_checks};

/// The name the unknown-tool check calls: no real tool is named so.
pub const UNKNOWN_TOOL: &str = "mcpenv-probe-no-such-tool";

/// At most this many tools of one server are called with invalid arguments:
/// a few show how the server validates; the others would only add lines.
pub const MAX_CALLS: usize = 3;

/// Which tools the audit may call (always with arguments that fail their
/// input schema, never a tool annotated `destructiveHint: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditCalls {
    /// Only tools annotated `readOnlyHint: true`.
    ReadOnly,
    /// Also tools without that annotation (`--audit-calls`): the spec
    /// assumes such a tool may write, so this is an explicit opt-in.
    NotDestructive,
}

/// How one audit check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Passed.
    Ok,
    /// Worth knowing, not a failure.
    Warning,
    /// Failed: `probe` exits 1.
    Failed,
    /// Not run, for the reason in `got`.
    Skipped,
}

impl CheckStatus {
    /// `Ok` when the check passed, else `Failed`.
    pub fn from_ok(ok: bool) -> Self {
        if ok { Self::Ok } else { Self::Failed }
    }
}

/// A call the audit made to one of the server's own tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The tool.
    pub tool: String,
    /// The arguments sent.
    pub arguments: JsonObject,
    /// Why they cannot pass the tool's input schema.
    pub invalid: String,
}

/// Arguments that no implementation of a schema can accept.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidArguments {
    /// The arguments.
    pub arguments: JsonObject,
    /// Why the schema rejects them, in words.
    pub why: String,
}

/// Why a tool is not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// Annotated `destructiveHint: true`: never called.
    Destructive,
    /// Not annotated `readOnlyHint: true` (and no `--audit-calls`).
    NotReadOnly,
    /// No argument set is sure to fail its schema.
    NoInvalidArguments,
    /// [`MAX_CALLS`] tools were called already.
    Enough,
}

impl ToolFacts {
    /// What the audit keeps of a listed tool.
    pub fn from_tool(tool: &rmcp::model::Tool) -> Self {
        let hint = |pick: fn(&rmcp::model::ToolAnnotations) -> Option<bool>| {
            tool.annotations.as_ref().and_then(pick) == Some(true)
        };
        Self {
            name: tool.name.to_string(),
            described: tool
                .description
                .as_deref()
                .is_some_and(|text| !text.trim().is_empty()),
            object_schema: tool.input_schema.get("type").and_then(Value::as_str) == Some("object"),
            read_only: hint(|annotations| annotations.read_only_hint),
            destructive: hint(|annotations| annotations.destructive_hint),
            input_schema: tool.input_schema.as_ref().clone(),
        }
    }
}

/// The arguments to call `tool` with, or why it is not called.
pub fn plan_call(tool: &ToolFacts, calls: AuditCalls) -> Result<InvalidArguments, Skip> {
    if tool.destructive {
        return Err(Skip::Destructive);
    }
    if !tool.read_only && calls == AuditCalls::ReadOnly {
        return Err(Skip::NotReadOnly);
    }
    invalid_arguments(&tool.input_schema).ok_or(Skip::NoInvalidArguments)
}

/// Arguments that cannot pass `schema`, whatever else it says: a wrong type
/// for a required property, else no required property at all, else a wrong
/// type for an optional one, else a property it forbids. `None` when every
/// object may pass (no required or typed properties, others allowed).
pub fn invalid_arguments(schema: &JsonObject) -> Option<InvalidArguments> {
    let empty = JsonObject::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let wrong_type = |name: &str| {
        let (value, kind) = wrong_value(properties.get(name)?)?;
        let wanted = properties[name].get("type").map(Value::to_string)?;
        Some(InvalidArguments {
            arguments: JsonObject::from_iter([(name.to_string(), value)]),
            why: format!("`{name}` is {kind}, the schema wants type {wanted}"),
        })
    };
    if let Some(found) = required.iter().find_map(|name| wrong_type(name)) {
        return Some(found);
    }
    if let Some(first) = required.first() {
        return Some(InvalidArguments {
            arguments: JsonObject::new(),
            why: format!("required `{first}` missing"),
        });
    }
    if let Some(found) = properties.keys().find_map(|name| wrong_type(name)) {
        return Some(found);
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        // A name no listed property has.
        let name = (0..)
            .map(|n| {
                format!(
                    "mcpenv_probe_unexpected{}",
                    if n == 0 { String::new() } else { n.to_string() }
                )
            })
            .find(|name| !properties.contains_key(name))?;
        return Some(InvalidArguments {
            arguments: JsonObject::from_iter([(name.clone(), Value::Bool(true))]),
            why: format!("`{name}` is not allowed (additionalProperties: false)"),
        });
    }
    None
}

/// A value whose JSON type the property's `type` does not allow, and that
/// type in words; `None` for an untyped property (or one allowing all).
fn wrong_value(property: &Value) -> Option<(Value, &'static str)> {
    let allowed: Vec<&str> = match property.get("type")? {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    // 0.5 is a number but not an integer, so it fails `"integer"` too.
    let candidates = [
        (Value::Bool(true), "boolean", "a boolean"),
        (
            Value::String("mcpenv-probe".to_string()),
            "string",
            "a string",
        ),
        (Value::Array(Vec::new()), "array", "an array"),
        (Value::Object(JsonObject::new()), "object", "an object"),
        (serde_json::json!(0.5), "number", "a number"),
        (Value::Null, "null", "null"),
    ];
    candidates
        .into_iter()
        .find(|(_, kind, _)| !allowed.contains(kind))
        .map(|(value, _, words)| (value, words))
}

/// Where the spec says servers must validate tool inputs.
const VALIDATE_INPUTS: &str =
    "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#security-considerations";

/// The checks that call the server: the unknown tool, then the tools that
/// may be called with invalid arguments, then the static checks.
pub(super) async fn run(
    client: &super::handshake::Session,
    facts: &ServerFacts,
    calls: AuditCalls,
) -> Vec<AuditCheck> {
    let mut checks = Vec::new();
    let answer = client
        .call_tool(CallToolRequestParams::new(UNKNOWN_TOOL))
        .await;
    checks.push(unknown_tool_check(&answer));
    let mut skipped: std::collections::BTreeMap<Skip, Vec<&str>> = Default::default();
    let mut called = 0;
    for tool in &facts.tools {
        match plan_call(tool, calls) {
            Ok(_) if called == MAX_CALLS => {
                skipped.entry(Skip::Enough).or_default().push(&tool.name);
            }
            Ok(invalid) => {
                called += 1;
                let request = CallToolRequestParams::new(tool.name.clone())
                    .with_arguments(invalid.arguments.clone());
                let answer = client.call_tool(request).await;
                checks.push(invalid_arguments_check(
                    &facts.protocol_version,
                    ToolCall {
                        tool: tool.name.clone(),
                        arguments: invalid.arguments,
                        invalid: invalid.why,
                    },
                    &answer,
                ));
            }
            Err(skip) => skipped.entry(skip).or_default().push(&tool.name),
        }
    }
    checks.extend(
        skipped
            .into_iter()
            .map(|(skip, names)| skipped_check(skip, &names)),
    );
    checks.extend(static_checks(facts));
    checks
}

/// Judges the answer to a call of [`UNKNOWN_TOOL`]. The spec wants a
/// protocol error and shows -32602; -32601 (method not found) is read the
/// same way, as Python SDK 1.x sends it. -32603 is the right channel but
/// says the server broke rather than that the tool is unknown: a warning.
pub fn unknown_tool_check(
    answer: &Result<rmcp::model::CallToolResult, ServiceError>,
) -> AuditCheck {
    let (status, got) = match answer {
        Err(ServiceError::McpError(error))
            if error.code == ErrorCode::INVALID_PARAMS
                || error.code == ErrorCode::METHOD_NOT_FOUND =>
        {
            (CheckStatus::Ok, format!("JSON-RPC error {}", error.code.0))
        }
        Err(internal @ ServiceError::McpError(error))
            if error.code == ErrorCode::INTERNAL_ERROR =>
        {
            (CheckStatus::Warning, describe_error(internal))
        }
        Err(error) => (CheckStatus::Failed, describe_error(error)),
        Ok(result) => (CheckStatus::Failed, describe_result(result)),
    };
    let rule = if status == CheckStatus::Warning {
        "a protocol error is the right channel, but -32603 (internal error) says the server broke, not that the tool does not exist; the spec's example is -32602"
    } else {
        "a call to an unknown tool is a protocol error, not a tool result: the client must be able to tell a wrong call from failed work"
    };
    AuditCheck {
        check: "unknown_tool",
        ok: status == CheckStatus::Ok,
        status,
        expected: "JSON-RPC error -32602 (or -32601)".to_string(),
        got,
        spec: TOOLS_ERRORS_2025_11_25,
        rule,
        called: None,
    }
}

/// Judges the answer to `call`, whose arguments fail the tool's schema:
/// from protocol 2025-11-25 on a result with `isError: true`, before a
/// -32602 error. A result without `isError` means the tool ran anyway.
pub fn invalid_arguments_check(
    protocol_version: &str,
    call: ToolCall,
    answer: &Result<rmcp::model::CallToolResult, ServiceError>,
) -> AuditCheck {
    let new_style = protocol_version >= "2025-11-25";
    let got = match answer {
        Ok(result) => describe_result(result),
        Err(error) => describe_error(error),
    };
    let ok = match answer {
        Ok(result) => new_style && result.is_error == Some(true),
        Err(ServiceError::McpError(error)) => !new_style && error.code == ErrorCode::INVALID_PARAMS,
        Err(_) => false,
    };
    let expected = if new_style {
        format!("a result with isError: true (protocol {protocol_version})")
    } else {
        format!("JSON-RPC error -32602 (protocol {protocol_version})")
    };
    let ran_anyway = matches!(answer, Ok(result) if result.is_error != Some(true));
    let (spec, rule) = if ran_anyway {
        (
            VALIDATE_INPUTS,
            "servers must validate all tool inputs: this tool answered arguments its own schema forbids as if they were fine",
        )
    } else if new_style {
        (
            TOOLS_ERRORS_2025_11_25,
            "from 2025-11-25 on, invalid arguments are a tool execution error (isError: true) that the model can read and correct",
        )
    } else {
        (
            TOOLS_ERRORS_2025_06_18,
            "before 2025-11-25, invalid arguments are a protocol error (-32602), like an unknown tool",
        )
    };
    let arguments = Value::Object(call.arguments.clone());
    AuditCheck {
        check: "invalid_arguments",
        ok,
        status: CheckStatus::from_ok(ok),
        expected,
        got: format!("`{}` with {arguments} ({}): {got}", call.tool, call.invalid),
        spec,
        rule,
        called: Some(call),
    }
}

/// The tools not called for one reason.
fn skipped_check(skip: Skip, names: &[&str]) -> AuditCheck {
    let names = some_names(names);
    let got = match skip {
        Skip::Destructive => {
            format!("{names}: annotated destructive (destructiveHint: true), never called")
        }
        Skip::NotReadOnly => format!(
            "{names}: not annotated read-only (readOnlyHint: true); `--audit-calls` calls such tools with invalid arguments"
        ),
        Skip::NoInvalidArguments => format!(
            "{names}: no arguments surely fail the input schema (no required or typed properties, others allowed)"
        ),
        Skip::Enough => format!("{names}: {MAX_CALLS} tools called already"),
    };
    AuditCheck {
        check: "invalid_arguments",
        ok: true,
        status: CheckStatus::Skipped,
        expected: "a tool safe to call with arguments that fail its input schema".to_string(),
        got,
        spec: TOOLS_ERRORS_2025_11_25,
        rule: "the audit calls a tool only when that cannot do harm: read-only, never destructive, with arguments its schema rejects",
        called: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            _ => unreachable!("tests pass objects"),
        }
    }

    fn tool(read_only: bool, destructive: bool, input: Value) -> ToolFacts {
        ToolFacts {
            name: "t".to_string(),
            described: true,
            object_schema: true,
            read_only,
            destructive,
            input_schema: schema(input),
        }
    }

    fn arguments(input: Value) -> Option<Value> {
        invalid_arguments(&schema(input)).map(|found| Value::Object(found.arguments))
    }

    #[test]
    fn a_required_typed_property_gets_a_wrong_type() {
        let input = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
        let found = invalid_arguments(&schema(input)).unwrap();
        assert_eq!(Value::Object(found.arguments), json!({"a": true}));
        assert_eq!(
            found.why,
            "`a` is a boolean, the schema wants type \"number\""
        );
        // A boolean is allowed, so a string goes instead; 0.5 fails "integer".
        let input = json!({"properties": {"f": {"type": ["boolean", "string", "array", "object"]}}, "required": ["f"]});
        assert_eq!(arguments(input), Some(json!({"f": 0.5})));
    }

    #[test]
    fn untyped_required_properties_are_left_out() {
        let input = json!({"type": "object", "properties": {"q": {"anyOf": [{"type": "string"}]}}, "required": ["q"]});
        let found = invalid_arguments(&schema(input)).unwrap();
        assert_eq!(found.arguments, JsonObject::new());
        assert_eq!(found.why, "required `q` missing");
    }

    #[test]
    fn optional_typed_properties_and_closed_schemas_still_fail() {
        let input = json!({"type": "object", "properties": {"limit": {"type": "integer"}}});
        assert_eq!(arguments(input), Some(json!({"limit": true})));
        let input = json!({"type": "object", "properties": {"mcpenv_probe_unexpected": {}}, "additionalProperties": false});
        assert_eq!(
            arguments(input),
            Some(json!({"mcpenv_probe_unexpected1": true}))
        );
    }

    #[test]
    fn an_open_schema_without_required_properties_has_no_invalid_arguments() {
        assert_eq!(arguments(json!({"type": "object"})), None);
        assert_eq!(
            arguments(json!({"type": "object", "properties": {"x": {}}})),
            None
        );
        assert_eq!(
            arguments(
                json!({"type": "object", "properties": {"x": {"type": ["null", "boolean", "object", "array", "number", "string"]}}})
            ),
            None
        );
    }

    #[test]
    fn only_harmless_tools_are_called() {
        let input =
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
        let plan = |read_only, destructive, calls| {
            plan_call(&tool(read_only, destructive, input.clone()), calls)
        };
        assert!(plan(true, false, AuditCalls::ReadOnly).is_ok());
        assert_eq!(
            plan(false, false, AuditCalls::ReadOnly),
            Err(Skip::NotReadOnly)
        );
        assert!(plan(false, false, AuditCalls::NotDestructive).is_ok());
        // Destructive wins over read-only, with or without `--audit-calls`.
        assert_eq!(
            plan(true, true, AuditCalls::NotDestructive),
            Err(Skip::Destructive)
        );
        assert_eq!(
            plan(false, true, AuditCalls::NotDestructive),
            Err(Skip::Destructive)
        );
        assert_eq!(
            plan_call(
                &tool(true, false, json!({"type": "object"})),
                AuditCalls::ReadOnly
            ),
            Err(Skip::NoInvalidArguments)
        );
    }

    #[test]
    fn unknown_tool_codes_are_judged_by_channel_and_meaning() {
        let error = |code: i32| -> Result<rmcp::model::CallToolResult, ServiceError> {
            Err(ServiceError::McpError(rmcp::model::ErrorData::new(
                ErrorCode(code),
                "nope",
                None,
            )))
        };
        assert_eq!(unknown_tool_check(&error(-32602)).status, CheckStatus::Ok);
        assert_eq!(unknown_tool_check(&error(-32601)).status, CheckStatus::Ok);
        let internal = unknown_tool_check(&error(-32603));
        assert_eq!(internal.status, CheckStatus::Warning);
        assert_eq!(internal.got, "JSON-RPC error -32603: nope");
        assert_eq!(
            unknown_tool_check(&error(-32000)).status,
            CheckStatus::Failed
        );
        let result = Ok(serde_json::from_value(
            json!({"content": [{"type": "text", "text": "Unknown tool"}], "isError": true}),
        )
        .unwrap());
        assert_eq!(unknown_tool_check(&result).status, CheckStatus::Failed);
    }
}
