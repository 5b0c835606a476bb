//! Cross-checks with the real Claude Code: what mcpenv writes, `claude mcp`
//! reads as the same servers in the same scopes, and the reverse. Skipped,
//! saying so, when `claude` is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::TestEnv;

/// The Claude Code release these cross-checks are written against
/// (`scripts/test` installs exactly this one into `target/tools`).
pub const PINNED_CLAUDE_CODE: &str = "2.1.332";

/// The pinned Claude Code: `MCPENV_TEST_CLAUDE` (set by `scripts/test`), else
/// `target/tools`. Another `claude` on PATH is never used, and a copy of
/// another version is refused, so a new release cannot change a verdict.
pub fn claude() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path = std::env::var_os("MCPENV_TEST_CLAUDE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("target/tools/node_modules/.bin/claude")
                });
            if !path.is_file() {
                return None;
            }
            let output = Command::new(&path)
                .arg("--version")
                .env("DISABLE_AUTOUPDATER", "1")
                .stdin(Stdio::null())
                .output()
                .ok()?;
            let version = String::from_utf8_lossy(&output.stdout);
            if version.split_whitespace().next() == Some(PINNED_CLAUDE_CODE) {
                Some(path)
            } else {
                eprintln!(
                    "note: `{}` is Claude Code {}, not the pinned {PINNED_CLAUDE_CODE}; not used",
                    path.display(),
                    version.trim()
                );
                None
            }
        })
        .clone()
}

/// `claude ARGS` ready to run hermetically in `dir` (the test's HOME, no
/// network but loopback, no telemetry, stdin closed); `None` (and a note)
/// when Claude Code is not installed.
pub fn claude_command(env: &TestEnv, dir: &Path, args: &[&str]) -> Option<Command> {
    let Some(claude) = claude() else {
        crate::skips::skip(&format!(
            "Claude Code {PINNED_CLAUDE_CODE} is not installed in target/tools; `scripts/test` installs it (needs npm)"
        ));
        return None;
    };
    Some(hermetic_claude(&claude, env, dir, args))
}

/// `claude ARGS` in `dir` with the world's HOME, a cleared environment,
/// no auto-update, telemetry or other traffic, a 5 s MCP timeout (callers
/// may set another) and no standard input: the one way tests start it.
pub fn hermetic_claude(claude: &Path, env: &TestEnv, dir: &Path, args: &[&str]) -> Command {
    hermetic_wrapped(claude.as_os_str(), &[], env, dir, args)
}

/// [`hermetic_claude`], started as `PROGRAM WORDS... ARGS` (a wrapper such
/// as `bwrap … claude`, its words naming Claude Code).
pub fn hermetic_wrapped(
    program: &std::ffi::OsStr,
    words: &[std::ffi::OsString],
    env: &TestEnv,
    dir: &Path,
    args: &[&str],
) -> Command {
    let mut command = Command::new(program);
    command
        .args(words)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("MCP_TIMEOUT", "5000")
        .stdin(Stdio::null());
    command
}

/// Runs `claude ARGS` hermetically in `dir`: exit code and everything it
/// printed; `None` (and a note) when Claude Code is not installed.
pub fn run_claude(env: &TestEnv, dir: &Path, args: &[&str]) -> Option<(i32, String)> {
    let output = claude_command(env, dir, args)?.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Some((output.status.code().unwrap_or(-1), text))
}

