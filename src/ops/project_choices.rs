//! Claude Code's choices about project (`.mcp.json`) servers: approve or
//! reject them where its own dialog records them, in
//! `.claude/settings.local.json` (`enabledMcpjsonServers`,
//! `disabledMcpjsonServers`), trust the folder so the approvals count, or
//! reset every choice as `claude mcp reset-project-choices` does.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::managed_policy::Block;

use crate::config::approval::{self, Approval};
use crate::config::claude_settings::{self, CHOICE_KEYS, Choice, SettingsError};
use crate::config::inventory::Inventory;
use crate::config::scope::Scope;
use crate::config::store;
use crate::mechanics::display::quoted_names;
use crate::ops::write_steps::settings_ignored;
use crate::ops::{Context, Error};

/// Which project servers to approve or reject.
#[derive(Debug, Clone)]
pub struct ChoiceRequest {
    /// Approve or reject.
    pub choice: Choice,
    /// The servers, by name.
    pub names: Vec<String>,
    /// Every project server in effect now instead of `names`.
    pub all: bool,
}

/// What recording a choice will do, decided before anything is written.
#[derive(Debug, Clone, Serialize)]
pub struct ChoicePlan {
    /// Approve or reject.
    #[serde(skip)]
    pub choice: Choice,
    /// The state asked for.
    pub state: Approval,
    /// Names to record.
    pub wanted: Vec<String>,
    /// Names already in that state; nothing is written for them.
    pub already: Vec<String>,
    /// Project servers the managed policy blocks: never approved, since
    /// Claude Code would not start them whatever this file says.
    pub blocked: Vec<BlockedName>,
}

/// A project server the managed policy keeps out.
#[derive(Debug, Clone, Serialize)]
pub struct BlockedName {
    /// The server.
    pub name: String,
    /// The rule and the file it is in.
    pub blocked: Block,
    /// Whether it was named on the command line (not only found by `--all`).
    #[serde(skip)]
    pub named: bool,
}

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
    /// `approve`: project servers the managed policy blocks, left
    /// unapproved.
    pub blocked: Vec<BlockedName>,
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
    /// The command that records the folder's trust with these approvals,
    /// while it is not trusted (approvals only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust_command: Option<String>,
}

/// A name the write did not bring into the state asked for.
#[derive(Debug, Serialize)]
pub struct Overruled {
    /// The server.
    pub name: String,
    /// Its state now.
    pub state: Approval,
}

/// Checks the names and decides what to record; writes nothing.
pub fn plan_choice(ctx: &Context, request: &ChoiceRequest) -> Result<ChoicePlan, Error> {
    let inventory = ctx.inventory()?;
    // `all` names each server in effect now, rather than setting
    // `enableAllProjectMcpServers`: consent to what the user can see, not
    // to whatever a later commit adds to `.mcp.json`.
    let names = if request.all {
        let names = project_names(&inventory);
        if names.is_empty() {
            return Err(
                Error::failure("no project (`.mcp.json`) servers are in effect here")
                    .with_hint("only servers shared in `.mcp.json` need approval in Claude Code"),
            );
        }
        names
    } else {
        request.names.clone()
    };
    check_names(&inventory, &names)?;
    let mut blocked = Vec::new();
    let names: Vec<String> = if request.choice == Choice::Approve {
        names
            .into_iter()
            .filter(|name| match project_block(&inventory, name) {
                Some(block) => {
                    blocked.push(BlockedName {
                        name: name.clone(),
                        blocked: block,
                        named: !request.all,
                    });
                    false
                }
                None => true,
            })
            .collect()
    } else {
        names
    };
    if let Some(gate) = claude_settings::choice_gate(&ctx.locations) {
        return Err(settings_ignored(ctx, gate));
    }
    let state = match request.choice {
        Choice::Approve => Approval::Approved,
        Choice::Reject => Approval::Rejected,
    };
    let (already, wanted) = dedup(&names)
        .into_iter()
        .partition(|name| approval_of(&inventory, name) == Some(state));
    Ok(ChoicePlan {
        choice: request.choice,
        state,
        wanted,
        already,
        blocked,
    })
}

