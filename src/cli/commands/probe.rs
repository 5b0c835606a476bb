//! `mcpenv probe`: start every server in effect (or the named ones) with
//! placeholders expanded as `mcpenv run` would, `initialize` it and list its
//! tools, prompts and resources. Results stream as servers finish: progress
//! on stderr and a report on stdout: text, one JSON document (`--json`) or
//! JSON Lines as servers finish (`--jsonl`). Exit 1 when a server fails (or,
//! with `--audit`, fails a check).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::check::EnvSources;
use crate::cli::args::ProbeArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Shield, Stream};
use crate::cli::render::{self, DIM, GREEN, RED, Report, YELLOW, shown, warning};
use crate::cli::resolve::Ctx;
use crate::config::approval::Approval;
use crate::config::inventory::Inventory;
use crate::ops::probe::{self as ops_probe, Done, ProbeRequest, Selection, Skipped, select};
use crate::probe::{AuditCalls, AuditCheck, BlankedValue, CheckStatus, ProbeTarget};

/// One server in the JSON output: an element of `servers` (`--json`) or a
/// line (`--jsonl`).
#[derive(Debug, Serialize)]
struct ServerLine<'a> {
    name: &'a str,
    ok: bool,
    error: Option<String>,
    server: Option<ServerInfo<'a>>,
    protocol_version: Option<&'a str>,
    tools: usize,
    prompts: usize,
    resources: usize,
    ms: u128,
    #[serde(skip_serializing_if = "Option::is_none")]
    audit: Option<&'a [AuditCheck]>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    blanked: &'a [BlankedValue],
}

#[derive(Debug, Serialize)]
struct ServerInfo<'a> {
    name: &'a str,
    version: &'a str,
}

/// Runs `mcpenv probe`; returns whether anything failed.
pub fn run(ctx: &Ctx, args: &ProbeArgs) -> Result<io::Result<bool>, CliError> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let request = ProbeRequest {
        names: args.names.clone(),
        trust_project: args.trust_project,
        send_blanked: args.send_blanked,
    };
    let Selection { targets, skipped } = select(ctx, &request, &inventory, &sources)?;
    if !ctx.quiet {
        for skipped in &skipped {
            let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
                warning(err, &skipped_message(skipped))
            });
        }
    }
    if inventory.names().is_empty() && !(args.json || args.jsonl) {
        if !ctx.quiet {
            output::write(&ctx.shield, Stream::Stderr, false, |err| {
                writeln!(err, "No MCP servers configured")?;
                writeln!(
                    err,
                    "hint: add one with `mcpenv add NAME -- COMMAND ARGS...`"
                )
            })
            .map_err(|error| CliError::failure_from("cannot write the output", error))?;
        }
        return Ok(Ok(false));
    }
    let order: Vec<String> = targets.iter().map(|target| target.name.clone()).collect();
    let progress = Progress::new(ctx, args, &order);
    let mut written: io::Result<()> = Ok(());
    let settings = ProbeSettings {
        timeout: Duration::from_secs_f64(args.timeout),
        jobs: args.jobs.map(|jobs| jobs as usize),
        audit: args.audit.then_some(if args.audit_calls {
            AuditCalls::NotDestructive
        } else {
            AuditCalls::ReadOnly
        }),
    };
    let probed = probe_targets(ctx, targets, &inventory, &sources, &settings, |done| {
        progress.finished(done);
        // With --audit, name collisions need every server's tools, so
        // lines wait for the last server.
        if args.jsonl && !args.audit && written.is_ok() {
            written = json_line(&ctx.shield, done);
        }
    });
    progress.clear();
    let (mut outcomes, elapsed) = probed?;
    Ok(written.and_then(|()| finish(ctx, args, &mut outcomes, &order, elapsed)))
}

/// `skipped `name`: why`, and how to start it anyway when the person can.
pub fn skipped_message(skipped: &Skipped) -> String {
    let how = match skipped.unapproved {
        None => "",
        Some(Approval::Rejected) => "; name it with `--trust-project` to start it anyway",
        Some(_) => "; pass `--trust-project` to start it anyway",
    };
    format!("skipped `{}`: {}{how}", skipped.name, skipped.reason)
}

pub use crate::ops::probe::ProbeSettings;

