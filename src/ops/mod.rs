//! Use cases apart from their front-ends: each module computes one job of
//! mcpenv and returns a typed, serialisable report. No printing, no clap, no
//! terminal, no MCP types: `cli` renders the reports as text or JSON, `serve`
//! hands them to an agent as tool results.

pub mod add;
pub mod check_environment;
pub mod confirm;
pub mod doctor;
pub mod error;
pub mod explain;
pub mod export_manifest;
pub mod export_servers;
pub mod extract_secrets;
pub mod extraction_inputs;
pub mod get_server;
pub mod handed;
pub mod hints;
pub mod import_servers;
pub mod list_servers;
pub mod list_templates;
pub mod names;
pub mod onboard;
pub mod policy_check;
pub mod probe;
pub mod project_choices;
pub mod remove_server;
pub mod run_environment;
pub mod scan_secrets;
pub mod secret_stores;
pub mod secret_variables;
pub mod server_env;
pub mod share;
pub mod show_template;
pub mod shown_changes;
pub mod shown_paths;
pub mod undo;
pub mod write_steps;

pub use error::{Error, Kind};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::check::EnvSources;
use crate::config::error::ConfigError;
use crate::config::inventory::Inventory;
use crate::config::locate::Locations;
use crate::config::scope::Scope;
use crate::envfiles::dotenv::DotEnvError;
use crate::mechanics::diff::FileChange;
use crate::mechanics::edits::Edit;
use crate::secrets::redact::{Redactor, Shield};
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
    /// `$XDG_CONFIG_HOME`, or `~/.config` (other clients' files live there).
    pub config_home: PathBuf,
    /// How to spell mcpenv for this working directory in a suggested
    /// command (`mcpenv`, or `mcpenv -C DIR`).
    pub mcpenv: Vec<String>,
    /// Every secret read so far: whatever a front-end shows of a report is
    /// masked with it. Loading through [`Context::inventory`] and
    /// [`Context::env_sources`] teaches it.
    pub shield: Arc<Shield>,
    /// mcpenv's own executable, which probes start as their reaper
    /// (`mcpenv __reap`, [`crate::probe::reaper`]); none: probes still stop
    /// their servers on every path but SIGKILL.
    pub mcpenv_program: Option<PathBuf>,
    /// The edit session every write goes through: a preview (a dry run,
    /// `serve`'s gate) writes nothing, a recording keeps what `mcpenv undo`
    /// needs.
    pub edit: Edit,
}

impl Context {
    /// This context with its writes going through `edit` instead.
    #[must_use]
    pub fn with_edit(&self, edit: Edit) -> Self {
        Self {
            edit,
            ..self.clone()
        }
    }

    /// The mcpenv command line that runs `rest` here, quoted for a shell.
    pub fn command(&self, rest: &[&str]) -> String {
        let mut words = self.mcpenv.clone();
        words.extend(rest.iter().map(|word| (*word).to_string()));
        crate::mechanics::display::shell_words(&words)
    }

    /// The mcpenv command line that runs `words` with `names` (servers,
    /// variables) as its operands, quoted for a shell. A name may come from
    /// a repository (`.mcp.json` may call a server `--trust`): when any
    /// starts with `-`, a `--` comes first, so no name is ever read as an
    /// option.
    pub fn command_with_names<S: AsRef<str>>(&self, words: &[&str], names: &[S]) -> String {
        let mut rest: Vec<&str> = words.to_vec();
        if names.iter().any(|name| name.as_ref().starts_with('-')) {
            rest.push("--");
        }
        rest.extend(names.iter().map(AsRef::as_ref));
        self.command(&rest)
    }

    /// The command that gets project servers `names` started by Claude
    /// Code: `approve NAMES`, or `approve --trust NAMES` while this folder
    /// is not trusted, since Claude Code 2.1.332 ignores approvals until
    /// it is and a plain `approve` would change nothing the person sees.
    pub fn approve_command<S: AsRef<str>>(&self, names: &[S]) -> String {
        self.approve_command_in(self.folder_trusted(), names)
    }

    /// [`Context::approve_command`] for a folder known to be `trusted` or not.
    pub fn approve_command_in<S: AsRef<str>>(&self, trusted: bool, names: &[S]) -> String {
        if trusted {
            self.command_with_names(&["approve"], names)
        } else {
            self.command_with_names(&["approve", "--trust"], names)
        }
    }

