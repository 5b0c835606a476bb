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
//! Speed: string bodies and indentation are skipped a block at a time:
//! 16 bytes with SSE2 on x86_64 (baseline there, so no runtime detection),
//! 8 bytes elsewhere (SWAR: a `"`, a `\` or a byte below 0x20 is found
//! with a few integer operations on a whole word); everything else is a
//! small state machine over bytes. Both block scanners are tested against
//! a byte-at-a-time reference, and the whole skipper runs with each of them
//! in the property tests.

use std::borrow::Cow;

use super::spans::Slot;

/// The key serde_json (with `arbitrary_precision`) wraps numbers in; an
/// expanded object whose first key it is goes the serde_json way.
use super::spans::NUMBER_TOKEN;

/// The root members' slots of `body` (which starts, after whitespace, with
/// `{`; `origin` is the address the spans count from), or `None` when
/// anything is off and the `serde_json` pass must decide.
pub fn root_slots(body: &str, origin: usize, expand: &[&str]) -> Option<Vec<Slot>> {
    slots_with::<false>(body, origin, expand)
}

/// [`root_slots`], with the portable block scanners when `PORTABLE` (the
/// tests run both ways).
fn slots_with<const PORTABLE: bool>(
    body: &str,
    origin: usize,
    expand: &[&str],
) -> Option<Vec<Slot>> {
    let mut skipper = Skipper::<PORTABLE> {
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

struct Skipper<'a, const PORTABLE: bool> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` starts in the text the spans count in.
    offset: usize,
    /// The open arrays and objects of the value being skipped.
    stack: Vec<u8>,
}

/// What may follow a `\` in a string.
#[derive(Clone, Copy)]
enum Escape {
    Invalid,
    /// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`.
    Short,
    /// `\u` and four hex digits.
    Unicode,
}

/// [`Escape`] by the byte after the `\` (a table: escapes are frequent
/// in `~/.claude.json`'s history).
const ESCAPES: [Escape; 256] = {
    let mut table = [Escape::Invalid; 256];
    let short = *b"\"\\/bfnrt";
    let mut i = 0;
    while i < short.len() {
        table[short[i] as usize] = Escape::Short;
        i += 1;
    }
    table[b'u' as usize] = Escape::Unicode;
    table
};

/// Whether each byte is an ASCII hex digit.
const HEX: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_hexdigit();
        byte += 1;
    }
    table
};

/// A run of bytes the block scanners skip.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// A string's body: it ends at a `"`, a `\` or a control byte.
    StringBody,
    /// Indentation: it ends at anything but a space.
    Spaces,
}

impl Run {
    /// Whether `byte` ends the run.
    #[inline]
    fn stops(self, byte: u8) -> bool {
        match self {
            Self::StringBody => byte == b'"' || byte == b'\\' || byte < 0x20,
            Self::Spaces => byte != b' ',
        }
    }
}

/// The block scanners without SIMD, 8 bytes a step.
mod portable {
    use super::Run;

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// A word with a bit set in the first byte of `word` that ends `run`
    /// (bits in later bytes may be wrong), zero when no byte does.
    #[inline]
    fn found(run: Run, word: u64) -> u64 {
        match run {
            Run::StringBody => {
                // The high bit of each `"`, `\` and byte below 0x20, and maybe
                // of some bytes above the first (the borrow of a subtraction
                // runs upwards).
                let quote = word ^ (ONES * u64::from(b'"'));
                let backslash = word ^ (ONES * u64::from(b'\\'));
                let zero_quote = quote.wrapping_sub(ONES) & !quote;
                let zero_backslash = backslash.wrapping_sub(ONES) & !backslash;
                let control = word.wrapping_sub(ONES * 0x20) & !word;
                (zero_quote | zero_backslash | control) & HIGHS
            }
            // Zero where a space is.
            Run::Spaces => word ^ (ONES * u64::from(b' ')),
        }
    }

