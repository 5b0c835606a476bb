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
use std::path::{Path, PathBuf};

use dialoguer::{Confirm, Input, Password};

use crate::check::{self, CheckReport, EnvSources, State, Variable};
use crate::claude_settings::{self, Gate, SettingsError};
use crate::cli::args::{OnboardArgs, OnboardTarget};
use crate::cli::commands::check::{CheckOutput, report};
use crate::cli::commands::shown_path;
use crate::cli::error::CliError;
use crate::cli::output::{self, Stream};
use crate::cli::render::{BOLD, shown};
use crate::cli::resolve::Ctx;
use crate::dotenv;
use crate::envfiles::{self, EnvFiles};
use crate::ops::extraction::env_error;
use crate::ops::writes::settings_ignored;
use crate::scope::Scope;
use crate::store::Progress;
use crate::value_fit::{self, Misfit};

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

/// One variable to save, where its value comes from and the file it goes to.
struct Step<'a> {
    variable: &'a Variable,
    source: Source,
    /// The dotenv file (for `--to dotenv`) or the settings file.
    file: PathBuf,
}

/// Runs `mcpenv onboard`.
pub fn run(ctx: &Ctx, args: &OnboardArgs) -> Result<CheckOutput, CliError> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let found = check::check(
        &ctx.locations,
        &inventory,
        &sources,
        &crate::templates::all(&ctx.template_dirs).0,
    );
    check_names(&args.only, "--only", &found)?;
    check_names(&args.reset, "--reset", &found)?;
    if args.to == OnboardTarget::ClaudeSettings
        && let Some(gate) = claude_settings::gate(&ctx.locations)
    {
        return Err(gated(ctx, gate));
    }
    let saved_here = saved_values(ctx, args.to, &sources);
    let (steps, shadowed) = plan(ctx, args, &found, &sources, &saved_here);
    for variable in &shadowed {
        say(
            ctx,
            &format!(
                "`{}` is set but empty in the environment, which wins over every file: `unset {}` in your shell first",
                shown(&variable.name),
                shown(&variable.name)
            ),
        );
    }
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
    if args.to == OnboardTarget::Dotenv {
        // Before asking, not after the last answer: a `.env` copied from
        // `.env.example` is as readable as the umask made it.
        let mut files: Vec<&Path> = steps.iter().map(|step| step.file.as_path()).collect();
        files.dedup();
        for file in files {
            if let Some(mode) = envfiles::make_private(file, args.force).map_err(env_error)? {
                say(
                    ctx,
                    &format!(
                        "Made `{}` private (mode 600; it was {mode:o}) before saving secrets in it",
                        shown_path(ctx, file)
                    ),
                );
            }
            envfiles::check_private(file, args.force).map_err(env_error)?;
        }
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
                "{} to set; the answers are saved after the last one.\nAn empty answer skips a variable (or keeps its value); Ctrl-C quits and saves nothing.",
                plural(asked.len(), "variable")
            ),
        );
    }
    let mut values: Vec<(&Path, String, String)> = Vec::new();
    let mut skipped: Vec<&str> = Vec::new();
    for step in &steps {
        let name = &step.variable.name;
        match &step.source {
            Source::Copy { value, from } => {
                say(ctx, &format!("Copying `{name}` from {from}"));
                values.push((&step.file, name.clone(), value.clone()));
            }
            Source::Ask => match ask(ctx, step, args.to)? {
                Some(value) => values.push((&step.file, name.clone(), value)),
                None => skipped.push(name),
            },
        }
    }
    // Every answer is in: only now is anything written.
    if !skipped.is_empty() {
        say(ctx, &format!("Skipped {} (no answer)", names(&skipped)));
    }
    if values.is_empty() {
        say(ctx, "Nothing to save; every file was left as it was");
        return report(ctx, false);
    }
    let mut by_file: Vec<(&Path, Vec<(String, String)>)> = Vec::new();
    for (file, name, value) in values {
        match by_file.iter_mut().find(|(known, _)| *known == file) {
            Some((_, list)) => list.push((name, value)),
            None => by_file.push((file, vec![(name, value)])),
        }
    }
    let mut progress = Progress::default();
    for (file, _) in &by_file {
        progress.plan(*file);
    }
    for (file, values) in &by_file {
        save(ctx, args, file, values, &mut progress)?;
        let saved: Vec<&str> = values.iter().map(|(name, _)| name.as_str()).collect();
        say(
            ctx,
            &format!(
                "Saved {} to `{}`: {}",
                plural(saved.len(), "variable"),
                shown_path(ctx, file),
                names(&saved)
            ),
        );
    }
    for file in progress.written() {
        say(ctx, &format!("Wrote `{}`", shown_path(ctx, file)));
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

/// Saves `values` into `file`: a project `.env` with its `.gitignore`
/// rule first, any other dotenv file (the user's store, `.env.local`) as
/// it is, or Claude Code's local settings.
fn save(
    ctx: &Ctx,
    args: &OnboardArgs,
    file: &Path,
    values: &[(String, String)],
    progress: &mut Progress,
) -> Result<(), CliError> {
    let state_dir = &ctx.locations.state_dir;
    let result = match args.to {
        OnboardTarget::ClaudeSettings => {
            let saved = claude_settings::save_env(&ctx.locations, values)
                .map_err(|error| settings_error(ctx, error))?;
            if saved.not_excluded {
                say(
                    ctx,
                    "No git directory found: nothing keeps `.claude/settings.local.json` out of git",
                );
            }
            for written in &saved.written {
                progress.record(written, true);
            }
            progress.record(file, false);
            return Ok(());
        }
        OnboardTarget::Dotenv if file == ctx.user_env_file() => {
            envfiles::save_user_with(file, state_dir, values, args.force, progress)
        }
        OnboardTarget::Dotenv if file.file_name().is_some_and(|name| name == ".env") => {
            let dir = file.parent().unwrap_or(Path::new("."));
            envfiles::save_with(
                &EnvFiles::at(dir),
                state_dir,
                values,
                &[],
                args.force,
                progress,
            )
        }
        OnboardTarget::Dotenv => {
            envfiles::save_values_with(file, state_dir, values, args.force, progress)
        }
    };
    result.map_err(|error| env_error(error).interrupted(progress))
}

/// `--only` and `--reset` names must be variables the servers use: a typo
/// would otherwise pass silently.
fn check_names(asked: &[String], flag: &str, found: &CheckReport) -> Result<(), CliError> {
    let unknown: Vec<&String> = asked
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
    let mut error = CliError::usage(format!(
        "`{flag}`: no MCP server in effect here uses {}",
        names(&unknown)
    ));
    if let Some(close) = unknown
        .iter()
        .find_map(|name| crate::ops::names::closest(&known, name))
    {
        error = error.with_hint(format!("did you mean `{close}`?"));
    }
    Err(error.with_hint(if known.is_empty() {
        "no MCP server in effect here uses a `${VAR}` placeholder".to_string()
    } else {
        format!("the servers here use: {}", names(&known))
    }))
}

/// The values the target already holds, so `--from-env` copies only what
/// would change.
fn saved_values(ctx: &Ctx, to: OnboardTarget, sources: &EnvSources) -> BTreeMap<String, String> {
    match to {
        OnboardTarget::Dotenv => sources.file_values(),
        OnboardTarget::ClaudeSettings => claude_settings::read_env(&ctx.locations.local_settings())
            .into_iter()
            .collect(),
    }
}

/// What to do for each variable, in order of first use, and the variables
/// that need a value but are set empty in the environment, which no file
/// can override.
fn plan<'a>(
    ctx: &Ctx,
    args: &OnboardArgs,
    found: &'a CheckReport,
    sources: &EnvSources,
    saved_here: &BTreeMap<String, String>,
) -> (Vec<Step<'a>>, Vec<&'a Variable>) {
    let in_files = sources.file_values();
    let mut shadowed = Vec::new();
    let mut steps = Vec::new();
    for variable in &found.variables {
        let name = &variable.name;
        if !args.only.is_empty() && !args.only.contains(name) {
            continue;
        }
        let file = destination(ctx, args.to, found, sources, variable);
        if args.from_env
            && let Some(value) = sources.process.get(name)
        {
            if saved_here.get(name) != Some(value) && !value.is_empty() {
                let source = Source::Copy {
                    value: value.clone(),
                    from: "the environment",
                };
                steps.push(Step {
                    variable,
                    source,
                    file,
                });
            }
            continue;
        }
        // Set in `.env` only: Claude Code started without `mcpenv run`
        // does not see it, so its settings need the value too.
        if args.to == OnboardTarget::ClaudeSettings
            && !variable.seen_by_claude
            && let Some(value) = in_files.get(name).filter(|value| !value.is_empty())
        {
            let source = Source::Copy {
                value: value.clone(),
                from: "`.env`",
            };
            steps.push(Step {
                variable,
                source,
                file,
            });
            continue;
        }
        // Named on the command line: asked even when it has a value.
        let named = args.only.contains(name) || args.reset.contains(name);
        let wanted = named || variable.needs_value();
        if !wanted || args.from_env {
            continue;
        }
        if variable.state == State::Empty && variable.source.as_deref() == Some("environment") {
            shadowed.push(variable);
            continue;
        }
        steps.push(Step {
            variable,
            source: Source::Ask,
            file,
        });
    }
    (steps, shadowed)
}

