//! Format-preserving edits of strict JSON files.
//!
//! `~/.claude.json` grows to tens of megabytes of `history`, so a syntax tree
//! of the whole file (jsonc-parser's CST, or a `serde_json::Value`) costs
//! hundreds of megabytes and most of our time budget. Instead:
//!
//! 1. one `serde_json` pass validates the whole text strictly (with
//!    line:column for errors) and, through borrowed `RawValue`s, gives the
//!    byte span of every member value of the root object, and of the members
//!    of the root members named in `expand` (`projects`), without building
//!    anything; deeper objects are read the same way, lazily, and cached;
//! 2. key spans are found by stepping over the few bytes between values
//!    (whitespace, a comma, the key string, a colon): serde does not expose
//!    them, and no crate gives byte spans this cheaply;
//! 3. an edit is one splice of the bytes of a single member; every other byte
//!    of the file is kept as it was, and the changed object is re-validated.
//!
//! The one validating pass (about 35 ms for 25 MB here) is what an edit and
//! `list` still cost above their reads. serde_json stays for it: simd-json
//! unescapes strings in place (the bytes must stay as read, to be spliced,
//! so it would need a second copy of the file), and sonic-rs uses SIMD only
//! when built for a CPU with it (`-C target-cpu`), which a binary for every
//! user's machine is not; a hand-written skipper would have to match
//! serde_json's strictness byte for byte.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use serde_json::ser::{PrettyFormatter, Serializer};

mod skip;

/// A strict JSON text that is known to be valid and whose root is an object
/// (or that is empty, which counts as `{}`).
/// It can be handed between threads (an edit session keeps the one its
/// writer read, for the shield to learn from).
#[derive(Debug)]
pub struct JsonDocument {
    text: String,
    /// The root object's byte range; `None` for an empty or blank file.
    root: Option<Range<usize>>,
    /// Members of the objects read so far, by the offset of their `{`.
    members: Mutex<HashMap<usize, Arc<Vec<Member>>>>,
}

impl Clone for JsonDocument {
    fn clone(&self) -> Self {
        Self {
            text: self.text.clone(),
            root: self.root.clone(),
            members: Mutex::new(self.cache().clone()),
        }
    }
}

/// Why a text is not valid JSON, with the 1-based position Claude Code
/// 2.1.332 reports for it (see [`claude_position`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line} column {column}")]
pub struct SyntaxError {
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column of the error.
    pub column: usize,
    /// serde_json's description, without its position suffix.
    pub message: String,
}

/// A value on a path exists but is not of the kind the path needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{pointer}` is {found}, expected an object")]
pub struct ShapeError {
    /// JSON pointer (RFC 6901) of the offending value; empty for the root.
    pub pointer: String,
    /// What was found there, as "an array", "a string", ...
    pub found: &'static str,
}

/// One member of an object: where its key and its value are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Byte range of the key, quotes included.
    pub key_span: Range<usize>,
    /// Byte range of the value.
    pub value_span: Range<usize>,
}

/// One step into a JSON value: a member name or an array index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The member of an object with this name (the last, if duplicated).
    Key(&'a str),
    /// The element of an array at this index.
    Index(usize),
}

/// A single replacement of bytes in a document, ready to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// The bytes to replace.
    pub range: Range<usize>,
    /// What replaces them.
    pub replacement: String,
    /// The smallest value that contains the change; re-validated after the
    /// splice, which is enough because the rest of the text is unchanged.
    enclosing: Range<usize>,
}

impl Splice {
    /// The smallest value that contains the change: what
    /// [`JsonDocument::check`] validates again with it.
    pub fn enclosing(&self) -> &Range<usize> {
        &self.enclosing
    }
}

const BOM: &str = "\u{feff}";

/// Where a valid document's objects and their members are: what the one
/// validating pass found (and what lookups found since), without any of the
/// text itself. Kept by [`crate::mechanics::layout_cache`] so that the same
/// bytes read again need no pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The root object's byte range.
    pub root: Range<usize>,
    /// Objects whose members are known: each object's byte range and its
    /// members in file order, by the offset of the `{`.
    pub objects: Vec<(Range<usize>, Vec<Member>)>,
}

impl JsonDocument {
    /// Validates `text` as strict JSON (a UTF-8 BOM is allowed and kept) whose
    /// root is an object. An empty or blank text is an empty document.
    pub fn parse(text: String) -> Result<Self, DocumentError> {
        Self::parse_expanding(text, &[])
    }

    /// Like [`JsonDocument::parse`], and reads the members of the root
    /// members named in `expand` in the same pass, so looking into them
    /// later costs nothing (for `projects` of a large `~/.claude.json`).
    pub fn parse_expanding(text: String, expand: &[&str]) -> Result<Self, DocumentError> {
        let body_start = if text.starts_with(BOM) { BOM.len() } else { 0 };
        let body = &text[body_start..];
        if body.trim().is_empty() {
            return Ok(Self::new(text, None));
        }
        let start = scan::skip_ws(text.as_bytes(), body_start);
        if text.as_bytes()[start] != b'{' {
            validate(body).map_err(DocumentError::Syntax)?;
            return Err(DocumentError::Shape(ShapeError {
                pointer: String::new(),
                found: kind_name(text.as_bytes()[start]),
            }));
        }
        let origin = text.as_ptr() as usize;
        // The fast skipper decides most texts; whatever it does not accept
        // goes through serde_json, for the same verdict and its error.
        let slots = match skip::root_slots(body, origin, expand) {
            Some(slots) => slots,
            None => spans::root_slots(body, origin, expand)
                .map_err(|error| DocumentError::Syntax(syntax_error(body, error)))?,
        };
        let mut found = Vec::new();
        let (members, end) = spans::assemble(text.as_bytes(), start, slots, &mut found);
        found.push((start, members));
        let document = Self::new(text, Some(start..end));
        document.cache().extend(
            found
                .into_iter()
                .map(|(open, members)| (open, Arc::new(members))),
        );
        Ok(document)
    }

    /// The document of `text` laid out as `layout` says, without the
    /// validating pass: for bytes known to have parsed before (the layout
    /// cache found them by length and keyed digest). Every span is checked
    /// to lie inside the text, on character boundaries, in order, keys
    /// between quotes and objects between braces, so a wrong layout can
    /// never make a lookup slice outside the text; the text is given back
    /// when it does not fit.
    pub fn from_layout(text: String, layout: Layout) -> Result<Self, String> {
        if !layout_fits(&text, &layout) {
            return Err(text);
        }
        let document = Self::new(text, Some(layout.root));
        document.cache().extend(
            layout
                .objects
                .into_iter()
                .map(|(span, members)| (span.start, Arc::new(members))),
        );
        Ok(document)
    }

    /// The layout of this document: the root and every object whose members
    /// were read so far (whose range is known: the root and members'
    /// values). `None` for an empty document.
    pub fn layout(&self) -> Option<Layout> {
        let root = self.root.clone()?;
        let cache = self.cache();
        let mut ends: HashMap<usize, usize> = HashMap::new();
        ends.insert(root.start, root.end);
        for members in cache.values() {
            for member in members.iter() {
                ends.insert(member.value_span.start, member.value_span.end);
            }
        }
        let mut objects: Vec<(Range<usize>, Vec<Member>)> = cache
            .iter()
            .filter_map(|(open, members)| {
                let end = *ends.get(open)?;
                Some((*open..end, members.as_ref().clone()))
            })
            .collect();
        objects.sort_by_key(|(span, _)| span.start);
        Some(Layout { root, objects })
    }

    /// The layout of the text `splices` make of this document (planned on
    /// it and checked), worked out from this one without reading the new
    /// text whole: ranges after the change move by its size, the values
    /// holding it grow or shrink, and the members of the object the change
    /// adds to or removes from are read again from the changed bytes only.
    /// `None` when it cannot be told that way (several splices, a change
    /// across an object's edge): the next reading then makes the pass.
    pub fn layout_after(&self, splices: &[Splice]) -> Option<Layout> {
        let [splice] = splices else {
            return None;
        };
        layout::shifted(&self.text, &self.layout()?, splice)
    }

