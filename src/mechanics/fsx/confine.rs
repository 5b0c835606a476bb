//! The repository boundary: a file that lies in a project's repository is
//! read and written only where it really is inside that repository. A
//! committed symbolic link (`.env` → `~/.bashrc`, `.codex` → `~/.codex`)
//! would otherwise carry mcpenv's writes, and its reads, out of it.
//!
//! [`crate::config::locate::Locations::discover`] registers each project's
//! repository ([`confine`]), and the one resolution every writer and reader
//! goes through ([`super::resolve_symlinks`], [`super::open_regular`]) asks
//! [`check`]: so no writer can forget the rule. The registry is
//! process-wide, like the edit session: a command runs once per process.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::MAX_SYMLINK_HOPS;

/// A repository whose files must stay inside it.
#[derive(Debug, Clone)]
struct Confined {
    /// Its top directory, every link resolved.
    root: PathBuf,
    /// The user's own files that happen to lie under it (`~/.claude.json`
    /// when the repository is the home directory): not subject to the rule.
    own: Vec<PathBuf>,
}

static CONFINED: Mutex<Vec<Confined>> = Mutex::new(Vec::new());

/// From now on, files lexically under `root` (a directory, links resolved)
/// must really lie under it, except those under one of `own`.
pub fn confine(root: &Path, own: &[PathBuf]) {
    let mut confined = CONFINED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = confined.iter_mut().find(|known| known.root == root) {
        for path in own {
            if !known.own.contains(path) {
                known.own.push(path.clone());
            }
        }
        return;
    }
    confined.push(Confined {
        root: root.to_path_buf(),
        own: own.to_vec(),
    });
}

/// The innermost registered repository `path` lies in, unless it is one of
/// the user's own files there.
fn repository_of(path: &Path) -> Option<PathBuf> {
    let confined = CONFINED.lock().unwrap_or_else(PoisonError::into_inner);
    let inside = confined
        .iter()
        .filter(|known| path.starts_with(&known.root))
        .max_by_key(|known| known.root.components().count())?;
    if inside.own.iter().any(|own| path.starts_with(own)) {
        return None;
    }
    Some(inside.root.clone())
}

/// A repository's file that really lies outside the repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` leads through a symbolic link to `{}`, outside the repository `{}`", path.display(), target.display(), root.display())]
pub struct LeavesRepository {
    /// The file, as named inside the repository.
    pub path: PathBuf,
    /// Where it really is.
    pub target: PathBuf,
    /// The repository's top directory.
    pub root: PathBuf,
}

impl LeavesRepository {
    /// The [`LeavesRepository`] inside `error`, if that is what it is.
    pub fn in_io(error: &io::Error) -> Option<&Self> {
        error.get_ref().and_then(|inner| inner.downcast_ref())
    }

    /// The [`LeavesRepository`] anywhere in the chain of `error`.
    pub fn in_chain<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Self> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(found) = error.downcast_ref::<Self>() {
                return Some(found);
            }
            // `io::Error` shows its inner error but skips it as a source.
            if let Some(found) = error.downcast_ref::<io::Error>().and_then(Self::in_io) {
                return Some(found);
            }
            current = error.source();
        }
        None
    }

    pub(super) fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, self)
    }
}

/// Fails when `path` lies in a registered repository and really lies
/// outside it. Paths outside every repository, and the user's own files,
/// pass.
pub fn check(path: &Path) -> Result<(), LeavesRepository> {
    let Some(root) = repository_of(path) else {
        return Ok(());
    };
    // A chain that cannot be followed (a loop) is refused by the write or
    // read itself, naming the file.
    let Ok(target) = real_location(path) else {
        return Ok(());
    };
    if target.starts_with(&root) {
        return Ok(());
    }
    Err(LeavesRepository {
        path: path.to_path_buf(),
        target,
        root,
    })
}

/// Where the file of a repository at `path` really is, when that is not
/// `path` (it, or a directory on its way, is a symbolic link); `None` for
/// a file that is where it is named, or one outside every repository.
pub fn link_target(path: &Path) -> Option<PathBuf> {
    repository_of(path)?;
    real_location(path).ok().filter(|target| target != path)
}

/// One step of a path still to walk.
enum Part {
    Root,
    Parent,
    Name(OsString),
}

