//! Moving literal secrets into dotenv files, leaving `${VAR}` placeholders
//! behind: those of project and local servers into the project's `.env`,
//! those of user servers (used in every project) into the user's store,
//! `~/.config/mcpenv/.env`. The dotenv files are written first and the
//! configs last, so no placeholder ever points at a lost value. What
//! `mcpenv extract` does.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::model::ServerEntry;
use crate::config::scope::Scope;
use crate::config::store::{self, Progress, Target};
use crate::envfiles::dotenv::ExampleLine;
use crate::envfiles::{self, EnvFiles};
use crate::ops::extraction_inputs::{env_error, known_values, plan_error, target_of};
use crate::ops::secret_stores::{SecretStore, store_plan};
use crate::ops::write_steps::{begin_writes, save_plan_env_with, tidy};
use crate::ops::{Context, Error};
use crate::secrets::extraction_plan::{self, Candidate, ExtractionPlan, Move};
use crate::stores::references::Resolver;

/// Which secrets to move.
#[derive(Debug, Clone, Default)]
pub struct ExtractRequest {
    /// The scope to extract from; `None` is the project scope.
    pub scope: Option<Scope>,
    /// Every scope (wins over `scope`).
    pub all: bool,
    /// Only these servers (every server when empty).
    pub servers: Vec<String>,
    /// Write into a `.env` that other users can read.
    pub force: bool,
    /// Where the secrets are kept.
    pub store: SecretStore,
    /// Variables whose `.env.example` line names where the team keeps
    /// the value (`op://…`) rather than leaving it empty.
    pub references: Vec<(String, String)>,
}

/// What an extraction would move, decided before anything is written.
#[derive(Debug)]
pub struct ExtractPlan {
    /// The scopes looked at.
    pub scopes: Vec<Scope>,
    /// Every secret, its variable, and the changes to the configs.
    pub extraction: ExtractionPlan,
    /// The project's servers as they will be, which `.env.example`
    /// documents (a local or user server's variables are the user's own
    /// business).
    documented: Vec<(String, ServerEntry)>,
    force: bool,
    store: SecretStore,
    references: Vec<(String, String)>,
    warnings: Vec<String>,
}

/// What an extraction moved, or (as a dry run) would move.
#[derive(Debug, Serialize)]
pub struct ExtractReport {
    /// Every secret and its variable.
    pub moves: Vec<Move>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The files written, in order.
    pub written: Vec<PathBuf>,
    /// Secrets found in git history, which extraction cannot remove.
    pub committed: Vec<Committed>,
    /// Where the secrets went.
    pub store: SecretStore,
    /// What a reference given with the move could not confirm.
    pub warnings: Vec<String>,
    /// The scopes looked at.
    #[serde(skip)]
    pub scopes: Vec<Scope>,
}

/// A secret that was committed before.
#[derive(Debug, Serialize)]
pub struct Committed {
    /// The file.
    pub file: PathBuf,
    /// The variable now holding the secret.
    pub variable: String,
    /// The commits that added it.
    pub commits: Vec<String>,
}

