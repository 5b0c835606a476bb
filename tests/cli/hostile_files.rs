//! Promises that hold under hostile input: stale and foreign locks, FIFOs and
//! directories where files should be, a read-only HOME, pathological JSON,
//! empty files and huge `.env` files. Every run here is bounded: a
//! regression fails the test instead of hanging it.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};

/// A token the scanner recognises (GitHub's documented example format).
const TOKEN: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

/// `mcpenv ARGS` in `dir`, killed and failed if it runs longer than `limit`.
fn run_bounded(env: &TestEnv, dir: &Path, args: &[&str], limit: Duration) -> CommandOutput {
    let mut child = env
        .command(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained meanwhile, so a chatty child never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes)
    });
    let err = thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).map(|_| bytes)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`mcpenv {}` still running after {limit:?}", args.join(" "));
        }
        thread::sleep(Duration::from_millis(20));
    };
    let output = std::process::Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    };
    CommandOutput::new(output, &env.root)
}

fn run(env: &TestEnv, args: &[&str]) -> CommandOutput {
    run_bounded(env, &env.project, args, Duration::from_secs(20))
}

fn age(path: &Path, by: Duration) {
    let file = File::open(path).unwrap();
    file.set_modified(SystemTime::now() - by).unwrap();
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

fn lock_of(env: &TestEnv) -> std::path::PathBuf {
    env.home.join(".claude.json.lock")
}

#[test]
fn a_stale_lock_that_is_a_file_is_taken_over() {
    let env = TestEnv::new();
    let lock = lock_of(&env);
    fs::write(&lock, "").unwrap();
    age(&lock, Duration::from_secs(60));
    run(&env, &["add", "-s", "user", "x", "node"]).expect_code(0);
    assert!(!lock.exists(), "the lock was released");
    assert!(env.read("home/.claude.json").contains("\"x\""));
}

#[test]
fn a_stale_lock_directory_that_is_not_empty_is_taken_over() {
    let env = TestEnv::new();
    let lock = lock_of(&env);
    fs::create_dir_all(lock.join("left/over")).unwrap();
    fs::write(lock.join("left/over/file"), "x").unwrap();
    age(&lock, Duration::from_secs(60));
    run(&env, &["add", "-s", "user", "x", "node"]).expect_code(0);
    assert!(!lock.exists());
    let mut names: Vec<String> = fs::read_dir(&env.home)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_unstable();
    assert_eq!(names, [".claude.json"], "nothing left aside");
}

/// An mtime in the future never looks old; the lock is stale once it has
/// not changed for Claude Code's 10 s while mcpenv watched it.
#[test]
fn a_lock_from_the_future_does_not_wedge() {
    let env = TestEnv::new();
    let lock = lock_of(&env);
    fs::create_dir(&lock).unwrap();
    File::open(&lock)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(24 * 3600))
        .unwrap();
    run_bounded(
        &env,
        &env.project,
        &["add", "-s", "user", "x", "node"],
        Duration::from_secs(40),
    )
    .expect_code(0);
    assert!(!lock.exists());
}

