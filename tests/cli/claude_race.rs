//! mcpenv and Claude Code writing `~/.claude.json` at the same time: each
//! takes Claude Code's lock, and mcpenv checks its edit once more after the
//! rename, so it never claims an edit that another program threw away.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use serde_json::Value;

use crate::claude::{PINNED_CLAUDE_CODE, claude};
use crate::harness::TestEnv;

/// `claude ARGS` started hermetically in the project, as the cross-checks
/// run it.
fn spawn_claude(env: &TestEnv, claude: &Path, args: &[&str]) -> Child {
    crate::claude::hermetic_claude(claude, env, &env.project, args)
        .env("MCP_TIMEOUT", "2000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The names of the servers of one scope in `~/.claude.json` (through a
/// symbolic link, if it is one); empty when the file does not parse.
fn names(env: &TestEnv, scope: &str) -> BTreeSet<String> {
    let text = fs::read_to_string(env.home.join(".claude.json")).unwrap_or_default();
    let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let servers = match scope {
        "local" => &value["projects"][env.key()]["mcpServers"],
        _ => &value["mcpServers"],
    };
    servers
        .as_object()
        .map(|servers| servers.keys().cloned().collect())
        .unwrap_or_default()
}

/// What the race saw.
#[derive(Debug, Default)]
struct Tally {
    rounds: usize,
    mcpenv_writes: usize,
    mcpenv_succeeded: usize,
    mcpenv_reported_lost: usize,
    mcpenv_other_failures: usize,
    claude_writes: usize,
    claude_failed: usize,
    claude_dropped_mcpenv_edits: usize,
    mcpenv_dropped_claude_edits: usize,
}

/// Tiny xorshift for the pauses between writes.
fn pause(state: &mut u64) -> Duration {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    Duration::from_millis(*state % 40)
}

#[test]
fn mcpenv_racing_claude_code_never_claims_an_edit_that_is_gone() {
    let Some(claude) = claude() else {
        crate::skips::skip(&format!(
            "Claude Code {PINNED_CLAUDE_CODE} is not installed in target/tools; `scripts/test` installs it (needs npm)"
        ));
        return;
    };
    // A plain `~/.claude.json`, and one that is a link into dotfiles
    // (where both programs must still take the same lock).
    let plain = TestEnv::new();
    let linked = TestEnv::new();
    linked.write("dotfiles/claude.json", "{}");
    symlink(
        linked.root.join("dotfiles/claude.json"),
        linked.home.join(".claude.json"),
    )
    .unwrap();
    for env in [&plain, &linked] {
        // Claude Code's first-run keys, written once before the race.
        let status = spawn_claude(env, &claude, &["mcp", "list"]).wait().unwrap();
        assert!(status.success());
    }

    let mut tally = Tally::default();
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    let started = Instant::now();
    for round in 0..12 {
        if started.elapsed() > Duration::from_secs(35) {
            break;
        }
        let env = if round % 2 == 0 { &plain } else { &linked };
        tally.rounds += 1;
        let claude_adds = [
            ("local", format!("claude-{round}-local")),
            ("user", format!("claude-{round}-user")),
        ];
        let mut children: Vec<Child> = claude_adds
            .iter()
            .map(|(scope, name)| {
                spawn_claude(
                    env,
                    &claude,
                    &["mcp", "add", "-s", scope, name, "--", "/nonexistent/claude"],
                )
            })
            .collect();
        children.push(spawn_claude(env, &claude, &["mcp", "list"]));

        // mcpenv adds and removes servers while Claude Code runs.
        let mut believed: BTreeSet<(String, String)> = BTreeSet::new();
        let mut removed: BTreeSet<(String, String)> = BTreeSet::new();
        let mut index = 0;
        while children
            .iter_mut()
            .any(|child| child.try_wait().unwrap().is_none())
        {
            let scope = if index % 2 == 0 { "local" } else { "user" };
            let name = format!("mcpenv-{round}-{index}");
            let out = env.run(&["add", "-s", scope, &name, "--", "/nonexistent/mcpenv"]);
            tally.mcpenv_writes += 1;
            let key = (scope.to_string(), name.clone());
            match out.code {
                0 => {
                    tally.mcpenv_succeeded += 1;
                    assert!(
                        names(env, scope).contains(&name),
                        "mcpenv said it added `{name}` ({scope}), but right after it is not there:\n{out}"
                    );
                    believed.insert(key.clone());
                }
                _ if out.stderr.contains("was replaced by another program") => {
                    tally.mcpenv_reported_lost += 1;
                }
                _ => {
                    tally.mcpenv_other_failures += 1;
                    eprintln!("mcpenv add failed during the race:\n{out}");
                }
            }
            // Every other write removes the server added before it.
            if index % 3 == 2 && believed.contains(&key) {
                let out = env.run(&["remove", "-s", scope, &name]);
                tally.mcpenv_writes += 1;
                match out.code {
                    0 => {
                        tally.mcpenv_succeeded += 1;
                        assert!(
                            !names(env, scope).contains(&name),
                            "mcpenv said it removed `{name}` ({scope}), but right after it is still there:\n{out}"
                        );
                        believed.remove(&key);
                        removed.insert(key);
                    }
                    _ if out.stderr.contains("was replaced by another program") => {
                        tally.mcpenv_reported_lost += 1;
                    }
                    _ => {
                        tally.mcpenv_other_failures += 1;
                        eprintln!("mcpenv remove failed during the race:\n{out}");
                    }
                }
            }
            index += 1;
            std::thread::sleep(pause(&mut random));
        }

        // Once everyone is done: whose edits survived?
        for (child, (scope, name)) in children.iter_mut().zip(&claude_adds) {
            tally.claude_writes += 1;
            if child.wait().unwrap().success() {
                if !names(env, scope).contains(name) {
                    tally.mcpenv_dropped_claude_edits += 1;
                }
            } else {
                tally.claude_failed += 1;
            }
        }
        let _ = children.last_mut().unwrap().wait();
        for (scope, name) in &believed {
            if !names(env, scope).contains(name) {
                tally.claude_dropped_mcpenv_edits += 1;
            }
        }
        for (scope, name) in &removed {
            if names(env, scope).contains(name) {
                tally.claude_dropped_mcpenv_edits += 1;
            }
        }
    }
    eprintln!(
        "{} rounds against Claude Code {PINNED_CLAUDE_CODE} in {:.1} s: mcpenv {} writes, {} succeeded (each present right after), {} reported lost, {} failed otherwise; Claude Code {} adds, {} failed; edits dropped later: {} of mcpenv's by Claude Code, {} of Claude Code's by mcpenv",
        tally.rounds,
        started.elapsed().as_secs_f64(),
        tally.mcpenv_writes,
        tally.mcpenv_succeeded,
        tally.mcpenv_reported_lost,
        tally.mcpenv_other_failures,
        tally.claude_writes,
        tally.claude_failed,
        tally.claude_dropped_mcpenv_edits,
        tally.mcpenv_dropped_claude_edits,
    );
    assert!(tally.mcpenv_succeeded > 0, "{tally:?}");
}

#[test]
fn a_symlinked_claude_json_is_locked_where_claude_code_locks_it() {
    let env = TestEnv::new();
    env.write("dotfiles/claude.json", "{}");
    symlink("../dotfiles/claude.json", env.home.join(".claude.json")).unwrap();
    // Claude Code locks `~/.claude.json.lock`, not the link's target.
    let lock = env.home.join(".claude.json.lock");
    fs::create_dir(&lock).unwrap();
    let mut child = env
        .command(&env.project, &["add", "-s", "user", "x", "node"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "mcpenv did not wait for Claude Code's lock"
    );
    assert_eq!(env.read("dotfiles/claude.json"), "{}");
    fs::remove_dir(&lock).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(env.read("dotfiles/claude.json").contains("\"x\""));
    assert!(!lock.exists());
}

/// A program that ignores the lock: as soon as mcpenv has renamed its new
/// `~/.claude.json` into place, it renames the copy it made before over it.
#[test]
fn an_edit_thrown_away_by_a_writer_ignoring_the_lock_is_reported() {
    // `strace` holds mcpenv for half a second right after its rename, so
    // the other writer is sure to come in between rename and check.
    let Ok(strace) = which::which("strace") else {
        crate::skips::skip("`strace` is not installed");
        return;
    };
    let env = TestEnv::new();
    let original = "{\n  \"numStartups\": 3\n}";
    env.write("home/.claude.json", original);
    let stale = env.write("stale.json", original);
    let target = env.home.join(".claude.json");
    let inode = fs::metadata(&target).unwrap().ino();
    let done = AtomicBool::new(false);
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if fs::metadata(&target).is_ok_and(|metadata| metadata.ino() != inode) {
                    fs::rename(&stale, &target).unwrap();
                    return;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let mcpenv = env.command(&env.project, &["add", "-s", "user", "x", "node"]);
        let mut command = Command::new(&strace);
        command.env_clear();
        for (key, value) in mcpenv.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        let output = command
            .current_dir(&env.project)
            .stdin(Stdio::null())
            .args([
                "-f",
                "-o",
                "/dev/null",
                "-e",
                "trace=rename,renameat,renameat2",
            ])
            .args(["-e", "inject=rename,renameat,renameat2:delay_exit=500000"])
            .arg(mcpenv.get_program())
            .args(mcpenv.get_args())
            .output()
            .unwrap();
        done.store(true, Ordering::Relaxed);
        crate::harness::CommandOutput::new(output, &env.root)
    });
    assert_snapshot!(out, @"
    ----- stderr -----
    error: `[ROOT]/home/.claude.json` was replaced by another program right after mcpenv wrote it, and mcpenv's change is not in it

    hint: another program (a running Claude Code?) saved a copy it had read before mcpenv's change; run the same command again
    [exit status: 1]
    ");
    assert_eq!(env.read("home/.claude.json"), original);
    // Run again, alone, it works.
    env.run(&["add", "-s", "user", "x", "node"]).expect_code(0);
    assert!(env.read("home/.claude.json").contains("\"x\""));
}
