//! The stdio side of a probe: a JSON-RPC line transport that outlives one
//! handshake attempt, and the spec's shutdown sequence for the child.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::group::Group;

/// How long a server may take to exit once its stdin is closed, and again
/// after SIGTERM, before the next step of the shutdown.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// JSON-RPC lines to and from a child. Clones share the child's streams, so
/// a failed `initialize` can be followed by `server/discover` on the same
/// process; the child's stdin closes once every clone is dropped.
#[derive(Clone)]
pub struct Lines {
    outgoing: mpsc::UnboundedSender<String>,
    incoming: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
}

impl Lines {
    /// Writes what the clones send to `stdin`, and reads the lines that
    /// `incoming` delivers (already checked to be JSON).
    pub fn new(stdin: ChildStdin, incoming: mpsc::UnboundedReceiver<String>) -> Self {
        let (outgoing, mut queued) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(line) = queued.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err()
                    || stdin.write_all(b"\n").await.is_err()
                    || stdin.flush().await.is_err()
                {
                    return;
                }
            }
            // Every sender is gone: dropping `stdin` here is the end of
            // input the spec's shutdown starts with.
        });
        Self {
            outgoing,
            incoming: Arc::new(tokio::sync::Mutex::new(incoming)),
        }
    }
}

impl Transport<RoleClient> for Lines {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_string(&item)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                self.outgoing
                    .send(line)
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            });
        std::future::ready(sent)
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        let incoming = Arc::clone(&self.incoming);
        async move {
            let mut incoming = incoming.lock().await;
            loop {
                let line = incoming.recv().await?;
                // JSON that is no JSON-RPC message is skipped, as rmcp's own
                // stdio transport does.
                if let Ok(message) = serde_json::from_str(&line) {
                    return Some(message);
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        // Closing is dropping: stdin closes with the last clone.
        std::future::ready(Ok(()))
    }
}

/// Shuts a stdio server down as the spec's lifecycle describes: its stdin
/// is already closed (every [`Lines`] dropped), so wait for it to exit, then
/// SIGTERM its process group, wait again, then SIGKILL the group. Windows
/// has no SIGTERM for a console program: there the kill follows the first
/// wait. The caller's group guard still kills what is left of the group
/// afterwards (children that outlived the server).
pub async fn shut_down(child: &mut Child, mut group: Option<&mut Group>) {
    if exits_within(child, SHUTDOWN_GRACE).await {
        return;
    }
    let asked = group.as_ref().is_some_and(|group| group.terminate());
    if asked && exits_within(child, SHUTDOWN_GRACE).await {
        return;
    }
    if let Some(group) = group.as_mut() {
        group.kill();
    }
    let _ = child.wait().await;
}

async fn exits_within(child: &mut Child, grace: Duration) -> bool {
    matches!(tokio::time::timeout(grace, child.wait()).await, Ok(Ok(_)))
}
