//! `mcpenv onboard`: answers typed into a real pseudo-terminal, and the
//! runs that need none (`--from-env`, refusals, nothing to do).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use insta::assert_snapshot;
use rexpect::process::{Signal, WaitStatus};

use crate::harness::TestEnv;
use crate::terminal::{Terminal, exited};

/// A secret with every character `.env` quoting has to get right.
const TOKEN: &str = r#"ghp_Zx9$HOME "q" 'a' \n end"#;
/// A plain value with quotes, blanks and a `$`.
const TITLE: &str = r#"Team "Docs" at $HOME it's"#;

/// `github` needs a secret, `db` has a default, `docs` needs a plain value.
fn project(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "github": {
      "command": "sh",
      "args": ["-c", "exec github-mcp"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}
    },
    "db": {
      "command": "sh",
      "args": ["--dsn", "${DATABASE_URL:-postgresql://localhost/dev}"]
    },
    "docs": {"command": "sh", "args": ["--title", "${DOCS_TITLE}"]}
  }
}
"#,
    );
    env.write(
        "project/.env.example",
        "# A classic token from https://github.com/settings/tokens (scopes: repo, read:org)\n\
         GITHUB_PERSONAL_ACCESS_TOKEN=\n\
         DATABASE_URL=\n\
         # The title shown on the docs pages\n\
         DOCS_TITLE=\n",
    );
    env.write("project/.gitignore", "target/\n.env\n");
}

fn dotenv_values(env: &TestEnv) -> Vec<(String, String)> {
    dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
        .collect()
}

