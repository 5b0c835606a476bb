//! Claude Code's credential blanking, checked against the pinned binary:
//! the lists in `src/config/claude_code/blanked.rs` are read again from its
//! embedded JavaScript, and a loopback server records what `claude mcp
//! list` and `mcpenv probe` really send. Skipped, saying so, without it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use mcpenv::config::claude_code::blanked;
use regex::bytes::Regex;

use crate::claude::{PINNED_CLAUDE_CODE, claude, claude_command};
use crate::harness::TestEnv;

/// The part of the pinned binary's embedded JavaScript that holds the
/// expansion code (bun keeps the source as text; searching all 400 MB is
/// slow in a debug build): from well before the first `INPUT_` spelling
/// of a list to well after the remote set.
fn javascript() -> Option<Vec<u8>> {
    let Some(path) = claude() else {
        crate::skips::skip(&format!(
            "Claude Code {PINNED_CLAUDE_CODE} is not installed in target/tools; `scripts/test` installs it (needs npm)"
        ));
        return None;
    };
    // `node_modules/.bin/claude` is a link to the compiled binary.
    let binary = std::fs::read(std::fs::canonicalize(path).unwrap()).unwrap();
    let offsets = |needle: &str| -> Vec<usize> {
        memchr::memmem::find_iter(&binary, needle.as_bytes()).collect()
    };
    let anchors: Vec<usize> = offsets("INPUT_${e}`")
        .into_iter()
        .chain(offsets("remoteSink:new Set"))
        .collect();
    let (Some(first), Some(last)) = (anchors.iter().min(), anchors.iter().max()) else {
        panic!(
            "Claude Code {PINNED_CLAUDE_CODE} has no `INPUT_${{e}}` spelling of a list: read the code again"
        );
    };
    const MARGIN: usize = 6 << 20;
    let start = first.saturating_sub(MARGIN);
    let end = (last + MARGIN).min(binary.len());
    Some(binary[start..end].to_vec())
}

