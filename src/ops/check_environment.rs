//! Whether every server in effect has what it needs: each variable it
//! references (set, empty, defaulted or missing, and where from), its
//! command, and the problems Claude Code would hit. What `mcpenv check`
//! shows and the `check_environment` tool returns. Never holds a value.

use serde::Serialize;

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

/// Checks the servers in effect (with `strict`, a warning fails the check
/// too); with `server`, only that server, the variables it references and
/// the findings about it or about no server in particular.
pub fn check_environment(
    context: &Context,
    strict: bool,
    server: Option<&str>,
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
    let mut report = check::check(
        &context.locations,
        &inventory,
        &sources,
        &crate::templates::all(&context.template_dirs).0,
    );
    report
        .findings
        .extend(crate::check::project_links::findings(&context.locations));
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
