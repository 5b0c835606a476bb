//! The HTTP+SSE client transport of protocol 2024-11-05, for `"type": "sse"`
//! servers. rmcp dropped its own SSE client (rust-sdk#562) when the spec
//! deprecated the transport, but many deployed servers speak nothing else,
//! and Claude Code still connects to them. rmcp still runs the MCP session
//! over it: this module only moves JSON-RPC messages.
//!
//! The transport: a GET on the URL opens an event stream whose first
//! `endpoint` event names the URL to POST messages to (relative to the
//! stream's URL); the server's messages arrive as `message` events.

use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Sse, SseStream};

/// Why the SSE transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The request did not get an answer (refused, DNS, TLS, ...).
    #[error("{}", describe_request_error(.0))]
    Request(#[source] reqwest::Error),
    /// The server answered with an error status.
    #[error("{method} answered HTTP {status}")]
    Status {
        /// `GET` or `POST`.
        method: &'static str,
        /// The status.
        status: StatusCode,
        /// The `WWW-Authenticate` challenge of a 401 or 403, if any.
        challenge: Option<String>,
    },
    /// The GET answer is not an event stream.
    #[error("the URL answered `{content_type}`, not an event stream (`text/event-stream`)")]
    NotEventStream {
        /// The Content-Type it answered with.
        content_type: String,
    },
    /// The configured URL does not parse (not shown: it may hold a key).
    #[error("the URL is not valid: {0}")]
    BadUrl(#[source] url::ParseError),
    /// The stream ended or broke before naming where to POST.
    #[error("the event stream ended before its `endpoint` event")]
    NoEndpoint,
    /// The `endpoint` event does not hold a usable URL.
    #[error("the `endpoint` event holds an invalid URL `{0}`")]
    BadEndpoint(String),
}

impl SseError {
    /// The challenge of a 401/403 answer, `Some("")` when it had none.
    pub fn auth_challenge(&self) -> Option<&str> {
        match self {
            Self::Status {
                status: StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN,
                challenge,
                ..
            } => Some(challenge.as_deref().unwrap_or_default()),
            _ => None,
        }
    }
}

/// reqwest's own message is only the outermost layer ("error sending
/// request for url ..."); the cause that helps (connection refused, a
/// certificate problem) is further down the chain.
pub fn describe_request_error(error: &reqwest::Error) -> String {
    let mut text = if error.is_connect() {
        "cannot connect".to_string()
    } else if error.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(error);
    let mut last = String::new();
    while let Some(cause) = source {
        let line = cause.to_string();
        // hyper's "client error (Connect)" layer only repeats the kind.
        if !line.is_empty() && !line.starts_with("client error (") && !last.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
            last = line;
        }
        source = cause.source();
    }
    text
}

type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// A connected SSE session: the open event stream and where to POST.
pub struct SseTransport {
    http: reqwest::Client,
    headers: HeaderMap,
    stream_url: Url,
    post_url: Url,
    events: Events,
}

impl SseTransport {
    /// Opens the event stream at `url` and waits for its `endpoint` event.
    pub async fn connect(url: &str, headers: HeaderMap) -> Result<Self, SseError> {
        let base = Url::parse(url).map_err(SseError::BadUrl)?;
        super::tls::install_provider();
        // `Client::new` would panic where the TLS set-up fails.
        let http = reqwest::Client::builder()
            .build()
            .map_err(SseError::Request)?;
        let response = http
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .send()
            .await
            .map_err(SseError::Request)?;
        let status = response.status();
        if !status.is_success() {
            return Err(SseError::Status {
                method: "GET",
                status,
                challenge: challenge(response.headers()),
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        if !content_type.starts_with("text/event-stream") {
            return Err(SseError::NotEventStream { content_type });
        }
        let mut events: Events = SseStream::from_bytes_stream(response.bytes_stream()).boxed();
        let post_url = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    break endpoint(&base, &event)?;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Err(SseError::NoEndpoint),
            }
        };
        Ok(Self {
            http,
            headers,
            stream_url: base,
            post_url,
            events,
        })
    }
}

/// The URL an `endpoint` event names, resolved as a browser would.
fn endpoint(base: &Url, event: &Sse) -> Result<Url, SseError> {
    let data = event.data.as_deref().unwrap_or_default().trim();
    base.join(data)
        .map_err(|_| SseError::BadEndpoint(data.to_string()))
}

fn challenge(headers: &HeaderMap) -> Option<String> {
    headers
        .get(WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        // Serialising a message rmcp built cannot fail; an empty body would
        // be answered with a 400 that says so.
        let body = serde_json::to_vec(&message).unwrap_or_default();
        let request = self
            .http
            .post(self.post_url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body);
        async move {
            let response = request.send().await.map_err(SseError::Request)?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseError::Status {
                    method: "POST",
                    status,
                    challenge: challenge(response.headers()),
                })
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let event = self.events.next().await?.ok()?;
            match event.event.as_deref() {
                None | Some("message") => {
                    let data = event.data.as_deref().unwrap_or_default();
                    // Not a message rmcp knows: skip it, as the SDKs do.
                    if let Ok(message) = serde_json::from_str(data) {
                        return Some(message);
                    }
                }
                // A server may move its endpoint mid-session.
                Some("endpoint") => {
                    if let Ok(url) = endpoint(&self.stream_url, &event) {
                        self.post_url = url;
                    }
                }
                Some(_) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), SseError> {
        // Dropping the transport closes the event stream.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: &str) -> Sse {
        Sse::default().event("endpoint").data(data)
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url() {
        let base = Url::parse("https://mcp.example.com/v1/sse?key=1").unwrap();
        assert_eq!(
            endpoint(&base, &event("/messages?session=abc"))
                .unwrap()
                .as_str(),
            "https://mcp.example.com/messages?session=abc"
        );
        assert_eq!(
            endpoint(&base, &event("messages?s=1")).unwrap().as_str(),
            "https://mcp.example.com/v1/messages?s=1"
        );
        assert_eq!(
            endpoint(&base, &event("http://other:8080/m"))
                .unwrap()
                .as_str(),
            "http://other:8080/m"
        );
    }

    #[test]
    fn only_401_and_403_carry_a_challenge() {
        let status = |status, challenge: Option<&str>| SseError::Status {
            method: "GET",
            status,
            challenge: challenge.map(str::to_string),
        };
        assert_eq!(
            status(StatusCode::UNAUTHORIZED, Some("Bearer")).auth_challenge(),
            Some("Bearer")
        );
        assert_eq!(
            status(StatusCode::FORBIDDEN, None).auth_challenge(),
            Some("")
        );
        assert_eq!(status(StatusCode::NOT_FOUND, None).auth_challenge(), None);
    }
}
