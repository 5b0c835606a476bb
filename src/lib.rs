//! `mcpenv`: manage the MCP servers of Claude Code's three scopes, and share
//! them with a team without sharing their secrets.
//!
//! The library is the core: it reads and edits configuration files and
//! returns typed values and errors. The [`cli`] module is the only place that
//! knows about arguments, terminals, the process environment and exit codes.

pub mod approval;
pub mod check;
pub mod claude_code;
pub mod claude_settings;
pub mod cli;
pub mod clients;
pub mod diff;
pub mod display;
pub mod document;
pub mod dotenv;
pub mod edits;
pub mod envfiles;
pub mod error;
pub mod extract;
pub mod fsx;
pub mod git;
pub mod git_files;
pub mod gitignore;
pub mod journal;
pub mod keychain;
pub mod layered;
pub mod locate;
pub mod model;
pub mod ops;
pub mod placeholder;
pub mod probe;
pub mod project_links;
pub mod redact;
pub mod references;
pub mod sarif;
pub mod scope;
pub mod secrets;
pub mod serve;
pub mod store;
pub mod templates;
pub mod value_fit;
pub mod value_position;
