//! `mcpenv undo` is scoped like the edit: in project A it takes back A's
//! edits and those of the user's own files, never project B's; in
//! `~/.claude.json`, which both share, only the members A's edit changed;
//! an undo can be redone; records of an older mcpenv are taken back only by
//! number.

use std::fs;
use std::path::PathBuf;

use insta::assert_snapshot;
use serde_json::{Value, json};

use crate::harness::TestEnv;
use crate::undo::timeless;

/// A second project (a git repository) next to the test's own.
fn other_project(env: &TestEnv) -> PathBuf {
    let other = env.root.join("other");
    fs::create_dir_all(other.join(".git")).unwrap();
    other
}

fn claude_json(env: &TestEnv) -> Value {
    serde_json::from_slice(&env.bytes("home/.claude.json")).unwrap()
}

/// The local-scope servers of project `dir`.
fn local_servers(env: &TestEnv, dir: &std::path::Path) -> Value {
    claude_json(env)["projects"][dir.display().to_string()]["mcpServers"].clone()
}

#[test]
fn undo_in_one_project_takes_back_only_its_own_edits_and_never_another_projects() {
    let env = TestEnv::new();
    let other = other_project(&env);
    env.run(&["add", "-s", "local", "mine", "node"])
        .expect_code(0);
    env.run(&["add", "-s", "project", "shared-mine", "node"])
        .expect_code(0);
    env.run_in(&other, &["add", "-s", "local", "theirs", "deno"])
        .expect_code(0);
    env.run_in(&other, &["add", "-s", "project", "shared-theirs", "deno"])
        .expect_code(0);
    let their_project_file = fs::read(other.join(".mcp.json")).unwrap();
    let their_servers = local_servers(&env, &other);
    assert_eq!(
        their_servers,
        json!({"theirs": {"type": "stdio", "command": "deno", "args": [], "env": {}}})
    );

    // Each project lists its own edits, and says the others are there.
    let list = env.run(&["undo", "--list"]).expect_code(0);
    assert_snapshot!(list, @r"
    2  mcpenv add  just now
        created `.mcp.json`
    1  mcpenv add  just now
        created `~/.claude.json`
    ----- stderr -----
    `mcpenv undo` puts back the newest edit not undone; run it again for the one before
    2 edits of other projects are not shown; `mcpenv undo --list --all` lists every edit
    [exit status: 0]
    ");
    let list = env.run_in(&other, &["undo", "--list"]).expect_code(0);
    assert_snapshot!(list.stdout, @r"
    4  mcpenv add  just now
        created `.mcp.json`
    3  mcpenv add  just now
        changed `~/.claude.json`
    ");

    // The newest edit here is this project's `.mcp.json`, not the other's.
    let out = env.run(&["undo"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(!env.project.join(".mcp.json").exists());
    assert_eq!(
        fs::read(other.join(".mcp.json")).unwrap(),
        their_project_file
    );

    // `~/.claude.json` changed since (the other project's server): only
    // this edit's member is taken back.
    let out = env.run(&["undo"]);
    assert_snapshot!(timeless(&out.to_string()), @r"
    ----- stderr -----
    Undoing `mcpenv add` (just now, [TIME]) will:
      put back `~/.claude.json`: only the members the edit changed, as the file changed since
    Undid `mcpenv add` (just now)
    [exit status: 0]
    ");
    assert_eq!(local_servers(&env, &env.project), Value::Null);
    assert_eq!(local_servers(&env, &other), their_servers);
    assert_eq!(
        fs::read(other.join(".mcp.json")).unwrap(),
        their_project_file
    );
    // Byte for byte as if this project's edit had never been made.
    let alone = TestEnv::new();
    let alone_other = other_project(&alone);
    alone
        .run_in(&alone_other, &["add", "-s", "local", "theirs", "deno"])
        .expect_code(0);
    assert_eq!(
        env.read("home/.claude.json"),
        alone.read("home/.claude.json")
    );

    // Nothing of this project is left; the other's edits are not taken.
    let out = env.run(&["undo"]);
    assert_snapshot!(out, @r"
    ----- stderr -----
    error: there is no edit to undo in this project

    hint: 2 edits of other projects (or recorded before mcpenv kept where an edit was made) are kept; `mcpenv undo --list --all` lists every edit, and `mcpenv undo NUMBER` takes back one by its number
    [exit status: 1]
    ");
    assert_eq!(local_servers(&env, &other), their_servers);

    // `--all` lists every project's edits, marking where and what is undone.
    let list = env.run(&["undo", "--list", "--all"]).expect_code(0);
    assert_snapshot!(list.stdout, @r"
    4  mcpenv add  just now  in `[ROOT]/other`
        created `[ROOT]/other/.mcp.json`
    3  mcpenv add  just now  in `[ROOT]/other`
        changed `~/.claude.json`
    2  mcpenv add  just now  undone
        created `.mcp.json`
    1  mcpenv add  just now  undone
        created `~/.claude.json`
    ");
    let json = env.run(&["undo", "--list", "--all", "--json"]).json();
    assert_eq!(json["schema_version"], 1, "{json}");
    assert_eq!(json["elsewhere"], 0, "{json}");
    assert_eq!(json["edits"][0]["here"], false, "{json}");
    assert_eq!(json["edits"][0]["project"], "[ROOT]/other", "{json}");
    assert_eq!(json["edits"][1]["files"][0]["owner"], "project", "{json}");
    assert_eq!(json["edits"][3]["undone_by"], 6, "{json}");

    // The other project's own undo is untouched by all this.
    env.run_in(&other, &["undo"]).expect_code(0);
    assert!(!other.join(".mcp.json").exists());
    env.run_in(&other, &["undo"]).expect_code(0);
    assert_eq!(local_servers(&env, &other), Value::Null);
}

#[test]
fn an_edit_of_the_users_own_files_is_undone_from_any_project() {
    let env = TestEnv::new();
    let other = other_project(&env);
    env.run_in(&other, &["add", "-s", "user", "everywhere", "node"])
        .expect_code(0);
    let list = env.run(&["undo", "--list"]).expect_code(0);
    assert_snapshot!(list.stdout, @r"
    1  mcpenv add  just now
        created `~/.claude.json`
    ");
    let json = env.run(&["undo", "--list", "--json"]).json();
    assert_eq!(json["edits"][0]["here"], true, "{json}");
    assert_eq!(json["edits"][0]["files"][0]["owner"], "user", "{json}");
    env.run(&["undo"]).expect_code(0);
    assert!(!env.home.join(".claude.json").exists());
}

#[test]
fn another_projects_edit_is_taken_back_only_by_number_and_says_where() {
    let env = TestEnv::new();
    let other = other_project(&env);
    env.run_in(&other, &["add", "-s", "project", "theirs", "deno"])
        .expect_code(0);
    let out = env.run(&["undo", "1"]);
    assert_snapshot!(timeless(&out.to_string()), @r"
    ----- stderr -----
    Undoing `mcpenv add` (edit 1, made in `[ROOT]/other`, just now, [TIME]) will:
      remove `[ROOT]/other/.mcp.json`
    Undid `mcpenv add` (just now)
    [exit status: 0]
    ");
    assert!(!other.join(".mcp.json").exists());
    let out = env.run(&["undo", "9"]);
    assert_snapshot!(out, @r"
    ----- stderr -----
    error: the journal holds no edit 9

    hint: `mcpenv undo --list --all` lists every edit kept
    [exit status: 1]
    ");
    // `--all` is for `--list` only: a usage error.
    let out = env.run(&["undo", "--all"]);
    assert_eq!(out.code, 2, "{out}");
}

#[test]
fn a_member_changed_again_since_is_refused_naming_the_later_edit() {
    let env = TestEnv::new();
    let other = other_project(&env);
    env.run(&["add", "-s", "user", "tool", "node"])
        .expect_code(0);
    env.run_in(&other, &["remove", "-s", "user", "tool"])
        .expect_code(0);
    env.run_in(&other, &["add", "-s", "user", "tool", "deno"])
        .expect_code(0);
    let before = env.bytes("home/.claude.json");
    let out = env.run(&["undo", "1"]);
    assert_snapshot!(timeless(&out.to_string()), @r"
    ----- stderr -----
    error: `~/.claude.json` changed since `mcpenv add` wrote it just now (`mcpenv add`, edit 3 in `[ROOT]/other`, changed it just now), in `mcpServers.tool`; undo would lose that change, so nothing was put back

    hint: see what changed in the file; `mcpenv undo --list` lists the edits kept
    [exit status: 1]
    ");
    assert_eq!(env.bytes("home/.claude.json"), before);
}

#[test]
fn an_undo_is_redone_until_the_next_edit() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "a", "node"])
        .expect_code(0);
    let edited = env.bytes("project/.mcp.json");
    env.run(&["undo"]).expect_code(0);
    assert!(!env.project.join(".mcp.json").exists());
    let out = env.run(&["undo", "--redo"]);
    assert_snapshot!(timeless(&out.to_string()), @r"
    ----- stderr -----
    Redoing `mcpenv add` (just now, [TIME]) will:
      put back `.mcp.json`
    Redid `mcpenv add` (just now)
    [exit status: 0]
    ");
    assert_eq!(env.bytes("project/.mcp.json"), edited);
    assert_eq!(env.mode("project/.mcp.json"), 0o600);
    // Redone, the edit is an edit again: undo takes it back.
    let list = env.run(&["undo", "--list"]).expect_code(0);
    assert_snapshot!(list.stdout, @r"
    1  mcpenv add  just now
        created `.mcp.json`
    ");
    env.run(&["undo", "--redo"]).expect_code(1);
    env.run(&["undo"]).expect_code(0);
    assert!(!env.project.join(".mcp.json").exists());

    // An edit made after the undo ends redo.
    env.run(&["add", "-s", "project", "b", "node"])
        .expect_code(0);
    let after_b = env.bytes("project/.mcp.json");
    let out = env.run(&["undo", "--redo"]);
    assert_snapshot!(out, @r"
    ----- stderr -----
    error: `mcpenv add` (edit 3) was made here after the last undo, so there is nothing to redo

    hint: redo takes back an undo until the next edit; `mcpenv undo 2` redoes it anyway, unless a file it puts back changed since
    [exit status: 1]
    ");
    assert_eq!(env.bytes("project/.mcp.json"), after_b);
    // By number it is tried, and refused: `.mcp.json` changed since.
    let out = env.run(&["undo", "2"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr
            .contains("error: `.mcp.json` changed since `mcpenv undo` put back `mcpenv add`"),
        "{out}"
    );
    assert_eq!(env.bytes("project/.mcp.json"), after_b);
}

#[test]
fn a_member_by_member_undo_is_redone_member_by_member() {
    let env = TestEnv::new();
    let other = other_project(&env);
    env.run(&["add", "-s", "local", "mine", "node"])
        .expect_code(0);
    env.run_in(&other, &["add", "-s", "local", "theirs", "deno"])
        .expect_code(0);
    let mine = local_servers(&env, &env.project);
    env.run(&["undo"]).expect_code(0);
    assert_eq!(local_servers(&env, &env.project), Value::Null);
    // The other project edits again, then this one redoes.
    env.run_in(&other, &["add", "-s", "local", "more", "deno"])
        .expect_code(0);
    let theirs = local_servers(&env, &other);
    let out = env.run(&["undo", "--redo"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(local_servers(&env, &env.project), mine);
    assert_eq!(local_servers(&env, &other), theirs);
}

#[test]
fn an_edit_recorded_by_an_older_mcpenv_is_listed_and_taken_back_only_by_number() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "a", "node"])
        .expect_code(0);
    // Rewrite the record as mcpenv wrote it before it kept the project.
    let record = env.root.join("state/mcpenv/undo/000001/edit.json");
    let mut old: Value = serde_json::from_str(&fs::read_to_string(&record).unwrap()).unwrap();
    old["schema_version"] = json!(1);
    old.as_object_mut().unwrap().remove("project");
    for file in old["files"].as_array_mut().unwrap() {
        file.as_object_mut().unwrap().remove("owner");
    }
    fs::write(&record, old.to_string()).unwrap();

    let out = env.run(&["undo"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr
            .contains("error: there is no edit to undo in this project"),
        "{out}"
    );
    assert!(env.project.join(".mcp.json").exists());
    let list = env.run(&["undo", "--list", "--all"]).expect_code(0);
    assert_snapshot!(list.stdout, @r"
    1  mcpenv add  just now  in a project not recorded
        created `.mcp.json`
    ");
    env.run(&["undo", "1"]).expect_code(0);
    assert!(!env.project.join(".mcp.json").exists());
}

#[test]
fn what_claude_code_rewrote_since_stays_when_the_edit_is_undone() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "local", "mine", "node"])
        .expect_code(0);
    // Claude Code accepts the trust dialog, rewriting the whole file.
    env.trust_project();
    let out = env.run(&["undo"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        claude_json(&env),
        json!({"projects": {env.key(): {"hasTrustDialogAccepted": true}}})
    );
}

#[test]
fn a_secret_removed_leaves_no_copy_of_what_an_edit_wrote_into_claude_json() {
    const TOKEN: &str = "ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345";
    let env = TestEnv::new();
    let pasted = format!("GITHUB_TOKEN={TOKEN}");
    env.run(&[
        "add", "-s", "local", "github", "-e", &pasted, "--", "npx", "gh",
    ])
    .expect_code(0);
    env.run(&["extract", "-s", "local"]).expect_code(0);
    let out = env.run(&["secrets", "rm", "GITHUB_TOKEN"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        crate::keychain::files_holding(&env.root, TOKEN),
        Vec::<String>::new(),
        "{out}"
    );
}
