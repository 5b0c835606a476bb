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
        crate::skips::skip(&format!(
            "`{program}` is not installed; `scripts/test` installs zsh and fish (Debian, as root)"
        ));
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
        crate::skips::skip("`man` is not installed");
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

/// A repository whose server names try to run a command, glob to a file
/// it ships, or reach the terminal as escape sequences.
fn hostile_world() -> TestEnv {
    let env = TestEnv::new();
    let servers: serde_json::Map<String, serde_json::Value> = HOSTILE_NAMES
        .iter()
        .chain(&UNSAFE_NAMES)
        .map(|name| ((*name).to_owned(), json!({"command": "true"})))
        .collect();
    env.write(
        "project/.mcp.json",
        &json!({ "mcpServers": servers }).to_string(),
    );
    // What `star*` globs to, unquoted; `star\*` too, unless globbing is
    // off when bash reads the candidates.
    env.write("project/star*", "");
    env.write("project/star*x", "");
    env
}

/// Names offered, each completed to exactly itself.
const HOSTILE_NAMES: [&str; 5] = [
    "gh$(touch PWNED)",
    "it's `touch PWNED`",
    "star*",
    "a;b",
    "~x",
];
/// Names never offered: they hold an escape sequence, a line break or a
/// right-to-left override.
const UNSAFE_NAMES: [&str; 3] = ["esc\u{1b}]0;owned\u{7}", "two\nlines", "bidi\u{202e}txt"];

