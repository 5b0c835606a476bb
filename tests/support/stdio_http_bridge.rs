//! Test-only: serves MCP's streamable HTTP on 127.0.0.1 and forwards each
//! session to a stdio server of its own, so tools that test servers only
//! over HTTP (the conformance suite) can test `mcpenv serve`.
//!
//! `stdio-http-bridge COMMAND [ARGS...]` prints `http://127.0.0.1:PORT/mcp`
//! on stdout, then serves until killed. An `initialize` POST without a
//! session starts `COMMAND` (with the bridge's environment and directory)
//! and opens a session; DELETE ends it. The bridge is a pipe, never a
//! server: each message goes to the child as it came (only the line breaks
//! JSON allows between tokens become blanks, since stdio frames by line),
//! and each line the child writes comes back as it is, on the SSE stream of
//! the POST whose request it answers; the child's own requests and
//! notifications go on an open POST stream, else the GET stream, else wait
//! for the next. It answers nothing itself.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

type Body = BoxBody<Bytes, Infallible>;

/// One client's session: its child and where the child's lines go.
struct Session {
    stdin: tokio::sync::Mutex<ChildStdin>,
    child: Mutex<Child>,
    routes: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    /// The POST stream waiting for the response to each request id (the
    /// id as JSON text).
    pending: HashMap<String, UnboundedSender<String>>,
    /// The GET stream, when one is open.
    standalone: Option<UnboundedSender<String>>,
    /// The child's requests and notifications no stream could take yet.
    queued: Vec<String>,
}

impl Routes {
    /// Delivers a request or notification from the child.
    fn unprompted(&mut self, line: String) {
        let line = match self.pending.values().next() {
            Some(stream) => match stream.send(line) {
                Ok(()) => return,
                Err(error) => error.0,
            },
            None => line,
        };
        let line = match &self.standalone {
            Some(stream) => match stream.send(line) {
                Ok(()) => return,
                Err(error) => error.0,
            },
            None => line,
        };
        self.queued.push(line);
    }
}

type Sessions = Arc<Mutex<HashMap<String, Arc<Session>>>>;

#[tokio::main]
async fn main() {
    let command: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        !command.is_empty(),
        "usage: stdio-http-bridge COMMAND [ARGS...]"
    );
    let command = Arc::new(command);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("http://{}/mcp", listener.local_addr().unwrap());
    let sessions: Sessions = Arc::default();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (command, sessions) = (command.clone(), sessions.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let (command, sessions) = (command.clone(), sessions.clone());
                async move { Ok::<_, Infallible>(handle(request, &command, &sessions).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *response.status_mut() = status;
    response
}

/// An SSE response carrying each line `lines` yields as one `message` event.
fn sse(lines: impl futures_util::Stream<Item = String> + Send + Sync + 'static) -> Response<Body> {
    use futures_util::StreamExt;
    let frames = lines.map(|line| {
        Ok::<_, Infallible>(Frame::data(Bytes::from(format!(
            "event: message\ndata: {line}\n\n"
        ))))
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(BodyExt::boxed(StreamBody::new(frames)))
        .unwrap()
}

async fn handle(
    request: Request<Incoming>,
    command: &[String],
    sessions: &Sessions,
) -> Response<Body> {
    let id = request
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let session = id
        .as_ref()
        .and_then(|id| sessions.lock().unwrap().get(id).cloned());
    if id.is_some() && session.is_none() {
        return plain(StatusCode::NOT_FOUND, "no such session");
    }
    match *request.method() {
        Method::POST => {
            let Ok(body) = request.into_body().collect().await else {
                return plain(StatusCode::BAD_REQUEST, "unreadable body");
            };
            post(body.to_bytes(), session, command, sessions).await
        }
        Method::GET => {
            let Some(session) = session else {
                return plain(StatusCode::BAD_REQUEST, "no session");
            };
            let (sender, receiver) = unbounded_channel();
            let mut routes = session.routes.lock().unwrap();
            for line in routes.queued.drain(..) {
                let _ = sender.send(line);
            }
            routes.standalone = Some(sender);
            sse(tokio_stream_from(receiver))
        }
        Method::DELETE => {
            let Some(session) = session else {
                return plain(StatusCode::BAD_REQUEST, "no session");
            };
            sessions.lock().unwrap().remove(id.as_deref().unwrap());
            let _ = session.child.lock().unwrap().start_kill();
            plain(StatusCode::OK, "")
        }
        _ => plain(StatusCode::METHOD_NOT_ALLOWED, ""),
    }
}

/// The receiver as a stream that ends when every sender is gone.
fn tokio_stream_from(
    receiver: UnboundedReceiver<String>,
) -> impl futures_util::Stream<Item = String> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|line| (line, receiver))
    })
}

