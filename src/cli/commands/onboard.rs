//! `mcpenv onboard`: ask for each variable the servers need and nobody has
//! set (or set to the empty string, as `cp .env.example .env` leaves them),
//! then save every answer at once: each in the `.env` next to the
//! `.mcp.json` whose servers need it (a user server's in the user's store),
//! or in the `env` map of `.claude/settings.local.json`, which Claude Code
//! applies itself in interactive sessions (not in `claude -p` or `claude
//! mcp list`). An answer that will not work where its `${VAR}` sits (a
//! repeated `Bearer `, a character that breaks a URL, a value the
//! template's format rejects) is questioned before it is kept. Nothing is
//! written before the last answer, so Ctrl-C leaves every file as it was.
//! Ends with the report `check` prints.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal};
use std::path::Path;

use dialoguer::{Confirm, Input, Password};

use crate::check::{State, Variable};
use crate::cli::args::{OnboardArgs, OnboardTarget};
use crate::cli::commands::check::{CheckOutput, report};
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::{BOLD, shown};
use crate::cli::resolve::Ctx;
use crate::ops::onboard::{
    CopiedFrom, NotUsed, OnboardPlan, OnboardReport, OnboardRequest, OnboardStep, ReferenceFrom,
    SaveTo, StepValue, apply_onboard, check_destinations, next_fit_question, plan_onboard,
    resolve_accepted, secure_destinations, storable,
};

impl From<OnboardTarget> for SaveTo {
    fn from(target: OnboardTarget) -> Self {
        match target {
            OnboardTarget::Dotenv => Self::Dotenv,
            OnboardTarget::ClaudeSettings => Self::ClaudeSettings,
            OnboardTarget::Keychain => Self::Keychain,
        }
    }
}

