//! Secrets in the text of a file that does not parse (a truncated
//! `.mcp.json`, a TOML file with a stray quote, a `.env` handed to scan):
//! no entry can be walked, so the text is cut into the pieces an entry
//! would hold and those go through the same rules as an entry's walk
//! ([`secrets::scan_entry`]). A broken file is committed as readily as a
//! good one, so it is scanned rather than skipped.
//!
//! Three feeds, each a synthetic entry: every line as a `command` (the
//! token-format rules, wherever a token sits, comments too); every quoted
//! string and bare word in order as `args` (`--flag value` pairs, URLs,
//! connection strings, `NAME=value`); and every `name: value` or
//! `name = value` pair as an `env` variable (the keyword rules: a value
//! under a secret-like name). Pieces are slices of the raw text, escapes
//! and all, so a finding's bytes are the file's bytes.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::config::model::{Field, ServerEntry};
use crate::secrets;

/// A secret found in a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFinding {
    /// The rule that found it.
    pub rule: &'static str,
    /// Byte range of the secret in the text.
    pub span: Range<usize>,
}

/// Names longer than this are no variable or key anyone writes.
const MAX_NAME_BYTES: usize = 128;

/// The secrets in `text`, in order, none overlapping another.
pub fn scan_text(text: &str) -> Vec<TextFinding> {
    let tokens = tokens(text);
    let pieces: Vec<Range<usize>> = tokens
        .iter()
        .filter_map(|token| match token {
            Token::Piece(range) => Some(range.clone()),
            Token::Separator => None,
        })
        .collect();
    let pairs: Vec<(Range<usize>, Range<usize>)> = tokens
        .windows(3)
        .filter_map(|window| match window {
            [Token::Piece(name), Token::Separator, Token::Piece(value)]
                if !name.is_empty() && name.len() <= MAX_NAME_BYTES =>
            {
                Some((name.clone(), value.clone()))
            }
            _ => None,
        })
        .collect();
    // Most specific first: a value under its name, then a piece among its
    // neighbours, then whatever a line holds; a later find that overlaps
    // an earlier one is the same secret again.
    let mut found = Vec::new();
    for batch in env_batches(text, &pairs) {
        let mut env = Map::new();
        for (name, value) in &batch {
            env.insert(
                (*name).to_string(),
                Value::String(text[value.clone()].to_string()),
            );
        }
        let entry = ServerEntry::from_value(Value::Object(Map::from_iter([(
            "env".to_string(),
            Value::Object(env),
        )])));
        let starts: HashMap<&str, usize> = batch
            .iter()
            .map(|(name, value)| (*name, value.start))
            .collect();
        found.extend(in_text(&entry, |field| match field {
            Field::Env(name) => starts.get(name.as_str()).copied(),
            _ => None,
        }));
    }
    let args = pieces
        .iter()
        .map(|piece| Value::String(text[piece.clone()].to_string()))
        .collect();
    let entry = ServerEntry::from_value(Value::Object(Map::from_iter([(
        "args".to_string(),
        Value::Array(args),
    )])));
    found.extend(in_text(&entry, |field| match field {
        Field::Arg(index) => pieces.get(*index).map(|piece| piece.start),
        _ => None,
    }));
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        for (offset, part) in windows(line) {
            let entry = ServerEntry::from_value(Value::Object(Map::from_iter([(
                "command".to_string(),
                Value::String(part.to_string()),
            )])));
            let start = line_start + offset;
            found.extend(in_text(&entry, |field| {
                matches!(field, Field::Command).then_some(start)
            }));
        }
        line_start += line.len();
    }
    let mut kept: Vec<TextFinding> = Vec::new();
    for finding in found {
        if !kept
            .iter()
            .any(|other| other.span.start < finding.span.end && finding.span.start < other.span.end)
        {
            kept.push(finding);
        }
    }
    kept.sort_by_key(|finding| finding.span.start);
    kept
}

/// The findings of a synthetic `entry`, placed in the text: `start` says
/// where the string of a field begins.
fn in_text(
    entry: &ServerEntry,
    start: impl Fn(&Field) -> Option<usize>,
) -> impl Iterator<Item = TextFinding> {
    secrets::scan_entry(entry)
        .into_iter()
        .filter_map(move |finding| {
            let at = start(&finding.field)?;
            Some(TextFinding {
                rule: finding.rule,
                span: at + finding.span.start..at + finding.span.end,
            })
        })
}

/// The pairs in batches whose names differ (an `env` object holds a name
/// once).
fn env_batches<'t>(
    text: &'t str,
    pairs: &[(Range<usize>, Range<usize>)],
) -> Vec<Vec<(&'t str, Range<usize>)>> {
    let mut batches: Vec<Vec<(&str, Range<usize>)>> = vec![Vec::new()];
    for (name, value) in pairs {
        let name = &text[name.clone()];
        let batch = match batches.last_mut() {
            Some(batch) if !batch.iter().any(|(known, _)| *known == name) => batch,
            _ => {
                batches.push(Vec::new());
                batches
                    .last_mut()
                    .unwrap_or_else(|| unreachable!("just pushed"))
            }
        };
        batch.push((name, value.clone()));
    }
    batches
}

