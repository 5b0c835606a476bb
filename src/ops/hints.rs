//! What to do next about the errors of the core: hints every front-end
//! shows (the CLI under `hint:`, `serve` in a tool's error text).

use crate::config::error::ConfigError;
use crate::envfiles::dotenv::DotEnvError;
use crate::mechanics::fsx::{LockError, LockKind};
use crate::ops::{Error, Kind};

/// What to do about a repository's file that leads out of the repository.
pub const LEAVES_REPOSITORY: &str = "mcpenv reads and writes a repository's files only inside it: replace the link with a regular file (or point it inside the repository); nothing was changed";

/// The hints for a file error: what to do next.
pub fn config_hints(error: &ConfigError) -> Vec<String> {
    let one = |hint: &str| vec![hint.to_string()];
    match error {
        ConfigError::Read { source, .. } | ConfigError::Write { source, .. }
            if crate::mechanics::fsx::LeavesRepository::in_io(source).is_some() =>
        {
            one(LEAVES_REPOSITORY)
        }
        ConfigError::Syntax { .. } => {
            one("fix the file by hand: mcpenv never rewrites a file it cannot parse")
        }
        ConfigError::Shape { .. } => {
            one("fix that value by hand: mcpenv never rewrites a file it cannot make sense of")
        }
        ConfigError::NotRegular { .. } => one(
            "mcpenv reads only regular files and never opens anything else there: move it away, or put a regular file in its place",
        ),
        ConfigError::Empty {
            claude_refuses: true,
            ..
        } => vec![
            "Claude Code refuses an empty `.claude.json` too (it reports it as corrupted)".to_string(),
            "restore it from Claude Code's backups (`~/.claude/backups/`), or delete it: Claude Code creates a new one when it starts".to_string(),
        ],
        ConfigError::Empty { .. } => one(
            "Claude Code reads an empty `.mcp.json` as no servers, but it may be a file truncated by accident, so mcpenv does not write over it: delete it, or write `{}` in it, and run the command again",
        ),
        ConfigError::TooDeep { .. } => one(
            "mcpenv does not read values nested that deep: make that value shallower by hand",
        ),
        ConfigError::TooLarge { .. } => one(
            "Claude Code skips a `.mcp.json` over 2 MiB (2,097,152 bytes): make it smaller by hand",
        ),
        ConfigError::Read { .. } => one("check that the file is readable and is UTF-8 text"),
        ConfigError::Write { .. } => {
            one("check that its directory is writable; the file was left as it was")
        }
        ConfigError::Lock { source, .. } => lock_hints(source),
        ConfigError::LockTimeout { .. } => {
            one("another mcpenv is editing it; try again when it has finished")
        }
        ConfigError::Contended { .. } => one(
            "another program (a running Claude Code?) kept rewriting it; the file was left as it was, try again",
        ),
        ConfigError::Overwritten { .. } => one(
            "another program (a running Claude Code?) saved a copy it had read before mcpenv's change; run the same command again",
        ),
    }
}

/// What to do about a lock that could not be taken; the file was left as
/// it was in every case.
pub fn lock_hints(error: &LockError) -> Vec<String> {
    match error {
        LockError::Io { path, .. } => vec![format!(
            "mcpenv keeps its lock files in its state directory (`$XDG_STATE_HOME/mcpenv`, else `~/.local/state/mcpenv`): make `{}` writable; the file was left as it was",
            path.display()
        )],
        LockError::Edit { .. } => vec![
            "another mcpenv is editing the same file; try again when it has finished".to_string(),
        ],
        LockError::Claude { lock, kind, .. } => {
            let remove = match kind {
                LockKind::EmptyDirectory => "rmdir",
                LockKind::Directory => "rm -r",
                LockKind::File => "rm",
            };
            vec![
                "Claude Code holds this lock while it writes, and keeps it fresh while it lives; try again in a moment".to_string(),
                format!(
                    "if no Claude Code is running, the lock is left over: remove it with `{remove} {}`",
                    crate::mechanics::display::shell_words(&[lock.display().to_string()])
                ),
            ]
        }
    }
}

/// What to do about a dotenv file that cannot be read.
pub fn dotenv_hint(error: &DotEnvError) -> &'static str {
    match error {
        DotEnvError::NotRegular { .. } => {
            "replace it with a regular file (or remove it); mcpenv never opens a FIFO, socket or device"
        }
        DotEnvError::Read { .. } => "check the file's permissions",
        DotEnvError::NotUtf8 { .. } => "save the file as UTF-8 text",
    }
}

/// The template whose name is nearest `name`, when one is close.
pub fn similar_template(ctx: &crate::ops::Context, name: &str) -> Option<String> {
    let names: Vec<String> = crate::templates::all(&ctx.template_dirs)
        .0
        .into_iter()
        .map(|template| template.name)
        .collect();
    crate::ops::names::closest(&names, name).map(str::to_string)
}

/// The error for a template problem, with where to look next.
pub fn template_error(ctx: &crate::ops::Context, error: crate::templates::TemplateError) -> Error {
    let hint = match &error {
        crate::templates::TemplateError::NotFound(name) => match similar_template(ctx, name) {
            Some(close) => format!(
                "did you mean `{close}`? `{}` lists them all",
                ctx.command(&["templates", "list"])
            ),
            None => format!(
                "see the templates with `{}`, or pass a `server.json` file",
                ctx.command(&["templates", "list"])
            ),
        },
        crate::templates::TemplateError::Malformed { .. } => {
            "fix that field; the format is the MCP Registry's server.json".to_string()
        }
        crate::templates::TemplateError::Read { .. } => "check the path".to_string(),
        crate::templates::TemplateError::NoSuchChoice { name, .. } => format!(
            "see what it offers with `{}`",
            ctx.command(&["templates", "show", name])
        ),
        crate::templates::TemplateError::Unsupported { name, .. } => format!(
            "see what it offers with `{}`",
            ctx.command(&["templates", "show", name])
        ),
    };
    // Even `--remote 2` depends on the template's file, not on the arguments alone.
    Error::new(Kind::Failure, Box::new(error)).with_hint(hint)
}
