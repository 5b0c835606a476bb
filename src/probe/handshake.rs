//! Opening a session: `initialize` at the newest revision that has it, and
//! the 2026-07-28 discovery flow for servers that only speak that one.

use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, ErrorCode, Implementation, ProtocolVersion};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};

use super::Failure;

/// A server that rejected `initialize` but ignores `server/discover` gets
/// this long, not the whole deadline.
const DISCOVER_WAIT: Duration = Duration::from_secs(3);

/// A probe's session with a server.
pub type Session = RunningService<RoleClient, ClientConfig>;

/// What mcpenv says about itself: the newest revision with an `initialize`
/// handshake (rmcp's default, 2026-07-28, has none, so a 2025 server would
/// reject it) and mcpenv's own name rather than the SDK's.
fn client_config(version: ProtocolVersion) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcpenv", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(version)
}

/// Opens a session over `first`: `initialize` offering 2025-11-25 (a server
/// may pick any older revision). When the server refuses that revision
/// (-32022) or has no `initialize` (-32601), asks `again` for a transport to
/// the same server and retries at a revision it named, or with
/// `server/discover` at 2026-07-28.
pub async fn connect<T, E, A>(
    first: T,
    again: impl FnOnce() -> Option<T>,
) -> Result<Session, Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let refused = match client_config(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .serve(first)
        .await
    {
        Ok(session) => return Ok(session),
        Err(ClientInitializeError::JsonRpcError(error))
            if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                || error.code == ErrorCode::METHOD_NOT_FOUND =>
        {
            error
        }
        Err(error) => return Err(Failure::Initialize(Box::new(error))),
    };
    let initialize_error = || {
        Failure::Initialize(Box::new(ClientInitializeError::JsonRpcError(
            refused.clone(),
        )))
    };
    let Some(transport) = again() else {
        return Err(initialize_error());
    };
    let supported: Vec<ProtocolVersion> = refused
        .data
        .as_ref()
        .and_then(|data| data.get("supported"))
        .and_then(|list| serde_json::from_value(list.clone()).ok())
        .unwrap_or_default();
    if let Some(older) = newest_with_initialize(&supported) {
        return client_config(older)
            .serve(transport)
            .await
            .map_err(|error| Failure::Initialize(Box::new(error)));
    }
    let discover = client_config(ProtocolVersion::V_2026_07_28).serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    );
    match tokio::time::timeout(DISCOVER_WAIT, discover).await {
        Ok(result) => result.map_err(|error| Failure::Initialize(Box::new(error))),
        Err(_elapsed) => Err(Failure::NoDiscovery {
            code: refused.code.0,
            wait: DISCOVER_WAIT,
        }),
    }
}

/// The newest revision in `supported` that mcpenv knows and that has an
/// `initialize` handshake, other than the one already refused.
fn newest_with_initialize(supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .rev()
        .filter(|version| version.has_initialize())
        .filter(|version| **version != ProtocolVersion::LATEST_WITH_INITIALIZE)
        .find(|version| supported.contains(version))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_named_revision_is_retried_and_2026_goes_to_discovery() {
        let named = [ProtocolVersion::V_2024_11_05, ProtocolVersion::V_2025_06_18];
        assert_eq!(
            newest_with_initialize(&named),
            Some(ProtocolVersion::V_2025_06_18)
        );
        assert_eq!(
            newest_with_initialize(&[ProtocolVersion::V_2026_07_28]),
            None
        );
        assert_eq!(
            newest_with_initialize(&[ProtocolVersion::V_2025_11_25]),
            None
        );
    }

    #[test]
    fn mcpenv_names_itself_and_offers_2025_11_25() {
        let config = client_config(ProtocolVersion::LATEST_WITH_INITIALIZE);
        assert_eq!(config.client_info.name, "mcpenv");
        assert_eq!(config.client_info.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(config.protocol_version.as_str(), "2025-11-25");
    }
}
