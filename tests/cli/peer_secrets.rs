//! Secret detection measured on test data other secret scanners wrote for
//! themselves, from four sources: the team's shared corpus
//! (`../shared/corpus/peer-secrets/examples.json`: gitleaks' rule
//! examples, detect-secrets' and ripsecrets' tests; outside the repository
//! and never copied into it; skipped, saying so, when absent), which the
//! rules were tuned on, and two the rules were not written from: Nosey
//! Parker's rule examples (`tests/data/peer-secrets/noseyparker`,
//! Apache-2.0, made by `scripts/peer-data/noseyparker.py`) and secretlint's
//! rule snapshots (`tests/data/peer-secrets/secretlint`, MIT, made by
//! `scripts/peer-data/secretlint.py`), since adjusted to as well; and
//! TruffleHog's detector pattern tests, unseen at first (AGPL, so
//! derived into `target/` by `scripts/peer-data/trufflehog.py`, never
//! committed; skipped, saying so, when absent).
//!
//! Every usable example is planted in a `.mcp.json` in the places MCP
//! configs hold secrets, and the real `mcpenv scan --json` judges them:
//! - a true positive (`tp`) token goes under its fitting env name, after
//!   `--api-key`, in `Authorization: Bearer`, and under the neutral name
//!   `CONFIG_VALUE` when its format alone identifies it; a URL under its
//!   name, as a bare argument and (self-identifying) under `CONFIG_VALUE`;
//!   a PEM key under its name (and `CONFIG_VALUE`); `user:pass` under its
//!   name and as `Authorization: Basic base64(user:pass)`; a password
//!   (`kind: password`) under its name and after `--password`.
//! - a decoy (`fp`) goes where it would fool a scanner: a look-alike of a
//!   format (wrong length, prefix or alphabet) only where the format alone
//!   decides, under `CONFIG_VALUE` (and a URL look-alike as an argument
//!   too); a placeholder under its secret-sounding name, after `--api-key`
//!   and in `Authorization: Bearer`; a public id or a value under a
//!   harmless name (`ISSUER_KEY_HASH`) under that name.
//!
//! The report (recall and decoys flagged, overall, per family and per
//! placement, and overall again without the values `stand_in` calls
//! stand-ins) is printed; the test fails below 99% recall or above 0.5% of
//! decoys flagged. Values are the peers' test fixtures, never live
//! credentials; they are still shown only masked.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcpenv::secrets::redact::mask;
use serde_json::{Map, Value, json};

use crate::harness::TestEnv;

const MIN_RECALL: f64 = 0.99;
const MAX_DECOYS_FLAGGED: f64 = 0.005;
const NEUTRAL_NAME: &str = "CONFIG_VALUE";

/// The data set: `MCPENV_PEER_SECRETS`, else the team's shared corpus next
/// to the repository.
fn examples_file() -> Option<PathBuf> {
    outside_data(
        "MCPENV_PEER_SECRETS",
        "../shared/corpus/peer-secrets/examples.json",
        "the peer scanners' test data",
        "it lives outside the repository",
    )
}

/// A data file kept out of the repository: the file `variable` names, else
/// `default` (relative to the repository); `None`, the skip recorded with
/// `why`, when it is not there.
fn outside_data(variable: &str, default: &str, what: &str, why: &str) -> Option<PathBuf> {
    let path = std::env::var_os(variable).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join(default),
        PathBuf::from,
    );
    if path.is_file() {
        Some(path)
    } else {
        crate::skips::skip_without_data(&format!("{what} is not at `{}` ({why})", path.display()));
        None
    }
}

/// One example planted in one place.
struct Planting {
    server: String,
    id: String,
    secret: bool,
    family: String,
    placement: &'static str,
    value: String,
    /// Why the value reads as a stand-in (see `stand_in`), if it does.
    stand_in: Option<&'static str>,
    entry: Value,
}

fn stdio(env: Option<(&str, &str)>, extra_args: &[&str]) -> Value {
    let mut args = vec![json!("-y"), json!("example-mcp-server")];
    args.extend(extra_args.iter().map(|arg| json!(arg)));
    let mut entry = json!({"command": "npx", "args": args});
    if let Some((name, value)) = env {
        entry["env"] = json!({ name: value });
    }
    entry
}

