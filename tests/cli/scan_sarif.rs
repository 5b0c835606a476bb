//! `mcpenv scan --format sarif`: the log pinned by a snapshot, and several
//! logs (findings in several files, none, every scope) checked against the
//! official OASIS SARIF 2.1.0 schema vendored in `tests/schema/`.

use std::path::Path;

use insta::assert_snapshot;
use serde_json::Value;

use crate::harness::{CommandOutput, TestEnv};
use crate::scan::{DB_PASSWORD, PAT, STRIPE, add_user_github_token};

const SCHEMA_ID: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The vendored OASIS SARIF 2.1.0 schema, compiled.
pub fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{error}"));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        schema["id"], SCHEMA_ID,
        "the vendored schema is not OASIS's 2.1.0"
    );
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the vendored schema compiles as draft-04")
}

/// stdout of a SARIF run, valid against the schema and naming it.
#[track_caller]
fn assert_valid_sarif(out: &CommandOutput) -> Value {
    out.assert_no_secret(&[PAT, STRIPE, DB_PASSWORD]);
    let log = out.json();
    let errors: Vec<String> = validator()
        .iter_errors(&log)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}\n{out}");
    assert_eq!(log["$schema"], SCHEMA_ID);
    assert_eq!(log["version"], "2.1.0");
    log
}

/// A repository with secrets in three clients' files; the same token is in
/// two servers of `.mcp.json`, on different lines.
fn repository() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &format!(
            "{{\n  \"mcpServers\": {{\n    \"gh\": {{\"command\": \"npx\", \"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"}}}},\n    \"gh-copy\": {{\"command\": \"npx\",\n      \"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"}}}},\n    \"db\": {{\"command\": \"npx\", \"args\": [\"--dsn\", \"postgres://app:{DB_PASSWORD}@db:5432/prod\"]}}\n  }}\n}}\n"
        ),
    );
    env.write(
        "project/.cursor/mcp.json",
        &format!(
            "{{\"mcpServers\": {{\"stripe\": {{\"url\": \"https://mcp.stripe.com\", \"headers\": {{\"Authorization\": \"Bearer {STRIPE}\"}}}}}}}}"
        ),
    );
    env.write(
        "project/.codex/config.toml",
        &format!(
            "[mcp_servers.gh]\ncommand = \"npx\"\n\n[mcp_servers.gh.env]\nGITHUB_TOKEN = '{PAT}'\n"
        ),
    );
    env
}

