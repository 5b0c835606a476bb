//! Writing the project's `.env`, `.env.example` and `.gitignore`, and the
//! user's own store: each an atomic, locked, line-preserving edit. `.gitignore` gets its `.env` rule
//! before `.env` is created, and every caller writes these files before
//! any config, so a config never holds a placeholder whose value was not
//! saved.

pub mod assignments;
pub mod dotenv;
pub mod sources;

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::config::store::{self, Progress};
use crate::envfiles::dotenv::QuoteError;
use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::{self, NewMode, TextEditError};
use crate::mechanics::git_files::git_ignores;

/// Why the `.env` files could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EnvFilesError {
    /// `.env` can be read by other users; secrets are not added to it.
    #[error("`{}` is readable by other users (mode {mode:o}); no secret was written to it", path.display())]
    ReadableByOthers {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A value cannot be written so that dotenvy reads it back exactly.
    #[error("the value of `{name}` cannot be written to `.env`")]
    Unquotable {
        /// The variable.
        name: String,
        /// Why.
        #[source]
        source: QuoteError,
    },
    /// The existing file cannot take new lines safely (an open quote).
    #[error("`{}` cannot be added to safely", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: QuoteError,
    },
    /// A variable's line cannot be removed without changing how the rest
    /// of the file reads.
    #[error("a line of `{}` cannot be removed safely", path.display())]
    Entangled {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: QuoteError,
    },
    /// A file of the repository leads out of it through a symbolic link:
    /// nothing is read or written there.
    #[error(transparent)]
    LeavesRepository(#[from] fsx::LeavesRepository),
    /// A dotenv file for secrets leads, through a symbolic link, to a file
    /// of the repository that git does not ignore, so would commit.
    #[error("`{}` leads to `{}`, which git does not ignore", path.display(), target.display())]
    TargetNotIgnored {
        /// The dotenv file, as named.
        path: PathBuf,
        /// The file it leads to.
        target: PathBuf,
    },
    /// Reading or writing a file failed.
    #[error("failed to write `{}`", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The folder a new file goes in could not be created (a file, or a
    /// link to nowhere, is where it should be; the disk is full).
    #[error("cannot create the folder `{}` for `{}`", folder.display(), path.display())]
    Folder {
        /// The file to be written.
        path: PathBuf,
        /// The folder.
        folder: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Another process kept the file locked.
    #[error("timed out waiting for the lock on `{}`", path.display())]
    Locked {
        /// The file.
        path: PathBuf,
    },
    /// The file kept changing during the edit.
    #[error("`{}` kept changing while mcpenv was editing it", path.display())]
    Contended {
        /// The file.
        path: PathBuf,
    },
}

/// The three files of a project root.
#[derive(Debug, Clone)]
pub struct EnvFiles {
    /// `.env`: the values, never committed.
    pub env: PathBuf,
    /// `.env.example`: the names, committed.
    pub example: PathBuf,
    /// `.gitignore`.
    pub gitignore: PathBuf,
}

impl EnvFiles {
    /// The files at `root`.
    pub fn at(root: &Path) -> Self {
        Self {
            env: root.join(".env"),
            example: root.join(".env.example"),
            gitignore: root.join(".gitignore"),
        }
    }
}

/// Which files an edit changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

/// Whether `.env` at `path` may receive secrets: inside the repository and
/// git-ignored where it really is ([`check_secret_file`]), and absent or
/// not readable by group or others (unless `force`).
pub fn check_private(path: &Path, force: bool) -> Result<(), EnvFilesError> {
    check_secret_file(path)?;
    match std::fs::metadata(path) {
        Ok(metadata) => {
            // No mode on Windows: the file is private by its access list.
            let Some(mode) = fsx::os::mode(&metadata).map(|mode| mode & 0o777) else {
                return Ok(());
            };
            if mode & 0o044 != 0 && !force {
                return Err(EnvFilesError::ReadableByOthers {
                    path: path.to_path_buf(),
                    mode,
                });
            }
            Ok(())
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(EnvFilesError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Whether the dotenv file at `path` may hold secrets where it really is:
/// a repository's file that leads out of the repository is refused, and so
/// is one that leads (a symbolic link, perhaps to a file not there yet) to
/// a file of the repository git does not ignore, which would commit the
/// secrets written to it.
pub fn check_secret_file(path: &Path) -> Result<(), EnvFilesError> {
    check_confined(path)?;
    let Some(target) = fsx::link_target(path) else {
        return Ok(());
    };
    let ignored = path.parent().and_then(|dir| git_ignores(dir, &target));
    if ignored == Some(false) {
        return Err(EnvFilesError::TargetNotIgnored {
            path: path.to_path_buf(),
            target,
        });
    }
    Ok(())
}

/// Refuses a repository's file at `path` that leads out of the repository
/// ([`fsx::check_confined`]): what every step checks of every file it will
/// write before writing the first.
pub fn check_confined(path: &Path) -> Result<(), EnvFilesError> {
    fsx::check_confined(path).map_err(|source| io_error(path, source))
}

/// An I/O error about `path`, the refusal of a link leading out of the
/// repository as itself.
fn io_error(path: &Path, source: io::Error) -> EnvFilesError {
    match fsx::LeavesRepository::in_io(&source) {
        Some(leaves) => EnvFilesError::LeavesRepository(leaves.clone()),
        None => EnvFilesError::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Makes the dotenv file at `path` private (0600) when other users can read
/// it, before secrets go in, unless `force` keeps its mode: `cp
/// .env.example .env` leaves a teammate's `.env` at the umask's 0644.
/// Returns the mode it had when it changed it.
pub fn make_private(edit: &Edit, path: &Path, force: bool) -> Result<Option<u32>, EnvFilesError> {
    if force {
        return Ok(None);
    }
    let io_error = |source| EnvFilesError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_file() => metadata,
        // Absent (created 0600), or not a regular file (refused later).
        Ok(_) => return Ok(None),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io_error(source)),
    };
    // No mode on Windows: the file is private by its access list.
    let Some(mode) = fsx::os::mode(&metadata) else {
        return Ok(None);
    };
    if mode & 0o044 == 0 {
        return Ok(None);
    }
    edit.make_private(path, mode, Some(mode & 0o777), || {
        fsx::os::set_mode(path, mode & 0o7700).map_err(io_error)?;
        Ok(Some(mode & 0o777))
    })
}

/// The files [`save_with`] may write for these arguments, in the order it
/// writes them: `.gitignore`, `.env`, `.env.example`.
pub fn planned(
    files: &EnvFiles,
    values: &[(String, String)],
    example: &[dotenv::ExampleLine],
) -> Vec<PathBuf> {
    let mut planned = vec![files.gitignore.clone()];
    if !values.is_empty() {
        planned.push(files.env.clone());
    }
    if !example.is_empty() {
        planned.push(files.example.clone());
    }
    planned
}

/// Adds `values` to `.env` (new files are 0600), documents `example`
/// variables in `.env.example`, and makes sure `.gitignore` ignores `.env`,
/// which it does first: a `.env` never exists, even for a moment, that git
/// would add. See [`save_with`].
pub fn save(
    edit: &Edit,
    files: &EnvFiles,
    state_dir: &Path,
    values: &[(String, String)],
    example: &[dotenv::ExampleLine],
    force: bool,
) -> Result<Saved, EnvFilesError> {
    let mut progress = Progress::default();
    save_with(
        edit,
        files,
        state_dir,
        values,
        example,
        force,
        &mut progress,
    )?;
    Ok(Saved {
        written: progress.into_written(),
    })
}

/// [`save`], recording each file in `progress` as it is done, so a failure
/// part way leaves `progress` saying which files were written.
pub fn save_with(
    edit: &Edit,
    files: &EnvFiles,
    state_dir: &Path,
    values: &[(String, String)],
    example: &[dotenv::ExampleLine],
    force: bool,
    progress: &mut Progress,
) -> Result<(), EnvFilesError> {
    // Every file first, so a refusal leaves all of them as they were.
    for path in planned(files, values, example) {
        check_confined(&path)?;
    }
    if !values.is_empty() {
        check_private(&files.env, force)?;
    }
    let changed = !git_ignores_dotenv(files)
        && edit_text(
            edit,
            state_dir,
            &files.gitignore,
            NewMode::Umasked(0o644),
            gitignore_change,
        )?;
    progress.record(&files.gitignore, changed);
    if !values.is_empty() {
        add_values(edit, state_dir, &files.env, values, progress)?;
    }
    document_example(edit, files, state_dir, example, progress)
}

/// Adds to `.env.example` the lines of `example` it lacks (the file is
/// created when there is any), and touches no other file: what the
/// variables are for, for teammates, without any value.
pub fn document_example(
    edit: &Edit,
    files: &EnvFiles,
    state_dir: &Path,
    example: &[dotenv::ExampleLine],
    progress: &mut Progress,
) -> Result<(), EnvFilesError> {
    if example.is_empty() {
        return Ok(());
    }
    check_confined(&files.example)?;
    let changed = edit_text(
        edit,
        state_dir,
        &files.example,
        NewMode::Umasked(0o644),
        example_change(example),
    )?;
    progress.record(&files.example, changed);
    Ok(())
}

/// Adds `values` to the user's own store at `path`
/// (`~/.config/mcpenv/.env`), for the secrets of user-scope servers, which
/// no repository's `.env` may hold: created 0600 (its folder 0700 when
/// new), refused when other users can read it, unless `force`.
pub fn save_user_with(
    edit: &Edit,
    path: &Path,
    state_dir: &Path,
    values: &[(String, String)],
    force: bool,
    progress: &mut Progress,
) -> Result<(), EnvFilesError> {
    if values.is_empty() {
        return Ok(());
    }
    if let Some(folder) = path.parent() {
        edit.unshown(|| {
            fsx::os::create_private_dir_all(folder).map_err(|source| EnvFilesError::Folder {
                path: path.to_path_buf(),
                folder: folder.to_path_buf(),
                source,
            })
        })?;
    }
    save_values_with(edit, path, state_dir, values, force, progress)
}

/// Adds `values` to a dotenv file that already holds some of their names
/// (`.env.local`, a monorepo root's `.env`): refused when other users can
/// read it, unless `force`.
pub fn save_values_with(
    edit: &Edit,
    path: &Path,
    state_dir: &Path,
    values: &[(String, String)],
    force: bool,
    progress: &mut Progress,
) -> Result<(), EnvFilesError> {
    check_private(path, force)?;
    add_values(edit, state_dir, path, values, progress)
}

/// Removes every assignment of `name` from the dotenv file at `path`,
/// keeping every other byte ([`dotenv::without_variable`]); a file that
/// does not hold it (or does not exist) is left alone. Returns whether it
/// wrote.
pub fn remove_value_with(
    edit: &Edit,
    path: &Path,
    state_dir: &Path,
    name: &str,
    progress: &mut Progress,
) -> Result<bool, EnvFilesError> {
    let changed = edit_text(edit, state_dir, path, NewMode::Exact(0o600), |old| {
        old.map_or(Ok(None), |old| {
            dotenv::without_variable(old, name).map_err(|source| EnvFilesError::Entangled {
                path: path.to_path_buf(),
                source,
            })
        })
    })?;
    progress.record(path, changed);
    Ok(changed)
}

/// Removes the lines of `names` from the `.env.example` at `path`, each
/// with the comment mcpenv wrote above it ([`dotenv::example_without`]);
/// a file that holds none of them (or does not exist) is left alone.
/// Returns whether it wrote.
pub fn remove_example_lines(
    edit: &Edit,
    state_dir: &Path,
    path: &Path,
    names: &[String],
) -> Result<bool, EnvFilesError> {
    edit_text(edit, state_dir, path, NewMode::Umasked(0o644), |old| {
        old.map_or(Ok(None), |old| {
            dotenv::example_without(old, names).map_err(|source| EnvFilesError::Entangled {
                path: path.to_path_buf(),
                source,
            })
        })
    })
}

/// Adds `values` to the dotenv file at `path` (new files are 0600).
fn add_values(
    edit: &Edit,
    state_dir: &Path,
    path: &Path,
    values: &[(String, String)],
    progress: &mut Progress,
) -> Result<(), EnvFilesError> {
    let changed = edit_text(
        edit,
        state_dir,
        path,
        NewMode::Exact(0o600),
        values_change(path, values),
    )?;
    progress.record(path, changed);
    Ok(())
}

/// Whether git already ignores the project's `.env`. Git knows best
/// (global excludes, `.git/info/exclude`); the root `.gitignore` is read
/// when git cannot say.
fn git_ignores_dotenv(files: &EnvFiles) -> bool {
    files
        .env
        .parent()
        .and_then(|root| git_ignores(root, &files.env))
        == Some(true)
}

/// `.gitignore` with a line for `.env` (`None`: it has one).
fn gitignore_change(old: Option<&str>) -> Result<Option<String>, EnvFilesError> {
    Ok(dotenv::gitignore_with_dotenv(old))
}

/// `.env.example` documenting `example` (`None`: it does already).
fn example_change(
    example: &[dotenv::ExampleLine],
) -> impl Fn(Option<&str>) -> Result<Option<String>, EnvFilesError> + '_ {
    move |old| {
        let old = old.unwrap_or_default();
        let new = dotenv::example_with(old, example);
        Ok((new != old).then_some(new))
    }
}

/// The dotenv file at `path` with `values` added.
fn values_change<'a>(
    path: &'a Path,
    values: &'a [(String, String)],
) -> impl Fn(Option<&str>) -> Result<Option<String>, EnvFilesError> + 'a {
    move |old| {
        dotenv::with_values(old.unwrap_or_default(), values)
            .map(Some)
            .map_err(|source| quote_error(path, values, source))
    }
}

fn quote_error(path: &Path, values: &[(String, String)], source: QuoteError) -> EnvFilesError {
    match source {
        QuoteError::ControlCharacter { .. } => {
            let name = values
                .iter()
                .find(|(_, value)| dotenv::quote(value).is_err())
                .map_or_else(String::new, |(name, _)| name.clone());
            EnvFilesError::Unquotable { name, source }
        }
        QuoteError::InvalidName { ref name } => EnvFilesError::Unquotable {
            name: name.clone(),
            source,
        },
        QuoteError::UnterminatedQuote { .. } => EnvFilesError::Malformed {
            path: path.to_path_buf(),
            source,
        },
        QuoteError::EntangledLine { .. } => EnvFilesError::Entangled {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// [`Edit::edit_text`] with its errors as [`EnvFilesError`], after clearing
/// what an interrupted earlier write left ([`store::tidy`]).
fn edit_text(
    edit: &Edit,
    state_dir: &Path,
    path: &Path,
    new_mode: NewMode,
    change: impl Fn(Option<&str>) -> Result<Option<String>, EnvFilesError>,
) -> Result<bool, EnvFilesError> {
    store::tidy(edit, state_dir, path);
    edit.edit_text(state_dir, path, new_mode, change)
        .map_err(|error| match error {
            TextEditError::Read(source) | TextEditError::Write(source) => io_error(path, source),
            TextEditError::Locked(_) => EnvFilesError::Locked {
                path: path.to_path_buf(),
            },
            TextEditError::Contended => EnvFilesError::Contended {
                path: path.to_path_buf(),
            },
            TextEditError::Change(error) => error,
        })
}

/// A secret that is in a file's git history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// The variable now holding the secret.
    pub variable: String,
    /// Short hashes of the commits that added it, newest first.
    pub commits: Vec<String>,
}

/// Which of `secrets` (variable, value) were ever committed in `file` of
/// the repository at `git_root`, searching the patches of every commit in
/// this process (a secret never goes into a command line). `None` when git
/// is not available or `file` has no history.
pub fn committed_secrets(
    git_root: &Path,
    file: &Path,
    secrets: &[(&str, &str)],
) -> Option<Vec<Exposure>> {
    let relative = file.strip_prefix(git_root).ok()?;
    // No diff driver or text conversion a repository names runs.
    let mut child = crate::mechanics::git::command(git_root)
        .args([
            "log",
            "--all",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x00%h",
            "--",
        ])
        .arg(relative)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    // A secret may be stored JSON-escaped; look for both forms.
    let needles: Vec<(usize, String)> = secrets
        .iter()
        .enumerate()
        .flat_map(|(index, (_, value))| {
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = escaped.trim_matches('"').to_string();
            [(index, (*value).to_string()), (index, escaped)]
        })
        .filter(|(_, needle)| !needle.is_empty())
        .collect();
    let mut commits: Vec<Vec<String>> = vec![Vec::new(); secrets.len()];
    let mut current = String::new();
    let mut saw_history = false;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(hash) = line.strip_prefix('\0') {
            current = hash.to_string();
            saw_history = true;
            continue;
        }
        if !line.starts_with('+') || line.starts_with("+++") {
            continue;
        }
        for (index, needle) in &needles {
            if line.contains(needle.as_str()) && !commits[*index].contains(&current) {
                commits[*index].push(current.clone());
            }
        }
    }
    let status = child.wait().ok()?;
    if !status.success() || !saw_history {
        return None;
    }
    Some(
        secrets
            .iter()
            .zip(commits)
            .filter(|(_, commits)| !commits.is_empty())
            .map(|((variable, _), commits)| Exposure {
                variable: (*variable).to_string(),
                commits,
            })
            .collect(),
    )
}
