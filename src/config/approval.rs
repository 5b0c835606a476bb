//! Whether Claude Code has approved a project (`.mcp.json`) server, from the
//! `enabledMcpjsonServers` / `disabledMcpjsonServers` /
//! `enableAllProjectMcpServers` keys of its settings files.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::config::locate::Locations;

/// A project server's approval state in Claude Code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Claude Code starts it.
    Approved,
    /// Claude Code will ask before starting it; it does not shadow others.
    Pending,
    /// Listed in `disabledMcpjsonServers`: hidden and never started.
    Rejected,
}

impl Approval {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Pending => "pending",
            Self::Rejected => "rejected",
        }
    }
}

/// Which settings file a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Managed,
    User,
    Project,
    Local,
    /// Arrays left in the `~/.claude.json` project entry by old releases.
    Legacy,
}

#[derive(Debug, Clone)]
struct Decisions {
    source: Source,
    enabled: Vec<String>,
    disabled: Vec<String>,
    enable_all: Option<bool>,
}

/// A settings file that could not be used (Claude Code skips it too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// Everything that decides approvals for one working directory.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    decisions: Vec<Decisions>,
    trusted: bool,
    cwd_is_home: bool,
    /// Settings files that were skipped because they are malformed.
    pub problems: Vec<SettingsProblem>,
}

impl ApprovalPolicy {
    /// Reads the settings files for `locations`; `project_entry` is this
    /// project's object in `~/.claude.json`, if any (trust and legacy keys).
    pub fn load(locations: &Locations, project_entry: Option<&Value>) -> Self {
        let mut problems = Vec::new();
        let mut decisions = Vec::new();
        for (source, path) in [
            (Source::Managed, locations.managed_settings()),
            (Source::User, locations.user_settings()),
            (Source::Project, locations.project_settings()),
            (Source::Local, locations.local_settings()),
        ] {
            match read_settings(&path) {
                Ok(Some(value)) => decisions.push(Decisions::from_value(source, &value)),
                Ok(None) => {}
                Err(message) => problems.push(SettingsProblem { path, message }),
            }
        }
        if let Some(entry) = project_entry {
            decisions.push(Decisions::from_value(Source::Legacy, entry));
        }
        let trusted = project_entry
            .and_then(|entry| entry.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Self {
            decisions,
            trusted,
            cwd_is_home: locations.working_dir == locations.home,
            problems,
        }
    }

    /// The state of project server `name`.
    pub fn approval(&self, name: &str) -> Approval {
        let name = normalize(name);
        if self.decisions.iter().any(|decisions| {
            decisions
                .disabled
                .iter()
                .any(|listed| normalize(listed) == name)
        }) {
            return Approval::Rejected;
        }
        let enables = |decisions: &Decisions| {
            decisions.enable_all == Some(true)
                || decisions
                    .enabled
                    .iter()
                    .any(|listed| normalize(listed) == name)
        };
        let approved = if self.trusted {
            self.decisions.iter().any(enables)
        } else {
            // An untrusted project cannot approve its own servers: its
            // committed settings count only when they are the user's own
            // (cwd is HOME), and Claude Code 2.1.332 ignores the approvals
            // of local settings until the folder is trusted (observed: a
            // server listed there stays pending, gated or not).
            self.decisions
                .iter()
                .filter(|decisions| match decisions.source {
                    Source::Project => self.cwd_is_home,
                    Source::Local | Source::Legacy => false,
                    Source::Managed | Source::User => true,
                })
                .any(enables)
        };
        if approved {
            Approval::Approved
        } else {
            Approval::Pending
        }
    }
}

/// Whether this project's entry in `~/.claude.json` records that its trust
/// dialog was accepted. Claude Code 2.1.332 reads approvals from
/// `.claude/settings.local.json` only in a trusted folder (or an ancestor's
/// trust; this checks the project's own entry only).
pub fn project_trusted(locations: &Locations) -> bool {
    let Ok(Some(claude_json)) =
        crate::config::json_files::load_claude_json(&crate::mechanics::fsx::Disk, locations)
    else {
        return false;
    };
    let document = claude_json.lookups();
    document
        .object_at(&["projects", locations.local_key.as_str()])
        .ok()
        .flatten()
        .and_then(|entry| document.find_member(&entry, "hasTrustDialogAccepted"))
        .is_some_and(|member| document.value_at(&member.value_span) == Value::Bool(true))
}

impl Decisions {
    fn from_value(source: Source, value: &Value) -> Self {
        let names = |key: &str| crate::config::model::string_list(value.get(key));
        Self {
            source,
            enabled: names("enabledMcpjsonServers"),
            disabled: names("disabledMcpjsonServers"),
            enable_all: value
                .get("enableAllProjectMcpServers")
                .and_then(Value::as_bool),
        }
    }
}

fn read_settings(path: &Path) -> Result<Option<Value>, String> {
    let text = match crate::mechanics::fsx::read_if_exists(path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(error) => return Err(format!("cannot be read: {error}")),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) {
        Ok(value @ Value::Object(_)) => Ok(Some(value)),
        Ok(_) => Err("is not a JSON object".to_string()),
        Err(error) => Err(format!("is not valid JSON: {error}")),
    }
}

/// Whether Claude Code takes `listed` (in a settings list) for `name`:
/// equal after its name normalisation.
pub fn same_name(listed: &str, name: &str) -> bool {
    normalize(listed) == normalize(name)
}

/// Claude Code compares names after mapping every character outside
/// `[A-Za-z0-9_-]` to `_`.
fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Claude Code ignores `.claude/settings.local.json` for approvals in an
/// untrusted project when it could have come from the repository itself.
pub fn local_settings_gated(locations: &Locations) -> bool {
    if locations.git_root.is_none() {
        return true;
    }
    let directory = locations.working_dir.join(".claude");
    let file = locations.local_settings();
    let is_symlink =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_symlink(&directory) || is_symlink(&file) || directory.join(".git").exists() {
        return true;
    }
    file.is_file() && tracked_by_git(&file)
}

/// Whether git tracks `file` (a file the repository itself ships).
pub fn tracked_by_git(file: &Path) -> bool {
    crate::mechanics::git_files::tracked(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::locate::Environment;
    use serde_json::json;
    use std::fs;

    struct Fixture {
        _temp: tempfile::TempDir,
        locations: Locations,
    }

    fn fixture(in_git: bool) -> Fixture {
        let temp = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(temp.path()).unwrap();
        let project = root.join("project");
        fs::create_dir_all(project.join(".claude")).unwrap();
        if in_git {
            fs::create_dir_all(project.join(".git")).unwrap();
        }
        let locations = Locations::discover(&Environment {
            home: root.join("home"),
            claude_config_dir: None,
            working_dir: project,
            managed_dir: root.join("managed"),
            state_dir: root.join("state"),
            layout_cache: None,
        })
        .unwrap();
        Fixture {
            _temp: temp,
            locations,
        }
    }

    fn write(path: &Path, value: Value) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, value.to_string()).unwrap();
    }

