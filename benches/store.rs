//! Benchmark of the plain file work on a large `~/.claude.json`:
//! `cargo bench --bench store` prints, for a 25 MB and a 100 MB file, a
//! Markdown table of `list`, `get`, `add` and `remove` (undo on, as users
//! run them). The readers run three ways: trusted (the layout cache holds
//! the file and trusts its fingerprint: the file is older than the cache's
//! 3 s margin, so the bench waits that long after writing it, and only the
//! parts `list` and `get` use are read), racy (the file's `ctime` is moved
//! before each run, as another program's write would: digested as it is
//! read, then the parts used read again where the cached layout says) and cold (`MCPENV_LAYOUT_CACHE=off`:
//! every reading validates the whole file, as the first command after
//! another program changed it does). Each row runs alternately with its physical limit in the same
//! process (`benches/support/paired.rs`): a plain read of the file for the
//! readers, an fsync'd copy of it (`dd … conv=fsync`) for the edits. When
//! Claude Code is installed (on PATH, or in `target/tools` where
//! `scripts/test` puts it), `claude mcp` is measured the same way.
//!
//! Peak memory (max RSS) comes from GNU time (`/usr/bin/time`, Debian
//! package `time`) when present. `MCPENV_BENCH_RUNS` sets the number of
//! runs of each row (default 15 on 25 MB, at most 7 on 100 MB);
//! `MCPENV_BENCH_BIN` another mcpenv binary to measure (an older build, to
//! compare).

use std::path::{Path, PathBuf};

#[path = "../tests/support/big_config.rs"]
mod big_config;
#[path = "support/paired.rs"]
mod paired;

use paired::{Run, Sample};

/// One file size: how many projects of 75 history entries, the edit
/// target for it, and the most runs of each row.
struct Size {
    projects: usize,
    edit_target: f64,
    max_runs: usize,
}

const SIZES: [Size; 2] = [
    Size {
        projects: 2000,
        edit_target: 1.5,
        max_runs: usize::MAX,
    },
    Size {
        projects: 8000,
        edit_target: 2.0,
        max_runs: 7,
    },
];

/// How a reader's row finds the layout cache.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// The file older than the margin and verified: its parts read alone.
    Trusted,
    /// The file just touched: read whole and digested.
    Racy,
    /// `MCPENV_LAYOUT_CACHE=off`: read whole and validated.
    Off,
}

/// A little more than the layout cache's margin: how old a file must be
/// for its fingerprint to be trusted.
const MARGIN: std::time::Duration = std::time::Duration::from_millis(3200);

/// The readers' target: at most twice a plain read of the file.
const READ_TARGET: f64 = 2.0;

/// Peak memory of an edit, at most this many times the file's size.
const PEAK_TARGET: f64 = 1.1;

/// A benchmarked edit: label, arguments, and the command that undoes it.
type Edit<'a> = (&'a str, &'a [&'a str], &'a [&'a str]);

const EDITS: [Edit; 5] = [
    (
        "mcpenv add (local)",
        &["add", "bench", "--", "npx", "-y", "pkg"],
        &["remove", "-s", "local", "bench"],
    ),
    (
        "mcpenv remove (local)",
        &["remove", "-s", "local", "local-db"],
        &["add", "local-db", "--", "uvx", "mcp-server-sqlite"],
    ),
    (
        "mcpenv remove (local, scope found)",
        &["remove", "local-db"],
        &["add", "local-db", "--", "uvx", "mcp-server-sqlite"],
    ),
    (
        "mcpenv add (user)",
        &["add", "-s", "user", "bench", "--", "npx", "-y", "pkg"],
        &["remove", "-s", "user", "bench"],
    ),
    (
        "mcpenv remove (user)",
        &["remove", "-s", "user", "memory"],
        &[
            "add",
            "-s",
            "user",
            "memory",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-memory",
        ],
    ),
];

