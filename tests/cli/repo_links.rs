//! A repository's files that are symbolic links leading out of it: mcpenv
//! writes none of them (the file outside stays byte for byte as it was, and
//! nothing in the repository is written either), reads none of them, and
//! `check` and `doctor` name where they lead. Links that stay inside the
//! repository keep working, and the status names where the write went.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};

use insta::assert_snapshot;

use crate::harness::{CommandOutput, TestEnv};
use crate::scan::PAT;

const BASHRC: &str = "# my shell\nexport PATH=\"$HOME/bin:$PATH\"\n";
const CODEX: &str = "model = \"o3\"\n\n[mcp_servers.mine]\ncommand = \"mine\"\n";
const CURSOR: &str = "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"mine\"}\n  }\n}\n";
/// A secret in a file outside the repository that a `.env` link reaches.
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY1234";

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A world whose project is a real repository, with the user's own files
/// (`~/.bashrc`, `~/.codex/config.toml`, `~/.cursor/mcp.json`) in HOME;
/// `None` (and a note) when git is missing.
fn world() -> Option<TestEnv> {
    let env = TestEnv::bare();
    if !git(&env.project, &["init", "-q"]) {
        crate::skips::skip("git is not installed");
        return None;
    }
    env.write("home/.bashrc", BASHRC);
    env.write("home/.codex/config.toml", CODEX);
    env.write("home/.cursor/mcp.json", CURSOR);
    Some(env)
}

/// `link` (relative to the project) made a symbolic link to `target`.
fn link(env: &TestEnv, link: &str, target: impl AsRef<Path>) {
    let path = env.project.join(link);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    symlink(target, path).unwrap();
}

/// A project server holding a literal secret, for `extract`.
fn secret_in_mcp_json(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        &format!(
            "{{\n  \"mcpServers\": {{\n    \"github\": {{\"command\": \"npx\", \"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"}}}}\n  }}\n}}\n"
        ),
    );
}

/// A project server whose token is a variable, for the exports.
fn project_server(env: &TestEnv) {
    env.write(
        "project/.mcp.json",
        "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"npx\", \"env\": {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}}\n  }\n}\n",
    );
}

