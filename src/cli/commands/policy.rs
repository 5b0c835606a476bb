//! `mcpenv policy check`: repositories' `.mcp.json` judged against an
//! organisation's MCP policy, as text, JSON or SARIF. The work is
//! [`crate::ops::policy_check`].

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::{PolicyCheckArgs, ScanFormat};
use crate::cli::commands::scan::{emit_as, file_uri, format_of, uri_text};
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::render::{RED, Report, counted, shown, warning};
use crate::cli::resolve::Ctx;
use crate::config::managed_policy::BlockKind;
use crate::ops::policy_check::{PolicyReport, PolicyRequest, policy_check};
use crate::ops::scan_secrets::repository_root;
use crate::secrets::sarif::{Alert, AlertKind};

/// The verdict, with each path as shown.
#[derive(Debug, Serialize)]
pub struct PolicyOutput {
    /// The verdict.
    #[serde(flatten)]
    pub report: PolicyReport,
    #[serde(skip)]
    shown_policy: String,
    #[serde(skip)]
    shown_files: Vec<String>,
}

/// Runs `mcpenv policy check`.
pub fn run(ctx: &Ctx, args: &PolicyCheckArgs) -> Result<(PolicyOutput, ScanFormat), CliError> {
    let format = format_of(args.json, args.format)?;
    let report = policy_check(
        &ctx.ops,
        &PolicyRequest {
            policy: args.policy.clone(),
            paths: args.paths.clone(),
        },
    )?;
    let shown_files = report
        .findings
        .iter()
        .map(|finding| shown_path(ctx, &finding.file))
        .collect();
    Ok((
        PolicyOutput {
            shown_policy: shown_path(ctx, &report.policy),
            shown_files,
            report,
        },
        format,
    ))
}

/// Prints the verdict in `format`; whether a server was kept out.
pub fn emit(ctx: &Ctx, output: &PolicyOutput, format: ScanFormat, quiet: bool) -> io::Result<bool> {
    emit_as(ctx, output, format, quiet, || alerts(ctx, &output.report))
}

/// One alert per server kept out, named by the rule's kind.
fn alerts(ctx: &Ctx, report: &PolicyReport) -> Vec<Alert> {
    let root = repository_root(ctx);
    report
        .findings
        .iter()
        .map(|finding| {
            let uri = file_uri(&root, &finding.file);
            let (rule, description) = match finding.blocked.kind {
                BlockKind::Denied => ("mcp-policy-denied", "MCP server denied by policy"),
                BlockKind::NotAllowed => (
                    "mcp-policy-not-allowed",
                    "MCP server not on the policy's allowlist",
                ),
                BlockKind::Exclusive => (
                    "mcp-policy-exclusive",
                    "MCP server ignored under an exclusive managed-mcp.json",
                ),
            };
            Alert {
                kind: AlertKind::Policy,
                rule: rule.to_string(),
                rule_description: description.to_string(),
                message: format!("`{}`: {}", finding.server, finding.blocked.message()),
                identity: [uri_text(&uri), finding.server.clone(), rule.to_string()].join("\0"),
                position: finding.position,
                file: uri,
            }
        })
        .collect()
}

impl Report for PolicyOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for (finding, file) in self.report.findings.iter().zip(&self.shown_files) {
            let place = finding.position.map_or_else(
                || file.clone(),
                |position| format!("{file}:{}:{}", position.line, position.column),
            );
            writeln!(
                out,
                "{}: `{}` {}",
                shown(&place),
                shown(&finding.server),
                shown(&finding.blocked.message())
            )?;
        }
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.report.warnings {
            warning(err, &format!("`{}`: {}", note.file.display(), note.message))?;
        }
        self.write_errors(err)?;
        if !self.report.policy_found {
            warning(
                err,
                &format!(
                    "no policy file at `{}`: every server is allowed",
                    self.shown_policy
                ),
            )?;
        }
        let count = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        let files = count(
            self.report.files.len(),
            "`.mcp.json` file",
            "`.mcp.json` files",
        );
        match self.report.findings.len() {
            0 => writeln!(
                err,
                "No server in {files} is kept out by `{}`",
                shown(&self.shown_policy)
            )?,
            found => {
                writeln!(
                    err,
                    "{} in {files} kept out by `{}`",
                    counted(found, "server"),
                    shown(&self.shown_policy)
                )?;
                writeln!(
                    err,
                    "hint: Claude Code hides these servers and never starts them; remove them from `.mcp.json`, or change the policy before it ships"
                )?;
            }
        }
        Ok(())
    }

    fn write_errors(&self, err: &mut dyn Write) -> io::Result<()> {
        let style = RED.bold();
        for file in &self.report.unparsed {
            writeln!(err, "{style}error:{style:#} {}", shown(&file.message))?;
            writeln!(
                err,
                "hint: fix `{}`: Claude Code loads none of its servers, so none was judged",
                file.file.display()
            )?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        self.report.failed()
    }
}
