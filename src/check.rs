//! What a teammate needs before Claude Code starts the project's servers:
//! every variable the servers in effect reference, where (and whether) it
//! is set, and the problems Claude Code would hit. Checks return data.

pub mod platforms;
pub mod project_links;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::claude_code::blanked::{self, Reason, Sink};
use crate::config::expansion;
use crate::config::inventory::Inventory;
use crate::config::locate::Locations;
use crate::config::scope::Scope;
use crate::envfiles::dotenv::DotEnv;
use crate::secrets::value_fit;
use crate::templates::{self, Template, TemplateVariable};

pub use crate::envfiles::sources::{EnvSources, ProjectEnv};

/// A variable's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Set to a non-empty value.
    Set,
    /// Set, but to the empty string (which beats a `:-` default).
    Empty,
    /// Not set, and every reference has a default.
    Defaulted,
    /// Not set, and some reference has no default.
    Missing,
}

/// One referenced variable.
#[derive(Debug, Clone, Serialize)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: State,
    /// Where its value comes from: `environment`, or a file.
    pub source: Option<String>,
    /// Whether Claude Code started now (without `mcpenv run`) sees it.
    pub seen_by_claude: bool,
    /// Whether only interactive sessions see it: its value comes from the
    /// project's Claude Code settings, which `claude -p` and `claude mcp
    /// list` do not expand.
    pub interactive_only: bool,
    /// For a variable only interactive sessions see: the dotenv file that
    /// holds it too, which `mcpenv run` hands on to every launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_in_dotenv: Option<String>,
    /// The servers that reference it.
    pub servers: Vec<String>,
    /// What it is for, from the comment above it in `.env.example`.
    pub description: Option<String>,
    /// Whether its name looks like a secret's (hidden input when asked).
    pub secret: bool,
    /// Whether some reference has no `:-` default: empty or unset, the
    /// server gets nothing it can use.
    pub required: bool,
    /// Whether its value is dotenvx ciphertext (`encrypted:…`), which only
    /// `dotenvx run` turns into the value.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ciphertext: bool,
    /// Where its value is kept when a dotenv file holds a reference
    /// (`op://…`, `keychain:…`) rather than the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<StoredReference>,
    /// A reference in the environment or Claude Code's settings, which
    /// reach the server as written (only dotenv files' are resolved).
    #[serde(skip)]
    pub passed_as_written: Option<crate::stores::references::Manager>,
    /// The default of its references, when they have one.
    #[serde(skip)]
    pub default: Option<String>,
    /// Where its references sit (after `Bearer `, in a URL's password), so
    /// a typed value can be checked against them.
    #[serde(skip)]
    pub placements: Vec<value_fit::Placement>,
    /// The format its template expects (a regular expression), and what
    /// the template is called.
    #[serde(skip)]
    pub expected: Option<ExpectedFormat>,
    /// Whether Claude Code passes it empty to every server that uses it
    /// (their findings say so): no value of it would reach them, so none
    /// is asked for.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub blanked: bool,
}

/// A variable whose dotenv file names where its value is kept.
#[derive(Debug, Clone, Serialize)]
pub struct StoredReference {
    /// The password manager or keychain.
    pub manager: crate::stores::references::Manager,
    /// Whether it gave a value when asked; `None` until it is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolves: Option<bool>,
    /// The reference itself (never secret), for messages.
    #[serde(skip)]
    pub text: String,
}

/// The format a template expects of a variable.
#[derive(Debug, Clone)]
pub struct ExpectedFormat {
    /// A regular expression a value must match.
    pub pattern: String,
    /// The template's title (`GitHub`).
    pub what: String,
    /// Where to get a value, when the template says.
    pub how_to_get: Option<String>,
}

impl ExpectedFormat {
    /// Whether `value` has the format (an invalid pattern accepts all).
    pub fn accepts(&self, value: &str) -> bool {
        regex::Regex::new(&self.pattern).map_or(true, |regex| regex.is_match(value))
    }
}

impl Variable {
    /// Whether it still needs a value: unset without a default, or set to
    /// the empty string where a reference has no default (the habit `cp
    /// .env.example .env` leaves every token so).
    pub fn needs_value(&self) -> bool {
        if self.blanked {
            return false;
        }
        match self.state {
            State::Missing => true,
            State::Empty => self.required,
            State::Set | State::Defaulted => false,
        }
    }
}

/// How Claude Code treats a server in effect: the loader's status of the
/// definition that wins its name (never `shadowed`).
pub use crate::config::inventory::Status;

