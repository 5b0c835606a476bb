//! SARIF 2.1.0 (OASIS), the format code-scanning services read (GitHub code
//! scanning, GitLab, Azure DevOps): one run of mcpenv, one result per
//! secret. Only the parts those services use are written; the vendored
//! OASIS schema in `tests/schema/` checks the shape.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::secrets::value_position::Position;

/// The OASIS schema the log declares.
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base of repository-relative URIs (the checkout's root), as GitHub
/// and the SARIF spec's examples name it.
pub const SOURCE_ROOT: &str = "%SRCROOT%";

/// Where mcpenv is described: the package's `repository`, when it has
/// one (SARIF leaves `informationUri` out otherwise).
fn information_uri() -> Option<&'static str> {
    Some(env!("CARGO_PKG_REPOSITORY")).filter(|uri| !uri.is_empty())
}

/// The key of the fingerprint code scanning deduplicates alerts by.
const FINGERPRINT_KEY: &str = "mcpenv/finding/v1";

/// What an alert is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertKind {
    /// A literal secret.
    Secret,
    /// A config that does not parse (scanned as text only).
    Unparsed,
    /// A server an organisation's MCP policy keeps out.
    Policy,
}

/// One secret, or one config that does not parse, to report.
#[derive(Debug, Clone)]
pub struct Alert {
    /// What it is about.
    pub kind: AlertKind,
    /// The detection rule's id (`github-pat`).
    pub rule: String,
    /// What the rule finds, for the rule's description (`GitHub classic PAT`).
    pub rule_description: String,
    /// The file: relative to the repository root (`/`-separated, as a URI
    /// reference) or an absolute `file:` URI for a file outside it.
    pub file: FileUri,
    /// Where the secret is in the file, when it could be found.
    pub position: Option<Position>,
    /// The sentence shown for the alert; never holds the secret whole.
    pub message: String,
    /// What identifies the alert across runs (file, server, field, rule),
    /// hashed into its fingerprint; never the secret.
    pub identity: String,
}

/// A file, as SARIF refers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileUri {
    /// Relative to the repository root ([`SOURCE_ROOT`]).
    InRepository(String),
    /// An absolute `file:` URI.
    Elsewhere(String),
}

/// A whole SARIF log.
#[derive(Debug, Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    results: Vec<ResultObject>,
    column_kind: &'static str,
}

#[derive(Debug, Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'static str>,
    rules: Vec<Rule>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    name: String,
    short_description: Text,
    help: Text,
    default_configuration: Configuration,
}

#[derive(Debug, Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Debug, Serialize)]
struct Text {
    text: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultObject {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

/// The log of one run of mcpenv `version` that found `alerts`: a rule entry
/// for each rule id used, in order of first use.
pub fn log(version: &str, alerts: &[Alert]) -> Log {
    let mut rules: Vec<Rule> = Vec::new();
    let rule_indices: Vec<usize> = alerts
        .iter()
        .map(
            |alert| match rules.iter().position(|rule| rule.id == alert.rule) {
                Some(index) => index,
                None => {
                    rules.push(rule(alert));
                    rules.len() - 1
                }
            },
        )
        .collect();
    // A scan of thousands of files: its results (a digest each) are made
    // in runs on every core, in order.
    let runs: Vec<&[Alert]> = alerts.chunks(RESULT_RUN).collect();
    let results = super::redact::on_every_core(
        runs.len(),
        || (),
        |(), index| {
            runs[index]
                .iter()
                .zip(&rule_indices[index * RESULT_RUN..])
                .map(|(alert, &rule_index)| result(alert, rule_index))
                .collect::<Vec<_>>()
        },
    )
    .into_iter()
    .flatten()
    .collect();
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "mcpenv",
                    version: version.to_string(),
                    information_uri: information_uri(),
                    rules,
                },
            },
            results,
            column_kind: "unicodeCodePoints",
        }],
    }
}

/// Alerts a thread makes the results of at a time.
const RESULT_RUN: usize = 512;

/// The result of `alert`, whose rule is the log's `rule_index`th.
fn result(alert: &Alert, rule_index: usize) -> ResultObject {
    let (uri, uri_base_id) = match &alert.file {
        FileUri::InRepository(uri) => (uri.clone(), Some(SOURCE_ROOT)),
        FileUri::Elsewhere(uri) => (uri.clone(), None),
    };
    ResultObject {
        rule_id: alert.rule.clone(),
        rule_index,
        level: "error",
        message: Text {
            text: alert.message.clone(),
        },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation { uri, uri_base_id },
                region: alert.position.map(|position| Region {
                    start_line: position.line,
                    start_column: position.column,
                    end_line: position.end_line,
                    end_column: position.end_column,
                }),
            },
        }],
        partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, fingerprint(&alert.identity))]),
    }
}

