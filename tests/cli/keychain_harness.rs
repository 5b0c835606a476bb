//! A real Secret Service for the keychain tests: gnome-keyring on a D-Bus
//! session bus of its own, its keyring files under the test's HOME. Each
//! test starts its own, so tests run in parallel; nothing is set in the
//! test process's environment. Skipped, saying so, without `dbus-daemon`,
//! `dbus-send`, `gnome-keyring-daemon` or `secret-tool` (`scripts/test`
//! installs them on Debian, as root).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::TestEnv;
use crate::probe::gone;

/// The login keyring's password. Not empty: for an empty `--unlock` password
/// gnome-keyring creates no login keyring at all, and a keyring whose
/// password is empty it writes in plaintext (`secret=…`).
pub const PASSWORD: &str = "mcpenv-test-login-password";

/// How long the daemons get to come up, and a `secret-tool` or `dbus-send`
/// call to finish, before the harness gives up instead of hanging the test.
const DEADLINE: Duration = Duration::from_secs(10);

/// The object path of gnome-keyring's login collection (the `default` alias).
const LOGIN: &str = "/org/freedesktop/secrets/collection/login";

/// A private session bus with gnome-keyring's Secret Service on it, the login
/// keyring created (or unlocked) with [`PASSWORD`]. Dropping it kills both
/// daemons.
pub struct SecretService {
    bus: Child,
    daemon: Child,
    address: String,
    home: PathBuf,
    // Holds the bus socket and gnome-keyring's control socket; outside HOME,
    // so a test reading every file under HOME never meets a socket.
    runtime: tempfile::TempDir,
}

impl SecretService {
    /// Starts a bus and gnome-keyring for `home` (keyrings go in
    /// `home/.local/share/keyrings`, as `TestEnv` sets `XDG_DATA_HOME`);
    /// `None`, saying why on stderr, when a program is missing or the
    /// service does not come up.
    pub fn start(home: &Path) -> Option<Self> {
        for program in [
            "dbus-daemon",
            "dbus-send",
            "gnome-keyring-daemon",
            "secret-tool",
        ] {
            if which::which(program).is_err() {
                crate::skips::skip(&format!(
                    "`{program}` is not installed; `scripts/test` installs dbus, gnome-keyring and libsecret-tools (Debian, as root)"
                ));
                return None;
            }
        }
        // gnome-keyring-daemon now and then aborts on a GLib assertion
        // while it starts (a D-Bus property read before it is ready): a
        // second try, on a bus of its own, before it counts as missing.
        let mut why = String::new();
        for _ in 0..2 {
            match Self::try_start(home) {
                Ok(service) => return Some(service),
                Err(failed) => why = failed,
            }
        }
        crate::skips::skip(&format!("gnome-keyring did not come up: {why}"));
        None
    }

    /// One start of [`SecretService::start`]: a bus, gnome-keyring on it,
    /// and its login collection unlocked; why not, when it does not.
    fn try_start(home: &Path) -> Result<Self, String> {
        let runtime = tempfile::tempdir().unwrap();
        let (bus, address) = start_bus(runtime.path()).ok_or("the bus did not start")?;
        let daemon = match start_daemon(home, runtime.path(), &address) {
            Ok(daemon) => daemon,
            Err(why) => {
                kill(bus);
                return Err(why);
            }
        };
        let mut service = Self {
            bus,
            daemon,
            address,
            home: home.to_path_buf(),
            runtime,
        };
        service.wait_until_unlocked()?;
        Ok(service)
    }

