//! The documentation: README.md, CONTRIBUTING.md, ARCHITECTURE.md and the
//! book under `docs/` (built with mdBook by `scripts/test`). Every relative
//! link points at a file that exists, and every `#anchor` at a heading of
//! that file; every subcommand the real binary's `--help` lists has its
//! page in the book; the README stays an introduction.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::harness::TestEnv;
use crate::layout::files_with_extension;

/// The README is an introduction; the reference lives in the book.
const README_MAX_LINES: usize = 400;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The book's sources, `docs/src`.
fn book() -> PathBuf {
    root().join("docs/src")
}

/// Every Markdown file under `dir`, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "md")
}

/// The documents whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut documents: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    documents.extend(markdown_files(&book()));
    documents
}

/// Markdown as mdBook reads it.
fn parser(markdown: &str) -> Parser<'_> {
    Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES
            | Options::ENABLE_FOOTNOTES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_HEADING_ATTRIBUTES,
    )
}

/// The targets of the links and images of `markdown`, as written. Code
/// spans and blocks hold none.
fn link_targets(markdown: &str) -> Vec<String> {
    parser(markdown)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// mdBook's id for a heading: its text lowercased, whitespace turned into
/// `-`, every character but letters, digits, `-` and `_` dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|character| {
            if character.is_alphanumeric() || character == '_' || character == '-' {
                Some(character.to_lowercase().next().unwrap_or(character))
            } else if character.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of `markdown`'s headings (an explicit `{#id}` wins); a
/// repeated heading gets `-1`, `-2`, … as mdBook numbers them.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut heading: Option<(String, Option<String>)> = None;
    for event in parser(markdown) {
        match event {
            Event::Start(Tag::Heading { id, .. }) => {
                heading = Some((String::new(), id.map(|id| id.to_string())));
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((heading, _)) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((text, id)) = heading.take() {
                    let base = id.unwrap_or_else(|| anchor_of(&text));
                    let mut anchor = base.clone();
                    let mut counter = 1;
                    while anchors.contains(&anchor) {
                        anchor = format!("{base}-{counter}");
                        counter += 1;
                    }
                    anchors.insert(anchor);
                }
            }
            _ => {}
        }
    }
    anchors
}

