//! `mcpenv completions SHELL` loads in the real bash, zsh and fish, and
//! completes server names and `.env` variables from the project the shell
//! is in; `mcpenv man` renders with the real `man -l`. Each shell's test
//! skips, saying so, without that shell (`scripts/test` installs zsh and
//! fish on Debian, as root).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::harness::TestEnv;

/// A project with two servers and a `.env` with one variable.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "github": {"command": "npx", "env": {"TOKEN": "${GITHUB_TOKEN}"}},
            "linear": {"type": "http", "url": "https://mcp.linear.app/mcp"}
        }})
        .to_string(),
    );
    env.write("project/.env", "GITHUB_TOKEN=ghp_x\n");
    env
}

/// `program ARGS` in the project with the environment every mcpenv run of
/// `env` gets, so the script's call back to mcpenv reads the test's world.
fn shell(env: &TestEnv, program: &str, args: &[&str], stdin: &str) -> Option<Output> {
    if which::which(program).is_err() {
        eprintln!(
            "skipping: `{program}` is not installed; `scripts/test` installs zsh and fish (Debian, as root)"
        );
        return None;
    }
    let template = env.command(&env.project, &[]);
    let mut command = Command::new(program);
    command.args(args).current_dir(&env.project).env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Some(child.wait_with_output().unwrap())
}

/// mcpenv's stdout, byte for byte (`TestEnv::run` shows the test's root
/// as `[ROOT]`).
fn raw(env: &TestEnv, args: &[&str]) -> Vec<u8> {
    let output = env.command(&env.project, args).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    output.stdout
}

fn script(env: &TestEnv, shell: &str) -> String {
    let path = env.root.join(format!("completions.{shell}"));
    std::fs::write(&path, raw(env, &["completions", shell])).unwrap();
    path.display().to_string()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn bash_loads_the_script_and_completes_server_names() {
    let env = world();
    let path = script(&env, "bash");
    let program = format!(
        "source '{path}'\n\
         complete -p mcpenv\n\
         COMP_WORDS=(mcpenv get '') COMP_CWORD=2 COMP_TYPE=9\n\
         _clap_complete_mcpenv mcpenv '' get\n\
         printf '<%s>\\n' \"${{COMPREPLY[@]}}\"\n\
         COMP_WORDS=(mcpenv secrets rm G) COMP_CWORD=3\n\
         _clap_complete_mcpenv mcpenv G rm\n\
         printf '[%s]\\n' \"${{COMPREPLY[@]}}\"\n"
    );
    let Some(output) = shell(&env, "bash", &["--norc", "-s"], &program) else {
        return;
    };
    let shown = stdout(&output);
    assert!(shown.contains("-F _clap_complete_mcpenv mcpenv"), "{shown}");
    assert!(
        shown.contains("<github>") && shown.contains("<linear>"),
        "{shown}"
    );
    assert!(shown.contains("[GITHUB_TOKEN]"), "{shown}");
}

#[test]
fn zsh_loads_the_script_and_completes_server_names() {
    let env = world();
    let path = script(&env, "zsh");
    let program = format!(
        "autoload -U compinit && compinit -u -D\n\
         source '{path}'\n\
         print -r -- ${{_comps[mcpenv]}}\n"
    );
    let Some(output) = shell(&env, "zsh", &["-f", "-s"], &program) else {
        return;
    };
    let shown = stdout(&output);
    assert!(shown.contains("_clap_dynamic_completer_mcpenv"), "{shown}");
    // The call the registered function makes, as zsh makes it.
    let out = env
        .command(&env.project, &["--", "mcpenv", "probe", ""])
        .env("MCPENV_COMPLETE", "zsh")
        .env("_CLAP_COMPLETE_INDEX", "2")
        .env("_CLAP_IFS", "\n")
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains("github") && answer.contains("linear"),
        "{answer}"
    );
}

#[test]
fn fish_loads_the_script_and_completes_server_names() {
    let env = world();
    let path = script(&env, "fish");
    let program = format!(
        "source '{path}'\n\
         complete -C 'mcpenv share '\n\
         complete -C 'mcpenv extract --to '\n"
    );
    let Some(output) = shell(&env, "fish", &["--no-config"], &program) else {
        return;
    };
    let shown = stdout(&output);
    assert!(shown.contains("github\tproject scope"), "{shown}");
    assert!(shown.contains("linear\tproject scope"), "{shown}");
    assert!(
        shown.contains("keychain"),
        "value enums complete too: {shown}"
    );
}

#[test]
fn the_man_page_renders_with_man() {
    let env = world();
    if which::which("man").is_err() {
        eprintln!("skipping: `man` is not installed");
        return;
    }
    for (args, name, expected) in [
        (&["man"][..], "mcpenv", "mcpenv-secrets(1)"),
        (&["man", "add"][..], "mcpenv-add", "--template"),
        (&["man", "ls"][..], "mcpenv-list", "--scope"),
    ] {
        let page = env.root.join(format!("{name}.1"));
        std::fs::write(&page, raw(&env, args)).unwrap();
        let rendered = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let shown = stdout(&rendered);
        assert!(shown.contains("NAME"), "{shown}");
        assert!(shown.contains(&format!("{name} - ")), "{shown}");
        assert!(shown.contains(expected), "{name}: {shown}");
    }
    let out = env.run(&["man", "ad"]).expect_code(2);
    assert!(out.stderr.contains("did you mean `add`?"), "{out}");
}
