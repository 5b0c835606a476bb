use std::fs;
use std::os::unix::fs::PermissionsExt;

use insta::assert_snapshot;

use crate::harness::TestEnv;

/// A project whose servers reference variables in every state.
fn project(env: &mut TestEnv) {
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "github": {"command": "sh", "args": ["-c", "exec server"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "FROM_SETTINGS": "${FROM_SETTINGS}"}},
    "db": {"command": "sh", "args": ["${DATABASE_URL:-postgresql://localhost/dev}", "${DB_SCHEMA}"]},
    "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Empty": "${EMPTY_ONE}"}},
    "tool": {"command": "/nonexistent/mcp-tool"},
    "off": {"command": "sh", "env": {"T": "${NEVER_NEEDED}"}}
  }
}"#,
    );
    env.write(
        "project/.claude/settings.local.json",
        r#"{"disabledMcpjsonServers": ["off"], "env": {"FROM_SETTINGS": "s"}}"#,
    );
    env.write(
        "project/.env",
        "API_TOKEN='from-dotenv-0123456789'\nEMPTY_ONE=\n",
    );
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o600)).unwrap();
    env.write("project/.gitignore", ".env\n");
    env.write(
        "project/.env.example",
        "# A GitHub token with repo scope: https://github.com/settings/tokens\nGITHUB_TOKEN=\nAPI_TOKEN=\nFROM_SETTINGS=\nEMPTY_ONE=\nDB_SCHEMA=\nDATABASE_URL=\nOLD_VARIABLE=\n",
    );
    env.set_env("GITHUB_TOKEN", "ghp_fromTheEnvironment");
}

#[test]
fn check_reports_every_state_per_server() {
    let mut env = TestEnv::new();
    project(&mut env);
    let out = env.run(&["check"]);
    out.assert_no_secret(&["ghp_fromTheEnvironment", "from-dotenv-0123456789"]);
    assert_snapshot!(out, @"
    github  project  pending approval
      GITHUB_TOKEN                     set (environment)
      FROM_SETTINGS                    set in .claude/settings.local.json (interactive sessions only; not `claude -p` or `claude mcp list`)
      command `sh`                     found
    db  project  pending approval
      DATABASE_URL                     not set; its default applies
      DB_SCHEMA                        missing
      command `sh`                     found
    api  project  pending approval
      API_TOKEN                        set in .env (seen through `mcpenv run`)
      EMPTY_ONE                        set but empty (.env): the server gets no value
    tool  project  pending approval
      command `/nonexistent/mcp-tool`  not found
    off  project  rejected in Claude Code's settings: not checked

    error: `.mcp.json`: `tool` runs `/nonexistent/mcp-tool`, which does not exist or is not executable
      hint: check the path `/nonexistent/mcp-tool`
    warning: `FROM_SETTINGS` is set only in `.claude/settings.local.json`, which Claude Code 2.1.332 applies to `${VAR}` in interactive sessions only: `claude -p` and `claude mcp list` leave `${FROM_SETTINGS}` unexpanded
      hint: for every launch, set it in `~/.claude/settings.json` or your environment, or start Claude Code with `mcpenv run -- claude -p …` after `mcpenv onboard --to dotenv`
    error: `DB_SCHEMA` is not set (needed by db)
      hint: set it with `mcpenv onboard`, or export it in your shell
    warning: `API_TOKEN` is set only in `.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)
    error: `EMPTY_ONE` is set but empty in `.env` (needed by api): the server gets an empty value
      hint: give it a value with `mcpenv onboard`, or edit the file
    warning: `.env.example`: lists `OLD_VARIABLE`, which no server uses
      hint: remove `OLD_VARIABLE` from `.env.example`, or add the server that needs it

    3 of 4 servers in effect lack something; 2 variables missing (3 errors, 3 warnings)
    Fix it with `mcpenv onboard`
    Approve the pending project servers with `mcpenv approve --trust github db api tool`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 1]
    ");
}

#[test]
fn check_json_has_states_and_never_values() {
    let mut env = TestEnv::new();
    project(&mut env);
    let out = env.run(&["check", "--json"]);
    out.assert_no_secret(&[
        "ghp_fromTheEnvironment",
        "from-dotenv-0123456789",
        "postgresql://localhost/dev",
    ]);
    assert_eq!(out.code, 1, "{out}");
    let json = out.json();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["ok"], false);
    let states: Vec<(String, String)> = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variable| {
            (
                variable["name"].as_str().unwrap().to_string(),
                variable["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("GITHUB_TOKEN", "set"),
        ("FROM_SETTINGS", "set"),
        ("DATABASE_URL", "defaulted"),
        ("DB_SCHEMA", "missing"),
        ("API_TOKEN", "set"),
        ("EMPTY_ONE", "empty"),
    ];
    assert_eq!(
        states,
        expected.map(|(name, state)| (name.to_string(), state.to_string()))
    );
    let servers: Vec<(&str, &str)> = json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| {
            (
                server["name"].as_str().unwrap(),
                server["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            ("github", "pending"),
            ("db", "pending"),
            ("api", "pending"),
            ("tool", "pending"),
            // Rejected servers were `skipped` before Claude Code's own
            // skips (invalid entries) had a status of their own.
            ("off", "rejected")
        ]
    );
    for key in ["servers", "variables", "warnings"] {
        assert!(json[key].is_array(), "{key}");
    }
}

#[test]
fn everything_set_exits_zero_and_strict_counts_warnings() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}"}}}}"#,
    );
    env.write("project/.env", "TOKEN=abc\n");
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o600)).unwrap();
    env.write("project/.gitignore", ".env\n");
    env.write("project/.env.example", "TOKEN=\n");
    // Set only in `.env`: fine for `mcpenv run`, a warning for plain `claude`.
    assert_snapshot!(env.run(&["check"]), @"
    a  project  pending approval
      TOKEN         set in .env (seen through `mcpenv run`)
      command `sh`  found

    warning: `TOKEN` is set only in `.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)

    The one server in effect has what it needs (0 errors, 1 warning)
    Approve the pending project servers with `mcpenv approve --trust a`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 0]
    ");
    env.run(&["check", "--strict"]).expect_code(1);
}

