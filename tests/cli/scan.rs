use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};

pub const PAT: &str = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12";
pub const STRIPE: &str = "sk_live_51HxQ2bK9vR3mWq7ZpT4nLc8Yd";
pub const DB_PASSWORD: &str = "s3cr3t-Passw0rd-7781";

fn assert_no_secret(out: &CommandOutput) {
    out.assert_no_secret(&[PAT, STRIPE, DB_PASSWORD]);
}

#[test]
fn scan_finds_secrets_in_every_scope_and_other_clients() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "-s",
        "user",
        "gh",
        "-e",
        &format!("GITHUB_TOKEN={PAT}"),
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "stripe",
        "--",
        "npx",
        "-y",
        "@stripe/mcp",
        &format!("--api-key={STRIPE}"),
    ])
    .expect_code(0);
    env.write(
        "project/.mcp.json",
        &format!(r#"{{"mcpServers": {{"db": {{"command": "npx", "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:{DB_PASSWORD}@db.internal:5432/prod"]}}, "clean": {{"command": "npx", "env": {{"GITHUB_TOKEN": "${{GITHUB_TOKEN}}"}}}}}}}}"#),
    );
    env.write("home/.cursor/mcp.json", &format!(r#"{{"mcpServers": {{"gh": {{"command": "npx", "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "{PAT}"}}}}}}}}"#));
    let out = env.run(&["scan"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    FILE                SCOPE    SERVER  FIELD                             RULE                   VALUE
    ~/.claude.json      local    stripe  args[2]                           stripe-key             sk_l…c8Yd
    .mcp.json           project  db      args[3]                           url-userinfo-password  s3cr…7781
    ~/.claude.json      user     gh      env.GITHUB_TOKEN                  github-pat             ghp_…3s12
    ~/.cursor/mcp.json  cursor   gh      env.GITHUB_PERSONAL_ACCESS_TOKEN  github-pat             ghp_…3s12
    ----- stderr -----
    Found 4 literal secrets in 3 files
    hint: move them into `.env` and leave `${VAR}` placeholders: `mcpenv extract` (or `mcpenv extract --all` for every scope)
    [exit status: 1]
    ");
}

#[test]
fn a_clean_config_passes() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "-s",
        "project",
        "gh",
        "-e",
        "GITHUB_TOKEN=${GITHUB_TOKEN}",
        "--",
        "npx",
        "-y",
        "pkg",
    ])
    .expect_code(0);
    assert_snapshot!(env.run(&["scan"]), @"
    ----- stderr -----
    No literal secrets found in 1 file
    [exit status: 0]
    ");
}

#[test]
fn scan_paths_reads_json_with_comments_and_toml() {
    let env = TestEnv::new();
    env.write(
        "configs/vscode.json",
        &format!("// VS Code\n{{\"servers\": {{\"gh\": {{\"type\": \"stdio\", \"command\": \"npx\", \"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"}},}}}}}}"),
    );
    env.write(
        "configs/codex/config.toml",
        &format!("[mcp_servers.stripe]\nurl = \"https://mcp.stripe.com\"\nhttp_headers = {{ Authorization = \"Bearer {STRIPE}\" }}\n"),
    );
    env.write("configs/broken.json", "{ not json");
    let out = env.run_in(&env.root, &["scan", "configs", "--json"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "findings": [
        {
          "file": "[ROOT]/configs/codex/config.toml",
          "scope": "codex",
          "project": null,
          "server": "stripe",
          "field": "headers.Authorization",
          "rule": "stripe-key",
          "value": "sk_l…c8Yd"
        },
        {
          "file": "[ROOT]/configs/vscode.json",
          "scope": "vscode",
          "project": null,
          "server": "gh",
          "field": "env.GITHUB_TOKEN",
          "rule": "github-pat",
          "value": "ghp_…3s12"
        }
      ],
      "files_scanned": 3,
      "warnings": [
        {
          "file": "[ROOT]/configs/broken.json",
          "message": "not scanned: Expected colon after the string or word in object property at line 1 column 7"
        }
      ]
    }
    ----- stderr -----
    warning: `[ROOT]/configs/broken.json`: not scanned: Expected colon after the string or word in object property at line 1 column 7
    Found 2 literal secrets in 3 files
    hint: move them into `.env` and leave `${VAR}` placeholders: `mcpenv extract` (or `mcpenv extract --all` for every scope)
    [exit status: 1]
    "#);
}

#[test]
fn placeholders_claude_code_never_expands_are_pointed_out() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "env": {"A": "$GITHUB_TOKEN", "B": "${env:LINEAR_KEY}", "C": "${TOKEN:-ok}"}}}}"#,
    );
    assert_snapshot!(env.run(&["scan"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: `gh` env.A: Claude Code never expands `$GITHUB_TOKEN`; use `${GITHUB_TOKEN}`
    warning: `[ROOT]/project/.mcp.json`: `gh` env.B: Claude Code never expands `${env:LINEAR_KEY}`; use `${LINEAR_KEY}`
    No literal secrets found in 1 file
    [exit status: 0]
    ");
}
