//! Benchmarks of secret scanning and of what mcpenv learns to mask, each
//! paired with its limit in the same run (`benches/support/paired.rs`):
//!
//! - `mcpenv scan --json` of 2,000 generated `{"mcpServers": …}` files
//!   (about 20 MB, with planted secrets, placeholders and decoys; from
//!   `tests/support/corpus.rs`): its throughput in MB/s (target ≥ 100), the
//!   plain read of those files (`cat`; ≤ 10× it, 100 MB/s where reading
//!   runs at 1 GB/s), and gitleaks scanning the same folder (`gitleaks dir
//!   DIR`, or `detect --no-git -s DIR` for releases before `dir`),
//!   which mcpenv should beat 50 times over: the pinned Debian release
//!   `scripts/bench-tools` puts in target/tools, or `MCPENV_BENCH_GITLEAKS`,
//!   or one on PATH; without any, that row is left out and says so.
//! - `mcpenv run -- true` and `mcpenv env` in a project whose `.env` has
//!   100,000 lines (tokens, numbers, comments, names), against `cat` of that
//!   file (target ≤ 30×): nothing they print is masked, so nothing they
//!   read should be scanned.
//!
//! `cargo bench --bench scan` runs both; `cargo bench --bench scan -- scan`
//! or `-- dotenv` one of them. `MCPENV_BENCH_RUNS` sets the runs (default 9).
//! `MCPENV_BENCH_CORPUS=DIR` writes the scan's corpus into `DIR` and stops
//! (to profile a build on it: `valgrind --tool=callgrind mcpenv scan --json DIR`).

use std::path::Path;

#[path = "../tests/support/corpus.rs"]
mod corpus;
#[path = "support/paired.rs"]
mod paired;

use paired::{Run, paired};

