//! `add --client-id / --callback-port / --client-secret`: the `oauth`
//! object and the stored client secret, byte for byte as Claude Code
//! 2.1.332 writes them (cross-checked with the real `claude` when it is
//! installed), and the secret never printed.

use std::os::unix::fs::PermissionsExt;

use insta::assert_snapshot;

use crate::claude::claude_command;
use crate::harness::TestEnv;

const SECRET: &str = "oauth-client-secret-7Hq2Vx9Lm4";

/// The adds both tools run, each as `add ARGS`.
#[rustfmt::skip]
const ADDS: &[&[&str]] = &[
    &["-s", "project", "-t", "http", "--client-id", "cid", "--callback-port", "8123", "api", "https://api.example.com/mcp", "-H", "X-A: 1"],
    &["-s", "project", "-t", "http", "--client-id", "cid2", "api2", "https://api.example.com/mcp"],
    &["-s", "project", "-t", "sse", "--callback-port", "9000", "api3", "https://api.example.com/sse"],
];

/// Adds that store a secret: with headers (their order counts), without,
/// sse with a query, user scope.
#[rustfmt::skip]
const SECRET_ADDS: &[&[&str]] = &[
    &["-s", "project", "-t", "http", "--client-id", "c", "--client-secret", "hdr", "https://x.example/mcp", "-H", "B: 2", "-H", "A: 1"],
    &["-s", "project", "-t", "http", "--client-id", "c", "--client-secret", "nohdr", "https://x.example/mcp"],
    &["-s", "user", "-t", "sse", "--client-secret", "--client-id", "c", "ssesec", "https://x.example/sse?q=${X}"],
];

fn with_add<'a>(args: &'a [&'a str]) -> Vec<&'a str> {
    let mut words = vec!["add"];
    words.extend_from_slice(args);
    words
}

/// `mcpenv add FLAGS api https://x.example/mcp`.
fn add_api(env: &TestEnv, flags: &[&str]) -> crate::harness::CommandOutput {
    let mut words = vec!["add"];
    words.extend_from_slice(flags);
    words.extend(["api", "https://x.example/mcp"]);
    env.run(&words)
}

fn claude_adds(env: &TestEnv, adds: &[&[&str]]) -> bool {
    for args in adds {
        let mut words = vec!["mcp"];
        words.extend(with_add(args));
        let Some(mut command) = claude_command(env, &env.project, &words) else {
            return false;
        };
        let output = command.env("MCP_CLIENT_SECRET", SECRET).output().unwrap();
        assert!(output.status.success(), "claude {words:?}: {output:?}");
    }
    true
}

#[test]
fn the_oauth_object_is_what_claude_writes() {
    let mine = TestEnv::new();
    for args in ADDS {
        mine.run(&with_add(args)).expect_code(0);
    }
    assert_snapshot!(mine.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "api": {
          "type": "http",
          "url": "https://api.example.com/mcp",
          "headers": {
            "X-A": "1"
          },
          "oauth": {
            "clientId": "cid",
            "callbackPort": 8123
          }
        },
        "api2": {
          "type": "http",
          "url": "https://api.example.com/mcp",
          "oauth": {
            "clientId": "cid2"
          }
        },
        "api3": {
          "type": "sse",
          "url": "https://api.example.com/sse",
          "oauth": {
            "callbackPort": 9000
          }
        }
      }
    }
    "#);
    let theirs = TestEnv::new();
    if claude_adds(&theirs, ADDS) {
        assert_eq!(
            String::from_utf8(mine.bytes("project/.mcp.json")).unwrap(),
            String::from_utf8(theirs.bytes("project/.mcp.json")).unwrap()
        );
    }
}