    #[test]
    fn nothing_configured_is_pending() {
        let fixture = fixture(true);
        let policy = ApprovalPolicy::load(&fixture.locations, None);
        assert_eq!(policy.approval("gh"), Approval::Pending);
    }

    #[test]
    fn local_settings_approve_only_in_a_trusted_folder_and_reject_always() {
        let fixture = fixture(true);
        write(
            &fixture.locations.local_settings(),
            json!({"enabledMcpjsonServers": ["gh"], "disabledMcpjsonServers": ["bad"]}),
        );
        // Claude Code 2.1.332: listed, yet pending until the trust dialog.
        let policy = ApprovalPolicy::load(&fixture.locations, None);
        assert_eq!(policy.approval("gh"), Approval::Pending);
        assert_eq!(policy.approval("bad"), Approval::Rejected);
        let trusted = json!({"hasTrustDialogAccepted": true});
        let policy = ApprovalPolicy::load(&fixture.locations, Some(&trusted));
        assert_eq!(policy.approval("gh"), Approval::Approved);
        assert_eq!(policy.approval("bad"), Approval::Rejected);
        assert_eq!(policy.approval("other"), Approval::Pending);
    }

    #[test]
    fn local_settings_are_gated_outside_git_unless_trusted() {
        let fixture = fixture(false);
        write(
            &fixture.locations.local_settings(),
            json!({"enableAllProjectMcpServers": true}),
        );
        assert_eq!(
            ApprovalPolicy::load(&fixture.locations, None).approval("gh"),
            Approval::Pending
        );
        let trusted = json!({"hasTrustDialogAccepted": true});
        assert_eq!(
            ApprovalPolicy::load(&fixture.locations, Some(&trusted)).approval("gh"),
            Approval::Approved
        );
    }

    #[test]
    fn committed_project_settings_cannot_approve_an_untrusted_project() {
        let fixture = fixture(true);
        write(
            &fixture.locations.project_settings(),
            json!({"enableAllProjectMcpServers": true}),
        );
        assert_eq!(
            ApprovalPolicy::load(&fixture.locations, None).approval("gh"),
            Approval::Pending
        );
        write(
            &fixture.locations.user_settings(),
            json!({"enabledMcpjsonServers": ["gh"]}),
        );
        assert_eq!(
            ApprovalPolicy::load(&fixture.locations, None).approval("gh"),
            Approval::Approved
        );
    }

    #[test]
    fn names_compare_after_normalisation_and_legacy_arrays_count() {
        let fixture = fixture(true);
        let entry = json!({"enabledMcpjsonServers": ["my.server"], "hasTrustDialogAccepted": true});
        assert_eq!(
            ApprovalPolicy::load(&fixture.locations, Some(&entry)).approval("my_server"),
            Approval::Approved
        );
    }

    #[test]
    fn malformed_settings_are_reported_and_skipped() {
        let fixture = fixture(true);
        fs::write(fixture.locations.local_settings(), "{oops").unwrap();
        let policy = ApprovalPolicy::load(&fixture.locations, None);
        assert_eq!(policy.approval("gh"), Approval::Pending);
        assert_eq!(policy.problems.len(), 1);
    }
}
