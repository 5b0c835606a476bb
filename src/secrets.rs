//! Secret detection in server entries (pure): the token-format rules, the
//! env-name heuristic and the value filter of `reference/secrets.md` §1–§4.
//!
//! [`scan_entry`] walks an entry the way §2 describes (never the raw file
//! text): `command`, `args` (single elements, `--flag value` pairs, inline
//! `--flag=value`, docker-style `NAME=value`), `env` values (token rules, then
//! the name heuristic), `url` (userinfo password, secret query parameters)
//! and `headers` (`Authorization` schemes, API-key-style header names). Every
//! string also goes through the token rules: one pass of a literal
//! prefilter (`prefilter.rs`) names the rules whose literals it holds, so a
//! string holding none costs that pass and no regex, and a rule is compiled
//! only when a string first needs it.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_NO_PAD};
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};
use serde_json::Value;

use crate::config::model::{Field, ServerEntry};

pub mod extraction_plan;
mod formats;
pub mod node;
mod prefilter;
// Generated, one rule a line (see the file).
#[rustfmt::skip]
mod rule_literals;
pub mod redact;
pub mod sarif;
pub mod value_fit;
pub mod value_position;

use formats::{RULE_SPECS, WEAK_TOKEN_RULES};
use prefilter::Prefilter;

/// Only this many bytes of a string are scanned (64 KiB): bounds the lazy
/// private-key rule on a `BEGIN` without an `END`.
pub const MAX_SCAN_BYTES: usize = 64 * 1024;

/// Rule id of a value flagged by its secret-ish name alone (env variables,
/// docker-style `NAME=value` arguments).
pub const GENERIC_SECRET: &str = "generic-secret";

/// Rule id of a 40-character AWS secret under an `AWS_SECRET_ACCESS_KEY`-like
/// name (the format has no prefix, so it needs the name).
pub const AWS_SECRET_ACCESS_KEY: &str = "aws-secret-access-key";

/// Rule id of the private key of a Google Cloud service-account key file
/// held in one value (`{"type": "service_account", "private_key": …}`).
pub const GCP_SERVICE_ACCOUNT_KEY: &str = "gcp-service-account-key";

/// Rule id of a URL userinfo password (`scheme://user:PASSWORD@host`).
pub const URL_USERINFO_PASSWORD: &str = "url-userinfo-password";

/// Rule id of a secret-named URL query parameter (`?api_key=…`).
pub const QUERY_PARAM_SECRET: &str = "query-param-secret";

/// Rule id of the credential of an `Authorization` header (`Bearer …`).
pub const AUTH_HEADER: &str = "auth-header";

/// Rule id of the value of an API-key-style header (`X-API-Key`, …).
pub const API_KEY_HEADER: &str = "api-key-header";

/// Rule id of the value of a secret command-line flag (`--api-key V`).
pub const CLI_FLAG_SECRET: &str = "cli-flag-secret";

/// One token-format rule of `reference/secrets.md` §1.
#[derive(Debug)]
pub struct Rule {
    /// Stable id reported in findings (`github-pat`).
    pub id: &'static str,
    /// Who issues such tokens (`GitHub classic PAT`).
    pub provider: &'static str,
    /// The whole pattern (`lead`, `head`, `tail`), `\b` made ASCII.
    pattern: String,
    /// Whether the pattern starts with its literal and has no unbounded
    /// body (see [`Rule::compiled`]).
    starts_with_literal: bool,
    /// The fixed start of a token (`ghp_`, `https://hooks.slack.com/`),
    /// which says nothing about whether the rest is made up.
    prefix_pattern: String,
    /// Compiled on the first string that holds one of the rule's literals:
    /// a command that scans nothing compiles nothing.
    compiled: OnceLock<CompiledRule>,
}

#[derive(Debug)]
struct CompiledRule {
    regex: Regex,
    /// The prefix pattern, compiled on the first match that needs it (a
    /// rule whose literal a scan meets may never match).
    prefix: OnceLock<Regex>,
    /// Whether the secret is capture group 1 rather than the whole match.
    captures: bool,
    tier: Tier,
    /// The longest match there can be, if bounded: an anchored search
    /// reads no further (a backtracker clears what it may visit).
    longest: Option<usize>,
}

impl Rule {
    /// The rule's regexes, compiled on first use. A rule that starts with
    /// its literal is checked where a string holds that literal, by the
    /// bounded backtracker, which needs no warming up; a lazy DFA builds
    /// its states as it searches, on each thread, and pays that only for
    /// rules with a lead before their literal (an URL's scheme) or a long
    /// body (a PEM block), which it then reads faster. Both find the same
    /// leftmost-first matches `regex::Regex` does.
    fn compiled(&self) -> &CompiledRule {
        self.compiled.get_or_init(|| {
            let build = |pattern: &str| {
                Regex::builder()
                    .configure(Regex::config().hybrid(!self.starts_with_literal))
                    .build(pattern)
                    // The patterns are constants, compiled by a unit test.
                    .expect("rule patterns compile")
            };
            let regex = build(&self.pattern);
            let captures = regex.captures_len() > 1;
            let longest = regex_syntax::parse(&self.pattern)
                .ok()
                .and_then(|hir| hir.properties().maximum_len());
            let tier = if captures {
                Tier::Context
            } else if WEAK_TOKEN_RULES.contains(&self.id) {
                Tier::WeakToken
            } else {
                Tier::Token
            };
            CompiledRule {
                regex,
                prefix: OnceLock::new(),
                captures,
                tier,
                longest,
            }
        })
    }

    /// The regex of the rule's fixed start, compiled on first use. It runs
    /// once per match, anchored, on the token alone: the DFAs (a full one,
    /// most of what building it cost, and the lazy one with its reverse
    /// automaton) are left out, as the backtracker finds the same match.
    fn prefix(&self) -> &Regex {
        self.compiled().prefix.get_or_init(|| {
            Regex::builder()
                .configure(Regex::config().hybrid(false).dfa(false))
                .build(&self.prefix_pattern)
                // The patterns are constants, compiled by a unit test.
                .expect("rule prefix patterns compile")
        })
    }
}

/// One secret found in a server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Where the secret sits.
    pub field: Field,
    /// Id of the rule that found it: a [`Rule::id`] or one of the rule-id
    /// constants of this module.
    pub rule: &'static str,
    /// The secret itself.
    pub secret: String,
    /// Byte range of `secret` in the string the field names: the env value,
    /// the argument, the header value, `command`, or `url` for
    /// [`Field::Url`], [`Field::UrlPassword`] and [`Field::UrlQuery`].
    pub span: Range<usize>,
}

/// How much a candidate is trusted when two overlap; lower wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// A provider prefix with a fixed shape.
    Token,
    /// A prefix that also occurs in ordinary text (`BSA`, `secret_`, `SK`).
    WeakToken,
    /// A secret found by its context: flag, header, URL part.
    Context,
    /// A secret found by its name alone.
    Generic,
}

/// Shortest string any rule can match; shorter strings skip the regex pass.
const MIN_RULE_MATCH: usize = 11;

/// Unicode `\b` would make the lazy DFA give up on non-ASCII text.
fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// The rules, uncompiled: ids and patterns only, so listing them (SARIF's
/// descriptions) costs nothing.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    RULE_SPECS
        .iter()
        .map(|&(id, provider, lead, head, tail)| Rule {
            id,
            provider,
            pattern: ascii_boundaries(&format!("{lead}{head}{tail}")),
            starts_with_literal: lead.is_empty() && !tail.contains(r"[\s\S]"),
            prefix_pattern: ascii_boundaries(&format!("^(?:{lead}{head})")),
            compiled: OnceLock::new(),
        })
        .collect()
});

/// Which rules a string may match, from the literals their heads start
/// with; built on the first string long enough to hold a token.
static PREFILTER: OnceLock<Prefilter> = OnceLock::new();

fn prefilter() -> &'static Prefilter {
    PREFILTER.get_or_init(|| Prefilter::new(RULE_SPECS))
}

/// Every token-format rule, in the reference's order.
pub fn rules() -> &'static [Rule] {
    &RULES
}

// ---------------------------------------------------------------------------
// Walking an entry

/// Finds the secrets of one server entry, in entry field order, then by
/// position; one finding per (field, span) and no two overlapping in the
/// same string.
pub fn scan_entry(entry: &ServerEntry) -> Vec<Finding> {
    // Entries repeat their values (a scan of a tree, of many projects).
    scan_entry_remembering(entry, true)
}

/// [`scan_entry`], with what strings say remembered or not.
fn scan_entry_remembering(entry: &ServerEntry, remember: bool) -> Vec<Finding> {
    let mut scanner = Scanner {
        remember,
        ..Scanner::default()
    };
    for (key, value) in entry.fields() {
        match (key.as_str(), value) {
            ("command", Value::String(command)) => scanner.command(command),
            ("args", Value::Array(args)) => scanner.args(args.iter().map(Value::as_str)),
            ("env", Value::Object(env)) => {
                for (key, value) in env {
                    // A value of the wrong type (`"PIN": 1234`, `"KEY": ["sk-…"]`)
                    // is no less a secret: Claude Code refuses the entry, but the
                    // file still holds it and `get` still shows it.
                    for text in leaf_texts(value) {
                        scanner.env_value(key, &text);
                    }
                }
            }
            ("url", Value::String(url)) => scanner.url(url),
            ("headers", Value::Object(headers)) => {
                scanner.headers(headers.iter().map(|(name, value)| (name.as_str(), value)));
            }
            _ => {}
        }
    }
    scanner.findings
}

/// [`scan_entry`] of an entry's members borrowed from its file's text
/// (`scan`'s own reading, see [`node`]): the same rules, the same findings.
pub fn scan_entry_members(entry: &node::Members<'_>) -> Vec<Finding> {
    let mut scanner = Scanner {
        remember: true,
        ..Scanner::default()
    };
    for (key, value) in entry {
        match (key.as_ref(), value) {
            ("command", node::Node::String(command)) => scanner.command(command),
            ("args", node::Node::Array(args)) => scanner.args(args.iter().map(node::Node::as_str)),
            ("env", node::Node::Object(env)) => {
                for (key, value) in env {
                    for text in value.leaf_texts() {
                        scanner.env_value(key, text);
                    }
                }
            }
            ("url", node::Node::String(url)) => scanner.url(url),
            ("headers", node::Node::Object(headers)) => {
                scanner.headers(headers.iter().map(|(name, value)| (name.as_ref(), value)));
            }
            _ => {}
        }
    }
    scanner.findings
}

/// A string of an entry, whichever way it was read.
trait AsText {
    fn text(&self) -> Option<&str>;
}

impl AsText for Value {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
}

impl AsText for node::Node<'_> {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
}

/// What [`scan_entry`] finds in `{"env": {name: value}}`, without building
/// that entry (a `.env` file's lines, one by one).
pub fn scan_env_value(name: &str, value: &str) -> Vec<Finding> {
    let mut scanner = Scanner::default();
    scanner.env_value(name, value);
    scanner.findings
}

/// A possible secret in one string, before overlaps are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    tier: Tier,
    rule: &'static str,
    span: Range<usize>,
    /// A token-shaped decoy (`ghp_xxxx…`): never reported, but it keeps
    /// weaker rules from reporting the same text.
    decoy: bool,
}

#[derive(Default)]
struct Scanner {
    /// Reused for every string so a clean string allocates nothing.
    candidates: Vec<Candidate>,
    findings: Vec<Finding>,
    /// Whether what a string says is remembered per string (see [`Memo`]):
    /// for entries, not for a `.env`'s lines, read once each.
    remember: bool,
}

impl Scanner {
    fn command(&mut self, command: &str) {
        let text = capped(command);
        self.candidates.clear();
        text_candidates(text, false, self.remember, &mut self.candidates);
        self.emit(text, |_| Field::Command);
    }

    /// `args`' items, `None` for one that is no string.
    fn args<'s>(&mut self, args: impl Iterator<Item = Option<&'s str>>) {
        // Strength of the secret flag the previous element was, if any.
        let mut pending: Option<Strength> = None;
        // Whether that flag takes a password, which is one whatever its
        // shape (`--password hunter2`), as under a password name.
        let mut pending_password = false;
        for (index, item) in args.enumerate() {
            let Some(arg) = item else {
                pending = None;
                pending_password = false;
                continue;
            };
            let text = capped(arg);
            self.candidates.clear();
            text_candidates(text, true, self.remember, &mut self.candidates);
            let is_flag = text.starts_with('-')
                && !is_number(text)
                // `--api-key -T9wY…`: a random value may start with `-`.
                && !(pending.is_some() && is_dash_led_value(text));
            let password = std::mem::take(&mut pending_password);
            if let Some(strength) = pending.take()
                && !is_flag
                && let Some(span) = flag_value(password, text, strength)
            {
                self.push(Tier::Context, CLI_FLAG_SECRET, span);
            }
            if is_flag {
                match text.split_once('=') {
                    Some((flag, value)) => {
                        if let Some(strength) = flag_strength(flag)
                            && let Some(span) = flag_value(is_password_flag(flag), value, strength)
                        {
                            let offset = flag.len() + 1;
                            self.push(
                                Tier::Context,
                                CLI_FLAG_SECRET,
                                span.start + offset..span.end + offset,
                            );
                        }
                    }
                    None => {
                        pending = flag_strength(text);
                        pending_password = pending.is_some() && is_password_flag(text);
                    }
                }
            } else if let Some(span) = connection_string_password(text) {
                self.push(Tier::Context, GENERIC_SECRET, span);
            } else if let Some((name, value)) = text.split_once('=')
                && is_env_name(name)
                && self.candidates.is_empty()
            {
                // Docker-style `-e NAME=value`.
                if let Some(span) = name_gated(name, value) {
                    let offset = name.len() + 1;
                    self.push(
                        Tier::Generic,
                        span.0,
                        span.1.start + offset..span.1.end + offset,
                    );
                }
            }
            self.emit(text, |_| Field::Arg(index));
        }
    }

    fn env_value(&mut self, key: &str, value: &str) {
        let text = capped(value);
        self.candidates.clear();
        if self.remember {
            env_candidates(key, text, &mut self.candidates);
        } else {
            env_candidates_of(key, text, false, &mut self.candidates);
        }
        self.emit(text, |_| Field::Env(key.to_string()));
    }

    fn url(&mut self, url: &str) {
        let text = capped(url);
        self.candidates.clear();
        text_candidates(text, true, self.remember, &mut self.candidates);
        let parts = UrlParts::parse(text);
        self.emit(text, |span| match &parts {
            Some(parts) => parts.field_of(text, span),
            None => Field::Url,
        });
    }

    fn headers<'s, V: AsText + 's>(&mut self, headers: impl Iterator<Item = (&'s str, &'s V)>) {
        for (name, value) in headers {
            let Some(value) = value.text() else {
                continue;
            };
            let text = capped(value);
            self.candidates.clear();
            text_candidates(text, false, self.remember, &mut self.candidates);
            if name.eq_ignore_ascii_case("authorization")
                || name.eq_ignore_ascii_case("proxy-authorization")
            {
                if let Some(span) = authorization_credential(text) {
                    self.push(Tier::Context, AUTH_HEADER, span);
                }
            } else if let Some(strength) = name_strength(name)
                && let Some(span) = accept_value(text, strength)
            {
                self.push(Tier::Context, API_KEY_HEADER, span);
            }
            self.emit(text, |_| Field::Header(name.to_string()));
        }
    }

    fn push(&mut self, tier: Tier, rule: &'static str, span: Range<usize>) {
        self.candidates.push(Candidate {
            tier,
            rule,
            span,
            decoy: false,
        });
    }

    /// Resolves overlaps (best tier, then earliest, then longest) and turns
    /// the survivors into findings.
    fn emit(&mut self, text: &str, field: impl Fn(&Range<usize>) -> Field) {
        match self.candidates.len() {
            0 => return,
            1 => {}
            _ => {
                self.candidates.sort_by_key(|candidate| {
                    (
                        candidate.tier,
                        candidate.span.start,
                        usize::MAX - candidate.span.end,
                    )
                });
                let mut kept: Vec<Candidate> = Vec::with_capacity(self.candidates.len());
                for candidate in self.candidates.drain(..) {
                    if !kept
                        .iter()
                        .any(|other| overlaps(&other.span, &candidate.span))
                    {
                        kept.push(candidate);
                    }
                }
                kept.sort_by_key(|candidate| candidate.span.start);
                self.candidates = kept;
            }
        }
        for candidate in self.candidates.drain(..) {
            if candidate.decoy {
                continue;
            }
            self.findings.push(Finding {
                field: field(&candidate.span),
                rule: candidate.rule,
                secret: text[candidate.span.clone()].to_string(),
                span: candidate.span,
            });
        }
    }
}

