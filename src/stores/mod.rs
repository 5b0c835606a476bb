//! Where secrets are kept outside dotenv files: references to secret
//! managers and the OS keychain.

pub mod keychain;
pub mod references;