#[test]
fn dotenv_problems_are_reported_with_line_numbers() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}"}}}}"#,
    );
    env.write("project/.env", "# ok\nTOKEN=abc\nBROKEN=two words\n");
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.run(&["check"]);
    assert_snapshot!(out, @"
    a  project  pending approval
      TOKEN         set in .env (seen through `mcpenv run`)
      command `sh`  found

    warning: `TOKEN` is set only in `.env`: Claude Code does not read that file
      hint: start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)
    warning: `.env`: line 3: an unquoted value ends at the first space; quote the value
      hint: fix that line: its variable is not read
    warning: `.env`: not ignored by git; its secrets could be committed
      hint: add `.env` to `.gitignore`
    warning: `.env`: can be read by other users (mode 644)
      hint: make it private: `chmod 600 [ROOT]/project/.env`
    warning: `.env.example`: does not exist, so teammates cannot see which variables the servers need
      hint: `mcpenv extract` writes one; commit it

    The one server in effect has what it needs (0 errors, 5 warnings)
    Approve the pending project servers with `mcpenv approve --trust a`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 0]
    ");
}

#[test]
fn nothing_configured_is_fine() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["check"]), @"
    No MCP servers in effect here
    ----- stderr -----
    [exit status: 0]
    ");
}

/// Entries Claude Code skips are in effect (nothing else defines their
/// names) and never start: `check` fails on them, with Claude Code's reason.
#[test]
fn skipped_entries_in_effect_fail_the_check() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"urlnotype": {"url": "https://example.com/mcp"}, "nocmd": {"args": []}, "ok": {"command": "sh"}}}"#,
    );
    assert_snapshot!(env.run(&["check"]), @r#"
    urlnotype  project  skipped by Claude Code: never started
    nocmd  project  skipped by Claude Code: never started
    ok  project  pending approval
      command `sh`  found

    error: `.mcp.json`: Claude Code does not load `urlnotype`: MCP server "urlnotype" has a "url" but no "type"; add "type": "http" (or "sse" / "ws") to this entry
      hint: fix the entry in `.mcp.json`; until then Claude Code never starts it
    error: `.mcp.json`: Claude Code does not load `nocmd`: invalid MCP server config for "nocmd": command: expected string, received undefined
      hint: fix the entry in `.mcp.json`; until then Claude Code never starts it

    2 of 3 servers in effect lack something (2 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve --trust ok`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 1]
    "#);
    let json = env.run(&["check", "--json"]).expect_code(1).json();
    assert_eq!(json["servers"][0]["status"], "skipped");
    assert_eq!(json["servers"][0]["ok"], false);
    assert_eq!(json["warnings"][0]["code"], "skipped-entry");
}

/// A file Claude Code does not load is an error of its own, and the other
/// scopes are still checked.
#[test]
fn a_file_that_does_not_load_fails_the_check_and_the_rest_is_checked() {
    let env = TestEnv::new();
    env.write(
        "home/.claude.json",
        r#"{"mcpServers": {"u1": {"command": "sh"}}}"#,
    );
    env.write(
        "project/.mcp.json",
        r#"{"top": {"command": "npx", "args": ["-y", "pkg"]}}"#,
    );
    assert_snapshot!(env.run(&["check"]), @r#"
    u1  user
      command `sh`  found

    error: `.mcp.json`: `[ROOT]/project/.mcp.json` lists servers at the top level (`top`) without `mcpServers`: Claude Code loads none of them
      hint: Claude Code loads none of its servers (it reports "mcpServers: Invalid input: expected record, received undefined"); fix the file by hand

    The one server in effect has what it needs (1 error, 0 warnings)
    ----- stderr -----
    [exit status: 1]
    "#);
}

/// Placeholders in a command are expanded from what `check` sees before the
/// command is looked up; an unset one without default is not guessed at.
/// (Claude Code 2.1.332 sets `CLAUDE_PROJECT_DIR` for the server it starts,
/// not for the expansion: `${CLAUDE_PROJECT_DIR:-.}` is `.` to it.)
#[test]
fn a_command_with_placeholders_is_resolved_before_it_is_looked_up() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project.join(".venv/bin")).unwrap();
    let python = env.project.join(".venv/bin/python");
    fs::write(&python, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&python, fs::Permissions::from_mode(0o755)).unwrap();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "venv": {"command": "${CLAUDE_PROJECT_DIR:-.}/.venv/bin/python"},
  "nope": {"command": "${HOME}/nope/x"},
  "dep": {"command": "${TOOLS_DIR}/bin/server"},
  "proj": {"command": "${CLAUDE_PROJECT_DIR}/.venv/bin/python"}
}}"#,
    );
    assert_snapshot!(env.run(&["check"]), @"
    venv  project  pending approval
      CLAUDE_PROJECT_DIR                                   not set; its default applies
      command `${CLAUDE_PROJECT_DIR:-.}/.venv/bin/python`  found (`./.venv/bin/python`)
    nope  project  pending approval
      HOME                                                 set (environment)
      command `${HOME}/nope/x`                             not found (`****/nope/x`)
    dep  project  pending approval
      TOOLS_DIR                                            missing
      command `${TOOLS_DIR}/bin/server`                    not checked: depends on `${TOOLS_DIR}`
    proj  project  pending approval
      CLAUDE_PROJECT_DIR                                   missing
      command `${CLAUDE_PROJECT_DIR}/.venv/bin/python`     not checked: depends on `${CLAUDE_PROJECT_DIR}`

    error: `.mcp.json`: `nope` runs `${HOME}/nope/x` (`****/nope/x`), which does not exist or is not executable
      hint: check the path `****/nope/x`
    error: `CLAUDE_PROJECT_DIR` is not set (needed by venv, proj)
      hint: Claude Code sets `CLAUDE_PROJECT_DIR` in a server's environment but does not expand `${CLAUDE_PROJECT_DIR}` in its configuration, so the server gets the text as written: use a path relative to the directory Claude Code starts in, or give it a default (`${CLAUDE_PROJECT_DIR:-.}`)
    error: `TOOLS_DIR` is not set (needed by dep)
      hint: set it with `mcpenv onboard`, or export it in your shell
    warning: `.env.example`: does not exist, so teammates cannot see which variables the servers need
      hint: `mcpenv extract` writes one; commit it

    3 of 4 servers in effect lack something; 2 variables missing (3 errors, 1 warning)
    Fix it with `mcpenv onboard`
    Approve the pending project servers with `mcpenv approve --trust venv nope dep proj`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 1]
    ");
    let json = env.run(&["check", "--json"]).json();
    let venv = &json["servers"][0]["command"];
    assert_eq!(venv["resolved"], "./.venv/bin/python");
    assert_eq!(venv["found"], true);
    let dep = &json["servers"][2]["command"];
    assert_eq!(dep["found"], serde_json::Value::Null);
    assert_eq!(dep["depends_on"], serde_json::json!(["TOOLS_DIR"]));
}

/// `$VAR` inside an interpreter's script is the interpreter's variable:
/// telling the user to write `${VAR}` would make Claude Code substitute its
/// own value (or nothing) into the script. Elsewhere it is still reported,
/// and a real `${VAR}` in a script is still a variable Claude Code expands.
#[test]
fn shell_variables_in_interpreter_scripts_are_not_reported() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "ps": {"command": "powershell", "args": ["-NoProfile", "-Command", "$roots = $env:ROOTS -split ';'; & node server.js $roots"]},
  "sh": {"command": "sh", "args": ["-c", "exec node \"$HOME/server.js\" --dir ${WORK_DIR:-/tmp}"]},
  "bash": {"command": "bash", "args": ["-lc", "cd $PROJECT && exec srv"]},
  "py": {"command": "python3", "args": ["-c", "import os; print(os.path.expandvars('$HOME'))"]},
  "node": {"command": "node", "args": ["-e", "console.log(`$X`)", "--token=$TOKEN"]}
}}"#,
    );
    let out = env.run(&["list"]).expect_code(0);
    assert_snapshot!(out.stderr, @"
    warning: `[ROOT]/project/.mcp.json`: `node` args[2]: Claude Code never expands `$TOKEN`; use `${TOKEN}`
    hint: Claude Code asks before starting a pending project server; approve it with `mcpenv approve --trust ps sh bash py node`
    hint: `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ");
    let json = env.run(&["check", "--json"]).json();
    let variables: Vec<&str> = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variable| variable["name"].as_str().unwrap())
        .collect();
    assert_eq!(variables, ["WORK_DIR"]);
}

