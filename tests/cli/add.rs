use base64::Engine as _;
use insta::assert_snapshot;

use crate::harness::TestEnv;
use serde_json::Value;

#[test]
fn add_local_creates_claude_json_with_the_project_entry() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "gh",
        "-e",
        "GITHUB_TOKEN=${GITHUB_TOKEN}",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Added stdio MCP server `gh` in local scope
    Created `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "projects": {
        "[ROOT]/project": {
          "allowedTools": [],
          "mcpContextUris": [],
          "mcpServers": {
            "gh": {
              "type": "stdio",
              "command": "npx",
              "args": [
                "-y",
                "@modelcontextprotocol/server-github"
              ],
              "env": {
                "GITHUB_TOKEN": "${GITHUB_TOKEN}"
              }
            }
          },
          "enabledMcpjsonServers": [],
          "disabledMcpjsonServers": [],
          "hasTrustDialogAccepted": false,
          "projectOnboardingSeenCount": 0,
          "hasClaudeMdExternalIncludesApproved": false,
          "hasClaudeMdExternalIncludesWarningShown": false
        }
      }
    }
    "#);
    assert_eq!(env.mode("home/.claude.json"), 0o600);
}

#[test]
fn add_project_writes_mcp_json_at_the_repository_root() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join("sub/deep")).unwrap();
    let out = env.run_in(
        &env.project.join("sub/deep"),
        &[
            "add",
            "-s",
            "project",
            "-t",
            "http",
            "api",
            "https://api.example.com/mcp",
            "-H",
            "Authorization: Bearer ${API_TOKEN}",
        ],
    );
    assert_snapshot!(out, @"
    ----- stderr -----
    Added http MCP server `api` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust api`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "api": {
          "type": "http",
          "url": "https://api.example.com/mcp",
          "headers": {
            "Authorization": "Bearer ${API_TOKEN}"
          }
        }
      }
    }
    "#);
    assert!(!env.project.join("sub/deep/.mcp.json").exists());
}

#[test]
fn add_project_prefers_the_nearest_existing_mcp_json() {
    let env = TestEnv::new();
    env.write("project/sub/.mcp.json", "{\n  \"mcpServers\": {}\n}");
    std::fs::create_dir_all(env.project.join("sub/deep")).unwrap();
    env.run_in(
        &env.project.join("sub/deep"),
        &["add", "-s", "project", "x", "node"],
    )
    .expect_code(0);
    assert_snapshot!(env.read("project/sub/.mcp.json"), @r#"
    {
      "mcpServers": {
        "x": {
          "type": "stdio",
          "command": "node",
          "args": [],
          "env": {}
        }
      }
    }
    "#);
    assert!(!env.project.join(".mcp.json").exists());
}

#[test]
fn add_project_outside_git_writes_in_the_working_directory() {
    let env = TestEnv::bare();
    env.run(&["add", "-s", "project", "x", "node"])
        .expect_code(0);
    assert!(env.project.join(".mcp.json").is_file());
}

#[test]
fn add_user_writes_the_top_level_servers() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "-s",
        "user",
        "-t",
        "sse",
        "events",
        "https://example.com/sse",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Added sse MCP server `events` in user scope
    Created `[ROOT]/home/.claude.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "mcpServers": {
        "events": {
          "type": "sse",
          "url": "https://example.com/sse"
        }
      }
    }
    "#);
}

#[test]
fn add_stdio_without_args_keeps_empty_args_and_env() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "plain", "/usr/local/bin/server"])
        .expect_code(0);
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "plain": {
          "type": "stdio",
          "command": "/usr/local/bin/server",
          "args": [],
          "env": {}
        }
      }
    }
    "#);
}

#[test]
fn add_with_project_dir_acts_there() {
    let env = TestEnv::new();
    let out = env.run_in(
        &env.root,
        &["-C", "project", "add", "-s", "project", "x", "node"],
    );
    assert_snapshot!(out, @"
    ----- stderr -----
    Added stdio MCP server `x` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv -C project approve --trust x`
    [exit status: 0]
    ");
    assert!(env.project.join(".mcp.json").is_file());
}

