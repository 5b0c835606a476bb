//! `mcpenv remove`: a server from one scope. A name defined in several
//! scopes needs `-s`, and the error says exactly which commands to run.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

use crate::cli::args::RemoveArgs;
use crate::cli::commands::{scope_file, shown_path};
use crate::cli::error::CliError;
use crate::cli::render::Report;
use crate::cli::resolve::Ctx;
use crate::config::scope::Scope;
use crate::ops::remove_server::{RemoveReport, RemoveRequest, drop_example_lines, remove_server};

/// What `remove` did, with its file as the text names it.
#[derive(Debug, Serialize)]
pub struct RemoveOutput {
    /// The server, its scope and the file written.
    #[serde(flatten)]
    pub report: RemoveReport,
    #[serde(skip)]
    file_shown: String,
    /// Whether the unused `.env.example` lines were dropped.
    pub dropped_example: bool,
    /// Whether the person chose to keep them (`--keep-example`, or no to
    /// the question): nothing to warn about then.
    #[serde(skip)]
    kept_by_choice: bool,
    #[serde(skip)]
    example_shown: String,
}

impl Report for RemoveOutput {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        writeln!(
            err,
            "Removed MCP server `{}` from {} scope",
            self.report.name, self.report.scope
        )?;
        writeln!(err, "Wrote {}", self.file_shown)?;
        let unused = &self.report.unused_example;
        if unused.is_empty() {
            return Ok(());
        }
        let names = crate::cli::render::quoted_names(unused);
        if self.dropped_example {
            writeln!(err, "Dropped {names} from `{}`", self.example_shown)?;
            writeln!(
                err,
                "Wrote {}",
                crate::ops::shown_paths::written(&self.report.example)
            )
        } else if self.kept_by_choice {
            Ok(())
        } else {
            crate::cli::render::warning(
                err,
                &format!(
                    "no server uses {names} any more, but `{}` still documents {}",
                    self.example_shown,
                    if unused.len() == 1 { "it" } else { "them" }
                ),
            )?;
            writeln!(
                err,
                "hint: delete {} from `{}` by hand if no teammate needs {} (`remove --tidy-example` drops such lines as it removes)",
                if unused.len() == 1 {
                    "its line"
                } else {
                    "their lines"
                },
                self.example_shown,
                if unused.len() == 1 { "it" } else { "them" }
            )
        }
    }
}

/// Runs `mcpenv remove`.
pub fn run(ctx: &Ctx, args: &RemoveArgs) -> Result<RemoveOutput, CliError> {
    let request = RemoveRequest {
        name: args.name.clone(),
        scope: args.scope.map(Scope::from),
    };
    if args.tidy_example {
        crate::ops::remove_server::check_example(ctx)?;
    }
    let report = remove_server(ctx, &request)?;
    let example_shown = shown_path(ctx, &report.example);
    let unused = !report.unused_example.is_empty();
    let choice = if !unused || args.keep_example {
        Some(false)
    } else if args.tidy_example {
        Some(true)
    } else {
        ask_to_drop(args, &report.unused_example, &example_shown)
    };
    let drop = unused && choice == Some(true);
    if drop {
        drop_example_lines(ctx, &report.unused_example)?;
    }
    Ok(RemoveOutput {
        file_shown: scope_file(ctx, report.scope, &report.file),
        report,
        dropped_example: drop,
        kept_by_choice: choice == Some(false),
        example_shown,
    })
}

/// Asks on a terminal whether to drop the lines; never without one, nor
/// when the answer would be lost in JSON (`None`: not asked).
fn ask_to_drop(args: &RemoveArgs, names: &[String], example: &str) -> Option<bool> {
    if args.json || !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return None;
    }
    dialoguer::Confirm::new()
        .with_prompt(format!(
            "No server uses {} any more: drop {} from `{}`?",
            crate::cli::render::quoted_names(names),
            if names.len() == 1 {
                "its line"
            } else {
                "their lines"
            },
            crate::cli::render::shown(example)
        ))
        .default(true)
        .interact()
        .ok()
}
