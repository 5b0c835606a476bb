//! The command line, as clap derive types. Nothing here decides anything:
//! `resolve` and the commands turn these into actions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCandidates;

/// Share MCP server configs across a team, without sharing their secrets.
///
/// mcpenv reads and edits the same files as `claude mcp`: the local and
/// user scopes in `~/.claude.json` and the project scope in `.mcp.json`.
#[derive(Debug, Parser)]
#[command(
    name = "mcpenv",
    version = VERSION,
    long_version = LONG_VERSION,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Act as if started in DIR.
    #[arg(short = 'C', long = "project-dir", value_name = "DIR", global = true)]
    pub project_dir: Option<PathBuf>,

    /// When to use colour.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto, global = true)]
    pub color: ColorWhen,

    /// Print only data and errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `mcpenv -V`: the release, the commit and the day it was built.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MCPENV_COMMIT"),
    " ",
    env!("MCPENV_BUILD_DATE"),
    ")"
);

/// `mcpenv --version`: [`VERSION`], and the Claude Code release whose
/// files, expansion and texts mcpenv follows (its test suite runs against
/// it).
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MCPENV_COMMIT"),
    " ",
    env!("MCPENV_BUILD_DATE"),
    ")\nchecked against Claude Code 2.1.332"
);

/// What `mcpenv --version` or `mcpenv -V` alone prints, as clap would
/// print it: answered before clap builds the whole command line (some 30
/// subcommands), so asking costs little more than starting a process.
pub fn version_only(words: &[String]) -> Option<String> {
    match words {
        [word] if word == "--version" => Some(format!("mcpenv {LONG_VERSION}\n")),
        [word] if word == "-V" => Some(format!("mcpenv {VERSION}\n")),
        _ => None,
    }
}

/// The command line for the shapes mcpenv is run with most, parsed
/// without clap: `run -- COMMAND [ARGS]...` (how `mcpenv run -- claude`
/// starts Claude Code), `env` alone (what a direnv `.envrc` runs at every
/// `cd`) and `list` (or `ls`) alone. Building clap's command line, whose
/// three global options it copies into each of some 30 subcommands, was
/// most of what such a run did before its own work. What this gives is
/// what clap gives for the same words (a unit test compares the two); for
/// any other words, `None`, and clap parses them.
pub fn common_shape(words: &[std::ffi::OsString]) -> Option<Cli> {
    let plain = |command| Cli {
        project_dir: None,
        color: ColorWhen::Auto,
        quiet: false,
        command,
    };
    let first = words.first()?.to_str()?;
    match (first, &words[1..]) {
        ("run", [separator, command @ ..]) if separator == "--" && !command.is_empty() => {
            let command = command
                .iter()
                .map(|word| word.to_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()?;
            Some(plain(Command::Run(RunArgs {
                env_files: Vec::new(),
                command,
            })))
        }
        ("env", []) => Some(plain(Command::Env(EnvArgs {
            format: EnvFormat::Sh,
            json: false,
        }))),
        ("list" | "ls", []) => Some(plain(Command::List(ListArgs {
            scope: None,
            json: false,
        }))),
        _ => None,
    }
}

/// The subcommands.
///
/// `defer`: each subcommand's arguments are added to clap's command line
/// only when that subcommand is parsed or its help shown, so a run builds
/// the arguments of one command, not of some 30 (the same for the command
/// groups below). Help, errors and completions are as before. Their
/// argument structs are documented for rustdoc only (`cfg_attr(doc, …)`):
/// clap would take a doc comment there as the command's about, and a
/// deferred struct's about comes after, and instead of, the variant's.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Add a server from a command (stdio) or a URL (http, sse).
    #[command(after_help = ADD_EXAMPLES, override_usage = ADD_USAGE)]
    Add(AddArgs),
    /// Add a server from a JSON entry, as `claude mcp add-json` does.
    AddJson(AddJsonArgs),
    /// Show the server Claude Code uses for NAME, and where else it is defined.
    Get(GetArgs),
    /// List the servers of every scope, with precedence and approval.
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Remove a server from one scope.
    #[command(visible_alias = "rm")]
    Remove(RemoveArgs),
    /// Find literal secrets in MCP configs; exits 1 when it finds any.
    Scan(ScanArgs),
    /// Judge repositories' `.mcp.json` against an organisation's MCP policy.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Move secrets into `.env`, leaving `${VAR}` placeholders behind.
    Extract(ExtractArgs),
    /// Move a private server into `.mcp.json` for the team, its secrets into `.env`.
    Share(ShareArgs),
    /// Check that every server in effect has what it needs; exits 1 when not.
    Check(CheckArgs),
    /// Ask for each missing variable and save it (interactive).
    Onboard(OnboardArgs),
    /// Approve project (`.mcp.json`) servers for Claude Code, as its dialog does.
    Approve(ApproveArgs),
    /// Reject project servers: Claude Code hides them and never starts them.
    Reject(RejectArgs),
    /// Forget this project's approvals and rejections, as `claude mcp reset-project-choices` does.
    ResetProjectChoices(ResetProjectChoicesArgs),
    /// Run a command with `.env` loaded, e.g. `mcpenv run -- claude`.
    Run(RunArgs),
    /// Print the variables `.env` provides to the servers, for your shell or direnv.
    Env(EnvArgs),
    /// List the variables of the dotenv files and where each value lives;
    /// remove one, or move one into or out of the keychain.
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// List and show server templates.
    #[command(subcommand)]
    Templates(TemplatesCommand),
    /// Print the script that sets up tab completion for SHELL.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Print mcpenv's man page (roff), or a subcommand's.
    Man(ManArgs),
    /// Import servers from another client's config, placeholders translated.
    Import(ImportArgs),
    /// Import from Claude Desktop: `import --from claude-desktop`, under
    /// the name `claude mcp` gives it.
    AddFromClaudeDesktop(AddFromClaudeDesktopArgs),
    /// Write the servers of a scope into another client's config, in its syntax.
    Export(ExportArgs),
    /// Take back the last edit made in this project (add, remove, share, …), each file as it was.
    #[command(after_help = UNDO_HELP)]
    Undo(UndoArgs),
    /// Start each server, initialize it and list what it offers; exits 1 when one fails.
    #[command(after_help = PROBE_EXAMPLES)]
    Probe(ProbeArgs),
    /// Check, scan and (with `--probe`) probe in one summary; exits 1 when anything is wrong.
    Doctor(DoctorArgs),
    /// Serve mcpenv's jobs as MCP tools over stdio: the reading ones, and `add_server` and `share_server`, which write only once you agree (`mcpenv add -s user mcpenv -- mcpenv serve`).
    Serve(ServeArgs),
    /// Confirm or decline, at your terminal, the changes an agent asked `mcpenv serve` for.
    Confirm(ConfirmArgs),
    /// Internal: kills the process groups `probe` lists once `probe` is gone
    /// (Unix only: on Windows a job object does it, see `probe::group`).
    #[cfg(unix)]
    #[command(name = "__reap", hide = true)]
    Reap,
}

