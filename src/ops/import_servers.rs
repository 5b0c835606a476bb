//! Servers from another client's file into a scope of Claude Code: its
//! placeholder syntax turned into `${VAR}`, literal secrets moved to
//! `.env` exactly as `extract` does, and every field that could not be
//! carried over reported. What `mcpenv import` does.

use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::clients::{self, Client, import};
use crate::config::model::{self, ServerEntry};
use crate::config::scope::Scope;
use crate::config::store::{self, IfExists, NewServer, Target};
use crate::envfiles::dotenv::ExampleLine;
use crate::mechanics::display::{escape as shown, shell_words};
use crate::ops::add::check_name;
use crate::ops::export_servers::{client_files, codex_trust_warning};
use crate::ops::extraction_inputs::{known_values, plan_error};
use crate::ops::write_steps::{begin_writes, save_plan_env_with};
use crate::ops::{Context, Error};
use crate::secrets::extraction_plan::{self, Candidate, ExtractionPlan, Move};

/// What to import, from where, into which scope.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    /// The client whose file is read.
    pub client: Client,
    /// That file, relative to the working directory; `None` is the
    /// client's own (its project file when there is one, else its user
    /// file).
    pub file: Option<PathBuf>,
    /// The scope written to.
    pub scope: Scope,
    /// Only these servers (every server when empty).
    pub servers: Vec<String>,
    /// `OLD=NEW`: a server imported under another name.
    pub rename: Vec<String>,
    /// Replace servers of the same name in the scope.
    pub replace: bool,
    /// Also import the servers the client has switched off.
    pub include_disabled: bool,
    /// Write into a `.env` that other users can read.
    pub force: bool,
    /// The person has read the servers of a repository file and takes
    /// them into a scope Claude Code starts without asking.
    pub trust_file: bool,
}

/// A name the scope already has, with both entries, for a front-end to
/// ask what to do about it.
#[derive(Debug)]
pub struct Clash {
    /// The name.
    pub name: String,
    /// The scope that has it.
    pub scope: Scope,
    /// The entry in the scope now.
    pub existing: Value,
    /// The entry as it would be imported (secrets as placeholders).
    pub incoming: Value,
}

/// What to do about a [`Clash`].
#[derive(Debug, Clone)]
pub enum ClashAnswer {
    /// Replace the existing entry.
    Replace,
    /// Replace it and every later clash's.
    ReplaceAll,
    /// Import under this name instead.
    Rename(String),
    /// Leave the existing entry, import nothing for it.
    Skip,
    /// Skip it and every later clash.
    SkipAll,
}

/// Asks about one clash; `None` (cancelled) stops the import.
pub type AskAboutClash<'a> = &'a mut dyn FnMut(&Clash) -> Option<ClashAnswer>;

/// Servers read from a file of the repository, about to become local or
/// user servers, which Claude Code starts without asking: a front-end
/// shows them and asks the person.
#[derive(Debug)]
pub struct RepositoryServers {
    /// The file, inside the repository.
    pub file: PathBuf,
    /// The scope they would go to.
    pub scope: Scope,
    /// Each server's name and what it runs (its command line, or its URL),
    /// as the file says: untrusted text.
    pub servers: Vec<(String, String)>,
}

/// Asks whether to import [`RepositoryServers`]; `false` stops the import.
pub type ConfirmRepository<'a> = &'a mut dyn FnMut(&RepositoryServers) -> bool;

/// The import decided; nothing written yet.
#[derive(Debug)]
pub struct ImportPlan {
    /// What the import reports.
    pub report: ImportReport,
    target: Target,
    /// The servers to write, secrets as placeholders.
    servers: Vec<(String, ServerEntry)>,
    /// The names that replace an existing entry.
    replacing: Vec<String>,
    extraction: ExtractionPlan,
    /// The lines `.env.example` gets.
    example: Vec<ExampleLine>,
    force: bool,
}

