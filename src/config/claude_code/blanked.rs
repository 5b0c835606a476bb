//! Which `${VAR}` placeholders Claude Code expands to `""` instead of the
//! variable's value: credential names toward remote servers, its own
//! credentials everywhere, and in scrub mode every secret-looking name.
//!
//! Read from Claude Code 2.1.332 (`@anthropic-ai/claude-code`, linux-x64):
//! the `claude` binary is compiled by bun and carries its JavaScript as
//! text, so `grep -ao` finds it. The expansion of MCP server entries
//! (`W0t`, calling `dse` with `remoteSink` for `url` and header values)
//! blanks a reference when the upper-cased name is in `lse()` (`plain`:
//! Claude Code's own credentials; `remoteSink`: those plus the credential
//! list), matches a credential family (`$Rt`), or, in scrub mode, looks
//! secret (`BRt`/`SKs`). Toward a remote server the blank wins even when
//! the variable is unset (a `:-default` is ignored); in stdio values only a
//! variable that is set is blanked. The lists below are the string arrays
//! of that code (`kt`, `yAs`, `hAs`, `e3e`, `mqo` in 2.1.332), in its
//! order; `tests/cli/claude_blanked.rs` reads them again from the pinned
//! binary and fails when they differ. The rules are translated by hand
//! (the JavaScript uses lookarounds the `regex` crate lacks); their unit
//! tests repeat what the real binary did (see `claude_blanked.rs`).
//!
//! Not modelled: value-based blanking (a `*_BASE_URL` of Claude Code's whose
//! value holds a credential; in scrub mode any value that looks like one),
//! and Claude Code's internal session variables (`CLAUDE_CODE_SESSION_KIND`
//! …), which no MCP entry has a reason to use.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// The Claude Code release these lists were read from.
pub const RELEASE: &str = "2.1.332";

/// Claude Code's list of credential names: toward remote servers each of
/// them, and its `INPUT_` spelling, expands to `""` (except
/// [`KEPT_FOR_REMOTE`]). 97 names, in the binary's order.
pub const CREDENTIAL_NAMES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
    "CLAUDE_CODE_RUNNER_MODEL_SOCKET",
    "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
    "CLAUDE_CODE_MEMORY_API_TOKEN",
    "CLAUDE_CODE_SLACK_TAG_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
    "ANTHROPIC_AWS_API_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GHA_CREDS_PATH",
    "AZURE_CLIENT_SECRET",
    "IDENTITY_HEADER",
    "MSI_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "CLOUDSDK_AUTH_ACCESS_TOKEN",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACEHUB_API_TOKEN",
    "NODE_AUTH_TOKEN",
    "NUGET_AUTH_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "TWINE_PASSWORD",
    "TWINE_USERNAME",
    "PYPI_TOKEN",
    "PYPI_API_TOKEN",
    "UV_PUBLISH_TOKEN",
    "UV_PUBLISH_PASSWORD",
    "UV_PUBLISH_USERNAME",
    "FLIT_PASSWORD",
    "FLIT_USERNAME",
    "HATCH_INDEX_AUTH",
    "HATCH_INDEX_USER",
    "GEM_HOST_API_KEY",
    "MATURIN_PYPI_TOKEN",
    "MATURIN_PASSWORD",
    "MATURIN_USERNAME",
    "CONAN_LOGIN_USERNAME",
    "CONAN_PASSWORD",
    "ANACONDA_API_TOKEN",
    "BINSTAR_API_TOKEN",
    "VAULT_TOKEN",
    "VAULT_AUTH_TOKEN",
    "VAULT_ROLE_ID",
    "VAULT_SECRET_ID",
    "CONSUL_HTTP_TOKEN",
    "CONSUL_HTTP_AUTH",
    "NOMAD_TOKEN",
    "NOMAD_HTTP_AUTH",
    "CI_REGISTRY_USER",
    "CI_DEPLOY_USER",
    "JF_USER",
    "FASTLANE_SESSION",
    "MATCH_GIT_BASIC_AUTHORIZATION",
    "SONAR_TOKEN",
    "SONARQUBE_SCANNER_PARAMS",
    "SONAR_SCANNER_JSON_PARAMS",
    "SLACK_WEBHOOK_URL",
    "SLACK_WEBHOOK",
    "DISCORD_WEBHOOK",
    "DISCORD_WEBHOOK_URL",
    "TEAMS_WEBHOOK_URL",
    "MS_TEAMS_WEBHOOK_URI",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
    "CLOUDSDK_AUTH_AUTHORIZATION_TOKEN_FILE",
    "AZURE_AUTH_LOCATION",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "ALL_INPUTS",
    "VSS_NUGET_EXTERNAL_FEED_ENDPOINTS",
    "ARTIFACTS_CREDENTIALPROVIDER_EXTERNAL_FEED_ENDPOINTS",
    "VSS_NUGET_ACCESSTOKEN",
    "ARTIFACTS_CREDENTIALPROVIDER_ACCESSTOKEN",
    "COMPOSER_AUTH",
    "OVERRIDE_GITHUB_TOKEN",
    "DEFAULT_WORKFLOW_TOKEN",
    "SSH_SIGNING_KEY",
];

