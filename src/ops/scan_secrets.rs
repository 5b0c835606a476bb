//! Literal secrets in MCP configs, found by walking each entry's
//! structure: in every file Claude Code and the other clients read, or in
//! the files given (a pre-commit hook's). What `mcpenv scan` shows.

use std::io;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::clients::{self, Client, placeholders};
use crate::layered::{Inventory, Note};
use crate::model::{Field, ServerEntry};
use crate::ops::list_servers::Warning;
use crate::ops::{Context, Error};
use crate::redact::{self, Shield};
use crate::scope::Scope;
use crate::secrets;
use crate::value_position::{ParsedText, Position, Syntax};

/// Every secret found.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    /// The findings, file by file.
    pub findings: Vec<ScanFinding>,
    /// How many files were read.
    pub files_scanned: usize,
    /// Files that could not be read, and placeholders their client never expands.
    pub warnings: Vec<Warning>,
    /// Whether only the files given were read (a hook's run): then
    /// nothing else was, not even `~/.claude.json` to mask an error.
    #[serde(skip)]
    pub given_files_only: bool,
}

/// One secret.
#[derive(Debug, Serialize)]
pub struct ScanFinding {
    /// The file.
    pub file: PathBuf,
    /// `local`, `project`, `user`, or the other client's name.
    pub scope: String,
    /// For a `~/.claude.json` local server: its project.
    pub project: Option<String>,
    /// The server.
    pub server: String,
    /// Where in the entry.
    pub field: Field,
    /// The rule that found it.
    pub rule: &'static str,
    /// The value, masked.
    pub value: String,
    /// 1-based line of the secret in the file, when found there.
    pub line: Option<usize>,
    /// 1-based column (in Unicode code points) of the secret in the file.
    pub column: Option<usize>,
    /// Where the secret is in the file, when found there.
    #[serde(skip)]
    pub position: Option<Position>,
    /// Whose file it is.
    #[serde(skip)]
    pub client: Client,
    /// The scope `mcpenv extract` moves this secret from, if it does.
    #[serde(skip)]
    pub extract_scope: Option<Scope>,
    /// The keys from the file's root to the server's entry.
    #[serde(skip)]
    entry_path: Vec<String>,
    /// Byte range of the secret in the field's string.
    #[serde(skip)]
    span: Range<usize>,
}

impl ScanFinding {
    fn locate(&mut self, parsed: &ParsedText<'_>) {
        let entry_path: Vec<&str> = self.entry_path.iter().map(String::as_str).collect();
        self.position = parsed.locate(&entry_path, &self.field, self.span.clone());
        self.line = self.position.map(|position| position.line);
        self.column = self.position.map(|position| position.column);
    }
}

/// A file to scan and how to label its servers.
struct Source {
    path: PathBuf,
    client: Option<Client>,
}

/// Which files to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Config files and directories to scan instead of every file Claude
    /// Code and the other clients read.
    pub paths: Vec<PathBuf>,
    /// Scan only `paths`, never following a symbolic link (what a
    /// pre-commit hook hands over is what git commits).
    pub only_paths: bool,
    /// Scan every other file when one of the configs does not parse, and
    /// say which one was not scanned (`doctor`, whose check reports it),
    /// rather than fail.
    pub skip_broken_configs: bool,
}

impl ScanRequest {
    /// Whether this scan reads only the files it was given (a hook's run):
    /// then nothing else is read, not even `~/.claude.json` to mask an
    /// error, as what a front-end shows quotes only those files.
    pub fn reads_only_given_files(&self) -> bool {
        self.only_paths || !self.paths.is_empty()
    }
}

