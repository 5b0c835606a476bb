//! `mcpenv policy check`: every `.mcp.json` below some folders judged
//! against an organisation's MCP policy (a file shaped like Claude Code's
//! `managed-settings.json`; by default the machine's own managed
//! settings), for CI across many repositories. The policy comes from the
//! file named, never from the repositories judged: a repository cannot
//! loosen it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::inventory::servers_at;
use crate::config::json_files::load_document_from;
use crate::config::managed_policy::{Block, Policy};
use crate::config::model::ServerEntry;
use crate::mechanics::fsx;
use crate::ops::list_servers::Warning;
use crate::ops::scan_secrets::walk;
use crate::ops::{Context, Error};
use crate::secrets::value_position::Position;

/// The file name judged.
const PROJECT_FILE: &str = ".mcp.json";

/// What to judge, against what.
#[derive(Debug, Clone)]
pub struct PolicyRequest {
    /// The policy file; `None`: the machine's managed folder.
    pub policy: Option<PathBuf>,
    /// Folders (or `.mcp.json` files) to judge; none: the working folder.
    pub paths: Vec<PathBuf>,
}

/// The verdict on every `.mcp.json` found.
#[derive(Debug, Serialize)]
pub struct PolicyReport {
    /// The policy file read.
    pub policy: PathBuf,
    /// Whether that file exists: a missing one is an empty policy.
    pub policy_found: bool,
    /// Every `.mcp.json` judged.
    pub files: Vec<PathBuf>,
    /// Each server the policy keeps out.
    pub findings: Vec<PolicyFinding>,
    /// `.mcp.json` files that do not load (Claude Code loads none of
    /// their servers, so none is judged).
    pub unparsed: Vec<PolicyFileError>,
    /// Policy entries Claude Code drops, and links not followed.
    pub warnings: Vec<Warning>,
}

/// A server the policy keeps out.
#[derive(Debug, Serialize)]
pub struct PolicyFinding {
    /// The `.mcp.json` it is in.
    pub file: PathBuf,
    /// Where its name is in that file.
    pub position: Option<Position>,
    /// The server's name.
    pub server: String,
    /// The rule and the policy file.
    pub blocked: Block,
}

/// A `.mcp.json` that does not load.
#[derive(Debug, Serialize)]
pub struct PolicyFileError {
    /// The file.
    pub file: PathBuf,
    /// Why.
    pub message: String,
}

/// Judges every `.mcp.json` under the request's paths.
pub fn policy_check(ctx: &Context, request: &PolicyRequest) -> Result<PolicyReport, Error> {
    let (policy, policy_file) = match &request.policy {
        Some(file) => {
            if !file.is_file() {
                return Err(Error::failure(format!(
                    "cannot read policy file `{}`: not a regular file",
                    file.display()
                ))
                .with_hint("name a file shaped like Claude Code's `managed-settings.json`"));
            }
            (Policy::from_settings_file(&fsx::Disk, file)?, file.clone())
        }
        None => {
            let file = ctx
                .locations
                .managed_dir
                .join(crate::config::managed_policy::SETTINGS_FILE);
            (Policy::load(&fsx::Disk, &ctx.locations.managed_dir)?, file)
        }
    };
    let mut warnings: Vec<Warning> = policy
        .notes
        .iter()
        .map(|note| Warning {
            file: note.file.clone(),
            message: note.message.clone(),
        })
        .collect();
    let paths = if request.paths.is_empty() {
        vec![ctx.locations.working_dir.clone()]
    } else {
        request.paths.clone()
    };
    let mut files = Vec::new();
    for path in &paths {
        let walked = walk::collect(path, true).map_err(|error| {
            Error::failure_from(format!("cannot read `{}`", path.display()), error)
                .with_hint("name folders or `.mcp.json` files that exist")
        })?;
        warnings.extend(walked.skipped);
        files.extend(
            walked
                .files
                .into_iter()
                .filter(|file| file.file_name().is_some_and(|name| name == PROJECT_FILE)),
        );
    }
    let mut findings = Vec::new();
    let mut unparsed = Vec::new();
    for file in &files {
        match judge_file(&policy, file) {
            Ok(found) => findings.extend(found),
            Err(message) => unparsed.push(PolicyFileError {
                file: file.clone(),
                message,
            }),
        }
    }
    Ok(PolicyReport {
        policy_found: policy_file.is_file(),
        policy: policy_file,
        files,
        findings,
        unparsed,
        warnings,
    })
}

impl PolicyReport {
    /// Whether a server is kept out, or a file could not be judged.
    pub fn failed(&self) -> bool {
        !self.findings.is_empty() || !self.unparsed.is_empty()
    }
}

/// The servers of one `.mcp.json` that `policy` keeps out.
fn judge_file(policy: &Policy, file: &Path) -> Result<Vec<PolicyFinding>, String> {
    let document = load_document_from(&fsx::Disk, file, &[])
        .map_err(|error| crate::check::error_chain(&error))?;
    let Some(document) = document else {
        return Ok(Vec::new());
    };
    let servers = servers_at(&document, file, &["mcpServers"])
        .map_err(|error| crate::check::error_chain(&error))?;
    let keys = document
        .object_at(&["mcpServers"])
        .ok()
        .flatten()
        .map(|object| document.members(&object))
        .unwrap_or_default();
    let text = document.text();
    Ok(servers
        .into_iter()
        .filter_map(|(name, value)| {
            let blocked = policy.judge(&name, &ServerEntry::from_value(value), false)?;
            let position = keys
                .iter()
                .rev()
                .find(|member| document.key(member) == name)
                .map(|member| position_of(text, member.key_span.clone()));
            Some(PolicyFinding {
                file: file.to_path_buf(),
                position,
                server: name,
                blocked,
            })
        })
        .collect())
}

/// 1-based line and column (in characters) of a span on one line.
fn position_of(text: &str, span: std::ops::Range<usize>) -> Position {
    let before = &text[..span.start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let column = text[line_start..span.start].chars().count() + 1;
    let end_column = column + text[span].chars().count();
    Position {
        line,
        column,
        end_line: line,
        end_column,
    }
}
