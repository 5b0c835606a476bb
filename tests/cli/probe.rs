//! `mcpenv probe` against the fake MCP server (`tests/support/fake_mcp_server.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::TestEnv;

/// The fake MCP server (`tests/support/fake_mcp_server.rs`): an example, so
/// `cargo install` leaves it out, built on first use.
pub fn fake_bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| example("mcpenv-fake-server"))
}

/// The server built with rmcp's server side (`tests/support/rmcp_server.rs`).
fn rmcp_server_bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| example("mcpenv-rmcp-server"))
}

pub fn example(name: &str) -> String {
    escargot::CargoBuild::new()
        .example(name)
        .current_release()
        .run()
        .unwrap_or_else(|error| panic!("the example {name} does not build: {error}"))
        .path()
        .display()
        .to_string()
}

/// A world whose `.mcp.json` holds `servers` (name, JSON entry), all
/// approved in the project's local settings in a folder the user trusts
/// (Claude Code 2.1.332 reads those approvals only then).
pub fn world(servers: &[(&str, Value)]) -> TestEnv {
    let env = TestEnv::new();
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, entry)| ((*name).to_string(), entry.clone()))
        .collect();
    env.write(
        "project/.mcp.json",
        &serde_json::json!({ "mcpServers": map }).to_string(),
    );
    let names: Vec<&str> = servers.iter().map(|(name, _)| *name).collect();
    env.write(
        "project/.claude/settings.local.json",
        &serde_json::json!({ "enabledMcpjsonServers": names }).to_string(),
    );
    env.trust_project();
    env
}

pub fn fake(mode: &str) -> Value {
    serde_json::json!({ "command": fake_bin(), "args": [mode] })
}

/// A fake server started through `sh`, which writes the server's pid to `pidfile`.
fn fake_with_pid(mode: &str, pidfile: &Path) -> Value {
    serde_json::json!({
        "command": "sh",
        "args": ["-c", format!("echo $$ > '{}'; exec '{}' {mode}", pidfile.display(), fake_bin())],
    })
}

/// The servers of `--json`'s one document (which must be valid JSON).
fn servers(stdout: &str) -> Vec<Value> {
    let document: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(document["schema_version"], 1, "{stdout}");
    document["servers"].as_array().unwrap().clone()
}