/// Remote servers behind credential names, a stdio server using one of
/// Claude Code's own credentials, and names nothing blanks.
fn blanking_project(env: &mut TestEnv) {
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "registry": {"type": "http", "url": "https://registry.example.com/mcp?vault=${VAULT_TOKEN}", "headers": {"Authorization": "Bearer ${NPM_TOKEN}", "X-Api-Key": "${MY_API_KEY}"}},
    "pkg": {"command": "sh", "args": ["--secret", "${MCP_CLIENT_SECRET}"], "env": {"NPM_TOKEN": "${NPM_TOKEN}", "GITHUB_TOKEN": "${GITHUB_TOKEN}"}}
  }
}"#,
    );
    env.write(
        "project/.env.example",
        "VAULT_TOKEN=\nNPM_TOKEN=\nMY_API_KEY=\nMCP_CLIENT_SECRET=\nGITHUB_TOKEN=\n",
    );
    for name in [
        "VAULT_TOKEN",
        "NPM_TOKEN",
        "MY_API_KEY",
        "MCP_CLIENT_SECRET",
        "GITHUB_TOKEN",
    ] {
        env.set_env(name, format!("value-of-{name}"));
    }
}

#[test]
fn credential_names_claude_code_sends_empty_are_errors() {
    let mut env = TestEnv::new();
    blanking_project(&mut env);
    let out = env.run(&["check"]);
    assert_snapshot!(out, @"
    registry  project  pending approval
      VAULT_TOKEN        sent empty by Claude Code
      NPM_TOKEN          sent empty by Claude Code
      MY_API_KEY         set (environment)
    pkg  project  pending approval
      MCP_CLIENT_SECRET  sent empty by Claude Code
      NPM_TOKEN          set (environment)
      GITHUB_TOKEN       set (environment)
      command `sh`       found

    error: `.mcp.json`: Claude Code 2.1.332 sends `${VAULT_TOKEN}` empty to remote servers (`registry`: `url`; the name is on its list of credential names); use another variable name
      hint: rename it in the entry and where its value is set, e.g. to `${REGISTRY_VAULT_TOKEN}`; `VAULT_TOKEN` keeps working for stdio servers
    error: `.mcp.json`: Claude Code 2.1.332 sends `${NPM_TOKEN}` empty to remote servers (`registry`: `headers.Authorization`; the name is on its list of credential names); use another variable name
      hint: rename it in the entry and where its value is set, e.g. to `${REGISTRY_NPM_TOKEN}`; `NPM_TOKEN` keeps working for stdio servers
    error: `.mcp.json`: Claude Code 2.1.332 never hands `${MCP_CLIENT_SECRET}` to a server (`pkg`: `args[1]`; the name is one of its own credentials or settings): it passes it empty
      hint: give the server a variable of its own, e.g. `${PKG_MCP_CLIENT_SECRET}`

    2 of 2 servers in effect lack something (3 errors, 0 warnings)
    Approve the pending project servers with `mcpenv approve --trust registry pkg`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 1]
    ");
    let json = env.run(&["check", "--json"]).json();
    assert_eq!(
        json["servers"][0]["blanked"],
        serde_json::json!([
            {"variable": "VAULT_TOKEN", "fields": ["url"], "reason": "credential"},
            {"variable": "NPM_TOKEN", "fields": ["headers.Authorization"], "reason": "credential"}
        ])
    );
}