fn main() {
    let claude = find_claude();
    println!(
        "Benchmark: `~/.claude.json` of 2000 and 8000 projects x 75 history entries, each row run alternately with its limit, {} cores. Readers: trusted = the file older than the layout cache's 3 s margin (the bench waits), only the parts used read; racy = the file's ctime moved before each run, digested as read, then its parts read; cache off = read whole and validated.\n",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    paired::header();
    let mut peaks = Vec::new();
    let mut versus_claude = Vec::new();
    for size in &SIZES {
        let runs = paired::runs(15).min(size.max_runs);
        bench_size(
            size,
            runs,
            claude.as_deref(),
            &mut peaks,
            &mut versus_claude,
        );
    }
    println!("\n| edit | peak memory | file | ratio | target |");
    println!("|---|---|---|---|---|");
    for (work, peak_mib, file_mib) in peaks {
        let ratio = peak_mib / file_mib;
        let verdict = if ratio <= PEAK_TARGET {
            ""
        } else {
            " (missed)"
        };
        println!(
            "| {work} | {peak_mib:.1} MiB | {file_mib:.1} MiB | {ratio:.2}× | ≤ {PEAK_TARGET}×{verdict} |"
        );
    }
    if claude.is_none() {
        println!("\n(Claude Code not installed: `claude mcp` not measured)");
    }
    for line in versus_claude {
        println!("{line}");
    }
}

fn bench_size(
    size: &Size,
    runs: usize,
    claude: Option<&Path>,
    peaks: &mut Vec<(String, f64, f64)>,
    versus_claude: &mut Vec<String>,
) {
    let temp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(temp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let text = big_config::claude_json(size.projects, 75, project.to_str().unwrap());
    let fixture = root.join("fixture.json");
    std::fs::write(&fixture, &text).unwrap();
    let file_mib = text.len() as f64 / f64::from(1 << 20);
    let shown_size = format!("{:.0} MB", text.len() as f64 / 1e6);
    drop(text);
    let claude_json = home.join(".claude.json");
    let reset = || {
        std::fs::copy(&fixture, &claude_json).unwrap();
    };
    reset();
    let program = paired::mcpenv_binary();
    let mcpenv = |args: &[&str]| {
        Run::new(&program, args)
            .dir(&project)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CACHE_HOME", root.join("cache"))
    };
    // Every reading validates the whole file: no layout cache.
    let cold = |args: &[&str]| mcpenv(args).env("MCPENV_LAYOUT_CACHE", "off");
    let read = paired::plain_read(&fixture);
    let copy = paired::fsync_copy(&fixture, &root.join("copy.json"));
    // Claude Code rewrites the whole file (and drops `history`), so every
    // run of it starts again from the fixture; 5 runs are enough for it.
    let claude_paired = |subject: &Run, limit: &Run| {
        paired::paired(
            runs.min(5),
            || {
                reset();
                subject.once()
            },
            || limit.once(),
            || {},
        )
    };

    // Trusted rows need a file older than the cache's margin (3 s); their
    // warm-up run verifies it and records it as trusted.
    std::thread::sleep(MARGIN);
    // A racy file: its `ctime` moved (the bytes kept) before each run.
    let touch = || {
        std::fs::File::options()
            .write(true)
            .open(&claude_json)
            .and_then(|file| file.set_modified(std::time::SystemTime::now()))
            .unwrap();
    };
    for (label, args, way) in [
        ("mcpenv list, trusted", &["list"][..], Way::Trusted),
        (
            "mcpenv get local-db, trusted",
            &["get", "local-db"],
            Way::Trusted,
        ),
        ("mcpenv list, racy (digest)", &["list"][..], Way::Racy),
        (
            "mcpenv get local-db, racy (digest)",
            &["get", "local-db"],
            Way::Racy,
        ),
        ("mcpenv list, cache off", &["list"][..], Way::Off),
        (
            "mcpenv get local-db, cache off",
            &["get", "local-db"],
            Way::Off,
        ),
    ] {
        let subject = if way == Way::Off {
            cold(args)
        } else {
            mcpenv(args)
        };
        let (subjects, limits) = paired::paired(
            runs,
            || subject.once(),
            || read.once(),
            || {
                if way == Way::Racy {
                    touch();
                }
            },
        );
        paired::row(
            &format!("{label}, {shown_size}"),
            &subjects,
            "`cat` of the file",
            &limits,
            READ_TARGET,
        );
    }

    // An edit alternately with the fsync'd copy, undone after each run.
    let edit_paired = |subject: &Run, undo: &Run| {
        paired::paired(
            runs,
            || subject.once(),
            || copy.once(),
            || {
                undo.once();
            },
        )
    };

    for (label, args, undo) in EDITS {
        let subject = mcpenv(args);
        let undo = mcpenv(undo);
        let (subjects, limits) = edit_paired(&subject, &undo);
        let work = format!("{label}, {shown_size}");
        paired::row(
            &work,
            &subjects,
            "fsync'd copy (`dd`)",
            &limits,
            size.edit_target,
        );
        if let Some(peak) = subjects.peak_mib() {
            peaks.push((work, peak, file_mib));
        }
        if label == "mcpenv add (local)"
            && let Some(claude) = claude
        {
            let claude_run = claude_command(claude, &home, &project);
            let claude_add = claude_run(&["mcp", "add", "bench", "--", "/nonexistent/bench"]);
            let (claudes, limits) = claude_paired(&claude_add, &copy);
            row_without_target(
                &format!("claude mcp add (local), {shown_size}"),
                &claudes,
                "fsync'd copy (`dd`)",
                &limits,
            );
            reset();
            versus_claude.push(format!(
                "On {shown_size}, `mcpenv add` (local) took {:.2}× less time than `claude mcp add` (target ≥ 2×).",
                claudes.median() / subjects.median()
            ));
        }
    }

    // The same edits with every reading validating the whole file, and
    // what the undo journal costs: the same edit keeping no copy.
    let (add, remove) = (EDITS[0], EDITS[1]);
    let variants = [
        (add, "cache off", "MCPENV_LAYOUT_CACHE"),
        (remove, "cache off", "MCPENV_LAYOUT_CACHE"),
        (add, "no undo copy", "MCPENV_UNDO"),
    ];
    for ((label, args, undo), variant, off) in variants {
        let subject = mcpenv(args).env(off, "off");
        let undo = mcpenv(undo).env(off, "off");
        let (subjects, limits) = edit_paired(&subject, &undo);
        paired::row(
            &format!("{label}, {variant}, {shown_size}"),
            &subjects,
            "fsync'd copy (`dd`)",
            &limits,
            size.edit_target,
        );
    }

    if let Some(claude) = claude {
        let claude_run = claude_command(claude, &home, &project);
        for (label, args) in [
            ("claude mcp list", &["mcp", "list"][..]),
            ("claude mcp get local-db", &["mcp", "get", "local-db"]),
        ] {
            let (subjects, limits) = claude_paired(&claude_run(args), &read);
            row_without_target(
                &format!("{label}, {shown_size}"),
                &subjects,
                "`cat` of the file",
                &limits,
            );
        }
        reset();
    }
}

/// How to run Claude Code in the bench's HOME, kept from reaching out.
fn claude_command<'a>(
    claude: &'a Path,
    home: &'a Path,
    project: &'a Path,
) -> impl Fn(&[&str]) -> Run + 'a {
    move |args: &[&str]| {
        Run::new(claude, args)
            .dir(project)
            .env("HOME", home)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("MCP_TIMEOUT", "2000")
            .ok(&[0, 1])
    }
}

/// A row for a program mcpenv is compared with, not a target of its own.
fn row_without_target(work: &str, subject: &Sample, limit_name: &str, limit: &Sample) {
    let peak = subject
        .peak_mib()
        .map_or_else(|| "n/a".to_string(), |mib| format!("{mib:.0} MiB"));
    println!(
        "| {work} | {} | {} | {} | {peak} | {limit_name} | {} | {:.2}× | — |",
        paired::shown(subject.median()),
        paired::shown(subject.min()),
        paired::shown(subject.max()),
        paired::shown(limit.median()),
        subject.median() / limit.median(),
    );
}

/// Claude Code: on PATH, else where `scripts/test` installs it
/// (`target/tools`, in this build's target directory or the package's).
fn find_claude() -> Option<PathBuf> {
    if let Ok(claude) = which::which("claude") {
        return Some(claude);
    }
    let installed = Path::new("tools/node_modules/.bin/claude");
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    [
        target_dir,
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    ]
    .into_iter()
    .map(|dir| dir.join(installed))
    .find(|claude| claude.is_file())
}