impl Command {
    /// How the command is named in `undo --list` and whether it is a dry
    /// run, for a command that may write files; `None` for one that never
    /// does (or, as `serve`, writes through its own gate).
    pub fn edit(&self) -> Option<(&'static str, bool)> {
        Some(match self {
            Self::Add(args) => ("add", args.dry_run),
            Self::AddJson(args) => ("add-json", args.dry_run),
            Self::Remove(args) => ("remove", args.dry_run),
            Self::Extract(args) => ("extract", args.dry_run),
            Self::Share(args) => ("share", args.dry_run),
            Self::Onboard(args) => ("onboard", args.dry_run),
            Self::Approve(args) => ("approve", args.dry_run),
            Self::Reject(args) => ("reject", args.dry_run),
            Self::ResetProjectChoices(args) => ("reset-project-choices", args.dry_run),
            Self::Import(args) => ("import", args.options.dry_run),
            Self::AddFromClaudeDesktop(args) => ("add-from-claude-desktop", args.options.dry_run),
            Self::Export(args) => ("export", args.dry_run),
            Self::Secrets(SecretsCommand::Rm(args)) => ("secrets rm", args.dry_run),
            Self::Secrets(SecretsCommand::Move(args)) => ("secrets move", args.dry_run),
            // Undo keeps itself (for `--redo`, in `ops::undo`); only its
            // dry run is a session.
            Self::Undo(args) if args.dry_run && !args.list => ("undo", true),
            _ => return None,
        })
    }
}

#[cfg_attr(doc, doc = "`mcpenv probe`.")]
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Only these servers (default: every server in effect).
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(crate::cli::completion::server_names))]
    pub names: Vec<String>,

    /// Seconds each server has to answer everything.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = positive_seconds)]
    pub timeout: f64,

    /// How many servers to probe at once (default: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,

    /// Also probe project servers not approved in Claude Code's settings.
    #[arg(long)]
    pub trust_project: bool,

    /// Also check how each server reports tool errors, and its tool list;
    /// calls only tools annotated read-only, with arguments their schema rejects.
    #[arg(long)]
    pub audit: bool,

    /// With `--audit`, also call tools not annotated read-only (still only
    /// with invalid arguments; never a tool annotated destructive).
    #[arg(long, requires = "audit")]
    pub audit_calls: bool,

    /// Print one JSON document after the last server.
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,

    /// Print one JSON object per server as it finishes, then a summary (JSON Lines).
    #[arg(long)]
    pub jsonl: bool,

    /// Send the values of variables Claude Code sends empty (`${NPM_TOKEN}`
    /// in a remote server's header, …), to see whether the server works
    /// with them; by default probe sends what Claude Code sends.
    #[arg(long)]
    pub send_blanked: bool,
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err("expected a number of seconds above 0, at most 86400 (a day)".to_string()),
    }
}

/// Another MCP client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    /// Claude Desktop (`claude_desktop_config.json`).
    ClaudeDesktop,
    /// Cursor (`.cursor/mcp.json`, `~/.cursor/mcp.json`).
    Cursor,
    /// VS Code (`.vscode/mcp.json`, user `mcp.json`).
    Vscode,
    /// Windsurf (`~/.codeium/windsurf/mcp_config.json`).
    Windsurf,
    /// Gemini CLI (`.gemini/settings.json`, `~/.gemini/settings.json`).
    Gemini,
    /// Codex CLI (`.codex/config.toml` in a project Codex trusts, `~/.codex/config.toml`).
    Codex,
    /// Zed (`.zed/settings.json`, `~/.config/zed/settings.json`).
    Zed,
}

#[cfg_attr(doc, doc = "`mcpenv import`.")]
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The client to import from.
    #[arg(long, value_enum)]
    pub from: ClientArg,

    /// The other flags.
    #[command(flatten)]
    pub options: ImportOptions,
}

#[cfg_attr(
    doc,
    doc = "`mcpenv add-from-claude-desktop`: `import`'s flags but `--from`."
)]
#[derive(Debug, Args)]
pub struct AddFromClaudeDesktopArgs {
    /// `import`'s flags.
    #[command(flatten)]
    pub options: ImportOptions,
}

impl AddFromClaudeDesktopArgs {
    /// The same import spelled `import --from claude-desktop`.
    pub fn to_import(&self) -> ImportArgs {
        ImportArgs {
            from: ClientArg::ClaudeDesktop,
            options: self.options.clone(),
        }
    }
}

#[cfg_attr(doc, doc = "The flags of `import` other than `--from`.")]
#[derive(Debug, Clone, Args)]
pub struct ImportOptions {
    /// Scope to add the servers to.
    #[arg(short, long, value_enum, default_value_t = ScopeArg::Local)]
    pub scope: ScopeArg,

