//! Checks on the code's own layout that the house style relies on.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn every_test_module_is_listed_in_main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        if path.extension().is_some_and(|extension| extension == "rs") && stem != "main" {
            assert!(
                main.contains(&format!("mod {stem};")),
                "tests/cli/{stem}.rs is not listed in tests/cli/main.rs"
            );
        }
    }
}

/// Core modules return values; only `src/cli` prints, exits or reads the
/// process environment.
#[test]
fn core_modules_do_not_print_exit_or_read_the_environment() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let forbidden = [
        "print!(",
        "println!(",
        "eprint!(",
        "eprintln!(",
        "process::exit",
        "std::env::var",
        "env::var(",
        "env::var_os(",
        "home_dir(",
        "env::current_dir(",
        "clap::",
    ];
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).unwrap();
        if relative.starts_with("cli") || relative == Path::new("main.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        // Unit tests may do as they like.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for pattern in forbidden {
            assert!(
                !code.contains(pattern),
                "src/{} uses `{pattern}`; only src/cli may",
                relative.display()
            );
        }
    }
}
