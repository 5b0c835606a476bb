//! Every secret in its right place (issue 13): user-scope secrets in the
//! user's own store (`~/.config/mcpenv/.env`), read by every consumer of
//! values in every project; client files holding secrets made private; the
//! secret inside a JSON-valued env moved alone.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use insta::assert_snapshot;

use crate::harness::TestEnv;
use crate::scan::{PAT, add_user_github_token};

const STORE: &str = "home/.config/mcpenv/.env";

/// An obviously fake Notion token of the real shape (`ntn_`, 11 digits, 35
/// letters and digits).
const NOTION: &str = "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";

/// A second git project next to the first.
fn other_project(env: &TestEnv) -> PathBuf {
    let other = env.root.join("other");
    fs::create_dir_all(other.join(".git")).unwrap();
    other
}

#[test]
fn user_secrets_go_to_the_user_store_and_no_project_file() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    let json = env.run(&["extract", "-s", "user", "--dry-run", "--json"]);
    let moved = &json.json()["moves"][0];
    assert!(
        moved["env_file"]
            .as_str()
            .unwrap()
            .ends_with("home/.config/mcpenv/.env"),
        "{json}"
    );
    let dry = env.run(&["extract", "-s", "user", "--dry-run"]);
    dry.assert_no_secret(&[PAT]);
    assert_snapshot!(dry, @r#"
    FILE            SERVER  FIELD             VARIABLE      VALUE
    ~/.claude.json  gh      env.GITHUB_TOKEN  GITHUB_TOKEN  ghp_…3s12

    --- /dev/null
    +++ ~/.config/mcpenv/.env
    (changed lines only, values masked; references shown)
    +GITHUB_TOKEN=ghp_…3s12

    ~/.claude.json (only the servers that change):
    - user scope server `gh`: {"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_TOKEN":"ghp_…3s12"}}
    + user scope server `gh`: {"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}"}}
    ----- stderr -----
    Would move 1 secret into `~/.config/mcpenv/.env` (dry run: nothing was written)
    dry run: 2 files would change; nothing was written
    [exit status: 0]
    "#);
    let out = env.run(&["extract", "-s", "user"]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    FILE            SERVER  FIELD             VARIABLE      VALUE
    ~/.claude.json  gh      env.GITHUB_TOKEN  GITHUB_TOKEN  ghp_…3s12
    ----- stderr -----
    Moved 1 secret into `~/.config/mcpenv/.env`
    Wrote `[ROOT]/home/.config/mcpenv/.env`
    Wrote `[ROOT]/home/.claude.json`
    Claude Code takes `${VAR}` values from its environment, not from dotenv files: start it with `mcpenv run -- claude`, which loads them
    [exit status: 0]
    ");
    assert_eq!(env.read(STORE), format!("GITHUB_TOKEN='{PAT}'\n"));
    assert_eq!(env.mode(STORE), 0o600);
    let project: Vec<String> = fs::read_dir(&env.project)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(project, [".git"], "no file in the repository");
}