/// One server in effect.
#[derive(Debug, Clone, Serialize)]
pub struct ServerCheck {
    /// Its name.
    pub name: String,
    /// Its scope.
    pub scope: Scope,
    /// The file that defines it.
    pub file: PathBuf,
    /// How Claude Code treats it.
    pub status: Status,
    /// For `skipped`, `reserved` and `blocked`: Claude Code's reason.
    pub reason: Option<String>,
    /// For `blocked`: the managed policy's rule and the file it is in.
    pub blocked: Option<crate::config::managed_policy::Block>,
    /// The variables it references, in order.
    pub variables: Vec<String>,
    /// Those it references only with a `:-` default (unset, the default
    /// applies, whatever other servers need).
    #[serde(skip)]
    pub defaulted: Vec<String>,
    /// For stdio servers: the command and whether it was found.
    pub command: Option<CommandCheck>,
    /// The variables Claude Code hands this server as `""` instead of
    /// their value.
    pub blanked: Vec<Blanked>,
    /// Whether it has everything it needs.
    pub ok: bool,
}

/// A variable Claude Code expands to `""` for one server.
#[derive(Debug, Clone, Serialize)]
pub struct Blanked {
    /// The variable.
    pub variable: String,
    /// Where the server's entry references it (`headers.Authorization`).
    pub fields: Vec<String>,
    /// Why Claude Code blanks it.
    pub reason: Reason,
}

impl Blanked {
    /// Whether the server cannot work this way anywhere (scrub mode is a
    /// choice of the environment: a warning).
    pub fn is_error(&self) -> bool {
        self.reason != Reason::Scrub
    }
}

/// Whether a stdio server's command can be found.
#[derive(Debug, Clone, Serialize)]
pub struct CommandCheck {
    /// The command as configured.
    pub command: String,
    /// The command with its placeholders expanded as Claude Code would
    /// (when it has any and each is set or has a default), every value
    /// substituted from the environment or a file masked (`/opt/****/bin`):
    /// a repository's command may name any variable (`${PGPASSWORD}`), and
    /// what `check` prints can end up in a CI log. A default written in the
    /// entry itself is shown as written.
    pub resolved: Option<String>,
    /// Whether it is on PATH (or exists, for a path); `None` when it was not
    /// checked because it depends on variables that are not set.
    pub found: Option<bool>,
    /// The unset variables (without default) the command depends on.
    pub depends_on: Vec<String>,
    /// Whether the command, expanded, is an absolute path.
    #[serde(skip)]
    pub absolute: bool,
}

impl CommandCheck {
    /// Whether the command is known to be missing.
    pub fn missing(&self) -> bool {
        self.found == Some(false)
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something will fail.
    Error,
    /// Something is risky or surprising.
    Warning,
}

/// One problem, with the next step.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// A stable identifier (`missing-variable`, `command-not-found`, …).
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// The server concerned, if one.
    pub server: Option<String>,
    /// The variable concerned, if one (a missing or empty value): which
    /// servers it matters to is in [`CheckReport::variables`].
    #[serde(skip)]
    pub variable: Option<String>,
    /// The file concerned, if one.
    pub file: Option<PathBuf>,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub hint: Option<String>,
}

/// Everything `check` found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The servers in effect (and the skipped ones).
    pub servers: Vec<ServerCheck>,
    /// Every referenced variable, in order of first reference.
    pub variables: Vec<Variable>,
    /// Every problem, errors and warnings (`warnings` in JSON, each with
    /// its severity).
    #[serde(rename = "warnings")]
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Whether nothing is in error (or, with `strict`, nothing at all).
    pub fn ok(&self, strict: bool) -> bool {
        !self
            .findings
            .iter()
            .any(|finding| finding.severity == Severity::Error || strict)
    }

    /// The variables that still need a value: no source provides them and
    /// they have no default, or they are set to the empty string.
    pub fn missing(&self) -> Vec<&Variable> {
        self.variables
            .iter()
            .filter(|variable| variable.needs_value())
            .collect()
    }
}