/// Every file of the project (links as links), for "nothing was written".
fn tree(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![env.project.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = path
                .strip_prefix(&env.project)
                .unwrap()
                .display()
                .to_string();
            if name == ".git" {
                continue;
            }
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                files.push((name, target.display().to_string().into_bytes()));
            } else if kind.is_dir() {
                pending.push(path);
            } else {
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Runs `args`, and asserts it was refused: exit 1, the user's files in
/// HOME byte for byte as they were, and nothing in the project written.
fn refused(env: &TestEnv, args: &[&str]) -> CommandOutput {
    let before = tree(env);
    let out = env.run(args).expect_code(1);
    assert_eq!(env.bytes("home/.bashrc"), BASHRC.as_bytes(), "{out}");
    assert_eq!(
        env.bytes("home/.codex/config.toml"),
        CODEX.as_bytes(),
        "{out}"
    );
    assert_eq!(
        env.bytes("home/.cursor/mcp.json"),
        CURSOR.as_bytes(),
        "{out}"
    );
    assert_eq!(
        tree(env),
        before,
        "something in the project was written:\n{out}"
    );
    out.assert_no_secret(&[PAT]);
    out
}

#[test]
fn extract_writes_no_dotenv_file_that_leads_out_of_the_repository() {
    for file in [".env", ".env.example", ".gitignore"] {
        let Some(env) = world() else { return };
        secret_in_mcp_json(&env);
        link(&env, file, env.home.join(".bashrc"));
        let out = refused(&env, &["extract"]);
        assert!(
            out.stderr.contains(&format!(
                "`[ROOT]/project/{file}` leads through a symbolic link to `[ROOT]/home/.bashrc`, outside the repository `[ROOT]/project`"
            )),
            "{file}: {out}"
        );
        assert!(
            out.stderr
                .contains("hint: mcpenv reads and writes a repository's files only inside it"),
            "{file}: {out}"
        );
    }
}

#[test]
fn extract_with_nothing_to_move_documents_no_example_that_leads_out() {
    // A hostile repository's `.env.example` pointing at the user's
    // `.bashrc`: the run that only adds documentation lines must refuse it
    // too.
    let Some(env) = world() else { return };
    project_server(&env);
    link(&env, ".env.example", env.home.join(".bashrc"));
    let out = refused(&env, &["extract"]);
    assert!(
        out.stderr.contains(
            "`[ROOT]/project/.env.example` leads through a symbolic link to `[ROOT]/home/.bashrc`, outside the repository `[ROOT]/project`"
        ),
        "{out}"
    );
}

#[test]
fn the_refusal_names_both_paths_and_what_to_do() {
    let Some(env) = world() else { return };
    secret_in_mcp_json(&env);
    link(&env, ".env", env.home.join(".bashrc"));
    let out = refused(&env, &["extract"]);
    assert_snapshot!(out, @r"
    ----- stderr -----
    error: `[ROOT]/project/.env` leads through a symbolic link to `[ROOT]/home/.bashrc`, outside the repository `[ROOT]/project`

    hint: mcpenv reads and writes a repository's files only inside it: replace the link with a regular file (or point it inside the repository); nothing was changed
    [exit status: 1]
    ");
    // A dry run is refused the same way: it would show a write mcpenv will
    // not make.
    let dry_run = refused(&env, &["extract", "--dry-run"]);
    assert_eq!(dry_run.to_string(), out.to_string());
}

#[test]
fn share_and_add_write_no_project_file_that_leads_out() {
    let Some(env) = world() else { return };
    env.run(&[
        "add",
        "gh",
        "-e",
        &format!("GITHUB_TOKEN={PAT}"),
        "--",
        "npx",
        "server-github",
    ])
    .expect_code(0);
    let claude_json = env.bytes("home/.claude.json");
    link(&env, ".env", env.home.join(".bashrc"));
    let out = refused(&env, &["share", "gh"]);
    assert!(out.stderr.contains("`[ROOT]/home/.bashrc`"), "{out}");
    assert_eq!(env.bytes("home/.claude.json"), claude_json, "{out}");
    // `.mcp.json` itself leading to the user's Cursor file.
    std::fs::remove_file(env.project.join(".env")).unwrap();
    link(&env, ".mcp.json", env.home.join(".cursor/mcp.json"));
    let out = refused(&env, &["share", "gh"]);
    assert!(
        out.stderr.contains("`[ROOT]/home/.cursor/mcp.json`"),
        "{out}"
    );
    let out = refused(
        &env,
        &["add", "-s", "project", "other", "--", "npx", "other"],
    );
    assert!(
        out.stderr.contains("`[ROOT]/home/.cursor/mcp.json`"),
        "{out}"
    );
    assert_eq!(env.bytes("home/.claude.json"), claude_json, "{out}");
}

#[test]
fn onboard_saves_no_value_through_a_link_that_leads_out() {
    let Some(mut env) = world() else { return };
    project_server(&env);
    env.write("project/.env.example", "GITHUB_TOKEN=\n");
    link(&env, ".env", env.home.join(".bashrc"));
    env.set_env("GITHUB_TOKEN", PAT);
    let out = refused(&env, &["onboard", "--from-env"]);
    assert!(out.stderr.contains("`[ROOT]/home/.bashrc`"), "{out}");
}

#[test]
fn import_writes_no_project_file_that_leads_out() {
    let Some(env) = world() else { return };
    link(&env, ".mcp.json", env.home.join(".codex/config.toml"));
    let out = refused(&env, &["import", "--from", "cursor", "-s", "project"]);
    assert!(
        out.stderr.contains("`[ROOT]/home/.codex/config.toml`"),
        "{out}"
    );
}

#[test]
fn exports_write_no_client_file_that_leads_out() {
    let Some(env) = world() else { return };
    project_server(&env);
    // The whole `.codex` directory is a link to the user's own.
    link(&env, ".codex", env.home.join(".codex"));
    let out = refused(&env, &["export", "--to", "codex"]);
    assert!(
        out.stderr.contains("`[ROOT]/home/.codex/config.toml`"),
        "{out}"
    );
    // The file itself is a link.
    link(&env, ".cursor/mcp.json", env.home.join(".cursor/mcp.json"));
    let out = refused(&env, &["export", "--to", "cursor"]);
    assert!(
        out.stderr.contains("`[ROOT]/home/.cursor/mcp.json`"),
        "{out}"
    );
    link(&env, ".vscode/mcp.json", env.home.join(".bashrc"));
    let out = refused(&env, &["export", "--to", "vscode"]);
    assert!(out.stderr.contains("`[ROOT]/home/.bashrc`"), "{out}");
}

#[test]
fn remove_tidies_no_example_that_leads_out() {
    let Some(env) = world() else { return };
    project_server(&env);
    env.write("home/example", "GITHUB_TOKEN=\n");
    link(&env, ".env.example", env.home.join("example"));
    let before = env.bytes("home/example");
    let out = refused(
        &env,
        &["remove", "-s", "project", "github", "--tidy-example"],
    );
    assert!(out.stderr.contains("`[ROOT]/home/example`"), "{out}");
    assert_eq!(env.bytes("home/example"), before);
}

#[test]
fn project_choices_write_no_settings_that_lead_out() {
    let Some(env) = world() else { return };
    project_server(&env);
    // `.claude` leads to the user's own Claude Code directory.
    env.write("home/.claude/settings.local.json", "{}\n");
    link(&env, ".claude", env.home.join(".claude"));
    for command in ["approve", "reject"] {
        let out = refused(&env, &[command, "github"]);
        assert_eq!(
            env.read("home/.claude/settings.local.json"),
            "{}\n",
            "{out}"
        );
    }
}

#[test]
fn a_dangling_dotenv_link_to_a_committed_file_is_refused_and_reported() {
    let Some(env) = world() else { return };
    secret_in_mcp_json(&env);
    env.write("project/.gitignore", ".env\n");
    std::fs::create_dir_all(env.project.join("config")).unwrap();
    link(&env, ".env", "config/shared.env");
    let out = refused(&env, &["extract"]);
    assert!(
        out.stderr.contains(
            "`[ROOT]/project/.env` leads to `[ROOT]/project/config/shared.env`, which git does not ignore"
        ),
        "{out}"
    );
    assert!(!env.project.join("config/shared.env").exists());
    // `check` and `doctor` say so, as errors.
    for command in ["check", "doctor"] {
        let out = env.run(&[command]).expect_code(1);
        assert!(
            out.stdout
                .contains("`.env` leads to `config/shared.env`, which git does not ignore")
                || out
                    .stderr
                    .contains("`.env` leads to `config/shared.env`, which git does not ignore"),
            "{command}: {out}"
        );
    }
}

#[test]
fn a_dotenv_link_leading_out_is_not_read_and_is_reported() {
    let Some(env) = world() else { return };
    project_server(&env);
    env.write(
        "home/.aws/credentials",
        &format!("GITHUB_TOKEN={AWS_SECRET}\n"),
    );
    link(&env, ".env", env.home.join(".aws/credentials"));
    for args in [
        &["check"][..],
        &["doctor"],
        &["env"],
        &["secrets", "list"],
        &["get", "github"],
    ] {
        let out = env.run(args);
        out.assert_no_secret(&[AWS_SECRET]);
        assert!(!out.stdout.contains("wJalrX"), "{args:?}: {out}");
    }
    for command in ["check", "doctor"] {
        let out = env.run(&[command]).expect_code(1);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(
            all.contains("`.env` leads through a symbolic link to `~/.aws/credentials`, outside the repository"),
            "{command}: {out}"
        );
    }
    let out = env.run(&["env", "--format", "dotenv"]);
    assert!(!out.stdout.contains(AWS_SECRET), "{out}");
}

#[test]
fn a_link_to_an_ignored_file_inside_the_repository_works_and_is_named() {
    let Some(env) = world() else { return };
    secret_in_mcp_json(&env);
    env.write("project/.gitignore", ".env\nconfig/local.env\n");
    std::fs::create_dir_all(env.project.join("config")).unwrap();
    link(&env, ".env", "config/local.env");
    // The preview names where the bytes would go.
    let preview = env.run(&["extract", "--dry-run"]).expect_code(0);
    preview.assert_no_secret(&[PAT]);
    assert!(
        preview.to_string().contains(".env (→ `config/local.env`)"),
        "{preview}"
    );
    assert!(!env.project.join("config/local.env").exists());
    let out = env.run(&["extract"]).expect_code(0);
    out.assert_no_secret(&[PAT]);
    assert_snapshot!(out.stderr, @r"
    Moved 1 secret into `.env`
    Wrote `[ROOT]/project/.env` (→ `[ROOT]/project/config/local.env`)
    Wrote `[ROOT]/project/.env.example`
    Wrote `[ROOT]/project/.mcp.json`
    Claude Code takes `${VAR}` values from its environment, not from `.env`: load it first (`set -a; . ./.env; set +a`)
    ");
    assert!(
        env.read("project/config/local.env")
            .contains("GITHUB_TOKEN="),
        "{out}"
    );
    assert!(
        std::fs::symlink_metadata(env.project.join(".env"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
