//! The steps of a use case that writes several files: the project's and
//! the user's `.env` (with `.env.example`) first, then the configs, each
//! recorded in a [`Progress`] so a failure names what was written already.

use std::path::{Path, PathBuf};

use crate::config::claude_settings::{Gate, SettingsError};
use crate::config::store::{self, Progress};
use crate::envfiles::{self, EnvFiles};
use crate::ops::extraction_inputs::env_error;
use crate::ops::{Context, Error, Kind};
use crate::secrets::extraction_plan::ExtractionPlan;

/// The refusal to write `.claude/settings.local.json` where Claude Code
/// would ignore it (`gate`), with what to do about it.
pub fn settings_ignored(ctx: &Context, gate: Gate) -> Error {
    let path = ctx.locations.local_settings();
    let why = match gate {
        Gate::NotInRepository => {
            "Claude Code reads this file only inside a git repository (`git init` makes one)"
        }
        Gate::DirectorySymlink | Gate::FileSymlink => {
            "Claude Code does not read it through a symbolic link; replace the link with a real directory or file"
        }
        Gate::NestedRepository => {
            "Claude Code does not read it when `.claude` is a repository of its own"
        }
        Gate::Tracked => {
            "Claude Code 2.1.332 ignores a committed copy until the folder is trusted, and past that it would hand your choices to everyone who clones; stop tracking it with `git rm --cached .claude/settings.local.json`"
        }
    };
    Error::new(
        Kind::Failure,
        Box::new(SettingsError::Ignored { path, gate }),
    )
    .with_hint(why)
}

/// Saves `values` into the project's `.env` and documents `example` in its
/// `.env.example` (see [`envfiles::save`]); returns the files written.
pub fn save_project_env(
    ctx: &Context,
    values: &[(String, String)],
    example: &[crate::envfiles::dotenv::ExampleLine],
    force: bool,
) -> Result<Vec<PathBuf>, Error> {
    let mut progress = Progress::default();
    save_project_env_with(ctx, values, example, force, &mut progress)?;
    Ok(progress.into_written())
}

/// The [`Progress`] of a command that saves the values of an extraction
/// `plan` (with the `.env.example` lines it documents), in the order
/// [`save_plan_env_with`] writes them, then each of `configs`; what an
/// interrupted earlier run left for any of them is cleared first. A
/// repository's file among them that leads out of the repository is
/// refused before any is written.
pub fn begin_writes(
    ctx: &Context,
    env: Option<(&ExtractionPlan, &[crate::envfiles::dotenv::ExampleLine])>,
    configs: &[&Path],
) -> Result<Progress, Error> {
    let mut progress = Progress::default();
    if let Some((plan, example)) = env {
        let user = ctx.user_env_file();
        if !plan.values_for(&user).is_empty() {
            progress.plan(&user);
        }
        if saves_project(ctx, plan, example) {
            let files = EnvFiles::at(&ctx.locations.project_root());
            for path in envfiles::planned(&files, &plan.values_for(&files.env), example) {
                progress.plan(path);
            }
        }
    }
    for config in configs {
        progress.plan(*config);
    }
    check_confined(progress.left())?;
    tidy(ctx, progress.left());
    Ok(progress)
}

/// Refuses, before anything is written, when one of `paths` is a
/// repository's file that leads out of the repository.
pub fn check_confined<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Result<(), Error> {
    for path in paths {
        envfiles::check_confined(path).map_err(env_error)?;
    }
    Ok(())
}

/// Whether saving `plan` touches the project's files: a secret of a
/// project or local server, or lines for `.env.example`. The secrets of
/// user servers alone leave the repository alone.
fn saves_project(
    ctx: &Context,
    plan: &ExtractionPlan,
    example: &[crate::envfiles::dotenv::ExampleLine],
) -> bool {
    let user = ctx.user_env_file();
    !example.is_empty() || plan.moves.iter().any(|moved| moved.env_file != user)
}

/// Saves the values of an extraction `plan` where each belongs (the
/// user's store first, then the project's `.env`, `.env.example` and
/// `.gitignore`; see [`save_project_env_with`]), recording each file in
/// `progress`.
pub fn save_plan_env_with(
    ctx: &Context,
    plan: &ExtractionPlan,
    example: &[crate::envfiles::dotenv::ExampleLine],
    force: bool,
    progress: &mut Progress,
) -> Result<(), Error> {
    let user = ctx.user_env_file();
    envfiles::save_user_with(
        &ctx.edit,
        &user,
        &ctx.locations.state_dir,
        &plan.values_for(&user),
        force,
        progress,
    )
    .map_err(|error| env_error(error).interrupted(progress))?;
    if saves_project(ctx, plan, example) {
        let project = EnvFiles::at(&ctx.locations.project_root()).env;
        save_project_env_with(ctx, &plan.values_for(&project), example, force, progress)?;
    }
    Ok(())
}

/// [`save_project_env`] as one step of a command that writes several
/// files: each file is recorded in `progress`, and a failure names the
/// files already written.
pub fn save_project_env_with(
    ctx: &Context,
    values: &[(String, String)],
    example: &[crate::envfiles::dotenv::ExampleLine],
    force: bool,
    progress: &mut Progress,
) -> Result<(), Error> {
    let files = EnvFiles::at(&ctx.locations.project_root());
    envfiles::save_with(
        &ctx.edit,
        &files,
        &ctx.locations.state_dir,
        values,
        example,
        force,
        progress,
    )
    .map_err(|error| env_error(error).interrupted(progress))
}

/// Clears what an interrupted earlier run left for each of `paths`
/// ([`store::tidy`]), so a second run that finds nothing to do still
/// leaves no temporary file or stale lock behind.
pub fn tidy<'a>(ctx: &Context, paths: impl IntoIterator<Item = &'a PathBuf>) {
    for path in paths {
        store::tidy(&ctx.edit, &ctx.locations.state_dir, path);
    }
}
