//! Accuracy of secret detection on a generated corpus: every planted secret
//! is found, nothing is found in decoy cases. Prints recall and precision
//! per rule and per placement, and the scanner's throughput.

#[path = "../support/corpus.rs"]
mod corpus;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use mcpenv::model::ServerEntry;
use mcpenv::redact::mask;
use mcpenv::secrets::{self, Finding};
use serde_json::Value;

/// Fixed seed: the corpus is the same on every run.
const SEED: u64 = 0x6d63_7065_6e76;

/// Rules that come from the entry's structure rather than a token shape.
const STRUCTURAL_RULES: [&str; 2] = [secrets::GENERIC_SECRET, secrets::AWS_SECRET_ACCESS_KEY];

#[derive(Default)]
struct Row {
    planted: usize,
    found: usize,
    same_rule: usize,
    reported: usize,
    true_reports: usize,
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn matches(finding: &Finding, planted: &corpus::Planted) -> bool {
    finding.field.to_string() == planted.field && finding.secret == planted.secret
}

#[test]
fn every_planted_secret_is_found_and_no_decoy() {
    let corpus = corpus::corpus(SEED);
    let mut by_rule: BTreeMap<&str, Row> = BTreeMap::new();
    let mut by_place: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut false_reports = Vec::new();
    let mut other_rule = BTreeMap::<(&str, &str), usize>::new();
    let (mut planted_cases, mut decoy_cases, mut decoy_hits) = (0, 0, 0);

    for (index, case) in corpus.cases.iter().enumerate() {
        let findings = secrets::scan_entry(&ServerEntry::from_value(case.server.clone()));
        if case.planted.is_empty() {
            decoy_cases += 1;
        } else {
            planted_cases += 1;
        }
        for planted in &case.planted {
            let row = by_rule.entry(planted.rule).or_default();
            row.planted += 1;
            let place = by_place.entry(planted.placement).or_default();
            place.0 += 1;
            match findings.iter().find(|finding| matches(finding, planted)) {
                Some(finding) => {
                    row.found += 1;
                    place.1 += 1;
                    if finding.rule == planted.rule {
                        row.same_rule += 1;
                    } else {
                        *other_rule.entry((planted.rule, finding.rule)).or_default() += 1;
                    }
                }
                None => misses.push(format!(
                    "case {index}: {} {} `{}` ({}) not found; got {:?}\n    {}",
                    planted.rule,
                    planted.field,
                    mask(&planted.secret),
                    planted.placement,
                    findings
                        .iter()
                        .map(|finding| format!(
                            "{} {} `{}`",
                            finding.rule, finding.field, finding.secret
                        ))
                        .collect::<Vec<_>>(),
                    case.server
                )),
            }
        }
        for finding in &findings {
            let row = by_rule.entry(finding.rule).or_default();
            row.reported += 1;
            if case.planted.iter().any(|planted| matches(finding, planted)) {
                row.true_reports += 1;
            } else {
                if case.planted.is_empty() {
                    decoy_hits += 1;
                }
                false_reports.push(format!(
                    "case {index}: {} {} `{}` in {}",
                    finding.rule, finding.field, finding.secret, case.server
                ));
            }
        }
    }

    let mut table = String::new();
    let _ = writeln!(
        table,
        "\nsecret detection on the synthetic corpus (seed {SEED:#x}): {planted_cases} planted cases, {decoy_cases} decoy cases\n"
    );
    let _ = writeln!(
        table,
        "{:<32} {:>7} {:>6} {:>7} {:>9} {:>8} {:>9}",
        "rule", "planted", "found", "recall", "same rule", "reported", "precision"
    );
    let mut total = Row::default();
    for (rule, row) in &by_rule {
        let _ = writeln!(
            table,
            "{:<32} {:>7} {:>6} {:>7} {:>9} {:>8} {:>9}",
            rule,
            row.planted,
            row.found,
            percent(row.found, row.planted),
            row.same_rule,
            row.reported,
            percent(row.true_reports, row.reported)
        );
        total.planted += row.planted;
        total.found += row.found;
        total.same_rule += row.same_rule;
        total.reported += row.reported;
        total.true_reports += row.true_reports;
    }
    let _ = writeln!(
        table,
        "{:<32} {:>7} {:>6} {:>7} {:>9} {:>8} {:>9}",
        "total",
        total.planted,
        total.found,
        percent(total.found, total.planted),
        total.same_rule,
        total.reported,
        percent(total.true_reports, total.reported)
    );
    let _ = writeln!(
        table,
        "\n{:<36} {:>7} {:>6} {:>7}",
        "placement", "planted", "found", "recall"
    );
    for (place, (planted, found)) in &by_place {
        let _ = writeln!(
            table,
            "{:<36} {:>7} {:>6} {:>7}",
            place,
            planted,
            found,
            percent(*found, *planted)
        );
    }
    let _ = writeln!(
        table,
        "\ndecoy cases: {decoy_cases}, findings in them: {decoy_hits}; false reports overall: {}",
        false_reports.len()
    );
    for ((expected, got), count) in &other_rule {
        let _ = writeln!(
            table,
            "found by another rule: {count} × {expected} reported as {got}"
        );
    }
    eprintln!("{table}");
    for line in misses.iter().chain(&false_reports).take(40) {
        eprintln!("{line}");
    }

    // The corpus covers every rule, and enough of them.
    for rule in secrets::rules() {
        assert!(
            by_rule.get(rule.id).is_some_and(|row| row.planted > 0),
            "no planted secret for rule `{}`",
            rule.id
        );
    }
    for rule in STRUCTURAL_RULES {
        assert!(
            by_rule.get(rule).is_some_and(|row| row.planted > 0),
            "{rule}"
        );
    }
    assert!(
        total.planted >= 300,
        "only {} planted secrets",
        total.planted
    );
    assert!(decoy_cases >= 300, "only {decoy_cases} decoy cases");

    assert!(
        misses.is_empty(),
        "{} planted secrets not found",
        misses.len()
    );
    assert!(
        false_reports.is_empty(),
        "{} false reports",
        false_reports.len()
    );
}

#[test]
fn generator_is_deterministic_and_synthetic() {
    let first = corpus::corpus(SEED);
    let again = corpus::corpus(SEED);
    assert_eq!(first.cases.len(), again.cases.len());
    for (a, b) in first.cases.iter().zip(&again.cases) {
        assert_eq!(a.server, b.server);
        assert_eq!(a.planted, b.planted);
    }
    let files = corpus::config_files(3, 1);
    assert_eq!(files, corpus::config_files(3, 1));
    for file in &files {
        let root: Value = serde_json::from_str(file).unwrap();
        let servers = root["mcpServers"].as_object().unwrap();
        assert_eq!(servers.len(), 24);
        assert!(
            (7_000..14_000).contains(&file.len()),
            "{} bytes",
            file.len()
        );
    }
}

/// Timing, not a pass/fail check: parse + scan of `config_files(2000, 1)` on
/// one thread (100 files in debug builds, whose numbers mean little). Run
/// `cargo test --release --test cli secrets_corpus -- --nocapture`.
#[test]
fn throughput_of_scan_entry() {
    let count = if cfg!(debug_assertions) { 100 } else { 2000 };
    let files = corpus::config_files(count, 1);
    let bytes: usize = files.iter().map(String::len).sum();
    // Compile the rules outside the timed part.
    assert!(!secrets::rules().is_empty());

    // (parse, scan) of the fastest run.
    let mut best: Option<(Duration, Duration)> = None;
    let mut findings = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let mut entries = Vec::with_capacity(count * 24);
        for file in &files {
            let mut root: Value = serde_json::from_str(file).unwrap();
            if let Some(Value::Object(servers)) = root.get_mut("mcpServers").map(Value::take) {
                entries.extend(
                    servers
                        .into_iter()
                        .map(|(_, server)| ServerEntry::from_value(server)),
                );
            }
        }
        let parsed = start.elapsed();
        findings = entries
            .iter()
            .map(|entry| secrets::scan_entry(entry).len())
            .sum::<usize>();
        let scanned = start.elapsed() - parsed;
        if best.is_none_or(|(parse, scan)| parsed + scanned < parse + scan) {
            best = Some((parsed, scanned));
        }
    }
    // Three runs were timed.
    let best = best.unwrap();
    let megabytes = bytes as f64 / 1e6;
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    eprintln!(
        "\nthroughput ({profile}, 1 thread, best of 3): {count} files of {} bytes on average, {megabytes:.1} MB, {findings} findings\n  \
         parse {:.0} ms, scan {:.0} ms, parse + scan {:.0} ms = {:.1} MB/s (scan alone {:.1} MB/s)",
        bytes / count,
        best.0.as_secs_f64() * 1e3,
        best.1.as_secs_f64() * 1e3,
        (best.0 + best.1).as_secs_f64() * 1e3,
        megabytes / (best.0 + best.1).as_secs_f64(),
        megabytes / best.1.as_secs_f64(),
    );
}
