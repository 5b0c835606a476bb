//! `import` and `export`: other clients' files, their placeholder syntax
//! translated both ways, comments and foreign keys kept.

use insta::assert_snapshot;

use crate::harness::TestEnv;

const PAT: &str = "ghp_Xq7LmR2vT9kW4pZ8nB3cJ6hF1dS5gA0yE2uO";

/// A project whose `.mcp.json` has a stdio server with a secret variable,
/// one with a defaulted argument and a remote with a bearer token.
fn project(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}
  }
}"#,
    );
}

#[test]
fn import_from_cursor_translates_placeholders_and_extracts_literal_secrets() {
    let env = TestEnv::new();
    env.write(
        "project/.cursor/mcp.json",
        &format!(
            r#"{{"mcpServers": {{
  "github": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {{"GITHUB_TOKEN": "{PAT}"}}}},
  "linear": {{"url": "https://mcp.linear.app/mcp", "headers": {{"Authorization": "Bearer ${{env:LINEAR_API_KEY}}"}}}}
}}}}"#
        ),
    );
    let out = env.run(&["import", "--from", "cursor", "-s", "project"]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Moved github env.GITHUB_TOKEN into `.env` as `GITHUB_TOKEN` (ghp_…E2uO)
    Imported 2 servers from cursor (`[ROOT]/project/.cursor/mcp.json`) into project scope: `github`, `linear`
    warning: `[ROOT]/project/.cursor/mcp.json` still holds the moved secret in plain text: import reads that file and leaves it as it was
    hint: `mcpenv export --to cursor --env-file` replaces it there with an `envFile` that Cursor reads it from
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "github": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-github"
          ],
          "env": {
            "GITHUB_TOKEN": "${GITHUB_TOKEN}"
          }
        },
        "linear": {
          "type": "http",
          "url": "https://mcp.linear.app/mcp",
          "headers": {
            "Authorization": "Bearer ${LINEAR_API_KEY}"
          }
        }
      }
    }
    "#);
    let values: Vec<(String, String)> = dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(values, [("GITHUB_TOKEN".to_string(), PAT.to_string())]);
    // Import never edits Cursor's file; the hint's command takes the
    // literal out of it, and Cursor then reads the value from `.env`.
    assert!(env.read("project/.cursor/mcp.json").contains(PAT));
    let hint = out
        .stderr
        .lines()
        .find_map(|line| line.strip_prefix("hint: `mcpenv "))
        .and_then(|rest| rest.split_once('`'))
        .map(|(command, _)| command.split(' ').collect::<Vec<_>>())
        .expect("a hint with a command");
    env.run(&hint).expect_code(0);
    let cursor = env.read("project/.cursor/mcp.json");
    assert!(
        !cursor.contains(PAT) && cursor.contains(r#""envFile": "${workspaceFolder}/.env""#),
        "{cursor}"
    );
}

#[test]
fn import_from_codex_maps_variable_name_keys() {
    let env = TestEnv::new();
    env.write(
        "home/.codex/config.toml",
        "# my codex config\n[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-github\"]\nenv_vars = [\"GITHUB_TOKEN\"]\n\n[mcp_servers.linear]\nurl = \"https://mcp.linear.app/mcp\"\nbearer_token_env_var = \"LINEAR_API_KEY\"\n",
    );
    env.run(&["import", "--from", "codex"]).expect_code(0);
    let got = env.run(&["get", "gh", "--json"]).expect_code(0).json();
    assert_eq!(got["entry"]["env"]["GITHUB_TOKEN"], "${GITHUB_TOKEN}");
    let got = env.run(&["get", "linear", "--json"]).expect_code(0).json();
    assert_eq!(
        got["entry"]["headers"]["Authorization"],
        "Bearer ${LINEAR_API_KEY}"
    );
}

