//! Benchmark of the plain file work on a large `~/.claude.json`:
//! `cargo bench --bench store` prints a Markdown table of medians and peak
//! memory for `list`, `get`, `add` and `remove`, and, when Claude Code is
//! installed, the same for `claude mcp`.
//!
//! Wall time is measured around each process; peak memory (max RSS) comes
//! from GNU time (`/usr/bin/time`, Debian package `time`) when present.
//! Set `MCPENV_BENCH_RUNS` to change the number of runs (default 15).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "../tests/support/big_config.rs"]
mod big_config;

/// A benchmarked command: label, arguments, and the command that undoes it.
type Case<'a> = (&'a str, &'a [&'a str], Option<&'a [&'a str]>);

struct Measurement {
    millis: Vec<f64>,
    peaks_kib: Vec<u64>,
}

fn main() {
    let runs: usize = std::env::var("MCPENV_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(15);
    let temp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(temp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let text = big_config::claude_json(2000, 75, project.to_str().unwrap());
    let fixture = root.join("fixture.json");
    std::fs::write(&fixture, &text).unwrap();
    let size_mb = text.len() as f64 / 1e6;
    println!(
        "Benchmark: `~/.claude.json` of {size_mb:.1} MB (2000 projects x 75 history entries), {runs} runs each, {} cores\n",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!("| command | median | min | max | peak memory |");
    println!("|---|---|---|---|---|");

    let mcpenv = PathBuf::from(env!("CARGO_BIN_EXE_mcpenv"));
    let reset = || {
        std::fs::copy(&fixture, home.join(".claude.json"))
            .map(|_| ())
            .unwrap();
    };
    reset();
    let cases: [Case; 7] = [
        ("mcpenv list", &["list"], None),
        ("mcpenv get local-db", &["get", "local-db"], None),
        (
            "mcpenv add (local)",
            &["add", "bench", "--", "npx", "-y", "pkg"],
            Some(&["remove", "-s", "local", "bench"]),
        ),
        (
            "mcpenv remove (local)",
            &["remove", "-s", "local", "local-db"],
            Some(&["add", "local-db", "--", "uvx", "mcp-server-sqlite"]),
        ),
        (
            "mcpenv remove (local, scope found)",
            &["remove", "local-db"],
            Some(&["add", "local-db", "--", "uvx", "mcp-server-sqlite"]),
        ),
        (
            "mcpenv add (user)",
            &["add", "-s", "user", "bench", "--", "npx", "-y", "pkg"],
            Some(&["remove", "-s", "user", "bench"]),
        ),
        (
            "mcpenv remove (user)",
            &["remove", "-s", "user", "memory"],
            Some(&[
                "add",
                "-s",
                "user",
                "memory",
                "--",
                "npx",
                "-y",
                "@modelcontextprotocol/server-memory",
            ]),
        ),
    ];
    for (label, args, undo) in cases {
        let measurement = measure(runs, || {
            let timed = run(&mcpenv, args, &home, &project);
            if let Some(undo) = undo {
                run(&mcpenv, undo, &home, &project);
            }
            timed
        });
        report(label, &measurement);
    }

    // The same edits keeping no copy for `mcpenv undo`: what the journal costs.
    let no_copies = [("MCPENV_UNDO", "off")];
    for (label, args, undo) in cases
        .iter()
        .filter(|(label, _, _)| label.starts_with("mcpenv add"))
    {
        let measurement = measure(runs, || {
            let timed = run_with(&mcpenv, args, &home, &project, &no_copies);
            if let Some(undo) = undo {
                run_with(&mcpenv, undo, &home, &project, &no_copies);
            }
            timed
        });
        report(&format!("{label}, no undo copy"), &measurement);
    }

    let copy = root.join("copy.json");
    report(
        "copying the file (`cp`)",
        &measure(runs, || {
            run(
                Path::new("cp"),
                &[fixture.to_str().unwrap(), copy.to_str().unwrap()],
                &home,
                &project,
            )
        }),
    );

    if let Some(claude) = find_on_path("claude") {
        let claude_runs = runs.min(5);
        for (label, args) in [
            ("claude mcp list", &["mcp", "list"][..]),
            ("claude mcp get local-db", &["mcp", "get", "local-db"]),
            (
                "claude mcp add (local)",
                &["mcp", "add", "bench", "--", "/nonexistent/bench"],
            ),
            (
                "claude mcp remove (local)",
                &["mcp", "remove", "-s", "local", "local-db"],
            ),
        ] {
            // Claude Code rewrites the whole file (and drops `history`), so
            // every run starts again from the fixture.
            let measurement = measure(claude_runs, || {
                reset();
                run(&claude, args, &home, &project)
            });
            report(label, &measurement);
        }
    } else {
        println!("\n(Claude Code not installed: `claude mcp` not measured)");
    }
}

fn measure(runs: usize, mut once: impl FnMut() -> (f64, Option<u64>)) -> Measurement {
    once(); // warm the page cache
    let mut measurement = Measurement {
        millis: Vec::new(),
        peaks_kib: Vec::new(),
    };
    for _ in 0..runs {
        let (millis, peak) = once();
        measurement.millis.push(millis);
        measurement.peaks_kib.extend(peak);
    }
    measurement
}

/// Runs one command; returns its wall time in ms and its peak RSS in KiB.
fn run(program: &Path, args: &[&str], home: &Path, project: &Path) -> (f64, Option<u64>) {
    run_with(program, args, home, project, &[])
}

/// [`run`] with `extra` variables set.
fn run_with(
    program: &Path,
    args: &[&str],
    home: &Path,
    project: &Path,
    extra: &[(&str, &str)],
) -> (f64, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    let mut command = if time.is_file() {
        let mut command = Command::new(time);
        command.args(["-f", "%M"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    command
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("MCP_TIMEOUT", "2000")
        .envs(extra.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command.output().unwrap();
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    assert!(
        output.status.success(),
        "{program:?} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peak = time
        .is_file()
        .then(|| {
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .and_then(|line| line.trim().parse().ok())
        })
        .flatten();
    (millis, peak)
}

fn report(label: &str, measurement: &Measurement) {
    let mut millis = measurement.millis.clone();
    millis.sort_by(f64::total_cmp);
    let median = millis[millis.len() / 2];
    let peak = measurement.peaks_kib.iter().max().map_or_else(
        || "n/a".to_string(),
        |kib| format!("{:.0} MiB", *kib as f64 / 1024.0),
    );
    println!(
        "| {label} | {median:.0} ms | {:.0} ms | {:.0} ms | {peak} |",
        millis[0],
        millis[millis.len() - 1]
    );
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    which::which(name).ok()
}
