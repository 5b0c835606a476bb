//! Tests against the world: configuration files taken unchanged from public
//! repositories (`../shared/corpus/realworld`, outside the repository and
//! never copied into it; skipped, saying so, when it is absent).
//!
//! For every `.mcp.json` there, placed as a fresh project's `.mcp.json`:
//! no read command panics, hangs or changes a byte; adding then removing a
//! server gives back the same bytes (or, for a file mcpenv will not write,
//! is refused with exit 1 and leaves it as it was); and the servers `list`
//! shows as loaded are the ones Claude Code lists for that file, asked live
//! when the pinned Claude Code is installed, else as recorded in
//! `claude-code-mcp-list.tsv`. Every other client's file is scanned without
//! a panic or a hang.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude::{PINNED_CLAUDE_CODE, claude};
use crate::harness::{CommandOutput, TestEnv};

/// Bound on any one run of mcpenv.
const MCPENV_DEADLINE: Duration = Duration::from_secs(30);
/// Bound on one `claude mcp list` (its servers stay pending: none starts).
const CLAUDE_DEADLINE: Duration = Duration::from_secs(90);
/// Files worked on at once (each job runs mcpenv a dozen times and Claude
/// Code once).
const WORKERS: usize = 6;

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/realworld");
    if dir.is_dir() {
        Some(dir)
    } else {
        crate::skips::skip_without_data(&format!(
            "the real-world corpus is not at `{}` (it lives outside the repository)",
            dir.display()
        ));
        None
    }
}

/// The files of one folder of the corpus, sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Runs `command`, killing it at `deadline`; `Err` when it had to be
/// killed.
fn run_bounded(mut command: Command, deadline: Duration) -> Result<std::process::Output, String> {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start: {error}"))?;
    let pid = child.id();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(child.wait_with_output());
    });
    match receive.recv_timeout(deadline) {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(error)) => Err(format!("cannot wait: {error}")),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            Err(format!(
                "still running after {} s; killed",
                deadline.as_secs()
            ))
        }
    }
}

/// `mcpenv ARGS` in the project, bounded; panics (with the file named) on a
/// hang, a crash or a panic.
fn mcpenv(env: &TestEnv, file: &str, args: &[&str]) -> CommandOutput {
    let output = run_bounded(env.command(&env.project, args), MCPENV_DEADLINE)
        .unwrap_or_else(|error| panic!("{file}: `mcpenv {}` {error}", args.join(" ")));
    let out = CommandOutput::new(output, &env.root);
    assert!(
        out.code == 0 || out.code == 1,
        "{file}: `mcpenv {}` exited {}:\n{out}",
        args.join(" "),
        out.code
    );
    out
}

/// Every file under `root` but mcpenv's own state (locks), byte for byte.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            if relative.starts_with("state") {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, files);
            } else {
                files.insert(relative, fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(root, root, &mut files);
    files
}

#[track_caller]
fn assert_unchanged(before: &BTreeMap<PathBuf, Vec<u8>>, root: &Path, file: &str, what: &str) {
    let after = tree(root);
    for (path, bytes) in before {
        assert!(
            after.get(path) == Some(bytes),
            "{file}: `{what}` changed or removed `{}`",
            path.display()
        );
    }
    for path in after.keys() {
        assert!(
            before.contains_key(path),
            "{file}: `{what}` created `{}`",
            path.display()
        );
    }
}

/// The names `claude mcp list` prints, in order: each server line is
/// `NAME: COMMAND-OR-URL - STATUS`. A name is matched against `known` first
/// (a name may hold `: `), else taken up to the first `: `.
fn claude_listed(output: &str, known: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_servers = false;
    for line in output.lines() {
        if line.starts_with("Checking MCP server health") {
            in_servers = true;
            continue;
        }
        if !in_servers {
            continue;
        }
        if line.trim().is_empty() {
            if names.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with("MCP config diagnostics") {
            break;
        }
        let name = known
            .iter()
            .filter(|name| line.starts_with(&format!("{name}: ")))
            .max_by_key(|name| name.len())
            .cloned()
            .or_else(|| line.split_once(": ").map(|(name, _)| name.to_string()));
        if let Some(name) = name {
            names.push(name);
        }
    }
    names
}

/// Runs the pinned Claude Code's `claude mcp list` with `file` as a fresh
/// project's `.mcp.json`, in a world of its own.
fn claude_mcp_list(claude: &Path, file: &Path, known: &[String]) -> Result<Vec<String>, String> {
    let env = TestEnv::new();
    fs::write(env.project.join(".mcp.json"), fs::read(file).unwrap()).unwrap();
    claude_mcp_list_in(claude, &env, known).map(|(names, _)| names)
}

/// `claude mcp list` in `env`'s project: the names, and all it printed.
fn claude_mcp_list_in(
    claude: &Path,
    env: &TestEnv,
    known: &[String],
) -> Result<(Vec<String>, String), String> {
    let mut command = crate::claude::hermetic_claude(claude, env, &env.project, &["mcp", "list"]);
    command.env("MCP_TIMEOUT", "3000");
    let output = run_bounded(command, CLAUDE_DEADLINE)?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "exit {:?}: {text}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok((claude_listed(&text, known), text.into_owned()))
}

/// `claude-code-mcp-list.tsv`: file (relative to the corpus) → names.
fn recorded(corpus: &Path) -> BTreeMap<String, Vec<String>> {
    let text = fs::read_to_string(corpus.join("claude-code-mcp-list.tsv")).unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut columns = line.split('\t');
            let file = columns.next()?;
            let _parsed = columns.next()?;
            let names: Vec<String> = serde_json::from_str(columns.next()?).ok()?;
            Some((file.to_string(), names))
        })
        .collect()
}