/// Scans the configs for literal secrets: every file Claude Code and the
/// other clients read, or only the files of `request`. The shield learns
/// each secret found.
pub fn scan_secrets(ctx: &Context, request: &ScanRequest) -> Result<ScanReport, Error> {
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    let mut files_scanned = 0;
    let sources = if !request.reads_only_given_files() {
        let inventory = if request.skip_broken_configs {
            let mut inventory = Inventory::load_all(&ctx.locations);
            ctx.shield.learn_inventory(&inventory);
            warnings.extend(inventory.unloaded.drain(..).map(|file| Warning {
                message: format!("not scanned: {}", crate::check::error_chain(&file.problem)),
                file: file.path,
            }));
            inventory
        } else {
            ctx.inventory()?
        };
        let mut files: Vec<&Path> = Vec::new();
        for entry in &inventory.entries {
            if !files.contains(&entry.file.as_path()) {
                files.push(&entry.file);
            }
            let mut entry_path =
                crate::ops::extraction::target_of(ctx, entry.scope, &entry.file).object_path;
            entry_path.push(entry.name.clone());
            let origin = Origin {
                file: &entry.file,
                scope: entry.scope.as_str(),
                project: None,
                client: Client::ClaudeCode,
                extract_scope: extractable(ctx, entry.scope, &entry.file),
                entry_path,
            };
            findings.extend(scan_one(&ctx.shield, &origin, &entry.name, &entry.entry));
        }
        locate_inventory_findings(&mut findings);
        files_scanned += files.len();
        warnings.extend(inventory.notes.iter().map(note_warning));
        clients::known_files(
            &ctx.locations.home,
            &ctx.config_home,
            ctx.locations
                .git_root
                .as_deref()
                .unwrap_or(&ctx.locations.working_dir),
        )
        .into_iter()
        .filter(|file| file.path.is_file())
        .map(|file| Source {
            path: file.path,
            client: Some(file.client),
        })
        .collect()
    } else {
        let mut sources = Vec::new();
        for path in &request.paths {
            let full = lexical(&ctx.locations.working_dir.join(path));
            // A hook is handed what git commits, and git commits a link, not
            // the file it points to (perhaps `~/.claude.json`): never read it.
            if request.only_paths && full.is_symlink() {
                warnings.push(Warning {
                    file: full,
                    message: "a symbolic link: not followed, git commits the link and not the file it points to".to_string(),
                });
                continue;
            }
            collect(&full, &mut sources).map_err(|error| {
                Error::failure_from(format!("cannot read `{}`", path.display()), error)
                    .with_hint("check the path; scan takes config files and directories")
            })?;
        }
        sources
    };
    files_scanned += sources.len();
    for (file_findings, file_warnings) in scan_files(ctx, &sources) {
        findings.extend(file_findings);
        warnings.extend(file_warnings);
    }
    Ok(ScanReport {
        findings,
        files_scanned,
        warnings,
        given_files_only: request.reads_only_given_files(),
    })
}

/// The scope `mcpenv extract` would move a secret of `file` from: the
/// files it edits are `~/.claude.json` and this repository's `.mcp.json`.
fn extractable(ctx: &Context, scope: Scope, file: &Path) -> Option<Scope> {
    let file = lexical(file);
    let ours = match scope {
        Scope::Local | Scope::User => file == lexical(&ctx.locations.claude_json),
        Scope::Project => file.starts_with(repository_root(ctx)),
    };
    ours.then_some(scope)
}

/// The folder scan paths are reported relative to in SARIF.
pub fn repository_root(ctx: &Context) -> PathBuf {
    lexical(
        ctx.locations
            .git_root
            .as_deref()
            .unwrap_or(&ctx.locations.working_dir),
    )
}

/// `path` with `.` dropped and `..` applied to the part before it, without
/// asking the file system (a path to a file that is gone still compares).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Positions for the findings of Claude Code's own files, read again
/// (the inventory keeps no text).
fn locate_inventory_findings(findings: &mut [ScanFinding]) {
    let mut files: Vec<PathBuf> = findings.iter().map(|f| f.file.clone()).collect();
    files.sort();
    files.dedup();
    for file in files {
        let Ok(Some(text)) = crate::fsx::read_if_exists(&file) else {
            continue;
        };
        let Some(parsed) = ParsedText::parse(&text, Syntax::Json) else {
            continue;
        };
        for finding in findings.iter_mut().filter(|f| f.file == file) {
            finding.locate(&parsed);
        }
    }
}

fn note_warning(note: &Note) -> Warning {
    Warning {
        file: note.path.clone(),
        message: note.message.clone(),
    }
}

/// Files below `path` worth scanning: JSON, JSON with comments, TOML.
fn collect(path: &Path, sources: &mut Vec<Source>) -> io::Result<()> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() && !metadata.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file or directory (a FIFO, socket or device is never read)",
        ));
    }
    if metadata.is_file() {
        sources.push(Source {
            path: path.to_path_buf(),
            client: None,
        });
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let name = entry
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        if entry.is_dir() {
            if !matches!(name, ".git" | "node_modules" | "target") {
                collect(&entry, sources)?;
            }
        } else if entry.is_file()
            // Only regular files: a FIFO named `x.json` would block the read.
            && (name.ends_with(".json") || name.ends_with(".jsonc") || name.ends_with(".toml"))
        {
            sources.push(Source {
                path: entry,
                client: None,
            });
        }
    }
    Ok(())
}

type FileResult = (Vec<ScanFinding>, Vec<Warning>);

