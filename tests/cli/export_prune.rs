//! `export --prune`, `--check` with its diff, keys only the client knows,
//! and `--env-file`: mcpenv removes only what it wrote and keeps the rest.

use insta::assert_snapshot;

use crate::harness::TestEnv;

const PAT: &str = "ghp_Xq7LmR2vT9kW4pZ8nB3cJ6hF1dS5gA0yE2uO";

/// A hand-added Cursor server, with a comment, exactly as the user wrote it.
const MINE: &str = "\"mine\": {\"command\": \"my-tool\", \"args\": [\"--fast\"]} // by hand";

fn project(env: &TestEnv, servers: &str) {
    env.write(
        "project/.mcp.json",
        &format!("{{\n  \"mcpServers\": {{\n{servers}\n  }}\n}}"),
    );
}

const GITHUB: &str = r#"    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}"#;
const LINEAR: &str = r#"    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}"#;

#[test]
fn prune_removes_only_what_mcpenv_exported() {
    let env = TestEnv::new();
    project(&env, &format!("{GITHUB},\n{LINEAR}"));
    env.write(
        "project/.cursor/mcp.json",
        &format!("{{\n  \"mcpServers\": {{\n    {MINE}\n  }}\n}}\n"),
    );
    env.run(&["export", "--to", "cursor"]).expect_code(0);
    // `linear` leaves the scope; `mine` was never mcpenv's.
    project(&env, GITHUB);
    assert_snapshot!(env.run(&["export", "--to", "cursor"]), @"
    ----- stderr -----
    warning: `linear` is gone from the project scope but still in `[ROOT]/project/.cursor/mcp.json`, where mcpenv exported it earlier
    hint: remove it with `mcpenv export --to cursor --prune`
    `[ROOT]/project/.cursor/mcp.json` already holds this server; nothing to write
    [exit status: 0]
    ");
    // A check fails while it remains, even with every server in sync.
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--check"]), @r#"
    --- a/.cursor/mcp.json
    +++ b/.cursor/mcp.json
    @@ -10,12 +10,6 @@
           "env": {
             "GITHUB_TOKEN": "${env:GITHUB_TOKEN}"
           }
    -    },
    -    "linear": {
    -      "url": "https://mcp.linear.app/mcp",
    -      "headers": {
    -        "Authorization": "Bearer ${env:LINEAR_API_KEY}"
    -      }
         }
       }
     }
    ----- stderr -----
    `[ROOT]/project/.cursor/mcp.json` is out of date with the 1 server (would prune `linear`); run `mcpenv export --to cursor --prune`
    [exit status: 1]
    "#);
    let out = env.run(&["export", "--to", "cursor", "--prune", "--json"]);
    let report = out.json();
    assert_eq!(report["pruned"], serde_json::json!(["linear"]), "{out}");
    assert_eq!(report["servers"], serde_json::json!(["github"]), "{out}");
    let text = std::fs::read_to_string(env.project.join(".cursor/mcp.json")).unwrap();
    // Only the comma the first export added after it.
    assert!(
        text.contains("\"mine\": {\"command\": \"my-tool\", \"args\": [\"--fast\"]}, // by hand\n"),
        "{text}"
    );
    assert!(!text.contains("linear"), "{text}");
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--check"]), @"
    ----- stderr -----
    `[ROOT]/project/.cursor/mcp.json` is in sync (1 server)
    [exit status: 0]
    ");
    // Once gone, nothing is left to prune.
    env.run(&["export", "--to", "cursor", "--prune"])
        .expect_code(0);
    assert_eq!(
        std::fs::read_to_string(env.project.join(".cursor/mcp.json")).unwrap(),
        text
    );
}