#[test]
fn every_project_sees_the_user_store() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    env.run(&["extract", "-s", "user"]).expect_code(0);
    let other = other_project(&env);

    let run = env.run_in(&other, &["run", "--", "printenv", "GITHUB_TOKEN"]);
    assert_eq!((run.code, run.stdout.trim()), (0, PAT));

    let shell = env.run_in(&other, &["env", "--format", "dotenv"]);
    assert_eq!(shell.stdout, format!("GITHUB_TOKEN='{PAT}'\n"));

    let check = env.run_in(&other, &["check"]);
    check.assert_no_secret(&[PAT]);
    assert_snapshot!(check, @"
    gh  user
      GITHUB_TOKEN   set in ~/.config/mcpenv/.env (seen through `mcpenv run`)
      command `npx`  found

    warning: `GITHUB_TOKEN` is set only in `[ROOT]/home/.config/mcpenv/.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)

    The one server in effect has what it needs (0 errors, 1 warning)
    ----- stderr -----
    [exit status: 0]
    ");
    let json = env.run_in(&other, &["check", "--json"]).json();
    let variable = &json["variables"][0];
    assert_eq!(variable["name"], "GITHUB_TOKEN");
    assert!(
        variable["source"]
            .as_str()
            .unwrap()
            .ends_with("home/.config/mcpenv/.env"),
        "{json}"
    );
}

#[test]
fn the_project_env_wins_over_the_user_store() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    env.run(&["extract", "-s", "user"]).expect_code(0);
    env.write("project/.env", "GITHUB_TOKEN=from-the-project\n");
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o600)).unwrap();
    let run = env.run(&["run", "--", "printenv", "GITHUB_TOKEN"]);
    assert_eq!(run.stdout.trim(), "from-the-project");
    let check = env.run(&["check", "--json"]).json();
    assert!(
        check["variables"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("project/.env"),
        "{check}"
    );
    // The environment beats both.
    let mut env = env;
    env.set_env("GITHUB_TOKEN", "from-the-shell");
    let run = env.run(&["run", "--", "printenv", "GITHUB_TOKEN"]);
    assert_eq!(run.stdout.trim(), "from-the-shell");
}

#[test]
fn a_readable_user_store_is_refused() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    env.write(STORE, "OTHER=1\n");
    fs::set_permissions(env.root.join(STORE), fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.run(&["extract", "-s", "user"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `[ROOT]/home/.config/mcpenv/.env` is readable by other users (mode 644); no secret was written to it

    hint: make it private with `chmod 600 [ROOT]/home/.config/mcpenv/.env`, or pass `--force`
    [exit status: 1]
    ");
    assert_eq!(env.read(STORE), "OTHER=1\n");
}

#[test]
fn a_json_env_value_keeps_its_json_and_only_the_token_moves() {
    let env = TestEnv::new();
    let headers = format!(r#"{{"Authorization":"Bearer {NOTION}","Notion-Version":"2022-06-28"}}"#);
    let server = serde_json::json!({
        "command": "npx",
        "args": ["-y", "@notionhq/notion-mcp-server"],
        "env": {"OPENAPI_MCP_HEADERS": headers}
    });
    env.write(
        "project/.mcp.json",
        &serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {"notion": server}}))
            .unwrap(),
    );
    let out = env.run(&["extract"]);
    out.assert_no_secret(&[NOTION]);
    assert_snapshot!(out, @"
    FILE       SERVER  FIELD                    VARIABLE           VALUE
    .mcp.json  notion  env.OPENAPI_MCP_HEADERS  NOTION_AUTH_TOKEN  ntn_…K3sE
    ----- stderr -----
    Moved 1 secret into `.env`
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Claude Code takes `${VAR}` values from its environment, not from `.env`: load it first (`set -a; . ./.env; set +a`)
    [exit status: 0]
    ");
    let config: serde_json::Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    let stored = config["mcpServers"]["notion"]["env"]["OPENAPI_MCP_HEADERS"]
        .as_str()
        .unwrap();
    assert_eq!(
        stored,
        r#"{"Authorization":"Bearer ${NOTION_AUTH_TOKEN}","Notion-Version":"2022-06-28"}"#
    );
    let values: Vec<(String, String)> = dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        values,
        [("NOTION_AUTH_TOKEN".to_string(), NOTION.to_string())]
    );
    let expanded = stored.replace("${NOTION_AUTH_TOKEN}", &values[0].1);
    let parsed: serde_json::Value = serde_json::from_str(&expanded).unwrap();
    assert_eq!(
        parsed,
        serde_json::from_str::<serde_json::Value>(&headers).unwrap()
    );
}

#[test]
fn an_escaped_private_key_inside_json_moves_with_its_escapes() {
    let env = TestEnv::new();
    let pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n";
    let document =
        serde_json::to_string(&serde_json::json!({"type": "service_account", "private_key": pem}))
            .unwrap();
    env.write(
        "project/.mcp.json",
        &serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {
            "gcp": {"command": "npx", "args": ["gcp-mcp"], "env": {"SA_JSON": document}}
        }}))
        .unwrap(),
    );
    env.run(&["extract"]).expect_code(0);
    let config: serde_json::Value = serde_json::from_str(&env.read("project/.mcp.json")).unwrap();
    let stored = config["mcpServers"]["gcp"]["env"]["SA_JSON"]
        .as_str()
        .unwrap();
    let (name, value) = dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .next()
        .expect("one variable");
    assert!(stored.contains(&format!("${{{name}}}")), "{stored}");
    // The variable holds the text as it stood in the JSON (`\n` escapes):
    // expanded, the document is the same JSON again.
    let expanded = stored.replace(&format!("${{{name}}}"), &value);
    let parsed: serde_json::Value = serde_json::from_str(&expanded).unwrap();
    assert_eq!(
        parsed,
        serde_json::from_str::<serde_json::Value>(&document).unwrap()
    );
}

#[test]
fn a_secret_that_would_break_its_json_is_refused_and_nothing_written() {
    let env = TestEnv::new();
    // A key split across two JSON strings: the variable would have to hold
    // the `","` between them.
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
    let document = format!(
        r#"{{"head":"-----BEGIN PRIVATE KEY-----{body}","tail":"{body}-----END PRIVATE KEY-----"}}"#
    );
    let config = serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {
        "gcp": {"command": "npx", "args": ["gcp-mcp"], "env": {"SA_JSON": document}}
    }}))
    .unwrap();
    env.write("project/.mcp.json", &config);
    let out = env.run(&["extract"]);
    assert_snapshot!(out, @r#"
    ----- stderr -----
    error: cannot extract the secret in `env.SA_JSON` of server `gcp` in `[ROOT]/project/.mcp.json`: it contains a `"` that ends its JSON string, which would break the JSON of that value once `${VAR}` is expanded

    hint: nothing was written; move the whole value by hand instead: the JSON into `.env` under the variable's name, and `${NAME}` in its place
    [exit status: 1]
    "#);
    assert_eq!(env.read("project/.mcp.json"), config);
    assert!(!env.project.join(".env").exists());
}

#[test]
fn client_files_holding_literal_secrets_are_private() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    let out = env.run(&["export", "--to", "codex", "--scope", "user"]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `[ROOT]/home/.codex/config.toml` now holds 1 literal secret (`gh` env.GITHUB_TOKEN), copied from the user scope; it was made private (mode 600)
    hint: move them into dotenv files first with `mcpenv extract -s user`, then export again: Codex then gets placeholders
    Exported 1 server to codex
    Wrote `[ROOT]/home/.codex/config.toml`
    [exit status: 0]
    ");
    assert_eq!(env.mode("home/.codex/config.toml"), 0o600);

    // An existing readable file is made private too.
    let cursor = env.write("home/.cursor/mcp.json", "{}");
    fs::set_permissions(&cursor, fs::Permissions::from_mode(0o644)).unwrap();
    env.run(&["export", "--to", "cursor", "--scope", "user"])
        .expect_code(0);
    assert_eq!(env.mode("home/.cursor/mcp.json"), 0o600);

    // Placeholders only: no warning, and the mode a new file gets anyway.
    env.run(&["extract", "-s", "user"]).expect_code(0);
    fs::remove_file(env.home.join(".codex/config.toml")).unwrap();
    let out = env.run(&["export", "--to", "codex", "--scope", "user"]);
    assert!(!out.stderr.contains("warning"), "{out}");
    assert_eq!(env.mode("home/.codex/config.toml"), 0o644);
}
