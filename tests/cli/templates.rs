use insta::assert_snapshot;

use crate::harness::TestEnv;

/// A template with every registry type mcpenv renders, and a remote.
const LEDGER: &str = r#"{
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  "name": "io.github.acme/ledger",
  "title": "Ledger",
  "description": "Query and annotate Acme ledger entries",
  "version": "2.4.0",
  "packages": [
    {
      "registryType": "npm", "identifier": "@acme/ledger-mcp", "version": "2.4.0", "transport": {"type": "stdio"},
      "packageArguments": [
        {"type": "positional", "value": "serve"},
        {"type": "named", "name": "--region", "default": "eu", "description": "Data region"}
      ],
      "environmentVariables": [
        {"name": "LEDGER_TOKEN", "description": "API token for the ledger", "isRequired": true, "isSecret": true},
        {"name": "LEDGER_LOG", "description": "Log level", "default": "warn"}
      ]
    },
    {
      "registryType": "pypi", "identifier": "ledger-mcp", "version": "2.4.0", "transport": {"type": "stdio"},
      "environmentVariables": [{"name": "LEDGER_TOKEN", "description": "API token for the ledger", "isRequired": true, "isSecret": true}]
    },
    {
      "registryType": "oci", "identifier": "ghcr.io/acme/ledger:2.4.0", "transport": {"type": "stdio"},
      "environmentVariables": [{"name": "LEDGER_TOKEN", "description": "API token for the ledger", "isRequired": true, "isSecret": true}]
    },
    {
      "registryType": "nuget", "identifier": "Acme.Ledger.Mcp", "version": "2.4.0", "transport": {"type": "stdio"},
      "packageArguments": [{"type": "positional", "value": "serve"}]
    },
    {
      "registryType": "mcpb", "identifier": "https://github.com/acme/ledger-mcp/releases/download/v2.4.0/ledger.mcpb",
      "fileSha256": "0000000000000000000000000000000000000000000000000000000000000000", "transport": {"type": "stdio"}
    }
  ],
  "remotes": [
    {
      "type": "streamable-http", "url": "https://mcp.ledger.example.com/mcp",
      "headers": [{"name": "Authorization", "value": "Bearer {token}", "variables": {"token": {"description": "API token", "isRequired": true, "isSecret": true}}}]
    }
  ],
  "_meta": {"dev.mcpenv/template": {"variables": {"LEDGER_TOKEN": {"howToGet": "https://ledger.example.com/settings/tokens", "pattern": "^lt_[A-Za-z0-9]{20}$"}}}}
}"#;

fn with_project_template(env: &TestEnv) {
    env.write("project/.mcpenv/templates/ledger.json", LEDGER);
}

#[test]
fn add_from_a_template_in_project_scope_documents_every_variable() {
    let env = TestEnv::new();
    with_project_template(&env);
    let out = env.run(&["add", "ledger", "--template", "ledger", "-s", "project"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env.example`
    Added stdio MCP server `ledger` in project scope
    Created `[ROOT]/project/.mcp.json`
    From template `ledger`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust ledger`
    Still missing: `LEDGER_TOKEN`
    hint: set them with `mcpenv onboard`; `mcpenv check` shows what each server needs
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "ledger": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@acme/ledger-mcp@2.4.0",
            "serve",
            "--region",
            "${LEDGER_REGION:-eu}"
          ],
          "env": {
            "LEDGER_TOKEN": "${LEDGER_TOKEN}",
            "LEDGER_LOG": "${LEDGER_LOG:-warn}"
          }
        }
      }
    }
    "#);
    assert_snapshot!(env.read("project/.env.example"), @"
    # Data region
    # used by: ledger
    LEDGER_REGION=eu
    # API token for the ledger
    # Get one: https://ledger.example.com/settings/tokens
    # used by: ledger
    LEDGER_TOKEN=
    # Log level
    # used by: ledger
    LEDGER_LOG=warn
    ");
}

