//! Under `--json` (or `--format json`) an error is one JSON document on
//! stdout, with the exit code it always has: a script can tell an error
//! from an empty result.

use serde_json::{Value, json};

use crate::harness::TestEnv;

fn error_of(out: &crate::harness::CommandOutput) -> Value {
    let document = out.json();
    assert_eq!(document["schema_version"], 1, "{document}");
    document["error"].clone()
}

#[test]
fn a_failure_is_a_json_document_on_stdout_with_exit_1() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "npx"}}}).to_string(),
    );
    let out = env.run(&["get", "nope", "--json"]).expect_code(1);
    assert!(out.stderr.is_empty(), "{out}");
    let error = error_of(&out);
    assert_eq!(error["kind"], "failure");
    assert_eq!(error["message"], "no MCP server named `nope`");
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains("`github`")),
        "{error}"
    );
    assert_eq!(error["file"], Value::Null);
}

#[test]
fn a_usage_error_is_one_too_with_exit_2_even_from_the_parser() {
    let env = TestEnv::new();
    let out = env.run(&["get", "--json", "--bogus"]).expect_code(2);
    assert!(out.stderr.is_empty(), "{out}");
    let error = error_of(&out);
    assert_eq!(error["kind"], "usage");
    assert_eq!(error["message"], "unexpected argument '--bogus' found");
    let out = env
        .run(&["extract", "--json", "--reference", "NOT A REF"])
        .expect_code(2);
    assert_eq!(error_of(&out)["kind"], "usage", "{out}");
    // `--json` given to another program after `--` is not ours.
    let out = env.run(&["run", "--", "sh", "-c", "exit 0", "--json"]);
    assert!(!out.stdout.contains("schema_version"), "{out}");
}

#[test]
fn a_parse_error_names_the_file_line_and_column() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        "{\n  \"mcpServers\": {\n    \"a\": \n}\n",
    );
    let out = env
        .run(&["add", "--json", "-s", "project", "x", "--", "npx"])
        .expect_code(1);
    let error = error_of(&out);
    assert_eq!(error["kind"], "failure", "{error}");
    assert!(
        error["file"]
            .as_str()
            .is_some_and(|file| file.ends_with("project/.mcp.json")),
        "{error}"
    );
    assert_eq!(error["line"], 4, "{error}");
    assert!(error["column"].is_u64(), "{error}");
}

#[test]
fn env_takes_json_like_every_command_with_a_document() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "npx", "env": {"T": "${TOKEN}"}}}})
            .to_string(),
    );
    env.write("project/.env", "TOKEN=plain-value\n");
    let out = env.run(&["env", "--json"]).expect_code(0);
    assert_eq!(out.json()["variables"], json!({"TOKEN": "plain-value"}));
    let out = env.run(&["env", "--json", "--format", "sh"]).expect_code(2);
    assert_eq!(error_of(&out)["kind"], "usage", "{out}");
}
