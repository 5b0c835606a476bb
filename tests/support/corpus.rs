//! Deterministic generator of synthetic MCP server entries with planted
//! secrets, decoys and clean servers.
//!
//! Every secret is made up here from a fixed-seed PRNG (splitmix64); none is
//! real. Shared by the accuracy test (`tests/cli/secrets_corpus.rs`), which
//! checks every planted secret is found and no decoy is, and by throughput
//! benchmarks, which scan [`config_files`].

// Each includer (test, benchmark) uses a different part.
#![allow(dead_code)]

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Map, Value, json};

/// Generated server entries, each with the secrets planted in it.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Planted cases first, then decoy cases.
    pub cases: Vec<Case>,
}

/// One server entry and what a scanner must find in it.
#[derive(Debug, Clone)]
pub struct Case {
    /// One server entry (the value under its name in `mcpServers`).
    pub server: Value,
    /// Secrets planted in it; empty for decoy cases, where nothing may be found.
    pub planted: Vec<Planted>,
}

/// One planted secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    /// Where it is, as `Field` displays it: `env.GITHUB_TOKEN`, `args[3]`,
    /// `url.password`, `url.query.api_key`, `headers.Authorization`.
    pub field: String,
    /// The rule expected to report it.
    pub rule: &'static str,
    /// The exact text a finding must carry.
    pub secret: String,
    /// How it was placed (`env value`, `--flag V`, …), for reporting.
    pub placement: &'static str,
}

/// Every token-format rule id the generator can make a token for: with
/// [`LATER_TOKEN_RULES`], all of `mcpenv::secrets::rules()` except the five
/// context rules.
pub const TOKEN_RULES: &[&str] = &[
    "github-pat",
    "github-oauth-app-refresh",
    "github-fine-grained-pat",
    "gitlab-pat",
    "openai-key",
    "anthropic-key",
    "openrouter-key",
    "slack-token",
    "slack-app-token",
    "slack-webhook",
    "aws-access-key-id",
    "google-api-key",
    "stripe-key",
    "sentry-user-token",
    "sentry-org-token",
    "linear-api-key",
    "notion-token",
    "notion-legacy-secret",
    "perplexity-key",
    "huggingface-token",
    "npm-token",
    "supabase-pat",
    "supabase-secret-key",
    "groq-key",
    "xai-key",
    "langsmith-key",
    "pinecone-key",
    "brave-key-lowconf",
    "jwt",
    "private-key-block",
    "sendgrid-key",
    "twilio-key",
    "digitalocean-token",
    "databricks-token",
    "atlassian-token",
    "heroku-key",
    "grafana-service-account-token",
    "vault-token",
    "pypi-token",
    "doppler-token",
    "postman-key",
    "shopify-token",
    "vercel-token",
    "gitlab-token",
    "gitlab-incoming-mail-token",
    "gitlab-oauth-app-secret",
    "gitlab-trigger-token",
    "gitlab-job-token",
    "gitlab-agent-token",
    "gitlab-runner-registration-token",
    "gitlab-session-cookie",
    "bitbucket-token",
    "buildkite-token",
    "circleci-token",
    "sourcegraph-token",
    "harness-token",
    "docker-hub-token",
    "rubygems-token",
    "clojars-token",
    "artifactory-api-key",
    "artifactory-reference-token",
    "octopus-deploy-key",
    "pulumi-token",
    "terraform-cloud-token",
    "infracost-token",
    "prefect-token",
    "scalingo-token",
    "settlemint-token",
    "readme-token",
    "openshift-token",
    "replicate-token",
    "tavily-key",
    "firecrawl-key",
    "aws-bedrock-api-key",
    "aws-bedrock-short-term-key",
    "google-oauth-client-secret",
    "google-oauth-access-token",
    "azure-ad-client-secret",
    "alibaba-access-key-id",
    "cloudflare-origin-ca-key",
    "cloudflare-token",
    "flyio-token",
    "vault-legacy-token",
    "onepassword-secret-key",
    "onepassword-service-account-token",
    "age-secret-key",
    "clickhouse-cloud-secret",
    "planetscale-token",
    "neon-api-key",
    "netlify-token",
    "render-api-key",
    "dynatrace-token",
    "grafana-cloud-token",
    "grafana-api-key",
    "new-relic-key",
    "new-relic-license-key",
    "new-relic-mobile-token",
    "maxmind-license-key",
    "intra42-client-secret",
    "authress-key",
    "adobe-client-secret",
    "frameio-token",
    "slack-workspace-token",
    "slack-legacy-token",
    "slack-config-token",
    "discord-webhook",
    "teams-webhook",
    "zapier-webhook",
    "tines-webhook",
    "make-webhook",
    "ifttt-webhook",
    "telegram-bot-token",
    "sendinblue-key",
    "mailgun-key",
    "mailchimp-key",
    "resend-key",
    "easypost-key",
    "shippo-token",
    "stripe-webhook-secret",
    "square-token",
    "flutterwave-key",
    "duffel-token",
    "razorpay-key",
    "facebook-access-token",
    "airtable-token",
    "hubspot-token",
    "figma-token",
    "contentful-token",
    "typeform-token",
    "mapbox-secret-token",
    "asana-token",
    "jwt-base64",
];

const GENERIC: &str = "generic-secret";
const AWS_SECRET: &str = "aws-secret-access-key";
const USERINFO: &str = "url-userinfo-password";
const QUERY: &str = "query-param-secret";
const AUTH: &str = "auth-header";
const API_KEY_HEADER: &str = "api-key-header";
const CLI_FLAG: &str = "cli-flag-secret";

/// Builds the accuracy corpus: planted cases (every token rule in every
/// placement that suits it, plus name-, flag-, header- and URL-gated
/// secrets), then decoy cases (every trap of `reference/secrets.md` §3–§4).
pub fn corpus(seed: u64) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut cases = Vec::new();
    for rule in TOKEN_RULES {
        for &place in token_places(rule) {
            let secret = token(&mut rng, rule);
            cases.push(plant(&mut rng, place, rule, secret));
        }
    }
    for round in 0..6 {
        for &place in CONTEXT_PLACES {
            let secret = random_secret(&mut rng, round, place);
            let rule = context_rule(place);
            cases.push(plant(&mut rng, place, rule, secret));
        }
    }
    for _ in 0..12 {
        let secret = aws_secret(&mut rng);
        let place = if rng.chance(25) {
            Place::DockerEnv
        } else {
            Place::Env
        };
        cases.push(plant(&mut rng, place, AWS_SECRET, secret));
    }
    for index in 0..DECOYS.len() * 4 {
        let make = DECOYS[index % DECOYS.len()];
        cases.push(Case {
            server: make(&mut rng),
            planted: Vec::new(),
        });
    }
    // Added after the rest, so every case above stays the one it was.
    for rule in LATER_TOKEN_RULES {
        for &place in token_places(rule) {
            let secret = token(&mut rng, rule);
            cases.push(plant(&mut rng, place, rule, secret));
        }
    }
    for name in ["GOOGLE_SERVICE_ACCOUNT_JSON", "GCP_SA_KEY", "CONFIG"] {
        cases.push(service_account_file(&mut rng, name));
    }
    // Atlassian's tokens vary in length, Atlassian says: shorter ones too,
    // planted last so every case above stays the one it was.
    for &place in token_places("atlassian-token") {
        let prefix = rng.pick(&["ATATT3", "ATCTT3"]);
        let len = rng.range(20, 180);
        let secret = format!("{prefix}{}", rng.chars(URLSAFE, len));
        cases.push(plant(&mut rng, place, "atlassian-token", secret));
    }
    Corpus { cases }
}

