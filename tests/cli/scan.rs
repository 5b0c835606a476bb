use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};

pub const PAT: &str = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12";
pub const STRIPE: &str = "sk_live_51HxQ2bK9vR3mWq7ZpT4nLc8Yd";
pub const DB_PASSWORD: &str = "s3cr3t-Passw0rd-7781";

/// A user-scope server `gh` with [`PAT`] as `GITHUB_TOKEN`.
pub fn add_user_github_token(env: &TestEnv) {
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
}

fn assert_no_secret(out: &CommandOutput) {
    out.assert_no_secret(&[PAT, STRIPE, DB_PASSWORD]);
}

#[test]
fn scan_finds_secrets_in_every_scope_and_other_clients() {
    let env = TestEnv::new();
    add_user_github_token(&env);
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
    Found 4 literal secrets in 3 of 3 files: 1 in local scope, 1 in project scope, 1 in user scope, 1 in Cursor
    hint: move them into `.env` (user-scope ones into `~/.config/mcpenv/.env`) and leave `${VAR}` placeholders: `mcpenv extract --all`
    hint: in `~/.cursor/mcp.json` (Cursor): write `${env:NAME}` in place of each value and set `NAME` in the environment Cursor starts from
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
          "value": "sk_l…c8Yd",
          "line": 3,
          "column": 42
        },
        {
          "file": "[ROOT]/configs/vscode.json",
          "scope": "vscode",
          "project": null,
          "server": "gh",
          "field": "env.GITHUB_TOKEN",
          "rule": "github-pat",
          "value": "ghp_…3s12",
          "line": 2,
          "column": 81
        }
      ],
      "files_scanned": 3,
      "unparsed": [
        {
          "file": "[ROOT]/configs/broken.json",
          "line": 1,
          "column": 7,
          "message": "Expected colon after the string or word in object property"
        }
      ],
      "warnings": []
    }
    ----- stderr -----
    error: failed to parse `[ROOT]/configs/broken.json:1:7`: Expected colon after the string or word in object property; scanned its text for secrets instead
    Found 2 literal secrets in 2 of 3 files: 1 in Codex, 1 in VS Code
    hint: fix `configs/broken.json:1:7` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses
    hint: in `configs/codex/config.toml` (Codex): remove each value and name its variable instead: `env_vars = ["NAME"]`, `env_http_headers` or `bearer_token_env_var`
    hint: in `configs/vscode.json` (VS Code): write `${env:NAME}` (or `${input:id}` with an `inputs` entry) in place of each value
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

#[test]
fn scan_paths_knows_each_client_by_its_path_and_uses_its_placeholders() {
    let env = TestEnv::new();
    // Cursor's own form passes; Claude Code's `${NAME}` is what Cursor
    // never expands.
    env.write(
        "project/.cursor/mcp.json",
        &format!(r#"{{"mcpServers": {{"gh": {{"command": "npx", "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "${{env:GITHUB_PERSONAL_ACCESS_TOKEN}}", "LINEAR": "${{LINEAR_KEY}}", "ROOT": "${{workspaceFolder}}"}}}}, "stripe": {{"command": "npx", "args": ["--api-key={STRIPE}"]}}}}}}"#),
    );
    env.write(
        "project/.gemini/settings.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "env": {"A": "$GITHUB_TOKEN", "B": "${env:LINEAR_KEY}"}}}}"#,
    );
    env.write(
        "project/.codex/config.toml",
        "[mcp_servers.gh]\ncommand = \"npx\"\nenv = { GITHUB_TOKEN = \"${GITHUB_TOKEN}\" }\n",
    );
    let out = env.run(&["scan", "."]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    FILE              SCOPE   SERVER  FIELD    RULE        VALUE
    .cursor/mcp.json  cursor  stripe  args[0]  stripe-key  sk_l…c8Yd
    ----- stderr -----
    warning: `[ROOT]/project/.codex/config.toml`: `gh` env.GITHUB_TOKEN: Codex never expands `${GITHUB_TOKEN}`; the server receives it as written; forward the variable with `env_vars = ["GITHUB_TOKEN"]`
    warning: `[ROOT]/project/.cursor/mcp.json`: `gh` env.LINEAR: Cursor never expands `${LINEAR_KEY}`; use `${env:LINEAR_KEY}`
    warning: `[ROOT]/project/.gemini/settings.json`: `gh` env.B: Gemini CLI never expands `${env:LINEAR_KEY}`; use `${LINEAR_KEY}`
    Found 1 literal secret in 1 of 3 files: 1 in Cursor
    hint: in `.cursor/mcp.json` (Cursor): write `${env:NAME}` in place of each value and set `NAME` in the environment Cursor starts from
    [exit status: 1]
    "#);
}

#[test]
fn the_hint_names_the_extract_command_for_the_scopes_found() {
    let env = TestEnv::new();
    env.run(&["add", "stripe", "--", "npx", &format!("--api-key={STRIPE}")])
        .expect_code(0);
    assert_snapshot!(env.run(&["scan"]), @"
    FILE            SCOPE  SERVER  FIELD    RULE        VALUE
    ~/.claude.json  local  stripe  args[0]  stripe-key  sk_l…c8Yd
    ----- stderr -----
    Found 1 literal secret in 1 of 1 file: 1 in local scope
    hint: move them into `.env` and leave `${VAR}` placeholders: `mcpenv extract -s local`
    [exit status: 1]
    ");
    // The command the hint names moves it.
    env.run(&["extract", "-s", "local"]).expect_code(0);
    env.run(&["scan"]).expect_code(0);

    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"clean": {"command": "npx"}}}"#,
    );
    add_user_github_token(&env);
    let out = env.run(&["scan"]);
    assert_no_secret(&out);
    assert_snapshot!(out.stderr, @"
    Found 1 literal secret in 1 of 2 files: 1 in user scope
    hint: move them into your store `~/.config/mcpenv/.env` and leave `${VAR}` placeholders: `mcpenv extract -s user`
    ");
}

#[test]
fn json_and_another_format_are_a_usage_error() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["scan", "--json", "--format", "sarif"]), @r#"
    {
      "schema_version": 1,
      "error": {
        "message": "`--json` conflicts with `--format sarif`",
        "causes": [],
        "hint": "keep one of them: `--json` is `--format json`",
        "kind": "usage",
        "file": null,
        "line": null,
        "column": null
      }
    }
    ----- stderr -----
    [exit status: 2]
    "#);
    env.run(&["scan", "--json", "--format", "json"])
        .expect_code(0);
}

