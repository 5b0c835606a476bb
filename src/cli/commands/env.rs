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
use crate::dotenv;
use crate::ops::server_env::{ServerEnv, server_env};
use crate::redact;

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
}

impl Report for EnvReport {
    /// Printing the values is the point (for `eval` and direnv); on a
    /// terminal they are masked all the same.
    fn reveals(&self) -> bool {
        !self.masked
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for (name, value) in &self.env.variables {
            let value = if self.masked {
                redact::mask(value)
            } else {
                value.clone()
            };
            match self.format {
                EnvFormat::Sh => writeln!(out, "export {name}={}", sh_quote(&value))?,
                EnvFormat::Fish => writeln!(out, "set -gx {name} {}", fish_quote(&value))?,
                EnvFormat::Dotenv | EnvFormat::Json => {
                    let quoted = dotenv::quote(&value).unwrap_or_else(|_| sh_quote(&value));
                    writeln!(out, "{name}={quoted}")?;
                }
            }
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if self.masked && !self.env.variables.is_empty() {
            writeln!(
                err,
                "Values are masked on a terminal; use `eval \"$(mcpenv env)\"` or pipe the output"
            )?;
        }
        Ok(())
    }
}

/// POSIX single quotes: `'` becomes `'\''`.
fn sh_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// fish single quotes: `\` and `'` are escaped with a backslash.
fn fish_quote(value: &str) -> String {
    format!("'{}'", value.replace('\\', r"\\").replace('\'', r"\'"))
}

/// Runs `mcpenv env`; returns the report and whether to print it as JSON.
pub fn run(ctx: &Ctx, args: &EnvArgs) -> Result<(EnvReport, bool), CliError> {
    let env = server_env(ctx)?;
    let json = args.json || args.format == EnvFormat::Json;
    Ok((
        EnvReport {
            env,
            format: if args.json {
                EnvFormat::Json
            } else {
                args.format
            },
            masked: io::stdout().is_terminal(),
        },
        json,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(fish_quote(r"a\b'c"), r"'a\\b\'c'");
    }
}
