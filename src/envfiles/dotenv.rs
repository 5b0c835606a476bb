//! `.env` files: read with dotenvy's iterator (the process environment is
//! never modified), written by a line-preserving editor whose quoting dotenvy
//! reads back exactly.
//!
//! Also the small `.env.example` and `.gitignore` edits that go with them.
//!
//! dotenvy 0.15.7 substitutes `$NAME` and `${NAME}` in unquoted and
//! double-quoted values, from earlier lines and from the process environment
//! (which wins). mcpenv's writer puts every value in single quotes (see
//! [`quote`]), so what it writes reads back literally, in dotenvy and in a
//! shell that sources the file (`set -a; . ./.env`).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::hash_map::Entry;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::string::FromUtf8Error;

use crate::config::expansion::is_variable_name;

mod plain;

/// Reading a `.env` file failed.
#[derive(Debug, thiserror::Error)]
pub enum DotEnvError {
    /// Something other than a regular file is there (a FIFO, a directory);
    /// it was never opened.
    #[error("`{}` is {kind}, not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What is there instead.
        kind: crate::mechanics::fsx::FileKind,
    },
    /// The file exists but could not be read.
    #[error("failed to read `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file is not UTF-8, which dotenvy requires.
    #[error("`{}` is not valid UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Where the first invalid byte is.
        #[source]
        source: FromUtf8Error,
    },
}

/// A value or an edit that mcpenv will not write to a `.env` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    /// The value holds a control character other than newline and tab.
    #[error("the value contains {}, which mcpenv does not write to dotenv files or print for a shell", describe_char(*character))]
    ControlCharacter {
        /// The first offending character.
        character: char,
    },
    /// The name is not `[A-Za-z_][A-Za-z0-9_]*`.
    #[error(
        "`{name}` is not a valid variable name (letters, digits and `_`, not starting with a digit)"
    )]
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// The existing text leaves a quote open to the end of the file, so a
    /// line added after it would be read as part of that value.
    #[error("line {line} opens a quote that is never closed; fix it before adding variables")]
    UnterminatedQuote {
        /// The 1-based line where the open quote's entry starts.
        line: usize,
    },
    /// Removing an assignment would change how other lines read (a later
    /// `${NAME}` took its value, or a quote spans it).
    #[error("removing line {line} would change how other lines of the file read; edit it by hand")]
    EntangledLine {
        /// The 1-based line of the first assignment to remove.
        line: usize,
    },
}

/// A line dotenvy could not parse; the rest of the file is still read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based line where the entry starts.
    pub line: usize,
    /// What is wrong, without quoting the line (it may hold a secret).
    pub message: String,
}

impl LineProblem {
    /// The warning of a command that reads `file` and goes on without
    /// this line (`run`, `env`): what a person must fix, never the line.
    pub fn skipped_in(&self, file: &Path) -> String {
        format!(
            "`{}` line {}: {}; skipped",
            file.display(),
            self.line,
            self.message
        )
    }
}

/// A `.env` file as dotenvy reads it.
#[derive(Debug, Clone)]
pub struct DotEnv {
    /// Where it was read from.
    pub path: PathBuf,
    /// The file's text; `None` when the file does not exist.
    pub text: Option<String>,
    /// Every assignment in file order, duplicates included: see
    /// [`DotEnv::entries`].
    entries: Entries,
    /// Lines dotenvy could not parse.
    pub problems: Vec<LineProblem>,
}

impl PartialEq for DotEnv {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
            && self.text == other.text
            && self.problems == other.problems
            && self.entries().eq(other.entries())
    }
}

impl Eq for DotEnv {}

/// The assignments of a file. A name or value the file's text holds as it
/// is (every name and most values) is kept as a span of that text; any
/// other (a value quotes split in chunks, one dotenvy substituted in) is
/// copied into one string of its own. A 100,000-line `.env` costs no
/// allocation a pair.
#[derive(Debug, Clone, Default)]
struct Entries {
    /// The names and values that are no span of the file's text.
    own: String,
    /// Name and value of each assignment, in file order.
    pairs: Vec<(Piece, Piece)>,
}

/// Where one name or value of [`Entries`] is.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// In [`Entries::own`] rather than the file's text.
    own: bool,
    start: usize,
    end: usize,
}

impl Entries {
    /// The pairs of `text`, as dotenvy reads it: one pass of
    /// [`plain::read`] straight into the entries when every line is plain,
    /// else dotenvy's pairs, copied. Its problems too.
    fn read(text: &str) -> (Self, Vec<LineProblem>) {
        // dotenvy's iterators leave a byte-order mark in the first key.
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut entries = Self::default();
        if plain::read(body, |name, value| entries.push(text, name, value)).is_some() {
            return (entries, Vec::new());
        }
        let (pairs, problems) = dotenvy_text(body);
        let mut entries = Self::default();
        for (name, value) in &pairs {
            let pair = (entries.copy(name), entries.copy(value));
            entries.pairs.push(pair);
        }
        (entries, problems)
    }

    /// Adds the pair `name`, `value` as [`plain::read`] gave it: a
    /// borrowed part is a slice of `text`, an owned one never is.
    fn push(&mut self, text: &str, name: &str, value: Cow<'_, str>) {
        let name = self.piece(text, name);
        let value = match value {
            Cow::Borrowed(value) => self.piece(text, value),
            Cow::Owned(value) => self.copy(&value),
        };
        self.pairs.push((name, value));
    }

    /// Where `part` is: its span of `text` when it is a slice of it, else
    /// a copy at the end of `own`.
    fn piece(&mut self, text: &str, part: &str) -> Piece {
        if let Some(start) = part.as_ptr().addr().checked_sub(text.as_ptr().addr())
            && start
                .checked_add(part.len())
                .is_some_and(|end| end <= text.len())
        {
            // The same address and length in `text`: that very slice.
            return Piece {
                own: false,
                start,
                end: start + part.len(),
            };
        }
        self.copy(part)
    }

    /// A copy of `part` at the end of `own`.
    fn copy(&mut self, part: &str) -> Piece {
        let start = self.own.len();
        self.own.push_str(part);
        Piece {
            own: true,
            start,
            end: self.own.len(),
        }
    }

    fn get<'a>(&'a self, text: &'a str, piece: Piece) -> &'a str {
        let whole = if piece.own { &self.own } else { text };
        &whole[piece.start..piece.end]
    }
}

impl DotEnv {
    /// Parses `text` as the contents of the file at `path`.
    ///
    /// Substitution of `$NAME` still reads the process environment (dotenvy
    /// does that; mcpenv's own values are single-quoted, so never expand).
    pub fn parse(path: &Path, text: String) -> Self {
        let (entries, problems) = Entries::read(&text);
        Self {
            path: path.to_owned(),
            text: Some(text),
            entries,
            problems,
        }
    }

    /// Every assignment (name, value) in file order, duplicates included.
    pub fn entries(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&str, &str)> + ExactSizeIterator + Clone + '_ {
        let text = self.text.as_deref().unwrap_or_default();
        self.entries.pairs.iter().map(move |&(name, value)| {
            (self.entries.get(text, name), self.entries.get(text, value))
        })
    }

    /// The value of `name`; the last assignment wins.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries()
            .rev()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    /// Each name once, in the order of its first assignment, with the value
    /// of its last (the one that counts, as in [`DotEnv::get`]). One pass:
    /// a file may hold 100,000 names.
    pub fn values(&self) -> Vec<(&str, &str)> {
        let mut at: foldhash::HashMap<&str, usize> =
            foldhash::HashMap::with_capacity_and_hasher(self.entries().len(), Default::default());
        let mut values: Vec<(&str, &str)> = Vec::new();
        for (name, value) in self.entries() {
            match at.entry(name) {
                Entry::Occupied(slot) => values[*slot.get()].1 = value,
                Entry::Vacant(slot) => {
                    slot.insert(values.len());
                    values.push((name, value));
                }
            }
        }
        values
    }
}

/// Reads and parses the `.env` file at `path`; a missing file is an empty
/// [`DotEnv`] whose `text` is `None`.
///
/// Only a regular file is read: a FIFO, socket, device or directory there is
/// [`DotEnvError::NotRegular`], and is never opened for a read that could
/// block.
pub fn read(path: &Path) -> Result<DotEnv, DotEnvError> {
    let bytes = match crate::mechanics::fsx::read_regular(path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return Ok(DotEnv {
                path: path.to_owned(),
                text: None,
                entries: Entries::default(),
                problems: Vec::new(),
            });
        }
        Err(source) => {
            return Err(
                match crate::mechanics::fsx::NotRegularFile::in_io(&source) {
                    Some(not_regular) => DotEnvError::NotRegular {
                        path: path.to_owned(),
                        kind: not_regular.kind,
                    },
                    None => DotEnvError::Read {
                        path: path.to_owned(),
                        source,
                    },
                },
            );
        }
    };
    let text = String::from_utf8(bytes).map_err(|source| DotEnvError::NotUtf8 {
        path: path.to_owned(),
        source,
    })?;
    Ok(DotEnv::parse(path, text))
}

