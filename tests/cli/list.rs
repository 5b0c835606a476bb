use insta::assert_snapshot;

use crate::harness::TestEnv;

#[test]
fn list_with_nothing_configured() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["list", "--json"]), @r#"
    {
      "schema_version": 1,
      "servers": [],
      "warnings": [],
      "errors": []
    }
    ----- stderr -----
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    "#);
}

#[test]
fn local_beats_project_beats_user() {
    let env = TestEnv::new();
    env.write(
        "home/.claude/settings.json",
        r#"{"enabledMcpjsonServers": ["dup", "shared"]}"#,
    );
    for scope in ["user", "project", "local"] {
        env.run(&["add", "-s", scope, "dup", &format!("/bin/{scope}-cmd")])
            .expect_code(0);
    }
    env.run(&["add", "-s", "project", "shared", "node", "server.js"])
        .expect_code(0);
    env.run(&["add", "-s", "user", "shared", "node", "user.js"])
        .expect_code(0);
    assert_snapshot!(env.run(&["list"]), @"
    NAME    SCOPE    TRANSPORT  STATUS               COMMAND / URL
    dup     local    stdio                           /bin/local-cmd
    dup     project  stdio      shadowed by local    /bin/project-cmd
    shared  project  stdio      approved             node server.js
    dup     user     stdio      shadowed by local    /bin/user-cmd
    shared  user     stdio      shadowed by project  node user.js
    ----- stderr -----
    [exit status: 0]
    ");
}

#[test]
fn a_pending_project_server_does_not_shadow_a_user_one() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "db", "uvx", "mcp-server-postgres"])
        .expect_code(0);
    env.run(&["add", "-s", "user", "db", "uvx", "mcp-server-sqlite"])
        .expect_code(0);
    env.run(&["add", "-s", "project", "only-project", "node"])
        .expect_code(0);
    assert_snapshot!(env.run(&["list"]), @"
    NAME          SCOPE    TRANSPORT  STATUS            COMMAND / URL
    db            project  stdio      shadowed by user  uvx mcp-server-postgres
    only-project  project  stdio      pending approval  node
    db            user     stdio                        uvx mcp-server-sqlite
    ----- stderr -----
    [exit status: 0]
    ");
    let got = env.run(&["get", "db", "--json"]).expect_code(0).json();
    assert_eq!(got["scope"], "user");
}

#[test]
fn approval_states_follow_claude_settings() {
    let env = TestEnv::new();
    for name in ["approved", "rejected", "pending"] {
        env.run(&["add", "-s", "project", name, "node"])
            .expect_code(0);
    }
    env.write(
        "project/.claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["approved"], "disabledMcpjsonServers": ["rejected"]}"#,
    );
    assert_snapshot!(env.run(&["list", "-s", "project"]), @"
    NAME      SCOPE    TRANSPORT  STATUS            COMMAND / URL
    approved  project  stdio      approved          node
    rejected  project  stdio      rejected          node
    pending   project  stdio      pending approval  node
    ----- stderr -----
    [exit status: 0]
    ");
}

#[test]
fn enable_all_in_untrusted_committed_settings_does_not_approve() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "gh", "node"])
        .expect_code(0);
    env.write(
        "project/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"][0]["approval"], "pending");

    // Once the user trusted the project, its shared settings count.
    let key = env.key();
    env.write(
        "home/.claude.json",
        &format!(r#"{{"projects": {{"{key}": {{"hasTrustDialogAccepted": true}}}}}}"#),
    );
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"][0]["approval"], "approved");
}

#[test]
fn every_ancestor_mcp_json_is_read_and_nearer_wins() {
    let env = TestEnv::new();
    env.write(
        ".mcp.json",
        r#"{"mcpServers": {"a": {"command": "/far/a"}, "far": {"command": "/far/only"}}}"#,
    );
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "/near/a"}}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @"
    NAME  SCOPE    TRANSPORT  STATUS               COMMAND / URL
    a     project  stdio      pending approval     /near/a
    a     project  stdio      shadowed by project  /far/a
    far   project  stdio      pending approval     /far/only
    ----- stderr -----
    [exit status: 0]
    ");
}

