//! `mcpenv import --from CLIENT`: servers from another client's file, its
//! placeholder syntax turned into `${VAR}`, literal secrets moved to `.env`
//! exactly as `extract` does, and every field that could not be carried
//! over reported.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;

use crate::cli::args::ImportArgs;
use crate::cli::commands::add::check_name;
use crate::cli::commands::export::client_of;
use crate::cli::commands::shown_env_files;
use crate::cli::error::CliError;
use crate::cli::render::{Report, shown, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::clients::{self, Client, import};
use crate::extract::{self, Candidate, Move};
use crate::model::{self, ServerEntry};
use crate::ops::export_servers::{client_files, codex_trust_warning};
use crate::ops::extraction::{known_values, plan_error};
use crate::ops::writes::{begin_writes, save_plan_env_with};
use crate::scope::Scope;
use crate::store::{self, IfExists, NewServer, Target};
use serde_json::Value;

/// What `import` did (or, with `--dry-run`, would do).
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
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    #[serde(skip)]
    env_files_shown: Vec<String>,
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

impl Report for ImportReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.notes {
            warning(err, note)?;
        }
        crate::cli::commands::write_moves(err, &self.moves, &self.env_files_shown, self.dry_run)?;
        let names: Vec<String> = self
            .servers
            .iter()
            .map(|name| format!("`{}`", crate::display::escape(name)))
            .collect();
        let verb = if self.dry_run {
            "Would import"
        } else {
            "Imported"
        };
        if !self.already_imported.is_empty() {
            let already: Vec<String> = self
                .already_imported
                .iter()
                .map(|name| format!("`{name}`"))
                .collect();
            writeln!(
                err,
                "Already in {} scope as imported: {}",
                self.scope,
                already.join(", ")
            )?;
        }
        if self.servers.is_empty() && !self.skipped.is_empty() {
            writeln!(
                err,
                "Imported nothing from {} (`{}`): you skipped {}",
                self.client,
                self.file.display(),
                if self.skipped.len() == 1 {
                    "the one server whose name is taken"
                } else {
                    "every server whose name is taken"
                }
            )?;
        } else if self.servers.is_empty() {
            writeln!(
                err,
                "Nothing to import from {} (`{}`)",
                self.client,
                self.file.display()
            )?;
        } else {
            writeln!(
                err,
                "{verb} {} from {} (`{}`) into {} scope: {}",
                plural(self.servers.len()),
                self.client,
                self.file.display(),
                self.scope,
                names.join(", ")
            )?;
        }
        for file in &self.written {
            writeln!(err, "Wrote `{}`", file.display())?;
        }
        Ok(())
    }
}

/// `1 server`, `2 servers`.
pub fn plural(count: usize) -> String {
    if count == 1 {
        "1 server".to_string()
    } else {
        format!("{count} servers")
    }
}

