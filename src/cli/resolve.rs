//! Arguments + process environment → the resolved context commands run in.
//! The only place that reads `std::env`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::args::{Cli, ColorWhen, ScopeArg};
use crate::cli::error::{CliError, Kind};
use crate::cli::output::Shield;
use crate::config::locate::{Environment, Locations};
use crate::config::scope::Scope;

pub use crate::mechanics::display::shell_words;

/// Every environment variable mcpenv reads.
pub mod vars {
    /// Claude Code's configuration directory; replaces `$HOME` for
    /// `.claude.json` and `~/.claude` for its data, exactly as in Claude Code.
    pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
    /// Your home directory (through `std::env::home_dir`).
    pub const HOME: &str = "HOME";
    /// Directory of Claude Code's managed (enterprise) files
    /// (`managed-settings.json`, `managed-mcp.json`); defaults to the
    /// system's own, as Claude Code 2.1.332 has it: `/etc/claude-code`,
    /// `/Library/Application Support/ClaudeCode` on macOS,
    /// `C:\Program Files\ClaudeCode` on Windows. Claude Code itself has no
    /// such variable: this is for tests.
    pub const MCPENV_MANAGED_DIR: &str = "MCPENV_MANAGED_DIR";
    /// Set to anything to disable colour (honoured by `--color auto`).
    pub const NO_COLOR: &str = "NO_COLOR";
    /// The width text tables fit in (else the terminal's width; a pipe gets
    /// full lines).
    pub const COLUMNS: &str = "COLUMNS";
    /// Set to force colour on (honoured by `--color auto`).
    pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
    /// Where other clients keep user config (`~/.config` when unset).
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
    /// On Windows, the user's config folder when `XDG_CONFIG_HOME` is unset
    /// (Claude Desktop's and VS Code's files, mcpenv's user store).
    #[cfg(windows)]
    pub const APPDATA: &str = "APPDATA";
    /// mcpenv's lock files live in `$XDG_STATE_HOME/mcpenv` (default
    /// `~/.local/state/mcpenv`; read through the `directories` crate).
    pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
    /// When that cannot be created or written, lock files go to
    /// `$TMPDIR/mcpenv-<uid>` (default `/tmp`; read through
    /// `std::env::temp_dir`).
    pub const TMPDIR: &str = "TMPDIR";
    /// `add --client-secret` reads the OAuth client secret from it, as
    /// `claude mcp add` does, before asking at a terminal.
    pub const MCP_CLIENT_SECRET: &str = "MCP_CLIENT_SECRET";
    /// `off`: edits keep no undo copies (nothing for `mcpenv undo`).
    pub const MCPENV_UNDO: &str = "MCPENV_UNDO";
    /// mcpenv's layout cache (where the objects of the last few
    /// `~/.claude.json` texts it read are, so the same bytes are not
    /// validated twice) lives in `$XDG_CACHE_HOME/mcpenv` (default
    /// `~/.cache/mcpenv`; read through the `directories` crate).
    pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
    /// `off`: no layout cache; every reading of `~/.claude.json` validates
    /// it whole (for tests and benchmarks).
    pub const MCPENV_LAYOUT_CACHE: &str = "MCPENV_LAYOUT_CACHE";
    /// Set by the shell's completion script: the process answers with
    /// completions (read first, by `cli/completion.rs`, before any
    /// argument is parsed).
    pub const MCPENV_COMPLETE: &str = crate::cli::completion::VAR;
    /// Claude Code's scrub mode, which blanks secret-looking names for the
    /// servers it starts (`check` and `probe` model it); read from the
    /// process environment handed to the use cases.
    pub const CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: &str = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB";
    /// Every variable is also read as a possible value of a `${VAR}`
    /// placeholder: `extract` never gives a secret a name that already
    /// holds a different value in the environment.
    pub const ALL_FOR_PLACEHOLDERS: &str = "(all)";
}

/// Whether `MCPENV_UNDO=off` asks edits to keep no undo copies.
pub fn undo_off() -> bool {
    std::env::var_os(vars::MCPENV_UNDO).is_some_and(|value| value == "off")
}

