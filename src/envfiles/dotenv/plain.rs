//! The fast way through a `.env` whose every line is plain: one pass over
//! the bytes, names and most values borrowed from the file's text (a value
//! is built only when quotes split it in chunks), and nothing dotenvy would
//! read differently.
//!
//! dotenvy 0.15.7 reads a line in two steps: a joiner cuts the text into
//! entries (a quote left open joins the next line; a `#` after a blank cuts
//! a trailing comment off) and a parser reads `[export] KEY = VALUE`,
//! substituting `$NAME` from earlier lines and the process environment. A
//! line is plain when it is a whole entry of its own that the parser reads
//! without substitution, escapes or error: blank, a comment, or
//! `[export] KEY = VALUE [# comment]` whose value is unquoted text and
//! `'…'` or `"…"` chunks, with no `$` outside single quotes and no `\`,
//! stray carriage return, control character or non-ASCII blank anywhere it
//! would count. One line that is not plain and the whole file goes to
//! dotenvy: substitution reads the lines before it, and only dotenvy's own
//! errors say what it skipped.

use std::borrow::Cow;

/// The pairs of `body` (a file's text without its byte-order mark), in
/// order, duplicates included, exactly as dotenvy reads them; `None` when a
/// line is not plain. Names and unbroken values are slices of `body`.
pub(super) fn pairs(body: &str) -> Option<Vec<(&str, Cow<'_, str>)>> {
    let mut pairs = Vec::new();
    read(body, |name, value| pairs.push((name, value)))?;
    Some(pairs)
}

/// Hands `pair` each pair of `body` as [`pairs`] lists them, as it goes;
/// `None` when a line is not plain (the pairs handed so far are then not
/// the file's).
pub(super) fn read<'a>(body: &'a str, mut pair: impl FnMut(&'a str, Cow<'a, str>)) -> Option<()> {
    let mut rest = body;
    while !rest.is_empty() {
        // Most lines of a large file: `KEY=value` and nothing else.
        if let Some((name, value, next)) = simple_line(rest) {
            pair(name, Cow::Borrowed(value));
            rest = next;
            continue;
        }
        let (line, terminated, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => {
                let line = &rest[..at];
                (
                    line.strip_suffix('\r').unwrap_or(line),
                    true,
                    &rest[at + 1..],
                )
            }
            None => (rest, false, ""),
        };
        if let Some((name, value)) = line_pair(line, terminated)? {
            pair(name, value);
        }
        rest = next;
    }
    Some(())
}

/// The first line of `text` when it is `KEY=value` with nothing around the
/// `=` and a value of text bytes only (no blank, quote, `#`, `$`, `\\`,
/// control or non-ASCII byte), ended by a newline or the end of the file:
/// its name, its value, and the text after it. [`line_pair`] reads such a
/// line the same way (a property test holds the two together); this only
/// gets there in one pass.
pub(super) fn simple_line(text: &str) -> Option<(&str, &str, &str)> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut at = 1;
    while bytes.get(at).is_some_and(|&byte| is_key(byte)) {
        at += 1;
    }
    if bytes.get(at) != Some(&b'=') {
        return None;
    }
    let equals = at;
    at += 1;
    while bytes.get(at).is_some_and(|&byte| is_text(byte)) {
        at += 1;
    }
    let next = match bytes.get(at) {
        None => "",
        Some(b'\n') => &text[at + 1..],
        Some(_) => return None,
    };
    // Every byte before `at` is ASCII: each index is a character boundary.
    Some((&text[..equals], &text[equals + 1..at], next))
}

/// A byte dotenvy's joiner or parser would read as something other than
/// text: a control character other than tab (a stray `\r` included).
const fn is_control(byte: u8) -> bool {
    byte < 0x20 && byte != b'\t'
}

/// A byte that is text to both the joiner and the parser wherever it is:
/// printable ASCII other than the blanks, `#`, quotes, `\` and `$`.
fn is_text(byte: u8) -> bool {
    TEXT[usize::from(byte)]
}

/// [`is_text`] of each byte, looked up: the test of nearly every byte of a
/// large file.
const TEXT: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = b'!';
    while byte <= b'~' {
        table[byte as usize] = !matches!(byte, b'#' | b'\'' | b'"' | b'\\' | b'$');
        byte += 1;
    }
    table
};

/// A byte of a key after its first (`[A-Za-z0-9_.]`).
const fn is_key(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.'
}

fn trim_blanks_start(text: &str) -> &str {
    let blanks = text
        .bytes()
        .take_while(|&byte| byte == b' ' || byte == b'\t')
        .count();
    // Blanks are one byte each: `blanks` is at a character boundary.
    &text[blanks..]
}

fn trim_blanks_end(text: &str) -> &str {
    let blanks = text
        .bytes()
        .rev()
        .take_while(|&byte| byte == b' ' || byte == b'\t')
        .count();
    &text[..text.len() - blanks]
}

/// Whether `text` starts with `byte` (an ASCII byte).
fn starts_with(text: &str, byte: u8) -> bool {
    text.as_bytes().first() == Some(&byte)
}

