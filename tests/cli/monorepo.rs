//! A monorepo: the root's `.mcp.json` stays in effect in every package, so
//! the `.env` next to it does too; a package's own `.env` wins for what it
//! sets, and `onboard` saves each value next to the `.mcp.json` that needs it.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use insta::assert_snapshot;

use crate::harness::TestEnv;

/// The root server needs `ROOT_TOKEN` (set in the root's `.env`), the
/// package's needs `WEB_TOKEN` (set in the package's); `SHARED` is set in
/// both, and the package's value must win.
fn monorepo(env: &TestEnv) -> std::path::PathBuf {
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"root-api": {"command": "sh", "env": {"T": "${ROOT_TOKEN}", "S": "${SHARED}"}}}}"#,
    );
    env.write(
        "project/packages/web/.mcp.json",
        r#"{"mcpServers": {"web-api": {"command": "sh", "env": {"W": "${WEB_TOKEN}", "M": "${ROOT_MISSING}"}}}}"#,
    );
    env.write("project/.gitignore", ".env\n");
    env.write("project/.env", "ROOT_TOKEN=root-value\nSHARED=from-root\n");
    env.write(
        "project/packages/web/.env",
        "WEB_TOKEN=web-value\nSHARED=from-web\n",
    );
    for file in ["project/.env", "project/packages/web/.env"] {
        fs::set_permissions(env.root.join(file), fs::Permissions::from_mode(0o600)).unwrap();
    }
    env.project.join("packages/web")
}

#[test]
fn a_package_reads_the_root_env_of_the_root_servers() {
    let env = TestEnv::new();
    let web = monorepo(&env);
    let out = env.run_in(
        &web,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo $ROOT_TOKEN $WEB_TOKEN $SHARED",
        ],
    );
    assert_eq!(out.stdout, "root-value web-value from-web\n", "{out}");

    let check = env.run_in(&web, &["check", "--json"]).expect_code(1).json();
    let source = |name: &str| {
        check["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|variable| variable["name"] == name)
            .map(|variable| (variable["state"].clone(), variable["source"].clone()))
            .unwrap()
    };
    let root = "[ROOT]/project/.env".to_string();
    let own = "[ROOT]/project/packages/web/.env".to_string();
    assert_eq!(source("ROOT_TOKEN"), ("set".into(), root.into()));
    assert_eq!(source("WEB_TOKEN"), ("set".into(), own.clone().into()));
    assert_eq!(source("SHARED"), ("set".into(), own.into()));
    assert_eq!(source("ROOT_MISSING").0, "missing");
    // The text names each file as seen from the package.
    assert_snapshot!(env.run_in(&web, &["check"]).stdout, @"
    web-api  project  pending approval
      WEB_TOKEN     set in .env (seen through `mcpenv run`)
      ROOT_MISSING  missing
      command `sh`  found
    root-api  project  pending approval
      ROOT_TOKEN    set in ../../.env (seen through `mcpenv run`)
      SHARED        set in .env (seen through `mcpenv run`)
      command `sh`  found

    warning: `WEB_TOKEN` is set only in `.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)
    error: `ROOT_MISSING` is not set (needed by web-api)
      hint: set it with `mcpenv onboard`, or export it in your shell
    warning: `ROOT_TOKEN` is set only in `../../.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)
    warning: `SHARED` is set only in `.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)
    warning: `.env.example`: does not exist, so teammates cannot see which variables the servers need
      hint: `mcpenv extract` writes one; commit it
    warning: `../../.env.example`: does not exist, so teammates cannot see which variables the servers need
      hint: `mcpenv extract -C ../..` writes one; commit it

    1 of 2 servers in effect lacks something; 1 variable missing (1 error, 5 warnings)
    Fix it with `mcpenv onboard`
    Approve the pending project servers with `mcpenv approve --trust web-api root-api`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ");
}

#[test]
fn onboard_saves_each_value_next_to_the_mcp_json_that_needs_it() {
    let mut env = TestEnv::new();
    let web = monorepo(&env);
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"root-api": {"command": "sh", "env": {"T": "${ROOT_TOKEN}", "N": "${ROOT_NEW}"}}}}"#,
    );
    env.set_env("ROOT_NEW", "r");
    env.set_env("ROOT_MISSING", "m");
    let out = env.run_in(&web, &["onboard", "--from-env"]).expect_code(0);
    assert!(
        out.stderr
            .contains("Saved 1 variable to `../../.env`: `ROOT_NEW`")
            && out
                .stderr
                .contains("Saved 1 variable to `.env`: `ROOT_MISSING`"),
        "{out}"
    );
    assert_eq!(
        env.read("project/.env"),
        "ROOT_TOKEN=root-value\nSHARED=from-root\nROOT_NEW='r'\n"
    );
    assert_eq!(
        env.read("project/packages/web/.env"),
        "WEB_TOKEN=web-value\nSHARED=from-web\nROOT_MISSING='m'\n"
    );
}

#[test]
fn extract_in_a_package_leaves_the_roots_secrets_to_the_roots_env_and_says_how() {
    let env = TestEnv::new();
    let web = monorepo(&env);
    let token = "ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345";
    env.write(
        "project/.mcp.json",
        &format!(
            r#"{{"mcpServers": {{"root-api": {{"command": "sh", "env": {{"T": "{token}"}}}}}}}}"#
        ),
    );
    let root_before = env.bytes("project/.mcp.json");
    let web_env = env.bytes("project/packages/web/.env");
    let out = env.run_in(&web, &["extract"]).expect_code(0);
    out.assert_no_secret(&[token]);
    // The package's `.env` is not where a teammate at the root looks.
    assert_eq!(env.bytes("project/.mcp.json"), root_before, "{out}");
    assert_eq!(env.bytes("project/packages/web/.env"), web_env, "{out}");
    let hint = "`[ROOT]/project/.mcp.json` holds literal secrets too; they belong in the `.env` next to it: extract them there with `mcpenv extract -C ../..`";
    assert!(out.stderr.contains(hint), "{out}");
    env.run_in(&web, &["extract", "-C", "../.."]).expect_code(0);
    assert!(!env.read("project/.mcp.json").contains(token));
    assert!(env.read("project/.env").contains(token));
    assert_eq!(env.bytes("project/packages/web/.env"), web_env);
}