/// Starts `targets` ([`ops_probe::probe_targets`]: deadlines, the reaper)
/// and waits for each to finish, calling `finished` as each does; every
/// server started is stopped on Ctrl-C or SIGTERM (then an error). Returns
/// the outcomes as they finished and the time taken.
pub fn probe_targets(
    ctx: &Ctx,
    targets: Vec<ProbeTarget>,
    inventory: &Inventory,
    sources: &EnvSources,
    settings: &ProbeSettings,
    mut finished: impl FnMut(&Done),
) -> Result<(Vec<Done>, Duration), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| CliError::failure_from("cannot start the async runtime", error))?;
    let start = Instant::now();
    let mut outcomes: Vec<Done> = Vec::new();
    let interrupted = runtime.block_on(async {
        let probing = async {
            outcomes =
                ops_probe::probe_targets(ctx, targets, inventory, sources, settings, |done| {
                    finished(done);
                })
                .await;
        };
        // SIGTERM too: a killed `probe` must not leave servers behind.
        // Windows has no SIGTERM; its nearest, the console window closing,
        // is heard instead (and the servers' job objects end with mcpenv
        // however it ends).
        #[cfg(unix)]
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        #[cfg(windows)]
        let mut terminate = tokio::signal::windows::ctrl_close().ok();
        let terminated = async {
            match terminate.as_mut() {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = probing => false,
            _ = tokio::signal::ctrl_c() => true,
            () = terminated => true,
        }
    });
    // Dropping the runtime drops every probe still running, and with it
    // the guard that kills its process group, then the reaper.
    runtime.shutdown_timeout(Duration::from_secs(2));
    if interrupted {
        return Err(CliError::failure(
            "interrupted; every server started was stopped",
        ));
    }
    Ok((outcomes, start.elapsed()))
}

/// Progress on stderr while servers run: on a terminal a live line per
/// server (cleared once the report is printed); otherwise a plain line per
/// server as it finishes; nothing with `--quiet`.
enum Progress {
    Live {
        lines: indicatif::MultiProgress,
        by_name: BTreeMap<String, indicatif::ProgressBar>,
        done_style: indicatif::ProgressStyle,
        shield: Arc<Shield>,
    },
    Lines(Arc<Shield>),
    Quiet,
}

impl Progress {
    fn new(ctx: &Ctx, args: &ProbeArgs, names: &[String]) -> Self {
        if ctx.quiet {
            return Self::Quiet;
        }
        // JSON Lines on a terminal would be torn by redrawn lines.
        if args.jsonl || !io::stderr().is_terminal() {
            return Self::Lines(Arc::clone(&ctx.shield));
        }
        let width = names
            .iter()
            .map(|name| shown(name).chars().count())
            .max()
            .unwrap_or(0);
        // The templates are fixed text, so they parse; the fallback only
        // keeps this free of a panic path.
        let template = |text: &str| {
            indicatif::ProgressStyle::with_template(text)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner())
        };
        let style = template(&format!(
            "{{spinner}} {{prefix:{width}}}  {{msg}} {{elapsed:.dim}}"
        ));
        let done_style = template(&format!("  {{prefix:{width}}}  {{msg}}"));
        let lines = indicatif::MultiProgress::new();
        let by_name = names
            .iter()
            .map(|name| {
                let line = lines.add(indicatif::ProgressBar::new_spinner());
                line.set_style(style.clone());
                line.set_prefix(shown(name).into_owned());
                line.set_message("starting");
                line.enable_steady_tick(Duration::from_millis(100));
                (name.clone(), line)
            })
            .collect();
        Self::Live {
            lines,
            by_name,
            done_style,
            shield: Arc::clone(&ctx.shield),
        }
    }

    fn finished(&self, done: &Done) {
        match self {
            Self::Live {
                by_name,
                done_style,
                shield,
                ..
            } => {
                if let Some(line) = by_name.get(&done.outcome.name) {
                    line.set_style(done_style.clone());
                    let message = match &done.error {
                        None => "ok".to_string(),
                        Some(error) => shield.clean(&format!("failed: {}", shown(error))),
                    };
                    line.finish_with_message(message);
                }
            }
            Self::Lines(shield) => {
                let _ = output::write(shield, Stream::Stderr, false, |err| {
                    progress_line(err, done)
                });
            }
            Self::Quiet => {}
        }
    }

    /// Takes the live lines off the terminal before the report.
    fn clear(&self) {
        if let Self::Live { lines, .. } = self {
            let _ = lines.clear();
        }
    }
}

/// `ok  `name` in N ms`, or `failed  `name` after N ms: why`.
pub fn progress_line(err: &mut dyn Write, done: &Done) -> io::Result<()> {
    let outcome = &done.outcome;
    let ms = outcome.elapsed.as_millis();
    let name = shown(&outcome.name);
    match &outcome.result {
        Ok(_) => writeln!(err, "{GREEN}ok{GREEN:#}      `{name}` in {ms} ms"),
        Err(_) => {
            let error = shown(done.error.as_deref().unwrap_or_default());
            writeln!(err, "{RED}failed{RED:#}  `{name}` after {ms} ms: {error}")
        }
    }
}