/// Names of [`CREDENTIAL_NAMES`] that remote servers still get (Claude
/// Code takes them out of the remote list: Hugging Face and GitHub
/// Enterprise tokens are commonly meant for the remote server).
pub const KEPT_FOR_REMOTE: &[&str] = &[
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACEHUB_API_TOKEN",
];

/// More names blanked toward remote servers only (with their `INPUT_`
/// spelling): proxies, package-index URLs and registry tokens.
pub const REMOTE_EXTRA_NAMES: &[&str] = &[
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "CLOUDSDK_AUTH_ACCESS_TOKEN",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
    "CLAUDE_CODE_CLIENT_KEY",
    "CLAUDE_CODE_CLIENT_CERT",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "CARGO_REGISTRY_TOKEN",
    "NPM_TOKEN",
    "CODEARTIFACT_AUTH_TOKEN",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "GOPROXY",
    "GOAUTH",
    "PYPI_TOKEN",
    "TWINE_PASSWORD",
];

/// Claude Code's own credentials: blanked in every expanded value, stdio
/// `command`, `args` and `env` too, whenever they are set (not in their
/// `INPUT_` spelling, except toward remote servers when that is listed).
pub const OWN_CREDENTIALS: &[&str] = &[
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
    "CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR",
    "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
    "CLAUDE_CODE_WEBSOCKET_AUTH_FILE_DESCRIPTOR",
    "CCR_AGENT_PROXY_TOKEN_FILE_DESCRIPTOR",
    "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
    "CLAUDE_CODE_SLACK_TAG_TOKEN",
    "CLAUDE_CODE_HFI_BEARER_TOKEN",
    "CLAUDE_BRIDGE_OAUTH_TOKEN",
    "CLAUDE_TRUSTED_DEVICE_TOKEN",
    "AGENT_PROXY_AUTH_TOKEN",
    "CLAUDE_CODE_MCP_SERVE_AUTH_TOKEN",
    "CLAUDE_BG_AUTH_SNAPSHOT_PATH",
    "CLAUDE_BG_SOCKET_TOKENS_PATH",
    "CLAUDE_BG_RV_AUTH",
    "CLAUDE_BG_PTY_AUTH",
    "CLAUDE_BG_CLAIM_AUTH",
];

/// More of Claude Code's own secrets, blanked like [`OWN_CREDENTIALS`] and
/// also in their `INPUT_` spelling.
pub const OWN_SECRETS: &[&str] = &[
    "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
    "CLAUDE_SESSION_INGRESS_TOKEN_FILE",
    "CLAUDE_CODE_HOST_CREDS_FILE",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "MCP_CLIENT_SECRET",
    "MCP_XAA_IDP_CLIENT_SECRET",
    "ENVIRONMENT_SERVICE_KEY",
    "SELF_HOSTED_RUNNER_POOL_SECRET",
    "SELF_HOSTED_RUNNER_ENVIRONMENT_SECRET",
];

