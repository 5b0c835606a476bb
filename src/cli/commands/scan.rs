//! `mcpenv scan`: literal secrets in MCP configs, found by walking each
//! entry's structure. Exits 1 when anything is found, for CI and hooks.
//! Prints a table, mcpenv's JSON, or SARIF for code scanning.

use std::io::{self, Write};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use clap::ValueEnum;
use serde::Serialize;

use crate::cli::args::{ScanArgs, ScanFormat};
use crate::cli::commands::list::Warning;
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::output::Shield;
use crate::cli::render::{self, Cell, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::clients::{self, Client, placeholders};
use crate::layered::Note;
use crate::model::{Field, ServerEntry};
use crate::redact;
use crate::sarif::{self, Alert, FileUri};
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
    #[serde(skip)]
    hints: Vec<String>,
    #[serde(skip)]
    shown_files: Vec<String>,
    #[serde(skip)]
    given_files_only: bool,
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
    #[serde(skip)]
    position: Option<Position>,
    #[serde(skip)]
    client: Client,
    /// The scope `mcpenv extract` moves this secret from, if it does.
    #[serde(skip)]
    extract_scope: Option<Scope>,
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
        let files = plural(self.files_scanned, "file", "files");
        if self.findings.is_empty() {
            return writeln!(
                err,
                "No literal secrets found in {} {files}",
                self.files_scanned
            );
        }
        writeln!(
            err,
            "Found {} literal {} in {} of {} {files}: {}",
            self.findings.len(),
            plural(self.findings.len(), "secret", "secrets"),
            self.files_with_findings(),
            self.files_scanned,
            self.places()
        )?;
        for hint in &self.hints {
            writeln!(err, "hint: {hint}")?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        !self.findings.is_empty()
    }

    fn learns_world(&self) -> bool {
        !self.given_files_only
    }
}

impl ScanReport {
    fn files_with_findings(&self) -> usize {
        let mut files: Vec<&Path> = self.findings.iter().map(|f| f.file.as_path()).collect();
        files.sort();
        files.dedup();
        files.len()
    }

