//! What an extraction plan is made from (the values variables already
//! have, the target of a definition) and its errors.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::scope::Scope;
use crate::config::store::Target;
use crate::envfiles::EnvFilesError;
use crate::envfiles::dotenv::DotEnv;
use crate::ops::{Context, Error, Kind};
use crate::secrets::extraction_plan::{ExtractError, KnownValues};

/// The write target of a definition found in `file`.
pub fn target_of(ctx: &Context, scope: Scope, file: &std::path::Path) -> Target {
    let mut target = Target::for_scope(&ctx.locations, scope);
    target.path = file.to_path_buf();
    target
}

/// Values variables already have, as `mcpenv run` would give them: the
/// process environment, then each dotenv file in precedence order.
pub struct Known {
    process: BTreeMap<String, String>,
    files: Vec<DotEnv>,
}

impl KnownValues for Known {
    fn value(&self, name: &str) -> Option<String> {
        self.process.get(name).cloned().or_else(|| {
            self.files
                .iter()
                .find_map(|file| file.get(name).map(str::to_string))
        })
    }

    fn provides(&self, file: &Path, name: &str, value: &str) -> bool {
        self.process.get(name).map(String::as_str) == Some(value)
            || self
                .files
                .iter()
                .any(|known| known.path == file && known.get(name) == Some(value))
    }
}

/// The values variables already have (see [`Known`]).
pub fn known_values(ctx: &Context) -> Result<Known, Error> {
    let sources = ctx.env_sources()?;
    Ok(Known {
        files: sources.dotenv_files().into_iter().cloned().collect(),
        process: sources.process,
    })
}

/// The CLI error for a plan that cannot be made.
pub fn plan_error(error: ExtractError) -> Error {
    let hint = match &error {
        ExtractError::BreaksJson { .. } => {
            "nothing was written; move the whole value by hand instead: the JSON into `.env` under the variable's name, and `${NAME}` in its place"
        }
    };
    Error::new(Kind::Failure, Box::new(error)).with_hint(hint)
}

/// The CLI error for a `.env` problem.
pub fn env_error(error: EnvFilesError) -> Error {
    let hint = match &error {
        EnvFilesError::ReadableByOthers { path, .. } => {
            format!(
                "make it private with `chmod 600 {}`, or pass `--force`",
                path.display()
            )
        }
        EnvFilesError::Unquotable { .. } => {
            "set that variable by hand; nothing was changed".to_string()
        }
        EnvFilesError::Malformed { path, .. } => {
            format!("fix `{}` by hand; nothing was changed", path.display())
        }
        EnvFilesError::LeavesRepository(_) => crate::ops::hints::LEAVES_REPOSITORY.to_string(),
        EnvFilesError::TargetNotIgnored { target, .. } => format!(
            "add `{}` to `.gitignore`, or replace the link with a regular file; nothing was changed",
            target.display()
        ),
        EnvFilesError::Folder { folder, .. } => format!(
            "make `{}` a folder mcpenv can write (move away what is there), then run the command again; nothing in the configs was changed",
            folder.display()
        ),
        _ => "nothing in the configs was changed; fix the problem and run the command again"
            .to_string(),
    };
    Error::new(Kind::Failure, Box::new(error)).with_hint(hint)
}

impl Known {
    /// The value `name` resolves to, for code that wants a plain lookup.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.value(name)
    }
}