#[test]
fn bash_completes_hostile_names_as_one_literal_argument_and_runs_nothing() {
    let env = hostile_world();
    let path = script(&env, "bash");
    // Each candidate is put where the word was and the line is run, as
    // pressing Enter would.
    let program = format!(
        "source '{path}'\n\
         COMP_WORDS=(mcpenv get '') COMP_CWORD=2 COMP_TYPE=9\n\
         _clap_complete_mcpenv mcpenv '' get\n\
         for word in \"${{COMPREPLY[@]}}\"; do\n\
           case $word in -*) continue;; esac\n\
           printf 'inserted: %s\\n' \"$word\"\n\
           eval \"printf 'argument: <%s>\\\\n' $word\"\n\
         done\n\
         COMP_WORDS=(mcpenv get gh) COMP_CWORD=2\n\
         _clap_complete_mcpenv mcpenv gh get\n\
         printf 'after gh: %s\\n' \"${{COMPREPLY[@]}}\"\n"
    );
    let Some(output) = shell(&env, "bash", &["--norc", "-s"], &program) else {
        return;
    };
    insta::assert_snapshot!(stdout(&output), @r"
    inserted: gh\$\(touch\ PWNED\)
    argument: <gh$(touch PWNED)>
    inserted: it\'s\ \`touch\ PWNED\`
    argument: <it's `touch PWNED`>
    inserted: star\*
    argument: <star*>
    inserted: a\;b
    argument: <a;b>
    inserted: \~x
    argument: <~x>
    after gh: gh\$\(touch\ PWNED\)
    ");
    assert!(
        !env.project.join("PWNED").exists(),
        "a completed name ran a command"
    );
}

/// Starts `program` interactively under tmux in the project, runs `setup`
/// (which defines a function `mcpenv` that appends its arguments to
/// `args.txt` and then creates `ready`), types each of `typed` followed
/// by Tab and Enter, and returns what the function received: what the
/// shell inserted, as the shell then read it. `None` without tmux or the
/// shell.
fn complete_interactively(
    env: &TestEnv,
    program: &[&str],
    setup: &str,
    typed: &[&str],
) -> Option<Vec<String>> {
    for needed in ["tmux", program[0]] {
        if which::which(needed).is_err() {
            crate::skips::skip(&format!(
                "`{needed}` is not installed; `scripts/test` installs it (Debian, as root)"
            ));
            return None;
        }
    }
    let socket = env.root.join("tmux.sock");
    let tmux = |args: &[&str]| {
        let template = env.command(&env.project, &[]);
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&socket).args(args).env_clear();
        for (key, value) in template.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        let output = command
            .env("TERM", "xterm-256color")
            .current_dir(&env.project)
            .output()
            .unwrap();
        assert!(output.status.success(), "tmux {args:?}: {output:?}");
        output
    };
    let setup_file = env.root.join("setup");
    std::fs::write(&setup_file, setup).unwrap();
    let mut start = vec!["new-session", "-d", "-x", "200", "-y", "50", "--"];
    start.extend_from_slice(program);
    tmux(&start);
    let wait_for = |what: &dyn Fn() -> bool, waiting: &str| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !what() {
            if std::time::Instant::now() > deadline {
                let screen = tmux(&["capture-pane", "-p"]);
                let _ = tmux(&["kill-server"]);
                panic!(
                    "{} never {waiting}; screen:\n{}",
                    program[0],
                    String::from_utf8_lossy(&screen.stdout)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    tmux(&[
        "send-keys",
        "-l",
        &format!("source '{}'\n", setup_file.display()),
    ]);
    wait_for(&|| env.project.join("ready").exists(), "got ready");
    let args = env.project.join("args.txt");
    let lines = || {
        std::fs::read_to_string(&args)
            .unwrap_or_default()
            .lines()
            .count()
    };
    for (done, word) in typed.iter().enumerate() {
        tmux(&["send-keys", "-l", &format!("mcpenv get {word}")]);
        tmux(&["send-keys", "Tab"]);
        tmux(&["send-keys", "Enter"]);
        wait_for(&|| lines() > done, "ran the completed line");
    }
    tmux(&["kill-server"]);
    Some(
        std::fs::read_to_string(&args)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// mcpenv's answer to `shell` completing `mcpenv get ` in the hostile
/// project, candidates one a line.
fn answer(env: &TestEnv, shell: &str) -> String {
    let output = env
        .command(&env.project, &["--", "mcpenv", "get", ""])
        .env("MCPENV_COMPLETE", shell)
        .env("_CLAP_COMPLETE_INDEX", "2")
        .env("_CLAP_IFS", "\n")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let answer = String::from_utf8(output.stdout).unwrap();
    answer
        .lines()
        .filter(|line| !line.starts_with('-'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_shell_gets_names_it_can_insert_and_none_it_cannot() {
    let env = hostile_world();
    let answers: Vec<String> = ["bash", "zsh", "fish", "elvish", "powershell"]
        .iter()
        .map(|shell| format!("{shell}:\n{}", answer(&env, shell)))
        .collect();
    insta::assert_snapshot!(answers.join("\n"), @r"
    bash:
    gh\$\(touch\ PWNED\)
    it\'s\ \`touch\ PWNED\`
    star\*
    a\;b
    \~x
    zsh:
    gh$(touch PWNED):project scope
    it's `touch PWNED`:project scope
    star*:project scope
    a;b:project scope
    ~x:project scope
    fish:
    gh$(touch PWNED)	project scope
    it's `touch PWNED`	project scope
    star*	project scope
    a;b	project scope
    ~x	project scope
    elvish:
    gh$(touch PWNED)
    it's `touch PWNED`
    star*
    a;b
    ~x
    powershell:
    'gh$(touch PWNED)'	project scope
    'it''s `touch PWNED`'	project scope
    'star*'	project scope
    'a;b'	project scope
    '~x'	project scope
    ");
}

#[test]
fn zsh_inserts_hostile_names_as_one_literal_argument_and_runs_nothing() {
    let env = hostile_world();
    let path = script(&env, "zsh");
    let setup = format!(
        "autoload -U compinit && compinit -u -D\n\
         source '{path}'\n\
         mcpenv() {{ print -r -- \"${{(j:|:)@}}\" >> args.txt }}\n\
         touch ready\n"
    );
    let Some(received) = complete_interactively(
        &env,
        &["zsh", "-f", "-i"],
        &setup,
        &["gh", "it", "st", "a", "esc", "two", "bidi"],
    ) else {
        return;
    };
    assert_eq!(
        received,
        [
            "get|gh$(touch PWNED)",
            "get|it's `touch PWNED`",
            "get|star*",
            "get|a;b",
            // Never offered, so left as typed.
            "get|esc",
            "get|two",
            "get|bidi",
        ]
    );
    assert!(
        !env.project.join("PWNED").exists(),
        "a completed name ran a command"
    );
}

#[test]
fn fish_inserts_hostile_names_as_one_literal_argument_and_runs_nothing() {
    let env = hostile_world();
    let path = script(&env, "fish");
    let setup = format!(
        "source '{path}'\n\
         function mcpenv; string join '|' -- $argv >> args.txt; end\n\
         touch ready\n"
    );
    let Some(received) = complete_interactively(
        &env,
        &["fish", "--no-config", "-i"],
        &setup,
        &["gh", "it", "st", "a", "esc", "two", "bidi"],
    ) else {
        return;
    };
    assert_eq!(
        received,
        [
            "get|gh$(touch PWNED)",
            "get|it's `touch PWNED`",
            "get|star*",
            "get|a;b",
            // Never offered, so left as typed.
            "get|esc",
            "get|two",
            "get|bidi",
        ]
    );
    assert!(
        !env.project.join("PWNED").exists(),
        "a completed name ran a command"
    );
}
