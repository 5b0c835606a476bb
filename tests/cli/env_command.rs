//! `mcpenv env` on a terminal and with a `.env` line it cannot read.

use insta::assert_snapshot;

use crate::harness::TestEnv;
use crate::terminal::{Terminal, exited};

/// A server that needs `URL` and `PLAIN`; `.env` sets them, and a secret
/// no server needs (`API_TOKEN`) that `URL` quotes.
fn project_with_env(env_file: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "node", "env": {"URL": "${URL}", "PLAIN": "${PLAIN}"}}}}"#,
    );
    env.write("project/.env", env_file);
    env
}

const SECRET: &str = "Zq8pLm3vRt7wXy2N";

#[test]
fn a_terminal_sees_every_value_masked_in_every_format() {
    let env = project_with_env(&format!(
        "API_TOKEN={SECRET}\nURL=\"see {SECRET} here\"\nPLAIN=hello-world\n"
    ));
    for args in [
        &["env"][..],
        &["env", "--format", "fish"],
        &["env", "--format", "dotenv"],
        &["env", "--format", "json"],
        &["env", "--json"],
    ] {
        let (shown, status) = Terminal::start(&env, args).finish();
        assert_eq!(exited(status), 0, "{args:?}: {shown}");
        for whole in [SECRET, "hello-world"] {
            assert!(
                !shown.contains(whole),
                "{args:?} showed `{whole}`:\n{shown}"
            );
        }
        // PLAIN's mask (the terminal's bytes come back one char each, so
        // URL's `…` would not read as one).
        assert!(shown.contains("****"), "{args:?}: {shown}");
        assert!(
            shown.contains("Values are masked on a terminal"),
            "{args:?}: {shown}"
        );
    }
    // Piped, the values are the point.
    let out = env.run(&["env", "--json"]);
    assert_snapshot!(out, @r#"
    {
      "schema_version": 1,
      "variables": {
        "PLAIN": "hello-world",
        "URL": "see Zq8pLm3vRt7wXy2N here"
      }
    }
    ----- stderr -----
    [exit status: 0]
    "#);
}

#[test]
fn a_line_it_cannot_read_is_a_warning_naming_the_line_not_its_text() {
    let env = project_with_env("PLAIN=hello-world\nURL=see Zq8pLm3vRt7wXy2N here\n");
    let out = env.run(&["env"]);
    assert_snapshot!(out, @r"
    export PLAIN='hello-world'
    ----- stderr -----
    warning: `[ROOT]/project/.env` line 2: an unquoted value ends at the first space; quote the value; skipped
    [exit status: 0]
    ");
    let out = env.run(&["env", "--json", "-q"]);
    assert!(out.stderr.is_empty(), "{out}");
    // `run` says the same of the same line.
    let out = env.run(&["run", "--", "true"]);
    assert_snapshot!(out.stderr, @"warning: `[ROOT]/project/.env` line 2: an unquoted value ends at the first space; quote the value; skipped");
}

#[test]
fn a_terminal_is_told_why_there_is_nothing_to_export_and_a_pipe_is_not() {
    let env = project_with_env("UNUSED=1\n");
    let (shown, status) = Terminal::start(&env, &["env"]).finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(
        shown.contains("Nothing to export: no `.env` file sets a variable the servers need"),
        "{shown}"
    );
    let out = env.run(&["env"]);
    assert_snapshot!(out, @r"
    ----- stderr -----
    [exit status: 0]
    ");
}
