//! The variables the servers in effect reference that the project's
//! dotenv files provide (and the environment does not): what a shell needs
//! to set for Claude Code to start them. What `mcpenv env` prints. Values
//! are the point here: a front-end decides whether to show them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::check;
use crate::ops::{Context, Error};

/// The variables to export.
#[derive(Debug, Serialize)]
pub struct ServerEnv {
    /// Name → value, in name order.
    pub variables: BTreeMap<String, String>,
}

/// The variables the servers reference that only the dotenv files set.
pub fn server_env(ctx: &Context) -> Result<ServerEnv, Error> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let report = check::check(
        &ctx.locations,
        &inventory,
        &sources,
        &crate::templates::all(&ctx.template_dirs).0,
    );
    let values = sources.file_values();
    let variables = report
        .variables
        .iter()
        .filter(|variable| !ctx.process_env.contains_key(&variable.name))
        .filter_map(|variable| {
            values
                .get(&variable.name)
                .map(|value| (variable.name.clone(), value.clone()))
        })
        .collect();
    Ok(ServerEnv { variables })
}
