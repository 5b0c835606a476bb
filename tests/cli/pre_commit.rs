//! The pre-commit hook (`.pre-commit-hooks.yaml`): its `files` pattern
//! against every client file mcpenv knows, and the real `pre-commit`
//! (installed from PyPI into `target/tools/pre-commit` by `scripts/test`)
//! running it with `try-repo` on this repository in a temporary git
//! repository and HOME.
//!
//! `language: rust` makes pre-commit `cargo install --path` the repository
//! (a release build) into a fresh environment on every `try-repo`. The build
//! goes to `target/pre-commit-build` with the release profile turned into a
//! quick one (opt-level 0, no LTO, 256 codegen units, incremental), offline,
//! so a rerun rebuilds only mcpenv itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::harness::TestEnv;
use crate::scan::PAT;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `files:` pattern of the hook, as pre-commit reads it (a Python
/// regex searched in the path relative to the repository root).
fn files_pattern() -> regex::Regex {
    let manifest = std::fs::read_to_string(repository().join(".pre-commit-hooks.yaml"))
        .unwrap_or_else(|error| panic!(".pre-commit-hooks.yaml: {error}"));
    let line = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("files: "))
        .expect("the hook has a `files:` line");
    let pattern = line
        .strip_prefix('\'')
        .and_then(|line| line.strip_suffix('\''))
        .expect("`files:` is single-quoted, so its backslashes stay as written");
    regex::Regex::new(pattern).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn the_hook_files_pattern_matches_every_client_file() {
    let pattern = files_pattern();
    let home = Path::new("");
    let known = mcpenv::clients::known_files(home, Path::new(".config"), Path::new("repo"));
    let mut paths: Vec<String> = known
        .iter()
        .map(|file| file.path.display().to_string())
        .collect();
    paths.extend([".mcp.json", "sub/dir/.mcp.json", "dotfiles/.claude.json"].map(String::from));
    for path in &paths {
        assert!(pattern.is_match(path), "`{path}` is not matched");
    }
    for path in [
        "mcp.json",
        "x.mcp.json",
        ".mcp.json.bak",
        "settings.json",
        "a/.cursor/other.json",
    ] {
        assert!(!pattern.is_match(path), "`{path}` is matched");
    }
}

/// The `pre-commit` to run, or `None` with a note.
fn pre_commit() -> Option<PathBuf> {
    let path = std::env::var_os("MCPENV_TEST_PRE_COMMIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository().join("target/tools/pre-commit/bin/pre-commit"));
    if path.is_file() {
        Some(path)
    } else {
        crate::skips::skip(&format!(
            "pre-commit is not installed at `{}` (scripts/test installs it from PyPI when python3 with venv and pip is there); skipping the pre-commit hook test",
            path.display()
        ));
        None
    }
}

/// `pre-commit try-repo <this repository> mcpenv-scan --files FILE` in
/// `env`'s project, a real git repository.
fn try_repo(env: &TestEnv, pre_commit: &Path, file: &str) -> (i32, String) {
    let real_home = std::env::home_dir().unwrap_or_default();
    let tool_home = |name: &str, default: &str| {
        std::env::var_os(name).map_or_else(|| real_home.join(default), PathBuf::from)
    };
    let mut command = Command::new(pre_commit);
    command
        .args(["try-repo", "--color", "never"])
        .arg(repository())
        .args(["mcpenv-scan", "--verbose", "--files", file])
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("LANG", "C.UTF-8")
        .env(
            "PRE_COMMIT_HOME",
            repository().join("target/pre-commit-home"),
        )
        // The toolchain and crate cache stay the ones this build uses.
        .env("CARGO_HOME", tool_home("CARGO_HOME", ".cargo"))
        .env("RUSTUP_HOME", tool_home("RUSTUP_HOME", ".rustup"))
        .env("CARGO_NET_OFFLINE", "true")
        .env(
            "CARGO_TARGET_DIR",
            repository().join("target/pre-commit-build"),
        )
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true");
    if let Some(toolchain) = std::env::var_os("RUSTUP_TOOLCHAIN") {
        command.env("RUSTUP_TOOLCHAIN", toolchain);
    }
    for (name, value) in [
        ("GIT_AUTHOR_NAME", "mcpenv test"),
        ("GIT_AUTHOR_EMAIL", "test@mcpenv.invalid"),
        ("GIT_COMMITTER_NAME", "mcpenv test"),
        ("GIT_COMMITTER_EMAIL", "test@mcpenv.invalid"),
    ] {
        command.env(name, value);
    }
    let output = command.output().expect("pre-commit runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_pre_commit_hook_blocks_a_literal_secret_and_passes_placeholders() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let env = TestEnv::new();
    std::fs::remove_dir_all(env.project.join(".git")).unwrap();
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&env.project)
        .status()
        .expect("git runs");
    assert!(init.success());
    // The developer's own local-scope secret for this very project: the
    // hook must not read it (plain `mcpenv scan` would, and fail).
    env.write(
        "home/.claude.json",
        &format!(
            r#"{{"projects": {{"{}": {{"mcpServers": {{"mine": {{"command": "npx", "env": {{"GITHUB_TOKEN": "{PAT}"}}}}}}}}}}}}"#,
            env.key()
        ),
    );
    env.write(
        "project/.mcp.json",
        &format!(r#"{{"mcpServers": {{"gh": {{"command": "npx", "env": {{"GITHUB_TOKEN": "{PAT}"}}}}}}}}"#),
    );
    env.write(
        "project/clean/.mcp.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}"#,
    );
    // try-repo takes the working tree as a temporary commit when tracked
    // files changed; say which case this run checked.
    let dirty = !git(
        repository(),
        &["status", "--porcelain", "--untracked-files=no"],
    )
    .is_empty();

    let started = Instant::now();
    let (code, output) = try_repo(&env, &pre_commit, ".mcp.json");
    eprintln!(
        "pre-commit try-repo (install and a blocked file): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_ne!(code, 0, "the literal secret was not blocked:\n{output}");
    assert!(output.contains("mcpenv scan"), "{output}");
    assert!(
        output.contains(".mcp.json"),
        "the file is not named:\n{output}"
    );
    assert!(
        output.contains("ghp_…3s12"),
        "the finding is not shown:\n{output}"
    );
    assert!(
        !output.contains(PAT),
        "the secret was printed whole:\n{output}"
    );
    assert_eq!(
        output.contains("Creating temporary repo with uncommitted changes"),
        dirty,
        "dirty worktree: {dirty}\n{output}"
    );

    let started = Instant::now();
    let (code, output) = try_repo(&env, &pre_commit, "clean/.mcp.json");
    eprintln!(
        "pre-commit try-repo (install and a clean file): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "placeholders were blocked:\n{output}");
    assert!(output.contains("Passed"), "{output}");
}
