//! `mcpenv scan`: literal secrets in MCP configs, found by walking each
//! entry's structure. Exits 1 when anything is found, for CI and hooks.
//! Prints a table, mcpenv's JSON, or SARIF for code scanning.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::Path;

use clap::ValueEnum;
use serde::Serialize;

use crate::cli::args::{ScanArgs, ScanFormat};
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::render::{self, Cell, RED, Report, shown, table, warning};
use crate::cli::resolve::Ctx;
use crate::clients::{Client, placeholders};
use crate::config::scope::Scope;
use crate::ops::scan_secrets::{
    ScanFinding, ScanReport, ScanRequest, Unparsed, lexical, repository_root, scan_secrets,
};
use crate::secrets;
use crate::secrets::sarif::{self, Alert, AlertKind, FileUri};
use crate::secrets::value_position::Position;

/// The report with what the terminal shows of it: each finding's file as
/// shown, and what to do.
#[derive(Debug, Serialize)]
pub struct ScanOutput {
    /// Every secret found.
    #[serde(flatten)]
    pub report: ScanReport,
    #[serde(skip)]
    hints: Vec<String>,
    #[serde(skip)]
    shown_files: Vec<String>,
}

impl Report for ScanOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.report.findings.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .report
            .findings
            .iter()
            .zip(&self.shown_files)
            .map(|(finding, file)| {
                // A secret in a file that does not parse: where it sits.
                let file = match (&finding.field, finding.line, finding.column) {
                    (None, Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                    _ => file.clone(),
                };
                vec![
                    Cell::plain(file),
                    Cell::plain(&finding.scope),
                    Cell::plain(finding.server.as_deref().unwrap_or("-")),
                    Cell::plain(
                        finding
                            .field
                            .as_ref()
                            .map_or_else(|| "-".to_string(), ToString::to_string),
                    ),
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
        for note in &self.report.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        for line in self.unparsed_lines() {
            let red = RED.bold();
            writeln!(err, "{red}error:{red:#} {}", shown(&line))?;
        }
        let files = plural(self.report.files_scanned, "file", "files");
        if self.report.findings.is_empty() {
            writeln!(
                err,
                "No literal secrets found in {} {files}",
                self.report.files_scanned
            )?;
            for hint in &self.hints {
                writeln!(err, "hint: {hint}")?;
            }
            return Ok(());
        }
        writeln!(
            err,
            "Found {} literal {} in {} of {} {files}: {}",
            self.report.findings.len(),
            plural(self.report.findings.len(), "secret", "secrets"),
            self.files_with_findings(),
            self.report.files_scanned,
            self.places()
        )?;
        for hint in &self.hints {
            writeln!(err, "hint: {hint}")?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        !self.report.findings.is_empty() || !self.report.unparsed.is_empty()
    }

    fn learns_world(&self) -> bool {
        !self.report.given_files_only
    }
}

impl ScanOutput {
    /// One sentence per file that does not parse: which, where, and that
    /// its text was scanned instead.
    pub fn unparsed_lines(&self) -> Vec<String> {
        self.report
            .unparsed
            .iter()
            .map(|file| {
                format!(
                    "failed to parse `{}`: {}; scanned its text for secrets instead",
                    file.located(&file.file.display().to_string()),
                    file.message
                )
            })
            .collect()
    }

    /// How many problems the scan found: secrets, and files that do not
    /// parse.
    pub fn problems(&self) -> usize {
        self.report.findings.len() + self.report.unparsed.len()
    }

    fn files_with_findings(&self) -> usize {
        let mut files: Vec<&Path> = self
            .report
            .findings
            .iter()
            .map(|f| f.file.as_path())
            .collect();
        files.sort();
        files.dedup();
        files.len()
    }

    /// `2 in local scope, 1 in Cursor`: where the findings are, in order
    /// of first appearance.
    fn places(&self) -> String {
        let mut places: Vec<(String, usize)> = Vec::new();
        for finding in &self.report.findings {
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

/// The request of `args`.
fn request(args: &ScanArgs) -> ScanRequest {
    ScanRequest {
        paths: args.paths.clone(),
        only_paths: args.only_paths,
        skip_broken_configs: false,
    }
}

/// Runs `mcpenv scan`, and says how to print its report.
pub fn run(ctx: &Ctx, args: &ScanArgs) -> Result<(ScanOutput, ScanFormat), CliError> {
    let format = format_of(args.json, args.format)?;
    let report = scan_secrets(ctx, &request(args))?;
    Ok((output(ctx, report), format))
}

/// The format `--json` and `--format` ask for (they conflict unless they
/// agree).
pub fn format_of(json: bool, format: Option<ScanFormat>) -> Result<ScanFormat, CliError> {
    match (json, format) {
        (false, format) => Ok(format.unwrap_or(ScanFormat::Text)),
        (true, None | Some(ScanFormat::Json)) => Ok(ScanFormat::Json),
        (true, Some(other)) => {
            let other = other
                .to_possible_value()
                .map(|value| value.get_name().to_string())
                .unwrap_or_default();
            Err(
                CliError::usage(format!("`--json` conflicts with `--format {other}`"))
                    .with_hint("keep one of them: `--json` is `--format json`"),
            )
        }
    }
}

/// The scan report with each file as shown and what to do.
pub fn output(ctx: &Ctx, report: ScanReport) -> ScanOutput {
    // A file holds many findings: each is named once.
    let mut named: HashMap<&Path, String> = HashMap::new();
    let shown_files: Vec<String> = report
        .findings
        .iter()
        .map(|finding| {
            named
                .entry(finding.file.as_path())
                .or_insert_with(|| shown_path(ctx, &finding.file))
                .clone()
        })
        .collect();
    let hints = hints(ctx, &report.findings, &shown_files, &report.unparsed);
    ScanOutput {
        report,
        hints,
        shown_files,
    }
}

/// Whether this scan reads only the files it was given (a hook's run): then
/// nothing else is read, not even `~/.claude.json` to mask an error, as
/// what it prints quotes only those files.
pub fn reads_only_given_files(args: &ScanArgs) -> bool {
    request(args).reads_only_given_files()
}

/// Prints the report as `format` asks.
pub fn emit(ctx: &Ctx, report: &ScanOutput, format: ScanFormat, quiet: bool) -> io::Result<bool> {
    emit_as(ctx, report, format, quiet, || alerts(ctx, &report.report))
}

/// Prints `report` as text, JSON, or a SARIF log of its `alerts`.
pub fn emit_as<R: Report>(
    ctx: &Ctx,
    report: &R,
    format: ScanFormat,
    quiet: bool,
    alerts: impl FnOnce() -> Vec<Alert>,
) -> io::Result<bool> {
    match format {
        ScanFormat::Text => render::emit(ctx, report, false, quiet),
        ScanFormat::Json => render::emit(ctx, report, true, quiet),
        ScanFormat::Sarif => {
            let log = sarif::log(env!("CARGO_PKG_VERSION"), &alerts());
            let document = serde_json::to_value(&log).map_err(io::Error::other)?;
            render::emit_document(ctx, report, document, quiet)
        }
    }
}

/// One hint for the secrets `extract` moves (naming the exact scopes), and
/// one per client for the files it does not edit, in that client's syntax.
fn hints(
    ctx: &Ctx,
    findings: &[ScanFinding],
    shown_files: &[String],
    unparsed: &[Unparsed],
) -> Vec<String> {
    let mut hints = Vec::new();
    for file in unparsed {
        hints.push(format!(
            "fix `{}` by hand (mcpenv never rewrites a file it cannot parse); the scan fails until it parses",
            file.located(&shown_path(ctx, &file.file))
        ));
    }
    let scopes = extract_scopes(findings);
    if let Some(command) = extract_command(ctx, findings) {
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
    let mut listed: HashSet<(Client, &str)> = HashSet::new();
    for (finding, shown) in findings.iter().zip(shown_files) {
        if finding.extract_scope.is_some() || !listed.insert((finding.client, shown)) {
            continue;
        }
        let file = format!("`{shown}`");
        match by_client
            .iter_mut()
            .find(|(client, _)| *client == finding.client)
        {
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

/// The scopes `mcpenv extract` moves some of `findings` from, in order.
fn extract_scopes(findings: &[ScanFinding]) -> Vec<Scope> {
    let mut scopes: Vec<Scope> = findings.iter().filter_map(|f| f.extract_scope).collect();
    scopes.sort();
    scopes.dedup();
    scopes
}

/// The `mcpenv extract` that moves the secrets of `findings` it can move,
/// naming their scopes; `None` when they are all in other clients' files.
pub fn extract_command(ctx: &Ctx, findings: &[ScanFinding]) -> Option<String> {
    match extract_scopes(findings).as_slice() {
        [] => None,
        [Scope::Project] => Some(ctx.command(&["extract"])),
        [one] => Some(ctx.command(&["extract", "-s", one.as_str()])),
        _ => Some(ctx.command(&["extract", "--all"])),
    }
}

/// The SARIF alerts of a report: files relative to the repository root
/// when inside it, each secret shown masked; a file that does not parse is
/// an alert of its own.
fn alerts(ctx: &Ctx, report: &ScanReport) -> Vec<Alert> {
    let root = repository_root(ctx);
    let uri_of = |file: &Path| file_uri(&root, file);
    let unparsed = report.unparsed.iter().map(|file| {
        let uri = uri_of(&file.file);
        Alert {
            kind: AlertKind::Unparsed,
            rule: UNPARSED_RULE.to_string(),
            rule_description: "MCP config that does not parse".to_string(),
            message: format!(
                "`{}` does not parse ({}): only its text was scanned for secrets",
                uri_text(&uri),
                file.message
            ),
            identity: [uri_text(&uri), UNPARSED_RULE.to_string()].join("\0"),
            // SARIF counts from 1; a parser's column 0 (an end of file
            // after a newline) is the line's first character.
            position: file.line.zip(file.column).map(|(line, column)| Position {
                line: line.max(1),
                column: column.max(1),
                end_line: line.max(1),
                end_column: column.max(1),
            }),
            file: uri,
        }
    });
    let secrets = report.findings.iter().map(|finding| {
        let uri = uri_of(&finding.file);
        let description = secrets::rules()
            .iter()
            .find(|rule| rule.id == finding.rule)
            .map_or_else(|| "secret".to_string(), |rule| rule.provider.to_string());
        let project = finding
            .project
            .as_deref()
            .map(|project| format!(" (project `{project}`)"))
            .unwrap_or_default();
        let (message, place) = match (&finding.server, &finding.field) {
            (Some(server), Some(field)) => (
                format!(
                    "Server `{server}`{project}: `{field}` holds a literal {description} (`{}`)",
                    finding.value
                ),
                [server.clone(), field.to_string()],
            ),
            // Found in the text of a file that does not parse: its place
            // is its line.
            _ => (
                format!(
                    "`{}` does not parse; its text holds a literal {description} (`{}`)",
                    uri_text(&uri),
                    finding.value
                ),
                [
                    String::new(),
                    format!("line {}", finding.line.unwrap_or_default()),
                ],
            ),
        };
        Alert {
            kind: AlertKind::Secret,
            rule: finding.rule.to_string(),
            message,
            rule_description: description,
            identity: [
                uri_text(&uri),
                finding.project.clone().unwrap_or_default(),
                place[0].clone(),
                place[1].clone(),
                finding.rule.to_string(),
            ]
            .join("\0"),
            file: uri,
            position: finding.position,
        }
    });
    unparsed.chain(secrets).collect()
}

/// The SARIF rule of a config that does not parse.
const UNPARSED_RULE: &str = "unparsed-config";

/// `file` as SARIF names it: relative to the repository `root` when inside
/// it, else an absolute `file:` URI.
pub fn file_uri(root: &Path, file: &Path) -> FileUri {
    let file = lexical(file);
    match file.strip_prefix(root) {
        Ok(relative) => FileUri::InRepository(relative_uri(relative)),
        Err(_) => FileUri::Elsewhere(
            url::Url::from_file_path(&file)
                .map_or_else(|()| file.display().to_string(), String::from),
        ),
    }
}

/// The URI's text.
pub fn uri_text(uri: &FileUri) -> String {
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
