//! Sharing a server: a private (local or user) server becomes a project
//! server in `.mcp.json`, its literal secrets moved into the project's
//! `.env` first (documented in `.env.example`), and the private copy
//! removed unless kept. [`plan`] decides and writes nothing, [`apply`]
//! writes (with a preview session, it shows every file's change and
//! writes nothing): the CLI's `share` and
//! `serve`'s `share_server` both go through here.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::error::StoreError;
use crate::config::scope::Scope;
use crate::config::store::{self, IfExists, Target};
use crate::envfiles::dotenv::ExampleLine;
use crate::ops::extraction_inputs::{known_values, plan_error, target_of};
use crate::ops::names::unknown_name_hints;
use crate::ops::secret_stores::{SecretStore, store_plan};
use crate::ops::write_steps::{begin_writes, save_plan_env_with};
use crate::ops::{Context, Error};
use crate::secrets::extraction_plan::{self, Candidate, ExtractionPlan, Move};

/// What to share.
#[derive(Debug, Clone)]
pub struct ShareRequest {
    /// The server.
    pub name: String,
    /// Where to look for it: local or user scope; `None`: both (it must be
    /// in exactly one).
    pub from: Option<Scope>,
    /// Keep the private copy.
    pub keep: bool,
    /// Write into a `.env` other users can read.
    pub force: bool,
    /// Where its secrets are kept.
    pub store: SecretStore,
}

/// Everything [`apply`] will do, decided.
#[derive(Debug, Clone)]
pub struct SharePlan {
    /// The server.
    pub name: String,
    /// The scope it comes from.
    pub from: Scope,
    /// The file of its private definition.
    pub from_file: PathBuf,
    /// The entry as the project will hold it (placeholders for secrets).
    pub shared: serde_json::Value,
    /// Whether the private copy stays.
    pub keep: bool,
    project: Target,
    private: Target,
    extraction: ExtractionPlan,
    example: Vec<ExampleLine>,
    force: bool,
    store: SecretStore,
}

impl SharePlan {
    /// The secrets that move into `.env`.
    pub fn moves(&self) -> &[Move] {
        &self.extraction.moves
    }

    /// The project's `.mcp.json`.
    pub fn project_file(&self) -> &std::path::Path {
        &self.project.path
    }
}

/// What a share did.
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
    /// The command that starts Claude Code with the `.env` values.
    #[serde(skip)]
    pub run_command: String,
    /// The private definition's file, as a person knows it.
    #[serde(skip)]
    pub from_shown: String,
    /// Each move's dotenv file, as a person knows it.
    #[serde(skip)]
    pub env_files_shown: Vec<String>,
}

