//! Whether every server in effect has what it needs: each variable it
//! references (set, empty, defaulted or missing, and where from), its
//! command, and the problems Claude Code would hit. What `mcpenv check`
//! shows and the `check_environment` tool returns. Never holds a value.

use serde::Serialize;

use crate::check::platforms::{self, Judgement, Obstacle, System};
use crate::check::{self, CheckReport, EnvSources, Finding, Severity, Status};
use crate::config::inventory::Inventory;
use crate::envfiles::dotenv::DotEnvError;
use crate::ops::{Context, Loaded};
use crate::stores::references::Resolver;

/// The outcome of a check.
#[derive(Debug, Serialize)]
pub struct EnvironmentCheck {
    /// Whether every server in effect has what it needs.
    pub ok: bool,
    /// Servers, variables and findings.
    #[serde(flatten)]
    pub report: CheckReport,
    /// The command that approves the pending project servers in Claude
    /// Code, when there are any.
    pub approve_command: Option<String>,
    /// Whether this folder is trusted in Claude Code (approvals count).
    #[serde(skip)]
    pub folder_trusted: bool,
}

/// Why a check could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A `.env` file (or the user's store) cannot be read.
    #[error("cannot read the `.env` files")]
    EnvFiles(#[source] DotEnvError),
    /// The server asked about is defined nowhere.
    #[error("no MCP server named `{name}`")]
    NoSuchServer {
        /// The name asked about.
        name: String,
        /// The servers that are checked.
        known: Vec<String>,
    },
}

/// Which systems the project's committed servers are judged for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Platforms {
    /// Every other system, only what surely stops a server there, as
    /// warnings: cheap to know, and never noise about a teammate's release
    /// (this system's own command check says what fails here).
    #[default]
    Cheap,
    /// These systems (`check --for`): what surely stops a server there is
    /// an error, what depends on the teammate's Claude Code a warning.
    For(Vec<System>),
}

/// Checks the servers in effect (with `strict`, a warning fails the check
/// too); with `server`, only that server, the variables it references and
/// the findings about it or about no server in particular.
pub fn check_environment(
    context: &Context,
    strict: bool,
    server: Option<&str>,
) -> Result<(EnvironmentCheck, Loaded), CheckError> {
    check_environment_for(context, strict, server, &Platforms::Cheap)
}

/// [`check_environment`], with the committed servers judged for
/// `platforms`.
pub fn check_environment_for(
    context: &Context,
    strict: bool,
    server: Option<&str>,
    platforms: &Platforms,
) -> Result<(EnvironmentCheck, Loaded), CheckError> {
    let inventory = Inventory::load_all(&context.locations);
    let sources = match EnvSources::load(
        &context.locations,
        &context.user_env_file(),
        context.process_env.clone(),
    ) {
        Ok(sources) => sources,
        Err(error) => return Err(CheckError::EnvFiles(error)),
    };
    let mut report = check::check(&context.locations, &inventory, &sources, || {
        crate::templates::all(&context.template_dirs).0
    });
    report
        .findings
        .extend(crate::check::project_links::findings(&context.locations));
    let mut platform = platform_findings(context, &inventory, platforms);
    if *platforms == Platforms::Cheap {
        // A command that fails here already has its error (whose hint
        // says how to write it for every system when it is another
        // system's, below); the other systems can wait until it is fixed.
        platform.retain(|finding| {
            !report
                .findings
                .iter()
                .any(|known| known.code == "command-not-found" && known.server == finding.server)
        });
    }
    if let Some(here) = System::current() {
        // "Install `cmd`" would be no help: say whose command it is.
        for judgement in platforms::judge_project(&inventory, &[here], true) {
            let hint = platform_hint(context, &judgement);
            if let Some(known) = report.findings.iter_mut().find(|known| {
                known.code == "command-not-found"
                    && known.server.as_ref() == Some(&judgement.server)
                    && known.file.as_ref() == Some(&judgement.file)
            }) {
                known.hint = Some(format!(
                    "{}; {hint}",
                    judgement.obstacle.describe(&judgement.server, &[here])
                ));
            }
        }
    }
    for server in &mut report.servers {
        // What cannot start on a system asked about is not ready (a
        // local override of the name is what this person runs).
        if server.scope == crate::config::scope::Scope::Project
            && platform.iter().any(|finding| {
                finding.severity == Severity::Error && finding.server.as_ref() == Some(&server.name)
            })
        {
            server.ok = false;
        }
    }
    report.findings.extend(platform);
    if let Some(name) = server {
        only(&mut report, name)?;
    }
    resolve_references(context, &mut report);
    let pending: Vec<&str> = report
        .servers
        .iter()
        .filter(|server| server.status == Status::Pending)
        .map(|server| server.name.as_str())
        .collect();
    let folder_trusted = pending.is_empty() || context.folder_trusted();
    let approve_command =
        (!pending.is_empty()).then(|| context.approve_command_in(folder_trusted, &pending));
    let check = EnvironmentCheck {
        ok: report.ok(strict),
        report,
        approve_command,
        folder_trusted,
    };
    let read = Loaded {
        inventory,
        sources: Some(sources),
    };
    Ok((check, read))
}

