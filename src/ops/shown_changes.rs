//! A change to files as a person sees it, secrets masked: the preview of
//! a dry run (`--dry-run`, `export --check`) and of `serve`'s human gate.
//! A committed file's diff is shown whole; of a private file only what
//! changes: the variables of a dotenv file (values masked), the servers of
//! `~/.claude.json` (other projects' entries are not passed on). Any other
//! file (another client's config, `.claude/settings.local.json`) is shown
//! whole once the shield has learned the secrets in it.

use serde::Serialize;

use crate::mechanics::diff::FileChange;
use crate::ops::Context;

/// One file's change as the person sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownChange {
    /// The file, as a person knows it.
    pub file: String,
    /// Whether the file is meant to be committed (`.mcp.json`,
    /// `.env.example`, `.gitignore`): its diff is shown whole.
    pub committed: bool,
    /// The change: a unified diff of a committed file; for a private one
    /// only what changes in it (the variables of a `.env`, values masked;
    /// the servers of `~/.claude.json`), so no other line of a file that
    /// holds secrets is passed on.
    pub diff: String,
}

/// `changes` as the person sees them, every secret the shield knows
/// masked (the values moved into `.env` are learned from the
/// configuration they come from).
pub fn shown(ctx: &Context, changes: &[FileChange]) -> Vec<ShownChange> {
    ctx.learn_world();
    changes
        .iter()
        .map(|change| {
            // A file reached through a link also names where it really is.
            let file = format!(
                "{}{}",
                crate::ops::shown_paths::shown_path(ctx, &change.path),
                crate::ops::shown_paths::link_note(&change.path, |target| {
                    crate::ops::shown_paths::shown_path(ctx, target)
                })
            );
            let name = change
                .path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let committed = matches!(name.as_str(), ".mcp.json" | ".env.example" | ".gitignore");
            let dotenv =
                !committed && (name.starts_with(".env") || change.path == ctx.user_env_file());
            let diff = if committed {
                learn_config_secrets(ctx, change);
                change.unified(&file)
            } else if change.path == ctx.locations.claude_json {
                servers_changed(ctx, change)
            } else if dotenv {
                variables_changed(change, &file)
            } else {
                learn_config_secrets(ctx, change);
                change.unified(&file)
            };
            ShownChange {
                committed,
                file,
                diff: ctx.shield.clean(&diff),
            }
        })
        .collect()
}

/// Teaches the shield the secrets of a config file of another client (JSON,
/// JSONC or TOML), before and after: every server-like entry as `scan`
/// reads one, and every `name: value` pair as a variable.
fn learn_config_secrets(ctx: &Context, change: &FileChange) {
    let parse = |text: &str| {
        jsonc_parser::parse_to_serde_value::<Option<serde_json::Value>>(
            text,
            &jsonc_parser::ParseOptions::default(),
        )
        .ok()
        .flatten()
        .or_else(|| toml::from_str::<serde_json::Value>(text).ok())
    };
    let documents: Vec<serde_json::Value> = [&change.before, &change.after]
        .into_iter()
        .flatten()
        .filter_map(|text| parse(text))
        .collect();
    ctx.shield.learn(|redactor| {
        for document in &documents {
            learn_values(redactor, document);
        }
    });
}

fn learn_values_of(ctx: &Context, value: &serde_json::Value) {
    ctx.shield.learn(|redactor| learn_values(redactor, value));
}

fn learn_values(redactor: &mut crate::secrets::redact::Redactor, value: &serde_json::Value) {
    match value {
        serde_json::Value::Object(object) => {
            if ["command", "args", "env", "headers", "url"]
                .iter()
                .any(|key| object.contains_key(*key))
            {
                redactor.learn_entry(&crate::config::model::ServerEntry::from_value(
                    value.clone(),
                ));
            }
            for (name, inner) in object {
                match inner {
                    serde_json::Value::String(text) => redactor.learn_env(name, text),
                    other => learn_values(redactor, other),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                learn_values(redactor, item);
            }
        }
        _ => {}
    }
}

/// The lines of a dotenv file that change, each value masked; no other
/// line of the file.
fn variables_changed(change: &FileChange, file: &str) -> String {
    let before = change.before.as_deref().unwrap_or_default();
    let after = change.after.as_deref().unwrap_or_default();
    let mut text = format!(
        "--- {}\n+++ {}\n(changed lines only, values masked; references shown)\n",
        crate::mechanics::diff::label(change.before.is_some(), "a", file),
        crate::mechanics::diff::label(change.after.is_some(), "b", file)
    );
    for line in similar::TextDiff::from_lines(before, after).iter_all_changes() {
        let sign = match line.tag() {
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Equal => continue,
        };
        let line = line.value().trim_end_matches('\n');
        let shown = match line.split_once('=') {
            Some((name, value)) if !name.trim_start().starts_with('#') => {
                let value = value.trim_matches(['\'', '"']);
                // A reference names where the value is; it is no secret.
                if crate::stores::references::manager_of(value).is_some() {
                    format!("{name}={value}")
                } else {
                    format!("{name}={}", crate::secrets::redact::mask(value))
                }
            }
            _ => line.to_string(),
        };
        text.push(sign);
        text.push_str(&shown);
        text.push('\n');
    }
    text
}

/// The server entries of `~/.claude.json` that change (user scope and
/// this project's local scope); the rest of the file, other projects'
/// entries among it, is not passed on.
fn servers_changed(ctx: &Context, change: &FileChange) -> String {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    let (before, after) = (parse(&change.before), parse(&change.after));
    let key = &ctx.locations.local_key;
    let places: [(&str, Vec<&str>); 2] = [
        ("user scope", vec!["mcpServers"]),
        ("local scope", vec!["projects", key.as_str(), "mcpServers"]),
    ];
    let mut text = String::from("~/.claude.json (only the servers that change):\n");
    for (scope, path) in places {
        let at = |root: &serde_json::Value| {
            path.iter()
                .try_fold(root, |value, step| value.get(*step))
                .and_then(serde_json::Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let (old, new) = (at(&before), at(&after));
        for (name, entry) in &old {
            if new.get(name) != Some(entry) {
                learn_values_of(ctx, entry);
                text.push_str(&format!("- {scope} server `{name}`: {entry}\n"));
            }
        }
        for (name, entry) in &new {
            if old.get(name) != Some(entry) {
                learn_values_of(ctx, entry);
                text.push_str(&format!("+ {scope} server `{name}`: {entry}\n"));
            }
        }
    }
    // This project's other settings (approvals, trust): their values are
    // lists of names and flags. Of the rest of the file only the names of
    // the keys that change, never their values.
    let project = |root: &serde_json::Value| {
        root.get("projects")
            .and_then(|projects| projects.get(key.as_str()))
            .and_then(serde_json::Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old, new) = (project(&before), project(&after));
    for (name, value) in old.iter().filter(|(name, _)| *name != "mcpServers") {
        if new.get(name) != Some(value) {
            text.push_str(&format!("- this project's `{name}`: {value}\n"));
        }
    }
    for (name, value) in new.iter().filter(|(name, _)| *name != "mcpServers") {
        if old.get(name) != Some(value) {
            text.push_str(&format!("+ this project's `{name}`: {value}\n"));
        }
    }
    let top = |root: &serde_json::Value| root.as_object().cloned().unwrap_or_default();
    let (old, new) = (top(&before), top(&after));
    let names: indexmap::IndexSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        if ["mcpServers", "projects"].contains(&name.as_str()) || old.get(name) == new.get(name) {
            continue;
        }
        text.push_str(&format!("~ `{name}` changes\n"));
    }
    text
}
