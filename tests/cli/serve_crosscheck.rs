//! `mcpenv serve` checked by real outside programs: the official MCP
//! conformance suite's server scenarios (through a stdio-to-HTTP bridge,
//! since the suite tests servers only over streamable HTTP), the MCP
//! Inspector's CLI, and Claude Code's own `claude mcp list`. `scripts/test`
//! installs each, pinned, into `target/tools`; without one its test says so
//! and passes. One more test keeps the bridge honest.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::claude::{PINNED_CLAUDE_CODE, claude, claude_command};
use crate::harness::TestEnv;

const PLANTED_SECRET: &str = "sk_live_51CrosscheckSecretValue0123456789";
const DOTENV_SECRET: &str = "ghp_CrosscheckDotenvSecret0123456789abcdAB";

/// The suite's server scenarios that apply to any server. The others need
/// the suite's own test tools (`tools-call-*`, `json-schema-2020-12`, ...)
/// or capabilities `serve` does not declare (logging, completions,
/// resources, prompts: it declares only tools); `dns-rebinding-protection`
/// tests the HTTP layer, which here is the bridge, not `serve`.
const SERVER_SCENARIOS: &[&str] = &["server-initialize", "ping", "tools-list"];

/// The MCP Inspector CLI release the checks below are written against
/// (also in `scripts/test`).
const INSPECTOR_VERSION: &str = "1.0.3";

/// A project whose one server has a literal secret and one from `.env`.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"shared": {
            "command": "sh", "args": ["-c", "true"],
            "env": {"LITERAL": PLANTED_SECRET, "API_TOKEN": "${API_TOKEN}"}
        }}})
        .to_string(),
    );
    env.write("project/.env", &format!("API_TOKEN={DOTENV_SECRET}\n"));
    env
}

/// `program` with the harness's environment for `mcpenv serve` (HOME, XDG
/// directories, managed directory), so what it starts sees the test's world.
fn with_serve_env(env: &TestEnv, program: &Path) -> Command {
    let serve = env.command(&env.project, &["serve"]);
    let mut command = Command::new(program);
    command.env_clear().stdin(Stdio::null());
    for (key, value) in serve.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command
}

/// The bridge (`tests/support/stdio_http_bridge.rs`) running `mcpenv serve`
/// in the project for each session; killed when dropped.
struct Bridge {
    child: Child,
    url: String,
}

impl Bridge {
    fn start(env: &TestEnv) -> Self {
        static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let bridge = PATH.get_or_init(|| crate::probe::example("mcpenv-stdio-http-bridge"));
        let mut child = with_serve_env(env, Path::new(bridge))
            .current_dir(&env.project)
            .arg(crate::harness::mcpenv_binary())
            .arg("serve")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "bridge printed {url:?}"
        );
        Self {
            child,
            url: url.trim().to_string(),
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every check's id and status in every `checks.json` under `dir`.
fn checks(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(checks(&path));
        } else if path.file_name().is_some_and(|name| name == "checks.json") {
            let list: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            found.extend(list.iter().map(|check| {
                let field = |key: &str| check[key].as_str().unwrap_or_default().to_string();
                (field("id"), field("status"))
            }));
        }
    }
    found
}