/// The file a value for `variable` goes to. A dotenv file that holds the
/// name already (empty, or a value being re-entered) gets it, since it
/// would still win; otherwise the `.env` next to the outermost `.mcp.json`
/// whose servers need it (seen from every package below), the project's
/// `.env` for a local server, and the user's store for a variable only
/// user servers use.
fn destination(
    ctx: &Ctx,
    to: OnboardTarget,
    found: &CheckReport,
    sources: &EnvSources,
    variable: &Variable,
) -> PathBuf {
    if to == OnboardTarget::ClaudeSettings {
        return ctx.locations.local_settings();
    }
    if let Some(source) = variable.source.as_deref().map(Path::new)
        && sources
            .dotenv_files()
            .iter()
            .any(|file| file.path == source)
    {
        return source.to_path_buf();
    }
    let needing: Vec<&check::ServerCheck> = found
        .servers
        .iter()
        .filter(|server| variable.servers.contains(&server.name))
        .collect();
    let project_dir = needing
        .iter()
        .filter(|server| server.scope == Scope::Project)
        .filter_map(|server| server.file.parent())
        .filter(|dir| sources.projects.iter().any(|project| project.dir == *dir))
        .min_by_key(|dir| dir.components().count());
    if let Some(dir) = project_dir {
        return dir.join(".env");
    }
    if !needing.is_empty() && needing.iter().all(|server| server.scope == Scope::User) {
        return ctx.user_env_file();
    }
    sources.project().dir.join(".env")
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
/// name. `None` when the answer is empty and there is no default (an
/// existing value is then kept).
fn ask(ctx: &Ctx, step: &Step<'_>, to: OnboardTarget) -> Result<Option<String>, CliError> {
    let variable = step.variable;
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
fn read_answer(
    ctx: &Ctx,
    variable: &Variable,
    to: OnboardTarget,
) -> Result<Option<String>, CliError> {
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
        Err(error) => Err(answer_error(error)),
    }
}

/// Questions an answer that will not work where its placeholders sit:
/// `Some` with the value to keep (fixed as agreed), `None` to ask again.
/// The value itself is never shown.
fn fit(ctx: &Ctx, variable: &Variable, mut answer: String) -> Result<Option<String>, CliError> {
    // One question per kind, each on the answer as it is by then: dropping
    // a repeated `Bearer ` changes what a URL would get.
    let repeated = value_fit::misfits(&answer, &variable.placements)
        .into_iter()
        .find_map(|misfit| match misfit {
            Misfit::RepeatsPrefix { field, prefix } => Some((field, prefix)),
            Misfit::BreaksUrl { .. } => None,
        });
    if let Some((field, prefix)) = repeated {
        let question = format!(
            "The value starts with `{}`, which `{}` already writes before it. Drop it from the value?",
            prefix.trim_end(),
            shown(&field)
        );
        if confirm(ctx, &question, true)? {
            answer = value_fit::without_prefix(&answer, &prefix);
        }
    }
    let breaking = value_fit::misfits(&answer, &variable.placements)
        .into_iter()
        .find_map(|misfit| match misfit {
            Misfit::BreaksUrl {
                field,
                part,
                characters,
            } => Some((field, part, characters)),
            Misfit::RepeatsPrefix { .. } => None,
        });
    if let Some((field, part, characters)) = breaking {
        let listed: Vec<String> = characters.iter().map(|c| format!("`{c}`")).collect();
        let question = format!(
            "The value holds {}, which break{} {} in `{}`. Percent-encode it?",
            listed.join(", "),
            if characters.len() == 1 { "s" } else { "" },
            part.describe(),
            shown(&field)
        );
        if confirm(ctx, &question, true)? {
            answer = value_fit::encoded(&answer, part);
        }
    }
    if let Some(expected) = &variable.expected
        && !expected.accepts(&answer)
    {
        let mut question = format!(
            "It does not look like a {} value (expected `{}`). Keep it anyway?",
            shown(&expected.what),
            shown(&expected.pattern)
        );
        if let Some(how) = &expected.how_to_get {
            question.push_str(&format!(" (get one at {})", shown(how)));
        }
        if !confirm(ctx, &question, false)? {
            return Ok(None);
        }
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
    crate::cli::render::quoted_names(names)
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}