/// Hands dotenvy at most one physical line per read, so that after each item
/// it yields, `delivered` is exactly the end of the entry it came from.
struct LineFeed<'a> {
    text: &'a [u8],
    delivered: &'a Cell<usize>,
}

impl Read for LineFeed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.delivered.get();
        let rest = &self.text[start..];
        let line = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |newline| newline + 1);
        let n = line.min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.delivered.set(start + n);
        Ok(n)
    }
}

/// Number of physical lines `text` touches.
fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// Names and values in file order, each borrowed from the file's text
/// where it stands there whole.
type Pairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// Reads `text` as dotenvy does, keeping every pair and turning each error
/// into a [`LineProblem`] at the line where the failing entry starts: a file
/// of plain lines in one pass of its own ([`plain`]), any other through
/// dotenvy itself.
fn parse_text(text: &str) -> (Pairs<'_>, Vec<LineProblem>) {
    // dotenvy's iterators leave a byte-order mark in the first key.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    match plain::pairs(body) {
        Some(pairs) => (
            pairs
                .into_iter()
                .map(|(name, value)| (Cow::Borrowed(name), value))
                .collect(),
            Vec::new(),
        ),
        None => {
            let (pairs, problems) = dotenvy_text(body);
            (
                pairs
                    .into_iter()
                    .map(|(name, value)| (Cow::Owned(name), Cow::Owned(value)))
                    .collect(),
                problems,
            )
        }
    }
}

/// Runs dotenvy over `body` (a file's text without its byte-order mark),
/// keeping every pair and turning each error into a [`LineProblem`].
fn dotenvy_text(body: &str) -> (Vec<(String, String)>, Vec<LineProblem>) {
    let shapes = entries(body);
    let delivered = Cell::new(0);
    let feed = LineFeed {
        text: body.as_bytes(),
        delivered: &delivered,
    };
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    // Newlines counted so far, up to `counted`: each byte is counted once,
    // however many lines fail (counting from the start for each problem made
    // a file of bad lines quadratic).
    let (mut counted, mut newlines) = (0, 0);
    for item in dotenvy::from_read_iter(feed) {
        let error = match item {
            Ok(pair) => {
                pairs.push(pair);
                continue;
            }
            Err(error) => error,
        };
        let end = delivered.get();
        newlines += memchr::memchr_iter(b'\n', &body.as_bytes()[counted..end]).count();
        counted = end;
        // As `line_count(&body[..end])`: a last line without its newline
        // counts too.
        let partial = usize::from(end > 0 && body.as_bytes()[end - 1] != b'\n');
        let last_line = (newlines + partial).max(1);
        let (line, message) = match &error {
            // The error carries the entry (or its value part), which spans as
            // many lines as the entry; dotenvy has just read its last line.
            dotenvy::Error::LineParse(entry, _) => {
                let line = (last_line + 1)
                    .saturating_sub(line_count(entry).max(1))
                    .max(1);
                // `shapes` is in line order: a binary search, not a scan.
                let message = shapes
                    .binary_search_by_key(&line, |shape| shape.line)
                    .ok()
                    .map(|index| &shapes[index])
                    .map_or_else(
                        || "dotenvy cannot parse this line".to_owned(),
                        |shape| describe_problem(body, shape),
                    );
                (line, message)
            }
            other => (last_line, other.to_string()),
        };
        problems.push(LineProblem { line, message });
        if !matches!(error, dotenvy::Error::LineParse(..)) {
            // An I/O error repeats forever; the text is in memory, so it
            // cannot happen, but never loop on it.
            break;
        }
    }
    (pairs, problems)
}

/// State of dotenvy's line joiner at the end of a physical line (a copy of
/// `ParseState` in dotenvy 0.15.7's `iter.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Join {
    Complete,
    Escape,
    StrongOpen,
    StrongOpenEscape,
    WeakOpen,
    WeakOpenEscape,
    Comment,
    WhiteSpace,
}

impl Join {
    /// Whether a quote is still open: more lines are joined until it closes.
    fn in_quote(self) -> bool {
        matches!(
            self,
            Self::StrongOpen | Self::StrongOpenEscape | Self::WeakOpen | Self::WeakOpenEscape
        )
    }
}

/// Feeds one physical line to the joiner; returns the new state and, for a
/// comment, the byte offset of its `#` in `line`.
fn join_line(mut state: Join, line: &str) -> (Join, usize) {
    for (at, c) in line.char_indices() {
        state = match state {
            Join::WhiteSpace => match c {
                '#' => return (Join::Comment, at),
                '\\' => Join::Escape,
                '"' => Join::WeakOpen,
                '\'' => Join::StrongOpen,
                _ => Join::Complete,
            },
            Join::Escape => Join::Complete,
            Join::Complete => match c {
                c if c.is_whitespace() && c != '\n' && c != '\r' => Join::WhiteSpace,
                '\\' => Join::Escape,
                '"' => Join::WeakOpen,
                '\'' => Join::StrongOpen,
                _ => Join::Complete,
            },
            Join::WeakOpen => match c {
                '\\' => Join::WeakOpenEscape,
                '"' => Join::Complete,
                _ => Join::WeakOpen,
            },
            Join::WeakOpenEscape => Join::WeakOpen,
            Join::StrongOpen => match c {
                '\\' => Join::StrongOpenEscape,
                '\'' => Join::Complete,
                _ => Join::StrongOpen,
            },
            Join::StrongOpenEscape => Join::StrongOpen,
            // Never reached: a comment ends the entry before the next line.
            Join::Comment => return (Join::Comment, at),
        };
    }
    (state, 0)
}

/// One logical entry as dotenvy cuts the text: a whole-line comment, or
/// physical lines joined while a quote is open.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shape {
    /// 1-based line of its first physical line.
    line: usize,
    /// Bytes of the entry, final line ending included.
    span: Range<usize>,
    /// End of the text dotenvy parses: before the final line ending, or at
    /// the `#` of a trailing comment the joiner cut off.
    parsed_end: usize,
    /// End of the last physical line without its line ending.
    content_end: usize,
    /// The joiner's state at the end; anything but `Complete` and `Comment`
    /// means dotenvy ran out of text.
    state: Join,
    /// A line whose first non-blank character is `#`.
    comment_line: bool,
}

/// Cuts `text` (without a byte-order mark) into dotenvy's logical entries.
fn entries(text: &str) -> Vec<Shape> {
    let mut shapes = Vec::new();
    let mut pos = 0;
    let mut line = 1;
    while pos < text.len() {
        let start = pos;
        let first_line = line;
        let mut state = Join::Complete;
        let mut comment_at = None;
        let mut comment_line = false;
        while pos < text.len() {
            let line_start = pos;
            pos = text[pos..].find('\n').map_or(text.len(), |at| pos + at + 1);
            if text.as_bytes()[pos - 1] == b'\n' {
                line += 1;
            }
            if text[start..pos].trim_start().starts_with('#') {
                comment_line = true;
                state = Join::Complete;
                break;
            }
            let (next, at) = join_line(state, &text[line_start..pos]);
            state = next;
            if state == Join::Comment {
                comment_at = Some(line_start + at);
            }
            if matches!(state, Join::Complete | Join::Comment) {
                break;
            }
        }
        let entry = &text[start..pos];
        let ending = if entry.ends_with("\r\n") {
            2
        } else {
            usize::from(entry.ends_with('\n'))
        };
        let content_end = pos - ending;
        shapes.push(Shape {
            line: first_line,
            span: start..pos,
            parsed_end: comment_at.unwrap_or(content_end),
            content_end,
            state,
            comment_line,
        });
    }
    shapes
}

/// An entry's assignment, located.
struct Assignment<'a> {
    key: &'a str,
    /// Just after the `=`.
    after_equals: usize,
    /// Where the value starts: after the blanks that follow `=`.
    value_start: usize,
}

/// Reads `[export] KEY =` the way dotenvy's line parser does; `None` when the
/// entry is not an assignment dotenvy would accept.
fn assignment<'a>(text: &'a str, shape: &Shape) -> Option<Assignment<'a>> {
    if shape.comment_line || !matches!(shape.state, Join::Complete | Join::Comment) {
        return None;
    }
    let end = shape.content_end;
    let skip_blank = |at: usize| {
        text[at..end]
            .find(|c: char| !c.is_whitespace())
            .map_or(end, |offset| at + offset)
    };
    let key_end = |at: usize| -> Option<usize> {
        let rest = &text[at..end];
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return None;
        }
        Some(
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .map_or(end, |offset| at + offset),
        )
    };
    let mut key_start = skip_blank(shape.span.start);
    let mut key_stop = key_end(key_start)?;
    let mut equals = skip_blank(key_stop);
    if &text[key_start..key_stop] == "export" && !text[equals..end].starts_with('=') {
        key_start = equals;
        key_stop = key_end(key_start)?;
        equals = skip_blank(key_stop);
    }
    if !text[equals..end].starts_with('=') {
        return None;
    }
    let after_equals = equals + 1;
    Some(Assignment {
        key: &text[key_start..key_stop],
        after_equals,
        value_start: skip_blank(after_equals),
    })
}