/// The texts a JSON value holds: itself when a string, a number's or a
/// boolean's digits, every leaf of an array or object.
fn leaf_texts(value: &Value) -> Vec<std::borrow::Cow<'_, str>> {
    match value {
        Value::String(text) => vec![std::borrow::Cow::Borrowed(text.as_str())],
        Value::Number(number) => vec![std::borrow::Cow::Owned(number.to_string())],
        Value::Array(items) => items.iter().flat_map(leaf_texts).collect(),
        Value::Object(members) => members.values().flat_map(leaf_texts).collect(),
        Value::Bool(_) | Value::Null => Vec::new(),
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// The first [`MAX_SCAN_BYTES`] of a string, cut at a character boundary.
fn capped(text: &str) -> &str {
    &text[..text.floor_char_boundary(MAX_SCAN_BYTES)]
}

/// Values remembered per thread in each memo, at most; later ones are
/// worked out each time (a hostile tree's million values cannot grow it).
const MEMO_ENTRIES: usize = 1 << 14;

/// Longest value remembered (with the entries above, at most 4 MiB of
/// text a thread in each memo); longer ones are worked out each time.
const MEMO_BYTES: usize = 256;

/// What pure functions of a string gave, worked out once per distinct
/// string on each thread, for entries: configs repeat the same values (`npx`, a
/// package, a path, `${VAR}`, `NODE_ENV=production`) in entry after entry
/// and file after file.
struct Memo<V>(std::collections::HashMap<Box<str>, V, foldhash::fast::RandomState>);

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Self(std::collections::HashMap::default())
    }
}

impl<V> Memo<V> {
    /// `then` applied to what `work` gives for `key`: remembered from the
    /// first time while the memo has room, else worked out again.
    fn with<R>(
        &mut self,
        key: &str,
        work: impl FnOnce() -> V,
        then: impl FnOnce(&mut V) -> R,
    ) -> R {
        if let Some(known) = self.0.get_mut(key) {
            return then(known);
        }
        let mut value = work();
        let result = then(&mut value);
        if self.0.len() < MEMO_ENTRIES {
            self.0.insert(key.into(), value);
        }
        result
    }
}

/// What a string's text alone says: the candidates of the token rules, and
/// of its URL parts when it is read as a URL (`None` until first asked).
struct TextVerdict {
    tokens: Box<[Candidate]>,
    url_parts: Option<Box<[Candidate]>>,
}

thread_local! {
    static TEXT_MEMO: std::cell::RefCell<Memo<TextVerdict>> = std::cell::RefCell::default();
    /// The candidates of an env value under its name, keyed by the name,
    /// a NUL and the value (the key is built in the `String` beside it).
    static ENV_MEMO: std::cell::RefCell<(Memo<Box<[Candidate]>>, String)> =
        std::cell::RefCell::default();
}

/// Adds to `out` the candidates of the token rules in `text`, then, when
/// `url_parts`, those of its URL parts: what [`scan_tokens`] and
/// [`scan_url_parts`] push, in that order, remembered per string when
/// `remember`.
fn text_candidates(text: &str, url_parts: bool, remember: bool, out: &mut Vec<Candidate>) {
    if !remember || text.len() < MIN_RULE_MATCH || text.len() > MEMO_BYTES {
        scan_tokens(text, out);
        if url_parts {
            scan_url_parts(text, out);
        }
        return;
    }
    let work = || {
        let mut tokens = Vec::new();
        scan_tokens(text, &mut tokens);
        TextVerdict {
            tokens: tokens.into_boxed_slice(),
            url_parts: None,
        }
    };
    TEXT_MEMO.with_borrow_mut(|memo| {
        memo.with(text, work, |verdict| {
            out.extend_from_slice(&verdict.tokens);
            if url_parts {
                let parts = verdict.url_parts.get_or_insert_with(|| {
                    let mut parts = Vec::new();
                    scan_url_parts(text, &mut parts);
                    parts.into_boxed_slice()
                });
                out.extend_from_slice(parts);
            }
        });
    });
}

/// Adds to `out` the candidates of `text` as the value of the env variable
/// `name`, remembered per pair (see [`env_candidates_of`]).
fn env_candidates(name: &str, text: &str, out: &mut Vec<Candidate>) {
    // A name holding a NUL would make two pairs one key.
    if name.len() + text.len() > MEMO_BYTES || name.contains('\0') {
        env_candidates_of(name, text, true, out);
        return;
    }
    let work = || {
        let mut found = Vec::new();
        env_candidates_of(name, text, true, &mut found);
        found.into_boxed_slice()
    };
    ENV_MEMO.with_borrow_mut(|(memo, key)| {
        key.clear();
        key.push_str(name);
        key.push('\0');
        key.push_str(text);
        memo.with(key, work, |found| out.extend_from_slice(found));
    });
}

/// The candidates of `text` as the value of the env variable `name`: the
/// token rules and URL parts, else a scheme's credential, a connection
/// string's password, or what the name says.
fn env_candidates_of(name: &str, text: &str, remember: bool, out: &mut Vec<Candidate>) {
    let before = out.len();
    text_candidates(text, true, remember, out);
    // A name only speaks for values no rule explains. `Bearer …` is a
    // credential whatever the name (`AUTH_HEADER` for mcp-remote's
    // `--header "Authorization:${AUTH_HEADER}"`).
    if out.len() == before {
        let (tier, rule, span) = if let Some(span) = schemed_credential(text) {
            (Tier::Context, AUTH_HEADER, span)
        } else if let Some(span) = connection_string_password(text) {
            (Tier::Context, GENERIC_SECRET, span)
        } else if let Some((rule, span)) = name_gated(name, text) {
            (Tier::Generic, rule, span)
        } else {
            return;
        };
        out.push(Candidate {
            tier,
            rule,
            span,
            decoy: false,
        });
    }
}

/// Runs every token rule over `text` whose literal it holds (one pass of
/// the literal prefilter first, so a string holding none costs no regex).
fn scan_tokens(text: &str, out: &mut Vec<Candidate>) {
    if text.len() < MIN_RULE_MATCH {
        return;
    }
    let candidates = prefilter().candidates(text);
    if candidates.rules.is_empty() {
        return;
    }
    let rules = rules();
    for index in candidates.rules.iter() {
        let rule = &rules[index];
        // Its `://` is in every URL, its `@` only in one with a userinfo.
        if rule.id == URL_USERINFO_PASSWORD && !text.contains('@') {
            continue;
        }
        let compiled = rule.compiled();
        // Where to look: a rule without a lead matches only where one of
        // its literals starts, so an anchored search there finds what a
        // search of the whole text finds, match by match.
        let starts = (rule.starts_with_literal && !candidates.anywhere.contains(index))
            .then(|| candidates.starts_of(index));
        if compiled.captures {
            for secret in capture_matches(compiled, text, starts.as_deref()) {
                let Some(secret) = secret else {
                    continue;
                };
                if accept_capture(rule.id, text, secret.clone()) {
                    out.push(Candidate {
                        tier: compiled.tier,
                        rule: rule.id,
                        span: secret,
                        decoy: false,
                    });
                }
            }
        } else {
            for span in token_matches(compiled, text, starts.as_deref()) {
                if token_goes_on(text, &span) || !format_holds(rule.id, text, &span) {
                    continue;
                }
                out.push(Candidate {
                    tier: compiled.tier,
                    rule: rule.id,
                    decoy: token_is_decoy(rule, text, &span),
                    span,
                });
            }
        }
    }
}

/// The matches `regex.find_iter(text)` gives, found by anchored searches
/// at `starts` when given (every match starts at one of them).
fn token_matches(rule: &CompiledRule, text: &str, starts: Option<&[usize]>) -> Vec<Range<usize>> {
    let regex = &rule.regex;
    let Some(starts) = starts else {
        return regex.find_iter(text).map(|found| found.range()).collect();
    };
    let mut found = Vec::new();
    let mut from = 0;
    for &start in starts {
        if start < from {
            continue;
        }
        let input = anchored_at(rule, text, start);
        if let Some(matched) = regex.search(&input) {
            from = matched.end();
            found.push(matched.range());
        }
    }
    found
}

/// An anchored search of `text` at `start`, as far as a match can reach
/// (look-arounds still see the text after it).
fn anchored_at<'t>(rule: &CompiledRule, text: &'t str, start: usize) -> Input<'t> {
    let end = rule
        .longest
        .map_or(text.len(), |longest| text.len().min(start + longest));
    Input::new(text).range(start..end).anchored(Anchored::Yes)
}

/// Group 1 of each match `regex.captures_iter(text)` gives, found as
/// [`token_matches`] finds them.
fn capture_matches(
    rule: &CompiledRule,
    text: &str,
    starts: Option<&[usize]>,
) -> Vec<Option<Range<usize>>> {
    let regex = &rule.regex;
    let Some(starts) = starts else {
        // A head hit (`://`, `--token`) often has no full match; checking
        // first spares the allocation `captures_iter` makes up front.
        if !regex.is_match(text) {
            return Vec::new();
        }
        return regex
            .captures_iter(text)
            .map(|captures| captures.get_group(1).map(|span| span.range()))
            .collect();
    };
    let mut found = Vec::new();
    let mut captures = regex.create_captures();
    let mut from = 0;
    for &start in starts {
        if start < from {
            continue;
        }
        let input = anchored_at(rule, text, start);
        regex.search_captures(&input, &mut captures);
        if let Some(whole) = captures.get_match() {
            from = whole.end();
            found.push(captures.get_group(1).map(|span| span.range()));
        }
    }
    found
}

/// Whether the text goes on with token characters after a match: then the
/// match is a piece of something longer (`AIza` + 36 characters), not a
/// token of that format.
fn token_goes_on(text: &str, span: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    bytes
        .get(span.end)
        .is_some_and(|&next| next.is_ascii_alphanumeric() || next == b'_' || next == b'-')
        // After a dot it is a part of a dotted name (`video_box.ico-…png`).
        || (span.start > 0 && bytes[span.start - 1] == b'.')
}

/// What a format says beyond its pattern: where it may start, and what an
/// encoded token must decode to.
fn format_holds(rule: &str, text: &str, span: &Range<usize>) -> bool {
    match rule {
        // The pattern has no `\b` to start at: `~` and `.` belong to it.
        "azure-ad-client-secret" => text.as_bytes()[..span.start].last().is_none_or(|&before| {
            !(before.is_ascii_alphanumeric() || matches!(before, b'_' | b'~' | b'.' | b'-'))
        }),
        "jwt-base64" => decodes_to_jwt(&text[span.clone()]),
        _ => true,
    }
}

/// Whether base64 text (`ZXlK…`) decodes to a JWT (`eyJ….eyJ….`).
fn decodes_to_jwt(encoded: &str) -> bool {
    let body = encoded.trim_end_matches('=');
    // Whole groups of four decode without padding questions.
    let body = &body[..body.len() / 4 * 4];
    let Ok(decoded) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(body) else {
        return false;
    };
    let Ok(decoded) = std::str::from_utf8(&decoded) else {
        return false;
    };
    let mut parts = decoded.split('.');
    matches!(
        (parts.next(), parts.next()),
        (Some(header), Some(payload)) if header.starts_with("ey") && payload.starts_with("ey")
    )
}

fn accept_capture(rule: &str, text: &str, span: Range<usize>) -> bool {
    let secret = &text[span.clone()];
    if rule == URL_USERINFO_PASSWORD {
        // `scheme://user:` right before the password.
        let before = &text[..span.start - 1];
        let user = &before[before.rfind("://").map_or(0, |at| at + 3)..];
        return !is_decoy_password(user, secret);
    }
    // Google's key file says what it is: `"type": "service_account"`.
    if rule == GCP_SERVICE_ACCOUNT_KEY && !text.contains("\"service_account\"") {
        return false;
    }
    if is_decoy(secret) {
        return false;
    }
    if rule == AUTH_HEADER {
        let before = text[..span.start].trim_end();
        let scheme_start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_ascii_alphabetic())
            .map_or(0, |(at, c)| at + c.len_utf8());
        if before[scheme_start..].eq_ignore_ascii_case("basic") {
            return basic_is_credential(secret);
        }
    }
    true
}

/// Query parameters (and the userinfo password) of a string that is a URL.
fn scan_url_parts(text: &str, out: &mut Vec<Candidate>) {
    let Some(parts) = UrlParts::parse(text) else {
        return;
    };
    if let Some(password) = parts.password.clone()
        && !is_decoy_password(parts.user_of(text), &text[password.clone()])
    {
        out.push(Candidate {
            tier: Tier::Context,
            rule: URL_USERINFO_PASSWORD,
            span: password,
            decoy: false,
        });
    }
    for (name, value) in parts.params(text) {
        if let Some(span) = query_value(&text[name], &text[value.clone()]) {
            out.push(Candidate {
                tier: Tier::Context,
                rule: QUERY_PARAM_SECRET,
                span: value.start + span.start..value.start + span.end,
                decoy: false,
            });
        }
    }
}

/// Query names the reference's `query-param-secret` rule lists.
const QUERY_SECRET_NAMES: [&str; 19] = [
    "api_key",
    "api-key",
    "apikey",
    "key",
    "token",
    "access_token",
    "access-token",
    "accesstoken",
    "auth_token",
    "auth-token",
    "authtoken",
    "auth",
    "secret",
    "client_secret",
    "client-secret",
    "password",
    "pwd",
    "sig",
    "signature",
];

fn query_value(name: &str, value: &str) -> Option<Range<usize>> {
    let strength = if QUERY_SECRET_NAMES
        .iter()
        .any(|known| known.eq_ignore_ascii_case(name))
    {
        Strength::Strong
    } else {
        name_strength(name)?
    };
    accept_value(value, strength)
}

/// Where the parts of a URL sit (byte ranges into the URL).
#[derive(Debug, Clone)]
struct UrlParts {
    user: Option<Range<usize>>,
    password: Option<Range<usize>>,
    query: Option<Range<usize>>,
}

impl UrlParts {
    /// Splits `scheme://[user[:password]@]host[/path][?query][#fragment]`
    /// (also behind Java's `jdbc:`); `None` when `text` does not start with
    /// a scheme.
    fn parse(text: &str) -> Option<Self> {
        let head = &text[..text.floor_char_boundary(40)];
        let scheme_end = head.find("://")?;
        let scheme = &text[..scheme_end];
        let scheme = match scheme.get(..5) {
            Some(jdbc) if jdbc.eq_ignore_ascii_case("jdbc:") => &scheme[5..],
            _ => scheme,
        };
        let mut chars = scheme.bytes();
        if !chars.next()?.is_ascii_alphabetic()
            || !chars.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
        {
            return None;
        }
        let authority_start = scheme_end + 3;
        let rest = &text[authority_start..];
        let authority_len = rest
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        let userinfo = authority.rfind('@').map(|at| &authority[..at]);
        let user = userinfo
            .map(|info| authority_start..authority_start + info.find(':').unwrap_or(info.len()));
        let password = userinfo.and_then(|info| {
            let colon = info.find(':')?;
            Some(authority_start + colon + 1..authority_start + info.len())
        });
        let after = &text[authority_start + authority_len..];
        let query = after.find('?').map(|question| {
            let start = authority_start + authority_len + question + 1;
            let end = text[start..]
                .find('#')
                .map_or(text.len(), |hash| start + hash);
            start..end
        });
        Some(Self {
            user,
            password,
            query,
        })
    }

    /// The user name of the userinfo (`""` without one).
    fn user_of<'t>(&self, text: &'t str) -> &'t str {
        self.user.clone().map_or("", |user| &text[user])
    }

    /// `(name, value)` ranges of the query parameters.
    fn params<'t>(&self, text: &'t str) -> impl Iterator<Item = (Range<usize>, Range<usize>)> + 't {
        let query = self.query.clone().unwrap_or(0..0);
        let base = query.start;
        text[query]
            .split('&')
            .scan(base, |offset, pair| {
                let start = *offset;
                *offset += pair.len() + 1;
                Some(pair.split_once('=').map(|(name, value)| {
                    let value_start = start + name.len() + 1;
                    (
                        start..start + name.len(),
                        value_start..value_start + value.len(),
                    )
                }))
            })
            .flatten()
    }

    fn field_of(&self, text: &str, span: &Range<usize>) -> Field {
        if let Some(password) = &self.password
            && span.start >= password.start
            && span.end <= password.end
        {
            return Field::UrlPassword;
        }
        for (name, value) in self.params(text) {
            if span.start >= value.start && span.end <= value.end {
                return Field::UrlQuery(text[name].to_string());
            }
        }
        Field::Url
    }
}

