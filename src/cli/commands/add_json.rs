//! `mcpenv add-json`: a server from a JSON entry, normalised as Claude Code
//! stores it.

use serde_json::Value;

use crate::cli::args::AddJsonArgs;
use crate::cli::commands::add::{AddReport, already_exists_hint, check_name};
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::model::{self, ServerEntry};
use crate::scope::Scope;
use crate::store::{self, IfExists, Target};

/// Runs `mcpenv add-json`.
pub fn run(ctx: &Ctx, args: &AddJsonArgs) -> Result<AddReport, CliError> {
    check_name(&args.name)?;
    let value: Value = serde_json::from_str(&args.json_entry).map_err(|error| {
        CliError::usage(format!(
            "invalid JSON entry at {}:{}: {}",
            error.line(),
            error.column(),
            strip_position(&error.to_string())
        ))
        .with_hint(r#"quote the entry for your shell, e.g. '{"type":"http","url":"https://example.com/mcp"}'"#)
    })?;
    let (entry, unknown) = model::normalize_entry(value).map_err(|error| {
        CliError::usage(error.to_string()).with_hint(
            r#"stdio entries need "command"; http and sse entries need "type" and "url""#,
        )
    })?;
    let mut warnings = Vec::new();
    if !unknown.is_empty() {
        let keys: Vec<String> = unknown.iter().map(|key| format!("`{key}`")).collect();
        warnings.push(format!(
            "kept keys that Claude Code does not use: {}",
            keys.join(", ")
        ));
    }
    let scope = Scope::from(args.scope);
    let target = Target::for_scope(&ctx.locations, scope);
    let if_exists = if args.replace {
        IfExists::Replace
    } else {
        IfExists::Fail
    };
    let transport = ServerEntry::from_value(entry.clone()).transport();
    let written = store::add_server(&ctx.locations, &target, &args.name, &entry, if_exists)
        .map_err(|error| already_exists_hint(ctx, error, &args.name, scope))?;
    Ok(AddReport::new(
        ctx, &args.name, scope, transport, written, warnings,
    ))
}

fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |cut| &message[..cut])
}
