//! `mcpenv add`: a server from a command or a URL, in Claude Code's shape.

use std::io::{self, Write};

use indexmap::IndexMap;

use crate::check::platforms::{self, Obstacle, System};
use crate::cli::args::{AddArgs, ScopeArg, TransportArg};
use crate::cli::commands::add_oauth as oauth;
use crate::cli::commands::add_words::place_words;
use crate::cli::error::CliError;
use crate::cli::render::{Report, shown, warning};
use crate::cli::resolve::{Ctx, shell_words};
use crate::config::model::Transport;
use crate::config::scope::Scope;
use crate::ops::add::{
    self, AddReport, AddRequest, Literal, OAuthClient, RemoteTransport, Source, check_name,
};

impl Report for AddReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.notes {
            writeln!(err, "note: {}", shown(note))?;
        }
        for message in &self.warnings {
            warning(err, message)?;
        }
        for moved in &self.moves {
            writeln!(
                err,
                "Moved {} into `.env` as `{}` ({}), leaving `${{{}}}` in the entry",
                moved.field, moved.variable, moved.value, moved.variable
            )?;
        }
        for file in &self.env_written {
            writeln!(err, "Wrote {}", crate::ops::shown_paths::written(file))?;
        }
        let verb = if self.replaced { "Replaced" } else { "Added" };
        writeln!(
            err,
            "{verb} {} MCP server `{}` in {} scope",
            self.transport, self.name, self.scope
        )?;
        let verb = if self.created { "Created" } else { "Wrote" };
        writeln!(err, "{verb} {}", self.file_shown)?;
        if let Some(template) = &self.template {
            writeln!(err, "From template `{template}`")?;
        }
        if let Some(stored) = &self.client_secret {
            writeln!(
                err,
                "Stored the OAuth client secret in `{}` under `{}`, where Claude Code reads it",
                stored.file.display(),
                shown(&stored.key)
            )?;
        }
        if let Some(approve) = &self.approve_command {
            writeln!(
                err,
                "Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `{}`",
                shown(approve)
            )?;
        }
        if !self.still_missing.is_empty() {
            writeln!(
                err,
                "Still missing: {}",
                crate::cli::render::quoted_names(&self.still_missing)
            )?;
            writeln!(
                err,
                "hint: set them with `mcpenv onboard`; `mcpenv check` shows what each server needs"
            )?;
        }
        Ok(())
    }
}

/// `--portable`: the command and arguments in the form that starts on
/// every system, with a note when they were rewritten; a usage error when
/// there is no such form.
fn portable(
    command: &str,
    args: &[String],
    notes: &mut Vec<String>,
) -> Result<(String, Vec<String>), CliError> {
    let as_given = || {
        let mut words = vec![command.to_string()];
        words.extend(args.iter().cloned());
        shell_words(&words)
    };
    let (portable, portable_args) = match platforms::portable_form(command, args) {
        Ok(Some((portable, portable_args))) => {
            let mut words = vec![portable.clone()];
            words.extend(portable_args.iter().cloned());
            notes.push(format!(
                "`{}` is written as `{}`, which starts on Windows, macOS and Linux",
                as_given(),
                shell_words(&words)
            ));
            (portable, portable_args)
        }
        Ok(None) => (command.to_string(), args.to_vec()),
        Err(error) => {
            return Err(CliError::usage(error.to_string()).with_hint(format!(
                "drop `--portable` to add `{}` as it is, or run the server through a program every system has by name (`node`, `python3`, `uvx`, `npx`)",
                as_given()
            )));
        }
    };
    let shown: Vec<&str> = portable_args.iter().map(String::as_str).collect();
    if platforms::obstacles(&portable, &shown, System::Windows)
        .iter()
        .any(|obstacle| matches!(obstacle, Obstacle::BatchFile { .. }))
    {
        notes.push(format!(
            "`{portable}` is a batch file on Windows (`{portable}.cmd`): Claude Code 2.1.332 starts it there; `mcpenv check --for windows` says what a teammate on an older release can do"
        ));
    }
    Ok((portable, portable_args))
}