/// What dotenvy reads from one physical line (`line` without its line
/// ending; `terminated` when a newline followed it): `Some(None)` for a
/// blank or comment line, `Some(Some(pair))` for an assignment, `None`
/// when the line is not plain.
pub(super) fn line_pair(line: &str, terminated: bool) -> Option<Option<(&str, Cow<'_, str>)>> {
    // dotenvy skips a line whose first non-blank is `#` before its joiner
    // looks at it, whatever follows.
    if starts_with(trim_blanks_start(line), b'#') {
        return Some(None);
    }
    let entry = trim_blanks_end(&line[..joined_end(line, terminated)?]);
    let entry = trim_blanks_start(entry);
    if entry.is_empty() {
        return Some(None);
    }
    let (mut key, after) = key(entry)?;
    let mut rest = trim_blanks_start(after);
    // `export` is a prefix unless `=` follows it (then it is the key).
    if key == "export" && !starts_with(rest, b'=') {
        let (exported, after) = self::key(rest)?;
        key = exported;
        rest = trim_blanks_start(after);
    }
    let rest = trim_blanks_start(rest.strip_prefix('=')?);
    let value = if rest.is_empty() || starts_with(rest, b'#') {
        Cow::Borrowed("")
    } else {
        value(rest)?
    };
    Some(Some((key, value)))
}

/// Where dotenvy's joiner ends the entry of `line`: at the `#` of a
/// comment that follows a blank, else at the line's end; `None` when the
/// entry would not end on this line, or when anything in it is not plain.
fn joined_end(line: &str, terminated: bool) -> Option<usize> {
    /// The joiner's states that plain text reaches (`ParseState` in
    /// dotenvy's `iter.rs`, escapes left out).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Complete,
        WhiteSpace,
        Quoted(u8),
    }
    let bytes = line.as_bytes();
    let mut state = State::Complete;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match state {
            State::Quoted(quote) => {
                if byte == quote {
                    state = State::Complete;
                } else if byte == b'\\' || is_control(byte) || (quote == b'"' && byte == b'$') {
                    // An escape, or a substitution inside double quotes.
                    return None;
                }
            }
            // Most of a line: text that leaves the joiner complete.
            _ if is_text(byte) => {
                state = State::Complete;
                at += 1;
                while bytes.get(at).is_some_and(|&byte| is_text(byte)) {
                    at += 1;
                }
                continue;
            }
            State::Complete | State::WhiteSpace => match byte {
                b'#' if state == State::WhiteSpace => return Some(at),
                b'\'' | b'"' => state = State::Quoted(byte),
                // A second blank ends the joiner's blank state: `A=1  #'`
                // is no comment to it, and its quote joins the next line.
                b' ' | b'\t' if state == State::Complete => state = State::WhiteSpace,
                0x80.. => {
                    let character = line[at..].chars().next()?;
                    if character.is_whitespace() {
                        return None;
                    }
                    state = State::Complete;
                    at += character.len_utf8();
                    continue;
                }
                b' ' | b'\t' | b'#' => state = State::Complete,
                // `\\`, `$` (substitution; after a comment only when two
                // blanks kept the joiner from cutting it, and then it is
                // rare enough to leave to dotenvy) and control characters.
                _ => return None,
            },
        }
        at += 1;
    }
    match state {
        State::Complete => Some(bytes.len()),
        // A newline ends the blank state; the end of the file does not,
        // and dotenvy reports the entry as unfinished.
        State::WhiteSpace if terminated => Some(bytes.len()),
        State::WhiteSpace | State::Quoted(_) => None,
    }
}

/// A key as dotenvy's parser reads one (`[A-Za-z_][A-Za-z0-9_.]*`), and
/// the text after it.
fn key(text: &str) -> Option<(&str, &str)> {
    let first = *text.as_bytes().first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let end = text
        .bytes()
        .position(|byte| !is_key(byte))
        .unwrap_or(text.len());
    Some(text.split_at(end))
}

/// A value as dotenvy's parser reads it: `text` starts with neither a
/// blank nor `#` and ends without a blank, and [`joined_end`] found every
/// quote in it closed, with no escape and no `$` in double quotes. A slice
/// of `text` unless quotes split it in chunks.
fn value(text: &str) -> Option<Cow<'_, str>> {
    let bytes = text.as_bytes();
    // Built from the first quote on.
    let mut built: Option<String> = None;
    // Start of the unquoted run not yet copied.
    let mut run = 0;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\'' | b'"' => {
                let value = built.get_or_insert_with(|| String::with_capacity(text.len()));
                value.push_str(&text[run..at]);
                let close = at + 1 + memchr::memchr(byte, &bytes[at + 1..])?;
                value.push_str(&text[at + 1..close]);
                at = close + 1;
                run = at;
            }
            b'$' | b'\\' => return None,
            _ if is_text(byte) || byte == b'#' || byte >= 0x80 => at += 1,
            b' ' | b'\t' => {
                // Only blanks and a comment may follow a blank.
                return starts_with(trim_blanks_start(&text[at..]), b'#')
                    .then(|| finished(built, text, run, at));
            }
            // Control characters, which `joined_end` let through in no
            // value.
            _ => return None,
        }
    }
    Some(finished(built, text, run, bytes.len()))
}

/// The value that ends at `end` of `text`: the chunks `built` so far and
/// the unquoted run from `run`, or that run alone, borrowed.
fn finished(built: Option<String>, text: &str, run: usize, end: usize) -> Cow<'_, str> {
    match built {
        None => Cow::Borrowed(&text[run..end]),
        Some(mut value) => {
            value.push_str(&text[run..end]);
            Cow::Owned(value)
        }
    }
}