/// Checks the servers in effect in `inventory` against `sources`;
/// `templates` loads the templates a server may come from, only once a
/// server is there to match (parsing the embedded ones was most of what
/// `env` and `run` did in a project without servers).
pub fn check(
    locations: &Locations,
    inventory: &Inventory,
    sources: &EnvSources,
    templates: impl FnOnce() -> Vec<Template>,
) -> CheckReport {
    let templates = std::cell::LazyCell::new(templates);
    let mut findings = Vec::new();
    let mut variables: Vec<Variable> = Vec::new();
    let mut servers = Vec::new();
    // A nearer `.env.example` describes a variable first.
    let mut descriptions = BTreeMap::new();
    for project in sources.projects.iter().rev() {
        descriptions.extend(example_descriptions(&project.example));
    }
    for name in inventory.names() {
        let Some(winner) = inventory.winner(name) else {
            continue;
        };
        let status = inventory.status(winner);
        let reason = winner.reason();
        if let Some(reason) = &reason {
            let file = file_name(&winner.file);
            findings.push(Finding {
                code: match status {
                    Status::Reserved => "reserved-name",
                    Status::Blocked => "blocked-by-policy",
                    _ => "skipped-entry",
                },
                severity: Severity::Error,
                server: Some(name.to_string()),
                variable: None,
                file: Some(winner.file.clone()),
                message: format!("Claude Code does not load `{name}`: {reason}"),
                hint: Some(if status == Status::Reserved {
                    format!("rename the server in `{file}`")
                } else if status == Status::Blocked {
                    format!(
                        "Claude Code hides it from `claude mcp list` and never starts it: remove it from `{file}`, or ask your organisation's admins to allow it"
                    )
                } else {
                    format!("fix the entry in `{file}`; until then Claude Code never starts it")
                }),
            });
        }
        let mut names = Vec::new();
        let mut required: Vec<String> = Vec::new();
        // What the server's template (if it came from one) says about its variables.
        let declared = templates::matching(&templates, &winner.entry)
            .map(|template| (template, templates::declared_variables(template, name)));
        if status.checked() {
            for (field, value) in winner.entry.expandable_fields() {
                for reference in expansion::references(value) {
                    let placement =
                        value_fit::placement(&field.to_string(), value, reference.span.clone());
                    if !names.contains(&reference.name) {
                        names.push(reference.name.clone());
                    }
                    if reference.default.is_none() && !required.contains(&reference.name) {
                        required.push(reference.name.clone());
                    }
                    let from_template = declared.as_ref().and_then(|(template, variables)| {
                        variables
                            .iter()
                            .find(|variable| variable.name == reference.name)
                            .map(|variable| (*template, variable))
                    });
                    record(
                        &mut variables,
                        &reference,
                        placement,
                        name,
                        sources,
                        &descriptions,
                        from_template,
                        &mut findings,
                    );
                }
            }
        }
        let command = (status.checked() && !winner.entry.transport().is_remote())
            .then(|| winner.entry.command())
            .flatten()
            .map(|command| check_command(command, locations, sources));
        if let Some(check) = command.as_ref().filter(|check| check.missing()) {
            let shown = match &check.resolved {
                Some(resolved) => format!("`{}` (`{resolved}`)", check.command),
                None => format!("`{}`", check.command),
            };
            let target = check.resolved.as_deref().unwrap_or(&check.command);
            // The path as shown may be masked (`****/bin/x`); whether it is
            // absolute is what the real one says.
            let absolute = check.absolute;
            findings.push(Finding {
                code: "command-not-found",
                severity: Severity::Error,
                server: Some(name.to_string()),
                variable: None,
                file: Some(winner.file.clone()),
                message: if target.contains('/') {
                    format!("`{name}` runs {shown}, which does not exist or is not executable")
                } else {
                    format!("`{name}` runs {shown}, which is not on PATH")
                },
                hint: Some(install_hint(target, absolute, locations)),
            });
        }
        let blanked = if status == Status::Skipped {
            Vec::new()
        } else {
            blanked_variables(&winner.entry, sources)
        };
        blanked_findings(name, &winner.file, &winner.entry, &blanked, &mut findings);
        servers.push(ServerCheck {
            name: name.to_string(),
            scope: winner.scope,
            file: winner.file.clone(),
            status,
            reason,
            blocked: winner.blocked.clone(),
            defaulted: names
                .iter()
                .filter(|name| !required.contains(name))
                .cloned()
                .collect(),
            variables: names,
            command,
            blanked,
            ok: true,
        });
    }
    for unloaded in &inventory.unloaded {
        findings.push(Finding {
            code: "file-not-loaded",
            severity: Severity::Error,
            server: None,
            variable: None,
            file: Some(unloaded.path.clone()),
            message: error_chain(&unloaded.problem),
            hint: Some(match unloaded.problem.claude_says() {
                Some(text) => format!(
                    "Claude Code loads none of its servers (it reports \"{text}\"); fix the file by hand"
                ),
                None => "Claude Code loads none of its servers; fix the file by hand".to_string(),
            }),
        });
    }
    // Where the team keeps a value (`op://…` in `.env.example`), nearer
    // files first.
    let mut team_references = BTreeMap::new();
    for project in sources.projects.iter().rev() {
        for (name, value) in project.example.entries() {
            if crate::stores::references::manager_of(value).is_some_and(|manager| manager.shared())
            {
                team_references.insert(name.to_owned(), value.to_owned());
            }
        }
    }
    for variable in &mut variables {
        variable.blanked = variable.servers.iter().all(|name| {
            servers.iter().any(|server| {
                &server.name == name
                    && server
                        .blanked
                        .iter()
                        .any(|one| one.variable == variable.name && one.is_error())
            })
        });
    }
    variable_findings(
        &locations.project_root(),
        &variables,
        &team_references,
        &mut findings,
    );
    for note in &inventory.notes {
        // A server Claude Code does not load has its error above.
        if note.server.as_deref().is_some_and(|name| {
            servers
                .iter()
                .any(|server| server.name == name && server.reason.is_some())
        }) {
            continue;
        }
        findings.push(Finding {
            code: "config",
            severity: Severity::Warning,
            server: None,
            variable: None,
            file: Some(note.path.clone()),
            message: note.message.clone(),
            hint: None,
        });
    }
    file_findings(
        locations,
        sources,
        inventory,
        &servers,
        &variables,
        &mut findings,
    );
    for server in &mut servers {
        // Only its own references without a default can leave it short.
        let missing = server
            .variables
            .iter()
            .filter(|name| !server.defaulted.contains(name))
            .any(|name| {
                variables.iter().any(|variable| {
                    &variable.name == name
                        && matches!(variable.state, State::Missing | State::Empty)
                })
            });
        server.ok = match server.status {
            Status::Rejected | Status::Disabled => true,
            Status::Skipped | Status::Reserved | Status::Blocked => false,
            Status::Active | Status::Shadowed | Status::Pending => {
                !missing
                    && !server.command.as_ref().is_some_and(CommandCheck::missing)
                    && !server.blanked.iter().any(Blanked::is_error)
            }
        };
    }
    CheckReport {
        servers,
        variables,
        findings,
    }
}

