//! 1Password references in `.env` (`op://vault/item/field`), against the
//! stand-in `op` (`tests/support/fake_op.rs`, which follows 1Password's
//! documented `op read`): `run`, `env` and `probe` hand on the value, each
//! reference read once per run; `check` says where the value lives and,
//! when `op` is missing or signed out, fails with the next step.

use serde_json::{Value, json};

use crate::fake_op::FakeOp;
use crate::harness::TestEnv;
use crate::probe::fake_bin;

const GITHUB: &str = "ghp_Op1Pass5ordR3fTok3nValue0123456789ab";
const LINEAR: &str = "lin_api_9fQ2xR7mZ4kT1vW8bN3cY6hJ0pL5sD2gA";

/// A project whose two servers need `GITHUB_TOKEN` (one of them twice,
/// under another name too) and `LINEAR_API_KEY`, all named in `.env` by
/// 1Password references, and an `op` signed in to an account holding them.
fn world() -> (TestEnv, FakeOp) {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "github": {"command": "sh", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}},
            "linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
                "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}}
        }})
        .to_string(),
    );
    env.write(
        "project/.env",
        "GITHUB_TOKEN=op://Engineering/GitHub/token\n\
         GH_TOKEN=op://Engineering/GitHub/token\n\
         LINEAR_API_KEY=op://Engineering/Linear/credential\n\
         PLAIN=as-written\n",
    );
    std::fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let op = FakeOp::new(
        &env.root,
        json!({"Engineering": {
            "GitHub": {"token": GITHUB},
            "Linear": {"credential": LINEAR}
        }}),
    );
    op.install(&mut env);
    (env, op)
}

fn reads(op: &FakeOp) -> Vec<String> {
    op.calls()
        .into_iter()
        .filter(|call| call.first().is_some_and(|verb| verb == "read"))
        .map(|call| call.last().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn run_hands_on_the_values_reading_each_reference_once() {
    let (env, op) = world();
    let out = env
        .run(&[
            "run",
            "--",
            "sh",
            "-c",
            "printf '%s|%s|%s|%s' \"$GITHUB_TOKEN\" \"$GH_TOKEN\" \"$LINEAR_API_KEY\" \"$PLAIN\"",
        ])
        .expect_code(0);
    assert_eq!(out.stdout, format!("{GITHUB}|{GITHUB}|{LINEAR}|as-written"));
    assert_eq!(
        reads(&op),
        [
            "op://Engineering/GitHub/token",
            "op://Engineering/Linear/credential"
        ],
        "one `op read` per reference, however many variables name it"
    );
    // Values never reach a disk: the `.env` still holds the references.
    let dotenv = env.read("project/.env");
    assert!(!dotenv.contains(GITHUB) && !dotenv.contains(LINEAR));
}

#[test]
fn check_says_the_value_comes_from_1password_and_never_shows_it() {
    let (env, op) = world();
    let out = env.run(&["check"]);
    out.assert_no_secret(&[GITHUB, LINEAR]);
    assert!(
        out.stdout
            .contains("GITHUB_TOKEN    from 1Password (named in .env, seen through `mcpenv run`)"),
        "{out}"
    );
    assert!(!out.stdout.contains("reference-unresolved"), "{out}");
    let json = env.run(&["check", "--json"]);
    json.assert_no_secret(&[GITHUB, LINEAR]);
    let json = json.json();
    let github = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|variable| variable["name"] == "GITHUB_TOKEN")
        .unwrap();
    assert_eq!(
        github["reference"],
        json!({"manager": "1password", "resolves": true}),
        "{json}"
    );
    assert_eq!(reads(&op).len(), 4, "two references, two checks");
}

#[test]
fn signed_out_check_and_run_fail_with_the_next_step() {
    let (mut env, mut op) = world();
    op.sign_out();
    op.install(&mut env);
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout.contains(
            "error: `GITHUB_TOKEN` in `.env` is a 1Password reference that `op read` could not read"
        ),
        "{out}"
    );
    assert!(
        out.stdout.contains("You are not currently signed in"),
        "op's own reason is shown: {out}"
    );
    assert!(out.stdout.contains("eval $(op signin)"), "{out}");
    assert!(
        out.stdout
            .contains("GITHUB_TOKEN    from 1Password, but it gives no value"),
        "{out}"
    );
    let json = env.run(&["check", "--json"]).expect_code(1).json();
    assert_eq!(json["ok"], false);
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|finding| finding["code"] == "reference-unresolved"
                && finding["message"]
                    .as_str()
                    .is_some_and(|message| message.starts_with("`LINEAR_API_KEY`"))),
        "{json}"
    );
    let out = env
        .run(&["run", "--", "sh", "-c", "echo started"])
        .expect_code(1);
    assert!(out.stdout.is_empty(), "the command must not start: {out}");
    assert!(out.stderr.contains("op signin"), "{out}");
}

