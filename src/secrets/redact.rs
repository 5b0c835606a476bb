//! Masking of values that may be secrets: no command prints one whole.
//!
//! Two layers. [`mask`] and [`display_value`] mask a value where the output
//! knows it holds one (an `env` value in `get`). [`Redactor`] is the one rule
//! behind every output: it learns every value that `scan` would flag (in the
//! configuration, in `.env` files, on the command line) and every value
//! mcpenv hands to a server, and masks each of them wherever it appears in
//! text or JSON, also in its escaped, percent-encoded and base64 forms, so a
//! new output, an error path or a server's echo cannot print one whole.
//!
//! Learning is kept for when it is needed: what a command is taught (the
//! arguments, every `.env` value) is only noted, in order, and turned into
//! needles the first time something is masked, so a command that prints
//! nothing masked (`run`, `env`) never scans what it read, nor compiles
//! the rules to do so. Masking is one pass over the text: at each position
//! the needles that start with the next bytes are looked up by those bytes,
//! and the longest one that is there is replaced.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::config::expansion;
use crate::config::model::{Field, ServerEntry};
use crate::secrets;
use crate::stores::references::Manager;

/// Masks a value: the first and last 4 characters of values of 16 or more
/// characters (`ghp_…9f3a`), `****` for shorter ones.
pub fn mask(value: &str) -> String {
    // ASCII (every token): a character is a byte, so the ends are slices.
    if value.is_ascii() {
        if value.len() < 16 {
            return "****".to_string();
        }
        let mut shown = String::with_capacity(4 + '…'.len_utf8() + 4);
        shown.push_str(&value[..4]);
        shown.push('…');
        shown.push_str(&value[value.len() - 4..]);
        return shown;
    }
    mask_chars(value)
}

/// [`mask`] counted in characters, for any text.
fn mask_chars(value: &str) -> String {
    let count = value.chars().count();
    if count >= 16 {
        let head: String = value.chars().take(4).collect();
        let tail: String = value.chars().skip(count - 4).collect();
        format!("{head}…{tail}")
    } else {
        "****".to_string()
    }
}

/// Merges the sorted buckets `theirs`, whose needles are numbered from
/// `offset` on in `needles`, into the sorted buckets `ours`.
fn merge_buckets<K: std::hash::Hash + Eq>(
    ours: &mut PrefixMap<K>,
    theirs: PrefixMap<K>,
    offset: u32,
    needles: &[(String, Replacement)],
) {
    let needle = |index: u32| needles[index as usize].0.as_bytes();
    for (key, bucket) in theirs {
        let shifted = bucket.into_iter().map(|index| index + offset);
        let mine = ours.entry(key).or_default();
        if mine.is_empty() {
            mine.extend(shifted);
            continue;
        }
        let old = std::mem::take(mine);
        mine.reserve(old.len() + shifted.len());
        let mut old = old.into_iter().peekable();
        let mut shifted = shifted.peekable();
        while let (Some(&a), Some(&b)) = (old.peek(), shifted.peek()) {
            // Ours are older: of equal needles they come first.
            if needle(a) <= needle(b) {
                mine.push(a);
                old.next();
            } else {
                mine.push(b);
                shifted.next();
            }
        }
        mine.extend(old);
        mine.extend(shifted);
    }
}

/// Fewer than [`MIN_FREE_TEXT`] characters; counted only where the
/// bytes leave it open (a character is 1 to 4 bytes).
fn too_short(secret: &str) -> bool {
    secret.len() < MIN_FREE_TEXT
        || (secret.len() < 4 * MIN_FREE_TEXT && secret.chars().count() < MIN_FREE_TEXT)
}

/// `text` percent-encoded as `utf8_percent_encode(text, NON_ALPHANUMERIC)`
/// writes it: every byte but an ASCII letter or digit as `%XX`. Written by
/// index into a buffer sized for the worst case: pushes are calls at the
/// release build's `opt-level = "s"`.
fn percent_encoded(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = vec![0; text.len() * 3];
    let mut at = 0;
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() {
            encoded[at] = byte;
            at += 1;
        } else {
            encoded[at] = b'%';
            encoded[at + 1] = HEX[usize::from(byte >> 4)];
            encoded[at + 2] = HEX[usize::from(byte & 15)];
            at += 3;
        }
    }
    encoded.truncate(at);
    // Letters, digits, `%` and hex digits: ASCII, so UTF-8.
    String::from_utf8(encoded).expect("percent-encoding writes ASCII")
}

/// `bytes` in base64 as the `STANDARD` engine writes it (padded) and as
/// `URL_SAFE_NO_PAD` does, in one pass, written by index as
/// [`percent_encoded`] is.
fn base64_forms(bytes: &[u8]) -> (String, String) {
    const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let length = bytes.len().div_ceil(3) * 4;
    // What a last group of 1 or 2 bytes leaves unwritten is the padding.
    let mut standard = vec![b'='; length];
    let mut url_safe = vec![0; length];
    let mut at = 0;
    for chunk in bytes.chunks(3) {
        let byte = |index: usize| u32::from(chunk.get(index).copied().unwrap_or(0));
        let group = byte(0) << 16 | byte(1) << 8 | byte(2);
        // 2 digits for 1 byte, 3 for 2, 4 for 3.
        for digit in 0..=chunk.len() {
            let sextet = ((group >> (18 - 6 * digit)) & 63) as usize;
            standard[at + digit] = STANDARD[sextet];
            url_safe[at + digit] = URL_SAFE[sextet];
        }
        at += chunk.len() + 1;
    }
    url_safe.truncate(at);
    // Both alphabets and `=` are ASCII, so UTF-8.
    (
        String::from_utf8(standard).expect("base64 writes ASCII"),
        String::from_utf8(url_safe).expect("base64 writes ASCII"),
    )
}

/// Shortest secret masked wherever it appears in free text; a shorter one
/// (a 4-letter URL password) would also match ordinary words, so it is
/// masked only where its place is known (the entry's field, `:pw@`).
pub const MIN_FREE_TEXT: usize = 6;

/// Bytes of a needle's start that index it: a text can hold a needle only
/// where it holds these.
const PREFIX: usize = 6;

/// Bytes that index a needle shorter than [`PREFIX`] (`:pw@`).
const SHORT_PREFIX: usize = 3;

/// Masked texts remembered, at most: a report repeats its strings (a file's
/// path in each of its findings), and each is masked once.
const MEMO_ENTRIES: usize = 1 << 17;

/// Longest text remembered masked; longer ones are rarely repeated.
const MEMO_BYTES: usize = 1024;

/// Hashes the few bytes of a needle's start packed into one integer, and
/// the texts remembered masked, a word at a time (the default SipHash
/// costs more than the lookup it guards, and these keys come from what
/// mcpenv prints, not from an adversary choosing collisions of a
/// randomised hash).
#[derive(Debug, Default, Clone, Copy)]
struct PrefixHasher(u64);