    /// Where the first byte at or after `at` that ends `run` is;
    /// `bytes.len()` when there is none.
    #[inline]
    pub fn end_of(run: Run, bytes: &[u8], mut at: usize) -> usize {
        while let Some(&word) = bytes[at..].first_chunk::<8>() {
            let found = found(run, u64::from_le_bytes(word));
            if found != 0 {
                return at + (found.trailing_zeros() / 8) as usize;
            }
            at += 8;
        }
        tail(run, bytes, at)
    }

    /// [`end_of`] a byte at a time: the last bytes of the text.
    #[inline]
    pub fn tail(run: Run, bytes: &[u8], at: usize) -> usize {
        bytes[at..]
            .iter()
            .position(|&byte| run.stops(byte))
            .map_or(bytes.len(), |found| at + found)
    }
}

/// The block scanners with SSE2, 16 bytes a step. Their functions are
/// safe to call wherever SSE2 is, which is every x86_64 processor (it is
/// part of the architecture's baseline); the loads go through
/// `u128::from_le_bytes`, so nothing here touches a pointer.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
        _mm_setzero_si128, _mm_subs_epu8,
    };

    use super::Run;

    #[inline]
    #[target_feature(enable = "sse2")]
    fn load(chunk: &[u8; 16]) -> __m128i {
        let block = u128::from_le_bytes(*chunk);
        _mm_set_epi64x((block >> 64) as i64, block as i64)
    }

    /// A bit for each byte of `chunk` that is `byte`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn equal(block: __m128i, byte: u8) -> __m128i {
        _mm_cmpeq_epi8(block, _mm_set1_epi8(byte.cast_signed()))
    }

    /// [`super::portable::end_of`], 16 bytes a step.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn end_of(run: Run, bytes: &[u8], mut at: usize) -> usize {
        while let Some(chunk) = bytes[at..].first_chunk::<16>() {
            let block = load(chunk);
            // Bit i: whether byte i ends the run.
            let mask = match run {
                Run::StringBody => {
                    // A byte below 0x20 is one that saturates to zero once
                    // 0x1f is taken away.
                    let control = _mm_cmpeq_epi8(
                        _mm_subs_epu8(block, _mm_set1_epi8(0x1f)),
                        _mm_setzero_si128(),
                    );
                    let quote_or_backslash = _mm_or_si128(equal(block, b'"'), equal(block, b'\\'));
                    _mm_movemask_epi8(_mm_or_si128(quote_or_backslash, control))
                }
                Run::Spaces => !_mm_movemask_epi8(equal(block, b' ')) & 0xffff,
            };
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += 16;
        }
        super::portable::tail(run, bytes, at)
    }
}

impl<const PORTABLE: bool> Skipper<'_, PORTABLE> {
    /// Where the first byte at or after `at` that ends `run` is;
    /// `bytes.len()` when there is none.
    #[inline]
    #[allow(unsafe_code)]
    fn end_of(&self, run: Run, at: usize) -> usize {
        #[cfg(target_arch = "x86_64")]
        if !PORTABLE {
            // SAFETY: `sse2::end_of` only needs SSE2, which every x86_64
            // processor has.
            return unsafe { sse2::end_of(run, self.bytes, at) };
        }
        portable::end_of(run, self.bytes, at)
    }
}