/// Every file under the project but `.git`, byte for byte.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|name| name == ".git") {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().display().to_string();
                files.insert(relative, fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn typed_answers_land_in_dotenv_exactly_and_secrets_are_not_echoed() {
    let env = TestEnv::new();
    project(&env);
    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.expect("`GITHUB_PERSONAL_ACCESS_TOKEN` is needed by `github`");
    terminal.expect("A classic token from https://github.com/settings/tokens");
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", TOKEN);
    terminal.expect("`DOCS_TITLE` is needed by `docs`");
    terminal.expect("The title shown on the docs pages");
    terminal.type_plain("DOCS_TITLE: ", TITLE);
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");

    assert!(
        !shown.contains("ghp_Zx9"),
        "the secret was echoed:\n{shown}"
    );
    // The plain answer is shown as typed: echo works in this terminal.
    assert!(shown.contains(&format!("DOCS_TITLE: {TITLE}")), "{shown}");
    assert!(shown.contains("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): [hidden]"));
    assert!(
        shown.contains("Saved 2 variables to `.env`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`")
    );
    assert!(shown.contains("All 3 servers in effect have what they need"));
    assert_eq!(
        dotenv_values(&env),
        pairs(&[
            ("GITHUB_PERSONAL_ACCESS_TOKEN", TOKEN),
            ("DOCS_TITLE", TITLE)
        ])
    );
    assert_eq!(env.mode("project/.env"), 0o600);
    assert_eq!(env.read("project/.gitignore"), "target/\n.env\n");
}

#[test]
fn the_default_is_offered_and_an_empty_answer_skips_a_variable() {
    let env = TestEnv::new();
    project(&env);
    env.write("project/.env", "# mine\nOTHER=1\n");
    fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mut terminal = Terminal::start(
        &env,
        &["onboard", "--only", "DATABASE_URL", "--only", "DOCS_TITLE"],
    );
    terminal.type_plain("DATABASE_URL [postgresql://localhost/dev]: ", "");
    terminal.type_plain("DOCS_TITLE: ", "");
    let (shown, status) = terminal.finish();
    // `GITHUB_PERSONAL_ACCESS_TOKEN` and `DOCS_TITLE` are still missing.
    assert_eq!(exited(status), 1, "{shown}");
    assert!(
        shown.contains("Skipped `DOCS_TITLE` (no answer)"),
        "{shown}"
    );
    assert_eq!(
        env.read("project/.env"),
        "# mine\nOTHER=1\nDATABASE_URL='postgresql://localhost/dev'\n"
    );
}

#[test]
fn ctrl_c_mid_way_changes_nothing() {
    for to in ["dotenv", "claude-settings"] {
        let env = TestEnv::new();
        project(&env);
        env.write(
            "project/.claude/settings.local.json",
            "{\n  \"env\": {\n    \"OTHER\": \"1\"\n  }\n}\n",
        );
        let before = tree(&env.project);
        let mut terminal = Terminal::start(&env, &["onboard", "--to", to]);
        terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", TOKEN);
        terminal.expect("DOCS_TITLE: ");
        terminal.wait_for_mode("-icanon");
        terminal.session.send("half a title").unwrap();
        terminal.session.flush().unwrap();
        terminal.expect("half a title");
        terminal.session.send_control('c').unwrap();
        let (shown, status) = terminal.finish();
        // Ctrl-C ends it by the signal; where SIGINT is ignored (tests run
        // as a background job of a non-interactive shell) it exits 1.
        let by_signal = matches!(status, WaitStatus::Signaled(_, Signal::SIGINT, _));
        let by_exit = matches!(status, WaitStatus::Exited(_, 1))
            && shown.contains("error: interrupted; nothing was written");
        assert!(by_signal || by_exit, "{to}: {status:?}\n{shown}");
        assert!(!shown.contains("Saved"), "{shown}");
        assert_eq!(tree(&env.project), before, "{to}: a file changed");
        assert!(!env.project.join(".env").exists());
    }
}

#[test]
fn a_readable_env_keeps_its_mode_until_an_answer_is_saved() {
    let env = TestEnv::new();
    project(&env);
    env.write("project/.env", "OTHER=1\n");
    let readable = std::os::unix::fs::PermissionsExt::from_mode(0o644);
    fs::set_permissions(env.project.join(".env"), readable).unwrap();
    // Ctrl-C at the first question: not even the mode changed.
    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.expect("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ");
    terminal.wait_for_mode("-echo");
    terminal.session.send_control('c').unwrap();
    let (shown, _) = terminal.finish();
    assert!(!shown.contains("Made `.env` private"), "{shown}");
    assert_eq!(env.mode("project/.env"), 0o644, "{shown}");
    // Every question skipped: nothing saved, nothing changed.
    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", "");
    terminal.type_plain("DOCS_TITLE: ", "");
    let (shown, _) = terminal.finish();
    assert!(shown.contains("every file was left as it was"), "{shown}");
    assert_eq!(env.mode("project/.env"), 0o644, "{shown}");
    // An answer: private before the value is written.
    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", "");
    terminal.type_plain("DOCS_TITLE: ", "Docs");
    let (shown, _) = terminal.finish();
    assert!(
        shown.contains("Made `.env` private (mode 600; it was 644)"),
        "{shown}"
    );
    assert_eq!(env.mode("project/.env"), 0o600, "{shown}");
    assert!(env.read("project/.env").contains("DOCS_TITLE"), "{shown}");
}

#[test]
fn to_claude_settings_writes_the_env_map_and_ignores_the_file() {
    let env = TestEnv::new();
    project(&env);
    let mut terminal = Terminal::start(&env, &["onboard", "--to", "claude-settings"]);
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", TOKEN);
    terminal.type_plain("DOCS_TITLE: ", TITLE);
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(
        !shown.contains("ghp_Zx9"),
        "the secret was echoed:\n{shown}"
    );
    assert!(
        shown.contains("GITHUB_PERSONAL_ACCESS_TOKEN  set in .claude/settings.local.json (interactive sessions only; not `claude -p` or `claude mcp list`)"),
        "{shown}"
    );
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_Zx9$HOME \"q\" 'a' \\n end",
        "DOCS_TITLE": "Team \"Docs\" at $HOME it's"
      }
    }
    "#);
    let written: serde_json::Value =
        serde_json::from_slice(&env.bytes("project/.claude/settings.local.json")).unwrap();
    assert_eq!(written["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"], TOKEN);
    assert_eq!(written["env"]["DOCS_TITLE"], TITLE);
    assert!(
        env.read("project/.claude/settings.local.json")
            .ends_with("}\n")
    );
    assert_eq!(
        env.mode("project/.claude/settings.local.json"),
        0o600,
        "it holds secrets"
    );
    // The rule is the user's own: git's exclude file, not the tracked `.gitignore`.
    assert_eq!(env.read("project/.gitignore"), "target/\n.env\n");
    assert_eq!(
        env.read("project/.git/info/exclude"),
        ".claude/settings.local.json\n"
    );
    assert!(!env.project.join(".env").exists());
}

