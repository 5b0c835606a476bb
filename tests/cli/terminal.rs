//! `mcpenv` in a real pseudo-terminal, for the prompts (onboard's
//! answers, import's clash choice).

use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use rexpect::process::WaitStatus;
use rexpect::session::{Options, PtySession, spawn_with_options};

use crate::harness::TestEnv;

/// `mcpenv` in a pseudo-terminal with echo on, as in a real terminal.
pub struct Terminal {
    pub session: PtySession,
    /// The terminal device, for reading its modes.
    pub tty: String,
    /// Everything the terminal showed so far.
    pub shown: String,
}

impl Terminal {
    pub fn start(env: &TestEnv, args: &[&str]) -> Self {
        Self::start_in(env, &env.project, args)
    }

    pub fn start_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Self {
        let inner = env.command(dir, args);
        // rexpect turns echo off; a user's terminal has it on, and with it
        // on, hidden input is really tested.
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(r#"tty && stty echo && exec "$0" "$@""#)
            .arg(inner.get_program())
            .args(inner.get_args())
            .env_clear();
        for (key, value) in inner.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        command.env("TERM", "xterm");
        command.current_dir(dir);
        let options = Options::new()
            .timeout_ms(Some(10_000))
            .strip_ansi_escape_codes(true);
        let mut session = spawn_with_options(command, options).unwrap();
        let tty = session.read_line().unwrap();
        assert!(tty.starts_with("/dev/"), "not a terminal: {tty}");
        Self {
            session,
            tty,
            shown: String::new(),
        }
    }

    pub fn expect(&mut self, text: &str) {
        let before = self
            .session
            .exp_string(text)
            .unwrap_or_else(|error| panic!("{error}\nshown so far:\n{}", self.shown));
        self.shown.push_str(&before);
        self.shown.push_str(text);
    }

    /// Waits until the terminal has `mode` (`-echo`, `-icanon`): the prompt
    /// is printed just before it switches, and keys typed earlier would be
    /// echoed or dropped.
    pub fn wait_for_mode(&self, mode: &str) {
        let started = Instant::now();
        loop {
            let out = Command::new("stty")
                .args(["-F", &self.tty, "-a"])
                .output()
                .unwrap();
            let modes = String::from_utf8_lossy(&out.stdout);
            if modes.split_whitespace().any(|word| word == mode) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the terminal never got `{mode}`:\n{modes}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Answers a hidden prompt (terminal echo off).
    pub fn type_hidden(&mut self, prompt: &str, answer: &str) {
        self.expect(prompt);
        self.wait_for_mode("-echo");
        self.session.send_line(answer).unwrap();
    }

    /// Answers a plain prompt, which reads key by key (raw mode).
    pub fn type_plain(&mut self, prompt: &str, answer: &str) {
        self.expect(prompt);
        self.wait_for_mode("-icanon");
        self.session.send_line(answer).unwrap();
    }

    /// Answers a yes/no question, which reads one key.
    pub fn answer_key(&mut self, question: &str, key: &str) {
        self.expect(question);
        self.wait_for_mode("-icanon");
        self.session.send(key).unwrap();
        self.session.flush().unwrap();
    }

    /// Waits for the end; returns what was shown and how it ended.
    pub fn finish(mut self) -> (String, WaitStatus) {
        let rest = self.session.exp_eof().unwrap();
        self.shown.push_str(&rest);
        let status = self.session.process().wait().unwrap();
        (self.shown.replace('\r', ""), status)
    }
}

pub fn exited(status: WaitStatus) -> i32 {
    match status {
        WaitStatus::Exited(_, code) => code,
        other => panic!("did not exit: {other:?}"),
    }
}
