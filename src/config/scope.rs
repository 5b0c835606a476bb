//! Claude Code's three configuration scopes.

use std::fmt;

use serde::Serialize;

/// Where a server is configured. Declaration order is precedence: when one
/// name is defined in several scopes, the smallest scope wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Private to you in one project: `~/.claude.json` → `projects[<key>]`.
    Local,
    /// Shared with the team: `.mcp.json` in the repository.
    Project,
    /// All your projects: `~/.claude.json` → top-level `mcpServers`.
    User,
}

impl Scope {
    /// Every scope, highest precedence first.
    pub const ALL: [Self; 3] = [Self::Local, Self::Project, Self::User];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Project => "project",
            Self::User => "user",
        }
    }

    /// What the scope means, in Claude Code's words.
    pub fn description(self) -> &'static str {
        match self {
            Self::Local => "private to you in this project",
            Self::Project => "shared via .mcp.json",
            Self::User => "available in all your projects",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_declaration_order() {
        let mut scopes = vec![Scope::User, Scope::Local, Scope::Project];
        scopes.sort();
        assert_eq!(scopes, Scope::ALL);
    }
}