#[test]
fn without_op_on_path_check_says_how_to_install_it() {
    let (mut env, _op) = world();
    env.set_env("PATH", "/usr/bin:/bin");
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout
            .contains("is a 1Password reference, and the 1Password CLI (`op`) is not on PATH"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("https://developer.1password.com/docs/cli/get-started/"),
        "{out}"
    );
}

#[test]
fn a_reference_to_nothing_names_ops_reason() {
    let (env, _op) = world();
    env.write(
        "project/.env",
        "GITHUB_TOKEN=op://Engineering/GitHub/no-such-field\nLINEAR_API_KEY=x\n",
    );
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout
            .contains("item 'Engineering/GitHub' does not have a field 'no-such-field'"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("check the reference with `op read 'op://Engineering/GitHub/no-such-field'`"),
        "{out}"
    );
}

#[test]
fn env_exports_the_values() {
    let (env, op) = world();
    let out = env.run(&["env"]).expect_code(0);
    assert!(
        out.stdout
            .contains(&format!("export GITHUB_TOKEN='{GITHUB}'")),
        "{out}"
    );
    assert!(
        out.stdout
            .contains(&format!("export LINEAR_API_KEY='{LINEAR}'")),
        "{out}"
    );
    assert_eq!(reads(&op).len(), 2);
}

#[test]
fn probe_hands_the_value_to_the_server_and_skips_one_whose_reference_fails() {
    let (env, _op) = world();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "needs-token": {"command": fake_bin(), "args": ["needs-env:TOKEN"],
                "env": {"TOKEN": "${GITHUB_TOKEN}"}},
            "broken": {"command": fake_bin(), "env": {"TOKEN": "${MISSING_REF}"}}
        }})
        .to_string(),
    );
    env.write(
        "project/.env",
        "GITHUB_TOKEN=op://Engineering/GitHub/token\nMISSING_REF=op://Engineering/Gone/token\n",
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["needs-token", "broken"]}).to_string(),
    );
    env.trust_project();
    let out = env.run(&["probe", "--jsonl", "--timeout", "10"]);
    out.assert_no_secret(&[GITHUB]);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let started: Vec<&Value> = lines
        .iter()
        .filter(|line| line.get("name").is_some())
        .collect();
    assert_eq!(
        started.len(),
        1,
        "only the server with a value starts: {out}"
    );
    assert_eq!(started[0]["name"], "needs-token", "{out}");
    assert_eq!(started[0]["ok"], true, "it got the value: {out}");
    assert!(
        out.stderr.contains(
            "skipped `broken`: `MISSING_REF` is a 1Password reference that `op read` could not read"
        ) && out
            .stderr
            .contains("\"Gone\" isn't an item in the \"Engineering\" vault"),
        "{out}"
    );
}

/// A teammate's clone: the servers, and a `.env.example` naming where the
/// team keeps each secret; no `.env` yet.
fn teammate() -> (TestEnv, FakeOp) {
    let (env, op) = world();
    std::fs::remove_file(env.project.join(".env")).unwrap();
    env.write(
        "project/.env.example",
        "# The team's GitHub token\n\
         GITHUB_TOKEN=op://Engineering/GitHub/token\n\
         LINEAR_API_KEY=op://Engineering/Linear/credential\n",
    );
    env.write("project/.gitignore", ".env\n");
    (env, op)
}