#[test]
fn add_uses_claude_config_dir() {
    let mut env = TestEnv::new();
    env.set_env("CLAUDE_CONFIG_DIR", env.root.join("cfg"));
    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    assert!(env.root.join("cfg/.claude.json").is_file());
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn a_duplicate_in_the_same_scope_fails_and_replace_replaces() {
    let env = TestEnv::new();
    env.run(&["add", "x", "node"]).expect_code(0);
    let before = env.bytes("home/.claude.json");
    let out = env.run(&["add", "x", "python3"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: MCP server `x` already exists in local scope (`[ROOT]/home/.claude.json`)

    hint: replace it with `--replace`, or remove it first: `mcpenv remove x -s local`
    [exit status: 1]
    ");
    assert_eq!(env.bytes("home/.claude.json"), before);

    env.run(&["add", "--replace", "x", "python3"])
        .expect_code(0);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"][0]["command"], "python3");
}

#[test]
fn the_same_name_may_live_in_several_scopes() {
    let env = TestEnv::new();
    for scope in ["local", "project", "user"] {
        env.run(&["add", "-s", scope, "dup", "node"]).expect_code(0);
    }
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"].as_array().unwrap().len(), 3);
}

#[test]
fn a_url_given_as_a_stdio_command_warns() {
    let env = TestEnv::new();
    // Only with `-t stdio`: without it a URL is an http server (tests/cli/habits.rs).
    let out = env.run(&["add", "-t", "stdio", "remote", "https://example.com/mcp"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `https://example.com/mcp` looks like a URL but was added as a stdio command; for a remote server use `-t http` (or `-t sse`)
    Added stdio MCP server `remote` in local scope
    Created `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
}

#[test]
fn add_json_normalises_the_entry_like_claude() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add-json",
        "-s",
        "project",
        "node-server",
        r#"{"env":{"X":"1"},"args":["a.js"],"command":"node","type":"stdio","timeout":5000,"extra":true}"#,
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: kept keys that Claude Code does not use: `extra`
    Added stdio MCP server `node-server` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust node-server`
    [exit status: 0]
    ");
    env.run(&[
        "add-json",
        "-s",
        "project",
        "web",
        r#"{"type":"streamable-http","url":"https://x.test/mcp"}"#,
    ])
    .expect_code(0);
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "node-server": {
          "type": "stdio",
          "command": "node",
          "args": [
            "a.js"
          ],
          "env": {
            "X": "1"
          },
          "timeout": 5000,
          "extra": true
        },
        "web": {
          "type": "http",
          "url": "https://x.test/mcp"
        }
      }
    }
    "#);
}

#[test]
fn add_json_prints_json_when_asked() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add-json",
        "--json",
        "-q",
        "web",
        r#"{"type":"http","url":"https://x.test/mcp"}"#,
    ]);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "name": "web",
      "scope": "local",
      "transport": "http",
      "file": "[ROOT]/home/.claude.json",
      "created": true,
      "replaced": false,
      "warnings": [],
      "moves": [],
      "env_written": [],
      "template": null,
      "still_missing": []
    }
    ----- stderr -----
    [exit status: 0]
    "#);
}

#[test]
fn a_remote_header_behind_a_credential_name_is_added_with_a_warning() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "-s",
        "user",
        "-t",
        "http",
        "registry",
        "https://registry.example.com/mcp",
        "-H",
        "Authorization: Bearer ${NPM_TOKEN}",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: Claude Code 2.1.332 sends `${NPM_TOKEN}` empty to remote servers; use another variable name, e.g. `${REGISTRY_NPM_TOKEN}`
    Added http MCP server `registry` in user scope
    Created `[ROOT]/home/.claude.json`
    [exit status: 0]
    ");
}

