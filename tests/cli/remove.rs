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
