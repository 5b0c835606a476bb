//! Arguments + process environment → the resolved context commands run in.
//! The only place that reads `std::env`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::check::EnvSources;
use crate::cli::args::{Cli, ColorWhen, ScopeArg};
use crate::cli::error::{CliError, Kind};
use crate::cli::output::Shield;
use crate::dotenv::DotEnvError;
use crate::error::ConfigError;
use crate::layered::Inventory;
use crate::locate::{Environment, Locations};
use crate::scope::Scope;

pub use crate::display::shell_words;

/// Every environment variable mcpenv reads.
pub mod vars {
    /// Claude Code's configuration directory; replaces `$HOME` for
    /// `.claude.json` and `~/.claude` for its data, exactly as in Claude Code.
    pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
    /// Your home directory (through `std::env::home_dir`).
    pub const HOME: &str = "HOME";
    /// Directory of Claude Code's managed (enterprise) files; defaults to
    /// `/etc/claude-code`. Mostly for tests.
    pub const MCPENV_MANAGED_DIR: &str = "MCPENV_MANAGED_DIR";
    /// Set to anything to disable colour (honoured by `--color auto`).
    pub const NO_COLOR: &str = "NO_COLOR";
    /// Set to force colour on (honoured by `--color auto`).
    pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
    /// Where other clients keep user config (`~/.config` when unset).
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
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
    /// Every variable is also read as a possible value of a `${VAR}`
    /// placeholder: `extract` never gives a secret a name that already
    /// holds a different value in the environment.
    pub const ALL_FOR_PLACEHOLDERS: &str = "(all)";
}

/// Where Claude Code keeps managed files on Linux.
const DEFAULT_MANAGED_DIR: &str = "/etc/claude-code";

/// What every command gets: resolved locations and output settings.
#[derive(Debug)]
pub struct Ctx {
    /// Every file location for this working directory.
    pub locations: Locations,
    /// `-q`: data and errors only.
    pub quiet: bool,
    /// `-C DIR` as given, repeated in suggested commands.
    pub project_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, or `~/.config`.
    pub config_home: PathBuf,
    /// The process environment, for resolving placeholders.
    pub process_env: BTreeMap<String, String>,
    /// The user's templates folder (`~/.config/mcpenv/templates` on Linux).
    pub user_templates: Option<PathBuf>,
    /// Every secret this run knows of, masked in all output.
    pub shield: Arc<Shield>,
}

impl Ctx {
    /// Every scope's servers; their secrets are learned by the shield, so
    /// no output of this run prints one whole.
    pub fn inventory(&self) -> Result<Inventory, ConfigError> {
        let inventory = Inventory::load(&self.locations)?;
        self.shield.learn_inventory(&inventory);
        Ok(inventory)
    }

    /// The project's `.env` files, settings `env` and the environment, with
    /// their secrets learned by the shield.
    pub fn env_sources(&self) -> Result<EnvSources, CliError> {
        let sources = EnvSources::load(
            &self.locations,
            &self.user_env_file(),
            self.process_env.clone(),
        )
        .map_err(dotenv_error)?;
        self.shield.learn_sources(&sources);
        Ok(sources)
    }

    /// The user's own dotenv store, `$XDG_CONFIG_HOME/mcpenv/.env`: the
    /// secrets of user-scope servers, used in every project and so kept in
    /// no repository.
    pub fn user_env_file(&self) -> PathBuf {
        self.config_home.join("mcpenv").join(".env")
    }

    /// The dotenv file the secrets of a `scope` server go to: the user's
    /// store for user scope, else the project's `.env`.
    pub fn env_file_for(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.user_env_file(),
            Scope::Project | Scope::Local => {
                crate::envfiles::EnvFiles::at(&self.locations.project_root()).env
            }
        }
    }

    /// Learns whatever the command did not load itself, before anything is
    /// printed. Files that cannot be read teach nothing (the command has
    /// reported them, or did not need them).
    pub fn learn_world(&self) {
        let (inventory, sources) = self.shield.knows_world();
        if !inventory {
            let _ = self.inventory();
        }
        if !sources {
            let _ = self.env_sources();
        }
    }
}

impl Ctx {
    /// Where templates are looked for.
    pub fn template_dirs(&self) -> crate::templates::TemplateDirs {
        crate::templates::TemplateDirs {
            project: self
                .locations
                .project_root()
                .join(".mcpenv")
                .join("templates"),
            user: self.user_templates.clone(),
        }
    }
}

impl Ctx {
    /// `mcpenv` (with `-C DIR` when given) followed by `rest`, quoted for a
    /// shell, for hints that suggest a command.
    pub fn command(&self, rest: &[&str]) -> String {
        let mut words = self.mcpenv_words();
        words.extend(rest.iter().map(|word| (*word).to_string()));
        shell_words(&words)
    }

    /// `mcpenv`, with `-C DIR` when given.
    fn mcpenv_words(&self) -> Vec<String> {
        let mut words = vec!["mcpenv".to_string()];
        if let Some(dir) = &self.project_dir {
            words.push("-C".to_string());
            words.push(dir.display().to_string());
        }
        words
    }

    /// The context the use cases in [`crate::ops`] run in.
    pub fn ops(&self) -> crate::ops::Context {
        crate::ops::Context {
            locations: self.locations.clone(),
            process_env: self.process_env.clone(),
            template_dirs: self.template_dirs(),
            user_env_file: self.user_env_file(),
            mcpenv: self.mcpenv_words(),
        }
    }
}

/// The error for `.env` files that cannot be read.
pub fn dotenv_error(error: DotEnvError) -> CliError {
    let hint = crate::ops::hints::dotenv_hint(&error);
    CliError::failure_from("cannot read the `.env` files", error).with_hint(hint)
}

/// Resolves the context for `cli`.
pub fn resolve(cli: &Cli, shield: Arc<Shield>) -> Result<Ctx, CliError> {
    let home = std::env::home_dir()
        .filter(|home| !home.as_os_str().is_empty())
        .ok_or_else(|| {
            CliError::failure("cannot find your home directory")
                .with_hint("set HOME to your home directory")
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
    };
    let locations = Locations::discover(&environment).map_err(|error| {
        let hint = if cli.project_dir.is_some() {
            "check the directory given to `-C`"
        } else {
            "cd to an existing directory"
        };
        CliError::new(Kind::Failure, Box::new(error)).with_hint(hint)
    })?;
    let config_home =
        non_empty(vars::XDG_CONFIG_HOME).unwrap_or_else(|| locations.home.join(".config"));
    let process_env = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    Ok(Ctx {
        locations,
        quiet: cli.quiet,
        project_dir: cli.project_dir.clone(),
        config_home,
        process_env,
        user_templates,
        shield,
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
        Some(dir) => match crate::fsx::check_writable_dir(&dir.join("locks")) {
            Ok(()) => return (dir.clone(), None),
            Err(error) => error.to_string(),
        },
        None => "there is no home directory".to_string(),
    };
    let fallback = std::env::temp_dir().join(format!("mcpenv-{}", nix::unistd::geteuid().as_raw()));
    let shown = preferred.as_ref().map_or_else(
        || "mcpenv's state directory".to_string(),
        |dir| format!("mcpenv's state directory `{}`", dir.display()),
    );
    match crate::fsx::private_dir(&fallback) {
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
