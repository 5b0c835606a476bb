//! `mcpenv check`: whether every server in effect has what it needs, before
//! anything fails. Exit 0 when it does, 1 otherwise (`--strict`: warnings
//! too). Never prints a value.

use std::io::{self, Write};

use anstyle::Style;
use serde::Serialize;

use crate::check::platforms::System;
use crate::check::{Blanked, Finding, Severity, State, Status};
use crate::cli::args::CheckArgs;
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::render::{BOLD, DIM, GREEN, RED, Report, YELLOW, shown, write_hanging};
use crate::cli::resolve::{Ctx, dotenv_error};
use crate::ops::Loaded;
use crate::ops::check_environment::{
    CheckError, EnvironmentCheck, Platforms, check_environment_for,
};

/// The report `check` (and `onboard`, at its end) prints.
#[derive(Debug, Serialize)]
pub struct CheckOutput {
    /// Whether every server in effect has what it needs, and the report.
    #[serde(flatten)]
    pub check: EnvironmentCheck,
    #[serde(skip)]
    files: Vec<Option<String>>,
    #[serde(skip)]
    sources: Vec<Option<String>>,
    /// Per variable, as shown: the dotenv file that holds it too.
    #[serde(skip)]
    also_in_dotenv: Vec<Option<String>>,
    #[serde(skip)]
    fix: String,
    /// `-q`: the servers, variables and failing findings only.
    #[serde(skip)]
    quiet: bool,
    /// `--strict`: warnings fail the check, so `-q` keeps them.
    #[serde(skip)]
    strict: bool,
}

