//! `scan DIR` walks a repository's folders, and a repository's symbolic
//! links are its own text: no link is followed twice, a loop is reported
//! once and not followed, and no link leads the walk out of the folder
//! scanned (to `~/.claude.json`, `~/.ssh`), whatever it points to.

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use insta::assert_snapshot;

use crate::harness::TestEnv;
use crate::scan::{PAT, STRIPE, add_user_github_token};

#[test]
fn links_in_circles_are_reported_once_and_never_walked() {
    let env = TestEnv::new();
    env.write(
        "project/configs/cursor.json",
        &format!(r#"{{"mcpServers": {{"stripe": {{"command": "npx", "args": ["--api-key={STRIPE}"]}}}}}}"#),
    );
    // Three links to the folder they are in, one to its parent, and two
    // more ways into the same folder: without a check the walk never ends
    // (each level multiplies the paths by six).
    for name in ["a", "b", "c"] {
        symlink(".", env.project.join(name)).unwrap();
    }
    symlink("..", env.project.join("configs/up")).unwrap();
    symlink("configs", env.project.join("same")).unwrap();
    symlink("configs/cursor.json", env.project.join("again.json")).unwrap();
    let started = Instant::now();
    let out = env.run(&["scan", "."]);
    assert!(started.elapsed() < Duration::from_secs(20), "{out}");
    out.assert_no_secret(&[STRIPE]);
    assert_snapshot!(out, @"
    FILE        SCOPE        SERVER  FIELD    RULE        VALUE
    again.json  claude-code  stripe  args[0]  stripe-key  sk_l…c8Yd
    ----- stderr -----
    warning: `[ROOT]/project/a`: a symbolic link to `[ROOT]/project`, a folder it is in: a loop, not followed
    warning: `[ROOT]/project/b`: a symbolic link to `[ROOT]/project`, a folder it is in: a loop, not followed
    warning: `[ROOT]/project/c`: a symbolic link to `[ROOT]/project`, a folder it is in: a loop, not followed
    warning: `[ROOT]/project/configs/up`: a symbolic link to `[ROOT]/project`, a folder it is in: a loop, not followed
    Found 1 literal secret in 1 of 1 file: 1 in Claude Code
    hint: in `again.json` (Claude Code): write `${NAME}` in place of each value and keep the value in `.env`
    [exit status: 1]
    ");
}

#[test]
fn links_out_of_the_scanned_folder_are_never_read() {
    let env = TestEnv::new();
    add_user_github_token(&env);
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    env.write(
        "home/.ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n",
    );
    // A file and a folder of the home folder, linked from the repository.
    symlink(
        env.home.join(".claude.json"),
        env.project.join("settings.json"),
    )
    .unwrap();
    symlink(env.home.join(".ssh/id_rsa"), env.project.join("key.json")).unwrap();
    symlink(env.home.join(".ssh"), env.project.join("ssh")).unwrap();
    symlink(&env.home, env.project.join("home")).unwrap();
    let strace = crate::scan::opened_files(&env, &["scan", "."]);
    let out = env.run(&["scan", "."]);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out, @"
    ----- stderr -----
    warning: `[ROOT]/project/home`: a symbolic link to `[ROOT]/home`, outside `[ROOT]/project`: not followed
    warning: `[ROOT]/project/key.json`: a symbolic link to `[ROOT]/home/.ssh/id_rsa`, outside `[ROOT]/project`: not followed
    warning: `[ROOT]/project/settings.json`: a symbolic link to `[ROOT]/home/.claude.json`, outside `[ROOT]/project`: not followed
    warning: `[ROOT]/project/ssh`: a symbolic link to `[ROOT]/home/.ssh`, outside `[ROOT]/project`: not followed
    No literal secrets found in 0 files
    [exit status: 0]
    ");
    // A file named on the command line is read only inside its folder too.
    assert_snapshot!(env.run(&["scan", "settings.json"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/settings.json`: a symbolic link to `[ROOT]/home/.claude.json`, outside `[ROOT]/project`: not followed
    No literal secrets found in 0 files
    [exit status: 0]
    ");
    // Nothing of the home folder was even opened.
    if let Some((out, opened)) = strace {
        let home = env.home.display().to_string();
        let private: Vec<&String> = opened
            .iter()
            .filter(|path| path.starts_with(&home))
            .collect();
        assert!(private.is_empty(), "opened {private:?}:\n{out}");
    }
}