/// Runs `mcpenv add`.
pub fn run(ctx: &Ctx, args: &AddArgs) -> Result<AddReport, CliError> {
    let words = place_words(ctx, args)?;
    check_name(&words.name)?;
    if let Some(template) = &args.template {
        return crate::cli::commands::templates::add_from_template(
            ctx,
            args,
            &words.name,
            template,
        );
    }
    if !args.vars.is_empty() || args.package.is_some() || args.remote.is_some() {
        return Err(
            CliError::usage("`--var`, `--package` and `--remote` go with `--template`").with_hint(
                "add `--template NAME`, or pass values with `-e KEY=VALUE` / `-H 'Name: value'`",
            ),
        );
    }
    let command_or_url = words.command.as_str();
    let env = parse_env(&words.env)?;
    let headers = parse_headers(&args.headers)?;
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let chosen = args.transport.unwrap_or_else(|| {
        if is_http_url(command_or_url) {
            notes.push(format!(
                "`{command_or_url}` is a URL: added as `-t http` (pass `-t sse` for an SSE server, `-t stdio` for a command)"
            ));
            TransportArg::Http
        } else {
            TransportArg::Stdio
        }
    });
    let mut client_secret = None;
    let source = match chosen {
        TransportArg::Stdio => {
            if !headers.is_empty() {
                return Err(
                    CliError::usage("`--header` applies only to http and sse servers")
                        .with_hint("add `-t http` (or `-t sse`) for a server reached by URL"),
                );
            }
            if looks_like_url(command_or_url) {
                warnings.push(format!(
                    "`{command_or_url}` looks like a URL but was added as a stdio command; for a remote server use `-t http` (or `-t sse`)"
                ));
            }
            if args.client_id.is_some() || args.callback_port.is_some() || args.client_secret {
                // Claude Code 2.1.332's warning, which also names its `--xaa`.
                warnings.push(
                    "--client-id, --client-secret and --callback-port only work with HTTP/SSE servers and are ignored for stdio".to_string(),
                );
            }
            let (command, command_args) = if args.portable {
                portable(command_or_url, &words.args, &mut notes)?
            } else {
                (command_or_url.to_string(), words.args.clone())
            };
            Source::Stdio {
                command,
                args: command_args,
                env,
            }
        }
        TransportArg::Http | TransportArg::Sse => {
            let transport = if chosen == TransportArg::Http {
                RemoteTransport::Http
            } else {
                RemoteTransport::Sse
            };
            if args.portable {
                return Err(CliError::usage(
                    "`--portable` applies only to stdio commands: a URL is the same on every system",
                )
                .with_hint("drop `--portable`"));
            }
            if !env.is_empty() || !words.args.is_empty() {
                return Err(CliError::usage(format!(
                    "`--env` and command arguments apply only to stdio servers, not {}",
                    Transport::from(transport)
                ))
                .with_hint("pass credentials for a remote server as headers: `-H 'Authorization: Bearer ${TOKEN}'`"));
            }
            if args.client_secret {
                client_secret = Some(oauth::read_client_secret(ctx, args, &words, chosen)?);
            }
            Source::Remote {
                transport,
                url: command_or_url.to_string(),
                headers,
                oauth: OAuthClient {
                    client_id: args.client_id.clone(),
                    callback_port: args.callback_port,
                },
            }
        }
    };
    let flags = EntryFlags {
        scope: args.scope,
        replace: args.replace,
        allow_literal: args.allow_literal,
        force: args.force,
    };
    let mut report = add_entry(ctx, &words.name, flags, source, warnings)?;
    report.notes = notes;
    if let Some(secret) = client_secret {
        report.client_secret = Some(add::save_client_secret(ctx, &report, &secret)?);
    }
    Ok(report)
}

