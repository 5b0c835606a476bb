//! `mcpenv serve` driven by rmcp's client over the real binary's stdio.

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ErrorCode,
    Implementation, JsonObject, ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};

use crate::harness::TestEnv;

const DOTENV_SECRET: &str = "sk_live_51DotenvSecretValue0123456789";
const LOCAL_SECRET: &str = "ghp_LocalServerSecret0123456789abcdefAB";

pub type Session = RunningService<RoleClient, ClientConfig>;

/// `mcpenv serve` started in the project: its stdout and stdin, for a
/// client. The child lives as long as the test's runtime.
pub fn spawn_serve(env: &TestEnv) -> (tokio::process::ChildStdout, tokio::process::ChildStdin) {
    spawn_serve_in(env, &env.project)
}

/// [`spawn_serve`] in the folder `dir`.
pub fn spawn_serve_in(
    env: &TestEnv,
    dir: &std::path::Path,
) -> (tokio::process::ChildStdout, tokio::process::ChildStdin) {
    let mut command = tokio::process::Command::from(env.command(dir, &["serve"]));
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    tokio::spawn(async move { child.wait().await });
    (stdout, stdin)
}

/// A session with `mcpenv serve` started in the project, at `version`.
pub async fn connect(env: &TestEnv, version: ProtocolVersion) -> Session {
    let (stdout, stdin) = spawn_serve(env);
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcpenv-test", "1"),
    )
    .with_protocol_version(version)
    .serve((stdout, stdin))
    .await
    .unwrap()
}

async fn call(
    session: &Session,
    name: &str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    let Value::Object(arguments) = arguments else {
        unreachable!("tests pass objects")
    };
    session
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments))
        .await
}

/// A project with a project, a local and a user server, a `.env` holding a
/// secret and an empty variable, and a local server given a literal secret.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"shared": {
            "command": "sh", "args": ["-c", "true"],
            "env": {"API_TOKEN": "${API_TOKEN}", "EMPTY_ONE": "${EMPTY_ONE}", "FROM_DOTENV": "${FROM_DOTENV}"}
        }}})
        .to_string(),
    );
    env.write(
        "project/.env",
        &format!("EMPTY_ONE=\nFROM_DOTENV={DOTENV_SECRET}\n"),
    );
    env.write(
        "home/.claude.json",
        &json!({
            "mcpServers": {"everywhere": {"type": "http", "url": "https://mcp.example.com/mcp"}},
            "projects": {env.key(): {"mcpServers": {"mine": {
                "command": "sh", "args": ["-c", "true"], "env": {"TOKEN": LOCAL_SECRET}
            }}}}
        })
        .to_string(),
    );
    env
}

fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

fn assert_no_secret(result: &CallToolResult) {
    let whole = serde_json::to_string(result).unwrap();
    for secret in [DOTENV_SECRET, LOCAL_SECRET] {
        assert!(!whole.contains(secret), "a secret in {whole}");
    }
}

