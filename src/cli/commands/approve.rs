//! `mcpenv approve`: records Claude Code's approval of project (`.mcp.json`)
//! servers where its own dialog does, in `.claude/settings.local.json`
//! (`enabledMcpjsonServers`). `reject` shares its rendering; the work is
//! [`crate::ops::project_choices`].

use std::io::{self, Write};

use crate::cli::args::ApproveArgs;
use crate::cli::error::CliError;
use crate::cli::render::{Report, quoted_names, warning};
use crate::cli::resolve::Ctx;
use crate::config::approval::Approval;
use crate::config::claude_settings::Choice;
use crate::ops::project_choices::{ChoiceRequest, apply_choice, plan_choice, trust_folder};

pub use crate::ops::project_choices::ChoiceReport;

impl Report for ChoiceReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        let verb = match self.state {
            Approval::Approved => "Approved",
            Approval::Rejected => "Rejected",
            Approval::Pending => "Reset",
        };
        for name in &self.already {
            writeln!(
                err,
                "`{name}` is already {} in Claude Code",
                self.state.as_str()
            )?;
        }
        if !self.recorded.is_empty() {
            writeln!(
                err,
                "{verb} {} in `{}`",
                quoted_names(&self.recorded),
                self.file.display()
            )?;
        }
        for blocked in &self.blocked {
            warning(
                err,
                &format!(
                    "`{}` is not approved: Claude Code would not start it, {}",
                    blocked.name,
                    blocked.blocked.message()
                ),
            )?;
        }
        if self.trusted_now {
            writeln!(err, "Recorded that you trust this folder in Claude Code")?;
        }
        for file in &self.written {
            writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
        }
        for overruled in &self.overruled {
            warning(
                err,
                &format!(
                    "`{}` is still {}: another Claude Code settings file decides it",
                    overruled.name,
                    overruled.state.as_str()
                ),
            )?;
        }
        if self.not_excluded {
            warning(
                err,
                &format!(
                    "no git directory found: nothing keeps `{}` out of git",
                    self.file.display()
                ),
            )?;
        }
        if let Some(command) = self.trust_command.as_ref().filter(|_| !self.trusted) {
            writeln!(
                err,
                "Claude Code 2.1.332 reads these approvals once you trust this folder: start `claude` here and accept its trust dialog, or run `{command}`"
            )?;
        }
        Ok(())
    }

    fn failed(&self) -> bool {
        self.blocked.iter().any(|blocked| blocked.named)
    }
}

/// Runs `mcpenv approve`.
pub fn run(ctx: &Ctx, args: &ApproveArgs) -> Result<ChoiceReport, CliError> {
    // No `--future`: that is one click in Claude Code's own dialog for
    // whoever wants it.
    let request = ChoiceRequest {
        choice: Choice::Approve,
        names: args.names.clone(),
        all: args.all,
    };
    let report = apply_choice(ctx, plan_choice(ctx, &request)?)?;
    if !report.trusted && (args.trust || ask_to_trust(ctx, args)?) {
        return trust_folder(ctx, report);
    }
    Ok(report)
}

/// In a terminal, asks whether to record the folder's trust, without
/// which Claude Code 2.1.332 ignores the approvals just written. The
/// user's own answer, never implied: no terminal (or `--json`) is no.
fn ask_to_trust(ctx: &Ctx, args: &ApproveArgs) -> Result<bool, CliError> {
    use std::io::IsTerminal;
    if args.json || !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Ok(false);
    }
    let folder = ctx
        .locations
        .display(std::path::Path::new(&ctx.locations.local_key));
    let _ = crate::cli::output::write(
        &ctx.shield,
        crate::cli::output::Stream::Stderr,
        false,
        |err| {
            writeln!(
                err,
                "Claude Code 2.1.332 ignores approvals in `.claude/settings.local.json` until you trust this folder (its trust dialog); trusting it also lets Claude Code apply the project's settings and run its hooks."
            )
        },
    );
    dialoguer::Confirm::new()
        .with_prompt(format!(
            "Trust `{}` in Claude Code now?",
            crate::cli::render::shown(&folder)
        ))
        .default(false)
        .interact()
        .map_err(|error| {
            CliError::failure_from(
                "cannot read the answer; the approvals were saved, the trust was not",
                error,
            )
        })
}
