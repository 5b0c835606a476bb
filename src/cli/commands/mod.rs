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

use std::path::Path;

use crate::cli::resolve::Ctx;

pub use crate::ops::names::scope_file;

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
