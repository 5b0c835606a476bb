//! Probing MCP servers: start each one, `initialize`, list its tools,
//! prompts and resources, and optionally audit how it reports tool errors.
//!
//! Every probe has its own deadline, and every child runs in its own process
//! group that is killed (with all descendants) on every path out: success,
//! failure, timeout and cancellation (dropping the future).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{JsonObject, ProtocolVersion};
use rmcp::service::ServiceError;
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Semaphore, mpsc, oneshot};

mod audit;
mod group;
mod handshake;
#[cfg(unix)]
pub mod reaper;
mod sse;
pub mod stderr_reason;
mod stdio;
pub mod tls;

pub use audit::{AuditCalls, CheckStatus, ToolCall};

/// More tools than this in one server is worth a warning: clients put every
/// tool description into the model's context.
pub const MANY_TOOLS: usize = 40;

/// How to reach a server.
#[derive(Debug)]
pub enum Endpoint {
    /// A child process speaking JSON-RPC lines on stdin/stdout: the command
    /// with its arguments, environment and working directory set by the
    /// caller (the only one that knows the process environment); the probe
    /// sets its standard streams and process group.
    Stdio(std::process::Command),
    /// A streamable HTTP server (`http://` or `https://`).
    Http {
        /// The URL, placeholders expanded.
        url: String,
        /// Header names and values, placeholders expanded.
        headers: Vec<(String, String)>,
    },
    /// A server on the HTTP+SSE transport of protocol 2024-11-05.
    Sse {
        /// The event stream's URL, placeholders expanded.
        url: String,
        /// Header names and values, placeholders expanded.
        headers: Vec<(String, String)>,
    },
    /// A server reached by URL over a transport probe does not speak.
    Remote {
        /// The transport, such as `ws`.
        transport: String,
        /// The URL, placeholders expanded.
        url: String,
    },
}

/// One server to probe.
#[derive(Debug)]
pub struct ProbeTarget {
    /// The server's name in the configuration.
    pub name: String,
    /// How to reach it.
    pub endpoint: Endpoint,
    /// Variables its entry references that are unset everywhere.
    pub missing: Vec<String>,
    /// Values holding variables Claude Code expands to `""` for this
    /// server (credential names toward remote servers, …).
    pub blanked: Vec<BlankedValue>,
}

/// One value of an entry holding variables Claude Code sends empty.
#[derive(Debug, Clone, Serialize)]
pub struct BlankedValue {
    /// Where in the entry (`headers.Authorization`, `url`, `args[1]`).
    pub field: String,
    /// The variables.
    pub variables: Vec<String>,
    /// Whether the probe sent them empty too, as Claude Code does (else it
    /// sent their values).
    pub sent_empty: bool,
}

/// Told about every process group a probe starts and kills, so that a
/// process outside this one can kill the groups left should this one die
/// without cleaning up (SIGKILL).
pub trait GroupWatch: Send + Sync {
    /// A server's process group exists.
    fn started(&self, group: i32);
    /// That group has been killed.
    fn stopped(&self, group: i32);
}

/// How to probe.
#[derive(Clone)]
pub struct ProbeOptions {
    /// Each server's own deadline, from spawn to the last listing.
    pub timeout: Duration,
    /// How many servers are probed at once (at least 1).
    pub jobs: usize,
    /// Whether to audit error reporting, and which tools it may call.
    pub audit: Option<AuditCalls>,
    /// Who hears of each process group started and killed.
    pub watch: Option<Arc<dyn GroupWatch>>,
}

/// What a server that answered said about itself.
#[derive(Debug, Clone, Serialize)]
pub struct ServerFacts {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// The protocol version the server chose.
    pub protocol_version: String,
    /// Its tools.
    pub tools: Vec<ToolFacts>,
    /// How many prompts it lists (0 when it has no prompts capability).
    pub prompts: usize,
    /// How many resources it lists (0 when it has no resources capability).
    pub resources: usize,
    /// Time from spawn to the `initialize` answer.
    pub ready: Duration,
}