impl Hasher for PrefixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        let mut rest = [0; 8];
        rest[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.write_u64(u64::from_le_bytes(rest));
    }

    fn write_u32(&mut self, key: u32) {
        self.write_u64(u64::from(key));
    }

    fn write_u64(&mut self, key: u64) {
        // Fibonacci hashing: the high bits, which hashbrown uses, mix all.
        self.0 = (self.0.rotate_left(5) ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type PrefixMap<K> = HashMap<K, Vec<u32>, BuildHasherDefault<PrefixHasher>>;

/// What a needle is replaced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replacement {
    /// [`mask`] of the needle.
    Masked,
    /// `:****@`: a URL password in its place.
    UrlPassword,
}

/// Something taught and not yet turned into needles; its texts are kept
/// in the redactor's `noted` text (a 100,000-line `.env` is noted with a
/// copy, not 200,000 allocations).
#[derive(Debug)]
enum Lesson {
    Secret(Range<usize>),
    UrlPassword(Range<usize>),
    Basic(Range<usize>, Range<usize>),
    Env(Range<usize>, Range<usize>),
    Words(Vec<String>),
    Handed(Range<usize>),
}

/// Every secret value known to this run, masked in whatever it renders.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Taught, in order, and not yet learned (see the module's docs).
    pending: Vec<Lesson>,
    /// The texts of `pending`, one after another.
    noted: String,
    /// One per form of each secret, in the order learned: of two equal
    /// needles, the first one's replacement is used.
    needles: Vec<(String, Replacement)>,
    seen: foldhash::HashSet<String>,
    /// Needles by their first [`PREFIX`] bytes. A run can know tens of
    /// thousands of needles (a scan of a whole tree); a text is looked up
    /// by its own bytes at each position, so the count costs nothing.
    by_prefix: PrefixMap<u64>,
    /// Needles shorter than that (`:pw@`), by their first 3 bytes.
    short_by_prefix: PrefixMap<u32>,
    /// Whether a bucket got a needle since the buckets were sorted (each
    /// is sorted by needle, then by age, for a binary search).
    unsorted: bool,
    /// Texts masked since the needles last changed.
    memo: Memo,
    /// A bit per hash of the first [`SHORT_PREFIX`] bytes of some needle:
    /// a position whose bytes' bit is clear starts none, and costs no
    /// lookup in the maps above (most positions of a text). Empty until
    /// the first needle.
    starts: Vec<u64>,
}

/// Longest text whose positions are looked up in [`Redactor::starts`]
/// before the memo: about as many bytes as hashing it costs.
const LOOK_BEFORE_MEMO: usize = 24;

/// Texts masked, each with what it became: `None` when unchanged.
type Memo = HashMap<String, Option<String>, BuildHasherDefault<PrefixHasher>>;

/// Fewest items of an array masked on more than one core: each thread
/// costs about as much as masking a few dozen findings.
const PARALLEL_ITEMS: usize = 1024;

/// Bits of [`Redactor::starts`], a power of two: 64 KiB, a tenth of it
/// set by the 60,000 needles of a scan of 2,000 configs.
const START_BITS: usize = 1 << 19;

/// The bit of [`Redactor::starts`] for a needle's first bytes.
fn start_bit(prefix: &[u8; SHORT_PREFIX]) -> usize {
    start_bit_of_key(short_key(prefix))
}

/// [`start_bit`] of the bytes whose [`short_key`] is `key`.
fn start_bit_of_key(key: u32) -> usize {
    // Fibonacci hashing: the top bits mix all three bytes.
    let hash = key.wrapping_mul(0x9E37_79B1);
    (hash >> (32 - START_BITS.trailing_zeros())) as usize
}

/// Items a thread takes at a time from an array masked on every core.
const PARALLEL_RUN: usize = 256;

/// Shortest rendered text [`Shield::clean`] cleans on more than one core
/// (a scan's table of thousands of findings).
const PARALLEL_TEXT: usize = 256 * 1024;

/// Bytes of the runs of lines a thread cleans at a time.
const TEXT_RUN: usize = 64 * 1024;

