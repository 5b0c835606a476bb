//! The TLS crypto provider of `probe`'s HTTP clients.
//!
//! reqwest is built without a provider of its own (see Cargo.toml), so one
//! must be installed for the process before the first client is made, or
//! reqwest panics. Installing it there rather than at start-up keeps every
//! command that never speaks HTTP from paying for it.

use std::sync::Once;

/// Installs ring as the process's rustls provider, once.
pub fn install_provider() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // An error means a provider is installed already: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_once_the_provider_is_installed() {
        super::install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        reqwest::Client::builder()
            .build()
            .expect("a client builds with the installed provider");
    }
}