/// What the audit needs to know about one tool.
#[derive(Debug, Clone, Serialize)]
pub struct ToolFacts {
    /// Its name.
    pub name: String,
    /// Whether it has a non-empty description.
    pub described: bool,
    /// Whether its input schema is `"type": "object"`.
    pub object_schema: bool,
    /// Annotated `readOnlyHint: true`.
    pub read_only: bool,
    /// Annotated `destructiveHint: true`.
    pub destructive: bool,
    /// Its input schema (the audit builds arguments that fail it).
    #[serde(skip)]
    pub input_schema: JsonObject,
}

/// One audit check of one server.
#[derive(Debug, Clone, Serialize)]
pub struct AuditCheck {
    /// `unknown_tool`, `invalid_arguments`, `tool_descriptions`,
    /// `input_schemas`, `name_collisions` or `tool_count`.
    pub check: &'static str,
    /// Whether the server passed (also true when skipped).
    pub ok: bool,
    /// Passed, a warning, failed or skipped.
    pub status: CheckStatus,
    /// What the spec asks for.
    pub expected: String,
    /// What the server did.
    pub got: String,
    /// Where the rule is written (a spec page of one protocol version).
    pub spec: &'static str,
    /// The rule in one line, and why it matters.
    #[serde(skip)]
    pub rule: &'static str,
    /// The server's own tool this check called, and with what.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub called: Option<ToolCall>,
}

/// The result of probing one server.
#[derive(Debug)]
pub struct ProbeOutcome {
    /// The server's name in the configuration.
    pub name: String,
    /// What it said, or why it could not be probed.
    pub result: Result<ServerFacts, ProbeError>,
    /// Time from the start of this probe to its end.
    pub elapsed: Duration,
    /// Audit checks (empty unless auditing a server that answered).
    pub audit: Vec<AuditCheck>,
}

