//! How a file is named for a person: relative to the working directory,
//! `~/…`, with the project key of a local entry. Strings, for the CLI's
//! text and the short texts of `serve`'s results alike.

use std::path::Path;

use crate::config::scope::Scope;
use crate::ops::Context;

/// How a scope's file is shown: local entries also name the project key.
pub fn scope_file(ctx: &Context, scope: Scope, path: &Path) -> String {
    match scope {
        Scope::Local => format!(
            "`{}` (project `{}`)",
            path.display(),
            ctx.locations.local_key
        ),
        Scope::Project | Scope::User => written(path),
    }
}

/// A file as status lines name it, in backticks, and, when it is a
/// repository's file reached through a symbolic link, where its bytes
/// really are: "`.env` (→ `config/local.env`)".
pub fn written(path: &Path) -> String {
    format!(
        "`{}`{}",
        path.display(),
        link_note(path, |target| target.display().to_string())
    )
}

/// What follows a file's name when it is a repository's file reached
/// through a symbolic link: " (→ `target`)", the target named by `shown`;
/// empty for any other file.
pub fn link_note(path: &Path, shown: impl Fn(&Path) -> String) -> String {
    crate::mechanics::fsx::link_target(path)
        .map_or_else(String::new, |target| format!(" (→ `{}`)", shown(&target)))
}

/// A path as shown in tables: relative to the working directory inside
/// the project, `~/…` under the home directory, else absolute.
pub fn shown_path(ctx: &Context, path: &Path) -> String {
    let locations = &ctx.locations;
    if let Ok(relative) = path.strip_prefix(&locations.working_dir) {
        return relative.display().to_string();
    }
    // A monorepo root's `.env` seen from a package: `../../.env`.
    if let (Some(root), Some(dir)) = (&locations.git_root, path.parent())
        && dir.starts_with(root)
        && let Some(name) = crate::config::locate::upward_name(path, &locations.working_dir)
    {
        return name;
    }
    locations.display(path)
}

/// Each move's dotenv file as shown, for [`write_moves`].
pub fn shown_env_files(
    ctx: &Context,
    moves: &[crate::secrets::extraction_plan::Move],
) -> Vec<String> {
    moves
        .iter()
        .map(|moved| shown_env_file(ctx, &moved.env_file))
        .collect()
}

/// A dotenv file as status lines name it: `.env` for the project's, the
/// `~/…` path for the user's store.
pub fn shown_env_file(ctx: &Context, path: &Path) -> String {
    if path.parent() == Some(ctx.locations.project_root().as_path()) {
        return path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    }
    ctx.locations.display(path)
}
