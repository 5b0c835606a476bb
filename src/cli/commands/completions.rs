//! `mcpenv completions SHELL`: the script that sets up tab completion.
//! It calls mcpenv back for each completion (see `cli::completion`).

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::CompletionsArgs;
use crate::cli::render::Report;

/// The registration script for one shell.
#[derive(Debug, Serialize)]
pub struct CompletionScript {
    /// The shell.
    pub shell: &'static str,
    /// The script.
    pub script: String,
}

impl Report for CompletionScript {
    /// A script is printed exactly as written.
    fn reveals(&self) -> bool {
        true
    }

    fn learns_world(&self) -> bool {
        false
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.script.as_bytes())
    }
}

/// Runs `mcpenv completions`.
pub fn run(args: &CompletionsArgs) -> io::Result<CompletionScript> {
    let shell = args.shell.name();
    let mut script = Vec::new();
    crate::cli::completion::write_registration(shell, &mut script)?;
    Ok(CompletionScript {
        shell,
        script: String::from_utf8_lossy(&script).into_owned(),
    })
}