fn server_line(done: &Done) -> ServerLine<'_> {
    let outcome = &done.outcome;
    let error = done.error.clone();
    let facts = outcome.result.as_ref().ok();
    ServerLine {
        name: &outcome.name,
        ok: outcome.result.is_ok(),
        error,
        server: facts.map(|facts| ServerInfo {
            name: &facts.name,
            version: &facts.version,
        }),
        protocol_version: facts.map(|facts| facts.protocol_version.as_str()),
        tools: facts.map_or(0, |facts| facts.tools.len()),
        prompts: facts.map_or(0, |facts| facts.prompts),
        resources: facts.map_or(0, |facts| facts.resources),
        ms: facts
            .map_or(outcome.elapsed, |facts| facts.ready)
            .as_millis(),
        audit: facts
            .map(|_| outcome.audit.as_slice())
            .filter(|_| !outcome.audit.is_empty()),
        blanked: &done.blanked,
    }
}

fn json_line(shield: &Shield, done: &Done) -> io::Result<()> {
    let line = serde_json::to_value(server_line(done)).map_err(io::Error::other)?;
    output::write_json_line(shield, line)
}

/// Whether an audit check failed (warnings and skipped checks do not).
fn check_failed(check: &AuditCheck) -> bool {
    check.status == CheckStatus::Failed
}

/// How the servers and the audit checks finished, counted.
struct Tally {
    ok: usize,
    failed: usize,
    failed_checks: usize,
    warnings: usize,
    audit_failed: usize,
}

impl Tally {
    fn new(outcomes: &[Done]) -> Self {
        let failed = outcomes
            .iter()
            .filter(|done| done.outcome.result.is_err())
            .count();
        let ok = outcomes.len() - failed;
        let checks = || outcomes.iter().flat_map(|done| &done.outcome.audit);
        let failed_checks = checks().filter(|check| check_failed(check)).count();
        let warnings = checks()
            .filter(|check| check.status == CheckStatus::Warning)
            .count();
        let audit_failed = outcomes
            .iter()
            .filter(|done| done.outcome.audit.iter().any(check_failed))
            .count();
        Self {
            ok,
            failed,
            failed_checks,
            warnings,
            audit_failed,
        }
    }
}

/// The last line of `--jsonl` and the `summary` of `--json`.
#[derive(Debug, Serialize)]
struct Summary {
    ok: usize,
    failed: usize,
    ms: u128,
    /// Servers with a failed audit check (with `--audit` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_failed: Option<usize>,
}

/// `mcpenv probe`'s report: every server in configuration order and the
/// summary, as text or as one JSON document.
#[derive(Serialize)]
pub struct ProbeReport<'a> {
    servers: Vec<ServerLine<'a>>,
    summary: Summary,
    #[serde(skip)]
    outcomes: &'a [Done],
    #[serde(skip)]
    audit: bool,
    #[serde(skip)]
    elapsed: Duration,
}

impl Report for ProbeReport<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        write_text(out, self.audit, self.outcomes, self.elapsed)
    }

    fn failed(&self) -> bool {
        any_failed(self.outcomes)
    }
}

impl<'a> ProbeReport<'a> {
    /// The report of servers probed without an audit, in `outcomes`' order.
    pub fn unaudited(outcomes: &'a [Done], elapsed: Duration) -> Self {
        Self {
            servers: outcomes.iter().map(server_line).collect(),
            summary: summary(false, outcomes, elapsed),
            outcomes,
            audit: false,
            elapsed,
        }
    }

    /// Every server probed, as it finished.
    pub fn outcomes(&self) -> &'a [Done] {
        self.outcomes
    }
}

/// Whether a server failed or failed an audit check: exit 1.
fn any_failed(outcomes: &[Done]) -> bool {
    let tally = Tally::new(outcomes);
    tally.failed > 0 || tally.failed_checks > 0
}

fn summary(audit: bool, outcomes: &[Done], elapsed: Duration) -> Summary {
    let tally = Tally::new(outcomes);
    Summary {
        ok: tally.ok,
        failed: tally.failed,
        ms: elapsed.as_millis(),
        audit_failed: audit.then_some(tally.audit_failed),
    }
}

fn finish(
    ctx: &Ctx,
    args: &ProbeArgs,
    outcomes: &mut [Done],
    order: &[String],
    elapsed: Duration,
) -> io::Result<bool> {
    let summary = summary(args.audit, outcomes, elapsed);
    if args.jsonl {
        // With --audit, lines wait for the last server (collisions).
        if args.audit {
            for done in outcomes.iter() {
                json_line(&ctx.shield, done)?;
            }
        }
        let line = serde_json::to_value(serde_json::json!({ "summary": summary }))
            .map_err(io::Error::other)?;
        output::write_json_line(&ctx.shield, line)?;
        return Ok(any_failed(outcomes));
    }
    // Servers in configuration order, however they finished.
    outcomes.sort_by_key(|done| order.iter().position(|name| name == &done.outcome.name));
    let report = ProbeReport {
        servers: outcomes.iter().map(server_line).collect(),
        summary,
        outcomes,
        audit: args.audit,
        elapsed,
    };
    render::emit(ctx, &report, args.json, ctx.quiet)
}

