//! `-q`: every command prints only its data and errors. Each case runs a
//! command twice in a project that makes it warn and hint, and checks that
//! `-q` drops the warnings and hints, keeps the data, the errors whole
//! (with their hints) and the exit code.

use crate::harness::TestEnv;

/// A project with a pending server that misses a variable, a `.env.example`
/// listing a variable no server uses, and a user server.
fn noisy_project() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"db": {"command": "sh", "args": ["${DB_SCHEMA}"]}}}"#,
    );
    env.write("project/.env.example", "DB_SCHEMA=\nOLD_VARIABLE=\n");
    env.write(
        "home/.claude.json",
        r#"{"mcpServers": {"notes": {"command": "sh", "args": ["-c", "exec notes"]}}}"#,
    );
    env
}

/// Words that only status, warnings and hints contain.
const NOISE: [&str; 6] = [
    "hint:",
    "warning:",
    "note:",
    "Fix it with",
    "Approve the pending",
    "servers in effect",
];

#[track_caller]
fn assert_quiet(env: &TestEnv, args: &[&str], data: &str) {
    let loud = env.run(args);
    let quiet_args: Vec<&str> = std::iter::once("-q").chain(args.iter().copied()).collect();
    let quiet = env.run(&quiet_args);
    assert!(
        NOISE.iter().any(|noise| loud.to_string().contains(noise)) || !loud.stderr.is_empty(),
        "without -q, `{}` should say more than its data:\n{loud}",
        args.join(" ")
    );
    // An error prints whole: its own `  hint:` lines stay.
    let shown = quiet.to_string();
    let mut in_error = false;
    let quiet_text: Vec<&str> = shown
        .lines()
        .filter(|line| {
            if !line.starts_with(' ') {
                in_error = line.starts_with("error:");
            }
            !(in_error && line.trim_start().starts_with("hint:"))
        })
        .collect();
    let quiet_text = quiet_text.join("\n");
    for noise in NOISE {
        assert!(
            !quiet_text.contains(noise),
            "`-q {}` printed `{noise}`:\n{quiet}",
            args.join(" ")
        );
    }
    assert!(
        quiet.stderr.is_empty(),
        "`-q {}` printed on stderr:\n{quiet}",
        args.join(" ")
    );
    assert!(
        quiet.stdout.contains(data),
        "`-q {}` lost its data `{data}`:\n{quiet}",
        args.join(" ")
    );
    assert_eq!(
        quiet.code, loud.code,
        "`-q` changed the exit code:\n{quiet}"
    );
}

#[test]
fn check_prints_only_what_is_missing_and_exits_the_same() {
    let env = noisy_project();
    assert_quiet(&env, &["check"], "DB_SCHEMA");
    let quiet = env.run(&["-q", "check"]);
    insta::assert_snapshot!(quiet, @"
    db  project  pending approval
      DB_SCHEMA     missing
      command `sh`  found
    notes  user
      command `sh`  found

    error: `DB_SCHEMA` is not set (needed by db)
      hint: set it with `mcpenv onboard`, or export it in your shell
    ----- stderr -----
    [exit status: 1]
    ");
}

#[test]
fn strict_check_keeps_the_warnings_that_fail_it() {
    let env = noisy_project();
    env.write("project/.mcp.json", r#"{"mcpServers": {}}"#);
    let quiet = env.run(&["-q", "check", "--strict"]);
    assert!(
        quiet.stdout.contains("OLD_VARIABLE") && quiet.code == 1,
        "{quiet}"
    );
}

#[test]
fn read_only_commands_drop_hints_and_keep_data() {
    let env = noisy_project();
    assert_quiet(&env, &["list"], "db");
    assert_quiet(&env, &["secrets", "list"], "");
    assert_quiet(&env, &["scan"], "");
    let broken = TestEnv::new();
    broken.write("project/.mcpenv/templates/broken.json", "{");
    assert_quiet(&broken, &["templates", "list"], "github");
}

#[test]
fn writing_commands_print_no_status() {
    let env = noisy_project();
    let added = env.run(&[
        "-q",
        "add",
        "tool",
        "-s",
        "project",
        "--",
        "sh",
        "-c",
        "exec tool",
    ]);
    assert_eq!(added.to_string(), "----- stderr -----\n[exit status: 0]");
    let removed = env.run(&["-q", "remove", "tool", "-s", "project"]);
    assert_eq!(removed.to_string(), "----- stderr -----\n[exit status: 0]");
}

#[test]
fn errors_still_print_whole() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", "{ not json");
    let quiet = env.run(&["-q", "list"]);
    assert!(
        quiet.stderr.contains("error:") && quiet.stderr.contains("hint:") && quiet.code == 1,
        "{quiet}"
    );
    let missing = env.run(&["-q", "get", "nothing-here"]);
    assert!(
        missing.stderr.contains("error:") && missing.stderr.contains("hint:"),
        "{missing}"
    );
}

#[test]
fn json_is_the_same_with_and_without_quiet() {
    let env = noisy_project();
    let loud = env.run(&["check", "--json"]);
    let quiet = env.run(&["-q", "check", "--json"]);
    assert_eq!(loud.stdout, quiet.stdout);
}