/// Records the choice of `plan` and says which names another settings
/// file still overrules.
pub fn apply_choice(ctx: &Context, plan: ChoicePlan) -> Result<ChoiceReport, Error> {
    let ChoicePlan {
        choice,
        state,
        wanted,
        already,
        blocked,
    } = plan;
    let mut saved = claude_settings::Saved::default();
    let mut overruled = Vec::new();
    if !wanted.is_empty() {
        saved = claude_settings::save_choice(&ctx.locations, &ctx.edit, choice, &wanted).map_err(
            |error| match error {
                SettingsError::Ignored { gate, .. } => settings_ignored(ctx, gate),
                SettingsError::Config(error) => error.into(),
            },
        )?;
        // Until the folder is trusted, no approval here counts (the report
        // says so); past that, a rejection anywhere wins and other settings
        // files count too: say when the write did not settle it.
        if state == Approval::Rejected || approval::project_trusted(&ctx.locations) {
            overruled = overruled_names(ctx, &wanted, state)?;
        }
    }
    let trusted = approval::project_trusted(&ctx.locations);
    let trust_command = (state == Approval::Approved && !trusted).then(|| {
        let names: Vec<&String> = wanted.iter().chain(&already).collect();
        ctx.command_with_names(&["approve", "--trust"], &names)
    });
    Ok(ChoiceReport {
        state,
        file: ctx.locations.local_settings(),
        recorded: wanted,
        already,
        blocked,
        overruled,
        written: saved.written,
        trusted,
        not_excluded: saved.not_excluded,
        trusted_now: false,
        trust_command,
    })
}

/// Records that the user trusts this folder in Claude Code, without which
/// Claude Code 2.1.332 ignores the approvals of `report`; only on the
/// user's own word (`--trust`, or yes at a question).
pub fn trust_folder(ctx: &Context, mut report: ChoiceReport) -> Result<ChoiceReport, Error> {
    let written = store::trust_project(&ctx.locations, &ctx.edit)?;
    if written.changed {
        report.written.push(written.path);
    }
    report.trusted = true;
    report.trusted_now = true;
    report.trust_command = None;
    report.overruled = overruled_names(ctx, &report.recorded, Approval::Approved)?;
    Ok(report)
}

/// What `reset-project-choices` did.
#[derive(Debug, Serialize)]
pub struct ResetReport {
    /// The keys removed wherever they were.
    pub keys: Vec<&'static str>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

/// Removes the approval keys from this project's entry in
/// `~/.claude.json` (where old releases kept them) and from
/// `.claude/settings.local.json`; every other key of both stays.
pub fn reset_project_choices(ctx: &Context) -> Result<ResetReport, Error> {
    let mut written = Vec::new();
    // `~/.claude.json` first, as Claude Code does: its legacy arrays would
    // otherwise be merged back into the settings file on the next start.
    let claude = store::remove_project_keys(&ctx.locations, &ctx.edit, &CHOICE_KEYS)?;
    if claude.changed {
        written.push(claude.path);
    }
    if claude_settings::reset_choices(&ctx.locations, &ctx.edit)? {
        written.push(ctx.locations.local_settings());
    }
    Ok(ResetReport {
        keys: CHOICE_KEYS.to_vec(),
        written,
    })
}

/// The names among `names` not in `state` as the files are now.
fn overruled_names(
    ctx: &Context,
    names: &[String],
    state: Approval,
) -> Result<Vec<Overruled>, Error> {
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
/// What the managed policy says of the project server `name`, when it
/// blocks every project definition of it.
fn project_block(inventory: &Inventory, name: &str) -> Option<Block> {
    let definitions: Vec<_> = inventory
        .all_named(name)
        .into_iter()
        .filter(|entry| entry.scope == Scope::Project)
        .collect();
    if definitions.iter().any(|entry| entry.blocked.is_none()) {
        return None;
    }
    definitions.first().and_then(|entry| entry.blocked.clone())
}

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
fn check_names(inventory: &Inventory, names: &[String]) -> Result<(), Error> {
    let known = project_names(inventory);
    let Some(unknown) = names.iter().find(|name| !known.contains(name)) else {
        return Ok(());
    };
    let mut error = Error::usage(format!(
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
        error = error.with_hint(format!(
            "the project servers here: {}",
            quoted_names(&known)
        ));
    }
    Err(error)
}