/// What the committed servers meet on other systems, as findings.
fn platform_findings(
    context: &Context,
    inventory: &Inventory,
    platforms: &Platforms,
) -> Vec<Finding> {
    let (systems, chosen) = match platforms {
        Platforms::Cheap => (
            System::ALL
                .into_iter()
                .filter(|system| Some(*system) != System::current())
                .collect(),
            false,
        ),
        Platforms::For(systems) => (systems.clone(), true),
    };
    platforms::judge_project(inventory, &systems, !chosen)
        .into_iter()
        .map(|judgement| Finding {
            code: if judgement.obstacle.certain() {
                "platform-command"
            } else {
                "windows-batch-file"
            },
            severity: if chosen && judgement.obstacle.certain() {
                Severity::Error
            } else {
                Severity::Warning
            },
            server: Some(judgement.server.clone()),
            variable: None,
            message: judgement
                .obstacle
                .describe(&judgement.server, &judgement.systems),
            hint: Some(platform_hint(context, &judgement)),
            file: Some(judgement.file),
        })
        .collect()
}

/// The next step for a server that meets `judgement`.
fn platform_hint(context: &Context, judgement: &Judgement) -> String {
    let file = check::file_name(&judgement.file);
    match (&judgement.obstacle, &judgement.portable) {
        (Obstacle::BatchFile { .. }, _) if !judgement.server.starts_with('-') => {
            let mut words = vec!["add", "-s", "local", judgement.server.as_str(), "--", "cmd", "/c"];
            words.extend(judgement.command.iter().map(String::as_str));
            format!(
                "a teammate on such a release can start it through `cmd /c` for themselves, with a local entry of the same name (and the entry's `env`, if it has one): `{}`",
                context.command(&words)
            )
        }
        (Obstacle::BatchFile { .. }, _) => "a teammate on such a release can start it through `cmd /c` for themselves, with a local entry of the same name".to_string(),
        (_, Some(form)) => format!(
            "write it as `{}` in `{file}`: that form starts on every system",
            crate::mechanics::display::shell_words(form)
        ),
        (Obstacle::PersonalPath { .. } | Obstacle::SystemPath { .. }, None) => format!(
            "in `{file}`, use a path inside the project (relative to its root, where Claude Code starts the server) or a program on PATH"
        ),
        (Obstacle::WindowsOnly { .. } | Obstacle::UnixOnly { .. }, None) => format!(
            "for every teammate, run the server in `{file}` through a program each system has by name (`node`, `python3`, `uvx`, `npx`)"
        ),
    }
}

/// Asks each password manager and the keychain for the values the dotenv
/// files name (each reference once), so a reference that would fail under
/// `mcpenv run` fails the check now; the values are only learnt, to be
/// masked.
fn resolve_references(context: &Context, report: &mut CheckReport) {
    let root = context.locations.project_root();
    let mut resolver = Resolver::new(context.shield.clone());
    for variable in &mut report.variables {
        let Some(reference) = &mut variable.reference else {
            continue;
        };
        let file = variable
            .source
            .as_deref()
            .filter(|source| *source != "environment");
        let Some(result) = resolver.resolve_from(
            file.map(std::path::Path::new),
            &variable.name,
            &reference.text,
        ) else {
            continue;
        };
        reference.resolves = Some(result.is_ok());
        if let Err(error) = result {
            // Its servers would start without it.
            for server in &mut report.servers {
                if variable.servers.contains(&server.name) {
                    server.ok = false;
                }
            }
            report.findings.push(Finding {
                code: "reference-unresolved",
                severity: Severity::Error,
                server: None,
                variable: Some(variable.name.clone()),
                file: None,
                message: format!(
                    "`{}` in {} {} (used by {})",
                    variable.name,
                    check::source_name(&root, variable.source.as_deref()),
                    error.message,
                    variable.servers.join(", ")
                ),
                hint: Some(error.hint),
            });
        }
    }
}

/// Keeps what concerns the server `name` in `report`.
fn only(report: &mut CheckReport, name: &str) -> Result<(), CheckError> {
    if !report.servers.iter().any(|server| server.name == name) {
        return Err(CheckError::NoSuchServer {
            name: name.to_string(),
            known: report
                .servers
                .iter()
                .map(|server| server.name.clone())
                .collect(),
        });
    }
    report.servers.retain(|server| server.name == name);
    report
        .variables
        .retain(|variable| variable.servers.iter().any(|server| server == name));
    let kept: Vec<String> = report
        .variables
        .iter()
        .map(|variable| variable.name.clone())
        .collect();
    report.findings.retain(|finding| {
        finding
            .server
            .as_deref()
            .is_none_or(|server| server == name)
            && finding
                .variable
                .as_ref()
                .is_none_or(|variable| kept.contains(variable))
    });
    Ok(())
}