fn parts(path: &Path) -> impl DoubleEndedIterator<Item = Part> + '_ {
    path.components().filter_map(|component| match component {
        Component::RootDir | Component::Prefix(_) => Some(Part::Root),
        Component::CurDir => None,
        Component::ParentDir => Some(Part::Parent),
        Component::Normal(name) => Some(Part::Name(name.to_os_string())),
    })
}

/// Where `path` really is, as the kernel would find it: every symbolic link
/// followed, those of its directories and a chain at its end, even one whose
/// last target does not exist yet (where a write would create the file);
/// `..` taken from where the walk really is. A relative `path` stays
/// relative to the directory it is relative to.
pub fn real_location(path: &Path) -> io::Result<PathBuf> {
    // Still to walk, the next step last.
    let mut pending: Vec<Part> = parts(path).collect();
    pending.reverse();
    let mut walked = PathBuf::new();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part {
            Part::Root => walked = PathBuf::from("/"),
            Part::Parent => {
                if walked.as_os_str().is_empty() || walked.ends_with("..") {
                    walked.push("..");
                } else if walked != Path::new("/") {
                    walked.pop();
                }
            }
            Part::Name(name) => {
                let candidate = walked.join(&name);
                match fs::symlink_metadata(&candidate) {
                    Ok(metadata) if metadata.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(io::Error::other(format!(
                                "more than {MAX_SYMLINK_HOPS} symbolic links on the way to `{}`",
                                path.display()
                            )));
                        }
                        let target = fs::read_link(&candidate)?;
                        // The link's own steps come next, from where it is.
                        let mut steps: Vec<Part> = parts(&target).collect();
                        steps.reverse();
                        pending.extend(steps);
                    }
                    Ok(_) => walked = candidate,
                    Err(error)
                        if matches!(
                            error.kind(),
                            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                        ) =>
                    {
                        walked = candidate;
                    }
                    Err(error) => return Err(error),
                }
            }
        }
    }
    Ok(walked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn real_locations_follow_every_link_on_the_way() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let repo = root.join("repo");
        let home = root.join("home");
        fs::create_dir_all(repo.join("config")).unwrap();
        fs::create_dir_all(home.join(".codex")).unwrap();
        // A dangling link, relative, inside.
        symlink("config/local.env", repo.join(".env")).unwrap();
        assert_eq!(
            real_location(&repo.join(".env")).unwrap(),
            repo.join("config/local.env")
        );
        // A directory link: the file inside it is elsewhere.
        symlink(home.join(".codex"), repo.join(".codex")).unwrap();
        assert_eq!(
            real_location(&repo.join(".codex/config.toml")).unwrap(),
            home.join(".codex/config.toml")
        );
        // `..` is taken from where the link leads, as the kernel does.
        symlink("../home/x/../.bashrc", repo.join(".env.example")).unwrap();
        assert_eq!(
            real_location(&repo.join(".env.example")).unwrap(),
            home.join(".bashrc")
        );
        // A chain of two.
        symlink(".env.example", repo.join(".gitignore")).unwrap();
        assert_eq!(
            real_location(&repo.join(".gitignore")).unwrap(),
            home.join(".bashrc")
        );
        // A loop is an error.
        symlink("loop", repo.join("loop")).unwrap();
        assert!(real_location(&repo.join("loop")).is_err());
    }

    #[test]
    fn only_files_of_a_repository_are_held_to_it() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let repo = root.join("repo");
        let own = repo.join(".claude.json");
        fs::create_dir_all(&repo).unwrap();
        symlink(root.join("elsewhere"), repo.join(".env")).unwrap();
        symlink(root.join("dotfiles.json"), &own).unwrap();
        // Before the repository is registered nothing is refused.
        assert!(check(&repo.join(".env")).is_ok());
        confine(&repo, std::slice::from_ref(&own));
        let error = check(&repo.join(".env")).unwrap_err();
        assert_eq!(error.target, root.join("elsewhere"));
        assert_eq!(error.root, repo);
        assert!(check(&own).is_ok(), "the user's own file");
        assert!(check(&root.join("outside")).is_ok());
        assert_eq!(
            link_target(&repo.join(".env")),
            Some(root.join("elsewhere"))
        );
        assert_eq!(link_target(&repo.join("plain")), None);
        let io = error.clone().into_io();
        assert_eq!(LeavesRepository::in_io(&io), Some(&error));
    }
}
