//! Removing a server from one scope. A name defined in several scopes
//! needs its scope named, and the error says exactly which commands to
//! run. What `mcpenv remove` does.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::StoreError;
use crate::layered::Inventory;
use crate::ops::names::unknown_name_hints;
use crate::ops::shown::scope_file;
use crate::ops::{Context, Error};
use crate::scope::Scope;
use crate::store::{self, Target};

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
}

/// Removes the server; the file is read, decided on and written under one
/// lock, so there is no plan to show apart from the write.
pub fn remove_server(ctx: &Context, request: &RemoveRequest) -> Result<RemoveReport, Error> {
    let name = &request.name;
    let removed = match request.scope {
        Some(scope) => {
            let target = Target::for_scope(&ctx.locations, scope);
            store::remove_server(&ctx.locations, &target, name).map(|written| (target, written))
        }
        None => store::remove_server_anywhere(&ctx.locations, name),
    };
    match removed {
        Ok((target, written)) => Ok(RemoveReport {
            name: name.clone(),
            scope: target.scope,
            file: written.path,
        }),
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
