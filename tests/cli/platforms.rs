//! Teammates on other systems: `check --for`, the cheap default warnings
//! about a committed `.mcp.json`, and `add --portable`, through the real
//! binary, with what the pinned Claude Code reads back.

use insta::assert_snapshot;

use crate::claude::run_claude;
use crate::harness::TestEnv;

/// A team file with one entry of each kind: portable, Windows-only,
/// a person's own path and a path of one system's layout.
const TEAM_FILE: &str = r#"{
  "mcpServers": {
    "docs": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]},
    "windows": {"command": "cmd", "args": ["/c", "npx", "-y", "@modelcontextprotocol/server-memory"]},
    "mine": {"command": "node", "args": ["/Users/ada/mcp/server.js"]},
    "brew": {"command": "/opt/homebrew/bin/uvx", "args": ["mcp-server-git"]}
  }
}
"#;

/// The findings of `check --json` with one of `codes`.
fn platform_findings<'a>(
    json: &'a serde_json::Value,
    codes: &[&str],
) -> Vec<&'a serde_json::Value> {
    json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| codes.contains(&finding["code"].as_str().unwrap()))
        .collect()
}

#[test]
fn check_for_windows_flags_a_bare_npx_and_what_cannot_start_there() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", TEAM_FILE);
    let out = env.run(&["check", "--for", "windows", "--json"]);
    let json = out.json();
    let found: Vec<String> = platform_findings(&json, &["platform-command", "windows-batch-file"])
        .into_iter()
        .map(|finding| {
            format!(
                "{} {} {}",
                finding["severity"].as_str().unwrap(),
                finding["code"].as_str().unwrap(),
                finding["server"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "warning windows-batch-file docs",
            "error platform-command mine",
            "error platform-command brew",
        ]
    );
    // The Windows form is fine on Windows.
    assert!(!found.iter().any(|line| line.ends_with(" windows")));
    assert_eq!(json["ok"], false);
    let out = env.run(&["check", "--for", "windows"]).expect_code(1);
    let text = out.to_string();
    assert!(
        text.contains(
            "warning: `.mcp.json`: `docs` runs `npx`, a batch file on Windows (`npx.cmd`)"
        ),
        "{text}"
    );
    assert!(
        text.contains("mcpenv add -s local docs -- cmd /c npx -y @upstash/context7-mcp"),
        "{text}"
    );
    assert!(
        text.contains("hint: write it as `uvx mcp-server-git` in `.mcp.json`"),
        "{text}"
    );
    // The Windows form is missing here too: its hint says whose it is,
    // never "install `cmd`".
    assert!(!text.contains("install `cmd`"), "{text}");
    assert!(
        text.contains("`windows` runs `cmd`, which exists only on Windows"),
        "{text}"
    );
}

#[test]
fn a_bare_npx_alone_is_a_warning_for_windows_not_a_failure() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"docs": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]}}}"#,
    );
    let out = env.run(&["check", "--for", "windows"]).expect_code(0);
    assert_snapshot!(out, @r#"
    docs  project  pending approval
      command `npx`  found

    warning: `.mcp.json`: `docs` runs `npx`, a batch file on Windows (`npx.cmd`): Claude Code 2.1.332 starts it, but releases that warned "Windows requires 'cmd /c' wrapper" do not
      hint: a teammate on such a release can start it through `cmd /c` for themselves, with a local entry of the same name (and the entry's `env`, if it has one): `mcpenv add -s local docs -- cmd /c npx -y @upstash/context7-mcp`

    The one server in effect has what it needs (0 errors, 1 warning)
    Approve the pending project servers with `mcpenv approve --trust docs`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 0]
    "#);
    // `--strict` makes a warning fail, as everywhere.
    env.run(&["check", "--for", "windows", "--strict"])
        .expect_code(1);
    // Nothing about Windows without `--for`: it depends on the release.
    let out = env.run(&["check"]).expect_code(0);
    assert!(!out.to_string().contains("batch file"), "{out}");
}

#[test]
fn the_default_check_warns_only_about_what_surely_fails_elsewhere() {
    let env = TestEnv::new();
    // `sh` is on every Unix PATH, so nothing fails here: what is left is
    // what fails on another system.
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
          "docs": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]},
          "mine": {"command": "sh", "args": ["/Users/ada/mcp/start"]},
          "script": {"command": "/bin/sh", "args": ["-c", "exit 0"]}
        }}"#,
    );
    let out = env.run(&["check", "--json"]);
    let json = out.json();
    let platform: Vec<String> = platform_findings(&json, &["platform-command"])
        .into_iter()
        .map(|finding| {
            format!(
                "{}: {}",
                finding["severity"].as_str().unwrap(),
                finding["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        platform,
        [
            "warning: `mine` uses `/Users/ada/mcp/start`, inside one person's home folder: it exists on their machine only",
            "warning: `script` runs `/bin/sh`, a path that cannot exist on Windows",
        ]
    );
    // Nothing about `npx` on Windows: that depends on the teammate's release.
    assert!(!out.to_string().contains("batch file"), "{out}");
}

#[test]
fn a_windows_command_missing_here_says_how_to_write_it_for_everyone() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"memory": {"command": "cmd", "args": ["/c", "npx", "-y", "@modelcontextprotocol/server-memory"]}}}"#,
    );
    let out = env.run(&["check"]).expect_code(1);
    let text = out.to_string();
    // One error, not a second warning about the same command.
    assert!(
        text.contains("error: `.mcp.json`: `memory` runs `cmd`, which is not on PATH"),
        "{text}"
    );
    assert!(
        text.contains(
            "hint: `memory` runs `cmd`, which exists only on Windows: it cannot start on"
        ),
        "{text}"
    );
    assert!(
        text.contains("write it as `npx -y @modelcontextprotocol/server-memory` in `.mcp.json`"),
        "{text}"
    );
    assert!(!text.contains("warning: `.mcp.json`: `memory`"), "{text}");
}