    /// The variables that lead a program (mcpenv, `secret-tool`) to this
    /// service: the bus address, and a runtime dir whose `bus` is the same
    /// bus (where zbus looks without the address).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("DBUS_SESSION_BUS_ADDRESS".to_string(), self.address.clone()),
            (
                "XDG_RUNTIME_DIR".to_string(),
                self.runtime.path().display().to_string(),
            ),
        ]
    }

    /// The login keyring's file, where gnome-keyring keeps every item.
    pub fn keyring_file(&self) -> PathBuf {
        self.home.join(".local/share/keyrings/login.keyring")
    }

    /// The secret stored for `service` and `username` (the attributes keyring
    /// uses), read by `secret-tool`; `None` when there is none, and also
    /// when the collection is locked (`secret-tool` cannot tell them apart).
    pub fn lookup(&self, service: &str, username: &str) -> Option<String> {
        let out = self.run(&["lookup", "service", service, "username", username], None);
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }

    /// Stores `value` for `service` and `username` with `secret-tool`, as
    /// another program would; panics when it fails.
    pub fn store(&self, service: &str, username: &str, label: &str, value: &str) {
        let label = format!("--label={label}");
        let out = self.run(
            &["store", &label, "service", service, "username", username],
            Some(value),
        );
        assert!(out.status.success(), "secret-tool store failed: {out:?}");
    }

    /// Locks the login collection, as the screen locker would. Through the
    /// Secret Service's `Lock` method: `secret-tool lock` (libsecret 0.20)
    /// locks, then crashes.
    pub fn lock(&self) {
        let out = self.dbus_send(&[
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            &format!("array:objpath:{LOGIN}"),
        ]);
        assert!(out.status.success(), "Lock failed: {out:?}");
        assert!(self.is_locked(), "the login collection is still unlocked");
    }

    /// Whether the login collection is locked.
    pub fn is_locked(&self) -> bool {
        self.locked().unwrap()
    }

    /// The login collection's `Locked` property; an error when the service
    /// or the collection is not there (yet).
    fn locked(&self) -> Result<bool, String> {
        let out = self.dbus_send(&[
            LOGIN,
            "org.freedesktop.DBus.Properties.Get",
            "string:org.freedesktop.Secret.Collection",
            "string:Locked",
        ]);
        let reply = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(reply.contains("boolean true"))
    }

    /// Waits for gnome-keyring to own its name and unlock the login
    /// collection, or to die.
    fn wait_until_unlocked(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let why = match self.locked() {
                Ok(false) => return Ok(()),
                Ok(true) => "the login collection stayed locked".to_string(),
                Err(why) => why,
            };
            let exited = self.daemon.try_wait().unwrap();
            if exited.is_some() || Instant::now() > deadline {
                let log = self.runtime.path().join("gnome-keyring.log");
                let log = fs::read_to_string(log).unwrap_or_default();
                let state = exited.map_or("still runs".to_string(), |status| status.to_string());
                return Err(format!("{why} ({state}); it said: {}", log.trim()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn dbus_send(&self, args: &[&str]) -> Output {
        let mut command = Command::new("dbus-send");
        command.args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
        ]);
        command.args(args);
        self.finish(command, None)
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = Command::new("secret-tool");
        command.args(args);
        self.finish(command, stdin)
    }

    /// Runs `command` in a clean environment that leads to this service,
    /// feeding it `stdin`; panics rather than waiting past [`DEADLINE`].
    fn finish(&self, mut command: Command, stdin: Option<&str>) -> Output {
        command
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        // Dropping stdin closes it: secret-tool reads the secret to its end.
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.unwrap_or_default().as_bytes())
            .unwrap();
        // The outputs here are a few lines, far below a pipe's buffer, so
        // waiting before reading cannot block the child.
        let deadline = Instant::now() + DEADLINE;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{command:?} still runs after {DEADLINE:?}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        child.wait_with_output().unwrap()
    }

    /// The process ids of the bus and of gnome-keyring.
    pub fn pids(&self) -> [u32; 2] {
        [self.bus.id(), self.daemon.id()]
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        kill_ref(&mut self.daemon);
        kill_ref(&mut self.bus);
    }
}

/// A bus of its own: a config without service directories, so that nothing
/// is ever started on demand (the system's gnome-keyring, or a prompter),
/// listening in `runtime`. Returns it once it prints its address, which it
/// does when it listens.
fn start_bus(runtime: &Path) -> Option<(Child, String)> {
    let config = runtime.join("bus.conf");
    fs::write(
        &config,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
            runtime.join("bus").display()
        ),
    )
    .unwrap();
    let mut bus = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address=1"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // It warns that it cannot raise its file limit, as an unprivileged
        // user's bus always does.
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut address = String::new();
    BufReader::new(bus.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    let address = address.trim().to_string();
    if address.is_empty() {
        kill(bus);
        crate::skips::skip("dbus-daemon did not start");
        return None;
    }
    Some((bus, address))
}