impl Report for CheckOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let width = self
            .check
            .report
            .variables
            .iter()
            .map(|variable| variable.name.len())
            .chain(self.check.report.servers.iter().filter_map(|server| {
                server
                    .command
                    .as_ref()
                    .map(|command| shown(&command.command).chars().count() + 10)
            }))
            .max()
            .unwrap_or(0);
        for server in &self.check.report.servers {
            let (style, status) = match server.status {
                Status::Active | Status::Shadowed => (DIM, ""),
                Status::Pending => (DIM, "  pending approval"),
                Status::Rejected => (DIM, "  rejected in Claude Code's settings: not checked"),
                Status::Disabled => (
                    DIM,
                    "  disabled for this project (`disabledMcpServers`): not checked",
                ),
                Status::Skipped => (RED, "  skipped by Claude Code: never started"),
                Status::Reserved => (RED, "  reserved name: Claude Code does not load it"),
                Status::Blocked => (RED, "  blocked by enterprise policy: never started"),
            };
            writeln!(
                out,
                "{BOLD}{}{BOLD:#}  {}{style}{status}{style:#}",
                shown(&server.name),
                server.scope
            )?;
            if !server.status.checked() {
                continue;
            }
            for name in &server.variables {
                let Some(index) = self
                    .check
                    .report
                    .variables
                    .iter()
                    .position(|variable| &variable.name == name)
                else {
                    continue;
                };
                let variable = &self.check.report.variables[index];
                let shown = self.sources[index].as_deref();
                let blanked = server
                    .blanked
                    .iter()
                    .find(|blanked| &blanked.variable == name);
                let (style, text) = match (variable.state, variable.seen_by_claude) {
                    _ if blanked.is_some_and(Blanked::is_error) => {
                        (RED, "sent empty by Claude Code".to_string())
                    }
                    _ if blanked.is_some() => (
                        YELLOW,
                        "sent empty by Claude Code in scrub mode".to_string(),
                    ),
                    _ if variable.ciphertext => (
                        YELLOW,
                        format!(
                            "encrypted by dotenvx in {} (only `dotenvx run` decrypts it)",
                            source(shown)
                        ),
                    ),
                    _ if let Some(reference) = &variable.reference => {
                        let named =
                            format!("named in {}, seen through `mcpenv run`", source(shown));
                        let place = reference.manager.source();
                        match reference.resolves {
                            Some(false) => {
                                (RED, format!("{place}, but it gives no value ({named})"))
                            }
                            _ => (YELLOW, format!("{place} ({named})")),
                        }
                    }
                    (State::Set, true)
                        if variable.interactive_only
                            && let Some(dotenv) = &self.also_in_dotenv[index] =>
                    {
                        (
                            YELLOW,
                            format!(
                                "set in {} (interactive sessions only) and in {dotenv} (through `mcpenv run`)",
                                source(shown),
                            ),
                        )
                    }
                    (State::Set, true) if variable.interactive_only => (
                        YELLOW,
                        format!(
                            "set in {} (interactive sessions only; not `claude -p` or `claude mcp list`)",
                            source(shown)
                        ),
                    ),
                    (State::Missing, _) if server.defaulted.contains(name) => {
                        (GREEN, "not set; its default applies".to_string())
                    }
                    (State::Missing, _) => (RED, "missing".to_string()),
                    (State::Empty, _) if !server.defaulted.contains(name) => (
                        RED,
                        format!(
                            "set but empty ({}): the server gets no value",
                            source(shown)
                        ),
                    ),
                    (State::Empty, _) => (YELLOW, format!("set but empty ({})", source(shown))),
                    (State::Set, false) => (
                        YELLOW,
                        format!("set in {} (seen through `mcpenv run`)", source(shown)),
                    ),
                    (State::Set, true) => (GREEN, format!("set ({})", source(shown))),
                    (State::Defaulted, _) => (GREEN, "not set; its default applies".to_string()),
                };
                let lead = format!("  {name:width$}  ");
                let lead_width = 4 + width.max(name.chars().count());
                write_hanging(out, &lead, lead_width, &text, style, 4)?;
            }
            if let Some(command) = &server.command {
                let label = format!("command `{}`", shown(&command.command));
                let resolved = command
                    .resolved
                    .as_ref()
                    .map(|resolved| format!(" (`{}`)", shown(resolved)))
                    .unwrap_or_default();
                let (style, text) = match command.found {
                    Some(true) => (GREEN, format!("found{resolved}")),
                    Some(false) if command.resolved.is_some() => {
                        (RED, format!("not found{resolved}"))
                    }
                    // A path (`./bin/x`, `/opt/x`) is not looked up on PATH.
                    Some(false) if command.command.contains('/') => (RED, "not found".to_string()),
                    Some(false) => (RED, "not found on PATH".to_string()),
                    None => {
                        let names: Vec<String> = command
                            .depends_on
                            .iter()
                            .map(|name| format!("`${{{name}}}`"))
                            .collect();
                        (
                            YELLOW,
                            format!("not checked: depends on {}", names.join(", ")),
                        )
                    }
                };
                let lead = format!("  {label:width$}  ");
                let lead_width = 4 + width.max(label.chars().count());
                write_hanging(out, &lead, lead_width, &text, style, 4)?;
            }
            if server.variables.is_empty() && server.command.is_none() {
                writeln!(out, "  {DIM}nothing to check{DIM:#}")?;
            }
        }
        // Under `-q`, a warning that does not fail the check is not data.
        let shown_findings: Vec<_> = self
            .check
            .report
            .findings
            .iter()
            .zip(&self.files)
            .filter(|(finding, _)| {
                !self.quiet || self.strict || finding.severity == Severity::Error
            })
            .collect();
        if !shown_findings.is_empty() {
            writeln!(out)?;
        }
        for (finding, file) in shown_findings {
            write_finding(out, finding, file.as_deref())?;
        }
        if self.quiet {
            return Ok(());
        }
        if !self.check.report.servers.is_empty() {
            writeln!(out)?;
        }
        write_hanging(out, "", 0, &self.summary(), Style::new(), 0)?;
        if !self.check.report.missing().is_empty() {
            writeln!(out, "Fix it with `{}`", self.fix)?;
        }
        if let Some(approve) = &self.check.approve_command {
            let mut text = format!("Approve the pending project servers with `{approve}`");
            if !self.check.folder_trusted {
                text.push_str(&format!("; {}", crate::ops::Context::TRUST_NOTE));
            }
            write_hanging(out, "", 0, &text, Style::new(), 0)?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        !self.check.ok
    }
}

