//! `mcpenv undo`: every write keeps the previous bytes of each file it
//! changed; undo puts them back exactly, and refuses when a file changed
//! since.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use insta::assert_snapshot;

use crate::harness::TestEnv;

const TOKEN: &str = "ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345";

/// The bytes of every file under HOME and the project.
fn files(env: &TestEnv) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![env.home.clone(), env.project.clone()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    found
}

fn project_with_token(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &format!(
            "{{\n  \"mcpServers\": {{\n    \"github\": {{ \"command\": \"npx\", \"env\": {{ \"GITHUB_TOKEN\": \"{TOKEN}\" }} }}\n  }}\n}}\n"
        ),
    );
}

#[test]
fn undo_puts_back_every_file_of_the_last_edit_byte_for_byte() {
    let env = TestEnv::new();
    project_with_token(&env);
    env.run(&["add", "-s", "user", "first", "node"])
        .expect_code(0);
    let before = files(&env);
    let out = env.run(&["extract", "-s", "project"]);
    assert_eq!(out.code, 0, "{out}");
    assert_ne!(files(&env), before);
    let out = env.run(&["undo"]);
    assert_eq!(out.code, 0, "{out}");
    out.assert_no_secret(&[TOKEN]);
    assert_eq!(files(&env), before, "{out}");
    assert_snapshot!(out.stderr, @"
    Undid `mcpenv extract` (just now)
      removed `.gitignore`
      removed `.env`
      removed `.env.example`
      put back `.mcp.json`
    1 earlier edit kept; `mcpenv undo --list` shows them
    ");
}

#[test]
fn undo_twice_goes_back_two_edits_and_then_there_is_nothing_left() {
    let env = TestEnv::new();
    let empty = files(&env);
    env.run(&["add", "-s", "project", "a", "node"])
        .expect_code(0);
    let after_first = files(&env);
    env.run(&["add", "-s", "project", "b", "node"])
        .expect_code(0);
    let list = env.run(&["undo", "--list"]);
    assert_eq!(list.code, 0, "{list}");
    assert_snapshot!(list.stdout, @"
    2  mcpenv add  just now
        changed `.mcp.json`
    1  mcpenv add  just now
        created `.mcp.json`
    ");
    let json = env.run(&["undo", "--list", "--json"]).json();
    assert_eq!(json["edits"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(json["edits"][0]["command"], "add");
    env.run(&["undo"]).expect_code(0);
    assert_eq!(files(&env), after_first);
    env.run(&["undo"]).expect_code(0);
    assert_eq!(files(&env), empty, "the created .mcp.json is removed");
    let out = env.run(&["undo"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: there is no edit to undo

    hint: mcpenv keeps the last 20 edits of the commands that write files (add, remove, share, extract, onboard, …); none is kept in `[ROOT]/state/mcpenv/undo`
    [exit status: 1]
    ");
}

#[test]
fn a_file_changed_since_the_edit_is_not_overwritten() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "a", "node"])
        .expect_code(0);
    let edited = "{\n  \"mcpServers\": {\n    \"by-hand\": { \"command\": \"x\" }\n  }\n}\n";
    env.write("project/.mcp.json", edited);
    let out = env.run(&["undo"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `.mcp.json` changed since `mcpenv add` wrote it just now; undo would lose that change, so nothing was put back

    hint: see what changed in the file; `mcpenv undo --list` lists the edits kept
    [exit status: 1]
    ");
    assert_eq!(
        fs::read_to_string(env.project.join(".mcp.json")).unwrap(),
        edited
    );
    let json = env.run(&["undo", "--json"]).expect_code(1).json();
    assert_eq!(json["error"]["kind"], "failure", "{json}");
}

#[test]
fn the_journal_is_private_and_a_dry_run_of_undo_shows_the_diff() {
    let env = TestEnv::new();
    project_with_token(&env);
    env.run(&["extract", "-s", "project"]).expect_code(0);
    let journal = env.root.join("state/mcpenv/undo");
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&journal), 0o700);
    let edit = fs::read_dir(&journal)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for entry in fs::read_dir(&edit).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    let before = files(&env);
    let out = env.run(&["undo", "--dry-run"]);
    assert_eq!(out.code, 0, "{out}");
    out.assert_no_secret(&[TOKEN]);
    assert!(out.stdout.contains("--- a/.mcp.json"), "{out}");
    assert!(out.stdout.contains("-GITHUB_TOKEN=ghp_…2345"), "{out}");
    assert_eq!(files(&env), before);
    // The dry run kept the edit: a real undo still has it.
    env.run(&["undo"]).expect_code(0);
}

#[test]
fn with_mcpenv_undo_off_no_copy_is_kept() {
    let mut env = TestEnv::new();
    env.set_env("MCPENV_UNDO", "off");
    env.run(&["add", "-s", "project", "a", "node"])
        .expect_code(0);
    assert!(!env.root.join("state/mcpenv/undo").exists());
    let out = env.run(&["undo"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("there is no edit to undo"), "{out}");
}
