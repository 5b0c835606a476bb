//! The fast path of the one validating pass: a hand-written skipper that
//! accepts exactly the texts the `serde_json` pass of [`super::spans`]
//! accepts, and gives the same slots for them.
//!
//! It never explains a rejection: on any byte it does not like it returns
//! `None`, and the caller runs the `serde_json` pass, whose error message
//! and line:column are the ones users see. So only its acceptance has to
//! agree with serde_json's, which the property test below checks on valid
//! texts and on texts one edit away from valid.
//!
//! What that pass accepts, read from serde_json 1.0's source: strict
//! RFC 8259 JSON (whitespace is space, tab, `\n`, `\r`; no control byte
//! below 0x20 inside a string; escapes `\" \\ \/ \b \f \n \r \t \uXXXX`;
//! numbers without leading zeros, with at least one digit after `.` and in
//! an exponent; no trailing comma), with no limit on nesting (values are
//! skipped as `RawValue`s, which serde_json does without recursion), where
//! a `\u` escape may be a lone surrogate in a value, but not in the keys
//! it decodes (the root's, and those of the objects named in `expand`).
//!
//! Speed: string bodies are skipped 8 bytes at a time (SWAR: a `"`, a `\`
//! or a byte below 0x20 is found with a few integer operations on a whole
//! word), everything else is a small state machine over bytes.

use std::borrow::Cow;

use super::spans::Slot;

/// The key serde_json (with `arbitrary_precision`) wraps numbers in; an
/// expanded object whose first key it is goes the serde_json way.
use super::spans::NUMBER_TOKEN;

/// The root members' slots of `body` (which starts, after whitespace, with
/// `{`; `origin` is the address the spans count from), or `None` when
/// anything is off and the `serde_json` pass must decide.
pub fn root_slots(body: &str, origin: usize, expand: &[&str]) -> Option<Vec<Slot>> {
    let mut skipper = Skipper {
        bytes: body.as_bytes(),
        at: 0,
        offset: body.as_ptr() as usize - origin,
        stack: Vec::new(),
    };
    skipper.whitespace();
    let slots = skipper.members(expand, false)?;
    skipper.whitespace();
    (skipper.at == skipper.bytes.len()).then_some(slots)
}

