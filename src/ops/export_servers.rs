//! Writing the servers of a scope into another client's own file for the
//! same scope, in its own placeholder syntax. Clients that expand nothing
//! (Zed, Claude Desktop) get resolved values, and only in user-level files
//! outside the repository. What `mcpenv export` does.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::clients::export::{self, ExportOptions, Exported};
use crate::clients::{self, Client, CodexTrust};
use crate::fsx::{self, NewMode, TextEditError};
use crate::model::ServerEntry;
use crate::ops::extraction::{Known, known_values};
use crate::ops::{Context, Error};
use crate::placeholder;
use crate::scope::Scope;

/// Which servers `export` reads, and so which of the client's files it
/// writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportScope {
    /// `.mcp.json` → the client's project file.
    Project,
    /// The user's servers → the client's user file.
    User,
}

impl ExportScope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// What to export where.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    /// The client written to.
    pub client: Client,
    /// The servers read.
    pub scope: ExportScope,
    /// VS Code: ask for secrets with `inputs` prompts instead of `${env:X}`.
    pub vscode_inputs: bool,
}

/// What `export` did (or, as a check, found).
#[derive(Debug, Serialize)]
pub struct ExportReport {
    /// The client.
    pub client: Client,
    /// Its file.
    pub file: PathBuf,
    /// The servers written (or, as a check, that would be written).
    pub servers: Vec<String>,
    /// The servers of the scope that the client cannot take (each has a
    /// warning).
    pub not_exported: Vec<String>,
    /// Whether the file changed (or, as a check, would change).
    pub changed: bool,
    /// Whether this was a check.
    pub check: bool,
    /// What could not be carried over exactly.
    pub warnings: Vec<String>,
    /// What to do about the warnings.
    pub hints: Vec<String>,
    /// The command that brings the file up to date.
    #[serde(skip)]
    pub fix: String,
    /// The scope exported.
    #[serde(skip)]
    pub scope: ExportScope,
}

/// The export decided on the file as it is now; writes nothing.
pub struct ExportPlan {
    /// What the write would report.
    pub report: ExportReport,
    /// The servers of the scope.
    servers: Vec<(String, ServerEntry)>,
    /// The new text of the file.
    text: String,
    /// The values variables have, for clients that expand nothing.
    known: Known,
    vscode_inputs: bool,
    /// Codex ignoring its project file, when it does.
    trust: Option<String>,
}

/// Whether `client` expands no placeholders, so gets resolved values.
fn expands_nothing(client: Client) -> bool {
    matches!(client, Client::Zed | Client::ClaudeDesktop)
}

/// Decides which servers the client can take and whether its file would
/// change; writes nothing. Refuses to put resolved secrets in the
/// repository.
pub fn plan_export(ctx: &Context, request: &ExportRequest) -> Result<ExportPlan, Error> {
    let client = request.client;
    let expands_nothing = expands_nothing(client);
    let (project_file, user_file) = client_files(ctx, client);
    let user_export = || ctx.command(&["export", "--to", client.as_str(), "--scope", "user"]);
    let file = match request.scope {
        ExportScope::Project if expands_nothing => {
            return Err(Error::usage(format!(
                "{client} expands no placeholders, so its file would hold the secrets themselves; mcpenv never writes those into the repository"
            ))
            .with_hint(format!("export to its user file instead: `{}`", user_export())));
        }
        ExportScope::Project => project_file.ok_or_else(|| {
            Error::usage(format!("{client} has no project-level config file"))
                .with_hint(format!("export to its user file: `{}`", user_export()))
        })?,
        ExportScope::User => user_file.ok_or_else(|| {
            Error::usage(format!(
                "{client} has no user-level config file mcpenv knows"
            ))
        })?,
    };
    if expands_nothing && file.starts_with(repository(ctx)) {
        return Err(Error::failure(format!("`{}` is inside the repository; mcpenv does not write resolved secrets there", file.display()))
            .with_hint("move the project out of your home folder's config, or use a client that expands placeholders"));
    }
    let servers = servers_of(ctx, request.scope)?;
    let known = known_values(ctx)?;
    let existing = fsx::read_if_exists(&file)
        .map_err(|error| Error::failure_from(format!("cannot read `{}`", file.display()), error))?;
    let planned = run_export(
        client,
        existing.as_deref(),
        &servers,
        &known,
        request.vscode_inputs,
    )
    .map_err(|error| export_error(&file, error))?;
    let mut fix = vec!["export", "--to", client.as_str()];
    if request.scope == ExportScope::User {
        fix.extend(["--scope", "user"]);
    }
    let trust = (!planned.servers.is_empty())
        .then(|| codex_trust_warning(ctx, client, &file))
        .flatten();
    Ok(ExportPlan {
        report: ExportReport {
            client,
            file,
            servers: planned.servers,
            not_exported: planned.skipped,
            changed: planned.changed,
            check: false,
            warnings: planned.warnings,
            hints: Vec::new(),
            fix: ctx.command(&fix),
            scope: request.scope,
        },
        servers,
        text: planned.text,
        known,
        vscode_inputs: request.vscode_inputs,
        trust,
    })
}