/// A file as a hint names it: its name (`.mcp.json`), or the whole path
/// when it has none.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// An error and its causes, on one line.
/// `error` and each of its causes, joined by `: `.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    message
}

#[allow(clippy::too_many_arguments)]
fn record(
    variables: &mut Vec<Variable>,
    reference: &expansion::Reference,
    placement: value_fit::Placement,
    server: &str,
    sources: &EnvSources,
    descriptions: &BTreeMap<String, String>,
    from_template: Option<(&Template, &TemplateVariable)>,
    findings: &mut Vec<Finding>,
) {
    if let Some(existing) = variables
        .iter_mut()
        .find(|variable| variable.name == reference.name)
    {
        if !existing.servers.iter().any(|name| name == server) {
            existing.servers.push(server.to_string());
        }
        if !existing.placements.contains(&placement) {
            existing.placements.push(placement);
        }
        // One reference without a default makes an unset variable missing.
        if reference.default.is_none() {
            existing.required = true;
            if existing.state == State::Defaulted {
                existing.state = State::Missing;
            }
        }
        return;
    }
    let found = sources
        .for_claude(&reference.name)
        .map(|found| (found, true))
        .or_else(|| {
            sources
                .in_files(&reference.name)
                .map(|found| (found, false))
        });
    let interactive_only =
        matches!(&found, Some((_, true))) && !sources.every_launch_sees(&reference.name);
    let also_in_dotenv = interactive_only
        .then(|| sources.in_files(&reference.name))
        .flatten()
        .map(|(_, file)| file);
    let (state, source, seen_by_claude) = match &found {
        Some(((value, source), seen)) => (value_state(value), Some(source.clone()), *seen),
        None if reference.default.is_some() => (State::Defaulted, None, true),
        None => (State::Missing, None, false),
    };
    let expected = from_template.and_then(|(template, variable)| {
        Some(ExpectedFormat {
            pattern: variable.pattern.clone()?,
            what: template
                .server
                .title
                .clone()
                .unwrap_or_else(|| template.name.clone()),
            how_to_get: variable.how_to_get.clone(),
        })
    });
    // What the value says of itself: dotenvx ciphertext, or a reference.
    // A dotenv file's reference is resolved; in the environment or Claude
    // Code's settings it is passed on as it is written.
    let manager = found
        .as_ref()
        .and_then(|((value, _), _)| crate::stores::references::manager_of(value));
    let ciphertext = manager == Some(crate::stores::references::Manager::Dotenvx);
    let kept_elsewhere = manager.filter(|_| !ciphertext);
    let (stored_reference, passed_as_written) = match (&found, kept_elsewhere) {
        (Some(((value, _), false)), Some(manager)) => (
            Some(StoredReference {
                manager,
                resolves: None,
                text: value.clone(),
            }),
            None,
        ),
        (Some((_, true)), Some(manager)) => (None, Some(manager)),
        _ => (None, None),
    };
    if let (Some(((value, _), _)), Some(expected)) = (&found, &expected)
        && !value.is_empty()
        && !ciphertext
        && stored_reference.is_none()
        && !expected.accepts(value)
    {
        findings.push(Finding {
            code: "unexpected-format",
            severity: Severity::Warning,
            server: Some(server.to_string()),
            variable: None,
            file: None,
            message: format!(
                "`{}` is set but does not look like a {} value (expected `{}`)",
                reference.name, expected.what, expected.pattern
            ),
            hint: Some(match &expected.how_to_get {
                Some(how) => format!("check the value; get one at {how}"),
                None => "check the value".to_string(),
            }),
        });
    }
    let description = descriptions.get(&reference.name).cloned().or_else(|| {
        let (_, variable) = from_template?;
        match (&variable.description, &variable.how_to_get) {
            (Some(text), Some(how)) => Some(format!("{text} (get one: {how})")),
            (Some(text), None) => Some(text.clone()),
            (None, Some(how)) => Some(format!("Get one: {how}")),
            (None, None) => None,
        }
    });
    variables.push(Variable {
        name: reference.name.clone(),
        state,
        source,
        seen_by_claude,
        interactive_only,
        also_in_dotenv,
        servers: vec![server.to_string()],
        description,
        secret: from_template.is_some_and(|(_, variable)| variable.secret)
            || crate::secrets::is_secret_name(&reference.name),
        required: reference.default.is_none(),
        ciphertext,
        reference: stored_reference,
        passed_as_written,
        default: reference.default.clone(),
        placements: vec![placement],
        expected,
        blanked: false,
    });
}