/// What `import` did (or, as a dry run, would do).
#[derive(Debug, Serialize)]
pub struct ImportReport {
    /// The client.
    pub client: Client,
    /// The file read.
    pub file: PathBuf,
    /// The scope written to.
    pub scope: Scope,
    /// The servers imported, by the name they got.
    pub servers: Vec<String>,
    /// Servers imported under another name than in the file, because
    /// Claude Code cannot take that one.
    pub renamed: Vec<Renamed>,
    /// Servers of the file that were not imported, and why.
    pub not_imported: Vec<NotImported>,
    /// Servers already in the scope exactly as they would be imported
    /// (imported before, or by a run that stopped part way): left alone.
    pub already_imported: Vec<String>,
    /// Servers whose name was taken and that the user chose to skip.
    pub skipped: Vec<String>,
    /// Literal secrets moved into `.env`.
    pub moves: Vec<Move>,
    /// What could not be carried over, per server.
    pub notes: Vec<String>,
    /// The client's file keeps the secrets moved (import never edits it).
    pub left_in_source: Option<LeftInSource>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

/// The secrets import moved into `.env` that the client's own file still
/// holds in plain text: import reads that file and never edits it.
#[derive(Debug, Serialize)]
pub struct LeftInSource {
    /// How many secrets.
    pub secrets: usize,
    /// Why they stay, or what replaces them there, as a sentence.
    pub advice: String,
}

/// A server imported under a name of mcpenv's choosing.
#[derive(Debug, Serialize)]
pub struct Renamed {
    /// The name in the client's file.
    pub from: String,
    /// The name it got.
    pub to: String,
}

/// A server left out of the import.
#[derive(Debug, Serialize)]
pub struct NotImported {
    /// Its name in the client's file.
    pub name: String,
    /// `disabled` (switched off in the client; `--include-disabled`
    /// imports it), `editor-only` (it needs a value only the editor has) or
    /// `unusable` (Claude Code would skip the entry).
    pub reason: &'static str,
    /// Why, as a sentence.
    pub message: String,
}

/// Reads the client's file and decides what to import under which names,
/// and which secrets go to `.env`; writes nothing. A name the scope
/// already has is replaced with `replace`, else asked about through
/// `ask`; without `ask`, it is an error.
pub fn plan_import(
    ctx: &Context,
    request: &ImportRequest,
    mut ask: Option<AskAboutClash<'_>>,
    confirm: Option<ConfirmRepository<'_>>,
) -> Result<ImportPlan, Error> {
    let client = request.client;
    let args = request;
    let file = match &args.file {
        Some(file) => ctx.locations.working_dir.join(file),
        None => {
            let (project, user) = client_files(ctx, client);
            project
                .filter(|file| file.is_file())
                .or(user)
                .ok_or_else(|| {
                    Error::failure(format!("{client} has no config file mcpenv knows"))
                        .with_hint("name it with `--file PATH`")
                })?
        }
    };
    let text = crate::mechanics::fsx::read_if_exists(&file)
        .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|error| {
            Error::failure_from(format!("cannot read `{}`", file.display()), error)
                .with_hint("check the path, or name the file with `--file PATH`")
        })?;
    let value = clients::parse(&file, &text).map_err(|error| {
        Error::failure(format!(
            "failed to parse `{}:{}:{}`: {}",
            file.display(),
            error.line,
            error.column,
            error.message
        ))
        .with_hint("fix the file; mcpenv reads it as that client does")
    })?;
    let renames = parse_renames(&args.rename)?;
    let project_root = ctx.locations.project_root();
    let options = import::ImportOptions {
        project_name: project_root.file_name().and_then(|name| name.to_str()),
    };
    let mut imported = import::import_with(client, &value, &options);
    if !args.servers.is_empty() {
        for name in &args.servers {
            if !imported.iter().any(|server| &server.name == name) {
                let found: Vec<String> = imported
                    .iter()
                    .map(|server| format!("`{}`", server.name))
                    .collect();
                return Err(
                    Error::failure(format!("`{}` has no server `{name}`", file.display()))
                        .with_hint(format!("its servers: {}", found.join(", "))),
                );
            }
        }
        imported.retain(|server| args.servers.contains(&server.name));
    }
    if imported.is_empty() {
        let mut error = Error::failure(format!(
            "`{}` defines no MCP servers for {}",
            file.display(),
            client.title()
        ))
        .with_hint("check that this is the right file");
        if let Some(other) = other_clients_key(client, &value) {
            error = error.with_hint(other);
        }
        return Err(error);
    }
    let mut notes = Vec::new();
    let scope = args.scope;
    let target = Target::for_scope(&ctx.locations, scope);
    let inventory = ctx.inventory()?;
    let known = known_values(ctx)?;
    // An entry as it would be stored: literal secrets as placeholders.
    let stored = |name: &str, entry: &ServerEntry| {
        let candidate = Candidate {
            target: target.clone(),
            server: name.to_string(),
            entry: entry.clone(),
            env_file: ctx.env_file_for(scope),
        };
        // A value extraction would refuse is reported by the real plan
        // below; here the entry stays as it is.
        let changes: Vec<_> = extraction_plan::plan(std::slice::from_ref(&candidate), &known)
            .map(|plan| plan.changes)
            .unwrap_or_default()
            .into_iter()
            .flat_map(|(_, changes)| changes)
            .collect();
        extraction_plan::apply_changes(name, entry, &changes).to_value()
    };
    let mut servers: Vec<(String, ServerEntry)> = Vec::new();
    let mut replacing: Vec<String> = Vec::new();
    let mut already = Vec::new();
    let mut renamed = Vec::new();
    let mut not_imported = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    // "… and every later clash": the answer given once for all.
    let mut for_every_clash: Option<ClashAnswer> = None;
    // Names already spoken for: those of the file that stay, and the new
    // names asked for; a name of mcpenv's choosing avoids them.
    let mut taken: Vec<String> = imported
        .iter()
        .map(|server| server.name.clone())
        .filter(|name| model::validate_name(name).is_ok() && !renames.contains_key(name))
        .chain(renames.values().cloned())
        .collect();
    for server in imported {
        if server.disabled && !args.include_disabled {
            not_imported.push(NotImported {
                message: format!(
                    "`{}` was not imported: it is switched off in {}",
                    shown(&server.name),
                    client.title()
                ),
                name: server.name,
                reason: "disabled",
            });
            continue;
        }
        if let Some(why) = &server.unusable {
            not_imported.push(NotImported {
                message: format!("`{}` was not imported: {why}", shown(&server.name)),
                name: server.name,
                reason: "editor-only",
            });
            continue;
        }
        let problems = ServerEntry::from_value(server.entry.clone()).problems();
        if !problems.is_empty() {
            // An entry Claude Code would skip is not worth importing.
            not_imported.push(NotImported {
                message: format!(
                    "`{}` was not imported: {}",
                    shown(&server.name),
                    problems.join("; ")
                ),
                name: server.name,
                reason: "unusable",
            });
            continue;
        }
        let name = match renames.get(&server.name) {
            Some(new) => {
                // Asked for on the command line: a usage error when invalid.
                check_name(new)?;
                new.clone()
            }
            None => match model::validate_name(&server.name) {
                Ok(()) => server.name.clone(),
                Err(error) => {
                    // The name comes from the other client's file: import
                    // it under a name Claude Code takes, and say how to
                    // pick another (a hint that pastes as it is).
                    let new = unique_name(&suggested_name(&server.name), &taken);
                    taken.push(new.clone());
                    let why = match error {
                        model::NameError::Reserved(_) => "Claude Code reserves that name",
                        model::NameError::Empty => "Claude Code needs a name",
                        model::NameError::Invalid(_) => {
                            "Claude Code takes only letters, digits, `-` and `_` in a name"
                        }
                    };
                    let other = if server.name.is_empty() {
                        String::new()
                    } else {
                        let rename =
                            shell_words(&["--rename".to_string(), format!("{}=NEW", server.name)]);
                        format!("; for another name add `{rename}` to the command")
                    };
                    notes.push(format!(
                        "`{}` imported as `{new}`: {why}{other}",
                        shown(&server.name)
                    ));
                    renamed.push(Renamed {
                        from: server.name.clone(),
                        to: new.clone(),
                    });
                    new
                }
            },
        };
        let exists = |name: &str| {
            inventory.entries.iter().any(|entry| {
                entry.name == name && entry.scope == scope && entry.file == target.path
            })
        };
        // Imported before, exactly so (or by a run that stopped part way):
        // nothing to do for it.
        let entry = ServerEntry::from_value(server.entry.clone());
        let same = inventory.entries.iter().any(|existing| {
            existing.name == name
                && existing.scope == scope
                && existing.file == target.path
                && existing.entry.to_value() == stored(&name, &entry)
        });
        if same {
            already.push(name);
            continue;
        }
        let mut name = name;
        let mut replace_this = args.replace;
        if exists(&name) && !args.replace {
            let clash = || {
                Error::failure(format!("MCP server `{name}` already exists in {scope} scope; nothing was imported"))
                    .with_hint(format!("replace it with `--replace`, or import it under another name: `--rename {}=NEW`", server.name))
            };
            let Some(ask) = ask.as_mut() else {
                return Err(clash());
            };
            let existing = inventory
                .entries
                .iter()
                .find(|existing| {
                    existing.name == name && existing.scope == scope && existing.file == target.path
                })
                .map(|existing| existing.entry.to_value())
                .unwrap_or_default();
            let choice = match for_every_clash.clone() {
                Some(choice) => choice,
                None => {
                    let question = Clash {
                        name: name.clone(),
                        scope,
                        existing,
                        incoming: stored(&name, &entry),
                    };
                    let choice = ask(&question).ok_or_else(clash)?;
                    if let ClashAnswer::ReplaceAll | ClashAnswer::SkipAll = choice {
                        for_every_clash = Some(choice.clone());
                    }
                    choice
                }
            };
            match choice {
                ClashAnswer::Replace | ClashAnswer::ReplaceAll => replace_this = true,
                ClashAnswer::Skip | ClashAnswer::SkipAll => {
                    notes.push(format!(
                        "`{name}` skipped: it already exists in {scope} scope"
                    ));
                    skipped.push(name);
                    continue;
                }
                ClashAnswer::Rename(new) => {
                    check_name(&new)?;
                    if exists(&new) {
                        return Err(Error::failure(format!(
                            "MCP server `{new}` also exists in {scope} scope; nothing was imported"
                        )));
                    }
                    name = new;
                }
            }
        }
        if replace_this {
            replacing.push(name.clone());
        }
        notes.extend(server.notes.iter().map(|note| format!("`{name}`: {note}")));
        servers.push((name, entry));
    }
    let disabled: Vec<String> = not_imported
        .iter()
        .filter(|skipped| skipped.reason == "disabled")
        .map(|skipped| format!("`{}`", shown(&skipped.name)))
        .collect();
    let include_disabled = match disabled.len() {
        0 => None,
        1 => Some("add `--include-disabled` to import it anyway".to_string()),
        _ => Some("add `--include-disabled` to import them anyway".to_string()),
    };
    if servers.is_empty() && already.is_empty() && skipped.is_empty() {
        // Nothing the file holds can go into Claude Code: a failure, with
        // every reason.
        let mut error = Error::failure(format!(
            "nothing could be imported from `{}`",
            file.display()
        ));
        for skipped in not_imported
            .iter()
            .filter(|skipped| skipped.reason != "disabled")
        {
            error = error.with_hint(skipped.message.clone());
        }
        if let Some(include) = include_disabled {
            error = error.with_hint(format!(
                "{} {} switched off in {}: {include}",
                disabled.join(", "),
                if disabled.len() == 1 { "is" } else { "are" },
                client.title()
            ));
        }
        return Err(error);
    }
    let mut skipped_notes: Vec<String> = not_imported
        .iter()
        .filter(|skipped| skipped.reason != "disabled")
        .map(|skipped| skipped.message.clone())
        .collect();
    if let Some(include) = include_disabled {
        skipped_notes.push(format!(
            "{} not imported: switched off in {} ({include})",
            disabled.join(", "),
            client.title()
        ));
    }
    notes.splice(0..0, skipped_notes);
    // Read all the same: the servers are meant for Claude Code now.
    notes.extend(codex_trust_warning(ctx, client, &file));
    // Literal secrets go to `.env` first, exactly as `extract` moves them.
    let candidates: Vec<Candidate> = servers
        .iter()
        .map(|(name, entry)| Candidate {
            target: target.clone(),
            server: name.clone(),
            entry: entry.clone(),
            env_file: ctx.env_file_for(scope),
        })
        .collect();
    let plan = extraction_plan::plan(&candidates, &known).map_err(plan_error)?;
    let changes: Vec<_> = plan
        .changes
        .iter()
        .flat_map(|(_, changes)| changes.iter().cloned())
        .collect();
    let servers: Vec<(String, ServerEntry)> = servers
        .into_iter()
        .map(|(name, entry)| {
            let placeholders = extraction_plan::apply_changes(&name, &entry, &changes);
            (name, placeholders)
        })
        .collect();
    let mut example = if scope == Scope::Project {
        extraction_plan::example_variables(
            servers.iter().map(|(name, entry)| (name.as_str(), entry)),
            &crate::templates::all(&ctx.template_dirs).0,
        )
    } else {
        Vec::new()
    };
    // `${HOME}` (from an editor's `${userHome}`) is nothing to set.
    example.retain(|line| !import::is_process_variable(&line.name));
    gate_repository_servers(ctx, request, &file, &servers, confirm)?;
    let left_in_source = left_in_source(ctx, client, &file, scope, &plan.moves);
    let report = ImportReport {
        client,
        file,
        scope,
        servers: servers.iter().map(|(name, _)| name.clone()).collect(),
        renamed,
        not_imported,
        already_imported: already,
        skipped,
        moves: plan.moves.clone(),
        notes,
        left_in_source,
        dry_run: false,
        written: Vec::new(),
    };
    Ok(ImportPlan {
        report,
        target,
        servers,
        replacing,
        extraction: plan,
        example,
        force: args.force,
    })
}