/// Where Claude Code keeps managed files on this system.
const DEFAULT_MANAGED_DIR: &str = crate::config::managed_policy::DEFAULT_MANAGED_DIR;

/// What every command gets: the use cases' context and output settings.
#[derive(Debug)]
pub struct Ctx {
    /// Locations, environment, templates and the shield: what the use
    /// cases in [`crate::ops`] run in.
    pub ops: crate::ops::Context,
    /// `-q`: data and errors only.
    pub quiet: bool,
    /// `-C DIR` as given, repeated in suggested commands.
    pub project_dir: Option<PathBuf>,
}

/// A command reaches the use cases' context (`ctx.locations`,
/// `ctx.inventory()`) as its own, and passes `&ctx` where a use case wants
/// `&ops::Context`.
impl std::ops::Deref for Ctx {
    type Target = crate::ops::Context;

    fn deref(&self) -> &Self::Target {
        &self.ops
    }
}

/// The error for `.env` files that cannot be read.
pub use crate::ops::dotenv_error;

/// Resolves the context for `cli`.
pub fn resolve(cli: &Cli, shield: Arc<Shield>) -> Result<Ctx, CliError> {
    let home = std::env::home_dir()
        .filter(|home| !home.as_os_str().is_empty())
        .ok_or_else(|| {
            CliError::failure("cannot find your home directory").with_hint(if cfg!(windows) {
                "set USERPROFILE to your home folder"
            } else {
                "set HOME to your home directory"
            })
        })?;
    let current = std::env::current_dir().map_err(|error| {
        CliError::failure_from("cannot read the current directory", error)
            .with_hint("cd to an existing directory, or pass `-C DIR`")
    })?;
    let working_dir = match &cli.project_dir {
        Some(dir) => current.join(dir),
        None => current,
    };
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    crate::cli::output::set_width(std::env::var(vars::COLUMNS).ok().as_deref());
    let dirs = directories::ProjectDirs::from("", "", "mcpenv");
    let (state_dir, state_note) = state_dir(dirs.as_ref());
    if let Some(note) = state_note.filter(|_| !cli.quiet && may_write(&cli.command)) {
        let _ = crate::cli::render::warning(&mut anstream::stderr().lock(), &note);
    }
    let user_templates = dirs
        .as_ref()
        .map(|dirs| dirs.config_dir().join("templates"));
    let environment = Environment {
        home,
        claude_config_dir: non_empty(vars::CLAUDE_CONFIG_DIR),
        working_dir,
        managed_dir: non_empty(vars::MCPENV_MANAGED_DIR)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_MANAGED_DIR)),
        state_dir,
        layout_cache: layout_cache(dirs.as_ref(), &cli.command),
    };
    let locations = Locations::discover(&environment).map_err(|error| {
        let hint = if cli.project_dir.is_some() {
            "check the directory given to `-C`"
        } else {
            "cd to an existing directory"
        };
        CliError::new(Kind::Failure, Box::new(error)).with_hint(hint)
    })?;
    // On Windows the user's config folder is `%APPDATA%`, where Claude
    // Desktop and VS Code keep theirs; `~/.config` elsewhere.
    #[cfg(windows)]
    let default_config_home = non_empty(vars::APPDATA);
    #[cfg(not(windows))]
    let default_config_home = None;
    let config_home = non_empty(vars::XDG_CONFIG_HOME)
        .or(default_config_home)
        .unwrap_or_else(|| locations.home.join(".config"));
    let process_env = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let template_dirs = crate::templates::TemplateDirs {
        project: locations.project_root().join(".mcpenv").join("templates"),
        user: user_templates,
    };
    let mut mcpenv = vec!["mcpenv".to_string()];
    if let Some(dir) = &cli.project_dir {
        mcpenv.push("-C".to_string());
        mcpenv.push(dir.display().to_string());
    }
    Ok(Ctx {
        ops: crate::ops::Context {
            locations,
            process_env,
            template_dirs,
            config_home,
            mcpenv,
            shield,
            mcpenv_program: std::env::current_exe().ok(),
            edit: crate::mechanics::edits::Edit::plain(),
        },
        quiet: cli.quiet,
        project_dir: cli.project_dir.clone(),
    })
}