    /// `2 in local scope, 1 in Cursor`: where the findings are, in order
    /// of first appearance.
    fn places(&self) -> String {
        let mut places: Vec<(String, usize)> = Vec::new();
        for finding in &self.findings {
            let place = if finding.client == Client::ClaudeCode
                && ["local", "project", "user"].contains(&finding.scope.as_str())
            {
                format!("{} scope", finding.scope)
            } else {
                finding.client.title().to_string()
            };
            match places.iter_mut().find(|(known, _)| *known == place) {
                Some((_, count)) => *count += 1,
                None => places.push((place, 1)),
            }
        }
        places
            .iter()
            .map(|(place, count)| format!("{count} in {place}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

/// A file to scan and how to label its servers.
struct Source {
    path: PathBuf,
    client: Option<Client>,
}

/// Runs `mcpenv scan`, and says how to print its report.
pub fn run(ctx: &Ctx, args: &ScanArgs) -> Result<(ScanReport, ScanFormat), CliError> {
    let format = match (args.json, args.format) {
        (false, format) => format.unwrap_or(ScanFormat::Text),
        (true, None | Some(ScanFormat::Json)) => ScanFormat::Json,
        (true, Some(other)) => {
            let other = other
                .to_possible_value()
                .map(|value| value.get_name().to_string())
                .unwrap_or_default();
            return Err(
                CliError::usage(format!("`--json` conflicts with `--format {other}`"))
                    .with_hint("keep one of them: `--json` is `--format json`"),
            );
        }
    };
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    let mut files_scanned = 0;
    let sources = if !reads_only_given_files(args) {
        let inventory = ctx.inventory()?;
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
        for path in &args.paths {
            let full = lexical(&ctx.locations.working_dir.join(path));
            // A hook is handed what git commits, and git commits a link, not
            // the file it points to (perhaps `~/.claude.json`): never read it.
            if args.only_paths && full.is_symlink() {
                warnings.push(Warning {
                    file: full,
                    message: "a symbolic link: not followed, git commits the link and not the file it points to".to_string(),
                });
                continue;
            }
            collect(&full, &mut sources).map_err(|error| {
                CliError::failure_from(format!("cannot read `{}`", path.display()), error)
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
    let shown_files = findings
        .iter()
        .map(|finding| shown_path(ctx, &finding.file))
        .collect();
    let hints = hints(ctx, &findings);
    let report = ScanReport {
        findings,
        files_scanned,
        warnings,
        hints,
        shown_files,
        given_files_only: reads_only_given_files(args),
    };
    Ok((report, format))
}

/// Whether this scan reads only the files it was given (a hook's run): then
/// nothing else is read, not even `~/.claude.json` to mask an error, as
/// what it prints quotes only those files.
pub fn reads_only_given_files(args: &ScanArgs) -> bool {
    args.only_paths || !args.paths.is_empty()
}

/// Prints the report as `format` asks.
pub fn emit(ctx: &Ctx, report: &ScanReport, format: ScanFormat, quiet: bool) -> io::Result<bool> {
    match format {
        ScanFormat::Text => render::emit(ctx, report, false, quiet),
        ScanFormat::Json => render::emit(ctx, report, true, quiet),
        ScanFormat::Sarif => {
            let log = sarif::log(env!("CARGO_PKG_VERSION"), &alerts(ctx, report));
            let document = serde_json::to_value(&log).map_err(io::Error::other)?;
            render::emit_document(ctx, report, document, quiet)
        }
    }
}

/// The scope `mcpenv extract` would move a secret of `file` from: the
/// files it edits are `~/.claude.json` and this repository's `.mcp.json`.
fn extractable(ctx: &Ctx, scope: Scope, file: &Path) -> Option<Scope> {
    let file = lexical(file);
    let ours = match scope {
        Scope::Local | Scope::User => file == lexical(&ctx.locations.claude_json),
        Scope::Project => file.starts_with(repository_root(ctx)),
    };
    ours.then_some(scope)
}

/// The folder scan paths are reported relative to in SARIF.
fn repository_root(ctx: &Ctx) -> PathBuf {
    lexical(
        ctx.locations
            .git_root
            .as_deref()
            .unwrap_or(&ctx.locations.working_dir),
    )
}

/// `path` with `.` dropped and `..` applied to the part before it, without
/// asking the file system (a path to a file that is gone still compares).
fn lexical(path: &Path) -> PathBuf {
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

/// One hint for the secrets `extract` moves (naming the exact scopes), and
/// one per client for the files it does not edit, in that client's syntax.
fn hints(ctx: &Ctx, findings: &[ScanFinding]) -> Vec<String> {
    let mut hints = Vec::new();
    let mut scopes: Vec<Scope> = findings.iter().filter_map(|f| f.extract_scope).collect();
    scopes.sort();
    scopes.dedup();
    let extract = match scopes.as_slice() {
        [] => None,
        [Scope::Project] => Some(ctx.command(&["extract"])),
        [one] => Some(ctx.command(&["extract", "-s", one.as_str()])),
        _ => Some(ctx.command(&["extract", "--all"])),
    };
    if let Some(command) = extract {
        let store = shown_path(ctx, &ctx.user_env_file());
        let destination = match scopes.as_slice() {
            [Scope::User] => format!("your store `{store}`"),
            all if all.contains(&Scope::User) => {
                format!("`.env` (user-scope ones into `{store}`)")
            }
            _ => "`.env`".to_string(),
        };
        hints.push(format!(
            "move them into {destination} and leave `${{VAR}}` placeholders: `{command}`"
        ));
    }
    let mut by_client: Vec<(Client, Vec<String>)> = Vec::new();
    for finding in findings.iter().filter(|f| f.extract_scope.is_none()) {
        let file = format!("`{}`", shown_path(ctx, &finding.file));
        match by_client
            .iter_mut()
            .find(|(client, _)| *client == finding.client)
        {
            Some((_, files)) if files.contains(&file) => {}
            Some((_, files)) => files.push(file),
            None => by_client.push((finding.client, vec![file])),
        }
    }
    for (client, files) in by_client {
        hints.push(format!(
            "in {} ({}): {}",
            files.join(", "),
            client.title(),
            placeholders::secret_advice(client)
        ));
    }
    hints
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
fn scan_files(ctx: &Ctx, sources: &[Source]) -> Vec<FileResult> {
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

fn scan_file(ctx: &Ctx, source: &Source) -> FileResult {
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

/// The SARIF alerts of a report: files relative to the repository root
/// when inside it, each secret shown masked.
fn alerts(ctx: &Ctx, report: &ScanReport) -> Vec<Alert> {
    let root = repository_root(ctx);
    report
        .findings
        .iter()
        .map(|finding| {
            let file = lexical(&finding.file);
            let uri = match file.strip_prefix(&root) {
                Ok(relative) => FileUri::InRepository(relative_uri(relative)),
                Err(_) => FileUri::Elsewhere(
                    url::Url::from_file_path(&file)
                        .map_or_else(|()| file.display().to_string(), String::from),
                ),
            };
            let description = secrets::rules()
                .iter()
                .find(|rule| rule.id == finding.rule)
                .map_or_else(|| "secret".to_string(), |rule| rule.provider.to_string());
            let project = finding
                .project
                .as_deref()
                .map(|project| format!(" (project `{project}`)"))
                .unwrap_or_default();
            Alert {
                rule: finding.rule.to_string(),
                message: format!(
                    "Server `{}`{project}: `{}` holds a literal {description} (`{}`)",
                    finding.server, finding.field, finding.value
                ),
                rule_description: description,
                identity: [
                    uri_text(&uri),
                    finding.project.clone().unwrap_or_default(),
                    finding.server.clone(),
                    finding.field.to_string(),
                    finding.rule.to_string(),
                ]
                .join("\0"),
                file: uri,
                position: finding.position,
            }
        })
        .collect()
}

fn uri_text(uri: &FileUri) -> String {
    match uri {
        FileUri::InRepository(uri) | FileUri::Elsewhere(uri) => uri.clone(),
    }
}

/// A relative path as a URI reference: `/`-separated, each segment
/// percent-encoded where a URI needs it.
fn relative_uri(relative: &Path) -> String {
    const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'[')
        .add(b'\\')
        .add(b']')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}');
    relative
        .components()
        .map(|component| {
            let segment = component.as_os_str().to_string_lossy();
            percent_encoding::utf8_percent_encode(&segment, SEGMENT).to_string()
        })
        .collect::<Vec<_>>()
        .join("/")
}
