//! `mcpenv list`: every server of every scope, with precedence and approval.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::approval::Approval;
use crate::cli::args::ListArgs;
use crate::cli::error::CliError;
use crate::cli::render::{Cell, DIM, Report, YELLOW, table, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::layered::{Inventory, Note, Sourced};
use crate::model::Transport;
use crate::scope::Scope;

/// Every definition, by precedence.
#[derive(Debug, Serialize)]
pub struct ListReport {
    /// One row per definition (a name defined in two scopes has two rows).
    pub servers: Vec<ListedServer>,
    /// What Claude Code would skip or warn about.
    pub warnings: Vec<Warning>,
    #[serde(skip)]
    add_hint: String,
}

/// One definition of a server. Values of `env` and `headers` are never
/// included: only their names.
#[derive(Debug, Serialize)]
pub struct ListedServer {
    /// The server's name.
    pub name: String,
    /// Its scope.
    pub scope: Scope,
    /// Its transport.
    pub transport: Transport,
    /// stdio: the command.
    pub command: Option<String>,
    /// stdio: the arguments.
    pub args: Option<Vec<String>>,
    /// http, sse, ws: the URL.
    pub url: Option<String>,
    /// The file it is defined in.
    pub file: PathBuf,
    /// Whether another definition of the name wins.
    pub shadowed: bool,
    /// The scope of that definition.
    pub shadowed_by: Option<Scope>,
    /// Project servers: approved, pending or rejected in Claude Code.
    pub approval: Option<Approval>,
    /// Names of the variables in `env`.
    pub env_names: Vec<String>,
    /// Names of the headers.
    pub header_names: Vec<String>,
}

/// A note about a file.
#[derive(Debug, Serialize)]
pub struct Warning {
    /// The file.
    pub file: PathBuf,
    /// The note.
    pub message: String,
}

impl ListedServer {
    /// The row for `entry` in `inventory`.
    pub fn new(inventory: &Inventory, entry: &Sourced) -> Self {
        let transport = entry.entry.transport();
        let shadowed_by = inventory.shadowed_by(entry).map(|winner| winner.scope);
        let remote = transport.is_remote();
        Self {
            name: entry.name.clone(),
            scope: entry.scope,
            command: (!remote)
                .then(|| entry.entry.command().map(str::to_string))
                .flatten(),
            args: (!remote).then(|| entry.entry.args().into_iter().map(str::to_string).collect()),
            url: remote
                .then(|| entry.entry.url().map(str::to_string))
                .flatten(),
            transport,
            file: entry.file.clone(),
            shadowed: shadowed_by.is_some(),
            shadowed_by,
            approval: entry.approval,
            env_names: entry
                .entry
                .env()
                .into_iter()
                .map(|(key, _)| key.to_string())
                .collect(),
            header_names: entry
                .entry
                .headers()
                .into_iter()
                .map(|(key, _)| key.to_string())
                .collect(),
        }
    }

    /// The command line or URL, as one string.
    pub fn target(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => {
                let mut words = vec![command.clone()];
                words.extend(self.args.iter().flatten().cloned());
                shell_words(&words)
            }
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        }
    }

    /// "pending approval", "shadowed by local", ... or nothing when active.
    pub fn status(&self) -> String {
        match (self.shadowed_by, self.approval) {
            (Some(scope), _) => format!("shadowed by {scope}"),
            (None, Some(Approval::Pending)) => "pending approval".to_string(),
            (None, Some(Approval::Rejected)) => "rejected".to_string(),
            (None, Some(Approval::Approved)) => "approved".to_string(),
            (None, None) => String::new(),
        }
    }
}

impl Report for ListReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.servers.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .servers
            .iter()
            .map(|server| {
                let status = server.status();
                let dim = server.shadowed || server.approval == Some(Approval::Rejected);
                let style = if dim { DIM } else { anstyle::Style::new() };
                let status_style = if server.approval == Some(Approval::Pending) && !server.shadowed
                {
                    YELLOW
                } else {
                    style
                };
                vec![
                    Cell::styled(&server.name, style),
                    Cell::styled(server.scope.as_str(), style),
                    Cell::styled(server.transport.as_str(), style),
                    Cell::styled(status, status_style),
                    Cell::styled(server.target(), style),
                ]
            })
            .collect();
        table(
            out,
            &["NAME", "SCOPE", "TRANSPORT", "STATUS", "COMMAND / URL"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        if self.servers.is_empty() {
            writeln!(err, "No MCP servers configured")?;
            writeln!(err, "hint: add one with `{}`", self.add_hint)?;
        }
        Ok(())
    }
}

/// Runs `mcpenv list`.
pub fn run(ctx: &Ctx, args: &ListArgs) -> Result<ListReport, CliError> {
    let inventory = ctx.inventory()?;
    let scope = args.scope.map(Scope::from);
    let servers = inventory
        .entries
        .iter()
        .filter(|entry| scope.is_none_or(|scope| entry.scope == scope))
        .map(|entry| ListedServer::new(&inventory, entry))
        .collect();
    Ok(ListReport {
        servers,
        warnings: warnings(&inventory.notes),
        add_hint: ctx.command(&["add", "NAME", "--", "COMMAND", "ARGS..."]),
    })
}

/// Notes as report warnings.
pub fn warnings(notes: &[Note]) -> Vec<Warning> {
    notes
        .iter()
        .map(|note| Warning {
            file: note.path.clone(),
            message: note.message.clone(),
        })
        .collect()
}