/// Why a server could not be probed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The program is not on `PATH` (or the path does not exist).
    #[error("command `{program}` not found")]
    NotFound {
        /// The program.
        program: String,
    },
    /// The program exists but could not be started.
    #[error("cannot start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server exited before the probe finished.
    #[error("exited with status {status}{}", stderr_suffix(.stderr))]
    Exited {
        /// The exit status, as the OS describes it.
        status: String,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// The server did not finish answering within the deadline.
    #[error("no answer within {} s{}", .timeout.as_secs_f64(), stderr_suffix(.stderr))]
    Timeout {
        /// The deadline.
        timeout: Duration,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// The server wrote something that is not JSON-RPC on stdout.
    #[error("wrote non-JSON to stdout (only MCP messages are allowed there): `{line}`")]
    NotJson {
        /// The first such line, shortened.
        line: String,
    },
    /// The server and mcpenv share no protocol version.
    #[error("protocol version mismatch: {detail}")]
    Version {
        /// What each side supports.
        detail: String,
    },
    /// Any other protocol failure.
    #[error("{detail}{}", stderr_suffix(.stderr))]
    Protocol {
        /// What went wrong.
        detail: String,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// The server answered 401 or 403.
    #[error("HTTP 401/403: the server wants credentials{}", if .challenge.is_empty() { String::new() } else { format!(" (`WWW-Authenticate: {}`)", .challenge) })]
    Unauthorized {
        /// The `WWW-Authenticate` challenge, if any.
        challenge: String,
    },
    /// The transport is not supported by this version of probe.
    #[error("probing `{transport}` servers is not supported yet")]
    Unsupported {
        /// The transport.
        transport: String,
    },
}

fn stderr_suffix(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!("; stderr: {}", lines.join(" | "))
    }
}

/// Probes every target, at most `options.jobs` at once, and hands each
/// outcome to `on_done` as it finishes. Dropping the returned future kills
/// every server still running.
pub async fn probe_all(
    targets: Vec<ProbeTarget>,
    options: ProbeOptions,
    mut on_done: impl FnMut(ProbeOutcome),
) {
    let semaphore = Arc::new(Semaphore::new(options.jobs.max(1)));
    let (sender, mut receiver) = mpsc::unbounded_channel();
    // A JoinSet aborts (drops) its tasks when dropped, so cancelling this
    // future drops every probe, and each probe's guard kills its group.
    let mut tasks = tokio::task::JoinSet::new();
    for target in targets {
        let semaphore = Arc::clone(&semaphore);
        let sender = sender.clone();
        let options = options.clone();
        tasks.spawn(async move {
            // The semaphore is never closed, so acquiring cannot fail.
            let Ok(_permit) = semaphore.acquire().await else {
                return;
            };
            let outcome = probe_one(target, options).await;
            let _ = sender.send(outcome);
        });
    }
    drop(sender);
    while let Some(outcome) = receiver.recv().await {
        on_done(outcome);
    }
    while tasks.join_next().await.is_some() {}
}

/// Probes one target within its deadline.
pub async fn probe_one(target: ProbeTarget, options: ProbeOptions) -> ProbeOutcome {
    let start = Instant::now();
    let (found, elapsed) = match target.endpoint {
        Endpoint::Stdio(command) => probe_stdio(command, options, start).await,
        Endpoint::Http { url, headers } => (
            probe_http(&url, &headers, options, start).await,
            start.elapsed(),
        ),
        Endpoint::Sse { url, headers } => (
            probe_sse(&url, &headers, options, start).await,
            start.elapsed(),
        ),
        Endpoint::Remote { transport, .. } => {
            (Err(ProbeError::Unsupported { transport }), start.elapsed())
        }
    };
    let (result, audit) = match found {
        Ok((facts, audit)) => (Ok(facts), audit),
        Err(error) => (Err(error), Vec::new()),
    };
    ProbeOutcome {
        name: target.name,
        result,
        elapsed,
        audit,
    }
}

/// Kills a process group when dropped, whatever the path out.
struct GroupGuard {
    group: group::Group,
    watch: Option<Arc<dyn GroupWatch>>,
}

impl GroupGuard {
    fn new(group: group::Group, watch: Option<Arc<dyn GroupWatch>>) -> Self {
        if let Some(watch) = &watch {
            watch.started(group.id());
        }
        Self { group, watch }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.group.kill();
        if let Some(watch) = &self.watch {
            watch.stopped(self.group.id());
        }
    }
}

type Stderr = Arc<Mutex<VecDeque<String>>>;

fn last_lines(stderr: &Stderr) -> Vec<String> {
    let kept: Vec<String> = stderr
        .lock()
        .map(|lines| lines.iter().cloned().collect())
        .unwrap_or_default();
    stderr_reason::reason_lines(&kept)
}

/// Probes a stdio server, then shuts it down; the time returned is the
/// probe's, without the shutdown.
async fn probe_stdio(
    command: std::process::Command,
    options: ProbeOptions,
    start: Instant,
) -> (Result<(ServerFacts, Vec<AuditCheck>), ProbeError>, Duration) {
    let program = command.get_program().to_string_lossy().into_owned();
    let program = program.as_str();
    let mut command = Command::from(command);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // A group of its own, so the server and anything it starts can be
    // killed together (and Ctrl-C in the terminal does not reach it
    // before mcpenv has cleaned up).
    group::Group::prepare(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => {
            let error = ProbeError::NotFound {
                program: program.to_string(),
            };
            return (Err(error), start.elapsed());
        }
        Err(source) => {
            let error = ProbeError::Spawn {
                program: program.to_string(),
                source,
            };
            return (Err(error), start.elapsed());
        }
    };
    let group = match group::Group::of(&child) {
        Ok(group) => group,
        // Windows refused the job object: without it the server's
        // children could outlive the probe, so it is not run.
        Err(source) => {
            let _ = child.start_kill();
            let error = ProbeError::Spawn {
                program: program.to_string(),
                source,
            };
            return (Err(error), start.elapsed());
        }
    };
    // Dropped last: kills whatever the shutdown below left in the group,
    // and everything at once if this future is dropped (Ctrl-C).
    let mut guard = group.map(|group| GroupGuard::new(group, options.watch.clone()));
    let found = stdio_session(&mut child, &options, start).await;
    let elapsed = start.elapsed();
    stdio::shut_down(&mut child, guard.as_mut().map(|guard| &mut guard.group)).await;
    (found, elapsed)
}

/// The MCP session with a started stdio server. Every handle on its stdin
/// is dropped by the time this returns.
async fn stdio_session(
    child: &mut Child,
    options: &ProbeOptions,
    start: Instant,
) -> Result<(ServerFacts, Vec<AuditCheck>), ProbeError> {
    let stderr: Stderr = Arc::default();
    if let Some(pipe) = child.stderr.take() {
        let stderr = Arc::clone(&stderr);
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                if let Ok(mut kept) = stderr.lock() {
                    if kept.len() == stderr_reason::KEPT_LINES {
                        kept.pop_front();
                    }
                    kept.push_back(shorten(line));
                }
            }
        });
    }
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(protocol("the child has no stdin or stdout", &stderr));
    };
    // Relay stdout through a channel of our own, to catch lines that are
    // not JSON: the SDK would skip them silently and the probe would time out.
    let (relay_in, relay_out) = mpsc::unbounded_channel::<String>();
    let (garbage_sender, garbage) = oneshot::channel::<String>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            if serde_json::from_str::<serde_json::Value>(&line).is_err() {
                let _ = garbage_sender.send(shorten(line.trim()));
                // Keep the relay open so the session does not see an end
                // of stream first and report that instead.
                std::future::pending::<()>().await;
                return;
            }
            if relay_in.send(line).is_err() {
                return;
            }
        }
    });

    let lines = stdio::Lines::new(stdin, relay_out);
    let session = talk(lines.clone(), move || Some(lines), options.audit, start);
    let outcome = tokio::select! {
        biased;
        Ok(line) = garbage => return Err(ProbeError::NotJson { line }),
        outcome = tokio::time::timeout(options.timeout.saturating_sub(start.elapsed()), session) => outcome,
    };
    match outcome {
        Err(_elapsed) => Err(ProbeError::Timeout {
            timeout: options.timeout,
            stderr: last_lines(&stderr),
        }),
        Ok(Ok(found)) => Ok(found),
        Ok(Err(failure)) => Err(explain(failure, child, &stderr).await),
    }
}

