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
use crate::secrets::node::Node;

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
    /// Line and column of each position asked for.
    lines: LineCounter,
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
            lines: LineCounter::default(),
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
            lines: LineCounter::default(),
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
                let literal = index.literal(self.text, server, field)?;
                let raw = &self.text[literal.clone()];
                // A literal without escapes is its value, byte for byte.
                if !raw.contains('\\') {
                    let (start, end) = unescaped_span(raw, span);
                    return Some(self.position(literal.start + start, literal.start + end));
                }
                let value = strict::string_value(self.text, literal.clone())?;
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
        Some(self.position(start, end))
    }

    /// The position of bytes `start..end` of the text.
    fn position(&self, start: usize, end: usize) -> Position {
        let (line, column) = self.line_column(start);
        let (end_line, end_column) = self.line_column(end);
        Position {
            line,
            column,
            end_line,
            end_column,
        }
    }
}

/// What one pass over a text that may be strict JSON finds: how deep it
/// nests (what [`nesting_depth`](crate::mechanics::document::nesting_depth)
/// measures) and where each member and element is, which locates findings
/// once serde_json has read the text, without a second pass.
pub struct JsonShape<'t> {
    text: &'t str,
    tree: strict::Tree,
    depth: usize,
}

impl<'t> JsonShape<'t> {
    /// The shape of `text`; `None` when it does not have JSON's (then
    /// measure its depth on its own).
    pub fn of(text: &'t str) -> Option<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let (tree, depth) = strict::Tree::measured(text)?;
        Some(Self { text, tree, depth })
    }

    /// The shape of `text` and its value, read in one pass, when it is
    /// strict JSON within [`MAX_DEPTH`](crate::mechanics::document::MAX_DEPTH)
    /// that serde_json reads as [`Node::parse`] does: the value is the one
    /// `Node::parse` gives, the shape the one [`Self::of`] gives. `None`
    /// for any other text (a syntax error, a byte-order mark, a lone
    /// surrogate escape, serde_json's own marker keys), which is read as
    /// before: `Self::of`, then `Node::parse` or serde_json's `Value`.
    pub fn read(text: &'t str) -> Option<(Self, Node<'t>)> {
        let (tree, depth, node) = strict::Tree::read(text)?;
        Some((Self { text, tree, depth }, node))
    }

    /// How deep arrays and objects nest in the text.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// [`ParsedText::strict_json`] of the text, which serde_json read.
    pub fn into_parsed(self) -> Option<ParsedText<'t>> {
        if self.depth > STRICT_DEPTH {
            return ParsedText::parse(self.text, Syntax::Json);
        }
        Some(ParsedText {
            text: self.text,
            tree: Tree::StrictJson(strict::Index::of(self.tree)),
            lines: LineCounter::default(),
        })
    }
}

impl ParsedText<'_> {
    /// 1-based line and column (in code points) of byte `offset`.
    fn line_column(&self, offset: usize) -> (usize, usize) {
        self.lines.line_column(self.text, offset)
    }
}

/// Lines and columns of byte offsets in one text. A file's findings are
/// asked for in the order of its text, nearly always (entry by entry,
/// each start before its end), so each is counted on from the one before:
/// the text is read once in all, where an index of every line's start
/// cost a step per line of each file with a finding. An offset before
/// the last one asked (a file whose entries are not in text order) is
/// found in that index, built then, once.
#[derive(Default)]
struct LineCounter {
    /// The last offset asked for, and its 1-based line and column.
    cursor: std::cell::Cell<LineCursor>,
    /// Where each line starts, built on the first offset asked for out of
    /// order.
    starts: std::cell::OnceCell<Vec<usize>>,
}

#[derive(Clone, Copy)]
struct LineCursor {
    offset: usize,
    line: usize,
    column: usize,
}

impl Default for LineCursor {
    fn default() -> Self {
        Self {
            offset: 0,
            line: 1,
            column: 1,
        }
    }
}

impl LineCounter {
    /// 1-based line and column (in code points) of byte `offset` of
    /// `text`, the same text at each call.
    fn line_column(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let cursor = self.cursor.get();
        if offset < cursor.offset || self.starts.get().is_some() {
            return self.indexed(text, offset);
        }
        let between = &text.as_bytes()[cursor.offset..offset];
        let next = match memchr::memrchr(b'\n', between) {
            // Still on the cursor's line: count on from its column.
            None => LineCursor {
                offset,
                column: cursor.column + text[cursor.offset..offset].chars().count(),
                ..cursor
            },
            Some(last) => {
                let line_start = cursor.offset + last + 1;
                LineCursor {
                    offset,
                    line: cursor.line + newlines(between),
                    column: text[line_start..offset].chars().count() + 1,
                }
            }
        };
        self.cursor.set(next);
        (next.line, next.column)
    }

    /// [`Self::line_column`] found in the index of line starts.
    fn indexed(&self, text: &str, offset: usize) -> (usize, usize) {
        let starts = self.starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|newline| newline + 1))
                .collect()
        });
        // Lines that start at or before `offset`; the first starts at 0.
        let line = starts.partition_point(|&start| start <= offset);
        let line_start = starts[line - 1];
        (line, text[line_start..offset].chars().count() + 1)
    }
}

