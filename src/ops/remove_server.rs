//! Removing a server from one scope. A name defined in several scopes
//! needs its scope named, and the error says exactly which commands to
//! run. What `mcpenv remove` does.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::error::StoreError;
use crate::config::inventory::Inventory;
use crate::config::scope::Scope;
use crate::config::store::{self, Target};
use crate::envfiles::EnvFiles;
use crate::mechanics::fsx;
use crate::ops::names::unknown_name_hints;
use crate::ops::shown_paths::scope_file;
use crate::ops::{Context, Error};

/// Which server to remove.
#[derive(Debug, Clone)]
pub struct RemoveRequest {
    /// The server's name.
    pub name: String,
    /// The scope to remove it from; needed when the name is in several.
    pub scope: Option<Scope>,
}

/// What was removed.
#[derive(Debug, Serialize)]
pub struct RemoveReport {
    /// The server's name.
    pub name: String,
    /// The scope removed from.
    pub scope: Scope,
    /// The file written.
    pub file: PathBuf,
    /// The variables the server used that `.env.example` still documents
    /// and no other server uses any more.
    pub unused_example: Vec<String>,
    /// The project's `.env.example`.
    #[serde(skip)]
    pub example: PathBuf,
}

/// Removes the server; the file is read, decided on and written under one
/// lock, so there is no plan to show apart from the write.
pub fn remove_server(ctx: &Context, request: &RemoveRequest) -> Result<RemoveReport, Error> {
    let name = &request.name;
    // Read before the removal: the variables the removed entry used (only
    // when there is a `.env.example` to tidy: reading every scope twice
    // costs time on a large `~/.claude.json`).
    let example = EnvFiles::at(&ctx.locations.project_root()).example;
    let before = example.is_file().then(|| ctx.inventory().ok()).flatten();
    let removed = match request.scope {
        Some(scope) => {
            let target = Target::for_scope(&ctx.locations, scope);
            store::remove_server(&ctx.locations, &ctx.edit, &target, name)
                .map(|written| (target, written))
        }
        None => store::remove_server_anywhere(&ctx.locations, &ctx.edit, name),
    };
    match removed {
        Ok((target, written)) => {
            let unused_example = before
                .as_ref()
                .map(|before| unused_example(ctx, before, name, target.scope, &example))
                .unwrap_or_default();
            Ok(RemoveReport {
                name: name.clone(),
                scope: target.scope,
                file: written.path,
                unused_example,
                example,
            })
        }
        Err(StoreError::NotFound { scope, .. }) => {
            let inventory = ctx.inventory()?;
            let target = Target::for_scope(&ctx.locations, scope);
            Err(not_found(ctx, &inventory, name, Some(&target)))
        }
        Err(StoreError::NotFoundAnywhere { .. }) => {
            let inventory = ctx.inventory()?;
            Err(not_found(ctx, &inventory, name, None))
        }
        Err(StoreError::Ambiguous { scopes, .. }) => {
            let targets: Vec<Target> = scopes
                .iter()
                .map(|scope| Target::for_scope(&ctx.locations, *scope))
                .collect();
            Err(ambiguous(ctx, name, &targets))
        }
        Err(error) => Err(error.into()),
    }
}

/// The error for a name not in `target`'s scope (or in none): where else
/// it is defined, else the close match or what exists.
fn not_found(ctx: &Context, inventory: &Inventory, name: &str, target: Option<&Target>) -> Error {
    let message = match target {
        Some(target) => format!(
            "no MCP server named `{name}` in {} scope: {}",
            target.scope,
            scope_file(ctx, target.scope, &target.path)
        ),
        None => format!("no MCP server named `{name}`"),
    };
    let mut error = Error::failure(message);
    let elsewhere = inventory.all_named(name);
    if elsewhere.is_empty() {
        for hint in unknown_name_hints(ctx, inventory, name) {
            error = error.with_hint(hint);
        }
        return error;
    }
    for entry in elsewhere {
        let own_target = Target::for_scope(&ctx.locations, entry.scope);
        let hint = if own_target.path == entry.file {
            format!(
                "it is defined in {} scope: `{}`",
                entry.scope,
                ctx.command(&["remove", name, "-s", entry.scope.as_str()])
            )
        } else {
            format!(
                "it is defined in `{}`, outside this repository; edit that file, or run mcpenv from its directory",
                entry.file.display()
            )
        };
        error = error.with_hint(hint);
    }
    error
}

