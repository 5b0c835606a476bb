//! `mcpenv man [COMMAND]`: the man page, as roff, rendered by clap_mangen
//! from the same definitions as `--help`; `man -l` or `man ./mcpenv.1`
//! shows it.

use std::io::{self, Write};

use clap::CommandFactory;
use serde::Serialize;

use crate::cli::args::{Cli, ManArgs};
use crate::cli::error::CliError;
use crate::cli::render::Report;

/// One man page.
#[derive(Debug, Serialize)]
pub struct ManPage {
    /// Its name (`mcpenv`, `mcpenv-add`).
    pub name: String,
    /// The page, as roff.
    pub roff: String,
}

impl Report for ManPage {
    /// A page is printed exactly as rendered.
    fn reveals(&self) -> bool {
        true
    }

    fn learns_world(&self) -> bool {
        false
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.roff.as_bytes())
    }
}

/// Runs `mcpenv man`.
pub fn run(args: &ManArgs) -> Result<ManPage, CliError> {
    let mut command = Cli::command();
    command.build();
    let (name, page) = match &args.command {
        None => ("mcpenv".to_string(), command),
        Some(wanted) => {
            let Some(sub) = command.get_subcommands().find(|sub| {
                sub.get_name() == wanted || sub.get_all_aliases().any(|alias| alias == wanted)
            }) else {
                let known: Vec<&str> = command
                    .get_subcommands()
                    .map(|sub| sub.get_name())
                    .collect();
                let mut error = CliError::usage(format!("no mcpenv command `{wanted}`"));
                if let Some(close) = crate::ops::names::closest(&known, wanted) {
                    error = error.with_hint(format!("did you mean `{close}`?"));
                }
                return Err(error.with_hint("`mcpenv --help` lists the commands"));
            };
            let name = format!("mcpenv-{}", sub.get_name());
            (name.clone(), sub.clone().name(name))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|error| CliError::failure_from("cannot render the man page", error))?;
    Ok(ManPage {
        name,
        roff: String::from_utf8_lossy(&roff).into_owned(),
    })
}