impl<'a, const PORTABLE: bool> Skipper<'a, PORTABLE> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn whitespace(&mut self) {
        loop {
            // Most calls find none: every whitespace byte is at most a space.
            if self.peek().is_none_or(|byte| byte > b' ') {
                return;
            }
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

    /// Skips the spaces of the indentation after a newline, a block at a
    /// time.
    #[inline]
    fn indentation(&mut self) {
        self.at = self.end_of(Run::Spaces, self.at);
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
            at = self.end_of(Run::StringBody, at);
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    at += match ESCAPES[usize::from(*bytes.get(at + 1)?)] {
                        Escape::Short => 2,
                        Escape::Unicode => {
                            let &[a, b, c, d] = bytes.get(at + 2..at + 6)?.first_chunk()?;
                            let hex = |byte: u8| HEX[usize::from(byte)];
                            if !(hex(a) & hex(b) & hex(c) & hex(d)) {
                                return None;
                            }
                            6
                        }
                        Escape::Invalid => return None,
                    };
                }
                // A control byte.
                _ => return None,
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
        let portable = super::slots_with::<true>(text, origin, expand);
        prop_assert_eq!(&fast, &portable, "{:?}", text);
        let slow = spans::root_slots(text, origin, expand).ok();
        if fast.is_none() && text.contains(super::NUMBER_TOKEN) {
            // Left to serde_json on purpose.
            return Ok(());
        }
        prop_assert_eq!(fast, slow, "{:?}", text);
        Ok(())
    }

    /// The block scanners against a byte-at-a-time reference, from every
    /// start in texts whose odd byte sits at every place of a block.
    #[test]
    fn scanners_agree_with_a_byte_at_a_time_reference() {
        use super::Run;
        let fillers: [&[u8]; 3] = [b"a", b" ", "\u{e9}\u{1f600}\u{7f}".as_bytes()];
        let odd = [
            b'"', b'\\', 0, 0x1f, b'\n', b'\t', b'\r', b' ', 0x7f, 0x80, 0xff, b'x',
        ];
        for run in [Run::StringBody, Run::Spaces] {
            let reference = |bytes: &[u8], at: usize| {
                (at..bytes.len())
                    .find(|&i| run.stops(bytes[i]))
                    .unwrap_or(bytes.len())
            };
            for filler in fillers {
                for len in 0..40 {
                    for byte in odd {
                        for place in 0..=len {
                            let mut bytes: Vec<u8> =
                                filler.iter().copied().cycle().take(len).collect();
                            bytes.insert(place, byte);
                            for at in 0..=bytes.len() {
                                let want = reference(&bytes, at);
                                let portable = super::portable::end_of(run, &bytes, at);
                                assert_eq!(portable, want, "{run:?} {bytes:?} {at}");
                                #[cfg(target_arch = "x86_64")]
                                #[allow(unsafe_code)]
                                // SAFETY: SSE2 is on every x86_64 processor.
                                let sse2 = unsafe { super::sse2::end_of(run, &bytes, at) };
                                #[cfg(target_arch = "x86_64")]
                                assert_eq!(sse2, want, "{run:?} {bytes:?} {at}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Strings and indentation that cross the scanners' blocks, with an
    /// escape, a control byte or a multibyte character at every offset.
    #[test]
    fn agrees_with_serde_json_across_blocks() {
        let odd = [
            "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud800", "\\u12", "\\x", "\u{1}", "\t", "\u{1f}",
            "\u{7f}", "é", "😀", "\"", "\\",
        ];
        for before in 0..40 {
            for after in [0, 1, 7, 8, 15, 16, 17, 33] {
                for piece in odd {
                    let body = format!("{}{piece}{}", "a".repeat(before), "b".repeat(after));
                    agree(&format!("{{\"a\":\"{body}\"}}"), &[]).unwrap();
                    agree(&format!("{{\"{body}\":1}}"), &[]).unwrap();
                    let indent = " ".repeat(before);
                    agree(&format!("{{\n{indent}\"a\":\n{indent}\"{body}\"\n}}"), &[]).unwrap();
                    agree(&format!("{{\"a\":[\n{indent}{piece}1]}}"), &[]).unwrap();
                }
            }
        }
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
        let ws = prop::sample::select(vec![
            "",
            " ",
            "\n",
            "\t",
            "\r\n",
            "  ",
            "\n                   ",
        ]);
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "\"([a-z \\x7fé😀]{0,20}|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|\\\\ud83d\\\\ude00|\\\\ud800){0,12}\"",
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