async fn probe_http(
    url: &str,
    headers: &[(String, String)],
    options: ProbeOptions,
    start: Instant,
) -> Result<(ServerFacts, Vec<AuditCheck>), ProbeError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    check_url(url)?;
    tls::install_provider();
    let custom = header_map(headers)?
        .into_iter()
        .filter_map(|(name, value)| Some((name?, value)))
        .collect();
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let transport = StreamableHttpClientTransport::from_config(config.clone());
    // A refused `initialize` opens no HTTP session: a fresh transport retries.
    let again = move || Some(StreamableHttpClientTransport::from_config(config));
    remote_session(
        talk(transport, again, options.audit, start),
        &options,
        start,
    )
    .await
}

async fn probe_sse(
    url: &str,
    headers: &[(String, String)],
    options: ProbeOptions,
    start: Instant,
) -> Result<(ServerFacts, Vec<AuditCheck>), ProbeError> {
    check_url(url)?;
    let headers = header_map(headers)?;
    let session = async {
        let transport = sse::SseTransport::connect(url, headers)
            .await
            .map_err(Failure::Connect)?;
        // The HTTP+SSE transport predates 2026-07-28: nothing to retry with.
        talk(transport, || None, options.audit, start).await
    };
    remote_session(session, &options, start).await
}

/// A remote server's session within the probe's deadline (no stderr to
/// quote: the server is not our child).
async fn remote_session(
    session: impl Future<Output = Result<(ServerFacts, Vec<AuditCheck>), Failure>>,
    options: &ProbeOptions,
    start: Instant,
) -> Result<(ServerFacts, Vec<AuditCheck>), ProbeError> {
    match tokio::time::timeout(options.timeout.saturating_sub(start.elapsed()), session).await {
        Err(_elapsed) => Err(ProbeError::Timeout {
            timeout: options.timeout,
            stderr: Vec::new(),
        }),
        Ok(Ok(found)) => Ok(found),
        Ok(Err(failure)) => Err(session_error(failure, &Stderr::default())),
    }
}

/// Checks the URL before any request, so the reason names it plainly (the
/// URL itself is not shown: it may hold a key).
fn check_url(url: &str) -> Result<(), ProbeError> {
    let invalid = |detail: String| ProbeError::Protocol {
        detail,
        stderr: Vec::new(),
    };
    if url.trim().is_empty() {
        return Err(invalid("the entry has no `url`".to_string()));
    }
    let parsed =
        url::Url::parse(url).map_err(|error| invalid(format!("the URL is not valid: {error}")))?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        scheme => Err(invalid(format!(
            "the URL must start with `http://` or `https://`, not `{scheme}:`"
        ))),
    }
}

