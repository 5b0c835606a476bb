//! `mcpenv doctor`: "is everything fine here?" in one command. The
//! environment check, the secret scan and (with `--probe`) the probe, each
//! part run whatever the others found, in one summary with one exit code:
//! 0 when every part is fine, 1 when any part found a problem or could not
//! run.

use std::io::{self, Write};
use std::time::Duration;

use anstyle::Style;
use serde::{Serialize, Serializer};

use crate::cli::args::DoctorArgs;
use crate::cli::commands::check::{CheckOutput, write_finding};
use crate::cli::commands::probe::{
    ProbeReport, ProbeSettings, probe_targets, progress_line, skipped_message,
};
use crate::cli::commands::scan::{ScanOutput, extract_command};
use crate::cli::commands::shown_path;
use crate::cli::commands::{check, scan};
use crate::cli::error::CliError;
use crate::cli::render::{self, BOLD, GREEN, RED, Report, YELLOW, shown, warning, write_hanging};
use crate::cli::resolve::Ctx;
use crate::ops::doctor::diagnose;
use crate::ops::probe::{Done, ProbeRequest, Selection, select};

/// One part of the diagnosis: its report, or why it could not run (one
/// problem of that part).
enum Part<T> {
    Ran(T),
    Failed(CliError),
}

impl<T: Serialize> Serialize for Part<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Ran(report) => report.serialize(serializer),
            Self::Failed(error) => serde_json::json!({
                "ok": false,
                "error": error.to_json()["error"],
            })
            .serialize(serializer),
        }
    }
}

impl<T> From<Result<T, CliError>> for Part<T> {
    fn from(result: Result<T, CliError>) -> Self {
        result.map_or_else(Self::Failed, Self::Ran)
    }
}

/// The servers probed, and those probe skips (as `mcpenv probe` does).
struct Probed {
    outcomes: Vec<Done>,
    elapsed: Duration,
    skipped: Vec<String>,
}

/// The probe part in JSON: `mcpenv probe --json`'s report and the servers
/// skipped.
#[derive(Serialize)]
struct ProbeSection<'a> {
    #[serde(flatten)]
    report: ProbeReport<'a>,
    skipped: &'a [String],
}

/// `mcpenv doctor`'s report.
#[derive(Serialize)]
struct DoctorOutput<'a> {
    /// Whether every part is fine.
    ok: bool,
    check: Part<CheckOutput>,
    scan: Part<ScanOutput>,
    probe: Option<Part<ProbeSection<'a>>>,
    /// The files the scan could not read, each as shown, and why.
    #[serde(skip)]
    scan_warnings: Vec<String>,
    #[serde(skip)]
    quiet: bool,
    /// The next command for each part with problems.
    #[serde(skip)]
    next: Vec<String>,
}

impl DoctorOutput<'_> {
    fn environment_problems(&self) -> usize {
        match &self.check {
            Part::Ran(output) => output
                .failing_findings()
                .count()
                .max(usize::from(!output.check.ok)),
            Part::Failed(_) => 1,
        }
    }

    fn secret_problems(&self) -> usize {
        match &self.scan {
            Part::Ran(output) => output.problems(),
            Part::Failed(_) => 1,
        }
    }

    fn server_problems(&self) -> usize {
        match &self.probe {
            None => 0,
            Some(Part::Ran(section)) => failed(section.report.outcomes()).count(),
            Some(Part::Failed(_)) => 1,
        }
    }

    fn problems(&self) -> usize {
        self.environment_problems() + self.secret_problems() + self.server_problems()
    }

    fn heading(&self, out: &mut dyn Write, title: &str, problems: usize) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        let verdict = if problems == 0 {
            format!("{GREEN}ok{GREEN:#}")
        } else {
            format!("{RED}{}{RED:#}", count(problems, "problem"))
        };
        writeln!(out, "{BOLD}{title}{BOLD:#}: {verdict}")
    }

    fn write_check(&self, out: &mut dyn Write) -> io::Result<()> {
        self.heading(out, "Environment", self.environment_problems())?;
        match &self.check {
            Part::Ran(output) => {
                for (finding, file) in output.failing_findings() {
                    write_finding(out, finding, file)?;
                }
                Ok(())
            }
            Part::Failed(error) => error.render(out),
        }
    }

    fn write_scan(&self, out: &mut dyn Write) -> io::Result<()> {
        self.heading(out, "Secrets", self.secret_problems())?;
        match &self.scan {
            Part::Ran(output) => {
                for line in output.unparsed_lines() {
                    let red = RED.bold();
                    writeln!(out, "{red}error:{red:#} {}", shown(&line))?;
                }
                output.write_text(out)?;
                if !self.quiet {
                    for note in &self.scan_warnings {
                        let style = YELLOW.bold();
                        let lead = format!("{style}warning:{style:#} ");
                        write_hanging(out, &lead, 9, &shown(note), Style::new(), 4)?;
                    }
                }
                Ok(())
            }
            Part::Failed(error) => error.render(out),
        }
    }

    fn write_probe(&self, out: &mut dyn Write) -> io::Result<()> {
        let Some(part) = &self.probe else {
            return Ok(());
        };
        self.heading(out, "Servers", self.server_problems())?;
        match part {
            Part::Ran(section) => {
                for done in failed(section.report.outcomes()) {
                    progress_line(out, done)?;
                }
                if !self.quiet {
                    for skipped in section.skipped {
                        warning(out, skipped)?;
                    }
                }
                Ok(())
            }
            Part::Failed(error) => error.render(out),
        }
    }
}

