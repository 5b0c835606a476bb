//! The stand-in for 1Password's `op` (`tests/support/fake_op.rs`) and the
//! tests that pin it to `op`'s documented behaviour. The real `op` cannot be
//! installed on the test machines, so these tests are what make the
//! stand-in worth trusting: each expected text names where it comes from.
//!
//! Sources, cited below by their labels:
//! - [read] <https://developer.1password.com/docs/cli/reference/commands/read/>
//! - [syntax] <https://developer.1password.com/docs/cli/secret-reference-syntax/>
//! - [whoami] <https://developer.1password.com/docs/cli/reference/commands/whoami>
//! - [op-2.35] texts real `op` 2.35 printed for unresolvable references,
//!   kept verbatim in a public test suite ("advice is pinned to what op
//!   actually says"); [op-2.39]: the same texts from `op` 2.39.0 in another
//!   (redkraken's vault tests). Both agree where both have a text.
//! - [op-js#227] <https://github.com/1Password/op-js/issues/227> (`whoami`
//!   signed out).
//!
//! Where neither says anything the stand-in chose a text; those are marked
//! CHOSEN, so a test relying on them knows it relies on a guess.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::harness::TestEnv;

/// The stand-in's binary, built on first use.
fn fake_op_bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| crate::probe::example("mcpenv-fake-op"))
}

/// A 1Password CLI for one test: a directory holding an executable `op`
/// (the stand-in), the account's items, and the log of every call.
pub struct FakeOp {
    bin: PathBuf,
    items: PathBuf,
    log: PathBuf,
    signed_out: bool,
}

impl FakeOp {
    /// An `op` in `dir/fake-op/bin/`, signed in, whose account holds
    /// `items`: `{"<vault>": {"<item>": {"<field>": "<value>", …,
    /// "sections": {"<section>": {"<field>": "<value>"}}}}}`, a value being a
    /// string or `{"value": …, "otp": …}` (see `tests/support/fake_op.rs`).
    pub fn new(dir: &Path, items: Value) -> Self {
        let home = dir.join("fake-op");
        let bin = home.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(fake_op_bin(), bin.join("op")).unwrap();
        let items_path = home.join("items.json");
        std::fs::write(&items_path, items.to_string()).unwrap();
        Self {
            bin,
            items: items_path,
            log: home.join("calls.jsonl"),
            signed_out: false,
        }
    }

    /// The directory to put first on a child's PATH.
    pub fn path_dir(&self) -> &Path {
        &self.bin
    }

    /// The `op` executable itself.
    pub fn program(&self) -> PathBuf {
        self.bin.join("op")
    }

    /// The `MCPENV_FAKE_OP_*` variables a child needs to reach this account.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "MCPENV_FAKE_OP_ITEMS".to_string(),
                self.items.display().to_string(),
            ),
            (
                "MCPENV_FAKE_OP_LOG".to_string(),
                self.log.display().to_string(),
            ),
        ];
        if self.signed_out {
            env.push(("MCPENV_FAKE_OP_SIGNED_OUT".to_string(), "1".to_string()));
        }
        env
    }

    /// Ends the session: `env()` from now on makes every `read` and
    /// `whoami` fail as `op` does when not signed in.
    pub fn sign_out(&mut self) {
        self.signed_out = true;
    }

    /// Every call so far, oldest first, each as its arguments (without `op`).
    pub fn calls(&self) -> Vec<Vec<String>> {
        let Ok(text) = std::fs::read_to_string(&self.log) else {
            return Vec::new();
        };
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }

    /// PATH with this `op` first, then the test process's own PATH (what
    /// `TestEnv` hands every child).
    pub fn path(&self) -> String {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.bin.clone()).chain(std::env::split_paths(&inherited));
        std::env::join_paths(dirs)
            .unwrap()
            .into_string()
            .expect("the test directories are UTF-8")
    }

    /// Makes every later run of `env` find this `op` and its account. Call
    /// it after `sign_out` when the run should be signed out.
    pub fn install(&self, env: &mut TestEnv) {
        env.set_env("PATH", self.path());
        for (key, value) in self.env() {
            env.set_env(&key, value);
        }
    }

    /// Runs this `op` directly, with only its own variables.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(self.program())
            .args(args)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