fn regex(source: &str) -> Regex {
    Regex::new(source).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A minified identifier.
const ID: &str = r"[A-Za-z0-9_$]+";

/// Every string array (or `new Set([...])` of strings) bound to a name:
/// name, offset and the items' source, in order.
struct Arrays(Vec<(String, usize, Vec<u8>)>);

impl Arrays {
    fn new(js: &[u8]) -> Self {
        let definition = regex(&format!(
            r#"[,; (]({ID})=(?:new Set\()?\[((?:"[A-Za-z0-9_]*"|\.\.\.{ID}|,)*)\]"#
        ));
        Self(
            definition
                .captures_iter(js)
                .map(|captures| {
                    (
                        text(&captures[1]),
                        captures.get(0).unwrap().start(),
                        captures[2].to_vec(),
                    )
                })
                .collect(),
        )
    }

    /// The strings of the array `name` defined nearest before `at`
    /// (minified names repeat across modules), `...other` spreads resolved
    /// the same way.
    fn strings(&self, name: &str, at: usize) -> Vec<String> {
        let (_, start, items) = self
            .0
            .iter()
            .rev()
            .find(|(found, start, _)| found == name && *start < at)
            .unwrap_or_else(|| panic!("no string array `{name}` before offset {at}"));
        let item = regex(&format!(r#""([^"]*)"|\.\.\.({ID})"#));
        item.captures_iter(items)
            .flat_map(|captures| match (captures.get(1), captures.get(2)) {
                (Some(string), _) => vec![text(string.as_bytes())],
                (None, Some(spread)) => self.strings(&text(spread.as_bytes()), *start),
                (None, None) => unreachable!("one of the groups matched"),
            })
            .collect()
    }
}

/// The one match of `source` in the JavaScript: its capture groups as text
/// and its offset.
fn unique(js: &[u8], source: &str) -> (Vec<String>, usize) {
    let pattern = regex(source);
    let all: Vec<_> = pattern.captures_iter(js).collect();
    assert_eq!(
        all.len(),
        1,
        "expected exactly one match of {source} in Claude Code {PINNED_CLAUDE_CODE}, found {}: the code changed; read it again and update src/config/claude_code/blanked.rs",
        all.len()
    );
    let captures = &all[0];
    let groups = captures
        .iter()
        .skip(1)
        .map(|group| text(group.map_or(&[][..], |group| group.as_bytes())))
        .collect();
    (groups, captures.get(0).unwrap().start())
}

/// Resolves `name=X.flatMap((e)=>[e,`INPUT_${e}`])` to `X`, the nearest
/// such definition before `at`.
fn input_spelled(js: &[u8], name: &str, at: usize) -> (String, usize) {
    let pattern = regex(&format!(
        r"[,; (]{}=({ID})\.flatMap\(\(e\)=>\[e,`INPUT_\$\{{e\}}`\]\)",
        regex::escape(name)
    ));
    let found = pattern
        .captures_iter(js)
        .filter(|captures| captures.get(0).unwrap().start() < at)
        .last()
        .unwrap_or_else(|| panic!("`{name}` is not an `INPUT_` spelling of a list"));
    (text(&found[1]), found.get(0).unwrap().start())
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_string()).collect()
}

#[test]
fn the_blanked_names_are_the_pinned_binarys() {
    let Some(js) = javascript() else { return };
    let arrays = Arrays::new(&js);
    // `lse()`: the sets the MCP expansion checks names against.
    let (groups, _) = unique(
        &js,
        &format!(
            r"function {ID}\(\)\{{let e=new Set\(\[\.\.\.({ID})\(\)\.map\(\(n\)=>n\.toUpperCase\(\)\),\.\.\.({ID})\]\);return\{{plain:e,remoteSink:new Set\(\[\.\.\.e,\.\.\.({ID})\]\)\}}\}}"
        ),
    );
    let [own_fn, own_input_set, remote_set] = [&groups[0], &groups[1], &groups[2]];

    // The remote set: the credential list (and its `INPUT_` spelling)
    // without the names kept for remote servers, plus more names.
    let (groups, _) = unique(
        &js,
        &format!(
            r#"{}=new Set\(({ID})\.map\(\(e\)=>e\.toUpperCase\(\)\)\)"#,
            regex::escape(remote_set)
        ),
    );
    let remote_list = &groups[0];
    let (groups, at) = unique(
        &js,
        &format!(
            r#"{}=\[\.\.\.({ID})\.filter\(\(e\)=>!({ID})\.has\(e\.replace\(/\^INPUT_/,""\)\)\),\.\.\.({ID})\.flatMap\(\(e\)=>\[e,`INPUT_\$\{{e\}}`\]\)\]"#,
            regex::escape(remote_list)
        ),
    );
    let (credentials_spelled, kept, extra) = (&groups[0], &groups[1], &groups[2]);
    let (credentials, spelled_at) = input_spelled(&js, credentials_spelled, at);
    assert_eq!(
        arrays.strings(&credentials, spelled_at),
        owned(blanked::CREDENTIAL_NAMES),
        "CREDENTIAL_NAMES"
    );
    assert_eq!(
        arrays.strings(kept, at),
        owned(blanked::KEPT_FOR_REMOTE),
        "KEPT_FOR_REMOTE"
    );
    assert_eq!(
        arrays.strings(extra, at),
        owned(blanked::REMOTE_EXTRA_NAMES),
        "REMOTE_EXTRA_NAMES"
    );

    // The plain set (stdio values too): Claude Code's own credentials, and
    // its own secrets in both spellings.
    let (groups, at) = unique(
        &js,
        &format!(
            r"function {}\(\)\{{let e=process\.env,n=[^;]*;return\[\.\.\.({ID})\.filter\(",
            regex::escape(own_fn)
        ),
    );
    assert_eq!(
        arrays.strings(&groups[0], at),
        owned(blanked::OWN_CREDENTIALS),
        "OWN_CREDENTIALS"
    );
    let (groups, at) = unique(
        &js,
        &format!(
            r"{}=new Set\(({ID})\.map\(\(e\)=>e\.toUpperCase\(\)\)\)",
            regex::escape(own_input_set)
        ),
    );
    let (own_secrets, at) = input_spelled(&js, &groups[0], at);
    assert_eq!(
        arrays.strings(&own_secrets, at),
        owned(blanked::OWN_SECRETS),
        "OWN_SECRETS"
    );

    // The secret-name pattern of scrub mode and of the credential families.
    let (groups, at) = unique(
        &js,
        &format!(
            r#"=new RegExp\(`\(\(\^\|_\)\(\$\{{({ID})\.join\("\|"\)\}}\|\(\$\{{({ID})\.join\("\|"\)\}}\)S\)\|_\(\$\{{({ID})\.join\("\|"\)\}}\)\|\(\$\{{({ID})\.join\("\|"\)\}}\)\)\(\?=\$\|\[_0-9\]\)`,"i"\)"#
        ),
    );
    for (name, expected) in groups.iter().zip([
        blanked::SECRET_WORDS,
        blanked::SECRET_PLURALS,
        blanked::SECRET_SUFFIXES,
        blanked::SECRET_ENDINGS,
    ]) {
        assert_eq!(arrays.strings(name, at), owned(expected), "{name}");
    }
    let (groups, at) = unique(
        &js,
        &format!(
            r#"=new RegExp\(`\^\(\?:\$\{{({ID})\.join\("\|"\)\}}\)`,"i"\),{ID}=new RegExp\(`\^\(\?:INPUT_\)\?\(\?:\$\{{({ID})\.join\("\|"\)\}}\)`,"i"\)"#
        ),
    );
    assert_eq!(
        arrays.strings(&groups[0], at),
        owned(blanked::FAMILY_PREFIXES)
    );
    assert_eq!(
        arrays.strings(&groups[1], at),
        owned(blanked::FAMILIES_ALL_CREDENTIALS)
    );
    let (groups, at) = unique(
        &js,
        &format!(r"=new RegExp\(`\^\(\?:INPUT_\)\?BUNDLE_\(\?!\(\?:\$\{{({ID})\.join"),
    );
    assert_eq!(
        arrays.strings(&groups[0], at),
        owned(blanked::BUNDLE_SETTINGS)
    );
    let (groups, at) = unique(
        &js,
        &format!(
            r"return!{ID}\(e\)&&{ID}\(e\)&&!({ID})\.has\(n\)&&!({ID})\(n\)\}}var {ID}=new Set\({ID}\.map"
        ),
    );
    assert_eq!(
        arrays.strings(&groups[0], at),
        owned(blanked::SCRUB_KEPT),
        "SCRUB_KEPT"
    );
    let (groups, at) = unique(
        &js,
        &format!(
            r"function {}\(e\)\{{return ({ID})\.has\(e\)\|\|",
            regex::escape(&groups[1])
        ),
    );
    assert_eq!(
        arrays.strings(&groups[0], at),
        owned(blanked::SCRUB_NOT_SECRET),
        "SCRUB_NOT_SECRET"
    );

    // The rules translated by hand, as the binary spells them.
    for rule in [
        r#"/^GIT_CONFIG_(?:PARAMETERS|(?:KEY|VALUE)_\d+)$/.test(n)||/^CARGO_REGISTRIES_[A-Z0-9_]+_TOKEN$/.test(n)"#,
        r#"e.startsWith("CLAUDE_CODE_ARTIFACT")&&e.endsWith("_BASE_URL")"#,
        r#"n.startsWith("OTEL_")||n==="CLAUDE_CODE_OTEL_DIAG_STDERR""#,
        r#"/USER(?:_?NAME)?_?[0-9]*$/i.test(n)"#,
        r#"ee=/CONN(ECT(ION)?)?_?STR(ING)?S?(?=$|[_0-9])/i"#,
        r#"Cn="(?:[A-Za-z0-9]+(?:___[A-Za-z0-9]+)*__)+[A-Za-z]{2,}""#,
        r#"M??=be(e)||be(process.env.GITHUB_ACTIONS)&&!Jt(e)"#,
        r#"let n=s.CLAUDE_CODE_SUBPROCESS_ENV_SCRUB===!0;"#,
    ] {
        assert!(
            memchr::memmem::find(&js, rule.as_bytes()).is_some(),
            "Claude Code {PINNED_CLAUDE_CODE} no longer has `{rule}`: read the rule again"
        );
    }
}

/// A loopback HTTP server that records the headers of every request and
/// answers 500 (Claude Code and probe then report a failure, which is not
/// the point: the headers are).
struct Recorder {
    port: u16,
    requests: Arc<Mutex<Vec<BTreeMap<String, String>>>>,
}

impl Recorder {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests: Arc<Mutex<Vec<BTreeMap<String, String>>>> = Arc::default();
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut headers = BTreeMap::new();
                let mut length = 0;
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    continue;
                }
                headers.insert(":request".to_string(), line.trim().to_string());
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        let name = name.trim().to_ascii_lowercase();
                        if name == "content-length" {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        headers.insert(name, value.trim().to_string());
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                seen.lock().unwrap().push(headers);
                let _ = stream.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            }
        });
        Self { port, requests }
    }

    /// The headers of the first POST (the `initialize` request).
    fn first_post(&self) -> Option<BTreeMap<String, String>> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .find(|headers| headers[":request"].starts_with("POST"))
            .cloned()
    }

    fn clear(&self) {
        self.requests.lock().unwrap().clear();
    }
}

