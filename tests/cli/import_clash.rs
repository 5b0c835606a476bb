//! `import` when a name is taken: the prompt shows how the two entries
//! differ (secrets masked) and takes one answer for every clash.

use crate::harness::TestEnv;
use crate::terminal::{Terminal, exited};

#[test]
fn an_import_clash_shows_the_difference_and_offers_one_answer_for_all() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "a": {"command": "npx", "args": ["a-mcp@1"]},
  "b": {"command": "npx", "args": ["b-mcp@1"]}
}}"#,
    );
    env.write(
        "project/.cursor/mcp.json",
        r#"{"mcpServers": {
  "a": {"command": "npx", "args": ["a-mcp@2"], "env": {"GITHUB_TOKEN": "ghp_R8x2Lq9ZtW4mN7vB3kP6sJ1yH5cF0dG2aE8u"}},
  "b": {"command": "npx", "args": ["b-mcp@2"]}
}}"#,
    );
    let mut terminal = Terminal::start(&env, &["import", "--from", "cursor", "-s", "project"]);
    terminal.expect("--- a (project scope, now)");
    terminal.expect("+++ a (imported)");
    terminal.expect("-    \"a-mcp@1\"");
    terminal.expect("+    \"a-mcp@2\"");
    terminal.expect("MCP server `a` already exists in project scope");
    terminal.wait_for_mode("-icanon");
    // From "Cancel the import" up to "Replace it and every other server…".
    for _ in 0..4 {
        terminal.session.send("\x1b[A").unwrap();
    }
    terminal.session.send("\r").unwrap();
    terminal.session.flush().unwrap();
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    // The diff is shown as lines, not escaped into one.
    let lines: Vec<&str> = shown.lines().collect();
    for line in [
        "--- a (project scope, now)",
        "-    \"a-mcp@1\"",
        "+    \"a-mcp@2\"",
    ] {
        assert!(lines.contains(&line), "no line `{line}`:\n{shown}");
    }
    assert!(
        !shown.contains("ghp_R8x2Lq9ZtW4mN7vB3kP6sJ1yH5cF0dG2aE8u"),
        "{shown}"
    );
    // One answer for both: `b` was not asked about.
    assert!(!shown.contains("MCP server `b` already exists"), "{shown}");
    let config = env.read("project/.mcp.json");
    assert!(
        config.contains("a-mcp@2") && config.contains("b-mcp@2"),
        "{config}"
    );
}

#[test]
fn skipping_every_clash_says_so_and_writes_nothing() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "npx", "args": ["a-mcp@1"]}}}"#,
    );
    env.write(
        "project/.cursor/mcp.json",
        r#"{"mcpServers": {"a": {"command": "npx", "args": ["a-mcp@2"]}}}"#,
    );
    let before = env.read("project/.mcp.json");
    let mut terminal = Terminal::start(&env, &["import", "--from", "cursor", "-s", "project"]);
    terminal.expect("MCP server `a` already exists in project scope");
    terminal.wait_for_mode("-icanon");
    // From "Cancel the import" up to "Skip it and every other server…".
    terminal.session.send("\x1b[A").unwrap();
    terminal.session.send("\r").unwrap();
    terminal.session.flush().unwrap();
    let (shown, status) = terminal.finish();
    assert_eq!(exited(status), 0, "{shown}");
    assert!(
        shown.contains("Imported nothing from cursor")
            && shown.contains("you skipped the one server whose name is taken"),
        "{shown}"
    );
    assert_eq!(env.read("project/.mcp.json"), before);
}