impl Redactor {
    /// An empty redactor: masks nothing until it learns.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether it knows no secret at all, nor has anything to learn.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty() && self.pending.is_empty()
    }

    /// Learns a secret value: masked raw and in every form an output or a
    /// server may turn it into (JSON- and terminal-escaped, percent-encoded,
    /// base64).
    pub fn learn(&mut self, secret: &str) {
        let secret = self.note(secret);
        self.pending.push(Lesson::Secret(secret));
    }

    /// Learns a URL password: masked in free text when long enough, and as
    /// `:password@` whatever its length.
    pub fn learn_url_password(&mut self, password: &str) {
        let password = self.note(password);
        self.pending.push(Lesson::UrlPassword(password));
    }

    /// Learns an HTTP Basic credential as a client sends it:
    /// `base64(user:password)`, and the password itself.
    pub fn learn_basic(&mut self, user: &str, password: &str) {
        let lesson = Lesson::Basic(self.note(user), self.note(password));
        self.pending.push(lesson);
    }

    /// Learns every secret `scan` finds in every scope's servers.
    pub fn learn_inventory(&mut self, inventory: &crate::config::inventory::Inventory) {
        for entry in &inventory.entries {
            self.learn_entry(&entry.entry);
        }
    }

    /// Learns the secrets among the values of `.env`, `.env.local`, the
    /// user's store, `.env.example`, Claude Code's settings `env` and the
    /// environment.
    pub fn learn_sources(&mut self, sources: &crate::envfiles::sources::EnvSources) {
        let examples = sources.projects.iter().map(|project| &project.example);
        for file in sources.dotenv_files().into_iter().chain(examples) {
            for (name, value) in file.entries() {
                // A reference names where a value is kept (`keychain:…`,
                // `op://…`) and is shown as such; the value it stands for
                // is learnt when it is read. Ciphertext stays masked.
                if matches!(
                    crate::stores::references::manager_of(value),
                    Some(Manager::Keychain | Manager::OnePassword)
                ) {
                    continue;
                }
                self.learn_env(name, value);
            }
            // A line dotenvy could not parse may still hold a value, and
            // `check` quotes such lines.
            if !file.problems.is_empty() {
                let lines: Vec<&str> = file.text.as_deref().unwrap_or_default().lines().collect();
                for problem in &file.problems {
                    if let Some(line) = problem
                        .line
                        .checked_sub(1)
                        .and_then(|index| lines.get(index))
                    {
                        self.learn_words(&[(*line).to_string()]);
                    }
                }
            }
        }
        for (_, values) in &sources.settings {
            for (name, value) in values {
                self.learn_env(name, value);
            }
        }
        for (name, value) in &sources.process {
            self.learn_env(name, value);
        }
    }

    /// Learns every secret `scan` finds in `entry`, and every placeholder
    /// default that would be one (`${API_TOKEN:-ghp_…}`).
    pub fn learn_entry(&mut self, entry: &ServerEntry) {
        self.learn_scanned_entry(entry, &secrets::scan_entry(entry));
    }

    /// [`Redactor::learn_entry`] for an entry already scanned: `findings`
    /// are what [`secrets::scan_entry`] found in it.
    pub fn learn_scanned_entry(&mut self, entry: &ServerEntry, findings: &[secrets::Finding]) {
        let fields = entry.expandable_fields_where(expansion::may_hold_references);
        self.learn_scanned_fields(findings, &fields);
    }

    /// [`Redactor::learn_scanned_entry`] given the entry's expandable
    /// fields that may hold a placeholder: those
    /// [`may_hold_references`](expansion::may_hold_references) keeps, or
    /// more (a field without a `$` has no default to teach), so a scan
    /// lists them once for this and for its placeholder notes.
    pub fn learn_scanned_fields(
        &mut self,
        findings: &[secrets::Finding],
        fields: &[(Field, &str)],
    ) {
        self.note_findings(findings);
        for (_, text) in fields {
            self.note_defaults(text);
        }
    }

    fn note_findings(&mut self, findings: &[secrets::Finding]) {
        for finding in findings {
            let secret = self.note(&finding.secret);
            self.pending.push(
                if finding.field == Field::UrlPassword
                    || finding.rule == secrets::URL_USERINFO_PASSWORD
                {
                    Lesson::UrlPassword(secret)
                } else {
                    Lesson::Secret(secret)
                },
            );
        }
    }

    /// Notes the literal defaults of `text`'s placeholders as values of
    /// their variables.
    fn note_defaults(&mut self, text: &str) {
        // A default follows a `:-` (`${NAME:-default}`): a text without
        // one has none, and its references are not parsed.
        if !text.contains(":-") {
            return;
        }
        for reference in expansion::references(text) {
            if let Some(default) = reference.default.filter(|default| !default.is_empty()) {
                let lesson = Lesson::Env(self.note(&reference.name), self.note(&default));
                self.pending.push(lesson);
            }
        }
    }

    /// Learns `value` if `scan` would flag it as the value of the variable
    /// `name` (a `.env` line, a `-e NAME=value`), or if the name says it
    /// is a secret and the value is a literal (`GITHUB_TOKEN=dev`): what
    /// is shown is masked even where `scan` would call the value a decoy.
    pub fn learn_env(&mut self, name: &str, value: &str) {
        let lesson = Lesson::Env(self.note(name), self.note(value));
        self.pending.push(lesson);
    }

    /// Learns the secrets among command-line words: token formats, secret
    /// flags (`--api-key V`, `--token=V`) and `NAME=value` pairs.
    pub fn learn_words(&mut self, words: &[String]) {
        if !words.is_empty() {
            self.pending.push(Lesson::Words(words.to_vec()));
        }
    }

    /// Learns a value mcpenv hands to a server (an env or header value, an
    /// argument) so that the server's echo of it is masked: whatever `scan`
    /// would flag, and any opaque token-like value that no reader needs to
    /// see in an error (see [`is_opaque`]).
    pub fn learn_handed(&mut self, value: &str) {
        let value = self.note(value);
        self.pending.push(Lesson::Handed(value));
    }

    /// Learns now what was taught so far (otherwise done by the first
    /// mask), and sorts the buckets for masking: a scan's worker settles
    /// its own redactor before it is [absorbed](Self::absorb), so that
    /// work is done on its core and the absorbing one only merges.
    pub fn settle(&mut self) {
        self.learn_pending();
        self.sort_buckets();
    }

    fn learn_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let lessons = std::mem::take(&mut self.pending);
        let noted = std::mem::take(&mut self.noted);
        for lesson in lessons {
            self.study(&noted, lesson);
            // What a lesson taught (a default inside an env value) is
            // learned right after it, as learning it at once did.
            self.learn_pending();
        }
    }

    fn note(&mut self, text: &str) -> Range<usize> {
        let start = self.noted.len();
        self.noted.push_str(text);
        start..self.noted.len()
    }

    /// Learns everything `other` knows and was taught, after what this one
    /// knows (a scan's workers, absorbed in file order).
    pub fn absorb(&mut self, mut other: Self) {
        self.settle();
        other.settle();
        if self.needles.is_empty() {
            // Nothing of ours to keep first: take the other's whole.
            let mut seen = std::mem::take(&mut other.seen);
            seen.extend(std::mem::take(&mut self.seen));
            *self = Self { seen, ..other };
            return;
        }
        if other.needles.is_empty() {
            self.seen.extend(other.seen);
            return;
        }
        match u32::try_from(self.needles.len() + other.needles.len()) {
            Ok(_) => self.merge_needles(
                other.needles,
                other.by_prefix,
                other.short_by_prefix,
                &other.starts,
            ),
            // Past four billion needles `push_needle` keeps what it can.
            Err(_) => {
                for (needle, replacement) in other.needles {
                    self.push_needle(needle, replacement);
                }
            }
        }
        self.seen.extend(other.seen);
    }

    /// Adds the needles of another settled redactor after ours, with its
    /// sorted buckets: each is merged into ours with the other's needles
    /// numbered after ours, which keeps it sorted by needle, then by age,
    /// as adding them one by one and sorting again would (the order is
    /// total: no two needles have one number).
    fn merge_needles(
        &mut self,
        needles: Vec<(String, Replacement)>,
        by_prefix: PrefixMap<u64>,
        short_by_prefix: PrefixMap<u32>,
        starts: &[u64],
    ) {
        // Sorted already unless a lesson came in between: then sorted now.
        self.sort_buckets();
        let Ok(offset) = u32::try_from(self.needles.len()) else {
            return;
        };
        self.needles.extend(needles);
        merge_buckets(&mut self.by_prefix, by_prefix, offset, &self.needles);
        merge_buckets(
            &mut self.short_by_prefix,
            short_by_prefix,
            offset,
            &self.needles,
        );
        if self.starts.is_empty() {
            self.starts = starts.to_vec();
        } else {
            for (ours, theirs) in self.starts.iter_mut().zip(starts) {
                *ours |= theirs;
            }
        }
        self.forget_masked();
    }

    fn study(&mut self, noted: &str, lesson: Lesson) {
        match lesson {
            Lesson::Secret(secret) => self.learn_now(&noted[secret]),
            Lesson::UrlPassword(password) => self.learn_url_password_now(&noted[password]),
            Lesson::Basic(user, password) => self.learn_basic_now(&noted[user], &noted[password]),
            Lesson::Env(name, value) => self.learn_env_now(&noted[name], &noted[value]),
            Lesson::Words(words) => self.learn_words_now(&words),
            Lesson::Handed(value) => self.learn_handed_now(&noted[value]),
        }
    }

    fn learn_now(&mut self, secret: &str) {
        if too_short(secret) || self.seen.contains(secret) {
            return;
        }
        self.seen.insert(secret.to_string());
        let mut forms = Vec::with_capacity(7);
        forms.push(secret.to_string());
        // A form that is the secret itself (most tokens need no escaping)
        // is not made again.
        if (secret.contains(['"', '\\']) || secret.contains(|c: char| c.is_control()))
            && let Ok(json) = serde_json::to_string(secret)
        {
            forms.push(json[1..json.len() - 1].to_string());
        }
        if let Cow::Owned(escaped) = crate::mechanics::display::escape(secret) {
            forms.push(escaped);
        }
        // Percent-encoding changes every byte but letters and digits.
        if !secret.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
            forms.push(percent_encoded(secret));
        }
        // What the form serializer leaves as it is.
        if !secret
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'*' | b'-' | b'.' | b'_'))
        {
            forms.push(url::form_urlencoded::byte_serialize(secret.as_bytes()).collect());
        }
        let (standard, url_safe) = base64_forms(secret.as_bytes());
        forms.push(standard);
        forms.push(url_safe);
        forms.sort();
        forms.dedup();
        for form in forms {
            self.push_needle(form, Replacement::Masked);
        }
    }

    fn push_needle(&mut self, needle: String, replacement: Replacement) {
        let Ok(index) = u32::try_from(self.needles.len()) else {
            // Four billion needles: a run never gets near; masking what it
            // knows beats failing.
            return;
        };
        let bytes = needle.as_bytes();
        if let Some(prefix) = bytes.first_chunk::<PREFIX>() {
            self.by_prefix
                .entry(long_key(prefix))
                .or_default()
                .push(index);
        } else if let Some(prefix) = bytes.first_chunk::<SHORT_PREFIX>() {
            self.short_by_prefix
                .entry(short_key(prefix))
                .or_default()
                .push(index);
        } else {
            // `:@`, an empty password: nothing to hide, and it is everywhere.
            return;
        }
        if let Some(prefix) = bytes.first_chunk::<SHORT_PREFIX>() {
            if self.starts.is_empty() {
                self.starts = vec![0; START_BITS / 64];
            }
            let bit = start_bit(prefix);
            self.starts[bit / 64] |= 1 << (bit % 64);
        }
        self.unsorted = true;
        self.forget_masked();
        self.needles.push((needle, replacement));
    }

    fn learn_url_password_now(&mut self, password: &str) {
        self.learn_now(password);
        let needle = format!(":{password}@");
        if !self.seen.contains(&needle) {
            self.seen.insert(needle.clone());
            self.push_needle(needle, Replacement::UrlPassword);
            let encoded = format!(":{}@", percent_encoded(password));
            self.push_needle(encoded, Replacement::UrlPassword);
        }
    }

    fn learn_basic_now(&mut self, user: &str, password: &str) {
        self.learn_url_password_now(password);
        let pair = format!("{user}:{password}");
        for encoded in [
            base64::engine::general_purpose::STANDARD.encode(&pair),
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(&pair),
        ] {
            if !self.seen.contains(&encoded) {
                self.seen.insert(encoded.clone());
                self.push_needle(encoded, Replacement::Masked);
            }
        }
    }

    fn learn_env_now(&mut self, name: &str, value: &str) {
        if secrets::keyword_secret(name, value) {
            // `Bearer …` keeps its scheme readable, as `display_value` does.
            let value = value.trim();
            let credential = value
                .split_once(' ')
                .filter(|(scheme, _)| {
                    SCHEMES
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(scheme))
                })
                .map_or(value, |(_, credential)| credential.trim());
            // A scheme alone (`Bearer ` with its variable sent empty) is
            // no secret, and it is everywhere.
            if !SCHEMES
                .iter()
                .any(|scheme| scheme.eq_ignore_ascii_case(credential))
            {
                self.learn_now(credential);
            }
        }
        // What `learn_entry` of `{"env": {name: value}}` learns, without
        // building that entry for each of a `.env`'s lines.
        self.note_findings(&secrets::scan_env_value(name, value));
        self.note_defaults(value);
    }

    fn learn_words_now(&mut self, words: &[String]) {
        let args: Vec<Value> = words.iter().cloned().map(Value::String).collect();
        let mut fields = Map::new();
        fields.insert("command".to_string(), Value::String(String::new()));
        fields.insert("args".to_string(), Value::Array(args));
        self.learn_entry(&ServerEntry::from_value(Value::Object(fields)));
        for word in words {
            // `NAME=value`, `NAME:value` (a mistyped `-e`), `Name: value`.
            let split = word
                .split_once('=')
                .or_else(|| word.split_once(':'))
                .map(|(name, value)| (name.trim(), value.trim()));
            if let Some((name, value)) = split
                && !name.is_empty()
                && !name.contains(char::is_whitespace)
            {
                self.learn_env(name, value);
            }
        }
    }

    fn learn_handed_now(&mut self, value: &str) {
        let value = value.trim();
        let value = value
            .strip_prefix("--")
            .and_then(|flag| flag.split_once('=').map(|(_, value)| value))
            .unwrap_or(value);
        if is_opaque(value) {
            self.learn_now(value);
        }
    }

    /// Forgets the texts masked before a needle was added.
    fn forget_masked(&mut self) {
        // Clearing an empty map still writes its whole table.
        if !self.memo.is_empty() {
            self.memo.clear();
        }
    }

    /// Sorts the buckets a needle was added to: by needle, then by age.
    fn sort_buckets(&mut self) {
        if !self.unsorted {
            return;
        }
        let needles = &self.needles;
        let order = |a: &u32, b: &u32| {
            needles[*a as usize]
                .0
                .as_bytes()
                .cmp(needles[*b as usize].0.as_bytes())
                .then(a.cmp(b))
        };
        for bucket in self.by_prefix.values_mut() {
            if !bucket.is_sorted_by(|a, b| order(a, b).is_le()) {
                bucket.sort_unstable_by(order);
            }
        }
        for bucket in self.short_by_prefix.values_mut() {
            if !bucket.is_sorted_by(|a, b| order(a, b).is_le()) {
                bucket.sort_unstable_by(order);
            }
        }
        self.unsorted = false;
    }

    /// `text` with every known secret masked.
    pub fn mask_text<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        self.settle();
        if self.needles.is_empty() || text.len() < SHORT_PREFIX {
            return Cow::Borrowed(text);
        }
        self.sort_buckets();
        let mut memo = std::mem::take(&mut self.memo);
        let masked = self.masked(&mut memo, text);
        self.memo = memo;
        masked
    }

    /// [`Self::mask_text`] of a settled redactor with sorted buckets,
    /// remembering in `memo`.
    fn masked<'t>(&self, memo: &mut Memo, text: &'t str) -> Cow<'t, str> {
        if self.needles.is_empty() || text.len() < SHORT_PREFIX {
            return Cow::Borrowed(text);
        }
        // A short text (a key, a rule's name, a masked value) is looked
        // at before it is hashed: most start no needle anywhere, and then
        // stay as they are, unremembered.
        if text.len() <= LOOK_BEFORE_MEMO && self.next_start(text.as_bytes(), 0).is_none() {
            return Cow::Borrowed(text);
        }
        let remembered = text.len() <= MEMO_BYTES;
        if remembered && let Some(known) = memo.get(text) {
            return known
                .as_ref()
                .map_or(Cow::Borrowed(text), |masked| Cow::Owned(masked.clone()));
        }
        let masked = self.replace_all(text);
        if remembered {
            if memo.len() >= MEMO_ENTRIES {
                memo.clear();
            }
            memo.insert(text.to_string(), masked.clone());
        }
        masked.map_or(Cow::Borrowed(text), Cow::Owned)
    }

    /// `text` with each leftmost-longest needle replaced (a secret that
    /// contains another is masked whole); `None` when none is there.
    fn replace_all(&self, text: &str) -> Option<String> {
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let mut copied = 0;
        let mut at = 0;
        while let Some(start) = self.next_start(bytes, at) {
            at = start;
            let Some(index) = self.longest_at(&bytes[at..]) else {
                at += 1;
                continue;
            };
            let (needle, replacement) = &self.needles[index as usize];
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            // A needle is UTF-8 text, so it starts and ends on characters.
            out.push_str(&text[copied..at]);
            match replacement {
                Replacement::Masked => out.push_str(&mask(needle)),
                Replacement::UrlPassword => out.push_str(":****@"),
            }
            at += needle.len();
            copied = at;
        }
        if let Some(out) = &mut out {
            out.push_str(&text[copied..]);
        }
        out
    }

    /// The first position from `at` on whose next bytes have their bit in
    /// [`Self::starts`] (where a needle may start), the bytes' key rolled
    /// on a byte at a time: most positions of a text cost a few
    /// instructions.
    fn next_start(&self, bytes: &[u8], mut at: usize) -> Option<usize> {
        let starts = self.starts.as_slice();
        let rest = bytes.get(at..)?.first_chunk::<SHORT_PREFIX>()?;
        let mut key = short_key(rest);
        loop {
            let bit = start_bit_of_key(key);
            if starts
                .get(bit / 64)
                .is_some_and(|word| word & (1 << (bit % 64)) != 0)
            {
                return Some(at);
            }
            let &next = bytes.get(at + SHORT_PREFIX)?;
            key = key >> 8 | u32::from(next) << (8 * (SHORT_PREFIX - 1));
            at += 1;
        }
    }

    /// The longest needle `rest` starts with (the oldest of equal ones).
    fn longest_at(&self, rest: &[u8]) -> Option<u32> {
        let bit = start_bit(rest.first_chunk::<SHORT_PREFIX>()?);
        if self
            .starts
            .get(bit / 64)
            .is_none_or(|word| word & (1 << (bit % 64)) == 0)
        {
            return None;
        }
        if let Some(prefix) = rest.first_chunk::<PREFIX>()
            && let Some(bucket) = self.by_prefix.get(&long_key(prefix))
            && let Some(found) = self.longest_in(bucket, rest)
        {
            return Some(found);
        }
        let prefix = rest.first_chunk::<SHORT_PREFIX>()?;
        let bucket = self.short_by_prefix.get(&short_key(prefix))?;
        self.longest_in(bucket, rest)
    }

    /// The longest needle of a sorted `bucket` that `rest` starts with.
    /// The needles `rest` starts with are prefixes of one another; the
    /// greatest needle not above `rest` is the longest of them, unless it
    /// parts from `rest` first, and then every one of them is a prefix of
    /// what they share.
    fn longest_in(&self, bucket: &[u32], rest: &[u8]) -> Option<u32> {
        let needle = |index: u32| self.needles[index as usize].0.as_bytes();
        let mut limit = rest;
        loop {
            let below = bucket.partition_point(|&index| needle(index) <= limit);
            let candidate = needle(*bucket.get(below.checked_sub(1)?)?);
            if limit.starts_with(candidate) {
                let first = bucket.partition_point(|&index| needle(index) < candidate);
                return bucket.get(first).copied();
            }
            let shared = candidate
                .iter()
                .zip(limit)
                .take_while(|(a, b)| a == b)
                .count();
            limit = &limit[..shared];
        }
    }

    /// `value` with every known secret masked in every string (keys too).
    /// The items of a long array (a scan's findings) are masked on every
    /// core, each thread remembering its own texts: what a text becomes
    /// depends on the needles alone.
    pub fn mask_json(&mut self, value: &mut Value) {
        self.settle();
        if self.needles.is_empty() {
            return;
        }
        self.sort_buckets();
        let mut memo = std::mem::take(&mut self.memo);
        self.masked_json(&mut memo, value);
        self.memo = memo;
    }

    /// [`Self::mask_json`] of a settled redactor with sorted buckets,
    /// remembering in `memo`.
    fn masked_json(&self, memo: &mut Memo, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Cow::Owned(masked) = self.masked(memo, text) {
                    *text = masked;
                }
            }
            Value::Array(items) if items.len() >= PARALLEL_ITEMS => {
                self.masked_items(items);
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| self.masked_json(memo, item)),
            Value::Object(members) => {
                // Keys rarely hold a secret: the object is rebuilt only
                // when one does.
                if members
                    .keys()
                    .any(|key| matches!(self.masked(memo, key), Cow::Owned(_)))
                {
                    let old = std::mem::take(members);
                    for (key, mut member) in old {
                        self.masked_json(memo, &mut member);
                        let key = self.masked(memo, &key).into_owned();
                        members.insert(key, member);
                    }
                } else {
                    members
                        .values_mut()
                        .for_each(|member| self.masked_json(memo, member));
                }
            }
            // A number where a string belongs (`"PIN": 123456`) can be a
            // secret too: shown as the masked string it would be.
            Value::Number(number) => {
                let text = number.to_string();
                if let Cow::Owned(masked) = self.masked(memo, &text) {
                    *value = Value::String(masked);
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// Masks `items` on every core ([`on_every_core`]), a run of
    /// [`PARALLEL_RUN`] items at a time, each thread with its own memo.
    fn masked_items(&self, items: &mut [Value]) {
        let runs: Vec<Mutex<&mut [Value]>> =
            items.chunks_mut(PARALLEL_RUN).map(Mutex::new).collect();
        on_every_core(runs.len(), Memo::default, |memo, index| {
            runs[index]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter_mut()
                .for_each(|item| self.masked_json(memo, item));
        });
    }
}

fn long_key(prefix: &[u8; PREFIX]) -> u64 {
    let mut key = [0; 8];
    key[..PREFIX].copy_from_slice(prefix);
    u64::from_le_bytes(key)
}

fn short_key(prefix: &[u8; SHORT_PREFIX]) -> u32 {
    let mut key = [0; 4];
    key[..SHORT_PREFIX].copy_from_slice(prefix);
    u32::from_le_bytes(key)
}

/// Whether a value handed to a server is an opaque token rather than
/// something a reader of its error needs (a path, a URL, a package, a
/// word): 8 or more characters, no spaces, no `/`, letters mixed with digits
/// or symbols, and at least 3 bits of entropy per character.
pub fn is_opaque(value: &str) -> bool {
    let length = value.chars().count();
    if length < 8 || value.contains(char::is_whitespace) || value.contains('/') {
        return false;
    }
    if !secrets::is_decoy(value) && secrets::shannon_entropy(value) >= 3.0 {
        let letters = value.chars().any(char::is_alphabetic);
        let others = value.chars().any(|c| !c.is_alphabetic());
        return letters && others;
    }
    false
}

/// Auth schemes that are not secret and stay readable before a placeholder.
const SCHEMES: [&str; 4] = ["Bearer", "Basic", "Token", "Bot"];

/// A value as shown by default: whole when it holds nothing but `${VAR}`
/// placeholders (optionally after an auth scheme such as `Bearer`), so a
/// shared config stays readable; masked otherwise.
pub fn display_value(value: &str) -> String {
    if let Some(shown) = references_only(value) {
        return shown;
    }
    // Keep an auth scheme readable: `Bearer sk_l…fXYZ`.
    for scheme in SCHEMES {
        if let Some(credential) = value
            .strip_prefix(scheme)
            .and_then(|rest| rest.strip_prefix(' '))
        {
            return format!("{scheme} {}", mask(credential.trim_start()));
        }
    }
    mask(value)
}

/// `value` as shown when it holds nothing but placeholders (after an auth
/// scheme): whole, except a literal default that may itself be the secret
/// (`${TOKEN:-ghp_…}`), which is masked. `None` when it holds anything else.
fn references_only(value: &str) -> Option<String> {
    let mut rest = value.trim();
    let mut shown = String::new();
    for scheme in SCHEMES {
        if let Some(after) = rest
            .strip_prefix(scheme)
            .and_then(|after| after.strip_prefix(' '))
        {
            shown = format!("{scheme} ");
            rest = after.trim_start();
            break;
        }
    }
    if rest.is_empty() {
        return None;
    }
    while let Some(after) = rest.strip_prefix("${") {
        let close = after.find('}')?;
        let mut parts = after[..close].splitn(2, ":-");
        let name = parts.next().unwrap_or_default();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return None;
        }
        match parts.next() {
            Some(default) if !default.is_empty() && !secrets::is_decoy(default) => {
                shown.push_str(&format!("${{{name}:-{}}}", mask(default)));
            }
            _ => shown.push_str(&rest[..close + 3]),
        }
        rest = &after[close + 1..];
    }
    rest.is_empty().then_some(shown)
}