/// What mcpenv makes of one `.mcp.json`; panics on any broken promise.
fn mcpenv_on(file: &Path, label: &str) -> Outcome {
    let env = TestEnv::new();
    let mcp_json = env.project.join(".mcp.json");
    fs::write(&mcp_json, fs::read(file).unwrap()).unwrap();
    let before = tree(&env.root);

    let listed = mcpenv(&env, label, &["list", "--json"]);
    let json = listed.json();
    let servers = json["servers"].as_array().cloned().unwrap_or_default();
    let errors = json["errors"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        listed.code,
        i32::from(!errors.is_empty()),
        "{label}: list exits 1 exactly when a file does not load:\n{listed}"
    );
    let name = |server: &Value| server["name"].as_str().unwrap_or_default().to_string();
    let loaded: Vec<String> = servers
        .iter()
        .filter(|server| server["scope"] == "project")
        .filter(|server| !matches!(server["status"].as_str(), Some("skipped" | "reserved")))
        .map(name)
        .collect();
    let mut all: Vec<String> = Vec::new();
    for server in &servers {
        if !all.contains(&name(server)) {
            all.push(name(server));
        }
    }
    let reads: Vec<Vec<&str>> = [vec!["list"], vec!["check"], vec!["scan"]]
        .into_iter()
        .chain(all.iter().map(|name| vec!["get", "--", name.as_str()]))
        .collect();
    for args in &reads {
        let _ = mcpenv(&env, label, args);
    }
    assert_unchanged(&before, &env.root, label, "list, get, check, scan");

    // Add then remove: the same bytes, or a refusal that leaves the file.
    let loads = errors.is_empty();
    let added = mcpenv(
        &env,
        label,
        &["add", "-s", "project", "zz-probe", "--", "echo", "x"],
    );
    let mut wrote_unloaded = false;
    if added.code == 1 {
        assert!(!loads, "{label}: add refused a file that loads:\n{added}");
        assert_unchanged(&before, &env.root, label, "a refused add");
    } else if loads {
        assert_ne!(
            fs::read(&mcp_json).unwrap(),
            before[Path::new("project/.mcp.json")]
        );
        let removed = mcpenv(&env, label, &["remove", "zz-probe", "-s", "project"]);
        assert_eq!(removed.code, 0, "{label}: remove:\n{removed}");
        assert_unchanged(&before, &env.root, label, "add then remove");
    } else {
        // A file Claude Code does not load, that `add` still writes to
        // (servers at the top level get an `mcpServers` next to them):
        // refusing it is `add`'s business, reported below.
        wrote_unloaded = true;
    }
    Outcome {
        loaded,
        all,
        wrote_unloaded,
    }
}

/// What [`mcpenv_on`] found.
struct Outcome {
    /// The project servers `list` shows as loaded.
    loaded: Vec<String>,
    /// Every name `list` shows.
    all: Vec<String>,
    /// Whether `add` wrote to a file Claude Code does not load.
    wrote_unloaded: bool,
}

