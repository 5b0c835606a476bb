//! `mcpenv export --to CLIENT`: the servers of a scope, written into that
//! client's own file for the same scope, in its own placeholder syntax.
//! Clients that expand nothing (Zed, Claude Desktop) get resolved values,
//! and only in user-level files outside the repository.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::args::{ClientArg, ExportArgs, ExportScope};
use crate::cli::commands::import::plural;
use crate::cli::error::CliError;
use crate::cli::render::{Report, warning};
use crate::cli::resolve::Ctx;
use crate::clients::export::{self, ExportOptions};
use crate::clients::{self, Client, CodexTrust};
use crate::fsx::{self, NewMode, TextEditError};
use crate::model::ServerEntry;
use crate::ops::extraction::known_values;
use crate::placeholder;
use crate::scope::Scope;

/// What `export` did (or, with `--check`, found).
#[derive(Debug, Serialize)]
pub struct ExportReport {
    /// The client.
    pub client: Client,
    /// Its file.
    pub file: PathBuf,
    /// The servers written (or, with `--check`, that would be written).
    pub servers: Vec<String>,
    /// The servers of the scope that the client cannot take (each has a
    /// warning).
    pub not_exported: Vec<String>,
    /// Whether the file changed (or, with `--check`, would change).
    pub changed: bool,
    /// Whether this was `--check`.
    pub check: bool,
    /// What could not be carried over exactly.
    pub warnings: Vec<String>,
    /// What to do about the warnings.
    pub hints: Vec<String>,
    /// The command that brings the file up to date.
    #[serde(skip)]
    fix: String,
    /// The scope exported, for messages.
    #[serde(skip)]
    scope: &'static str,
}

impl Report for ExportReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for message in &self.warnings {
            warning(err, message)?;
        }
        for hint in &self.hints {
            writeln!(err, "hint: {hint}")?;
        }
        let file = self.file.display();
        let servers = plural(self.servers.len());
        if self.servers.is_empty() {
            let why = if self.not_exported.is_empty() {
                format!("the {} scope has no servers", self.scope)
            } else {
                match self.not_exported.len() {
                    1 => format!(
                        "its one server cannot be written for {}",
                        self.client.title()
                    ),
                    count => format!(
                        "none of its {count} servers can be written for {}",
                        self.client.title()
                    ),
                }
            };
            return if self.check {
                writeln!(err, "`{file}` is in sync (nothing to export: {why})")
            } else {
                writeln!(
                    err,
                    "Nothing to export to {}: {why}; `{file}` left as it was",
                    self.client
                )
            };
        }
        match (self.check, self.changed) {
            (true, true) => writeln!(
                err,
                "`{file}` is out of date with the {servers}; run `{}`",
                self.fix
            ),
            (true, false) => writeln!(err, "`{file}` is in sync ({servers})"),
            (false, true) => writeln!(err, "Exported {servers} to {}\nWrote `{file}`", self.client),
            (false, false) => writeln!(
                err,
                "`{file}` already holds {}; nothing to write",
                if self.servers.len() == 1 {
                    "this server".to_string()
                } else {
                    format!("these {servers}")
                }
            ),
        }
    }

    fn failed(&self) -> bool {
        self.check && self.changed
    }
}

/// The mcpenv client for a command-line client name.
pub fn client_of(argument: ClientArg) -> Client {
    match argument {
        ClientArg::ClaudeDesktop => Client::ClaudeDesktop,
        ClientArg::Cursor => Client::Cursor,
        ClientArg::Vscode => Client::Vscode,
        ClientArg::Windsurf => Client::Windsurf,
        ClientArg::Gemini => Client::Gemini,
        ClientArg::Codex => Client::Codex,
        ClientArg::Zed => Client::Zed,
    }
}

/// A client's project-level and user-level files.
pub fn client_files(ctx: &Ctx, client: Client) -> (Option<PathBuf>, Option<PathBuf>) {
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

fn repository(ctx: &Ctx) -> PathBuf {
    ctx.locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.working_dir.clone())
}

