//! `mcpenv list`: every server of every scope, with precedence and approval.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::ListArgs;
use crate::cli::error::CliError;
use crate::cli::render::{Cell, DIM, RED, Report, YELLOW, shown, table, warning};
use crate::cli::resolve::Ctx;
use crate::config::inventory::Status;
use crate::config::scope::Scope;
use crate::ops::list_servers::{ServerList, list_servers};

pub use crate::ops::list_servers::{FileError, ListedServer, Warning, file_errors, warnings};

/// Every definition, by precedence.
#[derive(Debug, Serialize)]
pub struct ListReport {
    /// The servers, warnings and errors.
    #[serde(flatten)]
    pub list: ServerList,
    #[serde(skip)]
    add_hint: String,
    /// The command that approves every pending server (`-C DIR` kept).
    #[serde(skip)]
    approve_hint: Option<String>,
    /// Whether this folder is trusted in Claude Code (approvals count).
    #[serde(skip)]
    folder_trusted: bool,
}

/// Writes a file error as `error: …` and its `hint:` lines.
pub fn write_file_error(error: &FileError, err: &mut dyn Write) -> io::Result<()> {
    let style = RED.bold();
    writeln!(err, "{style}error:{style:#} {}", shown(&error.message))?;
    if !error.hints.is_empty() {
        writeln!(err)?;
    }
    for hint in &error.hints {
        writeln!(err, "hint: {}", shown(hint))?;
    }
    Ok(())
}

impl Report for ListReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.list.servers.is_empty() && self.list.managed.is_empty() {
            return Ok(());
        }
        let mut rows: Vec<Vec<Cell>> = self
            .list
            .servers
            .iter()
            .map(|server| {
                let status = server.status_text();
                let target = server.target();
                let style = match server.status {
                    Status::Active | Status::Pending => anstyle::Style::new(),
                    _ => DIM,
                };
                let status_style = match server.status {
                    Status::Pending | Status::Skipped | Status::Reserved => YELLOW,
                    Status::Blocked => RED,
                    _ => style,
                };
                vec![
                    Cell::styled(&server.name, style),
                    Cell::styled(server.scope.as_str(), style),
                    Cell::styled(server.transport_text(), style),
                    Cell::styled(status, status_style),
                    Cell::last(target, style),
                ]
            })
            .collect();
        rows.extend(self.list.managed.iter().map(|server| {
            let (status, style) = match server.blocked {
                Some(_) => ("blocked by policy", RED),
                None => ("", anstyle::Style::new()),
            };
            vec![
                Cell::styled(&server.name, style),
                Cell::styled("managed", style),
                Cell::styled(server.transport.as_str(), style),
                Cell::styled(status, style),
                Cell::last(server.target.clone(), style),
            ]
        }));
        table(
            out,
            &["NAME", "SCOPE", "TRANSPORT", "STATUS", "COMMAND / URL"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.list.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        for error in &self.list.errors {
            write_file_error(error, err)?;
        }
        for server in &self.list.servers {
            if let (Status::Blocked, Some(reason)) = (server.status, &server.reason) {
                warning(
                    err,
                    &format!("`{}` ({}): {reason}", server.name, server.scope),
                )?;
            }
        }
        for server in &self.list.managed {
            if let Some(blocked) = &server.blocked {
                warning(
                    err,
                    &format!("`{}` (managed): {}", server.name, blocked.message()),
                )?;
            }
        }
        if let Some(approve) = &self.approve_hint {
            writeln!(
                err,
                "hint: Claude Code asks before starting a pending project server; approve it with `{approve}`"
            )?;
            if !self.folder_trusted {
                writeln!(err, "hint: {}", crate::ops::Context::TRUST_NOTE)?;
            }
        }
        if self.list.servers.is_empty()
            && self.list.errors.is_empty()
            && self.list.managed.is_empty()
        {
            writeln!(err, "No MCP servers configured")?;
            writeln!(err, "hint: add one with `{}`", self.add_hint)?;
        }
        Ok(())
    }

    fn write_errors(&self, err: &mut dyn Write) -> io::Result<()> {
        self.list
            .errors
            .iter()
            .try_for_each(|error| write_file_error(error, err))
    }

    fn failed(&self) -> bool {
        !self.list.errors.is_empty()
    }
}

/// Runs `mcpenv list`.
pub fn run(ctx: &Ctx, args: &ListArgs) -> Result<ListReport, CliError> {
    let (list, read) = list_servers(&ctx.ops, args.scope.map(Scope::from));
    read.teach_shield(&ctx.shield);
    let pending: Vec<&str> = list
        .servers
        .iter()
        .filter(|server| server.approve_command.is_some())
        .map(|server| server.name.as_str())
        .collect();
    let folder_trusted = pending.is_empty() || ctx.folder_trusted();
    let approve_hint =
        (!pending.is_empty()).then(|| ctx.approve_command_in(folder_trusted, &pending));
    Ok(ListReport {
        add_hint: ctx.command(&["add", "NAME", "--", "COMMAND", "ARGS..."]),
        approve_hint,
        folder_trusted,
        list,
    })
}