#[test]
fn an_exported_entry_edited_since_is_never_pruned() {
    let env = TestEnv::new();
    project(&env, &format!("{GITHUB},\n{LINEAR}"));
    env.run(&["export", "--to", "cursor"]).expect_code(0);
    let file = env.project.join(".cursor/mcp.json");
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("https://mcp.linear.app/mcp", "https://mcp.linear.app/sse");
    std::fs::write(&file, &edited).unwrap();
    project(&env, GITHUB);
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--prune"]), @r#"
    ----- stderr -----
    warning: `linear` is gone from the project scope, but edited in `[ROOT]/project/.cursor/mcp.json` since mcpenv exported it; not pruned
    hint: delete it from `[ROOT]/project/.cursor/mcp.json` by hand if no longer needed, or add it back to the project scope
    `[ROOT]/project/.cursor/mcp.json` already holds this server; nothing to write
    [exit status: 0]
    "#);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    assert_snapshot!(env.run(&["export", "--to", "cursor", "--check"]), @r#"
    ----- stderr -----
    warning: `linear` is gone from the project scope, but edited in `[ROOT]/project/.cursor/mcp.json` since mcpenv exported it; not pruned
    hint: delete it from `[ROOT]/project/.cursor/mcp.json` by hand if no longer needed, or add it back to the project scope
    `[ROOT]/project/.cursor/mcp.json` is in sync (1 server)
    [exit status: 0]
    "#);
}

#[test]
fn a_check_shows_the_diff_and_passes_once_in_sync() {
    let env = TestEnv::new();
    project(&env, GITHUB);
    assert_snapshot!(env.run(&["export", "--to", "vscode", "--check"]), @r#"
    --- /dev/null
    +++ b/.vscode/mcp.json
    @@ -0,0 +1,15 @@
    +{
    +  "servers": {
    +    "github": {
    +      "type": "stdio",
    +      "command": "npx",
    +      "args": [
    +        "-y",
    +        "@modelcontextprotocol/server-github"
    +      ],
    +      "env": {
    +        "GITHUB_TOKEN": "${env:GITHUB_TOKEN}"
    +      }
    +    }
    +  }
    +}
    ----- stderr -----
    `[ROOT]/project/.vscode/mcp.json` is out of date with the 1 server; run `mcpenv export --to vscode`
    [exit status: 1]
    "#);
    env.run(&["export", "--to", "vscode"]).expect_code(0);
    assert_snapshot!(env.run(&["export", "--to", "vscode", "--check"]), @r#"
    ----- stderr -----
    `[ROOT]/project/.vscode/mcp.json` is in sync (1 server)
    [exit status: 0]
    "#);
}

/// The diff of a client that expands nothing holds resolved values and
/// literal ones: both are masked.
#[test]
fn a_check_diff_never_shows_a_secret_whole() {
    let mut env = TestEnv::new();
    let literal = "sk_live_51HqLyjWDarjtT1zdp7dcKEYmHCr2XbfT9aSQp0rXc";
    env.write(
        "home/.claude.json",
        &format!(
            r#"{{"mcpServers": {{
  "gh": {{"type": "stdio", "command": "npx", "args": ["pkg"], "env": {{"GITHUB_TOKEN": "${{GITHUB_TOKEN}}"}}}},
  "pay": {{"type": "stdio", "command": "npx", "args": ["pay"], "env": {{"STRIPE_KEY": "{literal}"}}}}
}}}}"#
        ),
    );
    env.set_env("GITHUB_TOKEN", PAT);
    let out = env.run(&["export", "--to", "zed", "--scope", "user", "--check"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stdout.contains("+++ ~/.config/zed/settings.json"),
        "{out}"
    );
    assert!(out.stdout.contains("GITHUB_TOKEN"), "{out}");
    out.assert_no_secret(&[PAT, literal]);
    let json = env.run(&[
        "export", "--to", "zed", "--scope", "user", "--check", "--json",
    ]);
    assert!(json.json()["diff"].is_string(), "{json}");
    json.assert_no_secret(&[PAT, literal]);
}

