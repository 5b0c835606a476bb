//! Where values of `${VAR}` placeholders can come from: the project's
//! dotenv files (nearest directory first), the user's store, Claude Code's
//! settings `env` and the process environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::approval;
use crate::config::claude_code::blanked;
use crate::config::locate::Locations;
use crate::envfiles::dotenv::{self, DotEnv};

/// The dotenv files of one directory holding a `.mcp.json` in effect.
#[derive(Debug, Clone)]
pub struct ProjectEnv {
    /// The directory.
    pub dir: PathBuf,
    /// Its `.env.local`.
    pub local: DotEnv,
    /// Its `.env`.
    pub dotenv: DotEnv,
    /// Its `.env.example`.
    pub example: DotEnv,
}

/// Where values of variables can come from, as Claude Code and `mcpenv run`
/// see them.
#[derive(Debug, Clone)]
pub struct EnvSources {
    /// The process environment.
    pub process: BTreeMap<String, String>,
    /// The dotenv files of each directory whose `.mcp.json` is in effect,
    /// nearest first ([`Locations::env_dirs`]); never empty, the first is
    /// the project root's.
    pub projects: Vec<ProjectEnv>,
    /// The user's own store (`~/.config/mcpenv/.env`): the secrets of
    /// user-scope servers, which every project needs and none may hold.
    pub user_dotenv: DotEnv,
    /// The `env` maps of Claude Code's settings files it applies, highest
    /// precedence first.
    pub settings: Vec<(PathBuf, BTreeMap<String, String>)>,
    /// The settings files among them whose `env` feeds `${VAR}` only in
    /// interactive sessions: the project's `.claude/settings.json` and
    /// `.claude/settings.local.json`. Claude Code 2.1.332 leaves the
    /// placeholders of `claude -p` literal (their values reach the stdio
    /// child's environment only) and does not apply them at all in
    /// `claude mcp list` and `get`.
    pub interactive_only: Vec<PathBuf>,
}

impl EnvSources {
    /// Reads every source for `locations`; a file that cannot be read is an
    /// error naming it, a malformed line is a problem inside its `DotEnv`.
    pub fn load(
        locations: &Locations,
        user_env: &Path,
        process: BTreeMap<String, String>,
    ) -> Result<Self, dotenv::DotEnvError> {
        let mut settings = Vec::new();
        let mut candidates = vec![locations.managed_settings()];
        if !approval::local_settings_gated(locations) {
            candidates.push(locations.local_settings());
        }
        candidates.push(locations.project_settings());
        candidates.push(locations.user_settings());
        for path in candidates {
            if let Some(values) = settings_env(&path) {
                settings.push((path, values));
            }
        }
        let interactive_only = vec![locations.local_settings(), locations.project_settings()];
        let projects = locations
            .env_dirs()
            .into_iter()
            .map(|dir| {
                Ok(ProjectEnv {
                    local: dotenv::read(&dir.join(".env.local"))?,
                    dotenv: dotenv::read(&dir.join(".env"))?,
                    example: dotenv::read(&dir.join(".env.example"))?,
                    dir,
                })
            })
            .collect::<Result<_, dotenv::DotEnvError>>()?;
        Ok(Self {
            process,
            projects,
            user_dotenv: dotenv::read(user_env)?,
            settings,
            interactive_only,
        })
    }

    /// The project root's files: where project writes go.
    pub fn project(&self) -> &ProjectEnv {
        &self.projects[0]
    }

    /// The dotenv files `mcpenv run` loads, highest precedence first (the
    /// environment beats them all): each directory's `.env.local` then its
    /// `.env`, nearest directory first, then the user's store.
    pub fn dotenv_paths(locations: &Locations, user_env: &Path) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = locations
            .env_dirs()
            .into_iter()
            .flat_map(|dir| [dir.join(".env.local"), dir.join(".env")])
            .collect();
        paths.push(user_env.to_path_buf());
        paths
    }

    /// The dotenv files as read, in the order of [`Self::dotenv_paths`].
    pub fn dotenv_files(&self) -> Vec<&DotEnv> {
        self.projects
            .iter()
            .flat_map(|project| [&project.local, &project.dotenv])
            .chain([&self.user_dotenv])
            .collect()
    }

    /// Whether every way of starting Claude Code sees `name`: set in the
    /// environment or in a settings file whose `env` every launch applies.
    pub(crate) fn every_launch_sees(&self, name: &str) -> bool {
        self.process.contains_key(name)
            || self.settings.iter().any(|(path, values)| {
                values.contains_key(name) && !self.interactive_only.contains(path)
            })
    }

    /// Whether Claude Code runs in scrub mode
    /// (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`): secret-looking names are then
    /// blanked in every server's values.
    pub fn scrub(&self) -> bool {
        blanked::scrub_on(
            self.process
                .get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB")
                .map(String::as_str),
        )
    }

    /// The value Claude Code started now would see, and where it comes from.
    pub(crate) fn for_claude(&self, name: &str) -> Option<(String, String)> {
        if let Some(value) = self.process.get(name) {
            return Some((value.clone(), "environment".to_string()));
        }
        self.settings.iter().find_map(|(path, values)| {
            values
                .get(name)
                .map(|value| (value.clone(), path.display().to_string()))
        })
    }

    /// The value `mcpenv run` adds from the dotenv files, and which file.
    pub(crate) fn in_files(&self, name: &str) -> Option<(String, String)> {
        self.dotenv_files().into_iter().find_map(|file| {
            file.get(name)
                .map(|value| (value.to_string(), file.path.display().to_string()))
        })
    }

    /// Every variable `mcpenv run` would set from the files, with values.
    pub fn file_values(&self) -> BTreeMap<String, String> {
        let mut values = BTreeMap::new();
        // Lowest precedence first: a later file overwrites.
        for file in self.dotenv_files().into_iter().rev() {
            for (name, value) in file.entries() {
                values.insert(name.to_owned(), value.to_owned());
            }
        }
        values
    }
}

fn settings_env(path: &Path) -> Option<BTreeMap<String, String>> {
    let text = crate::mechanics::fsx::read_if_exists(path).ok()??;
    let value: serde_json::Value =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let env = value.get("env")?.as_object()?;
    Some(
        env.iter()
            .filter_map(|(name, value)| {
                value
                    .as_str()
                    .map(|value| (name.clone(), value.to_string()))
            })
            .collect(),
    )
}
