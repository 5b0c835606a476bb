//! `mcpenv approve`: records Claude Code's approval of project (`.mcp.json`)
//! servers where its own dialog does, in `.claude/settings.local.json`
//! (`enabledMcpjsonServers`). `reject` shares this file's work.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::approval::{self, Approval};
use crate::claude_settings::{self, Choice, SettingsError};
use crate::cli::args::ApproveArgs;
use crate::cli::error::CliError;
use crate::cli::render::{Report, warning};
use crate::cli::resolve::Ctx;
use crate::layered::Inventory;
use crate::ops::writes::settings_ignored;
use crate::scope::Scope;

/// What `approve` or `reject` did.
#[derive(Debug, Serialize)]
pub struct ChoiceReport {
    /// `approved` or `rejected`: the state asked for.
    pub state: Approval,
    /// The settings file choices are recorded in.
    pub file: PathBuf,
    /// Names recorded now.
    pub recorded: Vec<String>,
    /// Names already in that state; nothing was written for them.
    pub already: Vec<String>,
    /// Names still not in that state after the write (another settings
    /// file decides), with their state.
    pub overruled: Vec<Overruled>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// Whether this folder's trust dialog was accepted: Claude Code 2.1.332
    /// reads approvals from this file only then.
    pub trusted: bool,
    /// No git directory was found to keep the file out of git.
    pub not_excluded: bool,
    /// Whether this run recorded the folder's trust (`--trust`, or yes at
    /// the question).
    pub trusted_now: bool,
}

/// A name the write did not bring into the state asked for.
#[derive(Debug, Serialize)]
pub struct Overruled {
    /// The server.
    pub name: String,
    /// Its state now.
    pub state: Approval,
}