/// Every secret a settled redactor knows, shared by threads that mask:
/// each masks through a [`Masker`] of its own.
#[derive(Debug, Clone, Copy)]
pub struct Masks<'r>(&'r Redactor);

impl<'r> Masks<'r> {
    /// A masker for one thread, remembering the texts it masked.
    pub fn masker(self) -> Masker<'r> {
        Masker {
            redactor: self.0,
            memo: Memo::default(),
        }
    }

    /// `text` with every secret masked and stray controls escaped, as
    /// [`Shield::clean`] makes it, cleaned in runs of lines about
    /// `run_bytes` long on every core.
    fn clean_in_runs(self, text: &str, run_bytes: usize) -> String {
        let redactor = self.0;
        // A run ends after a line break that no secret in the text
        // crosses (a secret may hold one: a private key), nor a style
        // sequence: each run is then cleaned as it is within the whole.
        let breaking = redactor
            .needles
            .iter()
            .filter(|(needle, _)| needle.contains('\n'))
            .map(|(needle, _)| needle.len())
            .max();
        let bytes = text.as_bytes();
        let crossed = |end: usize| {
            breaking.is_some_and(|longest| {
                let mut at = end.saturating_sub(longest);
                while let Some(start) = redactor.next_start(bytes, at).filter(|&at| at < end) {
                    if redactor
                        .longest_at(&bytes[start..])
                        .is_some_and(|index| start + redactor.needles[index as usize].0.len() > end)
                    {
                        return true;
                    }
                    at = start + 1;
                }
                false
            })
        };
        let mut runs = Vec::new();
        let mut start = 0;
        let mut from = run_bytes;
        while let Some(line_end) = bytes
            .get(start + from..)
            .and_then(|after| after.iter().position(|&byte| byte == b'\n'))
        {
            let end = start + from + line_end + 1;
            if crossed(end) {
                from = end - start;
                continue;
            }
            runs.push(&text[start..end]);
            start = end;
            from = run_bytes;
        }
        runs.push(&text[start..]);
        on_every_core(
            runs.len(),
            || self.masker(),
            |masker, index| {
                let masked = masker.mask(runs[index]);
                crate::mechanics::display::escape_stray(&masked).into_owned()
            },
        )
        .concat()
    }
}