fn http_with_authorization(value: &str) -> Value {
    json!({
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": value},
    })
}

/// The places an example goes, by its label, kind and decoy category.
fn placements(example: &Map<String, Value>) -> Vec<(&'static str, Value)> {
    let text = |key: &str| example.get(key).and_then(Value::as_str).unwrap_or_default();
    let value = text("value");
    let kind = text("kind");
    let mut places = Vec::new();
    if text("label") == "tp" {
        let name = text("fitting_name");
        let alone = example
            .get("self_identifying")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        places.push(("env under its name", stdio(Some((name, value)), &[])));
        match kind {
            "token" => {
                places.push(("--api-key V", stdio(None, &["--api-key", value])));
                places.push((
                    "Authorization: Bearer V",
                    http_with_authorization(&format!("Bearer {value}")),
                ));
            }
            "password" => places.push(("--password V", stdio(None, &["--password", value]))),
            "url" => places.push(("bare argument", stdio(None, &[value]))),
            "userpass" => places.push((
                "Authorization: Basic",
                http_with_authorization(&format!("Basic {}", STANDARD.encode(value))),
            )),
            _ => {}
        }
        if alone && kind != "userpass" {
            places.push((
                "format alone (CONFIG_VALUE)",
                stdio(Some((NEUTRAL_NAME, value)), &[]),
            ));
        }
    } else {
        match text("decoy_category") {
            "format-lookalike" => {
                if kind == "url" {
                    places.push(("bare argument", stdio(None, &[value])));
                }
                places.push((
                    "format alone (CONFIG_VALUE)",
                    stdio(Some((NEUTRAL_NAME, value)), &[]),
                ));
            }
            category => {
                let name = example
                    .get("decoy_name")
                    .and_then(Value::as_str)
                    .unwrap_or(NEUTRAL_NAME);
                places.push(("env under its name", stdio(Some((name, value)), &[])));
                if category == "placeholder" && kind == "token" {
                    places.push(("--api-key V", stdio(None, &["--api-key", value])));
                    places.push((
                        "Authorization: Bearer V",
                        http_with_authorization(&format!("Bearer {value}")),
                    ));
                }
            }
        }
    }
    places
}

