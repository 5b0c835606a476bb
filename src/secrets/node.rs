//! A JSON document borrowed from its text, for `scan`: a string without
//! escapes is a slice of the text, an object is a list of members (no
//! hashing), so reading a file's servers allocates a `Vec` per object and
//! per array instead of a `String` per key and per string and an index per
//! object, as serde_json's `Value` does. Duplicate keys resolve as in
//! `Value` (and `JSON.parse`): first position, last value.
//!
//! Only a scan reads through it; every other command keeps
//! [`ServerEntry`](crate::config::model::ServerEntry). Whatever this cannot
//! read as `Value` reads it (see [`Node::parse`]), the caller falls back to
//! `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::config::model::{Field, Transport};

/// A JSON value whose strings borrow from the text where they can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written (serde_json's `arbitrary_precision` keeps it so).
    Number(Cow<'a, str>),
    /// A string, unescaped.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Self>),
    /// An object's members, in file order, each key once.
    Object(Members<'a>),
}

/// An object's members, in file order, each key once.
pub type Members<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

/// Members up to which duplicate keys are looked for pair by pair; above
/// it the keys are sorted.
const PAIRWISE_MEMBERS: usize = 8;

impl<'a> Node<'a> {
    /// The strict JSON `text` (any depth: the caller bounds it, and calls
    /// this on a stack as deep as [`Value`] needs), or `None` where
    /// serde_json does not read it as a `Value` the same way (a syntax
    /// error; an object keyed as serde_json's own number or raw value
    /// markers), so the caller reads it as a `Value` instead. `scan` reads
    /// the same tree with
    /// [`JsonShape::read`](crate::secrets::value_position::JsonShape::read)
    /// in the pass that finds positions, and comes here for what that pass
    /// leaves (its property tests check it against this reading).
    pub fn parse(text: &'a str) -> Option<Self> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        deserializer.disable_recursion_limit();
        let node = de::Deserialize::deserialize(&mut deserializer).ok()?;
        deserializer.end().ok()?;
        Some(node)
    }

    /// The same tree, borrowed from a `Value` (a file read another way:
    /// JSON with comments, TOML).
    pub fn of_value(value: &'a Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(flag) => Self::Bool(*flag),
            Value::Number(number) => Self::Number(Cow::Owned(number.to_string())),
            Value::String(text) => Self::String(Cow::Borrowed(text)),
            Value::Array(items) => Self::Array(items.iter().map(Self::of_value).collect()),
            Value::Object(members) => Self::Object(
                members
                    .iter()
                    .map(|(key, value)| (Cow::Borrowed(key.as_str()), Self::of_value(value)))
                    .collect(),
            ),
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Self::Object(members) => member(members, key),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            _ => None,
        }
    }

    /// The texts of every string and number inside, in order (a value of
    /// the wrong type, `"PIN": 1234`, is no less a secret).
    pub fn leaf_texts(&self) -> Vec<&str> {
        let mut texts = Vec::new();
        self.push_leaf_texts(&mut texts);
        texts
    }

    fn push_leaf_texts<'s>(&'s self, texts: &mut Vec<&'s str>) {
        match self {
            Self::String(text) | Self::Number(text) => texts.push(text),
            Self::Array(items) => items.iter().for_each(|item| item.push_leaf_texts(texts)),
            Self::Object(members) => members
                .iter()
                .for_each(|(_, value)| value.push_leaf_texts(texts)),
            Self::Bool(_) | Self::Null => {}
        }
    }
}

/// The member `key` of `members`.
pub fn member<'m, 'a>(members: &'m Members<'a>, key: &str) -> Option<&'m Node<'a>> {
    members
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value)
}

/// The string members of the object `value`, in order; none for anything
/// else.
pub fn string_members<'m>(value: Option<&'m Node<'_>>) -> impl Iterator<Item = (&'m str, &'m str)> {
    let members = match value {
        Some(Node::Object(members)) => members.as_slice(),
        _ => &[],
    };
    members
        .iter()
        .filter_map(|(key, value)| Some((key.as_ref(), value.as_str()?)))
}

