//! `mcpenv run -- COMMAND [ARGS]...`: start COMMAND with the `.env.local`
//! and `.env` of the project and of every directory above it whose
//! `.mcp.json` is in effect (a monorepo's root), nearer first, and the
//! user's store (`~/.config/mcpenv/.env`) loaded, in that precedence (variables already in the environment win, as
//! with dotenvy), replacing this process, so `mcpenv run -- claude`
//! starts Claude Code with every placeholder resolvable and COMMAND's exit
//! status is ours.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use crate::check::EnvSources;
use crate::cli::args::RunArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::warning;
use crate::cli::resolve::Ctx;
use crate::dotenv;

/// Runs `mcpenv run`; returns only when COMMAND could not be started.
pub fn run(ctx: &Ctx, args: &RunArgs) -> CliError {
    let files: Vec<PathBuf> = if args.env_files.is_empty() {
        EnvSources::dotenv_paths(&ctx.locations, &ctx.user_env_file())
    } else {
        args.env_files
            .iter()
            .map(|file| ctx.locations.working_dir.join(file))
            .collect()
    };
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    if ctx.project_dir.is_some() {
        // `-C DIR` acts as if started in DIR, for the command too.
        command.current_dir(&ctx.locations.working_dir);
    }
    let mut set: std::collections::HashSet<String> = std::collections::HashSet::new();
    for file in &files {
        let loaded = match dotenv::read(file) {
            Ok(loaded) => loaded,
            Err(error) => {
                return CliError::failure_from(format!("cannot read `{}`", file.display()), error)
                    .with_hint("check the file's permissions");
            }
        };
        if loaded.text.is_none() && !args.env_files.is_empty() {
            return CliError::failure(format!("no such env file: `{}`", file.display()))
                .with_hint("check the path given to `--env-file`");
        }
        if !ctx.quiet {
            let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
                for problem in &loaded.problems {
                    warning(
                        err,
                        &format!(
                            "`{}` line {}: {}; skipped",
                            file.display(),
                            problem.line,
                            problem.message
                        ),
                    )?;
                }
                Ok(())
            });
        }
        for (name, value) in &loaded.entries {
            // The environment wins, and so does an earlier file.
            if ctx.process_env.contains_key(name) || set.contains(name) {
                continue;
            }
            command.env(name, value);
            set.insert(name.clone());
        }
    }
    // Only returns on failure.
    let error = command.exec();
    let program = &args.command[0];
    let hint = if error.kind() == std::io::ErrorKind::NotFound {
        format!("`{program}` is not on PATH; check the spelling or install it")
    } else if error.kind() == std::io::ErrorKind::ArgumentListTooLong {
        format!(
            "the environment is larger than the system allows for a new program ({} variables come from the env files); keep only what the servers need in them",
            set.len()
        )
    } else {
        format!("check that `{program}` is executable")
    };
    CliError::failure_from(format!("cannot run `{program}`"), error).with_hint(hint)
}
