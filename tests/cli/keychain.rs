//! The OS keychain as a store, against a real Secret Service (gnome-keyring
//! on a private bus, `keychain_harness`): `onboard`, `extract` and `share`
//! with `--to keychain` leave no plaintext copy of a value under HOME or the
//! project while `run` still delivers it; `check` says where each value
//! lives; two clones of one repository share their entries; a locked or
//! absent keychain is an error with the next step, never a fallback to
//! plaintext.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::harness::TestEnv;
use crate::keychain_harness::SecretService;
use crate::terminal::{Terminal, exited};

const TOKEN: &str = "ghp_K3ych4inT0kenValue0123456789abcdEFGH";
const REMOTE: &str = "git@github.com:acme/widgets.git";
const ACCOUNT: &str = "github.com/acme/widgets/GITHUB_TOKEN";

/// A world whose project is a clone of `REMOTE` with a server needing
/// `GITHUB_TOKEN`, and a Secret Service for it; `None` (skipped) without
/// one.
fn world() -> Option<(TestEnv, SecretService)> {
    let mut env = TestEnv::bare();
    clone_at(&env.project, REMOTE);
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}}})
        .to_string(),
    );
    env.write("project/.gitignore", ".env\n");
    let service = SecretService::start(&env.home)?;
    for (key, value) in service.env() {
        env.set_env(&key, value);
    }
    Some((env, service))
}

/// Puts the token itself, pasted, into the project's server.
fn with_literal_token(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN}}}})
        .to_string(),
    );
}

/// Makes `dir` a git repository whose `origin` is `remote`.
pub fn clone_at(dir: &Path, remote: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for args in [
        &["init", "-q"][..],
        &["remote", "add", "origin", remote][..],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

/// Every file under `dir` holding `secret` (bytes), by path.
pub fn files_holding(dir: &Path, secret: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir(dir) {
        if std::fs::read(&entry)
            .is_ok_and(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
        {
            found.push(entry.display().to_string());
        }
    }
    found
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files.extend(walkdir(&path));
        } else if kind.is_file() {
            files.push(path);
        }
    }
    files
}

fn run_prints_token(env: &TestEnv) {
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, TOKEN);
}

#[test]
fn onboarding_into_the_keychain_leaves_no_plaintext_copy_and_run_delivers_it() {
    let Some((env, service)) = world() else {
        return;
    };
    let mut terminal = Terminal::start(&env, &["onboard", "--to", "keychain"]);
    terminal.expect("`GITHUB_TOKEN` is needed by `github`");
    terminal.type_hidden("GITHUB_TOKEN (hidden): ", TOKEN);
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(!shown.contains(TOKEN), "the secret was echoed:\n{shown}");
    assert!(
        shown.contains("Saved 1 variable to the keychain, named in `.env`: `GITHUB_TOKEN`"),
        "{shown}"
    );

    assert_eq!(
        env.read("project/.env"),
        format!("GITHUB_TOKEN='keychain:{ACCOUNT}'\n")
    );
    assert_eq!(service.lookup("mcpenv", ACCOUNT).as_deref(), Some(TOKEN));
    // No plaintext copy anywhere: not in the project, not under HOME
    // (gnome-keyring's own file is encrypted), not in mcpenv's state.
    assert_eq!(files_holding(&env.root, TOKEN), Vec::<String>::new());
    assert!(service.keyring_file().exists());

    run_prints_token(&env);
    let out = env.run(&["check"]);
    out.assert_no_secret(&[TOKEN]);
    assert!(
        out.stdout.contains(
            "GITHUB_TOKEN  set in the keychain (named in .env, seen through `mcpenv run`)"
        ),
        "{out}"
    );
    let json = env.run(&["check", "--json"]).json();
    assert_eq!(
        json["variables"][0]["reference"],
        json!({"manager": "keychain", "resolves": true})
    );
}

