//! `serve`'s writes and the edit session: a tool's preview is its write
//! run against a preview session, so it creates nothing anywhere; a write
//! the person agreed to is kept in the undo journal like a CLI edit, and
//! `mcpenv undo` puts every file back byte for byte.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use rmcp::model::ElicitationAction;
use serde_json::json;

use crate::harness::TestEnv;
use crate::serve_gate::{call, connect, snapshot, structured, text, world};

/// Every folder and file under the test's root (HOME, the project, the
/// state folder, …), each file with its mode and bytes: what "nothing was
/// created" compares.
fn tree(env: &TestEnv) -> BTreeMap<PathBuf, Option<(u32, Vec<u8>)>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![env.root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let metadata = fs::symlink_metadata(&path).unwrap();
            if metadata.is_dir() {
                found.insert(path.clone(), None);
                pending.push(path);
            } else {
                let bytes = fs::read(&path).unwrap_or_default();
                found.insert(path, Some((metadata.permissions().mode(), bytes)));
            }
        }
    }
    found
}

const ADD_GH: &str = "gh";

fn add_arguments() -> serde_json::Value {
    json!({"name": ADD_GH, "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env_variables": ["GITHUB_PERSONAL_ACCESS_TOKEN"]})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_serve_preview_creates_no_file_folder_or_lock_anywhere() {
    let env = world();
    let (session, person) = connect(&env, Some(ElicitationAction::Decline)).await;
    // Whatever serving itself sets up happens before the tree is taken.
    let listed = call(&session, "list_servers", json!({})).await;
    assert_eq!(listed.is_error, Some(false), "{}", text(&listed));
    let before = tree(&env);
    for (tool, arguments) in [
        ("share_server", json!({"name": "mine"})),
        ("add_server", add_arguments()),
        (
            "add_server",
            json!({"name": "docs", "scope": "user", "template": "github"}),
        ),
    ] {
        let result = call(&session, tool, arguments).await;
        assert_eq!(
            structured(&result)["status"],
            "declined",
            "{}",
            text(&result)
        );
        assert_eq!(tree(&env), before, "{tool}: its preview changed the tree");
    }
    let shown = person.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 3, "each was previewed and asked about");
    assert!(shown[0].contains("+++ b/.mcp.json"), "{}", shown[0]);
    assert!(shown[0].contains("+++ b/.env"), "{}", shown[0]);
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_writes_are_kept_for_undo_and_put_back_byte_for_byte() {
    let env = world();
    let before = snapshot(&env);
    let (session, _) = connect(&env, Some(ElicitationAction::Accept)).await;
    let added = call(&session, "add_server", add_arguments()).await;
    assert_eq!(structured(&added)["status"], "written", "{}", text(&added));
    let after_add = snapshot(&env);
    let shared = call(&session, "share_server", json!({"name": "mine"})).await;
    assert_eq!(
        structured(&shared)["status"],
        "written",
        "{}",
        text(&shared)
    );
    assert_ne!(snapshot(&env), after_add);
    session.cancel().await.unwrap();

    let list = env.run(&["undo", "--list"]);
    assert_eq!(list.code, 0, "{list}");
    let listed = list.stdout.clone();
    let share_at = listed.find("mcpenv serve share_server").expect(&listed);
    let add_at = listed.find("mcpenv serve add_server").expect(&listed);
    assert!(share_at < add_at, "the newest first: {listed}");
    assert!(listed.contains("`.mcp.json`"), "{listed}");
    assert!(listed.contains("`.env`"), "{listed}");

    let undone = env.run(&["undo"]);
    assert_eq!(undone.code, 0, "{undone}");
    assert!(
        undone.stderr.contains("Undid `mcpenv serve share_server`"),
        "{undone}"
    );
    assert_eq!(snapshot(&env), after_add, "{undone}");
    let undone = env.run(&["undo"]);
    assert_eq!(undone.code, 0, "{undone}");
    assert!(
        undone.stderr.contains("Undid `mcpenv serve add_server`"),
        "{undone}"
    );
    assert_eq!(snapshot(&env), before, "{undone}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cli_edit_then_a_serve_edit_are_both_undone_in_turn() {
    let env = world();
    let before = snapshot(&env);
    let out = env.run(&["add", "-s", "project", "docs", "--", "npx", "docs-server"]);
    assert_eq!(out.code, 0, "{out}");
    let after_cli = snapshot(&env);
    assert_ne!(after_cli, before);

    let (session, _) = connect(&env, Some(ElicitationAction::Accept)).await;
    let shared = call(&session, "share_server", json!({"name": "mine"})).await;
    assert_eq!(
        structured(&shared)["status"],
        "written",
        "{}",
        text(&shared)
    );
    session.cancel().await.unwrap();

    let undone = env.run(&["undo"]);
    assert_eq!(undone.code, 0, "{undone}");
    assert_eq!(snapshot(&env), after_cli, "{undone}");
    let undone = env.run(&["undo"]);
    assert_eq!(undone.code, 0, "{undone}");
    assert!(undone.stderr.contains("Undid `mcpenv add`"), "{undone}");
    assert_eq!(snapshot(&env), before, "{undone}");
}
