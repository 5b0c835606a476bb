//! Whether a value typed for a variable fits where its `${VAR}` sits: a
//! token pasted as `Bearer ghp_…` into `Bearer ${VAR}` would be sent as
//! `Bearer Bearer ghp_…`, and a password holding `@` or `/` inside a URL's
//! user information breaks the URL. Pure: the prompt asks, this decides.

use std::ops::Range;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::Serialize;

/// The part of a URL a placeholder sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlPart {
    /// Between `scheme://` and `@`: `user:password`.
    Userinfo,
    /// Between the host and `?`.
    Path,
    /// After `?`, before `#`.
    Query,
}

impl UrlPart {
    /// How messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Userinfo => "the user name or password of a URL",
            Self::Path => "the path of a URL",
            Self::Query => "the query of a URL",
        }
    }

    /// The characters that must be percent-encoded here: what ends or
    /// splits this part of a URL (RFC 3986 §3), `%` itself, and anything a
    /// URL cannot hold raw.
    fn breaking(self) -> &'static AsciiSet {
        match self {
            Self::Userinfo => &USERINFO,
            Self::Path => &PATH,
            Self::Query => &QUERY,
        }
    }
}

const BASE: AsciiSet = CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'%')
    .add(b'#');
const USERINFO: AsciiSet = BASE.add(b'@').add(b'/').add(b'?').add(b'[').add(b']');
const PATH: AsciiSet = BASE.add(b'/').add(b'?');
const QUERY: AsciiSet = BASE.add(b'&').add(b'=').add(b'+');

/// Where one reference to a variable sits in a configured value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The field (`headers.Authorization`, `args[2]`).
    pub field: String,
    /// The scheme word written right before it (`Bearer `, `Token `), which
    /// a pasted value should not repeat.
    pub prefix: Option<String>,
    /// The part of a URL it sits in, when the value is a URL.
    pub url_part: Option<UrlPart>,
}

/// Words that introduce a credential in a header or argument.
const SCHEMES: &[&str] = &["Bearer", "Basic", "Token", "Bot", "ApiKey", "Api-Key"];

