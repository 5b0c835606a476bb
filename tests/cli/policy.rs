//! Managed MCP policy: `list`, `check`, `get`, `add` and `approve` under a
//! managed folder, cross-checked server by server with the pinned
//! `claude mcp list` (its managed folder, `/etc/claude-code`, put in place
//! by bubblewrap over a temporary one: the real `/etc` is never written),
//! and `mcpenv policy check` with its SARIF validated like `scan`'s.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;

use insta::assert_snapshot;

use crate::harness::TestEnv;

/// The team's servers every case judges: two commands sharing a program,
/// remote servers on hosts that never resolve.
const TEAM_MCP: &str = r#"{
  "mcpServers": {
    "alpha": {"command": "/nonexistent/alpha", "args": ["--x"]},
    "beta": {"command": "/nonexistent/beta"},
    "beta2": {"command": "/nonexistent/beta", "args": ["--y"]},
    "web": {"type": "http", "url": "https://mcp.example.invalid/v1/mcp"},
    "web2": {"type": "http", "url": "https://example.invalid/mcp"},
    "web3": {"type": "sse", "url": "http://mcp.example.invalid/v1/mcp?x=1"}
  }
}
"#;

/// A test environment whose project holds [`TEAM_MCP`], every project
/// server approved in a trusted folder, and the managed folder holding
/// `settings` (`managed-settings.json`) and `mcp` (`managed-mcp.json`).
fn managed_env(settings: Option<&str>, mcp: Option<&str>, user_settings: Option<&str>) -> TestEnv {
    let env = TestEnv::new();
    env.write("project/.mcp.json", TEAM_MCP);
    env.write(
        "project/.claude/settings.local.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    env.trust_project();
    std::fs::create_dir_all(env.root.join("managed")).unwrap();
    if let Some(settings) = settings {
        env.write("managed/managed-settings.json", settings);
    }
    if let Some(mcp) = mcp {
        env.write("managed/managed-mcp.json", mcp);
    }
    if let Some(user_settings) = user_settings {
        env.write("home/.claude/settings.json", user_settings);
    }
    env
}

/// The servers `mcpenv list` says Claude Code loads (not blocked, skipped
/// or reserved), managed ones included.
fn mcpenv_loaded(env: &TestEnv) -> BTreeSet<String> {
    let list = env.run(&["list", "--json"]).expect_code(0).json();
    let mut names: BTreeSet<String> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|server| {
            !["blocked", "skipped", "reserved"].contains(&server["status"].as_str().unwrap())
        })
        .map(|server| server["name"].as_str().unwrap().to_string())
        .collect();
    names.extend(
        list["managed"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|server| server["blocked"].is_null())
            .map(|server| server["name"].as_str().unwrap().to_string()),
    );
    names
}

/// The servers `mcpenv check` reports as blocked by policy, each with an
/// error.
fn mcpenv_check_blocked(env: &TestEnv) -> BTreeSet<String> {
    let out = env.run(&["check", "--json"]);
    let report = out.json();
    let blocked: BTreeSet<String> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|server| server["status"] == "blocked")
        .inspect(|server| {
            let file = server["blocked"]["file"].as_str().unwrap_or_default();
            assert!(file.contains("managed"), "no policy file: {server}");
        })
        .map(|server| server["name"].as_str().unwrap().to_string())
        .collect();
    let errors: BTreeSet<String> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == "blocked-by-policy")
        .map(|finding| finding["server"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(blocked, errors, "{out}");
    if !blocked.is_empty() {
        assert_eq!(out.code, 1, "{out}");
    }
    blocked
}

/// `bwrap` words that show `managed` at `/etc/claude-code` over a
/// read-only copy of the rest of `/etc` (a tmpfs holds the mount point, so
/// nothing is created in the real `/etc`).
fn bwrap_words(managed: &Path, claude: &Path) -> Vec<OsString> {
    let mut words: Vec<OsString> = ["--dev-bind", "/", "/", "--tmpfs", "/etc"]
        .map(OsString::from)
        .to_vec();
    let mut entries: Vec<_> = std::fs::read_dir("/etc")
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.file_name().is_some_and(|name| name == "claude-code") {
            continue;
        }
        match std::fs::read_link(&entry) {
            Ok(target) => words.extend([
                OsString::from("--symlink"),
                target.into_os_string(),
                entry.into_os_string(),
            ]),
            Err(_) => words.extend([
                OsString::from("--ro-bind"),
                entry.clone().into_os_string(),
                entry.into_os_string(),
            ]),
        }
    }
    words.extend([
        OsString::from("--bind"),
        managed.as_os_str().to_owned(),
        OsString::from("/etc/claude-code"),
        claude.as_os_str().to_owned(),
    ]);
    words
}

