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

/// `text` with each time undo shows (`2026-12-03 08:40:03 UTC`) as `[TIME]`.
pub fn timeless(text: &str) -> String {
    regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
        .unwrap()
        .replace_all(text, "[TIME]")
        .into_owned()
}

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
    assert_snapshot!(timeless(&out.stderr), @"
    Undoing `mcpenv extract` (just now, [TIME]) will:
      remove `.gitignore`
      remove `.env`
      remove `.env.example`
      put back `.mcp.json`
    Undid `mcpenv extract` (just now)
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

/// Every file under the test root (project, HOME, mcpenv's state and its
/// undo journal) that holds `secret`.
fn holding(env: &TestEnv, secret: &str) -> Vec<String> {
    crate::keychain::files_holding(&env.root, secret)
}

#[test]
fn removing_a_secret_leaves_no_copy_of_it_for_undo() {
    let env = TestEnv::new();
    project_with_token(&env);
    // `extract` keeps `.mcp.json` as it was, the token pasted in it.
    env.run(&["extract", "-s", "project"]).expect_code(0);
    env.run(&["add", "-s", "user", "unrelated", "node"])
        .expect_code(0);
    assert_eq!(
        env.read("project/.env"),
        format!("GITHUB_TOKEN='{TOKEN}'\n")
    );
    let out = env.run(&["secrets", "rm", "GITHUB_TOKEN"]);
    assert_eq!(out.code, 0, "{out}");
    out.assert_no_secret(&[TOKEN]);
    assert_eq!(holding(&env, TOKEN), Vec::<String>::new(), "{out}");
    assert_snapshot!(out.stderr, @"
    Removed `GITHUB_TOKEN` from `.env`
    note: `mcpenv undo` cannot take this edit back: the files' previous bytes hold the value it removed, and no copy of it may stay behind; the earlier edit that held it was dropped from the journal too
    ");
    // The unrelated edit, whose copies never held the token, is kept.
    let list = env.run(&["undo", "--list"]).expect_code(0);
    assert_snapshot!(list.stdout, @"
    2  mcpenv add  just now
        created `~/.claude.json`
    ");
}

/// Runs `git ARGS` in the project, which must succeed.
fn git(env: &TestEnv, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(&env.project)
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A real git repository whose tracked `.mcp.json` holds a pasted token,
/// after `extract` took it out: undo would put it back.
fn extracted_from_a_tracked_file() -> TestEnv {
    let env = TestEnv::bare();
    git(&env, &["init", "-q"]);
    project_with_token(&env);
    git(&env, &["add", ".mcp.json"]);
    env.run(&["extract", "-s", "project"]).expect_code(0);
    assert!(!env.read("project/.mcp.json").contains(TOKEN));
    env
}

#[test]
fn undo_refuses_to_put_a_literal_secret_back_into_a_tracked_file() {
    let env = extracted_from_a_tracked_file();
    let before = files(&env);
    // No terminal, no flag: refused, and every file it would touch named.
    let out = env.run(&["undo"]);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(timeless(&out.to_string()), @"
    ----- stderr -----
    Undoing `mcpenv extract` (just now, [TIME]) will:
      remove `.gitignore`
      remove `.env`
      remove `.env.example`
      put back `.mcp.json`, with a literal secret, into a file git tracks or would commit
    error: undoing `mcpenv extract` would put a literal secret back into `.mcp.json`, which git tracks or would commit; nothing was put back

    hint: run `mcpenv undo` in a terminal to be asked, or `mcpenv undo --restore-secrets` to put it back all the same (then keep it out of commits with `mcpenv extract`)
    [exit status: 1]
    ");
    assert_eq!(files(&env), before, "nothing was put back");
    let json = env.run(&["undo", "--json"]).expect_code(1).json();
    assert_eq!(json["error"]["kind"], "failure", "{json}");
    assert_eq!(files(&env), before);

    // Agreed to by name: put back, having said so first.
    let out = env.run(&["undo", "--restore-secrets"]);
    out.assert_no_secret(&[TOKEN]);
    assert_snapshot!(timeless(&out.to_string()), @"
    ----- stderr -----
    Undoing `mcpenv extract` (just now, [TIME]) will:
      remove `.gitignore`
      remove `.env`
      remove `.env.example`
      put back `.mcp.json`, with a literal secret, into a file git tracks or would commit
    Undid `mcpenv extract` (just now)
    [exit status: 0]
    ");
    assert!(env.read("project/.mcp.json").contains(TOKEN));
    assert!(!env.project.join(".gitignore").exists());
}

#[test]
fn undo_asks_on_a_terminal_before_putting_a_secret_into_a_tracked_file() {
    let env = extracted_from_a_tracked_file();
    let before = files(&env);
    let mut terminal = crate::terminal::Terminal::start(&env, &["undo"]);
    terminal.expect("remove `.gitignore`");
    terminal.answer_key(
        "Put the literal secret back into a file git tracks or would commit?",
        "n",
    );
    let (shown, status) = terminal.finish();
    assert_eq!(crate::terminal::exited(status), 1, "{shown}");
    assert!(!shown.contains(TOKEN), "{shown}");
    assert_eq!(files(&env), before, "{shown}");
}

#[test]
fn a_secret_into_an_ignored_file_is_put_back_without_asking() {
    let env = TestEnv::bare();
    git(&env, &["init", "-q"]);
    env.write("project/.gitignore", ".mcp.json\n.env\n");
    project_with_token(&env);
    env.run(&["extract", "-s", "project"]).expect_code(0);
    let out = env.run(&["undo"]);
    assert_eq!(out.code, 0, "{out}");
    out.assert_no_secret(&[TOKEN]);
    assert!(env.read("project/.mcp.json").contains(TOKEN));
}
