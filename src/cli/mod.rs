//! The command-line interface: parse, resolve, dispatch, render, and map
//! errors to exit codes. The only module that knows clap, terminals and the
//! process environment.

pub mod args;
pub mod clap_hints;
pub mod commands;
pub mod completion;
pub mod error;
#[cfg(unix)]
pub mod exec;
pub mod output;
pub mod render;
pub mod resolve;

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use crate::cli::args::{Cli, Command};
use crate::cli::commands::dry_run::emit_edit;
use crate::cli::error::{CliError, Kind};
use crate::cli::output::{Shield, Stream};
use crate::cli::render::emit;
use crate::cli::resolve::Ctx;
use crate::mechanics::edits::{Edit, Finished};

/// Runs mcpenv with the process's arguments and returns its exit code:
/// 0 success, 1 operational failure, 2 usage error.
pub fn main() -> ExitCode {
    let arguments: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let words: Vec<String> = arguments
        .iter()
        .map(|word| word.to_string_lossy().into_owned())
        .collect();
    if let Some(version) = args::version_only(&words) {
        let _ = io::Write::write_all(&mut io::stdout().lock(), version.as_bytes());
        return ExitCode::SUCCESS;
    }
    // Learns the arguments' secrets first: a usage error may quote one.
    let shield = Arc::new(Shield::for_arguments(&words));
    // A shell asking for completions is answered before anything else.
    completion::answer_if_asked();
    let cli = match args::common_shape(&arguments).map_or_else(parse, Ok) {
        Ok(cli) => cli,
        Err(error) => {
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    let _ = error.print();
                    ExitCode::SUCCESS
                }
                _ if let Some(ours) = clap_hints::rewrite(&error, &words) => {
                    if wants_json(&words) {
                        let _ = output::write_json(&shield, ours.to_json(), false);
                    } else {
                        let _ =
                            output::write(&shield, Stream::Stderr, false, |err| ours.render(err));
                    }
                    ExitCode::from(2)
                }
                _ if wants_json(&words) => {
                    // clap's message, without its `error: ` and usage lines.
                    let rendered = error.render().to_string();
                    let message = rendered
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim_start_matches("error: ")
                        .to_string();
                    let ours = CliError::usage(message).with_hint(clap_hints::help_hint(&words));
                    let _ = output::write_json(&shield, ours.to_json(), false);
                    ExitCode::from(2)
                }
                _ => {
                    let rendered = with_help_hint(&error, &words);
                    let _ = output::write(&shield, Stream::Stderr, false, |err| {
                        err.write_all(rendered.as_bytes())
                    });
                    ExitCode::from(2)
                }
            };
        }
    };
    let json = wants_json(&words);
    resolve::color_choice(cli.color).write_global();
    let run_shield = Arc::clone(&shield);
    let code = match on_big_stack(move || run(&cli, &run_shield)) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        #[cfg(not(unix))]
        Ok(Outcome::Exited(code)) => ExitCode::from(code),
        Err(error) => {
            if json {
                let _ = output::write_json(&shield, error.to_json(), false);
            } else {
                let _ = output::write(&shield, Stream::Stderr, false, |err| error.render(err));
            }
            match error.kind() {
                Kind::Usage => ExitCode::from(2),
                Kind::Failure => ExitCode::from(1),
            }
        }
    };
    // What the shield learnt (every secret's forms, after a scan tens of
    // thousands of allocations) goes with the process, which ends now:
    // freeing it piece by piece cost a scan of the bench's 2,000 files 31 M
    // instructions, after its output.
    std::mem::forget(shield);
    code
}

/// The process's arguments parsed as `Cli::try_parse` parses them, but
/// clap's command tree is never freed: freeing its thousands of small
/// allocations was a tenth of what `list` does in an empty HOME, and the
/// process ends soon after (`serve`, which does not, keeps one tree).
/// Clap's rendering of `error`, its closing "For more information, try
/// '--help'." replaced by mcpenv's `hint:` line (every error of mcpenv
/// ends with one), naming the help of the command the words were for. A
/// rendering without that line (the help printed for no command) is kept.
fn with_help_hint(error: &clap::Error, words: &[String]) -> String {
    let plain = error.render().to_string();
    let styled = error.render().ansi().to_string();
    let mut lines: Vec<&str> = styled.lines().collect();
    // The styled lines match the plain ones one for one: the plain text
    // tells which to drop, whatever styling clap puts in them.
    let plain_lines: Vec<&str> = plain.lines().collect();
    let Some(last) = plain_lines
        .iter()
        .rposition(|line| !line.trim().is_empty())
        .filter(|&last| {
            plain_lines.len() == lines.len()
                && plain_lines[last].starts_with("For more information, try")
        })
    else {
        return styled;
    };
    lines.truncate(last);
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    let cyan = anstyle::Style::new()
        .bold()
        .fg_color(Some(anstyle::AnsiColor::Cyan.into()));
    format!(
        "{}\n\n{cyan}hint:{cyan:#} {}\n",
        lines.join("\n"),
        clap_hints::help_hint(words)
    )
}

fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(std::env::args_os());
    std::mem::forget(command);
    Cli::from_arg_matches_mut(&mut matches?).map_err(|error| error.format(&mut Cli::command()))
}

/// Whether the command line asks for JSON (`--json`, `--format json`):
/// an error is then a JSON document on stdout too, so a script can tell
/// it from an empty result. Words after `--` are another program's.
fn wants_json(words: &[String]) -> bool {
    let ours = words.iter().take_while(|word| *word != "--");
    let mut previous: Option<&str> = None;
    for word in ours {
        if word == "--json"
            || word == "--format=json"
            || (previous == Some("--format") && word == "json")
        {
            return true;
        }
        previous = Some(word);
    }
    false
}

/// Runs `work` on a thread with [`crate::mechanics::document::STACK_BYTES`] of stack,
/// so values nested up to [`crate::mechanics::document::MAX_DEPTH`] deep never overflow
/// it, whatever `ulimit -s` says; on the current thread if that thread
/// cannot be made.
fn on_big_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let work = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
    let shared = std::sync::Arc::clone(&work);
    let spawned = std::thread::Builder::new()
        .name("mcpenv".to_string())
        .stack_size(crate::mechanics::document::STACK_BYTES)
        .spawn(move || {
            let work = shared.lock().ok().and_then(|mut slot| slot.take());
            work.map(|work| work())
        });
    match spawned.map(std::thread::JoinHandle::join) {
        Ok(Ok(Some(done))) => done,
        // A panic on that thread was reported there already: exit as one.
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // Not spawned (or the work never ran): run it here.
        Ok(Ok(None)) | Err(_) => {
            let work = work.lock().ok().and_then(|mut slot| slot.take());
            work.expect("the work runs once: it was not taken by a thread that ran")()
        }
    }
}

/// How a command that ran to the end finished.
enum Outcome {
    /// Nothing to report: exit 0.
    Success,
    /// It found problems it exists to find (secrets, missing variables): exit 1.
    Findings,
    /// `run`'s command ended with this exit code (Windows, which cannot
    /// replace a process by another: mcpenv waits and hands the code on).
    #[cfg(not(unix))]
    Exited(u8),
}

fn run(cli: &Cli, shield: &Arc<Shield>) -> Result<Outcome, CliError> {
    #[cfg(unix)]
    if let Command::Reap = cli.command {
        commands::reap::run();
        return Ok(Outcome::Success);
    }
    let mut ctx = resolve::resolve(cli, Arc::clone(shield))?;
    if let Some(note) = scope_given(&cli.command).and_then(args::ScopeArg::note)
        && !ctx.quiet
    {
        let _ = output::write(shield, Stream::Stderr, false, |err| {
            writeln!(err, "note: {note}")
        });
    }
    ctx.ops.edit = match cli.command.edit() {
        Some((_, true)) => Edit::preview(),
        // `MCPENV_UNDO=off`: keep no copies (nothing for `undo` to restore).
        Some(_) if resolve::undo_off() => Edit::plain(),
        Some((name, false)) => {
            Edit::recording(&ctx.locations.state_dir, name, ctx.locations.edit_place())
        }
        None => Edit::plain(),
    };
    // What a killed run left on `~/.claude.json` goes now, whether or not
    // this command writes (a dry run leaves everything as it is).
    if !matches!(cli.command.edit(), Some((_, true))) {
        crate::config::store::tidy_after_kill(&Edit::plain(), &ctx.locations);
    }
    let outcome = dispatch(cli, &ctx);
    let finished = ctx.edit.finish();
    if let Finished::Recorded(kept) = &finished
        && let Some(reason) = &kept.forgone
        && !ctx.quiet
    {
        let _ = output::write(shield, Stream::Stderr, false, |err| {
            writeln!(
                err,
                "note: `mcpenv undo` cannot take this edit back: {reason}"
            )
        });
    }
    if let Finished::Recorded(kept) = finished
        && let Some(problem) = kept.problem
        && !ctx.quiet
    {
        let _ = output::write(shield, Stream::Stderr, false, |err| {
            crate::cli::render::warning(err, &problem)?;
            writeln!(
                err,
                "hint: the edit itself was made; only `mcpenv undo` cannot take it back"
            )
        });
    }
    let reads_only_given_files =
        matches!(&cli.command, Command::Scan(args) if commands::scan::reads_only_given_files(args));
    if outcome.is_err() && !reads_only_given_files {
        // The error may quote the configuration: know its secrets first.
        ctx.learn_world();
    }
    outcome
}

/// The `-s` a command was given.
fn scope_given(command: &Command) -> Option<args::ScopeArg> {
    match command {
        Command::Add(args) => Some(args.scope),
        Command::AddJson(args) => Some(args.scope),
        Command::List(args) => args.scope,
        Command::Remove(args) => args.scope,
        Command::Extract(args) => args.scope,
        Command::Import(args) => Some(args.options.scope),
        Command::AddFromClaudeDesktop(args) => Some(args.options.scope),
        _ => None,
    }
}