/// What `mcpenv scan ARGS` opened, by `strace`; `None` (and a note) where
/// strace is missing or not permitted.
pub fn opened_files(env: &TestEnv, args: &[&str]) -> Option<(CommandOutput, Vec<String>)> {
    let trace = env.root.join("trace.txt");
    let command = env.command(&env.project, args);
    let program = command.get_program().to_owned();
    let mut traced = std::process::Command::new("strace");
    traced
        .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&trace)
        .arg(program)
        .args(command.get_args())
        .current_dir(&env.project)
        .env_clear()
        .envs(
            command
                .get_envs()
                .filter_map(|(key, value)| Some((key.to_owned(), value?.to_owned()))),
        );
    let Ok(output) = traced.output() else {
        crate::skips::skip("`strace` is not installed: not checking which files scan opens");
        return None;
    };
    let Ok(text) = std::fs::read_to_string(&trace) else {
        crate::skips::skip("strace could not trace (ptrace not permitted?); skipping");
        return None;
    };
    let opened = text
        .lines()
        .filter_map(|line| line.split('"').nth(1).map(str::to_string))
        .collect();
    Some((CommandOutput::new(output, &env.root), opened))
}

#[test]
fn scan_with_paths_opens_nothing_else_of_home() {
    let env = TestEnv::new();
    // A private local-scope secret, in this very project.
    env.run(&["add", "stripe", "--", "npx", &format!("--api-key={STRIPE}")])
        .expect_code(0);
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}"#,
    );
    for args in [
        &["scan", ".mcp.json"][..],
        &["scan", "--format", "sarif", "nonexistent.json"],
        &["scan", "--only-paths"],
    ] {
        let Some((out, opened)) = opened_files(&env, args) else {
            return;
        };
        let home = env.home.display().to_string();
        let private: Vec<&String> = opened
            .iter()
            .filter(|path| path.starts_with(&home))
            .collect();
        assert!(private.is_empty(), "`{args:?}` opened {private:?}:\n{out}");
        assert_ne!(out.code, 101, "{out}");
    }
    assert_snapshot!(env.run(&["scan", "--only-paths"]), @"
    ----- stderr -----
    No literal secrets found in 0 files
    [exit status: 0]
    ");
}

#[test]
fn a_hook_never_follows_a_committed_link_to_a_private_file() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    // A `.mcp.json` that is a link to the private `~/.claude.json`.
    std::os::unix::fs::symlink(env.home.join(".claude.json"), env.project.join(".mcp.json"))
        .unwrap();
    let out = env.run(&["scan", "--only-paths", ".mcp.json"]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: a symbolic link: not followed, git commits the link and not the file it points to
    No literal secrets found in 0 files
    [exit status: 0]
    ");
}

#[test]
fn a_committed_claude_desktop_file_is_claude_desktops_with_its_advice() {
    let env = TestEnv::new();
    env.write(
        "project/config/claude_desktop_config.json",
        &format!(r#"{{"mcpServers": {{"gh": {{"command": "npx", "env": {{"GITHUB_TOKEN": "{PAT}"}}}}}}}}"#),
    );
    let out = env
        .run(&["scan", "config/claude_desktop_config.json"])
        .expect_code(1);
    assert_no_secret(&out);
    // Claude Desktop passes `${NAME}` on as written: not Claude Code's advice.
    assert!(
        out.stdout.contains("claude-desktop")
            && out
                .stderr
                .contains("(Claude Desktop): Claude Desktop expands no variables")
            && !out.stderr.contains("write `${NAME}`"),
        "{out}"
    );
}

/// A hint names five files of a client, then how many more: a scan of a
/// folder of thousands stays a screen, not a 150 KB line.
#[test]
fn a_clients_hint_names_five_files_then_how_many_more() {
    let env = TestEnv::new();
    for index in 0..7 {
        env.write(
            &format!("project/configs/c{index}/.cursor/mcp.json"),
            r#"{"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": "ghp_R2x9Kf8LmQ4vT7nB3sD6hJ1wY5pZ0cA3s12E"}}}}"#,
        );
    }
    let out = env.run(&["scan", "configs"]);
    let hint = out
        .stderr
        .lines()
        .find(|line| line.starts_with("hint: in "))
        .unwrap_or_else(|| panic!("{out}"));
    assert_snapshot!(hint, @"hint: in `configs/c0/.cursor/mcp.json`, `configs/c1/.cursor/mcp.json`, `configs/c2/.cursor/mcp.json`, `configs/c3/.cursor/mcp.json`, `configs/c4/.cursor/mcp.json` and 2 more (Cursor): write `${env:NAME}` in place of each value and set `NAME` in the environment Cursor starts from");
}
