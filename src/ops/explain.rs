//! Why a server works or not: its definitions in every scope, what it
//! needs and lacks, and on request a probe, as Claude Code would start it
//! (never an unapproved project server), with the next steps as data.
//! `serve`'s `explain_server` renders it.

use crate::check::{Finding, Severity, Variable};
use crate::config::inventory::Status;
use crate::ops::check_environment::{CheckError, check_environment};
use crate::ops::list_servers::{ListedServer, list_servers};
use crate::ops::probe::{Done, ProbeRequest, ProbeSettings, Probed, Skipped, probe_servers};
use crate::ops::{Context, Error};

/// Which server to explain.
#[derive(Debug, Clone)]
pub struct ExplainRequest {
    /// The server's name.
    pub server: String,
    /// Probe it too, so: none, no probe.
    pub probe: Option<ProbeSettings>,
}

/// Why an explanation could not be made: each front-end words a failed
/// check its own way.
#[derive(Debug)]
pub enum ExplainError {
    /// The check failed (a `.env` that does not load, no such server).
    Check(CheckError),
    /// The probe could not run.
    Probe(Error),
}

/// A server explained.
pub struct Explanation {
    /// The server's name, as asked.
    pub server: String,
    /// It has what it needs, nothing is left to do, and it answered if
    /// probed.
    pub will_work: bool,
    /// How Claude Code treats the definition in effect, if any.
    pub status: Option<Status>,
    /// Its definitions, in every scope.
    pub definitions: Vec<ListedServer>,
    /// The variables it references.
    pub variables: Vec<Variable>,
    /// The findings about it (or about every server).
    pub problems: Vec<Finding>,
    /// What the probe found, when asked for one.
    pub probe: Option<ProbeVerdict>,
    /// What to do, in order.
    pub next_steps: Vec<NextStep>,
    /// The command that approves it in Claude Code, when it waits for
    /// approval.
    pub approve_command: Option<String>,
}

/// What a probe of the server found.
pub enum ProbeVerdict {
    /// It was started: its outcome.
    Started(Box<Done>),
    /// It was not started, and why.
    Skipped(Skipped),
}

impl ProbeVerdict {
    /// Whether it was started and answered.
    pub fn ok(&self) -> bool {
        matches!(self, Self::Started(done) if done.outcome.result.is_ok())
    }
}

/// One thing to do before the server works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// Fix the problem at this index of [`Explanation::problems`], an
    /// error.
    Fix {
        /// Its index.
        problem: usize,
        /// Its code.
        code: &'static str,
    },
    /// The person approves it for this project (Claude Code does not
    /// start it until then).
    Approve,
    /// The probe did not start it (the reason is in the verdict).
    NotStarted,
    /// It was started and did not answer (the error is in the verdict).
    DidNotAnswer,
}

/// Explains `request.server`; the shield learns everything read.
pub async fn explain(ctx: &Context, request: ExplainRequest) -> Result<Explanation, ExplainError> {
    let server = request.server;
    let wanted = server.clone();
    let blocking_ctx = ctx.clone();
    // Reading files blocks: off the async threads.
    let read = tokio::task::spawn_blocking(move || {
        let ctx = blocking_ctx;
        let (list, read) = list_servers(&ctx, None);
        read.teach_shield(&ctx.shield);
        let check = check_environment(&ctx, false, Some(&wanted));
        if let Ok((_, read)) = &check {
            read.teach_shield(&ctx.shield);
        }
        (list, check)
    })
    .await;
    let (list, check) = match read {
        Ok(read) => read,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    };
    let (check, _) = check.map_err(ExplainError::Check)?;
    let definitions: Vec<ListedServer> = list
        .servers
        .into_iter()
        .filter(|listed| listed.name == server)
        .collect();
    let in_effect = check
        .report
        .servers
        .iter()
        .find(|checked| checked.name == server);
    let status = in_effect.map(|checked| checked.status);
    let has_what_it_needs = in_effect.is_some_and(|checked| checked.ok);
    let problems: Vec<Finding> = check
        .report
        .findings
        .into_iter()
        .filter(|finding| finding.server.as_deref().is_none_or(|name| name == server))
        .collect();
    let mut next_steps: Vec<NextStep> = problems
        .iter()
        .enumerate()
        .filter(|(_, finding)| finding.severity == Severity::Error)
        .map(|(problem, finding)| NextStep::Fix {
            problem,
            code: finding.code,
        })
        .collect();
    let approve_command = definitions
        .iter()
        .find_map(|listed| listed.approve_command.clone());
    if approve_command.is_some() {
        next_steps.push(NextStep::Approve);
    }
    let probe = match &request.probe {
        Some(settings) => {
            let asked = ProbeRequest {
                names: vec![server.clone()],
                trust_project: false,
                send_blanked: false,
            };
            let Probed { mut done, skipped } = probe_servers(ctx, asked, settings)
                .await
                .map_err(ExplainError::Probe)?;
            done.pop()
                .map(|done| ProbeVerdict::Started(Box::new(done)))
                .or_else(|| skipped.into_iter().next().map(ProbeVerdict::Skipped))
        }
        None => None,
    };
    match &probe {
        Some(ProbeVerdict::Skipped(_)) => next_steps.push(NextStep::NotStarted),
        Some(verdict) if !verdict.ok() => next_steps.push(NextStep::DidNotAnswer),
        _ => {}
    }
    let will_work =
        has_what_it_needs && next_steps.is_empty() && probe.as_ref().is_none_or(ProbeVerdict::ok);
    let variables: Vec<Variable> = check
        .report
        .variables
        .into_iter()
        .filter(|variable| variable.servers.contains(&server))
        .collect();
    Ok(Explanation {
        server,
        will_work,
        status,
        definitions,
        variables,
        problems,
        probe,
        next_steps,
        approve_command,
    })
}