/// Writes `plan`: the dotenv files first, then the servers into the
/// scope's file.
pub fn apply_import(ctx: &Context, plan: ImportPlan) -> Result<ImportReport, Error> {
    let ImportPlan {
        mut report,
        target,
        servers,
        replacing,
        extraction,
        example,
        force,
    } = plan;
    store::preflight(&target)?;
    let saves_env = !extraction.new_variables.is_empty() || !example.is_empty();
    let env = saves_env.then_some((&extraction, example.as_slice()));
    let mut progress = begin_writes(ctx, env, &[&target.path])?;
    if servers.is_empty() {
        return Ok(report);
    }
    if saves_env {
        save_plan_env_with(ctx, &extraction, &example, force, &mut progress)?;
    }
    let values: Vec<Value> = servers.iter().map(|(_, entry)| entry.to_value()).collect();
    let new_servers: Vec<NewServer<'_>> = servers
        .iter()
        .zip(&values)
        .map(|((name, _), entry)| NewServer {
            name,
            entry,
            if_exists: if replacing.contains(name) {
                IfExists::Replace
            } else {
                IfExists::KeepSame
            },
        })
        .collect();
    let written = store::add_servers(&ctx.locations, &ctx.edit, &target, &new_servers)
        .map_err(|error| Error::from(error).interrupted(&progress))?;
    progress.record(&written.path, written.changed);
    report.written = progress.into_written();
    Ok(report)
}