/// The servers the pinned `claude mcp list` shows with the managed folder
/// in place; `None` when Claude Code or bubblewrap is missing (a skip).
fn claude_loaded(env: &TestEnv) -> Option<BTreeSet<String>> {
    let claude = crate::claude::claude()?;
    let bwrap = which::which("bwrap").ok()?;
    let output = crate::claude::hermetic_wrapped(
        bwrap.as_os_str(),
        &bwrap_words(&env.root.join("managed"), &claude),
        env,
        &env.project,
        &["mcp", "list"],
    )
    .env("MCP_TIMEOUT", "1000")
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "claude mcp list:\n{text}");
    Some(
        text.lines()
            .filter(|line| line.contains(" - "))
            .filter_map(|line| line.split_once(": ").map(|(name, _)| name.to_string()))
            .collect(),
    )
}

/// Whether the cross-check can run; records the skip when not.
fn cross_check_tools() -> bool {
    if crate::claude::claude().is_none() {
        crate::skips::skip(&format!(
            "Claude Code {} is not installed in target/tools; `scripts/test` installs it (needs npm)",
            crate::claude::PINNED_CLAUDE_CODE
        ));
        return false;
    }
    if which::which("bwrap").is_err() {
        crate::skips::skip(
            "the managed-policy cross-check: bubblewrap (`bwrap`) is not installed; `scripts/test` installs it as root on Debian",
        );
        return false;
    }
    true
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_string()).collect()
}

/// A policy case: what it shows, `managed-settings.json`,
/// `managed-mcp.json`, the user's `~/.claude/settings.json`, and the
/// servers Claude Code loads.
type Case<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    &'a [&'a str],
);