    /// [`JsonDocument::layout_after`] for a document made with only part
    /// of the layout of its text (one that holds only some bytes of it):
    /// `known`, the text's whole layout, gives the objects it knows, this
    /// document the objects its lookups found besides.
    pub fn layout_after_known(&self, known: &Layout, splices: &[Splice]) -> Option<Layout> {
        let [splice] = splices else {
            return None;
        };
        let mut layout = known.clone();
        for (span, members) in self.layout()?.objects {
            if !layout
                .objects
                .iter()
                .any(|(known, _)| known.start == span.start)
            {
                layout.objects.push((span, members));
            }
        }
        layout.objects.sort_by_key(|(span, _)| span.start);
        layout::shifted(&self.text, &layout, splice)
    }

    fn new(text: String, root: Option<Range<usize>>) -> Self {
        Self {
            text,
            root,
            members: Mutex::default(),
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Arc<Vec<Member>>>> {
        // The cache only ever gains complete entries: a poisoned lock still
        // holds a usable one.
        self.members.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The whole text, byte for byte as read (or as edited).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Gives the text back.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Whether the file held nothing but whitespace.
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// The members of the object at `span`, in file order (duplicates kept).
    pub fn members(&self, span: &Range<usize>) -> Arc<Vec<Member>> {
        if let Some(members) = self.cache().get(&span.start) {
            return Arc::clone(members);
        }
        let members = Arc::new(spans::object_members(&self.text, span.clone()));
        self.cache().insert(span.start, Arc::clone(&members));
        members
    }

    /// The decoded key of a member.
    pub fn key<'a>(&'a self, member: &Member) -> Cow<'a, str> {
        decode_string(&self.text[member.key_span.clone()])
    }

    /// The value at `span` as a tree (meant for small subtrees: one entry);
    /// `Null` when it is nested deeper than [`MAX_DEPTH`] (use
    /// [`JsonDocument::try_value_at`] to tell).
    pub fn value_at(&self, span: &Range<usize>) -> Value {
        self.try_value_at(span).unwrap_or(Value::Null)
    }

    /// The value at `span` as a tree, numbers as written; an error only
    /// when it is nested deeper than [`MAX_DEPTH`].
    pub fn try_value_at(&self, span: &Range<usize>) -> Result<Value, TooDeep> {
        // The span was validated with the whole document, so only the depth
        // can stop it; `Null` for any other failure keeps this total.
        match parse_value(&self.text[span.clone()]) {
            Ok(value) => Ok(value),
            Err(ValueError::TooDeep(error)) => Err(error),
            Err(ValueError::Syntax(_)) => Ok(Value::Null),
        }
    }

    /// The raw text of the value at `span`.
    pub fn raw(&self, span: &Range<usize>) -> &str {
        &self.text[span.clone()]
    }

    /// Finds the object at `path` (a list of member names from the root).
    /// `Ok(None)` when some member on the way is missing; an error when a
    /// value on the way exists but is not an object. Duplicate keys resolve
    /// to the last one, as `JSON.parse` does.
    pub fn object_at(&self, path: &[&str]) -> Result<Option<Range<usize>>, ShapeError> {
        match self.walk(path)? {
            Walk::Found(span) => Ok(Some(span)),
            Walk::Missing { .. } | Walk::Empty => Ok(None),
        }
    }

    /// The span of member `key` in the object at `object`, the last one when
    /// the key is duplicated.
    pub fn find_member(&self, object: &Range<usize>, key: &str) -> Option<Member> {
        self.members(object)
            .iter()
            .rev()
            .find(|member| self.key(member) == key)
            .cloned()
    }

    /// The spans of the elements of the array at `span`, in order.
    pub fn elements(&self, span: &Range<usize>) -> Vec<Range<usize>> {
        spans::array_elements(&self.text, span.clone())
    }

    /// The span of the value at `path` below the value at `from`, stepping
    /// through object members and array elements; `None` when a step is
    /// missing or does not fit (an index into an object, say).
    pub fn value_at_path(&self, from: &Range<usize>, path: &[Step<'_>]) -> Option<Range<usize>> {
        let mut current = from.clone();
        for step in path {
            let first = *self.text.as_bytes().get(current.start)?;
            current = match (step, first) {
                (Step::Key(key), b'{') => self.find_member(&current, key)?.value_span,
                (Step::Index(index), b'[') => self.elements(&current).get(*index)?.clone(),
                _ => return None,
            };
        }
        Some(current)
    }

    fn walk(&self, path: &[&str]) -> Result<Walk, ShapeError> {
        let Some(mut current) = self.root.clone() else {
            return Ok(Walk::Empty);
        };
        let bytes = self.text.as_bytes();
        for (depth, segment) in path.iter().enumerate() {
            let Some(member) = self.find_member(&current, segment) else {
                return Ok(Walk::Missing {
                    deepest: current,
                    depth,
                });
            };
            let first = bytes[member.value_span.start];
            if first != b'{' {
                return Err(ShapeError {
                    pointer: pointer(&path[..=depth]),
                    found: kind_name(first),
                });
            }
            current = member.value_span;
        }
        Ok(Walk::Found(current))
    }

    /// Plans setting `object_path/key` to `value`: replaces the member's value
    /// if it exists, else inserts it as the last member. Missing objects on
    /// the way are created as `skeleton(path_so_far)` (members to start with,
    /// usually none) and appended as the last member of their parent.
    pub fn plan_set(
        &self,
        object_path: &[&str],
        key: &str,
        value: &Value,
        skeleton: &dyn Fn(&[&str]) -> serde_json::Map<String, Value>,
    ) -> Result<Splice, ShapeError> {
        match self.walk(object_path)? {
            Walk::Found(object) => match self.find_member(&object, key) {
                Some(member) => Ok(self.plan_replace(&member.value_span, value)),
                None => Ok(self.plan_insert(&object, key, value)),
            },
            Walk::Missing { deepest, depth } => {
                let nested = nest(object_path, depth, key, value, skeleton);
                Ok(self.plan_insert(&deepest, object_path[depth], &nested))
            }
            Walk::Empty => {
                let nested = nest(object_path, 0, key, value, skeleton);
                let mut root = serde_json::Map::new();
                match object_path.first() {
                    Some(first) => root.insert((*first).to_string(), nested),
                    None => root.insert(key.to_string(), value.clone()),
                };
                let mut text = String::new();
                if self.text.starts_with(BOM) {
                    text.push_str(BOM);
                }
                text.push_str(&pretty(&Value::Object(root), "  ", ""));
                Ok(Splice {
                    range: 0..self.text.len(),
                    enclosing: 0..text.len(),
                    replacement: text,
                })
            }
        }
    }

    /// Plans removing every member named `key` from the object at
    /// `object_path`; `Ok(None)` when there is no such member. Containers are
    /// kept, even when they become empty (`{}`), as Claude Code does.
    pub fn plan_remove(
        &self,
        object_path: &[&str],
        key: &str,
    ) -> Result<Option<Splice>, ShapeError> {
        let Walk::Found(object) = self.walk(object_path)? else {
            return Ok(None);
        };
        let members = self.members(&object);
        let matching: Vec<usize> = (0..members.len())
            .filter(|&i| self.key(&members[i]) == key)
            .collect();
        if matching.is_empty() {
            return Ok(None);
        }
        let keep: Vec<&Member> = members
            .iter()
            .enumerate()
            .filter(|(i, _)| !matching.contains(i))
            .map(|(_, member)| member)
            .collect();
        let (range, replacement) = if keep.is_empty() {
            (object.start + 1..object.end - 1, String::new())
        } else if matching.len() == 1 {
            let index = matching[0];
            let range = if index == 0 {
                members[0].key_span.start..members[1].key_span.start
            } else {
                members[index - 1].value_span.end..members[index].value_span.end
            };
            (range, String::new())
        } else {
            // Several members with one name: rebuild the member list from the
            // kept members' own bytes and the file's own separators.
            let inner = object.start + 1..object.end - 1;
            let lead = &self.text[inner.start..members[0].key_span.start];
            let trail = &self.text[members[members.len() - 1].value_span.end..inner.end];
            let separator = format!(",{lead}");
            let body: Vec<&str> = keep
                .iter()
                .map(|member| &self.text[member.key_span.start..member.value_span.end])
                .collect();
            (inner, format!("{lead}{}{trail}", body.join(&separator)))
        };
        Ok(Some(Splice {
            range,
            replacement,
            enclosing: object,
        }))
    }

    /// Plans replacing the value at `span` with `value`, indented to match.
    pub fn plan_replace(&self, span: &Range<usize>, value: &Value) -> Splice {
        let style = self.style();
        let indent = line_indent(&self.text, span.start);
        let replacement = match &style {
            Style::Pretty(unit) => pretty(value, unit, indent),
            Style::Inline { .. } => compact(value),
        };
        Splice {
            range: span.clone(),
            replacement,
            enclosing: span.clone(),
        }
    }

    fn plan_insert(&self, object: &Range<usize>, key: &str, value: &Value) -> Splice {
        let text = &self.text;
        let members = self.members(object);
        let encoded_key = compact(&Value::String(key.to_string()));
        let Some(last) = members.last() else {
            // `{}` or `{ }`: lay the object out anew around the one member.
            let replacement = match self.style() {
                Style::Pretty(unit) => {
                    let base = line_indent(text, object.start);
                    let inner = format!("{base}{unit}");
                    format!(
                        "{{\n{inner}{encoded_key}: {}\n{base}}}",
                        pretty(value, &unit, &inner)
                    )
                }
                Style::Inline { key_separator } => {
                    format!("{{{encoded_key}{key_separator}{}}}", compact(value))
                }
            };
            return Splice {
                range: object.clone(),
                replacement,
                enclosing: object.clone(),
            };
        };
        let first = &members[0];
        let lead = &text[object.start + 1..first.key_span.start];
        let key_separator = &text[first.key_span.end..first.value_span.start];
        let replacement = if let Some(newline) = lead.rfind('\n') {
            let indent = &lead[newline + 1..];
            let unit = match self.style() {
                Style::Pretty(unit) => unit,
                Style::Inline { .. } => "  ".to_string(),
            };
            format!(
                ",{lead}{encoded_key}{key_separator}{}",
                pretty(value, &unit, indent)
            )
        } else {
            let separator = match members.get(1) {
                Some(second) => &text[first.value_span.end..second.key_span.start],
                None => ", ",
            };
            let separator = if members.len() == 1 {
                // One inline member: follow its spacing, `{"a":1}` → `,`.
                if lead.is_empty() { "," } else { separator }
            } else {
                separator
            };
            format!("{separator}{encoded_key}{key_separator}{}", compact(value))
        };
        Splice {
            range: last.value_span.end..last.value_span.end,
            replacement,
            enclosing: object.clone(),
        }
    }

    /// Applies a splice planned on this document and re-validates the value
    /// it changed, so an edit can never produce invalid JSON.
    pub fn apply(&self, splice: &Splice) -> Result<Self, DocumentError> {
        self.apply_all(std::slice::from_ref(splice))
    }

    /// Applies several non-overlapping splices planned on this document.
    pub fn apply_all(&self, splices: &[Splice]) -> Result<Self, DocumentError> {
        self.check(splices)?;
        let text = self.spliced(splices).concat();
        if self.root.is_none() {
            return Self::parse(text);
        }
        let grown: isize = splices
            .iter()
            .map(|splice| splice.replacement.len() as isize - splice.range.len() as isize)
            .sum();
        let root = self
            .root
            .clone()
            .map(|root| root.start..root.end.saturating_add_signed(grown));
        Ok(Self::new(text, root))
    }

    /// Checks that `splices` keep the document valid: each changed value
    /// must still parse. The rest of the text is untouched, and JSON's
    /// grammar is context-free, so that is enough. Splices must not overlap.
    pub fn check(&self, splices: &[Splice]) -> Result<(), DocumentError> {
        let mut sorted: Vec<&Splice> = splices.iter().collect();
        sorted.sort_by_key(|splice| splice.range.start);
        if sorted
            .windows(2)
            .any(|pair| pair[0].enclosing.end > pair[1].enclosing.start)
        {
            return Err(DocumentError::Overlap);
        }
        for splice in sorted {
            if self.root.is_none() {
                Self::parse(splice.replacement.clone())?;
                continue;
            }
            let enclosing = &splice.enclosing;
            let changed = [
                &self.text[enclosing.start..splice.range.start],
                &splice.replacement,
                &self.text[splice.range.end..enclosing.end],
            ]
            .concat();
            validate(&changed).map_err(DocumentError::Syntax)?;
        }
        Ok(())
    }

    /// The edited text as pieces (unchanged text and replacements, in
    /// order), to be written out without building it whole in memory.
    pub fn spliced<'a>(&'a self, splices: &'a [Splice]) -> Vec<&'a str> {
        let mut sorted: Vec<&Splice> = splices.iter().collect();
        sorted.sort_by_key(|splice| splice.range.start);
        let mut pieces = Vec::with_capacity(sorted.len() * 2 + 1);
        let mut at = 0;
        for splice in sorted {
            pieces.push(&self.text[at..splice.range.start]);
            pieces.push(splice.replacement.as_str());
            at = splice.range.end;
        }
        pieces.push(&self.text[at..]);
        pieces
    }

    /// How new members should be laid out: the file's own indent unit, or
    /// inline when the file is written on one line.
    fn style(&self) -> Style {
        let Some(root) = &self.root else {
            return Style::Pretty("  ".to_string());
        };
        let members = self.members(root);
        let Some(first) = members.first() else {
            return Style::Pretty("  ".to_string());
        };
        let lead = &self.text[root.start + 1..first.key_span.start];
        match lead.rfind('\n') {
            Some(newline) if newline + 1 < lead.len() => {
                Style::Pretty(lead[newline + 1..].to_string())
            }
            Some(_) => Style::Pretty("  ".to_string()),
            None => Style::Inline {
                key_separator: self.text[first.key_span.end..first.value_span.start].to_string(),
            },
        }
    }
}

/// Why a text could not be used as a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON at all.
    #[error(transparent)]
    Syntax(SyntaxError),
    /// JSON, but a value on the way is not an object.
    #[error(transparent)]
    Shape(ShapeError),
    /// Two planned changes touch the same value (a bug in the caller).
    #[error("two changes overlap")]
    Overlap,
}

enum Walk {
    Found(Range<usize>),
    Missing { deepest: Range<usize>, depth: usize },
    Empty,
}

enum Style {
    Pretty(String),
    Inline { key_separator: String },
}

/// Builds the value to insert for `path[depth]` when `path[depth..]` is
/// missing: skeletons nested around `{key: value}`.
fn nest(
    path: &[&str],
    depth: usize,
    key: &str,
    value: &Value,
    skeleton: &dyn Fn(&[&str]) -> serde_json::Map<String, Value>,
) -> Value {
    let mut inner = skeleton(path);
    inner.insert(key.to_string(), value.clone());
    let mut nested = Value::Object(inner);
    for level in (depth + 1..path.len()).rev() {
        let mut outer = skeleton(&path[..level]);
        outer.insert(path[level].to_string(), nested);
        nested = Value::Object(outer);
    }
    nested
}

/// Checks that `text` is strict JSON. serde_json skips a `RawValue` with a
/// loop, not recursion, so any depth is checked without using the stack.
fn validate(text: &str) -> Result<(), SyntaxError> {
    serde_json::from_str::<&serde_json::value::RawValue>(text)
        .map(|_| ())
        .map_err(|error| syntax_error(text, error))
}

/// The deepest nesting of arrays and objects mcpenv reads into a tree.
/// Claude Code (V8's `JSON.parse`) reads deeper; past this, the tree's own
/// recursive code (drop, clone, printing) would need more stack than the
/// [`STACK_BYTES`] mcpenv's threads get, so mcpenv fails with an error.
pub const MAX_DEPTH: usize = 20_000;

/// Stack for threads that handle values up to [`MAX_DEPTH`] deep: about
/// 2.5 KiB a level in an unoptimised build, so 20,000 levels fit five times
/// over. Only the pages used are ever committed.
pub const STACK_BYTES: usize = 256 << 20;

/// A value is nested deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("nested more than {} levels deep", MAX_DEPTH)]
pub struct TooDeep;

/// Why [`parse_value`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    /// Nested deeper than mcpenv reads.
    #[error(transparent)]
    TooDeep(TooDeep),
    /// Not JSON.
    #[error(transparent)]
    Syntax(#[from] serde_json::Error),
}

/// How deep arrays and objects nest in `text` (any text: brackets inside
/// strings do not count), stopping early once past [`MAX_DEPTH`].
pub fn nesting_depth(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(found) = memchr::memchr3(b'"', b'[', b'{', &bytes[at..]).map(|found| at + found)
    {
        // Closing brackets between here and the next opener.
        depth = depth.saturating_sub(memchr::memchr2_iter(b']', b'}', &bytes[at..found]).count());
        if bytes[found] == b'"' {
            at = scan::skip_string(bytes, found).max(found + 1);
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
        if deepest > MAX_DEPTH {
            break;
        }
        at = found + 1;
    }
    deepest
}

/// Parses `text` as one JSON value, however deep up to [`MAX_DEPTH`]
/// (serde_json alone stops at 128), numbers kept as written. Deeper is
/// [`ValueError::TooDeep`], found before anything is built. The value must be
/// handled on a thread with [`STACK_BYTES`] of stack.
pub fn parse_value(text: &str) -> Result<Value, ValueError> {
    parse_value_measured(text).map(|(value, _)| value)
}

/// [`parse_value`], with the [`nesting_depth`] of `text` it measured first
/// (a caller that needs it too does not measure it again).
pub fn parse_value_measured(text: &str) -> Result<(Value, usize), ValueError> {
    let depth = nesting_depth(text);
    parse_value_of_depth(text, depth).map(|value| (value, depth))
}

/// [`parse_value`] of `text` whose [`nesting_depth`] is `depth`, measured
/// already (by a pass that found it on its way).
pub fn parse_value_of_depth(text: &str, depth: usize) -> Result<Value, ValueError> {
    if depth > MAX_DEPTH {
        return Err(ValueError::TooDeep(TooDeep));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The last root member named `key` of `text`, which must be valid JSON
/// (one a writer just produced and checked): found by stepping over the
/// values without validating them again, at memchr speed, where a parse of
/// a 25 MB `~/.claude.json` takes tens of milliseconds. `None` when the
/// root is no object or has no such member.
pub fn root_member_of_valid(text: &str, key: &str) -> Option<Member> {
    let bytes = text.as_bytes();
    let start = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let mut at = scan::skip_ws(bytes, start);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let mut found = None;
    loop {
        at = scan::skip_ws(bytes, at);
        match bytes.get(at)? {
            b'}' => return found,
            b',' => at = scan::skip_ws(bytes, at + 1),
            _ => {}
        }
        if bytes.get(at) != Some(&b'"') {
            return found;
        }
        let key_span = at..scan::skip_string(bytes, at);
        let colon = scan::skip_ws(bytes, key_span.end);
        let value_start = scan::skip_ws(bytes, colon + 1);
        if value_start >= bytes.len() {
            return found;
        }
        let value_span = value_start..scan::skip_value(bytes, value_start);
        at = value_span.end;
        if decode_string(&text[key_span.clone()]) == key {
            found = Some(Member {
                key_span,
                value_span,
            });
        }
    }
}

/// The error to show for `text`, which failed to parse with `error`.
/// Skipping parsers give terse messages ("key must be a string" for a
/// trailing comma); on the error path, a full parse gives a better one,
/// unless it only stopped at serde_json's nesting limit.
fn syntax_error(text: &str, error: serde_json::Error) -> SyntaxError {
    let error = serde_json::from_str::<Value>(text)
        .err()
        .filter(|full| !full.to_string().starts_with("recursion limit exceeded"))
        .unwrap_or(error);
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_string(),
        None => message,
    };
    let (line, column) = claude_position(text, &error);
    SyntaxError {
        line,
        column,
        message,
    }
}

/// Where Claude Code 2.1.332 says `text` stops being JSON, for the error
/// serde_json gave: at the start of the token the error is in (a string
/// from its opening quote, a word such as `tru` or `1.` from its first
/// character, a number's digits after a leading `0` as a token of their
/// own), at the end for an early end outside any token, with columns in
/// UTF-16 units, 1-based. serde_json instead counts bytes and points at
/// the byte where it gave up (`0` for the end after a newline). Checked
/// against the real binary by `tests/cli/claude.rs`.
fn claude_position(text: &str, error: &serde_json::Error) -> (usize, usize) {
    let bytes = text.as_bytes();
    let detected = if error.classify() == serde_json::error::Category::Eof {
        bytes.len()
    } else {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(error.line().saturating_sub(1))
            .map(str::len)
            .sum();
        (line_start + error.column().saturating_sub(1)).min(bytes.len())
    };
    let is_word =
        |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'+' | b'-' | b'.');
    // `01`: JSON's `0` is a whole number, so a digit after it (or after
    // `-0`) starts a token of its own.
    let after_zero = |start: usize, at: usize| {
        let zero = start + usize::from(bytes[start] == b'-');
        at == zero + 1 && bytes[zero] == b'0' && bytes.get(at).is_some_and(u8::is_ascii_digit)
    };
    let mut string_start = None;
    let mut word_start = None;
    let mut at = 0;
    while at < detected {
        let byte = bytes[at];
        if string_start.is_some() {
            match byte {
                b'\\' => at += 1,
                b'"' => string_start = None,
                _ => {}
            }
        } else if byte == b'"' {
            string_start = Some(at);
            word_start = None;
        } else if is_word(byte) {
            let start = *word_start.get_or_insert(at);
            if after_zero(start, at) {
                word_start = Some(at);
            }
        } else {
            word_start = None;
        }
        at += 1;
    }
    if word_start.is_some_and(|start| after_zero(start, detected)) {
        word_start = Some(detected);
    }
    let start = text.floor_char_boundary(string_start.or(word_start).unwrap_or(detected));
    let line_start = text[..start].rfind('\n').map_or(0, |newline| newline + 1);
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].encode_utf16().count() + 1;
    (line, column)
}

/// `value` as 2-space (or `unit`) pretty JSON, every line after the first
/// indented by `indent`: the layout of JavaScript's `JSON.stringify`.
pub fn pretty(value: &Value, unit: &str, indent: &str) -> String {
    let mut out = Vec::new();
    let mut serializer =
        Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(unit.as_bytes()));
    serde::Serialize::serialize(value, &mut serializer)
        .expect("serializing a Value into memory cannot fail");
    let text = String::from_utf8(out).expect("serde_json writes UTF-8");
    if indent.is_empty() {
        text
    } else {
        text.replace('\n', &format!("\n{indent}"))
    }
}