#[test]
fn a_second_clone_finds_the_value_without_asking() {
    let Some((env, _service)) = world() else {
        return;
    };
    let first = env
        .command(&env.project, &["onboard", "--from-env", "--to", "keychain"])
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(first.status.success(), "{first:?}");
    // Another clone of the same repository, reached over HTTPS.
    let second = env.root.join("second");
    clone_at(&second, "https://github.com/acme/widgets");
    std::fs::copy(env.project.join(".mcp.json"), second.join(".mcp.json")).unwrap();
    std::fs::write(second.join(".gitignore"), ".env\n").unwrap();
    // Not a terminal: it would refuse if it had to ask.
    let out = env
        .run_in(&second, &["onboard", "--to", "keychain"])
        .expect_code(0);
    assert!(
        out.stderr.contains(&format!(
            "Using the keychain's entry for `GITHUB_TOKEN` (`keychain:{ACCOUNT}`), saved from another clone"
        )),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(second.join(".env")).unwrap(),
        format!("GITHUB_TOKEN='keychain:{ACCOUNT}'\n")
    );
    let out = env
        .run_in(
            &second,
            &["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""],
        )
        .expect_code(0);
    assert_eq!(out.stdout, TOKEN);
}

#[test]
fn extract_and_share_move_literal_secrets_into_the_keychain() {
    let Some((env, service)) = world() else {
        return;
    };
    with_literal_token(&env);
    let out = env.run(&["extract", "--to", "keychain"]).expect_code(0);
    out.assert_no_secret(&[TOKEN]);
    let dotenv = env.read("project/.env");
    let reference = dotenv
        .trim_end()
        .split_once('=')
        .map(|(_, value)| value.trim_matches('\'').to_string())
        .unwrap();
    assert_eq!(
        reference, "keychain:github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN",
        "{dotenv}"
    );
    assert_eq!(
        service
            .lookup("mcpenv", reference.trim_start_matches("keychain:"))
            .as_deref(),
        Some(TOKEN)
    );
    assert_eq!(files_holding(&env.root, TOKEN), Vec::<String>::new());
    let out = env
        .run(&[
            "run",
            "--",
            "sh",
            "-c",
            "printf %s \"$GITHUB_PERSONAL_ACCESS_TOKEN\"",
        ])
        .expect_code(0);
    assert_eq!(out.stdout, TOKEN);

    // A user server's secret is the user's: account `user/…`.
    env.write(
        "home/.claude.json",
        &json!({"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
            "headers": {"Authorization": "Bearer lin_api_Sh4reM3IntoTheK3ychain0123456789"}}}})
        .to_string(),
    );
    let out = env
        .run(&["share", "linear", "--to", "keychain"])
        .expect_code(0);
    out.assert_no_secret(&["lin_api_Sh4reM3IntoTheK3ychain0123456789"]);
    assert_eq!(
        files_holding(&env.root, "lin_api_Sh4reM3IntoTheK3ychain0123456789"),
        Vec::<String>::new()
    );
    let dotenv = env.read("project/.env");
    let line = dotenv
        .lines()
        .find(|line| line.contains("LINEAR"))
        .unwrap_or_else(|| panic!("{dotenv}"));
    let (name, reference) = line.split_once('=').unwrap();
    assert_eq!(
        reference.trim_matches('\''),
        format!("keychain:github.com/acme/widgets/{name}")
    );
}

#[test]
fn a_locked_keychain_is_an_error_before_anything_is_asked_or_written() {
    let Some((mut env, service)) = world() else {
        return;
    };
    service.lock();
    env.set_env("GITHUB_TOKEN", TOKEN);
    let out = env
        .run(&["onboard", "--from-env", "--to", "keychain"])
        .expect_code(1);
    assert!(
        out.stderr
            .contains("error: cannot use the keychain: the keychain is locked or refused access"),
        "{out}"
    );
    assert!(out.stderr.contains("hint: unlock the keychain"), "{out}");
    assert!(
        !env.project.join(".env").exists(),
        "no fallback to plaintext"
    );
}

