//! A fake stdio MCP server for mcpenv's probe tests and benchmark. Test-only:
//! an `[[example]]`, so `cargo install` leaves it out; the tests build it
//! with escargot.
//!
//! It speaks raw JSON-RPC lines rather than using an SDK, because its point
//! is to misbehave in precise ways an SDK would not let it.
//!
//! Usage: `mcpenv-fake-server MODE`, MODE one of `ok`, `slow:MS`, `hang`,
//! `crash`, `garbage`, `needs-env:VAR`, `spawn-child:PIDFILE`,
//! `mixed-result`, `mixed-error`, `version=V` (answers `initialize` with
//! protocol version V), `http:PORTFILE[:TOKEN]` (streamable HTTP on loopback),
//! `sse:PORTFILE[:TOKEN]` (the 2024-11-05 HTTP+SSE transport on loopback),
//! `sse-post-auth:PORTFILE[:TOKEN]` (the same, but the stream opens for anyone),
//! `echo-crash` (prints its arguments and environment on stderr, then exits 3),
//! `http-echo:PORTFILE` (answers every request 400 with its headers and path
//! as the body): the last two play a careless server that echoes what it got;
//! `non-validating:LOGFILE` (tools that never check their arguments and append
//! each call to LOGFILE: `lookup_record` read-only, `add_numbers` without
//! annotations, `delete_all_records` destructive; an unknown tool is -32603).
//!
//! Modes that record what the client did: `record:FILE` (as `ok`, appending
//! every line it reads to FILE), `modern:FILE` (speaks only 2026-07-28:
//! refuses `initialize` with -32022, answers `server/discover`; records like
//! `record`), `http-modern:PORTFILE:FILE` (the same over streamable HTTP,
//! recording each request's headers and body as a JSON line),
//! `lifecycle:FILE` (as `ok`, but stays up after stdin closes; writes
//! `stdin closed` and `SIGTERM` to FILE as they happen, and exits on SIGTERM),
//! `stubborn:PIDFILE` (ignores both the end of stdin and SIGTERM, as does the
//! `sleep` it starts; writes both pids to PIDFILE).

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ok".to_string());
    let (kind, argument) = mode.split_once(':').unwrap_or((mode.as_str(), ""));
    match kind {
        "echo-crash" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            let env: serde_json::Map<String, Value> = std::env::vars()
                .map(|(key, value)| (key, Value::String(value)))
                .collect();
            eprintln!("fake: bad option: {}", args.join(" "));
            eprintln!("fake: environment {}", Value::Object(env));
            return ExitCode::from(3);
        }
        "http-echo" => return serve_http_echo(argument),
        "crash" => {
            eprintln!("fake: starting");
            eprintln!("fake: cannot open the database");
            return ExitCode::from(3);
        }
        // An empty value is as good as none to a server that needs a token.
        "needs-env" if std::env::var_os(argument).is_none_or(|value| value.is_empty()) => {
            eprintln!("fake: {argument} is not set");
            return ExitCode::from(1);
        }
        "spawn-child" => {
            // Never waited for on purpose: the grandchild must outlive this
            // server unless the prober kills the whole process group.
            #[allow(clippy::zombie_processes)]
            let child = std::process::Command::new("sleep")
                .arg("600")
                .spawn()
                .expect("sleep is on PATH in tests");
            if !argument.is_empty() {
                std::fs::write(argument, child.id().to_string()).expect("pid file is writable");
            }
        }
        "http" => return serve_http(argument),
        "http-modern" => return serve_http_modern(argument),
        "record" | "modern" => return serve(kind, Some(argument), ""),
        "lifecycle" => {
            exit_on_sigterm(argument);
            serve("ok", None, "");
            note(argument, "stdin closed");
            // Up until SIGTERM, so the prober has to send it.
            loop {
                std::thread::park();
            }
        }
        "stubborn" => {
            // A blocked SIGTERM stays pending. std resets the signal mask of
            // children, so the `sleep` ignores it instead (kept across exec):
            // only SIGKILL ends this group.
            let mut term = nix::sys::signal::SigSet::empty();
            term.add(nix::sys::signal::Signal::SIGTERM);
            nix::sys::signal::sigprocmask(
                nix::sys::signal::SigmaskHow::SIG_BLOCK,
                Some(&term),
                None,
            )
            .expect("blocking a signal works");
            #[allow(clippy::zombie_processes)]
            let child = std::process::Command::new("sh")
                .args(["-c", "trap '' TERM; exec sleep 600"])
                .spawn()
                .expect("sh is on PATH in tests");
            let pids = format!("{} {}", std::process::id(), child.id());
            std::fs::write(argument, pids).expect("pid file is writable");
            serve("ok", None, "");
            loop {
                std::thread::park();
            }
        }
        "sse" => return serve_sse(argument, true),
        "sse-post-auth" => return serve_sse(argument, false),
        "slow" => {
            let ms = argument.parse().unwrap_or(1000);
            std::thread::sleep(Duration::from_millis(ms));
        }
        _ => {}
    }
    serve(kind, None, argument)
}