impl CheckOutput {
    fn summary(&self) -> String {
        let counted: Vec<_> = self
            .check
            .report
            .servers
            .iter()
            .filter(|server| server.status.counted())
            .collect();
        let failing = counted.iter().filter(|server| !server.ok).count();
        let missing = self.check.report.missing().len();
        let errors = self
            .check
            .report
            .findings
            .iter()
            .filter(|finding| finding.severity == Severity::Error)
            .count();
        let warnings = self.check.report.findings.len() - errors;
        let plural = |count: usize, word: &str| {
            if count == 1 {
                format!("1 {word}")
            } else {
                format!("{count} {word}s")
            }
        };
        if counted.is_empty() {
            return "No MCP servers in effect here".to_string();
        }
        let mut summary = if failing == 0 && counted.len() == 1 {
            "The one server in effect has what it needs".to_string()
        } else if failing == 0 {
            format!(
                "All {} servers in effect have what they need",
                counted.len()
            )
        } else if counted.len() == 1 {
            "The one server in effect lacks something".to_string()
        } else {
            format!(
                "{failing} of {} servers in effect {} something",
                counted.len(),
                if failing == 1 { "lacks" } else { "lack" }
            )
        };
        if missing > 0 {
            summary.push_str(&format!("; {} missing", plural(missing, "variable")));
        }
        summary.push_str(&format!(
            " ({}, {})",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
        summary
    }
}

/// Writes `error: `file`: message` (or `warning: …`), then its hint when
/// `with_hint`.
/// Writes a finding and its hint: under `-q` too, since an error prints
/// whole (only findings that do not fail the check are left out there).
pub fn write_finding(out: &mut dyn Write, finding: &Finding, file: Option<&str>) -> io::Result<()> {
    let (style, label) = match finding.severity {
        Severity::Error => (RED.bold(), "error"),
        Severity::Warning => (YELLOW.bold(), "warning"),
    };
    let file = file.map(|file| format!("`{file}`: ")).unwrap_or_default();
    let message = format!("{}{}", shown(&file), shown(&finding.message));
    let lead = format!("{style}{label}:{style:#} ");
    write_hanging(out, &lead, label.len() + 2, &message, Style::new(), 4)?;
    if let Some(hint) = &finding.hint {
        write_hanging(out, "  hint: ", 8, &shown(hint), Style::new(), 4)?;
    }
    Ok(())
}

fn source(source: Option<&str>) -> &str {
    source.unwrap_or("unknown")
}

/// Builds the check report for the context.
pub fn report(ctx: &Ctx, strict: bool) -> Result<CheckOutput, CliError> {
    report_for(ctx, strict, &Platforms::Cheap)
}

/// [`report`], with the committed servers judged for `platforms`.
fn report_for(ctx: &Ctx, strict: bool, platforms: &Platforms) -> Result<CheckOutput, CliError> {
    let (check, read) =
        check_environment_for(&ctx.ops, strict, None, platforms).map_err(|error| match error {
            CheckError::EnvFiles(error) => dotenv_error(error),
            // No server was named.
            error @ CheckError::NoSuchServer { .. } => {
                CliError::failure_from("cannot check", error)
            }
        })?;
    Ok(output(ctx, check, &read, strict))
}

/// The check report of a check made: the shield learns what it read, and
/// each file is shown as the terminal shows it.
pub fn output(ctx: &Ctx, check: EnvironmentCheck, read: &Loaded, strict: bool) -> CheckOutput {
    read.teach_shield(&ctx.shield);
    let files = check
        .report
        .findings
        .iter()
        .map(|finding| finding.file.as_ref().map(|file| shown_path(ctx, file)))
        .collect();
    let sources = check
        .report
        .variables
        .iter()
        .map(|variable| {
            variable
                .source
                .as_ref()
                .map(|source| match source.as_str() {
                    "environment" => source.clone(),
                    path => shown_path(ctx, std::path::Path::new(path)),
                })
        })
        .collect();
    let also_in_dotenv = check
        .report
        .variables
        .iter()
        .map(|variable| {
            variable
                .also_in_dotenv
                .as_ref()
                .map(|path| shown_path(ctx, std::path::Path::new(path)))
        })
        .collect();
    CheckOutput {
        check,
        files,
        sources,
        also_in_dotenv,
        fix: ctx.command(&["onboard"]),
        quiet: ctx.quiet,
        strict,
    }
}

impl CheckOutput {
    /// The findings that fail the check (with `--strict`, warnings too),
    /// each with its file as shown.
    pub fn failing_findings(&self) -> impl Iterator<Item = (&Finding, Option<&str>)> {
        self.check
            .report
            .findings
            .iter()
            .zip(&self.files)
            .filter(|(finding, _)| self.strict || finding.severity == Severity::Error)
            .map(|(finding, file)| (finding, file.as_deref()))
    }
}

/// Runs `mcpenv check`.
pub fn run(ctx: &Ctx, args: &CheckArgs) -> Result<CheckOutput, CliError> {
    let platforms = if args.for_systems.is_empty() {
        Platforms::Cheap
    } else {
        let mut systems: Vec<System> = args
            .for_systems
            .iter()
            .map(|&system| system.into())
            .collect();
        systems.sort();
        systems.dedup();
        Platforms::For(systems)
    };
    report_for(ctx, args.strict, &platforms)
}
