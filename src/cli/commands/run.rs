//! `mcpenv run -- COMMAND [ARGS]...`: start COMMAND with the `.env.local`
//! and `.env` of the project and of every directory above it whose
//! `.mcp.json` is in effect (a monorepo's root), nearer first, and the
//! user's store (`~/.config/mcpenv/.env`) loaded, in that precedence (variables already in the environment win, as
//! with dotenvy), replacing this process, so `mcpenv run -- claude`
//! starts Claude Code with every placeholder resolvable and COMMAND's exit
//! status is ours. Windows cannot replace a process by another: there
//! mcpenv starts COMMAND, waits for it, and exits with its exit code.

#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::cli::args::RunArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::warning;
use crate::cli::resolve::Ctx;
use crate::envfiles::assignments::Assignments;
use crate::ops::run_environment::{RunEnvError, RunEnvRequest, RunEnvironment, run_environment};

/// Runs `mcpenv run`; returns only when COMMAND could not be started.
///
/// With many variables, what `Command::exec` would do, with the
/// environment block built once (see [`crate::cli::exec`]): a `.env` may
/// hold 100,000 of them. With few, `Command::exec` itself, which starts
/// sooner (`exec` resets `SIGPIPE` through a tokio runtime, which costs more
/// than `Command`'s copies of a few variables).
#[cfg(unix)]
pub fn run(ctx: &Ctx, args: &RunArgs) -> CliError {
    let variables = match environment(ctx, args) {
        Ok(variables) => variables,
        Err(error) => return error,
    };
    let count = variables.len();
    let program = &args.command[0];
    if count < MANY_VARIABLES {
        let mut command = command(ctx, args, &variables);
        // Only returns on failure.
        return not_started(program, count, command.exec());
    }
    if ctx.project_dir.is_some() {
        // `-C DIR` acts as if started in DIR, for the command too.
        if let Err(error) = std::env::set_current_dir(&ctx.locations.working_dir) {
            return not_started(program, count, error);
        }
    }
    // The environment's variables win; the files gave none of their names.
    let inherited = |name: &std::ffi::OsStr| {
        name.to_str()
            .is_some_and(|name| ctx.process_env.contains_key(name))
    };
    let error = match crate::cli::exec::environment(std::env::vars_os(), inherited, &variables) {
        // Only returns on failure.
        Ok(block) => crate::cli::exec::replace(&args.command, &block),
        Err(error) => error,
    };
    not_started(program, count, error)
}

/// From how many variables the env files give `run` builds the
/// environment block itself; tests/cli/run.rs runs each case on both
/// sides of it.
#[cfg(unix)]
const MANY_VARIABLES: usize = 256;

/// COMMAND as `std::process::Command`, with `variables` added to the
/// environment and `-C`'s directory.
fn command(ctx: &Ctx, args: &RunArgs, variables: &Assignments) -> Command {
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    if ctx.project_dir.is_some() {
        // `-C DIR` acts as if started in DIR, for the command too.
        command.current_dir(&ctx.locations.working_dir);
    }
    command.envs(variables.iter());
    command
}

/// Runs `mcpenv run`: COMMAND's exit code once it ends (1 when it ended
/// without one), or why it could not be started.
#[cfg(not(unix))]
pub fn run(ctx: &Ctx, args: &RunArgs) -> Result<u8, CliError> {
    let variables = environment(ctx, args)?;
    let count = variables.len();
    let status = command(ctx, args, &variables)
        .status()
        .map_err(|error| not_started(&args.command[0], count, error))?;
    // Windows exit codes are 32 bits; an exit code is one byte.
    Ok(status
        .code()
        .map_or(1, |code| u8::try_from(code).unwrap_or(1)))
}

/// The variables the env files give COMMAND (the environment's own left
/// out), once the files' warnings are written.
fn environment(ctx: &Ctx, args: &RunArgs) -> Result<Assignments, CliError> {
    let request = RunEnvRequest {
        env_files: args.env_files.clone(),
    };
    match run_environment(ctx, &request) {
        Ok(environment) => {
            write_warnings(ctx, &environment);
            Ok(environment.variables)
        }
        Err(RunEnvError { loaded, error }) => {
            write_warnings(ctx, &loaded);
            Err(error)
        }
    }
}

/// The error for COMMAND (`program`) that could not be started.
fn not_started(program: &str, variables: usize, error: std::io::Error) -> CliError {
    let is_path = program.contains('/') || (cfg!(windows) && program.contains('\\'));
    let hint = if error.kind() == std::io::ErrorKind::NotFound && is_path {
        // A path is run as it is, never looked up on PATH.
        format!("`{program}` does not exist; check the path")
    } else if error.kind() == std::io::ErrorKind::NotFound {
        format!("`{program}` is not on PATH; check the spelling or install it")
    } else if error.kind() == std::io::ErrorKind::ArgumentListTooLong {
        format!(
            "the environment is larger than the system allows for a new program ({variables} variables come from the env files); keep only what the servers need in them"
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