    /// Why an approve hint carries `--trust`: said next to it in an
    /// untrusted folder, so no one trusts a folder without knowing.
    pub const TRUST_NOTE: &'static str = "`--trust` also records that you trust this folder, as Claude Code's trust dialog does, which lets Claude Code apply the project's settings and hooks too; until then it ignores approvals";

    /// Whether Claude Code trusts this project's folder (its trust dialog
    /// was accepted), without which it ignores the folder's approvals.
    pub fn folder_trusted(&self) -> bool {
        crate::config::approval::project_trusted(&self.locations)
    }

    /// Every scope's servers; the shield learns their secrets.
    pub fn inventory(&self) -> Result<Inventory, ConfigError> {
        let inventory = Inventory::load_from(&self.locations, &self.edit)?;
        self.shield.learn_inventory(&inventory);
        Ok(inventory)
    }

    /// The project's `.env` files, settings `env` and the environment; the
    /// shield learns their secrets.
    pub fn env_sources(&self) -> Result<EnvSources, Error> {
        let sources = self.env_sources_unlearned()?;
        self.shield.learn_sources(&sources);
        Ok(sources)
    }

    /// [`Context::env_sources`] for a use case that teaches the shield
    /// what it shows of them itself (`env`: the values it exports), so
    /// that a 100,000-line `.env` is not noted value by value. The shield
    /// does not count them as learned: an error still learns them all.
    pub fn env_sources_unlearned(&self) -> Result<EnvSources, Error> {
        EnvSources::load(
            &self.locations,
            &self.user_env_file(),
            self.process_env.clone(),
        )
        .map_err(dotenv_error)
    }

    /// The user's own dotenv store, `$XDG_CONFIG_HOME/mcpenv/.env`: the
    /// secrets of user-scope servers, used in every project and so kept in
    /// no repository.
    pub fn user_env_file(&self) -> PathBuf {
        self.config_home.join("mcpenv").join(".env")
    }

    /// The dotenv file the secrets of a `scope` server go to: the user's
    /// store for user scope, else the project's `.env`.
    pub fn env_file_for(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.user_env_file(),
            Scope::Project | Scope::Local => {
                crate::envfiles::EnvFiles::at(&self.locations.project_root()).env
            }
        }
    }

    /// Learns whatever the use case did not load itself, before a
    /// front-end shows anything. Files that cannot be read teach nothing
    /// (the use case has reported them, or did not need them).
    pub fn learn_world(&self) {
        let (inventory, sources) = self.shield.knows_world();
        if !inventory && !self.learn_from_writes() {
            let _ = self.inventory();
        }
        if !sources {
            let _ = self.env_sources();
        }
    }

    /// Learns every scope's secrets from the `~/.claude.json` a writer of
    /// this run read already (before its change) and the values it wrote
    /// there, instead of reading and parsing the file again after the
    /// write; the other files are read as usual. Whether a writer had.
    fn learn_from_writes(&self) -> bool {
        let Ok(resolved) = crate::mechanics::fsx::resolve_symlinks(&self.locations.claude_json)
        else {
            return false;
        };
        let Some(read) = self.edit.take_read(&resolved) else {
            return false;
        };
        let inventory = Inventory::load_all_with(&self.locations, &self.edit, Some(&read.document));
        drop(read.document);
        self.shield.learn_inventory(&inventory);
        self.shield.learn(|redactor| {
            for value in read.written {
                redactor.learn_entry(&crate::config::model::ServerEntry::from_value(value));
            }
        });
        true
    }

    /// This context with a shield of its own, for one request of a
    /// long-running front-end (`serve`), so one call's reads do not pile
    /// up for the next.
    #[must_use]
    pub fn with_fresh_shield(&self) -> Self {
        Self {
            shield: Arc::new(Shield::default()),
            ..self.clone()
        }
    }
}

/// Each file `apply` would change, as it is and as it would be (files it
/// leaves alone left out): `apply` run against a preview session, so the
/// preview is the write itself, made nowhere.
pub fn previewed<T>(
    ctx: &Context,
    apply: impl FnOnce(&Context) -> Result<T, Error>,
) -> Result<Vec<FileChange>, Error> {
    let preview = ctx.with_edit(Edit::preview());
    apply(&preview)?;
    Ok(preview
        .edit
        .finish_preview()
        .map(|(changes, _)| changes)
        .unwrap_or_default())
}