/// Decides what to move; writes nothing. Fails for a server asked for that
/// the scopes do not define, and for a value that cannot be moved.
pub fn plan_extract(ctx: &Context, request: &ExtractRequest) -> Result<ExtractPlan, Error> {
    let scopes: Vec<Scope> = if request.all {
        Scope::ALL.to_vec()
    } else {
        vec![request.scope.unwrap_or(Scope::Project)]
    };
    let inventory = ctx.inventory()?;
    let repository = ctx
        .locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.working_dir.clone());
    for name in &request.servers {
        if !inventory
            .entries
            .iter()
            .any(|entry| &entry.name == name && scopes.contains(&entry.scope))
        {
            return Err(Error::failure(format!(
                "no MCP server named `{name}` in {}",
                scope_names(&scopes)
            ))
            .with_hint(format!(
                "see what is configured with `{}`",
                ctx.command(&["list"])
            )));
        }
    }
    let project_root = ctx.locations.project_root();
    // A `.mcp.json` of a folder above (a monorepo's root) keeps its
    // secrets in the `.env` next to it, which is read from there too: it
    // is extracted from its own folder, and said so.
    let mut candidates = Vec::new();
    let mut above = Vec::new();
    for entry in inventory
        .entries
        .iter()
        .filter(|entry| scopes.contains(&entry.scope))
        // Project files outside this repository are not ours to edit.
        .filter(|entry| entry.scope != Scope::Project || entry.file.starts_with(&repository))
        .filter(|entry| request.servers.is_empty() || request.servers.contains(&entry.name))
    {
        let candidate = Candidate {
            target: target_of(ctx, entry.scope, &entry.file),
            server: entry.name.clone(),
            entry: entry.entry.clone(),
            env_file: ctx.env_file_for(entry.scope),
        };
        if entry.scope == Scope::Project && entry.file.parent() != Some(project_root.as_path()) {
            above.push(candidate);
        } else {
            candidates.push(candidate);
        }
    }
    let known = known_values(ctx)?;
    let extraction = extraction_plan::plan(&candidates, &known).map_err(plan_error)?;
    let mut elsewhere: Vec<PathBuf> = Vec::new();
    for candidate in &above {
        let has_secrets = extraction_plan::plan(std::slice::from_ref(candidate), &known)
            .is_ok_and(|plan| !plan.moves.is_empty());
        if has_secrets && !elsewhere.contains(&candidate.target.path) {
            elsewhere.push(candidate.target.path.clone());
        }
    }
    // `.env.example` documents the `.mcp.json` next to it (as `check`
    // expects): a monorepo root's servers belong to the root's.
    let documented = inventory
        .entries
        .iter()
        .filter(|entry| {
            entry.scope == Scope::Project && entry.file.parent() == Some(project_root.as_path())
        })
        .map(|entry| {
            let changes: Vec<_> = extraction
                .changes
                .iter()
                .filter(|(target, _)| target.path == entry.file && target.scope == entry.scope)
                .flat_map(|(_, changes)| changes.iter().cloned())
                .collect();
            (
                entry.name.clone(),
                extraction_plan::apply_changes(&entry.name, &entry.entry, &changes),
            )
        })
        .collect();
    let mut warnings = check_references(ctx, &extraction, &request.references)?;
    for file in elsewhere {
        let folder = file.parent().unwrap_or(&file);
        let relative = crate::config::locate::upward_dir(folder, &project_root)
            .unwrap_or_else(|| folder.display().to_string());
        warnings.push(format!(
            "`{}` holds literal secrets too; they belong in the `.env` next to it: extract them there with `{}`",
            file.display(),
            ctx.command(&["extract", "-C", &relative])
        ));
    }
    Ok(ExtractPlan {
        scopes,
        extraction,
        warnings,
        documented,
        force: request.force,
        store: request.store,
        references: request.references.clone(),
    })
}

/// Writes `plan`: the dotenv files, then each config once. With nothing to
/// move, clears what an interrupted earlier run may have left and adds
/// the lines `.env.example` lacks.
pub fn apply_extract(ctx: &Context, plan: ExtractPlan) -> Result<ExtractReport, Error> {
    if plan.extraction.is_empty() {
        let files = EnvFiles::at(&ctx.locations.project_root());
        let configs = plan
            .scopes
            .iter()
            .map(|scope| Target::for_scope(&ctx.locations, *scope).path);
        let paths: Vec<PathBuf> = [
            files.gitignore.clone(),
            files.env.clone(),
            files.example.clone(),
            ctx.user_env_file(),
        ]
        .into_iter()
        .chain(configs)
        .collect();
        tidy(ctx, &paths);
        check_env_files(&plan)?;
        // No secret to move, but variables teammates need to know of: they
        // are documented all the same (which `check` asks for).
        let example = if plan.scopes.contains(&Scope::Project) {
            example_lines(ctx, &plan)
        } else {
            Vec::new()
        };
        let mut progress = Progress::default();
        progress.plan(&files.example);
        envfiles::document_example(
            &ctx.edit,
            &files,
            &ctx.locations.state_dir,
            &example,
            &mut progress,
        )
        .map_err(env_error)?;
        let mut report = plan.into_report();
        report.written = progress.into_written();
        return Ok(report);
    }
    let written = write_extraction(ctx, &plan)?;
    let committed = committed(ctx, &plan.extraction);
    let mut report = plan.into_report();
    report.written = written;
    report.committed = committed;
    Ok(report)
}

impl ExtractPlan {
    fn into_report(self) -> ExtractReport {
        ExtractReport {
            moves: self.extraction.moves,
            dry_run: false,
            written: Vec::new(),
            committed: Vec::new(),
            store: self.store,
            warnings: self.warnings,
            scopes: self.scopes,
        }
    }
}

/// Refuses a dotenv file of the plan that others can read, unless forced.
fn check_env_files(plan: &ExtractPlan) -> Result<(), Error> {
    for file in plan.extraction.env_files() {
        envfiles::check_private(file, plan.force).map_err(env_error)?;
    }
    Ok(())
}

/// The `.env.example` lines for the project's servers as they will be,
/// with the references the team gave.
fn example_lines(ctx: &Context, plan: &ExtractPlan) -> Vec<ExampleLine> {
    let mut example = extraction_plan::example_variables(
        plan.documented
            .iter()
            .map(|(name, entry)| (name.as_str(), entry)),
        &crate::templates::all(&ctx.template_dirs).0,
    );
    for line in &mut example {
        if let Some((_, reference)) = plan.references.iter().find(|(name, _)| *name == line.name) {
            line.value = reference.clone();
        }
    }
    example
}

