//! Other clients' config files from public repositories
//! (`../shared/corpus/realworld/<client>/`, never copied into this
//! repository): each is put where its client reads it in a fresh world, and
//! `import --from CLIENT` (dry run, then for real, project scope) either
//! fails with an `error:` line (exit 1 or 2) or writes servers Claude Code
//! loads: `claude mcp list` names every one (the pinned Claude Code, when
//! installed; else `mcpenv list --json` must not call any of them skipped).
//! Each imported world is then exported to every client: an export either
//! fails with an `error:` line or writes a file that parses, and
//! `export --check` then passes. No run may panic or outlive its deadline.
//! Skipped, saying so, when the corpus is absent.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::harness::{CommandOutput, TestEnv};

/// Each corpus folder: the `--from`/`--to` name, and where the client reads
/// its file, relative to the world's root (`home/`, `project/`).
const CLIENTS: [(&str, &str); 7] = [
    (
        "claude-desktop",
        "home/.config/Claude/claude_desktop_config.json",
    ),
    ("cursor", "project/.cursor/mcp.json"),
    ("vscode", "project/.vscode/mcp.json"),
    ("gemini", "project/.gemini/settings.json"),
    ("codex", "project/.codex/config.toml"),
    ("zed", "project/.zed/settings.json"),
    // Windsurf documents only its user file.
    ("windsurf", "home/.codeium/windsurf/mcp_config.json"),
];

/// How long one mcpenv run may take (a debug build on a busy 2-core box).
const MCPENV_DEADLINE: Duration = Duration::from_secs(30);
/// How long one `claude mcp list` may take.
const CLAUDE_DEADLINE: Duration = Duration::from_secs(90);

/// Waits for `child` until `deadline`, killing it then; its output and exit
/// code, or `None` when it had to be killed.
fn finish(mut child: Child, deadline: Duration) -> Option<(String, String, i32)> {
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    status.map(|status| (stdout, stderr, status.code().unwrap_or(-1)))
}

/// `mcpenv ARGS` in the project, under a deadline.
fn mcpenv(env: &TestEnv, args: &[&str]) -> Result<CommandOutput, String> {
    let child = env
        .command(&env.project, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr, code) = finish(child, MCPENV_DEADLINE)
        .ok_or_else(|| format!("`mcpenv {}` ran past {MCPENV_DEADLINE:?}", args.join(" ")))?;
    let root = env.root.to_str().unwrap();
    Ok(CommandOutput {
        stdout: stdout.replace(root, "[ROOT]"),
        stderr: stderr.replace(root, "[ROOT]"),
        code,
    })
}

/// A run that did not succeed must have failed properly: exit 1 or 2 with
/// an `error:` line. Anything else (a panic, a signal) is a finding.
fn failed_properly(what: &str, out: &CommandOutput) -> Result<(), String> {
    match out.code {
        0 => Ok(()),
        1 | 2 if out.stderr.lines().any(|line| line.starts_with("error: ")) => Ok(()),
        _ => Err(format!("{what}: no proper failure:\n{out}")),
    }
}

/// One corpus file imported into a fresh world.
struct Imported {
    label: String,
    env: TestEnv,
    names: Vec<String>,
}

#[derive(Default)]
struct Tally {
    files: usize,
    imported: usize,
    refused: usize,
    servers: usize,
    exports_written: usize,
    exports_refused: usize,
}

/// The files of one corpus folder, sorted.
fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .collect()
        })
        .unwrap_or_default();
    files.retain(|path| path.is_file());
    files.sort();
    files
}

