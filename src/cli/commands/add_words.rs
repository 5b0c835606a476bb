//! Where `add`'s words go: what clap parsed, put where the user meant it,
//! or refused with the corrected command line. Covers the habits
//! `claude mcp add` users bring: `-e A=1 B=2 -- cmd` (Claude Code's `-e`
//! takes several values), `add -- npx foo` (no name), `add npx foo` (a
//! command where the name goes).

use clap::ValueEnum;

use crate::cli::args::{AddArgs, ScopeArg, TransportArg};
use crate::cli::commands::add::is_http_url;
use crate::cli::error::CliError;
use crate::cli::resolve::Ctx;
use crate::config::scope::Scope;

/// Commands people type where the server's name goes.
const COMMAND_WORDS: &[&str] = &[
    "npx", "uvx", "docker", "node", "python", "python3", "bunx", "deno", "pnpm",
];

/// `add`'s words in place.
#[derive(Debug)]
pub struct Words {
    /// The server's name.
    pub name: String,
    /// The command (stdio) or URL; empty with `--template`.
    pub command: String,
    /// The command's arguments.
    pub args: Vec<String>,
    /// `-e` values, with Claude Code's extra `-e` values.
    pub env: Vec<String>,
}

/// Puts clap's words where they belong, or says what to type instead.
pub fn place_words(ctx: &Ctx, args: &AddArgs) -> Result<Words, CliError> {
    let mut env = args.env.clone();
    let mut before: Vec<String> = args
        .command_or_url
        .iter()
        .chain(&args.args)
        .cloned()
        .collect();
    // `-e A=1 B=2 -- cmd`: Claude Code's `-e` eats every word up to `--`;
    // here those words reached COMMAND, so they go back to `-e`.
    if !env.is_empty()
        && !args.after_dashes.is_empty()
        && !before.is_empty()
        && before.iter().all(|word| is_assignment(word))
    {
        env.append(&mut before);
    }
    let command_words: Vec<String> = before
        .into_iter()
        .chain(args.after_dashes.clone())
        .collect();
    let (name, command_words) = match args.name.clone() {
        Some(name) => (name, command_words),
        // A name that starts with `-` (a repository may choose `--trust`)
        // can only come after `--`, where no command starts with `-`:
        // `add -- --trust sh`, or `add -- --trust -- sh`.
        None if command_words
            .first()
            .is_some_and(|word| word.starts_with('-')) =>
        {
            let mut words = command_words.into_iter();
            let name = words.next().unwrap_or_default();
            let mut rest: Vec<String> = words.collect();
            if rest.first().is_some_and(|word| word == "--") {
                rest.remove(0);
            }
            (name, rest)
        }
        None => {
            // Words after `--` fill NAME only as above: `add -- cmd …`
            // gets here.
            let suggested = suggest_name(&command_words);
            return Err(
                CliError::usage("the server's name is missing: it goes before `--`")
                    .with_hint(corrected(ctx, args, &suggested, &env, &command_words)),
            );
        }
    };
    if args.template.is_some() {
        return Ok(Words {
            name,
            command: String::new(),
            args: Vec::new(),
            env,
        });
    }
    if args.client_secret
        && args
            .command_or_url
            .as_deref()
            .is_some_and(|word| !is_http_url(word))
        && args.args.first().is_some_and(|word| is_http_url(word))
    {
        // `--client-secret VALUE NAME URL`: VALUE, a secret, became NAME;
        // it is never quoted.
        return Err(CliError::usage(
            "`--client-secret` takes no value: the secret is read from `MCP_CLIENT_SECRET` or asked for without echo",
        )
        .with_hint(corrected(ctx, args, &command_words[0], &env, &command_words[1..])));
    }
    if COMMAND_WORDS.contains(&name.as_str()) && args.command_or_url.is_some() {
        let mut words = vec![name.clone()];
        words.extend(command_words);
        return Err(CliError::usage(format!(
            "`{name}` is a command, not a server name: the name comes first"
        ))
        .with_hint(corrected(ctx, args, &suggest_name(&words), &env, &words)));
    }
    let assignments = command_words
        .iter()
        .take_while(|word| is_assignment(word))
        .count();
    if assignments > 0 {
        let mut env = env;
        env.extend(command_words[..assignments].iter().cloned());
        let rest = &command_words[assignments..];
        let rest = if rest.is_empty() {
            &["COMMAND".to_string()][..]
        } else {
            rest
        };
        return Err(CliError::usage(format!(
            "`{}` looks like an environment variable, not a command",
            command_words[0]
        ))
        .with_hint(corrected(ctx, args, &name, &env, rest)));
    }
    let mut command_words = command_words.into_iter();
    let Some(command) = command_words.next() else {
        return Err(
            CliError::usage("the command or URL is missing").with_hint(corrected(
                ctx,
                args,
                &name,
                &env,
                &["COMMAND".to_string()],
            )),
        );
    };
    Ok(Words {
        name,
        command,
        args: command_words.collect(),
        env,
    })
}

