//! `mcpenv export --to CLIENT`: the servers of a scope, written into that
//! client's own file for the same scope, in its own placeholder syntax.
//! Clients that expand nothing (Zed, Claude Desktop) get resolved values,
//! and only in user-level files outside the repository.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::args::{ClientArg, ExportArgs, ExportScope};
use crate::cli::commands::extract::known_values;
use crate::cli::error::CliError;
use crate::cli::render::{Report, warning};
use crate::cli::resolve::Ctx;
use crate::clients::export::{self, ExportOptions};
use crate::clients::{self, Client};
use crate::fsx::{self, NewMode, TextEditError};
use crate::model::ServerEntry;
use crate::scope::Scope;

/// What `export` did (or, with `--check`, found).
#[derive(Debug, Serialize)]
pub struct ExportReport {
    /// The client.
    pub client: Client,
    /// Its file.
    pub file: PathBuf,
    /// The servers exported.
    pub servers: Vec<String>,
    /// Whether the file changed (or, with `--check`, would change).
    pub changed: bool,
    /// Whether this was `--check`.
    pub check: bool,
    /// What could not be carried over exactly.
    pub warnings: Vec<String>,
}

impl Report for ExportReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for message in &self.warnings {
            warning(err, message)?;
        }
        let file = self.file.display();
        match (self.check, self.changed) {
            (true, true) => writeln!(
                err,
                "`{file}` is out of date with the {} servers; run `mcpenv export --to {}`",
                self.servers.len(),
                self.client
            ),
            (true, false) => writeln!(err, "`{file}` is in sync ({} servers)", self.servers.len()),
            (false, true) => writeln!(
                err,
                "Exported {} servers to {}\nWrote `{file}`",
                self.servers.len(),
                self.client
            ),
            (false, false) => writeln!(
                err,
                "`{file}` already holds these {} servers; nothing to write",
                self.servers.len()
            ),
        }
    }

    fn failed(&self) -> bool {
        self.check && self.changed
    }
}

/// The mcpenv client for a command-line client name.
pub fn client_of(argument: ClientArg) -> Client {
    match argument {
        ClientArg::ClaudeDesktop => Client::ClaudeDesktop,
        ClientArg::Cursor => Client::Cursor,
        ClientArg::Vscode => Client::Vscode,
        ClientArg::Windsurf => Client::Windsurf,
        ClientArg::Gemini => Client::Gemini,
        ClientArg::Codex => Client::Codex,
        ClientArg::Zed => Client::Zed,
    }
}

/// A client's project-level and user-level files.
pub fn client_files(ctx: &Ctx, client: Client) -> (Option<PathBuf>, Option<PathBuf>) {
    let project = repository(ctx);
    let mut project_file = None;
    let mut user_file = None;
    for file in clients::known_files(&ctx.locations.home, &ctx.config_home, &project) {
        if file.client != client {
            continue;
        }
        if file.path.starts_with(&project) {
            project_file.get_or_insert(file.path);
        } else {
            user_file.get_or_insert(file.path);
        }
    }
    (project_file, user_file)
}

fn repository(ctx: &Ctx) -> PathBuf {
    ctx.locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.working_dir.clone())
}