#[test]
fn the_client_secret_goes_where_claude_files_it() {
    let mut mine = TestEnv::new();
    mine.set_env("MCP_CLIENT_SECRET", SECRET);
    for args in SECRET_ADDS {
        let out = mine.run(&with_add(args)).expect_code(0);
        out.assert_no_secret(&[SECRET]);
    }
    let credentials = "home/.claude/.credentials.json";
    assert_snapshot!(mine.read(credentials), @r#"{"mcpOAuthClientConfig":{"hdr|5026d9fae73499d7":{"clientSecret":"oauth-client-secret-7Hq2Vx9Lm4"},"nohdr|9b8ef7a9df3c11fb":{"clientSecret":"oauth-client-secret-7Hq2Vx9Lm4"},"ssesec|d954453fde640d96":{"clientSecret":"oauth-client-secret-7Hq2Vx9Lm4"}}}"#);
    assert_eq!(mine.mode(credentials), 0o600);
    for file in ["project/.mcp.json", "home/.claude.json"] {
        assert!(!mine.read(file).contains(SECRET), "{file}");
    }
    let theirs = TestEnv::new();
    if claude_adds(&theirs, SECRET_ADDS) {
        assert_eq!(mine.read(credentials), theirs.read(credentials));
        assert_eq!(
            mine.read("project/.mcp.json"),
            theirs.read("project/.mcp.json")
        );
    }
}

#[test]
fn the_secret_report_names_the_key_not_the_secret() {
    let mut env = TestEnv::new();
    env.set_env("MCP_CLIENT_SECRET", SECRET);
    // Existing members stay; a file others can read becomes 0600, as Claude Code leaves it.
    let path = env.write(
        "home/.claude/.credentials.json",
        r#"{"claudeAiOauth":{"x":1},"mcpOAuthClientConfig":{"old|1":{"clientSecret":"o"}}}"#,
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = add_api(&env, &["--client-id", "c", "--client-secret"]);
    out.assert_no_secret(&[SECRET]);
    assert_snapshot!(out, @"
    ----- stderr -----
    note: `https://x.example/mcp` is a URL: added as `-t http` (pass `-t sse` for an SSE server, `-t stdio` for a command)
    Added http MCP server `api` in local scope
    Created `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    Stored the OAuth client secret in `[ROOT]/home/.claude/.credentials.json` under `api|9b8ef7a9df3c11fb`, where Claude Code reads it
    [exit status: 0]
    ");
    assert_snapshot!(env.read("home/.claude/.credentials.json"), @r#"{"claudeAiOauth":{"x":1},"mcpOAuthClientConfig":{"old|1":{"clientSecret":"o"},"api|9b8ef7a9df3c11fb":{"clientSecret":"oauth-client-secret-7Hq2Vx9Lm4"}}}"#);
    assert_eq!(env.mode("home/.claude/.credentials.json"), 0o600);
}

#[test]
fn without_a_terminal_or_the_variable_nothing_is_written() {
    let env = TestEnv::new();
    let out = add_api(&env, &["--client-id", "c", "--client-secret"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: no terminal to ask for the client secret; nothing was written

    hint: set `MCP_CLIENT_SECRET` in the environment instead
    [exit status: 1]
    ");
    assert!(!env.home.join(".claude.json").exists());
    assert!(!env.home.join(".claude/.credentials.json").exists());
}

#[test]
fn a_secret_needs_a_client_id_and_takes_no_value() {
    let env = TestEnv::new();
    let out = add_api(&env, &["-t", "http", "--client-secret"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `--client-secret` needs `--client-id`: Claude Code ignores a client secret without one

    hint: did you mean `mcpenv add -t http --client-secret --client-id CLIENT_ID api https://x.example/mcp`?
    [exit status: 2]
    ");
    let out = add_api(&env, &["--client-id", "c", "--client-secret", SECRET]);
    out.assert_no_secret(&[SECRET]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `--client-secret` takes no value: the secret is read from `MCP_CLIENT_SECRET` or asked for without echo

    hint: did you mean `mcpenv add --client-id c --client-secret api https://x.example/mcp`?
    [exit status: 2]
    ");
    let out = add_api(&env, &["--client-secret=x"]);
    assert_eq!(out.code, 2, "{out}");
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn stdio_with_oauth_flags_warns_as_claude_does() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "--client-id",
        "c",
        "--callback-port",
        "8123",
        "st",
        "--",
        "npx",
        "foo",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: --client-id, --client-secret and --callback-port only work with HTTP/SSE servers and are ignored for stdio
    Added stdio MCP server `st` in local scope
    Created `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
    assert!(!env.read("home/.claude.json").contains("oauth"));
}

#[test]
fn bad_callback_ports_are_usage_errors_without_a_misleading_tip() {
    let env = TestEnv::new();
    let out = add_api(&env, &["--callback-port", "0"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: invalid value '0' for '--callback-port <PORT>': --callback-port must be a whole number from 1 to 65535

    hint: see `mcpenv add --help`
    [exit status: 2]
    ");
    // The flag exists now: clap's "use '-- --client-id'" tip is gone.
    let out = env.run(&["add", "--client-id"]);
    assert!(!out.stderr.contains("-- --client-id"), "{out}");
}
