//! One name rule: `mcpenv add` and `serve`'s `add_server` accept and
//! refuse exactly the same names, Claude Code 2.1.332's rule
//! (`^[A-Za-z0-9_-]+$`, no length cap, its reserved names). A name that
//! starts with `-` goes after `--` on the command line.

use rmcp::model::ElicitationAction;
use serde_json::json;

use crate::harness::TestEnv;
use crate::serve_gate::{call, connect, text};

/// Each name, and whether Claude Code accepts it.
fn names() -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = [
        ("a", true),
        ("-x", true),
        ("--trust", true),
        ("_u", true),
        ("123", true),
        ("Workspace", true),
        ("my-server_2", true),
        ("a.b", false),
        ("a b", false),
        ("café", false),
        ("x/y", false),
        ("", false),
        ("workspace", false),
        ("claude-in-chrome", false),
        ("a\nb", false),
    ]
    .into_iter()
    .map(|(name, ok)| (name.to_string(), ok))
    .collect();
    names.push(("s".repeat(70), true));
    names.push(("l".repeat(300), true));
    names
}

/// Whether `mcpenv add` takes `name` (exit 0) or refuses it as a usage
/// error (exit 2); any other exit fails the test.
fn cli_accepts(env: &TestEnv, name: &str) -> bool {
    let words: Vec<&str> = if name.starts_with('-') {
        vec!["add", "--", name, "sh"]
    } else {
        vec!["add", name, "--", "sh"]
    };
    let out = env.run(&words);
    match out.code {
        0 => true,
        2 => false,
        _ => panic!("{name:?}: {out}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn add_and_add_server_give_every_name_the_same_verdict() {
    let cli = TestEnv::new();
    let serve = TestEnv::new();
    let (session, _person) = connect(&serve, Some(ElicitationAction::Accept)).await;
    for (name, expected) in names() {
        let by_cli = cli_accepts(&cli, &name);
        let result = call(
            &session,
            "add_server",
            json!({"name": name, "scope": "local", "command": "sh"}),
        )
        .await;
        let by_serve = result.is_error != Some(true);
        assert_eq!(by_cli, expected, "mcpenv add, {name:?}");
        assert_eq!(
            by_serve,
            expected,
            "add_server, {name:?}: {}",
            text(&result)
        );
    }
    session.cancel().await.unwrap();
}

#[test]
fn a_name_after_dashes_may_start_with_a_dash_and_a_typo_still_errors() {
    let env = TestEnv::new();
    env.run(&["add", "--", "--trust", "--", "sh", "-c", "true"])
        .expect_code(0);
    let stored = env.read("home/.claude.json");
    assert!(stored.contains(r#""--trust": {"#), "{stored}");
    assert!(stored.contains(r#""args": ["#), "{stored}");
    // A short flag mistyped before NAME is still clap's error, not a name.
    let out = env
        .run(&["add", "-x", "github", "--", "npx"])
        .expect_code(2);
    assert!(
        out.to_string().contains("unexpected argument '-x'"),
        "{out}"
    );
}

#[test]
fn a_dash_name_is_suggested_after_dashes() {
    let env = TestEnv::new();
    // `-e` values after the command: the corrected line keeps the name
    // after `--`, where it is read as one.
    let out = env
        .run(&["add", "-e", "A=1", "--", "--trust", "B=2", "sh"])
        .expect_code(2);
    assert!(
        out.to_string()
            .contains("`mcpenv add -e 'A=1' -e 'B=2' -- --trust sh`"),
        "{out}"
    );
}
