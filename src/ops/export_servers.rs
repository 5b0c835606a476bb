//! Writing the servers of a scope into another client's own file for the
//! same scope, in its own placeholder syntax. Clients that expand nothing
//! (Zed, Claude Desktop) get resolved values, and only in user-level files
//! outside the repository. What `mcpenv export` does.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::clients::export::{self, EnvFile, ExportOptions, Exported};
use crate::clients::{self, Client, CodexTrust};
use crate::config::expansion;
use crate::config::model::ServerEntry;
use crate::config::scope::Scope;
use crate::mechanics::diff::FileChange;
use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::{self, NewMode, TextEditError};
use crate::ops::export_manifest::{self, Managed};
use crate::ops::extraction_inputs::{Known, known_values};
use crate::ops::{Context, Error};

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
    /// Remove the entries mcpenv exported earlier whose servers are gone
    /// from the scope (a check always counts them).
    pub prune: bool,
    /// Point stdio servers at an env file the client reads itself.
    pub env_file: Option<EnvFileChoice>,
}

/// Which env file `--env-file` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvFileChoice {
    /// The scope's own: the repository's `.env` (as
    /// `${workspaceFolder}/.env`), or the user's dotenv store.
    Default,
    /// This one; a relative path is taken from the repository root (project
    /// scope) or the working directory (user scope).
    Path(PathBuf),
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
    /// Entries mcpenv exported earlier whose servers are gone from the
    /// scope, removed (or, as a check, that would be removed).
    pub pruned: Vec<String>,
    /// Such entries left in the file: without `--prune`, or edited by hand
    /// since mcpenv wrote them (each has a warning).
    pub stale: Vec<String>,
    /// As a check of a file out of date: the unified diff of the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
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
    /// The env file stdio servers read, when asked for.
    env_file: Option<EnvFilePlan>,
    /// The prune candidates: gone from the scope, unedited since written.
    prunable: Managed,
    /// What the manifest records for the file now.
    managed: Managed,
    /// The file's text now, for the check's diff.
    existing: Option<String>,
    /// How many of the report's warnings (the last) come from the
    /// translation, which the write redoes.
    translation_warnings: usize,
    /// Codex ignoring its project file, when it does.
    trust: Option<String>,
}