/// `work(state, index)` for each index below `count`, on every core:
/// each thread, this one too, makes its `state` and takes the next index
/// until none is left, so whatever threads cannot be started, this one
/// does what the others do not. The results come back in index order.
pub fn on_every_core<S, T: Send>(
    count: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let run = || {
        let mut state = state();
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                return done;
            }
            done.push((index, work(&mut state, index)));
        }
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(count);
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                // Work on values nested deep needs the stack the main
                // thread has.
                std::thread::Builder::new()
                    .stack_size(crate::mechanics::document::STACK_BYTES)
                    .spawn_scoped(scope, run)
                    .ok()
            })
            .collect();
        let mut done = run();
        for helper in helpers {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

/// Masks texts on one thread, each as [`Shield::clean_json`] masks a JSON
/// string.
#[derive(Debug)]
pub struct Masker<'r> {
    redactor: &'r Redactor,
    memo: Memo,
}

impl Masker<'_> {
    /// `text` with every known secret masked.
    pub fn mask<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        self.redactor.masked(&mut self.memo, text)
    }
}

/// What this run knows must never be printed whole.
#[derive(Debug, Default)]
pub struct Shield {
    redactor: Mutex<Redactor>,
    learned_inventory: AtomicBool,
    learned_sources: AtomicBool,
}

