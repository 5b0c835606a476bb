//! Paired timing for the benches: a command and the physical limit it is
//! judged against (an fsync'd copy, a plain read, `/bin/true`, `cat`) run
//! alternately in the same process, so both see the same machine, cache and
//! load, and the ratio of their medians is what the book's Speed page
//! (docs/src/speed.md) reports.
//!
//! Wall time is measured around each process; peak memory (max RSS) comes
//! from GNU time (`/usr/bin/time`, Debian package `time`) when present.

#![allow(dead_code)] // each bench uses the part it needs

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One process to time: the program, its arguments and its surroundings.
#[derive(Clone)]
pub struct Run {
    pub program: String,
    pub args: Vec<String>,
    pub dir: Option<std::path::PathBuf>,
    pub env: Vec<(String, String)>,
    /// Exit codes that count as success.
    pub ok: Vec<i32>,
    /// Fed to standard input, if any (otherwise `/dev/null`).
    pub stdin_file: Option<std::path::PathBuf>,
    /// Whether to run it under GNU time for its peak memory (which adds
    /// a process start of its own: off for start-up rows).
    pub peak: bool,
}

impl Run {
    pub fn new(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Self {
        Self {
            program: program.as_ref().to_string_lossy().into_owned(),
            args: args.iter().map(ToString::to_string).collect(),
            dir: None,
            env: Vec::new(),
            ok: vec![0],
            stdin_file: None,
            peak: true,
        }
    }

    /// Times it without GNU time around it (no peak memory).
    pub fn no_peak(mut self) -> Self {
        self.peak = false;
        self
    }

    pub fn dir(mut self, dir: &Path) -> Self {
        self.dir = Some(dir.to_path_buf());
        self
    }

    pub fn env(mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.env.push((
            name.to_string(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        self
    }

    pub fn ok(mut self, codes: &[i32]) -> Self {
        self.ok = codes.to_vec();
        self
    }

    /// Runs it once: wall time in milliseconds and peak RSS in KiB.
    pub fn once(&self) -> (f64, Option<u64>) {
        let time = Path::new("/usr/bin/time");
        let timed = self.peak && time.is_file();
        let mut command = if timed {
            let mut command = Command::new(time);
            command.args(["-f", "%M"]).arg(&self.program);
            command
        } else {
            Command::new(&self.program)
        };
        command.args(&self.args);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(match &self.stdin_file {
                Some(file) => Stdio::from(std::fs::File::open(file).unwrap()),
                None => Stdio::null(),
            })
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let output = command.output().unwrap();
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let code = output.status.code().unwrap_or(-1);
        assert!(
            self.ok.contains(&code),
            "{} {:?} exited {code}: {stderr}",
            self.program,
            self.args
        );
        let peak = timed
            .then(|| {
                stderr
                    .lines()
                    .last()
                    .and_then(|line| line.trim().parse().ok())
            })
            .flatten();
        (millis, peak)
    }
}

/// Times of many runs of one thing.
#[derive(Default, Clone)]
pub struct Sample {
    pub millis: Vec<f64>,
    pub peaks_kib: Vec<u64>,
}

impl Sample {
    pub fn push(&mut self, (millis, peak): (f64, Option<u64>)) {
        self.millis.push(millis);
        self.peaks_kib.extend(peak);
    }

    pub fn median(&self) -> f64 {
        let mut millis = self.millis.clone();
        millis.sort_by(f64::total_cmp);
        millis[millis.len() / 2]
    }

    pub fn min(&self) -> f64 {
        self.millis.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.millis.iter().copied().fold(0.0, f64::max)
    }

    pub fn peak_mib(&self) -> Option<f64> {
        self.peaks_kib.iter().max().map(|kib| *kib as f64 / 1024.0)
    }
}

/// Runs `subject` and `limit` alternately, `runs` times each after one
/// warm-up of each; `between` runs after every subject run (to undo an
/// edit) and is not timed.
pub fn paired(
    runs: usize,
    mut subject: impl FnMut() -> (f64, Option<u64>),
    mut limit: impl FnMut() -> (f64, Option<u64>),
    mut between: impl FnMut(),
) -> (Sample, Sample) {
    subject();
    between();
    limit();
    let (mut subjects, mut limits) = (Sample::default(), Sample::default());
    for _ in 0..runs {
        subjects.push(subject());
        between();
        limits.push(limit());
    }
    (subjects, limits)
}

/// The mcpenv measured: `MCPENV_BENCH_BIN` when set (the release build
/// users download, or an older build to compare), else the one cargo
/// built for this bench.
pub fn mcpenv_binary() -> std::path::PathBuf {
    std::env::var_os("MCPENV_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_mcpenv").into())
        .into()
}

/// The runs count from `MCPENV_BENCH_RUNS`, or `default`.
pub fn runs(default: usize) -> usize {
    std::env::var("MCPENV_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(default)
}

/// The header of the Markdown table [`row`] fills.
pub fn header() {
    println!(
        "Binary: {} (the one mcpenv ships: MCPENV_BENCH_BIN=$(scripts/release))\n",
        mcpenv_binary().display()
    );
    println!("| work | median | min | max | peak memory | limit | limit median | ratio | target |");
    println!("|---|---|---|---|---|---|---|---|---|");
}

/// One Markdown row: the subject's figures, the limit's median, their ratio
/// and the target ratio (`≤ 1.5×`), marked when missed.
pub fn row(work: &str, subject: &Sample, limit_name: &str, limit: &Sample, target: f64) {
    let ratio = subject.median() / limit.median();
    let peak = subject
        .peak_mib()
        .map_or_else(|| "n/a".to_string(), |mib| format!("{mib:.0} MiB"));
    let verdict = if ratio <= target { "" } else { " (missed)" };
    println!(
        "| {work} | {} | {} | {} | {peak} | {limit_name} | {} | {ratio:.2}× | ≤ {target}×{verdict} |",
        shown(subject.median()),
        shown(subject.min()),
        shown(subject.max()),
        shown(limit.median()),
    );
}

/// Milliseconds as a person reads them: `0.84 ms`, `12.3 ms`, `415 ms`.
pub fn shown(millis: f64) -> String {
    if millis < 10.0 {
        format!("{millis:.2} ms")
    } else if millis < 100.0 {
        format!("{millis:.1} ms")
    } else {
        format!("{millis:.0} ms")
    }
}

/// The fsync'd copy an edit is judged against: `dd` reading `from` and
/// writing `to` with `conv=fsync`.
pub fn fsync_copy(from: &Path, to: &Path) -> Run {
    Run::new(
        "dd",
        &[
            &format!("if={}", from.display()),
            &format!("of={}", to.display()),
            "bs=1M",
            "conv=fsync",
            "status=none",
        ],
    )
}

/// The plain read a reader is judged against: `cat FILE > /dev/null`.
pub fn plain_read(file: &Path) -> Run {
    Run::new("cat", &[&file.display().to_string()])
}

/// Starting a process that does nothing.
pub fn true_program() -> Run {
    Run::new("/bin/true", &[])
}

/// A HOME and a project (a git repository) under `root`, both empty.
pub fn home_and_project(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    (home, project)
}