/// Names scrub mode keeps although they look secret.
pub const SCRUB_KEPT: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
];

/// Claude Code settings that look secret but are not (scrub mode keeps
/// them), besides `CLAUDE_CODE_SKIP_*_AUTH`.
pub const SCRUB_NOT_SECRET: &[&str] = &[
    "CLAUDE_CODE_CLIENT_KEY",
    "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
    "CLAUDE_CODE_PROXY_AUTH_HELPER_TTL_MS",
    "CLAUDE_CODE_ENABLE_PROXY_AUTH_HELPER",
    "CLAUDE_CODE_AUTH_FAIL_EXIT_MS",
    "CLAUDE_CODE_ENABLE_TOKEN_USAGE_ATTACHMENT",
    "CLAUDE_CODE_IDLE_TOKEN_THRESHOLD",
    "CLAUDE_CODE_RESUME_TOKEN_THRESHOLD",
    "CLAUDE_CODE_ARG_KEY_SHAPE",
];

/// Words that make a name secret-looking as a whole word (`^` or `_`
/// before, end, `_` or a digit after).
pub const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "KEY",
    "AUTH",
    "COOKIE",
    "PAT",
    "DSN",
    "WEBHOOK",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "APIKEY",
    "ACCESSKEY",
    "SECRETKEY",
    "ACCOUNTKEY",
    "PRIVATEKEY",
    "AUTHKEY",
    "SSHKEY",
    "SIGNINGKEY",
    "MASTERKEY",
    "DEPLOYKEY",
    "ENCRYPTIONKEY",
    "PGPASSWORD",
    "SSHPASS",
];

/// Words that count in the plural too (`KEYS`, `SECRETS`).
pub const SECRET_PLURALS: &[&str] = &["KEY", "SECRET", "PASSWORD", "CREDENTIAL"];

/// Words that count only after `_` (`DB_PWD`, `SMTP_PASS`).
pub const SECRET_SUFFIXES: &[&str] = &["PWD", "PASS", "JWT"];

/// Words that count at the end of any word (`APITOKEN`, `DBPASSWORD`).
pub const SECRET_ENDINGS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE"];

/// Prefixes of per-registry credential families; a name with one of them
/// is a credential when it names a user or looks secret.
pub const FAMILY_PREFIXES: &[&str] = &[
    "INPUT_",
    "ORG_GRADLE_PROJECT_",
    "POETRY_PYPI_TOKEN_",
    "POETRY_HTTP_BASIC_",
    "CARGO_REGISTRIES_",
    "CONAN_LOGIN_USERNAME_",
    "CONAN_PASSWORD_",
];

/// Families whose every member is a credential.
pub const FAMILIES_ALL_CREDENTIALS: &[&str] = &["POETRY_HTTP_BASIC_", "CONAN_LOGIN_USERNAME_"];

/// Bundler settings (`BUNDLE_<SETTING>__…`) that are not credentials.
pub const BUNDLE_SETTINGS: &[&str] = &[
    "BUILD", "LOCAL", "MIRROR", "PATH", "WITH", "WITHOUT", "CACHE", "DISABLE", "IGNORE", "ONLY",
];

/// Where an expanded value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// A stdio server's `command`, `args` or `env` value.
    Stdio,
    /// A remote (sse, http, ws) server's `url` or header value.
    Remote,
}

/// Why Claude Code expands a placeholder to `""`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The name is on Claude Code's list of credential names, which it
    /// never sends to remote servers.
    Credential,
    /// A credential family Claude Code never sends to remote servers
    /// (`CARGO_REGISTRIES_*_TOKEN`, `GIT_CONFIG_*`, `BUNDLE_*__*` …).
    Family,
    /// One of Claude Code's own credentials or settings (`MCP_CLIENT_SECRET`,
    /// `CLAUDE_CODE_OAUTH_TOKEN`, `OTEL_*` …), never handed to any server.
    ClaudeCode,
    /// Scrub mode (`CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`) is on and the name
    /// looks secret.
    Scrub,
}

