//! Benchmark of `mcpenv scan` over many config files: `cargo bench --bench
//! scan` writes 2,000 generated `{"mcpServers": …}` files (about 20 MB, with
//! planted secrets, placeholders and decoys) and prints the median time and
//! throughput of scanning the directory, end to end.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "../tests/support/corpus.rs"]
mod corpus;

fn main() {
    let runs: usize = std::env::var("MCPENV_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(9);
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("corpus");
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = 0;
    for (index, file) in corpus::config_files(2000, 1).iter().enumerate() {
        bytes += file.len();
        std::fs::write(dir.join(format!("config-{index:04}.json")), file).unwrap();
    }
    let mcpenv = PathBuf::from(env!("CARGO_BIN_EXE_mcpenv"));
    let scan = || {
        let started = Instant::now();
        let status = Command::new(&mcpenv)
            .args(["scan", "--json"])
            .arg(&dir)
            .env("HOME", temp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(
            status.code(),
            Some(1),
            "scan should find the planted secrets"
        );
        started.elapsed().as_secs_f64()
    };
    scan(); // warm the page cache
    let mut seconds: Vec<f64> = (0..runs).map(|_| scan()).collect();
    seconds.sort_by(f64::total_cmp);
    let median = seconds[runs / 2];
    let megabytes = bytes as f64 / 1e6;
    println!(
        "mcpenv scan: 2000 files, {megabytes:.1} MB: median {:.0} ms (min {:.0}, max {:.0}) over {runs} runs = {:.0} MB/s on {} cores",
        median * 1000.0,
        seconds[0] * 1000.0,
        seconds[runs - 1] * 1000.0,
        megabytes / median,
        std::thread::available_parallelism().map_or(1, usize::from)
    );
}
