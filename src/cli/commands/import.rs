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
use crate::cli::commands::export::{client_files, client_of};
use crate::cli::commands::extract::known_values;
use crate::cli::commands::{begin_writes, save_project_env_with};
use crate::cli::error::CliError;
use crate::cli::render::{Report, shown, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::clients::{self, Client, import};
use crate::extract::{self, Candidate, Move};
use crate::model::{self, ServerEntry};
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
    /// Servers already in the scope exactly as they would be imported
    /// (imported before, or by a run that stopped part way): left alone.
    pub already_imported: Vec<String>,
    /// Literal secrets moved into `.env`.
    pub moves: Vec<Move>,
    /// What could not be carried over, per server.
    pub notes: Vec<String>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

impl Report for ImportReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.notes {
            warning(err, note)?;
        }
        crate::cli::commands::write_moves(err, &self.moves)?;
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
        if self.servers.is_empty() {
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

fn plural(count: usize) -> String {
    if count == 1 {
        "1 server".to_string()
    } else {
        format!("{count} servers")
    }
}

/// Runs `mcpenv import`.
pub fn run(ctx: &Ctx, args: &ImportArgs) -> Result<ImportReport, CliError> {
    let client = client_of(args.from);
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
    let mut imported = import::import(client, &value);
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
        return Err(
            CliError::failure(format!("`{}` defines no MCP servers", file.display()))
                .with_hint("check that this is the right file"),
        );
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
        };
        let plan = extract::plan(std::slice::from_ref(&candidate), &known);
        let changes: Vec<_> = plan
            .changes
            .into_iter()
            .flat_map(|(_, changes)| changes)
            .collect();
        extract::apply_changes(name, entry, &changes).to_value()
    };
    let mut servers: Vec<(String, ServerEntry)> = Vec::new();
    let mut replacing: Vec<String> = Vec::new();
    let mut already = Vec::new();
    for server in imported {
        let problems = ServerEntry::from_value(server.entry.clone()).problems();
        if !problems.is_empty() {
            // An entry Claude Code would skip is not worth importing.
            notes.push(format!(
                "`{}` was not imported: {}",
                server.name,
                problems.join("; ")
            ));
            continue;
        }
        let name = renames
            .get(&server.name)
            .cloned()
            .unwrap_or(server.name.clone());
        if let Err(error) = model::validate_name(&name) {
            // The name comes from the other client's file, not from the
            // arguments: a failure of the world (exit 1), and a hint that
            // can be pasted as it is, whatever the name holds.
            let rename = shell_words(&[
                "--rename".to_string(),
                format!("{}={}", server.name, suggested_name(&server.name)),
            ]);
            return Err(CliError::failure(format!(
                "cannot import `{}`: {error}",
                shown(&server.name)
            ))
            .with_hint(format!(
                "import it under another name: add `{rename}` to the command"
            )));
        }
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
            match ask_about_clash(&name, scope).map_err(|_| clash())? {
                Clash::Replace => replace_this = true,
                Clash::Skip => {
                    notes.push(format!(
                        "`{name}` skipped: it already exists in {scope} scope"
                    ));
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
    // Literal secrets go to `.env` first, exactly as `extract` moves them.
    let candidates: Vec<Candidate> = servers
        .iter()
        .map(|(name, entry)| Candidate {
            target: target.clone(),
            server: name.clone(),
            entry: entry.clone(),
        })
        .collect();
    let plan = extract::plan(&candidates, &known);
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
        already_imported: already,
        moves: plan.moves.clone(),
        notes,
        dry_run: args.dry_run,
        written: Vec::new(),
    };
    if args.dry_run {
        return Ok(report);
    }
    let example = if scope == Scope::Project {
        extract::example_variables(servers.iter().map(|(name, entry)| (name.as_str(), entry)))
    } else {
        Vec::new()
    };
    store::preflight(&target)?;
    let saves_env = !plan.new_variables.is_empty() || !example.is_empty();
    let env = saves_env.then_some((plan.new_variables.as_slice(), example.as_slice()));
    let mut progress = begin_writes(ctx, env, &[&target.path]);
    if servers.is_empty() {
        return Ok(report);
    }
    if saves_env {
        save_project_env_with(
            ctx,
            &plan.new_variables,
            &example,
            args.force,
            &mut progress,
        )?;
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

/// What to do about a name that is taken.
enum Clash {
    Replace,
    Rename(String),
    Skip,
}

/// Asks on the terminal what to do about `name`; an error (Ctrl-C, end of
/// input, cancel) means stop without writing anything.
fn ask_about_clash(name: &str, scope: Scope) -> Result<Clash, dialoguer::Error> {
    let choices = [
        "Replace it",
        "Import under another name",
        "Skip it",
        "Cancel the import",
    ];
    let choice = dialoguer::Select::new()
        .with_prompt(format!(
            "MCP server `{name}` already exists in {scope} scope"
        ))
        .items(choices)
        .default(3)
        .interact()?;
    Ok(match choice {
        0 => Clash::Replace,
        1 => Clash::Rename(
            dialoguer::Input::<String>::new()
                .with_prompt("New name")
                .interact_text()?,
        ),
        2 => Clash::Skip,
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
    if suggestion.is_empty() || model::validate_name(&suggestion).is_err() {
        "imported-server".to_string()
    } else {
        suggestion
    }
}