#[test]
fn from_env_copies_values_without_a_terminal() {
    let mut env = TestEnv::new();
    project(&env);
    env.set_env("GITHUB_PERSONAL_ACCESS_TOKEN", TOKEN);
    env.set_env("DOCS_TITLE", TITLE);
    let out = env.run(&["onboard", "--from-env"]);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(out, @"
    github  project  pending approval
      GITHUB_PERSONAL_ACCESS_TOKEN  set (environment)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set (environment)
      command `sh`                  found

    All 3 servers in effect have what they need (0 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve --trust github db docs`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from the environment
    Copying `DOCS_TITLE` from the environment
    Saved 2 variables to `.env`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `.env`
    [exit status: 0]
    ");
    assert_eq!(
        dotenv_values(&env),
        pairs(&[
            ("GITHUB_PERSONAL_ACCESS_TOKEN", TOKEN),
            ("DOCS_TITLE", TITLE)
        ])
    );
    assert_eq!(env.mode("project/.env"), 0o600);

    // Nothing left to copy: nothing is written again.
    let before = tree(&env.project);
    let again = env.run(&["onboard", "--from-env", "-q"]);
    assert_snapshot!(again, @"
    github  project  pending approval
      GITHUB_PERSONAL_ACCESS_TOKEN  set (environment)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set (environment)
      command `sh`                  found
    ----- stderr -----
    [exit status: 0]
    ");
    assert_eq!(tree(&env.project), before);
}

#[test]
fn from_env_edits_only_the_env_members_of_existing_settings() {
    let mut env = TestEnv::new();
    project(&env);
    let settings = "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n    \"env\": {\"KEEP\": \"1\", \"DOCS_TITLE\": \"old\"},\n    \"enableAllProjectMcpServers\": true\n}";
    env.write("project/.claude/settings.local.json", settings);
    env.write(
        "project/.gitignore",
        "target/\n.env\n.claude/settings.local.json\n",
    );
    env.set_env("GITHUB_PERSONAL_ACCESS_TOKEN", TOKEN);
    env.set_env("DOCS_TITLE", TITLE);
    let out = env.run(&["onboard", "--from-env", "--to", "claude-settings"]);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(out, @"
    github  project  pending approval
      GITHUB_PERSONAL_ACCESS_TOKEN  set (environment)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set (environment)
      command `sh`                  found

    All 3 servers in effect have what they need (0 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve --trust github db docs`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from the environment
    Copying `DOCS_TITLE` from the environment
    Saved 2 variables to `.claude/settings.local.json`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `.claude/settings.local.json`
    Claude Code 2.1.332 applies them in interactive sessions: plain `claude` sees them
    `claude -p` and `claude mcp list` do not: they leave those `${VAR}` placeholders unexpanded; for them save the values to `.env` too (`mcpenv onboard --to dotenv`) and start them with `mcpenv run -- claude -p …`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
        "permissions": {"allow": ["Bash(ls)"]},
        "env": {"KEEP": "1", "DOCS_TITLE": "Team \"Docs\" at $HOME it's", "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_Zx9$HOME \"q\" 'a' \\n end"},
        "enableAllProjectMcpServers": true
    }
    "#);
    assert_eq!(
        env.read("project/.gitignore"),
        "target/\n.env\n.claude/settings.local.json\n"
    );
}

#[test]
fn claude_settings_get_the_values_only_dotenv_holds() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "project/.env",
        &format!(
            "GITHUB_PERSONAL_ACCESS_TOKEN={}\nDOCS_TITLE=docs\n",
            "'ghp_fromdotenv'"
        ),
    );
    fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    // No terminal needed: nothing is asked.
    let out = env.run(&["onboard", "--to", "claude-settings"]);
    out.assert_no_secret(&["ghp_fromdotenv"]);
    assert_snapshot!(out, @"
    github  project  pending approval
      GITHUB_PERSONAL_ACCESS_TOKEN  set in .claude/settings.local.json (interactive sessions only) and in .env (through `mcpenv run`)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set in .claude/settings.local.json (interactive sessions only) and in .env (through `mcpenv run`)
      command `sh`                  found

    warning: `GITHUB_PERSONAL_ACCESS_TOKEN` is set in `.claude/settings.local.json`, which Claude Code 2.1.332 applies to `${VAR}` in interactive sessions only (`claude -p` and `claude mcp list` leave `${GITHUB_PERSONAL_ACCESS_TOKEN}` unexpanded); `.env` holds it too, which Claude Code does not read
      hint: for every launch, start Claude Code with `mcpenv run -- claude`, which hands it on from that file
    warning: `DOCS_TITLE` is set in `.claude/settings.local.json`, which Claude Code 2.1.332 applies to `${VAR}` in interactive sessions only (`claude -p` and `claude mcp list` leave `${DOCS_TITLE}` unexpanded); `.env` holds it too, which Claude Code does not read
      hint: for every launch, start Claude Code with `mcpenv run -- claude`, which hands it on from that file

    All 3 servers in effect have what they need (0 errors, 2 warnings)
    Approve the pending project servers with `mcpenv approve --trust github db docs`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from `.env`
    Copying `DOCS_TITLE` from `.env`
    Saved 2 variables to `.claude/settings.local.json`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `.git/info/exclude`
    Wrote `.claude/settings.local.json`
    Claude Code 2.1.332 applies them in interactive sessions: plain `claude` sees them
    `claude -p` and `claude mcp list` do not: they leave those `${VAR}` placeholders unexpanded; start them with `mcpenv run -- claude -p …`, which hands on the values `.env` holds
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.claude/settings.local.json"), @r#"
    {
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_fromdotenv",
        "DOCS_TITLE": "docs"
      }
    }
    "#);
}