fn write_text(
    out: &mut dyn Write,
    audit: bool,
    outcomes: &[Done],
    elapsed: Duration,
) -> io::Result<()> {
    let Tally {
        ok,
        failed,
        failed_checks,
        warnings,
        audit_failed,
    } = Tally::new(outcomes);
    let width = outcomes
        .iter()
        .map(|done| shown(&done.outcome.name).chars().count())
        .max()
        .unwrap_or(0);
    for done in outcomes {
        let outcome = &done.outcome;
        let name = shown(&outcome.name);
        match &outcome.result {
            // Everything the server says about itself is its text, not ours.
            Ok(facts) => writeln!(
                out,
                "{name:width$}  {GREEN}ok{GREEN:#}      {} {}, protocol {}, {}, {}, {}, ready in {} ms",
                shown(&facts.name),
                shown(&facts.version),
                shown(&facts.protocol_version),
                plural(facts.tools.len(), "tool"),
                plural(facts.prompts, "prompt"),
                plural(facts.resources, "resource"),
                facts.ready.as_millis()
            )?,
            Err(_) => writeln!(
                out,
                "{name:width$}  {RED}failed{RED:#}  {}",
                shown(done.error.as_deref().unwrap_or_default())
            )?,
        }
        let indent = " ".repeat(width + 2);
        for value in &done.blanked {
            write_blanked(out, &indent, value)?;
        }
        for check in &outcome.audit {
            write_check(out, &indent, check)?;
        }
    }
    let mut summary = format!("{ok} ok, {failed} failed");
    if audit {
        summary.push_str(&format!(
            "; audit: {} on {}",
            plural(failed_checks, "failed check"),
            plural(audit_failed, "server")
        ));
        if warnings > 0 {
            summary.push_str(&format!(", {}", plural(warnings, "warning")));
        }
    }
    writeln!(out, "{summary} in {:.1} s", elapsed.as_secs_f64())
}

/// One value holding variables Claude Code sends empty, and what probe sent.
fn write_blanked(out: &mut dyn Write, indent: &str, value: &BlankedValue) -> io::Result<()> {
    let field = match value.field.strip_prefix("headers.") {
        Some(header) => format!("header `{}`", shown(header)),
        None => format!("`{}`", shown(&value.field)),
    };
    let variables = value
        .variables
        .iter()
        .map(|name| format!("`${{{}}}`", shown(name)))
        .collect::<Vec<_>>()
        .join(", ");
    if value.sent_empty {
        writeln!(
            out,
            "{indent}{YELLOW}blanked{YELLOW:#}  {field}: {variables} sent empty, as Claude Code 2.1.332 sends it (`--send-blanked` sends the value)"
        )
    } else {
        writeln!(
            out,
            "{indent}{YELLOW}blanked{YELLOW:#}  {field}: {variables} sent with its value (`--send-blanked`); Claude Code 2.1.332 sends it empty"
        )
    }
}

/// One audit check: what the server did, and for a finding also what was
/// expected, the rule and where the spec says so.
fn write_check(out: &mut dyn Write, indent: &str, check: &AuditCheck) -> io::Result<()> {
    let (style, word) = match check.status {
        CheckStatus::Ok => (GREEN, "ok"),
        CheckStatus::Failed => (RED, "failed"),
        CheckStatus::Warning => (YELLOW, "warning"),
        CheckStatus::Skipped => (DIM, "skipped"),
    };
    let label = format!("{word:7}");
    if matches!(check.status, CheckStatus::Ok | CheckStatus::Skipped) {
        return writeln!(
            out,
            "{indent}{DIM}audit{DIM:#} {style}{label}{style:#}  {}: {}",
            check.check,
            shown(&check.got)
        );
    }
    writeln!(
        out,
        "{indent}{DIM}audit{DIM:#} {style}{label}{style:#}  {}: got {}; expected {}",
        check.check,
        shown(&check.got),
        check.expected
    )?;
    let spec = check
        .spec
        .strip_prefix("https://modelcontextprotocol.io/specification/")
        .and_then(|rest| rest.split_once('/'))
        .map_or_else(
            || check.spec.to_string(),
            |(version, page)| format!("MCP {version}, {page}"),
        );
    writeln!(out, "{indent}{:15}{DIM}{} ({spec}){DIM:#}", "", check.rule)
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
