//! One file per subcommand, each `run(ctx, args) -> Result<Report, CliError>`.

pub mod add;
pub mod add_json;
pub mod add_oauth;
pub mod add_words;
pub mod approve;
pub mod check;
pub mod env;
pub mod export;
pub mod extract;
pub mod get;
pub mod import;
pub mod list;
pub mod onboard;
pub mod probe;
pub mod reap;
pub mod reject;
pub mod remove;
pub mod reset_project_choices;
pub mod run;
pub mod scan;
pub mod serve;
pub mod share;
pub mod templates;

use std::path::{Path, PathBuf};

use crate::claude_settings::{Gate, SettingsError};
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::envfiles::{self, EnvFiles};
use crate::extract::ExtractionPlan;
use crate::layered::Inventory;
use crate::scope::Scope;
use crate::store::{self, Progress};

/// The refusal to write `.claude/settings.local.json` where Claude Code
/// would ignore it (`gate`), with what to do about it.
pub fn settings_ignored(ctx: &Ctx, gate: Gate) -> CliError {
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
    CliError::new(
        crate::cli::error::Kind::Failure,
        Box::new(SettingsError::Ignored { path, gate }),
    )
    .with_hint(why)
}

/// How a scope's file is shown: local entries also name the project key.
pub fn scope_file(ctx: &Ctx, scope: Scope, path: &Path) -> String {
    match scope {
        Scope::Local => format!(
            "`{}` (project `{}`)",
            path.display(),
            ctx.locations.local_key
        ),
        Scope::Project | Scope::User => format!("`{}`", path.display()),
    }
}

/// A path as shown in tables: relative to the working directory inside
/// the project, `~/…` under the home directory, else absolute.
pub fn shown_path(ctx: &Ctx, path: &Path) -> String {
    let locations = &ctx.locations;
    if let Ok(relative) = path.strip_prefix(&locations.working_dir) {
        return relative.display().to_string();
    }
    // A monorepo root's `.env` seen from a package: `../../.env`.
    if let (Some(root), Some(dir)) = (&locations.git_root, path.parent())
        && dir.starts_with(root)
        && let Some(name) = crate::locate::upward_name(path, &locations.working_dir)
    {
        return name;
    }
    locations.display(path)
}

/// `Moved SERVER FIELD into FILE as VAR (masked)` for each moved secret
/// (`Would move` in a dry run); `env_files` holds each move's dotenv file
/// as shown ([`shown_env_file`]).
pub fn write_moves(
    err: &mut dyn std::io::Write,
    moves: &[crate::extract::Move],
    env_files: &[String],
    dry_run: bool,
) -> std::io::Result<()> {
    let verb = if dry_run { "Would move" } else { "Moved" };
    for (moved, file) in moves.iter().zip(env_files) {
        writeln!(
            err,
            "{verb} {} {} into `{file}` as `{}` ({})",
            crate::display::escape(&moved.server),
            crate::display::escape(&moved.field.to_string()),
            moved.variable,
            moved.value
        )?;
    }
    Ok(())
}

/// Each move's dotenv file as shown, for [`write_moves`].
pub fn shown_env_files(ctx: &Ctx, moves: &[crate::extract::Move]) -> Vec<String> {
    moves
        .iter()
        .map(|moved| shown_env_file(ctx, &moved.env_file))
        .collect()
}

/// The candidate within two edits of `name` (the nearest), for "did you mean".
pub fn closest<'a, S: AsRef<str>>(candidates: &'a [S], name: &str) -> Option<&'a str> {
    candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|candidate| strsim::levenshtein(candidate, name) <= 2)
        .min_by_key(|candidate| strsim::levenshtein(candidate, name))
}

