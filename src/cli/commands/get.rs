//! `mcpenv get`: the definition Claude Code uses for a name, with every
//! other scope that defines it. Values of `env` and `headers` are masked
//! unless `--reveal`.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::cli::args::GetArgs;
use crate::cli::commands::scope_file;
use crate::cli::error::CliError;
use crate::cli::render::{BOLD, DIM, Report, shown, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::config::approval::Approval;
use crate::config::inventory::Status;
use crate::ops::get_server::{GetReport, GetRequest, get_server};

/// The effective definition of one name, with its files as the text
/// names them.
#[derive(Debug, Serialize)]
pub struct GetOutput {
    /// The definition and the others.
    #[serde(flatten)]
    pub report: GetReport,
    #[serde(skip)]
    shown: Shown,
    #[serde(skip)]
    reveal: bool,
}

/// Text-only details.
#[derive(Debug, Default)]
struct Shown {
    file: String,
    others: Vec<String>,
}

impl Report for GetOutput {
    fn reveals(&self) -> bool {
        self.reveal
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{BOLD}{}{BOLD:#}", shown(&self.report.name))?;
        let mut rows: Vec<(String, String)> = vec![
            (
                "Scope".into(),
                format!(
                    "{} ({})",
                    self.report.scope,
                    self.report.scope.description()
                ),
            ),
            ("File".into(), self.shown.file.clone()),
        ];
        match (self.report.status, &self.report.reason) {
            (Status::Skipped, Some(reason)) => {
                rows.push(("Status".into(), format!("skipped by Claude Code: {reason}")));
            }
            (Status::Reserved | Status::Blocked, Some(reason)) => {
                rows.push(("Status".into(), reason.clone()));
            }
            (Status::Disabled, _) => rows.push((
                "Status".into(),
                "disabled for this project (`disabledMcpServers`): Claude Code lists it and never starts it; re-enable it with `/mcp`".into(),
            )),
            _ => {}
        }
        if let Some(approval) = self
            .report
            .approval
            .filter(|_| !self.report.status.not_loaded())
        {
            rows.push(("Approval".into(), approval_text(approval).into()));
        }
        let entry = self.report.entry.as_object();
        let untyped_url = entry.is_some_and(|entry| {
            !entry.contains_key("type")
                && !entry.contains_key("command")
                && entry.contains_key("url")
        });
        rows.push((
            "Type".into(),
            if untyped_url {
                "none (so Claude Code reads it as stdio, which needs a `command`)".into()
            } else {
                self.report.transport.to_string()
            },
        ));
        for (key, value) in self.report.entry.as_object().into_iter().flatten() {
            match (key.as_str(), value) {
                ("type", _) => {}
                ("command", Value::String(command)) => {
                    rows.push(("Command".into(), command.clone()));
                }
                ("url", Value::String(url)) => rows.push(("URL".into(), url.clone())),
                ("args", Value::Array(args)) => {
                    let words: Vec<String> = args
                        .iter()
                        .map(|arg| arg.as_str().map_or_else(|| arg.to_string(), str::to_string))
                        .collect();
                    rows.push(("Args".into(), shell_words(&words)));
                }
                ("env" | "headers", Value::Object(members)) => {
                    let separator = if key == "env" { "=" } else { ": " };
                    let label = if key == "env" {
                        "Environment"
                    } else {
                        "Headers"
                    };
                    if members.is_empty() {
                        rows.push((label.into(), "(none)".into()));
                    }
                    for (index, (name, value)) in members.iter().enumerate() {
                        let value = value
                            .as_str()
                            .map_or_else(|| value.to_string(), str::to_string);
                        let label = if index == 0 {
                            label.to_string()
                        } else {
                            String::new()
                        };
                        rows.push((label, format!("{name}{separator}{value}")));
                    }
                }
                (other, value) => rows.push((other.to_string(), value.to_string())),
            }
        }
        let width = rows
            .iter()
            .map(|(label, _)| shown(label).chars().count() + 1)
            .max()
            .unwrap_or(0)
            + 1;
        for (label, value) in &rows {
            let label = if label.is_empty() {
                String::new()
            } else {
                format!("{label}:")
            };
            // Labels and values come from the file: escaped.
            let (label, value) = (shown(&label), shown(value));
            let pad = width.saturating_sub(label.chars().count());
            writeln!(out, "  {label}{:pad$}{value}", "")?;
        }
        if !self.shown.others.is_empty() {
            writeln!(out)?;
            writeln!(out, "Also defined in:")?;
            for other in &self.shown.others {
                writeln!(out, "  {DIM}{other}{DIM:#}")?;
            }
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.report.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        for error in &self.report.errors {
            crate::cli::commands::list::write_file_error(error, err)?;
        }
        Ok(())
    }

    fn write_errors(&self, err: &mut dyn Write) -> io::Result<()> {
        self.report
            .errors
            .iter()
            .try_for_each(|error| crate::cli::commands::list::write_file_error(error, err))
    }

    fn failed(&self) -> bool {
        !self.report.errors.is_empty()
    }
}

fn approval_text(approval: Approval) -> &'static str {
    match approval {
        Approval::Approved => "approved",
        Approval::Pending => "pending (Claude Code asks before starting it)",
        Approval::Rejected => "rejected (in disabledMcpjsonServers; Claude Code never starts it)",
    }
}

/// Runs `mcpenv get`.
pub fn run(ctx: &Ctx, args: &GetArgs) -> Result<GetOutput, CliError> {
    let request = GetRequest {
        name: args.name.clone(),
        reveal: args.reveal,
    };
    let report = get_server(ctx, &request)?;
    let shown = Shown {
        file: scope_file(ctx, report.scope, &report.file),
        others: report
            .other_definitions
            .iter()
            .map(|other| {
                let approval = other
                    .approval
                    .filter(|_| !other.status.not_loaded())
                    .map(|approval| format!(", {}", approval.as_str()))
                    .unwrap_or_default();
                let status = if other.status.not_loaded() {
                    other.status.as_str()
                } else {
                    "shadowed"
                };
                format!(
                    "{:<8} {} ({status}{approval})",
                    other.scope.as_str(),
                    scope_file(ctx, other.scope, &other.file)
                )
            })
            .collect(),
    };
    Ok(GetOutput {
        report,
        shown,
        reveal: args.reveal,
    })
}
