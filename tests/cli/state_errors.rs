//! When mcpenv cannot write its own files (the user's store, the undo
//! journal), the error names the exact file and what was being done to it,
//! never only the folder. CI runs as root, where a read-only mode stops no
//! write, so the failures are made otherwise: a link to nowhere where a
//! folder should be, and a file-size limit (`ulimit -f`, with `SIGXFSZ`
//! ignored, as a full disk fails a write: the same error path, and no
//! symbolic link rule needs bending to reach `/dev/full`).

use std::os::unix::fs::symlink;

use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};
use crate::scan::{PAT, add_user_github_token};

#[test]
fn the_user_store_error_names_the_store_and_its_folder() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    std::fs::create_dir_all(env.home.join(".config")).unwrap();
    symlink(
        env.root.join("nowhere/mcpenv"),
        env.home.join(".config/mcpenv"),
    )
    .unwrap();
    let out = env.run(&["extract", "-s", "user"]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: cannot create the folder `[ROOT]/home/.config/mcpenv` for `[ROOT]/home/.config/mcpenv/.env`
      caused by: File exists (os error 17)

    hint: make `[ROOT]/home/.config/mcpenv` a folder mcpenv can write (move away what is there), then run the command again; nothing in the configs was changed
    [exit status: 1]
    ");
    // Nothing was written anywhere.
    assert!(!env.root.join("nowhere").exists());
    assert!(env.read("home/.claude.json").contains(PAT));
}

/// `mcpenv ARGS` with files limited to `kib` KiB, as a nearly full disk
/// would leave room for.
fn run_with_file_limit(env: &TestEnv, kib: u32, args: &[&str]) -> CommandOutput {
    let command = env.command(&env.project, args);
    let script = format!("ulimit -f {kib}; trap '' XFSZ; exec \"$0\" \"$@\"");
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(command.get_program())
        .args(command.get_args())
        .current_dir(&env.project)
        .env_clear()
        .envs(
            command
                .get_envs()
                .filter_map(|(key, value)| Some((key.to_owned(), value?.to_owned()))),
        )
        .output()
        .unwrap();
    CommandOutput::new(output, &env.root)
}

#[test]
fn the_undo_copy_of_a_large_file_is_its_old_inode_and_needs_no_room() {
    let env = TestEnv::new();
    let long = "a".repeat(40 * 1024);
    env.run(&["add", "big", "--", "npx", &long]).expect_code(0);
    let before = env.read("home/.claude.json");
    // The same limit as below: the copy is a link, not 40 KiB written.
    let out = run_with_file_limit(&env, 16, &["remove", "big"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Removed MCP server `big` from local scope
    Wrote `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    [exit status: 0]
    ");
    env.run(&["undo"]).expect_code(0);
    assert_eq!(env.read("home/.claude.json"), before);
}

#[test]
fn an_undo_copy_that_cannot_be_written_is_named_exactly() {
    let env = TestEnv::new();
    let long = "a".repeat(40 * 1024);
    env.run(&["add", "big", "--", "npx", &long]).expect_code(0);
    // A second name for the file: its old inode cannot just be linked into
    // the journal (it stays another file's), so the copy is written. The
    // edit (a small file) fits; the copy of the large file before it does
    // not.
    std::fs::hard_link(env.home.join(".claude.json"), env.root.join("second-name")).unwrap();
    let out = run_with_file_limit(&env, 16, &["remove", "big"]);
    assert_snapshot!(out, @"
    ----- stderr -----
    Removed MCP server `big` from local scope
    Wrote `[ROOT]/home/.claude.json` (project `[ROOT]/project`)
    warning: mcpenv could not keep a copy of `[ROOT]/home/.claude.json` for `mcpenv undo`: cannot write `[ROOT]/state/mcpenv/undo/000002/0.before`: File too large (os error 27)
    hint: the edit itself was made; only `mcpenv undo` cannot take it back
    [exit status: 0]
    ");
}
