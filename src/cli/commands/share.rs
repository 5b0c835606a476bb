//! `mcpenv share`: a private (local or user) server becomes a project
//! server in `.mcp.json`, its secrets moved into `.env` first, and the
//! private copy removed unless `--keep`.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::args::{PrivateScope, ShareArgs};
use crate::cli::commands::{scope_file, shown_env_files};
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::error::StoreError;
use crate::extract::{self, Candidate, Move};
use crate::ops::extraction::{known_values, plan_error, target_of};
use crate::ops::names::unknown_name_hints;
use crate::ops::writes::{begin_writes, save_plan_env_with};
use crate::scope::Scope;
use crate::store::{self, IfExists, Target};

/// What `share` did.
#[derive(Debug, Serialize)]
pub struct ShareReport {
    /// The server.
    pub name: String,
    /// Where it came from.
    pub from: Scope,
    /// The `.mcp.json` it was written to.
    pub file: PathBuf,
    /// The secrets moved into the project's `.env`.
    pub moves: Vec<Move>,
    /// Whether the private copy was kept.
    pub kept: bool,
    /// Every file written, in order.
    pub written: Vec<PathBuf>,
    /// A project server now: Claude Code asks before starting it, for the
    /// sharer too. The command that approves it.
    pub approve_command: String,
    #[serde(skip)]
    run_command: String,
    #[serde(skip)]
    from_shown: String,
    #[serde(skip)]
    env_files_shown: Vec<String>,
}

impl Report for ShareReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        crate::cli::commands::write_moves(err, &self.moves, &self.env_files_shown, false)?;
        writeln!(
            err,
            "Shared MCP server `{}` in `{}`",
            self.name,
            self.file.display()
        )?;
        if self.kept {
            writeln!(err, "Kept the private copy in {}", self.from_shown)?;
        } else {
            writeln!(
                err,
                "Removed it from {} scope: {}",
                self.from, self.from_shown
            )?;
        }
        for file in &self.written {
            writeln!(err, "Wrote `{}`", file.display())?;
        }
        if !self.moves.is_empty() {
            writeln!(
                err,
                "Teammates set the variables listed in `.env.example` in their own `.env`"
            )?;
        }
        // A kept private copy still wins over (or stands in for) the
        // pending project one: only without it does the sharer need these.
        if self.kept {
            return Ok(());
        }
        writeln!(
            err,
            "To keep using it: approve it with `{}` (Claude Code asks before starting a project server)",
            self.approve_command
        )?;
        if !self.moves.is_empty() {
            writeln!(
                err,
                "and start Claude Code with `{}`, which supplies the values in `.env`",
                self.run_command
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv share`.
pub fn run(ctx: &Ctx, args: &ShareArgs) -> Result<ShareReport, CliError> {
    let inventory = ctx.inventory()?;
    let wanted: Vec<Scope> = match args.from {
        Some(PrivateScope::Local) => vec![Scope::Local],
        Some(PrivateScope::User) => vec![Scope::User],
        None => vec![Scope::Local, Scope::User],
    };
    let found: Vec<_> = inventory
        .all_named(&args.name)
        .into_iter()
        .filter(|entry| wanted.contains(&entry.scope))
        .collect();
    let source = match found.as_slice() {
        [only] => *only,
        [] => {
            let mut error = CliError::failure(format!(
                "no private MCP server named `{}` to share",
                args.name
            ));
            if inventory
                .all_named(&args.name)
                .iter()
                .any(|entry| entry.scope == Scope::Project)
            {
                error = error.with_hint("it is already a project server");
            } else {
                for hint in unknown_name_hints(ctx, &inventory, &args.name) {
                    error = error.with_hint(hint);
                }
            }
            return Err(error);
        }
        _ => {
            return Err(CliError::failure(format!(
                "MCP server `{}` is defined in both local and user scope",
                args.name
            ))
            .with_hint(format!(
                "choose one: `{}` or `{}`",
                ctx.command(&["share", &args.name, "--from", "local"]),
                ctx.command(&["share", &args.name, "--from", "user"])
            )));
        }
    };
    let project = Target::for_scope(&ctx.locations, Scope::Project);
    store::preflight(&project)?;
    let candidate = Candidate {
        target: target_of(ctx, source.scope, &source.file),
        server: source.name.clone(),
        entry: source.entry.clone(),
        // Shared, the server is the project's: so are its secrets.
        env_file: ctx.env_file_for(Scope::Project),
    };
    let plan =
        extract::plan(std::slice::from_ref(&candidate), &known_values(ctx)?).map_err(plan_error)?;
    let changes: Vec<_> = plan
        .changes
        .iter()
        .flat_map(|(_, changes)| changes.iter().cloned())
        .collect();
    let shared = extract::apply_changes(&source.name, &source.entry, &changes);
    let shared_value = shared.to_value();
    // The same server in the project is what an interrupted run left: this
    // one finishes it. A different one is in the way: nothing is written.
    let in_project = inventory.entries.iter().find(|entry| {
        entry.scope == Scope::Project && entry.file == project.path && entry.name == source.name
    });
    if in_project.is_some_and(|entry| entry.entry.to_value() != shared_value) {
        return Err(taken(ctx, &source.name, &project));
    }

    // `.gitignore` and `.env` first, then the project file, then the
    // private copy goes.
    let documented: Vec<(&str, &crate::model::ServerEntry)> = inventory
        .entries
        .iter()
        .filter(|entry| entry.scope == Scope::Project && entry.name != source.name)
        .map(|entry| (entry.name.as_str(), &entry.entry))
        .chain(std::iter::once((source.name.as_str(), &shared)))
        .collect();
    let example =
        extract::example_variables(documented, &crate::templates::all(&ctx.template_dirs).0);
    let private = Target::for_scope(&ctx.locations, source.scope);
    let mut configs = vec![project.path.as_path()];
    if !args.keep {
        configs.push(&private.path);
    }
    let mut progress = begin_writes(ctx, Some((&plan, &example)), &configs);
    save_plan_env_with(ctx, &plan, &example, args.force, &mut progress)?;
    let added = store::add_server(
        &ctx.locations,
        &project,
        &source.name,
        &shared_value,
        IfExists::KeepSame,
    )
    .map_err(|error| {
        let error = if matches!(error, StoreError::AlreadyExists { .. }) {
            taken(ctx, &source.name, &project)
        } else {
            CliError::from(error)
        };
        error.interrupted(&progress)
    })?;
    progress.record(&added.path, added.changed);
    let from_shown = scope_file(ctx, source.scope, &source.file);
    if !args.keep {
        let removed = store::remove_server(&ctx.locations, &private, &source.name)
            .map_err(|error| CliError::from(error).interrupted(&progress))?;
        progress.record(&removed.path, removed.changed);
    }
    let written = progress.into_written();
    Ok(ShareReport {
        name: source.name.clone(),
        from: source.scope,
        file: added.path,
        kept: args.keep,
        written,
        approve_command: ctx.command(&["approve", &source.name]),
        run_command: ctx.command(&["run", "--", "claude"]),
        from_shown,
        env_files_shown: shown_env_files(ctx, &plan.moves),
        moves: plan.moves,
    })
}

/// The project already has a different server of that name.
fn taken(ctx: &Ctx, name: &str, project: &Target) -> CliError {
    CliError::from(StoreError::AlreadyExists {
        name: name.to_string(),
        scope: Scope::Project,
        path: project.path.clone(),
    })
    .with_hint(format!(
        "the project already has a different server of that name; remove it first: `{}`",
        ctx.command(&["remove", name, "-s", "project"])
    ))
}
