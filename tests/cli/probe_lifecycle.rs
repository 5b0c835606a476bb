//! The MCP lifecycle as `probe` drives it: what it offers in `initialize`,
//! the 2026-07-28 discovery flow, and the stdio shutdown sequence, checked
//! against fake servers that record what the client did.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::probe::{fake, gone, remote_server, world};

/// The JSON lines a recording fake wrote.
fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("`{}`: {error}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn initialize_offers_2025_11_25_and_names_mcpenv() {
    let scratch = tempfile::tempdir().unwrap();
    let record = scratch.path().join("seen.jsonl");
    let env = world(&[("rec", fake(&format!("record:{}", record.display())))]);
    let out = env.run(&["probe"]).expect_code(0);
    assert!(
        out.stdout
            .contains("fake-server 1.2.3, protocol 2025-11-25,"),
        "{out}"
    );
    let seen = recorded(&record);
    assert_eq!(seen[0]["method"], "initialize");
    assert_eq!(seen[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        seen[0]["params"]["clientInfo"],
        serde_json::json!({"name": "mcpenv", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(seen[1]["method"], "notifications/initialized");
}

#[test]
fn an_older_revision_the_server_picks_is_accepted() {
    let env = world(&[("old", fake("version=2024-11-05"))]);
    let out = env.run(&["probe"]).expect_code(0);
    assert!(out.stdout.contains("protocol 2024-11-05,"), "{out}");
}

#[test]
fn a_server_of_2026_07_28_only_is_reached_by_discovery() {
    let scratch = tempfile::tempdir().unwrap();
    let record = scratch.path().join("seen.jsonl");
    let env = world(&[("new", fake(&format!("modern:{}", record.display())))]);
    let out = env.run(&["probe"]).expect_code(0);
    assert!(
        out.stdout
            .contains("fake-modern 2.0.0, protocol 2026-07-28, 2 tools"),
        "{out}"
    );
    let seen = recorded(&record);
    let methods: Vec<&str> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(methods, ["initialize", "server/discover", "tools/list"]);
    // 2026-07-28 carries the lifecycle in each request's `_meta`.
    for request in &seen[1..] {
        let meta = request["params"]["_meta"].to_string();
        assert!(meta.contains("\"2026-07-28\""), "{request}");
        assert!(meta.contains("\"mcpenv\""), "{request}");
    }
}

#[test]
fn discovery_over_http_sends_the_2026_07_28_headers() {
    let scratch = tempfile::tempdir().unwrap();
    let record = scratch.path().join("seen.jsonl");
    let (_server, url) =
        remote_server(scratch.path(), "http-modern", &record.display().to_string());
    let env = world(&[("new", serde_json::json!({"type": "http", "url": url}))]);
    let out = env.run(&["probe"]).expect_code(0);
    assert!(out.stdout.contains("protocol 2026-07-28, 2 tools"), "{out}");
    let seen = recorded(&record);
    let header = |request: &Value, name: &str| -> Option<String> {
        request["headers"].as_array()?.iter().find_map(|line| {
            let (key, value) = line.as_str()?.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    };
    let discover = seen
        .iter()
        .find(|request| request["body"]["method"] == "server/discover")
        .unwrap_or_else(|| panic!("no server/discover in {seen:?}"));
    assert_eq!(
        header(discover, "mcp-method").as_deref(),
        Some("server/discover")
    );
    assert_eq!(
        header(discover, "mcp-protocol-version").as_deref(),
        Some("2026-07-28")
    );
    let list = seen
        .iter()
        .find(|request| request["body"]["method"] == "tools/list")
        .unwrap_or_else(|| panic!("no tools/list in {seen:?}"));
    assert_eq!(header(list, "mcp-method").as_deref(), Some("tools/list"));
}

#[test]
fn stdio_shutdown_closes_stdin_first_then_sends_sigterm() {
    let scratch = tempfile::tempdir().unwrap();
    let events = scratch.path().join("events");
    let env = world(&[("linger", fake(&format!("lifecycle:{}", events.display())))]);
    let start = Instant::now();
    env.run(&["probe"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(&events).unwrap(),
        "stdin closed\nSIGTERM\n"
    );
    // One grace period after stdin closed, not the probe's timeout.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_server_ignoring_eof_and_sigterm_dies_by_sigkill_with_its_group() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pids");
    let env = world(&[("stubborn", fake(&format!("stubborn:{}", pidfile.display())))]);
    let start = Instant::now();
    let out = env.run(&["probe"]).expect_code(0);
    let took = start.elapsed();
    assert!(out.stdout.contains("stubborn  ok"), "{out}");
    // Both grace periods ran out (1 s each), then SIGKILL.
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    let pids = std::fs::read_to_string(&pidfile).unwrap();
    for pid in pids.split_whitespace() {
        assert!(gone(pid.parse().unwrap()), "process {pid} survived");
    }
}