#[test]
fn a_variable_claude_code_sends_empty_everywhere_is_not_asked_for() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{
  "mcpServers": {
    "registry": {"type": "http", "url": "https://registry.example.com/mcp?vault=${VAULT_TOKEN}", "headers": {"Authorization": "Bearer ${NPM_TOKEN}"}},
    "pkg": {"command": "sh", "env": {"NPM_TOKEN": "${NPM_TOKEN}"}}
  }
}"#,
    );
    // Unset, `VAULT_TOKEN` is blanked all the same (toward a remote
    // server, by name): setting it would change nothing, so only the
    // rename is asked for. `NPM_TOKEN` still reaches `pkg`.
    let out = env.run(&["check"]).expect_code(1);
    assert!(
        out.stdout.contains("sends `${VAULT_TOKEN}` empty")
            && !out.stdout.contains("`VAULT_TOKEN` is not set")
            && out
                .stdout
                .contains("`NPM_TOKEN` is not set (needed by registry, pkg)")
            && out.stdout.contains("1 variable missing"),
        "{out}"
    );
    let json = env.run(&["check", "--json"]).json();
    let vault = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|variable| variable["name"] == "VAULT_TOKEN")
        .unwrap();
    assert_eq!(vault["blanked"], true, "{json}");
    let onboard = env.run(&["onboard"]).expect_code(1);
    assert!(
        onboard.stderr.contains("NPM_TOKEN") && !onboard.stderr.contains("VAULT_TOKEN"),
        "{onboard}"
    );
}

