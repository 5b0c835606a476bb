//! Where a server's value sits in its file's text, for reports that point
//! into the file (`scan`'s SARIF and JSON). The loaders keep no positions,
//! so the file is parsed again by parsers that do (jsonc-parser's AST,
//! toml_edit's document), the server's member is found by walking its keys
//! (the last of duplicate keys, as the loaders keep), and its string literal
//! is decoded escape by escape to map the secret's bytes to the text's.

use std::ops::Range;

use jsonc_parser::ast;
use jsonc_parser::common::Ranged;

use crate::config::model::Field;

/// A stretch of a file's text: 1-based lines and columns, columns counted in
/// Unicode code points (SARIF's `unicodeCodePoints`); the end is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Position {
    /// Line of the first character.
    pub line: usize,
    /// Column of the first character.
    pub column: usize,
    /// Line of the character after the last.
    pub end_line: usize,
    /// Column of the character after the last.
    pub end_column: usize,
}

/// How the file's text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// JSON, with or without comments.
    Json,
    /// TOML (Codex).
    Toml,
}

/// A file's text, parsed by a parser that keeps positions.
pub struct ParsedText<'t> {
    text: &'t str,
    tree: Tree<'t>,
    /// Where each line starts, found on the first position asked for: a
    /// file with many findings is not counted from its start for each.
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

enum Tree<'t> {
    Json(jsonc_parser::ast::Value<'t>),
    /// Strict JSON, stepped through where asked: no tree is built.
    StrictJson(strict::Index),
    Toml(toml_edit::Document<&'t str>),
}

/// Deepest strict JSON [`ParsedText::strict_json`] steps through itself:
/// jsonc-parser (which the other texts go through) refuses values more
/// than 512 of its levels deep, and counts an object member as a level of
/// its own, so up to half that the two agree.
const STRICT_DEPTH: usize = 256;

impl<'t> ParsedText<'t> {
    /// Parses `text`; `None` when it does not parse.
    pub fn parse(text: &'t str, syntax: Syntax) -> Option<Self> {
        // An editor shows no column for a byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let tree = match syntax {
            Syntax::Json => {
                let collect = jsonc_parser::CollectOptions::default();
                let options = jsonc_parser::ParseOptions::default();
                Tree::Json(
                    jsonc_parser::parse_to_ast(text, &collect, &options)
                        .ok()?
                        .value?,
                )
            }
            Syntax::Toml => Tree::Toml(toml_edit::Document::parse(text).ok()?),
        };
        Some(Self {
            text,
            tree,
            line_starts: std::cell::OnceCell::new(),
        })
    }

    /// [`Self::parse`] of `text` known to be strict JSON (serde_json read
    /// it): the same positions, found by stepping over the text where a
    /// finding is asked for instead of building jsonc-parser's tree.
    pub fn strict_json(text: &'t str) -> Option<Self> {
        Self::strict_json_of_depth(text, crate::mechanics::document::nesting_depth(text))
    }

    /// [`Self::strict_json`] of `text` whose
    /// [`nesting_depth`](crate::mechanics::document::nesting_depth) is
    /// `depth`, measured already.
    pub fn strict_json_of_depth(text: &'t str, depth: usize) -> Option<Self> {
        if depth > STRICT_DEPTH {
            return Self::parse(text, Syntax::Json);
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Some(Self {
            text,
            tree: Tree::StrictJson(strict::Index::default()),
            line_starts: std::cell::OnceCell::new(),
        })
    }

    /// Where bytes `span` of `field`'s string sit in the text, for the
    /// server whose entry is at `server` (its keys from the root:
    /// `["mcpServers", "gh"]`, `["projects", "/p", "mcpServers", "gh"]`).
    /// The field is looked for under each client's own name (`serverUrl`,
    /// `http_headers`, Zed's `command.path`). When the literal holds escapes
    /// that cannot be mapped, the position of its first character is given;
    /// `None` when the field is not a string there.
    pub fn locate(&self, server: &[&str], field: &Field, span: Range<usize>) -> Option<Position> {
        let (literal, value, syntax) = match &self.tree {
            Tree::Json(root) => {
                let (literal, value) = json_literal(root, server, field)?;
                (literal, value, Syntax::Json)
            }
            Tree::StrictJson(index) => {
                let (literal, value) = index.literal(self.text, server, field)?;
                (literal, value, Syntax::Json)
            }
            Tree::Toml(document) => {
                let (literal, value) = toml_literal(document, server, field)?;
                (literal, value, Syntax::Toml)
            }
        };
        let raw = &self.text[literal.clone()];
        let (start, end) = match map_span(raw, syntax, &value, span) {
            Some((start, end)) => (literal.start + start, literal.start + end),
            None => {
                let inside = literal.start + opening_length(raw);
                (inside, inside)
            }
        };
        let (line, column) = self.line_column(start);
        let (end_line, end_column) = self.line_column(end);
        Some(Position {
            line,
            column,
            end_line,
            end_column,
        })
    }
}

impl ParsedText<'_> {
    /// 1-based line and column (in code points) of byte `offset`.
    fn line_column(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|newline| newline + 1))
                .collect()
        });
        let offset = offset.min(self.text.len());
        // Lines that start at or before `offset`; the first starts at 0.
        let line = starts.partition_point(|&start| start <= offset);
        let line_start = starts[line - 1];
        (line, self.text[line_start..offset].chars().count() + 1)
    }
}