    /// Only this server (repeat for more).
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,

    /// Read this file instead of the client's usual one.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    /// Give an imported server another name (repeat for more).
    #[arg(long, value_name = "OLD=NEW")]
    pub rename: Vec<String>,

    /// Replace servers of the same name in the target scope.
    #[arg(long)]
    pub replace: bool,

    /// Also import the servers the client has switched off.
    #[arg(long)]
    pub include_disabled: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Take the servers of a file inside the repository into the local or
    /// user scope, where Claude Code starts them without asking (read the
    /// file first; without this flag mcpenv shows them and asks).
    #[arg(long)]
    pub trust_file: bool,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A scope `export` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportScope {
    /// `.mcp.json` → the client's project file.
    Project,
    /// Your user servers → the client's user file.
    User,
}

#[cfg_attr(doc, doc = "`mcpenv export`.")]
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The client to write to.
    #[arg(long, value_enum)]
    pub to: ClientArg,

    /// Which servers, and so which of the client's files.
    #[arg(long, value_enum, default_value_t = ExportScope::Project)]
    pub scope: ExportScope,

    /// Exit 1 when the client's file is out of date, write nothing (for CI).
    #[arg(long)]
    pub check: bool,

    /// VS Code: ask for secrets with `inputs` prompts instead of `${env:X}`.
    #[arg(long)]
    pub vscode_inputs: bool,

    /// Remove the servers mcpenv exported earlier that are gone from the
    /// scope (never ones added by hand, nor exported ones edited since).
    #[arg(long)]
    pub prune: bool,

    /// Cursor, VS Code: stdio servers get `envFile` (default: the scope's
    /// `.env`, `${workspaceFolder}/.env` for a project) and the client reads
    /// the variables it holds itself.
    #[arg(long, value_name = "PATH", num_args = 0..=1)]
    pub env_file: Option<Option<PathBuf>>,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
}

/// `mcpenv secrets`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SecretsCommand {
    /// Every variable of the dotenv files mcpenv reads here: where its value
    /// lives, its file, the servers that use it. Never a value.
    #[command(visible_alias = "ls")]
    List(SecretsListArgs),
    /// Remove a variable from the dotenv file whose value is in effect, and
    /// its keychain entry when the value is kept there.
    #[command(visible_alias = "remove")]
    Rm(SecretsRmArgs),
    /// Move a value between its dotenv file (plaintext) and the OS keychain.
    Move(SecretsMoveArgs),
}

#[cfg_attr(doc, doc = "`mcpenv secrets list`.")]
#[derive(Debug, Args)]
pub struct SecretsListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv secrets rm`.")]
#[derive(Debug, Args)]
pub struct SecretsRmArgs {
    /// The variable.
    #[arg(value_name = "VAR", add = ArgValueCandidates::new(crate::cli::completion::dotenv_variables))]
    pub name: String,

    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv secrets move`.")]
#[derive(Debug, Args)]
pub struct SecretsMoveArgs {
    /// The variable.
    #[arg(value_name = "VAR", add = ArgValueCandidates::new(crate::cli::completion::dotenv_variables))]
    pub name: String,

    /// Where the value goes: the OS keychain (the file keeps `keychain:…`),
    /// or back into the dotenv file.
    #[arg(long, value_enum)]
    pub to: StoreArg,

    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// fish.
    Fish,
    /// PowerShell.
    Powershell,
    /// Elvish.
    Elvish,
}

impl CompletionShell {
    /// The name clap_complete knows the shell by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Fish => "fish",
            Self::Powershell => "powershell",
            Self::Elvish => "elvish",
        }
    }
}

#[cfg_attr(doc, doc = "`mcpenv completions`.")]
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

const COMPLETIONS_HELP: &str = "\
The script asks mcpenv for each completion, so server names, templates and the variables of
`.env` complete from the project the shell is in. Load it from your shell's start-up file:

  bash   echo 'source <(mcpenv completions bash)' >> ~/.bashrc
  zsh    echo 'source <(mcpenv completions zsh)' >> ~/.zshrc
  fish   echo 'mcpenv completions fish | source' >> ~/.config/fish/config.fish
  pwsh   mcpenv completions powershell | Out-String | Invoke-Expression   (in $PROFILE)
  elvish eval (mcpenv completions elvish | slurp)   (in ~/.config/elvish/rc.elv)";

#[cfg_attr(doc, doc = "`mcpenv man`.")]
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand (`mcpenv man add` is the page `mcpenv-add(1)`); none for mcpenv's own page.
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// `mcpenv templates`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TemplatesCommand {
    /// List the templates: embedded, yours and the project's.
    List(TemplatesListArgs),
    /// Show one template: its packages, remotes and variables.
    Show(TemplatesShowArgs),
}