#[test]
fn real_mcp_json_files_read_as_claude_code_reads_them() {
    let Some(corpus) = corpus() else {
        return;
    };
    let files = files_in(&corpus.join("mcp-json"));
    assert!(!files.is_empty(), "no `.mcp.json` files in the corpus");
    let claude = claude();
    let recorded = recorded(&corpus);
    let reference = match &claude {
        Some(_) => format!("Claude Code {PINNED_CLAUDE_CODE}, run live"),
        None => "claude-code-mcp-list.tsv (recorded with Claude Code 2.1.197)".to_string(),
    };
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    type Row = (String, Vec<String>, Result<Vec<String>, String>);
    let not_loaded = AtomicUsize::new(0);
    let results: Mutex<Vec<Row>> = Mutex::new(Vec::new());
    let wrote_unloaded: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(index) else {
                        break;
                    };
                    let label = format!("mcp-json/{}", file.file_name().unwrap().to_string_lossy());
                    let outcome = std::panic::catch_unwind(|| mcpenv_on(file, &label));
                    let Outcome {
                        loaded,
                        all,
                        wrote_unloaded: wrote,
                    } = match outcome {
                        Ok(outcome) => outcome,
                        Err(panic) => {
                            let message = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                                .unwrap_or_default();
                            failures.lock().unwrap().push(message);
                            continue;
                        }
                    };
                    not_loaded.fetch_add(all.len() - loaded.len(), Ordering::Relaxed);
                    if wrote {
                        wrote_unloaded.lock().unwrap().push(label.clone());
                    }
                    let theirs = match &claude {
                        Some(claude) => claude_mcp_list(claude, file, &all),
                        None => recorded
                            .get(&label)
                            .cloned()
                            .ok_or_else(|| "not in claude-code-mcp-list.tsv".to_string()),
                    };
                    results.lock().unwrap().push((label, loaded, theirs));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let mut agreements = 0;
    let mut disagreements = Vec::new();
    let mut tsv_differs = Vec::new();
    for (label, ours, theirs) in &results {
        match theirs {
            Ok(theirs) if theirs == ours => agreements += 1,
            Ok(theirs) => disagreements.push(format!(
                "{label}: mcpenv loads {ours:?}, Claude Code lists {theirs:?}"
            )),
            Err(error) => disagreements.push(format!("{label}: no reference: {error}")),
        }
        if claude.is_some()
            && let (Ok(theirs), Some(old)) = (theirs, recorded.get(label))
            && theirs != old
        {
            tsv_differs.push(format!(
                "{label}: {PINNED_CLAUDE_CODE} lists {theirs:?}, the tsv (2.1.197) {old:?}"
            ));
        }
    }
    eprintln!(
        "real-world corpus: {} `.mcp.json` files in {:.1} s; reference: {reference}",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    eprintln!(
        "  {agreements} agree on the servers loaded, {} disagree, {} broke a promise; {} entries shown as not loaded (skipped or reserved)",
        disagreements.len(),
        failures.len(),
        not_loaded.load(Ordering::Relaxed)
    );
    for line in &disagreements {
        eprintln!("  disagreement: {line}");
    }
    for line in &tsv_differs {
        eprintln!("  note: {line}");
    }
    for label in wrote_unloaded.into_inner().unwrap() {
        eprintln!(
            "  note: {label}: Claude Code does not load it, and `add -s project` wrote to it"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        disagreements.is_empty(),
        "mcpenv and {reference} disagree:\n{}",
        disagreements.join("\n")
    );
}

#[test]
fn other_clients_files_are_scanned_without_a_panic_or_a_hang() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut scanned = 0;
    for client in [
        "claude-desktop",
        "cursor",
        "vscode",
        "gemini",
        "codex",
        "zed",
        "windsurf",
    ] {
        for file in files_in(&corpus.join(client)) {
            let env = TestEnv::new();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let copy = env.root.join("input").join(&name);
            fs::create_dir_all(copy.parent().unwrap()).unwrap();
            fs::write(&copy, fs::read(&file).unwrap()).unwrap();
            let before = tree(&env.root);
            let label = format!("{client}/{name}");
            let _ = mcpenv(&env, &label, &["scan", copy.to_str().unwrap()]);
            let _ = mcpenv(&env, &label, &["scan", "--json", copy.to_str().unwrap()]);
            assert_unchanged(&before, &env.root, &label, "scan");
            scanned += 1;
        }
    }
    eprintln!("real-world corpus: scanned {scanned} files of other clients");
    assert!(scanned > 0);
}

/// Every file of the corpus scanned at once: the findings (file, server,
/// field, rule; never a value) are exactly those recorded in
/// `tests/data/realworld-scan-findings.tsv`, so a rule that starts firing
/// on real configs, or stops finding what it found, fails here until a
/// person has looked and recorded it.
#[test]
fn scan_finds_in_real_configs_only_what_is_recorded() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(&corpus).unwrap() {
        let dir = entry.unwrap().path();
        if dir.is_dir() {
            files.extend(files_in(&dir));
        }
    }
    files.sort();
    let env = TestEnv::new();
    let mut args = vec!["scan", "--json", "--only-paths"];
    args.extend(files.iter().map(|file| file.to_str().unwrap()));
    let report = env.run(&args).json();
    assert_eq!(report["files_scanned"], files.len(), "{report}");
    // The report names files by their real path.
    let root = format!("{}/", corpus.canonicalize().unwrap().display());
    let mut found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            let text = |key: &str| finding[key].as_str().unwrap_or_default().to_string();
            let file = text("file");
            let file = file.strip_prefix(&root).unwrap_or(&file);
            format!(
                "{file}\t{}\t{}\t{}",
                text("server"),
                text("field"),
                text("rule")
            )
        })
        .collect();
    found.sort();
    let recorded: Vec<String> = include_str!("../data/realworld-scan-findings.tsv")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(str::to_string)
        .collect();
    assert_eq!(
        found, recorded,
        "scan's findings on the real-world corpus changed: review them, then record them"
    );
}

