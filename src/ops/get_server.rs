//! The definition Claude Code uses for a name, with every other scope that
//! defines it. Values of `env` and `headers` are masked unless revealed.
//! What `mcpenv get` shows.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::approval::Approval;
use crate::config::inventory::{Inventory, Status};
use crate::config::managed_policy::Block;
use crate::config::model::Transport;
use crate::config::scope::Scope;
use crate::ops::list_servers::{FileError, Warning, file_errors, warnings};
use crate::ops::names::unknown_name_hints;
use crate::ops::{Context, Error};
use crate::secrets::redact;

/// Which server, and whether its values are shown.
#[derive(Debug, Clone)]
pub struct GetRequest {
    /// The server's name.
    pub name: String,
    /// Show `env` and `headers` values unmasked.
    pub reveal: bool,
}

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
    /// For `skipped`, `reserved` and `blocked`: Claude Code's reason.
    pub reason: Option<String>,
    /// For `blocked`: the managed policy's rule and the file it is in.
    pub blocked: Option<Block>,
    /// Its transport.
    pub transport: Transport,
    /// The entry as written, with `env` and `headers` values masked unless
    /// revealed (placeholders such as `${TOKEN}` are shown as they are).
    pub entry: Value,
    /// Every other definition of the name, by precedence.
    pub other_definitions: Vec<OtherDefinition>,
    /// Notes about the files read.
    pub warnings: Vec<Warning>,
    /// Files Claude Code does not load at all.
    pub errors: Vec<FileError>,
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

/// The definition in effect for the name; a file that does not load is
/// reported in [`GetReport::errors`] (the name may be in it), and the
/// shield learns the secrets of every file read.
pub fn get_server(ctx: &Context, request: &GetRequest) -> Result<GetReport, Error> {
    let name = &request.name;
    let inventory = Inventory::load_all(&ctx.locations);
    ctx.shield.learn_inventory(&inventory);
    let Some(winner) = inventory.winner(name) else {
        let mut error = Error::failure(format!("no MCP server named `{name}`"));
        for hint in unknown_name_hints(ctx, &inventory, name) {
            error = error.with_hint(hint);
        }
        for file in file_errors(&inventory) {
            error = error.with_hint(format!(
                "it may be in a file Claude Code does not load: {}",
                file.message
            ));
        }
        return Err(error);
    };
    let entry = if request.reveal {
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
        blocked: winner.blocked.clone(),
        transport: winner.entry.transport(),
        entry,
        other_definitions: inventory
            .all_named(name)
            .into_iter()
            .filter(|entry| !std::ptr::eq(*entry, winner))
            .map(|other| OtherDefinition {
                scope: other.scope,
                file: other.file.clone(),
                approval: other.approval,
                status: inventory.status(other),
            })
            .collect(),
        // Notes about the files, and about this server; not about others.
        warnings: warnings(
            &inventory
                .notes
                .iter()
                .filter(|note| note.server.as_ref().is_none_or(|server| server == name))
                .cloned()
                .collect::<Vec<_>>(),
        ),
        errors: file_errors(&inventory),
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