/// How dotenvy's value parser fares on `value` (a copy of `parse_value`'s
/// control flow, without the substitution itself).
enum ValueScan {
    /// Parsed; the value proper ends at this byte offset (blanks and an
    /// optional comment follow).
    Ends(usize),
    /// dotenvy rejects it, for this reason.
    Fails(String),
}

fn scan_value(value: &str) -> ValueScan {
    #[derive(PartialEq)]
    enum Substitution {
        None,
        Name,
        Braced,
    }
    let value = value.trim_end();
    let (mut strong, mut weak, mut escaped) = (false, false, false);
    let mut substitution = Substitution::None;
    let mut name_empty = true;
    let mut swallowed_quote = false;
    let mut ended_at = None;
    for (at, c) in value.char_indices() {
        if ended_at.is_some() {
            match c {
                ' ' | '\t' => continue,
                '#' => break,
                _ => {
                    return ValueScan::Fails(
                        "an unquoted value ends at the first space; quote the value".to_owned(),
                    );
                }
            }
        } else if escaped {
            if !matches!(c, '\\' | '\'' | '"' | '$' | ' ' | 'n') {
                return ValueScan::Fails(format!(
                    "unsupported escape `\\{c}`; dotenvy accepts only `\\\\`, `\\'`, `\\\"`, `\\$`, `\\ ` and `\\n`"
                ));
            }
            escaped = false;
        } else if strong {
            strong = c != '\'';
        } else if substitution != Substitution::None {
            if c.is_alphanumeric() {
                name_empty = false;
            } else if substitution == Substitution::Name {
                if c == '{' && name_empty {
                    substitution = Substitution::Braced;
                } else if c != '$' {
                    // dotenvy keeps this character literally, even a quote.
                    swallowed_quote |= c == '"' && weak;
                    substitution = Substitution::None;
                } else {
                    name_empty = true;
                }
            } else if c == '}' {
                substitution = Substitution::None;
            } else {
                name_empty = false;
            }
        } else if c == '$' {
            substitution = Substitution::Name;
            name_empty = true;
        } else if weak {
            match c {
                '"' => weak = false,
                '\\' => escaped = true,
                _ => {}
            }
        } else {
            match c {
                '\'' => strong = true,
                '"' => weak = true,
                '\\' => escaped = true,
                ' ' | '\t' => ended_at = Some(at),
                _ => {}
            }
        }
    }
    if substitution == Substitution::Braced {
        ValueScan::Fails("a `${` is never closed".to_owned())
    } else if swallowed_quote && weak {
        ValueScan::Fails(
            "a `$NAME` right before the closing `\"` swallows the quote; write `${NAME}`"
                .to_owned(),
        )
    } else if strong || weak {
        ValueScan::Fails("a quote is never closed".to_owned())
    } else {
        ValueScan::Ends(ended_at.unwrap_or(value.len()))
    }
}

/// Says why dotenvy rejects the entry `shape` of `text`.
fn describe_problem(text: &str, shape: &Shape) -> String {
    if shape.state.in_quote() {
        return "a quote opened here is never closed, so the rest of the file is part of it"
            .to_owned();
    }
    match shape.state {
        Join::Escape => return "the file ends with `\\` and no final newline".to_owned(),
        Join::WhiteSpace => return "the file ends with a blank and no final newline".to_owned(),
        _ => {}
    }
    let Some(found) = assignment(text, shape) else {
        let line = &text[shape.span.start..shape.parsed_end];
        return if line.contains('=') {
            "invalid variable name before `=` (letters, digits, `_` and `.`, not starting with a digit)"
                .to_owned()
        } else {
            "expected `NAME=value`".to_owned()
        };
    };
    let value = &text[found.value_start..shape.parsed_end];
    match scan_value(value) {
        ValueScan::Fails(reason) => reason,
        ValueScan::Ends(_) => "dotenvy cannot parse this line".to_owned(),
    }
}

/// The edit that sets `name` to `value` (written as `quoted`) in its last
/// assignment in `text`: a byte range and its replacement. `None` when there
/// is no assignment, or when editing it in place would change how dotenvy
/// reads anything else (the caller then appends a new line).
fn last_value_edit(
    text: &str,
    shapes: &[Shape],
    name: &str,
    value: &str,
    quoted: &str,
) -> Option<(Range<usize>, String)> {
    let (index, found) = shapes.iter().enumerate().rev().find_map(|(index, shape)| {
        assignment(text, shape)
            .filter(|found| found.key == name)
            .map(|found| (index, found))
    })?;
    let shape = &shapes[index];
    let rest = &text[found.value_start..shape.content_end];
    let (span, replacement) = if rest.is_empty() {
        (found.value_start..found.value_start, quoted.to_owned())
    } else if rest.starts_with('#') {
        // An empty value then a comment. dotenvy needs a blank between the
        // new value and the `#`, and its line joiner treats `#` as a comment
        // only after an odd run of blanks; keep the run's parity so that it
        // joins the rest of the line exactly as before.
        let blanks = if found.after_equals == found.value_start {
            "  "
        } else {
            ""
        };
        (
            found.after_equals..found.after_equals,
            format!("{quoted}{blanks}"),
        )
    } else {
        let end = match scan_value(rest) {
            ValueScan::Ends(end) => found.value_start + end,
            ValueScan::Fails(_) => shape.content_end,
        };
        (found.value_start..end, quoted.to_owned())
    };

    // Check that the edit changes this entry's value and nothing else.
    let mut edited = text.to_owned();
    edited.replace_range(span.clone(), &replacement);
    let after = entries(&edited);
    let shift = |at: usize| at + replacement.len() - span.len();
    let others_kept = after.len() == shapes.len()
        && shapes
            .iter()
            .zip(&after)
            .enumerate()
            .all(|(i, (old, new))| {
                i == index || text[old.span.clone()] == edited[new.span.clone()]
            });
    let reads_back = after.get(index).is_some_and(|new| {
        new.span.start == shape.span.start
            && new.span.end == shift(shape.span.end)
            && dotenvy::from_read_iter(edited[new.span.clone()].as_bytes())
                .map(|item| item.ok())
                .eq([Some((name.to_owned(), value.to_owned()))])
    });
    (others_kept && reads_back).then_some((span, replacement))
}

/// The line ending new lines get: CRLF when the text's first line uses it.
fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Appends `line` (without ending) to `text` on a line of its own.
fn append_line(text: &mut String, line: &str) {
    let ending = line_ending(text);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(ending);
    }
    text.push_str(line);
    text.push_str(ending);
}

