//! `mcpenv import --from CLIENT`: servers from another client's file, its
//! placeholder syntax turned into `${VAR}`, literal secrets moved to `.env`
//! exactly as `extract` does, and every field that could not be carried
//! over reported.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;
use serde_json::Value;

use crate::cli::args::ImportArgs;
use crate::cli::commands::export::client_of;
use crate::cli::commands::shown_env_files;
use crate::cli::error::CliError;
use crate::cli::render::{Report, shown, warning};
use crate::cli::resolve::Ctx;
use crate::config::model::ServerEntry;
use crate::config::scope::Scope;
use crate::ops::import_servers::{
    Clash, ClashAnswer, ImportReport, ImportRequest, RepositoryServers, apply_import, plan_import,
};

/// What `import` did, with the dotenv files as the text names them.
#[derive(Debug, Serialize)]
pub struct ImportOutput {
    /// The servers imported, left out, renamed, and the secrets moved.
    #[serde(flatten)]
    pub report: ImportReport,
    #[serde(skip)]
    env_files_shown: Vec<String>,
}

impl Report for ImportOutput {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.report.notes {
            warning(err, note)?;
        }
        crate::cli::commands::write_moves(
            err,
            &self.report.moves,
            &self.env_files_shown,
            self.report.dry_run,
        )?;
        let names: Vec<String> = self
            .report
            .servers
            .iter()
            .map(|name| format!("`{}`", crate::mechanics::display::escape(name)))
            .collect();
        let verb = if self.report.dry_run {
            "Would import"
        } else {
            "Imported"
        };
        if !self.report.already_imported.is_empty() {
            let already: Vec<String> = self
                .report
                .already_imported
                .iter()
                .map(|name| format!("`{name}`"))
                .collect();
            writeln!(
                err,
                "Already in {} scope as imported: {}",
                self.report.scope,
                already.join(", ")
            )?;
        }
        if self.report.servers.is_empty() && !self.report.skipped.is_empty() {
            writeln!(
                err,
                "Imported nothing from {} (`{}`): you skipped {}",
                self.report.client,
                self.report.file.display(),
                if self.report.skipped.len() == 1 {
                    "the one server whose name is taken"
                } else {
                    "every server whose name is taken"
                }
            )?;
        } else if self.report.servers.is_empty() {
            writeln!(
                err,
                "Nothing to import from {} (`{}`)",
                self.report.client,
                self.report.file.display()
            )?;
        } else {
            writeln!(
                err,
                "{verb} {} from {} (`{}`) into {} scope: {}",
                plural(self.report.servers.len()),
                self.report.client,
                self.report.file.display(),
                self.report.scope,
                names.join(", ")
            )?;
        }
        if let Some(left) = &self.report.left_in_source {
            warning(
                err,
                &format!(
                    "`{}` still holds {} in plain text: import reads that file and leaves it as it was",
                    self.report.file.display(),
                    if left.secrets == 1 {
                        "the moved secret".to_string()
                    } else {
                        format!("the {} moved secrets", left.secrets)
                    }
                ),
            )?;
            writeln!(err, "hint: {}", left.advice)?;
        }
        // A dry run wrote nothing: its diffs above say what would change.
        if !self.report.dry_run {
            for file in &self.report.written {
                writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
            }
        }
        Ok(())
    }
}

/// `1 server`, `2 servers`.
pub fn plural(count: usize) -> String {
    if count == 1 {
        "1 server".to_string()
    } else {
        format!("{count} servers")
    }
}