impl Report for ChoiceReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        let verb = match self.state {
            Approval::Approved => "Approved",
            Approval::Rejected => "Rejected",
            Approval::Pending => "Reset",
        };
        for name in &self.already {
            writeln!(
                err,
                "`{name}` is already {} in Claude Code",
                self.state.as_str()
            )?;
        }
        if !self.recorded.is_empty() {
            writeln!(
                err,
                "{verb} {} in `{}`",
                quoted(&self.recorded),
                self.file.display()
            )?;
        }
        for file in &self.written {
            writeln!(err, "Wrote `{}`", file.display())?;
        }
        for overruled in &self.overruled {
            warning(
                err,
                &format!(
                    "`{}` is still {}: another Claude Code settings file decides it",
                    overruled.name,
                    overruled.state.as_str()
                ),
            )?;
        }
        if self.not_excluded {
            warning(
                err,
                &format!(
                    "no git directory found: nothing keeps `{}` out of git",
                    self.file.display()
                ),
            )?;
        }
        if self.trusted_now {
            writeln!(err, "Recorded that you trust this folder in Claude Code")?;
        } else if self.state == Approval::Approved && !self.trusted {
            writeln!(
                err,
                "Claude Code 2.1.332 reads these approvals once you trust this folder: start `claude` here and accept its trust dialog, or run `mcpenv approve --trust …`"
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv approve`.
pub fn run(ctx: &Ctx, args: &ApproveArgs) -> Result<ChoiceReport, CliError> {
    let inventory = ctx.inventory()?;
    // `--all` names each server in effect now, rather than setting
    // `enableAllProjectMcpServers`: consent to what the user can see, not
    // to whatever a later commit adds to `.mcp.json`. No `--future`: that
    // is one click in Claude Code's own dialog for whoever wants it.
    let names = if args.all {
        let names = project_names(&inventory);
        if names.is_empty() {
            return Err(
                CliError::failure("no project (`.mcp.json`) servers are in effect here")
                    .with_hint("only servers shared in `.mcp.json` need approval in Claude Code"),
            );
        }
        names
    } else {
        args.names.clone()
    };
    let mut report = record(ctx, &inventory, Choice::Approve, &names)?;
    if !report.trusted && (args.trust || ask_to_trust(ctx, args)?) {
        crate::store::trust_project(&ctx.locations)?;
        report.trusted = true;
        report.trusted_now = true;
        report.overruled = overruled_names(ctx, &report.recorded, Approval::Approved)?;
    }
    Ok(report)
}

/// In a terminal, asks whether to record the folder's trust, without
/// which Claude Code 2.1.332 ignores the approvals just written. The
/// user's own answer, never implied: no terminal (or `--json`) is no.
fn ask_to_trust(ctx: &Ctx, args: &ApproveArgs) -> Result<bool, CliError> {
    use std::io::IsTerminal;
    if args.json || !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Ok(false);
    }
    let folder = ctx
        .locations
        .display(std::path::Path::new(&ctx.locations.local_key));
    let _ = crate::cli::output::write(
        &ctx.shield,
        crate::cli::output::Stream::Stderr,
        false,
        |err| {
            writeln!(
                err,
                "Claude Code 2.1.332 ignores approvals in `.claude/settings.local.json` until you trust this folder (its trust dialog); trusting it also lets Claude Code apply the project's settings and run its hooks."
            )
        },
    );
    dialoguer::Confirm::new()
        .with_prompt(format!(
            "Trust `{}` in Claude Code now?",
            crate::cli::render::shown(&folder)
        ))
        .default(false)
        .interact()
        .map_err(|error| {
            CliError::failure_from(
                "cannot read the answer; the approvals were saved, the trust was not",
                error,
            )
        })
}

/// Records `choice` for `names`, which must be project servers in effect.
pub fn record(
    ctx: &Ctx,
    inventory: &Inventory,
    choice: Choice,
    names: &[String],
) -> Result<ChoiceReport, CliError> {
    check_names(inventory, names)?;
    if let Some(gate) = claude_settings::choice_gate(&ctx.locations) {
        return Err(settings_ignored(ctx, gate));
    }
    let state = match choice {
        Choice::Approve => Approval::Approved,
        Choice::Reject => Approval::Rejected,
    };
    let (already, wanted): (Vec<String>, Vec<String>) = dedup(names)
        .into_iter()
        .partition(|name| approval_of(inventory, name) == Some(state));
    let mut saved = claude_settings::Saved::default();
    let mut overruled = Vec::new();
    if !wanted.is_empty() {
        saved = claude_settings::save_choice(&ctx.locations, choice, &wanted).map_err(|error| {
            match error {
                SettingsError::Ignored { gate, .. } => settings_ignored(ctx, gate),
                SettingsError::Config(error) => error.into(),
            }
        })?;
        // Until the folder is trusted, no approval here counts (the report
        // says so); past that, a rejection anywhere wins and other settings
        // files count too: say when the write did not settle it.
        if state == Approval::Rejected || approval::project_trusted(&ctx.locations) {
            overruled = overruled_names(ctx, &wanted, state)?;
        }
    }
    Ok(ChoiceReport {
        state,
        file: ctx.locations.local_settings(),
        recorded: wanted,
        already,
        overruled,
        written: saved.written,
        trusted: approval::project_trusted(&ctx.locations),
        not_excluded: saved.not_excluded,
        trusted_now: false,
    })
}

/// The names among `names` not in `state` as the files are now.
fn overruled_names(
    ctx: &Ctx,
    names: &[String],
    state: Approval,
) -> Result<Vec<Overruled>, CliError> {
    let after = ctx.inventory()?;
    Ok(names
        .iter()
        .filter_map(|name| {
            approval_of(&after, name)
                .filter(|now| *now != state)
                .map(|now| Overruled {
                    name: name.clone(),
                    state: now,
                })
        })
        .collect())
}

/// Every project server name in effect here, once each, in order.
fn project_names(inventory: &Inventory) -> Vec<String> {
    let names: Vec<String> = inventory
        .entries
        .iter()
        .filter(|entry| entry.scope == Scope::Project)
        .map(|entry| entry.name.clone())
        .collect();
    dedup(&names)
}

fn dedup(names: &[String]) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for name in names {
        if !unique.contains(name) {
            unique.push(name.clone());
        }
    }
    unique
}

/// The approval state of project server `name`.
fn approval_of(inventory: &Inventory, name: &str) -> Option<Approval> {
    inventory
        .entries
        .iter()
        .find(|entry| entry.scope == Scope::Project && entry.name == name)
        .and_then(|entry| entry.approval)
}

/// Names that are no project server here are a usage error: a typo would
/// otherwise approve nothing, silently.
fn check_names(inventory: &Inventory, names: &[String]) -> Result<(), CliError> {
    let known = project_names(inventory);
    let Some(unknown) = names.iter().find(|name| !known.contains(name)) else {
        return Ok(());
    };
    let mut error = CliError::usage(format!(
        "no project server named `{unknown}` in the `.mcp.json` files in effect here"
    ));
    let elsewhere: Vec<Scope> = inventory
        .all_named(unknown)
        .iter()
        .map(|entry| entry.scope)
        .collect();
    let close = crate::ops::names::closest(&known, unknown);
    if let Some(scope) = elsewhere.first() {
        error = error.with_hint(format!(
            "`{unknown}` is a {scope} server: Claude Code starts it without asking"
        ));
    } else if let Some(close) = close {
        error = error.with_hint(format!("did you mean `{close}`?"));
    } else if known.is_empty() {
        error = error.with_hint("no `.mcp.json` here defines a server");
    } else {
        error = error.with_hint(format!("the project servers here: {}", quoted(&known)));
    }
    Err(error)
}

/// Names as status lines show them.
pub fn quoted(names: &[String]) -> String {
    crate::cli::render::quoted_names(names)
}