impl Reason {
    /// Why, in a few words: "on its list of credential names".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Credential => "on its list of credential names",
            Self::Family => "a credential family it never sends to remote servers",
            Self::ClaudeCode => "one of its own credentials or settings",
            Self::Scrub => "secret-looking, and `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` is on",
        }
    }
}

/// Whether `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` holds a value Claude Code
/// reads as on (`1`, `true`, `yes`, `on`, any case, spaces trimmed). Nothing
/// else turns it on for MCP servers: `GITHUB_ACTIONS=true` alone does not
/// (2.1.332 uses that default only for its Bash tool's environment).
pub fn scrub_on(value: Option<&str>) -> bool {
    value.is_some_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Why Claude Code expands `${name}` to `""` in a value going to `sink`,
/// if it does. For [`Sink::Stdio`] that happens only when the variable is
/// set (an unset one keeps its default, or stays literal); for
/// [`Sink::Remote`] always, default or not.
pub fn reason(name: &str, sink: Sink, scrub: bool) -> Option<Reason> {
    let upper = name.to_ascii_uppercase();
    if is_own(&upper) {
        return Some(Reason::ClaudeCode);
    }
    if sink == Sink::Remote {
        if in_list(&upper, REMOTE.iter().copied()) {
            return Some(Reason::Credential);
        }
        if is_family(&upper) {
            return Some(Reason::Family);
        }
    }
    (scrub && looks_secret_to_scrub(name)).then_some(Reason::Scrub)
}

/// Whether Claude Code (outside scrub mode) sends `${name}` empty to
/// remote servers.
pub fn blanked_toward_remote(name: &str) -> bool {
    reason(name, Sink::Remote, false).is_some()
}

/// A name for a value going to a remote server's `url` or headers: `name`
/// itself unless Claude Code blanks it there, else `PREFIX_NAME` (the
/// server's name as a variable prefix), `MCP_NAME` or `MCPENV_NAME`, the
/// first one it does not blank. `NPM_TOKEN` for server `registry` becomes
/// `REGISTRY_NPM_TOKEN`.
pub fn remote_safe_name(name: &str, prefix: &str) -> String {
    if !blanked_toward_remote(name) {
        return name.to_string();
    }
    let prefixed = (!prefix.is_empty() && !name.starts_with(&format!("{prefix}_")))
        .then(|| format!("{prefix}_{name}"));
    prefixed
        .into_iter()
        .chain([format!("MCP_{name}")])
        .find(|candidate| !blanked_toward_remote(candidate))
        // `MCPENV_` starts no name of any list or family.
        .unwrap_or_else(|| format!("MCPENV_{name}"))
}

/// Every name blanked toward remote servers by list, as Claude Code builds
/// it: the credential list without [`KEPT_FOR_REMOTE`], then
/// [`REMOTE_EXTRA_NAMES`].
static REMOTE: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    CREDENTIAL_NAMES
        .iter()
        .filter(|name| !KEPT_FOR_REMOTE.contains(name))
        .chain(REMOTE_EXTRA_NAMES)
        .copied()
        .collect()
});

/// `upper` is one of `names` (compared upper-cased) or its `INPUT_` form.
fn in_list<'a>(upper: &str, mut names: impl Iterator<Item = &'a str>) -> bool {
    let bare = upper.strip_prefix("INPUT_");
    names.any(|name| {
        let name = name.to_ascii_uppercase();
        name == upper || bare == Some(name.as_str())
    })
}

fn is_own(upper: &str) -> bool {
    OWN_CREDENTIALS.contains(&upper)
        || in_list(upper, OWN_SECRETS.iter().copied())
        || is_claude_setting(upper)
}