/// Hints for a name that is not defined where it was looked for: a close
/// match, or the names that exist.
pub fn unknown_name_hints(ctx: &Ctx, inventory: &Inventory, name: &str) -> Vec<String> {
    let names = inventory.names();
    if names.is_empty() {
        return vec![format!(
            "no MCP servers are configured here; add one with `{}`",
            ctx.command(&["add", "NAME", "--", "COMMAND"])
        )];
    }
    match closest(&names, name) {
        Some(close) => vec![format!("a server with a similar name exists: `{close}`")],
        None => {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            let shown: Vec<String> = sorted
                .iter()
                .take(8)
                .map(|name| format!("`{name}`"))
                .collect();
            let more = if sorted.len() > 8 {
                format!(
                    " and {} more (see `{}`)",
                    sorted.len() - 8,
                    ctx.command(&["list"])
                )
            } else {
                String::new()
            };
            vec![format!("configured servers: {}{more}", shown.join(", "))]
        }
    }
}

/// Saves `values` into the project's `.env` and documents `example` in its
/// `.env.example` (see [`envfiles::save`]); returns the files written.
pub fn save_project_env(
    ctx: &Ctx,
    values: &[(String, String)],
    example: &[crate::dotenv::ExampleLine],
    force: bool,
) -> Result<Vec<PathBuf>, CliError> {
    let mut progress = Progress::default();
    save_project_env_with(ctx, values, example, force, &mut progress)?;
    Ok(progress.into_written())
}

/// The [`Progress`] of a command that saves the values of an extraction
/// `plan` (with the `.env.example` lines it documents), in the order
/// [`save_plan_env_with`] writes them, then each of `configs`; what an
/// interrupted earlier run left for any of them is cleared first.
pub fn begin_writes(
    ctx: &Ctx,
    env: Option<(&ExtractionPlan, &[crate::dotenv::ExampleLine])>,
    configs: &[&Path],
) -> Progress {
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
    tidy(ctx, progress.left());
    progress
}

/// Whether saving `plan` touches the project's files: a secret of a
/// project or local server, or lines for `.env.example`. The secrets of
/// user servers alone leave the repository alone.
fn saves_project(ctx: &Ctx, plan: &ExtractionPlan, example: &[crate::dotenv::ExampleLine]) -> bool {
    let user = ctx.user_env_file();
    !example.is_empty() || plan.moves.iter().any(|moved| moved.env_file != user)
}

/// Saves the values of an extraction `plan` where each belongs (the
/// user's store first, then the project's `.env`, `.env.example` and
/// `.gitignore`; see [`save_project_env_with`]), recording each file in
/// `progress`.
pub fn save_plan_env_with(
    ctx: &Ctx,
    plan: &ExtractionPlan,
    example: &[crate::dotenv::ExampleLine],
    force: bool,
    progress: &mut Progress,
) -> Result<(), CliError> {
    let user = ctx.user_env_file();
    envfiles::save_user_with(
        &user,
        &ctx.locations.state_dir,
        &plan.values_for(&user),
        force,
        progress,
    )
    .map_err(|error| extract::env_error(error).interrupted(progress))?;
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
    ctx: &Ctx,
    values: &[(String, String)],
    example: &[crate::dotenv::ExampleLine],
    force: bool,
    progress: &mut Progress,
) -> Result<(), CliError> {
    let files = EnvFiles::at(&ctx.locations.project_root());
    envfiles::save_with(
        &files,
        &ctx.locations.state_dir,
        values,
        example,
        force,
        progress,
    )
    .map_err(|error| extract::env_error(error).interrupted(progress))
}

/// A dotenv file as status lines name it: `.env` for the project's, the
/// `~/…` path for the user's store.
pub fn shown_env_file(ctx: &Ctx, path: &Path) -> String {
    if path.parent() == Some(ctx.locations.project_root().as_path()) {
        return path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    }
    ctx.locations.display(path)
}

/// Clears what an interrupted earlier run left for each of `paths`
/// ([`store::tidy`]), so a second run that finds nothing to do still
/// leaves no temporary file or stale lock behind.
pub fn tidy<'a>(ctx: &Ctx, paths: impl IntoIterator<Item = &'a PathBuf>) {
    for path in paths {
        store::tidy(&ctx.locations.state_dir, path);
    }
}
