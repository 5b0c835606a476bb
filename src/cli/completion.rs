//! Shell completion through clap_complete's dynamic completion: the shell
//! asks mcpenv itself (`MCPENV_COMPLETE=<shell> mcpenv -- <words>`), so
//! server names, templates and secrets' variables complete from the
//! project the shell is in, and flags and value enums (scopes, clients,
//! transports) from the command line's definition.
//!
//! Names come from files a repository wrote (`.mcp.json`, its templates),
//! so a candidate is text a shell will insert into a command line. A name
//! holding a character that cannot be shown or inserted safely (a control
//! character, a bidirectional control) is not offered at all; every other
//! name is quoted for the shell that asked, so that the inserted word is
//! the name, as one argument, and runs nothing (`gh$(touch PWNED)`). zsh,
//! fish and elvish quote what they insert themselves; bash and PowerShell
//! insert a candidate as it is, so mcpenv quotes it for them.

use std::ffi::OsString;
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

use clap::{CommandFactory, Parser};
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{CompleteEnv, Shells};

use crate::cli::args::Cli;
use crate::cli::output::Shield;
use crate::cli::resolve::{Ctx, resolve};
use crate::mechanics::display;

/// The variable the registration scripts set when they ask for
/// completions; mcpenv's own, so a `COMPLETE` set for another tool is
/// never taken for a request.
pub const VAR: &str = "MCPENV_COMPLETE";

/// Answers a completion request and exits, when this run is one.
pub fn answer_if_asked() {
    // clap_complete clears the variable before it asks for candidates.
    let _ = ASKING.set(match std::env::var(VAR).as_deref() {
        Ok("bash") => Asking::Bash,
        Ok("powershell" | "pwsh" | "powershell_ise") => Asking::PowerShell,
        _ => Asking::Quoting,
    });
    CompleteEnv::with_factory(Cli::command).var(VAR).complete();
}

/// The shell asking for completions, read before clap_complete clears
/// [`VAR`].
static ASKING: OnceLock<Asking> = OnceLock::new();

/// Writes the script that registers mcpenv's completions with `shell`.
pub fn write_registration(shell: &str, out: &mut dyn Write) -> io::Result<()> {
    let shells = Shells::builtins();
    let Some(completer) = shells.completer(shell) else {
        return Err(io::Error::other(format!(
            "no completion for the shell `{shell}`"
        )));
    };
    let mut script = Vec::new();
    completer.write_registration(VAR, "mcpenv", "mcpenv", &completer_path(), &mut script)?;
    if completer.name() == "bash" {
        script = without_globbing(&String::from_utf8_lossy(&script)).into_bytes();
    }
    out.write_all(&script)
}

/// The function clap_complete's bash script registers.
const BASH_FUNCTION: &str = "_clap_complete_mcpenv";

/// clap_complete's bash script with its function wrapped so that bash
/// does not glob the candidates it reads through an unquoted `$(…)`: a
/// server named `gh$(touch PWNED)*` next to a file of that name would come
/// back as the file's name, unescaped. The candidates' glob characters are
/// escaped, but whether bash still matches such a word against files has
/// differed between bash versions; with globbing off, none does.
/// clap_complete offers no option for this; a unit test fails if its
/// script changes shape.
fn without_globbing(script: &str) -> String {
    let inner = "_mcpenv_complete_unglobbed";
    let defined = format!("{BASH_FUNCTION}() {{");
    if !script.contains(&defined) {
        return script.to_owned();
    }
    let script = script.replacen(&defined, &format!("{inner}() {{"), 1);
    // `set -f` for the call only, restored as it was (`local -` would need
    // bash 4.4; macOS ships 3.2).
    let wrapper = format!(
        "{BASH_FUNCTION}() {{\n    \
         local _mcpenv_noglob=0\n    \
         [[ $- == *f* ]] && _mcpenv_noglob=1\n    \
         set -f\n    \
         {inner} \"$@\"\n    \
         local _mcpenv_status=$?\n    \
         [[ $_mcpenv_noglob == 1 ]] || set +f\n    \
         return $_mcpenv_status\n\
         }}\n"
    );
    format!("{wrapper}{script}")
}

/// How the script calls mcpenv back: by name when it was started by name
/// (found on PATH then too), else by its full path (`target/debug/mcpenv`).
fn completer_path() -> String {
    let started_as = std::env::args_os()
        .next()
        .unwrap_or_else(|| OsString::from("mcpenv"));
    if std::path::Path::new(&started_as)
        .components()
        .nth(1)
        .is_none()
    {
        return started_as.to_string_lossy().into_owned();
    }
    std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| started_as.to_string_lossy().into_owned())
}

/// The context of the directory the shell is in. A completion has no
/// `-C` and prints nothing of its own: `None` when the world cannot be
/// read.
fn here() -> Option<Ctx> {
    let cli = Cli::try_parse_from(["mcpenv", "list"]).ok()?;
    resolve(&cli, Arc::new(Shield::default())).ok()
}

/// Every server name in effect here.
pub fn server_names() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    let inventory = crate::config::inventory::Inventory::load_all(&ctx.locations);
    let shell = asking_shell();
    inventory
        .names()
        .into_iter()
        .filter_map(|name| {
            let help = inventory
                .winner(name)
                .map(|winner| format!("{} scope", winner.scope));
            candidate(shell, name, help.as_deref())
        })
        .collect()
}

