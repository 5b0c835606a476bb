//! Whether a committed stdio server starts for teammates on other systems:
//! a `.mcp.json` written on one machine is read by Claude Code on Windows,
//! macOS and Linux alike, and Claude Code starts a stdio command without a
//! shell, so the command must exist as written on each of them.
//!
//! What is known about Claude Code 2.1.332 here comes from its bundled code
//! (it was not run on Windows): it starts stdio servers through the MCP
//! SDK's transport, which uses cross-spawn, and cross-spawn finds a batch
//! file such as `npx.cmd` through `PATHEXT` and runs it with `cmd.exe`.
//! Earlier releases warned "Windows requires 'cmd /c' wrapper to execute
//! npx" instead, and Claude Code's documentation still asks Windows users
//! for `cmd /c npx`, so a bare `npx` is a warning for Windows, never an
//! error; a `cmd` (or a `.exe`, a `C:\` path) is an error for macOS and
//! Linux, where it does not exist at all.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::inventory::Inventory;
use crate::config::scope::Scope;

/// A system Claude Code runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum System {
    /// Linux (and WSL).
    Linux,
    /// macOS.
    Macos,
    /// Windows, natively (not WSL).
    Windows,
}

impl System {
    /// Every system, in a fixed order.
    pub const ALL: [Self; 3] = [Self::Linux, Self::Macos, Self::Windows];

    /// The system this mcpenv was built for, if it is one of them.
    pub fn current() -> Option<Self> {
        if cfg!(target_os = "windows") {
            Some(Self::Windows)
        } else if cfg!(target_os = "macos") {
            Some(Self::Macos)
        } else if cfg!(target_os = "linux") {
            Some(Self::Linux)
        } else {
            None
        }
    }

    /// The system's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linux => "Linux",
            Self::Macos => "macOS",
            Self::Windows => "Windows",
        }
    }
}

/// Why a command may not start on one system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Obstacle {
    /// The command exists only on Windows (`cmd`, `*.exe`, `C:\…`).
    WindowsOnly {
        /// The command as written.
        command: String,
    },
    /// The command is a path that cannot exist on Windows (`/usr/…`,
    /// `*.sh`).
    UnixOnly {
        /// The command as written.
        command: String,
    },
    /// A path (the command or an argument) that exists only on one
    /// system's layout (`/opt/homebrew/…`, `/snap/…`).
    SystemPath {
        /// The path as written.
        path: String,
        /// The only system whose layout has it.
        only_on: System,
    },
    /// A path inside one person's home folder (`/Users/ada/…`,
    /// `C:\Users\ada\…`): it exists on that person's machine only.
    PersonalPath {
        /// The path as written.
        path: String,
    },
    /// A Windows batch file (`npx` is `npx.cmd` there): Claude Code
    /// 2.1.332 starts it, releases that asked for `cmd /c` did not.
    BatchFile {
        /// The command as written.
        command: String,
    },
}

impl Obstacle {
    /// Whether the command certainly fails there (an error); a batch file
    /// depends on the teammate's release (a warning).
    pub fn certain(&self) -> bool {
        !matches!(self, Self::BatchFile { .. })
    }

    /// What is wrong, for the server `name` on `systems`.
    pub fn describe(&self, name: &str, systems: &[System]) -> String {
        let on = names_of(systems);
        match self {
            Self::WindowsOnly { command } => {
                format!(
                    "`{name}` runs `{command}`, which exists only on Windows: it cannot start on {on}"
                )
            }
            Self::UnixOnly { command } => {
                format!("`{name}` runs `{command}`, a path that cannot exist on {on}")
            }
            Self::SystemPath { path, only_on } => format!(
                "`{name}` uses `{path}`, a path of {}'s layout: it does not exist on {on}",
                only_on.name()
            ),
            Self::PersonalPath { path } => format!(
                "`{name}` uses `{path}`, inside one person's home folder: it exists on their machine only"
            ),
            Self::BatchFile { command } => format!(
                "`{name}` runs `{command}`, a batch file on Windows (`{command}.cmd`): Claude Code 2.1.332 starts it, but releases that warned \"Windows requires 'cmd /c' wrapper\" do not"
            ),
        }
    }
}

