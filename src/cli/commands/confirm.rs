//! `mcpenv confirm`: the person's answer to the changes an agent asked
//! `mcpenv serve` for (its token mode, for clients that cannot ask the
//! person themselves). Each change is shown as its diffs, secrets masked,
//! and asked about at the terminal; there is no `--yes` and no answer
//! without a terminal, so the agent cannot give the answer itself. The
//! work is [`crate::ops::confirm`].

use std::io::{self, IsTerminal, Write};

use crate::cli::args::ConfirmArgs;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::{Report, shown};
use crate::cli::resolve::Ctx;
use crate::ops::confirm::{self, Answered, ConfirmReport, Pending};

impl Report for ConfirmReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if self.answered.is_empty() {
            writeln!(err, "No change is waiting for your confirmation")?;
        }
        for answered in &self.answered {
            let said = match (answered.recorded, answered.confirmed) {
                (false, _) => {
                    "no longer waits (it lapsed, or was answered elsewhere): nothing recorded"
                }
                (true, true) => {
                    "confirmed: the agent's next call with this id writes it, once, if the files are still as shown"
                }
                (true, false) => "declined: nothing will be written",
            };
            writeln!(err, "Change `{}` {said}", answered.id)?;
        }
        Ok(())
    }
}

/// Runs `mcpenv confirm`.
pub fn run(ctx: &Ctx, args: &ConfirmArgs) -> Result<ConfirmReport, CliError> {
    // The one thing an agent must not be able to do: answer for the person.
    if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Err(CliError::failure(
            "`mcpenv confirm` asks you at a terminal, and this is not one: nothing was confirmed",
        )
        .with_hint("run `mcpenv confirm` yourself, in your own terminal: an agent cannot confirm a change for you"));
    }
    let mut waiting = confirm::waiting(ctx)?;
    if let Some(id) = &args.id {
        waiting.retain(|pending| pending.id == *id);
        if waiting.is_empty() {
            return Err(CliError::failure(format!(
                "no change `{}` is waiting for your confirmation",
                shown(id)
            ))
            .with_hint("run `mcpenv confirm` without an id to see every change waiting"));
        }
    }
    let mut answered = Vec::new();
    for pending in &waiting {
        show(ctx, pending)
            .map_err(|error| CliError::failure_from("cannot show the change", error))?;
        let yes = dialoguer::Confirm::new()
            .with_prompt("Write this change when the agent asks again?")
            .default(false)
            .interact()
            .map_err(|error| {
                CliError::failure_from("cannot read the answer; nothing was confirmed", error)
            })?;
        let recorded = confirm::answer(ctx, &pending.id, &pending.fingerprint, yes)?;
        answered.push(Answered {
            id: pending.id.clone(),
            confirmed: yes,
            recorded,
        });
    }
    Ok(ConfirmReport { answered })
}

/// One change as the person reads it before answering.
fn show(ctx: &Ctx, pending: &Pending) -> io::Result<()> {
    output::write(&ctx.shield, Stream::Stderr, false, |err| {
        writeln!(
            err,
            "Change `{}`, asked for by an agent through `mcpenv serve` (`{}` in `{}`), lapses in {} min:",
            pending.id,
            pending.tool,
            shown(&ctx.locations.display(&pending.project)),
            pending.minutes_left()
        )?;
        writeln!(err, "{}", shown_lines(&pending.summary))?;
        for change in &pending.changes {
            writeln!(err)?;
            write!(err, "{}", shown_lines(&change.diff))?;
            if !change.diff.ends_with('\n') {
                writeln!(err)?;
            }
        }
        writeln!(err)
    })
}

/// `text` escaped line by line: its line breaks kept, any other control
/// character shown visibly.
fn shown_lines(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match line.strip_suffix('\n') {
            Some(line) => format!("{}\n", shown(line)),
            None => shown(line).into_owned(),
        })
        .collect()
}
