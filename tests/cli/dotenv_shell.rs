//! What mcpenv writes into a dotenv file, or prints for a shell to `eval`,
//! reads back exactly through dotenvy and through `set -a; . ./.env` in
//! the real `sh` and `bash`, and runs nothing: a value from a repository
//! holding quotes, backticks and `$(…)` is data, never a command.

use std::path::Path;
use std::process::Command;

use insta::assert_snapshot;

use crate::harness::TestEnv;

/// A secret (by its name) that closes a double quote and runs a command
/// if a shell ever sees it unquoted: `>PWNED` creates the marker.
const HOSTILE_SECRET: &str = "Zq8r'`>PWNED`'T2vL9xWc4nBvKp3m";
/// A default of the same kind, with `$(…)`, `$HOME`, `\` and `!` as well.
const HOSTILE_DEFAULT: &str = r"a'`>PWNED`$(>PWNED)$HOME\\!x'b";

/// The values of `names` after `shell` sources `file` in `dir` the way the
/// README and the book say (`set -a; . ./file`; docs/src/commands/extract.md),
/// in an environment of `PATH` alone.
pub fn sourced(shell: &str, dir: &Path, file: &str, names: &[&str]) -> Vec<String> {
    let printed: String = names.iter().map(|name| format!(" \"${name}\"")).collect();
    let output = Command::new(shell)
        .arg("-c")
        .arg(format!(
            "set -a; . ./{file}; set +a; printf '%s\\0'{printed}"
        ))
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(output.status.success(), "{shell}: {output:?}");
    assert!(output.stderr.is_empty(), "{shell}: {output:?}");
    let mut values: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .map(str::to_owned)
        .collect();
    values.pop();
    values
}

/// What dotenvy reads for `names` in `path` (the last assignment wins).
fn dotenvy_reads(path: &Path, names: &[&str]) -> Vec<String> {
    let pairs: Vec<(String, String)> = dotenvy::from_path_iter(path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .iter()
        .map(|name| {
            pairs
                .iter()
                .rev()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
                .unwrap()
        })
        .collect()
}

/// Sources `file` in the project with `sh` and `bash` and checks that each
/// reads `expected` for `names`, as dotenvy does, and that nothing ran.
fn reads_back_and_runs_nothing(env: &TestEnv, file: &str, names: &[&str], expected: &[&str]) {
    let expected: Vec<String> = expected.iter().map(|value| (*value).to_owned()).collect();
    assert_eq!(dotenvy_reads(&env.project.join(file), names), expected);
    for shell in ["sh", "bash"] {
        assert_eq!(
            sourced(shell, &env.project, file, names),
            expected,
            "{shell}"
        );
    }
    assert!(
        !env.project.join("PWNED").exists(),
        "sourcing `{file}` ran a command"
    );
}

#[test]
fn extracted_secrets_and_defaults_source_literally() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {"db": {
            "command": "npx",
            "env": {"API_KEY": HOSTILE_SECRET, "LOG": format!("${{LOG_LEVEL:-{HOSTILE_DEFAULT}}}")}
        }}})
        .to_string(),
    );
    let out = env.run(&["extract"]);
    out.assert_no_secret(&[HOSTILE_SECRET]);
    assert_snapshot!(out, @r"
    FILE       SERVER  FIELD        VARIABLE  VALUE
    .mcp.json  db      env.API_KEY  API_KEY   Zq8r…Kp3m
    ----- stderr -----
    Moved 1 secret into `.env`
    Wrote `[ROOT]/project/.gitignore`
    Wrote `[ROOT]/project/.env`
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Claude Code takes `${VAR}` values from its environment, not from `.env`: load it first (`set -a; . ./.env; set +a`)
    [exit status: 0]
    ");
    assert_snapshot!(env.read("project/.env"), @r"API_KEY='Zq8r'\''`>PWNED`'\''T2vL9xWc4nBvKp3m'");
    assert_snapshot!(env.read("project/.env.example"), @r"
    # used by: db
    API_KEY=
    # used by: db
    LOG_LEVEL='a'\''`>PWNED`$(>PWNED)$HOME'\\\\'!x'\''b'
    ");
    reads_back_and_runs_nothing(&env, ".env", &["API_KEY"], &[HOSTILE_SECRET]);
    reads_back_and_runs_nothing(&env, ".env.example", &["LOG_LEVEL"], &[HOSTILE_DEFAULT]);
}

#[test]
fn onboarded_values_source_literally() {
    let mut env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}", "N": "${NOTE}"}}}}"#,
    );
    let token = "it's `>PWNED` $(>PWNED) \\\" \\n\\";
    let note = "two\nlines 'quoted' #not a comment ";
    env.set_env("TOKEN", token);
    env.set_env("NOTE", note);
    let out = env.run(&["onboard", "--from-env", "-q"]);
    assert_eq!(out.code, 0, "{out}");
    assert_snapshot!(env.read("project/.env"), @r#"
    TOKEN='it'\''s `>PWNED` $(>PWNED) '\\'" '\\'n'\\
    NOTE='two
    lines '\''quoted'\'' #not a comment '
    "#);
    reads_back_and_runs_nothing(&env, ".env", &["TOKEN", "NOTE"], &[token, note]);
}

