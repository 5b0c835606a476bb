//! A new teammate's first hour, typed into a real terminal (tmux): clone
//! the repository, `cp .env.example .env`, `mcpenv check` fails naming each
//! empty variable, `mcpenv onboard` asks for exactly those, `mcpenv
//! approve --all`, and the real Claude Code 2.1.332, started through
//! `mcpenv run`, lists the servers approved and connected, each with its
//! variable set. Skipped, saying so, without tmux, git or Claude Code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::claude::claude;
use crate::harness::TestEnv;
use crate::probe::fake_bin;

/// One tmux server of its own (its socket in the test's folder) running one
/// shell in the teammate's clone.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn start(env: &TestEnv, dir: &Path, path: &str) -> Option<Self> {
        let tmux = Self {
            socket: env.root.join("tmux.sock"),
        };
        let shell = format!(
            "env -i HOME='{home}' PATH='{path}' TERM=xterm-256color NO_COLOR=1 \
             XDG_STATE_HOME='{state}' XDG_CONFIG_HOME='{home}/.config' \
             MCPENV_MANAGED_DIR='{managed}' DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
             DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
             MCP_TIMEOUT=10000 PS1='$ ' bash --norc --noprofile",
            home = env.home.display(),
            state = env.root.join("state").display(),
            managed = env.root.join("managed").display(),
        );
        let started = tmux
            .command(&[
                "new-session",
                "-d",
                "-s",
                "teammate",
                "-x",
                "150",
                "-y",
                "50",
            ])
            .args(["-c", &dir.display().to_string(), &shell])
            .output()
            .ok()?;
        started.status.success().then_some(tmux)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket).args(args);
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("tmux runs")
    }

    /// Types `keys` and presses Enter.
    fn type_line(&self, keys: &str) {
        self.run(&["send-keys", "-t", "teammate", "-l", keys]);
        self.run(&["send-keys", "-t", "teammate", "Enter"]);
    }

    /// Everything the pane shows, with its scrollback.
    fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-t", "teammate", "-S", "-2000"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text` `count` times in all.
    fn wait_for(&self, text: &str, count: usize, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= count {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the terminal never showed `{text}` ({count}×):\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `command` in the shell and waits for it to finish; returns its
    /// exit status and the screen.
    fn run_line(&self, label: &str, command: &str, wait: Duration) -> (i32, String) {
        self.type_line(&format!("{command}; echo \"{label}-exit=$?\""));
        self.wait_for_exit(label, wait)
    }

    /// Waits for the `LABEL-exit=N` line a [`Self::run_line`] command prints.
    fn wait_for_exit(&self, label: &str, wait: Duration) -> (i32, String) {
        let marker = regex::Regex::new(&format!(r"(?m)^{label}-exit=(\d+)$")).unwrap();
        let deadline = Instant::now() + wait;
        loop {
            let screen = self.screen();
            if let Some(found) = marker.captures(&screen) {
                return (found[1].parse().unwrap(), screen);
            }
            assert!(
                Instant::now() < deadline,
                "`{label}` never finished:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the pane's terminal has `mode` (`-echo`): the prompt is
    /// printed just before it switches, and keys typed earlier would echo.
    fn wait_for_mode(&self, mode: &str) {
        let out = self.run(&["display-message", "-p", "-t", "teammate", "#{pane_tty}"]);
        let tty = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = Command::new("stty")
                .args(["-F", &tty, "-a"])
                .output()
                .unwrap();
            let modes = String::from_utf8_lossy(&out.stdout);
            if modes.split_whitespace().any(|word| word == mode) {
                return;
            }
            assert!(Instant::now() < deadline, "the terminal never got `{mode}`");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Sharer")
        .env("GIT_AUTHOR_EMAIL", "sharer@example.com")
        .env("GIT_COMMITTER_NAME", "Sharer")
        .env("GIT_COMMITTER_EMAIL", "sharer@example.com")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

const TOKEN: &str = "ghp_Teammate0Token1Value2For3Onboarding4";

#[test]
fn a_new_teammate_goes_from_clone_to_working_servers_in_a_real_terminal() {
    for (program, why) in [("tmux", "tmux"), ("git", "git")] {
        if Command::new(program).arg("-V").output().is_err()
            && Command::new(program).arg("--version").output().is_err()
        {
            crate::skips::skip(&format!(
                "{why} is not installed; `scripts/test` installs tmux (Debian, as root)"
            ));
            return;
        }
    }
    let Some(claude) = claude() else {
        crate::skips::skip(
            "Claude Code 2.1.332 is not installed in target/tools; `scripts/test` installs it (needs npm)",
        );
        return;
    };
    let env = TestEnv::bare();
    // What the sharer committed: two servers that refuse to start without
    // their variable, and the example listing them.
    let upstream = env.root.join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    let fake = fake_bin();
    std::fs::write(
        upstream.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{
  "github": {{"command": "{fake}", "args": ["needs-env:GITHUB_PERSONAL_ACCESS_TOKEN"], "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "${{GITHUB_PERSONAL_ACCESS_TOKEN}}"}}}},
  "docs": {{"command": "{fake}", "args": ["needs-env:DOCS_SPACE"], "env": {{"DOCS_SPACE": "${{DOCS_SPACE}}"}}}}
}}}}"#
        ),
    )
    .unwrap();
    std::fs::write(
        upstream.join(".env.example"),
        "# A GitHub token (scopes: repo)\nGITHUB_PERSONAL_ACCESS_TOKEN=\n# The docs space to search\nDOCS_SPACE=\n",
    )
    .unwrap();
    std::fs::write(upstream.join(".gitignore"), ".env\n").unwrap();
    git(&upstream, &["init", "-q", "-b", "main"]);
    git(&upstream, &["add", "."]);
    git(&upstream, &["commit", "-q", "-m", "Share the MCP servers"]);

    let mcpenv = crate::harness::mcpenv_binary();
    let mcpenv_dir = mcpenv.parent().unwrap();
    let claude_dir = claude.parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        mcpenv_dir.display(),
        claude_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let Some(tmux) = Tmux::start(&env, &env.root, &path) else {
        crate::skips::skip("tmux could not start a session here");
        return;
    };
    let minute = Duration::from_secs(60);
    // The umask most systems start with: `cp` makes `.env` readable by all.
    tmux.type_line("umask 022 && git clone -q upstream clone && cd clone && cp .env.example .env");
    let (code, screen) = tmux.run_line("check", "mcpenv check", minute);
    assert_eq!(code, 1, "{screen}");
    for name in ["GITHUB_PERSONAL_ACCESS_TOKEN", "DOCS_SPACE"] {
        assert!(
            screen.contains(&format!("error: `{name}` is set but empty in `.env`")),
            "{screen}"
        );
    }

    tmux.type_line("mcpenv onboard; echo \"onboard-exit=$?\"");
    let screen = tmux.wait_for("2 variables to set", 1, minute);
    assert!(screen.contains("It is set but empty"), "{screen}");
    tmux.wait_for("GITHUB_PERSONAL_ACCESS_TOKEN (hidden): ", 1, minute);
    tmux.wait_for_mode("-echo");
    tmux.type_line(TOKEN);
    tmux.wait_for("DOCS_SPACE: ", 1, minute);
    tmux.wait_for_mode("-icanon");
    tmux.type_line("engineering");
    let (code, screen) = tmux.wait_for_exit("onboard", minute);
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains(TOKEN), "the token was shown:\n{screen}");
    assert!(
        screen
            .contains("Saved 2 variables to `.env`: `GITHUB_PERSONAL_ACCESS_TOKEN`, `DOCS_SPACE`")
            && screen
                .contains("Made `.env` private (mode 600; it was 644) before saving secrets in it"),
        "{screen}"
    );

    // Claude Code 2.1.332 reads approvals only in a trusted folder: a
    // teammate who never started `claude` here is asked, and says yes.
    tmux.type_line("mcpenv approve --all; echo \"approve-exit=$?\"");
    tmux.wait_for("in Claude Code now?", 1, minute);
    tmux.wait_for_mode("-icanon");
    tmux.run(&["send-keys", "-t", "teammate", "-l", "y"]);
    let (code, screen) = tmux.wait_for_exit("approve", minute);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Approved `github`, `docs`")
            && screen.contains("Recorded that you trust this folder in Claude Code"),
        "{screen}"
    );

    let (_, screen) = tmux.run_line(
        "list",
        "mcpenv run -- claude mcp list",
        Duration::from_secs(120),
    );
    let listed = &screen[screen.rfind("claude mcp list").unwrap()..];
    for name in ["github", "docs"] {
        let line = listed
            .lines()
            .find(|line| line.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("`{name}` not listed:\n{listed}"));
        assert!(line.contains("Connected"), "{line}\n{listed}");
    }
    assert!(
        !listed.contains("pending") && !listed.contains("Missing environment variables"),
        "{listed}"
    );
    // Nothing the teammate did shows in `git status`.
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(env.root.join("clone"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}
