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

use crate::approval::Approval;
use crate::check::EnvSources;
use crate::claude_code::blanked::{self, Sink};
use crate::cli::args::ProbeArgs;
use crate::cli::commands::reap::Reaper;
use crate::cli::error::CliError;
use crate::cli::output::{self, Shield, Stream};
use crate::cli::render::{self, DIM, GREEN, RED, Report, YELLOW, shown, warning};
use crate::cli::resolve::Ctx;
use crate::layered::{Inventory, Sourced};
use crate::model::{Field, Transport};
use crate::ops::names::unknown_name_hints;
use crate::placeholder;
use crate::probe::{
    self, AuditCalls, AuditCheck, BlankedValue, CheckStatus, Endpoint, ProbeOptions, ProbeOutcome,
    ProbeTarget,
};

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
    let targets = select(ctx, args, &inventory, &sources)?;
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
    learn_handed(&ctx.shield, &targets, &sources);
    let reasons = Reasons::new(&targets, &inventory);
    // Only stdio servers start processes.
    let reaper = targets
        .iter()
        .any(|target| matches!(target.endpoint, Endpoint::Stdio(_)))
        .then(Reaper::start)
        .flatten()
        .map(Arc::new);
    let options = ProbeOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        jobs: args.jobs.map_or(targets.len(), |jobs| jobs as usize).max(1),
        audit: args.audit.then_some(if args.audit_calls {
            AuditCalls::NotDestructive
        } else {
            AuditCalls::ReadOnly
        }),
        watch: reaper
            .clone()
            .map(|reaper| reaper as Arc<dyn probe::GroupWatch>),
    };
    let order: Vec<String> = targets.iter().map(|target| target.name.clone()).collect();
    let progress = Progress::new(ctx, args, &order);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| CliError::failure_from("cannot start the async runtime", error))?;
    let start = Instant::now();
    let mut outcomes: Vec<Done> = Vec::new();
    let mut written: io::Result<()> = Ok(());
    let interrupted = runtime.block_on(async {
        let probing = probe::probe_all(targets, options, |outcome| {
            let done = reasons.explain(outcome);
            progress.finished(&done);
            // With --audit, name collisions need every server's tools, so
            // lines wait for the last server.
            if args.jsonl && !args.audit && written.is_ok() {
                written = json_line(&ctx.shield, &done);
            }
            outcomes.push(done);
        });
        // SIGTERM too: a killed `probe` must not leave servers behind.
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
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
    progress.clear();
    // Dropping the runtime drops every probe still running, and with it
    // the guard that kills its process group.
    runtime.shutdown_timeout(Duration::from_secs(2));
    if let Some(reaper) = reaper.and_then(Arc::into_inner) {
        reaper.finish();
    }
    if interrupted {
        return Err(CliError::failure(
            "interrupted; every server started was stopped",
        ));
    }
    if args.audit {
        add_collisions(&mut outcomes);
    }
    let elapsed = start.elapsed();
    Ok(written.and_then(|()| finish(ctx, args, &mut outcomes, &order, elapsed)))
}

/// What turns a probe's outcome into a reason a user can act on: the unset
/// variables, the variables behind headers, URL hints, and the values to
/// mask.
struct Reasons {
    missing: BTreeMap<String, Vec<String>>,
    auth_hints: BTreeMap<String, String>,
    url_hints: BTreeMap<String, &'static str>,
    blanked: BTreeMap<String, Vec<BlankedValue>>,
}

impl Reasons {
    fn new(targets: &[ProbeTarget], inventory: &Inventory) -> Self {
        let auth_hints = targets
            .iter()
            .filter_map(|target| {
                let entry = &inventory.winner(&target.name)?.entry;
                let used: Vec<String> = entry
                    .headers()
                    .into_iter()
                    .flat_map(|(header, value)| {
                        placeholder::references(value)
                            .into_iter()
                            .map(move |reference| {
                                format!("`{}` (header `{header}`)", reference.name)
                            })
                    })
                    .collect();
                if entry.fields().contains_key("headersHelper") {
                    return Some((
                        target.name.clone(),
                        "the headers the entry's `headersHelper` makes (probe does not run it; Claude Code does)".to_string(),
                    ));
                }
                (!used.is_empty()).then(|| (target.name.clone(), used.join(", ")))
            })
            .collect();
        let url_hints = targets
            .iter()
            .filter_map(|target| {
                let hint = match target.endpoint {
                    Endpoint::Http { .. } => "is the URL right? Streamable HTTP servers usually answer at `/mcp`; an SSE server needs `\"type\": \"sse\"`",
                    Endpoint::Sse { .. } => "is the URL right? SSE servers usually stream at `/sse`; a streamable HTTP server needs `\"type\": \"http\"`",
                    _ => return None,
                };
                Some((target.name.clone(), hint))
            })
            .collect();
        Self {
            missing: targets
                .iter()
                .map(|target| (target.name.clone(), target.missing.clone()))
                .collect(),
            auth_hints,
            url_hints,
            blanked: targets
                .iter()
                .map(|target| (target.name.clone(), target.blanked.clone()))
                .collect(),
        }
    }

    /// The outcome with its reason in words. Secrets a server echoes are
    /// masked where everything is printed: the shield learned every value
    /// handed to the servers.
    fn explain(&self, outcome: ProbeOutcome) -> Done {
        let unset = self
            .missing
            .get(&outcome.name)
            .map_or(&[][..], Vec::as_slice);
        let mut error = error_text(&outcome, unset);
        if let Some(text) = error.as_mut() {
            let sent_empty: Vec<String> = self
                .blanked
                .get(&outcome.name)
                .into_iter()
                .flatten()
                .filter(|value| value.sent_empty)
                .flat_map(|value| value.variables.iter().map(|name| format!("`${{{name}}}`")))
                .collect();
            if let Err(probe::ProbeError::Unauthorized { .. }) = &outcome.result
                && !sent_empty.is_empty()
            {
                text.push_str(&format!(
                    "; {} went empty, as Claude Code sends it: rename the variable (`mcpenv check` says how), or try the value with `--send-blanked`",
                    sent_empty.join(", ")
                ));
            } else if let Err(probe::ProbeError::Unauthorized { .. }) = &outcome.result {
                match self.auth_hints.get(&outcome.name) {
                    Some(hint) => text.push_str(&format!("; check the value of {hint}")),
                    None => text.push_str(
                        "; the entry sends no credentials, so the server likely signs in with OAuth: authenticate in Claude Code with `/mcp` (probe does not sign in)",
                    ),
                }
            }
            // The statuses a wrong path or transport gets; rmcp reports
            // them only as text.
            if let Some(hint) = self.url_hints.get(&outcome.name)
                && ["HTTP 400", "HTTP 404", "HTTP 405"]
                    .iter()
                    .any(|status| text.contains(status))
            {
                text.push_str(&format!("; {hint}"));
            }
            if text.contains("invalid peer certificate") {
                text.push_str("; if the server's certificate comes from your organisation's own CA, point `SSL_CERT_FILE` at that CA's certificate");
            }
        }
        let blanked = self.blanked.get(&outcome.name).cloned().unwrap_or_default();
        Done {
            error,
            outcome,
            blanked,
        }
    }
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

/// The servers to probe, with notes on stderr for those skipped.
fn select(
    ctx: &Ctx,
    args: &ProbeArgs,
    inventory: &Inventory,
    sources: &EnvSources,
) -> Result<Vec<ProbeTarget>, CliError> {
    let named = !args.names.is_empty();
    let names: Vec<String> = if named {
        args.names.clone()
    } else {
        inventory.names().into_iter().map(str::to_string).collect()
    };
    let files = sources.file_values();
    // The environment wins over the files, as with `mcpenv run`.
    let mut env = files.clone();
    env.extend(ctx.process_env.clone());
    let mut targets = Vec::new();
    for name in names {
        let Some(winner) = inventory.winner(&name) else {
            let mut error = CliError::failure(format!("no MCP server named `{name}`"));
            for hint in unknown_name_hints(ctx, inventory, &name) {
                error = error.with_hint(hint);
            }
            return Err(error);
        };
        if targets
            .iter()
            .any(|target: &ProbeTarget| target.name == name)
        {
            continue;
        }
        if let Some(note) = skip_reason(winner, args.trust_project, named) {
            if !ctx.quiet {
                let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
                    warning(err, &format!("skipped `{name}`: {note}"))
                });
            }
            continue;
        }
        targets.push(target(ctx, winner, &env, Blanking::new(ctx, args)));
    }
    Ok(targets)
}