/// The credential of an `Authorization` value: after a `Bearer`, `Token`,
/// `Bot` or other scheme word, or the whole value when it has none; `Basic`
/// only when it decodes to `user:password`.
fn authorization_credential(text: &str) -> Option<Range<usize>> {
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    let (scheme, credential_start) = match trimmed.find(char::is_whitespace) {
        Some(space) => {
            let scheme = &trimmed[..space];
            if !scheme.bytes().all(|b| b.is_ascii_alphabetic()) {
                return None;
            }
            let rest = &trimmed[space..];
            (
                scheme,
                lead + space + (rest.len() - rest.trim_start().len()),
            )
        }
        None => ("", lead),
    };
    if scheme.eq_ignore_ascii_case("basic") {
        // Judged by what it decodes to: base64 text is no word, and may
        // spell `yOUR` or `fAKE` by chance (`…dHoyOUR1…`).
        let credential = text[credential_start..].trim_end();
        return (!credential.is_empty()
            && !credential.contains(char::is_whitespace)
            && basic_is_credential(credential))
        .then(|| credential_start..credential_start + credential.len());
    }
    let span = accept_value(&text[credential_start..], Strength::Strong)?;
    Some(credential_start + span.start..credential_start + span.end)
}

/// The credential of a value that starts with an auth scheme (`Bearer V`,
/// `Token V`, `Bot V`, `Basic V`); `None` for anything else.
fn schemed_credential(text: &str) -> Option<Range<usize>> {
    let trimmed = text.trim_start();
    let (scheme, _) = trimmed.split_once(char::is_whitespace)?;
    if !["bearer", "token", "bot", "basic"]
        .iter()
        .any(|known| scheme.eq_ignore_ascii_case(known))
    {
        return None;
    }
    authorization_credential(text)
}

/// The secret of a `Key=Value;…` connection string: the password of
/// ADO.NET/ODBC/JDBC ones (`Server=…;User ID=app;Password=V;`), or a
/// secret-named part of Azure's (`AccountKey=V`, `SharedAccessKey=V`,
/// `Secret=V`).
fn connection_string_password(text: &str) -> Option<Range<usize>> {
    // `pwd = getpass();` is a line of C, not an ODBC `PWD=`.
    if !text.contains(';') || is_code(text) {
        return None;
    }
    let mut start = 0;
    let mut user = "";
    for part in text.split(';') {
        let part_start = start;
        start += part.len() + 1;
        let Some((key, value)) = part.split_once('=') else {
            continue;
        };
        let name = key.trim();
        let lead = value.len() - value.trim_start().len();
        let secret = value.trim();
        let begin = part_start + key.len() + 1 + lead;
        if ["user id", "uid", "user", "username"]
            .iter()
            .any(|known| name.eq_ignore_ascii_case(known))
        {
            user = secret;
        } else if name.eq_ignore_ascii_case("password") || name.eq_ignore_ascii_case("pwd") {
            if !is_decoy_password(user, secret) {
                return Some(begin..begin + secret.len());
            }
        } else if let Some(strength) = name_strength(name)
            && let Some(span) = accept_value(secret, strength)
        {
            return Some(begin + span.start..begin + span.end);
        }
    }
    None
}

/// Whether a `Basic` credential decodes to `user:password` with a real
/// password (or an API key as the user name with an empty password).
fn basic_is_credential(encoded: &str) -> bool {
    let Ok(decoded) = STANDARD_PAD_INDIFFERENT.decode(encoded) else {
        return false;
    };
    let Ok(decoded) = std::str::from_utf8(&decoded) else {
        return false;
    };
    let Some((user, password)) = decoded.split_once(':') else {
        return false;
    };
    if password.is_empty() {
        // `curl -u KEY:`: an API key as the user name.
        user.len() >= 8 && !is_decoy(user)
    } else {
        !is_decoy_password(user, password)
    }
}

/// Whether the password of `user:password` (URL userinfo, `Basic`) is made
/// up rather than a secret: a reference or placeholder, masked, filler, a
/// stand-in word (`password`, `changeme`), the user name again
/// (`guest:guest`, `postgres:postgres`) or one run of the alphabet or the
/// digits, however short (`abc`, `123`, `4321`: what documentation types
/// where a password goes). A plain word is a password here: nothing else
/// goes in that place; so is a chosen one made of filler words in mixed
/// case (`secretKey456`).
fn is_decoy_password(user: &str, password: &str) -> bool {
    const STAND_INS: [&str; 11] = [
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "changeme",
        "changeit",
        "xxx",
        "example",
        "mypassword",
        "yourpassword",
    ];
    let password = password.trim();
    password.len() < 3
        || password == user
        || STAND_INS
            .iter()
            .any(|word| password.eq_ignore_ascii_case(word))
        || has_reference(password)
        || is_bracketed(password)
        || is_template_slot(password)
        || is_masked(password)
        || has_filler(password)
        || is_one_run(password)
        || (is_filler(password) && !mixed_case(password))
}

/// Letters or digits in order, up or down, and nothing else: `abc`,
/// `123`, `xyz`, `CBA`, `7890` (case aside; see [`ascends`]).
fn is_one_run(value: &str) -> bool {
    let bytes = value.as_bytes();
    let folded = |byte: &u8| byte.to_ascii_lowercase();
    bytes.len() >= 3
        && bytes.iter().all(u8::is_ascii_alphanumeric)
        && (bytes
            .windows(2)
            .all(|pair| ascends(folded(&pair[0]), folded(&pair[1])))
            || bytes
                .windows(2)
                .all(|pair| ascends(folded(&pair[1]), folded(&pair[0]))))
}

/// Where a folded letter or digit stands: `0`–`9`, then `a`–`z`.
fn rank(byte: u8) -> u8 {
    if byte.is_ascii_digit() {
        byte - b'0'
    } else {
        byte - b'a' + 10
    }
}

/// Whether `b` comes right after `a` (folded letters and digits): the
/// digits, then the letters, in a circle; `9` also goes on to `0`.
fn ascends(a: u8, b: u8) -> bool {
    (rank(a) + 1) % 36 == rank(b) || (a == b'9' && b == b'0')
}

// ---------------------------------------------------------------------------
// Names

/// How strongly a name says "secret": a weak name (bare `KEY`, `PASS`,
/// `AUTH`) needs a longer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Weak,
    Strong,
}

const STRONG_SEGMENTS: [&str; 19] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "PASSPHRASE",
    "PAT",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "DSN",
    // Not in the reference's list, but never anything else.
    "AUTHORIZATION",
    "APITOKEN",
    "AUTHTOKEN",
    "ACCESSTOKEN",
    "SECRETKEY",
    "PRIVATEKEY",
    "PRIVKEY",
];

const WEAK_SEGMENTS: [&str; 9] = [
    "PASS",
    "AUTH",
    "PRIVATE",
    // `SECP256K1_PRIV`, `privHex`: the short form of `PRIVATE`.
    "PRIV",
    "COOKIE",
    "SESSION",
    "SIGNATURE",
    "SALT",
    "CONNECTION",
];

/// Segments that make a following `KEY` a credential rather than, say, a
/// sort key.
const KEY_QUALIFIERS: [&str; 23] = [
    "API",
    "ACCESS",
    "SECRET",
    "PRIVATE",
    "CLIENT",
    "SERVICE",
    "MASTER",
    "ADMIN",
    "SIGNING",
    "ENCRYPTION",
    "LICENSE",
    "SUBSCRIPTION",
    "AUTH",
    "ACCOUNT",
    "APP",
    "DEPLOY",
    "INGEST",
    "WRITE",
    "PERSONAL",
    "MANAGEMENT",
    "ROOT",
    "SERVER",
    "SESSION",
];

/// `PRIMARY_KEY`, `FOREIGN_KEY`: database words, not credentials.
const KEY_EXCLUSIONS: [&str; 6] = [
    "PRIMARY",
    "FOREIGN",
    "SORT",
    "PARTITION",
    "CACHE",
    "IDEMPOTENCY",
];

/// `CSRF_TOKEN` and pagination tokens are not credentials.
const TOKEN_EXCLUSIONS: [&str; 5] = ["CSRF", "XSRF", "PAGE", "NEXT", "CONTINUATION"];

const VETO_LAST: [&str; 37] = [
    "URL",
    "URI",
    "ENDPOINT",
    "HOST",
    "PORT",
    "FILE",
    "PATH",
    "DIR",
    "NAME",
    "ID",
    "TYPE",
    "MODE",
    "TIMEOUT",
    "LENGTH",
    "SIZE",
    "VERSION",
    "REGION",
    "ENABLED",
    "FORMAT",
    "HEADER",
    "PREFIX",
    "EXPIRY",
    "TTL",
    "COUNT",
    "LEVEL",
    "USER",
    "USERNAME",
    "EMAIL",
    // Same meaning as entries above.
    "FILENAME",
    "HOSTNAME",
    "DIRECTORY",
    "IDS",
    // What a secret becomes when hashed or summed: public by design.
    "HASH",
    "DIGEST",
    "CHECKSUM",
    "FINGERPRINT",
    "THUMBPRINT",
];

const PUBLIC_SEGMENTS: [&str; 3] = ["PUBLIC", "PUBLISHABLE", "ANON"];

const PUBLIC_PREFIXES: [&str; 3] = ["NEXT_PUBLIC_", "VITE_", "EXPO_PUBLIC_"];

fn is_one_of(segment: &str, list: &[&str]) -> bool {
    list.iter().any(|word| segment.eq_ignore_ascii_case(word))
}

/// Whether a variable, header, flag or query-parameter name says its value
/// is a secret (`reference/secrets.md` §3).
///
/// The name is split into segments on `_`, `-`, `.` and camelCase
/// boundaries and compared whole, case-insensitively: `GITHUB_TOKEN`,
/// `apiKey` and `X-API-Key` are secret-ish; `MONKEY`, `KEY_ID`, `TOKEN_URL`,
/// `PUBLIC_TOKEN`, `PRIMARY_KEY` and `CSRF_TOKEN` are not.
/// `AWS_ACCESS_KEY_ID` is, despite its `ID`.
pub fn is_secret_name(name: &str) -> bool {
    name_strength(name).is_some()
}

/// What a name says of its value, worked out once per distinct name on
/// each thread: a scan meets the same few names (`HOME`, `GITHUB_TOKEN`,
/// `NODE_OPTIONS`) in entry after entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NameVerdict {
    strength: Option<Strength>,
    password: bool,
}

/// Names remembered per thread, at most; later ones are worked out each
/// time (a hostile file's million names cannot grow the memo).
const NAME_MEMO_ENTRIES: usize = 1 << 12;

/// Longest name remembered; longer ones are rarely met twice.
const NAME_MEMO_BYTES: usize = 64;

thread_local! {
    static NAME_MEMO: std::cell::RefCell<
        std::collections::HashMap<Box<str>, NameVerdict, foldhash::fast::RandomState>,
    > = std::cell::RefCell::default();
}

fn name_verdict(name: &str) -> NameVerdict {
    let work_out = || NameVerdict {
        strength: name_strength_of(name),
        password: is_password_name_of(name),
    };
    if name.len() > NAME_MEMO_BYTES {
        return work_out();
    }
    NAME_MEMO.with_borrow_mut(|memo| {
        if let Some(verdict) = memo.get(name) {
            return *verdict;
        }
        let verdict = work_out();
        if memo.len() < NAME_MEMO_ENTRIES {
            memo.insert(name.into(), verdict);
        }
        verdict
    })
}

fn name_strength(name: &str) -> Option<Strength> {
    name_verdict(name).strength
}

/// [`name_strength`] worked out, not remembered.
fn name_strength_of(name: &str) -> Option<Strength> {
    if is_shell_directory(name) {
        return None;
    }
    if PUBLIC_PREFIXES.iter().any(|prefix| {
        name.get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    }) {
        return None;
    }
    let mut best: Option<Strength> = None;
    let (mut before, mut previous, mut last) = ("", "", "");
    for segment in Segments::new(name) {
        if is_one_of(segment, &PUBLIC_SEGMENTS) {
            return None;
        }
        best = best.max(segment_strength(last, segment));
        (before, previous, last) = (previous, last, segment);
    }
    let best = best?;
    if is_one_of(last, &VETO_LAST) {
        let aws_access_key_id = last.eq_ignore_ascii_case("ID")
            && previous.eq_ignore_ascii_case("KEY")
            && before.eq_ignore_ascii_case("ACCESS");
        return aws_access_key_id.then_some(Strength::Strong);
    }
    Some(best)
}

fn segment_strength(previous: &str, segment: &str) -> Option<Strength> {
    if segment.eq_ignore_ascii_case("KEY") {
        if is_one_of(previous, &KEY_EXCLUSIONS) {
            None
        } else if is_one_of(previous, &KEY_QUALIFIERS) {
            Some(Strength::Strong)
        } else {
            Some(Strength::Weak)
        }
    } else if is_one_of(segment, &STRONG_SEGMENTS) {
        if segment.eq_ignore_ascii_case("TOKEN") && is_one_of(previous, &TOKEN_EXCLUSIONS) {
            None
        } else {
            Some(Strength::Strong)
        }
    } else if is_one_of(segment, &WEAK_SEGMENTS) {
        Some(Strength::Weak)
    } else {
        None
    }
}

/// Name segments: runs of ASCII letters and digits, also split where a
/// lower-case letter or digit meets an upper-case one (`apiKey`) and before
/// the last capital of an acronym (`APIKey` → `API`, `Key`).
struct Segments<'a> {
    name: &'a str,
    at: usize,
}

impl<'a> Segments<'a> {
    fn new(name: &'a str) -> Self {
        Self { name, at: 0 }
    }
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.name.as_bytes();
        while self.at < bytes.len() && !bytes[self.at].is_ascii_alphanumeric() {
            self.at += 1;
        }
        if self.at >= bytes.len() {
            return None;
        }
        let start = self.at;
        self.at += 1;
        while self.at < bytes.len() {
            let (previous, current) = (bytes[self.at - 1], bytes[self.at]);
            if !current.is_ascii_alphanumeric() {
                break;
            }
            if current.is_ascii_uppercase() {
                if previous.is_ascii_lowercase() || previous.is_ascii_digit() {
                    break;
                }
                if previous.is_ascii_uppercase()
                    && bytes.get(self.at + 1).is_some_and(u8::is_ascii_lowercase)
                {
                    break;
                }
            }
            self.at += 1;
        }
        Some(&self.name[start..self.at])
    }
}

/// Whether an argument that starts with `-` is a value rather than a flag:
/// flags are lower-case words (`-v`, `--read-only`, `--port=8080`,
/// `-Xmx512m`); a long mix of cases and digits with no `=` is not one.
fn is_dash_led_value(arg: &str) -> bool {
    let bytes = arg.as_bytes();
    bytes.len() >= 16
        && !arg.contains('=')
        && bytes.iter().any(u8::is_ascii_uppercase)
        && bytes.iter().any(u8::is_ascii_lowercase)
        && bytes.iter().any(u8::is_ascii_digit)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+' | b'/'))
}

/// Secret-ish strength of a command-line flag (`--api-key`, `-p`).
fn flag_strength(flag: &str) -> Option<Strength> {
    let name = flag.trim_start_matches('-');
    match flag.len() - name.len() {
        // `-p` is a password for mysql-style tools, a port or profile for
        // many others: only long random values count.
        1 => name.eq_ignore_ascii_case("p").then_some(Strength::Weak),
        2 => name_strength(name),
        _ => None,
    }
}

/// `PWD`, `OLDPWD`: the shell's working directories, not MySQL passwords.
fn is_shell_directory(name: &str) -> bool {
    name == "PWD" || name == "OLDPWD"
}

/// The secret a flag's value is: any password after a password flag
/// (`--password hunter2`), as under a password name, else a value as
/// random as the flag's strength asks.
fn flag_value(password_flag: bool, value: &str, strength: Strength) -> Option<Range<usize>> {
    if password_flag {
        password_value(value)
    } else {
        accept_value(value, strength)
    }
}