/// Claude Code's telemetry and service settings (`KLt`): `OTEL_*`,
/// `CLAUDE_CODE_ARTIFACT*_BASE_URL`, its memory API, each also as `INPUT_*`.
fn is_claude_setting(upper: &str) -> bool {
    let name = upper.strip_prefix("INPUT_").unwrap_or(upper);
    (name.starts_with("CLAUDE_CODE_ARTIFACT") && name.ends_with("_BASE_URL"))
        || name == "CLAUDE_CODE_MEMORY_API_BASE_URL"
        || name == "CLAUDE_CODE_MEMORY_API_TOKEN"
        || name.starts_with("OTEL_")
        || name == "CLAUDE_CODE_OTEL_DIAG_STDERR"
}

fn pattern(source: &str) -> Regex {
    // Invariant: every caller passes a literal pattern that the tests compile.
    Regex::new(source).expect("constant pattern is valid")
}

static GIT_CONFIG: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^GIT_CONFIG_(?:PARAMETERS|(?:KEY|VALUE)_[0-9]+)$"));
static CARGO_REGISTRIES: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^CARGO_REGISTRIES_[A-Z0-9_]+_TOKEN$"));
static USER_NAME: LazyLock<Regex> = LazyLock::new(|| pattern(r"(?i)USER(?:_?NAME)?_?[0-9]*$"));
/// Claude Code's secret-name pattern; its lookahead `(?=$|[_0-9])` is
/// consumed here instead, which matches the same names.
static SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    pattern(&format!(
        r"(?i)(?:(?:^|_)(?:{}|(?:{})S)|_(?:{})|(?:{}))(?:$|[_0-9])",
        SECRET_WORDS.join("|"),
        SECRET_PLURALS.join("|"),
        SECRET_SUFFIXES.join("|"),
        SECRET_ENDINGS.join("|")
    ))
});
static CONNECTION_STRING: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"(?i)CONN(?:ECT(?:ION)?)?_?STR(?:ING)?S?(?:$|[_0-9])"));
static BUNDLE_KEY: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^(?:[A-Za-z0-9]+(?:___[A-Za-z0-9]+)*__)+[A-Za-z]{2,}$"));
static GIT_CONFIG_KEY: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^GIT_CONFIG_KEY_[0-9][A-Za-z0-9_]*$"));
static GIT_CONFIG_ANY: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^GIT_CONFIG_(?:COUNT|PARAMETERS|(?:KEY|VALUE)_[0-9]+)$"));
static PROXY: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"(?i)^(?:(?:https?|ftp|all|no)_proxy|npm_config_(?:https?_)?proxy|npm_config_noproxy|yarn_proxy|(?:yarn|global_agent|docker|claude_code)_(?:https?|no)_proxy|cloudsdk_proxy_[a-z]+|electron_get_use_proxy)$",
    )
});
static CAMEL_LOWER_UPPER: LazyLock<Regex> = LazyLock::new(|| pattern(r"([a-z0-9])([A-Z])"));
static CAMEL_ACRONYM: LazyLock<Regex> = LazyLock::new(|| pattern(r"([A-Z])([A-Z][a-z])"));
static SKIP_AUTH: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^CLAUDE_CODE_SKIP_[A-Z0-9_]+_AUTH$"));

/// Credential families never expanded toward remote servers (`$Rt`).
fn is_family(upper: &str) -> bool {
    let name = upper.strip_prefix("INPUT_").unwrap_or(upper);
    is_claude_setting(upper)
        || GIT_CONFIG.is_match(name)
        || CARGO_REGISTRIES.is_match(name)
        || is_registry_credential(name)
        || is_bundler_credential(name)
}

/// A per-registry credential (`ORG_GRADLE_PROJECT_…`, `POETRY_HTTP_BASIC_…`
/// …) naming a user or looking secret.
fn is_registry_credential(name: &str) -> bool {
    let name = name.replace('-', "_");
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("INPUT_").unwrap_or(&upper);
    FAMILY_PREFIXES
        .iter()
        .any(|prefix| upper.starts_with(prefix))
        && (FAMILIES_ALL_CREDENTIALS
            .iter()
            .any(|prefix| bare.starts_with(prefix))
            || USER_NAME.is_match(&name)
            || looks_secret(&name))
}

