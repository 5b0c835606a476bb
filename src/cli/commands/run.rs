//! `mcpenv run -- COMMAND [ARGS]...`: start COMMAND with the `.env.local`
//! and `.env` of the project and of every directory above it whose
//! `.mcp.json` is in effect (a monorepo's root), nearer first, and the
//! user's store (`~/.config/mcpenv/.env`) loaded, in that precedence (variables already in the environment win, as
//! with dotenvy), replacing this process, so `mcpenv run -- claude`
//! starts Claude Code with every placeholder resolvable and COMMAND's exit
//! status is ours.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::cli::args::RunArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::warning;
use crate::cli::resolve::Ctx;
use crate::ops::run_environment::{RunEnvError, RunEnvRequest, RunEnvironment, run_environment};

/// Runs `mcpenv run`; returns only when COMMAND could not be started.
pub fn run(ctx: &Ctx, args: &RunArgs) -> CliError {
    let request = RunEnvRequest {
        env_files: args.env_files.clone(),
    };
    let environment = match run_environment(ctx, &request) {
        Ok(environment) => environment,
        Err(RunEnvError { loaded, error }) => {
            write_warnings(ctx, &loaded);
            return error;
        }
    };
    write_warnings(ctx, &environment);
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    if ctx.project_dir.is_some() {
        // `-C DIR` acts as if started in DIR, for the command too.
        command.current_dir(&ctx.locations.working_dir);
    }
    command.envs(
        environment
            .variables
            .iter()
            .map(|(name, value)| (name, value)),
    );
    // Only returns on failure.
    let error = command.exec();
    let program = &args.command[0];
    let hint = if error.kind() == std::io::ErrorKind::NotFound && program.contains('/') {
        // A path is run as it is, never looked up on PATH.
        format!("`{program}` does not exist; check the path")
    } else if error.kind() == std::io::ErrorKind::NotFound {
        format!("`{program}` is not on PATH; check the spelling or install it")
    } else if error.kind() == std::io::ErrorKind::ArgumentListTooLong {
        format!(
            "the environment is larger than the system allows for a new program ({} variables come from the env files); keep only what the servers need in them",
            environment.variables.len()
        )
    } else {
        format!("check that `{program}` is executable")
    };
    CliError::failure_from(format!("cannot run `{program}`"), error).with_hint(hint)
}

/// The skipped lines of the env files, unless `-q`.
fn write_warnings(ctx: &Ctx, environment: &RunEnvironment) {
    if ctx.quiet {
        return;
    }
    let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
        environment
            .warnings
            .iter()
            .try_for_each(|message| warning(err, message))
    });
}