fn plantings(examples: &[Value]) -> Vec<Planting> {
    let mut plantings = Vec::new();
    for example in examples {
        let Some(example) = example.as_object() else {
            continue;
        };
        if example
            .get("excluded")
            .is_some_and(|reason| !reason.is_null())
        {
            continue;
        }
        let text = |key: &str| {
            example
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        for (placement, entry) in placements(example) {
            plantings.push(Planting {
                server: format!("{}-{}", text("id"), plantings.len()),
                id: text("id"),
                secret: text("label") == "tp",
                family: text("family"),
                placement,
                value: text("value"),
                stand_in: stand_in(&text("value"), &text("kind")),
                entry,
            });
        }
    }
    plantings
}

#[derive(Default)]
struct Tally {
    planted: usize,
    flagged: usize,
}

impl Tally {
    fn add(&mut self, flagged: bool) {
        self.planted += 1;
        self.flagged += usize::from(flagged);
    }

    fn share(&self) -> f64 {
        if self.planted == 0 {
            0.0
        } else {
            self.flagged as f64 / self.planted as f64
        }
    }

    fn cell(&self) -> String {
        if self.planted == 0 {
            "-".to_string()
        } else {
            format!(
                "{}/{} {:.1}%",
                self.flagged,
                self.planted,
                100.0 * self.share()
            )
        }
    }
}

/// What one data set's plantings found: all of them, and those whose
/// value is no stand-in (`stand_in`).
struct Measurement {
    secrets: Tally,
    decoys: Tally,
    real_secrets: Tally,
    real_decoys: Tally,
}

#[test]
fn recall_and_false_positives_on_other_scanners_test_data() {
    let Some(path) = examples_file() else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("the examples file reads");
    let examples: Vec<Value> = serde_json::from_str(&text).expect("the examples file is JSON");
    let plantings = plantings(&examples);
    assert!(plantings.len() > 2000, "only {} plantings", plantings.len());
    let Measurement {
        secrets, decoys, ..
    } = measure(
        "other scanners' test data (the shared corpus)",
        examples.len(),
        &plantings,
    );
    assert_within(&secrets, &decoys, MIN_RECALL, MAX_DECOYS_FLAGGED);
}

/// Nosey Parker's rule examples (`tests/data/peer-secrets/noseyparker`,
/// Apache-2.0, vendored so CI measures them too): a scanner whose data
/// mcpenv's rules were not written from at first (952/1,139 found, 3/34
/// decoys flagged), and have been adjusted to since, always to the
/// issuers' formats. The floors are what the rules reach on it today (the
/// README's table): a change that loses ground on it fails here. Its
/// decoys are negative examples that are no secret by Nosey Parker's own
/// files: the 4 that are (a FIXME says match it, or it holds a secret a
/// positive example gives) were relabelled by the script's two rules, so
/// no decoy may be flagged.
#[test]
fn recall_and_false_positives_on_a_scanner_the_rules_were_not_written_from() {
    measure_vendored(
        "noseyparker",
        "Nosey Parker's rule examples (unseen at first)",
        (0.91, MAX_DECOYS_FLAGGED),
        (0.97, MAX_DECOYS_FLAGGED),
    );
}

/// secretlint's rule snapshots (`tests/data/peer-secrets/secretlint`, MIT,
/// made by `scripts/peer-data/secretlint.py`): a third scanner, measured
/// before any rule was changed for it (226/395 found, 9/114 decoys
/// flagged; 223/250 and 7/69 without stand-ins). Floors at today's
/// figures, and without stand-ins the goals of issue 29: 97% found, no
/// more than 0.5% of decoys flagged (with 69 decoys: none).
#[test]
fn recall_and_false_positives_on_a_third_scanner() {
    measure_vendored(
        "secretlint",
        "secretlint's rule snapshots (unseen at first)",
        (0.62, MAX_DECOYS_FLAGGED),
        (0.97, MAX_DECOYS_FLAGGED),
    );
}

/// TruffleHog's detector pattern tests: a fourth scanner, measured after
/// the rules of issue 29 were written and never adjusted to it. It is
/// AGPL-3.0, so nothing of it is in the repository:
/// `scripts/peer-data/trufflehog.py` derives the examples into
/// `target/peer-secrets/trufflehog/examples.json` from a clone (or
/// `MCPENV_PEER_TRUFFLEHOG` names the file), and without them the test
/// skips, saying so (in CI too: CI has no clone). First figures, before
/// any rule was changed for it: 819/992 found, 0/43 decoys flagged
/// (806/840 and 0/32 without stand-ins, at TruffleHog `3ab759f`); three
/// formats since widened or added from their issuers' docs (Buildkite
/// `bkua_`, Pagar.me `ak_live_`, Typeform `tfp_`) made 823/992 and
/// 810/840, and a second round (NVIDIA `nvapi-`, BestTime `pri_`,
/// SaladCloud `salad_cloud_user_`, Atlassian tokens of any length) makes
/// 828/992 and 815/840. Floors at today's figures, so a change that loses
/// ground on it fails here.
#[test]
fn recall_and_false_positives_on_a_fourth_scanner_nobody_tuned_to() {
    let Some(path) = outside_data(
        "MCPENV_PEER_TRUFFLEHOG",
        "target/peer-secrets/trufflehog/examples.json",
        "TruffleHog's examples file",
        "AGPL: made by scripts/peer-data/trufflehog.py from a clone, never committed",
    ) else {
        return;
    };
    measure_file(
        &path,
        "TruffleHog's detector pattern tests (unseen at first)",
        (0.83, MAX_DECOYS_FLAGGED),
        (0.97, MAX_DECOYS_FLAGGED),
    );
}

/// Plants the vendored examples of `tests/data/peer-secrets/<folder>` and
/// fails below the floor of recall or above the ceiling of decoys flagged
/// (`(floor, ceiling)`) on all of them (`all`) or on those left when
/// stand-ins are taken out (`but_stand_ins`).
fn measure_vendored(folder: &str, source: &str, all: (f64, f64), but_stand_ins: (f64, f64)) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/peer-secrets")
        .join(folder)
        .join("examples.json");
    measure_file(&path, source, all, but_stand_ins);
}

