//! The repository's files that are symbolic links leading where mcpenv
//! will not follow them: out of the repository (mcpenv neither reads nor
//! writes them, [`crate::mechanics::fsx::confine`]), or, for a file that holds
//! secrets, to a file of the repository git does not ignore. What `check`
//! and `doctor` report about them.

use std::path::{Path, PathBuf};

use crate::check::{Finding, Severity};
use crate::config::locate::Locations;
use crate::envfiles::{self, EnvFilesError};

/// The dotenv files that hold secrets (`.env.example` holds names only).
const SECRET_FILES: [&str; 2] = [".env", ".env.local"];

/// Every file of the project mcpenv reads or writes, as named there.
fn project_files(locations: &Locations) -> Vec<(PathBuf, bool)> {
    let root = locations.project_root();
    let mut files = Vec::new();
    for dir in locations.env_dirs() {
        for name in SECRET_FILES {
            files.push((dir.join(name), true));
        }
        files.push((dir.join(".env.example"), false));
    }
    for path in [
        root.join(".gitignore"),
        locations.project_file_for_write(),
        root.join(".cursor/mcp.json"),
        root.join(".vscode/mcp.json"),
        root.join(".codex/config.toml"),
        locations.project_settings(),
        locations.local_settings(),
    ] {
        files.push((path, false));
    }
    files.extend(
        locations
            .project_files()
            .into_iter()
            .filter(|file| locations.repository_of(file).is_some())
            .map(|file| (file, false)),
    );
    let mut seen = Vec::new();
    files.retain(|(path, _)| {
        let new = !seen.contains(path);
        seen.push(path.clone());
        new
    });
    files
}

/// An error finding for each file of the project that leads out of the
/// repository, or, holding secrets, to a file git does not ignore.
pub fn findings(locations: &Locations) -> Vec<Finding> {
    let shown = |path: &Path| match path.strip_prefix(&locations.working_dir) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => locations.display(path),
    };
    let mut findings = Vec::new();
    for (path, holds_secrets) in project_files(locations) {
        let refusal = if holds_secrets {
            envfiles::check_secret_file(&path)
        } else {
            envfiles::check_confined(&path)
        };
        let (code, message, hint) = match refusal {
            Ok(()) => continue,
            Err(EnvFilesError::LeavesRepository(leaves)) => (
                "link-leaves-repository",
                format!(
                    "`{}` leads through a symbolic link to `{}`, outside the repository: mcpenv neither reads nor writes it",
                    shown(&path),
                    shown(&leaves.target)
                ),
                "replace the link with a regular file, or point it inside the repository"
                    .to_string(),
            ),
            Err(EnvFilesError::TargetNotIgnored { target, .. }) => (
                "link-not-ignored",
                format!(
                    "`{}` leads to `{}`, which git does not ignore: a secret saved there would be committed",
                    shown(&path),
                    shown(&target)
                ),
                format!(
                    "add `{}` to `.gitignore`, or replace the link with a regular file",
                    shown(&target)
                ),
            ),
            Err(_) => continue,
        };
        findings.push(Finding {
            code,
            severity: Severity::Error,
            server: None,
            variable: None,
            file: Some(path),
            message,
            hint: Some(hint),
        });
    }
    findings
}
