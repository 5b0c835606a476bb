//! Literal secrets in MCP configs, found by walking each entry's
//! structure: in every file Claude Code and the other clients read, or in
//! the files given (a pre-commit hook's). What `mcpenv scan` shows.

use std::io;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::clients::{self, Client, placeholders};
use crate::config::error::ConfigError;
use crate::config::expansion;
use crate::config::inventory::{FileProblem, Inventory, Note};
use crate::config::model::Field;
use crate::config::scope::Scope;
use crate::ops::list_servers::Warning;
use crate::ops::{Context, Error};
use crate::secrets;
use crate::secrets::node::{self, Node};
use crate::secrets::redact::{self, Redactor};
use crate::secrets::value_position::{JsonShape, ParsedText, Position, Syntax};

mod text;
pub mod walk;

/// Every secret found.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    /// The findings, file by file.
    pub findings: Vec<ScanFinding>,
    /// How many files were read.
    pub files_scanned: usize,
    /// Files that do not parse: their text was scanned instead, and the
    /// scan fails (a hook must not pass a file nobody can read as config).
    pub unparsed: Vec<Unparsed>,
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
    /// The server; `None` for a secret found in the text of a file that
    /// does not parse.
    pub server: Option<String>,
    /// Where in the entry; `None` as for `server`.
    pub field: Option<Field>,
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

/// A file that does not parse, and where.
#[derive(Debug, Clone, Serialize)]
pub struct Unparsed {
    /// The file.
    pub file: PathBuf,
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// 1-based column of the problem, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Unparsed {
    /// The file, with `:line:column` when known.
    pub fn located(&self, file: &str) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{file}:{line}:{column}"),
            _ => file.to_string(),
        }
    }
}

impl ScanFinding {
    /// A finding as a scan reports it, for tests of its rendering.
    #[cfg(test)]
    pub(crate) fn for_tests(
        file: PathBuf,
        server: Option<&str>,
        field: Option<Field>,
        value: &str,
        line: Option<usize>,
    ) -> Self {
        Self {
            file,
            scope: "project".to_string(),
            project: server.map(|server| format!("/p/{server}")),
            server: server.map(str::to_string),
            field,
            rule: "github-pat",
            value: value.to_string(),
            line,
            column: line.map(|line| line + 1),
            position: None,
            client: Client::ClaudeCode,
            extract_scope: None,
            entry_path: Vec::new(),
            span: 0..0,
        }
    }