async fn post(
    body: Bytes,
    session: Option<Arc<Session>>,
    command: &[String],
    sessions: &Sessions,
) -> Response<Body> {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return plain(StatusCode::BAD_REQUEST, "not JSON");
    };
    let messages = match &message {
        Value::Array(items) => items.iter().collect(),
        _ => vec![&message],
    };
    // The ids of the requests in the body: its stream ends once each is answered.
    let requests: Vec<String> = messages
        .iter()
        .filter(|message| message.get("method").is_some())
        .filter_map(|message| message.get("id"))
        .map(Value::to_string)
        .collect();
    let initialize = messages
        .iter()
        .any(|message| message.get("method").and_then(Value::as_str) == Some("initialize"));
    let (session, new_id) = match session {
        Some(session) => (session, None),
        None if initialize => {
            let (id, session) = start(command);
            sessions.lock().unwrap().insert(id.clone(), session.clone());
            (session, Some(id))
        }
        None => return plain(StatusCode::BAD_REQUEST, "no session"),
    };
    let (sender, receiver) = unbounded_channel();
    {
        let mut routes = session.routes.lock().unwrap();
        for id in &requests {
            routes.pending.insert(id.clone(), sender.clone());
        }
        if !requests.is_empty() {
            for line in routes.queued.drain(..) {
                let _ = sender.send(line);
            }
        }
    }
    drop(sender);
    // JSON allows raw line breaks only between tokens, where a blank means the same.
    let mut line: Vec<u8> = body
        .iter()
        .map(|&byte| {
            if byte == b'\n' || byte == b'\r' {
                b' '
            } else {
                byte
            }
        })
        .collect();
    line.push(b'\n');
    {
        let mut stdin = session.stdin.lock().await;
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return plain(StatusCode::BAD_GATEWAY, "the server's stdin is closed");
        }
    }
    let mut response = if requests.is_empty() {
        plain(StatusCode::ACCEPTED, "")
    } else {
        // The status waits for the child's first line, so a child that dies
        // without a word is a 502 the client sees, not a stream left empty.
        let mut receiver = receiver;
        match receiver.recv().await {
            Some(first) => {
                use futures_util::StreamExt;
                sse(futures_util::stream::iter([first]).chain(tokio_stream_from(receiver)))
            }
            None => plain(
                StatusCode::BAD_GATEWAY,
                "the server exited without answering",
            ),
        }
    };
    if let Some(id) = new_id {
        response
            .headers_mut()
            .insert("mcp-session-id", id.parse().unwrap());
    }
    response
}

/// Starts the child for a new session, and the task that routes its lines.
fn start(command: &[String]) -> (String, Arc<Session>) {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", command[0]));
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let session = Arc::new(Session {
        stdin: tokio::sync::Mutex::new(stdin),
        child: Mutex::new(child),
        routes: Mutex::default(),
    });
    let routed = session.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let mut routes = routed.routes.lock().unwrap();
            let answer = message.get("method").is_none();
            let stream = message
                .get("id")
                .filter(|_| answer)
                .and_then(|id| routes.pending.remove(&id.to_string()));
            match stream {
                Some(stream) => {
                    let _ = stream.send(line);
                }
                None => routes.unprompted(line),
            }
        }
        // The child is gone: every stream it left open ends.
        let mut routes = routed.routes.lock().unwrap();
        routes.pending.clear();
        routes.standalone = None;
    });
    (session_id(), session)
}

/// A fresh session id: unguessable enough for a test on loopback.
fn session_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    let state = RandomState::new();
    format!(
        "{:016x}{:016x}",
        state.hash_one(std::process::id()),
        state.hash_one(std::time::SystemTime::now())
    )
}
