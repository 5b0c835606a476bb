//! `mcpenv secrets`: `list` says where each dotenv value lives and which
//! servers use it, never a value; `rm` removes a variable's line (every
//! other byte kept) and its keychain entry; `move` takes a value into the
//! keychain and back, against a real Secret Service (`keychain_harness`),
//! and refuses what 1Password or dotenvx keep.

use std::os::unix::fs::PermissionsExt;

use insta::assert_snapshot;
use serde_json::json;

use crate::harness::TestEnv;
use crate::keychain::{clone_at, files_holding};
use crate::keychain_harness::SecretService;

const TOKEN: &str = "ghp_S3cretsL1stT0kenValue0123456789abcdEF";
const LOCAL_TOKEN: &str = "ghp_L0calOverr1deValue0123456789abcdEFGHIJ";
const USER_KEY: &str = "lin_api_Us3rSt0reKeyValue0123456789abcdef";
const REMOTE: &str = "git@github.com:acme/widgets.git";
const ACCOUNT: &str = "github.com/acme/widgets/GITHUB_TOKEN";

/// The project's `.env`: one variable of each kind, a comment, a blank line.
fn dotenv_text() -> String {
    format!(
        "# tokens for the team's servers\n\
         GITHUB_TOKEN={TOKEN}\n\
         LINEAR_API_KEY=op://Engineering/Linear/credential\n\
         \n\
         SENTRY_TOKEN=keychain:github.com/acme/widgets/SENTRY_TOKEN\n\
         STRIPE_KEY=encrypted:BDx9c2VjcmV0IGNpcGhlcnRleHQ\n\
         SLACK_TOKEN=\n\
         LOG_LEVEL=debug # not a secret\n"
    )
}

/// Servers using some of the variables of [`dotenv_text`], in a git
/// repository.
fn project(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "github": {"command": "sh", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}},
            "linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
                "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}},
            "sentry": {"command": "sh", "env": {"SENTRY_AUTH_TOKEN": "${SENTRY_TOKEN}", "GH": "${GITHUB_TOKEN}"}}
        }})
        .to_string(),
    );
    env.write("project/.gitignore", ".env\n.env.local\n");
    let dotenv = env.write("project/.env", &dotenv_text());
    std::fs::set_permissions(dotenv, std::fs::Permissions::from_mode(0o600)).unwrap();
}

const SENTRY: &str = "github.com/acme/widgets/SENTRY_TOKEN";
const SENTRY_TOKEN: &str = "sntrys_K3ych4inValue0123456789abcdef";

/// The `.env` of [`keychain_world`]: `GITHUB_TOKEN` in plaintext,
/// `SENTRY_TOKEN` in the keychain, nothing `run` could not resolve.
fn keychain_dotenv() -> String {
    format!(
        "# tokens for the team's servers\n\
         GITHUB_TOKEN={TOKEN}\n\
         \n\
         SENTRY_TOKEN=keychain:{SENTRY}\n\
         LOG_LEVEL=debug # not a secret\n"
    )
}

/// A clone of `REMOTE` with the servers of [`project`], its `.env`
/// [`keychain_dotenv`], and a Secret Service holding `SENTRY_TOKEN`;
/// `None` (skipped) without one.
fn keychain_world() -> Option<(TestEnv, SecretService)> {
    let mut env = TestEnv::bare();
    clone_at(&env.project, REMOTE);
    project(&env);
    env.write("project/.env", &keychain_dotenv());
    let service = SecretService::start(&env.home)?;
    for (key, value) in service.env() {
        env.set_env(&key, value);
    }
    service.store("mcpenv", SENTRY, "mcpenv", SENTRY_TOKEN);
    Some((env, service))
}