#[test]
fn claude_list_lines_are_parsed_by_name() {
    let output = "Checking MCP server health…\n\na: b: npx x - ⏸ Pending approval (run `claude` to approve)\nweb: https://x (HTTP) - ⏸ Pending approval\n\nMCP config diagnostics ⚠\n";
    assert_eq!(
        claude_listed(output, &["a: b".to_string()]),
        ["a: b", "web"]
    );
    assert!(
        claude_listed(
            "No MCP servers configured. Use `claude mcp add` to add a server.\n",
            &[]
        )
        .is_empty()
    );
}

/// The cases the loader was fixed for, each checked against the pinned
/// Claude Code itself: the names `list` shows as loaded are the ones
/// `claude mcp list` lists, and a disabled server is listed as disabled.
#[test]
fn own_fixtures_agree_with_claude_code() {
    let Some(claude) = claude() else {
        crate::skips::skip(&format!(
            "Claude Code {PINNED_CLAUDE_CODE} is not installed in target/tools; `scripts/test` installs it (needs npm)"
        ));
        return;
    };
    let fixtures: &[(&str, &str)] = &[
        (
            "skipped entries",
            r#"{"mcpServers": {"urlnotype": {"url": "https://example.com/mcp"}, "nocmd": {"args": []}, "sdk": {"type": "sdk", "name": "x"}, "bogus": {"type": "bogus"}, "emptycmd": {"command": ""}, "badtimeout": {"command": "/nonexistent/x", "timeout": 1.5}, "ok": {"command": "/nonexistent/ok"}, "web": {"type": "http", "url": "https://example.com/mcp"}}}"#,
        ),
        (
            "reserved names",
            r#"{"mcpServers": {"workspace": {"command": "x"}, "claude.ai": {"command": "x"}, "__proto__": {"command": "x"}, "Workspace": {"command": "/nonexistent/w"}}}"#,
        ),
        (
            "a trailing comma",
            r#"{"mcpServers": {"a": {"command": "/nonexistent/a"},}}"#,
        ),
        (
            "servers at the top level",
            r#"{"continuum": {"command": "continuum"}}"#,
        ),
        ("no mcpServers", "{}"),
        ("empty", ""),
        (
            "a placeholder command",
            r#"{"mcpServers": {"venv": {"command": "${CLAUDE_PROJECT_DIR:-.}/.venv/bin/python"}}}"#,
        ),
        (
            "interpreter scripts",
            r#"{"mcpServers": {"ps": {"command": "powershell", "args": ["-Command", "$roots = 1"]}, "sh": {"command": "sh", "args": ["-c", "echo $HOME"]}}}"#,
        ),
    ];
    for (what, text) in fixtures {
        let env = TestEnv::new();
        env.write("project/.mcp.json", text);
        let ours = mcpenv(&env, what, &["list", "--json"]).json();
        let servers = ours["servers"].as_array().unwrap();
        let all: Vec<String> = servers
            .iter()
            .map(|server| server["name"].as_str().unwrap().to_string())
            .collect();
        let loaded: Vec<String> = servers
            .iter()
            .filter(|server| !matches!(server["status"].as_str(), Some("skipped" | "reserved")))
            .map(|server| server["name"].as_str().unwrap().to_string())
            .collect();
        let (theirs, printed) = claude_mcp_list_in(&claude, &env, &all)
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        assert_eq!(loaded, theirs, "{what}: Claude Code printed:\n{printed}");
    }

    // Disabled for the project: listed by both, started by neither.
    let env = TestEnv::new();
    env.write(
        "home/.claude.json",
        &serde_json::json!({
            "mcpServers": {"off": {"command": "/nonexistent/off"}},
            "projects": {env.key(): {"disabledMcpServers": ["off"]}},
        })
        .to_string(),
    );
    let ours = mcpenv(&env, "disabled", &["list", "--json"]).json();
    assert_eq!(ours["servers"][0]["status"], "disabled");
    let (theirs, printed) = claude_mcp_list_in(&claude, &env, &["off".to_string()]).unwrap();
    assert_eq!(theirs, ["off"]);
    assert!(
        printed
            .contains("off: /nonexistent/off  - ⊘ Disabled for this project (re-enable via /mcp)"),
        "{printed}"
    );
}
