//! Use cases apart from their front-ends: each module computes one job of
//! mcpenv and returns a typed, serialisable report. No printing, no clap, no
//! terminal, no MCP types: `cli` renders the reports as text or JSON, `serve`
//! hands them to an agent as tool results.

pub mod check_environment;
pub mod hints;
pub mod list_servers;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::check::EnvSources;
use crate::layered::Inventory;
use crate::locate::Locations;
use crate::redact::Redactor;
use crate::templates::TemplateDirs;

/// Everything a use case reads the world through, resolved by a front-end.
#[derive(Debug, Clone)]
pub struct Context {
    /// Every file location for the working directory.
    pub locations: Locations,
    /// The process environment (values of `${VAR}` placeholders).
    pub process_env: BTreeMap<String, String>,
    /// Where templates are looked for.
    pub template_dirs: TemplateDirs,
    /// The user's own dotenv store (`~/.config/mcpenv/.env`).
    pub user_env_file: PathBuf,
    /// How to spell mcpenv for this working directory in a suggested
    /// command (`mcpenv`, or `mcpenv -C DIR`).
    pub mcpenv: Vec<String>,
}

impl Context {
    /// The mcpenv command line that runs `rest` here, quoted for a shell.
    pub fn command(&self, rest: &[&str]) -> String {
        let mut words = self.mcpenv.clone();
        words.extend(rest.iter().map(|word| (*word).to_string()));
        crate::display::shell_words(&words)
    }
}

/// What a use case read. Its reports hold no value of `env` or `headers`,
/// but commands, arguments and URLs are shown as configured: a front-end
/// teaches a [`Redactor`] what was read and masks with it before showing
/// anything.
#[derive(Debug)]
pub struct Read {
    /// Every scope's servers.
    pub inventory: Inventory,
    /// The `.env` files, settings `env` and the environment, when read.
    pub sources: Option<EnvSources>,
}

impl Read {
    /// Teaches `redactor` every secret in what was read.
    pub fn teach(&self, redactor: &mut Redactor) {
        redactor.learn_inventory(&self.inventory);
        if let Some(sources) = &self.sources {
            redactor.learn_sources(sources);
        }
    }
}