/// One step of the way to a value: a member or an element.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The ways to `field` from a server's entry, in the order the loaders
/// prefer them when several exist.
fn field_paths(field: &Field) -> Vec<Vec<Step<'_>>> {
    use Step::{Index, Key};
    match field {
        Field::Command => vec![vec![Key("command")], vec![Key("command"), Key("path")]],
        Field::Arg(index) => vec![
            vec![Key("args"), Index(*index)],
            vec![Key("command"), Key("args"), Index(*index)],
        ],
        Field::Env(key) => vec![
            vec![Key("env"), Key(key)],
            vec![Key("command"), Key("env"), Key(key)],
        ],
        Field::Url | Field::UrlPassword | Field::UrlQuery(_) => vec![
            vec![Key("url")],
            vec![Key("serverUrl")],
            vec![Key("httpUrl")],
        ],
        Field::Header(key) => vec![
            vec![Key("headers"), Key(key)],
            vec![Key("http_headers"), Key(key)],
        ],
    }
}

/// The byte range of the string literal at `server` + `field` in a JSON
/// tree, and its value.
fn json_literal(
    root: &ast::Value<'_>,
    server: &[&str],
    field: &Field,
) -> Option<(Range<usize>, String)> {
    let mut node = root;
    for key in server {
        node = json_member(node, key)?;
    }
    field_paths(field).into_iter().find_map(|path| {
        let mut value = node;
        for step in &path {
            value = match step {
                Step::Key(key) => json_member(value, key)?,
                Step::Index(index) => match value {
                    ast::Value::Array(array) => array.elements.get(*index)?,
                    _ => return None,
                },
            };
        }
        match value {
            ast::Value::StringLit(string) => {
                let range = string.range();
                Some((range.start..range.end, string.value.to_string()))
            }
            _ => None,
        }
    })
}

/// The last member named `key` of an object (the one JSON parsers keep).
fn json_member<'v, 'a>(value: &'v ast::Value<'a>, key: &str) -> Option<&'v ast::Value<'a>> {
    let ast::Value::Object(object) = value else {
        return None;
    };
    object
        .properties
        .iter()
        .rev()
        .find(|prop| prop.name.as_str() == key)
        .map(|prop| &prop.value)
}

/// Stepping through strict JSON text (which holds no comments, no trailing
/// commas and only valid escapes, so no step needs checking).
mod strict {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::ops::Range;

    use super::{Field, Step, field_paths};

    /// The members and elements of the objects and arrays stepped into so
    /// far, by where each starts: a file's servers are indexed once, not
    /// walked again for each finding.
    #[derive(Default)]
    pub(super) struct Index {
        nodes: RefCell<HashMap<usize, Node>>,
    }

    enum Node {
        /// Where each member's value starts; the last of duplicate keys
        /// (the one parsers keep).
        Object(HashMap<String, usize>),
        /// Where each element starts.
        Array(Vec<usize>),
        Other,
    }

