use std::fs;
use std::os::unix::fs::PermissionsExt;

use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};
use crate::scan::{DB_PASSWORD, PAT, STRIPE};

const SENTRY: &str = "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";

fn assert_no_secret(out: &CommandOutput) {
    out.assert_no_secret(&[PAT, STRIPE, DB_PASSWORD, SENTRY]);
}

/// A hand-written `.mcp.json` with a secret in each placement.
fn project_with_secrets(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &format!(
            r#"{{
  "mcpServers": {{
    "github": {{
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "{PAT}", "LOG_LEVEL": "info"}}
    }},
    "db": {{
      "command": "npx",
      "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:{DB_PASSWORD}@db.internal:5432/prod"]
    }},
    "stripe": {{"command": "npx", "args": ["-y", "@stripe/mcp", "--api-key={STRIPE}"]}},
    "sentry": {{
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {{"Authorization": "Bearer {SENTRY}"}}
    }}
  }}
}}
"#
        ),
    );
}

fn dotenv_values(env: &TestEnv) -> Vec<(String, String)> {
    dotenvy::from_path_iter(env.project.join(".env"))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn extract_moves_each_placement_and_keeps_everything_else() {
    let env = TestEnv::new();
    project_with_secrets(&env);
    let out = env.run(&["extract"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    FILE       SERVER  FIELD                             VARIABLE                      VALUE
    .mcp.json  github  env.GITHUB_PERSONAL_ACCESS_TOKEN  GITHUB_PERSONAL_ACCESS_TOKEN  ghp_…3s12
    .mcp.json  db      args[3]                           DB_PASSWORD                   s3cr…7781
    .mcp.json  stripe  args[2]                           STRIPE_API_KEY                sk_l…c8Yd
    .mcp.json  sentry  headers.Authorization             SENTRY_AUTH_TOKEN             sntr…4d8d
    ----- stderr -----
    Moved 4 secrets into `.env`
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Claude Code takes `${VAR}` values from its environment, not from `.env`: load it first (`set -a; . ./.env; set +a`)
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "github": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-github"],
          "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}", "LOG_LEVEL": "info"}
        },
        "db": {
          "command": "npx",
          "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:${DB_PASSWORD}@db.internal:5432/prod"]
        },
        "stripe": {"command": "npx", "args": ["-y", "@stripe/mcp", "--api-key=${STRIPE_API_KEY}"]},
        "sentry": {
          "type": "http",
          "url": "https://mcp.sentry.dev/mcp",
          "headers": {"Authorization": "Bearer ${SENTRY_AUTH_TOKEN}"}
        }
      }
    }
    "#);
    assert_snapshot!(env.read("project/.env.example"), @"
    # used by: github
    GITHUB_PERSONAL_ACCESS_TOKEN=
    # used by: db
    DB_PASSWORD=
    # used by: stripe
    STRIPE_API_KEY=
    # used by: sentry
    SENTRY_AUTH_TOKEN=
    ");
    assert_eq!(env.read("project/.gitignore"), ".env\n");
    assert_eq!(env.mode("project/.env"), 0o600);
    assert_eq!(
        dotenv_values(&env),
        [
            ("GITHUB_PERSONAL_ACCESS_TOKEN".to_string(), PAT.to_string()),
            ("DB_PASSWORD".to_string(), DB_PASSWORD.to_string()),
            ("STRIPE_API_KEY".to_string(), STRIPE.to_string()),
            ("SENTRY_AUTH_TOKEN".to_string(), SENTRY.to_string()),
        ]
    );
    // Claude Code sees the same servers, now with placeholders.
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"].as_array().unwrap().len(), 4);
    env.run(&["scan"]).expect_code(0);
}

