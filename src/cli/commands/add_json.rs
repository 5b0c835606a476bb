//! `mcpenv add-json`: a server from a JSON entry, normalised as Claude Code
//! stores it.

use serde_json::Value;

use crate::cli::args::AddJsonArgs;
use crate::cli::commands::add::{AddReport, WriteOptions, check_name, write_entry};
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::model::{self, ServerEntry};

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
    let transport = ServerEntry::from_value(entry.clone()).transport();
    let options = WriteOptions {
        scope: args.scope,
        replace: args.replace,
        allow_literal: args.allow_literal,
        force: args.force,
    };
    write_entry(ctx, &args.name, &options, entry, transport, warnings)
}

fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |cut| &message[..cut])
}