fn value_state(value: &str) -> State {
    if value.is_empty() {
        State::Empty
    } else {
        State::Set
    }
}

/// Set by Claude Code for the servers it starts (observed with 2.1.332:
/// the project directory), never for the expansion of their configuration.
const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";

/// A dotenv file as messages name it: `.env` in the project root,
/// `../../.env` in a directory above it (a monorepo's root), the whole path
/// elsewhere (the user's store).
fn dotenv_file_name(root: &Path, source: Option<&str>) -> String {
    let Some(path) = source.map(Path::new) else {
        return ".env".to_string();
    };
    // Not from `/` itself: a file there is shown whole.
    path.parent()
        .filter(|parent| parent.parent().is_some())
        .and_then(|_| crate::config::locate::upward_name(path, root))
        .unwrap_or_else(|| path.display().to_string())
}

/// Where a value was found, as messages name it.
pub fn source_name(root: &Path, source: Option<&str>) -> String {
    match source {
        Some("environment") => "the environment".to_string(),
        other => format!("`{}`", dotenv_file_name(root, other)),
    }
}

fn variable_findings(
    root: &Path,
    variables: &[Variable],
    team_references: &BTreeMap<String, String>,
    findings: &mut Vec<Finding>,
) {
    for variable in variables {
        // Its servers' findings say Claude Code sends it empty: setting it
        // would change nothing.
        if variable.blanked {
            continue;
        }
        let servers = variable.servers.join(", ");
        if variable.ciphertext {
            findings.push(Finding {
                code: "dotenvx-ciphertext",
                severity: Severity::Warning,
                server: None,
                variable: Some(variable.name.clone()),
                file: None,
                message: format!(
                    "`{}` in {} is encrypted by dotenvx (used by {servers}): mcpenv does not decrypt it, and a server given it gets ciphertext",
                    variable.name,
                    source_name(root, variable.source.as_deref())
                ),
                hint: Some(
                    "start the client through dotenvx, which decrypts it into the environment: `dotenvx run -- mcpenv run -- claude`".to_string(),
                ),
            });
            continue;
        }
        if let Some(manager) = variable.passed_as_written {
            findings.push(Finding {
                code: "reference-as-written",
                severity: Severity::Error,
                server: None,
                variable: Some(variable.name.clone()),
                file: None,
                message: format!(
                    "`{}` in {} is a reference ({} once resolved), but Claude Code and `mcpenv run` hand it to {servers} as written",
                    variable.name,
                    source_name(root, variable.source.as_deref()),
                    manager.source()
                ),
                hint: Some(
                    "keep the reference in `.env`, where `mcpenv run -- claude` resolves it, and unset it here".to_string(),
                ),
            });
            continue;
        }
        let (code, severity, message, hint) = match (variable.state, variable.seen_by_claude) {
            (State::Missing, _) if variable.name == CLAUDE_PROJECT_DIR => (
                "missing-variable",
                Severity::Error,
                format!("`{}` is not set (needed by {servers})", variable.name),
                "Claude Code sets `CLAUDE_PROJECT_DIR` in a server's environment but does not expand `${CLAUDE_PROJECT_DIR}` in its configuration, so the server gets the text as written: use a path relative to the directory Claude Code starts in, or give it a default (`${CLAUDE_PROJECT_DIR:-.}`)".to_string(),
            ),
            (State::Missing, _) if let Some(reference) = team_references.get(&variable.name) => (
                "missing-variable",
                Severity::Error,
                format!("`{}` is not set (needed by {servers})", variable.name),
                format!("the team's `.env.example` names where it is kept (`{reference}`): `mcpenv onboard` shows it and asks before using it (without a terminal: `mcpenv onboard --accept-reference {}`)", variable.name),
            ),
            (State::Missing, _) => (
                "missing-variable",
                Severity::Error,
                format!("`{}` is not set (needed by {servers})", variable.name),
                "set it with `mcpenv onboard`, or export it in your shell".to_string(),
            ),
            (State::Empty, _) if variable.required => (
                "empty-variable",
                Severity::Error,
                format!(
                    "`{}` is set but empty in {} (needed by {servers}): the server gets an empty value",
                    variable.name,
                    source_name(root, variable.source.as_deref())
                ),
                "give it a value with `mcpenv onboard`, or edit the file".to_string(),
            ),
            (State::Empty, _) => (
                "empty-variable",
                Severity::Warning,
                format!("`{}` is set but empty (used by {servers}); an empty value beats a `:-` default", variable.name),
                "give it a value, or unset it to use the default".to_string(),
            ),
            (State::Set, false) if let Some(reference) = &variable.reference => (
                "only-in-dotenv",
                Severity::Warning,
                format!(
                    "`{}` is named only in `{}` ({}): Claude Code reads neither",
                    variable.name,
                    dotenv_file_name(root, variable.source.as_deref()),
                    reference.manager.source()
                ),
                "start Claude Code with `mcpenv run -- claude`, which gets the value and hands it on".to_string(),
            ),
            (State::Set, false) => (
                "only-in-dotenv",
                Severity::Warning,
                format!(
                    "`{}` is set only in `{}`: Claude Code does not read that file",
                    variable.name,
                    dotenv_file_name(root, variable.source.as_deref())
                ),
                "start Claude Code with `mcpenv run -- claude`, or `mcpenv onboard --to claude-settings` (interactive `claude` only)".to_string(),
            ),
            (State::Set, true) if variable.interactive_only && let Some(dotenv) = &variable.also_in_dotenv => (
                "settings-interactive-only",
                Severity::Warning,
                format!(
                    "`{}` is set in `{}`, which Claude Code 2.1.332 applies to `${{VAR}}` in interactive sessions only (`claude -p` and `claude mcp list` leave `${{{}}}` unexpanded); `{}` holds it too, which Claude Code does not read",
                    variable.name,
                    settings_file_name(variable.source.as_deref()),
                    variable.name,
                    dotenv_file_name(root, Some(dotenv)),
                ),
                "for every launch, start Claude Code with `mcpenv run -- claude`, which hands it on from that file".to_string(),
            ),
            (State::Set, true) if variable.interactive_only => (
                "settings-interactive-only",
                Severity::Warning,
                format!(
                    "`{}` is set only in `{}`, which Claude Code 2.1.332 applies to `${{VAR}}` in interactive sessions only: `claude -p` and `claude mcp list` leave `${{{}}}` unexpanded",
                    variable.name,
                    settings_file_name(variable.source.as_deref()),
                    variable.name
                ),
                "for every launch, set it in `~/.claude/settings.json` or your environment, or start Claude Code with `mcpenv run -- claude -p …` after `mcpenv onboard --to dotenv`".to_string(),
            ),
            _ => continue,
        };
        findings.push(Finding {
            code,
            severity,
            server: None,
            variable: Some(variable.name.clone()),
            file: None,
            message,
            hint: Some(hint),
        });
    }
}