/// `envFile` as written, and the variables the file provides.
#[derive(Debug, Clone)]
struct EnvFilePlan {
    written: String,
    provides: Vec<String>,
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
    if request.env_file.is_some() && !export::supports_env_file(client) {
        return Err(Error::usage(format!(
            "{client} documents no `envFile` key for its servers, so `--env-file` cannot be used with it"
        ))
        .with_hint("`--env-file` works with `--to cursor` and `--to vscode`"));
    }
    let expands_nothing = expands_nothing(client);
    let (project_file, user_file) = client_files(ctx, client);
    let user_export = || ctx.command(&["export", "--to", client.as_str(), "--scope", "user"]);
    let file = match request.scope {
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
    let servers = servers_of(ctx, request.scope)?;
    if expands_nothing && file.starts_with(repository(ctx)) {
        // The client would get each placeholder's value written out: a
        // server without placeholders holds nothing the repository does
        // not already hold, so only those with them stop the export.
        let with_variables: Vec<&String> = servers
            .iter()
            .filter(|(_, entry)| uses_variables(entry))
            .map(|(name, _)| name)
            .collect();
        if !with_variables.is_empty() {
            return Err(Error::failure(format!(
                "{client} expands no placeholders, so `{}` (inside the repository) would hold the values of {} variables; mcpenv never writes secrets into the repository",
                file.display(),
                backticked_owners(&with_variables),
            ))
            .with_hint(format!("export to its user file instead: `{}`", user_export())));
        }
    }
    let known = known_values(ctx)?;
    let existing = fsx::read_if_exists(&file)
        .map_err(|error| Error::failure_from(format!("cannot read `{}`", file.display()), error))?;
    let mut warnings = Vec::new();
    let env_file = match &request.env_file {
        Some(choice) => Some(env_file_plan(ctx, request.scope, choice, &mut warnings)?),
        None => None,
    };
    let manifest = export_manifest::load(&ctx.locations.state_dir)?;
    let managed = manifest
        .files
        .get(&export_manifest::file_key(&file))
        .cloned()
        .unwrap_or_default();
    let current = existing
        .as_deref()
        .and_then(|text| export::entries_in(client, text).ok())
        .unwrap_or_default();
    let mut prunable = Managed::default();
    let mut edited = Vec::new();
    for (name, print) in &managed.servers {
        if servers.iter().any(|(server, _)| server == name) {
            continue;
        }
        match current.get(name) {
            Some(entry) if export_manifest::fingerprint(entry) == *print => {
                prunable.servers.insert(name.clone(), print.clone());
            }
            Some(_) => edited.push(name.clone()),
            // Already gone from the file: nothing to remove.
            None => {}
        }
    }
    let prune: Vec<String> = if request.prune {
        prunable.servers.keys().cloned().collect()
    } else {
        Vec::new()
    };
    let planned = run_export(
        client,
        existing.as_deref(),
        &servers,
        &known,
        request.vscode_inputs,
        env_file.as_ref(),
        &prune,
    )
    .map_err(|error| export_error(&file, error))?;
    let mut fix = vec!["export", "--to", client.as_str()];
    if request.scope == ExportScope::User {
        fix.extend(["--scope", "user"]);
    }
    let env_file_argument;
    match &request.env_file {
        Some(EnvFileChoice::Default) => fix.push("--env-file"),
        Some(EnvFileChoice::Path(path)) => {
            env_file_argument = format!("--env-file={}", path.display());
            fix.push(&env_file_argument);
        }
        None => {}
    }
    if !prunable.servers.is_empty() {
        fix.push("--prune");
    }
    let trust = (!planned.servers.is_empty())
        .then(|| codex_trust_warning(ctx, client, &file))
        .flatten();
    let mut hints = Vec::new();
    let stale: Vec<String> = prunable
        .servers
        .keys()
        .filter(|name| !prune.contains(name))
        .cloned()
        .chain(edited.iter().cloned())
        .collect();
    let them = |count: usize| if count == 1 { "it" } else { "them" };
    if !request.prune && !prunable.servers.is_empty() {
        warnings.push(format!(
            "{} gone from the {} scope but still in `{}`, where mcpenv exported {} earlier",
            backticked(prunable.servers.keys()),
            request.scope.as_str(),
            file.display(),
            them(prunable.servers.len()),
        ));
        hints.push(format!(
            "remove {} with `{}`",
            them(prunable.servers.len()),
            ctx.command(&fix)
        ));
    }
    if !edited.is_empty() {
        warnings.push(format!(
            "{} gone from the {} scope, but edited in `{}` since mcpenv exported {}; not pruned",
            backticked(edited.iter()),
            request.scope.as_str(),
            file.display(),
            them(edited.len()),
        ));
        hints.push(format!(
            "delete {} from `{}` by hand if no longer needed, or add {} back to the {} scope",
            them(edited.len()),
            file.display(),
            them(edited.len()),
            request.scope.as_str()
        ));
    }
    let translation_warnings = planned.warnings.len();
    warnings.extend(planned.warnings);
    Ok(ExportPlan {
        report: ExportReport {
            client,
            file,
            servers: planned.servers,
            not_exported: planned.skipped,
            pruned: planned.pruned,
            stale,
            diff: None,
            changed: planned.changed,
            check: false,
            warnings,
            hints,
            fix: ctx.command(&fix),
            scope: request.scope,
        },
        servers,
        text: planned.text,
        known,
        vscode_inputs: request.vscode_inputs,
        env_file,
        prunable: if request.prune {
            prunable
        } else {
            Managed::default()
        },
        managed,
        existing,
        translation_warnings,
        trust,
    })
}

/// Whether `entry` has a `${VAR}` anywhere Claude Code expands one.
fn uses_variables(entry: &ServerEntry) -> bool {
    entry
        .expandable_fields()
        .iter()
        .any(|(_, value)| !expansion::references(value).is_empty())
}

/// `names` as "`a`'s" or "`a`'s and `b`'s".
fn backticked_owners(names: &[&String]) -> String {
    let owners: Vec<String> = names.iter().map(|name| format!("`{name}`'s")).collect();
    match owners.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `names` as "`a`, `b` are" (or "`a` is").
fn backticked<'a>(names: impl ExactSizeIterator<Item = &'a String>) -> String {
    let count = names.len();
    let listed: Vec<String> = names.map(|name| format!("`{name}`")).collect();
    format!(
        "{} {}",
        listed.join(", "),
        if count == 1 { "is" } else { "are" }
    )
}

/// Where `--env-file` points, as the client resolves it, and the names of
/// the variables the file holds now (never their values).
fn env_file_plan(
    ctx: &Context,
    scope: ExportScope,
    choice: &EnvFileChoice,
    warnings: &mut Vec<String>,
) -> Result<EnvFilePlan, Error> {
    let root = repository(ctx);
    let (written, on_disk) = match (scope, choice) {
        (_, EnvFileChoice::Path(path)) if path.is_absolute() => {
            (path.display().to_string(), path.clone())
        }
        // `${workspaceFolder}` is the folder the client opened: the
        // repository whose `.cursor/` or `.vscode/` holds the file.
        (ExportScope::Project, EnvFileChoice::Default) => {
            ("${workspaceFolder}/.env".to_string(), root.join(".env"))
        }
        (ExportScope::Project, EnvFileChoice::Path(path)) => (
            format!("${{workspaceFolder}}/{}", path.display()),
            root.join(path),
        ),
        (ExportScope::User, EnvFileChoice::Default) => {
            let file = ctx.user_env_file();
            (file.display().to_string(), file)
        }
        (ExportScope::User, EnvFileChoice::Path(path)) => {
            let file = ctx.locations.working_dir.join(path);
            (file.display().to_string(), file)
        }
    };
    let dotenv = crate::envfiles::dotenv::read(&on_disk).map_err(|error| {
        Error::failure_from(format!("cannot read `{}`", on_disk.display()), error)
    })?;
    if dotenv.text.is_none() {
        warnings.push(format!(
            "`{}` does not exist yet; the servers read no variables from it until it does",
            on_disk.display()
        ));
    }
    let provides: Vec<String> = dotenv
        .values()
        .into_iter()
        .map(|(name, _)| name.to_owned())
        .collect();
    Ok(EnvFilePlan { written, provides })
}

/// The report of `plan` as a check: whether the file is up to date, with
/// the diff that would bring it there.
pub fn check_export(ctx: &Context, plan: ExportPlan) -> ExportReport {
    let mut report = plan.report;
    report.check = true;
    report.warnings.extend(plan.trust);
    if report.changed {
        let change = FileChange {
            path: report.file.clone(),
            before: plan.existing,
            after: Some(plan.text),
        };
        // The file is the client's and may hold literal secrets: shown as
        // every preview is, with what the shield learns from it masked.
        report.diff = crate::ops::shown_changes::shown(ctx, &[change])
            .into_iter()
            .next()
            .map(|shown| shown.diff);
    }
    report
}

/// Writes `plan` into the client's file, redoing the export on the text
/// it locks; a file that will hold secrets is made private first. Records
/// the entries written in mcpenv's manifest.
pub fn apply_export(ctx: &Context, plan: ExportPlan) -> Result<ExportReport, Error> {
    let ExportPlan {
        mut report,
        servers,
        text,
        known,
        vscode_inputs,
        env_file,
        prunable,
        managed,
        existing: _,
        translation_warnings,
        trust,
    } = plan;
    if report.servers.is_empty() && report.pruned.is_empty() {
        report.warnings.extend(trust);
        return Ok(report);
    }
    let client = report.client;
    let file = report.file.clone();
    // Before its directory is made: `.codex` may be a link to `~/.codex`.
    crate::ops::write_steps::check_confined([&file])?;
    if let Some(parent) = file.parent() {
        ctx.edit.unshown(|| {
            fs_err::create_dir_all(parent).map_err(|error| {
                Error::failure_from(format!("cannot create `{}`", parent.display()), error)
            })
        })?;
    }
    // Resolved values are secrets mcpenv hands over; literal ones are
    // whatever `scan` flags in the servers as written.
    let literal = literal_secrets(client, &file, &text, &report.servers);
    let resolved = expands_nothing(client)
        && servers
            .iter()
            .filter(|(name, _)| report.servers.contains(name))
            .any(|(_, entry)| uses_variables(entry));
    let holds_secrets = resolved || !literal.is_empty();
    if holds_secrets {
        make_private(&ctx.edit, &file)?;
    }
    let mut exported = None;
    let changed = ctx
        .edit
        .edit_text(
            &ctx.locations.state_dir,
            &file,
            new_mode(holds_secrets),
            |old| {
                // Pruned only while still as mcpenv wrote it, in the text locked.
                let current = old
                    .and_then(|text| export::entries_in(client, text).ok())
                    .unwrap_or_default();
                let prune: Vec<String> = prunable
                    .servers
                    .iter()
                    .filter(|(name, print)| {
                        current
                            .get(name.as_str())
                            .is_some_and(|entry| export_manifest::fingerprint(entry) == **print)
                    })
                    .map(|(name, _)| name.clone())
                    .collect();
                let again = run_export(
                    client,
                    old,
                    &servers,
                    &known,
                    vscode_inputs,
                    env_file.as_ref(),
                    &prune,
                )?;
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
        record_managed(ctx, client, &file, managed, &exported)?;
        report.servers = exported.servers;
        report.not_exported = exported.skipped;
        report.pruned = exported.pruned;
        // The translation's warnings are redone on the text locked; the
        // ones before them (env file, prune) stay.
        let kept = report.warnings.len() - translation_warnings;
        report.warnings.truncate(kept);
        report.warnings.extend(exported.warnings);
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

/// Records in the manifest what mcpenv now manages in `file`: the servers
/// just written, each with the fingerprint of its entry as the file holds
/// it, plus earlier entries still there (left stale or edited by hand).
fn record_managed(
    ctx: &Context,
    client: Client,
    file: &Path,
    before: Managed,
    exported: &Exported,
) -> Result<(), Error> {
    let entries = export::entries_in(client, &exported.text).unwrap_or_default();
    let mut managed = Managed::default();
    for (name, print) in before.servers {
        if entries.contains_key(&name) && !exported.pruned.contains(&name) {
            managed.servers.insert(name, print);
        }
    }
    for name in &exported.servers {
        if let Some(entry) = entries.get(name) {
            managed
                .servers
                .insert(name.clone(), export_manifest::fingerprint(entry));
        }
    }
    export_manifest::record(&ctx.edit, &ctx.locations.state_dir, file, &managed)
}

/// The export of `servers` onto `existing`, values looked up in `known`
/// for a client that expands nothing.
fn run_export(
    client: Client,
    existing: Option<&str>,
    servers: &[(String, ServerEntry)],
    known: &Known,
    vscode_inputs: bool,
    env_file: Option<&EnvFilePlan>,
    prune: &[String],
) -> Result<Exported, export::ExportError> {
    let lookup = |name: &str| known.lookup(name);
    let options = ExportOptions {
        vscode_inputs,
        lookup: expands_nothing(client).then_some(&lookup as &dyn Fn(&str) -> Option<String>),
        prune,
        env_file: env_file.map(|plan| EnvFile {
            path: &plan.written,
            provides: &plan.provides,
        }),
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
fn make_private(edit: &Edit, file: &Path) -> Result<(), Error> {
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
    // No mode on Windows: the file is private by its access list.
    let Some(mode) = fsx::os::mode(&metadata) else {
        return Ok(());
    };
    if mode & 0o077 == 0 {
        return Ok(());
    }
    edit.make_private(file, mode, (), || {
        fsx::os::set_mode(file, mode & !0o077).map_err(|error| {
            Error::failure_from(format!("cannot make `{}` private", file.display()), error)
                .with_hint(format!(
                    "run `chmod 600 {}` and export again",
                    file.display()
                ))
        })
    })
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