/// Imports one file: dry run, then for real. `Ok(Err(line))` is a proper
/// refusal, with its error line.
fn import_one(client: &str, place: &str, file: &Path) -> Result<Result<Imported, String>, String> {
    let label = format!(
        "{client}/{}",
        file.file_name().unwrap_or_default().to_string_lossy()
    );
    let env = TestEnv::new();
    let target = env.root.join(place);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(file, &target).unwrap();
    let args = ["import", "--from", client, "-s", "project"];
    let dry = mcpenv(&env, &[&args[..], &["--dry-run"]].concat())
        .map_err(|error| format!("{label}: {error}"))?;
    failed_properly(&format!("{label}: import --dry-run"), &dry)?;
    if env.project.join(".mcp.json").exists() || env.project.join(".env").exists() {
        return Err(format!("{label}: `import --dry-run` wrote files:\n{dry}"));
    }
    let real = mcpenv(&env, &args).map_err(|error| format!("{label}: {error}"))?;
    failed_properly(&format!("{label}: import"), &real)?;
    if real.code != dry.code {
        return Err(format!(
            "{label}: the dry run exited {}, the import {}:\n{dry}\n{real}",
            dry.code, real.code
        ));
    }
    if real.code != 0 {
        let error = real
            .stderr
            .lines()
            .find(|line| line.starts_with("error: "))
            .unwrap_or_default()
            .to_string();
        return Ok(Err(format!("{label}: {error}")));
    }
    let listed = mcpenv(&env, &["list", "--json", "-s", "project"])
        .map_err(|error| format!("{label}: {error}"))?;
    let listed: serde_json::Value = serde_json::from_str(&listed.stdout)
        .map_err(|error| format!("{label}: `list --json` is not JSON ({error}):\n{listed}"))?;
    let names: Vec<String> = listed["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|server| Some(server["name"].as_str()?.to_string()))
        .collect();
    if names.is_empty() {
        return Err(format!(
            "{label}: the import succeeded but lists no servers:\n{real}"
        ));
    }
    for warning in listed["warnings"].as_array().into_iter().flatten() {
        let message = warning["message"].as_str().unwrap_or_default();
        if message.contains("Claude Code skips it") {
            return Err(format!(
                "{label}: imported an entry Claude Code skips: {message}"
            ));
        }
    }
    Ok(Ok(Imported { label, env, names }))
}

/// Exports an imported world to every client, then checks it.
fn export_all(imported: &Imported, tally: &Mutex<Tally>) -> Result<(), String> {
    let Imported { label, env, .. } = imported;
    for (client, _) in CLIENTS {
        let what = format!("{label}: export --to {client}");
        let out =
            mcpenv(env, &["export", "--to", client]).map_err(|error| format!("{what}: {error}"))?;
        failed_properly(&what, &out)?;
        if out.code != 0 {
            tally.lock().unwrap().exports_refused += 1;
            continue;
        }
        for line in out.stderr.lines() {
            let Some(path) = line
                .strip_prefix("Wrote `")
                .and_then(|rest| rest.strip_suffix('`'))
            else {
                continue;
            };
            let path = PathBuf::from(path.replace("[ROOT]", env.root.to_str().unwrap()));
            let text = std::fs::read_to_string(&path)
                .map_err(|error| format!("{what}: cannot read `{}`: {error}", path.display()))?;
            let parsed = if client == "claude-desktop" {
                serde_json::from_str::<serde_json::Value>(&text).map_err(|error| error.to_string())
            } else {
                mcpenv::clients::parse(&path, &text).map_err(|error| error.to_string())
            };
            let value = parsed.map_err(|error| {
                format!("{what}: the written file does not parse ({error}):\n{text}")
            })?;
            let key = match client {
                "vscode" => "servers",
                "zed" => "context_servers",
                "codex" => "mcp_servers",
                _ => "mcpServers",
            };
            if !value.get(key).is_some_and(serde_json::Value::is_object) {
                return Err(format!("{what}: the written file has no `{key}`:\n{text}"));
            }
            tally.lock().unwrap().exports_written += 1;
        }
        let check = mcpenv(env, &["export", "--to", client, "--check"])
            .map_err(|error| format!("{what} --check: {error}"))?;
        if check.code != 0 {
            return Err(format!(
                "{what} --check fails right after the export:\n{check}"
            ));
        }
    }
    Ok(())
}

/// `claude mcp list` in the world's project; the names it lists.
fn claude_lists(claude: &Path, imported: &Imported) -> Result<(), String> {
    let Imported { label, env, names } = imported;
    let child = crate::claude::hermetic_claude(claude, env, &env.project, &["mcp", "list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Project servers nobody approved are listed without being started, so
    // no command from these repositories runs.
    let (stdout, stderr, _) = finish(child, CLAUDE_DEADLINE)
        .ok_or_else(|| format!("{label}: `claude mcp list` ran past {CLAUDE_DEADLINE:?}"))?;
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| {
            !stdout
                .lines()
                .any(|line| line.starts_with(&format!("{name}: ")))
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{label}: `claude mcp list` does not list {missing:?}:\n{stdout}{stderr}\n.mcp.json:\n{}",
            std::fs::read_to_string(env.project.join(".mcp.json")).unwrap_or_default()
        ))
    }
}

/// Runs `work` over `items` on a few threads, collecting findings.
fn in_parallel<T: Sync>(
    items: &[T],
    work: impl Fn(&T) -> Result<(), String> + Sync,
) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let findings = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, 4);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(finding) = work(item) {
                        findings.lock().unwrap().push(finding);
                    }
                }
            });
        }
    });
    findings.into_inner().unwrap()
}

