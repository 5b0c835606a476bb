use insta::assert_snapshot;

use crate::harness::TestEnv;

#[test]
fn remove_from_each_scope_keeps_empty_containers() {
    let env = TestEnv::new();
    for scope in ["local", "project", "user"] {
        env.run(&["add", "-s", scope, &format!("{scope}-server"), "node"])
            .expect_code(0);
    }
    for scope in ["local", "project", "user"] {
        let out = env.run(&["remove", &format!("{scope}-server")]);
        assert_eq!(out.code, 0, "{out}");
    }
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {}
    }
    "#);
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "projects": {
        "[ROOT]/project": {
          "allowedTools": [],
          "mcpContextUris": [],
          "mcpServers": {},
          "enabledMcpjsonServers": [],
          "disabledMcpjsonServers": [],
          "hasTrustDialogAccepted": false,
          "projectOnboardingSeenCount": 0,
          "hasClaudeMdExternalIncludesApproved": false,
          "hasClaudeMdExternalIncludesWarningShown": false
        }
      },
      "mcpServers": {}
    }
    "#);
}

#[test]
fn remove_reports_what_it_did() {
    let env = TestEnv::new();
    env.run(&["add", "x", "node"]).expect_code(0);
    assert_snapshot!(env.run(&["remove", "x"]), @"
    ----- stderr -----
    Removed MCP server `x` from local scope
    Wrote `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
}

#[test]
fn a_name_in_several_scopes_needs_a_scope() {
    let env = TestEnv::new();
    for scope in ["local", "project", "user"] {
        env.run(&["add", "-s", scope, "dup", "node"]).expect_code(0);
    }
    let before = (
        env.bytes("home/.claude.json"),
        env.bytes("project/.mcp.json"),
    );
    assert_snapshot!(env.run(&["remove", "dup"]), @"
    ----- stderr -----
    error: MCP server `dup` is defined in 3 scopes; nothing was removed

    hint: choose the scope to remove it from:
      mcpenv remove dup -s local    # [ROOT]/home/.claude.json, project [ROOT]/project
      mcpenv remove dup -s project  # [ROOT]/project/.mcp.json
      mcpenv remove dup -s user     # [ROOT]/home/.claude.json
    [exit status: 1]
    ");
    assert_eq!(
        (
            env.bytes("home/.claude.json"),
            env.bytes("project/.mcp.json")
        ),
        before
    );

    env.run(&["remove", "dup", "-s", "project"]).expect_code(0);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let scopes: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["local", "user"]);
}

#[test]
fn the_ambiguity_hint_repeats_the_project_dir() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "user", "dup", "node"])
        .expect_code(0);
    env.run(&["add", "-s", "local", "dup", "node"])
        .expect_code(0);
    assert_snapshot!(env.run_in(&env.root, &["-C", "project", "remove", "dup"]), @"
    ----- stderr -----
    error: MCP server `dup` is defined in 2 scopes; nothing was removed

    hint: choose the scope to remove it from:
      mcpenv -C project remove dup -s local  # [ROOT]/home/.claude.json, project [ROOT]/project
      mcpenv -C project remove dup -s user   # [ROOT]/home/.claude.json
    [exit status: 1]
    ");
}

#[test]
fn removing_an_unknown_name_fails_with_where_it_is() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "user", "only-user", "node"])
        .expect_code(0);
    assert_snapshot!(env.run(&["remove", "only-user", "-s", "local"]), @"
    ----- stderr -----
    error: no MCP server named `only-user` in local scope: `[ROOT]/home/.claude.json` (project `[ROOT]/project`)

    hint: it is defined in user scope: `mcpenv remove only-user -s user`
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["remove", "missing"]), @"
    ----- stderr -----
    error: no MCP server named `missing`

    hint: configured servers: `only-user`
    [exit status: 1]
    ");
}

#[test]
fn a_server_in_an_ancestor_mcp_json_is_not_removed_from_here() {
    let env = TestEnv::new();
    env.write(".mcp.json", r#"{"mcpServers": {"far": {"command": "x"}}}"#);
    assert_snapshot!(env.run(&["remove", "far"]), @"
    ----- stderr -----
    error: no MCP server named `far`

    hint: it is defined in `[ROOT]/.mcp.json`, outside this repository; edit that file, or run mcpenv from its directory
    [exit status: 1]
    ");
}

/// A project whose `github` alone uses `GITHUB_TOKEN` and shares
/// `LOG_LEVEL` with `db`; `.env.example` documents all three.
fn documented_project(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "github": { "command": "npx", "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "${LOG_LEVEL}" } },
    "db": { "command": "db-mcp", "env": { "DB_URL": "${DB_URL}", "LOG_LEVEL": "${LOG_LEVEL}" } }
  }
}
"#,
    );
    env.write(
        "project/.env.example",
        "# used by: github\nGITHUB_TOKEN=\n# used by: db\nDB_URL=\n# used by: github, db\nLOG_LEVEL=info\n",
    );
    env.write(
        "project/.env",
        "GITHUB_TOKEN=ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345\n",
    );
}

#[test]
fn remove_names_the_example_lines_no_server_uses_and_keeps_them_without_a_terminal() {
    let env = TestEnv::new();
    documented_project(&env);
    let example = env.bytes("project/.env.example");
    assert_snapshot!(env.run(&["remove", "-s", "project", "github"]), @"
    ----- stderr -----
    Removed MCP server `github` from project scope
    Wrote `[ROOT]/project/.mcp.json`
    warning: no server uses `GITHUB_TOKEN` any more, but `.env.example` still documents it
    hint: delete its line from `.env.example` by hand if no teammate needs it (`remove --tidy-example` drops such lines as it removes)
    [exit status: 0]
    ");
    assert_eq!(env.bytes("project/.env.example"), example);
}

#[test]
fn tidy_example_drops_only_unused_lines_and_never_a_dotenv_value() {
    let env = TestEnv::new();
    documented_project(&env);
    let dotenv = env.bytes("project/.env");
    let out = env.run(&["remove", "-s", "project", "github", "--tidy-example"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Removed MCP server `github` from project scope
    Wrote `[ROOT]/project/.mcp.json`
    Dropped `GITHUB_TOKEN` from `.env.example`
    Wrote `[ROOT]/project/.env.example`
    [exit status: 0]
    ");
    assert_eq!(
        std::fs::read_to_string(env.project.join(".env.example")).unwrap(),
        "# used by: db\nDB_URL=\n# used by: github, db\nLOG_LEVEL=info\n"
    );
    assert_eq!(env.bytes("project/.env"), dotenv);
    // Undone together with the removal.
    env.run(&["undo"]).expect_code(0);
    assert!(env.read("project/.env.example").contains("GITHUB_TOKEN="));
    assert!(env.read("project/.mcp.json").contains("\"github\""));
}

#[test]
fn the_example_lines_are_offered_on_a_terminal() {
    let env = TestEnv::new();
    documented_project(&env);
    let mut terminal =
        crate::terminal::Terminal::start(&env, &["remove", "-s", "project", "github"]);
    terminal.answer_key("drop its line from `.env.example`?", "y");
    let (shown, status) = terminal.finish();
    assert_eq!(crate::terminal::exited(status), 0, "{shown}");
    assert!(
        shown.contains("Dropped `GITHUB_TOKEN` from `.env.example`"),
        "{shown}"
    );
    assert!(!env.read("project/.env.example").contains("GITHUB_TOKEN"));
}
