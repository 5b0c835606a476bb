//! `add --client-secret`: the OAuth client secret, read without echo and
//! filed where Claude Code 2.1.332 reads it (`.credentials.json` in its
//! data directory on Linux; the Keychain on macOS, which mcpenv leaves to
//! `claude mcp add`).

use std::io::{self, IsTerminal};

use crate::cli::args::{AddArgs, TransportArg};
use crate::cli::commands::add_words::{Words, flag_words};
use crate::cli::error::CliError;
use crate::cli::resolve::{Ctx, shell_words, vars};

/// The client secret: `MCP_CLIENT_SECRET`, else asked for at a terminal.
/// Refused without `--client-id` (Claude Code ignores it then) and on
/// macOS.
pub fn read_client_secret(
    ctx: &Ctx,
    args: &AddArgs,
    words: &Words,
    transport: TransportArg,
) -> Result<String, CliError> {
    if args.client_id.is_none() {
        let mut line = vec!["add".to_string()];
        line.extend(flag_words(args, &words.env));
        line.extend(["--client-id".to_string(), "CLIENT_ID".to_string()]);
        if words.name.starts_with('-') {
            // Such a name is read as one only after `--`.
            line.push("--".to_string());
        }
        line.extend([words.name.clone(), words.command.clone()]);
        let line: Vec<&str> = line.iter().map(String::as_str).collect();
        return Err(CliError::usage(
            "`--client-secret` needs `--client-id`: Claude Code ignores a client secret without one",
        )
        .with_hint(format!("did you mean `{}`?", ctx.command(&line))));
    }
    if cfg!(target_os = "macos") {
        return Err(CliError::failure(
            "on macOS Claude Code keeps OAuth client secrets in the Keychain, which mcpenv does not write",
        )
        .with_hint(format!(
            "add this server with Claude Code, which asks for the secret: `{}`",
            claude_command(args, words, transport)
        )));
    }
    let secret = match ctx.process_env.get(vars::MCP_CLIENT_SECRET) {
        Some(secret) if !secret.is_empty() => secret.clone(),
        _ if io::stdin().is_terminal() && io::stderr().is_terminal() => dialoguer::Password::new()
            .with_prompt(format!("OAuth client secret for `{}` (hidden)", words.name))
            .interact()
            .map_err(|error| {
                CliError::failure_from("cannot read the client secret; nothing was written", error)
            })?,
        _ => {
            // Claude Code's refusal, in mcpenv's words.
            return Err(CliError::failure(
                "no terminal to ask for the client secret; nothing was written",
            )
            .with_hint("set `MCP_CLIENT_SECRET` in the environment instead"));
        }
    };
    ctx.shield.learn(|redactor| redactor.learn(&secret));
    Ok(secret)
}

/// The `claude mcp add` line that does what `args` asks: NAME and URL
/// first, since Claude Code's `-H` takes every word after it.
pub fn claude_command(args: &AddArgs, words: &Words, transport: TransportArg) -> String {
    let mut line: Vec<String> = ["claude", "mcp", "add", &words.name, &words.command]
        .iter()
        .map(|word| (*word).to_string())
        .collect();
    let mut flags = flag_words(args, &words.env);
    if args.transport.is_none() {
        // mcpenv inferred it; Claude Code would not.
        let transport = if transport == TransportArg::Sse {
            "sse"
        } else {
            "http"
        };
        flags.splice(0..0, ["-t".to_string(), transport.to_string()]);
    }
    // Only Claude Code's own flags.
    let mut kept = Vec::new();
    let mut flags = flags.into_iter();
    while let Some(flag) = flags.next() {
        match flag.as_str() {
            "--replace" | "--allow-literal" | "--force" | "--json" => {}
            "--var" | "--package" | "--remote" => {
                flags.next();
            }
            "--client-secret" => kept.push(flag),
            _ => {
                kept.push(flag);
                kept.extend(flags.next());
            }
        }
    }
    line.extend(kept);
    shell_words(&line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{Cli, Command};
    use clap::Parser;

    #[test]
    fn the_claude_line_puts_name_and_url_before_variadic_flags() {
        let cli = Cli::try_parse_from([
            "mcpenv",
            "add",
            "-s",
            "user",
            "--client-id",
            "cid",
            "--client-secret",
            "-H",
            "X-A: 1",
            "--replace",
            "api",
            "https://api.example.com/mcp",
        ])
        .unwrap();
        let Command::Add(args) = cli.command else {
            panic!("not add")
        };
        let words = Words {
            name: "api".into(),
            command: "https://api.example.com/mcp".into(),
            args: Vec::new(),
            env: Vec::new(),
        };
        assert_eq!(
            claude_command(&args, &words, TransportArg::Http),
            "claude mcp add api https://api.example.com/mcp -t http -s user -H 'X-A: 1' --client-id cid --client-secret"
        );
    }
}
