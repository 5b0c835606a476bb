//! `mcpenv doctor`: check, scan and (with `--probe`) probe in one summary
//! with one exit code.

use serde_json::json;

use crate::harness::TestEnv;
use crate::probe::{fake, world};
use crate::scan::PAT;

#[test]
fn a_healthy_project_is_fine() {
    let env = world(&[("good", fake("ok"))]);
    let out = env.run(&["doctor"]).expect_code(0);
    insta::assert_snapshot!(out, @"
    Environment: ok

    Secrets: ok

    Everything is fine here.
    ----- stderr -----
    [exit status: 0]
    ");
}

/// A server that needs `FOO`, which nothing sets, and holds a literal token.
fn unwell() -> TestEnv {
    world(&[(
        "gh",
        json!({ "command": "sh", "env": { "KEY": "${FOO}", "GITHUB_TOKEN": PAT } }),
    )])
}

#[test]
fn a_missing_variable_and_a_literal_secret_are_two_problems_with_next_steps() {
    let env = unwell();
    let out = env.run(&["doctor"]).expect_code(1);
    out.assert_no_secret(&[PAT]);
    insta::assert_snapshot!(out, @"
    Environment: 1 problem
    error: `FOO` is not set (needed by gh)
      hint: set it with `mcpenv onboard`, or export it in your shell

    Secrets: 1 problem
    FILE       SCOPE    SERVER  FIELD             RULE        VALUE
    .mcp.json  project  gh      env.GITHUB_TOKEN  github-pat  ghp_…3s12

    2 problems: fix what Environment lists (`mcpenv onboard` sets missing values); move the secrets with `mcpenv extract`
    ----- stderr -----
    [exit status: 1]
    ");
}

#[test]
fn json_has_every_part_and_is_not_ok() {
    let env = unwell();
    let out = env.run(&["doctor", "--json"]).expect_code(1);
    out.assert_no_secret(&[PAT]);
    let document = out.json();
    assert_eq!(document["schema_version"], 1, "{out}");
    assert_eq!(document["ok"], false, "{out}");
    assert_eq!(document["check"]["ok"], false, "{out}");
    assert_eq!(document["scan"]["findings"][0]["server"], "gh", "{out}");
    assert!(document["probe"].is_null(), "{out}");
}

#[test]
fn quiet_prints_only_the_problems() {
    let env = unwell();
    let out = env.run(&["-q", "doctor"]).expect_code(1);
    out.assert_no_secret(&[PAT]);
    insta::assert_snapshot!(out, @"
    error: `FOO` is not set (needed by gh)
      hint: set it with `mcpenv onboard`, or export it in your shell
    FILE       SCOPE    SERVER  FIELD             RULE        VALUE
    .mcp.json  project  gh      env.GITHUB_TOKEN  github-pat  ghp_…3s12
    ----- stderr -----
    [exit status: 1]
    ");
}

#[test]
fn probe_passes_with_a_working_server_and_fails_with_a_missing_command() {
    let env = world(&[("good", fake("ok"))]);
    let out = env.run(&["doctor", "--probe"]).expect_code(0);
    assert!(out.stdout.contains("Servers: ok"), "{out}");
    assert!(out.stdout.ends_with("Everything is fine here.\n"), "{out}");

    let env = world(&[
        ("good", fake("ok")),
        ("gone", json!({ "command": "/nonexistent/mcp-server" })),
    ]);
    let out = env.run(&["doctor", "--probe"]).expect_code(1);
    assert!(out.stdout.contains("Servers: 1 problem\n"), "{out}");
    assert!(out.stdout.contains("`gone` after "), "{out}");
    assert!(out.stdout.contains("`mcpenv probe gone`"), "{out}");
    let document = env
        .run(&["doctor", "--probe", "--json"])
        .expect_code(1)
        .json();
    assert_eq!(document["probe"]["summary"]["failed"], 1);
    assert_eq!(document["probe"]["servers"][0]["ok"], true);
}

#[test]
fn a_broken_config_is_reported_with_its_position_and_the_scan_still_runs() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}",
    );
    env.write(
        "home/.claude.json",
        &json!({ "mcpServers": { "gh": { "command": "sh", "env": { "GITHUB_TOKEN": PAT } } } })
            .to_string(),
    );
    let out = env.run(&["doctor", "--probe"]).expect_code(1);
    out.assert_no_secret(&[PAT]);
    insta::assert_snapshot!(out, @r#"
    Environment: 1 problem
    error: `.mcp.json`: failed to parse `[ROOT]/project/.mcp.json:1:38`: trailing comma
      hint: Claude Code loads none of its servers (it reports "MCP config is not a valid JSON (line 1, column 38)"); fix the file by hand

    Secrets: 2 problems
    error: failed to parse `[ROOT]/project/.mcp.json:1:38`: trailing comma; scanned its text for secrets instead
    FILE            SCOPE  SERVER  FIELD             RULE        VALUE
    ~/.claude.json  user   gh      env.GITHUB_TOKEN  github-pat  ghp_…3s12

    Servers: 1 problem
    error: failed to parse `[ROOT]/project/.mcp.json:1:38`: trailing comma

    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse

    4 problems: fix what Environment lists (`mcpenv onboard` sets missing values); move the secrets with `mcpenv extract -s user`; see why with `mcpenv probe`
    ----- stderr -----
    [exit status: 1]
    "#);
}

#[test]
fn timeout_needs_probe() {
    let env = TestEnv::new();
    env.run(&["doctor", "--timeout", "3"]).expect_code(2);
}

#[test]
fn probe_skips_unapproved_project_servers_and_says_so() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({ "mcpServers": { "unknown": fake("ok") } }).to_string(),
    );
    let out = env.run(&["doctor", "--probe"]);
    assert!(out.stdout.contains("Servers: ok\n"), "{out}");
    assert!(out.stdout.contains("skipped `unknown`: "), "{out}");
    assert!(out.stdout.contains("`--trust-project`"), "{out}");
    let document = env.run(&["doctor", "--probe", "--json"]).json();
    assert_eq!(document["probe"]["summary"]["ok"], 0, "{document}");
    assert!(
        document["probe"]["skipped"][0]
            .as_str()
            .is_some_and(|text| text.starts_with("skipped `unknown`")),
        "{document}"
    );
}

#[test]
fn strict_counts_the_checks_warnings() {
    // A variable set only in a readable `.env`, with no `.env.example` for
    // teammates: warnings, so fine unless `--strict`.
    let env = world(&[("gh", json!({ "command": "sh", "env": { "KEY": "${FOO}" } }))]);
    env.write("project/.env", "FOO=bar\n");
    env.write("project/.gitignore", ".env\n");
    let out = env.run(&["doctor"]).expect_code(0);
    assert!(out.stdout.contains("Everything is fine here."), "{out}");
    let out = env.run(&["doctor", "--strict"]).expect_code(1);
    assert!(out.stdout.contains("Environment: 3 problems\n"), "{out}");
    assert!(out.stdout.contains("warning: `.env.example`"), "{out}");
}