#[test]
fn sarif_points_at_each_secret_in_the_file() {
    let env = repository();
    let out = env.run(&["scan", "--format", "sarif", "."]);
    let log = assert_valid_sarif(&out);
    // The two copies of one token are two results, each at its own line.
    let lines: Vec<(&str, u64)> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            let location = &result["locations"][0]["physicalLocation"];
            (
                location["artifactLocation"]["uri"].as_str().unwrap(),
                location["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (".codex/config.toml", 5),
            (".cursor/mcp.json", 1),
            (".mcp.json", 3),
            (".mcp.json", 5),
            (".mcp.json", 6)
        ]
    );
    let version = env!("CARGO_PKG_VERSION");
    let out = out.to_string().replace(version, "[VERSION]");
    assert_snapshot!(out, @r#"
    {
      "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
      "version": "2.1.0",
      "runs": [
        {
          "tool": {
            "driver": {
              "name": "mcpenv",
              "version": "[VERSION]",
              "rules": [
                {
                  "id": "github-pat",
                  "name": "GithubPat",
                  "shortDescription": {
                    "text": "Literal GitHub classic PAT in an MCP config"
                  },
                  "help": {
                    "text": "Move the value into a git-ignored `.env` and leave a placeholder the client expands (`mcpenv extract` does it for Claude Code's files); rotate a secret that was committed."
                  },
                  "defaultConfiguration": {
                    "level": "error"
                  }
                },
                {
                  "id": "stripe-key",
                  "name": "StripeKey",
                  "shortDescription": {
                    "text": "Literal Stripe secret/restricted in an MCP config"
                  },
                  "help": {
                    "text": "Move the value into a git-ignored `.env` and leave a placeholder the client expands (`mcpenv extract` does it for Claude Code's files); rotate a secret that was committed."
                  },
                  "defaultConfiguration": {
                    "level": "error"
                  }
                },
                {
                  "id": "url-userinfo-password",
                  "name": "UrlUserinfoPassword",
                  "shortDescription": {
                    "text": "Literal URL with a password in an MCP config"
                  },
                  "help": {
                    "text": "Move the value into a git-ignored `.env` and leave a placeholder the client expands (`mcpenv extract` does it for Claude Code's files); rotate a secret that was committed."
                  },
                  "defaultConfiguration": {
                    "level": "error"
                  }
                }
              ]
            }
          },
          "results": [
            {
              "ruleId": "github-pat",
              "ruleIndex": 0,
              "level": "error",
              "message": {
                "text": "Server `gh`: `env.GITHUB_TOKEN` holds a literal GitHub classic PAT (`ghp_…3s12`)"
              },
              "locations": [
                {
                  "physicalLocation": {
                    "artifactLocation": {
                      "uri": ".codex/config.toml",
                      "uriBaseId": "%SRCROOT%"
                    },
                    "region": {
                      "startLine": 5,
                      "startColumn": 17,
                      "endLine": 5,
                      "endColumn": 57
                    }
                  }
                }
              ],
              "partialFingerprints": {
                "mcpenv/finding/v1": "ecc11416e6443af4f0cc927a8063763c14c9fb177188d204324208c5fdacd51a"
              }
            },
            {
              "ruleId": "stripe-key",
              "ruleIndex": 1,
              "level": "error",
              "message": {
                "text": "Server `stripe`: `headers.Authorization` holds a literal Stripe secret/restricted (`sk_l…c8Yd`)"
              },
              "locations": [
                {
                  "physicalLocation": {
                    "artifactLocation": {
                      "uri": ".cursor/mcp.json",
                      "uriBaseId": "%SRCROOT%"
                    },
                    "region": {
                      "startLine": 1,
                      "startColumn": 98,
                      "endLine": 1,
                      "endColumn": 132
                    }
                  }
                }
              ],
              "partialFingerprints": {
                "mcpenv/finding/v1": "f998dabb0c7ecc08e4e86ffe1a22d2f34c77afed12966226e993b4fc17cb1bff"
              }
            },
            {
              "ruleId": "github-pat",
              "ruleIndex": 0,
              "level": "error",
              "message": {
                "text": "Server `gh`: `env.GITHUB_TOKEN` holds a literal GitHub classic PAT (`ghp_…3s12`)"
              },
              "locations": [
                {
                  "physicalLocation": {
                    "artifactLocation": {
                      "uri": ".mcp.json",
                      "uriBaseId": "%SRCROOT%"
                    },
                    "region": {
                      "startLine": 3,
                      "startColumn": 55,
                      "endLine": 3,
                      "endColumn": 95
                    }
                  }
                }
              ],
              "partialFingerprints": {
                "mcpenv/finding/v1": "373e837d6e6e4f153ef3a1c096b4673b081754a9b9a76f69a38669e9f3ce4e55"
              }
            },
            {
              "ruleId": "github-pat",
              "ruleIndex": 0,
              "level": "error",
              "message": {
                "text": "Server `gh-copy`: `env.GITHUB_TOKEN` holds a literal GitHub classic PAT (`ghp_…3s12`)"
              },
              "locations": [
                {
                  "physicalLocation": {
                    "artifactLocation": {
                      "uri": ".mcp.json",
                      "uriBaseId": "%SRCROOT%"
                    },
                    "region": {
                      "startLine": 5,
                      "startColumn": 32,
                      "endLine": 5,
                      "endColumn": 72
                    }
                  }
                }
              ],
              "partialFingerprints": {
                "mcpenv/finding/v1": "a9f817f85d0efca1a6cbc5337b91dffc490aca891abf5ff29956fcc3667e9ca4"
              }
            },
            {
              "ruleId": "url-userinfo-password",
              "ruleIndex": 2,
              "level": "error",
              "message": {
                "text": "Server `db`: `args[1]` holds a literal URL with a password (`s3cr…7781`)"
              },
              "locations": [
                {
                  "physicalLocation": {
                    "artifactLocation": {
                      "uri": ".mcp.json",
                      "uriBaseId": "%SRCROOT%"
                    },
                    "region": {
                      "startLine": 6,
                      "startColumn": 64,
                      "endLine": 6,
                      "endColumn": 84
                    }
                  }
                }
              ],
              "partialFingerprints": {
                "mcpenv/finding/v1": "2fdf54f4af222c11d6acfff68eb76e29c0fab657c2f2a6f046eff54a14670991"
              }
            }
          ],
          "columnKind": "unicodeCodePoints"
        }
      ]
    }
    ----- stderr -----
    Found 5 literal secrets in 3 of 3 files: 1 in Codex, 1 in Cursor, 3 in project scope
    hint: move them into `.env` and leave `${VAR}` placeholders: `mcpenv extract`
    hint: in `.codex/config.toml` (Codex): remove each value and name its variable instead: `env_vars = ["NAME"]`, `env_http_headers` or `bearer_token_env_var`
    hint: in `.cursor/mcp.json` (Cursor): write `${env:NAME}` in place of each value and set `NAME` in the environment Cursor starts from
    [exit status: 1]
    "#);
}

#[test]
fn sarif_logs_validate_with_findings_everywhere_and_with_none() {
    let env = repository();
    // Every scope and the user's own client files: absolute `file:` URIs
    // for the files outside the repository.
    add_user_github_token(&env);
    env.write(
        "home/.cursor/mcp.json",
        &format!(
            r#"{{"mcpServers": {{"s": {{"command": "npx", "args": ["--api-key={STRIPE}"]}}}}}}"#
        ),
    );
    let out = env.run(&["scan", "--format", "sarif"]);
    assert_eq!(out.code, 1, "{out}");
    let log = assert_valid_sarif(&out);
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains(&".mcp.json"), "{uris:?}");
    assert!(
        uris.contains(&"file://[ROOT]/home/.claude.json"),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"file://[ROOT]/home/.cursor/mcp.json"),
        "{uris:?}"
    );

    let clean = TestEnv::new();
    clean.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}"#,
    );
    for args in [
        &["scan", "--format", "sarif"][..],
        &["scan", "--format", "sarif", "."],
    ] {
        let out = clean.run(args);
        assert_eq!(out.code, 0, "{out}");
        let log = assert_valid_sarif(&out);
        assert_eq!(log["runs"][0]["results"], Value::Array(Vec::new()));
    }
}
