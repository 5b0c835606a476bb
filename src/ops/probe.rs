//! Which servers `probe` starts and how their outcomes read: the consent
//! rule (what Claude Code would not start is not started, project servers
//! only once approved or with `trust_project`), each entry expanded as
//! Claude Code expands it, every value handed to a server taught to the
//! shield, and each failure explained with its likeliest cause. Running
//! them ([`probe_targets`], [`probe_servers`]): deadlines, a few at a time,
//! the reaper that kills every process group left behind; the front-end
//! owns the runtime, progress and signals.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::check::EnvSources;
use crate::config::approval::Approval;
use crate::config::claude_code::blanked::{self, Sink};
use crate::config::expansion;
use crate::config::inventory::{Inventory, Sourced};
use crate::config::model::ServerEntry;
use crate::config::model::{Field, Transport};
use crate::ops::handed;
use crate::ops::names::unknown_name_hints;
use crate::ops::{Context, Error};
#[cfg(unix)]
use crate::probe::reaper::Reaper;
use crate::probe::{self, AuditCalls, BlankedValue, Endpoint, ProbeOutcome, ProbeTarget};
use crate::secrets::redact::Shield;
use crate::stores::references::{ResolveError, Resolver};

/// Which servers to probe.
#[derive(Debug, Clone, Default)]
pub struct ProbeRequest {
    /// The servers by name; none: every server in effect.
    pub names: Vec<String>,
    /// Start project servers not approved in Claude Code (a rejected one
    /// only when named).
    pub trust_project: bool,
    /// Send values Claude Code would send empty.
    pub send_blanked: bool,
}

/// The servers to start, and those that will not be.
#[derive(Debug)]
pub struct Selection {
    /// Ready to start, in order.
    pub targets: Vec<ProbeTarget>,
    /// Not started, with the reason.
    pub skipped: Vec<Skipped>,
}

/// A server not started, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// The server.
    pub name: String,
    /// Why it is not started.
    pub reason: String,
    /// For a project server the person has not approved: pending or
    /// rejected, the one case a front-end may offer a way around.
    pub unapproved: Option<Approval>,
}

/// The servers to probe, and those skipped with the reason.
pub fn select(
    ctx: &Context,
    request: &ProbeRequest,
    inventory: &Inventory,
    sources: &EnvSources,
) -> Result<Selection, Error> {
    let named = !request.names.is_empty();
    let names: Vec<String> = if named {
        request.names.clone()
    } else {
        inventory.names().into_iter().map(str::to_string).collect()
    };
    let mut values = HandedValues::new(ctx, sources);
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        let Some(winner) = inventory.winner(&name) else {
            let mut error = Error::failure(format!("no MCP server named `{name}`"));
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
        // What is not started asks no password manager for anything.
        let reason = skip_reason(winner, request.trust_project, named);
        let env = match reason {
            Some(reason) => Err(reason),
            None => values.for_entry(&winner.entry),
        };
        let env = match env {
            Ok(env) => env,
            Err(reason) => {
                let unapproved = winner
                    .approval
                    .filter(|approval| *approval != Approval::Approved)
                    .filter(|_| winner.reason().is_none() && !winner.disabled);
                skipped.push(Skipped {
                    name,
                    reason,
                    unapproved,
                });
                continue;
            }
        };
        targets.push(target(ctx, winner, &env, Blanking::new(ctx, request)));
    }
    Ok(Selection { targets, skipped })
}

/// The values a started server may get from the dotenv files: those of
/// the files the person's own ([`handed::held_files`] are left out), each
/// reference (`op://…`, `keychain:…`) resolved once, and only when a server
/// that is started needs it.
struct HandedValues<'c> {
    ctx: &'c Context,
    files: BTreeMap<String, (String, std::path::PathBuf)>,
    resolver: Resolver,
    resolved: BTreeMap<String, Result<String, ResolveError>>,
}

