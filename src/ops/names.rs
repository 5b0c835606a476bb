//! Names that are not there: the close match, or what exists; and how a
//! scope's file is named in messages.

use crate::config::inventory::Inventory;
use crate::ops::Context;

/// The candidate within two edits of `name` (the nearest), for "did you mean".
pub fn closest<'a, S: AsRef<str>>(candidates: &'a [S], name: &str) -> Option<&'a str> {
    candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|candidate| strsim::levenshtein(candidate, name) <= 2)
        .min_by_key(|candidate| strsim::levenshtein(candidate, name))
}

/// Hints for a name that is not defined where it was looked for: a close
/// match, or the names that exist.
pub fn unknown_name_hints(ctx: &Context, inventory: &Inventory, name: &str) -> Vec<String> {
    let names = inventory.names();
    if names.is_empty() {
        return vec![format!(
            "no MCP servers are configured here; add one with `{}`",
            ctx.command(&["add", "NAME", "--", "COMMAND"])
        )];
    }
    match closest(&names, name) {
        Some(close) => vec![format!("a server with a similar name exists: `{close}`")],
        None => {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            let shown: Vec<String> = sorted
                .iter()
                .take(8)
                .map(|name| format!("`{name}`"))
                .collect();
            let more = if sorted.len() > 8 {
                format!(
                    " and {} more (see `{}`)",
                    sorted.len() - 8,
                    ctx.command(&["list"])
                )
            } else {
                String::new()
            };
            vec![format!("configured servers: {}{more}", shown.join(", "))]
        }
    }
}
