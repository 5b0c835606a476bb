//! Whether a `.gitignore` text ignores a file, and adding a line for it.
//! Used when git itself cannot say (not installed, not a repository); the
//! matching is the `ignore` crate's (ripgrep's), which follows git's rules.

use ignore::gitignore::GitignoreBuilder;

/// Whether the rules of the `.gitignore` text `text` ignore the file at
/// `relative` (`/`-separated, relative to that `.gitignore`), as git
/// decides: the last matching rule wins, and nothing inside an ignored
/// directory can be re-included.
pub fn ignores(text: &str, relative: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut builder = GitignoreBuilder::new("");
    for line in text.lines() {
        // A line the crate cannot read is one git would not apply either.
        let _ = builder.add_line(None, line);
    }
    let Ok(rules) = builder.build() else {
        return false;
    };
    // Git never re-includes a file inside an ignored directory, so the
    // directories are decided first, outermost first.
    let parts: Vec<&str> = relative.split('/').collect();
    for depth in 1..parts.len() {
        if rules.matched(parts[..depth].join("/"), true).is_ignore() {
            return true;
        }
    }
    rules.matched(relative, false).is_ignore()
}

/// `existing` (`None`: no `.gitignore` yet) with a line for `relative`
/// appended, keeping its line endings, or `None` when it already ignores it.
pub fn with_entry(existing: Option<&str>, relative: &str) -> Option<String> {
    let existing = existing.unwrap_or_default();
    if ignores(existing, relative) {
        return None;
    }
    let ending = if existing.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut text = existing.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(ending);
    }
    text.push_str(relative);
    text.push_str(ending);
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_files() {
        for ignoring in [
            ".env",
            "/.env",
            ".env*",
            "*.env",
            "*",
            ".env\n!.env.example",
            "# c\n.env  ",
        ] {
            assert!(ignores(ignoring, ".env"), "{ignoring:?}");
        }
        for not_ignoring in [
            "",
            ".env.*",
            ".env/",
            "!.env",
            ".env\n!.env",
            "sub/.env",
            "# .env",
            "\\#.env",
        ] {
            assert!(!ignores(not_ignoring, ".env"), "{not_ignoring:?}");
        }
    }

    #[test]
    fn nested_files_and_directories() {
        let file = ".claude/settings.local.json";
        for ignoring in [
            ".claude/",
            ".claude/*",
            "**/settings.local.json",
            "settings.local.json",
            ".claude/settings.local.json",
            ".claude/\n!.claude/settings.local.json",
        ] {
            assert!(ignores(ignoring, file), "{ignoring:?}");
        }
        for not_ignoring in [
            "",
            "/settings.local.json",
            ".claude/*\n!.claude/settings.local.json",
            "settings.json",
        ] {
            assert!(!ignores(not_ignoring, file), "{not_ignoring:?}");
        }
    }

    #[test]
    fn appending_keeps_the_text() {
        assert_eq!(with_entry(None, ".env").as_deref(), Some(".env\n"));
        assert_eq!(
            with_entry(Some("target/"), ".env").as_deref(),
            Some("target/\n.env\n")
        );
        assert_eq!(
            with_entry(Some("a\r\n"), ".env").as_deref(),
            Some("a\r\n.env\r\n")
        );
        assert_eq!(with_entry(Some(".env\n"), ".env"), None);
    }
}