    impl Index {
        /// [`super::json_literal`] on the text.
        pub(super) fn literal(
            &self,
            text: &str,
            server: &[&str],
            field: &Field,
        ) -> Option<(Range<usize>, String)> {
            let bytes = text.as_bytes();
            let mut node = skip_ws(bytes, 0);
            for key in server {
                node = self.step(text, node, &Step::Key(key))?;
            }
            field_paths(field).into_iter().find_map(|path| {
                let mut value = node;
                for step in &path {
                    value = self.step(text, value, step)?;
                }
                if bytes.get(value) != Some(&b'"') {
                    return None;
                }
                let end = string_end(bytes, value)?;
                Some((value..end, string_value(text, value..end)?))
            })
        }

        /// Where the member or element `step` of the value at `at` starts.
        fn step(&self, text: &str, at: usize, step: &Step<'_>) -> Option<usize> {
            let mut nodes = self.nodes.borrow_mut();
            let node = match nodes.get(&at) {
                Some(node) => node,
                None => nodes.entry(at).or_insert(index_node(text, at)?),
            };
            match (node, step) {
                (Node::Object(members), Step::Key(key)) => members.get(*key).copied(),
                (Node::Array(elements), Step::Index(index)) => elements.get(*index).copied(),
                _ => None,
            }
        }
    }

    fn index_node(text: &str, at: usize) -> Option<Node> {
        let bytes = text.as_bytes();
        match bytes.get(at)? {
            b'{' => {
                let mut members = HashMap::new();
                items(bytes, at, b'}', |start| {
                    let key_end = string_end(bytes, start)?;
                    let key = string_value(text, start..key_end)?;
                    let colon = skip_ws(bytes, key_end);
                    let value = skip_ws(bytes, colon + 1);
                    members.insert(key, value);
                    Some(value)
                })?;
                Some(Node::Object(members))
            }
            b'[' => {
                let mut elements = Vec::new();
                items(bytes, at, b']', |start| {
                    elements.push(start);
                    Some(start)
                })?;
                Some(Node::Array(elements))
            }
            _ => Some(Node::Other),
        }
    }

    /// Steps through the members or elements of the object or array at
    /// `at`, which `close` ends: `item` is told where each starts and
    /// says where its value starts (after a member's key).
    fn items(
        bytes: &[u8],
        at: usize,
        close: u8,
        mut item: impl FnMut(usize) -> Option<usize>,
    ) -> Option<()> {
        let mut next = skip_ws(bytes, at + 1);
        if bytes.get(next) == Some(&close) {
            return Some(());
        }
        loop {
            let value = item(next)?;
            next = skip_ws(bytes, value_end(bytes, value)?);
            match bytes.get(next)? {
                b',' => next = skip_ws(bytes, next + 1),
                _ => return Some(()),
            }
        }
    }

    fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
        while bytes
            .get(at)
            .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
        {
            at += 1;
        }
        at
    }

    /// The end of the string literal at `at` (after its closing quote).
    fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let mut next = at + 1;
        loop {
            let found = next + memchr::memchr2(b'"', b'\\', bytes.get(next..)?)?;
            if bytes[found] == b'"' {
                return Some(found + 1);
            }
            next = found + 2;
        }
    }

    /// The end of the value at `at`.
    fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
        let (open, close) = match bytes.get(at)? {
            b'"' => return string_end(bytes, at),
            b'{' => (b'{', b'}'),
            b'[' => (b'[', b']'),
            _ => {
                let length = bytes[at..]
                    .iter()
                    .position(|byte| {
                        matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                    })
                    .unwrap_or(bytes.len() - at);
                return Some(at + length);
            }
        };
        // Valid JSON balances each kind of bracket on its own, outside strings.
        let mut depth = 0usize;
        let mut next = at;
        loop {
            let found = next + memchr::memchr3(b'"', open, close, bytes.get(next..)?)?;
            if bytes[found] == b'"' {
                next = string_end(bytes, found)?;
                continue;
            }
            if bytes[found] == open {
                depth += 1;
            } else {
                depth -= 1;
                if depth == 0 {
                    return Some(found + 1);
                }
            }
            next = found + 1;
        }
    }

    /// The value of the string literal `literal`.
    fn string_value(text: &str, literal: Range<usize>) -> Option<String> {
        let inside = text.get(literal.start + 1..literal.end.checked_sub(1)?)?;
        if inside.contains('\\') {
            serde_json::from_str(&text[literal]).ok()
        } else {
            Some(inside.to_string())
        }
    }
}