/// Quotes `value` for a dotenv file so that dotenvy 0.15.7 and a shell
/// that sources or `eval`s it (`set -a; . ./.env`: sh, bash, zsh; fish for
/// `mcpenv env --format fish`) all read back exactly `value`, expanding
/// nothing.
///
/// The value goes in single quotes, where none of them expands `$`, a
/// backtick or `!`. Each `'` and `\` is written outside the quotes, as
/// `\'` and `\\`, the one escape all of them read the same way: a `'`
/// cannot be inside single quotes in a shell, and a `\` inside them is a
/// quote escape to fish and, before the closing quote, to dotenvy's line
/// joiner. So `it's` is `'it'\''s'` and `C:\dir` is `'C:'\\'dir'`.
/// Newline and tab are kept (inside the quotes, all readers keep them).
/// Any other character [`display::is_unsafe`](crate::mechanics::display::is_unsafe)
/// flags (NUL, carriage return, escape, bidirectional controls, …) is
/// refused: no shell variable holds a NUL, dotenvy drops a carriage return
/// before a newline, and the rest would reach a terminal raw (mcpenv's
/// output escapes them, which would change what `eval` reads).
pub fn quote(value: &str) -> Result<String, QuoteError> {
    if let Some(character) = value
        .chars()
        .find(|&c| crate::mechanics::display::is_unsafe(c) && c != '\n' && c != '\t')
    {
        return Err(QuoteError::ControlCharacter { character });
    }
    if value.is_empty() {
        return Ok("''".to_owned());
    }
    let mut quoted = String::with_capacity(value.len() + 8);
    let mut open = false;
    for c in value.chars() {
        let escaped = matches!(c, '\'' | '\\');
        if escaped == open {
            quoted.push('\'');
            open = !open;
        }
        if escaped {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    if open {
        quoted.push('\'');
    }
    Ok(quoted)
}

/// Names a character for an error message.
fn describe_char(c: char) -> String {
    let name = match c {
        '\0' => "NUL",
        '\r' => "a carriage return",
        '\u{1b}' => "an escape character",
        '\u{7f}' => "a delete character",
        '\u{8}' => "a backspace",
        '\u{b}' => "a vertical tab",
        '\u{c}' => "a form feed",
        c if !c.is_control() => "a bidirectional control character",
        _ => "the control character",
    };
    format!("{name} (U+{:04X})", u32::from(c))
}

/// Sets each `(name, value)` in the `.env` text `existing`, keeping every
/// other byte: comments, blank lines, order, unknown and malformed lines.
///
/// A name already assigned has the value of its last assignment replaced
/// (`export`, the key as written, the blanks around `=` and a trailing
/// comment are kept); a new name is appended as `NAME=<quoted>`. The result
/// ends with a newline unless it is empty. New lines use CRLF when the
/// text's first line does.
///
/// Each in-place edit is checked against dotenvy's reading of the whole
/// text; if it would change how anything else reads (odd corners such as
/// a quote inside a comment), the assignment is appended instead, where it
/// wins as the last one.
pub fn with_values(existing: &str, values: &[(String, String)]) -> Result<String, QuoteError> {
    let checked = values
        .iter()
        .map(|(name, value)| {
            if is_variable_name(name) {
                Ok((name.as_str(), value.as_str(), quote(value)?))
            } else {
                Err(QuoteError::InvalidName { name: name.clone() })
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = existing.to_owned();
    // A final newline first: dotenvy rejects a last line ending in a blank
    // or `\` without one, and new lines go after it anyway.
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(line_ending(&text));
    }
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    if let Some(open) = entries(&text[bom..]).last().filter(|s| s.state.in_quote()) {
        return Err(QuoteError::UnterminatedQuote { line: open.line });
    }
    for (name, value, quoted) in checked {
        let shapes = entries(&text[bom..]);
        match last_value_edit(&text[bom..], &shapes, name, value, &quoted) {
            Some((span, replacement)) => {
                text.replace_range(bom + span.start..bom + span.end, &replacement);
            }
            None => append_line(&mut text, &format!("{name}={quoted}")),
        }
    }
    Ok(text)
}

/// The `.env` text `existing` without any assignment of `name`, keeping
/// every other byte: each entry assigning it (its whole line, or lines for
/// a multi-line value, with a trailing comment on it) goes, comments and
/// blank lines around it stay. `None` when nothing assigns it.
///
/// Every assignment goes, not only the last: removing the last alone would
/// bring an earlier one back into effect. The result is checked against
/// dotenvy's reading of the whole text; when removing would change how
/// anything else reads (a later `${NAME}` that took its value), it is
/// refused.
pub fn without_variable(existing: &str, name: &str) -> Result<Option<String>, QuoteError> {
    let bom = if existing.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let body = &existing[bom..];
    let shapes = entries(body);
    let doomed: Vec<&Shape> = shapes
        .iter()
        .filter(|shape| assignment(body, shape).is_some_and(|found| found.key == name))
        .collect();
    let Some(first) = doomed.first() else {
        return Ok(None);
    };
    let mut text = existing.to_owned();
    for shape in doomed.iter().rev() {
        text.replace_range(bom + shape.span.start..bom + shape.span.end, "");
    }
    let (before, before_problems) = parse_text(existing);
    let (after, after_problems) = parse_text(&text);
    let kept = before.iter().filter(|(key, _)| key != name);
    if after.iter().ne(kept) || after_problems.len() != before_problems.len() {
        return Err(QuoteError::EntangledLine { line: first.line });
    }
    Ok(Some(text))
}

/// The `.env.example` text `existing` without the lines of `names` (see
/// [`without_variable`]), each with the `# used by: …` comment mcpenv wrote
/// right above it; every other byte stays. `None` when none is there.
pub fn example_without(existing: &str, names: &[String]) -> Result<Option<String>, QuoteError> {
    let assigns = |line: &str, name: &str| {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line);
        line.strip_prefix(name)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let mut text = existing.to_string();
    let mut changed = false;
    for name in names {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut without_comment = String::with_capacity(text.len());
        for (index, line) in lines.iter().enumerate() {
            let ours = line.trim_start().starts_with("# used by:")
                && lines.get(index + 1).is_some_and(|next| assigns(next, name));
            if !ours {
                without_comment.push_str(line);
            }
        }
        if let Some(without) = without_variable(&without_comment, name)? {
            text = without;
            changed = true;
        }
    }
    Ok(changed.then_some(text))
}

/// Adds the missing `(name, comment)` variables to the `.env.example` text
/// `existing`, each as `# <comment>` then `NAME=`; names already assigned
/// (any value) are left alone, and every existing byte is kept.
///
/// Names that are not valid variable names are skipped; an empty comment
/// adds no comment line.
/// One variable `.env.example` documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleLine {
    /// Its name.
    pub name: String,
    /// The comment above it (several lines allowed).
    pub comment: String,
    /// The value written after `=`: its default when every reference has
    /// the same one, so `cp .env.example .env` keeps the default working
    /// (an empty value would beat it); else empty.
    pub value: String,
}

pub fn example_with(existing: &str, variables: &[ExampleLine]) -> String {
    let mut body = existing
        .strip_prefix('\u{feff}')
        .unwrap_or(existing)
        .to_owned();
    // As dotenvy will read it once a line is appended.
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    let present: Vec<&str> = entries(&body)
        .iter()
        .filter_map(|shape| assignment(&body, shape).map(|found| found.key))
        .collect();
    let mut text = existing.to_owned();
    let mut added: Vec<&str> = Vec::new();
    for ExampleLine {
        name,
        comment,
        value,
    } in variables
    {
        if !is_variable_name(name)
            || present.contains(&name.as_str())
            || added.contains(&name.as_str())
        {
            continue;
        }
        for line in comment.lines() {
            append_line(&mut text, format!("# {line}").trim_end());
        }
        // Plain text as it is (these characters mean nothing to dotenvy or
        // a shell, bare); anything else through `quote`, and a default it
        // refuses is left out rather than mangled.
        let plain = value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@,+".contains(c));
        let value = if plain {
            value.clone()
        } else {
            quote(value).unwrap_or_default()
        };
        append_line(&mut text, &format!("{name}={value}"));
        added.push(name);
    }
    // A line left empty learns where the team keeps the value.
    let (existing_pairs, _) = parse_text(&body);
    let references: Vec<(String, String)> = variables
        .iter()
        .filter(|line| {
            crate::stores::references::manager_of(&line.value)
                .is_some_and(|manager| manager.shared())
                && existing_pairs
                    .iter()
                    .any(|(name, value)| *name == line.name && value.is_empty())
        })
        .map(|line| (line.name.clone(), line.value.clone()))
        .collect();
    if references.is_empty() {
        return text;
    }
    with_values(&text, &references).unwrap_or(text)
}

/// Whether a project-root `.gitignore` ignores the `.env` file next to it.
pub fn ignores_dotenv(gitignore: &str) -> bool {
    crate::mechanics::gitignore::ignores(gitignore, ".env")
}

/// The `.gitignore` text with a `.env` line added, or `None` when `existing`
/// already ignores `.env`; `existing` is `None` when there is no
/// `.gitignore` yet.
pub fn gitignore_with_dotenv(existing: Option<&str>) -> Option<String> {
    crate::mechanics::gitignore::with_entry(existing, ".env")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_line_goes_with_the_comment_mcpenv_wrote_above_it() {
        let example =
            "# Team settings\nLOG=info\n# used by: github\nGITHUB_TOKEN=\n# used by: db\nDB_URL=\n";
        let names = vec!["GITHUB_TOKEN".to_string(), "NOT_THERE".to_string()];
        assert_eq!(
            example_without(example, &names).unwrap().as_deref(),
            Some("# Team settings\nLOG=info\n# used by: db\nDB_URL=\n")
        );
        assert_eq!(
            example_without(example, &["NOT_THERE".to_string()]).unwrap(),
            None
        );
    }

    /// [`parse_text`] with the pairs as strings of their own.
    fn parse_owned(text: &str) -> (Vec<(String, String)>, Vec<LineProblem>) {
        let (pairs, problems) = parse_text(text);
        (owned(pairs), problems)
    }

    fn owned<'a>(
        pairs: impl IntoIterator<Item = (impl Into<Cow<'a, str>>, impl Into<Cow<'a, str>>)>,
    ) -> Vec<(String, String)> {
        pairs
            .into_iter()
            .map(|(name, value)| (name.into().into_owned(), value.into().into_owned()))
            .collect()
    }

    /// Pairs and problem lines of `text`.
    fn parsed(text: &str) -> (Vec<(String, String)>, Vec<usize>) {
        let (pairs, problems) = parse_owned(text);
        (pairs, problems.iter().map(|p| p.line).collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// What dotenvy itself reads from `text`.
    fn dotenvy_reads(text: &str) -> Vec<(String, String)> {
        dotenvy::from_read_iter(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap_or_else(|error| panic!("dotenvy rejects {text:?}: {error}"))
    }

    fn problems(text: &str) -> Vec<(usize, String)> {
        parse_owned(text)
            .1
            .into_iter()
            .map(|p| (p.line, p.message))
            .collect()
    }

    // Names below start with `MCPENV_T_` so that the process environment,
    // which wins during dotenvy's substitution, cannot interfere.

    #[test]
    fn export_and_spaces_around_equals() {
        assert_eq!(
            parsed("export A=1\nexport B = 2\n"),
            (pairs(&[("A", "1"), ("B", "2")]), vec![])
        );
        assert_eq!(parsed("export=x\n"), (pairs(&[("export", "x")]), vec![]));
    }

    #[test]
    fn unquoted_values_end_at_whitespace_and_hash_needs_a_blank() {
        assert_eq!(
            problems("A=hello world\n"),
            [(
                1,
                "an unquoted value ends at the first space; quote the value".to_owned()
            )]
        );
        assert_eq!(
            parsed("A=hello # c\nB=abc#def\n"),
            (pairs(&[("A", "hello"), ("B", "abc#def")]), vec![])
        );
    }

    #[test]
    fn single_quotes_are_literal() {
        assert_eq!(
            parsed("A='x $MCPENV_T_HOME \\n y'\n"),
            (pairs(&[("A", "x $MCPENV_T_HOME \\n y")]), vec![])
        );
        // secrets.md says `\'` escapes the quote; dotenvy 0.15.7 rejects it.
        assert_eq!(parsed("A='it\\'s'\n").1, [1]);
    }

    #[test]
    fn double_quotes_process_a_few_escapes() {
        assert_eq!(
            parsed("A=\"x \\n \\\" \\$ \\\\ \\' \\  y\"\n"),
            (pairs(&[("A", "x \n \" $ \\ '   y")]), vec![])
        );
        assert_eq!(
            problems("A=\"x\\ty\"\n"),
            [(
                1,
                "unsupported escape `\\t`; dotenvy accepts only `\\\\`, `\\'`, `\\\"`, `\\$`, `\\ ` and `\\n`"
                    .to_owned()
            )]
        );
    }

    #[test]
    fn multi_line_values_in_both_quote_styles() {
        assert_eq!(
            parsed("A=\"l1\nl2\"\nB='l1\n# l2'\nC=3\n"),
            (
                pairs(&[("A", "l1\nl2"), ("B", "l1\n# l2"), ("C", "3")]),
                vec![]
            )
        );
    }

    #[test]
    fn substitution_from_earlier_lines() {
        let text = "MCPENV_T_A=one\nB=${MCPENV_T_A}-two\nC=\"${MCPENV_T_A}\"\nD='${MCPENV_T_A}'\n";
        assert_eq!(
            parsed(text).0,
            pairs(&[
                ("MCPENV_T_A", "one"),
                ("B", "one-two"),
                ("C", "one"),
                ("D", "${MCPENV_T_A}")
            ])
        );
        // An unbraced name stops at the first non-alphanumeric character.
        let text = "MCPENV_T_V=v\nB=$MCPENV_T_V\nC=${MCPENV_T_V}\n";
        assert_eq!(
            parsed(text).0,
            pairs(&[("MCPENV_T_V", "v"), ("B", "_T_V"), ("C", "v")])
        );
        // No default syntax.
        assert_eq!(
            parsed("B=${MCPENV_T_NOPE}\nC=${MCPENV_T_NOPE:-d}\n").0,
            pairs(&[("B", ""), ("C", "")])
        );
    }

    #[test]
    fn variable_right_before_closing_quote_fails() {
        assert_eq!(
            problems("A=1\nB=\"pa$MCPENVTNOPE\"\n"),
            [(
                2,
                "a `$NAME` right before the closing `\"` swallows the quote; write `${NAME}`"
                    .to_owned()
            )]
        );
    }

    #[test]
    fn unclosed_quote_swallows_the_rest_and_is_reported_where_it_starts() {
        assert_eq!(
            parse_owned("A=1\n# c\nB=\"abc\nC=2\nD=3\n"),
            (
                pairs(&[("A", "1")]),
                vec![LineProblem {
                    line: 3,
                    message:
                        "a quote opened here is never closed, so the rest of the file is part of it"
                            .to_owned()
                }]
            )
        );
    }

    #[test]
    fn empty_values() {
        assert_eq!(
            parsed("A=\nB=#x\nC= # c\nD=''\n").0,
            pairs(&[("A", ""), ("B", ""), ("C", ""), ("D", "")])
        );
    }

    #[test]
    fn keys_allow_dots_but_not_dashes() {
        assert_eq!(parsed("a.b=1\n").0, pairs(&[("a.b", "1")]));
        assert_eq!(
            problems("c-d=2\n"),
            [(
                1,
                "invalid variable name before `=` (letters, digits, `_` and `.`, not starting with a digit)"
                    .to_owned()
            )]
        );
        assert_eq!(
            problems("JUST_A_WORD\n"),
            [(1, "expected `NAME=value`".to_owned())]
        );
    }

    #[test]
    fn crlf_bom_and_equals_in_values() {
        assert_eq!(
            parsed("\u{feff}A=1\r\nB='x'\r\nC=a=b=c\r\n"),
            (pairs(&[("A", "1"), ("B", "x"), ("C", "a=b=c")]), vec![])
        );
    }

    #[test]
    fn problems_do_not_stop_the_read_and_count_lines_after_multi_line_values() {
        let text = "A='l1\nl2\nl3'\n\n# c\nbad line\nB=2\nC=x y\nD=\"m1\nm2\" junk\nE=5";
        assert_eq!(
            parsed(text),
            (
                pairs(&[("A", "l1\nl2\nl3"), ("B", "2"), ("E", "5")]),
                vec![6, 8, 9]
            )
        );
    }

    #[test]
    fn end_of_file_quirks_are_reported() {
        // dotenvy wants a final newline after a trailing blank or backslash.
        assert_eq!(
            problems("A=1\nB=x "),
            [(
                2,
                "the file ends with a blank and no final newline".to_owned()
            )]
        );
        assert_eq!(
            problems("A=x\\"),
            [(1, "the file ends with `\\` and no final newline".to_owned())]
        );
    }

    #[test]
    fn problem_messages_never_quote_the_line() {
        for text in [
            "sk-SECRET=x y\n",
            "SECRET_VALUE_123\n",
            "A=SECRET VALUE\n",
            "A=\"SECRET",
        ] {
            for problem in problems(text) {
                assert!(!problem.1.contains("SECRET"), "{problem:?}");
            }
        }
    }

    #[test]
    fn long_lines_are_fine() {
        let long = "x".repeat(20_000);
        let text = format!("A={long}\nB='{long}\n{long}'\nC=x y\n");
        let (found, lines) = parsed(&text);
        assert_eq!(lines, [4]);
        assert_eq!(found[1].1.len(), 40_001);
    }

    #[test]
    fn read_missing_present_and_unreadable_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        let missing = read(&path).unwrap();
        assert_eq!((&missing.text, missing.entries().count()), (&None, 0));

        std::fs::write(&path, "A=1\nA=2\nB=3\n").unwrap();
        let env = read(&path).unwrap();
        assert_eq!(env.get("A"), Some("2"));
        assert_eq!(env.get("B"), Some("3"));
        assert_eq!(env.get("C"), None);
        assert_eq!(env.text.as_deref(), Some("A=1\nA=2\nB=3\n"));

        let error = read(dir.path()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "`{}` is a directory, not a regular file",
                dir.path().display()
            )
        );
        let fifo = dir.path().join("fifo.env");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(
            read(&fifo).unwrap_err().to_string(),
            format!("`{}` is a FIFO, not a regular file", fifo.display())
        );

        std::fs::write(&path, b"A=\xff\n").unwrap();
        let error = read(&path).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("`{}` is not valid UTF-8", path.display())
        );
    }

    #[test]
    fn quote_rule() {
        assert_eq!(quote("plain value").unwrap(), "'plain value'");
        assert_eq!(quote("").unwrap(), "''");
        assert_eq!(
            quote("a\"b $X ${Y} `x` $(x) !x # = \n\t").unwrap(),
            "'a\"b $X ${Y} `x` $(x) !x # = \n\t'"
        );
        assert_eq!(quote("it's").unwrap(), r"'it'\''s'");
        assert_eq!(
            quote("C:\\dir \"q\" $HOME\nnext").unwrap(),
            "'C:'\\\\'dir \"q\" $HOME\nnext'"
        );
        assert_eq!(quote("'").unwrap(), r"\'");
        assert_eq!(quote(r"\'\").unwrap(), r"\\\'\\");
        assert_eq!(quote(r"a\\b'").unwrap(), r"'a'\\\\'b'\'");
    }

    #[test]
    fn quote_rejects_control_characters_and_names_them() {
        for (value, name) in [
            ("a\rb", "a carriage return (U+000D)"),
            ("\0", "NUL (U+0000)"),
            ("\u{1b}[0m", "an escape character (U+001B)"),
            ("\u{85}", "the control character (U+0085)"),
            ("a\u{202e}b", "a bidirectional control character (U+202E)"),
        ] {
            assert_eq!(
                quote(value).unwrap_err().to_string(),
                format!(
                    "the value contains {name}, which mcpenv does not write to dotenv files or print for a shell"
                )
            );
        }
    }

    #[test]
    fn tab_reads_back_in_both_quote_styles() {
        for value in ["a\tb", "it's\ta\\b\t"] {
            let text = with_values("", &pairs(&[("A", value)])).unwrap();
            assert_eq!(dotenvy_reads(&text), pairs(&[("A", value)]));
        }
    }

    fn set(existing: &str, list: &[(&str, &str)]) -> String {
        with_values(existing, &pairs(list)).unwrap()
    }

    #[test]
    fn writer_appends_to_empty_and_unterminated_last_lines() {
        assert_eq!(set("", &[("A", "1")]), "A='1'\n");
        assert_eq!(set("", &[]), "");
        assert_eq!(set("# top", &[("A", "1")]), "# top\nA='1'\n");
        assert_eq!(
            set("B=2\n", &[("A", "1"), ("C", "3")]),
            "B=2\nA='1'\nC='3'\n"
        );
    }

    #[test]
    fn writer_replaces_only_the_value_of_the_last_assignment() {
        let existing = "# keys\nexport  A = old # keep me\n\nA=older\nB=\"x\ny\"\nunknown line\n";
        assert_eq!(
            set(existing, &[("A", "new"), ("B", "b")]),
            "# keys\nexport  A = old # keep me\n\nA='new'\nB='b'\nunknown line\n"
        );
        assert_eq!(
            set("export  A = old # keep me\n", &[("A", "it's")]),
            "export  A = 'it'\\''s' # keep me\n"
        );
    }

    #[test]
    fn writer_keeps_crlf_and_adds_the_final_newline() {
        assert_eq!(set("A=1\r\nB=2", &[("B", "x")]), "A=1\r\nB='x'\r\n");
        assert_eq!(set("A=1\r\n", &[("C", "3")]), "A=1\r\nC='3'\r\n");
        assert_eq!(set("A=1", &[("A", "2")]), "A='2'\n");
    }

    #[test]
    fn writer_handles_empty_values_with_comments() {
        assert_eq!(set("A= # c\n", &[("A", "v")]), "A='v' # c\n");
        // Two blanks: dotenvy's line joiner sees a comment after an odd run
        // of blanks only, and before the edit it saw none here.
        assert_eq!(set("A=#c\n", &[("A", "v")]), "A='v'  #c\n");
        assert_eq!(set("A=  #c\n", &[("A", "v")]), "A='v'  #c\n");
        assert_eq!(set("A=\n", &[("A", "v")]), "A='v'\n");
        assert_eq!(set("A=   \n", &[("A", "v")]), "A=   'v'\n");
        for text in [set("A= # c\n", &[("A", "v")]), set("A=#c\n", &[("A", "v")])] {
            assert_eq!(dotenvy_reads(&text), pairs(&[("A", "v")]));
        }
    }

    #[test]
    fn writer_keeps_how_dotenvy_joins_lines() {
        // The apostrophe in the comment opens a quote for dotenvy's line
        // joiner, so `B=1'` belongs to the comment; it must stay that way.
        let text = set("A=#it's\nB=1'\nC=2\n", &[("A", "v")]);
        assert_eq!(text, "A='v'  #it's\nB=1'\nC=2\n");
        assert_eq!(dotenvy_reads(&text), pairs(&[("A", "v"), ("C", "2")]));
    }

    #[test]
    fn writer_appends_when_an_edit_in_place_would_misread() {
        // dotenvy skips no-break spaces before the comment, but after a
        // quoted value it would read them, and the comment, as the value.
        let text = set("A=\u{a0}\u{a0}#c\n", &[("A", "v")]);
        assert_eq!(text, "A=\u{a0}\u{a0}#c\nA='v'\n");
        assert_eq!(dotenvy_reads(&text), pairs(&[("A", ""), ("A", "v")]));
    }

    #[test]
    fn writer_replaces_a_malformed_value_whole() {
        assert_eq!(set("A=hello world # c\n", &[("A", "v")]), "A='v'\n");
        assert_eq!(set("A=${X\nB=1\n", &[("A", "v")]), "A='v'\nB=1\n");
    }

    #[test]
    fn writer_keeps_a_byte_order_mark() {
        assert_eq!(set("\u{feff}A=1\n", &[("A", "2")]), "\u{feff}A='2'\n");
    }

    #[test]
    fn writer_does_not_match_other_keys() {
        assert_eq!(
            set("AB=1\nA.B=2\n#A=3\n", &[("A", "v")]),
            "AB=1\nA.B=2\n#A=3\nA='v'\n"
        );
    }

    #[test]
    fn writer_rejects_bad_names_values_and_open_quotes() {
        assert_eq!(
            with_values("", &pairs(&[("c-d", "v")]))
                .unwrap_err()
                .to_string(),
            "`c-d` is not a valid variable name (letters, digits and `_`, not starting with a digit)"
        );
        assert!(matches!(
            with_values("", &pairs(&[("A", "\r")])),
            Err(QuoteError::ControlCharacter { character: '\r' })
        ));
        assert_eq!(
            with_values("A=1\nB='open\nC=3\n", &pairs(&[("D", "v")])),
            Err(QuoteError::UnterminatedQuote { line: 2 })
        );
    }

    #[test]
    fn writer_output_reads_back_with_the_rest_intact() {
        let existing = "# c\nexport A=1\nB = \"two\" # two\nC='l1\nl2'\n";
        let text = set(existing, &[("B", "new $B 'q'"), ("D", "d\nd")]);
        assert_eq!(
            dotenvy_reads(&text),
            pairs(&[
                ("A", "1"),
                ("B", "new $B 'q'"),
                ("C", "l1\nl2"),
                ("D", "d\nd")
            ])
        );
    }

    #[test]
    fn example_adds_missing_names_with_comments() {
        let lines = |list: &[(&str, &str)]| -> Vec<ExampleLine> {
            list.iter()
                .map(|(name, comment)| ExampleLine {
                    name: (*name).into(),
                    comment: (*comment).into(),
                    value: String::new(),
                })
                .collect()
        };
        let variables = lines(&[
            ("A", "already there"),
            ("B", "GitHub token"),
            ("C", ""),
            ("B", "twice"),
            ("bad-name", "skipped"),
        ]);
        assert_eq!(
            example_with("# Example\nexport A=\n", &variables),
            "# Example\nexport A=\n# GitHub token\nB=\nC=\n"
        );
        assert_eq!(
            example_with("A=x", &lines(&[("D", "two\nlines")])),
            "A=x\n# two\n# lines\nD=\n"
        );
        assert_eq!(example_with("A=x", &lines(&[("A", "c")])), "A=x");
        assert_eq!(example_with("A= ", &lines(&[("A", "c")])), "A= ");
    }

    #[test]
    fn an_empty_example_line_learns_the_teams_reference_and_a_set_one_is_kept() {
        let line = |name: &str, value: &str| ExampleLine {
            name: name.into(),
            comment: String::new(),
            value: value.into(),
        };
        let reference = "op://Engineering/GitHub/token";
        assert_eq!(
            example_with("# kept\nTOKEN=\nOTHER=1\n", &[line("TOKEN", reference)]),
            "# kept\nTOKEN='op://Engineering/GitHub/token'\nOTHER=1\n"
        );
        assert_eq!(
            example_with("TOKEN=op://Other/Item/field\n", &[line("TOKEN", reference)]),
            "TOKEN=op://Other/Item/field\n",
            "a reference the team chose is never replaced"
        );
        assert_eq!(
            example_with("TOKEN=\n", &[line("TOKEN", "a default")]),
            "TOKEN=\n",
            "only references fill a line in"
        );
    }

    #[test]
    fn example_values_are_defaults_written_plain_or_quoted() {
        let line = |name: &str, value: &str| ExampleLine {
            name: name.into(),
            comment: String::new(),
            value: value.into(),
        };
        assert_eq!(
            example_with(
                "",
                &[
                    line("URL", "postgresql://localhost/dev"),
                    line("TITLE", "My docs"),
                    line("BAD", "a\rb"),
                ]
            ),
            "URL=postgresql://localhost/dev\nTITLE='My docs'\nBAD=\n"
        );
    }

    #[test]
    fn gitignore_patterns_that_ignore_dotenv() {
        for gitignore in [
            ".env",
            "/.env",
            ".env*",
            "*.env",
            "**/.env",
            "*",
            ".*",
            ".e?v",
            ".[e]nv",
            ".env   ",
            "target/\n.env\r\n",
            "!.env\n.env",
            "\u{feff}.env",
        ] {
            assert!(ignores_dotenv(gitignore), "{gitignore:?}");
        }
    }

    #[test]
    fn gitignore_patterns_that_do_not() {
        for gitignore in [
            "",
            "# .env",
            ".env.*",
            ".env/",
            "config/.env",
            ".env/**",
            ".env.local",
            ".env\n!.env",
            "*\n!/.env",
            ".[!e]nv",
            "\\!.env",
            ".env\\ ",
        ] {
            assert!(!ignores_dotenv(gitignore), "{gitignore:?}");
        }
    }

    #[test]
    fn gitignore_gains_a_dotenv_line_when_needed() {
        assert_eq!(gitignore_with_dotenv(None).as_deref(), Some(".env\n"));
        assert_eq!(gitignore_with_dotenv(Some("")).as_deref(), Some(".env\n"));
        assert_eq!(
            gitignore_with_dotenv(Some("target")).as_deref(),
            Some("target\n.env\n")
        );
        assert_eq!(
            gitignore_with_dotenv(Some("target\r\n")).as_deref(),
            Some("target\r\n.env\r\n")
        );
        assert_eq!(gitignore_with_dotenv(Some(".env*\n")), None);
    }

    #[test]
    fn entries_follow_dotenvys_line_joiner() {
        let text = "A=1\n  # c\nB='x\n#y'\r\nC=x  # it's\nD=2\n";
        let shapes: Vec<(usize, &str, bool)> = entries(text)
            .iter()
            .map(|s| (s.line, &text[s.span.clone()], s.comment_line))
            .collect();
        assert_eq!(
            shapes,
            [
                (1, "A=1\n", false),
                (2, "  # c\n", true),
                (3, "B='x\n#y'\r\n", false),
                // dotenvy's joiner opens a quote at the apostrophe here.
                (5, "C=x  # it's\nD=2\n", false),
            ]
        );
    }

    #[test]
    fn entries_are_spans_of_the_text_or_copies() {
        let env = DotEnv::parse(
            Path::new(".env"),
            "\u{feff}A=1\nB='x'y\nC=\"q\"\nD=\n".into(),
        );
        assert_eq!(
            owned(env.entries()),
            pairs(&[("A", "1"), ("B", "xy"), ("C", "q"), ("D", "")])
        );
        // Read by dotenvy: every pair copied.
        let env = DotEnv::parse(
            Path::new(".env"),
            "MCPENV_T_A=1\nMCPENV_T_B=${MCPENV_T_A}2\nMCPENV_T_A=3\n".into(),
        );
        assert_eq!(
            owned(env.entries()),
            pairs(&[
                ("MCPENV_T_A", "1"),
                ("MCPENV_T_B", "12"),
                ("MCPENV_T_A", "3")
            ])
        );
        assert_eq!(env.get("MCPENV_T_A"), Some("3"));
        assert_eq!(env.entries().rev().len(), 3);
        assert_eq!(env.clone(), env);
    }

    #[test]
    fn plain_files_take_the_fast_path_and_others_go_to_dotenvy() {
        let plain_text = "# tokens\r\nexport GITHUB_TOKEN=ghp_x # mine\r\n\nA = 1\nB='it $HOME #x'\nC=\"a b\" #c\nD=\nE=#x\nF=a'b c'd\nexport=1\nG=é  #'q'\nH=v";
        let expected = pairs(&[
            ("GITHUB_TOKEN", "ghp_x"),
            ("A", "1"),
            ("B", "it $HOME #x"),
            ("C", "a b"),
            ("D", ""),
            ("E", ""),
            ("F", "ab cd"),
            ("export", "1"),
            ("G", "é"),
            ("H", "v"),
        ]);
        assert_eq!(plain::pairs(plain_text).map(owned), Some(expected.clone()));
        assert_eq!(dotenvy_reads(plain_text), expected);
        for not_plain in [
            "A=$HOME\n",
            "A=\"$HOME\"\n",
            "A=\"a\\nb\"\n",
            "A='l1\nl2'\n",
            "A=1  #it's\nB=2\n",
            "A=hello world\n",
            "A=1 ",
            "A=1\r",
            "A=\u{a0}1\n",
            "c-d=1\n",
            "export A\n",
        ] {
            assert_eq!(plain::pairs(not_plain), None, "{not_plain:?}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Values built from the characters that matter to dotenvy, plus
        /// any other character.
        fn value() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                prop::sample::select(vec![
                    "'", "\"", "\\", "$", "#", " ", "=", "\n", "\t", "${X}", "$X", "\\n", "\\$",
                    "{", "}", "é", "日本", "🦀", "\u{2028}", "\u{a0}", "\u{feff}", "export ", "A=",
                    " #", "`", "!",
                ])
                .prop_map(str::to_owned),
                "[a-zA-Z0-9_]{1,4}",
                any::<char>()
                    .prop_filter(
                        "rejected by quote",
                        |c| !crate::mechanics::display::is_unsafe(*c) || *c == '\n' || *c == '\t'
                    )
                    .prop_map(String::from),
            ];
            prop::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
        }

        /// Short files made of the pieces that trip dotenvy up.
        fn messy_text() -> impl Strategy<Value = String> {
            let piece = prop::sample::select(vec![
                "'",
                "\"",
                "\\",
                "$",
                "#",
                " ",
                "=",
                "\n",
                "\r\n",
                "\t",
                "${X}",
                "$X",
                "A",
                "b",
                "export ",
                "A=",
                "\nA=",
                "\nexport A =",
                "B=",
                " #",
                "{",
                "}",
                "é",
                "a.b",
                "-",
                "\u{a0}",
            ]);
            prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
        }

        /// Files of lines shaped like assignments, most of them plain, with
        /// the parts that make a line not plain mixed in: quotes, escapes,
        /// `$VAR`/`${VAR}` references to earlier and later keys and to the
        /// process environment (`HOME`, `PATH`), comments, `export`, CRLF,
        /// control characters, non-ASCII blanks and invalid lines.
        fn assignment_text() -> impl Strategy<Value = String> {
            let blank = || prop::sample::select(vec!["", "", " ", "\t", "  ", " \t"]);
            // Mostly what keeps a line plain, some of what does not.
            let piece = prop_oneof![
                12 => prop::sample::select(vec![
                    "v", "1", "ghp_x9", "a.b", "=", ":", "/", "é", "🦀", "'single q'",
                    "\"double q\"", "'$HOME'", "'#'", "\"#\"", "\"it's\"", "'a\"b'", "#", "''",
                ]),
                1 => prop::sample::select(vec![
                    "'", "\"", "\\", "\\n", "\\$", "$", "$MCPENV_T_A", "${MCPENV_T_B}",
                    "$HOME", "${PATH}", "\"$HOME\"", "'a\\'b'", " ", "\t", "\u{a0}",
                    "\u{2028}", "\r", "\u{b}", "\u{0}", "${", "}",
                ]),
            ];
            let value = prop::collection::vec(piece, 0..5).prop_map(|pieces| pieces.concat());
            let assignment = (
                blank(),
                prop::sample::select(vec!["", "", "export ", "export\t", "export  "]),
                prop_oneof![
                    9 => prop::sample::select(vec!["MCPENV_T_A", "MCPENV_T_B", "MCPENV_T_C", "a.b", "_X", "export"]),
                    1 => prop::sample::select(vec!["9A", "c-d", "", "'Q'"]),
                ],
                blank(),
                prop_oneof![9 => Just("="), 1 => prop::sample::select(vec!["", "=="])],
                blank(),
                value,
                prop_oneof![
                    9 => prop::sample::select(vec!["", " #c", "\t#x", "#y", " # \"q", " #it's", "  #c"]),
                    1 => prop::sample::select(vec![" ", "  ", "  # it's", " x"]),
                ],
            )
                .prop_map(|(lead, export, key, before, equals, after, value, tail)| {
                    format!("{lead}{export}{key}{before}{equals}{after}{value}{tail}")
                });
            let line = prop_oneof![
                12 => assignment,
                1 => prop::sample::select(vec!["", "# it's", "  #x", "\t", "#", " \u{a0}#c"])
                    .prop_map(str::to_owned),
            ];
            let ending = prop_oneof![
                12 => prop::sample::select(vec!["\n", "\n", "\n", "\r\n", "\n\n"]),
                1 => Just("\r"),
            ];
            (prop::collection::vec((line, ending), 0..6), any::<bool>()).prop_map(
                |(lines, last_ending)| {
                    let mut text = String::new();
                    let count = lines.len();
                    for (index, (line, ending)) in lines.into_iter().enumerate() {
                        text.push_str(&line);
                        if last_ending || index + 1 < count {
                            text.push_str(ending);
                        }
                    }
                    text
                },
            )
        }

        /// The fast path's pairs, when it takes `text`, are what dotenvy
        /// yields, and `parse_text` reads it as dotenvy alone does.
        fn reads_as_dotenvy(text: &str) -> Result<(), TestCaseError> {
            if let Some(pairs) = plain::pairs(text) {
                let expected: Vec<Result<(String, String), String>> =
                    owned(pairs).into_iter().map(Ok).collect();
                prop_assert_eq!(dotenvy_items(text), expected);
            }
            let parsed = parse_owned(text);
            prop_assert_eq!(&parsed, &dotenvy_text(text));
            // What a `DotEnv` keeps of it is the same.
            let read = DotEnv::parse(Path::new(".env"), text.to_owned());
            prop_assert_eq!(owned(read.entries()), parsed.0);
            // `values`: each name once, in first-seen order, with the
            // value `get` gives (the slow reading, name by name).
            let mut names: Vec<&str> = Vec::new();
            for (name, _) in read.entries() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            let slow: Vec<(&str, &str)> = names
                .iter()
                .map(|name| (*name, read.get(name).unwrap_or_default()))
                .collect();
            prop_assert_eq!(read.values(), slow);
            prop_assert_eq!(read.problems, parsed.1);
            Ok(())
        }

        /// Everything dotenvy yields for `text`, errors as their messages.
        fn dotenvy_items(text: &str) -> Vec<Result<(String, String), String>> {
            dotenvy::from_read_iter(text.as_bytes())
                .map(|item| item.map_err(|error| error.to_string()))
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            /// The fast path reads a file exactly as dotenvy does, or hands
            /// it to dotenvy.
            #[test]
            fn plain_pairs_are_dotenvys(text in assignment_text()) {
                reads_as_dotenvy(&text)?;
            }

            /// The one-pass reading of a `KEY=value` line gives what the
            /// general reading of that line gives, and the rest after it.
            #[test]
            fn a_simple_line_reads_as_any_line(
                text in prop_oneof![
                    assignment_text(),
                    "[A-Za-z_][A-Za-z0-9_.]{0,6}=[ -~]{0,10}[\n\r]?[ -~\n]{0,8}",
                    "[A-Za-z_][A-Za-z0-9_.]{0,6}=[!-~é]{0,10}(\n|\r\n)?[ -~\n]{0,8}",
                ]
            ) {
                if let Some((name, value, rest)) = plain::simple_line(&text) {
                    let (line, terminated) = match text.find('\n') {
                        Some(at) => (&text[..at], true),
                        None => (text.as_str(), false),
                    };
                    prop_assert_eq!(
                        plain::line_pair(line, terminated),
                        Some(Some((name, Cow::Borrowed(value))))
                    );
                    prop_assert_eq!(rest, &text[(line.len() + usize::from(terminated))..]);
                }
            }

            /// The same on the short files that trip dotenvy up.
            #[test]
            fn plain_pairs_of_messy_text_are_dotenvys(text in messy_text()) {
                reads_as_dotenvy(&text)?;
            }

            /// What the writer writes, dotenvy reads back exactly.
            #[test]
            fn write_then_dotenvy_reads_the_same(name in "[A-Za-z_][A-Za-z0-9_]{0,8}", value in value()) {
                let text = with_values("", &[(name.clone(), value.clone())]).unwrap();
                prop_assert_eq!(dotenvy_reads(&text), vec![(name.clone(), value.clone())]);
                let (read_back, problems) = parse_owned(&text);
                prop_assert!(problems.is_empty());
                prop_assert_eq!(read_back, vec![(name, value)]);
            }

            /// Any string either is rejected or reads back exactly.
            #[test]
            fn any_string_is_rejected_or_read_back(value in any::<String>()) {
                if let Ok(text) = with_values("", &[("V".to_owned(), value.clone())]) {
                    prop_assert_eq!(dotenvy_reads(&text), vec![("V".to_owned(), value)]);
                }
            }

            /// Whatever the existing text, the new value reads back last, no
            /// new problem appears, and problems are reported at the line
            /// where dotenvy's failing entry starts.
            #[test]
            fn edits_of_arbitrary_text_read_back(text in messy_text(), value in "[a-z'\"\\\\$# \n]{0,6}") {
                let (_, before) = parse_owned(&text);
                let failing: Vec<usize> = entries(&text)
                    .iter()
                    .filter(|shape| {
                        dotenvy::from_read_iter(text[shape.span.clone()].as_bytes()).any(|item| item.is_err())
                    })
                    .map(|shape| shape.line)
                    .collect();
                prop_assert_eq!(before.iter().map(|p| p.line).collect::<Vec<_>>(), failing);
                match with_values(&text, &[("A".to_owned(), value.clone())]) {
                    Err(error) => prop_assert!(matches!(error, QuoteError::UnterminatedQuote { .. }), "{}", error),
                    Ok(edited) => {
                        let (pairs, after) = parse_owned(&edited);
                        prop_assert!(after.len() <= before.len(), "{:?}", after);
                        let last = pairs.iter().rev().find(|(key, _)| key == "A");
                        prop_assert_eq!(last.map(|(_, v)| v), Some(&value));
                    }
                }
            }

            /// Replacing a value in an existing file keeps every other
            /// entry and every byte before the edited line.
            #[test]
            fn replace_keeps_the_other_entries(
                before in prop::collection::vec(value(), 0..4),
                old in value(),
                new in value(),
            ) {
                let mut existing = String::from("# head\n");
                let mut expected = Vec::new();
                for (i, v) in before.iter().enumerate() {
                    existing.push_str(&format!("K{i}={}\n", quote(v).unwrap()));
                    expected.push((format!("K{i}"), v.clone()));
                }
                let prefix_len = existing.len();
                existing.push_str(&format!("export TARGET = {} # note\nAFTER='x'\n", quote(&old).unwrap()));
                let text = with_values(&existing, &[("TARGET".to_owned(), new.clone())]).unwrap();
                prop_assert_eq!(&text[..prefix_len], &existing[..prefix_len]);
                prop_assert!(text.ends_with(" # note\nAFTER='x'\n"));
                expected.push(("TARGET".to_owned(), new));
                expected.push(("AFTER".to_owned(), "x".to_owned()));
                prop_assert_eq!(dotenvy_reads(&text), expected);
            }
        }
    }

    #[test]
    fn removing_a_variable_keeps_every_other_byte() {
        let text =
            "# tokens\r\nA=1\r\nexport GITHUB_TOKEN='ghp_x' # mine\r\n\r\nB=\"two\nlines\"\r\n";
        assert_eq!(
            without_variable(text, "GITHUB_TOKEN").unwrap().as_deref(),
            Some("# tokens\r\nA=1\r\n\r\nB=\"two\nlines\"\r\n")
        );
        assert_eq!(
            without_variable(text, "B").unwrap().as_deref(),
            Some("# tokens\r\nA=1\r\nexport GITHUB_TOKEN='ghp_x' # mine\r\n\r\n")
        );
        assert_eq!(without_variable(text, "MISSING").unwrap(), None);
        assert_eq!(
            without_variable("# A=1\nAB=2\n", "A").unwrap(),
            None,
            "a comment and a longer name are not the variable"
        );
        // The last line, without its newline; a byte-order mark stays.
        assert_eq!(
            without_variable("\u{feff}A=1\nB=2", "B")
                .unwrap()
                .as_deref(),
            Some("\u{feff}A=1\n")
        );
        assert_eq!(
            without_variable("\u{feff}A=1\nB=2", "A")
                .unwrap()
                .as_deref(),
            Some("\u{feff}B=2")
        );
    }

    #[test]
    fn removing_a_variable_removes_every_assignment_of_it() {
        assert_eq!(
            without_variable("A=old\nB=1\nA=new\n", "A")
                .unwrap()
                .as_deref(),
            Some("B=1\n")
        );
    }

    #[test]
    fn removing_a_variable_others_read_is_refused() {
        assert_eq!(
            without_variable("A=1\nB=${A}\n", "A"),
            Err(QuoteError::EntangledLine { line: 1 })
        );
    }
}