/// One synthetic token of every token rule, by rule: what a value of that
/// format alone (under a neutral name) must be found as.
pub fn one_token_per_rule(seed: u64) -> Vec<(&'static str, String)> {
    let mut rng = Rng::new(seed);
    let mut tokens: Vec<(&'static str, String)> = TOKEN_RULES
        .iter()
        .chain(LATER_TOKEN_RULES)
        .map(|&rule| (rule, token(&mut rng, rule)))
        .collect();
    // A key file is a value of its own format too.
    tokens.push(("gcp-service-account-key", service_account_json(&mut rng).0));
    tokens
}

/// Token rules added once the corpus above was settled (the formats
/// measured against Nosey Parker's examples), planted last.
const LATER_TOKEN_RULES: &[&str] = &[
    "mapbox-temporary-token",
    "teams-webhook-legacy",
    "adafruit-io-key",
    "aws-appsync-key",
    "crates-io-token",
    "dependency-track-key",
    "dropbox-short-lived-token",
    "github-refresh-token",
    "jina-key",
    "new-relic-pixie-key",
    "nuget-key",
    "stackhawk-key",
    "twitch-stream-key",
    "password-hash",
    "private-key-base64",
    "segment-public-api-token",
    "ionic-token",
    "django-insecure-key",
    "launchdarkly-key",
    "lob-key",
    "apify-token",
    "posthog-personal-key",
    "pubnub-secret-key",
    "rootly-key",
    "tailscale-key",
    "ubidots-token",
    "zoho-token",
    "sonarqube-token",
    "salesforce-session-id",
    "amazon-mws-token",
    "teamcity-token",
    "github-app-installation-token",
    "azure-devops-pat",
    "mongodb-atlas-service-account-secret",
    "pagarme-api-key",
    "nvidia-api-key",
    "saladcloud-api-key",
    "besttime-private-key",
];

/// `count` files `{"mcpServers": {…}}` of about 10 KB each (24 servers:
/// about a third with a planted secret, a quarter with decoys, the rest
/// clean), pretty-printed like Claude Code writes them.
pub fn config_files(count: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed ^ 0x5eed_f11e);
    (0..count)
        .map(|_| {
            let mut servers = Map::new();
            for index in 0..24 {
                let server = match rng.below(100) {
                    0..35 => {
                        if rng.chance(55) {
                            let rule = *rng.pick(TOKEN_RULES);
                            let place = *rng.pick(token_places(rule));
                            let secret = token(&mut rng, rule);
                            plant(&mut rng, place, rule, secret).server
                        } else {
                            let place = *rng.pick(CONTEXT_PLACES);
                            let round = rng.below(3);
                            let secret = random_secret(&mut rng, round, place);
                            plant(&mut rng, place, context_rule(place), secret).server
                        }
                    }
                    35..60 => {
                        let make = *rng.pick(DECOYS);
                        make(&mut rng)
                    }
                    _ => clean(&mut rng),
                };
                let name = server_name(&mut rng, &server, index);
                servers.insert(name, server);
            }
            // Serialising a `Value` cannot fail.
            serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap()
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Randomness

/// splitmix64: tiny, fast, and the same on every platform.
struct Rng(u64);

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const WORDISH: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &[u8] = b"0123456789abcdef";
const DIGITS: &[u8] = b"0123456789";
const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const LOWER_DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const PASSWORD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!*-_~+=.";

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chars(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }

    fn uuid(&mut self) -> String {
        format!(
            "{}-{}-4{}-{}{}-{}",
            self.chars(HEX, 8),
            self.chars(HEX, 4),
            self.chars(HEX, 3),
            self.pick(&["8", "9", "a", "b"]),
            self.chars(HEX, 3),
            self.chars(HEX, 12)
        )
    }
}

// ---------------------------------------------------------------------------
// Secrets

/// A synthetic token of the rule's shape.
fn token(rng: &mut Rng, rule: &str) -> String {
    match rule {
        "github-pat" => format!("ghp_{}", rng.chars(ALNUM, 36)),
        "github-oauth-app-refresh" => {
            let kind = rng.pick(&["o", "u", "s", "r"]);
            format!("gh{kind}_{}", rng.chars(ALNUM, 36))
        }
        "github-fine-grained-pat" => {
            format!(
                "github_pat_{}_{}",
                rng.chars(ALNUM, 22),
                rng.chars(ALNUM, 59)
            )
        }
        "gitlab-pat" => format!("glpat-{}", rng.chars(URLSAFE, 20)),
        "openai-key" => {
            let kind = rng.pick(&["proj-", "svcacct-", "admin-", ""]);
            format!(
                "sk-{kind}{}T3BlbkFJ{}",
                rng.chars(URLSAFE, 64),
                rng.chars(URLSAFE, 64)
            )
        }
        "anthropic-key" => {
            let kind = rng.pick(&["api03", "admin01"]);
            format!("sk-ant-{kind}-{}AA", rng.chars(URLSAFE, 93))
        }
        "openrouter-key" => format!("sk-or-v1-{}", rng.chars(HEX, 64)),
        "slack-token" => {
            let kind = rng.pick(&["b", "p", "a", "r", "s", "e"]);
            format!(
                "xox{kind}-{}-{}-{}",
                rng.chars(DIGITS, 11),
                rng.chars(DIGITS, 13),
                rng.chars(ALNUM, 24)
            )
        }
        "slack-app-token" => format!(
            "xapp-1-A{}-{}-{}",
            rng.chars(UPPER_DIGITS, 10),
            rng.chars(DIGITS, 13),
            rng.chars(HEX, 64)
        ),
        "slack-webhook" => format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            rng.chars(UPPER_DIGITS, 9),
            rng.chars(UPPER_DIGITS, 10),
            rng.chars(ALNUM, 24)
        ),
        "aws-access-key-id" => {
            let prefix = rng.pick(&["AKIA", "ASIA"]);
            format!("{prefix}{}", rng.chars(BASE32, 16))
        }
        "google-api-key" => format!("AIza{}", rng.chars(URLSAFE, 35)),
        "stripe-key" => {
            let kind = rng.pick(&["sk", "rk"]);
            let mode = rng.pick(&["live", "test"]);
            let len = *rng.pick(&[24, 99]);
            format!("{kind}_{mode}_{}", rng.chars(ALNUM, len))
        }
        "sentry-user-token" => format!("sntryu_{}", rng.chars(HEX, 64)),
        "sentry-org-token" => format!("sntrys_eyJpYXQiO{}", rng.chars(BASE64, 120)),
        "linear-api-key" => format!("lin_api_{}", rng.chars(ALNUM, 40)),
        "notion-token" => format!("ntn_{}{}", rng.chars(DIGITS, 11), rng.chars(ALNUM, 35)),
        "notion-legacy-secret" => format!("secret_{}", rng.chars(ALNUM, 43)),
        "perplexity-key" => format!("pplx-{}", rng.chars(ALNUM, 48)),
        "huggingface-token" => format!("hf_{}", rng.chars(ALNUM, 34)),
        "npm-token" => format!("npm_{}", rng.chars(ALNUM, 36)),
        "supabase-pat" => format!("sbp_{}", rng.chars(HEX, 40)),
        "supabase-secret-key" => format!("sb_secret_{}", rng.chars(URLSAFE, 31)),
        "groq-key" => format!("gsk_{}", rng.chars(ALNUM, 52)),
        "xai-key" => format!("xai-{}", rng.chars(WORDISH, 80)),
        "langsmith-key" => {
            let kind = rng.pick(&["pt", "sk"]);
            format!("lsv2_{kind}_{}_{}", rng.chars(HEX, 32), rng.chars(HEX, 10))
        }
        "pinecone-key" => {
            let len = rng.range(5, 6);
            format!("pcsk_{}_{}", rng.chars(ALNUM, len), rng.chars(ALNUM, 63))
        }
        "brave-key-lowconf" => format!(
            "BSA{}{}{}{}",
            rng.chars(LOWER, 1),
            rng.chars(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1),
            rng.chars(DIGITS, 1),
            rng.chars(ALNUM, 24)
        ),
        "jwt" => jwt(rng, "service_role"),
        "private-key-block" => private_key(rng),
        "sendgrid-key" => format!("SG.{}.{}", rng.chars(URLSAFE, 22), rng.chars(URLSAFE, 43)),
        "twilio-key" => format!("SK{}", rng.chars(HEX, 32)),
        "digitalocean-token" => format!("dop_v1_{}", rng.chars(HEX, 64)),
        "databricks-token" => format!("dapi{}", rng.chars(HEX, 32)),
        "atlassian-token" => format!("ATATT3x{}", rng.chars(URLSAFE, 185)),
        "heroku-key" => format!("HRKU-AA{}", rng.chars(URLSAFE, 58)),
        "grafana-service-account-token" => {
            format!("glsa_{}_{}", rng.chars(ALNUM, 32), rng.chars(HEX, 8))
        }
        "vault-token" => format!("hvs.{}", rng.chars(URLSAFE, 95)),
        "pypi-token" => format!("pypi-AgEIcHlwaS5vcmc{}", rng.chars(URLSAFE, 70)),
        "doppler-token" => format!("dp.pt.{}", rng.chars(ALNUM, 43)),
        "postman-key" => format!("PMAK-{}-{}", rng.chars(HEX, 24), rng.chars(HEX, 34)),
        "shopify-token" => format!("shpat_{}", rng.chars(HEX, 32)),
        "gitlab-token" => {
            let kind = rng.pick(&["gldt", "glrt", "glsoat", "glffct", "glft"]);
            format!("{kind}-{}", rng.chars(URLSAFE, 20))
        }
        "gitlab-incoming-mail-token" => format!("glimt-{}", rng.chars(URLSAFE, 25)),
        "gitlab-oauth-app-secret" => format!("gloas-{}", rng.chars(URLSAFE, 64)),
        "gitlab-trigger-token" => format!("glptt-{}", rng.chars(HEX, 40)),
        "gitlab-job-token" => format!("glcbt-{}_{}", rng.chars(ALNUM, 2), rng.chars(URLSAFE, 20)),
        "gitlab-agent-token" => format!("glagent-{}", rng.chars(URLSAFE, 50)),
        "gitlab-runner-registration-token" => format!("GR1348941{}", rng.chars(URLSAFE, 20)),
        "gitlab-session-cookie" => format!("_gitlab_session={}", rng.chars(LOWER_DIGITS, 32)),
        "bitbucket-token" => format!("ATBB{}", rng.chars(ALNUM, 32)),
        "buildkite-token" => format!("bkua_{}", rng.chars(LOWER_DIGITS, 40)),
        "circleci-token" => format!("CCIPAT_{}_{}", rng.chars(ALNUM, 22), rng.chars(HEX, 40)),
        "sourcegraph-token" => format!("sgp_{}_{}", rng.chars(HEX, 16), rng.chars(HEX, 40)),
        "harness-token" => format!(
            "pat.{}.{}.{}",
            rng.chars(URLSAFE, 22),
            rng.chars(ALNUM, 24),
            rng.chars(ALNUM, 20)
        ),
        "docker-hub-token" => format!("dckr_pat_{}", rng.chars(URLSAFE, 27)),
        "rubygems-token" => format!("rubygems_{}", rng.chars(HEX, 48)),
        "clojars-token" => format!("CLOJARS_{}", rng.chars(LOWER_DIGITS, 60)),
        "artifactory-api-key" => format!("AKCp{}", rng.chars(ALNUM, 69)),
        "artifactory-reference-token" => format!("cmVmd{}", rng.chars(ALNUM, 59)),
        "octopus-deploy-key" => format!(
            "API-{}{}",
            rng.chars(DIGITS, 2),
            rng.chars(UPPER_DIGITS, 24)
        ),
        "pulumi-token" => format!("pul-{}", rng.chars(HEX, 40)),
        "terraform-cloud-token" => format!(
            "{}.atlasv1.{}",
            rng.chars(ALNUM, 14),
            rng.chars(URLSAFE, 67)
        ),
        "infracost-token" => format!("ico-{}", rng.chars(ALNUM, 32)),
        "prefect-token" => format!("pnu_{}", rng.chars(ALNUM, 36)),
        "scalingo-token" => format!("tk-us-{}", rng.chars(URLSAFE, 48)),
        "settlemint-token" => {
            let kind = rng.pick(&["aat", "pat", "sat"]);
            format!("sm_{kind}_{}", rng.chars(ALNUM, 16))
        }
        "readme-token" => format!("rdme_{}", rng.chars(LOWER_DIGITS, 70)),
        "openshift-token" => format!("sha256~{}", rng.chars(URLSAFE, 43)),
        "replicate-token" => format!("r8_{}", rng.chars(ALNUM, 37)),
        "tavily-key" => format!("tvly-dev-{}", rng.chars(ALNUM, 32)),
        "firecrawl-key" => format!("fc-{}", rng.chars(HEX, 32)),
        "aws-bedrock-api-key" => format!("ABSKQmVkcm9ja0FQSUtleS{}", rng.chars(BASE64, 110)),
        "aws-bedrock-short-term-key" => format!(
            "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{}",
            rng.chars(BASE64, 120)
        ),
        "google-oauth-client-secret" => format!("GOCSPX-{}", rng.chars(URLSAFE, 28)),
        "google-oauth-access-token" => format!("ya29.a0{}", rng.chars(URLSAFE, 120)),
        "azure-ad-client-secret" => format!(
            "{}{}Q~{}",
            rng.chars(ALNUM, 3),
            rng.chars(DIGITS, 1),
            rng.chars(ALNUM, 34)
        ),
        "alibaba-access-key-id" => format!("LTAI{}", rng.chars(ALNUM, 20)),
        "cloudflare-origin-ca-key" => {
            format!("v1.0-{}-{}", rng.chars(HEX, 24), rng.chars(HEX, 146))
        }
        "cloudflare-token" => {
            let kind = rng.pick(&["cfut", "cfat", "cfk"]);
            format!("{kind}_{}{}", rng.chars(ALNUM, 40), rng.chars(HEX, 8))
        }
        "vercel-token" => {
            let kind = rng.pick(&["vcp", "vci", "vca", "vcr", "vck"]);
            format!("{kind}_{}", rng.chars(ALNUM, 40))
        }
        "flyio-token" => format!("fo1_{}", rng.chars(URLSAFE, 43)),
        "vault-legacy-token" => format!(
            "s.{}{}{}{}",
            rng.chars(LOWER, 1),
            rng.chars(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1),
            rng.chars(DIGITS, 1),
            rng.chars(ALNUM, 21)
        ),
        "onepassword-secret-key" => format!(
            "A3-{}-{}-{}-{}-{}",
            rng.chars(UPPER_DIGITS, 6),
            rng.chars(UPPER_DIGITS, 11),
            rng.chars(UPPER_DIGITS, 5),
            rng.chars(UPPER_DIGITS, 5),
            rng.chars(UPPER_DIGITS, 5)
        ),
        "onepassword-service-account-token" => format!("ops_eyJ{}", rng.chars(BASE64, 300)),
        "age-secret-key" => format!(
            "AGE-SECRET-KEY-1{}",
            rng.chars(b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
        ),
        "clickhouse-cloud-secret" => format!("4b1d{}", rng.chars(ALNUM, 38)),
        "planetscale-token" => {
            let kind = rng.pick(&["tkn", "oauth", "pw"]);
            format!("pscale_{kind}_{}", rng.chars(URLSAFE, 43))
        }
        "neon-api-key" => format!("napi_{}", rng.chars(LOWER_DIGITS, 64)),
        "netlify-token" => format!("nfp_{}", rng.chars(ALNUM, 36)),
        "render-api-key" => format!("rnd_{}", rng.chars(ALNUM, 32)),
        "dynatrace-token" => format!(
            "dt0c01.{}.{}",
            rng.chars(UPPER_DIGITS, 24),
            rng.chars(UPPER_DIGITS, 64)
        ),
        "grafana-cloud-token" => format!("glc_{}", rng.chars(BASE64, 120)),
        "grafana-api-key" => format!("eyJrIjoi{}", rng.chars(ALNUM, 80)),
        "new-relic-key" => format!("NRAK-{}", rng.chars(UPPER_DIGITS, 27)),
        "new-relic-license-key" => format!("{}NRAL", rng.chars(HEX, 36)),
        "new-relic-mobile-token" => format!("AA{}-NRMA", rng.chars(HEX, 40)),
        "maxmind-license-key" => format!("{}_{}_mmk", rng.chars(ALNUM, 6), rng.chars(ALNUM, 29)),
        "intra42-client-secret" => format!("s-s4t2ud-{}", rng.chars(HEX, 64)),
        "authress-key" => format!(
            "sc_{}.{}.acc_{}.{}",
            rng.chars(ALNUM, 12),
            rng.chars(ALNUM, 5),
            rng.chars(LOWER_DIGITS, 20),
            rng.chars(URLSAFE, 60)
        ),
        "adobe-client-secret" => format!("p8e-{}", rng.chars(ALNUM, 32)),
        "frameio-token" => format!("fio-u-{}", rng.chars(URLSAFE, 64)),
        "slack-workspace-token" => format!("xoxr-{}", rng.chars(ALNUM, 40)),
        "slack-legacy-token" => format!(
            "xoxo-{}-{}-{}-{}",
            rng.chars(DIGITS, 10),
            rng.chars(DIGITS, 10),
            rng.chars(DIGITS, 12),
            rng.chars(HEX, 32)
        ),
        "slack-config-token" => format!("xoxe.xoxp-1-{}", rng.chars(UPPER_DIGITS, 164)),
        "discord-webhook" => format!(
            "https://discord.com/api/webhooks/{}/{}",
            rng.chars(DIGITS, 19),
            rng.chars(URLSAFE, 68)
        ),
        "teams-webhook" => format!(
            "https://contoso.webhook.office.com/webhookb2/{}@{}/IncomingWebhook/{}/{}",
            rng.uuid(),
            rng.uuid(),
            rng.chars(HEX, 32),
            rng.uuid()
        ),
        "teams-webhook-legacy" => format!(
            "https://outlook.office.com/webhook/{}@{}/IncomingWebhook/{}/{}",
            rng.uuid(),
            rng.uuid(),
            rng.chars(HEX, 32),
            rng.uuid()
        ),
        "mapbox-temporary-token" => format!(
            "tk.eyJ{}.{}",
            rng.chars(URLSAFE, 60),
            rng.chars(URLSAFE, 22)
        ),
        "adafruit-io-key" => format!("aio_{}", rng.chars(ALNUM, 28)),
        "aws-appsync-key" => format!("da2-{}", rng.chars(LOWER_DIGITS, 26)),
        "crates-io-token" => format!("cio{}", rng.chars(ALNUM, 32)),
        "dependency-track-key" => format!("odt_{}", rng.chars(ALNUM, 32)),
        "dropbox-short-lived-token" => format!("sl.{}", rng.chars(URLSAFE, 138)),
        "github-refresh-token" => format!("ghr_{}", rng.chars(ALNUM, 76)),
        "jina-key" => format!("jina_{}{}", rng.chars(HEX, 32), rng.chars(ALNUM, 28)),
        "new-relic-pixie-key" => {
            let kind = rng.pick(&["api", "dep"]);
            format!("px-{kind}-{}", rng.uuid())
        }
        "nuget-key" => format!("oy2{}", rng.chars(LOWER_DIGITS, 43)),
        "stackhawk-key" => format!("hawk.{}.{}", rng.chars(URLSAFE, 20), rng.chars(URLSAFE, 20)),
        "twitch-stream-key" => format!("live_{}_{}", rng.chars(DIGITS, 9), rng.chars(ALNUM, 30)),
        "password-hash" => format!(
            "$1${}${}",
            rng.chars(
                b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                8
            ),
            rng.chars(
                b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                22
            )
        ),
        "private-key-base64" => format!(
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo{}",
            rng.chars(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                200
            )
        ),
        "amazon-mws-token" => format!("amzn.mws.{}", rng.uuid()),
        "teamcity-token" => format!(
            "eyJ0eXAiOiAiVENWMiJ9.{}.{}",
            rng.chars(URLSAFE, 36),
            rng.chars(URLSAFE, 48)
        ),
        "segment-public-api-token" => format!("sgp_{}", rng.chars(ALNUM, 64)),
        "ionic-token" => format!("ion_{}", rng.chars(ALNUM, 42)),
        "pagarme-api-key" => {
            let mode = rng.pick(&["live", "test"]);
            format!("ak_{mode}_{}", rng.chars(ALNUM, 30))
        }
        "django-insecure-key" => format!("django-insecure-{}", rng.chars(LOWER_DIGITS, 50)),
        "launchdarkly-key" => {
            let kind = rng.pick(&["api", "sdk", "mob"]);
            format!("{kind}-{}", rng.uuid())
        }
        "lob-key" => {
            let mode = rng.pick(&["live", "test"]);
            format!("{mode}_{}", rng.chars(HEX, 35))
        }
        "apify-token" => format!("apify_api_{}", rng.chars(ALNUM, 36)),
        "nvidia-api-key" => format!("nvapi-{}", rng.chars(URLSAFE, 64)),
        "saladcloud-api-key" => {
            let len = rng.range(20, 64);
            format!("salad_cloud_user_{}", rng.chars(ALNUM, len))
        }
        "besttime-private-key" => format!("pri_{}", rng.chars(HEX, 32)),
        "posthog-personal-key" => format!("phx_{}", rng.chars(ALNUM, 43)),
        "pubnub-secret-key" => format!("sec-c-{}", rng.chars(ALNUM, 48)),
        "rootly-key" => format!("rootly_{}", rng.chars(HEX, 64)),
        "tailscale-key" => format!(
            "tskey-api-{}-{}",
            rng.chars(ALNUM, 12),
            rng.chars(ALNUM, 32)
        ),
        "ubidots-token" => format!("BBFF-{}", rng.chars(ALNUM, 30)),
        "zoho-token" => format!("1000.{}.{}", rng.chars(HEX, 32), rng.chars(HEX, 32)),
        "sonarqube-token" => {
            let kind = rng.pick(&["squ", "sqp", "sqa"]);
            format!("{kind}_{}", rng.chars(HEX, 40))
        }
        "salesforce-session-id" => format!("00D{}!{}", rng.chars(ALNUM, 15), rng.chars(ALNUM, 96)),
        "zapier-webhook" => format!(
            "https://hooks.zapier.com/hooks/catch/{}/{}/",
            rng.chars(DIGITS, 8),
            rng.chars(LOWER_DIGITS, 7)
        ),
        "tines-webhook" => format!(
            "https://acme-1234.tines.com/webhook/{}/{}",
            rng.chars(HEX, 32),
            rng.chars(HEX, 32)
        ),
        "make-webhook" => format!("https://hook.eu1.make.com/{}", rng.chars(LOWER_DIGITS, 32)),
        "ifttt-webhook" => format!(
            "https://maker.ifttt.com/trigger/door_open/with/key/{}",
            rng.chars(URLSAFE, 22)
        ),
        "telegram-bot-token" => format!("{}:AA{}", rng.chars(DIGITS, 10), rng.chars(URLSAFE, 33)),
        "sendinblue-key" => format!("xkeysib-{}-{}", rng.chars(HEX, 64), rng.chars(ALNUM, 16)),
        "mailgun-key" => format!("key-{}", rng.chars(HEX, 32)),
        "mailchimp-key" => format!("{}-us{}", rng.chars(HEX, 32), rng.range(1, 21)),
        "resend-key" => format!("re_{}_{}", rng.chars(ALNUM, 8), rng.chars(ALNUM, 24)),
        "easypost-key" => format!("EZAK{}", rng.chars(ALNUM, 54)),
        "shippo-token" => format!("shippo_live_{}", rng.chars(HEX, 40)),
        "stripe-webhook-secret" => format!("whsec_{}", rng.chars(ALNUM, 32)),
        "square-token" => format!("EAAA{}", rng.chars(URLSAFE, 60)),
        "flutterwave-key" => format!("FLWSECK_TEST-{}-X", rng.chars(HEX, 32)),
        "duffel-token" => format!("duffel_live_{}", rng.chars(URLSAFE, 43)),
        "razorpay-key" => format!("rzp_live_{}", rng.chars(ALNUM, 14)),
        "facebook-access-token" => format!("EAAC{}", rng.chars(ALNUM, 150)),
        "airtable-token" => format!("pat{}.{}", rng.chars(ALNUM, 14), rng.chars(HEX, 64)),
        "hubspot-token" => format!("pat-na1-{}", rng.uuid()),
        "figma-token" => format!("figd_{}", rng.chars(URLSAFE, 40)),
        "contentful-token" => format!("CFPAT-{}", rng.chars(URLSAFE, 43)),
        "typeform-token" => {
            if *rng.pick(&[true, false]) {
                format!("tfp_{}", rng.chars(HEX, 40))
            } else {
                format!("tfp_{}", rng.chars(URLSAFE, 59))
            }
        }
        "mapbox-secret-token" => format!(
            "sk.eyJ1{}.{}",
            rng.chars(URLSAFE, 60),
            rng.chars(URLSAFE, 22)
        ),
        "asana-token" => format!(
            "2/{}/{}:{}",
            rng.chars(DIGITS, 16),
            rng.chars(DIGITS, 16),
            rng.chars(HEX, 32)
        ),
        "jwt-base64" => STANDARD.encode(jwt(rng, "service_role")),
        "github-app-installation-token" => {
            format!("ghs_{}_{}", rng.chars(DIGITS, 7), jwt(rng, "installation"))
        }
        "azure-devops-pat" => format!("{}AZDO{}", rng.chars(ALNUM, 76), rng.chars(ALNUM, 4)),
        "mongodb-atlas-service-account-secret" => format!("mdb_sa_sk_{}", rng.chars(URLSAFE, 40)),
        other => panic!("no generator for rule `{other}`"),
    }
}

/// A Supabase-style JWT with the given role.
fn jwt(rng: &mut Rng, role: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(format!(
        r#"{{"iss":"supabase","ref":"{}","role":"{role}","iat":{},"exp":{}}}"#,
        rng.chars(LOWER, 20),
        1_700_000_000 + rng.below(50_000_000),
        2_000_000_000 + rng.below(50_000_000)
    ));
    format!("{header}.{payload}.{}", rng.chars(URLSAFE, 43))
}

/// A PEM block with real or `\n`-escaped newlines (OpenSSH bodies have the
/// long `AAAA` runs real ones have).
fn private_key(rng: &mut Rng) -> String {
    let kind = *rng.pick(&[
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
    ]);
    let newline = *rng.pick(&["\n", "\\n"]);
    let mut body = if kind.starts_with("OPENSSH") {
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW".to_string()
    } else {
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ".to_string()
    };
    let lines = rng.range(4, 10);
    body.push_str(&rng.chars(BASE64, 64 * lines));
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        // Base64 is ASCII.
        .map(|chunk| std::str::from_utf8(chunk).unwrap())
        .collect();
    format!(
        "-----BEGIN {kind}-----{newline}{}{newline}-----END {kind}-----",
        lines.join(newline)
    )
}

/// A Google Cloud service-account key file in one env value, its key cut
/// short (no `END` line, as pasted in a hurry): found by the file's shape,
/// where the PEM rule sees no block.
fn service_account_file(rng: &mut Rng, name: &str) -> Case {
    let (file, key) = service_account_json(rng);
    let mut server = stdio(rng);
    server.env(name, &file);
    Case {
        server: server.to_value(),
        planted: vec![Planted {
            field: format!("env.{name}"),
            rule: "gcp-service-account-key",
            secret: key,
            placement: "service-account JSON in env",
        }],
    }
}

/// A service-account key file with its key cut short, and that key.
fn service_account_json(rng: &mut Rng) -> (String, String) {
    let key = format!(
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ{}\\n{}",
        rng.chars(BASE64, 14),
        rng.chars(BASE64, 64)
    );
    let file = format!(
        r#"{{"type": "service_account", "project_id": "analytics-{}", "private_key_id": "{}", "private_key": "{key}", "client_email": "mcp@analytics.iam.gserviceaccount.com"}}"#,
        rng.chars(LOWER_DIGITS, 6),
        rng.chars(HEX, 40)
    );
    (file, key)
}

/// A 40-character AWS secret; one in four starts with `/` (a path filter
/// must not eat them).
fn aws_secret(rng: &mut Rng) -> String {
    let mut secret = rng.chars(BASE64, 40);
    if rng.chance(25) {
        secret.replace_range(0..1, "/");
    }
    secret
}

/// A key of a provider without a prefix rule, or a password (only where a
/// password can sit: not in tokens of headers or query strings); the shape
/// rotates with `round`.
fn random_secret(rng: &mut Rng, round: usize, place: Place) -> String {
    let password_ok = matches!(
        place,
        Place::Env
            | Place::ArgPair
            | Place::ArgInline
            | Place::DockerEnv
            | Place::HeaderBasic
            | Place::EnvDsn
            | Place::ArgDsn
            | Place::DockerDsn
            | Place::UrlUserinfo
            | Place::EnvConnectionString
    );
    let mut shape = (round * 7 + rng.below(7)) % 9;
    if shape == 6 && !password_ok {
        shape = 7;
    }
    match shape {
        0 => format!("tvly-dev-{}", rng.chars(ALNUM, 32)),
        1 => rng.uuid(),
        2 => rng.chars(URLSAFE, 40),
        3 => rng.chars(HEX, 32),
        4 => format!("sk-{}", rng.chars(HEX, 32)),
        5 => format!("fc-{}", rng.chars(HEX, 32)),
        6 => rng.chars(PASSWORD, 20),
        7 => rng.chars(ALNUM, 24),
        _ => format!("figd_{}", rng.chars(URLSAFE, 40)),
    }
}

// ---------------------------------------------------------------------------
// Placements

/// Where a secret goes in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `env.NAME`.
    Env,
    /// A bare `args` element.
    ArgBare,
    /// `["--api-key", V]`.
    ArgPair,
    /// `["--api-key=V"]`.
    ArgInline,
    /// `["-e", "NAME=V"]` (docker).
    DockerEnv,
    /// `["--header", "Authorization: Bearer V"]` (mcp-remote).
    ArgAuthHeader,
    /// `["--header", "X-API-Key: V"]`.
    ArgKeyHeader,
    /// `headers.Authorization: Bearer V`.
    HeaderBearer,
    /// `headers.Authorization: Token V` / `Bot V`.
    HeaderToken,
    /// `headers.Authorization: Basic base64(user:V)`.
    HeaderBasic,
    /// `headers.X-API-Key: V` and friends.
    HeaderKey,
    /// `env.AUTH_HEADER: Bearer V`.
    EnvBearer,
    /// `url: https://…?api_key=V`.
    UrlQuery,
    /// `args: ["https://…?api_key=V"]`.
    ArgUrlQuery,
    /// `env.MCP_URL: https://…?api_key=V`.
    EnvUrlQuery,
    /// `url: https://user:V@host/…`.
    UrlUserinfo,
    /// `env.DATABASE_URL: postgres://user:V@host/db`.
    EnvDsn,
    /// `args: ["--dsn", "postgres://user:V@host/db"]` or a bare DSN.
    ArgDsn,
    /// `["-e", "DATABASE_URL=postgres://user:V@host/db"]`.
    DockerDsn,
    /// `env.OPENAPI_MCP_HEADERS: {"Authorization": "Bearer V", …}` (JSON
    /// text, as the Notion server takes it).
    EnvJsonHeaders,
    /// `command: env NAME=V npx …`.
    Command,
    /// `env.MSSQL_CONNECTION_STRING: Server=…;Password=V;`.
    EnvConnectionString,
}

impl Place {
    fn label(self) -> &'static str {
        match self {
            Self::Env => "env value",
            Self::ArgBare => "bare token arg",
            Self::ArgPair => "--flag V",
            Self::ArgInline => "--flag=V",
            Self::DockerEnv => "docker -e NAME=V",
            Self::ArgAuthHeader => "--header 'Authorization: Bearer V'",
            Self::ArgKeyHeader => "--header 'X-API-Key: V'",
            Self::HeaderBearer => "Authorization: Bearer",
            Self::HeaderToken => "Authorization: Token/Bot",
            Self::HeaderBasic => "Authorization: Basic",
            Self::HeaderKey => "X-API-Key-style header",
            Self::EnvBearer => "env 'Bearer V'",
            Self::UrlQuery => "url query",
            Self::ArgUrlQuery => "url query in args",
            Self::EnvUrlQuery => "url query in env",
            Self::UrlUserinfo => "url userinfo",
            Self::EnvDsn => "DSN in env",
            Self::ArgDsn => "DSN in args",
            Self::DockerDsn => "DSN in docker -e",
            Self::EnvJsonHeaders => "JSON headers in env",
            Self::Command => "command",
            Self::EnvConnectionString => "connection string in env",
        }
    }
}