#[cfg_attr(doc, doc = "`mcpenv templates list`.")]
#[derive(Debug, Args)]
pub struct TemplatesListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv templates show`.")]
#[derive(Debug, Args)]
pub struct TemplatesShowArgs {
    /// The template's name, or a `server.json` file.
    #[arg(add = ArgValueCandidates::new(crate::cli::completion::template_names))]
    pub name: String,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

// NAME is optional for clap only (see `AddArgs::name`).
const ADD_USAGE: &str = "\
mcpenv add [OPTIONS] <NAME> <COMMAND_OR_URL> [ARGS]...
       mcpenv add [OPTIONS] <NAME> -- <COMMAND> [ARGS]...
       mcpenv add [OPTIONS] <NAME> --template <TEMPLATE>";

const ADD_EXAMPLES: &str = "\
Examples:
  mcpenv add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  mcpenv add -s project -t http sentry https://mcp.sentry.dev/mcp
  mcpenv add -t http api https://api.example.com/mcp -H 'Authorization: Bearer ${API_TOKEN}'";

const PROBE_EXAMPLES: &str = "\
Servers are started as Claude Code would: stdio commands, and `http` (streamable
HTTP, also https) and `sse` URLs, with placeholders expanded from the environment
and `.env`. Every process started is stopped when probe returns.

Examples:
  mcpenv probe
  mcpenv probe github --timeout 30
  mcpenv probe --audit --json
  mcpenv probe --jsonl | jq -c 'select(.ok == false)'";

/// A system Claude Code runs on, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SystemArg {
    /// Windows, natively (not WSL).
    Windows,
    /// macOS.
    Macos,
    /// Linux (and WSL).
    Linux,
}

impl From<SystemArg> for crate::check::platforms::System {
    fn from(system: SystemArg) -> Self {
        match system {
            SystemArg::Windows => Self::Windows,
            SystemArg::Macos => Self::Macos,
            SystemArg::Linux => Self::Linux,
        }
    }
}

/// A scope on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// Private to you in this project (`~/.claude.json`).
    Local,
    /// Shared with the team (`.mcp.json`).
    Project,
    /// All your projects (`~/.claude.json`).
    User,
    /// What other tools call the user scope: accepted as `user`, with a
    /// note (Claude Code refuses it, and clap would suggest `local`).
    #[value(hide = true)]
    Global,
}

impl ScopeArg {
    /// The note for a scope spelled another way than Claude Code spells it.
    pub fn note(self) -> Option<&'static str> {
        (self == Self::Global).then_some(
            "`-s global` is `-s user` here: servers for all your projects, in `~/.claude.json`",
        )
    }
}

/// A transport on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// A local process speaking over stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    #[value(alias = "streamable-http")]
    Http,
    /// Server-sent events.
    Sse,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour when writing to a terminal (honours NO_COLOR and CLICOLOR_FORCE).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[cfg_attr(doc, doc = "`mcpenv add`.")]
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Scope to add to.
    #[arg(short, long, value_enum, default_value_t = ScopeArg::Local)]
    pub scope: ScopeArg,

    /// Transport [default: stdio, or http for an `http(s)://` URL].
    #[arg(short, long, value_enum)]
    pub transport: Option<TransportArg>,

    /// OAuth client ID, for an http or sse server that needs a
    /// pre-registered client.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,

    /// Fixed port for the OAuth callback, for a redirect URI registered in advance.
    #[arg(long, value_name = "PORT", value_parser = callback_port)]
    pub callback_port: Option<u16>,

    /// Ask for the OAuth client secret (or read `MCP_CLIENT_SECRET`);
    /// stored where Claude Code keeps credentials, never in a config file.
    #[arg(long)]
    pub client_secret: bool,

    /// An environment variable for a stdio server (repeat for more).
    #[arg(short, long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// A header for an http or sse server (repeat for more).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,

    /// Replace a server of the same name in that scope.
    #[arg(long)]
    pub replace: bool,

    /// Keep literal secrets in a project-scope entry instead of moving them to `.env`.
    #[arg(long)]
    pub allow_literal: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Print what was written as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Write a stdio command in the form that starts on Windows, macOS
    /// and Linux alike (`cmd /c npx …` becomes `npx …`, a path to `uvx`
    /// becomes `uvx`); refused when it has no such form.
    #[arg(long)]
    pub portable: bool,

    /// Add from a template: a name (see `mcpenv templates list`) or a `server.json` file.
    #[arg(long, value_name = "TEMPLATE", add = ArgValueCandidates::new(crate::cli::completion::template_names), conflicts_with_all = ["transport", "env", "headers", "command_or_url", "after_dashes", "client_id", "callback_port", "client_secret", "portable"])]
    pub template: Option<String>,

    /// With `--template`: a value for one of its variables (repeat for more);
    /// secrets go to `.env`, others become the placeholder's default.
    #[arg(long = "var", value_name = "KEY=VALUE")]
    pub vars: Vec<String>,

    /// With `--template`: use its package N (from 1).
    #[arg(long, value_name = "N", conflicts_with = "remote")]
    pub package: Option<usize>,

    /// With `--template`: use its remote N (from 1).
    #[arg(long, value_name = "N")]
    pub remote: Option<usize>,

    /// Server name: letters, digits, `-` and `_`.
    // Optional for clap so that `add -- npx foo` gets a hint, not a bare
    // "missing NAME"; `add` requires it.
    pub name: Option<String>,

    /// The command to run (stdio) or the server's URL (http, sse).
    #[arg(required_unless_present_any = ["template", "after_dashes"])]
    pub command_or_url: Option<String>,

    /// Arguments of the command; put `--` before arguments that start with `-`.
    pub args: Vec<String>,

    /// Everything after `--`: the command and its arguments, never NAME
    /// (without this, `add -- npx foo` would name the server `npx`).
    #[arg(last = true, value_name = "COMMAND_AND_ARGS", hide = true)]
    pub after_dashes: Vec<String>,
    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn callback_port(text: &str) -> Result<u16, String> {
    // Claude Code's wording.
    match text.parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err("--callback-port must be a whole number from 1 to 65535".to_string()),
    }
}

#[cfg_attr(doc, doc = "`mcpenv add-json`.")]
#[derive(Debug, Args)]
pub struct AddJsonArgs {
    /// Scope to add to.
    #[arg(short, long, value_enum, default_value_t = ScopeArg::Local)]
    pub scope: ScopeArg,

    /// Replace a server of the same name in that scope.
    #[arg(long)]
    pub replace: bool,

    /// Keep literal secrets in a project-scope entry instead of moving them to `.env`.
    #[arg(long)]
    pub allow_literal: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Print what was written as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Server name: letters, digits, `-` and `_`.
    pub name: String,

