//! A file scan cannot parse fails the scan and is scanned as text: a hook
//! must never pass a truncated `.mcp.json` holding a token because nobody
//! could read it as config. Every way of running the scan agrees: the
//! hook's `--only-paths`, a scan of every scope, `--json`, SARIF and
//! `doctor`.

use insta::assert_snapshot;
use serde_json::Value;

use crate::harness::{CommandOutput, TestEnv};
use crate::scan::{DB_PASSWORD, PAT, STRIPE};

fn assert_no_secret(out: &CommandOutput) {
    out.assert_no_secret(&[PAT, STRIPE, DB_PASSWORD]);
}

/// A `.mcp.json` cut off in the middle of its token's entry, as an
/// interrupted editor or a bad merge leaves it.
fn truncated_mcp_json(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &format!(
            "{{\n  \"mcpServers\": {{\n    \"gh\": {{\n      \"command\": \"npx\",\n      \"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"\n"
        ),
    );
}

#[test]
fn the_hook_fails_on_a_truncated_config_and_reports_its_secret() {
    let env = TestEnv::new();
    truncated_mcp_json(&env);
    let out = env.run(&["scan", "--only-paths", ".mcp.json"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    FILE            SCOPE    SERVER  FIELD  RULE        VALUE
    .mcp.json:5:32  project  -       -      github-pat  ghp_…3s12
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:6:1`: EOF while parsing an object; scanned its text for secrets instead
    Found 1 literal secret in 1 of 1 file: 1 in project scope
    hint: fix `.mcp.json:6:1` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: in `.mcp.json` (Claude Code): write `${NAME}` in place of each value and keep the value in `.env`
    [exit status: 1]
    ");
    // Without a secret in it, a broken file fails the hook all the same.
    env.write("project/.mcp.json", r#"{"mcpServers": {"#);
    assert_snapshot!(env.run(&["scan", "--only-paths", ".mcp.json"]), @"
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:1:17`: EOF while parsing an object; scanned its text for secrets instead
    No literal secrets found in 1 file
    hint: fix `.mcp.json:1:17` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    [exit status: 1]
    ");
}

#[test]
fn every_way_of_scanning_agrees_on_a_truncated_config() {
    let env = TestEnv::new();
    truncated_mcp_json(&env);
    // Every scope (the inventory's reading of `.mcp.json`) says the same
    // as the hook.
    let hook = env.run(&["scan", "--only-paths", ".mcp.json"]);
    let every_scope = env.run(&["scan"]);
    assert_no_secret(&every_scope);
    assert_eq!(every_scope.to_string(), hook.to_string());

    let out = env.run(&["scan", "--json"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "findings": [
        {
          "file": "[ROOT]/project/.mcp.json",
          "scope": "project",
          "project": null,
          "server": null,
          "field": null,
          "rule": "github-pat",
          "value": "ghp_…3s12",
          "line": 5,
          "column": 32
        }
      ],
      "files_scanned": 1,
      "unparsed": [
        {
          "file": "[ROOT]/project/.mcp.json",
          "line": 6,
          "column": 1,
          "message": "EOF while parsing an object"
        }
      ],
      "warnings": []
    }
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:6:1`: EOF while parsing an object; scanned its text for secrets instead
    Found 1 literal secret in 1 of 1 file: 1 in project scope
    hint: fix `.mcp.json:6:1` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: in `.mcp.json` (Claude Code): write `${NAME}` in place of each value and keep the value in `.env`
    [exit status: 1]
    "#);
    assert_eq!(
        env.run(&["scan", "--json", ".mcp.json"]).to_string(),
        out.to_string()
    );

    let out = env.run(&["scan", "--format", "sarif"]);
    assert_no_secret(&out);
    assert_eq!(out.code, 1, "{out}");
    let log = out.json();
    let results: Vec<(&str, &str, &Value)> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            (
                result["ruleId"].as_str().unwrap(),
                result["message"]["text"].as_str().unwrap(),
                &result["locations"][0]["physicalLocation"]["region"],
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                "unparsed-config",
                "`.mcp.json` does not parse (EOF while parsing an object): only its text was scanned for secrets",
                &serde_json::json!({"startLine": 6, "startColumn": 1, "endLine": 6, "endColumn": 1}),
            ),
            (
                "github-pat",
                "`.mcp.json` does not parse; its text holds a literal GitHub classic PAT (`ghp_…3s12`)",
                &serde_json::json!({"startLine": 5, "startColumn": 32, "endLine": 5, "endColumn": 72}),
            ),
        ]
    );

    let out = env.run(&["doctor"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    Environment: 1 problem
    error: `.mcp.json`: failed to parse `[ROOT]/project/.mcp.json:6:1`: EOF while parsing an object
      hint: Claude Code loads none of its servers (it reports "MCP config is not a valid JSON (line 6, column 1)"); fix the file by hand

    Secrets: 2 problems
    error: failed to parse `[ROOT]/project/.mcp.json:6:1`: EOF while parsing an object; scanned its text for secrets instead
    FILE            SCOPE    SERVER  FIELD  RULE        VALUE
    .mcp.json:5:32  project  -       -      github-pat  ghp_…3s12

    3 problems: fix what Environment lists (`mcpenv onboard` sets missing values); see the secrets with `mcpenv scan`
    ----- stderr -----
    [exit status: 1]
    "#);
    let doctor = env.run(&["doctor", "--json"]).json();
    assert_eq!(doctor["ok"], false);
    assert_eq!(doctor["scan"]["findings"][0]["rule"], "github-pat");
    assert_eq!(doctor["scan"]["unparsed"][0]["line"], 6);
}

#[test]
fn other_clients_files_and_dotenv_text_are_scanned_when_they_do_not_parse() {
    let env = TestEnv::new();
    // Cursor's JSON with comments, cut off.
    env.write(
        "project/.cursor/mcp.json",
        &format!("// Cursor\n{{\"mcpServers\": {{\"stripe\": {{\"command\": \"npx\", \"args\": [\"--api-key={STRIPE}\""),
    );
    // Codex's TOML with an unterminated string: the password has a
    // secret's name but no token's shape.
    env.write(
        "project/.codex/config.toml",
        &format!(
            "[mcp_servers.db]\ncommand = \"dbhub\"\nenv = {{ DB_PASSWORD = \"{DB_PASSWORD} }}\n"
        ),
    );
    // A dotenv file handed to scan is no config either.
    env.write("project/.env", &format!("export GITHUB_TOKEN={PAT}\n"));
    // Not UTF-8: unreadable as text by a parser, a token all the same.
    let mut bytes =
        b"{\"mcpServers\": {\"gh\": {\"env\": {\"X\": \"\xff\"}, \"args\": [\"".to_vec();
    bytes.extend_from_slice(PAT.as_bytes());
    std::fs::write(env.project.join("latin1.json"), bytes).unwrap();
    let out = env.run(&[
        "scan",
        "--only-paths",
        ".cursor/mcp.json",
        ".codex/config.toml",
        ".env",
        "latin1.json",
    ]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    FILE                     SCOPE        SERVER  FIELD  RULE            VALUE
    .cursor/mcp.json:2:66    cursor       -       -      stripe-key      sk_l…c8Yd
    .codex/config.toml:3:24  codex        -       -      generic-secret  s3cr…7781
    .env:1:21                claude-code  -       -      github-pat      ghp_…3s12
    latin1.json:1:53         claude-code  -       -      github-pat      ghp_…3s12
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.cursor/mcp.json:2:101`: Unterminated array; scanned its text for secrets instead
    error: failed to parse `[ROOT]/project/.codex/config.toml:3:46`: unclosed inline table, expected `}`; scanned its text for secrets instead
    error: failed to parse `[ROOT]/project/.env:1:1`: Unexpected word; scanned its text for secrets instead
    error: failed to parse `[ROOT]/project/latin1.json:1:38`: not UTF-8 text; scanned its text for secrets instead
    Found 4 literal secrets in 4 of 4 files: 1 in Cursor, 1 in Codex, 2 in Claude Code
    hint: fix `.cursor/mcp.json:2:101` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: fix `.codex/config.toml:3:46` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: fix `.env:1:1` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: fix `latin1.json:1:38` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: in `.cursor/mcp.json` (Cursor): write `${env:NAME}` in place of each value and set `NAME` in the environment Cursor starts from
    hint: in `.codex/config.toml` (Codex): remove each value and name its variable instead: `env_vars = ["NAME"]`, `env_http_headers` or `bearer_token_env_var`
    hint: in `.env`, `latin1.json` (Claude Code): write `${NAME}` in place of each value and keep the value in `.env`
    [exit status: 1]
    "#);
}