/// Writes `.gitignore`, `.env` and `.env.example`, then each config file
/// once (local and user scope share `~/.claude.json`).
fn write_extraction(ctx: &Context, plan: &ExtractPlan) -> Result<Vec<PathBuf>, Error> {
    // Kept in the keychain first, so no file names an entry not made.
    let mut extraction = plan.extraction.clone();
    store_plan(ctx, &mut extraction, plan.store, true)?;
    let extraction = &extraction;
    let example = example_lines(ctx, plan);
    let mut by_file: Vec<Vec<(Target, Vec<store::FieldChange>)>> = Vec::new();
    for (target, changes) in &extraction.changes {
        match by_file
            .iter_mut()
            .find(|group| group[0].0.path == target.path)
        {
            Some(group) => group.push((target.clone(), changes.clone())),
            None => by_file.push(vec![(target.clone(), changes.clone())]),
        }
    }
    for group in &by_file {
        store::preflight(&group[0].0)?;
    }
    let configs: Vec<&Path> = by_file
        .iter()
        .map(|group| group[0].0.path.as_path())
        .collect();
    let mut progress = begin_writes(ctx, Some((extraction, &example)), &configs)?;
    save_plan_env_with(ctx, extraction, &example, plan.force, &mut progress)?;
    for group in &by_file {
        let done = store::replace_fields(&ctx.locations, &ctx.edit, group)
            .map_err(|error| Error::from(error).interrupted(&progress))?;
        progress.record(&group[0].0.path, done.changed);
    }
    Ok(progress.into_written())
}

/// Refuses a `--reference` for a variable the extraction does not put in
/// the project's `.env` (only that one `.env.example` documents), and
/// reads each reference: one that gives another value than the secret it
/// stands for, or none, is a warning (the sharer may not have access).
fn check_references(
    ctx: &Context,
    extraction: &ExtractionPlan,
    references: &[(String, String)],
) -> Result<Vec<String>, Error> {
    let project_env = EnvFiles::at(&ctx.locations.project_root()).env;
    let moved = extraction.values_for(&project_env);
    let mut resolver = Resolver::new(ctx.shield.clone());
    let mut warnings = Vec::new();
    for (name, reference) in references {
        let Some((_, value)) = moved.iter().find(|(moved, _)| moved == name) else {
            let names: Vec<&str> = moved.iter().map(|(name, _)| name.as_str()).collect();
            let mut error = Error::usage(format!(
                "`--reference {name}=…`: this extraction puts no `{name}` into the project's `.env`"
            ));
            if let Some(close) = crate::ops::names::closest(&names, name) {
                error = error.with_hint(format!("did you mean `{close}`?"));
            }
            return Err(error.with_hint(if names.is_empty() {
                "a reference documents a project server's secret that moves into `.env`".to_string()
            } else {
                format!(
                    "it moves: {}",
                    crate::mechanics::display::quoted_names(&names)
                )
            }));
        };
        match resolver.value_of(reference) {
            Ok(resolved) if resolved == *value => {}
            Ok(_) => warnings.push(format!(
                "`{reference}` gives another value than the `{name}` being moved: teammates would get that one"
            )),
            Err(error) => warnings.push(format!(
                "could not confirm `{reference}` for `{name}`: it {}",
                error.message
            )),
        }
    }
    Ok(warnings)
}

/// The secrets of `plan` that git history of the project files holds.
fn committed(ctx: &Context, plan: &ExtractionPlan) -> Vec<Committed> {
    let Some(git_root) = &ctx.locations.git_root else {
        return Vec::new();
    };
    let secrets: Vec<(&str, &str)> = plan
        .moves
        .iter()
        .filter(|moved| moved.scope == Scope::Project)
        .filter_map(|moved| {
            plan.new_variables
                .iter()
                .find(|variable| variable.name == moved.variable)
                .map(|variable| (variable.name.as_str(), variable.value.as_str()))
        })
        .collect();
    if secrets.is_empty() {
        return Vec::new();
    }
    let mut files: Vec<&PathBuf> = plan
        .moves
        .iter()
        .filter(|moved| moved.scope == Scope::Project)
        .map(|moved| &moved.file)
        .collect();
    files.dedup();
    files
        .into_iter()
        .flat_map(|file| {
            envfiles::committed_secrets(git_root, file, &secrets)
                .unwrap_or_default()
                .into_iter()
                .map(move |exposure| Committed {
                    file: file.clone(),
                    variable: exposure.variable,
                    commits: exposure.commits,
                })
        })
        .collect()
}

/// `project scope`, or `any scope` for several.
pub fn scope_names(scopes: &[Scope]) -> String {
    match scopes {
        [one] => format!("{one} scope"),
        _ => "any scope".to_string(),
    }
}
