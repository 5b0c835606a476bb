//! Accuracy of secret detection on a generated corpus: every planted secret
//! is found, nothing is found in decoy cases. Prints recall and precision
//! per rule and per placement, and the scanner's throughput.

#[path = "../support/corpus.rs"]
mod corpus;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcpenv::config::model::ServerEntry;
use mcpenv::secrets::redact::mask;
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

/// Every format that identifies itself is found under a neutral name
/// (`CONFIG_VALUE`), where nothing but the format says it is a secret.
#[test]
fn every_token_format_is_found_under_a_neutral_name() {
    let tokens = corpus::one_token_per_rule(SEED);
    let found = servers_flagged(
        tokens
            .iter()
            .map(|(rule, token)| (*rule, "CONFIG_VALUE", token.as_str())),
    );
    let missed: Vec<&str> = tokens
        .iter()
        .map(|(rule, _)| *rule)
        .filter(|rule| !found.contains(*rule))
        .collect();
    assert!(tokens.len() > 150, "only {} rules", tokens.len());
    assert!(
        missed.is_empty(),
        "not found under a neutral name: {missed:?}"
    );
}

/// The families issue 29 names, each with the rules that find it by its
/// format alone: every one of those rules has a token in
/// `corpus::one_token_per_rule`, which the test above plants under
/// `CONFIG_VALUE` and requires found.
const ISSUE_29_FAMILIES: &[(&str, &[&str])] = &[
    ("HashiCorp Vault", &["vault-token"]),
    (
        "New Relic",
        &[
            "new-relic-key",
            "new-relic-license-key",
            "new-relic-pixie-key",
        ],
    ),
    ("NuGet", &["nuget-key"]),
    ("SonarQube/SonarCloud", &["sonarqube-token"]),
    ("Sourcegraph", &["sourcegraph-token"]),
    ("Doppler service tokens", &["doppler-token"]),
    ("MongoDB Atlas", &["mongodb-atlas-service-account-secret"]),
    ("AWS AppSync/MWS", &["aws-appsync-key", "amazon-mws-token"]),
    ("Azure DevOps PATs", &["azure-devops-pat"]),
    ("CircleCI", &["circleci-token"]),
    ("Twitch stream keys", &["twitch-stream-key"]),
    ("Slack app-level tokens", &["slack-app-token"]),
    ("Telegram bot tokens", &["telegram-bot-token"]),
    ("Square", &["square-token"]),
    ("Segment", &["segment-public-api-token"]),
    ("Ionic", &["ionic-token"]),
    ("crates.io", &["crates-io-token"]),
    ("Django secret keys", &["django-insecure-key"]),
    ("Dropbox short-lived tokens", &["dropbox-short-lived-token"]),
    ("Dependency-Track", &["dependency-track-key"]),
    ("Jina", &["jina-key"]),
    ("Salesforce session ids", &["salesforce-session-id"]),
    ("StackHawk", &["stackhawk-key"]),
    ("TeamCity", &["teamcity-token"]),
    ("Pulumi", &["pulumi-token"]),
    ("Supabase management tokens", &["supabase-pat"]),
    ("Atlassian", &["atlassian-token"]),
    ("Buildkite", &["buildkite-token"]),
    (
        "GitHub refresh/server tokens",
        &[
            "github-refresh-token",
            "github-oauth-app-refresh",
            "github-app-installation-token",
        ],
    ),
    ("LaunchDarkly", &["launchdarkly-key"]),
    ("Postman", &["postman-key"]),
    ("RubyGems", &["rubygems-token"]),
    ("Typeform", &["typeform-token"]),
    ("Mailgun", &["mailgun-key"]),
    ("SendGrid", &["sendgrid-key"]),
    ("Brevo", &["sendinblue-key"]),
    ("Flutterwave", &["flutterwave-key"]),
    ("Lob", &["lob-key"]),
    ("Adafruit", &["adafruit-io-key"]),
    ("Apify", &["apify-token"]),
    ("Figma", &["figma-token"]),
    ("PostHog", &["posthog-personal-key"]),
    ("PubNub", &["pubnub-secret-key"]),
    ("Rootly", &["rootly-key"]),
    ("Tailscale", &["tailscale-key"]),
    ("Ubidots", &["ubidots-token"]),
    ("Zoho", &["zoho-token"]),
    ("OpenAI", &["openai-key"]),
    ("Anthropic", &["anthropic-key"]),
    ("base64-encoded PEM keys", &["private-key-base64"]),
    (
        "GCP service-account JSON in a single value",
        &["gcp-service-account-key"],
    ),
    ("Zapier hook URLs", &["zapier-webhook"]),
    (
        "Microsoft Teams outlook.office.com webhooks",
        &["teams-webhook-legacy"],
    ),
];

/// Families of the issue whose issuers publish no shape that identifies
/// itself (Microsoft calls Entra refresh tokens opaque; Codemagic's and
/// Alchemy's keys carry no prefix): found under the name they go by.
const NAME_ONLY_FAMILIES: &[(&str, &str, &str)] = &[
    (
        "Microsoft Entra refresh tokens",
        "AZURE_REFRESH_TOKEN",
        "0.AXoAq8ZtR2mVx7LkP4wN9cJ3bH6sTq7Vw2Xz9KpL4mN8bR3cYd5Fh",
    ),
    (
        "Codemagic API tokens",
        "CODEMAGIC_API_TOKEN",
        "q8ZtR2mVx7LkP4wN9cJ3bH6sTq7Vw2Xz9KpL4mN8bR3",
    ),
    (
        "Alchemy API keys",
        "ALCHEMY_API_KEY",
        "Xk3j9fLq0Pz8mW2nR5tY7uQ4vB6cD1eG",
    ),
];

