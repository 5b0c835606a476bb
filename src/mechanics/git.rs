//! Running `git` on a repository that may be hostile. A repository's own
//! `.git/config` can name programs git runs on its own (`core.fsmonitor`
//! on any command that reads the index, hooks): a folder unpacked from an
//! archive brings its `.git/config` with it. Every git command mcpenv runs
//! turns those off.

use std::path::Path;
use std::process::{Command, Stdio};

/// `git -C dir` with the repository's own programs turned off, its
/// standard input closed.
pub fn command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .arg("-C")
        .arg(dir)
        .stdin(Stdio::null());
    command
}
