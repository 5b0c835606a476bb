//! Each client's own placeholder rules, for `scan`'s warnings and hints: a
//! form Claude Code expands (`${NAME}`) may reach a Cursor server as
//! written, and Cursor's `${env:NAME}` is what Claude Code never expands
//! (reference/clients.md, "One secret from environment variable `NAME`").

use std::path::Path;

use super::Client;
use crate::config::expansion::{references, unsupported_forms};
use crate::config::inventory::{
    Note, placeholder_notes, placeholder_notes_in, placeholder_notes_launched,
};
use crate::config::model::{Field, ServerEntry};
use crate::secrets::node::{self, Members, Node};

/// Variables Cursor and VS Code fill in themselves (`${workspaceFolder}`,
/// `${userHome}`, …): not environment variables, so never reported.
const EDITOR_VARIABLES: &[&str] = &[
    "cwd",
    "defaultBuildTask",
    "execPath",
    "file",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileDirname",
    "fileDirnameBasename",
    "fileExtname",
    "fileWorkspaceFolder",
    "lineNumber",
    "pathSeparator",
    "relativeFile",
    "relativeFileDirname",
    "selectedText",
    "userHome",
    "workspaceFolder",
    "workspaceFolderBasename",
];

/// What to do with a literal secret in `client`'s file, as a hint's clause.
pub fn secret_advice(client: Client) -> String {
    match client {
        Client::ClaudeCode => {
            "write `${NAME}` in place of each value and keep the value in `.env`".to_string()
        }
        Client::Gemini => {
            "write `${NAME}` in place of each value; Gemini CLI reads `NAME` from `.gemini/.env` or `.env`"
                .to_string()
        }
        Client::Cursor | Client::Windsurf => format!(
            "write `${{env:NAME}}` in place of each value and set `NAME` in the environment {} starts from",
            client.title()
        ),
        Client::Vscode => "write `${env:NAME}` (or `${input:id}` with an `inputs` entry) in place of each value"
            .to_string(),
        Client::Codex => "remove each value and name its variable instead: `env_vars = [\"NAME\"]`, `env_http_headers` or `bearer_token_env_var`"
            .to_string(),
        Client::Zed | Client::ClaudeDesktop => format!(
            "{} expands no variables: keep the file out of the repository, or start the server with `mcpenv run -- …` so it reads `.env`",
            client.title()
        ),
    }
}

/// The placeholder forms in `entry` (a server of `client`'s file at `path`,
/// in Claude Code's shape) that `client` leaves as written, with the fix.
pub fn notes(client: Client, path: &Path, name: &str, entry: &ServerEntry) -> Vec<Note> {
    if client == Client::ClaudeCode {
        return placeholder_notes(path, name, entry);
    }
    other_client_notes(client, path, name, entry)
}

/// [`notes`] given `entry`'s expandable fields that may hold a form
/// ([`ServerEntry::expandable_fields_where`]
/// [`may_hold_forms`](crate::config::expansion::may_hold_forms)): a scan
/// lists them once for these notes and the redactor's defaults.
pub fn notes_in(
    client: Client,
    path: &Path,
    name: &str,
    entry: &ServerEntry,
    fields: &[(Field, &str)],
) -> Vec<Note> {
    if client == Client::ClaudeCode {
        return placeholder_notes_in(path, name, entry, fields);
    }
    other_client_notes(client, path, name, entry)
}

/// [`notes_in`] of an entry read as a [`Node`](crate::secrets::node::Node)
/// (`scan`'s own reading): the same notes.
pub fn notes_of_members(
    client: Client,
    path: &Path,
    name: &str,
    entry: &Members<'_>,
    fields: &[(Field, &str)],
) -> Vec<Note> {
    if client == Client::ClaudeCode {
        if fields.is_empty() {
            return Vec::new();
        }
        let launch = (!node::is_remote(entry)).then(|| {
            let args: Vec<&str> = match node::member(entry, "args") {
                Some(Node::Array(args)) => args
                    .iter()
                    .map(|arg| arg.as_str().unwrap_or_default())
                    .collect(),
                _ => Vec::new(),
            };
            let command = node::member(entry, "command").and_then(Node::as_str);
            (command.unwrap_or_default(), args)
        });
        return placeholder_notes_launched(path, name, launch, fields);
    }
    client_notes(
        client,
        path,
        name,
        &node::expandable_fields_where(entry, |_| true),
    )
}