/// Whether a long flag takes a password (`--password`, `--db-password`,
/// not `--password-file` nor `--no-password`).
fn is_password_flag(flag: &str) -> bool {
    let Some(name) = flag.strip_prefix("--") else {
        return false;
    };
    let name = name.replace('-', "_");
    !name.to_ascii_lowercase().starts_with("no_") && is_password_name(&name)
}

/// `[A-Za-z_][A-Za-z0-9_.]*`: the left side of a docker `-e NAME=value`
/// (Docker takes dotted names too: `-e spring.datasource.password=…`).
fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// A value judged by its name: a password under a password name, the AWS
/// secret shape, else `generic-secret`.
fn name_gated(name: &str, value: &str) -> Option<(&'static str, Range<usize>)> {
    if is_password_name(name)
        && let Some(span) = password_value(value)
    {
        return Some((GENERIC_SECRET, span));
    }
    let strength = name_strength(name)?;
    if is_aws_secret_name(name) {
        let trimmed = value.trim();
        if trimmed.len() == 40
            && trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
            && !token_shape_is_decoy(AWS_SECRET_ACCESS_KEY, trimmed, trimmed)
        {
            let start = value.len() - value.trim_start().len();
            return Some((AWS_SECRET_ACCESS_KEY, start..start + 40));
        }
    }
    accept_value(value, strength).map(|span| (GENERIC_SECRET, span))
}

/// Last name segments that say the value is a password or a secret a
/// person chose, whose shape proves nothing: `hunter2` under `DB_PASSWORD`
/// is as secret as a random string (detect-secrets' keyword rule).
const PASSWORD_SEGMENTS: [&str; 6] = ["PASSWORD", "PASSWD", "PWD", "PASSPHRASE", "SECRET", "PIN"];

/// Whether `name` holds a password whatever the value looks like:
/// `DB_PASSWORD`, `MYSQL_PWD`, `CLIENT_SECRET`, `PIN`, and names that glue
/// the word on (`PGPASSWORD`, `REDISPASSWORD`). Public names (`NEXT_PUBLIC_…`,
/// `…_PUBLIC_…`) are not.
fn is_password_name(name: &str) -> bool {
    name_verdict(name).password
}

/// [`is_password_name`] worked out, not remembered.
fn is_password_name_of(name: &str) -> bool {
    if is_shell_directory(name) {
        return false;
    }
    if PUBLIC_PREFIXES.iter().any(|prefix| {
        name.get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    }) {
        return false;
    }
    let mut last = "";
    for segment in Segments::new(name) {
        if is_one_of(segment, &PUBLIC_SEGMENTS) {
            return false;
        }
        last = segment;
    }
    let glued = |word: &str| {
        last.len() > word.len()
            && last
                .get(last.len() - word.len()..)
                .is_some_and(|tail| tail.eq_ignore_ascii_case(word))
    };
    is_one_of(last, &PASSWORD_SEGMENTS) || glued("PASSWORD") || glued("PASSWD")
}

/// Whether `value` is a literal (no placeholder, reference, mask or
/// filler) under a name that says it is a secret (`GITHUB_TOKEN`,
/// `PGPASSWORD`): what every preview and listing masks, whatever its shape.
pub fn keyword_secret(name: &str, value: &str) -> bool {
    (is_secret_name(name) || is_password_name(name)) && password_value(value).is_some()
}

/// The span of a password under a password name: anything but empty, a
/// reference or placeholder (`${DB_PASSWORD}`, `<password>`, `op://…`), a
/// masked or filler value (`****`, `your-password-here`) and the words that
/// switch a setting rather than open a door (`true`, `none`).
fn password_value(value: &str) -> Option<Range<usize>> {
    const STAND_INS: [&str; 12] = [
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "none",
        "null",
        "nil",
        "undefined",
        "todo",
        "tbd",
    ];
    let trimmed = value.trim();
    // A value that only repeats what the name says (`PASSWORD=password`,
    // `JWT_SECRET=secret`) or asks to be changed (`changeit`) stands in for
    // one; so does the path of a file holding it (`/run/secrets/db`).
    let mut buffer = [0u8; 32];
    let stands_in = folded_alnum(trimmed, &mut buffer).is_some_and(|word| {
        [
            &b"password"[..],
            b"passwd",
            b"pass",
            b"secret",
            b"pin",
            b"passphrase",
            b"changeme",
            b"changeit",
        ]
        .contains(&word)
    });
    if trimmed.is_empty()
        || stands_in
        || is_code(trimmed)
        || is_path(trimmed)
        || has_reference(trimmed)
        || is_bracketed(trimmed)
        || is_masked(trimmed)
        || has_filler(trimmed)
        || crate::stores::references::manager_of(trimmed).is_some()
        || STAND_INS
            .iter()
            .any(|word| trimmed.eq_ignore_ascii_case(word))
    {
        return None;
    }
    let start = value.len() - value.trim_start().len();
    Some(start..start + trimmed.len())
}

/// `AWS_SECRET_ACCESS_KEY`, `AWS_SECRET_KEY`, `SECRET_ACCESS_KEY`.
fn is_aws_secret_name(name: &str) -> bool {
    let mut aws = false;
    let mut secret = false;
    let mut last = "";
    for segment in Segments::new(name) {
        aws |= segment.eq_ignore_ascii_case("AWS") || segment.eq_ignore_ascii_case("ACCESS");
        secret |= segment.eq_ignore_ascii_case("SECRET");
        last = segment;
    }
    aws && secret && last.eq_ignore_ascii_case("KEY")
}

// ---------------------------------------------------------------------------
// Values

/// The span of a value worth reporting under a secret-ish name: an optional
/// auth scheme (`Bearer `) is left out; the rest must pass [`is_decoy`], have
/// no inner whitespace, be at least 8 bytes (16 for weak names) and not be
/// far less random than its length allows (entropy only breaks ties).
fn accept_value(value: &str, strength: Strength) -> Option<Range<usize>> {
    let trimmed = value.trim_start();
    let mut start = value.len() - trimmed.len();
    let mut inner = trimmed.trim_end();
    if let Some(space) = inner.find(char::is_whitespace) {
        let scheme = &inner[..space];
        if !["bearer", "token", "bot", "basic"]
            .iter()
            .any(|known| scheme.eq_ignore_ascii_case(known))
        {
            return None;
        }
        let rest = inner[space..].trim_start();
        start += inner.len() - rest.len();
        inner = rest;
        if inner.contains(char::is_whitespace) {
            return None;
        }
    }
    let minimum = match strength {
        Strength::Strong => 8,
        Strength::Weak => 16,
    };
    // A URL's secret parts are the URL rules' business.
    if inner.len() < minimum || is_decoy(inner) || UrlParts::parse(inner).is_some() {
        return None;
    }
    // A weak name (`BUCKET_KEY`) takes words and numbers for what they are.
    if strength == Strength::Weak && is_phrase_like(inner) {
        return None;
    }
    // Random strings of this length score near log2(len); structured
    // filler ("aaaabbbb", "3000:3000") far below.
    let mut floor = (0.7 * (inner.len().min(64) as f64).log2()).min(3.0);
    if inner.bytes().all(|b| b.is_ascii_digit()) {
        // Ten symbols: log2(10) is the most a digit string can score.
        floor = floor.min(2.6);
    }
    if shannon_entropy(inner) < floor {
        return None;
    }
    Some(start..start + inner.len())
}

/// Shannon entropy of a string's bytes, in bits per byte (0 for `""`).
pub fn shannon_entropy(value: &str) -> f64 {
    if value.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for byte in value.bytes() {
        counts[usize::from(byte)] += 1;
    }
    let total = value.len() as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let p = f64::from(count) / total;
            -p * p.log2()
        })
        .sum()
}

/// Whether a value is a trap rather than a secret (`reference/secrets.md`
/// §4): references and placeholders (`${GITHUB_TOKEN}`, `$TOKEN`,
/// `${env:X}`, `%TOKEN%`, `{{ .Token }}`, `<your-token>`, `[TOKEN]`),
/// booleans, null, numbers and plain words (`production`), well-known
/// defaults (`changeme`, `password`), masked or truncated values (`****`,
/// `ghp_xxxx…`, `sk-...`), filler (`YOUR_API_KEY`, `your-api-key-here`,
/// `TODO`), file paths, e-mail addresses, URLs without a password or secret
/// query parameter, public keys (Supabase `anon` JWTs, `sb_publishable_`,
/// Stripe `pk_`), and `""`.
pub fn is_decoy(value: &str) -> bool {
    let value = value.trim();
    if value.is_empty() || has_reference(value) || is_bracketed(value) {
        return true;
    }
    if let Some(parts) = UrlParts::parse(value) {
        return !url_has_secret(value, &parts);
    }
    is_number(value)
        || is_masked(value)
        || has_filler(value)
        || is_filler(value)
        || is_default(value)
        || is_path(value)
        || is_email(value)
        || is_public_key(value)
        || is_word_like(value)
        || is_code(value)
        || settings_without_secret(value)
}

/// A line of code rather than a value (`pwd = getpass();`, `f(x);`).
fn is_code(value: &str) -> bool {
    value.contains('(')
        && value.contains(')')
        && (value.ends_with(';') || value.contains(" = ") || value.ends_with(')'))
}

/// A `Key=value;…` settings string (a connection string) none of whose
/// values is a secret: `InstrumentationKey=00000000-…;IngestionEndpoint=…`
/// (Azure's example key, all zeros) says nothing secret; one with a real
/// `AccountKey=` or `Password=` is judged by that pair.
fn settings_without_secret(value: &str) -> bool {
    if !value.contains(';') {
        return false;
    }
    // Every part a `Key=value` pair, or it is no settings string.
    let Some(pairs) = value
        .split(';')
        .filter(|part| !part.trim().is_empty())
        .map(|part| part.split_once('='))
        .collect::<Option<Vec<(&str, &str)>>>()
    else {
        return false;
    };
    // Each pair judged as a value under its name is.
    !pairs.is_empty()
        && !pairs
            .iter()
            .any(|(key, value)| name_gated(key.trim(), value).is_some())
}

/// `${X}`, `${X:-d}`, `${env:X}`, `${input:x}`, `${{ secrets.X }}`, `{env:X}`,
/// `{{ .Token }}`, `$(cmd)`, `$TOKEN`, `%TOKEN%`, `@TOKEN@`.
fn has_reference(value: &str) -> bool {
    // Every form below holds one of these bytes, and most values none.
    if !value
        .bytes()
        .any(|byte| matches!(byte, b'$' | b'{' | b'%' | b'@'))
    {
        return false;
    }
    has_reference_of(value)
}

/// [`has_reference`] without its first look at the bytes: the reference
/// it is tested against.
fn has_reference_of(value: &str) -> bool {
    if value.contains("${")
        || value.contains("$(")
        || value.contains("{env:")
        || (value.contains("{{") && value.contains("}}"))
    {
        return true;
    }
    let bytes = value.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        match byte {
            b'$' => {
                let name = identifier(&bytes[at + 1..]);
                // `$TOKEN` alone, or an upper-case name inside a value:
                // random secrets rarely put capitals after a `$`.
                if !name.is_empty()
                    && (name.len() + 1 == bytes.len()
                        || (name.len() >= 2
                            && name.iter().all(|b| {
                                b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_'
                            })))
                {
                    return true;
                }
            }
            b'%' | b'@' => {
                let name = identifier(&bytes[at + 1..]);
                let closed = bytes.get(at + 1 + name.len()) == Some(&byte);
                let upper = name.iter().all(|b| !b.is_ascii_lowercase());
                if name.len() >= 3 && closed && (byte == b'%' || upper) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The leading `[A-Za-z_][A-Za-z0-9_]*` of `bytes`.
fn identifier(bytes: &[u8]) -> &[u8] {
    match bytes.first() {
        Some(first) if first.is_ascii_alphabetic() || *first == b'_' => {
            let len = bytes
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .unwrap_or(bytes.len());
            &bytes[..len]
        }
        _ => &[],
    }
}

/// `<your-token>`, `sk-<key>`, `[TOKEN]`.
fn is_bracketed(value: &str) -> bool {
    let open = value.find('<');
    let close = value.rfind('>');
    matches!((open, close), (Some(open), Some(close)) if open < close)
        || (value.starts_with('[') && value.ends_with(']'))
}

/// Upper- and lower-case letters both: a password someone chose
/// (`secretKey456`), where filler typed as a stand-in is in one case
/// (`secret123`, `TEST_TOKEN`).
fn mixed_case(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_uppercase()) && value.bytes().any(|b| b.is_ascii_lowercase())
}

/// A template's slot for the value, a name in braces: `{password}`,
/// `{{PASS}}` (Python's `str.format`, Mustache, Jinja).
fn is_template_slot(value: &str) -> bool {
    let inner = value.trim_start_matches('{').trim_end_matches('}');
    value.starts_with('{')
        && value.ends_with('}')
        && value.len() - inner.len() >= 2
        && !inner.is_empty()
        && inner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b' '))
}

/// Digits with separators only: `8080`, `-1`, `3.12`, `3000:3000`,
/// `127.0.0.1`, `2024-06-01`.
fn is_number(value: &str) -> bool {
    // Sixteen digits and more are a numeric key, not a quantity or an id
    // a person reads (phone numbers stop at fifteen).
    if value.len() >= 16 && value.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().all(|b| {
            b.is_ascii_digit() || matches!(b, b'.' | b',' | b':' | b'/' | b'-' | b'+' | b'_' | b' ')
        })
}

/// `****`, `xxxx`, `sk-...`, `ghp_…`, `••••`, `aaaaaaaa`.
fn is_masked(value: &str) -> bool {
    const MARKS: Needles<6> = Needles::new(["****", "xxxx", "...", "…", "•", "●"]);
    let bytes = value.as_bytes();
    MARKS.found_in(value) || (bytes.len() >= 3 && bytes.iter().all(|&b| b == bytes[0]))
}

/// `YOUR_API_KEY`, `your-api-key-here`, `insert-token`, `example`, `dummy`.
fn has_filler(value: &str) -> bool {
    const FILLER: Needles<14> = Needles::new([
        "your",
        "example",
        "sample",
        "dummy",
        "placeholder",
        "changeme",
        "change_me",
        "change-me",
        "replace",
        "insert",
        "redacted",
        "fake",
        "notreal",
        "not-a-real",
    ]);
    FILLER.found_in(value)
        || value
            .get(value.len().saturating_sub(5)..)
            .is_some_and(|tail| {
                tail.eq_ignore_ascii_case("_here") || tail.eq_ignore_ascii_case("-here")
            })
}

/// Lower-case words looked for case-insensitively (ASCII) in one pass over
/// a value: a table of which words start with each byte skips most bytes.
struct Needles<const N: usize> {
    words: [&'static str; N],
    first: [u32; 256],
    /// Which words have each byte second: with `first`, a pair of bytes
    /// rules out nearly every word (`e` starts `example`, `ex` only it).
    second: [u32; 256],
}

impl<const N: usize> Needles<N> {
    const fn new(words: [&'static str; N]) -> Self {
        assert!(N <= 32, "one bit per word");
        let mut first = [0u32; 256];
        let mut second = [0u32; 256];
        let mut index = 0;
        while index < N {
            let word = words[index].as_bytes();
            assert!(word.len() >= 2, "a word has a second byte");
            first[word[0] as usize] |= 1 << index;
            first[word[0].to_ascii_uppercase() as usize] |= 1 << index;
            second[word[1] as usize] |= 1 << index;
            second[word[1].to_ascii_uppercase() as usize] |= 1 << index;
            index += 1;
        }
        Self {
            words,
            first,
            second,
        }
    }

    fn found_in(&self, haystack: &str) -> bool {
        let bytes = haystack.as_bytes();
        // Every word has two bytes at least: none starts at the last one.
        for at in 0..bytes.len().saturating_sub(1) {
            let mut candidates =
                self.first[usize::from(bytes[at])] & self.second[usize::from(bytes[at + 1])];
            while candidates != 0 {
                let word = self.words[candidates.trailing_zeros() as usize].as_bytes();
                candidates &= candidates - 1;
                if bytes[at..]
                    .get(..word.len())
                    .is_some_and(|window| window.eq_ignore_ascii_case(word))
                {
                    return true;
                }
            }
        }
        false
    }
}

/// Well-known defaults and plain words, compared lower-case with everything
/// but letters and digits removed (`change-me` = `changeme`).
fn is_default(value: &str) -> bool {
    const DEFAULTS: [&str; 66] = [
        "changeme",
        "changeit",
        "password",
        "passwd",
        "pass",
        "secret",
        "secrets",
        "test",
        "testing",
        "tests",
        "example",
        "sample",
        "dummy",
        "fake",
        "mock",
        "demo",
        "default",
        "admin",
        "administrator",
        "root",
        "guest",
        "user",
        "username",
        "letmein",
        "qwerty",
        "123456",
        "12345678",
        "123456789",
        "1234567890",
        "abc123",
        "password1",
        "password123",
        "secret123",
        "token",
        "apikey",
        "apitoken",
        "accesstoken",
        "key",
        "none",
        "null",
        "nil",
        "undefined",
        "empty",
        "todo",
        "tbd",
        "fixme",
        "na",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "enabled",
        "disabled",
        "production",
        "staging",
        "development",
        "localhost",
        "postgres",
        "mysql",
        "redis",
        "minioadmin",
        "hunter2",
        "foobar",
        "placeholder",
    ];
    let mut buffer = [0u8; 32];
    let Some(normalized) = folded_alnum(value, &mut buffer) else {
        return false;
    };
    DEFAULTS
        .iter()
        .any(|default| default.as_bytes() == normalized)
}

/// The ASCII letters and digits of `value`, lower-cased, in `buffer`;
/// `None` when they do not fit (no allocation on the hot path).
fn folded_alnum<'b>(value: &str, buffer: &'b mut [u8]) -> Option<&'b [u8]> {
    let bytes = value.as_bytes();
    if bytes.len() <= buffer.len() {
        // Everything fits: each byte is written where the next letter or
        // digit goes and kept only when it is one (no branch a byte).
        let mut len = 0;
        for &byte in bytes {
            let folded = ALNUM_FOLDED[usize::from(byte)];
            buffer[len] = folded;
            len += usize::from(folded != 0);
        }
        return Some(&buffer[..len]);
    }
    folded_alnum_bytewise(value, buffer)
}

