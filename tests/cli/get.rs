use insta::assert_snapshot;

use crate::harness::TestEnv;

fn with_servers() -> TestEnv {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "gh",
        "-e",
        "GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "-e",
        "REF=${OTHER}",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "-s",
        "user",
        "gh",
        "--",
        "docker",
        "run",
        "-i",
        "ghcr.io/github/github-mcp-server",
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
        "Authorization: Bearer sk_live_0123456789abcdefXYZ",
        "-H",
        "X-Trace: ${TRACE}",
    ])
    .expect_code(0);
    env
}

#[test]
fn get_shows_the_winner_with_values_masked() {
    let env = with_servers();
    let out = env.run(&["get", "gh"]);
    assert_snapshot!(out, @"
    gh
      Scope:       local (private to you in this project)
      File:        `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
      Type:        stdio
      Command:     npx
      Args:        -y @modelcontextprotocol/server-github
      Environment: GITHUB_TOKEN=ghp_…2345
                   REF=${OTHER}

    Also defined in:
      user     `[ROOT]/home/.claude.json` (shadowed)
    ----- stderr -----
    [exit status: 0]
    ");
    assert!(
        !out.stdout
            .contains("ghp_0123456789abcdefghijABCDEFGHIJ012345")
    );
}

#[test]
fn get_masks_header_values_and_marks_pending_project_servers() {
    let env = with_servers();
    let out = env.run(&["get", "api"]);
    assert_snapshot!(out, @"
    api
      Scope:    project (shared via .mcp.json)
      File:     `[ROOT]/project/.mcp.json`
      Approval: pending (Claude Code asks before starting it)
      Type:     http
      URL:      https://api.example.com/mcp
      Headers:  Authorization: Bearer sk_l…fXYZ
                X-Trace: ${TRACE}
    ----- stderr -----
    [exit status: 0]
    ");
    assert!(!out.stdout.contains("sk_live_0123456789abcdefXYZ"));
}

#[test]
fn get_reveal_shows_values() {
    let env = with_servers();
    let out = env.run(&["get", "gh", "--reveal", "--json"]).expect_code(0);
    assert_eq!(
        out.json()["entry"]["env"]["GITHUB_TOKEN"],
        "ghp_0123456789abcdefghijABCDEFGHIJ012345"
    );
}

#[test]
fn get_json() {
    let env = with_servers();
    let out = env.run(&["get", "gh", "--json"]);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "name": "gh",
      "scope": "local",
      "file": "[ROOT]/home/.claude.json",
      "approval": null,
      "status": "active",
      "reason": null,
      "blocked": null,
      "transport": "stdio",
      "entry": {
        "type": "stdio",
        "command": "npx",
        "args": [
          "-y",
          "@modelcontextprotocol/server-github"
        ],
        "env": {
          "GITHUB_TOKEN": "ghp_…2345",
          "REF": "${OTHER}"
        }
      },
      "other_definitions": [
        {
          "scope": "user",
          "file": "[ROOT]/home/.claude.json",
          "approval": null,
          "status": "shadowed"
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
fn get_an_unknown_name_suggests_a_close_one() {
    let env = with_servers();
    assert_snapshot!(env.run(&["get", "gj"]), @"
    ----- stderr -----
    error: no MCP server named `gj`

    hint: a server with a similar name exists: `gh`
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["get", "nothing-like-it"]), @"
    ----- stderr -----
    error: no MCP server named `nothing-like-it`

    hint: configured servers: `api`, `gh`
    [exit status: 1]
    ");
}

#[test]
fn get_with_nothing_configured() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["get", "x"]), @"
    ----- stderr -----
    error: no MCP server named `x`

    hint: no MCP servers are configured here; add one with `mcpenv add NAME -- COMMAND`
    [exit status: 1]
    ");
}

/// `get` shows an entry Claude Code skips, marked, with its reason (Claude
/// Code's own `get` says it does not exist).
#[test]
fn get_marks_an_entry_claude_code_skips() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"remote": {"url": "https://example.com/mcp"}, "workspace": {"command": "x"}}}"#,
    );
    assert_snapshot!(env.run(&["get", "remote"]), @r#"
    remote
      Scope:  project (shared via .mcp.json)
      File:   `[ROOT]/project/.mcp.json`
      Status: skipped by Claude Code: MCP server "remote" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry
      Type:   none (so Claude Code reads it as stdio, which needs a `command`)
      URL:    https://example.com/mcp
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: Claude Code skips `remote`: MCP server "remote" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry
    [exit status: 0]
    "#);
    let got = env
        .run(&["get", "workspace", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(got["status"], "reserved");
    assert_eq!(
        got["reason"],
        r#""workspace" is a reserved MCP server name and was not loaded"#
    );
}