impl crate::stores::references::LearnsSecrets for Shield {
    fn learn_secret(&self, secret: &str) {
        self.learn(|redactor| redactor.learn(secret));
    }
}

impl Shield {
    /// A shield that already knows the secrets among the command line's
    /// words (a mistyped `-e TOKEN:ghp_…` is masked in its usage error).
    pub fn for_arguments(words: &[String]) -> Self {
        let shield = Self::default();
        shield.learn(|redactor| redactor.learn_words(words));
        shield
    }

    /// Teaches the redactor something.
    pub fn learn(&self, teach: impl FnOnce(&mut Redactor)) {
        teach(&mut self.redactor());
    }

    /// Learns everything `redactor` knows and was taught, after what this
    /// shield knows.
    pub fn absorb(&self, redactor: Redactor) {
        self.redactor().absorb(redactor);
    }

    /// Learns every secret `scan` finds in every scope.
    pub fn learn_inventory(&self, inventory: &crate::config::inventory::Inventory) {
        self.redactor().learn_inventory(inventory);
        self.learned_inventory.store(true, Ordering::Relaxed);
    }

    /// Learns the secrets among the values of `.env`, `.env.local`, the
    /// user's store, `.env.example`, Claude Code's settings `env` and the
    /// environment.
    pub fn learn_sources(&self, sources: &crate::envfiles::sources::EnvSources) {
        self.redactor().learn_sources(sources);
        self.learned_sources.store(true, Ordering::Relaxed);
    }

    /// Whether the configuration and the env files were learned already.
    pub fn knows_world(&self) -> (bool, bool) {
        (
            self.learned_inventory.load(Ordering::Relaxed),
            self.learned_sources.load(Ordering::Relaxed),
        )
    }

    /// Rendered text made safe: secrets masked, stray controls escaped.
    pub fn clean(&self, rendered: &str) -> String {
        if rendered.len() >= PARALLEL_TEXT {
            return self.with_masks(|masks| masks.clean_in_runs(rendered, TEXT_RUN));
        }
        let masked = self.redactor().mask_text(rendered).into_owned();
        crate::mechanics::display::escape_stray(&masked).into_owned()
    }

    /// A JSON document with every secret masked (strings stay exact
    /// otherwise: JSON escaping makes controls inert).
    pub fn clean_json(&self, value: &mut Value) {
        self.redactor().mask_json(value);
    }

    /// Runs `mask` with [`Masks`] of every secret this shield knows, for
    /// masking texts on several threads at once (each text as
    /// [`Self::clean_json`] masks a JSON string). Nothing is learned
    /// meanwhile: the shield is held, so `mask` must not use it.
    pub fn with_masks<T>(&self, mask: impl FnOnce(Masks<'_>) -> T) -> T {
        let mut redactor = self.redactor();
        redactor.settle();
        redactor.sort_buckets();
        mask(Masks(&redactor))
    }

    fn redactor(&self) -> std::sync::MutexGuard<'_, Redactor> {
        // A panic while holding the lock leaves a redactor that is still
        // whole (learning only appends), so a poisoned lock is used as is.
        self.redactor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_by_length() {
        assert_eq!(mask("ghp_0123456789abcdef9f3a"), "ghp_…9f3a");
        assert_eq!(mask("short"), "****");
        assert_eq!(mask("0123456789abcde"), "****");
        assert_eq!(mask("0123456789abcdef"), "0123…cdef");
        assert_eq!(mask(""), "****");
        assert_eq!(mask("ééééé12345678901234"), "éééé…1234");
    }

    proptest::proptest! {
        /// The forms a secret is learned in are the crates' own.
        #[test]
        fn hand_written_forms_are_the_crates(text in proptest::prop_oneof!["[ -~]{0,40}", ".{0,24}"]) {
            let (standard, url_safe) = base64_forms(text.as_bytes());
            proptest::prop_assert_eq!(standard, base64::engine::general_purpose::STANDARD.encode(&text));
            proptest::prop_assert_eq!(url_safe, base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&text));
            proptest::prop_assert_eq!(
                percent_encoded(&text),
                percent_encoding::utf8_percent_encode(&text, percent_encoding::NON_ALPHANUMERIC).to_string()
            );
            proptest::prop_assert_eq!(too_short(&text), text.chars().count() < MIN_FREE_TEXT);
        }

        /// The ASCII path of `mask` shows what the character count shows.
        #[test]
        fn ascii_masks_as_characters_do(
            value in proptest::prop_oneof!["[ -~]{0,40}", "[a-z0-9_é…-]{0,30}", ".{0,24}"],
        ) {
            proptest::prop_assert_eq!(mask(&value), mask_chars(&value));
        }
    }

    #[test]
    fn placeholders_stay_readable() {
        assert_eq!(display_value("${GITHUB_TOKEN}"), "${GITHUB_TOKEN}");
        assert_eq!(display_value("Bearer ${API_TOKEN}"), "Bearer ${API_TOKEN}");
        assert_eq!(display_value("${A}${B:-x}"), "${A}${B:-x}");
        assert_eq!(
            display_value("Bearer sk-live-0123456789abcdef"),
            "Bearer sk-l…cdef"
        );
        assert_eq!(display_value("postgres://u:pw@h/${DB}"), "post…{DB}");
        assert_eq!(display_value("$TOKEN"), "****");
        assert_eq!(display_value("${PORT:-3000}"), "${PORT:-3000}");
        assert_eq!(
            display_value("${API_TOKEN:-ghp_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345}"),
            "${API_TOKEN:-ghp_…2345}"
        );
    }