/// Why a server is not probed, if it is not.
fn skip_reason(server: &Sourced, trust_project: bool, named: bool) -> Option<String> {
    // What Claude Code never starts is not started here either.
    if let Some(reason) = server.reason() {
        return Some(format!(
            "Claude Code does not load it ({reason}); not started"
        ));
    }
    if server.disabled && server.approval != Some(Approval::Rejected) {
        return Some(
            "disabled for this project in Claude Code (`disabledMcpServers`; `/mcp` re-enables it); not started"
                .to_string(),
        );
    }
    match server.approval {
        // A cloned `.mcp.json` is code someone else chose to run.
        Some(Approval::Pending) if !trust_project => Some(
            "project server not approved in Claude Code's settings; pass `--trust-project` to start it anyway".to_string(),
        ),
        Some(Approval::Rejected) if !(trust_project && named) => Some(
            "project server rejected in Claude Code's settings; name it with `--trust-project` to start it anyway".to_string(),
        ),
        _ => match server.entry.transport() {
            Transport::Stdio | Transport::Http | Transport::Sse => None,
            transport if transport.is_remote() => Some(format!(
                "probing `{transport}` servers is not supported (stdio, http and sse are)"
            )),
            transport => Some(format!("transport `{transport}` cannot be probed")),
        },
    }
}

