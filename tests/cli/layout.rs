//! Checks on the code's own layout that the house style relies on.

use std::fs;
use std::path::{Path, PathBuf};

/// Every file under `dir` whose name ends in `.EXTENSION`, sorted (the
/// book's pages for docs.rs too).
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_with_extension(&path, extension));
        } else if path.extension().is_some_and(|found| found == extension) {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "rs")
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

/// The folders of `src/`, front-ends first: a module may use its own folder
/// and the folders after it, never one before it (ARCHITECTURE.md draws the
/// same house). A strict order also rules out circles between folders.
const LAYERS: [&str; 12] = [
    "cli",
    "serve",
    "ops",
    "probe",
    "clients",
    "check",
    "secrets",
    "templates",
    "envfiles",
    "stores",
    "config",
    "mechanics",
];

/// The folder (top-level module) `file` under `src` belongs to.
fn folder_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap();
    let first = first.as_os_str().to_str().unwrap();
    first.strip_suffix(".rs").unwrap_or(first).to_string()
}

/// The code of `text` without comments and unit tests: the paths it uses.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap();
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| line.split(" // ").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level module that `code` names through `crate::`, including
/// those inside grouped imports (`use crate::{config::scope, ops}`).
fn crate_folders_used(code: &str) -> Vec<String> {
    modules_named(code, "crate::")
}

/// Each module right after `prefix` (`crate::`, `crate::mechanics::`) in
/// `code`, inside grouped imports too.
fn modules_named(code: &str, prefix: &str) -> Vec<String> {
    let mut used = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            let mut word = String::new();
            for character in group.chars() {
                match character {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        item_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if depth == 1 && item_start {
                    if character.is_alphanumeric() || character == '_' {
                        word.push(character);
                        continue;
                    }
                    if !word.is_empty() {
                        used.push(std::mem::take(&mut word));
                        item_start = false;
                    }
                }
            }
            if !word.is_empty() {
                used.push(word);
            }
        } else {
            let word: String = after
                .chars()
                .take_while(|character| character.is_alphanumeric() || *character == '_')
                .collect();
            if !word.is_empty() {
                used.push(word);
            }
        }
        rest = after;
    }
    used.retain(|word| word != "self");
    used
}

/// Every `(file, folder it uses)` in `src`, outside tests and comments.
fn arrows() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut arrows = Vec::new();
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).unwrap();
        if relative == Path::new("lib.rs") || relative == Path::new("main.rs") {
            continue;
        }
        let from = folder_of(relative);
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for to in crate_folders_used(&code) {
            if to != from {
                arrows.push((relative.display().to_string(), from.clone(), to));
            }
        }
    }
    arrows
}

#[test]
fn the_layers_name_every_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    for module in &declared {
        assert!(
            LAYERS.contains(module),
            "src/lib.rs declares `{module}`, which tests/cli/layout.rs's LAYERS does not place; \
             put it in its layer (and in ARCHITECTURE.md)"
        );
    }
    for layer in LAYERS {
        assert!(
            declared.contains(&layer),
            "LAYERS names `{layer}`, which src/lib.rs does not declare"
        );
    }
}

#[test]
fn imports_point_down_the_layers() {
    let rank = |folder: &str| LAYERS.iter().position(|layer| *layer == folder);
    let mut upward = Vec::new();
    for (file, from, to) in arrows() {
        let (Some(from_rank), Some(to_rank)) = (rank(&from), rank(&to)) else {
            continue;
        };
        if to_rank < from_rank {
            upward.push(format!(
                "src/{file} ({from}) uses `crate::{to}`, a layer above it"
            ));
        }
    }
    assert!(
        upward.is_empty(),
        "imports must point down the layers (tests/cli/layout.rs LAYERS):\n{}",
        upward.join("\n")
    );
}

/// The mechanics in their own order: each uses only those after it (the
/// edit session records into the journal, both write through `fsx`, and
/// `fsx` knows neither), so no circle forms inside the lowest layer.
const MECHANICS: [&str; 10] = [
    "edits",
    "journal",
    "layout_cache",
    "fsx",
    "git_files",
    "git",
    "gitignore",
    "document",
    "diff",
    "display",
];

#[test]
fn mechanics_point_down_their_own_order() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mechanics");
    let declared = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let rank = |module: &str| MECHANICS.iter().position(|name| *name == module);
    let mut upward = Vec::new();
    for file in rust_files(&dir) {
        let relative = file.strip_prefix(&dir).unwrap();
        let module = folder_of(relative);
        if module == "mod" {
            continue;
        }
        assert!(
            declared.contains(&format!("pub mod {module};")) && rank(&module).is_some(),
            "src/mechanics/{module} is not in tests/cli/layout.rs's MECHANICS"
        );
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for used in modules_named(&code, "crate::mechanics::") {
            if rank(&used) < rank(&module) {
                upward.push(format!(
                    "src/mechanics/{} ({module}) uses `{used}`, which comes before it",
                    relative.display()
                ));
            }
        }
    }
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

#[test]
fn the_arrow_finder_sees_grouped_and_plain_paths() {
    let code = "use crate::{config::{scope, model}, ops};\nlet x = crate::mechanics::fsx::read(p);";
    assert_eq!(crate_folders_used(code), ["config", "ops", "mechanics"]);
    assert_eq!(
        code_of("use crate::a;\n// crate::b\n#[cfg(test)]\nuse crate::c;"),
        "use crate::a;"
    );
}

/// `Cargo.toml`'s licence, `MIT OR Apache-2.0`, ships the text of each.
#[test]
fn the_declared_licences_ship_their_texts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("license = \"MIT OR Apache-2.0\""));
    let mit = fs::read_to_string(root.join("LICENSE-MIT")).unwrap();
    assert!(mit.starts_with("Copyright (c) ") && mit.contains("Permission is hereby granted"));
    let apache = fs::read_to_string(root.join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
}

/// Every install line, in the README, CONTRIBUTING.md and the book, builds
/// with the lock file the tests ran against.
#[test]
fn every_install_line_is_locked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    docs.extend(files_with_extension(&root.join("docs/src"), "md"));
    assert!(docs.len() > 10, "the book under docs/src is gone");
    for path in docs {
        let doc = path.strip_prefix(root).unwrap().display();
        let text = fs::read_to_string(&path).unwrap();
        for line in text
            .lines()
            .filter(|line| line.contains("cargo install --"))
        {
            assert!(
                line.contains("--locked"),
                "{doc}: `{line}` installs without --locked"
            );
        }
    }
}
