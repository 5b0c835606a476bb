//! The `env` map of `.claude/settings.local.json`: Claude Code applies it to
//! its own environment before expanding `${VAR}` placeholders, so values
//! saved there reach the servers without a wrapper. Only the members of
//! `env` that change are touched; every other byte of the file is kept.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::approval;
use crate::document::{DocumentError, JsonDocument, pretty};
use crate::envfiles;
use crate::error::ConfigError;
use crate::fsx::{self, NewMode, TextEditError};
use crate::layered::document_error;
use crate::locate::Locations;

/// Why Claude Code ignores `.claude/settings.local.json` in a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// The working directory is not inside a git repository.
    NotInRepository,
    /// `.claude` is a symbolic link.
    DirectorySymlink,
    /// The settings file is a symbolic link.
    FileSymlink,
    /// `.claude/.git` exists.
    NestedRepository,
    /// The settings file is tracked by git.
    Tracked,
}

impl fmt::Display for Gate {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::NotInRepository => "the working directory is not inside a git repository",
            Self::DirectorySymlink => "`.claude` is a symbolic link",
            Self::FileSymlink => "the file is a symbolic link",
            Self::NestedRepository => "`.claude/.git` exists",
            Self::Tracked => "the file is tracked by git",
        })
    }
}

/// Why the settings could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Claude Code would not read the file, so nothing was written.
    #[error("Claude Code ignores `{}` here: {gate}", path.display())]
    Ignored {
        /// The settings file.
        path: PathBuf,
        /// The condition that makes Claude Code ignore it.
        gate: Gate,
    },
    /// Reading, parsing or writing a file failed.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What [`save_env`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

/// Why Claude Code ignores the project's `.claude/settings.local.json`
/// here, or `None` when it reads it.
pub fn gate(locations: &Locations) -> Option<Gate> {
    // `approval` decides; the checks below only name the condition.
    if !approval::local_settings_gated(locations) {
        return None;
    }
    let directory = locations.working_dir.join(".claude");
    let file = locations.local_settings();
    let is_symlink =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    Some(match &locations.git_root {
        None => Gate::NotInRepository,
        Some(_) if is_symlink(&directory) => Gate::DirectorySymlink,
        Some(_) if is_symlink(&file) => Gate::FileSymlink,
        Some(_) if directory.join(".git").exists() => Gate::NestedRepository,
        // The one condition left: git tracks the file.
        Some(_) => Gate::Tracked,
    })
}

