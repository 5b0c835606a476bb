//! Deterministic generator of a realistic, large `~/.claude.json`.
//!
//! Shared by the integration tests (byte preservation) and the benchmark
//! (`benches/store.rs`), so both measure the same shape of file: thousands of
//! project entries with long `history` arrays, escapes, odd numbers and a few
//! MCP servers, as real files look after months of use.

use std::fmt::Write as _;

/// Builds a `~/.claude.json` with `projects` entries of `history_len` history
/// items each; `local_key` gets a project entry with one server so local-scope
/// edits land in the middle of the file, not at its end.
pub fn claude_json(projects: usize, history_len: usize, local_key: &str) -> String {
    let mut out = String::with_capacity(projects * (history_len * 240 + 900) + 4096);
    out.push_str("{\n  \"numStartups\": 412,\n  \"installMethod\": \"npm-global\",\n  \"autoUpdates\": true,\n");
    out.push_str("  \"theme\": \"dark\",\n  \"verbose\": false,\n  \"costThreshold\": 1.50,\n  \"maxRetries\": 1e3,\n");
    out.push_str("  \"bigCounter\": 12345678901234567890,\n  \"tipsHistory\": {\n    \"new-user-warmup\": 7,\n    \"memory-command\": 102\n  },\n");
    out.push_str(
        "  \"userID\": \"5e0f6c2d8b7a41f09c3e2d1b0a9f8e7d6c5b4a3928170605f4e3d2c1b0a99887\",\n",
    );
    out.push_str("  \"firstStartTime\": \"2025-03-14T09:26:53.589Z\",\n");
    out.push_str("  \"mcpServers\": {\n    \"memory\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n");
    out.push_str("      \"args\": [\n        \"-y\",\n        \"@modelcontextprotocol/server-memory\"\n      ],\n      \"env\": {}\n    }\n  },\n");
    out.push_str("  \"projects\": {\n");
    let middle = projects / 2;
    for p in 0..projects {
        let key = if p == middle {
            local_key.to_string()
        } else {
            format!("/home/dev/src/project-{p:05}")
        };
        let _ = write!(
            out,
            "    \"{}\": {{\n      \"allowedTools\": [],\n      \"history\": [\n",
            escape(&key)
        );
        for h in 0..history_len {
            let _ = write!(
                out,
                "        {{\n          \"display\": \"refactor the parser in module {h} \\u00e9t\\u00e9 \\\"quoted\\\"\\nsecond line with tab\\there {p}\",\n          \"pastedContents\": {{}}\n        }}{}\n",
                if h + 1 < history_len { "," } else { "" }
            );
        }
        out.push_str("      ],\n      \"mcpContextUris\": [],\n");
        if p == middle {
            out.push_str("      \"mcpServers\": {\n        \"local-db\": {\n          \"type\": \"stdio\",\n          \"command\": \"uvx\",\n");
            out.push_str("          \"args\": [\n            \"mcp-server-sqlite\"\n          ],\n          \"env\": {}\n        }\n      },\n");
        } else {
            out.push_str("      \"mcpServers\": {},\n");
        }
        out.push_str(
            "      \"enabledMcpjsonServers\": [],\n      \"disabledMcpjsonServers\": [],\n",
        );
        let _ = write!(
            out,
            "      \"hasTrustDialogAccepted\": {},\n      \"projectOnboardingSeenCount\": {},\n      \"lastCost\": 0.{:04},\n      \"lastAPIDuration\": {},\n      \"lastSessionId\": \"{:08x}-1b2c-4d3e-8f90-a1b2c3d4e5f6\"\n    }}{}\n",
            p % 3 == 0,
            p % 5,
            p * 37 % 10_000,
            p * 1009 % 60_000,
            p * 2_654_435_761 % 4_294_967_296,
            if p + 1 < projects { "," } else { "" }
        );
    }
    out.push_str("  },\n  \"oauthAccount\": {\n    \"emailAddress\": \"dev@example.com\",\n    \"organizationRole\": \"admin\"\n  },\n");
    out.push_str(
        "  \"cachedChangelog\": \"# Changelog\\n\\n## 2.1.197\\n- Fixed \\u2026 things\"\n}",
    );
    out
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}