/// [`notes`] for a client other than Claude Code, whose rules differ.
fn other_client_notes(client: Client, path: &Path, name: &str, entry: &ServerEntry) -> Vec<Note> {
    client_notes(client, path, name, &entry.expandable_fields())
}

/// [`other_client_notes`] given every expandable field of the entry.
fn client_notes(client: Client, path: &Path, name: &str, fields: &[(Field, &str)]) -> Vec<Note> {
    let title = client.title();
    let mut notes = Vec::new();
    for &(ref field, value) in fields {
        let mut found: Vec<(usize, String, String)> = Vec::new();
        match client {
            // `${NAME}` is Claude Code's and Gemini CLI's form, not theirs.
            Client::Cursor | Client::Vscode | Client::Windsurf => {
                for reference in references(value) {
                    if !EDITOR_VARIABLES.contains(&reference.name.as_str()) {
                        let fix = reference
                            .default
                            .as_ref()
                            .map_or(String::new(), |_| " (no default is possible)".to_string());
                        found.push((
                            reference.span.start,
                            value[reference.span.clone()].to_string(),
                            format!("use `${{env:{}}}`{fix}", reference.name),
                        ));
                    }
                }
            }
            // Gemini CLI reads `$NAME`, `${NAME}` and `${NAME:-d}`, never `${env:NAME}`.
            Client::Gemini => {
                for form in unsupported_forms(value) {
                    if let (true, Some(variable)) = (form.found.contains("env:"), form.name) {
                        found.push((
                            form.span.start,
                            form.found,
                            format!("use `${{{variable}}}`"),
                        ));
                    }
                }
            }
            Client::Codex | Client::Zed | Client::ClaudeDesktop => {
                for reference in references(value) {
                    let fix = if client == Client::Codex {
                        format!(
                            "the server receives it as written; forward the variable with `env_vars = [\"{}\"]`",
                            reference.name
                        )
                    } else {
                        "the server receives it as written".to_string()
                    };
                    found.push((
                        reference.span.start,
                        value[reference.span.clone()].to_string(),
                        fix,
                    ));
                }
            }
            Client::ClaudeCode => {}
        }
        found.sort_by_key(|(start, _, _)| *start);
        notes.extend(found.into_iter().map(|(_, form, fix)| Note {
            path: path.to_path_buf(),
            message: format!("`{name}` {field}: {title} never expands `{form}`; {fix}"),
            server: Some(name.to_string()),
        }));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(client: Client, entry: serde_json::Value) -> Vec<String> {
        let entry = ServerEntry::from_value(entry);
        notes(client, Path::new("f.json"), "gh", &entry)
            .into_iter()
            .map(|note| note.message)
            .collect()
    }

    #[test]
    fn cursor_reads_env_colon_and_its_own_variables() {
        let entry = json!({"command": "npx", "args": ["${workspaceFolder}/x", "${env:OK}"], "env": {"T": "${GITHUB_TOKEN}"}});
        assert_eq!(
            messages(Client::Cursor, entry),
            ["`gh` env.T: Cursor never expands `${GITHUB_TOKEN}`; use `${env:GITHUB_TOKEN}`"]
        );
    }

    #[test]
    fn gemini_reads_dollar_forms_but_not_env_colon() {
        let entry = json!({"command": "npx", "env": {"A": "$A", "B": "${B}", "C": "${env:C}"}});
        assert_eq!(
            messages(Client::Gemini, entry),
            ["`gh` env.C: Gemini CLI never expands `${env:C}`; use `${C}`"]
        );
    }

    #[test]
    fn codex_and_zed_expand_nothing() {
        let entry = json!({"command": "npx", "env": {"T": "${TOKEN}"}});
        assert_eq!(
            messages(Client::Codex, entry.clone()),
            [
                "`gh` env.T: Codex never expands `${TOKEN}`; the server receives it as written; forward the variable with `env_vars = [\"TOKEN\"]`"
            ]
        );
        assert_eq!(
            messages(Client::Zed, entry),
            ["`gh` env.T: Zed never expands `${TOKEN}`; the server receives it as written"]
        );
    }
}