#[test]
fn claude_reads_what_mcpenv_writes() {
    let env = TestEnv::new();
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    env.run(&[
        "add",
        "-s",
        "local",
        "mine",
        "-e",
        "K=v",
        "--",
        "/nonexistent/mine",
        "--flag",
    ])
    .expect_code(0);
    env.run(&[
        "add",
        "-s",
        "project",
        "-t",
        "http",
        "team",
        "http://127.0.0.1:9/mcp",
        "-H",
        "Authorization: Bearer ${TEAM_TOKEN}",
    ])
    .expect_code(0);
    env.run(&["add", "-s", "user", "everywhere", "/nonexistent/everywhere"])
        .expect_code(0);
    env.run(&[
        "add-json",
        "-s",
        "user",
        "json-one",
        r#"{"type":"sse","url":"http://127.0.0.1:9/sse"}"#,
    ])
    .expect_code(0);

    for (name, scope_text, detail) in [
        ("mine", "Local config", "Command: /nonexistent/mine"),
        ("team", "Project config", "Pending approval"),
        (
            "everywhere",
            "User config",
            "Command: /nonexistent/everywhere",
        ),
        ("json-one", "User config", "URL: http://127.0.0.1:9/sse"),
    ] {
        let (code, text) = run_claude(&env, &env.project, &["mcp", "get", name]).unwrap();
        assert_eq!(code, 0, "claude mcp get {name}:\n{text}");
        assert!(
            text.contains(scope_text),
            "claude mcp get {name}: expected {scope_text:?}:\n{text}"
        );
        assert!(
            text.contains(detail),
            "claude mcp get {name}: expected {detail:?}:\n{text}"
        );
    }
    let (_, text) = run_claude(&env, &env.project, &["mcp", "get", "mine"]).unwrap();
    assert!(
        text.contains("Args: --flag") && text.contains("K=v"),
        "{text}"
    );

    // From a subdirectory the local key is still the repository root.
    std::fs::create_dir_all(env.project.join("sub")).unwrap();
    let (code, text) = run_claude(&env, &env.project.join("sub"), &["mcp", "get", "mine"]).unwrap();
    assert_eq!(code, 0, "{text}");

    // And removal by mcpenv is seen by Claude Code.
    env.run(&["remove", "mine"]).expect_code(0);
    let (code, text) = run_claude(&env, &env.project, &["mcp", "get", "mine"]).unwrap();
    assert_eq!(code, 1, "{text}");
}

#[test]
fn mcpenv_lists_what_claude_writes() {
    let env = TestEnv::new();
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    for args in [
        &[
            "mcp",
            "add",
            "-s",
            "local",
            "c-local",
            "--",
            "/nonexistent/local",
            "-x",
        ][..],
        &[
            "mcp",
            "add",
            "-s",
            "project",
            "c-project",
            "-e",
            "A=1",
            "--",
            "/nonexistent/project",
        ],
        &[
            "mcp",
            "add",
            "-s",
            "user",
            "-t",
            "http",
            "c-user",
            "http://127.0.0.1:9/mcp",
            "-H",
            "X-Key: v",
        ],
        &[
            "mcp",
            "add-json",
            "-s",
            "local",
            "c-json",
            r#"{"command":"/nonexistent/json","args":["a"]}"#,
        ],
    ] {
        let (code, text) = run_claude(&env, &env.project, args).unwrap();
        assert_eq!(code, 0, "claude {args:?}:\n{text}");
    }
    let listed = env.run(&["list", "--json"]).expect_code(0).json();
    let rows: Vec<(String, String, String, String)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| {
            let field = |key: &str| server[key].as_str().unwrap_or_default().to_string();
            (
                field("name"),
                field("scope"),
                field("transport"),
                if server["url"].is_null() {
                    field("command")
                } else {
                    field("url")
                },
            )
        })
        .collect();
    let expected = [
        ("c-local", "local", "stdio", "/nonexistent/local"),
        ("c-json", "local", "stdio", "/nonexistent/json"),
        ("c-project", "project", "stdio", "/nonexistent/project"),
        ("c-user", "user", "http", "http://127.0.0.1:9/mcp"),
    ];
    let expected: Vec<(String, String, String, String)> = expected
        .iter()
        .map(|(a, b, c, d)| ((*a).into(), (*b).into(), (*c).into(), (*d).into()))
        .collect();
    assert_eq!(rows, expected);

    // mcpenv edits Claude's files in place; Claude still reads them after.
    env.run(&["remove", "c-user"]).expect_code(0);
    env.run(&["remove", "c-project"]).expect_code(0);
    let (_, text) = run_claude(&env, &env.project, &["mcp", "list"]).unwrap();
    assert!(
        text.contains("c-local") && !text.contains("c-user") && !text.contains("c-project"),
        "{text}"
    );
}

#[test]
fn claude_started_through_run_sees_the_dotenv_values() {
    let env = TestEnv::new();
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    env.run(&[
        "add",
        "-s",
        "local",
        "-t",
        "http",
        "api",
        "http://127.0.0.1:9/mcp",
        "-H",
        "Authorization: Bearer ${TEAM_API_TOKEN}",
    ])
    .expect_code(0);
    let (_, plain) = run_claude(&env, &env.project, &["mcp", "list"]).unwrap();
    assert!(
        plain.contains("Missing environment variables: TEAM_API_TOKEN"),
        "{plain}"
    );

    env.write("project/.env", "TEAM_API_TOKEN=t0k3n-from-dotenv\n");
    let claude = claude().unwrap();
    let claude = claude.to_str().unwrap();
    let output = env
        .command(&env.project, &["run", "--", claude, "mcp", "list"])
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("MCP_TIMEOUT", "5000")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.contains("api:"), "{text}");
    assert!(!text.contains("Missing environment variables"), "{text}");
}