/// Appends `line` to `path`.
fn note(path: &str, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("record file is writable");
    writeln!(file, "{line}").expect("record file is writable");
}

/// Writes `SIGTERM` to `path` and exits when that signal arrives.
fn exit_on_sigterm(path: &str) {
    let path = path.to_string();
    let (ready, registered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime starts");
        runtime.block_on(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM can be caught");
            let _ = ready.send(());
            term.recv().await;
            note(&path, "SIGTERM");
            std::process::exit(0);
        });
    });
    // Serve only once SIGTERM is caught, so the test cannot race it.
    let _ = registered.recv();
}

/// Serves JSON-RPC lines on stdio; with `record`, appends each line read;
/// `argument` is the mode's own (the call log of `non-validating`).
fn serve(kind: &str, record: Option<&str>, argument: &str) -> ExitCode {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            break;
        };
        if let Some(path) = record {
            note(path, &line);
        }
        if kind == "hang" {
            continue;
        }
        if kind == "garbage" {
            let _ = writeln!(stdout, "Server listening on stdio, hello!");
            let _ = stdout.flush();
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let response = if kind == "non-validating" {
            respond_non_validating(argument, &message)
        } else {
            respond(kind, &message)
        };
        let Some(response) = response else {
            continue; // A notification.
        };
        let _ = writeln!(stdout, "{response}");
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// The JSON-RPC response to `message`, `None` for a notification.
fn respond(kind: &str, message: &Value) -> Option<Value> {
    let id = message.get("id").cloned()?;
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let reply = match message["method"].as_str().unwrap_or("") {
        "initialize" if kind == "modern" => Err(json!({
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"requested": params["protocolVersion"], "supported": ["2026-07-28"]},
        })),
        "server/discover" if kind == "modern" => Ok(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-modern", "version": "2.0.0"}},
        })),
        "initialize" => Ok(json!({
            "protocolVersion": kind.strip_prefix("version=").unwrap_or_else(|| params["protocolVersion"].as_str().unwrap_or("2025-06-18")),
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "fake-server", "version": "1.2.3"},
        })),
        "tools/list" => Ok(json!({"tools": [
            {"name": "echo", "description": "Echo the text back",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
            {"name": "now", "description": "The time",
             "inputSchema": {"type": "object", "properties": {}}},
        ]})),
        "prompts/list" => Ok(json!({"prompts": [{"name": "greet"}]})),
        "resources/list" => Ok(json!({"resources": [{"uri": "file:///readme", "name": "readme"}]})),
        "tools/call" => call_tool(kind, &params),
        "ping" => Ok(json!({})),
        _ => Err(json!({"code": -32601, "message": "method not found"})),
    };
    Some(match reply {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    })
}

/// One HTTP request, read as far as the fake needs.
struct Request {
    line: String,
    authorized: bool,
    headers: Vec<String>,
    body: Vec<u8>,
}

/// Reads one request; `token` empty means any request is authorized.
fn read_request(stream: &std::net::TcpStream, token: &str) -> Option<Request> {
    use std::io::Read;
    let mut reader = std::io::BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let expected = format!("bearer {token}");
    let mut length = 0;
    let mut authorized = token.is_empty();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        headers.push(header.trim().to_string());
        let lower = header.trim().to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if let Some(value) = lower.strip_prefix("authorization:") {
            authorized |= value.trim() == expected;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        line,
        authorized,
        headers,
        body,
    })
}