impl<'c> HandedValues<'c> {
    fn new(ctx: &'c Context, sources: &EnvSources) -> Self {
        let held = handed::held_files(&ctx.locations);
        Self {
            ctx,
            files: handed::handed_values_with_files(sources, &held),
            resolver: Resolver::new(ctx.shield.clone()),
            resolved: BTreeMap::new(),
        }
    }

    /// What a server whose entry is `entry` is started with, as Claude Code
    /// started by `mcpenv run` would hand it: the process environment, and
    /// of the dotenv files only the variables the entry references (the
    /// environment winning). `Err` is why it is not started: a variable it
    /// needs has a reference that gives no value (never handed on as the
    /// reference's text).
    fn for_entry(&mut self, entry: &ServerEntry) -> Result<BTreeMap<String, String>, String> {
        let mut env = self.ctx.process_env.clone();
        for (_, text) in entry.expandable_fields() {
            for reference in expansion::references(text) {
                let name = reference.name;
                if env.contains_key(&name) {
                    continue;
                }
                let Some((value, file)) = self.files.get(&name) else {
                    continue;
                };
                let resolver = &mut self.resolver;
                // A reference a repository file chose is never read unasked.
                let resolved = self
                    .resolved
                    .entry(name.clone())
                    .or_insert_with(|| resolver.value_from(Some(file), &name, value));
                match resolved {
                    Ok(value) => {
                        env.insert(name, value.clone());
                    }
                    Err(error) => {
                        return Err(format!(
                            "`{name}` {}; not started ({})",
                            error.message, error.hint
                        ));
                    }
                }
            }
        }
        Ok(env)
    }
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
        Some(Approval::Pending) if !trust_project => {
            Some("project server not approved in Claude Code's settings".to_string())
        }
        Some(Approval::Rejected) if !(trust_project && named) => {
            Some("project server rejected in Claude Code's settings".to_string())
        }
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
pub fn learn_handed(shield: &Shield, targets: &[ProbeTarget], sources: &EnvSources) {
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
    fn new(ctx: &Context, request: &ProbeRequest) -> Self {
        Self {
            scrub: blanked::scrub_on(
                ctx.process_env
                    .get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB")
                    .map(String::as_str),
            ),
            send: request.send_blanked,
        }
    }
}

/// A server entry with its placeholders expanded as Claude Code expands
/// them: variables it sends empty are sent empty (unless `--send-blanked`),
/// and each value holding one is recorded.
fn target(
    ctx: &Context,
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
        for reference in expansion::references(text) {
            if blanks(&reference.name) && !variables.contains(&reference.name) {
                variables.push(reference.name);
            }
        }
        let expansion = expansion::expand(text, |name| {
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
    // The child sees exactly this environment: mcpenv's, the dotenv values
    // its entry references and the entry's `env`.
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

/// What turns a probe's outcome into a reason a user can act on: the unset
/// variables, the variables behind headers, URL hints, and the values to
/// mask.
pub struct Reasons {
    missing: BTreeMap<String, Vec<String>>,
    auth_hints: BTreeMap<String, String>,
    url_hints: BTreeMap<String, &'static str>,
    blanked: BTreeMap<String, Vec<BlankedValue>>,
}

impl Reasons {
    /// What explains the outcomes of `targets`.
    pub fn new(targets: &[ProbeTarget], inventory: &Inventory) -> Self {
        let auth_hints = targets
            .iter()
            .filter_map(|target| {
                let entry = &inventory.winner(&target.name)?.entry;
                let used: Vec<String> = entry
                    .headers()
                    .into_iter()
                    .flat_map(|(header, value)| {
                        expansion::references(value)
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
    pub fn explain(&self, outcome: ProbeOutcome) -> Done {
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

/// A finished probe and its reason in words.
pub struct Done {
    /// What the probe found.
    pub outcome: ProbeOutcome,
    /// The failure in words, with its likeliest cause.
    pub error: Option<String>,
    /// The values sent (or not) empty, as Claude Code sends them.
    pub blanked: Vec<BlankedValue>,
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

/// Adds the check for tool names two servers share to each audit.
pub fn add_collisions(outcomes: &mut [Done]) {
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

/// Probes `targets` (with `options`), each outcome explained by `reasons`
/// and handed to `on_done` as it finishes (with `audit`, collisions are
/// added once all are in); returns them all. Dropping the future stops
/// every server started.
pub async fn run(
    targets: Vec<ProbeTarget>,
    reasons: &Reasons,
    options: probe::ProbeOptions,
    mut on_done: impl FnMut(&Done),
) -> Vec<Done> {
    let audit = options.audit.is_some();
    let mut outcomes: Vec<Done> = Vec::new();
    probe::probe_all(targets, options, |outcome| {
        let done = reasons.explain(outcome);
        on_done(&done);
        outcomes.push(done);
    })
    .await;
    if audit {
        add_collisions(&mut outcomes);
    }
    outcomes
}

/// How servers are probed.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    /// How long each server has to answer everything.
    pub timeout: Duration,
    /// How many servers at once (none: all).
    pub jobs: Option<usize>,
    /// Which tools an audit calls, when auditing.
    pub audit: Option<AuditCalls>,
}

/// Probes `targets` as [`run`] does, after teaching the shield every value
/// handed to them; a reaper (when `ctx` knows mcpenv's program and a stdio
/// server starts a process) kills every process group left behind, however
/// this ends. Dropping the future stops every server started.
pub async fn probe_targets(
    ctx: &Context,
    targets: Vec<ProbeTarget>,
    inventory: &Inventory,
    sources: &EnvSources,
    settings: &ProbeSettings,
    on_done: impl FnMut(&Done),
) -> Vec<Done> {
    learn_handed(&ctx.shield, &targets, sources);
    let reasons = Reasons::new(&targets, inventory);
    // Windows needs no reaper: the job object of each server ends its
    // processes when mcpenv ends, however it ends (`probe::group`).
    #[cfg(unix)]
    let reaper = ctx
        .mcpenv_program
        .as_deref()
        .filter(|_| {
            // Only stdio servers start processes.
            targets
                .iter()
                .any(|target| matches!(target.endpoint, Endpoint::Stdio(_)))
        })
        .and_then(Reaper::start)
        .map(Arc::new);
    #[cfg(not(unix))]
    let reaper: Option<Arc<dyn probe::GroupWatch>> = None;
    let options = probe::ProbeOptions {
        timeout: settings.timeout,
        jobs: settings.jobs.unwrap_or(targets.len()).max(1),
        audit: settings.audit,
        watch: reaper
            .clone()
            .map(|reaper| reaper as Arc<dyn probe::GroupWatch>),
    };
    // The reaper goes with the last reference: here, or with the last
    // probe task dropped.
    run(targets, &reasons, options, on_done).await
}

/// What [`probe_servers`] found.
pub struct Probed {
    /// Each server started, in the order asked (or configured).
    pub done: Vec<Done>,
    /// Each server not started, and why.
    pub skipped: Vec<Skipped>,
}

/// Selects the servers of `request` (reading the configuration off the
/// async threads) and probes them with `settings`: what a front-end that
/// shows no progress runs.
pub async fn probe_servers(
    ctx: &Context,
    request: ProbeRequest,
    settings: &ProbeSettings,
) -> Result<Probed, Error> {
    let blocking_ctx = ctx.clone();
    let selected = tokio::task::spawn_blocking(move || {
        let ctx = blocking_ctx;
        let inventory = ctx.inventory()?;
        let sources = ctx.env_sources()?;
        let selection = select(&ctx, &request, &inventory, &sources)?;
        Ok::<_, Error>((selection, inventory, sources))
    })
    .await
    .map_err(|error| Error::failure(format!("the probe could not start: {error}")))??;
    let (Selection { targets, skipped }, inventory, sources) = selected;
    let order: Vec<String> = targets.iter().map(|target| target.name.clone()).collect();
    let mut done = probe_targets(ctx, targets, &inventory, &sources, settings, |_| {}).await;
    // In the order asked (or configured), not the order they finished.
    done.sort_by_key(|done| order.iter().position(|name| *name == done.outcome.name));
    Ok(Probed { done, skipped })
}