/// The error for `.env` files that cannot be read.
pub fn dotenv_error(error: DotEnvError) -> Error {
    let hint = hints::dotenv_hint(&error);
    Error::failure_from("cannot read the `.env` files", error).with_hint(hint)
}

/// What a use case read. Its reports hold no value of `env` or `headers`,
/// but commands, arguments and URLs are shown as configured: a front-end
/// teaches a [`Redactor`] what was read and masks with it before showing
/// anything.
#[derive(Debug)]
pub struct Loaded {
    /// Every scope's servers.
    pub inventory: Inventory,
    /// The `.env` files, settings `env` and the environment, when read.
    pub sources: Option<EnvSources>,
}

impl Loaded {
    /// Teaches `shield` every secret in what was read.
    pub fn teach_shield(&self, shield: &Shield) {
        shield.learn_inventory(&self.inventory);
        if let Some(sources) = &self.sources {
            shield.learn_sources(sources);
        }
    }

    /// Teaches `redactor` every secret in what was read.
    pub fn teach(&self, redactor: &mut Redactor) {
        redactor.learn_inventory(&self.inventory);
        if let Some(sources) = &self.sources {
            redactor.learn_sources(sources);
        }
    }
}

/// What the use cases' unit tests share: a context over a temporary
/// world, and the tree that tells "nothing was written".
#[cfg(test)]
pub(crate) mod testing {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::Context;
    use crate::config::locate::{Environment, Locations};
    use crate::mechanics::edits::Edit;
    use crate::secrets::redact::Shield;
    use crate::templates::TemplateDirs;

    /// A context for `root/project` (a repository) with HOME at
    /// `root/home`, its writes going through `edit`.
    pub fn context(root: &Path, edit: Edit) -> Context {
        for dir in ["home", "project/.git", "state"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let locations = Locations::discover(&Environment {
            home: root.join("home"),
            claude_config_dir: None,
            working_dir: root.join("project"),
            managed_dir: root.join("managed"),
            state_dir: root.join("state"),
            layout_cache: None,
        })
        .unwrap();
        Context {
            template_dirs: TemplateDirs {
                project: locations.project_root().join(".mcpenv/templates"),
                user: None,
            },
            config_home: root.join("home/.config"),
            locations,
            process_env: BTreeMap::new(),
            mcpenv: vec!["mcpenv".to_string()],
            shield: Arc::new(Shield::default()),
            mcpenv_program: None,
            edit,
        }
    }

    /// Every folder and file under `root`, each file with its bytes.
    pub fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut found = BTreeMap::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    found.insert(path.clone(), None);
                    pending.push(path);
                } else {
                    found.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
                }
            }
        }
        found
    }

    /// Runs `apply` against a preview session of `ctx` (whose world is
    /// under `root`), checks it wrote nothing, then runs it for real and
    /// checks every file holds what the preview said. Returns the changes,
    /// each path relative to `root`.
    pub fn previewed_then_written(
        root: &Path,
        ctx: &Context,
        apply: impl Fn(&Context),
    ) -> Vec<(String, crate::mechanics::diff::FileChange)> {
        let before = tree(root);
        let preview = ctx.with_edit(Edit::preview());
        apply(&preview);
        let (changes, _) = preview.edit.finish_preview().unwrap();
        assert_eq!(tree(root), before, "a preview writes nothing");
        apply(&ctx.with_edit(Edit::plain()));
        let changes: Vec<_> = changed(root, &changes).into_iter().zip(changes).collect();
        for ((path, after), _) in &changes {
            let written = std::fs::read_to_string(root.join(path)).ok();
            assert_eq!(&written, after, "{path}: not as previewed");
        }
        changes
            .into_iter()
            .map(|((path, _), change)| (path, change))
            .collect()
    }

    /// The path of each change, relative to `root`, with its new text.
    fn changed(
        root: &Path,
        changes: &[crate::mechanics::diff::FileChange],
    ) -> Vec<(String, Option<String>)> {
        let root = dunce::canonicalize(root).unwrap();
        changes
            .iter()
            .map(|change| {
                let path = dunce::canonicalize(change.path.parent().unwrap())
                    .unwrap()
                    .join(change.path.file_name().unwrap());
                let shown = path.strip_prefix(&root).unwrap().display().to_string();
                (shown, change.after.clone())
            })
            .collect()
    }
}