fn compact(value: &Value) -> String {
    value.to_string()
}

fn line_indent(text: &str, position: usize) -> &str {
    let line_start = text[..position]
        .rfind('\n')
        .map_or(0, |newline| newline + 1);
    let line = &text[line_start..position];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..width]
}

/// The decoded key of the raw key `raw` (quotes included) read from a text
/// not validated with it; `None` when it is not a JSON string.
pub fn decode_key(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains(['\\', '"']) || inner.bytes().any(|byte| byte < 0x20) {
        serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

fn decode_string(raw: &str) -> Cow<'_, str> {
    let inner = &raw[1..raw.len() - 1];
    if inner.contains('\\') {
        // Validated already; serde_json does the unescaping.
        Cow::Owned(serde_json::from_str::<String>(raw).unwrap_or_else(|_| inner.to_string()))
    } else {
        Cow::Borrowed(inner)
    }
}

fn kind_name(first_byte: u8) -> &'static str {
    match first_byte {
        b'{' => "an object",
        b'[' => "an array",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'n' => "null",
        _ => "a number",
    }
}

/// RFC 6901 pointer of a path of member names.
pub fn pointer(path: &[&str]) -> String {
    path.iter()
        .map(|segment| format!("/{}", segment.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// Span scanning over text that serde_json has already validated; written by
/// hand because it only has to skip, never to check.
mod scan {

    pub fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
        while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b'\n' | b'\r') {
            at += 1;
        }
        at
    }

    /// `at` is on the opening quote; returns the index after the closing one.
    pub fn skip_string(bytes: &[u8], at: usize) -> usize {
        let mut at = at + 1;
        loop {
            match memchr::memchr2(b'"', b'\\', &bytes[at..]) {
                Some(found) if bytes[at + found] == b'\\' => at += found + 2,
                Some(found) => return at + found + 1,
                None => return bytes.len(),
            }
        }
    }

    /// `at` is on the first byte of a value; returns the index after it.
    pub fn skip_value(bytes: &[u8], at: usize) -> usize {
        match bytes[at] {
            b'"' => skip_string(bytes, at),
            open @ (b'{' | b'[') => {
                // Brackets nest properly in valid JSON, so counting only this
                // kind finds the matching close.
                let close = if open == b'{' { b'}' } else { b']' };
                let mut depth = 0usize;
                let mut at = at;
                while let Some(found) = memchr::memchr3(b'"', open, close, &bytes[at..]) {
                    at += found;
                    match bytes[at] {
                        b'"' => {
                            at = skip_string(bytes, at);
                            continue;
                        }
                        byte if byte == open => depth += 1,
                        _ => {
                            depth -= 1;
                            if depth == 0 {
                                return at + 1;
                            }
                        }
                    }
                    at += 1;
                }
                bytes.len()
            }
            _ => {
                let mut at = at;
                while at < bytes.len()
                    && !matches!(bytes[at], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    at += 1;
                }
                at
            }
        }
    }
}

/// Whether every span of `layout` can be used on `text` (see
/// [`JsonDocument::from_layout`]).
fn layout_fits(text: &str, layout: &Layout) -> bool {
    let bytes = text.as_bytes();
    let usable = |span: &Range<usize>| {
        span.start < span.end
            && span.end <= bytes.len()
            && text.is_char_boundary(span.start)
            && text.is_char_boundary(span.end)
    };
    let object = |span: &Range<usize>| {
        usable(span) && bytes[span.start] == b'{' && bytes[span.end - 1] == b'}'
    };
    object(&layout.root)
        && layout.objects.iter().all(|(span, members)| {
            let mut at = span.start + 1;
            object(span)
                && members.iter().all(|member| {
                    let key = &member.key_span;
                    let fits = key.start >= at
                        && usable(key)
                        && key.len() >= 2
                        && bytes[key.start] == b'"'
                        && bytes[key.end - 1] == b'"'
                        && member.value_span.start > key.end
                        && usable(&member.value_span)
                        && member.value_span.end < span.end;
                    at = member.value_span.end;
                    fits
                })
        })
}

/// How a layout follows an edit (see [`JsonDocument::layout_after`]).
mod layout {
    use std::ops::Range;

    use super::{Layout, Member, Splice, scan};

    /// Where a member stands against the changed range.
    enum Place {
        Before,
        After,
        /// Its value holds the change.
        Holds,
        /// Replaced with the range.
        Inside,
    }

    fn place(member: &Member, changed: &Range<usize>) -> Option<Place> {
        let (start, end) = (changed.start, changed.end);
        if member.value_span.end <= start {
            Some(Place::Before)
        } else if member.key_span.start >= end {
            Some(Place::After)
        } else if member.value_span.start <= start && end <= member.value_span.end {
            Some(Place::Holds)
        } else if start < end && start <= member.key_span.start && member.value_span.end <= end {
            Some(Place::Inside)
        } else {
            None
        }
    }

    /// The layout of `text` with `splice` applied, from `layout` of `text`.
    pub fn shifted(text: &str, layout: &Layout, splice: &Splice) -> Option<Layout> {
        let changed = splice.range.clone();
        let (start, end) = (changed.start, changed.end);
        let grown = splice.replacement.len() as isize - changed.len() as isize;
        let moved = |at: usize| at.checked_add_signed(grown);
        let move_span = |span: &Range<usize>| Some(moved(span.start)?..moved(span.end)?);
        let move_member = |member: &Member| {
            Some(Member {
                key_span: move_span(&member.key_span)?,
                value_span: move_span(&member.value_span)?,
            })
        };
        let map_object = |span: &Range<usize>| -> Option<Option<Range<usize>>> {
            if span.end <= start {
                Some(Some(span.clone()))
            } else if span.start >= end {
                Some(Some(move_span(span)?))
            } else if start <= span.start && span.end <= end {
                Some(None)
            } else if span.start < start && end < span.end {
                Some(Some(span.start..moved(span.end)?))
            } else {
                None
            }
        };
        let root = map_object(&layout.root)??;
        let mut objects = Vec::with_capacity(layout.objects.len());
        for (span, members) in &layout.objects {
            let Some(new_span) = map_object(span)? else {
                continue;
            };
            if span.end <= start || span.start >= end {
                let members = if span.start >= end {
                    members
                        .iter()
                        .map(move_member)
                        .collect::<Option<Vec<_>>>()?
                } else {
                    members.clone()
                };
                objects.push((new_span, members));
                continue;
            }
            // The change is inside this object: between its members, or
            // inside one member's value.
            let mut before = Vec::new();
            let mut after = Vec::new();
            let mut holds = false;
            for member in members {
                match place(member, &changed)? {
                    Place::Before => before.push(member.clone()),
                    Place::After => after.push(move_member(member)?),
                    Place::Holds => {
                        holds = true;
                        after.push(Member {
                            key_span: member.key_span.clone(),
                            value_span: member.value_span.start..moved(member.value_span.end)?,
                        });
                    }
                    Place::Inside => {}
                }
            }
            if !holds {
                // Read the members between the last one before the change
                // and the first one after it anew, from those bytes only.
                let from = before.last().map_or(span.start + 1, |m| m.value_span.end);
                let to = after.first().map_or(new_span.end - 1, |m| m.key_span.start);
                let gap = [
                    text.get(from..start)?,
                    splice.replacement.as_str(),
                    text.get(end..moved_back(to, grown)?)?,
                ]
                .concat();
                before.extend(members_in(gap.as_bytes(), from)?);
            }
            before.extend(after);
            objects.push((new_span, before));
        }
        Some(Layout { root, objects })
    }

    fn moved_back(at: usize, grown: isize) -> Option<usize> {
        at.checked_add_signed(grown.checked_neg()?)
    }

    /// The members laid out in `gap` (the bytes between two members of a
    /// valid object, or between a brace and a member), offset by `from`.
    fn members_in(gap: &[u8], from: usize) -> Option<Vec<Member>> {
        let mut members = Vec::new();
        let mut at = scan::skip_ws(gap, 0);
        loop {
            if gap.get(at) == Some(&b',') {
                at = scan::skip_ws(gap, at + 1);
            }
            match gap.get(at) {
                None => return Some(members),
                Some(b'"') => {}
                Some(_) => return None,
            }
            let key_end = scan::skip_string(gap, at);
            let colon = scan::skip_ws(gap, key_end);
            if gap.get(colon) != Some(&b':') {
                return None;
            }
            let value_start = scan::skip_ws(gap, colon + 1);
            if value_start >= gap.len() {
                return None;
            }
            let value_end = scan::skip_value(gap, value_start);
            members.push(Member {
                key_span: from + at..from + key_end,
                value_span: from + value_start..from + value_end,
            });
            at = scan::skip_ws(gap, value_end);
        }
    }
}

/// One serde pass over an object: the byte spans of its member values.
mod spans {
    use std::fmt;
    use std::ops::Range;

    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::value::RawValue;

    use super::{Member, scan};

    /// What the pass learnt about one member's value.
    #[derive(Debug, PartialEq, Eq)]
    pub enum Slot {
        /// Its span.
        Raw(Range<usize>),
        /// An expanded object: the spans of its members' values.
        Object(Vec<Self>),
        /// An expanded member whose value is not an object.
        Other,
    }

    /// Where `raw` lies in the text that starts at address `origin`; serde
    /// borrows it from that text, so the difference is its offset.
    fn span(raw: &RawValue, origin: usize) -> Range<usize> {
        let start = raw.get().as_ptr() as usize - origin;
        start..start + raw.get().len()
    }

    struct Members<'a> {
        origin: usize,
        expand: &'a [&'a str],
    }

    impl<'de> DeserializeSeed<'de> for Members<'_> {
        type Value = Vec<Slot>;

        fn deserialize<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Members<'_> {
        type Value = Vec<Slot>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            self.collect(None, map)
        }
    }

    impl Members<'_> {
        /// The slots of the members of `map`, whose first key may have been
        /// read already.
        fn collect<'de, A: MapAccess<'de>>(
            self,
            mut first: Option<String>,
            mut map: A,
        ) -> Result<Vec<Slot>, A::Error> {
            let mut slots = Vec::new();
            while let Some(key) = match first.take() {
                Some(key) => Some(key),
                None => map.next_key::<String>()?,
            } {
                if self.expand.contains(&key.as_str()) {
                    slots.push(map.next_value_seed(Expanded {
                        origin: self.origin,
                    })?);
                } else {
                    let raw: &'de RawValue = map.next_value()?;
                    slots.push(Slot::Raw(span(raw, self.origin)));
                }
            }
            Ok(slots)
        }
    }

    struct Expanded {
        origin: usize,
    }

    /// The key serde_json (with `arbitrary_precision`) wraps numbers in.
    pub const NUMBER_TOKEN: &str = "$serde_json::private::Number";

    impl<'de> DeserializeSeed<'de> for Expanded {
        type Value = Slot;

        fn deserialize<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Expanded {
        type Value = Slot;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("any JSON value")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let Some(key) = map.next_key::<String>()? else {
                return Ok(Slot::Object(Vec::new()));
            };
            if key == NUMBER_TOKEN {
                // serde_json's `arbitrary_precision` hands a number to
                // `deserialize_any` as a map with this one key. (An object
                // really keyed so is merely not expanded: read lazily.)
                map.next_value::<IgnoredAny>()?;
                return Ok(Slot::Other);
            }
            let members = Members {
                origin: self.origin,
                expand: &[],
            };
            members.collect(Some(key), map).map(Slot::Object)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // Raw values are skipped without recursion, at any depth.
            while seq.next_element::<&'de RawValue>()?.is_some() {}
            Ok(Slot::Other)
        }

        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }

        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Slot::Other)
        }
    }

    /// Validates `body` (the whole document, BOM excluded; its root is known
    /// to start with `{`) and returns its root members' slots.
    pub fn root_slots(body: &str, origin: usize, expand: &[&str]) -> serde_json::Result<Vec<Slot>> {
        let mut deserializer = serde_json::Deserializer::from_str(body);
        let slots = Members { origin, expand }.deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(slots)
    }

    struct Elements {
        origin: usize,
    }

    impl<'de> Visitor<'de> for Elements {
        type Value = Vec<Range<usize>>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a JSON array")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut elements = Vec::new();
            while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                elements.push(span(raw, self.origin));
            }
            Ok(elements)
        }
    }

    /// The element spans of the (already validated) array at `span` of `text`.
    pub fn array_elements(text: &str, span: Range<usize>) -> Vec<Range<usize>> {
        let origin = text.as_ptr() as usize;
        let mut deserializer = serde_json::Deserializer::from_str(&text[span]);
        deserializer
            .deserialize_seq(Elements { origin })
            .unwrap_or_default()
    }

    /// The members of the (already validated) object at `span` of `text`.
    pub fn object_members(text: &str, span: Range<usize>) -> Vec<Member> {
        let origin = text.as_ptr() as usize;
        let mut deserializer = serde_json::Deserializer::from_str(&text[span.clone()]);
        let Ok(slots) = (Members {
            origin,
            expand: &[],
        })
        .deserialize(&mut deserializer) else {
            return Vec::new();
        };
        assemble(text.as_bytes(), span.start, slots, &mut Vec::new()).0
    }

    /// Turns the slots of the object whose `{` is at `open` into members,
    /// stepping over the bytes between values to find each key; returns
    /// them with the offset after the object's `}`, and pushes the members
    /// of expanded objects to `nested`.
    pub fn assemble(
        bytes: &[u8],
        open: usize,
        slots: Vec<Slot>,
        nested: &mut Vec<(usize, Vec<Member>)>,
    ) -> (Vec<Member>, usize) {
        let mut members = Vec::with_capacity(slots.len());
        let mut at = open + 1;
        for slot in slots {
            at = scan::skip_ws(bytes, at);
            if bytes.get(at) == Some(&b',') {
                at = scan::skip_ws(bytes, at + 1);
            }
            let key_end = scan::skip_string(bytes, at);
            let value_start = scan::skip_ws(bytes, scan::skip_ws(bytes, key_end) + 1);
            let value_end = match slot {
                Slot::Raw(span) => span.end,
                Slot::Object(slots) => {
                    let (inner, end) = assemble(bytes, value_start, slots, nested);
                    nested.push((value_start, inner));
                    end
                }
                Slot::Other => scan::skip_value(bytes, value_start),
            };
            members.push(Member {
                key_span: at..key_end,
                value_span: value_start..value_end,
            });
            at = value_end;
        }
        // Past the last member (or the `{`), only whitespace before `}`.
        (members, scan::skip_ws(bytes, at) + 1)
    }
}