#[cfg(target_os = "linux")]
#[test]
fn list_and_check_agree_with_claude_on_every_policy_case() {
    let cases: [Case; 9] = [
        (
            "allowed: no policy",
            None,
            None,
            None,
            &["alpha", "beta", "beta2", "web", "web2", "web3"],
        ),
        (
            "denied by name",
            Some(r#"{"deniedMcpServers": [{"serverName": "alpha"}]}"#),
            None,
            None,
            &["beta", "beta2", "web", "web2", "web3"],
        ),
        (
            "denied by command: the whole array",
            Some(r#"{"deniedMcpServers": [{"serverCommand": ["/nonexistent/beta"]}]}"#),
            None,
            None,
            &["alpha", "beta2", "web", "web2", "web3"],
        ),
        (
            "denied by URL: wildcards, and a query or a slash does not escape a deny",
            Some(
                r#"{"deniedMcpServers": [{"serverUrl": "https://*.example.invalid/*"}, {"serverUrl": "http://mcp.example.invalid/v1/mcp"}, {"serverUrl": "https://example.invalid/mcp/"}]}"#,
            ),
            None,
            None,
            &["alpha", "beta", "beta2"],
        ),
        (
            "allowlist: a command entry makes names count for no stdio server; an allow URL matches exactly",
            Some(
                r#"{"allowedMcpServers": [{"serverName": "alpha"}, {"serverCommand": ["/nonexistent/beta", "--y"]}, {"serverUrl": "https://*.invalid/*"}, {"serverUrl": "http://mcp.example.invalid/v1/mcp"}]}"#,
            ),
            None,
            None,
            &["beta2", "web", "web2"],
        ),
        (
            "deny beats allow; an invalid entry is dropped, the others kept",
            Some(
                r#"{"allowedMcpServers": [{"serverName": "alpha"}, {"serverName": "beta"}, {"bogus": 1}], "deniedMcpServers": [{"serverName": "alpha"}, {"serverName": "beta", "serverUrl": "x"}]}"#,
            ),
            None,
            None,
            &["beta"],
        ),
        (
            "managed-only: the user's own allowlist is not read",
            Some(
                r#"{"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "alpha"}]}"#,
            ),
            None,
            Some(r#"{"allowedMcpServers": [{"serverName": "beta"}]}"#),
            &["alpha"],
        ),
        (
            "managedMcpServers: https entries need no allowlist entry, others are dropped",
            Some(
                r#"{"allowedMcpServers": [{"serverName": "alpha"}], "managedMcpServers": {"corpweb": {"type": "http", "url": "https://corp.example.invalid/mcp"}, "corpplain": {"type": "http", "url": "http://corp.example.invalid/mcp"}}}"#,
            ),
            None,
            None,
            &["alpha", "corpweb"],
        ),
        (
            "exclusive managed-mcp.json: only its servers, and a deny still applies",
            Some(r#"{"deniedMcpServers": [{"serverName": "corp2"}]}"#),
            Some(
                r#"{"mcpServers": {"corp": {"command": "/nonexistent/corp"}, "corp2": {"command": "/nonexistent/corp2"}}}"#,
            ),
            None,
            &["corp"],
        ),
    ];
    let run_claude = cross_check_tools();
    for (case, settings, mcp, user_settings, expected) in cases {
        let env = managed_env(settings, mcp, user_settings);
        assert_agreement(case, &env, expected, run_claude);
    }
}

/// `mcpenv list` loads `expected`, `mcpenv check` fails on the team's
/// others, and the pinned `claude mcp list` (when `run_claude`) shows the
/// same servers.
fn assert_agreement(case: &str, env: &TestEnv, expected: &[&str], run_claude: bool) {
    let loaded = mcpenv_loaded(env);
    assert_eq!(loaded, set(expected), "{case}: mcpenv list");
    let team = set(&["alpha", "beta", "beta2", "web", "web2", "web3"]);
    let blocked: BTreeSet<String> = team.difference(&loaded).cloned().collect();
    assert_eq!(mcpenv_check_blocked(env), blocked, "{case}: mcpenv check");
    if run_claude {
        let claude = claude_loaded(env).unwrap();
        assert_eq!(
            claude, loaded,
            "{case}: claude mcp list and mcpenv list differ"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn drop_in_settings_merge_with_the_settings_file_as_claude_code_reads_them() {
    let run_claude = cross_check_tools();
    let env = managed_env(
        Some(
            r#"{"deniedMcpServers": [{"serverName": "alpha"}], "allowedMcpServers": [{"serverName": "alpha"}, {"serverName": "beta"}]}"#,
        ),
        None,
        None,
    );
    // Lists from every drop-in count, together; hidden and non-JSON files
    // are not read.
    env.write(
        "managed/managed-settings.d/10-team.json",
        r#"{"deniedMcpServers": [{"serverName": "beta"}], "allowedMcpServers": [{"serverName": "web"}]}"#,
    );
    env.write(
        "managed/managed-settings.d/20-more.json",
        r#"{"allowedMcpServers": [{"serverName": "web2"}]}"#,
    );
    env.write(
        "managed/managed-settings.d/.hidden.json",
        r#"{"deniedMcpServers": [{"serverName": "web"}]}"#,
    );
    env.write(
        "managed/managed-settings.d/notes.txt",
        r#"{"deniedMcpServers": [{"serverName": "web2"}]}"#,
    );
    assert_agreement("drop-ins", &env, &["web", "web2"], run_claude);
    let out = env.run(&["get", "beta"]).expect_code(0);
    assert!(
        out.stdout.contains("managed-settings.d/10-team.json"),
        "{out}"
    );
}

/// A managed folder that denies `alpha` by name and `beta` by command.
fn denying_env() -> TestEnv {
    managed_env(
        Some(
            r#"{"deniedMcpServers": [{"serverName": "alpha"}, {"serverCommand": ["/nonexistent/beta"]}], "allowedMcpServers": [{"serverName": "alpha"}, {"serverName": "beta"}, {"serverName": "beta2"}, {"serverName": "zed"}]}"#,
        ),
        None,
        None,
    )
}

#[test]
fn list_get_and_check_show_the_rule_and_its_file() {
    let env = denying_env();
    let out = env.run(&["list"]).expect_code(0);
    assert_snapshot!(out.stdout, @r"
    NAME   SCOPE    TRANSPORT  STATUS             COMMAND / URL
    alpha  project  stdio      blocked by policy  /nonexistent/alpha --x
    beta   project  stdio      blocked by policy  /nonexistent/beta
    beta2  project  stdio      approved           /nonexistent/beta --y
    web    project  http       blocked by policy  https://mcp.example.invalid/v1/mcp
    web2   project  http       blocked by policy  https://example.invalid/mcp
    web3   project  sse        blocked by policy  http://mcp.example.invalid/v1/mcp?x=1
    ");
    assert_snapshot!(out.stderr, @r#"
    warning: `alpha` (project): blocked by enterprise policy: deniedMcpServers entry {"serverName":"alpha"} in `[ROOT]/managed/managed-settings.json`
    warning: `beta` (project): blocked by enterprise policy: deniedMcpServers entry {"serverCommand":["/nonexistent/beta"]} in `[ROOT]/managed/managed-settings.json`
    warning: `web` (project): blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
    warning: `web2` (project): blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
    warning: `web3` (project): blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
    "#);
    let out = env.run(&["get", "beta"]).expect_code(0);
    assert_snapshot!(out.stdout, @r#"
    beta
      Scope:   project (shared via .mcp.json)
      File:    `[ROOT]/project/.mcp.json`
      Status:  blocked by enterprise policy: deniedMcpServers entry {"serverCommand":["/nonexistent/beta"]} in `[ROOT]/managed/managed-settings.json`
      Type:    stdio
      Command: /nonexistent/beta
    "#);
    let out = env.run(&["check"]).expect_code(1);
    assert_snapshot!(out.stdout, @r#"
    alpha  project  blocked by enterprise policy: never started
    beta  project  blocked by enterprise policy: never started
    beta2  project
      command `/nonexistent/beta`  not found
    web  project  blocked by enterprise policy: never started
    web2  project  blocked by enterprise policy: never started
    web3  project  blocked by enterprise policy: never started

    error: `.mcp.json`: Claude Code does not load `alpha`: blocked by enterprise policy: deniedMcpServers entry {"serverName":"alpha"} in `[ROOT]/managed/managed-settings.json`
      hint: Claude Code hides it from `claude mcp list` and never starts it: remove it from `.mcp.json`, or ask your organisation's admins to allow it
    error: `.mcp.json`: Claude Code does not load `beta`: blocked by enterprise policy: deniedMcpServers entry {"serverCommand":["/nonexistent/beta"]} in `[ROOT]/managed/managed-settings.json`
      hint: Claude Code hides it from `claude mcp list` and never starts it: remove it from `.mcp.json`, or ask your organisation's admins to allow it
    error: `.mcp.json`: `beta2` runs `/nonexistent/beta`, which does not exist or is not executable
      hint: check the path `/nonexistent/beta`
    error: `.mcp.json`: Claude Code does not load `web`: blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
      hint: Claude Code hides it from `claude mcp list` and never starts it: remove it from `.mcp.json`, or ask your organisation's admins to allow it
    error: `.mcp.json`: Claude Code does not load `web2`: blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
      hint: Claude Code hides it from `claude mcp list` and never starts it: remove it from `.mcp.json`, or ask your organisation's admins to allow it
    error: `.mcp.json`: Claude Code does not load `web3`: blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it
      hint: Claude Code hides it from `claude mcp list` and never starts it: remove it from `.mcp.json`, or ask your organisation's admins to allow it

    6 of 6 servers in effect lack something (6 errors, 0 warnings)
    "#);
}

#[test]
fn add_refuses_what_policy_keeps_out_with_claude_codes_words() {
    let env = denying_env();
    let out = env
        .run(&["add", "zed2", "--", "/nonexistent/beta"])
        .expect_code(1);
    assert_snapshot!(out.stderr, @r#"
    error: Cannot add MCP server "zed2": server is explicitly blocked by enterprise policy

    hint: blocked by enterprise policy: deniedMcpServers entry {"serverCommand":["/nonexistent/beta"]} in `[ROOT]/managed/managed-settings.json`; ask your organisation's admins, or choose another server
    "#);
    let out = env
        .run(&["add", "-s", "user", "other", "--", "/bin/true"])
        .expect_code(1);
    assert_snapshot!(out.stderr, @r#"
    error: Cannot add MCP server "other": not allowed by enterprise policy

    hint: blocked by enterprise policy: no allowedMcpServers entry in `[ROOT]/managed/managed-settings.json` admits it; ask your organisation's admins, or choose another server
    "#);
    let claude_json = std::fs::read_to_string(env.home.join(".claude.json")).unwrap_or_default();
    assert!(!claude_json.contains("\"other\""), "{claude_json}");
    // Under an exclusive managed-mcp.json nothing can be added.
    env.write("managed/managed-mcp.json", r#"{"mcpServers": {}}"#);
    let out = env.run(&["add", "zed", "--", "/bin/true"]).expect_code(1);
    assert_snapshot!(out.stderr, @"
    error: Cannot add MCP server: enterprise MCP configuration is active and has exclusive control over MCP servers

    hint: ignored: `[ROOT]/managed/managed-mcp.json` is present and has exclusive control over MCP servers; ask your organisation's admins, or choose another server
    ");
}

#[test]
fn approve_never_approves_a_blocked_server() {
    let env = denying_env();
    std::fs::remove_file(env.project.join(".claude/settings.local.json")).unwrap();
    let out = env.run(&["approve", "alpha", "beta2"]).expect_code(1);
    assert_snapshot!(out.stderr, @r#"
    Approved `beta2` in `[ROOT]/project/.claude/settings.local.json`
    warning: `alpha` is not approved: Claude Code would not start it, blocked by enterprise policy: deniedMcpServers entry {"serverName":"alpha"} in `[ROOT]/managed/managed-settings.json`
    Wrote `[ROOT]/project/.git/info/exclude`
    Wrote `[ROOT]/project/.claude/settings.local.json`
    "#);
    let settings = env.read("project/.claude/settings.local.json");
    assert!(
        settings.contains("beta2") && !settings.contains("alpha"),
        "{settings}"
    );
}

/// An organisation's policy file and two repositories, one using a denied
/// server.
fn repositories() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "org/policy.json",
        r#"{"deniedMcpServers": [{"serverUrl": "https://*.example.invalid/*"}, {"serverName": "alpha"}]}"#,
    );
    env.write(
        "project/repos/clean/.mcp.json",
        r#"{"mcpServers": {"ok": {"command": "/bin/ok"}}}"#,
    );
    env.write("project/repos/team/.mcp.json", TEAM_MCP);
    env
}

#[test]
fn policy_check_fails_a_repository_that_uses_a_denied_server() {
    let env = repositories();
    let out = env.run(&["policy", "check", "--policy", "../org/policy.json", "repos"]);
    assert_eq!(out.code, 1, "{out}");
    assert_snapshot!(out.stdout, @r#"
    repos/team/.mcp.json:3:5: `alpha` blocked by enterprise policy: deniedMcpServers entry {"serverName":"alpha"} in `../org/policy.json`
    repos/team/.mcp.json:6:5: `web` blocked by enterprise policy: deniedMcpServers entry {"serverUrl":"https://*.example.invalid/*"} in `../org/policy.json`
    "#);
    assert_snapshot!(out.stderr, @"
    2 servers in 2 `.mcp.json` files kept out by `../org/policy.json`
    hint: Claude Code hides these servers and never starts them; remove them from `.mcp.json`, or change the policy before it ships
    ");
    let out = env
        .run(&[
            "policy",
            "check",
            "--policy",
            "../org/policy.json",
            "repos/clean",
        ])
        .expect_code(0);
    assert_snapshot!(out.stderr, @"No server in 1 `.mcp.json` file is kept out by `../org/policy.json`");
    let out = env.run(&[
        "policy",
        "check",
        "--policy",
        "../org/policy.json",
        "--json",
        "repos/team",
    ]);
    assert_eq!(out.code, 1, "{out}");
    let report = out.json();
    let servers: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["alpha", "web"]);
}

#[test]
fn policy_check_writes_valid_sarif() {
    let env = repositories();
    let out = env.run(&[
        "policy",
        "check",
        "--policy",
        "../org/policy.json",
        "--format",
        "sarif",
        "repos",
    ]);
    assert_eq!(out.code, 1, "{out}");
    let log = out.json();
    let errors: Vec<String> = crate::scan_sarif::validator()
        .iter_errors(&log)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}\n{out}");
    let results = &log["runs"][0]["results"];
    assert_snapshot!(serde_json::to_string_pretty(results).unwrap(), @r#"
    [
      {
        "ruleId": "mcp-policy-denied",
        "ruleIndex": 0,
        "level": "error",
        "message": {
          "text": "`alpha`: blocked by enterprise policy: deniedMcpServers entry {\"serverName\":\"alpha\"} in `../org/policy.json`"
        },
        "locations": [
          {
            "physicalLocation": {
              "artifactLocation": {
                "uri": "repos/team/.mcp.json"
              },
              "region": {
                "startLine": 3,
                "startColumn": 5,
                "endLine": 3,
                "endColumn": 12
              }
            }
          }
        ],
        "partialFingerprints": {
          "mcpenv/finding/v1": "ac8d0fd0d43ad3c701946bd7d39d94b4ff76c33d2a57402f6f44e5e2f029d421"
        }
      },
      {
        "ruleId": "mcp-policy-denied",
        "ruleIndex": 0,
        "level": "error",
        "message": {
          "text": "`web`: blocked by enterprise policy: deniedMcpServers entry {\"serverUrl\":\"https://*.example.invalid/*\"} in `../org/policy.json`"
        },
        "locations": [
          {
            "physicalLocation": {
              "artifactLocation": {
                "uri": "repos/team/.mcp.json"
              },
              "region": {
                "startLine": 6,
                "startColumn": 5,
                "endLine": 6,
                "endColumn": 10
              }
            }
          }
        ],
        "partialFingerprints": {
          "mcpenv/finding/v1": "eeede8eb049b25072eff7b998cbc646072805a4a88eee6bbca79f65b769c2485"
        }
      }
    ]
    "#);
}

#[test]
fn policy_check_usage_errors_exit_2_and_a_missing_policy_file_1() {
    let env = repositories();
    env.run(&["policy", "check", "--json", "--format", "sarif"])
        .expect_code(2);
    let out = env
        .run(&["policy", "check", "--policy", "../org/none.json"])
        .expect_code(1);
    assert_snapshot!(out.stderr, @"
    error: cannot read policy file `../org/none.json`: not a regular file

    hint: name a file shaped like Claude Code's `managed-settings.json`
    ");
}

#[test]
fn a_repository_cannot_loosen_the_policy() {
    // The repository's own settings say everything is allowed; the
    // organisation's policy is what counts.
    let env = repositories();
    env.write(
        "project/repos/team/.claude/settings.json",
        r#"{"allowedMcpServers": [{"serverUrl": "*"}], "deniedMcpServers": []}"#,
    );
    env.write(
        "project/repos/team/managed-settings.json",
        r#"{"deniedMcpServers": []}"#,
    );
    let out = env.run(&[
        "policy",
        "check",
        "--policy",
        "../org/policy.json",
        "repos/team",
    ]);
    assert_eq!(out.code, 1, "{out}");
    // And names from the file are escaped on the terminal.
    env.write(
        "project/repos/evil/.mcp.json",
        "{\"mcpServers\": {\"alpha\\u001b[2J\": {\"command\": \"x\"}, \"alpha\": {\"url\": \"https://a.example.invalid/\\u001b]0;x\", \"type\": \"http\"}}}",
    );
    let out = env.run(&[
        "policy",
        "check",
        "--policy",
        "../org/policy.json",
        "repos/evil",
    ]);
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'),
        "{out}"
    );
}

#[test]
fn managed_settings_that_do_not_parse_fail_list_as_they_stop_claude_code() {
    // Claude Code 2.1.332: `Managed settings document could not be parsed
    // as a JSON object; none of its settings are in effect.`, exit 1.
    let env = managed_env(Some("{\"deniedMcpServers\": [\n"), None, None);
    let out = env.run(&["list"]).expect_code(1);
    assert_snapshot!(out.stderr, @"
    error: failed to parse `[ROOT]/managed/managed-settings.json:2:1`: EOF while parsing a list

    hint: Claude Code stops with a configuration error for this file too; the other scopes are listed all the same
    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    ");
}
