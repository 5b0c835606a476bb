//! The display rule for secrets, tried from outside: unique secret values
//! planted everywhere a configuration can hold one, then every byte of
//! every command's stdout and stderr (text and `--json`, success and error
//! paths, servers that echo what they were given) searched for each value
//! and for its base64 and percent-encoded forms.

use base64::Engine as _;
use serde_json::json;

use crate::harness::{CommandOutput, TestEnv};
use crate::probe::{fake_bin, remote_server};

/// Planted values: each a valid format with a random part, so `scan`
/// flags every one; none appears anywhere else in the world.
const GITHUB_IN_ARG: &str = "ghp_R8s2Kq9ZpX4mW7vT1nB6yH3cJ5dL0fG8aE2u";
const STRIPE_IN_FLAG: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const SLACK_AFTER_FLAG: &str = "xoxb-293847561029-8374651920384-Zq7RkT2mVx9LpW4nB8cY3dHs";
const DB_PASSWORD: &str = "Qw7rT2pLx9Zk4mNb";
const GITHUB_IN_COMMAND: &str = "ghp_M3k9Lq2Wx7Rt5Yp8Zn4Bv6Cj1Hd0Gf2Sa9Ke";
const GITHUB_DEFAULT: &str = "ghp_T6y1Uo9Pa3Sd7Fg2Hj5Kl8Zx4Cv0Bn6Mq1We";
const GITHUB_NEUTRAL_ENV: &str = "ghp_Ew5Rt8Yu2Io6Pa9Sd3Fg7Hj1Kl4Zx0Cv8Bn";
const QUERY_KEY: &str = "Vb7Nm2Qw9Er4Ty6Ui1Op3As";
const BEARER: &str = "sk_live_9xKd2Lm7Qp4Rt8Wz1Yc6Vb3N";
const HEADER_DEFAULT: &str = "sk_live_7Hq2Wm9Xz4Lp8Rt1Kv6Bn3Y";
const SSE_PASSWORD: &str = "Pz8Kx3Mq7Wv2Ln5Rt9Yb";
const USER_TOKEN: &str = "npm_Kx8Lq2Wz7Mv3Rt9Yp5Bn1Cj6Hd4Gf0Sa2Ke7";
const DOTENV_VALUE: &str = "ghp_Lk3Jh7Gf1Ds5Aq9Wz2Xc6Vb0Nm4Pq8Rt3Yu";
const DOTENV_LOCAL_VALUE: &str = "glpat-Xz7Kq2Lm9Wv4Rt8Yp3Bn";

const ALL: [&str; 14] = [
    GITHUB_IN_ARG,
    STRIPE_IN_FLAG,
    SLACK_AFTER_FLAG,
    DB_PASSWORD,
    GITHUB_IN_COMMAND,
    GITHUB_DEFAULT,
    GITHUB_NEUTRAL_ENV,
    QUERY_KEY,
    BEARER,
    HEADER_DEFAULT,
    SSE_PASSWORD,
    USER_TOKEN,
    DOTENV_VALUE,
    DOTENV_LOCAL_VALUE,
];

/// Every form in which a planted value must never be printed.
fn forbidden(secret: &str) -> Vec<String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut forms = vec![
        secret.to_string(),
        engine.encode(secret),
        percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
            .to_string(),
    ];
    forms.dedup();
    forms
}

#[track_caller]
fn assert_clean(what: &str, out: &CommandOutput, secrets: &[&str]) {
    for secret in secrets {
        for form in forbidden(secret) {
            assert!(
                !out.stdout.contains(&form) && !out.stderr.contains(&form),
                "`{what}` printed the secret `{secret}` (as `{form}`):\n{out}"
            );
        }
    }
}

