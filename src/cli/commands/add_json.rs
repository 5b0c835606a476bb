//! `mcpenv add-json`: a server from a JSON entry, normalised as Claude Code
//! stores it. `-` reads the entry from stdin (as `claude mcp add-json NAME -`
//! does since 2.1.327), so tokens in it stay out of shell history.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Read};

use serde_json::Value;

use crate::cli::args::AddJsonArgs;
use crate::cli::commands::add::{EntryFlags, add_entry};
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::ops::add::{AddReport, Source, check_name};

/// The most JSON read from stdin, as Claude Code reads (1 MiB).
const STDIN_LIMIT: usize = 1 << 20;

/// Runs `mcpenv add-json`.
pub fn run(ctx: &Ctx, args: &AddJsonArgs) -> Result<AddReport, CliError> {
    check_name(&args.name)?;
    let from_stdin = args.json_entry == "-";
    let text = entry_text(&args.json_entry)?;
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        let error = CliError::usage(format!(
            "invalid JSON entry{} at {}:{}: {}",
            if from_stdin { " on stdin" } else { "" },
            error.line(),
            error.column(),
            strip_position(&error.to_string())
        ));
        if from_stdin {
            error.with_hint("check its quotes, commas and braces")
        } else {
            error.with_hint(r#"quote the entry for your shell, e.g. '{"type":"http","url":"https://example.com/mcp"}'"#)
        }
    })?;
    let flags = EntryFlags {
        scope: args.scope,
        replace: args.replace,
        allow_literal: args.allow_literal,
        force: args.force,
    };
    add_entry(ctx, &args.name, flags, Source::Json(value), Vec::new())
}

/// The entry: the argument, or for `-` what is piped to stdin. Like Claude
/// Code, a terminal on stdin is not read (nothing was piped), and more than
/// 1 MiB is refused.
fn entry_text(argument: &str) -> Result<Cow<'_, str>, CliError> {
    if argument != "-" {
        return Ok(Cow::Borrowed(argument));
    }
    let nothing = || {
        CliError::usage("there is no JSON on stdin")
            .with_hint("pipe it in (`... | mcpenv add-json NAME -`), or pass it as the argument")
    };
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(nothing());
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(STDIN_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| CliError::failure_from("cannot read the JSON on stdin", error))?;
    if bytes.len() > STDIN_LIMIT {
        return Err(
            CliError::usage("the JSON on stdin is over the limit of 1 MiB")
                .with_hint("Claude Code refuses it too; pass a smaller entry"),
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage("the JSON on stdin is not UTF-8 text"))?;
    if text.trim().is_empty() {
        return Err(nothing());
    }
    Ok(Cow::Owned(text))
}

fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |cut| &message[..cut])
}