/// The byte range of the string at `server` + `field` in a TOML document,
/// and its value.
fn toml_literal(
    document: &toml_edit::Document<&str>,
    server: &[&str],
    field: &Field,
) -> Option<(Range<usize>, String)> {
    let mut item = document.as_item();
    for key in server {
        item = item.as_table_like()?.get(key)?;
    }
    field_paths(field).into_iter().find_map(|path| {
        let mut value = item;
        let mut element: Option<&toml_edit::Value> = None;
        for step in &path {
            match (step, element) {
                (Step::Key(key), None) => value = value.as_table_like()?.get(key)?,
                (Step::Key(key), Some(inner)) => {
                    element = Some(inner.as_inline_table()?.get(key)?);
                }
                (Step::Index(index), None) => element = Some(value.as_array()?.get(*index)?),
                (Step::Index(index), Some(inner)) => element = Some(inner.as_array()?.get(*index)?),
            }
        }
        let string = match element {
            Some(inner) => inner,
            None => value.as_value()?,
        };
        let span = string.span()?;
        Some((span, string.as_str()?.to_string()))
    })
}

/// The length of a literal's opening quote: `"`, `'`, `"""` or `'''`.
fn opening_length(raw: &str) -> usize {
    if raw.starts_with("\"\"\"") || raw.starts_with("'''") {
        3
    } else {
        usize::from(raw.starts_with('"') || raw.starts_with('\''))
    }
}

/// Offsets in `raw` (a whole literal, quotes included) of the bytes `span`
/// of its decoded `value`; `None` when decoding `raw` does not give `value`
/// (an escape this walk does not know), so no offset is guessed.
fn map_span(raw: &str, syntax: Syntax, value: &str, span: Range<usize>) -> Option<(usize, usize)> {
    let (decoded, pieces) = decode(raw, syntax)?;
    if decoded != value || span.end > decoded.len() || span.start > span.end {
        return None;
    }
    // Each piece is one source character or one escape; a secret starts
    // and ends on piece boundaries because it starts and ends on characters.
    let mut offset = 0;
    let mut start = None;
    let mut end = None;
    for &(raw_start, length) in &pieces {
        if offset == span.start && length != 0 && start.is_none() {
            start = Some(raw_start);
        }
        if offset == span.end && end.is_none() {
            end = Some(raw_start);
        }
        offset += length;
    }
    let close = raw.len() - opening_length(raw);
    let start = start.unwrap_or(close);
    let end = end.unwrap_or(close);
    Some((start, end))
}

/// The literal's content decoded, and its pieces as (offset in `raw`,
/// decoded length), one per source character or escape; `None` for an
/// escape it cannot decode.
fn decode(raw: &str, syntax: Syntax) -> Option<(String, Vec<(usize, usize)>)> {
    let open = opening_length(raw);
    let multiline = open == 3;
    let literal = raw.starts_with('\'') && syntax == Syntax::Toml;
    let body = raw.get(open..raw.len().checked_sub(open)?)?;
    let mut decoded = String::with_capacity(body.len());
    let mut pieces = Vec::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    // TOML drops a newline right after a multi-line string's opening quotes.
    if multiline {
        if body.starts_with("\r\n") {
            chars.next();
            chars.next();
        } else if body.starts_with('\n') {
            chars.next();
        }
    }
    while let Some((index, c)) = chars.next() {
        let at = open + index;
        if c != '\\' || literal {
            pieces.push((at, c.len_utf8()));
            decoded.push(c);
            continue;
        }
        let (_, escape) = chars.next()?;
        let one = match escape {
            '"' => '"',
            '\\' => '\\',
            '/' if syntax == Syntax::Json => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'e' if syntax == Syntax::Toml => '\u{1b}',
            'u' | 'U' | 'x' => {
                let digits = match escape {
                    'u' => 4,
                    'U' if syntax == Syntax::Toml => 8,
                    'x' if syntax == Syntax::Toml => 2,
                    _ => return None,
                };
                let mut code = hex(&mut chars, digits)?;
                // A JSON surrogate pair is two escapes for one character.
                if syntax == Syntax::Json && (0xD800..0xDC00).contains(&code) {
                    let (_, backslash) = chars.next()?;
                    let (_, u) = chars.next()?;
                    if backslash != '\\' || u != 'u' {
                        return None;
                    }
                    let low = hex(&mut chars, 4)?;
                    code = 0x10000 + ((code - 0xD800) << 10) + low.checked_sub(0xDC00)?;
                }
                char::from_u32(code)?
            }
            // A line-ending backslash in a multi-line basic string drops the
            // newline and the white space after it.
            ' ' | '\t' | '\r' | '\n' if multiline && syntax == Syntax::Toml => {
                while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
                pieces.push((at, 0));
                continue;
            }
            _ => return None,
        };
        pieces.push((at, one.len_utf8()));
        decoded.push(one);
    }
    Some((decoded, pieces))
}

