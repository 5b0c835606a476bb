//! The files `scan PATH` reads below a folder: JSON, JSON with comments,
//! TOML. A repository's symbolic links are its own text, so none may lead
//! the walk out of the folder scanned (a link to `~/.claude.json` or
//! `~/.ssh`), and none may lead it in circles (a link to its own folder).
//!
//! Written by hand rather than with `ignore::WalkBuilder`: its
//! `follow_links` catches a link back to an ancestor only, so a link to a
//! sibling folder is walked again (links fanning out make the walk grow
//! exponentially), and nothing keeps a link inside the root. Here every
//! folder is entered at most once (by device and inode), every link's
//! target is resolved and checked against the root before it is read,
//! and a file is read at most once however many links lead to it.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ops::list_servers::Warning;

/// Folders never worth a scan (and often huge).
const SKIPPED_FOLDERS: [&str; 3] = [".git", "node_modules", "target"];

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// The files to scan, in walk order.
    pub files: Vec<PathBuf>,
    /// Links not followed, and why.
    pub skipped: Vec<Warning>,
}

/// A file or folder: by device and inode, or on Windows (whose standard
/// library gives no inode) by its real path, which is the same for every
/// link to it.
type Identity = (u64, u64, Option<PathBuf>);

fn identity(path: &Path, metadata: &fs::Metadata) -> Identity {
    match crate::mechanics::fsx::os::identity(metadata) {
        Some((device, inode)) => (device, inode, None),
        None => (
            0,
            0,
            Some(dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())),
        ),
    }
}

/// Whether `name` is a file scan reads.
fn is_config_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".jsonc") || name.ends_with(".toml")
}

/// The files below `path` worth scanning (or `path` itself, a file). The
/// root is `path` for a folder and the folder holding it for a file; with
/// `follow_links` false (a hook's run: git commits a link, not its target)
/// no link below it is followed at all.
pub fn collect(path: &Path, follow_links: bool) -> io::Result<Walked> {
    let metadata = fs::metadata(path)?;
    let mut walked = Walked::default();
    if metadata.is_file() {
        let folder = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty());
        let root = dunce::canonicalize(folder.unwrap_or(Path::new(".")))?;
        let target = dunce::canonicalize(path)?;
        if target.starts_with(&root) {
            walked.files.push(path.to_path_buf());
        } else {
            walked.skipped.push(outside(path, &target, &root));
        }
        return Ok(walked);
    }
    if !metadata.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file or directory (a FIFO, socket or device is never read)",
        ));
    }
    let mut walk = Walk {
        root: dunce::canonicalize(path)?,
        follow_links,
        entered: HashSet::from([identity(path, &metadata)]),
        read: HashSet::new(),
        walked,
    };
    let mut ancestors = vec![identity(path, &metadata)];
    walk.folder(path, &mut ancestors)?;
    Ok(walk.walked)
}

struct Walk {
    /// The root, resolved: every link's target must be inside it.
    root: PathBuf,
    follow_links: bool,
    /// Folders entered once already.
    entered: HashSet<Identity>,
    /// Files listed once already.
    read: HashSet<Identity>,
    walked: Walked,
}

impl Walk {
    /// Walks `folder`; `ancestors` are the folders it lies in (itself
    /// last), to tell a loop from a second way into a folder.
    fn folder(&mut self, folder: &Path, ancestors: &mut Vec<Identity>) -> io::Result<()> {
        let mut entries: Vec<(PathBuf, fs::FileType)> = fs::read_dir(folder)?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                Some((entry.path(), entry.file_type().ok()?))
            })
            .collect();
        // Paths of one folder differ in their last component only, so
        // its bytes give the order the whole paths would, without
        // splitting each path into components at every comparison.
        entries.sort_by(|(a, _), (b, _)| a.file_name().cmp(&b.file_name()));
        for (entry, kind) in entries {
            let name = entry
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or_default()
                .to_string();
            if kind.is_symlink() {
                self.link(&entry, &name, ancestors)?;
            } else if kind.is_dir() {
                if SKIPPED_FOLDERS.contains(&name.as_str()) {
                    continue;
                }
                let metadata = fs::symlink_metadata(&entry)?;
                self.enter(&entry, &metadata, ancestors)?;
            } else if kind.is_file() && is_config_name(&name) {
                // Only regular files: a FIFO named `x.json` would block.
                let metadata = fs::symlink_metadata(&entry)?;
                self.list(entry, &metadata);
            }
        }
        Ok(())
    }

    /// A link: followed only to a target inside the root, each folder and
    /// file once.
    fn link(&mut self, link: &Path, name: &str, ancestors: &mut Vec<Identity>) -> io::Result<()> {
        // A dangling link leads nowhere: nothing to read.
        let (Ok(target), Ok(metadata)) = (dunce::canonicalize(link), fs::metadata(link)) else {
            return Ok(());
        };
        let worth_reading = metadata.is_dir() || (metadata.is_file() && is_config_name(name));
        if !worth_reading {
            return Ok(());
        }
        if !self.follow_links {
            self.walked.skipped.push(Warning {
                file: link.to_path_buf(),
                message: "a symbolic link: not followed, git commits the link and not the file it points to".to_string(),
            });
            return Ok(());
        }
        if !target.starts_with(&self.root) {
            self.walked.skipped.push(outside(link, &target, &self.root));
            return Ok(());
        }
        if metadata.is_dir() {
            if ancestors.contains(&identity(link, &metadata)) {
                self.walked.skipped.push(Warning {
                    file: link.to_path_buf(),
                    message: format!(
                        "a symbolic link to `{}`, a folder it is in: a loop, not followed",
                        target.display()
                    ),
                });
                return Ok(());
            }
            self.enter(link, &metadata, ancestors)
        } else {
            self.list(link.to_path_buf(), &metadata);
            Ok(())
        }
    }

    /// Walks a folder not entered yet.
    fn enter(
        &mut self,
        folder: &Path,
        metadata: &fs::Metadata,
        ancestors: &mut Vec<Identity>,
    ) -> io::Result<()> {
        let id = identity(folder, metadata);
        // Entered already by another way: its files are listed.
        if !self.entered.insert(id.clone()) {
            return Ok(());
        }
        ancestors.push(id);
        let result = self.folder(folder, ancestors);
        ancestors.pop();
        result
    }

    fn list(&mut self, file: PathBuf, metadata: &fs::Metadata) {
        if self.read.insert(identity(&file, metadata)) {
            self.walked.files.push(file);
        }
    }
}

/// The warning for a link whose target lies outside the root.
fn outside(link: &Path, target: &Path, root: &Path) -> Warning {
    Warning {
        file: link.to_path_buf(),
        message: format!(
            "a symbolic link to `{}`, outside `{}`: not followed",
            target.display(),
            root.display()
        ),
    }
}