fn schema_accepts(schema: &JsonObject, value: &Value) {
    let validator = jsonschema::validator_for(&Value::Object(schema.clone())).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?} for {value}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_task_shaped_tools_with_schemas_and_true_annotations() {
    let env = world();
    let session = connect(&env, ProtocolVersion::V_2025_11_25).await;
    let tools = session.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_servers",
            "check_environment",
            "explain_server",
            "probe_servers",
            "add_server",
            "share_server"
        ]
    );
    for tool in &tools {
        assert!(
            tool.description
                .as_deref()
                .is_some_and(|text| text.len() > 40)
        );
        assert_eq!(tool.input_schema["type"], "object");
        assert_eq!(tool.input_schema["additionalProperties"], false);
        // Every schema is one a client's validator accepts.
        jsonschema::validator_for(&Value::Object((*tool.input_schema).clone())).unwrap();
        assert_eq!(tool.output_schema.as_ref().unwrap()["type"], "object");
        let annotations = tool.annotations.as_ref().unwrap();
        // (read-only, destructive, idempotent, open world): true to what
        // each tool does.
        let expected = match tool.name.as_ref() {
            "list_servers" | "check_environment" => (true, false, true, false),
            // They start configured servers, programs outside mcpenv.
            "explain_server" | "probe_servers" => (true, false, true, true),
            // They write committed files, behind the human gate.
            "add_server" | "share_server" => (false, true, false, false),
            other => panic!("unexpected tool {other}"),
        };
        assert_eq!(
            (
                annotations.read_only_hint,
                annotations.destructive_hint,
                annotations.idempotent_hint,
                annotations.open_world_hint
            ),
            (
                Some(expected.0),
                Some(expected.1),
                Some(expected.2),
                Some(expected.3)
            ),
            "{}",
            tool.name
        );
        // What an agent must know is in the description it reads.
        let description = tool.description.as_deref().unwrap();
        if expected.3 {
            assert!(description.contains("untrusted"), "{}", tool.name);
        }
        if expected.1 {
            assert!(description.contains("confirmation"), "{}", tool.name);
            assert!(
                description.to_lowercase().contains("never"),
                "{}",
                tool.name
            );
        }
    }
    assert_eq!(
        tools[1].input_schema["properties"]["server"]["type"],
        "string"
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn list_servers_returns_every_scope_without_secrets() {
    let env = world();
    let session = connect(&env, ProtocolVersion::V_2025_11_25).await;
    let tools = session.list_all_tools().await.unwrap();
    let result = call(&session, "list_servers", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_no_secret(&result);
    let value = structured(&result);
    schema_accepts(tools[0].output_schema.as_ref().unwrap(), value);
    let row = |name: &str| {
        value["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|server| server["untrusted"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {value}"))
            .clone()
    };
    let shared = row("shared");
    assert_eq!(shared["scope"], "project");
    assert_eq!(shared["transport"], "stdio");
    assert_eq!(shared["status"], "pending");
    assert_eq!(shared["approval"], "pending");
    // What the configuration wrote is under `untrusted`.
    assert_eq!(
        shared["untrusted"]["env_names"],
        json!(["API_TOKEN", "EMPTY_ONE", "FROM_DOTENV"])
    );
    assert_eq!(
        shared["untrusted"]["approve_command"],
        "mcpenv approve --trust shared"
    );
    let mine = row("mine");
    assert_eq!(mine["scope"], "local");
    assert_eq!(mine["status"], "active");
    assert_eq!(mine["untrusted"]["env_names"], json!(["TOKEN"]));
    let everywhere = row("everywhere");
    assert_eq!(everywhere["scope"], "user");
    assert_eq!(everywhere["transport"], "http");
    assert_eq!(
        everywhere["untrusted"]["url"],
        "https://mcp.example.com/mcp"
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn check_environment_reports_missing_and_empty_without_values() {
    let env = world();
    let session = connect(&env, ProtocolVersion::V_2025_11_25).await;
    let tools = session.list_all_tools().await.unwrap();
    let result = call(&session, "check_environment", json!({}))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_no_secret(&result);
    let value = structured(&result);
    schema_accepts(tools[1].output_schema.as_ref().unwrap(), value);
    let state = |name: &str| {
        value["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|variable| variable["untrusted"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {value}"))["state"]
            .clone()
    };
    assert_eq!(state("API_TOKEN"), "missing");
    assert_eq!(state("EMPTY_ONE"), "empty");
    assert_eq!(state("FROM_DOTENV"), "set");
    assert_eq!(value["ok"], false);
    // The variables' names come from the configuration: counted in the
    // text, named only under `untrusted`.
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("2 variables need a value"), "{text}");
    assert!(!text.contains("API_TOKEN"), "{text}");

    let one = call(&session, "check_environment", json!({"server": "mine"}))
        .await
        .unwrap();
    let names: Vec<&Value> = structured(&one)["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| &server["untrusted"]["name"])
        .collect();
    assert_eq!(names, [&json!("mine")]);
    assert_no_secret(&one);

    let nobody = call(&session, "check_environment", json!({"server": "nobody"}))
        .await
        .unwrap();
    assert_eq!(nobody.is_error, Some(true));
    // The known names come from the configuration: under `untrusted`.
    let text = &nobody.content[0].as_text().unwrap().text;
    assert!(text.contains("untrusted.error"), "{text}");
    let said = structured(&nobody)["untrusted"].to_string();
    assert!(
        said.contains("no MCP server named `nobody`") && said.contains("`mine`"),
        "{said}"
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tools_and_broken_files_use_their_channels() {
    let env = world();
    env.write("project/.mcp.json", "{\"mcpServers\": {");
    let session = connect(&env, ProtocolVersion::V_2025_11_25).await;
    match call(&session, "no_such_tool", json!({})).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(error.message, "Unknown tool: no_such_tool");
        }
        other => panic!("not a protocol error: {other:?}"),
    }
    let result = call(&session, "list_servers", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = &result.content[0].as_text().unwrap().text;
    assert!(
        text.contains("1 configuration file does not load")
            && text.contains("errors[].untrusted.hints"),
        "{text}"
    );
    assert!(
        structured(&result)["errors"][0]["untrusted"]["file"]
            .as_str()
            .unwrap()
            .ends_with("/project/.mcp.json"),
        "{}",
        structured(&result)
    );
    assert!(
        structured(&result)["errors"][0]["untrusted"]["hints"]
            .to_string()
            .contains("Claude Code skips this file"),
        "{}",
        structured(&result)
    );
    assert_no_secret(&result);
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_follow_the_negotiated_protocol() {
    let env = world();
    let session = connect(&env, ProtocolVersion::V_2025_11_25).await;
    let result = call(&session, "check_environment", json!({"server": 3}))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(
        result.content[0]
            .as_text()
            .unwrap()
            .text
            .contains("`server` must be a string")
    );
    let result = call(&session, "list_servers", json!({"scope": "user"}))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    session.cancel().await.unwrap();

    let old = connect(&env, ProtocolVersion::V_2025_06_18).await;
    match call(&old, "check_environment", json!({"server": 3})).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("not -32602 on 2025-06-18: {other:?}"),
    }
    old.cancel().await.unwrap();
}

#[test]
fn probe_audit_passes_against_serve() {
    let env = crate::probe::world(&[(
        "mcpenv",
        json!({"command": crate::harness::mcpenv_binary(), "args": ["serve"]}),
    )]);
    let out = env.run(&["probe", "--audit", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let report = out.json();
    assert_eq!(report["summary"]["audit_failed"], 0, "{report}");
    let audit = report["servers"][0]["audit"].as_array().unwrap();
    // The tools that write are annotated destructive, so probe never
    // calls them: skipped, not failed.
    assert!(
        audit
            .iter()
            .all(|check| check["status"] == "ok" || check["status"] == "skipped"),
        "{report}"
    );
    assert!(
        audit.iter().any(|check| check["status"] == "skipped"
            && check["got"]
                .as_str()
                .unwrap()
                .contains("`add_server`, `share_server`")),
        "{report}"
    );
    let called = audit
        .iter()
        .filter(|check| check.get("called").is_some())
        .count();
    assert!(
        called >= 2,
        "read-only tools called with invalid arguments: {report}"
    );
}

/// Requests that do not fit `tools/call` are invalid-params errors, an
/// unknown method is method-not-found, and neither echoes what was sent;
/// the session goes on. Raw JSON-RPC lines: a client library would not
/// send these.
#[test]
fn malformed_requests_are_protocol_errors_that_quote_nothing_sent() {
    use std::io::{BufRead, BufReader, Write};
    let env = world();
    let mut child = env
        .command(&env.project, &["serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let initialized: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(initialized["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let cases = [
        (json!({"arguments": {}}), -32602, "missing `name`"),
        (json!({"name": 5}), -32602, "`name` must be a string"),
        (
            json!({"name": "list_servers", "arguments": LOCAL_SECRET}),
            -32602,
            "`arguments` must be an object",
        ),
    ];
    for (index, (params, _, _)) in cases.iter().enumerate() {
        send(json!({"jsonrpc": "2.0", "id": 10 + index, "method": "tools/call", "params": params}));
    }
    send(json!({"jsonrpc": "2.0", "id": 20, "method": "nope/x", "params": {}}));
    send(json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "list_servers"}}));
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < cases.len() + 2 {
        let line = lines.next().unwrap().unwrap();
        assert!(!line.contains(LOCAL_SECRET), "{line}");
        let answer: Value = serde_json::from_str(&line).unwrap();
        answers.insert(answer["id"].as_u64().unwrap(), answer);
    }
    for (index, (_, code, says)) in cases.iter().enumerate() {
        let answer = &answers[&(10 + index as u64)];
        assert_eq!(answer["error"]["code"], *code, "{answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(says),
            "{answer}"
        );
    }
    assert_eq!(answers[&20]["error"]["code"], -32601);
    assert_eq!(
        answers[&21]["result"]["isError"], false,
        "the session went on"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