/// Placements where a token of the rule can sit as a whole value.
fn token_places(rule: &str) -> &'static [Place] {
    match rule {
        "private-key-block" => &[
            Place::Env,
            Place::Env,
            Place::Env,
            Place::ArgBare,
            Place::ArgPair,
        ],
        "slack-webhook"
        | "discord-webhook"
        | "teams-webhook"
        | "teams-webhook-legacy"
        | "zapier-webhook"
        | "tines-webhook"
        | "make-webhook"
        | "ifttt-webhook"
        | "gitlab-session-cookie" => {
            &[Place::Env, Place::ArgBare, Place::ArgPair, Place::DockerEnv]
        }
        _ => &[
            Place::Env,
            Place::ArgBare,
            Place::ArgPair,
            Place::ArgInline,
            Place::DockerEnv,
            Place::ArgAuthHeader,
            Place::HeaderBearer,
            Place::HeaderKey,
            Place::UrlQuery,
            Place::Command,
        ],
    }
}

/// Placements for secrets without a token shape, found by their context.
const CONTEXT_PLACES: &[Place] = &[
    Place::Env,
    Place::Env,
    Place::ArgPair,
    Place::ArgInline,
    Place::DockerEnv,
    Place::ArgAuthHeader,
    Place::ArgKeyHeader,
    Place::HeaderBearer,
    Place::HeaderToken,
    Place::HeaderBasic,
    Place::HeaderKey,
    Place::EnvBearer,
    Place::UrlQuery,
    Place::ArgUrlQuery,
    Place::EnvUrlQuery,
    Place::UrlUserinfo,
    Place::EnvDsn,
    Place::ArgDsn,
    Place::DockerDsn,
    Place::EnvJsonHeaders,
    Place::EnvConnectionString,
];