#[test]
fn keys_only_the_client_knows_survive_a_reexport() {
    let env = TestEnv::new();
    project(&env, GITHUB);
    env.run(&["export", "--to", "vscode"]).expect_code(0);
    let file = env.project.join(".vscode/mcp.json");
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "\"type\": \"stdio\",",
        "\"type\": \"stdio\",\n      \"sandboxEnabled\": true,\n      \"dev\": {\"watch\": \"src/**\"},",
    );
    std::fs::write(&file, text).unwrap();
    project(&env, &GITHUB.replace("\"-y\", ", ""));
    env.run(&["export", "--to", "vscode"]).expect_code(0);
    assert_snapshot!(std::fs::read_to_string(&file).unwrap(), @r#"
    {
      "servers": {
        "github": {
          "type": "stdio",
          "sandboxEnabled": true,
          "dev": {
            "watch": "src/**"
          },
          "command": "npx",
          "args": [
            "@modelcontextprotocol/server-github"
          ],
          "env": {
            "GITHUB_TOKEN": "${env:GITHUB_TOKEN}"
          }
        }
      }
    }
    "#);
}

#[test]
fn codex_keeps_its_own_keys_byte_for_byte() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "user", "tool", "--", "npx", "-y", "tool-mcp"])
        .expect_code(0);
    env.run(&["export", "--to", "codex", "--scope", "user"])
        .expect_code(0);
    let file = env.home.join(".codex/config.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = format!("{text}startup_timeout_sec = 30 # slow to start\nenabled = true\n");
    std::fs::write(&file, &text).unwrap();
    env.run(&["remove", "-s", "user", "tool"]).expect_code(0);
    env.run(&["add", "-s", "user", "tool", "--", "npx", "tool-mcp@2"])
        .expect_code(0);
    env.run(&["export", "--to", "codex", "--scope", "user"])
        .expect_code(0);
    assert_snapshot!(std::fs::read_to_string(&file).unwrap(), @r#"
    [mcp_servers.tool]
    command = "npx"
    args = ["tool-mcp@2"]
    startup_timeout_sec = 30 # slow to start
    enabled = true
    "#);
}

#[test]
fn env_file_lets_the_client_read_dotenv_itself() {
    let env = TestEnv::new();
    project(
        &env,
        r#"    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "${LOG_LEVEL}", "MODE": "fast"}},
    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}"#,
    );
    env.write("project/.env", &format!("GITHUB_TOKEN={PAT}\n"));
    let out = env.run(&["export", "--to", "vscode", "--env-file"]);
    out.assert_no_secret(&[PAT]);
    assert_eq!(out.code, 0, "{out}");
    assert_snapshot!(std::fs::read_to_string(env.project.join(".vscode/mcp.json")).unwrap(), @r#"
    {
      "servers": {
        "github": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-github"
          ],
          "env": {
            "LOG_LEVEL": "${env:LOG_LEVEL}",
            "MODE": "fast"
          },
          "envFile": "${workspaceFolder}/.env"
        },
        "linear": {
          "type": "http",
          "url": "https://mcp.linear.app/mcp",
          "headers": {
            "Authorization": "Bearer ${env:LINEAR_API_KEY}"
          }
        }
      }
    }
    "#);
    env.run(&["export", "--to", "vscode", "--env-file", "--check"])
        .expect_code(0);
    let out = env.run(&["export", "--to", "cursor", "--env-file=config/dev.env"]);
    assert_eq!(out.code, 0, "{out}");
    let text = std::fs::read_to_string(env.project.join(".cursor/mcp.json")).unwrap();
    assert!(
        text.contains("\"envFile\": \"${workspaceFolder}/config/dev.env\""),
        "{text}"
    );
}

#[test]
fn env_file_is_a_usage_error_for_clients_without_it() {
    let env = TestEnv::new();
    project(&env, GITHUB);
    assert_snapshot!(env.run(&["export", "--to", "codex", "--env-file"]), @r#"
    ----- stderr -----
    error: codex documents no `envFile` key for its servers, so `--env-file` cannot be used with it

    hint: `--env-file` works with `--to cursor` and `--to vscode`
    [exit status: 2]
    "#);
    assert!(!env.project.join(".codex").exists());
}