impl Report for DoctorOutput<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_check(out)?;
        if !self.quiet {
            writeln!(out)?;
        }
        self.write_scan(out)?;
        if self.probe.is_some() && !self.quiet {
            writeln!(out)?;
        }
        self.write_probe(out)?;
        if self.quiet {
            return Ok(());
        }
        writeln!(out)?;
        let problems = self.problems();
        if problems == 0 {
            return writeln!(out, "Everything is fine here.");
        }
        // One line, never wrapped: a wrap would split a command to copy.
        writeln!(
            out,
            "{}: {}",
            count(problems, "problem"),
            self.next.join("; ")
        )
    }

    fn failed(&self) -> bool {
        !self.ok
    }
}

fn failed(outcomes: &[Done]) -> impl Iterator<Item = &Done> {
    outcomes.iter().filter(|done| done.outcome.result.is_err())
}

fn count(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Probes every server in effect as `mcpenv probe` does by default:
/// project servers not approved are skipped.
fn probe(ctx: &Ctx, args: &DoctorArgs) -> Result<Probed, CliError> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let request = ProbeRequest {
        names: Vec::new(),
        trust_project: false,
        send_blanked: false,
    };
    let Selection { targets, skipped } = select(ctx, &request, &inventory, &sources)?;
    let settings = ProbeSettings {
        timeout: Duration::from_secs_f64(args.timeout),
        jobs: None,
        audit: None,
    };
    let order: Vec<String> = targets.iter().map(|target| target.name.clone()).collect();
    let (mut outcomes, elapsed) =
        probe_targets(ctx, targets, &inventory, &sources, &settings, |_| {})?;
    outcomes.sort_by_key(|done| order.iter().position(|name| name == &done.outcome.name));
    Ok(Probed {
        outcomes,
        elapsed,
        skipped: skipped.iter().map(skipped_message).collect(),
    })
}

/// Runs `mcpenv doctor`; returns whether anything was wrong.
pub fn run(ctx: &Ctx, args: &DoctorArgs) -> Result<io::Result<bool>, CliError> {
    let diagnosis = diagnose(&ctx.ops, args.strict);
    let check = Part::from(
        diagnosis
            .check
            .map(|(found, read)| check::output(ctx, found, &read, args.strict)),
    );
    let scan = Part::from(diagnosis.scan.map(|report| scan::output(ctx, report)));
    let scan_warnings = match &scan {
        Part::Ran(found) => found
            .report
            .warnings
            .iter()
            .map(|note| format!("`{}`: {}", shown_path(ctx, &note.file), note.message))
            .collect(),
        Part::Failed(_) => Vec::new(),
    };
    let (probed, probe_error) = match args.probe.then(|| probe(ctx, args)) {
        None => (None, None),
        Some(Ok(probed)) => (Some(probed), None),
        Some(Err(error)) => (None, Some(error)),
    };
    let probe = match (&probed, probe_error) {
        (Some(probed), _) => Some(Part::Ran(ProbeSection {
            report: ProbeReport::unaudited(&probed.outcomes, probed.elapsed),
            skipped: &probed.skipped,
        })),
        (None, Some(error)) => Some(Part::Failed(error)),
        (None, None) => None,
    };
    let mut output = DoctorOutput {
        ok: false,
        check,
        scan,
        probe,
        scan_warnings,
        quiet: ctx.quiet,
        next: Vec::new(),
    };
    output.ok = output.problems() == 0;
    if output.environment_problems() > 0 {
        // A file that does not parse is fixed by hand; what is missing,
        // by onboard: the findings above say which.
        output.next.push(format!(
            "fix what Environment lists (`{}` sets missing values)",
            ctx.command(&["onboard"])
        ));
    }
    if output.secret_problems() > 0 {
        let command = match &output.scan {
            Part::Ran(found) => extract_command(ctx, &found.report.findings),
            Part::Failed(_) => None,
        };
        output.next.push(match command {
            Some(command) => format!("move the secrets with `{command}`"),
            None => format!("see the secrets with `{}`", ctx.command(&["scan"])),
        });
    }
    if let Some(Part::Ran(section)) = &output.probe {
        let names: Vec<&str> = failed(section.report.outcomes())
            .map(|done| done.outcome.name.as_str())
            .collect();
        if !names.is_empty() {
            let command = ctx.command(&[&["probe"], names.as_slice()].concat());
            output.next.push(format!("see why with `{command}`"));
        }
    } else if output.server_problems() > 0 {
        output
            .next
            .push(format!("see why with `{}`", ctx.command(&["probe"])));
    }
    Ok(render::emit(ctx, &output, args.json, ctx.quiet))
}