#[test]
fn team_references_onboard_a_teammate_without_a_prompt() {
    let (env, op) = teammate();
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout.contains(
            "hint: the team's `.env.example` names where it is kept (`op://Engineering/GitHub/token`): `mcpenv onboard` shows it and asks before using it (without a terminal: `mcpenv onboard --accept-reference GITHUB_TOKEN`)"
        ),
        "{out}"
    );
    // No terminal: onboarding would refuse if it had to ask anything; the
    // person accepts the repository's references by name.
    let out = env
        .run(&[
            "onboard",
            "--accept-reference",
            "GITHUB_TOKEN",
            "--accept-reference",
            "LINEAR_API_KEY",
        ])
        .expect_code(0);
    out.assert_no_secret(&[GITHUB, LINEAR]);
    assert!(
        out.stderr.contains(
            "Using the team's reference for `GITHUB_TOKEN` from `.env.example` (`op://Engineering/GitHub/token`): it resolves"
        ),
        "{out}"
    );
    assert!(
        out.stderr.contains(
            "Saved 2 variables to `.env` as references: `GITHUB_TOKEN`, `LINEAR_API_KEY`"
        ),
        "{out}"
    );
    // References, not values, are copied.
    assert_eq!(
        env.read("project/.env"),
        "GITHUB_TOKEN='op://Engineering/GitHub/token'\nLINEAR_API_KEY='op://Engineering/Linear/credential'\n"
    );
    assert_eq!(env.mode("project/.env"), 0o600);
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, GITHUB);
    assert!(reads(&op).contains(&"op://Engineering/GitHub/token".to_string()));
}

#[test]
fn a_team_reference_that_does_not_resolve_is_asked_for_instead_saying_why() {
    let (mut env, mut op) = teammate();
    op.sign_out();
    op.install(&mut env);
    let out = env
        .run(&["onboard", "--accept-reference", "GITHUB_TOKEN"])
        .expect_code(1);
    assert!(
        out.stderr.contains(
            "`GITHUB_TOKEN`: the team's reference in `.env.example` (`op://Engineering/GitHub/token`) is a 1Password reference that `op read` could not read"
        ),
        "{out}"
    );
    assert!(out.stderr.contains("asking instead"), "{out}");
    assert!(
        out.stderr
            .contains("cannot ask for `GITHUB_TOKEN`, `LINEAR_API_KEY` without a terminal"),
        "{out}"
    );
    assert!(!env.project.join(".env").exists());
}

#[test]
fn extract_records_the_teams_reference_in_env_example() {
    let (env, op) = world();
    std::fs::remove_file(env.project.join(".env")).unwrap();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": GITHUB}}}})
        .to_string(),
    );
    let out = env
        .run(&[
            "extract",
            "--reference",
            "GITHUB_PERSONAL_ACCESS_TOKEN=op://Engineering/GitHub/token",
        ])
        .expect_code(0);
    out.assert_no_secret(&[GITHUB]);
    assert!(
        !out.stderr.contains("warning"),
        "the reference gives the moved value: {out}"
    );
    let example = env.read("project/.env.example");
    assert!(
        example.contains("GITHUB_PERSONAL_ACCESS_TOKEN=op://Engineering/GitHub/token\n"),
        "{example}"
    );
    assert!(!example.contains(GITHUB));
    // The sharer's own value stays in their `.env`.
    assert!(env.read("project/.env").contains(GITHUB));
    assert_eq!(reads(&op), ["op://Engineering/GitHub/token"]);
}