/// Whether an entry's members make it remote: its `type` is a string
/// naming a transport reached by URL (a `type` of another kind is an
/// unknown transport, not a remote one).
pub fn is_remote(entry: &Members<'_>) -> bool {
    matches!(member(entry, "type"), Some(Node::String(kind)) if Transport::parse(kind).is_remote())
}

/// [`ServerEntry::expandable_fields_where`](crate::config::model::ServerEntry::expandable_fields_where)
/// of an entry's members: the string fields Claude Code expands `${VAR}`
/// in, in entry order, whose value passes `keep`.
pub fn expandable_fields_where<'m>(
    entry: &'m Members<'_>,
    keep: impl Fn(&str) -> bool,
) -> Vec<(Field, &'m str)> {
    let mut fields = Vec::new();
    let text = |key: &str| member(entry, key).and_then(Node::as_str);
    if is_remote(entry) {
        if let Some(url) = text("url").filter(|url| keep(url)) {
            fields.push((Field::Url, url));
        }
        for (name, value) in string_members(member(entry, "headers")) {
            if keep(value) {
                fields.push((Field::Header(name.to_string()), value));
            }
        }
    } else {
        if let Some(command) = text("command").filter(|command| keep(command)) {
            fields.push((Field::Command, command));
        }
        if let Some(Node::Array(args)) = member(entry, "args") {
            for (index, arg) in args.iter().enumerate() {
                if let Some(arg) = arg.as_str().filter(|arg| keep(arg)) {
                    fields.push((Field::Arg(index), arg));
                }
            }
        }
        for (key, value) in string_members(member(entry, "env")) {
            if keep(value) {
                fields.push((Field::Env(key.to_string()), value));
            }
        }
    }
    fields
}

/// Keeps the first position and the last value of each key, as `Value`.
pub(crate) fn resolve_duplicates(members: &mut Members<'_>) {
    let duplicated = if members.len() <= PAIRWISE_MEMBERS {
        members
            .iter()
            .enumerate()
            .any(|(index, (key, _))| members[..index].iter().any(|(other, _)| other == key))
    } else {
        let mut keys: Vec<&str> = members.iter().map(|(key, _)| key.as_ref()).collect();
        keys.sort_unstable();
        keys.windows(2).any(|pair| pair[0] == pair[1])
    };
    if !duplicated {
        return;
    }
    let mut resolved: Members<'_> = Vec::with_capacity(members.len());
    let mut positions: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (key, value) in members.drain(..) {
        match positions.get(key.as_ref()) {
            Some(&position) => resolved[position].1 = value,
            None => {
                positions.insert(key.to_string(), resolved.len());
                resolved.push((key, value));
            }
        }
    }
    *members = resolved;
}

/// Members an object's list starts with room for.
const OBJECT_CAPACITY: usize = 8;
/// Items an array's list starts with room for (serde_json gives no count).
const ARRAY_CAPACITY: usize = 4;

/// The key serde_json's `arbitrary_precision` hands a number under.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// The key serde_json's `raw_value` hands a raw value under.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> de::Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(flag))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Cow::Owned(number.to_string())))
    }

    fn visit_u64<E>(self, number: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Cow::Owned(number.to_string())))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Node<'de>, E> {
        serde_json::Number::from_f64(number)
            .map(|number| Node::Number(Cow::Owned(number.to_string())))
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(text.to_string())))
    }

    fn visit_string<E>(self, text: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(text)))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(ARRAY_CAPACITY));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let Some(first) = map.next_key_seed(Text)? else {
            return Ok(Node::Object(Vec::new()));
        };
        if first == NUMBER_TOKEN {
            // A number hands its text as an owned string; a string in
            // the text comes borrowed or as `str`, and is left to `Value`.
            return Ok(Node::Number(Cow::Owned(map.next_value_seed(NumberText)?)));
        }
        if first == RAW_VALUE_TOKEN {
            return Err(de::Error::custom("left to serde_json's Value"));
        }
        // Most objects of a config (an entry, its `env`) fit without growing.
        let mut members: Members<'de> = Vec::with_capacity(OBJECT_CAPACITY);
        members.push((first, map.next_value()?));
        while let Some(key) = map.next_key_seed(Text)? {
            members.push((key, map.next_value()?));
        }
        resolve_duplicates(&mut members);
        Ok(Node::Object(members))
    }
}