/// Teaches the shield every value handed to a server, so that a server
/// echoing one (on stderr, in an error, in a tool's result) has it masked:
/// whatever `scan` would flag and every opaque token-like value among the
/// env values, arguments and headers, the URL's query values and password,
/// and the `Basic` credential built from the URL's user and password.
fn learn_handed(shield: &Shield, targets: &[ProbeTarget], sources: &EnvSources) {
    let from_files = sources.file_values();
    shield.learn(|redactor| {
        for target in targets {
            match &target.endpoint {
                Endpoint::Stdio(command) => {
                    for (key, value) in command.get_envs() {
                        let (Some(key), Some(Some(value))) =
                            (key.to_str(), value.map(|value| value.to_str()))
                        else {
                            continue;
                        };
                        if crate::secrets::is_secret_name(key) || from_files.contains_key(key) {
                            redactor.learn(value);
                        }
                        redactor.learn_env(key, value);
                        redactor.learn_handed(value);
                    }
                    let args: Vec<String> = command
                        .get_args()
                        .map(|arg| arg.to_string_lossy().into_owned())
                        .collect();
                    redactor.learn_words(&args);
                    for arg in &args {
                        redactor.learn_handed(arg);
                    }
                }
                Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
                    for (name, value) in headers {
                        redactor.learn(value);
                        redactor.learn_env(name, value);
                        for word in value.split_whitespace() {
                            redactor.learn_handed(word);
                        }
                    }
                    // Keys also travel in URLs: `?api_key=…`, `user:token@`.
                    if let Ok(url) = url::Url::parse(url) {
                        for (_, value) in url.query_pairs() {
                            redactor.learn_handed(&value);
                        }
                        if let Some(password) = url.password() {
                            let decoded = percent_encoding::percent_decode_str(password)
                                .decode_utf8_lossy()
                                .into_owned();
                            let user = percent_encoding::percent_decode_str(url.username())
                                .decode_utf8_lossy()
                                .into_owned();
                            redactor.learn_basic(&user, &decoded);
                            redactor.learn_url_password(password);
                        }
                    }
                }
                Endpoint::Remote { .. } => {}
            }
        }
    });
}

/// What Claude Code 2.1.332 expands to `""`, and whether probe does so too.
#[derive(Debug, Clone, Copy)]
struct Blanking {
    /// Scrub mode (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`) is on.
    scrub: bool,
    /// `--send-blanked`: send the values anyway.
    send: bool,
}

impl Blanking {
    fn new(ctx: &Ctx, args: &ProbeArgs) -> Self {
        Self {
            scrub: blanked::scrub_on(
                ctx.process_env
                    .get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB")
                    .map(String::as_str),
            ),
            send: args.send_blanked,
        }
    }
}

