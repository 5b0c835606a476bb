//! The hermetic test environment: a temporary root with `home/`, `project/`
//! and `state/`, a cleared process environment, and the real binary.

use std::fmt;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary world for one test.
pub struct TestEnv {
    _temp: tempfile::TempDir,
    /// The canonical temporary root (shown as `[ROOT]`).
    pub root: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// The project the commands run in (a git repository).
    pub project: PathBuf,
    extra_env: Vec<(String, String)>,
}

impl TestEnv {
    /// A fresh world whose project is a git repository (a `.git` directory).
    pub fn new() -> Self {
        let env = Self::bare();
        fs::create_dir_all(env.project.join(".git")).unwrap();
        env
    }

    /// A fresh world whose project is not inside any repository.
    pub fn bare() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let home = root.join("home");
        let project = root.join("project");
        for dir in [&home, &project, &root.join("state")] {
            fs::create_dir_all(dir).unwrap();
        }
        Self {
            _temp: temp,
            root,
            home,
            project,
            extra_env: Vec::new(),
        }
    }

    /// Sets an extra variable for every later run.
    pub fn set_env(&mut self, key: &str, value: impl AsRef<Path>) {
        self.extra_env
            .push((key.to_string(), value.as_ref().display().to_string()));
    }

    /// `mcpenv ARGS` run in the project directory.
    #[must_use]
    pub fn run(&self, args: &[&str]) -> CommandOutput {
        self.run_in(&self.project, args)
    }

    /// `mcpenv ARGS` run in `dir`.
    #[must_use]
    pub fn run_in(&self, dir: &Path, args: &[&str]) -> CommandOutput {
        let output = self.command(dir, args).output().unwrap();
        CommandOutput::new(output, &self.root)
    }

    /// The command, ready to spawn, for tests that need the process itself.
    pub fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(mcpenv_binary());
        command
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            // mcpenv's own cache (the layout cache) beside its state,
            // apart from the files tests compare in `home/`.
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("MCPENV_MANAGED_DIR", self.root.join("managed"))
            // No session bus unless a test starts one: the keychain of
            // the person running the tests is never reached.
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", self.root.join("no-bus").display()),
            )
            .env("XDG_RUNTIME_DIR", self.root.join("runtime"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for (key, value) in &self.extra_env {
            command.env(key, value);
        }
        command
    }

    /// Records in `~/.claude.json` that the project's trust dialog was
    /// accepted, as Claude Code does (the file's other keys kept, its
    /// formatting not).
    pub fn trust_project(&self) {
        let path = self.home.join(".claude.json");
        let mut claude: serde_json::Value = fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        claude["projects"][self.key()]["hasTrustDialogAccepted"] = serde_json::Value::Bool(true);
        self.write("home/.claude.json", &claude.to_string());
    }

    /// Writes `contents` to `path` (relative to the root), creating directories.
    pub fn write(&self, path: &str, contents: &str) -> PathBuf {
        let path = self.root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    /// Reads `path` (relative to the root) with the root shown as `[ROOT]`.
    pub fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root.join(path))
            .unwrap()
            .replace(self.root.to_str().unwrap(), "[ROOT]")
    }

    /// Reads `path` (relative to the root) byte for byte.
    pub fn bytes(&self, path: &str) -> Vec<u8> {
        fs::read(self.root.join(path)).unwrap()
    }

    /// The permission bits of `path` (relative to the root).
    pub fn mode(&self, path: &str) -> u32 {
        fs::metadata(self.root.join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    /// The project's key in `~/.claude.json`.
    pub fn key(&self) -> String {
        self.project.display().to_string()
    }
}

/// What a run printed and how it exited. Displays as stdout, a separator,
/// stderr and the exit status, with the temporary root shown as `[ROOT]`.
pub struct CommandOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
}

impl CommandOutput {
    /// Wraps a finished process's output.
    pub fn new(output: Output, root: &Path) -> Self {
        let clean =
            |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(root.to_str().unwrap(), "[ROOT]");
        Self {
            stdout: clean(&output.stdout),
            stderr: clean(&output.stderr),
            code: output.status.code().unwrap_or(-1),
        }
    }

    /// Asserts the exit code, showing everything printed when it differs.
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "unexpected exit status:\n{self}");
        self
    }

    /// Asserts that none of `secrets` appears whole in stdout or stderr.
    #[track_caller]
    pub fn assert_no_secret(&self, secrets: &[&str]) {
        for secret in secrets {
            assert!(
                !self.stdout.contains(secret) && !self.stderr.contains(secret),
                "a secret was printed:\n{self}"
            );
        }
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("stdout is not JSON ({error}):\n{self}"))
    }
}

impl fmt::Display for CommandOutput {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}----- stderr -----\n{}[exit status: {}]",
            self.stdout, self.stderr, self.code
        )
    }
}

/// The binary under test: cargo's build of this crate, or the one
/// `MCPENV_TEST_BIN` names (CI runs the suite against the binary
/// `scripts/release` builds, the one mcpenv ships).
pub fn mcpenv_binary() -> std::path::PathBuf {
    std::env::var_os("MCPENV_TEST_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_mcpenv").into(), Into::into)
}