/// Runs `mcpenv export`.
pub fn run(ctx: &Ctx, args: &ExportArgs) -> Result<ExportReport, CliError> {
    let client = client_of(args.to);
    let expands_nothing = matches!(client, Client::Zed | Client::ClaudeDesktop);
    let (project_file, user_file) = client_files(ctx, client);
    let file = match args.scope {
        ExportScope::Project if expands_nothing => {
            return Err(CliError::usage(format!(
                "{client} expands no placeholders, so its file would hold the secrets themselves; mcpenv never writes those into the repository"
            ))
            .with_hint(format!("export to its user file instead: `{}`", ctx.command(&["export", "--to", client.as_str(), "--scope", "user"]))));
        }
        ExportScope::Project => project_file.ok_or_else(|| {
            CliError::usage(format!("{client} has no project-level config file")).with_hint(
                format!(
                    "export to its user file: `{}`",
                    ctx.command(&["export", "--to", client.as_str(), "--scope", "user"])
                ),
            )
        })?,
        ExportScope::User => user_file.ok_or_else(|| {
            CliError::usage(format!(
                "{client} has no user-level config file mcpenv knows"
            ))
        })?,
    };
    if expands_nothing && file.starts_with(repository(ctx)) {
        return Err(CliError::failure(format!("`{}` is inside the repository; mcpenv does not write resolved secrets there", file.display()))
            .with_hint("move the project out of your home folder's config, or use a client that expands placeholders"));
    }
    let servers = servers_of(ctx, args.scope)?;
    let lookup = known_values(ctx)?;
    let options = ExportOptions {
        vscode_inputs: args.vscode_inputs,
        lookup: expands_nothing.then_some(&lookup as &dyn Fn(&str) -> Option<String>),
    };
    let existing = fsx::read_if_exists(&file).map_err(|error| {
        CliError::failure_from(format!("cannot read `{}`", file.display()), error)
    })?;
    let export_error = |error: export::ExportError| {
        CliError::failure_from(format!("cannot export to `{}`", file.display()), error)
            .with_hint("fix the file by hand, or set the variables it names; nothing was written")
    };
    if args.check {
        let changed = match &existing {
            Some(text) => {
                !export::in_sync(client, text, &servers, &options).map_err(export_error)?
            }
            None => !servers.is_empty(),
        };
        return Ok(report(client, file, &servers, changed, true, Vec::new()));
    }
    if let Some(parent) = file.parent() {
        fs_err::create_dir_all(parent).map_err(|error| {
            CliError::failure_from(format!("cannot create `{}`", parent.display()), error)
        })?;
    }
    let mut warnings = Vec::new();
    let changed = fsx::edit_text(
        &ctx.locations.state_dir,
        &file,
        new_mode(expands_nothing),
        |old| {
            let exported = export::export(client, old, &servers, &options)?;
            warnings = exported.warnings;
            Ok(exported.changed.then_some(exported.text))
        },
    )
    .map_err(|error| match error {
        TextEditError::Change(error) => export_error(error),
        TextEditError::Read(source) | TextEditError::Write(source) => {
            CliError::failure_from(format!("cannot write `{}`", file.display()), source)
        }
        TextEditError::Locked(_) | TextEditError::Contended => {
            CliError::failure(format!("`{}` is busy; try again", file.display()))
        }
    })?;
    if expands_nothing {
        warnings.push(format!(
            "`{}` now holds secret values: {client} expands no placeholders",
            file.display()
        ));
    }
    Ok(report(client, file, &servers, changed, false, warnings))
}

/// A file holding resolved secrets is private when mcpenv creates it.
fn new_mode(holds_secrets: bool) -> NewMode {
    if holds_secrets {
        NewMode::Exact(0o600)
    } else {
        NewMode::Umasked(0o644)
    }
}

fn report(
    client: Client,
    file: PathBuf,
    servers: &[(String, ServerEntry)],
    changed: bool,
    check: bool,
    warnings: Vec<String>,
) -> ExportReport {
    ExportReport {
        client,
        file,
        servers: servers.iter().map(|(name, _)| name.clone()).collect(),
        changed,
        check,
        warnings,
    }
}

/// The servers of a scope: every server of the project's `.mcp.json`
/// whatever its approval, or the user's servers.
fn servers_of(ctx: &Ctx, scope: ExportScope) -> Result<Vec<(String, ServerEntry)>, CliError> {
    let inventory = ctx.inventory()?;
    let project_file = ctx.locations.project_file_for_write();
    Ok(inventory
        .entries
        .into_iter()
        .filter(|entry| match scope {
            ExportScope::Project => entry.scope == Scope::Project && entry.file == project_file,
            ExportScope::User => entry.scope == Scope::User,
        })
        .map(|entry| (entry.name, entry.entry))
        .collect())
}