/// Where the reference at `span` of `value` sits.
pub fn placement(field: &str, value: &str, span: Range<usize>) -> Placement {
    let before = &value[..span.start];
    let prefix = SCHEMES.iter().find_map(|scheme| {
        let candidate = format!("{scheme} ");
        let start = before.len().checked_sub(candidate.len())?;
        let written = before.get(start..)?;
        let at_word_start = before[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        (written.eq_ignore_ascii_case(&candidate) && at_word_start).then(|| written.to_string())
    });
    Placement {
        field: field.to_string(),
        prefix,
        url_part: url_part(value, span.start),
    }
}

/// The part of the URL `value` (when it is one) holding byte `offset`.
fn url_part(value: &str, offset: usize) -> Option<UrlPart> {
    let scheme_end = value.find("://")?;
    let scheme = &value[..scheme_end];
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let authority_start = scheme_end + 3;
    if offset < authority_start {
        return None;
    }
    let rest = &value[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let relative = offset - authority_start;
    if relative < authority_len {
        // The last `@` ends the user information: a raw `@` inside a
        // password is exactly what breaks it.
        return authority
            .rfind('@')
            .is_some_and(|at| relative < at)
            .then_some(UrlPart::Userinfo);
    }
    let query = value.find('?');
    let fragment = value.find('#');
    match (query, fragment) {
        (_, Some(hash)) if offset > hash => None,
        (Some(question), _) if offset > question => Some(UrlPart::Query),
        _ => Some(UrlPart::Path),
    }
}

/// A way an answer does not fit one placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misfit {
    /// It starts with the scheme word the configuration already writes.
    RepeatsPrefix {
        /// The field.
        field: String,
        /// The word, as configured (`Bearer `).
        prefix: String,
    },
    /// It holds characters that end or split the URL part it goes in.
    BreaksUrl {
        /// The field.
        field: String,
        /// The part.
        part: UrlPart,
        /// The offending characters, each once, in order (never the value).
        characters: Vec<char>,
    },
}

/// How `answer` fails to fit each of `placements`.
pub fn misfits(answer: &str, placements: &[Placement]) -> Vec<Misfit> {
    let mut found = Vec::new();
    for placement in placements {
        if let Some(prefix) = &placement.prefix
            && answer
                .get(..prefix.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
        {
            found.push(Misfit::RepeatsPrefix {
                field: placement.field.clone(),
                prefix: prefix.clone(),
            });
        }
        if let Some(part) = placement.url_part {
            let mut characters: Vec<char> = Vec::new();
            for c in answer.chars() {
                // Non-ASCII text is encoded by URL parsers, not broken by.
                let breaks = c.is_ascii() && encoded(c.encode_utf8(&mut [0; 4]), part).len() > 1;
                if breaks && !characters.contains(&c) {
                    characters.push(c);
                }
            }
            if !characters.is_empty() {
                found.push(Misfit::BreaksUrl {
                    field: placement.field.clone(),
                    part,
                    characters,
                });
            }
        }
    }
    found
}

/// `answer` without the scheme word `prefix` it repeats (and the blanks
/// after it).
pub fn without_prefix(answer: &str, prefix: &str) -> String {
    answer
        .get(prefix.len()..)
        .unwrap_or_default()
        .trim_start()
        .to_string()
}

/// `answer` percent-encoded for `part` of a URL.
pub fn encoded(answer: &str, part: UrlPart) -> String {
    utf8_percent_encode(answer, part.breaking()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(field: &str, value: &str) -> Placement {
        let start = value.find("${").unwrap();
        let end = value[start..].find('}').unwrap() + start + 1;
        placement(field, value, start..end)
    }

    #[test]
    fn a_scheme_word_before_the_placeholder_is_its_prefix() {
        assert_eq!(
            at("headers.Authorization", "Bearer ${TOKEN}")
                .prefix
                .as_deref(),
            Some("Bearer ")
        );
        assert_eq!(at("x", "token ${T}").prefix.as_deref(), Some("token "));
        assert_eq!(at("x", "MyBearer ${T}").prefix, None);
        assert_eq!(at("x", "${T}").prefix, None);
    }

    #[test]
    fn url_parts_are_told_apart() {
        let part = |value: &str| at("x", value).url_part;
        assert_eq!(
            part("postgresql://app:${DB_PASSWORD}@db.internal:5432/app"),
            Some(UrlPart::Userinfo)
        );
        assert_eq!(part("https://${HOST}/mcp"), None);
        assert_eq!(part("https://x.test/v1/${ID}/mcp"), Some(UrlPart::Path));
        assert_eq!(
            part("https://x.test/mcp?key=${KEY}&a=1"),
            Some(UrlPart::Query)
        );
        assert_eq!(part("--token=${T}"), None);
    }

    #[test]
    fn a_repeated_prefix_and_url_breakers_are_found() {
        let bearer = at("headers.Authorization", "Bearer ${T}");
        assert_eq!(
            misfits("bearer abc", std::slice::from_ref(&bearer)),
            vec![Misfit::RepeatsPrefix {
                field: "headers.Authorization".into(),
                prefix: "Bearer ".into()
            }]
        );
        assert!(misfits("abc", &[bearer]).is_empty());
        let url = at("args[1]", "postgresql://app:${P}@db/app");
        assert_eq!(
            misfits("p@ss/w#rd@", &[url]),
            vec![Misfit::BreaksUrl {
                field: "args[1]".into(),
                part: UrlPart::Userinfo,
                characters: vec!['@', '/', '#']
            }]
        );
    }

    #[test]
    fn fixes_drop_the_prefix_and_encode_for_the_part() {
        assert_eq!(without_prefix("Bearer  ghp_x", "Bearer "), "ghp_x");
        assert_eq!(
            encoded("p@ss/w#rd:1", UrlPart::Userinfo),
            "p%40ss%2Fw%23rd:1"
        );
        assert_eq!(encoded("a&b=c d", UrlPart::Query), "a%26b%3Dc%20d");
    }
}
