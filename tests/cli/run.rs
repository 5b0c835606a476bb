use std::fs;

use insta::assert_snapshot;

use crate::harness::TestEnv;

#[test]
fn run_loads_dotenv_passes_arguments_and_exit_status() {
    let mut env = TestEnv::new();
    env.write(
        "project/.env",
        "FROM_FILE=\"it's\"\nBOTH=file\nQUOTED=\"a \\$b\"\n",
    );
    env.write("project/.env.local", "LOCAL=yes\nBOTH=local\n");
    env.set_env("ALREADY", "environment");
    env.write(
        "project/.env.local",
        "LOCAL=yes\nBOTH=local\nALREADY=file\n",
    );
    let out = env.run(&["run", "--", "sh", "-c", "printf '%s|' \"$FROM_FILE\" \"$BOTH\" \"$QUOTED\" \"$LOCAL\" \"$ALREADY\" \"$1\" \"$2\"; exit 42", "sh", "-x", "two words"]);
    assert_snapshot!(out, @"
    it's|local|a $b|yes|environment|-x|two words|----- stderr -----
    [exit status: 42]
    ");
}

#[test]
fn explicit_env_files_replace_the_defaults() {
    let env = TestEnv::new();
    env.write("project/.env", "A=default\n");
    env.write("project/custom.env", "A=custom\n");
    let out = env.run(&[
        "run",
        "--env-file",
        "custom.env",
        "--",
        "sh",
        "-c",
        "echo $A",
    ]);
    assert_snapshot!(out, @"
    custom
    ----- stderr -----
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["run", "--env-file", "missing.env", "--", "true"]), @"
    ----- stderr -----
    error: no such env file: `[ROOT]/project/missing.env`

    hint: check the path given to `--env-file`
    [exit status: 1]
    ");
}

#[test]
fn a_missing_command_is_a_failure_and_no_command_a_usage_error() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["run", "--", "/nonexistent/command"]), @"
    ----- stderr -----
    error: cannot run `/nonexistent/command`
      caused by: No such file or directory (os error 2)

    hint: `/nonexistent/command` does not exist; check the path
    [exit status: 1]
    ");
    env.run(&["run"]).expect_code(2);
    // A bare name is looked up on PATH, and the hint says so; a relative
    // path is run as it is.
    let out = env
        .run(&["run", "--", "mcpenv-no-such-program"])
        .expect_code(1);
    assert!(
        out.stderr.contains(
            "hint: `mcpenv-no-such-program` is not on PATH; check the spelling or install it"
        ),
        "{out}"
    );
    let out = env.run(&["run", "--", "./bin/missing"]).expect_code(1);
    assert!(
        out.stderr
            .contains("hint: `./bin/missing` does not exist; check the path"),
        "{out}"
    );
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"bare": {"command": "mcpenv-no-such-program"}, "relative": {"command": "./bin/missing"}}}"#,
    );
    let out = env.run(&["check"]);
    assert!(
        out.stdout
            .contains("command `mcpenv-no-such-program`  not found on PATH"),
        "{out}"
    );
    assert!(
        out.stdout.lines().any(|line| {
            line.starts_with("  command `./bin/missing`") && line.ends_with(" not found")
        }),
        "{out}"
    );
}

#[test]
fn env_prints_what_dotenv_provides_for_the_servers() {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}", "U": "${SET_IN_SHELL}", "V": "${NOT_IN_FILE}"}}}}"#,
    );
    env.write(
        "project/.env",
        "TOKEN=\"it's \\$x\"\nSET_IN_SHELL=file\nUNUSED=1\n",
    );
    env.set_env("SET_IN_SHELL", "shell");
    assert_snapshot!(env.run(&["env"]), @r"
    export TOKEN='it'\''s $x'
    ----- stderr -----
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["env", "--format", "fish"]), @r"
    set -gx TOKEN 'it'\''s $x'
    ----- stderr -----
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["env", "--format", "json"]), @r#"
    {
      "schema_version": 1,
      "variables": {
        "TOKEN": "it's $x"
      }
    }
    ----- stderr -----
    [exit status: 0]
    "#);
    let exported = env.run(&["env"]).stdout;
    let script = format!("{exported}printf '%s' \"$TOKEN\"");
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "it's $x");
    let _ = fs::remove_file(env.project.join(".env"));
}

#[test]
fn run_with_project_dir_runs_there() {
    let env = TestEnv::new();
    env.write("project/.env", "A=from-project\n");
    let out = env.run_in(
        &env.root,
        &[
            "-C",
            "project",
            "run",
            "--",
            "sh",
            "-c",
            "echo \"$A $(basename \"$PWD\")\"",
        ],
    );
    assert_eq!(out.stdout, "from-project project\n", "{out}");
}

/// `.env` holding `A=from-file`, alone or followed by 300 more variables:
/// from 256 of them `run` builds the command's environment itself instead
/// of handing it to `std::process::Command`, and both ways must agree.
fn env_files_both_ways() -> [String; 2] {
    let mut many = "A=from-file\n".to_string();
    for index in 0..300 {
        many.push_str(&format!("FILLER_{index}={index}\n"));
    }
    ["A=from-file\n".to_string(), many]
}