/// A lock kept fresh (as a live Claude Code keeps it) is waited for, within
/// a bound, then named in the error with its age and how to remove it.
#[test]
fn a_live_lock_is_waited_for_within_a_bound_then_named() {
    let env = TestEnv::new();
    let lock = lock_of(&env);
    fs::create_dir(&lock).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let renew = {
        let (lock, stop) = (lock.clone(), Arc::clone(&stop));
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = File::open(&lock).and_then(|dir| dir.set_modified(SystemTime::now()));
                thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let out = run_bounded(
        &env,
        &env.project,
        &["add", "-s", "user", "x", "node"],
        Duration::from_secs(40),
    );
    stop.store(true, Ordering::Relaxed);
    renew.join().unwrap();
    let shown = regex::Regex::new(r"modified \d+ s ago")
        .unwrap()
        .replace(&out.to_string(), "modified [N] s ago")
        .into_owned();
    assert_snapshot!(shown, @"
    ----- stderr -----
    error: cannot lock `[ROOT]/home/.claude.json` for editing
      caused by: Claude Code's lock `[ROOT]/home/.claude.json.lock` is still held after 15 s (an empty directory, last modified [N] s ago)

    hint: Claude Code holds this lock while it writes, and keeps it fresh while it lives; try again in a moment
    hint: if no Claude Code is running, the lock is left over: remove it with `rmdir [ROOT]/home/.claude.json.lock`
    [exit status: 1]
    ");
    assert!(lock.is_dir(), "a live lock is never taken");
    assert!(
        !env.home.join(".claude.json").exists(),
        "nothing was written"
    );
}

#[test]
fn a_fifo_env_is_refused_by_every_command_that_reads_it() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &format!(r#"{{"mcpServers": {{"gh": {{"command": "gh-mcp", "env": {{"GITHUB_TOKEN": "{TOKEN}"}}}}}}}}"#),
    );
    mkfifo(&env.project.join(".env"));
    for args in [
        &["check"][..],
        &["env"],
        &["run", "--", "true"],
        &["extract", "--all"],
        &[
            "add",
            "-s",
            "project",
            "x",
            "node",
            "-e",
            &format!("GITHUB_TOKEN={TOKEN}"),
        ],
    ] {
        let out = run(&env, args).expect_code(1);
        assert!(
            out.stderr
                .contains("`[ROOT]/project/.env` is a FIFO, not a regular file"),
            "{args:?}:\n{out}"
        );
    }
    assert_snapshot!(run(&env, &["check"]), @"
    ----- stderr -----
    error: cannot read the `.env` files
      caused by: `[ROOT]/project/.env` is a FIFO, not a regular file

    hint: replace it with a regular file (or remove it); mcpenv never opens a FIFO, socket or device
    [exit status: 1]
    ");
}

#[test]
fn a_fifo_env_local_is_refused_too() {
    let env = TestEnv::new();
    mkfifo(&env.project.join(".env.local"));
    let out = run(&env, &["run", "--", "true"]).expect_code(1);
    assert!(
        out.stderr
            .contains("`[ROOT]/project/.env.local` is a FIFO, not a regular file"),
        "{out}"
    );
}

#[test]
fn a_fifo_or_a_directory_where_mcp_json_goes_is_skipped_on_reads_and_refused_on_writes() {
    let env = TestEnv::new();
    mkfifo(&env.project.join(".mcp.json"));
    assert_snapshot!(run(&env, &["list"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: is a FIFO, not a regular file; Claude Code skips it
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
    assert_snapshot!(run(&env, &["add", "-s", "project", "x", "node"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` is a FIFO, not a regular file

    hint: mcpenv reads only regular files and never opens anything else there: move it away, or put a regular file in its place
    [exit status: 1]
    ");
    fs::remove_file(env.project.join(".mcp.json")).unwrap();
    fs::create_dir(env.project.join(".mcp.json")).unwrap();
    let out = run(&env, &["add", "-s", "project", "x", "node"]).expect_code(1);
    assert!(
        out.stderr
            .contains("`[ROOT]/project/.mcp.json` is a directory, not a regular file"),
        "{out}"
    );
    run(&env, &["scan"]).expect_code(0);
}

/// As Claude Code does, a FIFO `.mcp.json` in an ancestor directory is
/// skipped with a note; the nearer files are still read.
#[test]
fn a_fifo_mcp_json_in_an_ancestor_is_skipped_with_a_note() {
    let env = TestEnv::new();
    mkfifo(&env.project.join(".mcp.json"));
    let sub = env.project.join("sub");
    fs::create_dir(&sub).unwrap();
    fs::write(
        sub.join(".mcp.json"),
        r#"{"mcpServers": {"near": {"command": "node"}}}"#,
    )
    .unwrap();
    let out = run_bounded(&env, &sub, &["list"], Duration::from_secs(20)).expect_code(0);
    assert!(out.stdout.contains("near"), "{out}");
    assert!(
        out.stderr.contains(
            "`[ROOT]/project/.mcp.json`: is a FIFO, not a regular file; Claude Code skips it"
        ),
        "{out}"
    );
}

#[test]
fn a_fifo_claude_json_is_refused() {
    let env = TestEnv::new();
    mkfifo(&env.home.join(".claude.json"));
    let out = run(&env, &["list"]).expect_code(1);
    assert!(
        out.stderr
            .contains("`[ROOT]/home/.claude.json` is a FIFO, not a regular file"),
        "{out}"
    );
    run(&env, &["add", "-s", "user", "x", "node"]).expect_code(1);
}

/// Writing the project's `.mcp.json` does not depend on a writable HOME:
/// mcpenv's lock files move to a private directory in `$TMPDIR`, and it
/// says so. Permission bits do not stop root, so as root the state
/// directory is made impossible another way: a regular file in its place.
#[test]
fn a_read_only_home_does_not_stop_project_writes() {
    let mut env = TestEnv::new();
    let tmp = env.root.join("tmp");
    fs::create_dir(&tmp).unwrap();
    env.set_env("TMPDIR", &tmp);
    let state = env.root.join("state");
    let as_root = nix::unistd::geteuid().is_root();
    if as_root {
        fs::remove_dir(&state).unwrap();
        fs::write(&state, "not a directory").unwrap();
    } else {
        for dir in [&env.home, &state] {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
        }
    }
    let out = run(&env, &["add", "-s", "project", "x", "node"]);
    if !as_root {
        for dir in [&env.home, &state] {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let out = out.expect_code(0);
    let uid = nix::unistd::geteuid().as_raw();
    let reason = if as_root {
        "`[ROOT]/state` is not a directory"
    } else {
        "`[ROOT]/state` is not writable"
    };
    assert_eq!(
        out.stderr.lines().next().unwrap(),
        format!(
            "warning: mcpenv's state directory `[ROOT]/state/mcpenv` cannot be used ({reason}); lock files go to `[ROOT]/tmp/mcpenv-{uid}` instead"
        ),
        "{out}"
    );
    assert!(env.read("project/.mcp.json").contains("\"x\""));
    let fallback = tmp.join(format!("mcpenv-{uid}"));
    assert_eq!(
        fs::metadata(&fallback).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert!(fallback.join("locks").is_dir());
}

fn deep_entry(depth: usize, leaf: &str) -> String {
    format!(
        r#"{{"mcpServers": {{"deep": {{"command": "gh-mcp", "env": {{"GITHUB_TOKEN": "{TOKEN}"}}, "x-meta": {}{leaf}{}}}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// Claude Code loads entries nested far deeper than serde_json's default
/// 128 levels; so does mcpenv, and their secrets are found.
#[test]
fn deeply_nested_entries_are_read_and_scanned() {
    for depth in [200, 10_000] {
        let env = TestEnv::new();
        env.write("project/.mcp.json", &deep_entry(depth, "1"));
        let out = run(&env, &["scan"]).expect_code(1);
        assert!(
            out.stdout.contains("env.GITHUB_TOKEN  github-pat"),
            "{depth}:\n{out}"
        );
        assert!(!out.stderr.contains("not a JSON object"), "{depth}:\n{out}");
        let out = run(&env, &["list"]).expect_code(0);
        // Only the hints on approving the pending server: no warning.
        assert!(
            out.stderr.lines().all(|line| {
                line.starts_with("hint: Claude Code asks before starting")
                    || line.starts_with("hint: `--trust` also records")
            }),
            "{depth}:\n{out}"
        );
        let got = run(&env, &["get", "deep", "--json"]).expect_code(0);
        assert!(got.stdout.contains("gh-mcp"), "{depth}:\n{got}");
        run(&env, &["scan", ".mcp.json"]).expect_code(1);
        // Extract edits the deep file in place.
        run(&env, &["extract"]).expect_code(0);
        assert!(env.read("project/.mcp.json").contains("${GITHUB_TOKEN}"));
    }
}

/// Past mcpenv's bound (20,000 levels) a file is an error naming the entry,
/// never a stack overflow or a hang.
#[test]
fn a_pathologically_deep_entry_is_a_clear_error() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", &deep_entry(100_000, "1"));
    assert_snapshot!(run(&env, &["list"]), @"
    ----- stderr -----
    error: `[ROOT]/project/.mcp.json` is nested more than 20000 levels deep at `/mcpServers/deep`

    hint: mcpenv does not read values nested that deep: make that value shallower by hand
    [exit status: 1]
    ");
    run(&env, &["scan"]).expect_code(1);
    // Deep text mcpenv never reads into a tree is no problem: an edit next
    // to it validates the file without recursion.
    let env = TestEnv::new();
    let deep = format!("{}0{}", "[".repeat(100_000), "]".repeat(100_000));
    env.write("home/.claude.json", &format!(r#"{{"x": {deep}}}"#));
    run(&env, &["add", "-s", "user", "u", "node"]).expect_code(0);
    assert!(env.read("home/.claude.json").contains(&deep));
}

/// `1e400` is beyond f64, and Claude Code reads it (as Infinity): the entry
/// is loaded and scanned, and the file keeps the number as written.
#[test]
fn numbers_beyond_f64_are_kept_and_their_entry_scanned() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", &deep_entry(1, "1e400"));
    let out = run(&env, &["scan"]).expect_code(1);
    assert!(out.stdout.contains("github-pat"), "{out}");
    let got = run(&env, &["get", "deep", "--json"]).expect_code(0).json();
    assert_eq!(got["entry"]["x-meta"].to_string(), "[1e+400]");
    run(&env, &["add", "-s", "project", "other", "node"]).expect_code(0);
    assert!(env.read("project/.mcp.json").contains("[1e400]"));
}

/// Claude Code 2.1.332 reports an empty `~/.claude.json` as corrupted and
/// loads nothing; mcpenv says so too, and never writes over it.
#[test]
fn an_empty_claude_json_is_an_error_and_never_written_over() {
    let env = TestEnv::new();
    env.write("home/.claude.json", " \n");
    assert_snapshot!(run(&env, &["list"]), @"
    ----- stderr -----
    error: `[ROOT]/home/.claude.json` is empty

    hint: Claude Code refuses an empty `.claude.json` too (it reports it as corrupted)
    hint: restore it from Claude Code's backups (`~/.claude/backups/`), or delete it: Claude Code creates a new one when it starts
    [exit status: 1]
    ");
    run(&env, &["add", "-s", "user", "x", "node"]).expect_code(1);
    run(&env, &["add", "x", "node"]).expect_code(1);
    assert_eq!(env.read("home/.claude.json"), " \n");
}

/// Claude Code reads a blank `.mcp.json` as no servers, silently; mcpenv
/// reads it the same with a note, since it will not write over it.
#[test]
fn an_empty_mcp_json_is_read_as_no_servers_with_a_note() {
    let env = TestEnv::new();
    env.write("project/.mcp.json", "");
    assert_snapshot!(run(&env, &["list"]), @"
    ----- stderr -----
    warning: `[ROOT]/project/.mcp.json`: is empty: Claude Code reads it as no servers; mcpenv does not write to it until it holds JSON
    No MCP servers configured
    hint: add one with `mcpenv add NAME -- COMMAND ARGS...`
    [exit status: 0]
    ");
    run(&env, &["add", "-s", "project", "x", "node"]).expect_code(1);
    assert_eq!(env.read("project/.mcp.json"), "");
}

/// Reading `.env` is linear in its size, problems included: 100,000 lines,
/// half of them malformed, load well inside the bound (it took minutes when
/// each problem recounted the lines before it, and `run` compared each name
/// with every name before it).
#[test]
fn a_hundred_thousand_line_env_is_read_in_linear_time() {
    let env = TestEnv::new();
    let mut text = String::new();
    for index in 0..50_000 {
        text.push_str(&format!(
            "VAR_{index}=value{index}\nBAD_{index}=two words\n"
        ));
    }
    env.write("project/.env", &text);
    let out = run_bounded(
        &env,
        &env.project,
        &["run", "--", "printenv", "VAR_49999"],
        Duration::from_secs(60),
    )
    .expect_code(0);
    assert_eq!(out.stdout, "value49999\n");
    assert_eq!(
        out.stderr.lines().count(),
        50_000,
        "one warning per bad line"
    );
    assert!(out.stderr.lines().last().unwrap().contains("line 100000:"));
}