#[test]
fn list_says_where_each_value_lives_and_never_shows_one() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "project/.env.local",
        &format!("GITHUB_TOKEN={LOCAL_TOKEN}\n"),
    );
    env.write(
        "home/.config/mcpenv/.env",
        &format!("LINEAR_USER_KEY={USER_KEY}\n"),
    );
    let out = env.run(&["secrets", "list"]).expect_code(0);
    out.assert_no_secret(&[
        TOKEN,
        LOCAL_TOKEN,
        USER_KEY,
        "ghp_",
        "lin_api",
        "debug",
        "BDx9",
    ]);
    assert_snapshot!(out, @"
    NAME             VALUE               FILE                   USED BY                 REFERENCE
    GITHUB_TOKEN     plaintext           .env.local             github, sentry
    GITHUB_TOKEN     plaintext           .env                   shadowed by .env.local
    LINEAR_API_KEY   1Password           .env                   linear                  op://Engineering/Linear/credential
    LINEAR_USER_KEY  plaintext           ~/.config/mcpenv/.env  unused
    LOG_LEVEL        plaintext           .env                   unused
    SENTRY_TOKEN     keychain            .env                   sentry                  keychain:github.com/acme/widgets/SENTRY_TOKEN
    SLACK_TOKEN      empty               .env                   unused
    STRIPE_KEY       dotenvx ciphertext  .env                   unused
    ----- stderr -----
    [exit status: 0]
    ");

    let out = env.run(&["secrets", "list", "--json"]).expect_code(0);
    out.assert_no_secret(&[
        TOKEN,
        LOCAL_TOKEN,
        USER_KEY,
        "ghp_",
        "lin_api",
        "debug",
        "BDx9",
    ]);
    let json = out.json();
    assert_eq!(json["schema_version"], 1);
    let kinds: Vec<(&str, &str)> = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variable| {
            (
                variable["name"].as_str().unwrap(),
                variable["kept"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("GITHUB_TOKEN", "plaintext"),
            ("GITHUB_TOKEN", "plaintext"),
            ("LINEAR_API_KEY", "1password"),
            ("LINEAR_USER_KEY", "plaintext"),
            ("LOG_LEVEL", "plaintext"),
            ("SENTRY_TOKEN", "keychain"),
            ("SLACK_TOKEN", "empty"),
            ("STRIPE_KEY", "dotenvx"),
        ]
    );
    assert_eq!(
        json["variables"][1],
        json!({
            "name": "GITHUB_TOKEN",
            "kept": "plaintext",
            "file": "[ROOT]/project/.env",
            "servers": ["github", "sentry"],
            "shadowed_by": "[ROOT]/project/.env.local"
        })
    );
    assert_eq!(
        json["variables"][5]["reference"],
        "keychain:github.com/acme/widgets/SENTRY_TOKEN"
    );
    assert_eq!(json["variables"][4]["servers"], json!([]));
}

#[test]
fn list_escapes_what_a_reference_holds_for_the_terminal() {
    let env = TestEnv::new();
    // A bidi override is allowed in a name; a control character makes
    // the value no reference at all (it is then a value, never shown).
    env.write(
        "project/.env",
        "EVIL='op://Vault/Item\u{202e}txt.exe/field'\nCONTROL='op://Vault/Item\u{1b}[2J/field'\nNAME=plain\n",
    );
    let out = env.run(&["secrets", "list"]).expect_code(0);
    assert!(!out.stdout.contains('\u{202e}'), "{out}");
    assert!(!out.stdout.contains('\u{1b}'), "{out}");
    assert_snapshot!(out, @r"
    NAME     VALUE      FILE  USED BY  REFERENCE
    CONTROL  plaintext  .env  unused
    EVIL     1Password  .env  unused   op://Vault/Item\u{202e}txt.exe/field
    NAME     plaintext  .env  unused
    ----- stderr -----
    [exit status: 0]
    ");
}

#[test]
fn rm_removes_only_the_line_of_the_file_in_effect() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "project/.env.example",
        "# tokens\nGITHUB_TOKEN=\nLOG_LEVEL=\n",
    );
    let out = env.run(&["secrets", "rm", "LOG_LEVEL"]).expect_code(0);
    assert_snapshot!(out, @"
    ----- stderr -----
    Removed `LOG_LEVEL` from `.env`
    [exit status: 0]
    ");
    assert_eq!(
        env.read("project/.env"),
        dotenv_text().replace("LOG_LEVEL=debug # not a secret\n", "")
    );
    assert_eq!(
        env.read("project/.env.example"),
        "# tokens\nGITHUB_TOKEN=\nLOG_LEVEL=\n",
        "never touched"
    );
    assert_eq!(env.mode("project/.env"), 0o600);

    // Set in two files: the one in effect loses it, the other is named.
    env.write(
        "project/.env.local",
        &format!("A=1\nGITHUB_TOKEN={LOCAL_TOKEN}\nB=2\n"),
    );
    let out = env
        .run(&["secrets", "rm", "GITHUB_TOKEN", "--json"])
        .expect_code(0);
    out.assert_no_secret(&[TOKEN, LOCAL_TOKEN]);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "name": "GITHUB_TOKEN",
      "file": "[ROOT]/project/.env.local",
      "kept": "plaintext",
      "still_set_in": [
        "[ROOT]/project/.env"
      ]
    }
    ----- stderr -----
    Removed `GITHUB_TOKEN` from `.env.local`
    note: `GITHUB_TOKEN` is still set in `.env`, whose value is now in effect
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes hold the value it removed, and no copy of it may stay behind
    [exit status: 0]
    "#);
    assert_eq!(env.read("project/.env.local"), "A=1\nB=2\n");
    assert!(env.read("project/.env").contains(TOKEN));
}

