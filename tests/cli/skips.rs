//! A test that cannot run here says so where a person sees it. libtest
//! captures what a passing test prints, so a skip written to stderr alone
//! is invisible: each skip is also appended to the file `scripts/test`
//! names in `MCPENV_TEST_SKIPS`, and `scripts/test` lists them at the end.
//! Under `CI=true` a missing tool fails the test instead: CI installs
//! every tool, so a skip there means a check that silently did not run.

use std::io::Write;

/// The environment variable naming the file skips are appended to.
pub const SKIPS_FILE: &str = "MCPENV_TEST_SKIPS";

/// This test cannot run here because a tool is missing (`why` says which
/// and how to get it): outside CI, records the skip and returns so the
/// caller can return; under `CI=true`, fails the test.
pub fn skip(why: &str) {
    assert!(
        !under_ci(),
        "{why}\n(CI=true: a cross-check tool that is missing fails the run; scripts/test installs it)"
    );
    record(why);
}

/// This test cannot run here because data from outside the repository is
/// absent (`why` says where it was looked for). A clone of the repository
/// alone has none, in CI too, so this records the skip and never fails.
pub fn skip_without_data(why: &str) {
    record(why);
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true")
}

fn record(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!("{test}: {}", why.replace('\n', " "));
    eprintln!("skipped {line}");
    if let Some(path) = std::env::var_os(SKIPS_FILE) {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| writeln!(file, "{line}"));
        if let Err(error) = written {
            eprintln!(
                "could not record the skip in `{}`: {error}",
                path.to_string_lossy()
            );
        }
    }
}

/// The test run as its own child process: the cross-check of Claude Code's
/// blanked names with no Claude Code to read, under `ci` (`CI`'s value).
fn blanked_names_without_claude(ci: Option<&str>, skips: &std::path::Path) -> std::process::Output {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "claude_blanked::the_blanked_names_are_the_pinned_binarys",
            "--exact",
            "--test-threads=1",
        ])
        .env("MCPENV_TEST_CLAUDE", skips.with_file_name("no-claude-here"))
        .env(SKIPS_FILE, skips)
        .env_remove("CI");
    if let Some(ci) = ci {
        command.env("CI", ci);
    }
    command.output().unwrap()
}

#[test]
fn a_missing_cross_check_tool_is_listed_outside_ci_and_fails_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let skips = dir.path().join("skipped.txt");

    let outside = blanked_names_without_claude(None, &skips);
    assert!(outside.status.success(), "{outside:?}");
    let listed = std::fs::read_to_string(&skips).unwrap();
    assert_eq!(
        listed,
        "claude_blanked::the_blanked_names_are_the_pinned_binarys: Claude Code 2.1.332 is not \
         installed in target/tools; `scripts/test` installs it (needs npm)\n"
    );

    std::fs::remove_file(&skips).unwrap();
    let under_ci = blanked_names_without_claude(Some("true"), &skips);
    assert!(
        !under_ci.status.success(),
        "a CI=true run passed without Claude Code"
    );
    let said = String::from_utf8_lossy(&under_ci.stdout);
    assert!(
        said.contains("Claude Code 2.1.332 is not installed") && said.contains("CI=true"),
        "{said}"
    );
    assert!(!skips.exists(), "a failure is not a skip");
}
