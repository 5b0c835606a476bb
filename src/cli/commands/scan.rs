//! `mcpenv scan`: literal secrets in MCP configs, found by walking each
//! entry's structure. Exits 1 when anything is found, for CI and hooks.
//! Prints a table, mcpenv's JSON, or SARIF for code scanning.

use std::borrow::Cow;
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
use crate::mechanics::display;
use crate::ops::scan_secrets::{
    ScanFinding, ScanReport, ScanRequest, Unparsed, lexical, repository_root, scan_secrets,
};
use crate::secrets;
use crate::secrets::redact::{self, Masker, Masks};
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
        let findings: Vec<_> = self
            .report
            .findings
            .chunks(TEXT_RUN)
            .zip(self.shown_files.chunks(TEXT_RUN))
            .collect();
        // Each cell escapes its text: the rows are made in runs on every
        // core, in order.
        let runs = redact::on_every_core(
            findings.len(),
            || (),
            |(), index| {
                let (findings, files) = findings[index];
                text_rows(findings, files)
            },
        );
        table(
            out,
            &["FILE", "SCOPE", "SERVER", "FIELD", "RULE", "VALUE"],
            &runs.into_iter().flatten().collect::<Vec<_>>(),
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

/// Findings a thread makes the table rows of at a time.
const TEXT_RUN: usize = 512;

/// The table rows of `findings`, each in the file shown as `files` says.
fn text_rows(findings: &[ScanFinding], files: &[String]) -> Vec<Vec<Cell>> {
    findings
        .iter()
        .zip(files)
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
        .collect()
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
        // A file's findings come together: fewer paths to sort.
        files.dedup();
        files.sort();
        files.dedup();
        files.len()
    }

    /// `2 in local scope, 1 in Cursor`: where the findings are, in order
    /// of first appearance.
    fn places(&self) -> String {
        // A place is a Claude Code scope (`true`: shown with ` scope`) or
        // a client's title, which never ends so.
        let mut places: Vec<((&str, bool), usize)> = Vec::new();
        for finding in &self.report.findings {
            let place = if finding.client == Client::ClaudeCode
                && ["local", "project", "user"].contains(&finding.scope.as_str())
            {
                (finding.scope.as_str(), true)
            } else {
                (finding.client.title(), false)
            };
            match places.iter_mut().find(|(known, _)| *known == place) {
                Some((_, count)) => *count += 1,
                None => places.push((place, 1)),
            }
        }
        places
            .iter()
            .map(|((place, scope), count)| {
                let scope = if *scope { " scope" } else { "" };
                format!("{count} in {place}{scope}")
            })
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
    let mut shown_files: Vec<String> = Vec::with_capacity(report.findings.len());
    for (index, finding) in report.findings.iter().enumerate() {
        // A file's findings come together: the one before names it.
        let shown = match index.checked_sub(1).map(|before| &report.findings[before]) {
            Some(before) if before.file == finding.file => shown_files[index - 1].clone(),
            _ => named
                .entry(finding.file.as_path())
                .or_insert_with(|| shown_path(ctx, &finding.file))
                .clone(),
        };
        shown_files.push(shown);
    }
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
    if format == ScanFormat::Json {
        return render::emit_json_with(ctx, report, quiet, |shield| {
            let mut out = io::BufWriter::new(io::stdout().lock());
            write_json(shield, &report.report, &mut out)
                .map(|written| written.and_then(|()| out.flush()))
        });
    }
    emit_as(ctx, report, format, quiet, || alerts(ctx, &report.report))
}

/// Findings a thread takes at a time when `--json` is written on every
/// core.
const JSON_RUN: usize = 512;

/// The keys of `scan --json`. When the shield masks one (a secret that is
/// the text of a key), the report goes the `Value` way.
const JSON_KEYS: [&str; 15] = [
    "schema_version",
    "findings",
    "files_scanned",
    "unparsed",
    "warnings",
    "file",
    "scope",
    "project",
    "server",
    "field",
    "rule",
    "value",
    "line",
    "column",
    "message",
];

/// `scan --json` written from the report's fields, without turning the
/// report into a `Value` and dropping it: each string masked as
/// [`Shield::clean_json`](crate::cli::output::Shield::clean_json) masks
/// the report's, and written as `serde_json::to_writer_pretty` writes the
/// `Value`. The findings are masked and written in runs on every core,
/// then put out in order. `None` when that would not be the same bytes as
/// the `Value` way: a path that is not UTF-8 (no JSON string), or a key or
/// number the shield masks.
fn write_json(
    shield: &crate::cli::output::Shield,
    report: &ScanReport,
    out: &mut impl Write,
) -> Option<io::Result<()>> {
    let utf8 = report
        .findings
        .iter()
        .map(|finding| &finding.file)
        .chain(report.unparsed.iter().map(|file| &file.file))
        .chain(report.warnings.iter().map(|warning| &warning.file))
        .all(|file| file.to_str().is_some());
    if !utf8 {
        return None;
    }
    let parts = shield.with_masks(|masks| json_parts(masks, report))?;
    Some(parts.iter().try_for_each(|part| out.write_all(part)))
}

/// The bytes of `scan --json`, in order (see [`write_json`]).
fn json_parts(masks: Masks<'_>, report: &ScanReport) -> Option<Vec<Vec<u8>>> {
    let mut json = JsonWriter::new(masks);
    if JSON_KEYS
        .iter()
        .any(|key| matches!(json.masker.mask(key), Cow::Owned(_)))
    {
        return None;
    }
    let mut head = Vec::new();
    head.extend_from_slice(b"{\n  \"schema_version\": ");
    json.number(&mut head, render::SCHEMA_VERSION as usize)?;
    head.extend_from_slice(b",\n  \"findings\": [");
    let mut parts = vec![head];
    parts.extend(json_findings(masks, &report.findings)?);
    let mut tail = Vec::new();
    tail.extend_from_slice(if report.findings.is_empty() {
        b"]"
    } else {
        b"\n  ]"
    });
    tail.extend_from_slice(b",\n  \"files_scanned\": ");
    json.number(&mut tail, report.files_scanned)?;
    tail.extend_from_slice(b",\n  \"unparsed\": [");
    for (index, file) in report.unparsed.iter().enumerate() {
        json.object(
            &mut tail,
            index == 0,
            &[
                ("file", Member::Text(file.file.to_str()?)),
                ("line", Member::Number(file.line)),
                ("column", Member::Number(file.column)),
                ("message", Member::Text(&file.message)),
            ],
        )?;
    }
    json.close_array(&mut tail, report.unparsed.is_empty());
    tail.extend_from_slice(b",\n  \"warnings\": [");
    for (index, warning) in report.warnings.iter().enumerate() {
        json.object(
            &mut tail,
            index == 0,
            &[
                ("file", Member::Text(warning.file.to_str()?)),
                ("message", Member::Text(&warning.message)),
            ],
        )?;
    }
    json.close_array(&mut tail, report.warnings.is_empty());
    tail.extend_from_slice(b"\n}\n");
    parts.push(tail);
    Some(parts)
}

/// The findings of `scan --json`, masked and written in runs of
/// [`JSON_RUN`] on every core (see [`redact::on_every_core`]), in order;
/// `None` when a number masks.
fn json_findings(masks: Masks<'_>, findings: &[ScanFinding]) -> Option<Vec<Vec<u8>>> {
    let runs: Vec<&[ScanFinding]> = findings.chunks(JSON_RUN).collect();
    redact::on_every_core(
        runs.len(),
        || JsonWriter::new(masks),
        |json, index| {
            let run = runs[index];
            let mut bytes = Vec::with_capacity(run.len() * 320);
            for (offset, finding) in run.iter().enumerate() {
                json.finding(&mut bytes, index == 0 && offset == 0, finding)?;
            }
            Some(bytes)
        },
    )
    .into_iter()
    .collect()
}

/// A member's value in `scan --json`.
enum Member<'a> {
    Text(&'a str),
    OptionalText(Option<&'a str>),
    Number(Option<usize>),
}

/// Writes `scan --json`'s parts as `serde_json::to_writer_pretty` writes
/// them, each string masked on the way.
struct JsonWriter<'r> {
    masker: Masker<'r>,
    /// A field's text, reused.
    field: String,
    /// A number's text, reused.
    digits: String,
}

impl<'r> JsonWriter<'r> {
    fn new(masks: Masks<'r>) -> Self {
        Self {
            masker: masks.masker(),
            field: String::new(),
            digits: String::new(),
        }
    }

    /// A finding, as an item of the findings array.
    fn finding(&mut self, out: &mut Vec<u8>, first: bool, finding: &ScanFinding) -> Option<()> {
        let mut field = std::mem::take(&mut self.field);
        field.clear();
        if let Some(shown) = &finding.field {
            use std::fmt::Write as _;
            write!(field, "{shown}").ok()?;
        }
        let written = self.object(
            out,
            first,
            &[
                ("file", Member::Text(finding.file.to_str()?)),
                ("scope", Member::Text(&finding.scope)),
                ("project", Member::OptionalText(finding.project.as_deref())),
                ("server", Member::OptionalText(finding.server.as_deref())),
                (
                    "field",
                    Member::OptionalText(finding.field.as_ref().map(|_| field.as_str())),
                ),
                ("rule", Member::Text(finding.rule)),
                ("value", Member::Text(&finding.value)),
                ("line", Member::Number(finding.line)),
                ("column", Member::Number(finding.column)),
            ],
        );
        self.field = field;
        written
    }

    /// An object as an item of an array (indented twice), after a comma
    /// unless it is the `first`. `None` when a number masks.
    fn object(
        &mut self,
        out: &mut Vec<u8>,
        first: bool,
        members: &[(&str, Member<'_>)],
    ) -> Option<()> {
        out.extend_from_slice(if first { b"\n    {" } else { b",\n    {" });
        for (index, (key, value)) in members.iter().enumerate() {
            out.extend_from_slice(if index == 0 {
                b"\n      \""
            } else {
                b",\n      \""
            });
            // The keys are plain words: nothing in them is escaped.
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\": ");
            match value {
                Member::Text(text) | Member::OptionalText(Some(text)) => self.text(out, text)?,
                Member::Number(Some(number)) => self.number(out, *number)?,
                Member::OptionalText(None) | Member::Number(None) => {
                    out.extend_from_slice(b"null");
                }
            }
        }
        out.extend_from_slice(b"\n    }");
        Some(())
    }

    /// The end of an array of objects.
    fn close_array(&self, out: &mut Vec<u8>, empty: bool) {
        out.extend_from_slice(if empty { b"]" } else { b"\n  ]" });
    }

    /// `text`, masked, as a JSON string.
    fn text(&mut self, out: &mut Vec<u8>, text: &str) -> Option<()> {
        let masked = self.masker.mask(text);
        serde_json::to_writer(out, masked.as_ref()).ok()
    }

    /// A number; `None` when the shield masks its text (the `Value` way
    /// writes it as a masked string).
    fn number(&mut self, out: &mut Vec<u8>, number: usize) -> Option<()> {
        use std::fmt::Write as _;
        let mut digits = std::mem::take(&mut self.digits);
        digits.clear();
        write!(digits, "{number}").ok()?;
        let plain = matches!(self.masker.mask(&digits), Cow::Borrowed(_));
        out.extend_from_slice(digits.as_bytes());
        self.digits = digits;
        plain.then_some(())
    }
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

/// How many files a client's hint names before it says how many more.
const HINTED_FILES: usize = 5;

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
    let mut last: Option<(Client, &str)> = None;
    for (finding, shown) in findings.iter().zip(shown_files) {
        if finding.extract_scope.is_some() {
            continue;
        }
        // A file's findings come together: the one before listed it.
        let place = (finding.client, shown.as_str());
        if last.replace(place) == Some(place) || !listed.insert(place) {
            continue;
        }
        let file = shown.clone();
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
            display::quoted_names_up_to(&files, HINTED_FILES),
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
    let secret = |finding: &ScanFinding| {
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
    };
    // A scan of thousands of files: its findings' alerts are made in
    // runs on every core, in order.
    let runs: Vec<&[ScanFinding]> = report.findings.chunks(ALERT_RUN).collect();
    let secrets = redact::on_every_core(
        runs.len(),
        || (),
        |(), index| runs[index].iter().map(secret).collect::<Vec<_>>(),
    );
    unparsed.chain(secrets.into_iter().flatten()).collect()
}

/// Findings a thread makes the SARIF alerts of at a time.
const ALERT_RUN: usize = 512;

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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::output::Shield;
    use crate::config::model::Field;
    use crate::ops::list_servers::Warning;

    const TOKEN: &str = "ghp_R2x9TqLm4VbN8cZw1YpK7sHd3FjG6aUe5oIi";

    /// `--json` the way every other report is written: turned into a
    /// `Value` (with `schema_version`), masked, written pretty.
    fn the_value_way(shield: &Shield, report: &ScanReport) -> Vec<u8> {
        #[derive(Serialize)]
        struct Envelope<'a> {
            schema_version: u32,
            #[serde(flatten)]
            report: &'a ScanReport,
        }
        let mut value = serde_json::to_value(Envelope {
            schema_version: render::SCHEMA_VERSION,
            report,
        })
        .unwrap();
        shield.clean_json(&mut value);
        let mut out = serde_json::to_vec_pretty(&value).unwrap();
        out.push(b'\n');
        out
    }

    fn written(shield: &Shield, report: &ScanReport) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        write_json(shield, report, &mut out)?.unwrap();
        Some(out)
    }

    /// Enough findings that masking takes the long array's parallel way;
    /// secrets in paths, names, fields, values and warnings; escapes.
    fn report(line: usize) -> ScanReport {
        let findings = (0..1500)
            .map(|index| {
                let server = format!("srv-{index}-{}", if index % 7 == 0 { TOKEN } else { "x" });
                ScanFinding::for_tests(
                    PathBuf::from(format!(
                        "/r/{index}/{}\"\u{1b}é.json",
                        if index % 5 == 0 { TOKEN } else { "c" }
                    )),
                    (index % 3 != 0).then_some(server.as_str()),
                    match index % 4 {
                        0 => None,
                        1 => Some(Field::Env(format!("K_{TOKEN}"))),
                        2 => Some(Field::Arg(index)),
                        _ => Some(Field::Header("Authorization".to_string())),
                    },
                    &format!("ghp_…{index}"),
                    (index % 2 == 0).then_some(line + index),
                )
            })
            .collect();
        ScanReport {
            findings,
            files_scanned: 2000,
            unparsed: vec![Unparsed {
                file: PathBuf::from(format!("/r/{TOKEN}.json")),
                line: Some(3),
                column: None,
                message: format!("expected `,` near {TOKEN}"),
            }],
            warnings: vec![Warning {
                file: PathBuf::from("/r/w.json"),
                message: format!("`s` env.T: never expands `${{env:{TOKEN}}}`"),
            }],
            given_files_only: false,
        }
    }

    #[test]
    fn json_is_written_as_the_value_way_writes_it() {
        let report = report(1);
        let shield = Shield::default();
        assert_eq!(
            written(&shield, &report).unwrap(),
            the_value_way(&shield, &report)
        );
        shield.learn(|redactor| redactor.learn(TOKEN));
        let masked = written(&shield, &report).unwrap();
        assert_eq!(masked, the_value_way(&shield, &report));
        assert!(!String::from_utf8(masked).unwrap().contains(TOKEN));
    }

    #[test]
    fn a_key_or_number_that_masks_is_left_to_the_value_way() {
        let report = report(98_765_000);
        let shield = Shield::default();
        shield.learn(|redactor| redactor.learn(TOKEN));
        assert!(written(&shield, &report).is_some());
        // A secret that is a line number: the number is written masked.
        shield.learn(|redactor| redactor.learn("98765004"));
        assert!(written(&shield, &report).is_none());
        let the_value_way = String::from_utf8(the_value_way(&shield, &report)).unwrap();
        assert!(the_value_way.contains("\"line\": 98765002,"));
        assert!(!the_value_way.contains("98765004"));

        let shield = Shield::default();
        shield.learn(|redactor| redactor.learn("message"));
        assert!(written(&shield, &report).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_left_to_the_value_way() {
        use std::os::unix::ffi::OsStrExt;
        let mut report = report(1);
        report.warnings[0].file = PathBuf::from(std::ffi::OsStr::from_bytes(b"/r/\xff.json"));
        assert!(written(&Shield::default(), &report).is_none());
    }

    #[test]
    fn empty_and_short_lists_are_written_as_the_value_way_writes_them() {
        let shield = Shield::default();
        let mut report = report(1);
        for findings in [0, 1, JSON_RUN - 1, JSON_RUN, JSON_RUN + 1] {
            report.findings.truncate(findings);
            for (unparsed, warnings) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                report.unparsed.truncate(unparsed);
                report.warnings.truncate(warnings);
                assert_eq!(
                    written(&shield, &report).unwrap(),
                    the_value_way(&shield, &report)
                );
            }
            report = self::report(1);
        }
    }

    proptest::proptest! {
        /// Any text in any member, some of it secrets, is written masked
        /// and escaped as the `Value` way writes it.
        #[test]
        fn any_report_is_written_as_the_value_way_writes_it(
            texts in proptest::collection::vec("(\\PC|[\\x00-\\x1f\"\\\\\\x7f\\u{202e}]){0,12}", 1..40),
            secrets in proptest::collection::vec(0usize..40, 0..4),
            findings in 0usize..1200,
            line in proptest::option::of(0usize..100_000),
        ) {
            let text = |index: usize| texts[index % texts.len()].clone();
            let mut report = report(1);
            report.findings.truncate(findings);
            for (index, finding) in report.findings.iter_mut().enumerate() {
                finding.file = PathBuf::from(text(index));
                finding.scope = text(index + 1);
                finding.project = (index % 3 == 0).then(|| text(index + 2));
                finding.server = (index % 5 != 0).then(|| text(index + 3));
                finding.value = text(index + 4);
                finding.line = line.map(|line| line + index);
                finding.column = line;
            }
            report.unparsed[0].message = text(5);
            report.warnings[0].file = PathBuf::from(text(6));
            report.warnings[0].message = text(7);
            let shield = Shield::default();
            for secret in secrets {
                shield.learn(|redactor| redactor.learn(&text(secret)));
            }
            if let Some(written) = written(&shield, &report) {
                proptest::prop_assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(the_value_way(&shield, &report)).unwrap()
                );
            }
        }
    }
}