#[test]
fn an_unknown_variable_is_a_usage_error_with_the_close_name() {
    let env = TestEnv::new();
    project(&env);
    let before = env.bytes("project/.env");
    assert_snapshot!(env.run(&["secrets", "rm", "GITHUB_TOKN"]), @"
    ----- stderr -----
    error: no dotenv file mcpenv reads here sets `GITHUB_TOKN`

    hint: a variable with a similar name exists: `GITHUB_TOKEN`
    [exit status: 2]
    ");
    assert_snapshot!(env.run(&["secrets", "move", "NOTHING_LIKE_IT", "--to", "keychain"]), @"
    ----- stderr -----
    error: no dotenv file mcpenv reads here sets `NOTHING_LIKE_IT`

    hint: see the variables mcpenv reads here with `mcpenv secrets list`
    [exit status: 2]
    ");
    assert_eq!(env.bytes("project/.env"), before);
}

#[test]
fn what_1password_or_dotenvx_keep_is_not_moved() {
    let env = TestEnv::new();
    project(&env);
    let before = env.bytes("project/.env");
    for to in ["keychain", "dotenv"] {
        let out = env
            .run(&["secrets", "move", "LINEAR_API_KEY", "--to", to])
            .expect_code(1);
        assert!(
            out.stderr.contains(
                "error: `LINEAR_API_KEY` in `.env` is a 1Password reference: the value is kept in 1Password"
            ),
            "{out}"
        );
    }
    assert_snapshot!(env.run(&["secrets", "move", "STRIPE_KEY", "--to", "keychain"]), @"
    ----- stderr -----
    error: `STRIPE_KEY` in `.env` is dotenvx ciphertext, which only dotenvx can decrypt; nothing was changed

    hint: decrypt it with `dotenvx decrypt` first, then move it
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["secrets", "move", "GITHUB_TOKEN", "--to", "dotenv"]), @"
    ----- stderr -----
    `GITHUB_TOKEN` is already in `.env`, not in the keychain; nothing was changed
    [exit status: 0]
    ");
    assert_eq!(env.bytes("project/.env"), before);
}

#[test]
fn moving_into_the_keychain_and_back() {
    let Some((env, service)) = keychain_world() else {
        return;
    };
    let out = env
        .run(&["secrets", "move", "GITHUB_TOKEN", "--to", "keychain"])
        .expect_code(0);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Moved `GITHUB_TOKEN` into the keychain (account `github.com/acme/widgets/GITHUB_TOKEN`); `.env` now holds `keychain:github.com/acme/widgets/GITHUB_TOKEN`
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind
    [exit status: 0]
    ");
    assert_eq!(
        env.read("project/.env"),
        keychain_dotenv().replace(
            &format!("GITHUB_TOKEN={TOKEN}"),
            &format!("GITHUB_TOKEN='keychain:{ACCOUNT}'")
        )
    );
    assert_eq!(service.lookup("mcpenv", ACCOUNT).as_deref(), Some(TOKEN));
    assert_eq!(files_holding(&env.root, TOKEN), Vec::<String>::new());
    let run = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(run.stdout, TOKEN);
    let again = env
        .run(&[
            "secrets",
            "move",
            "GITHUB_TOKEN",
            "--to",
            "keychain",
            "--json",
        ])
        .expect_code(0);
    assert_eq!(again.json()["moved"], false);
    assert!(
        again.stderr.contains("is already kept in the keychain"),
        "{again}"
    );

    let out = env
        .run(&["secrets", "move", "GITHUB_TOKEN", "--to", "dotenv"])
        .expect_code(0);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Moved `GITHUB_TOKEN` out of the keychain into `.env`; deleted the entry `github.com/acme/widgets/GITHUB_TOKEN`
    note: `mcpenv undo` cannot take this edit back: the keychain entry it deleted is kept nowhere, so undo could put back only the files
    [exit status: 0]
    ");
    assert_eq!(
        env.read("project/.env"),
        keychain_dotenv().replace(
            &format!("GITHUB_TOKEN={TOKEN}"),
            &format!("GITHUB_TOKEN='{TOKEN}'")
        )
    );
    assert_eq!(env.mode("project/.env"), 0o600);
    assert_eq!(service.lookup("mcpenv", ACCOUNT), None);
    let run = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(run.stdout, TOKEN);
}

#[test]
fn a_value_goes_back_only_into_a_private_file() {
    let env = TestEnv::new();
    project(&env);
    std::fs::set_permissions(
        env.project.join(".env"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let before = env.bytes("project/.env");
    let out = env
        .run(&["secrets", "move", "SENTRY_TOKEN", "--to", "dotenv"])
        .expect_code(1);
    assert!(
        out.stderr.contains("is readable by other users (mode 644)")
            && out.stderr.contains("hint: make it private with `chmod 600"),
        "{out}"
    );
    assert_eq!(env.bytes("project/.env"), before);
}

#[test]
fn a_locked_or_absent_keychain_changes_nothing() {
    // Without a Secret Service (the harness's default bus goes nowhere).
    let env = TestEnv::new();
    project(&env);
    let before = env.bytes("project/.env");
    for args in [
        &["secrets", "move", "GITHUB_TOKEN", "--to", "keychain"][..],
        &["secrets", "move", "SENTRY_TOKEN", "--to", "dotenv"][..],
        &["secrets", "rm", "SENTRY_TOKEN"][..],
    ] {
        let out = env.run(args).expect_code(1);
        assert!(out.stderr.contains("no keychain is available"), "{out}");
        assert!(out.stderr.contains("hint: start a Secret Service"), "{out}");
        out.assert_no_secret(&[TOKEN]);
        assert_eq!(env.bytes("project/.env"), before, "{args:?}");
    }

    let Some((env, service)) = keychain_world() else {
        return;
    };
    service.lock();
    let before = env.bytes("project/.env");
    let out = env
        .run(&["secrets", "move", "GITHUB_TOKEN", "--to", "keychain"])
        .expect_code(1);
    assert!(out.stderr.contains("the keychain is locked"), "{out}");
    assert!(out.stderr.contains("hint: unlock the keychain"), "{out}");
    assert_eq!(env.bytes("project/.env"), before);
}

#[test]
fn rm_deletes_the_keychain_entry_after_the_line() {
    let Some((env, service)) = keychain_world() else {
        return;
    };
    assert_eq!(
        service.lookup("mcpenv", SENTRY).as_deref(),
        Some(SENTRY_TOKEN)
    );
    let out = env.run(&["secrets", "rm", "SENTRY_TOKEN"]).expect_code(0);
    out.assert_no_secret(&[SENTRY_TOKEN]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Removed `SENTRY_TOKEN` from `.env`
    Deleted its keychain entry `github.com/acme/widgets/SENTRY_TOKEN` (service `mcpenv`)
    note: other clones of this repository on this machine that name it have lost the value too
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes may hold the secret now kept in the keychain, and no plaintext copy of it may stay behind
    [exit status: 0]
    ");
    assert_eq!(
        env.read("project/.env"),
        keychain_dotenv().replace(&format!("SENTRY_TOKEN=keychain:{SENTRY}\n"), "")
    );
    assert_eq!(service.lookup("mcpenv", SENTRY), None);
}

#[test]
fn an_entry_holding_another_value_is_never_overwritten() {
    let Some((env, service)) = keychain_world() else {
        return;
    };
    // Another clone of the repository saved its own value under the name.
    service.store(
        "mcpenv",
        ACCOUNT,
        "mcpenv",
        "ghp_An0therCl0nesValue0123456789abcdefGH",
    );
    let before = env.bytes("project/.env");
    let out = env
        .run(&["secrets", "move", "GITHUB_TOKEN", "--to", "keychain"])
        .expect_code(1);
    out.assert_no_secret(&[TOKEN, "ghp_An0therCl0nesValue0123456789abcdefGH"]);
    assert!(
        out.stderr.contains(
            "error: the keychain already holds a different value for `GITHUB_TOKEN` (account `github.com/acme/widgets/GITHUB_TOKEN`); nothing was changed"
        ),
        "{out}"
    );
    assert_eq!(env.bytes("project/.env"), before);
    assert_eq!(
        service.lookup("mcpenv", ACCOUNT).as_deref(),
        Some("ghp_An0therCl0nesValue0123456789abcdefGH")
    );
}
