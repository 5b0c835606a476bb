//! `mcpenv onboard`: ask for each variable the servers need and nobody has
//! set, then save every answer at once: in the project's `.env`, or in the
//! `env` map of `.claude/settings.local.json`, which Claude Code applies
//! itself in interactive sessions (not in `claude -p` or `claude mcp list`). Nothing is written before the last answer, so Ctrl-C leaves every
//! file as it was. Ends with the report `check` prints.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal};

use dialoguer::{Input, Password};

use crate::check::{self, CheckReport, EnvSources, State, Variable};
use crate::claude_settings::{self, Gate, SettingsError};
use crate::cli::args::{OnboardArgs, OnboardTarget};
use crate::cli::commands::check::{CheckOutput, report};
use crate::cli::commands::extract::env_error;
use crate::cli::commands::settings_ignored;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::{BOLD, shown};
use crate::cli::resolve::Ctx;
use crate::dotenv;
use crate::envfiles::{self, EnvFiles};

/// Where a value comes from.
enum Source {
    /// Asked for at the terminal.
    Ask,
    /// Copied, without asking, from where it is already set.
    Copy {
        /// The value.
        value: String,
        /// Where it was found, as shown: `the environment`, `` `.env` ``.
        from: &'static str,
    },
}

/// One variable to save and where its value comes from.
struct Step<'a> {
    variable: &'a Variable,
    source: Source,
}

/// Runs `mcpenv onboard`.
pub fn run(ctx: &Ctx, args: &OnboardArgs) -> Result<CheckOutput, CliError> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let found = check::check(
        &ctx.locations,
        &inventory,
        &sources,
        &crate::templates::all(&ctx.template_dirs()).0,
    );
    check_only(args, &found)?;
    if args.to == OnboardTarget::ClaudeSettings
        && let Some(gate) = claude_settings::gate(&ctx.locations)
    {
        return Err(gated(ctx, gate));
    }
    let saved_here = saved_values(ctx, args.to, &sources);
    let steps = plan(args, &found, &sources, &saved_here);
    let target = target_name(args.to);
    if steps.is_empty() {
        let only = names(&args.only);
        say(
            ctx,
            &match (args.from_env, args.only.is_empty()) {
                (true, _) => format!(
                    "Nothing to copy: the environment holds no value {target} lacks for the servers"
                ),
                (false, true) => {
                    "Nothing is missing: every variable the servers use has a value or a default"
                        .to_string()
                }
                (false, false) => format!("Nothing is missing among {only}"),
            },
        );
        return report(ctx, false);
    }
    let files = EnvFiles::at(&ctx.locations.project_root());
    if args.to == OnboardTarget::Dotenv {
        // Refuse before asking, not after the last answer.
        envfiles::check_private(&files.env, args.force).map_err(env_error)?;
    }
    let asked: Vec<&str> = steps
        .iter()
        .filter(|step| matches!(step.source, Source::Ask))
        .map(|step| step.variable.name.as_str())
        .collect();
    if !asked.is_empty() {
        refuse_without_terminal(ctx, args, &asked)?;
        say(
            ctx,
            &format!(
                "{} to set; the answers are saved to {target} after the last one.\nAn empty answer skips a variable; Ctrl-C quits and saves nothing.",
                plural(asked.len(), "variable")
            ),
        );
    }
    let mut values: Vec<(String, String)> = Vec::new();
    let mut skipped: Vec<&str> = Vec::new();
    for step in &steps {
        let name = &step.variable.name;
        match &step.source {
            Source::Copy { value, from } => {
                say(ctx, &format!("Copying `{name}` from {from}"));
                values.push((name.clone(), value.clone()));
            }
            Source::Ask => match ask(ctx, step.variable, args.to)? {
                Some(value) => values.push((name.clone(), value)),
                None => skipped.push(name),
            },
        }
    }
    // Every answer is in: only now is anything written.
    if !skipped.is_empty() {
        say(ctx, &format!("Skipped {} (no answer)", names(&skipped)));
    }
    if values.is_empty() {
        say(
            ctx,
            &format!("Nothing to save; {target} was left as it was"),
        );
        return report(ctx, false);
    }
    let written = match args.to {
        OnboardTarget::Dotenv => {
            envfiles::save(&files, &ctx.locations.state_dir, &values, &[], args.force)
                .map_err(env_error)?
                .written
        }
        OnboardTarget::ClaudeSettings => {
            let saved = claude_settings::save_env(&ctx.locations, &values)
                .map_err(|error| settings_error(ctx, error))?;
            if saved.not_excluded {
                say(
                    ctx,
                    "No git directory found: nothing keeps `.claude/settings.local.json` out of git",
                );
            }
            saved.written
        }
    };
    let saved: Vec<&str> = values.iter().map(|(name, _)| name.as_str()).collect();
    say(
        ctx,
        &format!(
            "Saved {} to {target}: {}",
            plural(saved.len(), "variable"),
            names(&saved)
        ),
    );
    for file in &written {
        say(ctx, &format!("Wrote `{}`", file.display()));
    }
    // For `.env`, the report's warnings already say how Claude Code sees it.
    if args.to == OnboardTarget::ClaudeSettings {
        say(
            ctx,
            "Claude Code 2.1.332 applies them in interactive sessions: plain `claude` sees them",
        );
        say(
            ctx,
            &format!(
                "`claude -p` and `claude mcp list` do not: they leave those `${{VAR}}` placeholders unexpanded; for them save the values to `.env` too (`{}`) and start them with `{} -p …`",
                ctx.command(&["onboard", "--to", "dotenv"]),
                ctx.command(&["run", "--", "claude"])
            ),
        );
    }
    report(ctx, false)
}

