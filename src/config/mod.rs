//! Claude Code's configuration: scopes and where they live, server
//! entries and their expansion, the loader's merged view, the store's
//! edits, project-server approval and Claude Code's own files.

pub mod approval;
pub mod claude_code;
pub mod claude_settings;
pub mod error;
pub mod expansion;
pub mod inventory;
pub mod json_files;
pub mod locate;
pub mod managed_policy;
pub mod model;
pub mod scope;
pub mod store;