/// What to say of the secrets `moves` took out of the imported servers
/// that `file`, the client's, still holds; `None` when none were moved.
fn left_in_source(
    ctx: &Context,
    client: Client,
    file: &std::path::Path,
    scope: Scope,
    moves: &[Move],
) -> Option<LeftInSource> {
    if moves.is_empty() {
        return None;
    }
    let (project_file, user_file) = client_files(ctx, client);
    // `export` writes the scope's servers into the client's file of the
    // same level, so it replaces these literals only when the import went
    // project file → project scope or user file → user scope.
    let export_scope = match scope {
        Scope::Project if project_file.as_deref() == Some(file) => Some("project"),
        Scope::User if user_file.as_deref() == Some(file) => Some("user"),
        _ => None,
    };
    let them = if moves.len() == 1 { "it" } else { "them" };
    let placeholders = if moves.len() == 1 {
        format!("a {} placeholder", client.title())
    } else {
        format!("{} placeholders", client.title())
    };
    let advice = if matches!(client, Client::Zed | Client::ClaudeDesktop) {
        format!(
            "{} expands no placeholders, so it keeps its own copy there",
            client.title()
        )
    } else if let Some(export_scope) = export_scope {
        let mut export = vec!["export", "--to", client.as_str()];
        if export_scope == "user" {
            export.extend(["--scope", "user"]);
        }
        // The value now lives in a dotenv file: a client that reads one
        // itself gets it from there.
        let reads_env_file = crate::clients::export::supports_env_file(client);
        if reads_env_file {
            export.push("--env-file");
        }
        let instead = if reads_env_file {
            format!("an `envFile` that {} reads {them} from", client.title())
        } else {
            placeholders
        };
        format!(
            "`{}` replaces {them} there with {instead}",
            ctx.command(&export)
        )
    } else {
        format!("replace {them} there with {placeholders}, or delete {them}")
    };
    Some(LeftInSource {
        secrets: moves.len(),
        advice,
    })
}

