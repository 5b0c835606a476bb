//! `approve`, `reject` and `reset-project-choices`: the exact bytes they
//! write, where they refuse, and what the real Claude Code makes of it.

use std::path::Path;
use std::process::{Command, Stdio};

use insta::assert_snapshot;

use crate::claude::{claude, run_claude};
use crate::harness::TestEnv;

const MCP_JSON: &str = "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"/nonexistent/github\"},\n    \"docs\": {\"command\": \"/nonexistent/docs\"}\n  }\n}\n";

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn porcelain(dir: &Path) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A world whose project is a real repository with `.mcp.json` committed;
/// `None` (and a note) when git is missing.
fn repository() -> Option<TestEnv> {
    let env = TestEnv::bare();
    if !git(&env.project, &["init", "-q"]) {
        crate::skips::skip("git is not installed");
        return None;
    }
    env.write("project/.mcp.json", MCP_JSON);
    commit_mcp_json(&env);
    Some(env)
}

/// Commits the project's `.mcp.json` as it is now.
fn commit_mcp_json(env: &TestEnv) {
    let committed = git(&env.project, &["add", ".mcp.json"])
        && git(
            &env.project,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-q",
                "-m",
                "servers",
            ],
        );
    assert!(committed);
}

#[test]
fn approve_creates_the_private_file_and_the_exclude_rule() {
    let Some(env) = repository() else { return };
    let out = env.run(&["approve", "github"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Approved `github` in `[ROOT]/project/.claude/settings.local.json`
    Wrote `[ROOT]/project/.git/info/exclude`
    Wrote `[ROOT]/project/.claude/settings.local.json`
    Claude Code 2.1.332 reads these approvals once you trust this folder: start `claude` here and accept its trust dialog, or run `mcpenv approve --trust github`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
      "enabledMcpjsonServers": [
        "github"
      ]
    }
    "#);
    assert_eq!(env.mode("project/.claude/settings.local.json"), 0o600);
    assert!(
        env.read("project/.git/info/exclude")
            .ends_with("\n.claude/settings.local.json\n")
    );
    assert!(!env.project.join(".gitignore").exists());
    assert_eq!(porcelain(&env.project), "");

    let again = env.run(&["approve", "github"]);
    assert_snapshot!(again, @"
    ----- stderr -----
    Approved `github` in `[ROOT]/project/.claude/settings.local.json`
    Claude Code 2.1.332 reads these approvals once you trust this folder: start `claude` here and accept its trust dialog, or run `mcpenv approve --trust github`
    [exit status: 0]
    ");
}

#[test]
fn approve_and_reject_move_names_and_keep_every_other_byte() {
    let Some(env) = repository() else { return };
    let settings = "{\n    \"env\": {\"A\": \"1\"},\n    \"disabledMcpjsonServers\": [\"github\", \"x\"],\n    \"n\": 1.50\n}";
    env.write("project/.claude/settings.local.json", settings);
    env.run(&["approve", "github"]).expect_code(0);
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
        "env": {"A": "1"},
        "disabledMcpjsonServers": [
            "x"
        ],
        "n": 1.50,
        "enabledMcpjsonServers": [
            "github"
        ]
    }
    "#);
    let out = env.run(&["reject", "github", "docs", "--json"]);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "state": "rejected",
      "file": "[ROOT]/project/.claude/settings.local.json",
      "recorded": [
        "github",
        "docs"
      ],
      "already": [],
      "blocked": [],
      "overruled": [],
      "written": [
        "[ROOT]/project/.claude/settings.local.json"
      ],
      "trusted": false,
      "not_excluded": false,
      "trusted_now": false
    }
    ----- stderr -----
    Rejected `github`, `docs` in `[ROOT]/project/.claude/settings.local.json`
    Wrote `[ROOT]/project/.claude/settings.local.json`
    [exit status: 0]
    "#);
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
        "env": {"A": "1"},
        "disabledMcpjsonServers": [
            "x",
            "github",
            "docs"
        ],
        "n": 1.50,
        "enabledMcpjsonServers": []
    }
    "#);
    assert_eq!(porcelain(&env.project), "");
}

#[test]
fn approve_all_names_each_server_in_effect() {
    let Some(env) = repository() else { return };
    env.run(&["approve", "--all"]).expect_code(0);
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
      "enabledMcpjsonServers": [
        "github",
        "docs"
      ]
    }
    "#);
}