#[test]
fn extract_twice_changes_nothing_the_second_time() {
    let env = TestEnv::new();
    project_with_secrets(&env);
    env.run(&["extract"]).expect_code(0);
    let before: Vec<Vec<u8>> = [".mcp.json", ".env", ".env.example", ".gitignore"]
        .iter()
        .map(|file| env.bytes(&format!("project/{file}")))
        .collect();
    assert_snapshot!(env.run(&["extract"]), @"
    ----- stderr -----
    Nothing to extract: no literal secrets in project scope
    [exit status: 0]
    ");
    let after: Vec<Vec<u8>> = [".mcp.json", ".env", ".env.example", ".gitignore"]
        .iter()
        .map(|file| env.bytes(&format!("project/{file}")))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn with_nothing_to_move_extract_still_documents_the_variables() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"github": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}"#,
    );
    let check = env.run(&["check"]);
    assert!(
        check
            .stdout
            .contains("`.env.example`: does not exist, so teammates cannot see which variables the servers need\n  hint: `mcpenv extract` writes one"),
        "{check}"
    );
    assert_snapshot!(env.run(&["extract"]), @"
    ----- stderr -----
    Nothing to extract: no literal secrets in project scope
    Documented the servers' variables for teammates
    Wrote `[ROOT]/project/.env.example`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.env.example"), @"
    # used by: github
    GITHUB_TOKEN=
    ");
    // Only the documentation: no `.env`, no `.gitignore` line, and the
    // warning is gone.
    assert!(!env.project.join(".env").exists() && !env.project.join(".gitignore").exists());
    assert!(!env.run(&["check"]).stdout.contains(".env.example"));
    assert_snapshot!(env.run(&["extract"]), @"
    ----- stderr -----
    Nothing to extract: no literal secrets in project scope
    [exit status: 0]
    ");
}

#[test]
fn dry_run_writes_nothing() {
    let env = TestEnv::new();
    project_with_secrets(&env);
    let before = env.bytes("project/.mcp.json");
    let out = env.run(&["extract", "--dry-run"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @r#"
    FILE       SERVER  FIELD                             VARIABLE                      VALUE
    .mcp.json  github  env.GITHUB_PERSONAL_ACCESS_TOKEN  GITHUB_PERSONAL_ACCESS_TOKEN  ghp_…3s12
    .mcp.json  db      args[3]                           DB_PASSWORD                   s3cr…7781
    .mcp.json  stripe  args[2]                           STRIPE_API_KEY                sk_l…c8Yd
    .mcp.json  sentry  headers.Authorization             SENTRY_AUTH_TOKEN             sntr…4d8d

    --- /dev/null
    +++ b/.gitignore
    @@ -0,0 +1 @@
    +.env

    --- /dev/null
    +++ b/.env
    (changed lines only, values masked; references shown)
    +GITHUB_PERSONAL_ACCESS_TOKEN=ghp_…3s12
    +DB_PASSWORD=s3cr…7781
    +STRIPE_API_KEY=sk_l…c8Yd
    +SENTRY_AUTH_TOKEN=sntr…4d8d

    --- /dev/null
    +++ b/.env.example
    @@ -0,0 +1,8 @@
    +# used by: github
    +GITHUB_PERSONAL_ACCESS_TOKEN=
    +# used by: db
    +DB_PASSWORD=
    +# used by: stripe
    +STRIPE_API_KEY=
    +# used by: sentry
    +SENTRY_AUTH_TOKEN=

    --- a/.mcp.json
    +++ b/.mcp.json
    @@ -3,17 +3,17 @@
         "github": {
           "command": "npx",
           "args": ["-y", "@modelcontextprotocol/server-github"],
    -      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_…3s12", "LOG_LEVEL": "info"}
    +      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}", "LOG_LEVEL": "info"}
         },
         "db": {
           "command": "npx",
    -      "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:****@db.internal:5432/prod"]
    +      "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:${DB_PASSWORD}@db.internal:5432/prod"]
         },
    -    "stripe": {"command": "npx", "args": ["-y", "@stripe/mcp", "--api-key=sk_l…c8Yd"]},
    +    "stripe": {"command": "npx", "args": ["-y", "@stripe/mcp", "--api-key=${STRIPE_API_KEY}"]},
         "sentry": {
           "type": "http",
           "url": "https://mcp.sentry.dev/mcp",
    -      "headers": {"Authorization": "Bearer sntr…4d8d"}
    +      "headers": {"Authorization": "Bearer ${SENTRY_AUTH_TOKEN}"}
         }
       }
     }
    ----- stderr -----
    Would move 4 secrets into `.env` (dry run: nothing was written)
    dry run: 4 files would change; nothing was written
    [exit status: 0]
    "#);
    assert_eq!(env.bytes("project/.mcp.json"), before);
    for file in [".env", ".env.example", ".gitignore"] {
        assert!(!env.project.join(file).exists(), "{file} was written");
    }
}