#[test]
fn scrub_mode_says_what_claude_code_blanks_and_github_actions_alone_does_not_scrub() {
    let mut env = TestEnv::new();
    blanking_project(&mut env);
    env.set_env("GITHUB_ACTIONS", "true");
    // Claude Code 2.1.332 scrubs MCP values only when asked to: in GitHub
    // Actions too (see claude_blanked.rs), so this is the plain report.
    let plain = env.run(&["check"]);
    assert!(!plain.stdout.contains("scrub"), "{plain}");
    env.set_env("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1");
    let out = env.run(&["check"]);
    assert_snapshot!(out, @"
    registry  project  pending approval
      VAULT_TOKEN        sent empty by Claude Code
      NPM_TOKEN          sent empty by Claude Code
      MY_API_KEY         sent empty by Claude Code in scrub mode
    pkg  project  pending approval
      MCP_CLIENT_SECRET  sent empty by Claude Code
      NPM_TOKEN          sent empty by Claude Code in scrub mode
      GITHUB_TOKEN       set (environment)
      command `sh`       found

    error: `.mcp.json`: Claude Code 2.1.332 sends `${VAULT_TOKEN}` empty to remote servers (`registry`: `url`; the name is on its list of credential names); use another variable name
      hint: rename it in the entry and where its value is set, e.g. to `${REGISTRY_VAULT_TOKEN}`; `VAULT_TOKEN` keeps working for stdio servers
    error: `.mcp.json`: Claude Code 2.1.332 sends `${NPM_TOKEN}` empty to remote servers (`registry`: `headers.Authorization`; the name is on its list of credential names); use another variable name
      hint: rename it in the entry and where its value is set, e.g. to `${REGISTRY_NPM_TOKEN}`; `NPM_TOKEN` keeps working for stdio servers
    warning: `.mcp.json`: with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, Claude Code 2.1.332 passes `${MY_API_KEY}` empty to `registry` (`headers.X-Api-Key`): the name looks secret
      hint: scrub mode keeps only `GITHUB_TOKEN`, `GH_TOKEN`, `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN` among secret-looking names; turn it off (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=0`) where this server needs the value
    error: `.mcp.json`: Claude Code 2.1.332 never hands `${MCP_CLIENT_SECRET}` to a server (`pkg`: `args[1]`; the name is one of its own credentials or settings): it passes it empty
      hint: give the server a variable of its own, e.g. `${PKG_MCP_CLIENT_SECRET}`
    warning: `.mcp.json`: with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, Claude Code 2.1.332 passes `${NPM_TOKEN}` empty to `pkg` (`env.NPM_TOKEN`): the name looks secret
      hint: scrub mode keeps only `GITHUB_TOKEN`, `GH_TOKEN`, `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN` among secret-looking names; turn it off (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=0`) where this server needs the value

    2 of 2 servers in effect lack something (3 errors, 2 warnings)
    Approve the pending project servers with `mcpenv approve --trust registry pkg`; `--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals
    ----- stderr -----
    [exit status: 1]
    ");
}