fn context_rule(place: Place) -> &'static str {
    match place {
        Place::Env | Place::DockerEnv | Place::EnvConnectionString => GENERIC,
        Place::ArgPair | Place::ArgInline => CLI_FLAG,
        Place::ArgAuthHeader
        | Place::HeaderBearer
        | Place::HeaderToken
        | Place::HeaderBasic
        | Place::EnvBearer
        | Place::EnvJsonHeaders => AUTH,
        Place::ArgKeyHeader | Place::HeaderKey => API_KEY_HEADER,
        Place::UrlQuery | Place::ArgUrlQuery | Place::EnvUrlQuery => QUERY,
        Place::UrlUserinfo | Place::EnvDsn | Place::ArgDsn | Place::DockerDsn => USERINFO,
        Place::ArgBare | Place::Command => panic!("{place:?} needs a token shape"),
    }
}

/// Env names under which a rule's tokens usually appear.
fn env_names(rule: &str) -> &'static [&'static str] {
    match rule {
        "github-pat" | "github-oauth-app-refresh" | "github-fine-grained-pat" => {
            &["GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"]
        }
        "gitlab-pat" => &["GITLAB_PERSONAL_ACCESS_TOKEN", "GITLAB_TOKEN"],
        "openai-key" => &["OPENAI_API_KEY"],
        "anthropic-key" => &["ANTHROPIC_API_KEY"],
        "openrouter-key" => &["OPENROUTER_API_KEY"],
        "slack-token" | "slack-app-token" => &["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"],
        "slack-webhook" => &["SLACK_WEBHOOK", "SLACK_WEBHOOK_URL"],
        "aws-access-key-id" => &["AWS_ACCESS_KEY_ID"],
        "google-api-key" => &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
        "stripe-key" => &["STRIPE_SECRET_KEY", "STRIPE_API_KEY"],
        "sentry-user-token" | "sentry-org-token" => &["SENTRY_ACCESS_TOKEN", "SENTRY_AUTH_TOKEN"],
        "linear-api-key" => &["LINEAR_API_KEY"],
        "notion-token" | "notion-legacy-secret" => &["NOTION_TOKEN", "NOTION_API_KEY"],
        "perplexity-key" => &["PERPLEXITY_API_KEY"],
        "huggingface-token" => &["HF_TOKEN", "HUGGINGFACE_API_KEY"],
        "npm-token" => &["NPM_TOKEN"],
        "supabase-pat" => &["SUPABASE_ACCESS_TOKEN"],
        "supabase-secret-key" | "jwt" => &["SUPABASE_SERVICE_ROLE_KEY", "SUPABASE_KEY"],
        "groq-key" => &["GROQ_API_KEY"],
        "xai-key" => &["XAI_API_KEY"],
        "langsmith-key" => &["LANGSMITH_API_KEY"],
        "pinecone-key" => &["PINECONE_API_KEY"],
        "brave-key-lowconf" => &["BRAVE_API_KEY"],
        "private-key-block" => &[
            "GOOGLE_PRIVATE_KEY",
            "SNOWFLAKE_PRIVATE_KEY",
            "GITHUB_APP_PRIVATE_KEY",
        ],
        "sendgrid-key" => &["SENDGRID_API_KEY"],
        "twilio-key" => &["TWILIO_API_KEY"],
        "digitalocean-token" => &["DIGITALOCEAN_API_TOKEN"],
        "databricks-token" => &["DATABRICKS_TOKEN"],
        "atlassian-token" => &["JIRA_API_TOKEN", "CONFLUENCE_API_TOKEN"],
        "nvidia-api-key" => &["NVIDIA_API_KEY", "NGC_API_KEY"],
        "saladcloud-api-key" => &["SALAD_API_KEY"],
        "besttime-private-key" => &["BESTTIME_API_KEY_PRIVATE"],
        "heroku-key" => &["HEROKU_API_KEY"],
        "grafana-service-account-token" => &["GRAFANA_API_KEY", "GRAFANA_SERVICE_ACCOUNT_TOKEN"],
        "vault-token" => &["VAULT_TOKEN"],
        "pypi-token" => &["PYPI_TOKEN", "TWINE_PASSWORD"],
        "doppler-token" => &["DOPPLER_TOKEN"],
        "postman-key" => &["POSTMAN_API_KEY"],
        "shopify-token" => &["SHOPIFY_ACCESS_TOKEN"],
        "vercel-token" => &["VERCEL_TOKEN"],
        AWS_SECRET => &["AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY"],
        _ => &[
            "TAVILY_API_KEY",
            "EXA_API_KEY",
            "CLOUDFLARE_API_TOKEN",
            "DD_API_KEY",
            "DEEPSEEK_API_KEY",
            "FIRECRAWL_API_KEY",
            "ELEVENLABS_API_KEY",
            "FIGMA_ACCESS_TOKEN",
            "VERCEL_TOKEN",
            "CONTEXT7_API_KEY",
            "DB_PASSWORD",
            "POSTGRES_PASSWORD",
            "JWT_SECRET",
            "SESSION_SECRET",
            "apiKey",
            "MYSQL_PWD",
            "REDIS_PASS",
            "LICENSE_KEY",
            "CLIENT_SECRET",
            "MCP_AUTH",
            "Snowflake.Private.Key.Passphrase",
        ],
    }
}

