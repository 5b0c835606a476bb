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
    ])
    .expect_code(0);
    env.run(&["import", "--from", "cursor", "--replace"])
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
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--check"]), @"
    ----- stderr -----
    `[ROOT]/project/.cursor/mcp.json` is out of date with the 3 servers; run `mcpenv export --to cursor`
    [exit status: 1]
    ");
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
fn clients_that_expand_nothing_get_values_only_outside_the_repository() {
    let mut env = TestEnv::new();
    project(&env);
    assert_snapshot!(env.run(&["export", "--to", "zed"]), @"
    ----- stderr -----
    error: zed expands no placeholders, so its file would hold the secrets themselves; mcpenv never writes those into the repository

    hint: export to its user file instead: `mcpenv export --to zed --scope user`
    [exit status: 2]
    ");
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
    use mcpenv::model::ServerEntry;
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