/// What the bridge adds or drops, the conformance verdicts would wrongly
/// credit to `serve`: so the same session over stdio and through the bridge
/// must come out the same, an error included.
#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_passes_serves_answers_through_unchanged() {
    use rmcp::ServiceExt;
    use rmcp::model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    };
    let env = world();
    let bridge = tokio::task::block_in_place(|| Bridge::start(&env));
    let direct = crate::serve::connect(&env, ProtocolVersion::V_2025_11_25).await;
    // reqwest is built without a TLS provider of its own (see Cargo.toml).
    mcpenv::probe::tls::install_provider();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(bridge.url.clone());
    let bridged = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcpenv-test", "1"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
    .serve(transport)
    .await
    .unwrap();
    assert_eq!(direct.peer_info(), bridged.peer_info());
    let tools = direct.list_all_tools().await.unwrap();
    assert_eq!(tools, bridged.list_all_tools().await.unwrap());
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(names.contains(&"list_servers") && names.contains(&"check_environment"));
    let call = |name: &str| CallToolRequestParams::new(name.to_string());
    assert_eq!(
        direct.call_tool(call("list_servers")).await.unwrap(),
        bridged.call_tool(call("list_servers")).await.unwrap()
    );
    // `serve`'s own text for an unknown tool (rmcp's router would say
    // `tool not found`; the bridge has no words of its own).
    let error = |result: Result<_, rmcp::service::ServiceError>| match result {
        Err(rmcp::service::ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    };
    let over_stdio = error(direct.call_tool(call("nope")).await);
    assert_eq!(over_stdio.message, "Unknown tool: nope");
    assert_eq!(over_stdio, error(bridged.call_tool(call("nope")).await));
    direct.cancel().await.unwrap();
    bridged.cancel().await.unwrap();
}