/// `path` with `.` and `..` taken out, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` from the repository's root, as a person reads it.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What is wrong with the relative links of `document` (whose text is
/// `markdown`): a file that does not exist, an anchor that is no heading
/// of its file, or, when `within` is given, a file outside that folder
/// (the book's pages become HTML, where a link out of `docs/src` leads
/// nowhere).
fn broken_links(document: &Path, markdown: &str, within: Option<&Path>) -> Vec<String> {
    let mut broken = Vec::new();
    let folder = document.parent().unwrap();
    for target in link_targets(markdown) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let path = if file.is_empty() {
            document.to_path_buf()
        } else {
            normalized(&folder.join(file))
        };
        if let Some(within) = within
            && !path.starts_with(within)
        {
            broken.push(format!(
                "`{target}` leaves `{}`, so the built book has no such page",
                shown(within)
            ));
            continue;
        }
        if !path.is_file() {
            broken.push(format!("`{target}`: no file `{}`", shown(&path)));
            continue;
        }
        if let Some(anchor) = anchor {
            let text = if path == document {
                markdown.to_string()
            } else {
                fs::read_to_string(&path).unwrap()
            };
            if path.extension().is_none_or(|extension| extension != "md") {
                broken.push(format!(
                    "`{target}`: an anchor into a file that is not Markdown"
                ));
            } else if !anchors(&text).contains(anchor) {
                broken.push(format!(
                    "`{target}`: `{}` has no heading whose anchor is `{anchor}`",
                    shown(&path)
                ));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_points_at_a_file_and_a_heading_that_exist() {
    let book = book();
    let mut broken = Vec::new();
    for document in documents() {
        let markdown = fs::read_to_string(&document).unwrap();
        let within = document.starts_with(&book).then_some(book.as_path());
        for problem in broken_links(&document, &markdown, within) {
            let name = document.strip_prefix(root()).unwrap().display().to_string();
            broken.push(format!("{name}: {problem}"));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The checker itself: it must see a missing file, a missing anchor and a
/// link out of the book, and take mdBook's anchors as they are.
#[test]
fn the_link_check_finds_missing_files_anchors_and_links_out_of_the_book() {
    let temp = tempfile::tempdir().unwrap();
    let book = temp.path().join("src");
    fs::create_dir_all(book.join("commands")).unwrap();
    fs::write(
        book.join("scopes.md"),
        "# Scopes\n\n## `check`: what it needs, and what it lacks\n\n## Approving the team's servers\n\n## Approving the team's servers\n",
    )
    .unwrap();
    let page = book.join("commands/add.md");
    let markdown = "# `mcpenv add`\n\n\
        [ok](../scopes.md#check-what-it-needs-and-what-it-lacks), \
        [ok](../scopes.md#approving-the-teams-servers-1), [ok](#mcpenv-add), \
        [web](https://example.com/#nothing), `[code](nowhere.md)`\n\n\
        [gone](../nowhere.md), [no heading](../scopes.md#scope), \
        [out](../../README.md), [self](#nothing)\n";
    fs::write(&page, markdown).unwrap();
    let broken = broken_links(&page, markdown, Some(&book));
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(
        broken[0].starts_with("`../nowhere.md`: no file"),
        "{broken:#?}"
    );
    assert!(
        broken[1].contains("no heading whose anchor is `scope`"),
        "{broken:#?}"
    );
    assert!(broken[2].contains("leaves"), "{broken:#?}");
    assert!(broken[3].contains("anchor is `nothing`"), "{broken:#?}");
}

/// The subcommands a `--help` lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        // A wrapped description is indented further than the names.
        .filter(|line| !line[2..].starts_with(' '))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Whether `text` names the command `mcpenv NAME` (not a longer one, such
/// as `mcpenv add-json` for `mcpenv add`).
fn mentions(text: &str, command: &str) -> bool {
    text.match_indices(command).any(|(at, _)| {
        text[at + command.len()..]
            .chars()
            .next()
            .is_none_or(|next| !next.is_alphanumeric() && next != '-' && next != '_')
    })
}

/// The options every command takes (`mcpenv --help` and the Commands page
/// name them once).
const GLOBAL_OPTIONS: [&str; 5] = ["--project-dir", "--color", "--quiet", "--help", "--version"];

/// The options a `--help` lists, each as its long name and its short one
/// (`--scope`, `-s`), but the global ones.
fn options(help: &str) -> Vec<(String, Option<String>)> {
    help.lines()
        .filter_map(|line| {
            let option = line.trim_start();
            // Options are indented by 2 or 6; descriptions by 10.
            if line.len() - option.len() > 6 {
                return None;
            }
            let (short, rest) = match option.split_once(", --") {
                Some((short, rest))
                    if short.len() == 2 && short.starts_with('-') && short != "--" =>
                {
                    (Some(short.to_string()), rest)
                }
                _ => (None, option.strip_prefix("--")?),
            };
            let long: String = rest
                .chars()
                .take_while(|character| character.is_ascii_alphanumeric() || *character == '-')
                .collect();
            let long = format!("--{long}");
            (long.len() > 2 && !GLOBAL_OPTIONS.contains(&long.as_str())).then_some((long, short))
        })
        .collect()
}

/// Whether `text` names the option `name` on its own (`-s`, not the `-s`
/// of `--scope` or of `ls-s`).
fn names_option(text: &str, name: &str) -> bool {
    let part_of_a_word = |character: char| character.is_alphanumeric() || character == '-';
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(part_of_a_word)
            && !text[at + name.len()..]
                .chars()
                .next()
                .is_some_and(part_of_a_word)
    })
}

/// The options of `help` that `page` (its text `text`) names neither by
/// their long nor by their short name.
fn undocumented_options(page: &str, text: &str, command: &str, help: &str) -> Vec<String> {
    options(help)
        .into_iter()
        .filter(|(long, short)| {
            !names_option(text, long)
                && !short
                    .as_ref()
                    .is_some_and(|short| names_option(text, short))
        })
        .map(|(long, _)| format!("docs/src/{page} never names `{long}` of `mcpenv {command}`"))
        .collect()
}

#[test]
fn every_subcommand_has_its_page_in_the_book() {
    let env = TestEnv::new();
    let help = env.run(&["--help"]).expect_code(0);
    let commands = subcommands(&help.stdout);
    assert!(
        commands.len() > 20 && commands.iter().any(|name| name == "add-json"),
        "`mcpenv --help` lists no subcommands this test can read:\n{help}"
    );
    let summary = fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = link_targets(&summary).into_iter().collect();
    let mut missing = Vec::new();
    for name in &commands {
        let page = format!("commands/{name}.md");
        let Ok(text) = fs::read_to_string(book().join(&page)) else {
            missing.push(format!("`mcpenv {name}` has no page docs/src/{page}"));
            continue;
        };
        if !listed.contains(&page) {
            missing.push(format!("docs/src/{page} is not in docs/src/SUMMARY.md"));
        }
        if !mentions(&text, &format!("mcpenv {name}")) {
            missing.push(format!("docs/src/{page} never says `mcpenv {name}`"));
        }
        // Every option of its `--help`, by its long or its short name.
        let help = env.run(&[name, "--help"]).expect_code(0).stdout;
        missing.extend(undocumented_options(&page, &text, name, &help));
        // Nested subcommands (`mcpenv secrets move`) and their options are
        // documented on their parent's page.
        for sub in subcommands(&help) {
            if !mentions(&text, &format!("mcpenv {name} {sub}")) {
                missing.push(format!("docs/src/{page} never says `mcpenv {name} {sub}`"));
            }
            let help = env.run(&[name, &sub, "--help"]).expect_code(0).stdout;
            let command = format!("{name} {sub}");
            missing.extend(undocumented_options(&page, &text, &command, &help));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_subcommand_reader_takes_only_the_commands_section() {
    let help = "Usage: mcpenv <COMMAND>\n\nCommands:\n  add       Add a server\n  add-json  Add JSON\n            wrapped description\n  help      Print this message\n\nOptions:\n  -q  quiet\n";
    assert_eq!(subcommands(help), ["add", "add-json"]);
    assert!(mentions(
        "run `mcpenv add-json` or `mcpenv add`",
        "mcpenv add"
    ));
    assert!(!mentions("run `mcpenv add-json`", "mcpenv add"));
    let help = "Options:\n  -s, --scope <SCOPE>\n          Which scope; see --tidy-example\n      --dry-run\n          Show\n  -C, --project-dir <DIR>\n  -h, --help\n";
    assert_eq!(
        options(help),
        [
            ("--scope".to_string(), Some("-s".to_string())),
            ("--dry-run".to_string(), None)
        ]
    );
    assert_eq!(
        undocumented_options("commands/x.md", "`-s local`, `--dry-runs`", "x", help),
        ["docs/src/commands/x.md never names `--dry-run` of `mcpenv x`"]
    );
    assert!(!names_option("--scope", "-s") && !names_option("ls-s x", "-s"));
}

#[test]
fn the_readme_is_an_introduction() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the reference into the book (docs/src)"
    );
    // The two set-up commands of the quick start stay as they are.
    for command in [
        "$ cargo run --release -- -C examples/team-project list",
        "$ scripts/test ",
        "cargo install --locked --path .",
    ] {
        assert!(readme.contains(command), "README.md lost `{command}`");
    }
}

#[test]
fn every_book_page_is_in_the_summary() {
    let summary = fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = link_targets(&summary).into_iter().collect();
    let unlisted: Vec<String> = markdown_files(&book())
        .iter()
        .map(|page| page.strip_prefix(book()).unwrap().display().to_string())
        .filter(|page| page != "SUMMARY.md" && !listed.contains(page))
        .collect();
    assert!(
        unlisted.is_empty(),
        "pages mdBook would not build, missing from docs/src/SUMMARY.md: {unlisted:?}"
    );
}
