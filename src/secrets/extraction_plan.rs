//! Planning the move of secrets out of server entries into dotenv files:
//! which value goes to which variable and which file (the project's `.env`,
//! or the user's own store for user-scope servers), what each entry's
//! strings become, and what `.env.example` documents. Pure: reading and
//! writing files is the caller's job, in the order this plan allows
//! (values first, configs last, so no placeholder ever points at a value
//! that was not saved).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::claude_code::blanked;
use crate::config::expansion;
use crate::config::model::{Field, ServerEntry};
use crate::config::scope::Scope;
use crate::config::store::{FieldChange, Target};
use crate::envfiles::dotenv::ExampleLine;
use crate::secrets::redact;
use crate::secrets::{self, Finding};
use crate::templates::{self, Template};

/// One server entry to extract from, with where it lives.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The file and object the entry is in.
    pub target: Target,
    /// The server's name.
    pub server: String,
    /// The entry as read.
    pub entry: ServerEntry,
    /// The dotenv file its secrets' values go to.
    pub env_file: PathBuf,
}

/// One secret and where it goes.
#[derive(Debug, Clone, Serialize)]
pub struct Move {
    /// The scope of the entry.
    pub scope: Scope,
    /// The file of the entry.
    pub file: PathBuf,
    /// The server.
    pub server: String,
    /// Where in the entry the secret was.
    pub field: Field,
    /// The detection rule that found it.
    pub rule: &'static str,
    /// The variable that holds it from now on.
    pub variable: String,
    /// The value, masked.
    pub value: String,
    /// The dotenv file that holds the value from now on.
    pub env_file: PathBuf,
    /// Whether that file (or the environment) already held this value under
    /// that name, so nothing is added.
    pub reused: bool,
}

/// A variable the plan adds to a dotenv file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVariable {
    /// The dotenv file.
    pub file: PathBuf,
    /// The variable.
    pub name: String,
    /// Its value (a secret: never print).
    pub value: String,
}

/// Why a plan cannot be made: extracting would break a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    /// The secret inside a JSON value holds a character that, put back by
    /// `${VAR}` expansion, would end or corrupt its JSON string.
    #[error(
        "cannot extract the secret in `{field}` of server `{server}` in `{}`: it contains {what}, which would break the JSON of that value once `${{VAR}}` is expanded",
        file.display()
    )]
    BreaksJson {
        /// The config file.
        file: PathBuf,
        /// The server.
        server: String,
        /// The field holding the JSON value.
        field: Field,
        /// The offending character, described.
        what: String,
    },
}

/// Everything an extraction will do.
#[derive(Debug, Clone, Default)]
pub struct ExtractionPlan {
    /// Every secret found, and its variable.
    pub moves: Vec<Move>,
    /// Variables to add to dotenv files, with their values.
    pub new_variables: Vec<NewVariable>,
    /// Changes to config files, one list per file and object.
    pub changes: Vec<(Target, Vec<FieldChange>)>,
}

impl ExtractionPlan {
    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The variables to add to `file`, as name-value pairs.
    pub fn values_for(&self, file: &Path) -> Vec<(String, String)> {
        self.new_variables
            .iter()
            .filter(|variable| variable.file == file)
            .map(|variable| (variable.name.clone(), variable.value.clone()))
            .collect()
    }

    /// The dotenv files the plan adds to, in order of first use.
    pub fn env_files(&self) -> Vec<&Path> {
        let mut files: Vec<&Path> = Vec::new();
        for variable in &self.new_variables {
            if !files.contains(&variable.file.as_path()) {
                files.push(&variable.file);
            }
        }
        files
    }
}

/// What is already known about variable names: a value from the dotenv
/// files or the process environment, so a new variable never shadows a
/// different value.
pub trait KnownValues {
    /// The value `name` resolves to today, if any.
    fn value(&self, name: &str) -> Option<String>;