/// How many `\n` bytes `bytes` holds (memchr counts them with SIMD where
/// the processor has it).
fn newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
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
    use std::borrow::Cow;
    use std::cell::OnceCell;
    use std::ops::Range;

    use super::Node;
    use super::{Field, Step, field_paths};
    use crate::mechanics::document::MAX_DEPTH;
    use crate::secrets::node::{Members, resolve_duplicates};

    /// Every object and array of the text and where each of their members
    /// and elements starts, found in one pass over the text the first time
    /// a finding is located (stepping through it level by level went over
    /// a file once per level of keys).
    #[derive(Default)]
    pub(super) struct Index {
        tree: OnceCell<Option<Tree>>,
    }

    /// The text's containers and their items.
    #[derive(Debug, PartialEq, Eq)]
    pub(super) struct Tree {
        /// Where the root value starts.
        root: usize,
        /// By container: where its items are in `items`. The root, when an
        /// object or an array, is the first.
        containers: Vec<Container>,
        /// The items of each container, one container's after another.
        items: Vec<Item>,
    }

    #[derive(Debug, PartialEq, Eq)]
    struct Container {
        object: bool,
        items: Range<usize>,
    }

    /// A container just opened.
    struct Opened {
        id: usize,
        object: bool,
        /// Whether it closes right away.
        empty: bool,
        /// Where its first item starts, or (when empty) what follows it.
        next: usize,
    }

    /// A member of an object or an element of an array.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Item {
        /// A member's key literal, quotes included; empty for an element.
        key: Range<usize>,
        /// Where its value starts.
        value: usize,
        /// The container its value is; [`SCALAR`] for any other value.
        container: usize,
    }

    /// [`Item::container`] of a string, number, boolean or null.
    const SCALAR: usize = usize::MAX;

    impl Index {
        /// The index of a tree built already.
        pub(super) fn of(tree: Tree) -> Self {
            Self {
                tree: OnceCell::from(Some(tree)),
            }
        }

        /// [`super::json_literal`] on the text.
        pub(super) fn literal(
            &self,
            text: &str,
            server: &[&str],
            field: &Field,
        ) -> Option<Range<usize>> {
            let tree = self.tree.get_or_init(|| Tree::of(text)).as_ref()?;
            let bytes = text.as_bytes();
            let mut node = (tree.root, tree.root_container());
            for key in server {
                node = tree.step(text, node, &Step::Key(key))?;
            }
            field_paths(field).into_iter().find_map(|path| {
                let mut value = node;
                for step in &path {
                    value = tree.step(text, value, step)?;
                }
                if bytes.get(value.0) != Some(&b'"') {
                    return None;
                }
                Some(value.0..string_end(bytes, value.0)?)
            })
        }
    }

    impl Tree {
        /// The tree of strict JSON `text`; `None` if it is not (which a
        /// text serde_json read never is).
        pub(super) fn of(text: &str) -> Option<Self> {
            Self::measured(text).map(|(tree, _)| tree)
        }

        /// [`Self::of`], with how deep the text nests: the most containers
        /// open at once. Numbers and literals are held to the bytes they
        /// may have, so every bracket outside strings is one of the tree's
        /// and the depth is the one `nesting_depth` counts.
        pub(super) fn measured(text: &str) -> Option<(Self, usize)> {
            let bytes = text.as_bytes();
            let mut depth = 0;
            let root = skip_ws(bytes, 0);
            let mut tree = Self {
                root,
                containers: Vec::new(),
                items: Vec::new(),
            };
            // The open containers, innermost last, with where their items
            // start in `open_items`, which holds the items of every open
            // container until it closes.
            let mut open: Vec<(usize, usize)> = Vec::new();
            let mut open_items: Vec<Item> = Vec::new();
            let mut at = root;
            loop {
                // `at` is where a value starts.
                match *bytes.get(at)? {
                    b'{' | b'[' => {
                        depth = depth.max(open.len() + 1);
                        let opened = tree.open(bytes, at, !open.is_empty(), &mut open_items);
                        at = opened.next;
                        // An empty one has no items, and is closed already.
                        if !opened.empty {
                            open.push((opened.id, open_items.len()));
                            at = next_item(bytes, at, opened.object, &mut open_items)?;
                            continue;
                        }
                    }
                    b'"' => at = string_end(bytes, at)?,
                    _ => at = scalar_end(bytes, at)?,
                }
                // After a value: the next item, or the ends of containers.
                loop {
                    at = skip_ws(bytes, at);
                    let Some(&(id, first)) = open.last() else {
                        return (at == bytes.len()).then_some((tree, depth));
                    };
                    let object = tree.containers[id].object;
                    match *bytes.get(at)? {
                        b',' => {
                            at = next_item(bytes, skip_ws(bytes, at + 1), object, &mut open_items)?;
                            break;
                        }
                        b'}' | b']' => {
                            tree.close(id, &mut open_items, first);
                            open.pop();
                            at += 1;
                        }
                        _ => return None,
                    }
                }
            }
        }

        /// Adds the container (an object or an array) that opens at `at`,
        /// which is the value of the last open item when `nested`.
        #[inline]
        fn open(
            &mut self,
            bytes: &[u8],
            at: usize,
            nested: bool,
            open_items: &mut [Item],
        ) -> Opened {
            let id = self.containers.len();
            let object = bytes[at] == b'{';
            self.containers.push(Container {
                object,
                items: 0..0,
            });
            if let Some(item) = open_items.last_mut()
                && nested
            {
                item.container = id;
            }
            let next = skip_ws(bytes, at + 1);
            let close = if object { b'}' } else { b']' };
            let empty = bytes.get(next) == Some(&close);
            Opened {
                id,
                object,
                empty,
                next: next + usize::from(empty),
            }
        }

        /// Closes the container `id`, whose items are the open items from
        /// `first` on.
        #[inline]
        fn close(&mut self, id: usize, open_items: &mut Vec<Item>, first: usize) {
            let start = self.items.len();
            self.items.extend(open_items.drain(first..));
            self.containers[id].items = start..self.items.len();
        }

        /// The root's container, if it is one.
        fn root_container(&self) -> usize {
            if self.containers.is_empty() {
                SCALAR
            } else {
                0
            }
        }

        /// Where the member or element `step` of the value `at` (where it
        /// starts, and its container) starts.
        fn step(
            &self,
            text: &str,
            (_, container): (usize, usize),
            step: &Step<'_>,
        ) -> Option<(usize, usize)> {
            let container = self.containers.get(container)?;
            let items = &self.items[container.items.clone()];
            let item = match (container.object, step) {
                // The last of duplicate keys, the one parsers keep.
                (true, Step::Key(key)) => items
                    .iter()
                    .rev()
                    .find(|item| key_is(text, item.key.clone(), key))?,
                (false, Step::Index(index)) => items.get(*index)?,
                _ => return None,
            };
            Some((item.value, item.container))
        }
    }

    /// Where strict JSON's reading stands after a value, for the
    /// containers still open.
    struct Open {
        /// The container's id in [`Tree::containers`].
        id: usize,
        /// Where its items start in the open items.
        first_item: usize,
        /// Where its values start in the open values.
        first_value: usize,
        /// Where its keys start in the open keys (an object's).
        first_key: usize,
    }

    impl Tree {
        /// The tree of strict JSON `text`, its depth and its value, read
        /// in one pass: `None` for what serde_json may not read the same
        /// way as [`Node::parse`] (anything not strict JSON, a text
        /// deeper than [`MAX_DEPTH`], a byte-order mark, a lone surrogate
        /// escape, serde_json's own marker keys), which the caller reads
        /// as before. What it reads is what `Node::parse` reads, and the
        /// tree and depth are [`Self::measured`]'s.
        pub(in crate::secrets) fn read(text: &str) -> Option<(Self, usize, Node<'_>)> {
            let bytes = text.as_bytes();
            let root = skip_ws(bytes, 0);
            let mut tree = Self {
                root,
                containers: Vec::new(),
                items: Vec::new(),
            };
            let mut depth = 0;
            let mut open: Vec<Open> = Vec::new();
            let mut open_items: Vec<Item> = Vec::new();
            // The values and keys read in the open containers, innermost
            // last; a container's become its node when it closes.
            let mut values: Vec<Node<'_>> = Vec::new();
            let mut keys: Vec<Cow<'_, str>> = Vec::new();
            let mut at = root;
            loop {
                // `at` is where a value starts.
                let node = match *bytes.get(at)? {
                    b'{' | b'[' => {
                        if open.len() + 1 > MAX_DEPTH {
                            return None;
                        }
                        depth = depth.max(open.len() + 1);
                        let opened = tree.open(bytes, at, !open.is_empty(), &mut open_items);
                        at = opened.next;
                        match (opened.empty, opened.object) {
                            (true, true) => Node::Object(Vec::new()),
                            (true, false) => Node::Array(Vec::new()),
                            (false, object) => {
                                open.push(Open {
                                    id: opened.id,
                                    first_item: open_items.len(),
                                    first_value: values.len(),
                                    first_key: keys.len(),
                                });
                                at = read_item(text, at, object, &mut open_items, &mut keys)?;
                                continue;
                            }
                        }
                    }
                    b'"' => {
                        let (string, end) = read_string(text, at)?;
                        at = end;
                        Node::String(string)
                    }
                    b't' => {
                        at = literal_end(bytes, at, b"true")?;
                        Node::Bool(true)
                    }
                    b'f' => {
                        at = literal_end(bytes, at, b"false")?;
                        Node::Bool(false)
                    }
                    b'n' => {
                        at = literal_end(bytes, at, b"null")?;
                        Node::Null
                    }
                    _ => {
                        let (number, end) = read_number(text, at)?;
                        at = end;
                        Node::Number(number)
                    }
                };
                values.push(node);
                // After a value: the next item, or the ends of containers.
                loop {
                    at = skip_ws(bytes, at);
                    let Some(innermost) = open.last() else {
                        let root = values.pop()?;
                        return (at == bytes.len()).then_some((tree, depth, root));
                    };
                    let object = tree.containers[innermost.id].object;
                    match (*bytes.get(at)?, object) {
                        (b',', _) => {
                            at = read_item(
                                text,
                                skip_ws(bytes, at + 1),
                                object,
                                &mut open_items,
                                &mut keys,
                            )?;
                            break;
                        }
                        (b'}', true) | (b']', false) => {
                            let Open {
                                id,
                                first_item,
                                first_value,
                                first_key,
                            } = open.pop()?;
                            tree.close(id, &mut open_items, first_item);
                            let node = if object {
                                let mut members: Members<'_> = keys
                                    .drain(first_key..)
                                    .zip(values.drain(first_value..))
                                    .collect();
                                resolve_duplicates(&mut members);
                                Node::Object(members)
                            } else {
                                Node::Array(values.drain(first_value..).collect())
                            };
                            values.push(node);
                            at += 1;
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    /// [`next_item`] of strict JSON, a member's key read into `keys`.
    fn read_item<'t>(
        text: &'t str,
        at: usize,
        object: bool,
        items: &mut Vec<Item>,
        keys: &mut Vec<Cow<'t, str>>,
    ) -> Option<usize> {
        let bytes = text.as_bytes();
        if !object {
            return Some(push_element(items, at));
        }
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let (key, key_end) = read_string(text, at)?;
        // Objects keyed so are read by serde_json its own way.
        if key.starts_with("$serde_json::private::") {
            return None;
        }
        keys.push(key);
        push_member(bytes, at..key_end, items)
    }

    /// The end of `literal` (`true`, `false`, `null`) at `at`.
    fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
        bytes[at..]
            .starts_with(literal)
            .then_some(at + literal.len())
    }

    /// The number at `at` and its end, its text as serde_json's
    /// `arbitrary_precision` gives it: as written, but for an exponent,
    /// given as `e` and a sign (`1E5` is `1e+5`).
    fn read_number(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
        let bytes = text.as_bytes();
        let digits = |from: usize| {
            from + bytes[from..]
                .iter()
                .take_while(|byte| byte.is_ascii_digit())
                .count()
        };
        let mut end = at + usize::from(bytes[at] == b'-');
        // One leading zero, or digits that do not start with one.
        end = match bytes.get(end)? {
            b'0' => end + 1,
            b'1'..=b'9' => digits(end + 1),
            _ => return None,
        };
        if bytes.get(end) == Some(&b'.') {
            let fraction = digits(end + 1);
            if fraction == end + 1 {
                return None;
            }
            end = fraction;
        }
        // A digit right after a leading zero is no number.
        if bytes.get(end).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        if !matches!(bytes.get(end), Some(b'e' | b'E')) {
            return Some((Cow::Borrowed(&text[at..end]), end));
        }
        let mantissa = &text[at..end];
        let sign = match bytes.get(end + 1) {
            Some(&sign @ (b'+' | b'-')) => sign,
            _ => b'+',
        };
        let exponent = end + 1 + usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let exponent_end = digits(exponent);
        if exponent_end == exponent {
            return None;
        }
        let mut number = String::with_capacity(mantissa.len() + 2 + exponent_end - exponent);
        number.push_str(mantissa);
        number.push('e');
        number.push(char::from(sign));
        number.push_str(&text[exponent..exponent_end]);
        Some((Cow::Owned(number), exponent_end))
    }

    /// The string literal at `at`, unescaped as serde_json unescapes it,
    /// and its end; `None` for a control character, an unknown escape or
    /// a lone surrogate (which serde_json refuses or reads its own way).
    pub(in crate::secrets) fn read_string(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
        let bytes = text.as_bytes();
        let start = at + 1;
        let mut found = start + string_stop(bytes.get(start..)?)?;
        if bytes[found] == b'"' {
            return Some((Cow::Borrowed(&text[start..found]), found + 1));
        }
        let mut value = String::with_capacity(found - start + 16);
        value.push_str(&text[start..found]);
        loop {
            match bytes[found] {
                b'"' => return Some((Cow::Owned(value), found + 1)),
                b'\\' => {
                    let (one, next) = read_escape(bytes, found + 1)?;
                    value.push(one);
                    let stop = next + string_stop(bytes.get(next..)?)?;
                    value.push_str(&text[next..stop]);
                    found = stop;
                }
                _ => return None,
            }
        }
    }

    /// The character of the escape whose letter is at `at`, and where the
    /// text goes on.
    fn read_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
        let one = match bytes.get(at)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let code = hex4(bytes, at + 1)?;
                return match code {
                    0xD800..=0xDBFF => {
                        if bytes.get(at + 5..at + 7)? != b"\\u" {
                            return None;
                        }
                        let low = hex4(bytes, at + 7)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        Some((char::from_u32(code)?, at + 11))
                    }
                    _ => Some((char::from_u32(code)?, at + 5)),
                };
            }
            _ => return None,
        };
        Some((one, at + 1))
    }

    /// The four hex digits at `at`, as a number.
    fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
        bytes.get(at..at + 4)?.iter().try_fold(0, |code, &digit| {
            Some(code * 16 + char::from(digit).to_digit(16)?)
        })
    }

    /// Where the first `"`, `\` or control character (below a space) of
    /// `haystack` is, looked for a word at a time.
    pub(super) fn string_stop(haystack: &[u8]) -> Option<usize> {
        const QUOTES: u64 = LOW_BITS * b'"' as u64;
        const BACKSLASHES: u64 = LOW_BITS * b'\\' as u64;
        const SPACES: u64 = LOW_BITS * b' ' as u64;
        let mut at = 0;
        while let Some(word) = haystack[at..].first_chunk::<8>() {
            let word = u64::from_le_bytes(*word);
            // Each term's lowest set bit is exact, so the lowest of all is.
            let found = first_zero_byte(word ^ QUOTES)
                | first_zero_byte(word ^ BACKSLASHES)
                | (word.wrapping_sub(SPACES) & !word & (LOW_BITS << 7));
            if found != 0 {
                return Some(at + (found.trailing_zeros() / 8) as usize);
            }
            at += 8;
        }
        haystack[at..]
            .iter()
            .position(|&byte| byte == b'"' || byte == b'\\' || byte < b' ')
            .map(|found| at + found)
    }

    /// Whether the key literal at `literal` says `key`.
    pub(super) fn key_is(text: &str, literal: Range<usize>, key: &str) -> bool {
        let inside = &text.as_bytes()[literal.start + 1..literal.end - 1];
        // An escape is never shorter than what it stands for, and a first
        // byte that is not one is the value's own: most keys of an object
        // are told apart from `key` here, without looking for escapes.
        if inside.len() < key.len()
            || inside
                .first()
                .is_some_and(|&first| first != b'\\' && Some(&first) != key.as_bytes().first())
        {
            return false;
        }
        if inside.contains(&b'\\') {
            string_value(text, literal).is_some_and(|value| value == key)
        } else {
            inside == key.as_bytes()
        }
    }

    /// Reads the key (for an object) at `at` up to its value, adds the item
    /// to `items`, and says where its value starts.
    fn next_item(bytes: &[u8], at: usize, object: bool, items: &mut Vec<Item>) -> Option<usize> {
        if !object {
            return Some(push_element(items, at));
        }
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        push_member(bytes, at..string_end(bytes, at)?, items)
    }

    /// Adds the element at `at` to `items`; its value starts there.
    #[inline]
    fn push_element(items: &mut Vec<Item>, at: usize) -> usize {
        items.push(Item {
            key: 0..0,
            value: at,
            container: SCALAR,
        });
        at
    }

    /// Adds the member whose key literal is `key` to `items`, and says
    /// where its value starts, after the colon.
    #[inline]
    fn push_member(bytes: &[u8], key: Range<usize>, items: &mut Vec<Item>) -> Option<usize> {
        let colon = skip_ws(bytes, key.end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let value = skip_ws(bytes, colon + 1);
        items.push(Item {
            key,
            value,
            container: SCALAR,
        });
        Some(value)
    }

    pub(super) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
        while bytes
            .get(at)
            .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
        {
            at += 1;
        }
        at
    }

    /// A 1 in each byte of a word.
    const LOW_BITS: u64 = 0x0101_0101_0101_0101;

    /// A word whose lowest set bit is the top bit of the first zero byte of
    /// `word` (in little-endian order), 0 if none is (the bits above it
    /// may be set wrongly; it is exact).
    fn first_zero_byte(word: u64) -> u64 {
        word.wrapping_sub(LOW_BITS) & !word & (LOW_BITS << 7)
    }

    /// `memchr::memchr2(b'"', b'\\', haystack)`: a string's text is short
    /// (a key, a command, a token), so its first bytes are looked at a
    /// word at a time, without a call; past 64 of them, memchr's SIMD.
    pub(super) fn quote_or_backslash(haystack: &[u8]) -> Option<usize> {
        const QUOTES: u64 = LOW_BITS * b'"' as u64;
        const BACKSLASHES: u64 = LOW_BITS * b'\\' as u64;
        let mut at = 0;
        while let Some(word) = haystack[at..].first_chunk::<8>() {
            let word = u64::from_le_bytes(*word);
            let found = first_zero_byte(word ^ QUOTES) | first_zero_byte(word ^ BACKSLASHES);
            if found != 0 {
                return Some(at + (found.trailing_zeros() / 8) as usize);
            }
            at += 8;
            if at >= 64 {
                return memchr::memchr2(b'"', b'\\', &haystack[at..]).map(|found| at + found);
            }
        }
        haystack[at..]
            .iter()
            .position(|&byte| byte == b'"' || byte == b'\\')
            .map(|found| at + found)
    }

    /// The end of the number, `true`, `false` or `null` at `at`; `None`
    /// when a byte none of them has comes first (or there is none).
    fn scalar_end(bytes: &[u8], at: usize) -> Option<usize> {
        let length = bytes[at..]
            .iter()
            .position(|byte| !matches!(byte, b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'+' | b'-' | b'.'))
            .unwrap_or(bytes.len() - at);
        (length > 0).then_some(at + length)
    }

    /// The end of the string literal at `at` (after its closing quote).
    pub(super) fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let mut next = at + 1;
        loop {
            let found = next + quote_or_backslash(bytes.get(next..)?)?;
            if bytes[found] == b'"' {
                return Some(found + 1);
            }
            next = found + 2;
        }
    }

    /// The value of the string literal `literal`.
    pub(super) fn string_value(text: &str, literal: Range<usize>) -> Option<String> {
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

/// [`map_span`] of a JSON literal `raw` that holds no escape (its content
/// is its value): offsets in `raw` of the bytes `span` of the value; a
/// bound inside a character (no secret has one) is taken to the closing
/// quote, as `map_span` takes it, and a span it would refuse gives the
/// opening's end twice.
fn unescaped_span(raw: &str, span: Range<usize>) -> (usize, usize) {
    let content = &raw[1..raw.len() - 1];
    if span.end > content.len() || span.start > span.end {
        return (1, 1);
    }
    let close = raw.len() - 1;
    let offset = |at: usize| {
        if content.is_char_boundary(at) {
            1 + at
        } else {
            close
        }
    };
    (offset(span.start), offset(span.end))
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

    /// JSON text of a value: strings with escapes and wide characters,
    /// objects whose keys repeat (and are sometimes written escaped),
    /// arrays, and whitespace of every kind between tokens.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let space = prop::sample::select(vec!["", " ", "\n  ", "\t", "\r\n    "]);
        let string = prop::sample::select(vec![
            "\"tok123456\"",
            "\"x\"",
            "\"\"",
            "\"é😀tok\"",
            "\"a\\\"b\\\\c\\/d\"",
            "\"\\u0041\\u00e9\\ud83d\\ude00zz\"",
            "\"https://u:pw@h/?k=v\"",
            "\"]}{[,:\"",
        ]);
        let scalar = prop_oneof![
            string.clone().prop_map(str::to_string),
            prop::sample::select(vec!["1", "-0.5e3", "true", "null"]).prop_map(str::to_string),
        ];
        let key = prop::sample::select(vec![
            "\"mcpServers\"",
            "\"s\"",
            "\"\\u0073\"",
            "\"env\"",
            "\"T\"",
            "\"args\"",
            "\"command\"",
            "\"url\"",
            "\"headers\"",
            "\"path\"",
        ]);
        nested(
            scalar.boxed(),
            key.prop_map(str::to_string).boxed(),
            space.prop_map(str::to_string).boxed(),
            5,
        )
    }

    /// Arrays and objects of `scalar`s keyed by `key`s, nested up to
    /// `depth`, with a `space` before and after each item, key and value.
    fn nested(
        scalar: proptest::strategy::BoxedStrategy<String>,
        key: proptest::strategy::BoxedStrategy<String>,
        space: proptest::strategy::BoxedStrategy<String>,
        depth: u32,
    ) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        scalar.prop_recursive(depth, 64, 6, move |inner| {
            let member = (space.clone(), key.clone(), space.clone(), inner.clone());
            prop_oneof![
                prop::collection::vec((space.clone(), inner, space.clone()), 0..5).prop_map(
                    |items| {
                        let items: Vec<String> = items
                            .into_iter()
                            .map(|(a, item, b)| format!("{a}{item}{b}"))
                            .collect();
                        format!("[{}]", items.join(","))
                    }
                ),
                prop::collection::vec(member, 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(a, key, b, value)| format!("{a}{key}{b}:{a}{value}{b}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest::proptest! {
        /// The shortcuts of `key_is` answer as decoding the key does.
        #[test]
        fn key_is_answers_as_decoding_does(
            inside in proptest::sample::select(vec![
                "", "a", "ab", "env", "\\u0065nv", "\\\\", "\\\"x", "\\ud83d\\ude00",
                "\\n", "é", "\\u00e9", "envx", "\\u0061b",
            ]),
            key in proptest::sample::select(vec!["", "a", "ab", "env", "\\", "\"x", "😀", "\n", "é", "envx"]),
        ) {
            let text = format!("\"{inside}\"");
            let decoded: Option<String> = serde_json::from_str(&text).ok();
            proptest::prop_assert_eq!(
                strict::key_is(&text, 0..text.len(), key),
                decoded.as_deref() == Some(key)
            );
        }

        /// The word-at-a-time scans find what byte-at-a-time ones do, on
        /// runs of the bytes they look for and of their neighbours.
        #[test]
        fn word_scans_find_what_byte_scans_do(
            runs in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        b' ', b'"', b'\\', b'!', b'#', b'[', b']', b'a', b'\n', b'\t', b'\r',
                        0, 0x80, 0xa2, 0xdc, 0xff,
                    ]),
                    1usize..12,
                ),
                0..40,
            ),
            from in 0usize..200,
        ) {
            let bytes: Vec<u8> = runs
                .iter()
                .flat_map(|&(byte, count)| std::iter::repeat_n(byte, count))
                .collect();
            for start in [0, from.min(bytes.len())] {
                let rest = &bytes[start..];
                proptest::prop_assert_eq!(
                    strict::quote_or_backslash(rest),
                    memchr::memchr2(b'"', b'\\', rest)
                );
                let spaces = rest
                    .iter()
                    .take_while(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
                    .count();
                proptest::prop_assert_eq!(strict::skip_ws(&bytes, start), start + spaces);
            }
        }
    }

    proptest::proptest! {
        /// The one-pass index of strict JSON locates every field as
        /// jsonc-parser's tree does.
        #[test]
        fn strict_json_index_locates_as_the_tree_does(
            text in json_text(),
            before in proptest::sample::select(vec!["", " ", "\u{feff}", "\n\t"]),
        ) {
            let text = format!("{before}{text} ");
            proptest::prop_assume!(
                serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')).is_ok()
            );
            let tree = ParsedText::parse(&text, Syntax::Json).unwrap();
            let strict = ParsedText::strict_json(&text).unwrap();
            // The one pass measures the depth the parse is guarded by.
            let shape = JsonShape::of(&text).unwrap();
            proptest::prop_assert_eq!(
                shape.depth(),
                crate::mechanics::document::nesting_depth(&text)
            );
            let shaped = shape.into_parsed().unwrap();
            let fields = [
                Field::Command,
                Field::Arg(0),
                Field::Arg(1),
                Field::Env("T".to_string()),
                Field::Url,
                Field::UrlPassword,
                Field::Header("T".to_string()),
            ];
            let servers: [&[&str]; 5] = [&[], &["s"], &["mcpServers", "s"], &["s", "s", "s"], &["env"]];
            for server in servers {
                for field in &fields {
                    for span in [0..0, 0..1, 1..3, 2..6, 0..9, 5..40] {
                        let expected = tree.locate(server, field, span.clone());
                        proptest::prop_assert_eq!(
                            strict.locate(server, field, span.clone()),
                            expected,
                            "{:?} {:?} {:?} {:?}", text, server, field, span
                        );
                        proptest::prop_assert_eq!(
                            shaped.locate(server, field, span.clone()),
                            expected,
                            "{:?} {:?} {:?} {:?}", text, server, field, span
                        );
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// On any text the one pass takes for JSON (valid or not: it runs
        /// before the parse that decides), the depth is the one
        /// `nesting_depth` measures, which guards the parse's stack.
        #[test]
        fn the_one_pass_measures_the_depth_nesting_depth_does(
            text in json_text(),
            edits in proptest::collection::vec(
                (0usize..200, proptest::sample::select(vec![
                    "[", "]", "{", "}", "\"", "\\", ",", ":", " ", "x", "1", "[[", "/",
                ])),
                0..4,
            ),
        ) {
            let mut text = text;
            for (at, piece) in edits {
                let at = text.floor_char_boundary(at.min(text.len()));
                text.insert_str(at, piece);
            }
            if let Some(shape) = JsonShape::of(&text) {
                proptest::prop_assert_eq!(
                    shape.depth(),
                    crate::mechanics::document::nesting_depth(&text),
                    "{:?}", text
                );
            }
        }
    }

    proptest::proptest! {
        /// Lines and columns counted on from the offset before, or found
        /// in the index when asked out of order, are the ones counted from
        /// the text's start for each offset.
        #[test]
        fn lines_counted_on_are_lines_counted_from_the_start(
            text in "[ab\n\r\té€\u{1F600}]{0,60}",
            offsets in proptest::collection::vec(0usize..70, 1..12),
        ) {
            let counter = LineCounter::default();
            for offset in offsets {
                let offset = text.floor_char_boundary(offset);
                let before = &text[..offset.min(text.len())];
                let expected = (
                    before.matches('\n').count() + 1,
                    before.rsplit('\n').next().unwrap_or_default().chars().count() + 1,
                );
                proptest::prop_assert_eq!(
                    counter.line_column(&text, offset),
                    expected,
                    "{:?} at {}", text, offset
                );
            }
        }
    }

    /// A JSON number of any form serde_json reads, or one it refuses
    /// (a leading zero, a lone sign or point, an empty exponent).
    fn number_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            12 => "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,6})?([eE][+-]?[0-9]{1,4})?",
            1 => proptest::sample::select(vec![
                "01", "-01", "00", "1.", "-", "+1", ".5", "1e", "1E+", "1.e5", "-.5", "1.5.2",
                "0x10", "1_0", "-0", "-0.0", "18446744073709551616", "-9223372036854775809",
            ])
            .prop_map(str::to_string),
        ]
    }

    /// A JSON string literal of any characters and escapes, well formed
    /// or not: control characters, every escape, `\u` escapes of any
    /// code (lone and paired surrogates among them), in either case.
    fn string_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            10 => "[a-zA-Z0-9 _:/.@$-]{1,12}",
            1 => proptest::sample::select(vec![
                "é", "😀", "\u{7f}", "\u{1}", "\t", "\n", "\u{1f}", "\\\"", "\\\\", "\\/", "\\b",
                "\\f", "\\n", "\\r", "\\t", "\\a", "\\x41", "\\'", "\\", "\\u12", "\\uZZZZ",
            ])
            .prop_map(str::to_string),
            3 => (0u32..=0xffff, any::<bool>()).prop_map(|(code, upper)| if upper {
                format!("\\u{code:04X}")
            } else {
                format!("\\u{code:04x}")
            }),
            2 => (0xd800u32..0xdc00, 0xdc00u32..0xe000).prop_map(|(high, low)| {
                format!("\\u{high:04x}\\u{low:04X}")
            }),
        ];
        proptest::collection::vec(piece, 0..6).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
    }

    /// JSON text of random strings and numbers, keys repeated, nested,
    /// with space of every kind and sometimes a byte-order mark before
    /// or garbage after.
    fn random_json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let space = prop_oneof![
            40 => proptest::sample::select(vec!["", " ", "\n  ", "\t", "\r\n"]),
            1 => proptest::sample::select(vec!["\u{c}", "\u{a0}", "\u{0}"]),
        ];
        let scalar = prop_oneof![
            3 => string_text(),
            2 => number_text(),
            1 => proptest::sample::select(vec!["true", "false", "null", "tru", "nul", "True", "nullx"])
                .prop_map(str::to_string),
        ];
        let key = prop_oneof![
            3 => proptest::sample::select(vec!["\"a\"", "\"b\"", "\"\\u0061\"", "\"env\"", "\"\""])
                .prop_map(str::to_string),
            1 => string_text(),
        ];
        let value = nested(
            scalar.boxed(),
            key.boxed(),
            space.prop_map(str::to_string).boxed(),
            6,
        );
        let before = proptest::sample::select(vec!["", "", "", " ", "\n", "\u{feff}"]);
        let after = proptest::sample::select(vec!["", "", "", "", " \n", "x", ",", "]", "}", "\0"]);
        (before, value, after).prop_map(|(before, value, after)| format!("{before}{value}{after}"))
    }

    /// What the one pass reads is what `Node::parse` reads, with the shape
    /// `JsonShape::of` finds; what `Node::parse` reads (serde_json's
    /// markers aside) the one pass reads too.
    fn assert_read_as_node_parse(text: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        let node = crate::secrets::node::Node::parse(text);
        match JsonShape::read(text) {
            Some((shape, read)) => {
                proptest::prop_assert_eq!(Some(&read), node.as_ref(), "{:?}", text);
                let of = JsonShape::of(text).unwrap();
                proptest::prop_assert_eq!(&shape.tree, &of.tree, "{:?}", text);
                proptest::prop_assert_eq!(shape.depth(), of.depth(), "{:?}", text);
                proptest::prop_assert!(shape.depth() <= crate::mechanics::document::MAX_DEPTH);
            }
            None => proptest::prop_assert!(
                node.is_none() || text.contains("$serde_json::private::"),
                "left to serde_json: {:?}",
                text
            ),
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(3000))]

        /// On random JSON (strings of every escape, numbers of every form,
        /// repeated keys, a byte-order mark, garbage after), the one pass
        /// reads what `Node::parse` reads, or leaves it.
        #[test]
        fn the_one_pass_reads_random_json_as_node_parse_does(text in random_json_text()) {
            assert_read_as_node_parse(&text)?;
        }

        /// On configs as clients write them, and on them broken by an edit.
        #[test]
        fn the_one_pass_reads_configs_as_node_parse_does(
            text in crate::secrets::node::tests::json_text(),
            edits in proptest::collection::vec(
                (0usize..300, proptest::sample::select(vec![
                    "", "[", "]", "{", "}", "\"", "\\", ",", ":", " ", "x", "0", "-", "\u{1}", "e",
                ])),
                0..2,
            ),
        ) {
            let mut text = text;
            for (at, piece) in edits {
                let at = text.floor_char_boundary(at.min(text.len()));
                text.insert_str(at, piece);
            }
            assert_read_as_node_parse(&text)?;
        }

        /// The word-at-a-time look for a string's end finds what a byte
        /// at a time finds.
        #[test]
        fn string_stop_finds_what_a_byte_loop_finds(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![
                    b' ', b'!', b'"', b'#', b'\\', b']', b'a', 0, 1, b'\n', 0x1f, 0x7f, 0x80, 0xa2, 0xff,
                ]),
                0..40,
            ),
        ) {
            proptest::prop_assert_eq!(
                strict::string_stop(&bytes),
                bytes.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < b' ')
            );
        }
    }

    #[test]
    fn the_one_pass_reads_as_deep_as_mcpenv_reads_and_no_deeper() {
        let max = crate::mechanics::document::MAX_DEPTH;
        std::thread::Builder::new()
            .stack_size(crate::mechanics::document::STACK_BYTES)
            .spawn(move || {
                for (depth, object) in
                    [(max, false), (max, true), (max + 1, false), (max + 1, true)]
                {
                    let (open, close) = if object {
                        ("{\"k\":".repeat(depth - 1) + "{", "}".repeat(depth))
                    } else {
                        ("[".repeat(depth), "]".repeat(depth))
                    };
                    let text = format!("{open}{close}");
                    match JsonShape::read(&text) {
                        Some((shape, node)) => {
                            assert!(depth <= max);
                            assert_eq!(shape.depth(), depth);
                            assert_eq!(Some(node), crate::secrets::node::Node::parse(&text));
                        }
                        None => assert!(depth > max, "{depth}"),
                    }
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn the_one_pass_reads_numbers_and_escapes_as_serde_json_does() {
        for text in [
            "1E5",
            "-0.5e-3",
            "[1e+2, 1E2, 0, -0, 12345678901234567890123, -1.0]",
            r#"{"a\u00e9\ud83d\ude00": "\b\f\n\r\t\/\\\"\u0000", "a": 1, "a": 2}"#,
            "\"\\uDBFF\\uDFFF\"",
        ] {
            let (_, node) = JsonShape::read(text).unwrap();
            assert_eq!(
                Some(node),
                crate::secrets::node::Node::parse(text),
                "{text}"
            );
        }
        for text in [
            "\u{feff}{}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "{\"$serde_json::private::Number\": \"1\"}",
            "[1,]",
            "{\"a\":1,}",
            "[1}",
            "{\"a\":1]",
            "\"a\u{1}\"",
            "",
            " ",
        ] {
            assert!(JsonShape::read(text).is_none(), "{text:?}");
        }
    }
}
