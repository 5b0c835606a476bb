//! `mcpenv --version`: the release, the commit it was built from, the day,
//! and the Claude Code release the suite checks against (the one
//! `scripts/test` installs).

use std::process::Command;

use crate::claude::PINNED_CLAUDE_CODE;
use crate::harness::TestEnv;

#[test]
fn version_names_the_commit_the_day_and_the_claude_code_release() {
    let env = TestEnv::new();
    let out = env.run(&["--version"]).expect_code(0);
    let mut lines = out.stdout.lines();
    let first = lines.next().unwrap();
    let pattern =
        regex::Regex::new(r"^mcpenv \d+\.\d+\.\d+ \(([0-9a-f]{10}|unknown) (\d{4}-\d{2}-\d{2})\)$")
            .unwrap();
    let captures = pattern.captures(first).unwrap_or_else(|| panic!("{out}"));
    let in_checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".git")
        .exists();
    if in_checkout && which::which("git").is_ok() {
        // Built from this checkout: the commit is one of its commits (HEAD's
        // when built since the last commit).
        let kind = Command::new("git")
            .args(["cat-file", "-t", &captures[1]])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&kind.stdout).trim(),
            "commit",
            "{out}"
        );
    }
    assert_eq!(
        lines.next(),
        Some(format!("checked against Claude Code {PINNED_CLAUDE_CODE}").as_str()),
        "{out}"
    );
    let pinned_by_scripts = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"),
    )
    .unwrap();
    assert!(
        pinned_by_scripts.contains(&format!("claude_version=\"{PINNED_CLAUDE_CODE}\"")),
        "scripts/test installs the release --version names"
    );
    let short = env.run(&["-V"]).expect_code(0);
    assert_eq!(short.stdout.trim_end(), first);
}