#[test]
fn reset_removes_the_three_keys_from_both_files() {
    let Some(env) = repository() else { return };
    let key = env.key();
    let claude_json = format!(
        "{{\n  \"numStartups\": 3,\n  \"projects\": {{\n    \"{key}\": {{\n      \"allowedTools\": [],\n      \"enabledMcpjsonServers\": [\"github\"],\n      \"disabledMcpjsonServers\": [],\n      \"hasTrustDialogAccepted\": false,\n      \"enableAllProjectMcpServers\": true\n    }}\n  }}\n}}"
    );
    env.write("home/.claude.json", &claude_json);
    env.write(
        "project/.claude/settings.local.json",
        "{\n  \"enabledMcpjsonServers\": [\n    \"github\"\n  ],\n  \"env\": {\n    \"A\": \"1\"\n  },\n  \"disabledMcpjsonServers\": []\n}\n",
    );
    let out = env.run(&["reset-project-choices"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Reset the approvals and rejections of project (`.mcp.json`) servers: Claude Code asks again
    Wrote `[ROOT]/home/.claude.json`
    Wrote `[ROOT]/project/.claude/settings.local.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("home/.claude.json"), @r#"
    {
      "numStartups": 3,
      "projects": {
        "[ROOT]/project": {
          "allowedTools": [],
          "hasTrustDialogAccepted": false
        }
      }
    }
    "#);
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
      "env": {
        "A": "1"
      }
    }
    "#);
    let again = env.run(&["reset-project-choices"]);
    assert_snapshot!(again, @"
    ----- stderr -----
    No approvals or rejections of project servers are recorded for this project
    [exit status: 0]
    ");
}

#[test]
fn unknown_names_are_a_usage_error() {
    let Some(env) = repository() else { return };
    let out = env.run(&["approve", "githb"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: no project server named `githb` in the `.mcp.json` files in effect here

    hint: did you mean `github`?
    [exit status: 2]
    ");
    env.run(&["add", "-s", "local", "mine", "--", "/nonexistent/mine"])
        .expect_code(0);
    let out = env.run(&["reject", "mine"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: no project server named `mine` in the `.mcp.json` files in effect here

    hint: `mine` is a local server: Claude Code starts it without asking
    [exit status: 2]
    ");
    assert!(!env.project.join(".claude").exists());
}

#[test]
fn refuses_where_claude_code_ignores_the_file() {
    let Some(env) = repository() else { return };
    // Tracked by git.
    env.write("project/.claude/settings.local.json", "{}\n");
    assert!(git(
        &env.project,
        &["add", "-f", ".claude/settings.local.json"]
    ));
    let out = env.run(&["approve", "github"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: Claude Code ignores `[ROOT]/project/.claude/settings.local.json` here: the file is tracked by git

    hint: Claude Code 2.1.332 ignores a committed copy until the folder is trusted, and past that it would hand your choices to everyone who clones; stop tracking it with `git rm --cached .claude/settings.local.json`
    [exit status: 1]
    ");
    assert_eq!(env.read("project/.claude/settings.local.json"), "{}\n");
    assert!(git(
        &env.project,
        &["rm", "-q", "--cached", ".claude/settings.local.json"]
    ));

    // A symbolic link.
    std::fs::remove_file(env.project.join(".claude/settings.local.json")).unwrap();
    env.write("elsewhere.json", "{}\n");
    std::os::unix::fs::symlink(
        env.root.join("elsewhere.json"),
        env.project.join(".claude/settings.local.json"),
    )
    .unwrap();
    let out = env.run(&["reject", "docs"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: Claude Code ignores `[ROOT]/project/.claude/settings.local.json` here: the file is a symbolic link

    hint: Claude Code does not read it through a symbolic link; replace the link with a real directory or file
    [exit status: 1]
    ");
    assert_eq!(env.read("elsewhere.json"), "{}\n");
}

#[test]
fn outside_a_repository_approvals_count_once_the_folder_is_trusted() {
    // Claude Code 2.1.332 reads them there too (in a trusted folder); with
    // no git, nothing needs keeping out of it.
    let env = TestEnv::bare();
    env.write("project/.mcp.json", MCP_JSON);
    let out = env.run(&["approve", "--all", "--trust"]).expect_code(0);
    assert!(
        out.stderr
            .contains("Recorded that you trust this folder in Claude Code\nWrote `[ROOT]/project/.claude/settings.local.json`\nWrote `[ROOT]/home/.claude.json`"),
        "{out}"
    );
    assert_eq!(
        env.read("project/.claude/settings.local.json"),
        "{\n  \"enabledMcpjsonServers\": [\n    \"github\",\n    \"docs\"\n  ]\n}\n"
    );
    assert!(!out.stderr.contains("warning"), "{out}");
    assert_eq!(env.mode("project/.claude/settings.local.json"), 0o600);
    let listed = env.run(&["list", "--json"]).json();
    for server in listed["servers"].as_array().unwrap() {
        assert_eq!(server["approval"], "approved", "{listed}");
    }
}

#[test]
fn list_and_check_say_how_to_approve() {
    let Some(env) = repository() else { return };
    // The folder is not trusted: Claude Code ignores approvals until it
    // is, so the hint that works carries `--trust` and says what it does.
    let out = env.run(&["list"]);
    assert!(
        out.stderr.contains(
            "hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust github docs`\nhint: `--trust` also records that you trust this folder"
        ),
        "{out}"
    );
    let listed = env.run(&["list", "--json"]).json();
    assert_eq!(
        listed["servers"][0]["approve_command"],
        "mcpenv approve --trust github"
    );
    let checked = env.run(&["check", "--json"]).json();
    assert_eq!(
        checked["approve_command"],
        "mcpenv approve --trust github docs"
    );
    let out = env.run(&["check"]);
    assert!(
        out.stdout.contains(
            "Approve the pending project servers with `mcpenv approve --trust github docs`; `--trust` also records"
        ),
        "{out}"
    );
    // Without a terminal nothing records trust, so they stay pending, and
    // the hint stays the one that works (it no longer loops on `approve`).
    env.run(&["approve", "--all"]).expect_code(0);
    let checked = env.run(&["check", "--json"]).json();
    assert_eq!(
        checked["approve_command"],
        "mcpenv approve --trust github docs"
    );
    let out = env.run(&["list"]);
    assert!(
        out.stderr
            .contains("approve it with `mcpenv approve --trust github docs`"),
        "{out}"
    );
    // Following it settles both: nothing left to approve.
    env.run(&["approve", "--trust", "github", "docs"])
        .expect_code(0);
    let checked = env.run(&["check", "--json"]).json();
    assert_eq!(checked["approve_command"], serde_json::Value::Null);
    let out = env.run(&["list"]);
    assert!(!out.stderr.contains("approve"), "{out}");
}

