//! One test per row of the exit-code table: 0 success, 1 operational
//! failure, 2 usage error.

use insta::assert_snapshot;

use crate::harness::TestEnv;

#[test]
fn success_help_and_version_exit_zero() {
    let env = TestEnv::new();
    env.run(&["list"]).expect_code(0);
    env.run(&["--help"]).expect_code(0);
    env.run(&["add", "--help"]).expect_code(0);
    let version = env.run(&["--version"]).expect_code(0);
    assert!(version.stdout.starts_with("mcpenv "));
}

#[test]
fn clap_errors_are_usage_errors() {
    let env = TestEnv::new();
    env.run(&[]).expect_code(2);
    env.run(&["add", "only-a-name"]).expect_code(2);
    env.run(&["add", "-s", "bogus", "a", "b"]).expect_code(2);
    env.run(&["add", "-t", "bogus", "a", "b"]).expect_code(2);
    // Every usage error clap finds ends as mcpenv's do, with a `hint:`
    // line, naming the help of the command meant (never the words typed).
    for (words, hint) in [
        (&["list", "--bogus"][..], "hint: see `mcpenv list --help`"),
        (
            &["secrets", "list", "--bogus"],
            "hint: see `mcpenv secrets list --help`",
        ),
        (&["lis"], "hint: see `mcpenv --help`"),
        (&["-q", "get"], "hint: see `mcpenv get --help`"),
        (
            &["ls", "--bogus\nhint: forged"],
            "hint: see `mcpenv list --help`",
        ),
    ] {
        let out = env.run(words).expect_code(2);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert_eq!(last, hint, "{words:?}: {out}");
        assert!(!out.stderr.contains("For more information"), "{out}");
    }
    assert_snapshot!(env.run(&["add", "gh", "npx", "-y", "pkg"]), @"
    ----- stderr -----
    error: unexpected argument '-y' found

      tip: to pass '-y' as a value, use '-- -y'

    Usage: mcpenv add [OPTIONS] <NAME> <COMMAND_OR_URL> [ARGS]...
           mcpenv add [OPTIONS] <NAME> -- <COMMAND> [ARGS]...
           mcpenv add [OPTIONS] <NAME> --template <TEMPLATE>

    hint: see `mcpenv add --help`
    [exit status: 2]
    ");
}

#[test]
fn invalid_names_are_usage_errors() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "a b", "node"]), @"
    ----- stderr -----
    error: invalid server name `a b`: names can only contain letters, numbers, hyphens and underscores

    hint: use only letters, digits, `-` and `_`, e.g. `my-server`
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "workspace", "node"]), @"
    ----- stderr -----
    error: server name `workspace` is reserved by Claude Code

    hint: pick another name; Claude Code reserves this one
    [exit status: 2]
    ");
    env.run(&["add", "café", "node"]).expect_code(2);
    env.run(&["add-json", "a.b", "{}"]).expect_code(2);
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn malformed_env_and_header_flags_are_usage_errors() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "-e", "NOEQ", "a", "node"]), @"
    ----- stderr -----
    error: invalid environment variable `NOEQ`: expected KEY=VALUE

    hint: to hand `NOEQ` on from your environment or `.env`, give its placeholder: `-e 'NOEQ=${NOEQ}'`
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "-e", "=v", "a", "node"]), @"
    ----- stderr -----
    error: invalid environment variable `=v`: expected KEY=VALUE

    hint: give one variable per flag: `-e KEY1=value1 -e KEY2=value2`
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "-t", "http", "-H", "NoColon", "a", "https://x"]), @"
    ----- stderr -----
    error: invalid header `NoColon`: expected `Name: value`

    hint: give one header per flag: `-H 'Authorization: Bearer ${TOKEN}'`
    [exit status: 2]
    ");
    env.run(&["add", "-t", "http", "-H", ": v", "a", "https://x"])
        .expect_code(2);
    assert_snapshot!(env.run(&["add", "-H", "A: b", "a", "node"]), @"
    ----- stderr -----
    error: `--header` applies only to http and sse servers

    hint: add `-t http` (or `-t sse`) for a server reached by URL
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "-t", "http", "-e", "A=b", "a", "https://x"]), @"
    ----- stderr -----
    error: `--env` and command arguments apply only to stdio servers, not http

    hint: pass credentials for a remote server as headers: `-H 'Authorization: Bearer ${TOKEN}'`
    [exit status: 2]
    ");
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn invalid_add_json_input_is_a_usage_error() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add-json", "a", r#"{"command": "x",}"#]), @r#"
    ----- stderr -----
    error: invalid JSON entry at 1:17: trailing comma

    hint: quote the entry for your shell, e.g. '{"type":"http","url":"https://example.com/mcp"}'
    [exit status: 2]
    "#);
    assert_snapshot!(env.run(&["add-json", "a", r#"{"type": "ws2", "url": "x"}"#]), @r#"
    ----- stderr -----
    error: invalid server entry: unknown "type" `ws2`: use "stdio", "sse", "http" (or "streamable-http") or "ws"

    hint: stdio entries need "command"; http and sse entries need "type" and "url"
    [exit status: 2]
    "#);
    assert_snapshot!(env.run(&["add-json", "a", r#"{"type": "stdio"}"#]), @r#"
    ----- stderr -----
    error: invalid server entry: `command`: missing

    hint: stdio entries need "command"; http and sse entries need "type" and "url"
    [exit status: 2]
    "#);
    env.run(&["add-json", "a", "[]"]).expect_code(2);
}

#[test]
fn world_dependent_failures_exit_one() {
    let env = TestEnv::new();
    env.run(&["get", "missing"]).expect_code(1);
    env.run(&["remove", "missing"]).expect_code(1);
    env.write("home/.claude.json", "not json");
    env.run(&["list"]).expect_code(1);
    let missing_dir = env.run_in(&env.root, &["-C", "nowhere", "list"]);
    assert_snapshot!(missing_dir, @"
    ----- stderr -----
    error: cannot use `[ROOT]/nowhere` as the working directory
      caused by: No such file or directory (os error 2)

    hint: check the directory given to `-C`
    [exit status: 1]
    ");
}

#[test]
fn an_unreadable_config_is_a_failure() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".claude.json")).unwrap();
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    error: `[ROOT]/home/.claude.json` is a directory, not a regular file

    hint: mcpenv reads only regular files and never opens anything else there: move it away, or put a regular file in its place
    [exit status: 1]
    ");
}

/// Help that says what a command does: `serve` has tools that write, and
/// Codex reads a trusted project's `.codex/config.toml` too.
#[test]
fn help_texts_tell_the_whole_story() {
    let env = TestEnv::new();
    let serve = env.run(&["serve", "--help"]).expect_code(0).stdout;
    assert!(!serve.contains("read-only jobs"), "{serve}");
    assert!(
        serve.contains("add_server") && serve.contains("share_server"),
        "{serve}"
    );
    let export = env.run(&["export", "--help"]).expect_code(0).stdout;
    assert!(
        export.contains(".codex/config.toml` in a project Codex trusts"),
        "{export}"
    );
}
