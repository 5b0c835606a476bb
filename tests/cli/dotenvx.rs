//! dotenvx's encrypted values (`encrypted:…`): `check` says they are
//! ciphertext and how to start the client, `run` never hands them on as
//! values, and started through the real dotenvx (pinned, installed by
//! `scripts/test` into `target/tools/dotenvx`) the decrypted value reaches
//! the command.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::harness::TestEnv;

/// The dotenvx release the suite is checked against (also in
/// `scripts/test`).
const DOTENVX_VERSION: &str = "2.38.2";

const TOKEN: &str = "ghp_Zq8Rk2VbN4mXw7Ty1Lp9Hs3Dj6Fc0Ga5Ue2Q";

/// The pinned dotenvx, when installed.
fn dotenvx() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools/dotenvx/node_modules/.bin/dotenvx");
    let output = Command::new(&path).arg("--version").output().ok()?;
    (String::from_utf8_lossy(&output.stdout).trim() == DOTENVX_VERSION).then_some(path)
}

/// A project whose server needs `GITHUB_TOKEN`.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}}})
        .to_string(),
    );
    env
}

#[test]
fn ciphertext_is_flagged_by_check_and_never_handed_on_by_run() {
    let env = world();
    env.write(
        "project/.env",
        "GITHUB_TOKEN=encrypted:BLos2EoIzsjxHC3hdmvV0/AT+pvgWL6nUNoewJu/fsz6GcrQMlscU6Dok0BUyXuy\n",
    );
    let out = env.run(&["check"]);
    assert!(
        out.stdout.contains(
            "GITHUB_TOKEN  encrypted by dotenvx in .env (only `dotenvx run` decrypts it)"
        ),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("`GITHUB_TOKEN` in `.env` is encrypted by dotenvx"),
        "{out}"
    );
    assert!(
        out.stdout.contains("dotenvx run -- mcpenv run -- claude"),
        "{out}"
    );
    let json = env.run(&["check", "--json"]).json();
    assert_eq!(json["variables"][0]["ciphertext"], true, "{json}");
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|finding| finding["code"] == "dotenvx-ciphertext"),
        "{json}"
    );

    let out = env.run(&["run", "--", "sh", "-c", "printf ran"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stdout.is_empty(), "the command must not start: {out}");
    assert!(out.stderr.contains("encrypted by dotenvx"), "{out}");
    assert!(out.stderr.contains("dotenvx run -- mcpenv run"), "{out}");

    let out = env.run(&["env"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stdout.is_empty(), "no ciphertext exported: {out}");
    assert!(out.stderr.contains("is encrypted by dotenvx"), "{out}");
}

#[test]
fn probe_does_not_start_a_server_that_would_get_ciphertext() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": crate::probe::fake_bin(),
            "args": ["needs-env:TOKEN"], "env": {"TOKEN": "${GITHUB_TOKEN}"}}}})
        .to_string(),
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["github"]}).to_string(),
    );
    env.trust_project();
    env.write(
        "project/.env",
        "GITHUB_TOKEN=encrypted:BLos2EoIzsjxHC3hdmvV0/AT+pvgWL6nUNoewJu/fsz6GcrQMlscU6Dok0BUyXuy\n",
    );
    let out = env.run(&["probe", "--timeout", "5"]);
    assert!(
        out.stderr.contains(
            "skipped `github`: `GITHUB_TOKEN` is encrypted by dotenvx; mcpenv does not decrypt it; not started"
        ),
        "{out}"
    );
    assert!(!out.stderr.contains("ok  "), "{out}");
}

#[test]
fn through_the_real_dotenvx_the_command_gets_the_decrypted_value() {
    let Some(dotenvx) = dotenvx() else {
        crate::skips::skip(&format!(
            "dotenvx {DOTENVX_VERSION} is not in target/tools/dotenvx (scripts/test installs it with npm)"
        ));
        return;
    };
    let env = world();
    env.write("project/.env", &format!("GITHUB_TOKEN={TOKEN}\n"));
    let encrypted = Command::new(&dotenvx)
        .arg("encrypt")
        .current_dir(&env.project)
        .output()
        .unwrap();
    assert!(encrypted.status.success(), "{encrypted:?}");
    let dotenv = env.read("project/.env");
    assert!(
        dotenv.contains("GITHUB_TOKEN=encrypted:") && !dotenv.contains(TOKEN),
        "{dotenv}"
    );

    // What dotenvx wrote, check reads as ciphertext.
    let out = env.run(&["check"]);
    assert!(out.stdout.contains("encrypted by dotenvx"), "{out}");
    let out = env.run(&["run", "--", "sh", "-c", "printf ran"]);
    assert_eq!(out.code, 1, "{out}");

    // dotenvx decrypts into the environment, which mcpenv passes on.
    let mcpenv = env.command(
        &env.project,
        &["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""],
    );
    let mut through = Command::new(&dotenvx);
    through
        .args(["run", "--quiet", "--"])
        .arg(mcpenv.get_program())
        .args(mcpenv.get_args())
        .current_dir(&env.project)
        .env_clear();
    for (key, value) in mcpenv.get_envs() {
        if let Some(value) = value {
            through.env(key, value);
        }
    }
    let output = through.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), TOKEN);
}