/// A project whose every scope holds the planted values, with the project
/// servers approved.
fn planted() -> TestEnv {
    let env = TestEnv::new();
    let key = env.key();
    let local = json!({
        "type": "stdio",
        "command": format!("/opt/{GITHUB_IN_COMMAND}/bin/server"),
        "args": [
            format!("--api-key={STRIPE_IN_FLAG}"),
            "--token", SLACK_AFTER_FLAG,
            GITHUB_IN_ARG,
            format!("postgresql://app:{DB_PASSWORD}@db.internal:5432/prod"),
        ],
        "env": {
            "API_TOKEN": format!("${{API_TOKEN:-{GITHUB_DEFAULT}}}"),
            "T1": GITHUB_NEUTRAL_ENV,
        }
    });
    let user = json!({
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "some-server", "--token", USER_TOKEN],
        "env": {}
    });
    env.write(
        "home/.claude.json",
        &json!({
            "mcpServers": {"everywhere": user},
            "projects": {key: {"mcpServers": {"db": local}}}
        })
        .to_string(),
    );
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "api": {
                "type": "http",
                "url": format!("https://mcp.example.com/mcp?api_key={QUERY_KEY}"),
                "headers": {
                    "Authorization": format!("Bearer {BEARER}"),
                    "X-API-Key": format!("${{SERVICE_KEY:-{HEADER_DEFAULT}}}"),
                }
            },
            "stream": {
                "type": "sse",
                "url": format!("https://bob:{SSE_PASSWORD}@stream.example.com/sse"),
            },
            "needs": {
                "type": "stdio",
                "command": "definitely-not-installed-xyz",
                "args": [],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}", "LOCAL_TOKEN": "${LOCAL_TOKEN}"}
            }
        }})
        .to_string(),
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["api", "stream", "needs"]}).to_string(),
    );
    env.trust_project();
    env.write(
        "project/.env",
        &format!("GITHUB_PERSONAL_ACCESS_TOKEN={DOTENV_VALUE}\nBROKEN=\"{DOTENV_VALUE}\n"),
    );
    env.write(
        "project/.env.local",
        &format!("LOCAL_TOKEN={DOTENV_LOCAL_VALUE}\n"),
    );
    env
}

#[test]
fn the_planting_is_found_by_scan() {
    let env = planted();
    let out = env.run(&["scan", "--json"]).expect_code(1);
    let findings = out.json()["findings"].as_array().unwrap().len();
    // Every config-held value (the two `.env` ones are not config) is a
    // finding, so the no-leak test below plants real positives. Placeholder
    // defaults are learned for masking even where `scan` does not list them.
    assert!(findings >= 9, "scan found only {findings}:\n{out}");
    assert_clean("scan --json", &out, &ALL);
}

#[test]
fn no_command_prints_a_planted_secret() {
    let env = planted();
    let runs: &[&[&str]] = &[
        &["list"],
        &["list", "--json"],
        &["list", "-s", "local"],
        &["get", "db"],
        &["get", "db", "--json"],
        &["get", "api"],
        &["get", "api", "--json"],
        &["get", "stream"],
        &["get", "everywhere", "--json"],
        &["get", "nope"],
        &["get", "nope", "--json"],
        &["check"],
        &["check", "--json"],
        &["scan"],
        &["scan", "--json"],
        &["scan", "."],
        &["extract", "--all", "--dry-run"],
        &["extract", "--all", "--dry-run", "--json"],
        &["export", "--to", "cursor", "--check"],
        &["templates", "list"],
        &["remove", "nope"],
        &["share", "nope"],
        &["onboard", "--from-env"],
        &["onboard", "--json"],
        &["probe", "db", "needs", "--timeout", "2"],
        &["probe", "--json", "db", "--timeout", "2"],
        // Mistyped arguments quoting a value in their usage error.
        &[
            "add",
            "x",
            "-e",
            &format!("GITHUB_TOKEN:{GITHUB_IN_ARG}"),
            "--",
            "npx",
            "y",
        ],
        &["add", "x", "-e", GITHUB_IN_ARG, "--", "npx", "y"],
        &[
            "add",
            "x",
            "-t",
            "http",
            "-H",
            &format!("Authorization Bearer {BEARER}"),
            "https://x.test/mcp",
        ],
        &["add", "x", "--bogus", BEARER],
        &[
            "add",
            "db",
            "--",
            "npx",
            &format!("--api-key={STRIPE_IN_FLAG}"),
        ],
    ];
    for args in runs {
        let out = env.run(args);
        assert_clean(&args.join(" "), &out, &ALL);
    }
}

