//! `mcpenv get`: the definition Claude Code uses for a name, with every
//! other scope that defines it. Values of `env` and `headers` are masked
//! unless `--reveal`.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::approval::Approval;
use crate::cli::args::GetArgs;
use crate::cli::commands::{list, scope_file};
use crate::cli::error::CliError;
use crate::cli::render::{BOLD, DIM, Report, shown, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::layered::Status;
use crate::model::Transport;
use crate::ops::names::unknown_name_hints;
use crate::redact;
use crate::scope::Scope;

/// The effective definition of one name.
#[derive(Debug, Serialize)]
pub struct GetReport {
    /// The server's name.
    pub name: String,
    /// The scope whose definition Claude Code uses.
    pub scope: Scope,
    /// The file it is defined in.
    pub file: PathBuf,
    /// Project servers: Claude Code's approval.
    pub approval: Option<Approval>,
    /// What Claude Code makes of it (see `list`).
    pub status: Status,
    /// For `skipped` and `reserved`: Claude Code's reason.
    pub reason: Option<String>,
    /// Its transport.
    pub transport: Transport,
    /// The entry as written, with `env` and `headers` values masked unless
    /// `--reveal` (placeholders such as `${TOKEN}` are shown as they are).
    pub entry: Value,
    /// Every other definition of the name, by precedence.
    pub other_definitions: Vec<OtherDefinition>,
    /// Notes about the files read.
    pub warnings: Vec<list::Warning>,
    /// Files Claude Code does not load at all.
    pub errors: Vec<list::FileError>,
    #[serde(skip)]
    shown: Shown,
    #[serde(skip)]
    reveal: bool,
}

/// Another scope's definition of the same name.
#[derive(Debug, Serialize)]
pub struct OtherDefinition {
    /// Its scope.
    pub scope: Scope,
    /// Its file.
    pub file: PathBuf,
    /// Project servers: Claude Code's approval.
    pub approval: Option<Approval>,
    /// What Claude Code makes of it.
    pub status: Status,
}

/// Text-only details.
#[derive(Debug, Default)]
struct Shown {
    file: String,
    others: Vec<String>,
}

impl Report for GetReport {
    fn reveals(&self) -> bool {
        self.reveal
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{BOLD}{}{BOLD:#}", shown(&self.name))?;
        let mut rows: Vec<(String, String)> = vec![
            (
                "Scope".into(),
                format!("{} ({})", self.scope, self.scope.description()),
            ),
            ("File".into(), self.shown.file.clone()),
        ];
        match (self.status, &self.reason) {
            (Status::Skipped, Some(reason)) => {
                rows.push(("Status".into(), format!("skipped by Claude Code: {reason}")));
            }
            (Status::Reserved, Some(reason)) => rows.push(("Status".into(), reason.clone())),
            (Status::Disabled, _) => rows.push((
                "Status".into(),
                "disabled for this project (`disabledMcpServers`): Claude Code lists it and never starts it; re-enable it with `/mcp`".into(),
            )),
            _ => {}
        }
        if let Some(approval) = self.approval.filter(|_| !self.status.not_loaded()) {
            rows.push(("Approval".into(), approval_text(approval).into()));
        }
        rows.push(("Type".into(), self.transport.to_string()));
        for (key, value) in self.entry.as_object().into_iter().flatten() {
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
        for note in &self.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        for error in &self.errors {
            crate::cli::commands::list::write_file_error(error, err)?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        !self.errors.is_empty()
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
pub fn run(ctx: &Ctx, args: &GetArgs) -> Result<GetReport, CliError> {
    let inventory = list::load_inventory(ctx);
    let Some(winner) = inventory.winner(&args.name) else {
        let mut error = CliError::failure(format!("no MCP server named `{}`", args.name));
        for hint in unknown_name_hints(ctx, &inventory, &args.name) {
            error = error.with_hint(hint);
        }
        for file in list::file_errors(&inventory) {
            error = error.with_hint(format!(
                "it may be in a file Claude Code does not load: {}",
                file.message
            ));
        }
        return Err(error);
    };
    let others: Vec<_> = inventory
        .all_named(&args.name)
        .into_iter()
        .filter(|entry| !std::ptr::eq(*entry, winner))
        .collect();
    let entry = if args.reveal {
        winner.entry.to_value()
    } else {
        masked(winner.entry.fields())
    };
    Ok(GetReport {
        name: winner.name.clone(),
        scope: winner.scope,
        file: winner.file.clone(),
        approval: winner.approval,
        status: inventory.status(winner),
        reason: winner.reason(),
        transport: winner.entry.transport(),
        entry,
        other_definitions: others
            .iter()
            .map(|other| OtherDefinition {
                scope: other.scope,
                file: other.file.clone(),
                approval: other.approval,
                status: inventory.status(other),
            })
            .collect(),
        // Notes about the files, and about this server; not about others.
        warnings: list::warnings(
            &inventory
                .notes
                .iter()
                .filter(|note| {
                    note.server
                        .as_ref()
                        .is_none_or(|server| *server == args.name)
                })
                .cloned()
                .collect::<Vec<_>>(),
        ),
        errors: list::file_errors(&inventory),
        reveal: args.reveal,
        shown: Shown {
            file: scope_file(ctx, winner.scope, &winner.file),
            others: others
                .iter()
                .map(|other| {
                    let status = inventory.status(other);
                    let approval = other
                        .approval
                        .filter(|_| !status.not_loaded())
                        .map(|approval| format!(", {}", approval.as_str()))
                        .unwrap_or_default();
                    let status = if status.not_loaded() {
                        status.as_str()
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
        },
    })
}

/// The entry with every `env` and `headers` value masked.
fn masked(fields: &Map<String, Value>) -> Value {
    let mut fields = fields.clone();
    for key in ["env", "headers"] {
        if let Some(Value::Object(members)) = fields.get_mut(key) {
            for value in members.values_mut() {
                if let Value::String(text) = value {
                    *text = redact::display_value(text);
                }
            }
        }
    }
    Value::Object(fields)
}