/// By byte, the letter or digit it folds to, or 0 for any other byte.
const ALNUM_FOLDED: [u8; 256] = {
    let mut folded = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        if (byte as u8).is_ascii_alphanumeric() {
            folded[byte] = (byte as u8).to_ascii_lowercase();
        }
        byte += 1;
    }
    folded
};

/// [`folded_alnum`] a byte at a time, stopping when the buffer is full:
/// the reference the fast path is tested against.
fn folded_alnum_bytewise<'b>(value: &str, buffer: &'b mut [u8]) -> Option<&'b [u8]> {
    let mut len = 0;
    for byte in value.bytes().filter(u8::is_ascii_alphanumeric) {
        *buffer.get_mut(len)? = byte.to_ascii_lowercase();
        len += 1;
    }
    Some(&buffer[..len])
}

/// `/home/u/.ssh/id_rsa`, `./key.pem`, `~/.config/x`, `C:\keys\a.pem`,
/// `\\server\share`; a 40-character base64 secret that happens to start
/// with `/` is not one.
fn is_path(value: &str) -> bool {
    let bytes = value.as_bytes();
    if value.starts_with("./")
        || value.starts_with("../")
        || value.starts_with("~/")
        || value.starts_with("~\\")
        || value.starts_with("\\\\")
        || value.starts_with(".\\")
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'\\' | b'/'))
    {
        return true;
    }
    if !value.starts_with('/') {
        return false;
    }
    if !bytes.iter().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~' | b' ' | b'@' | b':')
    }) {
        return false;
    }
    // Base64 has none of `._-~`, and mixes cases inside a segment.
    bytes
        .iter()
        .any(|b| matches!(b, b'.' | b'_' | b'-' | b'~' | b' '))
        || !bytes.iter().any(u8::is_ascii_uppercase)
        || value.split('/').all(is_word)
}

/// Letters only, in one case or capitalised (`Users`, `keys`, `HOME`).
fn is_word(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    bytes.iter().all(u8::is_ascii_alphabetic)
        && (bytes.iter().skip(1).all(u8::is_ascii_lowercase)
            || bytes.iter().all(u8::is_ascii_uppercase))
}

fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.contains('@')
        && !value.contains([':', '/', ' '])
        && domain
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// Keys meant to be public: Supabase `anon` JWTs and `sb_publishable_`,
/// Stripe `pk_`, Mapbox `pk.`.
fn is_public_key(value: &str) -> bool {
    // Mapbox's public tokens (`pk.eyJ…`), made to ship in web pages.
    value.starts_with("pk.eyJ")
        || value.starts_with("sb_publishable_")
        || value.starts_with("pk_live_")
        || value.starts_with("pk_test_")
        || is_anon_jwt(value)
}

/// A JWT whose payload says `"role": "anon"` (Supabase's public key).
fn is_anon_jwt(token: &str) -> bool {
    let mut parts = token.split('.');
    let (Some(_), Some(payload)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !payload.starts_with("eyJ") {
        return false;
    }
    let Ok(json) = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')) else {
        return false;
    };
    serde_json::from_slice::<Value>(&json)
        .ok()
        .and_then(|claims| {
            claims
                .get("role")
                .and_then(Value::as_str)
                .map(|role| role == "anon")
        })
        .unwrap_or(false)
}