#[test]
fn a_value_kept_in_a_locked_keychain_fails_check_and_run_with_the_next_step() {
    let Some((env, service)) = world() else {
        return;
    };
    service.store("mcpenv", ACCOUNT, "mcpenv test", TOKEN);
    env.write(
        "project/.env",
        &format!("GITHUB_TOKEN=keychain:{ACCOUNT}\n"),
    );
    run_prints_token(&env);
    service.lock();
    let out = env.run(&["check"]).expect_code(1);
    out.assert_no_secret(&[TOKEN]);
    // Read as one text: `check` wraps its lines to the terminal's width.
    let unwrapped = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        unwrapped.contains(
            "error: `GITHUB_TOKEN` in `.env` is kept in the keychain, which could not give it: the keychain is locked or refused access"
        ),
        "{out}"
    );
    assert!(out.stdout.contains("hint: unlock the keychain"), "{out}");
    assert!(
        out.stdout
            .contains("GITHUB_TOKEN  set in the keychain, but it gives no value"),
        "{out}"
    );
    let out = env
        .run(&["run", "--", "sh", "-c", "echo started"])
        .expect_code(1);
    assert!(out.stdout.is_empty(), "{out}");
}

#[test]
fn without_a_secret_service_it_says_so_and_never_falls_back_to_plaintext() {
    // The harness's default: a bus address where nothing listens.
    let env = TestEnv::bare();
    clone_at(&env.project, REMOTE);
    with_literal_token(&env);
    env.write("project/.gitignore", ".env\n");
    let before = env.read("project/.mcp.json");
    let out = env.run(&["extract", "--to", "keychain"]).expect_code(1);
    assert!(out.stderr.contains("no keychain is available"), "{out}");
    assert!(out.stderr.contains("hint: start a Secret Service"), "{out}");
    out.assert_no_secret(&[TOKEN]);
    assert!(!env.project.join(".env").exists());
    assert_eq!(env.read("project/.mcp.json"), before);

    env.write(
        "project/.env",
        &format!("GITHUB_TOKEN=keychain:{ACCOUNT}\n"),
    );
    let out = env
        .run(&["run", "--", "sh", "-c", "echo started"])
        .expect_code(1);
    assert!(out.stdout.is_empty(), "{out}");
    assert!(
        out.stderr.contains("`GITHUB_TOKEN` in")
            && out
                .stderr
                .contains("is kept in the keychain, which could not give it"),
        "{out}"
    );
}

#[test]
fn a_user_servers_secret_is_the_users_in_every_project() {
    let Some((env, service)) = world() else {
        return;
    };
    const KEY: &str = "lin_api_Us3rSc0peK3ychainValue0123456789";
    env.write(
        "home/.claude.json",
        &json!({"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
            "headers": {"Authorization": format!("Bearer {KEY}")}}}})
        .to_string(),
    );
    let out = env
        .run(&["extract", "-s", "user", "--to", "keychain"])
        .expect_code(0);
    out.assert_no_secret(&[KEY]);
    let store = env.read("home/.config/mcpenv/.env");
    let (name, reference) = store.trim_end().split_once('=').unwrap();
    let account = format!("user/{name}");
    assert_eq!(reference.trim_matches('\''), format!("keychain:{account}"));
    assert_eq!(service.lookup("mcpenv", &account).as_deref(), Some(KEY));
    assert_eq!(files_holding(&env.root, KEY), Vec::<String>::new());
    assert!(
        !env.project.join(".env").exists(),
        "the project is left alone"
    );
}

