//! `--dry-run` on every command that writes: a diff of each file that
//! would change, secrets masked, exit 0, and every file under the test
//! root (HOME, the project, mcpenv's state) byte-identical afterwards, no
//! lock or temporary file left either.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use insta::assert_snapshot;

use crate::harness::TestEnv;

const TOKEN: &str = "ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345";

/// Every file and directory under `root`: its bytes (files) and mode.
fn tree(root: &Path) -> BTreeMap<PathBuf, (Option<Vec<u8>>, u32)> {
    let mut found = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let metadata = fs::symlink_metadata(&path).unwrap();
            let mode = metadata.permissions().mode();
            if metadata.is_dir() {
                pending.push(path.clone());
                found.insert(path, (None, mode));
            } else {
                found.insert(path.clone(), (Some(fs::read(&path).unwrap()), mode));
            }
        }
    }
    found
}

/// A project with a literal token in a project server and a local one,
/// and a user server.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &format!(
            r#"{{
  "mcpServers": {{
    "github": {{
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {{ "GITHUB_TOKEN": "{TOKEN}" }}
    }}
  }}
}}
"#
        ),
    );
    env.run(&[
        "add",
        "-s",
        "user",
        "everything",
        "--",
        "npx",
        "-y",
        "server-everything",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "localgh",
        "-e",
        &format!("GH_TOKEN={TOKEN}"),
        "--",
        "npx",
        "-y",
        "gh-mcp",
    ])
    .expect_code(0);
    env
}

/// Runs `args` as a dry run and checks that nothing changed anywhere;
/// returns the output.
fn dry_run(env: &TestEnv, args: &[&str]) -> crate::harness::CommandOutput {
    let before = tree(&env.root);
    let out = env.run(args);
    assert_eq!(out.code, 0, "{args:?}: {out}");
    assert_eq!(
        tree(&env.root),
        before,
        "{args:?} changed files in a dry run"
    );
    out.assert_no_secret(&[TOKEN]);
    out
}

#[test]
fn every_writing_command_leaves_every_file_as_it_was_and_shows_the_diff() {
    let env = world();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "add",
                "-s",
                "project",
                "docs",
                "--dry-run",
                "--",
                "npx",
                "-y",
                "docs-mcp",
            ],
            &["--- a/.mcp.json", "+    \"docs\": {"],
        ),
        (
            &[
                "add-json",
                "-s",
                "user",
                "web",
                r#"{"type":"http","url":"https://example.com/mcp"}"#,
                "--dry-run",
            ],
            &["+ user scope server `web`"],
        ),
        (
            &["remove", "-s", "user", "everything", "--dry-run"],
            &["- user scope server `everything`"],
        ),
        (
            &["extract", "-s", "project", "--dry-run"],
            &[
                "Would move",
                "--- a/.mcp.json",
                "+      \"env\": { \"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\" }",
                "+GITHUB_TOKEN=ghp_…2345",
                "+++ b/.env.example",
            ],
        ),
        (
            &["share", "localgh", "--dry-run"],
            &["+++ b/.mcp.json", "- local scope server `localgh`"],
        ),
        (
            &["approve", "github", "--dry-run"],
            &["+++ b/.claude/settings.local.json", "enabledMcpjsonServers"],
        ),
        (
            &["reject", "github", "--dry-run"],
            &["disabledMcpjsonServers"],
        ),
    ];
    for (args, expected) in cases {
        let out = dry_run(&env, args);
        let printed = format!("{}{}", out.stdout, out.stderr);
        for line in *expected {
            assert!(printed.contains(line), "{args:?}: no `{line}` in\n{out}");
        }
        assert!(
            out.stderr.contains("nothing was written"),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn import_onboard_and_secrets_dry_runs_write_nothing() {
    let mut env = world();
    env.write(
        "home/.cursor/mcp.json",
        r#"{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}"#,
    );
    let out = dry_run(&env, &["import", "--from", "cursor", "--dry-run"]);
    assert!(out.stdout.contains("local scope server `linear`"), "{out}");
    // Nothing was written, so nothing says it was.
    assert!(!out.stderr.contains("Wrote"), "{out}");
    assert!(out.stderr.contains("Would import 1 server"), "{out}");

    env.run(&["extract", "-s", "project"]).expect_code(0);
    let out = dry_run(&env, &["secrets", "rm", "GITHUB_TOKEN", "--dry-run"]);
    assert!(out.stdout.contains("-GITHUB_TOKEN=ghp_…2345"), "{out}");
    // Without a keychain the dry run fails as the real run would, and
    // still writes nothing (tests/cli/keychain.rs has one with a keychain).
    let before = tree(&env.root);
    let out = env.run(&[
        "secrets",
        "move",
        "GITHUB_TOKEN",
        "--to",
        "keychain",
        "--dry-run",
    ]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("no keychain is available"), "{out}");
    assert_eq!(tree(&env.root), before);
    let out = dry_run(&env, &["export", "--to", "cursor", "--dry-run"]);
    assert!(out.stdout.contains("+++ b/.cursor/mcp.json"), "{out}");

    env.write("project/.env", "");
    env.set_env("GITHUB_TOKEN", TOKEN);
    let out = dry_run(&env, &["onboard", "--from-env", "--dry-run"]);
    assert!(out.stdout.contains("+GITHUB_TOKEN=ghp_…2345"), "{out}");
}

#[test]
fn a_dry_run_diff_is_pinned_and_its_json_parses() {
    let env = world();
    let out = dry_run(&env, &["extract", "-s", "project", "--dry-run"]);
    assert_snapshot!(out.stdout);
    let out = dry_run(&env, &["share", "localgh", "--dry-run", "--json"]);
    let json = out.json();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["dry_run"], true);
    let files: Vec<&str> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["file"].as_str().unwrap())
        .collect();
    assert!(files.contains(&".mcp.json"), "{json}");
    assert!(files.contains(&".env"), "{json}");
}

#[test]
fn a_dry_run_that_changes_nothing_says_so() {
    let env = world();
    env.run(&["reset-project-choices"]).expect_code(0);
    let out = dry_run(&env, &["reset-project-choices", "--dry-run"]);
    assert_eq!(out.stdout, "", "{out}");
    assert!(out.stderr.contains("no file would change"), "{out}");
}