const PAIR_FLAGS: &[&str] = &[
    "--api-key",
    "--token",
    "--access-token",
    "--auth-token",
    "--password",
    "--secret",
    "--client-secret",
    "--pat",
    "--API-KEY",
    "--github-token",
    "--apiKey",
    "-p",
];

const INLINE_FLAGS: &[&str] = &[
    "--api-key",
    "--apikey",
    "--token",
    "--access-token",
    "--auth-token",
    "--password",
    "--client-secret",
    "--brave-api-key",
    "--Api-Key",
];

const KEY_HEADERS: &[&str] = &[
    "X-API-Key",
    "x-api-key",
    "X-Subscription-Token",
    "Api-Key",
    "X-Auth-Token",
    "x-goog-api-key",
    "apikey",
    "X-Access-Token",
];

const QUERY_NAMES: &[&str] = &[
    "api_key",
    "apiKey",
    "apikey",
    "key",
    "token",
    "access_token",
    "tavilyApiKey",
    "exaApiKey",
    "auth",
    "secret",
];

/// Builds one case: a realistic server with `secret` at `place`.
fn plant(rng: &mut Rng, place: Place, rule: &'static str, secret: String) -> Case {
    let mut server = match place {
        Place::HeaderBearer
        | Place::HeaderToken
        | Place::HeaderBasic
        | Place::HeaderKey
        | Place::UrlQuery
        | Place::UrlUserinfo => remote(rng),
        Place::DockerEnv | Place::DockerDsn => docker(rng),
        Place::ArgAuthHeader | Place::ArgKeyHeader | Place::ArgUrlQuery => mcp_remote(rng),
        Place::ArgDsn => Server::stdio("npx", &["-y", "@bytebase/dbhub"]),
        _ => stdio(rng),
    };
    let needs_long = |flag: &str| flag == "-p" && secret.len() < 16;
    let (field, secret) = match place {
        Place::Env => {
            let name = if !TOKEN_RULES.contains(&rule) || rng.chance(85) {
                rng.pick(env_names(rule)).to_string()
            } else {
                // A token is a token whatever the name.
                rng.pick(&["CONFIG", "VALUE", "SETTING_A", "MISC"])
                    .to_string()
            };
            let value = if rule == "private-key-block" && rng.chance(50) {
                format!("{secret}\n")
            } else {
                secret.clone()
            };
            server.env(&name, &value);
            (format!("env.{name}"), secret)
        }
        Place::ArgBare => {
            let index = server.arg(&secret);
            (format!("args[{index}]"), secret)
        }
        Place::ArgPair => {
            let mut flag = *rng.pick(PAIR_FLAGS);
            if needs_long(flag) {
                flag = "--token";
            }
            server.arg(flag);
            let index = server.arg(&secret);
            (format!("args[{index}]"), secret)
        }
        Place::ArgInline => {
            let flag = rng.pick(INLINE_FLAGS);
            let index = server.arg(&format!("{flag}={secret}"));
            (format!("args[{index}]"), secret)
        }
        Place::DockerEnv => {
            let name = rng.pick(env_names(rule));
            let index = server.docker_env(&format!("{name}={secret}"));
            (format!("args[{index}]"), secret)
        }
        Place::ArgAuthHeader => {
            server.arg("--header");
            let form = *rng.pick(&[
                "Authorization: Bearer ",
                "Authorization:Bearer ",
                "authorization: token ",
            ]);
            let index = server.arg(&format!("{form}{secret}"));
            (format!("args[{index}]"), secret)
        }
        Place::ArgKeyHeader => {
            server.arg("--header");
            let name = rng.pick(&["X-API-Key", "x-api-key", "X-Subscription-Token", "Api-Key"]);
            let index = server.arg(&format!("{name}: {secret}"));
            (format!("args[{index}]"), secret)
        }
        Place::HeaderBearer => {
            let scheme = *rng.pick(&["Bearer", "Bearer", "bearer"]);
            server.header("Authorization", &format!("{scheme} {secret}"));
            ("headers.Authorization".to_string(), secret)
        }
        Place::HeaderToken => {
            let scheme = *rng.pick(&["Token", "Bot"]);
            server.header("Authorization", &format!("{scheme} {secret}"));
            ("headers.Authorization".to_string(), secret)
        }
        Place::HeaderBasic => {
            let user = rng.pick(&["admin", "svc-mcp", "api", "deploy"]);
            let encoded = STANDARD.encode(format!("{user}:{secret}"));
            server.header("Authorization", &format!("Basic {encoded}"));
            ("headers.Authorization".to_string(), encoded)
        }
        Place::HeaderKey => {
            let name = *rng.pick(KEY_HEADERS);
            server.header(name, &secret);
            (format!("headers.{name}"), secret)
        }
        Place::EnvBearer => {
            let name = *rng.pick(&["AUTH_HEADER", "MCP_AUTHORIZATION_HEADER", "HTTP_AUTH"]);
            server.env(name, &format!("Bearer {secret}"));
            (format!("env.{name}"), secret)
        }
        Place::UrlQuery => {
            let name = *rng.pick(QUERY_NAMES);
            let base = server.url.clone();
            let separator = if base.contains('?') { '&' } else { '?' };
            server.url = format!("{base}{separator}{name}={secret}");
            if rng.chance(40) {
                server.url.push_str("&profile=default");
            }
            (format!("url.query.{name}"), secret)
        }
        Place::ArgUrlQuery => {
            let name = *rng.pick(QUERY_NAMES);
            let host = rng.pick(REMOTE_HOSTS);
            server.args[MCP_REMOTE_URL] = format!("https://{host}/mcp?{name}={secret}");
            (format!("args[{MCP_REMOTE_URL}]"), secret)
        }
        Place::EnvUrlQuery => {
            let name = *rng.pick(QUERY_NAMES);
            let host = rng.pick(REMOTE_HOSTS);
            let var = *rng.pick(&["MCP_SERVER_URL", "REMOTE_URL", "UPSTREAM"]);
            server.env(
                var,
                &format!("https://{host}/sse?{name}={secret}&format=json"),
            );
            (format!("env.{var}"), secret)
        }
        Place::UrlUserinfo => {
            let user = rng.pick(&["mcp", "bot", "admin", "x-access-token"]);
            let host = rng.pick(REMOTE_HOSTS);
            server.url = format!("https://{user}:{secret}@{host}/mcp");
            ("url.password".to_string(), secret)
        }
        Place::EnvDsn => {
            let dsn = dsn(rng, &secret);
            let name = *rng.pick(&[
                "DATABASE_URL",
                "POSTGRES_URL",
                "MONGODB_URI",
                "REDIS_URL",
                "DB_DSN",
            ]);
            server.env(name, &dsn);
            (format!("env.{name}"), secret)
        }
        Place::ArgDsn => {
            let dsn = dsn(rng, &secret);
            if rng.chance(60) {
                let flag = *rng.pick(&["--dsn", "--connection-string", "--database-url"]);
                server.arg(flag);
            }
            let index = server.arg(&dsn);
            (format!("args[{index}]"), secret)
        }
        Place::DockerDsn => {
            let dsn = dsn(rng, &secret);
            let index = server.docker_env(&format!("DATABASE_URL={dsn}"));
            (format!("args[{index}]"), secret)
        }
        Place::EnvJsonHeaders => {
            let headers = format!(
                r#"{{"Authorization": "Bearer {secret}", "Notion-Version": "2022-06-28"}}"#
            );
            server.env("OPENAPI_MCP_HEADERS", &headers);
            ("env.OPENAPI_MCP_HEADERS".to_string(), secret)
        }
        Place::EnvConnectionString => {
            let name = *rng.pick(&["MSSQL_CONNECTION_STRING", "ODBC_DSN", "SQLSERVER"]);
            let user = rng.pick(&["sa_mcp", "app", "reporting"]);
            server.env(
                name,
                &format!(
                    "Server=tcp:sql-{}.database.windows.net,1433;Database=app;User ID={user};Password={secret};Encrypt=true;",
                    rng.chars(LOWER, 6)
                ),
            );
            (format!("env.{name}"), secret)
        }
        Place::Command => {
            let name = rng.pick(env_names(rule));
            server.command = format!("env {name}={secret} {}", server.command);
            ("command".to_string(), secret)
        }
    };
    add_noise(rng, &mut server);
    Case {
        server: server.to_value(),
        planted: vec![Planted {
            field,
            rule,
            secret,
            placement: place.label(),
        }],
    }
}

