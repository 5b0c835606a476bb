//! The environment `mcpenv run` gives a command: the `.env.local` and
//! `.env` of the project and of every directory above it whose `.mcp.json`
//! is in effect (a monorepo's root), nearer first, then the user's store
//! (`~/.config/mcpenv/.env`), in that precedence; variables already in the
//! environment win, as with dotenvy. A dotenv file the repository ships
//! is not loaded before the person trusts the folder ([`handed`]). A value
//! that is a reference
//! (`op://…`, `keychain:…`) is replaced by what it names. Starting the
//! command is the front-end's job.

use std::path::PathBuf;

use foldhash::HashSet;
use serde::Serialize;

use crate::check::EnvSources;
use crate::envfiles::assignments::Assignments;
use crate::envfiles::dotenv::{self, DotEnv};
use crate::ops::handed;
use crate::ops::secret_stores::unresolved;
use crate::ops::{Context, Error};
use crate::stores::references::Resolver;

/// Which dotenv files to load.
#[derive(Debug, Clone, Default)]
pub struct RunEnvRequest {
    /// Files to load instead of the usual ones, relative to the working
    /// directory (earlier files win); each must exist.
    pub env_files: Vec<PathBuf>,
}

/// The variables to add to the command's environment.
#[derive(Debug, Default, Serialize)]
pub struct RunEnvironment {
    /// Name → value, in the order the files give them; none the
    /// environment already has, no name twice. Held as the block the
    /// command is started with, so a `.env` of 100,000 lines is one
    /// buffer, not two strings a line.
    pub variables: Assignments,
    /// Lines of the files that were skipped, one sentence each.
    pub warnings: Vec<String>,
}

/// A file that stopped the loading, with what the files before it gave
/// (whose warnings a front-end still shows).
#[derive(Debug)]
pub struct RunEnvError {
    /// What the files read before it gave (boxed: an error stays small).
    pub loaded: Box<RunEnvironment>,
    /// Why it stopped.
    pub error: Error,
}

/// One of the files, as read.
enum Source<'a> {
    /// A file the repository ships, not loaded: why.
    Held(&'a str),
    /// A file read (or missing: no text, no entries).
    Read(DotEnv),
}

/// Loads the dotenv files the command gets, in precedence order.
pub fn run_environment(
    ctx: &Context,
    request: &RunEnvRequest,
) -> Result<RunEnvironment, RunEnvError> {
    let files: Vec<PathBuf> = if request.env_files.is_empty() {
        EnvSources::dotenv_paths(&ctx.locations, &ctx.user_env_file())
    } else {
        request
            .env_files
            .iter()
            .map(|file| ctx.locations.working_dir.join(file))
            .collect()
    };
    // Files named with `--env-file` are the person's choice; the usual
    // ones are theirs unless the repository ships them.
    let held = if request.env_files.is_empty() {
        handed::held_files(&ctx.locations)
    } else {
        Vec::new()
    };
    // Every file is read first, up to one that cannot be (whose error
    // comes after what the files before it gave, as if they were read one
    // at a time): the names of all stay borrowed from their texts while
    // the variables are picked.
    let mut sources = Vec::with_capacity(files.len());
    let mut failed = None;
    for file in &files {
        if let Some(held) = held.iter().find(|held| &held.path == file) {
            sources.push((file, Source::Held(&held.hint)));
            continue;
        }
        let loaded = match dotenv::read(file) {
            Ok(loaded) => loaded,
            Err(error) => {
                failed = Some(
                    Error::failure_from(format!("cannot read `{}`", file.display()), error)
                        .with_hint("check the file's permissions"),
                );
                break;
            }
        };
        if loaded.text.is_none() && !request.env_files.is_empty() {
            failed = Some(
                Error::failure(format!("no such env file: `{}`", file.display()))
                    .with_hint("check the path given to `--env-file`"),
            );
            break;
        }
        sources.push((file, Source::Read(loaded)));
    }
    let bytes = sources
        .iter()
        .map(|(_, source)| match source {
            Source::Read(loaded) => loaded.text.as_ref().map_or(0, String::len),
            Source::Held(_) => 0,
        })
        .sum();
    let mut environment = RunEnvironment {
        variables: Assignments::with_capacity(bytes),
        warnings: Vec::new(),
    };
    let stop = |loaded, error| {
        Err(RunEnvError {
            loaded: Box::new(loaded),
            error,
        })
    };
    let mut resolver = Resolver::new(ctx.shield.clone());
    // The names the command gets already, from the environment or an
    // earlier file (which win), hashed once: a `.env` may hold 100,000.
    let names = sources
        .iter()
        .map(|(_, source)| match source {
            Source::Read(loaded) => loaded.entries().len(),
            Source::Held(_) => 0,
        })
        .sum::<usize>();
    let mut taken: HashSet<&str> =
        HashSet::with_capacity_and_hasher(ctx.process_env.len() + names, Default::default());
    taken.extend(ctx.process_env.keys().map(String::as_str));
    for (file, source) in &sources {
        let loaded = match source {
            Source::Held(hint) => {
                environment
                    .warnings
                    .push(format!("`{}` not loaded: {hint}", file.display()));
                continue;
            }
            Source::Read(loaded) => loaded,
        };
        environment.warnings.extend(
            loaded
                .problems
                .iter()
                .map(|problem| problem.skipped_in(file)),
        );
        // Within a file the last assignment of a name counts (as `env`,
        // `check` and edits read it, and as most dotenv readers do), so the
        // winners are picked from the end, then handed on in file order.
        let mut winners: Vec<(&str, &str)> = loaded
            .entries()
            .rev()
            .filter(|(name, _)| taken.insert(*name))
            .collect();
        winners.reverse();
        for (name, value) in winners {
            // A reference is handed on as the value it names, never as
            // itself; ciphertext is not handed on at all.
            match resolver.resolve_from(Some(file), name, value) {
                None => environment.variables.push(name, value),
                Some(Ok(resolved)) => environment.variables.push(name, &resolved),
                Some(Err(error)) => {
                    let place = format!("`{}`", file.display());
                    return stop(environment, unresolved(name, &place, error));
                }
            }
        }
    }
    match failed {
        Some(error) => stop(environment, error),
        None => Ok(environment),
    }
}