    /// Whether `file` (or the environment) already gives `name` this
    /// `value`, so nothing needs adding there.
    fn provides(&self, file: &Path, name: &str, value: &str) -> bool {
        let _ = file;
        self.value(name).as_deref() == Some(value)
    }
}

impl<F: Fn(&str) -> Option<String>> KnownValues for F {
    fn value(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// Plans the extraction of every secret found in `candidates`.
pub fn plan(
    candidates: &[Candidate],
    known: &dyn KnownValues,
) -> Result<ExtractionPlan, ExtractError> {
    let mut plan = ExtractionPlan::default();
    // Names given out by this plan, with their values and the files that
    // must hold them (a user server and a project server may share one).
    let mut assigned: IndexMap<String, String> = IndexMap::new();
    let mut destinations: IndexMap<String, Vec<PathBuf>> = IndexMap::new();
    for candidate in candidates {
        let findings = secrets::scan_entry(&candidate.entry);
        if findings.is_empty() {
            continue;
        }
        // Group by field: one new string per field, all its secrets replaced.
        let mut by_field: BTreeMap<Field, Vec<&Finding>> = BTreeMap::new();
        for finding in &findings {
            by_field
                .entry(storage_field(&finding.field))
                .or_default()
                .push(finding);
        }
        let mut changes = Vec::new();
        let first_move = plan.moves.len();
        for (field, field_findings) in by_field {
            let Some(old) = field_value(&candidate.entry, &field) else {
                continue;
            };
            let mut moved = Vec::new();
            let new = match &field {
                Field::Env(key) if !is_json_document(&old) => {
                    // The whole value moves under the variable's own name:
                    // the usual `KEY=${KEY}` shape, whatever part looked
                    // secret.
                    let variable = name_for(&variable_base(key), &old, known, &mut assigned, false);
                    moved.push((field_findings[0], variable.clone(), old.clone()));
                    expansion::placeholder(&variable)
                }
                _ => {
                    let json = matches!(field, Field::Env(_));
                    let mut ordered = field_findings.clone();
                    ordered.sort_by_key(|finding| std::cmp::Reverse(finding.span.start));
                    // Claude Code sends credential names (`NPM_TOKEN`, …)
                    // empty to remote servers: their values get other names.
                    let remote = candidate.entry.transport().is_remote();
                    let mut new = old.clone();
                    let mut replaced_from = usize::MAX;
                    for finding in ordered {
                        // Two rules may flag overlapping text: the first
                        // (rightmost) replacement wins.
                        if finding.span.end > replaced_from {
                            continue;
                        }
                        if json {
                            refuse_breaking_json(candidate, &field, &finding.secret)?;
                        }
                        let mut base = if json {
                            json_derived_name(&candidate.server, &old, finding)
                        } else {
                            derived_name(&candidate.server, &candidate.entry, finding)
                        };
                        if remote {
                            base = blanked::remote_safe_name(
                                &base,
                                &screaming_snake(&candidate.server),
                            );
                        }
                        let variable =
                            name_for(&base, &finding.secret, known, &mut assigned, remote);
                        new.replace_range(finding.span.clone(), &expansion::placeholder(&variable));
                        replaced_from = finding.span.start;
                        moved.push((finding, variable, finding.secret.clone()));
                    }
                    new
                }
            };
            for (finding, variable, value) in moved {
                let files = destinations.entry(variable.clone()).or_default();
                if !files.contains(&candidate.env_file) {
                    files.push(candidate.env_file.clone());
                }
                let reused = known.provides(&candidate.env_file, &variable, &value);
                record(
                    &mut plan, candidate, finding, &field, &variable, &value, reused,
                );
            }
            changes.push(FieldChange {
                server: candidate.server.clone(),
                field,
                old,
                new,
            });
        }
        plan.moves[first_move..].sort_by(|a, b| a.field.cmp(&b.field));
        match plan
            .changes
            .iter_mut()
            .find(|(target, _)| *target == candidate.target)
        {
            Some((_, existing)) => existing.extend(changes),
            None => plan.changes.push((candidate.target.clone(), changes)),
        }
    }
    for (name, value) in assigned {
        for file in destinations.swap_remove(&name).unwrap_or_default() {
            if !known.provides(&file, &name, &value) {
                plan.new_variables.push(NewVariable {
                    file,
                    name: name.clone(),
                    value: value.clone(),
                });
            }
        }
    }
    Ok(plan)
}

/// Whether an env value is a JSON object or array (`OPENAPI_MCP_HEADERS`):
/// only the secret inside it moves, so the rest stays readable and valid.
fn is_json_document(value: &str) -> bool {
    matches!(
        serde_json::from_str::<serde_json::Value>(value),
        Ok(serde_json::Value::Object(_) | serde_json::Value::Array(_))
    )
}

/// Refuses a secret that does not lie inside one JSON string. Expansion
/// puts back the very text that was taken out (escapes such as a PEM's
/// `\n` included: `.env` keeps them), so the value stays as valid as it
/// was, unless the secret runs across a string's closing quote (then the
/// variable would hold JSON structure) or holds a raw control character.
fn refuse_breaking_json(
    candidate: &Candidate,
    field: &Field,
    secret: &str,
) -> Result<(), ExtractError> {
    let mut escaped = false;
    let offending = secret.chars().find(|&character| {
        let breaks = (character == '"' && !escaped) || character.is_control();
        escaped = character == '\\' && !escaped;
        breaks
    });
    let Some(character) = offending else {
        return Ok(());
    };
    let what = match character {
        '"' => "a `\"` that ends its JSON string".to_string(),
        other => format!("a control character (U+{:04X})", u32::from(other)),
    };
    Err(ExtractError::BreaksJson {
        file: candidate.target.path.clone(),
        server: candidate.server.clone(),
        field: field.clone(),
        what,
    })
}

/// `SERVER_WHAT` for a secret inside a JSON value, named from the key
/// whose string holds it as a header would be (`Authorization` →
/// `NOTION_AUTH_TOKEN`).
fn json_derived_name(server: &str, value: &str, finding: &Finding) -> String {
    // The secret as it stands in the JSON text, escapes and all (a PEM's
    // `\n`); the parsed strings hold it decoded.
    let decoded = serde_json::from_str::<String>(&format!("\"{}\"", finding.secret));
    let secret = decoded.as_deref().unwrap_or(&finding.secret);
    let key = serde_json::from_str::<serde_json::Value>(value)
        .ok()
        .and_then(|document| key_holding(&document, secret));
    let what = key.map_or_else(|| "TOKEN".to_string(), |key| header_what(&key));
    prefixed(server, what)
}

/// The key of the first string in `document` that contains `secret`.
fn key_holding(document: &serde_json::Value, secret: &str) -> Option<String> {
    match document {
        serde_json::Value::Object(map) => map.iter().find_map(|(key, value)| match value {
            serde_json::Value::String(text) if text.contains(secret) => Some(key.clone()),
            other => key_holding(other, secret),
        }),
        serde_json::Value::Array(items) => items.iter().find_map(|item| key_holding(item, secret)),
        _ => None,
    }
}

fn record(
    plan: &mut ExtractionPlan,
    candidate: &Candidate,
    finding: &Finding,
    field: &Field,
    variable: &str,
    value: &str,
    reused: bool,
) {
    plan.moves.push(Move {
        scope: candidate.target.scope,
        file: candidate.target.path.clone(),
        server: candidate.server.clone(),
        field: if matches!(field, Field::Env(_)) {
            field.clone()
        } else {
            finding.field.clone()
        },
        rule: finding.rule,
        variable: variable.to_string(),
        value: redact::mask(value),
        env_file: candidate.env_file.clone(),
        reused,
    });
}

/// URL parts are stored in the `url` string.
fn storage_field(field: &Field) -> Field {
    match field {
        Field::UrlPassword | Field::UrlQuery(_) => Field::Url,
        other => other.clone(),
    }
}

fn field_value(entry: &ServerEntry, field: &Field) -> Option<String> {
    let wanted = storage_field(field);
    entry
        .expandable_fields()
        .into_iter()
        .find(|(candidate, _)| *candidate == wanted)
        .map(|(_, value)| value.to_string())
}

/// `entry` with the changes of `changes` that concern `server` applied.
pub fn apply_changes(server: &str, entry: &ServerEntry, changes: &[FieldChange]) -> ServerEntry {
    let mut value = entry.to_value();
    for change in changes.iter().filter(|change| change.server == server) {
        let slot = match &change.field {
            Field::Command => value.get_mut("command"),
            Field::Arg(index) => value.get_mut("args").and_then(|args| args.get_mut(*index)),
            Field::Env(key) => value.get_mut("env").and_then(|env| env.get_mut(key)),
            Field::Url | Field::UrlPassword | Field::UrlQuery(_) => value.get_mut("url"),
            Field::Header(name) => value
                .get_mut("headers")
                .and_then(|headers| headers.get_mut(name)),
        };
        if let Some(slot) = slot {
            *slot = serde_json::Value::String(change.new.clone());
        }
    }
    ServerEntry::from_value(value)
}

/// `base`, or `base_2`, `base_3`... : the first name that is free or already
/// holds exactly `value` (and, for a value going to a remote server, that
/// Claude Code does not blank there).
fn name_for(
    base: &str,
    value: &str,
    known: &dyn KnownValues,
    assigned: &mut IndexMap<String, String>,
    remote: bool,
) -> String {
    for attempt in 1.. {
        let name = if attempt == 1 {
            base.to_string()
        } else {
            format!("{base}_{attempt}")
        };
        if remote && blanked::blanked_toward_remote(&name) {
            continue;
        }
        let planned = assigned.get(&name).map(String::as_str);
        let existing = known.value(&name);
        let free = match (planned, existing.as_deref()) {
            (Some(planned), _) => planned == value,
            (None, Some(existing)) => existing == value,
            (None, None) => true,
        };
        if free {
            assigned.insert(name.clone(), value.to_string());
            return name;
        }
    }
    unreachable!("the loop returns once a free name is found")
}

/// A variable name from an env key: kept when valid, else made valid.
fn variable_base(key: &str) -> String {
    if expansion::is_variable_name(key) {
        key.to_string()
    } else {
        screaming_snake(key)
    }
}

/// `SERVER_WHAT` for secrets outside `env`: `DB_PASSWORD`,
/// `SENTRY_AUTH_TOKEN`, `BRAVE_API_KEY`.
fn derived_name(server: &str, entry: &ServerEntry, finding: &Finding) -> String {
    let what = match &finding.field {
        Field::UrlPassword => "PASSWORD".to_string(),
        Field::UrlQuery(name) => screaming_snake(name),
        Field::Header(name) => header_what(name),
        Field::Arg(index) => arg_flag(entry, *index, finding).unwrap_or_else(|| {
            if finding.rule == "url-userinfo-password" {
                "PASSWORD".to_string()
            } else {
                "TOKEN".to_string()
            }
        }),
        Field::Command | Field::Url | Field::Env(_) => "TOKEN".to_string(),
    };
    prefixed(server, what)
}

/// What a header's (or a JSON key's) secret is: `Authorization` →
/// `AUTH_TOKEN`, `X-Api-Key` → `API_KEY`.
fn header_what(name: &str) -> String {
    if name.eq_ignore_ascii_case("authorization") {
        return "AUTH_TOKEN".to_string();
    }
    let name = name
        .strip_prefix("X-")
        .or_else(|| name.strip_prefix("x-"))
        .unwrap_or(name);
    screaming_snake(name)
}

/// `what` under the server's name, unless it starts with it already.
fn prefixed(server: &str, what: String) -> String {
    let server = screaming_snake(server);
    if what.starts_with(&format!("{server}_")) {
        what
    } else {
        format!("{server}_{what}")
    }
}

/// The flag a secret argument belongs to: `--api-key=V` or `--api-key V`.
fn arg_flag(entry: &ServerEntry, index: usize, finding: &Finding) -> Option<String> {
    let args = entry.args();
    let arg = *args.get(index)?;
    let flag = if finding.span.start > 0 {
        arg[..finding.span.start].strip_suffix('=')?
    } else {
        *args.get(index.checked_sub(1)?)?
    };
    let name = flag.trim_start_matches('-');
    (flag.starts_with('-') && name.len() > 1).then(|| screaming_snake(name))
}

/// `my-server.name` → `MY_SERVER_NAME`; a leading digit gets `_`.
fn screaming_snake(text: &str) -> String {
    crate::config::expansion::variable_name_from(text).unwrap_or_else(|| "SECRET".to_string())
}

/// The lines `.env.example` should have: every variable referenced by
/// `entries`, with what the matching template says of it (description,
/// where to get one), the servers that use it, and its default.
pub fn example_variables<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a ServerEntry)>,
    templates: &[Template],
) -> Vec<ExampleLine> {
    struct Seen {
        servers: Vec<String>,
        described: Vec<String>,
        /// The one default every reference has, `None` once one has none
        /// or another.
        default: Option<Option<String>>,
    }
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (server, entry) in entries {
        let declared = templates::matching(templates, entry)
            .map(|template| templates::declared_variables(template, server))
            .unwrap_or_default();
        for (_, value) in entry.expandable_fields() {
            for reference in expansion::references(value) {
                let known = seen.entry(reference.name.clone()).or_insert_with(|| {
                    order.push(reference.name.clone());
                    Seen {
                        servers: Vec::new(),
                        described: Vec::new(),
                        default: Some(reference.default.clone()),
                    }
                });
                if !known.servers.iter().any(|name| name == server) {
                    known.servers.push(server.to_string());
                }
                if known.default.as_ref() != Some(&reference.default) {
                    known.default = None;
                }
                if known.described.is_empty()
                    && let Some(variable) = declared
                        .iter()
                        .find(|variable| variable.name == reference.name)
                {
                    known.described = templates::described(variable);
                }
            }
        }
    }
    order
        .into_iter()
        .filter_map(|name| {
            let known = seen.remove(&name)?;
            let mut comment = known.described;
            comment.push(format!("used by: {}", known.servers.join(", ")));
            Some(ExampleLine {
                name,
                comment: comment.join("\n"),
                value: known.default.flatten().unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidate(server: &str, entry: serde_json::Value) -> Candidate {
        Candidate {
            target: Target {
                scope: Scope::Project,
                path: PathBuf::from("/p/.mcp.json"),
                object_path: vec!["mcpServers".into()],
            },
            server: server.into(),
            entry: ServerEntry::from_value(entry),
            env_file: PathBuf::from("/p/.env"),
        }
    }

    /// The names and values the plan adds to `/p/.env`.
    fn added(plan: &ExtractionPlan) -> Vec<(String, String)> {
        plan.values_for(Path::new("/p/.env"))
    }

    const PAT: &str = "ghp_U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D";

    fn nothing(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn env_values_move_under_their_own_name() {
        let plan = plan(
            &[candidate(
                "github",
                json!({"command": "npx", "env": {"GITHUB_TOKEN": PAT}}),
            )],
            &nothing,
        )
        .unwrap();
        assert_eq!(
            added(&plan),
            [("GITHUB_TOKEN".to_string(), PAT.to_string())]
        );
        let (_, changes) = &plan.changes[0];
        assert_eq!(changes[0].new, "${GITHUB_TOKEN}");
        assert_eq!(plan.moves[0].value, "ghp_…ol8D");
    }

    #[test]
    fn urls_and_headers_keep_their_structure() {
        let plan = plan(
            &[
                candidate(
                    "db",
                    json!({"command": "npx", "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://app:s3cr3t-Passw0rd@db.internal:5432/prod"]}),
                ),
                candidate(
                    "sentry",
                    json!({"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {"Authorization": "Bearer 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"}}),
                ),
            ],
            &nothing,
        )
        .unwrap();
        let news: Vec<&str> = plan
            .changes
            .iter()
            .flat_map(|(_, changes)| changes.iter().map(|change| change.new.as_str()))
            .collect();
        assert_eq!(
            news,
            [
                "postgres://app:${DB_PASSWORD}@db.internal:5432/prod",
                "Bearer ${SENTRY_AUTH_TOKEN}"
            ]
        );
    }

    #[test]
    fn a_name_holding_another_value_is_never_reused() {
        let known = |name: &str| (name == "GITHUB_TOKEN").then(|| "something-else".to_string());
        let plan = plan(
            &[candidate(
                "github",
                json!({"command": "npx", "env": {"GITHUB_TOKEN": PAT}}),
            )],
            &known,
        )
        .unwrap();
        assert_eq!(plan.new_variables[0].name, "GITHUB_TOKEN_2");
        let same = |name: &str| (name == "GITHUB_TOKEN").then(|| PAT.to_string());
        let plan = super::plan(
            &[candidate(
                "github",
                json!({"command": "npx", "env": {"GITHUB_TOKEN": PAT}}),
            )],
            &same,
        )
        .unwrap();
        assert!(plan.new_variables.is_empty());
        assert!(plan.moves[0].reused);
    }

    #[test]
    fn two_servers_with_one_secret_share_a_variable_and_different_ones_do_not() {
        let other = "ghp_klZDOCj2ISaJiHkTj0rLGlkoMXGjtEkDnNfr";
        let plan = plan(
            &[
                candidate("a", json!({"command": "x", "env": {"GITHUB_TOKEN": PAT}})),
                candidate("b", json!({"command": "x", "env": {"GITHUB_TOKEN": PAT}})),
                candidate("c", json!({"command": "x", "env": {"GITHUB_TOKEN": other}})),
            ],
            &nothing,
        )
        .unwrap();
        let names: Vec<&str> = plan
            .new_variables
            .iter()
            .map(|variable| variable.name.as_str())
            .collect();
        assert_eq!(names, ["GITHUB_TOKEN", "GITHUB_TOKEN_2"]);
    }

    #[test]
    fn names_are_valid_variables() {
        assert_eq!(screaming_snake("my-server.v2"), "MY_SERVER_V2");
        assert_eq!(screaming_snake("apiKey"), "API_KEY");
        assert_eq!(screaming_snake("9lives"), "_9LIVES");
        assert_eq!(screaming_snake("--"), "SECRET");
    }

    #[test]
    fn remote_values_never_get_a_name_claude_code_blanks() {
        let plan = plan(
            &[
                candidate(
                    "npm",
                    json!({"type": "http", "url": "https://npm.example.com/mcp", "headers": {"X-Npm-Token": "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"}}),
                ),
                candidate(
                    "registry",
                    json!({"type": "sse", "url": "https://r.example.com/sse?npm_token=npm_Zz3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5B"}),
                ),
                // A stdio server keeps the name: Claude Code expands it there.
                candidate(
                    "local",
                    json!({"command": "npx", "env": {"NPM_TOKEN": "npm_Yy3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5C"}}),
                ),
            ],
            &nothing,
        )
        .unwrap();
        let names: Vec<&str> = plan
            .moves
            .iter()
            .map(|moved| moved.variable.as_str())
            .collect();
        assert_eq!(names, ["MCP_NPM_TOKEN", "REGISTRY_NPM_TOKEN", "NPM_TOKEN"]);
    }

    #[test]
    fn flags_name_their_secrets() {
        let plan = plan(
            &[candidate(
                "brave",
                json!({"command": "npx", "args": ["--api-key", "BSAq8ZrT2mXv9LpW4nKc7YdF3hJs6Gt"]}),
            )],
            &nothing,
        )
        .unwrap();
        assert_eq!(plan.new_variables[0].name, "BRAVE_API_KEY");
    }

    #[test]
    fn example_lists_every_reference_with_its_servers() {
        let a = ServerEntry::from_value(
            json!({"command": "x", "env": {"A": "${TOKEN}", "B": "${DB:-local}"}}),
        );
        let b = ServerEntry::from_value(json!({"type": "http", "url": "https://x/${TOKEN}"}));
        let c =
            ServerEntry::from_value(json!({"command": "x", "args": ["${PORT:-1}", "${PORT:-2}"]}));
        let lines = example_variables([("a", &a), ("b", &b), ("c", &c)], &[]);
        let line = |name: &str, comment: &str, value: &str| ExampleLine {
            name: name.into(),
            comment: comment.into(),
            value: value.into(),
        };
        assert_eq!(
            lines,
            [
                line("TOKEN", "used by: a, b", ""),
                line("DB", "used by: a", "local"),
                line("PORT", "used by: c", ""),
            ]
        );
    }

    const NOTION: &str = "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";

    #[test]
    fn only_the_secret_inside_a_json_value_moves() {
        let headers =
            format!(r#"{{"Authorization":"Bearer {NOTION}","Notion-Version":"2022-06-28"}}"#);
        let plan = plan(
            &[candidate(
                "notion",
                json!({"command": "npx", "env": {"OPENAPI_MCP_HEADERS": headers}}),
            )],
            &nothing,
        )
        .unwrap();
        assert_eq!(
            added(&plan),
            [("NOTION_AUTH_TOKEN".to_string(), NOTION.to_string())]
        );
        let (_, changes) = &plan.changes[0];
        assert_eq!(
            changes[0].new,
            r#"{"Authorization":"Bearer ${NOTION_AUTH_TOKEN}","Notion-Version":"2022-06-28"}"#
        );
    }

    #[test]
    fn an_escaped_key_moves_with_its_escapes_and_a_split_one_is_refused() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
        let pem = format!("-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----");
        let document = format!(r#"{{"type":"service_account","private_key":"{pem}\\n"}}"#);
        let made = plan(
            &[candidate(
                "gcp",
                json!({"command": "npx", "env": {"SA_JSON": document}}),
            )],
            &nothing,
        )
        .unwrap();
        assert_eq!(made.new_variables[0].name, "GCP_PRIVATE_KEY");
        assert_eq!(made.new_variables[0].value, pem);
        let split = format!(
            r#"{{"a":"-----BEGIN PRIVATE KEY-----{body}","b":"{body}-----END PRIVATE KEY-----"}}"#
        );
        let error = plan(
            &[candidate(
                "gcp",
                json!({"command": "npx", "env": {"SA_JSON": split}}),
            )],
            &nothing,
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("ends its JSON string"),
            "{error}"
        );
    }

    #[test]
    fn each_value_goes_to_its_candidates_file_and_a_shared_one_to_both() {
        let mut user = candidate("gh", json!({"command": "x", "env": {"GITHUB_TOKEN": PAT}}));
        user.env_file = PathBuf::from("/u/.env");
        let project = candidate("gh2", json!({"command": "x", "env": {"GITHUB_TOKEN": PAT}}));
        let plan = plan(&[user, project], &nothing).unwrap();
        let files: Vec<&Path> = plan.env_files();
        assert_eq!(files, [Path::new("/u/.env"), Path::new("/p/.env")]);
        assert_eq!(plan.moves[0].env_file, Path::new("/u/.env"));
    }
}