fn hex(chars: &mut impl Iterator<Item = (usize, char)>, digits: usize) -> Option<u32> {
    let mut code = 0;
    for _ in 0..digits {
        code = code * 16 + chars.next()?.1.to_digit(16)?;
    }
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, syntax: Syntax, server: &[&str], field: Field, secret: &str) -> Position {
        // The secret as decoded: find it in the value the loader would see.
        let value: serde_json::Value = match syntax {
            Syntax::Json => jsonc_parser::parse_to_serde_value::<Option<serde_json::Value>>(
                text,
                &Default::default(),
            )
            .unwrap()
            .unwrap(),
            Syntax::Toml => toml::from_str(text).unwrap(),
        };
        let mut node = &value;
        for key in server {
            node = &node[key];
        }
        let string = match &field {
            Field::Env(key) => node["env"][key]
                .as_str()
                .or_else(|| node["command"]["env"][key].as_str()),
            Field::Arg(index) => node["args"][index].as_str(),
            Field::Header(key) => node
                .get("headers")
                .or_else(|| node.get("http_headers"))
                .and_then(|headers| headers[key].as_str()),
            _ => node["url"].as_str().or_else(|| node["serverUrl"].as_str()),
        }
        .unwrap();
        let start = string.find(secret).unwrap();
        let span = start..start + secret.len();
        let position = ParsedText::parse(text, syntax)
            .unwrap()
            .locate(server, &field, span.clone())
            .unwrap();
        // Strict JSON stepped through gives the same position.
        if syntax == Syntax::Json && serde_json::from_str::<serde_json::Value>(text).is_ok() {
            let strict = ParsedText::strict_json(text).unwrap();
            assert_eq!(strict.locate(server, &field, span), Some(position));
        }
        position
    }

    #[test]
    fn strict_json_is_located_as_the_tree_locates_it() {
        let text = concat!(
            "{\"mcpServers\": {\"a\": {\"env\": {\"T\": \"first\"}},\n",
            "  \"a\": {\"command\": {\"path\": \"x\", \"args\": [1, {\"k\": [\"]\"]}, \"tok\\\"en9\"]},\n",
            "    \"env\": {\"T\": 7, \"K\\u0041\": \"v\\u00e9\\ud83d\\ude00w\"}, \"url\": \"https://u:p@h\"},\n",
            "  \"\\u0062\": {\"headers\": {\"X\": \"{[\\\\\"}}}, \"n\": [true, null, -1.5e3]}"
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(text).is_ok(),
            "{text}"
        );
        let tree = ParsedText::parse(text, Syntax::Json).unwrap();
        let strict = ParsedText::strict_json(text).unwrap();
        let cases: Vec<(&[&str], Field, Range<usize>)> = vec![
            (&["mcpServers", "a"], Field::Env("T".to_string()), 0..1),
            (&["mcpServers", "a"], Field::Env("KA".to_string()), 1..3),
            (&["mcpServers", "a"], Field::Env("KA".to_string()), 3..7),
            (&["mcpServers", "a"], Field::Arg(2), 0..6),
            (&["mcpServers", "a"], Field::Arg(1), 0..1),
            (&["mcpServers", "a"], Field::Command, 0..1),
            (&["mcpServers", "a"], Field::UrlPassword, 10..11),
            (&["mcpServers", "b"], Field::Header("X".to_string()), 1..3),
            (&["mcpServers", "c"], Field::Command, 0..1),
            (&["n"], Field::Arg(0), 0..1),
        ];
        for (server, field, span) in cases {
            assert_eq!(
                strict.locate(server, &field, span.clone()),
                tree.locate(server, &field, span.clone()),
                "{server:?} {field:?} {span:?}"
            );
        }
        // Deeper than jsonc-parser reads: no position either way.
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(600), "]".repeat(600));
        assert!(ParsedText::parse(&deep, Syntax::Json).is_none());
        assert!(ParsedText::strict_json(&deep).is_none());
    }

    fn pos(line: usize, column: usize, end_line: usize, end_column: usize) -> Position {
        Position {
            line,
            column,
            end_line,
            end_column,
        }
    }

    #[test]
    fn the_same_token_in_two_servers_is_found_in_each() {
        let text = "{\"mcpServers\": {\n  \"a\": {\"env\": {\"T\": \"tok123\"}},\n  \"b\": {\"env\": {\"T\": \"tok123\"}}\n}}";
        let env = || Field::Env("T".to_string());
        assert_eq!(
            at(text, Syntax::Json, &["mcpServers", "a"], env(), "tok123"),
            pos(2, 23, 2, 29)
        );
        assert_eq!(
            at(text, Syntax::Json, &["mcpServers", "b"], env(), "tok123"),
            pos(3, 23, 3, 29)
        );
    }

    #[test]
    fn escapes_and_wide_characters_are_counted_as_written() {
        // `é` is one code point; `\u00e9` is six characters of text.
        let text = "{\"mcpServers\": {\"é\": {\"args\": [\"x\", \"--k=\\u00e9\\\"tok\\/9\"]}}}";
        let position = at(
            text,
            Syntax::Json,
            &["mcpServers", "é"],
            Field::Arg(1),
            "tok/9",
        );
        let column = text.find("tok").unwrap() - 1; // `é` is two bytes, one column
        assert_eq!(
            position,
            pos(1, column + 1, 1, column + 1 + "tok\\/9".len())
        );
    }

    #[test]
    fn a_duplicate_key_points_at_the_value_the_loader_keeps() {
        let text = "{\"mcpServers\": {\"a\": {\"env\": {\"T\": \"old\"}}, \"a\": {\"env\": {\"T\": \"new\"}}}}";
        let position = at(
            text,
            Syntax::Json,
            &["mcpServers", "a"],
            Field::Env("T".into()),
            "new",
        );
        assert_eq!(position.column, text.find("new").unwrap() + 1);
    }

    #[test]
    fn toml_strings_of_every_kind() {
        let text = "[mcp_servers.s]\nurl = 'https://x?key=abc'\nhttp_headers = { Authorization = \"Bearer \\u0041bc\" }\n\n[mcp_servers.s.env]\nT = \"\"\"\nline\\\n   tok\"\"\"\n";
        let cases = [
            (Field::UrlQuery("key".into()), "abc", pos(2, 22, 2, 25)),
            (
                Field::Header("Authorization".into()),
                "Abc",
                pos(3, 42, 3, 50),
            ),
            (Field::Env("T".into()), "linetok", pos(7, 1, 8, 7)),
        ];
        for (field, secret, expected) in cases {
            let found = at(text, Syntax::Toml, &["mcp_servers", "s"], field, secret);
            assert_eq!(found, expected, "{secret}");
        }
    }

    #[test]
    fn zed_and_windsurf_names_are_followed() {
        let zed =
            r#"{"context_servers": {"z": {"command": {"path": "npx", "env": {"T": "tok"}}}}}"#;
        let position = at(
            zed,
            Syntax::Json,
            &["context_servers", "z"],
            Field::Env("T".into()),
            "tok",
        );
        assert_eq!(position.column, zed.find("tok").unwrap() + 1);
        let windsurf = r#"{"mcpServers": {"w": {"serverUrl": "https://u:pw@h"}}}"#;
        let position = at(
            windsurf,
            Syntax::Json,
            &["mcpServers", "w"],
            Field::UrlPassword,
            "pw",
        );
        assert_eq!(position.column, windsurf.find("pw@").unwrap() + 1);
    }
}