/// A server entry with its placeholders expanded as Claude Code expands
/// them: variables it sends empty are sent empty (unless `--send-blanked`),
/// and each value holding one is recorded.
fn target(
    ctx: &Ctx,
    server: &Sourced,
    env: &BTreeMap<String, String>,
    blanking: Blanking,
) -> ProbeTarget {
    let entry = &server.entry;
    let transport = entry.transport();
    let sink = if transport.is_remote() {
        Sink::Remote
    } else {
        Sink::Stdio
    };
    // In stdio values only a variable that is set is blanked.
    let blanks = |name: &str| {
        blanked::reason(name, sink, blanking.scrub).is_some()
            && (sink == Sink::Remote || env.contains_key(name))
    };
    let mut missing: Vec<String> = Vec::new();
    let mut blanked_values: Vec<BlankedValue> = Vec::new();
    let mut expand = |field: Field, text: &str| {
        let mut variables: Vec<String> = Vec::new();
        for reference in placeholder::references(text) {
            if blanks(&reference.name) && !variables.contains(&reference.name) {
                variables.push(reference.name);
            }
        }
        let expansion = placeholder::expand(text, |name| {
            if !blanking.send && variables.iter().any(|blanked| blanked == name) {
                return Some(String::new());
            }
            env.get(name).cloned()
        });
        for name in expansion.missing {
            if !missing.contains(&name) {
                missing.push(name);
            }
        }
        if !variables.is_empty() {
            blanked_values.push(BlankedValue {
                field: field.to_string(),
                variables,
                sent_empty: !blanking.send,
            });
        }
        expansion.text
    };
    if matches!(transport, Transport::Http | Transport::Sse) {
        let url = expand(Field::Url, entry.url().unwrap_or_default());
        let headers = entry
            .headers()
            .into_iter()
            .map(|(name, value)| {
                let expanded = expand(Field::Header(name.to_string()), value);
                (name.to_string(), expanded)
            })
            .collect();
        let endpoint = if transport == Transport::Sse {
            Endpoint::Sse { url, headers }
        } else {
            Endpoint::Http { url, headers }
        };
        return ProbeTarget {
            name: server.name.clone(),
            endpoint,
            missing,
            blanked: blanked_values,
        };
    }
    let program = expand(Field::Command, entry.command().unwrap_or_default());
    let args: Vec<String> = entry
        .args()
        .into_iter()
        .enumerate()
        .map(|(index, arg)| expand(Field::Arg(index), arg))
        .collect();
    let mut child_env = env.clone();
    for (key, value) in entry.env() {
        child_env.insert(key.to_string(), expand(Field::Env(key.to_string()), value));
    }
    // The child sees exactly this environment: mcpenv's, the `.env` files
    // and the entry's `env`, as under `mcpenv run -- claude`.
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(child_env)
        .current_dir(&ctx.locations.working_dir);
    ProbeTarget {
        name: server.name.clone(),
        endpoint: Endpoint::Stdio(command),
        missing,
        blanked: blanked_values,
    }
}

/// A finished probe and its reason in words.
struct Done {
    outcome: ProbeOutcome,
    error: Option<String>,
    /// The values sent (or not) empty, as Claude Code sends them.
    blanked: Vec<BlankedValue>,
}

/// The failure in one line, with the unset variables: the likeliest cause.
fn error_text(outcome: &ProbeOutcome, missing: &[String]) -> Option<String> {
    let error = outcome.result.as_ref().err()?;
    let mut text = error.to_string();
    if !missing.is_empty() {
        text.push_str(&format!(
            " (unset variables: {}; set them in `.env` or the environment)",
            missing.join(", ")
        ));
    }
    Some(text)
}

fn progress_line(err: &mut dyn Write, done: &Done) -> io::Result<()> {
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

fn add_collisions(outcomes: &mut [Done]) {
    let all: Vec<(String, Vec<String>)> = outcomes
        .iter()
        .map(|done| &done.outcome)
        .filter_map(|outcome| {
            let facts = outcome.result.as_ref().ok()?;
            Some((
                outcome.name.clone(),
                facts.tools.iter().map(|tool| tool.name.clone()).collect(),
            ))
        })
        .collect();
    for outcome in outcomes
        .iter_mut()
        .map(|done| &mut done.outcome)
        .filter(|outcome| outcome.result.is_ok())
    {
        let check = probe::collision_check(&outcome.name, &all);
        // Keep `tool_count` last, as the static checks put it.
        let at = outcome.audit.len().saturating_sub(1);
        outcome.audit.insert(at, check);
    }
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
struct ProbeReport<'a> {
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

/// Whether a server failed or failed an audit check: exit 1.
fn any_failed(outcomes: &[Done]) -> bool {
    let tally = Tally::new(outcomes);
    tally.failed > 0 || tally.failed_checks > 0
}

fn summary(args: &ProbeArgs, outcomes: &[Done], elapsed: Duration) -> Summary {
    let tally = Tally::new(outcomes);
    Summary {
        ok: tally.ok,
        failed: tally.failed,
        ms: elapsed.as_millis(),
        audit_failed: args.audit.then_some(tally.audit_failed),
    }
}

fn finish(
    ctx: &Ctx,
    args: &ProbeArgs,
    outcomes: &mut [Done],
    order: &[String],
    elapsed: Duration,
) -> io::Result<bool> {
    let summary = summary(args, outcomes, elapsed);
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
