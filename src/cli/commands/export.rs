//! `mcpenv export --to CLIENT`: the servers of a scope, written into that
//! client's own file for the same scope, in its own placeholder syntax.
//! Clients that expand nothing (Zed, Claude Desktop) get resolved values,
//! and only in user-level files outside the repository.

use std::io::{self, Write};

use crate::cli::args::{ClientArg, ExportArgs};
use crate::cli::commands::import::plural;
use crate::cli::error::CliError;
use crate::cli::render::{Report, warning};
use crate::cli::resolve::Ctx;
use crate::clients::Client;
use crate::ops::export_servers::{
    EnvFileChoice, ExportReport, ExportRequest, ExportScope, apply_export, check_export,
    plan_export,
};

impl Report for ExportReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        // The check's diff is data: stdout, through the shield like all
        // output (secrets masked, controls escaped).
        match &self.diff {
            Some(diff) => write!(out, "{diff}"),
            None => Ok(()),
        }
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for message in &self.warnings {
            warning(err, message)?;
        }
        for hint in &self.hints {
            writeln!(err, "hint: {hint}")?;
        }
        let file = self.file.display();
        let servers = plural(self.servers.len());
        let pruned = self
            .pruned
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.servers.is_empty() && self.pruned.is_empty() {
            let why = if self.not_exported.is_empty() {
                format!("the {} scope has no servers", self.scope.as_str())
            } else {
                match self.not_exported.len() {
                    1 => format!(
                        "its one server cannot be written for {}",
                        self.client.title()
                    ),
                    count => format!(
                        "none of its {count} servers can be written for {}",
                        self.client.title()
                    ),
                }
            };
            return if self.check {
                writeln!(err, "`{file}` is in sync (nothing to export: {why})")
            } else {
                writeln!(
                    err,
                    "Nothing to export to {}: {why}; `{file}` left as it was",
                    self.client
                )
            };
        }
        match (self.check, self.changed) {
            (true, true) if !self.pruned.is_empty() => writeln!(
                err,
                "`{file}` is out of date with the {servers} (would prune {pruned}); run `{}`",
                self.fix
            ),
            (true, true) => writeln!(
                err,
                "`{file}` is out of date with the {servers}; run `{}`",
                self.fix
            ),
            (true, false) => writeln!(err, "`{file}` is in sync ({servers})"),
            (false, true) => {
                if !self.servers.is_empty() {
                    writeln!(err, "Exported {servers} to {}", self.client)?;
                }
                if !self.pruned.is_empty() {
                    writeln!(
                        err,
                        "Pruned {pruned}: gone from the {} scope",
                        self.scope.as_str()
                    )?;
                }
                writeln!(
                    err,
                    "Wrote {}",
                    crate::ops::shown_paths::written(&self.file)
                )
            }
            (false, false) => writeln!(
                err,
                "`{file}` already holds {}; nothing to write",
                if self.servers.len() == 1 {
                    "this server".to_string()
                } else {
                    format!("these {servers}")
                }
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

/// Runs `mcpenv export`.
pub fn run(ctx: &Ctx, args: &ExportArgs) -> Result<ExportReport, CliError> {
    let request = ExportRequest {
        client: client_of(args.to),
        scope: match args.scope {
            crate::cli::args::ExportScope::Project => ExportScope::Project,
            crate::cli::args::ExportScope::User => ExportScope::User,
        },
        vscode_inputs: args.vscode_inputs,
        // A check counts what a prune would remove: the file is out of date
        // while such entries remain.
        prune: args.prune || args.check,
        env_file: args.env_file.as_ref().map(|path| match path {
            Some(path) => EnvFileChoice::Path(path.clone()),
            None => EnvFileChoice::Default,
        }),
    };
    let plan = plan_export(ctx, &request)?;
    if args.check {
        return Ok(check_export(ctx, plan));
    }
    apply_export(ctx, plan)
}
