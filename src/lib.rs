//! `mcpenv`: manage the MCP servers of Claude Code's three scopes, and share
//! them with a team without sharing their secrets.
//!
//! The library is the core: it reads and edits configuration files and
//! returns typed values and errors. The [`cli`] module is the only place that
//! knows about arguments, terminals, the process environment and exit codes.

pub mod check;
pub mod cli;
pub mod clients;
pub mod config;
pub mod envfiles;
pub mod mechanics;
pub mod ops;
pub mod probe;
pub mod secrets;
pub mod serve;
pub mod stores;
pub mod templates;