#[test]
fn claude_code_skips_a_mcp_json_over_2_mib_and_mcpenv_does_not_write_one() {
    let env = TestEnv::new();
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    const LIMIT: usize = 2 * 1024 * 1024;
    // `{"mcpServers": {"big": {...}}}` padded with blanks to `size` bytes.
    let sized = |size: usize| {
        let body = r#"{"mcpServers": {"big": {"command": "/nonexistent/big", "args": []}}"#;
        format!("{body}{}}}", " ".repeat(size - body.len() - 1))
    };
    env.write("project/.mcp.json", &sized(LIMIT));
    let (code, text) = run_claude(&env, &env.project, &["mcp", "get", "big"]).unwrap();
    assert_eq!(code, 0, "a file of exactly 2 MiB is read:\n{text}");

    let over = sized(LIMIT + 1);
    env.write("project/.mcp.json", &over);
    let (code, text) = run_claude(&env, &env.project, &["mcp", "get", "big"]).unwrap();
    assert_eq!(code, 1, "one byte more and Claude Code skips it:\n{text}");
    let out = env.run(&["add", "-s", "project", "x", "node"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("bytes Claude Code reads"), "{out}");
    assert!(env.bytes("project/.mcp.json") == over.as_bytes());

    // Well under the limit mcpenv writes, and Claude Code reads what it wrote.
    env.write("project/.mcp.json", &sized(LIMIT - 500));
    env.run(&["add", "-s", "project", "x", "/nonexistent/x"])
        .expect_code(0);
    let (code, text) = run_claude(&env, &env.project, &["mcp", "get", "x"]).unwrap();
    assert_eq!(code, 0, "{text}");
}

#[test]
fn claude_code_locks_the_configured_path_of_a_symlinked_claude_json() {
    let env = TestEnv::new();
    let Some(claude) = claude() else {
        run_claude(&env, &env.project, &[]);
        return;
    };
    env.write("dotfiles/claude.json", "{}");
    std::os::unix::fs::symlink(
        env.root.join("dotfiles/claude.json"),
        env.home.join(".claude.json"),
    )
    .unwrap();
    // First-run keys, before the lock is held.
    run_claude(&env, &env.project, &["mcp", "list"]).unwrap();
    // mcpenv takes this same lock (see claude_race.rs); Claude Code waits
    // for it although the file is elsewhere.
    let lock = env.home.join(".claude.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let mut child = Command::new(claude)
        .args([
            "mcp",
            "add",
            "-s",
            "user",
            "held",
            "--",
            "/nonexistent/held",
        ])
        .current_dir(&env.project)
        .env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(
        !env.read("dotfiles/claude.json").contains("\"held\""),
        "Claude Code wrote while `~/.claude.json.lock` was held"
    );
    std::fs::remove_dir(&lock).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(env.read("dotfiles/claude.json").contains("\"held\""));
}

#[test]
fn a_file_that_is_not_json_is_placed_where_claude_code_places_it() {
    let env = TestEnv::new();
    if claude().is_none() {
        run_claude(&env, &env.project, &[]);
        return;
    }
    // An early end after a newline, inside a string and inside a word; a
    // bad word, escape, number and control character; a UTF-16 column.
    let texts = [
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n",
        r#"{"mcpServers": {"a": "x"#,
        r#"{"mcpServers": {"a": tru"#,
        r#"{"mcpServers": {"a": truex}}"#,
        r#"{"mcpServers": {"a": "x\q"}}"#,
        r#"{"mcpServers": {"a": 01}}"#,
        "{\"mcpServers\": {\"a\":\n \"a\tb\"}}",
        r#"{"mcpServers": {"😀": [1,]}}"#,
    ];
    let position = |text: &str| {
        let start = text.find("not a valid JSON (line ")?;
        let end = start + text[start..].find(')')?;
        Some(text[start..=end].to_string())
    };
    for text in texts {
        env.write("project/.mcp.json", text);
        let (_, claude_says) = run_claude(&env, &env.project, &["mcp", "list"]).unwrap();
        let out = env.run(&["list"]);
        assert_eq!(
            position(&out.stderr),
            position(&claude_says),
            "{text:?}\nClaude Code:\n{claude_says}\nmcpenv:\n{out}"
        );
        assert!(position(&claude_says).is_some(), "{claude_says}");
    }
}