/// Runs `mcpenv onboard`.
pub fn run(ctx: &Ctx, args: &OnboardArgs) -> Result<CheckOutput, CliError> {
    let request = OnboardRequest {
        to: args.to.into(),
        only: args.only.clone(),
        reset: args.reset.clone(),
        from_env: args.from_env,
        force: args.force,
        accept_references: args.accept_reference.clone(),
    };
    let plan = plan_onboard(ctx, &request)?;
    for name in &plan.shadowed {
        say(
            ctx,
            &format!(
                "`{}` is set but empty in the environment, which wins over every file: `unset {}` in your shell first",
                shown(name),
                shown(name)
            ),
        );
    }
    // Why a reference is not used: before anything is refused or asked.
    for unresolved in &plan.unresolved {
        let line = match unresolved.why {
            NotUsed::TeamReferenceFailed => format!(
                "`{}`: the team's reference in `.env.example` (`{}`) {}; asking instead",
                unresolved.name,
                shown(&unresolved.reference),
                unresolved.message
            ),
            NotUsed::NotCopied => format!("`{}` {}", unresolved.name, unresolved.message),
        };
        say(ctx, &format!("{line}\n  hint: {}", unresolved.hint));
    }
    let target = target_name(plan.to);
    if plan.steps.is_empty() {
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
    check_destinations(&plan)?;
    let answers = ask_all(ctx, args, &plan)?;
    // Every answer is in: only now is anything changed.
    for made in secure_destinations(ctx, &plan, &answers)? {
        say(
            ctx,
            &format!(
                "Made `{}` private (mode 600; it was {:o}) before saving secrets in it",
                shown_path(ctx, &made.file),
                made.mode
            ),
        );
    }
    let saved = apply_onboard(ctx, &plan, &answers)?;
    // Copied from `.env`, every value is there for `mcpenv run` already.
    let all_in_dotenv = plan.steps.iter().all(|step| {
        matches!(
            step.value,
            StepValue::Copy {
                from: CopiedFrom::DotEnv,
                ..
            }
        )
    });
    say_saved(ctx, &saved, all_in_dotenv);
    report(ctx, false)
}

/// Asks for every value the plan leaves open, saying which are copied.
fn ask_all(
    ctx: &Ctx,
    args: &OnboardArgs,
    plan: &OnboardPlan,
) -> Result<BTreeMap<String, String>, CliError> {
    let asked = plan.asked();
    if !asked.is_empty() {
        refuse_without_terminal(ctx, args, plan, &asked)?;
        say(
            ctx,
            &format!(
                "{} to set; the answers are saved after the last one.\nAn empty answer skips a variable (or keeps its value); Ctrl-C quits and saves nothing.",
                plural(asked.len(), "variable")
            ),
        );
    }
    let mut answers = BTreeMap::new();
    for step in &plan.steps {
        let name = &step.variable.name;
        match &step.value {
            StepValue::Copy { from, .. } => {
                let from = match from {
                    CopiedFrom::Environment => "the environment",
                    CopiedFrom::DotEnv => "`.env`",
                };
                say(ctx, &format!("Copying `{name}` from {from}"));
            }
            StepValue::Reference { reference, from } => {
                let line = match from {
                    ReferenceFrom::Example => format!(
                        "Using the team's reference for `{name}` from `.env.example` (`{}`): it resolves",
                        shown(reference)
                    ),
                    ReferenceFrom::Keychain => format!(
                        "Using the keychain's entry for `{name}` (`{}`), saved from another clone",
                        shown(reference)
                    ),
                };
                say(ctx, &line);
            }
            StepValue::Confirm { reference } => {
                if let Some(value) = confirm_reference(ctx, step, reference, plan.to)? {
                    answers.insert(name.clone(), value);
                }
            }
            StepValue::Ask => {
                if let Some(value) = ask(ctx, step, plan.to)? {
                    answers.insert(name.clone(), value);
                }
            }
        }
    }
    Ok(answers)
}

/// The status lines for what was saved.
fn say_saved(ctx: &Ctx, saved: &OnboardReport, all_in_dotenv: bool) {
    if !saved.skipped.is_empty() {
        say(
            ctx,
            &format!("Skipped {} (no answer)", names(&saved.skipped)),
        );
    }
    if saved.saved.is_empty() {
        say(ctx, "Nothing to save; every file was left as it was");
        return;
    }
    for file in &saved.saved {
        if saved.to == SaveTo::ClaudeSettings && saved.not_excluded {
            say(
                ctx,
                "No git directory found: nothing keeps `.claude/settings.local.json` out of git",
            );
        }
        let shown_file = shown_path(ctx, &file.file);
        let (linked, values): (Vec<String>, Vec<String>) = file
            .names
            .iter()
            .cloned()
            .partition(|name| file.references.contains(name));
        if !values.is_empty() {
            let to = if saved.to == SaveTo::Keychain {
                format!("the keychain, named in `{shown_file}`")
            } else {
                format!("`{shown_file}`")
            };
            say(
                ctx,
                &format!(
                    "Saved {} to {to}: {}",
                    plural(values.len(), "variable"),
                    names(&values)
                ),
            );
        }
        if !linked.is_empty() {
            say(
                ctx,
                &format!(
                    "Saved {} to `{shown_file}` as references: {}",
                    plural(linked.len(), "variable"),
                    names(&linked)
                ),
            );
        }
    }
    for file in &saved.written {
        let note = crate::ops::shown_paths::link_note(file, |target| shown_path(ctx, target));
        say(ctx, &format!("Wrote `{}`{note}", shown_path(ctx, file)));
    }
    // For `.env`, the report's warnings already say how Claude Code sees it.
    if saved.to == SaveTo::ClaudeSettings {
        say(
            ctx,
            "Claude Code 2.1.332 applies them in interactive sessions: plain `claude` sees them",
        );
        let run = ctx.command(&["run", "--", "claude"]);
        say(
            ctx,
            &if all_in_dotenv {
                format!(
                    "`claude -p` and `claude mcp list` do not: they leave those `${{VAR}}` placeholders unexpanded; start them with `{run} -p …`, which hands on the values `.env` holds"
                )
            } else {
                format!(
                    "`claude -p` and `claude mcp list` do not: they leave those `${{VAR}}` placeholders unexpanded; for them save the values to `.env` too (`{}`) and start them with `{run} -p …`",
                    ctx.command(&["onboard", "--to", "dotenv"]),
                )
            },
        );
    }
}

/// Prompts need a terminal on stdin and stderr; `--json` never prompts.
fn refuse_without_terminal(
    ctx: &Ctx,
    args: &OnboardArgs,
    plan: &OnboardPlan,
    asked: &[&str],
) -> Result<(), CliError> {
    let why = if args.json {
        ": `--json` never prompts"
    } else if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        " without a terminal"
    } else {
        return Ok(());
    };
    let mut error = CliError::failure(format!("cannot ask for {}{why}", names(asked)));
    let offered: Vec<(&str, &str)> = plan
        .steps
        .iter()
        .filter_map(|step| match &step.value {
            StepValue::Confirm { reference } => {
                Some((step.variable.name.as_str(), reference.as_str()))
            }
            _ => None,
        })
        .collect();
    if !offered.is_empty() {
        let listed: Vec<String> = offered
            .iter()
            .map(|(name, reference)| format!("`{}` at `{}`", shown(name), shown(reference)))
            .collect();
        let mut accept = vec!["onboard"];
        for (name, _) in &offered {
            accept.extend(["--accept-reference", *name]);
        }
        error = error.with_hint(format!(
            "the repository's `.env.example` points {}; mcpenv reads no reference a repository chose before you agree: if {} yours to use, run `{}`",
            listed.join(", "),
            if offered.len() == 1 { "it is" } else { "they are" },
            ctx.command(&accept)
        ));
    }
    Err(error
        .with_hint(format!(
            "see what is missing with `{}`",
            ctx.command(&["check", "--json"])
        ))
        .with_hint(format!(
            "or set the variables in the environment and copy them with `{}`, which never prompts",
            ctx.command(&["onboard", "--from-env"])
        )))
}

