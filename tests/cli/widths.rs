//! Text that fits: with `COLUMNS` set (or a terminal), every line of a
//! table stays within the width, descriptions wrapping under themselves;
//! names and URLs are never cut. Without either, lines are whole.

use std::process::Stdio;

use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};

/// A template with two remotes at one URL that differ in transport, in the
/// header they send and in the variables they need.
const TWO_REMOTES: &str = r#"{
  "name": "io.github.acme/tracker",
  "description": "Track Acme tickets, boards and sprints from your editor, with search across every project you can see",
  "version": "1.0.0",
  "remotes": [
    {"type": "streamable-http", "url": "https://mcp.tracker.example.com/mcp"},
    {"type": "sse", "url": "https://{TRACKER_REGION}.tracker.example.com/sse",
     "variables": {"TRACKER_REGION": {"description": "Region", "default": "eu"}},
     "headers": [{"name": "X-Api-Key", "description": "API key", "isRequired": true, "isSecret": true}]}
  ]
}"#;

fn run_at(env: &TestEnv, columns: &str, args: &[&str]) -> CommandOutput {
    let output = env
        .command(&env.project, args)
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    CommandOutput::new(output, &env.root)
}

#[track_caller]
fn assert_fits(out: &CommandOutput, width: usize) {
    for line in out.stdout.lines() {
        assert!(
            line.chars().count() <= width,
            "a line is wider than {width} columns ({}):\n{line}\n\n{out}",
            line.chars().count()
        );
    }
}

#[test]
fn templates_list_fits_80_columns() {
    let env = TestEnv::new();
    let out = run_at(&env, "80", &["templates", "list"]).expect_code(0);
    assert_fits(&out, 80);
    assert_snapshot!(out);
}

#[test]
fn every_width_keeps_urls_whole_and_lines_within_bounds() {
    let env = TestEnv::new();
    env.write("project/.mcpenv/templates/tracker.json", TWO_REMOTES);
    let wide = run_at(&env, "200", &["templates", "list"]).expect_code(0);
    let urls: Vec<&str> = wide
        .stdout
        .split_whitespace()
        .filter(|word| word.starts_with("https://"))
        .collect();
    for columns in [60, 72, 100, 120] {
        let out = run_at(&env, &columns.to_string(), &["templates", "list"]).expect_code(0);
        // The one URL longer than 60 columns less its indent may move left.
        if columns >= 80 {
            assert_fits(&out, columns);
        }
        let words: Vec<&str> = out.stdout.split_whitespace().collect();
        for url in &urls {
            assert!(words.contains(url), "`{url}` was cut at {columns}:\n{out}");
        }
    }
}

#[test]
fn two_remotes_are_told_apart_in_list_and_show() {
    let env = TestEnv::new();
    env.write("project/.mcpenv/templates/tracker.json", TWO_REMOTES);
    let listed = run_at(&env, "80", &["templates", "list"]).expect_code(0);
    let tracker: String = listed
        .stdout
        .lines()
        .skip_while(|line| !line.starts_with("tracker"))
        .take(5)
        .collect::<Vec<_>>()
        .join("\n");
    assert_snapshot!(tracker, @"
    tracker              project   Track Acme tickets, boards and sprints from your
                                   editor, with search across every project you can
                                   see
      --remote 1  streamable-http https://mcp.tracker.example.com/mcp (no headers)
      --remote 2  sse https://{TRACKER_REGION}.tracker.example.com/sse (header
    ");
    let shown = run_at(&env, "80", &["templates", "show", "tracker"]).expect_code(0);
    assert_fits(&shown, 80);
    assert_snapshot!(shown);
    let json = env
        .run(&["templates", "show", "tracker", "--json"])
        .expect_code(0)
        .json();
    assert_snapshot!(serde_json::to_string_pretty(&json["remotes"]).unwrap());
}

#[test]
fn shipped_templates_with_two_remotes_are_told_apart() {
    let env = TestEnv::new();
    let out = run_at(&env, "100", &["templates", "show", "cloudflare"]).expect_code(0);
    let headings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|line| line.starts_with("--remote"))
        .collect();
    assert_snapshot!(headings.join("\n"), @"
    --remote 1 (default)  streamable-http https://mcp.cloudflare.com/mcp (no headers)
    --remote 2  streamable-http https://mcp.cloudflare.com/mcp (header Authorization, needs
    ");
}

#[test]
fn a_pipe_without_columns_gets_whole_lines() {
    let env = TestEnv::new();
    let output = env
        .command(&env.project, &["templates", "list"])
        .env_remove("COLUMNS")
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let out = CommandOutput::new(output, &env.root);
    let description = out
        .stdout
        .lines()
        .find(|line| line.starts_with("cloudflare "))
        .unwrap();
    assert!(
        description.ends_with("(search and execute)"),
        "a description was wrapped in a pipe:\n{out}"
    );
}

#[test]
fn check_lines_wrap_under_their_text() {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"api": {"command": "sh", "env": {"FROM_SETTINGS": "${FROM_SETTINGS}"}}}}"#,
    );
    env.write(
        "project/.claude/settings.local.json",
        r#"{"env": {"FROM_SETTINGS": "s"}}"#,
    );
    env.set_env("UNUSED", "x");
    let out = run_at(&env, "60", &["check"]);
    assert_fits(&out, 60);
    assert_snapshot!(out.stdout);
}