/// `--only` names must be variables the servers use: a typo would
/// otherwise pass silently.
fn check_only(args: &OnboardArgs, found: &CheckReport) -> Result<(), CliError> {
    let unknown: Vec<&String> = args
        .only
        .iter()
        .filter(|name| {
            !found
                .variables
                .iter()
                .any(|variable| &variable.name == *name)
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = found
        .variables
        .iter()
        .map(|variable| variable.name.as_str())
        .collect();
    let hint = if known.is_empty() {
        "no MCP server in effect here uses a `${VAR}` placeholder".to_string()
    } else {
        format!("the servers here use: {}", names(&known))
    };
    Err(CliError::usage(format!(
        "no MCP server in effect here uses {}",
        names(&unknown)
    ))
    .with_hint(hint))
}

/// The values the target already holds, so `--from-env` copies only what
/// would change.
fn saved_values(ctx: &Ctx, to: OnboardTarget, sources: &EnvSources) -> BTreeMap<String, String> {
    match to {
        OnboardTarget::Dotenv => sources.dotenv.entries.iter().cloned().collect(),
        OnboardTarget::ClaudeSettings => claude_settings::read_env(&ctx.locations.local_settings())
            .into_iter()
            .collect(),
    }
}

/// What to do for each variable, in order of first use.
fn plan<'a>(
    args: &OnboardArgs,
    found: &'a CheckReport,
    sources: &EnvSources,
    saved_here: &BTreeMap<String, String>,
) -> Vec<Step<'a>> {
    let in_files = sources.file_values();
    found
        .variables
        .iter()
        .filter(|variable| args.only.is_empty() || args.only.contains(&variable.name))
        .filter_map(|variable| {
            let name = &variable.name;
            if args.from_env
                && let Some(value) = sources.process.get(name)
            {
                return (saved_here.get(name) != Some(value)).then(|| Step {
                    variable,
                    source: Source::Copy {
                        value: value.clone(),
                        from: "the environment",
                    },
                });
            }
            // Set in `.env` only: Claude Code started without `mcpenv run`
            // does not see it, so its settings need the value too.
            if args.to == OnboardTarget::ClaudeSettings
                && !variable.seen_by_claude
                && let Some(value) = in_files.get(name)
            {
                return Some(Step {
                    variable,
                    source: Source::Copy {
                        value: value.clone(),
                        from: "`.env`",
                    },
                });
            }
            let wanted = match variable.state {
                State::Missing => true,
                // A default applies already; asked only when named.
                State::Defaulted => args.only.contains(name),
                State::Set | State::Empty => false,
            };
            (wanted && !args.from_env).then_some(Step {
                variable,
                source: Source::Ask,
            })
        })
        .collect()
}

/// Prompts need a terminal on stdin and stderr; `--json` never prompts.
fn refuse_without_terminal(ctx: &Ctx, args: &OnboardArgs, asked: &[&str]) -> Result<(), CliError> {
    let why = if args.json {
        ": `--json` never prompts"
    } else if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        " without a terminal"
    } else {
        return Ok(());
    };
    Err(
        CliError::failure(format!("cannot ask for {}{why}", names(asked)))
            .with_hint(format!(
                "see what is missing with `{}`",
                ctx.command(&["check", "--json"])
            ))
            .with_hint(format!(
                "or set the variables in the environment and copy them with `{}`, which never prompts",
                ctx.command(&["onboard", "--from-env"])
            )),
    )
}