fn dsn(rng: &mut Rng, password: &str) -> String {
    let user = rng.pick(&["app", "postgres", "readonly", "admin", "svc_mcp"]);
    let host = rng.pick(&[
        "db.internal",
        "10.0.3.17",
        "prod-db.cluster-x1.eu-west-1.rds.amazonaws.com",
        "localhost",
    ]);
    match rng.below(5) {
        0 => format!("postgres://{user}:{password}@{host}:5432/app?sslmode=require"),
        1 => format!("postgresql://{user}:{password}@{host}/analytics"),
        2 => format!("mysql://{user}:{password}@{host}:3306/shop"),
        3 => {
            format!("mongodb+srv://{user}:{password}@cluster0.ab1cd.mongodb.net/?retryWrites=true")
        }
        _ => format!("redis://{user}:{password}@{host}:6379/0"),
    }
}

// ---------------------------------------------------------------------------
// Servers

/// Index of the URL in an `mcp-remote` argument list.
const MCP_REMOTE_URL: usize = 2;

const REMOTE_HOSTS: &[&str] = &[
    "mcp.linear.app",
    "mcp.notion.com",
    "mcp.sentry.dev",
    "api.githubcopilot.com",
    "mcp.context7.com",
    "mcp.tavily.com",
    "mcp.exa.ai",
    "mcp.stripe.com",
    "mcp.internal.acme.dev",
];

/// An entry being built, in Claude Code's key order.
struct Server {
    kind: &'static str,
    typed: bool,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    url: String,
    headers: Vec<(String, String)>,
    /// Where `-e` pairs go in a docker argument list.
    docker_insert: Option<usize>,
}

impl Server {
    fn stdio(command: &str, args: &[&str]) -> Self {
        Self {
            kind: "stdio",
            typed: true,
            command: command.to_string(),
            args: args.iter().map(|arg| (*arg).to_string()).collect(),
            env: Vec::new(),
            url: String::new(),
            headers: Vec::new(),
            docker_insert: None,
        }
    }

    fn arg(&mut self, arg: &str) -> usize {
        self.args.push(arg.to_string());
        self.args.len() - 1
    }

    /// Adds `-e NAME=value` before the image; returns the value's index.
    fn docker_env(&mut self, pair: &str) -> usize {
        let at = self.docker_insert.unwrap_or(self.args.len());
        self.args.insert(at, "-e".to_string());
        self.args.insert(at + 1, pair.to_string());
        self.docker_insert = Some(at + 2);
        at + 1
    }

    fn env(&mut self, name: &str, value: &str) {
        self.env.retain(|(key, _)| key != name);
        self.env.push((name.to_string(), value.to_string()));
    }

    fn header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(key, _)| key != name);
        self.headers.push((name.to_string(), value.to_string()));
    }

    fn to_value(&self) -> Value {
        let mut entry = Map::new();
        if self.kind == "stdio" {
            if self.typed {
                entry.insert("type".into(), json!("stdio"));
            }
            entry.insert("command".into(), json!(self.command));
            entry.insert("args".into(), json!(self.args));
            let env: Map<String, Value> = self
                .env
                .iter()
                .map(|(key, value)| (key.clone(), json!(value)))
                .collect();
            if self.typed || !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        } else {
            entry.insert("type".into(), json!(self.kind));
            entry.insert("url".into(), json!(self.url));
            if !self.headers.is_empty() {
                let headers: Map<String, Value> = self
                    .headers
                    .iter()
                    .map(|(key, value)| (key.clone(), json!(value)))
                    .collect();
                entry.insert("headers".into(), Value::Object(headers));
            }
        }
        Value::Object(entry)
    }
}

const NPX_PACKAGES: &[&[&str]] = &[
    &["@modelcontextprotocol/server-github"],
    &[
        "@modelcontextprotocol/server-filesystem",
        "/Users/dev/projects",
        "/Users/dev/Documents/notes",
    ],
    &["@modelcontextprotocol/server-memory"],
    &["@modelcontextprotocol/server-sequential-thinking"],
    &["@modelcontextprotocol/server-puppeteer"],
    &[
        "@playwright/mcp@latest",
        "--browser",
        "chromium",
        "--headless",
    ],
    &["@upstash/context7-mcp@latest"],
    &["tavily-mcp@0.2.4"],
    &["@brave/brave-search-mcp-server", "--transport", "stdio"],
    &["@sentry/mcp-server@latest"],
    &["@notionhq/notion-mcp-server"],
    &[
        "@supabase/mcp-server-supabase@latest",
        "--read-only",
        "--project-ref=abcdefghijklmnopqrst",
    ],
    &["firecrawl-mcp"],
    &[
        "exa-mcp-server",
        "--tools=web_search_exa,research_paper_search",
    ],
    &["@heroku/mcp-server"],
    &["@stripe/mcp", "--tools=all"],
];

const UVX_PACKAGES: &[&[&str]] = &[
    &["mcp-server-fetch"],
    &["mcp-server-git", "--repository", "/home/dev/src/api"],
    &["mcp-server-sqlite", "--db-path", "~/data/app.db"],
    &["awslabs.aws-documentation-mcp-server@latest"],
    &[
        "--from",
        "git+https://github.com/oraios/serena",
        "serena",
        "start-mcp-server",
        "--context",
        "ide-assistant",
    ],
    &["mcp-server-time", "--local-timezone=Europe/Berlin"],
];