/// Bundler's `BUNDLE_<HOST>__<…>` credentials (not its settings such as
/// `BUNDLE_PATH__…`, unless those name a host themselves).
fn is_bundler_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let rest = upper.strip_prefix("INPUT_").unwrap_or(&upper);
    let Some(rest) = rest.strip_prefix("BUNDLE_") else {
        return false;
    };
    let setting = BUNDLE_SETTINGS.iter().any(|setting| {
        rest.strip_prefix(setting)
            .and_then(|tail| tail.strip_prefix("__"))
            .is_some_and(|tail| !BUNDLE_KEY.is_match(tail))
    });
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    !setting && word.contains("__")
}

/// `camelCase` split into `camel_Case`, as Claude Code does before
/// matching (`OAuth` and `NextAuth` count as one word).
fn words(name: &str) -> String {
    let name = name
        .replace("OAuth", "Oauth")
        .replace("NextAuth", "Nextauth");
    let name = CAMEL_LOWER_UPPER.replace_all(&name, "${1}_${2}");
    CAMEL_ACRONYM.replace_all(&name, "${1}_${2}").into_owned()
}

/// Claude Code's secret-looking name (`XCe`).
fn looks_secret(name: &str) -> bool {
    let trimmed = if name.len() >= 6 && name[..6].eq_ignore_ascii_case("AUTH0_") {
        &name[6..]
    } else {
        name
    };
    let name_ = trimmed.replace('-', "_");
    let split = words(&name_);
    (SECRET_NAME.is_match(&name_)
        || SECRET_NAME.is_match(&split)
        || CONNECTION_STRING.is_match(&name_)
        || CONNECTION_STRING.is_match(&split)
        || is_bundler_credential(&name_))
        && !GIT_CONFIG_KEY.is_match(name)
}