/// Scans files on every core, keeping their order.
fn scan_files(ctx: &Context, sources: &[Source]) -> Vec<FileResult> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(sources.len().max(1));
    let chunk = sources.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        // Values nested deep need the stack the main thread has too.
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                let thread = std::thread::Builder::new()
                    .stack_size(crate::document::STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        part.iter()
                            .map(|source| scan_file(ctx, source))
                            .collect::<Vec<_>>()
                    });
                (part, thread)
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(part, handle)| match handle {
                Ok(handle) => handle.join().unwrap_or_default(),
                Err(_) => part.iter().map(|source| scan_file(ctx, source)).collect(),
            })
            .collect()
    })
}

fn scan_file(ctx: &Context, source: &Source) -> FileResult {
    let path = &source.path;
    let problem = |message: String| {
        (
            Vec::new(),
            vec![Warning {
                file: path.clone(),
                message,
            }],
        )
    };
    let text = match crate::fsx::read_if_exists(path)
        .and_then(|text| text.ok_or_else(|| io::ErrorKind::NotFound.into()))
    {
        Ok(text) => text,
        Err(error) => return problem(format!("cannot be read: {error}")),
    };
    let value = match clients::parse(path, &text) {
        Ok(value) => value,
        Err(error) => return problem(format!("not scanned: {error}")),
    };
    // The path says whose file it is (`.cursor/mcp.json`); the content only
    // when the name is no client's.
    let client = source
        .client
        .or_else(|| clients::client_of_path(path))
        .unwrap_or_else(|| clients::guess_client(path, Some(&value)));
    let is_mcp_json = path.file_name().is_some_and(|name| name == ".mcp.json");
    let has_projects = value.get("projects").is_some();
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    for server in clients::servers(client, value) {
        let scope = match (client, &server.project, is_mcp_json) {
            (Client::ClaudeCode, Some(_), _) => Some(Scope::Local),
            (Client::ClaudeCode, None, true) => Some(Scope::Project),
            (Client::ClaudeCode, None, false) if has_projects => Some(Scope::User),
            _ => None,
        };
        let mut entry_path: Vec<String> = match &server.project {
            Some(project) => vec!["projects".into(), project.clone(), "mcpServers".into()],
            None => vec![client.servers_key().to_string()],
        };
        entry_path.push(server.name.clone());
        let origin = Origin {
            file: path,
            scope: scope.map_or(client.as_str(), Scope::as_str),
            project: server.project.clone(),
            client,
            // `extract -s local` edits this project's servers only.
            extract_scope: scope
                .filter(|scope| {
                    *scope != Scope::Local
                        || server.project.as_ref() == Some(&ctx.locations.local_key)
                })
                .and_then(|scope| extractable(ctx, scope, path)),
            entry_path,
        };
        findings.extend(scan_one(&ctx.shield, &origin, &server.name, &server.entry));
        warnings.extend(
            placeholders::notes(client, path, &server.name, &server.entry)
                .iter()
                .map(note_warning),
        );
    }
    if !findings.is_empty() {
        let syntax = if path
            .extension()
            .is_some_and(|extension| extension == "toml")
        {
            Syntax::Toml
        } else {
            Syntax::Json
        };
        if let Some(parsed) = ParsedText::parse(&text, syntax) {
            for finding in &mut findings {
                finding.locate(&parsed);
            }
        }
    }
    (findings, warnings)
}

/// Where an entry was found, as its findings report it.
struct Origin<'a> {
    file: &'a Path,
    /// `local`, `project`, `user`, or the client's name.
    scope: &'a str,
    project: Option<String>,
    client: Client,
    extract_scope: Option<Scope>,
    entry_path: Vec<String>,
}

/// The findings of one entry; the shield learns each secret, so nothing
/// printed later (a warning, an error) shows one whole.
fn scan_one(
    shield: &Shield,
    origin: &Origin<'_>,
    server: &str,
    entry: &ServerEntry,
) -> Vec<ScanFinding> {
    let findings = secrets::scan_entry(entry);
    shield.learn(|redactor| redactor.learn_scanned_entry(entry, &findings));
    findings
        .into_iter()
        .map(|finding| ScanFinding {
            file: origin.file.to_path_buf(),
            scope: origin.scope.to_string(),
            project: origin.project.clone(),
            server: server.to_string(),
            field: finding.field,
            rule: finding.rule,
            value: redact::mask(&finding.secret),
            line: None,
            column: None,
            position: None,
            client: origin.client,
            extract_scope: origin.extract_scope,
            entry_path: origin.entry_path.clone(),
            span: finding.span,
        })
        .collect()
}