/// gnome-keyring's Secret Service alone, in the foreground (so it is our
/// child, and dies with a kill), `--unlock` creating the login keyring with
/// the password it reads from stdin, or unlocking the one already there.
fn start_daemon(home: &Path, runtime: &Path, address: &str) -> Result<Child, String> {
    let log = fs::File::create(runtime.join("gnome-keyring.log")).unwrap();
    let mut daemon = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_RUNTIME_DIR", runtime)
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|error| error.to_string())?;
    // Dropping stdin closes it: the daemon reads the password to its end.
    let written = daemon.stdin.take().unwrap().write_all(PASSWORD.as_bytes());
    if let Err(error) = written {
        kill(daemon);
        return Err(format!("could not hand it the password: {error}"));
    }
    Ok(daemon)
}

fn kill(mut child: Child) {
    kill_ref(&mut child);
}

fn kill_ref(child: &mut Child) {
    // Already gone is fine: gnome-keyring leaves when its bus does.
    let _ = child.kill();
    let _ = child.wait();
}

const SECRET: &str = "ghp_Keychain0Harness1Secret2Value3";

#[test]
fn a_stored_secret_is_looked_up() {
    let env = TestEnv::new();
    let Some(service) = SecretService::start(&env.home) else {
        return;
    };
    assert_eq!(service.lookup("mcpenv", "GITHUB_TOKEN"), None);
    service.store("mcpenv", "GITHUB_TOKEN", "mcpenv: GITHUB_TOKEN", SECRET);
    assert_eq!(
        service.lookup("mcpenv", "GITHUB_TOKEN").as_deref(),
        Some(SECRET)
    );
    assert_eq!(service.lookup("mcpenv", "OTHER"), None);
    assert_eq!(service.lookup("other", "GITHUB_TOKEN"), None);
}

/// The keyring lives under the test's HOME, encrypted: neither the
/// secret nor its attribute values are in the file.
#[test]
fn the_keyring_file_under_home_holds_no_secret_in_plaintext() {
    let env = TestEnv::new();
    let Some(service) = SecretService::start(&env.home) else {
        return;
    };
    let file = service.keyring_file();
    assert!(file.starts_with(&env.home), "{}", file.display());
    let empty = fs::metadata(&file).unwrap().len();
    service.store("mcpenv", "GITHUB_TOKEN", "a label", SECRET);
    // gnome-keyring has written the item before `store` returns.
    let bytes = fs::read(&file).unwrap();
    assert!(
        bytes.len() as u64 > empty,
        "the item is not in the file yet"
    );
    assert!(bytes.starts_with(b"GnomeKeyring\n\r\0\n"), "not encrypted");
    for plain in [SECRET, "GITHUB_TOKEN", "mcpenv"] {
        assert!(
            !bytes
                .windows(plain.len())
                .any(|window| window == plain.as_bytes()),
            "`{plain}` is in {} in plaintext",
            file.display()
        );
    }
}

/// With the collection locked, `secret-tool` finds nothing and returns at
/// once: unlocking needs a prompt, and no prompter can start on this bus.
#[test]
fn a_locked_collection_hides_its_secrets_without_hanging() {
    let env = TestEnv::new();
    let Some(service) = SecretService::start(&env.home) else {
        return;
    };
    service.store("mcpenv", "GITHUB_TOKEN", "a label", SECRET);
    service.lock();
    let started = Instant::now();
    assert_eq!(service.lookup("mcpenv", "GITHUB_TOKEN"), None);
    assert!(started.elapsed() < Duration::from_secs(5));
    let out = service.run(
        &["store", "--label=x", "service", "mcpenv", "username", "NEW"],
        Some("value"),
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("locked collection"),
        "{out:?}"
    );
}

/// A second start on the same HOME unlocks the keyring the first one
/// created, with its secrets.
#[test]
fn a_restart_unlocks_the_existing_keyring() {
    let env = TestEnv::new();
    let Some(service) = SecretService::start(&env.home) else {
        return;
    };
    service.store("mcpenv", "GITHUB_TOKEN", "a label", SECRET);
    drop(service);
    let service = SecretService::start(&env.home).unwrap();
    assert_eq!(
        service.lookup("mcpenv", "GITHUB_TOKEN").as_deref(),
        Some(SECRET)
    );
}

#[test]
fn dropping_it_leaves_no_process_behind() {
    let env = TestEnv::new();
    let Some(service) = SecretService::start(&env.home) else {
        return;
    };
    let pids = service.pids();
    drop(service);
    for pid in pids {
        assert!(gone(pid.try_into().unwrap()), "process {pid} still runs");
    }
}