/// Asks for one variable on the terminal: hidden input for a secret-like
/// name. `None` when the answer is empty and there is no default.
fn ask(ctx: &Ctx, variable: &Variable, to: OnboardTarget) -> Result<Option<String>, CliError> {
    let servers: Vec<&str> = variable.servers.iter().map(String::as_str).collect();
    let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
        writeln!(
            err,
            "\n{BOLD}`{}`{BOLD:#} is needed by {}",
            shown(&variable.name),
            names(&servers)
        )?;
        if let Some(description) = &variable.description {
            writeln!(err, "  {}", shown(description))?;
        }
        Ok(())
    });
    // The prompt goes to the terminal through dialoguer, so it is cleaned
    // here; a default that is itself a secret is not shown at all.
    let default_shown = variable
        .default
        .as_ref()
        .filter(|default| ctx.shield.clean(&shown(default)) == **default);
    // A value `.env` cannot hold is refused at the prompt, not after the
    // last answer.
    let storable = move |value: &String| -> Result<(), String> {
        match to {
            OnboardTarget::Dotenv => dotenv::quote(value)
                .map(|_| ())
                .map_err(|error| format!("this value cannot be saved in `.env`: {error}")),
            OnboardTarget::ClaudeSettings => Ok(()),
        }
    };
    let answer = if variable.secret {
        let prompt = match (&variable.default, default_shown) {
            (Some(_), Some(default)) => format!("{} (hidden; empty: `{default}`)", variable.name),
            (Some(_), None) => format!("{} (hidden; empty: its default)", variable.name),
            (None, _) => format!("{} (hidden)", variable.name),
        };
        Password::new()
            .with_prompt(prompt)
            .allow_empty_password(true)
            .validate_with(storable)
            .interact()
            .map(|value| match (&variable.default, value.is_empty()) {
                (Some(default), true) => default.clone(),
                _ => value,
            })
    } else {
        let mut input = Input::<String>::new()
            .with_prompt(&variable.name)
            .allow_empty(true)
            .validate_with(storable);
        if let Some(default) = &variable.default {
            input = input
                .default(default.clone())
                .show_default(default_shown.is_some());
        }
        input.interact_text()
    };
    match answer {
        Ok(value) if value.is_empty() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(dialoguer::Error::IO(error)) if error.kind() == io::ErrorKind::UnexpectedEof => Err(
            CliError::failure("the input ended before the last answer; nothing was written")
                .with_hint("run it again in a terminal"),
        ),
        // Ctrl-C read as a key while SIGINT is ignored (a background job
        // of a non-interactive shell): the terminal reader cannot end the
        // process itself.
        Err(dialoguer::Error::IO(error)) if error.kind() == io::ErrorKind::Interrupted => {
            Err(CliError::failure("interrupted; nothing was written"))
        }
        Err(dialoguer::Error::IO(error)) => Err(CliError::failure_from(
            "cannot read the answer; nothing was written",
            error,
        )
        .with_hint("run it again in a terminal")),
    }
}

/// The refusal when Claude Code would ignore its local settings here.
fn gated(ctx: &Ctx, gate: Gate) -> CliError {
    with_dotenv_hint(ctx, settings_ignored(ctx, gate))
}

fn with_dotenv_hint(ctx: &Ctx, error: CliError) -> CliError {
    error.with_hint(format!(
        "or save the values to `.env` with `{}`, then start Claude Code with `{}`",
        ctx.command(&["onboard", "--to", "dotenv"]),
        ctx.command(&["run", "--", "claude"])
    ))
}

/// The CLI error for a settings problem.
fn settings_error(ctx: &Ctx, error: SettingsError) -> CliError {
    match error {
        SettingsError::Config(error) => error.into(),
        ignored @ SettingsError::Ignored { .. } => with_dotenv_hint(
            ctx,
            CliError::new(crate::cli::error::Kind::Failure, Box::new(ignored)),
        ),
    }
}

/// How the target is named in status lines.
fn target_name(to: OnboardTarget) -> &'static str {
    match to {
        OnboardTarget::Dotenv => "`.env`",
        OnboardTarget::ClaudeSettings => "`.claude/settings.local.json`",
    }
}

/// A status line on stderr, unless `-q`.
fn say(ctx: &Ctx, line: &str) {
    if ctx.quiet {
        return;
    }
    let _ = output::write(&ctx.shield, Stream::Stderr, false, |err| {
        writeln!(err, "{line}")
    });
}

fn names<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|name| format!("`{}`", shown(name.as_ref())))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}
