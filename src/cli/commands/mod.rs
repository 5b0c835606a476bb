//! One file per subcommand, each `run(ctx, args) -> Result<Report, CliError>`.

pub mod add;
pub mod add_json;
pub mod add_oauth;
pub mod add_words;
pub mod approve;
pub mod check;
pub mod completions;
pub mod confirm;
pub mod doctor;
pub mod dry_run;
pub mod env;
pub mod export;
pub mod extract;
pub mod get;
pub mod import;
pub mod list;
pub mod man;
pub mod onboard;
pub mod policy;
pub mod probe;
#[cfg(unix)]
pub mod reap;
pub mod reject;
pub mod remove;
pub mod reset_project_choices;
pub mod run;
pub mod scan;
pub mod secrets;
pub mod serve;
pub mod share;
pub mod templates;
pub mod undo;

pub use crate::ops::shown_paths::{scope_file, shown_env_file, shown_env_files, shown_path};

/// `Moved SERVER FIELD into FILE as VAR (masked)` for each moved secret
/// (`Would move` in a dry run); `env_files` holds each move's dotenv file
/// as shown ([`shown_env_file`]).
pub fn write_moves(
    err: &mut dyn std::io::Write,
    moves: &[crate::secrets::extraction_plan::Move],
    env_files: &[String],
    dry_run: bool,
) -> std::io::Result<()> {
    let verb = if dry_run { "Would move" } else { "Moved" };
    for (moved, file) in moves.iter().zip(env_files) {
        writeln!(
            err,
            "{verb} {} {} into `{file}` as `{}` ({})",
            crate::mechanics::display::escape(&moved.server),
            crate::mechanics::display::escape(&moved.field.to_string()),
            moved.variable,
            moved.value
        )?;
    }
    Ok(())
}
