//! Planning the move of secrets out of server entries into `.env`: which
//! value goes to which variable, what each entry's strings become, and what
//! `.env.example` documents. Pure: reading and writing files is the
//! caller's job, in the order this plan allows (`.env` first, configs last,
//! so no placeholder ever points at a value that was not saved).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::claude_code::blanked;
use crate::model::{Field, ServerEntry};
use crate::placeholder;
use crate::redact;
use crate::scope::Scope;
use crate::secrets::{self, Finding};
use crate::store::{FieldChange, Target};

/// One server entry to extract from, with where it lives.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The file and object the entry is in.
    pub target: Target,
    /// The server's name.
    pub server: String,
    /// The entry as read.
    pub entry: ServerEntry,
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
    /// Whether `.env` (or the environment) already held this value under
    /// that name, so nothing is added.
    pub reused: bool,
}

/// Everything an extraction will do.
#[derive(Debug, Clone, Default)]
pub struct ExtractionPlan {
    /// Every secret found, and its variable.
    pub moves: Vec<Move>,
    /// Variables to add to `.env`, with their values (secrets: never print).
    pub new_variables: Vec<(String, String)>,
    /// Changes to config files, one list per file and object.
    pub changes: Vec<(Target, Vec<FieldChange>)>,
}

impl ExtractionPlan {
    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The secret values the plan moves, for checks such as git history.
    pub fn secrets(&self) -> Vec<(&str, &str)> {
        self.new_variables
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect()
    }
}

/// What is already known about variable names: a value from `.env` or the
/// process environment, so a new variable never shadows a different value.
pub trait KnownValues {
    /// The value `name` resolves to today, if any.
    fn value(&self, name: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> KnownValues for F {
    fn value(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// Plans the extraction of every secret found in `candidates`.
pub fn plan(candidates: &[Candidate], known: &dyn KnownValues) -> ExtractionPlan {
    let mut plan = ExtractionPlan::default();
    // Names given out by this plan, with their values.
    let mut assigned: IndexMap<String, String> = IndexMap::new();
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
            let mut new = old.clone();
            if let Field::Env(key) = &field {
                // The whole value moves under the variable's own name: the
                // usual `KEY=${KEY}` shape, whatever part looked secret.
                let finding = field_findings[0];
                let (variable, reused) =
                    name_for(&variable_base(key), &old, known, &mut assigned, false);
                record(
                    &mut plan, candidate, finding, &field, &variable, &old, reused,
                );
                new = placeholder::placeholder(&variable);
            } else {
                let mut ordered = field_findings.clone();
                ordered.sort_by_key(|finding| std::cmp::Reverse(finding.span.start));
                // Claude Code sends credential names (`NPM_TOKEN`, …) empty
                // to remote servers: their values get other names.
                let remote = candidate.entry.transport().is_remote();
                for finding in ordered {
                    let mut base = derived_name(&candidate.server, &candidate.entry, finding);
                    if remote {
                        base =
                            blanked::remote_safe_name(&base, &screaming_snake(&candidate.server));
                    }
                    let (variable, reused) =
                        name_for(&base, &finding.secret, known, &mut assigned, remote);
                    record(
                        &mut plan,
                        candidate,
                        finding,
                        &field,
                        &variable,
                        &finding.secret,
                        reused,
                    );
                    new.replace_range(finding.span.clone(), &placeholder::placeholder(&variable));
                }
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
    plan.new_variables = assigned
        .into_iter()
        .filter(|(name, value)| known.value(name).as_deref() != Some(value.as_str()))
        .collect();
    plan
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
/// Claude Code does not blank there). Returns the name and whether the
/// value was known.
fn name_for(
    base: &str,
    value: &str,
    known: &dyn KnownValues,
    assigned: &mut IndexMap<String, String>,
    remote: bool,
) -> (String, bool) {
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
        match (planned, existing.as_deref()) {
            (Some(planned), _) if planned == value => {
                return (name, existing.as_deref() == Some(value));
            }
            (Some(_), _) => continue,
            (None, Some(existing)) if existing == value => {
                assigned.insert(name.clone(), value.to_string());
                return (name, true);
            }
            (None, Some(_)) => continue,
            (None, None) => {
                assigned.insert(name.clone(), value.to_string());
                return (name, false);
            }
        }
    }
    unreachable!("the loop returns once a free name is found")
}

/// A variable name from an env key: kept when valid, else made valid.
fn variable_base(key: &str) -> String {
    if placeholder::is_variable_name(key) {
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
        Field::Header(name) if name.eq_ignore_ascii_case("authorization") => {
            "AUTH_TOKEN".to_string()
        }
        Field::Header(name) => {
            let name = name
                .strip_prefix("X-")
                .or_else(|| name.strip_prefix("x-"))
                .unwrap_or(name);
            screaming_snake(name)
        }
        Field::Arg(index) => arg_flag(entry, *index, finding).unwrap_or_else(|| {
            if finding.rule == "url-userinfo-password" {
                "PASSWORD".to_string()
            } else {
                "TOKEN".to_string()
            }
        }),
        Field::Command | Field::Url | Field::Env(_) => "TOKEN".to_string(),
    };
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
    crate::placeholder::variable_name_from(text).unwrap_or_else(|| "SECRET".to_string())
}

/// The lines `.env.example` should have: every variable referenced by
/// `entries`, with a comment naming the servers that use it.
pub fn example_variables<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a ServerEntry)>,
) -> Vec<(String, String)> {
    let mut users: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (server, entry) in entries {
        for (_, value) in entry.expandable_fields() {
            for reference in placeholder::references(value) {
                let servers = users.entry(reference.name.clone()).or_default();
                if servers.is_empty() {
                    order.push(reference.name.clone());
                }
                if !servers.iter().any(|name| name == server) {
                    servers.push(server.to_string());
                }
            }
        }
    }
    order
        .into_iter()
        .map(|name| {
            let servers = users.remove(&name).unwrap_or_default();
            let comment = format!("used by: {}", servers.join(", "));
            (name, comment)
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
        }
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
        );
        assert_eq!(
            plan.new_variables,
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
        );
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
        );
        assert_eq!(plan.new_variables[0].0, "GITHUB_TOKEN_2");
        let same = |name: &str| (name == "GITHUB_TOKEN").then(|| PAT.to_string());
        let plan = super::plan(
            &[candidate(
                "github",
                json!({"command": "npx", "env": {"GITHUB_TOKEN": PAT}}),
            )],
            &same,
        );
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
        );
        let names: Vec<&str> = plan
            .new_variables
            .iter()
            .map(|(name, _)| name.as_str())
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
        );
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
        );
        assert_eq!(plan.new_variables[0].0, "BRAVE_API_KEY");
    }

    #[test]
    fn example_lists_every_reference_with_its_servers() {
        let a = ServerEntry::from_value(
            json!({"command": "x", "env": {"A": "${TOKEN}", "B": "${DB:-local}"}}),
        );
        let b = ServerEntry::from_value(json!({"type": "http", "url": "https://x/${TOKEN}"}));
        let lines = example_variables([("a", &a), ("b", &b)]);
        assert_eq!(
            lines,
            [
                ("TOKEN".to_string(), "used by: a, b".to_string()),
                ("DB".to_string(), "used by: a".to_string())
            ]
        );
    }
}
