//! The variables the servers in effect reference that the project's
//! dotenv files provide (and the environment does not): what a shell needs
//! to set for Claude Code to start them, references (`op://…`,
//! `keychain:…`) resolved. What `mcpenv env` prints. Values
//! are the point here: a front-end decides whether to show them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::check;
use crate::ops::handed;
use crate::ops::secret_stores::unresolved;
use crate::ops::{Context, Error};
use crate::stores::references::Resolver;

/// The variables to export.
#[derive(Debug, Serialize)]
pub struct ServerEnv {
    /// Name → value, in name order.
    pub variables: BTreeMap<String, String>,
    /// Name → where its value comes from (a file, for messages).
    #[serde(skip)]
    pub sources: BTreeMap<String, String>,
    /// Dotenv files the repository ships, whose values are not exported.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<handed::HeldFile>,
    /// The lines of the files read that dotenvy could not parse, each a
    /// warning that names the file and line, never the line's text: a
    /// variable the servers need may be on one.
    #[serde(skip)]
    pub skipped: Vec<String>,
}

/// The variables the servers reference that only the dotenv files set.
///
/// The shield learns every scope's secrets, and of the env files' values
/// those it exports (each as [`Redactor::learn_env`] would learn it from
/// the file), not every value of every file: nothing else of them is
/// shown. An error learns them all (see [`Context::env_sources_unlearned`]).
///
/// [`Redactor::learn_env`]: crate::secrets::redact::Redactor::learn_env
pub fn server_env(ctx: &Context) -> Result<ServerEnv, Error> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources_unlearned()?;
    let report = check::check(&ctx.locations, &inventory, &sources, || {
        crate::templates::all(&ctx.template_dirs).0
    });
    // What the repository ships is not the person's to export.
    let held = handed::held_files(&ctx.locations);
    let wanted = report
        .variables
        .iter()
        .filter(|variable| !ctx.process_env.contains_key(&variable.name))
        .map(|variable| variable.name.as_str())
        .collect();
    let values = handed::handed_values(&sources, &held, &wanted);
    let skipped = sources
        .dotenv_files()
        .into_iter()
        .filter(|file| !held.iter().any(|held| held.path == file.path))
        .flat_map(|file| {
            file.problems
                .iter()
                .map(|problem| problem.skipped_in(&file.path))
        })
        .collect();
    let mut resolver = Resolver::new(ctx.shield.clone());
    let mut variables = BTreeMap::new();
    let mut sources = BTreeMap::new();
    for variable in &report.variables {
        if ctx.process_env.contains_key(&variable.name) {
            continue;
        }
        let Some(&value) = values.get(variable.name.as_str()) else {
            continue;
        };
        let place = variable
            .source
            .as_deref()
            .map_or_else(|| "a `.env` file".to_string(), |file| format!("`{file}`"));
        // A reference is exported as the value it names.
        let file = variable
            .source
            .as_deref()
            .filter(|source| *source != "environment");
        let value = resolver
            .value_from(file.map(std::path::Path::new), &variable.name, value)
            .map_err(|error| unresolved(&variable.name, &place, error))?;
        // What is printed is known to the shield (a reference's value, by
        // the resolver, as well).
        ctx.shield
            .learn(|redactor| redactor.learn_env(&variable.name, &value));
        variables.insert(variable.name.clone(), value);
        sources.insert(variable.name.clone(), place);
    }
    Ok(ServerEnv {
        variables,
        sources,
        held,
        skipped,
    })
}