/// The Node package runners that npm, pnpm, Yarn and Corepack install as
/// batch files (`npx.cmd`) on Windows.
const BATCH_RUNNERS: [&str; 7] = ["npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "corepack"];

/// Extensions of programs only Windows starts.
const WINDOWS_EXTENSIONS: [&str; 5] = [".exe", ".cmd", ".bat", ".ps1", ".com"];

/// Programs only Windows has.
const WINDOWS_PROGRAMS: [&str; 4] = ["cmd", "powershell", "wsl", "pwsh.exe"];

/// Folders of one system's layout only.
const SYSTEM_FOLDERS: [(&str, System); 9] = [
    ("/opt/homebrew/", System::Macos),
    ("/Applications/", System::Macos),
    ("/Library/", System::Macos),
    ("/System/", System::Macos),
    ("/usr/local/Cellar/", System::Macos),
    ("/snap/", System::Linux),
    ("/home/linuxbrew/", System::Linux),
    ("/usr/lib/x86_64-linux-gnu/", System::Linux),
    ("/usr/lib/aarch64-linux-gnu/", System::Linux),
];

/// Programs every system has by the same bare name (on PATH), so a path
/// to one of them can be written as its name.
const COMMON_PROGRAMS: [&str; 14] = [
    "npx", "npm", "pnpm", "yarn", "node", "deno", "bun", "bunx", "uvx", "uv", "python", "python3",
    "docker", "podman",
];

/// The last component of a path written with either separator.
fn base_name(command: &str) -> &str {
    command.rsplit(['/', '\\']).next().unwrap_or(command)
}

/// The name without a Windows program extension, when it has one.
fn without_windows_extension(name: &str) -> Option<&str> {
    WINDOWS_EXTENSIONS.iter().find_map(|extension| {
        let cut = name.len().checked_sub(extension.len())?;
        (name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(extension))
            .then(|| &name[..cut])
    })
}

/// Whether `text` is a Windows path: `C:\…`, `C:/…` or `\\server\…`.
fn windows_path(text: &str) -> bool {
    let bytes = text.as_bytes();
    (bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/'))
        || text.starts_with("\\\\")
}

/// Whether a path lies in a person's home folder, on any system
/// (`/Users/ada/…`, `/home/ada/…`, `C:\\Users\\ada\\…`).
fn personal(path: &str) -> bool {
    let unified = path.replace('\\', "/");
    let rest = if windows_path(path) {
        unified
            .get(3..)
            .filter(|rest| rest.len() >= 6 && rest[..6].eq_ignore_ascii_case("users/"))
            .map(|rest| &rest[6..])
    } else {
        unified
            .strip_prefix("/Users/")
            .or_else(|| unified.strip_prefix("/home/"))
    };
    rest.and_then(|rest| rest.split_once('/'))
        .is_some_and(|(user, inside)| {
            !user.is_empty()
                && !inside.is_empty()
                && !["shared", "linuxbrew", "public"].contains(&user.to_ascii_lowercase().as_str())
        })
}

/// The system whose layout alone has `path`, if one does.
fn system_folder(path: &str) -> Option<System> {
    SYSTEM_FOLDERS
        .iter()
        .find(|(folder, _)| path.starts_with(folder))
        .map(|(_, system)| *system)
        .or_else(|| path.starts_with("/Users/").then_some(System::Macos))
}

/// Why `command` with `args` may not start on `system`, if it may not.
/// Values that still hold a `${…}` placeholder are not judged: what they
/// become depends on each teammate's environment.
pub fn obstacles(command: &str, args: &[&str], system: System) -> Vec<Obstacle> {
    let mut found = Vec::new();
    let name = base_name(command);
    let lower = name.to_ascii_lowercase();
    let placeholder = |text: &str| text.contains("${");
    if !placeholder(command) {
        let windows_only = windows_path(command)
            || command.contains('\\')
            || without_windows_extension(name).is_some()
            || WINDOWS_PROGRAMS.contains(&lower.as_str());
        if windows_only {
            if system != System::Windows {
                found.push(Obstacle::WindowsOnly {
                    command: command.to_string(),
                });
            }
        } else if system == System::Windows && (command.starts_with('/') || lower.ends_with(".sh"))
        {
            found.push(Obstacle::UnixOnly {
                command: command.to_string(),
            });
        } else if system == System::Windows && BATCH_RUNNERS.contains(&name) && name == command {
            found.push(Obstacle::BatchFile {
                command: command.to_string(),
            });
        }
    }
    for text in std::iter::once(command).chain(args.iter().copied()) {
        if placeholder(text) {
            continue;
        }
        if personal(text) {
            found.push(Obstacle::PersonalPath {
                path: text.to_string(),
            });
        } else if let Some(only_on) = system_folder(text).filter(|only_on| *only_on != system) {
            // A Windows teammate already has the command's own error.
            if !(system == System::Windows && text == command) {
                found.push(Obstacle::SystemPath {
                    path: text.to_string(),
                    only_on,
                });
            }
        }
    }
    found
}

/// Why no form of a command starts on every system.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{command}` cannot start on {}: no form of it starts on every system", system.name())]
pub struct NotPortable {
    /// The command as it would be written.
    pub command: String,
    /// A system it cannot start on.
    pub system: System,
}

/// The command and arguments rewritten into the form that starts on every
/// system, where there is one: `cmd /c npx …` (and `npx.cmd`) becomes
/// `npx …`, a path to a program every system has by name becomes its name
/// (`/usr/local/bin/uvx` → `uvx`), and `/usr/bin/env X …` becomes `X …`.
/// `Ok(None)` when the command is portable as written.
pub fn portable_form(
    command: &str,
    args: &[String],
) -> Result<Option<(String, Vec<String>)>, NotPortable> {
    let mut command = command.to_string();
    let mut args = args.to_vec();
    let mut changed = false;
    loop {
        let lower = base_name(&command).to_ascii_lowercase();
        let stem = without_windows_extension(&lower)
            .unwrap_or(&lower)
            .to_string();
        if stem == "cmd" {
            // `cmd [/d] [/s] /c PROGRAM …`: the program, without cmd.
            let switches = args
                .iter()
                .take_while(|arg| arg.starts_with('/') && arg.len() == 2)
                .count();
            let runs = args[..switches]
                .iter()
                .any(|arg| arg.eq_ignore_ascii_case("/c"));
            if runs && args.len() > switches {
                command = args[switches].clone();
                args.drain(..=switches);
                changed = true;
                continue;
            }
        } else if lower == "env" && command.starts_with('/') && !args.is_empty() {
            if !args[0].starts_with('-') && !args[0].contains('=') {
                command = args.remove(0);
                changed = true;
                continue;
            }
        } else if (command.contains(['/', '\\']) || stem != lower)
            && COMMON_PROGRAMS.contains(&stem.as_str())
        {
            command = stem;
            changed = true;
            continue;
        }
        break;
    }
    let shown: Vec<&str> = args.iter().map(String::as_str).collect();
    for system in System::ALL {
        if let Some(obstacle) = obstacles(&command, &shown, system)
            .into_iter()
            .find(Obstacle::certain)
        {
            let command = match obstacle {
                Obstacle::SystemPath { path, .. } | Obstacle::PersonalPath { path } => path,
                Obstacle::WindowsOnly { command }
                | Obstacle::UnixOnly { command }
                | Obstacle::BatchFile { command } => command,
            };
            return Err(NotPortable { command, system });
        }
    }
    Ok(changed.then_some((command, args)))
}

/// One obstacle a committed server meets, on the systems it meets it on.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// The server's name.
    pub server: String,
    /// The file that defines it (`.mcp.json`).
    pub file: PathBuf,
    /// The obstacle.
    pub obstacle: Obstacle,
    /// Where the server meets it, in [`System::ALL`] order.
    pub systems: Vec<System>,
    /// The command and arguments as written.
    pub command: Vec<String>,
    /// The form that starts on every system, when there is one and it
    /// differs from what is written.
    pub portable: Option<Vec<String>>,
}

/// What the project's committed stdio servers meet on `systems`: every
/// project-scope definition (a teammate without your local override gets
/// it), with `certain_only`, only the obstacles that surely stop it.
pub fn judge_project(
    inventory: &Inventory,
    systems: &[System],
    certain_only: bool,
) -> Vec<Judgement> {
    let mut judgements: Vec<Judgement> = Vec::new();
    for sourced in &inventory.entries {
        // A server the organisation's policy blocks starts nowhere.
        if sourced.scope != Scope::Project
            || !sourced.loading.is_loaded()
            || sourced.blocked.is_some()
            || sourced.entry.transport().is_remote()
        {
            continue;
        }
        let Some(command) = sourced.entry.command() else {
            continue;
        };
        let args = sourced.entry.args();
        for system in System::ALL
            .into_iter()
            .filter(|system| systems.contains(system))
        {
            for obstacle in obstacles(command, &args, system) {
                if certain_only && !obstacle.certain() {
                    continue;
                }
                if let Some(known) = judgements.iter_mut().find(|known| {
                    known.server == sourced.name
                        && known.file == sourced.file
                        && known.obstacle == obstacle
                }) {
                    known.systems.push(system);
                    continue;
                }
                let owned: Vec<String> = args.iter().map(ToString::to_string).collect();
                judgements.push(Judgement {
                    server: sourced.name.clone(),
                    file: sourced.file.clone(),
                    obstacle,
                    systems: vec![system],
                    command: std::iter::once(command.to_string())
                        .chain(owned.iter().cloned())
                        .collect(),
                    portable: portable_form(command, &owned)
                        .ok()
                        .flatten()
                        .map(|(command, args)| std::iter::once(command).chain(args).collect()),
                });
            }
        }
    }
    judgements
}

/// `Linux`, `Linux and macOS`, `Linux, macOS and Windows`.
pub fn names_of(systems: &[System]) -> String {
    let names: Vec<&str> = systems.iter().map(|system| system.name()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_bare_npx_is_a_warning_for_windows_only() {
        let found = obstacles("npx", &["-y", "pkg"], System::Windows);
        assert_eq!(
            found,
            vec![Obstacle::BatchFile {
                command: "npx".into()
            }]
        );
        assert!(!found[0].certain());
        assert!(obstacles("npx", &["-y", "pkg"], System::Macos).is_empty());
        assert!(obstacles("npx", &["-y", "pkg"], System::Linux).is_empty());
        // uvx is a real program on Windows (uvx.exe).
        assert!(obstacles("uvx", &["pkg"], System::Windows).is_empty());
    }

    #[test]
    fn windows_forms_fail_elsewhere() {
        for command in [
            "cmd",
            "CMD.EXE",
            "npx.cmd",
            "server.exe",
            "C:\\tools\\server.exe",
            "C:/tools/server",
            "powershell",
            "tools\\server",
        ] {
            let found = obstacles(command, &[], System::Macos);
            assert!(
                matches!(found.as_slice(), [Obstacle::WindowsOnly { .. }]),
                "{command}: {found:?}"
            );
            assert!(
                obstacles(command, &[], System::Windows).is_empty(),
                "{command}"
            );
        }
    }

    #[test]
    fn unix_paths_fail_on_windows() {
        for command in ["/usr/local/bin/server", "./start.sh", "/opt/mcp/run"] {
            let found = obstacles(command, &[], System::Windows);
            assert!(
                matches!(found.as_slice(), [Obstacle::UnixOnly { .. }]),
                "{command}: {found:?}"
            );
            assert!(
                obstacles(command, &[], System::Linux).is_empty(),
                "{command}"
            );
        }
    }

    #[test]
    fn paths_of_one_layout_or_one_person() {
        assert_eq!(
            obstacles("/opt/homebrew/bin/uvx", &[], System::Linux),
            vec![Obstacle::SystemPath {
                path: "/opt/homebrew/bin/uvx".into(),
                only_on: System::Macos
            }]
        );
        assert!(obstacles("/opt/homebrew/bin/uvx", &[], System::Macos).is_empty());
        assert_eq!(
            obstacles("node", &["/Users/ada/mcp/server.js"], System::Macos),
            vec![Obstacle::PersonalPath {
                path: "/Users/ada/mcp/server.js".into()
            }]
        );
        assert_eq!(
            obstacles("node", &["C:\\Users\\ada\\server.js"], System::Windows),
            vec![Obstacle::PersonalPath {
                path: "C:\\Users\\ada\\server.js".into()
            }]
        );
        assert!(obstacles("node", &["/home/linuxbrew/x"], System::Linux).is_empty());
        // A placeholder depends on each teammate's environment.
        assert!(obstacles("${HOME}/bin/server", &["${PWD}/x"], System::Windows).is_empty());
        // Neither a flag nor a relative path is judged.
        assert!(obstacles("node", &["--port=3000", "dist/index.js"], System::Windows).is_empty());
    }

    #[test]
    fn the_portable_form_unwraps_cmd_and_paths_to_common_programs() {
        assert_eq!(
            portable_form("cmd", &strings(&["/c", "npx", "-y", "pkg"])),
            Ok(Some(("npx".into(), strings(&["-y", "pkg"]))))
        );
        assert_eq!(
            portable_form("cmd.exe", &strings(&["/d", "/s", "/C", "npx.cmd", "pkg"])),
            Ok(Some(("npx".into(), strings(&["pkg"]))))
        );
        assert_eq!(
            portable_form("/opt/homebrew/bin/uvx", &strings(&["mcp-server-git"])),
            Ok(Some(("uvx".into(), strings(&["mcp-server-git"]))))
        );
        assert_eq!(
            portable_form("/usr/bin/env", &strings(&["python3", "server.py"])),
            Ok(Some(("python3".into(), strings(&["server.py"]))))
        );
        assert_eq!(portable_form("npx", &strings(&["-y", "pkg"])), Ok(None));
    }

    #[test]
    fn what_has_no_portable_form_says_where_it_fails() {
        assert_eq!(
            portable_form("./start.sh", &[]),
            Err(NotPortable {
                command: "./start.sh".into(),
                system: System::Windows
            })
        );
        assert_eq!(
            portable_form("cmd", &strings(&["/c", "server.exe"])),
            Err(NotPortable {
                command: "server.exe".into(),
                system: System::Linux
            })
        );
        assert_eq!(
            portable_form("node", &strings(&["/Users/ada/server.js"])),
            Err(NotPortable {
                command: "/Users/ada/server.js".into(),
                system: System::Linux
            })
        );
        // A cmd that runs nothing is left as it is, and is Windows-only.
        assert!(portable_form("cmd", &strings(&["/k"])).is_err());
    }
}