/// Shows the reference the repository's `.env.example` gives a variable
/// and asks whether to use it: the reference itself when the person
/// agrees and it resolves, else the value asked for instead.
fn confirm_reference(
    ctx: &Ctx,
    step: &OnboardStep,
    reference: &str,
    to: SaveTo,
) -> Result<Option<String>, CliError> {
    let name = &step.variable.name;
    say(
        ctx,
        &format!(
            "\nThe repository's `.env.example` says `{}` is kept at `{}`; mcpenv reads it from there only if you agree",
            shown(name),
            shown(reference)
        ),
    );
    if confirm(
        ctx,
        &format!("Use `{}` for `{}`?", shown(reference), shown(name)),
        false,
    )? {
        match resolve_accepted(ctx, reference) {
            Ok(()) => return Ok(Some(reference.to_string())),
            Err(error) => say(
                ctx,
                &format!(
                    "`{}`: `{}` {}; asking instead\n  hint: {}",
                    shown(name),
                    shown(reference),
                    error.message,
                    error.hint
                ),
            ),
        }
    }
    ask(ctx, step, to)
}

/// Asks for one variable on the terminal: hidden input for a secret-like
/// name. `None` when the answer is empty and there is no default (an
/// existing value is then kept).
fn ask(ctx: &Ctx, step: &OnboardStep, to: SaveTo) -> Result<Option<String>, CliError> {
    let variable = &step.variable;
    let servers: Vec<&str> = variable.servers.iter().map(String::as_str).collect();
    let now = match variable.state {
        State::Set => Some(format!(
            "It has a value (in `{}`); an empty answer keeps it.",
            shown_source(ctx, variable)
        )),
        State::Empty => Some(format!(
            "It is set but empty (in `{}`), so the server gets no value.",
            shown_source(ctx, variable)
        )),
        State::Missing | State::Defaulted => None,
    };
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
        if let Some(now) = &now {
            writeln!(err, "  {}", shown(now))?;
        }
        Ok(())
    });
    loop {
        let Some(answer) = read_answer(ctx, variable, to)? else {
            return Ok(None);
        };
        if let Some(fitted) = fit(ctx, variable, answer)? {
            return Ok(Some(fitted));
        }
    }
}