#[test]
fn list_and_get_mask_structurally() {
    let env = planted();
    let list = env.run(&["list", "-s", "local"]).expect_code(0);
    assert!(
        list.stdout.contains("--api-key=sk_l…p7dc")
            && list.stdout.contains("app:****@db.internal:5432/prod"),
        "{list}"
    );
    let get = env.run(&["get", "db", "--json"]).expect_code(0);
    let entry = &get.json()["entry"];
    assert_eq!(
        entry["env"]["API_TOKEN"],
        "${API_TOKEN:-ghp_…aE2u}".replace("aE2u", &GITHUB_DEFAULT[GITHUB_DEFAULT.len() - 4..])
    );
    // `--reveal` is the one way to see them.
    let revealed = env.run(&["get", "db", "--reveal", "--json"]).expect_code(0);
    assert!(revealed.stdout.contains(STRIPE_IN_FLAG), "{revealed}");
}

#[test]
fn a_server_echoing_what_it_was_given_has_it_masked() {
    let env = TestEnv::new();
    // A neutral env name, a secret under an unknown flag, a secret-named
    // variable: the server prints all of them back on stderr.
    let unknown_flag_value = "Zx8kQ2mN7pL4vR9tYw3B";
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"echo": {
            "command": fake_bin(),
            "args": ["echo-crash", format!("--k={unknown_flag_value}"), GITHUB_IN_ARG],
            "env": {"T1": GITHUB_NEUTRAL_ENV, "SERVICE_PASSWORD": DB_PASSWORD}
        }}})
        .to_string(),
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["echo"]}).to_string(),
    );
    env.trust_project();
    for args in [&["probe", "echo"][..], &["probe", "--json", "echo"]] {
        let out = env.run(args).expect_code(1);
        assert!(
            out.stdout.contains("bad option") || out.stderr.contains("bad option"),
            "{out}"
        );
        assert_clean(
            &args.join(" "),
            &out,
            &[
                GITHUB_IN_ARG,
                GITHUB_NEUTRAL_ENV,
                DB_PASSWORD,
                unknown_flag_value,
            ],
        );
    }
}

#[test]
fn a_remote_server_echoing_headers_and_basic_credentials_has_them_masked() {
    let scratch = tempfile::tempdir().unwrap();
    let (_server, url) = remote_server(scratch.path(), "http-echo", "");
    let with_userinfo = url.replacen("http://", &format!("http://bob:{SSE_PASSWORD}@"), 1);
    let env = TestEnv::new();
    env.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "headers": {"type": "http", "url": format!("{url}?api_key={QUERY_KEY}"), "headers": {"Authorization": format!("Bearer {BEARER}"), "X-Neutral": unknown()}},
            "basic": {"type": "http", "url": with_userinfo},
        }})
        .to_string(),
    );
    env.write(
        "project/.claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["headers", "basic"]}).to_string(),
    );
    env.trust_project();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("bob:{SSE_PASSWORD}"));
    for args in [
        &["probe", "--timeout", "5"][..],
        &["probe", "--json", "--timeout", "5"],
    ] {
        let out = env.run(args).expect_code(1);
        assert!(
            out.stdout.contains("bad request") || out.stderr.contains("bad request"),
            "the echo server was not reached:\n{out}"
        );
        assert_clean(
            &args.join(" "),
            &out,
            &[BEARER, QUERY_KEY, SSE_PASSWORD, &basic, unknown()],
        );
    }
}

fn unknown() -> &'static str {
    "Hq3Zm8Kx2Wv7Lp4Rt9Yb"
}