/// Checks header names and values as HTTP requires them.
fn header_map(headers: &[(String, String)]) -> Result<http::HeaderMap, ProbeError> {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        let name =
            http::HeaderName::try_from(name.as_str()).map_err(|error| ProbeError::Protocol {
                detail: format!("invalid header name `{name}`: {error}"),
                stderr: Vec::new(),
            })?;
        // The value is never shown: it is usually a secret.
        let value =
            http::HeaderValue::try_from(value.as_str()).map_err(|_| ProbeError::Protocol {
                detail: format!("invalid value for header `{name}`"),
                stderr: Vec::new(),
            })?;
        map.insert(name, value);
    }
    Ok(map)
}

/// A failure inside the MCP session, before it is explained.
enum Failure {
    Connect(sse::SseError),
    Initialize(Box<rmcp::service::ClientInitializeError>),
    Request(&'static str, ServiceError),
    Version(String),
    /// `initialize` was refused with `code` and `server/discover` got no
    /// answer within `wait`.
    NoDiscovery {
        code: i32,
        wait: Duration,
    },
}

/// Turns a session failure into the most useful reason: the exit status
/// when the server died, else the protocol error.
async fn explain(failure: Failure, child: &mut Child, stderr: &Stderr) -> ProbeError {
    if matches!(failure, Failure::Version(_)) {
        // mcpenv hung up itself: the server's exit says nothing.
        return session_error(failure, stderr);
    }
    // A server that closed its stdout is usually exiting: give it a moment
    // so the report can say how it exited.
    if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
        // Let the stderr reader catch up with the last lines.
        tokio::time::sleep(Duration::from_millis(20)).await;
        return ProbeError::Exited {
            status: status
                .code()
                .map_or_else(|| status.to_string(), |code| code.to_string()),
            stderr: last_lines(stderr),
        };
    }
    session_error(failure, stderr)
}

/// A session failure of a server that is still running (or remote).
fn session_error(failure: Failure, stderr: &Stderr) -> ProbeError {
    match failure {
        Failure::Connect(error) => match error.auth_challenge() {
            Some(challenge) => ProbeError::Unauthorized {
                challenge: challenge.to_string(),
            },
            None => protocol(&error.to_string(), stderr),
        },
        Failure::Initialize(error) if error.auth_challenge().is_some() => {
            ProbeError::Unauthorized {
                challenge: error.auth_challenge().unwrap_or_default().to_string(),
            }
        }
        Failure::Initialize(error) => match *error {
            rmcp::service::ClientInitializeError::NoCompatibleProtocolVersion {
                client_supported,
                server_supported,
            } => ProbeError::Version {
                detail: format!(
                    "mcpenv speaks {}, the server {}",
                    versions(&client_supported),
                    versions(&server_supported)
                ),
            },
            rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                // An SSE server may take the stream but refuse the POST.
                match error
                    .error
                    .downcast_ref::<sse::SseError>()
                    .and_then(sse::SseError::auth_challenge)
                {
                    Some(challenge) => ProbeError::Unauthorized {
                        challenge: challenge.to_string(),
                    },
                    None => protocol(&wire_detail(error.error.as_ref()), stderr),
                }
            }
            other => protocol(&format!("initialize failed: {other}"), stderr),
        },
        Failure::Version(detail) => ProbeError::Version { detail },
        Failure::NoDiscovery { code, wait } => protocol(
            &format!(
                "the server refused `initialize` at protocol {} (JSON-RPC error {code}) and did not answer `server/discover` within {} s",
                ProtocolVersion::LATEST_WITH_INITIALIZE,
                wait.as_secs()
            ),
            stderr,
        ),
        // A server may let `initialize` through and want credentials (or a
        // wider scope, 403) for the listings.
        Failure::Request(_, error) if http_challenge(&error).is_some() => {
            ProbeError::Unauthorized {
                challenge: http_challenge(&error).unwrap_or_default().to_string(),
            }
        }
        Failure::Request(method, ServiceError::TransportSend(error)) => protocol(
            &format!("{method} failed: {}", wire_detail(error.error.as_ref())),
            stderr,
        ),
        Failure::Request(method, error) => protocol(&format!("{method} failed: {error}"), stderr),
    }
}