#[test]
fn extract_warns_when_the_reference_gives_another_value_and_refuses_an_unknown_variable() {
    let (env, _op) = world();
    std::fs::remove_file(env.project.join(".env")).unwrap();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_An0therT0kenThanTheVault0123456789ab"}}}})
        .to_string(),
    );
    let before = env.read("project/.mcp.json");
    let out = env
        .run(&[
            "extract",
            "--reference",
            "GITHUB_TOKN=op://Engineering/GitHub/token",
        ])
        .expect_code(2);
    assert!(
        out.stderr
            .contains("this extraction puts no `GITHUB_TOKN` into the project's `.env`"),
        "{out}"
    );
    assert_eq!(env.read("project/.mcp.json"), before, "nothing written");
    let out = env
        .run(&[
            "extract",
            "--reference",
            "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_literal",
        ])
        .expect_code(2);
    assert!(
        out.stderr.contains("not a reference a team can share"),
        "{out}"
    );
    out.assert_no_secret(&["ghp_literal"]);
    let out = env
        .run(&[
            "extract",
            "--reference",
            "GITHUB_PERSONAL_ACCESS_TOKEN=op://Engineering/GitHub/token",
        ])
        .expect_code(0);
    assert!(
        out.stderr.contains(
            "warning: `op://Engineering/GitHub/token` gives another value than the `GITHUB_PERSONAL_ACCESS_TOKEN` being moved"
        ),
        "{out}"
    );
}

#[test]
fn onboarding_into_claude_settings_never_copies_what_a_reference_keeps_elsewhere() {
    let (env, _op) = world();
    let out = env
        .run(&["onboard", "--to", "claude-settings"])
        .expect_code(0);
    out.assert_no_secret(&[GITHUB, LINEAR]);
    assert!(
        out.stderr.contains(
            "`GITHUB_TOKEN` is from 1Password; it is not copied into Claude Code's settings in plaintext"
        ),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("hint: start Claude Code with `mcpenv run -- claude`"),
        "{out}"
    );
    let settings = std::fs::read_to_string(env.project.join(".claude/settings.local.json"))
        .unwrap_or_default();
    assert!(
        !settings.contains("op://") && !settings.contains(GITHUB),
        "{settings}"
    );
}

#[test]
fn a_reference_in_the_environment_reaches_the_server_as_written_and_check_says_so() {
    let (mut env, _op) = world();
    env.set_env("GITHUB_TOKEN", "op://Engineering/GitHub/token");
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout.contains(
            "error: `GITHUB_TOKEN` in the environment is a reference (from 1Password once resolved), but Claude Code and `mcpenv run` hand it to github as written"
        ),
        "{out}"
    );
    // As promised: the environment wins and is not resolved.
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, "op://Engineering/GitHub/token");
}

#[test]
fn a_reference_whose_names_hold_spaces_is_read_as_one() {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"github": {"command": "sh", "env": {"T": "${GITHUB_TOKEN}"}}}})
            .to_string(),
    );
    env.write(
        "project/.env",
        "GITHUB_TOKEN='op://Team Vault/GitHub token/credential'\n",
    );
    let op = FakeOp::new(
        &env.root,
        json!({"Team Vault": {"GitHub token": {"credential": GITHUB}}}),
    );
    op.install(&mut env);
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, GITHUB);
    assert_eq!(reads(&op), ["op://Team Vault/GitHub token/credential"]);
}

const BANK: &str = "Hunter2-B4nkP4ssw0rd-0123456789abcdef";

/// Runs `git ARGS` in `dir`, which must succeed.
fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A cloned repository whose committed `file` points `GITHUB_TOKEN` at an
/// item of the person's own vault that has nothing to do with it, and an
/// `op` signed in to that vault.
fn hostile(file: &str) -> (TestEnv, FakeOp) {
    let mut env = TestEnv::bare();
    git(&env.project, &["init", "-q"]);
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "github": {"command": "sh", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}
        }})
        .to_string(),
    );
    env.write("project/.gitignore", ".env.local\n");
    env.write(
        &format!("project/{file}"),
        "GITHUB_TOKEN=op://Private/Bank/password\n",
    );
    git(&env.project, &["add", "."]);
    let op = FakeOp::new(&env.root, json!({"Private": {"Bank": {"password": BANK}}}));
    op.install(&mut env);
    (env, op)
}

