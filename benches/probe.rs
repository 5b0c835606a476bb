//! Benchmark of `mcpenv probe`: `cargo bench --bench probe` probes 20 fake
//! servers that each take 1 s to become ready (all at once, so the wall time
//! should stay close to 1 s; target under 2 s), then one server that never
//! answers with `--timeout 1` (should cost about 1 s).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FAKE: &str = env!("CARGO_BIN_EXE_mcpenv-fake-server");

fn probe(home: &Path, project: &Path, servers: &[(String, &str)], extra: &[&str]) -> Duration {
    let map: serde_json::Map<String, serde_json::Value> = servers
        .iter()
        .map(|(name, mode)| {
            (
                name.clone(),
                serde_json::json!({"command": FAKE, "args": [mode]}),
            )
        })
        .collect();
    std::fs::write(
        project.join(".mcp.json"),
        serde_json::json!({ "mcpServers": map }).to_string(),
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
}