/// The `WWW-Authenticate` challenge of an HTTP 401/403 anywhere in the
/// chain of `error`.
fn http_challenge<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a str> {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    let mut current = Some(error);
    while let Some(cause) = current {
        match cause.downcast_ref::<HttpError>() {
            Some(HttpError::AuthRequired(error)) => return Some(&error.www_authenticate_header),
            Some(HttpError::InsufficientScope(error)) => {
                return Some(&error.www_authenticate_header);
            }
            _ => current = cause.source(),
        }
    }
    None
}

/// What went wrong on the wire, in words. rmcp's own messages name its
/// internal types ("Transport [rmcp::transport::worker::...] error").
fn wire_detail(error: &(dyn std::error::Error + 'static)) -> String {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    let mut current = Some(error);
    while let Some(cause) = current {
        if let Some(error) = cause.downcast_ref::<reqwest::Error>() {
            return sse::describe_request_error(error);
        }
        match cause.downcast_ref::<HttpError>() {
            Some(HttpError::Client(error)) => return sse::describe_request_error(error),
            Some(HttpError::HttpStatus(status)) => return format!("HTTP {}", status.status),
            Some(other) => return other.to_string(),
            None => {}
        }
        if let Some(error) = cause.downcast_ref::<sse::SseError>() {
            return error.to_string();
        }
        current = cause.source();
    }
    error.to_string()
}

fn versions(list: &[rmcp::model::ProtocolVersion]) -> String {
    let names: Vec<String> = list.iter().map(ToString::to_string).collect();
    names.join(", ")
}

fn protocol(detail: &str, stderr: &Stderr) -> ProbeError {
    ProbeError::Protocol {
        detail: one_line(detail),
        stderr: last_lines(stderr),
    }
}

/// `text` as one short line: whitespace runs collapsed, and an HTML error
/// page some servers answer with (after "HTTP 404 Not Found: ") left out.
fn one_line(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = match text.find(": <") {
        Some(at) => &text[..at],
        None => &text,
    };
    // An empty body leaves "HTTP 404 Not Found:" behind.
    shorten(text.trim_end_matches([':', ' ']))
}

fn shorten(line: &str) -> String {
    const MAX: usize = 200;
    if line.chars().count() <= MAX {
        return line.to_string();
    }
    let mut short: String = line.chars().take(MAX).collect();
    short.push('…');
    short
}

/// The whole session: handshake over `transport` (or over `again`'s, when
/// the server asks for another revision), listings, audit calls.
async fn talk<T, E, A>(
    transport: T,
    again: impl FnOnce() -> Option<T>,
    audit: Option<AuditCalls>,
    start: Instant,
) -> Result<(ServerFacts, Vec<AuditCheck>), Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = handshake::connect(transport, again).await?;
    let ready = start.elapsed();
    let info = client.peer_info();
    let (name, version, protocol_version, capabilities) = match info.as_deref() {
        Some(info) => (
            info.server_info
                .as_ref()
                .map(|server| server.name.clone())
                .unwrap_or_default(),
            info.server_info
                .as_ref()
                .map(|server| server.version.clone())
                .unwrap_or_default(),
            info.protocol_version.to_string(),
            info.capabilities.clone(),
        ),
        None => Default::default(),
    };
    // rmcp accepts any version string; a client must not go on with one it
    // does not know (the spec: it "SHOULD disconnect").
    let known = [
        ProtocolVersion::V_2024_11_05,
        ProtocolVersion::V_2025_03_26,
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ];
    if !known
        .iter()
        .any(|version| version.to_string() == protocol_version)
    {
        let _ = client.cancel().await;
        return Err(Failure::Version(format!(
            "the server chose `{protocol_version}`, mcpenv speaks {}",
            versions(&known)
        )));
    }
    let tools = if capabilities.tools.is_some() {
        client
            .list_all_tools()
            .await
            .map_err(|error| Failure::Request("tools/list", error))?
    } else {
        Vec::new()
    };
    let prompts = if capabilities.prompts.is_some() {
        client
            .list_all_prompts()
            .await
            .map_err(|error| Failure::Request("prompts/list", error))?
            .len()
    } else {
        0
    };
    let resources = if capabilities.resources.is_some() {
        client
            .list_all_resources()
            .await
            .map_err(|error| Failure::Request("resources/list", error))?
            .len()
    } else {
        0
    };
    let tools: Vec<ToolFacts> = tools.iter().map(ToolFacts::from_tool).collect();
    let facts = ServerFacts {
        name,
        version,
        protocol_version,
        tools,
        prompts,
        resources,
        ready,
    };
    let checks = match audit {
        Some(calls) => audit::run(&client, &facts, calls).await,
        None => Vec::new(),
    };
    let _ = client.cancel().await;
    Ok((facts, checks))
}