/// A repository's `.env` whose value, read by dotenvy, holds `'` and a
/// backtick: `mcpenv env` prints it for `eval`, `. ./file` and fish.
fn hostile_dotenv() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}"}}}}"#,
    );
    env.write("project/.env", "TOKEN=\"it's `>PWNED` \\\\ \\$(>PWNED)\"\n");
    env
}

const HOSTILE_READ: &str = "it's `>PWNED` \\ $(>PWNED)";

#[test]
fn env_as_dotenv_sources_literally() {
    let env = hostile_dotenv();
    let out = env.run(&["env", "--format", "dotenv"]);
    assert_snapshot!(out, @r"
    TOKEN='it'\''s `>PWNED` '\\' $(>PWNED)'
    ----- stderr -----
    [exit status: 0]
    ");
    env.write("project/printed.env", &out.stdout);
    reads_back_and_runs_nothing(&env, "printed.env", &["TOKEN"], &[HOSTILE_READ]);
}

#[test]
fn env_for_eval_in_sh_and_fish_runs_nothing() {
    let env = hostile_dotenv();
    let out = env.run(&["env"]);
    assert_snapshot!(out, @r"
    export TOKEN='it'\''s `>PWNED` '\\' $(>PWNED)'
    ----- stderr -----
    [exit status: 0]
    ");
    env.write("project/printed.sh", &out.stdout);
    reads_back_and_runs_nothing(&env, "printed.sh", &["TOKEN"], &[HOSTILE_READ]);
    let out = env.run(&["env", "--format", "fish"]);
    assert_snapshot!(out, @r"
    set -gx TOKEN 'it'\''s `>PWNED` '\\' $(>PWNED)'
    ----- stderr -----
    [exit status: 0]
    ");
    if which::which("fish").is_err() {
        crate::skips::skip(
            "the fish half: `fish` is not installed; `scripts/test` installs it (Debian, as root)",
        );
        return;
    }
    let output = Command::new("fish")
        .args(["--no-config", "-c"])
        .arg(format!("{}printf '%s' \"$TOKEN\"", out.stdout))
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        HOSTILE_READ,
        "{output:?}"
    );
    assert!(!env.project.join("PWNED").exists());
}

#[test]
fn a_value_no_shell_can_hold_is_refused_by_name() {
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "sh", "env": {"T": "${TOKEN}"}}}}"#,
    );
    // dotenvy reads an escape character inside single quotes. Printed for
    // a shell it would reach the terminal raw, or, escaped by mcpenv's
    // output, `eval` would read something other than the file holds.
    env.write("project/.env", "TOKEN='ab\u{1b}]0;x\u{7}cd'\n");
    let shown: Vec<String> = ["sh", "dotenv", "fish"]
        .iter()
        .map(|format| format!("{format}: {}", env.run(&["env", "--format", format])))
        .collect();
    assert_snapshot!(shown.join("\n"), @r"
    sh: ----- stderr -----
    error: `TOKEN` in `[ROOT]/project/.env`: the value contains an escape character (U+001B), which mcpenv does not write to dotenv files or print for a shell

    hint: fix the value of `TOKEN` there, or read it as JSON: `mcpenv env --json`
    [exit status: 1]
    dotenv: ----- stderr -----
    error: `TOKEN` in `[ROOT]/project/.env`: the value contains an escape character (U+001B), which mcpenv does not write to dotenv files or print for a shell

    hint: fix the value of `TOKEN` there, or read it as JSON: `mcpenv env --json`
    [exit status: 1]
    fish: ----- stderr -----
    error: `TOKEN` in `[ROOT]/project/.env`: the value contains an escape character (U+001B), which mcpenv does not write to dotenv files or print for a shell

    hint: fix the value of `TOKEN` there, or read it as JSON: `mcpenv env --json`
    [exit status: 1]
    ");
    // JSON holds any value.
    let out = env.run(&["env", "--json"]);
    assert_eq!(
        out.json()["variables"]["TOKEN"],
        "ab\u{1b}]0;x\u{7}cd",
        "{out}"
    );
}