/// Every template name: shipped, the user's and the project's.
pub fn template_names() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    let shell = asking_shell();
    crate::templates::all(&ctx.template_dirs)
        .0
        .iter()
        .filter_map(|template| candidate(shell, &template.name, template.server.title.as_deref()))
        .collect()
}

/// Every variable of the dotenv files mcpenv reads here.
pub fn dotenv_variables() -> Vec<CompletionCandidate> {
    let Some(ctx) = here() else {
        return Vec::new();
    };
    let Ok(sources) = ctx.env_sources() else {
        return Vec::new();
    };
    let mut names: Vec<&str> = sources
        .dotenv_files()
        .into_iter()
        .flat_map(|file| file.entries().map(|(name, _)| name))
        .collect();
    names.sort_unstable();
    names.dedup();
    let shell = asking_shell();
    names
        .into_iter()
        .filter_map(|name| candidate(shell, name, None))
        .collect()
}

/// The shells whose completion mcpenv answers, as far as quoting goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asking {
    /// Inserts a candidate as it is, and reads it back as shell words.
    Bash,
    /// Inserts a candidate as it is, and reads it back as PowerShell.
    PowerShell,
    /// zsh, fish and elvish: each quotes what it inserts.
    Quoting,
}

/// The shell this completion request comes from (`MCPENV_COMPLETE`, set
/// by the registration script).
fn asking_shell() -> Asking {
    ASKING.get().copied().unwrap_or(Asking::Quoting)
}

/// The candidate for `name`, quoted for `shell`, with `help` shown
/// escaped; `None` when `name` holds a character no command line should
/// receive from a completion.
fn candidate(shell: Asking, name: &str, help: Option<&str>) -> Option<CompletionCandidate> {
    if name.is_empty() || name.chars().any(display::is_unsafe) {
        return None;
    }
    let value = match shell {
        Asking::Bash => bash_word(name),
        Asking::PowerShell => powershell_word(name),
        Asking::Quoting => name.to_owned(),
    };
    let help = help.map(|help| display::escape(help).into_owned());
    Some(CompletionCandidate::new(value).help(help.map(Into::into)))
}

/// Characters a shell word may hold unquoted, as the start of a word or
/// anywhere in it.
fn plain_in_a_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./:@,+%".contains(c) || !c.is_ascii()
}

/// `name` as one bash word: each character with a meaning to the shell
/// behind a backslash. Backslashes, rather than quotes, so that what was
/// typed (`gh`) is still a prefix of the candidate.
fn bash_word(name: &str) -> String {
    let mut word = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if !plain_in_a_word(c) {
            word.push('\\');
        }
        word.push(c);
    }
    word
}

/// `name` as one PowerShell argument: as it is when plain ASCII, else in
/// single quotes, where nothing expands and a quote is doubled (PowerShell
/// takes the typographic single quotes for quotes too, and typographic
/// dashes and double quotes for their ASCII kin, hence ASCII only bare).
fn powershell_word(name: &str) -> String {
    const SINGLE_QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201a}', '\u{201b}'];
    let bare = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./:".contains(c));
    if bare {
        return name.to_owned();
    }
    let mut word = String::from("'");
    for c in name.chars() {
        if SINGLE_QUOTES.contains(&c) {
            word.push(c);
        }
        word.push(c);
    }
    word.push('\'');
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_words_escape_what_the_shell_reads() {
        assert_eq!(bash_word("github"), "github");
        assert_eq!(bash_word("gh$(touch PWNED)"), r"gh\$\(touch\ PWNED\)");
        assert_eq!(bash_word("it's `x` *?[a]"), r"it\'s\ \`x\`\ \*\?\[a\]");
        assert_eq!(
            bash_word("~a=b;c&d|e<f>g\"h\\"),
            r#"\~a\=b\;c\&d\|e\<f\>g\"h\\"#
        );
        assert_eq!(bash_word("café-1.0:x@y,z+%"), "café-1.0:x@y,z+%");
    }

    #[test]
    fn powershell_words_are_single_quoted_unless_plain() {
        assert_eq!(powershell_word("github"), "github");
        assert_eq!(powershell_word("gh$(x)"), "'gh$(x)'");
        assert_eq!(powershell_word("-x"), "'-x'");
        assert_eq!(powershell_word("it's \u{2019}"), "'it''s \u{2019}\u{2019}'");
    }

    #[test]
    fn unsafe_names_are_not_offered_and_help_is_escaped() {
        for name in ["", "a\u{1b}]0;x\u{7}", "a\nb", "a\u{202e}b", "a\tb"] {
            assert!(candidate(Asking::Bash, name, None).is_none(), "{name:?}");
            assert!(candidate(Asking::Quoting, name, None).is_none(), "{name:?}");
        }
        let offered = candidate(Asking::Quoting, "gh$(x)", Some("a\u{1b}[2Jb")).unwrap();
        assert_eq!(offered.get_value(), "gh$(x)");
        assert_eq!(offered.get_help().unwrap().to_string(), r"a\u{1b}[2Jb");
    }

    #[test]
    fn the_bash_script_is_wrapped_once() {
        let mut out = Vec::new();
        write_registration("bash", &mut out).unwrap();
        let script = String::from_utf8(out).unwrap();
        assert_eq!(
            script.matches("_clap_complete_mcpenv() {").count(),
            1,
            "{script}"
        );
        assert_eq!(
            script.matches("_mcpenv_complete_unglobbed() {").count(),
            1,
            "{script}"
        );
        assert!(
            script.contains("-F _clap_complete_mcpenv mcpenv"),
            "{script}"
        );
    }
}
