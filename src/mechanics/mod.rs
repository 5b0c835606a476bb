//! Mechanics with no knowledge of MCP: files, JSON edits, the edit
//! session and its journal, diffs, display escaping and git.

pub mod diff;
pub mod display;
pub mod document;
pub mod edits;
pub mod fsx;
pub mod git;
pub mod git_files;
pub mod gitignore;
pub mod journal;
pub mod layout_cache;