/// The `env` map of the settings file at `path` (string values only);
/// empty when the file is missing or unreadable.
pub fn read_env(path: &Path) -> Vec<(String, String)> {
    let Ok(Some(text)) = fsx::read_if_exists(path) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) else {
        return Vec::new();
    };
    value
        .get("env")
        .and_then(Value::as_object)
        .map(|env| {
            env.iter()
                .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Sets each `(name, value)` in the `env` map of the project's
/// `.claude/settings.local.json` and makes sure git ignores that file.
/// Refuses, writing nothing, when Claude Code would ignore the file.
pub fn save_env(
    locations: &Locations,
    values: &[(String, String)],
) -> Result<Saved, SettingsError> {
    let path = locations.local_settings();
    if let Some(gate) = gate(locations) {
        return Err(SettingsError::Ignored { path, gate });
    }
    let mut saved = Saved::default();
    if values.is_empty() {
        return Ok(saved);
    }
    // `.gitignore` first: the values are secrets, and a file holding them
    // must never wait, unignored, for a second write.
    let root = locations.project_root();
    let relative = path
        .strip_prefix(&root)
        .map(|relative| {
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_else(|_| ".claude/settings.local.json".to_string());
    let gitignore = root.join(".gitignore");
    if envfiles::git_ignores(&root, &path) != Some(true)
        && edit(locations, &gitignore, NewMode::Umasked(0o644), |old| {
            Ok(gitignore_with(old, &relative))
        })?
    {
        saved.written.push(gitignore);
    }
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent).map_err(|source| ConfigError::Write {
            path: path.clone(),
            source,
        })?;
    }
    // Claude Code creates this file 0644; once it holds secrets, a new one
    // is private like `.env` (an existing file keeps its mode).
    let changed = edit(locations, &path, NewMode::Exact(0o600), |old| {
        with_env(old, values).map_err(|error| document_error(&path, error))
    })?;
    if changed {
        saved.written.push(path);
    }
    Ok(saved)
}

/// The settings text `existing` (`None`: no file) with each `(name, value)`
/// set in its `env` map, or `None` when every value is already there.
///
/// A new or blank file becomes `{"env": {…}}` laid out as Claude Code
/// writes it (2-space indent, final newline); an existing one changes only
/// where the `env` members are.
pub fn with_env(
    existing: Option<&str>,
    values: &[(String, String)],
) -> Result<Option<String>, DocumentError> {
    let blank = existing.is_none_or(|text| text.trim_start_matches('\u{feff}').trim().is_empty());
    if blank {
        if values.is_empty() {
            return Ok(None);
        }
        let env: serde_json::Map<String, Value> = values
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        let mut root = serde_json::Map::new();
        root.insert("env".to_string(), Value::Object(env));
        return Ok(Some(format!(
            "{}\n",
            pretty(&Value::Object(root), "  ", "")
        )));
    }
    let mut document = JsonDocument::parse(existing.unwrap_or_default().to_string())?;
    let mut changed = false;
    for (name, value) in values {
        let current = document
            .object_at(&["env"])
            .map_err(DocumentError::Shape)?
            .and_then(|env| document.find_member(&env, name))
            .map(|member| document.value_at(&member.value_span));
        if current.as_ref().and_then(Value::as_str) == Some(value.as_str()) {
            continue;
        }
        let splice = document
            .plan_set(&["env"], name, &Value::String(value.clone()), &|_| {
                serde_json::Map::new()
            })
            .map_err(DocumentError::Shape)?;
        document = document.apply(&splice)?;
        changed = true;
    }
    Ok(changed.then(|| document.into_text()))
}

/// The `.gitignore` text `existing` with a line for `relative` (the
/// settings file, relative to the `.gitignore`) appended, or `None` when
/// the text already ignores it.
pub fn gitignore_with(existing: Option<&str>, relative: &str) -> Option<String> {
    crate::gitignore::with_entry(existing, relative)
}

/// Whether the rules of a `.gitignore` text ignore the file at `relative`.
pub fn gitignore_ignores(text: &str, relative: &str) -> bool {
    crate::gitignore::ignores(text, relative)
}

/// [`fsx::edit_text`] with its errors as [`ConfigError`] (a running Claude
/// Code writes settings too, so a change made meanwhile is redone).
fn edit(
    locations: &Locations,
    path: &Path,
    new_mode: NewMode,
    change: impl Fn(Option<&str>) -> Result<Option<String>, ConfigError>,
) -> Result<bool, ConfigError> {
    let path_buf = path.to_path_buf();
    fsx::edit_text(&locations.state_dir, path, new_mode, change).map_err(|error| match error {
        TextEditError::Read(source) => ConfigError::Read {
            path: path_buf,
            source,
        },
        TextEditError::Write(source) => ConfigError::Write {
            path: path_buf,
            source,
        },
        TextEditError::Locked(source) => ConfigError::lock(&path_buf, source),
        TextEditError::Contended => ConfigError::Contended { path: path_buf },
        TextEditError::Change(error) => error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::Environment;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
            .collect()
    }

    #[test]
    fn a_new_file_is_laid_out_as_claude_code_writes_it() {
        let text = with_env(None, &pairs(&[("B", "x \"y\" $z"), ("A", "1")]))
            .unwrap()
            .unwrap();
        assert_eq!(
            text,
            "{\n  \"env\": {\n    \"B\": \"x \\\"y\\\" $z\",\n    \"A\": \"1\"\n  }\n}\n"
        );
        assert_eq!(
            with_env(Some(" \n"), &pairs(&[("A", "1")])).unwrap(),
            Some("{\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n".to_string())
        );
    }

    #[test]
    fn an_existing_file_changes_only_in_its_env_members() {
        let old = "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n    \"env\": {\n        \"KEEP\": \"1\",\n        \"A\": \"old\"\n    },\n    \"n\": 1.50\n}";
        let new = with_env(Some(old), &pairs(&[("A", "new"), ("B", "b")]))
            .unwrap()
            .unwrap();
        assert_eq!(
            new,
            "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n    \"env\": {\n        \"KEEP\": \"1\",\n        \"A\": \"new\",\n        \"B\": \"b\"\n    },\n    \"n\": 1.50\n}"
        );
    }

    #[test]
    fn a_missing_env_map_is_appended_and_equal_values_write_nothing() {
        let old = "{\n  \"enableAllProjectMcpServers\": true\n}\n";
        let new = with_env(Some(old), &pairs(&[("A", "1")])).unwrap().unwrap();
        assert_eq!(
            new,
            "{\n  \"enableAllProjectMcpServers\": true,\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n"
        );
        assert_eq!(with_env(Some(&new), &pairs(&[("A", "1")])).unwrap(), None);
    }

    #[test]
    fn an_env_that_is_not_an_object_or_broken_json_is_an_error() {
        assert!(matches!(
            with_env(Some("{\"env\": []}"), &pairs(&[("A", "1")])),
            Err(DocumentError::Shape(_))
        ));
        assert!(matches!(
            with_env(Some("{\"env\": {},}"), &pairs(&[("A", "1")])),
            Err(DocumentError::Syntax(_))
        ));
    }

    #[test]
    fn gitignore_rules_are_matched_as_git_does() {
        let file = ".claude/settings.local.json";
        for ignoring in [
            ".claude/settings.local.json",
            "/.claude/settings.local.json",
            "settings.local.json",
            "*.local.json",
            ".claude/",
            ".claude",
            ".claude/*",
            "**/settings.local.json",
            "**/.claude",
            ".claude/settings.*.json",
            ".claude/settings.local.json  ",
            "/.claude/**",
            ".claude/*\n!.claude/settings.json",
            ".claude/\n!.claude/settings.local.json",
        ] {
            assert!(gitignore_ignores(ignoring, file), "{ignoring:?}");
        }
        for not_ignoring in [
            "",
            "# .claude/settings.local.json",
            ".env",
            "settings.local.json/",
            "/settings.local.json",
            "other/.claude/settings.local.json",
            ".claude/*\n!.claude/settings.local.json",
            ".claude/settings.json",
            "*.local.json\n!settings.local.json",
        ] {
            assert!(!gitignore_ignores(not_ignoring, file), "{not_ignoring:?}");
        }
        assert!(gitignore_ignores(
            "/pkg/.claude/",
            "pkg/.claude/settings.local.json"
        ));
        assert!(!gitignore_ignores(
            "/.claude/",
            "pkg/.claude/settings.local.json"
        ));
    }

    #[test]
    fn gitignore_gets_one_line_when_needed() {
        let file = ".claude/settings.local.json";
        assert_eq!(
            gitignore_with(None, file).as_deref(),
            Some(".claude/settings.local.json\n")
        );
        assert_eq!(
            gitignore_with(Some("node_modules"), file).as_deref(),
            Some("node_modules\n.claude/settings.local.json\n")
        );
        assert_eq!(
            gitignore_with(Some(".env\r\n"), file).as_deref(),
            Some(".env\r\n.claude/settings.local.json\r\n")
        );
        assert_eq!(gitignore_with(Some(".claude/\n"), file), None);
    }

    fn locations(root: &Path, in_git: bool) -> Locations {
        let project = root.join("project");
        std::fs::create_dir_all(&project).unwrap();
        if in_git {
            std::fs::create_dir_all(project.join(".git")).unwrap();
        }
        Locations::discover(&Environment {
            home: root.join("home"),
            claude_config_dir: None,
            working_dir: project,
            managed_dir: root.join("managed"),
            state_dir: root.join("state"),
        })
        .unwrap()
    }

    #[test]
    fn gates_name_the_condition() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let outside = locations(&root.join("outside"), false);
        assert_eq!(gate(&outside), Some(Gate::NotInRepository));

        let inside = locations(&root.join("inside"), true);
        assert_eq!(gate(&inside), None);
        let claude = inside.working_dir.join(".claude");
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), &claude).unwrap();
        assert_eq!(gate(&inside), Some(Gate::DirectorySymlink));
        std::fs::remove_file(&claude).unwrap();
        std::fs::create_dir_all(&claude).unwrap();
        std::os::unix::fs::symlink(
            root.join("elsewhere/x.json"),
            claude.join("settings.local.json"),
        )
        .unwrap();
        assert_eq!(gate(&inside), Some(Gate::FileSymlink));
        std::fs::remove_file(claude.join("settings.local.json")).unwrap();
        std::fs::create_dir_all(claude.join(".git")).unwrap();
        assert_eq!(gate(&inside), Some(Gate::NestedRepository));
    }

    #[test]
    fn save_env_refuses_when_gated_and_writes_gitignore_then_settings() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let outside = locations(&root.join("outside"), false);
        let error = save_env(&outside, &pairs(&[("A", "1")])).unwrap_err();
        assert!(matches!(
            error,
            SettingsError::Ignored {
                gate: Gate::NotInRepository,
                ..
            }
        ));
        assert!(!outside.working_dir.join(".claude").exists());

        let inside = locations(&root.join("inside"), true);
        let saved = save_env(&inside, &pairs(&[("A", "1")])).unwrap();
        let gitignore = inside.working_dir.join(".gitignore");
        assert_eq!(
            saved.written,
            vec![gitignore.clone(), inside.local_settings()]
        );
        assert_eq!(
            std::fs::read_to_string(&gitignore).unwrap(),
            ".claude/settings.local.json\n"
        );
        assert_eq!(read_env(&inside.local_settings()), pairs(&[("A", "1")]));
        let again = save_env(&inside, &pairs(&[("A", "1")])).unwrap();
        assert!(again.written.is_empty());
    }

    fn git(dir: &Path, args: &[&str]) -> bool {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    #[test]
    fn a_real_repository_is_asked_what_it_tracks_and_ignores() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let project = root.join("project");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        if !git(&project, &["init", "-q"]) {
            return; // no git here: the fake-repository tests cover the rest
        }
        let located = locations(&root, false);
        let file = located.local_settings();
        std::fs::write(&file, "{}\n").unwrap();
        assert!(git(&project, &["add", "--", ".claude/settings.local.json"]));
        assert_eq!(gate(&located), Some(Gate::Tracked));

        assert!(git(
            &project,
            &["rm", "-q", "--cached", "--", ".claude/settings.local.json"]
        ));
        std::fs::write(
            project.join(".git/info/exclude"),
            ".claude/settings.local.json\n",
        )
        .unwrap();
        assert_eq!(gate(&located), None);
        // Git says it is ignored already: `.gitignore` is left alone.
        let saved = save_env(&located, &pairs(&[("A", "1")])).unwrap();
        assert_eq!(saved.written, vec![file.clone()]);
        assert!(!project.join(".gitignore").exists());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n"
        );
    }
}