fn main() {
    if let Some(dir) = std::env::var_os("MCPENV_BENCH_CORPUS") {
        write_corpus(Path::new(&dir));
        return;
    }
    let runs = paired::runs(9);
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let wants = |part: &str| wanted.is_empty() || wanted.iter().any(|word| word == part);
    let temp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(temp.path()).unwrap();
    let mcpenv = paired::mcpenv_binary();
    println!(
        "Benchmark: {runs} paired runs each, {} cores\n",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    paired::header();
    if wants("scan") {
        scan(&root, &mcpenv, runs);
    }
    if wants("dotenv") {
        dotenv(&root, &mcpenv, runs);
    }
}

/// Writes the 2,000 generated configs into `dir`: their paths and size.
fn write_corpus(dir: &Path) -> (Vec<String>, usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut bytes = 0;
    let mut files = Vec::new();
    for (index, file) in corpus::config_files(2000, 1).iter().enumerate() {
        bytes += file.len();
        let path = dir.join(format!("config-{index:04}.json"));
        std::fs::write(&path, file).unwrap();
        files.push(path.display().to_string());
    }
    (files, bytes)
}

/// `mcpenv scan` of the corpus, against reading it and against gitleaks.
fn scan(root: &Path, mcpenv: &Path, runs: usize) {
    let dir = root.join("corpus");
    let home = root.join("scan-home");
    std::fs::create_dir_all(&home).unwrap();
    let (files, bytes) = write_corpus(&dir);
    let megabytes = bytes as f64 / 1e6;
    // Exit 1: the planted secrets are found.
    let scan = Run::new(mcpenv, &["scan", "--json", &dir.display().to_string()])
        .env("HOME", &home)
        .ok(&[1])
        .no_peak();
    let file_args: Vec<&str> = files.iter().map(String::as_str).collect();
    let read = Run::new("cat", &file_args).no_peak();
    let (scanned, read) = paired(runs, || scan.once(), || read.once(), || {});
    let work = format!("`mcpenv scan --json` of 2000 files, {megabytes:.1} MB");
    paired::row(&work, &scanned, "read (`cat`)", &read, 10.0);
    let gitleaks = gitleaks(&dir).map(|gitleaks| {
        let (scanned, leaks) = paired(runs, || scan.once(), || gitleaks.once(), || {});
        paired::row(
            "`mcpenv scan` / gitleaks",
            &scanned,
            "gitleaks, same folder",
            &leaks,
            1.0 / 50.0,
        );
        (scanned, leaks, gitleaks.program)
    });
    println!();
    let throughput = megabytes / (scanned.median() / 1000.0);
    let verdict = if throughput >= 100.0 { "" } else { " (missed)" };
    println!(
        "mcpenv scan: {throughput:.0} MB/s (median {}; target ≥ 100 MB/s{verdict})",
        paired::shown(scanned.median())
    );
    match gitleaks {
        // Against the scans that alternated with gitleaks, as the row is:
        // the two pairings' medians differ by up to a fifth either way.
        Some((paired_scans, leaks, program)) => {
            let times = leaks.median() / paired_scans.median();
            let verdict = if times >= 50.0 { "" } else { " (missed)" };
            println!(
                "gitleaks ({}): {:.0} MB/s; mcpenv is {times:.0}× faster (target ≥ 50×{verdict})",
                program,
                megabytes / (leaks.median() / 1000.0)
            );
        }
        None => println!(
            "gitleaks: not found (run scripts/bench-tools, or set MCPENV_BENCH_GITLEAKS), not compared"
        ),
    }
    println!();
}

/// gitleaks scanning `dir` without git, if it is installed: `dir` where
/// the release has it, else `detect`. Exit 1 means leaks were found.
fn gitleaks(dir: &Path) -> Option<Run> {
    let pinned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/gitleaks/usr/bin/gitleaks");
    let program = std::env::var_os("MCPENV_BENCH_GITLEAKS")
        .map(std::path::PathBuf::from)
        .or_else(|| pinned.is_file().then_some(pinned))
        .unwrap_or_else(|| "gitleaks".into());
    let help = std::process::Command::new(&program)
        .arg("--help")
        .output()
        .ok()?;
    let help = String::from_utf8_lossy(&help.stdout);
    let dir = dir.display().to_string();
    let args: Vec<&str> = if help
        .lines()
        .any(|line| line.trim_start().starts_with("dir "))
    {
        // `dir` reads files, never git history: it has no `--no-git`.
        vec!["dir", "--no-banner", "--exit-code", "1", &dir]
    } else {
        vec![
            "detect",
            "--no-git",
            "--no-banner",
            "--exit-code",
            "1",
            "-s",
            &dir,
        ]
    };
    Some(Run::new(&program, &args).ok(&[0, 1]).no_peak())
}

/// `mcpenv run -- true` and `mcpenv env` with a 100,000-line `.env`,
/// against `cat` of it.
fn dotenv(root: &Path, mcpenv: &Path, runs: usize) {
    let home = root.join("dotenv-home");
    let project = root.join("dotenv-project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let env_file = project.join(".env");
    std::fs::write(&env_file, dotenv_lines(100_000)).unwrap();
    let cat = Run::new("cat", &[".env"]).dir(&project).no_peak();
    // 75,000 variables are more than the 2 MB Linux lets a program start
    // with under the default 8 MB stack limit; a larger limit (for `cat`
    // too, so both pay the shell) makes room for them.
    let roomy = |run: Run| {
        let mut args = vec![
            "-c".to_string(),
            "ulimit -s 65536 && exec \"$0\" \"$@\"".to_string(),
            run.program.clone(),
        ];
        args.extend(run.args.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Run::new("sh", &args)
            .dir(&project)
            .env("HOME", &home)
            .no_peak()
    };
    let run = roomy(Run::new(mcpenv, &["run", "--", "true"]));
    let cat_roomy = roomy(cat.clone());
    let (ran, read) = paired(runs, || run.once(), || cat_roomy.once(), || {});
    paired::row(
        "`mcpenv run -- true`, 100,000-line `.env`",
        &ran,
        "`cat .env` (same shell)",
        &read,
        30.0,
    );
    let env = Run::new(mcpenv, &["env"])
        .dir(&project)
        .env("HOME", &home)
        .no_peak();
    let (printed, read) = paired(runs, || env.once(), || cat.once(), || {});
    paired::row(
        "`mcpenv env`, 100,000-line `.env`",
        &printed,
        "`cat .env`",
        &read,
        30.0,
    );
    println!();
}

/// A `.env` of `count` lines: GitHub tokens, port numbers, comments and
/// plain names in turn (made up from a fixed seed, none real).
fn dotenv_lines(count: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut state: u64 = 0x5eed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut text = String::new();
    for line in 0..count {
        match line % 4 {
            0 => {
                let token: String = (0..36)
                    .map(|_| char::from(ALPHABET[(next() % 62) as usize]))
                    .collect();
                text.push_str(&format!("TOKEN_{line}=ghp_{token}\n"));
            }
            1 => text.push_str(&format!("PORT_{line}={}\n", 3000 + line)),
            2 => text.push_str(&format!("# comment {line}\n")),
            _ => text.push_str(&format!("NAME_{line}=value{line}\n")),
        }
    }
    text
}