#[test]
fn a_dry_run_describes_the_keychain_write_and_makes_none() {
    let Some((env, service)) = world() else {
        return;
    };
    with_literal_token(&env);
    let mcp_json = env.bytes("project/.mcp.json");
    let out = env
        .run(&["extract", "--to", "keychain", "--dry-run"])
        .expect_code(0);
    out.assert_no_secret(&[TOKEN]);
    assert!(
        out.stderr.contains(
            "would also keep a value in the system keychain as `github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN`"
        ),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("+GITHUB_PERSONAL_ACCESS_TOKEN=keychain:github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN"),
        "{out}"
    );
    assert_eq!(env.bytes("project/.mcp.json"), mcp_json);
    assert!(!env.project.join(".env").exists());
    assert_eq!(
        service.lookup(
            "mcpenv",
            "github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN"
        ),
        None
    );
}

/// Runs `args`, which must succeed, and fails when any file under the test
/// root (project, HOME, mcpenv's state and its undo journal) holds `secret`
/// afterwards.
fn leaves_no_plaintext(env: &TestEnv, args: &[&str], secret: &str) -> String {
    let out = env.run(args);
    assert_eq!(out.code, 0, "{out}");
    out.assert_no_secret(&[secret]);
    assert_eq!(
        files_holding(&env.root, secret),
        Vec::<String>::new(),
        "after `mcpenv {}`:\n{out}",
        args.join(" ")
    );
    out.stderr
}

#[test]
fn moving_a_value_into_the_keychain_leaves_no_copy_in_the_undo_journal() {
    let Some((env, _service)) = world() else {
        return;
    };
    with_literal_token(&env);
    // The journal now holds `.mcp.json` as it was: the literal token.
    env.run(&["extract"]).expect_code(0);
    env.run(&["add", "-s", "user", "unrelated", "node"])
        .expect_code(0);
    let stderr = leaves_no_plaintext(
        &env,
        &[
            "secrets",
            "move",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "--to",
            "keychain",
        ],
        TOKEN,
    );
    insta::assert_snapshot!(stderr, @"
    Moved `GITHUB_PERSONAL_ACCESS_TOKEN` into the keychain (account `github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN`); `.env` now holds `keychain:github.com/acme/widgets/GITHUB_PERSONAL_ACCESS_TOKEN`
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind; the earlier edit that held it was dropped from the journal too
    ");
    // The unrelated edit, whose copies never held the token, is kept.
    let list = env.run(&["undo", "--list"]).expect_code(0);
    insta::assert_snapshot!(list.stdout, @"
    2  mcpenv add  just now
        created `~/.claude.json`
    ");
}

#[test]
fn a_value_the_keychain_holds_already_leaves_no_copy_in_the_undo_journal() {
    let Some((env, service)) = world() else {
        return;
    };
    // Pasted by hand: this edit's copy of `.env` would hold it.
    env.write("project/.env", &format!("GITHUB_TOKEN={TOKEN}\n"));
    std::fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    service.store("mcpenv", ACCOUNT, "mcpenv", TOKEN);
    let stderr = leaves_no_plaintext(
        &env,
        &["secrets", "move", "GITHUB_TOKEN", "--to", "keychain"],
        TOKEN,
    );
    insta::assert_snapshot!(stderr, @"
    Moved `GITHUB_TOKEN` into the keychain (account `github.com/acme/widgets/GITHUB_TOKEN`); `.env` now holds `keychain:github.com/acme/widgets/GITHUB_TOKEN`
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind
    ");
}

#[test]
fn extracting_into_the_keychain_drops_earlier_copies_of_the_secret() {
    let Some((env, _service)) = world() else {
        return;
    };
    with_literal_token(&env);
    // The copy this edit keeps of `.mcp.json` holds the literal token.
    env.run(&["add", "-s", "project", "other", "node"])
        .expect_code(0);
    let stderr = leaves_no_plaintext(&env, &["extract", "--to", "keychain"], TOKEN);
    insta::assert_snapshot!(stderr, @"
    Moved 1 secret into the keychain, named in `.env`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Claude Code takes `${VAR}` values from its environment, not from dotenv files: start it with `mcpenv run -- claude`, which loads them
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind; the earlier edit that held it was dropped from the journal too
    ");
}