struct Skipper<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` starts in the text the spans count in.
    offset: usize,
    /// The open arrays and objects of the value being skipped.
    stack: Vec<u8>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` that is `"`, `\` or below 0x20,
/// and maybe of some bytes above the first such byte (the borrow of the
/// subtraction runs upwards): the lowest bit set is always a true one.
#[inline]
fn specials(word: u64) -> u64 {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_quote = quote.wrapping_sub(ONES) & !quote;
    let zero_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (zero_quote | zero_backslash | control) & HIGHS
}

impl<'a> Skipper<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn whitespace(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.at += 1,
                Some(b'\n') => {
                    self.at += 1;
                    self.indentation();
                }
                _ => return,
            }
        }
    }

    /// Skips spaces 8 at a time: the indentation after a newline.
    #[inline]
    fn indentation(&mut self) {
        while let Some(&word) = self.bytes[self.at..].first_chunk::<8>() {
            // Zero where a space is: the lowest other byte ends the run.
            let others = u64::from_le_bytes(word) ^ (ONES * u64::from(b' '));
            if others != 0 {
                self.at += (others.trailing_zeros() / 8) as usize;
                return;
            }
            self.at += 8;
        }
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// Skips a string whose opening quote is at `at`; tells whether it held
    /// an escape.
    #[inline]
    fn string(&mut self) -> Option<bool> {
        let bytes = self.bytes;
        let mut at = self.at + 1;
        let mut escaped = false;
        loop {
            while let Some(&word) = bytes[at..].first_chunk::<8>() {
                let found = specials(u64::from_le_bytes(word));
                if found != 0 {
                    at += (found.trailing_zeros() / 8) as usize;
                    break;
                }
                at += 8;
            }
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    at += match *bytes.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' => {
                            let hex = bytes.get(at + 2..at + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            6
                        }
                        _ => return None,
                    };
                }
                byte if byte < 0x20 => return None,
                _ => at += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// A key and its colon, then the whitespace before the value; gives
    /// where the key ends and whether it held an escape.
    #[inline]
    fn key(&mut self) -> Option<(usize, bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        let escaped = self.string()?;
        let end = self.at;
        self.whitespace();
        self.eat(b':')?;
        self.whitespace();
        Some((end, escaped))
    }

    /// Skips one value starting at `at` (no whitespace before it), without
    /// recursion.
    fn value(&mut self) -> Option<()> {
        let base = self.stack.len();
        loop {
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    self.at += 1;
                    self.whitespace();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.eat(close).is_none() {
                        if open == b'{' {
                            self.key()?;
                        }
                        self.stack.push(open);
                        continue;
                    }
                }
                b'"' => {
                    self.string()?;
                }
                b't' => self.word(b"true")?,
                b'f' => self.word(b"false")?,
                b'n' => self.word(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a value: a comma and the next one, or closes.
            loop {
                let Some(&open) = self.stack.get(base..).and_then(<[u8]>::last) else {
                    return Some(());
                };
                self.whitespace();
                match self.peek()? {
                    b',' => {
                        self.at += 1;
                        self.whitespace();
                        if open == b'{' {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if open == b'{' => {}
                    b']' if open == b'[' => {}
                    _ => return None,
                }
                self.at += 1;
                self.stack.pop();
            }
        }
    }

    /// The key quoted at `start..end`, decoded as serde_json decodes keys
    /// (a lone surrogate fails).
    fn decoded(&self, start: usize, end: usize, escaped: bool) -> Option<Cow<'a, str>> {
        let quoted = std::str::from_utf8(&self.bytes[start..end]).ok()?;
        if escaped {
            serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(&quoted[1..quoted.len() - 1]))
        }
    }

    /// The members of the object at `at`, the values of those named in
    /// `expand` read as objects of their own. `nested`: an expanded object,
    /// which serde_json reads a number-shaped first key of differently.
    fn members(&mut self, expand: &[&str], nested: bool) -> Option<Vec<Slot>> {
        self.eat(b'{')?;
        self.whitespace();
        let mut slots = Vec::new();
        if self.eat(b'}').is_some() {
            return Some(slots);
        }
        loop {
            let key_start = self.at;
            let (key_end, escaped) = self.key()?;
            let key = self.decoded(key_start, key_end, escaped)?;
            if nested && slots.is_empty() && key == NUMBER_TOKEN {
                return None;
            }
            let start = self.at;
            if expand.contains(&key.as_ref()) {
                match self.peek()? {
                    b'{' => slots.push(Slot::Object(self.members(&[], true)?)),
                    b'"' => {
                        // serde_json decodes this string too.
                        let escaped = self.string()?;
                        self.decoded(start, self.at, escaped)?;
                        slots.push(Slot::Other);
                    }
                    _ => {
                        self.value()?;
                        slots.push(Slot::Other);
                    }
                }
            } else {
                self.value()?;
                slots.push(Slot::Raw(start + self.offset..self.at + self.offset));
            }
            self.whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.whitespace();
                }
                b'}' => {
                    self.at += 1;
                    return Some(slots);
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::spans;

    /// Whether the fast path and the `serde_json` pass agree on `text`:
    /// both reject it, or both accept it with the same slots.
    fn agree(text: &str, expand: &[&str]) -> Result<(), TestCaseError> {
        let start = text.len() - text.trim_start().len();
        if !text[start..].starts_with('{') {
            return Ok(());
        }
        let origin = text.as_ptr() as usize;
        let fast = super::root_slots(text, origin, expand);
        let slow = spans::root_slots(text, origin, expand).ok();
        if fast.is_none() && text.contains(super::NUMBER_TOKEN) {
            // Left to serde_json on purpose.
            return Ok(());
        }
        prop_assert_eq!(fast, slow, "{:?}", text);
        Ok(())
    }

    #[test]
    fn agrees_with_serde_json_on_edge_cases() {
        let cases = [
            r#"{}"#,
            r#" { } "#,
            r#"{"a":1}"#,
            r#"{"a":1,}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":01}"#,
            r#"{"a":-0}"#,
            r#"{"a":-}"#,
            r#"{"a":-01}"#,
            r#"{"a":1.}"#,
            r#"{"a":1.5e}"#,
            r#"{"a":1.5e+}"#,
            r#"{"a":1.5E-7}"#,
            r#"{"a":.5}"#,
            r#"{"a":+1}"#,
            r#"{"a":0x1}"#,
            r#"{"a":1e5x}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"\ud800":1}"#,
            r#"{"\udc00":1}"#,
            r#"{"\ud83d\ude00":1}"#,
            r#"{"\ud83d\u0041":1}"#,
            r#"{"projects":{"\ud800":1}}"#,
            r#"{"projects":{"a":{"\ud800":1}}}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12"}"#,
            r#"{"a":"\u12G4"}"#,
            "{\"a\":\"x\ty\"}",
            "{\"a\":\"x\u{7f}y\"}",
            "{\"a\":\"é😀\"}",
            "{\"a\":1}\u{a0}",
            "{\"a\":1}\u{b}",
            "{\"a\":1}\u{c}",
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":nul}"#,
            r#"{"a":null,"a":false}"#,
            r#"{"a":{"b":}}"#,
            r#"{"a":{"b"}}"#,
            r#"{"a":{"b":1,}}"#,
            r#"{"a":{,}}"#,
            r#"{"a":[,]}"#,
            r#"{"a":[]]}"#,
            r#"{"a":{}}}"#,
            r#"{"a":1}{}"#,
            r#"{"a":1"#,
            r#"{"a":"#,
            r#"{"a"#,
            r#"{"#,
            r#"{"projects":1}"#,
            r#"{"projects":[1,{"a":2}]}"#,
            r#"{"projects":{}}"#,
            r#"{"projects":{"$serde_json::private::Number":"1"}}"#,
            r#"{"projects":{"$serde_json::private::Number":1,"b":2}}"#,
            r#"{"projects":{"b":2,"$serde_json::private::Number":1}}"#,
            r#"{"pro\u006aects":{"b":2}}"#,
            r#"{"projects":{"b":2},"projects":[]}"#,
        ];
        for case in cases {
            agree(case, &["projects"]).unwrap();
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        agree(&deep, &["projects"]).unwrap();
        let deep = format!(
            "{{\"projects\":{{\"a\":{}1{}}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        agree(&deep, &["projects"]).unwrap();
    }

    /// A valid JSON value, written with whitespace of every kind.
    fn value() -> impl Strategy<Value = String> {
        let ws = prop::sample::select(vec!["", " ", "\n", "\t", "\r\n", "  "]);
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "\"([a-z \\x7fé😀]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|\\\\ud83d\\\\ude00|\\\\ud800){0,12}\"",
        ];
        leaf.prop_recursive(4, 40, 6, move |inner| {
            let ws = ws.clone();
            prop_oneof![
                (prop::collection::vec((inner.clone(), ws.clone()), 0..5)).prop_map(|items| {
                    let body: Vec<String> = items
                        .into_iter()
                        .map(|(v, w)| format!("{w}{v}{w}"))
                        .collect();
                    format!("[{}]", body.join(","))
                }),
                (prop::collection::vec(
                    ("\"([a-z]|\\\\u00e9|\\\\ud800|\\\\udc00){0,3}\"", inner, ws),
                    0..5
                ))
                .prop_map(|members| {
                    let body: Vec<String> = members
                        .into_iter()
                        .map(|(k, v, w)| format!("{w}{k}{w}:{w}{v}{w}"))
                        .collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    /// A root object, some of whose members are named `projects`.
    fn document() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("\"projects\"".to_string()),
            "\"([a-z]|\\\\u00e9|\\\\ud800){0,3}\""
        ];
        prop::collection::vec((key, value()), 0..6).prop_map(|members| {
            let body: Vec<String> = members
                .into_iter()
                .map(|(k, v)| format!("\n  {k}: {v}"))
                .collect();
            format!("{{{}\n}}\n", body.join(","))
        })
    }

    /// Bytes that tend to break JSON when put in the wrong place.
    const TROUBLE: &[&str] = &[
        ",", ":", "{", "}", "[", "]", "\"", "\\", "0", "1", "-", ".", "e", "+", "u", "x", "\t",
        "\n", "\u{1}", "\u{1f}", " ", "\u{feff}", "\u{a0}", "n", "t", "f", "\\u", "\\ud800",
    ];

    proptest! {
        #[test]
        fn agrees_with_serde_json_on_valid_texts(text in document()) {
            agree(&text, &["projects"])?;
            agree(&text, &[])?;
        }

        #[test]
        fn agrees_with_serde_json_one_edit_away(
            text in document(),
            at in any::<prop::sample::Index>(),
            trouble in prop::sample::select(TROUBLE),
            how in 0..3u8,
        ) {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut edited = text[..at].to_string();
            match how {
                0 => edited.push_str(trouble),
                1 => {}
                _ => {
                    edited.push_str(trouble);
                    edited.push_str(&text[at..]);
                    return agree(&edited, &["projects"]);
                }
            }
            let rest = &text[at..];
            let skip = rest.chars().next().map_or(0, char::len_utf8);
            edited.push_str(&rest[skip..]);
            agree(&edited, &["projects"])?;
        }
    }
}