/// The layout cache, in mcpenv's cache directory; none under
/// `MCPENV_LAYOUT_CACHE=off`; read, not written, by a dry run.
fn layout_cache(
    dirs: Option<&directories::ProjectDirs>,
    command: &crate::cli::args::Command,
) -> Option<crate::mechanics::layout_cache::Setting> {
    if std::env::var_os(vars::MCPENV_LAYOUT_CACHE).is_some_and(|value| value == "off") {
        return None;
    }
    dirs.map(|dirs| crate::mechanics::layout_cache::Setting {
        file: dirs
            .cache_dir()
            .join(crate::mechanics::layout_cache::FILE_NAME),
        write: !matches!(command.edit(), Some((_, true))),
    })
}

/// mcpenv's state directory (its lock files): `$XDG_STATE_HOME/mcpenv`
/// (`~/.local/state/mcpenv`) when it can be created and written. When it
/// cannot (a read-only HOME, a file in the way), a private per-user directory
/// in the temporary directory (`$TMPDIR/mcpenv-<uid>`, mode 0700, owned by
/// this user, not a symlink), so that writing a project's `.mcp.json` never
/// depends on a writable HOME; with the note that says so. Nothing is created
/// in the preferred place here: it is only checked.
fn state_dir(dirs: Option<&directories::ProjectDirs>) -> (PathBuf, Option<String>) {
    let preferred = dirs.map(|dirs| dirs.state_dir().unwrap_or(dirs.cache_dir()).to_path_buf());
    let reason = match &preferred {
        Some(dir) => match crate::mechanics::fsx::check_writable_dir(&dir.join("locks")) {
            Ok(()) => return (dir.clone(), None),
            Err(error) => error.to_string(),
        },
        None => "there is no home directory".to_string(),
    };
    // The user's number on Unix, where the temporary folder is shared; on
    // Windows it is the user's own (`%LOCALAPPDATA%\Temp`) already.
    #[cfg(unix)]
    let fallback = std::env::temp_dir().join(format!("mcpenv-{}", nix::unistd::geteuid().as_raw()));
    #[cfg(not(unix))]
    let fallback = std::env::temp_dir().join("mcpenv");
    let shown = preferred.as_ref().map_or_else(
        || "mcpenv's state directory".to_string(),
        |dir| format!("mcpenv's state directory `{}`", dir.display()),
    );
    match crate::mechanics::fsx::private_dir(&fallback) {
        Ok(()) => (
            fallback.clone(),
            Some(format!(
                "{shown} cannot be used ({reason}); lock files go to `{}` instead",
                fallback.display()
            )),
        ),
        // Neither: keep the preferred one, whose lock error names the path.
        Err(error) => (
            preferred.unwrap_or(fallback),
            Some(format!(
                "{shown} cannot be used ({reason}), nor can the fallback ({error})"
            )),
        ),
    }
}

/// Whether `command` may take a lock (write a file), so that a fallback of
/// the state directory is worth a note.
fn may_write(command: &crate::cli::args::Command) -> bool {
    use crate::cli::args::Command;
    matches!(
        command,
        Command::Add(_)
            | Command::AddJson(_)
            | Command::Remove(_)
            | Command::Extract(_)
            | Command::Share(_)
            | Command::Onboard(_)
            | Command::Import(_)
            | Command::Export(_)
    )
}

/// The colour choice for `--color`; `auto` lets anstream apply NO_COLOR,
/// CLICOLOR_FORCE and terminal detection.
pub fn color_choice(when: ColorWhen) -> anstream::ColorChoice {
    match when {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    }
}

impl From<ScopeArg> for Scope {
    fn from(scope: ScopeArg) -> Self {
        match scope {
            ScopeArg::Local => Self::Local,
            ScopeArg::Project => Self::Project,
            ScopeArg::User | ScopeArg::Global => Self::User,
        }
    }
}