/// A server's audit checks.
fn audit(server: &Value) -> &[Value] {
    server["audit"].as_array().unwrap()
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn by_name<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| line["name"] == name)
        .unwrap_or_else(|| panic!("no line for {name}"))
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether `pid` is gone (or a zombie: dead, waiting for a reaper).
pub fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.chars().next())
            });
        if matches!(state, None | Some('Z' | 'X')) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn json_lines_report_each_server_and_a_summary() {
    let env = world(&[
        ("good", fake("ok")),
        ("crashy", fake("crash")),
        (
            "missing",
            serde_json::json!({ "command": "no-such-command-mcpenv" }),
        ),
        ("junk", fake("garbage")),
        // A dotenv value reaches a server that references it.
        (
            "from-dotenv",
            serde_json::json!({ "command": fake_bin(), "args": ["needs-env:TOKEN_A"], "env": {"TOKEN_A": "${TOKEN_A}"} }),
        ),
        (
            "unset",
            serde_json::json!({ "command": fake_bin(), "args": ["needs-env:TOKEN_B", "--token=${TOKEN_B}"] }),
        ),
    ]);
    env.write("project/.env", "TOKEN_A=from-file\n");
    let out = env
        .run(&["probe", "--jsonl", "--timeout", "5"])
        .expect_code(1);
    let lines = lines(&out.stdout);
    assert_eq!(lines.len(), 7, "{out}");
    assert_eq!(
        lines[6],
        serde_json::json!({"summary": {"ok": 2, "failed": 4, "ms": lines[6]["summary"]["ms"]}})
    );
    assert!(lines[6]["summary"]["ms"].is_u64());

    let good = by_name(&lines, "good");
    assert_eq!(good["ok"], true);
    assert_eq!(good["error"], Value::Null);
    assert_eq!(
        good["server"],
        serde_json::json!({"name": "fake-server", "version": "1.2.3"})
    );
    assert!(good["protocol_version"].is_string());
    assert_eq!(
        (
            good["tools"].as_u64(),
            good["prompts"].as_u64(),
            good["resources"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert!(good["ms"].is_u64());
    assert_eq!(by_name(&lines, "from-dotenv")["ok"], true);

    let error = |name: &str| by_name(&lines, name)["error"].as_str().unwrap().to_string();
    assert_eq!(
        error("crashy"),
        "exited with status 3; stderr: fake: starting | fake: cannot open the database"
    );
    assert_eq!(by_name(&lines, "crashy")["server"], Value::Null);
    assert_eq!(
        error("missing"),
        "command `no-such-command-mcpenv` not found"
    );
    assert_eq!(
        error("junk"),
        "wrote non-JSON to stdout (only MCP messages are allowed there): `Server listening on stdio, hello!`"
    );
    assert_eq!(
        error("unset"),
        "exited with status 1; stderr: fake: TOKEN_B is not set (unset variables: TOKEN_B; set them in `.env` or the environment)"
    );
    // Progress goes to stderr, one line per server.
    assert_eq!(out.stderr.lines().count(), 6, "{out}");
}

#[test]
fn text_report_and_success_exit() {
    let env = world(&[("good", fake("ok"))]);
    let out = env.run(&["probe"]).expect_code(0);
    assert!(
        out.stdout
            .starts_with("good  ok      fake-server 1.2.3, protocol "),
        "{out}"
    );
    assert!(
        out.stdout
            .contains(", 2 tools, 1 prompt, 1 resource, ready in "),
        "{out}"
    );
    assert!(out.stdout.contains("1 ok, 0 failed in "), "{out}");
    assert!(out.stderr.starts_with("ok      `good` in "), "{out}");
}

#[test]
fn success_kills_the_servers_children() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("grandchild.pid");
    let env = world(&[("kid", fake(&format!("spawn-child:{}", pidfile.display())))]);
    env.run(&["probe"]).expect_code(0);
    assert!(
        gone(read_pid(&pidfile)),
        "the grandchild `sleep 600` survived"
    );
}

#[test]
fn timeout_fails_fast_and_kills_the_server() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("hang.pid");
    let env = world(&[
        ("hangs", fake_with_pid("hang", &pidfile)),
        ("good", fake("ok")),
    ]);
    let start = Instant::now();
    let out = env
        .run(&["probe", "--jsonl", "--timeout", "0.5"])
        .expect_code(1);
    // The hung server costs its 0.5 s, not Claude Code's 30 s; the bound
    // leaves room for a loaded CI machine (the benchmark measures 1.01 s
    // for a 1 s timeout).
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let lines = lines(&out.stdout);
    assert_eq!(by_name(&lines, "hangs")["error"], "no answer within 0.5 s");
    assert_eq!(by_name(&lines, "good")["ok"], true);
    assert!(gone(read_pid(&pidfile)), "the hanging server survived");
}

/// Ends a running `probe` of a hanging server and one whose shell left a
/// grandchild behind with `signal`, and checks both are gone after; returns
/// the exit code.
fn end_a_hanging_probe(signal: nix::sys::signal::Signal) -> Option<i32> {
    let scratch = tempfile::tempdir().unwrap();
    let server_pid = scratch.path().join("server.pid");
    let grandchild_pid = scratch.path().join("grandchild.pid");
    let env = world(&[
        ("hangs", fake_with_pid("hang", &server_pid)),
        (
            "kid",
            serde_json::json!({ "command": "sh", "args": ["-c", format!("sleep 600 & echo $! > '{}'; exec '{}' hang", grandchild_pid.display(), fake_bin())] }),
        ),
    ]);
    let mut child = env
        .command(&env.project, &["probe", "--timeout", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(server_pid.exists() && grandchild_pid.exists()) {
        assert!(Instant::now() < deadline, "the servers did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The pid files are written before the servers exec; give them a moment.
    std::thread::sleep(Duration::from_millis(100));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let status = child.wait().unwrap();
    assert!(gone(read_pid(&server_pid)), "the server survived {signal}");
    assert!(
        gone(read_pid(&grandchild_pid)),
        "the grandchild survived {signal}"
    );
    status.code()
}

#[test]
fn ctrl_c_kills_every_server() {
    let code = end_a_hanging_probe(nix::sys::signal::Signal::SIGINT);
    assert_eq!(code, Some(1));
}

#[test]
fn sigkill_of_probe_still_kills_every_server() {
    // No handler of probe's runs on SIGKILL: its reaper does the work.
    let code = end_a_hanging_probe(nix::sys::signal::Signal::SIGKILL);
    assert_eq!(code, None);
}

#[test]
fn unapproved_project_servers_need_trust() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &serde_json::json!({ "mcpServers": { "cloned": fake("ok") } }).to_string(),
    );
    let out = env.run(&["probe", "--jsonl"]).expect_code(0);
    assert_eq!(
        lines(&out.stdout),
        vec![
            serde_json::json!({"summary": {"ok": 0, "failed": 0, "ms": lines(&out.stdout)[0]["summary"]["ms"]}})
        ]
    );
    assert!(
        out.stderr.contains("skipped `cloned`: project server not approved in Claude Code's settings; pass `--trust-project` to start it anyway"),
        "{out}"
    );
    let out = env
        .run(&["probe", "--jsonl", "--trust-project"])
        .expect_code(0);
    assert_eq!(by_name(&lines(&out.stdout), "cloned")["ok"], true);
}

#[test]
fn an_unknown_name_is_a_failure_with_hints() {
    let env = world(&[("good", fake("ok"))]);
    let out = env.run(&["probe", "godo"]).expect_code(1);
    assert!(
        out.stderr.contains("error: no MCP server named `godo`"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("hint: a server with a similar name exists: `good`"),
        "{out}"
    );
}

#[test]
fn audit_checks_both_error_channels() {
    let env = world(&[
        ("good", fake("ok")),
        ("result", fake("mixed-result")),
        ("error", fake("mixed-error")),
    ]);
    let out = env
        .run(&[
            "probe",
            "--json",
            "--audit",
            "--audit-calls",
            "good",
            "result",
            "error",
        ])
        .expect_code(1);
    let lines = servers(&out.stdout);
    let check = |server: &str, name: &str| -> Value {
        audit(by_name(&lines, server))
            .iter()
            .find(|check| check["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check for {server}"))
            .clone()
    };
    assert_eq!(check("good", "unknown_tool")["ok"], true);
    assert_eq!(check("good", "invalid_arguments")["ok"], true);
    assert_eq!(check("result", "unknown_tool")["ok"], false);
    assert_eq!(
        check("result", "unknown_tool")["got"],
        "a result (isError: false): \"no tool mcpenv-probe-no-such-tool\""
    );
    assert_eq!(check("error", "invalid_arguments")["ok"], false);
    assert_eq!(check("good", "tool_descriptions")["ok"], true);
    assert_eq!(check("good", "input_schemas")["ok"], true);
    assert_eq!(check("good", "tool_count")["ok"], true);
    // The three fakes share their tool names.
    assert_eq!(check("good", "name_collisions")["ok"], false);
    let unknown = check("good", "unknown_tool");
    let keys: Vec<&str> = unknown
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["check", "ok", "status", "expected", "got", "spec"]);
    assert_eq!(
        check("good", "invalid_arguments")["called"],
        serde_json::json!({"tool": "echo", "arguments": {"text": true}, "invalid": "`text` is a boolean, the schema wants type \"string\""})
    );

    let alone = env.run(&["probe", "--audit", "good"]).expect_code(0);
    assert!(
        alone
            .stdout
            .contains("audit ok       unknown_tool: JSON-RPC error -32602"),
        "{alone}"
    );

    let text = env
        .run(&["probe", "--audit", "--audit-calls", "good", "result"])
        .expect_code(1);
    insta::assert_snapshot!(without_timings(&text.stdout), @r#"
    good    ok      fake-server 1.2.3, protocol 2025-11-25, 2 tools, 1 prompt, 1 resource, ready in [N] ms
            audit ok       unknown_tool: JSON-RPC error -32602
            audit ok       invalid_arguments: `echo` with {"text":true} (`text` is a boolean, the schema wants type "string"): a result (isError: true): "missing argument `text`"
            audit skipped  invalid_arguments: `now`: no arguments surely fail the input schema (no required or typed properties, others allowed)
            audit ok       tool_descriptions: all described
            audit ok       input_schemas: all objects
            audit failed   name_collisions: got `echo`, `now` also in `result`; expected tool names unique across servers
                           a client sees every server's tools at once; two tools of one name are renamed, hidden or confused by the model (MCP 2025-11-25, server/tools#tool-names)
            audit ok       tool_count: 2 tools
    result  ok      fake-server 1.2.3, protocol 2025-11-25, 2 tools, 1 prompt, 1 resource, ready in [N] ms
            audit failed   unknown_tool: got a result (isError: false): "no tool mcpenv-probe-no-such-tool"; expected JSON-RPC error -32602 (or -32601)
                           a call to an unknown tool is a protocol error, not a tool result: the client must be able to tell a wrong call from failed work (MCP 2025-11-25, server/tools#error-handling)
            audit ok       invalid_arguments: `echo` with {"text":true} (`text` is a boolean, the schema wants type "string"): a result (isError: true): "missing argument `text`"
            audit skipped  invalid_arguments: `now`: no arguments surely fail the input schema (no required or typed properties, others allowed)
            audit ok       tool_descriptions: all described
            audit ok       input_schemas: all objects
            audit failed   name_collisions: got `echo`, `now` also in `good`; expected tool names unique across servers
                           a client sees every server's tools at once; two tools of one name are renamed, hidden or confused by the model (MCP 2025-11-25, server/tools#tool-names)
            audit ok       tool_count: 2 tools
    2 ok, 0 failed; audit: 3 failed checks on 2 servers in [N] s
    "#);
}

/// `text` with its durations (which vary run to run) replaced.
fn without_timings(text: &str) -> String {
    let ms = regex::Regex::new(r"\d+ ms").unwrap();
    let seconds = regex::Regex::new(r"in \d+\.\d s").unwrap();
    let text = ms.replace_all(text, "[N] ms");
    seconds.replace_all(&text, "in [N] s").into_owned()
}

/// A background fake server, killed when dropped (also when a test fails).
pub struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `mcpenv-fake-server MODE:PORTFILE:TOKEN` (MODE `http` or `sse`)
/// and returns it with its URL.
pub fn remote_server(dir: &Path, mode: &str, token: &str) -> (Background, String) {
    let portfile = dir.join(format!("{mode}.port"));
    let child = Background(
        std::process::Command::new(fake_bin())
            .arg(format!("{mode}:{}:{token}", portfile.display()))
            .spawn()
            .unwrap(),
    );
    let path = if mode.starts_with("sse") {
        "sse"
    } else {
        "mcp"
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(port) = std::fs::read_to_string(&portfile)
            && !port.is_empty()
        {
            return (child, format!("http://127.0.0.1:{port}/{path}"));
        }
        assert!(Instant::now() < deadline, "the {mode} fake did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn remote_servers_over_loopback_with_a_401_hint() {
    // `sse-post-auth` opens its event stream for anyone and refuses the
    // POSTs: the 401 comes in the middle of the session.
    for mode in ["http", "sse", "sse-post-auth"] {
        let scratch = tempfile::tempdir().unwrap();
        let (server, url) = remote_server(scratch.path(), mode, "s3cret");
        let entry = |variable: &str| {
            serde_json::json!({
                "type": if mode == "http" { "http" } else { "sse" },
                "url": url,
                "headers": { "Authorization": format!("Bearer ${{{variable}}}") },
            })
        };
        let env = world(&[
            ("remote", entry("API_TOKEN")),
            ("wrong", entry("WRONG_TOKEN")),
            (
                "oauth",
                serde_json::json!({"type": if mode == "http" { "http" } else { "sse" }, "url": url}),
            ),
            (
                "helper",
                serde_json::json!({"type": if mode == "http" { "http" } else { "sse" }, "url": url, "headersHelper": "./get-token.sh"}),
            ),
        ]);
        env.write("project/.env", "API_TOKEN=s3cret\nWRONG_TOKEN=nope\n");
        let out = env.run(&["probe", "--jsonl", "--audit", "--timeout", "5"]);
        drop(server);
        let out = out.expect_code(1);
        let lines = lines(&out.stdout);
        let remote = by_name(&lines, "remote");
        assert_eq!(remote["ok"], true, "{mode}: {out}");
        assert_eq!(remote["tools"], 2, "{mode}");
        assert_eq!(remote["server"]["name"], "fake-server", "{mode}");
        // The audit's calls went through the transport too.
        assert_eq!(remote["audit"][0]["check"], "unknown_tool", "{mode}");
        assert_eq!(remote["audit"][0]["ok"], true, "{mode}");
        assert_eq!(
            by_name(&lines, "wrong")["error"],
            "HTTP 401/403: the server wants credentials (`WWW-Authenticate: Bearer`); check the value of `WRONG_TOKEN` (header `Authorization`)",
            "{mode}"
        );
        assert_eq!(
            by_name(&lines, "oauth")["error"],
            "HTTP 401/403: the server wants credentials (`WWW-Authenticate: Bearer`); the entry sends no credentials, so the server likely signs in with OAuth: authenticate in Claude Code with `/mcp` (probe does not sign in)",
            "{mode}"
        );
        assert_eq!(
            by_name(&lines, "helper")["error"],
            "HTTP 401/403: the server wants credentials (`WWW-Authenticate: Bearer`); check the value of the headers the entry's `headersHelper` makes (probe does not run it; Claude Code does)",
            "{mode}"
        );
        out.assert_no_secret(&["s3cret"]);
    }
}

#[test]
fn remote_failures_read_as_one_line_with_a_next_step() {
    let scratch = tempfile::tempdir().unwrap();
    let (http, http_url) = remote_server(scratch.path(), "http", "");
    let (sse, sse_url) = remote_server(scratch.path(), "sse", "");
    // A port that was just free: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = world(&[
        (
            "sse-at-http",
            serde_json::json!({"type": "sse", "url": http_url}),
        ),
        (
            "http-at-sse",
            serde_json::json!({"type": "http", "url": sse_url.replace("/sse", "/messages")}),
        ),
        (
            "refused",
            serde_json::json!({"type": "http", "url": format!("http://127.0.0.1:{closed}/mcp")}),
        ),
        (
            "refused-sse",
            serde_json::json!({"type": "sse", "url": format!("http://127.0.0.1:{closed}/sse")}),
        ),
        (
            "plain-as-tls",
            serde_json::json!({"type": "http", "url": http_url.replace("http:", "https:")}),
        ),
        ("no-url", serde_json::json!({"type": "http"})),
        (
            "key-in-url",
            serde_json::json!({"type": "http", "url": http_url.replace("/mcp", "/v1?api_key=${API_KEY}")}),
        ),
        (
            "ftp",
            serde_json::json!({"type": "sse", "url": "ftp://example.com/sse"}),
        ),
    ]);
    env.write("project/.env", "API_KEY=sk_live_4eC39HqLyjWDarjtT1zdK9z\n");
    let out = env.run(&["probe", "--jsonl", "--timeout", "5"]);
    drop((http, sse));
    let out = out.expect_code(1);
    let lines = lines(&out.stdout);
    let error = |name: &str| by_name(&lines, name)["error"].as_str().unwrap().to_string();
    assert_eq!(
        error("sse-at-http"),
        "GET answered HTTP 405 Method Not Allowed; is the URL right? SSE servers usually stream at `/sse`; a streamable HTTP server needs `\"type\": \"http\"`"
    );
    assert_eq!(
        error("http-at-sse"),
        "unexpected server response: HTTP 404 Not Found; is the URL right? Streamable HTTP servers usually answer at `/mcp`; an SSE server needs `\"type\": \"sse\"`"
    );
    assert_eq!(
        error("refused"),
        "cannot connect: tcp connect error: Connection refused (os error 111)"
    );
    assert_eq!(error("refused-sse"), error("refused"));
    assert!(
        error("plain-as-tls").starts_with("cannot connect: "),
        "{}",
        error("plain-as-tls")
    );
    // Claude Code's loader skips an http entry without `url`, so it is not
    // started (it was probed, and failed, before the loader was shared).
    assert!(lines.iter().all(|line| line["name"] != "no-url"));
    assert!(
        out.stderr.contains(
            "skipped `no-url`: Claude Code does not load it (invalid MCP server config for \"no-url\": url: expected string, received undefined); not started"
        ),
        "{out}"
    );
    // The server echoed the path with its key; the key is masked.
    assert_eq!(
        error("key-in-url"),
        "unexpected server response: HTTP 404 Not Found: Cannot POST /v1?api_key=sk_l…dK9z; is the URL right? Streamable HTTP servers usually answer at `/mcp`; an SSE server needs `\"type\": \"sse\"`"
    );
    out.assert_no_secret(&["sk_live_4eC39HqLyjWDarjtT1zdK9z"]);
    assert_eq!(
        error("ftp"),
        "the URL must start with `http://` or `https://`, not `ftp:`"
    );
    assert_eq!(lines.last().unwrap()["summary"]["failed"], 7);
}

#[test]
fn an_unknown_protocol_version_is_a_mismatch() {
    let env = world(&[("future", fake("version=1999-01-01"))]);
    let out = env.run(&["probe", "--jsonl"]).expect_code(1);
    assert_eq!(
        by_name(&lines(&out.stdout), "future")["error"],
        "protocol version mismatch: the server chose `1999-01-01`, mcpenv speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    );
}

#[test]
fn audit_expects_invalid_params_errors_before_2025_11_25() {
    // The fake answers a missing argument with `isError: true`: right from
    // 2025-11-25 on, wrong before.
    let env = world(&[("old-result", fake("version=2025-06-18"))]);
    let out = env
        .run(&["probe", "--jsonl", "--audit", "--audit-calls", "old-result"])
        .expect_code(1);
    let line = by_name(&lines(&out.stdout), "old-result").clone();
    let check = audit(&line)
        .iter()
        .find(|check| check["check"] == "invalid_arguments")
        .unwrap()
        .clone();
    assert_eq!(check["ok"], false);
    assert_eq!(
        check["expected"],
        "JSON-RPC error -32602 (protocol 2025-06-18)"
    );
}

#[test]
fn a_secret_a_server_echoes_on_stderr_is_masked() {
    let env = TestEnv::new();
    let token = "sk_live_51HxQ2bK9vR3mWq7ZpT4nLc8Yd";
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"leaky": {"command": "sh", "args": ["-c", "echo \"using token $API_TOKEN\" >&2; exit 3"], "env": {"API_TOKEN": "${API_TOKEN}"}}}}"#,
    );
    env.write("project/.env", &format!("API_TOKEN={token}\n"));
    for json in [false, true] {
        let mut args = vec!["probe", "--trust-project"];
        if json {
            args.push("--jsonl");
        }
        let out = env.run(&args);
        assert_eq!(out.code, 1, "{out}");
        out.assert_no_secret(&[token]);
        assert!(
            out.stdout.contains("sk_l…c8Yd") || out.stderr.contains("sk_l…c8Yd"),
            "{out}"
        );
    }
}

/// A TLS front for a plain-HTTP fake on `upstream`: a CA of its own (its
/// certificate written to `dir/ca.pem`), a certificate for 127.0.0.1 signed
/// by it, and a thread relaying each connection. Returns the port and the
/// CA file.
fn tls_front(dir: &Path, upstream: u16) -> (u16, std::path::PathBuf) {
    use std::sync::Arc;
    use tokio_rustls::rustls;

    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mcpenv test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap())
        .unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![certificate.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // Lives until the test binary exits.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let Ok(mut plain) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    (port, ca_file)
}

#[test]
fn https_certificates_are_verified_and_ssl_cert_file_adds_a_ca() {
    let scratch = tempfile::tempdir().unwrap();
    let (server, url) = remote_server(scratch.path(), "http", "");
    let upstream: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let (port, ca_file) = tls_front(scratch.path(), upstream);
    let mut env = world(&[(
        "secure",
        serde_json::json!({"type": "http", "url": format!("https://127.0.0.1:{port}/mcp")}),
    )]);

    // A certificate from an unknown CA is refused...
    let out = env
        .run(&["probe", "--jsonl", "--timeout", "5"])
        .expect_code(1);
    let error = by_name(&lines(&out.stdout), "secure")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        error,
        "cannot connect: invalid peer certificate: UnknownIssuer; if the server's certificate comes from your organisation's own CA, point `SSL_CERT_FILE` at that CA's certificate"
    );

    // ...and accepted once SSL_CERT_FILE names that CA, as for curl.
    env.set_env("SSL_CERT_FILE", &ca_file);
    let out = env.run(&["probe", "--jsonl", "--timeout", "5"]);
    drop(server);
    let out = out.expect_code(0);
    let secure = by_name(&lines(&out.stdout), "secure").clone();
    assert_eq!(secure["ok"], true, "{out}");
    assert_eq!(secure["tools"], 2);
}

#[test]
fn a_terminal_shows_a_live_line_per_server_then_the_report() {
    use rexpect::session::{Options, spawn_with_options};
    let env = world(&[("quick", fake("ok")), ("slow", fake("slow:1500"))]);
    let mut command = env.command(&env.project, &["probe"]);
    command.env("TERM", "xterm");
    let options = Options::new()
        .timeout_ms(Some(10_000))
        .strip_ansi_escape_codes(true);
    let mut session = spawn_with_options(command, options).unwrap();
    // While `slow` starts, its line says so and `quick`'s line is done.
    let before = session.exp_string("slow   starting").unwrap();
    let rest = session.exp_eof().unwrap();
    let shown = format!("{before}slow   starting{rest}").replace('\r', "");
    assert!(shown.contains("quick  ok"), "{shown}");
    assert!(shown.contains("2 ok, 0 failed in "), "{shown}");
    // The report comes after the live lines, in configuration order.
    let report = &shown[shown.find("quick  ok      fake-server").expect("a report")..];
    assert!(report.contains("\nslow   ok      fake-server"), "{shown}");
}

#[test]
fn a_correct_server_built_with_rmcp_passes_the_audit() {
    let env = world(&[("rusty", serde_json::json!({ "command": rmcp_server_bin() }))]);
    let out = env
        .run(&["probe", "--jsonl", "--audit", "--audit-calls"])
        .expect_code(0);
    let lines = lines(&out.stdout);
    let rusty = by_name(&lines, "rusty");
    assert_eq!(rusty["ok"], true, "{out}");
    assert_eq!(rusty["server"]["name"], "rmcp", "{out}");
    assert_eq!(rusty["tools"], 2);
    let checks: Vec<(&str, bool, &str)> = audit(rusty)
        .iter()
        .map(|check| {
            (
                check["check"].as_str().unwrap(),
                check["ok"].as_bool().unwrap(),
                check["got"].as_str().unwrap(),
            )
        })
        .collect();
    insta::assert_debug_snapshot!(checks, @r#"
    [
        (
            "unknown_tool",
            true,
            "JSON-RPC error -32602",
        ),
        (
            "invalid_arguments",
            true,
            "`add` with {\"a\":true} (`a` is a boolean, the schema wants type \"integer\"): a result (isError: true): \"failed to deserialize parameters: invalid type: boolean `true`, expected i64\"",
        ),
        (
            "invalid_arguments",
            true,
            "`echo` with {\"text\":true} (`text` is a boolean, the schema wants type \"string\"): a result (isError: true): \"failed to deserialize parameters: invalid type: boolean `true`, expected a strin…\"",
        ),
        (
            "tool_descriptions",
            true,
            "all described",
        ),
        (
            "input_schemas",
            true,
            "all objects",
        ),
        (
            "name_collisions",
            true,
            "none shared",
        ),
        (
            "tool_count",
            true,
            "2 tools",
        ),
    ]
    "#);
    assert_eq!(lines[1]["summary"]["audit_failed"], 0);
}

#[test]
fn no_servers_says_how_to_add_one() {
    let env = TestEnv::new();
    let out = env.run(&["probe"]).expect_code(0);
    insta::assert_snapshot!(out, @"
    ----- stderr -----
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
    let out = env.run(&["probe", "--jsonl"]).expect_code(0);
    assert_eq!(lines(&out.stdout)[0]["summary"]["ok"], 0);
}

#[test]
fn probe_sends_credential_names_empty_as_claude_code_does_unless_asked() {
    let scratch = tempfile::tempdir().unwrap();
    let (_server, url) = remote_server(scratch.path(), "http", "npm-s3cret-value");
    let env = world(&[(
        "registry",
        serde_json::json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${NPM_TOKEN}"}}),
    )]);
    env.write("project/.env", "NPM_TOKEN=npm-s3cret-value\n");
    let out = env.run(&["probe", "--timeout", "5"]);
    out.assert_no_secret(&["npm-s3cret-value"]);
    assert_eq!(out.code, 1, "{out}");
    let report = out.stdout.replace(&url, "URL");
    insta::assert_snapshot!(report.lines().take(2).collect::<Vec<_>>().join("\n"), @"
    registry  failed  HTTP 401/403: the server wants credentials (`WWW-Authenticate: Bearer`); `${NPM_TOKEN}` went empty, as Claude Code sends it: rename the variable (`mcpenv check` says how), or try the value with `--send-blanked`
              blanked  header `Authorization`: `${NPM_TOKEN}` sent empty, as Claude Code 2.1.332 sends it (`--send-blanked` sends the value)
    ");
    let out = env.run(&["probe", "--timeout", "5", "--send-blanked", "--jsonl"]);
    out.assert_no_secret(&["npm-s3cret-value"]);
    let line = &lines(&out.stdout)[0];
    assert_eq!(line["ok"], true, "{out}");
    assert_eq!(
        line["blanked"],
        serde_json::json!([{"field": "headers.Authorization", "variables": ["NPM_TOKEN"], "sent_empty": false}])
    );
}

/// The calls the non-validating fake logged, one `(tool, arguments)` each.
fn logged_calls(log: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let call: Value = serde_json::from_str(line).unwrap();
            (
                call["tool"].as_str().unwrap().to_string(),
                call["arguments"].clone(),
            )
        })
        .collect()
}

#[test]
fn audit_calls_only_harmless_tools_and_only_with_invalid_arguments() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("calls.jsonl");
    let env = world(&[(
        "careless",
        fake(&format!("non-validating:{}", log.display())),
    )]);

    // By default only the read-only tool runs, with an id that is no string.
    let out = env
        .run(&["probe", "--audit", "--timeout", "5"])
        .expect_code(1);
    assert_eq!(
        logged_calls(&log),
        vec![("lookup_record".to_string(), serde_json::json!({"id": true}))]
    );
    insta::assert_snapshot!(without_timings(&out.stdout), @r#"
    careless  ok      fake-server 1.2.3, protocol 2025-11-25, 3 tools, 1 prompt, 1 resource, ready in [N] ms
              audit warning  unknown_tool: got JSON-RPC error -32603: Internal error; expected JSON-RPC error -32602 (or -32601)
                             a protocol error is the right channel, but -32603 (internal error) says the server broke, not that the tool does not exist; the spec's example is -32602 (MCP 2025-11-25, server/tools#error-handling)
              audit failed   invalid_arguments: got `lookup_record` with {"id":true} (`id` is a boolean, the schema wants type "string"): a result (isError: false): "Record true has no fields"; expected a result with isError: true (protocol 2025-11-25)
                             servers must validate all tool inputs: this tool answered arguments its own schema forbids as if they were fine (MCP 2025-11-25, server/tools#security-considerations)
              audit skipped  invalid_arguments: `delete_all_records`: annotated destructive (destructiveHint: true), never called
              audit skipped  invalid_arguments: `add_numbers`: not annotated read-only (readOnlyHint: true); `--audit-calls` calls such tools with invalid arguments
              audit ok       tool_descriptions: all described
              audit ok       input_schemas: all objects
              audit ok       name_collisions: none shared
              audit ok       tool_count: 3 tools
    1 ok, 0 failed; audit: 1 failed check on 1 server, 1 warning in [N] s
    "#);

    // `--audit-calls` adds the unannotated tool; the destructive one never runs.
    std::fs::remove_file(&log).unwrap();
    let out = env
        .run(&[
            "probe",
            "--json",
            "--audit",
            "--audit-calls",
            "--timeout",
            "5",
        ])
        .expect_code(1);
    assert_eq!(
        logged_calls(&log),
        vec![
            ("lookup_record".to_string(), serde_json::json!({"id": true})),
            ("add_numbers".to_string(), serde_json::json!({"a": true})),
        ]
    );
    let careless = by_name(&servers(&out.stdout), "careless").clone();
    let checks: Vec<(&str, &str, &Value)> = audit(&careless)
        .iter()
        .map(|check| {
            (
                check["check"].as_str().unwrap(),
                check["status"].as_str().unwrap(),
                &check["called"],
            )
        })
        .collect();
    insta::assert_debug_snapshot!(checks, @r#"
    [
        (
            "unknown_tool",
            "warning",
            Null,
        ),
        (
            "invalid_arguments",
            "failed",
            Object {
                "tool": String("lookup_record"),
                "arguments": Object {
                    "id": Bool(true),
                },
                "invalid": String("`id` is a boolean, the schema wants type \"string\""),
            },
        ),
        (
            "invalid_arguments",
            "failed",
            Object {
                "tool": String("add_numbers"),
                "arguments": Object {
                    "a": Bool(true),
                },
                "invalid": String("`a` is a boolean, the schema wants type \"number\""),
            },
        ),
        (
            "invalid_arguments",
            "skipped",
            Null,
        ),
        (
            "tool_descriptions",
            "ok",
            Null,
        ),
        (
            "input_schemas",
            "ok",
            Null,
        ),
        (
            "name_collisions",
            "ok",
            Null,
        ),
        (
            "tool_count",
            "ok",
            Null,
        ),
    ]
    "#);
}

#[test]
fn json_is_one_document_that_json_tool_reads() {
    let env = world(&[("good", fake("ok")), ("crashy", fake("crash"))]);
    let out = env
        .run(&["probe", "--json", "--audit", "--timeout", "5"])
        .expect_code(1);
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    let keys: Vec<&str> = document
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["schema_version", "servers", "summary"]);
    // Configuration order, however they finished.
    let names: Vec<&str> = document["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["good", "crashy"]);
    assert_eq!(
        document["summary"],
        serde_json::json!({"ok": 1, "failed": 1, "ms": document["summary"]["ms"], "audit_failed": 0})
    );
    let mut python = std::process::Command::new("python3")
        .args(["-m", "json.tool"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is on PATH in tests");
    use std::io::Write as _;
    python
        .stdin
        .take()
        .unwrap()
        .write_all(out.stdout.as_bytes())
        .unwrap();
    let parsed = python.wait_with_output().unwrap();
    assert!(parsed.status.success(), "json.tool refused:\n{out}");
    let reparsed: Value = serde_json::from_slice(&parsed.stdout).unwrap();
    assert_eq!(reparsed, document);
    // No servers: still one document.
    let empty = TestEnv::new().run(&["probe", "--json"]).expect_code(0);
    assert_eq!(servers(&empty.stdout), Vec::<Value>::new());
}

#[test]
fn a_missing_npm_package_is_named_not_npms_closing_note() {
    // What `npx -y @x/y` prints with npm 10 when the package does not exist.
    let env = TestEnv::new();
    let npm =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/stderr/npm10-404-scoped.txt");
    env.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {"missing": {"command": "sh", "args": ["-c", format!("cat '{}' >&2; exit 1", npm.display())]}}}).to_string(),
    );
    let out = env
        .run(&["probe", "--trust-project", "--timeout", "5"])
        .expect_code(1);
    insta::assert_snapshot!(without_timings(&out.stdout), @r#"
    missing  failed  exited with status 1; stderr: npm error 404 Not Found - GET https://registry.npmjs.org/@x%2fy - Not found | npm error 404  '@x/y@*' is not in this registry.
    0 ok, 1 failed in [N] s
    "#);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_of_serve_while_it_probes_still_kills_every_server() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    // `serve` probes through the same code as `probe`, reaper included.
    let scratch = tempfile::tempdir().unwrap();
    let server_pid = scratch.path().join("server.pid");
    // A server's own group outlives a `serve` killed with SIGKILL unless
    // the reaper kills it: the `sleep` never sees the end of its stdin.
    let env = world(&[(
        "kid",
        serde_json::json!({ "command": "sh", "args": ["-c", format!("sleep 600 & echo $! > '{}'; exec '{}' hang", server_pid.display(), fake_bin())] }),
    )]);
    let mut command = tokio::process::Command::from(env.command(&env.project, &["serve"]));
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut serve = command.spawn().unwrap();
    let pipes = (serve.stdout.take().unwrap(), serve.stdin.take().unwrap());
    let session = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcpenv-test", "1"),
    )
    .serve(pipes)
    .await
    .unwrap();
    let call = tokio::spawn(async move {
        let _ = session
            .call_tool(CallToolRequestParams::new("probe_servers".to_string()))
            .await;
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server_pid.exists() {
        assert!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(serve.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    serve.wait().await.unwrap();
    assert!(
        gone(read_pid(&server_pid)),
        "the server's group outlived a killed `serve`"
    );
    call.abort();
}