/// The account most tests read from.
fn account(dir: &Path) -> FakeOp {
    FakeOp::new(
        dir,
        json!({
            "Engineering": {
                "GitHub": {
                    "token": "ghp_fake0123456789",
                    "one-time password": { "value": "otpauth://totp/x?secret=ABC", "otp": "123456" },
                    "sections": { "Admin": { "email": "admin@example.com" } },
                },
            },
        }),
    )
}

/// What a run printed, with `op`'s log timestamp shown as `[TIME]`.
struct Ran {
    stdout: String,
    stderr: String,
    code: i32,
}

fn ran(output: &Output) -> Ran {
    // `[ERROR] 2026/07/28 14:36:07 …`: the shape every capture shows.
    let stamp = regex::Regex::new(r"^\[ERROR\] \d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} ").unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    Ran {
        stdout: String::from_utf8(output.stdout.clone()).unwrap(),
        stderr: stamp.replace(&stderr, "[ERROR] [TIME] ").into_owned(),
        code: output.status.code().unwrap(),
    }
}

/// Asserts a failure as `op` reports one: nothing on stdout, one
/// `[ERROR] <timestamp> <message>` line on stderr, exit 1.
#[track_caller]
fn assert_op_error(output: &Output, message: &str) {
    let ran = ran(output);
    assert_eq!(ran.stdout, "", "stdout of a failure");
    assert_eq!(ran.stderr, format!("[ERROR] [TIME] {message}\n"));
    assert_eq!(ran.code, 1, "op exits 1 on failure");
}

#[test]
fn read_prints_the_value_and_a_newline_and_no_newline_drops_it() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // [read]: "Print the secret saved in the field password …": the value,
    // then a newline, unless "-n, --no-newline  Do not print a new line
    // after the secret."
    let out = ran(&op.run(&["read", "op://Engineering/GitHub/token"]));
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str(), out.code),
        ("ghp_fake0123456789\n", "", 0)
    );
    for flag in ["-n", "--no-newline"] {
        let out = ran(&op.run(&["read", flag, "op://Engineering/GitHub/token"]));
        assert_eq!((out.stdout.as_str(), out.code), ("ghp_fake0123456789", 0));
    }
    // Flags may follow the reference, as cobra (which op uses) allows.
    let out = ran(&op.run(&["read", "op://Engineering/GitHub/token", "-n"]));
    assert_eq!(out.stdout, "ghp_fake0123456789");
}

#[test]
fn read_accepts_the_global_account_flag_and_force() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // --account is global ("An account specified with the --account flag"
    // takes precedence over OP_ACCOUNT):
    // https://developer.1password.com/docs/cli/reference/management-commands/account
    // [read]: "-f, --force  Do not prompt for confirmation."
    for args in [
        &[
            "read",
            "--account",
            "my.1password.com",
            "op://Engineering/GitHub/token",
        ][..],
        &[
            "--account=my.1password.com",
            "read",
            "op://Engineering/GitHub/token",
        ],
        &[
            "read",
            "--force",
            "--no-color",
            "op://Engineering/GitHub/token",
        ],
    ] {
        let out = ran(&op.run(args));
        assert_eq!(
            (out.stdout.as_str(), out.code),
            ("ghp_fake0123456789\n", 0),
            "{args:?}"
        );
    }
}

#[test]
fn references_name_a_section_are_case_insensitive_and_take_attribute_otp() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // [syntax]: op://<vault>/<item>[/<section>]/<field>; "Secret references
    // are case-insensitive"; "?attribute=otp" reads a one-time password.
    let cases = [
        ("op://Engineering/GitHub/Admin/email", "admin@example.com\n"),
        ("op://engineering/GITHUB/token", "ghp_fake0123456789\n"),
        ("op://Engineering/GitHub/admin/EMAIL", "admin@example.com\n"),
        // CHOSEN: a field named without its section is found in any section.
        ("op://Engineering/GitHub/email", "admin@example.com\n"),
        (
            "op://Engineering/GitHub/one-time password?attribute=otp",
            "123456\n",
        ),
        (
            "op://Engineering/GitHub/one-time password",
            "otpauth://totp/x?secret=ABC\n",
        ),
    ];
    for (reference, expected) in cases {
        let out = ran(&op.run(&["read", reference]));
        assert_eq!(
            (out.stdout.as_str(), out.code),
            (expected, 0),
            "{reference}"
        );
    }
}