/// `.claude/settings.local.json` for a settings file's path.
fn settings_file_name(source: Option<&str>) -> String {
    let Some(path) = source.map(Path::new) else {
        return "settings".to_string();
    };
    match (path.parent().and_then(Path::file_name), path.file_name()) {
        (Some(dir), Some(file)) => format!("{}/{}", dir.to_string_lossy(), file.to_string_lossy()),
        _ => path.display().to_string(),
    }
}

/// The variables Claude Code 2.1.332 expands to `""` in `entry`'s values:
/// toward a remote server by name (credential lists and families),
/// everywhere its own credentials when set, and with scrub mode on every
/// secret-looking name (in stdio values only when set).
pub fn blanked_variables(
    entry: &crate::config::model::ServerEntry,
    sources: &EnvSources,
) -> Vec<Blanked> {
    let sink = if entry.transport().is_remote() {
        Sink::Remote
    } else {
        Sink::Stdio
    };
    let scrub = sources.scrub();
    let mut found: Vec<Blanked> = Vec::new();
    for (field, value) in entry.expandable_fields() {
        for reference in expansion::references(value) {
            let Some(reason) = blanked::reason(&reference.name, sink, scrub) else {
                continue;
            };
            // In stdio values only a variable that is set is blanked.
            if sink == Sink::Stdio && sources.for_claude(&reference.name).is_none() {
                continue;
            }
            let field = field.to_string();
            match found
                .iter_mut()
                .find(|known| known.variable == reference.name)
            {
                Some(known) if !known.fields.contains(&field) => known.fields.push(field),
                Some(_) => {}
                None => found.push(Blanked {
                    variable: reference.name.clone(),
                    fields: vec![field],
                    reason,
                }),
            }
        }
    }
    found
}

