//! Which settings `env` feeds `${VAR}` in each way of starting Claude Code
//! 2.1.332 (interactive `claude`, `claude -p`, `claude mcp list`), seen
//! from the arguments and environment a stdio server really gets; and that
//! `mcpenv check` describes it the same way. Skipped, saying so, without
//! the pinned Claude Code.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::claude::{claude, claude_command};
use crate::harness::TestEnv;

/// What one start of the recording server got.
#[derive(Debug, PartialEq, Eq)]
pub struct Started {
    /// Its arguments.
    pub args: Vec<String>,
    /// `NAME=value` (or `NAME=(unset)`) of each recorded variable.
    pub env: Vec<String>,
}

/// A stdio "server" that writes its arguments and the variables `names` to
/// `record`, then exits (Claude Code reports a failed connection, which
/// does not matter here).
pub fn recording_server(env: &TestEnv, record: &Path, names: &[&str]) -> String {
    let script = env.write(
        "bin/record.sh",
        &format!(
            r#"#!/bin/sh
{{
  for a in "$@"; do printf 'arg %s\n' "$a"; done
  for n in {}; do
    eval "v=\${{$n-(unset)}}"
    printf 'env %s=%s\n' "$n" "$v"
  done
  echo end
}} >> '{}'
"#,
            names.join(" "),
            record.display()
        ),
    );
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// The first start recorded, once it is complete.
pub fn first_start(record: &Path, wait: Duration) -> Option<Started> {
    let deadline = Instant::now() + wait;
    loop {
        let text = fs::read_to_string(record).unwrap_or_default();
        if let Some(first) = text
            .split("end\n")
            .next()
            .filter(|_| text.contains("end\n"))
        {
            let mut started = Started {
                args: Vec::new(),
                env: Vec::new(),
            };
            for line in first.lines() {
                match line.split_once(' ') {
                    Some(("arg", arg)) => started.args.push(arg.to_string()),
                    Some(("env", pair)) => started.env.push(pair.to_string()),
                    _ => {}
                }
            }
            return Some(started);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_string()).collect()
}

#[test]
fn project_settings_env_feeds_placeholders_in_interactive_sessions_only() {
    let env = TestEnv::new();
    let record = env.root.join("record.txt");
    let server = recording_server(
        &env,
        &record,
        &["FROM_LOCAL", "FROM_USER", "FROM_PROJECT", "INHERITED"],
    );
    let key = env.key();
    env.write(
        "home/.claude.json",
        &serde_json::json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "mcpServers": {"rec": {"type": "stdio", "command": server, "args": [
                "local=${FROM_LOCAL}", "user=${FROM_USER}", "project=${FROM_PROJECT}", "inherited=${INHERITED}"
            ]}},
            "projects": {key: {"hasTrustDialogAccepted": true}},
        })
        .to_string(),
    );
    env.write(
        "home/.claude/settings.json",
        r#"{"env": {"FROM_USER": "user-value"}}"#,
    );
    env.write(
        "project/.claude/settings.json",
        r#"{"env": {"FROM_PROJECT": "project-value"}}"#,
    );
    // A settings value that is itself a placeholder.
    env.write(
        "project/.claude/settings.local.json",
        r#"{"env": {"FROM_LOCAL": "local-value", "INHERITED": "${INHERITED}"}}"#,
    );

    // mcpenv's account of it, whether or not Claude Code is here.
    let out = env.run(&["check", "--json"]);
    let variables = out.json()["variables"].clone();
    let interactive_only: Vec<(String, bool)> = variables
        .as_array()
        .unwrap()
        .iter()
        .map(|variable| {
            (
                variable["name"].as_str().unwrap().to_string(),
                variable["interactive_only"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        interactive_only,
        [
            ("FROM_LOCAL".to_string(), true),
            ("FROM_USER".to_string(), false),
            ("FROM_PROJECT".to_string(), true),
            ("INHERITED".to_string(), true),
        ],
        "{out}"
    );

    if claude().is_none() {
        claude_command(&env, &env.project, &[]);
        return;
    }
    let run = |args: &[&str]| {
        let _ = fs::remove_file(&record);
        let status = claude_command(&env, &env.project, args)
            .unwrap()
            .env("INHERITED", "inherited-value")
            .output()
            .unwrap();
        let started = first_start(&record, Duration::from_secs(1));
        assert!(
            started.is_some(),
            "`claude {args:?}` started nothing: {status:?}"
        );
        started.unwrap()
    };

    // `claude mcp list`: only the user's settings (and the environment)
    // expand placeholders; the project's settings are not applied at all.
    assert_eq!(
        run(&["mcp", "list"]),
        Started {
            args: strings(&[
                "local=${FROM_LOCAL}",
                "user=user-value",
                "project=${FROM_PROJECT}",
                "inherited=inherited-value"
            ]),
            env: strings(&[
                "FROM_LOCAL=(unset)",
                "FROM_USER=user-value",
                "FROM_PROJECT=(unset)",
                "INHERITED=inherited-value"
            ]),
        }
    );
    // `claude -p` starts MCP servers before it finds out it is not logged
    // in, so this needs no network. The same expansion; the project's
    // values reach the child's environment only, and the literal
    // `${INHERITED}` of the local settings replaces the inherited value.
    assert_eq!(
        run(&["-p", "hello"]),
        Started {
            args: strings(&[
                "local=${FROM_LOCAL}",
                "user=user-value",
                "project=${FROM_PROJECT}",
                "inherited=inherited-value"
            ]),
            env: strings(&[
                "FROM_LOCAL=local-value",
                "FROM_USER=user-value",
                "FROM_PROJECT=project-value",
                "INHERITED=${INHERITED}"
            ]),
        }
    );

    // Interactive, on a terminal: every settings file feeds placeholders,
    // and a settings value beats the environment, even a literal one.
    let _ = fs::remove_file(&record);
    let command = claude_command(&env, &env.project, &[]).unwrap();
    let mut command = rexpect_command(command);
    command
        .env("INHERITED", "inherited-value")
        .env("TERM", "xterm");
    let session = rexpect::session::spawn_with_options(
        command,
        rexpect::reader::Options::new().timeout_ms(Some(30_000)),
    )
    .unwrap();
    let started = first_start(&record, Duration::from_secs(30));
    drop(session);
    assert_eq!(
        started.expect("interactive `claude` started the server"),
        Started {
            args: strings(&[
                "local=local-value",
                "user=user-value",
                "project=project-value",
                "inherited=${INHERITED}"
            ]),
            env: strings(&[
                "FROM_LOCAL=local-value",
                "FROM_USER=user-value",
                "FROM_PROJECT=project-value",
                "INHERITED=${INHERITED}"
            ]),
        }
    );
}

/// The same command without its closed stdin (rexpect gives it the pty).
fn rexpect_command(command: std::process::Command) -> std::process::Command {
    let mut fresh = std::process::Command::new(command.get_program());
    fresh.args(command.get_args()).env_clear();
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            fresh.env(key, value);
        }
    }
    if let Some(dir) = command.get_current_dir() {
        fresh.current_dir(dir);
    }
    fresh
}