#[cfg(test)]
mod tests {
    /// Positions the real Claude Code 2.1.332 reports for these files
    /// (`claude mcp list`: "MCP config is not a valid JSON (line L, column
    /// C)"), cross-checked live by `tests/cli/claude.rs`.
    #[test]
    fn syntax_errors_are_placed_where_claude_code_places_them() {
        let cases: [(&str, (usize, usize)); 18] = [
            (
                "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n",
                (4, 1),
            ),
            (r#"{"mcpServers": {"#, (1, 17)),
            ("{\"mcpServers\": {}\n\n", (3, 1)),
            (r#"{"mcpServers": {}}x"#, (1, 19)),
            (r#"{"mcpServers": {"a" 1}}"#, (1, 21)),
            ("{\n\"mcpServers\": {\"a\": tru}}", (2, 21)),
            (r#"{"mcpServers": {"é": [1,]}}"#, (1, 25)),
            (r#"{"mcpServers": {"😀": [1,]}}"#, (1, 26)),
            (r#"{"mcpServers": {"a": nul}}"#, (1, 22)),
            (r#"{"mcpServers": {"a": -}}"#, (1, 22)),
            (r#"{"mcpServers": {"a": "x\q"}}"#, (1, 22)),
            (r#"{"mcpServers": {"a": 01}}"#, (1, 23)),
            (r#"{"mcpServers": {"a": "x"#, (1, 22)),
            (r#"{"mcpServers": {"a": tru"#, (1, 22)),
            (r#"{"mcpServers": {"a": 1.}}"#, (1, 22)),
            (r#"{"mcpServers": {"a": truex}}"#, (1, 22)),
            ("{\"mcpServers\": {\"a\":\n \"a\tb\"}}", (2, 2)),
            (r#"{"mcpServers": {a: 1}}"#, (1, 17)),
        ];
        for (text, (line, column)) in cases {
            let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            let found = super::syntax_error(text, error);
            assert_eq!((found.line, found.column), (line, column), "{text:?}");
        }
    }

    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> JsonDocument {
        JsonDocument::parse(text.to_string()).unwrap()
    }

    fn none(_: &[&str]) -> serde_json::Map<String, Value> {
        serde_json::Map::new()
    }

    #[test]
    fn a_root_member_of_a_valid_text_is_found_as_a_parse_finds_it() {
        let text = "\u{feff}{ \"a\" : {\"projects\": 1, \"s\": \"}\\\"{\"},\n \"proj\\u0065cts\": [1, {\"x\": []}], \"projects\": {\"k\": true} }";
        let parsed = doc(text);
        let root = parsed.object_at(&[]).unwrap().unwrap();
        assert_eq!(
            root_member_of_valid(text, "projects"),
            parsed.find_member(&root, "projects")
        );
        assert_eq!(
            text[root_member_of_valid(text, "projects").unwrap().value_span].to_string(),
            "{\"k\": true}"
        );
        assert_eq!(root_member_of_valid(text, "missing"), None);
        assert_eq!(root_member_of_valid("[1]", "a"), None);
        assert_eq!(root_member_of_valid("", "a"), None);
    }

    fn set(text: &str, path: &[&str], key: &str, value: Value) -> String {
        let document = doc(text);
        let splice = document.plan_set(path, key, &value, &none).unwrap();
        document.apply(&splice).unwrap().into_text()
    }

    fn remove(text: &str, path: &[&str], key: &str) -> String {
        let document = doc(text);
        let splice = document.plan_remove(path, key).unwrap().unwrap();
        document.apply(&splice).unwrap().into_text()
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let error = JsonDocument::parse("{\n  \"a\": 1,\n}".to_string()).unwrap_err();
        let DocumentError::Syntax(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!((error.line, error.column), (3, 1));
        assert_eq!(error.message, "trailing comma");
    }

    #[test]
    fn comments_and_trailing_garbage_are_rejected() {
        assert!(JsonDocument::parse("{} // c".to_string()).is_err());
        assert!(JsonDocument::parse("{/* c */}".to_string()).is_err());
        assert!(JsonDocument::parse("{}{}".to_string()).is_err());
    }

    #[test]
    fn a_non_object_root_is_a_shape_error() {
        let error = JsonDocument::parse("[1]".to_string()).unwrap_err();
        assert_eq!(
            error,
            DocumentError::Shape(ShapeError {
                pointer: String::new(),
                found: "an array"
            })
        );
    }

    #[test]
    fn inserting_into_an_empty_document_writes_claude_layout() {
        let out = set(
            "",
            &["mcpServers"],
            "a",
            json!({"type": "stdio", "args": []}),
        );
        assert_eq!(
            out,
            "{\n  \"mcpServers\": {\n    \"a\": {\n      \"type\": \"stdio\",\n      \"args\": []\n    }\n  }\n}"
        );
    }

    #[test]
    fn inserting_follows_the_existing_indent() {
        let text =
            "{\n    \"mcpServers\": {\n        \"a\": 1\n    },\n    \"x\": [1.50, 1e3]\n}\n";
        let out = set(text, &["mcpServers"], "b", json!({"k": [true]}));
        assert_eq!(
            out,
            "{\n    \"mcpServers\": {\n        \"a\": 1,\n        \"b\": {\n            \"k\": [\n                true\n            ]\n        }\n    },\n    \"x\": [1.50, 1e3]\n}\n"
        );
    }

    #[test]
    fn inserting_into_an_empty_nested_object_opens_it() {
        let text = "{\n  \"x\": 1,\n  \"mcpServers\": {}\n}";
        let out = set(text, &["mcpServers"], "a", json!(1));
        assert_eq!(
            out,
            "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"a\": 1\n  }\n}"
        );
    }

    #[test]
    fn missing_containers_are_appended_last() {
        let text = "{\n  \"x\": 1\n}";
        let out = set(text, &["projects", "/p", "mcpServers"], "a", json!(1));
        assert_eq!(
            out,
            "{\n  \"x\": 1,\n  \"projects\": {\n    \"/p\": {\n      \"mcpServers\": {\n        \"a\": 1\n      }\n    }\n  }\n}"
        );
    }

    #[test]
    fn skeletons_keep_their_key_order() {
        let document = doc("{}");
        let skeleton = |path: &[&str]| {
            let mut map = serde_json::Map::new();
            if path.len() == 2 {
                map.insert("before".into(), json!([]));
                map.insert("mcpServers".into(), json!({}));
                map.insert("after".into(), json!(false));
            }
            map
        };
        let splice = document
            .plan_set(&["projects", "/p", "mcpServers"], "a", &json!(1), &skeleton)
            .unwrap();
        let out = document.apply(&splice).unwrap().into_text();
        assert_eq!(
            out,
            "{\n  \"projects\": {\n    \"/p\": {\n      \"before\": [],\n      \"mcpServers\": {\n        \"a\": 1\n      },\n      \"after\": false\n    }\n  }\n}"
        );
    }

    #[test]
    fn inline_documents_stay_inline() {
        assert_eq!(
            set(
                r#"{"mcpServers":{"a":1}}"#,
                &["mcpServers"],
                "b",
                json!({"c": 2})
            ),
            r#"{"mcpServers":{"a":1,"b":{"c":2}}}"#
        );
        assert_eq!(
            set(r#"{"mcpServers":{}}"#, &["mcpServers"], "b", json!(2)),
            r#"{"mcpServers":{"b":2}}"#
        );
        assert_eq!(
            set(r#"{ "a": 1, "b": 2 }"#, &[], "c", json!(3)),
            r#"{ "a": 1, "b": 2, "c": 3 }"#
        );
    }

    #[test]
    fn replacing_keeps_the_key_and_neighbours() {
        let text = "{\n  \"a\": 1,\n  \"b\": {\"old\": true},\n  \"c\": 3\n}";
        assert_eq!(
            set(text, &[], "b", json!([1])),
            "{\n  \"a\": 1,\n  \"b\": [\n    1\n  ],\n  \"c\": 3\n}"
        );
    }

    #[test]
    fn removing_each_position() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}";
        assert_eq!(remove(text, &[], "a"), "{\n  \"b\": 2,\n  \"c\": 3\n}");
        assert_eq!(remove(text, &[], "b"), "{\n  \"a\": 1,\n  \"c\": 3\n}");
        assert_eq!(remove(text, &[], "c"), "{\n  \"a\": 1,\n  \"b\": 2\n}");
        assert_eq!(
            remove("{\n  \"s\": {\n    \"a\": 1\n  }\n}", &["s"], "a"),
            "{\n  \"s\": {}\n}"
        );
    }

    #[test]
    fn removing_a_duplicated_key_removes_every_copy() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"a\": 3\n}";
        assert_eq!(remove(text, &[], "a"), "{\n  \"b\": 2\n}");
    }

    #[test]
    fn lookups_decode_escaped_keys_and_take_the_last_duplicate() {
        let document = doc(r#"{"caf\u00e9": {"x": 1}, "d": {"v": 1}, "d": {"v": 2}}"#);
        assert!(document.object_at(&["café"]).unwrap().is_some());
        let span = document.object_at(&["d"]).unwrap().unwrap();
        assert_eq!(document.raw(&span), r#"{"v": 2}"#);
    }

    #[test]
    fn a_non_object_on_the_path_is_a_shape_error() {
        let document = doc(r#"{"projects": {"/p": []}}"#);
        let error = document
            .object_at(&["projects", "/p", "mcpServers"])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "`/projects/~1p` is an array, expected an object"
        );
    }

    #[test]
    fn strings_with_braces_and_escapes_are_skipped() {
        let text = r#"{"h": ["}{\"\\", {"x": "]"}], "mcpServers": {"a": "\\"}}"#;
        let document = doc(text);
        let span = document.object_at(&["mcpServers"]).unwrap().unwrap();
        assert_eq!(document.raw(&span), r#"{"a": "\\"}"#);
    }

    #[test]
    fn a_bom_is_kept() {
        let out = set("\u{feff}{\n  \"a\": 1\n}", &[], "b", json!(2));
        assert_eq!(out, "\u{feff}{\n  \"a\": 1,\n  \"b\": 2\n}");
    }

    #[test]
    fn pretty_matches_json_stringify_escapes() {
        let value = json!({"s": "\u{1}\u{7f}é\"\\/\n", "e": {}, "a": []});
        assert_eq!(
            pretty(&value, "  ", ""),
            "{\n  \"s\": \"\\u0001\u{7f}é\\\"\\\\/\\n\",\n  \"e\": {},\n  \"a\": []\n}"
        );
    }

    /// The layout of `text` as a fresh pass finds it, with the members of
    /// every object `layout` knows read again from the text.
    fn fresh_layout(text: &str, known: &Layout) -> Layout {
        let document = JsonDocument::parse_expanding(text.to_string(), &["projects"]).unwrap();
        for (span, _) in &known.objects {
            document.members(span);
        }
        document.layout().unwrap()
    }

    /// Looks up what commands look up: this project's entry and its
    /// servers, so their members are part of the layout.
    fn looked_up(document: &JsonDocument, project: &str) {
        for path in [
            &["projects", project][..],
            &["projects", project, "mcpServers"],
        ] {
            if let Ok(Some(span)) = document.object_at(path) {
                document.members(&span);
            }
        }
    }

    fn check_layout_after(text: &str, splice: &Splice, document: &JsonDocument) {
        let edited = document.apply(splice).unwrap().into_text();
        let shifted = document.layout_after(std::slice::from_ref(splice));
        if let Some(shifted) = shifted {
            // An object the edit replaced whole is left out (read again
            // when needed); every other one is as a fresh pass finds it.
            let fresh = fresh_layout(&edited, &shifted);
            assert_eq!(shifted.root, fresh.root, "{text:?} → {edited:?}");
            for object in &shifted.objects {
                assert!(
                    fresh.objects.contains(object),
                    "{object:?} of {text:?} → {edited:?}: {fresh:?}"
                );
            }
            let hit = JsonDocument::from_layout(edited.clone(), shifted).unwrap();
            assert_eq!(hit.text(), edited);
        }
    }

    #[test]
    fn a_layout_follows_each_kind_of_edit() {
        let texts = [
            "{\n  \"a\": 1,\n  \"projects\": {\n    \"/p\": {\n      \"mcpServers\": {\n        \"s\": {\"command\": \"x\"}\n      },\n      \"h\": [1]\n    },\n    \"/q\": {}\n  },\n  \"mcpServers\": {}\n}",
            r#"{"projects":{"/p":{"mcpServers":{"s":1,"t":2,"s":3}}},"z":null}"#,
            r#"{"projects":{},"mcpServers":{"u":{"url":"é"}}}"#,
            r#"{"x": 1}"#,
        ];
        for text in texts {
            let document = JsonDocument::parse_expanding(text.to_string(), &["projects"]).unwrap();
            looked_up(&document, "/p");
            let mut splices = Vec::new();
            for (path, key) in [
                (&["projects", "/p", "mcpServers"][..], "n"),
                (&["projects", "/p", "mcpServers"][..], "s"),
                (&["projects", "/new", "mcpServers"][..], "n"),
                (&["mcpServers"][..], "u"),
                (&["mcpServers"][..], "v"),
                (&[][..], "a"),
            ] {
                splices.push(
                    document
                        .plan_set(path, key, &json!({"k": [1, "é"]}), &none)
                        .unwrap(),
                );
                if let Some(splice) = document.plan_remove(path, key).unwrap() {
                    splices.push(splice);
                }
            }
            for splice in &splices {
                check_layout_after(text, splice, &document);
            }
            if text.starts_with("{\n") {
                // Every edit here keeps `projects` and the root known.
                for splice in &splices {
                    let shifted = document.layout_after(std::slice::from_ref(splice)).unwrap();
                    let edited = document.apply(splice).unwrap().into_text();
                    let projects = edited.find("{\n    \"/p\"").unwrap();
                    assert!(
                        shifted
                            .objects
                            .iter()
                            .any(|(span, _)| span.start == projects),
                        "{shifted:?}"
                    );
                }
            }
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                "[ -~é\\n\\t\"\\\\{}\\[\\]]{0,12}".prop_map(Value::from),
            ]
        }

        fn json_value() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    prop::collection::vec(("[a-z{}\"]{1,6}", inner), 0..4)
                        .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
                ]
            })
        }

        fn layout() -> impl Strategy<Value = &'static str> {
            prop_oneof![Just(""), Just("  "), Just("    "), Just("\t")]
        }

        fn project() -> impl Strategy<Value = (String, Value)> {
            (
                prop::sample::select(vec!["/p", "/q", "/r\"s"]),
                prop::collection::vec(("[a-c]", json_value()), 0..3),
                prop::collection::vec(("[a-z]{1,3}", json_value()), 0..3),
            )
                .prop_map(|(name, servers, others)| {
                    let mut entry: serde_json::Map<String, Value> = others.into_iter().collect();
                    entry.insert(
                        "mcpServers".to_string(),
                        Value::Object(servers.into_iter().collect()),
                    );
                    (name.to_string(), Value::Object(entry))
                })
        }

        /// An edit as commands make them: a server set or removed in a
        /// project (there or not) or at the top level.
        fn edit() -> impl Strategy<Value = (Vec<&'static str>, String, Option<Value>)> {
            (
                prop::sample::select(vec![
                    vec!["projects", "/p", "mcpServers"],
                    vec!["projects", "/q", "mcpServers"],
                    vec!["projects", "/new", "mcpServers"],
                    vec!["mcpServers"],
                    vec![],
                ]),
                "[a-c]",
                prop::option::of(json_value()),
            )
                .prop_map(|(path, key, value)| (path, key, value))
        }

        proptest! {
            /// The layout worked out after an edit is the layout a fresh
            /// pass finds in the new text, for the objects it keeps.
            #[test]
            fn a_shifted_layout_equals_a_fresh_pass(
                projects in prop::collection::vec(project(), 0..4),
                top in prop::collection::vec(("[a-c]", json_value()), 0..3),
                (path, key, value) in edit(),
                unit in layout(),
            ) {
                let mut root = serde_json::Map::new();
                root.insert("projects".to_string(), Value::Object(projects.into_iter().collect()));
                root.insert("mcpServers".to_string(), Value::Object(top.into_iter().collect()));
                let root = Value::Object(root);
                let text = if unit.is_empty() { root.to_string() } else { pretty(&root, unit, "") };
                let document = JsonDocument::parse_expanding(text.clone(), &["projects"]).unwrap();
                looked_up(&document, "/p");
                let splice = match value {
                    Some(value) => Some(document.plan_set(&path, &key, &value, &none).unwrap()),
                    None => document.plan_remove(&path, &key).unwrap(),
                };
                if let Some(splice) = splice {
                    check_layout_after(&text, &splice, &document);
                }
            }

            /// Setting a member then parsing with serde_json gives exactly the
            /// intended value, whatever the layout of the original file.
            #[test]
            fn set_then_parse_equals_intended(
                original in prop::collection::vec(("[a-z]{1,5}", json_value()), 0..5),
                key in "[a-z\"é]{1,5}",
                value in json_value(),
                unit in layout(),
            ) {
                let object: serde_json::Map<String, Value> = original.into_iter().collect();
                let root = Value::Object(serde_json::Map::from_iter([("servers".to_string(), Value::Object(object.clone()))]));
                let text = if unit.is_empty() { root.to_string() } else { pretty(&root, unit, "") };
                let document = JsonDocument::parse(text.clone()).unwrap();
                let splice = document.plan_set(&["servers"], &key, &value, &none).unwrap();
                let edited = document.apply(&splice).unwrap().into_text();
                let mut expected = object.clone();
                expected.insert(key.clone(), value.clone());
                let parsed: Value = serde_json::from_str(&edited).unwrap();
                prop_assert_eq!(&parsed["servers"], &Value::Object(expected));

                // Removing a key that was not there before restores every byte.
                if !object.contains_key(&key) {
                    let edited = JsonDocument::parse(edited).unwrap();
                    let splice = edited.plan_remove(&["servers"], &key).unwrap().unwrap();
                    let restored = edited.apply(&splice).unwrap().into_text();
                    prop_assert_eq!(restored, text);
                }
            }
        }
    }
}
