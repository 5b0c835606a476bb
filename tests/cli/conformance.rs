//! The official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! with `mcpenv probe` as its client. `scripts/test` installs the pinned
//! suite and a Node 22 (the suite needs it) into `target/tools`; without
//! them this test says so and passes.
//!
//! A prober is not a full client: it initializes and lists, and never calls
//! tools, answers elicitations or signs in. So `initialize` and
//! `auth/resource-mismatch` (refusing a token for the wrong resource) must
//! pass, and every other scenario that applies must see probe connect, or
//! report the 401 with its OAuth hint, while the suite fails the checks of
//! what probe deliberately does not do.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The suite's release the verdicts below are pinned to (also in
/// `scripts/test`).
pub const SUITE_VERSION: &str = "0.1.16";

/// How probe must come out of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// Initialized and listed.
    Ok,
    /// Reported HTTP 401/403 with the OAuth hint.
    Unauthorized,
}

/// Every client scenario of the pinned suite that applies to a prober:
/// the scenario, how probe comes out, whether the suite passes it.
const SCENARIOS: &[(&str, Probe, bool)] = &[
    ("initialize", Probe::Ok, true),
    ("tools_call", Probe::Ok, false),
    ("elicitation-sep1034-client-defaults", Probe::Ok, false),
    ("sse-retry", Probe::Ok, false),
    ("auth/resource-mismatch", Probe::Unauthorized, true),
    ("auth/metadata-default", Probe::Unauthorized, false),
    ("auth/metadata-var1", Probe::Unauthorized, false),
    ("auth/metadata-var2", Probe::Unauthorized, false),
    ("auth/metadata-var3", Probe::Unauthorized, false),
    ("auth/basic-cimd", Probe::Unauthorized, false),
    (
        "auth/scope-from-www-authenticate",
        Probe::Unauthorized,
        false,
    ),
    (
        "auth/scope-from-scopes-supported",
        Probe::Unauthorized,
        false,
    ),
    (
        "auth/scope-omitted-when-undefined",
        Probe::Unauthorized,
        false,
    ),
    ("auth/scope-step-up", Probe::Unauthorized, false),
    ("auth/scope-retry-limit", Probe::Unauthorized, false),
    ("auth/token-endpoint-auth-basic", Probe::Unauthorized, false),
    ("auth/token-endpoint-auth-post", Probe::Unauthorized, false),
    ("auth/token-endpoint-auth-none", Probe::Unauthorized, false),
    ("auth/pre-registration", Probe::Unauthorized, false),
    (
        "auth/2025-03-26-oauth-metadata-backcompat",
        Probe::Unauthorized,
        false,
    ),
    (
        "auth/2025-03-26-oauth-endpoint-fallback",
        Probe::Unauthorized,
        false,
    ),
    ("auth/offline-access-scope", Probe::Unauthorized, false),
    (
        "auth/offline-access-not-supported",
        Probe::Unauthorized,
        false,
    ),
    ("auth/client-credentials-jwt", Probe::Unauthorized, false),
    ("auth/client-credentials-basic", Probe::Unauthorized, false),
    (
        "auth/cross-app-access-complete-flow",
        Probe::Unauthorized,
        false,
    ),
];

/// Node 22 and the suite's entry point, when `scripts/test` installed them.
pub fn installed() -> Option<(PathBuf, PathBuf)> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools");
    let node = tools.join("node22/node_modules/.bin/node");
    let package = tools.join("conformance/node_modules/@modelcontextprotocol/conformance");
    let version = std::fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json["version"].as_str().map(str::to_string));
    if !node.exists() || version.as_deref() != Some(SUITE_VERSION) {
        return None;
    }
    Some((node, package.join("dist/index.js")))
}

/// The client command the suite runs: it appends the test server's URL,
/// which becomes an `http` entry of a fresh project, probed in a HOME of
/// its own; probe's report and exit code go to `$MCPENV_CONFORMANCE_OUT`.
const CLIENT: &str = r#"#!/bin/sh
for url; do :; done
dir="$(mktemp -d)"
mkdir -p "$dir/home" "$dir/project"
printf '{"mcpServers":{"conformance":{"type":"http","url":"%s"}}}' "$url" > "$dir/project/.mcp.json"
report="$MCPENV_CONFORMANCE_OUT/$(printf %s "$MCP_CONFORMANCE_SCENARIO" | tr / _)"
cd "$dir/project" && HOME="$dir/home" XDG_CONFIG_HOME="$dir/home/.config" XDG_STATE_HOME="$dir/home/.local/state" \
  "$MCPENV_BIN" probe --trust-project --timeout 10 > "$report.out" 2> "$report.err"
