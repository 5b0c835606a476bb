//! Unified diffs of text, for showing a change before it is made (the
//! import clash prompt). `similar` is the diff engine insta uses too.

use similar::TextDiff;

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
}