#[test]
fn list_json_has_the_documented_shape_and_no_values() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "gh",
        "-e",
        "GITHUB_TOKEN=ghp_secretsecretsecretsecretsecretsecret",
        "--",
        "npx",
        "-y",
        "pkg",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "-s",
        "project",
        "-t",
        "http",
        "api",
        "https://api.example.com/mcp",
        "-H",
        "X-Api-Key: k_0123456789abcdef0123",
    ])
    .expect_code(0);
    let out = env.run(&["list", "--json"]);
    assert!(!out.stdout.contains("ghp_secret"));
    assert!(!out.stdout.contains("k_0123456789abcdef0123"));
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "servers": [
        {
          "name": "gh",
          "scope": "local",
          "transport": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "pkg"
          ],
          "url": null,
          "file": "[ROOT]/home/.claude.json",
          "shadowed": false,
          "shadowed_by": null,
          "approval": null,
          "status": "active",
          "reason": null,
          "env_names": [
            "GITHUB_TOKEN"
          ],
          "header_names": []
        },
        {
          "name": "api",
          "scope": "project",
          "transport": "http",
          "command": null,
          "args": null,
          "url": "https://api.example.com/mcp",
          "file": "[ROOT]/project/.mcp.json",
          "shadowed": false,
          "shadowed_by": null,
          "approval": "pending",
          "status": "pending",
          "reason": null,
          "env_names": [],
          "header_names": [
            "X-Api-Key"
          ]
        }
      ],
      "warnings": [],
      "errors": []
    }
    ----- stderr -----
    [exit status: 0]
    "#);
}

#[test]
fn entries_claude_code_would_skip_are_listed_with_a_warning() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"nocmd": {"args": []}, "weird": {"type": "bogus", "url": "x"}, "workspace": {"command": "x"}}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @r#"
    NAME       SCOPE    TRANSPORT  STATUS         COMMAND / URL
    nocmd      project  stdio      skipped
    weird      project  bogus      skipped
    workspace  project  stdio      reserved name  x
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `nocmd`: invalid MCP server config for "nocmd": command: expected string, received undefined
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `weird`: unknown MCP server type "bogus" for server "weird"
    warning: `[ROOT]/project/.mcp.json`: "workspace" is a reserved MCP server name and was not loaded
    [exit status: 0]
    "#);
}

/// Claude Code 2.1.332 reports such a file as an error and loads none of
/// it, so this is an error (exit 1) now, not a warning.
#[test]
fn a_servers_key_instead_of_mcp_servers_is_pointed_out() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"servers": {"a": {"command": "x"}}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @r#"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` has `servers` but no `mcpServers`: Claude Code loads none of its servers

    hint: Claude Code skips this file too and reads the others; it reports: mcpServers: Missing "mcpServers" — found "servers" instead. Claude Code reads MCP servers from the "mcpServers" key.
    hint: rename the top-level `servers` key to `mcpServers` (`servers` is VS Code's `.vscode/mcp.json` format)
    [exit status: 1]
    "#);
}

#[test]
fn an_oversized_mcp_json_is_skipped_like_claude_does() {
    let env = TestEnv::new();
    let padding = "x".repeat(2 * 1024 * 1024);
    env.write(
        "project/.mcp.json",
        &format!(r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "pad": "{padding}"}}"#),
    );
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: larger than 2 MiB; Claude Code skips it
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
}

#[test]
fn list_through_a_closed_pipe_exits_zero() {
    let env = TestEnv::new();
    for index in 0..50 {
        env.run(&[
            "add",
            "-s",
            "user",
            &format!("server-{index}"),
            "node",
            &"x".repeat(200),
        ])
        .expect_code(0);
    }
    let mut child = env
        .command(&env.project, &["list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