/// The flags `add` and `add-json` share.
pub struct EntryFlags {
    /// `-s`.
    pub scope: ScopeArg,
    /// `--replace`.
    pub replace: bool,
    /// `--allow-literal`: keep secrets in a project entry.
    pub allow_literal: bool,
    /// `--force`: write into a `.env` others can read.
    pub force: bool,
}

/// Plans and writes the server `name` from `source`: what `add` and
/// `add-json` end with. `warnings` are about the arguments.
pub fn add_entry(
    ctx: &Ctx,
    name: &str,
    flags: EntryFlags,
    source: Source,
    warnings: Vec<String>,
) -> Result<AddReport, CliError> {
    let plan = add::plan(
        ctx,
        AddRequest {
            name: name.to_string(),
            scope: Scope::from(flags.scope),
            source,
            replace: flags.replace,
            literal: if flags.allow_literal {
                Literal::Keep
            } else {
                Literal::Move
            },
            force: flags.force,
            warnings,
        },
    )?;
    add::apply(ctx, plan)
}

fn parse_env(pairs: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut env = IndexMap::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                env.insert(key.to_string(), value.to_string());
            }
            _ => {
                let error = CliError::usage(format!(
                    "invalid environment variable `{pair}`: expected KEY=VALUE"
                ));
                // A bare name most likely means "hand this variable on":
                // its placeholder, quoted so the shell leaves `${…}` alone.
                let bare_name = !pair.is_empty()
                    && pair
                        .chars()
                        .all(|character| character.is_ascii_alphanumeric() || character == '_')
                    && !pair.starts_with(|character: char| character.is_ascii_digit());
                return Err(if bare_name {
                    error.with_hint(format!(
                        "to hand `{pair}` on from your environment or `.env`, give its placeholder: `-e '{pair}=${{{pair}}}'`"
                    ))
                } else {
                    error.with_hint("give one variable per flag: `-e KEY1=value1 -e KEY2=value2`")
                });
            }
        }
    }
    Ok(env)
}

fn parse_headers(headers: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut parsed = IndexMap::new();
    for header in headers {
        let Some((name, value)) = header.split_once(':') else {
            return Err(CliError::usage(format!(
                "invalid header `{header}`: expected `Name: value`"
            ))
            .with_hint("give one header per flag: `-H 'Authorization: Bearer ${TOKEN}'`"));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(
                CliError::usage(format!("invalid header `{header}`: the name is empty"))
                    .with_hint("write the header as `Name: value`"),
            );
        }
        parsed.insert(name.to_string(), value.trim().to_string());
    }
    Ok(parsed)
}

/// An `http://` or `https://` URL, which `add` reads as `-t http`.
pub fn is_http_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

fn looks_like_url(command: &str) -> bool {
    command.starts_with("http://")
        || command.starts_with("https://")
        || command.starts_with("localhost")
        || command.ends_with("/sse")
        || command.ends_with("/mcp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs_split_at_the_first_equals_and_last_wins() {
        let env = parse_env(&["K=a=b".into(), "E=".into(), "K=c".into()]).unwrap();
        assert_eq!(
            env,
            IndexMap::from([
                ("K".to_string(), "c".to_string()),
                ("E".to_string(), String::new())
            ])
        );
        assert!(parse_env(&["NOEQ".into()]).is_err());
        assert!(parse_env(&["=v".into()]).is_err());
    }

    #[test]
    fn headers_split_at_the_first_colon_and_trim() {
        let headers = parse_headers(&["Authorization:  Bearer x:y ".into()]).unwrap();
        assert_eq!(headers["Authorization"], "Bearer x:y");
        assert!(parse_headers(&["NoColon".into()]).is_err());
        assert!(parse_headers(&[": v".into()]).is_err());
    }

    #[test]
    fn url_like_commands() {
        assert!(looks_like_url("https://x/mcp"));
        assert!(looks_like_url("localhost:3000"));
        assert!(!looks_like_url("npx"));
    }
}
