//! Unified diffs of text, for showing a change before it is made (the
//! import clash prompt, the previews `serve` asks a person to agree to).
//! `similar` is the diff engine insta uses too.

use std::path::PathBuf;

use serde::Serialize;
use similar::TextDiff;

/// One file's text as it is and as an edit would leave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Its text now; `None` when it does not exist.
    pub before: Option<String>,
    /// Its text after the edit; `None` when it would not exist.
    pub after: Option<String>,
}

impl FileChange {
    /// Whether the edit changes the file at all.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// The unified diff of the change, labelled with `shown` (the path as
    /// the reader knows it); `/dev/null` stands for a side that does not
    /// exist, as in git.
    pub fn unified(&self, shown: &str) -> String {
        let old_label = label(self.before.is_some(), "a", shown);
        let new_label = label(self.after.is_some(), "b", shown);
        unified(
            self.before.as_deref().unwrap_or_default(),
            self.after.as_deref().unwrap_or_default(),
            &old_label,
            &new_label,
        )
    }
}

/// A diff header's name for one side: `/dev/null` for a side that does not
/// exist; `a/path` for a path relative to the project, as git writes it; a
/// `~/…` or absolute path as it is.
pub fn label(exists: bool, side: &str, shown: &str) -> String {
    if !exists {
        "/dev/null".to_string()
    } else if shown.starts_with('/') || shown.starts_with('~') {
        shown.to_string()
    } else {
        format!("{side}/{shown}")
    }
}

/// The unified diff from `old` to `new` with three lines of context, the
/// `---`/`+++` header naming them `old_label` and `new_label`; empty when
/// the texts are the same.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    let mut old = old.to_string();
    let mut new = new.to_string();
    // A last line without a newline would print as `\ No newline…`.
    for text in [&mut old, &mut new] {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    }
    TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_shown_with_its_context() {
        let diff = unified("a\nb\nc\n", "a\nB\nc", "old", "new");
        assert_eq!(diff, "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        assert_eq!(unified("same", "same", "old", "new"), "");
    }

    #[test]
    fn a_new_file_is_diffed_from_dev_null() {
        let change = FileChange {
            path: PathBuf::from("/p/.mcp.json"),
            before: None,
            after: Some("{}\n".into()),
        };
        assert!(change.changes());
        assert_eq!(
            change.unified(".mcp.json"),
            "--- /dev/null\n+++ b/.mcp.json\n@@ -0,0 +1 @@\n+{}\n"
        );
    }
}