/// `mcpenv ARGS` with `input` piped to stdin.
fn run_piped(env: &TestEnv, args: &[&str], input: &[u8]) -> crate::harness::CommandOutput {
    use std::io::Write;
    let mut child = env
        .command(&env.project, args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A process that refused early may have closed its end already.
    let _ = stdin.write_all(input);
    drop(stdin);
    crate::harness::CommandOutput::new(child.wait_with_output().unwrap(), &env.root)
}

#[test]
fn add_json_dash_reads_the_entry_from_stdin() {
    let env = TestEnv::new();
    let token = "ghp_U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D";
    let entry =
        format!(r#"{{"command": "node", "args": ["x.js"], "env": {{"GITHUB_TOKEN": "{token}"}}}}"#);
    let out = run_piped(
        &env,
        &["add-json", "-s", "user", "gh", "-"],
        entry.as_bytes(),
    );
    out.assert_no_secret(&[token]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Added stdio MCP server `gh` in user scope
    Created `[ROOT]/home/.claude.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "mcpServers": {
        "gh": {
          "command": "node",
          "args": [
            "x.js"
          ],
          "env": {
            "GITHUB_TOKEN": "ghp_U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D"
          }
        }
      }
    }
    "#);

    // Nothing piped: refused, as Claude Code refuses it, and nothing written.
    let out = env.run(&["add-json", "-s", "user", "empty", "-"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: there is no JSON on stdin

    hint: pipe it in (`... | mcpenv add-json NAME -`), or pass it as the argument
    [exit status: 2]
    ");
    let out = run_piped(&env, &["add-json", "-s", "user", "blank", "-"], b" \n\t\n");
    assert_eq!(out.code, 2, "{out}");
    let out = run_piped(
        &env,
        &["add-json", "-s", "user", "bad", "-"],
        b"{\"command\": ",
    );
    assert_snapshot!(out, @"
    ----- stderr -----
    error: invalid JSON entry on stdin at 1:12: EOF while parsing a value

    hint: check its quotes, commas and braces
    [exit status: 2]
    ");
    let big = vec![b' '; (1 << 20) + 1];
    let out = run_piped(&env, &["add-json", "-s", "user", "big", "-"], &big);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: the JSON on stdin is over the limit of 1 MiB

    hint: Claude Code refuses it too; pass a smaller entry
    [exit status: 2]
    ");
    assert!(!env.read("home/.claude.json").contains("empty"));
}

#[test]
fn add_json_dash_on_a_terminal_does_not_wait_for_input() {
    let env = TestEnv::new();
    let inner = env.command(&env.project, &["add-json", "-s", "user", "tty", "-"]);
    let mut command = std::process::Command::new(inner.get_program());
    command.args(inner.get_args()).env_clear();
    for (key, value) in inner.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command.current_dir(&env.project);
    let mut session = rexpect::session::spawn_with_options(
        command,
        rexpect::session::Options::new()
            .timeout_ms(Some(10_000))
            .strip_ansi_escape_codes(true),
    )
    .unwrap();
    session
        .exp_string("error: there is no JSON on stdin")
        .unwrap();
    session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 2)),
        "{status:?}"
    );
}

#[test]
fn add_json_knows_the_keys_claude_code_2_1_332_uses() {
    let env = TestEnv::new();
    // Used for remote servers: stored without a word.
    let out = env.run(&[
        "add-json",
        "-s",
        "user",
        "web",
        r#"{"type":"http","url":"https://x.test/mcp","displayName":"Web","bareElicitationCapability":true,"discoveryCache":true,"orgMaxPermission":"ask","request_timeout_ms":7000}"#,
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Added http MCP server `web` in user scope
    Created `[ROOT]/home/.claude.json`
    [exit status: 0]
    ");
    // Known, but not for stdio servers: dropped, as Claude Code drops them.
    let out = env.run(&[
        "add-json",
        "-s",
        "user",
        "local",
        r#"{"command":"node","displayName":"Local","discoveryCache":true,"request_timeout_ms":5000,"bareElicitationCapability":true,"role":"chat"}"#,
    ]);
    assert_snapshot!(out, @r#"
    ----- stderr -----
    warning: dropped `role`: Claude Code knows only "comms" (and drops anything else)
    warning: dropped `displayName`: Claude Code does not use it for stdio servers (and drops it)
    warning: dropped `discoveryCache`: Claude Code does not use it for stdio servers (and drops it)
    warning: dropped `request_timeout_ms`: Claude Code does not use it for stdio servers (and drops it)
    Added stdio MCP server `local` in user scope
    Wrote `[ROOT]/home/.claude.json`
    [exit status: 0]
    "#);
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "mcpServers": {
        "web": {
          "type": "http",
          "url": "https://x.test/mcp",
          "displayName": "Web",
          "bareElicitationCapability": true,
          "discoveryCache": true,
          "orgMaxPermission": "ask",
          "timeout": 7000
        },
        "local": {
          "command": "node",
          "args": [],
          "bareElicitationCapability": true
        }
      }
    }
    "#);
}

#[test]
fn a_mcp_json_listing_servers_at_the_top_level_is_refused_as_claude_code_refuses_it() {
    let env = TestEnv::new();
    let plugin_style = "{\n  \"gh\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"]}\n}\n";
    env.write("project/.mcp.json", plugin_style);
    let out = env.run(&["add", "-s", "project", "new", "--", "/nonexistent/new"]);
    assert_snapshot!(out, @r#"
    ----- stderr -----
    error: can't add to `[ROOT]/project/.mcp.json`: it lists servers at the top level, and adding an "mcpServers" key would stop a plugin from loading them

    hint: move them under "mcpServers", then try again
    hint: if they aren't servers, add "mcpServers": {} to the file instead
    [exit status: 1]
    "#);
    assert_eq!(env.read("project/.mcp.json"), plugin_style);

    // `share` refuses before it writes `.env`.
    env.run(&[
        "add",
        "-s",
        "local",
        "mine",
        "-e",
        "GITHUB_TOKEN=ghp_U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D",
        "--",
        "/nonexistent/mine",
    ])
    .expect_code(0);
    let out = env.run(&["share", "mine"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains("it lists servers at the top level"),
        "{out}"
    );
    assert!(!env.project.join(".env").exists());
    assert_eq!(env.read("project/.mcp.json"), plugin_style);

    // Claude Code refuses it the same way, and leaves the file alone.
    if let Some((code, text)) = crate::claude::run_claude(
        &env,
        &env.project,
        &[
            "mcp",
            "add",
            "-s",
            "project",
            "new",
            "--",
            "/nonexistent/new",
        ],
    ) {
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains(r#"Can't add to .mcp.json: it lists servers at the top level, and adding an "mcpServers" key would stop a plugin from loading them. Move them under "mcpServers", then try again. If they aren't servers, add "mcpServers": {} to the file instead."#),
            "{text}"
        );
        assert_eq!(env.read("project/.mcp.json"), plugin_style);
    }

    // Other top-level keys are no servers: both add `mcpServers`.
    let other =
        r#"{"$schema": "https://example.com/schema.json", "servers": {"gh": {"command": "npx"}}}"#;
    env.write("project/.mcp.json", other);
    env.run(&["add", "-s", "project", "new", "--", "/nonexistent/new"])
        .expect_code(0);
    assert!(env.read("project/.mcp.json").contains(r#""mcpServers""#));
    env.write("project/.mcp.json", other);
    if let Some((code, text)) = crate::claude::run_claude(
        &env,
        &env.project,
        &[
            "mcp",
            "add",
            "-s",
            "project",
            "new",
            "--",
            "/nonexistent/new",
        ],
    ) {
        assert_eq!(code, 0, "{text}");
        assert!(env.read("project/.mcp.json").contains(r#""mcpServers""#));
    }
}

/// Issue 13's case: sequential ids in a valid Slack bot token used to make
/// it look like filler, so `add -s project` wrote it into `.mcp.json`.
#[test]
fn a_slack_token_with_sequential_ids_is_extracted_by_add_to_the_project() {
    let env = TestEnv::new();
    let token = "xoxb-123456789012-1234567890123-q8ZtR2mVx7LkP4wN9cJ3bH6s";
    let basic = format!(
        "Authorization: Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ci-bot:Hd8sK2pLq9Wz")
    );
    env.run(&[
        "add",
        "-s",
        "project",
        "slack",
        "-e",
        &format!("SLACK_BOT_TOKEN={token}"),
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-slack",
    ])
    .expect_code(0)
    .assert_no_secret(&[token]);
    env.run(&[
        "add",
        "-s",
        "project",
        "-t",
        "http",
        "jenkins",
        "https://ci.example.com/mcp",
        "-H",
        &basic,
    ])
    .expect_code(0);
    let config: Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    assert_eq!(
        config["mcpServers"]["slack"]["env"]["SLACK_BOT_TOKEN"],
        "${SLACK_BOT_TOKEN}"
    );
    let header = config["mcpServers"]["jenkins"]["headers"]["Authorization"]
        .as_str()
        .unwrap();
    assert!(
        header.starts_with("Basic ${") && header.ends_with('}'),
        "{header}"
    );
    let dotenv = env.read("project/.env");
    assert!(dotenv.contains(token), "the token is in .env");
    assert!(!env.read("project/.mcp.json").contains("xoxb-"));
}
