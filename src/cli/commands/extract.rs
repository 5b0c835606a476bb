//! `mcpenv extract`: move literal secrets into dotenv files and leave
//! `${VAR}` placeholders behind: those of project and local servers into
//! the project's `.env`, those of user servers (used in every project)
//! into the user's store, `~/.config/mcpenv/.env`. The dotenv files are
//! written first and the configs last, so no placeholder ever points at a
//! lost value.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::ExtractArgs;
use crate::cli::commands::{shown_env_file, shown_path};
use crate::cli::error::CliError;
use crate::cli::render::{Cell, Report, shown, table, warning};
use crate::cli::resolve::Ctx;
use crate::config::scope::Scope;
use crate::ops::extract_secrets::{
    ExtractReport, ExtractRequest, apply_extract, plan_extract, scope_names,
};
use crate::ops::secret_stores::SecretStore;
use crate::stores::references;

/// What an extraction moved, with how the text shows it.
#[derive(Debug, Serialize)]
pub struct ExtractOutput {
    /// The moves, the files written and the committed secrets.
    #[serde(flatten)]
    pub report: ExtractReport,
    /// Each move's file and variable, as shown.
    #[serde(skip)]
    shown: Vec<(String, String)>,
    /// Each dotenv file the moves go to, as shown, with how many go there.
    #[serde(skip)]
    destinations: Vec<(String, usize)>,
    /// Whether a value went to the user's store, which `mcpenv run` loads.
    #[serde(skip)]
    to_user_store: bool,
}

impl Report for ExtractOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.report.moves.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .report
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
        if self.report.moves.is_empty() {
            writeln!(
                err,
                "Nothing to extract: no literal secrets in {}",
                scope_names(&self.report.scopes)
            )?;
            // `.env.example` documented all the same; a dry run's diff
            // shows it.
            if !self.report.dry_run {
                if !self.report.written.is_empty() {
                    writeln!(err, "Documented the servers' variables for teammates")?;
                }
                for file in &self.report.written {
                    writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
                }
            }
            for message in &self.report.warnings {
                warning(err, message)?;
            }
            return Ok(());
        }
        let verb = if self.report.dry_run {
            "Would move"
        } else {
            "Moved"
        };
        for (index, (file, count)) in self.destinations.iter().enumerate() {
            let secrets = if *count == 1 { "secret" } else { "secrets" };
            let last = index + 1 == self.destinations.len();
            let note = if self.report.dry_run && last {
                " (dry run: nothing was written)"
            } else {
                ""
            };
            match self.report.store {
                SecretStore::Keychain => writeln!(
                    err,
                    "{verb} {count} {secrets} into the keychain, named in `{file}`{note}"
                )?,
                SecretStore::Dotenv => {
                    writeln!(err, "{verb} {count} {secrets} into `{file}`{note}")?;
                }
            }
        }
        if !self.report.dry_run {
            for file in &self.report.written {
                writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
            }
            if self.to_user_store || self.report.store == SecretStore::Keychain {
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
        for message in &self.report.warnings {
            warning(err, message)?;
        }
        for committed in &self.report.committed {
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

/// `VAR=REFERENCE`, where the reference is one a team can share.
fn parse_reference(given: &str) -> Result<(String, String), CliError> {
    // Only the name is repeated: a value given by mistake may be a secret.
    let name_given = given.split_once('=').map_or("…", |(name, _)| name);
    let usage = |why: &str| {
        CliError::usage(format!("`--reference {}=…`: {why}", shown(name_given))).with_hint(
            "give the variable and where the team keeps it: `--reference GITHUB_TOKEN=op://Engineering/GitHub/token`",
        )
    };
    let Some((name, reference)) = given.split_once('=') else {
        return Err(usage("expected `VAR=REFERENCE`"));
    };
    if !crate::config::expansion::is_variable_name(name) {
        return Err(usage(&format!("`{}` is not a variable name", shown(name))));
    }
    match references::manager_of(reference) {
        Some(manager) if manager.shared() => Ok((name.to_string(), reference.to_string())),
        _ => Err(usage(
            "not a reference a team can share (supported: 1Password's `op://vault/item/field`)",
        )),
    }
}

/// Runs `mcpenv extract`.
pub fn run(ctx: &Ctx, args: &ExtractArgs) -> Result<ExtractOutput, CliError> {
    let request = ExtractRequest {
        scope: args.scope.map(Scope::from),
        all: args.all,
        servers: args.servers.clone(),
        force: args.force,
        store: args.to.into(),
        references: args
            .references
            .iter()
            .map(|given| parse_reference(given))
            .collect::<Result<_, _>>()?,
    };
    let plan = plan_extract(ctx, &request)?;
    // A dry run writes as usual through `edits`, which shows instead.
    let mut report = apply_extract(ctx, plan)?;
    report.dry_run = args.dry_run;
    Ok(output(ctx, report))
}

/// `report` with its files and variables as the text shows them.
fn output(ctx: &Ctx, report: ExtractReport) -> ExtractOutput {
    let mut destinations: Vec<(String, usize)> = Vec::new();
    for moved in &report.moves {
        let file = shown_env_file(ctx, &moved.env_file);
        match destinations.iter_mut().find(|(shown, _)| *shown == file) {
            Some((_, count)) => *count += 1,
            None => destinations.push((file, 1)),
        }
    }
    let user_store = ctx.user_env_file();
    ExtractOutput {
        shown: report
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
        to_user_store: report
            .moves
            .iter()
            .any(|moved| moved.env_file == user_store),
        report,
    }
}