#[test]
fn claude_code_and_probe_send_credential_names_empty_to_remote_servers() {
    let mut env = TestEnv::new();
    let recorder = Recorder::start();
    let url = format!("http://127.0.0.1:{}/mcp", recorder.port);
    env.run(&[
        "add",
        "-s",
        "user",
        "-t",
        "http",
        "remote",
        &url,
        "-H",
        "Authorization: Bearer ${NPM_TOKEN}",
        "-H",
        "X-Other: ${MY_API_KEY}",
    ])
    .expect_code(0);
    env.set_env("NPM_TOKEN", "npm-value-4f2a");
    env.set_env("MY_API_KEY", "other-value-9c1d");

    let expected = |headers: &BTreeMap<String, String>| {
        (
            headers.get("authorization").cloned(),
            headers.get("x-other").cloned(),
        )
    };
    if let Some(mut command) = claude_command(&env, &env.project, &["mcp", "list"]) {
        let output = command
            .env("NPM_TOKEN", "npm-value-4f2a")
            .env("MY_API_KEY", "other-value-9c1d")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let headers = recorder
            .first_post()
            .expect("Claude Code sent a request to the loopback server");
        // The header value `Bearer ` loses its trailing space on the wire.
        assert_eq!(
            expected(&headers),
            (Some("Bearer".into()), Some("other-value-9c1d".into())),
            "{headers:?}"
        );
        // Silently: `claude mcp list` says nothing about it.
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(!said.contains("NPM_TOKEN"), "{said}");
    } else {
        eprintln!("(the probe half of this test still runs)");
    }

    recorder.clear();
    let out = env.run(&["probe", "remote", "--timeout", "5"]);
    let headers = recorder.first_post().expect("probe sent a request");
    assert_eq!(
        expected(&headers),
        (Some("Bearer".into()), Some("other-value-9c1d".into())),
        "{headers:?}\n{out}"
    );
    assert!(
        out.stdout.contains("`${NPM_TOKEN}` sent empty"),
        "the report says so:\n{out}"
    );

    recorder.clear();
    let out = env.run(&["probe", "remote", "--timeout", "5", "--send-blanked"]);
    let headers = recorder.first_post().expect("probe sent a request");
    assert_eq!(
        expected(&headers),
        (
            Some("Bearer npm-value-4f2a".into()),
            Some("other-value-9c1d".into())
        ),
        "{headers:?}\n{out}"
    );
    out.assert_no_secret(&["npm-value-4f2a"]);
}