#[test]
fn missing_vault_item_and_field_fail_with_ops_texts() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // [op-2.35]: `could not read secret 'op://NoSuchVault/Notion/Username':
    // could not get item NoSuchVault/Notion: "NoSuchVault" isn't a vault in
    // this account. Specify the vault with its ID or name.`
    assert_op_error(
        &op.run(&["read", "op://Marketing/GitHub/token"]),
        "could not read secret 'op://Marketing/GitHub/token': could not get item Marketing/GitHub: \
         \"Marketing\" isn't a vault in this account. Specify the vault with its ID or name.",
    );
    // [op-2.35], [op-2.39]: `… could not get item Employee/NoSuchItem:
    // "NoSuchItem" isn't an item in the "Employee" vault. Specify the item
    // with its UUID, name, or domain.`
    assert_op_error(
        &op.run(&["read", "op://Engineering/GitLab/token"]),
        "could not read secret 'op://Engineering/GitLab/token': could not get item Engineering/GitLab: \
         \"GitLab\" isn't an item in the \"Engineering\" vault. Specify the item with its UUID, name, or domain.",
    );
    // [op-2.35], [op-2.39]: `could not read secret
    // 'op://Employee/Notion/NoSuchField': item 'Employee/Notion' does not
    // have a field 'NoSuchField'`
    assert_op_error(
        &op.run(&["read", "op://Engineering/GitHub/password"]),
        "could not read secret 'op://Engineering/GitHub/password': \
         item 'Engineering/GitHub' does not have a field 'password'",
    );
    // CHOSEN: a field missing from a named section reads the same.
    assert_op_error(
        &op.run(&["read", "op://Engineering/GitHub/Billing/email"]),
        "could not read secret 'op://Engineering/GitHub/Billing/email': \
         item 'Engineering/GitHub' does not have a field 'email'",
    );
}

#[test]
fn malformed_references_fail_as_invalid_secret_references() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    let invalid = |reference: &str, why: &str| {
        format!(
            "could not read secret '{reference}': invalid secret reference '{reference}': {why}"
        )
    };
    let cases = [
        // [op-2.35]: `could not read secret 'op://Employee/Notion': invalid
        // secret reference 'op://Employee/Notion': too few '/': secret
        // references should have at least vault, item and field specified`
        (
            "op://Engineering/GitHub",
            "too few '/': secret references should have at least vault, item and field specified",
        ),
        // The text after `too many '/'` as quoted from op on
        // https://tessl.io/registry/skills/github/NeverSight/skills_feed/op-cli;
        // the wrapping as for `too few`.
        (
            "op://a/b/c/d/e",
            "too many '/': secret references should match op://<vault>/<item>[/<section>]/<field>",
        ),
        // [syntax]: only letters, digits, `-`, `_`, `.` and spaces; op 2.39
        // prints `invalid secret reference 'op://For Chang's Claude/item/credential':
        // invalid character in secret reference: '''` (a public skill note).
        (
            "op://Chang's/item/field",
            "invalid character in secret reference: '''",
        ),
        // `invalid secret reference 'op:///…': vault can't be empty` (a
        // public project's notes); the item and field forms CHOSEN alike.
        ("op:///GitHub/token", "vault can't be empty"),
        ("op://Engineering//token", "item can't be empty"),
        // CHOSEN: no capture shows a reference without the scheme.
        (
            "Engineering/GitHub/token",
            "secret references should start with 'op://'",
        ),
    ];
    for (reference, why) in cases {
        assert_op_error(&op.run(&["read", reference]), &invalid(reference, why));
    }
}