const CLEAN_ENV: &[(&str, &str)] = &[
    ("LOG_LEVEL", "info"),
    ("NODE_ENV", "production"),
    ("MCP_TIMEOUT", "30000"),
    ("DEBUG", "false"),
    ("FASTMCP_LOG_LEVEL", "ERROR"),
    ("AWS_REGION", "eu-west-1"),
    ("HOME", "/home/dev"),
    ("PYTHONUNBUFFERED", "1"),
    ("DEFAULT_MINIMUM_TOKENS", "10000"),
    (
        "ALLOWED_ORIGINS",
        "http://localhost:3000,https://app.acme.dev",
    ),
    ("GITHUB_TOOLSETS", "repos,issues,pull_requests"),
    ("MODEL", "claude-sonnet-4-5"),
    ("API_BASE_URL", "https://api.acme.dev/v2"),
    ("NODE_OPTIONS", "--max-old-space-size=4096"),
    ("PATH", "/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin"),
    ("NODE_EXTRA_CA_CERTS", "/etc/ssl/certs/corp-ca.pem"),
    ("GITHUB_HOST", "https://github.acme.dev"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
    ("ALLOWED_DIRECTORIES", "/Users/dev/projects:/Users/dev/work"),
    ("READ_ONLY", "true"),
    ("MAX_RESULTS", "25"),
];

fn stdio(rng: &mut Rng) -> Server {
    let mut server = if rng.chance(70) {
        let package = *rng.pick(NPX_PACKAGES);
        let mut args = vec!["-y"];
        args.extend_from_slice(package);
        Server::stdio("npx", &args)
    } else {
        let package = *rng.pick(UVX_PACKAGES);
        Server::stdio("uvx", package)
    };
    server.typed = rng.chance(70);
    server
}

fn docker(rng: &mut Rng) -> Server {
    let image = *rng.pick(&[
        "ghcr.io/github/github-mcp-server",
        "mcp/postgres",
        "mcp/brave-search",
        "mcp/grafana",
        "mcp/sentry:latest",
    ]);
    let mut server = Server::stdio("docker", &["run", "-i", "--rm"]);
    server.arg(image);
    server.docker_insert = Some(3);
    server
}

fn mcp_remote(rng: &mut Rng) -> Server {
    let host = rng.pick(REMOTE_HOSTS);
    let url = format!("https://{host}/sse");
    Server::stdio("npx", &["-y", "mcp-remote", &url])
}

fn remote(rng: &mut Rng) -> Server {
    let host = rng.pick(REMOTE_HOSTS);
    let path = rng.pick(&["mcp", "sse", "mcp/", "v1/mcp"]);
    let mut server = Server::stdio("", &[]);
    server.kind = if rng.chance(75) { "http" } else { "sse" };
    server.url = format!("https://{host}/{path}");
    server
}

/// Harmless extras: clean env vars, a placeholder, a clean header.
fn add_noise(rng: &mut Rng, server: &mut Server) {
    if server.kind == "stdio" {
        for _ in 0..rng.range(3, 7) {
            let (name, value) = *rng.pick(CLEAN_ENV);
            if !server.env.iter().any(|(key, _)| key == name) {
                server.env(name, value);
            }
        }
        if rng.chance(30) && !server.env.iter().any(|(key, _)| key == "OTHER_API_KEY") {
            server.env("OTHER_API_KEY", "${OTHER_API_KEY}");
        }
    } else {
        for _ in 0..rng.range(1, 3) {
            let (name, value) = *rng.pick(&[
                ("X-Request-Source", "claude-code"),
                ("Accept", "application/json, text/event-stream"),
                ("X-Client-Id", "5f0c2a8e-4b1d-4e6f-9a3c-7d2e1b0f8c6a"),
                ("User-Agent", "mcpenv-test/1.0"),
                ("X-Tenant", "acme-prod"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ]);
            if !server.headers.iter().any(|(key, _)| key == name) {
                server.header(name, value);
            }
        }
    }
}

/// A server with nothing secret in it.
fn clean(rng: &mut Rng) -> Value {
    let mut server = match rng.below(10) {
        0..6 => stdio(rng),
        6 => docker(rng),
        7 => mcp_remote(rng),
        _ => remote(rng),
    };
    add_noise(rng, &mut server);
    server.to_value()
}

fn server_name(rng: &mut Rng, server: &Value, index: usize) -> String {
    let base = match server.get("url").and_then(Value::as_str) {
        Some(url) => url
            .trim_start_matches("https://")
            .split(['.', '/'])
            .find(|part| *part != "mcp" && *part != "api")
            .unwrap_or("remote")
            .to_string(),
        None => server
            .get("args")
            .and_then(Value::as_array)
            .and_then(|args| {
                args.iter()
                    .filter_map(Value::as_str)
                    .find(|arg| !arg.starts_with('-') && *arg != "run")
            })
            .map(|arg| {
                arg.rsplit('/')
                    .next()
                    .unwrap_or(arg)
                    .split('@')
                    .next()
                    .unwrap_or(arg)
                    .to_string()
            })
            .unwrap_or_else(|| "server".to_string()),
    };
    let base: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(24)
        .collect();
    format!("{base}-{index}{}", rng.chars(LOWER, 2))
}

// ---------------------------------------------------------------------------
// Decoys

type Decoy = fn(&mut Rng) -> Value;

/// One entry per trap; each call varies the surrounding server.
const DECOYS: &[Decoy] = &[
    |rng| env_decoy(rng, "GITHUB_PERSONAL_ACCESS_TOKEN", "${GITHUB_TOKEN}"),
    |rng| env_decoy(rng, "GITHUB_TOKEN", "$GITHUB_TOKEN"),
    |rng| env_decoy(rng, "OPENAI_API_KEY", "${env:OPENAI_API_KEY}"),
    |rng| env_decoy(rng, "API_KEY", "${input:api_key}"),
    |rng| env_decoy(rng, "API_KEY", "{env:API_KEY}"),
    |rng| env_decoy(rng, "API_KEY", "%API_KEY%"),
    |rng| env_decoy(rng, "DB_PASSWORD", "@DB_PASSWORD@"),
    |rng| env_decoy(rng, "SLACK_BOT_TOKEN", "{{ .Token }}"),
    |rng| env_decoy(rng, "GH_TOKEN", "${{ secrets.GH_TOKEN }}"),
    |rng| env_decoy(rng, "TAVILY_API_KEY", "${TAVILY_API_KEY:-}"),
    |rng| env_decoy(rng, "API_TOKEN", "${API_TOKEN:-default}"),
    |rng| env_decoy(rng, "SECRET_KEY", "${X:-default}"),
    |rng| env_decoy(rng, "GITHUB_TOKEN", "<your-token>"),
    |rng| env_decoy(rng, "API_KEY", "<API_KEY>"),
    |rng| env_decoy(rng, "NOTION_TOKEN", "[TOKEN]"),
    |rng| env_decoy(rng, "GITHUB_PERSONAL_ACCESS_TOKEN", "<YOUR_GITHUB_PAT>"),
    |rng| env_decoy(rng, "SECRET_NAME", "true"),
    |rng| env_decoy(rng, "API_KEY", "null"),
    |rng| env_decoy(rng, "TOKEN_LIMIT", "100000"),
    |rng| env_decoy(rng, "MAX_TOKENS", "4096"),
    // A word under a password name (`PASSWORD=production`) is a password
    // a person chose, not a decoy: `secrets::tests::a_password_name_…`.
    |rng| env_decoy(rng, "PASSWORD", "changeme"),
    |rng| env_decoy(rng, "KEYSTORE_PASSWORD", "changeit"),
    |rng| env_decoy(rng, "ADMIN_PASSWORD", "password"),
    |rng| env_decoy(rng, "JWT_SECRET", "secret"),
    |rng| env_decoy(rng, "API_TOKEN", "test"),
    |rng| env_decoy(rng, "API_KEY", "example-api-key-123"),
    |rng| env_decoy(rng, "API_KEY", "sample_key_0001"),
    |rng| env_decoy(rng, "STRIPE_SECRET_KEY", "sk_test_dummy"),
    |rng| env_decoy(rng, "OPENAI_API_KEY", "sk-..."),
    |rng| env_decoy(rng, "API_KEY", "xxxxxxxxxxxxxxxx"),
    |rng| env_decoy(rng, "DB_PASSWORD", "****"),
    |rng| {
        let masked = format!("ghp_{}", "x".repeat(36));
        env_decoy(rng, "GITHUB_TOKEN", &masked)
    },
    |rng| env_decoy(rng, "OPENAI_API_KEY", "sk-proj-****************abcd"),
    |rng| env_decoy(rng, "GITHUB_TOKEN", "ghp_…"),
    |rng| env_decoy(rng, "ANTHROPIC_API_KEY", "sk-ant-api03-..."),
    |rng| env_decoy(rng, "API_KEY", "your-api-key-here"),
    |rng| env_decoy(rng, "API_KEY", "YOUR_API_KEY"),
    |rng| env_decoy(rng, "BRAVE_API_KEY", "YOUR_BRAVE_API_KEY_HERE"),
    |rng| env_decoy(rng, "SLACK_BOT_TOKEN", "insert-token"),
    |rng| env_decoy(rng, "LINEAR_API_KEY", "TODO"),
    |rng| env_decoy(rng, "HF_TOKEN", "replace-with-your-token"),
    |rng| env_decoy(rng, "SSH_PRIVATE_KEY", "/home/dev/.ssh/id_rsa"),
    |rng| env_decoy(rng, "TLS_KEY", "./certs/key.pem"),
    |rng| {
        env_decoy(
            rng,
            "GOOGLE_APPLICATION_CREDENTIALS",
            "~/.config/gcloud/application_default_credentials.json",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "SERVICE_ACCOUNT_KEY",
            "C:\\Users\\dev\\keys\\service-account.json",
        )
    },
    |rng| env_decoy(rng, "DB_PASSWORD", "/run/secrets/db_password"),
    |rng| env_decoy(rng, "DATABASE_URL", "postgresql://localhost:5432/db"),
    |rng| env_decoy(rng, "DATABASE_URL", "postgres://app@db.internal:5432/app"),
    |rng| env_decoy(rng, "REDIS_URL", "redis://localhost:6379/0"),
    |rng| env_decoy(rng, "API_KEY", "https://api.example.com/v1"),
    |rng| {
        env_decoy(
            rng,
            "DATABASE_URL",
            "postgres://app:${DB_PASSWORD}@db.internal/app",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "DATABASE_URL",
            "postgres://postgres:postgres@localhost:5432/postgres",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "MYSQL_URL",
            "mysql://root:password@localhost:3306/shop",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "SENTRY_DSN",
            "https://3f9a0c2b7e1d4a6f8b5c9d0e1f2a3b4c@o450123.ingest.sentry.io/5512345",
        )
    },
    |rng| {
        let id = rng.uuid();
        env_decoy(rng, "AZURE_CLIENT_ID", &id)
    },
    |rng| {
        let id = rng.uuid();
        env_decoy(rng, "clientId", &id)
    },
    |rng| {
        let value = rng.chars(ALNUM, 24);
        env_decoy(rng, "MONKEY", &value)
    },
    |rng| {
        let value = rng.chars(ALNUM, 20);
        env_decoy(rng, "TURKEY_SANDWICH", &value)
    },
    |rng| env_decoy(rng, "KEYBOARD_LAYOUT", "us-intl"),
    |rng| {
        let value = rng.chars(ALNUM, 20);
        env_decoy(rng, "API_KEY_ID", &value)
    },
    |rng| {
        let value = rng.chars(HEX, 16);
        env_decoy(rng, "KEY_ID", &value)
    },
    |rng| env_decoy(rng, "TOKEN_URL", "https://auth.acme.dev/oauth/token"),
    |rng| {
        env_decoy(
            rng,
            "GITHUB_TOKEN_URL",
            "https://github.com/login/oauth/access_token",
        )
    },
    |rng| {
        let value = rng.chars(ALNUM, 32);
        env_decoy(rng, "PUBLIC_TOKEN", &value)
    },
    |rng| env_decoy(rng, "PRIMARY_KEY", "id"),
    |rng| env_decoy(rng, "FOREIGN_KEY", "user_id"),
    |rng| {
        let value = rng.chars(URLSAFE, 32);
        env_decoy(rng, "CSRF_TOKEN", &value)
    },
    |rng| env_decoy(rng, "SECRET_NAME", "prod/mcp/credentials"),
    |rng| env_decoy(rng, "SECRET_LENGTH", "64"),
    |rng| {
        let value = rng.chars(ALNUM, 20);
        env_decoy(rng, "ACCESS_ID", &value)
    },
    |rng| env_decoy(rng, "API_VERSION", "2024-06-01"),
    |rng| env_decoy(rng, "CREDENTIALS_ID", "gcp-prod-reader"),
    |rng| env_decoy(rng, "API_ENDPOINT", "https://api.acme.dev/graphql"),
    |rng| env_decoy(rng, "KEY_FILE", "/etc/mcp/key.json"),
    |rng| env_decoy(rng, "KEYSTORE_PATH", "/opt/app/keystore.jks"),
    |rng| env_decoy(rng, "AUTHOR", "Jane Doe"),
    |rng| env_decoy(rng, "BYPASS_CACHE", "true"),
    |rng| {
        let value = rng.chars(ALNUM, 28);
        env_decoy(rng, "VITE_API_KEY", &value)
    },
    |rng| {
        let value = rng.chars(ALNUM, 28);
        env_decoy(rng, "EXPO_PUBLIC_API_KEY", &value)
    },
    |rng| {
        let jwt = jwt(rng, "anon");
        env_decoy(rng, "NEXT_PUBLIC_SUPABASE_ANON_KEY", &jwt)
    },
    |rng| {
        let jwt = jwt(rng, "anon");
        env_decoy(rng, "SUPABASE_KEY", &jwt)
    },
    |rng| {
        let key = format!("sb_publishable_{}", rng.chars(URLSAFE, 31));
        env_decoy(rng, "SUPABASE_KEY", &key)
    },
    |rng| {
        let key = format!("pk_live_{}", rng.chars(ALNUM, 40));
        env_decoy(rng, "STRIPE_PUBLISHABLE_KEY", &key)
    },
    |rng| env_decoy(rng, "AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
    |rng| {
        env_decoy(
            rng,
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        )
    },
    |rng| env_decoy(rng, "HF_TOKEN", ""),
    |rng| {
        let sha = rng.chars(HEX, 40);
        env_decoy(rng, "GIT_SHA", &sha)
    },
    |rng| {
        let id = rng.uuid();
        env_decoy(rng, "REQUEST_ID", &id)
    },
    |rng| {
        env_decoy(
            rng,
            "SLACK_WEBHOOK",
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "PRIVATE_KEY",
            "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----",
        )
    },
    |rng| env_decoy(rng, "AUTH_HEADER", "Bearer ${API_TOKEN}"),
    |rng| header_decoy(rng, "Authorization", "Bearer ${API_TOKEN}"),
    |rng| header_decoy(rng, "Authorization", "Bearer <token>"),
    |rng| header_decoy(rng, "Authorization", "Basic ${BASIC_AUTH}"),
    |rng| header_decoy(rng, "Authorization", "Bearer YOUR_TOKEN_HERE"),
    |rng| header_decoy(rng, "Authorization", "Basic dXNlcjpwYXNzd29yZA=="),
    |rng| header_decoy(rng, "X-API-Key", "${API_KEY}"),
    |rng| header_decoy(rng, "X-API-Key", "your-api-key"),
    |rng| header_decoy(rng, "X-Subscription-Token", "$BRAVE_API_KEY"),
    |rng| {
        let id = rng.uuid();
        header_decoy(rng, "X-Client-Id", &id)
    },
    |rng| {
        let jwt = jwt(rng, "anon");
        header_decoy(rng, "apikey", &jwt)
    },
    |rng| {
        let bearer = format!("Bearer {}", jwt(rng, "anon"));
        header_decoy(rng, "Authorization", &bearer)
    },
    |rng| {
        let masked = format!("Bearer ghp_{}", "x".repeat(36));
        header_decoy(rng, "Authorization", &masked)
    },
    |rng| url_decoy(rng, "https://mcp.acme.dev/sse?api_key=${MCP_API_KEY}"),
    |rng| url_decoy(rng, "https://mcp.acme.dev/mcp?token=YOUR_TOKEN"),
    |rng| url_decoy(rng, "https://mcp.acme.dev/mcp?key=abc"),
    |rng| url_decoy(rng, "https://mcp.acme.dev/mcp?page=2&limit=50&format=json"),
    |rng| url_decoy(rng, "https://mcp.acme.dev/mcp?tavilyApiKey=<your-api-key>"),
    |rng| url_decoy(rng, "https://${MCP_USER}:${MCP_PASSWORD}@mcp.acme.dev/mcp"),
    |rng| args_decoy(rng, &["--api-key", "${API_KEY}"]),
    |rng| args_decoy(rng, &["--token", "$TOKEN"]),
    |rng| args_decoy(rng, &["-p", "8080"]),
    |rng| args_decoy(rng, &["-p", "3000:3000"]),
    |rng| args_decoy(rng, &["-p", "my-profile"]),
    |rng| args_decoy(rng, &["--password-file", "/run/secrets/pw"]),
    |rng| args_decoy(rng, &["--token-url", "https://auth.acme.dev/token"]),
    |rng| args_decoy(rng, &["--api-key=<YOUR_KEY>"]),
    |rng| args_decoy(rng, &["--header", "Authorization: Bearer ${TOKEN}"]),
    |rng| args_decoy(rng, &["--header", "Authorization:${AUTH_HEADER}"]),
    |rng| args_decoy(rng, &["--dsn", "postgres://localhost/db"]),
    |rng| {
        args_decoy(
            rng,
            &["--client-id", "5f0c2a8e-4b1d-4e6f-9a3c-7d2e1b0f8c6a"],
        )
    },
    |rng| {
        args_decoy(
            rng,
            &["--no-auth", "@modelcontextprotocol/server-everything"],
        )
    },
    |rng| args_decoy(rng, &["--secret-name", "prod/db"]),
    |rng| {
        let masked = format!("ghp_{}", "x".repeat(36));
        args_decoy(rng, &[&masked])
    },
    |rng| {
        let digest = format!("ghcr.io/acme/mcp@sha256:{}", rng.chars(HEX, 64));
        args_decoy(
            rng,
            &[
                "run",
                "-i",
                "--rm",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN",
                &digest,
            ],
        )
    },
    |rng| {
        args_decoy(
            rng,
            &[
                "run",
                "-i",
                "--rm",
                "-e",
                "API_KEY=${API_KEY}",
                "mcp/brave-search",
            ],
        )
    },
    |rng| args_decoy(rng, &["postgresql://localhost/mydb"]),
    |rng| {
        env_decoy(
            rng,
            "OPENAPI_MCP_HEADERS",
            r#"{"Authorization": "Bearer ${NOTION_TOKEN}", "Notion-Version": "2022-06-28"}"#,
        )
    },
    |rng| {
        env_decoy(
            rng,
            "OPENAI_API_KEY",
            "sk-proj-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "GITHUB_TOKEN",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
        )
    },
    |rng| env_decoy(rng, "SLACK_BOT_TOKEN", "xoxb-your-bot-token"),
    |rng| {
        let masked = format!("sk-ant-api03-{}AA", "x".repeat(93));
        env_decoy(rng, "ANTHROPIC_API_KEY", &masked)
    },
    |rng| header_decoy(rng, "X-API-Key", ""),
    |rng| {
        env_decoy(
            rng,
            "MSSQL_CONNECTION_STRING",
            "Server=localhost;Database=app;User ID=sa;Password=${MSSQL_PASSWORD};",
        )
    },
    |rng| {
        env_decoy(
            rng,
            "SQLSERVER",
            "Server=localhost;Database=app;Trusted_Connection=True;",
        )
    },
];

fn env_decoy(rng: &mut Rng, name: &str, value: &str) -> Value {
    let mut server = stdio(rng);
    server.env(name, value);
    add_noise(rng, &mut server);
    server.to_value()
}

fn header_decoy(rng: &mut Rng, name: &str, value: &str) -> Value {
    let mut server = remote(rng);
    add_noise(rng, &mut server);
    server.header(name, value);
    server.to_value()
}

fn url_decoy(rng: &mut Rng, url: &str) -> Value {
    let mut server = remote(rng);
    server.url = url.to_string();
    add_noise(rng, &mut server);
    server.to_value()
}

fn args_decoy(rng: &mut Rng, args: &[&str]) -> Value {
    let mut server = stdio(rng);
    for arg in args {
        server.arg(arg);
    }
    add_noise(rng, &mut server);
    server.to_value()
}