/// Runs `mcpenv import`.
pub fn run(ctx: &Ctx, args: &ImportArgs) -> Result<ImportReport, CliError> {
    let client = client_of(args.from);
    // The flags but `--from`, which `add-from-claude-desktop` shares.
    let args = &args.options;
    let file = match &args.file {
        Some(file) => ctx.locations.working_dir.join(file),
        None => {
            let (project, user) = client_files(ctx, client);
            project
                .filter(|file| file.is_file())
                .or(user)
                .ok_or_else(|| {
                    CliError::failure(format!("{client} has no config file mcpenv knows"))
                        .with_hint("name it with `--file PATH`")
                })?
        }
    };
    let text = crate::fsx::read_if_exists(&file)
        .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|error| {
            CliError::failure_from(format!("cannot read `{}`", file.display()), error)
                .with_hint("check the path, or name the file with `--file PATH`")
        })?;
    let value = clients::parse(&file, &text).map_err(|error| {
        CliError::failure(format!(
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
                return Err(CliError::failure(format!(
                    "`{}` has no server `{name}`",
                    file.display()
                ))
                .with_hint(format!("its servers: {}", found.join(", "))));
            }
        }
        imported.retain(|server| args.servers.contains(&server.name));
    }
    if imported.is_empty() {
        let mut error = CliError::failure(format!(
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
    let scope = Scope::from(args.scope);
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
        let changes: Vec<_> = extract::plan(std::slice::from_ref(&candidate), &known)
            .map(|plan| plan.changes)
            .unwrap_or_default()
            .into_iter()
            .flat_map(|(_, changes)| changes)
            .collect();
        extract::apply_changes(name, entry, &changes).to_value()
    };
    let mut servers: Vec<(String, ServerEntry)> = Vec::new();
    let mut replacing: Vec<String> = Vec::new();
    let mut already = Vec::new();
    let mut renamed = Vec::new();
    let mut not_imported = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    // "… and every later clash": the answer given once for all.
    let mut for_every_clash: Option<Clash> = None;
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
                CliError::failure(format!("MCP server `{name}` already exists in {scope} scope; nothing was imported"))
                    .with_hint(format!("replace it with `--replace`, or import it under another name: `--rename {}=NEW`", server.name))
            };
            if args.dry_run
                || args.json
                || !(io::stdin().is_terminal() && io::stderr().is_terminal())
            {
                return Err(clash());
            }
            let existing = inventory
                .entries
                .iter()
                .find(|existing| {
                    existing.name == name && existing.scope == scope && existing.file == target.path
                })
                .map(|existing| existing.entry.to_value())
                .unwrap_or_default();
            let incoming = stored(&name, &entry);
            let choice = match for_every_clash.clone() {
                Some(choice) => choice,
                None => {
                    show_clash(ctx, &name, scope, &existing, &incoming);
                    let choice = ask_about_clash(&name, scope).map_err(|_| clash())?;
                    if let Clash::ReplaceAll | Clash::SkipAll = choice {
                        for_every_clash = Some(choice.clone());
                    }
                    choice
                }
            };
            match choice {
                Clash::Replace | Clash::ReplaceAll => replace_this = true,
                Clash::Skip | Clash::SkipAll => {
                    notes.push(format!(
                        "`{name}` skipped: it already exists in {scope} scope"
                    ));
                    skipped.push(name);
                    continue;
                }
                Clash::Rename(new) => {
                    check_name(&new)?;
                    if exists(&new) {
                        return Err(CliError::failure(format!(
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
        let mut error = CliError::failure(format!(
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
    let plan = extract::plan(&candidates, &known).map_err(plan_error)?;
    let changes: Vec<_> = plan
        .changes
        .iter()
        .flat_map(|(_, changes)| changes.iter().cloned())
        .collect();
    let servers: Vec<(String, ServerEntry)> = servers
        .into_iter()
        .map(|(name, entry)| {
            let placeholders = extract::apply_changes(&name, &entry, &changes);
            (name, placeholders)
        })
        .collect();
    let mut report = ImportReport {
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
        dry_run: args.dry_run,
        written: Vec::new(),
        env_files_shown: shown_env_files(ctx, &plan.moves),
    };
    if args.dry_run {
        return Ok(report);
    }
    let mut example = if scope == Scope::Project {
        extract::example_variables(
            servers.iter().map(|(name, entry)| (name.as_str(), entry)),
            &crate::templates::all(&ctx.template_dirs).0,
        )
    } else {
        Vec::new()
    };
    // `${HOME}` (from an editor's `${userHome}`) is nothing to set.
    example.retain(|line| !import::is_process_variable(&line.name));
    store::preflight(&target)?;
    let saves_env = !plan.new_variables.is_empty() || !example.is_empty();
    let env = saves_env.then_some((&plan, example.as_slice()));
    let mut progress = begin_writes(ctx, env, &[&target.path]);
    if servers.is_empty() {
        return Ok(report);
    }
    if saves_env {
        save_plan_env_with(ctx, &plan, &example, args.force, &mut progress)?;
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
    let written = store::add_servers(&ctx.locations, &target, &new_servers)
        .map_err(|error| CliError::from(error).interrupted(&progress))?;
    progress.record(&written.path, written.changed);
    report.written = progress.into_written();
    Ok(report)
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

/// What to do about a name that is taken.
#[derive(Debug, Clone)]
enum Clash {
    Replace,
    ReplaceAll,
    Rename(String),
    Skip,
    SkipAll,
}

/// Shows how the entry in the file differs from the one being imported
/// (through the shield: either may hold a literal secret).
fn show_clash(ctx: &Ctx, name: &str, scope: Scope, existing: &Value, incoming: &Value) {
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    ctx.shield.learn(|redactor| {
        redactor.learn_entry(&ServerEntry::from_value(existing.clone()));
        redactor.learn_entry(&ServerEntry::from_value(incoming.clone()));
    });
    let diff = crate::diff::unified(
        &pretty(existing),
        &pretty(incoming),
        &format!("{name} ({scope} scope, now)"),
        &format!("{name} (imported)"),
    );
    let _ = crate::cli::output::write(
        &ctx.shield,
        crate::cli::output::Stream::Stderr,
        false,
        |err| {
            if diff.is_empty() {
                writeln!(
                    err,
                    "`{}` in {scope} scope differs only in how it is written",
                    shown(name)
                )
            } else {
                diff.lines()
                    .try_for_each(|line| writeln!(err, "{}", shown(line)))
            }
        },
    );
}

/// Asks on the terminal what to do about `name`; an error (Ctrl-C, end of
/// input, cancel) means stop without writing anything.
fn ask_about_clash(name: &str, scope: Scope) -> Result<Clash, dialoguer::Error> {
    let choices = [
        "Replace it",
        "Replace it and every other server that clashes",
        "Import under another name",
        "Skip it",
        "Skip it and every other server that clashes",
        "Cancel the import",
    ];
    let choice = dialoguer::Select::new()
        .with_prompt(format!(
            "MCP server `{}` already exists in {scope} scope",
            shown(name)
        ))
        .items(choices)
        .default(5)
        .interact()?;
    Ok(match choice {
        0 => Clash::Replace,
        1 => Clash::ReplaceAll,
        2 => Clash::Rename(
            dialoguer::Input::<String>::new()
                .with_prompt("New name")
                .interact_text()?,
        ),
        3 => Clash::Skip,
        4 => Clash::SkipAll,
        _ => {
            return Err(dialoguer::Error::IO(io::Error::new(
                io::ErrorKind::Interrupted,
                "cancelled",
            )));
        }
    })
}

/// `OLD=NEW` pairs of `--rename`.
fn parse_renames(pairs: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut renames = IndexMap::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((old, new)) if !old.is_empty() && !new.is_empty() => {
                renames.insert(old.to_string(), new.to_string());
            }
            _ => {
                return Err(CliError::usage(format!(
                    "invalid `--rename {pair}`: expected OLD=NEW"
                ))
                .with_hint("for example `--rename github=github-cursor`"));
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