/// Plain words and identifiers: `production`, `Production`, `info`,
/// `us-east-1`, `gpt-4o-mini`, `read_only`, `key.pem`,
/// `@modelcontextprotocol/server-github`. Every part is letters only,
/// digits only or at most four characters, and the value has one case.
fn is_word_like(value: &str) -> bool {
    let bytes = value.as_bytes();
    if !bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/' | b'@' | b':'))
    {
        return false;
    }
    let upper = bytes.iter().any(u8::is_ascii_uppercase);
    let lower = bytes.iter().any(u8::is_ascii_lowercase);
    if upper && lower {
        // Mixed case counts only as one capitalised word.
        return is_word(value);
    }
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .all(|part| {
            part.len() <= 4
                || (part.bytes().all(|b| b.is_ascii_alphabetic()) && !is_letter_noise(part))
                || (part.len() < 16 && part.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Words and numbers run together: `SalesResults-1.2`, `prod-eu-west`,
/// `MyBucket2024`. Every segment (see [`Segments`]) is digits, or three or
/// more letters with a vowel, in one case or capitalised.
fn is_phrase_like(value: &str) -> bool {
    Segments::new(value).all(|segment| {
        let bytes = segment.as_bytes();
        bytes.iter().all(u8::is_ascii_digit)
            || (bytes.len() >= 3
                && is_word(segment)
                && !is_letter_noise(segment)
                && bytes.iter().any(|b| {
                    matches!(
                        b.to_ascii_lowercase(),
                        b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
                    )
                }))
    })
}

/// Letters that are no word: hex (`deadbeef`, `cafebabe`) or a long run
/// with the few vowels of random letters (`qwhxkzjsdfuerhtk`).
fn is_letter_noise(part: &str) -> bool {
    let bytes = part.as_bytes();
    let vowels = bytes
        .iter()
        .filter(|b| matches!(b.to_ascii_lowercase(), b'a' | b'e' | b'i' | b'o' | b'u'))
        .count();
    (bytes.len() >= 8
        && bytes
            .iter()
            .all(|b| matches!(b.to_ascii_lowercase(), b'a'..=b'f')))
        || (bytes.len() >= 12 && vowels * 4 < bytes.len())
}

/// Whether a URL carries a real password or secret query value.
fn url_has_secret(text: &str, parts: &UrlParts) -> bool {
    if let Some(password) = parts.password.clone()
        && !is_decoy_password(parts.user_of(text), &text[password])
    {
        return true;
    }
    parts
        .params(text)
        .any(|(name, value)| query_value(&text[name], &text[value]).is_some())
}

/// Whether a token-shaped match is a decoy: masked where it stops
/// (`xoxp-…-####`, `ghp_R4nd…`), or made of filler (see
/// [`token_shape_is_decoy`]).
fn token_is_decoy(rule: &Rule, text: &str, span: &Range<usize>) -> bool {
    let after = &text[span.end..];
    let token = &text[span.clone()];
    let prefix = rule.prefix();
    let body = &token[prefix.find(token).map_or(0, |prefix| prefix.end())..];
    after.starts_with(['#', '*', '\u{2022}', '\u{25cf}', '\u{2026}'])
        || after.starts_with("...")
        || token_shape_is_decoy(rule.id, token, body)
}

/// Example words and filler inside a token-shaped value
/// (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx…`, `dapi1234567890abcdef…`). Filler
/// counts only when it makes up nearly the whole token: a valid format with
/// a random part is a secret, whatever sequence its ids contain
/// (`xoxb-123456789012-1234567890123-<random>`). A GitHub token whose
/// checksum holds is real whatever it looks like.
fn token_shape_is_decoy(rule: &str, token: &str, body: &str) -> bool {
    if github_checksum_holds(rule, token) {
        return false;
    }
    // Words a person writes on purpose to say "not a real one" count
    // anywhere; other filler only when it is nearly all there is.
    if has_filler(token) || is_filler(body) {
        return true;
    }
    match rule {
        "private-key-block" => {
            // OpenSSH bodies have long `AAAA` runs; judge variety only.
            let body = token.split("-----").nth(2).unwrap_or_default();
            distinct_bytes(body) < 16
        }
        "jwt" => is_anon_jwt(token) || distinct_bytes(token) < 12,
        // Prefixes that ordinary words and ids also start with: only a
        // random-looking rest makes a token.
        "brave-key-lowconf" | "vault-legacy-token" | "notion-legacy-secret" => {
            let body = token.as_bytes().get(3..).unwrap_or_default();
            !(body.iter().any(u8::is_ascii_lowercase)
                && body.iter().any(u8::is_ascii_uppercase)
                && body.iter().any(u8::is_ascii_digit))
        }
        // Its 76 random characters come before the `AZDO` marker, not after.
        "azure-devops-pat" => is_filler(token),
        "twilio-key" | "octopus-deploy-key" => {
            let body = token.as_bytes().get(4..).unwrap_or_default();
            !(body.iter().any(u8::is_ascii_alphabetic) && body.iter().any(u8::is_ascii_digit))
        }
        _ => distinct_bytes(token) < 8,
    }
}

/// GitHub's tokens end in a CRC32 of their random part, in base62
/// (`ghp_` + 30 random + 6 checksum).
fn github_checksum_holds(rule: &str, token: &str) -> bool {
    const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    if !matches!(rule, "github-pat" | "github-oauth-app-refresh") || token.len() != 40 {
        return false;
    }
    let (random, checksum) = (&token[4..34], &token[34..]);
    let mut value = crc32fast::hash(random.as_bytes());
    let mut expected = [b'0'; 6];
    for slot in expected.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    checksum.as_bytes() == expected
}

/// Whether at least 70% of a value's letters and digits are filler: runs
/// of one character (`xxxx`, `0000`), ascending or descending sequences
/// (`123456`, `abcdef`, `0123…xyz`; case ignored, `9` goes on to `a` or
/// `0`, `z` to `0`) at least three long, and the words people put in
/// made-up values. A random string has almost none of these.
fn is_filler(value: &str) -> bool {
    filler_walk(value, true)
}

/// [`is_filler`], stopping as soon as the answer is no when `stop_early`
/// (else every byte is walked: the reference the tests hold it to).
fn filler_walk(value: &str, stop_early: bool) -> bool {
    let mut buffer = [0u8; 1024];
    // Longer than anyone types filler by hand.
    let Some(chars) = folded_alnum(value, &mut buffer) else {
        return false;
    };
    let len = chars.len();
    if len < 6 {
        return false;
    }
    let run_from = |at: usize| {
        let rest = &chars[at..];
        let up = rest
            .windows(2)
            .take_while(|pair| ascends(pair[0], pair[1]))
            .count();
        let down = rest
            .windows(2)
            .take_while(|pair| ascends(pair[1], pair[0]))
            .count();
        let same = rest
            .windows(2)
            .take_while(|pair| pair[0] == pair[1])
            .count();
        1 + up.max(down).max(same)
    };
    // Each step covers what it passes or leaves one byte uncovered, and
    // the value is filler when at least 70% is covered, at most 30% left
    // uncovered: the answer is no as soon as more is (a random value,
    // after a third of its bytes).
    let mut uncovered = 0;
    let mut at = 0;
    while at < len {
        if let Some(word) = filler_word_at(&chars[at..]) {
            at += word.len();
            continue;
        }
        let run = run_from(at);
        if run >= 3 {
            at += run;
        } else {
            uncovered += 1;
            if stop_early && uncovered * 10 > len * 3 {
                return false;
            }
            at += 1;
        }
    }
    uncovered * 10 <= len * 3
}

/// The words people put in made-up values, folded to lower case.
const FILLER_WORDS: [&[u8]; 12] = [
    b"your",
    b"here",
    b"token",
    b"secret",
    b"key",
    b"api",
    b"test",
    b"demo",
    b"value",
    b"insert",
    b"replace",
    b"changeme",
];

/// The first of [`FILLER_WORDS`] that `chars` starts with. Its first byte
/// rules out most words before any comparison (this runs at every
/// position of every value judged).
fn filler_word_at(chars: &[u8]) -> Option<&'static [u8]> {
    let first = *chars.first()?;
    // Which words start with that byte, one bit each, in the list's order.
    let mut candidates = FILLER_FIRST[usize::from(first)];
    while candidates != 0 {
        let word = FILLER_WORDS[candidates.trailing_zeros() as usize];
        candidates &= candidates - 1;
        if chars.starts_with(word) {
            return Some(word);
        }
    }
    None
}

/// By byte, the [`FILLER_WORDS`] that start with it, one bit each.
const FILLER_FIRST: [u16; 256] = {
    let mut first = [0u16; 256];
    let mut index = 0;
    while index < FILLER_WORDS.len() {
        first[FILLER_WORDS[index][0] as usize] |= 1 << index;
        index += 1;
    }
    first
};

fn distinct_bytes(text: &str) -> usize {
    let mut seen = [false; 256];
    for byte in text.bytes() {
        seen[usize::from(byte)] = true;
    }
    seen.iter().filter(|&&seen| seen).count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scan(value: Value) -> Vec<(String, &'static str, String)> {
        scan_entry(&ServerEntry::from_value(value))
            .into_iter()
            .map(|finding| (finding.field.to_string(), finding.rule, finding.secret))
            .collect()
    }

    fn found(field: &str, rule: &'static str, secret: &str) -> (String, &'static str, String) {
        (field.to_string(), rule, secret.to_string())
    }

    /// Each `(rule, value)` of `found_` alone under `CONFIG_VALUE` is found
    /// whole by its rule, and nothing of `not_found` is found at all.
    fn format_alone(found_: &[(&'static str, String)], not_found: &[String]) {
        for (rule, value) in found_ {
            assert_eq!(
                scan(json!({"command": "x", "env": {"CONFIG_VALUE": value}})),
                [found("env.CONFIG_VALUE", rule, value)],
                "{rule}"
            );
        }
        for value in not_found {
            let found_ = scan(json!({"command": "x", "env": {"CONFIG_VALUE": value}}));
            assert!(found_.is_empty(), "{value}: {found_:?}");
        }
    }

    const GHP: &str = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf1234";

    /// Runs the test named `name` again in a process of its own, where no
    /// other test compiled anything yet; `true` in that process.
    fn in_a_fresh_process(name: &str) -> bool {
        if std::env::var_os("MCPENV_TEST_FRESH_PROCESS").is_some() {
            return true;
        }
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1", "--quiet"])
            .env("MCPENV_TEST_FRESH_PROCESS", "1")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{name} failed in a process of its own");
        false
    }

    fn compiled_rules() -> Vec<&'static str> {
        rules()
            .iter()
            .filter(|rule| rule.compiled.get().is_some())
            .map(|rule| rule.id)
            .collect()
    }

    #[test]
    fn nothing_is_compiled_before_a_string_needs_it() {
        if !in_a_fresh_process("secrets::tests::nothing_is_compiled_before_a_string_needs_it") {
            return;
        }
        // What every command does first: learn its arguments, then print
        // a line through the shield.
        let words: Vec<String> = ["run", "--", "true"].map(String::from).to_vec();
        let shield = crate::secrets::redact::Shield::for_arguments(&words);
        let _ = shield.clean("No MCP servers configured\n");
        let mut redactor = crate::secrets::redact::Redactor::new();
        redactor.learn_env("PORT", "3000");
        redactor.learn_env("NAME", "a plain value, long");
        let _ = redactor.mask_text("a line");
        assert_eq!(rules().len(), RULE_SPECS.len());
        assert!(compiled_rules().is_empty(), "{:?}", compiled_rules());
        // A string without any rule's literal runs no regex.
        assert!(scan(json!({"env": {"NOTE": "nothing secret in this long text"}})).is_empty());
        assert!(PREFILTER.get().is_some());
        assert!(compiled_rules().is_empty(), "{:?}", compiled_rules());
        // One with a literal compiles the rules that literal names.
        assert_eq!(
            scan(json!({"env": {"T": GHP}})),
            [found("env.T", "github-pat", GHP)]
        );
        assert_eq!(compiled_rules(), ["github-pat"]);
    }

    #[test]
    fn every_rule_compiles_once_with_a_unique_id() {
        let rules = rules();
        assert_eq!(rules.len(), RULE_SPECS.len());
        for rule in rules {
            let _ = rule.compiled();
            let _ = rule.prefix();
        }
        let mut ids: Vec<&str> = rules.iter().map(|rule| rule.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), rules.len());
        assert!(ids.len() >= 130);
    }

    #[test]
    fn names_follow_segments_vetoes_and_markers() {
        for name in [
            "GITHUB_TOKEN",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "apiKey",
            "X-API-Key",
            "X-Subscription-Token",
            "Api-Key",
            "apikey",
            "DB_PASSWORD",
            "DATABASE_DSN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "OAuthToken",
            "APIKey",
            "mysql.pwd",
            "REDIS_PASS",
            "LICENSE_KEY",
            "KEY",
            "CSRF_TOKEN_SECRET",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "MONKEY",
            "TURKEY",
            "KEYBOARD_LAYOUT",
            "KEYING",
            "ACCESSOR",
            "AUTHOR",
            "RAPID_API_HOST",
            "PATCH",
            "BYPASS",
            "PASSTHROUGH",
            "COMPASS",
            "KEY_ID",
            "API_KEY_ID",
            "KEY_FILE",
            "KEYSTORE_PATH",
            "TOKEN_URL",
            "GITHUB_TOKEN_URL",
            "API_ENDPOINT",
            "SECRET_NAME",
            "SECRET_LENGTH",
            "ACCESS_ID",
            "API_VERSION",
            "CREDENTIALS_ID",
            "PUBLIC_TOKEN",
            "SUPABASE_ANON_KEY",
            "STRIPE_PUBLISHABLE_KEY",
            "NEXT_PUBLIC_API_KEY",
            "vite_api_key",
            "EXPO_PUBLIC_TOKEN",
            "PRIMARY_KEY",
            "FOREIGN_KEY",
            "CSRF_TOKEN",
            "clientId",
            "AUTH_TYPE",
            "SESSION_TIMEOUT",
            "DATABASE_URL",
            "",
            "___",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn decoys_cover_every_trap() {
        for value in [
            "",
            "   ",
            "${GITHUB_TOKEN}",
            "${X:-default}",
            "$TOKEN",
            "${env:API_KEY}",
            "${input:api_key}",
            "{env:API_KEY}",
            "%API_KEY%",
            "@API_KEY@",
            "{{ .Token }}",
            "${{ secrets.GH_TOKEN }}",
            "Bearer $API_TOKEN",
            "$(cat /run/secrets/token)",
            "<your-token>",
            "<API_KEY>",
            "[TOKEN]",
            "sk-<your-key>",
            "true",
            "null",
            "8080",
            "3000:3000",
            "127.0.0.1",
            "production",
            "Production",
            "info",
            "changeme",
            "change-me",
            "password",
            "secret",
            "example",
            "dummy",
            "sk-...",
            "xxxxxxxx",
            "****",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "ghp_…",
            "sk-proj-••••••••",
            "your-api-key-here",
            "YOUR_API_KEY",
            "insert-token",
            "TODO",
            "/home/u/.ssh/id_rsa",
            "./key.pem",
            "~/.config/gcloud/adc.json",
            "C:\\keys\\server.pem",
            "/run/secrets/token",
            "/Users/Alice/Keys",
            "postgresql://localhost:5432/db",
            "https://api.example.com/v1",
            "postgres://app:${DB_PASSWORD}@db.internal/app",
            "postgres://postgres:postgres@localhost/postgres",
            "postgresql://{username}:{password}@{{host}}:5432/{database}",
            "https://{USER}:{PASS}@template.example.com",
            "https://username:mypassword@test.com/endpoint",
            "postgres://app:secret123@db.internal/app",
            "dev@company.io",
            "us-east-1",
            "gpt-4o-mini",
            "@modelcontextprotocol/server-github",
            "sb_publishable_Xk3j9fLq0Pz8mW2nR5tY7u",
            "pk_live_51HqLyjWDarjtT1zdp7dc",
            "AKIAIOSFODNN7EXAMPLE",
        ] {
            assert!(is_decoy(value), "{value:?}");
        }
        for value in [
            GHP,
            "Xk9fL2qZr4Tb7Wm3Np6s",
            "hunter22!",
            "/Xk9fL2qZr4Tb7Wm3Np6sQe8Vd1Hc5Jg0Ka2Bn4M",
            "550e8400-e29b-41d4-a716-446655440000",
            "postgres://app:Zq8rT2vL9x@db.internal/app",
            "mongodb://admin:secretKey456@cluster0.mongodb.net/admin",
            "https://mcp.x.dev/mcp?api_key=Zq8rT2vL9xWc4n",
            "sk-3f9a0c2b7e1d4a6f8b5c9d0e1f2a3b4c",
        ] {
            assert!(!is_decoy(value), "{value:?}");
        }
    }

    #[test]
    fn entropy() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-9);
        assert!(shannon_entropy(GHP) > 4.0);
    }

    #[test]
    fn env_values_by_token_and_by_name() {
        let aws_secret = "/Xk9fL2qZr4Tb7Wm3Np6sQe8Vd1Hc5Jg0Ka2Bn4M";
        let found_ = scan(json!({
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {
                "GH": GHP,
                "TAVILY_API_KEY": "tvly-dev-4f8KpQ2mZx7LwR9t",
                "MONKEY": "tvly-dev-4f8KpQ2mZx7LwR9t",
                "AWS_SECRET_ACCESS_KEY": aws_secret,
                "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
                "PASSWORD": "production",
                "API_KEY": "YOUR_API_KEY",
                "REDIS_PASS": "short1A!",
                "DATABASE_URL": "postgres://app:Zq8rT2vL9x@db.internal/app",
                "READONLY_URL": "postgres://app@db.internal/app",
            }
        }));
        assert_eq!(
            found_,
            [
                found("env.GH", "github-pat", GHP),
                found(
                    "env.TAVILY_API_KEY",
                    GENERIC_SECRET,
                    "tvly-dev-4f8KpQ2mZx7LwR9t"
                ),
                found(
                    "env.AWS_SECRET_ACCESS_KEY",
                    AWS_SECRET_ACCESS_KEY,
                    aws_secret
                ),
                // A word under a password name is still a password.
                found("env.PASSWORD", GENERIC_SECRET, "production"),
                found("env.DATABASE_URL", URL_USERINFO_PASSWORD, "Zq8rT2vL9x"),
            ]
        );
    }

    #[test]
    fn a_password_name_makes_any_literal_a_secret() {
        for (name, value) in [
            ("PGPASSWORD", "postgres"),
            ("DB_PASSWORD", "hunter2"),
            ("MYSQL_PWD", "pw"),
            ("MYSQL_ROOT_PASSWORD", "root"),
            ("REDISPASSWD", "x1"),
            ("JWT_SECRET", "dev"),
            ("PIN", "1234"),
            ("GPG_PASSPHRASE", "correct horse battery staple"),
        ] {
            let found_ = scan(json!({"command": "x", "env": {name: value}}));
            assert_eq!(
                found_,
                [found(&format!("env.{name}"), GENERIC_SECRET, value)],
                "{name}"
            );
        }
        for (name, value) in [
            ("DB_PASSWORD", ""),
            ("DB_PASSWORD", "${DB_PASSWORD}"),
            ("DB_PASSWORD", "<your password>"),
            ("DB_PASSWORD", "op://Team/db/password"),
            ("DB_PASSWORD", "****"),
            ("DB_PASSWORD", "your-password-here"),
            ("USE_SECRET", "true"),
            ("PWD", "/home/me/project"),
            ("NEXT_PUBLIC_SECRET", "shown-to-everyone"),
            ("PASSWORD_FILE", "/run/secrets/db"),
            ("PINECONE_INDEX", "docs"),
        ] {
            assert_eq!(
                scan(json!({"command": "x", "env": {name: value}})),
                [],
                "{name}={value}"
            );
        }
    }

    #[test]
    fn args_pairs_inline_bare_and_dsn() {
        let entry = ServerEntry::from_value(json!({
            "command": "npx",
            "args": [
                "-y", "@bytebase/dbhub",
                "--api-key", "Zq8rT2vL9xWc4nBv",
                "--token=Kp3mW8xQz2Lr7TvY",
                "--github-token=Hd8sK2pLq9Wz3Xc",
                GHP,
                "--dsn", "postgres://app:Zq8rT2vL9x@db.internal/app",
                "-p", "8080",
                "--password-file", "/run/secrets/pw",
                "--api-key", "${API_KEY}",
                "-e", "API_KEY=Mv7qT2zK9xLp3Wr",
                "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
            ]
        }));
        let findings = scan_entry(&entry);
        let shown: Vec<_> = findings
            .iter()
            .map(|finding| {
                (
                    finding.field.to_string(),
                    finding.rule,
                    finding.secret.as_str(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("args[3]".to_string(), CLI_FLAG_SECRET, "Zq8rT2vL9xWc4nBv"),
                ("args[4]".to_string(), CLI_FLAG_SECRET, "Kp3mW8xQz2Lr7TvY"),
                ("args[5]".to_string(), CLI_FLAG_SECRET, "Hd8sK2pLq9Wz3Xc"),
                ("args[6]".to_string(), "github-pat", GHP),
                ("args[8]".to_string(), URL_USERINFO_PASSWORD, "Zq8rT2vL9x"),
                ("args[16]".to_string(), GENERIC_SECRET, "Mv7qT2zK9xLp3Wr"),
            ]
        );
        assert_eq!(findings[1].span, 8..24);
        assert_eq!(findings[4].span, 15..25);
    }

    #[test]
    fn url_parts_and_headers() {
        let anon = anon_jwt();
        let findings = scan_entry(&ServerEntry::from_value(json!({
            "type": "http",
            "url": "https://bot:Zq8rT2vL9x@mcp.x.dev/mcp?tavilyApiKey=Kp3mW8xQz2Lr7TvY&mode=fast&key=short",
            "headers": {
                "Authorization": "Bearer Mv7qT2zK9xLp3Wr",
                "X-API-Key": "Hd8sK2pLq9Wz3XcV",
                "apikey": anon,
                "X-Request-Id": "Hd8sK2pLq9Wz3XcV",
                "Proxy-Authorization": format!("Basic {}", STANDARD_PAD_INDIFFERENT.encode("me:Zq8rT2vL9x")),
                "X-Other": format!("Basic {}", STANDARD_PAD_INDIFFERENT.encode("me:password")),
                "Cookie": "short=1",
            }
        })));
        let shown: Vec<_> = findings
            .iter()
            .map(|finding| {
                (
                    finding.field.to_string(),
                    finding.rule,
                    finding.span.clone(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("url.password".to_string(), URL_USERINFO_PASSWORD, 12..22),
                (
                    "url.query.tavilyApiKey".to_string(),
                    QUERY_PARAM_SECRET,
                    50..66
                ),
                ("headers.Authorization".to_string(), AUTH_HEADER, 7..22),
                ("headers.X-API-Key".to_string(), API_KEY_HEADER, 0..16),
                (
                    "headers.Proxy-Authorization".to_string(),
                    AUTH_HEADER,
                    6..26
                ),
            ]
        );
    }

    fn anon_jwt() -> String {
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(
            r#"{"iss":"supabase","ref":"abcdefghijklmnopqrst","role":"anon","iat":1700000000}"#,
        );
        format!("{header}.{payload}.Zq8rT2vL9xWc4nBvKp3mW8xQz2Lr7TvYHd8sK2pLq9W")
    }

    #[test]
    fn public_and_masked_tokens_are_not_reported() {
        let service = anon_jwt().replace(
            &URL_SAFE_NO_PAD.encode(r#"{"iss":"supabase","ref":"abcdefghijklmnopqrst","role":"anon","iat":1700000000}"#),
            &URL_SAFE_NO_PAD.encode(r#"{"iss":"supabase","ref":"abcdefghijklmnopqrst","role":"service_role","iat":1700000000}"#),
        );
        let found_ = scan(json!({
            "command": "x",
            "env": {
                "SUPABASE_KEY": anon_jwt(),
                "SUPABASE_SERVICE_ROLE_KEY": service,
                "SUPABASE_PUBLISHABLE": "sb_publishable_Xk3j9fLq0Pz8mW2nR5tY7u",
                "GITHUB_TOKEN": "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "SLACK": "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            }
        }));
        assert_eq!(
            found_,
            [found("env.SUPABASE_SERVICE_ROLE_KEY", "jwt", &service)]
        );
    }

    #[test]
    fn tokens_inside_longer_strings_and_overlaps() {
        let header_arg = format!("Authorization: Bearer {GHP}");
        let webhook =
            "https://hooks.slack.com/services/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";
        let found_ = scan(json!({
            "command": format!("GITHUB_TOKEN={GHP} npx server"),
            "args": ["--header", header_arg, "--header", "X-API-Key: Zq8rT2vL9xWc4nBv", webhook],
        }));
        assert_eq!(
            found_,
            [
                found("command", "github-pat", GHP),
                found("args[1]", "github-pat", GHP),
                found("args[3]", API_KEY_HEADER, "Zq8rT2vL9xWc4nBv"),
                found("args[4]", "slack-webhook", webhook),
            ]
        );
    }

    #[test]
    fn private_keys_with_real_or_escaped_newlines() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----");
        let escaped = pem.replace('\n', "\\n");
        let found_ =
            scan(json!({"command": "x", "env": {"KEY_PEM": format!("{pem}\n"), "GCP": escaped}}));
        assert_eq!(
            found_,
            [
                found("env.KEY_PEM", "private-key-block", &pem),
                found("env.GCP", "private-key-block", &escaped),
            ]
        );
    }

    #[test]
    fn a_decoy_token_silences_the_name_too() {
        // Matches `github-pat`, but is the classic example value: neither the
        // token rule nor the name heuristic may report it.
        let found_ = scan(json!({"command": "x", "env": {
            "GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "ANTHROPIC_API_KEY": format!("sk-ant-api03-{}AA", "x".repeat(93)),
        }}));
        assert!(found_.is_empty(), "{found_:?}");
    }

    /// 24 characters no filler rule explains.
    const RANDOM24: &str = "q8ZtR2mVx7LkP4wN9cJ3bH6s";

    #[test]
    fn filler_counts_only_when_it_is_the_whole_value() {
        // Sequential ids, random secret part: a secret (issue 13's Slack case).
        let slack = format!("xoxb-123456789012-1234567890123-{RANDOM24}");
        assert_eq!(
            scan(json!({"command": "x", "env": {"SLACK_BOT_TOKEN": slack}})),
            [found("env.SLACK_BOT_TOKEN", "slack-token", &slack)]
        );
        // All filler: decoys, under a name or in a format.
        for value in [
            "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
            "xoxb-123456789012-1234567890123-xxxxxxxxxxxxxxxxxxxxxxxx",
            "dapi123456789012345678a9bc01234defg5",
            "0123456789abcdefghijklmnopqrstuvwxyz_-.",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "ntn_12345678901abc",
        ] {
            let found_ = scan(json!({"command": "x", "env": {"API_TOKEN": value}}));
            assert!(found_.is_empty(), "{value}: {found_:?}");
        }
        // The fixed prefix does not count against the filler after it.
        let placeholder =
            json!({"command": "x", "env": {"CONFIG_VALUE": "GR1348941XXXXXXXXXXXXXXXXXXXX"}});
        assert!(scan(placeholder).is_empty());
        assert!(!is_filler(RANDOM24));
    }

    #[test]
    fn masked_tails_and_example_words_are_decoys() {
        for value in [
            "xoxp-572370529330-573807301142-572331691188-####################",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbC…",
        ] {
            let found_ = scan(json!({"command": "x", "env": {"CONFIG_VALUE": value}}));
            assert!(found_.is_empty(), "{value}: {found_:?}");
        }
    }

    #[test]
    fn a_valid_github_checksum_outweighs_filler() {
        // 30 characters of filler with their real CRC32 tail.
        let random = "0123456789abcdefghijklmnopqrst";
        let mut value = crc32fast::hash(random.as_bytes());
        let alphabet = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut tail = [b'0'; 6];
        for slot in tail.iter_mut().rev() {
            *slot = alphabet[(value % 62) as usize];
            value /= 62;
        }
        let token = format!("ghp_{random}{}", std::str::from_utf8(&tail).unwrap());
        assert!(github_checksum_holds("github-pat", &token));
        assert_eq!(
            scan(json!({"command": "x", "env": {"CONFIG_VALUE": token}})),
            [found("env.CONFIG_VALUE", "github-pat", &token)]
        );
    }

    #[test]
    fn formats_need_their_exact_length_and_start() {
        let google = format!("AIza{}", "Xb3kLm9QzR7tWv2NpY5sJd8FhG4cKe6Tq1U");
        assert_eq!(google.len(), 39);
        assert_eq!(
            scan(json!({"command": "x", "env": {"CONFIG_VALUE": google}})),
            [found("env.CONFIG_VALUE", "google-api-key", &google)]
        );
        // Seven more characters: not a Google key.
        let longer = format!("{google}abcd123");
        assert!(scan(json!({"command": "x", "env": {"CONFIG_VALUE": longer}})).is_empty());
        // A file name that happens to contain `ico-` and 32 characters.
        let file = "http://cdn.example.net/img/box.ico-7a388b69018576d24b59331fd60aab0c.png";
        assert!(scan(json!({"command": "x", "args": [file]})).is_empty());
    }

    /// The formats of issue 29's last round, each from its issuer's
    /// published shape, found under a neutral name; the look-alikes next
    /// to them are not.
    #[test]
    fn issuer_formats_of_the_last_round() {
        let body93 = format!("{RANDOM24}{RANDOM24}{RANDOM24}Tq7Vw2Xz9KpL4mN8bR3cY");
        assert_eq!(body93.len(), 93);
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJnaXRodWIiLCJpYXQiOjE3NzcyNzY4MDB9.Qm9ndXNTaWduYXR1cmVWYWx1ZQ";
        let azure = format!("{RANDOM24}{RANDOM24}{RANDOM24}Tq7W");
        assert_eq!(azure.len(), 76);
        format_alone(
            &[
                // Anthropic's next key version, same body.
                ("anthropic-key", format!("sk-ant-api04-{body93}AA")),
                // Shopify: letters and digits, 32 characters and more.
                ("shopify-token", format!("shpat_{RANDOM24}Tq7Vw2Xz")),
                ("shopify-token", format!("shpca_{RANDOM24}Tq7Vw2Xz9KpL4m")),
                (
                    "shopify-token",
                    "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".to_string(),
                ),
                // GitHub's stateless installation token: app id, then a JWT.
                ("github-app-installation-token", format!("ghs_123456_{jwt}")),
                ("azure-devops-pat", format!("{azure}AZDO7fQ2")),
                (
                    "mongodb-atlas-service-account-secret",
                    format!("mdb_sa_sk_{RANDOM24}Tq7Vw2Xz9KpL4mN8"),
                ),
            ],
            &[
                // Too short for Anthropic's body, or Shopify's.
                "sk-ant-api05-Xk3j9fLq0Pz8".to_string(),
                format!("shpat_{RANDOM24}"),
                // `ghs_` and an id with no JWT after it.
                format!("ghs_123456_{RANDOM24}"),
                // Microsoft's own example: the alphabet in a row.
                "abcdefghijklmnopqrstuvwxyz012345679ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnoAZDOabcd"
                    .to_string(),
            ],
        );
    }

    /// Formats widened or added after TruffleHog's pattern tests were
    /// measured, each from what its issuer publishes: Buildkite's `bkua_`
    /// prefix (no hex body), Pagar.me's `ak_live_`/`ak_test_` keys,
    /// Typeform's `tfp_` with 40 hex characters.
    #[test]
    fn issuer_formats_after_the_fourth_source() {
        let lower40 = "q7x2m9k4p1z8w3n6r5t0y2u8i4o7a1s3d5f9g2h6";
        assert_eq!(lower40.len(), 40);
        let hex40 = "7c1e9a04f3b28d65e0a7c94b1f2d3e8a6b5c0d97";
        assert_eq!(hex40.len(), 40);
        format_alone(
            &[
                ("buildkite-token", format!("bkua_{lower40}")),
                ("typeform-token", format!("tfp_{hex40}")),
                ("pagarme-api-key", format!("ak_live_{RANDOM24}Tq7")),
                ("pagarme-api-key", format!("ak_test_{RANDOM24}")),
            ],
            &[
                // One character short of Buildkite's 40, or upper case in it.
                format!("bkua_{}", &lower40[1..]),
                format!("bkua_{}", lower40.to_uppercase()),
                // One short of Typeform's 40.
                format!("tfp_{}", &hex40[1..]),
                // Not Pagar.me's environments, or too short a body.
                format!("ak_prod_{RANDOM24}"),
                "ak_live_Tq7Vw2Xz9Kp".to_string(),
            ],
        );
    }

    /// The second round after TruffleHog: formats whose prefix their
    /// issuers do publish, found on a closer look (NVIDIA's `nvapi-`,
    /// BestTime's `pri_`, SaladCloud's `salad_cloud_user_`), and Atlassian
    /// tokens of any length from 20, as Atlassian says they vary.
    #[test]
    fn issuer_formats_after_the_fourth_source_second_round() {
        let nvapi64 = "pW4vOcztKc4CVjxkZMmxFOXeex-iXQXuXugdi9zeN4Hla8wme2zMiTy4sk1G2H_M";
        assert_eq!(nvapi64.len(), 64);
        let hex32 = "e81c5f992146bb9dfce31c9da1629c20";
        let salad49 = "gkiEJ8oxyMXOcOcaxbxJemBfFEJNLALIMdeumRsw6QwVYVwCZ";
        let atlassian26 = "zNpeYtAT=8UKuPtpslrUdaMkme";
        format_alone(
            &[
                ("nvidia-api-key", format!("nvapi-{nvapi64}")),
                ("besttime-private-key", format!("pri_{hex32}")),
                ("saladcloud-api-key", format!("salad_cloud_user_{salad49}")),
                (
                    "saladcloud-api-key",
                    format!("salad_cloud_user_{}", &salad49[..20]),
                ),
                ("atlassian-token", format!("ATCTT3{atlassian26}")),
                ("atlassian-token", format!("ATATT3x{}", &salad49[..19])),
            ],
            &[
                // One short of NVIDIA's 64, or one more.
                format!("nvapi-{}", &nvapi64[1..]),
                format!("nvapi-{nvapi64}x"),
                // One short of BestTime's 32, or upper case in it; its public
                // key (`pub_`) is read-only and not flagged.
                format!("pri_{}", &hex32[1..]),
                format!("pri_{}", hex32.to_uppercase()),
                format!("pub_{hex32}"),
                // Below 20 after SaladCloud's prefix; `salad_cloud_org_` is
                // no prefix SaladCloud publishes.
                format!("salad_cloud_user_{}", &salad49[..19]),
                format!("salad_cloud_org_{salad49}"),
                // Below 20 after Atlassian's prefix.
                format!("ATCTT3{}", &atlassian26[..19]),
            ],
        );
    }

    #[test]
    fn a_service_account_key_file_is_found_by_its_key_even_cut_short() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";
        // The END line lost a dash: no PEM block, still Google's key file.
        let key = format!("-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY----\\n");
        let file = format!(
            r#"{{"type": "service_account", "project_id": "analytics", "private_key": "{key}", "client_email": "mcp@analytics.iam.gserviceaccount.com"}}"#
        );
        assert_eq!(
            scan(json!({"command": "x", "env": {"CONFIG_VALUE": file}})),
            [found("env.CONFIG_VALUE", GCP_SERVICE_ACCOUNT_KEY, &key)]
        );
        // A JSON that is no service-account key file is not judged by it.
        let other = file.replace("service_account", "authorized_user");
        assert!(scan(json!({"command": "x", "env": {"CONFIG_VALUE": other}})).is_empty());
        // A well-formed key stays the PEM rule's.
        let pem = format!("-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----");
        let whole = file.replace(&key, &format!("{pem}\\n"));
        assert_eq!(
            scan(json!({"command": "x", "env": {"CONFIG_VALUE": whole}})),
            [found("env.CONFIG_VALUE", "private-key-block", &pem)]
        );
    }

    #[test]
    fn a_priv_name_holds_a_private_key() {
        let hex = "c41f0a9d7e3b25c86f14ad9e0b7c3f2815e6d4a9b0c7f3e1d28a5b6c9f0e4d71";
        for name in ["SECP256K1_PRIV", "privKey", "WALLET_PRIVKEY"] {
            assert_eq!(
                scan(json!({"command": "x", "env": {name: hex}})),
                [found(&format!("env.{name}"), GENERIC_SECRET, hex)],
                "{name}"
            );
        }
        // A weak name: words are words, and a mode is no key.
        assert!(scan(json!({"command": "x", "env": {"PRIV": "production-readonly"}})).is_empty());
        assert!(scan(json!({"command": "x", "env": {"PRIV_MODE": hex}})).is_empty());
    }

    #[test]
    fn a_password_that_is_one_run_of_the_alphabet_is_a_stand_in() {
        for url in [
            "https://user:abc@api.com/v1",
            "postgres://app:123@db.internal:5432/app",
            "mysql://root:4321@localhost/app",
            "https://svc:XYZ@api.com/",
        ] {
            let found_ = scan(json!({"command": "x", "args": [url]}));
            assert!(found_.is_empty(), "{url}: {found_:?}");
        }
        // Short, but no run: a password all the same.
        for (url, password) in [
            ("https://user:abd@api.com/v1", "abd"),
            ("postgres://app:x7Kq@db.internal:5432/app", "x7Kq"),
            ("https://user:s3cr3tPass@api.com/v1", "s3cr3tPass"),
        ] {
            assert_eq!(
                scan(json!({"command": "x", "args": [url]})),
                [found("args[0]", URL_USERINFO_PASSWORD, password)],
                "{url}"
            );
        }
        let basic = STANDARD_PAD_INDIFFERENT.encode("user:123");
        let found_ = scan(json!({"type": "http", "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": format!("Basic {basic}")}}));
        assert!(found_.is_empty(), "{found_:?}");
        assert!(is_one_run("abc") && is_one_run("7890") && is_one_run("CBA"));
        assert!(!is_one_run("ab") && !is_one_run("abd") && !is_one_run("a-b-c"));
    }

    #[test]
    fn new_formats_and_webhooks() {
        for (rule, value) in [
            ("gitlab-token", format!("gldt-{RANDOM24}")),
            (
                "gitlab-runner-registration-token",
                format!("GR1348941{RANDOM24}"),
            ),
            ("slack-workspace-token", format!("xoxr-{RANDOM24}")),
            ("slack-app-token", format!("xapp-1-A0{RANDOM24}")),
            ("vercel-token", format!("vcp_{RANDOM24}Tq7Vw2Xz9KpL4mN8")),
            (
                "cloudflare-token",
                format!("cfat_{RANDOM24}Tq7Vw2Xz9KpL4mN803fa099b"),
            ),
            (
                "openshift-token",
                format!("sha256~{RANDOM24}{}", "Tq7Vw2Xz9KpL4mN8bR3"),
            ),
            (
                "planetscale-token",
                format!("pscale_pw_{RANDOM24}{}", "Tq7Vw2Xz9K"),
            ),
            (
                "azure-ad-client-secret",
                format!("GN.7Q~{RANDOM24}Tq7Vw2Xz9K"),
            ),
            (
                "discord-webhook",
                format!(
                    "https://discord.com/api/webhooks/123456789012345678/{RANDOM24}{RANDOM24}Tq7Vw2Xz9KpL4mN8bR3c"
                ),
            ),
            (
                "zapier-webhook",
                "https://hooks.zapier.com/hooks/catch/8317465/3kq9zt2/".to_string(),
            ),
            (
                "jwt",
                "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.".to_string(),
            ),
        ] {
            assert_eq!(
                scan(json!({"command": "x", "env": {"CONFIG_VALUE": value}})),
                [found("env.CONFIG_VALUE", rule, &value)],
                "{rule}"
            );
        }
        // Cloudflare's 40 characters and 8-hex checksum, one too many: not it.
        let longer = format!("cfat_{RANDOM24}Tq7Vw2Xz9KpL4mN803fa099bZ");
        assert!(scan(json!({"command": "x", "env": {"CONFIG_VALUE": longer}})).is_empty());
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.Qm9ndXNTaWduYXR1cmVWYWx1ZQ";
        let encoded = STANDARD_PAD_INDIFFERENT.encode(jwt);
        assert_eq!(
            scan(json!({"command": "x", "env": {"CONFIG_VALUE": encoded}})),
            [found("env.CONFIG_VALUE", "jwt-base64", &encoded)]
        );
        // Base64 that is no JWT is left alone.
        let other = STANDARD_PAD_INDIFFERENT.encode(format!("eyJ is how {RANDOM24} starts, here"));
        assert!(scan(json!({"command": "x", "env": {"CONFIG_VALUE": other}})).is_empty());
    }

    #[test]
    fn odd_shapes_under_secret_names() {
        let found_ = scan(
            json!({"command": "x", "args": ["--api-key", "-T9wYDiOq3ZkX7mVb2LpR4sN8"], "env": {
                "DISCORD_SECRET": "74133326150238477362018459233107",
                "SIDEKIQ_KEY": "qwhxkzjsdfvrhtklmnbq",
                "BUCKET_KEY": "SalesResults-1.2",
                "ISSUER_KEY_HASH": "1GnWi3zZW7Jv-IuZGk6oiKkYS0v6pj",
                "PORT": "8080",
            }}),
        );
        assert_eq!(
            found_,
            [
                found("args[1]", CLI_FLAG_SECRET, "-T9wYDiOq3ZkX7mVb2LpR4sN8"),
                found(
                    "env.DISCORD_SECRET",
                    GENERIC_SECRET,
                    "74133326150238477362018459233107"
                ),
                found("env.SIDEKIQ_KEY", GENERIC_SECRET, "qwhxkzjsdfvrhtklmnbq"),
            ]
        );
        // A flag after a secret flag stays a flag.
        assert!(scan(json!({"command": "x", "args": ["--token", "--read-only"]})).is_empty());
    }

    #[test]
    fn basic_credentials_urls_and_connection_strings() {
        let basic = |pair: &str| format!("Basic {}", STANDARD_PAD_INDIFFERENT.encode(pair));
        let found_ = scan(
            json!({"type": "http", "url": "https://x.example/mcp", "headers": {
                "Authorization": basic("test@liferay.com:sunshine"),
            }}),
        );
        assert_eq!(found_.len(), 1, "{found_:?}");
        for pair in ["user:password", "guest:guest", "admin:${ADMIN_PASSWORD}"] {
            let found_ = scan(
                json!({"type": "http", "url": "https://x.example/mcp", "headers": {
                    "Authorization": basic(pair),
                }}),
            );
            assert!(found_.is_empty(), "{pair}: {found_:?}");
        }
        // An API key as the user name (`curl -u KEY:`).
        let found_ = scan(
            json!({"type": "http", "url": "https://x.example/mcp", "headers": {
                "Authorization": basic("d2LkV78zLx!t:"),
            }}),
        );
        assert_eq!(found_.len(), 1, "{found_:?}");
        let found_ = scan(json!({"command": "x", "env": {
            "DATABASE_URL": "postgres://app:sunshine@db.internal:5432/app",
            "JDBC_URL": "jdbc:mysql://app:Hd8sK2pLq9W@db:3306/app",
            "SQLSERVER": "jdbc:sqlserver://db:1433;databaseName=app;user=app;password=Hd8sK2pLq9W;",
            "AZURE_STORAGE": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zq8rT2vL9xWc4nBvKp3mQw7yHs5dJf2kLg6nBt1vCx4zMr8pWq==;EndpointSuffix=core.windows.net",
            "SERVICE_BUS": "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zq8rT2vL9xWc4nBvKp3mQw7yHs5dJf2kLg6=",
            "LOCAL_DB": "postgres://postgres:postgres@localhost:5432/app",
            "DOC_DB": "postgres://user:pass@db_host/db_name",
        }}));
        let secrets: Vec<&str> = found_
            .iter()
            .map(|(_, _, secret)| secret.as_str())
            .collect();
        assert_eq!(
            secrets,
            [
                "sunshine",
                "Hd8sK2pLq9W",
                "Hd8sK2pLq9W",
                "Zq8rT2vL9xWc4nBvKp3mQw7yHs5dJf2kLg6nBt1vCx4zMr8pWq==",
                "Zq8rT2vL9xWc4nBvKp3mQw7yHs5dJf2kLg6=",
            ],
            "{found_:?}"
        );
    }

    #[test]
    fn credentials_inside_other_values() {
        let found_ = scan(json!({"command": "x", "env": {
            "AUTH_HEADER": "Bearer Zq8rT2vL9xWc4nBvKp3m",
            "OPENAPI_MCP_HEADERS": r#"{"Authorization": "Bearer Mv7qT2zK9xLp3WrQ", "Notion-Version": "2022-06-28"}"#,
            "MSSQL": "Server=tcp:db,1433;User ID=app;Password=Hd8s!K2pLq9W;Encrypt=true;",
            "LOCAL_SQL": "Server=localhost;Trusted_Connection=True;",
        }}));
        assert_eq!(
            found_,
            [
                found("env.AUTH_HEADER", AUTH_HEADER, "Zq8rT2vL9xWc4nBvKp3m"),
                found("env.OPENAPI_MCP_HEADERS", AUTH_HEADER, "Mv7qT2zK9xLp3WrQ"),
                found("env.MSSQL", GENERIC_SECRET, "Hd8s!K2pLq9W"),
            ]
        );
    }

    #[test]
    fn short_flags_and_weak_names_need_long_values() {
        let found_ = scan(json!({"command": "docker", "args": [
            "run", "-p", "3000:3000", "-p", "Zq8rT2vL9x", "-p", "Zq8rT2vL9xWc4nBvKp",
            "--key", "short-ish-key", "--auth", "Mv7qT2zK9xLp3WrQ",
        ], "env": {"REDIS_PASS": "Hd8sK2pLq9W", "SESSION": "Hd8sK2pLq9WzXc4nB"}}));
        assert_eq!(
            found_,
            [
                found("args[6]", CLI_FLAG_SECRET, "Zq8rT2vL9xWc4nBvKp"),
                found("args[10]", CLI_FLAG_SECRET, "Mv7qT2zK9xLp3WrQ"),
                found("env.SESSION", GENERIC_SECRET, "Hd8sK2pLq9WzXc4nB"),
            ]
        );
    }

    #[test]
    fn public_tokens_zero_keys_and_code_are_not_secrets() {
        let found_ = scan(json!({"command": "npx", "env": {
            "APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://example.com:111/",
            "MAPBOX_TOKEN": "pk.eyJ1IjoibWFwYm94IiwiYSI6ImNpejY4M29iazA2Z2gycXA4N2pmbDZmangifQ.-g_vE53SD2WrJ6tFX7QHmA",
            "PWD": "pwd = strdup(buf);",
            "DB_PWD": "pwd = getpass();",
            "STORAGE": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zq8rT2vL9xWc4nBvKpHd8sK2pLq9WzXc4nBmQ1rT7uY=;EndpointSuffix=core.windows.net",
        }}));
        assert_eq!(
            found_,
            [found(
                "env.STORAGE",
                GENERIC_SECRET,
                "Zq8rT2vL9xWc4nBvKpHd8sK2pLq9WzXc4nBmQ1rT7uY="
            )]
        );
    }

    #[test]
    fn a_basic_credential_is_judged_by_what_it_decodes_to() {
        // Its base64 spells `yOUR`, a filler word, by chance.
        let encoded = STANDARD_PAD_INDIFFERENT.encode("api:el5AZx7eATZBzctz29DuBH8A");
        assert!(encoded.to_ascii_lowercase().contains("your"));
        let found_ = scan(json!({"type": "http", "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": format!("Basic {encoded}"),
                        "X-Other": format!("Basic {}", STANDARD_PAD_INDIFFERENT.encode("your-user:your-password"))}}));
        assert_eq!(
            found_,
            [found("headers.Authorization", AUTH_HEADER, &encoded)]
        );
    }

    #[test]
    fn a_dotted_docker_env_name_is_a_name() {
        let found_ = scan(json!({"command": "docker", "args": [
            "run", "-e", "Snowflake.Private.Key.Passphrase=qxo605GKfckXKBOMDKhmhvPb",
            "-e", "spring.datasource.password=hunter2", "-e", "log.path=/var/log/x", "img",
        ]}));
        assert_eq!(
            found_,
            [
                found("args[2]", GENERIC_SECRET, "qxo605GKfckXKBOMDKhmhvPb"),
                found("args[4]", GENERIC_SECRET, "hunter2"),
            ]
        );
    }

    #[test]
    fn a_password_flag_takes_a_password_of_any_shape() {
        let found_ = scan(json!({"command": "pg-mcp", "args": [
            "--password", "hunter2", "--db-password=letmein", "--password-file", "/run/db",
            "--no-password", "localhost", "--password", "${PGPASSWORD}", "--password", "changeme",
            "--password", "true",
        ]}));
        assert_eq!(
            found_,
            [
                found("args[1]", CLI_FLAG_SECRET, "hunter2"),
                found("args[2]", CLI_FLAG_SECRET, "letmein"),
            ]
        );
    }

    #[test]
    fn tokens_in_urls_take_the_part_they_sit_in() {
        let entry = ServerEntry::from_value(json!({
            "type": "http",
            "url": format!("https://mcp.x.dev/{GHP}/sse?key={GHP}"),
        }));
        let shown: Vec<_> = scan_entry(&entry)
            .into_iter()
            .map(|finding| (finding.field.to_string(), finding.rule, finding.span))
            .collect();
        assert_eq!(
            shown,
            [
                ("url".to_string(), "github-pat", 18..58),
                ("url.query.key".to_string(), "github-pat", 67..107),
            ]
        );
    }

    /// The string a finding's span points into.
    fn field_text<'e>(entry: &'e ServerEntry, field: &Field) -> &'e str {
        let fields = entry.fields();
        match field {
            Field::Command => fields["command"].as_str(),
            Field::Arg(index) => fields["args"][*index].as_str(),
            Field::Env(key) => fields["env"][key].as_str(),
            Field::Url | Field::UrlPassword | Field::UrlQuery(_) => fields["url"].as_str(),
            Field::Header(name) => fields["headers"][name].as_str(),
        }
        .unwrap()
    }

    #[test]
    fn remembered_name_verdicts_are_the_ones_worked_out() {
        let long = "SECRET_".repeat(NAME_MEMO_BYTES);
        let names = [
            "GITHUB_TOKEN",
            "HOME",
            "PWD",
            "OLDPWD",
            "DB_PASSWORD",
            "PGPASSWORD",
            "apiKey",
            "X-API-Key",
            "NEXT_PUBLIC_TOKEN",
            "PUBLIC_KEY",
            "PRIMARY_KEY",
            "AWS_ACCESS_KEY_ID",
            "CSRF_TOKEN",
            "",
            "p",
            "client-secret",
            &long,
        ];
        // Twice: worked out, then remembered.
        for _ in 0..2 {
            for name in names {
                assert_eq!(name_strength(name), name_strength_of(name), "{name}");
                assert_eq!(is_password_name(name), is_password_name_of(name), "{name}");
            }
        }
        // Past the memo's bound, names are still judged right.
        for index in 0..NAME_MEMO_ENTRIES + 10 {
            let name = format!("N{index}_TOKEN");
            assert_eq!(name_strength(&name), Some(Strength::Strong));
        }
        assert_eq!(name_strength("GITHUB_TOKEN"), Some(Strength::Strong));
        assert!(NAME_MEMO.with_borrow(|memo| memo.len()) <= NAME_MEMO_ENTRIES);
    }

    proptest::proptest! {
        #[test]
        fn filler_word_at_finds_the_first_word_the_text_starts_with(
            text in "(your|here|token|secret|key|api|test|demo|value|insert|replace|changeme|[a-z0-9]{0,3}){0,4}",
        ) {
            let chars = text.as_bytes();
            let plain = FILLER_WORDS.iter().find(|word| chars.starts_with(word)).copied();
            proptest::prop_assert_eq!(filler_word_at(chars), plain);
        }

        /// The needles are found where a search for each word, ASCII case
        /// ignored, finds one.
        #[test]
        fn needles_find_what_searching_each_word_finds(
            value in "(your|EXAMPLE|Fake|not-a-real|xxxx|\\.\\.|…|•|●|[a-zA-Z.*x_-]{0,4}){0,5}",
        ) {
            const WORDS: [&str; 8] = ["your", "example", "fake", "not-a-real", "xxxx", "...", "…", "●"];
            const FOUND: Needles<8> = Needles::new(WORDS);
            let searched = WORDS.iter().any(|word| {
                value
                    .as_bytes()
                    .windows(word.len())
                    .any(|window| window.eq_ignore_ascii_case(word.as_bytes()))
            });
            proptest::prop_assert_eq!(FOUND.found_in(&value), searched);
        }

        /// Looking for the bytes every reference form holds first changes
        /// no answer.
        #[test]
        fn has_reference_agrees_with_looking_for_each_form(
            value in "(\\$|\\{|\\}|%|@|\\(|env:|[A-Z]{1,3}|[a-z0-9_]{1,3}| ){0,8}",
        ) {
            proptest::prop_assert_eq!(has_reference(&value), has_reference_of(&value));
        }

        /// The fast path folds what a byte at a time folds, whatever fits.
        #[test]
        fn folded_alnum_agrees_with_a_byte_at_a_time(
            value in "[a-zA-Z0-9 _.:/é€-]{0,40}",
            size in 0usize..48,
        ) {
            let (mut fast, mut bytewise) = ([0u8; 48], [0u8; 48]);
            proptest::prop_assert_eq!(
                folded_alnum(&value, &mut fast[..size]),
                folded_alnum_bytewise(&value, &mut bytewise[..size])
            );
        }

        /// Spans point at the secret, on any text (multi-byte included)
        /// behind the prefixes that start each kind of rule.
        #[test]
        fn spans_point_at_the_secret(
            prefix in proptest::sample::select(vec![
                "", "Bearer ", "Basic ", "ghp_", "sk-ant-api03-", "postgres://u:", "https://a:b@h/?api_key=",
                "--token=", "--api-key ", "Authorization:\u{a0}basic ", "X-API-Key: ", "API_KEY=",
                "Server=x;Password=", "-----BEGIN PRIVATE KEY-----", "eyJ",
            ]),
            body in "(\\PC|[A-Za-z0-9+/=_-]){0,120}",
            name in proptest::sample::select(vec!["API_KEY", "X-Api-Key", "Authorization", "MONKEY", "-p"]),
        ) {
            let value = format!("{prefix}{body}");
            let entry = ServerEntry::from_value(json!({
                "command": value,
                "args": [name, value, format!("{name}={value}")],
                "env": {name: value},
                "url": value,
                "headers": {name: value},
            }));
            for finding in scan_entry(&entry) {
                let text = field_text(&entry, &finding.field);
                proptest::prop_assert_eq!(&text[finding.span.clone()], finding.secret.as_str());
            }
        }
    }

    /// What [`text_candidates`] adds, worked out without the memo.
    fn candidates_unremembered(text: &str, url_parts: bool) -> Vec<Candidate> {
        let mut out = Vec::new();
        scan_tokens(text, &mut out);
        if url_parts {
            scan_url_parts(text, &mut out);
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn is_filler_stopping_early_agrees_with_walking_all(
            value in "(your|here|token|key|api|x{1,6}|0123|abc|zyx|[A-Za-z0-9]{1,4}|[-_ .]){0,24}",
        ) {
            proptest::prop_assert_eq!(is_filler(&value), filler_walk(&value, false));
        }

        /// The memo hands back what working the string out gives, the first
        /// time and the next, read as a URL or not, in either order.
        #[test]
        fn remembered_candidates_are_the_worked_out_ones(
            prefix in proptest::sample::select(vec![
                "", "ghp_", "sk-ant-api03-", "postgres://u:", "https://a:b@h/?api_key=",
                "https://h/?token=", "xoxb-", "AKIA", "eyJ", "Bearer ",
            ]),
            body in "(\\PC|[A-Za-z0-9+/=_-]){0,80}",
            url_first in proptest::bool::ANY,
        ) {
            let text = format!("{prefix}{body}");
            for url_parts in [url_first, !url_first, url_first] {
                let mut out = vec![Candidate {
                    tier: Tier::Generic,
                    rule: "before",
                    span: 0..0,
                    decoy: false,
                }];
                text_candidates(&text, url_parts, true, &mut out);
                let mut expected = out[..1].to_vec();
                expected.extend(candidates_unremembered(&text, url_parts));
                proptest::prop_assert_eq!(out, expected);
            }
        }
    }

    proptest::proptest! {
        /// Whole entries: what the memos hand back is what working every
        /// string out finds, the first time a value is met and the next.
        #[test]
        fn remembering_finds_what_working_out_finds(
            name in proptest::sample::select(vec![
                "API_KEY", "DB_PASSWORD", "HOME", "AWS_SECRET_ACCESS_KEY", "X-Api-Key",
                "Authorization", "PIN", "NODE_ENV",
            ]),
            prefix in proptest::sample::select(vec![
                "", "Bearer ", "ghp_", "postgres://u:", "https://h/?api_key=", "Server=x;Password=",
                "--token=", "AKIA", "xoxb-",
            ]),
            body in "[A-Za-z0-9+/=_-]{0,48}",
        ) {
            let value = format!("{prefix}{body}");
            let entry = ServerEntry::from_value(json!({
                "command": value,
                "args": ["--api-key", value, format!("{name}={value}")],
                "env": {name: value, "OTHER": value},
                "url": value,
                "headers": {name: value},
            }));
            let expected = scan_entry_remembering(&entry, false);
            for _ in 0..2 {
                proptest::prop_assert_eq!(scan_entry(&entry), expected.clone());
            }
        }
    }

    #[test]
    fn a_name_with_a_nul_is_not_taken_for_another_pair() {
        // `A\0` + `ghp_…` and `A` + `\0ghp_…` would make the same key.
        let token = format!(
            "ghp_{}",
            "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5".get(..36).unwrap()
        );
        for (name, value) in [
            ("API_KEY\0", token.clone()),
            ("API_KEY", format!("\0{token}")),
        ] {
            let entry = ServerEntry::from_value(json!({"command": "x", "env": {name: value}}));
            assert_eq!(scan_entry(&entry), scan_entry_remembering(&entry, false));
        }
    }

    #[test]
    fn is_filler_edge_cases_agree_with_walking_all() {
        let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        for value in [
            "",
            "abcde",
            "abcdef",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "your-api-key-here",
            "abcdefQ7zR2",
            "ab1Q7zR2abcdefghijklmnop",
            "yourtokenhereZZ9q",
            token,
        ] {
            assert_eq!(is_filler(value), filler_walk(value, false), "{value}");
        }
        let long = "a1".repeat(600);
        assert_eq!(is_filler(&long), filler_walk(&long, false));
    }

    #[test]
    fn the_text_memo_is_bounded_and_long_strings_skip_it() {
        let long = format!("{}{GHP}", "a ".repeat(MEMO_BYTES));
        let mut out = Vec::new();
        text_candidates(&long, true, true, &mut out);
        assert_eq!(out, candidates_unremembered(&long, true));
        assert!(TEXT_MEMO.with_borrow(|memo| !memo.0.contains_key(long.as_str())));
        for index in 0..MEMO_ENTRIES + 10 {
            let text = format!("https://h/{index}?token={GHP}");
            let mut out = Vec::new();
            text_candidates(&text, true, true, &mut out);
            assert_eq!(out, candidates_unremembered(&text, true), "{text}");
        }
        assert!(TEXT_MEMO.with_borrow(|memo| memo.0.len()) <= MEMO_ENTRIES);
    }

    #[test]
    fn long_values_are_capped() {
        let long = format!("{}{GHP}", "a".repeat(MAX_SCAN_BYTES));
        assert!(scan(json!({"command": "x", "env": {"X": long}})).is_empty());
        let text = format!("-----BEGIN PRIVATE KEY-----{}", "Ab1+".repeat(40_000));
        assert!(scan(json!({"command": "x", "args": [text]})).is_empty());
    }
}
