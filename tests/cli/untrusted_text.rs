//! Untrusted text is shown, never obeyed by the terminal: names, commands
//! and values from a cloned repository's files reach text output with
//! control and bidi characters escaped visibly, and JSON output keeps the
//! exact strings.

use serde_json::json;

use crate::harness::{CommandOutput, TestEnv};

const FORGED_NAME: &str = "evil\nFAKE-LINE  project  stdio  approved";
const CLEARING_COMMAND: &str = "ec\u{1b}[2Jho";
const REVERSED_ARG: &str = "safe\u{202e}txt.exe";

/// Asserts that nothing raw reached the terminal: no ESC, CR, BEL, bidi
/// override or isolate anywhere, and no line that starts with the forged
/// row's text.
#[track_caller]
fn assert_inert(what: &str, out: &CommandOutput) {
    for text in [&out.stdout, &out.stderr] {
        for c in text.chars() {
            let bad = (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            assert!(!bad, "`{what}` printed a raw {c:?}:\n{out}");
        }
        assert!(
            !text
                .lines()
                .any(|line| line.trim_start().starts_with("FAKE-LINE")),
            "`{what}` printed a forged line:\n{out}"
        );
    }
}

fn hostile() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            FORGED_NAME: {"command": "npx", "args": ["-y", "x"]},
            "clear": {"command": CLEARING_COMMAND, "args": [REVERSED_ARG], "env": {"A\u{1b}]8;;x": "${B\u{7}}"}},
        }})
        .to_string(),
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": [FORGED_NAME, "clear"]}).to_string(),
    );
    env.trust_project();
    env
}

#[test]
fn controls_and_bidi_from_files_are_escaped_in_text() {
    let env = hostile();
    let list = env.run(&["list"]).expect_code(0);
    assert_inert("list", &list);
    assert!(list.stdout.contains("evil\\nFAKE-LINE"), "{list}");
    // Command lines are shown as a shell reads them back: ANSI-C quoting.
    assert!(list.stdout.contains("$'ec\\x1b[2Jho'"), "{list}");
    assert!(
        list.stdout.contains("$'safe\\xe2\\x80\\xaetxt.exe'"),
        "{list}"
    );
    // One header and two rows, nothing more.
    assert_eq!(list.stdout.lines().count(), 3, "{list}");

    for args in [
        &["check"][..],
        &["get", "clear"],
        &["get", FORGED_NAME],
        &["scan"],
        &["probe", "--timeout", "1"],
        &["extract", "--dry-run"],
        &["get", "ec\u{1b}[2Jho"],
        &["remove", FORGED_NAME, "-s", "local"],
    ] {
        let out = env.run(args);
        assert_inert(&args.join(" "), &out);
    }
    let get = env.run(&["get", "clear"]).expect_code(0);
    assert!(get.stdout.contains("ec\\u{1b}[2Jho"), "{get}");
}

#[test]
fn json_keeps_the_exact_strings() {
    let env = hostile();
    let list = env.run(&["list", "--json"]).expect_code(0);
    let servers = list.json()["servers"].as_array().unwrap().clone();
    let names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.contains(&FORGED_NAME), "{list}");
    let clear = servers.iter().find(|s| s["name"] == "clear").unwrap();
    assert_eq!(clear["command"], CLEARING_COMMAND);
    assert_eq!(clear["args"][0], REVERSED_ARG);
}

/// A name Claude Code cannot take is imported under one it can; the note
/// saying so is inert on the terminal, and the `--rename` it offers works
/// when pasted into a shell.
#[test]
fn a_name_that_cannot_be_written_back_gets_a_valid_one_and_a_rename_hint_that_works() {
    let env = TestEnv::new();
    env.write(
        "project/.cursor/mcp.json",
        &json!({"mcpServers": {"a\u{1b}b": {"command": "npx", "args": ["-y", "x"]}}}).to_string(),
    );
    let out = env
        .run(&["import", "--from", "cursor", "-s", "project"])
        .expect_code(0);
    assert_inert("import", &out);
    assert!(
        out.stderr.contains("`a\\u{1b}b` imported as `a-b`"),
        "{out}"
    );
    assert!(out.stderr.contains("--rename $'a\\x1bb=NEW'"), "{out}");
    let imported = env.run(&["get", "a-b", "--json"]).expect_code(0);
    assert_eq!(imported.json()["scope"], "project");
    // The hint with a name filled in, run through a shell as a user would
    // paste it.
    let hinted = out
        .stderr
        .lines()
        .find_map(|line| line.split("add `").nth(1)?.split("` to the command").next())
        .unwrap()
        .replace("=NEW", "=mine");
    let script = format!(
        "exec '{}' import --from cursor -s project {hinted}",
        crate::harness::mcpenv_binary().display()
    );
    let command = env.command(&env.project, &[]);
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&env.project)
        .env_clear()
        .envs(
            command
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let imported = env.run(&["get", "mine", "--json"]).expect_code(0);
    assert_eq!(imported.json()["scope"], "project");
}