/// Decides the share of `request`; writes nothing.
pub fn plan(ctx: &Context, request: &ShareRequest) -> Result<SharePlan, Error> {
    let inventory = ctx.inventory()?;
    let wanted: Vec<Scope> = match request.from {
        Some(scope) => vec![scope],
        None => vec![Scope::Local, Scope::User],
    };
    let found: Vec<_> = inventory
        .all_named(&request.name)
        .into_iter()
        .filter(|entry| wanted.contains(&entry.scope))
        .collect();
    let source = match found.as_slice() {
        [only] => *only,
        [] => {
            let mut error = Error::failure(format!(
                "no private MCP server named `{}` to share",
                request.name
            ));
            if inventory
                .all_named(&request.name)
                .iter()
                .any(|entry| entry.scope == Scope::Project)
            {
                error = error.with_hint("it is already a project server");
            } else {
                for hint in unknown_name_hints(ctx, &inventory, &request.name) {
                    error = error.with_hint(hint);
                }
            }
            return Err(error);
        }
        _ => {
            return Err(Error::failure(format!(
                "MCP server `{}` is defined in both local and user scope",
                request.name
            ))
            .with_hint(format!(
                "choose one: `{}` or `{}`",
                ctx.command(&["share", &request.name, "--from", "local"]),
                ctx.command(&["share", &request.name, "--from", "user"])
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
    let extraction = extraction_plan::plan(std::slice::from_ref(&candidate), &known_values(ctx)?)
        .map_err(plan_error)?;
    let changes: Vec<_> = extraction
        .changes
        .iter()
        .flat_map(|(_, changes)| changes.iter().cloned())
        .collect();
    let shared = extraction_plan::apply_changes(&source.name, &source.entry, &changes);
    let shared_value = shared.to_value();
    // The same server in the project is what an interrupted run left: this
    // one finishes it. A different one is in the way: nothing is written.
    let in_project = inventory.entries.iter().find(|entry| {
        entry.scope == Scope::Project && entry.file == project.path && entry.name == source.name
    });
    if in_project.is_some_and(|entry| entry.entry.to_value() != shared_value) {
        return Err(taken(ctx, &source.name, &project));
    }
    let documented: Vec<(&str, &crate::config::model::ServerEntry)> = inventory
        .entries
        .iter()
        .filter(|entry| entry.scope == Scope::Project && entry.name != source.name)
        .map(|entry| (entry.name.as_str(), &entry.entry))
        .chain(std::iter::once((source.name.as_str(), &shared)))
        .collect();
    let example = extraction_plan::example_variables(
        documented,
        &crate::templates::all(&ctx.template_dirs).0,
    );
    Ok(SharePlan {
        name: source.name.clone(),
        from: source.scope,
        from_file: source.file.clone(),
        shared: shared_value,
        keep: request.keep,
        private: Target::for_scope(&ctx.locations, source.scope),
        project,
        extraction,
        example,
        force: request.force,
        store: request.store,
    })
}

/// Writes what `plan` decided: `.gitignore` and `.env` first, then the
/// project file, then the private copy goes.
pub fn apply(ctx: &Context, mut plan: SharePlan) -> Result<ShareReport, Error> {
    // Kept in the keychain first, so no file names an entry not made.
    store_plan(ctx, &mut plan.extraction, plan.store, true)?;
    let mut configs = vec![plan.project.path.as_path()];
    if !plan.keep {
        configs.push(&plan.private.path);
    }
    let mut progress = begin_writes(ctx, Some((&plan.extraction, &plan.example)), &configs)?;
    save_plan_env_with(
        ctx,
        &plan.extraction,
        &plan.example,
        plan.force,
        &mut progress,
    )?;
    let added = store::add_server(
        &ctx.locations,
        &ctx.edit,
        &plan.project,
        &plan.name,
        &plan.shared,
        IfExists::KeepSame,
    )
    .map_err(|error| already_there(ctx, error, &plan.name, &plan.project).interrupted(&progress))?;
    progress.record(&added.path, added.changed);
    let from_shown = crate::ops::shown_paths::scope_file(ctx, plan.from, &plan.from_file);
    if !plan.keep {
        let removed = store::remove_server(&ctx.locations, &ctx.edit, &plan.private, &plan.name)
            .map_err(|error| Error::from(error).interrupted(&progress))?;
        progress.record(&removed.path, removed.changed);
    }
    let written = progress.into_written();
    let moves = plan.extraction.moves;
    Ok(ShareReport {
        approve_command: ctx.approve_command(&[&plan.name]),
        run_command: ctx.command(&["run", "--", "claude"]),
        from_shown,
        env_files_shown: crate::ops::shown_paths::shown_env_files(ctx, &moves),
        name: plan.name,
        from: plan.from,
        file: added.path,
        kept: plan.keep,
        written,
        moves,
    })
}

/// A store error, with the project's different server of that name said
/// as such.
fn already_there(ctx: &Context, error: StoreError, name: &str, project: &Target) -> Error {
    if matches!(error, StoreError::AlreadyExists { .. }) {
        taken(ctx, name, project)
    } else {
        Error::from(error)
    }
}

/// The project already has a different server of that name.
fn taken(ctx: &Context, name: &str, project: &Target) -> Error {
    Error::from(StoreError::AlreadyExists {
        name: name.to_string(),
        scope: Scope::Project,
        path: project.path.clone(),
    })
    .with_hint(format!(
        "the project already has a different server of that name; remove it first: `{}`",
        ctx.command(&["remove", name, "-s", "project"])
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mechanics::edits::Edit;
    use crate::ops::testing::{context, previewed_then_written};

    #[test]
    fn a_share_against_a_preview_yields_each_change_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path(), Edit::plain());
        let token = "ghp_Zq8Rk2VbN4mXw7Ty1Lp9Hs3Dj6Fc0Ga5Ue2Q";
        let claude_json = json!({"projects": {ctx.locations.local_key.clone(): {"mcpServers": {
            "mine": {"command": "npx", "env": {"GITHUB_TOKEN": token}}
        }}}});
        std::fs::write(&ctx.locations.claude_json, claude_json.to_string()).unwrap();
        let request = ShareRequest {
            name: "mine".to_string(),
            from: None,
            keep: false,
            force: false,
            store: SecretStore::Dotenv,
        };
        let plan = plan(&ctx, &request).unwrap();
        let changes = previewed_then_written(dir.path(), &ctx, |ctx| {
            apply(ctx, plan.clone()).unwrap();
        });
        let paths: Vec<&str> = changes.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "project/.gitignore",
                "project/.env",
                "project/.env.example",
                "project/.mcp.json",
                "home/.claude.json"
            ]
        );
        let private = changes[4].1.after.as_deref().unwrap();
        assert!(!private.contains(token), "the private copy goes: {private}");
    }
}