#[test]
fn real_client_files_import_into_entries_claude_code_loads_and_export_back() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/realworld");
    if !corpus.is_dir() {
        crate::skips::skip_without_data(&format!(
            "no corpus at `{}` (a clone of the repository alone has none)",
            corpus.display()
        ));
        return;
    }
    let started = Instant::now();
    let jobs: Vec<(&str, &str, PathBuf)> = CLIENTS
        .iter()
        .flat_map(|(client, place)| {
            corpus_files(&corpus.join(client))
                .into_iter()
                .map(move |file| (*client, *place, file))
        })
        .collect();
    assert!(
        !jobs.is_empty(),
        "the corpus at `{}` has no client files",
        corpus.display()
    );
    let tallies: Vec<(&str, Mutex<Tally>)> = CLIENTS
        .iter()
        .map(|(client, _)| (*client, Mutex::new(Tally::default())))
        .collect();
    let tally = |client: &str| &tallies.iter().find(|(name, _)| *name == client).unwrap().1;
    let worlds: Mutex<Vec<(&str, Imported)>> = Mutex::new(Vec::new());
    let refusals = Mutex::new(Vec::new());
    let mut findings = in_parallel(&jobs, |(client, place, file)| {
        tally(client).lock().unwrap().files += 1;
        let outcome = import_one(client, place, file)?;
        let mut counts = tally(client).lock().unwrap();
        match outcome {
            Ok(imported) => {
                counts.imported += 1;
                counts.servers += imported.names.len();
                drop(counts);
                worlds.lock().unwrap().push((*client, imported));
            }
            Err(refusal) => {
                counts.refused += 1;
                refusals.lock().unwrap().push(refusal);
            }
        }
        Ok(())
    });
    let worlds = worlds.into_inner().unwrap();
    let imports = started.elapsed();
    findings.extend(in_parallel(&worlds, |(client, imported)| {
        export_all(imported, tally(client))
    }));
    let exports = started.elapsed() - imports;
    let claude = crate::claude::claude();
    match &claude {
        Some(claude) => findings.extend(in_parallel(&worlds, |(_, imported)| {
            claude_lists(claude, imported)
        })),
        None => eprintln!(
            "note: Claude Code {} is not installed: imported servers checked with `mcpenv list --json` only",
            crate::claude::PINNED_CLAUDE_CODE
        ),
    }
    eprintln!(
        "real-world client files ({:.0?}: imports {imports:.0?}, exports {exports:.0?}; loading checked by {}):",
        started.elapsed(),
        if claude.is_some() {
            "`claude mcp list`"
        } else {
            "`mcpenv list --json`"
        }
    );
    eprintln!("  client          files  imported  refused  servers  exports written/refused");
    for (client, counts) in &tallies {
        let counts = counts.lock().unwrap();
        eprintln!(
            "  {client:<15} {:>5}  {:>8}  {:>7}  {:>7}  {:>7}/{}",
            counts.files,
            counts.imported,
            counts.refused,
            counts.servers,
            counts.exports_written,
            counts.exports_refused
        );
    }
    let mut refusals = refusals.into_inner().unwrap();
    refusals.sort();
    eprintln!("  refused (each with its error line):");
    for refusal in refusals {
        eprintln!("    {refusal}");
    }
    findings.sort();
    assert!(
        findings.is_empty(),
        "{} finding(s):\n\n{}",
        findings.len(),
        findings.join("\n\n")
    );
}