/// Runs `mcpenv import`.
pub fn run(ctx: &Ctx, args: &ImportArgs) -> Result<ImportOutput, CliError> {
    let client = client_of(args.from);
    // The flags but `--from`, which `add-from-claude-desktop` shares.
    let options = &args.options;
    let request = ImportRequest {
        client,
        file: options.file.clone(),
        scope: Scope::from(options.scope),
        servers: options.servers.clone(),
        rename: options.rename.clone(),
        replace: options.replace,
        include_disabled: options.include_disabled,
        force: options.force,
        trust_file: options.trust_file,
    };
    // A clash is asked about only on a terminal, and never when the
    // answer would be lost (a dry run, JSON).
    let can_ask = !options.dry_run
        && !options.json
        && io::stdin().is_terminal()
        && io::stderr().is_terminal();
    let mut ask = |clash: &Clash| {
        show_clash(ctx, clash);
        ask_about_clash(&clash.name, clash.scope).ok()
    };
    let mut confirm = |servers: &RepositoryServers| confirm_repository(ctx, servers);
    let plan = plan_import(
        ctx,
        &request,
        can_ask.then_some(&mut ask as _),
        can_ask.then_some(&mut confirm as _),
    )?;
    // A dry run writes as usual through `edits`, which shows instead.
    let mut report = apply_import(ctx, plan)?;
    report.dry_run = options.dry_run;
    Ok(ImportOutput {
        env_files_shown: shown_env_files(ctx, &report.moves),
        report,
    })
}

/// Shows the servers of a repository file, each with what it runs, and
/// asks whether to take them into a scope Claude Code starts without
/// asking. No answer is no.
fn confirm_repository(ctx: &Ctx, repository: &RepositoryServers) -> bool {
    let _ = crate::cli::output::write(
        &ctx.shield,
        crate::cli::output::Stream::Stderr,
        false,
        |err| {
            writeln!(
                err,
                "`{}` is a file of this repository, written by whoever committed it. In {} scope, Claude Code starts these servers without asking:",
                repository.file.display(),
                repository.scope
            )?;
            for (name, runs) in &repository.servers {
                writeln!(err, "  `{}` runs `{}`", shown(name), shown(runs))?;
            }
            Ok(())
        },
    );
    dialoguer::Confirm::new()
        .with_prompt(format!("Import them into {} scope?", repository.scope))
        .default(false)
        .interact()
        .unwrap_or(false)
}

/// Shows how the entry in the file differs from the one being imported
/// (through the shield: either may hold a literal secret).
fn show_clash(ctx: &Ctx, clash: &Clash) {
    let Clash {
        name,
        scope,
        existing,
        incoming,
    } = clash;
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    ctx.shield.learn(|redactor| {
        redactor.learn_entry(&ServerEntry::from_value(existing.clone()));
        redactor.learn_entry(&ServerEntry::from_value(incoming.clone()));
    });
    let diff = crate::mechanics::diff::unified(
        &pretty(existing),
        &pretty(incoming),
        &format!("{name} ({scope} scope, now)"),
        &format!("{name} (imported)"),
    );
    let _ = crate::cli::output::write(
        &ctx.shield,
        crate::cli::output::Stream::Stderr,
        false,
        |err| {
            if diff.is_empty() {
                writeln!(
                    err,
                    "`{}` in {scope} scope differs only in how it is written",
                    shown(name)
                )
            } else {
                diff.lines()
                    .try_for_each(|line| writeln!(err, "{}", shown(line)))
            }
        },
    );
}

/// Asks on the terminal what to do about `name`; an error (Ctrl-C, end of
/// input, cancel) means stop without writing anything.
fn ask_about_clash(name: &str, scope: Scope) -> Result<ClashAnswer, dialoguer::Error> {
    let choices = [
        "Replace it",
        "Replace it and every other server that clashes",
        "Import under another name",
        "Skip it",
        "Skip it and every other server that clashes",
        "Cancel the import",
    ];
    let choice = dialoguer::Select::new()
        .with_prompt(format!(
            "MCP server `{}` already exists in {scope} scope",
            shown(name)
        ))
        .items(choices)
        .default(5)
        .interact()?;
    Ok(match choice {
        0 => ClashAnswer::Replace,
        1 => ClashAnswer::ReplaceAll,
        2 => ClashAnswer::Rename(
            dialoguer::Input::<String>::new()
                .with_prompt("New name")
                .interact_text()?,
        ),
        3 => ClashAnswer::Skip,
        4 => ClashAnswer::SkipAll,
        _ => {
            return Err(dialoguer::Error::IO(io::Error::new(
                io::ErrorKind::Interrupted,
                "cancelled",
            )));
        }
    })
}