/// The error for a name in several scopes: one command per scope.
fn ambiguous(ctx: &Context, name: &str, targets: &[Target]) -> Error {
    let commands: Vec<String> = targets
        .iter()
        .map(|target| ctx.command(&["remove", name, "-s", target.scope.as_str()]))
        .collect();
    let width = commands.iter().map(String::len).max().unwrap_or(0);
    let lines: Vec<String> = commands
        .iter()
        .zip(targets)
        .map(|(command, target)| format!("  {command:width$}  # {}", where_defined(ctx, target)))
        .collect();
    Error::failure(format!(
        "MCP server `{name}` is defined in {} scopes; nothing was removed",
        targets.len()
    ))
    .with_hint_lines(
        std::iter::once("choose the scope to remove it from:".to_string())
            .chain(lines)
            .collect(),
    )
}

/// A target's file as a shell comment: plain text, the project for local.
fn where_defined(ctx: &Context, target: &Target) -> String {
    match target.scope {
        Scope::Local => format!(
            "{}, project {}",
            target.path.display(),
            ctx.locations.local_key
        ),
        Scope::Project | Scope::User => target.path.display().to_string(),
    }
}

/// The variables of `name` (removed from `scope`) that `example` documents
/// and no server left uses; empty when anything cannot be read.
fn unused_example(
    ctx: &Context,
    before: &Inventory,
    name: &str,
    scope: Scope,
    example: &std::path::Path,
) -> Vec<String> {
    let variables = |entry: &crate::config::model::ServerEntry| -> Vec<String> {
        entry
            .expandable_fields()
            .into_iter()
            .flat_map(|(_, text)| crate::config::expansion::references(text))
            .map(|reference| reference.name)
            .collect()
    };
    let Some(removed) = before
        .entries
        .iter()
        .find(|entry| entry.name == name && entry.scope == scope)
    else {
        return Vec::new();
    };
    let Ok(after) = ctx.inventory() else {
        return Vec::new();
    };
    let used: Vec<String> = after
        .entries
        .iter()
        .flat_map(|entry| variables(&entry.entry))
        .collect();
    let Ok(Some(text)) = fsx::read_if_exists(example) else {
        return Vec::new();
    };
    let documented = crate::envfiles::dotenv::DotEnv::parse(example, text);
    let mut unused: Vec<String> = Vec::new();
    for variable in variables(&removed.entry) {
        let documented = documented.entries().any(|(key, _)| key == variable);
        if documented && !used.contains(&variable) && !unused.contains(&variable) {
            unused.push(variable);
        }
    }
    unused
}

/// Refuses, before the removal writes anything, a `.env.example` that
/// leads out of the repository, for a removal that will tidy it.
pub fn check_example(ctx: &Context) -> Result<(), Error> {
    let example = EnvFiles::at(&ctx.locations.project_root()).example;
    crate::ops::write_steps::check_confined([&example])
}

/// Drops the lines of `names` from the project's `.env.example` (with the
/// comment mcpenv wrote above each); never touches `.env`.
pub fn drop_example_lines(ctx: &Context, names: &[String]) -> Result<bool, Error> {
    let example = EnvFiles::at(&ctx.locations.project_root()).example;
    crate::envfiles::remove_example_lines(&ctx.edit, &ctx.locations.state_dir, &example, names)
        .map_err(crate::ops::extraction_inputs::env_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanics::edits::Edit;
    use crate::ops::testing::{context, previewed_then_written};

    #[test]
    fn a_removal_against_a_preview_yields_its_change_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path(), Edit::plain());
        let project = ctx.locations.project_root().join(".mcp.json");
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"}\n  }\n}\n";
        std::fs::write(&project, text).unwrap();
        let request = RemoveRequest {
            name: "a".to_string(),
            scope: Some(Scope::Project),
        };
        let changes = previewed_then_written(dir.path(), &ctx, |ctx| {
            remove_server(ctx, &request).unwrap();
        });
        assert_eq!(changes.len(), 1);
        let (path, change) = &changes[0];
        assert_eq!(path, "project/.mcp.json");
        assert_eq!(change.before.as_deref(), Some(text));
        assert_eq!(
            change.after.as_deref(),
            Some("{\n  \"mcpServers\": {\n    \"b\": {\"command\": \"b\"}\n  }\n}\n")
        );
    }
}