    #[test]
    fn only_texts_holding_a_whole_secret_change() {
        let mut redactor = Redactor::new();
        redactor.learn("secret_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345abcdefg");
        redactor.learn_url_password("pw9");
        redactor.learn_url_password("");
        // Same first bytes, not the secret: left alone.
        assert!(matches!(
            redactor.mask_text("generic-secret"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(redactor.mask_text("a:b@c"), Cow::Borrowed(_)));
        assert_eq!(
            redactor.mask_text("x secret_Zq8mW3xR7vT2nK9pL4sJ6hF1dG5bC0aY2345abcdefg y"),
            "x secr…defg y"
        );
        assert_eq!(redactor.mask_text("db://u:pw9@h"), "db://u:****@h");
    }

    #[test]
    fn a_learned_secret_is_masked_in_every_form() {
        let secret = "sk_live_0123456789abcdefXYZ9f3a";
        let mut redactor = Redactor::new();
        redactor.learn(secret);
        let text = format!(
            "raw {secret} json {} b64 {} pct {}",
            serde_json::to_string(secret).unwrap(),
            base64::engine::general_purpose::STANDARD.encode(secret),
            percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC),
        );
        let masked = redactor.mask_text(&text).into_owned();
        assert!(!masked.contains(secret), "{masked}");
        assert!(!masked.contains("0123456789abcdef"), "{masked}");
        assert!(masked.contains("raw sk_l…9f3a"), "{masked}");
    }

    #[test]
    fn dotenv_references_are_no_secrets() {
        let sources = crate::envfiles::sources::EnvSources {
            process: std::collections::BTreeMap::new(),
            projects: Vec::new(),
            user_dotenv: crate::envfiles::dotenv::DotEnv::parse(
                std::path::Path::new("/home/u/.config/mcpenv/.env"),
                "SENTRY_TOKEN=keychain:github.com/acme/widgets/SENTRY_TOKEN\n\
                 LINEAR_API_KEY=op://Engineering/Linear/credential\n\
                 STRIPE_KEY=encrypted:BDx9c2VjcmV0IGNpcGhlcnRleHQ\n\
                 API_TOKEN=Zq8rT2vL9xWc4nBvKp3mQw7y\n"
                    .to_string(),
            ),
            settings: Vec::new(),
            interactive_only: Vec::new(),
        };
        let mut redactor = Redactor::new();
        redactor.learn_sources(&sources);
        let text = "keychain:github.com/acme/widgets/SENTRY_TOKEN op://Engineering/Linear/credential encrypted:BDx9c2VjcmV0IGNpcGhlcnRleHQ Zq8rT2vL9xWc4nBvKp3mQw7y";
        let masked = redactor.mask_text(text).into_owned();
        assert!(
            masked.starts_with(
                "keychain:github.com/acme/widgets/SENTRY_TOKEN op://Engineering/Linear/credential "
            ),
            "{masked}"
        );
        assert!(!masked.contains("BDx9c2VjcmV0IGNpcGhlcnRleHQ"), "{masked}");
        assert!(!masked.contains("Zq8rT2vL9xWc4nBvKp3mQw7y"), "{masked}");
    }

    #[test]
    fn entries_teach_their_secrets_structurally() {
        let entry = ServerEntry::from_value(serde_json::json!({
            "command": "npx",
            "args": ["--api-key=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "postgresql://app:Tr0ub4dor3x@db.internal:5432/prod"],
            "env": {"API_TOKEN": "${API_TOKEN:-ghp_R8s2Kq9ZpX4mW7vT1nB6yH3cJ5dL0fG8aE2u}"}
        }));
        let mut redactor = Redactor::new();
        redactor.learn_entry(&entry);
        let shown = redactor
            .mask_text("npx --api-key=sk_live_4eC39HqLyjWDarjtT1zdp7dc postgresql://app:Tr0ub4dor3x@db.internal:5432/prod ${API_TOKEN:-ghp_R8s2Kq9ZpX4mW7vT1nB6yH3cJ5dL0fG8aE2u}")
            .into_owned();
        assert_eq!(
            shown,
            "npx --api-key=sk_l…p7dc postgresql://app:****@db.internal:5432/prod ${API_TOKEN:-ghp_…aE2u}"
        );
    }

    #[test]
    fn json_strings_and_keys_are_masked() {
        let mut redactor = Redactor::new();
        redactor.learn("ghp_0123456789abcdefghijABCDEFGHIJ012345");
        let mut value = serde_json::json!({"a": ["x ghp_0123456789abcdefghijABCDEFGHIJ012345"], "ghp_0123456789abcdefghijABCDEFGHIJ012345": 1});
        redactor.mask_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"a": ["x ghp_…2345"], "ghp_…2345": 1})
        );
    }

    #[test]
    fn a_long_array_is_masked_as_its_items_are_one_by_one() {
        let secrets = [
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "123456789012",
        ];
        let mut redactor = Redactor::new();
        for secret in secrets {
            redactor.learn(secret);
        }
        redactor.learn_url_password("pw9");
        // Items of every kind, secrets in keys, strings and numbers, and a
        // long array inside a long one; a run of items ends mid-array.
        let item = |index: usize| {
            let secret = secrets[index % secrets.len()];
            match index % 5 {
                0 => serde_json::json!({"file": format!("f{index}"), "value": secret}),
                1 => serde_json::json!({ secret: index, "url": "db://u:pw9@h" }),
                2 => serde_json::json!(123_456_789_012_u64),
                3 => serde_json::json!([format!("x {secret} y"), null, true]),
                _ => serde_json::json!(format!("plain {index}")),
            }
        };
        let mut inner: Vec<Value> = (0..PARALLEL_ITEMS + 7).map(item).collect();
        let mut items: Vec<Value> = (0..PARALLEL_ITEMS * 3 + PARALLEL_RUN / 2)
            .map(item)
            .collect();
        items.insert(5, Value::Array(inner.clone()));
        let mut value = serde_json::json!({"findings": items.clone()});
        redactor.mask_json(&mut value);
        // One by one: each item alone is below the parallel threshold.
        for item in &mut inner {
            redactor.mask_json(item);
        }
        for item in &mut items {
            if item.is_array() && item.as_array().is_some_and(|all| all.len() > 10) {
                *item = Value::Array(inner.clone());
            } else {
                redactor.mask_json(item);
            }
        }
        assert_eq!(value, serde_json::json!({"findings": items}));
        let shown = value.to_string();
        assert!(
            secrets.iter().all(|secret| !shown.contains(secret)) && !shown.contains("pw9@"),
            "{shown}"
        );
    }

    /// What masking was before it was one pass: an Aho-Corasick automaton
    /// of every needle, leftmost-longest, the first of equal needles.
    fn masked_by_automaton(redactor: &mut Redactor, text: &str) -> String {
        redactor.settle();
        let automaton = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(redactor.needles.iter().map(|(needle, _)| needle))
            .unwrap();
        let replacements: Vec<String> = redactor
            .needles
            .iter()
            .map(|(needle, replacement)| match replacement {
                Replacement::Masked => mask(needle),
                Replacement::UrlPassword => ":****@".to_string(),
            })
            .collect();
        automaton.replace_all(text, &replacements)
    }

    proptest::proptest! {
        #[test]
        fn one_pass_masks_as_the_automaton_did(
            secrets in proptest::collection::vec("[ab:@_x]{3,12}", 1..8),
            passwords in proptest::collection::vec("[ab:x]{0,5}", 0..3),
            text in "[ab:@_x y]{0,80}",
        ) {
            let mut redactor = Redactor::new();
            for secret in &secrets {
                redactor.learn(secret);
            }
            for password in &passwords {
                redactor.learn_url_password(password);
            }
            let expected = masked_by_automaton(&mut redactor, &text);
            proptest::prop_assert_eq!(redactor.mask_text(&text).into_owned(), expected.clone());
            // Remembered, the same again.
            proptest::prop_assert_eq!(redactor.mask_text(&text).into_owned(), expected);
        }
    }

    proptest::proptest! {
        /// The rolled key finds the positions whose bit a fresh key of
        /// their bytes finds.
        #[test]
        fn next_start_finds_what_each_position_s_bit_says(
            secrets in proptest::collection::vec("[ab:@_x]{3,12}", 0..6),
            text in "[ab:@_x yé]{0,60}",
            from in 0usize..70,
        ) {
            let mut redactor = taught(&secrets);
            redactor.settle();
            let bytes = text.as_bytes();
            let expected = (from..bytes.len().saturating_sub(SHORT_PREFIX - 1)).find(|&at| {
                let bit = start_bit(bytes[at..].first_chunk::<SHORT_PREFIX>().unwrap());
                redactor.starts.get(bit / 64).is_some_and(|word| word & (1 << (bit % 64)) != 0)
            });
            proptest::prop_assert_eq!(redactor.next_start(bytes, from), expected);
        }
    }

    proptest::proptest! {
        /// A text without `:-` has no reference with a default, so
        /// `note_defaults` may skip it.
        #[test]
        fn only_a_text_with_a_colon_dash_has_defaults(text in "[a-zA-Z_ ${}:-]{0,16}") {
            let defaults = expansion::references(&text)
                .into_iter()
                .filter(|reference| reference.default.is_some())
                .count();
            proptest::prop_assert!(text.contains(":-") || defaults == 0);
        }
    }

    /// Two redactors, the second absorbed by the first by adding each of
    /// its needles in turn, as absorbing did before it merged buckets.
    fn absorbed_by_pushing(first: &[String], second: &[String]) -> Redactor {
        let (mut one, mut other) = (taught(first), taught(second));
        one.settle();
        other.settle();
        for (needle, replacement) in std::mem::take(&mut other.needles) {
            one.push_needle(needle, replacement);
        }
        one.seen.extend(other.seen);
        one.sort_buckets();
        one
    }

    /// A redactor taught `words`: a secret each, or a URL password after
    /// a `:`.
    fn taught(words: &[String]) -> Redactor {
        let mut redactor = Redactor::new();
        for word in words {
            match word.strip_prefix(':') {
                Some(password) => redactor.learn_url_password(password),
                None => redactor.learn(word),
            }
        }
        redactor
    }

    proptest::proptest! {
        /// Merging the buckets of an absorbed redactor gives the needles,
        /// the buckets (in their order) and the start bits that adding its
        /// needles one by one and sorting gave.
        #[test]
        fn absorbing_merges_as_adding_each_needle_did(
            first in proptest::collection::vec("[ab:@_x]{3,12}", 0..10),
            second in proptest::collection::vec("[ab:@_x]{3,12}", 0..10),
        ) {
            let expected = absorbed_by_pushing(&first, &second);
            let mut merged = taught(&first);
            merged.absorb(taught(&second));
            merged.sort_buckets();
            proptest::prop_assert_eq!(&merged.needles, &expected.needles);
            proptest::prop_assert_eq!(&merged.by_prefix, &expected.by_prefix);
            proptest::prop_assert_eq!(&merged.short_by_prefix, &expected.short_by_prefix);
            proptest::prop_assert_eq!(&merged.starts, &expected.starts);
            proptest::prop_assert_eq!(&merged.seen, &expected.seen);
        }
    }

    #[test]
    fn prefixes_shared_by_many_needles_find_the_longest() {
        let mut redactor = Redactor::new();
        for secret in [
            "secret_abc",
            "secret_abcdef",
            "secret_abd",
            "secret_b",
            "secret_abcde9",
        ] {
            redactor.learn(secret);
        }
        for text in [
            "x secret_abcdefg secret_abcde secret_abc9 secret_ab secret_b",
            "secret_abcde9 secret_abd secret_abcdef",
        ] {
            let expected = masked_by_automaton(&mut redactor, text);
            assert_eq!(redactor.mask_text(text), expected);
        }
    }

    #[test]
    fn what_is_taught_is_learned_in_order_when_first_needed() {
        let mut redactor = Redactor::new();
        redactor.learn_env("URL", "${API_TOKEN:-Zq8mW3xR7vT2nK9pL4sJ6hF1}");
        redactor.learn_words(&["--token=Yp7nB2vC9xZ4mK8qL3wR".to_string()]);
        assert!(redactor.needles.is_empty(), "nothing learned before a mask");
        assert!(!redactor.is_empty());
        let shown = redactor
            .mask_text("Zq8mW3xR7vT2nK9pL4sJ6hF1 Yp7nB2vC9xZ4mK8qL3wR")
            .into_owned();
        assert_eq!(shown, "Zq8m…6hF1 Yp7n…L3wR");
        assert!(redactor.pending.is_empty() && redactor.noted.is_empty());
    }

    proptest::proptest! {
        /// Taught the fields that may hold a placeholder form (what a scan
        /// lists once for its notes too), a redactor learns what it learns
        /// from the entry's own list of those that may hold a reference.
        #[test]
        fn defaults_learned_from_the_scans_fields_are_the_entrys(
            values in proptest::collection::vec(
                proptest::sample::select(vec![
                    "plain",
                    "${API_TOKEN:-Zx8kQ2mN7pL4vR9tYw3B}",
                    "${GITHUB_TOKEN:-ghp_0123456789abcdefghijABCDEFGHIJ012345}",
                    "{env:TOKEN}",
                    "${env:TOKEN}",
                    "$TOKEN",
                    "Bearer ${AUTH:-sk_live_4eC39HqLyjWDarjtT1zdp7dc}",
                    "https://u:${PW:-hunter2hunter2}@h/x",
                ]),
                1..6,
            ),
            remote in proptest::bool::ANY,
        ) {
            let entry = if remote {
                let headers: serde_json::Map<String, Value> = values
                    .iter()
                    .enumerate()
                    .map(|(index, value)| (format!("H{index}"), Value::from(*value)))
                    .collect();
                serde_json::json!({"type": "http", "url": values[0], "headers": headers})
            } else {
                let env: serde_json::Map<String, Value> = values
                    .iter()
                    .enumerate()
                    .map(|(index, value)| (format!("TOKEN_{index}"), Value::from(*value)))
                    .collect();
                serde_json::json!({"command": values[0], "args": values, "env": env})
            };
            let entry = ServerEntry::from_value(entry);
            let findings = secrets::scan_entry(&entry);
            let mut own = Redactor::new();
            own.learn_scanned_entry(&entry, &findings);
            own.settle();
            let mut given = Redactor::new();
            given.learn_scanned_fields(
                &findings,
                &entry.expandable_fields_where(expansion::may_hold_forms),
            );
            given.settle();
            proptest::prop_assert_eq!(&given.needles, &own.needles);
        }
    }

    /// [`Shield::clean`] of the whole text on one core.
    fn cleaned_whole(shield: &Shield, text: &str) -> String {
        let masked = shield.redactor().mask_text(text).into_owned();
        crate::mechanics::display::escape_stray(&masked).into_owned()
    }

    proptest::proptest! {
        #[test]
        fn text_cleaned_in_runs_is_cleaned_as_the_whole_is(
            secrets in proptest::collection::vec("[ab:@_x\n]{3,12}", 1..8),
            passwords in proptest::collection::vec("[ab:x]{0,5}", 0..3),
            text in "[ab:@_x y\n\u{1b}\\[0-9;m\u{7}é]{0,200}",
            run_bytes in 1usize..40,
        ) {
            let shield = Shield::default();
            shield.learn(|redactor| {
                for secret in &secrets {
                    redactor.learn(secret);
                }
                for password in &passwords {
                    redactor.learn_url_password(password);
                }
            });
            let whole = cleaned_whole(&shield, &text);
            let in_runs = shield.with_masks(|masks| masks.clean_in_runs(&text, run_bytes));
            proptest::prop_assert_eq!(in_runs, whole);
        }
    }

    #[test]
    fn a_long_text_is_cleaned_on_every_core_as_on_one() {
        let shield = Shield::default();
        shield.learn(|redactor| {
            redactor.learn("ghp_0123456789abcdefghijABCDEFGHIJ012345");
            redactor.learn_url_password("pw9");
        });
        let line = "ghp_0123456789abcdefghijABCDEFGHIJ012345 \u{1b}[1mbold\u{1b}[0m \u{7} db://u:pw9@h é\n";
        let text = line.repeat(PARALLEL_TEXT / line.len() + TEXT_RUN / line.len() * 3);
        let cleaned = shield.clean(&text);
        assert_eq!(cleaned, cleaned_whole(&shield, &text));
        assert!(!cleaned.contains("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assert!(cleaned.contains("\\u{7}"));

        // A secret holding a line break: no run ends inside it.
        shield.learn(|redactor| redactor.learn("line1\nline2-secret-value"));
        let text = format!("{text}line1\nline2-secret-value\n");
        let cleaned = shield.clean(&text);
        assert_eq!(cleaned, cleaned_whole(&shield, &text));
        assert!(!cleaned.contains("line2-secret-value"));
    }

    #[test]
    fn absorbed_redactors_mask_as_one_that_learned_it_all() {
        let secrets = [
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        ];
        let mut one = Redactor::new();
        let mut parts = [Redactor::new(), Redactor::new()];
        for (index, secret) in secrets.iter().enumerate() {
            one.learn(secret);
            parts[index].learn(secret);
            parts[index].learn_url_password("pw9");
        }
        one.learn_url_password("pw9");
        let mut shield = Redactor::new();
        for part in parts {
            shield.absorb(part);
        }
        let text = format!("{} and {} at db://u:pw9@h", secrets[0], secrets[1]);
        assert_eq!(shield.mask_text(&text), one.mask_text(&text));
        assert_eq!(
            shield.mask_text(&text),
            "ghp_…2345 and sk_l…p7dc at db://u:****@h"
        );
    }

    #[test]
    fn handed_values_are_masked_only_when_opaque() {
        assert!(is_opaque("Zx8kQ2mN7pL4vR9t"));
        assert!(!is_opaque("production"));
        assert!(!is_opaque("/home/ada/data"));
        assert!(!is_opaque("@modelcontextprotocol/server-everything"));
        assert!(!is_opaque("-y"));
        let mut redactor = Redactor::new();
        redactor.learn_handed("--k=Zx8kQ2mN7pL4vR9t");
        assert_eq!(
            redactor.mask_text("bad option: --k=Zx8kQ2mN7pL4vR9t"),
            "bad option: --k=Zx8k…vR9t"
        );
    }
}