fn dispatch(cli: &Cli, ctx: &Ctx) -> Result<Outcome, CliError> {
    let quiet = ctx.quiet;
    let printed = match &cli.command {
        Command::Add(args) => emit_edit(
            ctx,
            &commands::add::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::AddJson(args) => emit_edit(
            ctx,
            &commands::add_json::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Get(args) => emit(ctx, &commands::get::run(ctx, args)?, args.json, quiet),
        Command::List(args) => emit(ctx, &commands::list::run(ctx, args)?, args.json, quiet),
        Command::Remove(args) => emit_edit(
            ctx,
            &commands::remove::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Scan(args) => {
            let (report, format) = commands::scan::run(ctx, args)?;
            let emitted = commands::scan::emit(ctx, &report, format, quiet);
            // A large scan's report is many small allocations, and the
            // process ends once it is written: freeing them one by one
            // would only delay the exit (25 M instructions for the bench's
            // 2,000 files), as clap's tree would.
            std::mem::forget(report);
            emitted
        }
        Command::Policy(args::PolicyCommand::Check(args)) => {
            let (report, format) = commands::policy::run(ctx, args)?;
            commands::policy::emit(ctx, &report, format, quiet)
        }
        Command::Extract(args) => emit_edit(
            ctx,
            &commands::extract::run(ctx, args)?,
            args.json,
            quiet,
            true,
        ),
        Command::Share(args) => emit_edit(
            ctx,
            &commands::share::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Check(args) => emit(ctx, &commands::check::run(ctx, args)?, args.json, quiet),
        Command::Onboard(args) => emit_edit(
            ctx,
            &commands::onboard::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Approve(args) => emit_edit(
            ctx,
            &commands::approve::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Reject(args) => emit_edit(
            ctx,
            &commands::reject::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::ResetProjectChoices(args) => emit_edit(
            ctx,
            &commands::reset_project_choices::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        #[cfg(unix)]
        Command::Run(args) => return Err(commands::run::run(ctx, args)),
        #[cfg(not(unix))]
        Command::Run(args) => return commands::run::run(ctx, args).map(Outcome::Exited),
        Command::Completions(args) => emit(
            ctx,
            &commands::completions::run(args).map_err(|error| {
                CliError::failure_from("cannot write the completion script", error)
            })?,
            false,
            quiet,
        ),
        Command::Man(args) => emit(ctx, &commands::man::run(args)?, false, quiet),
        Command::Secrets(args::SecretsCommand::List(args)) => {
            emit(ctx, &commands::secrets::list(ctx)?, args.json, quiet)
        }
        Command::Secrets(args::SecretsCommand::Rm(args)) => emit_edit(
            ctx,
            &commands::secrets::remove(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Secrets(args::SecretsCommand::Move(args)) => emit_edit(
            ctx,
            &commands::secrets::move_to(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Templates(args::TemplatesCommand::List(args)) => emit(
            ctx,
            &commands::templates::list(ctx, args)?,
            args.json,
            quiet,
        ),
        Command::Templates(args::TemplatesCommand::Show(args)) => emit(
            ctx,
            &commands::templates::show(ctx, args)?,
            args.json,
            quiet,
        ),
        Command::Import(args) => emit_edit(
            ctx,
            &commands::import::run(ctx, args)?,
            args.options.json,
            quiet,
            true,
        ),
        Command::AddFromClaudeDesktop(args) => emit_edit(
            ctx,
            &commands::import::run(ctx, &args.to_import())?,
            args.options.json,
            quiet,
            true,
        ),
        Command::Export(args) => emit_edit(
            ctx,
            &commands::export::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Undo(args) => emit_edit(
            ctx,
            &commands::undo::run(ctx, args)?,
            args.json,
            quiet,
            false,
        ),
        Command::Probe(args) => commands::probe::run(ctx, args)?,
        Command::Doctor(args) => commands::doctor::run(ctx, args)?,
        Command::Serve(args) => {
            commands::serve::run(ctx, args)?;
            return Ok(Outcome::Success);
        }
        Command::Confirm(args) => emit(ctx, &commands::confirm::run(ctx, args)?, false, quiet),
        #[cfg(unix)]
        Command::Reap => unreachable!("handled before resolving"),
        Command::Env(args) => {
            let (report, json) = commands::env::run(ctx, args)?;
            emit(ctx, &report, json, quiet)
        }
    };
    match printed {
        // A closed pipe (`mcpenv list | head -1`) is not a failure.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(Outcome::Success),
        Err(error) => Err(CliError::failure_from("cannot write the output", error)),
        Ok(true) => Ok(Outcome::Findings),
        Ok(false) => Ok(Outcome::Success),
    }
}