#[test]
fn signed_out_read_and_whoami_fail_with_the_not_signed_in_texts() {
    let temp = tempfile::tempdir().unwrap();
    let mut op = account(temp.path());
    op.sign_out();
    // The sentence in captures since 2020 (`[ERROR] 2020/08/08 18:10:03 You
    // are not currently signed in. Please run `op signin --help` for
    // instructions`); inside `op read`, [op-2.39]: `could not read secret
    // '…': error initializing client: You are not currently signed in. …`
    assert_op_error(
        &op.run(&["read", "op://Engineering/GitHub/token"]),
        "could not read secret 'op://Engineering/GitHub/token': error initializing client: \
         You are not currently signed in. Please run `op signin --help` for instructions",
    );
    // [whoami]: "returns an error if no accounts are currently
    // authenticated"; the text, [op-js#227]: `[ERROR] account is not signed in`.
    assert_op_error(&op.run(&["whoami"]), "account is not signed in");
    // --version needs no account.
    assert_eq!(ran(&op.run(&["--version"])).code, 0);
}

#[test]
fn whoami_and_version_answer_when_signed_in() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // [whoami]: "Returns the currently active account"; the layout as a
    // signed-in `op whoami` printed it in a public repository's notes.
    let out = ran(&op.run(&["whoami"]));
    assert_eq!(
        (out.stdout.as_str(), out.code),
        (
            "URL:          https://my.1password.com\n\
             Email:        fake-op@example.com\n\
             User ID:      FAKEOPUSER0000000000000000\n\
             User Type:    HUMAN\n",
            0
        )
    );
    // `op --version` prints the bare version ("Local `op --version`: `2.34.0`").
    let out = ran(&op.run(&["--version"]));
    assert_eq!((out.stdout.as_str(), out.code), ("2.39.0\n", 0));
}

#[test]
fn unknown_commands_and_flags_fail_as_in_op() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    // `[ERROR] unknown command "environment" for "op"`, op 2.34.0 as two
    // public projects recorded it.
    assert_op_error(
        &op.run(&["item", "get", "GitHub"]),
        "unknown command \"item\" for \"op\"",
    );
    // `op read` has no --reveal ([read] lists none); op rejects it at flag
    // parsing. The wording is cobra's (CHOSEN).
    assert_op_error(
        &op.run(&["read", "--reveal", "op://Engineering/GitHub/token"]),
        "unknown flag: --reveal",
    );
    assert_op_error(
        &op.run(&["read", "-x", "op://Engineering/GitHub/token"]),
        "unknown shorthand flag: 'x' in -x",
    );
    // CHOSEN (cobra's wording): `read` takes exactly one reference.
    assert_op_error(&op.run(&["read"]), "accepts 1 arg(s), received 0");
}

#[test]
fn every_call_is_logged_with_its_arguments() {
    let temp = tempfile::tempdir().unwrap();
    let op = account(temp.path());
    assert!(op.calls().is_empty());
    let _ = op.run(&["read", "-n", "op://Engineering/GitHub/token"]);
    let _ = op.run(&["read", "op://Engineering/Nope/token"]);
    let _ = op.run(&["whoami"]);
    assert_eq!(
        op.calls(),
        [
            vec!["read", "-n", "op://Engineering/GitHub/token"],
            vec!["read", "op://Engineering/Nope/token"],
            vec!["whoami"],
        ]
    );
}

#[test]
fn install_puts_op_first_on_a_test_envs_path() {
    let mut env = TestEnv::new();
    let mut op = account(&env.root);
    op.sign_out();
    op.install(&mut env);
    let command = env.command(&env.project, &[]);
    let vars: Vec<(String, String)> = command
        .get_envs()
        .filter_map(|(key, value)| Some((key.to_str()?.to_string(), value?.to_str()?.to_string())))
        .collect();
    let path = vars.iter().rev().find(|(key, _)| key == "PATH").unwrap();
    let found = which::which_in("op", Some(&path.1), &env.project).unwrap();
    assert_eq!(found, op.program());
    for wanted in op.env() {
        assert!(vars.contains(&wanted), "{wanted:?} not in {vars:?}");
    }
    assert!(op.path_dir().starts_with(&env.root));
}