/// The error-handling rules of tool calls, as of 2025-11-25 (SEP-1303).
const TOOLS_ERRORS_2025_11_25: &str =
    "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling";
/// The same section before SEP-1303 (identical in 2024-11-05 and 2025-03-26).
const TOOLS_ERRORS_2025_06_18: &str =
    "https://modelcontextprotocol.io/specification/2025-06-18/server/tools#error-handling";

/// A tool result in words, with the start of its first text.
fn describe_result(result: &rmcp::model::CallToolResult) -> String {
    const SHOWN: usize = 80;
    let mut text = format!("a result (isError: {})", result.is_error.unwrap_or(false));
    if let Some(first) = result.content.iter().find_map(|block| block.as_text()) {
        let first = first.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut shown: String = first.chars().take(SHOWN).collect();
        if first.chars().count() > SHOWN {
            shown.push('…');
        }
        text.push_str(&format!(": \"{shown}\""));
    }
    text
}

fn describe_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(error) => {
            format!("JSON-RPC error {}: {}", error.code.0, error.message)
        }
        other => other.to_string(),
    }
}

/// The audit checks that need only the tool list.
pub fn static_checks(facts: &ServerFacts) -> Vec<AuditCheck> {
    const LIST_SPEC: &str =
        "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool";
    let undescribed: Vec<&str> = facts
        .tools
        .iter()
        .filter(|tool| !tool.described)
        .map(|tool| tool.name.as_str())
        .collect();
    let not_objects: Vec<&str> = facts
        .tools
        .iter()
        .filter(|tool| !tool.object_schema)
        .map(|tool| tool.name.as_str())
        .collect();
    vec![
        AuditCheck {
            check: "tool_descriptions",
            ok: undescribed.is_empty(),
            status: CheckStatus::from_ok(undescribed.is_empty()),
            expected: "every tool has a description".to_string(),
            got: if undescribed.is_empty() {
                "all described".to_string()
            } else {
                format!("no description: {}", some_names(&undescribed))
            },
            spec: LIST_SPEC,
            rule: "a model picks tools by their descriptions; a tool without one is guessed at or never used",
            called: None,
        },
        AuditCheck {
            check: "input_schemas",
            ok: not_objects.is_empty(),
            status: CheckStatus::from_ok(not_objects.is_empty()),
            expected: "every inputSchema has \"type\": \"object\"".to_string(),
            got: if not_objects.is_empty() {
                "all objects".to_string()
            } else {
                format!("other schemas: {}", some_names(&not_objects))
            },
            spec: LIST_SPEC,
            rule: "a tool's inputSchema must be a JSON Schema object (\"type\": \"object\"); clients reject or mangle anything else",
            called: None,
        },
        AuditCheck {
            check: "tool_count",
            ok: facts.tools.len() <= MANY_TOOLS,
            // Many tools crowd the context; that is advice, not a failure.
            status: if facts.tools.len() <= MANY_TOOLS {
                CheckStatus::Ok
            } else {
                CheckStatus::Warning
            },
            expected: format!("at most {MANY_TOOLS} tools (a warning)"),
            got: format!("{} tools", facts.tools.len()),
            spec: LIST_SPEC,
            rule: "every tool's name, description and schema take room in the model's context; many thin tools crowd it and blur the choice",
            called: None,
        },
    ]
}

