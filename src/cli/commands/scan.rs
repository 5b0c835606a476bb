//! `mcpenv scan`: literal secrets in MCP configs, found by walking each
//! entry's structure. Exits 1 when anything is found, for CI and hooks.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::args::ScanArgs;
use crate::cli::commands::list::Warning;
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::output::Shield;
use crate::cli::render::{Cell, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::clients::{self, Client};
use crate::layered::{Note, placeholder_notes};
use crate::model::{Field, ServerEntry};
use crate::redact;
use crate::secrets;

/// Every secret found.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    /// The findings, file by file.
    pub findings: Vec<ScanFinding>,
    /// How many files were read.
    pub files_scanned: usize,
    /// Files that could not be read, and placeholders Claude Code never expands.
    pub warnings: Vec<Warning>,
    #[serde(skip)]
    extract_hint: String,
    #[serde(skip)]
    shown_files: Vec<String>,
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
}

impl Report for ScanReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.findings.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .findings
            .iter()
            .zip(&self.shown_files)
            .map(|(finding, file)| {
                vec![
                    Cell::plain(file),
                    Cell::plain(&finding.scope),
                    Cell::plain(&finding.server),
                    Cell::plain(finding.field.to_string()),
                    Cell::plain(finding.rule),
                    Cell::plain(&finding.value),
                ]
            })
            .collect();
        table(
            out,
            &["FILE", "SCOPE", "SERVER", "FIELD", "RULE", "VALUE"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        let files = if self.files_scanned == 1 {
            "file"
        } else {
            "files"
        };
        if self.findings.is_empty() {
            writeln!(
                err,
                "No literal secrets found in {} {files}",
                self.files_scanned
            )
        } else {
            let secrets = if self.findings.len() == 1 {
                "secret"
            } else {
                "secrets"
            };
            writeln!(
                err,
                "Found {} literal {secrets} in {} {files}",
                self.findings.len(),
                self.files_scanned
            )?;
            writeln!(err, "hint: {}", self.extract_hint)
        }
    }

    fn failed(&self) -> bool {
        !self.findings.is_empty()
    }
}

/// A file to scan and how to label its servers.
struct Source {
    path: PathBuf,
    client: Option<Client>,
}

/// Runs `mcpenv scan`.
pub fn run(ctx: &Ctx, args: &ScanArgs) -> Result<ScanReport, CliError> {
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    let mut files_scanned = 0;
    let sources = if args.paths.is_empty() {
        let inventory = ctx.inventory()?;
        let mut files: Vec<&Path> = Vec::new();
        for entry in &inventory.entries {
            if !files.contains(&entry.file.as_path()) {
                files.push(&entry.file);
            }
            findings.extend(scan_one(
                &ctx.shield,
                &entry.file,
                entry.scope.as_str(),
                None,
                &entry.name,
                &entry.entry,
            ));
        }
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
        for path in &args.paths {
            collect(&ctx.locations.working_dir.join(path), &mut sources).map_err(|error| {
                CliError::failure_from(format!("cannot read `{}`", path.display()), error)
                    .with_hint("check the path; scan takes config files and directories")
            })?;
        }
        sources
    };
    files_scanned += sources.len();
    for (file_findings, file_warnings) in scan_files(&ctx.shield, &sources) {
        findings.extend(file_findings);
        warnings.extend(file_warnings);
    }
    let shown_files = findings
        .iter()
        .map(|finding| shown_path(ctx, &finding.file))
        .collect();
    Ok(ScanReport {
        findings,
        files_scanned,
        warnings,
        extract_hint: format!(
            "move them into `.env` and leave `${{VAR}}` placeholders: `{}` (or `{}` for every scope)",
            ctx.command(&["extract"]),
            ctx.command(&["extract", "--all"])
        ),
        shown_files,
    })
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
fn scan_files(shield: &Shield, sources: &[Source]) -> Vec<FileResult> {
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
                            .map(|source| scan_file(shield, source))
                            .collect::<Vec<_>>()
                    });
                (part, thread)
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(part, handle)| match handle {
                Ok(handle) => handle.join().unwrap_or_default(),
                Err(_) => part
                    .iter()
                    .map(|source| scan_file(shield, source))
                    .collect(),
            })
            .collect()
    })
}

fn scan_file(shield: &Shield, source: &Source) -> FileResult {
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
    let client = source
        .client
        .unwrap_or_else(|| clients::guess_client(path, Some(&value)));
    let is_mcp_json = path.file_name().is_some_and(|name| name == ".mcp.json");
    let has_projects = value.get("projects").is_some();
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    for server in clients::servers(client, value) {
        let scope = match (client, &server.project, is_mcp_json) {
            (Client::ClaudeCode, Some(_), _) => "local",
            (Client::ClaudeCode, None, true) => "project",
            (Client::ClaudeCode, None, false) if has_projects => "user",
            (client, _, _) => client.as_str(),
        };
        findings.extend(scan_one(
            shield,
            path,
            scope,
            server.project.clone(),
            &server.name,
            &server.entry,
        ));
        if client == Client::ClaudeCode {
            warnings.extend(
                placeholder_notes(path, &server.name, &server.entry)
                    .iter()
                    .map(note_warning),
            );
        }
    }
    (findings, warnings)
}

/// The findings of one entry; the shield learns each secret, so nothing
/// printed later (a warning, an error) shows one whole.
fn scan_one(
    shield: &Shield,
    file: &Path,
    scope: &str,
    project: Option<String>,
    server: &str,
    entry: &ServerEntry,
) -> Vec<ScanFinding> {
    shield.learn(|redactor| redactor.learn_entry(entry));
    secrets::scan_entry(entry)
        .into_iter()
        .map(|finding| ScanFinding {
            file: file.to_path_buf(),
            scope: scope.to_string(),
            project: project.clone(),
            server: server.to_string(),
            field: finding.field,
            rule: finding.rule,
            value: redact::mask(&finding.secret),
        })
        .collect()
}
