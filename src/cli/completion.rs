//! Shell completion through clap_complete's dynamic completion: the shell
//! asks mcpenv itself (`MCPENV_COMPLETE=<shell> mcpenv -- <words>`), so
//! server names, templates and secrets' variables complete from the
//! project the shell is in, and flags and value enums (scopes, clients,
//! transports) from the command line's definition.

use std::ffi::OsString;
use std::io::{self, Write};
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{CompleteEnv, Shells};

use crate::cli::args::Cli;
use crate::cli::output::Shield;
use crate::cli::resolve::{Ctx, resolve};

/// The variable the registration scripts set when they ask for
/// completions; mcpenv's own, so a `COMPLETE` set for another tool is
/// never taken for a request.
pub const VAR: &str = "MCPENV_COMPLETE";

/// Answers a completion request and exits, when this run is one.
pub fn answer_if_asked() {
    CompleteEnv::with_factory(Cli::command).var(VAR).complete();
}

/// Writes the script that registers mcpenv's completions with `shell`.
pub fn write_registration(shell: &str, out: &mut dyn Write) -> io::Result<()> {
    let shells = Shells::builtins();
    let Some(completer) = shells.completer(shell) else {
        return Err(io::Error::other(format!(
            "no completion for the shell `{shell}`"
        )));
    };
    completer.write_registration(VAR, "mcpenv", "mcpenv", &completer_path(), out)
}

/// How the script calls mcpenv back: by name when it was started by name
/// (found on PATH then too), else by its full path (`target/debug/mcpenv`).
fn completer_path() -> String {
    let started_as = std::env::args_os()
        .next()
        .unwrap_or_else(|| OsString::from("mcpenv"));
    if std::path::Path::new(&started_as)
        .components()
        .nth(1)
        .is_none()
    {
        return started_as.to_string_lossy().into_owned();
    }
    std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| started_as.to_string_lossy().into_owned())
}

/// The context of the directory the shell is in. A completion has no
/// `-C` and prints nothing of its own: `None` when the world cannot be
/// read.
fn here() -> Option<Ctx> {
    let cli = Cli::try_parse_from(["mcpenv", "list"]).ok()?;
    resolve(&cli, Arc::new(Shield::default())).ok()
}

/// Every server name in effect here.
pub fn server_names() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    let inventory = crate::layered::Inventory::load_all(&ctx.locations);
    inventory
        .names()
        .into_iter()
        .map(|name| {
            let help = inventory
                .winner(name)
                .map(|winner| format!("{} scope", winner.scope));
            CompletionCandidate::new(name).help(help.map(Into::into))
        })
        .collect()
}

/// Every template name: shipped, the user's and the project's.
pub fn template_names() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    crate::templates::all(&ctx.template_dirs)
        .0
        .iter()
        .map(|template| {
            CompletionCandidate::new(&template.name)
                .help(template.server.title.clone().map(Into::into))
        })
        .collect()
}

/// Every variable of the dotenv files mcpenv reads here.
pub fn dotenv_variables() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    let Ok(sources) = ctx.env_sources() else {
        return Vec::new();
    };
    let mut names: Vec<&str> = sources
        .dotenv_files()
        .into_iter()
        .flat_map(|file| file.entries.iter().map(|(name, _)| name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}
