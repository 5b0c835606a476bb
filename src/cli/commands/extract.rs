//! `mcpenv extract`: move literal secrets into dotenv files and leave
//! `${VAR}` placeholders behind: those of project and local servers into
//! the project's `.env`, those of user servers (used in every project)
//! into the user's store, `~/.config/mcpenv/.env`. The dotenv files are
//! written first and the configs last, so no placeholder ever points at a
//! lost value.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::args::ExtractArgs;
use crate::cli::commands::{shown_env_file, shown_path};
use crate::cli::error::CliError;
use crate::cli::render::{Cell, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::envfiles::{self, EnvFiles};
use crate::extract::{self, Candidate, ExtractionPlan, Move};
use crate::ops::extraction::{env_error, known_values, plan_error, target_of};
use crate::ops::writes::{begin_writes, save_plan_env_with, tidy};
use crate::scope::Scope;
use crate::store::{self, Target};

/// What an extraction moved, or (with `--dry-run`) would move.
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
    #[serde(skip)]
    shown: Vec<(String, String)>,
    /// Each dotenv file the moves go to, as shown, with how many go there.
    #[serde(skip)]
    destinations: Vec<(String, usize)>,
    /// Whether a value went to the user's store, which `mcpenv run` loads.
    #[serde(skip)]
    to_user_store: bool,
    #[serde(skip)]
    scopes: String,
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

impl Report for ExtractReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.moves.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .moves
            .iter()
            .zip(&self.shown)
            .map(|(moved, (file, variable))| {
                vec![
                    Cell::plain(file),
                    Cell::plain(&moved.server),
                    Cell::plain(moved.field.to_string()),
                    Cell::plain(variable),
                    Cell::plain(&moved.value),
                ]
            })
            .collect();
        table(
            out,
            &["FILE", "SERVER", "FIELD", "VARIABLE", "VALUE"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if self.moves.is_empty() {
            return writeln!(
                err,
                "Nothing to extract: no literal secrets in {}",
                self.scopes
            );
        }
        let verb = if self.dry_run { "Would move" } else { "Moved" };
        for (index, (file, count)) in self.destinations.iter().enumerate() {
            let secrets = if *count == 1 { "secret" } else { "secrets" };
            let last = index + 1 == self.destinations.len();
            let note = if self.dry_run && last {
                " (dry run: nothing was written)"
            } else {
                ""
            };
            writeln!(err, "{verb} {count} {secrets} into `{file}`{note}")?;
        }
        if !self.dry_run {
            for file in &self.written {
                writeln!(err, "Wrote `{}`", file.display())?;
            }
            if self.to_user_store {
                writeln!(
                    err,
                    "Claude Code takes `${{VAR}}` values from its environment, not from dotenv files: start it with `mcpenv run -- claude`, which loads them"
                )?;
            } else {
                writeln!(
                    err,
                    "Claude Code takes `${{VAR}}` values from its environment, not from `.env`: load it first (`set -a; . ./.env; set +a`)"
                )?;
            }
        }
        for committed in &self.committed {
            warning(
                err,
                &format!(
                    "the value of `{}` was committed in `{}` (commit {}); extraction does not rewrite history, so rotate that secret",
                    committed.variable,
                    committed.file.display(),
                    committed.commits.join(", ")
                ),
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv extract`.
pub fn run(ctx: &Ctx, args: &ExtractArgs) -> Result<ExtractReport, CliError> {
    let scopes: Vec<Scope> = if args.all {
        Scope::ALL.to_vec()
    } else {
        vec![args.scope.map_or(Scope::Project, Scope::from)]
    };
    let inventory = ctx.inventory()?;
    let repository = ctx
        .locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.working_dir.clone());
    for name in &args.servers {
        if !inventory
            .entries
            .iter()
            .any(|entry| &entry.name == name && scopes.contains(&entry.scope))
        {
            return Err(CliError::failure(format!(
                "no MCP server named `{name}` in {}",
                scope_names(&scopes)
            ))
            .with_hint(format!(
                "see what is configured with `{}`",
                ctx.command(&["list"])
            )));
        }
    }
    let candidates: Vec<Candidate> = inventory
        .entries
        .iter()
        .filter(|entry| scopes.contains(&entry.scope))
        // Project files outside this repository are not ours to edit.
        .filter(|entry| entry.scope != Scope::Project || entry.file.starts_with(&repository))
        .filter(|entry| args.servers.is_empty() || args.servers.contains(&entry.name))
        .map(|entry| Candidate {
            target: target_of(ctx, entry.scope, &entry.file),
            server: entry.name.clone(),
            entry: entry.entry.clone(),
            env_file: ctx.env_file_for(entry.scope),
        })
        .collect();
    let plan = extract::plan(&candidates, &known_values(ctx)?).map_err(plan_error)?;
    let mut destinations: Vec<(String, usize)> = Vec::new();
    for moved in &plan.moves {
        let file = shown_env_file(ctx, &moved.env_file);
        match destinations.iter_mut().find(|(shown, _)| *shown == file) {
            Some((_, count)) => *count += 1,
            None => destinations.push((file, 1)),
        }
    }
    let user_store = ctx.user_env_file();
    let mut report = ExtractReport {
        shown: plan
            .moves
            .iter()
            .map(|moved| {
                let variable = if moved.reused {
                    format!(
                        "{} (already in {})",
                        moved.variable,
                        shown_env_file(ctx, &moved.env_file)
                    )
                } else {
                    moved.variable.clone()
                };
                (shown_path(ctx, &moved.file), variable)
            })
            .collect(),
        destinations,
        to_user_store: plan.moves.iter().any(|moved| moved.env_file == user_store),
        moves: plan.moves.clone(),
        dry_run: args.dry_run,
        written: Vec::new(),
        committed: Vec::new(),
        scopes: scope_names(&scopes),
    };
    if plan.is_empty() && !args.dry_run {
        // What an interrupted run that got this far may have left.
        let files = EnvFiles::at(&ctx.locations.project_root());
        let configs = scopes
            .iter()
            .map(|scope| Target::for_scope(&ctx.locations, *scope).path);
        let paths: Vec<PathBuf> = [files.gitignore, files.env, files.example, user_store]
            .into_iter()
            .chain(configs)
            .collect();
        tidy(ctx, &paths);
    }
    if plan.is_empty() || args.dry_run {
        // What the real run would refuse, a dry run refuses too.
        for file in plan.env_files() {
            envfiles::check_private(file, args.force).map_err(env_error)?;
        }
        return Ok(report);
    }
    // `.env.example` documents what the project's shared servers need; a
    // local or user server's variables are the user's own business.
    let project_entries: Vec<(String, crate::model::ServerEntry)> = inventory
        .entries
        .iter()
        .filter(|entry| entry.scope == Scope::Project)
        .map(|entry| {
            let changes: Vec<_> = plan
                .changes
                .iter()
                .filter(|(target, _)| target.path == entry.file && target.scope == entry.scope)
                .flat_map(|(_, changes)| changes.iter().cloned())
                .collect();
            (
                entry.name.clone(),
                extract::apply_changes(&entry.name, &entry.entry, &changes),
            )
        })
        .collect();
    report.written = apply(ctx, &plan, &project_entries, args.force)?;
    report.committed = committed(ctx, &plan);
    Ok(report)
}

/// Writes `.gitignore`, `.env` and `.env.example`, then each config file
/// once (local and user scope share `~/.claude.json`).
pub fn apply(
    ctx: &Ctx,
    plan: &ExtractionPlan,
    documented: &[(String, crate::model::ServerEntry)],
    force: bool,
) -> Result<Vec<PathBuf>, CliError> {
    let example = extract::example_variables(
        documented
            .iter()
            .map(|(name, entry)| (name.as_str(), entry)),
        &crate::templates::all(&ctx.template_dirs).0,
    );
    let mut by_file: Vec<Vec<(Target, Vec<store::FieldChange>)>> = Vec::new();
    for (target, changes) in &plan.changes {
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
    let configs: Vec<&std::path::Path> = by_file
        .iter()
        .map(|group| group[0].0.path.as_path())
        .collect();
    let mut progress = begin_writes(ctx, Some((plan, &example)), &configs);
    save_plan_env_with(ctx, plan, &example, force, &mut progress)?;
    for group in &by_file {
        let done = store::replace_fields(&ctx.locations, group)
            .map_err(|error| CliError::from(error).interrupted(&progress))?;
        progress.record(&group[0].0.path, done.changed);
    }
    Ok(progress.into_written())
}

/// The secrets of `plan` that git history of the project files holds.
fn committed(ctx: &Ctx, plan: &ExtractionPlan) -> Vec<Committed> {
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

fn scope_names(scopes: &[Scope]) -> String {
    match scopes {
        [one] => format!("{one} scope"),
        _ => "any scope".to_string(),
    }
}
