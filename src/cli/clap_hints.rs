//! Clap's errors for habits people bring from `claude mcp` and other tools,
//! rewritten as one line and the corrected command line: `run claude
//! --version` (no `--`), `-s globl`. Other clap errors stay as clap words
//! them.

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::error::CliError;
use crate::cli::resolve::shell_words;

/// What the scope words people type mean (`global` is accepted as `user`).
const SCOPES: &[(&str, &str)] = &[
    ("local", "local"),
    ("project", "project"),
    ("user", "user"),
    ("global", "user"),
];

/// Global options that take a value, to find the subcommand among `words`.
const GLOBAL_WITH_VALUE: &[&str] = &["-C", "--project-dir", "--color"];

/// Our error for `error`, given the words after the program name; `None`
/// when clap's own message is the best there is.
pub fn rewrite(error: &clap::Error, words: &[String]) -> Option<CliError> {
    let subcommand = subcommand_index(words)?;
    match error.kind() {
        ErrorKind::UnknownArgument if words[subcommand] == "run" => {
            run_without_dashes(words, subcommand)
        }
        ErrorKind::InvalidValue
            if context(error, ContextKind::InvalidArg)?.starts_with("--scope") =>
        {
            invalid_scope(&context(error, ContextKind::InvalidValue)?, words)
        }
        _ => None,
    }
}

fn context(error: &clap::Error, kind: ContextKind) -> Option<String> {
    match error.get(kind)? {
        ContextValue::String(text) => Some(text.clone()),
        _ => None,
    }
}

/// The `hint:` line that ends one of clap's own errors, in place of its
/// "For more information, try '--help'.": the help of the command the
/// words name (one level of nesting, as `secrets list`), else mcpenv's.
pub fn help_hint(words: &[String]) -> String {
    let command = <crate::cli::args::Cli as clap::CommandFactory>::command();
    let mut named = vec!["mcpenv".to_string()];
    if let Some(index) = subcommand_index(words)
        && let Some(found) = command.find_subcommand(&words[index])
    {
        named.push(found.get_name().to_string());
        if let Some(nested) = words.get(index + 1)
            && let Some(found) = found.find_subcommand(nested)
        {
            named.push(found.get_name().to_string());
        }
    }
    format!("see `{} --help`", named.join(" "))
}

fn subcommand_index(words: &[String]) -> Option<usize> {
    let mut index = 0;
    while index < words.len() {
        let word = words[index].as_str();
        if GLOBAL_WITH_VALUE.contains(&word) {
            index += 2;
        } else if word.starts_with('-') {
            index += 1;
        } else {
            return Some(index);
        }
    }
    None
}

/// `run claude --version`: `run`'s own options stay before `--`, the rest
/// goes after it.
fn run_without_dashes(words: &[String], subcommand: usize) -> Option<CliError> {
    let mut corrected: Vec<String> = std::iter::once("mcpenv".to_string())
        .chain(words[..=subcommand].iter().cloned())
        .collect();
    let mut rest = words[subcommand + 1..].iter();
    let mut command = Vec::new();
    while let Some(word) = rest.next() {
        if word == "--env-file" {
            corrected.push(word.clone());
            corrected.extend(rest.next().cloned());
        } else if word.starts_with("--env-file=") {
            corrected.push(word.clone());
        } else {
            command.push(word.clone());
            command.extend(rest.by_ref().cloned());
        }
    }
    // An unknown option of `run` itself (`--env-fil`) is clap's to report.
    let program = command
        .first()
        .filter(|word| !word.starts_with('-'))?
        .clone();
    corrected.push("--".to_string());
    corrected.extend(command);
    Some(
        CliError::usage(format!(
            "the command to run goes after `--`, so that `{program}`'s options are not read as mcpenv's"
        ))
        .with_hint(format!("did you mean `{}`?", shell_words(&corrected))),
    )
}

/// `-s globl`: the nearest scope (by edits, so `global` never becomes
/// `local`), in the command line as typed.
fn invalid_scope(value: &str, words: &[String]) -> Option<CliError> {
    let names: Vec<&str> = SCOPES.iter().map(|(name, _)| *name).collect();
    let error = CliError::usage(format!(
        "invalid scope `{value}`: use `local`, `project` or `user`"
    ));
    let Some(close) = crate::ops::names::closest(&names, value) else {
        return Some(error.with_hint("`local`: you, this project; `project`: the team, in `.mcp.json`; `user`: you, every project"));
    };
    let scope = SCOPES.iter().find(|(name, _)| *name == close)?.1;
    let mut corrected = vec!["mcpenv".to_string()];
    let mut after_flag = false;
    for word in words {
        let replaced = if after_flag && word == value {
            scope.to_string()
        } else if word.strip_prefix("--scope=") == Some(value) {
            format!("--scope={scope}")
        } else if word.strip_prefix("-s") == Some(value) {
            format!("-s{scope}")
        } else {
            word.clone()
        };
        after_flag = word == "-s" || word == "--scope";
        corrected.push(replaced);
    }
    Some(error.with_hint(format!("did you mean `{}`?", shell_words(&corrected))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::Cli;
    use clap::Parser;

    fn rendered(argv: &[&str]) -> String {
        let words: Vec<String> = argv.iter().map(|word| (*word).to_string()).collect();
        let error =
            Cli::try_parse_from(std::iter::once("mcpenv").chain(argv.iter().copied())).unwrap_err();
        let mut out = Vec::new();
        rewrite(&error, &words).unwrap().render(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn scopes_are_corrected_by_edits() {
        assert!(rendered(&["list", "-s", "globl"]).contains("`mcpenv list -s user`"));
        assert!(rendered(&["list", "--scope=projet"]).contains("`mcpenv list '--scope=project'`"));
        assert!(rendered(&["list", "-slocl"]).contains("`mcpenv list -slocal`"));
    }

    #[test]
    fn run_options_stay_before_the_dashes() {
        assert!(
            rendered(&["-q", "run", "--env-file", "a.env", "claude", "--version"])
                .contains("`mcpenv -q run --env-file a.env -- claude --version`")
        );
        assert!(
            rendered(&["run", "claude", "-x", "--", "y"])
                .contains("`mcpenv run -- claude -x -- y`")
        );
    }
}