#[test]
fn a_local_override_does_not_hide_what_teammates_get() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"tool": {"command": "cmd", "args": ["/c", "npx", "-y", "pkg"]}}}"#,
    );
    env.run(&["add", "tool", "--", "npx", "-y", "pkg"])
        .expect_code(0);
    let out = env.run(&["check", "--for", "macos", "--json"]);
    let json = out.json();
    let finding = *platform_findings(&json, &["platform-command"])
        .first()
        .expect("the project's entry is judged");
    assert_eq!(finding["severity"], "error");
    assert!(finding["file"].as_str().unwrap().ends_with(".mcp.json"));
    // What this person runs is their local entry, which is fine.
    assert_eq!(json["servers"][0]["scope"], "local");
    assert_eq!(json["servers"][0]["ok"], true);
}

#[test]
fn add_portable_writes_the_form_every_system_starts() {
    let env = TestEnv::new();
    let out = env
        .run(&[
            "add",
            "-s",
            "project",
            "--portable",
            "memory",
            "--",
            "cmd",
            "/c",
            "npx",
            "-y",
            "@modelcontextprotocol/server-memory",
        ])
        .expect_code(0);
    assert_snapshot!(out, @"
    ----- stderr -----
    note: `cmd /c npx -y @modelcontextprotocol/server-memory` is written as `npx -y @modelcontextprotocol/server-memory`, which starts on Windows, macOS and Linux
    note: `npx` is a batch file on Windows (`npx.cmd`): Claude Code 2.1.332 starts it there; `mcpenv check --for windows` says what a teammate on an older release can do
    Added stdio MCP server `memory` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust memory`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "memory": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-memory"
          ],
          "env": {}
        }
      }
    }
    "#);
    // A path to a program every system has by name becomes that name.
    env.run(&[
        "add",
        "-s",
        "project",
        "--portable",
        "git",
        "--",
        "/opt/homebrew/bin/uvx",
        "mcp-server-git",
    ])
    .expect_code(0);
    let written: serde_json::Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    assert_eq!(written["mcpServers"]["git"]["command"], "uvx");
    assert_eq!(written["mcpServers"]["git"]["args"][0], "mcp-server-git");
    // What it wrote passes the check for every system.
    let out = env.run(&["check", "--for", "windows,macos,linux", "--json"]);
    let json = out.json();
    assert!(
        platform_findings(&json, &["platform-command"]).is_empty(),
        "{json}"
    );
    // And Claude Code reads it back as the stdio server meant.
    if let Some((code, text)) = run_claude(&env, &env.project, &["mcp", "get", "memory"]) {
        assert_eq!(code, 0, "{text}");
        assert!(text.contains("Command: npx"), "{text}");
        assert!(
            text.contains("Args: -y @modelcontextprotocol/server-memory"),
            "{text}"
        );
    }
}

#[test]
fn add_portable_refuses_what_has_no_portable_form() {
    let env = TestEnv::new();
    let out = env
        .run(&[
            "add",
            "-s",
            "project",
            "--portable",
            "start",
            "--",
            "./start.sh",
        ])
        .expect_code(2);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `./start.sh` cannot start on Windows: no form of it starts on every system

    hint: drop `--portable` to add `./start.sh` as it is, or run the server through a program every system has by name (`node`, `python3`, `uvx`, `npx`)
    [exit status: 2]
    ");
    let out = env
        .run(&[
            "add",
            "-s",
            "project",
            "--portable",
            "exe",
            "--",
            "cmd",
            "/c",
            "server.exe",
        ])
        .expect_code(2);
    assert!(
        out.to_string()
            .contains("`server.exe` cannot start on Linux"),
        "{out}"
    );
    let out = env
        .run(&[
            "add",
            "-t",
            "http",
            "--portable",
            "web",
            "https://mcp.example.com/mcp",
        ])
        .expect_code(2);
    assert!(out.to_string().contains("applies only to stdio"), "{out}");
    assert!(!env.project.join(".mcp.json").exists());
}

#[test]
fn a_hostile_entry_reaches_the_hint_quoted_and_escaped() {
    let env = TestEnv::new();
    // A repository's arguments, shell syntax and a terminal escape among
    // them, are quoted in the command the hint suggests, and the escape is
    // shown, never sent raw.
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"docs": {"command": "npx", "args": ["-y", "pkg;$(touch pwned)", "\u001b[2Jx"]}}}"#,
    );
    let out = env.run(&["check", "--for", "windows"]).expect_code(0);
    let text = out.to_string();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("'pkg;$(touch pwned)'"), "{text}");
    assert!(!env.project.join("pwned").exists());
}
