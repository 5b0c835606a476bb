//! `mcpenv remove`: a server from one scope. A name defined in several
//! scopes needs `-s`, and the error says exactly which commands to run.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::args::RemoveArgs;
use crate::cli::commands::scope_file;
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::error::StoreError;
use crate::layered::Inventory;
use crate::ops::names::unknown_name_hints;
use crate::scope::Scope;
use crate::store::{self, Target};

/// What `remove` did.
#[derive(Debug, Serialize)]
pub struct RemoveReport {
    /// The server's name.
    pub name: String,
    /// The scope removed from.
    pub scope: Scope,
    /// The file written.
    pub file: PathBuf,
    #[serde(skip)]
    file_shown: String,
}

impl Report for RemoveReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        writeln!(
            err,
            "Removed MCP server `{}` from {} scope",
            self.name, self.scope
        )?;
        writeln!(err, "Wrote {}", self.file_shown)
    }
}

/// Runs `mcpenv remove`.
pub fn run(ctx: &Ctx, args: &RemoveArgs) -> Result<RemoveReport, CliError> {
    let removed = match args.scope.map(Scope::from) {
        Some(scope) => {
            let target = Target::for_scope(&ctx.locations, scope);
            store::remove_server(&ctx.locations, &target, &args.name)
                .map(|written| (target, written))
        }
        None => store::remove_server_anywhere(&ctx.locations, &args.name),
    };
    match removed {
        Ok((target, written)) => Ok(RemoveReport {
            name: args.name.clone(),
            scope: target.scope,
            file_shown: scope_file(ctx, target.scope, &written.path),
            file: written.path,
        }),
        Err(StoreError::NotFound { scope, .. }) => {
            let inventory = ctx.inventory()?;
            let target = Target::for_scope(&ctx.locations, scope);
            Err(not_found(ctx, &inventory, &args.name, Some(&target)))
        }
        Err(StoreError::NotFoundAnywhere { .. }) => {
            let inventory = ctx.inventory()?;
            Err(not_found(ctx, &inventory, &args.name, None))
        }
        Err(StoreError::Ambiguous { scopes, .. }) => {
            let targets: Vec<Target> = scopes
                .iter()
                .map(|scope| Target::for_scope(&ctx.locations, *scope))
                .collect();
            Err(ambiguous(ctx, &args.name, &targets))
        }
        Err(error) => Err(error.into()),
    }
}

fn not_found(ctx: &Ctx, inventory: &Inventory, name: &str, target: Option<&Target>) -> CliError {
    let message = match target {
        Some(target) => format!(
            "no MCP server named `{name}` in {} scope: {}",
            target.scope,
            scope_file(ctx, target.scope, &target.path)
        ),
        None => format!("no MCP server named `{name}`"),
    };
    let mut error = CliError::failure(message);
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

fn ambiguous(ctx: &Ctx, name: &str, targets: &[Target]) -> CliError {
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
    CliError::failure(format!(
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
fn where_defined(ctx: &Ctx, target: &Target) -> String {
    match target.scope {
        Scope::Local => format!(
            "{}, project {}",
            target.path.display(),
            ctx.locations.local_key
        ),
        Scope::Project | Scope::User => target.path.display().to_string(),
    }
}