/// A hint when a file has its servers under another client's key (a VS
/// Code `servers` in a Cursor file): that client does not read them.
fn other_clients_key(client: Client, value: &Value) -> Option<String> {
    let others = [
        (Client::Cursor, "mcpServers"),
        (Client::Vscode, "servers"),
        (Client::Zed, "context_servers"),
        (Client::Codex, "mcp_servers"),
    ];
    others.into_iter().find_map(|(other, key)| {
        let servers = value.get(key)?.as_object()?;
        (key != client.servers_key() && !servers.is_empty()).then(|| {
            format!(
                "its servers are under `{key}`, where {} reads them; {} reads `{}`",
                if other == Client::Cursor {
                    "Cursor and most other clients".to_string()
                } else {
                    other.title().to_string()
                },
                client.title(),
                client.servers_key()
            )
        })
    })
}

/// `name`, or `name-2`, `name-3`, … when `taken` has it.
fn unique_name(name: &str, taken: &[String]) -> String {
    if !taken.iter().any(|other| other == name) {
        return name.to_string();
    }
    (2..)
        .map(|n| format!("{name}-{n}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_string())
}

/// `OLD=NEW` pairs of `--rename`.
fn parse_renames(pairs: &[String]) -> Result<IndexMap<String, String>, Error> {
    let mut renames = IndexMap::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((old, new)) if !old.is_empty() && !new.is_empty() => {
                renames.insert(old.to_string(), new.to_string());
            }
            _ => {
                return Err(
                    Error::usage(format!("invalid `--rename {pair}`: expected OLD=NEW"))
                        .with_hint("for example `--rename github=github-cursor`"),
                );
            }
        }
    }
    Ok(renames)
}

