//! Untrusted text made safe for a terminal: names, commands, URLs, file
//! contents and what servers send are shown, never obeyed.
//!
//! A cloned repository can name a server `"evil\nFAKE-ROW"` or put
//! `\u{1b}[2J` or a right-to-left override in a command. Stripping such
//! characters would show something other than what Claude Code runs
//! (`ec\u{1b}[2Jho` is not `echo`), so they are escaped visibly instead, in
//! Rust's `\u{…}` notation. JSON output keeps the exact strings: JSON's own
//! escaping already makes them inert.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must never reach a terminal raw: C0 and C1 controls, DEL, and
/// the bidirectional marks, embeddings, overrides and isolates that reorder
/// what is shown (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every unsafe character escaped: `\n`, `\r`, `\t` and
/// `\u{1b}`-style for the rest. Borrowed when nothing needed escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    // Printable ASCII holds no unsafe character (controls are below 0x20
    // and 0x7f, bidi marks are not ASCII): most texts, a byte at a time.
    if text.bytes().all(|byte| matches!(byte, 0x20..=0x7e)) || !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut shown, c);
    }
    Cow::Owned(shown)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_unsafe(c) => {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Names as status lines list them: each in backticks, escaped, joined
/// with `, `.
pub fn quoted_names<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|name| format!("`{}`", escape(name.as_ref())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`quoted_names`] of the first `shown` names, then how many more: a
/// status line stays one line when there are thousands.
pub fn quoted_names_up_to<S: AsRef<str>>(names: &[S], shown: usize) -> String {
    let mut text = quoted_names(&names[..names.len().min(shown)]);
    if names.len() > shown {
        let _ = write!(text, " and {} more", names.len() - shown);
    }
    text
}

/// The last line of defence before bytes reach a terminal: escapes every
/// unsafe character that is still raw in rendered output, except line
/// breaks and tabs (the layout's own) and SGR colour sequences (`ESC [ … m`,
/// the only escapes mcpenv writes itself). Untrusted pieces are escaped with
/// [`escape`] where they are put into the output; this catches any that
/// were missed, so a forgotten call cannot clear a screen or reorder a line.
pub fn escape_stray(rendered: &str) -> Cow<'_, str> {
    let needs = rendered.char_indices().any(|(at, c)| {
        is_unsafe(c)
            && c != '\n'
            && c != '\t'
            && !(c == '\u{1b}' && sgr_len(&rendered[at..]).is_some())
    });
    if !needs {
        return Cow::Borrowed(rendered);
    }
    let mut out = String::with_capacity(rendered.len() + 16);
    let mut rest = rendered;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}'
            && let Some(len) = sgr_len(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if c == '\n' || c == '\t' {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Length of the SGR sequence `ESC [ digits-and-semicolons m` at the start
/// of `text`, if that is what starts it.
fn sgr_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let params = body
        .bytes()
        .take_while(|byte| byte.is_ascii_digit() || *byte == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// Joins words into a command line a POSIX shell reads back as the same words.
/// A word holding a control or bidi character is written in ANSI-C quoting
/// (`$'a\x1bb'`, read by bash, zsh, ksh and POSIX.1-2024 sh), so the line
/// stays one line that can be copied and run.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|word| {
            if word.chars().any(is_unsafe) {
                return ansi_c_quoted(word);
            }
            shlex::try_quote(word).map_or_else(|_| word.clone(), |quoted| quoted.into_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn ansi_c_quoted(word: &str) -> String {
    let mut quoted = String::from("$'");
    for c in word.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '\'' => quoted.push_str("\\'"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            '\r' => quoted.push_str("\\r"),
            c if is_unsafe(c) => {
                let mut buffer = [0; 4];
                for byte in c.encode_utf8(&mut buffer).bytes() {
                    quoted.push_str(&format!("\\x{byte:02x}"));
                }
            }
            c => quoted.push(c),
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_up_to_a_count_say_how_many_more_and_are_escaped() {
        let names = ["a", "b\u{1b}[2J", "c"];
        assert_eq!(quoted_names_up_to(&names, 3), "`a`, `b\\u{1b}[2J`, `c`");
        assert_eq!(
            quoted_names_up_to(&names, 2),
            "`a`, `b\\u{1b}[2J` and 1 more"
        );
        assert_eq!(quoted_names_up_to(&names[..0], 2), "");
    }

    proptest::proptest! {
        /// The printable-ASCII shortcut changes nothing: a text is
        /// borrowed exactly when no character of it is unsafe.
        #[test]
        fn escape_borrows_exactly_the_texts_without_unsafe_characters(
            before in "[ -~]{0,12}",
            odd in proptest::option::of(
                "[\\x00-\\x1f\\x7f\u{80}-\u{9f}é\u{061c}\u{200e}\u{202a}-\u{202e}\u{2066}-\u{2069}]",
            ),
            after in "[ -~]{0,12}",
        ) {
            // Printable ASCII around at most one other character.
            let text = format!("{before}{}{after}", odd.unwrap_or_default());
            let escaped = escape(&text);
            proptest::prop_assert_eq!(
                matches!(escaped, Cow::Borrowed(_)),
                !text.chars().any(is_unsafe)
            );
            let slow: String = text.chars().fold(String::new(), |mut out, c| {
                push_escaped(&mut out, c);
                out
            });
            proptest::prop_assert_eq!(escaped.into_owned(), slow);
        }
    }

    #[test]
    fn controls_and_bidi_are_shown_not_obeyed() {
        assert_eq!(escape("plain"), "plain");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape("evil\nFAKE-LINE  project"),
            "evil\\nFAKE-LINE  project"
        );
        assert_eq!(escape("ec\u{1b}[2Jho"), "ec\\u{1b}[2Jho");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
        assert_eq!(escape("a\rb\tc\u{7f}\u{85}"), "a\\rb\\tc\\u{7f}\\u{85}");
        assert_eq!(escape("café ✔"), "café ✔");
    }

    #[test]
    fn stray_escapes_keep_colour_and_layout() {
        let ours = "\u{1b}[1mNAME\u{1b}[0m  x\n\tnext\u{1b}[33;1mwarn\u{1b}[0m\n";
        assert_eq!(escape_stray(ours), ours);
        assert_eq!(
            escape_stray("a\u{1b}[2Jb\u{1b}]8;;x\u{7}c\r\u{202e}"),
            "a\\u{1b}[2Jb\\u{1b}]8;;x\\u{7}c\\r\\u{202e}"
        );
    }

    #[test]
    fn words_with_controls_stay_on_one_line() {
        let words = vec![
            "mcpenv".to_string(),
            "a\u{1b}b\n'x".to_string(),
            "a b".to_string(),
        ];
        assert_eq!(shell_words(&words), "mcpenv $'a\\x1bb\\n\\'x' 'a b'");
        let bidi = vec!["x\u{202e}".to_string()];
        assert_eq!(shell_words(&bidi), "$'x\\xe2\\x80\\xae'");
    }
}