#[test]
fn a_name_clash_fails_with_hints_and_rename_or_replace_resolve_it() {
    let env = TestEnv::new();
    env.run(&["add", "github", "node"]).expect_code(0);
    env.write(
        "project/.cursor/mcp.json",
        r#"{"mcpServers": {"github": {"command": "npx", "args": ["-y", "pkg"]}}}"#,
    );
    assert_snapshot!(env.run(&["import", "--from", "cursor"]), @"
    ----- stderr -----
    error: MCP server `github` already exists in local scope; nothing was imported

    hint: replace it with `--replace`, or import it under another name: `--rename github=NEW`
    [exit status: 1]
    ");
    env.run(&[
        "import",
        "--from",
        "cursor",
        "--rename",
        "github=github-cursor",
        "--trust-file",
    ])
    .expect_code(0);
    env.run(&["import", "--from", "cursor", "--replace", "--trust-file"])
        .expect_code(0);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let names: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["github", "github-cursor"]);
}

#[test]
fn export_to_cursor_writes_its_syntax_and_check_follows_changes() {
    let env = TestEnv::new();
    project(&env);
    let out = env.run(&["export", "--to", "cursor"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Exported 2 servers to cursor
    Wrote `[ROOT]/project/.cursor/mcp.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.cursor/mcp.json"), @r#"
    {
      "mcpServers": {
        "github": {
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-github"
          ],
          "env": {
            "GITHUB_TOKEN": "${env:GITHUB_TOKEN}"
          }
        },
        "linear": {
          "url": "https://mcp.linear.app/mcp",
          "headers": {
            "Authorization": "Bearer ${env:LINEAR_API_KEY}"
          }
        }
      }
    }
    "#);
    env.run(&["export", "--to", "cursor", "--check"])
        .expect_code(0);
    env.run(&["add", "-s", "project", "extra", "node"])
        .expect_code(0);
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--check"]), @r#"
    --- a/.cursor/mcp.json
    +++ b/.cursor/mcp.json
    @@ -15,6 +15,9 @@
           "headers": {
             "Authorization": "Bearer ${env:LINEAR_API_KEY}"
           }
    +    },
    +    "extra": {
    +      "command": "node"
         }
       }
     }
    ----- stderr -----
    `[ROOT]/project/.cursor/mcp.json` is out of date with the 3 servers; run `mcpenv export --to cursor`
    [exit status: 1]
    "#);
}

#[test]
fn export_to_vscode_keeps_comments_and_foreign_servers() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "project/.vscode/mcp.json",
        "{\n  // team servers\n  \"servers\": {\n    \"mine\": {\"type\": \"stdio\", \"command\": \"my-tool\"} // keep me\n  },\n  \"inputs\": []\n}\n",
    );
    env.run(&["export", "--to", "vscode"]).expect_code(0);
    let text = env.read("project/.vscode/mcp.json");
    assert!(
        text.contains("// team servers")
            && text.contains("// keep me")
            && text.contains("\"mine\""),
        "{text}"
    );
    assert!(
        text.contains("${env:GITHUB_TOKEN}") && text.contains("Bearer ${env:LINEAR_API_KEY}"),
        "{text}"
    );
}

#[test]
fn export_to_codex_keeps_toml_formatting() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "home/.codex/config.toml",
        "# keep this comment\nmodel = \"o3\"\n\n[mcp_servers.mine]\ncommand = \"my-tool\"\n",
    );
    env.run(&["add", "-s", "user", "tool", "--", "npx", "-y", "pkg"])
        .expect_code(0);
    env.run(&["export", "--to", "codex", "--scope", "user"])
        .expect_code(0);
    let text = env.read("home/.codex/config.toml");
    assert!(
        text.starts_with("# keep this comment\nmodel = \"o3\"\n")
            && text.contains("[mcp_servers.mine]")
            && text.contains("[mcp_servers.tool]"),
        "{text}"
    );
}

#[test]
fn a_project_without_variables_exports_to_zed_like_to_any_client() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", r#"{"mcpServers": {}}"#);
    assert_snapshot!(env.run(&["export", "--to", "zed"]), @"
    ----- stderr -----
    Nothing to export to zed: the project scope has no servers; `[ROOT]/project/.zed/settings.json` left as it was
    [exit status: 0]
    ");
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"docs": {"type": "stdio", "command": "npx", "args": ["-y", "docs-server"]}}}"#,
    );
    assert_snapshot!(env.run(&["export", "--to", "zed"]), @"
    ----- stderr -----
    Exported 1 server to zed
    Wrote `[ROOT]/project/.zed/settings.json`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.zed/settings.json"), @r#"
    {
      "context_servers": {
        "docs": {
          "command": "npx",
          "args": [
            "-y",
            "docs-server"
          ]
        }
      }
    }
    "#);
}

#[test]
fn clients_that_expand_nothing_get_values_only_outside_the_repository() {
    let mut env = TestEnv::new();
    project(&env);
    assert_snapshot!(env.run(&["export", "--to", "zed"]), @"
    ----- stderr -----
    error: zed expands no placeholders, so `[ROOT]/project/.zed/settings.json` (inside the repository) would hold the values of `github`'s and `linear`'s variables; mcpenv never writes secrets into the repository

    hint: export to its user file instead: `mcpenv export --to zed --scope user`
    [exit status: 1]
    ");
    assert!(!env.project.join(".zed/settings.json").exists());
    env.run(&[
        "add",
        "-s",
        "user",
        "gh",
        "-e",
        "GITHUB_TOKEN=${GITHUB_TOKEN}",
        "--",
        "npx",
        "pkg",
    ])
    .expect_code(0);
    env.set_env("GITHUB_TOKEN", PAT);
    let out = env.run(&["export", "--to", "zed", "--scope", "user"]);
    out.assert_no_secret(&[PAT]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stderr.contains("now holds secret values"), "{out}");
    assert!(env.read("home/.config/zed/settings.json").contains(PAT));
    assert_eq!(env.mode("home/.config/zed/settings.json"), 0o600);
}

#[test]
fn a_round_trip_through_a_client_gives_the_same_servers() {
    let env = TestEnv::new();
    project(&env);
    env.run(&["export", "--to", "cursor"]).expect_code(0);
    let fresh = TestEnv::new();
    fresh.write(
        "project/.cursor/mcp.json",
        &env.read("project/.cursor/mcp.json"),
    );
    fresh
        .run(&["import", "--from", "cursor", "-s", "project"])
        .expect_code(0);
    let original: serde_json::Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    let again: serde_json::Value = serde_json::from_str(&fresh.read("project/.mcp.json")).unwrap();
    assert_eq!(again["mcpServers"], original["mcpServers"]);
}

/// `.mcp.json` → client → `.mcp.json` gives the same servers, for every
/// client that can hold placeholders (values resolved for Zed and Claude
/// Desktop cannot come back as placeholders by design).
#[test]
fn every_placeholder_client_round_trips() {
    use mcpenv::clients::{Client, export, import};
    use mcpenv::config::model::ServerEntry;
    use serde_json::json;

    let servers: Vec<(String, ServerEntry)> = vec![
        (
            "github".into(),
            ServerEntry::from_value(
                json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}),
            ),
        ),
        (
            "linear".into(),
            ServerEntry::from_value(
                json!({"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}),
            ),
        ),
        (
            "docs".into(),
            ServerEntry::from_value(
                json!({"type": "http", "url": "https://docs.example.com/mcp", "headers": {"X-Api-Key": "${DOCS_KEY}"}}),
            ),
        ),
    ];
    for client in [
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
        Client::Gemini,
        Client::Codex,
    ] {
        let exported =
            export::export(client, None, &servers, &export::ExportOptions::default()).unwrap();
        let path = if client == Client::Codex {
            "config.toml"
        } else {
            "mcp.json"
        };
        let value = mcpenv::clients::parse(std::path::Path::new(path), &exported.text).unwrap();
        let back: Vec<(String, serde_json::Value)> = import::import(client, &value)
            .into_iter()
            .map(|server| (server.name, server.entry))
            .collect();
        let expected: Vec<(String, serde_json::Value)> = servers
            .iter()
            .map(|(name, entry)| (name.clone(), entry.to_value()))
            .collect();
        assert_eq!(back, expected, "{client}:\n{}", exported.text);
    }
}

/// `claude mcp list` run hermetically in the project; `None` (and a note)
/// when the pinned Claude Code is not installed.
fn claude_mcp_list(env: &TestEnv) -> Option<String> {
    let Some(claude) = crate::claude::claude() else {
        crate::skips::skip(&format!(
            "the Claude Code half: Claude Code {} is not installed",
            crate::claude::PINNED_CLAUDE_CODE
        ));
        return None;
    };
    let output = crate::claude::hermetic_claude(&claude, env, &env.project, &["mcp", "list"])
        .output()
        .unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Cursor's `${workspaceFolder}` becomes a path relative to where Claude
/// Code starts the server, `${userHome}` becomes `${HOME}`, and neither is
/// a variable anyone is asked to set; a server that needs the editor's
/// open file is left out, saying why. With Claude Code installed, the
/// server really starts in the project and gets those paths.
#[test]
fn editor_variables_become_what_claude_code_starts_servers_with() {
    use std::os::unix::fs::PermissionsExt;

    let env = TestEnv::new();
    env.write(
        "project/.cursor/mcp.json",
        include_str!("../clients/import/cursor-editor-variables.mcp.json"),
    );
    let out = env.run(&["import", "--from", "cursor", "-s", "project"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `linter` was not imported: `${relativeFile}` is the file open in the editor, which Cursor fills in and Claude Code has no value for
    warning: `probe`: Cursor's `${workspaceFolder}` became `.`: Claude Code starts stdio servers in the folder it was started in (the project)
    warning: `probe`: Cursor's `${userHome}` became `${HOME}`
    warning: `probe`: Cursor's `${workspaceFolderBasename}` became `project`, the project folder's name
    warning: `probe`: `envFile` is not supported by Claude Code; its variables must be set another way
    Imported 1 server from cursor (`[ROOT]/project/.cursor/mcp.json`) into project scope: `probe`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
    let written: serde_json::Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    assert_eq!(
        written["mcpServers"]["probe"],
        serde_json::json!({"type": "stdio", "command": "./bin/probe.sh", "args": ["./probe.out", "${HOME}/.cache", "project"], "env": {}})
    );
    assert!(!env.project.join(".env.example").exists());
    let check = env.run(&["check"]);
    assert!(
        !check.stdout.contains("workspaceFolder")
            && !check.stderr.contains("workspaceFolder")
            && !check.stderr.contains("`HOME`"),
        "{check}"
    );
    // What Claude Code makes of it.
    let script = env.write(
        "project/bin/probe.sh",
        "#!/bin/sh\n{ echo \"cwd=$(pwd)\"; echo \"args=$*\"; } > \"$1\"\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    let Some(listed) = claude_mcp_list(&env) else {
        return;
    };
    assert!(listed.contains("probe:"), "{listed}");
    assert!(
        !listed.contains("Missing environment variables"),
        "{listed}"
    );
    let seen = std::fs::read_to_string(env.project.join("probe.out")).unwrap_or_else(|error| {
        panic!("the server did not write `probe.out` in the project ({error}):\n{listed}")
    });
    assert_eq!(
        seen,
        format!(
            "cwd={}\nargs=./probe.out {}/.cache project\n",
            env.project.display(),
            env.home.display()
        )
    );
}

/// A name Claude Code cannot take (a registry id, a reserved name) does not
/// stop the import: the server comes in under a name that works, clear of
/// the others, and `--rename` still picks one.
#[test]
fn names_claude_code_cannot_take_are_imported_under_a_suggested_one() {
    let env = TestEnv::new();
    let file = include_str!("../clients/import/vscode-registry-names.mcp.json");
    env.write("project/.vscode/mcp.json", file);
    let out = env.run(&["import", "--from", "vscode", "-s", "project"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `io.github.example/browser-tools` imported as `browser-tools-2`: Claude Code takes only letters, digits, `-` and `_` in a name; for another name add `--rename 'io.github.example/browser-tools=NEW'` to the command
    warning: `browser-tools-2`: `gallery` is not supported by Claude Code; dropped
    warning: `browser-tools-2`: `version` is not supported by Claude Code; dropped
    warning: `com.example/browser-tools` imported as `browser-tools-3`: Claude Code takes only letters, digits, `-` and `_` in a name; for another name add `--rename 'com.example/browser-tools=NEW'` to the command
    warning: `workspace` imported as `workspace-server`: Claude Code reserves that name; for another name add `--rename 'workspace=NEW'` to the command
    Imported 4 servers from vscode (`[ROOT]/project/.vscode/mcp.json`) into project scope: `browser-tools-2`, `browser-tools-3`, `browser-tools`, `workspace-server`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
    // Again: nothing new, the same names.
    let again = env.run(&["import", "--from", "vscode", "-s", "project"]);
    assert_snapshot!(again, @"
    ----- stderr -----
    warning: `io.github.example/browser-tools` imported as `browser-tools-2`: Claude Code takes only letters, digits, `-` and `_` in a name; for another name add `--rename 'io.github.example/browser-tools=NEW'` to the command
    warning: `com.example/browser-tools` imported as `browser-tools-3`: Claude Code takes only letters, digits, `-` and `_` in a name; for another name add `--rename 'com.example/browser-tools=NEW'` to the command
    warning: `workspace` imported as `workspace-server`: Claude Code reserves that name; for another name add `--rename 'workspace=NEW'` to the command
    Already in project scope as imported: `browser-tools-2`, `browser-tools-3`, `browser-tools`, `workspace-server`
    Nothing to import from vscode (`[ROOT]/project/.vscode/mcp.json`)
    [exit status: 0]
    ");
    let fresh = TestEnv::new();
    fresh.write("project/.vscode/mcp.json", file);
    let out = fresh.run(&[
        "import",
        "--from",
        "vscode",
        "-s",
        "project",
        "--server",
        "io.github.example/browser-tools",
        "--rename",
        "io.github.example/browser-tools=devtools",
    ]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `devtools`: `gallery` is not supported by Claude Code; dropped
    warning: `devtools`: `version` is not supported by Claude Code; dropped
    Imported 1 server from vscode (`[ROOT]/project/.vscode/mcp.json`) into project scope: `devtools`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
    let bad = fresh.run(&[
        "import",
        "--from",
        "vscode",
        "--rename",
        "browser-tools=not/valid",
    ]);
    assert_eq!(bad.code, 2, "{bad}");
}

/// Servers switched off in the client stay out unless asked for; a file
/// that has nothing Claude Code can take is a failure that says why.
#[test]
fn switched_off_servers_are_left_out_unless_included() {
    let env = TestEnv::new();
    env.write(
        "home/.codeium/windsurf/mcp_config.json",
        include_str!("../clients/import/windsurf-disabled.mcp_config.json"),
    );
    let out = env.run(&["import", "--from", "windsurf", "-s", "project"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `tracker`, `metrics` not imported: switched off in Windsurf (add `--include-disabled` to import them anyway)
    Imported 1 server from windsurf (`[ROOT]/home/.codeium/windsurf/mcp_config.json`) into project scope: `fetch`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
    let only_off = env.run(&[
        "import", "--from", "windsurf", "-s", "project", "--server", "tracker",
    ]);
    assert_snapshot!(only_off, @"
    ----- stderr -----
    error: nothing could be imported from `[ROOT]/home/.codeium/windsurf/mcp_config.json`

    hint: `tracker` is switched off in Windsurf: add `--include-disabled` to import it anyway
    [exit status: 1]
    ");
    let included = env.run(&[
        "import",
        "--from",
        "windsurf",
        "-s",
        "project",
        "--include-disabled",
    ]);
    assert_snapshot!(included, @"
    ----- stderr -----
    warning: `tracker`: `disabled: true` dropped; the server will be enabled in Claude Code
    warning: `metrics`: `disabled: true` dropped; the server will be enabled in Claude Code
    Already in project scope as imported: `fetch`
    Imported 2 servers from windsurf (`[ROOT]/home/.codeium/windsurf/mcp_config.json`) into project scope: `tracker`, `metrics`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    ");
}

/// A file whose every server is out of Claude Code's reach fails, with one
/// hint per server; so does a file with its servers under another
/// client's key.
#[test]
fn nothing_importable_fails_with_every_reason() {
    let env = TestEnv::new();
    env.write(
        "project/.cursor/mcp.json",
        r#"{"mcpServers": {"lint": {"command": "lint", "args": ["${file}"]}, "empty": {"args": ["x"]}, "old": {"command": "x", "disabled": true}}}"#,
    );
    assert_snapshot!(env.run(&["import", "--from", "cursor", "--dry-run"]), @"
    ----- stderr -----
    error: nothing could be imported from `[ROOT]/project/.cursor/mcp.json`

    hint: `lint` was not imported: `${file}` is the file open in the editor, which Cursor fills in and Claude Code has no value for
    hint: `empty` was not imported: stdio entry has no `command`
    hint: `old` is switched off in Cursor: add `--include-disabled` to import it anyway
    [exit status: 1]
    ");
    env.write(
        "project/.cursor/mcp.json",
        r#"{"servers": {"fs": {"command": "npx", "args": ["-y", "fs-mcp"]}}}"#,
    );
    assert_snapshot!(env.run(&["import", "--from", "cursor"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.cursor/mcp.json` defines no MCP servers for Cursor

    hint: check that this is the right file
    hint: its servers are under `servers`, where VS Code reads them; Cursor reads `mcpServers`
    [exit status: 1]
    ");
}

/// Codex's project `.codex/config.toml` is read, written and scanned; while
/// the project is not trusted in `~/.codex/config.toml`, mcpenv says that
/// Codex ignores the file.
#[test]
fn codex_project_file_is_read_written_and_scanned() {
    let env = TestEnv::new();
    env.write(
        "project/.codex/config.toml",
        include_str!("../clients/import/codex-project.config.toml"),
    );
    let out = env.run(&["import", "--from", "codex", "-s", "project"]);
    out.assert_no_secret(&["trk_live_9fQ2xLmZ7vB4nR8tK1wY6pD3"]);
    assert_snapshot!(out, @r#"
    ----- stderr -----
    warning: Codex ignores `[ROOT]/project/.codex/config.toml` until it trusts `[ROOT]/project`: accept when Codex asks, or add `[projects."[ROOT]/project"]` with `trust_level = "trusted"` to `[ROOT]/home/.codex/config.toml`
    Moved tracker env.TRACKER_TOKEN into `.env` as `TRACKER_TOKEN` (trk_…6pD3)
    Imported 1 server from codex (`[ROOT]/project/.codex/config.toml`) into project scope: `tracker`
    warning: `[ROOT]/project/.codex/config.toml` still holds the moved secret in plain text: import reads that file and leaves it as it was
    hint: `mcpenv export --to codex` replaces it there with a Codex placeholder
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    [exit status: 0]
    "#);
    let scan = env.run(&["scan", "--json"]).json();
    let files: Vec<&str> = scan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["scope"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"codex"), "{scan:#}");
    env.run(&["add", "-s", "project", "docs", "--", "npx", "docs-mcp"])
        .expect_code(0);
    let out = env.run(&["export", "--to", "codex"]);
    assert_snapshot!(out, @r#"
    ----- stderr -----
    warning: Codex ignores `[ROOT]/project/.codex/config.toml` until it trusts `[ROOT]/project`: accept when Codex asks, or add `[projects."[ROOT]/project"]` with `trust_level = "trusted"` to `[ROOT]/home/.codex/config.toml`
    Exported 2 servers to codex
    Wrote `[ROOT]/project/.codex/config.toml`
    [exit status: 0]
    "#);
    let text = env.read("project/.codex/config.toml");
    assert!(
        text.starts_with("# project Codex settings\nmodel = \"o3\"\n")
            && text.contains("[mcp_servers.docs]")
            && text.contains("env_vars = [\"TRACKER_TOKEN\", \"TRACKER_URL\"]"),
        "{text}"
    );
    env.write(
        "home/.codex/config.toml",
        &format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            env.project.display()
        ),
    );
    assert_snapshot!(env.run(&["export", "--to", "codex", "--check"]), @"
    ----- stderr -----
    `[ROOT]/project/.codex/config.toml` is in sync (2 servers)
    [exit status: 0]
    ");
    env.write(
        "home/.codex/config.toml",
        &format!(
            "[projects.\"{}\"]\ntrust_level = \"untrusted\"\n",
            env.project.display()
        ),
    );
    assert_snapshot!(env.run(&["export", "--to", "codex", "--check"]), @r#"
    ----- stderr -----
    warning: Codex ignores `[ROOT]/project/.codex/config.toml`: `[ROOT]/home/.codex/config.toml` marks `[ROOT]/project` as untrusted; set its `trust_level` to `"trusted"` for Codex to read the file
    `[ROOT]/project/.codex/config.toml` is in sync (2 servers)
    [exit status: 0]
    "#);
}

/// `export` counts what it writes, in the singular when it is one, and
/// writes no file when the client can take none of the servers.
#[test]
fn export_counts_only_what_it_writes() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "-s",
        "user",
        "-t",
        "sse",
        "events",
        "https://x.test/sse",
    ])
    .expect_code(0);
    let out = env.run(&["export", "--to", "codex", "--scope", "user"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `events`: not exported: Codex has no `sse` servers
    Nothing to export to codex: its one server cannot be written for Codex; `[ROOT]/home/.codex/config.toml` left as it was
    [exit status: 0]
    ");
    assert!(!env.home.join(".codex/config.toml").exists());
    assert_snapshot!(env.run(&["export", "--to", "codex", "--scope", "user", "--check"]), @"
    ----- stderr -----
    warning: `events`: not exported: Codex has no `sse` servers
    `[ROOT]/home/.codex/config.toml` is in sync (nothing to export: its one server cannot be written for Codex)
    [exit status: 0]
    ");
    env.run(&["add", "-s", "user", "tool", "--", "npx", "-y", "tool-mcp"])
        .expect_code(0);
    assert_snapshot!(env.run(&["export", "--to", "codex", "--scope", "user"]), @"
    ----- stderr -----
    warning: `events`: not exported: Codex has no `sse` servers
    Exported 1 server to codex
    Wrote `[ROOT]/home/.codex/config.toml`
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["export", "--to", "codex", "--scope", "user"]), @"
    ----- stderr -----
    warning: `events`: not exported: Codex has no `sse` servers
    `[ROOT]/home/.codex/config.toml` already holds this server; nothing to write
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["export", "--to", "codex", "--scope", "user", "--check"]), @"
    ----- stderr -----
    warning: `events`: not exported: Codex has no `sse` servers
    `[ROOT]/home/.codex/config.toml` is in sync (1 server)
    [exit status: 0]
    ");
    let empty = TestEnv::new();
    assert_snapshot!(empty.run(&["export", "--to", "cursor"]), @"
    ----- stderr -----
    Nothing to export to cursor: the project scope has no servers; `[ROOT]/project/.cursor/mcp.json` left as it was
    [exit status: 0]
    ");
    assert!(!empty.project.join(".cursor").exists());
}

#[test]
fn import_from_gemini_says_when_a_bare_variable_gets_braces() {
    let env = TestEnv::new();
    env.write(
        "project/.gemini/settings.json",
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs-server", "$TMP/work", "${HOME}/x"]}}}"#,
    );
    let out = env
        .run(&["import", "--from", "gemini", "-s", "project"])
        .expect_code(0);
    // `$TMP` is Gemini CLI's variable and only text to Claude Code: said;
    // `${HOME}` reads the same in both: not.
    assert!(
        out.stderr.contains(
            "warning: `fs`: Gemini CLI's `$TMP` became `${TMP}`, the form Claude Code expands"
        ) && !out.stderr.contains("`${HOME}` became"),
        "{out}"
    );
    assert!(env.read("project/.mcp.json").contains(r#""${TMP}/work""#));
}