/// Reads one answer; `None` when it is empty and there is no default.
fn read_answer(ctx: &Ctx, variable: &Variable, to: SaveTo) -> Result<Option<String>, CliError> {
    // The prompt goes to the terminal through dialoguer, so it is cleaned
    // here; a default that is itself a secret is not shown at all.
    let default_shown = variable
        .default
        .as_ref()
        .filter(|default| ctx.shield.clean(&shown(default)) == **default);
    // A value `.env` cannot hold is refused at the prompt, not after the
    // last answer.
    let can_store = move |value: &String| storable(to, value);
    let answer = if variable.secret {
        let prompt = match (&variable.default, default_shown) {
            (Some(_), Some(default)) => format!("{} (hidden; empty: `{default}`)", variable.name),
            (Some(_), None) => format!("{} (hidden; empty: its default)", variable.name),
            (None, _) => format!("{} (hidden)", variable.name),
        };
        Password::new()
            .with_prompt(prompt)
            .allow_empty_password(true)
            .validate_with(can_store)
            .interact()
            .map(|value| match (&variable.default, value.is_empty()) {
                (Some(default), true) => default.clone(),
                _ => value,
            })
    } else {
        let mut input = Input::<String>::new()
            .with_prompt(&variable.name)
            .allow_empty(true)
            .validate_with(can_store);
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
        Err(error) => Err(answer_error(error)),
    }
}

/// Asks the plan's questions about an answer that will not work where its
/// placeholders sit: `Some` with the value to keep (fixed as agreed),
/// `None` to ask again. The value itself is never shown.
fn fit(ctx: &Ctx, variable: &Variable, mut answer: String) -> Result<Option<String>, CliError> {
    let mut asked = None;
    while let Some(question) = next_fit_question(variable, &answer, asked) {
        let yes = confirm(ctx, &question.question, question.default)?;
        match question.resolve(answer, yes) {
            Some(kept) => answer = kept,
            None => return Ok(None),
        }
        asked = Some(question.kind);
    }
    Ok(Some(answer))
}

/// A yes/no question on the terminal.
fn confirm(ctx: &Ctx, question: &str, default: bool) -> Result<bool, CliError> {
    Confirm::new()
        .with_prompt(ctx.shield.clean(question))
        .default(default)
        .interact()
        .map_err(answer_error)
}

/// The CLI error for a prompt that could not be answered.
fn answer_error(error: dialoguer::Error) -> CliError {
    match error {
        dialoguer::Error::IO(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
            CliError::failure("the input ended before the last answer; nothing was written")
                .with_hint("run it again in a terminal")
        }
        // Ctrl-C read as a key while SIGINT is ignored (a background job
        // of a non-interactive shell): the terminal reader cannot end the
        // process itself.
        dialoguer::Error::IO(error) if error.kind() == io::ErrorKind::Interrupted => {
            CliError::failure("interrupted; nothing was written")
        }
        dialoguer::Error::IO(error) => {
            CliError::failure_from("cannot read the answer; nothing was written", error)
                .with_hint("run it again in a terminal")
        }
    }
}

/// Where a variable's value is, as shown.
fn shown_source(ctx: &Ctx, variable: &Variable) -> String {
    match variable.source.as_deref() {
        None => "nowhere".to_string(),
        Some("environment") => "the environment".to_string(),
        Some(path) => shown_path(ctx, Path::new(path)),
    }
}

/// How the target is named in status lines.
fn target_name(to: SaveTo) -> &'static str {
    match to {
        SaveTo::Dotenv => "`.env`",
        SaveTo::ClaudeSettings => "`.claude/settings.local.json`",
        SaveTo::Keychain => "the keychain",
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
    crate::cli::render::quoted_names(names)
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}