/// What a stdio server gets from `claude mcp list` with `extra` set, every
/// variable of `NAMES` set to `value-of-NAME`.
fn stdio_start(extra: &[(&str, &str)]) -> Option<crate::claude_launch::Started> {
    const NAMES: [&str; 6] = [
        "NPM_TOKEN",
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "MCP_CLIENT_SECRET",
        "PLAIN_VALUE",
        "DB_PASSWORD",
    ];
    let env = TestEnv::new();
    let record = env.root.join("record.txt");
    let server = crate::claude_launch::recording_server(&env, &record, &NAMES);
    let args: Vec<String> = NAMES.iter().map(|name| format!("${{{name}}}")).collect();
    let env_map: serde_json::Map<String, serde_json::Value> = NAMES
        .iter()
        .map(|name| (format!("E_{name}"), format!("${{{name}}}").into()))
        .collect();
    env.write(
        "home/.claude.json",
        &serde_json::json!({"mcpServers": {"rec": {"type": "stdio", "command": server, "args": args, "env": env_map}}})
            .to_string(),
    );
    let mut command = claude_command(&env, &env.project, &["mcp", "list"])?;
    for name in NAMES {
        command.env(name, format!("value-of-{name}"));
    }
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let started = crate::claude_launch::first_start(&record, std::time::Duration::from_secs(1));
    assert!(
        started.is_some(),
        "claude mcp list started nothing: {output:?}"
    );
    started
}

