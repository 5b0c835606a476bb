//! `mcpenv env`: the variables the servers in effect reference that the
//! project's `.env` files provide (and the environment does not), for
//! `eval "$(mcpenv env)"` or a direnv `.envrc`. Values are the point here,
//! so they are printed whole, except to a terminal, where they are masked.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

use crate::cli::args::{EnvArgs, EnvFormat};
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::envfiles::dotenv;
use crate::ops;
use crate::ops::server_env::{ServerEnv, server_env};
use crate::secrets::redact;

/// The variables to export, and how to print them.
#[derive(Debug, Serialize)]
pub struct EnvReport {
    /// The variables.
    #[serde(flatten)]
    pub env: ServerEnv,
    #[serde(skip)]
    format: EnvFormat,
    #[serde(skip)]
    masked: bool,
    /// `mcpenv check` as this run was started (`-C DIR`), for a hint.
    #[serde(skip)]
    check_command: String,
}

impl Report for EnvReport {
    /// Printing the values is the point (for `eval` and direnv); on a
    /// terminal they are masked all the same.
    fn reveals(&self) -> bool {
        !self.masked
    }

    /// `server_env` taught the shield every scope's secrets and each value
    /// printed here; the env files' other values are never shown, so they
    /// are not read again to be learned (an error still learns them).
    fn learns_world(&self) -> bool {
        false
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for (name, value) in &self.env.variables {
            // `run` refused every value `quote` refuses; a masked one is
            // shorter still.
            let quoted = dotenv::quote(value).map_err(io::Error::other)?;
            // One quoting for all three: dotenvy, POSIX shells and fish read
            // it the same way (see `dotenv::quote`).
            match self.format {
                EnvFormat::Sh => writeln!(out, "export {name}={quoted}")?,
                EnvFormat::Fish => writeln!(out, "set -gx {name} {quoted}")?,
                EnvFormat::Dotenv | EnvFormat::Json => writeln!(out, "{name}={quoted}")?,
            }
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for held in &self.env.held {
            crate::cli::render::warning(
                err,
                &format!("`{}` not loaded: {}", held.path.display(), held.hint),
            )?;
        }
        for skipped in &self.env.skipped {
            crate::cli::render::warning(err, skipped)?;
        }
        // On a terminal an empty answer says why; `eval` and direnv get
        // nothing to print, and no noise.
        if self.masked && self.env.variables.is_empty() {
            writeln!(
                err,
                "Nothing to export: no `.env` file sets a variable the servers need; `{}` lists what they need",
                self.check_command
            )?;
        }
        if self.masked && !self.env.variables.is_empty() {
            writeln!(
                err,
                "Values are masked on a terminal; use `eval \"$(mcpenv env)\"` or pipe the output"
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv env`; returns the report and whether to print it as JSON.
pub fn run(ctx: &Ctx, args: &EnvArgs) -> Result<(EnvReport, bool), CliError> {
    let mut env = server_env(ctx)?;
    let json = args.json || args.format == EnvFormat::Json;
    if !json {
        refuse_unprintable(&env)?;
    }
    // A terminal shows every value masked, in each format: the shield
    // masks only what it knows for a secret, and a value that holds
    // another variable's secret is not one it knows.
    let masked = io::stdout().is_terminal();
    if masked {
        for value in env.variables.values_mut() {
            *value = redact::mask(value);
        }
    }
    Ok((
        EnvReport {
            env,
            format: if args.json {
                EnvFormat::Json
            } else {
                args.format
            },
            masked,
            check_command: ctx.command(&["check"]),
        },
        json,
    ))
}

/// Fails, naming the variable and never its value, when a value cannot be
/// printed so that a shell reads it back exactly (a NUL, an escape
/// character): before anything is printed, so `eval` gets all or nothing.
fn refuse_unprintable(env: &ServerEnv) -> Result<(), CliError> {
    for (name, value) in &env.variables {
        if let Err(error) = dotenv::quote(value) {
            let place = env
                .sources
                .get(name)
                .map_or("a `.env` file", String::as_str);
            return Err(
                ops::Error::failure(format!("`{name}` in {place}: {error}")).with_hint(format!(
                    "fix the value of `{name}` there, or read it as JSON: `mcpenv env --json`"
                )),
            );
        }
    }
    Ok(())
}
