//! Benchmark of `mcpenv probe`: `cargo bench --bench probe` probes 20 fake
//! servers that each take 1 s to become ready (all at once, so the wall time
//! should stay close to 1 s; target under 2 s), then one server that never
//! answers with `--timeout 1` (should cost about 1 s). When Claude Code is
//! installed, `claude mcp list` checks the same servers (as user-scope
//! servers) for comparison, with its defaults: 3 at a time, 30 s timeout.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The fake MCP server (`tests/support/fake_mcp_server.rs`, an example),
/// built in release mode on first use.
fn fake_bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        escargot::CargoBuild::new()
            .example("mcpenv-fake-server")
            .release()
            .run()
            .expect("the fake MCP server builds")
            .path()
            .display()
            .to_string()
    })
}

fn probe(home: &Path, project: &Path, servers: &[(String, &str)], extra: &[&str]) -> Duration {
    std::fs::write(
        project.join(".mcp.json"),
        serde_json::json!({ "mcpServers": entries(servers) }).to_string(),
    )
    .unwrap();
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_mcpenv"))
        .args(["probe", "--json", "--trust-project"])
        .args(extra)
        .current_dir(project)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.code().is_some(), "probe was killed");
    elapsed
}

fn entries(servers: &[(String, &str)]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = servers
        .iter()
        .map(|(name, mode)| {
            (
                name.clone(),
                serde_json::json!({"command": fake_bin(), "args": [mode]}),
            )
        })
        .collect();
    serde_json::Value::Object(map)
}

fn claude() -> Option<std::path::PathBuf> {
    which::which("claude").ok()
}

/// `claude mcp list` over `servers` put in a fresh HOME's user scope.
fn claude_list(claude: &Path, root: &Path, servers: &[(String, &str)]) -> Duration {
    let home = root.join("claude-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".claude.json"),
        serde_json::json!({ "mcpServers": entries(servers) }).to_string(),
    )
    .unwrap();
    let started = Instant::now();
    let status = Command::new(claude)
        .args(["mcp", "list"])
        .current_dir(&home)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "claude mcp list failed");
    started.elapsed()
}

fn main() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let project = temp.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();

    let slow: Vec<(String, &str)> = (0..20)
        .map(|i| (format!("slow-{i:02}"), "slow:1000"))
        .collect();
    let wall = probe(&home, &project, &slow, &[]);
    println!(
        "probe: 20 servers ready after 1 s each: {:.2} s wall (target < 2 s)",
        wall.as_secs_f64()
    );
    let hang = vec![("hangs".to_string(), "hang")];
    let wall = probe(&home, &project, &hang, &["--timeout", "1"]);
    println!(
        "probe: 1 server that never answers, --timeout 1: {:.2} s wall (expected about 1 s)",
        wall.as_secs_f64()
    );

    let Some(claude) = claude() else {
        println!("claude mcp list: skipped, Claude Code is not installed");
        return;
    };
    let wall = claude_list(&claude, temp.path(), &slow);
    println!(
        "claude mcp list: 20 servers ready after 1 s each: {:.2} s wall",
        wall.as_secs_f64()
    );
    let wall = claude_list(&claude, temp.path(), &hang);
    println!(
        "claude mcp list: 1 server that never answers (default timeout): {:.2} s wall",
        wall.as_secs_f64()
    );
}