#[test]
fn every_family_of_issue_29_is_found() {
    let tokens = corpus::one_token_per_rule(SEED);
    for (family, rules) in ISSUE_29_FAMILIES {
        for rule in *rules {
            assert!(
                tokens.iter().any(|(id, _)| id == rule),
                "{family}: no `{rule}` token is planted under a neutral name"
            );
        }
    }
    let found = servers_flagged(
        NAME_ONLY_FAMILIES
            .iter()
            .map(|(_, name, value)| (*name, *name, *value)),
    );
    for (family, name, _) in NAME_ONLY_FAMILIES {
        assert!(found.contains(*name), "{family}: not found under `{name}`");
    }
}

/// Runs the real `mcpenv scan --json` on one `.mcp.json` holding a server
/// per `(server, env name, value)` and gives the servers it flags.
fn servers_flagged<'a>(
    servers: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> std::collections::BTreeSet<String> {
    let env = crate::harness::TestEnv::new();
    let servers: serde_json::Map<String, Value> = servers
        .map(|(server, name, value)| {
            (
                server.to_string(),
                serde_json::json!({"command": "npx", "env": {name: value}}),
            )
        })
        .collect();
    env.write(
        "project/.mcp.json",
        &serde_json::to_string(&serde_json::json!({"mcpServers": servers})).unwrap(),
    );
    let report = env.run(&["scan", "--json", ".mcp.json"]).json();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["server"].as_str().unwrap().to_string())
        .collect()
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

/// The real binary, on every case of the corpus at once: every planted
/// secret is reported (masked), and none is ever printed whole, in text or
/// JSON.
#[test]
fn scan_never_prints_a_planted_secret() {
    let corpus = corpus::corpus(7);
    let env = crate::harness::TestEnv::new();
    let mut servers = serde_json::Map::new();
    for (index, case) in corpus.cases.iter().enumerate() {
        servers.insert(format!("server-{index}"), case.server.clone());
    }
    let file = serde_json::json!({ "mcpServers": servers }).to_string();
    env.write("scan/corpus.mcp.json", &file);
    let text = env.run_in(&env.root, &["scan", "scan"]);
    let json = env.run_in(&env.root, &["scan", "scan", "--json"]);
    assert_eq!((text.code, json.code), (1, 1), "{text}");
    let planted: Vec<&corpus::Planted> =
        corpus.cases.iter().flat_map(|case| &case.planted).collect();
    for secret in &planted {
        for out in [&text, &json] {
            assert!(
                !out.stdout.contains(&secret.secret) && !out.stderr.contains(&secret.secret),
                "{} ({}) printed whole",
                secret.rule,
                secret.field
            );
        }
    }
    let reported = json.json()["findings"].as_array().unwrap().len();
    assert!(
        reported >= planted.len(),
        "{reported} findings for {} planted secrets",
        planted.len()
    );
}

mod no_panics {
    use mcpenv::config::model::ServerEntry;
    use proptest::prelude::*;
    use serde_json::json;

    /// Strings that mix the bytes the scanners look for with multi-byte
    /// characters, so a slice at a wrong offset would panic.
    fn tricky() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9_:/@?&=%.${}\\-é€😀\\\\\"' \n\t#]{0,80}",
            "(Bearer |Basic |--api-key=|postgres://u:|https://x/?key=|ghp_|sk-|eyJ|-----BEGIN )[a-zA-Z0-9é€😀:@/=+.${}-]{0,60}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn scanning_never_panics(name in tricky(), value in tricky(), arg in tricky(), url in tricky(), header in tricky()) {
            let stdio = ServerEntry::from_value(json!({"command": value, "args": ["--token", arg, value], "env": {name.clone(): value}}));
            let remote = ServerEntry::from_value(json!({"type": "http", "url": url, "headers": {name: header, "Authorization": arg}}));
            for entry in [stdio, remote] {
                for finding in mcpenv::secrets::scan_entry(&entry) {
                    // Every span lies on character boundaries of its string.
                    prop_assert!(finding.span.start <= finding.span.end);
                }
            }
        }

        #[test]
        fn placeholders_and_dotenv_never_panic(text in tricky()) {
            let _ = mcpenv::config::expansion::references(&text);
            let _ = mcpenv::config::expansion::unsupported_forms(&text);
            let _ = mcpenv::config::expansion::expand(&text, |_| Some("v".to_string()));
            let parsed = mcpenv::envfiles::dotenv::DotEnv::parse(std::path::Path::new(".env"), text.clone());
            prop_assert!(parsed.problems.iter().all(|problem| problem.line >= 1));
            let _ = mcpenv::envfiles::dotenv::with_values(&text, &[("NAME".to_string(), text.clone())]);
            let line = mcpenv::envfiles::dotenv::ExampleLine {
                name: "NAME".to_string(),
                comment: "used by: x".to_string(),
                value: String::new(),
            };
            let _ = mcpenv::envfiles::dotenv::example_with(&text, &[line]);
            let _ = mcpenv::envfiles::dotenv::gitignore_with_dotenv(Some(&text));
        }
    }
}
