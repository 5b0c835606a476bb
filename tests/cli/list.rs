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
      "errors": [],
      "managed": []
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
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust only-project`
    hint: `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
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
    // Claude Code 2.1.332 reads those approvals in a trusted folder only.
    env.trust_project();
    assert_snapshot!(env.run(&["list", "-s", "project"]), @"
    NAME      SCOPE    TRANSPORT  STATUS            COMMAND / URL
    approved  project  stdio      approved          node
    rejected  project  stdio      rejected          node
    pending   project  stdio      pending approval  node
    ----- stderr -----
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve pending`
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
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust a far`
    hint: `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
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
          "header_names": [],
          "approve_command": null,
          "blocked": null
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
          ],
          "approve_command": "mcpenv approve --trust api",
          "blocked": null
        }
      ],
      "warnings": [],
      "errors": [],
      "managed": []
    }
    ----- stderr -----
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust api`
    hint: `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
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
    weird      project  bogus      skipped        x
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

/// The entries Claude Code 2.1.332 skips, each with its words for why;
/// a skipped entry never takes a name from another scope.
#[test]
fn skipped_entries_are_marked_and_never_shadow() {
    let env = TestEnv::new();
    env.write(
        "home/.claude.json",
        &format!(
            r#"{{"mcpServers": {{"a": {{"command": "/bin/user-a"}}}}, "projects": {{"{}": {{"mcpServers": {{"a": {{"url": "https://example.com/mcp"}}}}}}}}}}"#,
            env.key()
        ),
    );
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "urlnotype": {"url": "https://example.com/mcp"},
  "nocmd": {"args": ["x"]},
  "sdk": {"type": "sdk", "name": "in-process"},
  "ok": {"command": "node", "args": ["server.js"]}
}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @r#"
    NAME       SCOPE    TRANSPORT  STATUS            COMMAND / URL
    a          local    no type    skipped           https://example.com/mcp
    urlnotype  project  no type    skipped           https://example.com/mcp
    nocmd      project  stdio      skipped
    sdk        project  sdk        skipped
    ok         project  stdio      pending approval  node server.js
    a          user     stdio                        /bin/user-a
    ----- stderr -----
    warning: `[ROOT]/home/.claude.json`: Claude Code skips `a`: MCP server "a" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `urlnotype`: MCP server "urlnotype" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `nocmd`: invalid MCP server config for "nocmd": command: expected string, received undefined
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `sdk`: MCP server "sdk" declares type "sdk", which only an SDK host application can register
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust ok`
    hint: `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    [exit status: 0]
    "#);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let rows: Vec<(String, String, String)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| {
            (
                server["name"].as_str().unwrap().to_string(),
                server["status"].as_str().unwrap().to_string(),
                server["reason"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    let expected = [
        ("a", "skipped", r#"MCP server "a" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry"#),
        ("urlnotype", "skipped", r#"MCP server "urlnotype" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry"#),
        ("nocmd", "skipped", r#"invalid MCP server config for "nocmd": command: expected string, received undefined"#),
        ("sdk", "skipped", r#"MCP server "sdk" declares type "sdk", which only an SDK host application can register"#),
        ("ok", "pending", "-"),
        ("a", "active", "-"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(rows, expected);
    // The user's definition is the one in effect.
    let got = env.run(&["get", "a", "--json"]).expect_code(0).json();
    assert_eq!(
        (got["scope"].as_str(), got["status"].as_str()),
        (Some("user"), Some("active"))
    );
}

/// What the `/mcp` toggle writes: `projects["<key>"].disabledMcpServers`.
/// Claude Code 2.1.332 lists such a server as `⊘ Disabled for this project
/// (re-enable via /mcp)` and never starts it; the names compare as written.
#[test]
fn disabled_servers_are_shown_and_never_started() {
    let env = TestEnv::new();
    let marker = env.root.join("started");
    let starts = format!("touch '{}'", marker.display());
    env.write(
        "home/.claude.json",
        &serde_json::json!({
            "mcpServers": {
                "off": {"command": "sh", "args": ["-c", starts]},
                "my.server": {"command": "sh", "args": ["-c", starts]},
            },
            "projects": {env.key(): {"disabledMcpServers": ["off", "my_server"]}},
        })
        .to_string(),
    );
    assert_snapshot!(env.run(&["list"]), @r#"
    NAME       SCOPE  TRANSPORT  STATUS                     COMMAND / URL
    off        user   stdio      disabled for this project  sh -c "touch '[ROOT]/started'"
    my.server  user   stdio                                 sh -c "touch '[ROOT]/started'"
    ----- stderr -----
    [exit status: 0]
    "#);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"][0]["status"], "disabled");
    assert_eq!(listed["servers"][1]["status"], "active");
    assert_snapshot!(env.run(&["get", "off"]), @r#"
    off
      Scope:   user (available in all your projects)
      File:    `[ROOT]/home/.claude.json`
      Status:  disabled for this project (`disabledMcpServers`): Claude Code lists it and never starts it; re-enable it with `/mcp`
      Type:    stdio
      Command: sh
      Args:    -c "touch '[ROOT]/started'"
    ----- stderr -----
    [exit status: 0]
    "#);
    let checked = env.run(&["check", "--json"]).json();
    assert_eq!(checked["servers"][0]["status"], "disabled");
    assert_eq!(checked["servers"][0]["ok"], true);
    let out = env.run(&["probe", "off", "--timeout", "5"]);
    assert!(
        out.stderr.contains("warning: skipped `off`: disabled for this project in Claude Code (`disabledMcpServers`; `/mcp` re-enables it); not started"),
        "{out}"
    );
    assert!(!marker.exists(), "a disabled server was started");
}

/// A trailing comma in `.mcp.json`: Claude Code reports `MCP config is not
/// a valid JSON (line 1, column 52)` for it and lists the other scopes.
#[test]
fn a_project_file_that_does_not_parse_leaves_the_other_scopes_listed() {
    let env = TestEnv::new();
    env.write(
        "home/.claude.json",
        r#"{"mcpServers": {"u1": {"command": "/bin/u1"}}}"#,
    );
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "/nonexistent/a"},}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @"
    NAME  SCOPE  TRANSPORT  STATUS  COMMAND / URL
    u1    user   stdio              /bin/u1
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:1:52`: trailing comma

    hint: Claude Code skips this file too and reads the others; it reports: MCP config is not a valid JSON (line 1, column 52)
    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    [exit status: 1]
    ");
    let listed = env.run(&["list", "--json"]).expect_code(1).json();
    assert_eq!(listed["servers"][0]["name"], "u1");
    assert_eq!(listed["errors"][0]["line"], 1);
    assert_eq!(listed["errors"][0]["column"], 52);
    assert_eq!(
        listed["errors"][0]["scopes"],
        serde_json::json!(["project"])
    );
    // Only the user scope: the broken project file is not its concern.
    env.run(&["list", "-s", "user"]).expect_code(0);
    // get still finds the user's server, and says what was not read.
    let out = env.run(&["get", "u1"]).expect_code(1);
    assert!(out.stdout.contains("Command: /bin/u1"), "{out}");
    let out = env.run(&["get", "a"]).expect_code(1);
    assert!(
        out.stderr.contains("hint: it may be in a file Claude Code does not load: failed to parse `[ROOT]/project/.mcp.json:1:52`: trailing comma"),
        "{out}"
    );
}

/// Servers at the top level, without `mcpServers`: Claude Code 2.1.332
/// reports `mcpServers: Invalid input: expected record, received undefined`
/// and loads none of them; `{}` gets the same report.
#[test]
fn top_level_servers_are_an_error_as_in_claude_code() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"continuum": {"command": "continuum", "args": ["mcp"]}, "other": {"url": "https://x"}}"#,
    );
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` lists servers at the top level (`continuum`, `other`) without `mcpServers`: Claude Code loads none of them

    hint: Claude Code skips this file too and reads the others; it reports: mcpServers: Invalid input: expected record, received undefined
    hint: move them into a top-level `\"mcpServers\": { … }` object
    [exit status: 1]
    ");
    env.write("project/.mcp.json", "{}");
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` has no `mcpServers` object: Claude Code reports it as an error

    hint: Claude Code skips this file too and reads the others; it reports: mcpServers: Invalid input: expected record, received undefined
    hint: add `\"mcpServers\": {}` to it, or delete the file
    [exit status: 1]
    ");
    // An empty file is no servers to Claude Code, silently; a warning here.
    env.write("project/.mcp.json", "");
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: is empty: Claude Code reads it as no servers; mcpenv does not write to it until it holds JSON
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
}