    fn locate(&mut self, parsed: &ParsedText<'_>) {
        let Some(field) = &self.field else {
            return;
        };
        let entry_path: Vec<&str> = self.entry_path.iter().map(String::as_str).collect();
        self.position = parsed.locate(&entry_path, field, self.span.clone());
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
    /// Scan every other file when one of the configs cannot be read, and
    /// say which one was not scanned (`doctor`, whose check reports it),
    /// rather than fail. A config that does not parse is scanned as text
    /// either way.
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
    let mut unparsed = Vec::new();
    let sources = if !request.reads_only_given_files() {
        let mut inventory = Inventory::load_all(&ctx.locations);
        ctx.shield.learn_inventory(&inventory);
        for file in std::mem::take(&mut inventory.unloaded) {
            let error = match file.problem {
                FileProblem::Config(error) => error,
                problem @ FileProblem::NoMcpServers { .. } => {
                    warnings.push(Warning {
                        message: problem.to_string(),
                        file: file.path,
                    });
                    continue;
                }
            };
            if let Some(broken) = unparsed_config(&error) {
                // The scope's name when the file holds one scope only.
                let scope = match file.scopes.as_slice() {
                    [scope] => scope.as_str(),
                    _ => Client::ClaudeCode.as_str(),
                };
                if !files_in(&unparsed).contains(&file.path.as_path()) {
                    let text = read_lossy(&file.path);
                    ctx.shield.learn(|redactor| {
                        findings.extend(scan_text(
                            redactor,
                            &file.path,
                            &text,
                            scope,
                            Client::ClaudeCode,
                        ));
                    });
                    files_scanned += 1;
                    unparsed.push(broken);
                }
            } else if request.skip_broken_configs {
                warnings.push(Warning {
                    message: format!("not scanned: {}", crate::check::error_chain(&error)),
                    file: file.path,
                });
            } else {
                return Err(error.into());
            }
        }
        let mut files: Vec<&Path> = Vec::new();
        for entry in &inventory.entries {
            if !files.contains(&entry.file.as_path()) {
                files.push(&entry.file);
            }
            let mut entry_path =
                crate::ops::extraction_inputs::target_of(ctx, entry.scope, &entry.file).object_path;
            entry_path.push(entry.name.clone());
            let origin = Origin {
                file: &entry.file,
                scope: entry.scope.as_str(),
                project: None,
                client: Client::ClaudeCode,
                extract_scope: extractable(ctx, entry.scope, &entry.file),
                entry_path,
            };
            let fields = entry
                .entry
                .expandable_fields_where(expansion::may_hold_references);
            ctx.shield.learn(|redactor| {
                findings.extend(scan_one(
                    redactor,
                    &origin,
                    &entry.name,
                    secrets::scan_entry(&entry.entry),
                    &fields,
                ));
            });
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
            let walked = walk::collect(&full, !request.only_paths).map_err(|error| {
                Error::failure_from(format!("cannot read `{}`", path.display()), error)
                    .with_hint("check the path; scan takes config files and directories")
            })?;
            warnings.extend(walked.skipped);
            sources.extend(
                walked
                    .files
                    .into_iter()
                    .map(|path| Source { path, client: None }),
            );
        }
        sources
    };
    files_scanned += sources.len();
    for result in scan_files(ctx, &sources) {
        findings.extend(result.findings);
        warnings.extend(result.warnings);
        unparsed.extend(result.unparsed);
    }
    Ok(ScanReport {
        findings,
        files_scanned,
        unparsed,
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
        let Ok(Some(text)) = crate::mechanics::fsx::read_if_exists(&file) else {
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

/// What one file yields.
#[derive(Debug, Default)]
struct FileResult {
    findings: Vec<ScanFinding>,
    warnings: Vec<Warning>,
    unparsed: Option<Unparsed>,
}

/// Scans files on every core, keeping their order: each core takes a
/// share of the files in a row and learns their secrets into a redactor of
/// its own (no lock per entry), which the shield absorbs in file order.
fn scan_files(ctx: &Context, sources: &[Source]) -> Vec<FileResult> {
    let scan_part = |part: &[Source]| {
        let mut redactor = Redactor::new();
        let results: Vec<FileResult> = part
            .iter()
            .map(|source| scan_file(ctx, &mut redactor, source))
            .collect();
        // The forms of each secret are made here, on this core.
        redactor.settle();
        (results, redactor)
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(sources.len().max(1));
    let chunk = sources.len().div_ceil(workers).max(1);
    let parts: Vec<(Vec<FileResult>, Redactor)> = std::thread::scope(|scope| {
        // Values nested deep need the stack the main thread has too.
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                let thread = std::thread::Builder::new()
                    .stack_size(crate::mechanics::document::STACK_BYTES)
                    .spawn_scoped(scope, move || scan_part(part));
                (part, thread)
            })
            .collect();
        handles
            .into_iter()
            .map(|(part, handle)| match handle {
                Ok(handle) => handle.join().unwrap_or_default(),
                Err(_) => scan_part(part),
            })
            .collect()
    });
    let mut results = Vec::with_capacity(sources.len());
    for (part, redactor) in parts {
        ctx.shield.absorb(redactor);
        results.extend(part);
    }
    results
}

fn scan_file(ctx: &Context, redactor: &mut Redactor, source: &Source) -> FileResult {
    let path = &source.path;
    let bytes = match crate::mechanics::fsx::read_regular(path)
        .and_then(|bytes| bytes.ok_or_else(|| io::ErrorKind::NotFound.into()))
    {
        Ok(bytes) => bytes,
        Err(error) => {
            return FileResult {
                warnings: vec![Warning {
                    file: path.clone(),
                    message: format!("cannot be read: {error}"),
                }],
                ..FileResult::default()
            };
        }
    };
    let is_mcp_json = path.file_name().is_some_and(|name| name == ".mcp.json");
    // A file that does not parse is scanned as text and fails the scan.
    let broken = |redactor: &mut Redactor, text: &str, unparsed: Unparsed| {
        let client = source
            .client
            .or_else(|| clients::client_of_path(path))
            .unwrap_or_else(|| clients::guess_client(path, None));
        let scope = if client == Client::ClaudeCode && is_mcp_json {
            Scope::Project.as_str()
        } else {
            client.as_str()
        };
        FileResult {
            findings: scan_text(redactor, path, text, scope, client),
            warnings: Vec::new(),
            unparsed: Some(unparsed),
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let valid = error.utf8_error().valid_up_to();
            let (line, column) =
                line_column(&String::from_utf8_lossy(&error.as_bytes()[..valid]), valid);
            let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
            return broken(
                redactor,
                &text,
                Unparsed {
                    file: path.clone(),
                    line: Some(line),
                    column: Some(column),
                    message: "not UTF-8 text".to_string(),
                },
            );
        }
    };
    let is_toml = path
        .extension()
        .is_some_and(|extension| extension == "toml");
    // `clients::parse` reads strict JSON with serde_json first, as here;
    // knowing the text is strict lets its findings be located without
    // parsing it again. Strict JSON within mcpenv's depth bound is read in
    // one pass that finds where its members are, which locating needs,
    // and builds its tree borrowed from the text (no `String` per string,
    // no index per object). What that pass leaves (a syntax error, a
    // byte-order mark, serde_json's own markers) is measured first (the
    // parse needs its depth), then read by serde_json as before; the
    // other syntaxes go through serde_json's `Value`.
    let (shape, borrowed) = match (!is_toml).then(|| JsonShape::read(&text)).flatten() {
        Some((shape, root)) => (Some(shape), Some(root)),
        None => {
            let shape = (!is_toml).then(|| JsonShape::of(&text)).flatten();
            let borrowed = shape
                .as_ref()
                .filter(|shape| shape.depth() <= crate::mechanics::document::MAX_DEPTH)
                .and_then(|_| Node::parse(&text));
            (shape, borrowed)
        }
    };
    let strict = match (&borrowed, is_toml) {
        (Some(_), _) | (None, true) => None,
        (None, false) => match &shape {
            Some(shape) => {
                crate::mechanics::document::parse_value_of_depth(&text, shape.depth()).ok()
            }
            None => crate::mechanics::document::parse_value(&text).ok(),
        },
    };
    let read_strict = borrowed.is_some() || strict.is_some();
    let value = match (borrowed.is_some(), strict) {
        (true, _) => None,
        (false, Some(value)) => Some(value),
        (false, None) => match clients::parse(path, &text) {
            Ok(value) => Some(value),
            Err(error) => {
                // Claude Code's own files say what the loader says of them
                // (`check`, `doctor` and a scan of every scope quote it).
                let loader = (clients::client_of_path(path) == Some(Client::ClaudeCode))
                    .then(|| {
                        crate::config::json_files::parse_document(path, text.clone(), &[]).err()
                    })
                    .flatten()
                    .as_ref()
                    .and_then(unparsed_config);
                let unparsed = loader.unwrap_or_else(|| Unparsed {
                    file: path.clone(),
                    line: Some(error.line),
                    column: Some(error.column),
                    message: error.message,
                });
                return broken(redactor, &text, unparsed);
            }
        },
    };
    let root = match (borrowed, &value) {
        (Some(root), _) => root,
        (None, Some(value)) => Node::of_value(value),
        (None, None) => Node::Null,
    };
    // The path says whose file it is (`.cursor/mcp.json`); the content only
    // when the name is no client's.
    let client = source
        .client
        .or_else(|| clients::client_of_path(path))
        .unwrap_or_else(|| clients::guess_client_of(path, &root));
    let has_projects = root.get("projects").is_some();
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    for server in clients::servers_of(client, root) {
        let scope = match (client, &server.project, is_mcp_json) {
            (Client::ClaudeCode, Some(_), _) => Some(Scope::Local),
            (Client::ClaudeCode, None, true) => Some(Scope::Project),
            (Client::ClaudeCode, None, false) if has_projects => Some(Scope::User),
            _ => None,
        };
        let project = server.project.as_deref().map(str::to_string);
        let mut entry_path: Vec<String> = match &project {
            Some(project) => vec!["projects".into(), project.clone(), "mcpServers".into()],
            None => vec![client.servers_key().to_string()],
        };
        entry_path.push(server.name.to_string());
        let origin = Origin {
            file: path,
            scope: scope.map_or(client.as_str(), Scope::as_str),
            extract_scope: scope
                // `extract -s local` edits this project's servers only.
                .filter(|scope| {
                    *scope != Scope::Local || project.as_ref() == Some(&ctx.locations.local_key)
                })
                .and_then(|scope| extractable(ctx, scope, path)),
            project,
            client,
            entry_path,
        };
        // The fields that may hold a placeholder, listed once for the
        // redactor's defaults and the placeholder notes.
        let fields = node::expandable_fields_where(&server.entry, expansion::may_hold_forms);
        findings.extend(scan_one(
            redactor,
            &origin,
            &server.name,
            secrets::scan_entry_members(&server.entry),
            &fields,
        ));
        warnings.extend(
            placeholders::notes_of_members(client, path, &server.name, &server.entry, &fields)
                .iter()
                .map(note_warning),
        );
    }
    if !findings.is_empty() {
        let parsed = if read_strict {
            match shape {
                Some(shape) => shape.into_parsed(),
                None => ParsedText::strict_json(&text),
            }
        } else if is_toml {
            ParsedText::parse(&text, Syntax::Toml)
        } else {
            ParsedText::parse(&text, Syntax::Json)
        };
        if let Some(parsed) = parsed {
            for finding in &mut findings {
                finding.locate(&parsed);
            }
        }
    }
    FileResult {
        findings,
        warnings,
        unparsed: None,
    }
}

/// The [`Unparsed`] of a config error that means the file could not be
/// read as config at all (its text may still be read); `None` for one
/// where there is no text to read (a FIFO, a missing permission, an empty
/// file).
fn unparsed_config(error: &ConfigError) -> Option<Unparsed> {
    let (line, column, message) = match error {
        ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } => (Some(*line), Some(*column), message.clone()),
        ConfigError::Read { source, .. } if source.kind() == io::ErrorKind::InvalidData => {
            (None, None, "not UTF-8 text".to_string())
        }
        ConfigError::TooDeep { pointer, limit, .. } => (
            None,
            None,
            format!("nested more than {limit} levels deep at `{pointer}`"),
        ),
        ConfigError::TooLarge { size, limit, .. } => (
            None,
            None,
            format!("{size} bytes, larger than the {limit} bytes Claude Code reads"),
        ),
        ConfigError::Shape { detail, .. } => (None, None, format!("malformed: {detail}")),
        _ => return None,
    };
    Some(Unparsed {
        file: error.path().clone(),
        line,
        column,
        message,
    })
}

fn files_in(unparsed: &[Unparsed]) -> Vec<&Path> {
    unparsed.iter().map(|file| file.file.as_path()).collect()
}

/// The text of `path`, invalid UTF-8 replaced; empty when it cannot be read.
fn read_lossy(path: &Path) -> String {
    match crate::mechanics::fsx::read_regular(path) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    }
}

/// 1-based line and column (in code points) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    (line, column)
}

/// The secrets in the text of `file`, which does not parse: no server or
/// field is known, only where each secret sits. `redactor` learns each.
fn scan_text(
    redactor: &mut Redactor,
    file: &Path,
    text: &str,
    scope: &str,
    client: Client,
) -> Vec<ScanFinding> {
    text::scan_text(text)
        .into_iter()
        .map(|found| {
            let secret = &text[found.span.clone()];
            redactor.learn(secret);
            let (line, column) = line_column(text, found.span.start);
            let (end_line, end_column) = line_column(text, found.span.end);
            ScanFinding {
                file: file.to_path_buf(),
                scope: scope.to_string(),
                project: None,
                server: None,
                field: None,
                rule: found.rule,
                value: redact::mask(secret),
                line: Some(line),
                column: Some(column),
                position: Some(Position {
                    line,
                    column,
                    end_line,
                    end_column,
                }),
                client,
                extract_scope: None,
                entry_path: Vec::new(),
                span: found.span,
            }
        })
        .collect()
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

/// The findings of one entry (what [`secrets::scan_entry`] found in it);
/// `redactor` learns each secret, so nothing printed later (a warning, an
/// error) shows one whole, and each placeholder default among `fields`
/// (the entry's expandable fields that may hold one, see
/// [`Redactor::learn_scanned_fields`]).
fn scan_one(
    redactor: &mut Redactor,
    origin: &Origin<'_>,
    server: &str,
    findings: Vec<secrets::Finding>,
    fields: &[(Field, &str)],
) -> Vec<ScanFinding> {
    redactor.learn_scanned_fields(&findings, fields);
    findings
        .into_iter()
        .map(|finding| ScanFinding {
            file: origin.file.to_path_buf(),
            scope: origin.scope.to_string(),
            project: origin.project.clone(),
            server: Some(server.to_string()),
            field: Some(finding.field),
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