/// [`measure_vendored`] for the examples file at `path`.
fn measure_file(path: &Path, source: &str, all: (f64, f64), but_stand_ins: (f64, f64)) {
    let text = std::fs::read_to_string(path).expect("the examples read");
    let examples: Vec<Value> = serde_json::from_str(&text).expect("the examples file is JSON");
    let plantings = plantings(&examples);
    assert!(plantings.len() > 200, "only {} plantings", plantings.len());
    let measured = measure(source, examples.len(), &plantings);
    assert_within(&measured.secrets, &measured.decoys, all.0, all.1);
    assert_within(
        &measured.real_secrets,
        &measured.real_decoys,
        but_stand_ins.0,
        but_stand_ins.1,
    );
}

/// Fails below `min_recall` of the secrets found or above `max_decoys` of
/// the decoys flagged.
fn assert_within(secrets: &Tally, decoys: &Tally, min_recall: f64, max_decoys: f64) {
    assert!(
        secrets.share() >= min_recall,
        "recall {:.2}% is below {:.1}%",
        100.0 * secrets.share(),
        100.0 * min_recall
    );
    assert!(
        decoys.share() <= max_decoys,
        "{:.2}% of decoys flagged, above {:.1}%",
        100.0 * decoys.share(),
        100.0 * max_decoys
    );
}

/// Plants `plantings` in one `.mcp.json`, runs the real `mcpenv scan
/// --json` on it, prints the tables (per family, per placement) and every
/// miss and false alarm, masked, and checks nothing planted is printed
/// whole.
fn measure(source: &str, examples: usize, plantings: &[Planting]) -> Measurement {
    let env = TestEnv::new();
    let servers: Map<String, Value> = plantings
        .iter()
        .map(|planting| (planting.server.clone(), planting.entry.clone()))
        .collect();
    env.write(
        "project/.mcp.json",
        &serde_json::to_string_pretty(&json!({"mcpServers": servers})).unwrap(),
    );
    let report = env.run(&["scan", "--json", ".mcp.json"]).json();
    let mut flagged_servers = BTreeMap::<String, Vec<String>>::new();
    for finding in report["findings"].as_array().expect("findings") {
        flagged_servers
            .entry(finding["server"].as_str().unwrap().to_string())
            .or_default()
            .push(finding["rule"].as_str().unwrap().to_string());
    }

    let (mut secrets, mut decoys) = (Tally::default(), Tally::default());
    let (mut real_secrets, mut real_decoys) = (Tally::default(), Tally::default());
    let mut by_family = BTreeMap::<&str, (Tally, Tally)>::new();
    let mut by_place = BTreeMap::<&str, (Tally, Tally)>::new();
    let (mut misses, mut false_alarms) = (Vec::new(), Vec::new());
    for planting in plantings {
        let rules = flagged_servers.get(&planting.server);
        let flagged = rules.is_some();
        let pick = |pair: &'_ mut (Tally, Tally)| {
            if planting.secret {
                pair.0.add(flagged);
            } else {
                pair.1.add(flagged);
            }
        };
        pick(by_family.entry(&planting.family).or_default());
        pick(by_place.entry(planting.placement).or_default());
        if planting.stand_in.is_none() {
            if planting.secret {
                real_secrets.add(flagged);
            } else {
                real_decoys.add(flagged);
            }
        }
        if planting.secret {
            secrets.add(flagged);
            if !flagged {
                misses.push(format!(
                    "missed {} ({}, {}): `{}`{}",
                    planting.id,
                    planting.family,
                    planting.placement,
                    mask(&planting.value),
                    planting
                        .stand_in
                        .map(|why| format!(" (a stand-in: {why})"))
                        .unwrap_or_default()
                ));
            }
        } else {
            decoys.add(flagged);
            if let Some(rules) = rules {
                false_alarms.push(format!(
                    "flagged decoy {} ({}, {}) by {}: `{}`",
                    planting.id,
                    planting.family,
                    planting.placement,
                    rules.join(", "),
                    mask(&planting.value)
                ));
            }
        }
    }

    let mut table = String::new();
    let _ = writeln!(
        table,
        "\nsecret detection on {source} ({examples} examples planted {} times)\n",
        plantings.len()
    );
    let _ = writeln!(
        table,
        "{:<30} {:>22} {:>22}",
        "family", "secrets found", "decoys flagged"
    );
    for (family, (found, flagged)) in &by_family {
        let _ = writeln!(
            table,
            "{family:<30} {:>22} {:>22}",
            found.cell(),
            flagged.cell()
        );
    }
    let _ = writeln!(
        table,
        "{:<30} {:>22} {:>22}",
        "all",
        secrets.cell(),
        decoys.cell()
    );
    let _ = writeln!(
        table,
        "{:<30} {:>22} {:>22}\n",
        "all but stand-ins",
        real_secrets.cell(),
        real_decoys.cell()
    );
    let _ = writeln!(
        table,
        "{:<30} {:>22} {:>22}",
        "placement", "secrets found", "decoys flagged"
    );
    for (place, (found, flagged)) in &by_place {
        let _ = writeln!(
            table,
            "{place:<30} {:>22} {:>22}",
            found.cell(),
            flagged.cell()
        );
    }
    eprintln!("{table}");
    for line in misses.iter().chain(&false_alarms) {
        eprintln!("{line}");
    }

    // Nothing planted reaches the output whole.
    let output = format!("{report}");
    for planting in plantings
        .iter()
        .filter(|planting| planting.value.len() >= 12)
    {
        assert!(
            !output.contains(&planting.value),
            "scan printed {} whole",
            planting.id
        );
    }
    Measurement {
        secrets,
        decoys,
        real_secrets,
        real_decoys,
    }
}

