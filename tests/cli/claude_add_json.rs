//! `mcpenv add-json` stores what `claude mcp add-json` (Claude Code
//! 2.1.332) stores: the same inputs through both, the same entries in
//! `~/.claude.json`. Skipped, saying so, without the pinned Claude Code.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;

use crate::claude::{claude, claude_command};
use crate::harness::TestEnv;

/// Inputs Claude Code accepts, with every key it knows in some transport.
const ACCEPTED: &[&str] = &[
    r#"{"env":{"X":"1"},"args":["a.js"],"command":"node","type":"stdio","timeout":5000}"#,
    r#"{"command":"node"}"#,
    r#"{"type":"stdio","command":"node","displayName":"D","discoveryCache":{"x":1},"request_timeout_ms":5000,"bareElicitationCapability":true,"alwaysLoad":true,"role":"comms"}"#,
    r#"{"type":"stdio","command":"node","role":"other","url":"https://x.test/mcp","headers":{"A":"b"}}"#,
    r#"{"type":"http","url":"https://x.test/mcp","headers":{"A":"b"},"displayName":"D","bareElicitationCapability":true,"discoveryCache":true,"orgMaxPermission":"ask","request_timeout_ms":7000}"#,
    r#"{"orgMaxPermission":"ask","toolPermissions":{"t":"allow"},"role":"comms","alwaysLoad":true,"tools":[{"name":"t","permission_policy":"always_ask"}],"timeout":3000,"oauth":{"clientId":"c"},"headersHelper":"h.sh","headers":{"A":"b"},"url":"https://x.test/mcp","type":"http","discoveryCache":false,"bareElicitationCapability":false,"displayName":"Disp","request_timeout_ms":9000}"#,
    r#"{"type":"http","url":"https://x.test/mcp","request_timeout_ms":999999}"#,
    r#"{"type":"streamable-http","url":"https://x.test/mcp","request_timeout_ms":300001}"#,
    r#"{"type":"http","url":"https://x.test/mcp","request_timeout_ms":-5,"displayName":5,"role":"other","orgMaxPermission":"allow"}"#,
    r#"{"type":"http","url":"https://x.test/mcp","request_timeout_ms":"abc","orgMaxPermission":5}"#,
    r#"{"type":"http","url":"https://x.test/mcp","orgMaxPermission":null}"#,
    r#"{"type":"sse","url":"https://x.test/sse","displayName":"S","request_timeout_ms":4000,"timeout":2000}"#,
    r#"{"type":"ws","url":"wss://x.test","displayName":"W","bareElicitationCapability":true,"discoveryCache":true,"request_timeout_ms":4000,"orgMaxPermission":"ask","tools":[],"headersHelper":"h","timeout":100,"alwaysLoad":true,"role":"comms"}"#,
    r#"{"type":"http","url":"https://x.test/mcp","oauth":{"scopes":"a b","extra":1,"xaa":true,"callbackPort":8080,"clientId":"c","authServerMetadataUrl":"https://a.test/x"},"tools":[{"extra":1,"name":"t"}]}"#,
    r#"{"command":"node","url":"https://x.test/mcp"}"#,
];

/// Inputs both refuse.
const REFUSED: &[&str] = &[
    r#"{"type":"http","url":"https://x.test/mcp","discoveryCache":{"x":1}}"#,
    r#"{"type":"stdio","command":"node","bareElicitationCapability":"yes"}"#,
    r#"{"type":"sdk","name":"foo"}"#,
    r#"{"type":"sse-ide","url":"http://127.0.0.1:1/sse","ideName":"x"}"#,
    r#"{"url":"https://x.test/mcp"}"#,
    r#"{"type":"bogus","url":"x"}"#,
    r#"{"type":"http","url":"https://x.test/mcp","timeout":0}"#,
    r#"{"type":"http","url":"https://x.test/mcp","oauth":{"authServerMetadataUrl":"http://a.test/x"}}"#,
    r#"{"type":"http","url":"https://x.test/mcp","tools":[{"name":"t","permission_policy":"never"}]}"#,
    r#"{"type":"http","url":"https://x.test/mcp","toolPermissions":{"t":"deny"}}"#,
    r#"{"type":"stdio","command":"node","timeout":1.5}"#,
];

fn stored(env: &TestEnv, name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(env.home.join(".claude.json")).ok()?;
    let config: Value = serde_json::from_str(&text).unwrap();
    config["mcpServers"].get(name).cloned()
}

/// `claude mcp add-json -s user NAME JSON` (or `-` with `stdin` piped).
fn claude_add(env: &TestEnv, name: &str, json: &str, stdin: Option<&str>) -> i32 {
    let argument = if stdin.is_some() { "-" } else { json };
    let mut command = claude_command(
        env,
        &env.project,
        &["mcp", "add-json", "-s", "user", name, argument],
    )
    .unwrap();
    if stdin.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(text.as_bytes()).unwrap();
    }
    child
        .wait_with_output()
        .unwrap()
        .status
        .code()
        .unwrap_or(-1)
}

#[test]
fn mcpenv_add_json_stores_what_claude_add_json_stores() {
    let mcpenv = TestEnv::new();
    let reference = TestEnv::new();
    if claude().is_none() {
        claude_command(&reference, &reference.project, &[]);
        return;
    }
    for (index, input) in ACCEPTED.iter().enumerate() {
        let name = format!("c{index}");
        assert_eq!(claude_add(&reference, &name, input, None), 0, "{input}");
        mcpenv
            .run(&["add-json", "-s", "user", &name, input])
            .expect_code(0);
        let (ours, theirs) = (stored(&mcpenv, &name), stored(&reference, &name));
        assert!(theirs.is_some(), "{input}");
        // Compared as text: key order is part of what Claude Code stores.
        assert_eq!(
            ours.map(|entry| entry.to_string()),
            theirs.map(|entry| entry.to_string()),
            "{input}"
        );
    }
    for (index, input) in REFUSED.iter().enumerate() {
        let name = format!("r{index}");
        assert_eq!(claude_add(&reference, &name, input, None), 1, "{input}");
        let out = mcpenv.run(&["add-json", "-s", "user", &name, input]);
        assert_eq!(out.code, 2, "{input}\n{out}");
        assert_eq!(stored(&reference, &name), None, "{input}");
        assert_eq!(stored(&mcpenv, &name), None, "{input}");
    }

    // From stdin, the same.
    let input = ACCEPTED[4];
    assert_eq!(claude_add(&reference, "piped", "-", Some(input)), 0);
    let mut child = mcpenv
        .command(&mcpenv.project, &["add-json", "-s", "user", "piped", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(stored(&mcpenv, "piped"), stored(&reference, "piped"));
    // Nothing on stdin: both refuse (Claude Code with exit 1, mcpenv 2).
    assert_eq!(claude_add(&reference, "empty", "-", Some("")), 1);
    assert_eq!(stored(&reference, "empty"), None);

    // Keys no schema knows: Claude Code drops them, mcpenv keeps them (and
    // says so); everything else is the same.
    let input = r#"{"command":"node","extra":{"a":1}}"#;
    assert_eq!(claude_add(&reference, "extra", input, None), 0);
    mcpenv
        .run(&["add-json", "-s", "user", "extra", input])
        .expect_code(0);
    let mut ours = stored(&mcpenv, "extra").unwrap();
    assert_eq!(ours["extra"], serde_json::json!({"a": 1}));
    ours.as_object_mut().unwrap().shift_remove("extra");
    assert_eq!(Some(ours), stored(&reference, "extra"));
}
