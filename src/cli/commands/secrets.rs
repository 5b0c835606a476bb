//! `mcpenv secrets`: the variables of the dotenv files mcpenv reads here
//! (`list`), removing one (`rm`), and moving a value between its dotenv
//! file and the OS keychain (`move`). Never shows a value.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::args::{SecretsMoveArgs, SecretsRmArgs};
use crate::cli::error::CliError;
use crate::cli::render::{Cell, DIM, Report, table};
use crate::cli::resolve::Ctx;
use crate::ops::secret_stores::SecretStore;
use crate::ops::secret_variables::{self, MovedVariable, RemovedVariable, SecretList};

/// `secrets list`: one row per assignment.
#[derive(Debug, Serialize)]
pub struct ListOutput {
    /// The variables.
    #[serde(flatten)]
    pub list: SecretList,
    #[serde(skip)]
    add_hint: String,
}

impl Report for ListOutput {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.list.variables.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self
            .list
            .variables
            .iter()
            .map(|variable| {
                let style = if variable.shadowed_by.is_some() {
                    DIM
                } else {
                    anstyle::Style::new()
                };
                let used_by = match (&variable.shadowed_by_shown, variable.servers.is_empty()) {
                    (Some(winner), _) => format!("shadowed by {winner}"),
                    (None, true) => "unused".to_string(),
                    (None, false) => variable.servers.join(", "),
                };
                let reference = variable.reference.clone().unwrap_or_default();
                vec![
                    Cell::styled(&variable.name, style),
                    Cell::styled(variable.kept.as_str(), style),
                    Cell::styled(&variable.file_shown, style),
                    Cell::styled(used_by, style),
                    Cell::last(reference, style),
                ]
            })
            .collect();
        table(
            out,
            &["NAME", "VALUE", "FILE", "USED BY", "REFERENCE"],
            &rows,
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        if self.list.variables.is_empty() {
            writeln!(err, "No dotenv file mcpenv reads here sets a variable")?;
            writeln!(
                err,
                "hint: save the values servers need with `{}`",
                self.add_hint
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv secrets list`.
pub fn list(ctx: &Ctx) -> Result<ListOutput, CliError> {
    Ok(ListOutput {
        list: secret_variables::list(ctx)?,
        add_hint: ctx.command(&["onboard"]),
    })
}

/// What `secrets rm` did.
#[derive(Debug, Serialize)]
pub struct RemoveOutput {
    /// The variable, its file, and its keychain entry.
    #[serde(flatten)]
    pub removed: RemovedVariable,
}

impl Report for RemoveOutput {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        let removed = &self.removed;
        writeln!(
            err,
            "Removed `{}` from `{}`",
            removed.name, removed.file_shown
        )?;
        if let Some(entry) = &removed.keychain_entry {
            if entry.existed {
                writeln!(
                    err,
                    "Deleted its keychain entry `{}` (service `mcpenv`)",
                    entry.account
                )?;
                // Named by the repository's remote: every clone shares it.
                if !entry.account.starts_with('/')
                    && !entry
                        .account
                        .starts_with(&format!("{}/", crate::stores::keychain::USER))
                {
                    writeln!(
                        err,
                        "note: other clones of this repository on this machine that name it have lost the value too"
                    )?;
                }
            } else {
                writeln!(
                    err,
                    "Its keychain entry `{}` was already gone",
                    entry.account
                )?;
            }
        }
        if !removed.still_set_in_shown.is_empty() {
            let files: Vec<String> = removed
                .still_set_in_shown
                .iter()
                .map(|file| format!("`{file}`"))
                .collect();
            writeln!(
                err,
                "note: `{}` is still set in {}, whose value is now in effect",
                removed.name,
                files.join(", ")
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv secrets rm`.
pub fn remove(ctx: &Ctx, args: &SecretsRmArgs) -> Result<RemoveOutput, CliError> {
    Ok(RemoveOutput {
        removed: secret_variables::remove(ctx, &args.name)?,
    })
}

/// What `secrets move` did.
#[derive(Debug, Serialize)]
pub struct MoveOutput {
    /// The variable, its file, where it went.
    #[serde(flatten)]
    pub moved: MovedVariable,
}

impl Report for MoveOutput {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        let moved = &self.moved;
        let (name, file) = (&moved.name, &moved.file_shown);
        let account = moved.account.as_deref().unwrap_or_default();
        match (moved.to, moved.moved) {
            (SecretStore::Keychain, true) => writeln!(
                err,
                "Moved `{name}` into the keychain (account `{account}`); `{file}` now holds `keychain:{account}`"
            ),
            (SecretStore::Keychain, false) => writeln!(
                err,
                "`{name}` is already kept in the keychain (account `{account}`); nothing was changed"
            ),
            (SecretStore::Dotenv, true) => writeln!(
                err,
                "Moved `{name}` out of the keychain into `{file}`; deleted the entry `{account}`"
            ),
            (SecretStore::Dotenv, false) => writeln!(
                err,
                "`{name}` is already in `{file}`, not in the keychain; nothing was changed"
            ),
        }
    }
}

/// Runs `mcpenv secrets move`.
pub fn move_to(ctx: &Ctx, args: &SecretsMoveArgs) -> Result<MoveOutput, CliError> {
    Ok(MoveOutput {
        moved: secret_variables::move_to(ctx, &args.name, args.to.into())?,
    })
}