    /// The entry, e.g. '{"type":"http","url":"https://example.com/mcp"}';
    /// `-` reads it from stdin, which keeps tokens out of shell history.
    pub json_entry: String,
    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv get`.")]
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Server name.
    #[arg(add = ArgValueCandidates::new(crate::cli::completion::server_names))]
    pub name: String,

    /// Show env and header values unmasked.
    #[arg(long)]
    pub reveal: bool,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv list`.")]
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this scope.
    #[arg(short, long, value_enum)]
    pub scope: Option<ScopeArg>,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv scan`.")]
#[derive(Debug, Args)]
#[command(after_help = SCAN_EXAMPLES)]
pub struct ScanArgs {
    /// Files or directories to scan; without any, every scope of this
    /// project and the other clients' config files.
    pub paths: Vec<PathBuf>,

    /// Read only PATHS, never `~/.claude.json` or another client's own
    /// files; with no PATHS, scan nothing (for hooks that pass file names).
    #[arg(long)]
    pub only_paths: bool,

    /// Output format [default: text].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ScanFormat>,

    /// Print JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
}

/// `mcpenv policy`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum PolicyCommand {
    /// Judge every `.mcp.json` under PATHS against a policy; exits 1 when
    /// one uses a server the policy denies or does not allow.
    #[command(after_help = POLICY_EXAMPLES)]
    Check(PolicyCheckArgs),
}

#[cfg_attr(doc, doc = "`mcpenv policy check`.")]
#[derive(Debug, Args)]
pub struct PolicyCheckArgs {
    /// Folders (each walked for `.mcp.json`) or `.mcp.json` files [default: .].
    pub paths: Vec<PathBuf>,

    /// The organisation's policy: a file shaped like Claude Code's
    /// `managed-settings.json` [default: this machine's managed settings].
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Output format [default: text].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ScanFormat>,

    /// Print JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
}

const POLICY_EXAMPLES: &str = "Examples:
  mcpenv policy check                                  this repository, against this machine's managed settings
  mcpenv policy check --policy org-policy.json repos/  every repository under repos/
  mcpenv policy check --policy org-policy.json --format sarif . > policy.sarif";

/// Output formats of `mcpenv scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScanFormat {
    /// A table on stdout.
    Text,
    /// mcpenv's JSON document.
    Json,
    /// SARIF 2.1.0, for code scanning (GitHub, GitLab, Azure DevOps).
    Sarif,
}

const SCAN_EXAMPLES: &str = "Examples:
  mcpenv scan                          every scope of this project and the other clients' files
  mcpenv scan .                        the config files of this folder and below
  mcpenv scan --format sarif . > mcpenv.sarif
  mcpenv scan --only-paths .mcp.json   what a pre-commit hook runs";

#[cfg_attr(doc, doc = "`mcpenv extract`.")]
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Scope to extract from [default: project].
    #[arg(short, long, value_enum, conflicts_with = "all")]
    pub scope: Option<ScopeArg>,

    /// Extract from every scope.
    #[arg(long)]
    pub all: bool,

    /// Only this server (repeat for more).
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Where the secrets go: `.env`, or the OS keychain with `.env` naming the entry.
    #[arg(long, value_enum, default_value_t = StoreArg::Dotenv)]
    pub to: StoreArg,

    /// Record in `.env.example` where the team keeps VAR (`op://vault/item/field`), so `onboard` sets it up for teammates without asking (repeat for more).
    #[arg(long = "reference", value_name = "VAR=REFERENCE")]
    pub references: Vec<String>,

    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Where `extract` and `share` keep the secrets they move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StoreArg {
    /// The project's `.env` (mode 0600; a user server's: `~/.config/mcpenv/.env`).
    Dotenv,
    /// The OS keychain; `.env` holds only `keychain:…`, the entry's name.
    Keychain,
}

impl From<StoreArg> for crate::ops::secret_stores::SecretStore {
    fn from(store: StoreArg) -> Self {
        match store {
            StoreArg::Dotenv => Self::Dotenv,
            StoreArg::Keychain => Self::Keychain,
        }
    }
}

/// A private scope, for `share --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrivateScope {
    /// Private to you in this project.
    Local,
    /// All your projects.
    User,
}

#[cfg_attr(doc, doc = "`mcpenv share`.")]
#[derive(Debug, Args)]
pub struct ShareArgs {
    /// The server to share.
    #[arg(add = ArgValueCandidates::new(crate::cli::completion::server_names))]
    pub name: String,

    /// Where it is now [default: wherever it is defined].
    #[arg(long, value_enum)]
    pub from: Option<PrivateScope>,

    /// Keep the private copy.
    #[arg(long)]
    pub keep: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Where its secrets go: `.env`, or the OS keychain with `.env` naming the entry.
    #[arg(long, value_enum, default_value_t = StoreArg::Dotenv)]
    pub to: StoreArg,

    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv serve`.")]
#[derive(Debug, Args)]
pub struct ServeArgs {}

#[cfg_attr(doc, doc = "`mcpenv confirm`.")]
#[derive(Debug, Args)]
pub struct ConfirmArgs {
    /// Only the change of this id (as the agent names it); default: every change waiting.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}

#[cfg_attr(doc, doc = "`mcpenv doctor`.")]
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also start each server in effect, as `mcpenv probe` does.
    #[arg(long)]
    pub probe: bool,

    /// With `--probe`: seconds each server has to answer everything.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = positive_seconds, requires = "probe")]
    pub timeout: f64,

    /// Count the check's warnings as problems too.
    #[arg(long)]
    pub strict: bool,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv check`.")]
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    /// Judge the project's `.mcp.json` servers for teammates on these
    /// systems: what cannot start there fails the check (repeat, or
    /// separate with commas). Without it, only what surely fails on some
    /// system is a warning.
    #[arg(long = "for", value_enum, value_delimiter = ',', value_name = "SYSTEM")]
    pub for_systems: Vec<SystemArg>,

    /// Exit 1 on warnings too.
    #[arg(long)]
    pub strict: bool,
}

/// Where `onboard` saves values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnboardTarget {
    /// The project's `.env` (mode 0600).
    Dotenv,
    /// The `env` map of `.claude/settings.local.json`, which Claude Code applies itself.
    ClaudeSettings,
    /// The OS keychain; `.env` holds only `keychain:…`, the entry's name.
    Keychain,
}