/// A valid server name close to `name`: a registry id's last part
/// (`io.github.x/chrome-devtools-mcp` → `chrome-devtools-mcp`), with every
/// other character Claude Code does not take turned into `-`.
fn suggested_name(name: &str) -> String {
    let last = name
        .rsplit('/')
        .find(|part| !part.is_empty())
        .unwrap_or(name);
    let mut suggestion = String::new();
    for c in last.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            suggestion.push(c);
        } else if !suggestion.ends_with('-') {
            suggestion.push('-');
        }
    }
    let suggestion = suggestion.trim_matches('-').to_string();
    match model::validate_name(&suggestion) {
        Ok(()) => suggestion,
        Err(model::NameError::Reserved(_)) => format!("{suggestion}-server"),
        Err(_) => "imported-server".to_string(),
    }
}

/// A file inside the repository (`.cursor/mcp.json`, `.vscode/mcp.json`,
/// any `--file` under the project) holds the repository's servers, chosen
/// by whoever committed them. In the project scope Claude Code asks each
/// person before starting them; in the local and user scopes it does not.
/// So those imports go ahead only when the person agreed: `trust_file`, or
/// yes to `confirm` after seeing every command.
fn gate_repository_servers(
    ctx: &Context,
    request: &ImportRequest,
    file: &std::path::Path,
    servers: &[(String, ServerEntry)],
    confirm: Option<ConfirmRepository<'_>>,
) -> Result<(), Error> {
    if request.scope == Scope::Project || request.trust_file || servers.is_empty() {
        return Ok(());
    }
    let root = ctx
        .locations
        .git_root
        .clone()
        .unwrap_or_else(|| ctx.locations.project_root());
    let real =
        |path: &std::path::Path| dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if !real(file).starts_with(real(&root)) {
        return Ok(());
    }
    let servers: Vec<(String, String)> = servers
        .iter()
        .map(|(name, entry)| {
            let runs = match entry.url() {
                Some(url) => url.to_string(),
                None => {
                    let mut words = vec![entry.command().unwrap_or_default().to_string()];
                    words.extend(entry.args().into_iter().map(str::to_string));
                    shell_words(&words)
                }
            };
            (name.clone(), runs)
        })
        .collect();
    let repository = RepositoryServers {
        file: file.to_path_buf(),
        scope: request.scope,
        servers,
    };
    if let Some(confirm) = confirm
        && confirm(&repository)
    {
        return Ok(());
    }
    let shown_file = file.strip_prefix(ctx.locations.project_root()).map_or_else(
        |_| ctx.locations.display(file),
        |rest| rest.display().to_string(),
    );
    let flag_command = |extra: &[&str]| {
        let mut words = vec!["import", "--from", request.client.as_str()];
        if let Some(given) = request.file.as_ref().and_then(|file| file.to_str()) {
            words.extend(["--file", given]);
        }
        words.extend_from_slice(extra);
        ctx.command(&words)
    };
    Err(Error::failure(format!(
        "`{}` is a file of this repository: its servers would become {} servers, which Claude Code starts without asking",
        shown(&shown_file),
        request.scope
    ))
    .with_hint(format!(
        "import them into the project scope, where Claude Code asks before starting each: `{}`",
        flag_command(&["--scope", "project"])
    ))
    .with_hint(format!(
        "or, once you have read every command in it and trust them: `{}`",
        flag_command(&["--scope", request.scope.as_str(), "--trust-file"])
    )))
}