/// A whole HTTP/1.1 response that closes the connection.
fn answer(status: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Listens on a loopback port and writes the port to `portfile`.
fn listen(portfile: &str) -> std::net::TcpListener {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("loopback is available");
    let port = listener.local_addr().expect("bound").port();
    std::fs::write(portfile, port.to_string()).expect("port file is writable");
    listener
}

/// `http:PORTFILE[:TOKEN]`: a streamable HTTP server at `/mcp` on a loopback
/// port (written to PORTFILE), answering 401 unless `Authorization: Bearer
/// TOKEN`, and 404 with the path echoed elsewhere.
fn serve_http(argument: &str) -> ExitCode {
    let (portfile, token) = argument.split_once(':').unwrap_or((argument, ""));
    let listener = listen(portfile);
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            continue;
        };
        let token = token.to_string();
        std::thread::spawn(move || {
            let Some(request) = read_request(&stream, &token) else {
                return;
            };
            let response = if !request.authorized {
                answer("401 Unauthorized", "WWW-Authenticate: Bearer\r\n", "")
            } else if !request.line.starts_with("POST") {
                answer("405 Method Not Allowed", "", "")
            } else if !request.line.starts_with("POST /mcp ") {
                // As express does: the path, query and all, echoed back.
                let path = request.line.split(' ').nth(1).unwrap_or_default();
                answer("404 Not Found", "", &format!("Cannot POST {path}"))
            } else {
                let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                match respond("ok", &message) {
                    Some(reply) => answer(
                        "200 OK",
                        "Content-Type: application/json\r\nMcp-Session-Id: fake\r\n",
                        &reply.to_string(),
                    ),
                    None => answer("202 Accepted", "", ""),
                }
            };
            let _ = stream.write_all(response.as_bytes());
        });
    }
    ExitCode::SUCCESS
}

/// `http-modern:PORTFILE:FILE`: `modern` over streamable HTTP at `/mcp`,
/// without sessions (2026-07-28 has none); each request's headers and body
/// are appended to FILE as one JSON line.
fn serve_http_modern(argument: &str) -> ExitCode {
    let (portfile, record) = argument.split_once(':').unwrap_or((argument, ""));
    let listener = listen(portfile);
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            continue;
        };
        let record = record.to_string();
        std::thread::spawn(move || {
            let Some(request) = read_request(&stream, "") else {
                return;
            };
            let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let seen =
                json!({"line": request.line.trim(), "headers": request.headers, "body": message});
            note(&record, &seen.to_string());
            let response = match respond("modern", &message) {
                Some(reply) => answer(
                    "200 OK",
                    "Content-Type: application/json\r\n",
                    &reply.to_string(),
                ),
                None => answer("202 Accepted", "", ""),
            };
            let _ = stream.write_all(response.as_bytes());
        });
    }
    ExitCode::SUCCESS
}

/// `http-echo:PORTFILE`: every request gets a 400 whose body repeats the
/// request line and headers, as a careless server's error page might.
fn serve_http_echo(argument: &str) -> ExitCode {
    let portfile = argument
        .split_once(':')
        .map_or(argument, |(portfile, _)| portfile);
    let listener = listen(portfile);
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            continue;
        };
        std::thread::spawn(move || {
            let Some(request) = read_request(&stream, "") else {
                return;
            };
            let body = format!(
                "bad request {} {}",
                request.line.trim(),
                request.headers.join("; ")
            );
            let _ = stream.write_all(answer("400 Bad Request", "", &body).as_bytes());
        });
    }
    ExitCode::SUCCESS
}