#[cfg_attr(doc, doc = "`mcpenv onboard`.")]
#[derive(Debug, Args)]
pub struct OnboardArgs {
    /// Where to save the values.
    #[arg(long, value_enum, default_value_t = OnboardTarget::Dotenv)]
    pub to: OnboardTarget,

    /// Only this variable (repeat for more), asked for even when it has a value.
    #[arg(long = "only", value_name = "VAR")]
    pub only: Vec<String>,

    /// Ask again for these variables, which have values, besides everything missing.
    #[arg(long = "reset", value_name = "VAR", num_args = 1..)]
    pub reset: Vec<String>,

    /// Copy values of variables already set in the environment, without asking.
    #[arg(long)]
    pub from_env: bool,

    /// Write into a `.env` that other users can read.
    #[arg(long)]
    pub force: bool,

    /// Use the reference the repository's `.env.example` gives this
    /// variable (repeat for more) without being asked; others are shown
    /// and asked about on a terminal, never read before.
    #[arg(long = "accept-reference", value_name = "VAR")]
    pub accept_reference: Vec<String>,

    /// Print the final check as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv approve`.")]
#[derive(Debug, Args)]
#[command(after_help = APPROVE_HELP)]
pub struct ApproveArgs {
    /// Project servers to approve.
    #[arg(
        value_name = "NAME",
        required_unless_present = "all",
        conflicts_with = "all",
        add = ArgValueCandidates::new(crate::cli::completion::server_names)
    )]
    pub names: Vec<String>,

    /// Approve every project server in effect here now, each by name.
    #[arg(long)]
    pub all: bool,

    /// Also record that you trust this folder, as accepting Claude Code's trust dialog does (asked in a terminal).
    #[arg(long)]
    pub trust: bool,

    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

const APPROVE_HELP: &str = "\
mcpenv writes `enabledMcpjsonServers` in `.claude/settings.local.json`, where Claude Code's own
dialog records your answer, and keeps that file out of git with a line in `.git/info/exclude`.

`--all` lists each server in effect now by name. Unlike \"approve all\" in Claude Code's dialog
(`enableAllProjectMcpServers`), a server someone adds to `.mcp.json` later still asks first.

Claude Code 2.1.332 reads these approvals only in a folder whose trust dialog you accepted. In a
folder not trusted yet, `approve` asks (in a terminal) whether to record that trust now, as the
dialog does; `--trust` records it without asking. Trusting a folder also lets Claude Code apply
its settings and run its hooks.";