code=$?
echo "$code" > "$report.code"
rm -rf "$dir"
exit "$code"
"#;

/// What one scenario gave: probe's report and exit code, the suite's exit
/// code and its failed checks.
struct Verdict {
    scenario: &'static str,
    probe_out: String,
    probe_code: String,
    suite_passed: bool,
    failed_checks: Vec<String>,
}

fn run_scenario(node: &Path, suite: &Path, scratch: &Path, scenario: &'static str) -> Verdict {
    let results = scratch.join("results").join(scenario.replace('/', "_"));
    let status = Command::new(node)
        .arg(suite)
        .args(["client", "--command"])
        .arg(scratch.join("client.sh"))
        .args(["--scenario", scenario, "--timeout", "30000", "-o"])
        .arg(&results)
        .env("MCPENV_BIN", crate::harness::mcpenv_binary())
        .env("MCPENV_CONFORMANCE_OUT", scratch)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap_or_else(|error| panic!("`{}` does not run: {error}", node.display()));
    let report = scratch.join(scenario.replace('/', "_"));
    let read = |ext: &str| std::fs::read_to_string(report.with_extension(ext)).unwrap_or_default();
    Verdict {
        scenario,
        probe_out: read("out"),
        probe_code: read("code").trim().to_string(),
        suite_passed: status.success(),
        failed_checks: failed_checks(&results),
    }
}

/// The ids of the FAILURE checks in every `checks.json` under `dir`.
fn failed_checks(dir: &Path) -> Vec<String> {
    let mut failed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return failed;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            failed.extend(failed_checks(&path));
        } else if path.file_name().is_some_and(|name| name == "checks.json") {
            let checks: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
                    .unwrap_or_default();
            failed.extend(
                checks
                    .iter()
                    .filter(|check| check["status"] == "FAILURE")
                    .filter_map(|check| check["id"].as_str().map(str::to_string)),
            );
        }
    }
    failed
}

#[test]
fn probe_as_the_conformance_suites_client() {
    let Some((node, suite)) = installed() else {
        crate::skips::skip(&format!(
            "the MCP conformance suite {SUITE_VERSION} and Node 22 are not in target/tools \
             (scripts/test installs them with npm); skipping the conformance test"
        ));
        return;
    };
    let start = Instant::now();
    let scratch = tempfile::tempdir().unwrap();
    let client = scratch.path().join("client.sh");
    std::fs::write(&client, CLIENT).unwrap();
    std::fs::set_permissions(&client, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The scenarios are independent servers on ports of their own: four
    // workers take the next one as they finish, so a slow scenario holds up
    // no other.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut verdicts: Vec<Option<Verdict>> = (0..SCENARIOS.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((scenario, _, _)) = SCENARIOS.get(index) else {
                            return done;
                        };
                        done.push((index, run_scenario(&node, &suite, scratch.path(), scenario)));
                    }
                })
            })
            .collect();
        for worker in workers {
            for (index, verdict) in worker.join().unwrap() {
                verdicts[index] = Some(verdict);
            }
        }
    });
    let verdicts: Vec<Verdict> = verdicts.into_iter().map(Option::unwrap).collect();
    let mut wrong = Vec::new();
    for (verdict, (_, probe, passes)) in verdicts.iter().zip(SCENARIOS) {
        let line = verdict
            .probe_out
            .lines()
            .find(|line| line.starts_with("conformance "))
            .unwrap_or_default();
        let probe_as_expected = match probe {
            Probe::Ok => verdict.probe_code == "0" && line.contains(" ok "),
            Probe::Unauthorized => {
                verdict.probe_code == "1" && line.contains("HTTP 401/403") && line.contains("OAuth")
            }
        };
        if !probe_as_expected || verdict.suite_passed != *passes {
            wrong.push(format!(
                "{}: probe exit {} `{line}`, expected {probe:?}; suite {} (failed checks: {}), expected {}",
                verdict.scenario,
                verdict.probe_code,
                if verdict.suite_passed { "passed" } else { "failed" },
                verdict.failed_checks.join(", "),
                if *passes { "passed" } else { "failed" },
            ));
        }
    }
    eprintln!(
        "conformance suite {SUITE_VERSION}: {} scenarios in {:.1} s",
        SCENARIOS.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