/// `sse:PORTFILE[:TOKEN]`: the HTTP+SSE transport of 2024-11-05. A GET opens
/// the event stream and names `/messages` (relative) as the POST endpoint;
/// answers to POSTed requests arrive on the stream. 401 unless
/// `Authorization: Bearer TOKEN`; with `guard_get` false, the stream opens
/// for anyone and only the POSTs are refused.
fn serve_sse(argument: &str, guard_get: bool) -> ExitCode {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    let (portfile, token) = argument.split_once(':').unwrap_or((argument, ""));
    let listener = listen(portfile);
    // Each open event stream, by the session number its endpoint names.
    let sessions: Arc<Mutex<HashMap<String, std::net::TcpStream>>> = Arc::default();
    for (number, stream) in listener.incoming().enumerate() {
        let Ok(mut stream) = stream else {
            continue;
        };
        let token = token.to_string();
        let sessions = Arc::clone(&sessions);
        std::thread::spawn(move || {
            let Some(request) = read_request(&stream, &token) else {
                return;
            };
            let open_stream = request.line.starts_with("GET /sse ");
            let session = request
                .line
                .strip_prefix("POST /messages?session=")
                .and_then(|rest| rest.split_once(' '))
                .map(|(session, _)| session.to_string());
            if !request.authorized && (guard_get || !open_stream) {
                let _ = stream.write_all(
                    answer("401 Unauthorized", "WWW-Authenticate: Bearer\r\n", "").as_bytes(),
                );
            } else if open_stream {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";
                let _ = stream.write_all(head.as_bytes());
                let _ = write!(
                    stream,
                    ": a comment the client must skip\n\nevent: endpoint\ndata: messages?session={number}\n\n"
                );
                let _ = stream.flush();
                sessions
                    .lock()
                    .expect("not poisoned")
                    .insert(number.to_string(), stream);
            } else if let Some(session) = session {
                let _ = stream.write_all(answer("202 Accepted", "", "Accepted").as_bytes());
                let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                if let Some(reply) = respond("ok", &message)
                    && let Some(events) = sessions.lock().expect("not poisoned").get_mut(&session)
                {
                    let _ = write!(events, "event: message\ndata: {reply}\n\n");
                    let _ = events.flush();
                }
            } else {
                let _ = stream.write_all(answer("404 Not Found", "", "").as_bytes());
            }
        });
    }
    ExitCode::SUCCESS
}

fn call_tool(kind: &str, params: &Value) -> Result<Value, Value> {
    let text = |text: String, is_error: bool| json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    match params["name"].as_str().unwrap_or("") {
        "echo" => match params["arguments"]["text"].as_str() {
            Some(value) => Ok(text(value.to_string(), false)),
            None if kind == "mixed-error" => {
                Err(json!({"code": -32602, "message": "missing argument `text`"}))
            }
            None => Ok(text("missing argument `text`".to_string(), true)),
        },
        "now" => Ok(text("noon".to_string(), false)),
        other if kind == "mixed-result" => Ok(text(format!("no tool {other}"), false)),
        other => Err(json!({"code": -32602, "message": format!("Unknown tool: {other}")})),
    }
}

/// `non-validating:LOGFILE`: a server whose tools run on whatever they get,
/// as a careless `add_numbers` does ("The sum of undefined and undefined is
/// NaN"). Every call is appended to LOGFILE as a JSON line, so tests see
/// exactly which tools ran.
fn respond_non_validating(logfile: &str, message: &Value) -> Option<Value> {
    if message["method"] != "tools/list" && message["method"] != "tools/call" {
        return respond("ok", message);
    }
    let id = message.get("id").cloned()?;
    let params = &message["params"];
    let schema = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    let reply = if message["method"] == "tools/list" {
        Ok(json!({"tools": [
            {"name": "lookup_record", "description": "Look a record up by id",
             "annotations": {"readOnlyHint": true},
             "inputSchema": schema(json!({"id": {"type": "string"}}), json!(["id"]))},
            {"name": "add_numbers", "description": "Add two numbers",
             "inputSchema": schema(json!({"a": {"type": "number"}, "b": {"type": "number"}}), json!(["a", "b"]))},
            {"name": "delete_all_records", "description": "Delete every record",
             "annotations": {"readOnlyHint": true, "destructiveHint": true},
             "inputSchema": schema(json!({"confirm": {"type": "boolean"}}), json!(["confirm"]))},
        ]}))
    } else {
        let name = params["name"].as_str().unwrap_or_default();
        let arguments = &params["arguments"];
        // JavaScript's way of showing a missing value.
        let shown = |key: &str| match &arguments[key] {
            Value::Null => "undefined".to_string(),
            other => other.to_string(),
        };
        let text = match name {
            "lookup_record" => Some(format!("Record {} has no fields", shown("id"))),
            "add_numbers" => Some(format!(
                "The sum of {} and {} is NaN",
                shown("a"),
                shown("b")
            )),
            "delete_all_records" => Some("Deleted 1042 records".to_string()),
            _ => None,
        };
        match text {
            Some(text) => {
                let mut log = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(logfile)
                    .expect("the log file is writable");
                let _ = writeln!(log, "{}", json!({"tool": name, "arguments": arguments}));
                Ok(json!({"content": [{"type": "text", "text": text}]}))
            }
            None => Err(json!({"code": -32603, "message": "Internal error"})),
        }
    };
    Some(match reply {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    })
}
