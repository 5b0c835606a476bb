//! `probe` against a real published server: the MCP project's reference
//! `@modelcontextprotocol/server-everything` (TypeScript SDK), over stdio,
//! streamable HTTP and SSE. Skipped, saying so, when `npx` is not installed.
//!
//! The version is pinned so the audit's findings are facts, not drift: this
//! release answers an unknown tool with an `isError` result (TypeScript SDK
//! 1.x since 1.21), which the audit reports.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::TestEnv;

const PACKAGE: &str = "@modelcontextprotocol/server-everything@2026.8.31";

fn npx() -> Option<PathBuf> {
    which::which("npx").ok()
}

/// npm's cache for these tests, kept under `target/` so only the first run
/// downloads the package (the tests' HOME is new every time).
fn npm_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm-cache")
}

/// A server started in its own process group, killed whole when dropped
/// (`npx` starts `node` as a child that a plain kill would leave running).
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.0.wait();
    }
}

fn npx_command(npx: &Path, marker: &str) -> Command {
    let mut command = Command::new(npx);
    command
        .args(["--yes", PACKAGE])
        .env("npm_config_cache", npm_cache())
        .env("npm_config_update_notifier", "false")
        .env("MCPENV_TEST_MARK", marker)
        .stdin(Stdio::null());
    command
}

/// Starts the package's `transport` on a free loopback port.
fn start_remote(npx: &Path, transport: &str, marker: &str) -> (Group, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = npx_command(npx, marker)
        .arg(transport)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let server = Group(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{PACKAGE} {transport} did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, port)
}

/// Processes whose environment carries `marker`.
fn marked_processes(marker: &str) -> Vec<String> {
    let needle = format!("MCPENV_TEST_MARK={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|byte| byte.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|byte| *byte == 0)
            .any(|variable| variable == needle.as_bytes())
        {
            let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // Zombies are dead already, waiting for their parent to reap them.
            if !state.contains(") Z ") {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn the_reference_server_over_every_transport() {
    let Some(npx) = npx() else {
        crate::skips::skip(&format!(
            "`npx` (Node.js) is not installed; it runs {PACKAGE} for this test"
        ));
        return;
    };
    // Fetch the package once, outside any timed probe: an unknown transport
    // name makes it print its usage and exit.
    let fetched = npx_command(&npx, "fetch")
        .arg("no-such-transport")
        .output()
        .unwrap();
    let usage = String::from_utf8_lossy(&fetched.stdout);
    assert!(
        usage.contains("Available transports"),
        "could not run {PACKAGE} through npx: {}",
        String::from_utf8_lossy(&fetched.stderr)
    );

    let marker = format!("{}-{}", std::process::id(), line!());
    let remote_marker = format!("{marker}-remote");
    let (_sse, sse_port) = start_remote(&npx, "sse", &remote_marker);
    let (_http, http_port) = start_remote(&npx, "streamableHttp", &remote_marker);
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({ "mcpServers": {
            "stdio": {
                "command": "npx",
                "args": ["--yes", PACKAGE],
                "env": {
                    "npm_config_cache": npm_cache(),
                    "npm_config_update_notifier": "false",
                    "MCPENV_TEST_MARK": marker,
                },
            },
            "sse": { "type": "sse", "url": format!("http://127.0.0.1:{sse_port}/sse") },
            "http": { "type": "http", "url": format!("http://127.0.0.1:{http_port}/mcp") },
        }})
        .to_string(),
    );
    let out = env
        .run(&[
            "probe",
            "--jsonl",
            "--audit",
            "--trust-project",
            "--timeout",
            "120",
        ])
        // The audit finds the unknown-tool deviation.
        .expect_code(1);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{out}");
    for name in ["stdio", "sse", "http"] {
        let line = lines
            .iter()
            .find(|line| line["name"] == name)
            .unwrap_or_else(|| panic!("no line for {name}: {out}"));
        assert_eq!(line["ok"], true, "{name}: {out}");
        assert_eq!(line["server"]["name"], "mcp-servers/everything", "{name}");
        assert_eq!(line["protocol_version"], "2025-11-25", "{name}");
        assert_eq!(
            (&line["tools"], &line["prompts"], &line["resources"]),
            (&json!(13), &json!(4), &json!(7)),
            "{name}"
        );
        let check = |check: &str| {
            line["audit"]
                .as_array()
                .unwrap()
                .iter()
                .find(|found| found["check"] == check)
                .unwrap_or_else(|| panic!("{name}: no {check} check"))
                .clone()
        };
        let unknown = check("unknown_tool");
        assert_eq!(unknown["ok"], false, "{name}");
        assert!(
            unknown["got"]
                .as_str()
                .unwrap()
                .starts_with("a result (isError: true): \"MCP error -32602: Tool mcpenv-probe-no-such-tool not found\""),
            "{name}: {unknown}"
        );
        let invalid = check("invalid_arguments");
        assert_eq!(invalid["ok"], true, "{name}: {invalid}");
        assert_eq!(check("tool_descriptions")["ok"], true, "{name}");
        assert_eq!(check("input_schemas")["ok"], true, "{name}");
        // Three copies of one server share every tool name.
        assert_eq!(check("name_collisions")["ok"], false, "{name}");
    }
    assert_eq!(
        lines[3]["summary"],
        json!({"ok": 3, "failed": 0, "ms": lines[3]["summary"]["ms"], "audit_failed": 3})
    );
    // npx's shell and node, started by probe, are gone with it; the
    // servers this test started itself show the search finds live ones.
    assert_eq!(marked_processes(&marker), Vec::<String>::new());
    assert!(marked_processes(&remote_marker).len() >= 2);
}
