//! Benchmark of what a command costs before it does any work:
//! `cargo bench --bench startup` times `--version`, and `list`, `env` and
//! `run -- true` in an empty HOME and project, each paired with starting
//! `/bin/true` in the same run, and prints the ratios with their targets.

#[path = "support/paired.rs"]
mod paired;

use paired::Run;

fn main() {
    let runs = paired::runs(201);
    let temp = tempfile::tempdir().unwrap();
    let (home, project) = paired::home_and_project(&dunce::canonicalize(temp.path()).unwrap());
    let mcpenv = paired::mcpenv_binary();
    let in_empty_home = |args: &[&str]| {
        Run::new(&mcpenv, args)
            .dir(&project)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .no_peak()
    };
    let true_program = paired::true_program().no_peak();
    println!(
        "Benchmark: start-up in an empty HOME and project, {runs} paired runs each, {} cores\n",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    paired::header();
    for (work, run, target) in [
        ("mcpenv --version", in_empty_home(&["--version"]), 1.5),
        ("mcpenv list (empty HOME)", in_empty_home(&["list"]), 3.0),
        ("mcpenv env (empty HOME)", in_empty_home(&["env"]), 3.0),
        (
            "mcpenv run -- true (empty HOME)",
            in_empty_home(&["run", "--", "true"]),
            3.0,
        ),
    ] {
        let (subject, limit) = paired::paired(runs, || run.once(), || true_program.once(), || {});
        paired::row(work, &subject, "`/bin/true`", &limit, target);
    }
}