/// For Codex's project file: a sentence saying that Codex ignores it, when
/// its user config does not record the project as trusted.
pub fn codex_trust_warning(ctx: &Ctx, client: Client, file: &Path) -> Option<String> {
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

/// Runs `mcpenv export`.
pub fn run(ctx: &Ctx, args: &ExportArgs) -> Result<ExportReport, CliError> {
    let client = client_of(args.to);
    let expands_nothing = matches!(client, Client::Zed | Client::ClaudeDesktop);
    let (project_file, user_file) = client_files(ctx, client);
    let file = match args.scope {
        ExportScope::Project if expands_nothing => {
            return Err(CliError::usage(format!(
                "{client} expands no placeholders, so its file would hold the secrets themselves; mcpenv never writes those into the repository"
            ))
            .with_hint(format!("export to its user file instead: `{}`", ctx.command(&["export", "--to", client.as_str(), "--scope", "user"]))));
        }
        ExportScope::Project => project_file.ok_or_else(|| {
            CliError::usage(format!("{client} has no project-level config file")).with_hint(
                format!(
                    "export to its user file: `{}`",
                    ctx.command(&["export", "--to", client.as_str(), "--scope", "user"])
                ),
            )
        })?,
        ExportScope::User => user_file.ok_or_else(|| {
            CliError::usage(format!(
                "{client} has no user-level config file mcpenv knows"
            ))
        })?,
    };
    if expands_nothing && file.starts_with(repository(ctx)) {
        return Err(CliError::failure(format!("`{}` is inside the repository; mcpenv does not write resolved secrets there", file.display()))
            .with_hint("move the project out of your home folder's config, or use a client that expands placeholders"));
    }
    let servers = servers_of(ctx, args.scope)?;
    let known = known_values(ctx)?;
    let lookup = |name: &str| known.lookup(name);
    let options = ExportOptions {
        vscode_inputs: args.vscode_inputs,
        lookup: expands_nothing.then_some(&lookup as &dyn Fn(&str) -> Option<String>),
    };
    let existing = fsx::read_if_exists(&file).map_err(|error| {
        CliError::failure_from(format!("cannot read `{}`", file.display()), error)
    })?;
    let export_error = |error: export::ExportError| {
        CliError::failure_from(format!("cannot export to `{}`", file.display()), error)
            .with_hint("fix the file by hand, or set the variables it names; nothing was written")
    };
    // The plan: which servers the client can take, and whether the file
    // would change. The write below redoes it on the text it locks.
    let planned =
        export::export(client, existing.as_deref(), &servers, &options).map_err(export_error)?;
    let mut fix = vec!["export", "--to", client.as_str()];
    if args.scope == ExportScope::User {
        fix.extend(["--scope", "user"]);
    }
    let mut report = ExportReport {
        client,
        file: file.clone(),
        servers: planned.servers,
        not_exported: planned.skipped,
        changed: planned.changed,
        check: args.check,
        warnings: planned.warnings,
        hints: Vec::new(),
        fix: ctx.command(&fix),
        scope: match args.scope {
            ExportScope::Project => "project",
            ExportScope::User => "user",
        },
    };
    let trust = (!report.servers.is_empty())
        .then(|| codex_trust_warning(ctx, client, &file))
        .flatten();
    if args.check || report.servers.is_empty() {
        report.warnings.extend(trust);
        return Ok(report);
    }
    if let Some(parent) = file.parent() {
        fs_err::create_dir_all(parent).map_err(|error| {
            CliError::failure_from(format!("cannot create `{}`", parent.display()), error)
        })?;
    }
    // Resolved values are secrets mcpenv hands over; literal ones are
    // whatever `scan` flags in the servers as written.
    let literal = literal_secrets(client, &file, &planned.text, &report.servers);
    let resolved = expands_nothing
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
            let again = export::export(client, old, &servers, &options)?;
            let text = again.changed.then(|| again.text.clone());
            exported = Some(again);
            Ok(text)
        },
    )
    .map_err(|error| match error {
        TextEditError::Change(error) => export_error(error),
        TextEditError::Read(source) | TextEditError::Write(source) => {
            CliError::failure_from(format!("cannot write `{}`", file.display()), source)
        }
        TextEditError::Locked(_) | TextEditError::Contended => {
            CliError::failure(format!("`{}` is busy; try again", file.display()))
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
            report.scope
        ));
        let extract = match args.scope {
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
fn make_private(file: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = match std::fs::metadata(file) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(CliError::failure_from(
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
            CliError::failure_from(format!("cannot make `{}` private", file.display()), error)
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
fn servers_of(ctx: &Ctx, scope: ExportScope) -> Result<Vec<(String, ServerEntry)>, CliError> {
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
