//! The habits `claude mcp` users bring (issue 15): Claude Code's command
//! names, its variadic `-e`, a URL without `-t`, a name after `--`, scope
//! and template names that are nearly right. Each is either understood or
//! refused with exit 2 and the corrected command line.

use insta::assert_snapshot;

use crate::claude::run_claude;
use crate::harness::TestEnv;

const DESKTOP: &str = r#"{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
  }
}"#;

#[test]
fn add_from_claude_desktop_is_import_from_claude_desktop() {
    let alias = TestEnv::new();
    let file = alias.write("desktop.json", DESKTOP);
    let file = file.to_str().unwrap();
    let out = alias.run(&["add-from-claude-desktop", "--file", file, "-s", "user"]);
    let import = TestEnv::new();
    import.write("desktop.json", DESKTOP);
    let spelled_out = import.run(&[
        "import",
        "--from",
        "claude-desktop",
        "--file",
        &import.root.join("desktop.json").display().to_string(),
        "-s",
        "user",
    ]);
    assert_eq!(out.to_string(), spelled_out.to_string());
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        alias.read("home/.claude.json"),
        import.read("home/.claude.json")
    );
    assert!(
        alias
            .read("home/.claude.json")
            .contains("server-filesystem")
    );
}

#[test]
fn ls_and_rm_are_list_and_remove() {
    let env = TestEnv::new();
    env.run(&["add", "gh", "--", "npx", "gh"]).expect_code(0);
    assert_eq!(env.run(&["ls"]).to_string(), env.run(&["list"]).to_string());
    assert_snapshot!(env.run(&["rm", "gh"]), @"
    ----- stderr -----
    Removed MCP server `gh` from local scope
    Wrote `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
}

#[test]
fn a_url_without_transport_is_http() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "-s",
        "project",
        "sentry",
        "https://mcp.sentry.dev/mcp",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    note: `https://mcp.sentry.dev/mcp` is a URL: added as `-t http` (pass `-t sse` for an SSE server, `-t stdio` for a command)
    Added http MCP server `sentry` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust sentry`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "sentry": {
          "type": "http",
          "url": "https://mcp.sentry.dev/mcp"
        }
      }
    }
    "#);
}

#[test]
fn env_takes_several_values_before_the_dashes() {
    let env = TestEnv::new();
    env.run(&[
        "add", "-s", "project", "foo", "-e", "A=1", "B=2", "--", "npx", "foo",
    ])
    .expect_code(0);
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "foo": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "foo"
          ],
          "env": {
            "A": "1",
            "B": "2"
          }
        }
      }
    }
    "#);
}

#[test]
fn a_command_that_is_an_assignment_is_refused() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "foo", "-e", "A=1", "B=2", "npx", "foo"]), @"
    ----- stderr -----
    error: `B=2` looks like an environment variable, not a command

    hint: did you mean `mcpenv add -e 'A=1' -e 'B=2' foo -- npx foo`?
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "foo", "B=2", "--", "npx"]), @"
    ----- stderr -----
    error: `B=2` looks like an environment variable, not a command

    hint: did you mean `mcpenv add -e 'B=2' foo -- npx`?
    [exit status: 2]
    ");
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn a_name_after_the_dashes_or_a_command_as_name_is_refused() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "--", "npx", "foo", "name"]), @"
    ----- stderr -----
    error: the server's name is missing: it goes before `--`

    hint: did you mean `mcpenv add foo -- npx foo name`?
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["add", "npx", "foo"]), @"
    ----- stderr -----
    error: `npx` is a command, not a server name: the name comes first

    hint: did you mean `mcpenv add foo -- npx foo`?
    [exit status: 2]
    ");
    for command in [
        "uvx", "docker", "node", "python", "python3", "bunx", "deno", "pnpm",
    ] {
        let out = env.run(&["add", "-s", "project", command, "mcp-server-fetch"]);
        assert_eq!(out.code, 2, "{out}");
        assert!(
            out.stderr.contains(&format!(
                "`mcpenv add -s project fetch -- {command} mcp-server-fetch`"
            )),
            "{out}"
        );
    }
    // A name before `--` that happens to be a command is the user's choice.
    env.run(&["add", "node", "--", "node", "server.js"])
        .expect_code(0);
    assert!(!env.project.join(".mcp.json").exists());
}

#[test]
fn run_without_dashes_points_at_them() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["run", "claude", "--version"]), @"
    ----- stderr -----
    error: the command to run goes after `--`, so that `claude`'s options are not read as mcpenv's

    hint: did you mean `mcpenv run -- claude --version`?
    [exit status: 2]
    ");
}

#[test]
fn global_is_the_user_scope_and_near_misses_get_did_you_mean() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "-s", "global", "g", "--", "npx", "g"]), @"
    ----- stderr -----
    note: `-s global` is `-s user` here: servers for all your projects, in `~/.claude.json`
    Added stdio MCP server `g` in user scope
    Created `[ROOT]/home/.claude.json`
    [exit status: 0]
    ");
    assert!(
        env.read("home/.claude.json")
            .starts_with("{\n  \"mcpServers\": {\n    \"g\"")
    );
    // Never `local` for a misspelt `global`.
    assert_snapshot!(env.run(&["list", "-s", "globl"]), @"
    ----- stderr -----
    error: invalid scope `globl`: use `local`, `project` or `user`

    hint: did you mean `mcpenv list -s user`?
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["remove", "--scope=projct", "g"]), @"
    ----- stderr -----
    error: invalid scope `projct`: use `local`, `project` or `user`

    hint: did you mean `mcpenv remove '--scope=project' g`?
    [exit status: 2]
    ");
    // Claude Code refuses `global`, so mcpenv accepting it breaks no habit.
    if let Some((code, text)) = run_claude(
        &env,
        &env.project,
        &["mcp", "add", "-s", "global", "h", "--", "npx", "h"],
    ) {
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("Invalid scope: global"), "{text}");
    }
}

#[test]
fn a_misspelt_template_suggests_the_right_one() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["add", "gh", "--template", "githb"]), @"
    ----- stderr -----
    error: no template named `githb`

    hint: did you mean `mcpenv add gh --template github`?
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["templates", "show", "githb"]), @"
    ----- stderr -----
    error: no template named `githb`

    hint: did you mean `github`? `mcpenv templates list` lists them all
    [exit status: 1]
    ");
}