/// The report of `plan` as a check: whether the file is up to date.
pub fn check_export(plan: ExportPlan) -> ExportReport {
    let mut report = plan.report;
    report.check = true;
    report.warnings.extend(plan.trust);
    report
}

/// Writes `plan` into the client's file, redoing the export on the text
/// it locks; a file that will hold secrets is made private first.
pub fn apply_export(ctx: &Context, plan: ExportPlan) -> Result<ExportReport, Error> {
    let ExportPlan {
        mut report,
        servers,
        text,
        known,
        vscode_inputs,
        trust,
    } = plan;
    if report.servers.is_empty() {
        report.warnings.extend(trust);
        return Ok(report);
    }
    let client = report.client;
    let file = report.file.clone();
    if let Some(parent) = file.parent() {
        fs_err::create_dir_all(parent).map_err(|error| {
            Error::failure_from(format!("cannot create `{}`", parent.display()), error)
        })?;
    }
    // Resolved values are secrets mcpenv hands over; literal ones are
    // whatever `scan` flags in the servers as written.
    let literal = literal_secrets(client, &file, &text, &report.servers);
    let resolved = expands_nothing(client)
        && servers
            .iter()
            .filter(|(name, _)| report.servers.contains(name))
            .any(|(_, entry)| {
                entry
                    .expandable_fields()
                    .iter()
                    .any(|(_, value)| !placeholder::references(value).is_empty())
            });
    let holds_secrets = resolved || !literal.is_empty();
    if holds_secrets {
        make_private(&file)?;
    }
    let mut exported = None;
    let changed = fsx::edit_text(
        &ctx.locations.state_dir,
        &file,
        new_mode(holds_secrets),
        |old| {
            let again = run_export(client, old, &servers, &known, vscode_inputs)?;
            let text = again.changed.then(|| again.text.clone());
            exported = Some(again);
            Ok(text)
        },
    )
    .map_err(|error| match error {
        TextEditError::Change(error) => export_error(&file, error),
        TextEditError::Read(source) | TextEditError::Write(source) => {
            Error::failure_from(format!("cannot write `{}`", file.display()), source)
        }
        TextEditError::Locked(_) | TextEditError::Contended => {
            Error::failure(format!("`{}` is busy; try again", file.display()))
        }
    })?;
    if let Some(exported) = exported {
        report.servers = exported.servers;
        report.not_exported = exported.skipped;
        report.warnings = exported.warnings;
    }
    report.changed = changed;
    report.warnings.extend(trust);
    if resolved {
        report.warnings.push(format!(
            "`{}` now holds secret values: {client} expands no placeholders",
            file.display()
        ));
    }
    if !literal.is_empty() {
        report.warnings.push(format!(
            "`{}` now holds {} literal {} ({}), copied from the {} scope; it was made private (mode 600)",
            file.display(),
            literal.len(),
            if literal.len() == 1 { "secret" } else { "secrets" },
            literal.join(", "),
            report.scope.as_str()
        ));
        let extract = match report.scope {
            ExportScope::Project => ctx.command(&["extract"]),
            ExportScope::User => ctx.command(&["extract", "-s", "user"]),
        };
        report.hints.push(format!(
            "move them into dotenv files first with `{extract}`, then export again: {} then gets placeholders",
            client.title()
        ));
    }
    Ok(report)
}

/// The export of `servers` onto `existing`, values looked up in `known`
/// for a client that expands nothing.
fn run_export(
    client: Client,
    existing: Option<&str>,
    servers: &[(String, ServerEntry)],
    known: &Known,
    vscode_inputs: bool,
) -> Result<Exported, export::ExportError> {
    let lookup = |name: &str| known.lookup(name);
    let options = ExportOptions {
        vscode_inputs,
        lookup: expands_nothing(client).then_some(&lookup as &dyn Fn(&str) -> Option<String>),
    };
    export::export(client, existing, servers, &options)
}

