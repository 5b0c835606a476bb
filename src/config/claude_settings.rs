//! The `env` map of `.claude/settings.local.json`: Claude Code applies it to
//! its own environment before expanding `${VAR}` placeholders, so values
//! saved there reach the servers without a wrapper. Only the members of
//! `env` that change are touched; every other byte of the file is kept.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::approval;
use crate::config::error::ConfigError;
use crate::config::json_files::document_error;
use crate::config::locate::Locations;
use crate::mechanics::document::{DocumentError, JsonDocument, pretty};
use crate::mechanics::edits::Edit;
use crate::mechanics::fsx::{self, NewMode, TextEditError};

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
    /// No git directory was found to keep the settings file out of git.
    pub not_excluded: bool,
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

/// [`gate`] for approvals and rejections: Claude Code 2.1.332 reads them in
/// a trusted folder outside any git repository too (observed), so only the
/// conditions that make the file someone else's refuse them.
pub fn choice_gate(locations: &Locations) -> Option<Gate> {
    gate(locations).filter(|gate| *gate != Gate::NotInRepository)
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
    edit: &Edit,
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
    // The exclude rule first: the values are secrets, and a file holding
    // them must never wait, unignored, for a second write.
    keep_out_of_git(locations, edit, &path, &mut saved)?;
    create_parent(edit, &path)?;
    // Claude Code creates this file 0644; once it holds secrets, a new one
    // is private like `.env` (an existing file keeps its mode).
    let changed = edit_settings(locations, edit, &path, NewMode::Exact(0o600), |old| {
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

/// Keeps the settings file at `path` out of git with a line in git's own
/// exclude file (`info/exclude`), never the committed `.gitignore`: the
/// file is one person's, and so is the rule. Nothing is written when git
/// ignores the file already; without a git directory nothing is, and
/// `saved.not_excluded` says so.
fn keep_out_of_git(
    locations: &Locations,
    edit: &Edit,
    path: &Path,
    saved: &mut Saved,
) -> Result<(), ConfigError> {
    let Some((exclude, top)) = crate::config::locate::git_exclude(&locations.working_dir) else {
        // Outside any repository there is no git to keep it out of.
        saved.not_excluded = locations.git_root.is_some();
        return Ok(());
    };
    // Patterns in `info/exclude` are relative to the top of the work tree.
    let relative = path
        .strip_prefix(&top)
        .map(|relative| {
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_else(|_| ".claude/settings.local.json".to_string());
    // Where git cannot tell (not installed), the top `.gitignore` decides.
    let ignored = crate::mechanics::git_files::git_ignores(&top, path).unwrap_or_else(|| {
        fsx::read_if_exists(&top.join(".gitignore"))
            .ok()
            .flatten()
            .is_some_and(|text| crate::mechanics::gitignore::ignores(&text, &relative))
    });
    if ignored {
        return Ok(());
    }
    create_parent(edit, &exclude)?;
    if edit_settings(locations, edit, &exclude, NewMode::Umasked(0o644), |old| {
        Ok(crate::mechanics::gitignore::with_entry(old, &relative))
    })? {
        saved.written.push(exclude);
    }
    Ok(())
}

/// Creates the directory `path` is written in, if missing.
fn create_parent(edit: &Edit, path: &Path) -> Result<(), ConfigError> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    edit.unshown(|| {
        fs_err::create_dir_all(parent).map_err(|source| ConfigError::Write {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// A decision about project (`.mcp.json`) servers, as Claude Code's
/// approval dialog records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Listed in `enabledMcpjsonServers`: Claude Code starts it.
    Approve,
    /// Listed in `disabledMcpjsonServers`: hidden, never started.
    Reject,
}

impl Choice {
    /// The list a name goes into, and the one it leaves.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Self::Approve => (ENABLED, DISABLED),
            Self::Reject => (DISABLED, ENABLED),
        }
    }
}

const ENABLED: &str = "enabledMcpjsonServers";
const DISABLED: &str = "disabledMcpjsonServers";
const ENABLE_ALL: &str = "enableAllProjectMcpServers";

/// The keys `claude mcp reset-project-choices` removes.
pub const CHOICE_KEYS: [&str; 3] = [ENABLED, DISABLED, ENABLE_ALL];

/// Records `choice` for each of `names` in the project's
/// `.claude/settings.local.json` and keeps that file out of git. Refuses,
/// writing nothing, when Claude Code would ignore the file; writes nothing
/// when the file records the choice already.
pub fn save_choice(
    locations: &Locations,
    edit: &Edit,
    choice: Choice,
    names: &[String],
) -> Result<Saved, SettingsError> {
    let path = locations.local_settings();
    if let Some(gate) = choice_gate(locations) {
        return Err(SettingsError::Ignored { path, gate });
    }
    let mut saved = Saved::default();
    let current = fsx::read_if_exists(&path).map_err(|source| ConfigError::read(&path, source))?;
    if with_choice(&path, current.as_deref(), choice, names)?.is_none() {
        return Ok(saved);
    }
    keep_out_of_git(locations, edit, &path, &mut saved)?;
    create_parent(edit, &path)?;
    // Claude Code creates this file 0644; mcpenv's are private, as the
    // same file may hold `env` values.
    if edit_settings(locations, edit, &path, NewMode::Exact(0o600), |old| {
        with_choice(&path, old, choice, names)
    })? {
        saved.written.push(path);
    }
    Ok(saved)
}

/// The settings text `existing` (`None`: no file) with each of `names`
/// added to the list `choice` writes and taken out of the other one, or
/// `None` when nothing changes. Only the two lists change: a new list is
/// appended as the last key, laid out as Claude Code writes it.
pub fn with_choice(
    path: &Path,
    existing: Option<&str>,
    choice: Choice,
    names: &[String],
) -> Result<Option<String>, ConfigError> {
    let (into, out_of) = choice.keys();
    let blank = existing.is_none_or(|text| text.trim_start_matches('\u{feff}').trim().is_empty());
    if blank {
        if names.is_empty() {
            return Ok(None);
        }
        let mut root = serde_json::Map::new();
        root.insert(into.to_string(), Value::from(names.to_vec()));
        return Ok(Some(format!(
            "{}\n",
            pretty(&Value::Object(root), "  ", "")
        )));
    }
    let mut document = JsonDocument::parse(existing.unwrap_or_default().to_string())
        .map_err(|error| document_error(path, error))?;
    let mut changed = false;
    // Rejections match after Claude Code's name normalisation, so an
    // approval takes out every spelling that would still reject the name.
    let leaving = list_at(path, &document, out_of)?;
    if let Some(list) = &leaving {
        let kept: Vec<String> = list
            .iter()
            .filter(|listed| !names.iter().any(|name| approval::same_name(listed, name)))
            .cloned()
            .collect();
        if kept.len() != list.len() {
            document = set_list(path, &document, out_of, kept)?;
            changed = true;
        }
    }
    // Approvals need the exact name (Claude Code 2.1.332 warns about a
    // near miss), so presence is checked exactly.
    let mut list = list_at(path, &document, into)?.unwrap_or_default();
    let before = list.len();
    for name in names {
        if !list.contains(name) {
            list.push(name.clone());
        }
    }
    if list.len() != before {
        document = set_list(path, &document, into, list)?;
        changed = true;
    }
    Ok(changed.then(|| document.into_text()))
}

/// The names of the top-level list `key`; `None` when it is absent. A
/// single name written as a string counts as a list of one, as Claude
/// Code reads it.
fn list_at(
    path: &Path,
    document: &JsonDocument,
    key: &str,
) -> Result<Option<Vec<String>>, ConfigError> {
    let root = document
        .object_at(&[])
        .map_err(|shape| ConfigError::shape(path, &shape))?;
    let Some(member) = root.and_then(|root| document.find_member(&root, key)) else {
        return Ok(None);
    };
    match document.value_at(&member.value_span) {
        Value::String(name) => Ok(Some(vec![name])),
        Value::Array(items) if items.iter().all(Value::is_string) => Ok(Some(
            items
                .into_iter()
                .filter_map(|item| item.as_str().map(str::to_string))
                .collect(),
        )),
        _ => Err(ConfigError::Shape {
            path: path.to_path_buf(),
            detail: format!("`{key}` is not a list of server names"),
        }),
    }
}

fn set_list(
    path: &Path,
    document: &JsonDocument,
    key: &str,
    names: Vec<String>,
) -> Result<JsonDocument, ConfigError> {
    let splice = document
        .plan_set(&[], key, &Value::from(names), &|_| serde_json::Map::new())
        .map_err(|shape| ConfigError::shape(path, &shape))?;
    document
        .apply(&splice)
        .map_err(|error| document_error(path, error))
}

/// Removes the approval keys ([`CHOICE_KEYS`]) from the project's
/// `.claude/settings.local.json`, every other byte kept; returns whether
/// it wrote. A missing file is left missing.
pub fn reset_choices(locations: &Locations, edit: &Edit) -> Result<bool, ConfigError> {
    let path = locations.local_settings();
    if fsx::read_if_exists(&path)
        .map_err(|source| ConfigError::read(&path, source))?
        .is_none()
    {
        return Ok(false);
    }
    edit_settings(locations, edit, &path, NewMode::Exact(0o600), |old| {
        without_choices(&path, old)
    })
}

/// The settings text `existing` without the approval keys, or `None` when
/// it has none of them.
pub fn without_choices(path: &Path, existing: Option<&str>) -> Result<Option<String>, ConfigError> {
    let Some(text) = existing.filter(|text| !text.trim_start_matches('\u{feff}').trim().is_empty())
    else {
        return Ok(None);
    };
    let mut document =
        JsonDocument::parse(text.to_string()).map_err(|error| document_error(path, error))?;
    let mut changed = false;
    for key in CHOICE_KEYS {
        let splice = document
            .plan_remove(&[], key)
            .map_err(|shape| ConfigError::shape(path, &shape))?;
        if let Some(splice) = splice {
            document = document
                .apply(&splice)
                .map_err(|error| document_error(path, error))?;
            changed = true;
        }
    }
    Ok(changed.then(|| document.into_text()))
}

/// Whether the rules of a `.gitignore` text ignore the file at `relative`.
pub fn gitignore_ignores(text: &str, relative: &str) -> bool {
    crate::mechanics::gitignore::ignores(text, relative)
}

/// [`Edit::edit_text`] with its errors as [`ConfigError`] (a running Claude
/// Code writes settings too, so a change made meanwhile is redone).
fn edit_settings(
    locations: &Locations,
    edit: &Edit,
    path: &Path,
    new_mode: NewMode,
    change: impl Fn(Option<&str>) -> Result<Option<String>, ConfigError>,
) -> Result<bool, ConfigError> {
    let path_buf = path.to_path_buf();
    edit.edit_text(&locations.state_dir, path, new_mode, change)
        .map_err(|error| match error {
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
    use crate::config::locate::Environment;

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

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_string()).collect()
    }

    #[test]
    fn choices_move_names_between_the_lists_and_keep_other_bytes() {
        let path = Path::new("settings.local.json");
        assert_eq!(
            with_choice(path, None, Choice::Approve, &names(&["gh"])).unwrap(),
            Some("{\n  \"enabledMcpjsonServers\": [\n    \"gh\"\n  ]\n}\n".to_string())
        );
        let old = "{\n    \"env\": {\"A\": \"1\"},\n    \"disabledMcpjsonServers\": [\"gh\", \"x\"],\n    \"n\": 1.50\n}";
        let approved = with_choice(path, Some(old), Choice::Approve, &names(&["gh"]))
            .unwrap()
            .unwrap();
        assert_eq!(
            approved,
            "{\n    \"env\": {\"A\": \"1\"},\n    \"disabledMcpjsonServers\": [\n        \"x\"\n    ],\n    \"n\": 1.50,\n    \"enabledMcpjsonServers\": [\n        \"gh\"\n    ]\n}"
        );
        assert_eq!(
            with_choice(path, Some(&approved), Choice::Approve, &names(&["gh"])).unwrap(),
            None
        );
        // A rejection under another spelling still rejects: it goes too.
        let spelled = "{\"disabledMcpjsonServers\": [\"my.server\"]}";
        assert_eq!(
            with_choice(path, Some(spelled), Choice::Approve, &names(&["my_server"])).unwrap(),
            Some(
                "{\"disabledMcpjsonServers\": [],\"enabledMcpjsonServers\": [\"my_server\"]}"
                    .to_string()
            )
        );
        assert!(matches!(
            with_choice(
                path,
                Some("{\"enabledMcpjsonServers\": 3}"),
                Choice::Reject,
                &names(&["a"])
            ),
            Err(ConfigError::Shape { .. })
        ));
    }

    #[test]
    fn resetting_removes_only_the_three_keys() {
        let path = Path::new("settings.local.json");
        let old = "{\n  \"enabledMcpjsonServers\": [\"a\"],\n  \"env\": {},\n  \"enableAllProjectMcpServers\": true,\n  \"disabledMcpjsonServers\": []\n}\n";
        assert_eq!(
            without_choices(path, Some(old)).unwrap(),
            Some("{\n  \"env\": {}\n}\n".to_string())
        );
        assert_eq!(without_choices(path, Some("{\"env\": {}}")).unwrap(), None);
        assert_eq!(without_choices(path, None).unwrap(), None);
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
            layout_cache: None,
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
    fn save_env_refuses_when_gated_and_writes_the_exclude_rule_then_settings() {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let outside = locations(&root.join("outside"), false);
        let error = save_env(&outside, &Edit::plain(), &pairs(&[("A", "1")])).unwrap_err();
        assert!(matches!(
            error,
            SettingsError::Ignored {
                gate: Gate::NotInRepository,
                ..
            }
        ));
        assert!(!outside.working_dir.join(".claude").exists());

        let inside = locations(&root.join("inside"), true);
        let saved = save_env(&inside, &Edit::plain(), &pairs(&[("A", "1")])).unwrap();
        // The rule is private too: git's own exclude file, not `.gitignore`.
        let exclude = inside.working_dir.join(".git/info/exclude");
        assert_eq!(
            saved.written,
            vec![exclude.clone(), inside.local_settings()]
        );
        assert_eq!(
            std::fs::read_to_string(&exclude).unwrap(),
            ".claude/settings.local.json\n"
        );
        assert!(!inside.working_dir.join(".gitignore").exists());
        assert_eq!(read_env(&inside.local_settings()), pairs(&[("A", "1")]));
        let again = save_env(&inside, &Edit::plain(), &pairs(&[("A", "1")])).unwrap();
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
        let saved = save_env(&located, &Edit::plain(), &pairs(&[("A", "1")])).unwrap();
        assert_eq!(saved.written, vec![file.clone()]);
        assert!(!project.join(".gitignore").exists());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n"
        );
    }
}
