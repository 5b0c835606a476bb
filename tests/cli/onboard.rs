//! `mcpenv onboard`: answers typed into a real pseudo-terminal, and the
//! runs that need none (`--from-env`, refusals, nothing to do).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use rexpect::process::{Signal, WaitStatus};
use rexpect::session::{Options, PtySession, spawn_with_options};

use crate::harness::TestEnv;

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

/// `mcpenv` in a pseudo-terminal with echo on, as in a real terminal.
struct Terminal {
    session: PtySession,
    /// The terminal device, for reading its modes.
    tty: String,
    /// Everything the terminal showed so far.
    shown: String,
}

impl Terminal {
    fn start(env: &TestEnv, args: &[&str]) -> Self {
        let inner = env.command(&env.project, args);
        // rexpect turns echo off; a user's terminal has it on, and with it
        // on, hidden input is really tested.
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(r#"tty && stty echo && exec "$0" "$@""#)
            .arg(inner.get_program())
            .args(inner.get_args())
            .env_clear();
        for (key, value) in inner.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        command.env("TERM", "xterm");
        command.current_dir(&env.project);
        let options = Options::new()
            .timeout_ms(Some(10_000))
            .strip_ansi_escape_codes(true);
        let mut session = spawn_with_options(command, options).unwrap();
        let tty = session.read_line().unwrap();
        assert!(tty.starts_with("/dev/"), "not a terminal: {tty}");
        Self {
            session,
            tty,
            shown: String::new(),
        }
    }

    fn expect(&mut self, text: &str) {
        let before = self
            .session
            .exp_string(text)
            .unwrap_or_else(|error| panic!("{error}\nshown so far:\n{}", self.shown));
        self.shown.push_str(&before);
        self.shown.push_str(text);
    }

    /// Waits until the terminal has `mode` (`-echo`, `-icanon`): the prompt
    /// is printed just before it switches, and keys typed earlier would be
    /// echoed or dropped.
    fn wait_for_mode(&self, mode: &str) {
        let started = Instant::now();
        loop {
            let out = Command::new("stty")
                .args(["-F", &self.tty, "-a"])
                .output()
                .unwrap();
            let modes = String::from_utf8_lossy(&out.stdout);
            if modes.split_whitespace().any(|word| word == mode) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the terminal never got `{mode}`:\n{modes}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Answers a hidden prompt (terminal echo off).
    fn type_hidden(&mut self, prompt: &str, answer: &str) {
        self.expect(prompt);
        self.wait_for_mode("-echo");
        self.session.send_line(answer).unwrap();
    }

    /// Answers a plain prompt, which reads key by key (raw mode).
    fn type_plain(&mut self, prompt: &str, answer: &str) {
        self.expect(prompt);
        self.wait_for_mode("-icanon");
        self.session.send_line(answer).unwrap();
    }

    /// Waits for the end; returns what was shown and how it ended.
    fn finish(mut self) -> (String, WaitStatus) {
        let rest = self.session.exp_eof().unwrap();
        self.shown.push_str(&rest);
        let status = self.session.process().wait().unwrap();
        (self.shown.replace('\r', ""), status)
    }
}

fn exited(status: WaitStatus) -> i32 {
    match status {
        WaitStatus::Exited(_, code) => code,
        other => panic!("did not exit: {other:?}"),
    }
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
    Approve the pending project servers with `mcpenv approve github db docs`
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from the environment
    Copying `DOCS_TITLE` from the environment
    Saved 2 variables to `.env`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `[ROOT]/project/.env`
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

    All 3 servers in effect have what they need (0 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve github db docs`
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
    github  project
      GITHUB_PERSONAL_ACCESS_TOKEN  set (environment)
      command `sh`                  found
    db  project
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project
      DOCS_TITLE                    set (environment)
      command `sh`                  found

    All 3 servers in effect have what they need (0 errors, 0 warnings)
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from the environment
    Copying `DOCS_TITLE` from the environment
    Saved 2 variables to `.claude/settings.local.json`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `[ROOT]/project/.claude/settings.local.json`
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
      GITHUB_PERSONAL_ACCESS_TOKEN  set in .claude/settings.local.json (interactive sessions only; not `claude -p` or `claude mcp list`)
      command `sh`                  found
    db  project  pending approval
      DATABASE_URL                  not set; its default applies
      command `sh`                  found
    docs  project  pending approval
      DOCS_TITLE                    set in .claude/settings.local.json (interactive sessions only; not `claude -p` or `claude mcp list`)
      command `sh`                  found

    warning: `GITHUB_PERSONAL_ACCESS_TOKEN` is set only in `.claude/settings.local.json`, which Claude Code 2.1.332 applies to `${VAR}` in interactive sessions only: `claude -p` and `claude mcp list` leave `${GITHUB_PERSONAL_ACCESS_TOKEN}` unexpanded
      hint: for every launch, set it in `~/.claude/settings.json` or your environment, or start Claude Code with `mcpenv run -- claude -p …` after `mcpenv onboard --to dotenv`
    warning: `DOCS_TITLE` is set only in `.claude/settings.local.json`, which Claude Code 2.1.332 applies to `${VAR}` in interactive sessions only: `claude -p` and `claude mcp list` leave `${DOCS_TITLE}` unexpanded
      hint: for every launch, set it in `~/.claude/settings.json` or your environment, or start Claude Code with `mcpenv run -- claude -p …` after `mcpenv onboard --to dotenv`

    All 3 servers in effect have what they need (0 errors, 2 warnings)
    Approve the pending project servers with `mcpenv approve github db docs`
    ----- stderr -----
    Copying `GITHUB_PERSONAL_ACCESS_TOKEN` from `.env`
    Copying `DOCS_TITLE` from `.env`
    Saved 2 variables to `.claude/settings.local.json`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`
    Wrote `[ROOT]/project/.git/info/exclude`
    Wrote `[ROOT]/project/.claude/settings.local.json`
    Claude Code 2.1.332 applies them in interactive sessions: plain `claude` sees them
    `claude -p` and `claude mcp list` do not: they leave those `${VAR}` placeholders unexpanded; for them save the values to `.env` too (`mcpenv onboard --to dotenv`) and start them with `mcpenv run -- claude -p …`
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
    assert_snapshot!(json, @"
    ----- stderr -----
    error: cannot ask for `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_TITLE`: `--json` never prompts

    hint: see what is missing with `mcpenv check --json`
    hint: or set the variables in the environment and copy them with `mcpenv onboard --from-env`, which never prompts
    [exit status: 1]
    ");
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
    error: no MCP server in effect here uses `GITHUB_TOKEN`

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
    Approve the pending project servers with `mcpenv approve github db docs`
    ----- stderr -----
    Nothing is missing: every variable the servers use has a value or a default
    [exit status: 0]
    ");
    assert!(!env.project.join(".env").exists());
}