#[test]
fn without_a_terminal_it_refuses_and_writes_nothing() {
    let env = TestEnv::new();
    project(&env);
    let before = tree(&env.project);
    let out = env.run(&["onboard"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: cannot ask for `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE` without a terminal

    hint: see what is missing with `mcpenv check --json`
    hint: or set the variables in the environment and copy them with `mcpenv onboard --from-env`, which never prompts
    [exit status: 1]
    ");
    assert_eq!(tree(&env.project), before);

    let json = env.run(&["onboard", "--json"]);
    assert_snapshot!(json, @r#"
    {
      "schema_version": 1,
      "error": {
        "message": "cannot ask for `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`: `--json` never prompts",
        "causes": [],
        "hint": "see what is missing with `mcpenv check --json`\nor set the variables in the environment and copy them with `mcpenv onboard --from-env`, which never prompts",
        "kind": "failure",
        "file": null,
        "line": null,
        "column": null
      }
    }
    ----- stderr -----
    [exit status: 1]
    "#);
}

#[test]
fn claude_settings_are_refused_where_claude_code_ignores_them() {
    let env = TestEnv::bare();
    project(&env);
    let before = tree(&env.project);
    let out = env.run(&["onboard", "--to", "claude-settings"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: Claude Code ignores `[ROOT]/project/.claude/settings.local.json` here: the working directory is not inside a git repository

    hint: Claude Code reads this file only inside a git repository (`git init` makes one)
    hint: or save the values to `.env` with `mcpenv onboard --to dotenv`, then start Claude Code with `mcpenv run -- claude`
    [exit status: 1]
    ");
    assert_eq!(tree(&env.project), before);

    let env = TestEnv::new();
    project(&env);
    fs::create_dir_all(env.root.join("shared-claude")).unwrap();
    std::os::unix::fs::symlink(env.root.join("shared-claude"), env.project.join(".claude"))
        .unwrap();
    let out = env.run(&["onboard", "--to", "claude-settings", "--from-env"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: Claude Code ignores `[ROOT]/project/.claude/settings.local.json` here: `.claude` is a symbolic link

    hint: Claude Code does not read it through a symbolic link; replace the link with a real directory or file
    hint: or save the values to `.env` with `mcpenv onboard --to dotenv`, then start Claude Code with `mcpenv run -- claude`
    [exit status: 1]
    ");
    assert_eq!(
        fs::read_dir(env.root.join("shared-claude"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn an_unknown_only_variable_is_a_usage_error() {
    let env = TestEnv::new();
    project(&env);
    let out = env.run(&["onboard", "--only", "GITHUB_TOKEN"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `--only`: no MCP server in effect here uses `GITHUB_TOKEN`

    hint: the servers here use: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DATABASE_URL`, `DOCS_TITLE`
    [exit status: 2]
    ");
}

#[test]
fn nothing_missing_says_so_and_prints_the_check() {
    let mut env = TestEnv::new();
    project(&env);
    env.set_env("GITHUB_PERSONAL_ACCESS_TOKEN", TOKEN);
    env.set_env("DOCS_TITLE", TITLE);
    let out = env.run(&["onboard"]);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(out, @"
    github  project  pending approval
      GITHUB_PERSONAL_ACCESS_TOKEN  set (environment)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set (environment)
      command `sh`                  found

    All 3 servers in effect have what they need (0 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve --trust github db docs`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    Nothing is missing: every variable the servers use has a value or a default
    [exit status: 0]
    ");
    assert!(!env.project.join(".env").exists());
}

/// `cp .env.example .env`, the habit that leaves every token empty.
fn copied_example(env: &TestEnv) {
    project(env);
    fs::copy(env.project.join(".env.example"), env.project.join(".env")).unwrap();
    fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
}

#[test]
fn empty_values_copied_from_the_example_fail_check_and_are_asked_for() {
    let env = TestEnv::new();
    copied_example(&env);
    let out = env.run(&["check"]).expect_code(1);
    // Both values without a default are errors; `DATABASE_URL`'s empty
    // value beats its default, a warning.
    assert!(
        out.stdout.contains(
            "error: `GITHUB_PERSONAL_ACCESS_TOKEN` is set but empty in `.env` (needed by github): the server gets an empty value"
        ) && out.stdout.contains("error: `DOCS_TITLE` is set but empty in `.env`")
            && out.stdout.contains("warning: `DATABASE_URL` is set but empty"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("2 of 3 servers in effect lack something; 2 variables missing"),
        "{out}"
    );
    let json = env.run(&["check", "--json"]).expect_code(1).json();
    let token = &json["variables"][0];
    assert_eq!(token["state"], "empty");
    assert_eq!(token["required"], true);

    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.expect("2 variables to set");
    terminal.expect("It is set but empty (in `.env`), so the server gets no value.");
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", "ghp_abc");
    terminal.type_plain("DOCS_TITLE: ", "Docs");
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(!shown.contains("DATABASE_URL (hidden)") && !shown.contains("DATABASE_URL ["));
    // The empty lines got their values in place; nothing else changed.
    assert_eq!(
        env.read("project/.env"),
        "# A classic token from https://github.com/settings/tokens (scopes: repo, read:org)\n\
         GITHUB_PERSONAL_ACCESS_TOKEN='ghp_abc'\n\
         DATABASE_URL=\n\
         # The title shown on the docs pages\n\
         DOCS_TITLE='Docs'\n"
    );
}

#[test]
fn reset_and_only_re_enter_values_that_exist() {
    let env = TestEnv::new();
    project(&env);
    env.write(
        "project/.env",
        "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_old\nDOCS_TITLE=Old\n",
    );
    fs::set_permissions(
        env.project.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let out = env.run(&["onboard"]).expect_code(0);
    assert!(out.stderr.contains("Nothing is missing"), "{out}");

    let mut terminal = Terminal::start(
        &env,
        &["onboard", "--reset", "GITHUB_PERSONAL_ACCESS_TOKEN"],
    );
    terminal.expect("It has a value (in `.env`); an empty answer keeps it.");
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", "ghp_new");
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(!shown.contains("DOCS_TITLE:"), "{shown}");

    // `--only` asks even when set; an empty answer keeps the value.
    let mut terminal = Terminal::start(&env, &["onboard", "--only", "DOCS_TITLE"]);
    terminal.type_plain("DOCS_TITLE: ", "");
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert_eq!(
        env.read("project/.env"),
        "GITHUB_PERSONAL_ACCESS_TOKEN='ghp_new'\nDOCS_TITLE=Old\n"
    );
    let typo = env
        .run(&["onboard", "--reset", "DOCS_TITEL"])
        .expect_code(2);
    assert!(typo.stderr.contains("did you mean `DOCS_TITLE`?"), "{typo}");
}

#[test]
fn answers_that_do_not_fit_their_placeholder_are_questioned_before_saving() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
  "db": {"command": "sh", "args": ["postgresql://app:${DB_PASSWORD}@db.internal/app"]}
}}"#,
    );
    env.run(&["add", "github", "--template", "github", "-s", "project"])
        .expect_code(0);
    let mut terminal = Terminal::start(&env, &["onboard"]);
    terminal.type_hidden("API_TOKEN (hidden): ", "Bearer tok_123");
    terminal.answer_key(
        "The value starts with `Bearer`, which `headers.Authorization` already writes before it. Drop it from the value?",
        "y",
    );
    terminal.type_hidden("DB_PASSWORD (hidden): ", "p@ss/w#rd");
    terminal.answer_key(
        "The value holds `@`, `/`, `#`, which break the user name or password of a URL in `args[0]`. Percent-encode it?",
        "y",
    );
    terminal.type_hidden(
        "GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ",
        "nope-not-a-token",
    );
    // Refused: asked again, then a real-looking token passes.
    terminal.answer_key("It does not look like a GitHub value", "n");
    terminal.type_hidden("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", "ghp_Abc123");
    let (shown, status) = terminal.finish();
    assert!(
        !shown.contains("tok_123") && !shown.contains("w#rd"),
        "{shown}"
    );
    assert_eq!(exited(status), 0, "{shown}");
    let values = dotenv_values(&env);
    assert!(
        values.contains(&("API_TOKEN".into(), "tok_123".into())),
        "{values:?}"
    );
    assert!(
        values.contains(&("DB_PASSWORD".into(), "p%40ss%2Fw%23rd".into())),
        "{values:?}"
    );
    assert!(
        values.contains(&("GITHUB_PERSONAL_ACCESS_TOKEN".into(), "ghp_Abc123".into())),
        "{values:?}"
    );
}

#[test]
fn a_readable_env_is_made_private_unless_force_keeps_its_mode() {
    for (force, mode) in [(false, 0o600), (true, 0o644)] {
        let mut env = TestEnv::new();
        project(&env);
        env.write("project/.env", "DOCS_TITLE=\n");
        fs::set_permissions(
            env.project.join(".env"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        env.set_env("DOCS_TITLE", "Docs");
        let mut args = vec!["onboard", "--from-env"];
        if force {
            args.push("--force");
        }
        let out = env.run(&args).expect_code(1);
        assert_eq!(env.mode("project/.env"), mode, "{out}");
        assert_eq!(
            out.stderr
                .contains("Made `.env` private (mode 600; it was 644)"),
            !force,
            "{out}"
        );
        assert_eq!(env.read("project/.env"), "DOCS_TITLE='Docs'\n");
    }
}