#[test]
fn every_registry_type_and_remote_renders() {
    let env = TestEnv::new();
    with_project_template(&env);
    env.run(&["add", "l-pypi", "--template", "ledger", "--package", "2"])
        .expect_code(0);
    env.run(&["add", "l-oci", "--template", "ledger", "--package", "3"])
        .expect_code(0);
    env.run(&[
        "add",
        "l-remote",
        "--template",
        "ledger",
        "--remote",
        "1",
        "-s",
        "user",
    ])
    .expect_code(0);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let shown: Vec<String> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| {
            format!(
                "{} {} {}",
                server["name"].as_str().unwrap(),
                server["scope"].as_str().unwrap(),
                server["command"]
                    .as_str()
                    .or(server["url"].as_str())
                    .unwrap()
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "l-pypi local uvx",
            "l-oci local docker",
            "l-remote user https://mcp.ledger.example.com/mcp"
        ]
    );
    let got = env.run(&["get", "l-oci", "--json"]).expect_code(0).json();
    assert_eq!(
        got["entry"]["args"],
        serde_json::json!([
            "run",
            "-i",
            "--rm",
            "-e",
            "LEDGER_TOKEN",
            "ghcr.io/acme/ledger:2.4.0"
        ])
    );
    assert_eq!(got["entry"]["env"]["LEDGER_TOKEN"], "${LEDGER_TOKEN}");
    let got = env
        .run(&["get", "l-remote", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        got["entry"]["headers"]["Authorization"],
        "Bearer ${L_REMOTE_TOKEN}"
    );
    env.run(&["add", "l-nuget", "--template", "ledger", "--package", "4"])
        .expect_code(0);
    let got = env.run(&["get", "l-nuget", "--json"]).expect_code(0).json();
    assert_eq!(
        (got["entry"]["command"].as_str(), &got["entry"]["args"]),
        (
            Some("dnx"),
            &serde_json::json!(["Acme.Ledger.Mcp@2.4.0", "--yes", "--", "serve"])
        )
    );
    assert_snapshot!(env.run(&["add", "l-mcpb", "--template", "ledger", "--package", "5"]), @"
    ----- stderr -----
    error: template `ledger`: `mcpb` packages cannot be written as a command line; pick a remote with `--remote N`

    hint: see what it offers with `mcpenv templates show ledger`
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["add", "x", "--template", "ledger", "--remote", "2"]), @"
    ----- stderr -----
    error: template `ledger` has no remote 2 (it has 1)

    hint: see what it offers with `mcpenv templates show ledger`
    [exit status: 1]
    ");
}

#[test]
fn vars_send_secrets_to_dotenv_and_other_values_to_defaults() {
    let env = TestEnv::new();
    with_project_template(&env);
    let secret = "lt_Q2w9EzR4tY6uI8oP0aS1";
    let out = env.run(&[
        "add",
        "ledger",
        "--template",
        "ledger",
        "-s",
        "project",
        "--var",
        &format!("LEDGER_TOKEN={secret}"),
        "--var",
        "LEDGER_LOG=debug",
    ]);
    out.assert_no_secret(&[secret]);
    assert_eq!(out.code, 0, "{out}");
    let env_values: Vec<(String, String)> = dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        env_values,
        [("LEDGER_TOKEN".to_string(), secret.to_string())]
    );
    assert!(
        env.read("project/.mcp.json")
            .contains("\"LEDGER_LOG\": \"${LEDGER_LOG:-debug}\"")
    );
    assert_snapshot!(env.run(&["add", "other", "--template", "ledger", "--var", "NOPE=1"]), @"
    ----- stderr -----
    error: template `ledger` has no variable `NOPE`

    hint: its variables: `OTHER_REGION`, `LEDGER_TOKEN`, `LEDGER_LOG`
    [exit status: 2]
    ");
}

#[test]
fn a_user_template_overrides_an_embedded_one_and_a_project_template_overrides_both() {
    let env = TestEnv::new();
    let named =
        |title: &str| LEDGER.replace("\"title\": \"Ledger\"", &format!("\"title\": \"{title}\""));
    env.write(
        "home/.config/mcpenv/templates/ledger.json",
        &named("From user"),
    );
    let shown = env
        .run(&["templates", "show", "ledger", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (shown["title"].as_str(), shown["origin"]["kind"].as_str()),
        (Some("From user"), Some("user"))
    );
    env.write(
        "project/.mcpenv/templates/ledger.json",
        &named("From project"),
    );
    let shown = env
        .run(&["templates", "show", "ledger", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (shown["title"].as_str(), shown["origin"]["kind"].as_str()),
        (Some("From project"), Some("project"))
    );
    let listed = env
        .run(&["templates", "list", "--json"])
        .expect_code(0)
        .json();
    let ledger = listed["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|template| template["name"] == "ledger")
        .unwrap();
    assert_eq!(ledger["origin"]["kind"], "project");
}

#[test]
fn a_template_file_path_works() {
    let env = TestEnv::new();
    env.write("elsewhere/acme.server.json", LEDGER);
    let out = env.run(&["add", "acme", "--template", "../elsewhere/acme.server.json"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        env.read("home/.claude.json")
            .contains("@acme/ledger-mcp@2.4.0")
    );
}

#[test]
fn a_malformed_template_names_its_file_and_field() {
    let env = TestEnv::new();
    env.write(
        "project/.mcpenv/templates/broken.json",
        &LEDGER.replace("\"identifier\": \"ledger-mcp\"", "\"identifier\": 42"),
    );
    assert_snapshot!(env.run(&["add", "b", "--template", "broken"]), @"
    ----- stderr -----
    error: template `[ROOT]/project/.mcpenv/templates/broken.json` is malformed at `packages[1].identifier`: invalid type: integer `42`, expected a string

    hint: fix that field; the format is the MCP Registry's server.json
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["add", "b", "--template", "missing-one"]), @"
    ----- stderr -----
    error: no template named `missing-one`

    hint: see the templates with `mcpenv templates list`, or pass a `server.json` file
    [exit status: 1]
    ");
    let listed = env.run(&["templates", "list"]);
    assert!(
        listed.stderr.contains("broken.json") && listed.stderr.contains("packages[1].identifier"),
        "{listed}"
    );
}

#[test]
fn check_uses_the_template_for_descriptions_and_formats() {
    let mut env = TestEnv::new();
    with_project_template(&env);
    env.run(&["add", "ledger", "--template", "ledger", "-s", "project"])
        .expect_code(0);
    env.write("project/.env.example", "");
    env.set_env("LEDGER_TOKEN", "not-a-ledger-token");
    let json = env.run(&["check", "--json"]).json();
    let token = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|variable| variable["name"] == "LEDGER_TOKEN")
        .unwrap();
    assert_eq!(
        token["description"],
        "API token for the ledger (get one: https://ledger.example.com/settings/tokens)"
    );
    let warnings: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|warning| warning["message"].as_str().unwrap())
        .collect();
    assert!(warnings.contains(&"`LEDGER_TOKEN` is set but does not look like a Ledger value (expected `^lt_[A-Za-z0-9]{20}$`)"), "{warnings:?}");
}

#[test]
fn a_real_published_server_json_is_a_template() {
    let env = TestEnv::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/context7.server.json");
    let fixture = fixture.to_str().unwrap();
    let out = env.run(&["add", "context7", "--template", fixture, "-s", "project"]);
    assert_eq!(out.code, 0, "{out}");
    let got = env
        .run(&["get", "context7", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(got["entry"]["command"], "npx");
    let args = got["entry"]["args"].as_array().unwrap();
    assert!(
        args.iter()
            .any(|arg| arg.as_str().unwrap().starts_with("@upstash/context7-mcp@")),
        "{args:?}"
    );
    let shown = env
        .run(&["templates", "show", fixture, "--json"])
        .expect_code(0)
        .json();
    assert_eq!(shown["origin"]["kind"], "file");
    assert!(!shown["renders"].as_array().unwrap().is_empty());
}

#[test]
fn shipped_templates_are_listed_and_added_in_every_scope() {
    let env = TestEnv::new();
    let listed = env
        .run(&["templates", "list", "--json"])
        .expect_code(0)
        .json();
    let names: Vec<&str> = listed["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|template| template["name"].as_str().unwrap())
        .collect();
    assert!(names.len() >= 15, "{names:?}");
    for (scope, name) in [
        ("local", "github"),
        ("project", "filesystem"),
        ("user", "sentry"),
    ] {
        let out = env.run(&["add", name, "--template", name, "-s", scope]);
        assert_eq!(out.code, 0, "{name}: {out}");
    }
    let got = env.run(&["get", "github", "--json"]).expect_code(0).json();
    assert_eq!(
        got["entry"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${GITHUB_PERSONAL_ACCESS_TOKEN}"
    );
    let got = env.run(&["get", "github", "--json"]).expect_code(0).json();
    assert_eq!(got["entry"]["command"], "docker");
}