fn blanked_findings(
    server: &str,
    file: &Path,
    entry: &crate::config::model::ServerEntry,
    blanked: &[Blanked],
    findings: &mut Vec<Finding>,
) {
    let remote = entry.transport().is_remote();
    for one in blanked {
        let variable = &one.variable;
        let fields = one
            .fields
            .iter()
            .map(|field| format!("`{field}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let rename = blanked::remote_safe_name(
            variable,
            &expansion::variable_name_from(server).unwrap_or_default(),
        );
        let (severity, message, hint) = match (one.reason, remote) {
            (Reason::Scrub, _) => (
                Severity::Warning,
                format!(
                    "with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, Claude Code 2.1.332 passes `${{{variable}}}` empty to `{server}` ({fields}): the name looks secret"
                ),
                format!(
                    "scrub mode keeps only {} among secret-looking names; turn it off (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=0`) where this server needs the value",
                    blanked::SCRUB_KEPT
                        .iter()
                        .map(|name| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            (reason, true) => (
                Severity::Error,
                format!(
                    "Claude Code 2.1.332 sends `${{{variable}}}` empty to remote servers (`{server}`: {fields}; the name is {}); use another variable name",
                    reason.describe()
                ),
                format!(
                    "rename it in the entry and where its value is set, e.g. to `${{{rename}}}`; `{variable}` keeps working for stdio servers"
                ),
            ),
            (reason, false) => (
                Severity::Error,
                format!(
                    "Claude Code 2.1.332 never hands `${{{variable}}}` to a server (`{server}`: {fields}; the name is {}): it passes it empty",
                    reason.describe()
                ),
                format!("give the server a variable of its own, e.g. `${{{rename}}}`"),
            ),
        };
        findings.push(Finding {
            code: if one.reason == Reason::Scrub {
                "scrub-blanked"
            } else {
                "blanked-credential"
            },
            severity,
            server: Some(server.to_string()),
            variable: None,
            file: Some(file.to_path_buf()),
            message,
            hint: Some(hint),
        });
    }
}

/// A warning when the dotenv file at `path` can be read by other users
/// (never on Windows, where its access list, not a mode, keeps it private).
fn permission_finding(path: &Path, findings: &mut Vec<Finding>) {
    let Some(mode) = std::fs::metadata(path)
        .ok()
        .and_then(|metadata| crate::mechanics::fsx::os::mode(&metadata))
        .map(|mode| mode & 0o777)
    else {
        return;
    };
    if mode & 0o077 != 0 {
        findings.push(Finding {
            code: "dotenv-permissions",
            severity: Severity::Warning,
            server: None,
            variable: None,
            file: Some(path.to_path_buf()),
            message: format!("can be read by other users (mode {mode:o})"),
            hint: Some(format!("make it private: `chmod 600 {}`", path.display())),
        });
    }
}

fn file_findings(
    locations: &Locations,
    sources: &EnvSources,
    inventory: &Inventory,
    servers: &[ServerCheck],
    variables: &[Variable],
    findings: &mut Vec<Finding>,
) {
    for file in sources.dotenv_files() {
        for problem in &file.problems {
            findings.push(Finding {
                code: "dotenv-syntax",
                severity: Severity::Warning,
                server: None,
                variable: None,
                file: Some(file.path.clone()),
                message: format!("line {}: {}", problem.line, problem.message),
                hint: Some("fix that line: its variable is not read".to_string()),
            });
        }
    }
    // The user's store is outside every repository: only its mode matters.
    if sources.user_dotenv.text.is_some() {
        permission_finding(&sources.user_dotenv.path, findings);
    }
    for project in &sources.projects {
        let env_path = &project.dotenv.path;
        if project.dotenv.text.is_some() {
            // Git knows best; without it, the `.gitignore` files from the
            // repository root down to the file's directory.
            let ignored = crate::mechanics::git_files::git_ignores(&project.dir, env_path)
                .unwrap_or_else(|| {
                    let top = locations.git_root.as_deref().unwrap_or(&project.dir);
                    project
                        .dir
                        .ancestors()
                        .take_while(|dir| dir.starts_with(top))
                        .any(|dir| {
                            let relative = env_path.strip_prefix(dir).unwrap_or(env_path);
                            crate::mechanics::fsx::read_if_exists(&dir.join(".gitignore"))
                                .is_ok_and(|text| {
                                    text.is_some_and(|text| {
                                        crate::mechanics::gitignore::ignores(
                                            &text,
                                            &relative.to_string_lossy(),
                                        )
                                    })
                                })
                        })
                });
            if !ignored && locations.git_root.is_some() {
                findings.push(Finding {
                    code: "dotenv-not-ignored",
                    severity: Severity::Warning,
                    server: None,
                    variable: None,
                    file: Some(env_path.clone()),
                    message: "not ignored by git; its secrets could be committed".to_string(),
                    hint: Some("add `.env` to `.gitignore`".to_string()),
                });
            }
            permission_finding(env_path, findings);
        }
        // `.env.example` documents what the servers in effect of the
        // `.mcp.json` next to it need, as `extract` writes it; a local or
        // user server's variables are private.
        let shared = servers
            .iter()
            .filter(|server| {
                server.scope == Scope::Project
                    && server.status.checked()
                    && server.file.parent() == Some(project.dir.as_path())
            })
            .filter_map(|server| {
                let winner = inventory.winner(&server.name)?;
                Some((server.name.as_str(), &winner.entry))
            });
        let expected = crate::secrets::extraction_plan::example_variables(shared, &[]);
        let documented: Vec<&Variable> = expected
            .iter()
            .filter_map(|line| variables.iter().find(|variable| variable.name == line.name))
            .collect();
        // `extract` writes the `.env.example` of the folder it runs in.
        let root = locations.project_root();
        let extract = if project.dir == root {
            "`mcpenv extract`".to_string()
        } else {
            let up = crate::config::locate::upward_dir(&project.dir, &root).unwrap_or_else(|| {
                crate::mechanics::display::shell_words(&[project.dir.display().to_string()])
            });
            format!("`mcpenv extract -C {up}`")
        };
        example_findings(&project.example, &documented, variables, &extract, findings);
    }
}

/// What `example` lacks of the `documented` variables, and what it lists
/// that no server uses.
fn example_findings(
    example: &DotEnv,
    documented: &[&Variable],
    variables: &[Variable],
    extract: &str,
    findings: &mut Vec<Finding>,
) {
    if example.text.is_none() {
        if !documented.is_empty() {
            findings.push(Finding {
                code: "example-missing",
                severity: Severity::Warning,
                server: None,
                variable: None,
                file: Some(example.path.clone()),
                message: "does not exist, so teammates cannot see which variables the servers need"
                    .to_string(),
                hint: Some(format!("{extract} writes one; commit it")),
            });
        }
        return;
    }
    for variable in documented {
        if example.get(&variable.name).is_none() {
            findings.push(Finding {
                code: "example-drift",
                severity: Severity::Warning,
                server: None,
                variable: None,
                file: Some(example.path.clone()),
                message: format!(
                    "does not list `{}`, used by {}",
                    variable.name,
                    variable.servers.join(", ")
                ),
                hint: Some(format!("add `{}=` to `.env.example`", variable.name)),
            });
        }
    }
    for (name, _) in example.entries() {
        if !variables.iter().any(|variable| variable.name == name) {
            findings.push(Finding {
                code: "example-drift",
                severity: Severity::Warning,
                server: None,
                variable: None,
                file: Some(example.path.clone()),
                message: format!("lists `{name}`, which no server uses"),
                hint: Some(format!(
                    "remove `{name}` from `.env.example`, or add the server that needs it"
                )),
            });
        }
    }
}

/// Comments right above each `NAME=` line of `.env.example`, without the
/// `used by:` lines mcpenv writes.
fn example_descriptions(example: &DotEnv) -> BTreeMap<String, String> {
    let mut descriptions = BTreeMap::new();
    let Some(text) = &example.text else {
        return descriptions;
    };
    let mut comment: Vec<&str> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(text) = trimmed.strip_prefix('#') {
            let text = text.trim();
            if !text.is_empty() && !text.starts_with("used by:") {
                comment.push(text);
            }
            continue;
        }
        if let Some((name, _)) = trimmed.trim_start_matches("export ").split_once('=')
            && !comment.is_empty()
        {
            descriptions.insert(name.trim().to_string(), comment.join(" "));
        }
        comment.clear();
    }
    descriptions
}

/// Whether `command` can be started: a path that exists (a relative one
/// from the working directory, as Claude Code starts servers there), or a
/// name on the PATH Claude Code would search. Placeholders are expanded
/// first, from what Claude Code sees, else from `.env` (as `mcpenv run`
/// would); a command that depends on an unset variable without a default
/// is not judged.
/// What a value substituted into a shown command becomes.
const MASKED_SUBSTITUTION: &str = "****";

fn check_command(command: &str, locations: &Locations, sources: &EnvSources) -> CommandCheck {
    let lookup = |name: &str| {
        sources
            .for_claude(name)
            .or_else(|| sources.in_files(name))
            .map(|(value, _)| value)
    };
    let expansion = expansion::expand(command, lookup);
    let shown = expansion::expand(command, |name| {
        lookup(name).map(|value| {
            if value.is_empty() {
                value
            } else {
                MASKED_SUBSTITUTION.to_string()
            }
        })
    });
    let resolved = (expansion.text != command).then_some(shown.text);
    if !expansion.missing.is_empty() {
        return CommandCheck {
            command: command.to_string(),
            resolved: None,
            found: None,
            depends_on: expansion.missing,
            absolute: command.starts_with('/'),
        };
    }
    let path = sources.process.get("PATH").cloned().unwrap_or_default();
    let found = !expansion.text.is_empty()
        && which::which_in(&expansion.text, Some(path), &locations.working_dir).is_ok();
    CommandCheck {
        command: command.to_string(),
        resolved,
        found: Some(found),
        depends_on: Vec::new(),
        absolute: expansion.text.starts_with('/'),
    }
}

fn install_hint(command: &str, absolute: bool, locations: &Locations) -> String {
    let name = Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(command);
    if command.contains('/') && !absolute {
        return format!(
            "check the path `{command}`: Claude Code resolves it from the directory it starts in (here `{}`)",
            locations.working_dir.display()
        );
    }
    match name {
        "npx" | "node" | "npm" => {
            "install Node.js (it provides `npx`), then run `mcpenv check` again".to_string()
        }
        "uvx" | "uv" => {
            "install uv (it provides `uvx`): `pipx install uv` or your package manager".to_string()
        }
        "docker" => "install Docker, and make sure its daemon is running".to_string(),
        "python" | "python3" => "install Python 3".to_string(),
        _ if command.contains('/') => format!("check the path `{command}`"),
        _ => format!("install `{name}` or put it on PATH"),
    }
}
