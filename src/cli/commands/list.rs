//! `mcpenv list`: every server of every scope, with precedence and approval.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::approval::Approval;
use crate::cli::args::ListArgs;
use crate::cli::error::CliError;
use crate::cli::render::{Cell, DIM, RED, Report, YELLOW, shown, table, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::error::ConfigError;
use crate::layered::{FileProblem, Inventory, Note, Sourced, Status, Unloaded};
use crate::model::Transport;
use crate::scope::Scope;

/// Every definition, by precedence.
#[derive(Debug, Serialize)]
pub struct ListReport {
    /// One row per definition (a name defined in two scopes has two rows).
    pub servers: Vec<ListedServer>,
    /// What Claude Code would skip or warn about.
    pub warnings: Vec<Warning>,
    /// Files Claude Code does not load at all (every other file is listed).
    pub errors: Vec<FileError>,
    #[serde(skip)]
    add_hint: String,
    /// `mcpenv approve` as this run would spell it (`-C DIR` kept).
    #[serde(skip)]
    approve_prefix: String,
}

impl ListReport {
    /// The command that approves `names`.
    fn approve_hint(&self, names: &[&str]) -> String {
        let words: Vec<String> = names.iter().map(|name| (*name).to_string()).collect();
        format!("{} {}", self.approve_prefix, shell_words(&words))
    }
}

/// One definition of a server. Values of `env` and `headers` are never
/// included: only their names.
#[derive(Debug, Serialize)]
pub struct ListedServer {
    /// The server's name.
    pub name: String,
    /// Its scope.
    pub scope: Scope,
    /// Its transport.
    pub transport: Transport,
    /// stdio: the command.
    pub command: Option<String>,
    /// stdio: the arguments.
    pub args: Option<Vec<String>>,
    /// http, sse, ws: the URL.
    pub url: Option<String>,
    /// The file it is defined in.
    pub file: PathBuf,
    /// Whether another definition of the name wins.
    pub shadowed: bool,
    /// The scope of that definition.
    pub shadowed_by: Option<Scope>,
    /// Project servers: approved, pending or rejected in Claude Code.
    pub approval: Option<Approval>,
    /// What Claude Code makes of it: `active`, `shadowed`, `pending`,
    /// `rejected`, `disabled` (for this project), `skipped` (by its loader)
    /// or `reserved` (name).
    pub status: Status,
    /// For `skipped` and `reserved`: Claude Code's reason.
    pub reason: Option<String>,
    /// Names of the variables in `env`.
    pub env_names: Vec<String>,
    /// Names of the headers.
    pub header_names: Vec<String>,
    /// For a project server pending approval: the command that approves it.
    pub approve_command: Option<String>,
}

/// A note about a file.
#[derive(Debug, Serialize)]
pub struct Warning {
    /// The file.
    pub file: PathBuf,
    /// The note.
    pub message: String,
}

/// A file Claude Code does not load at all.
#[derive(Debug, Serialize)]
pub struct FileError {
    /// The file.
    pub file: PathBuf,
    /// The scopes it holds that are missing from the list.
    pub scopes: Vec<Scope>,
    /// What is wrong, with its causes.
    pub message: String,
    /// For a syntax error: 1-based line.
    pub line: Option<usize>,
    /// For a syntax error: 1-based column.
    pub column: Option<usize>,
    /// What Claude Code reports for it, when known.
    pub claude_says: Option<String>,
    /// What to do.
    pub hints: Vec<String>,
}

impl FileError {
    /// The error for one file Claude Code does not load.
    pub fn new(unloaded: &Unloaded) -> Self {
        let problem = &unloaded.problem;
        let mut message = problem.to_string();
        let mut source = std::error::Error::source(problem);
        while let Some(cause) = source {
            message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        let (line, column) = problem.position().unzip();
        let claude_says = problem.claude_says();
        let mut hints = Vec::new();
        // Claude Code reads a deeply nested file; anything else that stops
        // mcpenv stops it too.
        let claude_skips = !matches!(problem, FileProblem::Config(ConfigError::TooDeep { .. }));
        if unloaded.scopes == [Scope::Project] && claude_skips {
            hints.push(match &claude_says {
                Some(text) => {
                    format!(
                        "Claude Code skips this file too and reads the others; it reports: {text}"
                    )
                }
                None => "Claude Code skips this file too and reads the others".to_string(),
            });
        } else if unloaded.scopes.contains(&Scope::User)
            && matches!(problem, FileProblem::Config(ConfigError::Syntax { .. }))
        {
            // Observed with Claude Code 2.1.332: `Configuration error in …`, exit 1.
            hints.push(
                "Claude Code stops with a configuration error for this file too; the other scopes are listed all the same"
                    .to_string(),
            );
        }
        match problem {
            FileProblem::NoMcpServers {
                servers_key: true, ..
            } => hints.push("rename the top-level `servers` key to `mcpServers` (`servers` is VS Code's `.vscode/mcp.json` format)".to_string()),
            FileProblem::NoMcpServers { top_level, .. } if !top_level.is_empty() => hints.push(
                "move them into a top-level `\"mcpServers\": { … }` object".to_string(),
            ),
            FileProblem::NoMcpServers { .. } => {
                hints.push("add `\"mcpServers\": {}` to it, or delete the file".to_string());
            }
            FileProblem::Config(error) => hints.extend(crate::cli::error::config_hints(error)),
        }
        Self {
            file: unloaded.path.clone(),
            scopes: unloaded.scopes.clone(),
            message,
            line,
            column,
            claude_says,
            hints,
        }
    }

    /// Writes `error: …` and its `hint:` lines.
    pub fn write(&self, err: &mut dyn Write) -> io::Result<()> {
        let style = RED.bold();
        writeln!(err, "{style}error:{style:#} {}", shown(&self.message))?;
        if !self.hints.is_empty() {
            writeln!(err)?;
        }
        for hint in &self.hints {
            writeln!(err, "hint: {}", shown(hint))?;
        }
        Ok(())
    }
}

/// The errors for every file Claude Code does not load.
pub fn file_errors(inventory: &Inventory) -> Vec<FileError> {
    inventory.unloaded.iter().map(FileError::new).collect()
}

/// Every scope as Claude Code loads it, a file that does not load listed in
/// [`Inventory::unloaded`] rather than stopping the command; the shield
/// learns the secrets of what was read.
pub fn load_inventory(ctx: &Ctx) -> Inventory {
    let inventory = Inventory::load_all(&ctx.locations);
    ctx.shield.learn_inventory(&inventory);
    inventory
}

impl ListedServer {
    /// The row for `entry` in `inventory`.
    pub fn new(inventory: &Inventory, entry: &Sourced) -> Self {
        let transport = entry.entry.transport();
        let status = inventory.status(entry);
        let shadowed_by = inventory.shadowed_by(entry).map(|winner| winner.scope);
        let remote = transport.is_remote();
        Self {
            name: entry.name.clone(),
            scope: entry.scope,
            command: (!remote)
                .then(|| entry.entry.command().map(str::to_string))
                .flatten(),
            args: (!remote).then(|| entry.entry.args().into_iter().map(str::to_string).collect()),
            url: remote
                .then(|| entry.entry.url().map(str::to_string))
                .flatten(),
            transport,
            file: entry.file.clone(),
            shadowed: shadowed_by.is_some(),
            shadowed_by,
            approval: entry.approval,
            status,
            reason: entry.reason(),
            env_names: entry
                .entry
                .env()
                .into_iter()
                .map(|(key, _)| key.to_string())
                .collect(),
            header_names: entry
                .entry
                .headers()
                .into_iter()
                .map(|(key, _)| key.to_string())
                .collect(),
            approve_command: None,
        }
    }

    /// The command line or URL, as one string.
    pub fn target(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => {
                let mut words = vec![command.clone()];
                words.extend(self.args.iter().flatten().cloned());
                shell_words(&words)
            }
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        }
    }

    /// "pending approval", "shadowed by local", "skipped", ... or nothing
    /// when active.
    pub fn status_text(&self) -> String {
        match self.status {
            Status::Reserved => "reserved name".to_string(),
            Status::Skipped => "skipped".to_string(),
            Status::Shadowed => match self.shadowed_by {
                Some(scope) => format!("shadowed by {scope}"),
                None => "shadowed".to_string(),
            },
            Status::Pending => "pending approval".to_string(),
            Status::Rejected => "rejected".to_string(),
            Status::Disabled => "disabled for this project".to_string(),
            Status::Active if self.approval == Some(Approval::Approved) => "approved".to_string(),
            Status::Active => String::new(),
        }
    }
}

impl Report for ListReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.servers.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .servers
            .iter()
            .map(|server| {
                let status = server.status_text();
                let target = server.target();
                let style = match server.status {
                    Status::Active | Status::Pending => anstyle::Style::new(),
                    _ => DIM,
                };
                let status_style = match server.status {
                    Status::Pending | Status::Skipped | Status::Reserved => YELLOW,
                    _ => style,
                };
                vec![
                    Cell::styled(&server.name, style),
                    Cell::styled(server.scope.as_str(), style),
                    Cell::styled(server.transport.as_str(), style),
                    Cell::styled(status, status_style),
                    // An empty last cell stays unstyled: no trailing codes or spaces.
                    Cell::styled(
                        target.clone(),
                        if target.is_empty() {
                            anstyle::Style::new()
                        } else {
                            style
                        },
                    ),
                ]
            })
            .collect();
        table(
            out,
            &["NAME", "SCOPE", "TRANSPORT", "STATUS", "COMMAND / URL"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        for error in &self.errors {
            error.write(err)?;
        }
        let pending: Vec<&str> = self
            .servers
            .iter()
            .filter(|server| server.approve_command.is_some())
            .map(|server| server.name.as_str())
            .collect();
        if !pending.is_empty() {
            writeln!(
                err,
                "hint: Claude Code asks before starting a pending project server; approve it with `{}`",
                self.approve_hint(&pending)
            )?;
        }
        if self.servers.is_empty() && self.errors.is_empty() {
            writeln!(err, "No MCP servers configured")?;
            writeln!(err, "hint: add one with `{}`", self.add_hint)?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Runs `mcpenv list`.
pub fn run(ctx: &Ctx, args: &ListArgs) -> Result<ListReport, CliError> {
    let inventory = load_inventory(ctx);
    let scope = args.scope.map(Scope::from);
    let servers = inventory
        .entries
        .iter()
        .filter(|entry| scope.is_none_or(|scope| entry.scope == scope))
        .map(|entry| {
            let mut server = ListedServer::new(&inventory, entry);
            if server.status == Status::Pending {
                server.approve_command = Some(ctx.command(&["approve", &server.name]));
            }
            server
        })
        .collect();
    Ok(ListReport {
        servers,
        warnings: warnings(&inventory.notes),
        errors: file_errors(&inventory)
            .into_iter()
            .filter(|error| scope.is_none_or(|scope| error.scopes.contains(&scope)))
            .collect(),
        add_hint: ctx.command(&["add", "NAME", "--", "COMMAND", "ARGS..."]),
        approve_prefix: ctx.command(&["approve"]),
    })
}

/// Notes as report warnings.
pub fn warnings(notes: &[Note]) -> Vec<Warning> {
    notes
        .iter()
        .map(|note| Warning {
            file: note.path.clone(),
            message: note.message.clone(),
        })
        .collect()
}