/// What scrub mode blanks by name (`SKs`): secret-looking names except
/// proxies, `GIT_CONFIG_*`, the GitHub tokens and some Claude Code settings.
fn looks_secret_to_scrub(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let exempt = GIT_CONFIG_ANY.is_match(name)
        || PROXY.is_match(name)
        || SCRUB_KEPT.contains(&upper.as_str())
        || SCRUB_NOT_SECRET.contains(&upper.as_str())
        || SKIP_AUTH.is_match(&upper);
    !exempt && looks_secret(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_real_binary_blanked_toward_a_remote_server() {
        // `claude mcp list` against a loopback server (see
        // tests/cli/claude_blanked.rs), every variable set.
        for name in [
            "NPM_TOKEN",
            "npm_token",
            "INPUT_NPM_TOKEN",
            "SONAR_TOKEN",
            "VAULT_TOKEN",
            "NODE_AUTH_TOKEN",
            "HTTPS_PROXY",
            "MCP_CLIENT_SECRET",
            "CARGO_REGISTRIES_FOO_TOKEN",
            "OTEL_FOO",
            "ACTIONS_RUNTIME_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(blanked_toward_remote(name), "{name}");
        }
        for name in [
            "MY_API_KEY",
            "GITHUB_TOKEN",
            "HF_TOKEN",
            "SENTRY_AUTH_TOKEN",
            "ACTIONS_CACHE_URL",
            "INPUT_PATH",
        ] {
            assert!(!blanked_toward_remote(name), "{name}");
        }
    }

    #[test]
    fn stdio_values_lose_only_claude_codes_own_credentials_unless_scrubbing() {
        assert_eq!(
            reason("MCP_CLIENT_SECRET", Sink::Stdio, false),
            Some(Reason::ClaudeCode)
        );
        assert_eq!(
            reason("CLAUDE_CODE_OAUTH_TOKEN", Sink::Stdio, false),
            Some(Reason::ClaudeCode)
        );
        for name in ["NPM_TOKEN", "MY_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN"] {
            assert_eq!(reason(name, Sink::Stdio, false), None, "{name}");
        }
        // With CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 the real binary blanked
        // these in args and env, and kept the others.
        for name in [
            "NPM_TOKEN",
            "MY_API_KEY",
            "DB_PASSWORD",
            "HF_TOKEN",
            "myApiKey",
        ] {
            assert_eq!(
                reason(name, Sink::Stdio, true),
                Some(Reason::Scrub),
                "{name}"
            );
        }
        for name in [
            "GITHUB_TOKEN",
            "PLAIN_VALUE",
            "HTTPS_PROXY",
            "TOKENIZER_PATH",
        ] {
            assert_eq!(reason(name, Sink::Stdio, true), None, "{name}");
        }
    }

    #[test]
    fn families() {
        for name in [
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_VALUE_0",
            "CARGO_REGISTRIES_MY_REG_TOKEN",
            "ORG_GRADLE_PROJECT_mavenPassword",
            "ORG_GRADLE_PROJECT_MAVEN_USER",
            "POETRY_HTTP_BASIC_PRIVATE_URL",
            "POETRY_PYPI_TOKEN_PRIVATE",
            "BUNDLE_GEMS__EXAMPLE__COM",
            "INPUT_BUNDLE_RUBYGEMS__PKG__GITHUB__COM",
        ] {
            assert_eq!(
                reason(name, Sink::Remote, false),
                Some(Reason::Family),
                "{name}"
            );
        }
        for name in [
            "GIT_CONFIG_COUNT",
            "ORG_GRADLE_PROJECT_VERSION",
            "BUNDLE_PATH__SYSTEM",
            "BUNDLE_JOBS",
            "CARGO_REGISTRIES_X_INDEX",
        ] {
            assert_eq!(reason(name, Sink::Remote, false), None, "{name}");
        }
    }

    #[test]
    fn claude_code_settings_are_its_own() {
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "CLAUDE_CODE_ARTIFACTS_FOO_BASE_URL",
        ] {
            assert_eq!(
                reason(name, Sink::Stdio, false),
                Some(Reason::ClaudeCode),
                "{name}"
            );
        }
    }

    #[test]
    fn the_lists_hold_what_the_binary_holds() {
        assert_eq!(CREDENTIAL_NAMES.len(), 97);
        assert_eq!(REMOTE.len(), 97 - 3 + 28);
        assert!(!CREDENTIAL_NAMES.contains(&"NPM_TOKEN"));
        assert!(REMOTE_EXTRA_NAMES.contains(&"NPM_TOKEN"));
    }

    #[test]
    fn remote_safe_names_are_never_blanked() {
        assert_eq!(remote_safe_name("MY_API_KEY", "X"), "MY_API_KEY");
        assert_eq!(
            remote_safe_name("NPM_TOKEN", "REGISTRY"),
            "REGISTRY_NPM_TOKEN"
        );
        assert_eq!(remote_safe_name("VAULT_TOKEN", "VAULT"), "MCP_VAULT_TOKEN");
        // `INPUT_NPM_TOKEN` is blanked too.
        assert_eq!(remote_safe_name("NPM_TOKEN", "INPUT"), "MCP_NPM_TOKEN");
        for name in CREDENTIAL_NAMES
            .iter()
            .chain(REMOTE_EXTRA_NAMES)
            .chain(OWN_CREDENTIALS)
            .chain(OWN_SECRETS)
            .copied()
            .chain(["OTEL_X", "CARGO_REGISTRIES_A_TOKEN", "GIT_CONFIG_KEY_1"])
        {
            let safe = remote_safe_name(&name.to_ascii_uppercase(), "SERVER");
            assert!(!blanked_toward_remote(&safe), "{name} -> {safe}");
            assert!(!blanked_toward_remote(&format!("MCPENV_{name}")), "{name}");
        }
    }

    #[test]
    fn scrub_is_on_only_when_the_variable_says_so() {
        for on in ["1", "true", " YES ", "On"] {
            assert!(scrub_on(Some(on)), "{on}");
        }
        for off in ["0", "false", "", "2"] {
            assert!(!scrub_on(Some(off)), "{off}");
        }
        assert!(!scrub_on(None));
    }
}