/// A long line in parts the rules read whole (they read
/// [`secrets::MAX_SCAN_BYTES`] of a string), each with its byte offset;
/// the parts overlap by a quarter so a token on a cut is read whole once.
fn windows(line: &str) -> Vec<(usize, &str)> {
    let size = secrets::MAX_SCAN_BYTES;
    if line.len() <= size {
        return vec![(0, line)];
    }
    let mut parts = Vec::new();
    let mut start = 0;
    while start < line.len() {
        let end = line.floor_char_boundary((start + size).min(line.len()));
        parts.push((start, &line[start..end]));
        if end == line.len() {
            break;
        }
        start = line.floor_char_boundary(end - size / 4).max(start + 1);
        while !line.is_char_boundary(start) {
            start += 1;
        }
    }
    parts
}

/// What the text is cut into.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A quoted string's content (raw, escapes kept) or a bare word.
    Piece(Range<usize>),
    /// `:` or `=` between a name and its value.
    Separator,
}

/// Cuts `text` into quoted strings, bare words and separators. A string
/// ends at its closing quote or at the end of its line (a truncated file
/// ends inside one); `KEY=value` and `key:` words are split the way a
/// dotenv or YAML line means them.
fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => {
                let start = at + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end] != quote && bytes[end] != b'\n' {
                    // Only a double-quoted string has escapes (JSON, TOML
                    // basic strings, dotenv).
                    end += if quote == b'"' && bytes[end] == b'\\' {
                        2
                    } else {
                        1
                    };
                }
                let end = end.min(bytes.len());
                if bytes.get(end) == Some(&quote) {
                    tokens.push(Token::Piece(start..end));
                    at = end + 1;
                } else {
                    // Unterminated: the value is what comes before the
                    // rest of the line's punctuation (`"s3cr3t }`).
                    let content = text[start..end]
                        .trim_end_matches(|c: char| c.is_whitespace() || "}],;".contains(c));
                    tokens.push(Token::Piece(start..start + content.len()));
                    at = end;
                }
            }
            b':' | b'=' => {
                tokens.push(Token::Separator);
                at += 1;
            }
            byte if byte.is_ascii_whitespace() || b"{}[],;".contains(&byte) => at += 1,
            _ => {
                let start = at;
                while at < bytes.len()
                    && !bytes[at].is_ascii_whitespace()
                    && !b"\"'{}[],;".contains(&bytes[at])
                {
                    at += 1;
                }
                word(text, start..at, &mut tokens);
            }
        }
    }
    tokens
}

/// A bare word: `NAME=value` is a pair, `name:` a name, anything else
/// (`postgres://u:p@h`, a token) one piece.
fn word(text: &str, range: Range<usize>, tokens: &mut Vec<Token>) {
    let word = &text[range.clone()];
    if let Some(name) = word.strip_suffix(':')
        && !name.is_empty()
        && !name.contains(':')
    {
        tokens.push(Token::Piece(range.start..range.start + name.len()));
        tokens.push(Token::Separator);
        return;
    }
    if let Some((name, _)) = word.split_once('=')
        && !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'))
    {
        let value_start = range.start + name.len() + 1;
        tokens.push(Token::Piece(range.start..range.start + name.len()));
        tokens.push(Token::Separator);
        // `NAME='value'`: the quoted string that follows is the value.
        if value_start < range.end {
            tokens.push(Token::Piece(value_start..range.end));
        }
        return;
    }
    tokens.push(Token::Piece(range));
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAT: &str = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12";

    fn found(text: &str) -> Vec<(&'static str, &str)> {
        scan_text(text)
            .into_iter()
            .map(|finding| (finding.rule, &text[finding.span]))
            .collect()
    }

    #[test]
    fn a_truncated_json_string_still_yields_its_token() {
        let text = format!(r#"{{"mcpServers": {{"gh": {{"env": {{"GITHUB_TOKEN": "{PAT}"#);
        assert_eq!(found(&text), [("github-pat", PAT)]);
        let text =
            format!("{{\"mcpServers\": {{\"gh\": {{\"env\": {{\"GITHUB_TOKEN\": \"{PAT}\"}}\n");
        assert_eq!(found(&text), [("github-pat", PAT)]);
    }

    #[test]
    fn a_value_under_a_secret_name_is_found_in_json_toml_and_dotenv() {
        let password = "s3cr3t-Passw0rd-7781";
        for text in [
            format!(r#"{{"env": {{"DB_PASSWORD": "{password}", "#),
            format!("[mcp_servers.db.env]\nDB_PASSWORD = \"{password}\n"),
            format!("export DB_PASSWORD={password}\n"),
            format!("DB_PASSWORD='{password}'\n"),
        ] {
            assert_eq!(found(&text), [("generic-secret", password)], "{text}");
        }
    }

    #[test]
    fn flags_urls_and_comments_are_read_as_in_an_entry() {
        let text = "\"args\": [\"--api-key\", \"T9wYq2Lm8Zr4Kp7Xc3Vb\"],\n\"url\": \"postgres://app:s3cr3t-Passw0rd-7781@db/prod\"\n// ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12\n{";
        let rules: Vec<&str> = found(text).iter().map(|(rule, _)| *rule).collect();
        assert_eq!(
            rules,
            ["cli-flag-secret", "url-userinfo-password", "github-pat"]
        );
    }

    #[test]
    fn placeholders_and_plain_text_are_not_secrets() {
        assert_eq!(
            found(r#"{"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "NAME": "hello world"#),
            []
        );
    }

    #[test]
    fn a_token_on_a_long_line_is_found_where_it_sits() {
        let text = format!("{}\"{PAT}\"", "x".repeat(secrets::MAX_SCAN_BYTES - 10));
        let findings = scan_text(&text);
        assert_eq!(findings.len(), 1);
        assert_eq!(&text[findings[0].span.clone()], PAT);
    }
}
