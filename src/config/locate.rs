//! Where each scope's file lives, following Claude Code's rules exactly.

use std::path::{Path, PathBuf};

use crate::config::error::LocateError;
use crate::mechanics::fsx;
use crate::mechanics::journal::Place;
use crate::mechanics::layout_cache;

/// Largest `.mcp.json` Claude Code reads; bigger ones are skipped.
pub const MAX_PROJECT_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// The facts about the outside world that locating files depends on. Built
/// by the CLI from the process environment; core code never reads it.
#[derive(Debug, Clone)]
pub struct Environment {
    /// The user's home directory.
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR`, when set and not empty.
    pub claude_config_dir: Option<PathBuf>,
    /// The directory to act in (the process's, or `-C DIR`).
    pub working_dir: PathBuf,
    /// Where managed (enterprise) Claude Code files live.
    pub managed_dir: PathBuf,
    /// mcpenv's own state directory (lock files).
    pub state_dir: PathBuf,
    /// The layout cache's file (see [`crate::mechanics::layout_cache`]);
    /// `None`: no cache, every reading of `~/.claude.json` makes the pass.
    pub layout_cache: Option<layout_cache::Setting>,
}

/// Every path mcpenv reads or writes for one working directory.
#[derive(Debug, Clone)]
pub struct Locations {
    /// The user's home directory.
    pub home: PathBuf,
    /// `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`): local and user scopes.
    pub claude_json: PathBuf,
    /// Claude Code's data directory (`~/.claude` or `$CLAUDE_CONFIG_DIR`).
    pub claude_data_dir: PathBuf,
    /// The working directory with every symlink resolved.
    pub working_dir: PathBuf,
    /// The repository root the working directory belongs to (a linked
    /// worktree maps to its main repository).
    pub git_root: Option<PathBuf>,
    /// The key of this project in `~/.claude.json` → `projects`.
    pub local_key: String,
    /// Where managed (enterprise) Claude Code files live.
    pub managed_dir: PathBuf,
    /// mcpenv's own state directory.
    pub state_dir: PathBuf,
    /// The layout cache's file, if one is used.
    pub layout_cache: Option<layout_cache::Setting>,
}

impl Locations {
    /// Resolves every location for `environment`.
    pub fn discover(environment: &Environment) -> Result<Self, LocateError> {
        let working_dir = dunce::canonicalize(&environment.working_dir).map_err(|source| {
            LocateError::WorkingDir {
                path: environment.working_dir.clone(),
                source,
            }
        })?;
        if !working_dir.is_dir() {
            return Err(LocateError::NotADirectory { path: working_dir });
        }
        let config_dir = environment
            .claude_config_dir
            .clone()
            .unwrap_or_else(|| environment.home.clone());
        let claude_data_dir = environment
            .claude_config_dir
            .clone()
            .unwrap_or_else(|| environment.home.join(".claude"));
        // Claude Code still honours a legacy `.config.json` in its data dir.
        let legacy = claude_data_dir.join(".config.json");
        let claude_json = if legacy.is_file() {
            legacy
        } else {
            config_dir.join(".claude.json")
        };
        let git_root = find_git_root(&working_dir);
        let key_dir = git_root.clone().unwrap_or_else(|| working_dir.clone());
        let locations = Self {
            home: environment.home.clone(),
            claude_json,
            claude_data_dir,
            local_key: key_dir.to_string_lossy().into_owned(),
            working_dir,
            git_root,
            managed_dir: environment.managed_dir.clone(),
            state_dir: environment.state_dir.clone(),
            layout_cache: environment.layout_cache.clone(),
        };
        locations.confine_repository();
        Ok(locations)
    }

    /// Where a command run here makes its edits, as the undo journal
    /// records it: the project (the directory Claude Code keys local scope
    /// by), the directories whose files are the project's, and the shared
    /// `~/.claude.json`.
    pub fn edit_place(&self) -> Place {
        let project = PathBuf::from(&self.local_key);
        let mut project_dirs = vec![project.clone(), self.working_dir.clone()];
        project_dirs.extend(self.repository_roots());
        project_dirs.dedup();
        Place {
            project,
            project_dirs,
            shared: self.shared_claude_json(),
        }
    }

    /// `~/.claude.json` as the journal names it (symbolic links resolved).
    pub fn shared_claude_json(&self) -> PathBuf {
        fsx::resolve_symlinks(&self.claude_json).unwrap_or_else(|_| self.claude_json.clone())
    }

    /// The directories a project's files must not lead out of: the top of
    /// the work tree the working directory is in and the repository it
    /// belongs to (a linked worktree's main repository, where project
    /// writes go), else, outside git, the project root.
    pub fn repository_roots(&self) -> Vec<PathBuf> {
        let work_tree = self
            .working_dir
            .ancestors()
            .find(|ancestor| ancestor.join(".git").exists())
            .map(Path::to_path_buf);
        let mut roots: Vec<PathBuf> = work_tree.into_iter().chain(self.git_root.clone()).collect();
        if roots.is_empty() {
            roots.push(self.project_root());
        }
        roots.dedup();
        roots
    }

    /// The repository a project's file at `path` belongs to, if any.
    pub fn repository_of(&self, path: &Path) -> Option<PathBuf> {
        self.repository_roots()
            .into_iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count())
    }

    /// Holds every file of this project's repository to it
    /// ([`crate::mechanics::fsx::confine`]): mcpenv reads and writes them only where
    /// they really are inside it. A repository holding the home directory
    /// (a dotfiles repository at `~`) holds the user's own files, which
    /// may lead anywhere the user likes, and is left alone, as are
    /// mcpenv's and Claude Code's own files wherever they are.
    fn confine_repository(&self) {
        let own = [
            self.claude_json.clone(),
            self.claude_data_dir.clone(),
            self.state_dir.clone(),
        ];
        for root in self.repository_roots() {
            if !self.home.as_os_str().is_empty() && self.home.starts_with(&root) {
                continue;
            }
            crate::mechanics::fsx::confine(&root, &own);
        }
    }

    /// Every `.mcp.json` Claude Code merges into the project scope, from the
    /// filesystem root down to the working directory (nearer files win).
    pub fn project_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .working_dir
            .ancestors()
            .map(|dir| dir.join(".mcp.json"))
            .collect();
        files.reverse();
        files
    }

    /// The `.mcp.json` project-scope writes go to: the nearest existing one
    /// between the working directory and the repository root, else the one
    /// at the repository root, else (outside git) the working directory's.
    pub fn project_file_for_write(&self) -> PathBuf {
        let Some(root) = &self.git_root else {
            return self.working_dir.join(".mcp.json");
        };
        self.working_dir
            .ancestors()
            .take_while(|dir| dir.starts_with(root))
            .map(|dir| dir.join(".mcp.json"))
            .find(|file| file.exists())
            .unwrap_or_else(|| root.join(".mcp.json"))
    }

    /// Where the project's `.env`, `.env.example` and `.gitignore` entry
    /// live: next to the `.mcp.json` project writes go to (the repository
    /// root in an ordinary repository, a package's own directory in a
    /// monorepo that keeps `.mcp.json` there).
    pub fn project_root(&self) -> PathBuf {
        let file = self.project_file_for_write();
        file.parent()
            .map_or_else(|| self.working_dir.clone(), Path::to_path_buf)
    }

    /// The directories whose `.env.local` and `.env` hold the values of the
    /// project servers in effect, nearest first: [`Self::project_root`]
    /// (where project writes go), then every ancestor whose `.mcp.json`
    /// Claude Code merges in, so a monorepo package also reads the root's
    /// values for the root's servers.
    pub fn env_dirs(&self) -> Vec<PathBuf> {
        let root = self.project_root();
        let mut dirs = vec![root.clone()];
        for file in self.project_files().into_iter().rev() {
            let Some(dir) = file.parent() else { continue };
            if !root.starts_with(dir) || dir == root || !file.is_file() {
                continue;
            }
            dirs.push(dir.to_path_buf());
        }
        dirs
    }

    /// The user's Claude Code settings.
    pub fn user_settings(&self) -> PathBuf {
        self.claude_data_dir.join("settings.json")
    }

    /// The project's shared Claude Code settings.
    pub fn project_settings(&self) -> PathBuf {
        self.working_dir.join(".claude").join("settings.json")
    }

    /// The project's private Claude Code settings.
    pub fn local_settings(&self) -> PathBuf {
        self.working_dir.join(".claude").join("settings.local.json")
    }

    /// Managed (enterprise) settings.
    pub fn managed_settings(&self) -> PathBuf {
        self.managed_dir.join("managed-settings.json")
    }

    /// Managed MCP servers: when present, Claude Code uses them alone.
    pub fn managed_mcp(&self) -> PathBuf {
        self.managed_dir.join("managed-mcp.json")
    }

    /// How a file is shown to the user: `~/…` under the home directory.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.home) {
            Ok(rest) if !self.home.as_os_str().is_empty() && self.home != Path::new("/") => {
                format!("~/{}", rest.display())
            }
            _ => path.display().to_string(),
        }
    }
}

/// `dir` as a path up from `from` (`..`, `../..`), for `-C` in a hint;
/// `None` when `dir` is `from` itself or not above it.
pub fn upward_dir(dir: &Path, from: &Path) -> Option<String> {
    let below = from.strip_prefix(dir).ok()?;
    let count = below.components().count();
    (count > 0).then(|| vec![".."; count].join("/"))
}

/// A file in `from` or in a directory above it, named from `from`: `.env`,
/// `../../.env` (a monorepo root's file seen from a package); `None` for a
/// file anywhere else.
pub fn upward_name(path: &Path, from: &Path) -> Option<String> {
    let dir = path.parent()?;
    let name = path.file_name()?;
    let below = from.strip_prefix(dir).ok()?;
    Some(format!(
        "{}{}",
        "../".repeat(below.components().count()),
        name.to_string_lossy()
    ))
}

/// The repository `dir` belongs to: the nearest ancestor holding `.git` (a
/// directory or a gitfile); a linked worktree maps to its main repository.
pub fn find_git_root(dir: &Path) -> Option<PathBuf> {
    let found = dir
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())?;
    let dot_git = found.join(".git");
    if dot_git.is_dir() {
        return Some(found.to_path_buf());
    }
    Some(main_worktree(found, &dot_git).unwrap_or_else(|| found.to_path_buf()))
}

/// For a linked worktree's gitfile (`gitdir: <main>/.git/worktrees/<n>`),
/// the main repository's root, when the worktree's metadata agrees.
fn main_worktree(worktree: &Path, gitfile: &Path) -> Option<PathBuf> {
    // Only regular files: a FIFO named `.git` must not block the lookup.
    let read = |path: &Path| crate::mechanics::fsx::read_if_exists(path).ok().flatten();
    let text = read(gitfile)?;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let gitdir = worktree.join(gitdir);
    let commondir = read(&gitdir.join("commondir"))?;
    let common = dunce::canonicalize(gitdir.join(commondir.trim())).ok()?;
    // `<gitdir>/gitdir` points back at this worktree's `.git` file.
    let back = read(&gitdir.join("gitdir"))?;
    let back = dunce::canonicalize(gitdir.join(back.trim())).ok()?;
    if back != dunce::canonicalize(gitfile).ok()? {
        return None;
    }
    if common.file_name()? != ".git" {
        return None;
    }
    common.parent().map(Path::to_path_buf)
}

/// Git's own exclude file for the work tree `dir` is in (`info/exclude` of
/// the common git directory, which linked worktrees share) and the top of
/// that work tree, which its patterns are relative to. Unlike `.gitignore`
/// it is never committed: the place for a rule about one person's files.
/// `None` when no git directory is found.
pub fn git_exclude(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let top = dir
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())?;
    let dot_git = top.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = crate::mechanics::fsx::read_if_exists(&dot_git)
            .ok()
            .flatten()?;
        top.join(text.trim().strip_prefix("gitdir:")?.trim())
    };
    let common = match crate::mechanics::fsx::read_if_exists(&git_dir.join("commondir")) {
        Ok(Some(common)) => git_dir.join(common.trim()),
        _ => git_dir,
    };
    let common = dunce::canonicalize(common).ok()?;
    common
        .is_dir()
        .then(|| (common.join("info").join("exclude"), top.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn environment(home: &Path, working_dir: &Path) -> Environment {
        Environment {
            home: home.to_path_buf(),
            claude_config_dir: None,
            working_dir: working_dir.to_path_buf(),
            managed_dir: home.join("managed"),
            state_dir: home.join("state"),
            layout_cache: None,
        }
    }

    #[test]
    fn local_key_is_the_git_root_of_the_real_working_dir() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let repo = root.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("sub/deep")).unwrap();
        std::os::unix::fs::symlink(repo.join("sub"), root.join("link")).unwrap();

        let deep = Locations::discover(&environment(&root, &repo.join("sub/deep"))).unwrap();
        assert_eq!(deep.local_key, repo.to_str().unwrap());
        assert_eq!(deep.project_file_for_write(), repo.join(".mcp.json"));

        let linked = Locations::discover(&environment(&root, &root.join("link"))).unwrap();
        assert_eq!(linked.working_dir, repo.join("sub"));
        assert_eq!(linked.local_key, repo.to_str().unwrap());

        fs::write(repo.join("sub/.mcp.json"), "{}").unwrap();
        assert_eq!(deep.project_file_for_write(), repo.join("sub/.mcp.json"));
    }

    #[test]
    fn outside_git_the_key_is_the_working_dir() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        fs::create_dir_all(root.join("plain/sub")).unwrap();
        let located = Locations::discover(&environment(&root, &root.join("plain/sub"))).unwrap();
        assert_eq!(located.local_key, root.join("plain/sub").to_str().unwrap());
        assert_eq!(
            located.project_file_for_write(),
            root.join("plain/sub/.mcp.json")
        );
        assert_eq!(located.claude_json, root.join(".claude.json"));
    }

    #[test]
    fn a_linked_worktree_maps_to_its_main_repository() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let main = root.join("main");
        let admin = main.join(".git/worktrees/wt");
        fs::create_dir_all(&admin).unwrap();
        fs::create_dir_all(root.join("wt/sub")).unwrap();
        fs::write(
            root.join("wt/.git"),
            format!("gitdir: {}\n", admin.display()),
        )
        .unwrap();
        fs::write(admin.join("commondir"), "../..\n").unwrap();
        fs::write(
            admin.join("gitdir"),
            format!("{}\n", root.join("wt/.git").display()),
        )
        .unwrap();
        assert_eq!(find_git_root(&root.join("wt/sub")), Some(main.clone()));
        // Worktrees share the main repository's exclude file; their
        // patterns are relative to their own top.
        assert_eq!(
            git_exclude(&root.join("wt/sub")),
            Some((main.join(".git/info/exclude"), root.join("wt")))
        );
        assert_eq!(
            git_exclude(&main),
            Some((main.join(".git/info/exclude"), main.clone()))
        );
        assert_eq!(git_exclude(&root), None);

        // A gitfile that does not point back (a submodule, say) keys itself.
        fs::write(admin.join("gitdir"), "/elsewhere/.git\n").unwrap();
        assert_eq!(find_git_root(&root.join("wt/sub")), Some(root.join("wt")));
    }

    #[test]
    fn claude_config_dir_replaces_home() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let mut environment = environment(&root, &root);
        environment.claude_config_dir = Some(root.join("cfg"));
        let located = Locations::discover(&environment).unwrap();
        assert_eq!(located.claude_json, root.join("cfg/.claude.json"));
        assert_eq!(located.user_settings(), root.join("cfg/settings.json"));
    }
}
