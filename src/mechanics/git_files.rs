//! Whether git tracks a file, or would commit it. Asked of git itself (its
//! ignore rules, index and sparse checkouts are too many to redo), with the
//! repository's own configuration kept from running anything: a cloned
//! repository's `.git/config` may name an fsmonitor or hooks.

use std::path::Path;
use std::process::Stdio;

/// Where a file stands with git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Git tracks it: a commit takes its changes.
    Tracked,
    /// Not tracked and not ignored: `git add .` takes it.
    Unignored,
    /// Ignored (and not tracked).
    Ignored,
    /// In no repository, or git could not tell.
    Outside,
}

impl Standing {
    /// Whether what the file holds reaches a commit (now, or with `git add .`).
    pub fn committed(self) -> bool {
        matches!(self, Self::Tracked | Self::Unignored)
    }
}

/// Where `file` stands with the repository holding it.
pub fn standing(file: &Path) -> Standing {
    if tracked(file) {
        return Standing::Tracked;
    }
    match git_code(file, &["check-ignore", "-q"]) {
        Some(0) => Standing::Ignored,
        Some(1) => Standing::Unignored,
        _ => Standing::Outside,
    }
}

/// Whether git tracks `file`: [`standing`] is [`Standing::Tracked`], asked
/// with one git process instead of two when it is not.
pub fn tracked(file: &Path) -> bool {
    git_code(file, &["ls-files", "--error-unmatch"]) == Some(0)
}

/// The exit code of git run with `args` and then `file`'s name, in its
/// directory.
fn git_code(file: &Path, args: &[&str]) -> Option<i32> {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return None;
    };
    crate::mechanics::git::command(dir)
        .args(args)
        .arg("--")
        .arg(name)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .and_then(|status| status.code())
}

/// Whether git ignores `file` in the repository at `root`; `None` when git
/// cannot tell (not installed, not a repository).
pub fn git_ignores(root: &Path, file: &Path) -> Option<bool> {
    let status = crate::mechanics::git::command(root)
        .args(["check-ignore", "-q", "--no-index", "--"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    match status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_tells_tracked_unignored_and_ignored_files_apart() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            status.is_ok_and(|status| status.success())
        };
        if !git(&["init", "-q"]) {
            return;
        }
        std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
        std::fs::write(root.join(".env"), "A=1\n").unwrap();
        std::fs::write(root.join("tracked"), "").unwrap();
        std::fs::write(root.join("loose"), "").unwrap();
        assert!(git(&["add", "tracked"]));
        assert_eq!(standing(&root.join("tracked")), Standing::Tracked);
        assert_eq!(standing(&root.join("loose")), Standing::Unignored);
        assert_eq!(standing(&root.join(".env")), Standing::Ignored);
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(standing(&outside.path().join("x")), Standing::Outside);
    }
}