#[test]
fn a_name_taken_by_another_value_gets_a_new_name_and_the_same_value_is_reused() {
    let env = TestEnv::new();
    env.write("project/.env", "# team values\nexport GITHUB_PERSONAL_ACCESS_TOKEN=ghp_someoneElsesTokenValue000000000000000\nDB_PASSWORD='s3cr3t-Passw0rd-7781'\n");
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o600)).unwrap();
    project_with_secrets(&env);
    env.run(&["extract"]).expect_code(0);
    assert_snapshot!(env.read("project/.env"), @"
    # team values
    export GITHUB_PERSONAL_ACCESS_TOKEN=ghp_someoneElsesTokenValue000000000000000
    DB_PASSWORD='s3cr3t-Passw0rd-7781'
    GITHUB_PERSONAL_ACCESS_TOKEN_2='ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12'
    STRIPE_API_KEY='sk_live_51HxQ2bK9vR3mWq7ZpT4nLc8Yd'
    SENTRY_AUTH_TOKEN='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'
    ");
    assert!(
        env.read("project/.mcp.json")
            .contains("${GITHUB_PERSONAL_ACCESS_TOKEN_2}")
    );
    assert!(env.read("project/.mcp.json").contains("${DB_PASSWORD}"));
}

#[test]
fn a_dotenv_readable_by_others_is_refused_without_force() {
    let env = TestEnv::new();
    env.write("project/.env", "OTHER=1\n");
    fs::set_permissions(env.project.join(".env"), fs::Permissions::from_mode(0o644)).unwrap();
    project_with_secrets(&env);
    let before = env.bytes("project/.mcp.json");
    assert_snapshot!(env.run(&["extract"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.env` is readable by other users (mode 644); no secret was written to it

    hint: make it private with `chmod 600 [ROOT]/project/.env`, or pass `--force`
    [exit status: 1]
    ");
    assert_eq!(env.bytes("project/.mcp.json"), before);
    assert_eq!(env.read("project/.env"), "OTHER=1\n");

    env.run(&["extract", "--force"]).expect_code(0);
    assert_eq!(
        env.mode("project/.env"),
        0o644,
        "an existing file keeps its mode"
    );
}

#[test]
fn extract_from_local_and_user_scopes() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "-s",
        "local",
        "gh",
        "-e",
        &format!("GITHUB_TOKEN={PAT}"),
        "--",
        "npx",
        "pkg",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "-s",
        "user",
        "-t",
        "http",
        "stripe",
        "https://mcp.stripe.com",
        "-H",
        &format!("Authorization: Bearer {STRIPE}"),
    ])
    .expect_code(0);
    let out = env.run(&["extract", "--all"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    FILE            SERVER  FIELD                  VARIABLE           VALUE
    ~/.claude.json  gh      env.GITHUB_TOKEN       GITHUB_TOKEN       ghp_…3s12
    ~/.claude.json  stripe  headers.Authorization  STRIPE_AUTH_TOKEN  sk_l…c8Yd
    ----- stderr -----
    Moved 1 secret into `.env`
    Moved 1 secret into `~/.config/mcpenv/.env`
    Wrote `[ROOT]/home/.config/mcpenv/.env`
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/home/.claude.json`
    Claude Code takes `${VAR}` values from its environment, not from dotenv files: start it with `mcpenv run -- claude`, which loads them
    [exit status: 0]
    ");
    // Local secrets stay in the project, the user server's go to the
    // user's store, and `.env.example` documents neither: only shared
    // (project) servers' variables belong in a committed file.
    assert_eq!(
        dotenv_values(&env),
        [("GITHUB_TOKEN".to_string(), PAT.to_string())]
    );
    assert_eq!(
        env.read("home/.config/mcpenv/.env"),
        format!("STRIPE_AUTH_TOKEN='{STRIPE}'\n")
    );
    assert_eq!(env.mode("home/.config/mcpenv/.env"), 0o600);
    assert!(!env.project.join(".env.example").exists());
    let claude = env.read("home/.claude.json");
    assert!(
        claude.contains("\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"")
            && claude.contains("\"Authorization\": \"Bearer ${STRIPE_AUTH_TOKEN}\""),
        "{claude}"
    );
}

#[test]
fn only_the_named_servers_are_extracted() {
    let env = TestEnv::new();
    project_with_secrets(&env);
    env.run(&["extract", "--server", "db"]).expect_code(0);
    assert_eq!(
        dotenv_values(&env),
        [("DB_PASSWORD".to_string(), DB_PASSWORD.to_string())]
    );
    assert_snapshot!(env.run(&["extract", "--server", "nope"]), @"
    ----- stderr -----
    error: no MCP server named `nope` in project scope

    hint: see what is configured with `mcpenv list`
    [exit status: 1]
    ");
}

fn git(env: &TestEnv, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .args(args)
        .current_dir(&env.project)
        .env("HOME", &env.home)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[test]
fn a_secret_that_was_committed_must_be_rotated() {
    let env = TestEnv::bare();
    if !git(&env, &["init", "-q"]) {
        crate::skips::skip("`git` is not installed");
        return;
    }
    project_with_secrets(&env);
    assert!(git(&env, &["add", ".mcp.json"]) && git(&env, &["commit", "-q", "-m", "servers"]));
    let out = env.run(&["extract"]);
    assert_no_secret(&out);
    assert_eq!(out.code, 0, "{out}");
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 4, "{out}");
    assert!(
        warnings[0].contains("was committed in") && warnings[0].contains("rotate"),
        "{out}"
    );
}

#[test]
fn share_moves_a_private_server_to_the_project() {
    let env = TestEnv::new();
    env.run(&[
        "add",
        "gh",
        "-e",
        &format!("GITHUB_TOKEN={PAT}"),
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github",
    ])
    .expect_code(0);
    let out = env.run(&["share", "gh"]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    ----- stderr -----
    Moved gh env.GITHUB_TOKEN into `.env` as `GITHUB_TOKEN` (ghp_…3s12)
    Shared MCP server `gh` in `[ROOT]/project/.mcp.json`
    Removed it from local scope: `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Wrote `[ROOT]/home/.claude.json`
    Teammates set the variables listed in `.env.example` in their own `.env`
    To keep using it: approve it with `mcpenv approve --trust gh` (Claude Code asks before starting a project server)
    and start Claude Code with `mcpenv run -- claude`, which supplies the values in `.env`
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
      "mcpServers": {
        "gh": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-github"
          ],
          "env": {
            "GITHUB_TOKEN": "${GITHUB_TOKEN}"
          }
        }
      }
    }
    "#);
    assert_eq!(
        dotenv_values(&env),
        [("GITHUB_TOKEN".to_string(), PAT.to_string())]
    );
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    assert_eq!(listed["servers"].as_array().unwrap().len(), 1);
    assert_eq!(listed["servers"][0]["scope"], "project");
}

#[test]
fn share_keep_leaves_the_private_copy() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "user", "gh", "--", "npx", "pkg"])
        .expect_code(0);
    env.run(&["share", "gh", "--keep"]).expect_code(0);
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let scopes: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["project", "user"]);
}

#[test]
fn add_to_project_moves_literal_secrets_unless_allowed() {
    let env = TestEnv::new();
    let out = env.run(&[
        "add",
        "-s",
        "project",
        "gh",
        "-e",
        &format!("GITHUB_TOKEN={PAT}"),
        "--",
        "npx",
        "pkg",
    ]);
    assert_no_secret(&out);
    assert_snapshot!(out, @"
    ----- stderr -----
    Moved env.GITHUB_TOKEN into `.env` as `GITHUB_TOKEN` (ghp_…3s12), leaving `${GITHUB_TOKEN}` in the entry
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Added stdio MCP server `gh` in project scope
    Created `[ROOT]/project/.mcp.json`
    Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve --trust gh`
    [exit status: 0]
    ");
    assert!(
        env.read("project/.mcp.json")
            .contains("\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"")
    );
    assert_eq!(
        dotenv_values(&env),
        [("GITHUB_TOKEN".to_string(), PAT.to_string())]
    );

    let out = env.run(&[
        "add",
        "-s",
        "project",
        "--allow-literal",
        "raw",
        "-e",
        &format!("TOKEN={PAT}"),
        "--",
        "npx",
        "pkg",
    ]);
    assert_eq!(out.code, 0, "{out}");
    assert!(env.read("project/.mcp.json").contains(PAT));
}

#[test]
fn secrets_going_to_remote_servers_never_get_a_name_claude_code_blanks() {
    let env = TestEnv::new();
    let npm = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A";
    env.write(
        "project/.mcp.json",
        &format!(
            r#"{{"mcpServers": {{
  "npm": {{"type": "http", "url": "https://npm.example.com/mcp", "headers": {{"X-Npm-Token": "{npm}"}}}},
  "publish": {{"command": "npx", "args": ["publish-mcp"], "env": {{"NPM_TOKEN": "{npm}"}}}}
}}}}"#
        ),
    );
    let out = env.run(&["extract"]);
    out.assert_no_secret(&[npm]);
    assert_snapshot!(out.stdout, @"
    FILE       SERVER   FIELD                VARIABLE       VALUE
    .mcp.json  npm      headers.X-Npm-Token  MCP_NPM_TOKEN  npm_…3z5A
    .mcp.json  publish  env.NPM_TOKEN        NPM_TOKEN      npm_…3z5A
    ");
    let written = env.read("project/.mcp.json");
    assert!(
        written.contains(r#""X-Npm-Token": "${MCP_NPM_TOKEN}""#),
        "{written}"
    );
    assert!(
        written.contains(r#""NPM_TOKEN": "${NPM_TOKEN}""#),
        "{written}"
    );
    // Nothing left for `check` to call an error.
    let check = env.run(&["check", "--json"]).json();
    assert!(
        check["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|finding| finding["code"] != "blanked-credential"),
        "{check}"
    );
}

#[test]
fn a_literal_pgpassword_in_the_committed_file_fails_scan_and_extract_moves_it() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"pg": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres"], "env": {"PGPASSWORD": "postgres"}}}}"#,
    );
    // Short and word-like: under a password name it is a password all the
    // same (the Postgres server's usual configuration).
    let scan = env.run(&["scan", "--json"]).expect_code(1);
    assert_eq!(
        scan.json()["findings"][0]["field"],
        "env.PGPASSWORD",
        "{scan}"
    );
    env.run(&["extract"]).expect_code(0);
    assert!(
        env.read("project/.mcp.json")
            .contains(r#""PGPASSWORD": "${PGPASSWORD}""#)
    );
    assert_eq!(
        dotenv_values(&env),
        [("PGPASSWORD".to_string(), "postgres".to_string())]
    );
    env.run(&["scan"]).expect_code(0);
}