/// COMMAND starts with `SIGPIPE` at its default (Rust programs ignore it,
/// and an ignored signal stays ignored in the program started) and no
/// signal blocked: `yes` ends quietly when `head` has read enough, instead
/// of complaining of a broken pipe.
#[test]
fn the_command_gets_sigpipe_at_its_default() {
    let env = TestEnv::new();
    // The same output both ways.
    insta::allow_duplicates! {
        for dotenv in env_files_both_ways() {
            env.write("project/.env", &dotenv);
            assert_snapshot!(env.run(&["run", "--", "sh", "-c", "yes | head -n 1; grep '^SigBlk' /proc/self/status; echo \"$A\""]), @"
            y
            SigBlk:	0000000000000000
            from-file
            ----- stderr -----
            [exit status: 0]
            ");
        }
    }
}

/// A file without `#!` is run by `/bin/sh`, whether named by a path or
/// found on PATH; a file on PATH that cannot be run does not stop the
/// search, and is named when nothing else is found; `-C` runs it there.
#[test]
fn scripts_and_the_path_search_behave_as_execvp() {
    use std::os::unix::fs::PermissionsExt;
    // The same output both ways.
    insta::allow_duplicates! {
        for dotenv in env_files_both_ways() {
            let mut env = TestEnv::new();
            env.write("project/.env", &dotenv);
            let script = env.write("project/tool", "echo \"tool $A $*\"\n");
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
            let denied = env.write("project/denied/tool", "echo denied\n");
            fs::set_permissions(&denied, fs::Permissions::from_mode(0o644)).unwrap();
            let lone = env.write("project/denied/lone", "echo lone\n");
            fs::set_permissions(&lone, fs::Permissions::from_mode(0o644)).unwrap();
            assert_snapshot!(env.run(&["run", "--", "./tool", "x", "two words"]), @"
            tool from-file x two words
            ----- stderr -----
            [exit status: 0]
            ");
            assert_snapshot!(env.run_in(&env.root, &["-C", "project", "run", "--", "./tool", "there"]), @"
            tool from-file there
            ----- stderr -----
            [exit status: 0]
            ");
            let path = format!(
                "{}:{}:/usr/bin:/bin",
                env.project.join("denied").display(),
                env.project.display()
            );
            env.set_env("PATH", &path);
            assert_snapshot!(env.run(&["run", "--", "tool", "y"]), @"
            tool from-file y
            ----- stderr -----
            [exit status: 0]
            ");
            assert_snapshot!(env.run(&["run", "--", "lone"]), @"
            ----- stderr -----
            error: cannot run `lone`
              caused by: Permission denied (os error 13)

            hint: check that `lone` is executable
            [exit status: 1]
            ");
            assert_snapshot!(env.run(&["run", "--", "mcpenv-no-such-program"]), @"
            ----- stderr -----
            error: cannot run `mcpenv-no-such-program`
              caused by: No such file or directory (os error 2)

            hint: `mcpenv-no-such-program` is not on PATH; check the spelling or install it
            [exit status: 1]
            ");
            assert_snapshot!(env.run(&["run", "--", "./denied"]), @"
            ----- stderr -----
            error: cannot run `./denied`
              caused by: Permission denied (os error 13)

            hint: check that `./denied` is executable
            [exit status: 1]
            ");
        }
    }
}

/// `run` learns the env files' secrets only when it has something to say:
/// an error quoting one still masks it.
#[test]
fn an_error_naming_a_value_of_the_env_files_masks_it() {
    let env = TestEnv::new();
    let secret = "Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY";
    env.write("project/.env", &format!("API_KEY={secret}\n"));
    let out = env.run(&["run", "--", secret]).expect_code(1);
    out.assert_no_secret(&[secret]);
    assert_snapshot!(out, @"
    ----- stderr -----
    error: cannot run `Zq8m…C0aY`
      caused by: No such file or directory (os error 2)

    hint: `Zq8m…C0aY` is not on PATH; check the spelling or install it
    [exit status: 1]
    ");
}

/// A name assigned twice in one file: `run` hands on the value `env` prints
/// and `check` counts, the last one; a nearer file and the environment
/// still win over it.
#[test]
fn a_name_assigned_twice_counts_its_last_assignment_everywhere() {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TWICE}", "L": "${LOCAL_TWICE}"}}}}"#,
    );
    env.write(
        "project/.env",
        "TWICE=first\nOTHER=x\nTWICE=second\nLOCAL_TWICE=from-env\nSHELL_TWICE=a\nSHELL_TWICE=b\n",
    );
    env.write("project/.env.local", "LOCAL_TWICE=one\nLOCAL_TWICE=two\n");
    env.set_env("SHELL_TWICE", "shell");
    let out = env.run(&[
        "run",
        "--",
        "sh",
        "-c",
        "printf '%s|' \"$TWICE\" \"$LOCAL_TWICE\" \"$SHELL_TWICE\" \"$OTHER\"",
    ]);
    assert_snapshot!(out, @"
    second|two|shell|x|----- stderr -----
    [exit status: 0]
    ");
    assert_snapshot!(env.run(&["env"]), @"
    export LOCAL_TWICE='two'
    export TWICE='second'
    ----- stderr -----
    [exit status: 0]
    ");
}
