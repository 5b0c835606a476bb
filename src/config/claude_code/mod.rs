//! What Claude Code does that mcpenv has to model, read from a pinned
//! release (see each module for which one and how).

pub mod blanked;
pub mod credentials;