mod properties {
    use proptest::prelude::*;

    use super::sourced;

    /// Strings made of what a shell or dotenvy could take for syntax, and
    /// any other character.
    fn value() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            prop::sample::select(vec![
                "'",
                "\"",
                "\\",
                "\\\\",
                "\\'",
                "'\\''",
                "$",
                "$(>PWNED)",
                "${HOME}",
                "$HOME",
                "`>PWNED`",
                "`",
                "!",
                "!!",
                "#",
                " #",
                " ",
                "  ",
                "\t",
                "\n",
                "\n#",
                "=",
                "~",
                "*",
                "?",
                "[a]",
                "{a,b}",
                ";",
                "&",
                "|",
                ">PWNED",
                "<",
                "(",
                ")",
                "%",
                "\\n",
                "\\$",
                "export ",
                "A=",
                "é",
                "日本",
                "🦀",
                "\u{a0}",
                "\u{2028}",
                "\u{feff}",
            ])
            .prop_map(str::to_owned),
            "[a-zA-Z0-9_]{1,4}",
            any::<char>().prop_map(String::from),
        ];
        prop_oneof![
            prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat()),
            any::<String>(),
        ]
    }

    proptest! {
        // Each case starts three shells; the values are many per case.
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever mcpenv writes into a dotenv file reads back the same in
        /// dotenvy, `sh`, `bash` and (for `mcpenv env --format fish`)
        /// fish, and runs nothing; what it refuses holds a character no
        /// shell line may carry raw.
        #[test]
        fn dotenvy_and_shells_read_what_the_writer_wrote(values in prop::collection::vec(value(), 1..16)) {
            let dir = tempfile::tempdir().unwrap();
            let mut pairs = Vec::new();
            for value in values {
                match mcpenv::envfiles::dotenv::quote(&value) {
                    Ok(_) => pairs.push((format!("V{}", pairs.len()), value)),
                    Err(_) => prop_assert!(value
                        .chars()
                        .any(|c| mcpenv::mechanics::display::is_unsafe(c) && c != '\n' && c != '\t')),
                }
            }
            if pairs.is_empty() {
                return Ok(());
            }
            let text = mcpenv::envfiles::dotenv::with_values("", &pairs).unwrap();
            std::fs::write(dir.path().join(".env"), &text).unwrap();
            let read: Vec<(String, String)> = dotenvy::from_read_iter(text.as_bytes())
                .map(Result::unwrap)
                .collect();
            prop_assert_eq!(&read, &pairs);
            let names: Vec<&str> = pairs.iter().map(|(name, _)| name.as_str()).collect();
            let expected: Vec<String> = pairs.iter().map(|(_, value)| value.clone()).collect();
            for shell in ["sh", "bash"] {
                prop_assert_eq!(&sourced(shell, dir.path(), ".env", &names), &expected, "{}", shell);
            }
            if which::which("fish").is_ok() {
                let mut script = String::new();
                for (name, value) in &pairs {
                    script.push_str(&format!("set -gx {name} {}\n", mcpenv::envfiles::dotenv::quote(value).unwrap()));
                }
                script.push_str("printf '%s\\0'");
                for name in &names {
                    script.push_str(&format!(" \"${name}\""));
                }
                let output = std::process::Command::new("fish")
                    .args(["--no-config", "-c", &script])
                    .current_dir(dir.path())
                    .env_clear()
                    .env("PATH", "/usr/bin:/bin")
                    .output()
                    .unwrap();
                let printed = String::from_utf8(output.stdout).unwrap();
                let mut read: Vec<String> = printed.split('\0').map(str::to_owned).collect();
                read.pop();
                prop_assert_eq!(&read, &expected, "fish: {}", String::from_utf8_lossy(&output.stderr));
            }
            prop_assert!(!dir.path().join("PWNED").exists(), "{}", text);
        }
    }
}