#[cfg_attr(doc, doc = "`mcpenv reject`.")]
#[derive(Debug, Args)]
pub struct RejectArgs {
    /// Project servers to reject.
    #[arg(value_name = "NAME", required = true, add = ArgValueCandidates::new(crate::cli::completion::server_names))]
    pub names: Vec<String>,

    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv undo`.")]
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Take back the edit with this number (from `--list --all`), wherever
    /// it was made; the number of an undo redoes it.
    #[arg(value_name = "NUMBER", conflicts_with_all = ["list", "redo"])]
    pub number: Option<u64>,

    /// List this project's edits and the user's own, newest first, and put
    /// nothing back.
    #[arg(long)]
    pub list: bool,

    /// With `--list`: list every project's edits.
    #[arg(long, requires = "list")]
    pub all: bool,

    /// Take back the last undo made here (until the next edit here).
    #[arg(long, conflicts_with = "list")]
    pub redo: bool,

    /// Show what would be put back, as a diff of each file, and write nothing.
    #[arg(long, conflicts_with = "list")]
    pub dry_run: bool,

    /// Put a literal secret back into a file git tracks or would commit
    /// without asking (undo refuses otherwise, or asks on a terminal).
    #[arg(long, conflicts_with = "list")]
    pub restore_secrets: bool,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

const UNDO_HELP: &str = "\
Every command that writes files keeps what each file held before, in mcpenv's
state directory (the last 20 edits, at most about 128 MiB), with the project
it was made in. `mcpenv undo` takes back the newest edit made in this project
(the repository, else the directory) or that changed only your own files
(user scope, your dotenv store, other clients' user files); an edit of
another project is never taken back unless you name its number
(`mcpenv undo NUMBER`, numbers from `mcpenv undo --list --all`). It says which
edit, when, and every file it will put back or remove before touching any,
and refuses when a file changed since, so nobody's later change is lost; run
it again to go further back. In `~/.claude.json`, which every project shares,
it takes back only the members the edit changed, and refuses, naming them,
when one of those changed again since.

`mcpenv undo --redo` takes back the last undo made here, until the next edit
here. `--all` goes with `--list` only. Edits recorded by an older mcpenv,
which did not keep the project, are listed with `--all` and taken back only
by number.

It puts a literal secret back into a file git tracks or would commit only if
you agree (asked on a terminal, or `--restore-secrets`). An edit that moved a
secret into the keychain or removed it keeps no copy of it, so it cannot be
undone.";

#[cfg_attr(doc, doc = "`mcpenv reset-project-choices`.")]
#[derive(Debug, Args)]
pub struct ResetProjectChoicesArgs {
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg_attr(doc, doc = "`mcpenv run`.")]
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A file to load instead of `.env.local` and `.env` (repeat for more; earlier files win).
    #[arg(long = "env-file", value_name = "FILE")]
    pub env_files: Vec<PathBuf>,

    /// The command and its arguments.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Output formats of `mcpenv env`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EnvFormat {
    /// `export NAME='value'` lines for sh, bash and zsh.
    Sh,
    /// `set -gx NAME 'value'` lines for fish.
    Fish,
    /// `NAME='value'` lines.
    Dotenv,
    /// One JSON object.
    Json,
}

#[cfg_attr(doc, doc = "`mcpenv env`.")]
#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = EnvFormat::Sh)]
    pub format: EnvFormat,

    /// Print JSON (the same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

#[cfg_attr(doc, doc = "`mcpenv remove`.")]
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// Scope to remove from; required when NAME is in several.
    #[arg(short, long, value_enum)]
    pub scope: Option<ScopeArg>,

    /// Print what was removed as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Server name.
    #[arg(add = ArgValueCandidates::new(crate::cli::completion::server_names))]
    pub name: String,

    /// Drop the `.env.example` lines of variables no server uses any more,
    /// without asking (never a `.env` value).
    #[arg(long, conflicts_with = "keep_example")]
    pub tidy_example: bool,

    /// Keep those `.env.example` lines, without asking.
    #[arg(long)]
    pub keep_example: bool,

    /// Show what would change, as a diff of each file (secrets masked), and
    /// write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg(test)]
mod tests {
    /// `common_shape` gives what clap gives for `words`, or leaves them to
    /// clap.
    fn same_as_clap(words: &[std::ffi::OsString]) -> bool {
        let Some(ours) = super::common_shape(words) else {
            return false;
        };
        let mut line = vec![std::ffi::OsString::from("mcpenv")];
        line.extend(words.iter().cloned());
        let clap = <super::Cli as clap::Parser>::try_parse_from(line)
            .unwrap_or_else(|error| panic!("{words:?}: clap refused what we took: {error}"));
        assert_eq!(format!("{ours:?}"), format!("{clap:?}"), "{words:?}");
        true
    }

    #[test]
    fn common_shapes_parse_as_clap_parses_them() {
        let words = |words: &[&str]| -> Vec<std::ffi::OsString> {
            words.iter().map(std::ffi::OsString::from).collect()
        };
        for taken in [
            &["run", "--", "true"][..],
            &["run", "--", "claude", "--help"],
            &[
                "run",
                "--",
                "sh",
                "-c",
                "echo \"$A\"",
                "--",
                "-q",
                "-C",
                "x",
            ],
            &["run", "--", "--version"],
            &["run", "--", "-h"],
            &["run", "--", ""],
            &["run", "--", "run", "--"],
            &["run", "--", "é", "ghp_0123456789abcdefghijklmnopqrstuvwxyz"],
            &["env"],
            &["list"],
            &["ls"],
        ] {
            assert!(same_as_clap(&words(taken)), "{taken:?} not taken");
        }
        // Anything else is clap's: other options, help, errors.
        for left in [
            &[][..],
            &["run"],
            &["run", "--"],
            &["run", "true"],
            &["run", "--env-file", "x", "--", "true"],
            &["-q", "run", "--", "true"],
            &["env", "--json"],
            &["env", "-q"],
            &["list", "--help"],
            &["list", "-s", "user"],
            &["help"],
            &["--help"],
            &["lis"],
            &["Run", "--", "true"],
        ] {
            assert!(super::common_shape(&words(left)).is_none(), "{left:?}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let not_utf8 = std::ffi::OsString::from_vec(vec![b'a', 0xff]);
            let line = [words(&["run", "--"]), vec![not_utf8]].concat();
            assert!(super::common_shape(&line).is_none());
        }
    }

    proptest::proptest! {
        /// Any words after `run --` are COMMAND and its arguments, as clap
        /// takes them.
        #[test]
        fn any_command_is_taken_as_clap_takes_it(
            command in proptest::collection::vec(
                proptest::prop_oneof![
                    "[-a-zA-Z0-9=_ ]{0,8}",
                    proptest::strategy::Strategy::prop_map(
                        proptest::sample::select(vec![
                            "--", "-", "-q", "--color", "never", "-C", "--help", "-V", "help",
                            "run", "--env-file",
                        ]),
                        str::to_string,
                    ),
                    "\\PC{0,4}",
                ],
                1..6,
            )
        ) {
            let mut words = vec![std::ffi::OsString::from("run"), std::ffi::OsString::from("--")];
            words.extend(command.iter().map(std::ffi::OsString::from));
            proptest::prop_assert!(same_as_clap(&words));
        }
    }

    #[test]
    fn the_version_names_the_claude_code_release_mcpenv_follows() {
        assert!(super::LONG_VERSION.ends_with(&format!(
            "checked against Claude Code {}",
            crate::config::claude_code::blanked::RELEASE
        )));
        assert!(super::LONG_VERSION.starts_with(super::VERSION));
    }

    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_version_answered_early_is_what_clap_prints() {
        let words = |word: &str| vec![word.to_string()];
        assert_eq!(
            version_only(&words("--version")),
            Some(Cli::command().render_long_version())
        );
        assert_eq!(
            version_only(&words("-V")),
            Some(Cli::command().render_version())
        );
        assert_eq!(version_only(&["-V".to_string(), "list".to_string()]), None);
        assert_eq!(version_only(&words("list")), None);
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// What each command says of itself is its variant's doc comment,
    /// whether its deferred arguments were added (its help) or not (the
    /// list of commands in its parent's help).
    #[test]
    fn deferred_arguments_keep_each_command_s_about() {
        fn abouts(command: &clap::Command, path: &str, into: &mut Vec<String>) {
            // `help`, which building adds, aside.
            for sub in command
                .get_subcommands()
                .filter(|sub| sub.get_name() != "help")
            {
                let path = format!("{path} {}", sub.get_name());
                into.push(format!(
                    "{path}: {:?} / {:?}",
                    sub.get_about().map(ToString::to_string),
                    sub.get_long_about().map(ToString::to_string)
                ));
                abouts(sub, &path, into);
            }
        }
        let mut before = Vec::new();
        abouts(&Cli::command(), "mcpenv", &mut before);
        let mut built = Cli::command();
        built.build();
        let mut after = Vec::new();
        abouts(&built, "mcpenv", &mut after);
        assert_eq!(before, after);
        assert!(after.len() > 30, "{after:?}");
        assert!(
            after.iter().all(|line| !line.contains("Some(\"`mcpenv")),
            "{after:#?}"
        );
    }

    fn add(argv: &[&str]) -> AddArgs {
        let cli = Cli::try_parse_from(argv).unwrap();
        match cli.command {
            Command::Add(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_env_flag_takes_exactly_one_value() {
        let args = add(&["mcpenv", "add", "-e", "K=V", "s5", "cmd"]);
        assert_eq!(
            (
                args.env,
                args.name.as_deref().unwrap(),
                args.command_or_url.as_deref().unwrap()
            ),
            (vec!["K=V".to_string()], "s5", "cmd")
        );
    }

    #[test]
    fn dashes_after_double_dash_are_arguments() {
        let args = add(&["mcpenv", "add", "gh", "--", "npx", "-y", "pkg"]);
        assert_eq!(args.command_or_url, None);
        assert_eq!(args.after_dashes, ["npx", "-y", "pkg"]);
        let args = add(&["mcpenv", "add", "gh", "npx", "-e", "A=1", "--", "-y"]);
        assert_eq!(
            (args.env, args.command_or_url.as_deref(), args.after_dashes),
            (vec!["A=1".to_string()], Some("npx"), vec!["-y".to_string()])
        );
    }

    #[test]
    fn words_after_double_dash_never_fill_the_name() {
        let args = add(&["mcpenv", "add", "--", "npx", "foo", "name"]);
        assert_eq!(
            (args.name, args.command_or_url, args.after_dashes),
            (None, None, vec!["npx".into(), "foo".into(), "name".into()])
        );
    }

    #[test]
    fn oauth_flags_and_scope_aliases_parse() {
        let args = add(&[
            "mcpenv",
            "add",
            "--client-id",
            "cid",
            "--callback-port",
            "8123",
            "--client-secret",
            "-s",
            "global",
            "api",
            "https://x/mcp",
        ]);
        assert_eq!(
            (
                args.client_id.as_deref(),
                args.callback_port,
                args.client_secret
            ),
            (Some("cid"), Some(8123), true)
        );
        assert!(args.scope.note().is_some());
        for port in ["0", "65536", "x", "-5"] {
            let argv = ["mcpenv", "add", "--callback-port", port, "a", "https://x"];
            assert!(Cli::try_parse_from(argv).is_err(), "{port}");
        }
        assert!(
            Cli::try_parse_from(["mcpenv", "add", "--client-secret=x", "a", "https://x"]).is_err()
        );
    }

    #[test]
    fn env_file_takes_an_optional_path() {
        let export = |argv: &[&str]| match Cli::try_parse_from(argv).unwrap().command {
            Command::Export(args) => args,
            other => panic!("{other:?}"),
        };
        let plain = export(&["mcpenv", "export", "--to", "vscode"]);
        assert_eq!((plain.env_file, plain.prune), (None, false));
        let default = export(&[
            "mcpenv",
            "export",
            "--to",
            "vscode",
            "--env-file",
            "--prune",
        ]);
        assert_eq!((default.env_file, default.prune), (Some(None), true));
        let given = export(&[
            "mcpenv",
            "export",
            "--env-file",
            "dev.env",
            "--to",
            "cursor",
        ]);
        assert_eq!(given.env_file, Some(Some(PathBuf::from("dev.env"))));
    }

    #[test]
    fn aliases_name_the_same_commands() {
        let parsed = |argv: &[&str]| Cli::try_parse_from(argv).unwrap().command;
        assert!(matches!(parsed(&["mcpenv", "ls"]), Command::List(_)));
        assert!(matches!(parsed(&["mcpenv", "rm", "x"]), Command::Remove(_)));
        let Command::AddFromClaudeDesktop(args) = parsed(&[
            "mcpenv",
            "add-from-claude-desktop",
            "-s",
            "user",
            "--dry-run",
        ]) else {
            panic!("not add-from-claude-desktop")
        };
        let import = args.to_import();
        assert_eq!(
            (import.from, import.options.scope, import.options.dry_run),
            (ClientArg::ClaudeDesktop, ScopeArg::User, true)
        );
    }

    #[test]
    fn a_dash_argument_without_double_dash_is_an_error() {
        let error = Cli::try_parse_from(["mcpenv", "add", "gh", "npx", "-y", "pkg"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn a_template_replaces_the_command_and_excludes_its_flags() {
        let args = add(&[
            "mcpenv",
            "add",
            "gh",
            "--template",
            "github",
            "--var",
            "A=1",
            "--remote",
            "1",
        ]);
        assert_eq!(
            (args.template.as_deref(), args.command_or_url, args.remote),
            (Some("github"), None, Some(1))
        );
        for bad in [
            &["mcpenv", "add", "gh"][..],
            &["mcpenv", "add", "gh", "--template", "github", "npx"],
            &["mcpenv", "add", "gh", "--template", "github", "-e", "A=1"],
            &[
                "mcpenv",
                "add",
                "gh",
                "--template",
                "github",
                "--package",
                "1",
                "--remote",
                "1",
            ],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn streamable_http_is_http() {
        assert_eq!(
            add(&["mcpenv", "add", "-t", "streamable-http", "a", "https://x"]).transport,
            Some(TransportArg::Http)
        );
    }

    #[test]
    fn probe_audit_calls_needs_audit_and_json_excludes_jsonl() {
        let probe = |argv: &[&str]| match Cli::try_parse_from(argv).map(|cli| cli.command) {
            Ok(Command::Probe(args)) => Some((args.audit, args.audit_calls, args.json, args.jsonl)),
            _ => None,
        };
        assert_eq!(
            probe(&["mcpenv", "probe", "--audit", "--audit-calls", "--jsonl"]),
            Some((true, true, false, true))
        );
        assert_eq!(probe(&["mcpenv", "probe", "--audit-calls"]), None);
        assert_eq!(probe(&["mcpenv", "probe", "--json", "--jsonl"]), None);
    }
}