/// A key or string, borrowed from the text when it has no escape.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }

    fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_string()))
    }

    fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text))
    }
}

/// The text of a number under `arbitrary_precision`: an owned string,
/// never one of the text's own strings.
struct NumberText;

impl<'de> DeserializeSeed<'de> for NumberText {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_string(self)
    }
}

impl Visitor<'_> for NumberText {
    type Value = String;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a number's text")
    }

    fn visit_string<E>(self, text: String) -> Result<String, E> {
        Ok(text)
    }

    /// A string of the text under serde_json's number key: `Value` reads
    /// it its own way, so this reading gives up.
    fn visit_str<E: de::Error>(self, _: &str) -> Result<String, E> {
        Err(E::custom("left to serde_json's Value"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The keys of an entry in each client's shape, as JSON.
    pub(crate) const ENTRY_KEYS: [&str; 10] = [
        "\"command\"",
        "\"args\"",
        "\"env\"",
        "\"url\"",
        "\"headers\"",
        "\"type\"",
        "\"path\"",
        "\"serverUrl\"",
        "\"httpUrl\"",
        "\"http_headers\"",
    ];

    /// JSON text as MCP clients write it and as an attacker might: each
    /// client's entry shapes (Zed's `command` object, Windsurf's
    /// `serverUrl`, Gemini's `httpUrl`, Codex's `http_headers`), projects,
    /// keys repeated or written escaped, escapes and surrogate pairs,
    /// numbers as written, serde_json's own marker keys, any root.
    pub(crate) fn json_text() -> impl Strategy<Value = String> {
        let space = prop::sample::select(vec!["", " ", "\n  ", "\t"]);
        let string = prop::sample::select(vec![
            "\"npx\"",
            "\"\"",
            "\"x\"",
            "\"http\"",
            "\"sse\"",
            "\"stdio\"",
            "\"https://u:pw@h.example/?api_key=Zq9XwT4vLm2Kp8Rs\"",
            "\"ghp_R2x9TqLm4VbN8cZw1YpK7sHd3FjG6aUe5oIi\"",
            "\"--api-key\"",
            "\"--token=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\"",
            "\"Bearer xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp\"",
            "\"${API_KEY:-sk_live_51HqLyjWDarjtT1zdp7dcAAAAbbbbCCCC}\"",
            "\"${env:TOKEN}\"",
            "\"$HOME/x\"",
            "\"AKIAQWERTYUIOPASDFGH\"",
            "\"é😀tok\"",
            "\"a\\\"b\\\\c\\/d\\n\"",
            "\"\\u0041\\u00e9\\ud83d\\ude00zz\"",
            "\"\\ud800\"",
            "\"]}{[,:\"",
        ]);
        let scalar = prop_oneof![
            4 => string.clone().prop_map(str::to_string),
            1 => prop::sample::select(vec!["1", "-0.5e3", "12345678901234567890123", "1.0", "true", "false", "null"])
                .prop_map(str::to_string),
        ];
        let key = prop::sample::select(
            [
                ENTRY_KEYS.as_slice(),
                &[
                    "\"mcpServers\"",
                    "\"servers\"",
                    "\"context_servers\"",
                    "\"mcp_servers\"",
                    "\"projects\"",
                    "\"/p\"",
                    "\"s\"",
                    "\"\\u0073\"",
                    "\"Authorization\"",
                    "\"API_KEY\"",
                    "\"$serde_json::private::Number\"",
                    "\"$serde_json::private::RawValue\"",
                ],
            ]
            .concat(),
        );
        scalar.prop_recursive(6, 64, 6, move |inner| {
            let member = (space.clone(), key.clone(), inner.clone());
            prop_oneof![
                1 => prop::collection::vec((space.clone(), inner), 0..5).prop_map(|items| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(space, item)| format!("{space}{item}"))
                        .collect();
                    format!("[{}]", items.join(","))
                }),
                3 => prop::collection::vec(member, 0..12).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(space, key, value)| format!("{space}{key}{space}:{value}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    /// The tree `Value` reads from `text`, or `None`.
    fn as_value(text: &str) -> Option<Value> {
        crate::mechanics::document::parse_value(text).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// What reads as a `Value` reads as the same tree, borrowed; what
        /// does not, does not (serde_json's markers aside, left to it).
        #[test]
        fn reads_as_value_does(text in json_text()) {
            let value = as_value(&text);
            let node = Node::parse(&text);
            match (&value, &node) {
                (Some(value), Some(node)) => prop_assert_eq!(node, &Node::of_value(value)),
                (_, None) => prop_assert!(
                    value.is_none() || text.contains("$serde_json::private::"),
                    "not read: {}", text
                ),
                (None, Some(node)) => prop_assert!(false, "read {:?} from {}", node, text),
            }
        }
    }

    #[test]
    fn duplicate_keys_keep_the_first_place_and_the_last_value() {
        for count in [3, PAIRWISE_MEMBERS + 4] {
            let mut members: Vec<String> = (0..count)
                .map(|index| format!("\"k{index}\": {index}"))
                .collect();
            members.push("\"k1\": \"last\"".to_string());
            members.push("\"k\\u0030\": [true]".to_string());
            let text = format!("{{{}}}", members.join(", "));
            let node = Node::parse(&text).unwrap();
            assert_eq!(node, Node::of_value(&as_value(&text).unwrap()));
            let Node::Object(members) = node else {
                panic!("{text}")
            };
            assert_eq!(members.len(), count);
            assert_eq!(
                members[0],
                (Cow::Borrowed("k0"), Node::Array(vec![Node::Bool(true)]))
            );
            assert_eq!(members[1].1, Node::String(Cow::Borrowed("last")));
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let node = Node::parse(r#"{"a": "plain", "b\n": "esc\u0041", "n": 1.50}"#).unwrap();
        let Node::Object(members) = node else {
            panic!()
        };
        assert!(matches!(&members[0].0, Cow::Borrowed("a")));
        assert!(matches!(
            &members[0].1,
            Node::String(Cow::Borrowed("plain"))
        ));
        assert_eq!(
            members[1],
            (Cow::Borrowed("b\n"), Node::String(Cow::Borrowed("escA")))
        );
        assert_eq!(members[2].1, Node::Number(Cow::Borrowed("1.50")));
    }

    #[test]
    fn non_object_roots_and_markers() {
        for text in ["[]", "1", "\"x\"", "null", "[{\"a\": 1}]", " true "] {
            assert_eq!(
                Node::parse(text).unwrap(),
                Node::of_value(&as_value(text).unwrap())
            );
        }
        // serde_json's own marker keys are left to `Value`.
        assert_eq!(
            Node::parse(r#"{"$serde_json::private::Number": "1"}"#),
            None
        );
        assert_eq!(
            Node::parse(r#"{"$serde_json::private::RawValue": "1"}"#),
            None
        );
        for text in ["", "{", "{\"a\":1,}", "\u{feff}{}", "[1] x", "\"\\ud800\""] {
            assert_eq!(Node::parse(text), None, "{text}");
        }
    }

    #[test]
    fn nesting_as_deep_as_mcpenv_reads() {
        let depth = crate::mechanics::document::MAX_DEPTH;
        let text = format!(
            "{{\"mcpServers\": {{\"s\": {{\"env\": {{\"K\": {}1{}}}}}}}}}",
            "[".repeat(depth - 4),
            "]".repeat(depth - 4)
        );
        std::thread::Builder::new()
            .stack_size(crate::mechanics::document::STACK_BYTES)
            .spawn(move || {
                let node = Node::parse(&text).unwrap();
                assert_eq!(node, Node::of_value(&as_value(&text).unwrap()));
                let leaves = node
                    .get("mcpServers")
                    .unwrap()
                    .get("s")
                    .unwrap()
                    .get("env")
                    .unwrap()
                    .leaf_texts();
                assert_eq!(leaves, ["1"]);
                // Dropped here, on the deep stack.
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