fn rule(alert: &Alert) -> Rule {
    let (short, help) = match alert.kind {
        AlertKind::Secret => (
            format!("Literal {} in an MCP config", alert.rule_description),
            "Move the value into a git-ignored `.env` and leave a placeholder the client expands (`mcpenv extract` does it for Claude Code's files); rotate a secret that was committed.",
        ),
        AlertKind::Unparsed => (
            alert.rule_description.clone(),
            "Fix the file by hand: its client loads none of it, and mcpenv could scan only its text for secrets.",
        ),
        AlertKind::Policy => (
            alert.rule_description.clone(),
            "Claude Code hides a server its managed policy blocks and never starts it: remove the server from `.mcp.json`, or have the organisation's policy allow it.",
        ),
    };
    Rule {
        id: alert.rule.clone(),
        name: pascal_case(&alert.rule),
        short_description: Text { text: short },
        help: Text {
            text: help.to_string(),
        },
        default_configuration: Configuration { level: "error" },
    }
}

/// `github-pat` → `GithubPat`: SARIF's rule names are identifiers.
fn pascal_case(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// A hex SHA-256 of `identity`: stable across runs, and no longer than
/// code scanning accepts whatever the file and server names are.
fn fingerprint(identity: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(identity.as_bytes());
    // Two digits a byte from a table: a scan's log has one per finding.
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The table's digits are `format!`'s.
        #[test]
        fn fingerprints_are_the_digests_lower_case_hex(identity in ".{0,64}") {
            let formatted: String = Sha256::digest(identity.as_bytes())
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            proptest::prop_assert_eq!(fingerprint(&identity), formatted);
        }
    }

    fn alert(rule: &str, file: &str) -> Alert {
        Alert {
            kind: AlertKind::Secret,
            rule: rule.to_string(),
            rule_description: "thing".to_string(),
            file: FileUri::InRepository(file.to_string()),
            position: None,
            message: "m".to_string(),
            identity: format!("{file}\0{rule}"),
        }
    }

    fn rule_ids(log: &Log) -> Vec<&str> {
        log.runs[0]
            .tool
            .driver
            .rules
            .iter()
            .map(|rule| rule.id.as_str())
            .collect()
    }

    #[test]
    fn many_results_are_made_in_order_each_pointing_at_its_rule() {
        let rules = ["a", "b", "c", "d"];
        let alerts: Vec<Alert> = (0..RESULT_RUN * 2 + 3)
            .map(|index| {
                // A rule first used in a later run: `d`.
                let rule = if index < RESULT_RUN + 1 {
                    rules[index % 3]
                } else {
                    rules[index % 4]
                };
                alert(rule, &format!("f{index}"))
            })
            .collect();
        let log = log("1.0.0", &alerts);
        let run = &log.runs[0];
        assert_eq!(run.results.len(), alerts.len());
        for (alert, result) in alerts.iter().zip(&run.results) {
            assert_eq!(result.rule_id, alert.rule);
            assert_eq!(run.tool.driver.rules[result.rule_index].id, alert.rule);
            assert_eq!(
                result.partial_fingerprints[FINGERPRINT_KEY],
                fingerprint(&alert.identity)
            );
        }
        assert_eq!(rule_ids(&log), rules);
    }

    #[test]
    fn each_rule_is_listed_once_and_results_point_at_it() {
        let log = log(
            "1.0.0",
            &[alert("a-b", "x"), alert("c", "x"), alert("a-b", "y")],
        );
        let run = &log.runs[0];
        assert_eq!(rule_ids(&log), ["a-b", "c"]);
        assert_eq!(run.tool.driver.rules[0].name, "AB");
        let indices: Vec<usize> = run.results.iter().map(|result| result.rule_index).collect();
        assert_eq!(indices, [0, 1, 0]);
        assert_ne!(
            run.results[0].partial_fingerprints[FINGERPRINT_KEY],
            run.results[2].partial_fingerprints[FINGERPRINT_KEY]
        );
        assert_eq!(
            run.results[0].partial_fingerprints[FINGERPRINT_KEY].len(),
            64
        );
    }
}