#[test]
fn onboard_never_reads_or_copies_a_reference_from_env_example_unasked() {
    let (env, op) = hostile(".env.example");
    env.write("project/.gitignore", ".env\n.env.local\n");
    let out = env.run(&["onboard"]);
    out.assert_no_secret(&[BANK]);
    insta::assert_snapshot!(out, @"
    ----- stderr -----
    error: cannot ask for `GITHUB_TOKEN` without a terminal

    hint: the repository's `.env.example` points `GITHUB_TOKEN` at `op://Private/Bank/password`; mcpenv reads no reference a repository chose before you agree: if it is yours to use, run `mcpenv onboard --accept-reference GITHUB_TOKEN`
    hint: see what is missing with `mcpenv check --json`
    hint: or set the variables in the environment and copy them with `mcpenv onboard --from-env`, which never prompts
    [exit status: 1]
    ");
    assert_eq!(
        reads(&op),
        Vec::<String>::new(),
        "read before anyone agreed"
    );
    assert!(!env.project.join(".env").exists());

    // Named by the person: copied into their own `.env`, then read.
    let out = env
        .run(&["onboard", "--accept-reference", "GITHUB_TOKEN"])
        .expect_code(0);
    out.assert_no_secret(&[BANK]);
    assert_eq!(
        env.read("project/.env"),
        "GITHUB_TOKEN='op://Private/Bank/password'\n"
    );
    // Read once accepted (and by the check that ends onboarding).
    assert!(!reads(&op).is_empty());
}

#[test]
fn onboard_on_a_terminal_shows_the_repositorys_reference_and_asks() {
    let (env, op) = hostile(".env.example");
    env.write("project/.gitignore", ".env\n.env.local\n");
    let mut terminal = crate::terminal::Terminal::start(&env, &["onboard"]);
    terminal.expect(
        "The repository's `.env.example` says `GITHUB_TOKEN` is kept at `op://Private/Bank/password`",
    );
    terminal.answer_key("Use `op://Private/Bank/password` for `GITHUB_TOKEN`?", "n");
    terminal.type_hidden("GITHUB_TOKEN (hidden): ", "my-own-value");
    let (shown, status) = terminal.finish();
    assert_eq!(crate::terminal::exited(status), 0, "{shown}");
    assert_eq!(reads(&op), Vec::<String>::new(), "{shown}");
    assert_eq!(env.read("project/.env"), "GITHUB_TOKEN='my-own-value'\n");
}

#[test]
fn a_reference_in_a_tracked_env_is_never_read_until_the_person_makes_it_theirs() {
    let (env, op) = hostile(".env");
    let out = env.run(&["check"]).expect_code(1);
    out.assert_no_secret(&[BANK]);
    let unwrapped = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        unwrapped.contains(
            "`GITHUB_TOKEN` in `.env` is a reference (`op://Private/Bank/password`) in a file git tracks: the repository chose it, and mcpenv reads no such reference before you make it yours"
        ),
        "{out}"
    );
    // A committed `.env` is not loaded at all before the folder is
    // trusted (`ops::handed`), its reference least of all.
    let out = env.run(&["env"]).expect_code(0);
    out.assert_no_secret(&[BANK]);
    assert!(!out.stdout.contains("GITHUB_TOKEN"), "{out}");
    assert!(
        out.stderr
            .contains("`[ROOT]/project/.env` not loaded: `.env` is committed to the repository"),
        "{out}"
    );
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, "", "{out}");
    assert_eq!(
        reads(&op),
        Vec::<String>::new(),
        "read before anyone agreed"
    );

    // Copied into the person's own untracked file: theirs now.
    env.write(
        "project/.env.local",
        "GITHUB_TOKEN=op://Private/Bank/password\n",
    );
    std::fs::set_permissions(
        env.project.join(".env.local"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let out = env
        .run(&["run", "--", "sh", "-c", "printf %s \"$GITHUB_TOKEN\""])
        .expect_code(0);
    assert_eq!(out.stdout, BANK);
    assert_eq!(reads(&op), ["op://Private/Bank/password"]);
}