/// `value-of-NAME`, or `""` where mcpenv says Claude Code blanks `NAME`
/// for a stdio server.
fn predicted(scrub: bool) -> Vec<String> {
    [
        "NPM_TOKEN",
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "MCP_CLIENT_SECRET",
        "PLAIN_VALUE",
        "DB_PASSWORD",
    ]
    .iter()
    .map(|name| {
        if blanked::reason(name, blanked::Sink::Stdio, scrub).is_some() {
            String::new()
        } else {
            format!("value-of-{name}")
        }
    })
    .collect()
}

#[test]
fn stdio_values_lose_what_mcpenv_predicts_with_and_without_scrub_mode() {
    let Some(plain) = stdio_start(&[]) else {
        return;
    };
    assert_eq!(plain.args, predicted(false));
    assert_eq!(
        plain.args,
        [
            "value-of-NPM_TOKEN",
            "value-of-MY_API_KEY",
            "value-of-GITHUB_TOKEN",
            "",
            "value-of-PLAIN_VALUE",
            "value-of-DB_PASSWORD"
        ]
    );
    // `GITHUB_ACTIONS=true` alone changes nothing for MCP servers.
    let actions = stdio_start(&[("GITHUB_ACTIONS", "true")]).unwrap();
    assert_eq!(actions, plain);
    // Scrub mode needs bubblewrap, or Claude Code does not start.
    if which::which("bwrap").is_err() {
        crate::skips::skip("the scrub-mode half: bubblewrap (`bwrap`) is not installed");
        return;
    }
    let scrubbed = stdio_start(&[("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1")]).unwrap();
    assert_eq!(scrubbed.args, predicted(true));
    assert_eq!(
        scrubbed.args,
        [
            "",
            "",
            "value-of-GITHUB_TOKEN",
            "",
            "value-of-PLAIN_VALUE",
            ""
        ]
    );
    // And the secret-looking variables are not inherited either.
    assert_eq!(
        scrubbed.env,
        [
            "NPM_TOKEN=(unset)",
            "MY_API_KEY=(unset)",
            "GITHUB_TOKEN=value-of-GITHUB_TOKEN",
            "MCP_CLIENT_SECRET=(unset)",
            "PLAIN_VALUE=value-of-PLAIN_VALUE",
            "DB_PASSWORD=(unset)"
        ]
    );
}
