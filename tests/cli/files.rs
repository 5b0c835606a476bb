//! Users' files are sacred: byte preservation, broken files, symlinks,
//! modes, locks and concurrent editors.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Stdio;

use insta::assert_snapshot;

use crate::big_config;
use crate::harness::TestEnv;

#[test]
fn add_then_remove_leaves_a_large_claude_json_byte_identical() {
    let env = TestEnv::new();
    let original = big_config::claude_json(400, 30, &env.key());
    assert!(
        original.len() > 2_000_000,
        "the fixture should be large: {}",
        original.len()
    );
    env.write("home/.claude.json", &original);

    for (scope, name) in [("local", "added-local"), ("user", "added-user")] {
        env.run(&[
            "add", "-s", scope, name, "-e", "K=v", "--", "npx", "-y", "pkg",
        ])
        .expect_code(0);
        let edited = fs::read_to_string(env.home.join(".claude.json")).unwrap();
        assert!(edited.len() > original.len());
        env.run(&["remove", "-s", scope, name]).expect_code(0);
        assert!(
            env.bytes("home/.claude.json") == original.as_bytes(),
            "{scope}: file changed after add + remove"
        );
    }
}

#[test]
fn an_add_changes_only_the_bytes_of_the_new_entry() {
    let env = TestEnv::new();
    let original = big_config::claude_json(40, 3, &env.key());
    env.write("home/.claude.json", &original);
    env.run(&["add", "new", "node"]).expect_code(0);
    let edited = fs::read_to_string(env.home.join(".claude.json")).unwrap();
    let prefix = common_prefix(&original, &edited);
    let suffix = common_prefix(
        &original[prefix..].chars().rev().collect::<String>(),
        &edited[prefix..].chars().rev().collect::<String>(),
    );
    assert_eq!(
        prefix + suffix,
        original.len(),
        "only an insertion happened"
    );
    assert_snapshot!(&edited[prefix..edited.len() - suffix], @r#"
    ,
            "new": {
              "type": "stdio",
              "command": "node",
              "args": [],
              "env": {}
            }
    "#);
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

#[test]
fn unknown_keys_numbers_escapes_and_layout_survive_in_mcp_json() {
    let env = TestEnv::new();
    let original = "{\n    \"$schema\": \"https://example.com/mcp.schema.json\",\n    \"mcpServers\": {\n        \"keep\": {\"command\": \"caf\\u00e9\", \"timeout\": 1e3, \"ratio\": 1.50, \"big\": 12345678901234567890}\n    },\n    \"x-team\": [1, 2]\n}\n";
    env.write("project/.mcp.json", original);
    env.run(&["add", "-s", "project", "new", "node", "server.js"])
        .expect_code(0);
    assert_snapshot!(env.read("project/.mcp.json"), @r#"
    {
        "$schema": "https://example.com/mcp.schema.json",
        "mcpServers": {
            "keep": {"command": "caf\u00e9", "timeout": 1e3, "ratio": 1.50, "big": 12345678901234567890},
            "new": {
                "type": "stdio",
                "command": "node",
                "args": [
                    "server.js"
                ],
                "env": {}
            }
        },
        "x-team": [1, 2]
    }
    "#);
    env.run(&["remove", "-s", "project", "new"]).expect_code(0);
    assert_eq!(env.read("project/.mcp.json"), original);
}

#[test]
fn in_out_tree_edit_of_a_hand_written_mcp_json() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/cases/hand-written-mcp-json");
    let env = TestEnv::new();
    copy_tree(&case.join("in"), &env.root);
    env.run(&[
        "add",
        "-s",
        "project",
        "-t",
        "http",
        "sentry",
        "https://mcp.sentry.dev/mcp",
    ])
    .expect_code(0);
    env.run(&["remove", "-s", "project", "obsolete"])
        .expect_code(0);
    snapbox::Assert::new()
        .action_env("SNAPSHOTS")
        .subset_eq(case.join("out"), &env.root);
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_corrupt_claude_json_is_never_rewritten() {
    let env = TestEnv::new();
    let broken = "{\n  \"numStartups\": 3,\n  \"projects\": {\n    \"/p\": {,}\n  }\n}";
    env.write("home/.claude.json", broken);
    assert_snapshot!(env.run(&["add", "x", "node"]), @"
    ----- stderr -----
    error: failed to parse `[ROOT]/home/.claude.json:4:12`: key must be a string

    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    [exit status: 1]
    ");
    assert_eq!(env.read("home/.claude.json"), broken);
    assert_snapshot!(env.run(&["list"]), @"
    ----- stderr -----
    error: failed to parse `[ROOT]/home/.claude.json:4:12`: key must be a string

    hint: Claude Code stops with a configuration error for this file too; the other scopes are listed all the same
    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    [exit status: 1]
    ");
    assert_eq!(env.read("home/.claude.json"), broken);
}

#[test]
fn a_corrupt_mcp_json_is_never_rewritten() {
    let env = TestEnv::new();
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n";
    env.write("project/.mcp.json", broken);
    assert_snapshot!(env.run(&["add", "-s", "project", "x", "node"]), @"
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:4:3`: trailing comma

    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    [exit status: 1]
    ");
    assert_snapshot!(env.run(&["remove", "-s", "project", "a"]), @"
    ----- stderr -----
    error: failed to parse `[ROOT]/project/.mcp.json:4:3`: trailing comma

    hint: fix the file by hand: mcpenv never rewrites a file it cannot parse
    [exit status: 1]
    ");
    assert_eq!(env.read("project/.mcp.json"), broken);
}

#[test]
fn a_wrongly_shaped_config_is_an_error_naming_the_value() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", r#"{"mcpServers": []}"#);
    assert_snapshot!(env.run(&["add", "-s", "project", "x", "node"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` is malformed: `/mcpServers` is an array, expected an object

    hint: fix that value by hand: mcpenv never rewrites a file it cannot make sense of
    [exit status: 1]
    ");
}

/// Claude Code reads a blank `.mcp.json` as `{}` and writes over it; mcpenv
/// reads it the same (with a note) but will not write over a file that may
/// have been truncated by accident (see `hostile_files` for the rest).
#[test]
fn an_empty_mcp_json_is_read_as_empty_and_never_written_over() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", "  \n");
    assert_snapshot!(env.run(&["add", "-s", "project", "x", "node"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` is empty

    hint: Claude Code reads an empty `.mcp.json` as no servers, but it may be a file truncated by accident, so mcpenv does not write over it: delete it, or write `{}` in it, and run the command again
    [exit status: 1]
    ");
    assert_eq!(env.read("project/.mcp.json"), "  \n");
}

#[test]
fn a_symlinked_claude_json_is_written_through() {
    let env = TestEnv::new();
    let real = env.write("dotfiles/claude.json", "{\n  \"theme\": \"dark\"\n}");
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    symlink("../dotfiles/claude.json", env.home.join(".claude.json")).unwrap();
    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    let link = fs::symlink_metadata(env.home.join(".claude.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_snapshot!(env.read("dotfiles/claude.json"), @r#"
    {
      "theme": "dark",
      "mcpServers": {
        "x": {
          "type": "stdio",
          "command": "node",
          "args": [],
          "env": {}
        }
      }
    }
    "#);
    assert_eq!(env.mode("dotfiles/claude.json"), 0o640);
}

#[test]
fn a_symlinked_mcp_json_is_written_through() {
    let env = TestEnv::new();
    // Inside the repository: one leading out of it is refused (repo_links).
    env.write("project/shared/team.mcp.json", "{\n  \"mcpServers\": {}\n}");
    symlink(
        env.project.join("shared/team.mcp.json"),
        env.project.join(".mcp.json"),
    )
    .unwrap();
    env.run(&["add", "-s", "project", "x", "node"])
        .expect_code(0);
    assert!(
        fs::symlink_metadata(env.project.join(".mcp.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(env.read("project/shared/team.mcp.json").contains("\"x\""));
}

#[test]
fn existing_modes_are_kept_and_new_files_follow_claude() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", "{}");
    fs::set_permissions(
        env.project.join(".mcp.json"),
        fs::Permissions::from_mode(0o664),
    )
    .unwrap();
    env.run(&["add", "-s", "project", "x", "node"])
        .expect_code(0);
    assert_eq!(env.mode("project/.mcp.json"), 0o664);

    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    assert_eq!(env.mode("home/.claude.json"), 0o600);

    let fresh = TestEnv::new();
    fresh
        .run(&["add", "-s", "project", "x", "node"])
        .expect_code(0);
    let umask_applied = fresh.mode("project/.mcp.json");
    assert_eq!(
        umask_applied & !0o644,
        0,
        "a new .mcp.json is at most 0644: {umask_applied:o}"
    );
}

#[test]
fn concurrent_adds_from_many_processes_lose_nothing() {
    let env = TestEnv::new();
    env.write(
        "home/.claude.json",
        &big_config::claude_json(20, 5, &env.key()),
    );
    let children: Vec<_> = (0..16)
        .map(|index| {
            let scope = if index % 2 == 0 { "local" } else { "user" };
            env.command(
                &env.project,
                &["add", "-s", scope, &format!("server-{index}"), "node"],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let mut names: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    let mut expected: Vec<String> = (0..16).map(|index| format!("server-{index}")).collect();
    expected.push("local-db".into());
    expected.push("memory".into());
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert!(
        !env.home.join(".claude.json.lock").exists(),
        "Claude's lock was released"
    );
}

#[test]
fn a_stale_claude_lock_is_taken_over_and_released() {
    let env = TestEnv::new();
    let lock = env.home.join(".claude.json.lock");
    fs::create_dir(&lock).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    fs::File::open(&lock).unwrap().set_modified(old).unwrap();
    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    assert!(!lock.exists());
}

#[test]
fn a_live_claude_lock_is_waited_for() {
    let env = TestEnv::new();
    let lock = env.home.join(".claude.json.lock");
    fs::create_dir(&lock).unwrap();
    let mut child = env
        .command(&env.project, &["add", "-s", "user", "x", "node"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While Claude Code holds its lock, nothing is written.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "mcpenv did not wait for the lock"
    );
    assert!(!env.home.join(".claude.json").exists());
    fs::remove_dir(&lock).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(env.home.join(".claude.json").is_file());
}

#[test]
fn no_temporary_files_are_left_behind() {
    let env = TestEnv::new();
    env.run(&["add", "-s", "project", "x", "node"])
        .expect_code(0);
    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    env.run(&["add", "-s", "project", "x", "node"])
        .expect_code(1);
    let mut names: Vec<String> = fs::read_dir(&env.project)
        .unwrap()
        .chain(fs::read_dir(&env.home).unwrap())
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_unstable();
    assert_eq!(names, [".claude.json", ".git", ".mcp.json"]);
}
