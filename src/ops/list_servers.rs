//! Every server of every scope, with its scope, transport, status, approval
//! and the names (never the values) of what it is given: what `mcpenv list`
//! shows and the `list_servers` tool returns.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::approval::Approval;
use crate::config::error::ConfigError;
use crate::config::inventory::{FileProblem, Inventory, Note, Sourced, Status, Unloaded};
use crate::config::managed_policy::{Block, Policy};
use crate::config::model::Transport;
use crate::config::scope::Scope;
use crate::mechanics::display::shell_words;
use crate::ops::{Context, Loaded};

/// Every definition, by precedence, and what kept files from loading.
#[derive(Debug, Serialize)]
pub struct ServerList {
    /// One row per definition (a name defined in two scopes has two rows).
    pub servers: Vec<ListedServer>,
    /// What Claude Code would skip or warn about.
    pub warnings: Vec<Warning>,
    /// Files Claude Code does not load at all (every other file is listed).
    pub errors: Vec<FileError>,
    /// The servers the organisation provides (`managed-mcp.json`,
    /// `managedMcpServers` in managed settings): users cannot remove them.
    pub managed: Vec<ManagedListed>,
}

/// A server the organisation provides.
#[derive(Debug, Serialize)]
pub struct ManagedListed {
    /// The server's name.
    pub name: String,
    /// `managed-mcp.json` or `managedMcpServers`.
    pub origin: &'static str,
    /// The file it comes from.
    pub file: PathBuf,
    /// Its transport.
    pub transport: Transport,
    /// The command line or URL.
    pub target: String,
    /// What keeps it out (a `deniedMcpServers` entry still applies).
    pub blocked: Option<Block>,
}

impl ManagedListed {
    /// Every server the managed policy provides, judged by it.
    pub fn all(policy: &Policy) -> Vec<Self> {
        policy
            .managed_servers
            .iter()
            .map(|server| {
                let entry = &server.entry;
                let target = match (entry.transport().is_remote(), entry.command()) {
                    (false, Some(command)) => {
                        let mut words = vec![command.to_string()];
                        words.extend(entry.args().into_iter().map(str::to_string));
                        shell_words(&words)
                    }
                    _ => entry.url().unwrap_or_default().to_string(),
                };
                Self {
                    name: server.name.clone(),
                    origin: server.origin,
                    file: server.file.clone(),
                    transport: entry.transport(),
                    target,
                    blocked: policy.judge(&server.name, entry, true),
                }
            })
            .collect()
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
    /// For `blocked`: the managed policy's rule and the file it is in.
    pub blocked: Option<Block>,
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
            FileProblem::Config(error) => hints.extend(crate::ops::hints::config_hints(error)),
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
}

/// The errors for every file Claude Code does not load.
pub fn file_errors(inventory: &Inventory) -> Vec<FileError> {
    inventory.unloaded.iter().map(FileError::new).collect()
}

impl ListedServer {
    /// The row for `entry` in `inventory`.
    pub fn new(inventory: &Inventory, entry: &Sourced) -> Self {
        let transport = entry.entry.transport();
        let status = inventory.status(entry);
        let shadowed_by = inventory.shadowed_by(entry).map(|winner| winner.scope);
        let remote = transport.is_remote();
        // A `url` without a `type` (which Claude Code skips) is shown with
        // its URL, not as a command line with nothing in it.
        let url_only = entry.entry.command().is_none() && entry.entry.url().is_some();
        Self {
            name: entry.name.clone(),
            scope: entry.scope,
            command: (!remote)
                .then(|| entry.entry.command().map(str::to_string))
                .flatten(),
            args: (!remote).then(|| entry.entry.args().into_iter().map(str::to_string).collect()),
            url: (remote || url_only)
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
            blocked: entry.blocked.clone(),
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

    /// The TRANSPORT column: the `type`, or `no type` for a URL Claude
    /// Code would start as a command (and skips).
    pub fn transport_text(&self) -> &str {
        if self.transport == Transport::Stdio && self.command.is_none() && self.url.is_some() {
            "no type"
        } else {
            self.transport.as_str()
        }
    }

    /// "pending approval", "shadowed by local", "skipped", ... or nothing
    /// when active.
    pub fn status_text(&self) -> String {
        match self.status {
            Status::Reserved => "reserved name".to_string(),
            Status::Blocked => "blocked by policy".to_string(),
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

/// Lists the servers of every scope, or of `scope` only (and the files of
/// that scope that do not load). A file that does not load is reported in
/// [`ServerList::errors`], never an error: the other files are listed.
pub fn list_servers(context: &Context, scope: Option<Scope>) -> (ServerList, Loaded) {
    let inventory = Inventory::load_all(&context.locations);
    // Read once, and only when a server is pending.
    let trusted = std::cell::OnceCell::new();
    let servers = inventory
        .entries
        .iter()
        .filter(|entry| scope.is_none_or(|scope| entry.scope == scope))
        .map(|entry| {
            let mut server = ListedServer::new(&inventory, entry);
            if server.status == Status::Pending {
                let trusted = *trusted.get_or_init(|| context.folder_trusted());
                server.approve_command = Some(context.approve_command_in(trusted, &[&server.name]));
            }
            server
        })
        .collect();
    let list = ServerList {
        servers,
        warnings: warnings(&inventory.notes),
        errors: file_errors(&inventory)
            .into_iter()
            .filter(|error| scope.is_none_or(|scope| error.scopes.contains(&scope)))
            .collect(),
        managed: if scope.is_none() {
            ManagedListed::all(&inventory.policy)
        } else {
            Vec::new()
        },
    };
    (
        list,
        Loaded {
            inventory,
            sources: None,
        },
    )
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