/// Why a value reads as a stand-in a person would take for a placeholder,
/// by a criterion written here, independent of mcpenv's rules and applied
/// identically to every source: its secret part (a URL's password, else
/// the whole value; a PEM block never, its base64 has runs by structure)
/// holds a run of 6 of one character (`aaaaaa`, `000000`, `XXXXXX`), 4 of
/// `x`, `X` or `*`, 6 characters in alphabet order up or down (`abcdef`,
/// `123456`, `FEDCBA`), a word that says it is not real (`example`,
/// `sample`, `dummy`, `placeholder`, `redacted`, `fake`, `changeme`,
/// `notreal`, `your`), or is one of the words people type as a stand-in
/// password whole (`password`, `secret`, `admin`, …). A random token holds
/// none of these but by a chance far below one in a thousand.
fn stand_in(value: &str, kind: &str) -> Option<&'static str> {
    const WORDS: [&str; 10] = [
        "example",
        "sample",
        "dummy",
        "placeholder",
        "redacted",
        "fake",
        "changeme",
        "notreal",
        "not_real",
        "your",
    ];
    const WHOLE: [&str; 15] = [
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "apikey",
        "key",
        "test",
        "admin",
        "root",
        "user",
        "default",
        "mypassword",
        "changeme",
    ];
    if kind == "pem" {
        return None;
    }
    let part = if kind == "url" {
        url_password(value).unwrap_or(value)
    } else {
        value
    };
    let chars: Vec<char> = part.chars().collect();
    let longest = |step: fn(char, char) -> bool| {
        let (mut run, mut best) = (1, 1);
        for pair in chars.windows(2) {
            run = if step(pair[0], pair[1]) { run + 1 } else { 1 };
            best = best.max(run);
        }
        best
    };
    let lower = part.to_ascii_lowercase();
    if longest(|a, b| a == b) >= 6 {
        Some("one character repeated")
    } else if longest(|a, b| a == b && matches!(a, 'x' | 'X' | '*')) >= 4 {
        Some("an x or * filler")
    } else if longest(in_sequence) >= 6 || longest(|a, b| in_sequence(b, a)) >= 6 {
        Some("characters in sequence")
    } else if WORDS.iter().any(|word| lower.contains(word)) {
        Some("a word saying it is not real")
    } else if WHOLE.contains(&lower.as_str()) {
        Some("a stand-in word as the whole password")
    } else {
        None
    }
}

/// The password of `scheme://user:password@host…`, if it has one.
fn url_password(value: &str) -> Option<&str> {
    let rest = value.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let userinfo = authority.rsplit_once('@')?.0;
    Some(userinfo.split_once(':')?.1)
}

/// `b` follows `a` in the alphabet or the digits (case aside).
fn in_sequence(a: char, b: char) -> bool {
    a.is_ascii_alphanumeric()
        && b.is_ascii_alphanumeric()
        && u32::from(b.to_ascii_lowercase()) == u32::from(a.to_ascii_lowercase()) + 1
}