/// Up to five names, quoted, then how many more.
fn some_names<S: AsRef<str>>(names: &[S]) -> String {
    crate::mechanics::display::quoted_names_up_to(names, 5)
}

/// The `name_collisions` check for one server, given every server's tools.
pub fn collision_check(name: &str, all: &[(String, Vec<String>)]) -> AuditCheck {
    let own: Vec<&String> = all
        .iter()
        .filter(|(server, _)| server == name)
        .flat_map(|(_, tools)| tools)
        .collect();
    let mut clashes: Vec<String> = Vec::new();
    for (other, tools) in all.iter().filter(|(server, _)| server != name) {
        let shared: Vec<&String> = tools.iter().filter(|tool| own.contains(tool)).collect();
        if !shared.is_empty() {
            clashes.push(format!("{} also in `{other}`", some_names(&shared)));
        }
    }
    AuditCheck {
        check: "name_collisions",
        ok: clashes.is_empty(),
        status: CheckStatus::from_ok(clashes.is_empty()),
        expected: "tool names unique across servers".to_string(),
        got: if clashes.is_empty() {
            "none shared".to_string()
        } else {
            clashes.join("; ")
        },
        spec: "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names",
        rule: "a client sees every server's tools at once; two tools of one name are renamed, hidden or confused by the model",
        called: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(tools: Vec<ToolFacts>) -> ServerFacts {
        ServerFacts {
            name: "s".to_string(),
            version: "1".to_string(),
            protocol_version: "2025-11-25".to_string(),
            tools,
            prompts: 0,
            resources: 0,
            ready: Duration::ZERO,
        }
    }

    fn tool(name: &str, described: bool, object_schema: bool) -> ToolFacts {
        ToolFacts {
            name: name.to_string(),
            described,
            object_schema,
            read_only: false,
            destructive: false,
            input_schema: JsonObject::new(),
        }
    }

    #[test]
    fn static_checks_flag_missing_descriptions_and_schemas() {
        let checks = static_checks(&facts(vec![tool("a", true, true), tool("b", false, false)]));
        let by_name = |name: &str| checks.iter().find(|check| check.check == name).unwrap();
        assert!(!by_name("tool_descriptions").ok);
        assert_eq!(by_name("tool_descriptions").got, "no description: `b`");
        assert!(!by_name("input_schemas").ok);
        assert!(by_name("tool_count").ok);
    }

    #[test]
    fn long_lists_and_html_pages_stay_short() {
        let names: Vec<String> = (1..=8).map(|n| format!("t{n}")).collect();
        assert_eq!(
            some_names(&names),
            "`t1`, `t2`, `t3`, `t4`, `t5` and 3 more"
        );
        assert_eq!(
            one_line(
                "unexpected server response: HTTP 404 Not Found: <!DOCTYPE html>\n<html>\n</html>"
            ),
            "unexpected server response: HTTP 404 Not Found"
        );
        assert_eq!(one_line("a\n  b\tc"), "a b c");
    }

    #[test]
    fn urls_are_checked_without_showing_them() {
        assert!(check_url("https://mcp.example.com/mcp").is_ok());
        assert!(check_url("http://127.0.0.1:8080/sse").is_ok());
        let error = check_url("not a url sk_live_abcdef")
            .unwrap_err()
            .to_string();
        assert_eq!(error, "the URL is not valid: relative URL without a base");
        assert_eq!(
            check_url("  ").unwrap_err().to_string(),
            "the entry has no `url`"
        );
    }

    #[test]
    fn collisions_name_the_other_server() {
        let all = vec![
            ("one".to_string(), vec!["echo".to_string(), "a".to_string()]),
            ("two".to_string(), vec!["echo".to_string()]),
        ];
        let check = collision_check("one", &all);
        assert!(!check.ok);
        assert_eq!(check.got, "`echo` also in `two`");
        assert!(collision_check("three", &all).ok);
    }

    #[test]
    fn errors_read_as_one_line() {
        let error = ProbeError::Exited {
            status: "3".to_string(),
            stderr: vec!["a".to_string(), "b".to_string()],
        };
        assert_eq!(error.to_string(), "exited with status 3; stderr: a | b");
    }
}
