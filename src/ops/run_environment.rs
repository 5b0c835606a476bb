//! The environment `mcpenv run` gives a command: the `.env.local` and
//! `.env` of the project and of every directory above it whose `.mcp.json`
//! is in effect (a monorepo's root), nearer first, then the user's store
//! (`~/.config/mcpenv/.env`), in that precedence; variables already in the
//! environment win, as with dotenvy. A dotenv file the repository ships
//! is not loaded before the person trusts the folder ([`handed`]). A value
//! that is a reference
//! (`op://…`, `keychain:…`) is replaced by what it names. Starting the
//! command is the front-end's job.

use std::collections::HashSet;
use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;

use crate::check::EnvSources;
use crate::envfiles::dotenv;
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
    /// environment already has. Keyed by name, so a name an earlier file
    /// gave is found without a copy of every name.
    pub variables: IndexMap<String, String>,
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
    let mut environment = RunEnvironment::default();
    // Files named with `--env-file` are the person's choice; the usual
    // ones are theirs unless the repository ships them.
    let held = if request.env_files.is_empty() {
        handed::held_files(&ctx.locations)
    } else {
        Vec::new()
    };
    let mut resolver = Resolver::new(ctx.shield.clone());
    // Hashed once: a name is looked up here for each of 100,000 lines.
    let inherited: HashSet<&str> = ctx.process_env.keys().map(String::as_str).collect();
    for file in &files {
        let stop = |loaded, error| {
            Err(RunEnvError {
                loaded: Box::new(loaded),
                error,
            })
        };
        if let Some(held) = held.iter().find(|held| &held.path == file) {
            environment
                .warnings
                .push(format!("`{}` not loaded: {}", file.display(), held.hint));
            continue;
        }
        let loaded = match dotenv::read(file) {
            Ok(loaded) => loaded,
            Err(error) => {
                let error = Error::failure_from(format!("cannot read `{}`", file.display()), error)
                    .with_hint("check the file's permissions");
                return stop(environment, error);
            }
        };
        if loaded.text.is_none() && !request.env_files.is_empty() {
            let error = Error::failure(format!("no such env file: `{}`", file.display()))
                .with_hint("check the path given to `--env-file`");
            return stop(environment, error);
        }
        environment
            .warnings
            .extend(loaded.problems.iter().map(|problem| {
                format!(
                    "`{}` line {}: {}; skipped",
                    file.display(),
                    problem.line,
                    problem.message
                )
            }));
        // The pairs are moved, not copied: a `.env` may hold 100,000.
        for (name, value) in loaded.entries {
            // The environment wins, and so does an earlier file.
            if environment.variables.contains_key(&name) || inherited.contains(name.as_str()) {
                continue;
            }
            // A reference is handed on as the value it names, never as
            // itself; ciphertext is not handed on at all.
            let value = match resolver.resolve_from(Some(file), &name, &value) {
                None => value,
                Some(Ok(resolved)) => resolved,
                Some(Err(error)) => {
                    let place = format!("`{}`", file.display());
                    return stop(environment, unresolved(&name, &place, error));
                }
            };
            environment.variables.insert(name, value);
        }
    }
    Ok(environment)
}