#[test]
fn serve_passes_the_conformance_suites_server_scenarios() {
    let Some((node, suite)) = crate::conformance::installed() else {
        crate::skips::skip(&format!(
            "the MCP conformance suite {} and Node 22 are not in target/tools \
             (scripts/test installs them with npm)",
            crate::conformance::SUITE_VERSION
        ));
        return;
    };
    // The pinned names are the suite's own, so a renamed scenario fails here
    // rather than passing unrun.
    let listed = Command::new(&node)
        .arg(&suite)
        .args(["list", "--server"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    for scenario in SERVER_SCENARIOS {
        assert!(
            listed.contains(&format!("- {scenario} ")),
            "the suite lists no server scenario {scenario}:\n{listed}"
        );
    }

    let env = world();
    let bridge = Bridge::start(&env);
    let results = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for scenario in SERVER_SCENARIOS {
        let dir = results.path().join(scenario);
        let output = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &bridge.url, "--scenario", scenario, "-o"])
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let checks = checks(&dir);
        let failed: Vec<&(String, String)> = checks
            .iter()
            .filter(|(_, status)| status != "SUCCESS")
            .collect();
        if !output.status.success() || checks.is_empty() || !failed.is_empty() {
            wrong.push(format!(
                "{scenario}: suite exit {:?}, checks {checks:?}\n{}",
                output.status.code(),
                String::from_utf8_lossy(&output.stdout)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Node 22 and the Inspector CLI's entry point, when `scripts/test`
/// installed them.
fn inspector() -> Option<(PathBuf, PathBuf)> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools");
    let node = tools.join("node22/node_modules/.bin/node");
    let package = tools.join("inspector/node_modules/@modelcontextprotocol/inspector-cli");
    let version = std::fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|json| json["version"].as_str().map(str::to_string));
    if !node.exists() || version.as_deref() != Some(INSPECTOR_VERSION) {
        return None;
    }
    // `build/index.js` is the CLI proper (`mcp-inspector-cli --cli` only
    // starts it again under the `node` on PATH).
    Some((node, package.join("build/index.js")))
}

/// `inspector mcpenv -C PROJECT serve ARGS`: exit code, stdout, stderr.
fn run_inspector(env: &TestEnv, node: &Path, cli: &Path, args: &[&str]) -> (i32, String, String) {
    let output = with_serve_env(env, node)
        // It finds its own package.json through `../package.json` of the
        // working directory, so it runs in its `build` directory and the
        // project is given with `-C`.
        .current_dir(cli.parent().unwrap())
        .arg(cli)
        .arg(crate::harness::mcpenv_binary())
        .arg("-C")
        .arg(&env.project)
        .arg("serve")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_mcp_inspector_lists_and_calls_the_tools() {
    let Some((node, cli)) = inspector() else {
        crate::skips::skip(&format!(
            "the MCP Inspector CLI {INSPECTOR_VERSION} and Node 22 are not in \
             target/tools (scripts/test installs them with npm)"
        ));
        return;
    };
    let env = world();
    let json_of = |(code, stdout, stderr): (i32, String, String)| -> (Value, String) {
        assert_eq!(code, 0, "inspector exit {code}:\n{stdout}\n{stderr}");
        let value = serde_json::from_str(&stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}):\n{stdout}\n{stderr}"));
        (value, stdout)
    };

    let (listed, _) = json_of(run_inspector(
        &env,
        &node,
        &cli,
        &["--method", "tools/list"],
    ));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    for tool in ["list_servers", "check_environment"] {
        assert!(names.contains(&tool), "{tool} not in {names:?}");
    }

    // The inspector's SDK client also checks the structured content against
    // the tool's output schema.
    let (servers, text) = json_of(run_inspector(
        &env,
        &node,
        &cli,
        &["--method", "tools/call", "--tool-name", "list_servers"],
    ));
    assert_eq!(servers["isError"], false, "{text}");
    let names: Vec<&str> = servers["structuredContent"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|server| server["untrusted"]["name"].as_str())
        .collect();
    assert!(names.contains(&"shared"), "{text}");
    for secret in [PLANTED_SECRET, DOTENV_SECRET] {
        assert!(!text.contains(secret), "a secret in {text}");
    }

    // `--tool-arg` values are read as JSON, so `42` is sent as a number
    // where the schema wants a string; and a name that is no server's.
    for (argument, expected) in [("server=42", "must be a string"), ("server=nope", "nope")] {
        let (result, text) = json_of(run_inspector(
            &env,
            &node,
            &cli,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "check_environment",
                "--tool-arg",
                argument,
            ],
        ));
        assert_eq!(result["isError"], true, "{argument}: {text}");
        // A name that is no server's is answered with the known names,
        // which the configuration wrote: under `untrusted`.
        let message = match result["structuredContent"]["untrusted"]["error"].as_str() {
            Some(error) => error.to_string(),
            None => result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        };
        assert!(message.contains(expected), "{argument}: {text}");
    }
}

/// `claude mcp list` in the project: what it printed.
fn claude_mcp_list(env: &TestEnv) -> String {
    let serve = env.command(&env.project, &["serve"]);
    let mut command = claude_command(env, &env.project, &["mcp", "list"]).unwrap();
    // Claude Code passes its environment to the servers it starts: the
    // harness's state and managed directories keep `serve` in the test's world.
    for (key, value) in serve.get_envs() {
        if let (Some(key), Some(value)) = (key.to_str(), value)
            && ["XDG_STATE_HOME", "MCPENV_MANAGED_DIR"].contains(&key)
        {
            command.env(key, value);
        }
    }
    let output = command.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn claude_code_lists_serve_connected() {
    if claude().is_none() {
        crate::skips::skip(&format!(
            "Claude Code {PINNED_CLAUDE_CODE} is not installed in target/tools \
             (scripts/test installs it with npm)"
        ));
        return;
    }
    let bin = crate::harness::mcpenv_binary();
    let bin = bin.to_str().unwrap();
    let env = world();
    env.run(&["add", "-s", "user", "mcpenv", "--", bin, "serve"])
        .expect_code(0);
    let text = claude_mcp_list(&env);
    let connected = format!("mcpenv: {bin} serve - ✔ Connected");
    assert!(
        text.lines().any(|line| line == connected),
        "expected {connected:?}:\n{text}"
    );

    // Project scope, approved in a folder the user trusts (Claude Code
    // 2.1.332 reads approvals only then).
    env.trust_project();
    env.run(&["add", "-s", "project", "mcpenv-team", "--", bin, "serve"])
        .expect_code(0);
    env.run(&["approve", "mcpenv-team"]).expect_code(0);
    let text = claude_mcp_list(&env);
    let connected = format!("mcpenv-team: {bin} serve - ✔ Connected");
    assert!(
        text.lines().any(|line| line == connected),
        "expected {connected:?}:\n{text}"
    );
}