#[test]
fn in_a_trusted_folder_the_approve_hint_needs_no_trust() {
    let Some(env) = repository() else { return };
    env.run(&["approve", "--trust", "github"]).expect_code(0);
    let out = env.run(&["list"]);
    assert!(
        out.stderr.contains(
            "hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve docs`"
        ),
        "{out}"
    );
    assert!(!out.stderr.contains("--trust"), "{out}");
    let out = env.run(&["check"]);
    assert!(
        out.stdout
            .contains("Approve the pending project servers with `mcpenv approve docs`\n"),
        "{out}"
    );
    env.run(&["approve", "docs"]).expect_code(0);
    let checked = env.run(&["check", "--json"]).json();
    assert_eq!(checked["approve_command"], serde_json::Value::Null);
}

#[test]
fn onboard_to_claude_settings_leaves_the_tree_clean() {
    let Some(env) = repository() else { return };
    env.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\"api\": {\"command\": \"sh\", \"env\": {\"TOKEN\": \"${API_TOKEN}\"}}}}",
    );
    commit_mcp_json(&env);
    let mut env = env;
    env.set_env("API_TOKEN", "value-1");
    env.run(&["onboard", "--from-env", "--to", "claude-settings"])
        .expect_code(0);
    assert!(env.project.join(".claude/settings.local.json").is_file());
    assert!(!env.project.join(".gitignore").exists());
    assert_eq!(porcelain(&env.project), "");
}

/// The approval `mcpenv list --json` gives project server `name`.
fn mcpenv_approval(env: &TestEnv, name: &str) -> String {
    let listed = env.run(&["list", "--json"]).json();
    listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|server| server["name"] == name && server["scope"] == "project")
        .and_then(|server| server["approval"].as_str())
        .unwrap_or_else(|| panic!("no approval for {name}: {listed}"))
        .to_string()
}

/// Claude Code's `Status:` line for `name`.
fn claude_status(env: &TestEnv, name: &str) -> Option<String> {
    let (_, text) = run_claude(env, &env.project, &["mcp", "get", name])?;
    Some(
        text.lines()
            .find_map(|line| line.trim().strip_prefix("Status: "))
            .unwrap_or_else(|| panic!("no status for {name}:\n{text}"))
            .to_string(),
    )
}

#[test]
fn claude_code_reads_what_approve_reject_and_reset_write() {
    let Some(env) = repository() else { return };
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    let pending = "⏸ Pending approval (run `claude` to approve)";
    assert_eq!(claude_status(&env, "github").unwrap(), pending);

    // Claude Code 2.1.332 reads approvals from `settings.local.json` only
    // in a folder whose trust dialog was accepted.
    env.run(&["approve", "github"]).expect_code(0);
    assert_eq!(claude_status(&env, "github").unwrap(), pending);
    // mcpenv agrees with Claude Code at every step.
    assert_eq!(mcpenv_approval(&env, "github"), "pending");
    // `--trust` records what accepting the dialog records.
    let out = env.run(&["approve", "--trust", "github"]).expect_code(0);
    assert!(
        out.stderr
            .contains("Recorded that you trust this folder in Claude Code"),
        "{out}"
    );
    let status = claude_status(&env, "github").unwrap();
    assert!(
        !status.contains("Pending") && !status.contains("Rejected"),
        "{status}"
    );
    assert_eq!(mcpenv_approval(&env, "github"), "approved");

    env.run(&["reject", "github"]).expect_code(0);
    assert_eq!(
        claude_status(&env, "github").unwrap(),
        "✘ Rejected (see disabledMcpjsonServers in settings)"
    );

    assert_eq!(mcpenv_approval(&env, "github"), "rejected");
    env.run(&["reset-project-choices"]).expect_code(0);
    assert_eq!(claude_status(&env, "github").unwrap(), pending);
    assert_eq!(mcpenv_approval(&env, "github"), "pending");
    assert_eq!(porcelain(&env.project), "");
}