/// The error for an export that cannot be made onto `file`.
fn export_error(file: &Path, error: export::ExportError) -> Error {
    Error::failure_from(format!("cannot export to `{}`", file.display()), error)
        .with_hint("fix the file by hand, or set the variables it names; nothing was written")
}

/// A client's project-level and user-level files.
pub fn client_files(ctx: &Context, client: Client) -> (Option<PathBuf>, Option<PathBuf>) {
    let project = repository(ctx);
    let mut project_file = None;
    let mut user_file = None;
    for file in clients::known_files(&ctx.locations.home, &ctx.config_home, &project) {
        if file.client != client {
            continue;
        }
        if file.project {
            project_file.get_or_insert(file.path);
        } else {
            user_file.get_or_insert(file.path);
        }
    }
    (project_file, user_file)
}

/// The repository's root, or the working directory outside one.
fn repository(ctx: &Context) -> PathBuf {
    ctx.locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.working_dir.clone())
}

/// For Codex's project file: a sentence saying that Codex ignores it, when
/// its user config does not record the project as trusted.
pub fn codex_trust_warning(ctx: &Context, client: Client, file: &Path) -> Option<String> {
    let (project_file, user_file) = client_files(ctx, client);
    if client != Client::Codex || project_file.as_deref() != Some(file) {
        return None;
    }
    let user_file = user_file?;
    let folder = file.parent()?.parent()?.to_path_buf();
    let mut dirs = vec![folder.as_path()];
    if let Some(root) = ctx.locations.git_root.as_deref()
        && root != folder
    {
        dirs.push(root);
    }
    // A user config that cannot be read or parsed trusts nothing (Codex
    // itself refuses to start with one that does not parse).
    let config = fsx::read_if_exists(&user_file)
        .ok()
        .flatten()
        .and_then(|text| clients::parse(&user_file, &text).ok())
        .unwrap_or_default();
    let shown_folder = folder.display();
    let shown_user = user_file.display();
    match clients::codex_trust(&config, &dirs) {
        CodexTrust::Trusted => None,
        CodexTrust::Untrusted => Some(format!(
            "Codex ignores `{}`: `{shown_user}` marks `{shown_folder}` as untrusted; set its `trust_level` to `\"trusted\"` for Codex to read the file",
            file.display()
        )),
        CodexTrust::Unknown => Some(format!(
            "Codex ignores `{}` until it trusts `{shown_folder}`: accept when Codex asks, or add `[projects.\"{shown_folder}\"]` with `trust_level = \"trusted\"` to `{shown_user}`",
            file.display()
        )),
    }
}

/// The literal secrets of the `exported` servers in `text`, the file as it
/// will be written, as `server field` (read back as Claude Code entries, so
/// what `scan` flags is what the client will hold).
fn literal_secrets(client: Client, file: &Path, text: &str, exported: &[String]) -> Vec<String> {
    let Ok(value) = clients::parse(file, text) else {
        return Vec::new();
    };
    clients::servers(client, value)
        .into_iter()
        .filter(|found| exported.contains(&found.name))
        .flat_map(|found| {
            crate::secrets::scan_entry(&found.entry)
                .into_iter()
                .map(move |finding| format!("`{}` {}", found.name, finding.field))
        })
        .collect()
}

/// Takes group and other permissions off an existing `file` before secrets
/// are written into it (a stricter mode is kept); the atomic write then
/// copies the private mode.
fn make_private(file: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = match std::fs::metadata(file) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(Error::failure_from(
                format!("cannot read `{}`", file.display()),
                error,
            ));
        }
    };
    let mode = metadata.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode & !0o077)).map_err(
        |error| {
            Error::failure_from(format!("cannot make `{}` private", file.display()), error)
                .with_hint(format!(
                    "run `chmod 600 {}` and export again",
                    file.display()
                ))
        },
    )
}

/// A file holding secrets is private when mcpenv creates it.
fn new_mode(holds_secrets: bool) -> NewMode {
    if holds_secrets {
        NewMode::Exact(0o600)
    } else {
        NewMode::Umasked(0o644)
    }
}

/// The servers of a scope: every server of the project's `.mcp.json`
/// whatever its approval, or the user's servers.
fn servers_of(ctx: &Context, scope: ExportScope) -> Result<Vec<(String, ServerEntry)>, Error> {
    let inventory = ctx.inventory()?;
    let project_file = ctx.locations.project_file_for_write();
    Ok(inventory
        .entries
        .into_iter()
        .filter(|entry| match scope {
            ExportScope::Project => entry.scope == Scope::Project && entry.file == project_file,
            ExportScope::User => entry.scope == Scope::User,
        })
        .map(|entry| (entry.name, entry.entry))
        .collect())
}