/// `KEY=VALUE` with a variable-like key.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(key, _)| {
        let mut chars = key.chars();
        chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && chars.all(|char| char.is_ascii_alphanumeric() || char == '_')
    })
}

/// A name for the server a command starts: its package or script, without
/// scope, version, tag and `mcp`/`server` affixes (`npx -y
/// @modelcontextprotocol/server-github` → `github`).
pub fn suggest_name(command_words: &[String]) -> String {
    const SUBCOMMANDS: &[&str] = &["run", "exec", "dlx", "x"];
    for word in command_words.iter().skip(1) {
        if word.starts_with('-') || SUBCOMMANDS.contains(&word.as_str()) || is_assignment(word) {
            continue;
        }
        let base = word.trim_start_matches('@');
        let base = base.rsplit('/').next().unwrap_or(base);
        let base = base.split(['@', ':']).next().unwrap_or(base);
        let base = [".js", ".mjs", ".ts", ".py"]
            .iter()
            .find_map(|extension| base.strip_suffix(extension))
            .unwrap_or(base);
        let mut name = base.to_ascii_lowercase();
        for prefix in ["mcp-server-", "server-", "mcp-"] {
            if let Some(rest) = name.strip_prefix(prefix) {
                name = rest.to_string();
            }
        }
        for suffix in ["-mcp-server", "-server", "-mcp", "_mcp"] {
            if let Some(rest) = name.strip_suffix(suffix) {
                name = rest.to_string();
            }
        }
        let name: String = name
            .chars()
            .filter(|char| char.is_ascii_alphanumeric() || *char == '-' || *char == '_')
            .collect();
        if !name.is_empty() && crate::config::model::validate_name(&name).is_ok() {
            return name;
        }
    }
    "my-server".to_string()
}

/// The flags of `args` as words, `-e` values as given in `env`; for the
/// corrected `mcpenv add` line and for the `claude mcp add` one.
pub fn flag_words(args: &AddArgs, env: &[String]) -> Vec<String> {
    let mut words = Vec::new();
    let mut flag = |flag: &str, value: Option<String>| {
        words.push(flag.to_string());
        words.extend(value);
    };
    if args.scope != ScopeArg::Local {
        flag("-s", Some(Scope::from(args.scope).as_str().to_string()));
    }
    if let Some(transport) = args.transport {
        flag("-t", value_name(transport));
    }
    for pair in env {
        flag("-e", Some(pair.clone()));
    }
    for header in &args.headers {
        flag("-H", Some(header.clone()));
    }
    if let Some(client_id) = &args.client_id {
        flag("--client-id", Some(client_id.clone()));
    }
    if let Some(port) = args.callback_port {
        flag("--callback-port", Some(port.to_string()));
    }
    if args.client_secret {
        flag("--client-secret", None);
    }
    for var in &args.vars {
        flag("--var", Some(var.clone()));
    }
    if let Some(package) = args.package {
        flag("--package", Some(package.to_string()));
    }
    if let Some(remote) = args.remote {
        flag("--remote", Some(remote.to_string()));
    }
    for (set, name) in [
        (args.replace, "--replace"),
        (args.allow_literal, "--allow-literal"),
        (args.force, "--force"),
        (args.json, "--json"),
    ] {
        if set {
            flag(name, None);
        }
    }
    words
}

fn value_name(transport: TransportArg) -> Option<String> {
    transport
        .to_possible_value()
        .map(|value| value.get_name().to_string())
}

/// `mcpenv add` as it should have been typed: flags, NAME, then the URL,
/// or `--` and the command.
fn corrected(
    ctx: &Ctx,
    args: &AddArgs,
    name: &str,
    env: &[String],
    command_words: &[String],
) -> String {
    let mut words = vec!["add".to_string()];
    words.extend(flag_words(args, env));
    let remote = command_words.first().is_some_and(|word| is_http_url(word))
        && args.transport != Some(TransportArg::Stdio);
    if name.starts_with('-') {
        // Such a name goes after `--`, the command right after it.
        words.extend(["--".to_string(), name.to_string()]);
    } else {
        words.push(name.to_string());
        if !remote {
            words.push("--".to_string());
        }
    }
    words.extend(command_words.iter().cloned());
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    format!("did you mean `{}`?", ctx.command(&words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn names_come_from_the_package() {
        for (command, name) in [
            ("npx -y @modelcontextprotocol/server-github", "github"),
            ("npx foo name", "foo"),
            ("uvx mcp-server-fetch", "fetch"),
            (
                "docker run -i --rm ghcr.io/github/github-mcp-server:latest",
                "github",
            ),
            ("node ./build/index.js", "index"),
            ("python -m weather_mcp", "weather"),
            ("npx", "my-server"),
        ] {
            assert_eq!(suggest_name(&words(command)), name, "{command}");
        }
    }

    #[test]
    fn assignments_have_variable_like_keys() {
        assert!(is_assignment("B=2"));
        assert!(is_assignment("_X="));
        assert!(!is_assignment("=2"));
        assert!(!is_assignment("--opt=2"));
        assert!(!is_assignment("https://x/?a=b"));
    }
}
